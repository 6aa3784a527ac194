package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// kgwReplacementTopo: kgateway's TrafficPolicy CRD (its profile applies),
// Gateway gw (HTTP listener http, HTTPS listener https), HTTPRoute r with
// rules a and b, and the Secret web-users.
var kgwReplacementTopo = []string{crd("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies"), `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - {name: a, backendRefs: [{name: web, port: 80}]}
  - {name: b, backendRefs: [{name: web, port: 80}]}
---
apiVersion: v1
kind: Secret
metadata: {name: web-users, namespace: default}
data: {.htpasswd: YQ==}
`}

// kgwPol is a TrafficPolicy with the given annotations (YAML flow map, or
// "") and spec.
func kgwPol(name string, min int, annotations, spec string) string {
	p := pol("gateway.kgateway.dev/v1alpha1", "TrafficPolicy", name, min, spec)
	if annotations != "" {
		p = strings.Replace(p, "metadata: {", "metadata: {annotations: "+annotations+", ", 1)
	}
	return p
}

// kgateway's route replacement (TrafficPolicy: route-replacement 500):
// a policy with errors replaces what it reaches, wherever it attaches,
// even where another policy wins every field it sets; a valid policy
// replaces nothing.
// Source: kgateway pkg/kgateway/translator/irtranslator/route.go @
// 828ab4dd (envoyRoutes: a merged route policy with errors makes the
// route a 500 direct response; ComputeRouteConfiguration: a Gateway or
// HTTPS listener policy with errors replaces the whole route
// configuration), pkg/pluginsdk/policy/merge.go @ 7dd35098 (merge keeps
// the errors of every merged policy), trafficpolicy/traffic_policy_plugin.go
// @ 60a960b4 (a bad kgateway.dev/policy-weight is an error of the policy),
// basic_auth_policy.go @ fbd53a3a (a Secret that cannot be fetched is).
func TestRouteReplacement(t *testing.T) {
	r := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r"}
	gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "gw"}
	ruleA := r.WithSection("a")
	for _, tc := range []struct {
		name string
		docs []string
		at   topology.Ref
		says string
	}{
		{"bad weight on the route", []string{kgwPol("bad", 0, `{kgateway.dev/policy-weight: "high"}`,
			"targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\ntimeouts: {request: 5s}")},
			r, "replaces every rule of HTTPRoute default/r"},
		{"bad weight, overridden by a rule policy", []string{
			kgwPol("bad", 0, `{kgateway.dev/policy-weight: "1.5"}`,
				"targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\ntimeouts: {request: 5s}"),
			kgwPol("rule", 1, "", "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: a}]\ntimeouts: {request: 1s}")},
			r, "metadata.annotations[kgateway.dev/policy-weight]"},
		{"missing basic auth Secret on a rule", []string{kgwPol("auth", 0, "",
			"targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: a}]\nbasicAuth: {secretRef: {name: nobody}}")},
			ruleA, "replaces rule a of HTTPRoute default/r and every rule delegated below it"},
		{"missing API key Secret on the Gateway", []string{kgwPol("keys", 0, "",
			"targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\napiKeyAuth: {secretRef: {name: nokeys}}")},
			gw, "replaces every request of the HTTP and HTTPS listeners of Gateway default/gw"},
		{"missing Secret on a listener", []string{kgwPol("keys", 0, "",
			"targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: https}]\nbasicAuth: {secretRef: {name: nobody}}")},
			gw.WithSection("https"), "the requests of listener https of Gateway default/gw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := append(append([]string(nil), kgwReplacementTopo...), tc.docs...)
			for _, res := range []*engine.Result{compute(t, engine.Options{}, docs...), engine.NewIncremental(engine.Options{}).Compute(decodeDocs(t, docs...))} {
				rr, ok := res.ReplacedUnder[tc.at]
				if !ok || rr.Status != 500 || !strings.Contains(rr.Reason, tc.says) || rr.Kind == nil || rr.Kind.GroupKind.Kind != "TrafficPolicy" {
					t.Errorf("replaced under %v = %+v (%v), want a 500 saying %q", tc.at, rr, ok, tc.says)
				}
				if len(res.ReplacedUnder) != 1 {
					t.Errorf("replaced under: %v, want %v only", res.ReplacedUnder, tc.at)
				}
				found := false
				for _, p := range res.Problems {
					found = found || (p.Object.Kind == "TrafficPolicy" && strings.Contains(p.Message, "it has errors, so kgateway replaces"))
				}
				if !found {
					t.Errorf("no replacement problem on the policy: %v", res.Problems)
				}
			}
		})
	}
	// Valid policies (the Secret exists; the weight is an integer)
	// replace nothing.
	docs := append(append([]string(nil), kgwReplacementTopo...),
		kgwPol("ok", 0, `{kgateway.dev/policy-weight: "3"}`, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\nbasicAuth: {secretRef: {name: web-users}}"))
	if res := compute(t, engine.Options{}, docs...); len(res.ReplacedUnder) != 0 {
		t.Errorf("valid policy: replaced under %v", res.ReplacedUnder)
	}
	// A bad weight is kgateway's error, a targetRef without name the API server
	// refuses is not: such a policy does not exist on a cluster.
	docs = append(append([]string(nil), kgwReplacementTopo...),
		kgwPol("refused", 0, `{kgateway.dev/policy-weight: "x"}`, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}, {group: gateway.networking.k8s.io, kind: HTTPRoute}]\ntimeouts: {request: 5s}"))
	if res := compute(t, engine.Options{}, docs...); len(res.ReplacedUnder) != 0 {
		t.Errorf("policy the API server refuses: replaced under %v", res.ReplacedUnder)
	}
}

// A rule whose ExtensionRef filter names a TrafficPolicy with errors (a
// bad weight), or one its API server refuses, is replaced, as one naming
// a missing policy is.
func TestRouteReplacementByFilter(t *testing.T) {
	docs := append(append([]string(nil), kgwReplacementTopo...), `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: f, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: a
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: bad}}]
    backendRefs: [{name: web, port: 80}]
`, kgwPol("bad", 0, `{kgateway.dev/policy-weight: "high"}`, "timeouts: {request: 5s}"))
	res := compute(t, engine.Options{}, docs...)
	rule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "f", SectionName: "a"}
	if rr, ok := res.ReplacedRules[rule]; !ok || rr.Status != 500 || !strings.Contains(rr.Reason, "names TrafficPolicy default/bad, which has errors") {
		t.Errorf("replaced rules %+v, want rule a of f replaced", res.ReplacedRules)
	}
	// One its API server refuses (a targetRef without name) does not
	// exist on a cluster: the rule is replaced as for a missing one.
	docs[len(docs)-1] = kgwPol("bad", 0, "", "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]\ntimeouts: {request: 5s}")
	res = compute(t, engine.Options{}, docs...)
	if rr, ok := res.ReplacedRules[rule]; !ok || rr.Status != 500 || !strings.Contains(rr.Reason, "which its API server refuses") {
		t.Errorf("refused policy: replaced rules %+v, want rule a of f replaced", res.ReplacedRules)
	}
	// A valid one replaces nothing.
	docs[len(docs)-1] = kgwPol("bad", 0, "", "timeouts: {request: 5s}")
	if res := compute(t, engine.Options{}, docs...); len(res.ReplacedRules) != 0 {
		t.Errorf("valid policy: replaced rules %+v", res.ReplacedRules)
	}
}
