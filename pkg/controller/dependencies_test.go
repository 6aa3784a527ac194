package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

var gvkDependentPolicy = schema.GroupVersionKind{Group: "dependent.example.com", Version: "v1", Kind: "DependentPolicy"}

// widgetCRD is a CRD of kind Widget of widgets.example.com storing
// version (and, with v1Unserved, keeping v1 unserved): the test's own
// dependency.
func widgetCRD(version string, v1Unserved bool) *unstructured.Unstructured {
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	versions := []any{map[string]any{"name": version, "served": true, "storage": true, "schema": schema}}
	if v1Unserved {
		versions = append(versions, map[string]any{"name": "v1", "served": false, "storage": false, "schema": schema})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.widgets.example.com"},
		"spec": map[string]any{
			"group": "widgets.example.com", "scope": "Namespaced",
			"names":    map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": versions,
		},
	}}
}

// TestDependencyCRDsRecompute: a kind whose implementation needs Widgets
// served at v1 (attache.dev/dependencies, as Kuadrant's kinds need their
// operators' CRDs) has its policy MissingDependency while no CRD serves
// them, accepted once the CRD is installed, and MissingDependency again
// when the CRD serves another version only: each a recomputation the
// CRD's event schedules (the policy does not change).
func TestDependencyCRDsRecompute(t *testing.T) {
	k := newKube(t)
	k.apply("", policyCRD(gvkDependentPolicy, "dependentpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":    "Service",
		policy.AnnotationDependencies: "Widget Operator=Widget.widgets.example.com/v1",
		AnnotationOwnedBy:             testControllerName,
	}))
	defer k.delete(crdGVK, "", "dependentpolicies."+gvkDependentPolicy.Group)
	defer k.delete(crdGVK, "", "widgets.widgets.example.com")
	const ns = "dependency-recompute"
	k.namespace(ns)
	r := startController(t, Options{}, nil)
	k.apply(ns, decodeAll(t, egObjects)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkDependentPolicy.GroupVersion().String(), "kind": gvkDependentPolicy.Kind,
		"metadata": map[string]any{"name": "p"},
		"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}}},
	}})
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvkDependentPolicy, ns, "p", want, "Accepted", "Programmed")
	}
	expect("no Widget CRD", "Service/s1 False/MissingDependency -")
	r.waitIdle(t, 0)
	k.applyCRD(widgetCRD("v1", false))
	expect("Widget CRD installed", "Service/s1 True/Accepted True/Programmed")
	r.waitIdle(t, 0)
	k.applyCRD(widgetCRD("v2", true))
	expect("Widget CRD serving v2 only", "Service/s1 False/MissingDependency -")
}

// TestRequiredObjectsRecompute: a kind whose implementation enforces no
// policy while no Gizmo object exists (attache.dev/required-objects, as
// Kuadrant's kinds need a Kuadrant object) has its policy
// Programmed=False MissingResource before the Gizmo CRD is installed and
// after, Programmed once a Gizmo is created, MissingResource again when
// it is deleted: each a recomputation an event schedules (the Gizmo CRD
// installed later is watched then).
func TestRequiredObjectsRecompute(t *testing.T) {
	k := newKube(t)
	// Kinds of their own: the other tests here delete theirs.
	gvkRequiring := schema.GroupVersionKind{Group: "requiring.example.com", Version: "v1", Kind: "RequiringPolicy"}
	k.apply("", policyCRD(gvkRequiring, "requiringpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":       "Service",
		policy.AnnotationRequiredObjects: "gizmo=Gizmo.gizmos.example.com",
		AnnotationOwnedBy:                testControllerName,
	}))
	gizmoCRD := widgetCRD("v1", false)
	gizmoCRD.SetName("gizmos.gizmos.example.com")
	_ = unstructured.SetNestedField(gizmoCRD.Object, "gizmos.example.com", "spec", "group")
	_ = unstructured.SetNestedStringMap(gizmoCRD.Object, map[string]string{"kind": "Gizmo", "plural": "gizmos"}, "spec", "names")
	defer k.delete(crdGVK, "", "requiringpolicies."+gvkRequiring.Group)
	defer k.delete(crdGVK, "", "gizmos.gizmos.example.com")
	const ns = "required-recompute"
	k.namespace(ns)
	r := startController(t, Options{}, nil)
	k.apply(ns, decodeAll(t, egObjects)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkRequiring.GroupVersion().String(), "kind": gvkRequiring.Kind,
		"metadata": map[string]any{"name": "p"},
		"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}}},
	}})
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvkRequiring, ns, "p", want, "Accepted", "Programmed")
	}
	expect("no Gizmo CRD", "Service/s1 True/Accepted False/MissingResource")
	r.waitIdle(t, 0)
	k.applyCRD(gizmoCRD)
	r.waitIdle(t, 0)
	expect("Gizmo CRD, no Gizmo", "Service/s1 True/Accepted False/MissingResource")
	gizmo := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gizmos.example.com/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "the-gizmo"}, "spec": map[string]any{"size": int64(3)},
	}}
	k.apply(ns, gizmo)
	expect("a Gizmo", "Service/s1 True/Accepted True/Programmed")
	r.waitIdle(t, 0)
	k.delete(schema.GroupVersionKind{Group: "gizmos.example.com", Version: "v1", Kind: "Gizmo"}, ns, "the-gizmo")
	expect("the Gizmo deleted", "Service/s1 True/Accepted False/MissingResource")
}

