package controller

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// env is the control plane all tests of the package share (TestMain).
var env *testenv.Env

// testVerbosity is the controller's log verbosity in tests (1 logs every
// write with its patch).
const testVerbosity = 0

// waitTimeout bounds every wait of the tests.
const waitTimeout = 30 * time.Second

const testControllerName = "attache.dev/test-controller"

var colorPolicy = topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	crds, err := gatewayAPICRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	t0 := time.Now()
	env, err = testenv.New(testenv.WithCRDDirectoryPaths(crds...),
		// Without it, kube-apiserver waits up to 60 s (its HTTP shutdown
		// timeout) for the controllers' watches before exiting, as long as
		// envtest waits for it to stop: RestartAPIServer would time out.
		testenv.WithAPIServerFlag("shutdown-watch-termination-grace-period", "2s"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "control plane up with the Gateway API CRDs in %v\n", time.Since(t0).Round(time.Millisecond))
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
	}
	os.Exit(code)
}

// gatewayAPICRDs are the standard-channel CRD files of the Gateway API
// module go.mod requires.
func gatewayAPICRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating sigs.k8s.io/gateway-api: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	files, err := filepath.Glob(filepath.Join(dir, "gateway.networking.k8s.io_*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Gateway API CRDs in %s (%v)", dir, err)
	}
	return files, nil
}

// writeCounter counts the write requests (every method but GET, HEAD and
// OPTIONS) a client sends, by path: what the API server sees.
type writeCounter struct {
	mu    sync.Mutex
	paths []string
	types []string // the Content-Type of each write
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		switch {
		case r.Method == http.MethodGet, r.Method == http.MethodHead, r.Method == http.MethodOptions:
		case strings.HasSuffix(r.URL.Path, "/selfsubjectaccessreviews"):
			// Access checks are questions, not writes to stored objects.
		default:
			w.mu.Lock()
			w.paths = append(w.paths, r.Method+" "+r.URL.Path)
			w.types = append(w.types, r.Header.Get("Content-Type"))
			w.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// since returns the writes after the first n.
func (w *writeCounter) since(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.paths[n:]...)
}

// contentTypes returns the Content-Type of the writes after the first n.
func (w *writeCounter) contentTypes(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.types[n:]...)
}

func (w *writeCounter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.paths)
}

// running is a controller started by startController.
type running struct {
	c      *Controller
	writes *writeCounter
	// stop stops the manager (also done at the end of the test).
	stop func()
}

// startController runs a controller with opts (defaults: the test
// controller name, owning ColorPolicy) in a manager of its own, against
// cfg (default: the admin), until the test ends. setup, when given, adds
// to the manager before it starts.
func startController(t *testing.T, opts Options, cfg *rest.Config, setup ...func(*Controller, manager.Manager)) *running {
	t.Helper()
	return startControllerWith(t, opts, cfg, nil, setup...)
}

// startControllerWith is startController with the manager's options
// changed by mgrOpts (leader election, say) when not nil.
func startControllerWith(t *testing.T, opts Options, cfg *rest.Config, mgrOpts func(*manager.Options), setup ...func(*Controller, manager.Manager)) *running {
	t.Helper()
	if opts.ControllerName == "" {
		opts.ControllerName = testControllerName
	}
	if opts.OwnedKinds == nil {
		opts.OwnedKinds = []topology.GroupKind{colorPolicy}
	}
	if opts.Debounce == 0 {
		opts.Debounce = 20 * time.Millisecond
	}
	if cfg == nil {
		cfg = env.Config
	}
	wc := &writeCounter{}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Wrap(wc.wrap)
	mo := manager.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  CacheOptions(cache.Options{}),
		Logger:                 testr.NewWithOptions(t, testr.Options{Verbosity: testVerbosity}),
	}
	if mgrOpts != nil {
		mgrOpts(&mo)
	}
	mgr, err := manager.New(cfg, mo)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(mgr, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(c, mgr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	r := &running{c: c, writes: wc}
	r.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("manager: %v", err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("manager did not stop within %v", waitTimeout)
			}
		})
	}
	t.Cleanup(r.stop)
	return r
}

