package merge

import (
	"encoding/json"
	"math"
	"strconv"
)

// Choice names, in a merged spec, alternative configurations of which one
// applies at a time: the items of the list at top-level field List, each
// naming its key in field Key and holding its configuration in field
// Value, and the configuration at top-level field Default for any other
// key.
type Choice struct {
	List, Key, Value, Default string
}

// Choose returns r as it applies where the key is key (a number: a port):
// the configuration of the item of Choice.List whose Choice.Key equals key,
// else Choice.Default, its fields taking the place of List and Default at
// the top level of the tree (on a clash, the chosen configuration's field
// wins). Every field in Default, when an item is chosen, is lost to the
// item's sources, as is what Default lost on the way (its winners were
// beaten in turn); what the other items set or lost is not in play here
// and leaves the losses. The chosen fields' paths are their new ones; the
// losses keep the losers' own paths. r is not modified.
func (r Result) Choose(c Choice, key float64) Result {
	t := r.Tree
	if t == nil || t.obj == nil {
		return r
	}
	list, def := t.obj[c.List], t.obj[c.Default]
	item := chooseItem(list, c, key)
	var chosen *Tree
	var itemPrefix string
	if item != nil {
		chosen = item.Child(c.Value)
		itemPrefix = item.path
	} else {
		chosen = def
	}
	out := &Tree{obj: make(map[string]*Tree, len(t.obj)), src: t.src}
	for k, v := range t.obj {
		if k != c.List && k != c.Default {
			out.obj[k] = v
		}
	}
	if chosen != nil && chosen.obj != nil {
		for k, v := range chosen.obj {
			out.obj[k] = v.rebase(JoinPath("", k))
		}
	}
	var winners []Src
	if item != nil {
		winners = item.sources()
	}
	listPath, defPath := JoinPath("", c.List), JoinPath("", c.Default)
	res := Result{Tree: out, Errors: r.Errors}
	for _, l := range r.Losses {
		switch {
		case under(l.Path, listPath):
			// Kept: what the chosen item lost, and a list lost whole
			// (merged as a leaf, the loser's item for the key with it).
			if item == nil || (l.Path != listPath && !under(l.Path, itemPrefix)) {
				continue // another key's configuration
			}
		case under(l.Path, defPath) && item != nil:
			l.Winners = winners
		}
		res.Losses = append(res.Losses, l)
	}
	if item != nil && def != nil {
		def.walk(def.path, func(p string, n *Tree) {
			res.Losses = append(res.Losses, Loss{Loser: n.src, Path: p, Winners: winners})
		})
	}
	res.Losses = sortLosses(res.Losses)
	return res
}

// chooseItem returns the item of the list tree whose key field equals key,
// or nil. A list merged item by item is searched by its items; a list
// merged whole (a leaf) by its values, the item built from the value with
// the list's source.
func chooseItem(list *Tree, c Choice, key float64) *Tree {
	if list == nil || list.obj != nil {
		return nil
	}
	if kl, ok := list.val.(*klist); ok {
		for _, it := range kl.items {
			if k := it.Child(c.Key); k != nil && k.obj == nil && sameKey(k.val, key) {
				return it
			}
		}
		return nil
	}
	items, _ := list.val.([]any)
	for i, it := range items {
		m, ok := it.(map[string]any)
		if ok && sameKey(m[c.Key], key) {
			return fromValue(m, list.src, list.path+"["+strconv.Itoa(i)+"]")
		}
	}
	return nil
}

// sameKey reports whether a key field's value is the number key, whatever
// its JSON number type (or a string spelling it, as YAML may give).
func sameKey(v any, key float64) bool {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return false
		}
		f = g
	case string:
		g, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return false
		}
		f = g
	default:
		return false
	}
	return !math.IsNaN(f) && f == key
}

// rebase returns a copy of t whose nodes' paths start at path instead of
// t's own: a subtree moved to another place in a spec.
func (t *Tree) rebase(path string) *Tree {
	if t == nil {
		return nil
	}
	n := &Tree{val: t.val, null: t.null, src: t.src, path: path}
	if t.obj != nil {
		n.obj = make(map[string]*Tree, len(t.obj))
		for k, c := range t.obj {
			n.obj[k] = c.rebase(JoinPath(path, k))
		}
		return n
	}
	if kl, ok := t.val.(*klist); ok {
		out := &klist{items: make([]*Tree, len(kl.items)), ids: kl.ids}
		for i, it := range kl.items {
			out.items[i] = it.rebase(path + "[" + kl.ids[i] + "]")
		}
		n.val = out
	}
	return n
}
