package merge

import (
	"strconv"
	"strings"
)

// HeldAt reports whether merged, the result of a fold that own (a layer's
// spec, whose nodes all have one source) took part in, still holds own's
// value at field as own has it: every leaf there is own's. field is a
// dotted path below the spec whose list entries are indexed (a.b[0].c, as
// policy field problems name fields; a leading "spec." is dropped; keys
// are plain names, not quoted ones). Lists are read as the fold read them
// under s: an entry of a keyed list is followed into by its key, a list
// that is not keyed is one value, held when merged took it whole from own.
// A field own does not have, or that another layer changed in part (a
// reference whose name a more specific policy replaced), is not held: the
// merged value is another one.
//
// An implementation that merges two policies and then translates the
// merged one fails it for a broken reference it holds: this says whether a
// broken reference of the policy above survives in the merge.
func HeldAt(merged, own *Tree, s *Schema, field string) bool {
	if merged == nil || own == nil {
		return false
	}
	rest := strings.TrimPrefix(field, "spec.")
	if rest == "" {
		return false // no field named
	}
	node := shape(own, s)
walk:
	for rest != "" {
		seg := rest
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		name, idx, ok := splitSegment(seg)
		if !ok {
			return false
		}
		if node = node.Child(name); node == nil || node.null {
			return false
		}
		for _, i := range idx {
			kl := node.keyed()
			if kl == nil {
				// A list that is not keyed merges whole: the list is the
				// value held.
				if _, isList := node.val.([]any); !isList || i >= len(node.val.([]any)) {
					return false
				}
				break walk
			}
			if i >= len(kl.items) {
				return false
			}
			node = kl.items[i]
		}
	}
	src, prefix := own.src, node.path
	mine, others := false, false
	merged.walk("", func(path string, n *Tree) {
		if under(path, prefix) {
			if n.src == src {
				mine = true
			} else {
				others = true
			}
		}
	})
	return mine && !others
}

// splitSegment splits one segment of a field path, name[0][1], into the
// name and the indexes.
func splitSegment(seg string) (name string, idx []int, ok bool) {
	name, tail, _ := strings.Cut(seg, "[")
	if name == "" {
		return "", nil, false
	}
	if tail == "" {
		return name, nil, !strings.Contains(seg, "[")
	}
	for _, part := range strings.Split(strings.TrimSuffix(tail, "]"), "][") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 {
			return "", nil, false
		}
		idx = append(idx, i)
	}
	return name, idx, strings.HasSuffix(tail, "]")
}

// under reports whether path is prefix or lies below it.
func under(path, prefix string) bool {
	if prefix == "" || path == prefix {
		return true
	}
	return strings.HasPrefix(path, prefix) && (path[len(prefix)] == '.' || path[len(prefix)] == '[')
}
