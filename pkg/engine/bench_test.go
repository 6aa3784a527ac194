package engine_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// BenchmarkIncremental measures one policy change in the large topology
// (issue 4: under 50 ms): an Incremental has computed everything once;
// each iteration edits one policy (its spec, or its target) and
// recomputes. The level of the policy bounds what a change can reach: a
// rule's policy reaches its backends, a Gateway's every route behind it,
// the GatewayClass's everything (the worst case, no cheaper than Compute).
func BenchmarkIncremental(b *testing.B) {
	bc := benchCases[2]
	objs := benchObjects(bc)
	type edit struct {
		name string
		// level picks the policy by its target; mutate makes variant v of it.
		level  func(ref map[string]any) bool
		mutate func(u *unstructured.Unstructured, v int)
	}
	setTimeout := func(u *unstructured.Unstructured, v int) {
		spec := u.Object["spec"].(map[string]any)
		for _, st := range []string{"defaults", "overrides"} {
			if body, ok := spec[st].(map[string]any); ok {
				body["timeout"] = fmt.Sprintf("%ds", 100+v)
			}
		}
	}
	kindIs := func(kind string, section bool) func(map[string]any) bool {
		return func(ref map[string]any) bool { _, s := ref["sectionName"]; return ref["kind"] == kind && s == section }
	}
	edits := []edit{
		{"spec/rule", kindIs("HTTPRoute", true), setTimeout},
		{"spec/route", kindIs("HTTPRoute", false), setTimeout},
		{"spec/service", kindIs("Service", false), setTimeout},
		{"spec/namespace", kindIs("Namespace", false), setTimeout},
		{"spec/listener", kindIs("Gateway", true), setTimeout},
		{"spec/gateway", kindIs("Gateway", false), setTimeout},
		{"retarget/route", kindIs("HTTPRoute", false), func(u *unstructured.Unstructured, v int) {
			ref := u.Object["spec"].(map[string]any)["targetRefs"].([]any)[0].(map[string]any)
			ref["name"] = fmt.Sprintf("route-%d", 100+v) // same namespace: route-i is in ns-(i mod 100)
		}},
		{"spec/gatewayclass (worst case)", kindIs("GatewayClass", false), setTimeout},
	}
	for _, ed := range edits {
		idx := -1
		for i, o := range objs {
			if o.Object.GetKind() != gen.PolicyKind {
				continue
			}
			refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
			if len(refs) == 1 && ed.level(refs[0].(map[string]any)) {
				idx = i
				break
			}
		}
		if idx < 0 {
			b.Fatalf("%s: no such policy", ed.name)
		}
		// Two variants to alternate, so that every iteration is a change.
		orig := objs[idx].Object
		var variants [2]*unstructured.Unstructured
		for v := range variants {
			variants[v] = orig.DeepCopy()
			variants[v].SetResourceVersion(fmt.Sprint(v + 1))
			ed.mutate(variants[v], v)
		}
		if ed.name == "retarget/route" {
			ns := orig.GetNamespace()
			variants[0].SetNamespace(ns)
			variants[1].SetNamespace(ns)
			for v := range variants {
				ref := variants[v].Object["spec"].(map[string]any)["targetRefs"].([]any)[0].(map[string]any)
				var r int
				fmt.Sscanf(ns, "ns-%d", &r)
				ref["name"] = fmt.Sprintf("route-%d", r+100*(1+v))
			}
		}
		b.Run(ed.name, func(b *testing.B) {
			in := engine.NewIncremental(engine.Options{})
			in.Compute(objs)
			targets := 0
			v := 0
			for b.Loop() {
				objs[idx].Object = variants[v]
				v = 1 - v
				in.Compute(objs)
				ch := in.LastChange()
				if ch.Full {
					b.Fatalf("recomputed in full: %s", ch.Reason)
				}
				for _, ts := range ch.Targets {
					targets += len(ts)
				}
			}
			b.StopTimer()
			objs[idx].Object = orig
			b.ReportMetric(float64(targets)/float64(b.N), "targets/op")
			b.ReportMetric(float64(len(in.LastChange().Statuses)), "statuses")
		})
	}
}

