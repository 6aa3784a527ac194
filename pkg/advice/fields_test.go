package advice

import (
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestSameFields: effective policies are the same when every context has
// the same fields, values (numbers by value) and setters, and differ on
// any of them.
func TestSameFields(t *testing.T) {
	p1 := &engine.Attachment{Policy: topology.Ref{Kind: "P", Namespace: "n", Name: "p1"}, At: topology.Ref{Kind: "Gateway", Name: "g"}}
	p2 := &engine.Attachment{Policy: topology.Ref{Kind: "P", Namespace: "n", Name: "p2"}, At: topology.Ref{Kind: "Gateway", Name: "g"}}
	eff := func(a *engine.Attachment, path string, v any) *engine.Effective {
		return &engine.Effective{Contexts: []*engine.Context{{Fields: []engine.FieldSource{{Path: path, Value: v, Attachment: a}}}}}
	}
	base := eff(p1, "retry.attempts", int64(3))
	for _, c := range []struct {
		what string
		b    *engine.Effective
		same bool
	}{
		{"same", eff(p1, "retry.attempts", int64(3)), true},
		{"a number of another Go type", eff(p1, "retry.attempts", float64(3)), true},
		{"another value", eff(p1, "retry.attempts", int64(4)), false},
		{"another path", eff(p1, "retry.backoff", int64(3)), false},
		{"another policy", eff(p2, "retry.attempts", int64(3)), false},
		{"none", nil, false},
		{"a list", eff(p1, "retry.attempts", []any{int64(3)}), false},
	} {
		if got := sameFields(base, c.b); got != c.same {
			t.Errorf("%s: same = %v, want %v", c.what, got, c.same)
		}
	}
	if !sameFields(nil, &engine.Effective{Contexts: []*engine.Context{{}}}) {
		t.Error("no policy and a context without fields differ")
	}
	m1 := eff(p1, "m", map[string]any{"a": []any{"x", int64(1)}})
	if !sameFields(m1, eff(p1, "m", map[string]any{"a": []any{"x", 1.0}})) || sameFields(m1, eff(p1, "m", map[string]any{"a": []any{"x"}})) {
		t.Error("nested values compared wrongly")
	}
}

// TestCounts: targets are counted per kind and namespace, and per kind over
// namespaces when there are more than three groups.
func TestCounts(t *testing.T) {
	svc := func(ns, name string) topology.Ref { return topology.Ref{Kind: "Service", Namespace: ns, Name: name} }
	for _, c := range []struct {
		refs []topology.Ref
		want string
	}{
		{[]topology.Ref{svc("baker", "a")}, "1 Service in baker"},
		{[]topology.Ref{svc("baker", "a"), svc("baker", "b"), {Kind: "Namespace", Name: "baker"}}, "2 Services in baker and 1 Namespace"},
		{[]topology.Ref{svc("a", "x"), svc("b", "x"), svc("b", "y"), svc("c", "x")}, "1 Service in a, 2 Services in b and 1 Service in c"},
		{[]topology.Ref{svc("a", "x"), svc("b", "x"), svc("c", "x"), svc("d", "x"), svc("d", "y"), {Kind: "Gateway", Namespace: "infra", Name: "g"}},
			"5 Services in 4 namespaces and 1 Gateway"},
	} {
		if got := counts(c.refs); got != c.want {
			t.Errorf("counts(%v) = %q, want %q", c.refs, got, c.want)
		}
	}
}
