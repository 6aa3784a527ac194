package effectivepolicy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

func example3(t *testing.T) *engine.Result {
	t.Helper()
	objs, problems, err := manifest.Read([]string{"../../examples/gep-713/example-3"}, nil)
	if err != nil || len(problems) > 0 {
		t.Fatalf("reading example 3: %v %v", err, problems)
	}
	return engine.Compute(objs, engine.Options{})
}

func service(name string) topology.Ref {
	return topology.Ref{Kind: "Service", Namespace: "default", Name: name}
}

// TestExample3 checks GEP-713 Example 3's b2 (g2 > r4 > b2): light is p3's
// patch override on the Gateway, dark p4's atomic default on the route,
// and p4 lost light to p3.
func TestExample3(t *testing.T) {
	entries := Build(example3(t), "attache.dev/test", nil, nil, Limits{})
	e := entries[service("b2")]
	if e == nil {
		t.Fatalf("no entry for b2; have %v", keys(entries))
	}
	if len(e.PolicyKinds) != 1 {
		t.Fatalf("%d policy kinds, want 1", len(e.PolicyKinds))
	}
	k := e.PolicyKinds[0]
	if k.PolicyKind != "ColorPolicy.policies.example.com" {
		t.Errorf("policyKind %q", k.PolicyKind)
	}
	var ctx *Context
	for i := range k.Contexts {
		if strings.Contains(k.Contexts[i].Path, "HTTPRoute default/r4") {
			ctx = &k.Contexts[i]
		}
	}
	if ctx == nil {
		t.Fatalf("no context through r4: %s", e.JSON())
	}
	if got := ctx.SetBy["colors.light"]; got != "default/p3" {
		t.Errorf("colors.light set by %q, want default/p3", got)
	}
	if got := ctx.SetBy["colors.dark"]; got != "default/p4" {
		t.Errorf("colors.dark set by %q, want default/p4", got)
	}
	if got := ctx.Spec["colors"].(map[string]any)["light"]; got != "yellow" {
		t.Errorf("colors.light = %v, want yellow", got)
	}
	var p4 *Policy
	for i := range ctx.Policies {
		if ctx.Policies[i].Policy == "default/p4" {
			p4 = &ctx.Policies[i]
		}
	}
	if p4 == nil || p4.Outcome != "partial" || !contains(p4.Lost["default/p3"], "colors.light") || p4.Target != "HTTPRoute default/r4" {
		t.Errorf("p4 in r4's context = %+v, want partial, colors.light lost to default/p3, on HTTPRoute default/r4", p4)
	}
	if !strings.HasPrefix(ctx.Path, "Gateway default/g2") || !strings.HasSuffix(ctx.Path, "Service default/b2") {
		t.Errorf("path %q", ctx.Path)
	}
	if !contains(k.Fields["colors.light"], "default/p3") {
		t.Errorf("fields[colors.light] = %v, want default/p3 among them", k.Fields["colors.light"])
	}
}

