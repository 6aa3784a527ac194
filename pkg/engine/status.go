package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/attache-dev/attache/pkg/diag"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// ConditionTruncated is the policy condition saying ancestor entries were
// left out beyond MaxAncestors.
const ConditionTruncated = "attache.dev/AncestorsTruncated"

// ConditionAncestorLimit is the policy condition naming the ancestors a
// policy is not applied at because its status list was full (kinds with
// policy.AncestorLimitSkip); its reason is ReasonAncestorLimitReached.
const ConditionAncestorLimit = "attache.dev/AncestorLimitReached"

// ReasonAncestorLimitReached is the reason of ConditionAncestorLimit
// (the reason NGINX Gateway Fabric gives the objects it skips).
const ReasonAncestorLimitReached = "AncestorLimitReached"

// result assembles the Result from the per-policy statuses and the
// per-kind targets. It shares them: an update builds a new Result.
func (c *computation) result() *Result {
	r := &Result{Graph: c.graph, Grants: c.grants, Kinds: c.sortedKinds}
	r.Policies = make([]*PolicyStatus, 0, len(c.policies))
	for _, ps := range c.policies {
		r.Policies = append(r.Policies, c.status[ps])
	}
	sort.SliceStable(r.Policies, func(i, j int) bool {
		a, b := r.Policies[i].Policy, r.Policies[j].Policy
		if a.Kind != b.Kind {
			return a.Kind.String() < b.Kind.String()
		}
		return a.Ref.Less(b.Ref)
	})
	// Kinds are sorted by name; within a kind, targets by ref.
	n := 0
	for _, k := range c.sortedKinds {
		n += len(c.dps[k].order)
	}
	r.Effective = make([]*Effective, 0, n)
	for _, k := range c.sortedKinds {
		d := c.dps[k]
		for _, t := range d.order {
			ts := d.targets[t]
			r.Effective = append(r.Effective, ts.eff)
			if ts.affected != nil {
				r.Affected = append(r.Affected, ts.affected)
			}
		}
	}
	r.Problems = append([]diag.Problem(nil), c.problems...)
	unchecked := map[topology.GroupKind]bool{} // kinds whose schema is reported
	for _, ps := range c.policies {
		r.Problems = append(r.Problems, ps.p.Problems...)
		r.Problems = append(r.Problems, ps.p.Ignored...)
		r.Problems = append(r.Problems, ps.targetProblems...)
		r.Problems = append(r.Problems, ps.unlisted...)
		if gk := ps.p.Kind.GroupKind; c.schemaProblems[gk] != nil && !unchecked[gk] {
			// Once per kind, while a policy of it is there: the same
			// answer whether the schema was compiled now or for an
			// earlier policy (the incremental engine).
			unchecked[gk] = true
			r.Problems = append(r.Problems, *c.schemaProblems[gk])
		}
	}
	r.ReplacedRules = c.replacedRules(&r.Problems)
	r.ReplacedUnder, r.ReplacedRules = c.routeReplacements(r.ReplacedRules, &r.Problems)
	if c.sourcesMoved {
		for i := range r.Problems {
			if src, ok := c.sources[r.Problems[i].Object.Object()]; ok {
				r.Problems[i].Source = src
			}
		}
	}
	sort.SliceStable(r.Problems, func(i, j int) bool { return problemLess(r.Problems[i], r.Problems[j]) })
	return r
}

// replacedRules are the route rules whose ExtensionRef filter names a
// policy, of a kind whose implementation replaces such a rule by a direct
// response (policy.Kind.MissingFilterStatus), that is not among the
// objects; each is also a problem on its route, added to problems. A
// rule reached only through other implementations' Gateways
// (policy.Kind.Controllers) is not replaced.
func (c *computation) replacedRules(problems *[]diag.Problem) map[topology.Ref]RuleReplacement {
	var out map[topology.Ref]RuleReplacement
	for target, refs := range c.filterRefs {
		k := c.kinds[target.GroupKind()]
		if k == nil || !k.FilterAttachment || k.MissingFilterStatus == 0 || c.byRef[target] != nil {
			continue
		}
		for _, f := range refs {
			if c.notServed(k, f.rule) != "" {
				// Only other implementations' Gateways reach the rule:
				// theirs to answer.
				continue
			}
			why := fmt.Sprintf("its ExtensionRef filter names %s %s/%s, which is not among the objects, so its implementation replaces the rule with a %d direct response",
				target.Kind, target.Namespace, target.Name, k.MissingFilterStatus)
			if out == nil {
				out = map[topology.Ref]RuleReplacement{}
			}
			if _, seen := out[f.rule]; !seen {
				out[f.rule] = RuleReplacement{Status: k.MissingFilterStatus, Kind: k, Reason: "rule " + f.rule.SectionName + " of " + f.rule.Object().Short() + ": " + why}
			}
			route := f.rule.Object()
			*problems = append(*problems, diag.Problem{Object: route, Source: c.sources[route], Field: strings.TrimPrefix(f.field, route.Short()+" "), Message: why})
		}
	}
	return out
}

// affected is the Affected entry of a target (decision 8): the policies
// contributing at least one field in at least one of its contexts.
func (d *kindDP) affected(ts *targetState, n topology.NodeID) *Affected {
	node := d.c.graph.Node(n)
	af := &Affected{Kind: d.kind, Target: node.Ref}
	for _, sr := range ts.stacks {
		for i, a := range sr.atts {
			if sr.contrib[i] > 0 && !containsRef(af.Policies, a.pol.p.Ref) {
				af.Policies = append(af.Policies, a.pol.p.Ref)
			}
		}
	}
	if len(af.Policies) == 0 {
		return nil
	}
	sort.Slice(af.Policies, func(i, j int) bool { return af.Policies[i].Less(af.Policies[j]) })
	names := make([]string, len(af.Policies))
	for i, p := range af.Policies {
		names[i] = shortName(p)
	}
	af.Condition = Condition{
		Type:               d.c.opts.ConditionDomain + "/" + d.kind.GroupKind.Kind + "Affected",
		Status:             "True",
		Reason:             ReasonAffected,
		Message:            fmt.Sprintf("Affected by %s %s", d.kind.GroupKind.Kind, strings.Join(names, ", ")),
		ObservedGeneration: node.Generation,
	}
	return af
}

func containsRef(l []topology.Ref, r topology.Ref) bool {
	for _, x := range l {
		if x == r {
			return true
		}
	}
	return false
}

