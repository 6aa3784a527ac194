package routing_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
)

// kgwReplacedDocs: kgateway's TrafficPolicy CRD (unlabelled: its profile
// applies), a Gateway, Service web and HTTPRoute r whose rule a has an
// ExtensionRef filter naming TrafficPolicy missing, which does not exist,
// and rule b one naming TrafficPolicy there, which does.
const kgwReplacedDocs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec:
  group: gateway.kgateway.dev
  names: {kind: TrafficPolicy, plural: trafficpolicies}
  scope: Namespaced
  versions: [{name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {gatewayClassName: kgateway, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  hostnames: [r.example]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: missing}}]
    backendRefs: [{name: web, port: 8080}]
  - name: b
    matches: [{path: {type: PathPrefix, value: /b}}]
    filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: there}}]
    backendRefs: [{name: web, port: 8080}]
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: there, namespace: default}
spec: {timeouts: {request: 5s}}
`

// kgateway replaces a rule whose ExtensionRef filter names a TrafficPolicy
// that does not exist with a 500 direct response ("invalid route
// configuration detected and replaced with a direct response"): a request
// to it is answered with 500, naming the filter; a request to a rule whose
// policy exists is forwarded.
// Source: kgateway pkg/kgateway/translator/gateway/testutils/outputs/
// traffic-policy/route-section-attachment.yaml @ 157a7cbb (route
// example-tls-route-extension-ref).
func TestReplacedRule(t *testing.T) {
	ix, pols := build(t, kgwReplacedDocs, true)
	o := trace(t, ix, pols, "http://r.example/a", nil).Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 500 {
		t.Errorf("/a: result %s %d, want error 500", o.Result, o.Status)
	}
	if !strings.Contains(o.Reason, "its ExtensionRef filter names TrafficPolicy default/missing, which is not among the objects, so its implementation replaces the rule with a 500 direct response") {
		t.Errorf("/a: reason %q", o.Reason)
	}
	if o := trace(t, ix, pols, "http://r.example/b", nil).Outcomes[0]; o.Result != routing.ResultForwarded {
		t.Errorf("/b: result %s (%s), want forwarded", o.Result, o.Reason)
	}
}
