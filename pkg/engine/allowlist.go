package engine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// gwParams is the EnvoyProxy a Gateway runs with (gatewayParams).
type gwParams struct {
	ref    topology.Ref
	params *unstructured.Unstructured
	known  bool
}

// readGatewayParams works out, once per computation, the EnvoyProxy each
// Gateway among the objects runs with (gatewayParamsOf): a change of a
// Gateway, GatewayClass, EnvoyProxy or configuration recomputes
// everything.
func (c *computation) readGatewayParams() {
	c.gwParams = make(map[topology.Ref]gwParams, len(c.gateways))
	for gw := range c.gateways {
		ref, params, known := c.gatewayParamsOf(gw)
		c.gwParams[gw] = gwParams{ref: ref, params: params, known: known}
	}
}

// gatewayParams is gatewayParamsOf, as readGatewayParams read it.
func (c *computation) gatewayParams(gw topology.Ref) (ref topology.Ref, params *unstructured.Unstructured, known bool) {
	e := c.gwParams[gw]
	return e.ref, e.params, e.known
}

// gatewayParamsOf is the data-plane parameters Gateway gw runs with, as
// its implementation picks them: its own (spec.infrastructure.parametersRef)
// merged over its GatewayClass's (profiles.EffectiveParameters: Envoy
// Gateway by its mergeType, contexts.go attachEnvoyProxy; NGF always,
// graph/gateway.go buildGateways), unless Envoy Gateway's class merges its
// Gateways (its own is then ignored); else its class's. ref names the
// parameters (its own, or the class's). A Gateway of Envoy Gateway's or
// NGF's class that names none, nor does its class, runs with none: known,
// ref zero and params nil (Envoy Gateway's then is the configuration's
// default spec, whose settings attache does not read, see
// profiles.EGDefaultDynamicModules; NGF then checks nothing of them,
// profiles.ChecksWithoutParameters). known is false when attache cannot
// tell: its own or its class's is not among the objects (its
// implementation does not accept the Gateway or the class; or the reader
// could not get it), they are of two kinds, or its class is another
// implementation's or not among the objects.
func (c *computation) gatewayParamsOf(gw topology.Ref) (ref topology.Ref, params *unstructured.Unstructured, known bool) {
	f, ok := c.gateways[gw]
	if !ok {
		return topology.Ref{}, nil, false
	}
	var classParams *unstructured.Unstructured
	classRef, hasClass := c.classParamRefs[f.class]
	if hasClass {
		classParams = c.classParams[classRef]
	}
	// Only Envoy Gateway merges a class's Gateways into one data plane.
	merged := f.controller != profiles.NGFController && c.merges(f.class).merged
	if own, ok := c.gatewayParamRefs[gw]; ok && !merged {
		ownParams := c.classParams[own]
		if ownParams == nil || (hasClass && (classParams == nil || classRef.GroupKind() != own.GroupKind())) {
			return topology.Ref{}, nil, false
		}
		return own, profiles.EffectiveParameters(classParams, ownParams), true
	}
	if !hasClass {
		return topology.Ref{}, nil, f.classKnown && profiles.ParametersKindOf(f.controller) != (topology.GroupKind{})
	}
	if classParams == nil {
		return topology.Ref{}, nil, false
	}
	return classRef, classParams, true
}

// notAllowed is what the parameters a Gateway runs with do not allow of
// a policy.
type notAllowed struct {
	gateway  topology.Ref
	problems []policy.FieldProblem
}

