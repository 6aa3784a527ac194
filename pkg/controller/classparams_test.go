package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

var gvkEnvoyProxy = schema.GroupVersionKind{Group: profiles.EnvoyProxy.Group, Version: "v1alpha1", Kind: profiles.EnvoyProxy.Kind}

// TestCacheTrimsClassParams: the cache's default transform keeps of an
// EnvoyProxy (at any version) what the engine reads, after stripping, and
// after a DefaultTransform of the caller's too; other objects keep their
// spec, and typed objects are left alone.
func TestCacheTrimsClassParams(t *testing.T) {
	envoyProxy := func(version string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.envoyproxy.io/" + version, "kind": "EnvoyProxy",
			"metadata": map[string]any{"name": "p", "namespace": "eg", "uid": "u1", "resourceVersion": "7", "generation": int64(2),
				"labels":        map[string]any{"team": "edge"},
				"annotations":   map[string]any{lastApplied: "{}"},
				"managedFields": []any{map[string]any{"manager": "kubectl"}}},
			"spec":   map[string]any{"mergeGateways": true, "provider": map[string]any{"type": "Kubernetes"}, "concurrency": int64(2)},
			"status": map[string]any{"whatever": "x"},
		}}
	}
	want := func(version string) string {
		return fmt.Sprint(map[string]any{"apiVersion": "gateway.envoyproxy.io/" + version, "kind": "EnvoyProxy",
			"metadata": map[string]any{"name": "p", "namespace": "eg", "uid": "u1", "resourceVersion": "7"},
			"spec":     map[string]any{"mergeGateways": true}})
	}
	forCacheOptions(t, 2, func(name string, opts cache.Options) {
		tr := opts.DefaultTransform
		for _, v := range []string{"v1alpha1", "v1"} {
			out, err := tr(envoyProxy(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(out.(*unstructured.Unstructured).Object); got != want(v) {
				t.Errorf("%s, EnvoyProxy %s: cached\n%s\nwant\n%s", name, v, got, want(v))
			}
		}
	})

	tr := CacheOptions(cache.Options{}).DefaultTransform
	gw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": "g", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":     map[string]any{"gatewayClassName": "eg", "listeners": []any{}},
	}}
	out, err := tr(gw)
	if err != nil {
		t.Fatal(err)
	}
	if u := out.(*unstructured.Unstructured); u.GetManagedFields() != nil || len(u.Object["spec"].(map[string]any)) != 2 {
		t.Errorf("Gateway: cached %v, want its spec and no managedFields", u.Object)
	}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"k": "v"}}
	if out, err := tr(typed); err != nil || out.(*corev1.ConfigMap).Data["k"] != "v" {
		t.Errorf("typed ConfigMap: %v %v, want it untouched", out, err)
	}
}

