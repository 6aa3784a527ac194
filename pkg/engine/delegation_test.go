package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// delegTopo: Gateway gw; HTTPRoute top on it delegates (rule down, no
// matches: every path) to the routes mid-a and mid-b, each delegating
// (rule down, under /a and /b) to a1 and b1; a1 and b1 have rule x (under
// /a/x and /b/x: kgateway keeps them). annotations holds each route's
// kgateway.dev/inherited-policy-priority ("" for none).
func delegTopo(annotations map[string]string) string {
	route := func(name, spec string) string {
		meta := "{name: " + name + ", namespace: default"
		if v := annotations[name]; v != "" {
			meta += ", annotations: {kgateway.dev/inherited-policy-priority: " + v + "}"
		}
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: " + meta + "}\nspec: " + spec + "\n"
	}
	down := func(prefix string, children ...string) string {
		var refs []string
		for _, c := range children {
			refs = append(refs, "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "+c+"}")
		}
		m := ""
		if prefix != "" {
			m = matches(prefix) + ", "
		}
		return "[{name: down, " + m + "backendRefs: [" + strings.Join(refs, ", ") + "]}]"
	}
	return strings.Join([]string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 80}]
`,
		route("top", "{parentRefs: [{name: gw}], rules: "+down("", "mid-a", "mid-b")+"}"),
		route("mid-a", "{rules: "+down("/a", "a1")+"}"),
		route("mid-b", "{rules: "+down("/b", "b1")+"}"),
		route("a1", "{rules: [{name: x, "+matches("/a/x")+"}]}"),
		route("b1", "{rules: [{name: x, "+matches("/b/x")+"}]}"),
	}, "\n---\n")
}

// matches is the matches field of a rule under a path prefix.
func matches(prefix string) string {
	return "matches: [{path: {type: PathPrefix, value: " + prefix + "}}]"
}

// trafficPolicy is a TrafficPolicy targeting the HTTPRoutes named.
func trafficPolicy(name string, min int, spec string, routes ...string) string {
	var refs []string
	for _, r := range routes {
		refs = append(refs, "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "+r+"}")
	}
	return pol(kgwV, "TrafficPolicy", name, min, "targetRefs: ["+strings.Join(refs, ", ")+"]\n"+spec)
}

// Across route delegation the child's policies win field by field, unless
// the delegating route says ShallowMergePreferParent: then its (and its
// rules') policies win over everything below it. kgateway folds per
// route, then across routes from the child up, each route's annotation
// deciding how its fold meets the result below; its Gateway-level
// policies never override a route's.
// Source: kgateway-dev/kgateway pkg/pluginsdk/policy/merge.go
// (MergePolicies, GetMergeStrategy), the route-level merge in
// pkg/kgateway/translator/irtranslator/route.go (the parent's policies one
// hierarchy below the child's); translator fixture
// traffic_policy_multi_level_inheritance_override_enabled (a route under a
// ShallowMergePreferParent route takes rateLimit and transformation from
// that route's policy and extProc from its own; a route under a
// PreferChild route takes all from its own).
func TestDelegationPriorityKgateway(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	gwPol := pol(kgwV, "TrafficPolicy", "gw-pol", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
timeouts: {request: 60s}
cors: {allowOrigins: [gw.example]}`)
	topPol := trafficPolicy("top-pol", 1, `retry: {attempts: 1}`, "top")
	midPol := trafficPolicy("mid-pol", 2, `rateLimit: {local: {tokenBucket: {maxTokens: 1}}}
transformation: {request: {set: [{name: x-mid, value: "1"}]}}`, "mid-a", "mid-b")
	childSpec := `rateLimit: {local: {tokenBucket: {maxTokens: 99}}}
transformation: {request: {set: [{name: x-child, value: "1"}]}}
extProc: {backendRef: {name: proc}}
retry: {attempts: 9}
timeouts: {request: 1s}`
	a1Pol := trafficPolicy("a1-pol", 3, childSpec, "a1")
	b1Pol := trafficPolicy("b1-pol", 4, childSpec, "b1")

	// mid-b prefers the parent: its policy's fields win at b1; the
	// Gateway's timeouts and top's retry (top prefers the child) do not.
	res := compute(t, engine.Options{}, c, delegTopo(map[string]string{"mid-b": "ShallowMergePreferParent"}), gwPol, topPol, midPol, a1Pol, b1Pol)
	want(t, "a1", effective(t, res, "TrafficPolicy", rule("a1", "x")), []string{
		`{"cors":{"allowOrigins":["gw.example"]},"extProc":{"backendRef":{"name":"proc"}},"rateLimit":{"local":{"tokenBucket":{"maxTokens":99}}},"retry":{"attempts":9},"timeouts":{"request":"1s"},"transformation":{"request":{"set":[{"name":"x-child","value":"1"}]}}}`})
	want(t, "b1", effective(t, res, "TrafficPolicy", rule("b1", "x")), []string{
		`{"cors":{"allowOrigins":["gw.example"]},"extProc":{"backendRef":{"name":"proc"}},"rateLimit":{"local":{"tokenBucket":{"maxTokens":1}}},"retry":{"attempts":9},"timeouts":{"request":"1s"},"transformation":{"request":{"set":[{"name":"x-mid","value":"1"}]}}}`})
	want(t, "a1-pol", status(t, res, "a1-pol", "Programmed"), "True/Programmed")
	want(t, "b1-pol", status(t, res, "b1-pol", "Programmed"), "True/PartiallyProgrammed")
	if msg := condition(t, res, "b1-pol", "Programmed").Message; !strings.Contains(msg, "rateLimit.local.tokenBucket.maxTokens, transformation.request.set beaten by TrafficPolicy default/mid-pol") {
		t.Errorf("b1-pol message %q does not name mid-pol", msg)
	}
	if len(res.Problems) > 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	// A delegating rule answers no request: no effective target; the
	// Gateway's policy affects the children's rules only.
	want(t, "top#down", effective(t, res, "TrafficPolicy", rule("top", "down")), []string(nil))
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == "gw-pol" {
			var got []string
			for _, a := range ps.Affects {
				got = append(got, a.String())
			}
			want(t, "gw-pol affects", got, []string{"HTTPRoute.gateway.networking.k8s.io default/a1#x", "HTTPRoute.gateway.networking.k8s.io default/b1#x"})
		}
	}

	// top prefers the parent too: its retry wins at both children, over
	// the child's and through mid-a, which prefers the child.
	res = compute(t, engine.Options{}, c, delegTopo(map[string]string{"top": "ShallowMergePreferParent", "mid-b": "ShallowMergePreferParent"}), gwPol, topPol, midPol, a1Pol, b1Pol)
	for _, r := range []string{"a1", "b1"} {
		got := effective(t, res, "TrafficPolicy", rule(r, "x"))
		if len(got) != 1 || !strings.Contains(got[0], `"retry":{"attempts":1}`) {
			t.Errorf("%s: %v, want top-pol's retry", r, got)
		}
	}

	// Without annotations (or with a Deep value, which prefers the child
	// for these fields) the child's policy wins every field it sets.
	for _, v := range []string{"", "DeepMergePreferParent"} {
		res = compute(t, engine.Options{}, c, delegTopo(map[string]string{"top": v, "mid-b": v}), gwPol, topPol, midPol, a1Pol, b1Pol)
		want(t, fmt.Sprintf("b1 with %q", v), effective(t, res, "TrafficPolicy", rule("b1", "x")), effective(t, res, "TrafficPolicy", rule("a1", "x")))
		want(t, "b1-pol with "+v, status(t, res, "b1-pol", "Programmed"), "True/Programmed")
	}
}

