// Package testenv runs Go tests against a real kube-apiserver backed by a real
// etcd, through controller-runtime's envtest.
//
// The two binaries are built from source by hack/envtest-assets.sh (nothing
// prebuilt can be downloaded here). Start finds them through the
// KUBEBUILDER_ASSETS environment variable or, when that is empty, in the
// script's cache directory. When they are missing the test fails, telling to
// run the script: this package never skips and never falls back to a fake API
// server.
//
// Typical use:
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Start(t, testenv.WithCRDDirectoryPaths("../../config/crd"))
//		c := env.Client(t)
//		...
//	}
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubernetesVersion is the version of the kube-apiserver that
// hack/envtest-assets.sh builds (the k8s.io/kubernetes version required by
// hack/tools/envtest/go.mod).
const KubernetesVersion = "v1.37.1"

// EtcdVersion is the version of etcd that hack/envtest-assets.sh builds (the
// go.etcd.io/etcd/server/v3 version required by hack/tools/envtest/go.mod).
const EtcdVersion = "v3.7.0"

// AssetsEnvVar names the environment variable that points at a directory
// holding the kube-apiserver and etcd binaries. It is the variable envtest
// itself reads.
const AssetsEnvVar = "KUBEBUILDER_ASSETS"

// CacheEnvVar names the environment variable that overrides the root of the
// cache that hack/envtest-assets.sh builds into.
const CacheEnvVar = "ATTACHE_ENVTEST_CACHE"

const (
	defaultStartTimeout = 2 * time.Minute
	defaultStopTimeout  = time.Minute
	readyTimeout        = time.Minute
	logTailBytes        = 8 << 10
)

// CacheDir returns the directory where hack/envtest-assets.sh puts the
// binaries of KubernetesVersion and EtcdVersion:
// ${ATTACHE_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attache/envtest}/k8s-<version>-etcd-<version>.
// It does not check that the directory exists.
func CacheDir() (string, error) {
	root := os.Getenv(CacheEnvVar)
	if root == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("finding the envtest cache: %w", err)
			}
			base = filepath.Join(home, ".cache")
		}
		root = filepath.Join(base, "attache", "envtest")
	}
	return filepath.Join(root, "k8s-"+KubernetesVersion+"-etcd-"+EtcdVersion), nil
}

// AssetsDir returns the directory holding the kube-apiserver and etcd
// binaries: $KUBEBUILDER_ASSETS when it is set and not empty, else CacheDir.
// It returns an error, saying how to build them, when either binary is
// missing there.
func AssetsDir() (string, error) {
	dir, from := os.Getenv(AssetsEnvVar), "$"+AssetsEnvVar
	if dir == "" {
		var err error
		if dir, err = CacheDir(); err != nil {
			return "", err
		}
		from = "the envtest cache (" + AssetsEnvVar + " is empty)"
	}
	var missing []string
	for _, name := range []string{"kube-apiserver", "etcd"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("no %s binary in %s from %s: run hack/envtest-assets.sh from the repository root "+
			"to build kube-apiserver %s and etcd %s (several minutes the first time), then run the tests again "+
			"(optionally with export %s=\"$(hack/envtest-assets.sh)\"); "+
			"integration tests need the real API server and are never skipped",
			strings.Join(missing, " or "), dir, from, KubernetesVersion, EtcdVersion, AssetsEnvVar)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return abs, nil
}

// Option configures Start and New.
type Option func(*options)

type options struct {
	crdPaths    []string
	crds        []*apiextensionsv1.CustomResourceDefinition
	apiFlags    [][]string
	schemeFuncs []func(*runtime.Scheme) error
}

// WithCRDDirectoryPaths installs the CustomResourceDefinitions found in the
// given files or directories (YAML or JSON, as envtest reads them) before
// Start returns, and waits until they are served. A path that does not exist
// fails the start.
func WithCRDDirectoryPaths(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// WithCRDs installs the given CustomResourceDefinitions before Start returns,
// and waits until they are served.
func WithCRDs(crds ...*apiextensionsv1.CustomResourceDefinition) Option {
	return func(o *options) { o.crds = append(o.crds, crds...) }
}

// WithAPIServerFlag sets a kube-apiserver command-line flag (name without the
// leading dashes), replacing envtest's default for that flag if it has one.
// Several values make the flag repeat. For example
// WithAPIServerFlag("feature-gates", "SomeGate=true").
func WithAPIServerFlag(name string, values ...string) Option {
	return func(o *options) { o.apiFlags = append(o.apiFlags, append([]string{name}, values...)) }
}

// WithScheme registers more types (for example a project's API group's
// AddToScheme) in the scheme of the clients that Env.Client returns. The
// client-go built-in types and apiextensions/v1 are always registered.
func WithScheme(addToScheme ...func(*runtime.Scheme) error) Option {
	return func(o *options) { o.schemeFuncs = append(o.schemeFuncs, addToScheme...) }
}

// Env is a running kube-apiserver and etcd.
type Env struct {
	// Config is the admin (system:masters) configuration of the API server.
	// It stays valid across RestartAPIServer. Copy it (rest.CopyConfig)
	// before changing it.
	Config *rest.Config
	// Scheme holds the types that Client knows: the client-go built-in
	// types, apiextensions/v1 and those added with WithScheme.
	Scheme *runtime.Scheme
	// Environment is the underlying envtest environment, for what this
	// package does not wrap. Its ControlPlane field holds the processes.
	Environment *envtest.Environment
	// CRDs are the CustomResourceDefinitions installed at start.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	dir      string
	ownsDir  bool // New made dir, so Stop removes it
	logs     []*os.File
	mu       sync.Mutex // serialises RestartAPIServer and Stop
	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd and kube-apiserver for the test, installs the requested
// CRDs and registers Stop with t.Cleanup. It fails the test (t.Fatal) when
// the binaries are missing (see AssetsDir) or the control plane does not come
// up. When the test has failed, the tails of the kube-apiserver and etcd logs
// are written to the test log at cleanup.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	dir := t.TempDir() // removed after Stop: cleanups run last-in first-out
	e, err := start(dir, opts)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.logTails(t)
		}
		if err := e.Stop(); err != nil {
			t.Errorf("testenv: stopping the control plane: %v", err)
		}
	})
	return e
}

