package merge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// This file holds what the tests share: an independent reference fold over
// plain JSON values, the invariants every Fold result must satisfy, a few
// custom merge functions, and random JSON documents.

// stackCase is a stack as plain values, most general first.
type stackCase struct {
	vals   []any // the layers' specs (JSON values, nulls allowed)
	strats []Strategy
	fns    []CustomFunc // for Custom layers
	srcs   []Src
	schema *Schema // FoldWith's; nil: RFC 7386
}

// fold folds the stack as the case says (Fold, or FoldWith its schema).
func (sc stackCase) fold() Result {
	if sc.schema == nil {
		return Fold(sc.layers())
	}
	return FoldWith(sc.layers(), Options{Schema: sc.schema})
}

func (sc stackCase) layers() []Layer {
	ls := make([]Layer, len(sc.vals))
	for i, v := range sc.vals {
		ls[i] = Layer{Spec: FromValueWith(v, sc.srcs[i], sc.schema), Strategy: sc.strats[i], Src: sc.srcs[i]}
		if sc.fns != nil {
			ls[i].Custom = sc.fns[i]
		}
	}
	return ls
}

func (sc stackCase) distinctSrcs() bool {
	seen := map[Src]bool{}
	for _, s := range sc.srcs {
		if seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// refMerge is RFC 7386 MergePatch that keeps the patch's nulls (a merge of
// two merge patches), written from the RFC's pseudo-code on plain values.
func refMerge(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, _ := target.(map[string]any)
	out := make(map[string]any, len(tm)+len(pm))
	for k, v := range tm {
		out[k] = v
	}
	for k, v := range pm {
		out[k] = refMerge(tm[k], v)
	}
	return out
}

// refPrune removes nulls from objects, also from objects inside lists (the
// package's documented Value semantics).
func refPrune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if c != nil {
				out[k] = refPrune(c)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = refPrune(c)
		}
		return out
	}
	return v
}

func refObject(v any) map[string]any {
	if m, ok := refPrune(v).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// refFold folds the stack on plain values: the value Fold must produce, and
// the number of failing custom steps.
func refFold(sc stackCase) (any, int) {
	n := len(sc.vals)
	if n == 0 {
		return nil, 0
	}
	acc := sc.vals[n-1]
	errs := 0
	for i := n - 2; i >= 0; i-- {
		est := sc.vals[i]
		switch sc.strats[i] {
		case AtomicDefaults:
		case PatchDefaults:
			acc = refMergeS(est, acc, sc.schema)
		case PatchOverrides:
			acc = refMergeS(acc, est, sc.schema)
		case Custom:
			v, ok := refCall(sc.fns[i], refObject(est), refObject(acc))
			if ok {
				acc = v
			} else {
				errs++
			}
		default:
			acc = est
		}
	}
	return refPrune(acc), errs
}

func refCall(f CustomFunc, est, chal map[string]any) (v map[string]any, ok bool) {
	if f == nil {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	v, err := f(est, chal)
	return v, err == nil
}

var errBoom = errors.New("boom")

// customFns are deterministic custom merge functions for the fuzz targets.
var customFns = []struct {
	name string
	fn   CustomFunc
}{
	{"deep-merge-established-wins", func(e, c map[string]any) (map[string]any, error) {
		return refPrune(refMerge(c, e)).(map[string]any), nil
	}},
	{"challenger", func(_, c map[string]any) (map[string]any, error) { return c, nil }},
	{"established", func(e, _ map[string]any) (map[string]any, error) { return e, nil }},
	{"error", func(_, _ map[string]any) (map[string]any, error) { return nil, errBoom }},
	{"panic", func(_, _ map[string]any) (map[string]any, error) { panic("boom") }},
	{"computed", func(e, c map[string]any) (map[string]any, error) {
		out := map[string]any{}
		for k := range e {
			out[k] = "e:" + k
		}
		for k, v := range c {
			out[k] = v
		}
		out["count"] = float64(len(e) + len(c))
		return out, nil
	}},
	{"nil", func(_, _ map[string]any) (map[string]any, error) { return nil, nil }},
	{"mutator", func(e, c map[string]any) (map[string]any, error) {
		// Breaks the contract: it modifies its arguments. Fold gives it
		// copies, so no tree may change.
		for k := range e {
			delete(e, k)
		}
		for _, v := range c {
			if m, ok := v.(map[string]any); ok {
				m["mutated"] = true
			}
		}
		c["mutated"] = true
		return c, nil
	}},
}

// jsonOf marshals v for messages and comparisons.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v: %v>", v, err)
	}
	return string(b)
}

// roundTrip normalises a JSON value through encoding/json.
func roundTrip(tb testing.TB, v any) any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal %#v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

func mustJSON(tb testing.TB, s string) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		tb.Fatalf("bad JSON %s: %v", s, err)
	}
	return v
}

