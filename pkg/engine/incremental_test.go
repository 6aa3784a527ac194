package engine_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// dump renders a Result in full and in its own order (the public report
// sorts; this does not), paths included.
func dump(t *testing.T, r *engine.Result) string {
	t.Helper()
	var b strings.Builder
	for _, e := range r.Effective {
		fmt.Fprintf(&b, "E %s %s\n", e.Kind, e.Target)
		for _, c := range e.Contexts {
			spec, _ := json.Marshal(c.Spec)
			fmt.Fprintf(&b, "  C %s errors=%v\n", spec, c.Errors)
			for _, s := range c.Stack {
				fmt.Fprintf(&b, "    S %s@%s %s %s %s conflicted=%v by=%d notVia=%v holds=%q open=%v lost=", s.Policy, s.At, s.Strategy, s.Stanza, s.Outcome, s.Conflicted, len(s.ConflictedBy), s.NotAppliedVia, s.MergeHolds, s.MergeFailedOpen)
				for _, l := range s.Lost {
					fmt.Fprintf(&b, "%s->", l.Path)
					for _, w := range l.To {
						fmt.Fprintf(&b, "%s@%s,", w.Policy, w.At)
					}
					b.WriteString(";")
				}
				b.WriteString("\n")
			}
			for _, f := range c.Fields {
				fmt.Fprintf(&b, "    F %s=%v <- %s@%s %s\n", f.Path, f.Value, f.Policy, f.At, f.Strategy)
			}
			c.Paths(func(p []topology.Ref) bool {
				fmt.Fprintf(&b, "    P %v\n", p)
				return true
			})
		}
	}
	for _, a := range r.Affected {
		fmt.Fprintf(&b, "A %s %s %v %+v\n", a.Kind, a.Target, a.Policies, a.Condition)
	}
	// The route replacements (maps: sorted here), which the report does
	// not carry and trace answers from.
	for _, m := range []struct {
		tag string
		rs  map[topology.Ref]engine.RuleReplacement
	}{{"RR", r.ReplacedRules}, {"RU", r.ReplacedUnder}} {
		for _, ref := range slices.SortedFunc(maps.Keys(m.rs), topology.Ref.Compare) {
			rr := m.rs[ref]
			kind := "-"
			if rr.Kind != nil {
				kind = rr.Kind.String()
			}
			fmt.Fprintf(&b, "%s %s %d %s %s\n", m.tag, ref, rr.Status, kind, rr.Reason)
		}
	}
	rep, err := json.MarshalIndent(report.Build(r, "", nil), "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b.Write(rep)
	return b.String()
}

// firstDiff shows where two dumps part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			ctx := strings.Join(al[max(0, i-25):i], "\n")
			return fmt.Sprintf("line %d:\n incremental: %s\n compute:     %s\ncontext (incremental):\n%s", i+1, x, y, ctx)
		}
	}
	return "no difference"
}

// editor makes random changes to a generated input.
type editor struct {
	rng     *rand.Rand
	objs    []engine.Object
	targets []map[string]any // targetRefs candidates
	next    int
}

const directGroup = "direct.attache.dev"

// directObjects adds a Direct kind (strategy none) with conflicting
// instances on Services, so that both classes are updated.
func directObjects(services, namespaces int) []*unstructured.Unstructured {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "tlspolicies." + directGroup, "labels": map[string]any{"gateway.networking.k8s.io/policy": "Direct"},
			"annotations": map[string]any{"attache.dev/target-kinds": "Service",
				// Ports are the effective targets, covered by whole-Service
				// policies and beaten there by port policies.
				"attache.dev/effective-section-kinds": "Service", "attache.dev/direct-sections": "true"}},
		"spec": map[string]any{"group": directGroup, "scope": "Namespaced", "names": map[string]any{"kind": "TLSPolicy", "plural": "tlspolicies"}},
	}}
	out := []*unstructured.Unstructured{crd}
	for i := range 12 {
		s := (i * 7) % services
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": directGroup + "/v1", "kind": "TLSPolicy",
			"metadata": map[string]any{"name": fmt.Sprintf("tls-%d", i), "namespace": fmt.Sprintf("ns-%d", s%namespaces),
				"creationTimestamp": fmt.Sprintf("2026-01-01T00:00:%02dZ", 59-i)},
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", s)}},
				"mode": fmt.Sprintf("m%d", i%3)},
		}})
	}
	return out
}

