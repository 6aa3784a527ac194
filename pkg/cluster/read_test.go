package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"

	"github.com/attache-dev/attache/internal/testpki"
)

var (
	parableDir   = filepath.Join("..", "..", "examples", "parable")
	parableFiles = []string{filepath.Join(parableDir, "topology.yaml"), filepath.Join(parableDir, "policies.yaml")}
)

// shared is the one control plane of this package's tests, started by the
// first test that needs it (tests that do not, run without the ~10 s cost)
// and stopped by TestMain.
var shared struct {
	once   sync.Once
	failed bool
	env    *testenv.Env
	// beforeGatewayAPI is what Read gave before the Gateway API CRDs were
	// installed: the parable's Namespaces, Services and policies only.
	beforeGatewayAPI    *Snapshot
	beforeGatewayAPIErr error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.env != nil {
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}
	os.Exit(code)
}

// parable returns the shared control plane holding the parable: its CRDs,
// the Gateway API CRDs but TCPRoute, its topology and policies. On the way
// it reads the cluster once before the Gateway API CRDs are installed.
func parable(t *testing.T) *testenv.Env {
	t.Helper()
	shared.once.Do(func() {
		shared.failed = true // until the end: t.Fatal below ends the func
		t0 := time.Now()
		env, err := testenv.New(testenv.WithCRDDirectoryPaths(filepath.Join(parableDir, "crds.yaml")))
		if err != nil {
			t.Fatal(err)
		}
		shared.env = env
		clustertest.Apply(t, env.Config, clustertest.NotGatewayAPI, parableFiles...)
		shared.beforeGatewayAPI, shared.beforeGatewayAPIErr = Read(ctx(t), env.Config, Options{})
		clustertest.InstallCRDs(t, env.Config, clustertest.GatewayAPICRDs(t, "tcproutes")...)
		clustertest.Apply(t, env.Config, clustertest.IsGatewayAPI, parableFiles...)
		t.Logf("control plane up and parable applied in %v", time.Since(t0).Round(time.Millisecond))
		shared.failed = false
	})
	if shared.failed {
		t.Fatal("setting up the shared control plane failed (see the first test that ran)")
	}
	return shared.env
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// id names an object as the tests compare them.
func id(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	return fmt.Sprintf("%s/%s %s/%s", gvk.Group, gvk.Kind, u.GetNamespace(), u.GetName())
}

func ids(objs []engine.Object) map[string]string {
	out := map[string]string{}
	for _, o := range objs {
		out[id(o.Object)] = o.Object.GetResourceVersion()
	}
	return out
}

// parableIDs are the objects of the parable's manifests, CRDs included.
func parableIDs(t *testing.T) map[string]bool {
	t.Helper()
	objs, probs, err := manifest.Read([]string{parableDir}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatalf("reading %s: %v %v", parableDir, err, probs)
	}
	out := map[string]bool{}
	for _, o := range objs {
		out[id(o.Object)] = true
	}
	return out
}

// readParameters reads the cluster as admin and checks the data-plane
// parameters of kind read: nothing skipped, each trimmed (apiVersion,
// kind, metadata without labels, and spec only: want, by name) and
// found, the Snapshot for further checks.
func readParameters(t *testing.T, env *testenv.Env, apiVersion, kind string, want map[string]string) *Snapshot {
	t.Helper()
	snap := read(t, env.Config, Options{})
	if len(snap.Skipped) > 0 || len(snap.Notes) > 0 {
		t.Errorf("Skipped %q, Notes %q; want none", snap.Skipped, snap.Notes)
	}
	seen := map[string]bool{}
	for _, o := range snap.Objects {
		u := o.Object
		if u.GetKind() != kind {
			continue
		}
		seen[u.GetName()] = true
		if u.GetAPIVersion() != apiVersion || u.GetUID() == "" || u.GetResourceVersion() == "" || u.GetLabels() != nil || len(u.Object) != 4 {
			t.Errorf("%s: apiVersion %q, uid %q, resourceVersion %q, not trimmed: %v", o.Source, u.GetAPIVersion(), u.GetUID(), u.GetResourceVersion(), u.Object)
		}
		if spec, ok := want[u.GetName()]; !ok || fmt.Sprint(u.Object["spec"]) != spec {
			t.Errorf("%s: spec %v, want %q", o.Source, u.Object["spec"], spec)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s %s not read", kind, name)
		}
	}
	return snap
}

// readAs reads the cluster as user, bound to a new ClusterRole name that
// lists CRDs, the Gateway API's kinds and the core kinds (core: those
// resources with verbs), plus extra rules.
func readAs(t *testing.T, env *testenv.Env, user, name string, core []string, verbs []string, extra ...rbacv1.PolicyRule) *Snapshot {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: append([]rbacv1.PolicyRule{
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: core, Verbs: verbs},
			{APIGroups: []string{topology.GatewayGroup}, Resources: []string{"*"}, Verbs: []string{"list"}},
		}, extra...),
	}
	if _, err := env.Clientset(t).RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	env.BindClusterRole(t, user, role.Name)
	return read(t, env.UserConfig(t, user), Options{})
}

func read(t *testing.T, cfg *rest.Config, opts Options) *Snapshot {
	t.Helper()
	t0 := time.Now()
	snap, err := Read(ctx(t), cfg, opts)
	if err != nil {
		t.Fatalf("Read(%+v): %v", opts, err)
	}
	t.Logf("Read(%+v): %d objects, %d skipped, in %v", opts, len(snap.Objects), len(snap.Skipped), time.Since(t0).Round(time.Millisecond))
	return snap
}

