package gen

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PolicyGroup and PolicyKind name the benchmark's policy kind.
const (
	PolicyGroup = "bench.attache.dev"
	PolicyKind  = "BenchPolicy"
)

// Policies returns the CRD of an Inherited policy kind with the default
// hierarchy (effective targets: Services) and n policies over the Topology
// of p, spread over every level and every strategy: 2 on the GatewayClass,
// one per Namespace (up to n/25) and per Gateway (up to n/50), on listeners
// n/20 but at most one per 10 listeners (so the density of listener
// policies is the same whatever the size), and the rest over routes (45%),
// route rules (30%) and Services (25%). Strategies rotate over atomic/patch
// defaults/overrides; specs share some fields (so merges conflict) and
// carry some of their own.
func Policies(p Params, n int) []*unstructured.Unstructured {
	return PoliciesWithListeners(p, n, min(n/20, p.Gateways*p.ListenersPerGateway/10))
}

// PoliciesWithListeners is Policies with the number of listener policies
// given: many listener policies on few listeners make every listener a
// distinct context (the worst case for the engine).
func PoliciesWithListeners(p Params, n, listenerPolicies int) []*unstructured.Unstructured {
	p.Namespaces = max(p.Namespaces, 1)
	out := []*unstructured.Unstructured{policyCRD()}
	i := 0
	add := func(ns, group, kind, name, section string) {
		out = append(out, policy(i, ns, group, kind, name, section))
		i++
	}
	gw := "gateway.networking.k8s.io"
	for range min(2, n) {
		add(InfraNamespace, gw, "GatewayClass", ClassName, "")
	}
	for k := range min(p.Namespaces, n/25) {
		add(nsName(k), "", "Namespace", nsName(k), "")
	}
	for g := range min(p.Gateways, n/50) {
		add(InfraNamespace, gw, "Gateway", gwName(g), "")
	}
	if p.Gateways > 0 && p.ListenersPerGateway > 0 {
		for k := range listenerPolicies {
			j := k * 7919
			add(InfraNamespace, gw, "Gateway", gwName(j%p.Gateways), fmt.Sprintf("l%d", (j/p.Gateways)%p.ListenersPerGateway))
		}
	}
	rest := n - i
	routes, rules := rest*45/100, rest*30/100
	services := rest - routes - rules
	if p.Routes > 0 {
		for k := range routes {
			r := (k * 7919) % p.Routes
			add(nsName(r%p.Namespaces), gw, "HTTPRoute", fmt.Sprintf("route-%d", r), "")
		}
		for k := range rules {
			r := (k*104729 + 17) % p.Routes
			add(nsName(r%p.Namespaces), gw, "HTTPRoute", fmt.Sprintf("route-%d", r), fmt.Sprintf("rule-%d", 1+k%2))
		}
	}
	if p.Services > 0 {
		for k := range services {
			s := (k * 7907) % p.Services
			add(nsName(s%p.Namespaces), "", "Service", fmt.Sprintf("svc-%d", s), "")
		}
	}
	return out
}

func policyCRD() *unstructured.Unstructured {
	u := object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "benchpolicies."+PolicyGroup, map[string]any{
		"gateway.networking.k8s.io/policy": "Inherited",
	}, map[string]any{
		"group": PolicyGroup,
		"names": map[string]any{"kind": PolicyKind, "plural": "benchpolicies"},
		"scope": "Namespaced",
	})
	return u
}

// policy i: strategy and stanza rotate with i; fields overlap across levels.
func policy(i int, ns, group, kind, name, section string) *unstructured.Unstructured {
	ref := map[string]any{"group": group, "kind": kind, "name": name}
	if section != "" {
		ref["sectionName"] = section
	}
	body := map[string]any{
		"timeout": fmt.Sprintf("%ds", 1+i%30),
		"retries": map[string]any{"attempts": int64(i % 5), "on": []any{"502", "503"}},
		"headers": map[string]any{fmt.Sprintf("x-%s", kind): fmt.Sprintf("p%d", i)},
	}
	if i%3 == 0 {
		body["retries"].(map[string]any)["backoff"] = fmt.Sprintf("%dms", 10*(1+i%7))
	}
	if i%2 == 0 {
		body["strategy"] = "patch"
	} else {
		body["strategy"] = "atomic"
	}
	spec := map[string]any{"targetRefs": []any{ref}}
	if (i/2)%4 == 3 {
		spec["overrides"] = body
	} else {
		spec["defaults"] = body
	}
	u := object(PolicyGroup+"/v1", PolicyKind, ns, fmt.Sprintf("p-%d", i), nil, spec)
	_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("2026-01-01T00:%02d:%02dZ", (i/60)%60, i%60), "metadata", "creationTimestamp")
	return u
}