// decodeObject decodes fuzz bytes as one JSON object.
func decodeObject(b []byte) (map[string]any, bool) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// oracleMergePatch is json-patch's MergePatch on values. Its output is passed
// through refPrune for one known quirk of the library: when a key holds an
// object in the document and the patch replaces it with a list, the list is
// copied without removing nulls from objects inside it, while everywhere
// else (a new key, a replaced scalar) the library does remove them. The
// package removes them always (documented on Value). Since the oracle's doc
// has no nulls, any null that refPrune removes from its output comes from
// that path only.
func oracleMergePatch(tb testing.TB, doc, patch any) any {
	tb.Helper()
	d, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := json.Marshal(patch)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := jsonpatch.MergePatch(d, p)
	if err != nil {
		tb.Fatalf("jsonpatch.MergePatch(%s, %s): %v", d, p, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		tb.Fatalf("jsonpatch output %s: %v", out, err)
	}
	return refPrune(v)
}

// valueLeaves lists the leaves of a plain value the way Tree.Leaves does:
// scalars, lists, and empty objects below the root.
func valueLeaves(v any, path string, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		if path != "" || v != nil {
			out[path] = v
		}
		return
	}
	if len(m) == 0 && path != "" {
		out[path] = m
		return
	}
	for k, c := range m {
		valueLeaves(c, JoinPath(path, k), out)
	}
}

// objectPaths lists the paths of the objects inside a plain value.
func objectPaths(v any, path string, out map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if path != "" {
		out[path] = true
	}
	for k, c := range m {
		objectPaths(c, JoinPath(path, k), out)
	}
}

func leafMap(t *Tree) map[string]Leaf {
	m := map[string]Leaf{}
	for _, l := range t.Leaves() {
		m[l.Path] = l
	}
	return m
}

// checkFold checks a Fold result against the reference fold and the
// provenance invariants:
//
//  1. the value is refFold's;
//  2. Leaves is sorted, and agrees with Value;
//  3. every leaf is attributed to a source whose own spec has that exact
//     value at that path (a custom layer may also own values it computed);
//  4. losses are sorted by loser then path; every loss is a leaf of the
//     loser's spec (unless the loser is a custom layer, which owns computed
//     values); winners are sorted, distinct, sources of the stack, and never
//     the loser;
//  5. with distinct sources: no silent losses (every leaf of every layer is
//     in the result attributed to that layer, or lost by that layer, or is an
//     empty object merged into another object: one the result has, or one
//     that was lost later, itself or its leaves, taking the merged {} with them); no loss
//     is recorded twice; nothing lost is also in the result.
func checkFold(tb testing.TB, sc stackCase, r Result) {
	tb.Helper()
	layers := sc.layers()
	want, wantErrs := refFold(sc)
	got := r.Tree.Value()
	if !reflect.DeepEqual(roundTrip(tb, got), roundTrip(tb, want)) {
		tb.Fatalf("value:\n got  %s\n want %s\nstack %s", jsonOf(got), jsonOf(want), describe(sc))
	}
	if len(r.Errors) != wantErrs {
		tb.Fatalf("errors: got %v, want %d\nstack %s", r.Errors, wantErrs, describe(sc))
	}

	leaves := r.Tree.Leaves()
	if !sort.SliceIsSorted(leaves, func(i, j int) bool { return leaves[i].Path < leaves[j].Path }) {
		tb.Fatalf("leaves not sorted: %v", leaves)
	}
	fromValue := map[string]any{}
	valueLeaves(got, "", fromValue)
	if sc.schema != nil { // item by item where the schema keys lists
		fromValue = map[string]any{}
		for _, l := range FromValueWith(got, 0, sc.schema).Leaves() {
			fromValue[l.Path] = l.Value
		}
	}
	if len(fromValue) != len(leaves) {
		tb.Fatalf("leaves %v disagree with value %s", leaves, jsonOf(got))
	}
	for _, l := range leaves {
		if v, ok := fromValue[l.Path]; !ok || !reflect.DeepEqual(v, l.Value) {
			tb.Fatalf("leaf %s = %s, value has %s (%v)", l.Path, jsonOf(l.Value), jsonOf(v), ok)
		}
	}

	custom := map[Src]bool{}
	stackSrc := map[Src]bool{}
	layerLeaves := map[Src][]map[string]Leaf{}
	for i, l := range layers {
		stackSrc[l.Src] = true
		if l.Strategy == Custom && i < len(layers)-1 { // the last layer's strategy plays no part
			custom[l.Src] = true
		}
		layerLeaves[l.Src] = append(layerLeaves[l.Src], leafMap(l.Spec))
	}
	hasLeaf := func(s Src, path string, v any, anyValue bool) bool {
		for _, m := range layerLeaves[s] {
			if l, ok := m[path]; ok && (anyValue || reflect.DeepEqual(l.Value, v)) {
				return true
			}
		}
		return false
	}
	for _, l := range leaves {
		if !hasLeaf(l.Src, l.Path, l.Value, false) && !custom[l.Src] {
			tb.Fatalf("leaf %s = %s attributed to %d, whose spec does not have it\nstack %s",
				l.Path, jsonOf(l.Value), l.Src, describe(sc))
		}
	}

	if !sort.SliceIsSorted(r.Losses, func(i, j int) bool {
		a, b := r.Losses[i], r.Losses[j]
		return a.Loser < b.Loser || a.Loser == b.Loser && a.Path < b.Path
	}) {
		tb.Fatalf("losses not sorted: %v", r.Losses)
	}
	for _, ls := range r.Losses {
		if !custom[ls.Loser] && !hasLeaf(ls.Loser, ls.Path, nil, true) {
			tb.Fatalf("loss %+v: %d has no leaf at %s\nstack %s\nlosses %+v", ls, ls.Loser, ls.Path, describe(sc), r.Losses)
		}
		if len(ls.Winners) == 0 {
			tb.Fatalf("loss %+v has no winners", ls)
		}
		for i, w := range ls.Winners {
			if w == ls.Loser || !stackSrc[w] || i > 0 && ls.Winners[i-1] >= w {
				tb.Fatalf("loss %+v: bad winners\nstack %s", ls, describe(sc))
			}
		}
	}
	if !sc.distinctSrcs() {
		return
	}
	lost := map[Src]map[string]bool{}
	for _, ls := range r.Losses {
		if lost[ls.Loser] == nil {
			lost[ls.Loser] = map[string]bool{}
		}
		if lost[ls.Loser][ls.Path] {
			tb.Fatalf("loss %+v recorded twice: %+v\nstack %s", ls, r.Losses, describe(sc))
		}
		lost[ls.Loser][ls.Path] = true
	}
	res := leafMap(r.Tree)
	objs := map[string]bool{}
	objectPaths(got, "", objs)
	if sc.schema != nil {
		FromValueWith(got, 0, sc.schema).walkObjects("", func(p string) { objs[p] = true })
	}
	for _, l := range layers {
		for _, lf := range l.Spec.Leaves() {
			rl, ok := res[lf.Path]
			inResult := ok && rl.Src == l.Src
			isLost := lost[l.Src][lf.Path]
			merged := isEmptyObject(lf.Value) && (objs[lf.Path] || lostBelow(r.Losses, lf.Path))
			if l, ok := lf.Value.([]any); ok && len(l) == 0 && sc.schema != nil {
				// An empty keyed list merged with another keyed list: [] adds
				// nothing, and is nothing to lose.
				merged = merged || hasBelow(res, lf.Path) || lostBelow(r.Losses, lf.Path)
			}
			if inResult && isLost {
				tb.Fatalf("%d's %s is both in the result and lost\nstack %s\nlosses %+v", l.Src, lf.Path, describe(sc), r.Losses)
			}
			if !inResult && !isLost && !merged {
				tb.Fatalf("silent loss: %d's %s = %s is neither in the result nor lost\nstack %s\nresult %s\nlosses %+v",
					l.Src, lf.Path, jsonOf(lf.Value), describe(sc), jsonOf(got), r.Losses)
			}
		}
	}
}

