package merge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"
)

// The oracle is sigs.k8s.io/structured-merge-diff (SMD): typed.Merge is how
// server-side apply merges, and it reads list-type map (any number of keys),
// set, atomic, and map-type atomic from an OpenAPI schema directly (through
// kube-openapi's schemaconv, which the API server uses for CRDs).
// k8s.io/apimachinery's strategicpatch models them less directly: its
// LookupPatchMeta has one patchMergeKey per list (no list-map-keys with two
// keys), knows no list-type, and orders items by its $setElementOrder
// directive or by position. Where SMD and this package differ, by design:
//
//   - null: SMD keeps a null in the patch as a value (it does not delete);
//     here, as in RFC 7386 and strategic merge, null deletes. The oracle's
//     patches have no nulls; refMergeS (checked against SMD here) covers
//     them in the fuzz target.
//   - data the schema rejects (an item lacking a key, duplicate keys, set
//     items that are not scalars, a type that does not match): SMD fails;
//     here the list is atomic for that merge, and a mismatched type merges
//     as RFC 7386 would. The oracle's data always conforms.
//   - directives: strategic merge's $patch, $retainKeys, $setElementOrder
//     and $deleteFromPrimitiveList are not read; SMD has none either.

// smdOracle merges patch onto target with SMD under the OpenAPI node.
type smdOracle struct {
	schema *smdschema.Schema
	ref    smdschema.TypeRef
}

func newSMDOracle(tb testing.TB, node map[string]any) *smdOracle {
	tb.Helper()
	b, err := json.Marshal(node)
	if err != nil {
		tb.Fatal(err)
	}
	var s spec.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatal(err)
	}
	ss, err := schemaconv.ToSchemaFromOpenAPI(map[string]*spec.Schema{"spec": &s}, false)
	if err != nil {
		tb.Fatalf("schemaconv: %v\n%s", err, b)
	}
	name := "spec"
	return &smdOracle{schema: ss, ref: smdschema.TypeRef{NamedType: &name}}
}

func (o *smdOracle) merge(tb testing.TB, target, patch any) any {
	tb.Helper()
	lhs, err := typed.AsTyped(value.NewValueInterface(roundTrip(tb, target)), o.schema, o.ref)
	if err != nil {
		tb.Fatalf("SMD rejects the target %s: %v", jsonOf(target), err)
	}
	rhs, err := typed.AsTyped(value.NewValueInterface(roundTrip(tb, patch)), o.schema, o.ref)
	if err != nil {
		tb.Fatalf("SMD rejects the patch %s: %v", jsonOf(patch), err)
	}
	out, err := lhs.Merge(rhs)
	if err != nil {
		tb.Fatalf("SMD merge: %v", err)
	}
	return out.AsValue().Unstructured()
}

// Random OpenAPI schemas and data that conform to them. Few names and
// values, so that items and keys collide.

func randSchemaNode(r *rand.Rand, depth int) map[string]any {
	props := map[string]any{}
	for _, name := range []string{"a", "b", "c", "d"} {
		if r.IntN(3) == 0 {
			continue
		}
		props[name] = randFieldSchema(r, depth)
	}
	return map[string]any{"type": "object", "properties": props}
}

func randFieldSchema(r *rand.Rand, depth int) map[string]any {
	str := map[string]any{"type": "string"}
	k := r.IntN(9)
	if depth <= 0 && k >= 5 {
		k %= 5
	}
	switch k {
	case 0:
		return str
	case 1:
		return map[string]any{"type": "integer"}
	case 2:
		lt := []string{"atomic", "set", ""}[r.IntN(3)]
		n := map[string]any{"type": "array", "items": str}
		if lt != "" {
			n["x-kubernetes-list-type"] = lt
		}
		return n
	case 3:
		return map[string]any{"type": "object", "additionalProperties": str}
	case 4:
		return map[string]any{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]any{"type": "integer"}}
	case 5, 6:
		item := randSchemaNode(r, depth-1)
		keys := []any{"name"}
		item["properties"].(map[string]any)["name"] = str
		if r.IntN(2) == 0 {
			keys = append(keys, "port")
			item["properties"].(map[string]any)["port"] = map[string]any{"type": "integer"}
		}
		if r.IntN(4) == 0 {
			item["x-kubernetes-map-type"] = "atomic"
		}
		return map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys, "items": item}
	case 7:
		n := randSchemaNode(r, depth-1)
		n["x-kubernetes-map-type"] = "atomic"
		return n
	default:
		return randSchemaNode(r, depth-1)
	}
}

