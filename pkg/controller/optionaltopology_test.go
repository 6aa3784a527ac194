package controller

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/topology"
)

// shippedRoleWithout is deploy/base/clusterrole.yaml without the rules
// naming any of resources, under another name: the ClusterRole of a
// release from before those rules, or a custom one.
func shippedRoleWithout(t *testing.T, name string, resources ...string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir, "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	role.Name = name
	rules := role.Rules[:0]
	for _, r := range role.Rules {
		if !slices.ContainsFunc(r.Resources, func(res string) bool { return slices.Contains(resources, res) }) {
			rules = append(rules, r)
		}
	}
	role.Rules = rules
	return &role
}

// On a cluster serving XListenerSets (Gateway API's experimental channel
// before v1.5: Gloo Gateway, kgateway), a controller under a ClusterRole
// without the XListenerSet rules (one from before they were added: the
// image upgraded without deploy/ applied again) keeps working without
// them: the policy on the Gateway is written and the Gateway marked
// affected, the policy targeting an XListenerSet is not judged (no
// TargetNotFound entry: its status is left as it is), nothing is
// forbidden, and the computations succeed.
func TestOptionalTopologyForbidden(t *testing.T) {
	ctx := context.Background()
	cs := env.Clientset(t)
	gvk := schema.GroupVersionKind{Group: "noxls.example.com", Version: "v1", Kind: "NoXlsPolicy"}
	role := shippedRoleWithout(t, "attache-controller-noxls", "xlistenersets", "xlistenersets/status")
	extra := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "attache-test-noxlspolicies"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{gvk.Group}, Resources: []string{"noxlspolicies"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{gvk.Group}, Resources: []string{"noxlspolicies/status"}, Verbs: []string{"patch"}},
		}}
	for _, r := range []*rbacv1.ClusterRole{role, extra} {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// A user of its own: the bindings of the other tests stay.
	const user = "system:serviceaccount:attache-system:attache-controller-noxls"
	env.BindClusterRole(t, user, role.Name)
	env.BindClusterRole(t, user, extra.Name)

	k := newKube(t)
	k.applyFile(filepath.Join(modfixtures.DirAt(t, modfixtures.GatewayAPI, "v1.4.1"), "config", "crd", "experimental", "gateway.networking.x-k8s.io_xlistenersets.yaml"), "")
	defer k.delete(crdGVK, "", "xlistenersets.gateway.networking.x-k8s.io")
	k.apply("", policyCRD(gvk, "noxlspolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Gateway,XListenerSet.gateway.networking.x-k8s.io",
		AnnotationOwnedBy:          testControllerName,
	}))
	defer k.delete(crdGVK, "", "noxlspolicies."+gvk.Group)
	gvkXLS := schema.GroupVersionKind{Group: topology.XGatewayGroup, Version: "v1alpha1", Kind: "XListenerSet"}
	waitFor(t, "XListenerSets served", func() (s string) {
		defer func() {
			if recover() != nil {
				s = "not yet"
			}
		}()
		k.mapping(gvkXLS)
		return ""
	})
	const ns = "noxls"
	k.namespace(ns)
	gw := gateway("g")
	gw.Object["spec"].(map[string]any)["allowedListeners"] = map[string]any{"namespaces": map[string]any{"from": "Same"}}
	onXLS := pol(gvk, "on-xls", "XListenerSet", "team", map[string]any{"x": int64(1)})
	onXLS.Object["spec"].(map[string]any)["targetRefs"].([]any)[0].(map[string]any)["group"] = topology.XGatewayGroup
	k.apply(ns, gw, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkXLS.GroupVersion().String(), "kind": gvkXLS.Kind,
		"metadata": map[string]any{"name": "team"},
		"spec": map[string]any{"parentRef": map[string]any{"name": "g"},
			"listeners": []any{map[string]any{"name": "foo", "protocol": "HTTP", "port": int64(8081)}}},
	}}, pol(gvk, "on-gw", "Gateway", "g", map[string]any{"x": int64(1)}), onXLS)

	forbidden0 := forbiddenWrites(t)
	r := startController(t, Options{}, env.UserConfig(t, user))
	waitAncestor(t, k, "the policy on the Gateway", gvk, ns, "on-gw", "Gateway/g True/Accepted", "Accepted")
	waitFor(t, "the Gateway affected", func() string {
		if affected(k.get(gvkGateway, ns, "g"), gvk.Kind) == "" {
			return "not affected"
		}
		return ""
	})
	r.waitIdle(t, 0)
	if n := r.c.queue.NumRequeues(itemRecompute); n != 0 {
		t.Errorf("the last recomputation failed (%d retries)", n)
	}
	if st := k.get(gvk, ns, "on-xls").Object["status"]; st != nil {
		t.Errorf("on-xls: status %v, want none (not judged)", st)
	}
	if d := forbiddenWrites(t) - forbidden0; d != 0 {
		t.Errorf("%v writes were forbidden", d)
	}
	r.c.mu.Lock()
	unread := r.c.unreadKinds[topology.KindXListenerSet]
	r.c.mu.Unlock()
	if !unread || r.c.watchOf(topology.KindXListenerSet) != nil {
		t.Errorf("XListenerSet: unread %v, watch %v; want unread and not watched", unread, r.c.watchOf(topology.KindXListenerSet))
	}
	if x := k.get(gvkXLS, ns, "team"); affected(x, gvk.Kind) != "" {
		t.Errorf("XListenerSet team marked affected by a controller that may not read it: %v", x.Object["status"])
	}
}
