package gen_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// edgeKind classifies an edge by the kinds of its ends, "#" marking a
// section: "Gateway# -> HTTPRoute" is listener -> route.
func edgeKind(parent, child topology.Ref) string {
	k := func(r topology.Ref) string {
		if r.IsSection() {
			return r.Kind + "#"
		}
		return r.Kind
	}
	return k(parent) + " -> " + k(child)
}

func TestTopologyCounts(t *testing.T) {
	cases := []gen.Params{
		{Gateways: 2, ListenersPerGateway: 3, Routes: 10, Services: 5, Namespaces: 3, Seed: 1},
		{Gateways: 3, ListenersPerGateway: 1, Routes: 7, Services: 14, Namespaces: 2, Seed: 2}, // rules = Services
		{Gateways: 1, ListenersPerGateway: 2, Routes: 2, Services: 9, Namespaces: 4, Seed: 3},  // too few rules for every Service
		{Gateways: 0, ListenersPerGateway: 4, Routes: 3, Services: 0, Namespaces: 5, Seed: 4},  // no Gateway, no Service
	}
	for _, p := range cases {
		t.Run(fmt.Sprintf("%+v", p), func(t *testing.T) {
			b := topology.NewBuilder()
			_, probs := gatewayapi.Add(b, gen.Topology(p))
			if len(probs) != 0 {
				t.Fatalf("problems: %v", probs)
			}
			g, cycles := b.Build()
			if len(cycles) != 0 {
				t.Fatalf("cycles: %v", cycles)
			}
			got := map[string]int{}
			for i := range g.Len() {
				n := g.Node(topology.NodeID(i))
				for _, c := range n.Children {
					got[edgeKind(n.Ref, g.Node(c).Ref)]++
				}
			}

			// Rules with a backend: those of routes in namespaces holding a
			// Service. Services used: per namespace, min(Services, rules).
			rulesWithBackend, servicesUsed := 0, 0
			for n := range p.Namespaces {
				routes := p.Routes/p.Namespaces + b2i(n < p.Routes%p.Namespaces)
				svcs := p.Services/p.Namespaces + b2i(n < p.Services%p.Namespaces)
				if svcs > 0 {
					rulesWithBackend += 2 * routes
				}
				servicesUsed += min(svcs, 2*routes)
			}
			want := map[string]int{
				"GatewayClass -> Gateway": p.Gateways,
				"Gateway -> Gateway#":     p.Gateways * p.ListenersPerGateway,
				"Gateway# -> HTTPRoute":   p.Routes * p.ListenersPerGateway * b2i(p.Gateways > 0),
				"HTTPRoute -> HTTPRoute#": 2 * p.Routes,
				"HTTPRoute# -> Service":   rulesWithBackend,
				"Service -> Service#":     2 * p.Services,
			}
			for k, v := range want {
				if v == 0 {
					delete(want, k)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("edges by kind:\n got %v\nwant %v", got, want)
			}

			used := 0
			for _, id := range g.ByKind(topology.KindService) {
				if len(g.Node(id).Parents) > 0 {
					used++
				}
			}
			if used != servicesUsed {
				t.Errorf("%d Services are backends, want %d", used, servicesUsed)
			}
			if ns := g.ByKind(topology.KindNamespace); len(ns) != p.Namespaces+1 {
				t.Errorf("%d namespaces, want %d", len(ns), p.Namespaces+1)
			} else {
				for _, id := range ns {
					if len(g.Node(id).Labels) == 0 {
						t.Errorf("%s has no labels", g.Node(id).Ref)
					}
				}
			}
			wantNodes := 1 + (p.Namespaces + 1) + p.Gateways*(1+p.ListenersPerGateway) + 3*p.Routes + 3*p.Services
			if g.Len() != wantNodes {
				t.Errorf("%d nodes, want %d", g.Len(), wantNodes)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestTopologyDeterministic(t *testing.T) {
	p := gen.Params{Gateways: 2, ListenersPerGateway: 2, Routes: 20, Services: 10, Namespaces: 4, Seed: 42}
	a, b := gen.Topology(p), gen.Topology(p)
	if !reflect.DeepEqual(a, b) {
		t.Error("same Params, different objects")
	}
	p.Seed = 43
	if reflect.DeepEqual(a, gen.Topology(p)) {
		t.Error("another seed gives the same objects")
	}
}

// BenchmarkAddBuild measures gatewayapi.Add and Builder.Build over a large
// topology: 50 Gateways of 64 listeners, 10,000 routes (640,000
// listener->route edges) and 10,000 Services.
func BenchmarkAddBuild(b *testing.B) {
	objs := gen.Topology(gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10_000, Services: 10_000, Namespaces: 100, Seed: 1})
	b.ReportAllocs()
	for b.Loop() {
		tb := topology.NewBuilder()
		if _, probs := gatewayapi.Add(tb, objs); len(probs) != 0 {
			b.Fatalf("problems: %v", probs[0])
		}
		if _, cycles := tb.Build(); len(cycles) != 0 {
			b.Fatalf("cycles: %v", cycles[0])
		}
	}
}
