package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/attache-dev/attache/pkg/diag"
)

// Oneof is a group of fields of one object of a kind's policies of which
// at most one is set, merging as one field: a protobuf oneof, which an
// implementation merging its options by Go struct field (Gloo Gateway's
// ShallowMergeRouteOptions) handles as one field. Where the kind's
// policies patch-merge, the member the winning policy sets takes the
// oneof whole: the other members the losing one sets are dropped (lost to
// it), rather than kept beside it.
type Oneof struct {
	// Path is the dotted path below spec to the object holding the
	// members ("." for the spec proper itself); a segment ending in "[]"
	// steps into the items of a list (honoured where the kind's schema
	// merges that list item by item).
	Path string
	// Members are the oneof's field names, at least two, each once.
	Members []string
}

// String renders the oneof in its annotation form: the path, a dot, then
// the members separated by "|" ("options.hostRewrite|autoHostRewrite";
// the members alone for the spec itself).
func (o Oneof) String() string {
	ms := strings.Join(o.Members, "|")
	if o.Path == "." || o.Path == "" {
		return ms
	}
	return specPrefixed(BackendRefPath(o.Path)) + "." + ms
}

// OneofsString renders a kind's oneofs as the annotation value ("none"
// for none).
func OneofsString(os []Oneof) string { return entriesString(os) }

// ParseOneofs reads the annotation attache.dev/oneofs: entries separated
// by ";", each a dotted path below spec to an object, a dot, then the
// oneof's members separated by "|" ("options.ratelimit|rateLimitConfigs";
// "a|b" for members of the spec itself; a leading "spec." dropped);
// "none" for none.
func ParseOneofs(v string) ([]Oneof, error) {
	os, err := parseEntries(v, "options.hostRewrite|autoHostRewrite", func(entry string) (Oneof, error) {
		if strings.IndexFunc(entry, unicode.IsSpace) >= 0 {
			return Oneof{}, fmt.Errorf("oneof %q: want <path>.<member>|<member>... without spaces", entry)
		}
		e := strings.TrimPrefix(entry, "spec.")
		head, rest, ok := strings.Cut(e, "|")
		if !ok {
			return Oneof{}, fmt.Errorf("oneof %q: want <path>.<member>|<member>... (at least two members)", entry)
		}
		o := Oneof{Path: "."}
		if i := strings.LastIndexByte(head, '.'); i == 0 {
			return Oneof{}, fmt.Errorf("oneof %q: %q is not a dotted path below spec to an object (the members alone for the spec itself)", entry, ".")
		} else if i > 0 {
			o.Path, head = head[:i], head[i+1:]
		}
		o.Members = append([]string{head}, strings.Split(rest, "|")...)
		return o, o.validate()
	})
	if err != nil {
		return nil, err
	}
	return os, validateOneofs(os)
}

// validate checks the path and the members of one oneof.
func (o Oneof) validate() error {
	if oneofPath(o.Path) != "." {
		if err := BackendRefPath(o.Path).validate(); err != nil || strings.ContainsAny(o.Path, "|;") {
			return fmt.Errorf("oneof %s: %q is not a dotted path below spec to an object (segments may end in [] for lists), or . for the spec itself", o, o.Path)
		}
	}
	if len(o.Members) < 2 {
		return fmt.Errorf("oneof %s: want at least two members", o)
	}
	for i, m := range o.Members {
		if m == "" || strings.ContainsAny(m, ".|;,=[]*") || strings.IndexFunc(m, unicode.IsSpace) >= 0 {
			return fmt.Errorf("oneof %s: member %q is not a field name", o, m)
		}
		if slices.Contains(o.Members[i+1:], m) {
			return fmt.Errorf("oneof %s: member %q given twice", o, m)
		}
	}
	return nil
}

// validateOneofs checks each oneof, and that no field is a member of two
// oneofs of one object.
func validateOneofs(os []Oneof) error {
	owner := map[[2]string]Oneof{}
	for _, o := range os {
		if err := o.validate(); err != nil {
			return err
		}
		for _, m := range o.Members {
			key := [2]string{oneofPath(o.Path), m}
			if prev, dup := owner[key]; dup {
				return fmt.Errorf("oneof %s: member %q is in oneof %s already", o, m, prev)
			}
			owner[key] = o
		}
	}
	return nil
}

// oneofPath is a Oneof's path with the spec itself written ".".
func oneofPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func cloneOneofs(os []Oneof) []Oneof {
	if os == nil {
		return nil
	}
	out := make([]Oneof, len(os))
	for i, o := range os {
		out[i] = Oneof{Path: oneofPath(o.Path), Members: slices.Clone(o.Members)}
	}
	return out
}

// dropShadowedMembers keeps, of the members of one of its kind's oneofs
// that the policy sets in one object, the one declared last (Members'
// order), as protobuf's JSON decoding does (golang/protobuf jsonpb: each
// member set in declaration order, a later one clearing the earlier;
// Gloo Gateway decodes its options so, and its CRD's schema admits
// several): the others are removed from the policy's spec (copied where
// changed, never the object's own maps) and reported in Ignored, naming
// the object and what is kept.
func (p *Policy) dropShadowedMembers() {
	for _, o := range p.Kind.Oneofs {
		report := func(field, kept string, dropped []string) {
			p.Ignored = append(p.Ignored, diag.Newf(p.Ref, field, "sets %s, members of one oneof (%s): its implementation decodes the one declared last only, %s; %s ignored",
				strings.Join(append(slices.Clone(dropped), kept), " and "), strings.Join(o.Members, "|"), kept, strings.Join(dropped, " and ")))
		}
		if o.Path == "." || o.Path == "" {
			if v, changed := withoutShadowed(p.Spec, "spec", nil, nil, o, report); changed {
				p.Spec = v.(map[string]any)
			}
			continue
		}
		names, lists := BackendRefPath(o.Path).segments()
		if v, changed := withoutShadowed(p.Spec, "spec", names, lists, o, report); changed {
			p.Spec = v.(map[string]any)
		}
	}
}

// withoutShadowed is v with, in each object at names (lists marking the
// segments that are lists), the members of o set before the last one set
// removed; what it changes is copied, and changed says whether anything
// was. report is told of each object changed.
func withoutShadowed(v any, field string, names []string, lists []bool, o Oneof, report func(field, kept string, dropped []string)) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, false
	}
	if len(names) == 0 {
		var set []string
		for _, name := range o.Members {
			if x, ok := m[name]; ok && x != nil {
				set = append(set, name)
			}
		}
		if len(set) < 2 {
			return v, false
		}
		c := maps.Clone(m)
		for _, name := range set[:len(set)-1] {
			delete(c, name)
		}
		report(field, set[len(set)-1], set[:len(set)-1])
		return c, true
	}
	child, ok := m[names[0]]
	if !ok || child == nil {
		return v, false
	}
	f := field + "." + names[0]
	var nv any
	if lists[0] {
		l, ok := child.([]any)
		if !ok {
			return v, false
		}
		var nl []any
		for i, e := range l {
			if ne, changed := withoutShadowed(e, fmt.Sprintf("%s[%d]", f, i), names[1:], lists[1:], o, report); changed {
				if nl == nil {
					nl = slices.Clone(l)
				}
				nl[i] = ne
			}
		}
		if nl == nil {
			return v, false
		}
		nv = nl
	} else {
		var changed bool
		if nv, changed = withoutShadowed(child, f, names[1:], lists[1:], o, report); !changed {
			return v, false
		}
	}
	c := maps.Clone(m)
	c[names[0]] = nv
	return c, true
}
