package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// unresolvedTarget says why declared target ref of a policy of kind k
// does not resolve for its implementation ("" when it does): it is not
// among the objects (or has not the section named), it is another
// implementation's or takes effect only through such Gateways
// (notServed), or, for a kind naming Gateways as its ancestors, it is
// reached through none of the Gateways its implementation serves and
// used by no policy. NGINX Gateway Fabric drops such targets before it
// writes status (graph/policies.go processPolicies: a Gateway, route or
// Service it did not build is skipped); see
// policy.Kind.MissingTargetsUnlisted.
func (c *computation) unresolvedTarget(k *policy.Kind, ref topology.Ref) string {
	if _, ok := c.graph.Lookup(ref); !ok {
		if ref.IsSection() {
			if _, objOK := c.graph.Lookup(ref.Object()); objOK {
				return fmt.Sprintf("%s has no section %q", ref.Object().Short(), ref.SectionName)
			}
		}
		return ref.Short() + " not found"
	}
	if msg := c.notServed(k, ref); msg != "" {
		return msg
	}
	if k.Ancestor.Gateways() && len(c.servedGatewaysAbove(k, ref)) == 0 && len(c.policiesUsing(ref)) == 0 {
		impl := k.Implementation
		if impl == "" {
			impl = "its implementation"
		}
		return fmt.Sprintf("%s takes effect through no Gateway of %s", ref.Short(), impl)
	}
	return ""
}

// unlistedTarget says why declared target ref of a policy of kind k gets
// no status entry ("" when it gets one): it does not resolve
// (unresolvedTarget) for a kind whose implementation lists no such
// target (policy.Kind.MissingTargetsUnlisted), or it is another
// implementation's, or takes effect only through such Gateways
// (notServed), for a kind whose implementation never sees those
// (policy.Kind.OtherControllersUnlisted).
func (c *computation) unlistedTarget(k *policy.Kind, ref topology.Ref) string {
	if k.MissingTargetsUnlisted {
		return c.unresolvedTarget(k, ref)
	}
	if k.OtherControllersUnlisted {
		if _, ok := c.graph.Lookup(ref); ok {
			return c.notServed(k, ref)
		}
	}
	return ""
}

// unlistMissing leaves out of st the ancestor entries of the declared
// targets that get none (unlistedTarget), for a kind whose
// implementation writes none for them (policy.Kind.MissingTargetsUnlisted,
// policy.Kind.OtherControllersUnlisted):
// each becomes an input problem on the policy, naming the targetRef, so
// that get and describe still say the target is missing (the policy's
// summary condition says it too). So do the entries, for a kind naming
// Gateways, of Gateways a route names that are not among the objects
// (the route's problems say so). Entries that resolve stay, in order.
func (c *computation) unlistMissing(ps *pstate, st *PolicyStatus) {
	ps.unlisted = ps.unlisted[:0]
	k := ps.p.Kind
	if !k.MissingTargetsUnlisted && !k.OtherControllersUnlisted {
		return
	}
	impl := k.Implementation
	if impl == "" {
		impl = "its implementation"
	}
	kept := st.Ancestors[:0]
	for _, a := range st.Ancestors {
		why, writes := c.unlistedTarget(k, a.Ref), "writes no status entry for a target that does not resolve"
		if !k.MissingTargetsUnlisted {
			writes = "writes policy status only for what its own Gateways translate"
		}
		if why == "" {
			kept = append(kept, a)
			continue
		}
		field := ""
		for _, t := range ps.p.Targets {
			if t.Selector == nil && targetRef(t) == a.Ref {
				field = t.Field
				break
			}
		}
		if field == "" {
			// Not a declared target: a Gateway a route above the target
			// names that is not among the objects; the route's own
			// problems say so.
			continue
		}
		prob := diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref], Field: field,
			Message: fmt.Sprintf("%s; %s %s, so status.ancestors does not list it", strings.TrimPrefix(why, field+": "), impl, writes)}
		if !slices.Contains(ps.unlisted, prob) {
			ps.unlisted = append(ps.unlisted, prob)
			st.UnlistedTargets = append(st.UnlistedTargets, a.Ref)
		}
	}
	st.Ancestors = slices.Clip(kept)
}