const sameLevelGroup = "samelevel.attache.dev"

// sameLevelObjects adds an Inherited kind with the settings of issue 8:
// route rules as effective targets, a same-level rule (merge-disjoint or
// oldest-wins, the latter overridden by presence as Envoy Gateway; or
// merge-disjoint with the conflict scope of the policy, as NGINX Gateway
// Fabric, written "merge-disjoint+policy"), and a
// merge-type field, with instances on Gateways,
// listeners and routes.
func sameLevelObjects(objs []engine.Object, sameLevel string) []*unstructured.Unstructured {
	overriddenBy, scope := "fields", "target"
	if sameLevel == "oldest-wins" { // as Envoy Gateway
		overriddenBy = "presence"
	}
	if rule, ok := strings.CutSuffix(sameLevel, "+policy"); ok { // as NGINX Gateway Fabric
		sameLevel, scope = rule, "policy"
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "mergepolicies." + sameLevelGroup, "labels": map[string]any{"gateway.networking.k8s.io/policy": "Inherited"},
			"annotations": map[string]any{"attache.dev/hierarchy": "Gateway,HTTPRoute", "attache.dev/effective-section-kinds": "HTTPRoute",
				"attache.dev/same-level": sameLevel, "attache.dev/merge-type-field": "mergeType", "attache.dev/merge-strategies": "atomic-defaults",
				"attache.dev/overridden-by": overriddenBy, "attache.dev/conflict-scope": scope}},
		"spec": map[string]any{"group": sameLevelGroup, "scope": "Namespaced", "names": map[string]any{"kind": "MergePolicy", "plural": "mergepolicies"}},
	}}
	out := []*unstructured.Unstructured{crd}
	var targets []*unstructured.Unstructured
	for _, o := range objs {
		if k := o.Object.GetKind(); k == "Gateway" || k == "HTTPRoute" {
			targets = append(targets, o.Object)
		}
	}
	for i := range 14 {
		out = append(out, sameLevelPolicy(fmt.Sprintf("merge-%d", i), targets[(i*5)%len(targets)], i%3 == 0 && i%2 == 1, i%4 == 1, i))
	}
	return out
}

// sameLevelPolicy is a MergePolicy on target (a listener of it when
// section), setting a few of fields a, b, c.
func sameLevelPolicy(name string, target *unstructured.Unstructured, section, mergeType bool, n int) *unstructured.Unstructured {
	ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": target.GetKind(), "name": target.GetName()}
	if section && target.GetKind() == "Gateway" {
		ref["sectionName"] = "l1"
	}
	spec := map[string]any{"targetRefs": []any{ref}}
	for j, f := range []string{"a", "b", "c"} {
		if (n>>j)&1 == 1 || j == n%3 {
			spec[f] = map[string]any{"v": int64(n)}
		}
	}
	if mergeType {
		spec["mergeType"] = "JSONMerge"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sameLevelGroup + "/v1", "kind": "MergePolicy",
		"metadata": map[string]any{"name": name, "namespace": target.GetNamespace(), "creationTimestamp": fmt.Sprintf("2026-01-01T00:00:%02dZ", (n*7)%60)},
		"spec":     spec,
	}}
}

const clusterGroup = "cluster.attache.dev"

// clusterObjects adds a cluster-scoped Inherited kind whose effective
// targets include Namespaces, with instances on Namespaces and routes.
func clusterObjects(namespaces int) []*unstructured.Unstructured {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "quotapolicies." + clusterGroup, "labels": map[string]any{"gateway.networking.k8s.io/policy": "Inherited"},
			"annotations": map[string]any{"attache.dev/target-kinds": "Namespace,HTTPRoute.gateway.networking.k8s.io",
				"attache.dev/effective-target-kinds": "Namespace,Service"}},
		"spec": map[string]any{"group": clusterGroup, "scope": "Cluster", "names": map[string]any{"kind": "QuotaPolicy", "plural": "quotapolicies"}},
	}}
	out := []*unstructured.Unstructured{crd}
	for i := range 6 {
		ref := map[string]any{"group": "", "kind": "Namespace", "name": fmt.Sprintf("ns-%d", i%namespaces)}
		if i%3 == 2 {
			ref = map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": fmt.Sprintf("ns-%d", i%namespaces), "name": fmt.Sprintf("route-%d", i%namespaces)}
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterGroup + "/v1", "kind": "QuotaPolicy",
			"metadata": map[string]any{"name": fmt.Sprintf("quota-%d", i), "creationTimestamp": fmt.Sprintf("2026-01-01T00:00:%02dZ", i)},
			"spec":     map[string]any{"targetRefs": []any{ref}, "defaults": map[string]any{"rps": int64(10 * i), "burst": int64(i)}},
		}})
	}
	return out
}

