package engine_test

import (
	"fmt"
	"sort"
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

// An additive kind's inherited fields have one value per context: the
// most specific policy giving one that is not false, 0 or "" (at one
// level, the first in the established order) keeps it, and every other
// policy setting it loses it there; a policy left with nothing is out of
// the context's spec, and a policy at two levels does not lose to itself.
func TestAdditiveInheritedFields(t *testing.T) {
	c := strings.Replace(crd("example.com", "LimitPolicy", "limitpolicies"), "metadata: {name: limitpolicies.example.com}", `metadata:
  name: limitpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: inherited}
  annotations: {attache.dev/composition: additive, attache.dev/inherited-fields: "mode, opts.code", attache.dev/target-kinds: "Gateway,HTTPRoute", attache.dev/hierarchy: "Gateway,HTTPRoute"}`, 1)
	g1 := "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]\n"
	r1 := "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\n"
	r2 := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r2, namespace: default}\nspec: {parentRefs: [{name: g1}], rules: [{}]}\n"
	const v = "example.com/v1alpha1"
	docs := []string{c, egTopo, r2,
		pol(v, "LimitPolicy", "g-a", 0, g1+"mode: strict\nopts: {code: 429}\nlimits: [1]"),
		pol(v, "LimitPolicy", "g-b", 1, g1+"mode: loose\nlimits: [2]"),
		pol(v, "LimitPolicy", "g-only", 2, g1+"opts: {code: 503}"),
		pol(v, "LimitPolicy", "r-a", 3, r1+"mode: \"\"\nopts: {code: 466}\nlimits: [3]"),
		pol(v, "LimitPolicy", "twice", 4, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]\nopts: {code: 401}"),
	}
	res := compute(t, engine.Options{}, docs...)
	if len(res.Kinds) != 1 {
		t.Fatalf("kinds %v, problems %v", res.Kinds, res.Problems)
	}
	want(t, "effective r1", effective(t, res, "LimitPolicy", rule("r1", "")), []string{`{"default/g-a":{"limits":[1],"mode":"strict"},"default/g-b":{"limits":[2]},"default/r-a":{"limits":[3],"opts":{"code":466}}}`})
	want(t, "effective r2", effective(t, res, "LimitPolicy", rule("r2", "")), []string{`{"default/g-a":{"limits":[1],"mode":"strict"},"default/g-b":{"limits":[2]},"default/twice":{"opts":{"code":401}}}`})
	lossesAt := func(res *engine.Result, route string) []string {
		var out []string
		for _, e := range res.Effective {
			if e.Target != rule(route, "") {
				continue
			}
			for _, cx := range e.Contexts {
				for _, se := range cx.Stack {
					for _, l := range se.Lost {
						out = append(out, se.Policy.Name+"@"+se.At.Kind+" "+l.Path+" to "+l.To[0].Policy.Name+" ("+se.Outcome+")")
					}
				}
			}
		}
		sort.Strings(out)
		return out
	}
	want(t, "losses r1", lossesAt(res, "r1"), []string{
		`g-a@Gateway ["default/g-a"].opts.code to r-a (partial)`,
		`g-b@Gateway ["default/g-b"].mode to g-a (partial)`,
		`g-only@Gateway ["default/g-only"].opts.code to r-a (none)`,
		`r-a@HTTPRoute ["default/r-a"].mode to g-a (partial)`,
		`twice@Gateway ["default/twice"].opts.code to r-a (none)`,
	})
	want(t, "losses r2", lossesAt(res, "r2"), []string{
		`g-a@Gateway ["default/g-a"].opts.code to twice (partial)`,
		`g-b@Gateway ["default/g-b"].mode to g-a (partial)`,
		`g-only@Gateway ["default/g-only"].opts.code to twice (none)`,
	})
	// Incremental: r-a's code removed gives r1 g-a's back; the result is
	// Compute's, losses included.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	docs[6] = pol(v, "LimitPolicy", "r-a", 3, r1+"mode: \"\"\nlimits: [3]")
	got, full := in.Compute(decodeDocs(t, docs...)), engine.Compute(decodeDocs(t, docs...), engine.Options{})
	want(t, "incremental r1", effective(t, got, "LimitPolicy", rule("r1", "")), []string{`{"default/g-a":{"limits":[1],"mode":"strict","opts":{"code":429}},"default/g-b":{"limits":[2]},"default/r-a":{"limits":[3]}}`})
	want(t, "incremental = compute", lossesAt(got, "r1"), lossesAt(full, "r1"))

	// Enough routes for the stacks to be folded in parallel (prefold):
	// each route's own code beats the Gateway's there.
	docs = []string{c, egTopo, pol(v, "LimitPolicy", "g-a", 0, g1+"mode: strict\nopts: {code: 429}")}
	for i := range 200 {
		n := fmt.Sprintf("route-%d", i)
		docs = append(docs, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: "+n+", namespace: default}\nspec: {parentRefs: [{name: g1}], rules: [{}]}\n",
			pol(v, "LimitPolicy", "p-"+n, 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "+n+"}]\n"+fmt.Sprintf("opts: {code: %d}", 400+i)))
	}
	res = compute(t, engine.Options{}, docs...)
	for i := range 200 {
		n := fmt.Sprintf("route-%d", i)
		want(t, "effective "+n, effective(t, res, "LimitPolicy", rule(n, "")), []string{fmt.Sprintf(`{"default/g-a":{"mode":"strict"},"default/p-%s":{"opts":{"code":%d}}}`, n, 400+i)})
	}
}

