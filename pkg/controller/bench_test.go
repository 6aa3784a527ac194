package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// BenchmarkComputation measures the controller's part of one computation
// after a policy edit in the large topology (G=50, L=64, R=10,000,
// S=10,000, P=5,000): the engine's incremental update, then the desired
// status of the policies it recomputed, the desired Affected conditions
// and the EffectivePolicies of the objects it recomputed. The API server's
// part (cache reads and writes) is not in it.
func BenchmarkComputation(b *testing.B) {
	p := gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}
	var objs []engine.Object
	for _, u := range append(gen.Topology(p), gen.Policies(p, 5000)...) {
		objs = append(objs, engine.Object{Object: u})
	}
	idx := -1
	for i, o := range objs {
		refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
		if o.Object.GetKind() == gen.PolicyKind && len(refs) == 1 && refs[0].(map[string]any)["kind"] == "HTTPRoute" {
			idx = i
			break
		}
	}
	var variants [2]*unstructured.Unstructured
	for v := range variants {
		variants[v] = objs[idx].Object.DeepCopy()
		for _, st := range []string{"defaults", "overrides"} {
			if body, ok := variants[v].Object["spec"].(map[string]any)[st].(map[string]any); ok {
				body["timeout"] = fmt.Sprintf("%ds", 100+v)
			}
		}
	}
	gk := topology.GroupKind{Group: gen.PolicyGroup, Kind: gen.PolicyKind}
	c := &Controller{opts: Options{ControllerName: testControllerName, ConditionDomain: engine.DefaultConditionDomain, EffectivePolicies: true, EffectivePolicyNamespace: DefaultEffectivePolicyNamespace},
		watches: map[topology.GroupKind]*watch{gk: {gk: gk, gvk: schemaGVK(gk)}}}
	c.inc = c.newEngine(nil, c.unreadKind)
	owned := map[topology.GroupKind]bool{gk: true}
	res := c.inc.Compute(objs)
	c.derive(res, owned, nil, nil, true, c.inc.LastChange())
	v := 0
	for b.Loop() {
		objs[idx].Object = variants[v]
		v = 1 - v
		res = c.inc.Compute(objs)
		change := c.inc.LastChange()
		if change.Full {
			b.Fatal("recomputed in full: " + change.Reason)
		}
		if d, _, eff := c.derive(res, owned, nil, nil, false, change); len(d) == 0 || len(eff) == 0 {
			b.Fatal("nothing derived")
		}
	}
}

func schemaGVK(gk topology.GroupKind) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: gk.Group, Version: "v1", Kind: gk.Kind}
}

// BenchmarkDeriveGatewayEdit measures, with -benchmem, what the controller
// allocates to derive its desired state after an edit of a Gateway policy
// in issue 9's first case (1 Gateway x 63 listeners, 500 routes and
// Services, 100 policies): 500 EffectivePolicy entries re-rendered. Its
// allocations are the transient memory of such an edit.
func BenchmarkDeriveGatewayEdit(b *testing.B) {
	p := gen.Params{Gateways: 1, ListenersPerGateway: 63, Routes: 500, Services: 500, Namespaces: 10, Seed: 1}
	var objs []engine.Object
	for _, u := range append(gen.Topology(p), gen.Policies(p, 100)...) {
		objs = append(objs, engine.Object{Object: u})
	}
	idx := -1
	for i, o := range objs {
		refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
		if o.Object.GetKind() == gen.PolicyKind && len(refs) == 1 && refs[0].(map[string]any)["kind"] == "Gateway" && refs[0].(map[string]any)["sectionName"] == nil {
			idx = i
			break
		}
	}
	gk := topology.GroupKind{Group: gen.PolicyGroup, Kind: gen.PolicyKind}
	c := &Controller{opts: Options{ControllerName: testControllerName, ConditionDomain: engine.DefaultConditionDomain, EffectivePolicies: true, EffectivePolicyNamespace: DefaultEffectivePolicyNamespace},
		watches: map[topology.GroupKind]*watch{gk: {gk: gk, gvk: schemaGVK(gk)}}}
	c.inc = c.newEngine(nil, c.unreadKind)
	owned := map[topology.GroupKind]bool{gk: true}
	res := c.inc.Compute(objs)
	c.derive(res, owned, nil, nil, true, c.inc.LastChange())
	edited := objs[idx].Object.DeepCopy()
	for _, st := range []string{"defaults", "overrides"} {
		if body, ok := edited.Object["spec"].(map[string]any)[st].(map[string]any); ok {
			body["x"] = "y"
		}
	}
	objs[idx].Object = edited
	res = c.inc.Compute(objs)
	ch := c.inc.LastChange()
	for b.Loop() {
		c.derive(res, owned, nil, nil, false, ch)
	}
}

// BenchmarkReferrers measures what the webhook would spend, for a Service
// being created, finding the rules that name it if it scanned all 10,000
// routes of the large topology (it lists only the Service's namespace, 100
// routes here: a hundredth of this).
func BenchmarkReferrers(b *testing.B) {
	p := gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}
	var routes []*unstructured.Unstructured
	for _, u := range gen.Topology(p) {
		if u.GetKind() == "HTTPRoute" {
			routes = append(routes, u)
		}
	}
	svc := topology.Ref{Kind: "Service", Namespace: routes[0].GetNamespace(), Name: "svc-1"}
	n := 0
	for b.Loop() {
		n = 0
		for _, u := range routes {
			n += len(ruleReferrers(u, topology.KindHTTPRoute, svc))
		}
	}
	b.ReportMetric(float64(len(routes)), "routes")
	_ = n
}