// TestCacheTrimsNginxProxy: the cache keeps of NGF's NginxProxy the
// telemetry fields its ObservabilityPolicy's requirements read, and
// watches NginxProxies (at their CRD's version) for a kind whose policies
// read data planes, as it does EnvoyProxies.
func TestCacheTrimsNginxProxy(t *testing.T) {
	np := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy",
		"metadata": map[string]any{"name": "p", "namespace": "ngf", "uid": "u1", "resourceVersion": "7", "labels": map[string]any{"team": "edge"}},
		"spec": map[string]any{"kubernetes": map[string]any{"deployment": map[string]any{"replicas": int64(2)}},
			"telemetry": map[string]any{"exporter": map[string]any{"endpoint": "otel:4317", "batchSize": int64(5)}, "disabledFeatures": []any{}}},
	}}
	out, err := CacheOptions(cache.Options{}).DefaultTransform(np)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(map[string]any{"apiVersion": "gateway.nginx.org/v1alpha2", "kind": "NginxProxy",
		"metadata": map[string]any{"name": "p", "namespace": "ngf", "uid": "u1", "resourceVersion": "7"},
		"spec":     map[string]any{"telemetry": map[string]any{"exporter": map[string]any{"endpoint": "otel:4317"}, "disabledFeatures": []any{}}}})
	if got := fmt.Sprint(out.(*unstructured.Unstructured).Object); got != want {
		t.Errorf("cached\n%s\nwant\n%s", got, want)
	}

	c := &Controller{goKinds: map[topology.GroupKind]bool{}}
	obs := topology.GroupKind{Group: "gateway.nginx.org", Kind: "ObservabilityPolicy"}
	crds := map[topology.GroupKind]*crdInfo{
		profiles.NginxProxy: {gk: profiles.NginxProxy, plural: "nginxproxies", version: "v1alpha2", established: true},
		obs:                 {gk: obs, plural: "observabilitypolicies", version: "v1alpha2", established: true, policy: true, dataPlanes: true},
	}
	if w := c.wantedKinds(crds)[profiles.NginxProxy]; w == nil || w.role != roleClassParams || w.resource != "nginxproxies" || w.gvk.Version != "v1alpha2" {
		t.Errorf("NginxProxy watch = %+v, want GatewayClass parameters, nginxproxies at v1alpha2", w)
	}
}

// TestClassParamsWatchedForDataPlaneKinds: EnvoyProxies are watched (at
// their CRD's version) while a policy kind reads data planes and their
// CRD is established; not for other kinds. A kind that reads data planes
// watches ConfigMaps too (the configuration holds the default).
func TestClassParamsWatchedForDataPlaneKinds(t *testing.T) {
	c := &Controller{goKinds: map[topology.GroupKind]bool{}}
	ctp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"}
	btp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "BackendTrafficPolicy"}
	crds := map[topology.GroupKind]*crdInfo{
		profiles.EnvoyProxy: {gk: profiles.EnvoyProxy, plural: "envoyproxies", version: "v1alpha1", established: true},
		btp:                 {gk: btp, plural: "backendtrafficpolicies", version: "v1alpha1", established: true, policy: true},
	}
	if w := c.wantedKinds(crds)[profiles.EnvoyProxy]; w != nil {
		t.Errorf("EnvoyProxy watched without a kind that reads data planes: %+v", w)
	}
	crds[ctp] = &crdInfo{gk: ctp, plural: "clienttrafficpolicies", version: "v1alpha1", established: true, policy: true, dataPlanes: true}
	want := c.wantedKinds(crds)
	if w := want[profiles.EnvoyProxy]; w == nil || w.role != roleClassParams || w.resource != "envoyproxies" || w.gvk != gvkEnvoyProxy {
		t.Errorf("EnvoyProxy watch = %+v, want GatewayClass parameters, envoyproxies at v1alpha1", w)
	}
	crds[profiles.EnvoyProxy].established = false
	if w := c.wantedKinds(crds)[profiles.EnvoyProxy]; w != nil {
		t.Errorf("EnvoyProxy watched before its CRD is established: %+v", w)
	}

	// A Go-registered kind that reads data planes counts too; readCRD
	// finds a profiled one.
	k := &policy.Kind{GroupKind: topology.GroupKind{Group: "x.example", Kind: "PatchPolicy"}, DataPlaneTarget: true}
	crds[profiles.EnvoyProxy].established = true
	delete(crds, ctp)
	c.opts.Kinds = []*policy.Kind{k}
	if w := c.wantedKinds(crds)[profiles.EnvoyProxy]; w == nil {
		t.Error("EnvoyProxy not watched for a Go-registered kind with DataPlaneTarget")
	}
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	for _, o := range modfixtures.CRDs(t, dir, filepath.Join("charts", "gateway-helm", "charts", "crds", "crds", "generated", "gateway.envoyproxy.io_*.yaml")) {
		ci := readCRD(o.Object, true)
		// EnvoyExtensionPolicy: dynamic modules; SecurityPolicy: GeoIP.
		wantDP := ci.gk.Kind == "ClientTrafficPolicy" || ci.gk.Kind == "EnvoyPatchPolicy" || ci.gk.Kind == "EnvoyExtensionPolicy" || ci.gk.Kind == "SecurityPolicy"
		if ci.dataPlanes != wantDP {
			t.Errorf("%s: dataPlanes %v, want %v", ci.gk, ci.dataPlanes, wantDP)
		}
		if wantDP && !slices.Contains(ci.holderKinds, policy.KindConfigMap) {
			t.Errorf("%s: holder kinds %v, want ConfigMap among them", ci.gk, ci.holderKinds)
		}
	}
}

