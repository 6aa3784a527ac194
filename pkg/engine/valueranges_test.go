package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// Envoy Gateway's translator bounds buffer limits and HTTP/2 windows: a
// BackendTrafficPolicy with a value out of range is Invalid in place (it
// keeps the route, whose requests get a 500, and the Gateway's policy does
// not apply there), with a problem naming the field; in range, Accepted.
func TestValueRangesInPlace(t *testing.T) {
	btp := crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies")
	res := compute(t, engine.Options{}, btp, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 5s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
connection: {bufferLimit: 1T}
http2: {initialStreamWindowSize: 32Ki}`))
	want(t, "route", status(t, res, "route", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "route"); !strings.Contains(msg, "spec.connection.bufferLimit: 1T is out of range, must be between 0 and 4294967295") ||
		!strings.Contains(msg, "spec.http2.initialStreamWindowSize: 32Ki is out of range, must be between 65535 and 2147483647") {
		t.Errorf("route: ancestor message %q does not name both fields", msg)
	}
	wantProblem(t, res, "route", "spec.connection.bufferLimit", "1T is out of range")
	// In place: the route's spec, not the Gateway's timeout.
	want(t, "effective r1", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")),
		[]string{`{"connection":{"bufferLimit":"1T"},"http2":{"initialStreamWindowSize":"32Ki"}}`})
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")

	ok := compute(t, engine.Options{}, btp, egTopo,
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
connection: {bufferLimit: 4294967295}
http2: {initialStreamWindowSize: 64Mi}
requestBuffer: {limit: 4Gi}`))
	want(t, "route at the bounds", status(t, ok, "route", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, ok, "route"); strings.Contains(msg, "bufferLimit") || strings.Contains(msg, "initialStreamWindowSize") ||
		!strings.Contains(msg, "spec.requestBuffer.limit: 4Gi is out of range") {
		t.Errorf("at the bounds: message %q, want only requestBuffer.limit refused", msg)
	}
}

// A ClientTrafficPolicy's HTTP/2 windows are checked at HTTP and HTTPS
// listeners only (Envoy Gateway builds HTTP/2 settings for a listener with
// an HTTP IR): out of range, the policy is Invalid at a Gateway with such a
// listener and at that listener, Accepted at a Gateway with TCP listeners
// only; the buffer limit is checked everywhere.
func TestValueRangesOnListeners(t *testing.T) {
	ctp := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	gws := gatewayDoc("tcp-only", "eg", "[{name: tcp, protocol: TCP, port: 9000}]", "") +
		gatewayDoc("mixed", "eg", "[{name: tcp, protocol: TCP, port: 9000}, "+httpsListener+"]", "")
	target := gatewayTarget
	windows := "http2: {initialStreamWindowSize: 1Ki, initialConnectionWindowSize: 2Ki}"
	res := compute(t, engine.Options{}, ctp, gws,
		pol(egV, "ClientTrafficPolicy", "on-tcp-gw", 0, target("tcp-only", "")+windows),
		pol(egV, "ClientTrafficPolicy", "on-mixed-tcp", 1, target("mixed", "tcp")+windows),
		pol(egV, "ClientTrafficPolicy", "on-mixed-https", 2, target("mixed", "https")+windows),
		pol(egV, "ClientTrafficPolicy", "buffer-on-tcp", 3, target("tcp-only", "tcp")+"connection: {bufferLimit: 1T}"))
	for name, w := range map[string]string{
		"on-tcp-gw":      "True/Accepted",
		"on-mixed-tcp":   "True/Accepted",
		"on-mixed-https": "False/Invalid",
		"buffer-on-tcp":  "False/Invalid",
	} {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
	if msg := ancestorMessage(t, res, "on-mixed-https"); !strings.Contains(msg, "spec.http2.initialStreamWindowSize: 1Ki is out of range") ||
		!strings.Contains(msg, "spec.http2.initialConnectionWindowSize: 2Ki is out of range") {
		t.Errorf("on-mixed-https: message %q does not name both windows", msg)
	}
	wantProblem(t, res, "on-mixed-https", "spec.http2.initialStreamWindowSize", "1Ki is out of range")

	// The whole mixed Gateway has an HTTPS listener: refused there.
	res = compute(t, engine.Options{}, ctp, gws, pol(egV, "ClientTrafficPolicy", "on-mixed", 0, target("mixed", "")+windows))
	want(t, "on-mixed", status(t, res, "on-mixed", "Accepted"), "False/Invalid")
}

// Envoy Gateway compiles the regular expressions of a SecurityPolicy's
// authorization paths and a BackendTrafficPolicy's rate-limit matches: one
// that does not compile makes the policy Invalid in place, naming the
// field; a path of another type is not judged.
func TestRegexFieldsInPlace(t *testing.T) {
	sp := crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies")
	btp := crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies")
	res := compute(t, engine.Options{}, sp, btp, egTopo,
		pol(egV, "SecurityPolicy", "bad-path", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
authorization: {rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}, operation: {path: {type: RegularExpression, value: "/api/(v1"}}}]}`),
		pol(egV, "SecurityPolicy", "prefix", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
authorization: {rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}, operation: {path: {type: PathPrefix, value: "/api/(v1"}}}]}`),
		pol(egV, "BackendTrafficPolicy", "bad-header", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
rateLimit: {type: Global, global: {rules: [{clientSelectors: [{headers: [{name: x-user, type: RegularExpression, value: "*.x"}]}], limit: {requests: 1, unit: Second}}]}}`))
	want(t, "bad-path", status(t, res, "bad-path", "Accepted"), "False/Invalid")
	wantProblem(t, res, "bad-path", "spec.authorization.rules[0].operation.path.value", `value refused by its implementation: regex "/api/(v1" is invalid: error parsing regexp: missing closing ): `+"`/api/(v1`")
	want(t, "prefix", status(t, res, "prefix", "Accepted"), "True/Accepted")
	want(t, "bad-header", status(t, res, "bad-header", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "bad-header"); !strings.Contains(msg, "values its implementation refuses: spec.rateLimit.global.rules[0].clientSelectors[0].headers[0].value: regex \"*.x\" is invalid") {
		t.Errorf("bad-header: %q", msg)
	}
	// In place: the route keeps it (its requests get Envoy Gateway's 500).
	if len(policyStatusOf(t, res, "bad-path").InPlaceInvalid) != 1 {
		t.Errorf("bad-path InPlaceInvalid = %v, want its route", policyStatusOf(t, res, "bad-path").InPlaceInvalid)
	}
}

// gatewayTarget is a targetRefs line naming Gateway gw, or its listener
// section when section is set.
func gatewayTarget(gw, section string) string {
	s := "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: " + gw
	if section != "" {
		s += ", sectionName: " + section
	}
	return s + "}]\n"
}

// httpsListener is an HTTPS listener "https" on port 443 (a YAML flow
// map).
const httpsListener = "{name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}"
