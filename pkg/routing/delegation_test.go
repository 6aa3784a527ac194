package routing_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// delegationTopology: kgateway's TrafficPolicy (unlabelled: its profile),
// a Gateway of class kgateway, HTTPRoute infra/parent (annotated
// ShallowMergePreferParent) delegating /a to every HTTPRoute of team-a and
// sending the rest to home; team-a/a1 with a rule under /a (orders), one
// outside it (stray) and one without matches (bare).
const delegationTopology = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec:
  group: gateway.kgateway.dev
  names: {kind: TrafficPolicy, plural: trafficpolicies}
  scope: Namespaced
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: infra, annotations: {kgateway.dev/inherited-policy-priority: ShallowMergePreferParent}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [shop.example.com]
  rules:
  - name: team-a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: team-a}]
  - name: home
    backendRefs: [{name: home, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a1, namespace: team-a}
spec:
  rules:
  - name: orders
    matches: [{path: {type: PathPrefix, value: /a/orders}}]
    backendRefs: [{name: orders, port: 80}]
  - name: stray
    matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{name: orders, port: 80}]
  - name: bare
    backendRefs: [{name: orders, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: home, namespace: infra}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: team-a}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: parent-pol, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: parent}]
  timeouts: {request: 10s}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: a1-pol, namespace: team-a}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a1}]
  timeouts: {request: 1s}
  retry: {attempts: 3}
