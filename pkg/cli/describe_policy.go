package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// policyDescription is the -o json|yaml document of `attache describe
// policy KIND/NAME`: the policy's spec, status and reach.
type policyDescription struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Policy     report.Ref `json:"policy"`
	PolicyKind string     `json:"policyKind"`
	// Class is Direct or Inherited.
	Class   string           `json:"class"`
	Targets []declaredTarget `json:"targets"`
	// Untargeted says what a policy with no targets selects instead, for
	// kinds with an untargeted scope (Istio's).
	Untargeted string `json:"untargeted,omitempty"`
	Stanza     string `json:"stanza,omitempty"`
	// Strategy is the resolved merge strategy (omitted for an invalid policy).
	Strategy string `json:"strategy,omitempty"`
	// Weight is the policy's weight, for kinds with a weight annotation
	// (WeightAnnotation names it): at one level, a higher weight goes
	// before a lower one, whatever their ages. Omitted for an invalid
	// policy (its weight may be what is invalid).
	Weight           *int32 `json:"weight,omitempty"`
	WeightAnnotation string `json:"weightAnnotation,omitempty"`
	// Spec is the spec proper: no targetRefs, stanza or strategy.
	Spec             map[string]any     `json:"spec"`
	Conditions       []engine.Condition `json:"conditions"`
	Ancestors        []report.Ancestor  `json:"ancestors"`
	AncestorsOmitted int                `json:"ancestorsOmitted,omitempty"`
	Reach            policyReach        `json:"reach"`
	// conflictWhy says, for the text, why a Conflicted context is so.
	conflictWhy string
	// Partial lists what could not be read from the cluster (forbidden
	// lists, ...): when set, the reach and status may lack contexts.
	Partial []string `json:"partial,omitempty"`
}

// declaredTarget is an entry of the policy's targetRefs: by name (with the
// namespace it resolves to) or by label selector.
type declaredTarget struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	SectionName string `json:"sectionName,omitempty"`
	Selector    string `json:"selector,omitempty"`
}

// policyReach is what a policy affects: Chihiro's "how many things does
// this policy affect?".
type policyReach struct {
	// Summary is the totals line of the text output.
	Summary string `json:"summary"`
	// Affects are the effective targets it sets at least one field of.
	Affects []report.Ref `json:"affects"`
	// Namespaces are the namespaces of Affects.
	Namespaces []string `json:"namespaces"`
	// Totals count its contexts (target and distinct stack) by outcome.
	Totals engine.Reach `json:"totals"`
	// Contexts are its contexts, in the order of the effective report.
	Contexts []reachContext `json:"contexts"`
	// TargetsNotFound are declared targets that do not exist.
	TargetsNotFound []report.Ref `json:"targetsNotFound"`
	// TargetsNotRead are declared targets of kinds that could not be read
	// (a ClusterRole without them): not judged, so neither found nor not.
	TargetsNotRead []report.Ref `json:"targetsNotRead,omitempty"`
	// NotAccepted are the other ancestors where it is not accepted (e.g.
	// Invalid: a disallowed kind, a missing ReferenceGrant).
	NotAccepted []report.Ancestor `json:"notAccepted,omitempty"`
}

// reachContext is a context of the policy: its outcome there and losses.
type reachContext struct {
	Target report.Ref     `json:"target"`
	Paths  [][]report.Ref `json:"paths"`
	// AttachedAt are the levels where the policy attaches in this context.
	AttachedAt []report.Ref `json:"attachedAt"`
	// Outcome is full, partial or none.
	Outcome    string          `json:"outcome"`
	Conflicted bool            `json:"conflicted,omitempty"`
	Lost       []describedLoss `json:"lost,omitempty"`
}

// untargetedText says what a policy naming no targets applies to instead,
// for kinds where that is not an error: Istio's workloads, or the route
// rules whose ExtensionRef filters name it. "" otherwise.
func untargetedText(p *policy.Policy) string {
	switch {
	case p.Untargeted != nil:
		return p.UntargetedText()
	case p.Kind.FilterAttachment && len(p.Targets) == 0 && !p.Invalid():
		return "the route rules whose ExtensionRef filters name it"
	}
	return ""
}

