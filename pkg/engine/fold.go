package engine

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/attache-dev/attache/pkg/istiotelemetry"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
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
	sr.id = s
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
	groups := d.stackLevels(s)
	var atts []*attachment
	for _, g := range groups {
		atts = append(atts, g...)
	}
	sr := &stackResult{atts: atts, entries: make([]StackEntry, 0, len(atts)), policies: make([]policyOutcome, 0, len(atts))}
	conflicted := map[merge.Src]*attachment{}
	var levelLosses []merge.Loss // fields lost at one level (oldest-first)
	switch {
	case d.kind.Composition == policy.CompositionIstioTelemetry:
		// istiod's order and merges (package istiotelemetry); of the
		// Telemetries of one namespace without selector or targetRefs,
		// only the oldest takes part.
		side, svcNs := d.telemetrySide(s)
		var taking []*attachment
		var twice bool
		atts, taking, twice = istioTelemetryOrder(atts, conflicted, svcNs, d.kind.Untargeted.Root())
		sr.atts = atts
		layers := make([]istiotelemetry.Layer, 0, len(taking))
		for _, a := range taking {
			layers = append(layers, istiotelemetry.Layer{Spec: a.pol.p.Spec, Src: a.id})
		}
		sr.result = istiotelemetry.ResolveFor(layers, istiotelemetry.DefaultMesh, side)
		if twice {
			// What the root namespace's Telemetry lost to the waypoint
			// namespace's and took back is not lost.
			sr.result.Losses = regained(sr.result)
		}
	case d.kind.Composition == policy.CompositionAdditive:
		// Every policy applies: their specs sit side by side (each under
		// its own key, see attach), so the patches never meet; but for
		// those a same-level rule rejects at their level (NGINX Gateway
		// Fabric's RateLimitPolicy: two setting one conflict field).
		layers := make([]merge.Layer, 0, len(atts))
		kept := make([][]*attachment, len(groups))
		for i, g := range groups {
			if d.kind.RejectsAtOneLevel() {
				g = d.resolveLevel(g, conflicted, &levelLosses)
			}
			kept[i] = g
		}
		// But for the kind's inherited fields, which the most specific
		// policy setting one gives the context alone.
		specs := d.inherit(kept, &levelLosses)
		for _, g := range kept {
			for _, a := range g {
				spec := a.spec
				if s, ok := specs[a]; ok {
					spec = s
				}
				layers = append(layers, merge.Layer{Spec: spec, Strategy: merge.PatchDefaults, Src: a.id})
			}
		}
		sr.result = merge.Fold(layers)
	case d.kind.Supports(merge.None) && (d.kind.DirectSections || d.levelMerges()):
		// Per level (an object, then its section), the kind's same-level
		// rule (oldest wins, unless disjoint policies merge); then the
		// more specific level wins whole: a policy on a section beats one
		// on its object there, and neither is Conflicted for it.
		layers := make([]merge.Layer, 0, len(groups))
		for _, g := range groups {
			kept := d.resolveLevel(g, conflicted, &levelLosses)
			l := merge.Layer{Spec: kept[0].spec, Strategy: merge.AtomicDefaults, Src: kept[0].id}
			if len(kept) > 1 {
				l.Spec = d.mergeLevel(kept, &levelLosses)
			}
			layers = append(layers, l)
		}
		sr.result = merge.FoldWith(layers, merge.Options{EmptyReplaced: d.kind.OverriddenByPresence})
	case d.kind.Supports(merge.None):
		// None: the established policy (oldest, then by name; levels do not
		// matter) wins whole; every challenger is rejected (decision 5).
		// Weights and filter ranks order one level only: each level's
		// first (its list is in that order) meets the others by age.
		var winner *attachment
		for _, g := range groups {
			if len(g) > 0 && (winner == nil || olderBefore(g[0].pol.p, winner.pol.p)) {
				winner = g[0]
			}
		}
		sr.result = merge.Fold([]merge.Layer{{Spec: winner.spec, Strategy: merge.None, Src: winner.id}})
		// The winner is a policy: its other attachments on the path are
		// not its challengers. A policy that a filter rank or a weight put
		// behind its level's first was displaced by that one, which is
		// the policy to name; the others lost to the winner.
		for _, g := range groups {
			for i, a := range g {
				switch {
				case a.pol == winner.pol:
				case i > 0 && g[0].pol != a.pol && (g[0].filter != a.filter || g[0].pol.p.Weight != a.pol.p.Weight):
					conflicted[a.id] = g[0]
				default:
					conflicted[a.id] = winner
				}
			}
		}
	default:
		layers := make([]merge.Layer, 0, len(atts))
		nodes := make([]topology.NodeID, 0, len(atts)) // the level of each layer
		for _, g := range groups {
			kept := d.resolveLevel(g, conflicted, &levelLosses)
			if len(kept) == 1 || !d.levelMerges() {
				for _, a := range kept {
					layers = append(layers, d.layer(a))
					nodes = append(nodes, a.node)
				}
				continue
			}
			nodes = append(nodes, kept[0].node)
			// The policies at one level merge into one layer, which
			// then meets the levels around it by the established
			// policy's strategy.
			l := d.layer(kept[0])
			l.Spec = d.mergeLevel(kept, &levelLosses)
			layers = append(layers, l)
		}
		opts := merge.Options{Schema: d.schemaFor(atts), EmptyReplaced: d.kind.OverriddenByPresence}
		var own map[merge.Src]ownOpen
		layers, own = d.mergeOwnFailOpen(layers, nodes, atts, opts)
		d.passMergeUp(layers, nodes)
		var held map[merge.Src]brokenField
		var extra map[*attachment][]string
		layers, sr.mergeOpen, held, extra = d.mergeFailOpen(layers, atts, opts)
		if len(d.kind.UnsupportedFields) > 0 {
			layers, sr.unsupported = d.unmergeUnsupported(layers, atts, opts)
		}
		sr.brokenMerge = mergeBroken(layers, atts, opts, extra)
		for id, b := range held {
			if _, closed := sr.brokenMerge[id]; closed {
				// It also holds a broken field that does not fail open:
				// the merged policy fails the route.
				delete(sr.mergeOpen, id)
				continue
			}
			if sr.brokenMerge == nil {
				sr.brokenMerge = map[merge.Src]brokenField{}
			}
			sr.brokenMerge[id] = b
		}
		sr.noteOwnOpen(own)
		layers = d.delegationLayers(layers, nodes, opts, &levelLosses)
		layers = stripMergeOpen(layers, atts, sr.mergeOpen)
		sr.result = merge.FoldWith(layers, opts)
	}
	if len(levelLosses) > 0 {
		// What the newer policies of a level lost to the older ones
		// joins the fold's losses, in the order they are grouped by.
		sr.result.Losses = append(sr.result.Losses, levelLosses...)
		sort.SliceStable(sr.result.Losses, func(i, j int) bool {
			a, b := &sr.result.Losses[i], &sr.result.Losses[j]
			if a.Loser != b.Loser {
				return a.Loser < b.Loser
			}
			return a.Path < b.Path
		})
	}
	sr.conflicted = conflicted
	d.finish(sr)
	return sr
}

