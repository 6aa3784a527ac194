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

// The merging policy's own broken references are judged on the merged
// policy too (session 30b): a route policy whose authorizer sets no
// failOpen merges with the Gateway's, whose failOpen: true is then the
// merged policy's flag, so Envoy Gateway leaves the merged authorizer out
// and applies the rest, without failing the route; the route policy stays
// Invalid (its backend does not resolve). A route also attached to a
// Gateway whose policy sets no flag fails there only (InPlaceInvalidVia).
// Without a policy above, its own flags decide (it fails closed, in
// place, merged with nothing).
func TestFailOpenOwnReferencesByTheMergedFlags(t *testing.T) {
	g2 := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: default}
spec: {parentRefs: [{name: g1}, {name: g2}], rules: [{}]}
`
	route := "mergeType: JSONMerge\nextAuth: {http: {backendRefs: [{name: nosvc, port: 9000}]}}"
	docs := append(failOpenDocs(), g2,
		pol(egV, "SecurityPolicy", "gw1", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
extAuth: {failOpen: true, http: {backendRefs: [{name: ext, port: 9000}]}}
cors: {allowOrigins: ["https://gw1.example"]}`),
		pol(egV, "SecurityPolicy", "gw2", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g2}]
extAuth: {http: {backendRefs: [{name: ext, port: 9000}]}}
cors: {allowOrigins: ["https://gw2.example"]}`),
		onRoute("SecurityPolicy", "route", "r1", 1, route),
		onRoute("SecurityPolicy", "route-both", "both", 1, route),
		// r2's own flag says false: the merged policy's flag is its own.
		onRoute("SecurityPolicy", "route-false", "r2", 1, "mergeType: JSONMerge\nextAuth: {failOpen: false, http: {backendRefs: [{name: nosvc, port: 9000}]}}"),
	)
	res := compute(t, engine.Options{}, docs...)
	want(t, "effective at r1", effective(t, res, "SecurityPolicy", routeRule("r1")), []string{`{"cors":{"allowOrigins":["https://gw1.example"]}}`})
	want(t, "route Accepted", acceptedByAncestor(t, res, "route"), map[string]string{"Gateway default/g1": "False/Invalid"})
	if got := ancestorMessage(t, res, "route"); !strings.Contains(got, "merged with the policies above it, failing open by the merged policy's flags, spec.extAuth left out of it and the rest applied") {
		t.Errorf("route: ancestor message %q does not say it fails open by the merged flags", got)
	}
	st := policyStatusOf(t, res, "route")
	if _, fails := st.InPlaceInvalid[routeRef("r1")]; fails {
		t.Errorf("route: InPlaceInvalid = %v, want none (it fails open)", st.InPlaceInvalid)
	}
	for _, e := range res.Effective {
		if e.Target != routeRule("r1") {
			continue
		}
		for _, ctx := range e.Contexts {
			last := ctx.Stack[len(ctx.Stack)-1]
			want(t, "MergeFailedOpen", last.MergeFailedOpen, []string{"spec.extAuth"})
			want(t, "MergeHolds", last.MergeHolds, "spec.extAuth.http.backendRefs[0] of SecurityPolicy default/route")
		}
	}

	// Through g1 it fails open, through g2 (no flag above) closed.
	eff := effective(t, res, "SecurityPolicy", routeRule("both"))
	slices.Sort(eff)
	want(t, "effective at both", eff, []string{
		`{"cors":{"allowOrigins":["https://gw1.example"]}}`,
		`{"extAuth":{"http":{"backendRefs":[{"name":"nosvc","port":9000}]}}}`,
	})
	stb := policyStatusOf(t, res, "route-both")
	want(t, "route-both InPlaceInvalidVia", stb.InPlaceInvalidVia[routeRef("both")],
		[]topology.Ref{{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "default", Name: "g2", SectionName: "http"}})
	// Its ancestors' message (one per Gateway) names the listeners where
	// it fails open.
	want(t, "route-both Accepted", acceptedByAncestor(t, res, "route-both"), map[string]string{"Gateway default/g1": "False/Invalid", "Gateway default/g2": "False/Invalid"})
	for _, an := range stb.Ancestors {
		for _, c := range an.Conditions {
			if c.Type == "Accepted" && !strings.HasSuffix(c.Message, "; merged with the policies above it through Gateway default/g1#http, failing open by the merged policy's flags, spec.extAuth left out of it and the rest applied") {
				t.Errorf("route-both at %s: message %q does not name g1#http as where it fails open", an.Ref.Short(), c.Message)
			}
		}
	}

	// Its own false flag: fails closed, merged with nothing.
	want(t, "effective at r2", effective(t, res, "SecurityPolicy", routeRule("r2")), []string{`{"extAuth":{"failOpen":false,"http":{"backendRefs":[{"name":"nosvc","port":9000}]}}}`})
	if _, fails := policyStatusOf(t, res, "route-false").InPlaceInvalid[routeRef("r2")]; !fails {
		t.Error("route-false: not InPlaceInvalid, want it to fail its route")
	}

	// Incremental agrees when the Gateway policy's flag goes and comes back.
	in := engine.NewIncremental(engine.Options{})
	base := decodeDocs(t, docs...)
	noFlag := decodeDocs(t, append(slices.Clone(docs[:len(docs)-5]), g2,
		pol(egV, "SecurityPolicy", "gw1", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
extAuth: {http: {backendRefs: [{name: ext, port: 9000}]}}
cors: {allowOrigins: ["https://gw1.example"]}`), docs[len(docs)-4], docs[len(docs)-3], docs[len(docs)-2], docs[len(docs)-1])...)
	for _, s := range []struct {
		what string
		objs []engine.Object
	}{{"flag", base}, {"no flag", noFlag}, {"flag again", base}} {
		got := in.Compute(s.objs)
		full := engine.Compute(s.objs, engine.Options{})
		for _, r := range []string{"r1", "both"} {
			want(t, s.what+": "+r+" as Compute", effective(t, got, "SecurityPolicy", routeRule(r)), effective(t, full, "SecurityPolicy", routeRule(r)))
		}
		want(t, s.what+": status as Compute", policyStatusOf(t, got, "route").InPlaceInvalid, policyStatusOf(t, full, "route").InPlaceInvalid)
	}
	if _, fails := policyStatusOf(t, engine.Compute(noFlag, engine.Options{}), "route").InPlaceInvalid[routeRef("r1")]; !fails {
		t.Error("no flag above: route does not fail its route")
	}
}

