package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

var policyRef = topology.Ref{Group: "policies.example.com", Kind: "ColorPolicy", Namespace: "ns1", Name: "p1"}

const gwGroup = topology.GatewayGroup

func mustKind(t testing.TB, s Spec) *Kind {
	t.Helper()
	s.GroupKind = colorGK
	k, err := NewKind(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// routeKind is a Direct kind x.io/P targeting HTTPRoutes, with the
// settings of s (its group, kind, class and target kinds replaced).
func routeKind(t testing.TB, s Spec) *Kind {
	t.Helper()
	s.GroupKind = topology.GroupKind{Group: "x.io", Kind: "P"}
	s.Class = Direct
	s.TargetKinds = []topology.GroupKind{topology.KindHTTPRoute}
	k, err := NewKind(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func directKind(t testing.TB) *Kind    { return mustKind(t, Spec{Class: Direct}) }
func inheritedKind(t testing.TB) *Kind { return mustKind(t, Spec{Class: Inherited}) }

// decode reads JSON the way the API machinery does (integers as int64).
func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := utiljson.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

// object builds the policy p1 in ns1 with the given spec JSON ("" for none).
func object(t testing.TB, spec string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policies.example.com/v1",
		"kind":       "ColorPolicy",
		"metadata": map[string]any{
			"name":              "p1",
			"namespace":         "ns1",
			"generation":        int64(3),
			"creationTimestamp": "2024-01-02T03:04:05Z",
		},
	}}
	if spec != "" {
		u.Object["spec"] = decode(t, spec)
	}
	return u
}

func parse(t testing.TB, k *Kind, spec string) *Policy {
	t.Helper()
	return Parse(object(t, spec), k)
}

const gwRef = `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}`

// withTargets wraps spec proper fields (a JSON object body without braces)
// with one targetRef to a Gateway.
func withTargets(body string) string {
	if body == "" {
		return `{"targetRefs": [` + gwRef + `]}`
	}
	return `{"targetRefs": [` + gwRef + `], ` + body + `}`
}

func wantValid(t *testing.T, p *Policy) {
	t.Helper()
	if p.Invalid() {
		t.Fatalf("unexpected problems: %v", p.Problems)
	}
}

// wantProblem asserts p has exactly one problem, about the policy, at field,
// whose message contains substr.
func wantProblem(t *testing.T, p *Policy, field, substr string) {
	t.Helper()
	if !p.Invalid() {
		t.Fatalf("want a problem at %s containing %q, got a valid policy", field, substr)
	}
	if len(p.Problems) != 1 {
		t.Errorf("want one problem, got %d: %v", len(p.Problems), p.Problems)
	}
	pr := p.Problems[0]
	if pr.Object != p.Ref || pr.Object.Name == "" {
		t.Errorf("problem object = %+v, want the policy %+v", pr.Object, p.Ref)
	}
	if pr.Field != field {
		t.Errorf("problem field = %q, want %q (message %q)", pr.Field, field, pr.Message)
	}
	if !strings.Contains(pr.Message, substr) {
		t.Errorf("problem message %q does not contain %q", pr.Message, substr)
	}
}

func TestParseMetadata(t *testing.T) {
	p := parse(t, inheritedKind(t), withTargets(`"color": "blue"`))
	wantValid(t, p)
	if p.Ref != policyRef {
		t.Errorf("ref = %+v, want %+v", p.Ref, policyRef)
	}
	if p.Generation != 3 {
		t.Errorf("generation = %d, want 3", p.Generation)
	}
	if want := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC); !p.Created.Equal(want) {
		t.Errorf("created = %v, want %v", p.Created, want)
	}
	if p.Kind == nil || p.Kind.GroupKind != colorGK {
		t.Errorf("kind = %v", p.Kind)
	}
}

func TestParseCreationTimestamp(t *testing.T) {
	k := inheritedKind(t)
	t.Run("absent", func(t *testing.T) {
		u := object(t, withTargets(`"color": "blue"`))
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		p := Parse(u, k)
		wantValid(t, p)
		if !p.Created.IsZero() {
			t.Errorf("created = %v, want zero", p.Created)
		}
	})
	t.Run("null", func(t *testing.T) {
		u := object(t, withTargets(`"color": "blue"`))
		u.Object["metadata"].(map[string]any)["creationTimestamp"] = nil
		p := Parse(u, k)
		wantValid(t, p)
		if !p.Created.IsZero() {
			t.Errorf("created = %v, want zero", p.Created)
		}
	})
	t.Run("offset", func(t *testing.T) {
		u := object(t, withTargets(`"color": "blue"`))
		u.Object["metadata"].(map[string]any)["creationTimestamp"] = "2024-01-02T05:04:05+02:00"
		p := Parse(u, k)
		wantValid(t, p)
		if want := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC); !p.Created.Equal(want) {
			t.Errorf("created = %v, want %v", p.Created, want)
		}
	})
	for name, v := range map[string]any{
		"garbage":   "yesterday",
		"date only": "2024-01-02",
		"number":    int64(1700000000),
		"object":    map[string]any{"seconds": int64(1)},
	} {
		t.Run(name, func(t *testing.T) {
			u := object(t, withTargets(`"color": "blue"`))
			u.Object["metadata"].(map[string]any)["creationTimestamp"] = v
			p := Parse(u, k)
			wantProblem(t, p, "metadata.creationTimestamp", "RFC 3339")
			if !p.Created.IsZero() {
				t.Errorf("created = %v, want zero for an invalid timestamp", p.Created)
			}
		})
	}
}

