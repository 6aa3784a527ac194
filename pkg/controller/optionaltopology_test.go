package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
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

// xlsSetup creates, under a ClusterRole (plus the rules of the test's
// policy kind) bound to a user of its own, a cluster serving XListenerSets
// (Gateway API v1.4.1's experimental CRD) with a Gateway admitting them,
// an XListenerSet under it, and policies of a kind targeting Gateways and
// XListenerSets: on-gw on the Gateway, on-xls on the XListenerSet. It
// returns the policy kind, the namespace and the user's config.
func xlsSetup(t *testing.T, role *rbacv1.ClusterRole, user, ns string) (*kube, schema.GroupVersionKind, *rest.Config) {
	t.Helper()
	ctx := context.Background()
	cs := env.Clientset(t)
	gvk := schema.GroupVersionKind{Group: ns + ".example.com", Version: "v1", Kind: "XlsPolicy"}
	extra := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "attache-test-" + ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{gvk.Group}, Resources: []string{"xlspolicies"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{gvk.Group}, Resources: []string{"xlspolicies/status"}, Verbs: []string{"patch"}},
		}}
	for _, r := range []*rbacv1.ClusterRole{role, extra} {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	env.BindClusterRole(t, user, role.Name)
	env.BindClusterRole(t, user, extra.Name)

	k := newKube(t)
	k.applyFile(filepath.Join(modfixtures.DirAt(t, modfixtures.GatewayAPI, "v1.4.1"), "config", "crd", "experimental", "gateway.networking.x-k8s.io_xlistenersets.yaml"), "")
	t.Cleanup(func() { k.deleteCRD("xlistenersets.gateway.networking.x-k8s.io") })
	k.apply("", policyCRD(gvk, "xlspolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Gateway,XListenerSet.gateway.networking.x-k8s.io",
		AnnotationOwnedBy:          testControllerName,
	}))
	t.Cleanup(func() { k.delete(crdGVK, "", "xlspolicies."+gvk.Group) })
	waitFor(t, "XListenerSets served", func() (s string) {
		defer func() {
			if recover() != nil {
				s = "not yet"
			}
		}()
		k.mapping(gvkXListenerSet)
		return ""
	})
	k.namespace(ns)
	gw := gateway("g")
	gw.Object["spec"].(map[string]any)["allowedListeners"] = map[string]any{"namespaces": map[string]any{"from": "Same"}}
	onXLS := pol(gvk, "on-xls", "XListenerSet", "team", map[string]any{"x": int64(1)})
	onXLS.Object["spec"].(map[string]any)["targetRefs"].([]any)[0].(map[string]any)["group"] = topology.XGatewayGroup
	k.apply(ns, gw, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkXListenerSet.GroupVersion().String(), "kind": gvkXListenerSet.Kind,
		"metadata": map[string]any{"name": "team"},
		"spec": map[string]any{"parentRef": map[string]any{"name": "g"},
			"listeners": []any{map[string]any{"name": "foo", "protocol": "HTTP", "port": int64(8081)}}},
	}}, pol(gvk, "on-gw", "Gateway", "g", map[string]any{"x": int64(1)}), onXLS)
	return k, gvk, env.UserConfig(t, user)
}

var gvkXListenerSet = schema.GroupVersionKind{Group: topology.XGatewayGroup, Version: "v1alpha1", Kind: "XListenerSet"}

// Under the shipped ClusterRole, XListenerSets are watched and written:
// the policy targeting one is accepted and the XListenerSet marked
// affected, nothing is forbidden, and a recomputation writes nothing more.
func TestShippedClusterRoleXListenerSets(t *testing.T) {
	role := shippedRoleWithout(t, "attache-controller-xls")
	k, gvk, cfg := xlsSetup(t, role, "system:serviceaccount:attache-system:attache-controller-xls", "xls")
	const ns = "xls"
	forbidden0 := forbiddenWrites(t)
	r := startController(t, Options{}, cfg)
	waitAncestor(t, k, "the policy on the XListenerSet", gvk, ns, "on-xls", "XListenerSet/team True/Accepted", "Accepted")
	waitFor(t, "the XListenerSet affected", func() string {
		if affected(k.get(gvkXListenerSet, ns, "team"), gvk.Kind) == "" {
			return "not affected"
		}
		return ""
	})
	r.waitIdle(t, 0)
	n0 := r.writes.count()
	r.c.queue.Add(itemRecompute)
	r.waitIdle(t, r.c.computations.Load())
	if w := r.writes.since(n0); len(w) != 0 {
		t.Errorf("writes after a recomputation with nothing changed: %v", w)
	}
	if d := forbiddenWrites(t) - forbidden0; d != 0 {
		t.Errorf("%v writes were forbidden", d)
	}
}