func newEditor(seed uint64, p gen.Params, n int) *editor {
	e := &editor{rng: rand.New(rand.NewPCG(seed, 7))}
	for _, u := range gen.Topology(p) {
		e.objs = append(e.objs, engine.Object{Object: u, Source: "topology"})
	}
	for _, u := range gen.Policies(p, n) {
		e.objs = append(e.objs, engine.Object{Object: u, Source: "policies"})
	}
	for _, u := range directObjects(p.Services, p.Namespaces) {
		e.objs = append(e.objs, engine.Object{Object: u, Source: "direct"})
	}
	for _, u := range clusterObjects(p.Namespaces) {
		e.objs = append(e.objs, engine.Object{Object: u, Source: "cluster-scoped"})
	}
	// The same-level rules beyond GEP-713's, by seed.
	sameLevel := []string{"oldest-wins", "merge-disjoint", "oldest-first", "merge-disjoint+policy"}[seed%4]
	for _, u := range sameLevelObjects(e.objs, sameLevel) {
		e.objs = append(e.objs, engine.Object{Object: u, Source: "same-level"})
	}
	gw := "gateway.networking.k8s.io"
	ref := func(group, kind, name, section string) map[string]any {
		m := map[string]any{"group": group, "kind": kind, "name": name}
		if section != "" {
			m["sectionName"] = section
		}
		return m
	}
	e.targets = append(e.targets, ref(gw, "GatewayClass", gen.ClassName, ""), ref(gw, "HTTPRoute", "route-9999", ""),
		ref(gw, "Gateway", "gw-0", "nope"), ref("", "Service", "svc-0", "http"), ref("", "Service", "svc-1", ""))
	for g := range p.Gateways {
		e.targets = append(e.targets, ref(gw, "Gateway", fmt.Sprintf("gw-%d", g), ""), ref(gw, "Gateway", fmt.Sprintf("gw-%d", g), "l1"))
	}
	for r := range 8 {
		e.targets = append(e.targets, ref(gw, "HTTPRoute", fmt.Sprintf("route-%d", r), ""), ref(gw, "HTTPRoute", fmt.Sprintf("route-%d", r), "rule-2"))
	}
	for s := range 6 {
		e.targets = append(e.targets, ref("", "Service", fmt.Sprintf("svc-%d", s), ""))
	}
	for k := range p.Namespaces {
		e.targets = append(e.targets, ref("", "Namespace", fmt.Sprintf("ns-%d", k), ""))
	}
	return e
}

// policies returns the indexes of the policy objects of a kind.
func (e *editor) policies(kind string) []int {
	var out []int
	for i, o := range e.objs {
		if o.Object.GetKind() == kind {
			out = append(out, i)
		}
	}
	return out
}