// policy describes ps.
func (d *describer) policy(ps *engine.PolicyStatus) *policyDescription {
	p := ps.Policy
	out := &policyDescription{APIVersion: describeAPIVersion, Kind: "PolicyDescription",
		Policy: p.Ref, PolicyKind: p.Kind.String(), Class: string(p.Kind.Class), Targets: []declaredTarget{},
		Stanza: p.Stanza, Strategy: string(p.Strategy), Spec: p.Spec, Conditions: ps.Conditions,
		Ancestors: []report.Ancestor{}, AncestorsOmitted: ps.AncestorsOmitted, Partial: d.partial}
	if out.Spec == nil {
		out.Spec = map[string]any{}
	}
	if out.Conditions == nil {
		out.Conditions = []engine.Condition{}
	}
	out.Untargeted = untargetedText(p)
	out.conflictWhy = "merge strategy none: the established policy wins"
	if p.Kind.Composition == policy.CompositionIstioTelemetry {
		out.conflictWhy = "istiod applies only the oldest Telemetry without selector or targetRefs of a namespace"
	}
	if p.Kind.WeightAnnotation != "" && !p.Invalid() {
		w := p.Weight
		out.Weight, out.WeightAnnotation = &w, p.Kind.WeightAnnotation
	}
	for _, t := range p.Targets {
		dt := declaredTarget{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, SectionName: t.SectionName}
		// Namespace and GatewayClass targets have no namespace, whatever
		// the targetRef says (as the engine reads them).
		if gk := t.GroupKind(); topology.ClusterScoped(gk) {
			dt.Namespace = ""
		}
		if t.Selector != nil {
			dt.Selector = t.Selector.String()
		}
		out.Targets = append(out.Targets, dt)
	}
	for _, a := range ps.Ancestors {
		out.Ancestors = append(out.Ancestors, report.Ancestor{AncestorRef: a.Ref, ControllerName: d.controllerName, Conditions: a.Conditions})
	}
	out.Reach = d.reach(ps)
	return out
}

func (d *describer) reach(ps *engine.PolicyStatus) policyReach {
	ref := ps.Policy.Ref
	r := policyReach{Affects: ps.Affects, Namespaces: []string{}, Totals: ps.Reach,
		Contexts: []reachContext{}, TargetsNotFound: []report.Ref{}}
	if r.Affects == nil {
		r.Affects = []report.Ref{}
	}
	for _, t := range r.Affects {
		if t.Namespace != "" && !slices.Contains(r.Namespaces, t.Namespace) {
			r.Namespaces = append(r.Namespaces, t.Namespace)
		}
	}
	slices.Sort(r.Namespaces)
	for _, e := range d.res.Effective {
		if e.Kind != ps.Policy.Kind {
			continue
		}
		for _, c := range e.Contexts {
			rc := reachContext{Target: e.Target, AttachedAt: []report.Ref{}}
			var lost bool
			for _, s := range c.Stack {
				if s.Policy != ref {
					continue
				}
				if !slices.Contains(rc.AttachedAt, s.At) {
					rc.AttachedAt = append(rc.AttachedAt, s.At)
				}
				rc.Conflicted = rc.Conflicted || s.Conflicted
				lost = lost || len(s.Lost) > 0
				rc.Lost = append(rc.Lost, d.losses(ref, s.Lost)...)
			}
			if len(rc.AttachedAt) == 0 {
				continue
			}
			contrib := slices.ContainsFunc(c.Fields, func(f engine.FieldSource) bool { return f.Policy == ref })
			// The combination the engine uses for Reach: one outcome per
			// context, even for a policy attached at two levels of it.
			switch {
			case rc.Conflicted || (lost && !contrib):
				rc.Outcome = engine.OutcomeNone
			case lost:
				rc.Outcome = engine.OutcomePartial
			default:
				rc.Outcome = engine.OutcomeFull
			}
			c.Paths(func(p []topology.Ref) bool {
				rc.Paths = append(rc.Paths, append([]report.Ref(nil), p...))
				return true
			})
			r.Contexts = append(r.Contexts, rc)
		}
	}
	for _, a := range ps.Ancestors {
		c := describeCondition(a.Conditions, engine.CondAccepted)
		switch {
		case c == nil || c.Status == "True":
		case c.Reason == engine.ReasonTargetNotFound:
			r.TargetsNotFound = append(r.TargetsNotFound, a.Ref)
		case c.Reason != engine.ReasonConflicted: // conflicts show in the contexts
			r.NotAccepted = append(r.NotAccepted, report.Ancestor{AncestorRef: a.Ref, ControllerName: d.controllerName, Conditions: a.Conditions})
		}
	}
	// Targets its implementation writes no entry for (missing-targets:
	// problem) are not found all the same.
	r.TargetsNotFound = append(r.TargetsNotFound, ps.UnlistedTargets...)
	r.TargetsNotRead = append(r.TargetsNotRead, ps.UnreadTargets...)
	r.Summary = reachSummary(r)
	return r
}

