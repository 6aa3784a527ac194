package engine_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// crd is a CRD with no label or annotation, as implementations ship theirs.
// declaredCRD is a namespaced policy CRD of version v1 declared by its
// gateway.networking.k8s.io/policy label and attache.dev annotations, each
// a "key: value" line.
func declaredCRD(group, kind, plural, label string, annotations ...string) string {
	return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.%s
  labels: {gateway.networking.k8s.io/policy: %s}
  annotations:
    %s
spec:
  group: %s
  names: {kind: %s, plural: %s}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`, plural, group, label, strings.Join(annotations, "\n    "), group, kind, plural)
}

func crd(group, kind, plural string) string {
	return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s.%s}
spec:
  group: %s
  scope: Namespaced
  names: {kind: %s, plural: %s}
  versions: [{name: v1alpha1, served: true, storage: true}]
`, plural, group, group, kind, plural)
}

// pol is a policy of an implementation's kind, created at minute min.
func pol(apiVersion, kind, name string, min int, spec string) string {
	return fmt.Sprintf(`
apiVersion: %s
kind: %s
metadata: {name: %s, namespace: default, creationTimestamp: "2026-01-01T00:%02d:00Z"}
spec:
%s
`, apiVersion, kind, name, min, indent(spec, "  "))
}

func indent(s, pre string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

// egTopo: Gateway g1 with two listeners, HTTPRoute r1 (labelled) with two
// rules, Services s1 and s2.
const egTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: admin, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default, labels: {team: a}}
spec:
  parentRefs: [{name: g1, sectionName: http}]
  rules:
  - name: first
    backendRefs: [{name: s1, port: 80}]
  - name: second
    backendRefs: [{name: s2, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

const egV = "gateway.envoyproxy.io/v1alpha1"

var btpCRD = crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies")

// status returns a policy's summary condition of type typ as
// "Status/Reason".
func status(t *testing.T, res *engine.Result, name, typ string) string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		for _, c := range ps.Conditions {
			if c.Type == typ {
				return c.Status + "/" + c.Reason
			}
		}
		return "(no " + typ + ")"
	}
	t.Fatalf("no policy %s", name)
	return ""
}

// effective returns the effective specs of kind at target, one JSON
// document per context.
func effective(t *testing.T, res *engine.Result, kind string, target topology.Ref) []string {
	t.Helper()
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			b, _ := json.Marshal(c.Spec)
			out = append(out, string(b))
		}
	}
	return out
}

// condition returns a policy's condition of type typ.
func condition(t *testing.T, res *engine.Result, name, typ string) engine.Condition {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		for _, c := range ps.Conditions {
			if c.Type == typ {
				return c
			}
		}
	}
	t.Fatalf("no policy %s with a condition %s", name, typ)
	return engine.Condition{}
}

func rule(route, section string) topology.Ref {
	return topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: route, SectionName: section}
}

func want(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestEnvoyGatewayKindsAreRecognisedWithoutLabel(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 10s}}`))
	if len(res.Kinds) != 1 || res.Kinds[0].Implementation != "Envoy Gateway" {
		t.Fatalf("kinds = %v, want BackendTrafficPolicy from the Envoy Gateway profile", res.Kinds)
	}
	want(t, "Accepted", status(t, res, "gw", "Accepted"), "True/Accepted")
	// The effective targets are the route's rules.
	want(t, "rule first", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"timeout":{"http":{"requestTimeout":"10s"}}}`})
	want(t, "rule second", effective(t, res, "BackendTrafficPolicy", rule("r1", "second")), []string{`{"timeout":{"http":{"requestTimeout":"10s"}}}`})

	off := compute(t, engine.Options{DisableProfiles: true}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]`))
	if len(off.Kinds) != 0 || len(off.Policies) != 0 {
		t.Errorf("with profiles off, kinds = %v and %d policies, want none", off.Kinds, len(off.Policies))
	}
}

func TestEnvoyGatewaySameTargetOldestWins(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "newer", 5, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 5}`),
		pol(egV, "BackendTrafficPolicy", "older", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 1}`))
	want(t, "older Accepted", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "newer Accepted", status(t, res, "newer", "Accepted"), "False/Conflicted")
	want(t, "effective", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"retry":{"numRetries":1}}`})
}

