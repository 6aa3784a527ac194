package policy

import (
	"strings"
	"testing"

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
	k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, RegexFields: rs})
	if err != nil {
		t.Fatal(err)
	}
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
