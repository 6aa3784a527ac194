package policy

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

// The annotation's grammar, its rendering and its errors.
func TestParseOneofs(t *testing.T) {
	os, err := ParseOneofs(" spec.options.hostRewrite|autoHostRewrite ; options.ratelimit|rateLimitConfigs;a|b; rules[].x.y|z; spec.spec.a|b")
	if err != nil {
		t.Fatal(err)
	}
	want := []Oneof{
		{Path: "options", Members: []string{"hostRewrite", "autoHostRewrite"}},
		{Path: "options", Members: []string{"ratelimit", "rateLimitConfigs"}},
		{Path: ".", Members: []string{"a", "b"}},
		{Path: "rules[].x", Members: []string{"y", "z"}},
		{Path: "spec", Members: []string{"a", "b"}},
	}
	if !slices.EqualFunc(os, want, func(a, b Oneof) bool { return a.Path == b.Path && slices.Equal(a.Members, b.Members) }) {
		t.Errorf("ParseOneofs = %+v, want %+v", os, want)
	}
	if got := OneofsString(os); got != "options.hostRewrite|autoHostRewrite; options.ratelimit|rateLimitConfigs; a|b; rules[].x.y|z; spec.spec.a|b" {
		t.Errorf("OneofsString = %q", got)
	}
	if os, err := ParseOneofs("none"); err != nil || os != nil || OneofsString(nil) != "none" {
		t.Errorf(`ParseOneofs("none") = %v, %v`, os, err)
	}
	for v, msg := range map[string]string{
		"options.hostRewrite":          "at least two members",
		"options.a|":                   `member "" is not a field name`,
		"options.a|b.c":                `member "b.c" is not a field name`,
		"options.a|a":                  `member "a" given twice`,
		"options.a|b; options.b|c":     `member "b" is in oneof options.a|b already`,
		"a..b.c|d":                     "is not a dotted path below spec",
		".a|b":                         "is not a dotted path below spec",
		"options.a | b":                "without spaces",
		";":                            "names no entry",
		"options.a|b;options.c|d;x.|y": `member "" is not a field name`,
	} {
		if _, err := ParseOneofs(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseOneofs(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	// The same member in oneofs of two objects is fine.
	if _, err := ParseOneofs("a.x|y; b.x|y; x|y"); err != nil {
		t.Errorf("oneofs of distinct objects: %v", err)
	}
}

// From Go: validated as the annotation is, copied, the spec itself
// written ".".
func TestOneofsFromGo(t *testing.T) {
	spec := func(os ...Oneof) Spec {
		return Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, Oneofs: os}
	}
	for what, c := range map[string]struct {
		os  []Oneof
		msg string
	}{
		"one member":     {[]Oneof{{Path: "o", Members: []string{"a"}}}, "at least two members"},
		"bad member":     {[]Oneof{{Path: "o", Members: []string{"a", "b|c"}}}, "is not a field name"},
		"bad path":       {[]Oneof{{Path: "o|p", Members: []string{"a", "b"}}}, "is not a dotted path"},
		"in two oneofs":  {[]Oneof{{Path: "", Members: []string{"a", "b"}}, {Path: ".", Members: []string{"c", "a"}}}, "is in oneof a|b already"},
		"repeated":       {[]Oneof{{Path: "o", Members: []string{"a", "b", "a"}}}, "given twice"},
		"empty path seg": {[]Oneof{{Path: "o..p", Members: []string{"a", "b"}}}, "is not a dotted path"},
	} {
		k, err := NewKind(spec(c.os...))
		var se *settingError
		if !errors.As(err, &se) || se.setting != SettingOneofs || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: NewKind = %v, %v; want an error of %s saying %q", what, k, err, SettingOneofs, c.msg)
		}
	}
	in := []Oneof{{Members: []string{"a", "b"}}, {Path: "options", Members: []string{"c", "d"}}}
	k, err := NewKind(spec(in...))
	if err != nil {
		t.Fatal(err)
	}
	in[1].Members[0] = "changed"
	if got := OneofsString(k.Oneofs); got != "a|b; options.c|d" || k.Oneofs[0].Path != "." || k.Origins[SettingOneofs] != FromGo {
		t.Errorf("Oneofs = %q (%+v, origin %q)", got, k.Oneofs, k.Origins[SettingOneofs])
	}
}

// From a CRD annotation: read, and refused with the annotation named.
func TestKindFromCRDOneofs(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationOneofs: "options.a|b"}), nil)
	if OneofsString(k.Oneofs) != "options.a|b" || k.Origins[SettingOneofs] != FromAnnotation {
		t.Errorf("Oneofs = %+v (origin %q)", k.Oneofs, k.Origins[SettingOneofs])
	}
	k, p := KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationOneofs: "options.a"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationOneofs), "at least two members")
}

