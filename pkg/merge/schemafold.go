package merge

import (
	"slices"
	"strings"
)

// Schema-aware patch merges. This is our own fold rather than
// k8s.io/apimachinery's strategicpatch or sigs.k8s.io/structured-merge-diff
// for the same reason the RFC 7386 fold is ours: both libraries merge plain
// values (SMD tracks field ownership per manager in managedFields, not
// which of two operands a merged value came from), so neither can say which
// policy set each field of the result, nor which fields a policy lost and to
// whom. The tests use SMD as the oracle for the merged values.

// patchS applies p onto t under s: patchAt where s says nothing, list-maps
// and sets merged item by item, atomic maps and named-rule entries replaced
// whole, a oneof's member set by p removing t's other members. Like
// patchAt it keeps nulls as deletion markers (the result is a merge patch
// in turn) and records what t loses.
func (r *Result) patchS(path string, t, p *Tree, s *Schema) *Tree {
	if s == nil {
		return r.patchAt(path, t, p)
	}
	switch {
	case p == nil:
		return t
	case t == nil:
		return p
	}
	if kp, kt := p.keyed(), t.keyed(); kp != nil && kt != nil {
		return r.mergeList(t, p, kt, kp, s)
	}
	if p.obj == nil || t.obj == nil || s.atomicMap {
		return r.replace(path, t, p)
	}
	if len(p.obj) == 0 {
		return t
	}
	out := &Tree{obj: make(map[string]*Tree, len(t.obj)+len(p.obj)), src: t.src, path: t.path}
	for k, c := range t.obj {
		out.obj[k] = c
	}
	r.dropOneofs(out, t, p, s)
	for k, pc := range p.obj {
		if cs := s.Child(k); s.atomicEntries && !cs.namedRules() {
			// A named rule of the winning side replaces the rule of the
			// same name whole; a null deletes it.
			out.obj[k] = r.replace(pc.path, t.obj[k], pc)
		} else if s.atomicEntries {
			// A named rule that is a map of named rules in turn (a nested
			// path) merges entry by entry.
			out.obj[k] = r.patchS(pc.path, t.obj[k], pc, cs)
		} else {
			out.obj[k] = r.patchS(pc.path, t.obj[k], pc, s.Child(k))
		}
	}
	if !out.live() {
		out.src = p.src // only the patch can have emptied it (see patchAt)
	}
	return out
}

// dropOneofs removes from out (a copy of t's members) the members of each
// oneof of s that p, the winning side, does not have but for which it sets
// another member to a value (not null): the oneof is one field, which p's
// member takes whole (Gloo Gateway's Go merges of options: a oneof is one
// struct field). Each leaf of a member removed is lost to the sources of
// p's members of the group; a null member of t (a deletion marker) is kept,
// losing nothing.
func (r *Result) dropOneofs(out, t, p *Tree, s *Schema) {
	for _, g := range s.oneofs {
		var winners []Src
		for _, m := range g {
			if pc := p.obj[m]; pc != nil && !pc.null {
				winners = append(winners, pc.sources()...)
			}
		}
		if winners == nil {
			continue
		}
		slices.Sort(winners)
		winners = slices.Compact(winners)
		for _, m := range g {
			tc := t.obj[m]
			if tc == nil || tc.null || p.obj[m] != nil {
				continue
			}
			tc.walkAt(tc.path, func(lp string, n *Tree) { r.lose(n.src, lp, winners) })
			delete(out.obj, m)
		}
	}
}

// replace puts p in t's place whole, recording every leaf of t as lost to
// p's sources. A null t (a deletion marker) loses nothing.
func (r *Result) replace(path string, t, p *Tree) *Tree {
	if t == nil {
		return p
	}
	var winners []Src
	if p.obj != nil || p.keyed() != nil {
		winners = p.sources()
	} else {
		winners = []Src{p.src}
	}
	t.walkAt(path, func(lp string, n *Tree) { r.lose(n.src, lp, winners) })
	return p
}

