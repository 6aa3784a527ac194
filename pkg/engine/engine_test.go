package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1}
spec: {ports: [{name: http, port: 80}]}
`

const colorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/hierarchy: Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io,Service
    attache.dev/merge-strategies: %s
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
`

func compute(t *testing.T, opts engine.Options, docs ...string) *engine.Result {
	t.Helper()
	return engine.Compute(decodeDocs(t, docs...), opts)
}

// decodeDocs decodes YAML documents into engine objects; a problem fails
// the test.
func decodeDocs(t *testing.T, docs ...string) []engine.Object {
	t.Helper()
	objs, probs := manifest.Decode(strings.NewReader(strings.Join(docs, "\n---\n")), t.Name())
	if len(probs) > 0 {
		t.Fatalf("decode: %v", probs)
	}
	return objs
}

func colorPolicy(name, target, kind, body string) string {
	return fmt.Sprintf(`
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: %s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]
  %s
`, name, kind, target, body)
}

func TestObjectsWithoutNamespaceLandInDefault(t *testing.T) {
	res := compute(t, engine.Options{}, fmt.Sprintf(colorCRD, "atomic-defaults"), topo, colorPolicy("p", "g1", "Gateway", "color: red"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	if len(res.Effective) != 1 {
		t.Fatalf("got %d effective policies, want 1", len(res.Effective))
	}
	if got := res.Effective[0].Target; got.Namespace != "default" || got.Name != "s1" {
		t.Errorf("target %v, want default/s1", got)
	}
	if got := res.Policies[0].Policy.Ref.Namespace; got != "default" {
		t.Errorf("policy namespace %q, want default", got)
	}
}

func TestCustomMergeFromOptions(t *testing.T) {
	// Custom: concatenate the colors, established first.
	concat := func(est, chal map[string]any) (map[string]any, error) {
		return map[string]any{"color": fmt.Sprint(est["color"]) + "+" + fmt.Sprint(chal["color"]), "kept": chal["kept"]}, nil
	}
	gk := topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}
	res := compute(t, engine.Options{Custom: map[topology.GroupKind]merge.CustomFunc{gk: concat}},
		fmt.Sprintf(colorCRD, "custom"), topo,
		colorPolicy("top", "g1", "Gateway", "color: red"),
		colorPolicy("low", "r1", "HTTPRoute", "color: blue\n  kept: yes-please"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	ctx := res.Effective[0].Contexts[0]
	if got := ctx.Spec["color"]; got != "red+blue" {
		t.Errorf("color = %v, want red+blue", got)
	}
	src := map[string]string{}
	for _, f := range ctx.Fields {
		src[f.Path] = f.Policy.Name
	}
	// A value neither operand had is the established policy's doing; a
	// value kept from the challenger stays the challenger's.
	if src["color"] != "top" || src["kept"] != "low" {
		t.Errorf("sources = %v, want color<-top, kept<-low", src)
	}
}

func TestCustomMergeFailureIsReportedInTheContext(t *testing.T) {
	fail := func(est, chal map[string]any) (map[string]any, error) { return nil, fmt.Errorf("no colors today") }
	gk := topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}
	res := compute(t, engine.Options{Custom: map[topology.GroupKind]merge.CustomFunc{gk: fail}},
		fmt.Sprintf(colorCRD, "custom"), topo,
		colorPolicy("top", "g1", "Gateway", "color: red"),
		colorPolicy("low", "r1", "HTTPRoute", "color: blue"))
	ctx := res.Effective[0].Contexts[0]
	if len(ctx.Errors) != 1 || !strings.Contains(ctx.Errors[0], "no colors today") {
		t.Errorf("errors = %v", ctx.Errors)
	}
	if ctx.Spec["color"] != "blue" {
		t.Errorf("a failed custom step keeps the challenger; got %v", ctx.Spec)
	}
}

func TestGoRegisteredKindReplacesCRD(t *testing.T) {
	k, err := policy.NewKind(policy.Spec{
		GroupKind:  topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"},
		Class:      policy.Inherited,
		Hierarchy:  []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute, topology.KindService},
		Strategies: []merge.Strategy{merge.AtomicOverrides},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := compute(t, engine.Options{Kinds: []*policy.Kind{k}}, fmt.Sprintf(colorCRD, "atomic-defaults"), topo,
		colorPolicy("top", "g1", "Gateway", "color: red"),
		colorPolicy("low", "r1", "HTTPRoute", "color: blue"))
	// With only atomic overrides, the Gateway's policy wins.
	if got := res.Effective[0].Contexts[0].Spec["color"]; got != "red" {
		t.Errorf("color = %v, want red (the Go kind's overrides)", got)
	}
}

func TestAncestorsAreCappedAtSixteen(t *testing.T) {
	var docs []string
	docs = append(docs, fmt.Sprintf(colorCRD, "atomic-defaults"))
	var refs []string
	for i := range 20 {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: s%02d}\nspec: {ports: [{port: 80}]}", i))
		if i < 16 {
			refs = append(refs, fmt.Sprintf("{group: \"\", kind: Service, name: s%02d}", i))
		}
	}
	// 16 targetRefs, one of them missing, plus a selector matching 20
	// Services: 36 ancestors, reported as 16 with the missing one first.
	refs[15] = `{group: "", kind: Service, name: missing}`
	docs = append(docs, fmt.Sprintf(`apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: wide}
spec:
  targetRefs: [%s]
  color: red`, strings.Join(refs, ", ")))
	res := compute(t, engine.Options{}, docs...)
	st := res.Policies[0]
	if len(st.Ancestors) != engine.MaxAncestors {
		t.Fatalf("got %d ancestors, want %d", len(st.Ancestors), engine.MaxAncestors)
	}
	if st.AncestorsOmitted != 0 {
		// 16 targetRefs give exactly 16 ancestors.
		t.Fatalf("omitted %d, want 0", st.AncestorsOmitted)
	}
	if st.Ancestors[15].Ref.Name != "missing" || st.Ancestors[15].Conditions[0].Reason != engine.ReasonTargetNotFound {
		t.Errorf("last ancestor %+v, want the missing target, TargetNotFound", st.Ancestors[15])
	}
	// Now a selector over all 20 Services: more than 16.
	docs[len(docs)-1] = `apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: wide}
spec:
  targetRefs: [{group: "", kind: Service, name: missing}, {group: "", kind: Service, selector: {}}]
  color: red`
	res = compute(t, engine.Options{}, docs...)
	st = res.Policies[0]
	if len(st.Ancestors) != 16 || st.AncestorsOmitted != 5 {
		t.Fatalf("got %d ancestors and %d omitted, want 16 and 5", len(st.Ancestors), st.AncestorsOmitted)
	}
	if st.Ancestors[0].Ref.Name != "missing" {
		t.Errorf("not-accepted ancestors come first; got %v", st.Ancestors[0].Ref)
	}
	// A newer policy on s19 beats it there: that ancestor needs attention
	// and comes next, before the ones programmed in full (by ref, s19
	// would have been left out).
	newer := `apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: narrow, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Service, name: s19}]
  color: blue`
	older := strings.Replace(docs[len(docs)-1], "metadata: {name: wide}", `metadata: {name: wide, creationTimestamp: "2026-01-01T00:00:00Z"}`, 1)
	res = compute(t, engine.Options{}, append(append(docs[:len(docs)-1:len(docs)-1], older), newer)...)
	var wide *engine.PolicyStatus
	for i := range res.Policies {
		if res.Policies[i].Policy.Ref.Name == "wide" {
			wide = res.Policies[i]
		}
	}
	if wide == nil || len(wide.Ancestors) != 16 {
		t.Fatalf("wide's status = %+v", wide)
	}
	if got := []string{wide.Ancestors[0].Ref.Name, wide.Ancestors[1].Ref.Name, wide.Ancestors[2].Ref.Name}; got[0] != "missing" || got[1] != "s19" || got[2] != "s00" {
		t.Errorf("ancestors start %v, want [missing s19 s00]: not accepted, then beaten, then by ref", got)
	}
	st = wide
	var truncated *engine.Condition
	for i := range st.Conditions {
		if st.Conditions[i].Type == engine.ConditionTruncated {
			truncated = &st.Conditions[i]
		}
	}
	if truncated == nil || !strings.Contains(truncated.Message, "5 ancestor entries were left out") {
		t.Errorf("truncation condition = %+v", truncated)
	}
}

func TestDuplicateAndKindlessObjectsAreReported(t *testing.T) {
	res := compute(t, engine.Options{}, topo, "apiVersion: v1\nkind: Service\nmetadata: {name: s1}\nspec: {ports: [{port: 81}]}")
	found := false
	for _, p := range res.Problems {
		if strings.Contains(p.Message, "duplicate object") && p.Object.Name == "s1" {
			found = true
		}
	}
	if !found {
		t.Errorf("duplicate Service not reported: %v", res.Problems)
	}
}

func TestAncestorStatusInGatewayAPITypes(t *testing.T) {
	res := compute(t, engine.Options{}, fmt.Sprintf(colorCRD, "atomic-defaults"), topo, colorPolicy("p", "g1", "Gateway", "color: red"))
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	st := res.Policies[0].Ancestors[0].GatewayAPI("example.com/ctrl", 7, now)
	if string(st.ControllerName) != "example.com/ctrl" || string(st.AncestorRef.Name) != "g1" || *st.AncestorRef.Kind != "Gateway" || string(*st.AncestorRef.Namespace) != "default" {
		t.Errorf("ancestor ref %+v", st)
	}
	if len(st.Conditions) != 2 || st.Conditions[0].ObservedGeneration != 7 || !st.Conditions[1].LastTransitionTime.Time.Equal(now) {
		t.Errorf("conditions %+v", st.Conditions)
	}
}

func TestAffectedConditionNamesPoliciesAndGeneration(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: s1, generation: 4}\nspec: {ports: [{name: http, port: 80}]}"
	res := compute(t, engine.Options{ConditionDomain: "colors.example.com"}, fmt.Sprintf(colorCRD, "atomic-defaults"),
		strings.Replace(topo, "apiVersion: v1\nkind: Service\nmetadata: {name: s1}\nspec: {ports: [{name: http, port: 80}]}", svc, 1),
		colorPolicy("p", "g1", "Gateway", "color: red"))
	if len(res.Affected) != 1 {
		t.Fatalf("affected = %v", res.Affected)
	}
	c := res.Affected[0].Condition
	if c.Type != "colors.example.com/ColorPolicyAffected" || c.Status != "True" || c.Reason != "Affected" || c.ObservedGeneration != 4 || !strings.Contains(c.Message, "default/p") {
		t.Errorf("condition %+v", c)
	}
}

func TestNoneStrategyPolicyOnTwoLevelsDoesNotConflictWithItself(t *testing.T) {
	p := `
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: both}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  color: red
`
	res := compute(t, engine.Options{}, fmt.Sprintf(colorCRD, "none"), topo, p)
	st := res.Policies[0]
	for _, a := range st.Ancestors {
		if a.Conditions[0].Reason != engine.ReasonAccepted || a.Conditions[1].Reason != engine.ReasonProgrammed {
			t.Errorf("ancestor %v: %+v", a.Ref, a.Conditions)
		}
	}
	if st.Conditions[1].Reason != engine.ReasonProgrammed {
		t.Errorf("summary %+v", st.Conditions)
	}
}

func TestConflictedMessageNamesTheWinnerEvenForAnEmptySpec(t *testing.T) {
	pol := func(name, ts, body string) string {
		return fmt.Sprintf("apiVersion: policies.example.com/v1\nkind: ColorPolicy\nmetadata: {name: %s, creationTimestamp: %q}\nspec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]\n%s", name, ts, body)
	}
	res := compute(t, engine.Options{}, fmt.Sprintf(colorCRD, "none"), topo,
		pol("old", "2024-01-01T00:00:00Z", "  color: red\n"), pol("new", "2024-02-01T00:00:00Z", ""))
	var newSt *engine.PolicyStatus
	for _, p := range res.Policies {
		if p.Policy.Ref.Name == "new" {
			newSt = p
		}
	}
	c := newSt.Conditions[0]
	if c.Reason != engine.ReasonConflicted || !strings.Contains(c.Message, "ColorPolicy default/old") {
		t.Errorf("condition %+v does not name the winner", c)
	}
}

func TestSectionOfAnEffectiveTargetIsInvalid(t *testing.T) {
	crd := strings.Replace(fmt.Sprintf(colorCRD, "atomic-defaults"), "    attache.dev/hierarchy", "    attache.dev/target-kinds: Service\n    attache.dev/hierarchy", 1)
	p := `
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: port}
spec:
  targetRefs: [{group: "", kind: Service, name: s1, sectionName: http}]
  color: red
`
	res := compute(t, engine.Options{}, crd, topo, p)
	c := res.Policies[0].Conditions[0]
	if c.Status != "False" || c.Reason != engine.ReasonInvalid || !strings.Contains(c.Message, "target Service default/s1 instead") {
		t.Errorf("condition %+v", c)
	}
}

func TestDuplicateEffectiveTargetKindsCountOnce(t *testing.T) {
	crd := strings.Replace(fmt.Sprintf(colorCRD, "atomic-defaults"), "    attache.dev/hierarchy", "    attache.dev/effective-target-kinds: Service,Service\n    attache.dev/hierarchy", 1)
	res := compute(t, engine.Options{}, crd, topo, colorPolicy("p", "g1", "Gateway", "color: red"))
	if len(res.Effective) != 1 || res.Policies[0].Reach.Contexts != 1 {
		t.Errorf("effective %d, reach %+v", len(res.Effective), res.Policies[0].Reach)
	}
}

func TestInheritedKindOutsideItsHierarchyIsRejected(t *testing.T) {
	crd := strings.Replace(fmt.Sprintf(colorCRD, "atomic-defaults"), "    attache.dev/hierarchy", "    attache.dev/target-kinds: Namespace\n    attache.dev/hierarchy", 1)
	res := compute(t, engine.Options{}, crd, topo)
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "target kind Namespace is not in the hierarchy") {
		t.Errorf("problems %v", res.Problems)
	}
}

