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

// describeAPIVersion versions the -o json|yaml documents of describe; like
// the effective report, fields may be added but never renamed or removed.
const describeAPIVersion = report.APIVersion

// targetDescription is the -o json|yaml document of `attache describe
// TYPE/NAME`: THAT (affected), WHICH (policies) and WHAT (effective).
type targetDescription struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Object is the described object, or section.
	Object report.Ref `json:"object"`
	// Affected is true when at least one policy sets a field in a context
	// through Object.
	Affected bool `json:"affected"`
	// Policies reach Object: they are on a context through it (attached to
	// it, to a section of it, or above or below it), or are attached to it
	// without being in effect (Here.Contexts is 0). Ordered by policy kind,
	// then most general first.
	Policies []reachingPolicy `json:"policies"`
	// Effective has one entry per policy kind: the effective policies of
	// the contexts through Object, grouped by result.
	Effective []kindResults `json:"effective"`
	// Partial lists what could not be read from the cluster (forbidden
	// lists, ...): when set, the answer is partial.
	Partial []string `json:"partial,omitempty"`
}

// reachingPolicy is a policy reaching the described object.
type reachingPolicy struct {
	Policy     report.Ref `json:"policy"`
	PolicyKind string     `json:"policyKind"`
	// AttachedAt are the levels where it attaches on the paths through the
	// object (or, when not in effect, the declared targets on the object).
	AttachedAt []attachedAt `json:"attachedAt"`
	Stanza     string       `json:"stanza,omitempty"`
	Strategy   string       `json:"strategy,omitempty"`
	// MergeType is the value of its kind's merge-type field (Envoy
	// Gateway's mergeType): it merges with the policy above instead of
	// replacing it.
	MergeType string `json:"mergeType,omitempty"`
	// Accepted and Programmed are the reasons of its summary conditions.
	Accepted   string             `json:"accepted,omitempty"`
	Programmed string             `json:"programmed,omitempty"`
	Conditions []engine.Condition `json:"conditions"`
	// Here counts its outcomes in the contexts (target and distinct stack)
	// through the object.
	Here engine.Reach `json:"here"`
	// SetsFields is true when it sets at least one field in a context
	// through the object.
	SetsFields bool `json:"setsFields"`
	// Ancestors are its status entries for the object and its sections, when
	// it is attached there but in no context through it (why not in effect).
	Ancestors []report.Ancestor `json:"ancestors,omitempty"`
}

// Relations of a policy's level to the described object.
const (
	relSelf    = "self"    // attached to the described object or section
	relSection = "section" // attached to a section of the described object
	relAbove   = "above"
	relBelow   = "below"
)

// attachedAt is a level where a policy attaches, and where that is
// relative to the described object.
type attachedAt struct {
	Target report.Ref `json:"target"`
	// Relation is self, section, above or below.
	Relation string `json:"relation"`
}

// kindResults are the effective policies of one policy kind through the
// described object.
type kindResults struct {
	PolicyKind string `json:"policyKind"`
	// Results group the contexts with the same result (spec and sources).
	Results []effectiveResult `json:"results"`
	// NoContext says why no context of this kind passes through the object
	// (when Results is empty).
	NoContext string `json:"noContext,omitempty"`
	// Unread says which policies of this kind could not be read from the
	// cluster: the results may lack them.
	Unread string `json:"unread,omitempty"`
}

// effectiveResult is one effective spec and its provenance, and the
// contexts it holds for.
type effectiveResult struct {
	Contexts []contextPaths   `json:"contexts"`
	Spec     map[string]any   `json:"spec"`
	Fields   []describedField `json:"fields"`
	// Policies are the policies of the stack, most general first.
	Policies []stackPolicy `json:"policies"`
	Errors   []string      `json:"errors,omitempty"`
}

// contextPaths is a context (an effective target and a stack) and its
// paths through the described object, root to target.
type contextPaths struct {
	Target report.Ref     `json:"target"`
	Paths  [][]report.Ref `json:"paths"`
}

// describedField is a leaf field of an effective spec and who set it.
type describedField struct {
	Path   string     `json:"path"`
	Value  any        `json:"value"`
	Policy report.Ref `json:"policy"`
	// Target is where that policy attaches: its level.
	Target   report.Ref `json:"target"`
	Stanza   string     `json:"stanza,omitempty"`
	Strategy string     `json:"strategy"`
}

