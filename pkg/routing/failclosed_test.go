package routing_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// failClosedDocs: an unlabelled Envoy Gateway SecurityPolicy CRD (its
// profile applies), a Gateway with an HTTP listener, HTTPRoutes ok
// (ok.example) and bad (bad.example) to Service web, a Gateway policy
// with basic auth from Secret users, and on route bad a policy whose
// basic-auth Secret does not exist: Invalid, yet in place.
var failClosedDocs = egCRD("SecurityPolicy", "securitypolicies") + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: v1
kind: Secret
metadata: {name: users, namespace: default}
data: {.htpasswd: eA==}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [ok.example]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: default}
spec:
  parentRefs: [{name: eg}]
  hostnames: [bad.example]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: gw, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]
  basicAuth: {users: {name: users}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: broken, namespace: default, creationTimestamp: "2026-01-01T00:01:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: bad}]
  basicAuth: {users: {name: missing}}
`

// egCRD is an unlabelled, schemaless Envoy Gateway policy CRD as a YAML
// document (its profile applies).
func egCRD(kind, plural string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.gateway.envoyproxy.io}
spec:
  group: gateway.envoyproxy.io
  names: {kind: ` + kind + `, plural: ` + plural + `}
  scope: Namespaced
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`
}

// egClass is GatewayClass eg of Envoy Gateway, its parameters EnvoyProxy
// default/proxy, as a YAML document ("---" first).
func egClass(proxy string) string {
	return `---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller, parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: ` + proxy + `, namespace: default}}
`
}

// webRoute is Service web and HTTPRoute r (host r.example, to web) on
// parents (a YAML flow list's items), as YAML documents ("---" first).
func webRoute(parents string) string {
	return `---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [` + parents + `]
  hostnames: [r.example]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
`
}

// A route whose Envoy Gateway policy is Invalid in place is answered with
// a 500 (the kind's failure status); a route whose policies are valid is
// forwarded as before.
func TestFailClosed(t *testing.T) {
	ix, pols := build(t, failClosedDocs, true)

	bad := trace(t, ix, pols, "http://bad.example/", nil)
	if len(bad.Outcomes) != 1 {
		t.Fatalf("bad: %d outcomes", len(bad.Outcomes))
	}
	o := bad.Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 500 {
		t.Errorf("bad: result %s %d, want error 500", o.Result, o.Status)
	}
	for _, want := range []string{"SecurityPolicy default/broken applies here but is Invalid", "spec.basicAuth.users: Secret default/missing not found", "Envoy Gateway answers the route's requests with 500"} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("bad: reason %q lacks %q", o.Reason, want)
		}
	}
	if len(o.EffectivePolicies) == 0 {
		t.Error("bad: the effective policies are still shown")
	}

	ok := trace(t, ix, pols, "http://ok.example/", nil)
	if o := ok.Outcomes[0]; o.Result != routing.ResultForwarded || o.Status != 0 {
		t.Errorf("ok: result %s %d (%s), want forwarded", o.Result, o.Status, o.Reason)
	}
}

// A kind of one's own with a failure status and a reference read on
// HTTPS listeners only (object-refs on=HTTPS): a policy on the Gateway
// (which has one) and on route ok is Invalid in place at the Gateway only.
// bad's requests, where the Gateway's attachment applies, get the status;
// ok's, where the route's replaces it (atomic), are forwarded.
func TestFailClosedOnlyWhereInvalid(t *testing.T) {
	docs := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: guardpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/target-kinds: Gateway, HTTPRoute
    attache.dev/merge-strategies: atomic-defaults
    attache.dev/object-refs: "ca kinds=Secret on=HTTPS"
    attache.dev/failure-status: "503"
spec:
  group: example.com
  names: {kind: GuardPolicy, plural: guardpolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: example.com/v1
kind: GuardPolicy
metadata: {name: guard, namespace: default}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: eg}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: ok}
  ca: {name: missing}
