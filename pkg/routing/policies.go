package routing

import (
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// EffectivePolicy is the effective policy of one kind for one target on
// the request's context, with its provenance: an EFFECTIVE entry of
// `attache effective` (docs/output.md).
type EffectivePolicy struct {
	PolicyKind string `json:"policyKind"`
	// Target is the effective target, on the request's path.
	Target topology.Ref `json:"target"`
	// Path is the context's path as the engine has it (Namespaces placed,
	// levels outside the kind's hierarchy left out).
	Path    []topology.Ref `json:"path"`
	Spec    map[string]any `json:"spec"`
	Sources report.Sources `json:"sources"`
	Errors  []string       `json:"errors,omitempty"`

	// Kind and Context are the engine's, for printers.
	Kind    *policy.Kind    `json:"-"`
	Context *engine.Context `json:"-"`
}

// Policies finds the effective policies on a request's context in an
// engine result, by effective target: a lookup per level of the path.
type Policies struct {
	byTarget map[topology.Ref][]*engine.Effective
}

// NewPolicies indexes the effective policies of res by target.
func NewPolicies(res *engine.Result) *Policies {
	p := &Policies{byTarget: make(map[topology.Ref][]*engine.Effective, len(res.Effective))}
	for _, e := range res.Effective {
		p.byTarget[e.Target] = append(p.byTarget[e.Target], e)
	}
	return p
}

// AddPolicies fills the EffectivePolicies of every outcome of t: for each
// level of the request's path (of each path through a valid backend) that
// is an effective target of some policy kind, the context of that kind
// whose path is the request's, as the engine computed it. A policy on
// another rule or listener is on no such context, so it does not appear.
func (p *Policies) AddPolicies(t *RequestTrace) {
	for i := range t.Outcomes {
		o := &t.Outcomes[i]
		paths := o.backendPaths
		if len(paths) == 0 && len(o.Path) > 0 {
			paths = [][]topology.Ref{o.Path}
		}
		seen := map[*engine.Context]bool{}
		for _, path := range paths {
			for n := range path {
				for _, e := range p.byTarget[path[n]] {
					c, cp := contextOn(e, path[:n+1])
					if c == nil || seen[c] {
						continue
					}
					seen[c] = true
					o.EffectivePolicies = append(o.EffectivePolicies, EffectivePolicy{
						PolicyKind: e.Kind.String(), Target: e.Target, Path: cp, Spec: c.Spec,
						Sources: report.SourcesOf(c), Errors: c.Errors, Kind: e.Kind, Context: c,
					})
				}
			}
		}
	}
}

// contextOn returns the context of e whose path is path (root to e's
// target): the engine's paths leave out the levels outside the kind's
// hierarchy and add Namespaces, so both are compared without them. A
// Direct kind's context is its target alone.
func contextOn(e *engine.Effective, path []topology.Ref) (*engine.Context, []topology.Ref) {
	var want []topology.Ref
	for _, r := range path {
		if e.Kind.InHierarchy(r.GroupKind()) {
			want = append(want, r)
		}
	}
	for _, c := range e.Contexts {
		var found []topology.Ref
		c.Paths(func(p []topology.Ref) bool {
			if samePath(p, want) || e.Kind.Class == policy.Direct && len(p) == 1 && p[0] == e.Target {
				found = append([]topology.Ref(nil), p...)
				return false
			}
			return true
		})
		if found != nil {
			return c, found
		}
	}
	return nil, nil
}

// samePath reports whether the engine's path p, without its Namespace
// levels, is want.
func samePath(p, want []topology.Ref) bool {
	i := 0
	for _, r := range p {
		if r.GroupKind() == topology.KindNamespace && !r.IsSection() {
			continue
		}
		if i >= len(want) || want[i] != r {
			return false
		}
		i++
	}
	return i == len(want)
}