// policyStatus derives a policy's conditions and ancestors from the
// tallies of its contexts.
func (c *computation) policyStatus(ps *pstate) *PolicyStatus {
	st := &PolicyStatus{Policy: ps.p}
	if ps.p.Invalid() {
		msgs := make([]string, len(ps.p.Problems))
		for i, pr := range ps.p.Problems {
			msgs[i] = pr.Field + ": " + pr.Message
		}
		cond := Condition{Type: CondAccepted, Status: "False", Reason: ReasonInvalid, Message: strings.Join(msgs, "; ")}
		st.Conditions = []Condition{cond}
		for _, t := range ps.p.Targets {
			if t.Selector == nil {
				st.Ancestors = append(st.Ancestors, Ancestor{Ref: targetRef(t), Conditions: []Condition{cond}})
			}
		}
		if ps.p.Kind.ProgrammedWhenAccepted {
			programmedWhenAccepted(st)
		}
		c.unlistMissing(ps, st)
		c.limitAncestors(ps, st)
		return st
	}
	// The CA certificate references are judged per target, as the
	// implementation behind the Gateways above it reads them
	// (caReadingAt); the policy's own ResolvedRefs is that of its first
	// accepted target with one (none is said where a reference could not
	// be read), else of its first target rejected for them.
	defaultCA := c.checkCARefs(ps.p)
	caAt := func(target topology.Ref) *caCheck {
		if len(ps.p.Kind.CARefs.ByController) == 0 {
			return defaultCA
		}
		if ctls := c.controllersAbove(target); len(ctls) > 1 {
			// Gateways of several implementations: accepted when some
			// implementation's reading accepts (each Gateway's entry
			// then says its own, see caByGateway), else the first
			// implementation's verdict.
			var first *caCheck
			for _, ctl := range slices.Sorted(maps.Keys(ctls)) {
				chk := c.checkCARefsAs(ps.p, ps.p.Kind.CARefs.For(ctl))
				if chk == nil || (!chk.invalid && !chk.noValid) {
					return chk
				}
				if first == nil {
					first = chk
				}
			}
			return first
		}
		return c.checkCARefsAs(ps.p, c.caReadingAt(ps.p, target))
	}
	var acceptedCA, noValidCA *caCheck
	_, refsMsg, _ := c.untranslatable(ps.p)
	var accepted []*attachment
	var bads []map[topology.Ref]string             // per ancestor: mergedUnsupported where partial
	var byGateway []func(topology.Ref) []Condition // per ancestor: its Gateways' CA verdicts (caByGateway)
	var partial []string                           // their messages, per Gateway
	var firstBad *ancestorState
	var summary *Condition
	var notAccepted []string
	var verdicts []targetVerdict // per ancestor, for a summary flattened as istiod's (SummaryIstioWaypoint)
	for i := range ps.ancestors {
		// A copy: whether an attachment is Conflicted is a matter of this
		// computation's tallies, which an update may change.
		an := ps.ancestors[i]
		anc := Ancestor{Ref: an.ref}
		if w := ps.rejectedBy; w != nil && an.att != nil {
			// Rejected at one target, so at all (conflict scope policy).
			where := "on the same target " + w.ref.At.Short()
			if an.att != ps.rejectedAt {
				where = "on " + w.ref.At.Short() + ", another of its targets"
			}
			an.reason, an.msg = ReasonConflicted, fmt.Sprintf("Conflicts with the established %s %s %s (%s): a policy rejected at one of its targets is rejected at all of them",
				w.pol.p.Ref.Kind, shortName(w.pol.p.Ref), where, whyEstablished(w, ps.rejectedAt))
		} else if w := c.levelWinner(an.att); w != nil {
			// Oldest wins at its level: Conflicted there whether or not an
			// effective target is below it yet (Envoy Gateway says so of a
			// second policy on a Gateway without routes).
			rule := "the oldest policy on a target wins"
			if w.pol.p.Kind.WeightAnnotation != "" {
				rule = fmt.Sprintf("the policy with the highest %s on a target wins, the oldest of equal weight", w.pol.p.Kind.WeightAnnotation)
			}
			an.reason, an.msg = ReasonConflicted, fmt.Sprintf("Conflicts with the established %s %s on the same target %s: %s (%s)",
				w.pol.p.Ref.Kind, shortName(w.pol.p.Ref), w.ref.At.Short(), rule, whyEstablished(w, an.att))
		} else if w := c.telemetryWinner(an.att); w != nil {
			an.reason, an.msg = ReasonConflicted, fmt.Sprintf("Conflicts with the established %s %s, also without selector or targetRefs in namespace %s: istiod applies only the oldest such Telemetry of a namespace (%s)",
				w.pol.p.Ref.Kind, shortName(w.pol.p.Ref), w.pol.p.Ref.Namespace, whyEstablished(w, an.att))
		} else if an.att != nil && an.att.reach.Contexts > 0 && an.att.conflicted == an.att.reach.Contexts {
			an.reason, an.msg = ReasonConflicted, c.conflictMessage(an.att)
		}
		var unrankedGW func(topology.Ref) []Condition
		if an.reason == "" && an.att != nil {
			// Rejected at some sections only, by a policy on a section
			// its implementation does not rank above it.
			var reason, msg string
			if reason, msg, unrankedGW = c.unrankedConflicts(an.att); reason != "" {
				an.reason, an.msg = reason, msg
			}
		}
		ca := caAt(an.ref)
		var perGW func(topology.Ref) []Condition
		if an.reason == "" && an.att != nil {
			perGW = firstConditions(unrankedGW, c.caByGateway(ps, an.att, an.ref))
		}
		if an.reason == "" && ca != nil && ca.invalid {
			an.reason, an.msg = ReasonInvalid, ca.msg
		}
		if an.reason == "" && ca != nil && ca.noValid {
			// In place, but with no CA certificate to trust: connections
			// through it fail (Gateway API), and it is not accepted.
			an.reason, an.msg = ReasonNoValidCACertificate, ca.msg
		}
		refsReason := ""
		if an.reason == "" && an.att != nil && refsMsg != "" {
			// In place, but its implementation cannot translate it.
			an.reason, an.msg = ReasonInvalid, refsMsg
			refsReason = c.refsReason(ps.p, an.att.ref.At)
		}
		if an.reason == "" && an.att != nil {
			// The same, for references read at some targets only.
			if _, msg, _ := c.unresolvedRefsAt(ps.p, an.att.ref.At); msg != "" {
				an.reason, an.msg = ReasonInvalid, msg
			}
		}
		var unmetVia []topology.Ref
		refsInvalid := an.reason == ReasonInvalid && an.att != nil
		if (an.reason == "" || refsInvalid) && an.att != nil {
			// The same, for what it requires of other kinds' policies at
			// the listeners its requests pass (read now that every kind
			// is computed).
			unmet := c.listenerUnmet
			if ps.p.MergeType != "" {
				// Its implementation judges the merged policy.
				unmet = func(*policy.Policy, topology.Ref) (string, []topology.Ref) { return c.mergedListenerUnmet(ps, an.att) }
			}
			if msg, via := unmet(ps.p, an.att.ref.At); msg != "" {
				unmetVia = via
				if an.reason == "" {
					an.reason, an.msg = ReasonInvalid, msg
				} else {
					an.msg += "; " + msg
				}
			}
		}
		if an.reason == ReasonInvalid && an.att != nil && an.att.nowhere && an.att.notVia == nil {
			// Its references do not resolve, which its implementation
			// judges after conflicts (Kind.RefsAfterConflicts).
			an.msg += "; not applied"
		}
		if an.reason == ReasonInvalid && an.att != nil && an.att.notVia != nil {
			// Refused by the parameters of some Gateways' data planes
			// only: left out through those (notAppliedVia).
			if an.att.nowhere {
				an.msg += "; not applied"
			} else {
				names := make([]string, len(an.att.notVia))
				for i, gw := range an.att.notVia {
					names[i] = gw.Short()
				}
				an.msg += fmt.Sprintf("; not applied through %s, applied through its other Gateways", strings.Join(names, ", "))
				if st.NotAppliedVia == nil {
					st.NotAppliedVia = map[topology.Ref][]topology.Ref{}
				}
				st.NotAppliedVia[an.att.ref.At] = an.att.notVia
			}
		}
		if an.reason == ReasonInvalid && an.att != nil && an.att.failedOpen != nil {
			an.msg += fmt.Sprintf("; failing open, %s left out and the rest applied", strings.Join(an.att.failedOpen, ", "))
		}
		// Applied nowhere, or left out through the Gateways refusing it
		// (and applied through the others), it fails no request.
		failsClosed := an.reason == ReasonInvalid && an.att != nil && !an.att.nowhere && an.att.notVia == nil && c.failsClosed(ps.p, an.att.ref.At)
		var openVia, closedVia []topology.Ref
		if failsClosed && refsInvalid && ps.p.MergeType != "" {
			// Its own broken fields may fail open by the merged policy's
			// flags where it merges with a policy above.
			var parts []string
			if openVia, closedVia, parts = c.ownOpenVia(an.att); len(openVia) > 0 {
				failsClosed = len(closedVia) > 0
				an.msg += ownOpenNote(openVia, closedVia, parts)
			}
		}
		// A requirement not met never fails open.
		if an.reason == ReasonInvalid && an.att != nil && (unmetVia != nil || failsClosed) {
			if st.InPlaceInvalid == nil {
				st.InPlaceInvalid = map[topology.Ref]string{}
			}
			st.InPlaceInvalid[an.att.ref.At] = an.msg
			// Through the listeners where a requirement is not met, and
			// the Gateways whose parameters refuse it; everywhere when
			// something else breaks it (unless that fails open).
			var via []topology.Ref
			switch {
			case refsInvalid && failsClosed && len(openVia) > 0:
				// Not through the listeners where it fails open.
				via = append(slices.Clip(unmetVia), closedVia...)
			case refsInvalid && failsClosed:
				if others := c.failingVia(ps.p, an.att.ref.At); others != nil {
					via = append(slices.Clip(unmetVia), others...)
				}
			case unmetVia != nil:
				via = unmetVia
			default:
				via = c.failingVia(ps.p, an.att.ref.At)
			}
			if via != nil {
				if st.InPlaceInvalidVia == nil {
					st.InPlaceInvalidVia = map[topology.Ref][]topology.Ref{}
				}
				st.InPlaceInvalidVia[an.att.ref.At] = via
			}
		}
		var bad map[topology.Ref]string
		if an.reason == "" && an.att != nil {
			// Dropped where its merged spec would set what its kind does
			// not support: Invalid for those Gateways, or everywhere.
			gwMode := ps.p.Kind.Ancestor.Gateways()
			objects := ps.p.Kind.Ancestor.Objects()
			if bad = c.mergedUnsupported(an.att); len(bad) > 0 && (!gwMode || !c.someGatewayFine(an.ref, bad, objects)) {
				an.reason, an.msg = ReasonInvalid, firstMsg(bad)
				bad = nil
			} else if len(bad) > 0 {
				for _, gw := range c.gatewaysAbove(an.ref) {
					if objects {
						gw = gw.Object()
					}
					if msg := c.badThrough(bad, gw, objects); msg != "" {
						partial = append(partial, gw.Short()+": "+msg)
					} else if !gw.IsSection() && !objects {
						for _, l := range badListeners(bad, gw) {
							partial = append(partial, l.Short()+": "+bad[l])
						}
					}
				}
			}
		}
		if an.reason == ReasonInvalid && an.att != nil && an.att.notViaReason != "" {
			// Its implementation's own reason for what the Gateways'
			// parameters refuse (NGF: NginxProxyConfigNotSet).
			an.reason = an.att.notViaReason
		}
		if an.reason == ReasonInvalid && refsReason != "" {
			// Its implementation's own reason for references it does
			// not resolve (NGF: RefNotPermitted).
			an.reason = refsReason
		}
		if an.reason == "" && an.att != nil && an.att.hostInvalid != "" {
			// One implementation's verdict, while another applies it
			// (kgateway's waypoint class): it stays in its contexts.
			an.reason, an.msg = ReasonInvalid, an.att.hostInvalid
		}
		bads = append(bads, bad)
		byGateway = append(byGateway, perGW)
		if an.reason != "" {
			anc.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: an.reason, Message: an.msg}}
			if an.reason == ReasonNoValidCACertificate {
				anc.Conditions = append(anc.Conditions, ca.resolved)
			}
			if firstBad == nil {
				noValidCA = ca
				firstBad = &an
			}
			notAccepted = append(notAccepted, an.msg)
		} else {
			accepted = append(accepted, an.att)
			prog := c.programmed(ps, an.att)
			if w := c.tiedWinner(an.att); w != nil {
				prog.Message += fmt.Sprintf("; created in the same second as %s %s on the same target, which the effective policy shows: its implementation applies either, which one holds is not determined",
					w.pol.p.Ref.Kind, shortName(w.pol.p.Ref))
			}
			if len(ps.atts) == 1 {
				summary = &prog // one target: the summary says the same
			}
			anc.Conditions = []Condition{
				{Type: CondAccepted, Status: "True", Reason: ReasonAccepted, Message: "Policy is accepted for this target"},
				prog,
			}
			if ca != nil {
				anc.Conditions = append(anc.Conditions, ca.resolved)
			}
			if acceptedCA == nil {
				acceptedCA = ca
			}
		}
		st.Ancestors = append(st.Ancestors, anc)
		verdicts = append(verdicts, targetVerdict{ref: an.ref, reason: an.reason, msg: an.msg, foreign: an.foreign})
	}
	notAccepted = append(notAccepted, ps.noTarget...)
	throughNone := false // no declared target reaches a Gateway
	if mode := ps.p.Kind.Ancestor; mode.Gateways() {
		st.Ancestors, throughNone = c.gatewayAncestors(ps.p.Kind, st.Ancestors, bads, byGateway, mode)
	}
	switch {
	case len(accepted) > 0:
		msg := "Policy is accepted"
		if len(notAccepted) > 0 {
			msg = fmt.Sprintf("Policy is accepted for %d of %d targets; not accepted: %s", len(accepted), len(accepted)+len(notAccepted), strings.Join(notAccepted, "; "))
		}
		if len(partial) > 0 {
			msg += "; Invalid through " + strings.Join(partial, "; ")
		}
		// Programmed summarizes every context the policy reaches, also
		// those of targets where it was rejected (decision 7: it then
		// "loses some contexts").
		if summary == nil {
			setsNone := true
			for _, a := range ps.atts {
				setsNone = setsNone && len(a.affects) == 0
			}
			p := c.programmedFrom(ps.p.Kind, ps.reach, setsNone, func() string { return c.cachedLossSummary(&ps.lossMsg, ps.atts) }, nil)
			p = c.withReplacedBelow(c.withUnreadyRefs(ps.p, ps.reach, c.withWaiting(ps.p.Kind, ps.reach, c.withUnready(ps.p.Kind, ps.reach, p, accepted), accepted)), accepted)
			p = c.withRequiredObjects(ps.p.Kind, c.withNoGateway(ps.p.Kind, ps.reach, p, accepted))
			summary = &p
		}
		if throughNone && summary.Type == CondProgrammed && summary.Status == "True" {
			refs := make([]topology.Ref, len(st.Ancestors))
			for i, an := range st.Ancestors {
				refs[i] = an.Ref // the declared targets, none reaching a Gateway
			}
			p := c.throughNoGateway(ps.p.Kind, refs)
			summary = &p
		}
		st.Conditions = []Condition{{Type: CondAccepted, Status: "True", Reason: ReasonAccepted, Message: msg}, *summary}
		if acceptedCA != nil {
			st.Conditions = append(st.Conditions, acceptedCA.resolved)
		}
	case firstBad != nil:
		// One reason for the whole policy (TargetConflict) is said once.
		st.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: firstBad.reason, Message: strings.Join(slices.Compact(notAccepted), "; ")}}
		if firstBad.reason == ReasonNoValidCACertificate {
			st.Conditions = append(st.Conditions, noValidCA.resolved)
		}
	case ps.missingDeps != "":
		// No target to name (selectors, untargeted scopes).
		st.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonMissingDependency, Message: ps.missingDeps}}
	default:
		msg := "Policy has no target"
		switch {
		case len(ps.noTarget) > 0:
			msg = strings.Join(ps.noTarget, "; ")
		case len(ps.unread) > 0:
			names := make([]string, len(ps.unread))
			for i, r := range ps.unread {
				names[i] = r.Short()
			}
			msg = "Policy is not judged: its targets could not be read (" + strings.Join(names, ", ") + ")"
		}
		st.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonTargetNotFound, Message: msg}}
	}
	st.UnreadTargets = slices.Clip(ps.unread)
	if ps.p.Kind.SummaryIstioWaypoint && len(ps.p.Targets) > 0 && len(st.Conditions) > 0 {
		st.Conditions[0] = c.istioWaypointSummary(ps.p, verdicts)
	}
	st.Reach = ps.reach
	if ps.affects == nil {
		seen := map[topology.NodeID]bool{}
		ps.affects = []topology.Ref{}
		for _, a := range ps.atts {
			for n := range a.affects {
				if !seen[n] {
					seen[n] = true
					ps.affects = append(ps.affects, c.graph.Node(n).Ref)
				}
			}
		}
		sort.Slice(ps.affects, func(i, j int) bool { return ps.affects[i].Less(ps.affects[j]) })
	}
	if len(ps.affects) > 0 {
		st.Affects = ps.affects
	}
	if ps.p.Kind.ProgrammedWhenAccepted {
		programmedWhenAccepted(st)
	}
	c.unlistMissing(ps, st)
	c.limitAncestors(ps, st)
	return st
}

