package merge

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// testSchemaJSON exercises every marker: list-maps by one and by two keys,
// a set, atomic lists, an atomic map, a list-map inside a list-map's items
// and a set inside an item.
const testSchemaJSON = `{"type":"object","properties":{
 "headers":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
  "items":{"type":"object","properties":{"name":{"type":"string"},"value":{"type":"string"},
   "tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}}},
 "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port","protocol"],
  "items":{"type":"object","properties":{"port":{"type":"integer"},"protocol":{"type":"string"},"name":{"type":"string"}}}},
 "hosts":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
 "atomicList":{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}},
 "plainList":{"type":"array","items":{"type":"object"}},
 "selector":{"type":"object","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"integer"}}},
 "rules":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
  "items":{"type":"object","properties":{"name":{"type":"string"},
   "filters":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["type"],
    "items":{"type":"object","properties":{"type":{"type":"string"},"value":{"type":"integer"}}}}}}}
}}`

func testSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := SchemaFromOpenAPI(mustJSON(t, testSchemaJSON).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	return s.WithAtomicEntries("limits", "auth.rules")
}

func TestFoldSchema(t *testing.T) {
	s := testSchema(t)
	for _, c := range []foldCase{
		{
			name: "list-map by one key: the patch's item patches the target's, others kept",
			stack: []tl{
				{1, pd, `{"headers":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}`, nil},
				{2, ad, `{"headers":[{"name":"b","value":"3"},{"name":"c","value":"4"}]}`, nil},
			},
			want: `{"headers":[{"name":"a","value":"1"},{"name":"b","value":"3"},{"name":"c","value":"4"}]}`,
			leaves: map[string]Src{
				"headers[name=a].name": 1, "headers[name=a].value": 1,
				"headers[name=b].name": 2, "headers[name=b].value": 2,
				"headers[name=c].name": 2, "headers[name=c].value": 2,
			},
			losses: []Loss{loss(1, "headers[name=b].name", 2), loss(1, "headers[name=b].value", 2)},
		},
		{
			name: "list-map by two keys",
			stack: []tl{
				{1, pd, `{"ports":[{"port":80,"protocol":"TCP","name":"http"},{"port":80,"protocol":"UDP","name":"dns"}]}`, nil},
				{2, ad, `{"ports":[{"port":80,"protocol":"UDP","name":"quic"},{"port":"80","protocol":"TCP"}]}`, nil},
			},
			want: `{"ports":[{"port":80,"protocol":"TCP","name":"http"},{"port":80,"protocol":"UDP","name":"quic"},{"port":"80","protocol":"TCP"}]}`,
			leaves: map[string]Src{
				"ports[port=80,protocol=TCP].name": 1, "ports[port=80,protocol=TCP].port": 1, "ports[port=80,protocol=TCP].protocol": 1,
				"ports[port=80,protocol=UDP].name": 2, "ports[port=80,protocol=UDP].port": 2, "ports[port=80,protocol=UDP].protocol": 2,
				`ports[port="80",protocol=TCP].port`: 2, `ports[port="80",protocol=TCP].protocol`: 2,
			},
			losses: []Loss{
				loss(1, "ports[port=80,protocol=UDP].name", 2), loss(1, "ports[port=80,protocol=UDP].port", 2),
				loss(1, "ports[port=80,protocol=UDP].protocol", 2),
			},
		},
		{
			name:   "set union: target order, then the patch's new items",
			stack:  []tl{{1, pd, `{"hosts":["a","b"]}`, nil}, {2, ad, `{"hosts":["b","c.d"]}`, nil}},
			want:   `{"hosts":["a","b","c.d"]}`,
			leaves: map[string]Src{"hosts[=a]": 1, "hosts[=b]": 2, `hosts[="c.d"]`: 2},
			losses: []Loss{loss(1, "hosts[=b]", 2)},
		},
		{
			name:   "set whose patch reorders shared items: the patch's order, as SMD",
			stack:  []tl{{1, pd, `{"hosts":["a","b","x"]}`, nil}, {2, ad, `{"hosts":["c","x","a"]}`, nil}},
			want:   `{"hosts":["b","c","x","a"]}`,
			leaves: map[string]Src{"hosts[=a]": 2, "hosts[=b]": 1, "hosts[=c]": 2, "hosts[=x]": 2},
			losses: []Loss{loss(1, "hosts[=a]", 2), loss(1, "hosts[=x]", 2)},
		},
		{
			name: "atomic and unmarked lists are replaced whole",
			stack: []tl{
				{1, pd, `{"atomicList":["x","y"],"plainList":[{"a":1}]}`, nil},
				{2, ad, `{"atomicList":["z"],"plainList":[{"b":1}]}`, nil},
			},
			want:   `{"atomicList":["z"],"plainList":[{"b":1}]}`,
			leaves: map[string]Src{"atomicList": 2, "plainList": 2},
			losses: []Loss{loss(1, "atomicList", 2), loss(1, "plainList", 2)},
		},
		{
			name:   "atomic map is replaced whole, also by {}",
			stack:  []tl{{1, pd, `{"selector":{"a":1,"b":2},"other":{"a":1}}`, nil}, {2, ad, `{"selector":{"a":3},"other":{"b":1}}`, nil}},
			want:   `{"selector":{"a":3},"other":{"a":1,"b":1}}`,
			leaves: map[string]Src{"selector.a": 2, "other.a": 1, "other.b": 2},
			losses: []Loss{loss(1, "selector.a", 2), loss(1, "selector.b", 2)},
		},
		{
			name:   "atomic map replaced by an empty object",
			stack:  []tl{{1, pd, `{"selector":{"a":1}}`, nil}, {2, ad, `{"selector":{}}`, nil}},
			want:   `{"selector":{}}`,
			leaves: map[string]Src{"selector": 2},
			losses: []Loss{loss(1, "selector.a", 2)},
		},
		{
			name: "list-map inside a list-map item merges item by item",
			stack: []tl{
				{1, pd, `{"rules":[{"name":"r1","filters":[{"type":"x","value":1},{"type":"y","value":2}]},{"name":"r2"}]}`, nil},
				{2, ad, `{"rules":[{"name":"r1","filters":[{"type":"y","value":3},{"type":"z","value":4}]}]}`, nil},
			},
			want: `{"rules":[{"name":"r1","filters":[{"type":"x","value":1},{"type":"y","value":3},{"type":"z","value":4}]},{"name":"r2"}]}`,
			leaves: map[string]Src{
				"rules[name=r1].name":                  2,
				"rules[name=r1].filters[type=x].type":  1,
				"rules[name=r1].filters[type=x].value": 1,
				"rules[name=r1].filters[type=y].type":  2,
				"rules[name=r1].filters[type=y].value": 2,
				"rules[name=r1].filters[type=z].type":  2,
				"rules[name=r1].filters[type=z].value": 2,
				"rules[name=r2].name":                  1,
			},
			losses: []Loss{
				loss(1, "rules[name=r1].filters[type=y].type", 2), loss(1, "rules[name=r1].filters[type=y].value", 2),
				loss(1, "rules[name=r1].name", 2),
			},
		},
		{
			name: "null in a patch item deletes the field, also through a higher level",
			stack: []tl{
				{0, pd, `{"headers":[{"name":"a","value":"0","tags":["u"]}]}`, nil},
				{1, pd, `{"headers":[{"name":"a","value":"1","tags":["t"]}]}`, nil},
				{2, ad, `{"headers":[{"name":"a","value":null},{"name":"n","value":null}]}`, nil},
			},
			want: `{"headers":[{"name":"a","tags":["u","t"]},{"name":"n"}]}`,
			leaves: map[string]Src{
				"headers[name=a].name": 2, "headers[name=a].tags[=u]": 0, "headers[name=a].tags[=t]": 1,
				"headers[name=n].name": 2,
			},
			losses: []Loss{
				loss(0, "headers[name=a].name", 2), loss(0, "headers[name=a].value", 2),
				loss(1, "headers[name=a].name", 2), loss(1, "headers[name=a].value", 2),
			},
		},
		{
			name: "named rules: an entry of the winner replaces the entry whole; a null deletes one",
			stack: []tl{
				{1, pd, `{"limits":{"r1":{"rates":[1],"when":{"a":1}},"r2":{"x":1},"r4":{"z":1}},"auth":{"rules":{"a":{"k":1,"j":2}},"other":{"p":1}}}`, nil},
				{2, ad, `{"limits":{"r1":{"rates":[2]},"r3":{"y":1},"r4":null},"auth":{"rules":{"a":{"k":3}},"other":{"q":1}}}`, nil},
			},
			want: `{"limits":{"r1":{"rates":[2]},"r2":{"x":1},"r3":{"y":1}},"auth":{"rules":{"a":{"k":3}},"other":{"p":1,"q":1}}}`,
			leaves: map[string]Src{
				"limits.r1.rates": 2, "limits.r2.x": 1, "limits.r3.y": 2,
				"auth.rules.a.k": 2, "auth.other.p": 1, "auth.other.q": 2,
			},
			losses: []Loss{
				loss(1, "auth.rules.a.j", 2), loss(1, "auth.rules.a.k", 2),
				loss(1, "limits.r1.rates", 2), loss(1, "limits.r1.when.a", 2), loss(1, "limits.r4.z", 2),
			},
		},
		{
			name: "an item lacking its key makes the list atomic for that merge",
			stack: []tl{
				{1, pd, `{"headers":[{"name":"a","value":"1"}]}`, nil},
				{2, ad, `{"headers":[{"value":"2"}]}`, nil},
			},
			want:   `{"headers":[{"value":"2"}]}`,
			leaves: map[string]Src{"headers": 2},
			losses: []Loss{loss(1, "headers[name=a].name", 2), loss(1, "headers[name=a].value", 2)},
		},
		{
			name: "duplicate keys in the target make the list atomic for that merge",
			stack: []tl{
				{1, pd, `{"headers":[{"name":"a","value":"1"},{"name":"a"}],"hosts":["a","a"]}`, nil},
				{2, ad, `{"headers":[{"name":"b"}],"hosts":["b"]}`, nil},
			},
			want:   `{"headers":[{"name":"b"}],"hosts":["b"]}`,
			leaves: map[string]Src{"headers[name=b].name": 2, "hosts[=b]": 2},
			losses: []Loss{loss(1, "headers", 2), loss(1, "hosts", 2)},
		},
		{
			name: "patch-overrides: the established policy's items win, the rest kept",
			stack: []tl{
				{0, po, `{"headers":[{"name":"a","value":"0"}]}`, nil},
				{1, pd, `{"headers":[{"name":"b","value":"1"}]}`, nil},
				{2, ad, `{"headers":[{"name":"a","value":"2"},{"name":"c","value":"2"}]}`, nil},
			},
			want: `{"headers":[{"name":"b","value":"1"},{"name":"a","value":"0"},{"name":"c","value":"2"}]}`,
			leaves: map[string]Src{
				"headers[name=a].name": 0, "headers[name=a].value": 0,
				"headers[name=b].name": 1, "headers[name=b].value": 1,
				"headers[name=c].name": 2, "headers[name=c].value": 2,
			},
			losses: []Loss{loss(2, "headers[name=a].name", 0), loss(2, "headers[name=a].value", 0)},
		},
		{
			name: "atomic strategies ignore the schema, losses are per item",
			stack: []tl{
				{1, ad, `{"headers":[{"name":"a","value":"1"}]}`, nil},
				{2, ad, `{"headers":[{"name":"b"}]}`, nil},
			},
			want:   `{"headers":[{"name":"b"}]}`,
			leaves: map[string]Src{"headers[name=b].name": 2},
			losses: []Loss{loss(1, "headers[name=a].name", 2), loss(1, "headers[name=a].value", 2)},
		},
		{
			name: "an empty patch list adds nothing; a list-map replacing a scalar",
			stack: []tl{
				{1, pd, `{"headers":[{"name":"a"}],"hosts":"x"}`, nil},
				{2, ad, `{"headers":[],"hosts":["y"]}`, nil},
			},
			want:   `{"headers":[{"name":"a"}],"hosts":["y"]}`,
			leaves: map[string]Src{"headers[name=a].name": 1, "hosts[=y]": 2},
			losses: []Loss{loss(1, "hosts", 2)},
		},
		{
			name: "custom: the result's items are credited one by one",
			stack: []tl{
				{1, cus, `{"hosts":["a"]}`, customFns[0].fn}, // deep merge, established wins (lists whole)
				{2, ad, `{"hosts":["b","c"]}`, nil},
			},
			want:   `{"hosts":["a"]}`,
			leaves: map[string]Src{"hosts[=a]": 1},
			losses: []Loss{loss(2, "hosts[=b]", 1), loss(2, "hosts[=c]", 1)},
		},
	} {
		c.schema = s
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

// A nil schema is Fold exactly, and a schema that marks nothing is nil.
func TestFoldWithNilSchema(t *testing.T) {
	s, err := SchemaFromOpenAPI(mustJSON(t, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}},"b":{"type":"object","x-kubernetes-map-type":"granular"}}}`).(map[string]any))
	if err != nil || s != nil {
		t.Fatalf("SchemaFromOpenAPI of a plain schema = %v, %v; want nil, nil", s, err)
	}
	sc := twoLayers(mustJSON(t, `{"a":[1],"b":{"c":1}}`), mustJSON(t, `{"a":[2],"b":{"d":null}}`), PatchDefaults, nil)
	a, b := Fold(sc.layers()), FoldWith(sc.layers(), Options{})
	if !reflect.DeepEqual(a.Tree.Leaves(), b.Tree.Leaves()) || !reflect.DeepEqual(a.Losses, b.Losses) {
		t.Errorf("Fold %+v, FoldWith(nil) %+v", a, b)
	}
}

func TestSchemaFromOpenAPIErrors(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"properties":{"a":{"x-kubernetes-list-type":"map"}}}`, "a: x-kubernetes-list-type map needs"},
		{`{"properties":{"a":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":[]}}}`, "a: x-kubernetes-list-type map needs"},
		{`{"properties":{"a":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":"name"}}}`, "a: x-kubernetes-list-type map needs"},
		{`{"properties":{"a":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":[1]}}}`, "a: x-kubernetes-list-map-keys entry 1 is not a field name"},
		{`{"properties":{"a":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k","k"]}}}`, `names "k" twice`},
		{`{"properties":{"a":{"x-kubernetes-list-type":"set","x-kubernetes-list-map-keys":["k"]}}}`, "a: x-kubernetes-list-map-keys on a list that is not"},
		{`{"properties":{"a":{"x-kubernetes-list-type":"bag"}}}`, "a: unknown x-kubernetes-list-type bag"},
		{`{"x-kubernetes-map-type":"bag"}`, "(root): unknown x-kubernetes-map-type bag"},
		{`{"properties":{"rules":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"properties":{"filters":{"x-kubernetes-list-type":"map"}}}}}}`, "rules[].filters: x-kubernetes-list-type map needs"},
		{`{"additionalProperties":{"properties":{"x.y":{"x-kubernetes-list-type":"map"}}}}`, `*["x.y"]: x-kubernetes-list-type map needs`},
	} {
		_, err := SchemaFromOpenAPI(mustJSON(t, c.schema).(map[string]any))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SchemaFromOpenAPI(%s) = %v, want an error containing %q", c.schema, err, c.want)
		}
	}
}