// An additive kind's level-inherited fields come from the most specific
// level that gives them a value other than false, 0, "" or empty: every
// policy of that level keeps its own, side by side, and those of the other
// levels lose theirs there; an empty value at a more specific level does
// not count, and a policy at two levels does not lose to itself.
func TestAdditiveLevelInheritedFields(t *testing.T) {
	c := strings.Replace(crd("example.com", "LimitPolicy", "limitpolicies"), "metadata: {name: limitpolicies.example.com}", `metadata:
  name: limitpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: inherited}
  annotations: {attache.dev/composition: additive, attache.dev/level-inherited-fields: "opts.limits", attache.dev/target-kinds: "Gateway,HTTPRoute", attache.dev/hierarchy: "Gateway,HTTPRoute"}`, 1)
	g1 := "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]\n"
	r1 := "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\n"
	r2 := "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]\n"
	route2 := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r2, namespace: default}\nspec: {parentRefs: [{name: g1}], rules: [{}]}\n"
	const v = "example.com/v1alpha1"
	docs := []string{c, egTopo, route2,
		pol(v, "LimitPolicy", "g-a", 0, g1+"opts: {limits: [1], mode: strict}"),
		pol(v, "LimitPolicy", "g-b", 1, g1+"opts: {limits: [2]}"),
		pol(v, "LimitPolicy", "r-a", 2, r1+"opts: {limits: [3]}"),
		pol(v, "LimitPolicy", "r-b", 3, r1+"opts: {limits: [4]}"),
		pol(v, "LimitPolicy", "r-empty", 4, r2+"opts: {limits: [], mode: loose}"),
		pol(v, "LimitPolicy", "twice", 5, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\nopts: {limits: [9]}"),
	}
	res := compute(t, engine.Options{}, docs...)
	if len(res.Kinds) != 1 {
		t.Fatalf("kinds %v, problems %v", res.Kinds, res.Problems)
	}
	// r1: the route level's three policies (twice is at both levels); the
	// Gateway level's limits are out, g-a's mode stays.
	want(t, "effective r1", effective(t, res, "LimitPolicy", rule("r1", "")), []string{`{"default/g-a":{"opts":{"mode":"strict"}},"default/r-a":{"opts":{"limits":[3]}},"default/r-b":{"opts":{"limits":[4]}},"default/twice":{"opts":{"limits":[9]}}}`})
	// r2: its policy's empty list gives way to the Gateway level's.
	want(t, "effective r2", effective(t, res, "LimitPolicy", rule("r2", "")), []string{`{"default/g-a":{"opts":{"limits":[1],"mode":"strict"}},"default/g-b":{"opts":{"limits":[2]}},"default/r-empty":{"opts":{"mode":"loose"}},"default/twice":{"opts":{"limits":[9]}}}`})
	want(t, "losses", lossList(res, ""), []string{
		`r1: g-a ["default/g-a"].opts.limits to r-a,r-b,twice (partial)`,
		`r1: g-b ["default/g-b"].opts.limits to r-a,r-b,twice (none)`,
		`r2: r-empty ["default/r-empty"].opts.limits to g-a,g-b,twice (partial)`,
	})
	// Incremental: r-a and r-b deleted, r1 keeps twice's limits only (it
	// is still at the route level there), as Compute gives it.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	docs = append(docs[:5], docs[7:]...)
	got, full := in.Compute(decodeDocs(t, docs...)), engine.Compute(decodeDocs(t, docs...), engine.Options{})
	want(t, "incremental r1", effective(t, got, "LimitPolicy", rule("r1", "")), []string{`{"default/g-a":{"opts":{"mode":"strict"}},"default/twice":{"opts":{"limits":[9]}}}`})
	want(t, "incremental = compute", effective(t, got, "LimitPolicy", rule("r1", "")), effective(t, full, "LimitPolicy", rule("r1", "")))
}

// lossList lists, sorted, every field lost in res's effective policies of
// kind (every kind when ""): "target: policy path to winner,... (outcome)".
func lossList(res *engine.Result, kind string) []string {
	var out []string
	for _, e := range res.Effective {
		if kind != "" && e.Kind.GroupKind.Kind != kind {
			continue
		}
		for _, cx := range e.Contexts {
			for _, se := range cx.Stack {
				for _, l := range se.Lost {
					var to []string
					for _, w := range l.To {
						to = append(to, w.Policy.Name)
					}
					out = append(out, e.Target.Name+": "+se.Policy.Name+" "+l.Path+" to "+strings.Join(to, ",")+" ("+se.Outcome+")")
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