// On a cluster serving XListenerSets (Gateway API's experimental channel
// before v1.5: Gloo Gateway, kgateway), a controller under a ClusterRole
// without the XListenerSet rules (one from before they were added: the
// image upgraded without deploy/ applied again) keeps working without
// them: the policy on the Gateway is written and the Gateway marked
// affected, the policy targeting an XListenerSet is not judged (no
// TargetNotFound entry: its status is left as it is), nothing is
// forbidden, and the computations succeed. Once the rules are granted,
// the controller picks them up by itself (the denial is trusted for
// recheckAccess only) and judges the policy on the XListenerSet.
func TestOptionalTopologyForbidden(t *testing.T) {
	defer func(d time.Duration) { recheckAccess = d }(recheckAccess)
	recheckAccess = 2 * time.Second
	role := shippedRoleWithout(t, "attache-controller-noxls", "xlistenersets", "xlistenersets/status")
	// A user of its own: the bindings of the other tests stay.
	k, gvk, cfg := xlsSetup(t, role, "system:serviceaccount:attache-system:attache-controller-noxls", "noxls")
	const ns = "noxls"
	forbidden0 := forbiddenWrites(t)
	r := startController(t, Options{}, cfg)
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
	if x := k.get(gvkXListenerSet, ns, "team"); affected(x, gvk.Kind) != "" {
		t.Errorf("XListenerSet team marked affected by a controller that may not read it: %v", x.Object["status"])
	}

	// The rules granted (deploy/ applied again): nothing else changes,
	// yet the XListenerSet is read and the policy on it judged.
	full := shippedRoleWithout(t, role.Name)
	cur, err := env.Clientset(t).RbacV1().ClusterRoles().Get(context.Background(), role.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Rules = full.Rules
	if _, err := env.Clientset(t).RbacV1().ClusterRoles().Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAncestor(t, k, "the policy on the XListenerSet, once granted", gvk, ns, "on-xls", "XListenerSet/team True/Accepted", "Accepted")
}

// A replica that does not lead answers the webhook from a state of its
// own, which the controller's list of unread kinds (filled on the leader
// only) says nothing about: under the same old ClusterRole, its state
// leaves the policy targeting an XListenerSet unjudged too, rather than
// TargetNotFound (which the webhook would warn of).
func TestOptionalTopologyForbiddenNonLeader(t *testing.T) {
	role := shippedRoleWithout(t, "attache-controller-noxls2", "xlistenersets", "xlistenersets/status")
	_, gvk, cfg := xlsSetup(t, role, "system:serviceaccount:attache-system:attache-controller-noxls2", "noxls2")
	const ns = "noxls2"
	holdLease(t, "attache-system", "attache-noxls2-test")
	var a *Admission
	r := startControllerWith(t, Options{}, cfg, func(o *manager.Options) {
		o.LeaderElection, o.LeaderElectionNamespace, o.LeaderElectionID = true, "attache-system", "attache-noxls2-test"
	}, func(c *Controller, _ manager.Manager) {
		var err error
		if a, err = c.Admission(AdmissionOptions{Debounce: 20 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	})
	onGW := topology.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: ns, Name: "on-gw"}
	onXLS := topology.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: ns, Name: "on-xls"}
	waitFor(t, "the replica's own state", func() string {
		res := a.res.Load()
		if res == nil {
			return "none yet"
		}
		if ps := policyIn(res, onGW); ps == nil || len(ps.Ancestors) != 1 || ps.Ancestors[0].Conditions[0].Reason != "Accepted" {
			return fmt.Sprintf("on-gw: %+v", ps)
		}
		return ""
	})
	if r.c.leader.Load() || a.shared() {
		t.Fatalf("the replica leads (%v) or shares the controller's state (%v)", r.c.leader.Load(), a.shared())
	}
	ps := policyIn(a.res.Load(), onXLS)
	if ps == nil {
		t.Fatal("on-xls: not in the replica's state")
	}
	if len(ps.Ancestors) != 0 || len(ps.UnreadTargets) != 1 {
		t.Errorf("on-xls: ancestors %+v, unread targets %v; want none and the XListenerSet (not judged)", ps.Ancestors, ps.UnreadTargets)
	}
	if !a.unreadKind(topology.KindXListenerSet) {
		t.Error("the replica does not count XListenerSets as unread")
	}
}

// policyIn returns the status of policy p in res, nil if res has none.
func policyIn(res *engine.Result, p topology.Ref) *engine.PolicyStatus {
	for _, ps := range res.Policies {
		if ps.Policy.Ref == p {
			return ps
		}
	}
	return nil
}