// edit changes one thing and says what; policyOnly reports whether only
// policies changed.
func (e *editor) edit() (what string, policyOnly bool) {
	bench := e.policies(gen.PolicyKind)
	pick := func(l []int) int { return l[e.rng.IntN(len(l))] }
	replace := func(i int, f func(u *unstructured.Unstructured)) {
		u := e.objs[i].Object.DeepCopy()
		f(u)
		e.objs[i].Object = u
	}
	stanzaOf := func(u *unstructured.Unstructured) string {
		if _, ok := u.Object["spec"].(map[string]any)["overrides"]; ok {
			return "overrides"
		}
		return "defaults"
	}
	switch op := e.rng.IntN(15); op {
	case 12, 13: // a MergePolicy: its fields, merge type, target or age
		m := e.policies("MergePolicy")
		i := pick(m)
		replace(i, func(u *unstructured.Unstructured) {
			switch e.rng.IntN(4) {
			case 0:
				f := []string{"a", "b", "c"}[e.rng.IntN(3)]
				if e.rng.IntN(2) == 0 {
					unstructured.RemoveNestedField(u.Object, "spec", f)
				} else {
					_ = unstructured.SetNestedField(u.Object, int64(e.rng.IntN(9)), "spec", f, "v")
				}
			case 1:
				if _, ok := u.Object["spec"].(map[string]any)["mergeType"]; ok {
					unstructured.RemoveNestedField(u.Object, "spec", "mergeType")
				} else {
					_ = unstructured.SetNestedField(u.Object, "JSONMerge", "spec", "mergeType")
				}
			case 2:
				var targets []*unstructured.Unstructured
				for _, o := range e.objs {
					if k := o.Object.GetKind(); (k == "Gateway" || k == "HTTPRoute") && o.Object.GetNamespace() == u.GetNamespace() {
						targets = append(targets, o.Object)
					}
				}
				if len(targets) > 0 {
					t := sameLevelPolicy(u.GetName(), targets[e.rng.IntN(len(targets))], e.rng.IntN(2) == 0, false, e.rng.IntN(8))
					u.Object["spec"].(map[string]any)["targetRefs"] = t.Object["spec"].(map[string]any)["targetRefs"]
				}
			default:
				_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("2026-01-01T00:00:%02dZ", e.rng.IntN(60)), "metadata", "creationTimestamp")
			}
		})
		return "merge policy " + e.objs[i].Object.GetName(), true
	case 0, 1: // edit a field of the spec proper
		i := pick(bench)
		replace(i, func(u *unstructured.Unstructured) {
			st := stanzaOf(u)
			switch e.rng.IntN(3) {
			case 0:
				_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("%ds", e.rng.IntN(99)), "spec", st, "timeout")
			case 1:
				unstructured.RemoveNestedField(u.Object, "spec", st, "retries")
			default:
				_ = unstructured.SetNestedField(u.Object, nil, "spec", st, "headers")
			}
		})
		return "spec of " + e.objs[i].Object.GetName(), true
	case 2: // defaults <-> overrides, patch <-> atomic
		i := pick(bench)
		replace(i, func(u *unstructured.Unstructured) {
			spec := u.Object["spec"].(map[string]any)
			st := stanzaOf(u)
			body := spec[st].(map[string]any)
			if e.rng.IntN(2) == 0 {
				delete(spec, st)
				if st == "defaults" {
					spec["overrides"] = body
				} else {
					spec["defaults"] = body
				}
			} else if body["strategy"] == "patch" {
				body["strategy"] = "atomic"
			} else {
				body["strategy"] = "patch"
			}
		})
		return "stanza or strategy of " + e.objs[i].Object.GetName(), true
	case 3, 4: // retarget
		i := pick(bench)
		t := e.targets[e.rng.IntN(len(e.targets))]
		replace(i, func(u *unstructured.Unstructured) {
			refs := []any{copyMap(t)}
			if e.rng.IntN(4) == 0 {
				refs = append(refs, copyMap(e.targets[e.rng.IntN(len(e.targets))]))
			}
			_ = unstructured.SetNestedSlice(u.Object, refs, "spec", "targetRefs")
			if t["kind"] == "Namespace" {
				u.SetNamespace(t["name"].(string))
			}
		})
		return fmt.Sprintf("retarget %s to %v", e.objs[i].Object.GetName(), t), true
	case 5: // delete
		i := pick(bench)
		name := e.objs[i].Object.GetName()
		e.objs = append(e.objs[:i:i], e.objs[i+1:]...)
		return "delete " + name, true
	case 6: // add
		i := pick(bench)
		u := e.objs[i].Object.DeepCopy()
		e.next++
		u.SetName(fmt.Sprintf("new-%d", e.next))
		t := e.targets[e.rng.IntN(len(e.targets))]
		_ = unstructured.SetNestedSlice(u.Object, []any{copyMap(t)}, "spec", "targetRefs")
		if t["kind"] == "Namespace" {
			u.SetNamespace(t["name"].(string))
		}
		_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("2026-01-01T00:00:%02dZ", e.rng.IntN(60)), "metadata", "creationTimestamp")
		e.objs = append(e.objs, engine.Object{Object: u, Source: "added"})
		return "add " + u.GetName(), true
	case 7: // age
		i := pick(bench)
		replace(i, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("2025-01-01T00:00:%02dZ", e.rng.IntN(60)), "metadata", "creationTimestamp")
		})
		return "age of " + e.objs[i].Object.GetName(), true
	case 8: // invalid, or valid again
		i := pick(bench)
		replace(i, func(u *unstructured.Unstructured) {
			spec := u.Object["spec"].(map[string]any)
			if _, both := spec["overrides"]; both {
				if _, ok := spec["defaults"]; ok {
					delete(spec, "overrides")
					return
				}
			}
			spec["overrides"] = map[string]any{"timeout": "1s"}
			spec["defaults"] = map[string]any{"timeout": "2s"}
		})
		return "invalid " + e.objs[i].Object.GetName(), true
	case 9: // a Direct policy
		d := e.policies("TLSPolicy")
		i := pick(d)
		replace(i, func(u *unstructured.Unstructured) {
			if e.rng.IntN(2) == 0 {
				_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("m%d", e.rng.IntN(5)), "spec", "mode")
			} else {
				ref := map[string]any{"group": "", "kind": "Service", "name": fmt.Sprintf("svc-%d", e.rng.IntN(8))}
				if e.rng.IntN(2) == 0 {
					ref["sectionName"] = "http"
				}
				_ = unstructured.SetNestedSlice(u.Object, []any{ref}, "spec", "targetRefs")
			}
		})
		return "direct " + e.objs[i].Object.GetName(), true
	case 11: // a cluster-scoped policy
		q := e.policies("QuotaPolicy")
		i := pick(q)
		replace(i, func(u *unstructured.Unstructured) {
			switch e.rng.IntN(3) {
			case 0:
				_ = unstructured.SetNestedField(u.Object, int64(e.rng.IntN(9)), "spec", "defaults", "rps")
			case 1:
				_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"group": "", "kind": "Namespace", "name": fmt.Sprintf("ns-%d", e.rng.IntN(4))}}, "spec", "targetRefs")
			default:
				unstructured.RemoveNestedField(u.Object, "spec", "defaults")
				_ = unstructured.SetNestedField(u.Object, map[string]any{"rps": int64(1)}, "spec", "overrides")
			}
		})
		return "cluster-scoped " + e.objs[i].Object.GetName(), true
	case 10: // a copy with the same content, or a status-only write
		i := pick(bench)
		replace(i, func(u *unstructured.Unstructured) {
			if e.rng.IntN(2) == 0 {
				u.Object["status"] = map[string]any{"ancestors": []any{}}
			}
		})
		return "same " + e.objs[i].Object.GetName(), true
	default: // the topology: a route's rules, or a Service's labels
		for {
			i := e.rng.IntN(len(e.objs))
			u := e.objs[i].Object
			switch u.GetKind() {
			case "HTTPRoute":
				// Always a change: one rule less, or one more.
				replace(i, func(u *unstructured.Unstructured) {
					rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
					if len(rules) > 1 {
						rules = rules[:1]
					} else {
						rules = append(rules, rules...)
					}
					_ = unstructured.SetNestedSlice(u.Object, rules, "spec", "rules")
				})
				return "rules of " + u.GetName(), false
			case "Service":
				e.next++
				replace(i, func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"edited": fmt.Sprint(e.next)}) })
				return "labels of " + u.GetName(), false
			}
		}
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestIncrementalMatchesCompute applies random sequences of changes and
// checks, after each, that the Incremental's Result is Compute's, in full
// and in order, that it was incremental where it should be, and that the
// previous Result did not change.
func TestIncrementalMatchesCompute(t *testing.T) {
	steps := 80
	if testing.Short() {
		steps = 20
	}
	for seed := uint64(1); seed <= 6; seed++ {
		p := gen.Params{Gateways: 2, ListenersPerGateway: 3, Routes: 30, Services: 24, Namespaces: 4, Seed: int64(seed)}
		e := newEditor(seed, p, 90)
		in := engine.NewIncremental(engine.Options{})
		res := in.Compute(e.objs)
		if !in.LastChange().Full {
			t.Fatal("the first computation must be full")
		}
		want := dump(t, engine.Compute(e.objs, engine.Options{}))
		if got := dump(t, res); got != want {
			t.Fatalf("seed %d: first computation differs: %s", seed, firstDiff(got, want))
		}
		// The input exercises both classes, Namespaces as effective
		// targets and cluster-scoped policies.
		kinds := map[string]bool{}
		for _, ef := range res.Effective {
			kinds[ef.Kind.GroupKind.Kind+"/"+ef.Target.Kind] = true
		}
		for _, k := range []string{"BenchPolicy/Service", "TLSPolicy/Service", "QuotaPolicy/Namespace", "QuotaPolicy/Service", "MergePolicy/HTTPRoute"} {
			if !kinds[k] {
				t.Fatalf("seed %d: no effective %s in the input (have %v)", seed, k, kinds)
			}
		}
		incremental := 0
		for step := range steps {
			prev, prevDump := res, dump(t, res)
			what, policyOnly := e.edit()
			res = in.Compute(e.objs)
			ch := in.LastChange()
			if policyOnly && ch.Full && !strings.Contains(ch.Reason, "virtual") && ch.Reason != "compaction" {
				t.Fatalf("seed %d step %d (%s): recomputed in full: %s", seed, step, what, ch.Reason)
			}
			if !policyOnly && !ch.Full {
				t.Fatalf("seed %d step %d (%s): a topology change must recompute in full", seed, step, what)
			}
			if !ch.Full {
				incremental++
			}
			want := dump(t, engine.Compute(e.objs, engine.Options{}))
			if got := dump(t, res); got != want {
				t.Fatalf("seed %d step %d (%s, change %+v): %s", seed, step, what, ch, firstDiff(got, want))
			}
			if again := dump(t, prev); again != prevDump {
				t.Fatalf("seed %d step %d (%s): the previous Result changed: %s", seed, step, what, firstDiff(again, prevDump))
			}
		}
		if incremental < steps/2 {
			t.Errorf("seed %d: only %d of %d steps were incremental", seed, incremental, steps)
		}
	}
}

