package engine

import "github.com/attache-dev/attache/pkg/topology"

// Match is a context of an effective policy whose paths pass through (or
// end at) a given object or section, with those paths.
type Match struct {
	Effective *Effective
	Context   *Context
	Paths     [][]topology.Ref
}

// ContextsThrough returns the contexts whose paths contain ref. When ref
// names an object (no section), paths through any of its sections count
// too. Matches keep the Result's order. It enumerates paths, so it is meant
// for interactive questions, not for whole-cluster sweeps.
func (r *Result) ContextsThrough(ref topology.Ref) []Match {
	var out []Match
	for _, e := range r.Effective {
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
				out = append(out, Match{Effective: e, Context: c, Paths: paths})
			}
		}
	}
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
