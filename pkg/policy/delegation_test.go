package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// The annotation's grammar, its errors, which values let the parent win,
// and the kinds it may be given to.
func TestDelegationPriority(t *testing.T) {
	d, err := ParseDelegationPriority(" example.com/prio  parent=Up,Top child=Down ")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != "example.com/prio parent=Up,Top child=Down" {
		t.Errorf("String = %q", got)
	}
	for v, w := range map[string][2]bool{"Up": {true, true}, "Top": {true, true}, "Down": {false, true}, "up": {false, false}, "": {false, false}} {
		if p, k := d.ParentWins(v); p != w[0] || k != w[1] {
			t.Errorf("ParentWins(%q) = %v, %v; want %v, %v", v, p, k, w[0], w[1])
		}
	}
	// Without child values every other value is known (and the child's).
	open, err := ParseDelegationPriority("example.com/prio parent=Up")
	if err != nil {
		t.Fatal(err)
	}
	if p, k := open.ParentWins("anything"); p || !k {
		t.Errorf("ParentWins without child values = %v, %v", p, k)
	}
	if none, err := ParseDelegationPriority("none"); err != nil || none.Enabled() || none.String() != "none" {
		t.Errorf("none: %+v, %v", none, err)
	}
	for bad, msg := range map[string]string{
		"":                                        "want none, <annotation>",
		"example.com/prio":                        "want none, <annotation>",
		"bad annotation! parent=Up":               "want parent=<values> or child=<values>",
		"-bad parent=Up":                          "is not an annotation name",
		"example.com/prio parent=":                "want parent=<values> or child=<values>",
		"example.com/prio child=Down":             "want parent=<values> first",
		"example.com/prio parent=Up up=X":         "want parent=<values> first, then child=<values>",
		"example.com/prio parent=Up child":        "want parent=<values> or child=<values>",
		"example.com/prio parent=Up child=Up":     "is both parent and child",
		"example.com/prio parent=A child=B extra": "want none, <annotation>",
	} {
		if _, err := ParseDelegationPriority(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDelegationPriority(%q) = %v, want an error saying %q", bad, err, msg)
		}
	}
	spec := Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Inherited,
		Hierarchy: []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute}, Strategies: []merge.Strategy{merge.PatchDefaults}, DelegationPriority: d}
	if k, err := NewKind(spec); err != nil || k.DelegationPriority.String() != d.String() {
		t.Fatalf("kind: %v, %v", k, err)
	}
	for what, s := range map[string]Spec{
		"Direct":               {GroupKind: spec.GroupKind, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, DelegationPriority: d},
		"no HTTPRoute":         {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: []topology.GroupKind{topology.KindGateway, topology.KindGRPCRoute}, DelegationPriority: d},
		"strategy none":        {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: spec.Hierarchy, Strategies: []merge.Strategy{merge.None}, DelegationPriority: d},
		"composition additive": {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: spec.Hierarchy, Strategies: spec.Strategies, Composition: CompositionAdditive, DelegationPriority: d},
		"Namespace":            {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: []topology.GroupKind{topology.KindNamespace, topology.KindGateway, topology.KindHTTPRoute}, Strategies: spec.Strategies, DelegationPriority: d},
		"overrides":            {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: spec.Hierarchy, Strategies: []merge.Strategy{merge.PatchDefaults, merge.PatchOverrides}, DelegationPriority: d},
		"unsupported fields": {GroupKind: spec.GroupKind, Class: Inherited, Hierarchy: spec.Hierarchy, Strategies: spec.Strategies, DelegationPriority: d,
			UnsupportedFields: []UnsupportedFields{{Kind: topology.KindHTTPRoute, Paths: []string{"a"}}}},
	} {
		if _, err := NewKind(s); err == nil || !strings.Contains(err.Error(), "only where policies merge down a hierarchy through HTTPRoutes") {
			t.Errorf("%s: %v, want the setting refused", what, err)
		}
	}
}