// waitIdle waits until the controller has completed more than after
// computations (0: at least one) and has been idle (no queued or running
// work, no computation) for a while.
func (r *running) waitIdle(t *testing.T, after int64) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var quietSince time.Time
	last := int64(-1)
	for time.Now().Before(deadline) {
		n := r.c.computations.Load()
		idle := n > after && r.c.queue.Len() == 0 && r.c.targets.Len() == 0 && !r.c.busy.Load() && r.c.targetBusy.Load() == 0
		if !idle || n != last {
			quietSince = time.Time{}
			last = n
		} else if quietSince.IsZero() {
			quietSince = time.Now()
		} else if time.Since(quietSince) > 500*time.Millisecond {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("controller not idle within %v", waitTimeout)
}

// waitFor polls cond until it returns "" (done), failing with its last
// message after waitTimeout.
func waitFor(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	msg := ""
	for time.Now().Before(deadline) {
		if msg = cond(); msg == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: %s", what, msg)
}

// kube is an admin client with a discovery-backed mapper.
type kube struct {
	t      *testing.T
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newKube(t *testing.T) *kube {
	t.Helper()
	return newKubeFor(t, env.Config)
}

// newKubeFor is newKube for the API server of cfg (a test's own).
func newKubeFor(t *testing.T, cfg *rest.Config) *kube {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kube{t: t, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// mapping finds the resource of a kind, refreshing discovery for kinds
// of CRDs just installed.
func (k *kube) mapping(gvk schema.GroupVersionKind) *meta.RESTMapping {
	k.t.Helper()
	var m *meta.RESTMapping
	waitFor(k.t, "resource of "+gvk.String(), func() string {
		var err error
		m, err = k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			k.mapper.Reset()
			return err.Error()
		}
		return ""
	})
	return m
}

func (k *kube) resource(u *unstructured.Unstructured) dynamic.ResourceInterface {
	k.t.Helper()
	m := k.mapping(u.GroupVersionKind())
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return k.dyn.Resource(m.Resource).Namespace(u.GetNamespace())
	}
	return k.dyn.Resource(m.Resource)
}

// namespace creates a namespace for the test.
func (k *kube) namespace(name string) {
	k.t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := k.resource(ns).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		k.t.Fatal(err)
	}
}

// applyEGCRDs installs Envoy Gateway's CRDs of the given plurals
// (clienttrafficpolicies, ...), as its chart ships them.
func (k *kube) applyEGCRDs(plurals ...string) {
	k.t.Helper()
	dir := modfixtures.Dir(k.t, modfixtures.EnvoyGateway)
	for _, f := range plurals {
		k.applyFile(filepath.Join(dir, "charts", "gateway-helm", "charts", "crds", "crds", "generated", "gateway.envoyproxy.io_"+f+".yaml"), "")
	}
}

// applyFile creates (CRDs: creates or updates) the objects of a manifest
// file, namespaced ones in ns, and waits for CRDs to be served first.
func (k *kube) applyFile(path, ns string) []*unstructured.Unstructured {
	k.t.Helper()
	objs, probs, err := manifest.Read([]string{path}, nil)
	if err != nil || len(probs) > 0 {
		k.t.Fatalf("reading %s: %v %v", path, err, probs)
	}
	var us []*unstructured.Unstructured
	for _, o := range objs {
		us = append(us, o.Object.DeepCopy())
	}
	return k.apply(ns, us...)
}

func (k *kube) apply(ns string, objs ...*unstructured.Unstructured) []*unstructured.Unstructured {
	k.t.Helper()
	ctx := context.Background()
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			k.applyCRD(u)
		}
	}
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		u = u.DeepCopy()
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if k.mapping(u.GroupVersionKind()).Scope.Name() == meta.RESTScopeNameNamespace {
			u.SetNamespace(ns)
		}
		got, err := k.resource(u).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			k.t.Fatalf("creating %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		out = append(out, got)
	}
	return out
}

