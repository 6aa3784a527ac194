package engine

import (
	"slices"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
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