// TestEveryFieldListed: without truncation, Kind.Fields names, for every
// field of every context, the policy that set it there.
func TestEveryFieldListed(t *testing.T) {
	res := example3(t)
	entries := Build(res, "c", nil, nil, Limits{Contexts: 1000})
	n := 0
	for _, e := range res.Effective {
		en := entries[e.Target.Object()]
		if en == nil {
			continue
		}
		for _, c := range e.Contexts {
			for _, f := range c.Fields {
				n++
				if !contains(en.PolicyKinds[0].Fields[f.Path], PolicyName(f.Policy)) {
					t.Errorf("%s: field %s set by %s not in fields %v", e.Target, f.Path, PolicyName(f.Policy), en.PolicyKinds[0].Fields)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no field checked")
	}
}

// TestLimits: every cap leaves a count saying how many there are, and the
// byte budget holds by dropping contexts, then fields, then policies.
func TestLimits(t *testing.T) {
	res := genResult(firstCase, 100)
	full := Build(res, "c", nil, nil, Limits{Contexts: 1000, Fields: 1000, Policies: 1000, Bytes: 1 << 30})
	capped := Build(res, "c", nil, nil, Limits{Contexts: 2, Fields: 3, Policies: 2, Bytes: 1 << 30})
	checked := 0
	for obj, f := range full {
		c := capped[obj]
		fk, ck := f.PolicyKinds[0], c.PolicyKinds[0]
		if ck.ContextCount != len(fk.Contexts) || ck.FieldCount != len(fk.Fields) || ck.PolicyCount != len(fk.Policies) {
			t.Fatalf("%s: counts %d/%d/%d, want %d/%d/%d", obj, ck.ContextCount, ck.FieldCount, ck.PolicyCount, len(fk.Contexts), len(fk.Fields), len(fk.Policies))
		}
		if len(ck.Contexts) != min(2, len(fk.Contexts)) || len(ck.Fields) != min(3, len(fk.Fields)) || len(ck.Policies) != min(2, len(fk.Policies)) {
			t.Fatalf("%s: kept %d/%d/%d", obj, len(ck.Contexts), len(ck.Fields), len(ck.Policies))
		}
		// The contexts kept are those with the most paths.
		for _, kept := range ck.Contexts {
			for _, other := range fk.Contexts[len(ck.Contexts):] {
				if other.PathCount > kept.PathCount {
					t.Fatalf("%s: kept a context of %d paths, left one of %d", obj, kept.PathCount, other.PathCount)
				}
			}
		}
		if len(fk.Contexts) > 2 {
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no object with more contexts than the cap")
	}
	for _, budget := range []int{4000, 1500, 300} {
		for obj, e := range Build(res, "c", nil, nil, Limits{Bytes: budget}) {
			b := e.JSON()
			k := e.PolicyKinds[0]
			if len(b) > budget && (len(k.Contexts) > 0 || len(k.Fields) > 0 || len(k.Policies) > 0) {
				t.Fatalf("budget %d: %s is %d bytes with parts left: %s", budget, obj, len(b), e.String())
			}
			var back Entry
			if err := json.Unmarshal(b, &back); err != nil || back.PolicyKinds[0].ContextCount != k.ContextCount {
				t.Fatalf("budget %d: %s does not decode with its counts: %v", budget, obj, err)
			}
		}
	}
}

// TestDeterministic: the same result, the same bytes and hash.
func TestDeterministic(t *testing.T) {
	a := Build(genResult(firstCase, 100), "c", nil, nil, Limits{})
	b := Build(genResult(firstCase, 100), "c", nil, nil, Limits{})
	for obj, e := range a {
		if string(e.JSON()) != string(b[obj].JSON()) || Hash(e.JSON()) != Hash(b[obj].JSON()) {
			t.Fatalf("%s differs between two builds", obj)
		}
	}
}

// TestOnly renders only the objects asked for, with the same content.
func TestOnly(t *testing.T) {
	res := example3(t)
	all := Build(res, "c", nil, nil, Limits{})
	one := Build(res, "c", nil, func(r topology.Ref) bool { return r == service("b1") }, Limits{})
	if len(one) != 1 || string(one[service("b1")].JSON()) != string(all[service("b1")].JSON()) {
		t.Fatalf("only b1: %v", keys(one))
	}
	none := Build(res, "c", func(topology.GroupKind) bool { return false }, nil, Limits{})
	if len(none) != 0 {
		t.Fatalf("no owned kind, yet %d entries", len(none))
	}
}

func TestPathText(t *testing.T) {
	gw := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "infra", Name: "g"}
	rt := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "a", Name: "r"}
	got := PathText([]topology.Ref{gw, gw.WithSection("http"), {Kind: "Namespace", Name: "a"}, rt, rt.WithSection("rule-1"), service("s")})
	want := "Gateway infra/g#http > Namespace a > HTTPRoute a/r#rule-1 > Service default/s"
	if got != want {
		t.Errorf("PathText = %q, want %q", got, want)
	}
}

func keys(m map[topology.Ref]*Entry) []string {
	var s []string
	for k := range m {
		s = append(s, k.String())
	}
	return s
}

// TestParts: Parts writes the bytes encoding/json writes, and each part
// locates the JSON of the field or context its path names.
func TestParts(t *testing.T) {
	n := 0
	for obj, e := range Build(genResult(firstCase, 100), "c", nil, nil, Limits{}) {
		b, parts := e.Parts()
		if len(parts) != e.partCount() {
			t.Fatalf("%s: %d parts, partCount says %d", obj, len(parts), e.partCount())
		}
		want, err := json.Marshal(e)
		if err != nil || string(b) != string(want) {
			t.Fatalf("%s: Parts' JSON differs from encoding/json's", obj)
		}
		if again, _ := e.AppendParts(bytes.Repeat([]byte("x"), 10)[:0]); string(again) != string(b) {
			t.Fatalf("%s: AppendParts over a used buffer differs", obj)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			var at any = doc
			for _, seg := range strings.Split(strings.TrimPrefix(p.Path(), "/"), "/") {
				switch v := at.(type) {
				case map[string]any:
					at = v[seg]
				case []any:
					i, _ := strconv.Atoi(seg)
					at = v[i]
				}
			}
			var got any
			if err := json.Unmarshal(b[p.Off:p.Off+p.Len], &got); err != nil || !reflect.DeepEqual(got, at) {
				t.Fatalf("%s: part %s does not hold its value", obj, p.Path())
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no part checked")
	}
}

// TestEachEncoded: the JSON and parts EachEncoded hands over (specs
// encoded once through a Renderer, buffers reused) are those Parts gives
// for the same entry, whatever was rendered before it; and specs are
// shared, so the memo is used.
func TestEachEncoded(t *testing.T) {
	n := 0
	EachEncoded(genResult(firstCase, 100), "c", nil, nil, Limits{}, func(obj topology.Ref, e *Entry, b []byte, parts []Part) {
		want, wantParts := e.Parts()
		if string(b) != string(want) || !reflect.DeepEqual(parts, wantParts) {
			t.Fatalf("%s: EachEncoded's JSON or parts differ from Parts'", obj)
		}
		n++
	})
	if n == 0 {
		t.Fatal("no entry")
	}
	var r Renderer
	for _, e := range Build(genResult(firstCase, 100), "c", nil, nil, Limits{}) {
		r.AppendParts(e, nil)
	}
	if len(r.specs) == 0 {
		t.Fatal("no spec remembered")
	}
}
