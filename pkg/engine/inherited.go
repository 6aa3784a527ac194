package engine

import (
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
)

// inherit applies an additive kind's inherited fields to a stack's levels
// (least specific first, each in its established order). For each of
// InheritedFields, the most specific attachment giving it a value other
// than false, 0 or "" keeps it (at one level, the first such); for each of
// LevelInheritedFields, every attachment of the most specific level
// giving it such a value keeps it. Every other attachment setting the
// field loses it there, to those (NGINX writes no directive for a zero
// value, so a route's dryRun: false does not undo its Gateway's dryRun:
// true; and a location with limit_req directives of its own inherits none
// of its server's). It returns the specs of the attachments that lost a
// field, without it, and appends their losses; nil when the kind has no
// inherited fields or nothing is lost. Specs are built anew: attachments'
// trees are shared by stacks, which prefold computes concurrently.
func (d *kindDP) inherit(levels [][]*attachment, losses *[]merge.Loss) map[*attachment]*merge.Tree {
	if len(d.kind.InheritedFields) == 0 && len(d.kind.LevelInheritedFields) == 0 {
		return nil
	}
	lost := map[*attachment][]string{}
	var order []*attachment // the losers, in first-loss order
	field := func(f string, wholeLevel bool) {
		segs := strings.Split(f, ".")
		var winners []*attachment
		for i := len(levels) - 1; i >= 0 && len(winners) == 0; i-- {
			for _, a := range levels[i] {
				if t := additiveField(a, segs); t != nil && !zeroValue(t.Value()) {
					winners = append(winners, a)
					if !wholeLevel {
						break
					}
				}
			}
		}
		if len(winners) == 0 {
			return
		}
		won := make(map[*pstate]bool, len(winners))
		srcs := make([]merge.Src, len(winners))
		for i, w := range winners {
			won[w.pol] = true
			srcs[i] = w.id
		}
		for _, g := range levels {
			for _, a := range g {
				if won[a.pol] {
					continue // a policy at two levels has one value
				}
				t := additiveField(a, segs)
				if t == nil {
					continue
				}
				if lost[a] == nil {
					order = append(order, a)
				}
				lost[a] = append(lost[a], f)
				loss := func(path string) {
					*losses = append(*losses, merge.Loss{Loser: a.id, Path: path, Winners: srcs})
				}
				// A field holding an object loses each of its leaves;
				// a scalar or an empty object (whose Leaves path is
				// relative) loses itself.
				leaves := t.Leaves()
				if len(leaves) == 0 || (len(leaves) == 1 && leaves[0].Path == "") {
					loss(t.Path())
				}
				for _, l := range leaves {
					if l.Path != "" {
						loss(l.Path)
					}
				}
			}
		}
	}
	for _, f := range d.kind.InheritedFields {
		field(f, false)
	}
	for _, f := range d.kind.LevelInheritedFields {
		field(f, true)
	}
	if len(order) == 0 {
		return nil
	}
	out := make(map[*attachment]*merge.Tree, len(order))
	for _, a := range order {
		key := additiveKey(a.pol.p)
		v := a.spec.Object() // a fresh copy: {key: spec}
		spec := v[key]
		for _, f := range lost[a] {
			spec = withoutField(spec, strings.Split(f, "."))
		}
		if m, ok := spec.(map[string]any); ok && len(m) == 0 {
			delete(v, key) // nothing of it applies here
		} else {
			v[key] = spec
		}
		out[a] = merge.FromValue(v, a.id)
	}
	return out
}

// additiveField returns the subtree at segs of an additive attachment's
// spec (below its additiveKey), or nil when the field is not set (absent,
// null, or below a value that is not an object).
func additiveField(a *attachment, segs []string) *merge.Tree {
	t := a.spec.Child(additiveKey(a.pol.p))
	for _, s := range segs {
		if t = t.Child(s); t == nil {
			return nil
		}
	}
	if t.IsNull() {
		return nil
	}
	return t
}

// withoutField returns v with the field at segs removed, copying the
// objects on the way; an object the removal empties goes too, so that no
// empty object is left to count as a value the policy sets.
func withoutField(v any, segs []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c, ok := m[segs[0]]
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		out[k] = x
	}
	if len(segs) == 1 {
		delete(out, segs[0])
		return out
	}
	c = withoutField(c, segs[1:])
	if cm, ok := c.(map[string]any); ok && len(cm) == 0 {
		delete(out, segs[0])
	} else {
		out[segs[0]] = c
	}
	return out
}

// zeroValue reports whether v is false, zero, "" or an empty object or
// list: a value for which the implementation writes nothing.
func zeroValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case float64:
		return x == 0
	case int64:
		return x == 0
	case int:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// additiveKey is the key an additive kind's policy's spec sits under in a
// fold: its "namespace/name" (its name when cluster-scoped).
func additiveKey(p *policy.Policy) string {
	if p.Ref.Namespace != "" {
		return p.Ref.Namespace + "/" + p.Ref.Name
	}
	return p.Ref.Name
}
