package verdict

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

const input = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: testpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: TestPolicy, plural: testpolicies}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: c
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: http}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: example.com/v1
kind: TestPolicy
metadata: {name: gwpol, namespace: infra, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {timeout: 1s}
---
apiVersion: example.com/v1
kind: TestPolicy
metadata: {name: routepol, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  defaults: {timeout: 2s}
---
apiVersion: example.com/v1
kind: OtherPolicy
metadata: {name: unknown, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
`

var (
	gw       = topology.Ref{Group: gatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"}
	listener = gw.WithSection("http")
	gwpol    = topology.Ref{Group: "example.com", Kind: "TestPolicy", Namespace: "infra", Name: "gwpol"}
	routepol = topology.Ref{Group: "example.com", Kind: "TestPolicy", Namespace: "app", Name: "routepol"}
	unknown  = topology.Ref{Group: "example.com", Kind: "OtherPolicy", Namespace: "app", Name: "unknown"}
)

func compute(t *testing.T) ([]engine.Object, *engine.Result) {
	objs, probs := manifest.Decode(strings.NewReader(input), "test")
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	return objs, engine.Compute(objs, engine.Options{})
}

func TestCompareAgrees(t *testing.T) {
	objs, res := compute(t)
	exp := Expected{Fixture: "f", AncestorsOf: GatewayAncestors(objs), Policies: []Policy{
		// The route policy replaces the Gateway's on the route's only path.
		{Ref: gwpol, Ancestors: []Ancestor{{Ref: gw, Want: Verdict{Accepted: "True", Programmed: LostContext}}}},
		// Reported under the route's parentRef, as written.
		{Ref: routepol, Ancestors: []Ancestor{{Ref: listener, Want: Verdict{Accepted: "True", Programmed: Full}}}},
	}}
	if mm := Compare(exp, res); len(mm) != 0 {
		t.Fatalf("mismatches: %v", mm)
	}
}

func TestCompareClassifiesMismatches(t *testing.T) {
	objs, res := compute(t)
	exp := Expected{Fixture: "f", AncestorsOf: GatewayAncestors(objs), Policies: []Policy{
		{Ref: gwpol, Ancestors: []Ancestor{{Ref: gw, Want: Verdict{Accepted: "True", Programmed: Full}}}},
		{Ref: routepol, Ancestors: []Ancestor{{Ref: listener, Want: Verdict{Accepted: engine.ReasonInvalid, Message: "ExtAuth: service app/auth not found."}}}},
		{Ref: unknown, Ancestors: []Ancestor{{Ref: listener, Want: Verdict{Accepted: "True"}}}},
	}}
	got := map[topology.Ref]Cause{}
	for _, m := range Compare(exp, res) {
		got[m.Policy] = m.Cause
	}
	want := map[topology.Ref]Cause{gwpol: CauseSemantics, routepol: CauseContent, unknown: CauseUnknownKind}
	for r, c := range want {
		if got[r] != c {
			t.Errorf("%s: cause %q, want %q", r.Short(), got[r], c)
		}
	}
	if len(got) != len(want) {
		t.Errorf("mismatches for %v, want %v", got, want)
	}
}

// An ancestor attache reports but the implementation does not, and one the
// implementation reports but attache does not, are both mismatches.
func TestCompareAncestorSets(t *testing.T) {
	objs, res := compute(t)
	other := topology.Ref{Group: gatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "other"}
	exp := Expected{Fixture: "f", AncestorsOf: GatewayAncestors(objs), Policies: []Policy{
		{Ref: routepol, Ancestors: []Ancestor{{Ref: other, Want: Verdict{Accepted: "True"}}}},
	}}
	mm := Compare(exp, res)
	if len(mm) != 2 {
		t.Fatalf("mismatches: %v", mm)
	}
}

// No status from the implementation means attache must accept the policy nowhere.
func TestCompareNoStatus(t *testing.T) {
	objs, res := compute(t)
	exp := Expected{Fixture: "f", AncestorsOf: GatewayAncestors(objs), Policies: []Policy{{Ref: routepol}}}
	if mm := Compare(exp, res); len(mm) != 1 || mm[0].Ancestor != "(policy)" {
		t.Fatalf("mismatches: %v", mm)
	}
}

func TestGatewaysAboveAService(t *testing.T) {
	_, res := compute(t)
	got := GatewayAncestors(nil)(res, topology.Ref{Kind: "Service", Namespace: "app", Name: "svc"})
	if len(got) != 1 || got[0] != gw {
		t.Fatalf("ancestors of the Service: %v", got)
	}
}

// Which of attache's Programmed reasons satisfy each class of expectation.
func TestAgreeProgrammedClasses(t *testing.T) {
	reasons := []string{engine.ReasonProgrammed, engine.ReasonPartiallyProgrammed, engine.ReasonOverridden, engine.ReasonUnknown, unknownInPart}
	want := map[string][]bool{
		Full:          {true, false, false, false, false},
		LostContext:   {false, true, true, false, true},
		Contributes:   {true, true, true, false, true}, // a merge may replace every field the policy sets
		NotProgrammed: {false, false, false, true, false},
		AnyProgrammed: {true, true, true, true, true},
	}
	for class, oks := range want {
		for i, r := range reasons {
			if got := agree(Verdict{Accepted: "True", Programmed: class}, Verdict{Accepted: "True", Programmed: r}); got != oks[i] {
				t.Errorf("class %q, attache %s: agree = %v, want %v", class, r, got, oks[i])
			}
		}
	}
	if agree(Verdict{Accepted: "True", Programmed: Contributes}, Verdict{Accepted: engine.ReasonConflicted}) {
		t.Errorf("a merged policy agrees with a Conflicted one")
	}
}

// attache's Programmed=False/Unknown reads as overridden in part only when
// the engine says so (a Kuadrant TokenRateLimitPolicy losing some rules),
// else as programmed nowhere (a policy in the path to no route).
func TestFromConditionsUnknown(t *testing.T) {
	for _, tc := range []struct {
		msg, want string
	}{
		{"Policy is not programmed, as it is overridden in part (it would be programmed in full in 1, in part in 1 of 2 contexts): x", unknownInPart},
		{"Policy is not programmed: it is in the path to no effective target through a Gateway", engine.ReasonUnknown},
	} {
		v := fromConditions([]engine.Condition{{Type: engine.CondAccepted, Status: "True", Reason: engine.ReasonAccepted},
			{Type: engine.CondProgrammed, Status: "False", Reason: engine.ReasonUnknown, Message: tc.msg}})
		if v.Programmed != tc.want {
			t.Errorf("%q: Programmed %q, want %q", tc.msg, v.Programmed, tc.want)
		}
	}
}

// A policy whose ancestors are Gateways, on a Service port no route uses:
// the implementation writes no status, attache reports it at its target
// (a documented decision), classified apart; on a port a route uses, the
// same disagreement is attache's error.
func TestCompareUnreached(t *testing.T) {
	docs := input + `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tlspolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations: {attache.dev/target-kinds: Service, attache.dev/ancestor: gateway, attache.dev/effective-section-kinds: Service}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: TLSPolicy, plural: tlspolicies}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: v1
kind: Service
metadata: {name: idle, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: example.com/v1
kind: TLSPolicy
metadata: {name: unused, namespace: app}
spec: {targetRefs: [{group: "", kind: Service, name: idle}]}
---
apiVersion: example.com/v1
kind: TLSPolicy
metadata: {name: used, namespace: app}
spec: {targetRefs: [{group: "", kind: Service, name: svc}]}
`
	objs, probs := manifest.Decode(strings.NewReader(docs), "test")
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	res := engine.Compute(objs, engine.Options{})
	unused := topology.Ref{Group: "example.com", Kind: "TLSPolicy", Namespace: "app", Name: "unused"}
	used := topology.Ref{Group: "example.com", Kind: "TLSPolicy", Namespace: "app", Name: "used"}
	exp := Expected{Fixture: "f", AncestorsOf: GatewayAncestors(objs), Policies: []Policy{{Ref: unused}, {Ref: used}}}
	got := map[topology.Ref]Cause{}
	for _, m := range Compare(exp, res) {
		got[m.Policy] = m.Cause
	}
	if got[unused] != CauseUnreached || got[used] != CauseSemantics {
		t.Errorf("causes %v, want unused %q and used %q", got, CauseUnreached, CauseSemantics)
	}
}
