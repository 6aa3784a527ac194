package routing_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// kgwReplacedDocs: kgateway's TrafficPolicy CRD (unlabelled: its profile
// applies), a Gateway, Service web and HTTPRoute r whose rule a has an
// ExtensionRef filter naming TrafficPolicy missing, which does not exist,
// rule b one naming TrafficPolicy there, which does, and rule c, which
// redirects, one naming the missing policy.
const kgwReplacedDocs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec:
  group: gateway.kgateway.dev
  names: {kind: TrafficPolicy, plural: trafficpolicies}
  scope: Namespaced
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {gatewayClassName: kgateway, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [r.example]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: missing}}]
    backendRefs: [{name: web, port: 8080}]
  - name: b
    matches: [{path: {type: PathPrefix, value: /b}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: there}}]
    backendRefs: [{name: web, port: 8080}]
  - name: c
    matches: [{path: {type: PathPrefix, value: /c}}]
    filters:
    - {type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: missing}}
    - {type: RequestRedirect, requestRedirect: {hostname: elsewhere.example}}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: there, namespace: default}
spec: {timeouts: {request: 5s}}
`

// kgateway replaces a rule whose ExtensionRef filter names a TrafficPolicy
// that does not exist with a 500 direct response ("invalid route
// configuration detected and replaced with a direct response"): a request
// to it is answered with 500, naming the filter; a request to a rule whose
// policy exists is forwarded.
// Source: kgateway pkg/kgateway/translator/gateway/testutils/outputs/
// traffic-policy/route-section-attachment.yaml @ 157a7cbb (route
// example-tls-route-extension-ref).
func TestReplacedRule(t *testing.T) {
	ix, pols := build(t, kgwReplacedDocs, true)
	o := trace(t, ix, pols, "http://r.example/a", nil).Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 500 {
		t.Errorf("/a: result %s %d, want error 500", o.Result, o.Status)
	}
	if !strings.Contains(o.Reason, "its ExtensionRef filter names TrafficPolicy default/missing, which is not among the objects, so its implementation replaces the rule with a 500 direct response") {
		t.Errorf("/a: reason %q", o.Reason)
	}
	if o := trace(t, ix, pols, "http://r.example/b", nil).Outcomes[0]; o.Result != routing.ResultForwarded {
		t.Errorf("/b: result %s (%s), want forwarded", o.Result, o.Reason)
	}
	// A redirecting rule is replaced too: the direct response is its
	// action (since session 30; before, it redirected).
	if o := trace(t, ix, pols, "http://r.example/c", nil).Outcomes[0]; o.Result != routing.ResultError || o.Status != 500 {
		t.Errorf("/c: result %s %d (%s), want error 500", o.Result, o.Status, o.Reason)
	}
}

// kgwReplacementDocs: kgateway's TrafficPolicy CRD, Gateway gw with an
// HTTP listener http (port 80) and a TLS listener tls (port 9443) taking
// TLSRoute t, Service web, and HTTPRoute r (host r.example) with rules a
// (/a), b (/b) and moved (/old, redirected); POLICIES follows.
const kgwReplacementDocs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec:
  group: gateway.kgateway.dev
  names: {kind: TrafficPolicy, plural: trafficpolicies}
  scope: Namespaced
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: tls, protocol: TLS, port: 9443, tls: {mode: Passthrough}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [r.example]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: web, port: 8080}]
  - name: b
    matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{name: web, port: 8080}]
  - name: moved
    matches: [{path: {type: PathPrefix, value: /old}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}}}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TLSRoute
metadata: {name: t, namespace: default}
spec:
  parentRefs: [{name: gw, sectionName: tls}]
  hostnames: [t.example]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
`

