package merge

import (
	"fmt"
	"testing"
)

// benchSpec is a spec of 20 top-level fields: scalars, lists, and every
// fourth one an object of three fields. Layer i sets the fields it shares
// with the others to its own values, so every step replaces something.
func benchSpec(layer int) map[string]any {
	m := make(map[string]any, 20)
	for f := 0; f < 20; f++ {
		key := fmt.Sprintf("field%d", (f+layer*3)%26) // layers overlap on most keys
		switch f % 4 {
		case 0:
			m[key] = map[string]any{"a": float64(layer), "b": fmt.Sprint("v", layer), "c": []any{float64(f), float64(layer)}}
		case 1:
			m[key] = []any{fmt.Sprint("x", layer), fmt.Sprint("y", f)}
		case 2:
			m[key] = f%3 == layer%3
		default:
			m[key] = float64(f*10 + layer)
		}
	}
	return m
}

func benchStack(strats ...Strategy) []Layer {
	ls := make([]Layer, len(strats))
	for i, s := range strats {
		ls[i] = Layer{Spec: FromValue(benchSpec(i), Src(i)), Strategy: s, Src: Src(i)}
	}
	return ls
}

func benchFold(b *testing.B, stack []Layer) {
	r := Fold(stack)
	b.ReportMetric(float64(len(r.Losses)), "losses/op")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Fold(stack)
	}
}

func BenchmarkFoldPatch(b *testing.B) {
	benchFold(b, benchStack(PatchDefaults, PatchOverrides, PatchDefaults, PatchOverrides, PatchDefaults))
}

func BenchmarkFoldAtomic(b *testing.B) {
	benchFold(b, benchStack(AtomicDefaults, AtomicOverrides, AtomicDefaults, AtomicOverrides, AtomicDefaults))
}

// The result's value and leaves, which a caller builds once per context.
func BenchmarkFoldPatchValueLeaves(b *testing.B) {
	stack := benchStack(PatchDefaults, PatchOverrides, PatchDefaults, PatchOverrides, PatchDefaults)
	b.ReportAllocs()
	for b.Loop() {
		r := Fold(stack)
		_ = r.Tree.Value()
		_ = r.Tree.Leaves()
	}
}

// benchSchemaSpec is benchSpec with every list a list-map of four items
// (items of neighbouring layers share two names) or, every other field, a
// set; benchSchema marks them.
func benchSchemaSpec(layer int) map[string]any {
	m := benchSpec(layer)
	for k, v := range m {
		if _, ok := v.([]any); !ok {
			continue
		}
		if len(k)%2 == 0 {
			m[k] = []any{fmt.Sprint("s", layer), fmt.Sprint("s", layer+1), "s"}
			continue
		}
		items := make([]any, 4)
		for i := range items {
			items[i] = map[string]any{"name": fmt.Sprint("n", layer*2+i), "value": float64(layer), "tags": []any{"t"}}
		}
		m[k] = items
	}
	return m
}

func benchSchema(b *testing.B) *Schema {
	props := map[string]any{}
	for f := 0; f < 26; f++ {
		key := fmt.Sprintf("field%d", f)
		if len(key)%2 == 0 {
			props[key] = map[string]any{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]any{"type": "string"}}
		} else {
			props[key] = map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
				"items": map[string]any{"type": "object"}}
		}
	}
	s, err := SchemaFromOpenAPI(map[string]any{"type": "object", "properties": props})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// The same five-layer patch fold with its lists merged item by item, the
// specs built by FromValueWith as a caller that keeps them would.
func BenchmarkFoldSchema(b *testing.B) {
	s := benchSchema(b)
	strats := []Strategy{PatchDefaults, PatchOverrides, PatchDefaults, PatchOverrides, PatchDefaults}
	stack := make([]Layer, len(strats))
	for i, st := range strats {
		stack[i] = Layer{Spec: FromValueWith(benchSchemaSpec(i), Src(i), s), Strategy: st, Src: Src(i)}
	}
	opts := Options{Schema: s}
	r := FoldWith(stack, opts)
	b.ReportMetric(float64(len(r.Losses)), "losses/op")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		FoldWith(stack, opts)
	}
}
