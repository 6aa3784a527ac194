package engine

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/delegation"
	"github.com/attache-dev/attache/pkg/topology"
)

// Match lists differing in any part (or in being partial) get ids of
// their own; equal ones share one, and none is noList or unjudged.
func TestAdmissionIntern(t *testing.T) {
	a := newAdmission(&topology.Graph{})
	m := delegation.Match{PathType: gwv1.PathMatchPathPrefix, Path: "/a", Method: "GET",
		Headers: []delegation.Value{{Name: "h", Value: "1"}}, Query: []delegation.Value{{Name: "q", Value: "1"}}}
	variants := [][]delegation.Match{{m}, {m, m}, {}}
	for _, f := range []func(*delegation.Match){
		func(x *delegation.Match) { x.PathType = gwv1.PathMatchExact },
		func(x *delegation.Match) { x.Path = "/b" },
		func(x *delegation.Match) { x.Method = "" },
		func(x *delegation.Match) { x.Path, x.Method = "/ab", "c" }, // no concatenation
		func(x *delegation.Match) { x.Path, x.Method = "/a", "bc" }, // to confuse them
		func(x *delegation.Match) { x.Headers = []delegation.Value{{Name: "h", Value: "2"}} },
		func(x *delegation.Match) { x.Headers = []delegation.Value{{Name: "h", Value: "1", Regex: true}} },
		func(x *delegation.Match) { x.Headers = []delegation.Value{{Name: "g", Value: "1"}} },
		func(x *delegation.Match) { x.Headers = nil },
		func(x *delegation.Match) { x.Query = []delegation.Value{{Name: "q", Value: "2"}} },
		func(x *delegation.Match) { x.Headers, x.Query = x.Query, x.Headers }, // same values, other places
		func(x *delegation.Match) { x.Headers, x.Query = nil, append(x.Headers, x.Query...) },
	} {
		v := m
		f(&v)
		variants = append(variants, []delegation.Match{v})
	}
	seen := map[int32]int{}
	for i, ms := range variants {
		for _, partial := range []bool{false, true} {
			id := a.intern(ms, partial)
			if j, dup := seen[id]; dup || id == noList || id == unjudged {
				t.Errorf("variant %d (partial %v): id %d (variant %d's)", i, partial, id, j)
			}
			seen[id] = i
			if again := a.intern(append([]delegation.Match(nil), ms...), partial); again != id {
				t.Errorf("variant %d interned again: %d, want %d", i, again, id)
			}
		}
	}
}