func TestEnvoyGatewayMoreSpecificReplacesWhole(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
retry: {numRetries: 1}
timeout: {http: {requestTimeout: 10s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 3}`),
		pol(egV, "BackendTrafficPolicy", "rule", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}]
retry: {numRetries: 7}`))
	want(t, "rule first", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"retry":{"numRetries":3}}`})
	want(t, "rule second", effective(t, res, "BackendTrafficPolicy", rule("r1", "second")), []string{`{"retry":{"numRetries":7}}`})
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "False/Overridden")
	want(t, "route Programmed", status(t, res, "route", "Programmed"), "True/PartiallyProgrammed")
	want(t, "rule Accepted", status(t, res, "rule", "Accepted"), "True/Accepted")
}

func TestEnvoyGatewayMergeTypeMergesWithNearestAbove(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
retry: {numRetries: 1}
timeout: {http: {requestTimeout: 10s}}`),
		pol(egV, "BackendTrafficPolicy", "listener", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}]
timeout: {http: {requestTimeout: 20s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
mergeType: JSONMerge
retry: {numRetries: 3}`))
	// The route merges with the listener policy, which replaced the
	// Gateway's whole; mergeType is no field of the effective spec.
	want(t, "effective", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")),
		[]string{`{"retry":{"numRetries":3},"timeout":{"http":{"requestTimeout":"20s"}}}`})
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "False/Overridden")
	want(t, "listener Programmed", status(t, res, "listener", "Programmed"), "True/Programmed")

	bad := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "route", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
mergeType: Replace`))
	want(t, "unknown mergeType", status(t, bad, "route", "Accepted"), "False/Invalid")
}

func TestEnvoyGatewayTargetSelectors(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "sel", 0, `targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}}]
retry: {numRetries: 2}`),
		pol(egV, "BackendTrafficPolicy", "none", 0, `targetSelectors: [{kind: HTTPRoute, matchExpressions: [{key: team, operator: In, values: [b]}]}]
retry: {numRetries: 9}`))
	want(t, "sel Accepted", status(t, res, "sel", "Accepted"), "True/Accepted")
	want(t, "effective", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"retry":{"numRetries":2}}`})
	want(t, "none Accepted", status(t, res, "none", "Accepted"), "False/TargetNotFound")
}

func TestNGFClientSettingsMergeDisjointAtOneLevel(t *testing.T) {
	csp := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	const v = "gateway.nginx.org/v1alpha1"
	res := compute(t, engine.Options{}, csp, egTopo,
		pol(v, "ClientSettingsPolicy", "body", 0, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
body: {maxSize: 10m}`),
		pol(v, "ClientSettingsPolicy", "keepalive", 1, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
keepAlive: {requests: 100}`),
		pol(v, "ClientSettingsPolicy", "body2", 2, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
body: {maxSize: 1m}`),
		pol(v, "ClientSettingsPolicy", "route", 3, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
body: {timeout: 5s}`))
	want(t, "body", status(t, res, "body", "Accepted"), "True/Accepted")
	want(t, "keepalive", status(t, res, "keepalive", "Accepted"), "True/Accepted")
	want(t, "body2 (newer, overlapping)", status(t, res, "body2", "Accepted"), "False/Conflicted")
	// Field by field across levels: the route adds body.timeout.
	r1 := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r1"}
	want(t, "effective", effective(t, res, "ClientSettingsPolicy", r1),
		[]string{`{"body":{"maxSize":"10m","timeout":"5s"},"keepAlive":{"requests":100}}`})
}

func TestIstioPoliciesAreAdditive(t *testing.T) {
	ap := crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies")
	const v = "security.istio.io/v1"
	res := compute(t, engine.Options{}, ap, egTopo,
		pol(v, "AuthorizationPolicy", "deny", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
action: DENY
rules: [{to: [{operation: {paths: [/admin]}}]}]`),
		pol(v, "AuthorizationPolicy", "allow", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "workloads", 1, `selector: {matchLabels: {app: x}}
action: ALLOW`))
	want(t, "deny", status(t, res, "deny", "Accepted"), "True/Accepted")
	want(t, "allow", status(t, res, "allow", "Accepted"), "True/Accepted")
	want(t, "allow Programmed", status(t, res, "allow", "Programmed"), "True/Programmed")
	g1 := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}
	want(t, "effective", effective(t, res, "AuthorizationPolicy", g1),
		[]string{`{"default/allow":{"action":"ALLOW"},"default/deny":{"action":"DENY","rules":[{"to":[{"operation":{"paths":["/admin"]}}]}]}}`})
	// A workload-selector policy is not invalid: it targets what attache
	// does not model.
	if got := status(t, res, "workloads", "Accepted"); got == "False/Invalid" {
		t.Errorf("workload-selector policy is %s", got)
	}
}