// New is Start for a TestMain, where there is no testing.TB: it starts a
// control plane that the tests of a package share. The caller must call Stop
// (for example after m.Run); Stop also removes the temporary directory that
// New made. The control plane logs are not printed on failure: read them in
// Dir before Stop if needed.
func New(opts ...Option) (*Env, error) {
	dir, err := os.MkdirTemp("", "attache-testenv-")
	if err != nil {
		return nil, err
	}
	e, err := start(dir, opts)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	e.ownsDir = true
	return e, nil
}

func start(dir string, opts []Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	for _, add := range o.schemeFuncs {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}

	certDir := filepath.Join(dir, "apiserver")
	if err := os.Mkdir(certDir, 0o700); err != nil {
		return nil, err
	}
	e := &Env{Scheme: scheme, dir: dir}
	apiLog, err := e.openLog("kube-apiserver.log")
	if err != nil {
		return nil, err
	}
	etcdLog, err := e.openLog("etcd.log")
	if err != nil {
		e.closeLogs()
		return nil, err
	}

	// CertDir is set (not left to envtest's temporary default) so that it
	// survives APIServer.Stop: RestartAPIServer then reuses the serving
	// certificates and the client CA, hence e.Config stays valid.
	apiServer := &envtest.APIServer{
		Path:    filepath.Join(assets, "kube-apiserver"),
		CertDir: certDir,
		Out:     apiLog,
		Err:     apiLog,
	}
	for _, f := range o.apiFlags {
		apiServer.Configure().Set(f[0], f[1:]...)
	}
	useExisting := false
	e.Environment = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			APIServer: apiServer,
			Etcd: &envtest.Etcd{
				Path: filepath.Join(assets, "etcd"),
				Out:  etcdLog,
				Err:  etcdLog,
			},
		},
		Scheme:                scheme,
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     o.crdPaths,
		CRDs:                  o.crds,
		ErrorIfCRDPathMissing: true,
		// Never talk to whatever cluster USE_EXISTING_CLUSTER points at.
		UseExistingCluster: &useExisting,
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		e.Environment.ControlPlaneStartTimeout = defaultStartTimeout
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT") == "" {
		e.Environment.ControlPlaneStopTimeout = defaultStopTimeout
	}

	cfg, err := e.Environment.Start()
	if err != nil {
		err = fmt.Errorf("starting kube-apiserver and etcd from %s: %w%s", assets, err, e.tails())
		_ = e.Environment.Stop()
		e.closeLogs()
		return nil, err
	}
	e.Config = cfg
	e.CRDs = e.Environment.CRDs
	return e, nil
}