// The boundaries are taken from the child up, each by the annotation of
// the route above it: under top (prefers the child) > mid-b (prefers the
// parent) > b1, mid-b's fields win, then b1's, then top's, so a field set
// by top and b1 only is b1's (folding top and mid-b first, then letting
// them override b1, would give top's).
func TestDelegationPriorityFromTheChildUp(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, delegTopo(map[string]string{"mid-b": "ShallowMergePreferParent"}),
		trafficPolicy("top-pol", 0, `retry: {attempts: 1}
cors: {allowOrigins: [top.example]}`, "top"),
		trafficPolicy("mid-pol", 1, `timeouts: {request: 5s}`, "mid-b"),
		trafficPolicy("b1-pol", 2, `retry: {attempts: 9}
timeouts: {request: 1s}`, "b1"))
	want(t, "b1", effective(t, res, "TrafficPolicy", rule("b1", "x")), []string{
		`{"cors":{"allowOrigins":["top.example"]},"retry":{"attempts":9},"timeouts":{"request":"5s"}}`})
}

// An annotation value the kind does not know is reported on the route and
// read as the default (the child wins), as kgateway logs it and does.
func TestDelegationPriorityUnknownValue(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, delegTopo(map[string]string{"mid-b": "PreferParent"}),
		trafficPolicy("mid-pol", 1, `timeouts: {request: 5s}`, "mid-b"),
		trafficPolicy("b1-pol", 2, `timeouts: {request: 1s}`, "b1"))
	want(t, "b1", effective(t, res, "TrafficPolicy", rule("b1", "x")), []string{`{"timeouts":{"request":"1s"}}`})
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Error(), `metadata.annotations[kgateway.dev/inherited-policy-priority]: "PreferParent" is not a known value`) {
		t.Errorf("problems: %v", res.Problems)
	}
}

// Changing the annotation on a delegating route recomputes: the route's
// annotations otherwise cost no recomputation.
func TestDelegationPriorityIncremental(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	pols := []string{c, trafficPolicy("mid-pol", 1, `timeouts: {request: 5s}`, "mid-b"), trafficPolicy("b1-pol", 2, `timeouts: {request: 1s}`, "b1")}
	in := engine.NewIncremental(engine.Options{})
	for _, v := range []string{"", "ShallowMergePreferParent", "ShallowMergePreferChild"} {
		objs := decodeDocs(t, append(pols, delegTopo(map[string]string{"mid-b": v}))...)
		got := dump(t, in.Compute(objs))
		if want := dump(t, engine.Compute(objs, engine.Options{})); got != want {
			t.Fatalf("mid-b annotated %q: %s", v, firstDiff(got, want))
		}
	}
}

