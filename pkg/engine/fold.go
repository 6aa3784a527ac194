package engine

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

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
	var sr *stackResult
	if int(s) < len(d.pre) && d.pre[s] != nil {
		sr = d.pre[s]
	} else {
		sr = d.compute(s)
	}
	// Who beat whom is a property of the stack, so it is tallied once per
	// stack, not once per context.
	for i, a := range sr.atts {
		e := &sr.entries[i]
		if len(e.Lost) > 0 && a.lostTo == nil {
			a.lostTo = map[merge.Src]map[string]bool{}
		}
		for _, lf := range e.Lost {
			for _, w := range lf.To {
				id := d.c.attByRef[w]
				if a.lostTo[id] == nil {
					a.lostTo[id] = map[string]bool{}
				}
				a.lostTo[id][lf.Path] = true
			}
		}
	}
	d.memo[s] = sr
	return sr
}

// prefold computes the stacks in parallel, one goroutine per CPU: folds
// only read shared, immutable state (trees, the trie, attachments), so they
// need no locks; their tallies are made afterwards, in order, by fold.
func (d *kindDP) prefold(stacks []stackID) {
	workers := min(runtime.GOMAXPROCS(0), len(stacks)/64+1)
	if workers < 2 {
		return
	}
	d.pre = make([]*stackResult, len(d.trie.parent))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(stacks); i += workers {
				d.pre[stacks[i]] = d.compute(stacks[i])
			}
		}()
	}
	wg.Wait()
}

// compute folds a stack and derives its entries, fields and outcomes. It
// must stay free of writes to shared state: prefold runs it concurrently.
func (d *kindDP) compute(s stackID) *stackResult {
	atts := d.stackAtts(s)
	sr := &stackResult{atts: atts, entries: make([]StackEntry, 0, len(atts)), policies: make([]policyOutcome, 0, len(atts))}
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
		// The winner is a policy: its other attachments on the path are
		// not its challengers.
		for _, a := range atts {
			if a.pol != winner.pol {
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
	pos := func(src merge.Src) int {
		for i, a := range atts {
			if a.id == src {
				return i
			}
		}
		return -1
	}
	sr.contrib = make([]int, len(atts))
	if sr.result.Tree != nil {
		sr.spec = sr.result.Tree.Object()
		leaves := sr.result.Tree.Leaves()
		sr.fields = make([]FieldSource, 0, len(leaves))
		for _, l := range leaves {
			i := pos(l.Src)
			a := atts[i]
			sr.contrib[i]++
			sr.fields = append(sr.fields, FieldSource{Path: l.Path, Value: l.Value, Attachment: a.ref, Strategy: a.pol.p.Strategy})
		}
	} else {
		sr.spec = map[string]any{}
	}
	// Group losses by loser and path (Fold returns them sorted by loser,
	// then path), merging the winners.
	lost := make([][]LostField, len(atts))
	for _, l := range sr.result.Losses {
		i := pos(l.Loser)
		var to []*Attachment
		for _, w := range l.Winners {
			wa := atts[pos(w)]
			// A policy attached at two levels never beats itself.
			if wa.pol != atts[i].pol && !containsAtt(to, wa.ref) {
				to = append(to, wa.ref)
			}
		}
		if len(to) == 0 {
			continue
		}
		lf := lost[i]
		if n := len(lf); n > 0 && lf[n-1].Path == l.Path {
			for _, w := range to {
				if !containsAtt(lf[n-1].To, w) {
					lf[n-1].To = append(lf[n-1].To, w)
				}
			}
		} else {
			lf = append(lf, LostField{Path: l.Path, To: to})
		}
		lost[i] = lf
	}
	for i, a := range atts {
		e := StackEntry{Attachment: a.ref, Strategy: a.pol.p.Strategy, Stanza: a.pol.p.Stanza}
		if w, ok := conflicted[a.id]; ok {
			e.Conflicted = true
			e.ConflictedBy = []*Attachment{w.ref}
			e.Outcome = OutcomeNone
			for _, l := range a.spec.Leaves() {
				e.Lost = append(e.Lost, LostField{Path: l.Path, To: []*Attachment{w.ref}})
			}
		} else {
			e.Lost = lost[i]
			for _, lf := range e.Lost {
				if len(lf.To) > 1 {
					sort.Slice(lf.To, func(i, j int) bool { return attLess(*lf.To[i], *lf.To[j]) })
				}
			}
			switch {
			case len(e.Lost) == 0:
				e.Outcome = OutcomeFull
			case sr.contrib[i] > 0:
				e.Outcome = OutcomePartial
			default:
				e.Outcome = OutcomeNone
			}
		}
		sr.entries = append(sr.entries, e)
	}
	// A policy's outcome in the context combines its attachments on the
	// path: it is full when none of them lost anything.
	for i, a := range atts {
		k := -1
		for j, po := range sr.policies {
			if po.pol == a.pol {
				k = j
			}
		}
		if k < 0 {
			sr.policies = append(sr.policies, policyOutcome{pol: a.pol})
			k = len(sr.policies) - 1
		}
		po := &sr.policies[k]
		po.contrib += sr.contrib[i]
		po.lost = po.lost || len(sr.entries[i].Lost) > 0
		po.conflicted = po.conflicted || sr.entries[i].Conflicted
	}
	return sr
}

func containsAtt(l []*Attachment, a *Attachment) bool {
	for _, x := range l {
		if x == a {
			return true
		}
	}
	return false
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
			// The winner is named even when the loser's spec is empty (it
			// then loses no field to record it by).
			if a.conflictedBy == nil {
				a.conflictedBy = map[*Attachment]bool{}
			}
			for _, w := range e.ConflictedBy {
				a.conflictedBy[w] = true
			}
		}

		// Contexts of one target come one after another, so comparing with
		// the last target recorded keeps the list free of repeats.
		if sr.contrib[i] > 0 && (len(a.affects) == 0 || a.affects[len(a.affects)-1] != target) {
			a.affects = append(a.affects, target)
		}
	}
	for _, po := range sr.policies {
		po.pol.reach.Contexts++
		switch {
		case po.conflicted || (po.lost && po.contrib == 0):
			po.pol.reach.None++
		case po.lost:
			po.pol.reach.Partial++
		default:
			po.pol.reach.Full++
		}
	}
	ctx := &Context{Stack: sr.entries, Spec: sr.spec, Fields: sr.fields, paths: paths}
	for _, err := range sr.result.Errors {
		ctx.Errors = append(ctx.Errors, fmt.Sprint(err))
	}
	return ctx
}
