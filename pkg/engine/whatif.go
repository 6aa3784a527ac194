package engine

import (
	"fmt"
	"sort"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Delta is what a change of policies would do to a computation: the
// effective policies and the policy statuses that would differ.
type Delta struct {
	// Skipped says why the change was not assessed ("" when it was): the
	// engine has no state yet, an object is not a policy, or the change
	// would need a whole recomputation (a virtual target kind).
	Skipped string
	// Targets are the effective targets whose effective policy would
	// change, sorted by kind then target.
	Targets []TargetDelta
	// Policies are the policies whose status would change (those created
	// and deleted included), sorted by ref.
	Policies []PolicyDelta
}

// TargetDelta is the effective policy of one kind for one target, before
// and after a change; nil when no policy of the kind reaches it.
type TargetDelta struct {
	Kind          *policy.Kind
	Target        topology.Ref
	Before, After *Effective
}

// PolicyDelta is a policy's status before and after a change; Before is
// nil for a policy created, After for one deleted.
type PolicyDelta struct {
	Ref           topology.Ref
	Before, After *PolicyStatus
}

// WhatIf assesses, without keeping it, a change of policies on the state
// of the last Compute: the policy objects of apply created (or replacing
// the policy with the same ref), and the policies of remove deleted. It
// applies the change as Compute would apply an incremental one, reads what
// it changed, and applies the reverse change: the state is then equal to
// what it was (Results returned earlier are untouched, as after any
// Compute), and its cost is that of one incremental update, bounded by
// what the policies reach rather than by the size of the state, and the
// reverse's tallies (it restores the folds and statuses the change
// replaced; see undoLog). Like Compute, it is not safe for concurrent use
// with the Incremental's other methods.
func (in *Incremental) WhatIf(apply []Object, remove []topology.Ref) (d *Delta) {
	c := in.c
	switch {
	case c == nil:
		return &Delta{Skipped: "no computation yet"}
	case in.duplicates:
		return &Delta{Skipped: "the input holds duplicates"}
	}
	var changes []policyChange
	seen := map[topology.Ref]bool{}
	add := func(ch policyChange) string {
		if seen[ch.ref] {
			return fmt.Sprintf("%s appears twice", ch.ref)
		}
		seen[ch.ref] = true
		if ch.old == nil && ch.p == nil {
			return "" // deleting what is not there changes nothing
		}
		changes = append(changes, ch)
		return ""
	}
	for _, o := range apply {
		u := o.Object
		if u == nil {
			continue
		}
		ref := rawRef(u)
		k, ok := c.kinds[ref.GroupKind()]
		if !ok {
			return &Delta{Skipped: fmt.Sprintf("%s is not of a policy kind", ref)}
		}
		if ref.Name == "" || (ref.Namespace == "" && !c.clusterKinds[ref.GroupKind()]) {
			return &Delta{Skipped: fmt.Sprintf("%s has no name or namespace", ref)}
		}
		if why := add(policyChange{ref: ref, old: c.byRef[ref], p: c.parse(o, k), src: o.Source}); why != "" {
			return &Delta{Skipped: why}
		}
	}
	for _, ref := range remove {
		if why := add(policyChange{ref: ref, old: c.byRef[ref]}); why != "" {
			return &Delta{Skipped: why}
		}
	}
	if why := hasVirtual(changes); why != "" {
		return &Delta{Skipped: why}
	}
	if len(changes) == 0 {
		return &Delta{}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].ref.Less(changes[j].ref) })
	// The reverse change, built before the change replaces the pstates.
	sources := make([]string, len(changes))
	for i, x := range changes {
		sources[i] = c.sources[x.ref]
	}
	defer func() {
		if r := recover(); r != nil {
			// A half-applied update: start afresh on the next Compute.
			in.c, in.res = nil, nil
			d = &Delta{Skipped: fmt.Sprintf("the assessment failed: %v", r)}
		}
	}()
	c.undo = &undoLog{folds: map[*kindDP]map[stackID]*stackResult{}, status: map[*pstate]*PolicyStatus{}}
	defer func() { c.undo = nil }()
	ch := c.update(changes)
	d = in.read(ch)
	back := make([]policyChange, len(changes))
	for i, x := range changes {
		back[i] = policyChange{ref: x.ref, old: c.byRef[x.ref], src: sources[i], revive: x.old}
		if x.old != nil {
			back[i].p = x.old.p
		}
		if sources[i] == "" {
			delete(c.sources, x.ref)
		}
	}
	c.undo.replay = true
	c.update(back)
	// The index of policies naming backends may have been built during
	// the assessment: build it again from the real state when needed.
	c.users = nil
	return d
}

// hasVirtual returns why changes need a whole computation, or "".
func hasVirtual(changes []policyChange) string {
	for _, ch := range changes {
		if (ch.old != nil && hasVirtualTarget(ch.old.p)) || hasVirtualTarget(ch.p) {
			return fmt.Sprintf("%s targets a virtual kind (assessing it would recompute everything)", ch.ref)
		}
	}
	return ""
}