// randData returns a value conforming to node; with nulls, some members are
// null (deletions in a patch).
func randData(r *rand.Rand, node map[string]any, nulls bool) any {
	switch node["type"] {
	case "string":
		return []string{"x", "y", "z"}[r.IntN(3)]
	case "integer":
		return float64(r.IntN(3))
	case "array":
		items := node["items"].(map[string]any)
		n := r.IntN(4)
		switch node["x-kubernetes-list-type"] {
		case "set":
			pool := []any{"x", "y", "z", "w"}
			if items["type"] == "integer" {
				pool = []any{0.0, 1.0, 2.0, 3.0}
			}
			r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
			return append([]any{}, pool[:n]...)
		case "map":
			keys := node["x-kubernetes-list-map-keys"].([]any)
			var ids [][2]any
			for _, nm := range []string{"p", "q", "r"} {
				for _, port := range []float64{1, 2} {
					if len(keys) == 1 && port == 2 {
						continue
					}
					ids = append(ids, [2]any{nm, port})
				}
			}
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			out := []any{}
			for _, id := range ids[:min(n, len(ids))] {
				it, _ := randData(r, items, nulls).(map[string]any)
				if it == nil {
					it = map[string]any{}
				}
				it["name"] = id[0]
				if len(keys) == 2 {
					it["port"] = id[1]
				}
				out = append(out, it)
			}
			return out
		default:
			out := make([]any, n)
			for i := range out {
				out[i] = randData(r, items, false)
			}
			return out
		}
	case "object":
		out := map[string]any{}
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			for _, k := range []string{"k1", "k2", "k3"} {
				if r.IntN(2) == 0 {
					out[k] = randData(r, ap, false)
				}
			}
			return out
		}
		props, _ := node["properties"].(map[string]any)
		for _, k := range sortedKeys(props) {
			switch r.IntN(5) {
			case 0, 1:
				continue
			case 2:
				if nulls && k != "name" && k != "port" {
					out[k] = nil
					continue
				}
			}
			out[k] = randData(r, props[k].(map[string]any), nulls)
		}
		return out
	}
	panic(fmt.Sprintf("randData: %v", node))
}

// checkSchemaOracle checks one patch step under the schema against SMD:
// patch-defaults over [A, B] and patch-overrides over [B, A] are both
// SMD's A.Merge(B); so is refMergeS(A, B); and the provenance invariants
// hold.
func checkSchemaOracle(tb testing.TB, o *smdOracle, s *Schema, a, b any) {
	tb.Helper()
	want := roundTrip(tb, o.merge(tb, a, b))
	if ref := roundTrip(tb, refPrune(refMergeS(a, b, s))); !reflect.DeepEqual(ref, want) {
		tb.Fatalf("refMergeS = %s, SMD = %s\nschema %s\nA %s\nB %s", jsonOf(ref), jsonOf(want), s, jsonOf(a), jsonOf(b))
	}
	for _, sc := range []stackCase{
		{vals: []any{a, b}, strats: []Strategy{pd, ad}, srcs: []Src{0, 1}, schema: s},
		{vals: []any{b, a}, strats: []Strategy{po, ad}, srcs: []Src{0, 1}, schema: s},
	} {
		r := sc.fold()
		if got := roundTrip(tb, r.Tree.Value()); !reflect.DeepEqual(got, want) {
			tb.Fatalf("%s: FoldWith = %s, SMD = %s\nschema %s\nA %s\nB %s", sc.strats[0], jsonOf(got), jsonOf(want), s, jsonOf(a), jsonOf(b))
		}
		checkFold(tb, sc, r)
	}
}

