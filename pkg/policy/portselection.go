package policy

import (
	"fmt"
	"strings"
)

// PortSelection says that a kind's spec holds one configuration per
// listener port and one for the other ports: a list at top-level field
// List whose items name a port in field Key and hold a configuration in
// field Value, and a configuration at top-level field Default. At a
// listener the policies merge first (entries of List with the same port
// merging as the kind's merge says), and then the entry for the listener's
// port replaces Default whole, unspecified fields not inherited from it:
// the effective policy there is that configuration, its fields at the top
// level in place of List and Default (kgateway's ListenerPolicy perPort and
// default). Elsewhere than at a listener the spec is left as it is.
type PortSelection struct {
	List, Key, Value, Default string
}

// Enabled reports whether the kind selects configurations by port.
func (s PortSelection) Enabled() bool { return s.List != "" }

// String renders s in the annotation's form: "perPort[].listener
// key=port default=default".
func (s PortSelection) String() string {
	if !s.Enabled() {
		return "none"
	}
	return fmt.Sprintf("%s[].%s key=%s default=%s", s.List, s.Value, s.Key, s.Default)
}

// ParsePortSelection reads the port-selection annotation: "none", or
// "<list>[].<value> key=<field> default=<field>", every name a top-level
// field (of the spec for the list and the default, of an item for the
// value and the key).
func ParsePortSelection(v string) (PortSelection, error) {
	v = strings.TrimSpace(v)
	if v == "none" {
		return PortSelection{}, nil
	}
	words := strings.Fields(v)
	if len(words) != 3 {
		return PortSelection{}, fmt.Errorf(`port selection %q: want "<list>[].<value> key=<field> default=<field>" or "none"`, v)
	}
	list, value, ok := strings.Cut(words[0], "[].")
	if !ok {
		return PortSelection{}, fmt.Errorf(`port selection %q: %q is not "<list>[].<value>"`, v, words[0])
	}
	s := PortSelection{List: list, Value: value}
	for _, w := range words[1:] {
		name, val, ok := strings.Cut(w, "=")
		switch {
		case !ok:
			return PortSelection{}, fmt.Errorf("port selection %q: %q is not key=<field> or default=<field>", v, w)
		case name == "key" && s.Key == "":
			s.Key = val
		case name == "default" && s.Default == "":
			s.Default = val
		default:
			return PortSelection{}, fmt.Errorf("port selection %q: unexpected %q (want key= and default= once each)", v, w)
		}
	}
	if err := s.validate(); err != nil {
		return PortSelection{}, fmt.Errorf("port selection %q: %w", v, err)
	}
	return s, nil
}

// validate checks that every name is a field name and that the list and
// the default are different fields.
func (s PortSelection) validate() error {
	for _, f := range []struct{ what, name string }{{"list", s.List}, {"value", s.Value}, {"key", s.Key}, {"default", s.Default}} {
		if !fieldName(f.name) {
			return fmt.Errorf("the %s %q is not a field name", f.what, f.name)
		}
	}
	if s.List == s.Default {
		return fmt.Errorf("the list and the default are the same field %q", s.List)
	}
	if s.Key == s.Value {
		return fmt.Errorf("an item's key and value are the same field %q", s.Key)
	}
	return nil
}

// fieldName reports whether f is one JSON field name, not a path.
func fieldName(f string) bool {
	return f != "" && !strings.ContainsAny(f, ".[]= \t")
}