func TestParseMetadataMissing(t *testing.T) {
	for name, md := range map[string]any{"absent": nil, "not an object": "p1", "list": []any{}} {
		t.Run(name, func(t *testing.T) {
			u := object(t, withTargets(`"color": "blue"`))
			if md == nil {
				delete(u.Object, "metadata")
			} else {
				u.Object["metadata"] = md
			}
			p := Parse(u, inheritedKind(t))
			want := topology.Ref{Group: "policies.example.com", Kind: "ColorPolicy"}
			if p.Ref != want {
				t.Errorf("ref = %+v, want %+v", p.Ref, want)
			}
			if len(p.Problems) != 1 || p.Problems[0].Field != "metadata.name" || p.Problems[0].Object != want ||
				!strings.Contains(p.Problems[0].Message, "no name") {
				t.Errorf("problems = %+v, want one at metadata.name", p.Problems)
			}
		})
	}
}

func TestParseSpecMissingOrNotObject(t *testing.T) {
	k := inheritedKind(t)
	wantProblem(t, parse(t, k, ""), "spec", "no spec")
	for _, tc := range []struct{ spec, kind string }{
		{`[]`, "a list"},
		{`"x"`, "a string"},
		{`null`, "null"},
		{`7`, "a number"},
		{`true`, "a boolean"},
	} {
		wantProblem(t, parse(t, k, tc.spec), "spec", "must be an object, not "+tc.kind)
	}
}