// stackPolicy is one policy of a context's stack, its outcome and losses.
type stackPolicy struct {
	Policy     report.Ref      `json:"policy"`
	Target     report.Ref      `json:"target"`
	Stanza     string          `json:"stanza,omitempty"`
	Strategy   string          `json:"strategy"`
	Outcome    string          `json:"outcome"`
	Conflicted bool            `json:"conflicted,omitempty"`
	Lost       []describedLoss `json:"lost,omitempty"`
	// NotAppliedVia are the Gateways through which its implementation does
	// not apply it here (engine.StackEntry.NotAppliedVia).
	NotAppliedVia []report.Ref `json:"notAppliedVia,omitempty"`
}

// describedLoss is a field a policy set that is not in the effective spec:
// the value it set and the policies that beat it.
type describedLoss struct {
	Path  string              `json:"path"`
	Value any                 `json:"value,omitempty"`
	To    []report.Attachment `json:"to"`
}

// target describes ref: which policies reach it and what they set.
func (d *describer) target(ref topology.Ref) *targetDescription {
	out := &targetDescription{APIVersion: describeAPIVersion, Kind: "TargetDescription", Object: ref,
		Policies: []reachingPolicy{}, Effective: []kindResults{}, Partial: d.partial}
	type reach struct {
		rp    *reachingPolicy
		order int // kind index, then the first stack position: most general first
		pos   int
	}
	reached := map[topology.Ref]*reach{}
	kindIndex := map[*policy.Kind]int{}
	for i, k := range d.res.Kinds {
		kindIndex[k] = i
	}
	results := map[*policy.Kind]*kindResults{}
	keys := map[*policy.Kind]map[string]int{}
	for _, m := range d.res.ContextsThrough(ref) {
		k := m.Effective.Kind
		path := m.Paths[0]
		contrib := map[topology.Ref]int{}
		for _, f := range m.Context.Fields {
			contrib[f.Policy]++
		}
		lost, conflicted := map[topology.Ref]bool{}, map[topology.Ref]bool{}
		for _, e := range m.Context.Stack {
			lost[e.Policy] = lost[e.Policy] || len(e.Lost) > 0
			conflicted[e.Policy] = conflicted[e.Policy] || e.Conflicted
		}
		counted := map[topology.Ref]bool{}
		for pos, e := range m.Context.Stack {
			r := reached[e.Policy]
			if r == nil {
				r = &reach{rp: d.reachingPolicy(e.Policy, k), order: kindIndex[k], pos: pos}
				reached[e.Policy] = r
			}
			r.pos = min(r.pos, pos)
			at := attachedAt{Target: e.At, Relation: relation(path, ref, e.At)}
			if !slices.Contains(r.rp.AttachedAt, at) {
				r.rp.AttachedAt = append(r.rp.AttachedAt, at)
			}
			if counted[e.Policy] {
				continue
			}
			// A policy attached at two levels has one outcome per context,
			// combined as the engine combines it for Reach.
			counted[e.Policy] = true
			r.rp.Here.Contexts++
			switch {
			case conflicted[e.Policy] || (lost[e.Policy] && contrib[e.Policy] == 0):
				r.rp.Here.None++
			case lost[e.Policy]:
				r.rp.Here.Partial++
			default:
				r.rp.Here.Full++
			}
			if contrib[e.Policy] > 0 {
				r.rp.SetsFields = true
				out.Affected = true
			}
		}

		kr := results[k]
		if kr == nil {
			kr = &kindResults{PolicyKind: k.String(), Results: []effectiveResult{}}
			results[k], keys[k] = kr, map[string]int{}
		}
		er := d.effectiveResult(m.Context)
		key, _ := json.Marshal(er)
		i, ok := keys[k][string(key)]
		if !ok {
			i = len(kr.Results)
			keys[k][string(key)] = i
			kr.Results = append(kr.Results, er)
		}
		cp := contextPaths{Target: m.Effective.Target}
		for _, p := range m.Paths {
			cp.Paths = append(cp.Paths, append([]report.Ref(nil), p...))
		}
		kr.Results[i].Contexts = append(kr.Results[i].Contexts, cp)
	}

	// Policies attached to the object (or the section) that are in no
	// context through it: invalid, target not found, or no effective target
	// below yet. Owners need to see them too.
	for _, ps := range d.res.Policies {
		var ancestors []report.Ancestor
		for _, a := range ps.Ancestors {
			if a.Ref == ref || (!ref.IsSection() && a.Ref.Object() == ref) {
				ancestors = append(ancestors, report.Ancestor{AncestorRef: a.Ref, ControllerName: d.controllerName, Conditions: a.Conditions})
			}
		}
		if len(ancestors) == 0 || reached[ps.Policy.Ref] != nil {
			continue
		}
		rp := d.reachingPolicy(ps.Policy.Ref, ps.Policy.Kind)
		rp.Ancestors = ancestors
		for _, a := range ancestors {
			rel := relSelf
			if a.AncestorRef != ref {
				rel = relSection
			}
			rp.AttachedAt = append(rp.AttachedAt, attachedAt{Target: a.AncestorRef, Relation: rel})
		}
		reached[ps.Policy.Ref] = &reach{rp: rp, order: kindIndex[ps.Policy.Kind], pos: 1 << 30}
	}

	all := make([]*reach, 0, len(reached))
	for _, r := range reached {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *reach) int {
		if a.order != b.order {
			return a.order - b.order
		}
		if a.pos != b.pos {
			return a.pos - b.pos
		}
		return a.rp.Policy.Compare(b.rp.Policy)
	})
	for _, r := range all {
		out.Policies = append(out.Policies, *r.rp)
	}
	for _, k := range d.res.Kinds {
		kr := results[k]
		if kr == nil {
			kr = &kindResults{PolicyKind: k.String(), Results: []effectiveResult{}, NoContext: d.noContextReason(k, ref)}
		}
		if !neverApplies(k, ref) {
			kr.Unread = d.unreadReason(k)
		}
		out.Effective = append(out.Effective, *kr)
	}
	return out
}