// notAllowedVia checks the values of p at its kind's allowlists against
// the parameters each Gateway above target at runs with (gatewayParams; a
// ListenerSet stands for its Gateway), in the order of the Gateways above:
// each Gateway whose parameters do not allow some value, with the
// problems (naming the parameters and the Gateway). Gateways whose
// parameters attache cannot tell are not judged, nor those running with
// the configuration's default spec when that registers values attache
// does not read (profiles.EGDefaultDynamicModules), nor those running
// with none whose implementation then checks nothing
// (profiles.ChecksWithoutParameters), but for the requirements saying
// such a Gateway does not meet them (policy.Requirement.WithoutParameters).
// A requirement asking for a Service type (ServiceType) applies only when
// the policy's reference names such a Service.
func (c *computation) notAllowedVia(p *policy.Policy, at topology.Ref) []notAllowed {
	var reqs []policy.Requirement
	for _, r := range p.Kind.RequirementsOf(topology.GroupKind{}) {
		if r.NamesService(p.Spec, p.Ref.Namespace, c.serviceIs) {
			reqs = append(reqs, r)
		}
	}
	// External services whose backends mix address types only when
	// Services go to their endpoints: judged per Gateway.
	mixed := c.mixedViaEndpoints(p)
	if len(p.Kind.Allowlists) == 0 && len(reqs) == 0 && !p.Kind.RegexFieldsPerGateway() && len(mixed) == 0 {
		return nil
	}
	var out []notAllowed
	var seen []topology.Ref
	for _, gw := range c.servedGatewaysAbove(p.Kind, at) {
		ref := gw.Object()
		if topology.IsListenerSet(ref.GroupKind()) {
			ref = c.listenerSetGateway(ref)
		}
		if ref.GroupKind() != topology.KindGateway || slices.Contains(seen, ref) {
			continue
		}
		seen = append(seen, ref)
		epRef, params, known := c.gatewayParams(ref)
		if !known {
			// Envoy Gateway's default is routing to endpoints.
			if len(mixed) > 0 {
				probs := slices.Clone(mixed)
				for i := range probs {
					probs[i].Message += fmt.Sprintf(" (a Service counting as its endpoints' IP addresses, by default: attache cannot tell which EnvoyProxy Gateway %s/%s runs with)", ref.Namespace, ref.Name)
				}
				out = append(out, notAllowed{gateway: ref, problems: probs})
			}
			continue
		}
		if params == nil && !profiles.ChecksWithoutParameters(c.gateways[ref].controller) {
			// Checked against parameters only; but what such a data
			// plane does not meet.
			var unmet []policy.Requirement
			for _, r := range reqs {
				if r.WithoutParameters == policy.WithoutParametersUnmet ||
					(r.WithoutParameters == policy.WithoutParametersUnmetAtGateways && at.GroupKind() == topology.KindGateway) {
					unmet = append(unmet, r)
				}
			}
			kind := profiles.ParametersKindOf(c.gateways[ref].controller).Kind
			if kind == "" {
				kind = "parameters"
			}
			if probs := p.Unmet(unmet, nil, fmt.Sprintf("an %s (Gateway %s/%s runs with none: neither it nor its GatewayClass names one)", kind, ref.Namespace, ref.Name)); len(probs) > 0 {
				out = append(out, notAllowed{gateway: ref, problems: probs})
			}
			continue
		}
		var spec map[string]any
		proxy := "the configuration's default EnvoyProxy spec (neither the Gateway nor its GatewayClass names an EnvoyProxy)"
		if params != nil {
			spec, _ = params.Object["spec"].(map[string]any)
			proxy = fmt.Sprintf("%s %s/%s", epRef.Kind, epRef.Namespace, epRef.Name)
		}
		// Of the default spec, attache reads only whether it sets a field
		// (profiles.DefaultSpecFeature): one it sets is not judged, one
		// it does not is judged as unset.
		judged := func(path policy.BackendRefPath) bool {
			return params != nil || !c.features.On(profiles.DefaultSpecFeature(string(path)))
		}
		probs := p.NotAllowedWhere(func(a policy.Allowlist) bool { return judged(a.In) }, func(in policy.BackendRefPath) []string {
			_, values := policy.ValuesAt(spec, in)
			return values
		})
		for i := range probs {
			probs[i].Message += " of " + proxy
		}
		var judgedReqs []policy.Requirement
		for _, r := range reqs {
			if !slices.ContainsFunc(r.Any, func(a policy.BackendRefPath) bool { return !judged(a) }) {
				judgedReqs = append(judgedReqs, r)
			}
		}
		probs = append(probs, p.Unmet(judgedReqs, spec, proxy)...)
		// Content the Gateway's parameters have its implementation check
		// (Envoy Gateway's Lua: its syntax unless luaValidation is
		// Disabled, run in Strict mode unless it is InsecureSyntax too).
		holders := c.holdersFor(p)
		unlessProbs := p.BadRegexesWhere(func(r policy.RegexField) bool {
			path, _, _ := strings.Cut(r.Unless, "=")
			return r.Unless != "" && judged(policy.BackendRefPath(path)) && !r.UnlessHolds(spec)
		}, &holders)
		for i := range unlessProbs {
			unlessProbs[i].Message += fmt.Sprintf(" (%s checks it)", proxy)
		}
		probs = append(probs, unlessProbs...)
		if len(mixed) > 0 && judged(p.Kind.ClusterIPRouting.Path()) && !p.Kind.ClusterIPRouting.Holds(spec) {
			for _, m := range mixed {
				m.Message += fmt.Sprintf(" (a Service counting as its endpoints' IP addresses: %s does not set %s)", proxy, p.Kind.ClusterIPRouting)
				probs = append(probs, m)
			}
		}
		if len(probs) == 0 {
			continue
		}
		for i := range probs {
			probs[i].Message += fmt.Sprintf(", which Gateway %s/%s runs with", ref.Namespace, ref.Name)
		}
		out = append(out, notAllowed{gateway: ref, problems: probs})
	}
	return out
}

