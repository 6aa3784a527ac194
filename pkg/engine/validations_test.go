package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// A kind's CEL rules (attache.dev/validations): a policy for which one
// does not hold is Invalid in place (it keeps its route, whose requests
// get the kind's failure status, and the Gateway's policy does not apply
// there), its ancestor's message and problem naming the rule's field and
// message; one whose evaluation fails is Invalid too, naming the rule; a
// policy keeping every rule is Accepted.
func TestValidationsInPlace(t *testing.T) {
	btp := strings.Replace(crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies"),
		"metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}",
		`metadata:
  name: backendtrafficpolicies.gateway.envoyproxy.io
  annotations:
    attache.dev/validations: |
      - rule: "!has(self.timeout) || !has(self.timeout.http) || self.timeout.http.requestTimeout != '0s'"
        message: a request timeout of 0s is not allowed
        fieldPath: .timeout.http.requestTimeout
      - rule: "!has(self.retry) || self.retry.numRetries >= 0"
        fieldPath: .retry`, 1)
	res := compute(t, engine.Options{}, btp, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 5s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
timeout: {http: {requestTimeout: 0s}}`),
		pol(egV, "BackendTrafficPolicy", "no-key", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}]
retry: {perRetry: {timeout: 1s}}`))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "route", status(t, res, "route", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "route"); !strings.Contains(msg, "values its implementation refuses: spec.timeout.http.requestTimeout: a request timeout of 0s is not allowed") {
		t.Errorf("route: ancestor message %q", msg)
	}
	wantProblem(t, res, "route", "spec.timeout.http.requestTimeout", "value refused by its implementation: a request timeout of 0s is not allowed")
	// In place: the route's spec, not the Gateway's timeout; its requests
	// fail.
	want(t, "effective r1", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")),
		[]string{`{"timeout":{"http":{"requestTimeout":"0s"}}}`})
	if len(policyStatusOf(t, res, "route").InPlaceInvalid) != 1 {
		t.Errorf("route InPlaceInvalid = %v, want its route", policyStatusOf(t, res, "route").InPlaceInvalid)
	}
	// A rule whose evaluation fails (no such key) does not hold either.
	want(t, "no-key", status(t, res, "no-key", "Accepted"), "False/Invalid")
	wantProblem(t, res, "no-key", "spec.retry", `value refused by its implementation: rule validations[1] "!has(self.retry) || self.retry.numRetries >= 0" could not be evaluated: no such key: numRetries`)
}

// A rule judged at some listeners only (listenerProtocols): Envoy
// Gateway checks a ClientTrafficPolicy's cipher suites for the listeners
// that terminate TLS; a policy naming one it does not support is Invalid
// at a Gateway with an HTTPS listener and at that listener, Accepted at a
// Gateway with plain HTTP listeners and at its plain listener.
func TestValidationsOnListeners(t *testing.T) {
	ctp := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	gws := gatewayDoc("plain", "eg", "[{name: http, protocol: HTTP, port: 80}]", "") +
		gatewayDoc("mixed", "eg", "[{name: http, protocol: HTTP, port: 80}, "+httpsListener+"]", "")
	target := gatewayTarget
	bad := "tls: {ciphers: [ECDHE-RSA-AES128-GCM-SHA256, INVALID-CIPHER]}"
	res := compute(t, engine.Options{}, ctp, gws,
		pol(egV, "ClientTrafficPolicy", "on-plain", 0, target("plain", "")+bad),
		pol(egV, "ClientTrafficPolicy", "on-mixed-http", 1, target("mixed", "http")+bad),
		pol(egV, "ClientTrafficPolicy", "on-mixed-https", 2, target("mixed", "https")+bad),
		pol(egV, "ClientTrafficPolicy", "fine-on-https", 3, target("mixed", "https")+"tls: {ciphers: [TLS_RSA_WITH_AES_128_CBC_SHA]}"))
	for name, w := range map[string]string{
		"on-plain":       "True/Accepted",
		"on-mixed-http":  "True/Accepted",
		"on-mixed-https": "False/Invalid",
	} {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
	if msg := ancestorMessage(t, res, "on-mixed-https"); !strings.Contains(msg, "values its implementation refuses: spec.tls.ciphers: names a cipher suite Envoy Gateway does not support") {
		t.Errorf("on-mixed-https: message %q", msg)
	}
	wantProblem(t, res, "on-mixed-https", "spec.tls.ciphers", "names a cipher suite Envoy Gateway does not support")
	// A newer policy on that listener, whose ciphers are fine, is
	// Conflicted there (the older one wins), not Invalid.
	want(t, "fine-on-https", status(t, res, "fine-on-https", "Accepted"), "False/Conflicted")
	// On the whole mixed Gateway, which has an HTTPS listener: refused.
	res = compute(t, engine.Options{}, ctp, gws, pol(egV, "ClientTrafficPolicy", "on-mixed", 0, target("mixed", "")+bad))
	want(t, "on-mixed", status(t, res, "on-mixed", "Accepted"), "False/Invalid")
}
