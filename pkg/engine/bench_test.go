package engine_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
)

// benchCase is a generated topology with policies spread over every level
// and every strategy.
type benchCase struct {
	name   string
	params gen.Params
	p      int
	// listeners, when > 0, is the number of listener policies (else the
	// generator's density of one per 10 listeners).
	listeners int
}

var benchCases = []benchCase{
	{"G=1,L=16,R=1000,S=1000,P=500", gen.Params{Gateways: 1, ListenersPerGateway: 16, Routes: 1000, Services: 1000, Namespaces: 10, Seed: 1}, 500, 0},
	// Worst case: 25 policies on 16 listeners make every listener a
	// distinct context, so every route has 16 contexts.
	{"G=1,L=16,R=1000,S=1000,P=500,dense-listeners", gen.Params{Gateways: 1, ListenersPerGateway: 16, Routes: 1000, Services: 1000, Namespaces: 10, Seed: 1}, 500, 25},
	{"G=50,L=64,R=10000,S=10000,P=5000", gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}, 5000, 0},
}

// BenchmarkCompute measures the full computation: topology, effective
// policies and status, from unstructured objects.
func BenchmarkCompute(b *testing.B) {
	for _, bc := range benchCases {
		objs := benchObjects(bc)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var res *engine.Result
			for b.Loop() {
				res = engine.Compute(objs, engine.Options{})
			}
			b.StopTimer()
			if len(res.Problems) > 0 {
				b.Fatalf("problems: %v", res.Problems[0])
			}
			ctx := 0
			for _, e := range res.Effective {
				ctx += len(e.Contexts)
			}
			b.ReportMetric(float64(len(res.Effective)), "targets")
			b.ReportMetric(float64(ctx), "contexts")
		})
	}
}

func benchObjects(bc benchCase) []engine.Object {
	var objs []engine.Object
	for _, u := range gen.Topology(bc.params) {
		objs = append(objs, engine.Object{Object: u})
	}
	pols := gen.Policies(bc.params, bc.p)
	if bc.listeners > 0 {
		pols = gen.PoliciesWithListeners(bc.params, bc.p, bc.listeners)
	}
	for _, u := range pols {
		objs = append(objs, engine.Object{Object: u})
	}
	return objs
}

// TestBenchObjectsAreSound guards the benchmark against measuring nothing:
// every policy must be accepted and most must take effect.
func TestBenchObjectsAreSound(t *testing.T) {
	bc := benchCase{"small", gen.Params{Gateways: 2, ListenersPerGateway: 4, Routes: 40, Services: 20, Namespaces: 4, Seed: 1}, 60, 3}
	res := engine.Compute(benchObjects(bc), engine.Options{})
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	if len(res.Policies) != 60 {
		t.Fatalf("got %d policies, want 60", len(res.Policies))
	}
	programmed := 0
	for _, p := range res.Policies {
		if p.Conditions[0].Status != "True" {
			t.Errorf("%v not accepted: %v", p.Policy.Ref, p.Conditions[0])
		}
		if len(p.Affects) > 0 {
			programmed++
		}
	}
	if programmed < 30 {
		t.Errorf("only %d of 60 policies affect anything", programmed)
	}
	if len(res.Effective) != 20 {
		t.Errorf("got %d effective targets, want every Service (20)", len(res.Effective))
	}
}

// TestParallelFoldIsDeterministic checks that folding stacks on several
// goroutines gives exactly what one goroutine gives (run it with -race).
func TestParallelFoldIsDeterministic(t *testing.T) {
	bc := benchCase{"par", gen.Params{Gateways: 2, ListenersPerGateway: 8, Routes: 300, Services: 150, Namespaces: 5, Seed: 3}, 200, 12}
	objs := benchObjects(bc)
	render := func(procs int) string {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		res := engine.Compute(objs, engine.Options{})
		b, err := json.Marshal(report.Build(res, "", nil))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seq, par := render(1), render(4)
	if seq != par {
		t.Fatal("parallel folding changed the result")
	}
	if !strings.Contains(seq, `"outcome":"partial"`) {
		t.Fatal("the input does not exercise merges")
	}
}
