// Package clustertest puts the parable (examples/parable) into a real API
// server from internal/testenv, for the live tests of pkg/cluster and
// pkg/cli: CRDs, objects, Ana's narrow RBAC and kubeconfig files.
package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// GatewayAPICRDs returns the standard-channel CRD files of the
// sigs.k8s.io/gateway-api module that go.mod requires, read from the module
// cache, leaving out those whose file name contains one of without (for
// example "tcproutes", to have a cluster that does not serve TCPRoute).
func GatewayAPICRDs(t testing.TB, without ...string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("clustertest: locating sigs.k8s.io/gateway-api: %v (run go mod download sigs.k8s.io/gateway-api)", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	files, err := filepath.Glob(filepath.Join(dir, "gateway.networking.k8s.io_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("clustertest: no Gateway API CRDs in %s (%v)", dir, err)
	}
	var keep []string
next:
	for _, f := range files {
		for _, w := range without {
			if strings.Contains(filepath.Base(f), w) {
				continue next
			}
		}
		keep = append(keep, f)
	}
	return keep
}

// InstallCRDs creates the CRDs in the files or folders and waits until
// they are served.
func InstallCRDs(t testing.TB, cfg *rest.Config, paths ...string) {
	t.Helper()
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("clustertest: installing CRDs from %v: %v", paths, err)
	}
}

// Apply creates, in order, the objects of the manifest files for which keep
// (nil: all) is true. The server stamps creationTimestamps (to the second):
// an object whose manifest says it is newer than an object of its kind
// created before it is created in a later second, so that the cluster
// agrees with the manifests on which policy is older (status messages say
// whether a policy won by age or, at the same age, by name).
func Apply(t testing.TB, cfg *rest.Config, keep func(*unstructured.Unstructured) bool, paths ...string) {
	t.Helper()
	objs, probs, err := manifest.Read(paths, nil)
	if err != nil || len(probs) > 0 {
		t.Fatalf("clustertest: reading %v: %v %v", paths, err, probs)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Built afresh on every call: CRDs may have been installed since.
	grs, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		t.Fatalf("clustertest: discovery: %v", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(grs)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type stamp struct{ manifest, created time.Time }
	last := map[schema.GroupKind]stamp{}
	for _, o := range objs {
		u := o.Object
		if keep != nil && !keep(u) {
			continue
		}
		gk := u.GroupVersionKind().GroupKind()
		ts := u.GetCreationTimestamp().Time
		if prev, ok := last[gk]; ok && ts.After(prev.manifest) {
			time.Sleep(time.Until(prev.created.Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
		}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("clustertest: %s: no resource for %v: %v", o.Source, gvk, err)
		}
		u = u.DeepCopy()
		// The server stamps its own; a stale one in the manifest is noise.
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if _, err := dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("clustertest: creating %s: %v", o.Source, err)
		}
		last[gk] = stamp{manifest: ts, created: time.Now()}
	}
}

// IsGatewayAPI is a keep function for Apply: objects of the Gateway API
// group.
func IsGatewayAPI(u *unstructured.Unstructured) bool {
	return u.GroupVersionKind().Group == topology.GatewayGroup
}

// NotGatewayAPI is a keep function for Apply: objects of any other group.
func NotGatewayAPI(u *unstructured.Unstructured) bool { return !IsGatewayAPI(u) }

// Parable installs the parable's CRDs and the Gateway API CRDs but TCPRoute
// (a cluster need not serve every route kind), then its topology and
// policies. root is the repository root.
func Parable(t testing.TB, env *testenv.Env, root string) {
	t.Helper()
	dir := filepath.Join(root, "examples", "parable")
	InstallCRDs(t, env.Config, append([]string{filepath.Join(dir, "crds.yaml")}, GatewayAPICRDs(t, "tcproutes")...)...)
	Apply(t, env.Config, nil, filepath.Join(dir, "topology.yaml"), filepath.Join(dir, "policies.yaml"))
}

// Ana is the parable's application developer: she may list the policy CRDs
// (cluster-wide, to discover the policy kinds), and in namespace baker get
// the namespace and list Services, the route kinds, TimeoutPolicies and the
// parable's BackendTLSPolicies, but not Gateways, ListenerSets,
// ReferenceGrants or RetryPolicies. Ana creates the roles and bindings
// (once per env) and returns her configuration.
func Ana(t testing.TB, env *testenv.Env) *rest.Config {
	t.Helper()
	const user, ns = "ana", "baker"
	ctx := context.Background()
	cs := env.Clientset(t)
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "attache-test-policy-kinds"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list"},
		}},
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "ana", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{topology.GatewayGroup}, Resources: []string{"httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list"}},
			// A Role in baker grants get on the Namespace baker itself.
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
			{APIGroups: []string{"policies.cupcakes.example"}, Resources: []string{"timeoutpolicies", "backendtlspolicies"}, Verbs: []string{"get", "list"}},
		},
	}
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return env.UserConfig(t, user) // bound by an earlier call
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.BindClusterRole(t, user, cr.Name)
	env.BindRole(t, ns, user, "Role", role.Name)
	return env.UserConfig(t, user)
}

// WriteKubeconfig writes a kubeconfig file for cfg (client certificate or
// bearer token) whose current context has namespace ns, and returns its
// path (in t.TempDir()).
func WriteKubeconfig(t testing.TB, cfg *rest.Config, ns string) string {
	t.Helper()
	server := cfg.Host
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "user", Namespace: ns}
	kc.CurrentContext = "envtest"
	f, err := os.CreateTemp(t.TempDir(), "kubeconfig-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := clientcmd.WriteToFile(*kc, f.Name()); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
