package merge

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestJoinPath(t *testing.T) {
	for _, c := range []struct{ path, key, want string }{
		{"", "a", "a"},
		{"a", "b", "a.b"},
		{"a.b", "c_d-E9", "a.b.c_d-E9"},
		{"", "a.b", `["a.b"]`},
		{"m", "a.b", `m["a.b"]`},
		{"m", "", `m[""]`},
		{"m", "x y", `m["x y"]`},
		{"m", `a"b`, `m["a\"b"]`},
		{"m", "é", `m["é"]`},
		{"m", "a[0]", `m["a[0]"]`},
		{`m["a.b"]`, "c", `m["a.b"].c`},
	} {
		if got := JoinPath(c.path, c.key); got != c.want {
			t.Errorf("JoinPath(%q, %q) = %s, want %s", c.path, c.key, got, c.want)
		}
	}
}

func TestTreeValueAndLeaves(t *testing.T) {
	v := mustJSON(t, `{"a":{"b":null,"c":1,"d":{}},"e":null,"f":[null,{"g":null,"h":[{"i":null}]}],"j":{"k":null},"l":"s"}`)
	tr := FromValue(v, 3)
	if got, want := jsonOf(tr.Value()), `{"a":{"c":1,"d":{}},"f":[null,{"h":[{}]}],"j":{},"l":"s"}`; got != want {
		t.Errorf("Value() = %s, want %s", got, want)
	}
	var paths []string
	for _, l := range tr.Leaves() {
		if l.Src != 3 {
			t.Errorf("leaf %s has source %d", l.Path, l.Src)
		}
		paths = append(paths, l.Path+"="+jsonOf(l.Value))
	}
	if got, want := strings.Join(paths, " "), `a.c=1 a.d={} f=[null,{"h":[{}]}] j={} l="s"`; got != want {
		t.Errorf("Leaves() = %s, want %s", got, want)
	}
	if tr.Src() != 3 {
		t.Errorf("Src() = %d", tr.Src())
	}
	// Values handed out are copies.
	tr.Value().(map[string]any)["f"].([]any)[0] = "changed"
	tr.Leaves()[2].Value.([]any)[0] = "changed"
	tr.Object()["a"].(map[string]any)["c"] = "changed"
	if got, want := jsonOf(tr.Value()), `{"a":{"c":1,"d":{}},"f":[null,{"h":[{}]}],"j":{},"l":"s"}`; got != want {
		t.Errorf("Value() after changing copies = %s, want %s", got, want)
	}
}

func TestTreeNonObjects(t *testing.T) {
	if v := FromValue(nil, 1).Value(); v != nil {
		t.Errorf("null tree Value() = %v", v)
	}
	if l := FromValue(nil, 1).Leaves(); l != nil {
		t.Errorf("null tree Leaves() = %v", l)
	}
	if m := FromValue(5.0, 1).Object(); m == nil || len(m) != 0 {
		t.Errorf("scalar tree Object() = %v, want {}", m)
	}
	if got := FromValue(map[string]any{}, 1).Leaves(); len(got) != 0 {
		t.Errorf("an empty root is not a leaf: %v", got)
	}
	if got := FromValue(map[string]any(nil), 1).Value(); !reflect.DeepEqual(got, map[string]any{}) {
		t.Errorf("nil map Value() = %#v, want {}", got)
	}
}

func TestStrategies(t *testing.T) {
	for _, s := range All {
		got, err := ParseStrategy(string(s))
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %q, %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "Atomic-Defaults", "atomic", "patch"} {
		if _, err := ParseStrategy(bad); err == nil || !strings.Contains(err.Error(), "unknown merge strategy") {
			t.Errorf("ParseStrategy(%q) error = %v", bad, err)
		}
	}
	if len(All) != 6 || All[0] != None || !reflect.DeepEqual(All[1:], Order) {
		t.Errorf("All = %v", All)
	}
	for s, want := range map[Strategy]struct {
		over   bool
		stanza string
	}{
		None: {false, ""}, AtomicDefaults: {false, "defaults"}, PatchDefaults: {false, "defaults"},
		AtomicOverrides: {true, "overrides"}, PatchOverrides: {true, "overrides"}, Custom: {false, ""},
	} {
		if s.IsOverride() != want.over || s.Stanza() != want.stanza {
			t.Errorf("%s: IsOverride %v, Stanza %q", s, s.IsOverride(), s.Stanza())
		}
	}
}

