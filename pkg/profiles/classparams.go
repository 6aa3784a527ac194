package profiles

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// EnvoyProxy is Envoy Gateway's kind of GatewayClass parameters: a
// GatewayClass's spec.parametersRef names one, whose spec.mergeGateways
// makes every Gateway of the class one data plane.
var EnvoyProxy = topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyProxy"}

// NginxProxy is NGINX Gateway Fabric's kind of data-plane parameters: a
// GatewayClass's spec.parametersRef and a Gateway's
// spec.infrastructure.parametersRef name one, the Gateway's merged over
// the class's (EffectiveParameters).
var NginxProxy = topology.GroupKind{Group: "gateway.nginx.org", Kind: "NginxProxy"}

// ClassParametersKinds are the kinds of the GatewayClass (and Gateway)
// parameters that attache reads, one per implementation
// (ParametersKindOf): a cluster reader gets the objects of these kinds
// that GatewayClasses and Gateways name.
var ClassParametersKinds = []topology.GroupKind{EnvoyProxy, NginxProxy}

// ParametersKindOf is the kind of data-plane parameters of the
// implementation whose controllerName is controller (zero for one
// attache reads none of).
func ParametersKindOf(controller string) topology.GroupKind {
	switch controller {
	case EnvoyGatewayController:
		return EnvoyProxy
	case NGFController:
		return NginxProxy
	}
	return topology.GroupKind{}
}

// ChecksWithoutParameters reports whether the implementation whose
// controllerName is controller checks what policies need of the
// parameters (policy.Requirement, policy.Allowlist) for a Gateway that
// runs with none (neither it nor its GatewayClass names any): Envoy
// Gateway does, against its configuration's default spec; NGF does not,
// as it checks a policy against an NginxProxy only when the Gateway has
// one (graph/policies.go attachPolicyToRoute).
func ChecksWithoutParameters(controller string) bool { return controller != NGFController }

// EGMergeGateways is the feature of Envoy Gateway's configuration that
// gives its GatewayClasses' default for mergeGateways (the EnvoyGateway
// object's envoyProxy, the lowest of Envoy Gateway's EnvoyProxy
// levels): a GatewayClass whose EnvoyProxy does not set mergeGateways
// takes it.
const EGMergeGateways = "EnvoyGateway.envoyProxy.mergeGateways"

// EGDefaultDynamicModules is the feature of Envoy Gateway's configuration
// that says its default EnvoyProxy spec (envoyProxy, which a Gateway runs
// with when neither it nor its GatewayClass names an EnvoyProxy)
// registers dynamic modules: attache does not read which, so it then does
// not judge the modules such a Gateway's policies load. Off (Envoy
// Gateway ships none) unless the configuration read registers some or
// --feature says so.
const EGDefaultDynamicModules = "EnvoyGateway.envoyProxy.dynamicModules"

// DefaultSpecFeature is the feature that says Envoy Gateway's default
// EnvoyProxy spec sets the field at the head of path (a path below an
// EnvoyProxy's spec): EnvoyGateway.envoyProxy.<head>, as
// EGDefaultDynamicModules and EnvoyGateway.envoyProxy.geoIP. attache reads
// of that spec only whether it sets them: a Gateway running with it is
// judged as if it set nothing unless the feature is on, then not judged.
func DefaultSpecFeature(path string) string {
	head, _, _ := strings.Cut(path, ".")
	return "EnvoyGateway.envoyProxy." + strings.TrimSuffix(head, "[]")
}

