package engine

import (
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestPathCount: PathCount, counted without building the paths, is the
// number of paths Paths yields, in every context of a topology where
// contexts have many paths (routes on several of 8 listeners).
func TestPathCount(t *testing.T) {
	p := gen.Params{Gateways: 2, ListenersPerGateway: 8, Routes: 60, Services: 40, Namespaces: 4, Seed: 3}
	var objs []Object
	for _, u := range append(gen.Topology(p), gen.Policies(p, 40)...) {
		objs = append(objs, Object{Object: u})
	}
	res := Compute(objs, Options{})
	contexts, many := 0, 0
	for _, e := range res.Effective {
		for _, c := range e.Contexts {
			n := 0
			c.Paths(func([]topology.Ref) bool { n++; return true })
			if got := c.PathCount(); got != n {
				t.Fatalf("%s: PathCount %d, Paths yields %d", e.Target, got, n)
			}
			contexts++
			if n > 1 {
				many++
			}
		}
	}
	if contexts == 0 || many == 0 {
		t.Fatalf("%d contexts, %d with several paths: nothing checked", contexts, many)
	}
}