func TestParseTargetByName(t *testing.T) {
	k := inheritedKind(t)
	for _, tc := range []struct {
		name string
		ref  string
		want TargetRef
	}{
		{"plain", gwRef, TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1"}},
		{"namespace", `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "other"}`,
			TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "other"}},
		{"empty namespace is the policy's", `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": ""}`,
			TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1"}},
		{"null namespace is the policy's", `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": null}`,
			TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1"}},
		{"sectionName", `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "sectionName": "https"}`,
			TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1", SectionName: "https"}},
		{"group/version", `{"group": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw"}`,
			TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1"}},
		{"core group", `{"group": "", "kind": "Service", "name": "svc"}`,
			TargetRef{Kind: "Service", Name: "svc", Namespace: "ns1"}},
		{"no group", `{"kind": "Service", "name": "svc"}`,
			TargetRef{Kind: "Service", Name: "svc", Namespace: "ns1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, k, `{"targetRefs": [`+tc.ref+`], "color": "blue"}`)
			wantValid(t, p)
			tc.want.Field = "spec.targetRefs[0]"
			if len(p.Targets) != 1 || !reflect.DeepEqual(p.Targets[0], tc.want) {
				t.Fatalf("targets = %+v, want [%+v]", p.Targets, tc.want)
			}
			if p.Targets[0].GroupKind() != (topology.GroupKind{Group: tc.want.Group, Kind: tc.want.Kind}) {
				t.Errorf("GroupKind() = %v", p.Targets[0].GroupKind())
			}
		})
	}
}

func TestParseTargetRefSingular(t *testing.T) {
	p := parse(t, inheritedKind(t), `{"targetRef": `+gwRef+`, "color": "blue"}`)
	wantValid(t, p)
	want := TargetRef{Group: gwGroup, Kind: "Gateway", Name: "gw", Namespace: "ns1", Field: "spec.targetRef"}
	if len(p.Targets) != 1 || !reflect.DeepEqual(p.Targets[0], want) {
		t.Fatalf("targets = %+v, want [%+v]", p.Targets, want)
	}
	if _, ok := p.Spec["targetRef"]; ok {
		t.Error("spec proper holds targetRef")
	}
	// Problems in the singular form name spec.targetRef, without an index.
	wantProblem(t, parse(t, inheritedKind(t), `{"targetRef": {"kind": "Gateway"}, "color": "blue"}`), "spec.targetRef.name", "is required")
	wantProblem(t, parse(t, inheritedKind(t), `{"targetRef": "gw", "color": "blue"}`), "spec.targetRef", "must be an object, not a string")
}

func TestParseTargetProblems(t *testing.T) {
	k := inheritedKind(t)
	for _, tc := range []struct {
		name, spec, field, substr string
	}{
		{"both forms", `{"targetRef": ` + gwRef + `, "targetRefs": [` + gwRef + `], "color": "blue"}`, "spec", "both targetRef and targetRefs"},
		{"none", `{"color": "blue"}`, "spec.targetRefs", "no targets"},
		{"empty list", `{"targetRefs": [], "color": "blue"}`, "spec.targetRefs", "no targets"},
		{"not a list", `{"targetRefs": ` + gwRef + `, "color": "blue"}`, "spec.targetRefs", "must be a list, not an object"},
		{"null list", `{"targetRefs": null, "color": "blue"}`, "spec.targetRefs", "must be a list, not null"},
		{"string entry", `{"targetRefs": ["gw"], "color": "blue"}`, "spec.targetRefs[0]", "must be an object, not a string"},
		{"number entry", `{"targetRefs": [1], "color": "blue"}`, "spec.targetRefs[0]", "must be an object, not a number"},
		{"list entry", `{"targetRefs": [[]], "color": "blue"}`, "spec.targetRefs[0]", "must be an object, not a list"},
		{"null entry", `{"targetRefs": [null], "color": "blue"}`, "spec.targetRefs[0]", "must be an object, not null"},
		{"missing kind", `{"targetRefs": [{"group": "gateway.networking.k8s.io", "name": "gw"}], "color": "blue"}`, "spec.targetRefs[0].kind", "is required"},
		{"empty kind", `{"targetRefs": [{"kind": "", "name": "gw"}], "color": "blue"}`, "spec.targetRefs[0].kind", "is required"},
		{"kind not a string", `{"targetRefs": [{"kind": 5, "name": "gw"}], "color": "blue"}`, "spec.targetRefs[0].kind", "must be a string, not a number"},
		{"group not a string", `{"targetRefs": [{"group": true, "kind": "Gateway", "name": "gw"}], "color": "blue"}`, "spec.targetRefs[0].group", "must be a string, not a boolean"},
		{"name not a string", `{"targetRefs": [{"kind": "Gateway", "name": ["gw"]}], "color": "blue"}`, "spec.targetRefs[0].name", "must be a string, not a list"},
		{"missing name", `{"targetRefs": [{"kind": "Gateway"}], "color": "blue"}`, "spec.targetRefs[0].name", "is required"},
		{"null selector", `{"targetRefs": [{"kind": "Gateway", "selector": null}], "color": "blue"}`, "spec.targetRefs[0].name", "is required"},
		{"name and selector", `{"targetRefs": [{"kind": "Gateway", "name": "gw", "selector": {"matchLabels": {"a": "b"}}}], "color": "blue"}`, "spec.targetRefs[0]", "both name and selector"},
		{"selector and sectionName", `{"targetRefs": [{"kind": "Gateway", "sectionName": "https", "selector": {"matchLabels": {"a": "b"}}}], "color": "blue"}`, "spec.targetRefs[0].sectionName", "cannot be used with a selector"},
		{"selector not an object", `{"targetRefs": [{"kind": "Gateway", "selector": ["a"]}], "color": "blue"}`, "spec.targetRefs[0].selector", "must be a label selector object, not a list"},
		{"selector operator Foo", `{"targetRefs": [{"kind": "Gateway", "selector": {"matchExpressions": [{"key": "a", "operator": "Foo", "values": ["b"]}]}}], "color": "blue"}`, "spec.targetRefs[0].selector", `"Foo"`},
		{"selector In without values", `{"targetRefs": [{"kind": "Gateway", "selector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}], "color": "blue"}`, "spec.targetRefs[0].selector", "values"},
		{"selector bad label value", `{"targetRefs": [{"kind": "Gateway", "selector": {"matchLabels": {"a": "not valid!"}}}], "color": "blue"}`, "spec.targetRefs[0].selector", "not valid!"},
		{"selector label value not a string", `{"targetRefs": [{"kind": "Gateway", "selector": {"matchLabels": {"a": 1}}}], "color": "blue"}`, "spec.targetRefs[0].selector", "is not a label selector"},
		{"selector unknown field", `{"targetRefs": [{"kind": "Gateway", "selector": {"matchLabel": {"a": "b"}}}], "color": "blue"}`, "spec.targetRefs[0].selector", "matchLabel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, k, tc.spec)
			wantProblem(t, p, tc.field, tc.substr)
			if len(p.Targets) != 0 {
				t.Errorf("an invalid entry must not become a target: %+v", p.Targets)
			}
		})
	}
}

func TestParseTargetProblemIndexed(t *testing.T) {
	p := parse(t, inheritedKind(t), `{"targetRefs": [`+gwRef+`, "x", {"kind": "Service", "name": "svc"}, {"name": "y"}], "color": "blue"}`)
	if len(p.Problems) != 2 {
		t.Fatalf("want 2 problems, got %v", p.Problems)
	}
	if p.Problems[0].Field != "spec.targetRefs[1]" || p.Problems[1].Field != "spec.targetRefs[3].kind" {
		t.Errorf("problem fields = %q, %q; want spec.targetRefs[1], spec.targetRefs[3].kind", p.Problems[0].Field, p.Problems[1].Field)
	}
	if len(p.Targets) != 2 || p.Targets[0].Field != "spec.targetRefs[0]" || p.Targets[1].Field != "spec.targetRefs[2]" {
		t.Errorf("targets = %+v, want entries 0 and 2", p.Targets)
	}
}

func refs(n int, distinct bool) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		name := "gw"
		if distinct {
			name = fmt.Sprintf("gw%d", i)
		}
		fmt.Fprintf(&b, `{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": %q}`, name)
	}
	return b.String()
}

func TestParseTargetCount(t *testing.T) {
	k := inheritedKind(t)
	p := parse(t, k, `{"targetRefs": [`+refs(MaxTargetRefs, true)+`], "color": "blue"}`)
	wantValid(t, p)
	if len(p.Targets) != MaxTargetRefs {
		t.Errorf("got %d targets, want %d", len(p.Targets), MaxTargetRefs)
	}
	p = parse(t, k, `{"targetRefs": [`+refs(MaxTargetRefs+1, true)+`], "color": "blue"}`)
	wantProblem(t, p, "spec.targetRefs", "17 entries")
	if len(p.Targets) != 0 {
		t.Errorf("targets of an over-long list: %v", p.Targets)
	}
	// The limit is on the list as written, as in the CRD schema (maxItems).
	p = parse(t, k, `{"targetRefs": [`+refs(MaxTargetRefs+1, false)+`], "color": "blue"}`)
	wantProblem(t, p, "spec.targetRefs", "at most 16")
}

func TestParseTargetSelector(t *testing.T) {
	k := inheritedKind(t)
	p := parse(t, k, `{"targetRefs": [
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchLabels": {"env": "prod"}}},
		{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}, {"key": "legacy", "operator": "DoesNotExist"}]}}
	], "color": "blue"}`)
	wantValid(t, p)
	if len(p.Targets) != 2 {
		t.Fatalf("targets = %+v", p.Targets)
	}
	for i, tc := range []struct {
		match, miss labels.Set
	}{
		{labels.Set{"env": "prod", "x": "y"}, labels.Set{"env": "dev"}},
		{labels.Set{"tier": "b"}, labels.Set{"tier": "b", "legacy": "yes"}},
	} {
		tr := p.Targets[i]
		if tr.Selector == nil || tr.Name != "" || tr.Namespace != "ns1" {
			t.Fatalf("target %d = %+v, want a selector in ns1", i, tr)
		}
		if !tr.Selector.Matches(tc.match) || tr.Selector.Matches(tc.miss) {
			t.Errorf("target %d selector %q: matches(%v)=%v, matches(%v)=%v", i, tr.Selector, tc.match, tr.Selector.Matches(tc.match), tc.miss, tr.Selector.Matches(tc.miss))
		}
	}
	if p.Targets[1].Field != "spec.targetRefs[1]" {
		t.Errorf("field = %q", p.Targets[1].Field)
	}
}

func TestParseTargetDuplicates(t *testing.T) {
	k := inheritedKind(t)
	p := parse(t, k, `{"targetRefs": [
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"},
		{"group": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw", "namespace": "ns1"},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "sectionName": "https"},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "sectionName": "https"},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "namespace": "other"},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchLabels": {"a": "1", "b": "2"}}},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchLabels": {"b": "2", "a": "1"}}},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchLabels": {"a": "1"}}},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchExpressions": [{"key": "c", "operator": "In", "values": ["x", "y"]}]}},
		{"group": "gateway.networking.k8s.io", "kind": "Gateway", "selector": {"matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}]}}
	], "color": "blue"}`)
	wantValid(t, p)
	var got []string
	for _, tr := range p.Targets {
		got = append(got, tr.Field)
	}
	want := []string{"spec.targetRefs[0]", "spec.targetRefs[2]", "spec.targetRefs[4]", "spec.targetRefs[5]", "spec.targetRefs[7]", "spec.targetRefs[8]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kept targets %v, want %v", got, want)
	}
}