func TestReadAdmin(t *testing.T) {
	env := parable(t)
	snap := read(t, env.Config, Options{Namespace: "baker"})
	if len(snap.Skipped) > 0 {
		t.Errorf("admin: Skipped = %q, want none", snap.Skipped)
	}
	got := ids(snap.Objects)
	for want := range parableIDs(t) {
		if _, ok := got[want]; !ok {
			t.Errorf("missing %s", want)
		}
	}
	// Policy kinds come from their labelled CRDs: the Gateway API's own
	// BackendTLSPolicy CRD is one.
	if _, ok := got["apiextensions.k8s.io/CustomResourceDefinition /backendtlspolicies.gateway.networking.k8s.io"]; !ok {
		t.Errorf("the Gateway API's BackendTLSPolicy CRD (labelled %s) is missing", PolicyLabel)
	}
	sources := map[string]bool{}
	for _, o := range snap.Objects {
		u := o.Object
		gk := u.GroupVersionKind().GroupKind()
		isCRD := gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition"
		if isCRD {
			if _, ok := u.GetLabels()[PolicyLabel]; !ok {
				t.Errorf("CRD %s has no %s label", u.GetName(), PolicyLabel)
			}
		} else if gk.Group != "policies.cupcakes.example" && !gatewayapi.Handles(topology.GroupKind{Group: gk.Group, Kind: gk.Kind}) {
			t.Errorf("%s: the engine does not read this kind", id(u))
		}
		if u.GetManagedFields() != nil {
			t.Errorf("%s: managedFields kept", id(u))
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			t.Errorf("%s: no apiVersion/kind", id(u))
		}
		sources[o.Source] = true
	}
	for _, s := range []string{
		"cluster: HTTPRoute baker/baker",
		"cluster: GatewayClass cupcakes",
		"cluster: Namespace baker",
		"cluster: RetryPolicy baker/namespace-retries",
		"cluster: CustomResourceDefinition retrypolicies.policies.cupcakes.example",
	} {
		if !sources[s] {
			t.Errorf("no object with Source %q", s)
		}
	}

	// Options.Namespace only matters when a cluster-wide list is forbidden.
	if all := ids(read(t, env.Config, Options{}).Objects); !maps.Equal(all, got) {
		t.Errorf("with and without Namespace: different objects:\n%v\n%v", all, got)
	}
}

func ref(group, kind, ns, name string) topology.Ref {
	return topology.Ref{Group: group, Kind: kind, Namespace: ns, Name: name}
}

// TestReadWithoutGatewayAPI: a cluster that serves no Gateway API kinds is
// read without error or Skipped lines (see parable for when it was read).
func TestReadWithoutGatewayAPI(t *testing.T) {
	parable(t)
	snap, err := shared.beforeGatewayAPI, shared.beforeGatewayAPIErr
	if err != nil {
		t.Fatalf("Read before the Gateway API CRDs: %v", err)
	}
	if len(snap.Skipped) > 0 {
		t.Errorf("Skipped = %q, want none: missing kinds are not an error", snap.Skipped)
	}
	got := ids(snap.Objects)
	for want := range parableIDs(t) {
		_, ok := got[want]
		if gw := strings.HasPrefix(want, "gateway.networking.k8s.io/"); ok == gw {
			t.Errorf("%s: in the snapshot = %v, want %v", want, ok, !gw)
		}
	}
}