// The child-fields mode (Gloo Gateway's): the parent wins unless the
// annotation's value lists the entries (in any case, spaces trimmed; a
// group's entries by the group's name only) or says "*".
func TestDelegationPriorityChildFields(t *testing.T) {
	d, err := ParseDelegationPriority("example.com/overrides child-fields=options groups=hostRewriteType:hostRewrite|autoHostRewrite,jwtConfig:jwt")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.String(); got != "example.com/overrides child-fields=options groups=hostRewriteType:hostRewrite|autoHostRewrite,jwtConfig:jwt" {
		t.Errorf("String = %q", got)
	}
	if all, wins := d.ChildWinsIn("faults, *"); !all || wins != nil {
		t.Errorf(`"faults, *": all %v`, all)
	}
	for value, want := range map[string]map[string]bool{
		" Faults , headerManipulation": {"faults": true, "headerManipulation": true, "cors": false},
		"hostrewritetype":              {"hostRewrite": true, "autoHostRewrite": true, "faults": false},
		// A group's entry is not named by its own key.
		"hostRewrite,jwt": {"hostRewrite": false, "jwt": false},
	} {
		all, wins := d.ChildWinsIn(value)
		if all || wins == nil {
			t.Fatalf("%q: all %v, wins %v", value, all, wins != nil)
		}
		for key, w := range want {
			if wins(key) != w {
				t.Errorf("%q: child wins in %s = %v, want %v", value, key, !w, w)
			}
		}
	}
	if all, wins := d.ChildWinsIn(" , "); all || wins != nil {
		t.Errorf(`" , " names no entry: all %v, wins %v`, all, wins != nil)
	}
	for bad, msg := range map[string]string{
		"example.com/o child-fields=a..b":             "want a dotted path",
		"example.com/o child-fields=a[].b":            "want a dotted path",
		"example.com/o child-fields=":                 "want a dotted path",
		"example.com/o child-fields=spec.":            "want a dotted path",
		"example.com/o child-fields=o parent=A":       "want groups=",
		"example.com/o child-fields=o groups=g:a,h:a": "is in another group already",
		"example.com/o child-fields=o groups=:a":      "want <name>:<key>",
		"example.com/o child-fields=o groups=g:a||b":  "want a field name",
	} {
		if _, err := ParseDelegationPriority(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDelegationPriority(%q) = %v, want an error saying %q", bad, err, msg)
		}
	}
	spec := Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Inherited,
		Hierarchy: []topology.GroupKind{topology.KindHTTPRoute}, Strategies: []merge.Strategy{merge.PatchDefaults}, DelegationPriority: d}
	k, err := NewKind(spec)
	if err != nil {
		t.Fatal(err)
	}
	// A copy: the profile's groups are not shared.
	k.DelegationPriority.Groups[0].Keys[0] = "changed"
	if d.Groups[0].Keys[0] != "hostRewrite" {
		t.Error("the kind shares the spec's groups")
	}
}

// From a CRD annotation: read, and refused with the annotation named.
func TestKindFromCRDDelegationPriority(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationDelegationPriority: "example.com/prio parent=Up", AnnotationMergeStrategies: "patch-defaults", AnnotationHierarchy: "Gateway,HTTPRoute"}), nil)
	if k.DelegationPriority.Annotation != "example.com/prio" || k.Origins[SettingDelegationPriority] != FromAnnotation {
		t.Errorf("DelegationPriority = %+v (origin %q)", k.DelegationPriority, k.Origins[SettingDelegationPriority])
	}
	k, p := KindFromCRD(newCRD(policyLabel("Inherited"), map[string]string{AnnotationDelegationPriority: "example.com/prio parent=", AnnotationMergeStrategies: "patch-defaults", AnnotationHierarchy: "Gateway,HTTPRoute"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationDelegationPriority), "want parent=<values> or child=<values>")
	k, p = KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationDelegationPriority: "example.com/prio parent=Up"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationDelegationPriority), "only where policies merge down a hierarchy")
	// GEP-713's strategies by default include overrides: refused.
	k, p = KindFromCRD(newCRD(policyLabel("Inherited"), map[string]string{AnnotationDelegationPriority: "example.com/prio parent=Up"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationDelegationPriority), "no overrides")
}

