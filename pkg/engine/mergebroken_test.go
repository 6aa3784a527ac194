package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// twoListeners are HTTP listeners a (port 80) and b (8080).
const twoListeners = "[{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 8080}]"

// mergeBrokenDocs: Gateway g1 with HTTP listeners a and b, Gateway g2 with
// listener a; HTTPRoutes r1 and r4 on g1 (no sectionName), r2 on g1's
// listener a, r3 on g1 and g2; a BackendTrafficPolicy on g1 whose response
// body names ConfigMap page; route policies with a merge type.
func mergeBrokenDocs() string {
	var b strings.Builder
	b.WriteString(crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies"))
	b.WriteString(gatewayDoc("g1", "eg", twoListeners, "") + gatewayDoc("g2", "eg", "[{name: a, protocol: HTTP, port: 80}]", ""))
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
	// The stack names the field held; attache effective's JSON too.
	for _, e := range res.Effective {
		if e.Target.Name != "r1" {
			continue
		}
		for _, c := range e.Contexts {
			for _, s := range c.Stack {
				if s.Policy.Name == "m1" && s.MergeHolds != "spec.responseOverride[0].response.body.valueRef of BackendTrafficPolicy default/gw" {
					t.Errorf("m1's entry at r1: MergeHolds %q", s.MergeHolds)
				}
			}
			if b, _ := json.Marshal(report.SourcesOf(c)); !strings.Contains(string(b), `"mergeHolds":"spec.responseOverride[0].response.body.valueRef of BackendTrafficPolicy default/gw"`) {
				t.Errorf("sources at r1 = %s, want m1's mergeHolds", b)
			}
		}
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

// A kind naming its ancestors as Gateway objects (ancestor:
// gateway-object) gets no listener entries: a Gateway through whose
// listener the merge fails is Invalid.
func TestMergeHoldingABrokenReferenceObjects(t *testing.T) {
	docs := declaredCRD("example.com", "PagePolicy", "pagepolicies", "Inherited", "attache.dev/target-kinds: Gateway, HTTPRoute", "attache.dev/merge-strategies: atomic-defaults", "attache.dev/merge-type-field: mergeType", "attache.dev/object-refs: \"page kinds=ConfigMap\"", "attache.dev/ancestor: gateway-object", "attache.dev/effective-section-kinds: HTTPRoute") + gatewayDoc("g1", "eg", twoListeners, "") + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec: {parentRefs: [{name: g1}], rules: [{}]}
---
apiVersion: example.com/v1
kind: PagePolicy
metadata: {name: gw, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}], page: {name: missing}}
---
apiVersion: example.com/v1
kind: PagePolicy
metadata: {name: m, namespace: default, creationTimestamp: "2026-01-01T00:01:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}], mergeType: StrategicMerge, other: 1}
`
	res := engine.Compute(decodeDocs(t, docs), engine.Options{})
	want(t, "m ancestors", acceptedByAncestor(t, res, "m"), map[string]string{"Gateway default/g1": "False/Invalid"})
	if msg := policyStatusOf(t, res, "m").Conditions[0].Message; !strings.Contains(msg, "it holds spec.page of PagePolicy default/gw") {
		t.Errorf("m: %q, want the held field named", msg)
	}
}
