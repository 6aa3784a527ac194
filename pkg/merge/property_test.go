package merge

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// twoLayers is the stack [est (strategy s, source 0), chal (source 1)].
func twoLayers(est, chal any, s Strategy, fn CustomFunc) stackCase {
	return stackCase{
		vals:   []any{est, chal},
		strats: []Strategy{s, AtomicDefaults},
		fns:    []CustomFunc{fn, nil},
		srcs:   []Src{0, 1},
	}
}

// checkPatchOracle checks one patch step against json-patch: for A without
// nulls, patch-defaults over [A, B] and patch-overrides over [B, A] are both
// MergePatch(A, B).
func checkPatchOracle(tb testing.TB, a, b map[string]any) {
	tb.Helper()
	a = refPrune(a).(map[string]any)
	want := oracleMergePatch(tb, a, b)

	sc := twoLayers(a, b, PatchDefaults, nil)
	r := Fold(sc.layers())
	if got := roundTrip(tb, r.Tree.Value()); !reflect.DeepEqual(got, roundTrip(tb, want)) {
		tb.Fatalf("patch-defaults: Fold = %s, MergePatch(A, B) = %s\nA %s\nB %s", jsonOf(got), jsonOf(want), jsonOf(a), jsonOf(b))
	}
	checkFold(tb, sc, r)

	sc = twoLayers(b, a, PatchOverrides, nil)
	r = Fold(sc.layers())
	if got := roundTrip(tb, r.Tree.Value()); !reflect.DeepEqual(got, roundTrip(tb, want)) {
		tb.Fatalf("patch-overrides: Fold = %s, MergePatch(A, B) = %s\nA %s\nB %s", jsonOf(got), jsonOf(want), jsonOf(a), jsonOf(b))
	}
	checkFold(tb, sc, r)
}

// checkAtomic checks a two-layer atomic (or none) step exactly: the winner's
// spec whole, every leaf of the loser lost to the winner.
func checkAtomic(tb testing.TB, est, chal map[string]any, s Strategy) {
	tb.Helper()
	sc := twoLayers(est, chal, s, nil)
	r := Fold(sc.layers())
	checkFold(tb, sc, r)
	winner, loser, w, l := chal, est, Src(1), Src(0)
	if s != AtomicDefaults {
		winner, loser, w, l = est, chal, 0, 1
	}
	if got, want := jsonOf(r.Tree.Value()), jsonOf(refPrune(winner)); got != want {
		tb.Fatalf("%s: value %s, want %s", s, got, want)
	}
	for _, lf := range r.Tree.Leaves() {
		if lf.Src != w {
			tb.Fatalf("%s: leaf %s attributed to %d, want %d", s, lf.Path, lf.Src, w)
		}
	}
	var want []Loss
	for _, lf := range FromValue(loser, l).Leaves() {
		want = append(want, Loss{Loser: l, Path: lf.Path, Winners: []Src{w}})
	}
	if len(want) != 0 || len(r.Losses) != 0 {
		if !reflect.DeepEqual(r.Losses, want) {
			tb.Fatalf("%s: losses %+v, want %+v", s, r.Losses, want)
		}
	}
}

func TestPatchOracleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		checkPatchOracle(t, randObject(r, 3, false), randObject(r, 3, true))
	}
}

func TestAtomicRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		a, b := randObject(r, 3, true), randObject(r, 3, true)
		for _, s := range []Strategy{AtomicDefaults, AtomicOverrides, None} {
			checkAtomic(t, a, b, s)
		}
	}
}

// Random stacks of one to five layers with random strategies: the value is
// the reference fold's, and the provenance invariants hold.
func TestFoldRandomStacks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 5000; i++ {
		n := 1 + r.IntN(5)
		sc := stackCase{}
		for j := 0; j < n; j++ {
			sc.vals = append(sc.vals, randObject(r, 3, true))
			sc.strats = append(sc.strats, All[r.IntN(len(All))])
			sc.fns = append(sc.fns, customFns[r.IntN(len(customFns))].fn)
			sc.srcs = append(sc.srcs, Src(10+j))
		}
		if i%4 == 0 { // some sources at two levels
			for j := range sc.srcs {
				sc.srcs[j] = Src(j % 2)
			}
		}
		checkFold(t, sc, Fold(sc.layers()))
	}
}

