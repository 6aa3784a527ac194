package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// validationsKind is a Direct kind on HTTPRoutes with rules vs.
func validationsKind(t *testing.T, vs []Validation) *Kind {
	t.Helper()
	k := routeKind(t, Spec{Validations: vs})
	return k
}

// parsed is a policy of kind k with spec, read by Parse.
func parsed(k *Kind, spec map[string]any) *Policy {
	spec["targetRefs"] = []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r"}}
	return Parse(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "x.io/v1", "kind": "P", "metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": spec,
	}}, k)
}

// The annotation: a YAML or JSON list of rules, rendered back as JSON;
// "none"; keys outside the shape, an empty list, a bad fieldPath or
// protocol refused, naming the rule's index.
func TestParseValidations(t *testing.T) {
	vs, err := ParseValidations(`
- rule: "has(self.a)"
  message: must set a
  fieldPath: .a
- {rule: "self.b.all(x, x > 0)", listenerProtocols: [HTTPS, TLS]}
`)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"rule":"has(self.a)","message":"must set a","fieldPath":".a"}, {"rule":"self.b.all(x, x \u003e 0)","listenerProtocols":["HTTPS","TLS"]}]`
	if got := ValidationsString(vs); got != want {
		t.Errorf("ValidationsString = %s, want %s", got, want)
	}
	again, err := ParseValidations(ValidationsString(vs))
	if err != nil || ValidationsString(again) != want {
		t.Errorf("round trip: %v, %v", again, err)
	}
	if vs, err := ParseValidations(" none "); err != nil || vs != nil || ValidationsString(vs) != "none" {
		t.Errorf("none: %v, %v", vs, err)
	}
	for v, msg := range map[string]string{
		"[]":                                                  "lists no rule",
		"{rule: x}":                                           "is not a list of rules",
		`[{rule: "true", reason: Forbidden}]`:                 `unknown field "reason"`,
		`[{rule: "true"}, {message: m}]`:                      "validations[1]: rule is empty",
		`[{rule: "true", fieldPath: "a.b"}]`:                  `validations[0]: fieldPath "a.b" is not a path below spec`,
		`[{rule: "true", fieldPath: ".a b"}]`:                 `fieldPath ".a b" is not a path`,
		`[{rule: "true", message: "a\nb"}]`:                   "validations[0]: message holds a line break",
		`[{rule: "true", listenerProtocols: [https]}]`:        "validations[0]: on=https: listener protocols are matched as written: HTTPS, not https",
		`[{rule: "true", listenerProtocols: ["HTTP,HTTPS"]}]`: `validations[0]: listenerProtocols: "HTTP,HTTPS" is not a listener protocol`,
		`[{rule: "true"}, {rule: "self.a ==", m: 1}]`:         `unknown field "m"`,
		`[{rule: "listener.port == 80"}]`:                     `validations[0]: rule "listener.port == 80" reads listener, so it must set listenerProtocols`,
	} {
		if _, err := ParseValidations(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseValidations(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	// Fine paths.
	for _, fp := range []string{"", ".a", ".a.b-c[0]", ".a['b.c'].d", ".$x"} {
		if _, err := ParseValidations(`[{rule: "true", fieldPath: "` + fp + `"}]`); err != nil {
			t.Errorf("fieldPath %q: %v", fp, err)
		}
	}
}

// A rule that does not compile, or is not of type bool, is refused
// naming its index; the Kubernetes libraries are there.
func TestValidationsCompile(t *testing.T) {
	for v, msg := range map[string]string{
		`[{rule: "true"}, {rule: "self.a =="}]`:        `validations[1]: rule "self.a ==" does not compile: ERROR: <input>:1:10: Syntax error`,
		`[{rule: "self.a"}]`:                           `validations[0]: rule "self.a" is of type dyn, want bool`,
		`[{rule: "size(self) + 1"}]`:                   `validations[0]: rule "size(self) + 1" is of type int, want bool`,
		`[{rule: "other.a == 1"}]`:                     `undeclared reference to 'other'`,
		`[{rule: "self.a.matches('(')"}]`:              "does not compile",
		`[{rule: "nosuchfunction(self.a)"}]`:           "undeclared reference to 'nosuchfunction'",
		`[{rule: "` + strings.Repeat("(", 300) + `"}]`: "does not compile",
	} {
		if _, err := ParseValidations(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseValidations(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	for _, rule := range []string{
		"quantity(self.q).isGreaterThan(quantity('1Ki'))",
		"self.l.isSorted()",
		"self.s.matches('^a+$') && self.s.find('a+') == 'aa'",
		"isURL(self.u) && isCIDR(self.c) && isIP(self.i)",
		"self.s.lowerAscii() == 'aa'",
		"sets.contains(['a', 'b'], ['a'])",
		"self.?x.orValue(1) == 1",
	} {
		if _, err := ParseValidations(`[{rule: "` + rule + `"}]`); err != nil {
			t.Errorf("rule %q: %v", rule, err)
		}
	}
	// From Go: compiled when the kind is built, refused naming the setting.
	if _, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute},
		Validations: []Validation{{Rule: "true"}, {Rule: "self.x +"}}}); err == nil || !strings.Contains(err.Error(), `policy kind P.x.io: validations[1]: rule "self.x +" does not compile`) {
		t.Errorf("NewKind with a rule that does not compile: %v", err)
	}
}

// Each rule is evaluated once, when the policy is parsed: one that is
// false says its message at its field (the API server's default message
// without one); one whose evaluation fails is a problem naming the rule
// and the error; nulls are dropped first; self is the spec proper.
func TestValidationsEvaluate(t *testing.T) {
	vs, err := ParseValidations(`
- {rule: "!has(self.a) || self.a > 1", message: a must be above 1, fieldPath: .a}
- {rule: "self.b == 'x'"}
- {rule: "!has(self.n) || self.n.size() == 0", fieldPath: ".n"}
- {rule: "!has(self.targetRefs)", message: "targetRefs are not in self"}
- {rule: "!has(self.c) || quantity(self.c).isLessThan(quantity('1Mi'))", fieldPath: ".c", message: too big, listenerProtocols: [HTTPS]}
`)
	if err != nil {
		t.Fatal(err)
	}
	k := validationsKind(t, vs)
	p := parsed(k, map[string]any{"a": int64(1), "n": nil, "c": "2Mi"})
	want := []FieldProblem{
		{Field: "spec.a", Message: "a must be above 1"},
		{Field: "spec", Message: `rule validations[1] "self.b == 'x'" could not be evaluated: no such key: b`},
	}
	got := p.Violations()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Violations = %v, want %v", got, want)
	}
	on := p.ViolationsWhere(func(v Validation) bool { return len(v.On) > 0 })
	if len(on) != 1 || on[0] != (FieldProblem{Field: "spec.c", Message: "too big"}) {
		t.Errorf("ViolationsWhere(on) = %v", on)
	}
	p = parsed(k, map[string]any{"a": int64(2), "b": "y", "c": "1Ki"})
	got = p.Violations()
	if len(got) != 1 || got[0] != (FieldProblem{Field: "spec", Message: "failed rule: self.b == 'x'"}) {
		t.Errorf("Violations = %v, want the default message", got)
	}
	if on := p.ViolationsWhere(func(v Validation) bool { return len(v.On) > 0 }); len(on) != 0 {
		t.Errorf("ViolationsWhere(on) = %v, want none", on)
	}
	if got := parsed(k, map[string]any{"b": "x"}).Violations(); len(got) != 0 {
		t.Errorf("Violations of a policy that keeps every rule: %v", got)
	}
	// Evaluated once, at Parse: the policy answers the same after its
	// spec changes.
	p = parsed(k, map[string]any{"b": "x"})
	p.Spec["b"] = "y"
	if got := p.Violations(); len(got) != 0 {
		t.Errorf("Violations evaluated again: %v", got)
	}
	// A policy not parsed is evaluated when asked.
	if got := (&Policy{Kind: k, Spec: map[string]any{"b": "y"}}).Violations(); len(got) != 1 {
		t.Errorf("Violations of an unparsed policy: %v", got)
	}
}

// A rule that would run long is stopped at the API server's per-call
// cost limit, and the rules of one policy together at
// ValidationCostBudget: the policy is Invalid, naming the rule.
func TestValidationsCostLimit(t *testing.T) {
	list := func(n int) []any {
		l := make([]any, n)
		for i := range l {
			l[i] = int64(i)
		}
		return l
	}
	// n² comparisons: for n = 1000, over the per-call limit.
	quadratic := `{rule: "self.l.all(x, self.l.all(y, x + y >= 0))", fieldPath: .l}`
	k := validationsKind(t, parseRules(t, "["+quadratic+"]"))
	got := parsed(k, map[string]any{"l": list(1000)}).Violations()
	if len(got) != 1 || got[0].Field != "spec.l" || !strings.Contains(got[0].Message, "could not be evaluated: operation cancelled: actual cost limit exceeded") {
		t.Errorf("Violations = %v, want the cost limit", got)
	}
	// For n = 300, each rule under the limit (about 630,000), two over
	// the budget: the second fails, the third is not evaluated (else it
	// would say no such key).
	if got := parsed(k, map[string]any{"l": list(300)}).Violations(); len(got) != 0 {
		t.Errorf("one rule under the limit: %v", got)
	}
	k = validationsKind(t, parseRules(t, "["+quadratic+", "+quadratic+`, {rule: "self.nosuch == 1"}]`))
	got = parsed(k, map[string]any{"l": list(300)}).Violations()
	if len(got) != 2 || !strings.Contains(got[0].Message, `rule validations[1] "self.l.all(x, self.l.all(y, x + y >= 0))" could not be evaluated: the rules of this policy ran out of cost budget`) ||
		got[1].Message != `rule validations[2] "self.nosuch == 1" could not be evaluated: the rules of this policy ran out of cost budget; this and later rules were not evaluated` {
		t.Errorf("Violations = %v, want rules 1 and 2 out of budget", got)
	}
}

// parseRules is ParseValidations, failing the test on an error.
func parseRules(t *testing.T, v string) []Validation {
	t.Helper()
	vs, err := ParseValidations(v)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// The annotation sets the kind's rules; one that does not compile
// refuses the CRD, naming the annotation, the kind and the rule's index.
func TestValidationsAnnotation(t *testing.T) {
	crd := newCRD(policyLabel("Direct"), map[string]string{AnnotationValidations: `[{rule: "has(self.color)", message: must name a color}]`})
	k := mustKindFromCRD(t, crd, nil)
	if len(k.Validations) != 1 || k.Validations[0].program == nil || k.Origins[SettingValidations] != FromAnnotation {
		t.Errorf("validations %v from %s", k.Validations, k.Origins[SettingValidations])
	}
	crd.SetAnnotations(map[string]string{AnnotationValidations: `[{rule: "true"}, {rule: "self.color ==", fieldPath: .color}]`})
	_, prob := KindFromCRD(crd, nil)
	if prob == nil || prob.Field != annField(AnnotationValidations) ||
		!strings.Contains(prob.Message, `policy kind ColorPolicy.policies.example.com: validations[1]: rule "self.color ==" does not compile`) {
		t.Errorf("bad annotation: %v", prob)
	}
}

// A rule reading listener is judged with a listener's facts only
// (ListenerViolations), never among the rules judged on the spec alone,
// and only when judge accepts it.
func TestListenerViolations(t *testing.T) {
	vs, err := ParseValidations(`
