package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// limitCRD is a Direct kind on Services without a targetRefs limit, whose
// ancestor limit and ancestor mode the test gives.
const limitCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: limitpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations:
    attache.dev/target-kinds: Service
    attache.dev/max-target-refs: none
    attache.dev/ancestor-limit: %s
    attache.dev/ancestor: %s
spec:
  group: policies.example.com
  names: {kind: LimitPolicy, plural: limitpolicies}
`

// limitServices returns n Services s00, s01, ...
func limitServices(n int) []string {
	var docs []string
	for i := range n {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: s%02d, namespace: default}\nspec: {ports: [{port: 80}]}", i))
	}
	return docs
}

// limitPolicy returns a LimitPolicy targeting the Services named ("*": a
// selector of every Service).
func limitPolicy(targets []string) string {
	refs := make([]string, len(targets))
	for i, n := range targets {
		refs[i] = fmt.Sprintf(`{group: "", kind: Service, name: %s}`, n)
		if n == "*" {
			refs[i] = `{group: "", kind: Service, selector: {}}`
		}
	}
	return fmt.Sprintf(`apiVersion: policies.example.com/v1
kind: LimitPolicy
metadata: {name: wide, namespace: default}
spec:
  targetRefs: [%s]
  color: red`, strings.Join(refs, ", "))
}

// limitCondition returns the policy's AncestorLimitReached condition, or
// the zero one.
func limitCondition(st *engine.PolicyStatus) engine.Condition {
	for _, c := range st.Conditions {
		if c.Type == engine.ConditionAncestorLimit {
			return c
		}
	}
	return engine.Condition{}
}

// effectiveTargets lists the targets with an effective LimitPolicy.
func effectiveTargets(res *engine.Result) map[string]bool {
	out := map[string]bool{}
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "LimitPolicy" && len(e.Contexts) > 0 {
			out[e.Target.Name] = true
		}
	}
	return out
}

// With ancestor-limit skip, a policy naming its ancestors after its
// targets applies at the first 16 targets in targetRefs order (one not
// found counting, as it has an entry); the later ones are neither listed
// nor applied, and a condition names them, once each. A target a selector
// selects again still fits; one it adds does not. With report (the default) every target applies and the list is
// only cut, the surplus counted.
func TestAncestorLimitSkipTargets(t *testing.T) {
	var names []string
	for i := range 18 {
		names = append(names, fmt.Sprintf("s%02d", i))
	}
	names[1] = "missing"
	names = append(names, "*") // s00 and s02..s17 again, s01 new
	docs := append(limitServices(18), limitPolicy(names))

	res := compute(t, engine.Options{}, append(docs, fmt.Sprintf(limitCRD, "skip", "target"))...)
	st := res.Policies[0]
	if len(st.Ancestors) != engine.MaxAncestors || st.AncestorsOmitted != 0 {
		t.Fatalf("skip: %d ancestors, %d omitted; want 16, 0", len(st.Ancestors), st.AncestorsOmitted)
	}
	for i, an := range st.Ancestors {
		if an.Ref.Name != names[i] {
			t.Errorf("skip: ancestor %d is %s, want %s (targetRefs order)", i, an.Ref.Short(), names[i])
		}
	}
	eff := effectiveTargets(res)
	if !eff["s15"] || eff["s16"] || eff["s17"] || !eff["s00"] || eff["s01"] {
		t.Errorf("skip: effective at %v; want s00 and s15, not s01, s16 or s17", eff)
	}
	c := limitCondition(st)
	wantMsg := "Not applied at Service default/s16, Service default/s17, Service default/s01: status.ancestors holds at most 16 entries"
	if c.Status != "True" || c.Reason != engine.ReasonAncestorLimitReached || !strings.HasPrefix(c.Message, wantMsg) {
		t.Errorf("skip: condition %+v, want True/AncestorLimitReached %q...", c, wantMsg)
	}
	if got := status(t, res, "wide", "Accepted"); got != "True/Accepted" {
		t.Errorf("skip: Accepted %s", got)
	}

	res = compute(t, engine.Options{}, append(docs, fmt.Sprintf(limitCRD, "report", "target"))...)
	st = res.Policies[0]
	if len(st.Ancestors) != engine.MaxAncestors || st.AncestorsOmitted != 3 {
		t.Fatalf("report: %d ancestors, %d omitted; want 16, 3", len(st.Ancestors), st.AncestorsOmitted)
	}
	if eff := effectiveTargets(res); !eff["s01"] || !eff["s16"] || !eff["s17"] {
		t.Errorf("report: effective at %v; want s01, s16 and s17 too", eff)
	}
	if c := limitCondition(st); c.Type != "" {
		t.Errorf("report: %+v", c)
	}
}

// With 16 targets or fewer nothing is skipped, and no condition is said.
func TestAncestorLimitSkipWithinLimit(t *testing.T) {
	var names []string
	for i := range 16 {
		names = append(names, fmt.Sprintf("s%02d", i))
	}
	res := compute(t, engine.Options{}, append(limitServices(16), limitPolicy(names), fmt.Sprintf(limitCRD, "skip", "target"))...)
	st := res.Policies[0]
	if len(st.Ancestors) != 16 || len(effectiveTargets(res)) != 16 {
		t.Errorf("%d ancestors, effective at %v; want 16 and all", len(st.Ancestors), effectiveTargets(res))
	}
	if c := limitCondition(st); c.Type != "" {
		t.Errorf("condition %+v within the limit", c)
	}
}

// A kind naming its ancestors after Gateways (a Service's, through the
// routes that use it) keeps the first 16 Gateways in the order attache
// lists them (the route's parentRefs), and the condition names the
// others. Only the status says so: the Service's effective policy is one
// for all its Gateways, and stays.
func TestAncestorLimitSkipGateways(t *testing.T) {
	docs := append(limitServices(1), `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: example.com/gc}`)
	var parents []string
	for i := range 18 {
		docs = append(docs, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g%02d, namespace: default}
spec:
  gatewayClassName: gc
  listeners: [{name: http, port: 80, protocol: HTTP}]`, i))
		parents = append(parents, fmt.Sprintf("{name: g%02d}", i))
	}
	docs = append(docs, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [%s]
  rules: [{backendRefs: [{name: s00, port: 80}]}]`, strings.Join(parents, ", ")), limitPolicy([]string{"s00"}))

	res := compute(t, engine.Options{}, append(docs, fmt.Sprintf(limitCRD, "skip", "gateway-object"))...)
	st := res.Policies[0]
	if len(st.Ancestors) != engine.MaxAncestors || st.AncestorsOmitted != 0 {
		t.Fatalf("skip: %d ancestors, %d omitted; want 16, 0", len(st.Ancestors), st.AncestorsOmitted)
	}
	for i, an := range st.Ancestors {
		if want := fmt.Sprintf("g%02d", i); an.Ref.Name != want || an.Ref.Kind != "Gateway" {
			t.Errorf("skip: ancestor %d is %s, want Gateway %s", i, an.Ref.Short(), want)
		}
	}
	c := limitCondition(st)
	wantMsg := "Not applied at Gateway default/g16, Gateway default/g17: "
	if c.Reason != engine.ReasonAncestorLimitReached || !strings.HasPrefix(c.Message, wantMsg) {
		t.Errorf("skip: condition %+v, want %q...", c, wantMsg)
	}
	if !effectiveTargets(res)["s00"] {
		t.Errorf("skip: s00 lost its effective policy")
	}

	res = compute(t, engine.Options{}, append(docs, fmt.Sprintf(limitCRD, "report", "gateway-object"))...)
	st = res.Policies[0]
	if len(st.Ancestors) != engine.MaxAncestors || st.AncestorsOmitted != 2 || limitCondition(st).Type != "" {
		t.Errorf("report: %d ancestors, %d omitted, condition %+v; want 16, 2, none", len(st.Ancestors), st.AncestorsOmitted, limitCondition(st))
	}
}

// The Incremental engine, editing only the policy (fewer targets, then
// more again, then another order), gives Compute's Result each time: the
// targets skipped are those of the policy as it now is.
func TestAncestorLimitSkipIncremental(t *testing.T) {
	base := append(limitServices(18), fmt.Sprintf(limitCRD, "skip", "target"))
	var all []string
	for i := range 18 {
		all = append(all, fmt.Sprintf("s%02d", i))
	}
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	in := engine.NewIncremental(engine.Options{})
	for step, targets := range [][]string{all, all[:15], all, reversed} {
		objs := decodeDocs(t, append(slices.Clone(base), limitPolicy(targets))...)
		got := dump(t, in.Compute(objs))
		if step > 0 && in.LastChange().Full {
			t.Errorf("step %d: recomputed in full: %s", step, in.LastChange().Reason)
		}
		if want := dump(t, engine.Compute(objs, engine.Options{})); got != want {
			t.Fatalf("step %d: %s", step, firstDiff(got, want))
		}
		if st := in.Compute(objs).Policies[0]; step == 3 && !strings.HasPrefix(limitCondition(st).Message, "Not applied at Service default/s01, Service default/s00: ") {
			t.Errorf("step 3: %q", limitCondition(st).Message)
		}
	}
}
