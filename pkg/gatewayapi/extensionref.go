package gatewayapi

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// ExtensionRef is a route rule's filter of type ExtensionRef, as written
// in an unstructured HTTPRoute or GRPCRoute.
type ExtensionRef struct {
	// Rule and Filter are the indexes of the rule in spec.rules and of the
	// filter in its filters.
	Rule, Filter int
	// Target is the object named: its group and kind, the route's
	// namespace (extensionRefs are local) and its name.
	Target topology.Ref
}

// ExtensionRefs lists the ExtensionRef filters of the rules of route u
// (namespace ns), in order. The filters of backendRefs are not read.
// Entries of the wrong shape are skipped: the typed decoding reports them.
func ExtensionRefs(u *unstructured.Unstructured, ns string) []ExtensionRef {
	var out []ExtensionRef
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for i, r := range rules {
		rm, _ := r.(map[string]any)
		filters, _ := rm["filters"].([]any)
		for j, f := range filters {
			fm, _ := f.(map[string]any)
			if t, _ := fm["type"].(string); t != "ExtensionRef" {
				continue
			}
			ext, _ := fm["extensionRef"].(map[string]any)
			group, _ := ext["group"].(string)
			kind, _ := ext["kind"].(string)
			name, _ := ext["name"].(string)
			if kind == "" || name == "" {
				continue
			}
			out = append(out, ExtensionRef{Rule: i, Filter: j, Target: topology.Ref{Group: group, Kind: kind, Namespace: ns, Name: name}})
		}
	}
	return out
}