// A delegated child route's Gateways are its parents': a TrafficPolicy on
// the child (kgateway names the Gateway, never a route) and a
// BackendTLSPolicy on the Service the child sends to (GEP-1897: the
// Gateway) name Gateway gw, which the child's own parentRefs do not.
// Source: kgateway-dev/kgateway pkg/kgateway/query/route.go
// (getDelegatedChildren: children take the parent's ListenerParentRef),
// translator golden acl-route-delegation.yaml (child and parent policies
// report Gateway test).
func TestDelegatedRouteAncestors(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	topo := delegTopo(nil)
	const b1 = "metadata: {name: b1, namespace: default}\nspec: {rules: [{name: x, matches: [{path: {type: PathPrefix, value: /b/x}}]}]}"
	if !strings.Contains(topo, b1) {
		t.Fatal("delegTopo changed: no b1 to give a parentRef and a backend")
	}
	topo = strings.Replace(topo, b1,
		"metadata: {name: b1, namespace: default}\nspec: {parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: mid-b}], rules: [{name: x, matches: [{path: {type: PathPrefix, value: /b/x}}], backendRefs: [{name: svc, port: 443}]}]}", 1)
	svc := "apiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: default}\nspec: {ports: [{name: https, port: 443}]}\n"
	res := compute(t, engine.Options{}, c, btls, topo, svc,
		trafficPolicy("b1-pol", 0, `timeouts: {request: 1s}`, "b1"),
		pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "tls", 1, `targetRefs: [{group: "", kind: Service, name: svc}]
validation: {hostname: svc.example, wellKnownCACertificates: System}`))
	gw := "Gateway.gateway.networking.k8s.io default/gw"
	want(t, "b1-pol", ancestorsOf(t, res, "b1-pol"), []string{gw + "=Accepted"})
	want(t, "tls", ancestorsOf(t, res, "tls"), []string{gw + "=Accepted"})
}

// chainObjects is gen.DelegationChain(depth) with kgateway's TrafficPolicy
// CRD and a policy on one of the last routes, as engine objects.
func chainObjects(t testing.TB, depth int) []engine.Object {
	t.Helper()
	docs, probs := manifest.Decode(strings.NewReader(labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")+"\n---\n"+
		trafficPolicy("leaf-pol", 0, "timeouts: {request: 1s}", fmt.Sprintf("r%da", depth+1))), "chain")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for _, u := range gen.DelegationChain(depth) {
		docs = append(docs, engine.Object{Object: u})
	}
	return docs
}

// The Gateways of a route at the end of many delegation paths are found
// once per route, not once per path: the policy on it names Gateway gw.
func TestDelegationChainAncestors(t *testing.T) {
	res := engine.Compute(chainObjects(t, 18), engine.Options{})
	want(t, "leaf-pol", ancestorsOf(t, res, "leaf-pol"), []string{"Gateway.gateway.networking.k8s.io default/gw=Accepted"})
}

// BenchmarkDelegationChain measures Compute over gen.DelegationChain(18)
// (524,288 delegation paths to the last routes) with a TrafficPolicy on
// one of them, whose Gateway ancestors take every path up.
func BenchmarkDelegationChain(b *testing.B) {
	objs := chainObjects(b, 18)
	for b.Loop() {
		engine.Compute(objs, engine.Options{})
	}
}

// inheritChainObjects is gen.InheritChain(depth, 4) with kgateway's
// TrafficPolicy CRD and a policy on the Gateway, as engine objects.
func inheritChainObjects(t testing.TB, depth int) []engine.Object {
	t.Helper()
	docs, probs := manifest.Decode(strings.NewReader(labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")+"\n---\n"+
		pol(kgwV, "TrafficPolicy", "gw-pol", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeouts: {request: 60s}")), "chain")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	for _, u := range gen.InheritChain(depth, 4) {
		docs = append(docs, engine.Object{Object: u})
	}
	return docs
}

// BenchmarkDelegationInheritChain measures Compute over
// gen.InheritChain(depth, 4): each route of the chain inherits its
// parent's matcher, so its rule's matches joined to those above it number
// 4^(level+1), bounded to maxKeptMatches per rule.
func BenchmarkDelegationInheritChain(b *testing.B) {
	for _, depth := range []int{8, 16} {
		objs := inheritChainObjects(b, depth)
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				engine.Compute(objs, engine.Options{})
			}
		})
	}
}

// affects lists the effective targets a policy contributes to (nameOf).
func affects(t *testing.T, res *engine.Result, name string) []string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == name {
			var out []string
			for _, a := range ps.Affects {
				out = append(out, nameOf(a))
			}
			return out
		}
	}
	t.Fatalf("no policy %s", name)
	return nil
}