// plainKey is the regexp ^[A-Za-z0-9_-]+$ that JoinPath used to run.
func TestPlainKeyMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	keys := []string{"", "a", "a-b_C9", "a.b", "a b", "é", "a\n", "\x00", "--", "_"}
	for c := 0; c < 256; c++ {
		keys = append(keys, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}), string([]byte{byte(c)})+"Z9")
	}
	for _, k := range keys {
		if got, want := plainKey(k), re.MatchString(k); got != want {
			t.Errorf("plainKey(%q) = %v, regexp says %v", k, got, want)
		}
	}
}

func TestAssemble(t *testing.T) {
	tr := Assemble([]Field{
		{Keys: []string{"a", "b"}, Value: 1.0, Src: 1},
		{Keys: []string{"a", "c"}, Value: map[string]any{"d": "x"}, Src: 2},
		{Keys: []string{"e"}, Value: "old", Src: 3},
		{Keys: []string{"e", "f"}, Value: true, Src: 4},
		{Keys: []string{"g.h"}, Value: map[string]any{}, Src: 5},
	})
	want := map[string]any{"a": map[string]any{"b": 1.0, "c": map[string]any{"d": "x"}}, "e": map[string]any{"f": true}, "g.h": map[string]any{}}
	if got := tr.Object(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Object() = %v, want %v", got, want)
	}
	var got []string
	for _, l := range tr.Leaves() {
		got = append(got, fmt.Sprintf("%s=%v@%d", l.Path, l.Value, l.Src))
	}
	wantLeaves := []string{`["g.h"]=map[]@5`, "a.b=1@1", "a.c.d=x@2", "e.f=true@4"}
	if !reflect.DeepEqual(got, wantLeaves) {
		t.Fatalf("Leaves() = %q, want %q", got, wantLeaves)
	}
}

// Split parts a tree at a map's members: the picked ones below their
// ancestors, the rest without the objects left empty; nothing picked
// leaves the tree as it is.
func TestTreeSplit(t *testing.T) {
	tr := FromValue(map[string]any{"options": map[string]any{"a": 1.0, "b": map[string]any{"x": 2.0}}, "other": true}, 3)
	in, out := tr.Split([]string{"options"}, func(k string) bool { return k == "b" })
	if got := fmt.Sprint(in.Value()); got != "map[options:map[b:map[x:2]]]" {
		t.Errorf("in = %s", got)
	}
	if got := fmt.Sprint(out.Value()); got != "map[options:map[a:1] other:true]" {
		t.Errorf("out = %s", got)
	}
	if in.Child("options").Child("b").Src() != 3 || in.Child("options").Child("b").Path() != "options.b" {
		t.Errorf("picked member lost its source or path")
	}
	in, out = tr.Split([]string{"options"}, func(string) bool { return true })
	if got := fmt.Sprint(out.Value()); got != "map[other:true]" || out.Child("options") != nil {
		t.Errorf("everything picked: out = %s", got)
	}
	if got := fmt.Sprint(in.Value()); got != "map[options:map[a:1 b:map[x:2]]]" {
		t.Errorf("everything picked: in = %s", got)
	}
	if in, out := tr.Split([]string{"options"}, func(string) bool { return false }); in != nil || out != tr {
		t.Errorf("nothing picked: in %v, out changed %v", in, out != tr)
	}
	if in, out := tr.Split([]string{"missing"}, func(string) bool { return true }); in != nil || out != tr {
		t.Errorf("no such object: in %v", in)
	}
	if in, out := tr.Split(nil, func(k string) bool { return k == "other" }); fmt.Sprint(in.Value()) != "map[other:true]" || out.Child("other") != nil {
		t.Errorf("at the root: in %v, out %v", in.Value(), out.Value())
	}
	if !FromValue(map[string]any{}, 0).Empty() || tr.Empty() || !(*Tree)(nil).Empty() {
		t.Error("Empty")
	}
}
