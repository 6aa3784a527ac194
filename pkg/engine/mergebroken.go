package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// A policy with a merge type merges with the policy above it, and its
// implementation translates the merged policy: when that holds a field of
// the policy above that fails its translation (a reference that does not
// resolve, a value out of range: attachment.broken), the merged policy
// fails too, and Envoy Gateway says so at each listener the route is
// attached through (Accepted=False, Invalid), while the route's requests
// get the 500 of the policy above (which keeps its place). Unlike fields
// its kind does not support (unmergeUnsupported), the merging policy stays
// in the fold: what the route gets is what the merge holds.

// brokenField is a broken field of the policy above that a merge holds.
type brokenField struct {
	from  *attachment
	field string
}

// mergeBroken finds, among the layers of a stack's fold (most general
// first), those of a policy with a merge type whose merged spec (the fold
// of the layer with those above it) holds a broken field of another
// attachment of the stack (attachment.broken, or the fields extra gives
// it). It returns, per such attachment, the first field held. Pure:
// prefold runs it concurrently.
func mergeBroken(layers []merge.Layer, atts []*attachment, opts merge.Options, extra map[*attachment][]string) map[merge.Src]brokenField {
	brokenOf := func(a *attachment) []string {
		if f, ok := extra[a]; ok {
			return f
		}
		return a.broken
	}
	if !slices.ContainsFunc(atts, func(a *attachment) bool { return len(brokenOf(a)) > 0 }) {
		return nil
	}
	var out map[merge.Src]brokenField
	for i := range layers {
		merging := mergingAttachment(layers, i, atts)
		if merging == nil {
			continue
		}
		r := merge.FoldWith(slices.Clone(layers[:i+1]), opts)
		if r.Tree == nil {
			continue
		}
	found:
		for _, above := range atts {
			if above == merging || above.pol == merging.pol {
				continue
			}
			own := above.spec
			if _, ok := extra[above]; ok && above.fullSpec != nil {
				own = above.fullSpec
			}
			for _, f := range brokenOf(above) {
				if merge.HeldAt(r.Tree, own, opts.Schema, f) {
					if out == nil {
						out = map[merge.Src]brokenField{}
					}
					out[merging.id] = brokenField{from: above, field: f}
					break found
				}
			}
		}
	}
	return out
}

// mergingAttachment is the attachment of layers[i] when that layer is a
// policy's own spec merging up (a merge type), nil otherwise (a layer
// merging the policies of one level is not one policy's).
func mergingAttachment(layers []merge.Layer, i int, atts []*attachment) *attachment {
	if layers[i].MergeUp == "" {
		return nil
	}
	j := slices.IndexFunc(atts, func(a *attachment) bool { return a.id == layers[i].Src })
	if j < 0 || layers[i].Spec != atts[j].spec {
		return nil
	}
	return atts[j]
}

// mergeFailOpen judges, for each layer of a policy with a merge type, the
// broken parts of the policies above it as its implementation judges the
// merged policy (Envoy Gateway merges first and translates the merged
// policy, whose flags say what fails open): a part of a policy above that
// fails open by its own flags is left out of its own spec before the
// fold (engine.attach); here, where a policy merges with it, it takes
// part whole again, and
//   - when the merge holds none of its broken fields (the policy below
//     replaced them), the merged policy has the rest of that part;
//   - when every broken field the merge holds lies in a part that fails
//     open by the merged policy's flags, those parts are left out of the
//     merged policy (of the layer above here, of the merging one by
//     stripMergeOpen, once the checks reading it as its own have run),
//     and the merging policy is noted
//     (open: the parts; held: the field held, so that it is Invalid for
//     the listeners on its paths, as a merge holding a broken field);
//   - otherwise the merged policy fails closed: extra gives mergeBroken
//     the broken fields of the policy above, whose failing-open parts
//     the merged policy's flags do not leave out.
//
// A policy above that fails closed by its own flags is judged the same,
// by the merged flags. Kinds whose policies merge (not additive) only;
// a layer merging the policies of one level is not judged. Pure.
func (d *kindDP) mergeFailOpen(layers []merge.Layer, atts []*attachment, opts merge.Options) (out []merge.Layer, open map[merge.Src][]string, held map[merge.Src]brokenField, extra map[*attachment][]string) {
	if len(d.kind.FailOpen) == 0 || d.kind.Composition == policy.CompositionAdditive ||
		!slices.ContainsFunc(atts, func(a *attachment) bool { return a.failedOpen != nil || len(a.broken) > 0 }) {
		return layers, nil, nil, nil
	}
	out = layers
	cloned := false
	set := func(k int, spec *merge.Tree) {
		if !cloned {
			out, cloned = slices.Clone(layers), true
		}
		out[k].Spec = spec
	}
	for i := range out {
		merging := mergingAttachment(out, i, atts)
		if merging == nil {
			continue
		}
		for k := 0; k < i; k++ {
			above := layerOwner(out, k, atts)
			if above == nil || above.pol == merging.pol {
				continue
			}
			fields, full := above.broken, out[k].Spec
			if above.failedOpen != nil {
				fields, full = above.openFields, above.fullSpec
			}
			if len(fields) == 0 {
				continue
			}
			trial := slices.Clone(out[:i+1])
			trial[k].Spec = full
			r := merge.FoldWith(trial, opts)
			if r.Tree == nil {
				continue
			}
			var holds []string
			for _, f := range fields {
				if merge.HeldAt(r.Tree, full, opts.Schema, f) {
					holds = append(holds, f)
				}
			}
			if len(holds) == 0 {
				set(k, full) // the merge replaced every broken part
				continue
			}
			_, parts := d.kind.WithoutFailedOpen(r.Tree.Object(), holds)
			if parts == nil {
				set(k, full)
				if extra == nil {
					extra = map[*attachment][]string{}
				}
				extra[above] = fields
				continue
			}
			// Left out of both layers: the merging one's after the checks
			// that read its layer as its own (stripMergeOpen).
			set(k, merge.FromValue(policy.WithoutFields(full.Object(), parts), above.id))
			if open == nil {
				open, held = map[merge.Src][]string{}, map[merge.Src]brokenField{}
			}
			open[merging.id] = append(open[merging.id], parts...)
			if _, ok := held[merging.id]; !ok {
				held[merging.id] = brokenField{from: above, field: holds[0]}
			}
		}
	}
	return out, open, held, extra
}

