package gatewayapi

import (
	"github.com/attache-dev/attache/pkg/topology"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

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

// ParentOf is the object a route's typed parentRef p names, without its
// section: group (nil: gateway.networking.k8s.io; an explicit "" is the
// core group, GAMMA Service parents), kind (default Gateway), namespace
// (default ns, the route's) and name.
func ParentOf(ns string, p gwv1.ParentReference) topology.Ref {
	r := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: ns, Name: string(p.Name)}
	if p.Group != nil {
		r.Group = string(*p.Group)
	}
	if p.Kind != nil && *p.Kind != "" {
		r.Kind = string(*p.Kind)
	}
	if p.Namespace != nil && *p.Namespace != "" {
		r.Namespace = string(*p.Namespace)
	}
	return r
}

// BackendOf is the object a backendRef br of a route in namespace ns
// names: group (default core), kind (default Service), namespace (default
// ns) and name.
func BackendOf(ns string, br gwv1.BackendObjectReference) topology.Ref {
	r := topology.Ref{Group: topology.CoreGroup, Kind: "Service", Namespace: ns, Name: string(br.Name)}
	if br.Group != nil {
		r.Group = string(*br.Group)
	}
	if br.Kind != nil && *br.Kind != "" {
		r.Kind = string(*br.Kind)
	}
	if br.Namespace != nil && *br.Namespace != "" {
		r.Namespace = string(*br.Namespace)
	}
	return r
}
