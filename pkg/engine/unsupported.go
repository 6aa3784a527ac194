package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// unsupportedAt says why a's policy is Invalid at a's target because of
// fields its kind does not support there: those it sets itself, or, with a
// merge type, those of the spec it merges into (the effective spec of a
// context it reaches through a), as Envoy Gateway validates the merged
// policy too. "" when there are none. The policy keeps its place there
// (Envoy Gateway claims the target, then fails to translate it).
func (c *computation) unsupportedAt(a *attachment) string {
	k := a.pol.p.Kind
	u := k.UnsupportedAt(a.ref.At.GroupKind())
	if u == nil {
		return ""
	}
	at := a.ref.At.GroupKind().Kind
	if set := u.Set(a.pol.p.Spec); len(set) > 0 {
		return fmt.Sprintf("%s: not supported on %s targets", strings.Join(set, ", "), at)
	}
	if a.pol.p.MergeType == "" || len(a.affects) == 0 {
		return ""
	}
	d := c.dps[k]
	if d == nil {
		return ""
	}
	targets := make([]topology.NodeID, 0, len(a.affects))
	for n := range a.affects {
		targets = append(targets, n)
	}
	slices.Sort(targets) // the first in node order names the fields
	for _, n := range targets {
		ts := d.dpTarget(n)
		if ts == nil {
			continue
		}
		for _, sr := range ts.stacks {
			if set := sr.unsupported[a.id]; len(set) > 0 {
				return fmt.Sprintf("merged (%s) with the policies above it, it would set %[3]s at %[2]s: not supported on %[4]s targets",
					a.pol.p.MergeType, c.graph.Node(n).Ref.Short(), strings.Join(set, ", "), at)
			}
		}
	}
	return ""
}

// unmergeUnsupported finds the layers (of a stack's fold, most general
// first) that merge up (a merge type) and whose merged spec would set
// fields their kind does not support at their target's kind: the policy
// is Invalid there and keeps its place (unsupportedAt), so it replaces the
// layers above instead of merging (Envoy Gateway fails the merged policy,
// and the policy above is overridden for that route). It clears their
// MergeUp and returns, per attachment whose own spec is fine, the fields
// the merge would have brought. Pure: prefold runs it concurrently.
func (d *kindDP) unmergeUnsupported(layers []merge.Layer, atts []*attachment, opts merge.Options) map[merge.Src][]string {
	var out map[merge.Src][]string
	for i := range layers {
		if layers[i].MergeUp == "" {
			continue
		}
		j := slices.IndexFunc(atts, func(a *attachment) bool { return a.id == layers[i].Src })
		if j < 0 {
			continue
		}
		a := atts[j]
		u := d.kind.UnsupportedAt(a.ref.At.GroupKind())
		if u == nil {
			continue
		}
		if len(u.Set(a.pol.p.Spec)) > 0 {
			layers[i].MergeUp = "" // Invalid on its own (unsupportedAt)
			continue
		}
		r := merge.FoldWith(slices.Clone(layers[:i+1]), opts)
		if r.Tree == nil {
			continue
		}
		if set := u.Set(r.Tree.Object()); len(set) > 0 {
			layers[i].MergeUp = ""
			if out == nil {
				out = map[merge.Src][]string{}
			}
			out[a.id] = set
		}
	}
	return out
}

// noteUnsupported records, once per policy and field, the input problem
// of fields ps sets that its kind does not support at target at.
func (c *computation) noteUnsupported(ps *pstate, at topology.Ref) {
	u := ps.p.Kind.UnsupportedAt(at.GroupKind())
	if u == nil {
		return
	}
	set := u.Set(ps.p.Spec)
	if len(set) == 0 {
		return
	}
	msg := fmt.Sprintf("not supported on %s targets (%s)", at.GroupKind().Kind, at.Short())
	if len(set) > 1 {
		msg += "; nor are " + strings.Join(set[1:], ", ")
	}
	prob := diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref], Field: set[0], Message: msg}
	if !slices.ContainsFunc(ps.targetProblems, func(p diag.Problem) bool { return p.Object == prob.Object && p.Field == prob.Field }) {
		ps.targetProblems = append(ps.targetProblems, prob)
	}
}
