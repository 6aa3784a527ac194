package routing_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

// controllersTopology: an NGINX Gateway Fabric Gateway and another
// implementation's, one route on both, a Direct NGF policy on the route
// and one on its Service.
const controllersTopology = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: observabilitypolicies.gateway.nginx.org}
spec:
  group: gateway.nginx.org
  scope: Namespaced
  names: {kind: ObservabilityPolicy, plural: observabilitypolicies}
  versions: [{name: v1alpha2, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: upstreamsettingspolicies.gateway.nginx.org}
spec:
  group: gateway.nginx.org
  scope: Namespaced
  names: {kind: UpstreamSettingsPolicy, plural: upstreamsettingspolicies}
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
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
metadata: {name: ngf, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: othergw, namespace: default}
spec:
  gatewayClassName: other
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: ngf}, {name: othergw}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: obs, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  tracing: {strategy: ratio}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: UpstreamSettingsPolicy
metadata: {name: usp, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  zoneSize: 512k
`

// TestDirectPoliciesStayOnTheirImplementationsGateways: a Direct kind's
// context is its target alone, yet a kind naming the controllers it
// serves (NGF's) does not act through another implementation's Gateway,
// so a request through that Gateway has none of its policies, as the
// engine has no context of an Inherited kind through it.
func TestDirectPoliciesStayOnTheirImplementationsGateways(t *testing.T) {
	ix, pols := fixture(t, controllersTopology)
	for _, tc := range []struct {
		gw   string
		want string
	}{
		{"ngf", "ObservabilityPolicy,UpstreamSettingsPolicy"},
		{"othergw", ""},
	} {
		gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: tc.gw}
		tr := trace(t, ix, pols, "http://any.example.com/", &gw)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: %d outcomes", tc.gw, len(tr.Outcomes))
		}
		var kinds []string
		for _, ep := range tr.Outcomes[0].EffectivePolicies {
			kinds = append(kinds, ep.Kind.GroupKind.Kind)
		}
		if got := strings.Join(kinds, ","); got != tc.want {
			t.Errorf("through %s: policies %q, want %q", tc.gw, got, tc.want)
		}
	}
}

// notAppliedTopology: route r on two NGINX Gateway Fabric Gateways, g1
// running with an NginxProxy without telemetry, g2 with one; an
// ObservabilityPolicy with tracing on r, and an UpstreamSettingsPolicy
// on its Service.
const notAppliedTopology = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: observabilitypolicies.gateway.nginx.org}
spec:
  group: gateway.nginx.org
  scope: Namespaced
  names: {kind: ObservabilityPolicy, plural: observabilitypolicies}
  versions: [{name: v1alpha2, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: plain, namespace: default}
spec: {logging: {errorLevel: info}}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: traced, namespace: default}
spec: {telemetry: {exporter: {endpoint: "otel:4317"}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: nginx
  infrastructure: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: plain}}
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: default}
spec:
  gatewayClassName: nginx
  infrastructure: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: traced}}
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: g1}, {name: g2}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: obs, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  tracing: {strategy: ratio, ratio: 5}
`

// A policy its implementation leaves out through one Gateway (NGINX
// Gateway Fabric: the NginxProxy of g1 enables no telemetry, so the
// ObservabilityPolicy is invalid for g1 only) is in the route's
// effective policy through the other Gateway only; through g1, a note
// says why it is not.
func TestPolicyNotAppliedThroughOneGateway(t *testing.T) {
	ix, pols := build(t, notAppliedTopology, true)
	for _, tc := range []struct {
		gw, want string
		note     bool
	}{
		{"g1", "", true},
		{"g2", `ObservabilityPolicy {"tracing":{"ratio":5,"strategy":"ratio"}}`, false},
	} {
		gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: tc.gw}
		tr := trace(t, ix, pols, "http://any.example.com/", &gw)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: %d outcomes", tc.gw, len(tr.Outcomes))
		}
		o := tr.Outcomes[0]
		var got []string
		for _, ep := range o.EffectivePolicies {
			spec, _ := json.Marshal(ep.Spec)
			got = append(got, ep.Kind.GroupKind.Kind+" "+string(spec))
		}
		if g := strings.Join(got, "; "); g != tc.want {
			t.Errorf("through %s: policies %q, want %q", tc.gw, g, tc.want)
		}
		noted := slices.ContainsFunc(o.Notes, func(n string) bool {
			return strings.Contains(n, "ObservabilityPolicy default/obs is not applied through Gateway default/g1: NGINX Gateway Fabric refuses it there")
		})
		if noted != tc.note {
			t.Errorf("through %s: notes %q, want the note %v", tc.gw, o.Notes, tc.note)
		}
	}
}

// A policy of an Inherited kind its implementation leaves out through one
// Gateway (NGINX Gateway Fabric: a WAFPolicy on route r, g1's NginxProxy
// not enabling WAF) is in no context through g1, so that g1's requests
// find no WAFPolicy; a note still says why, from the policy's status.
// Through g2 it applies, with no note.
func TestInheritedPolicyNotAppliedThroughOneGateway(t *testing.T) {
	docs := strings.Replace(notAppliedTopology, "spec: {telemetry: {exporter: {endpoint: \"otel:4317\"}}}", "spec: {waf: {enable: true}}", 1)
	docs = docs[:strings.Index(docs, "---\napiVersion: gateway.nginx.org/v1alpha2\nkind: ObservabilityPolicy")] + `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: wafpolicies.gateway.nginx.org}
spec:
  group: gateway.nginx.org
  scope: Namespaced
  names: {kind: WAFPolicy, plural: wafpolicies}
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.nginx.org/v1alpha1
kind: WAFPolicy
metadata: {name: waf, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  type: HTTP
  policySource: {httpSource: {url: "https://b.example/p.tgz"}}
`
	ix, pols := build(t, docs, true)
	for _, tc := range []struct {
		gw    string
		kinds string
		note  bool
	}{
		{"g1", "", true},
		{"g2", "WAFPolicy", false},
	} {
		gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: tc.gw}
		tr := trace(t, ix, pols, "http://any.example.com/", &gw)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: %d outcomes", tc.gw, len(tr.Outcomes))
		}
		o := tr.Outcomes[0]
		var kinds []string
		for _, ep := range o.EffectivePolicies {
			kinds = append(kinds, ep.Kind.GroupKind.Kind)
		}
		if g := strings.Join(kinds, ","); g != tc.kinds {
			t.Errorf("through %s: policies %q, want %q", tc.gw, g, tc.kinds)
		}
		noted := slices.ContainsFunc(o.Notes, func(n string) bool {
			return strings.Contains(n, "WAFPolicy default/waf is not applied through Gateway default/g1: NGINX Gateway Fabric refuses it there")
		})
		if noted != tc.note {
			t.Errorf("through %s: notes %q, want the note %v", tc.gw, o.Notes, tc.note)
		}
	}
}
