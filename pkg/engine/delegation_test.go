package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
)

// delegTopo: Gateway gw; HTTPRoute top on it delegates (rule down) to the
// routes mid-a and mid-b, each delegating (rule down) to a1 and b1; a1 and
// b1 have rule x. annotations holds each route's
// kgateway.dev/inherited-policy-priority ("" for none).
func delegTopo(annotations map[string]string) string {
	route := func(name, spec string) string {
		meta := "{name: " + name + ", namespace: default"
		if v := annotations[name]; v != "" {
			meta += ", annotations: {kgateway.dev/inherited-policy-priority: " + v + "}"
		}
		return "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: " + meta + "}\nspec: " + spec + "\n"
	}
	down := func(children ...string) string {
		var refs []string
		for _, c := range children {
			refs = append(refs, "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "+c+"}")
		}
		return "[{name: down, backendRefs: [" + strings.Join(refs, ", ") + "]}]"
	}
	return strings.Join([]string{`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 80}]
`,
		route("top", "{parentRefs: [{name: gw}], rules: "+down("mid-a", "mid-b")+"}"),
		route("mid-a", "{rules: "+down("a1")+"}"),
		route("mid-b", "{rules: "+down("b1")+"}"),
		route("a1", "{rules: [{name: x}]}"),
		route("b1", "{rules: [{name: x}]}"),
	}, "\n---\n")
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
	const b1 = "metadata: {name: b1, namespace: default}\nspec: {rules: [{name: x}]}"
	if !strings.Contains(topo, b1) {
		t.Fatal("delegTopo changed: no b1 to give a parentRef and a backend")
	}
	topo = strings.Replace(topo, b1,
		"metadata: {name: b1, namespace: default}\nspec: {parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: mid-b}], rules: [{name: x, backendRefs: [{name: svc, port: 443}]}]}", 1)
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
