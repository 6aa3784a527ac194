package topology

import (
	"fmt"
	"testing"
)

func ref(kind, name string) Ref { return Ref{Kind: kind, Namespace: "ns", Name: name} }

func TestBuilderDeduplicatesEdgesAcrossTheScanLimit(t *testing.T) {
	b := NewBuilder()
	child := b.AddNode(ref("Route", "r"), nil, 0)
	var parents []NodeID
	for i := range 3 * scanLimit {
		parents = append(parents, b.AddNode(ref("Listener", fmt.Sprint(i)), nil, 0))
	}
	for round := 0; round < 2; round++ { // every edge twice
		for _, p := range parents {
			b.AddEdge(p, child)
		}
	}
	b.AddEdge(child, child) // self loop: ignored
	g, cycles := b.Build()
	if len(cycles) != 0 {
		t.Fatalf("cycles: %v", cycles)
	}
	if got := len(g.Node(child).Parents); got != len(parents) {
		t.Errorf("child has %d parents, want %d", got, len(parents))
	}
	for _, p := range parents {
		if len(g.Node(p).Children) != 1 {
			t.Errorf("parent %v has children %v", g.Node(p).Ref, g.Node(p).Children)
		}
	}
}

func TestBuildBreaksCyclesAndOrdersTopologically(t *testing.T) {
	b := NewBuilder()
	svc := b.AddNode(ref("Service", "s"), nil, 0)
	route := b.AddNode(ref("HTTPRoute", "r"), nil, 0)
	rule := b.AddSection(route, "rule-0")
	b.AddEdge(svc, route)
	b.AddEdge(rule, svc) // closes svc -> route -> rule -> svc
	g, cycles := b.Build()
	if len(cycles) != 1 {
		t.Fatalf("got %d cycles, want 1: %v", len(cycles), cycles)
	}
	pos := map[NodeID]int{}
	for i, id := range g.Order() {
		pos[id] = i
	}
	if len(pos) != g.Len() {
		t.Fatalf("order has %d nodes, graph %d", len(pos), g.Len())
	}
	for id := range g.Len() {
		for _, c := range g.Node(NodeID(id)).Children {
			if pos[NodeID(id)] >= pos[c] {
				t.Errorf("%v is not before its child %v", g.Node(NodeID(id)).Ref, g.Node(c).Ref)
			}
		}
	}
	if msg := cycles[0].Error(); msg == "" {
		t.Error("empty cycle message")
	}
}

func TestSectionsAndLookup(t *testing.T) {
	b := NewBuilder()
	gw := b.AddNode(ref("Gateway", "g"), map[string]string{"a": "b"}, 3)
	l1 := b.AddSection(gw, "http")
	b.AddSection(gw, "https")
	b.AddNode(ref("Gateway", "a"), nil, 0)
	g, _ := b.Build()
	if got := len(g.Sections(gw)); got != 2 {
		t.Errorf("got %d sections, want 2", got)
	}
	n := g.Node(l1)
	if n.Ref != ref("Gateway", "g").WithSection("http") || n.Labels["a"] != "b" || n.Generation != 3 {
		t.Errorf("section node %+v does not carry its object's ref, labels and generation", n)
	}
	if id, ok := g.Lookup(ref("Gateway", "g").WithSection("https")); !ok || g.Node(id).Ref.SectionName != "https" {
		t.Errorf("lookup of a section failed")
	}
	byKind := g.ByKind(GroupKind{Kind: "Gateway"})
	if len(byKind) != 2 || g.Node(byKind[0]).Ref.Name != "a" {
		t.Errorf("ByKind returns objects only, sorted: %v", byKind)
	}
}

func TestRefStringAndParse(t *testing.T) {
	r := Ref{Group: GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "g", SectionName: "http"}
	if got, want := r.String(), "Gateway.gateway.networking.k8s.io infra/g#http"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if gk := ParseGroupKind(" HTTPRoute.gateway.networking.k8s.io "); gk != KindHTTPRoute {
		t.Errorf("ParseGroupKind = %v", gk)
	}
	if gk := ParseGroupKind("Service"); gk != KindService {
		t.Errorf("ParseGroupKind = %v", gk)
	}
	if !(Ref{Name: "a"}).Less(Ref{Name: "b"}) || (Ref{Name: "a"}).Compare(Ref{Name: "a"}) != 0 {
		t.Error("ordering is wrong")
	}
}

