package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	luaparse "github.com/yuin/gopher-lua/parse"

	"github.com/attache-dev/attache/pkg/envoylua"
	"github.com/attache-dev/attache/pkg/holderdata"
)

// RegexField is a field of a kind's policies holding a regular expression
// that the implementation compiles when it translates a policy (Envoy
// Gateway: Go's regexp, RE2 syntax, for rate-limit and authorization
// matches), with Syntax "lua" a Lua chunk it parses (Envoy Gateway's
// Lua scripts, which it loads with gopher-lua), or with Syntax
// "envoy-lua" a Lua script it runs against Envoy's Lua API (Envoy
// Gateway's Strict validation; package envoylua): a policy whose field
// does not compile, or fails, is one its implementation refuses, as one
// with a value out of range.
type RegexField struct {
	// Path is the dotted path below spec to the string; segments may end
	// in "[]" (each entry of that list). A path ending at a reference the
	// kind's ObjectRefs read with content=lua (a ConfigMap holding a Lua
	// script) judges the script that reference reads, where its text is
	// kept (package holderdata); a reference that does not resolve is
	// ObjectRefs' to report.
	Path BackendRefPath
	// When, if set, is "field=value": the expression is judged only where
	// the object holding it has that field with that value (a match's
	// type: RegularExpression).
	When string
	// Syntax is what the field holds: "" for a regular expression (RE2),
	// SyntaxLua for a Lua chunk, SyntaxEnvoyLua for a Lua script run as
	// Envoy Gateway's Strict validation runs it.
	Syntax string
	// Unless, if set, is "<parameters path>=<value>[|<value>...]": the
	// field is judged per Gateway, except where the data-plane parameters
	// that Gateway runs with have one of those values there (Envoy
	// Gateway's EnvoyProxy luaValidation=Disabled); the path is one of
	// ParametersPaths.
	Unless string
}

// Syntaxes of RegexField.Syntax.
const (
	// SyntaxLua is a Lua chunk (Lua 5.1, as gopher-lua parses it).
	SyntaxLua = "lua"
	// SyntaxEnvoyLua is a Lua script for Envoy's Lua filter, run as
	// Envoy Gateway's Strict validation runs it (envoylua.Validate): it
	// fails when it does not parse, or raises a Lua error when its entry
	// points run against Envoy's stream-handle API. A script that reaches
	// one of attache's own bounds is not judged.
	SyntaxEnvoyLua = "envoy-lua"
)

