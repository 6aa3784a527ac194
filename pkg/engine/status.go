package engine

import (
	"fmt"
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

// finishStatus derives every policy's conditions and ancestors, and the
// Affected lists, from the tallies of the contexts.
func (c *computation) finishStatus() {
	type akey struct {
		kind *policy.Kind
		node topology.NodeID
	}
	affected := map[akey]map[topology.Ref]bool{}
	for _, ps := range c.policies {
		st := &PolicyStatus{Policy: ps.p}
		c.result.Policies = append(c.result.Policies, st)
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
			c.capAncestors(st)
			continue
		}
		var accepted []*attachment
		var firstBad *ancestorState
		var summary *Condition
		var notAccepted []string
		for i := range ps.ancestors {
			an := &ps.ancestors[i]
			anc := Ancestor{Ref: an.ref}
			if an.att != nil && an.att.reach.Contexts > 0 && an.att.conflicted == an.att.reach.Contexts {
				an.reason, an.msg = ReasonConflicted, c.conflictMessage(an.att)
			}
			if an.reason != "" {
				anc.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: an.reason, Message: an.msg}}
				if firstBad == nil {
					firstBad = an
				}
				notAccepted = append(notAccepted, an.msg)
			} else {
				accepted = append(accepted, an.att)
				prog := c.programmed([]*attachment{an.att})
				if len(ps.atts) == 1 {
					summary = &prog // one target: the summary says the same
				}
				anc.Conditions = []Condition{
					{Type: CondAccepted, Status: "True", Reason: ReasonAccepted, Message: "Policy is accepted for this target"},
					prog,
				}
			}
			st.Ancestors = append(st.Ancestors, anc)
		}
		for _, m := range ps.noTarget {
			notAccepted = append(notAccepted, m)
		}
		switch {
		case len(accepted) > 0:
			msg := "Policy is accepted"
			if len(notAccepted) > 0 {
				msg = fmt.Sprintf("Policy is accepted for %d of %d targets; not accepted: %s", len(accepted), len(accepted)+len(notAccepted), strings.Join(notAccepted, "; "))
			}
			// Programmed summarizes every context the policy reaches, also
			// those of targets where it was rejected (decision 7: it then
			// "loses some contexts").
			if summary == nil {
				p := c.programmedFrom(ps.reach, ps.atts)
				summary = &p
			}
			st.Conditions = []Condition{{Type: CondAccepted, Status: "True", Reason: ReasonAccepted, Message: msg}, *summary}
		case firstBad != nil:
			st.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: firstBad.reason, Message: strings.Join(notAccepted, "; ")}}
		default:
			msg := "Policy has no target"
			if len(ps.noTarget) > 0 {
				msg = strings.Join(ps.noTarget, "; ")
			}
			st.Conditions = []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonTargetNotFound, Message: msg}}
		}
		seen := map[topology.NodeID]bool{}
		st.Reach = ps.reach
		for _, a := range ps.atts {
			for _, n := range a.affects {
				k := akey{ps.p.Kind, n}
				if affected[k] == nil {
					affected[k] = map[topology.Ref]bool{}
				}
				affected[k][ps.p.Ref] = true
				if !seen[n] {
					seen[n] = true
					st.Affects = append(st.Affects, c.graph.Node(n).Ref)
				}
			}
		}
		sort.Slice(st.Affects, func(i, j int) bool { return st.Affects[i].Less(st.Affects[j]) })
		c.capAncestors(st)
	}
	sort.SliceStable(c.result.Policies, func(i, j int) bool {
		a, b := c.result.Policies[i].Policy, c.result.Policies[j].Policy
		if a.Kind != b.Kind {
			return a.Kind.String() < b.Kind.String()
		}
		return a.Ref.Less(b.Ref)
	})
	for k, pols := range affected {
		af := &Affected{Kind: k.kind, Target: c.graph.Node(k.node).Ref}
		for p := range pols {
			af.Policies = append(af.Policies, p)
		}
		sort.Slice(af.Policies, func(i, j int) bool { return af.Policies[i].Less(af.Policies[j]) })
		names := make([]string, len(af.Policies))
		for i, p := range af.Policies {
			names[i] = shortName(p)
		}
		af.Condition = Condition{
			Type:               c.opts.ConditionDomain + "/" + k.kind.GroupKind.Kind + "Affected",
			Status:             "True",
			Reason:             ReasonAffected,
			Message:            fmt.Sprintf("Affected by %s %s", k.kind.GroupKind.Kind, strings.Join(names, ", ")),
			ObservedGeneration: c.graph.Node(k.node).Generation,
		}
		c.result.Affected = append(c.result.Affected, af)
	}
	sort.Slice(c.result.Affected, func(i, j int) bool {
		a, b := c.result.Affected[i], c.result.Affected[j]
		if a.Kind != b.Kind {
			return a.Kind.String() < b.Kind.String()
		}
		return a.Target.Less(b.Target)
	})
	sort.SliceStable(c.result.Effective, func(i, j int) bool {
		a, b := c.result.Effective[i], c.result.Effective[j]
		if a.Kind != b.Kind {
			return a.Kind.String() < b.Kind.String()
		}
		return a.Target.Less(b.Target)
	})
}

