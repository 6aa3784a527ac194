package gatewayapi

import "github.com/attache-dev/attache/pkg/topology"

// ParentRefOf reads a Gateway API ParentReference as written in an
// unstructured object (a route's spec.parentRefs entry, or a
// PolicyAncestorStatus ancestorRef): group (when absent,
// gateway.networking.k8s.io; an explicit "" is the core group), kind
// (default Gateway), namespace (default ns), name and sectionName. Fields
// of the wrong type are ignored: the typed decoding reports them.
func ParentRefOf(m map[string]any, ns string) topology.Ref {
	r := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: ns}
	if s, ok := m["group"].(string); ok {
		r.Group = s
	}
	if s, ok := m["kind"].(string); ok && s != "" {
		r.Kind = s
	}
	if s, ok := m["namespace"].(string); ok && s != "" {
		r.Namespace = s
	}
	r.Name, _ = m["name"].(string)
	r.SectionName, _ = m["sectionName"].(string)
	return r
}