func TestSchemaOracleSMD(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 300; i++ {
		node := randSchemaNode(r, 3)
		s, err := SchemaFromOpenAPI(node)
		if err != nil {
			t.Fatal(err)
		}
		o := newSMDOracle(t, node)
		for j := 0; j < 20; j++ {
			checkSchemaOracle(t, o, s, randData(r, node, false), randData(r, node, false))
		}
	}
}

// Random stacks of up to five layers, with nulls, under random schemas:
// the value is the reference fold's (refMergeS), and the provenance
// invariants hold.
func TestFoldSchemaRandomStacks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 1500; i++ {
		checkSchemaStack(t, r, i%4 == 0)
	}
}

func checkSchemaStack(tb testing.TB, r *rand.Rand, sharedSrcs bool) {
	tb.Helper()
	node := randSchemaNode(r, 3)
	s, err := SchemaFromOpenAPI(node)
	if err != nil {
		tb.Fatal(err)
	}
	switch r.IntN(6) {
	case 0:
		s = s.WithAtomicEntries("a", "b.c")
	case 1: // nested named rules, and named rules in a list's items
		s = s.WithAtomicEntries("a", "a.b", "b[].c", "b[].c.a")
	case 2: // oneofs at the root, nested, in a list's items
		s = s.WithOneof(".", "a", "b").WithOneof("c", "a", "b", "d").WithOneof("d[]", "a", "c")
	case 3: // oneofs among named rules
		s = s.WithAtomicEntries("a", "b[].c").WithOneof("a", "a", "b").WithOneof("b[].c", "c", "d").WithOneof(".", "c", "d")
	}
	sc := stackCase{schema: s}
	for j, n := 0, 1+r.IntN(5); j < n; j++ {
		v := randData(r, node, true)
		if r.IntN(8) == 0 { // data the schema does not expect
			v = randObject(r, 3, true)
		}
		sc.vals = append(sc.vals, v)
		sc.strats = append(sc.strats, All[r.IntN(len(All))])
		sc.fns = append(sc.fns, customFns[r.IntN(len(customFns))].fn)
		sc.srcs = append(sc.srcs, Src(10+j))
		if sharedSrcs {
			sc.srcs[j] = Src(j % 2)
		}
	}
	checkFold(tb, sc, sc.fold())
}

// FuzzFoldSchema: the two seeds drive the generator (schema, data, stack);
// with shape's low bit set, one step of two null-free layers is also checked
// against SMD.
func FuzzFoldSchema(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(0))
	f.Add(uint64(3), uint64(4), uint8(1))
	f.Add(uint64(5), uint64(6), uint8(0x81))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, shape uint8) {
		r := rand.New(rand.NewPCG(s1, s2))
		if shape&1 == 1 {
			node := randSchemaNode(r, 3)
			s, err := SchemaFromOpenAPI(node)
			if err != nil {
				t.Fatal(err)
			}
			checkSchemaOracle(t, newSMDOracle(t, node), s, randData(r, node, false), randData(r, node, false))
		}
		checkSchemaStack(t, r, shape&0x80 != 0)
	})
}

