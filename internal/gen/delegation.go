package gen

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DelegationChain returns route delegation (kgateway's) that multiplies:
// Gateway gw (class ClassName, listener http) in namespace "default"; its
// HTTPRoute top, whose one rule delegates by the label
// delegation.kgateway.dev/label=l1; at each level l of 1..depth, two
// HTTPRoutes r<l>a and r<l>b with that label l<l>, whose rule (PathPrefix
// "/") delegates to label l<l+1>; at level depth+1, two routes whose rule
// (PathPrefix /x) sends to Service svc. That is 2^(depth+1) delegation
// paths from top to the last routes.
func DelegationChain(depth int) []*unstructured.Unstructured {
	route := func(name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
		md := map[string]any{"name": name, "namespace": "default"}
		if labels != nil {
			md["labels"] = labels
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": md, "spec": spec}}
	}
	byLabel := func(l int) []any {
		return []any{map[string]any{"group": "delegation.kgateway.dev", "kind": "label", "name": fmt.Sprintf("l%d", l)}}
	}
	prefix := func(v string) []any {
		return []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": v}}}
	}
	out := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": "gw", "namespace": "default"},
			"spec":     map[string]any{"gatewayClassName": ClassName, "listeners": []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80)}}}}},
		route("top", nil, map[string]any{"parentRefs": []any{map[string]any{"name": "gw"}}, "rules": []any{map[string]any{"backendRefs": byLabel(1)}}}),
	}
	for l := 1; l <= depth+1; l++ {
		for _, side := range []string{"a", "b"} {
			rule := map[string]any{"matches": prefix("/"), "backendRefs": byLabel(l + 1)}
			if l == depth+1 {
				rule = map[string]any{"matches": prefix("/x"), "backendRefs": []any{map[string]any{"name": "svc", "port": int64(80)}}}
			}
			out = append(out, route(fmt.Sprintf("r%d%s", l, side), map[string]any{"delegation.kgateway.dev/label": fmt.Sprintf("l%d", l)}, map[string]any{"rules": []any{rule}}))
		}
	}
	return append(out, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "svc", "namespace": "default"}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}})
}

// InheritChain returns a chain of delegated routes that extend their
// parent's matches: Gateway gw (class ClassName, listener http) in
// namespace "default"; HTTPRoute r0 on it, whose rule delegates to r1; at
// each level l of 1..depth, HTTPRoute r<l> annotated
// delegation.kgateway.dev/inherit-parent-matcher, whose rule delegates to
// r<l+1> (r<depth> sends to Service svc). Every rule has matches
// PathPrefix /l<l>m<i> for i < matches, so what a rule at level l matches,
// joined to its parents', is matches^(l+1) paths.
func InheritChain(depth, matches int) []*unstructured.Unstructured {
	prefixes := func(l int) []any {
		out := make([]any, matches)
		for i := range out {
			out[i] = map[string]any{"path": map[string]any{"type": "PathPrefix", "value": fmt.Sprintf("/l%dm%d", l, i)}}
		}
		return out
	}
	out := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": "gw", "namespace": "default"},
			"spec":     map[string]any{"gatewayClassName": ClassName, "listeners": []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80)}}}}},
	}
	for l := 0; l <= depth; l++ {
		md := map[string]any{"name": fmt.Sprintf("r%d", l), "namespace": "default"}
		spec := map[string]any{}
		if l == 0 {
			spec["parentRefs"] = []any{map[string]any{"name": "gw"}}
		} else {
			md["annotations"] = map[string]any{"delegation.kgateway.dev/inherit-parent-matcher": "true"}
		}
		backend := map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": fmt.Sprintf("r%d", l+1)}
		if l == depth {
			backend = map[string]any{"name": "svc", "port": int64(80)}
		}
		spec["rules"] = []any{map[string]any{"name": "down", "matches": prefixes(l), "backendRefs": []any{backend}}}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": md, "spec": spec}})
	}
	return append(out, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "svc", "namespace": "default"}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}})
}