// TestIncrementalScopesTheChange checks that an edit recomputes only the
// targets below the edited policy and the policies sharing its contexts.
func TestIncrementalScopesTheChange(t *testing.T) {
	p := gen.Params{Gateways: 4, ListenersPerGateway: 2, Routes: 40, Services: 40, Namespaces: 4, Seed: 1}
	e := newEditor(1, p, 120)
	in := engine.NewIncremental(engine.Options{})
	in.Compute(e.objs)
	// The policy on one route's rule: its targets are that rule's backends.
	var idx = -1
	for i, o := range e.objs {
		refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
		if o.Object.GetKind() == gen.PolicyKind && len(refs) == 1 && refs[0].(map[string]any)["sectionName"] == "rule-1" {
			idx = i
			break
		}
	}
	if idx < 0 {
		t.Fatal("no rule policy in the input")
	}
	u := e.objs[idx].Object.DeepCopy()
	spec := u.Object["spec"].(map[string]any)
	for _, st := range []string{"defaults", "overrides"} {
		if body, ok := spec[st].(map[string]any); ok {
			body["timeout"] = "77s"
		}
	}
	e.objs[idx].Object = u
	res := in.Compute(e.objs)
	ch := in.LastChange()
	if ch.Full {
		t.Fatalf("recomputed in full: %s", ch.Reason)
	}
	gk := topology.GroupKind{Group: gen.PolicyGroup, Kind: gen.PolicyKind}
	if n := len(ch.Targets[gk]); n == 0 || n > 2 {
		t.Errorf("recomputed %d targets (%v), want the rule's one or two backends", n, ch.Targets[gk])
	}
	if n := len(ch.Statuses); n == 0 || n*4 > len(res.Policies) {
		t.Errorf("derived the status of %d of %d policies again", n, len(res.Policies))
	}
	if len(ch.Policies) != 1 || ch.Policies[0].Name != u.GetName() {
		t.Errorf("changed policies %v, want %s", ch.Policies, u.GetName())
	}
	// Nothing changed: nothing is recomputed, and the Result is the same.
	if again := in.Compute(e.objs); again != res || in.LastChange().Full || len(in.LastChange().Statuses) > 0 {
		t.Errorf("a computation with nothing changed recomputed something: %+v", in.LastChange())
	}
}

