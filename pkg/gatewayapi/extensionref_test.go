package gatewayapi

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// TestExtensionRefs: the ExtensionRef filters of a route's rules, in
// order, with the route's namespace; other filter types, backendRefs'
// filters and entries of the wrong shape are left out without a panic.
func TestExtensionRefs(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"rules": []any{
		map[string]any{"filters": []any{
			map[string]any{"type": "RequestHeaderModifier"},
			map[string]any{"type": "ExtensionRef", "extensionRef": map[string]any{"group": "g.example", "kind": "K", "name": "a"}},
			"not a map",
			map[string]any{"type": "ExtensionRef", "extensionRef": "not a map"},
			map[string]any{"type": "ExtensionRef", "extensionRef": map[string]any{"kind": "K"}},
		}},
		"not a map",
		map[string]any{"filters": "not a list", "backendRefs": []any{map[string]any{"filters": []any{
			map[string]any{"type": "ExtensionRef", "extensionRef": map[string]any{"group": "g.example", "kind": "K", "name": "backend"}},
		}}}},
		map[string]any{"filters": []any{
			map[string]any{"type": "ExtensionRef", "extensionRef": map[string]any{"group": "", "kind": "K", "name": "b", "namespace": "ignored"}},
		}},
	}}}}
	got := ExtensionRefs(u, "ns")
	want := []ExtensionRef{
		{Rule: 0, Filter: 1, Target: topology.Ref{Group: "g.example", Kind: "K", Namespace: "ns", Name: "a"}},
		{Rule: 3, Filter: 0, Target: topology.Ref{Kind: "K", Namespace: "ns", Name: "b"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := ExtensionRefs(&unstructured.Unstructured{Object: map[string]any{"spec": "x"}}, "ns"); got != nil {
		t.Errorf("a spec that is not a map: %+v", got)
	}
}
