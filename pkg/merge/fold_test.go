package merge

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// tl is one layer of a table case.
type tl struct {
	src   Src
	strat Strategy
	spec  string
	fn    CustomFunc
}

type foldCase struct {
	name   string
	stack  []tl // most general first
	want   string
	leaves map[string]Src
	losses []Loss   // in Fold's order: by loser, then path
	errs   []string // substrings, in order
	schema *Schema  // FoldWith's, when not nil
}

func (c foldCase) stackCase(t *testing.T) stackCase {
	var sc stackCase
	for _, l := range c.stack {
		sc.vals = append(sc.vals, mustJSON(t, l.spec))
		sc.strats = append(sc.strats, l.strat)
		sc.fns = append(sc.fns, l.fn)
		sc.srcs = append(sc.srcs, l.src)
	}
	sc.schema = c.schema
	return sc
}

func runFoldCase(t *testing.T, c foldCase) Result {
	t.Helper()
	sc := c.stackCase(t)
	r := sc.fold()
	if got, want := roundTrip(t, r.Tree.Value()), mustJSON(t, c.want); !reflect.DeepEqual(got, want) {
		t.Errorf("Value() = %s, want %s", jsonOf(got), jsonOf(want))
	}
	gotLeaves := map[string]Src{}
	for _, l := range r.Tree.Leaves() {
		gotLeaves[l.Path] = l.Src
	}
	if c.leaves == nil {
		c.leaves = map[string]Src{}
	}
	if !reflect.DeepEqual(gotLeaves, c.leaves) {
		t.Errorf("Leaves() = %v, want %v", gotLeaves, c.leaves)
	}
	if len(r.Losses) != 0 || len(c.losses) != 0 {
		if !reflect.DeepEqual(r.Losses, c.losses) {
			t.Errorf("Losses =\n  %+v\nwant\n  %+v", r.Losses, c.losses)
		}
	}
	if len(r.Errors) != len(c.errs) {
		t.Errorf("Errors = %v, want %d matching %q", r.Errors, len(c.errs), c.errs)
	} else {
		for i, e := range r.Errors {
			if !strings.Contains(e.Error(), c.errs[i]) {
				t.Errorf("Errors[%d] = %q, want it to contain %q", i, e, c.errs[i])
			}
		}
	}
	checkFold(t, sc, r)
	return r
}

func loss(loser Src, path string, winners ...Src) Loss {
	return Loss{Loser: loser, Path: path, Winners: winners}
}

const (
	ad  = AtomicDefaults
	pd  = PatchDefaults
	ao  = AtomicOverrides
	po  = PatchOverrides
	cus = Custom
)