// unreadReason says which policies of kind k could not be read, "" when
// all were.
func (d *describer) unreadReason(k *policy.Kind) string {
	if d.unreadKind == nil {
		return ""
	}
	ns, ok := d.unreadKind(k.GroupKind)
	switch {
	case !ok:
		return ""
	case ns == "":
		return fmt.Sprintf("no %s could be read", d.kindName[k.GroupKind])
	}
	return fmt.Sprintf("only the %s of namespace %s could be read", d.kindName[k.GroupKind], ns)
}

// reachingPolicy starts the entry of a policy: its spec settings and status.
func (d *describer) reachingPolicy(ref topology.Ref, k *policy.Kind) *reachingPolicy {
	rp := &reachingPolicy{Policy: ref, PolicyKind: k.String(), Conditions: []engine.Condition{}}
	if ps := d.policies[ref]; ps != nil {
		rp.Stanza, rp.Strategy, rp.MergeType = ps.Policy.Stanza, string(ps.Policy.Strategy), ps.Policy.MergeType
		if ps.Conditions != nil {
			rp.Conditions = ps.Conditions
		}
		if c := describeCondition(ps.Conditions, engine.CondAccepted); c != nil {
			rp.Accepted = c.Reason
		}
		if c := describeCondition(ps.Conditions, engine.CondProgrammed); c != nil {
			rp.Programmed = c.Reason
		}
	}
	return rp
}

// effectiveResult renders a context's spec and sources (without its paths).
func (d *describer) effectiveResult(c *engine.Context) effectiveResult {
	er := effectiveResult{Spec: c.Spec, Fields: []describedField{}, Policies: []stackPolicy{}, Errors: c.Errors}
	if er.Spec == nil {
		er.Spec = map[string]any{}
	}
	for _, f := range c.Fields {
		er.Fields = append(er.Fields, describedField{Path: f.Path, Value: f.Value, Policy: f.Policy, Target: f.At,
			Stanza: d.stanza(f.Policy), Strategy: string(f.Strategy)})
	}
	for _, e := range c.Stack {
		sp := stackPolicy{Policy: e.Policy, Target: e.At, Stanza: e.Stanza, Strategy: string(e.Strategy), Outcome: e.Outcome, Conflicted: e.Conflicted,
			NotAppliedVia: e.NotAppliedVia}
		sp.Lost = d.losses(e.Policy, e.Lost)
		er.Policies = append(er.Policies, sp)
	}
	return er
}