// TestParseTargetKeyNoCollision: references whose fields differ must not
// be merged, whatever characters the fields hold.
func TestParseTargetKeyNoCollision(t *testing.T) {
	p := parse(t, inheritedKind(t), `{"targetRefs": [
		{"group": "a|b", "kind": "K", "name": "n"},
		{"group": "a", "kind": "b|K", "name": "n"}
	], "color": "blue"}`)
	wantValid(t, p)
	if len(p.Targets) != 2 {
		t.Errorf("distinct references merged: %+v", p.Targets)
	}
}

func TestParseStanzas(t *testing.T) {
	k := inheritedKind(t)
	for _, tc := range []struct {
		name     string
		body     string
		stanza   string
		strategy merge.Strategy
	}{
		{"bare", `"color": "blue", "size": 3`, "", merge.AtomicDefaults},
		{"defaults", `"defaults": {"color": "blue", "size": 3}`, "defaults", merge.AtomicDefaults},
		{"default", `"default": {"color": "blue", "size": 3}`, "defaults", merge.AtomicDefaults},
		{"overrides", `"overrides": {"color": "blue", "size": 3}`, "overrides", merge.AtomicOverrides},
		{"override", `"override": {"color": "blue", "size": 3}`, "overrides", merge.AtomicOverrides},
		{"bare atomic", `"strategy": "atomic", "color": "blue", "size": 3`, "", merge.AtomicDefaults},
		{"bare patch", `"strategy": "patch", "color": "blue", "size": 3`, "", merge.PatchDefaults},
		{"bare merge", `"strategy": "merge", "color": "blue", "size": 3`, "", merge.PatchDefaults},
		{"defaults patch", `"strategy": "patch", "defaults": {"color": "blue", "size": 3}`, "defaults", merge.PatchDefaults},
		{"overrides patch", `"strategy": "patch", "overrides": {"color": "blue", "size": 3}`, "overrides", merge.PatchOverrides},
		{"overrides merge inside", `"overrides": {"strategy": "merge", "color": "blue", "size": 3}`, "overrides", merge.PatchOverrides},
		{"overrides atomic inside", `"override": {"strategy": "atomic", "color": "blue", "size": 3}`, "overrides", merge.AtomicOverrides},
		{"same word twice", `"strategy": "patch", "defaults": {"strategy": "patch", "color": "blue", "size": 3}`, "defaults", merge.PatchDefaults},
		{"synonyms", `"strategy": "merge", "defaults": {"strategy": "patch", "color": "blue", "size": 3}`, "defaults", merge.PatchDefaults},
		{"empty strategy", `"strategy": "", "color": "blue", "size": 3`, "", merge.AtomicDefaults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, k, withTargets(tc.body))
			wantValid(t, p)
			if p.Stanza != tc.stanza || p.Strategy != tc.strategy {
				t.Errorf("stanza, strategy = %q, %q; want %q, %q", p.Stanza, p.Strategy, tc.stanza, tc.strategy)
			}
			// The spec proper: no targetRefs, strategy or stanza wrapper.
			want := map[string]any{"color": "blue", "size": int64(3)}
			if !reflect.DeepEqual(p.Spec, want) {
				t.Errorf("spec proper = %v, want %v", p.Spec, want)
			}
			if len(p.Targets) != 1 {
				t.Errorf("targets = %v", p.Targets)
			}
		})
	}
}