// lostBelow reports whether some loss is of the object at path (an empty
// one) or of a field inside it.
func lostBelow(losses []Loss, path string) bool {
	for _, l := range losses {
		if l.Path == path || strings.HasPrefix(l.Path, path+".") || strings.HasPrefix(l.Path, path+"[") {
			return true
		}
	}
	return false
}

// hasBelow reports whether the result has a leaf at path or inside it.
func hasBelow(res map[string]Leaf, path string) bool {
	for p := range res {
		if p == path || strings.HasPrefix(p, path+"[") || strings.HasPrefix(p, path+".") {
			return true
		}
	}
	return false
}

func describe(sc stackCase) string {
	var b strings.Builder
	if sc.schema != nil {
		fmt.Fprintf(&b, "\n  schema %s", sc.schema)
	}
	for i, v := range sc.vals {
		fmt.Fprintf(&b, "\n  [%d] src=%d %s %s", i, sc.srcs[i], sc.strats[i], jsonOf(v))
	}
	return b.String()
}

// Random JSON documents with few distinct keys and values, so that specs
// collide a lot.
var randKeys = []string{"a", "b", "c", "d", "a.b", "", "x y"}

func randObject(r *rand.Rand, depth int, nulls bool) map[string]any {
	m := map[string]any{}
	for n := r.IntN(5); n > 0; n-- {
		m[randKeys[r.IntN(len(randKeys))]] = randValue(r, depth-1, nulls)
	}
	return m
}

func randValue(r *rand.Rand, depth int, nulls bool) any {
	switch k := r.IntN(10); {
	case k == 0 && nulls:
		return nil
	case k <= 1:
		return r.IntN(2) == 0
	case k <= 3:
		return float64(r.IntN(3))
	case k == 4:
		return []string{"x", "y"}[r.IntN(2)]
	case k == 5:
		l := make([]any, r.IntN(3))
		for i := range l {
			if r.IntN(2) == 0 {
				l[i] = randObject(r, 1, true)
			} else {
				l[i] = randValue(r, 0, true)
			}
		}
		return l
	default:
		if depth <= 0 {
			return "leaf"
		}
		return randObject(r, depth, nulls)
	}
}

func allStrategies() []Strategy { return slices.Clone(All) }