`
	base := failClosedUpTo("broken")
	base = strings.Replace(base, "listeners: [{name: http, protocol: HTTP, port: 80}]",
		"listeners: [{name: http, protocol: HTTP, port: 80}, {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}]", 1)
	ix, pols := build(t, base+"---\n"+docs, true)
	o := trace(t, ix, pols, "http://bad.example/", nil).Outcomes[0]
	if o.Status != 503 || !strings.Contains(o.Reason, "GuardPolicy default/guard applies here but is Invalid (references do not resolve: spec.ca: Secret default/missing not found); the implementation answers the route's requests with 503") {
		t.Errorf("bad: %s %d %q, want 503 naming guard", o.Result, o.Status, o.Reason)
	}
	o = trace(t, ix, pols, "http://ok.example/", nil).Outcomes[0]
	if o.Result != routing.ResultForwarded {
		t.Errorf("ok: %s %d %q, want forwarded (guard is valid at route ok)", o.Result, o.Status, o.Reason)
	}
}

// An external authorizer failing open (extAuth.failOpen) is left out when
// its backend does not resolve, so the route is not failed; without the
// flag, or with another broken reference, it is.
func TestFailClosedFailOpen(t *testing.T) {
	base := failClosedUpTo("broken")
	for _, c := range []struct {
		name, spec string
		status     int
	}{
		{"fail open", "extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 80}]}}", 0},
		{"fail closed", "extAuth: {failOpen: false, http: {backendRefs: [{name: nosvc, port: 80}]}}", 500},
		{"no flag", "extAuth: {http: {backendRefs: [{name: nosvc, port: 80}]}}", 500},
		{"fail open, other error", "extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 80}]}}\n  basicAuth: {users: {name: missing}}", 500},
	} {
		ix, pols := build(t, base+securityPolicy("auth", 1, "HTTPRoute", "bad", c.spec), true)
		o := trace(t, ix, pols, "http://bad.example/", nil).Outcomes[0]
		if o.Status != c.status {
			t.Errorf("%s: %s %d %q, want status %d", c.name, o.Result, o.Status, o.Reason, c.status)
		}
	}
}

// A route policy with a merge type is translated merged with the
// Gateway's: the route fails when the merged policy holds the Gateway
// policy's broken reference, and is forwarded when the route's policy
// replaces it, though the Gateway's policy (Invalid in place) still sets
// another field there. A merging policy whose own reference is broken
// fails the route.
func TestFailClosedMerged(t *testing.T) {
	base := failClosedUpTo("gw")
	gw := securityPolicy("gw", 0, "Gateway", "eg", "basicAuth: {users: {name: missing}}\n  cors: {allowOrigins: [\"https://a.example\"]}")
	for _, c := range []struct {
		name, spec string
		status     int
		reason     string
	}{
		{"holds the broken reference", "mergeType: StrategicMerge\n  authorization: {defaultAction: Deny}", 500,
			"SecurityPolicy default/route applies here merged (StrategicMerge) with the policies above it, holding spec.basicAuth.users of SecurityPolicy default/gw, which its implementation cannot translate; Envoy Gateway answers the route's requests with 500"},
		{"replaces it", "mergeType: JSONMerge\n  basicAuth: {users: {name: users}}", 0, ""},
		{"its own broken", "mergeType: JSONMerge\n  basicAuth: {users: {name: gone}}", 500, "SecurityPolicy default/route applies here but is Invalid"},
		{"no merge type", "basicAuth: {users: {name: users}}", 0, ""},
	} {
		ix, pols := build(t, base+gw+securityPolicy("route", 1, "HTTPRoute", "bad", c.spec), true)
		o := trace(t, ix, pols, "http://bad.example/", nil).Outcomes[0]
		if o.Status != c.status || !strings.Contains(o.Reason, c.reason) {
			t.Errorf("%s: %s %d %q, want status %d saying %q", c.name, o.Result, o.Status, o.Reason, c.status, c.reason)
		}
	}
	// The Gateway's other route gets the Gateway's policy alone: it fails.
	ix, pols := build(t, base+gw, true)
	if o := trace(t, ix, pols, "http://ok.example/", nil).Outcomes[0]; o.Status != 500 {
		t.Errorf("ok: %s %d %q, want the Gateway policy's 500", o.Result, o.Status, o.Reason)
	}
}

// The merged policy's flags say whether what it holds of the Gateway
// policy's failing authorizer fails open (Envoy Gateway merges, then
// judges the merged policy): the route's flag turns the Gateway's
// failing-closed authorizer into one left out, and the other way round.
func TestFailClosedMergedFlags(t *testing.T) {
	base := failClosedUpTo("gw")
	for _, c := range []struct {
		name, gw, route string
		status          int
	}{
		{"the route's failOpen: true", "extAuth: {http: {backendRefs: [{name: nosvc, port: 80}]}}", "mergeType: JSONMerge\n  extAuth: {failOpen: true}", 0},
		{"the route's failOpen: false", "extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 80}]}}", "mergeType: JSONMerge\n  extAuth: {failOpen: false}", 500},
		{"the Gateway's failOpen: true", "extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 80}]}}", "mergeType: JSONMerge\n  cors: {allowOrigins: [\"https://a.example\"]}", 0},
		// The route's own backend does not resolve: the Gateway's flag
		// is the merged policy's (session 30b), or none is.
		{"the route's own failing authorizer, the Gateway's failOpen: true", "extAuth: {failOpen: true, http: {backendRefs: [{name: web, port: 8080}]}}", "mergeType: JSONMerge\n  extAuth: {http: {backendRefs: [{name: nosvc, port: 80}]}}", 0},
		{"the route's own failing authorizer, no flag", "extAuth: {http: {backendRefs: [{name: web, port: 8080}]}}", "mergeType: JSONMerge\n  extAuth: {http: {backendRefs: [{name: nosvc, port: 80}]}}", 500},
	} {
		ix, pols := build(t, base+securityPolicy("gw", 0, "Gateway", "eg", c.gw)+securityPolicy("route", 1, "HTTPRoute", "bad", c.route), true)
		if o := trace(t, ix, pols, "http://bad.example/", nil).Outcomes[0]; o.Status != c.status {
			t.Errorf("%s: %s %d %q, want status %d", c.name, o.Result, o.Status, o.Reason, c.status)
		}
	}
}

// A route on two Gateways whose EnvoyExtensionPolicy loads a dynamic
// module that only one Gateway's EnvoyProxy registers fails through the
// other only: Envoy Gateway translates a route's policy per Gateway.
func TestFailClosedPerGateway(t *testing.T) {
	docs := egCRD("EnvoyExtensionPolicy", "envoyextensionpolicies") + egClass("cls") + `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: cls, namespace: default}
