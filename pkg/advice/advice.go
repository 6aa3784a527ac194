// Package advice words what the engine knows about an object being applied
// or deleted as a few short lines, for the warnings of an admission review
// (kubectl and client-go print them): which policies affect an object, and
// what a policy change would do, from an engine Result and an
// engine.Delta. It decides nothing about the cluster and makes no call:
// the admission webhook (package webhook) is its one caller, and tests
// read its lines as a person would.
package advice

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// MaxLines is the most lines an answer has; the last one of a longer answer
// says how many more there are and which command shows them all.
const MaxLines = 5

// Width is the length a line aims at, in characters.
const Width = 120

// MaxWidth is the longest a line is, in characters. A line listing
// policies and their fields runs to it, so that issue 11's own example (a
// route affected by two policies, 170 characters) is one line; a line
// quoting a status message whole is cut at a space before it and ends with
// " ...": the whole message is in the policy's status and in `attache
// describe`, and, when prevention refuses the change, in the denial.
const MaxWidth = Width + 60

// Name renders a ref as "Kind namespace/name" (Kind name when
// cluster-scoped), the way the CLI's text output names objects.
func Name(r topology.Ref) string { return r.Short() }

// command renders the CLI arguments naming an object: kind/name -n ns.
func command(verb string, r topology.Ref, extra string) string {
	s := "attache " + verb + " " + strings.ToLower(r.Kind) + "/" + r.Name
	if r.Namespace != "" {
		s += " -n " + r.Namespace
	}
	return s + extra
}

// finish caps lines at MaxLines, the last one pointing to the commands
// that show everything, and each line at MaxWidth characters, without
// control characters (the API server drops a warning holding one).
func finish(lines []string, more string) []string {
	if len(lines) == 0 {
		return lines
	}
	out := make([]string, 0, min(len(lines), MaxLines))
	for i, l := range lines {
		if i == MaxLines-1 && len(lines) > MaxLines {
			rest := len(lines) - (MaxLines - 1)
			// Not cut: it names the command to run.
			return append(out, printable(fmt.Sprintf("... and %d more: see %s", rest, more)))
		}
		out = append(out, fit(l))
	}
	return out
}

// fit makes a line printable and cuts it at MaxWidth characters, at a
// space when there is one in its second half, ending it with " ...".
func fit(l string) string {
	l = printable(l)
	if utf8.RuneCountInString(l) <= MaxWidth {
		return l
	}
	const ellipsis = " ..."
	cut := string([]rune(l)[:MaxWidth-len(ellipsis)])
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + ellipsis
}

// printable replaces the control characters of s (a field name of a spec
// may hold a newline or a tab) with spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// join lists items separated by ", " within about width characters; the
// items left out are counted ("+3 more").
func join(items []string, width int) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 && b.Len()+len(it) > width {
			fmt.Fprintf(&b, ", +%d more", len(items)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it)
	}
	return b.String()
}

// plural renders "1 Service", "3 Services", "2 policies".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ay"):
		noun = noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"):
		noun += "es"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// reaching is a policy reaching an object, with the fields it sets there.
type reaching struct {
	ref    topology.Ref
	stanza string
	fields []string
}

// Affected words which policies affect the object ref (a route, a Service,
// a Gateway, a Namespace...): those contributing a field to a context whose
// path passes through it, with the fields each sets there. deleting says
// the object is being deleted. No policy: no line.
func Affected(res *engine.Result, ref topology.Ref, deleting bool) []string {
	if res == nil {
		return nil
	}
	matches := res.ContextsThrough(ref)
	byPolicy := map[topology.Ref]*reaching{}
	targets := map[topology.Ref]bool{}
	for _, m := range matches {
		stanza := map[topology.Ref]string{}
		for _, s := range m.Context.Stack {
			stanza[s.Policy] = s.Stanza
		}
		for _, f := range m.Context.Fields {
			r := byPolicy[f.Policy]
			if r == nil {
				r = &reaching{ref: f.Policy, stanza: stanza[f.Policy]}
				byPolicy[f.Policy] = r
			}
			if !slices.Contains(r.fields, f.Path) {
				r.fields = append(r.fields, f.Path)
			}
			if m.Effective.Target.Object() != ref.Object() {
				targets[m.Effective.Target] = true
			}
		}
	}
	if len(byPolicy) == 0 {
		return nil
	}
	list := make([]*reaching, 0, len(byPolicy))
	for _, r := range byPolicy {
		sort.Strings(r.fields)
		list = append(list, r)
	}
	head, also := fmt.Sprintf("%s is affected by %s: ", Name(ref), plural(len(list), "policy")), Name(ref)+" is also affected by: "
	if deleting {
		head = fmt.Sprintf("deleting %s takes it out of the reach of %s: ", Name(ref), plural(len(list), "policy"))
		also = fmt.Sprintf("deleting %s also takes it out of the reach of: ", Name(ref))
	}
	lines := reachLines(list, head, also)
	if deleting && len(targets) > 0 {
		lines = append(lines, fmt.Sprintf("deleting %s changes the effective policies of %s below it (their paths through it go)", Name(ref), counts(sortedRefs(targets))))
	}
	return finish(lines, command("describe", ref, ""))
}