`

// A request under the delegating rule's prefix is answered by the child's
// rule whose match extends it, on the path Gateway > parent > its rule >
// child > its rule, with the TrafficPolicy of that context (the parent's
// timeouts winning, as the parent says); the delegating rule answers
// nothing itself, and a child's rules outside its prefix or without
// matches are dropped, as kgateway does.
// Source: kgateway-dev/kgateway pkg/kgateway/translator/httproute
// (delegation_helpers.go filterDelegatedChildren: the parent's PathPrefix
// must prefix the child's path, its headers and query parameters be among
// the child's, its method equal; a child rule without matches is dropped;
// irtranslator route.go: a delegating rule emits no route of its own).
func TestTraceFollowsRouteDelegation(t *testing.T) {
	ix, pols := build(t, delegationTopology, true) // the engine reports the child rules dropped
	tr := trace(t, ix, pols, "http://shop.example.com/a/orders/1", nil)
	o := tr.Outcomes[0]
	if o.Route == nil || o.Route.Name != "a1" || o.Rule != "orders" || o.Result != "forwarded" {
		t.Fatalf("outcome %+v, want a1 rule orders forwarded", o)
	}
	parentRule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "infra", Name: "parent", SectionName: "team-a"}
	if !slices.Equal(o.DelegatedBy, []topology.Ref{parentRule}) {
		t.Errorf("DelegatedBy %v, want %v", o.DelegatedBy, parentRule)
	}
	var path []string
	for _, r := range o.Path {
		path = append(path, r.String())
	}
	if got := strings.Join(path, " > "); !strings.Contains(got, "HTTPRoute.gateway.networking.k8s.io infra/parent > HTTPRoute.gateway.networking.k8s.io infra/parent#team-a > HTTPRoute.gateway.networking.k8s.io team-a/a1 > HTTPRoute.gateway.networking.k8s.io team-a/a1#orders") {
		t.Errorf("path %s does not pass the parent, its rule, the child and its rule", got)
	}
	if len(o.EffectivePolicies) != 1 || o.EffectivePolicies[0].Target.Name != "a1" {
		t.Fatalf("effective policies %+v, want the TrafficPolicy of a1's rule only", o.EffectivePolicies)
	}
	spec, _ := json.Marshal(o.EffectivePolicies[0].Spec)
	if string(spec) != `{"retry":{"attempts":3},"timeouts":{"request":"10s"}}` {
		t.Errorf("effective TrafficPolicy %s, want the parent's timeouts and the child's retry", spec)
	}
	for url, want := range map[string]string{
		"http://shop.example.com/a/other": "home", // no child match: the delegating rule has no route of its own
		"http://shop.example.com/b/x":     "home", // the child's stray rule is dropped
		"http://shop.example.com/":        "home",
	} {
		o := trace(t, ix, pols, url, nil).Outcomes[0]
		if o.Route == nil || o.Rule != want || len(o.DelegatedBy) != 0 {
			t.Errorf("%s: route %v rule %q delegated by %v, want parent's rule %s", url, o.Route, o.Rule, o.DelegatedBy, want)
		}
	}
}

// Under a delegating rule for every path ("/"), a child rule without
// matches has the API's default match (PathPrefix /, as the API server
// stores it) and is kept: it answers the paths no other child rule
// matches. (Under /a it is dropped: TestTraceDelegation.)
func TestTraceDelegationRuleWithoutMatchesTakesTheDefault(t *testing.T) {
	topo := strings.Replace(delegationTopology, "value: /a}}]", "value: /}}]", 1)
	topo = strings.Replace(topo, "  - name: home\n    backendRefs: [{name: home, port: 80}]\n", "", 1)
	ix, pols := build(t, topo, true) // the engine reports the child rules dropped
	if o := trace(t, ix, pols, "http://shop.example.com/b/x", nil).Outcomes[0]; o.Rule != "stray" {
		t.Errorf("/b/x: rule %q, want a1's stray (under /)", o.Rule)
	}
	if o := trace(t, ix, pols, "http://shop.example.com/zzz", nil).Outcomes[0]; o.Rule != "bare" || len(o.DelegatedBy) == 0 {
		t.Errorf("/zzz: %s by rule %q, want a1's bare rule (PathPrefix /), delegated", o.Result, o.Rule)
	}
}

// A parent match naming a method or headers admits only child matches
// naming the same.
func TestTraceDelegationParentMethodAndHeaders(t *testing.T) {
	for what, parentMatch := range map[string]string{
		"method":  "value: /a}, method: GET}]",
		"headers": "value: /a}, headers: [{name: x-team, value: a}]}]",
	} {
		ix, pols := build(t, strings.Replace(delegationTopology, "value: /a}}]", parentMatch, 1), true) // the engine reports the child rules dropped
		o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "x-team: a").Outcomes[0]
		if o.Rule != "home" || len(o.DelegatedBy) != 0 {
			t.Errorf("parent %s: rule %q delegated by %v, want home (a1's orders names no %s)", what, o.Rule, o.DelegatedBy, what)
		}
	}
}

// A child annotated delegation.kgateway.dev/inherit-parent-matcher
// writes its matches relative to the parent's: its paths are joined after
// the parent's prefix, and a rule without matches takes the parent's.
// Source: kgateway-dev/kgateway delegation_helpers.go (the child's path
// path.Join'ed to the parent's, headers and query parameters combined,
// the parent's method; a rule without matches inherits the parent match).
func TestTraceDelegationInheritParentMatcher(t *testing.T) {
	topo := inheritingA1("True")
	topo = strings.Replace(topo, "value: /a/orders}}]", "value: /orders}, headers: [{name: x-team, value: a}]}]", 1)
	ix, pols := fixture(t, topo)
	for _, c := range []struct {
		url, header, rule string
	}{
		{"http://shop.example.com/a/orders/1", "x-team: a", "orders"}, // /a + /orders, and the child's header
		{"http://shop.example.com/a/orders/1", "x-team: b", "bare"},   // header not matched: the bare rule has /a
		{"http://shop.example.com/a/b/1", "", "stray"},                // /a + /b
		{"http://shop.example.com/a/zzz", "", "bare"},                 // the bare rule inherits /a
		{"http://shop.example.com/zzz", "", "home"},
	} {
		var headers []string
		if c.header != "" {
			headers = append(headers, c.header)
		}
		o := trace(t, ix, pols, c.url, nil, headers...).Outcomes[0]
		if o.Rule != c.rule {
			t.Errorf("%s (%s): rule %q, want %s", c.url, c.header, o.Rule, c.rule)
		}
	}
}

// Inheriting, a child's matches also take the parent's headers.
func TestTraceDelegationInheritParentHeaders(t *testing.T) {
	topo := inheritingA1("yes")
	topo = strings.Replace(topo, "value: /a}}]", "value: /a}, headers: [{name: x-env, value: prod}]}]", 1)
	topo = strings.Replace(topo, "value: /a/orders}}]", "value: /orders}}]", 1)
	ix, pols := fixture(t, topo)
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "x-env: prod").Outcomes[0]; o.Rule != "orders" {
		t.Errorf("with the parent's header: rule %q, want orders", o.Rule)
	}
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "x-env: dev").Outcomes[0]; o.Rule != "home" {
		t.Errorf("without the parent's header: rule %q, want home", o.Rule)
	}
}

// Inheriting, the parent's regular expression header matches are matched
// as such, next to the child's own.
func TestTraceDelegationInheritParentRegexHeader(t *testing.T) {
	topo := inheritingA1("true")
	topo = strings.Replace(topo, "value: /a}}]", "value: /a}, headers: [{name: x-env, type: RegularExpression, value: prod|stage}]}]", 1)
	topo = strings.Replace(topo, "value: /a/orders}}]", "value: /orders}, headers: [{name: x-id, type: RegularExpression, value: \"[0-9]+\"}]}]", 1)
	ix, pols := fixture(t, topo)
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "x-env: stage", "x-id: 42").Outcomes[0]; o.Rule != "orders" {
		t.Errorf("both headers matching: rule %q, want orders", o.Rule)
	}
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "x-env: dev", "x-id: 42").Outcomes[0]; o.Rule != "home" {
		t.Errorf("the parent's header not matching: rule %q, want home", o.Rule)
	}
}

// A child that inherits its parent's matcher and delegates in turn: its
// own children's matches are judged against its matches as extended (the
// absolute path), as kgateway recurses with the merged match.
func TestTraceDelegationThroughAnInheritingChild(t *testing.T) {
	topo := inheritingA1("true")
	// a1's orders rule (/orders under /a) delegates to d1, whose match
	// repeats the whole path /a/orders/d.
	topo = strings.Replace(topo, "value: /a/orders}}]\n    backendRefs: [{name: orders, port: 80}]",
		"value: /orders}}]\n    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: d1}]", 1)
	topo += `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: d1, namespace: team-a}
