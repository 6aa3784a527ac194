package routing

import (
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// A delegating rule whose paths reach more matches than the bound keeps
// exactly the bound.
func TestExpandKeepsTheBound(t *testing.T) {
	us := gen.DelegationChain(14)
	objs := make([]engine.Object, len(us))
	for i, u := range us {
		objs[i] = engine.Object{Object: u}
	}
	res := engine.Compute(objs, engine.Options{})
	ix, _ := Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	top := ix.routes[topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "top"}]
	if got := len(ix.entriesOf(top.rules[0])); got != maxDelegatedEntries {
		t.Errorf("%d entries, want %d", got, maxDelegatedEntries)
	}
}

// Under inherit-parent-matcher the matches a rule delegates with multiply
// by 4 a level in gen.InheritChain(12, 4): they are bounded too, and the
// rule at its top expands to exactly the bound.
func TestExpandBoundsJoinedMatches(t *testing.T) {
	us := gen.InheritChain(12, 4)
	objs := make([]engine.Object, len(us))
	for i, u := range us {
		objs[i] = engine.Object{Object: u}
	}
	res := engine.Compute(objs, engine.Options{})
	ix, _ := Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	top := ix.routes[topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r0"}]
	if got := len(ix.entriesOf(top.rules[0])); got != maxDelegatedEntries {
		t.Errorf("%d entries, want %d", got, maxDelegatedEntries)
	}
}