func routeRef(name string) topology.Ref {
	return topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: name}
}

// The retry back-off of a policy's external services is checked as a
// BackendTrafficPolicy's (Envoy Gateway's translateTrafficFeatures runs
// buildRetry on their backendSettings): a maxInterval less than the
// baseInterval, or an interval of 0s, makes the part fail, the policy
// Invalid in place; an external authorizer with failOpen is left out
// instead; a valid back-off, or one in a form the CRD's schema refuses
// (buildRetry skips it), is not judged.
// Source: EG v1.9.1 internal/gatewayapi/clustersettings.go
// (translateTrafficFeatures, buildRetry: "maxInterval cannot be less than
// baseInterval", "baseInterval cannot be set to 0s"), securitypolicy.go
// (buildExtAuth, the remote JWKS and OIDC provider: translateTrafficFeatures;
// shouldFailOpen), envoyextensionpolicy.go (buildExtProc).
func TestExternalServiceRetryBackOff(t *testing.T) {
	backOff := func(base, max string) string {
		return "backendSettings: {retry: {perRetry: {backOff: {baseInterval: " + base + ", maxInterval: " + max + "}}}}"
	}
	docs := append(failOpenDocs(),
		onRoute("SecurityPolicy", "authz-bad", "r1", 0, "extAuth: {http: {backendRefs: [{name: ext, port: 9000}], "+backOff("2s", "1s")+"}}"),
		onRoute("SecurityPolicy", "authz-open", "r2", 0, "extAuth: {failOpen: true, grpc: {backendRefs: [{name: ext, port: 9000}], "+backOff("0s", "1s")+"}}\ncors: {allowOrigins: [\"https://a.example\"]}"),
		onRoute("SecurityPolicy", "jwks-bad", "r3", 0, `jwt: {providers: [{name: a, remoteJWKS: {uri: "https://a.example/jwks"}}, {name: b, remoteJWKS: {uri: "https://b.example/jwks", `+backOff("1s", "0s")+`}}]}`),
		onRoute("EnvoyExtensionPolicy", "proc-bad", "r4", 0, "extProc: [{backendRefs: [{name: ext, port: 9000}], "+backOff("5s", "100ms")+"}]"),
		onRoute("EnvoyExtensionPolicy", "proc-ok", "r5", 0, "extProc: [{backendRefs: [{name: ext, port: 9000}], "+backOff("100ms", "5s")+"}]"),
		// Failing open, Envoy Gateway leaves the processor out, the other
		// applied; the policy is not accepted all the same.
		onRoute("EnvoyExtensionPolicy", "proc-open", "r6", 0, "extProc: [{backendRefs: [{name: ext, port: 9000}]}, {backendRefs: [{name: ext, port: 9000}], failOpen: true, "+backOff("5s", "1s")+"}]"),
	)
	res := compute(t, engine.Options{}, docs...)
	for name, msg := range map[string]string{
		"authz-bad":  "spec.extAuth.http.backendSettings.retry.perRetry.backOff.maxInterval: cannot be less than baseInterval",
		"authz-open": "spec.extAuth.grpc.backendSettings.retry.perRetry.backOff.baseInterval: cannot be set to 0s",
		"jwks-bad":   "spec.jwt.providers: an entry's remoteJWKS.backendSettings.retry.perRetry.backOff.maxInterval cannot be set to 0s",
		"proc-bad":   "spec.extProc[0].backendSettings.retry.perRetry.backOff.maxInterval: cannot be less than baseInterval",
	} {
		want(t, name+": Accepted", status(t, res, name, "Accepted"), "False/Invalid")
		if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) {
			t.Errorf("%s: ancestor message %q does not say %q", name, got, msg)
		}
	}
	want(t, "proc-ok: Accepted", status(t, res, "proc-ok", "Accepted"), "True/Accepted")
	want(t, "proc-open: Accepted", status(t, res, "proc-open", "Accepted"), "False/Invalid")
	want(t, "proc-open effective", effective(t, res, "EnvoyExtensionPolicy", routeRule("r6")), []string{`{"extProc":[{"backendRefs":[{"name":"ext","port":9000}]}]}`})
	if got := ancestorMessage(t, res, "proc-open"); !strings.Contains(got, "failing open, spec.extProc[1] left out and the rest applied") {
		t.Errorf("proc-open: %q", got)
	}
	// Failing open: the authorizer left out, the rest applied.
	want(t, "authz-open effective", effective(t, res, "SecurityPolicy", routeRule("r2")), []string{`{"cors":{"allowOrigins":["https://a.example"]}}`})
	if got := ancestorMessage(t, res, "authz-open"); !strings.Contains(got, "failing open, spec.extAuth left out and the rest applied") {
		t.Errorf("authz-open: %q", got)
	}
}