// mergedObjects: GatewayClass merged-eg, whose EnvoyProxy p (in the test's
// namespace) does not merge its Gateways; two Gateways of the class with
// a plain-HTTP listener on port 80 (for hosts of their own: Envoy Gateway
// leaves out a merged listener that repeats an earlier one's host); a
// ClientTrafficPolicy on the first one's listener.
const mergedObjects = `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p}
spec:
  mergeGateways: false
  logging: {level: {default: warn}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: merged-eg}
spec:
  controllerName: gateway.envoyproxy.io/gatewayclass-controller
  parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: p, namespace: %s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: a}
spec:
  gatewayClassName: merged-eg
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: a.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: b}
spec:
  gatewayClassName: merged-eg
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: b.example.com}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: on-a}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: a, sectionName: http}]
  timeout: {http: {idleTimeout: 5s}}
`

// TestMergedGatewaysFollowEnvoyProxy runs the controller under the
// shipped ClusterRole (plus patch on ClientTrafficPolicy status): a
// ClientTrafficPolicy on a listener of one of two Gateways of a class
// with a port-80 listener each is accepted while the class's EnvoyProxy
// does not merge its Gateways, Invalid once an edit of the EnvoyProxy
// alone merges them (the other Gateway's listener shares the port), and
// accepted again when it is edited back. The cache holds the EnvoyProxy
// trimmed. Run under a role that may not read EnvoyProxies, a controller
// does not wait for them: it computes the class as not merged (no
// configuration says otherwise).
func TestMergedGatewaysFollowEnvoyProxy(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("clienttrafficpolicies", "envoyproxies")
	const ns = "merged"
	k.namespace(ns)
	gcGVK := schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "GatewayClass"}
	// The API server is shared: leave no GatewayClass to later tests.
	defer k.delete(gcGVK, "", "merged-eg")
	k.apply(ns, decodeAll(t, fmt.Sprintf(mergedObjects, ns))...)
	ctp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"}
	ctpGVK := schema.GroupVersionKind{Group: ctp.Group, Version: "v1alpha1", Kind: ctp.Kind}

	r := startController(t, Options{OwnedKinds: []topology.GroupKind{ctp}}, classParamsUser(t, true))
	expect := func(what, want, msg string) {
		t.Helper()
		waitFor(t, what, func() string {
			u := k.get(ctpGVK, ns, "on-a")
			if got := ancestorSummary(u, "Accepted"); got != want {
				return got
			}
			if msg == "" {
				return ""
			}
			anc := ancestorsOf(u, testControllerName)
			c := condition(&unstructured.Unstructured{Object: map[string]any{"c": anc[0]["conditions"]}}, "Accepted", "c")
			if m, _ := c["message"].(string); !strings.Contains(m, msg) {
				return "message: " + m
			}
			return ""
		})
	}
	mergedBy := "GatewayClass merged-eg merges its Gateways into one data plane (spec.mergeGateways of EnvoyProxy " + ns + "/p, its parametersRef)"
	expect("EnvoyProxy without merging", "Gateway/a True/Accepted", "")
	r.waitIdle(t, 0)

	if r.c.watchOf(profiles.EnvoyProxy) == nil {
		t.Fatal("EnvoyProxies are not watched")
	}
	// Bounded: a Get of a kind the cache has no informer for starts one
	// and waits for it to sync.
	getCtx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(gvkEnvoyProxy)
	if err := r.c.cache.Get(getCtx, client.ObjectKey{Namespace: ns, Name: "p"}, cached); err != nil {
		t.Fatalf("the EnvoyProxy is not in the controller's cache: %v", err)
	}
	if spec := fmt.Sprint(cached.Object["spec"]); spec != "map[mergeGateways:false]" || cached.GetManagedFields() != nil {
		t.Errorf("cached EnvoyProxy: %v, want spec.mergeGateways only", cached.Object)
	}

	k.patch(gvkEnvoyProxy, ns, "p", `{"spec":{"mergeGateways":true}}`)
	expect("EnvoyProxy merging", "Gateway/a False/Invalid", mergedBy)
	k.patch(gvkEnvoyProxy, ns, "p", `{"spec":{"mergeGateways":false}}`)
	expect("EnvoyProxy without merging again", "Gateway/a True/Accepted", "")
	r.waitIdle(t, 0)

	k.patch(gvkEnvoyProxy, ns, "p", `{"spec":{"mergeGateways":true}}`)
	expect("EnvoyProxy merging, before the restricted controller", "Gateway/a False/Invalid", mergedBy)
	r.stop()
	r = startController(t, Options{OwnedKinds: []topology.GroupKind{ctp}}, classParamsUser(t, false))
	expect("a controller that may not read EnvoyProxies", "Gateway/a True/Accepted", "")
	r.waitIdle(t, 0)
	if w := r.c.watchOf(profiles.EnvoyProxy); w != nil {
		t.Errorf("EnvoyProxies watched without the right to: %+v", w)
	}
}

