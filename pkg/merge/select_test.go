package merge

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// listenerSchema keys perPort by port, as kgateway's ListenerPolicy CRD
// does, and marks its configurations as kgateway merges them: the fields
// of default and of each entry's listener whole, their httpSettings one
// level deeper.
func listenerSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := SchemaFromOpenAPI(mustJSON(t, `{"type":"object","properties":{"perPort":{"type":"array",
 "x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
 "items":{"type":"object","properties":{"port":{"type":"integer"},"listener":{"type":"object"}}}}}}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	return s.WithAtomicEntries("default", "default.httpSettings", "perPort[].listener", "perPort[].listener.httpSettings")
}

// A map of named rules inside another (a nested path) merges entry by
// entry; its siblings are replaced whole. Named rules reach into the items
// of a keyed list through "[]".
func TestFoldNestedNamedRules(t *testing.T) {
	s := listenerSchema(t)
	if got := s.String(); got != "{default:entries{httpSettings:entries} perPort:map[port][{listener:entries{httpSettings:entries}}]}" {
		t.Errorf("schema = %s", got)
	}
	for _, c := range []foldCase{
		{
			name: "default: tracing whole, httpSettings entry by entry",
			stack: []tl{
				{1, pd, `{"default":{"buffer":1,"tracing":{"a":1},"httpSettings":{"x":1,"tracing":{"p":"a"}}}}`, nil},
				{2, pd, `{"default":{"tracing":{"b":2},"httpSettings":{"y":2,"tracing":{"q":"b"}}}}`, nil},
			},
			want: `{"default":{"buffer":1,"tracing":{"b":2},"httpSettings":{"x":1,"y":2,"tracing":{"q":"b"}}}}`,
			leaves: map[string]Src{"default.buffer": 1, "default.tracing.b": 2, "default.httpSettings.x": 1,
				"default.httpSettings.y": 2, "default.httpSettings.tracing.q": 2},
			losses: []Loss{loss(1, "default.httpSettings.tracing.p", 2), loss(1, "default.tracing.a", 2)},
			schema: s,
		},
		{
			name: "perPort entries by port, their listener as default",
			stack: []tl{
				{1, pd, `{"perPort":[{"port":80,"listener":{"buffer":1,"rbac":{"a":1}}},{"port":443,"listener":{"buffer":4}}]}`, nil},
				{2, pd, `{"perPort":[{"port":80,"listener":{"rbac":{"b":2},"httpSettings":{"y":2}}}]}`, nil},
			},
			want: `{"perPort":[{"port":80,"listener":{"buffer":1,"rbac":{"b":2},"httpSettings":{"y":2}}},{"port":443,"listener":{"buffer":4}}]}`,
			leaves: map[string]Src{"perPort[port=80].port": 2, "perPort[port=80].listener.buffer": 1,
				"perPort[port=80].listener.rbac.b": 2, "perPort[port=80].listener.httpSettings.y": 2,
				"perPort[port=443].port": 1, "perPort[port=443].listener.buffer": 1},
			losses: []Loss{loss(1, "perPort[port=80].listener.rbac.a", 2), loss(1, "perPort[port=80].port", 2)},
			schema: s,
		},
	} {
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

// Choose puts the configuration for a key in place of the list and the
// default: the item's when the list has one for the key (the default's
// fields lost to the item's sources, the other items out of play), else
// the default's; fields beside them stay.
func TestChoose(t *testing.T) {
	s := listenerSchema(t)
	c := Choice{List: "perPort", Key: "port", Value: "listener", Default: "default"}
	r := FoldWith([]Layer{
		{Spec: FromValue(mustJSON(t, `{"other":1,"default":{"buffer":1,"x":1},"perPort":[{"port":80,"listener":{"proxy":{}}},{"port":443,"listener":{"buffer":4}}]}`), 1), Strategy: pd, Src: 1},
		{Spec: FromValue(mustJSON(t, `{"default":{"buffer":2},"perPort":[{"port":80,"listener":{"buffer":8}}]}`), 2), Strategy: pd, Src: 2},
	}, Options{Schema: s})
	for _, tc := range []struct {
		name   string
		key    float64
		want   string
		leaves map[string]Src
		losses []Loss
	}{
		{"an item for the key", 80, `{"other":1,"proxy":{},"buffer":8}`,
			map[string]Src{"other": 1, "proxy": 1, "buffer": 2},
			[]Loss{loss(1, "default.buffer", 1, 2), loss(1, "default.x", 1, 2), loss(1, "perPort[port=80].port", 2), loss(2, "default.buffer", 1, 2)}},
		{"an item of the first layer only", 443, `{"other":1,"buffer":4}`,
			map[string]Src{"other": 1, "buffer": 1},
			[]Loss{loss(1, "default.buffer", 1), loss(1, "default.x", 1), loss(2, "default.buffer", 1)}},
		{"no item: the default", 8080, `{"other":1,"buffer":2,"x":1}`,
			map[string]Src{"other": 1, "buffer": 2, "x": 1},
			[]Loss{loss(1, "default.buffer", 2)}},
		{"no key (NaN): the default", math.NaN(), `{"other":1,"buffer":2,"x":1}`,
			map[string]Src{"other": 1, "buffer": 2, "x": 1},
			[]Loss{loss(1, "default.buffer", 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Choose(c, tc.key)
			if v := roundTrip(t, got.Tree.Value()); !reflect.DeepEqual(v, mustJSON(t, tc.want)) {
				t.Errorf("Value() = %s, want %s", jsonOf(v), tc.want)
			}
			leaves := map[string]Src{}
			for _, l := range got.Tree.Leaves() {
				leaves[l.Path] = l.Src
			}
			if !reflect.DeepEqual(leaves, tc.leaves) {
				t.Errorf("Leaves() = %v, want %v", leaves, tc.leaves)
			}
			if !reflect.DeepEqual(got.Losses, tc.losses) {
				t.Errorf("Losses = %+v, want %+v", got.Losses, tc.losses)
			}
		})
	}
	// The fold itself is unchanged.
	if v := jsonOf(roundTrip(t, r.Tree.Value())); v != `{"default":{"buffer":2,"x":1},"other":1,"perPort":[{"listener":{"buffer":8,"proxy":{}},"port":80},{"listener":{"buffer":4},"port":443}]}` {
		t.Errorf("fold after Choose = %s", v)
	}
	// A list merged whole (no schema): its items are searched by value,
	// their fields the list's source.
	plain := FoldWith([]Layer{
		{Spec: FromValue(mustJSON(t, `{"perPort":[{"port":"80","listener":{"a":1}}],"default":{"b":1}}`), 1), Strategy: pd, Src: 1},
	}, Options{})
	got := plain.Choose(c, 80)
	if v := jsonOf(roundTrip(t, got.Tree.Value())); v != `{"a":1}` {
		t.Errorf("plain list: %s", v)
	}
	if !reflect.DeepEqual(got.Losses, []Loss{loss(1, "default.b", 1)}) {
		t.Errorf("plain list losses: %+v", got.Losses)
	}
}

// FuzzChoose folds random per-port specs under the listener schema and
// checks Choose against a reference on plain values: the chosen item's
// configuration (the first item for the key), else the default, in place
// of both; every leaf and loss names a layer.
func FuzzChoose(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(7), uint64(9))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		r := rand.New(rand.NewPCG(s1, s2))
		s := listenerSchema(t)
		c := Choice{List: "perPort", Key: "port", Value: "listener", Default: "default"}
		ports := []float64{80, 443, 8080}
		var layers []Layer
		srcs := map[Src]bool{}
		for i := range 1 + r.IntN(3) {
			spec := map[string]any{}
			if r.IntN(4) > 0 {
				spec["default"] = randObject(r, 2, true)
			}
			if r.IntN(4) > 0 {
				var items []any
				for range r.IntN(3) {
					it := map[string]any{"port": ports[r.IntN(len(ports))]}
					if r.IntN(5) > 0 {
						it["listener"] = randObject(r, 2, true)
					}
					items = append(items, it)
				}
				spec["perPort"] = items
			}
			if r.IntN(3) == 0 {
				spec["other"] = randValue(r, 1, false)
			}
			src := Src(i + 1)
			srcs[src] = true
			layers = append(layers, Layer{Spec: FromValue(spec, src), Strategy: All[r.IntN(len(All))], Src: src, Custom: customFns[0].fn})
		}
		folded := FoldWith(layers, Options{Schema: s})
		key := ports[r.IntN(len(ports))]
		got := folded.Choose(c, key)
		want := refChoose(folded.Tree.Value(), key)
		if g := roundTrip(t, got.Tree.Value()); !reflect.DeepEqual(g, roundTrip(t, want)) {
			t.Fatalf("Choose(%v) = %s, want %s (fold %s)", key, jsonOf(g), jsonOf(want), jsonOf(folded.Tree.Value()))
		}
		for _, l := range got.Tree.Leaves() {
			if !srcs[l.Src] {
				t.Fatalf("leaf %s from %d, no layer", l.Path, l.Src)
			}
		}
		for _, l := range got.Losses {
			if !srcs[l.Loser] || len(l.Winners) == 0 {
				t.Fatalf("loss %+v", l)
			}
		}
	})
}

// refChoose is Choose's reference on a plain value.
func refChoose(v any, key float64) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		if k != "perPort" && k != "default" {
			out[k] = x
		}
	}
	chosen := m["default"]
	items, _ := m["perPort"].([]any)
	for _, it := range items {
		if im, ok := it.(map[string]any); ok && sameKey(im["port"], key) {
			chosen = im["listener"]
			break
		}
	}
	if cm, ok := chosen.(map[string]any); ok {
		for k, x := range cm {
			out[k] = x
		}
	}
	return out
}
