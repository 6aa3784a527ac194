package merge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Schema says where a patch merge departs from RFC 7386 below a spec root:
// lists that merge item by item (x-kubernetes-list-type map or set),
// objects replaced whole (x-kubernetes-map-type atomic), maps of named
// rules whose entries are replaced whole (WithAtomicEntries), and objects
// whose oneofs are one field each (WithOneof). Only the patch
// strategies read it. A nil *Schema, and any part of a spec that the schema
// does not describe, merges exactly as RFC 7386 does. A Schema is immutable
// and safe for concurrent use.
type Schema struct {
	props      map[string]*Schema // properties (only those with something below)
	additional *Schema            // additionalProperties
	items      *Schema            // the schema of a keyed list's items
	list       listKind
	keys       []string // x-kubernetes-list-map-keys, for listMap
	atomicMap  bool     // x-kubernetes-map-type: atomic
	// atomicEntries: the value is a map of named rules, each replaced whole.
	atomicEntries bool
	// oneofs are groups of member names of the object: at most one member
	// of a group is set, the group merging as one field (WithOneof).
	oneofs [][]string
}

type listKind uint8

const (
	listAtomic listKind = iota // replaced whole: a leaf
	listSet                    // x-kubernetes-list-type: set
	listMap                    // x-kubernetes-list-type: map
)

// SchemaFromOpenAPI reads the merge behaviour of a spec from its OpenAPI v3
// schema node as decoded from YAML or JSON (for a CRD, the node
// openAPIV3Schema.properties.spec, or a stanza's node below it). It reads
// properties, additionalProperties, items and the extensions
// x-kubernetes-list-type (atomic, set, map), x-kubernetes-list-map-keys and
// x-kubernetes-map-type (atomic, granular); everything else is ignored
// (x-kubernetes-patch-strategy too: CRDs do not use it). It fails, naming
// the schema path (fields dotted, list items as []), on a list-map without
// keys, keys that are not strings, keys on a list that is not a list-map,
// and unknown list or map types (path: fields dotted as in Leaves, list
// items as [], other members of additionalProperties as *). It returns nil when nothing in the node
// departs from RFC 7386, so the fold takes its plain path.
func SchemaFromOpenAPI(node map[string]any) (*Schema, error) {
	return fromOpenAPI(node, "")
}

func fromOpenAPI(node map[string]any, path string) (*Schema, error) {
	if node == nil {
		return nil, nil
	}
	where := func() string {
		if path == "" {
			return "(root)"
		}
		return path
	}
	s := &Schema{}
	lt, hasLT := node["x-kubernetes-list-type"]
	keys, hasKeys := node["x-kubernetes-list-map-keys"]
	switch {
	case !hasLT, lt == "atomic":
	case lt == "set":
		s.list = listSet
	case lt == "map":
		s.list = listMap
	default:
		return nil, fmt.Errorf("%s: unknown x-kubernetes-list-type %v (want atomic, set or map)", where(), lt)
	}
	if hasKeys && s.list != listMap {
		return nil, fmt.Errorf("%s: x-kubernetes-list-map-keys on a list that is not x-kubernetes-list-type map", where())
	}
	if s.list == listMap {
		ks, ok := keys.([]any)
		if ss, isStrings := keys.([]string); isStrings {
			ks, ok = make([]any, len(ss)), true
			for i, k := range ss {
				ks[i] = k
			}
		}
		if !ok || len(ks) == 0 {
			return nil, fmt.Errorf("%s: x-kubernetes-list-type map needs a non-empty list of x-kubernetes-list-map-keys", where())
		}
		seen := map[string]bool{}
		for _, k := range ks {
			name, ok := k.(string)
			if !ok || name == "" {
				return nil, fmt.Errorf("%s: x-kubernetes-list-map-keys entry %v is not a field name", where(), k)
			}
			if seen[name] {
				return nil, fmt.Errorf("%s: x-kubernetes-list-map-keys names %q twice", where(), name)
			}
			seen[name] = true
			s.keys = append(s.keys, name)
		}
	}
	switch mt, ok := node["x-kubernetes-map-type"]; {
	case !ok, mt == "granular":
	case mt == "atomic":
		s.atomicMap = true
	default:
		return nil, fmt.Errorf("%s: unknown x-kubernetes-map-type %v (want atomic or granular)", where(), mt)
	}
	if s.list != listAtomic {
		if it, ok := node["items"].(map[string]any); ok {
			c, err := fromOpenAPI(it, path+"[]")
			if err != nil {
				return nil, err
			}
			s.items = c
		}
	}
	if !s.atomicMap { // nothing merges inside an object replaced whole
		if props, ok := node["properties"].(map[string]any); ok {
			for name, p := range props {
				pm, _ := p.(map[string]any)
				c, err := fromOpenAPI(pm, JoinPath(path, name))
				if err != nil {
					return nil, err
				}
				if c != nil {
					if s.props == nil {
						s.props = map[string]*Schema{}
					}
					s.props[name] = c
				}
			}
		}
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			star := "*" // any other member
			if path != "" {
				star = path + ".*"
			}
			c, err := fromOpenAPI(ap, star)
			if err != nil {
				return nil, err
			}
			s.additional = c
		}
	}
	if s.plain() {
		return nil, nil // RFC 7386 here and below: the fold's plain path
	}
	return s, nil
}

// plain reports whether s merges as RFC 7386 at and below its node.
func (s *Schema) plain() bool {
	return s.list == listAtomic && !s.atomicMap && !s.atomicEntries &&
		len(s.oneofs) == 0 && len(s.props) == 0 && s.additional == nil
}