// reachSummary is the totals line:
// `Affects 4 Services in 1 namespace; 4 contexts: 3 full, 1 partial, 0 none`.
func reachSummary(r policyReach) string {
	var kinds []string
	count := map[string]int{}
	for _, t := range r.Affects {
		k := describeKind(t.GroupKind())
		if t.IsSection() {
			// A section is counted as one (a Service port, a route rule, a
			// listener), not as one more object of its kind.
			k += " " + strings.TrimSuffix(policy.SectionNoun(t.GroupKind()), "s")
		}
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	s := "Affects nothing"
	if len(kinds) > 0 {
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = plural(count[k], k)
		}
		s = "Affects " + strings.Join(parts, " and ")
		if len(r.Namespaces) > 0 {
			s += " in " + plural(len(r.Namespaces), "namespace")
		}
	}
	t := r.Totals
	return fmt.Sprintf("%s; %s: %d full, %d partial, %d none", s, plural(t.Contexts, "context"), t.Full, t.Partial, t.None)
}

// printPolicy prints the text form of a policy description.
func (d *describer) printPolicy(w io.Writer, p *policyDescription) error {
	fmt.Fprintln(w, d.policyName(p.Policy))
	if d.partialLine != "" {
		fmt.Fprintln(w, d.partialLine)
	}
	fmt.Fprintln(w, p.Reach.Summary)

	targets := make([]string, len(p.Targets))
	for i, t := range p.Targets {
		gk := topology.GroupKind{Group: t.Group, Kind: t.Kind}
		if t.Selector != "" {
			targets[i] = describeKind(gk) + "[" + t.Selector + "]"
		} else {
			targets[i] = describeLevel(topology.Ref{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, SectionName: t.SectionName})
		}
	}
	fmt.Fprintf(w, "\nPolicy kind:  %s (%s)\n", p.PolicyKind, p.Class)
	if p.Untargeted != "" {
		targets = append(targets, "none declared: "+p.Untargeted)
	}
	fmt.Fprintf(w, "Targets:      %s\n", describeOrNone(strings.Join(targets, ", ")))
	fmt.Fprintf(w, "Stanza:       %s\n", stanzaWord(p.Stanza))
	fmt.Fprintf(w, "Strategy:     %s\n", describeOrNone(p.Strategy))
	if p.Weight != nil {
		fmt.Fprintf(w, "Weight:       %d (%s; at one level, the higher goes first)\n", *p.Weight, p.WeightAnnotation)
	}
	fmt.Fprintln(w, "Spec:")
	leaves := specLeaves(p.Spec)
	if len(leaves) == 0 {
		fmt.Fprintln(w, "  (empty)")
	}
	for _, l := range leaves {
		fmt.Fprintf(w, "  %s: %s\n", l.Path, compactJSON(l.Value))
	}

	fmt.Fprintln(w, "\nStatus:")
	for _, c := range p.Conditions {
		fmt.Fprintf(w, "  %s\n", conditionLine(c))
	}
	fmt.Fprintln(w, "Ancestors:")
	if len(p.Ancestors) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, a := range p.Ancestors {
		fmt.Fprintf(w, "  %s\n", describeLevel(a.AncestorRef))
		for _, c := range a.Conditions {
			fmt.Fprintf(w, "    %s\n", conditionLine(c))
		}
	}
	if p.AncestorsOmitted > 0 {
		fmt.Fprintf(w, "  ... and %d more not reported\n", p.AncestorsOmitted)
	}

	fmt.Fprintln(w, "\nReach:")
	manyTargets := len(p.Targets) > 1
	fullTitle := "Wins in full"
	if len(p.Reach.Affects) == 0 && p.Reach.Totals.Full > 0 {
		// It contributes no field anywhere yet lost nothing somewhere (an
		// empty spec): there it had nothing to lose.
		fullTitle = "Sets no field"
	}
	for _, o := range []struct{ outcome, title string }{
		{engine.OutcomeFull, fullTitle},
		{engine.OutcomePartial, "Wins in part"},
		{engine.OutcomeNone, "Beaten entirely"},
	} {
		var cs []reachContext
		for _, c := range p.Reach.Contexts {
			if c.Outcome == o.outcome {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			fmt.Fprintf(w, "  %s: in no context\n", o.title)
			continue
		}
		fmt.Fprintf(w, "  %s in %s:\n", o.title, plural(len(cs), "context"))
		d.printReachGroups(w, cs, manyTargets, p.conflictWhy)
	}
	var missing []string
	for _, t := range p.Reach.TargetsNotFound {
		missing = append(missing, describeLevel(t))
	}
	fmt.Fprintf(w, "  Targets not found: %s\n", describeOrNoneWord(strings.Join(missing, ", ")))
	if len(p.Reach.TargetsNotRead) > 0 {
		var unread []string
		for _, t := range p.Reach.TargetsNotRead {
			unread = append(unread, describeLevel(t))
		}
		fmt.Fprintf(w, "  Targets not read (not judged): %s\n", strings.Join(unread, ", "))
	}
	if len(p.Reach.NotAccepted) > 0 {
		fmt.Fprintln(w, "  Not accepted at:")
		for _, a := range p.Reach.NotAccepted {
			if c := describeCondition(a.Conditions, engine.CondAccepted); c != nil {
				fmt.Fprintf(w, "    %s: %s\n", describeLevel(a.AncestorRef), conditionLine(*c))
			}
		}
	}
	return nil
}

// printReachGroups prints contexts grouped by what the policy lost there
// (and where it attaches, when it has several targets): the paths, then the
// losses once.
func (d *describer) printReachGroups(w io.Writer, cs []reachContext, showLevels bool, conflictWhy string) {
	type group struct {
		first reachContext
		paths [][]topology.Ref
	}
	var groups []*group
	index := map[string]*group{}
	for _, c := range cs {
		sig := struct {
			A []report.Ref
			C bool
			L []describedLoss
		}{C: c.Conflicted, L: c.Lost}
		if showLevels {
			sig.A = c.AttachedAt
		}
		key, _ := json.Marshal(sig)
		g := index[string(key)]
		if g == nil {
			g = &group{first: c}
			index[string(key)] = g
			groups = append(groups, g)
		}
		g.paths = append(g.paths, c.Paths...)
	}
	for _, g := range groups {
		printPaths(w, "    ", g.paths)
		if showLevels {
			levels := make([]string, len(g.first.AttachedAt))
			for i, a := range g.first.AttachedAt {
				levels[i] = describeLevel(a)
			}
			fmt.Fprintf(w, "      attached at %s\n", strings.Join(levels, ", "))
		}
		if g.first.Conflicted {
			fmt.Fprintf(w, "      Conflicted (%s)\n", conflictWhy)
		}
		d.printLosses(w, "      ", g.first.Lost)
	}
}