// kgateway's route replacement, traced: a TrafficPolicy with errors
// replaces the rules below the route it targets with a 500 direct
// response, also rule a where a rule policy wins the field it sets; on
// the Gateway it replaces every request of its HTTP listeners, also one
// no route matches (kgateway replaces the whole route configuration with
// one catch-all 500), but not of its TLS listener; on an HTTP listener,
// the requests its routes match. A redirecting rule is replaced as well
// (the direct response is its action). A valid policy replaces nothing.
// Source: kgateway pkg/kgateway/translator/irtranslator/route.go @
// 828ab4dd (envoyRoutes, ComputeRouteConfiguration, computeVirtualHost),
// pkg/kgateway/translator/listener/gateway_listener_translator.go @
// d7ab0702 (HTTP listeners' policies on their virtual hosts, HTTPS
// listeners' on their route configuration).
func TestTraceRouteReplacement(t *testing.T) {
	tp := func(name, min, anns, spec string) string {
		return "apiVersion: gateway.kgateway.dev/v1alpha1\nkind: TrafficPolicy\nmetadata: {name: " + name + ", namespace: default, creationTimestamp: \"2026-01-01T00:" + min + ":00Z\"" + anns + "}\nspec:\n" + spec + "\n---\n"
	}
	badRoute := tp("bad", "00", `, annotations: {kgateway.dev/policy-weight: "high"}`,
		"  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\n  timeouts: {request: 5s}") +
		tp("rule", "01", "", "  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: a}]\n  timeouts: {request: 1s}")
	badGateway := tp("gwauth", "00", "", "  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  basicAuth: {secretRef: {name: nobody}}")
	badListener := tp("lauth", "00", "", "  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]\n  basicAuth: {secretRef: {name: nobody}}")
	valid := tp("fine", "00", "", "  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  timeouts: {request: 5s}")
	for _, tc := range []struct {
		name, policies, url string
		status              int
		says                string
	}{
		{"route policy, rule where another wins", badRoute, "http://r.example/a", 500, "TrafficPolicy default/bad has errors (metadata.annotations[kgateway.dev/policy-weight]"},
		{"route policy, other rule", badRoute, "http://r.example/b", 500, "replaces every rule of HTTPRoute default/r"},
		{"route policy, no route", badRoute, "http://r.example/c", 404, ""},
		{"route policy, redirecting rule", badRoute, "http://r.example/old", 500, "replaces every rule of HTTPRoute default/r"},
		{"valid policy, redirecting rule", valid, "http://r.example/old", 301, ""},
		{"gateway policy", badGateway, "http://r.example/a", 500, "TrafficPolicy default/gwauth has errors"},
		{"gateway policy, no route", badGateway, "http://r.example/c", 500, "every request of the HTTP and HTTPS listeners of Gateway default/gw"},
		{"gateway policy, TLS listener", badGateway, "https://t.example:9443/", 0, ""},
		{"listener policy", badListener, "http://r.example/b", 500, "listener http of Gateway default/gw"},
		{"listener policy, no route", badListener, "http://r.example/c", 404, ""},
		{"valid policy", valid, "http://r.example/a", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, pols := build(t, kgwReplacementDocs+tc.policies, true)
			o := trace(t, ix, pols, tc.url, nil).Outcomes[0]
			switch {
			case tc.status == 301 && o.Result != routing.ResultRedirected:
				t.Errorf("result %s %d (%s), want redirected", o.Result, o.Status, o.Reason)
			case tc.status == 0 && o.Result != routing.ResultForwarded:
				t.Errorf("result %s %d (%s), want forwarded", o.Result, o.Status, o.Reason)
			case tc.status != 0 && tc.status != 301 && o.Status != tc.status:
				t.Errorf("result %s %d (%s), want %d", o.Result, o.Status, o.Reason, tc.status)
			case !strings.Contains(o.Reason, tc.says):
				t.Errorf("reason %q, want it to say %q", o.Reason, tc.says)
			}
		})
	}
}

// A rule whose ExtensionRef filter names a TrafficPolicy that does not
// exist is replaced by kgateway, through kgateway's Gateways only: on a
// route of a kgateway Gateway and an Envoy Gateway one, a request through
// the second is routed as that implementation routes it.
func TestReplacedRuleThroughItsGatewaysOnly(t *testing.T) {
	docs := strings.Replace(kgwReplacedDocs, "  parentRefs: [{name: gw}]", "  parentRefs: [{name: gw}, {name: eg}]", 1) + `---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: envoy}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec: {gatewayClassName: envoy, listeners: [{name: http, protocol: HTTP, port: 80}]}
`
	ix, pols := build(t, docs, true)
	for _, tc := range []struct {
		gw     string
		status int
	}{{"gw", 500}, {"eg", 0}} {
		ref := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: tc.gw}
		o := trace(t, ix, pols, "http://r.example/a", &ref).Outcomes[0]
		switch {
		case tc.status == 500 && (o.Result != routing.ResultError || o.Status != 500):
			t.Errorf("through %s: result %s %d (%s), want error 500", tc.gw, o.Result, o.Status, o.Reason)
		case tc.status == 0 && o.Result != routing.ResultForwarded:
			t.Errorf("through %s: result %s %d (%s), want forwarded", tc.gw, o.Result, o.Status, o.Reason)
		}
	}
}