// kuadrantBenchObjects is the topology of bc on an Istio GatewayClass
// with Kuadrant's RateLimitPolicy and AuthPolicy (paths through every
// listener a route's parentRefs name, policy.Kind.RouteParentRefs, ready
// ones only, policy.Kind.ReadyPathsOnly): every route has status, one in
// ten not Accepted by its Gateway; n policies of each kind, one on each
// Gateway and the rest on routes.
func kuadrantBenchObjects(bc benchCase, n int) []engine.Object {
	var objs []engine.Object
	for _, u := range gen.Topology(bc.params) {
		switch u.GetKind() {
		case "GatewayClass":
			_ = unstructured.SetNestedField(u.Object, "istio.io/gateway-controller", "spec", "controllerName")
		case "HTTPRoute":
			var i int
			fmt.Sscanf(u.GetName(), "route-%d", &i)
			accepted := "True"
			if i%10 == 0 {
				accepted = "False"
			}
			parent, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{
				"parentRef": parent[0], "controllerName": "istio.io/gateway-controller",
				"conditions": []any{map[string]any{"type": "Accepted", "status": accepted}},
			}}, "status", "parents")
		}
		objs = append(objs, engine.Object{Object: u})
	}
	crd := func(kind, plural string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": plural + ".kuadrant.io", "labels": map[string]any{"gateway.networking.k8s.io/policy": "Inherited"}},
			"spec": map[string]any{"group": "kuadrant.io", "scope": "Namespaced", "names": map[string]any{"kind": kind, "plural": plural},
				"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}},
		}}
	}
	objs = append(objs, engine.Object{Object: crd("RateLimitPolicy", "ratelimitpolicies")}, engine.Object{Object: crd("AuthPolicy", "authpolicies")})
	pol := func(kind string, i int, ns, targetKind, target string, spec map[string]any) {
		spec["targetRef"] = map[string]any{"group": "gateway.networking.k8s.io", "kind": targetKind, "name": target}
		objs = append(objs, engine.Object{Object: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kuadrant.io/v1", "kind": kind,
			"metadata": map[string]any{"name": fmt.Sprintf("p-%d", i), "namespace": ns, "creationTimestamp": fmt.Sprintf("2026-01-01T00:%02d:%02dZ", (i/60)%60, i%60)},
			"spec":     spec,
		}}})
	}
	for k, kind := range []string{"RateLimitPolicy", "AuthPolicy"} {
		for i := range n {
			spec := map[string]any{"limits": map[string]any{fmt.Sprintf("l%d", i%7): map[string]any{"rates": []any{map[string]any{"limit": int64(1 + i), "window": "1m"}}}}}
			if k == 1 {
				spec = map[string]any{"rules": map[string]any{"authorization": map[string]any{fmt.Sprintf("a%d", i%7): map[string]any{"opa": map[string]any{"rego": "allow = true"}}}}}
			}
			if i < bc.params.Gateways {
				pol(kind, i, gen.InfraNamespace, "Gateway", fmt.Sprintf("gw-%d", i), spec)
				continue
			}
			r := (i * 7919) % bc.params.Routes
			pol(kind, i, fmt.Sprintf("ns-%d", r%bc.params.Namespaces), "HTTPRoute", fmt.Sprintf("route-%d", r), spec)
		}
	}
	return objs
}

// BenchmarkComputeKuadrant measures Compute over kuadrantBenchObjects:
// what RouteParentRefs and ReadyPathsOnly cost (a route's parents on its
// kinds' paths, the readiness of each, and, for a policy in no context,
// the listeners above its route).
func BenchmarkComputeKuadrant(b *testing.B) {
	for _, bc := range []benchCase{benchCases[0], benchCases[2]} {
		objs := kuadrantBenchObjects(bc, 300)
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
			if ctx == 0 {
				b.Fatal("no context")
			}
			b.ReportMetric(float64(ctx), "contexts")
		})
	}
}
