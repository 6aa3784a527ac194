package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// filterTopo is docsTopo with filters (YAML list items, indented four
// spaces) on rule first of HTTPRoute r1.
func filterTopo(t *testing.T, filters string) string {
	t.Helper()
	topo := strings.Replace(docsTopo, `  - name: first
    backendRefs: [{name: s1, port: 80}]`, `  - name: first
    filters:
`+filters+`
    backendRefs: [{name: s1, port: 80}]`, 1)
	if topo == docsTopo {
		t.Fatal("the topology changed: r1's rule first not found")
	}
	return topo
}

// filterCRD is an Inherited kind on Gateway > HTTPRoute rules attached by
// ExtensionRef filters, with the given strategy.
func filterCRD(strategy string) string {
	return declaredCRD("policies.example.com", "FPolicy", "fpolicies", "Inherited", "attache.dev/hierarchy: Gateway,HTTPRoute", "attache.dev/effective-section-kinds: HTTPRoute", "attache.dev/merge-strategies: "+strategy, "attache.dev/filter-attachment: extension-ref")
}

// TestFilterRankWithTarget: a policy that targets a rule and is named by
// its filter is attached once, ranked as the filter ranks it: first.
func TestFilterRankWithTarget(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := filterTopo(t, `    - {type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: both}}`)
	res := compute(t, engine.Options{}, c, topo,
		pol(kgwV, "TrafficPolicy", "older", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
timeouts: {request: 10s}`),
		pol(kgwV, "TrafficPolicy", "both", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
timeouts: {request: 3s}`))
	want(t, "rule first", effective(t, res, "TrafficPolicy", rule("r1", "first")), []string{`{"timeouts":{"request":"3s"}}`})
	// Attached once, at the rule: one entry in its context's stack.
	var at []string
	for _, e := range res.Effective {
		if e.Target == rule("r1", "first") {
			for _, c := range e.Contexts {
				for _, se := range c.Stack {
					if se.Policy.Name == "both" {
						at = append(at, se.At.String())
					}
				}
			}
		}
	}
	want(t, "both attached", at, []string{"HTTPRoute.gateway.networking.k8s.io default/r1#first"})
	want(t, "both ancestors", ancestorsOf(t, res, "both"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
}

// TestFilterOnRouteKindOutsideTheKind: a GRPCRoute rule's filter naming a
// TrafficPolicy, whose effective targets are HTTPRoute rules, does not
// attach it; the policy says so at that rule (Invalid there).
func TestFilterOnRouteKindOutsideTheKind(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := strings.Replace(docsTopo, `rules: [{name: only, backendRefs: [{name: s2, port: 80}]}]`,
		`rules: [{name: only, filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: g}}], backendRefs: [{name: s2, port: 80}]}]`, 1)
	if topo == docsTopo {
		t.Fatal("the topology changed: gr1's rule not found")
	}
	res := compute(t, engine.Options{}, c, topo, pol(kgwV, "TrafficPolicy", "g", 2, `timeouts: {request: 3s}`))
	want(t, "g", status(t, res, "g", "Accepted"), "False/Invalid")
	want(t, "g ancestors", ancestorsOf(t, res, "g"), []string{"Gateway.gateway.networking.k8s.io default/g1=Invalid"})
	if msg := condition(t, res, "g", "Accepted").Message; !strings.Contains(msg, "GRPCRoute default/gr1 spec.rules[0].filters[0].extensionRef names it") ||
		!strings.Contains(msg, "applies to the rules of HTTPRoute.gateway.networking.k8s.io only") {
		t.Errorf("message: %s", msg)
	}
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "TrafficPolicy" {
			t.Errorf("an effective TrafficPolicy at %s", e.Target)
		}
	}
}

// TestFilterConflictMessages: under strategy none, at a rule the policy
// its filter names wins, and the older policy targeting the rule is told
// that the filter, not a name order, decided. Under a weight, a policy
// displaced at its own level is told the heavier one displaced it, not
// the policy that won on another level.
func TestFilterConflictMessages(t *testing.T) {
	topo := filterTopo(t, `    - {type: ExtensionRef, extensionRef: {group: policies.example.com, kind: FPolicy, name: byf}}`)
	res := compute(t, engine.Options{}, filterCRD("none"), topo,
		pol("policies.example.com/v1", "FPolicy", "older", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
x: old`),
		pol("policies.example.com/v1", "FPolicy", "byf", 5, `x: filter`))
	want(t, "rule first", effective(t, res, "FPolicy", rule("r1", "first")), []string{`{"x":"filter"}`})
	c := condition(t, res, "older", "Accepted")
	if c.Reason != engine.ReasonConflicted || !strings.HasSuffix(c.Message, "the established policy (named by the rule's ExtensionRef filter) wins") {
		t.Errorf("older: %s %q", c.Reason, c.Message)
	}

	crd := modePolicyCRD
	lightOld := pol("policies.example.com/v1", "ModePolicy", "light-old", 1, "targetRefs: ["+gwRef+"]\nmode: lo")
	heavyNew := weighted(pol("policies.example.com/v1", "ModePolicy", "heavy-new", 5, "targetRefs: ["+gwRef+"]\nmode: hn"), "example.com/weight", "10")
	mid := pol("policies.example.com/v1", "ModePolicy", "mid", 3, "targetRefs: ["+r1Ref+"]\nmode: mid")
	res = compute(t, engine.Options{}, crd, docsTopo, lightOld, heavyNew, mid)
	want(t, "r1", effective(t, res, "ModePolicy", dR1), []string{`{"mode":"mid"}`})
	for name, end := range map[string]string{
		"light-old": "ModePolicy default/heavy-new (on Gateway default/g1); with merge strategy none the established policy (the higher example.com/weight) wins",
		"heavy-new": "ModePolicy default/mid (on HTTPRoute default/r1); with merge strategy none the established (older) policy wins",
	} {
		if c := condition(t, res, name, "Accepted"); c.Reason != engine.ReasonConflicted || !strings.HasSuffix(c.Message, end) {
			t.Errorf("%s: %s %q, want it to end %q", name, c.Reason, c.Message, end)
		}
	}
}