func TestParseEmptySpecProper(t *testing.T) {
	p := parse(t, inheritedKind(t), withTargets(""))
	wantValid(t, p)
	if p.Spec == nil || len(p.Spec) != 0 {
		t.Errorf("spec proper = %#v, want an empty map", p.Spec)
	}
	p = parse(t, inheritedKind(t), withTargets(`"defaults": {}`))
	wantValid(t, p)
	if p.Spec == nil || len(p.Spec) != 0 || p.Stanza != "defaults" {
		t.Errorf("spec proper = %#v stanza %q, want an empty map in defaults", p.Spec, p.Stanza)
	}
}

func TestParseSpecProperDoesNotAliasStanzaStrategy(t *testing.T) {
	u := object(t, withTargets(`"defaults": {"strategy": "patch", "color": "blue"}`))
	p := Parse(u, inheritedKind(t))
	wantValid(t, p)
	stanza := u.Object["spec"].(map[string]any)["defaults"].(map[string]any)
	if stanza["strategy"] != "patch" {
		t.Error("Parse modified the input object")
	}
	if _, ok := p.Spec["strategy"]; ok {
		t.Error("spec proper holds the strategy")
	}
}

func TestParseBothStanzas(t *testing.T) {
	k := inheritedKind(t)
	for _, tc := range []struct{ body, substr string }{
		{`"defaults": {"a": 1}, "overrides": {"b": 2}`, `has both "defaults" and "overrides"`},
		{`"default": {"a": 1}, "overrides": {"b": 2}`, `has both "default" and "overrides"`},
		{`"defaults": {"a": 1}, "override": {"b": 2}`, `has both "defaults" and "override"`},
		{`"default": {"a": 1}, "defaults": {"b": 2}`, `has both "default" and "defaults"`},
		{`"overrides": {"a": 1}, "override": {"b": 2}`, `has both "override" and "overrides"`},
	} {
		// Map order is random: the message must not be.
		for range 20 {
			p := parse(t, k, withTargets(tc.body))
			wantProblem(t, p, "spec", tc.substr)
			if t.Failed() {
				return
			}
		}
	}
	p := parse(t, k, withTargets(`"defaults": {"a": 1}, "overrides": {"b": 2}`))
	if !strings.Contains(p.Problems[0].Message, "one merge strategy") {
		t.Errorf("message %q does not say why", p.Problems[0].Message)
	}
}

