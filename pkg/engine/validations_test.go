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
