package routing_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// BenchmarkTrace measures one trace (listener selection, matching across
// the listener's 200 routes, filters, backends, why-not for every other
// route, and the effective policies of the request's context) on the
// engine issue's large topology, after the engine ran and the index was
// built: G=50 Gateways of L=64 listeners, R=10,000 routes, S=10,000
// Services, P=5,000 policies.
func BenchmarkTrace(b *testing.B) {
	p := gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}
	var objs []engine.Object
	var us []*unstructured.Unstructured
	for _, u := range append(gen.Topology(p), gen.Policies(p, 5000)...) {
		objs = append(objs, engine.Object{Object: u})
		us = append(us, u)
	}
	res := engine.Compute(objs, engine.Options{})
	ix, probs := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	if len(probs) > 0 {
		b.Fatal(probs[0].Error())
	}
	pols := routing.NewPolicies(res)
	// Requests spread over routes, Gateways and listeners.
	// Each request is sent to the address of its route's Gateway (every
	// Gateway has listeners on the same ports without hostnames, so
	// without --gateway all 50 would answer).
	var reqs []*routing.Request
	var gws []*topology.Ref
	for i := range 100 {
		r := i * 97 % p.Routes
		req, err := routing.ParseRequest(fmt.Sprintf("http://h:%d/route-%d/%d/x", 8000+i%p.ListenersPerGateway, r, i%2), "", nil)
		if err != nil {
			b.Fatal(err)
		}
		reqs = append(reqs, req)
		gws = append(gws, &topology.Ref{Namespace: gen.InfraNamespace, Name: fmt.Sprintf("gw-%d", r%p.Gateways)})
	}
	policies, notMatched := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t, err := ix.Trace(reqs[i%len(reqs)], gws[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		pols.AddPolicies(t)
		if len(t.Outcomes) != 1 || t.Outcomes[0].Result != routing.ResultForwarded {
			b.Fatalf("%s: %d outcomes, want one forwarded", reqs[i%len(reqs)].URL(), len(t.Outcomes))
		}
		policies += len(t.Outcomes[0].EffectivePolicies)
		notMatched += len(t.NotMatched)
		i++
	}
	b.ReportMetric(float64(policies)/float64(i), "policies/trace")
	b.ReportMetric(float64(notMatched)/float64(i), "why-nots/trace")
}

// BenchmarkBuildDelegationDiamond measures building the index (engine
// run before) over a chain of routes each delegating to two children,
// 16 levels deep: 131,072 delegation paths, bounded to maxDelegatedEntries
// matches.
func BenchmarkBuildDelegationDiamond(b *testing.B) {
	us, res := chainResult(16)
	b.ResetTimer()
	for b.Loop() {
		routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	}
}

// BenchmarkBuildDelegationInheritChain measures building the index
// (engine run before) over gen.InheritChain(depth, 4): routes inheriting
// their parent's matcher, whose joined matches multiply by 4 a level,
// bounded to maxDelegatedEntries.
func BenchmarkBuildDelegationInheritChain(b *testing.B) {
	for _, depth := range []int{8, 16} {
		us := gen.InheritChain(depth, 4)
		objs := make([]engine.Object, len(us))
		for i, u := range us {
			objs[i] = engine.Object{Object: u}
		}
		res := engine.Compute(objs, engine.Options{})
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
			}
		})
	}
}