func TestParseStanzaProblems(t *testing.T) {
	k := inheritedKind(t)
	for _, tc := range []struct {
		name, body, field, substr string
	}{
		{"stanza a string", `"defaults": "blue"`, "spec.defaults", "must be an object, not a string"},
		{"stanza a list", `"override": [1]`, "spec.override", "must be an object, not a list"},
		{"stanza null", `"overrides": null`, "spec.overrides", "must be an object, not null"},
		{"field outside stanza", `"defaults": {"color": "blue"}, "size": 3`, "spec.size", "outside spec.defaults"},
		{"first field outside stanza", `"overrides": {"color": "blue"}, "zeta": 3, "alpha": 1`, "spec.alpha", "outside spec.overrides"},
		{"unknown strategy", `"strategy": "fancy", "color": "blue"`, "spec.strategy", `unknown strategy "fancy"`},
		{"none strategy word", `"strategy": "none", "color": "blue"`, "spec.strategy", `unknown strategy "none"`},
		{"full strategy name", `"strategy": "atomic-defaults", "color": "blue"`, "spec.strategy", `unknown strategy "atomic-defaults"`},
		{"unknown strategy in stanza", `"defaults": {"strategy": "fancy", "color": "blue"}`, "spec.defaults.strategy", `unknown strategy "fancy"`},
		{"unknown strategy with stanza", `"strategy": "fancy", "defaults": {"color": "blue"}`, "spec.strategy", `unknown strategy "fancy"`},
		{"strategy not a string", `"strategy": 1, "color": "blue"`, "spec.strategy", "must be a string, not a number"},
		{"strategy in stanza not a string", `"defaults": {"strategy": {}, "color": "blue"}`, "spec.defaults.strategy", "must be a string, not an object"},
		{"conflicting words", `"strategy": "atomic", "defaults": {"strategy": "patch", "color": "blue"}`, "spec.defaults.strategy", `is "patch" but spec.strategy is "atomic"`},
		{"custom unsupported", `"strategy": "custom", "color": "blue"`, "spec.strategy", "no merge strategy of kind ColorPolicy.policies.example.com"},
		{"custom unsupported in stanza", `"overrides": {"strategy": "custom", "color": "blue"}`, "spec.overrides.strategy", `with strategy "custom"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, k, withTargets(tc.body))
			wantProblem(t, p, tc.field, tc.substr)
			if p.Strategy != "" {
				t.Errorf("invalid policy has strategy %q", p.Strategy)
			}
		})
	}
}

func TestParseDirectKind(t *testing.T) {
	k := directKind(t)
	p := parse(t, k, withTargets(`"color": "blue"`))
	wantValid(t, p)
	if p.Strategy != merge.None || p.Stanza != "" {
		t.Errorf("stanza, strategy = %q, %q; want \"\", none", p.Stanza, p.Strategy)
	}
	if !reflect.DeepEqual(p.Spec, map[string]any{"color": "blue"}) {
		t.Errorf("spec proper = %v", p.Spec)
	}
	for _, tc := range []struct{ name, body, field, substr string }{
		{"defaults", `"defaults": {"color": "blue"}`, "spec.defaults", "supports only the none merge strategy"},
		{"override", `"override": {"color": "blue"}`, "spec.override", "supports only the none merge strategy"},
		{"strategy", `"strategy": "atomic", "color": "blue"`, "spec.strategy", `remove the strategy "atomic"`},
		{"strategy none", `"strategy": "none", "color": "blue"`, "spec.strategy", "supports only the none merge strategy"},
		{"strategy in stanza", `"defaults": {"strategy": "patch", "color": "blue"}`, "spec.defaults.strategy", `"defaults" stanza and strategy "patch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, parse(t, k, withTargets(tc.body)), tc.field, tc.substr)
		})
	}
}

