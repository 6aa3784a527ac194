package gen_test

import (
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPoliciesTargetsExist checks that every targetRef of the generated
// policies names an object or section of the generated Topology, rule
// sections included (unnamed rules are rule-1 and rule-2).
func TestPoliciesTargetsExist(t *testing.T) {
	p := gen.Params{Gateways: 3, ListenersPerGateway: 2, Routes: 20, Services: 20, Namespaces: 3, Seed: 1}
	b := topology.NewBuilder()
	if _, probs := gatewayapi.Add(b, gen.Topology(p)); len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	g, _ := b.Build()
	rules := map[string]int{}
	for _, u := range gen.Policies(p, 400)[1:] {
		refs, _, err := unstructured.NestedSlice(u.Object, "spec", "targetRefs")
		if err != nil || len(refs) == 0 {
			t.Fatalf("%s: targetRefs: %v %v", u.GetName(), refs, err)
		}
		for _, r := range refs {
			m := r.(map[string]any)
			ref := topology.Ref{Group: m["group"].(string), Kind: m["kind"].(string), Name: m["name"].(string)}
			if ref.Kind != "GatewayClass" && ref.Kind != "Namespace" {
				ref.Namespace = u.GetNamespace()
			}
			if s, ok := m["sectionName"].(string); ok {
				ref.SectionName = s
				if ref.Kind == "HTTPRoute" {
					rules[s]++
				}
			}
			if _, ok := g.Lookup(ref); !ok {
				t.Errorf("%s targets %s, which is not in the topology", u.GetName(), ref)
			}
		}
	}
	if rules["rule-1"] == 0 || rules["rule-2"] == 0 || len(rules) != 2 {
		t.Errorf("rule targets %v, want both rule-1 and rule-2 and nothing else", rules)
	}
}