// nameOf is a ref's name, and section name after "#".
func nameOf(r topology.Ref) string {
	if r.SectionName != "" {
		return r.Name + "#" + r.SectionName
	}
	return r.Name
}

// problemsOf renders the problems about route name as "field: message".
func problemsOf(res *engine.Result, name string) []string {
	var out []string
	for _, p := range res.Problems {
		if p.Object.Name == name {
			out = append(out, p.Field+": "+p.Message)
		}
	}
	return out
}

// contextPaths renders the paths of each context of kind at target, one
// string per context, its paths joined by " | ", each path's objects by
// ">" (names and section names only).
func contextPaths(res *engine.Result, kind string, target topology.Ref) []string {
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			var paths []string
			c.Paths(func(p []topology.Ref) bool {
				var names []string
				for _, r := range p {
					names = append(names, nameOf(r))
				}
				paths = append(paths, strings.Join(names, ">"))
				return true
			})
			slices.Sort(paths)
			out = append(out, strings.Join(paths, " | "))
		}
	}
	return out
}

// A child rule that the delegating rule's matches do not admit is no
// effective target: kgateway drops it. Policies above it (the Gateway's)
// or on its route do not affect it, and a problem on the child says why.
// Source: kgateway-dev/kgateway pkg/kgateway/translator/httproute/
// delegation_helpers.go (filterDelegatedChildren: a child rule keeps the
// matches IsDelegatedRouteMatch admits and is discarded with none; a
// rule without matches has none), pkg/kgateway/utils/delegation/
// delegation.go (IsDelegatedRouteMatch).
func TestDelegationDropsChildRules(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := strings.Replace(delegTopo(nil), "value: /b/x}}]}]}",
		"value: /b/x}}]}, {name: stray, matches: [{path: {type: PathPrefix, value: /c}}]}, {name: bare}]}", 1)
	res := compute(t, engine.Options{}, c, topo,
		pol(kgwV, "TrafficPolicy", "gw-pol", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeouts: {request: 60s}"),
		trafficPolicy("b1-pol", 1, "retry: {attempts: 9}", "b1"))
	want(t, "b1#x", effective(t, res, "TrafficPolicy", rule("b1", "x")), []string{`{"retry":{"attempts":9},"timeouts":{"request":"60s"}}`})
	for _, r := range []string{"stray", "bare"} {
		want(t, "b1#"+r, effective(t, res, "TrafficPolicy", rule("b1", r)), []string(nil))
	}
	want(t, "gw-pol affects", affects(t, res, "gw-pol"), []string{"a1#x", "b1#x"})
	want(t, "b1-pol affects", affects(t, res, "b1-pol"), []string{"b1#x"})
	for _, a := range res.Affected {
		if a.Target.Name == "b1" && a.Target.SectionName != "x" {
			t.Errorf("affected entry for dropped rule %s", a.Target)
		}
	}
	want(t, "problems", problemsOf(res, "b1"), []string{
		"spec.rules[1]: rule stray is not delegated to by HTTPRoute default/mid-b rule down: its matches do not extend the parent rule's path prefix /b; it is no effective target through that rule",
		"spec.rules[2]: rule bare is not delegated to by HTTPRoute default/mid-b rule down: it has no matches (the API's default: every request, path prefix /), which do not extend the parent rule's path prefix /b; it is no effective target through that rule",
	})
}

// A child delegated to by two rules is an effective target only on the
// paths through the rule that keeps it: a1 (under /a/x) below mid-b
// (/b) too gets mid-a's policy only, on mid-a's paths.
func TestDelegationDropsChildRulesPerPath(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := strings.Replace(delegTopo(nil), "backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: b1}]",
		"backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: b1}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: a1}]", 1)
	res := compute(t, engine.Options{}, c, topo,
		trafficPolicy("mid-a-pol", 0, "timeouts: {request: 1s}", "mid-a"),
		trafficPolicy("mid-b-pol", 1, "retry: {attempts: 2}", "mid-b"))
	want(t, "a1#x", effective(t, res, "TrafficPolicy", rule("a1", "x")), []string{`{"timeouts":{"request":"1s"}}`})
	want(t, "a1#x paths", contextPaths(res, "TrafficPolicy", rule("a1", "x")), []string{"gw>gw#http>top>top#down>mid-a>mid-a#down>a1>a1#x"})
	want(t, "mid-b-pol affects", affects(t, res, "mid-b-pol"), []string{"b1#x"})
	want(t, "problems", problemsOf(res, "a1"), []string{
		"spec.rules[0]: rule x is not delegated to by HTTPRoute default/mid-b rule down: its matches do not extend the parent rule's path prefix /b; it is no effective target through that rule",
	})
}

// kgwTop is Gateway gw of class kgateway and the head of HTTPRoute top on
// it, up to its rules.
const kgwTop = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: top, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
`

// inheritChain: Gateway gw; HTTPRoute top delegates /a (rule a) and /b
// (rule b) to mid, which inherits the parent's matcher and delegates its
// rule down (/m: /a/m or /b/m, by the path) to leaf, whose rule x is
// under /a/m/x and rule other under /z.
const inheritChain = kgwTop + `  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: mid}]
  - name: b
    matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: mid}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mid, namespace: default, annotations: {delegation.kgateway.dev/inherit-parent-matcher: "true"}}
