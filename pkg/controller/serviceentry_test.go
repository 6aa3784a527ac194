package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// TestCacheTrimsServiceEntries: the cache keeps of an Istio ServiceEntry
// (at any version) its identifying metadata and labels only, and of its
// annotations a canary waypoint's weight, after a
// DefaultTransform of the caller's too; a ServiceEntry of another group is
// left alone.
func TestCacheTrimsServiceEntries(t *testing.T) {
	entry := func(apiVersion string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": "ServiceEntry",
			"metadata": map[string]any{"name": "ext", "namespace": "mesh", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
				"creationTimestamp": "2026-11-01T00:00:00Z",
				"labels":            map[string]any{"istio.io/use-waypoint": "waypoint"},
				"annotations":       map[string]any{lastApplied: "{}", "team": "edge", "istio.io/use-waypoint-canary-weight": "20"},
				"managedFields":     []any{map[string]any{"manager": "kubectl"}}},
			"spec":   map[string]any{"hosts": []any{"ext.example.com"}, "endpoints": []any{map[string]any{"address": "10.0.0.1"}}},
			"status": map[string]any{"conditions": []any{}},
		}}
	}
	want := func(apiVersion string) string {
		return fmt.Sprint(map[string]any{"apiVersion": apiVersion, "kind": "ServiceEntry",
			"metadata": map[string]any{"name": "ext", "namespace": "mesh", "uid": "u1", "resourceVersion": "7",
				"creationTimestamp": "2026-11-01T00:00:00Z", "labels": map[string]any{"istio.io/use-waypoint": "waypoint"},
				"annotations": map[string]any{"istio.io/use-waypoint-canary-weight": "20"}}})
	}
	forCacheOptions(t, 2, func(name string, opts cache.Options) {
		tr := opts.DefaultTransform
		for _, v := range []string{"networking.istio.io/v1", "networking.istio.io/v1beta1"} {
			out, err := tr(entry(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(out.(*unstructured.Unstructured).Object); got != want(v) {
				t.Errorf("%s, %s: cached\n%s\nwant\n%s", name, v, got, want(v))
			}
		}
	})
	other := entry("example.com/v1")
	out, err := TransformServiceEntry(other)
	if err != nil || out.(*unstructured.Unstructured).Object["spec"] == nil {
		t.Errorf("example.com ServiceEntry: %v %v, want its spec kept", out, err)
	}
}

// TestCacheTrimsRequiredObjects: the cache keeps of a Kuadrant object (a
// kind the profiled kinds require, at any version) its identifying
// metadata with the generation and deletion timestamp only, after a DefaultTransform of
// the caller's too; another kind named Kuadrant is left alone.
func TestCacheTrimsRequiredObjects(t *testing.T) {
	obj := func(apiVersion string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": "Kuadrant",
			"metadata": map[string]any{"name": "kuadrant", "namespace": "kuadrant-system", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
				"creationTimestamp": "2026-11-01T00:00:00Z", "deletionTimestamp": "2026-12-01T00:00:00Z",
				"labels": map[string]any{"app": "kuadrant"}, "annotations": map[string]any{lastApplied: "{}"}, "finalizers": []any{"x"}},
			"spec":   map[string]any{"observability": map[string]any{"enable": true}},
			"status": map[string]any{"conditions": []any{}},
		}}
	}
	want := func(apiVersion string) string {
		return fmt.Sprint(map[string]any{"apiVersion": apiVersion, "kind": "Kuadrant",
			"metadata": map[string]any{"name": "kuadrant", "namespace": "kuadrant-system", "uid": "u1", "resourceVersion": "7", "generation": int64(3),
				"creationTimestamp": "2026-11-01T00:00:00Z", "deletionTimestamp": "2026-12-01T00:00:00Z"}})
	}
	forCacheOptions(t, 2, func(name string, opts cache.Options) {
		for _, v := range []string{"kuadrant.io/v1beta1", "kuadrant.io/v1"} {
			out, err := opts.DefaultTransform(obj(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(out.(*unstructured.Unstructured).Object); got != want(v) {
				t.Errorf("%s, %s: cached\n%s\nwant\n%s", name, v, got, want(v))
			}
		}
	})
	if out, err := TransformRequired(obj("example.com/v1")); err != nil || out.(*unstructured.Unstructured).Object["spec"] == nil {
		t.Errorf("example.com Kuadrant: %v %v, want its spec kept", out, err)
	}
}
