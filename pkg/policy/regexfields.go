package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	luaparse "github.com/yuin/gopher-lua/parse"
)

// RegexField is a field of a kind's policies holding a regular expression
// that the implementation compiles when it translates a policy (Envoy
// Gateway: Go's regexp, RE2 syntax, for rate-limit and authorization
// matches), or with Syntax "lua" a Lua chunk it parses (Envoy Gateway's
// inline Lua scripts, which it loads with gopher-lua): a policy whose
// field does not compile is one its implementation refuses, as one with a
// value out of range.
type RegexField struct {
	// Path is the dotted path below spec to the string; segments may end
	// in "[]" (each entry of that list).
	Path BackendRefPath
	// When, if set, is "field=value": the expression is judged only where
	// the object holding it has that field with that value (a match's
	// type: RegularExpression).
	When string
	// Syntax is what the field holds: "" for a regular expression (RE2),
	// SyntaxLua for a Lua chunk.
	Syntax string
	// Unless, if set, is "<parameters path>=<value>": the field is judged
	// per Gateway, except where the data-plane parameters that Gateway
	// runs with have that value there (Envoy Gateway's EnvoyProxy
	// luaValidation=Disabled); the path is one of ParametersPaths.
	Unless string
}

// SyntaxLua is RegexField.Syntax for a Lua chunk (Lua 5.1, as gopher-lua
// parses it).
const SyntaxLua = "lua"

// UnlessHolds reports whether the Unless condition of r holds in the
// data-plane parameters' spec (false without a condition).
func (r RegexField) UnlessHolds(spec map[string]any) bool {
	path, want, ok := strings.Cut(r.Unless, "=")
	if !ok {
		return false
	}
	_, values := ValuesAt(spec, BackendRefPath(path))
	return slices.Contains(values, want)
}

// String renders the field in its annotation form:
// "rateLimit.global.rules[].clientSelectors[].headers[].value when=type=RegularExpression",
// "lua[].inline syntax=lua when=type=Inline unless=luaValidation=Disabled".
func (r RegexField) String() string {
	s := specPrefixed(r.Path)
	if r.Syntax != "" {
		s += " syntax=" + r.Syntax
	}
	if r.When != "" {
		s += " when=" + r.When
	}
	if r.Unless != "" {
		s += " unless=" + r.Unless
	}
	return s
}

// RegexFieldsString renders a kind's regex fields as the annotation value
// ("none" for none).
func RegexFieldsString(rs []RegexField) string { return entriesString(rs) }

// ParseRegexFields reads the annotation attache.dev/regex-fields: entries
// separated by ";", each "<path>" optionally followed by " syntax=lua",
// " when=<field>=<value>" and " unless=<parameters path>=<value>"; "none"
// for none.
func ParseRegexFields(v string) ([]RegexField, error) {
	return parseEntries(v, "authorization.rules[].operation.path.value when=type=RegularExpression", func(entry string) (RegexField, error) {
		words := strings.Fields(entry)
		r := RegexField{Path: BackendRefPath(strings.TrimPrefix(words[0], "spec."))}
		for _, w := range words[1:] {
			if syn, ok := strings.CutPrefix(w, "syntax="); ok && r.Syntax == "" {
				if syn != SyntaxLua {
					return RegexField{}, fmt.Errorf("regex field %s: syntax=%s: want syntax=%s (a regular expression needs none)", r.Path, syn, SyntaxLua)
				}
				r.Syntax = syn
				continue
			}
			if unless, ok := strings.CutPrefix(w, "unless="); ok && r.Unless == "" {
				r.Unless = unless
				continue
			}
			val, ok := strings.CutPrefix(w, "when=")
			if !ok || r.When != "" {
				return RegexField{}, fmt.Errorf("regex field %s: %q is not when=<field>=<value>, syntax=%s or unless=<parameters path>=<value>", r.Path, w, SyntaxLua)
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
	if r.Unless != "" {
		path, v, ok := strings.Cut(r.Unless, "=")
		if !ok || v == "" || strings.ContainsAny(r.Unless, " ,;") || strings.Contains(v, "=") {
			return fmt.Errorf("regex field %s: unless=%s: want <parameters path>=<value>", r.Path, r.Unless)
		}
		if err := BackendRefPath(path).validate(); err != nil {
			return fmt.Errorf("regex field %s: unless=%s: %v", r.Path, r.Unless, err)
		}
		if err := parametersPathRead(BackendRefPath(path)); err != nil {
			return fmt.Errorf("regex field %s: unless=%s: %v", r.Path, r.Unless, err)
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

// BadRegexesWhere checks the kind's RegexFields that keep accepts (each
// time: for the fields with an Unless condition, judged per Gateway).
func (p *Policy) BadRegexesWhere(keep func(RegexField) bool) []FieldProblem {
	return p.checkRegexesWhere(keep)
}

// checkRegexes is BadRegexes, compiling: the fields without an Unless
// condition, which hold whatever the target.
func (p *Policy) checkRegexes() []FieldProblem {
	return p.checkRegexesWhere(func(r RegexField) bool { return r.Unless == "" })
}

// checkRegexesWhere compiles the fields keep accepts.
func (p *Policy) checkRegexesWhere(keep func(RegexField) bool) []FieldProblem {
	var out []FieldProblem
	for _, r := range p.Kind.RegexFields {
		if !keep(r) {
			continue
		}
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
				if r.Syntax == SyntaxLua {
					if _, err := luaparse.Parse(strings.NewReader(s), "<inline>"); err != nil {
						out = append(out, FieldProblem{Field: at, Message: "Lua does not parse: " + strings.Join(strings.Fields(err.Error()), " ")})
					}
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