// applyCRD creates or replaces a CRD and waits until its kind is served.
func (k *kube) applyCRD(u *unstructured.Unstructured) {
	k.t.Helper()
	ctx := context.Background()
	cl := k.dyn.Resource(crdGVR)
	cur, err := cl.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := cl.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			k.t.Fatalf("creating CRD %s: %v", u.GetName(), err)
		}
	case err != nil:
		k.t.Fatal(err)
	default:
		u = u.DeepCopy()
		u.SetResourceVersion(cur.GetResourceVersion())
		if _, err := cl.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			k.t.Fatalf("updating CRD %s: %v", u.GetName(), err)
		}
	}
	group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	version, _ := versions[0].(map[string]any)["name"].(string)
	k.mapping(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
}

func (k *kube) get(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	got, err := k.resource(u).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		k.t.Fatal(err)
	}
	return got
}

func (k *kube) delete(gvk schema.GroupVersionKind, ns, name string) {
	k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	if err := k.resource(u).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		k.t.Fatal(err)
	}
}

// deleteCRD deletes a CRD and waits until it is gone, so that a later
// test creating it again does not meet the old one terminating.
func (k *kube) deleteCRD(name string) {
	k.t.Helper()
	cl := k.dyn.Resource(crdGVR)
	if err := cl.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		k.t.Fatal(err)
	}
	waitFor(k.t, "CRD "+name+" gone", func() string {
		if _, err := cl.Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
}

func (k *kube) patch(gvk schema.GroupVersionKind, ns, name, patch string, subresources ...string) *unstructured.Unstructured {
	k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	got, err := k.resource(u).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, subresources...)
	if err != nil {
		k.t.Fatalf("patching %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return got
}

// GVKs used by the tests.
var (
	gvkColorPolicy = schema.GroupVersionKind{Group: "policies.example.com", Version: "v1", Kind: "ColorPolicy"}
	gvkService     = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	gvkNamespace   = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	gvkGateway     = schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "Gateway"}
	gvkHTTPRoute   = schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "HTTPRoute"}
)

// condition finds a condition by type in a list at path.
func condition(u *unstructured.Unstructured, typ string, path ...string) map[string]any {
	if u == nil {
		return nil
	}
	if len(path) == 0 {
		path = []string{"status", "conditions"}
	}
	l, _, _ := unstructured.NestedSlice(u.Object, path...)
	for _, c := range maps(l) {
		if c["type"] == typ {
			return c
		}
	}
	return nil
}

// ours returns the ancestor entries of a controller.
func ancestorsOf(u *unstructured.Unstructured, controllerName string) []map[string]any {
	l, _, _ := unstructured.NestedSlice(u.Object, "status", "ancestors")
	var out []map[string]any
	for _, a := range maps(l) {
		if a["controllerName"] == controllerName {
			out = append(out, a)
		}
	}
	return out
}

// condSummary renders a condition as status/reason, "-" when absent.
func condSummary(c map[string]any) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%v/%v", c["status"], c["reason"])
}

// policySummary is Accepted and Programmed of a policy as
// "status/reason status/reason".
func policySummary(u *unstructured.Unstructured) string {
	if u == nil {
		return "<deleted>"
	}
	return condSummary(condition(u, "Accepted")) + " " + condSummary(condition(u, "Programmed"))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// forCacheOptions runs check on CacheOptions of the default options and of
// options with a DefaultTransform of the caller's that strips nothing (what
// the cache's own transforms do must happen all the same, after it); that
// transform must have run calls times in all.
func forCacheOptions(t *testing.T, calls int, check func(name string, opts cache.Options)) {
	t.Helper()
	var custom int
	for name, o := range map[string]cache.Options{
		"default": {},
		"custom":  {DefaultTransform: func(in any) (any, error) { custom++; return in, nil }},
	} {
		check(name, CacheOptions(o))
	}
	if custom != calls {
		t.Errorf("the caller's DefaultTransform ran %d times, want %d", custom, calls)
	}
}
