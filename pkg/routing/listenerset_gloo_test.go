package routing_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
)

// glooXLS: GatewayClass gloo of CONTROLLER, Gateway example-gateway
// (HTTP on 8080) admitting the XListenerSets of its namespace,
// XListenerSet foo-listenerset (HTTP on 8081) and HTTPRoute example-route
// naming the Gateway only, written after Gloo Gateway's listener-sets
// translator inputs.
const glooXLS = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gloo}
spec: {controllerName: CONTROLLER}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway, namespace: default}
spec:
  gatewayClassName: gloo
  listeners: [{name: http, protocol: HTTP, port: 8080}]
  allowedListeners: {namespaces: {from: Same}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: foo-listenerset, namespace: default}
spec:
  parentRef: {name: example-gateway, kind: Gateway, group: gateway.networking.k8s.io}
  listeners: [{name: foo, protocol: HTTP, port: 8081}]
---
apiVersion: v1
kind: Service
metadata: {name: example-svc, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: example-route, namespace: default}
spec:
  parentRefs: [{name: example-gateway}]
  hostnames: [example.com]
  rules: [{name: all, backendRefs: [{name: example-svc, port: 80}]}]
`

// attache trace follows the Gateway's implementation: under Gloo Gateway
// a request to the XListenerSet's port reaches the route naming the
// Gateway (Gloo's golden listener-sets-proxy.yaml routes example.com on
// 8081 and 8082); under kgateway no route serves it there.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/query/query.go
// (isParentRefForResource), translator/testutils/outputs/
// listener-sets-proxy.yaml.
func TestTraceGatewayRouteOnXListenerSetUnderGloo(t *testing.T) {
	for _, tc := range []struct {
		controller string
		result     string
	}{
		{"solo.io/gloo-gateway", routing.ResultForwarded},
		{"kgateway.dev/kgateway", routing.ResultNotFound},
	} {
		t.Run(tc.controller, func(t *testing.T) {
			ix, pols := build(t, strings.Replace(glooXLS, "CONTROLLER", tc.controller, 1), true)
			o := trace(t, ix, pols, "http://example.com:8081/", nil).Outcomes[0]
			if o.Result != tc.result {
				t.Errorf("result %s (%s), want %s", o.Result, o.Reason, tc.result)
			}
			if tc.result == routing.ResultForwarded && (o.Route == nil || o.Route.Name != "example-route") {
				t.Errorf("route %v, want example-route", o.Route)
			}
		})
	}
}
