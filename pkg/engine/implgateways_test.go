package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// ownGatewaysTopo: GatewayClasses kgateway (kgateway's controller), gloo (Gloo
// Gateway's) and eg (Envoy Gateway's); Gateways kgw, gloo-gw and eg-gw of
// them; HTTPRoutes on-kgw, on-eg, on-both (kgw and eg-gw) and on-gloo,
// each with rule a.
const ownGatewaysTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gloo}
spec: {controllerName: solo.io/gloo-gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kgw, namespace: default}
spec: {gatewayClassName: kgateway, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gloo-gw, namespace: default}
spec: {gatewayClassName: gloo, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-gw, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-kgw, namespace: default}
spec: {parentRefs: [{name: kgw}], rules: [{name: a, backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-eg, namespace: default}
spec: {parentRefs: [{name: eg-gw}], rules: [{name: a, backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-both, namespace: default}
spec: {parentRefs: [{name: kgw}, {name: eg-gw}], rules: [{name: a, backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-gloo, namespace: default}
spec: {parentRefs: [{name: gloo-gw}], rules: [{name: a, backendRefs: [{name: svc, port: 80}]}]}
`

func ownGatewaysRef(kind, name string) string {
	return "{group: gateway.networking.k8s.io, kind: " + kind + ", name: " + name + "}"
}

// kgateway translates only the Gateways of its own class and writes a
// policy's status.ancestors from that translation alone: a TrafficPolicy
// on another implementation's Gateway, or on a route only such Gateways
// reach, is applied nowhere and listed nowhere (an input problem says
// why); one on a route of both names kgateway's Gateway only and applies
// through it only. A target that does not exist keeps its TargetNotFound
// entry (kgateway's target resolver reports it).
// Source: kgateway-dev/kgateway pkg/krtcollections/policy.go @ 0412311c
// (GatewaysForEnvoyTransformationFunc: "only care about gateways use a
// class controlled by envoy"), pkg/kgateway/proxy_syncer/
// policy_target_status.go @ 6372edd3 ("Policy status is otherwise produced
// by reverse lookup"; newPolicyTargetResolvers: a Gateway or route that
// exists, of any class, resolves).
func TestKgatewayPoliciesOnOtherImplementationsGateways(t *testing.T) {
	tp := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	docs := []string{tp, ownGatewaysTopo,
		pol(kgwV, "TrafficPolicy", "on-eg-gw", 0, "targetRefs: ["+ownGatewaysRef("Gateway", "eg-gw")+"]\ntimeouts: {request: 5s}"),
		pol(kgwV, "TrafficPolicy", "on-eg-route", 1, "targetRefs: ["+ownGatewaysRef("HTTPRoute", "on-eg")+"]\ntimeouts: {request: 5s}"),
		pol(kgwV, "TrafficPolicy", "on-both", 2, "targetRefs: ["+ownGatewaysRef("HTTPRoute", "on-both")+"]\ntimeouts: {request: 5s}"),
		pol(kgwV, "TrafficPolicy", "mixed", 3, "targetRefs: ["+ownGatewaysRef("HTTPRoute", "on-kgw")+", "+ownGatewaysRef("HTTPRoute", "on-eg")+", "+ownGatewaysRef("HTTPRoute", "nowhere")+"]\ntimeouts: {request: 5s}"),
	}
	for _, res := range []*engine.Result{compute(t, engine.Options{}, docs...), engine.NewIncremental(engine.Options{}).Compute(decodeDocs(t, docs...))} {
		for _, name := range []string{"on-eg-gw", "on-eg-route"} {
			want(t, name+" ancestors", ancestorsOf(t, res, name), []string(nil))
			want(t, name, status(t, res, name, "Accepted"), "False/TargetNotFound")
			p := problemsOf(res, name)
			if len(p) != 1 || !strings.Contains(p[0], "kgateway writes policy status only for what its own Gateways translate, so status.ancestors does not list it") {
				t.Errorf("%s problems %q", name, p)
			}
		}
		want(t, "on-eg rule", effective(t, res, "TrafficPolicy", rule("on-eg", "a")), []string(nil))
		want(t, "on-both ancestors", ancestorsOf(t, res, "on-both"), []string{"Gateway.gateway.networking.k8s.io default/kgw=Accepted"})
		for _, p := range contextPaths(res, "TrafficPolicy", rule("on-both", "a")) {
			if strings.Contains(p, "eg-gw") {
				t.Errorf("on-both context %q: want paths through kgw only", p)
			}
		}
		// The route that does not exist keeps its entry; on-eg is
		// unlisted, on-kgw named by its Gateway.
		want(t, "mixed ancestors", ancestorsOf(t, res, "mixed"), []string{
			"Gateway.gateway.networking.k8s.io default/kgw=Accepted",
			"HTTPRoute.gateway.networking.k8s.io default/nowhere=TargetNotFound",
		})
		if p := problemsOf(res, "mixed"); len(p) != 1 || !strings.HasPrefix(p[0], "spec.targetRefs[1]: HTTPRoute default/on-eg takes effect only through other implementations' Gateways") {
			t.Errorf("mixed problems %q", p)
		}
	}
}

// A kgateway TrafficPolicy with errors replaces what it reaches through
// kgateway's Gateways only: on a route only Envoy Gateway's Gateway
// reaches, nothing is replaced and no problem says so; nor is a rule there
// whose ExtensionRef filter names a TrafficPolicy that does not exist (its
// implementation never sees it).
func TestKgatewayRouteReplacementOnlyThroughItsGateways(t *testing.T) {
	tp := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	bad := `{kgateway.dev/policy-weight: "high"}`
	topo := ownGatewaysTopo + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: filtered, namespace: default}
spec:
  parentRefs: [{name: eg-gw}]
  rules:
  - name: f
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: missing}}]
    backendRefs: [{name: svc, port: 80}]
`
	for _, tc := range []struct {
		name, target string
		replaced     topology.Ref
	}{
		{"on Envoy Gateway's route", ownGatewaysRef("HTTPRoute", "on-eg"), topology.Ref{}},
		{"on Envoy Gateway's Gateway", ownGatewaysRef("Gateway", "eg-gw"), topology.Ref{}},
		{"on a route of both", ownGatewaysRef("HTTPRoute", "on-both"), rule("on-both", "").Object()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := []string{tp, topo, kgwPol("bad", 0, bad, "targetRefs: ["+tc.target+"]\ntimeouts: {request: 5s}")}
			for _, res := range []*engine.Result{compute(t, engine.Options{}, docs...), engine.NewIncremental(engine.Options{}).Compute(decodeDocs(t, docs...))} {
				if len(res.ReplacedRules) != 0 {
					t.Errorf("replaced rules %v, want none (the filter's rule is Envoy Gateway's)", res.ReplacedRules)
				}
				if tc.replaced == (topology.Ref{}) {
					if len(res.ReplacedUnder) != 0 {
						t.Errorf("replaced under %v, want nothing", res.ReplacedUnder)
					}
					for _, p := range res.Problems {
						if strings.Contains(p.Message, "direct response") {
							t.Errorf("problem %q: nothing kgateway serves is replaced", p.Message)
						}
					}
					continue
				}
				if _, ok := res.ReplacedUnder[tc.replaced]; !ok || len(res.ReplacedUnder) != 1 {
					t.Errorf("replaced under %v, want %v", res.ReplacedUnder, tc.replaced)
				}
			}
		})
	}
}

// Gloo Gateway builds proxies for the Gateways of its own classes only: a
// RouteOption on a route only kgateway's Gateway reaches applies nowhere
// (Gloo writes no status for it; attache says TargetNotFound, naming the
// class), one on a route of a Gloo Gateway applies.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/proxy_syncer/
// proxy_syncer.go (glooProxies: allowedGatewayClasses),
// translator/plugins/routeoptions/route_options_plugin.go
// (trackAcceptedRouteOptions: status only for what translation attached).
func TestGlooOptionsOnOtherImplementationsGateways(t *testing.T) {
	docs := []string{crd("gateway.solo.io", "RouteOption", "routeoptions"), ownGatewaysTopo,
		pol(glooV, "RouteOption", "on-kgw", 0, "targetRefs: ["+ownGatewaysRef("HTTPRoute", "on-kgw")+"]\noptions: {timeout: 5s}"),
		pol(glooV, "RouteOption", "on-gloo", 1, "targetRefs: ["+ownGatewaysRef("HTTPRoute", "on-gloo")+"]\noptions: {timeout: 5s}"),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "on-kgw", status(t, res, "on-kgw", "Accepted"), "False/TargetNotFound")
	if msg := condition(t, res, "on-kgw", "Accepted").Message; !strings.Contains(msg, "(GatewayClass kgateway, controller kgateway.dev/kgateway)") {
		t.Errorf("on-kgw: %q", msg)
	}
	want(t, "on-kgw rule", effective(t, res, "RouteOption", rule("on-kgw", "a")), []string(nil))
	want(t, "on-gloo", status(t, res, "on-gloo", "Accepted"), "True/Accepted")
	want(t, "on-gloo rule", effective(t, res, "RouteOption", rule("on-gloo", "a")), []string{`{"options":{"timeout":"5s"}}`})
}
