package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// An additive kind with the merge-disjoint same-level rule, declared by
// annotations (no conflict scope): at one target the newer of two policies
// setting a conflict field is Conflicted there and left out, while every
// other policy applies side by side; at its other targets it applies.
func TestAdditiveMergeDisjoint(t *testing.T) {
	c := strings.Replace(crd("example.com", "LimitPolicy", "limitpolicies"), "metadata: {name: limitpolicies.example.com}", `metadata:
  name: limitpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: direct}
  annotations: {attache.dev/composition: additive, attache.dev/same-level: merge-disjoint, attache.dev/conflict-fields: mode, attache.dev/target-kinds: HTTPRoute}`, 1)
	route := func(names ...string) string {
		var refs []string
		for _, n := range names {
			refs = append(refs, "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "+n+"}")
		}
		return "targetRefs: [" + strings.Join(refs, ", ") + "]\n"
	}
	r2 := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r2, namespace: default}\nspec: {parentRefs: [{name: g1}], rules: [{}]}\n"
	res := compute(t, engine.Options{}, c, egTopo, r2,
		pol("example.com/v1alpha1", "LimitPolicy", "a", 0, route("r1")+"mode: strict\nlimits: [1]"),
		pol("example.com/v1alpha1", "LimitPolicy", "b", 1, route("r1", "r2")+"mode: loose\nlimits: [2]"),
		pol("example.com/v1alpha1", "LimitPolicy", "c", 2, route("r1")+"limits: [3]"))
	if len(res.Kinds) != 1 {
		t.Fatalf("kinds %v, problems %v", res.Kinds, res.Problems)
	}
	want(t, "b ancestors", ancestorsOf(t, res, "b"), []string{
		"HTTPRoute.gateway.networking.k8s.io default/r1=Conflicted",
		"HTTPRoute.gateway.networking.k8s.io default/r2=Accepted",
	})
	want(t, "c", status(t, res, "c", "Accepted"), "True/Accepted")
	want(t, "effective r1", effective(t, res, "LimitPolicy", rule("r1", "")), []string{`{"default/a":{"limits":[1],"mode":"strict"},"default/c":{"limits":[3]}}`})
	want(t, "effective r2", effective(t, res, "LimitPolicy", rule("r2", "")), []string{`{"default/b":{"limits":[2],"mode":"loose"}}`})
}