// gatewayCRD returns the spec schema node of a CRD shipped with
// sigs.k8s.io/gateway-api, read from the module's directory (never copied).
func gatewayCRD(t *testing.T, file string) map[string]any {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("gateway-api module directory: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config", "crd", file))
	if err != nil {
		t.Fatalf("read CRD: %v", err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	v := crd.Spec.Versions[0]
	return v.Schema.OpenAPIV3Schema["properties"].(map[string]any)["spec"].(map[string]any)
}

func TestSchemaFromGatewayAPICRDs(t *testing.T) {
	route := gatewayCRD(t, "standard/gateway.networking.k8s.io_httproutes.yaml")
	rs, err := SchemaFromOpenAPI(route)
	if err != nil {
		t.Fatal(err)
	}
	// HTTPRoute's rules are atomic (no list-type), so nothing below them
	// merges item by item in a route; a policy kind that embeds a header
	// filter gets its list-maps and sets.
	if rs.Child("rules") != nil {
		t.Fatalf("rules should be atomic: %s", rs)
	}
	node := route
	for _, step := range []string{"rules", "items", "filters", "items", "requestHeaderModifier"} {
		if step != "items" {
			node = node["properties"].(map[string]any)
		}
		node = node[step].(map[string]any)
	}
	hs, err := SchemaFromOpenAPI(node)
	if err != nil {
		t.Fatal(err)
	}
	if set := hs.Child("set"); set == nil || set.list != listMap || !reflect.DeepEqual(set.keys, []string{"name"}) || hs.Child("remove").list != listSet {
		t.Fatalf("requestHeaderModifier: %s", hs)
	}
	o := newSMDOracle(t, node)
	a := mustJSON(t, `{"set":[{"name":"x-a","value":"1"},{"name":"x-b","value":"2"}],"remove":["x-r"]}`)
	b := mustJSON(t, `{"set":[{"name":"x-b","value":"3"},{"name":"x-c","value":"4"}],"add":[{"name":"x-d","value":"5"}],"remove":["x-s","x-r"]}`)
	sc := stackCase{vals: []any{a, b}, strats: []Strategy{pd, ad}, srcs: []Src{1, 2}, schema: hs}
	res := sc.fold()
	checkFold(t, sc, res)
	if got, want := roundTrip(t, res.Tree.Value()), roundTrip(t, o.merge(t, a, b)); !reflect.DeepEqual(got, want) {
		t.Errorf("FoldWith = %s, SMD = %s", jsonOf(got), jsonOf(want))
	}
	var paths []string
	for _, l := range res.Tree.Leaves() {
		paths = append(paths, fmt.Sprintf("%s=%d", l.Path, l.Src))
	}
	want := `add[name=x-d].name=2 add[name=x-d].value=2 remove[=x-r]=2 remove[=x-s]=2 set[name=x-a].name=1 set[name=x-a].value=1 set[name=x-b].name=2 set[name=x-b].value=2 set[name=x-c].name=2 set[name=x-c].value=2`
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("leaves\n %s\nwant\n %s", got, want)
	}

	btp := gatewayCRD(t, "experimental/gateway.networking.x-k8s.io_xbackendtrafficpolicies.yaml")
	bs, err := SchemaFromOpenAPI(btp)
	if err != nil {
		t.Fatal(err)
	}
	if tr := bs.Child("targetRefs"); tr == nil || tr.list != listMap || len(tr.keys) != 3 {
		t.Fatalf("targetRefs: %s", tr)
	}
	a = mustJSON(t, `{"targetRefs":[{"group":"","kind":"Service","name":"a"}],"retryConstraint":{"budget":{"percent":20}}}`)
	b = mustJSON(t, `{"targetRefs":[{"group":"","kind":"Service","name":"b"},{"group":"","kind":"Service","name":"a"}],"retryConstraint":{"budget":{"interval":"10s"}}}`)
	sc = stackCase{vals: []any{a, b}, strats: []Strategy{pd, ad}, srcs: []Src{1, 2}, schema: bs}
	res = sc.fold()
	checkFold(t, sc, res)
	if got, want := roundTrip(t, res.Tree.Value()), roundTrip(t, newSMDOracle(t, btp).merge(t, a, b)); !reflect.DeepEqual(got, want) {
		t.Errorf("FoldWith = %s, SMD = %s", jsonOf(got), jsonOf(want))
	}
	paths = nil
	for _, l := range res.Tree.Leaves() {
		paths = append(paths, fmt.Sprintf("%s=%d", l.Path, l.Src))
	}
	want = `retryConstraint.budget.interval=2 retryConstraint.budget.percent=1 targetRefs[group="",kind=Service,name=a].group=2 targetRefs[group="",kind=Service,name=a].kind=2 targetRefs[group="",kind=Service,name=a].name=2 targetRefs[group="",kind=Service,name=b].group=2 targetRefs[group="",kind=Service,name=b].kind=2 targetRefs[group="",kind=Service,name=b].name=2`
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("leaves\n %s\nwant\n %s", got, want)
	}
}