spec:
  rules:
  - name: down
    matches: [{path: {type: PathPrefix, value: /m}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: leaf}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: leaf, namespace: default}
spec:
  rules:
  - name: x
    matches: [{path: {type: PathPrefix, value: /a/m/x}}]
  - name: other
    matches: [{path: {type: PathPrefix, value: /z}}]
`

// A grandchild is judged against what its parent rule keeps on each path
// (here the matches it inherits): leaf's rule under /a/m/x is kept below
// mid's rule as reached through top's rule a (/a/m), dropped through b
// (/b/m), as kgateway recurses with the merged match; its rule other, under
// neither, is reported once. The problem on x names the matches it was
// dropped below, since mid's rule keeps it on other paths.
// Source: kgateway-dev/kgateway gateway_http_route_translator.go (each
// match of a delegating rule flattens its children with that match),
// delegation_helpers.go (mergeParentChildRouteMatch).
func TestDelegationJudgesGrandchildrenPerPath(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, inheritChain,
		pol(kgwV, "TrafficPolicy", "gw-pol", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeouts: {request: 60s}"))
	want(t, "leaf#x paths", contextPaths(res, "TrafficPolicy", rule("leaf", "x")), []string{"gw>gw#http>top>top#a>mid>mid#down>leaf>leaf#x"})
	want(t, "problems", problemsOf(res, "leaf"), []string{
		"spec.rules[0]: rule x is not delegated to by HTTPRoute default/mid rule down where that rule delegates with path prefix /b/m: its matches do not extend the parent rule's path prefix /b/m; it is no effective target on those paths",
		"spec.rules[1]: rule other is not delegated to by HTTPRoute default/mid rule down: its matches do not extend the parent rule's path prefix /a/m; it is no effective target through that rule",
	})
	want(t, "leaf#other", effective(t, res, "TrafficPolicy", rule("leaf", "other")), []string(nil))
	want(t, "other problems", len(res.Problems), 2)
}

// A Direct kind whose policies on a route cover its rules covers no rule
// kgateway drops below every delegating rule above it.
func TestDelegationDroppedRuleIsNoDirectTarget(t *testing.T) {
	c := declaredCRD("direct.example.com", "RulePolicy", "rulepolicies", "Direct",
		"attache.dev/target-kinds: HTTPRoute.gateway.networking.k8s.io",
		"attache.dev/effective-section-kinds: HTTPRoute.gateway.networking.k8s.io",
		`attache.dev/direct-sections: "true"`)
	topo := strings.Replace(delegTopo(nil), "value: /b/x}}]}]}", "value: /b/x}}]}, {name: stray, matches: [{path: {type: PathPrefix, value: /c}}]}]}", 1)
	res := compute(t, engine.Options{}, c, topo,
		pol("direct.example.com/v1", "RulePolicy", "on-b1", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: b1}]\nmode: strict"),
		pol("direct.example.com/v1", "RulePolicy", "on-stray", 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: b1, sectionName: stray}]\nmode: strict"))
	want(t, "b1#x", effective(t, res, "RulePolicy", rule("b1", "x")), []string{`{"mode":"strict"}`})
	want(t, "b1#stray", effective(t, res, "RulePolicy", rule("b1", "stray")), []string(nil))
	want(t, "on-b1 affects", affects(t, res, "on-b1"), []string{"b1#x"})
	want(t, "on-stray affects", affects(t, res, "on-stray"), []string(nil))
}

// A child also attached to a Gateway keeps every rule there: only the
// paths through the delegating rule that drops one lose it.
func TestDelegationChildOnAGatewayToo(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := strings.Replace(delegTopo(nil), "metadata: {name: b1, namespace: default}\nspec: {rules: [{name: x, matches: [{path: {type: PathPrefix, value: /b/x}}]}]}",
		"metadata: {name: b1, namespace: default}\nspec: {parentRefs: [{name: gw}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: mid-b}], rules: [{name: x, matches: [{path: {type: PathPrefix, value: /b/x}}]}, {name: stray, matches: [{path: {type: PathPrefix, value: /c}}]}]}", 1)
	res := compute(t, engine.Options{}, c, topo, trafficPolicy("mid-b-pol", 0, "retry: {attempts: 2}", "mid-b"),
		trafficPolicy("b1-pol", 1, "timeouts: {request: 1s}", "b1"))
	want(t, "b1#stray paths", contextPaths(res, "TrafficPolicy", rule("b1", "stray")), []string{"gw>gw#http>b1>b1#stray"})
	want(t, "b1#x paths", contextPaths(res, "TrafficPolicy", rule("b1", "x")), []string{"gw>gw#http>b1>b1#x", "gw>gw#http>top>top#down>mid-b>mid-b#down>b1>b1#x"})
	want(t, "problems", len(problemsOf(res, "b1")), 1)
}

// Matches that do not decode are reported on their route, whose rules
// are then not judged (kept), nor, for a delegating rule, its children.
func TestDelegationUnreadableMatches(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	for _, route := range []string{"b1", "mid-b"} {
		topo := delegTopo(nil)
		// b1 gets a stray rule (dropped, were it read); the route named
		// gets matches that do not decode.
		topo = strings.Replace(topo, "value: /b/x}}]}]}", "value: /b/x}}]}, {name: stray, matches: [{path: {type: PathPrefix, value: /c}}]}]}", 1)
		topo = strings.Replace(topo, "metadata: {name: "+route+", namespace: default}\nspec: {rules: [{name: ", "metadata: {name: "+route+", namespace: default}\nspec: {rules: [{matches: [{path: {value: 7}}]}, {name: ", 1)
		res := compute(t, engine.Options{}, c, topo, trafficPolicy("b1-pol", 0, "timeouts: {request: 1s}", "b1"))
		want(t, route+": b1#stray", effective(t, res, "TrafficPolicy", rule("b1", "stray")), []string{`{"timeouts":{"request":"1s"}}`})
		if p := problemsOf(res, route); len(p) != 1 || len(res.Problems) != 1 || !strings.HasPrefix(p[0], "spec.rules[0].matches[0].path.value: cannot decode its rules' matches (") {
			t.Errorf("%s: problems %v", route, res.Problems)
		}
	}
}

// Incremental agrees with Compute when a child's matches change, when the
// delegating rule's do (both recompute everything), and when a policy
// changes below a delegation that drops rules (recomputed in part).
func TestDelegationDroppedRulesIncremental(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	base := strings.Replace(delegTopo(nil), "value: /b/x}}]}]}", "value: /b/x}}]}, {name: stray, matches: [{path: {type: PathPrefix, value: /c}}]}]}", 1)
	childMoved := strings.Replace(base, "value: /c}", "value: /b/s}", 1) // stray now kept
	parentMoved := strings.Replace(base, "value: /b}", "value: /c}", 1)  // x dropped, stray kept
	b1Pol := trafficPolicy("b1-pol", 1, "timeouts: {request: 1s}", "b1")
	b1PolEdited := trafficPolicy("b1-pol", 1, "timeouts: {request: 2s}", "b1")
	midPol := trafficPolicy("mid-pol", 2, "retry: {attempts: 2}", "mid-b")
	in := engine.NewIncremental(engine.Options{})
	for _, step := range []struct {
		name    string
		docs    []string
		partial bool
	}{
		{"base", []string{c, base, b1Pol}, false},
		{"child's matches moved", []string{c, childMoved, b1Pol}, false},
		{"parent's matches moved", []string{c, parentMoved, b1Pol}, false},
		{"policy edited", []string{c, parentMoved, b1PolEdited}, true},
		{"policy added above", []string{c, parentMoved, b1PolEdited, midPol}, true},
		{"back", []string{c, base, b1Pol, midPol}, false},
	} {
		objs := decodeDocs(t, step.docs...)
		got := dump(t, in.Compute(objs))
		if w := dump(t, engine.Compute(objs, engine.Options{})); got != w {
			t.Fatalf("%s: %s", step.name, firstDiff(got, w))
		}
		if full := in.LastChange().Full; full == step.partial {
			t.Errorf("%s: recomputed everything: %v (%s)", step.name, full, in.LastChange().Reason)
		}
	}
}

// Turning inherit-parent-matcher on or off on a child route recomputes
// (it decides which of the child's rules kgateway keeps): the route's
// annotations otherwise cost no recomputation.
func TestDelegationInheritIncremental(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	gwPol := pol(kgwV, "TrafficPolicy", "gw-pol", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeouts: {request: 60s}")
	const on = `annotations: {delegation.kgateway.dev/inherit-parent-matcher: "true"}`
	off := strings.Replace(inheritChain, on, `annotations: {delegation.kgateway.dev/inherit-parent-matcher: "false"}`, 1)
	same := strings.Replace(inheritChain, on, `annotations: {delegation.kgateway.dev/inherit-parent-matcher: "Yes"}`, 1)
	if off == inheritChain || same == inheritChain {
		t.Fatal("inheritChain changed: no annotation to flip")
	}
	in := engine.NewIncremental(engine.Options{})
	for _, step := range []struct {
		name, topo string
		full       bool
	}{
		{"on", inheritChain, true},
		{"off", off, true},
		{"on again", inheritChain, true},
		{"another value turning it on", same, false},
	} {
		objs := decodeDocs(t, c, step.topo, gwPol)
		got := dump(t, in.Compute(objs))
		if w := dump(t, engine.Compute(objs, engine.Options{})); got != w {
			t.Fatalf("%s: %s", step.name, firstDiff(got, w))
		}
		if in.LastChange().Full != step.full {
			t.Errorf("%s: recomputed everything: %v (%s)", step.name, in.LastChange().Full, in.LastChange().Reason)
		}
	}
}

// A child match repeats the parent's header matches only when written the
// same, names included: kgateway compares them with reflect.DeepEqual
// (IsDelegatedRouteMatch), though requests match header names in any
// case. Below mid-b's X-Team, b1's rule naming x-team is dropped, and its
// rule naming X-Team (after another value of that name) kept.
// Source: kgateway-dev/kgateway pkg/kgateway/utils/delegation/delegation.go
// @08be94b3c6d2 (IsDelegatedRouteMatch).
func TestDelegationHeaderNamesAsWritten(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := delegTopo(nil)
	const b1 = "metadata: {name: b1, namespace: default}\nspec: {rules: [{name: x, matches: [{path: {type: PathPrefix, value: /b/x}}]}]}"
	if !strings.Contains(topo, b1) || !strings.Contains(topo, "value: /b}}]") {
		t.Fatal("delegTopo changed")
	}
	topo = strings.Replace(topo, "value: /b}}]", "value: /b}, headers: [{name: X-Team, value: a}]}]", 1)
	topo = strings.Replace(topo, b1, `metadata: {name: b1, namespace: default}
