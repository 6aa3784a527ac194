package effectivepolicy

import (
	"sort"
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
)

// firstCase is issue 9's first case: 1 Gateway x 63 listeners, 500 routes,
// 500 Services in 10 namespaces (with 100 policies).
var firstCase = gen.Params{Gateways: 1, ListenersPerGateway: 63, Routes: 500, Services: 500, Namespaces: 10, Seed: 1}

func genResult(p gen.Params, policies int) *engine.Result {
	var objs []engine.Object
	for _, u := range append(gen.Topology(p), gen.Policies(p, policies)...) {
		objs = append(objs, engine.Object{Object: u})
	}
	return engine.Compute(objs, engine.Options{})
}

// TestSizesAtScale renders the entries of issue 9's three cases: the
// median under 7 KiB (the object as served adds about 1 KiB of metadata to
// stay under issue 9's 8 KiB), every entry within Limits.Bytes.
func TestSizesAtScale(t *testing.T) {
	for _, c := range []struct {
		name     string
		p        gen.Params
		policies int
	}{
		{"first", firstCase, 100},
		{"second", gen.Params{Gateways: 10, ListenersPerGateway: 16, Routes: 2000, Services: 2000, Namespaces: 20, Seed: 1}, 1000},
		{"large", gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}, 5000},
	} {
		t.Run(c.name, func(t *testing.T) {
			entries := Build(genResult(c.p, c.policies), "attache.dev/test", nil, nil, Limits{})
			var sizes []int
			for _, e := range entries {
				sizes = append(sizes, len(e.JSON()))
			}
			sort.Ints(sizes)
			med, max := sizes[len(sizes)/2], sizes[len(sizes)-1]
			t.Logf("%d entries, median %d B, max %d B", len(sizes), med, max)
			if med >= 7<<10 {
				t.Errorf("median entry %d bytes, want under 7 KiB", med)
			}
			if max > DefaultLimits.Bytes {
				t.Errorf("largest entry %d bytes, over Limits.Bytes %d", max, DefaultLimits.Bytes)
			}
		})
	}
}