spec: {dynamicModules: [{name: a, source: {local: {path: /a.so}}}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: own, namespace: default}
spec: {dynamicModules: [{name: b, source: {local: {path: /b.so}}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: default}
spec: {gatewayClassName: eg, infrastructure: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: own}}, listeners: [{name: http, protocol: HTTP, port: 80}]}
` + webRoute("{name: g1}, {name: g2}") + `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: mod, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  dynamicModule: [{name: a}]
`
	ix, pols := build(t, docs, true)
	for gw, status := range map[string]int{"g1": 0, "g2": 500} {
		ref := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: gw}
		o := trace(t, ix, pols, "http://r.example/", &ref).Outcomes[0]
		if o.Status != status {
			t.Errorf("via %s: %s %d %q, want status %d", gw, o.Result, o.Status, o.Reason, status)
		}
	}
}

// A SecurityPolicy authorizing by client IP location on a route attached
// through two listeners, of which only one detects the client IP, fails
// the requests through the other only.
func TestFailClosedPerListener(t *testing.T) {
	docs := egCRD("SecurityPolicy", "securitypolicies") + "---\n" + egCRD("ClientTrafficPolicy", "clienttrafficpolicies") + egClass("geo") + `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: geo, namespace: default}
spec: {geoIP: {provider: {type: MaxMind, maxMind: {cityDbSource: {local: {path: /db/city.mmdb}}}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 8080}]}
` + webRoute("{name: g}") + `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: detect, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: a}]
  clientIPDetection: {customHeader: {name: x-real-ip}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: geo, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  authorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [{city: Seattle}]}}]}
`
	ix, pols := build(t, docs, true)
	for url, status := range map[string]int{"http://r.example/": 0, "http://r.example:8080/": 500} {
		tr := trace(t, ix, pols, url, nil)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: %d outcomes", url, len(tr.Outcomes))
		}
		if o := tr.Outcomes[0]; o.Status != status {
			t.Errorf("%s via %s: %s %d %q, want status %d", url, o.Listener, o.Result, o.Status, o.Reason, status)
		}
	}
}

// failClosedUpTo is failClosedDocs up to its SecurityPolicy named name.
func failClosedUpTo(name string) string {
	base, _, _ := strings.Cut(failClosedDocs, "---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: SecurityPolicy\nmetadata: {name: "+name)
	return base
}

// securityPolicy is an Envoy Gateway SecurityPolicy document (after a
// "---" line) in namespace default, created at minute min, targeting the
// Gateway API object of kind named target, with spec (indented by two
// spaces after its first line).
func securityPolicy(name string, min int, kind, target, spec string) string {
	return fmt.Sprintf(`---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: %s, namespace: default, creationTimestamp: "2026-01-01T00:%02d:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]
  %s
`, name, min, kind, target, spec)
}