// notAllowedAt is notAllowedVia's problems, once per field (the first
// Gateway's).
func (c *computation) notAllowedAt(p *policy.Policy, at topology.Ref) []policy.FieldProblem {
	var out []policy.FieldProblem
	for _, n := range c.notAllowedVia(p, at) {
		for _, b := range n.problems {
			if !slices.ContainsFunc(out, func(o policy.FieldProblem) bool { return o.Field == b.Field }) {
				out = append(out, b)
			}
		}
	}
	return out
}

// failingVia are the Gateways through which p, Invalid in place at target
// at, fails the requests: when every field that breaks it there is one
// the parameters of some Gateways only do not allow (notAllowedVia),
// those Gateways, as Envoy Gateway translates a route's policy per
// Gateway; nil when it fails through every Gateway.
func (c *computation) failingVia(p *policy.Policy, at topology.Ref) []topology.Ref {
	via := c.notAllowedVia(p, at)
	if len(via) == 0 {
		return nil
	}
	allowFields := map[string]bool{}
	var gws []topology.Ref
	for _, n := range via {
		gws = append(gws, n.gateway)
		for _, b := range n.problems {
			allowFields[b.Field] = true
		}
	}
	for _, f := range c.brokenFields(p, at) {
		if !allowFields[f] {
			return nil
		}
	}
	if _, msg, _ := c.untranslatable(p); msg != "" {
		return nil
	}
	return gws
}

