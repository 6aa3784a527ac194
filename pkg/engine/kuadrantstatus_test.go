package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// kuadrantStatusTopo: GatewayClasses istio (Istio's controller, which
// Kuadrant serves) and nginx (another's); Gateways gi, solo and idle
// (istio; no route on idle) and gn (nginx); HTTPRoutes istio-only (on gi),
// both (gi and gn), ngf-only (gn) and solo-r (solo, its only route), each
// with one rule; no status (manifests: everything ready).
const kuadrantStatusTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gi, namespace: default}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: idle, namespace: default}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: solo, namespace: default}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: solo-r, namespace: default}
spec:
  parentRefs: [{name: solo}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gn, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: istio-only, namespace: default}
spec:
  parentRefs: [{name: gi}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: default}
spec:
  parentRefs: [{name: gi}, {name: gn}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ngf-only, namespace: default}
spec:
  parentRefs: [{name: gn}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

// The Programmed condition of Kuadrant's kinds says what their Enforced
// condition says, case by case as its status updaters tell them apart
// (each reads every ready path the policy is on, its effective policy
// computed there whoever the Gateway's controller is):
//   - every rule in effect everywhere: Enforced=True, "successfully
//     enforced" (attache: True/Programmed);
//   - some rule lost on some path, some in effect: Enforced=True,
//     "partially enforced" (True/PartiallyProgrammed), for a
//     TokenRateLimitPolicy Enforced=False, Unknown, "policy rule(s)
//     overridden" (False/Unknown, not programmed in part), also when the
//     loss is on a path through another controller's Gateway;
//   - no rule in effect anywhere, some lost: Enforced=False, Overridden
//     (False/Overridden), also when the paths losing them run through
//     another controller's Gateway only;
//   - on no path: Enforced=False, Unknown, "not in the path to any
//     existing routes" (False/Unknown);
//   - some rule in effect on a path through another controller's
//     Gateway: Enforced=False, Unknown, "waiting for the following
//     components to sync: Gateway (ns/name)" (False/Unknown), even where
//     every rule is overridden on the served paths; not where its rules
//     are all overridden on those paths (before session 30's review,
//     attache waited for every such Gateway on a ready path).
//
// Source: KO ae698811 internal/controller/ratelimit_policy_status_updater.go,
// auth_policy_status_updater.go, tokenratelimitpolicy_status_updater.go
// (enforcedCondition: affectedGateways only where a rule of the policy is
// in the effective policy, overridingPolicies over every path;
// kuadrant.EnforcedCondition with fully = no overriding),
// internal/kuadrant/errors.go (ErrOverridden, ErrNoRoutes, ErrOutOfSync,
// ErrUnknown), effective_ratelimit_policies_reconciler.go (effective
// policies for the paths from every GatewayClass);
// tests/common/ratelimitpolicy/ratelimitpolicy_controller_test.go
// ("Gateway atomic override ...": the route's policy "is overridden by
// [gateway's]" and the other way round, "not in the path to any existing
// routes" without a route).
func TestKuadrantStatusAsEnforced(t *testing.T) {
	const v = "kuadrant.io/v1"
	rlp := func(name, kind, target string, min int, body string) string {
		return pol(v, "RateLimitPolicy", name, min, "targetRef: {group: gateway.networking.k8s.io, kind: "+kind+", name: "+target+"}\n"+body)
	}
	trlp := func(name, kind, target string, min int, body string) string {
		return pol("kuadrant.io/v1alpha1", "TokenRateLimitPolicy", name, min, "targetRef: {group: gateway.networking.k8s.io, kind: "+kind+", name: "+target+"}\n"+body)
	}
	limits := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(n + ": {rates: [{limit: 1, window: 1m}]}, ")
		}
		return "{" + strings.TrimSuffix(b.String(), ", ") + "}"
	}
	tokenLimits := func(names ...string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(n + ": {rates: [{limit: 1, window: 1m}], counters: [{expression: auth.identity.userid}]}, ")
		}
		return "{" + strings.TrimSuffix(b.String(), ", ") + "}"
	}
	crds := []string{rlpCRD(), labelledCRD("kuadrant.io", "TokenRateLimitPolicy", "tokenratelimitpolicies", "inherited"), kuadrantStatusTopo}
	for _, tc := range []struct {
		name string
		pols []string
		want map[string]string // policy: Programmed
		msgs map[string]string // policy: a part of its Programmed message
	}{
		{"fully enforced", []string{rlp("p", "HTTPRoute", "istio-only", 0, "limits: "+limits("a"))},
			map[string]string{"p": "True/Programmed"}, nil},
		{"partially enforced", []string{
			rlp("g", "Gateway", "gi", 0, "defaults: {strategy: merge, limits: "+limits("a", "b")+"}"),
			rlp("r", "HTTPRoute", "istio-only", 1, "limits: "+limits("a"))},
			map[string]string{"g": "True/PartiallyProgrammed", "r": "True/Programmed"}, nil},
		{"overridden", []string{
			rlp("o", "Gateway", "gi", 0, "overrides: {limits: "+limits("x")+"}"),
			rlp("r", "HTTPRoute", "istio-only", 1, "limits: "+limits("a"))},
			map[string]string{"o": "True/Programmed", "r": "False/Overridden"}, nil},
		{"gateway defaults overridden by the route's policy", []string{
			rlp("g", "Gateway", "solo", 0, "defaults: {limits: "+limits("l1")+"}"),
			rlp("r", "HTTPRoute", "solo-r", 1, "limits: "+limits("route"))},
			map[string]string{"g": "False/Overridden", "r": "True/Programmed"}, map[string]string{"g": "beaten by RateLimitPolicy default/r"}},
		{"not in the path to any route", []string{rlp("p", "Gateway", "idle", 0, "limits: "+limits("a"))},
			map[string]string{"p": "False/Unknown"}, map[string]string{"p": "in the path to no effective target"}},
		{"waiting for another controller's Gateway", []string{rlp("p", "HTTPRoute", "both", 0, "limits: "+limits("a"))},
			map[string]string{"p": "False/Unknown"}, map[string]string{"p": "waits for Gateway default/gn"}},
		{"token rate limits overridden in part", []string{
			trlp("g", "Gateway", "gi", 0, "defaults: {strategy: merge, limits: "+tokenLimits("a", "b")+"}"),
			trlp("r", "HTTPRoute", "istio-only", 1, "limits: "+tokenLimits("a"))},
			map[string]string{"g": "False/Unknown", "r": "True/Programmed"}, map[string]string{"g": "overridden in part"}},
		// The paths through another controller's Gateway count as
		// Kuadrant counts them.
		{"overridden through another controller's Gateway, in effect on a served one", []string{
			rlp("p", "HTTPRoute", "both", 1, "limits: "+limits("a")),
			rlp("o", "Gateway", "gn", 0, "overrides: {limits: "+limits("x")+"}")},
			map[string]string{"p": "True/PartiallyProgrammed", "o": "False/Unknown"},
			map[string]string{"p": "overridden in part on the paths through Gateway default/gn", "o": "waits for Gateway default/gn"}},
		{"overridden through another controller's Gateway only", []string{
			rlp("p", "HTTPRoute", "ngf-only", 1, "limits: "+limits("a")),
			rlp("o", "Gateway", "gn", 0, "overrides: {limits: "+limits("x")+"}")},
			map[string]string{"p": "False/Overridden", "o": "False/Unknown"},
			map[string]string{"p": "limits.a.rates beaten by RateLimitPolicy default/o (on Gateway default/gn)"}},
		{"overridden on the served paths, in effect through another controller's Gateway", []string{
			rlp("p", "HTTPRoute", "both", 1, "limits: "+limits("a")),
			rlp("o", "Gateway", "gi", 0, "overrides: {limits: "+limits("x")+"}")},
			map[string]string{"p": "False/Unknown"}, map[string]string{"p": "waits for Gateway default/gn"}},
		{"token rate limits overridden through another controller's Gateway", []string{
			trlp("p", "HTTPRoute", "both", 1, "limits: "+tokenLimits("a")),
			trlp("o", "Gateway", "gn", 0, "overrides: {limits: "+tokenLimits("x")+"}")},
			map[string]string{"p": "False/Unknown"}, map[string]string{"p": "overridden in part: on the paths through Gateway default/gn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := append(append([]string{}, crds...), tc.pols...)
			res := compute(t, engine.Options{}, docs...)
			for _, p := range res.Problems {
				t.Errorf("problem: %v", p)
			}
			for name, w := range tc.want {
				want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
				want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
			}
			for name, part := range tc.msgs {
				if m := condition(t, res, name, "Programmed").Message; !strings.Contains(m, part) {
					t.Errorf("%s Programmed message %q, want it to say %q", name, m, part)
				}
			}
			// Incremental agrees when the last policy comes: a policy
			// on the paths through another controller's Gateway changes
			// the verdicts of the policies on those paths, which no
			// context shows.
			in := engine.NewIncremental(engine.Options{})
			in.Compute(decodeDocs(t, docs[:len(docs)-1]...))
			objs := decodeDocs(t, docs...)
			if g, w := dump(t, in.Compute(objs)), dump(t, res); g != w {
				t.Errorf("Incremental: %s", firstDiff(g, w))
			}
		})
	}
}
