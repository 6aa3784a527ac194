package engine

import (
	"sort"

	"github.com/attache-dev/attache/pkg/topology"
)

// Match is a context of an effective policy whose paths pass through (or
// end at) a given object or section, with those paths.
type Match struct {
	Effective *Effective
	Context   *Context
	Paths     [][]topology.Ref
}

// ContextsThrough returns the contexts whose paths contain ref. When ref
// names an object (no section), paths through any of its sections count
// too. Matches keep the Result's order. Only the effective targets at or
// below ref in the graph (for a Namespace, below the objects in it) are
// looked at, so a question about a route or a Service costs what is below
// it; paths are enumerated, so it is meant for questions about one object,
// not for whole-cluster sweeps.
func (r *Result) ContextsThrough(ref topology.Ref) []Match {
	type hit struct {
		i int
		m Match
	}
	var hits []hit
	for _, t := range r.below(ref) {
		for _, k := range r.Kinds {
			i, e := r.effectiveIndex(k, t)
			if e == nil {
				continue
			}
			for _, c := range e.Contexts {
				var paths [][]topology.Ref
				c.Paths(func(p []topology.Ref) bool {
					for _, x := range p {
						if x == ref || (!ref.IsSection() && x.Object() == ref) {
							paths = append(paths, append([]topology.Ref(nil), p...))
							break
						}
					}
					return true
				})
				if len(paths) > 0 {
					hits = append(hits, hit{i, Match{Effective: e, Context: c, Paths: paths}})
				}
			}
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].i < hits[b].i })
	out := make([]Match, len(hits))
	for i, h := range hits {
		out[i] = h.m
	}
	return out
}

// below returns the refs of the nodes a path through ref can end at: ref
// (with its sections, for an object) and everything below it; for a
// Namespace, also the objects of that namespace and what is below them
// (a Namespace is placed on paths, not linked by edges).
func (r *Result) below(ref topology.Ref) []topology.Ref {
	g := r.Graph
	if g == nil {
		return nil
	}
	var stack []topology.NodeID
	if id, ok := g.Lookup(ref); ok {
		stack = append(stack, id)
	}
	if ref.GroupKind() == topology.KindNamespace && !ref.IsSection() {
		for n := range g.Len() {
			if g.Node(topology.NodeID(n)).Ref.Namespace == ref.Name {
				stack = append(stack, topology.NodeID(n))
			}
		}
	}
	var out []topology.Ref
	// Along unadmitted edges too: some kinds' paths run there.
	g.Walk(stack, topology.AllChildren, func(_ topology.NodeID, n *topology.Node) bool {
		out = append(out, n.Ref)
		return true
	})
	return out
}

// PolicyStatus returns the status of the policy ref, or nil.
func (r *Result) PolicyStatus(ref topology.Ref) *PolicyStatus {
	for _, p := range r.Policies {
		if p.Policy.Ref == ref {
			return p
		}
	}
	return nil
}
