package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// RegexField is a field of a kind's policies holding a regular expression
// that the implementation compiles when it translates a policy (Envoy
// Gateway: Go's regexp, RE2 syntax, for rate-limit and authorization
// matches): a policy whose expression does not compile is one its
// implementation refuses, as one with a value out of range.
type RegexField struct {
	// Path is the dotted path below spec to the string; segments may end
	// in "[]" (each entry of that list).
	Path BackendRefPath
	// When, if set, is "field=value": the expression is judged only where
	// the object holding it has that field with that value (a match's
	// type: RegularExpression).
	When string
}

// String renders the field in its annotation form:
// "rateLimit.global.rules[].clientSelectors[].headers[].value when=type=RegularExpression".
func (r RegexField) String() string {
	s := specPrefixed(r.Path)
	if r.When != "" {
		s += " when=" + r.When
	}
	return s
}

// RegexFieldsString renders a kind's regex fields as the annotation value
// ("none" for none).
func RegexFieldsString(rs []RegexField) string { return entriesString(rs) }

// ParseRegexFields reads the annotation attache.dev/regex-fields: entries
// separated by ";", each "<path>" optionally followed by
// " when=<field>=<value>"; "none" for none.
func ParseRegexFields(v string) ([]RegexField, error) {
	return parseEntries(v, "authorization.rules[].operation.path.value when=type=RegularExpression", func(entry string) (RegexField, error) {
		words := strings.Fields(entry)
		r := RegexField{Path: BackendRefPath(strings.TrimPrefix(words[0], "spec."))}
		for _, w := range words[1:] {
			val, ok := strings.CutPrefix(w, "when=")
			if !ok || r.When != "" {
				return RegexField{}, fmt.Errorf("regex field %s: %q is not when=<field>=<value>", r.Path, w)
			}
			r.When = val
		}
		return r, r.validate()
	})
}

// validate checks the path and the condition.
func (r RegexField) validate() error {
	if err := r.Path.validate(); err != nil {
		return fmt.Errorf("regex field: %v", err)
	}
	if r.When != "" {
		f, v, ok := strings.Cut(r.When, "=")
		if !ok || f == "" || v == "" || strings.ContainsAny(r.When, " ,;") || strings.Contains(v, "=") {
			return fmt.Errorf("regex field %s: when=%s: want field=value", r.Path, r.When)
		}
	}
	return nil
}

// BadRegexes checks the policy's fields at its kind's RegexFields: one
// problem per string that does not compile as a regular expression (RE2
// syntax, as Go's regexp reads it), in the order of the kind's fields. A
// field absent, null or not a string is not judged (the CRD's schema
// refuses it). A parsed policy answers what Parse found.
func (p *Policy) BadRegexes() []FieldProblem {
	if p.regexesRead {
		return p.badRegexes
	}
	return p.checkRegexes()
}

// checkRegexes is BadRegexes, compiling.
func (p *Policy) checkRegexes() []FieldProblem {
	var out []FieldProblem
	for _, r := range p.Kind.RegexFields {
		names, lists := r.Path.segments()
		last := len(names) - 1
		walkPath(p.Spec, "spec", names[:last], lists[:last], func(holder any, field string) {
			m, ok := holder.(map[string]any)
			if !ok {
				return
			}
			if r.When != "" {
				f, v, _ := strings.Cut(r.When, "=")
				if got, _ := m[f].(string); got != v {
					return
				}
			}
			walkPath(m, field, names[last:], lists[last:], func(v any, at string) {
				s, ok := v.(string)
				if !ok {
					return
				}
				if _, err := regexp.Compile(s); err != nil {
					out = append(out, FieldProblem{Field: at, Message: fmt.Sprintf("regex %q is invalid: %v", s, err)})
				}
			})
		})
	}
	return out
}
