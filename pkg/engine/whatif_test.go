package engine_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// dumpEffective renders one effective policy, paths included ("" for nil).
func dumpEffective(e *engine.Effective) string {
	if e == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range e.Contexts {
		spec, _ := json.Marshal(c.Spec)
		fmt.Fprintf(&b, "C %s\n", spec)
		for _, s := range c.Stack {
			fmt.Fprintf(&b, " S %s@%s %s %s conflicted=%v lost=%d\n", s.Policy, s.At, s.Strategy, s.Outcome, s.Conflicted, len(s.Lost))
		}
		for _, f := range c.Fields {
			fmt.Fprintf(&b, " F %s=%v <- %s@%s\n", f.Path, f.Value, f.Policy, f.At)
		}
		c.Paths(func(p []topology.Ref) bool {
			fmt.Fprintf(&b, " P %v\n", p)
			return true
		})
	}
	return b.String()
}

func dumpStatus(s *engine.PolicyStatus) string {
	if s == nil {
		return ""
	}
	b, _ := json.Marshal(struct {
		C []engine.Condition
		A []engine.Ancestor
	}{s.Conditions, s.Ancestors})
	return string(b)
}

// TestWhatIfMatchesCompute checks WhatIf against two whole computations
// (before and after a random policy edit): every effective policy and
// status that differs is in the Delta with both sides right, and the
// Incremental's state is as before (its next computations still equal
// Compute's).
func TestWhatIfMatchesCompute(t *testing.T) {
	steps := 25
	if testing.Short() {
		steps = 12
	}
	assessed := 0
	for seed := uint64(1); seed <= 3; seed++ {
		p := gen.Params{Gateways: 2, ListenersPerGateway: 3, Routes: 30, Services: 24, Namespaces: 4, Seed: int64(seed)}
		e := newEditor(seed, p, 90)
		in := engine.NewIncremental(engine.Options{})
		res := in.Compute(e.objs)
		for step := range steps {
			before := slices.Clone(e.objs)
			prevDump := dump(t, res)
			what, policyOnly := e.edit()
			if policyOnly {
				apply, remove := changedObjects(before, e.objs)
				d := in.WhatIf(apply, remove)
				if d.Skipped == "" {
					assessed++
					checkDelta(t, fmt.Sprintf("seed %d step %d (%s)", seed, step, what), d,
						engine.Compute(before, engine.Options{}), engine.Compute(e.objs, engine.Options{}))
				}
				if again := dump(t, res); again != prevDump {
					t.Fatalf("seed %d step %d (%s): WhatIf changed the last Result: %s", seed, step, what, firstDiff(again, prevDump))
				}
			}
			res = in.Compute(e.objs)
			if got, want := dump(t, res), dump(t, engine.Compute(e.objs, engine.Options{})); got != want {
				t.Fatalf("seed %d step %d (%s): after a WhatIf, Compute differs: %s", seed, step, what, firstDiff(got, want))
			}
		}
	}
	if assessed < 20 {
		t.Fatalf("only %d edits were assessed", assessed)
	}
}