// mergeList merges two keyed lists of the same schema node: items present
// on one side only are kept; an item on both sides is, in a list-map, the
// target's item patched by the patch's (recursively, under the items'
// schema, so nulls in it delete fields), and in a set the patch's item (the
// target's is recorded as lost to it).
//
// Order: that of sigs.k8s.io/structured-merge-diff's merge (typed.Merge, as
// server-side apply merges), which strategicpatch does not share (it sorts
// by $setElementOrder or the patch's order and interleaves the server's
// items by position). The patch's items come in the patch's order; an item
// only in the target stays where it was relative to the items around it in
// the target, coming out as soon as every target item before it that the
// patch also has came out. When the patch does not reorder the items both
// sides have, this is the target's order followed by the patch's new items.
func (r *Result) mergeList(t, p *Tree, kt, kp *klist, s *Schema) *Tree {
	switch {
	case len(kp.items) == 0:
		return t // [] adds nothing to a list merged item by item
	case len(kt.items) == 0:
		return p
	}
	inT := make(map[string]int, len(kt.ids))
	for i, id := range kt.ids {
		inT[id] = i
	}
	inP := make(map[string]bool, len(kp.ids))
	for _, id := range kp.ids {
		inP[id] = true
	}
	// nextShared[j]: the first patch item at or after j that the target
	// also has (len when none): the target item the walk waits for.
	nextShared := make([]int, len(kp.ids)+1)
	nextShared[len(kp.ids)] = len(kp.ids)
	for j := len(kp.ids) - 1; j >= 0; j-- {
		nextShared[j] = nextShared[j+1]
		if _, ok := inT[kp.ids[j]]; ok {
			nextShared[j] = j
		}
	}
	n := len(kt.items) + len(kp.items)
	out := &klist{items: make([]*Tree, 0, n), ids: make([]string, 0, n)}
	done := make(map[string]bool, len(kp.ids))
	for i, j := 0, 0; i < len(kt.ids) || j < len(kp.ids); {
		if i < len(kt.ids) {
			id := kt.ids[i]
			if !inP[id] {
				out.items, out.ids = append(out.items, kt.items[i]), append(out.ids, id)
				i++
				continue
			}
			if done[id] || nextShared[j] == len(kp.ids) || kp.ids[nextShared[j]] != id {
				i++ // merged already, or the patch's order brings it later
				continue
			}
			// The patch's next shared item: emit the patch's items up to it.
		}
		id, pi := kp.ids[j], kp.items[j]
		item := pi
		if ti, ok := inT[id]; ok {
			if s.list == listMap {
				item = r.patchS(pi.path, kt.items[ti], pi, s.items)
			} else {
				r.replace(pi.path, kt.items[ti], pi)
			}
		}
		out.items, out.ids = append(out.items, item), append(out.ids, id)
		done[id] = true
		j++
	}
	return &Tree{val: out, src: t.src, path: t.path}
}

// FieldPaths returns the paths of t's leaves (as Leaves names them, sorted)
// with each oneof of s counted as one field: the leaves at or below the
// members of a oneof an object of t sets give one path, the object's path
// joined with the oneof's members separated by "|" (options["a|b"]). Two
// specs whose FieldPaths share a path set a field in common. Lists are
// followed into only where t keys them (FromValueWith).
func (t *Tree) FieldPaths(s *Schema) []string {
	seen := map[string]bool{}
	var out []string
	t.fieldPaths(s, func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	})
	slices.Sort(out)
	return out
}

func (t *Tree) fieldPaths(s *Schema, fn func(string)) {
	if t == nil || t.null {
		return
	}
	if t.obj == nil {
		if kl, ok := t.val.(*klist); ok && len(kl.items) > 0 {
			for _, it := range kl.items {
				it.fieldPaths(s.Items(), fn)
			}
			return
		}
		fn(t.path)
		return
	}
	n := 0
	for k, c := range t.obj {
		if c.null {
			continue
		}
		n++
		if g := s.oneofOf(k); g != nil {
			fn(JoinPath(t.path, strings.Join(g, "|")))
			continue
		}
		c.fieldPaths(s.Child(k), fn)
	}
	if n == 0 && t.path != "" {
		fn(t.path)
	}
}