// TestReadPaginated reads with pages of 2 objects: the same objects, read
// through continue tokens.
func TestReadPaginated(t *testing.T) {
	env := parable(t)
	want := ids(read(t, env.Config, Options{}).Objects)

	cfg := rest.CopyConfig(env.Config)
	var continued, unlimited atomic.Int32
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			q := req.URL.Query()
			if q.Get("continue") != "" {
				continued.Add(1)
			}
			if strings.HasPrefix(req.URL.Path, "/api/v1/") || strings.Contains(req.URL.Path, ".") { // lists, not discovery
				if q.Get("limit") != "2" {
					unlimited.Add(1)
				}
			}
			return rt.RoundTrip(req)
		})
	})
	got := ids(read(t, cfg, Options{PageSize: 2}).Objects)
	if !maps.Equal(got, want) {
		t.Errorf("PageSize 2: objects differ from one page each:\ngot  %v\nwant %v", got, want)
	}
	// Namespaces (6), Services (5), HTTPRoutes (3) and the policies need
	// several pages each.
	t.Logf("%d requests with a continue token", continued.Load())
	if n := continued.Load(); n < 6 {
		t.Errorf("%d requests with a continue token, want at least 6", n)
	}
	if n := unlimited.Load(); n > 0 {
		t.Errorf("%d lists without limit=2", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestReadEngineMatchesFiles computes the engine over the live snapshot and
// over the parable's manifests (-f): the same policy status and effective
// policies; namespace-retries affects every baker Service.
func TestReadEngineMatchesFiles(t *testing.T) {
	env := parable(t)
	live := engine.Compute(read(t, env.Config, Options{}).Objects, engine.Options{})
	objs, _, err := manifest.Read([]string{parableDir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := engine.Compute(objs, engine.Options{})

	ps := live.PolicyStatus(ref("policies.cupcakes.example", "RetryPolicy", "baker", "namespace-retries"))
	if ps == nil {
		t.Fatal("no status for RetryPolicy baker/namespace-retries")
	}
	var affects []string
	for _, r := range ps.Affects {
		affects = append(affects, r.String())
	}
	for _, svc := range []string{"baker", "oven", "frosting", "sprinkles"} {
		if !slices.Contains(affects, "Service baker/"+svc) {
			t.Errorf("namespace-retries affects %q, want Service baker/%s among them", affects, svc)
		}
	}

	if got, want := policySummary(live), policySummary(files); len(want) != 6 || !maps.Equal(got, want) {
		t.Errorf("policy status differs between cluster and files:\ncluster %v\nfiles   %v", got, want)
	}
	if got, want := effectiveSummary(t, live), effectiveSummary(t, files); len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("effective policies differ between cluster and files:\ncluster %v\nfiles   %v", got, want)
	}
}

func policySummary(r *engine.Result) map[string]string {
	out := map[string]string{}
	for _, ps := range r.Policies {
		var b strings.Builder
		for _, c := range ps.Conditions {
			fmt.Fprintf(&b, "%s=%s/%s ", c.Type, c.Status, c.Reason)
		}
		for _, a := range ps.Affects {
			fmt.Fprintf(&b, "[%s]", a)
		}
		out[ps.Policy.Ref.String()] = b.String()
	}
	return out
}

func effectiveSummary(t *testing.T, r *engine.Result) map[string]string {
	out := map[string]string{}
	for _, e := range r.Effective {
		var specs []string
		for _, c := range e.Contexts {
			js, err := json.Marshal(c.Spec)
			if err != nil {
				t.Fatal(err)
			}
			specs = append(specs, string(js))
		}
		out[e.Kind.String()+" "+e.Target.String()] = strings.Join(specs, " | ")
	}
	return out
}

// anaSkipped is what Ana (clustertest.Ana) cannot read when asking about
// baker, in Read's order: topology kinds, then policy kinds by CRD name.
var anaSkipped = []string{
	"core Namespace: cannot list cluster-wide (forbidden); read namespace baker only",
	"core Service: cannot list cluster-wide (forbidden); read namespace baker only",
	"gatewayapi GatewayClass: cannot list (forbidden; cluster-scoped, so namespace baker does not help); its objects are not shown",
	"gatewayapi Gateway: forbidden in namespace baker; its objects are not shown",
	"gatewayapi ListenerSet: forbidden in namespace baker; its objects are not shown",
	"gatewayapi HTTPRoute: cannot list cluster-wide (forbidden); read namespace baker only",
	"gatewayapi GRPCRoute: cannot list cluster-wide (forbidden); read namespace baker only",
	"gatewayapi TLSRoute: cannot list cluster-wide (forbidden); read namespace baker only",
	"gatewayapi UDPRoute: cannot list cluster-wide (forbidden); read namespace baker only",
	"gatewayapi ReferenceGrant: forbidden in namespace baker; its objects are not shown",
	"gatewayapi BackendTLSPolicy: forbidden in namespace baker; its policies are not shown",
	"policies.cupcakes.example BackendTLSPolicy: cannot list cluster-wide (forbidden); read namespace baker only",
	"policies.cupcakes.example RetryPolicy: forbidden in namespace baker; its policies are not shown",
	"policies.cupcakes.example TimeoutPolicy: cannot list cluster-wide (forbidden); read namespace baker only",
}

func TestReadRBAC(t *testing.T) {
	env := parable(t)
	ana := clustertest.Ana(t, env)

	t.Run("AnaInBaker", func(t *testing.T) {
		snap := read(t, ana, Options{Namespace: "baker"})
		if !slices.Equal(snap.Skipped, anaSkipped) {
			t.Errorf("Skipped:\n%s\nwant:\n%s", strings.Join(snap.Skipped, "\n"), strings.Join(anaSkipped, "\n"))
		}
		// Unread is Skipped, structured: the kind, and the namespace read.
		if len(snap.Unread) != len(snap.Skipped) {
			t.Fatalf("%d Unread entries for %d Skipped lines", len(snap.Unread), len(snap.Skipped))
		}
		for i, u := range snap.Unread {
			if u.Message != snap.Skipped[i] {
				t.Errorf("Unread[%d].Message = %q, Skipped[%d] = %q", i, u.Message, i, snap.Skipped[i])
			}
			if u.Kind == "" || !strings.Contains(u.Message, " "+u.Kind+":") {
				t.Errorf("Unread[%d] names kind %q, its message %q", i, u.Kind, u.Message)
			}
			if narrowed := strings.HasSuffix(u.Message, "read namespace baker only"); narrowed != (u.Namespace == "baker") {
				t.Errorf("Unread[%d]: Namespace %q for %q", i, u.Namespace, u.Message)
			}
		}
		for _, want := range []Unread{
			{Group: "policies.cupcakes.example", Kind: "RetryPolicy", Policy: true},
			{Group: "policies.cupcakes.example", Kind: "TimeoutPolicy", Policy: true, Namespace: "baker"},
			{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
		} {
			if !slices.ContainsFunc(snap.Unread, func(u Unread) bool {
				u.Message = ""
				return u == want
			}) {
				t.Errorf("Unread lacks %+v:\n%+v", want, snap.Unread)
			}
		}
		got := ids(snap.Objects)
		for _, want := range []string{
			"/Namespace /baker",
			"/Service baker/oven",
			"gateway.networking.k8s.io/HTTPRoute baker/frosting",
			"policies.cupcakes.example/TimeoutPolicy baker/baker-timeouts",
			"policies.cupcakes.example/BackendTLSPolicy baker/oven-tls",
			"apiextensions.k8s.io/CustomResourceDefinition /retrypolicies.policies.cupcakes.example",
		} {
			if _, ok := got[want]; !ok {
				t.Errorf("missing %s", want)
			}
		}
		for o := range got {
			if strings.Contains(o, "RetryPolicy ") || strings.Contains(o, "/Gateway") || strings.Contains(o, "infra") || strings.Contains(o, " default/") {
				t.Errorf("%s: Ana cannot read it", o)
			}
		}
		res := engine.Compute(snap.Objects, engine.Options{})
		if ps := res.PolicyStatus(ref("policies.cupcakes.example", "TimeoutPolicy", "baker", "baker-timeouts")); ps == nil {
			t.Error("no status for TimeoutPolicy baker/baker-timeouts")
		}
		if ps := res.PolicyStatus(ref("policies.cupcakes.example", "RetryPolicy", "baker", "namespace-retries")); ps != nil {
			t.Error("a status for RetryPolicy baker/namespace-retries, which Ana cannot read")
		}
	})

	t.Run("AnaAllNamespaces", func(t *testing.T) {
		snap := read(t, ana, Options{})
		if len(snap.Skipped) != len(anaSkipped) {
			t.Errorf("Skipped has %d lines, want %d:\n%s", len(snap.Skipped), len(anaSkipped), strings.Join(snap.Skipped, "\n"))
		}
		for _, s := range snap.Skipped {
			if !strings.Contains(s, "(forbidden)") && !strings.Contains(s, "(forbidden;") {
				t.Errorf("Skipped %q does not say forbidden", s)
			}
		}
		if !slices.Contains(snap.Skipped, "policies.cupcakes.example RetryPolicy: cannot list cluster-wide (forbidden); its policies are not shown") {
			t.Errorf("Skipped lacks RetryPolicy:\n%s", strings.Join(snap.Skipped, "\n"))
		}
		for _, o := range snap.Objects {
			if gk := o.Object.GroupVersionKind().GroupKind(); gk.Kind != "CustomResourceDefinition" {
				t.Errorf("%s: read without any cluster-wide right", id(o.Object))
			}
		}
	})

	t.Run("NoRights", func(t *testing.T) {
		snap := read(t, env.UserConfig(t, "nobody"), Options{Namespace: "baker"})
		want := "apiextensions.k8s.io CustomResourceDefinition: cannot list (forbidden); policy kinds cannot be discovered, so no policies are shown"
		if len(snap.Skipped) == 0 || snap.Skipped[0] != want {
			t.Errorf("Skipped[0] = %q, want %q", snap.Skipped, want)
		}
		if len(snap.Objects) > 0 {
			t.Errorf("read %d objects without rights", len(snap.Objects))
		}
	})

	t.Run("ClusterAdminUser", func(t *testing.T) {
		env.BindClusterRole(t, "chihiro", "cluster-admin")
		snap := read(t, env.UserConfig(t, "chihiro"), Options{Namespace: "baker"})
		if len(snap.Skipped) > 0 {
			t.Errorf("Skipped = %q, want none", snap.Skipped)
		}
		if got, want := ids(snap.Objects), ids(read(t, env.Config, Options{}).Objects); !maps.Equal(got, want) {
			t.Errorf("cluster-admin user and system:masters read different objects:\n%v\n%v", got, want)
		}
	})
}

// TestReadPolicyKindsOnly: with PolicyKindsOnly, Read lists the policy CRDs
// and nothing else (no discovery, no other list), so that Ana, who cannot
// list RetryPolicies or Gateways, gets a full answer about the kinds.
func TestReadPolicyKindsOnly(t *testing.T) {
	env := parable(t)
	var crds []string
	for o := range ids(read(t, env.Config, Options{}).Objects) {
		if strings.HasPrefix(o, "apiextensions.k8s.io/CustomResourceDefinition ") {
			crds = append(crds, o)
		}
	}
	slices.Sort(crds)
	if len(crds) < 4 { // the parable's three and the Gateway API's BackendTLSPolicy
		t.Fatalf("full read: %d policy CRDs, want at least 4: %v", len(crds), crds)
	}

	cfg := rest.CopyConfig(clustertest.Ana(t, env))
	var paths []string
	var mu sync.Mutex
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			paths = append(paths, req.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	snap := read(t, cfg, Options{Namespace: "baker", PolicyKindsOnly: true})
	if len(snap.Skipped) > 0 {
		t.Errorf("Ana, policy kinds only: Skipped = %q, want none (she may list CRDs)", snap.Skipped)
	}
	var got []string
	for o := range ids(snap.Objects) {
		got = append(got, o)
	}
	slices.Sort(got)
	if !slices.Equal(got, crds) {
		t.Errorf("policy kinds only: objects\n%v\nwant the policy CRDs of a full read\n%v", got, crds)
	}
	for _, p := range paths {
		if p != "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" {
			t.Errorf("policy kinds only: request to %s; only the CRD list is needed", p)
		}
	}

	snap = read(t, env.UserConfig(t, "nobody"), Options{PolicyKindsOnly: true})
	want := "apiextensions.k8s.io CustomResourceDefinition: cannot list (forbidden); policy kinds cannot be discovered, so no policies are shown"
	if !slices.Equal(snap.Skipped, []string{want}) || len(snap.Objects) > 0 {
		t.Errorf("nobody, policy kinds only: Skipped = %q, %d objects; want [%q], none", snap.Skipped, len(snap.Objects), want)
	}
}

// TestReadUnreachable: a server that is not there is an error that says
// what to check.
func TestReadUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "https://" + l.Addr().String()
	l.Close()
	t0 := time.Now()
	_, err = Read(ctx(t), &rest.Config{Host: host}, Options{Namespace: "baker"})
	if err == nil {
		t.Fatal("Read of a closed port: no error")
	}
	t.Logf("after %v: %v", time.Since(t0).Round(time.Millisecond), err)
	for _, want := range []string{host, "--kubeconfig", "--context", "-f PATH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestReadUnauthorized: credentials the API server rejects are an error
// that says to check the user.
func TestReadUnauthorized(t *testing.T) {
	env := parable(t)
	cfg := &rest.Config{Host: env.Config.Host, BearerToken: "not-a-token", TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}
	_, err := Read(ctx(t), cfg, Options{Namespace: "baker"})
	if err == nil || !strings.Contains(err.Error(), "rejected the credentials") || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Fatalf("Read with a bogus token: err = %v, want a hint about the credentials", err)
	}
}

func TestPolicyResource(t *testing.T) {
	crd := func(versions ...map[string]any) *unstructured.Unstructured {
		vs := make([]any, len(versions))
		for i, v := range versions {
			vs[i] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "retrypolicies.x.example"},
			"spec": map[string]any{
				"group": "x.example", "scope": "Namespaced",
				"names":    map[string]any{"kind": "RetryPolicy", "plural": "retrypolicies"},
				"versions": vs,
			},
		}}
	}
	v := func(name string, served, storage bool) map[string]any {
		return map[string]any{"name": name, "served": served, "storage": storage}
	}
	for _, tc := range []struct {
		name, want, why string
		crd             *unstructured.Unstructured
	}{
		{"storage", "v1", "", crd(v("v1alpha1", true, false), v("v1", true, true))},
		{"storage not served", "v1beta1", "", crd(v("v1", false, true), v("v1beta1", true, false), v("v1alpha1", true, false))},
		{"none served", "", "policies are not shown", crd(v("v1", false, true))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, why := policyResource(tc.crd)
			if res.gvr.Version != tc.want || (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
				t.Errorf("got %v %q, want version %q, why %q", res.gvr, why, tc.want, tc.why)
			}
			if why == "" && (res.gvr.Resource != "retrypolicies" || !res.namespaced || !res.policy || res.label != "x.example RetryPolicy") {
				t.Errorf("resource %+v", res)
			}
		})
	}
}

// UnreadFunc covers the single objects that could not be got and the
// kinds that could not be listed, outside the one namespace read.
func TestSnapshotUnreadFunc(t *testing.T) {
	all := (&Snapshot{}).UnreadFunc()
	if all(topology.Ref{Kind: "Service", Namespace: "a", Name: "web"}) {
		t.Error("everything read: a Service is not unread")
	}
	if !all(topology.Ref{Group: "multicluster.x-k8s.io", Kind: "ServiceImport", Namespace: "a", Name: "web"}) {
		t.Error("ServiceImports are never listed: one is unread")
	}
	s := &Snapshot{
		UnreadObjects: []topology.Ref{{Kind: "ConfigMap", Namespace: "a", Name: "ca"}},
		Unread: []Unread{
			{Kind: "Service", Namespace: "baker"},
			{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"},
		},
	}
	f := s.UnreadFunc()
	for ref, want := range map[topology.Ref]bool{
		{Kind: "ConfigMap", Namespace: "a", Name: "ca"}:                                    true,
		{Kind: "ConfigMap", Namespace: "a", Name: "other"}:                                 false,
		{Kind: "Service", Namespace: "baker", Name: "web"}:                                 false, // its namespace was read
		{Kind: "Service", Namespace: "other", Name: "web"}:                                 true,
		{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "x", Name: "r"}: true,
		{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "x", Name: "g"}:   false,
	} {
		if got := f(ref); got != want {
			t.Errorf("Unread(%s) = %v, want %v", ref, got, want)
		}
	}
}

// dataPlaneObjects, for TestReadClassParams: Envoy Gateway's configuration
// (its GatewayClasses merge their Gateways unless their EnvoyProxy says
// otherwise) and four GatewayClasses: merging (EnvoyProxy eg/m says
// mergeGateways: true, among other settings), separate (eg/p says false),
// missing (names an EnvoyProxy that is not there) and bydefault (no
// parametersRef). Each has two Gateways with a plain-HTTP listener on port
// 80 (for hosts of their own: Envoy Gateway leaves out a merged listener
// that repeats an earlier one's host), and a ClientTrafficPolicy on the
// first one's listener.
func dataPlaneObjects() string {
	docs := []string{`
apiVersion: v1
kind: Namespace
metadata: {name: eg}
---
apiVersion: v1
kind: Namespace
metadata: {name: envoy-gateway-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-gateway-config, namespace: envoy-gateway-system}
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    envoyProxy: {mergeGateways: true}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: m, namespace: eg, labels: {team: edge}}
spec:
  mergeGateways: true
  logging: {level: {default: warn}}
  concurrency: 2
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p, namespace: eg}
spec: {mergeGateways: false}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: own, namespace: eg}
spec:
  mergeType: JSONMerge
  concurrency: 2
  telemetry: {tracing: {provider: {type: OpenTelemetry, backendRefs: [{name: otel, port: 4317}]}}}`}
	for _, c := range []struct{ class, params string }{{"merging", "m"}, {"separate", "p"}, {"missing", "nope"}, {"bydefault", ""}} {
		ref := ""
		if c.params != "" {
			ref = fmt.Sprintf("\n  parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: %s, namespace: eg}", c.params)
		}
		docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %s}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller%s`, c.class, ref))
		for _, gw := range []string{c.class + "-a", c.class + "-b"} {
			infra := ""
			if gw == "bydefault-b" {
				infra = "\n  infrastructure: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: own}}"
			}
			docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s, namespace: eg}
spec:
  gatewayClassName: %s%s
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: %s.example.com}]`, gw, c.class, infra, gw))
		}
		docs = append(docs, fmt.Sprintf(`
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: %s, namespace: eg}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: %s-a, sectionName: http}]
  timeout: {http: {idleTimeout: 5s}}`, c.class, c.class))
	}
	return strings.Join(docs, "\n---")
}

