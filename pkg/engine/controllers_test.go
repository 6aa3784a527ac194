package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// ctlTopo: GatewayClass nginx (NGINX Gateway Fabric's controller) and
// other (another implementation's); Gateway gw (nginx), othergw (other)
// and nocls (of a class not among the objects); HTTPRoutes r1 on gw, ro
// on othergw, both on gw and othergw, rn on nocls, each to Service svc
// under its own path.
const ctlTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {gatewayClassName: nginx, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: othergw, namespace: default}
spec: {gatewayClassName: other, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: nocls, namespace: default}
spec: {gatewayClassName: mystery, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec: {parentRefs: [{name: gw}], rules: [{matches: [{path: {type: PathPrefix, value: /r1}}], backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ro, namespace: default}
spec: {parentRefs: [{name: othergw}], rules: [{matches: [{path: {type: PathPrefix, value: /ro}}], backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: default}
spec: {parentRefs: [{name: gw}, {name: othergw}], rules: [{matches: [{path: {type: PathPrefix, value: /both}}], backendRefs: [{name: svc, port: 80}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rn, namespace: default}
spec: {parentRefs: [{name: nocls}], rules: [{matches: [{path: {type: PathPrefix, value: /rn}}], backendRefs: [{name: svc, port: 80}]}]}
`

// An implementation that serves only the Gateways of its own
// GatewayClasses (NGINX Gateway Fabric: graph/gateway.go processGateways)
// never sees another implementation's Gateway, nor what only such
// Gateways reach: its policies there are TargetNotFound, naming the class
// and its controller; a route on both kinds of Gateway takes the policy
// through the served one only; an UpstreamSettingsPolicy's ancestors are
// the served Gateways using the Service; a Gateway of a class attache
// does not see counts as served. The CRD's attache.dev/controllers
// annotation (here "any") overrides the profile's.
func TestControllersScopeTargets(t *testing.T) {
	const v = "gateway.nginx.org/v1alpha1"
	ref := func(kind, name string) string {
		return "{group: gateway.networking.k8s.io, kind: " + kind + ", name: " + name + "}"
	}
	csp := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	usp := labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct")
	docs := []string{csp, usp, ctlTopo,
		pol(v, "ClientSettingsPolicy", "on-othergw", 0, "targetRefs: ["+ref("Gateway", "othergw")+"]\nbody: {maxSize: 1m}"),
		pol(v, "ClientSettingsPolicy", "on-ro", 1, "targetRefs: ["+ref("HTTPRoute", "ro")+"]\nbody: {maxSize: 1m}"),
		pol(v, "ClientSettingsPolicy", "on-both", 2, "targetRefs: ["+ref("HTTPRoute", "both")+"]\nbody: {maxSize: 2m}"),
		pol(v, "ClientSettingsPolicy", "on-rn", 3, "targetRefs: ["+ref("HTTPRoute", "rn")+"]\nbody: {maxSize: 3m}"),
		pol(v, "UpstreamSettingsPolicy", "on-svc", 4, "targetRefs: [{group: \"\", kind: Service, name: svc}]\nzoneSize: 512k"),
	}
	res := compute(t, engine.Options{}, docs...)
	// NGF writes no entry for such a target (missing-targets: problem):
	// the summary and a problem say why.
	want(t, "on-othergw", status(t, res, "on-othergw", "Accepted"), "False/TargetNotFound")
	want(t, "on-othergw message", condition(t, res, "on-othergw", "Accepted").Message,
		"spec.targetRefs[0]: Gateway default/othergw (GatewayClass other, controller example.com/other) is another implementation's: the implementation of ClientSettingsPolicy.gateway.nginx.org serves the GatewayClasses of gateway.nginx.org/nginx-gateway-controller only")
	want(t, "on-othergw ancestors", len(policyStatusOf(t, res, "on-othergw").Ancestors), 0)
	if p := problemsOf(res, "on-othergw"); len(p) != 1 || !strings.HasPrefix(p[0], "spec.targetRefs[0]: Gateway default/othergw (GatewayClass other, controller example.com/other) is another implementation's") {
		t.Errorf("on-othergw problems %q", p)
	}
	want(t, "on-ro", status(t, res, "on-ro", "Accepted"), "False/TargetNotFound")
	if msg := condition(t, res, "on-ro", "Accepted").Message; !strings.Contains(msg, "HTTPRoute default/ro takes effect only through other implementations' Gateways (Gateway default/othergw (GatewayClass other, controller example.com/other))") {
		t.Errorf("on-ro: %q", msg)
	}
	for _, name := range []string{"on-both", "on-rn", "on-svc"} {
		want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
	}
	both := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "both"}
	for _, p := range contextPaths(res, "ClientSettingsPolicy", both) {
		if strings.Contains(p, "othergw") || !strings.Contains(p, "gw") {
			t.Errorf("on-both context %q: want paths through gw only", p)
		}
	}
	want(t, "on-svc ancestors", ancestorsOf(t, res, "on-svc"), []string{
		"Gateway.gateway.networking.k8s.io default/gw=Accepted",
		"Gateway.gateway.networking.k8s.io default/nocls=Accepted",
	})

	// The other class turns into NGF's: an Incremental agrees with
	// Compute, and the policies on othergw and ro apply.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	moved := slices.Clone(docs)
	moved[2] = strings.Replace(ctlTopo, "controllerName: example.com/other", "controllerName: gateway.nginx.org/nginx-gateway-controller", 1)
	got := in.Compute(decodeDocs(t, moved...))
	if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, moved...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "on-othergw once its class is NGF's", status(t, got, "on-othergw", "Accepted"), "True/Accepted")

	// Annotated "any": every Gateway is served.
	docs[0] = strings.Replace(csp, "labels: {gateway.networking.k8s.io/policy: inherited}", "labels: {gateway.networking.k8s.io/policy: inherited}, annotations: {attache.dev/controllers: any}", 1)
	res = compute(t, engine.Options{}, docs...)
	want(t, "on-othergw with controllers any", status(t, res, "on-othergw", "Accepted"), "True/Accepted")
	found := false
	for _, p := range contextPaths(res, "ClientSettingsPolicy", both) {
		found = found || strings.Contains(p, "othergw")
	}
	if !found {
		t.Error("on-both with controllers any: no context through othergw")
	}
}

// effectiveListeners lists the listeners (section names) of kind with
// an effective policy.
func effectiveListeners(res *engine.Result, kind string) []string {
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == kind && e.Target.SectionName != "" && len(e.Contexts) > 0 {
			out = append(out, e.Target.SectionName)
		}
	}
	slices.Sort(out)
	return out
}

// Kuadrant's DNSPolicy acts on the listeners with a hostname (and routes
// attached and addresses, which the Gateway's status says every listener
// here has), its
// TLSPolicy on those terminating TLS with Secrets of their own namespace
// (a tls block in Terminate mode, the default, naming core Secrets), a
// hostname too: a policy on the whole Gateway has effective policies
// there only; one on a listener that does not qualify has none.
// Source: KO ae698811 internal/controller/effective_dnspolicies_reconciler.go
// ("listener has no hostname assigned, skipping"),
// effective_tls_policies_reconciler.go (validateGatewayListenerBlock).
func TestKuadrantEffectiveListeners(t *testing.T) {
	topo := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: plain-host, protocol: HTTP, port: 8080, hostname: b.example.com}
  - {name: https, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: a-cert}]}}
  - {name: passthrough, protocol: TLS, port: 8443, hostname: c.example.com, tls: {mode: Passthrough}}
  - {name: other-ns, protocol: HTTPS, port: 9443, hostname: d.example.com, tls: {certificateRefs: [{name: d-cert, namespace: certs}]}}
  - {name: no-host, protocol: HTTPS, port: 10443, tls: {certificateRefs: [{name: e-cert}]}}
status:
  addresses: [{type: Hostname, value: lb.example.net}]
  listeners:
  - {name: http, attachedRoutes: 1}
  - {name: plain-host, attachedRoutes: 1}
  - {name: https, attachedRoutes: 1}
  - {name: passthrough, attachedRoutes: 1}
  - {name: other-ns, attachedRoutes: 1}
  - {name: no-host, attachedRoutes: 1}
` + issuers("issuer", "other")
	gw := "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}"
	res := compute(t, engine.Options{}, crd("kuadrant.io", "DNSPolicy", "dnspolicies"), crd("kuadrant.io", "TLSPolicy", "tlspolicies"), topo,
		pol("kuadrant.io/v1", "DNSPolicy", "dns", 0, gw+"\nloadBalancing: {weight: 1}"),
		pol("kuadrant.io/v1", "TLSPolicy", "tls", 0, gw+"\nissuerRef: {kind: Issuer, name: issuer}"),
		pol("kuadrant.io/v1", "TLSPolicy", "tls-http", 1, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}\nissuerRef: {kind: Issuer, name: other}"),
		pol("kuadrant.io/v1", "TLSPolicy", "tls-plain-host", 2, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: plain-host}\nissuerRef: {kind: Issuer, name: other}"))
	want(t, "DNSPolicy listeners", effectiveListeners(res, "DNSPolicy"), []string{"https", "other-ns", "passthrough", "plain-host"})
	want(t, "TLSPolicy listeners", effectiveListeners(res, "TLSPolicy"), []string{"https"})
	want(t, "tls-http", status(t, res, "tls-http", "Accepted"), "True/Accepted")
	want(t, "tls-http Programmed", condition(t, res, "tls-http", "Programmed").Message,
		"Policy is programmed; listener Gateway default/gw#http is none its implementation acts on (it needs a hostname and TLS terminated with Secrets of its own namespace)")
	want(t, "tls-plain-host Programmed (what it lacks only)", condition(t, res, "tls-plain-host", "Programmed").Message,
		"Policy is programmed; listener Gateway default/gw#plain-host is none its implementation acts on (it needs TLS terminated with Secrets of its own namespace)")
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "TLSPolicy" && e.Target.SectionName == "http" && len(e.Contexts) > 0 {
			t.Errorf("TLSPolicy effective at listener http: %v", e.Contexts[0].Spec)
		}
	}
}

// Envoy Gateway configured with another controller name
// (gateway.controllerName in its configuration) serves the classes of
// that name: its policies reach their Gateways as those of the default
// name; without the configuration, such a Gateway is another
// implementation's. An Incremental agrees with Compute when the
// configuration comes.
func TestControllersFromConfiguration(t *testing.T) {
	config := strings.Replace(egConfig("{}"), "    extensionApis: {}\n", "    gateway: {controllerName: example.com/eg-tenant}\n", 1)
	docs := []string{crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"), `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: tenant}
spec: {controllerName: example.com/eg-tenant}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {gatewayClassName: tenant, listeners: [{name: http, protocol: HTTP, port: 80}]}
`, pol(egV, "ClientTrafficPolicy", "ctp", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ntimeout: {http: {idleTimeout: 5s}}")}
	in := engine.NewIncremental(engine.Options{})
	res := in.Compute(decodeDocs(t, docs...))
	want(t, "ctp without the configuration", status(t, res, "ctp", "Accepted"), "False/TargetNotFound")
	with := append(slices.Clone(docs), config)
	res = in.Compute(decodeDocs(t, with...))
	if a, b := dump(t, res), dump(t, engine.Compute(decodeDocs(t, with...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "ctp with gateway.controllerName", status(t, res, "ctp", "Accepted"), "True/Accepted")
}

// A route rule whose ExtensionRef filter names a kgateway TrafficPolicy
// that does not exist is replaced by a 500 direct response
// (Result.ReplacedRules) and is a problem on its route; creating the
// policy takes it back, in an Incremental as in Compute.
func TestReplacedRules(t *testing.T) {
	docs := []string{crd("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies"), `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {gatewayClassName: kgateway, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: a
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: later}}]
    backendRefs: [{name: web, port: 80}]
`}
	in := engine.NewIncremental(engine.Options{})
	res := in.Compute(decodeDocs(t, docs...))
	rule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r", SectionName: "a"}
	rr, ok := res.ReplacedRules[rule]
	if !ok || rr.Status != 500 || !strings.Contains(rr.Reason, "TrafficPolicy default/later, which is not among the objects") {
		t.Errorf("replaced rules %+v, want rule a replaced by a 500", res.ReplacedRules)
	}
	found := false
	for _, p := range res.Problems {
		found = found || (p.Object.Name == "r" && p.Field == "spec.rules[0].filters[0].extensionRef" && strings.Contains(p.Message, "replaces the rule with a 500 direct response"))
	}
	if !found {
		t.Errorf("no problem on route r's filter: %v", res.Problems)
	}
	with := append(slices.Clone(docs), pol("gateway.kgateway.dev/v1alpha1", "TrafficPolicy", "later", 0, "timeouts: {request: 5s}"))
	res = in.Compute(decodeDocs(t, with...))
	if len(res.ReplacedRules) != 0 || len(engine.Compute(decodeDocs(t, with...), engine.Options{}).ReplacedRules) != 0 {
		t.Errorf("replaced rules once the policy exists: %v", res.ReplacedRules)
	}
}
