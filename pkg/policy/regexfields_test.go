package policy

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/topology"
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
		"a syntax=js":            "syntax=js: want syntax=lua or syntax=envoy-lua",
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
	perGateway := p.BadRegexesWhere(func(r RegexField) bool { return r.Unless != "" }, nil)
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

// Lua scripts run as Envoy Gateway's Strict validation runs them
// (syntax=envoy-lua): inline, and from the ConfigMap a reference names
// (the text holderdata keeps of its key); a script that does not parse
// is said once, by the syntax=lua field; unless= takes alternatives.
func TestRegexFieldsEnvoyLua(t *testing.T) {
	const fields = "lua[].inline syntax=lua when=type=Inline unless=luaValidation=Disabled; " +
		"lua[].inline syntax=envoy-lua when=type=Inline unless=luaValidation=Disabled|InsecureSyntax; " +
		"lua[].valueRef syntax=envoy-lua when=type=ValueRef unless=luaValidation=Disabled|InsecureSyntax"
	rs, err := ParseRegexFields(fields)
	if err != nil {
		t.Fatal(err)
	}
	if got := RegexFieldsString(rs); got != fields {
		t.Errorf("RegexFieldsString = %q", got)
	}
	for _, bad := range []string{"a syntax=envoy-lua unless=luaValidation=Disabled|", "a unless=luaValidation=|Strict"} {
		if _, err := ParseRegexFields(bad); err == nil || !strings.Contains(err.Error(), "want <parameters path>=<value>[|<value>...]") {
			t.Errorf("ParseRegexFields(%q) = %v", bad, err)
		}
	}
	for mode, want := range map[string]bool{"Disabled": true, "InsecureSyntax": true, "Strict": false} {
		if got := rs[1].UnlessHolds(map[string]any{"luaValidation": mode}); got != want {
			t.Errorf("envoy-lua UnlessHolds(%s) = %v, want %v", mode, got, want)
		}
	}
	refs, err := ParseObjectRefs("lua[].valueRef kinds=ConfigMap keys=lua,+ when=type=ValueRef content=lua")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, RegexFields: rs, ObjectRefs: refs})
	p := parse(t, k, withTargets(`"lua": [
  {"type": "Inline", "inline": "function envoy_on_request(h) h:headers():unknownApi() end"},
  {"type": "Inline", "inline": "function envoy_on_request(h) if end"},
  {"type": "Inline", "inline": "function envoy_on_response(h) h:headers():replace('x', 'y') end"},
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "script"}},
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "long"}}
]`))
	cm := func(name string, data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "ns1"}, "data": data}}
	}
	facts := map[string]map[string]holderdata.Fact{
		"script": holderdata.Read(cm("script", map[string]any{"lua": "function envoy_on_response(h) h:logInfo(nil) end"})),
		"long":   holderdata.Read(cm("long", map[string]any{"lua": "function envoy_on_response(h) h:nope() end --" + strings.Repeat("x", holderdata.MaxScript)})),
	}
	h := &Holders{
		Keys:    func(r topology.Ref) ([]string, bool) { return []string{"lua"}, facts[r.Name] != nil },
		Facts:   func(r topology.Ref) map[string]holderdata.Fact { return facts[r.Name] },
		Granted: func(topology.Ref) bool { return false },
	}
	strict := func(r RegexField) bool { return r.Unless != "" }
	var got []string
	for _, b := range p.BadRegexesWhere(strict, h) {
		got = append(got, b.Field+": "+b.Message)
	}
	want := []string{
		"spec.lua[1].inline: Lua does not parse: ",
		"spec.lua[0].inline: the Lua script fails when run against Envoy's Lua API, as Envoy Gateway's Strict validation runs it: with envoy_on_request: <script>:1: attempt to call a non-function object",
		"spec.lua[3].valueRef: ConfigMap ns1/script: the Lua script fails when run against Envoy's Lua API, as Envoy Gateway's Strict validation runs it: with envoy_on_response: <script>:1: bad argument #1 to 'logInfo' (string expected, got nil)",
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q, want %q...", i, got[i], want[i])
		}
	}
	// Without the holders, references are not judged; the script of a
	// ConfigMap too long to keep is not judged either (above).
	if n := len(p.BadRegexesWhere(strict, nil)); n != 2 {
		t.Errorf("without holders: %d problems, want the two inline ones", n)
	}
}

// content=lua: the key a Lua reference reads must name an entry point;
// a holder with several keys, none named lua, is not judged.
func TestObjectDataLua(t *testing.T) {
	refs, err := ParseObjectRefs("lua[].valueRef kinds=ConfigMap keys=lua,+ when=type=ValueRef content=lua")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	p := parse(t, k, withTargets(`"lua": [
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "named"}},
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "only"}},
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "several"}},
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "good"}}
]`))
	data := map[string]map[string]any{
		"named":   {"lua": "print(1)", "other": "function envoy_on_request(h) end"},
		"only":    {"script.lua": "print(2)"},
		"several": {"a": "print(3)", "b": "print(4)"},
		"good":    {"lua": "function envoy_on_request(h) end"},
	}
	h := Holders{
		Keys: func(r topology.Ref) ([]string, bool) {
			var keys []string
			for k := range data[r.Name] {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return keys, data[r.Name] != nil
		},
		Facts: func(r topology.Ref) map[string]holderdata.Fact {
			return holderdata.Read(&unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": data[r.Name]}})
		},
		Granted: func(topology.Ref) bool { return false },
	}
	probs, _ := p.CheckObjectData(h, func(*ObjectRefPath) bool { return true })
	var got []string
	for _, pr := range probs {
		got = append(got, pr.Message)
	}
	if want := []string{
		"spec.lua[0].valueRef: ConfigMap ns1/named: " + LuaNoEntryPoint,
		"spec.lua[1].valueRef: ConfigMap ns1/only: " + LuaNoEntryPoint,
	}; !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}