// TestIncrementalStaleFold replays a sequence random edits rarely make: a
// stack goes unused (a policy is added below it), a policy on it is edited
// while no target uses it, and it comes back (the policy below is
// removed). Its fold must not be the one from before the edit.
func TestIncrementalStaleFold(t *testing.T) {
	objs, probs, err := manifest.Read([]string{filepath.Join("..", "..", "examples", "gep-713", "example-3")}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	var p1 *unstructured.Unstructured
	for _, o := range objs {
		u := o.Object
		if u.GetKind() == "CustomResourceDefinition" {
			// Services may be targeted too.
			ann := u.GetAnnotations()
			ann["attache.dev/target-kinds"] += ",Service"
			u.SetAnnotations(ann)
		}
		if u.GetName() == "p1" {
			p1 = u
		}
	}
	in := engine.NewIncremental(engine.Options{})
	check := func(step string) {
		t.Helper()
		got := dump(t, in.Compute(objs))
		if ch := in.LastChange(); ch.Full && step != "start" {
			t.Fatalf("%s: recomputed in full: %s", step, ch.Reason)
		}
		if want := dump(t, engine.Compute(objs, engine.Options{})); got != want {
			t.Fatalf("%s: %s", step, firstDiff(got, want))
		}
	}
	check("start")
	c := p1.DeepCopy()
	c.SetName("c-on-b1")
	_ = unstructured.SetNestedSlice(c.Object, []any{map[string]any{"group": "", "kind": "Service", "name": "b1"}}, "spec", "targetRefs")
	objs = append(objs, engine.Object{Object: c, Source: "test"})
	check("a policy on b1")
	for i, o := range objs {
		if o.Object.GetName() == "p1" {
			u := o.Object.DeepCopy()
			_ = unstructured.SetNestedField(u.Object, "blue", "spec", "colors", "dark")
			objs[i].Object = u
		}
	}
	check("p1 edited")
	objs = objs[:len(objs)-1]
	check("the policy on b1 removed")
}

// TestIncrementalDuplicates checks that a duplicate in the first input
// does not hide a later change: Compute keeps the first copy.
func TestIncrementalDuplicates(t *testing.T) {
	objs, _, err := manifest.Read([]string{filepath.Join("..", "..", "examples", "gep-713", "example-3")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var p4 engine.Object
	for _, o := range objs {
		if o.Object.GetName() == "p4" {
			p4 = o
		}
	}
	second := p4.Object.DeepCopy()
	_ = unstructured.SetNestedField(second.Object, "black", "spec", "colors", "dark")
	in := engine.NewIncremental(engine.Options{})
	in.Compute(append(objs, engine.Object{Object: second, Source: "second copy"}))
	// Now only the second copy.
	var next []engine.Object
	for _, o := range objs {
		if o.Object.GetName() != "p4" {
			next = append(next, o)
		}
	}
	next = append(next, engine.Object{Object: second, Source: "second copy"})
	if got, want := dump(t, in.Compute(next)), dump(t, engine.Compute(next, engine.Options{})); got != want {
		t.Fatal(firstDiff(got, want))
	}
}

// fuzzedEditor makes an editor over a topology sized by fuzzed numbers,
// and an Incremental that has computed it once.
func fuzzedEditor(seed uint64, gws, listeners, routes, namespaces uint8) (*editor, *engine.Incremental) {
	p := gen.Params{Gateways: 1 + int(gws%3), ListenersPerGateway: 1 + int(listeners%4), Routes: 8 + int(routes%32),
		Services: 6 + int(routes%24), Namespaces: 4 + int(namespaces%3), Seed: int64(seed % 1000)}
	e := newEditor(seed, p, 40+int(routes%50))
	in := engine.NewIncremental(engine.Options{})
	in.Compute(e.objs)
	return e, in
}

// FuzzIncremental drives random edit sequences over fuzzed topologies and
// checks the Incremental against Compute after every step.
// incrementalAgrees computes steps in turn with one Incremental and fails
// at the first whose result differs from a whole computation's.
func incrementalAgrees(t *testing.T, opts engine.Options, steps ...[]string) {
	t.Helper()
	in := engine.NewIncremental(opts)
	for i, step := range steps {
		got := in.Compute(decodeDocs(t, step...))
		if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, step...), opts)); a != b {
			t.Fatalf("step %d: %s", i, firstDiff(a, b))
		}
	}
}