// classParamsUser is a user bound to deploy/base/clusterrole.yaml (with
// its rule on envoyproxies, or without), plus patch on
// ClientTrafficPolicy status.
func classParamsUser(t *testing.T, envoyProxies bool) *rest.Config {
	return shippedRoleUser(t, "classparams", profiles.EnvoyProxy.Group, "envoyproxies", envoyProxies, "gateway.envoyproxy.io", "clienttrafficpolicies")
}

// shippedRoleUser is a user bound to deploy/base/clusterrole.yaml, with
// its rule on resource of group, or without it (keep false), plus get and
// status patch on policyResource of policyGroup. The shipped role must
// grant list and watch on resource. name tells the users and roles of
// the tests apart.
func shippedRoleUser(t *testing.T, name, group, resource string, keep bool, policyGroup, policyResource string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	cs := env.Clientset(t)
	data, err := os.ReadFile(filepath.Join(deployDir, "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	found := false
	rules := role.Rules[:0]
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
			found = found || slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
			if !keep {
				continue
			}
		}
		rules = append(rules, r)
	}
	if !found {
		t.Errorf("deploy/base/clusterrole.yaml does not grant list and watch on %s %s", group, resource)
	}
	role.Rules = rules
	role.Name = fmt.Sprintf("attache-test-%s-%t", name, keep)
	extra := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "attache-test-" + name + "-status"},
		Rules: []rbacv1.PolicyRule{
			// First a rule without subresource: BindClusterRole waits
			// until the first rule is allowed, dropping its subresource.
			{APIGroups: []string{policyGroup}, Resources: []string{policyResource}, Verbs: []string{"get"}},
			{APIGroups: []string{policyGroup}, Resources: []string{policyResource + "/status"}, Verbs: []string{"patch"}},
		},
	}
	user := fmt.Sprintf("system:serviceaccount:attache-system:attache-%s-%t", name, keep)
	for _, r := range []*rbacv1.ClusterRole{&role, extra} {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		env.BindClusterRole(t, user, r.Name)
	}
	return env.UserConfig(t, user)
}