// Fuzz targets. Each decodes its inputs as JSON objects and skips anything
// else. Seeds: GEP-713 Example 3, nulls, lists, type changes, empty
// objects, keys that need quoting.
var fuzzSeeds = [][2]string{
	{`{"colors":{"dark":"brown","light":"red"}}`, `{"colors":{"light":"blue"}}`},
	{`{"colors":{"light":"yellow"}}`, `{"colors":{"dark":"olive","light":"green"}}`},
	{`{"retry":{"attempts":3},"timeout":1}`, `{"retry":null}`},
	{`{"a":{"b":1}}`, `{"a":{"b":null}}`},
	{`{"hosts":["a","b"],"m":{"l":[1,2,3]}}`, `{"hosts":["c"],"m":{"k":[]}}`},
	{`{"a":1,"b":{"x":1,"y":{"z":2}}}`, `{"a":{"p":1,"q":null},"b":"s"}`},
	{`{"a":{},"b":{"x":1},"c":{"y":1}}`, `{"a":{"z":1},"b":{},"c":{"y":null},"d":{}}`},
	{`{"a":{"x":1}}`, `{"a":[{"b":null},null]}`},
	{`{"metadata":{"a.b":1,"x y":2,"":3}}`, `{"metadata":{"a.b":null,"":{"k.l":4}}}`},
	{`{}`, `{}`},
	{`{"a":null,"b":{"c":null}}`, `{"a":{"d":null},"b":null}`},
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s[0]), []byte(s[1]))
		f.Add([]byte(s[1]), []byte(s[0]))
	}
}

func FuzzPatchDefaults(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, aj, bj []byte) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		checkPatchOracle(t, a, b) // A without its nulls, against json-patch
		sc := twoLayers(a, b, PatchDefaults, nil)
		checkFold(t, sc, Fold(sc.layers())) // A with its nulls, against the reference
	})
}

func FuzzPatchOverrides(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, aj, bj []byte) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		// The oracle with the operands swapped: established B patches A.
		a = refPrune(a).(map[string]any)
		want := oracleMergePatch(t, a, b)
		sc := twoLayers(b, a, PatchOverrides, nil)
		r := Fold(sc.layers())
		if got := roundTrip(t, r.Tree.Value()); !reflect.DeepEqual(got, roundTrip(t, want)) {
			t.Fatalf("Fold = %s, MergePatch(A, B) = %s", jsonOf(got), jsonOf(want))
		}
		checkFold(t, sc, r)
	})
}

func FuzzAtomicDefaults(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, aj, bj []byte) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		checkAtomic(t, a, b, AtomicDefaults)
	})
}

func FuzzAtomicOverrides(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, aj, bj []byte) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		checkAtomic(t, a, b, AtomicOverrides)
	})
}

func FuzzNone(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, aj, bj []byte) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		checkAtomic(t, a, b, None)
	})
}

func FuzzCustom(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s[0]), []byte(s[1]), uint8(i))
	}
	f.Fuzz(func(t *testing.T, aj, bj []byte, which uint8) {
		a, ok1 := decodeObject(aj)
		b, ok2 := decodeObject(bj)
		if !ok1 || !ok2 {
			t.Skip()
		}
		fn := customFns[int(which)%len(customFns)]
		sc := twoLayers(a, b, Custom, fn.fn)
		r := Fold(sc.layers())
		checkFold(t, sc, r)
		// Attribution: a leaf equal to the challenger's leaf at its path
		// is the challenger's; any other leaf is the established policy's.
		chal := leafMap(FromValue(b, 1))
		for _, l := range r.Tree.Leaves() {
			want := Src(0)
			if c, ok := chal[l.Path]; ok && reflect.DeepEqual(c.Value, l.Value) {
				want = 1
			}
			if len(r.Errors) == 0 && l.Src != want {
				t.Fatalf("%s: leaf %s = %s attributed to %d, want %d", fn.name, l.Path, jsonOf(l.Value), l.Src, want)
			}
			if len(r.Errors) != 0 && l.Src != 1 {
				t.Fatalf("%s failed, but leaf %s is attributed to %d", fn.name, l.Path, l.Src)
			}
		}
	})
}