// layerOwner is the attachment whose own spec layers[k] is (its spec, or
// the whole spec it left parts of out), nil for a layer merging the
// policies of one level.
func layerOwner(layers []merge.Layer, k int, atts []*attachment) *attachment {
	j := slices.IndexFunc(atts, func(a *attachment) bool { return a.id == layers[k].Src })
	if j < 0 || (layers[k].Spec != atts[j].spec && layers[k].Spec != atts[j].fullSpec) {
		return nil
	}
	return atts[j]
}

// stripMergeOpen leaves the parts open names (mergeFailOpen) out of the
// layers of the merging policies: what their implementation leaves out
// of the merged policy, the merging policy's own values in those parts
// included.
func stripMergeOpen(layers []merge.Layer, atts []*attachment, open map[merge.Src][]string) []merge.Layer {
	if len(open) == 0 {
		return layers
	}
	out := slices.Clone(layers)
	for i := range out {
		a := mergingAttachment(out, i, atts)
		if a == nil {
			continue
		}
		if parts, ok := open[a.id]; ok {
			out[i].Spec = merge.FromValue(policy.WithoutFields(out[i].Spec.Object(), parts), a.id)
		}
	}
	return out
}

// ownOpen is what mergeOwnFailOpen finds of one merging policy: its
// first own broken field, and the parts of the merged policy that fail
// open by its flags.
type ownOpen struct {
	brokenField
	parts []string
}

// mergeOwnFailOpen judges the merging policies' own broken fields on the
// merged policy, as Envoy Gateway merges a route's policy with the one
// above it and then translates the merged policy, whose flags say what
// fails open: a policy whose own broken fields fail closed by its own
// flags (attachment.broken: it merges with nothing, in place) but open by
// the merged policy's (its part sets no failOpen, the Gateway's sets
// true) merges here after all, and out names the parts to leave out of
// the merged policy. The merging policy's layer is found before
// passMergeUp, which layers then get; those above it are read whole (the
// parts they leave out by their own flags included). Pure.
func (d *kindDP) mergeOwnFailOpen(layers []merge.Layer, nodes []topology.NodeID, atts []*attachment, opts merge.Options) ([]merge.Layer, map[merge.Src]ownOpen) {
	if len(d.kind.FailOpen) == 0 || d.kind.Composition == policy.CompositionAdditive ||
		!slices.ContainsFunc(atts, func(a *attachment) bool { return a.pol.p.MergeType != "" && len(a.broken) > 0 }) {
		return layers, nil
	}
	var out map[merge.Src]ownOpen
	cloned := false
	for i := 1; i < len(layers); i++ {
		j := slices.IndexFunc(atts, func(a *attachment) bool { return a.id == layers[i].Src })
		if j < 0 {
			continue
		}
		a := atts[j]
		if a.pol.p.MergeType == "" || len(a.broken) == 0 || layers[i].Spec != a.spec {
			continue
		}
		trial := slices.Clone(layers[:i+1])
		trial[i].MergeUp = merge.PatchDefaults
		for k := 0; k < i; k++ {
			if above := layerOwner(trial, k, atts); above != nil && above.failedOpen != nil {
				trial[k].Spec = above.fullSpec
			}
		}
		d.passMergeUp(trial, nodes[:i+1])
		r := merge.FoldWith(trial, opts)
		if r.Tree == nil {
			continue
		}
		if _, parts := d.kind.WithoutFailedOpen(r.Tree.Object(), a.broken); parts != nil {
			if !cloned {
				layers, cloned = slices.Clone(layers), true
			}
			layers[i].MergeUp = merge.PatchDefaults
			if out == nil {
				out = map[merge.Src]ownOpen{}
			}
			out[a.id] = ownOpen{brokenField{from: a, field: a.broken[0]}, parts}
		}
	}
	return layers, out
}