func TestSchemaChildAndEntries(t *testing.T) {
	s := testSchema(t)
	base, _ := SchemaFromOpenAPI(mustJSON(t, testSchemaJSON).(map[string]any))
	if base.Child("limits") != nil || base.Child("headers") == nil || base.Child("headers").Items().Child("tags") == nil {
		t.Errorf("Child on %s", base)
	}
	if base.Child("nope") != nil || (*Schema)(nil).Child("a") != nil {
		t.Error("Child of an undescribed field is not nil")
	}
	if !s.Child("limits").atomicEntries || !s.Child("auth").Child("rules").atomicEntries || s.Child("auth").atomicEntries {
		t.Errorf("WithAtomicEntries: %s", s)
	}
	if strings.Contains(base.String(), "entries") {
		t.Errorf("WithAtomicEntries changed its receiver: %s", base)
	}
	n := (*Schema)(nil).WithAtomicEntries("a.b", "", "c..d")
	if got, want := n.String(), "{a:{b:entries} c:{d:entries}}"; got != want {
		t.Errorf("WithAtomicEntries on nil = %s, want %s", got, want)
	}
}

func TestKeyText(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
		ok   bool
	}{
		{"x-foo", "x-foo", true},
		{"X_1", "X_1", true},
		{"80", `"80"`, true},
		{"true", `"true"`, true},
		{"null", `"null"`, true},
		{"1e5", `"1e5"`, true},
		{"a.b", `"a.b"`, true},
		{"/path", `"/path"`, true},
		{"", `""`, true},
		{`a"b`, `"a\"b"`, true},
		{80.0, "80", true},
		{int64(80), "80", true},
		{1.5, "1.5", true},
		{true, "true", true},
		{nil, "", false},
		{map[string]any{}, "", false},
		{[]any{}, "", false},
	} {
		got, ok := KeyText(c.v)
		if got != c.want || ok != c.ok {
			t.Errorf("KeyText(%#v) = %q, %v; want %q, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// Keyed trees still give plain JSON values, and keys that need quoting are
// quoted in the item's selector.
func TestFromValueWithPaths(t *testing.T) {
	s, err := SchemaFromOpenAPI(mustJSON(t, `{"properties":{"l.m":{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a b","k"]}}}`).(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	v := mustJSON(t, `{"l.m":[{"a b":"x","k":true,"v":null},{"a b":"y z","k":1}]}`)
	tr := FromValueWith(v, 1, s)
	if got, want := jsonOf(tr.Value()), `{"l.m":[{"a b":"x","k":true},{"a b":"y z","k":1}]}`; got != want {
		t.Errorf("Value() = %s, want %s", got, want)
	}
	var paths []string
	for _, l := range tr.Leaves() {
		paths = append(paths, l.Path)
	}
	if got, want := strings.Join(paths, " "), `["l.m"]["a b"="y z",k=1].k ["l.m"]["a b"="y z",k=1]["a b"] ["l.m"]["a b"=x,k=true].k ["l.m"]["a b"=x,k=true]["a b"]`; got != want {
		t.Errorf("Leaves() = %s\nwant %s", got, want)
	}
}

// Specs built by FromValueWith folded without a schema: lists merge whole
// (RFC 7386), and a keyed list that is replaced loses item by item.
func TestFoldKeyedTreesWithoutSchema(t *testing.T) {
	s := testSchema(t)
	est := FromValueWith(mustJSON(t, `{"headers":[{"name":"a","value":"1"}],"hosts":["x"]}`), 1, s)
	chal := FromValueWith(mustJSON(t, `{"headers":{"o":1},"hosts":["y"]}`), 2, s)
	r := Fold([]Layer{{Spec: est, Strategy: pd, Src: 1}, {Spec: chal, Strategy: ad, Src: 2}})
	if got, want := jsonOf(r.Tree.Value()), `{"headers":{"o":1},"hosts":["y"]}`; got != want {
		t.Errorf("value %s, want %s", got, want)
	}
	want := []Loss{loss(1, "headers[name=a].name", 2), loss(1, "headers[name=a].value", 2), loss(1, "hosts[=x]", 2)}
	if !reflect.DeepEqual(r.Losses, want) {
		t.Errorf("losses %+v, want %+v", r.Losses, want)
	}
}

// TestShallowMergeAtTheRoot: "." marks the root's entries, the top-level
// fields: a patch merge then takes each from the winning side whole
// (kgateway's shallow merge), where without it RFC 7386 merges inside.
func TestShallowMergeAtTheRoot(t *testing.T) {
	s := (*Schema)(nil).WithAtomicEntries(".")
	if !s.atomicEntries {
		t.Fatalf("root not marked: %s", s)
	}
	gw := map[string]any{"timeouts": map[string]any{"request": "10s", "idle": "5s"}, "cors": map[string]any{"allowOrigins": []any{"a"}}}
	route := map[string]any{"timeouts": map[string]any{"request": "3s"}}
	layers := []Layer{
		{Spec: FromValue(gw, 1), Strategy: PatchDefaults, Src: 1},
		{Spec: FromValue(route, 2), Strategy: PatchDefaults, Src: 2},
	}
	shallow := FoldWith(layers, Options{Schema: s})
	if got := mustString(t, shallow.Tree.Object()); got != `{"cors":{"allowOrigins":["a"]},"timeouts":{"request":"3s"}}` {
		t.Errorf("shallow: %s", got)
	}
	lost := false
	for _, l := range shallow.Losses {
		if l.Loser == 1 && l.Path == "timeouts.idle" {
			lost = true
		}
	}
	if !lost {
		t.Errorf("the Gateway's timeouts.idle is not reported lost: %+v", shallow.Losses)
	}
	deep := FoldWith(layers, Options{})
	if got := mustString(t, deep.Tree.Object()); got != `{"cors":{"allowOrigins":["a"]},"timeouts":{"idle":"5s","request":"3s"}}` {
		t.Errorf("RFC 7386: %s", got)
	}
}

func mustString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