// TestWalk: a diamond is walked once per node, up or down, start
// included, and visit stops the walk past a node.
func TestWalk(t *testing.T) {
	b := NewBuilder()
	gw := b.AddNode(ref("Gateway", "g"), nil, 0)
	l1 := b.AddNode(ref("Listener", "a"), nil, 0)
	l2 := b.AddNode(ref("Listener", "b"), nil, 0)
	rt := b.AddNode(ref("HTTPRoute", "r"), nil, 0)
	svc := b.AddNode(ref("Service", "s"), nil, 0)
	b.AddEdge(gw, l1)
	b.AddEdge(gw, l2)
	b.AddEdge(l1, rt)
	b.AddEdge(l2, rt)
	b.AddEdge(rt, svc)
	g, _ := b.Build()
	count := func(start NodeID, next func(*Node) []NodeID, stopAt string) map[string]int {
		seen := map[string]int{}
		g.Walk([]NodeID{start}, next, func(_ NodeID, n *Node) bool {
			seen[n.Ref.Name]++
			return n.Ref.Name != stopAt
		})
		return seen
	}
	if got := count(svc, Parents, ""); len(got) != 5 || got["g"] != 1 || got["s"] != 1 {
		t.Errorf("up from the Service: %v, want every node once", got)
	}
	if got := count(gw, Children, ""); len(got) != 5 || got["r"] != 1 {
		t.Errorf("down from the Gateway: %v, want every node once", got)
	}
	if got := count(svc, Parents, "r"); len(got) != 2 {
		t.Errorf("up from the Service, stopping at the route: %v, want s and r", got)
	}
}

// Unadmitted edges order the graph as edges do (a listener before the
// routes below it either way), are not edges of the hierarchy, and one
// alongside an edge between the same nodes is dropped.
func TestUnadmittedEdges(t *testing.T) {
	b := NewBuilder()
	// The route comes first, as a later root would come first in the
	// reversed post-order without its unadmitted edge.
	route := b.AddNode(ref("HTTPRoute", "r"), nil, 0)
	gw := b.AddNode(ref("Gateway", "g"), nil, 0)
	a := b.AddSection(gw, "a")
	l := b.AddSection(gw, "b")
	b.AddEdge(a, route)
	b.AddUnadmittedEdge(a, route) // alongside the edge: dropped
	b.AddUnadmittedEdge(l, route)
	b.AddUnadmittedEdge(l, route) // duplicate
	other := b.AddNode(ref("HTTPRoute", "o"), nil, 0)
	b.AddUnadmittedEdge(l, other)
	g, cycles := b.Build()
	if len(cycles) != 0 {
		t.Fatalf("cycles: %v", cycles)
	}
	pos := map[NodeID]int{}
	for i, n := range g.Order() {
		pos[n] = i
	}
	if pos[l] > pos[other] || pos[l] > pos[route] {
		t.Errorf("order %v puts a route before listener b", g.Order())
	}
	if got := g.Node(route).Unadmitted; len(got) != 1 || got[0] != l {
		t.Errorf("route's unadmitted parents %v, want [%d]", got, l)
	}
	if got := g.Node(a).UnadmittedChildren; len(got) != 0 {
		t.Errorf("listener a keeps unadmitted children %v beside its edge", got)
	}
	if got := g.Node(route).Parents; len(got) != 1 || got[0] != a {
		t.Errorf("route's parents %v, want [%d]", got, a)
	}
	if got := AllChildren(g.Node(l)); len(got) != 2 {
		t.Errorf("AllChildren of listener b = %v, want both routes", got)
	}
}

// A listener is a section of a Gateway or of either ListenerSet kind,
// told apart by group as well as kind.
func TestIsListener(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want bool
	}{
		{Ref{Group: GatewayGroup, Kind: "Gateway", Name: "g", SectionName: "l"}, true},
		{Ref{Group: GatewayGroup, Kind: "ListenerSet", Name: "s", SectionName: "l"}, true},
		{Ref{Group: XGatewayGroup, Kind: "XListenerSet", Name: "s", SectionName: "l"}, true},
		{Ref{Group: GatewayGroup, Kind: "Gateway", Name: "g"}, false},
		{Ref{Group: XGatewayGroup, Kind: "ListenerSet", Name: "s", SectionName: "l"}, false},
		{Ref{Group: GatewayGroup, Kind: "XListenerSet", Name: "s", SectionName: "l"}, false},
		{Ref{Group: GatewayGroup, Kind: "HTTPRoute", Name: "r", SectionName: "a"}, false},
	} {
		if got := tc.ref.IsListener(); got != tc.want {
			t.Errorf("%s.IsListener() = %v, want %v", tc.ref, got, tc.want)
		}
		if got := HoldsListeners(tc.ref.GroupKind()); got != (tc.want || tc.ref.Kind == "Gateway") {
			t.Errorf("HoldsListeners(%s) = %v", tc.ref.GroupKind(), got)
		}
	}
}