// gatewayAncestors maps ancestor entries named after declared targets to
// entries named after the Gateways (of kind k's implementation) through
// which each target takes effect
// (GEP-713 "Using upstream PolicyAncestorStatus", GEP-1897): see
// gatewaysAbove. A Gateway reached through several targets takes the entry of the
// first accepted one (else of the first). A target no Gateway reaches (not
// found, or behind no route) keeps its own entry, so that its condition
// still says why it has no effect; accepted there, it is Programmed=False
// (throughNoGateway), as no implementation programs it. A Gateway (or
// ListenerSet) that is not among the objects is none through which the
// policy takes effect, unless it could not be read (Options.Unread).
// throughNone reports that no target reaches a Gateway. mode says how Gateways are named:
// gateway-object drops every sectionName (listener-parents too, and names
// a Gateway target's ListenerSets: listenerSetAncestors), gateway-parentrefs that of a
// listener target.
func (c *computation) gatewayAncestors(k *policy.Kind, in []Ancestor, bads []map[topology.Ref]string, byGateway []func(topology.Ref) []Condition, mode policy.AncestorMode) (out []Ancestor, throughNone bool) {
	objects := mode.Objects()
	index := map[topology.Ref]int{}
	throughNone = len(in) > 0
	for i, an := range in {
		gws := c.existingGateways(c.servedGatewaysAbove(k, an.Ref))
		if len(k.AncestorServiceGatewaysBy) > 0 {
			gws = c.serviceGateways(k, an.Ref, gws)
		}
		if mode == policy.AncestorGatewayParentRefs && an.Ref.IsListener() {
			// A listener target: its Gateway (ListenerSet) as an object.
			gws = []topology.Ref{an.Ref.Object()}
		}
		// The policies sending traffic to the target themselves are
		// ancestors too (a copy: gws may be the routes' parentRefs).
		if users := c.policiesUsing(an.Ref); len(users) > 0 {
			gws = append(slices.Clip(gws), c.userAncestors(users)...)
		}
		if objects {
			// Named as objects: a listener's or parentRef's section goes
			// (in a copy: gws may be the routes' parentRefs themselves).
			objs := make([]topology.Ref, 0, len(gws))
			for _, gw := range gws {
				if o := gw.Object(); !slices.Contains(objs, o) {
					objs = append(objs, o)
				}
			}
			if mode == policy.AncestorListenerParents && len(objs) > 0 && an.Ref.GroupKind() == topology.KindGateway && !an.Ref.IsSection() {
				objs = append(objs, c.listenerSetAncestors(k, an.Ref)...)
			}
			gws = objs
		}
		if len(gws) == 0 {
			if len(an.Conditions) > 1 && an.Conditions[0].Status == "True" && an.Conditions[1].Type == CondProgrammed && an.Conditions[1].Status == "True" {
				an.Conditions = slices.Clone(an.Conditions)
				an.Conditions[1] = c.throughNoGateway(k, []topology.Ref{an.Ref})
			}
			out = append(out, an)
			continue
		}
		throughNone = false
		for _, gw := range gws {
			e := Ancestor{Ref: gw, Conditions: an.Conditions}
			if i < len(byGateway) && byGateway[i] != nil {
				if conds := byGateway[i](gw); conds != nil {
					e.Conditions = conds
				}
			}
			if i < len(bads) {
				if msg := c.badThrough(bads[i], gw, objects); msg != "" {
					e.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonInvalid, Message: msg}}
				}
			}
			add := func(e Ancestor) {
				if i, ok := index[e.Ref]; ok {
					if out[i].Conditions[0].Status != "True" && e.Conditions[0].Status == "True" {
						out[i] = e
					}
					return
				}
				index[e.Ref] = len(out)
				out = append(out, e)
			}
			add(e)
			if i < len(bads) && !gw.IsSection() && !objects {
				// The listeners through which its merge fails, each an
				// ancestor of its own.
				for _, l := range badListeners(bads[i], gw) {
					add(Ancestor{Ref: l, Conditions: []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonInvalid, Message: bads[i][l]}}})
				}
			}
		}
	}
	return out, throughNone
}

