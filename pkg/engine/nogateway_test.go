package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// A policy of a kind whose ancestors are Gateways (Envoy Gateway's,
// BackendTLSPolicy) on a target no Gateway reaches is taken by no
// implementation (Envoy Gateway v1.9.1 processBackendTrafficPolicyForRoute
// skips a route it does not translate, GetManagedParentReferences drops
// parentRefs without a Gateway it handles; NGF and EG write no
// BackendTLSPolicy status for a Service no route uses): its entry names
// the target and says it is not programmed, and why. A parentRef naming
// a Gateway that is not among the objects is no ancestor; one that could
// not be read still is.
func TestAncestorGatewayThroughNoGateway(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orphan, namespace: default}
spec:
  parentRefs: [{name: nowhere}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: half, namespace: default}
spec:
  parentRefs: [{name: g1, sectionName: http}, {name: nowhere}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bare, namespace: default}
spec:
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: unused, namespace: default}
spec: {ports: [{name: https, port: 443}]}
`
	btp := func(name, route string) string {
		return pol(egV, "BackendTrafficPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: `+route+`}]
timeout: {http: {requestTimeout: 5s}}`)
	}
	btls := func(name, svc string) string {
		return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0, `targetRefs: [{group: "", kind: Service, name: `+svc+`}]
validation: {wellKnownCACertificates: System, hostname: x.example}`)
	}
	docs := []string{btpCRD, crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"), egTopo, topo,
		btp("on-orphan", "orphan"), btp("on-half", "half"), btp("on-bare", "bare"), btp("on-r1", "r1"),
		btls("on-unused", "unused"), btls("on-s1", "s1"),
		// NGINX Gateway Fabric calls every policy it accepts programmed,
		// but writes nothing for one on a Service no route uses.
		labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct"),
		pol("gateway.nginx.org/v1alpha1", "UpstreamSettingsPolicy", "usp-unused", 1, "targetRefs: [{group: \"\", kind: Service, name: unused}]\nzoneSize: 512k")}
	res := compute(t, engine.Options{}, docs...)
	for _, tc := range []struct {
		name, ancestors, programmed, why string
	}{
		{"on-orphan", "HTTPRoute.gateway.networking.k8s.io default/orphan=Accepted", "False/Unknown", "HTTPRoute default/orphan names Gateway default/nowhere, not among the objects"},
		{"on-bare", "HTTPRoute.gateway.networking.k8s.io default/bare=Accepted", "False/Unknown", "HTTPRoute default/bare names no parent Gateway"},
		{"on-unused", "Service default/unused=Accepted", "False/Unknown", "no route attached to a Gateway sends to Service default/unused"},
		{"usp-unused", "", "False/Unknown", "no route attached to a Gateway sends to Service default/unused"},
		// The Gateway that exists is the ancestor; the other is none.
		{"on-half", "Gateway.gateway.networking.k8s.io default/g1#http=Accepted", "True/Programmed", ""},
		{"on-r1", "Gateway.gateway.networking.k8s.io default/g1#http=Accepted", "True/Programmed", ""},
		{"on-s1", "Gateway.gateway.networking.k8s.io default/g1#http=Accepted", "True/Programmed", ""},
	} {
		if got := strings.Join(ancestorsOf(t, res, tc.name), ","); got != tc.ancestors {
			t.Errorf("%s: ancestors %s, want %s", tc.name, got, tc.ancestors)
		}
		if got := status(t, res, tc.name, engine.CondProgrammed); got != tc.programmed {
			t.Errorf("%s: Programmed %s, want %s", tc.name, got, tc.programmed)
		}
		c := condition(t, res, tc.name, engine.CondProgrammed)
		if !strings.Contains(c.Message, tc.why) {
			t.Errorf("%s: Programmed message %q does not say %q", tc.name, c.Message, tc.why)
		}
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == tc.name && tc.why != "" && len(ps.Ancestors) > 0 && ps.Ancestors[0].Conditions[1] != c {
				t.Errorf("%s: its entry says %+v, the summary %+v", tc.name, ps.Ancestors[0].Conditions[1], c)
			}
		}
	}
	// Gateways that could not be read (RBAC) may exist: still ancestors.
	unread := compute(t, engine.Options{Unread: func(r topology.Ref) bool { return r.GroupKind() == topology.KindGateway }}, docs...)
	if got := strings.Join(ancestorsOf(t, unread, "on-orphan"), ","); got != "Gateway.gateway.networking.k8s.io default/nowhere=Accepted" {
		t.Errorf("Gateways unread: on-orphan's ancestors %s", got)
	}
	if got := status(t, unread, "on-orphan", engine.CondProgrammed); got != "True/Programmed" {
		t.Errorf("Gateways unread: on-orphan Programmed %s", got)
	}
}