// TestReadClassParams: with Envoy Gateway's ClientTrafficPolicy (a kind
// that rejects ports shared across a data plane), Read gets the
// EnvoyProxies that GatewayClasses name, trimmed to spec.mergeGateways,
// and the configuration that gives the default. The engine then finds a
// policy on one listener of a merging class Invalid (the other Gateway's
// listener shares its port), by the EnvoyProxy; the separate class's
// EnvoyProxy overrides the default; the classes without EnvoyProxy take
// the configuration's default. A reader that may not get EnvoyProxies
// gets a note, and every class takes the default.
func TestReadClassParams(t *testing.T) {
	egDir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	generated := filepath.Join(egDir, "charts", "gateway-helm", "charts", "crds", "crds", "generated")
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t),
		filepath.Join(generated, "gateway.envoyproxy.io_envoyproxies.yaml"),
		filepath.Join(generated, "gateway.envoyproxy.io_clienttrafficpolicies.yaml"))...))
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(dataPlaneObjects()), 0o600); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)

	const merged = "merges its Gateways into one data plane"
	byParams := "(GatewayClass merging " + merged + " (spec.mergeGateways of EnvoyProxy eg/m, its parametersRef))"
	byDefault := func(class string) string {
		return "(GatewayClass " + class + " " + merged + " (" + profiles.EGMergeGateways + " in "
	}
	// check computes the snapshot and compares each class's policy with
	// want: "" for Accepted, else a part of the Invalid message.
	check := func(t *testing.T, snap *Snapshot, want map[string]string) {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{})
		for class, msg := range want {
			ps := res.PolicyStatus(ref("gateway.envoyproxy.io", "ClientTrafficPolicy", "eg", class))
			if ps == nil || len(ps.Ancestors) != 1 || len(ps.Ancestors[0].Conditions) == 0 {
				t.Errorf("ClientTrafficPolicy eg/%s: status %+v, want one ancestor", class, ps)
				continue
			}
			c := ps.Ancestors[0].Conditions[0]
			if msg == "" && c.Reason != "Accepted" {
				t.Errorf("ClientTrafficPolicy eg/%s: %s %q, want Accepted", class, c.Reason, c.Message)
			}
			if msg != "" && (c.Reason != "Invalid" || !strings.Contains(c.Message, msg) || !strings.Contains(c.Message, "shares port 80")) {
				t.Errorf("ClientTrafficPolicy eg/%s: %s %q, want Invalid saying\n%s", class, c.Reason, c.Message, msg)
			}
		}
	}

	t.Run("Admin", func(t *testing.T) {
		snap := readParameters(t, env, "gateway.envoyproxy.io/v1alpha1", "EnvoyProxy", map[string]string{
			"m": "map[mergeGateways:true]", "p": "map[mergeGateways:false]",
			"own": "map[mergeType:JSONMerge telemetry:map[tracing:map[provider:map[backendRefs:[map[group: kind:Service name:otel port:4317 weight:1]]]]]]"})
		check(t, snap, map[string]string{"merging": byParams, "separate": "", "missing": byDefault("missing"), "bydefault": byDefault("bydefault")})
	})

	t.Run("CannotGetEnvoyProxies", func(t *testing.T) {
		snap := readAs(t, env, "ivy", "reader-without-envoyproxies", []string{"namespaces", "services", "configmaps"}, []string{"list"},
			rbacv1.PolicyRule{APIGroups: []string{"gateway.envoyproxy.io"}, Resources: []string{"clienttrafficpolicies"}, Verbs: []string{"list"}})
		if len(snap.Skipped) > 0 {
			t.Errorf("Skipped %q, want none", snap.Skipped)
		}
		want := []string{
			"gateway.envoyproxy.io EnvoyProxy eg/m: cannot get (forbidden); GatewayClass merging's Gateways are taken as merged into one data plane only if the configuration's default (EnvoyGateway.envoyProxy.mergeGateways) says so",
			"gateway.envoyproxy.io EnvoyProxy eg/nope: cannot get (forbidden); GatewayClass missing's Gateways are taken as merged into one data plane only if the configuration's default (EnvoyGateway.envoyProxy.mergeGateways) says so",
			"gateway.envoyproxy.io EnvoyProxy eg/own: cannot get (forbidden); the backends the telemetry of Gateway eg/bydefault-b goes to are not known",
			"gateway.envoyproxy.io EnvoyProxy eg/p: cannot get (forbidden); GatewayClass separate's Gateways are taken as merged into one data plane only if the configuration's default (EnvoyGateway.envoyProxy.mergeGateways) says so",
		}
		if !slices.Equal(snap.Notes, want) {
			t.Errorf("Notes:\n%s\nwant:\n%s", strings.Join(snap.Notes, "\n"), strings.Join(want, "\n"))
		}
		for _, o := range snap.Objects {
			if o.Object.GetKind() == "EnvoyProxy" {
				t.Errorf("%s: read without the right to get it", o.Source)
			}
		}
		check(t, snap, map[string]string{"merging": byDefault("merging"), "separate": byDefault("separate"), "missing": byDefault("missing"), "bydefault": byDefault("bydefault")})
	})
}