// reachLines words policies and the fields each sets, sorted by kind then
// ref: head and as many as fit the width, then lines starting with also
// (the first of each line at least one policy, however long).
func reachLines(list []*reaching, head, also string) []string {
	sort.Slice(list, func(i, j int) bool {
		if list[i].ref.Kind != list[j].ref.Kind {
			return list[i].ref.Kind < list[j].ref.Kind
		}
		return list[i].ref.Less(list[j].ref)
	})
	var lines []string
	line, n := head, 0
	for _, r := range list {
		fields := join(r.fields, 40)
		if r.stanza == "overrides" {
			fields = "overrides: " + fields
		}
		it := fmt.Sprintf("%s (%s)", Name(r.ref), fields)
		if n > 0 && len(line)+len(it)+2 > Width+60 {
			lines = append(lines, line)
			line, n = also, 0
		}
		if n > 0 {
			line += ", "
		}
		line += it
		n++
	}
	return append(lines, line)
}

func sortedRefs(m map[topology.Ref]bool) []topology.Ref {
	out := make([]topology.Ref, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// counts words a set of targets by kind and namespace: "3 Services in
// baker", "2 Services in baker and 1 Namespace", "40 Services in 7
// namespaces".
func counts(refs []topology.Ref) string {
	type group struct{ kind, ns string }
	n := map[group]int{}
	var order []group
	kinds := map[string]map[string]bool{}
	for _, r := range refs {
		g := group{r.Kind, r.Namespace}
		if r.IsSection() {
			g.kind = r.Kind + " section"
		}
		if n[g] == 0 {
			order = append(order, g)
		}
		n[g]++
		if kinds[g.kind] == nil {
			kinds[g.kind] = map[string]bool{}
		}
		kinds[g.kind][g.ns] = true
	}
	var parts []string
	if len(order) > 3 {
		// Too many groups for a line: per kind, over namespaces.
		perKind := map[string]int{}
		var ks []string
		for _, g := range order {
			if perKind[g.kind] == 0 {
				ks = append(ks, g.kind)
			}
			perKind[g.kind] += n[g]
		}
		for _, k := range ks {
			s := plural(perKind[k], k)
			if len(kinds[k]) > 1 {
				s += " in " + plural(len(kinds[k]), "namespace")
			}
			parts = append(parts, s)
		}
	} else {
		for _, g := range order {
			s := plural(n[g], g.kind)
			if g.ns != "" {
				s += " in " + g.ns
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Op is the operation of an admission request.
type Op string

// Operations.
const (
	Create Op = "CREATE"
	Update Op = "UPDATE"
	Delete Op = "DELETE"
)

// Answer is what to say about a policy change, and whether prevention
// would refuse it.
type Answer struct {
	// Lines are the warnings.
	Lines []string
	// Refusal is set when the policy would be Invalid, or Conflicted: the
	// reason, naming what is in the way (whole: its line among Lines may
	// be cut at MaxWidth); the webhook denies with it when prevention is
	// on for the kind.
	Refusal string
}

// Policy words what applying (op Create or Update) or deleting the policy
// ref would do, from the Delta of engine.Incremental.WhatIf.
func Policy(d *engine.Delta, ref topology.Ref, op Op) Answer {
	var a Answer
	if d == nil {
		return a
	}
	if d.Skipped != "" {
		a.Lines = finish([]string{fmt.Sprintf("%s: impact not assessed: %s", Name(ref), d.Skipped)}, "")
		return a
	}
	var self *engine.PolicyDelta
	for i := range d.Policies {
		if d.Policies[i].Ref == ref {
			self = &d.Policies[i]
		}
	}
	changed, lost := changedTargets(d)
	var lines []string
	if op == Delete {
		byKind := map[string][]topology.Ref{}
		var kinds []string
		for _, t := range lost {
			k := t.kind.GroupKind.Kind
			if byKind[k] == nil {
				kinds = append(kinds, k)
			}
			byKind[k] = append(byKind[k], t.target)
		}
		for _, k := range kinds {
			lines = append(lines, fmt.Sprintf("deleting %s leaves %s with no %s", Name(ref), counts(byKind[k]), k))
		}
		if other := len(changed) - len(lost); other > 0 {
			lines = append(lines, fmt.Sprintf("deleting %s also changes the effective %s of %s", Name(ref), kindsOf(changed), counts(refsOf(changed, lost))))
		}
	} else if len(changed) > 0 {
		lines = append(lines, fmt.Sprintf("%s changes the effective %s of %s", Name(ref), kindsOf(changed), counts(refsOf(changed, nil))))
	}
	if op != Delete && self != nil && self.After != nil {
		st := self.After
		acc := condition(st.Conditions, engine.CondAccepted)
		switch {
		case acc != nil && acc.Status == "False" && len(st.Ancestors) == 0 && len(st.UnreadTargets) > 0:
			// Not judged (its targets' kinds could not be read): no
			// verdict to warn of, nor to deny for.
			lines = append(lines, fmt.Sprintf("%s: %s", Name(ref), acc.Message))
		case acc != nil && acc.Status == "False":
			what := fmt.Sprintf("%s would be %s: %s", Name(ref), acc.Reason, acc.Message)
			lines = append(lines, what)
			if acc.Reason == engine.ReasonInvalid || acc.Reason == engine.ReasonConflicted {
				a.Refusal = what
			}
		default:
			for _, an := range st.Ancestors {
				if c := condition(an.Conditions, engine.CondAccepted); c != nil && c.Status == "False" {
					lines = append(lines, fmt.Sprintf("%s: %s %s: %s", Name(ref), Name(an.Ref), c.Reason, c.Message))
				}
			}
			lines = append(lines, losses(d, ref)...)
		}
	}
	// Other policies whose summary would change.
	for _, p := range d.Policies {
		if p.Ref == ref || p.Before == nil || p.After == nil {
			continue
		}
		b, af := summary(p.Before), summary(p.After)
		if b != af {
			lines = append(lines, fmt.Sprintf("%s would go from %s to %s", Name(p.Ref), b, af))
		}
	}
	more := command("describe", ref, "")
	if op == Delete {
		more = command("impact", ref, " --delete")
	} else {
		more += " (or attache impact --apply FILE)"
	}
	a.Lines = finish(lines, more)
	return a
}

// changedTarget is an effective target whose effective policy changes.
type changedTarget struct {
	kind   *policy.Kind
	target topology.Ref
}

// changedTargets returns the targets whose effective fields change, and
// among them those left with no policy of the kind.
func changedTargets(d *engine.Delta) (changed, lost []changedTarget) {
	for _, t := range d.Targets {
		if sameFields(t.Before, t.After) {
			continue
		}
		ct := changedTarget{t.Kind, t.Target}
		changed = append(changed, ct)
		if !hasFields(t.After) {
			lost = append(lost, ct)
		}
	}
	return changed, lost
}

// sameFields reports whether two effective policies have, per context, the
// same fields with the same values set by the same policies at the same
// levels: what a change of it is judged by. Compared in place: on a
// Gateway-wide policy this runs for thousands of targets per answer.
func sameFields(a, b *engine.Effective) bool {
	if !hasFields(a) || !hasFields(b) {
		return hasFields(a) == hasFields(b)
	}
	if len(a.Contexts) != len(b.Contexts) {
		return false
	}
	for i, ca := range a.Contexts {
		cb := b.Contexts[i]
		if len(ca.Fields) != len(cb.Fields) {
			return false
		}
		for j, fa := range ca.Fields {
			fb := cb.Fields[j]
			if fa.Path != fb.Path || fa.Policy != fb.Policy || fa.At != fb.At || !sameValue(fa.Value, fb.Value) {
				return false
			}
		}
	}
	return true
}

// hasFields reports whether some context of e has a field.
func hasFields(e *engine.Effective) bool {
	if e == nil {
		return false
	}
	for _, c := range e.Contexts {
		if len(c.Fields) > 0 {
			return true
		}
	}
	return false
}

// sameValue compares two values of an unstructured spec as their JSON
// would: numbers by value, whatever their Go type.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return reflect.DeepEqual(a, b)
}

// number returns a numeric value as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// refsOf returns the targets of ts, less those of skip.
func refsOf(ts, skip []changedTarget) []topology.Ref {
	var out []topology.Ref
	for _, t := range ts {
		if !slices.Contains(skip, t) && !slices.Contains(out, t.target) {
			out = append(out, t.target)
		}
	}
	return out
}

func kindsOf(ts []changedTarget) string {
	var ks []string
	for _, t := range ts {
		if k := t.kind.GroupKind.Kind; !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return strings.Join(ks, ", ")
}

// losses words the fields the policy ref would lose, per winner, and the
// contexts where strategy none would reject it.
func losses(d *engine.Delta, ref topology.Ref) []string {
	type winner struct {
		pol, at  topology.Ref
		override bool
	}
	lostTo := map[winner][]string{}
	var winners []winner
	rejected := map[winner]bool{}
	var rejecters []winner
	for _, t := range d.Targets {
		if t.After == nil {
			continue
		}
		for _, c := range t.After.Contexts {
			stanza := map[engine.Attachment]string{}
			strategy := map[engine.Attachment]merge.Strategy{}
			for _, s := range c.Stack {
				stanza[*s.Attachment] = s.Stanza
				strategy[*s.Attachment] = s.Strategy
			}
			for _, s := range c.Stack {
				if s.Policy != ref {
					continue
				}
				for _, w := range s.ConflictedBy {
					k := winner{pol: w.Policy, at: w.At}
					if !rejected[k] {
						rejected[k] = true
						rejecters = append(rejecters, k)
					}
				}
				if s.Conflicted {
					// Rejected whole here: every field it sets is
					// lost to the established policy, which the line
					// above names; no line per field.
					continue
				}
				for _, l := range s.Lost {
					for _, w := range l.To {
						k := winner{pol: w.Policy, at: w.At, override: stanza[*w] == "overrides" || strings.HasSuffix(string(strategy[*w]), "overrides")}
						if lostTo[k] == nil {
							winners = append(winners, k)
						}
						if p := engine.LostPathText(l.Path); !slices.Contains(lostTo[k], p) {
							lostTo[k] = append(lostTo[k], p)
						}
					}
				}
			}
		}
	}
	var out []string
	for _, w := range rejecters {
		out = append(out, fmt.Sprintf("%s is rejected where %s on %s is established (merge strategy none)", Name(ref), Name(w.pol), Name(w.at)))
	}
	for _, w := range winners {
		fields := lostTo[w]
		sort.Strings(fields)
		verb := "is"
		if len(fields) > 1 {
			verb = "are"
		}
		how := "replaced"
		if w.override {
			how = "overridden"
		}
		out = append(out, fmt.Sprintf("%s: %s %s %s by %s on %s", Name(ref), join(fields, 40), verb, how, Name(w.pol), Name(w.at)))
	}
	return out
}

func condition(cs []engine.Condition, typ string) *engine.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// summary words a status as its Accepted reason, and its Programmed
// reason when accepted: "Accepted, PartiallyProgrammed", "Conflicted".
func summary(st *engine.PolicyStatus) string {
	acc := condition(st.Conditions, engine.CondAccepted)
	if acc == nil {
		return "no status"
	}
	if acc.Status != "True" {
		return acc.Reason
	}
	if p := condition(st.Conditions, engine.CondProgrammed); p != nil {
		return acc.Reason + ", " + p.Reason
	}
	return acc.Reason
}