spec:
  rules:
  - name: deep
    matches: [{path: {type: PathPrefix, value: /a/orders/d}}]
    backendRefs: [{name: orders, port: 80}]
`
	ix, pols := fixture(t, topo)
	o := trace(t, ix, pols, "http://shop.example.com/a/orders/d/1", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "d1" || len(o.DelegatedBy) != 2 {
		t.Fatalf("route %v rule %q delegated by %v, want d1 through parent and a1", o.Route, o.Rule, o.DelegatedBy)
	}
}

// A delegating child's own children are judged against the child's
// matches that its parent kept: a1's orders rule delegates under /a/orders
// (kept below /a) and /b (dropped), so d1's rule under /b is not reached.
func TestTraceDelegationThroughPartlyKeptChild(t *testing.T) {
	topo := strings.Replace(delegationTopology, "value: /a/orders}}]\n    backendRefs: [{name: orders, port: 80}]",
		"value: /a/orders}}, {path: {type: PathPrefix, value: /b}}]\n    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: d1}]", 1)
	topo += `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: d1, namespace: team-a}
spec:
  rules:
  - name: kept
    matches: [{path: {type: PathPrefix, value: /a/orders/d}}]
    backendRefs: [{name: orders, port: 80}]
  - name: under-b
    matches: [{path: {type: PathPrefix, value: /b/d}}]
    backendRefs: [{name: orders, port: 80}]