func (e *Env) openLog(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(e.dir, name))
	if err != nil {
		return nil, err
	}
	e.logs = append(e.logs, f)
	return f, nil
}

func (e *Env) closeLogs() {
	for _, f := range e.logs {
		_ = f.Close()
	}
}

// Stop stops kube-apiserver and etcd and removes their data. Start registers
// it with t.Cleanup; calling it again does nothing and returns the first
// result.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.stopErr = e.Environment.Stop()
		e.closeLogs()
		if e.ownsDir {
			e.stopErr = errors.Join(e.stopErr, os.RemoveAll(e.dir))
		}
	})
	return e.stopErr
}

// Dir returns the directory holding the kube-apiserver's certificates and
// the kube-apiserver.log and etcd.log files of this control plane.
func (e *Env) Dir() string { return e.dir }

// Client returns a controller-runtime client (without cache) for the admin
// user that knows the types of e.Scheme.
func (e *Env) Client(t testing.TB) client.Client {
	t.Helper()
	return e.ClientFor(t, e.Config)
}

// ClientFor returns a controller-runtime client (without cache) for cfg,
// for example a configuration from UserConfig, that knows the types of
// e.Scheme.
func (e *Env) ClientFor(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("testenv: creating a client: %v", err)
	}
	return c
}

// Clientset returns a client-go clientset for the admin user.
func (e *Env) Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatalf("testenv: creating a clientset: %v", err)
	}
	return cs
}

// RestartAPIServer stops kube-apiserver and starts it again, keeping etcd
// and so all the stored objects, the address and port, the serving
// certificates and the client CA: e.Config and the configurations from
// UserConfig keep working once it is back. It returns when the new
// kube-apiserver answers /readyz, and fails the test otherwise. Clients see
// connection errors while it is down, as they would in a real restart.
func (e *Env) RestartAPIServer(t testing.TB) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	api := e.Environment.ControlPlane.APIServer
	t0 := time.Now()
	if err := api.Stop(); err != nil {
		t.Fatalf("testenv: stopping kube-apiserver: %v", err)
	}
	t1 := time.Now()
	if err := api.Start(); err != nil {
		t.Fatalf("testenv: starting kube-apiserver again: %v%s", err, e.tails())
	}
	if err := e.waitReady(); err != nil {
		t.Fatalf("testenv: kube-apiserver not ready after restart: %v%s", err, e.tails())
	}
	t.Logf("testenv: restarted kube-apiserver (stop %v, start %v)",
		t1.Sub(t0).Round(time.Millisecond), time.Since(t1).Round(time.Millisecond))
}

func (e *Env) waitReady() error {
	rc, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, readyTimeout, true,
		func(ctx context.Context) (bool, error) {
			body, err := rc.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err != nil {
				last = fmt.Errorf("%w: %s", err, body)
				return false, nil
			}
			return true, nil
		})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

// UserConfig returns a configuration that authenticates (by client
// certificate) as the given user name and groups, without the admin's
// rights: RBAC gives it only what the cluster grants to every authenticated
// user until a binding says more (see BindClusterRole and BindRole).
func (e *Env) UserConfig(t testing.TB, name string, groups ...string) *rest.Config {
	t.Helper()
	u, err := e.Environment.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups},
		&rest.Config{QPS: e.Config.QPS, Burst: e.Config.Burst})
	if err != nil {
		t.Fatalf("testenv: adding user %q: %v", name, err)
	}
	return u.Config()
}

// BindClusterRole creates a ClusterRoleBinding that grants the ClusterRole
// named role (which must exist, for example the project's shipped
// ClusterRole applied beforehand) to the user cluster-wide. Aggregated
// ClusterRoles such as the built-in view are empty here (no
// kube-controller-manager runs) and fail the test. It returns once
// the authorizer applies the binding, checked on the role's first resource
// rule, so that the next request as the user is already allowed.
func (e *Env) BindClusterRole(t testing.TB, user, role string) {
	t.Helper()
	ctx := context.Background()
	cs := e.Clientset(t)
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("testenv: getting ClusterRole %q: %v", role, err)
	}
	checkNotEmptyAggregate(t, cr)
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: role + "-"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testenv: binding ClusterRole %q to %q: %v", role, user, err)
	}
	e.waitAllowed(t, cs, user, "", cr.Rules)
}

