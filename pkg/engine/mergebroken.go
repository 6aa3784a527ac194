package engine

import (
	"slices"

	"github.com/attache-dev/attache/pkg/merge"
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
// attachment of the stack. It returns, per such attachment, the first
// field held. Pure: prefold runs it concurrently.
func mergeBroken(layers []merge.Layer, atts []*attachment, opts merge.Options) map[merge.Src]brokenField {
	if !slices.ContainsFunc(atts, func(a *attachment) bool { return len(a.broken) > 0 }) {
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
			for _, f := range above.broken {
				if merge.HeldAt(r.Tree, above.spec, opts.Schema, f) {
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