// oneofOf returns the oneof group of s's object that member belongs to, or
// nil.
func (s *Schema) oneofOf(member string) []string {
	if s == nil {
		return nil
	}
	for _, g := range s.oneofs {
		if slices.Contains(g, member) {
			return g
		}
	}
	return nil
}

// namedRules reports whether s marks a map of named rules.
func (s *Schema) namedRules() bool { return s != nil && s.atomicEntries }

// Child returns the schema of an object's member field: its property, or
// else its additionalProperties. It returns nil where nothing at or below
// the field departs from RFC 7386 (and for a nil receiver).
func (s *Schema) Child(field string) *Schema {
	if s == nil {
		return nil
	}
	if c, ok := s.props[field]; ok {
		return c
	}
	return s.additional
}

// Items returns the schema of the items of a keyed list (list-type map or
// set), or nil.
func (s *Schema) Items() *Schema {
	if s == nil {
		return nil
	}
	return s.items
}

// WithAtomicEntries returns a copy of s in which the object at each path (a
// dotted list of property names from the schema root, e.g.
// "rules.response.success.headers") is a map of named rules: merging two
// such maps keeps the entries of both, and an entry of the winning side
// replaces the entry of the same name whole, nothing merging inside it
// (Kuadrant's strategy: merge), unless that entry is itself at a path
// given (a nested map of named rules merges entry by entry in turn). A
// segment ending in "[]" steps into the items of a keyed list
// ("perPort[].listener": the field listener of each item of perPort).
// Paths the schema does not describe are added; "." is the root itself
// (its top-level fields replaced whole: a shallow merge). It may be called
// on a nil Schema. Empty paths and empty segments are ignored.
func (s *Schema) WithAtomicEntries(paths ...string) *Schema {
	out := s
	for _, p := range paths {
		if p == "" {
			continue
		}
		if p == "." {
			// The root itself: its entries (the top-level fields) are
			// replaced whole, a shallow merge.
			out = out.markEntries(nil)
			continue
		}
		if segs := pathSegments(p); len(segs) > 0 {
			out = out.markEntries(segs)
		}
	}
	return out
}

// WithOneof returns a copy of s in which the object at path (as
// WithAtomicEntries reads paths: dotted property names, "[]" stepping into
// a keyed list's items, "." or "" the root) has a oneof of members: like a
// protobuf oneof, which Gloo Gateway's Go merges handle as one struct
// field, at most one of them is set, and the group merges as one field.
// When the winning side of a patch merge sets a member (to anything but
// null), the other members the losing side sets are removed, each of their
// leaves lost to that member's sources; a member both sides set merges as
// it would without the oneof. Members are field names; fewer than two, or
// a member already in another oneof of that object, add nothing (the
// caller validates). It may be called on a nil Schema.
func (s *Schema) WithOneof(path string, members ...string) *Schema {
	members = slices.Clone(members)
	if len(members) < 2 {
		return s
	}
	var segs []string
	if path != "." {
		segs = pathSegments(path)
	}
	return s.mark(segs, func(n *Schema) {
		for i, m := range members {
			if m == "" || n.oneofOf(m) != nil || slices.Contains(members[i+1:], m) {
				return
			}
		}
		n.oneofs = append(slices.Clip(n.oneofs), members)
	})
}

// pathSegments splits a dotted schema path into property names and "[]"
// (the items of a keyed list), empty segments dropped.
func pathSegments(p string) []string {
	var segs []string
	for _, seg := range strings.Split(p, ".") {
		name, items := strings.CutSuffix(seg, "[]")
		if name != "" {
			segs = append(segs, name)
		}
		if items && name != "" {
			segs = append(segs, "[]")
		}
	}
	return segs
}

// markEntries returns a copy of s with the node at segs marked a map of
// named rules.
func (s *Schema) markEntries(segs []string) *Schema {
	return s.mark(segs, func(n *Schema) { n.atomicEntries = true })
}

// mark returns a copy of s (copying only the nodes along the path, so
// schemas stay immutable and share the rest) with set applied to the copy
// of the node at segs.
func (s *Schema) mark(segs []string, set func(*Schema)) *Schema {
	n := &Schema{}
	if s != nil {
		*n = *s
	}
	if len(segs) == 0 {
		set(n)
		return n
	}
	if segs[0] == "[]" {
		// The items of a keyed list.
		n.items = n.items.mark(segs[1:], set)
		return n
	}
	child := n.Child(segs[0])
	n.props = maps.Clone(n.props)
	if n.props == nil {
		n.props = map[string]*Schema{}
	}
	n.props[segs[0]] = child.mark(segs[1:], set)
	return n
}

// String describes s for tests and debugging.
func (s *Schema) String() string {
	if s == nil {
		return "rfc7386"
	}
	var b strings.Builder
	s.describe(&b)
	return b.String()
}

func (s *Schema) describe(b *strings.Builder) {
	switch s.list {
	case listSet:
		b.WriteString("set")
	case listMap:
		fmt.Fprintf(b, "map%v", s.keys)
	}
	if s.atomicMap {
		b.WriteString("atomic")
	}
	if s.atomicEntries {
		b.WriteString("entries")
	}
	for _, g := range s.oneofs {
		b.WriteString("oneof(" + strings.Join(g, "|") + ")")
	}
	if s.items != nil {
		b.WriteString("[")
		s.items.describe(b)
		b.WriteString("]")
	}
	if len(s.props) > 0 || s.additional != nil {
		b.WriteString("{")
		for i, k := range sortedKeys(s.props) {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(k + ":")
			s.props[k].describe(b)
		}
		if s.additional != nil {
			b.WriteString(" *:")
			s.additional.describe(b)
		}
		b.WriteString("}")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