// defaultSpecFields are the fields of the default EnvoyProxy spec whose
// presence the configuration's reading records (DefaultSpecFeature).
var defaultSpecFields = []string{"dynamicModules", "geoIP", "luaValidation", "routingType"}

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
// kind). Envoy Gateway reads an EnvoyProxy reference without namespace
// in "default" (processGatewayClassParamsRef); NGF ignores an NginxProxy
// reference without one (graph/nginxproxy.go processNginxProxies), so it
// names none.
func ClassParametersRef(class *unstructured.Unstructured) (topology.Ref, bool) {
	ref, found, _ := unstructured.NestedMap(class.Object, "spec", "parametersRef")
	if !found {
		return topology.Ref{}, false
	}
	group, _ := ref["group"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	ns, _ := ref["namespace"].(string)
	gk := topology.GroupKind{Group: group, Kind: kind}
	if !slices.Contains(ClassParametersKinds, gk) || name == "" {
		return topology.Ref{}, false
	}
	if ns == "" {
		if gk != EnvoyProxy {
			return topology.Ref{}, false
		}
		ns = "default"
	}
	return topology.Ref{Group: group, Kind: kind, Namespace: ns, Name: name}, true
}

// GatewayParametersRef is the object of a ClassParametersKinds kind that
// a Gateway's spec.infrastructure.parametersRef names, in the Gateway's
// namespace (ok false for none or another kind). Its implementation
// merges it over its GatewayClass's (EffectiveParameters); Envoy Gateway
// reads the class's alone when the class merges its Gateways into one
// data plane (v1.9.1 internal/gatewayapi/contexts.go attachEnvoyProxy).
func GatewayParametersRef(gw *unstructured.Unstructured) (topology.Ref, bool) {
	ref, found, _ := unstructured.NestedMap(gw.Object, "spec", "infrastructure", "parametersRef")
	if !found {
		return topology.Ref{}, false
	}
	group, _ := ref["group"].(string)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	if !slices.Contains(ClassParametersKinds, topology.GroupKind{Group: group, Kind: kind}) || name == "" {
		return topology.Ref{}, false
	}
	return topology.Ref{Group: group, Kind: kind, Namespace: gw.GetNamespace(), Name: name}, true
}

// EffectiveParameters is the parameters a Gateway's data plane runs with,
// as its implementation merges its levels: the Gateway's own (gateway,
// nil for none) over its GatewayClass's (class, nil for none), named as
// the Gateway's. Envoy Gateway (EnvoyProxy) merges by the Gateway's
// spec.mergeType: unset or Replace, the Gateway's alone; JSONMerge or
// StrategicMerge, the two specs merged (RFC 7386: EnvoyProxy's lists carry
// no patch strategy, so a strategic merge replaces them whole too; the
// Gateway's nulls and empty lists are left out, as Envoy Gateway's typed
// merge omits them). The configuration's default spec, the lowest level,
// is not read here. NGF (NginxProxy) always merges: every field the
// Gateway's sets over the class's, objects field by field, lists whole,
// an empty one only where NGF clears the class's (ngfClearedLists;
// graph/nginxproxy.go buildEffectiveNginxProxy). An unknown merge type,
// specs that do not merge, or levels of two kinds give the Gateway's
// alone. The result is shared with the arguments when it is one of them;
// nil when both are nil.
func EffectiveParameters(class, gateway *unstructured.Unstructured) *unstructured.Unstructured {
	if gateway == nil || class == nil {
		if gateway != nil {
			return gateway
		}
		return class
	}
	var own any
	switch gk := (topology.GroupKind{Group: gateway.GroupVersionKind().Group, Kind: gateway.GetKind()}); {
	case gk != (topology.GroupKind{Group: class.GroupVersionKind().Group, Kind: class.GetKind()}):
		return gateway
	case gk == NginxProxy:
		own = omitUnset(gateway.Object["spec"], nil)
	default:
		mt, _, _ := unstructured.NestedString(gateway.Object, "spec", "mergeType")
		if mt != "JSONMerge" && mt != "StrategicMerge" {
			return gateway
		}
		own = omitEmpty(gateway.Object["spec"])
	}
	base, err1 := json.Marshal(class.Object["spec"])
	patch, err2 := json.Marshal(own)
	if err1 != nil || err2 != nil {
		return gateway
	}
	if string(base) == "null" {
		base = []byte("{}")
	}
	if string(patch) == "null" {
		patch = []byte("{}") // no spec: the class's holds
	}
	merged, err := jsonpatch.MergePatch(base, patch)
	var spec map[string]any
	if err != nil || json.Unmarshal(merged, &spec) != nil {
		return gateway
	}
	out := gateway.DeepCopy()
	out.Object["spec"] = spec
	return out
}

// omitEmpty is v without nulls and empty lists, at any depth (a copy):
// Envoy Gateway merges its typed EnvoyProxy specs, whose fields are all
// omitempty, so neither deletes nor empties its class's field.
func omitEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if c == nil {
				continue
			}
			if l, ok := c.([]any); ok && len(l) == 0 {
				continue
			}
			out[k] = omitEmpty(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = omitEmpty(c)
		}
		return out
	}
	return v
}

// ngfClearedLists are the lists of an NginxProxy spec that NGF empties
// in its class's when the Gateway's sets them empty
// (graph/nginxproxy.go cleanupEffectiveNginxProxy); an empty list
// elsewhere is left out of the Gateway's (omitempty), so the class's
// holds.
var ngfClearedLists = []string{
	"telemetry.disabledFeatures", "telemetry.spanAttributes", "rewriteClientIP.trustedAddresses",
	"compression.mimeTypes", "compression.gzip.proxied", "compression.gzip.disable",
}

