package merge

import (
	"sort"
	"strconv"
)

// Src identifies who set a value; the engine uses attachment ids (a policy
// attached to one target).
type Src int32

// Tree is an immutable JSON value annotated with its source. Objects are
// maps of subtrees; every other value (scalar, list, null) is a leaf. A null
// leaf is a deletion marker: it never appears in Value or Leaves.
type Tree struct {
	obj  map[string]*Tree // non-nil iff the value is an object
	val  any              // the value when not an object
	null bool             // explicit null
	src  Src
	// path is the node's field path from the spec root, computed once when
	// the tree is built: merges keep every key at its position, so a node's
	// path never changes wherever the node is shared.
	path string
}

// FromValue converts a JSON value into a tree whose every node has source src.
func FromValue(v any, src Src) *Tree { return fromValue(v, src, "") }

func fromValue(v any, src Src, path string) *Tree {
	switch x := v.(type) {
	case map[string]any:
		t := &Tree{obj: make(map[string]*Tree, len(x)), src: src, path: path}
		for k, c := range x {
			t.obj[k] = fromValue(c, src, JoinPath(path, k))
		}
		return t
	case nil:
		return &Tree{null: true, src: src, path: path}
	default:
		return &Tree{val: v, src: src, path: path}
	}
}

// Src returns the source of the tree's root.
func (t *Tree) Src() Src { return t.src }

// Child returns the member key of an object tree, or nil when t is nil,
// not an object, or has no such member. A null member is returned as is
// (see IsNull).
func (t *Tree) Child(key string) *Tree {
	if t == nil || t.obj == nil {
		return nil
	}
	return t.obj[key]
}

// IsNull reports whether t is an explicit null (a deletion marker).
func (t *Tree) IsNull() bool { return t != nil && t.null }

// Path returns the tree's field path from the spec root (JoinPath form).
func (t *Tree) Path() string { return t.path }

// Value returns the JSON value with every null removed from objects, also
// from objects inside lists (as json-patch does when it inserts a list, though
// not when a list replaces an object: see TestJSONPatchListQuirk). A nil or
// null tree gives nil.
func (t *Tree) Value() any {
	if t == nil || t.null {
		return nil
	}
	if t.obj == nil {
		if kl, ok := t.val.(*klist); ok {
			return kl.value()
		}
		return pruneValue(t.val)
	}
	m := make(map[string]any, len(t.obj))
	for k, c := range t.obj {
		if c.null {
			continue
		}
		m[k] = c.Value()
	}
	return m
}

// Object returns Value as an object, or an empty object when the tree is
// not one.
func (t *Tree) Object() map[string]any {
	if m, ok := t.Value().(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// PruneNulls returns v without the null members of its objects, at every
// depth (lists keep their null items), as an API server drops null fields
// before validating an object; v itself when it holds none. v is not
// modified.
func PruneNulls(v any) any { return pruneValue(v) }

func pruneValue(v any) any {
	if !hasNullMember(v) {
		return v // nothing to prune: share the (immutable) value, no copy
	}
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			if c != nil {
				m[k] = pruneValue(c)
			}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = pruneValue(c)
		}
		return out
	}
	return v
}

// hasNullMember reports whether v holds an object with a null member at any
// depth (what pruneValue removes).
func hasNullMember(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if c == nil || hasNullMember(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if hasNullMember(c) {
				return true
			}
		}
	}
	return false
}

// Leaf is one leaf field of a tree: a scalar, a list, an empty object, or a
// set item or field of a list-map item (see Leaves).
type Leaf struct {
	Path  string
	Value any
	Src   Src
}