// existingGateways is gws without the Gateways and ListenerSets that are
// not among the objects (a parentRef naming one that does not exist),
// keeping those that could not be read (Options.Unread). It returns gws
// itself when it drops none.
func (c *computation) existingGateways(gws []topology.Ref) []topology.Ref {
	exists := func(gw topology.Ref) bool {
		if _, ok := c.graph.Lookup(gw.Object()); ok {
			return true
		}
		return c.opts.Unread != nil && c.opts.Unread(gw.Object())
	}
	if !slices.ContainsFunc(gws, func(gw topology.Ref) bool { return !exists(gw) }) {
		return gws
	}
	out := make([]topology.Ref, 0, len(gws))
	for _, gw := range gws {
		if exists(gw) {
			out = append(out, gw)
		}
	}
	return out
}

// noGatewayTakesLead starts the message of throughNoGateway's condition.
const noGatewayTakesLead = "Policy is not programmed: no Gateway takes it"

// throughNoGateway is the Programmed condition of an accepted policy of
// kind k (ancestors named after Gateways) on targets no Gateway reaches:
// no implementation programs it (Envoy Gateway and NGINX Gateway Fabric
// write no status for it), so it is not programmed, and says why.
func (c *computation) throughNoGateway(k *policy.Kind, targets []topology.Ref) Condition {
	var whys []string
	for _, t := range targets {
		if w := c.whyNoGateway(k, t); w != "" && !slices.Contains(whys, w) {
			whys = append(whys, w)
		}
	}
	msg := noGatewayTakesLead
	if len(whys) > 0 {
		msg += " (" + strings.Join(whys, "; ") + ")"
	}
	return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonUnknown, Message: msg}
}

// whyNoGateway says why target ref reaches no Gateway of kind k's
// implementation: a route names none, or only Gateways not among the
// objects or of other implementations; no route sends to a backend.
func (c *computation) whyNoGateway(k *policy.Kind, ref topology.Ref) string {
	if _, ok := c.graph.Lookup(ref); !ok {
		return ""
	}
	gk := ref.GroupKind()
	if slices.Contains(topology.RouteKinds, gk) {
		route := ref.Object()
		parents := c.routeGateways(route)
		if len(parents) == 0 {
			return route.Short() + " names no parent Gateway"
		}
		var missing []string
		for _, p := range parents {
			if _, ok := c.graph.Lookup(p.Object()); !ok {
				missing = append(missing, p.Short())
			}
		}
		if len(missing) == len(parents) {
			return fmt.Sprintf("%s names %s, not among the objects", route.Short(), namedAtMost(missing))
		}
		return fmt.Sprintf("the Gateways %s names are not of the implementation of %s", route.Short(), k.GroupKind)
	}
	if topology.HoldsListeners(gk) {
		return ""
	}
	if len(c.gatewaysAbove(ref)) == 0 {
		if ref.IsSection() {
			return fmt.Sprintf("no route attached to a Gateway sends to %s port %s", ref.Object().Short(), ref.SectionName)
		}
		return fmt.Sprintf("no route attached to a Gateway sends to %s", ref.Short())
	}
	return fmt.Sprintf("the Gateways above %s are not of the implementation of %s", ref.Short(), k.GroupKind)
}

// serviceGateways names, of the Gateways gws above Service target ref
// (servedGatewaysAbove), those of the implementations that name a
// backend policy's ancestors so (policy.Kind.AncestorServiceGatewaysBy)
// as objects (a ListenerSet's as its Gateway), and, when one of them
// uses the target (for a port, a named one: NGINX Gateway Fabric matches
// a port policy by the port's name), adds each such Gateway above the
// Service: NGF lists every Gateway whose routes use the Service, whatever
// the port, for a policy one of its routes selects, and writes nothing
// for a policy none selects (attache then keeps the entries as they are).
// The others are kept as they are; targets other than Services, gws
// unchanged.
func (c *computation) serviceGateways(k *policy.Kind, ref topology.Ref, gws []topology.Ref) []topology.Ref {
	if ref.GroupKind() != topology.KindService {
		return gws
	}
	// named is gw as its implementation names it, and whether it is one
	// of those.
	named := func(gw topology.Ref) (topology.Ref, bool) {
		o := c.parentGateway(gw)
		if f, ok := c.gateways[o]; ok && f.classKnown && k.ServiceGatewaysAt(f.controller) {
			return o, true
		}
		return gw, false
	}
	used := false
	for _, gw := range gws {
		if _, ok := named(gw); ok {
			used = true
		}
	}
	if !used || (ref.IsSection() && unnamedPort(ref.SectionName)) {
		return gws
	}
	out := make([]topology.Ref, 0, len(gws))
	add := func(gw topology.Ref) {
		if !slices.Contains(out, gw) {
			out = append(out, gw)
		}
	}
	for _, gw := range gws {
		n, _ := named(gw)
		add(n)
	}
	if ref.IsSection() {
		for _, gw := range c.servedGatewaysAbove(k, ref.Object()) {
			if n, ok := named(gw); ok {
				add(n)
			}
		}
	}
	return out
}

