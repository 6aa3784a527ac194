package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// tcpTopo: Gateways g1 and g2, each with listeners http (HTTP) and tcp
// (TCP); TCPRoutes t1..t3 on g1's tcp listener and t4 on g2's; HTTPRoute
// h1 on g1's http listener; Secret users (basic auth).
func tcpTopo() string {
	var b strings.Builder
	for _, g := range []string{"g1", "g2"} {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: tcp, protocol: TCP, port: 9000}]
`, g)
	}
	for i, g := range []string{"g1", "g1", "g1", "g2"} {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {name: t%d, namespace: default}\nspec: {parentRefs: [{name: %s, sectionName: tcp}], rules: [{backendRefs: [{name: s, port: 9000}]}]}\n", i+1, g)
	}
	b.WriteString("---\napiVersion: v1\nkind: Secret\nmetadata: {name: users, namespace: default}\ndata: {.htpasswd: eA==}\n")
	b.WriteString("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: h1, namespace: default}\nspec: {parentRefs: [{name: g1, sectionName: http}], rules: [{}]}\n")
	return b.String()
}

func spOn(name, kind, target string, min int, body string) string {
	return pol(egV, "SecurityPolicy", name, min, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\n%s", kind, target, body))
}

const cidrAuthz = "authorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}]}"

// Envoy Gateway's SecurityPolicy on a TCPRoute supports client-CIDR
// authorization only: a policy setting more, itself or in the spec its
// mergeType merges it into, is Invalid there and keeps its place; the
// Gateway policy above is then overridden for that route. The same fields
// are fine on an HTTPRoute, and on TCP listeners.
func TestUnsupportedFields(t *testing.T) {
	docs := []string{crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"), tcpTopo(),
		spOn("gw1", "Gateway", "g1", 0, "basicAuth: {users: {name: users}}\n"+cidrAuthz),
		spOn("gw2", "Gateway", "g2", 0, cidrAuthz),
		spOn("jwt-tcp", "TCPRoute", "t1", 1, "jwt: {providers: [{name: p, remoteJWKS: {uri: https://idp/jwks}}]}"),
		spOn("jwt-http", "HTTPRoute", "h1", 1, "jwt: {providers: [{name: p, remoteJWKS: {uri: https://idp/jwks}}]}"),
		spOn("cel-tcp", "TCPRoute", "t2", 1, "authorization: {rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}, {action: Deny, cel: {expression: 'true'}}]}"),
		spOn("merge-bad", "TCPRoute", "t3", 1, "mergeType: StrategicMerge\n"+cidrAuthz),
		spOn("merge-ok", "TCPRoute", "t4", 1, "mergeType: StrategicMerge\n"+cidrAuthz),
	}
	res := compute(t, engine.Options{}, docs...)
	for name, wantMsg := range map[string]string{
		"jwt-tcp":   "spec.jwt: not supported on TCPRoute targets",
		"cel-tcp":   "spec.authorization.rules[1].cel: not supported on TCPRoute targets",
		"merge-bad": "merged (StrategicMerge) with the policies above it, it would set spec.basicAuth at TCPRoute default/t3#rule-1: not supported on TCPRoute targets",
		"jwt-http":  "",
		"merge-ok":  "",
		"gw1":       "",
	} {
		ps := policyStatusOf(t, res, name)
		got := ps.Conditions[0]
		if wantMsg == "" {
			if got.Status != "True" {
				t.Errorf("%s: %s/%s %q, want accepted", name, got.Status, got.Reason, got.Message)
			}
			continue
		}
		if got.Status != "False" || got.Reason != "Invalid" || got.Message != wantMsg {
			t.Errorf("%s: %s/%s %q, want False/Invalid %q", name, got.Status, got.Reason, got.Message, wantMsg)
		}
	}
	rule := func(route string) topology.Ref {
		return topology.Ref{Group: "gateway.networking.k8s.io", Kind: "TCPRoute", Namespace: "default", Name: route, SectionName: "rule-1"}
	}
	// In place: the route's own spec, nothing of the Gateway's.
	want(t, "effective at t1", effective(t, res, "SecurityPolicy", rule("t1")), []string{`{"jwt":{"providers":[{"name":"p","remoteJWKS":{"uri":"https://idp/jwks"}}]}}`})
	want(t, "effective at t3", effective(t, res, "SecurityPolicy", rule("t3")),
		[]string{`{"authorization":{"defaultAction":"Deny","rules":[{"action":"Allow","principal":{"clientCIDRs":["10.0.0.0/8"]}}]}}`})
	// A merge that keeps to authorization merges.
	want(t, "effective at t4", len(effective(t, res, "SecurityPolicy", rule("t4"))), 1)
	if got := policyStatusOf(t, res, "gw1").Conditions[1]; got.Reason == "Programmed" {
		t.Errorf("gw1: Programmed %s %q, want it overridden at t1..t3", got.Reason, got.Message)
	}
	// The input problem names the field, once per policy.
	n := 0
	for _, p := range res.Problems {
		if p.Object.Name == "jwt-tcp" {
			n++
			want(t, "jwt-tcp problem", p.Field+": "+p.Message, "spec.jwt: not supported on TCPRoute targets (TCPRoute default/t1)")
		}
		if p.Object.Name == "jwt-http" || p.Object.Name == "merge-ok" {
			t.Errorf("problem for %s: %v", p.Object.Name, p)
		}
	}
	want(t, "jwt-tcp problems", n, 1)
}

// The Gateway policy gaining basicAuth makes the merging route policy
// Invalid, incrementally as Compute says; losing it makes it valid again.
func TestUnsupportedFieldsIncremental(t *testing.T) {
	base := decodeDocs(t, crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"), tcpTopo(),
		spOn("merge", "TCPRoute", "t1", 1, "mergeType: StrategicMerge\n"+cidrAuthz))
	gw := func(body string) []engine.Object {
		return append(append([]engine.Object(nil), base...), decodeDocs(t, spOn("gw", "Gateway", "g1", 0, body))...)
	}
	in := engine.NewIncremental(engine.Options{})
	for i, s := range []struct {
		what     string
		objs     []engine.Object
		accepted string
	}{
		{"authorization only", gw(cidrAuthz), "True/Accepted"},
		{"basicAuth added", gw("basicAuth: {users: {name: users}}\n" + cidrAuthz), "False/Invalid"},
		{"basicAuth removed", gw(cidrAuthz), "True/Accepted"},
	} {
		res := in.Compute(s.objs)
		if ch := in.LastChange(); i > 0 && ch.Full {
			t.Errorf("%s: recomputed everything (%s)", s.what, ch.Reason)
		}
		full := engine.Compute(s.objs, engine.Options{})
		c := policyStatusOf(t, res, "merge").Conditions[0]
		want(t, s.what+": merge", c.Status+"/"+c.Reason, s.accepted)
		want(t, s.what+": merge as Compute", policyStatusOf(t, res, "merge").Conditions, policyStatusOf(t, full, "merge").Conditions)
		want(t, s.what+": gw as Compute", policyStatusOf(t, res, "gw").Conditions, policyStatusOf(t, full, "gw").Conditions)
	}
}

// The setting from a CRD annotation, on a kind of one's own.
func TestUnsupportedFieldsAnnotation(t *testing.T) {
	res := compute(t, engine.Options{}, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tcppolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations:
    attache.dev/target-kinds: TCPRoute, HTTPRoute
    attache.dev/unsupported-fields: "TCPRoute=retries,headers[].name"
spec:
  group: example.com
  names: {kind: TCPPolicy, plural: tcppolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`, tcpTopo(),
		pol("example.com/v1", "TCPPolicy", "bad", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: TCPRoute, name: t1}]\nheaders: [{value: x}, {name: y}]"),
		pol("example.com/v1", "TCPPolicy", "ok", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: h1}]\nretries: 3"))
	c := policyStatusOf(t, res, "bad").Conditions[0]
	want(t, "bad", c.Reason+" "+c.Message, "Invalid spec.headers[1].name: not supported on TCPRoute targets")
	want(t, "ok", policyStatusOf(t, res, "ok").Conditions[0].Status, "True")
}

func policyStatusOf(t *testing.T, res *engine.Result, name string) *engine.PolicyStatus {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == name {
			return ps
		}
	}
	t.Fatalf("no policy %s", name)
	return nil
}
