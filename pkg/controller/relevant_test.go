package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRelevantChangeWaypointReadiness: a status-only update of a Gateway
// matters when it gives the Gateway its first address (Istio then takes it
// for a waypoint, engine.StatusReadChanged) or changes what it says of
// its listeners (Programmed, attached routes) or, for a Gateway whose
// status says something, whether it has addresses, not when only a condition
// message changes; one of a route matters when what its parents say
// (Accepted) changes, and no other.
func TestRelevantChangeWaypointReadiness(t *testing.T) {
	c := &Controller{opts: Options{ConditionDomain: "attache.dev"}}
	obj := func(kind string, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind,
			"metadata": map[string]any{"name": "w", "namespace": "mesh"},
			"spec":     map[string]any{"gatewayClassName": "istio-waypoint"},
			"status":   status,
		}}
	}
	pending := map[string]any{"conditions": []any{map[string]any{"type": "Programmed", "status": "False", "message": "waiting"}}}
	pending2 := map[string]any{"conditions": []any{map[string]any{"type": "Programmed", "status": "False", "message": "still waiting"}}}
	ready := map[string]any{"addresses": []any{map[string]any{"value": "w.mesh"}}, "conditions": pending["conditions"]}
	listeners := func(programmed string, attached int64) map[string]any {
		return map[string]any{"listeners": []any{map[string]any{"name": "http", "attachedRoutes": attached,
			"conditions": []any{map[string]any{"type": "Programmed", "status": programmed}}}}}
	}
	addressed := func(addr string) map[string]any {
		st := listeners("True", 1)
		st["addresses"] = []any{map[string]any{"type": "IPAddress", "value": addr}}
		return st
	}
	parentsSaying := func(accepted, msg string) map[string]any {
		return map[string]any{"parents": []any{map[string]any{"controllerName": "istio.io/gateway-controller",
			"parentRef":  map[string]any{"name": "w"},
			"conditions": []any{map[string]any{"type": "Accepted", "status": accepted, "message": msg}}}}}
	}
	parents := func(accepted string) map[string]any { return parentsSaying(accepted, "") }
	for _, tc := range []struct {
		what     string
		kind     string
		old, new map[string]any
		want     bool
	}{
		{"Gateway gets an address", "Gateway", pending, ready, true},
		{"Gateway loses its address", "Gateway", ready, pending, true},
		{"Gateway condition message", "Gateway", pending, pending2, false},
		{"HTTPRoute status", "HTTPRoute", pending, ready, false},
		// Kuadrant's path readiness and DNSPolicy's attached routes.
		{"listener Programmed", "Gateway", listeners("True", 1), listeners("False", 1), true},
		{"listener attached routes", "Gateway", listeners("True", 1), listeners("True", 0), true},
		// DNSPolicy's Gateway addresses (a status without conditions:
		// no waypoint readiness to read).
		{"listed Gateway gets an address", "Gateway", listeners("True", 1), addressed("192.0.2.1"), true},
		{"Gateway address moves", "Gateway", addressed("192.0.2.1"), addressed("192.0.2.2"), false},
		{"route Accepted", "HTTPRoute", parents("True"), parents("False"), true},
		{"route parent message", "HTTPRoute", parents("True"), parentsSaying("True", "again"), false},
	} {
		if got := c.relevantChange(obj(tc.kind, tc.old), obj(tc.kind, tc.new)); got != tc.want {
			t.Errorf("%s: relevant %v, want %v", tc.what, got, tc.want)
		}
	}
}
