package merge

// Without returns r without what the sources drop reports set below path
// (the keys from the spec root, objects only): those leaves leave the tree,
// objects they empty that such a source set go with them, and so do the
// losses below path whose loser is such a source. The fields of other
// sources stay, and so do their losses. r is not changed. It models fields
// that reach some targets from some levels only, for kinds whose more
// specific policies win there (no loss of another source to a dropped one
// is rewritten).
func (r Result) Without(path []string, drop func(Src) bool) Result {
	if len(path) == 0 {
		return r
	}
	t, changed := pruneAt(r.Tree, path, drop)
	prefix := ""
	for _, k := range path {
		prefix = JoinPath(prefix, k)
	}
	out := Result{Tree: t, Errors: r.Errors}
	for _, l := range r.Losses {
		if under(l.Path, prefix) && drop(l.Loser) {
			changed = true
			continue
		}
		out.Losses = append(out.Losses, l)
	}
	if !changed {
		return r
	}
	return out
}

// pruneAt returns t with dropLeaves applied to the node at path, copying
// the objects on the way; t itself when nothing there is dropped.
func pruneAt(t *Tree, path []string, drop func(Src) bool) (*Tree, bool) {
	if t == nil || t.obj == nil {
		return t, false
	}
	c, ok := t.obj[path[0]]
	if !ok {
		return t, false
	}
	var nc *Tree
	var changed bool
	if len(path) == 1 {
		nc, changed = dropLeaves(c, drop)
	} else {
		nc, changed = pruneAt(c, path[1:], drop)
		if changed && nc != nil && nc.obj != nil && len(nc.obj) == 0 && drop(nc.src) {
			nc = nil // emptied, and set by a dropped source
		}
	}
	if !changed {
		return t, false
	}
	out := &Tree{obj: make(map[string]*Tree, len(t.obj)), src: t.src, path: t.path}
	for k, v := range t.obj {
		if k != path[0] {
			out.obj[k] = v
		}
	}
	if nc != nil {
		out.obj[path[0]] = nc
	}
	return out, true
}

// dropLeaves returns t without the leaves (scalars, lists, empty objects)
// whose source drop reports, nil when nothing is left of it.
func dropLeaves(t *Tree, drop func(Src) bool) (*Tree, bool) {
	if t.obj == nil || len(t.obj) == 0 {
		if drop(t.src) {
			return nil, true
		}
		return t, false
	}
	var out *Tree
	for k, c := range t.obj {
		nc, changed := dropLeaves(c, drop)
		if !changed {
			continue
		}
		if out == nil {
			out = &Tree{obj: make(map[string]*Tree, len(t.obj)), src: t.src, path: t.path}
			for k2, v := range t.obj {
				out.obj[k2] = v
			}
		}
		if nc == nil {
			delete(out.obj, k)
		} else {
			out.obj[k] = nc
		}
	}
	if out == nil {
		return t, false
	}
	if len(out.obj) == 0 {
		return nil, true
	}
	return out, true
}