// userAncestors are the ancestors that the policies users, sending
// traffic to a backend themselves, give the policies of that backend:
// each user itself (Envoy Gateway), or, for a kind whose backendRefs name
// Gateways as those ancestors (policy.Kind.BackendRefAncestorGateways),
// the Gateways of its implementation above each target where it is
// attached, as objects, those refusing it for their data plane's
// parameters included; none when it is rejected or its references do not
// resolve (NGINX Gateway Fabric's payloadProcessorGateways, for valid
// policies, runs before it judges Gateways: InvalidForGateways is still
// empty then).
func (c *computation) userAncestors(users []topology.Ref) []topology.Ref {
	var out []topology.Ref
	for _, u := range users {
		ps := c.byRef[u]
		if ps == nil || !ps.p.Kind.BackendRefAncestorGateways {
			out = append(out, u)
			continue
		}
		if ps.rejectedBy != nil {
			continue
		}
		for _, a := range ps.atts {
			if (a.nowhere && a.notVia == nil) || a.broken != nil {
				continue
			}
			for _, gw := range c.servedGatewaysAbove(ps.p.Kind, a.ref.At) {
				gw = gw.Object()
				if topology.IsListenerSet(gw.GroupKind()) {
					gw = c.listenerSetGateway(gw)
				}
				if gw.GroupKind() != topology.KindGateway || slices.Contains(out, gw) {
					continue
				}
				out = append(out, gw)
			}
		}
	}
	return out
}

// listenerSetAncestors are the ListenerSets (and XListenerSets) of kind
// k's hierarchy that Gateway gw admits (below it in the graph) and that
// have listeners, in graph order: with gw, the parents of the listeners a
// policy of k on gw reaches (policy.AncestorListenerParents; kgateway names
// each listener's parent object).
func (c *computation) listenerSetAncestors(k *policy.Kind, gw topology.Ref) []topology.Ref {
	g := c.graph
	id, ok := g.Lookup(gw)
	if !ok {
		return nil
	}
	var out []topology.Ref
	for _, ch := range g.Node(id).Children {
		n := g.Node(ch)
		if gk := n.Ref.GroupKind(); !topology.IsListenerSet(gk) || n.Ref.IsSection() || !k.InHierarchy(gk) || len(g.Sections(ch)) == 0 {
			continue
		}
		if ok, _ := c.gatewayServed(k, n.Ref); ok {
			out = append(out, n.Ref)
		}
	}
	return out
}

