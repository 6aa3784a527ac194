package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// mergeBrokenDocs: Gateway g1 with HTTP listeners a and b, Gateway g2 with
// listener a; HTTPRoutes r1 and r4 on g1 (no sectionName), r2 on g1's
// listener a, r3 on g1 and g2; a BackendTrafficPolicy on g1 whose response
// body names ConfigMap page; route policies with a merge type.
func mergeBrokenDocs() string {
	var b strings.Builder
	b.WriteString(crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies"))
	b.WriteString(`---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: a, protocol: HTTP, port: 80}]}
`)
	for name, parents := range map[string]string{"r1": "{name: g1}", "r2": "{name: g1, sectionName: a}", "r3": "{name: g1}, {name: g2}", "r4": "{name: g1}"} {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: default}\nspec: {parentRefs: [%s], rules: [{}]}\n", name, parents)
	}
	btp := func(name, kind, target string, min int, body string) string {
		return "---" + pol(egV, "BackendTrafficPolicy", name, min, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\n%s", kind, target, body))
	}
	page := func(name string) string {
		return fmt.Sprintf(`[{match: {statusCodes: [{value: 500}]}, response: {body: {type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: %s}}}}]`, name)
	}
	b.WriteString(btp("gw", "Gateway", "g1", 0, "timeout: {http: {requestTimeout: 5s}}\nresponseOverride: "+page("page")))
	b.WriteString(btp("m1", "HTTPRoute", "r1", 1, "mergeType: StrategicMerge\ntimeout: {http: {idleTimeout: 1m}}"))
	b.WriteString(btp("m2", "HTTPRoute", "r2", 1, "mergeType: JSONMerge\ntimeout: {http: {idleTimeout: 1m}}"))
	b.WriteString(btp("m3", "HTTPRoute", "r3", 1, "mergeType: StrategicMerge\ntimeout: {http: {idleTimeout: 1m}}"))
	// Replaces the list holding the broken reference with one of its own.
	b.WriteString(btp("m4", "HTTPRoute", "r4", 1, "mergeType: JSONMerge\nresponseOverride: "+page("mine")))
	b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, namespace: default}\ndata: {response.body: x}\n")
	return b.String()
}

// acceptedByAncestor maps a policy's ancestors to their Accepted status/reason.
func acceptedByAncestor(t *testing.T, res *engine.Result, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range policyStatusOf(t, res, name).Ancestors {
		out[a.Ref.Short()] = a.Conditions[0].Status + "/" + a.Conditions[0].Reason
	}
	return out
}

// A route policy with a merge type whose merged spec holds the Gateway
// policy's reference that does not resolve fails as the merged policy
// does in Envoy Gateway: Invalid at each listener the route is attached
// through (its own entry where the parentRef names the listener, an entry
// of its own where the parentRef names the Gateway, which stays accepted),
// and still merged: the route gets the Gateway policy's failing response.
// A merge that replaces the broken part is fine.
func TestMergeHoldingABrokenReference(t *testing.T) {
	res := engine.Compute(decodeDocs(t, mergeBrokenDocs()), engine.Options{})
	want(t, "gw", status(t, res, "gw", "Accepted"), "False/Invalid")
	want(t, "m1 ancestors", acceptedByAncestor(t, res, "m1"), map[string]string{
		"Gateway default/g1": "True/Accepted", "Gateway default/g1#a": "False/Invalid", "Gateway default/g1#b": "False/Invalid"})
	want(t, "m1", status(t, res, "m1", "Accepted"), "True/Accepted")
	want(t, "m2 ancestors", acceptedByAncestor(t, res, "m2"), map[string]string{"Gateway default/g1#a": "False/Invalid"})
	want(t, "m2", status(t, res, "m2", "Accepted"), "False/Invalid")
	want(t, "m3 ancestors", acceptedByAncestor(t, res, "m3"), map[string]string{
		"Gateway default/g1": "True/Accepted", "Gateway default/g1#a": "False/Invalid", "Gateway default/g1#b": "False/Invalid", "Gateway default/g2": "True/Accepted"})
	want(t, "m4 ancestors", acceptedByAncestor(t, res, "m4"), map[string]string{"Gateway default/g1": "True/Accepted"})

	var msg string
	for _, a := range policyStatusOf(t, res, "m1").Ancestors {
		if a.Ref.SectionName == "a" {
			msg = a.Conditions[0].Message
		}
	}
	want(t, "m1 at g1#a", msg, "merged (StrategicMerge) with the policies above it at HTTPRoute default/r1#rule-1, it holds spec.responseOverride[0].response.body.valueRef of BackendTrafficPolicy default/gw, which its implementation cannot translate (see that policy's status): the merged policy fails")
	if s := policyStatusOf(t, res, "m1").Conditions[0].Message; !strings.Contains(s, "Invalid through Gateway default/g1#a: merged (StrategicMerge)") {
		t.Errorf("m1 summary %q does not say where it is Invalid", s)
	}
	// Still merged: the route's effective policy holds both.
	rule := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: "r1", SectionName: "rule-1"}
	eff := effective(t, res, "BackendTrafficPolicy", rule)
	if len(eff) != 1 || !strings.Contains(eff[0], "idleTimeout") || !strings.Contains(eff[0], `"name":"page"`) {
		t.Errorf("effective at r1 = %v, want m1 merged with gw", eff)
	}
}

// Creating the ConfigMap heals the merges, incrementally as Compute says.
func TestMergeHoldingABrokenReferenceIncremental(t *testing.T) {
	base := decodeDocs(t, mergeBrokenDocs())
	withPage := append(append([]engine.Object(nil), base...), decodeDocs(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: page, namespace: default}\ndata: {response.body: x}\n")...)
	in := engine.NewIncremental(engine.Options{})
	for i, s := range []struct {
		what string
		objs []engine.Object
		m1   map[string]string
	}{
		{"missing", base, map[string]string{"Gateway default/g1": "True/Accepted", "Gateway default/g1#a": "False/Invalid", "Gateway default/g1#b": "False/Invalid"}},
		{"created", withPage, map[string]string{"Gateway default/g1": "True/Accepted"}},
		{"deleted", base, map[string]string{"Gateway default/g1": "True/Accepted", "Gateway default/g1#a": "False/Invalid", "Gateway default/g1#b": "False/Invalid"}},
	} {
		res := in.Compute(s.objs)
		if ch := in.LastChange(); i > 0 && ch.Full {
			t.Errorf("%s: recomputed everything (%s)", s.what, ch.Reason)
		}
		full := engine.Compute(s.objs, engine.Options{})
		want(t, s.what+": m1", acceptedByAncestor(t, res, "m1"), s.m1)
		for _, name := range []string{"gw", "m1", "m2", "m3", "m4"} {
			want(t, s.what+": "+name+" as Compute", policyStatusOf(t, res, name), policyStatusOf(t, full, name))
		}
	}
}