// A Namespace can be an effective target of an Inherited kind: its context
// is the Namespace alone, with the policies attached to it (decision 2
// orders them). It used to get no effective policy at all, silently, while
// its policies reported "no effective target in scope".
func TestNamespaceAsEffectiveTarget(t *testing.T) {
	res := compute(t, engine.Options{}, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nspolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/effective-target-kinds: Namespace,Service
    attache.dev/merge-strategies: patch-defaults
spec:
  group: policies.example.com
  names: {kind: NsPolicy, plural: nspolicies}
---
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: policies.example.com/v1
kind: NsPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Namespace, name: app}]
  a: old
  b: old
---
apiVersion: policies.example.com/v1
kind: NsPolicy
metadata: {name: new, namespace: app, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: "", kind: Namespace, name: app}]
  a: new
`)
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	got := map[string]string{}
	for _, e := range res.Effective {
		for _, c := range e.Contexts {
			c.Paths(func(p []topology.Ref) bool {
				var parts []string
				for _, r := range p {
					parts = append(parts, r.Short())
				}
				got[strings.Join(parts, " > ")] = fmt.Sprint(c.Spec)
				return true
			})
		}
	}
	// Same level, patch defaults: the newer wins a, the older keeps b
	// (decision 4); the Service below the Namespace gets the same.
	want := map[string]string{
		"Namespace app":                  "map[a:new b:old]",
		"Namespace app > Service app/s1": "map[a:new b:old]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("effective policies\n got: %v\nwant: %v", got, want)
	}
	for _, ps := range res.Policies {
		if c := ps.Conditions[len(ps.Conditions)-1]; c.Reason == engine.ReasonProgrammed && strings.Contains(c.Message, "no effective target") {
			t.Errorf("%s: %s", ps.Policy.Ref.Name, c.Message)
		}
	}
	if len(res.Affected) != 2 {
		t.Errorf("affected %v, want the Namespace and the Service", res.Affected)
	}
}

// TestConflictedMessageSaysWhyTheWinnerIsEstablished: with strategy none
// the established policy is the older, or, at the same creationTimestamp,
// the first by namespace/name (decision 2); the message must give the
// reason that applied, not call a policy of the same age "older".
func TestConflictedMessageSaysWhyTheWinnerIsEstablished(t *testing.T) {
	pol := func(name, ts, kind, target string) string {
		return fmt.Sprintf("apiVersion: policies.example.com/v1\nkind: ColorPolicy\nmetadata: {name: %s, creationTimestamp: %q}\nspec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\n  color: %s\n", name, ts, kind, target, name)
	}
	svc := func(name string) string {
		return strings.Replace(pol(name, "2024-01-01T00:00:00Z", "Service", "s1"), "group: gateway.networking.k8s.io", `group: ""`, 1)
	}
	// A second route to s1: s1 then has two contexts, whose stacks can have
	// different winners.
	r2 := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r2}\nspec:\n  parentRefs: [{name: g1}]\n  rules: [{backendRefs: [{name: s1, port: 80}]}]\n"
	const jan, feb = "2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"
	for _, tc := range []struct {
		name   string
		docs   []string
		loser  string
		want   []string
		wantNo []string
	}{
		{"older", []string{pol("old", jan, "Gateway", "g1"), pol("new", feb, "Gateway", "g1")}, "new",
			[]string{"Conflicts with the established ColorPolicy default/old (on Gateway default/g1); with merge strategy none the established (older) policy wins"},
			[]string{"namespace/name"}},
		{"same age", []string{pol("b", jan, "Gateway", "g1"), pol("a", jan, "Gateway", "g1")}, "b",
			[]string{"Conflicts with the established ColorPolicy default/a (on Gateway default/g1); with merge strategy none the established policy wins: with the same creationTimestamp, it comes first by namespace/name"},
			[]string{"older"}},
		{"no timestamps", []string{strings.Replace(pol("b", jan, "Gateway", "g1"), `, creationTimestamp: "`+jan+`"`, "", 1),
			strings.Replace(pol("a", jan, "Gateway", "g1"), `, creationTimestamp: "`+jan+`"`, "", 1)}, "b",
			[]string{"it comes first by namespace/name"}, []string{"older"}},
		{"one of each", []string{r2, pol("old", "2023-01-01T00:00:00Z", "HTTPRoute", "r1"), pol("a-tie", jan, "HTTPRoute", "r2"), svc("loser")}, "loser",
			[]string{"ColorPolicy default/a-tie (on HTTPRoute default/r2; same creationTimestamp, first by namespace/name)",
				"ColorPolicy default/old (on HTTPRoute default/r1; older)"},
			[]string{"(older)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, append([]string{fmt.Sprintf(colorCRD, "none"), topo}, tc.docs...)...)
			if len(res.Problems) > 0 {
				t.Fatalf("problems: %v", res.Problems)
			}
			var st *engine.PolicyStatus
			for _, p := range res.Policies {
				if p.Policy.Ref.Name == tc.loser {
					st = p
				}
			}
			c := st.Conditions[0]
			if c.Reason != engine.ReasonConflicted {
				t.Fatalf("%s: condition %+v, want Conflicted", tc.loser, c)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Message, w) {
					t.Errorf("message %q does not say %q", c.Message, w)
				}
			}
			for _, w := range tc.wantNo {
				if strings.Contains(c.Message, w) {
					t.Errorf("message %q says %q", c.Message, w)
				}
			}
			if a := st.Ancestors[0].Conditions[0]; a.Message != c.Message {
				t.Errorf("ancestor message %q differs from the summary's %q", a.Message, c.Message)
			}
		})
	}
}
