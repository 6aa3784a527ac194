package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// Fields a kind does not support at a target kind (Kind.UnsupportedFields)
// make a policy Invalid there, and not in place: Envoy Gateway rejects
// such a SecurityPolicy on a TCPRoute before it claims the route, so the
// Gateway's or listener's policy still applies to it. A policy setting
// them itself is not attached there (unsupportedOwn); one with a merge
// type whose merged spec would set them takes no part in the folds where
// it would (unmergeUnsupported), and is Invalid for the Gateways of those
// contexts (mergedUnsupported).

// unsupportedOwn says why policy ps may not attach to target at: the
// fields it sets that its kind does not support on at's kind; "" when
// none.
func unsupportedOwn(ps *pstate, at topology.Ref) string {
	u := ps.p.Kind.UnsupportedAt(at.GroupKind())
	if u == nil {
		return ""
	}
	set := u.Set(ps.p.Spec)
	if len(set) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: not supported on %s targets", strings.Join(set, ", "), at.GroupKind().Kind)
}

// unmergeUnsupported finds the layers (of a stack's fold, most general
// first) of a policy with a merge type whose merged spec (the fold of the
// layer with those above it) would set fields its kind does not support at
// its target's kind. Envoy Gateway validates the merged policy and, when
// it fails, leaves the route to the policies above: those layers are
// dropped. It returns the layers kept and, per attachment dropped, the
// fields. A layer merging the policies of one level (merge-disjoint) is
// not judged. Pure: prefold runs it concurrently.
func (d *kindDP) unmergeUnsupported(layers []merge.Layer, atts []*attachment, opts merge.Options) ([]merge.Layer, map[merge.Src][]string) {
	var out map[merge.Src][]string
	for i := range layers {
		a := mergingAttachment(layers, i, atts)
		if a == nil {
			continue
		}
		u := d.kind.UnsupportedAt(a.ref.At.GroupKind())
		if u == nil {
			continue
		}
		r := merge.FoldWith(slices.Clone(layers[:i+1]), opts)
		if r.Tree == nil {
			continue
		}
		if set := u.Set(r.Tree.Object()); len(set) > 0 {
			if out == nil {
				out = map[merge.Src][]string{}
			}
			out[a.id] = set
		}
	}
	if out == nil {
		return layers, nil
	}
	kept := make([]merge.Layer, 0, len(layers)-len(out))
	for _, l := range layers {
		if _, dropped := out[l.Src]; !dropped {
			kept = append(kept, l)
		}
	}
	return kept, out
}

// mergedUnsupported says where attachment a (a policy with a merge type)
// fails in its merge: where it was dropped from the fold because its
// merged spec would set fields its kind does not support there, or where
// its merged spec holds a broken field of a policy above it (mergeBroken):
// per listener (a Gateway's or ListenerSet's section) on the paths of
// those contexts, the message; the zero Ref when a path has none. Nil
// when nowhere. It reads only the targets where the tallies counted one
// (attachment.unsupported, attachment.mergeBroken).
func (c *computation) mergedUnsupported(a *attachment) map[topology.Ref]string {
	if len(a.unsupported)+len(a.mergeBroken) == 0 {
		return nil
	}
	d := c.dps[a.pol.p.Kind]
	if d == nil {
		return nil
	}
	targets := make([]topology.NodeID, 0, len(a.unsupported)+len(a.mergeBroken))
	for n := range a.unsupported {
		targets = append(targets, n)
	}
	for n := range a.mergeBroken {
		if _, dup := a.unsupported[n]; !dup {
			targets = append(targets, n)
		}
	}
	slices.SortFunc(targets, func(x, y topology.NodeID) int { return c.graph.Node(x).Ref.Compare(c.graph.Node(y).Ref) })
	out := map[topology.Ref]string{}
	note := func(r topology.Ref, msg string) {
		if _, seen := out[r]; !seen {
			out[r] = msg
		}
	}
	for _, n := range targets {
		ts := d.targets[n]
		if ts == nil {
			continue
		}
		for i, sr := range ts.stacks {
			if i >= len(ts.eff.Contexts) {
				continue
			}
			var msg string
			if set := sr.unsupported[a.id]; len(set) > 0 {
				msg = fmt.Sprintf("merged (%s) with the policies above it, it would set %s at %s: not supported on %s targets",
					a.pol.p.MergeType, strings.Join(set, ", "), c.graph.Node(n).Ref.Short(), a.ref.At.GroupKind().Kind)
			} else if b, ok := sr.brokenMerge[a.id]; ok {
				outcome := "the merged policy fails"
				if parts := sr.mergeOpen[a.id]; parts != nil {
					outcome = fmt.Sprintf("failing open by the merged policy's flags, %s left out of it and the rest applied", strings.Join(parts, ", "))
				}
				msg = fmt.Sprintf("merged (%s) with the policies above it at %s, it holds %s of %s %s, which its implementation cannot translate (see that policy's status): %s",
					a.pol.p.MergeType, c.graph.Node(n).Ref.Short(), b.field, b.from.pol.p.Ref.Kind, shortName(b.from.pol.p.Ref), outcome)
			} else {
				continue
			}
			ts.eff.Contexts[i].Paths(func(path []topology.Ref) bool {
				found := false
				for _, r := range path {
					if r.IsListener() {
						found = true
						note(r, msg)
					}
				}
				if !found {
					note(topology.Ref{}, msg)
				}
				return true
			})
		}
	}
	return out
}

// badThrough returns the message of bad (see mergedUnsupported) for the
// Gateway ancestor gw (a route's parentRef) when gw names a listener in
// bad; "" otherwise. A parentRef without sectionName stays accepted: its
// listeners in bad are ancestors of their own (badListeners), as Envoy
// Gateway writes them; unless the kind names its ancestors as objects
// (objects: one entry per Gateway), where it takes the message of its
// first listener in bad.
func (c *computation) badThrough(bad map[topology.Ref]string, gw topology.Ref, objects bool) string {
	if gw.IsSection() {
		return bad[gw]
	}
	if !objects {
		return ""
	}
	if ls := badListeners(bad, gw); len(ls) > 0 {
		return bad[ls[0]]
	}
	return ""
}

// badListeners are the listeners of Gateway (or ListenerSet) gw in bad,
// in ref order.
func badListeners(bad map[topology.Ref]string, gw topology.Ref) []topology.Ref {
	var out []topology.Ref
	for r := range bad {
		if r.IsSection() && r.Object() == gw {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b topology.Ref) int { return a.Compare(b) })
	return out
}

// someGatewayFine reports whether, of the Gateway ancestors of target (a
// kind whose ancestors are Gateways), some is not in bad: the policy is
// then accepted, and Invalid for the others only. A path without a
// listener in bad makes it Invalid everywhere.
func (c *computation) someGatewayFine(target topology.Ref, bad map[topology.Ref]string, objects bool) bool {
	if _, everywhere := bad[topology.Ref{}]; everywhere {
		return false
	}
	for _, gw := range c.gatewaysAbove(target) {
		if objects {
			gw = gw.Object()
		}
		if c.badThrough(bad, gw, objects) == "" {
			return true
		}
	}
	return false
}

// firstMsg is the message of bad's first Gateway in ref order.
func firstMsg(bad map[topology.Ref]string) string {
	keys := make([]topology.Ref, 0, len(bad))
	for r := range bad {
		keys = append(keys, r)
	}
	slices.SortFunc(keys, func(a, b topology.Ref) int { return a.Compare(b) })
	return bad[keys[0]]
}
