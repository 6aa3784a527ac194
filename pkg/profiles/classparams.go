package profiles

import (
	"fmt"

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
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "mergeGateways"); ok {
		out["spec"] = map[string]any{"mergeGateways": v}
	}
	u.Object = out
	return u
}