// UnlessHolds reports whether the Unless condition of r holds in the
// data-plane parameters' spec (false without a condition).
func (r RegexField) UnlessHolds(spec map[string]any) bool {
	path, want, ok := strings.Cut(r.Unless, "=")
	if !ok {
		return false
	}
	_, values := ValuesAt(spec, BackendRefPath(path))
	return slices.ContainsFunc(strings.Split(want, "|"), func(w string) bool { return slices.Contains(values, w) })
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
// separated by ";", each "<path>" optionally followed by " syntax=lua" (or
// " syntax=envoy-lua"), " when=<field>=<value>" and
// " unless=<parameters path>=<value>[|<value>...]"; "none" for none.
func ParseRegexFields(v string) ([]RegexField, error) {
	return parseEntries(v, "authorization.rules[].operation.path.value when=type=RegularExpression", func(entry string) (RegexField, error) {
		words := strings.Fields(entry)
		r := RegexField{Path: BackendRefPath(strings.TrimPrefix(words[0], "spec."))}
		for _, w := range words[1:] {
			if syn, ok := strings.CutPrefix(w, "syntax="); ok && r.Syntax == "" {
				if syn != SyntaxLua && syn != SyntaxEnvoyLua {
					return RegexField{}, fmt.Errorf("regex field %s: syntax=%s: want syntax=%s or syntax=%s (a regular expression needs none)", r.Path, syn, SyntaxLua, SyntaxEnvoyLua)
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
				return RegexField{}, fmt.Errorf("regex field %s: %q is not when=<field>=<value>, syntax=%s|%s or unless=<parameters path>=<value>", r.Path, w, SyntaxLua, SyntaxEnvoyLua)
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
		if !ok || v == "" || strings.ContainsAny(r.Unless, " ,;") || strings.Contains(v, "=") || slices.Contains(strings.Split(v, "|"), "") {
			return fmt.Errorf("regex field %s: unless=%s: want <parameters path>=<value>[|<value>...]", r.Path, r.Unless)
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
// refuses it), nor a reference (see BadRegexesWhere). A parsed policy
// answers what Parse found.
func (p *Policy) BadRegexes() []FieldProblem {
	if p.regexesRead {
		return p.badRegexes
	}
	return p.checkRegexes()
}

// BadRegexesWhere checks the kind's RegexFields that keep accepts (each
// time: for the fields with an Unless condition, judged per Gateway); a
// field ending at a reference reads the script it names through h (nil:
// references are not judged).
func (p *Policy) BadRegexesWhere(keep func(RegexField) bool, h *Holders) []FieldProblem {
	return p.checkRegexesWhere(keep, h)
}

// checkRegexes is BadRegexes, compiling: the fields without an Unless
// condition, which hold whatever the target.
func (p *Policy) checkRegexes() []FieldProblem {
	return p.checkRegexesWhere(func(r RegexField) bool { return r.Unless == "" }, nil)
}

// checkRegexesWhere compiles the fields keep accepts. Of a Lua script
// that does not parse, only the first problem is said (a field with
// syntax=lua and one with syntax=envoy-lua both refuse it).
func (p *Policy) checkRegexesWhere(keep func(RegexField) bool, h *Holders) []FieldProblem {
	var out []FieldProblem
	unparsed := map[string]bool{}
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
				from := ""
				// A script from a ConfigMap comes with its verdicts (made
				// where its text was read); an inline one is checked here.
				var verdict *holderdata.LuaVerdict
				if _, isRef := v.(map[string]any); isRef && r.Syntax != "" && h != nil {
					verdict, from, ok = p.scriptAt(at, *h)
				}
				if !ok {
					return
				}
				switch r.Syntax {
				case SyntaxLua:
					msg := ""
					if verdict != nil {
						msg = verdict.Syntax
					} else if _, err := luaparse.Parse(strings.NewReader(s), "<inline>"); err != nil {
						msg = strings.Join(strings.Fields(err.Error()), " ")
					}
					if msg != "" {
						unparsed[at] = true
						out = append(out, FieldProblem{Field: at, Message: from + "Lua does not parse: " + msg})
					}
				case SyntaxEnvoyLua:
					if unparsed[at] {
						return
					}
					msg := ""
					if verdict != nil {
						msg = verdict.Strict
					} else if v := envoylua.Validate(s); v.Err != nil {
						msg = v.Err.Error()
					}
					if msg != "" {
						out = append(out, FieldProblem{Field: at, Message: from + "the Lua script fails when run against Envoy's Lua API, as Envoy Gateway's Strict validation runs it: " + msg})
					}
				default:
					if _, err := regexp.Compile(s); err != nil {
						out = append(out, FieldProblem{Field: at, Message: fmt.Sprintf("regex %q is invalid: %v", s, err)})
					}
				}
			})
		})
	}
	return out
}

// scriptAt is the verdicts of the checks of the Lua script the reference
// at field reads (ContentLua), and the words naming where it comes from;
// false when there is none to judge: the reference is not one the kind
// reads with content=lua, does not resolve, names another namespace
// without a grant, or its holder's script is not judged (not read, too
// long, or several keys Envoy Gateway may read any of).
func (p *Policy) scriptAt(field string, h Holders) (*holderdata.LuaVerdict, string, bool) {
	for _, ref := range p.ObjectRefs {
		if ref.Field != field || ref.Path.Content != ContentLua || !ref.Judged() {
			continue
		}
		o := ref.Object
		if (h.Unread != nil && h.Unread(o)) || (o.Namespace != p.Ref.Namespace && (h.Granted == nil || !h.Granted(o))) || h.Keys == nil || h.Facts == nil {
			return nil, "", false
		}
		have, found := h.Keys(o)
		if !found {
			return nil, "", false
		}
		f, ok := luaFact(ref, have, h.Facts(o))
		if !ok || !f.Lua.Judged {
			return nil, "", false
		}
		v := f.Lua.Check()
		return &v, fmt.Sprintf("%s %s/%s: ", o.Kind, o.Namespace, o.Name), true
	}
	return nil, "", false
}