`
	ix, pols := build(t, topo, true) // the engine reports the child rules dropped
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders/d/1", nil).Outcomes[0]; o.Route == nil || o.Route.Name != "d1" || o.Rule != "kept" {
		t.Errorf("/a/orders/d/1: route %v rule %q, want d1's kept", o.Route, o.Rule)
	}
	if o := trace(t, ix, pols, "http://shop.example.com/b/d/1", nil).Outcomes[0]; o.Rule != "home" {
		t.Errorf("/b/d/1: rule %q, want home (d1's under-b is below a1's dropped /b)", o.Rule)
	}
}

// Delegation paths multiply; their matches are bounded, and the bound is
// reported on the delegating rule.
func TestTraceDelegationBounded(t *testing.T) {
	us, res := chainResult(14)
	ix, bp := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	if len(bp) != 1 || !strings.Contains(bp[0].Error(), "HTTPRoute.gateway.networking.k8s.io default/top: spec.rules[0]: the routes this rule delegates to reach more than 4096 matches") {
		t.Fatalf("problems %v, want the bound reported on top's rule", bp)
	}
	o := trace(t, ix, routing.NewPolicies(res), "http://any.example/x", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "r15a" || len(o.DelegatedBy) != 15 {
		t.Errorf("route %v delegated by %d rules, want r15a through 15", o.Route, len(o.DelegatedBy))
	}
}

// chainResult is gen.DelegationChain(depth) and the engine's result over it.
func chainResult(depth int) ([]*unstructured.Unstructured, *engine.Result) {
	us := gen.DelegationChain(depth)
	objs := make([]engine.Object, len(us))
	for i, u := range us {
		objs[i] = engine.Object{Object: u}
	}
	return us, engine.Compute(objs, engine.Options{})
}

// inheritingA1 is delegationTopology with a1 annotated
// delegation.kgateway.dev/inherit-parent-matcher: value.
func inheritingA1(value string) string {
	return strings.Replace(delegationTopology, "metadata: {name: a1, namespace: team-a}",
		"metadata: {name: a1, namespace: team-a, annotations: {delegation.kgateway.dev/inherit-parent-matcher: \""+value+"\"}}", 1)
}

// Header matches are compared as written when kgateway judges a child
// (X-Team is not x-team), but matched against requests in any case: below
// a parent match with header X-Team, a1's orders (naming x-team) is
// dropped and its rule naming X-Team answers a request sending x-team.
func TestTraceDelegationHeaderNamesAsWritten(t *testing.T) {
	topo := delegationTopology
	for _, r := range [][2]string{
		{"value: /a}}]", "value: /a}, headers: [{name: X-Team, value: a}]}]"},
		{"value: /a/orders}}]", "value: /a/orders}, headers: [{name: x-team, value: a}]}]"},
		{"value: /b}}]", "value: /a/upper}, headers: [{name: X-Team, value: a}]}]"},
	} {
		if !strings.Contains(topo, r[0]) {
			t.Fatalf("delegationTopology changed: no %s", r[0])
		}
		topo = strings.Replace(topo, r[0], r[1], 1)
	}
	ix, pols := build(t, topo, true) // the engine reports the child rules dropped
	if o := trace(t, ix, pols, "http://shop.example.com/a/orders", nil, "X-Team: a").Outcomes[0]; o.Rule != "home" {
		t.Errorf("/a/orders: rule %q, want home (orders names x-team)", o.Rule)
	}
	if o := trace(t, ix, pols, "http://shop.example.com/a/upper", nil, "x-team: a").Outcomes[0]; o.Rule != "stray" {
		t.Errorf("/a/upper: rule %q, want stray (naming X-Team)", o.Rule)
	}
}

// A child inheriting the parent's matcher has its paths joined to an
// Exact parent match too (path.Join, the child's type kept), and a rule
// without matches takes the parent match whatever its type: below Exact
// /a, a1's orders (/orders) answers under /a/orders, its bare rule /a
// exactly. Its rule stray, a RegularExpression, kgateway joins into a
// regular expression, which attache does not model: the trace leaves it
// out (the engine's problem says so).
// Source: kgateway-dev/kgateway delegation_helpers.go @6cdfd6299a2a
// (mergeParentChildRouteMatch).
func TestTraceDelegationInheritJoins(t *testing.T) {
	topo := inheritingA1("true")
	for _, r := range [][2]string{
		{"type: PathPrefix, value: /a}}]", "type: Exact, value: /a}}]"},
		{"value: /a/orders}}]", "value: /orders}}]"},
		{"type: PathPrefix, value: /b}}]", `type: RegularExpression, value: "/b/[0-9]+"}}]`},
	} {
		if !strings.Contains(topo, r[0]) {
			t.Fatalf("delegationTopology changed: no %s", r[0])
		}
		topo = strings.Replace(topo, r[0], r[1], 1)
	}
	ix, pols := build(t, topo, true) // the engine reports the join it does not model
	for url, want := range map[string]string{
		"http://shop.example.com/a/orders/1": "orders",
		"http://shop.example.com/a":          "bare",
		"http://shop.example.com/a/zzz":      "home",
		"http://shop.example.com/a/b/1":      "home", // stray left out
		"http://shop.example.com/b/1":        "home", // not stray's own expression either
	} {
		if o := trace(t, ix, pols, url, nil).Outcomes[0]; o.Rule != want {
			t.Errorf("%s: rule %q, want %s", url, o.Rule, want)
		}
	}
}

// Below a RegularExpression parent match, an inheriting child's rule
// without matches takes that expression and answers the paths it matches;
// its other rules' joins (regular expressions kgateway builds) are left
// out.
func TestTraceDelegationInheritRegexParent(t *testing.T) {
	topo := inheritingA1("true")
	const parent = "type: PathPrefix, value: /a}}]"
	if !strings.Contains(topo, parent) {
		t.Fatal("delegationTopology changed")
	}
	topo = strings.Replace(topo, parent, `type: RegularExpression, value: "/a/[0-9]+"}}]`, 1)
	ix, pols := build(t, topo, true) // the engine reports the joins it does not model
	for url, want := range map[string]string{
		"http://shop.example.com/a/42":       "bare",
		"http://shop.example.com/a/x":        "home",
		"http://shop.example.com/a/a/orders": "home", // orders left out
	} {
		if o := trace(t, ix, pols, url, nil).Outcomes[0]; o.Rule != want {
			t.Errorf("%s: rule %q, want %s", url, o.Rule, want)
		}
	}
}

// Matches joined under inherit-parent-matcher multiply by 4 a level in
// gen.InheritChain(12, 4) (4^13 at the last route): the matches a rule
// delegates with are bounded as the entries are, so building the index
// stays quick, and the bound is reported on r0's rule.
func TestTraceDelegationInheritChainBounded(t *testing.T) {
	us := gen.InheritChain(12, 4)
	objs := make([]engine.Object, len(us))
	for i, u := range us {
		objs[i] = engine.Object{Object: u}
	}
	res := engine.Compute(objs, engine.Options{})
	ix, bp := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	if len(bp) != 1 || !strings.Contains(bp[0].Error(), "HTTPRoute.gateway.networking.k8s.io default/r0: spec.rules[0]: the routes this rule delegates to reach more than 4096 matches") {
		t.Fatalf("problems %v, want the bound reported on r0's rule", bp)
	}
	path := ""
	for l := range 13 {
		path += fmt.Sprintf("/l%dm0", l)
	}
	o := trace(t, ix, routing.NewPolicies(res), "http://any.example"+path, nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "r12" || len(o.DelegatedBy) != 12 {
		t.Errorf("%s: route %v delegated by %d rules, want r12 through 12", path, o.Route, len(o.DelegatedBy))
	}
}

// glooDelegation: a Gloo Gateway GatewayClass and Gateway; HTTPRoute
// infra/parent delegates /a to the routes labelled with Gloo's
// delegation label "a" (kids/a1, whose matches inherit the parent's by
// Gloo's annotation: its rule under /x takes /a/x), a regular expression
// to kids/re (inheriting too: Gloo joins the expression with the child's
// path as text), and /k by kgateway's label form, which Gloo does not
// follow.
const glooDelegation = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gloo}
spec: {controllerName: solo.io/gloo-gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: gloo
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: delegation.gateway.solo.io, kind: label, name: a, namespace: kids}]
  - name: re
    matches: [{path: {type: RegularExpression, value: "/v[0-9]+"}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: re, namespace: kids}]
  - name: k
    matches: [{path: {type: PathPrefix, value: /k}}]
    backendRefs: [{group: delegation.kgateway.dev, kind: label, name: a, namespace: kids}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: a1
  namespace: kids
  labels: {delegation.gateway.solo.io/label: a, delegation.kgateway.dev/label: a}
  annotations: {delegation.gateway.solo.io/inherit-parent-matcher: "true"}
spec:
  rules: [{name: x, matches: [{path: {type: PathPrefix, value: /x}}], backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: re
  namespace: kids
  annotations: {delegation.gateway.solo.io/inherit-parent-matcher: "yes"}
spec:
  rules: [{name: items, matches: [{path: {type: PathPrefix, value: /items}}], backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: kids}
spec: {ports: [{name: http, port: 80}]}
`

