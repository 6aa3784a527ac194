package engine

import (
	"github.com/attache-dev/attache/pkg/topology"
)

// gatewaySectionLevel returns the level of the listener of the Gateway
// above ListenerSet listener node (a section of a ListenerSet kind in the
// hierarchy) that bears the same name, and the level of that ListenerSet,
// when the kind reaches ListenerSet listeners by the Gateway's section
// names (policy.Kind.GatewaySectionsByName) and policies of the kind
// attach to that Gateway listener; ok is false otherwise. Gloo Gateway
// matches a Gateway option's sectionName against every listener's name,
// its XListenerSets' included (GetPrioritizedListenerPolicies).
func (d *kindDP) gatewaySectionLevel(node *topology.Node) (gwSec, ls level, ok bool) {
	if !d.kind.GatewaySectionsByName || !node.Ref.IsSection() || !topology.IsListenerSet(node.Ref.GroupKind()) {
		return 0, 0, false
	}
	g := d.c.graph
	lsID, found := g.Lookup(node.Ref.Object())
	if !found {
		return 0, 0, false
	}
	for _, p := range g.Node(lsID).Parents {
		gw := g.Node(p).Ref
		if gw.GroupKind() != topology.KindGateway || gw.IsSection() {
			continue
		}
		if sec, found := g.Lookup(gw.WithSection(node.Ref.SectionName)); found && len(d.atNode[sec]) > 0 {
			return level(sec), level(lsID), true
		}
	}
	return 0, 0, false
}

// spliceBefore returns stack s with level l inserted before level before,
// or at its end when s does not hold before.
func (d *kindDP) spliceBefore(s stackID, before, l level) stackID {
	var out stackID
	done := false
	for _, lv := range d.trie.levels(s) {
		if !done && lv == before {
			out, done = d.trie.extend(out, l), true
		}
		out = d.trie.extend(out, lv)
	}
	if !done {
		out = d.trie.extend(out, l)
	}
	return out
}

// listenerSetSections returns, for a Gateway listener node n, the
// listeners of the same name of the ListenerSets below its Gateway: the
// nodes whose stacks hold n's level when the kind reaches ListenerSet
// listeners by section names (gatewaySectionLevel).
func (d *kindDP) listenerSetSections(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	if !d.kind.GatewaySectionsByName || !ref.IsSection() || ref.GroupKind() != topology.KindGateway {
		return nil
	}
	gwID, ok := g.Lookup(ref.Object())
	if !ok {
		return nil
	}
	var out []topology.NodeID
	for _, ch := range g.Node(gwID).Children {
		if r := g.Node(ch).Ref; topology.IsListenerSet(r.GroupKind()) && !r.IsSection() {
			if sec, ok := g.Lookup(r.WithSection(ref.SectionName)); ok {
				out = append(out, sec)
			}
		}
	}
	return out
}