func shortName(r topology.Ref) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// capAncestors keeps at most MaxAncestors entries: not-accepted first, then
// by ref, and says how many were left out.
func (c *computation) capAncestors(st *PolicyStatus) {
	if len(st.Ancestors) <= MaxAncestors {
		return
	}
	sort.SliceStable(st.Ancestors, func(i, j int) bool {
		ai, aj := st.Ancestors[i].Conditions[0].Status == "True", st.Ancestors[j].Conditions[0].Status == "True"
		if ai != aj {
			return !ai
		}
		return st.Ancestors[i].Ref.Less(st.Ancestors[j].Ref)
	})
	st.AncestorsOmitted = len(st.Ancestors) - MaxAncestors
	st.Ancestors = st.Ancestors[:MaxAncestors]
	st.Conditions = append(st.Conditions, Condition{Type: ConditionTruncated, Status: "True", Reason: "TooManyAncestors",
		Message: fmt.Sprintf("%d ancestor entries were left out; at most %d are reported", st.AncestorsOmitted, MaxAncestors)})
}

func (c *computation) conflictMessage(a *attachment) string {
	var winners []string
	for w := range a.conflictedBy {
		winners = append(winners, fmt.Sprintf("%s %s (on %s)", w.Policy.Kind, shortName(w.Policy), w.At.Short()))
	}
	sort.Strings(winners)
	if len(winners) == 0 {
		return "Policy conflicts with an established policy (merge strategy none)"
	}
	return fmt.Sprintf("Conflicts with the established %s; with merge strategy none the established (older) policy wins", strings.Join(winners, ", "))
}

// programmed derives the Programmed condition from attachments' tallies
// (decision 7): Programmed when the policy loses nothing anywhere,
// Overridden when it contributes nothing anywhere, else PartiallyProgrammed.
func (c *computation) programmed(atts []*attachment) Condition {
	var r Reach
	for _, a := range atts {
		r.Contexts += a.reach.Contexts
		r.Full += a.reach.Full
		r.Partial += a.reach.Partial
		r.None += a.reach.None
	}
	return c.programmedFrom(r, atts)
}

// programmedFrom derives Programmed from a reach and the attachments'
// losses (for the message).
func (c *computation) programmedFrom(r Reach, atts []*attachment) Condition {
	cond := Condition{Type: CondProgrammed}
	switch {
	case r.Contexts == 0:
		cond.Status, cond.Reason, cond.Message = "True", ReasonProgrammed, "Policy is programmed; no effective target is in its scope yet"
	case r.Full == r.Contexts:
		cond.Status, cond.Reason, cond.Message = "True", ReasonProgrammed, "Policy is programmed in full in "+contexts(r.Contexts)
	case r.None == r.Contexts:
		cond.Status, cond.Reason = "False", ReasonOverridden
		cond.Message = fmt.Sprintf("Policy is overridden in %s: %s", contexts(r.Contexts), c.lossSummary(atts))
	default:
		cond.Status, cond.Reason = "True", ReasonPartiallyProgrammed
		var how []string
		for _, p := range []struct {
			n    int
			what string
		}{{r.Full, "in full in %d"}, {r.Partial, "in part in %d"}, {r.None, "not at all in %d"}} {
			if p.n > 0 {
				how = append(how, fmt.Sprintf(p.what, p.n))
			}
		}
		cond.Message = fmt.Sprintf("Policy is programmed %s of %d contexts: %s", strings.Join(how, ", "), r.Contexts, c.lossSummary(atts))
	}
	return cond
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

// lossSummary names who beat the attachments, where, and on which fields.
func (c *computation) lossSummary(atts []*attachment) string {
	lostTo := map[merge.Src]map[string]bool{}
	for _, a := range atts {
		for id, paths := range a.lostTo {
			if lostTo[id] == nil {
				lostTo[id] = map[string]bool{}
			}
			for p := range paths {
				lostTo[id][p] = true
			}
		}
	}
	ws := make([]*Attachment, 0, len(lostTo))
	for id := range lostTo {
		ws = append(ws, c.atts[id].ref)
	}
	sort.Slice(ws, func(i, j int) bool { return attLess(*ws[i], *ws[j]) })
	parts := make([]string, 0, min(len(ws), maxWinnersNamed)+1)
	for i, w := range ws {
		if i == maxWinnersNamed {
			parts = append(parts, fmt.Sprintf("and %d more policies", len(ws)-i))
			break
		}
		set := lostTo[c.attByRef[w]]
		paths := make([]string, 0, len(set))
		for p := range set {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		parts = append(parts, fmt.Sprintf("%s beaten by %s %s (on %s)", strings.Join(paths, ", "), w.Policy.Kind, shortName(w.Policy), w.At.Short()))
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
