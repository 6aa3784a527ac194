package engine_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// tcpTopo: Gateways g1 and g2, each with listeners http (HTTP) and tcp
// (TCP); TCPRoutes t1..t3 and t5 on g1's tcp listener, t4 on g2's, and
// both on the tcp listeners of g1 and g2; Gateway g3 with TCP listeners
// tcp and tcp2 and TCPRoute two on both; HTTPRoute h1 on g1's http
// listener; Secret users (basic auth).
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
	for name, parents := range map[string]string{"t1": "g1", "t2": "g1", "t3": "g1", "t4": "g2", "t5": "g1", "both": "g1, g2"} {
		var refs []string
		for _, g := range strings.Split(parents, ", ") {
			refs = append(refs, "{name: "+g+", sectionName: tcp}")
		}
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {name: %s, namespace: default}\nspec: {parentRefs: [%s], rules: [{backendRefs: [{name: s, port: 9000}]}]}\n", name, strings.Join(refs, ", "))
	}
	// g3: two TCP listeners; route two on both.
	b.WriteString("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g3, namespace: default}\nspec: {gatewayClassName: eg, listeners: [{name: tcp, protocol: TCP, port: 9000}, {name: tcp2, protocol: TCP, port: 9001}]}\n")
	b.WriteString("---\napiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {name: two, namespace: default}\nspec: {parentRefs: [{name: g3, sectionName: tcp}, {name: g3, sectionName: tcp2}], rules: [{backendRefs: [{name: s, port: 9000}]}]}\n")
	b.WriteString("---\napiVersion: v1\nkind: Secret\nmetadata: {name: users, namespace: default}\ndata: {.htpasswd: eA==}\n")
	b.WriteString("---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: h1, namespace: default}\nspec: {parentRefs: [{name: g1, sectionName: http}], rules: [{}]}\n")
	return b.String()
}