// requiredSetup creates, under the shipped ClusterRole (plus the rules of
// the test's policy kind, but none on Gizmos) bound to a user of its own,
// a policy kind requiring a Gizmo object, the Gizmo CRD (no Gizmo) and a
// policy p on Service s1 in namespace ns.
func requiredSetup(t *testing.T, ns string) (*kube, schema.GroupVersionKind, *rest.Config) {
	t.Helper()
	gvk := schema.GroupVersionKind{Group: ns + ".example.com", Version: "v1", Kind: "RequiringPolicy"}
	role := shippedRoleWithout(t, "attache-controller-"+ns)
	extra := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "attache-test-" + ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{gvk.Group}, Resources: []string{"requiringpolicies"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{gvk.Group}, Resources: []string{"requiringpolicies/status"}, Verbs: []string{"patch"}},
		}}
	cs := env.Clientset(t)
	for _, r := range []*rbacv1.ClusterRole{role, extra} {
		if _, err := cs.RbacV1().ClusterRoles().Create(context.Background(), r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	user := "system:serviceaccount:attache-system:attache-controller-" + ns
	env.BindClusterRole(t, user, role.Name)
	env.BindClusterRole(t, user, extra.Name)
	k := newKube(t)
	gizmoCRD := widgetCRD("v1", false)
	gizmoCRD.SetName("gizmos." + ns + "-gizmos.example.com")
	_ = unstructured.SetNestedField(gizmoCRD.Object, ns+"-gizmos.example.com", "spec", "group")
	_ = unstructured.SetNestedStringMap(gizmoCRD.Object, map[string]string{"kind": "Gizmo", "plural": "gizmos"}, "spec", "names")
	k.applyCRD(gizmoCRD)
	t.Cleanup(func() { k.delete(crdGVK, "", gizmoCRD.GetName()) })
	k.apply("", policyCRD(gvk, "requiringpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":       "Service",
		policy.AnnotationRequiredObjects: "gizmo=Gizmo." + ns + "-gizmos.example.com",
		AnnotationOwnedBy:                testControllerName,
	}))
	t.Cleanup(func() { k.delete(crdGVK, "", "requiringpolicies."+gvk.Group) })
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
		"metadata": map[string]any{"name": "p"},
		"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}}},
	}})
	return k, gvk, env.UserConfig(t, user)
}

// A controller that may not list the required objects' kind does not
// judge whether one is missing: the policy is programmed, on the leader
// and in the state a replica that does not lead answers the webhook from.
func TestRequiredObjectsForbidden(t *testing.T) {
	k, gvk, cfg := requiredSetup(t, "noreq")
	startController(t, Options{}, cfg)
	waitAncestor(t, k, "not judged on the leader", gvk, "noreq", "p", "Service/s1 True/Accepted True/Programmed", "Accepted", "Programmed")
}

func TestRequiredObjectsForbiddenNonLeader(t *testing.T) {
	_, gvk, cfg := requiredSetup(t, "noreq2")
	holdLease(t, "attache-system", "attache-noreq2-test")
	var a *Admission
	r := startControllerWith(t, Options{}, cfg, func(o *manager.Options) {
		o.LeaderElection, o.LeaderElectionNamespace, o.LeaderElectionID = true, "attache-system", "attache-noreq2-test"
	}, func(c *Controller, _ manager.Manager) {
		var err error
		if a, err = c.Admission(AdmissionOptions{Debounce: 20 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	})
	p := topology.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: "noreq2", Name: "p"}
	waitFor(t, "the replica's own state", func() string {
		res := a.res.Load()
		if res == nil {
			return "none yet"
		}
		ps := policyIn(res, p)
		if ps == nil || len(ps.Ancestors) != 1 {
			return fmt.Sprintf("p: %+v", ps)
		}
		for _, c := range ps.Ancestors[0].Conditions {
			if c.Type == "Programmed" {
				if c.Reason != "Programmed" {
					return "p: " + c.Reason + ": " + c.Message
				}
				return ""
			}
		}
		return "p: no Programmed condition"
	})
	if r.c.leader.Load() || a.shared() {
		t.Fatalf("the replica leads (%v) or shares the controller's state (%v)", r.c.leader.Load(), a.shared())
	}
}