func TestParseRestrictedKinds(t *testing.T) {
	patchOverrides := mustKind(t, Spec{Class: Inherited, Strategies: []merge.Strategy{merge.PatchOverrides}})
	atomic := mustKind(t, Spec{Class: Inherited, Strategies: []merge.Strategy{merge.AtomicOverrides, merge.AtomicDefaults}})
	withCustom := mustKind(t, Spec{Class: Inherited, Strategies: []merge.Strategy{merge.AtomicDefaults, merge.Custom}, Custom: customFn})
	customOnly := mustKind(t, Spec{Class: Inherited, Strategies: []merge.Strategy{merge.Custom}, Custom: customFn})
	for _, tc := range []struct {
		name   string
		kind   *Kind
		body   string
		want   merge.Strategy
		field  string // "" for a valid policy
		substr string
	}{
		// GEP-713: an unspecified strategy is the first the kind supports.
		{"patch-overrides bare", patchOverrides, `"color": "blue"`, merge.PatchOverrides, "", ""},
		{"patch-overrides overrides", patchOverrides, `"overrides": {"color": "blue"}`, merge.PatchOverrides, "", ""},
		{"patch-overrides defaults", patchOverrides, `"defaults": {"color": "blue"}`, "", "spec.defaults", `stanza "defaults" (supported: patch-overrides)`},
		{"patch-overrides atomic", patchOverrides, `"strategy": "atomic", "color": "blue"`, "", "spec.strategy", `bare spec proper with strategy "atomic"`},
		{"patch-overrides overrides atomic", patchOverrides, `"overrides": {"strategy": "atomic", "color": "blue"}`, "", "spec.overrides.strategy", `stanza "overrides" with strategy "atomic"`},
		{"atomic bare", atomic, `"color": "blue"`, merge.AtomicDefaults, "", ""},
		{"atomic overrides", atomic, `"overrides": {"color": "blue"}`, merge.AtomicOverrides, "", ""},
		{"atomic patch", atomic, `"strategy": "merge", "defaults": {"color": "blue"}`, "", "spec.strategy", `with strategy "merge"`},
		{"custom kind bare", withCustom, `"color": "blue"`, merge.AtomicDefaults, "", ""},
		{"custom kind custom", withCustom, `"strategy": "custom", "color": "blue"`, merge.Custom, "", ""},
		{"custom kind custom in defaults", withCustom, `"defaults": {"strategy": "custom", "color": "blue"}`, merge.Custom, "", ""},
		{"custom kind defaults", withCustom, `"defaults": {"color": "blue"}`, merge.AtomicDefaults, "", ""},
		// An overrides stanza asks for an override; custom is chosen only by name.
		{"custom kind overrides", withCustom, `"overrides": {"color": "blue"}`, "", "spec.overrides", `stanza "overrides"`},
		{"custom only bare", customOnly, `"color": "blue"`, merge.Custom, "", ""},
		{"custom only named", customOnly, `"strategy": "custom", "color": "blue"`, merge.Custom, "", ""},
		{"custom only defaults", customOnly, `"defaults": {"color": "blue"}`, "", "spec.defaults", "(supported: custom)"},
		{"custom only atomic", customOnly, `"strategy": "atomic", "color": "blue"`, "", "spec.strategy", `with strategy "atomic"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, tc.kind, withTargets(tc.body))
			if tc.field != "" {
				wantProblem(t, p, tc.field, tc.substr)
				return
			}
			wantValid(t, p)
			if p.Strategy != tc.want {
				t.Errorf("strategy = %q, want %q", p.Strategy, tc.want)
			}
			if !reflect.DeepEqual(p.Spec, map[string]any{"color": "blue"}) {
				t.Errorf("spec proper = %v", p.Spec)
			}
		})
	}
}

func TestParseSpecProperKeepsOtherFields(t *testing.T) {
	p := parse(t, inheritedKind(t), `{"targetRef": `+gwRef+`, "strategy": "patch", "color": {"r": 1, "g": null}, "list": [1, "a"], "mergeType": "x"}`)
	wantValid(t, p)
	want := map[string]any{"color": map[string]any{"r": int64(1), "g": nil}, "list": []any{int64(1), "a"}, "mergeType": "x"}
	if !reflect.DeepEqual(p.Spec, want) {
		t.Errorf("spec proper = %#v, want %#v", p.Spec, want)
	}
}

func TestParseNoName(t *testing.T) {
	u := object(t, withTargets(`"color": "blue"`))
	unstructured.RemoveNestedField(u.Object, "metadata", "name")
	p := Parse(u, inheritedKind(t))
	if len(p.Problems) != 1 || p.Problems[0].Field != "metadata.name" {
		t.Fatalf("problems = %v, want one at metadata.name", p.Problems)
	}
}

func TestParseProblemsAccumulate(t *testing.T) {
	// Independent problems in targets and intent are all reported, in order.
	p := parse(t, inheritedKind(t), `{"targetRefs": [{"name": "gw"}], "strategy": "fancy", "color": "blue"}`)
	if len(p.Problems) != 2 || p.Problems[0].Field != "spec.targetRefs[0].kind" || p.Problems[1].Field != "spec.strategy" {
		t.Fatalf("problems = %v", p.Problems)
	}
	for _, pr := range p.Problems {
		if !strings.Contains(pr.Error(), "ColorPolicy.policies.example.com ns1/p1") {
			t.Errorf("problem %q does not name the policy", pr.Error())
		}
	}
}

// TestParseNoSectionNames: for a kind whose targetRefs have no sectionName
// (Istio's: the API server prunes it), a reference's sectionName is read as
// absent, so it names the whole object (two references to one Service by
// two ports are one), and each is reported in Ignored, naming the field;
// the policy stays valid. A kind with section names keeps them.
func TestParseNoSectionNames(t *testing.T) {
	spec := `{"targetRefs": [{"kind": "Service", "group": "", "name": "s", "sectionName": "http"},
		{"kind": "Service", "group": "", "name": "s", "sectionName": "grpc"},
		{"kind": "Gateway", "group": "gateway.networking.k8s.io", "name": "gw", "sectionName": ""},
		{"kind": "Gateway", "group": "gateway.networking.k8s.io", "name": "gw2", "sectionName": 7}]}`
	p := parse(t, mustKind(t, Spec{Class: Direct, NoSectionNames: true}), spec)
	wantValid(t, p)
	var got []string
	for _, tr := range p.Targets {
		got = append(got, tr.Kind+"/"+tr.Name+"#"+tr.SectionName+"@"+tr.Field)
	}
	if want := []string{"Service/s#@spec.targetRefs[0]", "Gateway/gw#@spec.targetRefs[2]", "Gateway/gw2#@spec.targetRefs[3]"}; !slices.Equal(got, want) {
		t.Errorf("targets = %v, want %v", got, want)
	}
	got = nil
	for _, pr := range p.Ignored {
		if pr.Object != p.Ref {
			t.Errorf("ignored %+v is not about the policy", pr)
		}
		got = append(got, pr.Field+": "+pr.Message)
	}
	if want := []string{
		"spec.targetRefs[0].sectionName: sectionName is not part of ColorPolicy's targetRefs; the API server drops it, so the policy targets the whole Service",
		"spec.targetRefs[1].sectionName: sectionName is not part of ColorPolicy's targetRefs; the API server drops it, so the policy targets the whole Service",
		"spec.targetRefs[3].sectionName: sectionName is not part of ColorPolicy's targetRefs; the API server drops it, so the policy targets the whole Gateway",
	}; !slices.Equal(got, want) {
		t.Errorf("ignored = %q, want %q", got, want)
	}

	// The legacy targetRef too.
	p = parse(t, mustKind(t, Spec{Class: Direct, NoSectionNames: true}), `{"targetRef": {"kind": "Service", "group": "", "name": "s", "sectionName": "http"}}`)
	wantValid(t, p)
	if len(p.Targets) != 1 || p.Targets[0].SectionName != "" || len(p.Ignored) != 1 || p.Ignored[0].Field != "spec.targetRef.sectionName" {
		t.Errorf("targetRef: targets %+v, ignored %+v", p.Targets, p.Ignored)
	}

	// A kind with section names keeps them.
	p = parse(t, directKind(t), spec)
	if len(p.Ignored) != 0 {
		t.Errorf("a kind with section names ignored %v", p.Ignored)
	}
	wantProblem(t, p, "spec.targetRefs[3].sectionName", "must be a string")
	if len(p.Targets) != 3 || p.Targets[0].SectionName != "http" || p.Targets[1].SectionName != "grpc" {
		t.Errorf("a kind with section names: targets %+v", p.Targets)
	}
}