// FuzzFold folds a stack of one to five layers given as a JSON array of
// objects; each byte of strats picks a layer's strategy (and custom
// function), and the byte after the last layer's, if odd, gives the layers
// alternating sources 0 and 1 (the same source at several levels).
func FuzzFold(f *testing.F) {
	f.Add([]byte(`[{"colors":{"dark":"brown","light":"red"}},{"colors":{"light":"blue"}}]`), []byte{1, 1})
	f.Add([]byte(`[{"colors":{"light":"yellow"}},{"colors":{"dark":"olive","light":"green"}}]`), []byte{4, 1})
	f.Add([]byte(`[{"retry":"5xx"},{"timeout":1},{"retry":null}]`), []byte{2, 2, 1})
	f.Add([]byte(`[{"timeout":1},{"timeout":2,"retry":3},{"timeout":5}]`), []byte{3, 4, 1})
	f.Add([]byte(`[{"a":7},{"a":{"b":1}},{"a":{"b":null}}]`), []byte{4, 2, 1})
	f.Add([]byte(`[{"a":1,"b":1},{"c":1},{"a":2}]`), []byte{1, 2, 1, 1})
	f.Add([]byte(`[{"b":{"c":9},"z":1},{"y":7,"w":1},{"b":{"c":2},"y":1}]`), []byte{2, 5, 1})
	f.Add([]byte(`[{"a":{}},{"a":{"x":null}},{"a":[1]},{"a":{"y":{}}},{"a":null}]`), []byte{2, 4, 11, 17, 0})
	f.Fuzz(func(t *testing.T, doc, strats []byte) {
		var raw []json.RawMessage
		if err := json.Unmarshal(doc, &raw); err != nil || len(raw) == 0 {
			t.Skip()
		}
		if len(raw) > 5 {
			raw = raw[:5]
		}
		sc := stackCase{}
		for i, r := range raw {
			m, ok := decodeObject(r)
			if !ok {
				t.Skip()
			}
			var b byte
			if i < len(strats) {
				b = strats[i]
			}
			sc.vals = append(sc.vals, m)
			sc.strats = append(sc.strats, All[int(b)%len(All)])
			sc.fns = append(sc.fns, customFns[int(b)/len(All)%len(customFns)].fn)
			sc.srcs = append(sc.srcs, Src(100+i))
		}
		if len(strats) > len(raw) && strats[len(raw)]%2 == 1 {
			for i := range sc.srcs {
				sc.srcs[i] = Src(i % 2)
			}
		}
		checkFold(t, sc, Fold(sc.layers()))
	})
}

// The one place where json-patch and the package differ, which
// oracleMergePatch normalises: json-patch removes nulls from objects inside
// a list when the list is new or replaces a scalar, but not when it replaces
// an object. The package always removes them (Tree.Value).
func TestJSONPatchListQuirk(t *testing.T) {
	raw := func(doc, patch string) string {
		out, err := jsonpatch.MergePatch([]byte(doc), []byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		return jsonOf(roundTrip(t, mustJSON(t, string(out))))
	}
	patch := `{"a":[{"b":null,"c":1},null]}`
	if got, want := raw(`{}`, patch), `{"a":[{"c":1},null]}`; got != want {
		t.Errorf("new key: json-patch gives %s, want %s", got, want)
	}
	if got, want := raw(`{"a":1}`, patch), `{"a":[{"c":1},null]}`; got != want {
		t.Errorf("replacing a scalar: json-patch gives %s, want %s", got, want)
	}
	if got, want := raw(`{"a":{"x":1}}`, patch), `{"a":[{"b":null,"c":1},null]}`; got != want {
		t.Errorf("replacing an object: json-patch gives %s, want %s (the quirk)", got, want)
	}
	for _, doc := range []string{`{}`, `{"a":1}`, `{"a":{"x":1}}`} {
		r := Fold(twoLayers(mustJSON(t, doc), mustJSON(t, patch), PatchDefaults, nil).layers())
		if got, want := jsonOf(r.Tree.Value()), `{"a":[{"c":1},null]}`; got != want {
			t.Errorf("Fold over %s = %s, want %s", doc, got, want)
		}
	}
}

// FuzzFoldGenerated folds random stacks built from the fuzzed seeds with the
// random document generator: byte-level mutation of JSON text rarely
// reaches shapes like {"a":{"b":1}} over {"a":{"b":null}}, which the
// generator, with its few keys, produces all the time.
func FuzzFoldGenerated(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(3))
	f.Add(uint64(7), uint64(0), uint8(255))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, shape uint8) {
		r := rand.New(rand.NewPCG(s1, s2))
		n := 1 + int(shape)%5
		sc := stackCase{}
		for j := 0; j < n; j++ {
			sc.vals = append(sc.vals, randObject(r, 3, true))
			sc.strats = append(sc.strats, All[r.IntN(len(All))])
			sc.fns = append(sc.fns, customFns[r.IntN(len(customFns))].fn)
			sc.srcs = append(sc.srcs, Src(10+j))
		}
		if shape&0x80 != 0 {
			for j := range sc.srcs {
				sc.srcs[j] = Src(j % 2)
			}
		}
		checkFold(t, sc, Fold(sc.layers()))
	})
}