func TestBackendTLSPolicyCoversPortsAndSectionWins(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	const v = "gateway.networking.k8s.io/v1"
	res := compute(t, engine.Options{}, btls, egTopo,
		pol(v, "BackendTLSPolicy", "whole", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
validation: {hostname: a.example}`),
		pol(v, "BackendTLSPolicy", "whole-newer", 1, `targetRefs: [{group: "", kind: Service, name: s1}]
validation: {hostname: c.example}`),
		pol(v, "BackendTLSPolicy", "port", 2, `targetRefs: [{group: core, kind: Service, name: s1, sectionName: grpc}]
validation: {hostname: b.example}`))
	port := func(p string) topology.Ref {
		return topology.Ref{Kind: "Service", Namespace: "default", Name: "s1", SectionName: p}
	}
	want(t, "port http", effective(t, res, "BackendTLSPolicy", port("http")), []string{`{"validation":{"hostname":"a.example"}}`})
	want(t, "port grpc", effective(t, res, "BackendTLSPolicy", port("grpc")), []string{`{"validation":{"hostname":"b.example"}}`})
	want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
	want(t, "whole Programmed", status(t, res, "whole", "Programmed"), "True/PartiallyProgrammed")
	want(t, "port (group core)", status(t, res, "port", "Accepted"), "True/Accepted")
	want(t, "whole-newer", status(t, res, "whole-newer", "Accepted"), "False/Conflicted")
	// The ancestor is the Gateway through which the Service is reached
	// (GEP-1897), not the Service.
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != "whole" {
			continue
		}
		var got []string
		for _, a := range ps.Ancestors {
			got = append(got, a.Ref.String()+"="+a.Conditions[0].Reason)
		}
		// r1's parentRef, as written, names listener http.
		want(t, "ancestors of whole", got, []string{"Gateway.gateway.networking.k8s.io default/g1#http=Accepted"})
	}
}

func TestBareKindNamesResolve(t *testing.T) {
	const c = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/hierarchy: "Namespace,Gateway,HTTPRoute"}
spec:
  group: example.com
  names: {kind: RetryPolicy, plural: retrypolicies}
`
	res := compute(t, engine.Options{}, c, egTopo, pol("example.com/v1", "RetryPolicy", "p", 0, `targetRefs: [{kind: Gateway, name: g1}]
retries: 3`))
	if len(res.Kinds) != 1 {
		t.Fatalf("kinds = %v (problems %v), want RetryPolicy", res.Kinds, res.Problems)
	}
	want(t, "hierarchy", fmt.Sprint(res.Kinds[0].Hierarchy), "[Namespace Gateway.gateway.networking.k8s.io HTTPRoute.gateway.networking.k8s.io]")
	want(t, "Accepted", status(t, res, "p", "Accepted"), "True/Accepted")
	r1 := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r1"}
	want(t, "effective", effective(t, res, "RetryPolicy", r1), []string{`{"retries":3}`})
}

func TestLabelOverridesProfileSettingBySetting(t *testing.T) {
	c := strings.Replace(btpCRD, "metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}", `metadata:
  name: backendtrafficpolicies.gateway.envoyproxy.io
  annotations: {attache.dev/same-level: gep}`, 1)
	res := compute(t, engine.Options{}, c, egTopo,
		pol(egV, "BackendTrafficPolicy", "newer", 5, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 5}`),
		pol(egV, "BackendTrafficPolicy", "older", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 1}`))
	k := res.Kinds[0]
	want(t, "sameLevel origin", string(k.Origins["sameLevel"]), "annotation")
	want(t, "mergeTypeField origin", string(k.Origins["mergeTypeField"]), "profile: Envoy Gateway")
	// GEP-713 at one level: the newer default wins.
	want(t, "effective", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"retry":{"numRetries":5}}`})
	want(t, "older", status(t, res, "older", "Programmed"), "False/Overridden")
}

func TestKuadrantMergeReplacesNamedRulesWhole(t *testing.T) {
	c := labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	const v = "kuadrant.io/v1"
	res := compute(t, engine.Options{}, c, egTopo,
		pol(v, "RateLimitPolicy", "gw", 0, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
defaults:
  strategy: merge
  limits:
    global: {rates: [{limit: 100, window: 1m}], when: [{predicate: "true"}]}
    other: {rates: [{limit: 5, window: 1s}]}`),
		pol(v, "RateLimitPolicy", "route", 1, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}
limits:
  global: {rates: [{limit: 10, window: 1m}]}`))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "route (rule section)", status(t, res, "route", "Accepted"), "True/Accepted")
	// The route's "global" rule replaces the Gateway's whole (its "when"
	// does not survive); "other" is kept.
	want(t, "rule second", effective(t, res, "RateLimitPolicy", rule("r1", "second")),
		[]string{`{"limits":{"global":{"rates":[{"limit":10,"window":"1m"}]},"other":{"rates":[{"limit":5,"window":"1s"}]}}}`})
	want(t, "rule first", effective(t, res, "RateLimitPolicy", rule("r1", "first")),
		[]string{`{"limits":{"global":{"rates":[{"limit":100,"window":"1m"}],"when":[{"predicate":"true"}]},"other":{"rates":[{"limit":5,"window":"1s"}]}}}`})
}

func TestEnvoyGatewayStrategicMergeMergesListsByKey(t *testing.T) {
	c := strings.Replace(btpCRD, "  versions: [{name: v1alpha1, served: true, storage: true}]", `  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              headers:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, properties: {name: {type: string}, value: {type: string}}}`, 1)
	for _, tc := range []struct{ mergeType, want string }{
		{"StrategicMerge", `{"headers":[{"name":"a","value":"1"},{"name":"b","value":"3"}]}`},
		{"JSONMerge", `{"headers":[{"name":"b","value":"3"}]}`},
	} {
		res := compute(t, engine.Options{}, c, egTopo,
			pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
headers: [{name: a, value: "1"}, {name: b, value: "2"}]`),
			pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