// omitUnset is v without nulls (NGF's typed spec has none: a null field
// is unset) and without empty lists but those of ngfClearedLists, at any
// depth (a copy); at is the path of v ("" and nil at the spec).
func omitUnset(v any, at []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			path := append(slices.Clip(at), k)
			if c == nil {
				continue
			}
			if l, ok := c.([]any); ok && len(l) == 0 && !slices.Contains(ngfClearedLists, strings.Join(path, ".")) {
				continue
			}
			out[k] = omitUnset(c, path)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = omitUnset(c, nil) // entries: no cleared lists below
		}
		return out
	}
	return v
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
		return false, false, "spec.mergeGateways", fmt.Errorf("%q is not a boolean", fmt.Sprint(v))
	}
	return b, true, "", nil
}

// TrimClassParameters keeps of GatewayClass (or Gateway) parameters what
// attache reads: apiVersion, kind, name, namespace, uid, resourceVersion,
// spec.mergeGateways (MergesGateways) and spec.mergeType
// (EffectiveParameters), the telemetry backends (TelemetryBackendRefs) and
// the fields allowlists read (policy.ParametersPaths), each where it is.
// A cluster reader or cache keeps the trimmed object: an EnvoyProxy's or
// NginxProxy's spec is mostly a deployment's settings, which attache
// never reads. u is
// changed in place and returned.
func TrimClassParameters(u *unstructured.Unstructured) *unstructured.Unstructured {
	meta := map[string]any{}
	for _, f := range []string{"name", "namespace", "uid", "resourceVersion"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", f); ok {
			meta[f] = v
		}
	}
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": meta}
	spec := map[string]any{}
	for _, f := range []string{"mergeGateways", "mergeType"} {
		if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", f); ok {
			spec[f] = v
		}
	}
	// The telemetry backends and the fields allowlists read
	// (policy.ParametersPaths), where they are: a Gateway's EnvoyProxy
	// merges with its class's field by field (EffectiveParameters).
	if kept, ok := keepPaths(u.Object["spec"], keptParameterPaths()).(map[string]any); ok {
		for k, v := range kept {
			spec[k] = v
		}
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

// keptParameterPaths are the paths below spec that TrimClassParameters
// keeps besides mergeGateways and mergeType: the telemetry backends and
// policy.ParametersPaths.
func keptParameterPaths() [][]string {
	out := slices.Clone(telemetryBackendRefPaths)
	for _, p := range policy.ParametersPaths {
		out = append(out, strings.Split(string(p), "."))
	}
	return out
}

// keepPaths copies of v what lies on paths (segments ending in "[]" walk a
// list, whose entries keep their positions), nil when nothing does. A
// non-empty list on a path is kept whatever its entries keep (entries
// that keep nothing as empty objects), so that it replaces its class's in
// a merge as the whole one does; an empty one is dropped, as Envoy
// Gateway's typed merge drops it.
func keepPaths(v any, paths [][]string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]any{}
	byHead := map[string][][]string{}
	var heads []string
	for _, p := range paths {
		if len(p) == 0 {
			continue
		}
		if _, seen := byHead[p[0]]; !seen {
			heads = append(heads, p[0])
		}
		byHead[p[0]] = append(byHead[p[0]], p[1:])
	}
	for _, h := range heads {
		rest := byHead[h]
		seg, isList := strings.CutSuffix(h, "[]")
		c, present := m[seg]
		if !present {
			continue
		}
		last := slices.ContainsFunc(rest, func(p []string) bool { return len(p) == 0 })
		switch {
		case !isList && last:
			out[seg] = c
		case !isList:
			if k := keepPaths(c, rest); k != nil {
				out[seg] = k
			}
		default:
			l, ok := c.([]any)
			if !ok {
				continue
			}
			if last {
				out[seg] = l
				continue
			}
			if len(l) == 0 {
				continue // as Envoy Gateway's typed merge drops it (omitempty)
			}
			// A list replaces its class's whole in a merge
			// (EffectiveParameters): kept with its length, entries that
			// keep nothing as empty objects.
			kept := make([]any, len(l))
			for i, e := range l {
				k := keepPaths(e, rest)
				if k == nil {
					k = map[string]any{}
				}
				kept[i] = k
			}
			out[seg] = kept
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