func spOn(name, kind, target string, min int, body string) string {
	return pol(egV, "SecurityPolicy", name, min, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\n%s", kind, target, body))
}

// cidr is an authorization allowing one network.
func cidr(net string) string {
	return "authorization: {rules: [{action: Allow, principal: {clientCIDRs: [" + net + "]}}]}"
}

// Envoy Gateway's SecurityPolicy on a TCPRoute supports client-CIDR
// authorization only. A policy setting more is Invalid there and not in
// place: Envoy Gateway rejects it before it claims the route, so the
// Gateway's policy applies to the route. With a mergeType, the merged spec
// counts, per Gateway it would merge with. The same fields are fine on an
// HTTPRoute.
func TestUnsupportedFields(t *testing.T) {
	docs := []string{crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"), tcpTopo(),
		spOn("gw1", "Gateway", "g1", 0, "basicAuth: {users: {name: users}}\n"+cidr("10.1.0.0/16")),
		spOn("gw2", "Gateway", "g2", 0, "authorization: {defaultAction: Allow}"),
		spOn("jwt-tcp", "TCPRoute", "t1", 1, "jwt: {providers: [{name: p, remoteJWKS: {uri: https://idp/jwks}}]}"),
		spOn("jwt-http", "HTTPRoute", "h1", 1, "jwt: {providers: [{name: p, remoteJWKS: {uri: https://idp/jwks}}]}"),
		spOn("cel-tcp", "TCPRoute", "t2", 1, "authorization: {rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}, {action: Deny, cel: {expression: 'true'}}]}"),
		spOn("merge-bad", "TCPRoute", "t3", 1, "mergeType: StrategicMerge\n"+cidr("10.3.0.0/16")),
		spOn("merge-ok", "TCPRoute", "t4", 1, "mergeType: StrategicMerge\n"+cidr("10.4.0.0/16")),
		spOn("merge-only", "TCPRoute", "t5", 1, "mergeType: JSONMerge"),
		spOn("merge-both", "TCPRoute", "both", 1, "mergeType: JSONMerge\n"+cidr("10.5.0.0/16")),
		pol(egV, "SecurityPolicy", "l3", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g3, sectionName: tcp}]\nbasicAuth: {users: {name: users}}"),
		spOn("merge-two", "TCPRoute", "two", 1, "mergeType: JSONMerge\n"+cidr("10.6.0.0/16")),
	}
	res := compute(t, engine.Options{}, docs...)
	for name, wantMsg := range map[string]string{
		"jwt-tcp":    "spec.targetRefs[0]: spec.jwt: not supported on TCPRoute targets",
		"cel-tcp":    "spec.targetRefs[0]: spec.authorization.rules[1].cel: not supported on TCPRoute targets",
		"merge-bad":  "merged (StrategicMerge) with the policies above it, it would set spec.basicAuth at TCPRoute default/t3#rule-1: not supported on TCPRoute targets",
		"merge-only": "merged (JSONMerge) with the policies above it, it would set spec.basicAuth at TCPRoute default/t5#rule-1: not supported on TCPRoute targets",
		"jwt-http":   "",
		"merge-ok":   "",
		"merge-both": "",
		"gw1":        "",
	} {
		got := policyStatusOf(t, res, name).Conditions[0]
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
	const gw1Spec = `{"authorization":{"rules":[{"action":"Allow","principal":{"clientCIDRs":["10.1.0.0/16"]}}]},"basicAuth":{"users":{"name":"users"}}}`
	// Not in place: the Gateway's policy applies.
	for _, r := range []string{"t1", "t2", "t3", "t5"} {
		want(t, "effective at "+r, effective(t, res, "SecurityPolicy", rule(r)), []string{gw1Spec})
	}
	// A merge that keeps to authorization merges.
	merged := `{"authorization":{"defaultAction":"Allow","rules":[{"action":"Allow","principal":{"clientCIDRs":["10.4.0.0/16"]}}]}}`
	want(t, "effective at t4", effective(t, res, "SecurityPolicy", rule("t4")), []string{merged})
	// Through g1 the merge would bring basic auth: Invalid there, g1's
	// policy applies; through g2 it merges.
	gotBoth := effective(t, res, "SecurityPolicy", rule("both"))
	wantBoth := []string{gw1Spec, strings.Replace(merged, "10.4.", "10.5.", 1)}
	sort.Strings(gotBoth)
	sort.Strings(wantBoth)
	want(t, "effective at both", gotBoth, wantBoth)
	want(t, "merge-both ancestors", acceptedByAncestor(t, res, "merge-both"), map[string]string{"Gateway default/g1#tcp": "False/Invalid", "Gateway default/g2#tcp": "True/Accepted"})
	if msg := policyStatusOf(t, res, "merge-both").Conditions[0].Message; !strings.Contains(msg, "Invalid through Gateway default/g1#tcp: merged (JSONMerge)") {
		t.Errorf("merge-both summary %q does not say where it is Invalid", msg)
	}
	// Per listener: only tcp's listener policy brings basic auth.
	want(t, "merge-two ancestors", acceptedByAncestor(t, res, "merge-two"), map[string]string{"Gateway default/g3#tcp": "False/Invalid", "Gateway default/g3#tcp2": "True/Accepted"})
	// Dropped where it would merge: no part in that context.
	for _, e := range res.Effective {
		if e.Target != rule("t3") {
			continue
		}
		for _, c := range e.Contexts {
			for _, s := range c.Stack {
				if s.Policy.Name == "merge-bad" && (s.Outcome != engine.OutcomeNone || len(s.Unsupported) != 1 || s.Unsupported[0] != "spec.basicAuth") {
					t.Errorf("merge-bad's entry at t3: outcome %s, unsupported %v; want none, [spec.basicAuth]", s.Outcome, s.Unsupported)
				}
			}
			// attache effective's JSON names the fields.
			b, _ := json.Marshal(report.SourcesOf(c))
			if !strings.Contains(string(b), `"outcome":"none","unsupported":["spec.basicAuth"]`) {
				t.Errorf("sources at t3 = %s, want merge-bad's unsupported fields", b)
			}
		}
	}
	if r := policyStatusOf(t, res, "merge-bad").Reach; r.Full != 0 || r.None != 1 {
		t.Errorf("merge-bad reach %+v, want its one context as none", r)
	}
	// The input problem names the target and the field, once.
	n := 0
	for _, p := range res.Problems {
		if p.Object.Name == "jwt-tcp" {
			n++
			want(t, "jwt-tcp problem", p.Field+": "+p.Message, "spec.targetRefs[0]: spec.jwt: not supported on TCPRoute targets")
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
		spOn("merge", "TCPRoute", "t1", 1, "mergeType: StrategicMerge\n"+cidr("10.3.0.0/16")))
	gw := func(body string) []engine.Object {
		return append(append([]engine.Object(nil), base...), decodeDocs(t, spOn("gw", "Gateway", "g1", 0, body))...)
	}
	in := engine.NewIncremental(engine.Options{})
	for i, s := range []struct {
		what     string
		objs     []engine.Object
		accepted string
	}{
		{"authorization only", gw(cidr("10.1.0.0/16")), "True/Accepted"},
		{"basicAuth added", gw("basicAuth: {users: {name: users}}\n" + cidr("10.1.0.0/16")), "False/Invalid"},
		{"basicAuth removed", gw(cidr("10.1.0.0/16")), "True/Accepted"},
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
		want(t, s.what+": merge ancestors as Compute", policyStatusOf(t, res, "merge").Ancestors, policyStatusOf(t, full, "merge").Ancestors)
		rule := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "TCPRoute", Namespace: "default", Name: "t1", SectionName: "rule-1"}
		want(t, s.what+": effective as Compute", effective(t, res, "SecurityPolicy", rule), effective(t, full, "SecurityPolicy", rule))
	}
}

// The setting from a CRD annotation, on a kind of one's own.
func TestUnsupportedFieldsAnnotation(t *testing.T) {
	res := compute(t, engine.Options{}, declaredCRD("example.com", "TCPPolicy", "tcppolicies", "Direct", "attache.dev/target-kinds: TCPRoute, HTTPRoute", "attache.dev/unsupported-fields: \"TCPRoute=retries,headers[].name\""), tcpTopo(),
		pol("example.com/v1", "TCPPolicy", "bad", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: TCPRoute, name: t1}]\nheaders: [{value: x}, {name: y}]"),
		pol("example.com/v1", "TCPPolicy", "ok", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: h1}]\nretries: 3"))
	c := policyStatusOf(t, res, "bad").Conditions[0]
	want(t, "bad", c.Reason+" "+c.Message, "Invalid spec.targetRefs[0]: spec.headers[1].name: not supported on TCPRoute targets")
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
