package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// DelegationPriority says how policies inherited across route delegation
// (an HTTPRoute rule handing its requests to child HTTPRoutes: kgateway's
// and Gloo Gateway's) meet the child's. In one mode (Parent, Child:
// kgateway's), the child's policies win, field by field as the kind's
// merge says, unless an annotation of the delegating route makes the
// parent's win. In the other (ChildFields: Gloo Gateway's), the parent's
// win, unless that annotation lists fields in which the child's do. The
// zero value: children always win.
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
	// ChildFields, when set (instead of Parent and Child), makes the
	// parent's policies win by default, the annotation's value naming
	// where the child's win instead: "*" everywhere, else a comma
	// separated list of entries of the object at this path of the spec
	// ("." for its top-level fields), compared in any case, spaces
	// around them ignored.
	ChildFields string
	// Groups name entries of ChildFields that the annotation names by the
	// name of their group only (Gloo Gateway's oneofs: hostRewrite by
	// hostRewriteType).
	Groups []FieldGroup
}

// FieldGroup is a name standing for several entries of a map.
type FieldGroup struct {
	// Name is what the annotation's value names the group by (a oneof's
	// name), compared in any case.
	Name string
	// Keys are the entries the group stands for, as the map writes them;
	// a key is in one group only.
	Keys []string
}

// Enabled reports whether the kind reads a delegation priority.
func (d DelegationPriority) Enabled() bool { return d.Annotation != "" }

// isZero reports whether nothing of d is set (values without an
// annotation are set, and refused by validate).
func (d DelegationPriority) isZero() bool {
	return !d.Enabled() && len(d.Parent) == 0 && len(d.Child) == 0 && d.ChildFields == "" && len(d.Groups) == 0
}