// losses renders a policy's lost fields with the values it set.
func (d *describer) losses(pol topology.Ref, lost []engine.LostField) []describedLoss {
	var out []describedLoss
	for _, l := range lost {
		dl := describedLoss{Path: l.Path, Value: d.lostValue(pol, l.Path), To: make([]report.Attachment, len(l.To))}
		for i, t := range l.To {
			dl.To[i] = report.Attachment{Policy: t.Policy, Target: t.At}
		}
		out = append(out, dl)
	}
	return out
}

func (d *describer) stanza(pol topology.Ref) string {
	if ps := d.policies[pol]; ps != nil {
		return ps.Policy.Stanza
	}
	return ""
}

// relation places level at relative to the described ref on path.
func relation(path []topology.Ref, ref, at topology.Ref) string {
	switch {
	case at == ref:
		return relSelf
	case !ref.IsSection() && at.Object() == ref:
		return relSection
	}
	self, pos := -1, -1
	for i, x := range path {
		if self < 0 && (x == ref || (!ref.IsSection() && x.Object() == ref)) {
			self = i
		}
		if pos < 0 && x == at {
			pos = i
		}
	}
	if pos >= 0 && self >= 0 && pos > self {
		return relBelow
	}
	return relAbove
}

// neverApplies reports whether kind k can have no context through ref
// whatever the policies: a Direct kind that cannot target ref's kind, or a
// kind whose hierarchy does not hold ref's kind.
func neverApplies(k *policy.Kind, ref topology.Ref) bool {
	gk := ref.GroupKind()
	return (k.Class == policy.Direct && !k.AllowsTarget(gk)) || (k.Class != policy.Direct && !k.InHierarchy(gk))
}

// noContextReason says why no context of kind k passes through ref.
func (d *describer) noContextReason(k *policy.Kind, ref topology.Ref) string {
	gk := ref.GroupKind()
	name := d.kindName[k.GroupKind]
	switch {
	case k.Class == policy.Direct && !k.AllowsTarget(gk):
		return fmt.Sprintf("%s is a Direct kind: it affects only its declared targets, of kind %s", name, describeKinds(k.TargetKinds))
	case k.Class == policy.Direct:
		return fmt.Sprintf("no %s is in effect on this %s", name, describeKind(gk))
	case !k.InHierarchy(gk):
		return fmt.Sprintf("%s is not a level of %s's hierarchy (%s)", describeKind(gk), name, describeKinds(k.Hierarchy))
	}
	return fmt.Sprintf("no %s in effect on any path through this %s", name, describeKind(gk))
}

func describeKinds(gks []topology.GroupKind) string {
	s := make([]string, len(gks))
	for i, gk := range gks {
		s[i] = describeKind(gk)
	}
	return strings.Join(s, ", ")
}