// A policy setting two members of one oneof in one object keeps the one
// declared last (protobuf's JSON decoding sets the members in declaration
// order, a later one clearing the earlier): the others are left out of
// its spec and reported in Ignored, naming the object; it is not Invalid.
// One member, or a second one null, says nothing; the oneof is read in
// every item of a list path; the object's own maps are not changed.
func TestPolicyTwoMembersOfOneof(t *testing.T) {
	oneofs, err := ParseOneofs("options.hostRewrite|autoHostRewrite|hostRewriteHeader; rules[].a|b")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, Oneofs: oneofs})
	for _, c := range []struct{ body, spec, ignored string }{
		{`"options": {"hostRewrite": "a.example"}`, `{"options":{"hostRewrite":"a.example"}}`, ""},
		{`"options": {"hostRewrite": "a.example", "autoHostRewrite": null}`, `{"options":{"autoHostRewrite":null,"hostRewrite":"a.example"}}`, ""},
		{`"options": {"autoHostRewrite": true, "hostRewrite": "a.example", "timeout": "3s"}`, `{"options":{"autoHostRewrite":true,"timeout":"3s"}}`,
			"spec.options: sets hostRewrite and autoHostRewrite, members of one oneof (hostRewrite|autoHostRewrite|hostRewriteHeader): its implementation decodes the one declared last only, autoHostRewrite; hostRewrite ignored"},
		{`"options": {"hostRewriteHeader": "h", "hostRewrite": "a", "autoHostRewrite": true}`, `{"options":{"hostRewriteHeader":"h"}}`,
			"spec.options: sets hostRewrite and autoHostRewrite and hostRewriteHeader, members of one oneof"},
		{`"options": "x"`, `{"options":"x"}`, ""},
		{`"rules": [{"a": 1}, {"a": 1, "b": 2}]`, `{"rules":[{"a":1},{"b":2}]}`, "spec.rules[1]: sets a and b, members of one oneof (a|b)"},
	} {
		u := object(t, withTargets(c.body))
		before, _ := json.Marshal(u.Object)
		p := Parse(u, k)
		if len(p.Problems) > 0 {
			t.Errorf("%s: problems %v, want none", c.body, p.Problems)
		}
		got, _ := json.Marshal(p.Spec)
		if string(got) != c.spec {
			t.Errorf("%s: spec %s, want %s", c.body, got, c.spec)
		}
		if after, _ := json.Marshal(u.Object); string(after) != string(before) {
			t.Errorf("%s: the object changed: %s", c.body, after)
		}
		var ignored []string
		for _, pr := range p.Ignored {
			ignored = append(ignored, pr.Error())
		}
		switch {
		case c.ignored == "" && len(ignored) > 0:
			t.Errorf("%s: ignored %q, want none", c.body, ignored)
		case c.ignored != "" && (len(ignored) != 1 || !strings.Contains(ignored[0], c.ignored)):
			t.Errorf("%s: ignored %q, want one saying %q", c.body, ignored, c.ignored)
		}
	}
}