// changedObjects returns the objects of after that are new or changed, and
// the refs of those of before that are gone.
func changedObjects(before, after []engine.Object) (apply []engine.Object, remove []topology.Ref) {
	ref := func(o engine.Object) topology.Ref {
		u := o.Object
		return topology.Ref{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	}
	old := map[topology.Ref]engine.Object{}
	for _, o := range before {
		old[ref(o)] = o
	}
	for _, o := range after {
		r := ref(o)
		if prev, ok := old[r]; !ok || prev.Object != o.Object {
			apply = append(apply, o)
		}
		delete(old, r)
	}
	for r := range old {
		remove = append(remove, r)
	}
	return apply, remove
}

func checkDelta(t *testing.T, where string, d *engine.Delta, before, after *engine.Result) {
	t.Helper()
	type key struct {
		kind   string
		target topology.Ref
	}
	effs := func(r *engine.Result) map[key]*engine.Effective {
		m := map[key]*engine.Effective{}
		for _, e := range r.Effective {
			m[key{e.Kind.String(), e.Target}] = e
		}
		return m
	}
	b, a := effs(before), effs(after)
	got := map[key]engine.TargetDelta{}
	for _, td := range d.Targets {
		got[key{td.Kind.String(), td.Target}] = td
	}
	for k := range mergedKeys(b, a) {
		want := [2]string{dumpEffective(b[k]), dumpEffective(a[k])}
		td, ok := got[k]
		if !ok {
			if want[0] != want[1] {
				t.Fatalf("%s: %s of %s changes but is not in the Delta", where, k.kind, k.target)
			}
			continue
		}
		if have := [2]string{dumpEffective(td.Before), dumpEffective(td.After)}; have != want {
			t.Fatalf("%s: %s of %s:\n delta  %q\n compute %q", where, k.kind, k.target, have, want)
		}
	}
	pols := func(r *engine.Result) map[topology.Ref]*engine.PolicyStatus {
		m := map[topology.Ref]*engine.PolicyStatus{}
		for _, p := range r.Policies {
			m[p.Policy.Ref] = p
		}
		return m
	}
	pb, pa := pols(before), pols(after)
	gotP := map[topology.Ref]engine.PolicyDelta{}
	for _, pd := range d.Policies {
		gotP[pd.Ref] = pd
	}
	for r := range mergedKeys(pb, pa) {
		want := [2]string{dumpStatus(pb[r]), dumpStatus(pa[r])}
		pd, ok := gotP[r]
		if !ok {
			if want[0] != want[1] {
				t.Fatalf("%s: the status of %s changes but is not in the Delta", where, r)
			}
			continue
		}
		if have := [2]string{dumpStatus(pd.Before), dumpStatus(pd.After)}; have != want {
			t.Fatalf("%s: status of %s:\n delta   %q\n compute %q", where, r, have, want)
		}
	}
}

func mergedKeys[K comparable, V any](a, b map[K]V) map[K]bool {
	out := map[K]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestWhatIfMemoryBounded checks that a what-if allocates what the change
// reaches, not a copy of the state (issue 11: the webhook answers every
// policy change this way): on a topology of 2,000 routes and 1,000
// policies, assessing an edit of a policy on one route allocates less than
// a hundredth of what a whole computation does, and one on a Gateway (200
// routes behind it) less than half.
func TestWhatIfMemoryBounded(t *testing.T) {
	p := gen.Params{Gateways: 10, ListenersPerGateway: 16, Routes: 2000, Services: 2000, Namespaces: 20, Seed: 1}
	var objs []engine.Object
	for _, u := range gen.Topology(p) {
		objs = append(objs, engine.Object{Object: u})
	}
	for _, u := range gen.Policies(p, 1000) {
		objs = append(objs, engine.Object{Object: u})
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	in := engine.NewIncremental(engine.Options{})
	whole := allocated(func() { in.Compute(objs) })
	edited := func(kind string) engine.Object {
		for _, o := range objs {
			refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
			if o.Object.GetKind() != gen.PolicyKind || len(refs) != 1 {
				continue
			}
			if r := refs[0].(map[string]any); r["kind"] == kind && r["sectionName"] == nil {
				u := o.Object.DeepCopy()
				for _, st := range []string{"defaults", "overrides"} {
					if body, ok := u.Object["spec"].(map[string]any)[st].(map[string]any); ok {
						body["timeout"] = "999s"
					}
				}
				return engine.Object{Object: u}
			}
		}
		t.Fatalf("no policy on a %s", kind)
		return engine.Object{}
	}
	for _, c := range []struct {
		kind  string
		share uint64
	}{{"HTTPRoute", 100}, {"Gateway", 2}} {
		o := edited(c.kind)
		var d *engine.Delta
		n := allocated(func() { d = in.WhatIf([]engine.Object{o}, nil) })
		if d.Skipped != "" || len(d.Targets) == 0 {
			t.Fatalf("%s: nothing assessed: %+v", c.kind, d)
		}
		t.Logf("a policy on a %s: %d KiB for %d targets; a whole computation %d KiB", c.kind, n>>10, len(d.Targets), whole>>10)
		if n > whole/c.share {
			t.Errorf("a policy on a %s: the what-if allocated %d KiB, more than 1/%d of a whole computation's %d KiB", c.kind, n>>10, c.share, whole>>10)
		}
	}
}

// FuzzWhatIf drives random edit sequences over fuzzed topologies, assesses
// each policy edit with WhatIf before applying it, and checks the
// Incremental against Compute after every step: a WhatIf's reverse change
// restores what its change replaced (see undoLog), and anything it put
// back wrong shows in a later computation.
func FuzzWhatIf(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(3), uint8(20), uint8(3), uint8(10))
	f.Add(uint64(5), uint8(0), uint8(2), uint8(9), uint8(1), uint8(29))
	f.Fuzz(func(t *testing.T, seed uint64, gws, listeners, routes, namespaces, steps uint8) {
		e, in := fuzzedEditor(seed, gws, listeners, routes, namespaces)
		for step := range 1 + int(steps%30) {
			before := slices.Clone(e.objs)
			what, policyOnly := e.edit()
			if policyOnly {
				// Twice: a second assessment starts from the state the
				// first one restored.
				apply, remove := changedObjects(before, e.objs)
				in.WhatIf(apply, remove)
				in.WhatIf(apply, remove)
			}
			got := dump(t, in.Compute(e.objs))
			if want := dump(t, engine.Compute(e.objs, engine.Options{})); got != want {
				t.Fatalf("step %d (%s): %s", step, what, firstDiff(got, want))
			}
		}
	})
}