// The buffer limit and HTTP/2 windows of a policy's external services are
// bounded as a BackendTrafficPolicy's (Envoy Gateway's
// translateTrafficFeatures runs buildBackendConnection and
// buildIRHTTP2Settings on their backendSettings): out of range, the part
// fails, the policy Invalid in place; an extension processor with
// failOpen is left out instead; values in range are not judged.
// Source: EG v1.9.1 internal/gatewayapi/clustersettings.go
// (buildBackendConnection: "BufferLimit value ... is out of range"),
// http.go (buildIRHTTP2Settings: 65535..2147483647), securitypolicy.go,
// envoyextensionpolicy.go (buildExtProc, failOpen).
func TestExternalServiceBufferAndWindows(t *testing.T) {
	docs := append(failOpenDocs(),
		onRoute("SecurityPolicy", "authz-buffer", "r1", 0, "extAuth: {http: {backendRefs: [{name: ext, port: 9000}], backendSettings: {connection: {bufferLimit: 5Gi}}}}"),
		onRoute("SecurityPolicy", "jwks-window", "r2", 0, `jwt: {providers: [{name: a, remoteJWKS: {uri: "https://a.example/jwks", backendSettings: {http2: {initialStreamWindowSize: 1Ki}}}}]}`),
		onRoute("SecurityPolicy", "grpc-ok", "r3", 0, "extAuth: {grpc: {backendRefs: [{name: ext, port: 9000}], backendSettings: {connection: {bufferLimit: 32Ki}, http2: {initialConnectionWindowSize: 1Mi}}}}"),
		// An authorizer failing open is left out; an OIDC provider's
		// failure fails the policy whatever extAuth's failOpen says.
		onRoute("SecurityPolicy", "authz-open", "r6", 0, "extAuth: {failOpen: true, http: {backendRefs: [{name: ext, port: 9000}], backendSettings: {connection: {bufferLimit: 5Gi}}}}\ncors: {allowOrigins: [\"https://a.example\"]}"),
		onRoute("SecurityPolicy", "oidc-window", "r7", 0, `oidc: {provider: {issuer: "https://idp.example", backendRefs: [{name: ext, port: 9000}], backendSettings: {http2: {initialStreamWindowSize: 100}}}, clientID: c, clientSecret: {name: oidc-secret}}`),
		onRoute("EnvoyExtensionPolicy", "proc-window", "r4", 0, "extProc: [{backendRefs: [{name: ext, port: 9000}], backendSettings: {http2: {initialConnectionWindowSize: 4Gi}}}]"),
		onRoute("EnvoyExtensionPolicy", "proc-open", "r5", 0, "extProc: [{backendRefs: [{name: ext, port: 9000}]}, {backendRefs: [{name: ext, port: 9000}], failOpen: true, backendSettings: {connection: {bufferLimit: 5Gi}}}]"),
	)
	res := compute(t, engine.Options{}, docs...)
	for name, msg := range map[string]string{
		"authz-buffer": "spec.extAuth.http.backendSettings.connection.bufferLimit",
		"jwks-window":  "spec.jwt.providers[0].remoteJWKS.backendSettings.http2.initialStreamWindowSize",
		"proc-window":  "spec.extProc[0].backendSettings.http2.initialConnectionWindowSize",
	} {
		want(t, name+": Accepted", status(t, res, name, "Accepted"), "False/Invalid")
		if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) {
			t.Errorf("%s: ancestor message %q does not name %q", name, got, msg)
		}
	}
	want(t, "grpc-ok: Accepted", status(t, res, "grpc-ok", "Accepted"), "True/Accepted")
	want(t, "authz-open effective", effective(t, res, "SecurityPolicy", routeRule("r6")), []string{`{"cors":{"allowOrigins":["https://a.example"]}}`})
	want(t, "oidc-window: Accepted", status(t, res, "oidc-window", "Accepted"), "False/Invalid")
	if got := ancestorMessage(t, res, "oidc-window"); !strings.Contains(got, "spec.oidc.provider.backendSettings.http2.initialStreamWindowSize") {
		t.Errorf("oidc-window: ancestor message %q", got)
	}
	want(t, "proc-open: Accepted", status(t, res, "proc-open", "Accepted"), "False/Invalid")
	want(t, "proc-open effective", effective(t, res, "EnvoyExtensionPolicy", routeRule("r5")), []string{`{"extProc":[{"backendRefs":[{"name":"ext","port":9000}]}]}`})
}
