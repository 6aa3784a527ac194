package engine

import (
	"slices"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// pathParents returns the parents from which the kind's paths reach node
// n: its parents in the hierarchy; for a route of a kind whose routes hang
// below every listener their parentRefs name (policy.Kind.RouteParentRefs),
// the Gateway listeners among them and its unadmitted parents, none else
// (no ListenerSet, GAMMA Service or delegating rule: Kuadrant's
// policy-machinery links routes to Gateway listeners only).
func (d *kindDP) pathParents(node *topology.Node) []topology.NodeID {
	if !d.kind.RouteParentRefs || node.Ref.IsSection() || !slices.Contains(topology.RouteKinds, node.Ref.GroupKind()) {
		return node.Parents
	}
	out := make([]topology.NodeID, 0, len(node.Parents)+len(node.Unadmitted))
	for _, p := range node.Parents {
		if r := d.c.graph.Node(p).Ref; r.IsSection() && r.GroupKind() == topology.KindGateway {
			out = append(out, p)
		}
	}
	return append(out, node.Unadmitted...)
}

// needsReadiness reports whether some kind reads Gateways' and routes'
// status (readiness): for its paths, or its listeners' attached routes
// or Gateway addresses.
func (c *computation) needsReadiness() bool {
	for _, k := range c.kinds {
		if k.ReadyPathsOnly || slices.Contains(k.EffectiveListeners, policy.ListenerAttachedRoutes) ||
			slices.Contains(k.EffectiveListeners, policy.ListenerAddresses) {
			return true
		}
	}
	return false
}

// needsUnadmitted reports whether some kind follows unadmitted edges
// (topology.Node.Unadmitted), which the graph then holds.
func (c *computation) needsUnadmitted() bool {
	for _, k := range c.kinds {
		if k.RouteParentRefs {
			return true
		}
	}
	return false
}

// readyBelow reports whether route node (below parent p) is ready there,
// for a kind whose paths run only through what is ready
// (policy.Kind.ReadyPathsOnly): any node but a route below a listener is.
func (d *kindDP) readyBelow(p topology.NodeID, node *topology.Node) bool {
	if node.Ref.IsSection() || !slices.Contains(topology.RouteKinds, node.Ref.GroupKind()) {
		return true
	}
	pr := d.c.graph.Node(p).Ref
	if gk := pr.GroupKind(); !pr.IsSection() || (gk != topology.KindGateway && gk != topology.KindListenerSet) {
		return true
	}
	return d.c.ready.routeReady(node.Ref, pr) == ""
}

// routeListeners are the listeners (of Gateways or ListenerSets) from
// which paths of kind k reach the route of ref (a route or one of its
// rules), as pathParents has them.
func (c *computation) routeListeners(k *policy.Kind, ref topology.Ref) []topology.Ref {
	route, ok := c.graph.Lookup(ref.Object())
	if !ok {
		return nil
	}
	d := &kindDP{c: c, kind: k}
	var out []topology.Ref
	for _, p := range d.pathParents(c.graph.Node(route)) {
		pr := c.graph.Node(p).Ref
		if gk := pr.GroupKind(); pr.IsSection() && (gk == topology.KindGateway || gk == topology.KindListenerSet) {
			out = append(out, pr)
		}
	}
	return out
}