// gatewaysAbove returns the ancestors named after Gateways for a target
// ref: a Gateway or a ListenerSet (or one of its listeners) is its own; a
// route (or rule) has its parentRefs as written; any other target (a
// Service) has the parentRefs of every route above it, and a section of
// one (a Service port) those of the routes whose rules use that port (a
// backendRef's port, see backendSections). This is what GEP-1897 asks of
// BackendTLSPolicy and what Envoy Gateway writes.
func (c *computation) gatewaysAbove(ref topology.Ref) []topology.Ref {
	gk := ref.GroupKind()
	if topology.HoldsListeners(gk) {
		return []topology.Ref{ref}
	}
	if slices.Contains(topology.RouteKinds, gk) {
		return c.routeGateways(ref.Object())
	}
	var queue []topology.NodeID
	if ref.IsSection() {
		// The rules using the section link to its object: keep those
		// whose backendRefs name the section's port.
		obj, ok := c.graph.Lookup(ref.Object())
		if !ok {
			return nil
		}
		for _, p := range c.graph.Node(obj).Parents {
			pr := c.graph.Node(p).Ref
			if !pr.IsSection() || !slices.Contains(topology.RouteKinds, pr.GroupKind()) ||
				c.backendSections.uses(pr, ref.Object(), ref.SectionName) {
				queue = append(queue, p)
			}
		}
	} else {
		start, ok := c.graph.Lookup(ref)
		if !ok {
			return nil
		}
		queue = []topology.NodeID{start}
	}
	seen := make(map[topology.NodeID]bool, len(queue))
	for _, n := range queue {
		seen[n] = true
	}
	var out []topology.Ref
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		node := c.graph.Node(n)
		if slices.Contains(topology.RouteKinds, node.Ref.GroupKind()) {
			for _, p := range c.routeGateways(node.Ref.Object()) {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
			continue
		}
		for _, p := range node.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// routeGateways are the parentRefs of route as written, but those naming
// routes (a delegated child's parent), followed by those of the routes
// delegating to it, breadth first (kgateway route delegation: the child
// takes its parents' Gateways), each once; every route is visited once,
// however many delegation paths lead to it.
func (c *computation) routeGateways(route topology.Ref) []topology.Ref {
	var out []topology.Ref
	queue := []topology.Ref{route}
	seen := map[topology.Ref]bool{route: true}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		for _, p := range c.parentRefs[r] {
			if !slices.Contains(topology.RouteKinds, p.GroupKind()) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		id, ok := c.graph.Lookup(r)
		if !ok {
			continue
		}
		for _, p := range c.graph.Node(id).Parents {
			pr := c.graph.Node(p).Ref
			if pr.IsSection() && slices.Contains(topology.RouteKinds, pr.GroupKind()) && !seen[pr.Object()] {
				seen[pr.Object()] = true
				queue = append(queue, pr.Object())
			}
		}
	}
	return out
}

// whyEstablished says why attachment w is established before a: named
// by a route filter, a higher weight (at one level), older, or the same
// age and first by namespace/name.
func whyEstablished(w, a *attachment) string {
	switch establishedBy(w, a) {
	case byFilter:
		return "a route rule's ExtensionRef filter names it, which ranks it first at the rule"
	case byWeight:
		return fmt.Sprintf("its %s is higher (%d, not %d)", w.pol.p.Kind.WeightAnnotation, w.pol.p.Weight, a.pol.p.Weight)
	case byAge:
		return "it is older"
	}
	return "same creationTimestamp, it comes first by namespace/name"
}

// What establishes one attachment before another (see sortSameLevel,
// establishedBefore, olderBefore).
const (
	byFilter = iota
	byWeight
	byAge
	byName
)

// establishedBy says what puts attachment w before a: at one level, a
// filter rank or a weight may; across levels only age and name do.
func establishedBy(w, a *attachment) int {
	sameLevel := w.node == a.node && w.nsName == a.nsName
	switch {
	case sameLevel && w.filter != a.filter:
		return byFilter
	case sameLevel && w.pol.p.Weight != a.pol.p.Weight:
		return byWeight
	case w.pol.p.Created.Before(a.pol.p.Created):
		return byAge
	}
	return byName
}

// levelWinner returns, for an Inherited kind whose same-level rule is
// oldest-wins, the established policy at a's level when it is another
// policy than a's: a is then rejected at that level in every context it
// has or will have. Nil otherwise.
func (c *computation) levelWinner(a *attachment) *attachment {
	if a == nil || a.pol.p.Kind.Class != policy.Inherited || a.pol.p.Kind.SameLevel != policy.SameLevelOldestWins {
		return nil
	}
	d := c.dps[a.pol.p.Kind]
	if d == nil {
		return nil
	}
	list := d.atNode[a.node]
	if a.nsName != "" {
		if i, ok := d.nsIndex[a.nsName]; ok {
			list = d.atNs[i]
		}
	}
	for _, w := range list {
		if !w.dead {
			if w.pol == a.pol || (a.pol.p.Kind.TiesNotRejected && tied(a, w)) {
				return nil
			}
			return w
		}
	}
	return nil
}

// tiedWinner returns, for a kind that does not reject ties
// (Kind.TiesNotRejected), the policy created in the same second as a's
// that holds at a's target in its place (the first by namespace/name);
// nil otherwise.
func (c *computation) tiedWinner(a *attachment) *attachment {
	if a == nil || !a.pol.p.Kind.TiesNotRejected {
		return nil
	}
	d := c.dps[a.pol.p.Kind]
	if d == nil {
		return nil
	}
	for _, w := range d.atNode[a.node] {
		if !w.dead {
			if tied(a, w) {
				return w
			}
			return nil
		}
	}
	return nil
}

// telemetryWinner returns, for a policy of composition istio-telemetry
// that applies to its namespace as a whole, the oldest such policy of its
// namespace at a's Gateway when it is another policy: istiod applies that
// one only. Nil otherwise.
func (c *computation) telemetryWinner(a *attachment) *attachment {
	if a == nil || a.pol.p.Kind.Composition != policy.CompositionIstioTelemetry || !namespaceWide(a.pol.p) {
		return nil
	}
	d := c.dps[a.pol.p.Kind]
	if d == nil {
		return nil
	}
	for _, w := range d.atNode[a.node] {
		if w.dead || !namespaceWide(w.pol.p) || w.pol.p.Ref.Namespace != a.pol.p.Ref.Namespace {
			continue
		}
		if w.pol == a.pol {
			return nil
		}
		return w
	}
	return nil
}

func shortName(r topology.Ref) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// limitAncestors keeps a policy's status within MaxAncestors entries: by
// its kind's policy.AncestorLimitMode, either all listed entries apply and
// the surplus is only left out of the list (capAncestors), or only the
// first MaxAncestors are listed, in the order its implementation adds
// them (targetRefs order, each target's Gateways as attache lists them),
// and a condition names the rest, since no entry can. Of those, the
// targets resolve skipped (ancestorsFull) are not applied either; the
// entries cut here (Gateways, attachments by filters or scopes) are left
// out of the status only.
func (c *computation) limitAncestors(ps *pstate, st *PolicyStatus) {
	if ps.p.Kind.AncestorLimit != policy.AncestorLimitSkip {
		c.capAncestors(st)
		return
	}
	over := slices.Clone(ps.overLimit)
	if len(st.Ancestors) > MaxAncestors {
		for _, an := range st.Ancestors[MaxAncestors:] {
			over = append(over, an.Ref)
		}
		st.Ancestors = st.Ancestors[:MaxAncestors]
	}
	if len(over) == 0 {
		return
	}
	names := make([]string, len(over))
	for i, r := range over {
		names[i] = r.Short()
	}
	st.Conditions = append(st.Conditions, Condition{Type: ConditionAncestorLimit, Status: "True", Reason: ReasonAncestorLimitReached,
		Message: fmt.Sprintf("Not applied at %s: status.ancestors holds at most %d entries, and its implementation applies the policy only at the ancestors listed there",
			strings.Join(names, ", "), MaxAncestors)})
}

// capAncestors keeps at most MaxAncestors entries, those that need
// attention first: not accepted, then beaten somewhere (Overridden or
// PartiallyProgrammed), then the rest; by ref within each. It says how many
// were left out.
func (c *computation) capAncestors(st *PolicyStatus) {
	if len(st.Ancestors) <= MaxAncestors {
		return
	}
	sort.SliceStable(st.Ancestors, func(i, j int) bool {
		ri, rj := ancestorRank(&st.Ancestors[i]), ancestorRank(&st.Ancestors[j])
		if ri != rj {
			return ri < rj
		}
		return st.Ancestors[i].Ref.Less(st.Ancestors[j].Ref)
	})
	st.AncestorsOmitted = len(st.Ancestors) - MaxAncestors
	st.Ancestors = st.Ancestors[:MaxAncestors]
	st.Conditions = append(st.Conditions, Condition{Type: ConditionTruncated, Status: "True", Reason: "TooManyAncestors",
		Message: fmt.Sprintf("%d ancestor entries were left out; at most %d are reported", st.AncestorsOmitted, MaxAncestors)})
}

// ancestorRank orders ancestors for capAncestors: 0 not accepted, 1
// accepted but beaten somewhere, 2 programmed in full.
func ancestorRank(a *Ancestor) int {
	rank := 2
	for _, cond := range a.Conditions {
		switch {
		case cond.Type == CondAccepted && cond.Status != "True":
			return 0
		case cond.Type == CondProgrammed && cond.Reason != ReasonProgrammed:
			rank = 1
		}
	}
	return rank
}

// conflictMessage names the policies that rejected attachment a (strategy
// none) and why each is the established one (decision 2): named by a
// route filter or of a higher weight (at a's level), older, or, created at
// the same time, first by {namespace}/{name}. Saying "older" of a tie broken by name would
// send the reader looking for a timestamp that does not differ.
func (c *computation) conflictMessage(a *attachment) string {
	type winner struct {
		kind, name, at string
		by             int
	}
	var winners []winner
	var count [4]int // per byFilter, byWeight, byAge, byName
	for w := range a.conflictedBy {
		by := byAge
		if id, ok := c.attByRef[w]; ok {
			by = establishedBy(c.atts[id], a)
		}
		count[by]++
		winners = append(winners, winner{w.Policy.Kind, shortName(w.Policy), w.At.Short(), by})
	}
	if len(winners) == 0 {
		return "Policy conflicts with an established policy (merge strategy none)"
	}
	weight := a.pol.p.Kind.WeightAnnotation
	reasons := 0
	for _, n := range count {
		if n > 0 {
			reasons++
		}
	}
	mixed := reasons > 1
	names := make([]string, len(winners))
	for i, w := range winners {
		why := ""
		if mixed { // say why for each
			why = [...]string{"; named by the rule's ExtensionRef filter", "; higher " + weight, "; older", "; same creationTimestamp, first by namespace/name"}[w.by]
		}
		names[i] = fmt.Sprintf("%s %s (on %s%s)", w.kind, w.name, w.at, why)
	}
	sort.Strings(names)
	why := "the established policy wins (the older; with the same creationTimestamp, the first by namespace/name)"
	if count[byWeight] > 0 {
		why = fmt.Sprintf("the established policy wins (the higher %s; at the same weight the older; then the first by namespace/name)", weight)
	}
	if count[byFilter] > 0 {
		why = "the established policy wins (at a rule, the one its ExtensionRef filter names; then the older; then the first by namespace/name)"
	}
	switch len(winners) {
	case count[byFilter]:
		why = "the established policy (named by the rule's ExtensionRef filter) wins"
	case count[byWeight]:
		why = fmt.Sprintf("the established policy (the higher %s) wins", weight)
	case count[byAge]:
		why = "the established (older) policy wins"
	case count[byName]:
		why = "the established policy wins: with the same creationTimestamp, it comes first by namespace/name"
	}
	return fmt.Sprintf("Conflicts with the established %s; with merge strategy none %s", strings.Join(names, ", "), why)
}

// programmed derives the Programmed condition of one attachment from its
// tallies (decision 7): Programmed when the policy loses nothing anywhere,
// Overridden when it contributes nothing anywhere, else
// PartiallyProgrammed.
func (c *computation) programmed(ps *pstate, a *attachment) Condition {
	cond := c.programmedFrom(ps.p.Kind, a.reach, len(a.affects) == 0, func() string { return c.cachedLossSummary(&a.lossMsg, []*attachment{a}) },
		func() string { return c.listenersLeftAlone(ps.p.Kind, a.ref.At) })
	cond = c.withUnreadyRefs(ps.p, a.reach, c.withWaiting(ps.p.Kind, a.reach, c.withUnready(ps.p.Kind, a.reach, cond, []*attachment{a}), []*attachment{a}))
	return c.withRequiredObjects(ps.p.Kind, c.withNoGateway(ps.p.Kind, a.reach, c.withReplacedBelow(cond, []*attachment{a}), []*attachment{a}))
}

// noGatewayLead starts the Programmed message of a policy of a kind
// reaching through Gateways only that is in no context (programmedFrom).
const noGatewayLead = "Policy is not programmed: it is in the path to no effective target through a Gateway"

// withNoGateway adds to cond, that Programmed condition, why the routes
// the attachments atts are on (or whose rules they are on) give no path:
// their parentRefs name no Gateway, or only Gateways (and ListenerSets)
// that are not among the objects, which it names.
func (c *computation) withNoGateway(k *policy.Kind, r Reach, cond Condition, atts []*attachment) Condition {
	if !k.ReachThroughGateway || r.Contexts > 0 || cond.Type != CondProgrammed || !strings.HasPrefix(cond.Message, noGatewayLead) {
		return cond
	}
	var whys []string
	seen := map[topology.Ref]bool{}
	for _, a := range atts {
		route := a.ref.At.Object()
		if !slices.Contains(topology.RouteKinds, route.GroupKind()) || seen[route] {
			continue
		}
		seen[route] = true
		parents := c.routeGateways(route)
		var missing []string
		for _, p := range parents {
			if _, ok := c.graph.Lookup(p); !ok {
				missing = append(missing, p.Short())
			}
		}
		switch {
		case len(parents) == 0:
			whys = append(whys, route.Short()+" names no parent Gateway")
		case len(missing) == len(parents):
			whys = append(whys, fmt.Sprintf("%s names %s, not among the objects", route.Short(), namedAtMost(missing)))
		}
	}
	if len(whys) > 0 {
		cond.Message += "; " + strings.Join(whys, "; ")
	}
	return cond
}

// listenersLeftAlone says why a policy of kind k on target at (a listener,
// or a Gateway or ListenerSet) has no effective target: the listeners
// there meet none of the kind's listener conditions
// (Kind.EffectiveListeners). "" for any other target.
func (c *computation) listenersLeftAlone(k *policy.Kind, at topology.Ref) string {
	if !topology.HoldsListeners(at.GroupKind()) {
		return ""
	}
	// A listener names what it lacks; a whole object, every condition.
	l, isListener := c.listenerPorts[at]
	var needs []string
	for _, cond := range k.EffectiveListeners {
		switch cond {
		case policy.ListenerHostname:
			if !isListener || l.hostname == "" {
				needs = append(needs, "a hostname")
			}
		case policy.ListenerTLSTerminate:
			if !isListener || !l.tlsTerminate {
				needs = append(needs, "TLS terminated with Secrets of its own namespace")
			}
		case policy.ListenerAttachedRoutes:
			if id, ok := c.graph.Lookup(at); !isListener || !ok || !c.hasAttachedRoutes(id) {
				needs = append(needs, "routes attached")
			}
		case policy.ListenerAddresses:
			if id, ok := c.graph.Lookup(at); !isListener || !ok || !c.hasAddresses(id) {
				needs = append(needs, "addresses in its Gateway's status")
			}
		}
	}
	if at.IsSection() {
		return fmt.Sprintf("listener %s is none its implementation acts on (it needs %s)", at.Short(), strings.Join(needs, " and "))
	}
	return fmt.Sprintf("no listener of %s is one its implementation acts on (they need %s)", at.Short(), strings.Join(needs, " and "))
}

// cachedLossSummary is lossSummary, kept in *cache until the losses change.
func (c *computation) cachedLossSummary(cache **string, atts []*attachment) string {
	if *cache == nil {
		s := c.lossSummary(atts)
		*cache = &s
	}
	return **cache
}

// programmedFrom derives Programmed from a reach of a policy of kind k;
// setsNone says the policy contributes no field in any of those contexts
// (decision 8: it affects nothing), and losses tells who beat the policy,
// for the message. leftAlone, when not nil, says why no listener of the
// target is an effective target of a kind with listener conditions
// (listenersLeftAlone), for a policy in no context; the with* wrappers
// then add to that message.
func (c *computation) programmedFrom(k *policy.Kind, r Reach, setsNone bool, losses, leftAlone func() string) Condition {
	cond := Condition{Type: CondProgrammed}
	why := ""
	if r.Contexts == 0 && leftAlone != nil && len(k.EffectiveListeners) > 0 {
		why = leftAlone()
	}
	switch {
	case r.Contexts == 0 && k.ReachThroughGateway:
		// Its implementation computes nothing for it, and says so.
		cond.Status, cond.Reason = "False", ReasonUnknown
		cond.Message = noGatewayLead
		if why != "" {
			cond.Message += "; " + why
		}
	case r.Contexts == 0 && why != "":
		cond.Status, cond.Reason, cond.Message = "True", ReasonProgrammed, "Policy is programmed; "+why
	case r.Contexts == 0:
		cond.Status, cond.Reason, cond.Message = "True", ReasonProgrammed, "Policy is programmed; no effective target is in its scope yet"
	case r.Full == r.Contexts && setsNone:
		// It lost nothing because it set nothing (an empty spec): "in
		// full" would suggest it has an effect, and it affects nothing.
		cond.Status, cond.Reason = "True", ReasonProgrammed
		cond.Message = "Policy is programmed but sets no field in " + contexts(r.Contexts) + ", so it affects nothing"
	case r.Full == r.Contexts:
		cond.Status, cond.Reason, cond.Message = "True", ReasonProgrammed, "Policy is programmed in full in "+contexts(r.Contexts)
	case r.None == r.Contexts:
		cond.Status, cond.Reason = "False", ReasonOverridden
		cond.Message = fmt.Sprintf("Policy is overridden in %s: %s", contexts(r.Contexts), losses())
	default:
		cond.Status, cond.Reason = "True", ReasonPartiallyProgrammed
		lead := "Policy is programmed %s of %d contexts: %s"
		if k.PartlyOverriddenNotProgrammed {
			// Its implementation reports any rule lost as an issue.
			cond.Status, cond.Reason = "False", ReasonUnknown
			lead = notProgrammedInPartLead + " (it would be programmed %s of %d contexts): %s"
		}
		var how []string
		for _, p := range []struct {
			n    int
			what string
		}{{r.Full, "in full in %d"}, {r.Partial, "in part in %d"}, {r.None, "not at all in %d"}} {
			if p.n > 0 {
				how = append(how, fmt.Sprintf(p.what, p.n))
			}
		}
		cond.Message = fmt.Sprintf(lead, strings.Join(how, ", "), r.Contexts, losses())
	}
	return cond
}

// notProgrammedInPartLead opens the message of Programmed=False, reason
// Unknown, for a policy overridden in part whose kind then calls it not
// programmed (NotProgrammedInPart reads it).
const notProgrammedInPartLead = "Policy is not programmed, as it is overridden in part"

// NotProgrammedInPart reports whether Programmed condition c is
// Programmed=False, reason Unknown, for a policy that is overridden in part
// (a kind whose partly overridden policies are not programmed,
// policy.Kind.PartlyOverriddenNotProgrammed): it would be programmed in
// part, as PartiallyProgrammed says of other kinds. Any other Unknown says
// the policy is programmed nowhere (yet).
func NotProgrammedInPart(c Condition) bool {
	return c.Type == CondProgrammed && c.Status == "False" && c.Reason == ReasonUnknown &&
		strings.HasPrefix(c.Message, notProgrammedInPartLead)
}

// contexts says "its only context" or "all N contexts".
func contexts(n int) string {
	if n == 1 {
		return "its only context"
	}
	return fmt.Sprintf("all %d contexts", n)
}

// maxWinnersNamed bounds how many winners a message names, so that a
// policy beaten in thousands of places still gets a readable message.
const maxWinnersNamed = 5

// wholeEmptySpec is what a message calls a loss at merge.SpecPath: the
// policy set no field and was replaced all the same.
const wholeEmptySpec = "its whole spec (it sets no field)"

// lossSummary names who beat the attachments, where, and on which fields:
// the first maxWinnersNamed winners, and how many more.
func (c *computation) lossSummary(atts []*attachment) string {
	var ids []merge.Src
	if len(atts) == 1 {
		ids = make([]merge.Src, 0, len(atts[0].lostTo))
		for id := range atts[0].lostTo {
			ids = append(ids, id)
		}
	} else {
		seen := map[merge.Src]bool{}
		for _, a := range atts {
			for id := range a.lostTo {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	// A policy high up may lose to thousands: select the ones named
	// rather than sort them all.
	less := func(x, y merge.Src) bool { return attLess(*c.atts[x].ref, *c.atts[y].ref) }
	var named []merge.Src
	for _, id := range ids {
		if len(named) == maxWinnersNamed && !less(id, named[len(named)-1]) {
			continue
		}
		i := sort.Search(len(named), func(i int) bool { return less(id, named[i]) })
		named = slices.Insert(named, i, id)
		if len(named) > maxWinnersNamed {
			named = named[:maxWinnersNamed]
		}
	}
	parts := make([]string, 0, len(named)+1)
	for _, id := range named {
		set := map[string]bool{}
		for _, a := range atts {
			for p := range a.lostTo[id] {
				set[p] = true
			}
		}
		paths := make([]string, 0, len(set))
		for p := range set {
			paths = append(paths, LostPathText(p))
		}
		sort.Strings(paths)
		w := c.atts[id].ref
		parts = append(parts, fmt.Sprintf("%s beaten by %s %s (on %s)", strings.Join(paths, ", "), w.Policy.Kind, shortName(w.Policy), w.At.Short()))
	}
	if more := len(ids) - len(named); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more policies", more))
	}
	return strings.Join(parts, "; ")
}

// toAncestorStatus renders an ancestor as Gateway API's PolicyAncestorStatus.
func toAncestorStatus(a Ancestor, controllerName string, generation int64, now time.Time) gwv1.PolicyAncestorStatus {
	ref := gwv1.ParentReference{Name: gwv1.ObjectName(a.Ref.Name)}
	g := gwv1.Group(a.Ref.Group)
	k := gwv1.Kind(a.Ref.Kind)
	ref.Group, ref.Kind = &g, &k
	if a.Ref.Namespace != "" {
		ns := gwv1.Namespace(a.Ref.Namespace)
		ref.Namespace = &ns
	}
	if a.Ref.SectionName != "" {
		s := gwv1.SectionName(a.Ref.SectionName)
		ref.SectionName = &s
	}
	out := gwv1.PolicyAncestorStatus{AncestorRef: ref, ControllerName: gwv1.GatewayController(controllerName)}
	for _, c := range a.Conditions {
		out.Conditions = append(out.Conditions, metav1.Condition{
			Type: c.Type, Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message,
			ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now),
		})
	}
	return out
}

// replacedBelow returns, for a kind overridden by presence, an accepted
// attachment of another policy of the kind on a level below a's target
// (a section of it, or what hangs below it in the kind's hierarchy) that
// replaces a there (it names no merge type), if any. Envoy Gateway reports
// a policy overridden for those scopes whether or not an effective target
// is below them yet; where one is, the contexts already say so. The first
// found depth first, in the graph's child order.
func (c *computation) replacedBelow(a *attachment) *attachment {
	k := a.pol.p.Kind
	d := c.dps[k]
	if !k.OverriddenByPresence || d == nil || a.nsName != "" {
		return nil
	}
	var found *attachment
	c.graph.Walk([]topology.NodeID{a.node}, topology.Children, func(n topology.NodeID, node *topology.Node) bool {
		if found != nil {
			return false
		}
		if n != a.node {
			if !k.InHierarchy(node.Ref.Object().GroupKind()) {
				return false
			}
			for _, o := range d.atNode[n] {
				if o.pol != a.pol && o.pol.p.MergeType == "" && o.pol.rejectedBy == nil {
					found = o
					return false
				}
			}
		}
		return true
	})
	return found
}

// withReplacedBelow turns a Programmed condition into PartiallyProgrammed
// when some attachment of the policy is replaced below its target where no
// effective target is yet (see replacedBelow).
func (c *computation) withReplacedBelow(cond Condition, atts []*attachment) Condition {
	if cond.Reason != ReasonProgrammed || len(atts) == 0 || !atts[0].pol.p.Kind.OverriddenByPresence {
		return cond
	}
	for _, a := range atts {
		if w := c.replacedBelow(a); w != nil {
			cond.Status, cond.Reason = "True", ReasonPartiallyProgrammed
			cond.Message = fmt.Sprintf("%s; the more specific %s %s on %s replaces it there", cond.Message,
				w.pol.p.Ref.Kind, shortName(w.pol.p.Ref), w.ref.At.Short())
			return cond
		}
	}
	return cond
}

// targetVerdict is a policy's verdict at one of its ancestors: accepted
// when reason is "".
type targetVerdict struct {
	ref         topology.Ref
	reason, msg string
	// foreign: refused as another implementation's (ancestorState).
	foreign bool
}

// istioWaypointSummary is the summary Accepted condition of a policy of a
// kind with Kind.SummaryIstioWaypoint: what istiod's WaypointAccepted
// condition says, flattened over the policy's targetRefs in order
// (istio/istio @ 86c9f01f pilot/pkg/model/service.go flattenConditions;
// the per-target verdicts of pilot/pkg/serviceregistry/ambient/policies.go
// WaypointPolicyStatusCollection): one targetRef, its verdict; several,
// bound when any is (True), Accepted when all are, PartiallyInvalid when
// some are not, Invalid when none is, and then the message
// "Invalid targetRefs: <Kind>.<group or core>:<namespace>/<name>, ...".
// A target is bound when the policy is accepted there and, for a Gateway,
// istiod takes it for a waypoint (status.addresses: its waypoint
// collection has no other Gateways; TargetNotFound otherwise).
func (c *computation) istioWaypointSummary(p *policy.Policy, verdicts []targetVerdict) Condition {
	type bound struct {
		ok          bool
		reason, msg string
	}
	var per []bound
	var unbound []string
	for _, t := range p.Targets {
		ns := t.Namespace
		if ns == "" {
			// istiod keys every target so, a GatewayClass's too.
			ns = p.Ref.Namespace
		}
		b := bound{reason: "unknown", msg: "not bound"}
		for _, v := range verdicts {
			if v.ref.Kind != t.Kind || v.ref.Name != t.Name || !sameGroup(v.ref.Group, t.Group) ||
				(v.ref.Namespace != ns && !topology.ClusterScoped(v.ref.GroupKind())) {
				continue
			}
			b = bound{ok: v.reason == "", reason: v.reason, msg: v.msg}
			if v.foreign {
				// istiod binds the Gateway (or the Service to its
				// waypoint) whatever its class: bound, as below, though
				// it configures no proxy there.
				b = bound{ok: true, reason: ReasonAccepted, msg: "Policy is accepted for " + v.ref.Short() +
					" (bound, as istiod says; " + v.msg + ", so it applies nowhere there)"}
				if v.ref.GroupKind() == topology.KindGateway {
					if f, known := c.gateways[v.ref.Object()]; known && f.waypointUnready != "" {
						b = bound{reason: ReasonTargetNotFound, msg: fmt.Sprintf("%s is no waypoint istiod binds to: %s", v.ref.Short(), f.waypointUnready)}
					}
				}
				break
			}
			if b.ok {
				b.reason, b.msg = ReasonAccepted, "Policy is accepted for "+v.ref.Short()
				if v.ref.GroupKind() == topology.KindGateway {
					if f, known := c.gateways[v.ref.Object()]; known && f.waypointUnready != "" {
						b = bound{reason: ReasonTargetNotFound, msg: fmt.Sprintf("%s is no waypoint istiod binds to: %s", v.ref.Short(), f.waypointUnready)}
					}
				}
			}
			break
		}
		per = append(per, b)
		if !b.ok {
			group := t.Group
			if group == "" {
				group = "core"
			}
			unbound = append(unbound, t.Kind+"."+group+":"+ns+"/"+t.Name)
		}
	}
	if len(per) == 1 {
		status := "False"
		if per[0].ok {
			status = "True"
		}
		return Condition{Type: CondAccepted, Status: status, Reason: per[0].reason, Message: per[0].msg}
	}
	cond := Condition{Type: CondAccepted, Status: "False", Reason: ReasonInvalid}
	if len(unbound) < len(per) {
		cond.Status, cond.Reason = "True", ReasonAccepted
		if len(unbound) > 0 {
			cond.Reason = ReasonPartiallyInvalid
		}
	}
	if len(unbound) > 0 {
		cond.Message = "Invalid targetRefs: " + strings.Join(unbound, ", ")
	}
	return cond
}

// sameGroup reports whether two API groups are the same, "" and "core"
// both naming the core group.
func sameGroup(a, b string) bool {
	norm := func(g string) string {
		if g == "core" {
			return ""
		}
		return g
	}
	return norm(a) == norm(b)
}