// programmedWhenAccepted rewrites the Programmed conditions of st for a
// kind whose implementation reports whether a policy is accepted rather
// than what it contributes (policy.Kind.ProgrammedWhenAccepted, NGINX
// Gateway Fabric's settingsPolicyProgrammedCondition): an accepted
// ancestor (and the summary, when some target is accepted) is
// Programmed=True, reason Programmed, its message still saying what the
// policy contributes; one not accepted gets Programmed=False, reason
// Overridden when it is Conflicted there, else Reconciling. Conditions
// are copied, not changed in place: ancestor entries share them.
func programmedWhenAccepted(st *PolicyStatus) {
	for i := range st.Ancestors {
		st.Ancestors[i].Conditions = withProgrammedAsAccepted(st.Ancestors[i].Conditions)
	}
	st.Conditions = withProgrammedAsAccepted(st.Conditions)
}

// withProgrammedAsAccepted is conds with the Programmed condition its
// Accepted condition implies (programmedWhenAccepted); conds without an
// Accepted condition are returned as they are.
func withProgrammedAsAccepted(conds []Condition) []Condition {
	acc := slices.IndexFunc(conds, func(c Condition) bool { return c.Type == CondAccepted })
	if acc < 0 {
		return conds
	}
	prog := Condition{Type: CondProgrammed, Status: "True", Reason: ReasonProgrammed}
	at := slices.IndexFunc(conds, func(c Condition) bool { return c.Type == CondProgrammed })
	switch {
	case conds[acc].Status == "True" && at >= 0 && strings.HasPrefix(conds[at].Message, noGatewayTakesLead):
		// Its implementation writes nothing for it: it is not programmed.
		return conds
	case conds[acc].Status == "True":
		prog.Message = "Policy is programmed"
		if at >= 0 && conds[at].Message != "" {
			if conds[at].Reason == ReasonProgrammed && conds[at].Status == "True" {
				prog.Message = conds[at].Message
			} else {
				prog.Message = "Policy is programmed: its implementation reports every policy it accepts as programmed. What it contributes: " + conds[at].Message
			}
		}
	case conds[acc].Reason == ReasonConflicted:
		prog.Status, prog.Reason = "False", ReasonOverridden
		prog.Message = "Policy is not programmed: it conflicts with a policy that takes precedence"
	default:
		prog.Status, prog.Reason = "False", ReasonReconciling
		prog.Message = "Policy is not programmed: it is not accepted"
	}
	out := slices.Clone(conds)
	if at >= 0 {
		out[at] = prog
		return out
	}
	return slices.Insert(out, acc+1, prog)
}

