package engine

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// gatewayParams is the EnvoyProxy Gateway gw runs with, as Envoy Gateway
// picks it (contexts.go attachEnvoyProxy): its own
// (spec.infrastructure.parametersRef) merged over its GatewayClass's by
// its mergeType (profiles.EffectiveParameters), unless the class merges
// its Gateways (its own is then ignored); else its class's. ref names the
// proxy (its own, or the class's). known is false when attache cannot
// tell: its own is not among the objects (Envoy Gateway does not accept
// the Gateway; or the reader could not get it), or neither the Gateway
// nor its class names one that is (the configuration's default spec,
// which attache does not read here).
func (c *computation) gatewayParams(gw topology.Ref) (ref topology.Ref, params *unstructured.Unstructured, known bool) {
	f, ok := c.gateways[gw]
	if !ok {
		return topology.Ref{}, nil, false
	}
	var classParams *unstructured.Unstructured
	classRef, hasClass := c.classParamRefs[f.class]
	if hasClass {
		classParams = c.classParams[classRef]
	}
	if own, ok := c.gatewayParamRefs[gw]; ok && !c.merges(f.class).merged {
		ownParams := c.classParams[own]
		if ownParams == nil {
			return topology.Ref{}, nil, false
		}
		return own, profiles.EffectiveParameters(classParams, ownParams), true
	}
	if classParams == nil {
		return topology.Ref{}, nil, false
	}
	return classRef, classParams, true
}

// notAllowedAt checks the values of p at its kind's allowlists against the
// parameters each Gateway above target at runs with (gatewayParams; a
// ListenerSet stands for its Gateway): a value one of them does not allow
// is a problem, once per field, naming the proxy and the Gateway. Gateways
// whose parameters attache cannot tell are not judged.
func (c *computation) notAllowedAt(p *policy.Policy, at topology.Ref) []policy.FieldProblem {
	if len(p.Kind.Allowlists) == 0 {
		return nil
	}
	var out []policy.FieldProblem
	var seen []topology.Ref
	for _, gw := range c.gatewaysAbove(at) {
		ref := gw.Object()
		if ref.GroupKind() == topology.KindListenerSet {
			ref = c.listenerSetGateway(ref)
		}
		if ref.GroupKind() != topology.KindGateway || slices.Contains(seen, ref) {
			continue
		}
		seen = append(seen, ref)
		epRef, params, known := c.gatewayParams(ref)
		if !known {
			continue
		}
		spec, _ := params.Object["spec"].(map[string]any)
		for _, b := range p.NotAllowed(func(in policy.BackendRefPath) []string {
			_, values := policy.ValuesAt(spec, in)
			return values
		}) {
			if slices.ContainsFunc(out, func(o policy.FieldProblem) bool { return o.Field == b.Field }) {
				continue
			}
			b.Message += fmt.Sprintf(" of %s %s/%s, which Gateway %s/%s runs with", epRef.Kind, epRef.Namespace, epRef.Name, ref.Namespace, ref.Name)
			out = append(out, b)
		}
	}
	return out
}
