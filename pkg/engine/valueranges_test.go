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
