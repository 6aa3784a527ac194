package policy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// DelegationPriority says how policies inherited across route delegation
// (an HTTPRoute rule handing its requests to child HTTPRoutes, kgateway's)
// meet the child's: by default the child's policies win, field by field as
// the kind's merge says; an annotation of the delegating route can make
// the parent's win instead. The zero value: children always win.
type DelegationPriority struct {
	// Annotation names the annotation of the delegating (parent) route.
	Annotation string
	// Parent are the values of Annotation that make the policies of the
	// parent route and its rules win over the child's (and over those of
	// the child's own children); any other value, or none, lets the
	// child's win.
	Parent []string
	// Child are the other values the implementation knows; when set, a
	// value in neither list is reported as unknown and read as a child
	// value (the implementation's default).
	Child []string
}

// Enabled reports whether the kind reads a delegation priority.
func (d DelegationPriority) Enabled() bool { return d.Annotation != "" }

// ParentWins reports whether value, of the delegating route's annotation,
// makes the parent's policies win, and whether it is a known value.
func (d DelegationPriority) ParentWins(value string) (parent, known bool) {
	if slices.Contains(d.Parent, value) {
		return true, true
	}
	return false, len(d.Child) == 0 || slices.Contains(d.Child, value)
}

// String renders the setting as ParseDelegationPriority reads it.
func (d DelegationPriority) String() string {
	if !d.Enabled() {
		return "none"
	}
	s := d.Annotation + " parent=" + strings.Join(d.Parent, ",")
	if len(d.Child) > 0 {
		s += " child=" + strings.Join(d.Child, ",")
	}
	return s
}

// ParseDelegationPriority reads "none" or
// "<annotation> parent=<value>[,<value>...] [child=<value>[,<value>...]]".
func ParseDelegationPriority(s string) (DelegationPriority, error) {
	f := strings.Fields(s)
	if len(f) == 1 && f[0] == "none" {
		return DelegationPriority{}, nil
	}
	if len(f) < 2 || len(f) > 3 {
		return DelegationPriority{}, fmt.Errorf("%q: want none or <annotation> parent=<values> [child=<values>]", s)
	}
	d := DelegationPriority{Annotation: f[0]}
	if errs := validation.IsQualifiedName(d.Annotation); len(errs) > 0 {
		return DelegationPriority{}, fmt.Errorf("%q is not an annotation name: %s", d.Annotation, strings.Join(errs, "; "))
	}
	for i, part := range f[1:] {
		key, vals, ok := strings.Cut(part, "=")
		list := splitList(vals)
		switch {
		case !ok || len(list) == 0:
			return DelegationPriority{}, fmt.Errorf("%q: want parent=<values> or child=<values>", part)
		case key == "parent" && i == 0:
			d.Parent = list
		case key == "child" && i == 1:
			d.Child = list
		default:
			return DelegationPriority{}, fmt.Errorf("%q: want parent=<values> first, then child=<values>", part)
		}
	}
	for _, v := range d.Child {
		if slices.Contains(d.Parent, v) {
			return DelegationPriority{}, fmt.Errorf("value %q is both parent and child", v)
		}
	}
	return d, nil
}

func (d DelegationPriority) clone() DelegationPriority {
	d.Parent, d.Child = slices.Clone(d.Parent), slices.Clone(d.Child)
	return d
}