// listenersFor are the listeners (Gateway or ListenerSet sections) the
// requests of target at pass: a listener itself; a Gateway's (its
// ListenerSets' included) or a ListenerSet's; those a route (or a rule of
// it) is attached through. None for other targets.
func (c *computation) listenersFor(at topology.Ref) []topology.Ref {
	gk := at.GroupKind()
	if at.IsListener() {
		return []topology.Ref{at}
	}
	id, ok := c.graph.Lookup(at.Object())
	if !ok {
		return nil
	}
	switch {
	case gk == topology.KindGateway:
		return c.gatewayListeners(id)
	case topology.IsListenerSet(gk):
		return c.sections(id)
	case slices.Contains(topology.RouteKinds, gk):
		var out []topology.Ref
		for _, p := range c.graph.Node(id).Parents {
			r := c.graph.Node(p).Ref
			if r.IsListener() && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
		slices.SortFunc(out, func(a, b topology.Ref) int { return a.Compare(b) })
		return out
	}
	return nil
}

// listenerUnmet checks the requirements of p on other kinds' effective
// policies (policy.Requirement.Of) at the listeners the requests of
// target at pass (listenersFor): the message naming every unmet one, and
// the listeners where some is not met; "" and nil when all are met. Read
// after every kind is computed: a policy of such a kind that changes
// recomputes everything (requirementDependents).
func (c *computation) listenerUnmet(p *policy.Policy, at topology.Ref) (string, []topology.Ref) {
	kinds := requiredKinds(p.Kind)
	if len(kinds) == 0 {
		return "", nil
	}
	var probs []policy.FieldProblem
	var via []topology.Ref
	for _, l := range c.listenersFor(at) {
		failed := false
		for _, of := range kinds {
			rs := c.requirementsAt(p.Kind.RequirementsOf(of), l)
			if len(rs) == 0 {
				continue
			}
			for _, spec := range c.effectiveSpecsAt(of, l) {
				for _, b := range p.Unmet(rs, spec, fmt.Sprintf("the %s in effect at %s", of.Kind, l.Short())) {
					failed = true
					if !slices.Contains(probs, b) {
						probs = append(probs, b)
					}
				}
			}
		}
		if failed {
			via = append(via, l)
		}
	}
	if len(probs) == 0 {
		return "", nil
	}
	return "requirements not met: " + fieldProblems(probs), via
}

// effectiveSpecsAt are the effective specs of policy kind of at target
// at, one per context; one nil spec when none applies there. None when
// the kind is not among the kinds: what attache cannot read is not judged.
func (c *computation) effectiveSpecsAt(of topology.GroupKind, at topology.Ref) []map[string]any {
	k := c.kinds[of]
	if k == nil || c.dps[k] == nil {
		return nil
	}
	id, ok := c.graph.Lookup(at)
	if !ok {
		return []map[string]any{nil}
	}
	ts := c.dps[k].targets[id]
	if ts == nil || ts.eff == nil || len(ts.eff.Contexts) == 0 {
		return []map[string]any{nil}
	}
	out := make([]map[string]any, len(ts.eff.Contexts))
	for i, ctx := range ts.eff.Contexts {
		out[i] = ctx.Spec
	}
	return out
}

// mergedListenerUnmet is listenerUnmet for a policy with a merge type:
// its implementation judges the merged policy, per listener, so the
// requirements are checked on the effective spec of each context where
// attachment a is the most specific policy applying (neither Conflicted
// nor dropped), at the listeners on that context's paths. "" and nil
// when all are met.
func (c *computation) mergedListenerUnmet(ps *pstate, a *attachment) (string, []topology.Ref) {
	kinds := requiredKinds(ps.p.Kind)
	d := c.dps[ps.p.Kind]
	if len(kinds) == 0 || d == nil {
		return "", nil
	}
	// The effective targets it contributes to, and those at and right
	// below its target (a route's rules), where it may take part setting
	// no field of its own (a merge type alone: the merge is the policy
	// above's).
	targets := make([]topology.NodeID, 0, len(a.affects)+4)
	for n := range a.affects {
		targets = append(targets, n)
	}
	for _, n := range append([]topology.NodeID{a.node}, c.graph.Node(a.node).Children...) {
		if _, ok := a.affects[n]; !ok && d.targets[n] != nil {
			targets = append(targets, n)
		}
	}
	slices.SortFunc(targets, func(x, y topology.NodeID) int { return c.graph.Node(x).Ref.Compare(c.graph.Node(y).Ref) })
	var probs []policy.FieldProblem
	var via []topology.Ref
	for _, n := range targets {
		ts := d.targets[n]
		if ts == nil || ts.eff == nil {
			continue
		}
		for _, ctx := range ts.eff.Contexts {
			if !mostSpecificApplying(ctx.Stack, a.ref) {
				continue
			}
			merged := &policy.Policy{Kind: ps.p.Kind, Ref: ps.p.Ref, Spec: ctx.Spec}
			ctx.Paths(func(path []topology.Ref) bool {
				for _, l := range path {
					if !l.IsListener() {
						continue
					}
					failed := false
					for _, of := range kinds {
						rs := c.requirementsAt(ps.p.Kind.RequirementsOf(of), l)
						for _, spec := range c.effectiveSpecsAt(of, l) {
							for _, b := range merged.Unmet(rs, spec, fmt.Sprintf("the %s in effect at %s, merged (%s) with the policies above it", of.Kind, l.Short(), ps.p.MergeType)) {
								failed = true
								if !slices.Contains(probs, b) {
									probs = append(probs, b)
								}
							}
						}
					}
					if failed && !slices.Contains(via, l) {
						via = append(via, l)
					}
				}
				return true
			})
		}
	}
	if len(probs) == 0 {
		return "", nil
	}
	return "requirements not met: " + fieldProblems(probs), via
}

// requirementsAt are those of rs checked at listener l (Requirement.On).
func (c *computation) requirementsAt(rs []policy.Requirement, l topology.Ref) []policy.Requirement {
	var out []policy.Requirement
	for _, r := range rs {
		if lp, ok := c.listenerPorts[l]; len(r.On) == 0 || (ok && slices.Contains(r.On, lp.proto)) {
			out = append(out, r)
		}
	}
	return out
}

// mostSpecificApplying reports whether att is the most specific entry of
// stack neither Conflicted nor dropped for unsupported fields.
func mostSpecificApplying(stack []StackEntry, att *Attachment) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		if e := stack[i]; !e.Conflicted && len(e.Unsupported) == 0 {
			return e.Attachment == att
		}
	}
	return false
}

// requiredKinds are the policy kinds whose effective policies k's
// requirements read at the listeners (policy.Requirement.Of), each once.
func requiredKinds(k *policy.Kind) []topology.GroupKind {
	var out []topology.GroupKind
	for _, r := range k.Requirements {
		if r.Of != (topology.GroupKind{}) && !slices.Contains(out, r.Of) {
			out = append(out, r.Of)
		}
	}
	return out
}

// serviceIs reports whether ref is a Service among the objects of type
// typ (policy.Requirement.ServiceType; the types read: ExternalName).
func (c *computation) serviceIs(ref topology.Ref, typ string) bool {
	if c.backendSections == nil || typ != policy.ServiceTypeExternalName {
		return false
	}
	return c.backendSections.externalName[topology.Ref{Kind: topology.KindService.Kind, Namespace: ref.Namespace, Name: ref.Name}]
}