// BindRole creates a RoleBinding in namespace that grants the Role (kind
// "Role") or ClusterRole (kind "ClusterRole") named role to the user in that
// namespace only. Like BindClusterRole it returns once the authorizer
// applies it.
func (e *Env) BindRole(t testing.TB, namespace, user, kind, role string) {
	t.Helper()
	ctx := context.Background()
	cs := e.Clientset(t)
	var rules []rbacv1.PolicyRule
	switch kind {
	case "Role":
		r, err := cs.RbacV1().Roles(namespace).Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("testenv: getting Role %s/%s: %v", namespace, role, err)
		}
		rules = r.Rules
	case "ClusterRole":
		r, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("testenv: getting ClusterRole %q: %v", role, err)
		}
		checkNotEmptyAggregate(t, r)
		rules = r.Rules
	default:
		t.Fatalf("testenv: BindRole: kind must be Role or ClusterRole, not %q", kind)
	}
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: role + "-", Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := cs.RbacV1().RoleBindings(namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testenv: binding %s %q to %q in %q: %v", kind, role, user, namespace, err)
	}
	e.waitAllowed(t, cs, user, namespace, rules)
}

// checkNotEmptyAggregate fails the test when cr is an aggregated ClusterRole
// (such as the built-in admin, edit and view) with no rules: their rules are
// filled in by kube-controller-manager, which testenv does not run, so a
// binding to one would grant nothing.
func checkNotEmptyAggregate(t testing.TB, cr *rbacv1.ClusterRole) {
	t.Helper()
	if cr.AggregationRule != nil && len(cr.Rules) == 0 {
		t.Fatalf("testenv: ClusterRole %q is aggregated and has no rules: no kube-controller-manager runs here "+
			"to aggregate them; bind a ClusterRole with explicit rules", cr.Name)
	}
}

// waitAllowed waits until a SubjectAccessReview for the first resource rule
// of rules is allowed for user, as RBAC bindings reach the authorizer
// through an informer, a little after they are stored.
func (e *Env) waitAllowed(t testing.TB, cs kubernetes.Interface, user, namespace string, rules []rbacv1.PolicyRule) {
	t.Helper()
	var attrs *authorizationv1.ResourceAttributes
	for _, r := range rules {
		if len(r.Verbs) > 0 && len(r.Resources) > 0 && len(r.APIGroups) > 0 {
			resource, sub, _ := strings.Cut(r.Resources[0], "/")
			attrs = &authorizationv1.ResourceAttributes{
				Namespace:   namespace,
				Verb:        orDefault(r.Verbs[0], "get"),
				Group:       orDefault(r.APIGroups[0], ""),
				Resource:    orDefault(resource, "configmaps"),
				Subresource: sub, // "status" of "policies/status"
			}
			if len(r.ResourceNames) > 0 {
				attrs.Name = r.ResourceNames[0]
			}
			break
		}
	}
	if attrs == nil {
		return // nothing checkable: no resource rule
	}
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, readyTimeout, true,
		func(ctx context.Context) (bool, error) {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:authenticated"}, ResourceAttributes: attrs,
			}}
			res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				return false, nil //nolint:nilerr // retried until the timeout
			}
			return res.Status.Allowed, nil
		})
	if err != nil {
		t.Fatalf("testenv: the binding for %q is not applied by the authorizer (checked %+v): %v", user, *attrs, err)
	}
}

func orDefault(v, def string) string {
	if v == "*" {
		return def
	}
	return v
}

// logTails writes the end of the kube-apiserver and etcd logs to the test
// log.
func (e *Env) logTails(t testing.TB) {
	t.Helper()
	if s := e.tails(); s != "" {
		t.Log("testenv: control plane logs (" + e.dir + ")" + s)
	}
}

func (e *Env) tails() string {
	var b strings.Builder
	for _, name := range []string{"kube-apiserver.log", "etcd.log"} {
		data, err := readTail(filepath.Join(e.dir, name), logTailBytes)
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n--- last %d bytes of %s ---\n%s", len(data), name, data)
	}
	return b.String()
}

func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > n {
		if _, err := f.Seek(-n, io.SeekEnd); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(f)
}
