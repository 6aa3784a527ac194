package merge

import (
	"encoding/json"
	"testing"
)

// A policy above whose broken reference a merge keeps, replaces, or keeps
// inside a list, keyed or not.
func TestHeldAt(t *testing.T) {
	schema, err := SchemaFromOpenAPI(map[string]any{"type": "object", "properties": map[string]any{
		"keyed": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
			"items": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "ref": map[string]any{"type": "object"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	above := map[string]any{
		"plain": []any{map[string]any{"ref": map[string]any{"name": "missing"}}},
		"keyed": []any{map[string]any{"name": "a", "ref": map[string]any{"name": "missing"}}, map[string]any{"name": "b", "ref": map[string]any{"name": "ok"}}},
		"obj":   map[string]any{"ref": map[string]any{"name": "missing"}, "x": 1},
	}
	fold := func(below map[string]any) *Tree {
		r := FoldWith([]Layer{
			{Spec: FromValue(above, 1), Strategy: AtomicDefaults, Src: 1},
			{Spec: FromValue(below, 2), Strategy: AtomicDefaults, Src: 2, MergeUp: PatchDefaults},
		}, Options{Schema: schema})
		return r.Tree
	}
	own := FromValue(above, 1)
	for _, c := range []struct {
		name  string
		below map[string]any
		field string
		want  bool
	}{
		{"kept by a disjoint merge", map[string]any{"other": 1}, "spec.obj.ref", true},
		{"replaced below", map[string]any{"obj": map[string]any{"ref": map[string]any{"name": "mine"}}}, "spec.obj.ref", false},
		{"the reference partly replaced", map[string]any{"obj": map[string]any{"ref": map[string]any{"namespace": "other"}}}, "spec.obj.ref", false},
		{"a sibling replaced", map[string]any{"obj": map[string]any{"x": 2}}, "spec.obj.ref.name", true},
		{"deleted below", map[string]any{"obj": map[string]any{"ref": nil}}, "spec.obj.ref", false},
		{"plain list kept whole", map[string]any{"other": 1}, "spec.plain[0].ref", true},
		{"plain list replaced whole", map[string]any{"plain": []any{}}, "spec.plain[0].ref", false},
		{"keyed entry kept", map[string]any{"keyed": []any{map[string]any{"name": "b", "ref": map[string]any{"name": "mine"}}}}, "spec.keyed[0].ref", true},
		{"keyed entry's ref replaced", map[string]any{"keyed": []any{map[string]any{"name": "a", "ref": map[string]any{"name": "mine"}}}}, "spec.keyed[0].ref", false},
		{"second keyed entry's ref replaced", map[string]any{"keyed": []any{map[string]any{"name": "b", "ref": map[string]any{"name": "mine"}}}}, "spec.keyed[1].ref", false},
		{"index past the list", map[string]any{"other": 1}, "spec.keyed[5].ref", false},
		{"no such field", map[string]any{"other": 1}, "spec.nothere.ref", false},
		{"malformed path", map[string]any{"other": 1}, "spec.obj[x].ref", false},
	} {
		if got := HeldAt(fold(c.below), own, schema, c.field); got != c.want {
			t.Errorf("%s: HeldAt(%s) = %v, want %v", c.name, c.field, got, c.want)
		}
	}
	if HeldAt(nil, own, schema, "spec.obj") || HeldAt(own, nil, schema, "spec.obj") {
		t.Error("HeldAt of a nil tree is true")
	}
}

// FuzzHeldAt folds two fuzzed JSON specs (the lower with a merge type)
// and asks HeldAt of a fuzzed field path: it never panics, and a field
// the upper spec does not have is never held.
func FuzzHeldAt(f *testing.F) {
	f.Add(`{"a":{"ref":{"name":"x"}},"l":[{"name":"k","v":1}]}`, `{"a":{"x":1}}`, "spec.a.ref")
	f.Add(`{"l":[{"name":"k","v":1},{"name":"j"}]}`, `{"l":[{"name":"j","v":2}]}`, "spec.l[1].v")
	f.Add(`{"s":["a","b"]}`, `{"s":null}`, "s[0]")
	f.Add(`{}`, `{}`, "spec.[0]")
	schema, err := SchemaFromOpenAPI(map[string]any{"type": "object", "properties": map[string]any{
		"l": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"}, "items": map[string]any{"type": "object"}},
		"s": map[string]any{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]any{"type": "string"}},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, above, below, field string) {
		var a, b map[string]any
		if json.Unmarshal([]byte(above), &a) != nil || json.Unmarshal([]byte(below), &b) != nil {
			return
		}
		for _, s := range []*Schema{nil, schema} {
			r := FoldWith([]Layer{
				{Spec: FromValue(a, 1), Strategy: AtomicDefaults, Src: 1},
				{Spec: FromValue(b, 2), Strategy: AtomicDefaults, Src: 2, MergeUp: PatchDefaults},
			}, Options{Schema: s})
			held := HeldAt(r.Tree, FromValue(a, 1), s, field)
			if held && HeldAt(r.Tree, FromValue(map[string]any{}, 1), s, field) {
				t.Errorf("a field of an empty spec is held: %q", field)
			}
		}
	})
}
