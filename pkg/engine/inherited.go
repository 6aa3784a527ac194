package engine

import (
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
)

// inherit applies an additive kind's inherited fields to a stack's levels
// (least specific first, each in its established order): for each field,
// the most specific attachment giving it a value other than false, 0 or ""
// keeps it, and every other attachment setting it loses it there, to that
// one (NGINX writes no directive for a zero value, so a route's
// dryRun: false does not undo its Gateway's dryRun: true). It returns the
// specs of the attachments that lost a field, without it, and appends
// their losses; nil when the kind has no inherited fields or nothing is
// lost. Specs are built anew: attachments' trees are shared by stacks.
func (d *kindDP) inherit(levels [][]*attachment, losses *[]merge.Loss) map[*attachment]*merge.Tree {
	if len(d.kind.InheritedFields) == 0 {
		return nil
	}
	lost := map[*attachment][]string{}
	var order []*attachment // the losers, in first-loss order
	for _, f := range d.kind.InheritedFields {
		segs := strings.Split(f, ".")
		var winner *attachment
		for i := len(levels) - 1; i >= 0 && winner == nil; i-- {
			for _, a := range levels[i] {
				if v, ok := additiveField(a.spec, segs); ok && !zeroValue(v) {
					winner = a
					break
				}
			}
		}
		if winner == nil {
			continue
		}
		for _, g := range levels {
			for _, a := range g {
				if a == winner || a.pol == winner.pol {
					continue
				}
				if _, ok := additiveField(a.spec, segs); !ok {
					continue
				}
				if lost[a] == nil {
					order = append(order, a)
				}
				lost[a] = append(lost[a], f)
				for _, l := range a.spec.Leaves() {
					if underField(a.spec, l.Path, segs) {
						*losses = append(*losses, merge.Loss{Loser: a.id, Path: l.Path, Winners: []merge.Src{winner.id}})
					}
				}
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	out := make(map[*attachment]*merge.Tree, len(order))
	for _, a := range order {
		v := a.spec.Object() // a fresh copy: {"<namespace>/<name>": spec}
		for key, spec := range v {
			for _, f := range lost[a] {
				spec = withoutField(spec, strings.Split(f, "."))
			}
			v[key] = spec
		}
		out[a] = merge.FromValue(v, a.id)
	}
	return out
}

// additiveField returns the value at segs in an additive attachment's spec
// (below its one "<namespace>/<name>" key), and whether it is set.
func additiveField(spec *merge.Tree, segs []string) (any, bool) {
	for _, inner := range spec.Object() {
		v := inner
		for _, s := range segs {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s]; !ok {
				return nil, false
			}
		}
		return v, v != nil
	}
	return nil, false
}

// underField reports whether a leaf path of an additive spec (the spec
// under its "<namespace>/<name>" key) is the field segs or below it.
func underField(spec *merge.Tree, path string, segs []string) bool {
	for key := range spec.Object() {
		f := merge.JoinPath("", key)
		for _, s := range segs {
			f = merge.JoinPath(f, s)
		}
		return path == f || strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[")
	}
	return false
}

// withoutField returns v with the field at segs removed, copying the
// objects on the way.
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
	} else {
		out[segs[0]] = withoutField(c, segs[1:])
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