// printTarget prints the text form of a target description.
func (d *describer) printTarget(w io.Writer, t *targetDescription) error {
	fmt.Fprintln(w, describeLevel(t.Object))
	if d.partialLine != "" {
		fmt.Fprintln(w, d.partialLine)
	}

	// THAT.
	var setting, beaten, empty, idle int
	for _, p := range t.Policies {
		switch {
		case p.SetsFields:
			setting++
		case p.Here.Contexts > 0 && p.Here.Full > 0:
			// It lost nothing somewhere yet set nothing: its spec is
			// empty. It is not beaten, and it does not affect the object.
			empty++
		case p.Here.Contexts > 0:
			beaten++
		default:
			idle++
		}
	}
	// The count is of the policies that set something here (decision 8's
	// "affects"); those that only reach it are counted apart.
	var notes []string
	if setting > 0 {
		notes = append(notes, fmt.Sprint(setting))
	}
	// "1 more" after the count, "1 policy" when nothing is counted.
	one, many := " policy", " policies"
	if setting > 0 {
		one, many = " more", " more"
	}
	switch {
	case beaten == 1:
		notes = append(notes, "1"+one+" reaches it but is beaten entirely")
	case beaten > 1:
		notes = append(notes, fmt.Sprintf("%d%s reach it but are beaten entirely", beaten, many))
	}
	switch {
	case empty == 1:
		notes = append(notes, "1"+one+" reaches it but sets no field")
	case empty > 1:
		notes = append(notes, fmt.Sprintf("%d%s reach it but set no field", empty, many))
	}
	switch {
	case idle == 1:
		notes = append(notes, "1"+one+" is attached but not in effect")
	case idle > 1:
		notes = append(notes, fmt.Sprintf("%d%s are attached but not in effect", idle, many))
	}
	that := "no"
	switch {
	case t.Affected:
		that = "yes"
	case len(t.Partial) > 0:
		that = "none found, but this answer is partial"
	}
	if len(notes) > 0 {
		that += " (" + strings.Join(notes, "; ") + ")"
	}
	fmt.Fprintf(w, "Affected by policies: %s\n", that)
	if len(t.Policies) == 0 {
		fmt.Fprintln(w, "No policy of any kind reaches it: it is on no path that carries a policy, and no policy is attached to it.")
	}

	// WHICH.
	var inEffect, notInEffect []reachingPolicy
	for _, p := range t.Policies {
		if p.Here.Contexts > 0 {
			inEffect = append(inEffect, p)
		} else {
			notInEffect = append(notInEffect, p)
		}
	}
	if len(inEffect) > 0 {
		fmt.Fprintf(w, "\nPolicies (%d):\n", len(inEffect))
		d.printReaching(w, inEffect)
	}
	if len(notInEffect) > 0 {
		fmt.Fprintf(w, "\nAttached here but not in effect (%d):\n", len(notInEffect))
		d.printReaching(w, notInEffect)
	}

	// WHAT.
	// Kinds with results first: they are the answer; the others only say
	// why they do not apply.
	fmt.Fprintln(w, "\nEffective policies:")
	for _, kr := range t.Effective {
		if len(kr.Results) > 0 {
			fmt.Fprintf(w, "  %s\n", d.kindName[topology.ParseGroupKind(kr.PolicyKind)])
			if kr.Unread != "" {
				fmt.Fprintf(w, "    partial: %s; the others may change this\n", kr.Unread)
			}
			for _, r := range kr.Results {
				d.printResult(w, r)
			}
		}
	}
	for _, kr := range t.Effective {
		if len(kr.Results) == 0 {
			name := d.kindName[topology.ParseGroupKind(kr.PolicyKind)]
			if kr.Unread != "" {
				// "none here" would be an answer; it is not known.
				fmt.Fprintf(w, "  %s: unknown (%s)\n", name, kr.Unread)
				continue
			}
			fmt.Fprintf(w, "  %s: none here (%s)\n", name, kr.NoContext)
		}
	}
	return nil
}

// printReaching prints the WHICH entries: name and levels, then settings,
// status and how the policy fares here.
func (d *describer) printReaching(w io.Writer, ps []reachingPolicy) {
	lefts, notes := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		lefts[i] = d.policyName(p.Policy)
		levels := make([]string, len(p.AttachedAt))
		for j, a := range p.AttachedAt {
			levels[j] = describeLevel(a.Target) + " (" + relationWords(a.Relation) + ")"
		}
		notes[i] = "on " + strings.Join(levels, ", ")
	}
	const indent = "  "
	width := 0
	for _, l := range lefts {
		width = max(width, len(l))
	}
	for i, p := range ps {
		fmt.Fprintf(w, "%s%-*s  %s\n", indent, width, lefts[i], notes[i])
		var words []string
		if p.Strategy != "" {
			w := stanzaWord(p.Stanza) + ", " + d.strategyWord(p.Policy.GroupKind(), p.Strategy)
			if p.MergeType != "" {
				w += ", mergeType " + p.MergeType + " (merges with the policy above)"
			}
			words = append(words, w)
		}
		if p.Here.Contexts > 0 {
			words = append(words, statusWords(p.Conditions), "here: "+outcomeWords(p.Here, !p.SetsFields))
		} else if len(p.Ancestors) == 0 {
			words = append(words, statusWords(p.Conditions))
		}
		if len(words) > 0 {
			fmt.Fprintf(w, "%s    %s\n", indent, strings.Join(words, "; "))
		}
		// Not in effect here: the summary status may well be fine (other
		// targets); the status for this object says why.
		for _, a := range p.Ancestors {
			for _, c := range a.Conditions {
				fmt.Fprintf(w, "%s    here (%s): %s\n", indent, describeLevel(a.AncestorRef), conditionLine(c))
			}
		}
	}
}

func relationWords(rel string) string {
	switch rel {
	case relSelf:
		return "this object"
	case relSection:
		return "a section of this object"
	}
	return rel
}