// Leaves returns the tree's leaf fields (nulls excluded), sorted by path.
// Paths are dotted keys; keys that are not plain identifiers are quoted in
// brackets, e.g. metadata["a.b"]. The items of a keyed list (a list-map or
// set under a Schema, see FromValueWith) are not one leaf but nodes of their
// own, selected in brackets by their key values (see KeyText):
// headers[name=x-foo].value, ports[port=80,protocol=TCP].name for several
// keys in x-kubernetes-list-map-keys order, hostnames[=example] for a set
// item; an empty keyed list is a leaf of its own.
func (t *Tree) Leaves() []Leaf {
	var out []Leaf
	t.walk("", func(path string, n *Tree) { out = append(out, Leaf{Path: path, Value: n.Value(), Src: n.src}) })
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// walk calls fn for every non-null leaf below t.
func (t *Tree) walk(path string, fn func(string, *Tree)) {
	if t == nil || t.null {
		return
	}
	if t.obj == nil {
		if kl, ok := t.val.(*klist); ok && len(kl.items) > 0 {
			for _, it := range kl.items { // each item's fields on their own
				it.walk(it.path, fn)
			}
			return
		}
		fn(path, t) // a scalar, a list, or an empty keyed list
		return
	}
	n := 0
	for _, c := range t.obj {
		if !c.null {
			n++
			c.walk(c.path, fn)
		}
	}
	if n == 0 && path != "" {
		fn(path, t) // an empty object is a value of its own
	}
}

// live reports whether t is an object with at least one non-null member;
// an object without one is the empty object, a leaf.
func (t *Tree) live() bool {
	for _, c := range t.obj {
		if !c.null {
			return true
		}
	}
	return false
}

// plainKey reports whether key matches ^[A-Za-z0-9_-]+$, i.e. can be written
// in a path without quoting. (A byte loop rather than a regexp: JoinPath runs
// for every key a merge visits.)
func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// JoinPath appends key to a field path.
func JoinPath(path, key string) string {
	if !plainKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// sources returns the distinct sources of t's leaves, or t's own source when
// it has none, sorted. A nil tree has no sources.
func (t *Tree) sources() []Src {
	if t == nil {
		return nil
	}
	seen := map[Src]bool{}
	t.walk("", func(_ string, n *Tree) { seen[n.src] = true })
	if len(seen) == 0 {
		return []Src{t.src}
	}
	out := make([]Src, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Field is one value of an assembled tree: the value at the object keys
// Keys, set by Src.
type Field struct {
	Keys  []string
	Value any
	Src   Src
}

// Assemble builds the object tree holding each field's value at its keys,
// with its source; objects on the way take the source of the first field
// under them. It is for merges computed outside Fold (an
// implementation's own rules) that still credit every leaf: the caller
// decides what wins, so a later field at the keys of an earlier one
// replaces it, and one under an earlier scalar replaces the scalar.
// Assemble records no losses.
func Assemble(fields []Field) *Tree {
	root := &Tree{obj: map[string]*Tree{}}
	for i, f := range fields {
		if i == 0 {
			root.src = f.Src
		}
		if len(f.Keys) == 0 {
			continue
		}
		t, path := root, ""
		for _, k := range f.Keys[:len(f.Keys)-1] {
			path = JoinPath(path, k)
			c := t.obj[k]
			if c == nil || c.obj == nil {
				c = &Tree{obj: map[string]*Tree{}, src: f.Src, path: path}
				t.obj[k] = c
			}
			t = c
		}
		last := f.Keys[len(f.Keys)-1]
		t.obj[last] = fromValue(f.Value, f.Src, JoinPath(path, last))
	}
	return root
}

// Split parts object tree t at the object at path (its keys from the
// root; none: the root itself): in holds that object's members for which
// pick is true, below copies of its ancestors; out holds the rest of t,
// without the objects the split left empty (but its root). in is nil, and
// out t itself, when no member is picked or there is no such object.
// Nodes are shared, not copied: trees are immutable.
func (t *Tree) Split(path []string, pick func(key string) bool) (in, out *Tree) {
	if t == nil || t.obj == nil {
		return nil, t
	}
	if len(path) == 0 {
		picked, rest := map[string]*Tree{}, make(map[string]*Tree, len(t.obj))
		for k, c := range t.obj {
			if pick(k) {
				picked[k] = c
			} else {
				rest[k] = c
			}
		}
		if len(picked) == 0 {
			return nil, t
		}
		return &Tree{obj: picked, src: t.src, path: t.path}, &Tree{obj: rest, src: t.src, path: t.path}
	}
	cin, cout := t.obj[path[0]].Split(path[1:], pick)
	if cin == nil {
		return nil, t
	}
	rest := make(map[string]*Tree, len(t.obj))
	for k, c := range t.obj {
		rest[k] = c
	}
	if cout.obj != nil && len(cout.obj) == 0 {
		delete(rest, path[0])
	} else {
		rest[path[0]] = cout
	}
	return &Tree{obj: map[string]*Tree{path[0]: cin}, src: t.src, path: t.path}, &Tree{obj: rest, src: t.src, path: t.path}
}

// Empty reports whether t is nil or an object without members.
func (t *Tree) Empty() bool { return t == nil || (t.obj != nil && len(t.obj) == 0) }
