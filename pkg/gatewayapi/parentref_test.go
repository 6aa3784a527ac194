package gatewayapi

import (
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

func TestParentRefOf(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]any
		want topology.Ref
	}{
		{map[string]any{"name": "g"}, topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "ns", Name: "g"}},
		{map[string]any{"name": "g", "namespace": "infra", "sectionName": "http"},
			topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "g", SectionName: "http"}},
		{map[string]any{"group": "", "kind": "Service", "name": "s", "namespace": ""},
			topology.Ref{Kind: "Service", Namespace: "ns", Name: "s"}},
		{map[string]any{"kind": "ListenerSet", "name": "l", "group": 3, "sectionName": 4},
			topology.Ref{Group: topology.GatewayGroup, Kind: "ListenerSet", Namespace: "ns", Name: "l"}},
	} {
		if got := ParentRefOf(tc.in, "ns"); got != tc.want {
			t.Errorf("ParentRefOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
