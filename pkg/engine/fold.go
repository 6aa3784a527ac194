package engine

import (
	"fmt"
	"sort"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// Outcomes of a policy in one context.
const (
	OutcomeFull    = "full"
	OutcomePartial = "partial"
	OutcomeNone    = "none"
)

// fold computes (once) the effective policy of a stack.
func (d *kindDP) fold(s stackID) *stackResult {
	if sr, ok := d.memo[s]; ok {
		return sr
	}
	atts := d.stackAtts(s)
	sr := &stackResult{atts: atts, contrib: map[merge.Src]int{}, outcomes: map[merge.Src]string{}}
	conflicted := map[merge.Src]*attachment{}
	if d.kind.Supports(merge.None) {
		// None: the established policy (oldest, then by name; levels do not
		// matter) wins whole; every challenger is rejected (decision 5).
		winner := atts[0]
		for _, a := range atts[1:] {
			if establishedBefore(a.pol.p, winner.pol.p) {
				winner = a
			}
		}
		sr.result = merge.Fold([]merge.Layer{{Spec: winner.spec, Strategy: merge.None, Src: winner.id}})
		for _, a := range atts {
			if a != winner {
				conflicted[a.id] = winner
			}
		}
	} else {
		layers := make([]merge.Layer, len(atts))
		for i, a := range atts {
			layers[i] = merge.Layer{Spec: a.spec, Strategy: a.pol.p.Strategy, Custom: d.kind.Custom, Src: a.id}
		}
		sr.result = merge.Fold(layers)
	}
	byID := map[merge.Src]*attachment{}
	for _, a := range atts {
		byID[a.id] = a
	}
	if sr.result.Tree != nil {
		sr.spec = sr.result.Tree.Object()
		for _, l := range sr.result.Tree.Leaves() {
			a := byID[l.Src]
			sr.contrib[l.Src]++
			sr.fields = append(sr.fields, FieldSource{Path: l.Path, Value: l.Value, Policy: a.pol.p.Ref, At: d.c.graph.Node(a.node).Ref, Strategy: a.pol.p.Strategy})
		}
	} else {
		sr.spec = map[string]any{}
	}
	lost := map[merge.Src]map[string]map[merge.Src]bool{}
	for _, l := range sr.result.Losses {
		if lost[l.Loser] == nil {
			lost[l.Loser] = map[string]map[merge.Src]bool{}
		}
		if lost[l.Loser][l.Path] == nil {
			lost[l.Loser][l.Path] = map[merge.Src]bool{}
		}
		for _, w := range l.Winners {
			lost[l.Loser][l.Path][w] = true
		}
	}
	for _, a := range atts {
		e := StackEntry{Policy: a.pol.p.Ref, At: d.c.graph.Node(a.node).Ref, Strategy: a.pol.p.Strategy, Stanza: a.pol.p.Stanza}
		if w, ok := conflicted[a.id]; ok {
			e.Conflicted = true
			e.Outcome = OutcomeNone
			for _, l := range a.spec.Leaves() {
				e.Lost = append(e.Lost, LostField{Path: l.Path, To: []Attachment{d.attRef(w)}})
			}
		} else {
			paths := make([]string, 0, len(lost[a.id]))
			for p := range lost[a.id] {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				lf := LostField{Path: p}
				for w := range lost[a.id][p] {
					lf.To = append(lf.To, d.attRef(byID[w]))
				}
				sort.Slice(lf.To, func(i, j int) bool { return attLess(lf.To[i], lf.To[j]) })
				e.Lost = append(e.Lost, lf)
			}
			switch {
			case len(e.Lost) == 0:
				e.Outcome = OutcomeFull
			case sr.contrib[a.id] > 0:
				e.Outcome = OutcomePartial
			default:
				e.Outcome = OutcomeNone
			}
		}
		sr.outcomes[a.id] = e.Outcome
		sr.entries = append(sr.entries, e)
	}
	d.memo[s] = sr
	return sr
}

func (d *kindDP) attRef(a *attachment) Attachment {
	return Attachment{Policy: a.pol.p.Ref, At: d.c.graph.Node(a.node).Ref}
}

func attLess(a, b Attachment) bool {
	if c := a.Policy.Compare(b.Policy); c != 0 {
		return c < 0
	}
	return a.At.Less(b.At)
}

// context records one (target, stack) context: it tallies each policy's
// outcome and returns the public Context.
func (d *kindDP) context(sr *stackResult, target topology.NodeID, paths func(func([]topology.Ref) bool)) *Context {
	for i, a := range sr.atts {
		e := &sr.entries[i]
		a.reach.Contexts++
		switch e.Outcome {
		case OutcomeFull:
			a.reach.Full++
		case OutcomePartial:
			a.reach.Partial++
		default:
			a.reach.None++
		}
		if e.Conflicted {
			a.conflicted++
		}
		if sr.contrib[a.id] > 0 {
			if a.affects == nil {
				a.affects = map[topology.NodeID]bool{}
			}
			a.affects[target] = true
		}
		for _, lf := range e.Lost {
			for _, w := range lf.To {
				if a.lostTo == nil {
					a.lostTo = map[Attachment]map[string]bool{}
				}
				if a.lostTo[w] == nil {
					a.lostTo[w] = map[string]bool{}
				}
				a.lostTo[w][lf.Path] = true
			}
		}
	}
	ctx := &Context{Stack: sr.entries, Spec: sr.spec, Fields: sr.fields, paths: paths}
	for _, err := range sr.result.Errors {
		ctx.Errors = append(ctx.Errors, fmt.Sprint(err))
	}
	return ctx
}