func FuzzIncremental(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(3), uint8(20), uint8(3), uint8(10))
	f.Add(uint64(7), uint8(1), uint8(1), uint8(5), uint8(1), uint8(25))
	f.Fuzz(func(t *testing.T, seed uint64, gws, listeners, routes, namespaces, steps uint8) {
		e, in := fuzzedEditor(seed, gws, listeners, routes, namespaces)
		for step := range 1 + int(steps%30) {
			what, _ := e.edit()
			got := dump(t, in.Compute(e.objs))
			if want := dump(t, engine.Compute(e.objs, engine.Options{})); got != want {
				t.Fatalf("step %d (%s, change %+v): %s", step, what, in.LastChange(), firstDiff(got, want))
			}
		}
	})
}

// A policy created in the same second as the oldest at its target, of a
// kind that rejects neither (policy.Kind.TiesNotRejected), says so; once
// the other is deleted it no longer does, in Incremental as in Compute,
// also when the two share no context (DNSPolicies on a Gateway with no
// listener the kind acts on), which would have re-derived it anyway.
func TestIncrementalSameSecondTieNote(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	dns := func(name string) string {
		return pol("kuadrant.io/v1", "DNSPolicy", name, 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\nloadBalancing: {weight: 1}")
	}
	c := labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct")
	const note = "created in the same second as DNSPolicy default/a"
	in := engine.NewIncremental(engine.Options{})
	for i, step := range []struct {
		docs []string
		note bool
	}{
		{[]string{c, topo, dns("a"), dns("b")}, true},
		{[]string{c, topo, dns("b")}, false},
		{[]string{c, topo, dns("a"), dns("b")}, true},
	} {
		objs := decodeDocs(t, step.docs...)
		got := in.Compute(objs)
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d (full=%v %s): %s", i, in.LastChange().Full, in.LastChange().Reason, firstDiff(g, w))
		}
		msg := condition(t, got, "b", "Programmed").Message
		want(t, fmt.Sprintf("step %d: b's message %q says it is tied", i, msg), strings.Contains(msg, note), step.note)
	}
}