spec:
  rules:
  - name: x
    matches: [{path: {type: PathPrefix, value: /b/x}, headers: [{name: x-team, value: a}]}]
  - name: upper
    matches: [{path: {type: PathPrefix, value: /b/y}, headers: [{name: X-Team, value: b}, {name: X-Team, value: a}]}]`, 1)
	res := compute(t, engine.Options{}, c, topo, trafficPolicy("b1-pol", 0, "timeouts: {request: 1s}", "b1"))
	want(t, "b1-pol affects", affects(t, res, "b1-pol"), []string{"b1#upper"})
	want(t, "problems", problemsOf(res, "b1"), []string{
		"spec.rules[0]: rule x is not delegated to by HTTPRoute default/mid-b rule down: its matches under /b do not repeat the parent rule's header matches X-Team=a; it is no effective target through that rule",
	})
}

// inheritJoins: Gateway gw; HTTPRoute top delegates to kid with an Exact
// match (rule exact, /e), a RegularExpression one (rule regex) and a
// PathPrefix one (rule prefix); kid inherits the parent's matcher and has
// rules bare (no matches), sub (PathPrefix /s, delegating to gk, which
// does not inherit: its rule e under /e/s, p under /p/s/x; and to gi,
// which inherits: its rule any under /z) and re (RegularExpression /x/.*).
const inheritJoins = kgwTop + `  - name: exact
    matches: [{path: {type: Exact, value: /e}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: kid}]
  - name: regex
    matches: [{path: {type: RegularExpression, value: "/r/[0-9]+"}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: kid}]
  - name: prefix
    matches: [{path: {type: PathPrefix, value: /p}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: kid}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: kid, namespace: default, annotations: {delegation.kgateway.dev/inherit-parent-matcher: "true"}}