// notAppliedVia are the Gateways through which policy p is not applied at
// target at when what makes it untranslatable there is judged per
// Gateway only (the parameters of the Gateway's data plane refuse it:
// notAllowedVia), for a kind that leaves out what its implementation
// cannot translate (Kind.InvalidNotApplied), whose policies name their
// targets as ancestors and conflict as a whole
// (Kind.ConflictScopePolicy): NGINX Gateway
// Fabric marks such a policy invalid for those Gateways only
// (graph/policies.go attachPolicyToRoute, attachPolicyToGateway:
// InvalidForGateways), keeps it valid, so it still takes part in
// conflicts, and leaves it out of their configuration only
// (dataplane/configuration.go buildPolicies). Direct kinds since session
// 30, Inherited ones too since later in it (PayloadProcessor: a Gateway
// target refused is not applied anywhere, but still conflicts; a route's
// contexts through a refusing Gateway still show the policy, with
// StackEntry.NotAppliedVia). A kind whose policies take part in no
// conflict as a whole (WAFPolicy, additive) since session 31: refused
// through some Gateways, applied through the others; refused through
// every one, nil, as it then matters nowhere. nil when something else
// refuses it too, or for other kinds: it is then not applied at the
// target at all.
func (c *computation) notAppliedVia(p *policy.Policy, at topology.Ref) []topology.Ref {
	k := p.Kind
	if !k.InvalidNotApplied || k.Ancestor != policy.AncestorTarget {
		// (Ancestors named after Gateways would each need their own
		// verdict: not modelled.)
		return nil
	}
	if !c.onlyDataPlaneRefuses(p, at) {
		return nil
	}
	var out []topology.Ref
	for _, n := range c.notAllowedVia(p, at) {
		out = append(out, n.gateway)
	}
	if !k.ConflictScopePolicy && c.refusedThroughAll(k, at, out) {
		return nil
	}
	return out
}

// onlyDataPlaneRefuses reports whether nothing but what the parameters
// of the Gateways above target at refuse (notAllowedVia) can make policy
// p Invalid there: its content translates, its values are in range there
// and the objects it names at listeners resolve.
func (c *computation) onlyDataPlaneRefuses(p *policy.Policy, at topology.Ref) bool {
	if _, msg, _ := c.untranslatable(p); msg != "" {
		return false
	}
	if len(c.rangesAt(p, at)) > 0 {
		return false
	}
	if p.Kind.ObjectRefsOnListeners() && len(p.ObjectRefs) > 0 {
		if _, msg, _ := c.unresolvedObjectRefsWhere(p, func(path *policy.ObjectRefPath) bool {
			return len(path.On) > 0 && c.hasListener(at, path.On)
		}); msg != "" {
			return false
		}
	}
	return true
}

// onlyReferencesRefuse reports whether what makes policy p untranslatable
// at target at is its references alone (backendRefs, objectRefs): no
// value out of range, regex, rule or gated field refuses it there
// (Kind.RefsAfterConflicts: those its implementation's validator judges
// before conflicts).
func (c *computation) onlyReferencesRefuse(p *policy.Policy, at topology.Ref) bool {
	k := p.Kind
	switch {
	case len(k.ValueRanges) > 0 && len(p.OutOfRange()) > 0,
		len(k.RegexFields) > 0 && len(p.BadRegexes()) > 0,
		len(k.Validations) > 0 && len(p.ViolationsUnder(c.features, everyTarget)) > 0,
		len(k.FeatureGates) > 0 && len(p.GatedOff(c.features)) > 0,
		len(c.rangesAt(p, at)) > 0:
		return false
	}
	return true
}

// refusedThroughAll reports whether via holds every Gateway of kind k's
// implementation above target at (a ListenerSet standing for its
// Gateway).
func (c *computation) refusedThroughAll(k *policy.Kind, at topology.Ref, via []topology.Ref) bool {
	for _, gw := range c.servedGatewaysAbove(k, at) {
		ref := gw.Object()
		if topology.IsListenerSet(ref.GroupKind()) {
			ref = c.listenerSetGateway(ref)
		}
		if ref.GroupKind() == topology.KindGateway && !slices.Contains(via, ref) {
			return false
		}
	}
	return true
}

// notAllowedReason is the condition reason its implementation gives when
// what the parameters of the Gateways above target at refuse of policy p
// (notAllowedVia) is all unmet requirements of one reason
// (policy.Requirement.Reason); "" (Invalid) otherwise.
func (c *computation) notAllowedReason(p *policy.Policy, at topology.Ref) string {
	reason := ""
	for _, n := range c.notAllowedVia(p, at) {
		for _, b := range n.problems {
			if b.Reason == "" || (reason != "" && b.Reason != reason) {
				return ""
			}
			reason = b.Reason
		}
	}
	return reason
}