// outcomeWords summarizes a policy's outcomes over some contexts.
// setsNone says it sets no field in any of them: its "full" outcomes then
// lost nothing only because there was nothing to lose.
func outcomeWords(r engine.Reach, setsNone bool) string {
	fullWord := "wins in full"
	if setsNone {
		fullWord = "sets no field"
	}
	word := func(full, partial bool) string {
		switch {
		case full:
			return fullWord
		case partial:
			return "wins in part"
		}
		return "beaten entirely"
	}
	switch {
	case r.Contexts == 1:
		return word(r.Full == 1, r.Partial == 1) + " in its only context"
	case r.Full == r.Contexts, r.Partial == r.Contexts, r.None == r.Contexts:
		all := fmt.Sprintf("all %d contexts", r.Contexts)
		if r.Contexts == 2 {
			all = "both contexts"
		}
		return word(r.Full == r.Contexts, r.Partial == r.Contexts) + " in " + all
	}
	if setsNone { // then no context is partial: that needs a field kept
		return fmt.Sprintf("%d contexts: sets no field in %d, beaten entirely in %d", r.Contexts, r.Full, r.None)
	}
	return fmt.Sprintf("%d contexts: %d full, %d partial, %d none", r.Contexts, r.Full, r.Partial, r.None)
}

// printResult prints one grouped result: the paths it holds for, each
// field with its source, and the beaten values, by policy.
func (d *describer) printResult(w io.Writer, r effectiveResult) {
	var paths [][]topology.Ref
	for _, c := range r.Contexts {
		paths = append(paths, c.Paths...)
	}
	fmt.Fprintf(w, "    for %s\n", describePath(paths[0]))
	printPaths(w, "        ", paths[1:])
	if len(r.Fields) == 0 {
		fmt.Fprintln(w, "      (empty spec)")
	}
	lefts, notes := make([]string, len(r.Fields)), make([]string, len(r.Fields))
	for i, f := range r.Fields {
		lefts[i] = f.Path + ": " + compactJSON(f.Value)
		notes[i] = fmt.Sprintf("<- %s (%s, %s, %s)", d.policyName(f.Policy), describeLevel(f.Target), stanzaWord(f.Stanza), d.strategyWord(f.Policy.GroupKind(), f.Strategy))
	}
	fieldLines(w, "      ", lefts, notes)
	for _, p := range r.Policies {
		// A policy of the stack whose implementation leaves it out
		// through some of the paths' Gateways: its fields hold through
		// the others only.
		impl := "its implementation"
		if ps := d.policies[p.Policy]; ps != nil && ps.Policy.Kind.Implementation != "" {
			impl = ps.Policy.Kind.Implementation
		}
		for _, gw := range p.NotAppliedVia {
			fmt.Fprintf(w, "      not applied through Gateway %s: %s (%s refuses it there; see its status)\n",
				describeNsName(gw), d.policyName(p.Policy), impl)
		}
	}
	header := false
	for _, p := range r.Policies {
		if len(p.Lost) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "      beaten:")
			header = true
		}
		outcome := beatenWords(p.Outcome)
		if p.Conflicted {
			outcome += ", Conflicted"
		}
		fmt.Fprintf(w, "        %s (%s): %s\n", d.policyName(p.Policy), describeLevel(p.Target), outcome)
		d.printLosses(w, "          ", p.Lost)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "      error: %s\n", e)
	}
}

// beatenWords renders the outcome of a policy that lost fields, under the
// "beaten:" heading: "beaten in part" (partial) or "beaten entirely" (none).
func beatenWords(outcome string) string {
	switch outcome {
	case engine.OutcomePartial:
		return "beaten in part"
	case engine.OutcomeNone:
		return "beaten entirely"
	}
	return outcome
}

// printLosses prints lost fields: `path: value  (beaten by P on LEVEL)`.
func (d *describer) printLosses(w io.Writer, indent string, lost []describedLoss) {
	lefts, notes := make([]string, len(lost)), make([]string, len(lost))
	for i, l := range lost {
		lefts[i] = engine.LostPathText(l.Path)
		if l.Value != nil {
			lefts[i] += ": " + compactJSON(l.Value)
		}
		by := make([]string, len(l.To))
		for j, t := range l.To {
			by[j] = d.policyName(t.Policy) + " on " + describeLevel(t.Target)
		}
		notes[i] = "(beaten by " + strings.Join(by, ", ") + ")"
	}
	fieldLines(w, indent, lefts, notes)
}
