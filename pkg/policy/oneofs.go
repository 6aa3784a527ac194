package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
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

// checkOneofs refuses a policy setting two members of one of its kind's
// oneofs in one object: no protobuf decoding of it succeeds (Gloo Gateway
// cannot read such an option at all), so it takes effect nowhere.
func (p *Policy) checkOneofs(spec map[string]any, bad func(string, string, ...any)) {
	for _, o := range p.Kind.Oneofs {
		check := func(v any, field string) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			var set []string
			for _, name := range o.Members {
				if x, ok := m[name]; ok && x != nil {
					set = append(set, name)
				}
			}
			if len(set) > 1 {
				bad(field, "sets %s, members of one oneof (%s): its implementation decodes a policy with one of them only, so it refuses this one; set one",
					strings.Join(set, " and "), strings.Join(o.Members, "|"))
			}
		}
		if o.Path == "." || o.Path == "" {
			check(spec, "spec")
			continue
		}
		names, lists := BackendRefPath(o.Path).segments()
		walkPath(spec, "spec", names, lists, check)
	}
}
