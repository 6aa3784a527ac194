package policy

import (
	"strings"
	"testing"
)

// The annotation's grammar and errors, and the check: only strings at the
// path, only where the condition holds, each that does not compile.
func TestRegexFields(t *testing.T) {
	rs, err := ParseRegexFields(" spec.rules[].match.value  when=type=RegularExpression ; names[]")
	if err != nil {
		t.Fatal(err)
	}
	if got := RegexFieldsString(rs); got != "rules[].match.value when=type=RegularExpression; names[]" {
		t.Errorf("RegexFieldsString = %q", got)
	}
	for v, msg := range map[string]string{
		"a when=x":            "when=x: want field=value",
		"a when=x=y when=z=w": `"when=z=w" is not when=<field>=<value>`,
		"a other=1":           `"other=1" is not when=<field>=<value>`,
		"a..b":                "is not a dotted path below spec",
		";":                   "names no entry",
	} {
		if _, err := ParseRegexFields(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRegexFields(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	k := routeKind(t, Spec{RegexFields: rs})
	p := &Policy{Kind: k, Spec: map[string]any{
		"rules": []any{
			map[string]any{"match": map[string]any{"type": "RegularExpression", "value": "*bad"}},
			map[string]any{"match": map[string]any{"type": "PathPrefix", "value": "*not-judged"}},
			map[string]any{"match": map[string]any{"type": "RegularExpression", "value": "^/ok/.*$"}},
			map[string]any{"match": map[string]any{"type": "RegularExpression", "value": int64(3)}},
			"junk",
		},
		"names": []any{"a(", "b"},
	}}
	got := p.BadRegexes()
	var fields []string
	for _, g := range got {
		fields = append(fields, g.Field)
	}
	if strings.Join(fields, " ") != "spec.rules[0].match.value spec.names[0]" {
		t.Errorf("BadRegexes fields = %v", fields)
	}
	if len(got) > 0 && got[0].Message != "regex \"*bad\" is invalid: error parsing regexp: missing argument to repetition operator: `*`" {
		t.Errorf("message %q", got[0].Message)
	}
}

// Lua fields: parsed with gopher-lua's parser; a field with an Unless
// condition is left to BadRegexesWhere (judged per Gateway), and
// UnlessHolds reads the condition in parameters.
func TestRegexFieldsLua(t *testing.T) {
	const entry = "lua[].inline syntax=lua when=type=Inline unless=luaValidation=Disabled"
	rs, err := ParseRegexFields(entry + "; scripts[] syntax=lua")
	if err != nil {
		t.Fatal(err)
	}
	if got := RegexFieldsString(rs); got != entry+"; scripts[] syntax=lua" {
		t.Errorf("RegexFieldsString = %q", got)
	}
	for v, msg := range map[string]string{
		"a syntax=js":            "syntax=js: want syntax=lua",
		"a unless=x":             "unless=x: want <parameters path>=<value>",
		"a unless=mergeType=Foo": `attache does not read "mergeType" of the data plane's parameters`,
	} {
		if _, err := ParseRegexFields(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRegexFields(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	k := routeKind(t, Spec{RegexFields: rs})
	if !k.RegexFieldsPerGateway() || !k.ReadsDataPlanes() {
		t.Error("a kind with an unless= field judges per Gateway and reads data planes")
	}
	p := &Policy{Kind: k, Spec: map[string]any{
		"lua": []any{
			map[string]any{"type": "Inline", "inline": "function envoy_on_request(h)\n  if x > 1\n  end\nend"},
			map[string]any{"type": "ValueRef", "inline": "if"},
			map[string]any{"type": "Inline", "inline": "function envoy_on_response(h) h:logInfo('ok') end"},
		},
		"scripts": []any{"local = 3", "return 1"},
	}}
	if got := p.BadRegexes(); len(got) != 1 || got[0].Field != "spec.scripts[0]" || !strings.HasPrefix(got[0].Message, "Lua does not parse: ") {
		t.Errorf("BadRegexes = %v, want spec.scripts[0] only (the lua[] field is judged per Gateway)", got)
	}
	perGateway := p.BadRegexesWhere(func(r RegexField) bool { return r.Unless != "" })
	if len(perGateway) != 1 || perGateway[0].Field != "spec.lua[0].inline" {
		t.Errorf("BadRegexesWhere(unless) = %v, want spec.lua[0].inline", perGateway)
	}
	for spec, want := range map[string]bool{"Disabled": true, "Strict": false, "": false} {
		params := map[string]any{}
		if spec != "" {
			params["luaValidation"] = spec
		}
		if got := rs[0].UnlessHolds(params); got != want {
			t.Errorf("UnlessHolds(luaValidation=%q) = %v, want %v", spec, got, want)
		}
	}
}