// ChildWinsIn reads value, the delegating route's annotation, in the
// ChildFields mode: all says the child's policies win everywhere, else
// wins reports, for an entry of ChildFields (by its key as written),
// whether the child's win in it (nil: nowhere).
func (d DelegationPriority) ChildWinsIn(value string) (all bool, wins func(key string) bool) {
	names := map[string]bool{}
	for _, v := range strings.Split(value, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "*" {
			return true, nil
		}
		if v != "" {
			names[v] = true
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	group := map[string]string{}
	for _, g := range d.Groups {
		for _, k := range g.Keys {
			group[k] = strings.ToLower(g.Name)
		}
	}
	return false, func(key string) bool {
		if g, ok := group[key]; ok {
			return names[g]
		}
		return names[strings.ToLower(key)]
	}
}

// ParentWins reports whether value, of the delegating route's annotation,
// makes the parent's policies win, and whether it is a known value
// (Parent and Child mode).
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
	if d.ChildFields != "" {
		s := d.Annotation + " child-fields=" + childFieldsWord(d.ChildFields)
		if len(d.Groups) > 0 {
			gs := make([]string, len(d.Groups))
			for i, g := range d.Groups {
				gs[i] = g.Name + ":" + strings.Join(g.Keys, "|")
			}
			s += " groups=" + strings.Join(gs, ",")
		}
		return s
	}
	s := d.Annotation + " parent=" + strings.Join(d.Parent, ",")
	if len(d.Child) > 0 {
		s += " child=" + strings.Join(d.Child, ",")
	}
	return s
}

// childFieldsWord writes a ChildFields path as the annotation reads it
// back: a path starting with a field named spec gets the "spec." that
// parsing drops.
func childFieldsWord(p string) string {
	if p == "spec" || strings.HasPrefix(p, "spec.") {
		return "spec." + p
	}
	return p
}

// ParseDelegationPriority reads "none",
// "<annotation> parent=<value>[,<value>...] [child=<value>[,<value>...]]"
// or "<annotation> child-fields=<path> [groups=<name>:<key>|<key>...,...]",
// a leading "spec." of the path dropped (the path is below spec).
func ParseDelegationPriority(s string) (DelegationPriority, error) {
	f := strings.Fields(s)
	if len(f) == 1 && f[0] == "none" {
		return DelegationPriority{}, nil
	}
	const want = "want none, <annotation> parent=<values> [child=<values>] or <annotation> child-fields=<path> [groups=<name>:<key>|<key>,...]"
	if len(f) < 2 || len(f) > 3 {
		return DelegationPriority{}, fmt.Errorf("%q: %s", s, want)
	}
	d := DelegationPriority{Annotation: f[0]}
	if strings.HasPrefix(f[1], "child-fields=") {
		var err error
		if d, err = parseChildFields(d, f[1:]); err == nil {
			err = d.validate()
		}
		if err != nil {
			return DelegationPriority{}, err
		}
		return d, nil
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
	if err := d.validate(); err != nil {
		return DelegationPriority{}, err
	}
	return d, nil
}

// parseChildFields reads the child-fields=<path> [groups=...] words f of
// a delegation priority for d.Annotation; validate checks what it read.
func parseChildFields(d DelegationPriority, f []string) (DelegationPriority, error) {
	d.ChildFields = strings.TrimPrefix(strings.TrimPrefix(f[0], "child-fields="), "spec.")
	if d.ChildFields == "" {
		return DelegationPriority{}, fmt.Errorf("%s: want a dotted path of field names below spec, or . for its top-level fields", f[0])
	}
	if len(f) == 1 {
		return d, nil
	}
	gs, ok := strings.CutPrefix(f[1], "groups=")
	if !ok {
		return DelegationPriority{}, fmt.Errorf("%q: want groups=<name>:<key>|<key>,... after child-fields", f[1])
	}
	for _, g := range strings.Split(gs, ",") {
		name, keys, ok := strings.Cut(g, ":")
		if !ok {
			return DelegationPriority{}, fmt.Errorf("group %q: want <name>:<key>|<key>...", g)
		}
		d.Groups = append(d.Groups, FieldGroup{Name: name, Keys: strings.Split(keys, "|")})
	}
	return d, nil
}

// validate checks the shape of d, however it was given (annotation or
// Go): an annotation name, exactly one of the two forms (parent=
// values, or child-fields= with its groups), and words that read back
// as written. Where the setting may apply is Kind.complete's check.
func (d DelegationPriority) validate() error {
	if !d.Enabled() {
		if !d.isZero() {
			return fmt.Errorf("parent, child, child-fields or groups given without an annotation: want the annotation of the delegating route")
		}
		return nil
	}
	if errs := validation.IsQualifiedName(d.Annotation); len(errs) > 0 {
		return fmt.Errorf("%q is not an annotation name: %s", d.Annotation, strings.Join(errs, "; "))
	}
	if d.ChildFields != "" {
		if len(d.Parent) > 0 || len(d.Child) > 0 {
			return fmt.Errorf("%s: child-fields and parent/child values are two forms: give one", d.Annotation)
		}
		return d.validateChildFields()
	}
	if len(d.Groups) > 0 {
		return fmt.Errorf("%s: groups name entries of child-fields, which is not given", d.Annotation)
	}
	if len(d.Parent) == 0 {
		return fmt.Errorf("%s: want parent=<values> (the values making the parent's policies win) or child-fields=<path>", d.Annotation)
	}
	for _, v := range append(slices.Clone(d.Parent), d.Child...) {
		if v == "" || strings.ContainsAny(v, ",") || strings.IndexFunc(v, unicode.IsSpace) >= 0 {
			return fmt.Errorf("value %q: want a word with no comma or space", v)
		}
	}
	for _, v := range d.Child {
		if slices.Contains(d.Parent, v) {
			return fmt.Errorf("value %q is both parent and child", v)
		}
	}
	return nil
}

// validateChildFields checks the child-fields form of d.
func (d DelegationPriority) validateChildFields() error {
	if d.ChildFields != "." {
		for _, seg := range strings.Split(d.ChildFields, ".") {
			if seg == "" || strings.ContainsAny(seg, "[]*,=|:") || strings.IndexFunc(seg, unicode.IsSpace) >= 0 {
				return fmt.Errorf("child-fields=%q: want a dotted path of field names below spec, or . for its top-level fields", d.ChildFields)
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range d.Groups {
		word := g.Name + ":" + strings.Join(g.Keys, "|")
		if g.Name == "" || len(g.Keys) == 0 || strings.ContainsAny(g.Name, "|*,:") || strings.IndexFunc(g.Name, unicode.IsSpace) >= 0 {
			return fmt.Errorf("group %q: want <name>:<key>|<key>...", word)
		}
		for _, k := range g.Keys {
			if k == "" || strings.ContainsAny(k, ":*|,") || strings.IndexFunc(k, unicode.IsSpace) >= 0 {
				return fmt.Errorf("group %q: key %q: want a field name", word, k)
			}
			if seen[k] {
				return fmt.Errorf("group %q: key %q is in another group already", word, k)
			}
			seen[k] = true
		}
	}
	return nil
}

func (d DelegationPriority) clone() DelegationPriority {
	d.Parent, d.Child = slices.Clone(d.Parent), slices.Clone(d.Child)
	if d.Groups != nil {
		gs := make([]FieldGroup, len(d.Groups))
		for i, g := range d.Groups {
			gs[i] = FieldGroup{Name: g.Name, Keys: slices.Clone(g.Keys)}
		}
		d.Groups = gs
	}
	return d
}
