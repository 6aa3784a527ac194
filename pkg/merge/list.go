package merge

import (
	"encoding/json"
	"strconv"
	"strings"
)

// klist is the value (Tree.val) of a keyed list: a list-map or a set whose
// items are nodes of their own, so that each item's fields keep their own
// source. It lives in val rather than in a field of Tree so that trees
// without schemas stay as small as they were.
type klist struct {
	items []*Tree
	// ids[i] identifies items[i]: the selector between the brackets of its
	// path ("name=x-foo", "=80").
	ids []string
}

// FromValueWith is FromValue for a spec merged under s: each list that s
// marks as a list-map or a set, and whose items can be keyed, becomes a
// keyed list whose items are nodes of their own (so Leaves lists their
// fields one by one, at paths like headers[name=x-foo].value). Under a nil
// schema it is FromValue. FoldWith shapes specs built by FromValue itself,
// so building them here only saves that work.
func FromValueWith(v any, src Src, s *Schema) *Tree { return shape(FromValue(v, src), s) }

// shape returns t with the lists that s keys turned into keyed lists,
// copying only the nodes on the way to them; it returns t itself when
// nothing changes (so a tree already shaped costs a walk, no allocation).
// Lists whose items cannot be keyed stay leaves: atomic for every merge.
func shape(t *Tree, s *Schema) *Tree {
	if s == nil || t == nil || t.null {
		return t
	}
	if t.obj != nil {
		if s.atomicMap {
			return t
		}
		var out *Tree
		set := func(k string, c *Tree, cs *Schema) {
			if nc := shape(c, cs); nc != c {
				if out == nil {
					out = &Tree{obj: make(map[string]*Tree, len(t.obj)), src: t.src, path: t.path}
					for k2, c2 := range t.obj {
						out.obj[k2] = c2
					}
				}
				out.obj[k] = nc
			}
		}
		if s.additional == nil { // few properties to look at, whatever the width
			for k, cs := range s.props {
				if c, ok := t.obj[k]; ok {
					set(k, c, cs)
				}
			}
		} else {
			for k, c := range t.obj {
				set(k, c, s.Child(k))
			}
		}
		if out != nil {
			return out
		}
		return t
	}
	if s.list == listAtomic {
		return t
	}
	l, ok := t.val.([]any)
	if !ok {
		return t // a scalar, or already keyed
	}
	if kl := keyList(l, t.src, t.path, s); kl != nil {
		return &Tree{val: kl, src: t.src, path: t.path}
	}
	return t
}

// keyList keys the items of a list-map or set, or returns nil when they
// cannot be keyed: an item that is not an object (list-map) or not a
// scalar (set), a key field missing or not a scalar, or two items with the
// same key. The list is then atomic for the merges it takes part in, never
// a panic or an error: data the API server would reject still merges, as
// RFC 7386 would have.
func keyList(l []any, src Src, path string, s *Schema) *klist {
	ids := make([]string, len(l))
	seen := make(map[string]struct{}, len(l))
	for i, it := range l {
		id, ok := itemID(it, s)
		if !ok {
			return nil
		}
		if _, dup := seen[id]; dup {
			return nil
		}
		seen[id] = struct{}{}
		ids[i] = id
	}
	kl := &klist{items: make([]*Tree, len(l)), ids: ids}
	for i, it := range l {
		n := fromValue(it, src, path+"["+ids[i]+"]")
		if s.list == listMap {
			n = shape(n, s.items)
		}
		kl.items[i] = n
	}
	return kl
}

// itemID renders the selector of a list item (see KeyText), or reports
// that the item cannot be keyed.
func itemID(it any, s *Schema) (string, bool) {
	if s.list == listSet {
		v, ok := KeyText(it)
		return "=" + v, ok
	}
	m, ok := it.(map[string]any)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for i, k := range s.keys {
		v, ok := KeyText(m[k])
		if !ok {
			return "", false
		}
		if i > 0 {
			b.WriteByte(',')
		}
		if plainKey(k) {
			b.WriteString(k)
		} else {
			b.WriteString(strconv.Quote(k))
		}
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String(), true
}

// KeyText renders a key value (of a list-map item's key field, or a set
// item) as it appears in a path selector: a string bare when it matches
// [A-Za-z0-9_-]+ and is not itself a JSON literal (a number, true, false,
// null), else as a quoted Go string (as odd object keys are); numbers and
// booleans as JSON writes them. So headers[name=x-foo], ports[port=80],
// ports[port="80"] (the string), hostnames[="a.example.com"]. It reports
// false for values that cannot be keys: null, objects, lists.
func KeyText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		if plainKey(x) && !json.Valid([]byte(x)) {
			return x, true
		}
		return strconv.Quote(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		b, err := json.Marshal(x) // encoding/json's number text, so 80.0 and int64 80 agree
		return string(b), err == nil
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// value is the plain JSON list of a keyed list.
func (kl *klist) value() []any {
	out := make([]any, len(kl.items))
	for i, it := range kl.items {
		out[i] = it.Value()
	}
	return out
}

// keyed returns t's keyed list, or nil.
func (t *Tree) keyed() *klist {
	if t == nil {
		return nil
	}
	kl, _ := t.val.(*klist)
	return kl
}