// trustBundleObjects: a Gateway of Envoy Gateway's class, a route to
// Services s1 and s2, BackendTLSPolicies on s1 (trusted, naming
// ClusterTrustBundle bundle) and s2 (untrusted, naming absent, which does
// not exist), with group "" as Envoy Gateway's own fixtures write them;
// and, when version is set, ClusterTrustBundle bundle at that version
// holding pemText, which kubectl's last-applied-configuration copies.
func trustBundleObjects(version, pemText string) string {
	docs := `
apiVersion: v1
kind: Namespace
metadata: {name: tls}
---` + egClassDoc + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: tls}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: tls}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 443}, {name: s2, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: tls}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: tls}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: trusted, namespace: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: s1}]
  validation: {hostname: s1.example, caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: bundle}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: untrusted, namespace: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: s2}]
  validation: {hostname: s2.example, caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: absent}]}`
	if version == "" {
		return docs
	}
	quoted, _ := json.Marshal(pemText)
	applied, _ := json.Marshal(map[string]any{"apiVersion": "certificates.k8s.io/" + version, "kind": "ClusterTrustBundle",
		"metadata": map[string]any{"name": "bundle"}, "spec": map[string]any{"trustBundle": pemText}})
	quotedApplied, _ := json.Marshal(string(applied))
	return docs + fmt.Sprintf(`