// Gloo Gateway's delegation forms: its label backendRef and its
// inherit-parent-matcher annotation are followed, a regular expression
// joined as text (so the engine reports nothing unmodelled); kgateway's
// label form is not followed under a Gloo Gateway: the engine links no
// child there and reports why, and the trace finds no child either.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/wellknown/delegation.go
// (RouteDelegationLabelSelector, InheritMatcherAnnotation),
// translator/backendref/types.go (RefIsHTTPRouteDelegationLabelSelector),
// translator/httproute/delegation_helpers.go (mergeParentChildRouteMatch:
// path.Join of the values, the child's type kept).
func TestTraceGlooDelegation(t *testing.T) {
	objs, probs, err := manifest.Read([]string{"-"}, strings.NewReader(glooDelegation))
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	res := engine.Compute(objs, engine.Options{})
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Error(), "infra/parent: spec.rules[2].backendRefs[0]: the implementations of the Gateways this route is reached through (GatewayClass controllers solo.io/gloo-gateway) do not delegate") {
		t.Fatalf("engine problems: %v", res.Problems)
	}
	ix, pols := build(t, glooDelegation, true)
	o := trace(t, ix, pols, "http://shop.example.com/a/x/1", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "a1" || o.Rule != "x" || len(o.DelegatedBy) != 1 || o.DelegatedBy[0].SectionName != "a" {
		t.Errorf("/a/x/1: %+v, want a1 rule x delegated by parent rule a", o)
	}
	o = trace(t, ix, pols, "http://shop.example.com/v[0-9]+/items", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "re" || o.Rule != "items" {
		t.Errorf("the textual join: %+v, want re rule items", o)
	}
	o = trace(t, ix, pols, "http://shop.example.com/k/x", nil).Outcomes[0]
	if o.Route != nil && o.Route.Name == "a1" || len(o.DelegatedBy) != 0 {
		t.Errorf("/k/x: %+v, want no delegation by kgateway's label", o)
	}
}

// Without profiles (--profiles=false) no implementation's reading of route
// delegation applies: kgateway's label form is followed under Gloo's
// Gateway too, by the engine's topology (no problem reported) and by the
// trace, as before delegation was read per implementation; with
// profiles, neither follows it (TestTraceGlooDelegation).
func TestTraceDelegationWithoutProfiles(t *testing.T) {
	objs, probs, err := manifest.Read([]string{"-"}, strings.NewReader(glooDelegation))
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	res := engine.Compute(objs, engine.Options{DisableProfiles: true})
	for _, p := range res.Problems {
		if strings.Contains(p.Error(), "do not delegate") {
			t.Errorf("engine without profiles: %v", p)
		}
	}
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = o.Object
	}
	ix, bp := routing.BuildWith(us, res.Graph, res.Grants, engine.DefaultNamespace, routing.Options{DisableProfiles: true})
	if len(bp) > 0 {
		t.Fatalf("build: %v", bp)
	}
	o := trace(t, ix, routing.NewPolicies(res), "http://shop.example.com/k/x", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "a1" || len(o.DelegatedBy) != 1 || o.DelegatedBy[0].SectionName != "k" {
		t.Errorf("/k/x without profiles: %+v, want a1 delegated by parent rule k", o)
	}
	// The option is what makes the trace follow it: the same graph traced
	// with the profiles' reading does not.
	ix, _ = routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	if o := trace(t, ix, routing.NewPolicies(res), "http://shop.example.com/k/x", nil).Outcomes[0]; len(o.DelegatedBy) != 0 {
		t.Errorf("/k/x, trace with profiles: %+v, want no delegation by kgateway's label", o)
	}
}
