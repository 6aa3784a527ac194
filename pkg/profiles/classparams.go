package profiles

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// EnvoyProxy is Envoy Gateway's kind of GatewayClass parameters: a
// GatewayClass's spec.parametersRef names one, whose spec.mergeGateways
// makes every Gateway of the class one data plane.
var EnvoyProxy = topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyProxy"}

// ClassParametersKinds are the kinds of the GatewayClass parameters that
// attache reads (ClassParameters): a cluster reader gets the objects of
// these kinds that GatewayClasses name.
var ClassParametersKinds = []topology.GroupKind{EnvoyProxy}

// EGMergeGateways is the feature of Envoy Gateway's configuration that
// gives its GatewayClasses' default for mergeGateways (the EnvoyGateway
// object's envoyProxy, the lowest of Envoy Gateway's EnvoyProxy
// levels): a GatewayClass whose EnvoyProxy does not set mergeGateways
// takes it.
const EGMergeGateways = "EnvoyGateway.envoyProxy.mergeGateways"

// IsClassParameters reports whether u is of a kind of
// ClassParametersKinds.
func IsClassParameters(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	gk := topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}
	for _, k := range ClassParametersKinds {
		if gk == k {
			return true
		}
	}
	return false
}

// ClassParametersRef is the object of a ClassParametersKinds kind that a
// GatewayClass's spec.parametersRef names (ok false for none or another
// kind). Envoy Gateway reads a parametersRef without namespace in
// "default" (processGatewayClassParamsRef).
func ClassParametersRef(class *unstructured.Unstructured) (topology.Ref, bool) {
	ref, found, _ := unstructured.NestedMap(class.Object, "spec", "parametersRef")
	if !found {
		return topology.Ref{}, false
	}
	group, _ := ref["group"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	ns, _ := ref["namespace"].(string)
	if (topology.GroupKind{Group: group, Kind: kind}) != EnvoyProxy || name == "" {
		return topology.Ref{}, false
	}
	if ns == "" {
		ns = "default"
	}
	return topology.Ref{Group: group, Kind: kind, Namespace: ns, Name: name}, true
}

// MergesGateways reads whether GatewayClass parameters merge the
// class's Gateways into one data plane (Envoy Gateway's EnvoyProxy
// spec.mergeGateways): set is false when they do not say (the
// configuration's default, EGMergeGateways, then applies). A value that
// is not a boolean gives the field and why, and does not say.
func MergesGateways(params *unstructured.Unstructured) (merged, set bool, field string, err error) {
	v, found, _ := unstructured.NestedFieldNoCopy(params.Object, "spec", "mergeGateways")
	if !found || v == nil {
		return false, false, "", nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, "spec.mergeGateways", fmt.Errorf("spec.mergeGateways is %v, not a boolean", v)
	}
	return b, true, "", nil
}

// TrimClassParameters keeps of GatewayClass parameters what attache reads
// (MergesGateways): apiVersion, kind, name, namespace, uid,
// resourceVersion and spec.mergeGateways. A cluster reader or cache keeps
// the trimmed object: an EnvoyProxy's spec is mostly a deployment's
// settings, which attache never reads. u is changed in place and
// returned.
func TrimClassParameters(u *unstructured.Unstructured) *unstructured.Unstructured {
	meta := map[string]any{}
	for _, f := range []string{"name", "namespace", "uid", "resourceVersion"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", f); ok {
			meta[f] = v
		}
	}
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": meta}
	spec := map[string]any{}
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "mergeGateways"); ok {
		spec["mergeGateways"] = v
	}
	if refs := TelemetryBackendRefs(u); len(refs) > 0 {
		// Kept in a form TelemetryBackendRefs reads back.
		list := make([]any, len(refs))
		for i, r := range refs {
			list[i] = map[string]any{"group": r.Group, "kind": r.Kind, "namespace": r.Namespace, "name": r.Name}
		}
		spec["telemetry"] = map[string]any{"tracing": map[string]any{"provider": map[string]any{"backendRefs": list}}}
	}
	if len(spec) > 0 {
		out["spec"] = spec
	}
	u.Object = out
	return u
}

// telemetryBackendRefPaths are where an EnvoyProxy names the backends its
// telemetry is sent to (Envoy Gateway v1.9.1 api/v1alpha1
// envoyproxy_tracing_types.go, accesslogging_types.go,
// envoyproxy_metric_types.go); "[]" walks a list.
var telemetryBackendRefPaths = [][]string{
	{"telemetry", "tracing", "provider", "backendRefs[]"},
	{"telemetry", "accessLog", "settings[]", "sinks[]", "openTelemetry", "backendRefs[]"},
	{"telemetry", "accessLog", "settings[]", "sinks[]", "als", "backendRefs[]"},
	{"telemetry", "metrics", "sinks[]", "openTelemetry", "backendRefs[]"},
}

// TelemetryBackendRefs are the backends an EnvoyProxy sends its
// telemetry to (traces, access logs, metrics), each once: group and kind
// as written (a Service when unset), namespace the EnvoyProxy's when
// unset. Envoy Gateway makes the EnvoyProxy an ancestor of those backends'
// BackendTLSPolicies. Malformed entries are skipped.
func TelemetryBackendRefs(u *unstructured.Unstructured) []topology.Ref {
	var out []topology.Ref
	add := func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		r := topology.Ref{Kind: "Service", Namespace: u.GetNamespace()}
		if g, ok := m["group"].(string); ok && g != "core" {
			r.Group = g
		}
		if k, ok := m["kind"].(string); ok && k != "" {
			r.Kind = k
		}
		if ns, ok := m["namespace"].(string); ok && ns != "" {
			r.Namespace = ns
		}
		if n, ok := m["name"].(string); ok && n != "" && !slices.Contains(out, topology.Ref{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: n}) {
			r.Name = n
			out = append(out, r)
		}
	}
	// walk calls add for each entry at path below v, a segment ending in
	// "[]" walking a list.
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) == 0 {
			add(v)
			return
		}
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		seg, isList := strings.CutSuffix(path[0], "[]")
		if !isList {
			walk(m[seg], path[1:])
			return
		}
		l, _ := m[seg].([]any)
		for _, e := range l {
			walk(e, path[1:])
		}
	}
	for _, p := range telemetryBackendRefPaths {
		walk(u.Object["spec"], p)
	}
	return out
}