---
apiVersion: certificates.k8s.io/%s
kind: ClusterTrustBundle
metadata:
  name: bundle
  annotations: {kubectl.kubernetes.io/last-applied-configuration: %s}
spec: {trustBundle: %s}`, version, quotedApplied, quoted)
}

// TestReadClusterTrustBundles: BackendTLSPolicies below a Gateway of
// Envoy Gateway's class may name ClusterTrustBundles (cluster-scoped, of
// an API whose version depends on the Kubernetes release). Read gets the
// one named, at the version the cluster serves (v1, or v1beta1 where v1
// is off), keeping a placeholder for its bundle, never the certificates
// (nor kubectl's copy of them); one that does not exist is absent, and so
// is every one where the API is not served: the references are then not
// found, as Envoy Gateway would not find them. A reader that may not get
// ClusterTrustBundles gets them in UnreadObjects and Skipped, and the
// references are not judged.
func TestReadClusterTrustBundles(t *testing.T) {
	pemText := testpki.CAPEM(t)
	certBody := strings.Split(pemText, "\n")[1]
	const (
		accepted = "Gateway/g1 Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"
		notFound = "Gateway/g1 Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"
	)
	// check computes the snapshot and compares the policies' ancestors
	// with want, by name.
	check := func(t *testing.T, snap *Snapshot, want map[string]string) {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{Unread: snap.UnreadFunc()})
		for name, w := range want {
			ps := res.PolicyStatus(ref(topology.GatewayGroup, "BackendTLSPolicy", "tls", name))
			if ps == nil || len(ps.Ancestors) != 1 {
				t.Errorf("BackendTLSPolicy tls/%s: status %+v, want one ancestor", name, ps)
				continue
			}
			a := ps.Ancestors[0]
			got := a.Ref.Kind + "/" + a.Ref.Name
			for _, typ := range []string{"Accepted", "ResolvedRefs"} {
				for _, c := range a.Conditions {
					if c.Type == typ {
						got += fmt.Sprintf(" %s=%s/%s", c.Type, c.Status, c.Reason)
					}
				}
			}
			if got != w {
				t.Errorf("BackendTLSPolicy tls/%s: %s, want %s", name, got, w)
			}
		}
	}
	bundles := func(t *testing.T, snap *Snapshot) []*unstructured.Unstructured {
		t.Helper()
		var out []*unstructured.Unstructured
		for _, o := range snap.Objects {
			if o.Object.GetKind() == "ClusterTrustBundle" {
				out = append(out, o.Object)
				if o.Source != "cluster: ClusterTrustBundle bundle" {
					t.Errorf("ClusterTrustBundle %s: Source %q", o.Object.GetName(), o.Source)
				}
			}
		}
		return out
	}

	for _, c := range []struct {
		name, runtimeConfig, version string
	}{
		{"v1", "", "v1"},
		{"v1beta1", "certificates.k8s.io/v1beta1=true,certificates.k8s.io/v1/clustertrustbundles=false", "v1beta1"},
		{"NotServed", "certificates.k8s.io/v1/clustertrustbundles=false", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []testenv.Option{testenv.WithCRDDirectoryPaths(clustertest.GatewayAPICRDs(t)...)}
			if c.runtimeConfig != "" {
				opts = append(opts, testenv.WithAPIServerFlag("runtime-config", c.runtimeConfig))
			}
			env := testenv.Start(t, opts...)
			file := filepath.Join(t.TempDir(), "objects.yaml")
			if err := os.WriteFile(file, []byte(trustBundleObjects(c.version, pemText)), 0o600); err != nil {
				t.Fatal(err)
			}
			clustertest.Apply(t, env.Config, nil, file)

			snap := read(t, env.Config, Options{})
			if len(snap.Skipped) > 0 || len(snap.UnreadObjects) > 0 {
				t.Errorf("Skipped %q, UnreadObjects %v; want none", snap.Skipped, snap.UnreadObjects)
			}
			got := bundles(t, snap)
			if c.version == "" {
				if len(got) > 0 {
					t.Errorf("ClusterTrustBundles read where they are not served: %v", got)
				}
				check(t, snap, map[string]string{"trusted": notFound, "untrusted": notFound})
				return
			}
			if len(got) != 1 || got[0].GetName() != "bundle" {
				t.Fatalf("ClusterTrustBundles read: %v, want bundle only (absent does not exist)", got)
			}
			u := got[0]
			raw, _ := json.Marshal(u.Object)
			if u.GetAPIVersion() != "certificates.k8s.io/"+c.version || u.GetUID() == "" || u.GetResourceVersion() == "" {
				t.Errorf("ClusterTrustBundle bundle: apiVersion %q, uid %q, resourceVersion %q", u.GetAPIVersion(), u.GetUID(), u.GetResourceVersion())
			}
			if spec := fmt.Sprint(u.Object["spec"]); spec != "map[trustBundle:set]" || strings.Contains(string(raw), certBody) {
				t.Errorf("ClusterTrustBundle bundle: %s\nwant spec.trustBundle a placeholder, and no certificate anywhere", raw)
			}
			check(t, snap, map[string]string{"trusted": accepted, "untrusted": notFound})
			if c.version != "v1" {
				return
			}

			t.Run("CannotGet", func(t *testing.T) {
				snap := readAs(t, env, "noor", "reader-without-clustertrustbundles", []string{"namespaces", "services", "configmaps", "secrets"}, []string{"get", "list"})
				wantUnread := []topology.Ref{ref("certificates.k8s.io", "ClusterTrustBundle", "", "absent"), ref("certificates.k8s.io", "ClusterTrustBundle", "", "bundle")}
				if !slices.Equal(snap.UnreadObjects, wantUnread) {
					t.Errorf("UnreadObjects %v, want %v", snap.UnreadObjects, wantUnread)
				}
				wantSkipped := []string{
					"certificates.k8s.io ClusterTrustBundle absent: cannot get (forbidden); the references to it are not judged",
					"certificates.k8s.io ClusterTrustBundle bundle: cannot get (forbidden); the references to it are not judged",
				}
				if !slices.Equal(snap.Skipped, wantSkipped) {
					t.Errorf("Skipped:\n%s\nwant:\n%s", strings.Join(snap.Skipped, "\n"), strings.Join(wantSkipped, "\n"))
				}
				if got := bundles(t, snap); len(got) > 0 {
					t.Errorf("ClusterTrustBundles read without the right to get them: %v", got)
				}
				// Not judged: accepted, without ResolvedRefs.
				check(t, snap, map[string]string{"trusted": "Gateway/g1 Accepted=True/Accepted", "untrusted": "Gateway/g1 Accepted=True/Accepted"})
			})
		})
	}
}

// TestHoldersKeepNoValues: of a ConfigMap or Secret, Read keeps the data
// keys and what the engine reads of the values (holderdata), of a
// ClusterTrustBundle whether its bundle is set; never the values, nor
// kubectl's copy of them in last-applied-configuration (other annotations
// stay).
func TestHoldersKeepNoValues(t *testing.T) {
	const value = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	applied := func(extra map[string]any) map[string]any {
		a := map[string]any{lastApplied: `{"data":{"ca.crt":"` + value + `"}}`}
		maps.Copy(a, extra)
		return a
	}
	for _, c := range []struct {
		name string
		in   *unstructured.Unstructured
		trim func(*unstructured.Unstructured) *unstructured.Unstructured
		want string
	}{
		{"ConfigMap", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "ca", "namespace": "tls", "annotations": applied(map[string]any{"team": "edge"})},
			"data":     map[string]any{"ca.crt": value}, "binaryData": map[string]any{"b": "AAAA"}}},
			keysOnly, `{"apiVersion":"v1","binaryData":{"b":"\u003cread\u003e"},"data":{"ca.crt":"\u003cread\u003e"},"kind":"ConfigMap","metadata":{"annotations":{"attache.dev/holder-facts":"\u003cmark\u003e","team":"edge"},"name":"ca","namespace":"tls"}}`},
		{"Secret", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "ca", "namespace": "tls", "annotations": applied(nil)},
			"data":     map[string]any{"tls.crt": "c2VjcmV0"}, "stringData": map[string]any{"ca.crt": value}}},
			keysOnly, `{"apiVersion":"v1","data":{"tls.crt":"\u003cread\u003e"},"kind":"Secret","metadata":{"annotations":{"attache.dev/holder-facts":"\u003cmark\u003e"},"name":"ca","namespace":"tls"},"stringData":{"ca.crt":"\u003cread\u003e"}}`},
		{"ClusterTrustBundle", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle",
			"metadata": map[string]any{"name": "b", "annotations": applied(nil)},
			"spec":     map[string]any{"trustBundle": value, "signerName": "example.com/s"}}},
			trustBundleOnly, `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"b"},"spec":{"trustBundle":"set"}}`},
		{"EmptyClusterTrustBundle", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "certificates.k8s.io/v1", "kind": "ClusterTrustBundle",
			"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"trustBundle": ""}}},
			trustBundleOnly, `{"apiVersion":"certificates.k8s.io/v1","kind":"ClusterTrustBundle","metadata":{"name":"b"}}`},
	} {
		out := c.trim(c.in)
		if a := out.GetAnnotations(); a[holderdata.MarkAnnotation] != "" {
			a[holderdata.MarkAnnotation] = "<mark>" // this process's
			out.SetAnnotations(a)
		}
		for _, f := range []string{"data", "binaryData", "stringData"} {
			m, _ := out.Object[f].(map[string]any)
			for k, v := range m {
				if !holderdata.Redacted(v) {
					t.Errorf("%s: %s.%s kept as %v", c.name, f, k, v)
				}
				m[k] = "<read>" // what is read of it: a digest, a CRL's validity
			}
		}
		raw, err := json.Marshal(out.Object)
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != c.want {
			t.Errorf("%s: kept\n%s\nwant\n%s", c.name, raw, c.want)
		}
	}
}
