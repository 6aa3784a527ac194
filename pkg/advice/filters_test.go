package advice_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/engine"
)

const kgwTopo = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec:
  group: gateway.kgateway.dev
  scope: Namespaced
  names: {kind: TrafficPolicy, plural: trafficpolicies}
  versions: [{name: v1alpha1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: by-filter, namespace: default}
spec:
  timeouts: {request: 3s}
`

// TestCreatedRouteWithFilter: a route being created whose rule's
// ExtensionRef filter names a kgateway TrafficPolicy (a kind attached by
// filters) is told that policy will reach it; a route naming none is not.
func TestCreatedRouteWithFilter(t *testing.T) {
	res := engine.Compute(read(t, kgwTopo), engine.Options{})
	route := read(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [{name: g1}]
  rules:
  - filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: by-filter}}]
    backendRefs: [{name: s1, port: 80}]
`)[0].Object
	got := advice.Created(res, route, ref("HTTPRoute", "default", "r1"), nil)
	if len(got) == 0 || !strings.Contains(got[0], "TrafficPolicy default/by-filter (timeouts.request)") {
		t.Errorf("a route whose rule's ExtensionRef filter names TrafficPolicy default/by-filter: %q", got)
	}
	plain := route.DeepCopy()
	_ = unstructured.SetNestedSlice(plain.Object, []any{map[string]any{"backendRefs": []any{map[string]any{"name": "s1", "port": int64(80)}}}}, "spec", "rules")
	if got := advice.Created(res, plain, ref("HTTPRoute", "default", "r1"), nil); len(got) != 0 {
		t.Errorf("a route naming no policy: %q", got)
	}
}
