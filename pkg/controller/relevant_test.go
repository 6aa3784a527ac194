package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRelevantChangeWaypointReadiness: a status-only update of a Gateway
// matters when it gives the Gateway its first address (Istio then takes it
// for a waypoint, engine.StatusReadChanged), not when only a condition
// changes; a status-only update of another kind never does.
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
	} {
		if got := c.relevantChange(obj(tc.kind, tc.old), obj(tc.kind, tc.new)); got != tc.want {
			t.Errorf("%s: relevant %v, want %v", tc.what, got, tc.want)
		}
	}
}