// A delegation priority given from Go is checked as the annotation is: a
// value NewKind accepts renders to one ParseDelegationPriority reads.
func TestDelegationPriorityFromGoValidated(t *testing.T) {
	spec := func(d DelegationPriority) Spec {
		return Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Inherited,
			Hierarchy: []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute}, Strategies: []merge.Strategy{merge.PatchDefaults}, DelegationPriority: d}
	}
	for what, c := range map[string]struct {
		d   DelegationPriority
		msg string
	}{
		"annotation name":       {DelegationPriority{Annotation: "not an annotation!", ChildFields: "options"}, "is not an annotation name"},
		"path segment":          {DelegationPriority{Annotation: "x.io/a", ChildFields: "options[]"}, "want a dotted path"},
		"empty segment":         {DelegationPriority{Annotation: "x.io/a", ChildFields: "a..b"}, "want a dotted path"},
		"both forms":            {DelegationPriority{Annotation: "x.io/a", ChildFields: "options", Parent: []string{"P"}}, "two forms"},
		"groups twice":          {DelegationPriority{Annotation: "x.io/a", ChildFields: "options", Groups: []FieldGroup{{"g", []string{"a"}}, {"h", []string{"a"}}}}, "is in another group already"},
		"group no keys":         {DelegationPriority{Annotation: "x.io/a", ChildFields: "options", Groups: []FieldGroup{{"g", nil}}}, "want <name>:<key>"},
		"group bad key":         {DelegationPriority{Annotation: "x.io/a", ChildFields: "options", Groups: []FieldGroup{{"g", []string{"a b"}}}}, "want a field name"},
		"groups no fields":      {DelegationPriority{Annotation: "x.io/a", Parent: []string{"P"}, Groups: []FieldGroup{{"g", []string{"a"}}}}, "groups name entries of child-fields"},
		"no form":               {DelegationPriority{Annotation: "x.io/a"}, "want parent=<values>"},
		"empty value":           {DelegationPriority{Annotation: "x.io/a", Parent: []string{""}}, "want a word"},
		"comma value":           {DelegationPriority{Annotation: "x.io/a", Parent: []string{"a,b"}}, "want a word"},
		"parent and child":      {DelegationPriority{Annotation: "x.io/a", Parent: []string{"P"}, Child: []string{"P"}}, "is both parent and child"},
		"values, no annotation": {DelegationPriority{Parent: []string{"P"}}, "without an annotation"},
	} {
		k, err := NewKind(spec(c.d))
		var se *settingError
		if !errors.As(err, &se) || se.setting != SettingDelegationPriority || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: NewKind = %v, %v; want an error of %s saying %q", what, k, err, SettingDelegationPriority, c.msg)
		}
	}
	for _, d := range []DelegationPriority{
		{Annotation: "x.io/a", Parent: []string{"P"}, Child: []string{"C"}},
		{Annotation: "x.io/a", ChildFields: "options", Groups: []FieldGroup{{"g", []string{"a", "b"}}}},
		{Annotation: "x.io/a", ChildFields: "."},
	} {
		k, err := NewKind(spec(d))
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if again, err := ParseDelegationPriority(k.DelegationPriority.String()); err != nil || again.String() != d.String() {
			t.Errorf("%q read back as %q (%v)", d.String(), again.String(), err)
		}
	}
}

// child-fields is a path below spec, a leading "spec." dropped as other
// path settings drop it; a path starting with a field named spec reads
// back as written.
func TestDelegationPriorityChildFieldsSpecPrefix(t *testing.T) {
	for in, want := range map[string][2]string{
		"x.io/a child-fields=spec.options":      {"options", "x.io/a child-fields=options"},
		"x.io/a child-fields=options":           {"options", "x.io/a child-fields=options"},
		"x.io/a child-fields=spec.spec.options": {"spec.options", "x.io/a child-fields=spec.spec.options"},
	} {
		d, err := ParseDelegationPriority(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if d.ChildFields != want[0] || d.String() != want[1] {
			t.Errorf("%q: ChildFields %q, String %q; want %q, %q", in, d.ChildFields, d.String(), want[0], want[1])
		}
		if again, err := ParseDelegationPriority(d.String()); err != nil || again.ChildFields != d.ChildFields {
			t.Errorf("%q read back as %q (%v)", d.String(), again.ChildFields, err)
		}
	}
}