mergeType: `+tc.mergeType+`
headers: [{name: b, value: "3"}]`))
		want(t, tc.mergeType, effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{tc.want})
	}
}

func TestEnvoyGatewayTargetSelectorNamespaces(t *testing.T) {
	const other = `
apiVersion: v1
kind: Namespace
metadata: {name: team-b, labels: {tier: web}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-c, labels: {tier: db}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: team-b, labels: {team: a}}
spec:
  parentRefs: [{name: g1, namespace: default}]
  rules: [{name: only, backendRefs: [{name: s1, namespace: default, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rc, namespace: team-c, labels: {team: a}}
spec:
  parentRefs: [{name: g1, namespace: default}]
  rules: [{name: only, backendRefs: [{name: s1, namespace: default, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-default, namespace: team-b}
spec:
  from: [{group: gateway.envoyproxy.io, kind: BackendTrafficPolicy, namespace: default}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute}]
`
	// The Gateway admits routes from every namespace.
	topo := strings.Replace(egTopo, "listeners: [{name: http, protocol: HTTP, port: 80}, {name: admin, protocol: HTTP, port: 8080}]",
		"listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}, {name: admin, protocol: HTTP, port: 8080}]", 1)
	for _, tc := range []struct {
		name, namespaces string
		want             []string // routes (namespace/name) the policy reaches
	}{
		{"same", ``, []string{"default/r1"}},
		// team-c has no ReferenceGrant: skipped, as Envoy Gateway does.
		{"all", `, namespaces: {from: All}`, []string{"default/r1", "team-b/rb"}},
		{"selector", `, namespaces: {from: Selector, selector: {matchLabels: {tier: web}}}`, []string{"team-b/rb"}},
	} {
		res := compute(t, engine.Options{}, btpCRD, topo, other,
			pol(egV, "BackendTrafficPolicy", "sel", 0, `targetSelectors: [{kind: HTTPRoute, matchLabels: {team: a}`+tc.namespaces+`}]
retry: {numRetries: 2}`))
		var got []string
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind == "BackendTrafficPolicy" {
				got = append(got, e.Target.Namespace+"/"+e.Target.Name)
			}
		}
		got = dedupeSorted(got)
		want(t, tc.name, got, tc.want)
		want(t, tc.name+" Accepted", status(t, res, "sel", "Accepted"), "True/Accepted")
	}
}

func dedupeSorted(l []string) []string {
	var out []string
	for _, s := range l {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// egListenerSetTopo: Gateway g1 (listener http) admitting ListenerSets of
// its namespace, and ListenerSet ls1 on it with listeners a and b.
const egListenerSetTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls1, namespace: default}
spec:
  parentRef: {name: g1}
  listeners: [{name: a, protocol: HTTP, port: 8081}, {name: b, protocol: HTTP, port: 8082}]
`

// Envoy Gateway applies a Gateway-wide ClientTrafficPolicy to every listener
// of the Gateway, its ListenerSets' included, unless a ListenerSet-wide or a
// listener policy claims the listener first (ProcessClientTrafficPolicies:
// listener, then ListenerSet, then Gateway policies; a Gateway-wide policy so
// displaced gets Overridden=True naming the ListenerSet's listeners).
func TestEnvoyGatewayClientTrafficPolicyCoversListenerSetListeners(t *testing.T) {
	ctpCRD := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	gwWide := pol(egV, "ClientTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
tcpKeepalive: {probes: 3}`)
	ls := func(l string) topology.Ref {
		return topology.Ref{Group: topology.GatewayGroup, Kind: "ListenerSet", Namespace: "default", Name: "ls1", SectionName: l}
	}
	http := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1", SectionName: "http"}

	alone := compute(t, engine.Options{}, ctpCRD, egListenerSetTopo, gwWide)
	want(t, "alone: ListenerSet listener a", effective(t, alone, "ClientTrafficPolicy", ls("a")), []string{`{"tcpKeepalive":{"probes":3}}`})
	want(t, "alone: gw Programmed", status(t, alone, "gw", "Programmed"), "True/Programmed")

	res := compute(t, engine.Options{}, ctpCRD, egListenerSetTopo, gwWide,
		pol(egV, "ClientTrafficPolicy", "ls-wide", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls1}]
tcpKeepalive: {probes: 5}`),
		pol(egV, "ClientTrafficPolicy", "ls-b", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls1, sectionName: b}]
timeout: {http: {idleTimeout: 5s}}`))
	want(t, "Gateway listener http", effective(t, res, "ClientTrafficPolicy", http), []string{`{"tcpKeepalive":{"probes":3}}`})
	want(t, "ListenerSet listener a", effective(t, res, "ClientTrafficPolicy", ls("a")), []string{`{"tcpKeepalive":{"probes":5}}`})
	// The listener policy replaces the ListenerSet's whole, as it does a
	// Gateway's.
	want(t, "ListenerSet listener b", effective(t, res, "ClientTrafficPolicy", ls("b")), []string{`{"timeout":{"http":{"idleTimeout":"5s"}}}`})
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
	want(t, "ls-wide Programmed", status(t, res, "ls-wide", "Programmed"), "True/PartiallyProgrammed")
	want(t, "ls-b Accepted", status(t, res, "ls-b", "Accepted"), "True/Accepted")
}

// A rule policy with mergeType replaces the route's policy and merges with
// the Gateway's (Envoy Gateway merges route-level policies with their
// parent's only).
func TestEnvoyGatewayRuleMergeTypeSkipsTheRoutePolicy(t *testing.T) {
	res := compute(t, engine.Options{}, btpCRD, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 10s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
retry: {numRetries: 3}`),
		pol(egV, "BackendTrafficPolicy", "rule", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
mergeType: JSONMerge
circuitBreaker: {maxConnections: 5}`))
	want(t, "rule first", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")),
		[]string{`{"circuitBreaker":{"maxConnections":5},"timeout":{"http":{"requestTimeout":"10s"}}}`})
	want(t, "rule second", effective(t, res, "BackendTrafficPolicy", rule("r1", "second")), []string{`{"retry":{"numRetries":3}}`})
	want(t, "route Programmed", status(t, res, "route", "Programmed"), "True/PartiallyProgrammed")
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
}

// Oldest wins at a target even before any route is below it.
func TestEnvoyGatewaySameTargetConflictWithoutRoutes(t *testing.T) {
	const gw = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: lonely, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	res := compute(t, engine.Options{}, btpCRD, gw,
		pol(egV, "BackendTrafficPolicy", "older", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: lonely}]
retry: {numRetries: 1}`),
		pol(egV, "BackendTrafficPolicy", "newer", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: lonely}]
retry: {numRetries: 2}`))
	want(t, "older", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "newer", status(t, res, "newer", "Accepted"), "False/Conflicted")
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == "newer" && !strings.Contains(ps.Conditions[0].Message, "BackendTrafficPolicy default/older") {
			t.Errorf("message does not name the winner: %s", ps.Conditions[0].Message)
		}
	}
}

// An update that adds an older policy at a target without effective
// targets below it makes the policy already there Conflicted: the
// incremental engine re-derives it, as a full computation would.
func TestIncrementalSameTargetConflictWithoutRoutes(t *testing.T) {
	const gw = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: lonely, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	newer := pol(egV, "BackendTrafficPolicy", "newer", 5, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: lonely}]
retry: {numRetries: 2}`)
	older := pol(egV, "BackendTrafficPolicy", "older", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: lonely}]
retry: {numRetries: 1}`)
	in := engine.NewIncremental(engine.Options{})
	before := decodeDocs(t, btpCRD, gw, newer)
	want(t, "newer alone", status(t, in.Compute(before), "newer", "Accepted"), "True/Accepted")
	res := in.Compute(append(before, decodeDocs(t, older)...))
	if in.LastChange().Full {
		t.Fatalf("adding a policy recomputed in full: %s", in.LastChange().Reason)
	}
	want(t, "newer after the older came", status(t, res, "newer", "Accepted"), "False/Conflicted")
}

// egController is Envoy Gateway's controllerName.
const egController = "gateway.envoyproxy.io/gatewayclass-controller"

// classDoc is GatewayClass name of controller ctl as a YAML document
// ("---" first), its parameters EnvoyProxy params ("ns/name") unless "".
func classDoc(name, ctl, params string) string {
	ref := ""
	if ns, n, ok := strings.Cut(params, "/"); ok {
		ref = fmt.Sprintf(", parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: %s, namespace: %s}", n, ns)
	}
	return fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: %s}\nspec: {controllerName: %s%s}\n", name, ctl, ref)
}

// envoyProxyDoc is EnvoyProxy ns/name with spec (YAML flow) as a document.
func envoyProxyDoc(ns, name, spec string) string {
	return fmt.Sprintf("---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyProxy\nmetadata: {name: %s, namespace: %s}\nspec: %s\n", name, ns, spec)
}

// gatewayDoc is Gateway default/name of class with listeners (YAML flow
// list), naming EnvoyProxy params as its own unless params is "".
func gatewayDoc(name, class, listeners, params string) string {
	infra := ""
	if params != "" {
		infra = ", infrastructure: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: " + params + "}}"
	}
	return fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: default}\nspec: {gatewayClassName: %s, listeners: %s%s}\n", name, class, listeners, infra)
}
