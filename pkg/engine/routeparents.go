package engine

import (
	"iter"
	"slices"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// pathParents returns the parents from which the paths of kind k reach
// node n: its parents in the hierarchy; for a route of a kind whose routes
// hang below every listener their parentRefs name
// (policy.Kind.RouteParentRefs), the Gateway listeners among them and its
// unadmitted parents, none else (no ListenerSet, GAMMA Service or
// delegating rule: Kuadrant's policy-machinery links routes to Gateway
// listeners only), as routeParentsOf keeps them.
func (c *computation) pathParents(k *policy.Kind, n topology.NodeID, node *topology.Node) []topology.NodeID {
	if !k.RouteParentRefs || !isRouteObject(node.Ref) {
		return node.Parents
	}
	return c.routeParentsOf(n)
}

// isRouteObject reports whether r is a route (not one of its rules).
func isRouteObject(r topology.Ref) bool {
	return !r.IsSection() && slices.Contains(topology.RouteKinds, r.GroupKind())
}

// routeParentIndex holds, for every route node of a graph, its Gateway
// listener parents followed by its unadmitted parents, in one array: the
// parents of the paths of RouteParentRefs kinds, the same for every such
// kind and for as long as the graph is (an Incremental keeps it).
type routeParentIndex struct {
	// off: node n's parents are ids[off[n]:off[n+1]].
	off []int32
	ids []topology.NodeID
}

// routeParentsOf returns the Gateway listener and unadmitted parents of
// route node n (routeParentIndex), indexing the graph on first use. The
// slice is shared: callers must not modify it.
func (c *computation) routeParentsOf(n topology.NodeID) []topology.NodeID {
	x := c.routeParentIdx
	if x == nil {
		g := c.graph
		x = &routeParentIndex{off: make([]int32, g.Len()+1)}
		// Two passes: count, then fill an array of the exact size.
		for pass := range 2 {
			if pass == 1 {
				x.ids = make([]topology.NodeID, 0, x.off[g.Len()])
			}
			count := int32(0)
			for i := range g.Len() {
				node := g.Node(topology.NodeID(i))
				if isRouteObject(node.Ref) {
					for _, p := range node.Parents {
						if r := g.Node(p).Ref; r.IsSection() && r.GroupKind() == topology.KindGateway {
							count++
							if pass == 1 {
								x.ids = append(x.ids, p)
							}
						}
					}
					count += int32(len(node.Unadmitted))
					if pass == 1 {
						x.ids = append(x.ids, node.Unadmitted...)
					}
				}
				x.off[i+1] = count
			}
		}
		c.routeParentIdx = x
	}
	lo, hi := x.off[n], x.off[n+1]
	return x.ids[lo:hi:hi]
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
	if !isRouteObject(node.Ref) {
		return true
	}
	pr := d.c.graph.Node(p).Ref
	if !pr.IsListener() {
		return true
	}
	return d.c.ready.routeReady(node.Ref, pr) == ""
}

// routeListeners yields the listeners (of Gateways or ListenerSets) from
// which paths of kind k reach the route of ref (a route or one of its
// rules), as pathParents has them.
func (c *computation) routeListeners(k *policy.Kind, ref topology.Ref) iter.Seq[topology.Ref] {
	return func(yield func(topology.Ref) bool) {
		route, ok := c.graph.Lookup(ref.Object())
		if !ok {
			return
		}
		for _, p := range c.pathParents(k, route, c.graph.Node(route)) {
			if pr := c.graph.Node(p).Ref; pr.IsListener() && !yield(pr) {
				return
			}
		}
	}
}