// TestIncrementalSourceMoved checks that an unchanged object whose
// document moved (another file, another place in it) is reported where it
// now is: problems computed before named the old source.
func TestIncrementalSourceMoved(t *testing.T) {
	objs, _, err := manifest.Read([]string{filepath.Join("..", "..", "examples", "gep-713", "example-3")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var p4 *unstructured.Unstructured
	for _, o := range objs {
		if o.Object.GetName() == "p4" {
			p4 = o.Object
		}
	}
	// A policy on a kind that is no target kind: a problem naming its source.
	bad := p4.DeepCopy()
	bad.SetName("on-missing")
	_ = unstructured.SetNestedSlice(bad.Object, []any{map[string]any{"group": "", "kind": "ConfigMap", "name": "nowhere"}}, "spec", "targetRefs")
	in := engine.NewIncremental(engine.Options{})
	at := func(src string, u *unstructured.Unstructured) []engine.Object {
		return append(slices.Clone(objs), engine.Object{Object: u, Source: src})
	}
	in.Compute(at("a.yaml#1", bad))
	for _, step := range []struct {
		name string
		objs []engine.Object
		src  string
	}{
		{"same object, other document", at("a.yaml#2", bad), "a.yaml#2"},
		{"a copy, other file", at("b.yaml#1", bad.DeepCopy()), "b.yaml#1"},
	} {
		got := dump(t, in.Compute(step.objs))
		if want := dump(t, engine.Compute(step.objs, engine.Options{})); got != want {
			t.Fatalf("%s: %s", step.name, firstDiff(got, want))
		}
		if !strings.Contains(got, step.src) {
			t.Fatalf("%s: no problem names %s:\n%s", step.name, step.src, got)
		}
	}
}
