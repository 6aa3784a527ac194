package engine_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// listenerSetWorld: Gateway infra/gw admits ListenerSets from every
// namespace; ListenerSet apps/ls has listeners a and b, with a route and a
// Service behind each; a route on the Gateway's own listener leads to
// Service infra/sg. ListenerSet apps/refused names Gateway infra/closed,
// which admits none (allowedListeners unset). A policy kind with the
// default hierarchy (so ListenerSets are targets) and patch defaults, so
// that every policy on a path shows in the effective spec.
const listenerSetWorld = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: lspolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/merge-strategies: patch-defaults}
spec:
  group: policies.example.com
  names: {kind: LsPolicy, plural: lspolicies}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: closed, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: apps}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners:
  - {name: a, protocol: HTTP, port: 8080}
  - {name: b, protocol: HTTP, port: 8081}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: refused, namespace: apps}
spec:
  parentRef: {name: closed, namespace: infra}
  listeners: [{name: a, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ra, namespace: apps}
spec:
  parentRefs: [{kind: ListenerSet, name: ls, sectionName: a}]
  rules: [{backendRefs: [{name: sa, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: apps}
spec:
  parentRefs: [{kind: ListenerSet, name: ls, sectionName: b}]
  rules: [{backendRefs: [{name: sb, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rr, namespace: apps}
spec:
  parentRefs: [{kind: ListenerSet, name: refused}]
  rules: [{backendRefs: [{name: sr, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rg, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: sg, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: sa, namespace: apps}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sb, namespace: apps}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sr, namespace: apps}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: sg, namespace: infra}
spec: {ports: [{port: 80}]}
`

// lsPolicy is an LsPolicy ns/name on one target (a YAML flow mapping
// body) that sets field: 1.
func lsPolicy(ns, name, target, field string) string {
	return fmt.Sprintf(`
apiVersion: policies.example.com/v1
kind: LsPolicy
metadata: {name: %s, namespace: %s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, %s}]
  %s: 1
`, name, ns, target, field)
}

// TestPoliciesReachServicesThroughListenerSets: a policy on a ListenerSet
// reaches the Services behind every route attached to it, one on a
// ListenerSet listener (sectionName) those behind the routes of that
// listener, and a Gateway's policy reaches them through the ListenerSet.
// Policies on a ListenerSet do not reach the Gateway's own listeners
// (GEP-1713), and one on a ListenerSet its Gateway refuses reaches nothing.
func TestPoliciesReachServicesThroughListenerSets(t *testing.T) {
	res := compute(t, engine.Options{}, listenerSetWorld,
		lsPolicy("infra", "on-gateway", "kind: Gateway, name: gw", "gateway"),
		lsPolicy("apps", "on-ls", "kind: ListenerSet, name: ls", "listenerSet"),
		lsPolicy("apps", "on-listener", "kind: ListenerSet, name: ls, sectionName: a", "listener"),
		lsPolicy("apps", "on-refused", "kind: ListenerSet, name: refused", "refused"),
	)

	// The refused ListenerSet is the only problem, and it says so.
	if len(res.Problems) != 1 || res.Problems[0].Object.Name != "refused" || res.Problems[0].Field != "spec.parentRef" ||
		!strings.Contains(res.Problems[0].Message, "admits no ListenerSets") {
		t.Errorf("problems = %v, want one on ListenerSet apps/refused", res.Problems)
	}

	specs := map[string]string{}
	var pathsOfSA []string
	for _, e := range res.Effective {
		if len(e.Contexts) != 1 {
			t.Errorf("%s: %d contexts, want 1", e.Target, len(e.Contexts))
			continue
		}
		c := e.Contexts[0]
		keys := slices.Sorted(maps.Keys(c.Spec))
		specs[e.Target.Short()] = strings.Join(keys, ",")
		if e.Target.Name == "sa" {
			c.Paths(func(p []topology.Ref) bool {
				var parts []string
				for _, r := range p {
					parts = append(parts, r.Short())
				}
				pathsOfSA = append(pathsOfSA, strings.Join(parts, " > "))
				return true
			})
		}
	}
	want := map[string]string{
		"Service apps/sa":  "gateway,listener,listenerSet",
		"Service apps/sb":  "gateway,listenerSet",
		"Service infra/sg": "gateway",
		// Service apps/sr: nothing reaches it, not even on-refused.
	}
	if !maps.Equal(specs, want) {
		t.Errorf("effective fields per Service:\n%v\nwant\n%v", specs, want)
	}
	// No GatewayClass object: the path starts at the Gateway's Namespace;
	// apps is placed above its first object, the ListenerSet (D1).
	wantPath := "Namespace infra > Gateway infra/gw > Namespace apps > ListenerSet apps/ls > ListenerSet apps/ls#a > HTTPRoute apps/ra > HTTPRoute apps/ra#rule-1 > Service apps/sa"
	if !slices.Equal(pathsOfSA, []string{wantPath}) {
		t.Errorf("paths of Service apps/sa:\n%s\nwant only the one through the ListenerSet listener:\n%s", strings.Join(pathsOfSA, "\n"), wantPath)
	}

	// Every policy's target exists and is accepted; the one on the refused
	// ListenerSet affects nothing.
	for _, p := range res.Policies {
		if c := p.Conditions[0]; c.Reason != engine.ReasonAccepted {
			t.Errorf("%s: %+v, want Accepted", p.Policy.Ref.Name, c)
		}
		if p.Policy.Ref.Name == "on-refused" && len(p.Affects) != 0 {
			t.Errorf("on-refused affects %v, want nothing", p.Affects)
		}
	}
}

// TestHierarchyWithoutListenerSetsReachesThroughThem: a policy kind whose
// hierarchy leaves ListenerSets out (ColorPolicy: Gateway, HTTPRoute,
// Service) contracts them and their listeners out of its paths, so its
// Gateway policy still reaches the Services behind ListenerSet routes.
func TestHierarchyWithoutListenerSetsReachesThroughThem(t *testing.T) {
	res := compute(t, engine.Options{}, fmt.Sprintf(colorCRD, "patch-defaults"), listenerSetWorld, `
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: p, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: red
`)
	got := map[string]string{}
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != "ColorPolicy" {
			continue
		}
		for _, c := range e.Contexts {
			c.Paths(func(p []topology.Ref) bool {
				var parts []string
				for _, r := range p {
					parts = append(parts, r.Short())
				}
				got[strings.Join(parts, " > ")] = fmt.Sprint(c.Spec)
				return true
			})
		}
	}
	want := map[string]string{
		"Gateway infra/gw > HTTPRoute apps/ra > HTTPRoute apps/ra#rule-1 > Service apps/sa":                            "map[color:red]",
		"Gateway infra/gw > HTTPRoute apps/rb > HTTPRoute apps/rb#rule-1 > Service apps/sb":                            "map[color:red]",
		"Gateway infra/gw > Gateway infra/gw#http > HTTPRoute infra/rg > HTTPRoute infra/rg#rule-1 > Service infra/sg": "map[color:red]",
	}
	if !maps.Equal(got, want) {
		t.Errorf("contexts:\n%v\nwant\n%v", got, want)
	}
}