- {rule: "!has(self.a) || listener.port == self.a", message: port differs, fieldPath: .a, listenerProtocols: [HTTP]}
- {rule: "listener.routes.size() <= 1", message: too many routes, listenerProtocols: [HTTP, HTTPS]}
- {rule: "self.b == 'x'", listenerProtocols: [HTTP]}
`)
	if err != nil {
		t.Fatal(err)
	}
	// A comprehension's own variable named listener is not the variable.
	own, err := ParseValidations(`[{rule: "!has(self.xs) || self.xs.all(listener, listener > 0)"}]`)
	if err != nil || own[0].ReadsListener() {
		t.Errorf("a comprehension variable named listener: %v, reads listener %t", err, err == nil && own[0].ReadsListener())
	}
	if !vs[0].ReadsListener() || vs[2].ReadsListener() {
		t.Fatalf("ReadsListener: %t, %t", vs[0].ReadsListener(), vs[2].ReadsListener())
	}
	k := validationsKind(t, vs)
	if !k.ValidationsReadListener() {
		t.Error("ValidationsReadListener = false")
	}
	p := parsed(k, map[string]any{"a": int64(80), "b": "y"})
	on := p.ViolationsWhere(func(v Validation) bool { return len(v.On) > 0 })
	if len(on) != 1 || on[0].Message != "failed rule: self.b == 'x'" {
		t.Errorf("ViolationsWhere = %v, want the rule on the spec alone", on)
	}
	all := func(Validation) bool { return true }
	l := ListenerFacts{"port": int64(8080), "routes": []any{map[string]any{}, map[string]any{}}}
	got := p.ListenerViolations(l, all)
	if len(got) != 2 || got[0] != (FieldProblem{Field: "spec.a", Message: "port differs"}) || got[1] != (FieldProblem{Field: "spec", Message: "too many routes"}) {
		t.Errorf("ListenerViolations = %v", got)
	}
	if got := p.ListenerViolations(ListenerFacts{"port": int64(80), "routes": []any{}}, all); len(got) != 0 {
		t.Errorf("ListenerViolations at a fine listener = %v", got)
	}
	if got := p.ListenerViolations(l, func(v Validation) bool { return len(v.On) == 2 }); len(got) != 1 || got[0].Message != "too many routes" {
		t.Errorf("ListenerViolations judged = %v", got)
	}
	// Facts without a key the rule reads: it cannot be evaluated.
	if got := p.ListenerViolations(ListenerFacts{}, all); len(got) != 2 || !strings.Contains(got[0].Message, "could not be evaluated") {
		t.Errorf("ListenerViolations without facts = %v", got)
	}
}

// A rule with unlessFeature is judged only while that feature is off,
// its message then saying so; a bad feature name refuses the rule.
func TestValidationsUnlessFeature(t *testing.T) {
	vs, err := ParseValidations(`[{rule: "self.m != 'plus'", message: needs Plus, fieldPath: .m, unlessFeature: X.plus}, {rule: "self.m != 'never'", fieldPath: .m}]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := ValidationsString(vs); !strings.Contains(got, `"unlessFeature":"X.plus"`) {
		t.Errorf("rendered: %s", got)
	}
	p := parsed(validationsKind(t, vs), map[string]any{"m": "plus"})
	all := func(Validation) bool { return true }
	got := p.ViolationsUnder(nil, all)
	if len(got) != 1 || got[0].Field != "spec.m" || !strings.HasPrefix(got[0].Message, "needs Plus (judged while X.plus is off: ") || !strings.Contains(got[0].Message, "--feature X.plus=true") {
		t.Errorf("feature off: %v", got)
	}
	if got := p.ViolationsUnder(Features{"X.plus": {On: true}}, all); len(got) != 0 {
		t.Errorf("feature on: %v", got)
	}
	if got := p.ViolationsUnder(Features{"X.plus": {On: false, From: "cfg"}}, all); len(got) != 1 || !strings.HasSuffix(got[0].Message, "(judged while X.plus is off in cfg)") {
		t.Errorf("feature off in a configuration: %v", got)
	}
	if got := parsed(validationsKind(t, vs), map[string]any{"m": "never"}).ViolationsUnder(Features{"X.plus": {On: true}}, all); len(got) != 1 {
		t.Errorf("a rule without a feature, feature on: %v", got)
	}
	if _, err := ParseValidations(`[{rule: "true", unlessFeature: "x plus"}]`); err == nil || !strings.Contains(err.Error(), `unlessFeature "x plus" is not a feature name`) {
		t.Errorf("bad feature name: %v", err)
	}
}
