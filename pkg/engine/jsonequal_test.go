package engine

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestJSONEqual: jsonEqual agrees with reflect.DeepEqual on the values of
// unstructured objects (nil and empty containers, numbers of both types
// decoding yields, nesting), on copies made by decoding too, and on a
// type decoding never yields (by falling back to reflection).
func TestJSONEqual(t *testing.T) {
	vals := []any{
		nil, "a", "b", int64(1), int64(2), float64(1), true, false,
		map[string]any(nil), map[string]any{}, map[string]any{"a": int64(1)}, map[string]any{"a": int64(2)},
		map[string]any{"a": int64(1), "b": nil}, map[string]any{"a": int64(1), "c": nil},
		map[string]any{"a": []any{"x", map[string]any{"y": true}}},
		map[string]any{"a": []any{"x", map[string]any{"y": false}}},
		[]any(nil), []any{}, []any{"a"}, []any{"a", "b"}, []any{"b", "a"}, []any{nil},
		[]string{"typed"},
	}
	for i, a := range vals {
		for j, b := range vals {
			if got, want := jsonEqual(a, b), reflect.DeepEqual(a, b); got != want {
				t.Errorf("jsonEqual(%#v, %#v) = %v, reflect.DeepEqual says %v (%d, %d)", a, b, got, want, i, j)
			}
		}
	}
	for _, doc := range []string{`{"a":[1,{"b":"c"}],"d":null,"e":true}`, `[1.5,"x",[]]`} {
		var x, y any
		if json.Unmarshal([]byte(doc), &x) != nil || json.Unmarshal([]byte(doc), &y) != nil {
			t.Fatal(doc)
		}
		if !jsonEqual(x, y) {
			t.Errorf("two decodings of %s differ", doc)
		}
	}
}
