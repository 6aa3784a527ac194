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