// finish derives, from a stack's fold (sr.result) and the attachments a
// same-level rule rejected (sr.conflicted), the effective spec, who set
// each field, and each attachment's entry and outcome.
func (d *kindDP) finish(sr *stackResult) {
	atts, conflicted := sr.atts, sr.conflicted
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
			// A policy attached at two levels never beats itself, unless
			// the kind counts its attachments apart (overridden by
			// presence).
			if (wa.pol != atts[i].pol || d.kind.OverriddenByPresence) && !containsAtt(to, wa.ref) {
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
		if d.kind.Class == policy.Direct {
			// A Direct kind's one context stands for all its target's
			// Gateways; an Inherited kind's paths through a Gateway
			// refusing the attachment leave it out (cutLevel).
			e.NotAppliedVia = a.notVia
		}
		if b, ok := sr.brokenMerge[a.id]; ok {
			e.MergeHolds = b.field + " of " + b.from.pol.p.Ref.Kind + " " + shortName(b.from.pol.p.Ref)
			e.MergeFailedOpen = sr.mergeOpen[a.id]
		}
		if set, dropped := sr.unsupported[a.id]; dropped {
			e.Unsupported, e.Outcome = set, OutcomeNone
		} else if w, ok := conflicted[a.id]; ok {
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
		for _, lf := range e.Lost {
			for _, w := range lf.To {
				sr.losses = append(sr.losses, stackLoss{att: i, winner: d.c.attByRef[w], path: lf.Path})
			}
		}
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
		po.lost = po.lost || lostToOthers(a.pol, sr.entries[i].Lost, d.c)
		po.conflicted = po.conflicted || sr.entries[i].Conflicted
		po.dropped = po.dropped || len(sr.entries[i].Unsupported) > 0
	}
}

// lostToOthers reports whether some field of lost went to another policy
// than pol: a policy whose attachment lost only to its own more specific
// attachment (overridden by presence) still lost nothing as a policy.
func lostToOthers(pol *pstate, lost []LostField, c *computation) bool {
	for _, lf := range lost {
		for _, w := range lf.To {
			if c.atts[c.attByRef[w]].pol != pol {
				return true
			}
		}
	}
	return false
}

// layer is an attachment's layer in a fold.
func (d *kindDP) layer(a *attachment) merge.Layer {
	l := merge.Layer{Spec: a.spec, Strategy: a.pol.p.Strategy, Custom: d.kind.Custom, Src: a.id}
	if a.pol.p.MergeType != "" && (!a.pol.refsInvalid || a.failedOpen != nil) {
		// Both merge types merge with the nearest policy above; the
		// schema-aware one reads list types from the CRD's schema. A
		// policy whose references do not resolve is in place unmerged:
		// its implementation fails the merged policy; unless they all
		// fail open: it leaves those parts out of the merged policy.
		l.MergeUp = merge.PatchDefaults
	}
	return l
}

// passMergeUp marks the layers on the object of a section whose layer
// merges up: they pass the merge on (merge.Layer.KeepMergeUp). A policy on
// a route rule with a merge type replaces the route's policy and merges with
// the policy above the route.
func (d *kindDP) passMergeUp(layers []merge.Layer, nodes []topology.NodeID) {
	g := d.c.graph
	for i, l := range layers {
		if l.MergeUp == "" || !g.Node(nodes[i]).Ref.IsSection() {
			continue
		}
		obj, ok := g.Lookup(g.Node(nodes[i]).Ref.Object())
		for j := i - 1; ok && j >= 0 && nodes[j] == obj; j-- {
			layers[j].KeepMergeUp = true
		}
	}
}

// levelMerges reports whether the policies kept at one level merge into
// one layer (merge-disjoint, oldest-first).
func (d *kindDP) levelMerges() bool {
	return d.kind.SameLevel == policy.SameLevelMergeDisjoint || d.kind.SameLevel == policy.SameLevelOldestFirst
}

// mergeLevel merges the policies kept at one level (oldest first) into one
// spec. Disjoint ones (merge-disjoint) merge without a loss. With
// oldest-first, the oldest is made the most specific layer of a patch
// fold under the kind's named rules, so it keeps every field it sets and
// each newer one fills only the fields no older one sets; what the newer
// lose is added to losses.
func (d *kindDP) mergeLevel(kept []*attachment, losses *[]merge.Loss) *merge.Tree {
	sub := make([]merge.Layer, len(kept))
	for i, a := range kept {
		sub[i] = merge.Layer{Spec: a.spec, Strategy: merge.PatchDefaults, Src: a.id}
	}
	if d.kind.SameLevel != policy.SameLevelOldestFirst {
		return merge.Fold(sub).Tree
	}
	slices.Reverse(sub)
	// Under the kind's list types too when it merges schema-aware: two
	// policies' items of a list-map meet item by item at one level as
	// across levels.
	schema := d.named
	if d.kind.SchemaMerge {
		schema = d.full
	}
	r := merge.FoldWith(sub, merge.Options{Schema: schema})
	*losses = append(*losses, r.Losses...)
	return r.Tree
}

// schemaFor is the merge schema of a fold of atts: the kind's full schema
// when it merges schema-aware or a policy of the stack asks for a
// StrategicMerge, else its named-rule maps only (nil: RFC 7386).
func (d *kindDP) schemaFor(atts []*attachment) *merge.Schema {
	if d.kind.SchemaMerge {
		return d.full
	}
	for _, a := range atts {
		if a.pol.p.MergeType == policy.MergeTypeStrategic {
			return d.full
		}
	}
	return d.named
}

// resolveLevel applies the kind's same-level resolution to the policies
// attached at one level (in established order: oldest first, then by
// name), recording those rejected there in conflicted with the policy that
// beat them, and returns those that take part in the fold. A policy tied
// with the oldest that the kind does not reject (Kind.TiesNotRejected) is
// overridden by it whole: its fields are added to losses.
func (d *kindDP) resolveLevel(g []*attachment, conflicted map[merge.Src]*attachment, losses *[]merge.Loss) []*attachment {
	if len(g) < 2 {
		return g
	}
	same := d.kind.SameLevel
	if same == policy.SameLevelGEP && d.kind.Supports(merge.None) {
		same = policy.SameLevelOldestWins // strategy none: the established wins (decision 5)
	}
	switch same {
	case policy.SameLevelOldestWins:
		for _, a := range g[1:] {
			if d.kind.TiesNotRejected && tied(a, g[0]) {
				// Created in the same second: not rejected, overridden
				// whole by the first (which one its implementation
				// applies is not determined).
				for _, l := range a.spec.Leaves() {
					*losses = append(*losses, merge.Loss{Loser: a.id, Path: l.Path, Winners: []merge.Src{g[0].id}})
				}
				continue
			}
			conflicted[a.id] = g[0]
		}
		return g[:1]
	case policy.SameLevelMergeDisjoint:
		// The older of two policies setting the same field keeps it; the
		// newer is rejected at this level whole.
		owner := map[string]*attachment{}
		kept := g[:0:0]
		for _, a := range g {
			keys := d.conflictKeys(a)
			var beaten *attachment
			for _, k := range keys {
				if o, ok := owner[k]; ok {
					beaten = o
					break
				}
				if o := overlaps(owner, k); o != nil {
					beaten = o
					break
				}
			}
			if beaten != nil {
				conflicted[a.id] = beaten
				continue
			}
			for _, k := range keys {
				owner[k] = a
			}
			kept = append(kept, a)
		}
		return kept
	}
	return g
}

// rejectWhole applies a conflict scope of the policy (NGINX Gateway
// Fabric's markConflictedPolicies): in the established order, a policy the
// same-level rule rejects at any of its targets, against the older
// policies still in place there, is rejected at all of them and leaves
// every level; being rejected, it beats no one. NGF checks target by
// target in map order, so that when B loses to A at one target and C to B
// at another, whether C stands depends on the order; the established
// order gives the reading where it does (B is out before C is checked).
func (d *kindDP) rejectWhole() {
	var pols []*pstate
	for _, ps := range d.c.policies {
		if ps.p.Kind == d.kind {
			ps.rejectedBy, ps.rejectedAt = nil, nil
			if len(ps.atts) > 0 {
				pols = append(pols, ps)
			}
		}
	}
	sort.SliceStable(pols, func(i, j int) bool { return establishedBefore(pols[i].p, pols[j].p) })
	kept := map[level][]*attachment{}
	levelOf := func(a *attachment) level {
		if a.nsName != "" && d.kind.Class == policy.Inherited {
			return level(-(d.nsIndex[a.nsName] + 1))
		}
		return level(a.node)
	}
	for _, ps := range pols {
		for _, a := range ps.atts {
			for _, o := range kept[levelOf(a)] {
				if d.rejects(o, a) {
					ps.rejectedBy, ps.rejectedAt = o, a
					break
				}
			}
			if ps.rejectedBy != nil {
				break
			}
		}
		if ps.rejectedBy == nil {
			for _, a := range ps.atts {
				kept[levelOf(a)] = append(kept[levelOf(a)], a)
			}
		}
	}
	// Out too: what the parameters of every Gateway above refuse (its
	// implementation still counted it in conflicts).
	out := func(a *attachment) bool { return a.pol.rejectedBy != nil || a.nowhere }
	for n, l := range d.atNode {
		if l = slices.DeleteFunc(l, out); len(l) == 0 {
			delete(d.atNode, n)
		} else {
			d.atNode[n] = l
		}
	}
	for i := range d.atNs {
		d.atNs[i] = slices.DeleteFunc(d.atNs[i], out)
	}
}

// rejects reports whether the same-level rule rejects b, at a level where
// the older a is in place: always with oldest-wins (or strategy none),
// when they set a field in common with merge-disjoint.
func (d *kindDP) rejects(a, b *attachment) bool {
	if d.kind.SameLevel != policy.SameLevelMergeDisjoint {
		return true
	}
	owner := map[string]*attachment{}
	for _, k := range d.conflictKeys(a) {
		owner[k] = a
	}
	for _, k := range d.conflictKeys(b) {
		if owner[k] != nil || overlaps(owner, k) != nil {
			return true
		}
	}
	return false
}

// conflictKeys are what an attachment sets that the merge-disjoint rule
// compares: its leaf fields, a oneof of the kind counting as one field
// (two policies setting different members of one set the same field), or,
// for a kind with ConflictFields, those of the paths it sets a field at or
// below (two policies conflict when they share one; the paths are
// distinct and none is below another in practice, and overlaps compares
// them as fields).
func (d *kindDP) conflictKeys(a *attachment) []string {
	spec := a.spec
	if d.kind.Composition == policy.CompositionAdditive {
		spec = merge.FromValue(a.pol.p.Spec, a.id) // not under its key
	}
	fields := d.kind.ConflictFields
	if len(fields) == 0 {
		return spec.FieldPaths(d.named)
	}
	leaves := spec.Leaves()
	var keys []string
	for _, f := range fields {
		for _, l := range leaves {
			if l.Path == f || strings.HasPrefix(l.Path, f+".") || strings.HasPrefix(l.Path, f+"[") {
				keys = append(keys, f)
				break
			}
		}
	}
	return keys
}

// overlaps returns the owner of a field that contains path or that path
// contains (an object set whole against one of its fields), if any.
func overlaps(owner map[string]*attachment, path string) *attachment {
	for p, o := range owner {
		if strings.HasPrefix(path, p+".") || strings.HasPrefix(p, path+".") {
			return o
		}
	}
	return nil
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

// newContext is the public Context of a folded stack.
func newContext(sr *stackResult, paths func(func([]topology.Ref) bool), count func() int) *Context {
	ctx := &Context{Stack: sr.entries, Spec: sr.spec, Fields: sr.fields, paths: paths, count: count}
	for _, err := range sr.result.Errors {
		ctx.Errors = append(ctx.Errors, fmt.Sprint(err))
	}
	return ctx
}

// tally adds (sign +1) or takes back (sign -1) the contexts of a target in
// the counts the status is derived from: each attachment's and policy's
// reach, rejections, losses and the targets it contributes to. Counts,
// rather than sets, make an update able to take a context back.
func (d *kindDP) tally(ts *targetState, target topology.NodeID, sign int) {
	for _, sr := range ts.stacks {
		sr.uses += sign
		if b := sr.base; b != nil {
			// A result derived for one listener port: its fold is in
			// use as long as it is.
			b.uses += sign
			if sign < 0 && b.uses == 0 && d.touched != nil {
				d.unused = append(d.unused, b)
			}
		}
		// Who beat whom is a property of the stack, so it is tallied while
		// at least one context uses the stack, once.
		if (sign > 0 && sr.uses == 1) || (sign < 0 && sr.uses == 0) {
			d.tallyLosses(sr, sign)
		}
		if sign < 0 && sr.uses == 0 && d.touched != nil {
			d.unused = append(d.unused, sr)
		}
		for i, a := range sr.atts {
			e := &sr.entries[i]
			a.reach.add(e.Outcome, sign)
			if e.Conflicted {
				a.conflicted += sign
				// The winner is named even when the loser's spec is empty
				// (it then loses no field to record it by).
				if a.conflictedBy == nil {
					a.conflictedBy = map[*Attachment]int{}
				}
				for _, w := range e.ConflictedBy {
					countIn(a.conflictedBy, w, sign)
				}
			}
			if len(e.Unsupported) > 0 {
				if a.unsupported == nil {
					a.unsupported = map[topology.NodeID]int{}
				}
				countIn(a.unsupported, target, sign)
			}
			if _, ok := sr.brokenMerge[a.id]; ok {
				if a.mergeBroken == nil {
					a.mergeBroken = map[topology.NodeID]int{}
				}
				countIn(a.mergeBroken, target, sign)
			}
			if sr.contrib[i] > 0 {
				if a.affects == nil {
					a.affects = map[topology.NodeID]int{}
				}
				if countIn(a.affects, target, sign) {
					d.movedAff(affKey{a, target}, sign)
				}
			}
		}
		for _, po := range sr.policies {
			switch {
			case po.conflicted || po.dropped || (po.lost && po.contrib == 0):
				po.pol.reach.add(OutcomeNone, sign)
			case po.lost:
				po.pol.reach.add(OutcomePartial, sign)
			default:
				po.pol.reach.add(OutcomeFull, sign)
			}
		}
	}
}

// tallyLosses adds or takes back the fields each attachment of a stack
// lost, per winner.
func (d *kindDP) tallyLosses(sr *stackResult, sign int) {
	for _, l := range sr.losses {
		a := sr.atts[l.att]
		if a.lostTo == nil {
			a.lostTo = map[merge.Src]map[string]int{}
		}
		m := a.lostTo[l.winner]
		if m == nil {
			m = map[string]int{}
			a.lostTo[l.winner] = m
		}
		if countIn(m, l.path, sign) {
			d.movedLoss(lossKey{a, l.winner, l.path}, sign)
		}
		if len(m) == 0 {
			delete(a.lostTo, l.winner)
		}
	}
}

// stackLoss is a field an attachment of a stack lost to a winner.
type stackLoss struct {
	att    int
	winner merge.Src
	path   string
}

// affKey and lossKey name an entry of an attachment's affects and lostTo.
type affKey struct {
	a *attachment
	n topology.NodeID
}

type lossKey struct {
	a    *attachment
	w    merge.Src
	path string
}

// movedAff and movedLoss record that an entry appeared (sign +1) or
// disappeared: during an update, where a context is taken back and
// tallied again, the first move of an entry tells whether it was there
// before; settle compares at the end. Outside updates, caches are built
// after the tallies.
func (d *kindDP) movedAff(k affKey, sign int) {
	if d.touched == nil {
		return
	}
	if _, ok := d.beforeAff[k]; !ok {
		d.beforeAff[k] = sign < 0
	}
}

func (d *kindDP) movedLoss(k lossKey, sign int) {
	if d.touched == nil {
		return
	}
	if _, ok := d.beforeLoss[k]; !ok {
		d.beforeLoss[k] = sign < 0
	}
}

// settle drops the cached messages and lists whose entries changed in net.
func (d *kindDP) settle() {
	for k, was := range d.beforeAff {
		if (k.a.affects[k.n] > 0) != was {
			k.a.pol.affects = nil
		}
	}
	for k, was := range d.beforeLoss {
		if (k.a.lostTo[k.w][k.path] > 0) != was {
			k.a.lossMsg, k.a.pol.lossMsg = nil, nil
		}
	}
}

// countIn adds sign to m[k], deleting the key at zero. It reports whether
// the key appeared or disappeared.
func countIn[K comparable](m map[K]int, k K, sign int) bool {
	old := m[k]
	if n := old + sign; n != 0 {
		m[k] = n
		return old == 0
	}
	delete(m, k)
	return true
}

// add counts (or, with sign -1, takes back) one context of an outcome.
func (r *Reach) add(outcome string, sign int) {
	r.Contexts += sign
	switch outcome {
	case OutcomeFull:
		r.Full += sign
	case OutcomePartial:
		r.Partial += sign
	default:
		r.None += sign
	}
}

// istioTelemetryOrder puts the Telemetries of a stack (in established
// order: oldest first, level by level) in istiod's order
// (applicableTelemetries): the root namespace's without selector or
// targetRefs, the Gateway's (waypoint's) namespace's, at a waypoint the
// namespace's of the Service svcNs when another, then those selecting or
// targeting the workload, oldest first. Of those without selector or
// targetRefs istiod takes the oldest of each namespace
// (namespaceWideTelemetryConfig); the others are recorded in conflicted.
// It returns the attachments in that order, and those taking part in the
// merge: the oldest of each namespace, each policy once; and the root
// namespace's a second time after the waypoint namespace's for a Service
// of the root namespace at a waypoint of another namespace (again).
func istioTelemetryOrder(atts []*attachment, conflicted map[merge.Src]*attachment, svcNs, root string) (ordered, taking []*attachment, again bool) {
	var meshWide, workload []*attachment
	var nsWide [][]*attachment // per namespace, in the order first met
	for _, a := range atts {
		switch p := a.pol.p; {
		case !namespaceWide(p):
			workload = append(workload, a)
		case p.UntargetedMeshWide():
			meshWide = append(meshWide, a)
		default:
			i := slices.IndexFunc(nsWide, func(g []*attachment) bool { return g[0].pol.p.Ref.Namespace == p.Ref.Namespace })
			if i < 0 {
				i = len(nsWide)
				nsWide = append(nsWide, nil)
			}
			nsWide[i] = append(nsWide[i], a)
		}
	}
	// At a waypoint, a Service's namespace after the waypoint's.
	sort.SliceStable(nsWide, func(i, j int) bool {
		return nsWide[i][0].pol.p.Ref.Namespace != svcNs && nsWide[j][0].pol.p.Ref.Namespace == svcNs
	})
	// istiod scans one namespace's Telemetries oldest first (then by
	// name), whatever they target: the waypoint's, its class's and the
	// Service's interleave.
	sort.SliceStable(workload, func(i, j int) bool { return olderBefore(workload[i].pol.p, workload[j].pol.p) })
	groups := append([][]*attachment{meshWide}, nsWide...)
	for _, l := range groups {
		for i := 1; i < len(l); i++ {
			conflicted[l[i].id] = l[0]
		}
	}
	ordered = slices.Concat(append(groups, workload)...)
	seen := map[*pstate]bool{}
	for _, a := range ordered {
		if _, out := conflicted[a.id]; out || seen[a.pol] {
			// A policy targeting both a waypoint and its Service
			// applies once.
			continue
		}
		seen[a.pol] = true
		taking = append(taking, a)
	}
	if svcNs == root && len(meshWide) > 0 && len(nsWide) > 0 {
		// A Service of the root namespace at a waypoint of another:
		// istiod reads the Service's namespace-wide Telemetry, the root
		// namespace's, again after the waypoint namespace's.
		taking = slices.Insert(taking, 1+len(nsWide), meshWide[0])
		again = true
	}
	return ordered, taking, again
}

// regained returns a fold's losses but those of a source that holds the
// field lost, or some field below it, in the result: a Telemetry applied
// twice (istioTelemetryOrder) takes back what it lost in between.
func regained(r merge.Result) []merge.Loss {
	if r.Tree == nil {
		return r.Losses
	}
	leaves := r.Tree.Leaves()
	return slices.DeleteFunc(r.Losses, func(l merge.Loss) bool {
		for _, f := range leaves {
			if f.Src == l.Loser && (f.Path == l.Path || strings.HasPrefix(f.Path, l.Path+".") || strings.HasPrefix(f.Path, l.Path+"[")) {
				return true
			}
		}
		return false
	})
}

// telemetrySide says which side of the traffic a stack's Telemetry is
// resolved for, and the namespace of the Service it is for ("" for none):
// a stack holding a Service, a waypoint or Istio's waypoint class is a
// waypoint's, which istiod builds as a sidecar's inbound, the server side
// (pilot/pkg/networking/core/listener_waypoint.go); any other, a
// Gateway's, the client side. Only for kinds layered at waypoints.
func (d *kindDP) telemetrySide(s stackID) (istiotelemetry.Side, string) {
	if !d.telemetryAtWaypoints() {
		return istiotelemetry.Client, ""
	}
	side, svcNs := istiotelemetry.Client, ""
	for _, l := range d.trie.levels(s) {
		n, ok := d.levelNode(l)
		if !ok {
			continue
		}
		ref := d.c.graph.Node(n).Ref
		switch ref.GroupKind() {
		case topology.KindService, topology.KindServiceEntry:
			side, svcNs = istiotelemetry.Server, ref.Namespace
		case topology.KindGateway:
			if !ref.IsSection() && d.c.isWaypoint(ref) {
				side = istiotelemetry.Server
			}
		case topology.KindGatewayClass:
			if ref.Name == waypointClass {
				side = istiotelemetry.Server
			}
		}
	}
	return side, svcNs
}

// namespaceWide reports whether a policy applies to its namespace as a
// whole: it names no targets and selects no labels.
func namespaceWide(p *policy.Policy) bool {
	return p.Untargeted != nil && len(p.Untargeted.MatchLabels) == 0
}

// tied reports whether attachment a, of another policy, was created in the
// same second as w, with the same rank (filter, weight): only their names
// order them.
func tied(a, w *attachment) bool {
	// No creationTimestamp (files) is no second of creation: ordered by
	// name as before.
	return a.pol != w.pol && !a.pol.p.Created.IsZero() && a.pol.p.Created.Equal(w.pol.p.Created) && a.filter == w.filter && a.pol.p.Weight == w.pol.p.Weight
}