// noteOwnOpen records what mergeOwnFailOpen found in the stack's result:
// the parts join those mergeOpen leaves out of the merged policy, and the
// policy's own field is what its merge holds (MergeHolds), unless it
// already holds a field of a policy above; nothing where the merged
// policy fails closed for such a field (the route fails).
func (sr *stackResult) noteOwnOpen(own map[merge.Src]ownOpen) {
	for id, o := range own {
		if _, held := sr.brokenMerge[id]; held && sr.mergeOpen[id] == nil {
			continue
		}
		if sr.brokenMerge == nil {
			sr.brokenMerge = map[merge.Src]brokenField{}
		}
		if _, held := sr.brokenMerge[id]; !held {
			sr.brokenMerge[id] = o.brokenField
		}
		if sr.mergeOpen == nil {
			sr.mergeOpen = map[merge.Src][]string{}
		}
		for _, p := range o.parts {
			if !slices.Contains(sr.mergeOpen[id], p) {
				sr.mergeOpen[id] = append(sr.mergeOpen[id], p)
			}
		}
		if sr.ownOpen == nil {
			sr.ownOpen = map[merge.Src][]string{}
		}
		sr.ownOpen[id] = o.parts
	}
}

// ownOpenVia says where the own broken fields of attachment a (a policy
// with a merge type, Invalid in place) fail open by the merged policy's
// flags (stackResult.ownOpen): the listeners on the paths of the contexts
// where it is the most specific policy applying and they do (open), those
// where they do not (closed; nil for open alone when a path of such a
// context has no listener: it then fails everywhere), and the parts left
// out. Nothing when they fail open nowhere.
func (c *computation) ownOpenVia(a *attachment) (open, closed []topology.Ref, parts []string) {
	d := c.dps[a.pol.p.Kind]
	if d == nil || len(a.mergeBroken) == 0 {
		return nil, nil, nil
	}
	targets := []topology.NodeID{a.node}
	targets = append(targets, c.graph.Node(a.node).Children...)
	for n := range a.affects {
		if !slices.Contains(targets, n) {
			targets = append(targets, n)
		}
	}
	everywhere := false
	for _, n := range targets {
		ts := d.targets[n]
		if ts == nil || ts.eff == nil {
			continue
		}
		for i, sr := range ts.stacks {
			if i >= len(ts.eff.Contexts) || !mostSpecificApplying(ts.eff.Contexts[i].Stack, a.ref) {
				continue
			}
			own := sr.ownOpen[a.id]
			isOpen := own != nil && sr.mergeOpen[a.id] != nil
			for _, p := range own {
				if isOpen && !slices.Contains(parts, p) {
					parts = append(parts, p)
				}
			}
			ts.eff.Contexts[i].Paths(func(path []topology.Ref) bool {
				found := false
				for _, r := range path {
					if gk := r.GroupKind(); r.IsSection() && (gk == topology.KindGateway || topology.IsListenerSet(gk)) {
						found = true
						if isOpen && !slices.Contains(open, r) {
							open = append(open, r)
						} else if !isOpen && !slices.Contains(closed, r) {
							closed = append(closed, r)
						}
					}
				}
				everywhere = everywhere || (!found && !isOpen)
				return true
			})
		}
	}
	// A listener where some context fails closed fails its requests.
	open = slices.DeleteFunc(open, func(r topology.Ref) bool { return slices.Contains(closed, r) })
	if len(open) == 0 || everywhere {
		return nil, nil, nil
	}
	slices.SortFunc(open, topology.Ref.Compare)
	slices.SortFunc(closed, topology.Ref.Compare)
	return open, closed, parts
}

// ownOpenNote is the note an ancestor's message gets for a merging
// policy whose own broken fields fail open by the merged policy's flags
// through the listeners open (ownOpenVia): where, when they do not
// everywhere. Those listeners are on the paths of the policy's own
// contexts, so all are below the target whose ancestor entry it is
// (a route's listeners are its Gateways'; the entry is copied to each
// Gateway named after it).
func ownOpenNote(open, closed []topology.Ref, parts []string) string {
	what := fmt.Sprintf("failing open by the merged policy's flags, %s left out of it and the rest applied", strings.Join(parts, ", "))
	if len(closed) == 0 {
		return "; merged with the policies above it, " + what
	}
	names := make([]string, len(open))
	for i, l := range open {
		names[i] = l.Short()
	}
	return fmt.Sprintf("; merged with the policies above it through %s, %s", strings.Join(names, ", "), what)
}
