package engine_test

import (
	"fmt"
	"slices"
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

// Under a merge type, Envoy Gateway merges the route's policy with the
// Gateway's first and judges the merged policy: what fails open is read
// from the merged policy's flags, and a part the merge completes with a
// backend that resolves keeps the Gateway's other fields (session 30;
// before, the Gateway policy's failing parts were left out of it before
// the merge, by its own flags). Each case has a Gateway policy whose
// authorizer's backend does not resolve, and a route policy merging with
// it (JSONMerge).
func TestFailOpenJudgedOnTheMergedPolicy(t *testing.T) {
	for _, c := range []struct {
		name, gw, route string
		// effective at the route, the route policy's Accepted at the
		// listener g1#http, and whether the merged policy fails the
		// route (MergeHolds without MergeFailedOpen).
		effective, atListener string
		fails                 bool
	}{
		{"the route sets no authorizer: the Gateway's fails open, left out",
			`extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 9000}]}}
cors: {allowOrigins: ["https://gw.example"]}`, `cors: {allowOrigins: ["https://route.example"]}`,
			`{"cors":{"allowOrigins":["https://route.example"]}}`, "False/Invalid", false},
		{"the route completes the Gateway's authorizer with a backend that resolves",
			`extAuth: {failOpen: true, headersToExtAuth: [x-user], http: {backendRefs: [{name: nosvc, port: 9000}]}}`,
			`extAuth: {http: {backendRefs: [{name: ext, port: 9000}]}}`,
			`{"extAuth":{"failOpen":true,"headersToExtAuth":["x-user"],"http":{"backendRefs":[{"name":"ext","port":9000}]}}}`, "", false},
		{"the route's flag makes the Gateway's failing authorizer fail open",
			`extAuth: {http: {backendRefs: [{name: nosvc, port: 9000}]}}
cors: {allowOrigins: ["https://gw.example"]}`, `extAuth: {failOpen: true}`,
			`{"cors":{"allowOrigins":["https://gw.example"]}}`, "False/Invalid", false},
		{"the route's flag makes the Gateway's authorizer fail closed",
			`extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 9000}]}}`, `extAuth: {failOpen: false}`,
			`{"extAuth":{"failOpen":false,"http":{"backendRefs":[{"name":"nosvc","port":9000}]}}}`, "False/Invalid", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs := append(failOpenDocs(),
				pol(egV, "SecurityPolicy", "gw", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]\n"+c.gw),
				onRoute("SecurityPolicy", "route", "r1", 1, "mergeType: JSONMerge\n"+c.route))
			res := compute(t, engine.Options{}, docs...)
			want(t, "effective", effective(t, res, "SecurityPolicy", routeRule("r1")), []string{c.effective})
			got := acceptedByAncestor(t, res, "route")
			if c.atListener == "" {
				want(t, "route ancestors", got, map[string]string{"Gateway default/g1": "True/Accepted"})
			} else {
				want(t, "route at g1#http", got["Gateway default/g1#http"], c.atListener)
				want(t, "route at g1", got["Gateway default/g1"], "True/Accepted")
			}
			fails := false
			for _, e := range res.Effective {
				if e.Target != routeRule("r1") {
					continue
				}
				for _, ctx := range e.Contexts {
					for _, s := range ctx.Stack {
						if s.Policy.Name == "route" && s.MergeHolds != "" && len(s.MergeFailedOpen) == 0 {
							fails = true
						}
						if s.Policy.Name == "route" && !c.fails && c.atListener != "" && !slices.Equal(s.MergeFailedOpen, []string{"spec.extAuth"}) {
							t.Errorf("MergeFailedOpen = %v, want spec.extAuth", s.MergeFailedOpen)
						}
					}
				}
			}
			want(t, "the merged policy fails the route", fails, c.fails)
		})
	}
}
