package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// failOpenDocs: Envoy Gateway's EnvoyExtensionPolicy and SecurityPolicy
// CRDs (unlabelled: their profiles apply), refsTopo's Gateway g1 and
// routes, and a Service ext for extension processors and authorizers.
func failOpenDocs() []string {
	return []string{
		crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"),
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		refsTopo(),
		"apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: default}\nspec: {ports: [{port: 9000}]}\n",
	}
}

func onRoute(kind, name, route string, min int, body string) string {
	return pol(egV, kind, name, min, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: %s}]\n%s", route, body))
}

func routeRule(name string) topology.Ref {
	return topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: name, SectionName: "rule-1"}
}

// Envoy Gateway leaves out an extension processor or an external
// authorizer that fails open when its backend does not resolve, and
// applies the rest of the policy: the effective policy shows what it
// applies. One broken reference that does not fail open fails the route
// instead, and the policy is shown whole, in place.
func TestFailOpenLeavesPartsOut(t *testing.T) {
	docs := append(failOpenDocs(),
		onRoute("EnvoyExtensionPolicy", "open", "r1", 0, `extProc:
- {backendRefs: [{name: nosvc, port: 9000}], failOpen: true}
- {backendRefs: [{name: ext, port: 9000}]}`),
		onRoute("EnvoyExtensionPolicy", "closed", "r2", 0, `extProc:
- {backendRefs: [{name: nosvc, port: 9000}], failOpen: true}
- {backendRefs: [{name: nosvc, port: 9000}]}`),
		// With a merge type: the merged policy leaves the authorizer out,
		// the Gateway's included (RFC 7386: the part is null).
		pol(egV, "SecurityPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
extAuth: {http: {backendRefs: [{name: ext, port: 9000}]}}
cors: {allowOrigins: ["https://a.example"]}`),
		onRoute("SecurityPolicy", "merged", "r3", 1, `mergeType: JSONMerge
extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 9000}]}}`),
		onRoute("SecurityPolicy", "merged-closed", "r4", 1, `mergeType: JSONMerge
extAuth: {http: {backendRefs: [{name: nosvc, port: 9000}]}}`),
	)
	res := compute(t, engine.Options{}, docs...)
	for _, c := range []struct {
		kind, name, route, effective string
	}{
		{"EnvoyExtensionPolicy", "open", "r1", `{"extProc":[{"backendRefs":[{"name":"ext","port":9000}]}]}`},
		{"EnvoyExtensionPolicy", "closed", "r2", `{"extProc":[{"backendRefs":[{"name":"nosvc","port":9000}],"failOpen":true},{"backendRefs":[{"name":"nosvc","port":9000}]}]}`},
		{"SecurityPolicy", "merged", "r3", `{"cors":{"allowOrigins":["https://a.example"]}}`},
		// Fails closed: in place, merged with nothing (session 16).
		{"SecurityPolicy", "merged-closed", "r4", `{"extAuth":{"http":{"backendRefs":[{"name":"nosvc","port":9000}]}}}`},
	} {
		want(t, c.name+": Accepted", status(t, res, c.name, "Accepted"), "False/Invalid")
		want(t, c.name+": effective at "+c.route, effective(t, res, c.kind, routeRule(c.route)), []string{c.effective})
	}
	for name, msg := range map[string]string{
		"open":   "failing open, spec.extProc[0] left out and the rest applied",
		"merged": "failing open, spec.extAuth left out and the rest applied",
	} {
		if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) {
			t.Errorf("%s: ancestor message %q does not say %q", name, got, msg)
		}
	}
	if got := ancestorMessage(t, res, "closed"); strings.Contains(got, "failing open") {
		t.Errorf("closed: ancestor message %q says it fails open", got)
	}

	// The Service created, the processor is back; deleted, left out again.
	// Incremental agrees with Compute at each step.
	nosvc := "apiVersion: v1\nkind: Service\nmetadata: {name: nosvc, namespace: default}\nspec: {ports: [{port: 9000}]}\n"
	base := decodeDocs(t, docs...)
	with := append(decodeDocs(t, nosvc), base...)
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct {
		what string
		objs []engine.Object
		n    int // extension processors at r1
	}{{"missing", base, 1}, {"created", with, 2}, {"deleted", base, 1}} {
		got := in.Compute(s.objs)
		full := engine.Compute(s.objs, engine.Options{})
		eff := effective(t, got, "EnvoyExtensionPolicy", routeRule("r1"))
		want(t, s.what+": as Compute", eff, effective(t, full, "EnvoyExtensionPolicy", routeRule("r1")))
		want(t, s.what+": merged as Compute", effective(t, got, "SecurityPolicy", routeRule("r3")), effective(t, full, "SecurityPolicy", routeRule("r3")))
		if len(eff) != 1 || strings.Count(eff[0], "backendRefs") != s.n {
			t.Errorf("%s: effective at r1 = %v, want %d extension processors", s.what, eff, s.n)
		}
	}
}