// GEP-713's end-to-end examples; policy pN has source N. Each case is one
// context (path g > r > b), i.e. the stack of policies on that path.
func TestFoldGEPExamples(t *testing.T) {
	const (
		p1 = `{"colors":{"dark":"brown","light":"red"}}`
		p2 = `{"colors":{"light":"blue"}}`
		p3 = `{"colors":{"light":"yellow"}}`
		p4 = `{"colors":{"dark":"olive","light":"green"}}`
	)
	for _, c := range []foldCase{
		// Example 2: defaults and overrides, atomic.
		{
			name:   "example2/g1>r1>b1 blue: p2 beats the defaults of p1",
			stack:  []tl{{1, ad, `{"color":"red"}`, nil}, {2, ad, `{"color":"blue"}`, nil}},
			want:   `{"color":"blue"}`,
			leaves: map[string]Src{"color": 2},
			losses: []Loss{loss(1, "color", 2)},
		},
		{
			name:   "example2/g1>r2>b1 red: p1's defaults alone",
			stack:  []tl{{1, ad, `{"color":"red"}`, nil}},
			want:   `{"color":"red"}`,
			leaves: map[string]Src{"color": 1},
		},
		{
			name:   "example2/g2>r3>b1 yellow: p3's overrides alone",
			stack:  []tl{{3, ao, `{"color":"yellow"}`, nil}},
			want:   `{"color":"yellow"}`,
			leaves: map[string]Src{"color": 3},
		},
		{
			name:   "example2/g2>r4>b2 yellow: p3's overrides beat p4",
			stack:  []tl{{3, ao, `{"color":"yellow"}`, nil}, {4, ad, `{"color":"green"}`, nil}},
			want:   `{"color":"yellow"}`,
			leaves: map[string]Src{"color": 3},
			losses: []Loss{loss(4, "color", 3)},
		},
		// Example 3: merged specs.
		{
			name:   "example3/g1>r1>b1 dark:UNDEFINED,light:blue: p2 atomically beats p1",
			stack:  []tl{{1, ad, p1, nil}, {2, ad, p2, nil}},
			want:   `{"colors":{"light":"blue"}}`,
			leaves: map[string]Src{"colors.light": 2},
			losses: []Loss{loss(1, "colors.dark", 2), loss(1, "colors.light", 2)},
		},
		{
			name:   "example3/g1>r2>b1 dark:brown,light:red: p1 alone",
			stack:  []tl{{1, ad, p1, nil}},
			want:   p1,
			leaves: map[string]Src{"colors.dark": 1, "colors.light": 1},
		},
		{
			name:   "example3/g2>r3>b1 dark:UNDEFINED,light:yellow: p3 alone",
			stack:  []tl{{3, po, p3, nil}},
			want:   p3,
			leaves: map[string]Src{"colors.light": 3},
		},
		{
			name:   "example3/g2>r4>b2 dark:olive,light:yellow: p3 patch-overrides p4",
			stack:  []tl{{3, po, p3, nil}, {4, ad, p4, nil}},
			want:   `{"colors":{"dark":"olive","light":"yellow"}}`,
			leaves: map[string]Src{"colors.dark": 4, "colors.light": 3},
			losses: []Loss{loss(4, "colors.light", 3)},
		},
	} {
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

func TestFoldStrategies(t *testing.T) {
	for _, c := range []foldCase{
		// Three levels: the established policy's strategy decides (decision 3).
		{
			name: "atomic override at the top is final over a lower patch-overrides",
			stack: []tl{
				{0, ao, `{"timeout":1}`, nil},
				{1, po, `{"timeout":2,"retry":3}`, nil},
				{2, ad, `{"timeout":5}`, nil},
			},
			want:   `{"timeout":1}`,
			leaves: map[string]Src{"timeout": 0},
			losses: []Loss{loss(1, "retry", 0), loss(1, "timeout", 0), loss(2, "timeout", 1)},
		},
		{
			name: "patch override at the top is final over a lower patch-overrides",
			stack: []tl{
				{0, po, `{"timeout":1}`, nil},
				{1, po, `{"timeout":2,"retry":3}`, nil},
				{2, ad, `{"timeout":5,"x":1}`, nil},
			},
			want:   `{"timeout":1,"retry":3,"x":1}`,
			leaves: map[string]Src{"timeout": 0, "retry": 1, "x": 2},
			losses: []Loss{loss(1, "timeout", 0), loss(2, "timeout", 1)},
		},
		{
			name: "patch override at the top over patch defaults in the middle",
			stack: []tl{
				{0, po, `{"a":1}`, nil},
				{1, pd, `{"a":2,"b":2}`, nil},
				{2, ad, `{"a":3,"b":3}`, nil},
			},
			want:   `{"a":1,"b":3}`,
			leaves: map[string]Src{"a": 0, "b": 2},
			losses: []Loss{loss(1, "a", 2), loss(1, "b", 2), loss(2, "a", 0)},
		},
		{
			name: "a lower override beats what is below it, not a higher default",
			stack: []tl{
				{0, pd, `{"a":1,"b":1}`, nil},
				{1, po, `{"a":2}`, nil},
				{2, ad, `{"a":3,"b":3}`, nil},
			},
			want:   `{"a":2,"b":3}`,
			leaves: map[string]Src{"a": 1, "b": 2},
			losses: []Loss{loss(0, "a", 1), loss(0, "b", 2), loss(2, "a", 1)},
		},
		{
			name:   "none: the established policy wins whole",
			stack:  []tl{{0, None, `{"a":1}`, nil}, {1, ad, `{"a":2,"b":3}`, nil}},
			want:   `{"a":1}`,
			leaves: map[string]Src{"a": 0},
			losses: []Loss{loss(1, "a", 0), loss(1, "b", 0)},
		},
		{
			name:   "atomic defaults: the challenger wins whole",
			stack:  []tl{{0, ad, `{"a":1,"b":{"c":1}}`, nil}, {1, ad, `{"a":2}`, nil}},
			want:   `{"a":2}`,
			leaves: map[string]Src{"a": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "b.c", 1)},
		},
		{
			name:   "patch defaults: the challenger's fields win, the rest stays",
			stack:  []tl{{0, pd, `{"a":1,"b":{"c":1,"d":1}}`, nil}, {1, ad, `{"a":2,"b":{"c":2}}`, nil}},
			want:   `{"a":2,"b":{"c":2,"d":1}}`,
			leaves: map[string]Src{"a": 1, "b.c": 1, "b.d": 0},
			losses: []Loss{loss(0, "a", 1), loss(0, "b.c", 1)},
		},
		{
			name:   "patch overrides: the established policy's fields win, the rest stays",
			stack:  []tl{{0, po, `{"a":1,"b":{"c":1}}`, nil}, {1, ad, `{"a":2,"b":{"c":2,"d":2}}`, nil}},
			want:   `{"a":1,"b":{"c":1,"d":2}}`,
			leaves: map[string]Src{"a": 0, "b.c": 0, "b.d": 1},
			losses: []Loss{loss(1, "a", 0), loss(1, "b.c", 0)},
		},

		// Nulls.
		{
			name: "null deletes an inherited field through two levels of patch-defaults",
			stack: []tl{
				{0, pd, `{"retry":"5xx"}`, nil},
				{1, pd, `{"timeout":1}`, nil},
				{2, ad, `{"retry":null}`, nil},
			},
			want:   `{"timeout":1}`,
			leaves: map[string]Src{"timeout": 1},
			losses: []Loss{loss(0, "retry", 2)},
		},
		{
			name: "null deletes an inherited object through two levels of patch-defaults",
			stack: []tl{
				{0, pd, `{"retry":{"attempts":3,"on":["5xx"]},"x":1}`, nil},
				{1, pd, `{"timeout":1}`, nil},
				{2, ad, `{"retry":null}`, nil},
			},
			want:   `{"timeout":1,"x":1}`,
			leaves: map[string]Src{"timeout": 1, "x": 0},
			losses: []Loss{loss(0, "retry.attempts", 2), loss(0, "retry.on", 2)},
		},
		{
			name: "null deletes one inherited member",
			stack: []tl{
				{0, pd, `{"retry":{"attempts":3,"on":"5xx"}}`, nil},
				{1, pd, `{}`, nil},
				{2, ad, `{"retry":{"on":null}}`, nil},
			},
			want:   `{"retry":{"attempts":3}}`,
			leaves: map[string]Src{"retry.attempts": 0},
			losses: []Loss{loss(0, "retry.on", 2)},
		},
		{
			name:   "null in patch overrides deletes the challenger's field",
			stack:  []tl{{0, po, `{"retry":null}`, nil}, {1, ad, `{"retry":1,"t":2}`, nil}},
			want:   `{"t":2}`,
			leaves: map[string]Src{"t": 1},
			losses: []Loss{loss(1, "retry", 0)},
		},
		{
			name: "null keeps deleting through an atomic-defaults step",
			stack: []tl{
				{0, pd, `{"a":1}`, nil},
				{1, ad, `{"b":1}`, nil},
				{2, ad, `{"a":null}`, nil},
			},
			want:   `{}`,
			losses: []Loss{loss(0, "a", 2), loss(1, "b", 2)},
		},

		// Lists.
		{
			name:   "lists are replaced whole",
			stack:  []tl{{0, pd, `{"hosts":["a","b"],"m":{"l":[1,2,3]}}`, nil}, {1, ad, `{"hosts":["c"],"m":{"k":[]}}`, nil}},
			want:   `{"hosts":["c"],"m":{"l":[1,2,3],"k":[]}}`,
			leaves: map[string]Src{"hosts": 1, "m.k": 1, "m.l": 0},
			losses: []Loss{loss(0, "hosts", 1)},
		},
		{
			name:   "lists in overrides are replaced whole",
			stack:  []tl{{0, po, `{"hosts":["a"]}`, nil}, {1, ad, `{"hosts":["b","c"]}`, nil}},
			want:   `{"hosts":["a"]}`,
			leaves: map[string]Src{"hosts": 0},
			losses: []Loss{loss(1, "hosts", 0)},
		},
		{
			name:   "nulls in lists are values; objects in lists lose their nulls",
			stack:  []tl{{0, pd, `{"l":[1]}`, nil}, {1, ad, `{"l":[null,{"a":null,"b":1}]}`, nil}},
			want:   `{"l":[null,{"b":1}]}`,
			leaves: map[string]Src{"l": 1},
			losses: []Loss{loss(0, "l", 1)},
		},

		// Changes of type.
		{
			name:   "an object replaces a scalar and a scalar replaces an object",
			stack:  []tl{{0, pd, `{"a":1,"b":{"x":1,"y":{"z":2}}}`, nil}, {1, ad, `{"a":{"p":1,"q":2},"b":"s"}`, nil}},
			want:   `{"a":{"p":1,"q":2},"b":"s"}`,
			leaves: map[string]Src{"a.p": 1, "a.q": 1, "b": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "b.x", 1), loss(0, "b.y.z", 1)},
		},
		{
			name: "an object built by two policies replaces a scalar",
			stack: []tl{
				{0, pd, `{"a":1}`, nil},
				{1, pd, `{"a":{"p":1}}`, nil},
				{2, ad, `{"a":{"q":2}}`, nil},
			},
			want:   `{"a":{"p":1,"q":2}}`,
			leaves: map[string]Src{"a.p": 1, "a.q": 2},
			losses: []Loss{loss(0, "a", 1, 2)},
		},
		{
			name:   "a list replaces an object and an object replaces a list",
			stack:  []tl{{0, po, `{"a":[1],"b":{"c":1}}`, nil}, {1, ad, `{"a":{"x":1},"b":[2]}`, nil}},
			want:   `{"a":[1],"b":{"c":1}}`,
			leaves: map[string]Src{"a": 0, "b.c": 0},
			losses: []Loss{loss(1, "a.x", 0), loss(1, "b", 0)},
		},

		// Empty objects.
		{
			name: "empty objects merge, are leaves of their own, and can be emptied",
			stack: []tl{
				{0, pd, `{"a":{},"b":{"x":1},"c":{"y":1},"e":{}}`, nil},
				{1, ad, `{"a":{"z":1},"b":{},"c":{"y":null},"d":{}}`, nil},
			},
			want:   `{"a":{"z":1},"b":{"x":1},"c":{},"d":{},"e":{}}`,
			leaves: map[string]Src{"a.z": 1, "b.x": 0, "c": 1, "d": 1, "e": 0},
			losses: []Loss{loss(0, "c.y", 1)},
		},
		{
			// Before the fix, "a" ({}) stayed attributed to 1, whose spec has
			// {"b":1} there, and 1 was recorded as losing a field "a" it
			// never had.
			name: "an emptied object belongs to the policy that emptied it",
			stack: []tl{
				{0, po, `{"a":7}`, nil},
				{1, pd, `{"a":{"b":1}}`, nil},
				{2, ad, `{"a":{"b":null}}`, nil},
			},
			want:   `{"a":7}`,
			leaves: map[string]Src{"a": 0},
			losses: []Loss{loss(1, "a.b", 2), loss(2, "a", 0)},
		},
		{
			name:   "an empty object replaces a scalar and a scalar an empty object",
			stack:  []tl{{0, pd, `{"a":5,"b":{}}`, nil}, {1, ad, `{"a":{},"b":5}`, nil}},
			want:   `{"a":{},"b":5}`,
			leaves: map[string]Src{"a": 1, "b": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "b", 1)},
		},
		{
			name:  "empty specs",
			stack: []tl{{0, pd, `{}`, nil}, {1, ad, `{}`, nil}},
			want:  `{}`,
		},
		{
			name:   "an empty challenger wins atomic defaults",
			stack:  []tl{{0, ad, `{"a":1}`, nil}, {1, ad, `{}`, nil}},
			want:   `{}`,
			losses: []Loss{loss(0, "a", 1)},
		},
		{
			name:   "an empty override wins whole",
			stack:  []tl{{0, ao, `{}`, nil}, {1, ad, `{"a":1}`, nil}},
			want:   `{}`,
			losses: []Loss{loss(1, "a", 0)},
		},

		// Keys that are not identifiers.
		{
			name: "keys with dots and spaces are quoted in paths",
			stack: []tl{
				{0, pd, `{"a.b":0,"metadata":{"a.b":1,"x y":2,"":3,"ok":{"k.l":4}}}`, nil},
				{1, ad, `{"metadata":{"a.b":null,"ok":{"k.l":5}}}`, nil},
			},
			want: `{"a.b":0,"metadata":{"x y":2,"":3,"ok":{"k.l":5}}}`,
			leaves: map[string]Src{
				`["a.b"]`:            0,
				`metadata["x y"]`:    0,
				`metadata[""]`:       0,
				`metadata.ok["k.l"]`: 1,
			},
			losses: []Loss{loss(0, `metadata.ok["k.l"]`, 1), loss(0, `metadata["a.b"]`, 1)},
		},

		// The same source at two levels.
		{
			name: "the same source does not beat itself (patch)",
			stack: []tl{
				{0, pd, `{"a":1,"b":1}`, nil},
				{1, pd, `{"c":1}`, nil},
				{0, ad, `{"a":2}`, nil},
			},
			want:   `{"a":2,"b":1,"c":1}`,
			leaves: map[string]Src{"a": 0, "b": 0, "c": 1},
		},
		{
			// Before the fix the winners were [0 1]: 0 listed as beating itself.
			name: "the same source is not among its own winners (atomic)",
			stack: []tl{
				{0, ad, `{"a":1,"b":1}`, nil},
				{1, pd, `{"c":1}`, nil},
				{0, ad, `{"a":2}`, nil},
			},
			want:   `{"a":2,"c":1}`,
			leaves: map[string]Src{"a": 0, "c": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "b", 1)},
		},
		{
			name:   "the same source does not beat itself (override)",
			stack:  []tl{{0, ao, `{"a":1}`, nil}, {0, ad, `{"a":2,"b":3}`, nil}},
			want:   `{"a":1}`,
			leaves: map[string]Src{"a": 0},
		},
	} {
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

func TestFoldCustom(t *testing.T) {
	// unionCount: a deep merge where the established policy wins, plus a
	// computed field n (the number of top-level fields).
	unionCount := func(e, c map[string]any) (map[string]any, error) {
		out := refPrune(refMerge(c, e)).(map[string]any)
		out["n"] = float64(len(out))
		return out, nil
	}
	fn := func(name string) CustomFunc {
		for _, f := range customFns {
			if f.name == name {
				return f.fn
			}
		}
		t.Fatalf("no custom function %q", name)
		return nil
	}
	for _, c := range []foldCase{
		{
			name:   "values keep their sources; computed values belong to the established policy",
			stack:  []tl{{0, cus, `{"a":5,"d":4}`, unionCount}, {1, ad, `{"a":1,"b":{"c":2}}`, nil}},
			want:   `{"a":5,"b":{"c":2},"d":4,"n":3}`,
			leaves: map[string]Src{"a": 0, "b.c": 1, "d": 0, "n": 0},
			losses: []Loss{loss(1, "a", 0)},
		},
		{
			name: "a custom step in the middle of a stack",
			stack: []tl{
				{0, pd, `{"b":{"c":9},"z":1}`, nil},
				{1, cus, `{"y":7,"w":1}`, fn("deep-merge-established-wins")},
				{2, ad, `{"b":{"c":2},"y":1}`, nil},
			},
			want:   `{"b":{"c":2},"w":1,"y":7,"z":1}`,
			leaves: map[string]Src{"b.c": 2, "w": 1, "y": 1, "z": 0},
			losses: []Loss{loss(0, "b.c", 2), loss(2, "y", 1)},
		},
		{
			name:   "the challenger's fields that the function drops are lost to the established policy",
			stack:  []tl{{0, cus, `{"a":1}`, fn("established")}, {1, ad, `{"a":3,"b":2}`, nil}},
			want:   `{"a":1}`,
			leaves: map[string]Src{"a": 0},
			losses: []Loss{loss(1, "a", 0), loss(1, "b", 0)},
		},
		{
			name:   "the established policy's fields that its function drops are lost to the challenger",
			stack:  []tl{{0, cus, `{"a":1,"x":1}`, fn("challenger")}, {1, ad, `{"a":1,"b":2}`, nil}},
			want:   `{"a":1,"b":2}`,
			leaves: map[string]Src{"a": 1, "b": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "x", 1)},
		},
		{
			name:   "an error keeps the challenger",
			stack:  []tl{{0, cus, `{"a":1,"x":1}`, fn("error")}, {1, ad, `{"a":2}`, nil}},
			want:   `{"a":2}`,
			leaves: map[string]Src{"a": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "x", 1)},
			errs:   []string{"custom merge function failed: boom"},
		},
		{
			name:   "a panic keeps the challenger",
			stack:  []tl{{0, cus, `{"a":1,"x":1}`, fn("panic")}, {1, ad, `{"a":2}`, nil}},
			want:   `{"a":2}`,
			leaves: map[string]Src{"a": 1},
			losses: []Loss{loss(0, "a", 1), loss(0, "x", 1)},
			errs:   []string{"custom merge function panicked: boom"},
		},
		{
			name:   "no function keeps the challenger",
			stack:  []tl{{0, cus, `{"a":1}`, nil}, {1, ad, `{"a":2}`, nil}},
			want:   `{"a":2}`,
			leaves: map[string]Src{"a": 1},
			losses: []Loss{loss(0, "a", 1)},
			errs:   []string{"custom merge strategy has no merge function"},
		},
		{
			name: "a failed step keeps the challenger's nulls",
			stack: []tl{
				{0, pd, `{"a":1,"b":1}`, nil},
				{1, cus, `{"c":1}`, fn("error")},
				{2, ad, `{"a":null}`, nil},
			},
			want:   `{"b":1}`,
			leaves: map[string]Src{"b": 0},
			losses: []Loss{loss(0, "a", 2), loss(1, "c", 2)},
			errs:   []string{"boom"},
		},
		{
			name: "two failures, two errors",
			stack: []tl{
				{0, cus, `{"a":1}`, fn("panic")},
				{1, cus, `{"b":1}`, fn("error")},
				{2, ad, `{"c":1}`, nil},
			},
			want:   `{"c":1}`,
			leaves: map[string]Src{"c": 2},
			losses: []Loss{loss(0, "a", 2), loss(1, "b", 2)},
			errs:   []string{"failed", "panicked"}, // in fold order: the lower step first
		},
		{
			name:   "a function that returns nil",
			stack:  []tl{{0, cus, `{"a":1}`, fn("nil")}, {1, ad, `{"b":1}`, nil}},
			want:   `{}`,
			losses: []Loss{loss(0, "a", 1), loss(1, "b", 0)},
		},
	} {
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

func TestFoldCustomErrorWraps(t *testing.T) {
	r := Fold([]Layer{
		{Spec: FromValue(map[string]any{"a": 1.0}, 0), Strategy: Custom, Src: 0, Custom: func(_, _ map[string]any) (map[string]any, error) { return nil, errBoom }},
		{Spec: FromValue(map[string]any{}, 1), Src: 1},
	})
	if len(r.Errors) != 1 || !errors.Is(r.Errors[0], errBoom) {
		t.Fatalf("Errors = %v, want one wrapping errBoom", r.Errors)
	}
}

// The function gets the specs without nulls, as copies: changing them
// changes no tree.
func TestFoldCustomArguments(t *testing.T) {
	est := map[string]any{"a": 1.0, "n": nil, "m": map[string]any{"x": 1.0}}
	chal := map[string]any{"b": []any{map[string]any{"k": nil}}, "d": nil}
	var gotEst, gotChal map[string]any
	f := func(e, c map[string]any) (map[string]any, error) {
		gotEst, gotChal = jsonCopy(e), jsonCopy(c)
		e["a"] = "changed"
		e["m"].(map[string]any)["x"] = "changed"
		c["b"].([]any)[0] = "changed"
		return c, nil
	}
	estT, chalT := FromValue(est, 0), FromValue(chal, 1)
	r := Fold([]Layer{{Spec: estT, Strategy: Custom, Custom: f, Src: 0}, {Spec: chalT, Src: 1}})
	if want := `{"a":1,"m":{"x":1}}`; jsonOf(gotEst) != want {
		t.Errorf("established argument = %s, want %s", jsonOf(gotEst), want)
	}
	if want := `{"b":[{}]}`; jsonOf(gotChal) != want {
		t.Errorf("challenger argument = %s, want %s", jsonOf(gotChal), want)
	}
	if got, want := jsonOf(estT.Value()), `{"a":1,"m":{"x":1}}`; got != want {
		t.Errorf("established tree changed: %s, want %s", got, want)
	}
	if got, want := jsonOf(chalT.Value()), `{"b":[{}]}`; got != want {
		t.Errorf("challenger tree changed: %s, want %s", got, want)
	}
	if got, want := jsonOf(r.Tree.Value()), `{"b":["changed"]}`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
}

func jsonCopy(m map[string]any) map[string]any {
	var out map[string]any
	if err := json.Unmarshal([]byte(jsonOf(m)), &out); err != nil {
		panic(err)
	}
	return out
}

func TestFoldEmptyStack(t *testing.T) {
	r := Fold(nil)
	if r.Tree != nil || r.Losses != nil || r.Errors != nil {
		t.Fatalf("Fold(nil) = %+v, want the zero Result", r)
	}
	if r.Tree.Value() != nil || r.Tree.Leaves() != nil || len(r.Tree.Object()) != 0 {
		t.Fatalf("a nil tree should be empty")
	}
}

// A nil Spec is an empty spec. It used to make an atomic-defaults step panic
// (sources of a nil challenger).
func TestFoldNilSpec(t *testing.T) {
	spec := FromValue(map[string]any{"a": 1.0}, 0)
	for _, s := range All {
		r := Fold([]Layer{{Spec: spec, Strategy: s, Src: 0, Custom: customFns[0].fn}, {Spec: nil, Src: 1}})
		want := map[Strategy]string{
			None: `{"a":1}`, AtomicDefaults: `{}`, PatchDefaults: `{"a":1}`,
			AtomicOverrides: `{"a":1}`, PatchOverrides: `{"a":1}`, Custom: `{"a":1}`,
		}[s]
		if got := jsonOf(r.Tree.Value()); got != want {
			t.Errorf("%s over nil: %s, want %s", s, got, want)
		}
		r = Fold([]Layer{{Spec: nil, Strategy: s, Src: 0, Custom: customFns[0].fn}, {Spec: spec, Src: 1}})
		want = map[Strategy]string{
			None: `{}`, AtomicDefaults: `{"a":1}`, PatchDefaults: `{"a":1}`,
			AtomicOverrides: `{}`, PatchOverrides: `{"a":1}`, Custom: `{"a":1}`,
		}[s]
		if got := jsonOf(r.Tree.Value()); got != want {
			t.Errorf("nil %s over spec: %s, want %s", s, got, want)
		}
	}
	r := Fold([]Layer{{Spec: spec, Strategy: AtomicDefaults, Src: 0}, {Spec: nil, Src: 1}})
	if want := []Loss{loss(0, "a", 1)}; !reflect.DeepEqual(r.Losses, want) {
		t.Errorf("Losses = %+v, want %+v", r.Losses, want)
	}
}

func TestFoldSingleLayer(t *testing.T) {
	for _, s := range All {
		v := map[string]any{"a": map[string]any{"b": nil, "c": 1.0}, "d": nil}
		r := Fold([]Layer{{Spec: FromValue(v, 7), Strategy: s, Src: 7}})
		if got, want := jsonOf(r.Tree.Value()), `{"a":{"c":1}}`; got != want {
			t.Errorf("%s: %s, want %s", s, got, want)
		}
		if len(r.Losses) != 0 || len(r.Errors) != 0 {
			t.Errorf("%s: losses %v, errors %v", s, r.Losses, r.Errors)
		}
	}
}

// Fold neither changes its input trees nor the values they were built from.
func TestFoldDoesNotModifyInputs(t *testing.T) {
	a := mustJSON(t, `{"a":{"b":1,"c":[1,{"d":null}]},"e":null,"f":{}}`)
	b := mustJSON(t, `{"a":{"b":null,"x":{"y":2}},"e":3,"f":{"g":null}}`)
	aJSON, bJSON := jsonOf(a), jsonOf(b)
	for _, s := range All {
		for _, f := range customFns {
			ta, tb := FromValue(a, 0), FromValue(b, 1)
			va, vb := jsonOf(ta.Value()), jsonOf(tb.Value())
			Fold([]Layer{{Spec: ta, Strategy: s, Custom: f.fn, Src: 0}, {Spec: tb, Src: 1}})
			Fold([]Layer{{Spec: tb, Strategy: s, Custom: f.fn, Src: 1}, {Spec: ta, Src: 0}})
			if jsonOf(ta.Value()) != va || jsonOf(tb.Value()) != vb || jsonOf(a) != aJSON || jsonOf(b) != bJSON {
				t.Fatalf("%s/%s changed an input", s, f.name)
			}
		}
	}
}

// Losses come in the same order every time.
func TestFoldLossesDeterministic(t *testing.T) {
	a := `{"a":1,"b":1,"c":{"d":1,"e":1,"f":1},"g":1,"h":1,"i":1,"j":1,"k":1}`
	b := `{"a":2,"b":2,"c":{"d":2,"e":2,"f":2},"g":2,"h":2,"i":2,"j":2,"k":2}`
	var first []Loss
	for i := 0; i < 50; i++ {
		r := Fold([]Layer{
			{Spec: FromValue(mustJSON(t, a), 0), Strategy: PatchDefaults, Src: 0},
			{Spec: FromValue(mustJSON(t, b), 1), Src: 1},
		})
		if len(r.Losses) != 10 {
			t.Fatalf("got %d losses, want 10", len(r.Losses))
		}
		if first == nil {
			first = r.Losses
		} else if !reflect.DeepEqual(first, r.Losses) {
			t.Fatalf("losses changed order:\n%v\n%v", first, r.Losses)
		}
	}
	if first[0].Path != "a" || first[2].Path != "c.d" || first[9].Path != "k" {
		t.Fatalf("losses not sorted by path: %v", first)
	}
}

// Winners are not shared between losses.
func TestFoldWinnersNotShared(t *testing.T) {
	r := Fold([]Layer{
		{Spec: FromValue(mustJSON(t, `{"a":1,"b":1}`), 0), Strategy: AtomicDefaults, Src: 0},
		{Spec: FromValue(mustJSON(t, `{"c":1}`), 1), Src: 1},
	})
	if len(r.Losses) != 2 {
		t.Fatalf("losses %v", r.Losses)
	}
	_ = append(r.Losses[0].Winners, 98)
	r.Losses[0].Winners[0] = 99
	if !reflect.DeepEqual(r.Losses[1].Winners, []Src{1}) {
		t.Fatalf("winners shared between losses: %v", r.Losses[1].Winners)
	}
}

// With EmptyReplaced, an atomic-defaults layer that sets no field loses its
// whole spec (SpecPath) to the layers that replace it, even empty ones;
// without it, it loses nothing. A layer that sets fields loses them as
// before, and the patch strategies merge an empty layer as before.
func TestFoldEmptyReplaced(t *testing.T) {
	empty := func(src Src) *Tree { return FromValue(map[string]any{}, src) }
	full := func(src Src) *Tree { return FromValue(map[string]any{"a": 1.0}, src) }
	for _, tc := range []struct {
		name   string
		stack  []Layer
		opts   Options
		losses []Loss
	}{
		{"empty over a field", []Layer{{Spec: empty(0), Strategy: AtomicDefaults, Src: 0}, {Spec: full(1), Src: 1}},
			Options{EmptyReplaced: true}, []Loss{loss(0, SpecPath, 1)}},
		{"empty over empty", []Layer{{Spec: empty(0), Strategy: AtomicDefaults, Src: 0}, {Spec: empty(1), Src: 1}},
			Options{EmptyReplaced: true}, []Loss{loss(0, SpecPath, 1)}},
		{"empty over a field, by default", []Layer{{Spec: empty(0), Strategy: AtomicDefaults, Src: 0}, {Spec: full(1), Src: 1}},
			Options{}, nil},
		{"a field over empty", []Layer{{Spec: full(0), Strategy: AtomicDefaults, Src: 0}, {Spec: empty(1), Src: 1}},
			Options{EmptyReplaced: true}, []Loss{loss(0, "a", 1)}},
		{"empty patch", []Layer{{Spec: empty(0), Strategy: PatchDefaults, Src: 0}, {Spec: full(1), Src: 1}},
			Options{EmptyReplaced: true}, nil},
		{"three levels", []Layer{{Spec: empty(0), Strategy: AtomicDefaults, Src: 0}, {Spec: empty(1), Strategy: AtomicDefaults, Src: 1}, {Spec: full(2), Src: 2}},
			Options{EmptyReplaced: true}, []Loss{loss(0, SpecPath, 2), loss(1, SpecPath, 2)}},
	} {
		r := FoldWith(tc.stack, tc.opts)
		if !reflect.DeepEqual(r.Losses, tc.losses) {
			t.Errorf("%s: Losses = %+v, want %+v", tc.name, r.Losses, tc.losses)
		}
	}
}