// read collects, after an update, what differs from the last Result.
func (in *Incremental) read(ch Change) *Delta {
	c, before := in.c, in.res
	d := &Delta{}
	for _, k := range c.sortedKinds {
		dp := c.dps[k]
		for _, t := range ch.Targets[k.GroupKind] {
			td := TargetDelta{Kind: k, Target: t, Before: before.effectiveOf(k, t)}
			if n, ok := c.graph.Lookup(t); ok {
				if ts := dp.targets[n]; ts != nil {
					td.After = ts.eff
				}
			}
			if td.Before == nil && td.After == nil {
				continue
			}
			d.Targets = append(d.Targets, td)
		}
	}
	refs := append(append([]topology.Ref(nil), ch.Statuses...), ch.Policies...)
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	for i, r := range refs {
		if i > 0 && refs[i-1] == r {
			continue
		}
		pd := PolicyDelta{Ref: r, Before: before.policyOf(r)}
		if ps := c.byRef[r]; ps != nil {
			pd.After = c.status[ps]
		}
		if pd.Before == nil && pd.After == nil {
			continue
		}
		d.Policies = append(d.Policies, pd)
	}
	return d
}

// effectiveOf finds the effective policy of kind k for target t, or nil.
func (r *Result) effectiveOf(k *policy.Kind, t topology.Ref) *Effective {
	_, e := r.effectiveIndex(k, t)
	return e
}

// effectiveIndex finds the effective policy of kind k for target t and its
// index in Effective, which is sorted by kind name, then target.
func (r *Result) effectiveIndex(k *policy.Kind, t topology.Ref) (int, *Effective) {
	name := k.String()
	i := sort.Search(len(r.Effective), func(i int) bool {
		e := r.Effective[i]
		if s := e.Kind.String(); s != name {
			return s > name
		}
		return !e.Target.Less(t)
	})
	if i < len(r.Effective) && r.Effective[i].Kind.GroupKind == k.GroupKind && r.Effective[i].Target == t {
		return i, r.Effective[i]
	}
	return -1, nil
}

// policyOf finds the status of policy ref, or nil: Policies is sorted by
// kind name, then ref.
func (r *Result) policyOf(ref topology.Ref) *PolicyStatus {
	var name string
	for _, k := range r.Kinds {
		if k.GroupKind == ref.GroupKind() {
			name = k.String()
		}
	}
	i := sort.Search(len(r.Policies), func(i int) bool {
		p := r.Policies[i].Policy
		if s := p.Kind.String(); s != name {
			return s > name
		}
		return !p.Ref.Less(ref)
	})
	if i < len(r.Policies) && r.Policies[i].Policy.Ref == ref {
		return r.Policies[i]
	}
	return nil
}

// undoLog lets the reverse change of a WhatIf restore what its change
// replaced instead of computing it again: the state after the reverse
// change is the state before the change, so the folds the change forgot
// and the statuses it replaced are valid again once the replaced policies
// are back (with their attachments, which the folds name). Without it the
// reverse change costs as much as the change: for a Gateway-wide policy,
// a fold of every stack below the Gateway.
type undoLog struct {
	// replay is set during the reverse change.
	replay bool
	folds  map[*kindDP]map[stackID]*stackResult
	status map[*pstate]*PolicyStatus
}

// forget drops the fold of stack s, which an update made stale. While a
// WhatIf's change is applied, the fold is kept for the reverse change;
// during the reverse change, the fold kept is put back instead, unless a
// context still uses it (then the accounting would not add up: fold
// again).
func (d *kindDP) forget(s stackID) {
	u := d.c.undo
	switch {
	case u == nil:
	case !u.replay:
		if sr, ok := d.memo[s]; ok {
			kept := u.folds[d]
			if kept == nil {
				kept = map[stackID]*stackResult{}
				u.folds[d] = kept
			}
			if _, dup := kept[s]; !dup {
				kept[s] = sr
			}
		}
	default:
		if sr, ok := u.folds[d][s]; ok && sr.uses == 0 {
			delete(u.folds[d], s)
			d.memo[s] = sr
			return
		}
	}
	delete(d.memo, s)
}

// evict drops a fold no context uses any more. While a WhatIf's change is
// applied, it is kept for the reverse change, as forget keeps it; the
// reverse change never puts one back here, since no context would use it.
func (d *kindDP) evict(s stackID) {
	if u := d.c.undo; u != nil && u.replay {
		delete(d.memo, s)
		return
	}
	d.forget(s)
}

// keepStatus records, while a WhatIf's change is applied, the status a
// policy had before it.
func (u *undoLog) keepStatus(ps *pstate, st *PolicyStatus) {
	if u == nil || u.replay || st == nil {
		return
	}
	if _, dup := u.status[ps]; !dup {
		u.status[ps] = st
	}
}

// restoreStatus returns, during a WhatIf's reverse change, the status a
// policy had before the change.
func (u *undoLog) restoreStatus(ps *pstate) (*PolicyStatus, bool) {
	if u == nil || !u.replay {
		return nil, false
	}
	st, ok := u.status[ps]
	return st, ok
}