spec:
  rules:
  - name: bare
  - name: sub
    matches: [{path: {type: PathPrefix, value: /s}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: gk}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: gi}]
  - name: re
    matches: [{path: {type: RegularExpression, value: "/x/.*"}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gk, namespace: default}
spec:
  rules:
  - name: e
    matches: [{path: {type: PathPrefix, value: /e/s}}]
  - name: p
    matches: [{path: {type: PathPrefix, value: /p/s/x}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gi, namespace: default, annotations: {delegation.kgateway.dev/inherit-parent-matcher: "true"}}
spec:
  rules:
  - name: any
    matches: [{path: {type: PathPrefix, value: /z}}]
`

// Under inherit-parent-matcher kgateway keeps every rule of the child,
// joined to each parent match (mergeParentChildRouteMatch): paths joined
// below an Exact parent match too, a rule without matches taking the
// parent match whatever its type. It builds regular expressions of the
// joins with a RegularExpression path on either side, which attache does
// not model: the rule is kept, a problem says so. A grandchild that does
// not inherit is judged against what was modelled: below kid's rule sub
// it is kept under /e/s (joined below the Exact /e) and /p/s, and dropped
// where sub's matches are regular expressions (below top's rule regex),
// which admit no child match; gi, which inherits, is kept there too.
// Source: kgateway-dev/kgateway delegation_helpers.go @6cdfd6299a2a
// (filterDelegatedChildren: inheriting, every match is valid;
// mergeParentChildRouteMatch, mergeRegexParentPath).
func TestDelegationInheritKeepsEveryRule(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, inheritJoins,
		pol(kgwV, "TrafficPolicy", "gw-pol", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeouts: {request: 60s}"))
	for _, r := range []string{"bare", "re"} {
		want(t, "kid#"+r+" paths", contextPaths(res, "TrafficPolicy", rule("kid", r)), []string{
			"gw>gw#http>top>top#exact>kid>kid#" + r + " | gw>gw#http>top>top#prefix>kid>kid#" + r + " | gw>gw#http>top>top#regex>kid>kid#" + r})
	}
	want(t, "gk#e paths", contextPaths(res, "TrafficPolicy", rule("gk", "e")), []string{"gw>gw#http>top>top#exact>kid>kid#sub>gk>gk#e"})
	want(t, "gk#p paths", contextPaths(res, "TrafficPolicy", rule("gk", "p")), []string{"gw>gw#http>top>top#prefix>kid>kid#sub>gk>gk#p"})
	want(t, "gi#any paths", contextPaths(res, "TrafficPolicy", rule("gi", "any")), []string{
		"gw>gw#http>top>top#exact>kid>kid#sub>gi>gi#any | gw>gw#http>top>top#prefix>kid>kid#sub>gi>gi#any | gw>gw#http>top>top#regex>kid>kid#sub>gi>gi#any"})
	want(t, "gi problems", problemsOf(res, "gi"), []string(nil))
	const unmodelled = "but attache does not model some of its matches there: kgateway joins them to that rule's into regular expressions (delegation.kgateway.dev/inherit-parent-matcher); request tracing leaves them out"
	want(t, "kid problems", problemsOf(res, "kid"), []string{
		"spec.rules[1]: rule sub is kept below HTTPRoute default/top rule regex, " + unmodelled + ", and the routes it delegates to with them",
		"spec.rules[2]: rule re is kept below HTTPRoute default/top rule exact, " + unmodelled,
		"spec.rules[2]: rule re is kept below HTTPRoute default/top rule prefix, " + unmodelled,
		"spec.rules[2]: rule re is kept below HTTPRoute default/top rule regex, " + unmodelled,
	})
	want(t, "gk problems", problemsOf(res, "gk"), []string{
		"spec.rules[0]: rule e is not delegated to by HTTPRoute default/kid rule sub where that rule delegates with regular expressions attache does not model (and 1 more): the parent rule's matches there are regular expressions joined to its parent's, and only a PathPrefix admits child matches; it is no effective target on those paths",
		"spec.rules[1]: rule p is not delegated to by HTTPRoute default/kid rule sub where that rule delegates with path prefix /e/s (and 1 more): its matches do not extend the parent rule's path prefix /e/s; it is no effective target on those paths",
	})
}

// Matches joined under inherit-parent-matcher multiply level after level
// (gen.InheritChain(7, 4): r0's rule has 4 matches, r1's 16 joined, ...,
// r6's 16,384): a rule's lists are bounded (maxKeptMatches, 4,096, as
// attache trace bounds its expansion); past the bound the rules below are
// not judged (kept), and a problem on the rule says so. r7, which does not
// inherit and whose matches extend none of r6's own, is kept: not judged
// against r6's own matches either.
func TestDelegationInheritChainBounded(t *testing.T) {
	objs := inheritChainObjects(t, 7)
	for _, o := range objs {
		if o.Object.GetName() == "r7" {
			o.Object.SetAnnotations(nil)
		}
	}
	res := engine.Compute(objs, engine.Options{})
	var problems []string
	for _, p := range res.Problems {
		problems = append(problems, p.Error())
	}
	want(t, "problems", problems, []string{"HTTPRoute.gateway.networking.k8s.io default/r6: spec.rules[0]: rule down delegates with more than 4096 matches through all its delegation paths (joined to those of the rules above it); which rules of the routes it delegates to kgateway keeps is not judged past them: they are kept"})
	want(t, "r7#down", effective(t, res, "TrafficPolicy", rule("r7", "down")), []string{`{"timeouts":{"request":"60s"}}`})
	want(t, "r6#down", effective(t, res, "TrafficPolicy", rule("r6", "down")), []string(nil)) // delegating
}

// The bound holds for all the paths to a rule together: in
// gen.DelegationChain(14) with every route inheriting its parent's
// matcher and matching its own name, the 2^(l-1) paths to a rule of level
// l give it as many lists of one match; at level 14 (8,192) they pass
// 4,096, and the rules there say so.
func TestDelegationInheritPathsBounded(t *testing.T) {
	var objs []engine.Object
	for _, u := range gen.DelegationChain(14) {
		if u.GetKind() == "HTTPRoute" && u.GetName() != "top" {
			u.SetAnnotations(map[string]string{"delegation.kgateway.dev/inherit-parent-matcher": "true"})
			if rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules"); !strings.HasPrefix(u.GetName(), "r15") {
				rules[0].(map[string]any)["matches"] = []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/" + u.GetName()}}}
				if err := unstructured.SetNestedSlice(u.Object, rules, "spec", "rules"); err != nil {
					t.Fatal(err)
				}
			}
		}
		objs = append(objs, engine.Object{Object: u})
	}
	res := engine.Compute(objs, engine.Options{})
	var problems []string
	for _, p := range res.Problems {
		problems = append(problems, p.Error())
	}
	const capped = ": spec.rules[0]: rule rule-1 delegates with more than 4096 matches through all its delegation paths (joined to those of the rules above it); which rules of the routes it delegates to kgateway keeps is not judged past them: they are kept"
	slices.Sort(problems)
	want(t, "problems", problems, []string{"HTTPRoute.gateway.networking.k8s.io default/r14a" + capped, "HTTPRoute.gateway.networking.k8s.io default/r14b" + capped})
}
