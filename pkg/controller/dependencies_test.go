package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/attache-dev/attache/pkg/policy"
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
// policy while no Widget object exists (attache.dev/required-objects, as
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
