package engine

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Incremental is the engine for a long-running caller (a controller): it
// keeps its state between computations, and each Compute after the first
// recomputes only what the objects that changed since the previous call
// can affect. Its Results are those Compute would return for the same
// objects.
//
// A policy added, removed or edited is an incremental change: only its
// kind is touched; the stacks of policies are rebuilt only below the
// levels where it attaches (before and after the change), only the stacks
// holding those levels are folded again, only the effective targets below
// them get new contexts, and only the policies that share a context with
// them get a new status. Any other change (a topology object, a policy
// CRD, a ReferenceGrant, a policy targeting a virtual kind) recomputes
// everything, as Compute does.
//
// Objects are compared by identity first (an informer cache hands out the
// same content while an object is unchanged), then by resourceVersion,
// then by what the engine reads of them, so status writes, which change
// neither specs nor labels, cost no recomputation.
//
// Objects passed in must not be modified in place afterwards: a changed
// object is a new object (as informers and decoders make them). An
// Incremental is not safe for concurrent use. Results it returned stay
// valid after later calls.
type Incremental struct {
	opts Options
	c    *computation
	res  *Result
	last Change
	// The previous input, by ref and by identity; a slot carries the
	// stamp of the last computation that saw it.
	prev  map[topology.Ref]*slot
	byPtr map[unsafe.Pointer]*slot
	stamp uint64
	// duplicates is set when the previous input held an object twice: its
	// problems are the input's, recomputed in full next time.
	duplicates bool
	// holdersChanged are the CA certificate holders (ConfigMaps, Secrets)
	// added, changed or removed by the input being computed.
	holdersChanged []topology.Ref
	// moved is set when the input being computed moved an unchanged
	// object's document (moveSource).
	moved bool
}

// slot is one object of the previous input.
type slot struct {
	obj   Object
	ref   topology.Ref
	stamp uint64
}

// Change says what the last Incremental.Compute recomputed.
type Change struct {
	// Full is set when everything was recomputed; Reason says why.
	Full   bool
	Reason string
	// Policies are the policies added, removed or edited (when not Full).
	Policies []topology.Ref
	// Statuses are the policies whose status was derived again (when not
	// Full); the status of the others is the previous Result's.
	Statuses []topology.Ref
	// Targets are, per policy kind, the effective targets whose contexts
	// were recomputed (when not Full); the effective policy and Affected
	// entry of the others are the previous Result's.
	Targets map[topology.GroupKind][]topology.Ref
}

// NewIncremental returns an Incremental engine with the given options.
func NewIncremental(opts Options) *Incremental {
	return &Incremental{opts: opts}
}

// Has reports whether the last Compute's input held the object ref (as
// written: the namespace not defaulted). A controller asks it to forget
// what it recorded about objects that are gone, without a set of its own.
func (in *Incremental) Has(ref topology.Ref) bool {
	_, ok := in.prev[ref]
	return ok
}

// NextRecheck is the first time after the last Compute at which a
// verdict on data its policies name changes (a CRL comes into force or
// expires; policy.ObjectRefPath.Content), zero for none: a Compute from
// then on recomputes everything, even when no object changed.
func (in *Incremental) NextRecheck() time.Time {
	if in.c == nil {
		return time.Time{}
	}
	return in.c.recheckAt
}

// LastChange says what the last Compute recomputed.
func (in *Incremental) LastChange() Change { return in.last }

// Compute computes the Result for objs, the whole input (not a delta),
// recomputing only what changed since the previous call.
func (in *Incremental) Compute(objs []Object) *Result {
	if in.c == nil {
		return in.full(objs, "first computation")
	}
	if in.duplicates {
		return in.full(objs, "the previous input held duplicates")
	}
	now := in.c.clock()
	if !in.c.recheckAt.IsZero() && !now.Before(in.c.recheckAt) {
		return in.full(objs, "data a policy names came into force or expired (a CRL)")
	}
	in.c.now = now
	in.holdersChanged = in.holdersChanged[:0]
	in.moved = false
	changes, regen, reason := in.diff(objs)
	if reason == "" {
		changes, regen = in.c.holderDependents(changes, regen, in.holdersChanged)
		changes, regen = in.c.claimDependents(changes, regen)
		reason = in.c.backendTLSDependents(changes, in.holdersChanged)
	}
	if reason == "" {
		reason = in.c.requirementDependents(changes)
	}
	if reason == "" {
		reason = in.c.cannotUpdate(changes)
	}
	if reason != "" {
		return in.full(objs, reason)
	}
	if len(changes) == 0 && len(regen) == 0 && len(in.holdersChanged) == 0 {
		in.last = Change{}
		if in.moved {
			in.res = in.c.result() // its problems name the new sources
		}
		return in.res
	}
	in.last = in.c.update(changes)
	in.refreshHolders()
	for _, x := range regen {
		// Only the generation moved (a kind without a status subresource
		// counts status writes in it): the status reports the new one.
		x.ps.p = x.p
		in.c.status[x.ps] = in.c.policyStatus(x.ps)
		if !slices.Contains(in.last.Statuses, x.p.Ref) {
			in.last.Statuses = append(in.last.Statuses, x.p.Ref)
		}
	}
	sort.Slice(in.last.Statuses, func(i, j int) bool { return in.last.Statuses[i].Less(in.last.Statuses[j]) })
	in.res = in.c.result()
	return in.res
}

// refreshHolders derives again the status of the policies that name a CA
// certificate holder changed since the previous input (after the update,
// so that removed policies are gone and new ones are in place).
func (in *Incremental) refreshHolders() {
	if len(in.holdersChanged) == 0 {
		return
	}
	c := in.c
	for _, ps := range c.policies {
		if !ps.p.Kind.CARefs.Enabled() || slices.Contains(in.last.Statuses, ps.p.Ref) {
			continue
		}
		for _, h := range in.holdersChanged {
			if referencesHolder(ps.p, h) {
				c.status[ps] = c.policyStatus(ps)
				in.last.Statuses = append(in.last.Statuses, ps.p.Ref)
				break
			}
		}
	}
}

// holderDependents adds to changes, as edits to themselves, the policies
// with object references to a holder that changed: whether they are
// Invalid at their targets depends on it, so they are attached again.
// (CA certificate references change only a status: refreshHolders.)
//
// A policy whose generation alone changed in the same input (regen) is
// attached again with its new parse, and leaves regen.
func (c *computation) holderDependents(changes []policyChange, regen []regeneration, holders []topology.Ref) ([]policyChange, []regeneration) {
	if len(holders) == 0 {
		return changes, regen
	}
	added := false
	for _, ps := range c.policies {
		if len(ps.p.ObjectRefs) == 0 || slices.ContainsFunc(changes, func(ch policyChange) bool { return ch.ref == ps.p.Ref }) {
			continue
		}
		for _, ref := range ps.p.ObjectRefs {
			// A default (no reference given) depends on every holder of
			// its kind in its namespace: one may have gained or lost the
			// label.
			if slices.Contains(holders, ref.Object) || (ref.Default != "" && slices.ContainsFunc(holders, func(h topology.Ref) bool {
				return h.GroupKind() == ref.Object.GroupKind() && h.Namespace == ref.Object.Namespace
			})) {
				changes, regen = c.selfEdit(changes, regen, ps)
				added = true
				break
			}
		}
	}
	if added {
		sort.Slice(changes, func(i, j int) bool { return changes[i].ref.Less(changes[j].ref) })
	}
	return changes, regen
}

// selfEdit adds ps to changes as an edit to itself, so that it is attached
// again; with its new parse when only its generation moved (it then
// leaves regen).
func (c *computation) selfEdit(changes []policyChange, regen []regeneration, ps *pstate) ([]policyChange, []regeneration) {
	p := ps.p
	if i := slices.IndexFunc(regen, func(x regeneration) bool { return x.ps == ps }); i >= 0 {
		p = regen[i].p
		regen = slices.Delete(regen, i, i+1)
	}
	return append(changes, policyChange{ref: ps.p.Ref, old: ps, p: p, src: c.sources[ps.p.Ref]}), regen
}

// claimDependents adds to changes, as edits to themselves, the policies
// on a whole Gateway or ListenerSet of a kind whose rules read listener
// when a changed policy of that kind targets one of its listeners or
// ListenerSets (before or after): the listeners they are judged at
// (claimedBelow) change. The kind's claims and verdicts are read again.
func (c *computation) claimDependents(changes []policyChange, regen []regeneration) ([]policyChange, []regeneration) {
	wholes := map[topology.Ref]bool{} // Gateways and ListenerSets whose claims changed
	for _, ch := range changes {
		k := c.kinds[ch.ref.GroupKind()]
		if k == nil || !k.ValidationsReadListener() {
			continue
		}
		c.listenerVerdicts = nil
		delete(c.claimedListeners, k)
		for _, p := range []*policy.Policy{oldPolicy(ch), ch.p} {
			if p == nil {
				continue
			}
			for _, r := range claimRefs(p) {
				if topology.IsListenerSet(r.GroupKind()) {
					wholes[r.Object()] = true
					wholes[c.listenerSetGateway(r.Object())] = true
				} else {
					wholes[r.Object()] = true
				}
			}
		}
	}
	if len(wholes) == 0 {
		return changes, regen
	}
	added := false
	for _, ps := range c.policies {
		if !ps.p.Kind.ValidationsReadListener() || slices.ContainsFunc(changes, func(ch policyChange) bool { return ch.ref == ps.p.Ref }) {
			continue
		}
		if !slices.ContainsFunc(targetRefsOf(ps.p), func(r topology.Ref) bool { return !r.IsSection() && wholes[r] }) {
			continue
		}
		changes, regen = c.selfEdit(changes, regen, ps)
		added = true
	}
	if added {
		sort.Slice(changes, func(i, j int) bool { return changes[i].ref.Less(changes[j].ref) })
	}
	return changes, regen
}

// backendTLSDependents says why everything must be recomputed when a
// policy with CA certificate references (BackendTLSPolicy) or a holder
// they name changed while some policy judges its backendRefs
// (unresolvedBackendRefs: invalid): such a policy is Invalid when its
// backend's BackendTLSPolicy has no valid CA certificate, and which
// BackendTLSPolicy that is depends on them all. "" otherwise.
func (c *computation) backendTLSDependents(changes []policyChange, holders []topology.Ref) string {
	why := ""
	for _, ch := range changes {
		if (ch.old != nil && ch.old.p.Kind.CARefs.Enabled()) || (ch.p != nil && ch.p.Kind.CARefs.Enabled()) {
			why = fmt.Sprintf("%s has CA certificate references", ch.ref)
			break
		}
	}
	if why == "" && len(holders) > 0 {
		for _, ps := range c.policies {
			if ps.p.Kind.CARefs.Enabled() && slices.ContainsFunc(holders, func(h topology.Ref) bool { return referencesHolder(ps.p, h) }) {
				why = fmt.Sprintf("%s names a changed CA certificate holder", ps.p.Ref)
				break
			}
		}
	}
	if why == "" {
		return ""
	}
	for _, ps := range c.policies {
		if ps.p.Kind.InvalidOnUnresolvedBackendRefs && len(ps.p.BackendRefs) > 0 {
			return why + ", and " + ps.p.Ref.String() + " checks its backends' BackendTLSPolicies"
		}
	}
	return ""
}

// requirementDependents says why everything must be recomputed when a
// policy changed whose kind other kinds' policies read at the listeners
// (policy.Requirement.Of: a SecurityPolicy's GeoIP authorization needs a
// ClientTrafficPolicy's clientIPDetection) while a policy to which such a
// requirement applies is among the policies: its status reads the changed
// kind's effective policies. "" otherwise.
func (c *computation) requirementDependents(changes []policyChange) string {
	read := map[topology.GroupKind][]*policy.Kind{}
	for _, k := range c.kinds {
		for _, r := range k.Requirements {
			if r.Of != (topology.GroupKind{}) && !slices.Contains(read[r.Of], k) {
				read[r.Of] = append(read[r.Of], k)
			}
		}
	}
	if len(read) == 0 {
		return ""
	}
	for _, ch := range changes {
		for _, p := range []*policy.Policy{ch.p, oldPolicy(ch)} {
			if p == nil {
				continue
			}
			for _, k := range read[p.Kind.GroupKind] {
				of := p.Kind.GroupKind
				if i := slices.IndexFunc(c.policies, func(ps *pstate) bool { return ps.p.Kind == k && ps.p.Requires(of) }); i >= 0 {
					return fmt.Sprintf("%s changed, and %s reads %s policies at its listeners", ch.ref, c.policies[i].p.Ref, of.Kind)
				}
			}
		}
	}
	return ""
}

// oldPolicy is the policy a change replaces, nil for an addition.
func oldPolicy(ch policyChange) *policy.Policy {
	if ch.old == nil {
		return nil
	}
	return ch.old.p
}

// regeneration is a policy whose new parse differs from the old in its
// generation only.
type regeneration struct {
	ps *pstate
	p  *policy.Policy
}

// full recomputes everything.
func (in *Incremental) full(objs []Object, reason string) *Result {
	in.c = newComputation(in.opts, objs)
	in.duplicates = false
	in.prev = make(map[topology.Ref]*slot, len(objs))
	in.byPtr = make(map[unsafe.Pointer]*slot, len(objs))
	for _, o := range objs {
		if o.Object != nil {
			s := &slot{obj: o, ref: rawRef(o.Object)}
			if _, dup := in.prev[s.ref]; dup {
				in.duplicates = true
				continue
			}
			in.prev[s.ref] = s
			if id := identity(o.Object); id != nil {
				in.byPtr[id] = s
			}
		}
	}
	in.res = in.c.result()
	in.last = Change{Full: true, Reason: reason}
	return in.res
}

// identity is the address of an object's content: the same while an
// informer cache holds the object unchanged, also through the copies of
// the Unstructured value a List makes (they share the map).
func identity(u *unstructured.Unstructured) unsafe.Pointer {
	if u.Object == nil {
		return nil
	}
	return reflect.ValueOf(u.Object).UnsafePointer()
}

// rawRef identifies an input object as it is (no namespace defaulting).
func rawRef(u *unstructured.Unstructured) topology.Ref {
	return topology.Ref{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// policyChange is a policy added (old nil), removed (p nil) or edited.
type policyChange struct {
	ref topology.Ref
	old *pstate
	p   *policy.Policy
	src string
	// revive, in a WhatIf's reverse change, is the pstate the change
	// replaced (p is its policy): it is put back with its attachments, so
	// that the folds and statuses recorded for them are valid again.
	revive *pstate
}

// diff compares objs with the previous input, which it then replaces. It
// returns the policy changes and the policies whose generation alone
// changed, or a reason to recompute everything. Objects the previous input
// held at the same address are unchanged, and cost a lookup.
func (in *Incremental) diff(objs []Object) (changes []policyChange, regen []regeneration, reason string) {
	c := in.c
	in.stamp++
	stamp := in.stamp
	seen := 0 // slots of the previous input met again
	var fresh []Object
	for _, o := range objs {
		if o.Object == nil {
			continue
		}
		if s, ok := in.byPtr[identity(o.Object)]; ok && s.obj.Object.Object != nil {
			if s.stamp == stamp {
				return nil, nil, fmt.Sprintf("%s appears twice", s.ref)
			}
			s.stamp = stamp
			in.moveSource(s.ref, &s.obj, o.Source)
			seen++
			continue
		}
		fresh = append(fresh, o)
	}
	for _, o := range fresh {
		u := o.Object
		ref := rawRef(u)
		if ref.Kind == "" || ref.Name == "" || u.GetAPIVersion() == "" {
			return nil, nil, fmt.Sprintf("%s has no apiVersion, kind or name", ref)
		}
		s, had := in.prev[ref]
		if had && s.stamp == stamp {
			return nil, nil, fmt.Sprintf("%s appears twice", ref)
		}
		var prevObj *unstructured.Unstructured
		if had {
			in.moveSource(ref, &s.obj, o.Source)
			prevObj = s.obj.Object
			delete(in.byPtr, identity(prevObj))
			s.obj, s.stamp = o, stamp
			seen++
		} else {
			s = &slot{obj: o, ref: ref, stamp: stamp}
			in.prev[ref] = s
		}
		if id := identity(u); id != nil {
			in.byPtr[id] = s
		}
		k, isPolicy := c.kinds[ref.GroupKind()]
		if !isPolicy {
			if had && sameObject(prevObj, u) && !c.delegationAnnotationsChanged(prevObj, u) && !c.statusReadChanged(prevObj, u) {
				continue
			}
			if profiles.IsConfiguration(u) || (had && profiles.IsConfiguration(prevObj)) {
				return nil, nil, fmt.Sprintf("%s changed: it holds an implementation's configuration", ref)
			}
			if c.holderKinds[ref.GroupKind()] {
				c.addHolder(u)
				in.holdersChanged = append(in.holdersChanged, holderRef(u))
				continue
			}
			if c.readsKind(ref.GroupKind()) {
				return nil, nil, fmt.Sprintf("%s changed", ref)
			}
			continue
		}
		if had && sameVersion(prevObj, u) {
			continue
		}
		if ref.Namespace == "" && !c.clusterKinds[ref.GroupKind()] {
			// Compute puts it in the default namespace.
			return nil, nil, fmt.Sprintf("%s has no namespace", ref)
		}
		p := c.parse(o, k)
		ps := c.byRef[ref]
		if ps != nil && samePolicy(ps.p, p) {
			if ps.p.Generation != p.Generation {
				regen = append(regen, regeneration{ps: ps, p: p})
			}
			continue
		}
		changes = append(changes, policyChange{ref: ref, old: ps, p: p, src: o.Source})
	}
	if seen < len(in.prev) {
		// Some objects are gone.
		for ref, s := range in.prev {
			if s.stamp == stamp {
				continue
			}
			delete(in.prev, ref)
			delete(in.byPtr, identity(s.obj.Object))
			if ps := c.byRef[ref]; ps != nil {
				changes = append(changes, policyChange{ref: ref, old: ps})
				continue
			}
			_, isPolicy := c.kinds[ref.GroupKind()]
			if isPolicy && (ref.Namespace != "" || c.clusterKinds[ref.GroupKind()]) {
				continue // it was a duplicate
			}
			if profiles.IsConfiguration(s.obj.Object) {
				return nil, nil, fmt.Sprintf("%s was removed: it held an implementation's configuration", ref)
			}
			if c.holderKinds[ref.GroupKind()] {
				hr := holderRef(s.obj.Object)
				c.removeHolder(hr)
				in.holdersChanged = append(in.holdersChanged, hr)
				continue
			}
			if isPolicy || c.readsKind(ref.GroupKind()) {
				return nil, nil, fmt.Sprintf("%s was removed", ref)
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].ref.Less(changes[j].ref) })
	return changes, regen, ""
}

// moveSource records that the document of an object already computed now
// comes from src: the problems computed before name where it now is.
func (in *Incremental) moveSource(ref topology.Ref, o *Object, src string) {
	if o.Source == src {
		return
	}
	o.Source = src
	if ref.Namespace == "" && !in.c.hasSource(ref) {
		// Compute put a namespaced object without namespace in "default".
		ref.Namespace = DefaultNamespace
	}
	if in.c.hasSource(ref) {
		in.c.sources[ref] = src
		in.c.sourcesMoved, in.moved = true, true
	}
}

func (c *computation) hasSource(ref topology.Ref) bool {
	_, ok := c.sources[ref]
	return ok
}

// readsKind reports whether objects of gk (not a policy kind) are read by
// the computation.
func (c *computation) readsKind(gk topology.GroupKind) bool {
	if gk == crdGroupKind || gatewayapi.Handles(gk) {
		return true
	}
	if gk == serviceImport && c.backendSections != nil {
		return true // its ports name the sections of ancestors
	}
	if slices.Contains(profiles.ClassParametersKinds, gk) && c.needsDataPlanes() {
		return true // it may merge a GatewayClass's Gateways
	}
	if _, req := c.requiredKinds[gk]; req {
		return true // whether one exists says whether policies are programmed
	}
	_, bad := c.invalidKinds[gk]
	return bad
}

// sameVersion reports whether two copies of an object carry the same
// resourceVersion (so the same content).
func sameVersion(a, b *unstructured.Unstructured) bool {
	rv := a.GetResourceVersion()
	return rv != "" && rv == b.GetResourceVersion()
}

// sameObject reports whether the engine reads the same from two copies of
// a non-policy object: everything but status and bookkeeping metadata.
// Annotations count only on CRDs (they describe policy kinds), on
// Gateways and GatewayClasses, Istio's inbound binding, and on Services,
// ServiceEntries and Namespaces its canary waypoint weight; of a Gateway's
// status, whether istiod would take it for a waypoint yet
// (waypointReadiness). Our own Affected annotations on routes, and our
// conditions in a Gateway's status, therefore cost no recomputation.
func sameObject(a, b *unstructured.Unstructured) bool {
	if a == b || sameVersion(a, b) {
		return true
	}
	for k, v := range a.Object {
		if k == "status" || k == "metadata" {
			continue
		}
		if !jsonEqual(v, b.Object[k]) {
			return false
		}
	}
	for k := range b.Object {
		if _, ok := a.Object[k]; !ok && k != "status" && k != "metadata" {
			return false
		}
	}
	if a.GetName() != b.GetName() || a.GetNamespace() != b.GetNamespace() || a.GetGeneration() != b.GetGeneration() ||
		!a.GetCreationTimestamp().Time.Equal(b.GetCreationTimestamp().Time) ||
		!reflect.DeepEqual(a.GetLabels(), b.GetLabels()) ||
		// An object starting to be deleted no longer counts where its
		// existence is read (a required object: policy.Kind.RequiredObjects).
		(a.GetDeletionTimestamp() == nil) != (b.GetDeletionTimestamp() == nil) {
		return false
	}
	switch rawRef(a).GroupKind() {
	case crdGroupKind:
		if !reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) {
			return false
		}
	case policy.KindIssuer, policy.KindClusterIssuer:
		// Whether an issuer is Ready is read from its status.
		if holderCondsDigest(a) != holderCondsDigest(b) {
			return false
		}
	case topology.KindGateway, topology.KindGatewayClass:
		// Istio's waypoint binding reads an annotation of either and a
		// Gateway's readiness from its status.
		x, hadX := a.GetAnnotations()[inboundBindingAnnotation]
		y, hadY := b.GetAnnotations()[inboundBindingAnnotation]
		if x != y || hadX != hadY || waypointReadiness(a) != waypointReadiness(b) {
			return false
		}
	case topology.KindService, topology.KindServiceEntry, topology.KindNamespace:
		// A canary waypoint's weight.
		x, hadX := a.GetAnnotations()[canaryWeightAnnotation]
		y, hadY := b.GetAnnotations()[canaryWeightAnnotation]
		if x != y || hadX != hadY {
			return false
		}
	}
	return true
}

// jsonEqual is reflect.DeepEqual for the values of unstructured objects
// (maps, slices, strings, numbers, booleans, nil), several times faster:
// after a burst of status and annotation writes, the first computation
// compares the content of every object written (25,000 in the large scale
// case), and reflection was most of its time. Other types, which decoding
// never yields, fall back to reflect.DeepEqual.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

// samePolicy reports whether two parses of a policy say the same, the
// generation aside. Every field of policy.Policy the engine reads must be
// compared here (a field left out makes an edit of it go unseen: the
// MergePolicy edits of TestIncrementalMatchesCompute found mergeType).
func samePolicy(a, b *policy.Policy) bool {
	return a.Ref == b.Ref && a.Kind == b.Kind && a.Created.Equal(b.Created) && a.Weight == b.Weight && a.Stanza == b.Stanza &&
		a.Strategy == b.Strategy && a.MergeType == b.MergeType && a.UnmodelledTargeting == b.UnmodelledTargeting &&
		reflect.DeepEqual(a.Targets, b.Targets) && reflect.DeepEqual(a.Untargeted, b.Untargeted) &&
		reflect.DeepEqual(a.Spec, b.Spec) && reflect.DeepEqual(a.Problems, b.Problems) && reflect.DeepEqual(a.Ignored, b.Ignored)
}

// hasVirtualTarget reports whether a policy names a target of a kind the
// topology does not know: such targets are nodes of their own, so adding
// or removing the policy changes the topology.
func hasVirtualTarget(p *policy.Policy) bool {
	if p == nil || p.Invalid() {
		return false
	}
	for _, t := range p.Targets {
		if isVirtual(p, t) {
			return true
		}
	}
	return false
}

// cannotUpdate returns why changes need a whole computation, or "".
func (c *computation) cannotUpdate(changes []policyChange) string {
	for _, ch := range changes {
		if (ch.old != nil && hasVirtualTarget(ch.old.p)) || hasVirtualTarget(ch.p) {
			return fmt.Sprintf("%s targets a virtual kind", ch.ref)
		}
		// The verdicts of a kind that reads the paths through other
		// controllers' Gateways (withWaiting) depend on every policy on
		// those paths, which no context holds.
		if k := c.kinds[ch.ref.GroupKind()]; k != nil && k.OtherControllersNotProgrammed && c.hasUnservedGateway(k) {
			return fmt.Sprintf("%s is of a kind whose verdicts read the paths through other controllers' Gateways", ch.ref)
		}
		// Policies naming backends are ancestors of those backends'
		// policies (backendUsers is built once per computation).
		if c.backendSections != nil && ((ch.old != nil && len(ch.old.p.BackendRefs) > 0) || (ch.p != nil && len(ch.p.BackendRefs) > 0)) {
			return fmt.Sprintf("%s names backends", ch.ref)
		}
	}
	// Attachments of removed policies keep their ids; start afresh once
	// they are as many as the live ones.
	if c.dead > 1024 && c.dead > len(c.atts)-c.dead {
		return "compaction"
	}
	return ""
}

// update applies policy changes: per kind, the attachments are moved, the
// stacks below the levels that changed are rebuilt, the stacks holding
// those levels folded again, and the status of every policy sharing a
// context with them derived again.
func (c *computation) update(changes []policyChange) Change {
	ch := Change{Targets: map[topology.GroupKind][]topology.Ref{}}
	byKind := map[*policy.Kind][]policyChange{}
	for _, x := range changes {
		ch.Policies = append(ch.Policies, x.ref)
		k := c.kinds[x.ref.GroupKind()]
		byKind[k] = append(byKind[k], x)
	}
	touched := map[*pstate]bool{}
	for _, k := range c.sortedKinds {
		xs := byKind[k]
		if len(xs) == 0 {
			continue
		}
		targets := c.updateKind(k, xs, touched)
		refs := make([]topology.Ref, len(targets))
		for i, n := range targets {
			refs[i] = c.graph.Node(n).Ref
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
		ch.Targets[k.GroupKind] = refs
	}
	for ps := range touched {
		if _, live := c.status[ps]; live {
			if st, ok := c.undo.restoreStatus(ps); ok {
				c.status[ps] = st
			} else {
				c.undo.keepStatus(ps, c.status[ps])
				c.status[ps] = c.policyStatus(ps)
			}
			ch.Statuses = append(ch.Statuses, ps.p.Ref)
		}
	}
	sort.Slice(ch.Statuses, func(i, j int) bool { return ch.Statuses[i].Less(ch.Statuses[j]) })
	return ch
}

// updateKind applies the changes of one kind and returns the effective
// targets it recomputed. Policies whose status may have changed are added
// to touched.
func (c *computation) updateKind(k *policy.Kind, xs []policyChange, touched map[*pstate]bool) []topology.NodeID {
	d := c.dps[k]
	dirtyNodes := map[topology.NodeID]bool{}
	dirtyNs := map[int32]bool{}
	wasEmpty := map[level]bool{} // per level changed, before the update
	mark := func(l level, empty bool) {
		if l < 0 {
			dirtyNs[int32(-l-1)] = true
		} else {
			dirtyNodes[topology.NodeID(l)] = true
		}
		if _, ok := wasEmpty[l]; !ok {
			wasEmpty[l] = empty
		}
	}
	for _, x := range xs {
		if x.old != nil {
			for _, a := range x.old.atts {
				l, before, _ := d.detach(a)
				mark(l, before == 0)
				a.dead = true
				c.dead++
			}
			c.removePolicy(x.old)
		}
		if x.p != nil {
			ps := x.revive
			if ps != nil {
				for _, a := range ps.atts {
					a.dead = false
					c.dead--
				}
			} else {
				ps = &pstate{p: x.p}
			}
			c.sources[x.ref] = x.src
			c.insertPolicy(ps)
			touched[ps] = true
			if x.revive == nil {
				c.resolve(ps)
			}
			for _, a := range ps.atts {
				l, before := d.reattach(a)
				mark(l, before == 0)
			}
		}
	}
	if k.SameLevel == policy.SameLevelOldestWins && (k.Class == policy.Inherited || k.TiesNotRejected) {
		// Who is Conflicted at a level does not wait for contexts (see
		// levelWinner), nor does the note of a policy created in the same
		// second as the oldest there (tiedWinner): every policy of a
		// changed level is re-derived.
		for n := range dirtyNodes {
			for _, a := range d.atNode[n] {
				touched[a.pol] = true
			}
		}
		for i := range dirtyNs {
			for _, a := range d.atNs[i] {
				touched[a.pol] = true
			}
		}
	}
	if k.OverriddenByPresence {
		// A policy is overridden by presence on the levels below its
		// target even where no context passes (see replacedBelow): the
		// policies above a changed level are derived again.
		var start []topology.NodeID
		for n := range dirtyNodes {
			start = append(start, n)
		}
		c.graph.Walk(start, topology.Parents, func(n topology.NodeID, _ *topology.Node) bool {
			for _, a := range d.atNode[n] {
				touched[a.pol] = true
			}
			return true
		})
	}
	// Stacks are sequences of levels with policies: they change only when
	// a level gains its first policy or loses its last.
	structural := false
	for l, empty := range wasEmpty {
		if l < 0 {
			structural = structural || empty != (len(d.atNs[-l-1]) == 0)
		} else {
			structural = structural || empty != (len(d.atNode[topology.NodeID(l)]) == 0)
		}
	}
	d.touched, d.beforeAff, d.beforeLoss = touched, map[affKey]bool{}, map[lossKey]bool{}
	defer func() {
		d.settle()
		for _, sr := range d.unused {
			if sr.uses == 0 && d.memo[sr.id] == sr {
				d.evict(sr.id)
			}
		}
		d.touched, d.beforeAff, d.beforeLoss, d.unused = nil, nil, nil, nil
	}()

	if k.ConflictScopePolicy {
		// A policy rejected at one target leaves all of them, and no
		// longer rejects others elsewhere: the change can reach any
		// target of the kind.
		return c.recomputeKind(k, touched)
	}
	if k.Class == policy.Direct {
		var out []topology.NodeID
		done := map[topology.NodeID]bool{}
		for n := range dirtyNodes {
			for _, t := range d.directTargets(n) {
				if done[t] {
					continue
				}
				done[t] = true
				out = append(out, t)
			}
		}
		// Forget the folds of every stack the targets had or will have
		// (their levels' attachments changed), then compute them again.
		for _, t := range out {
			if old := d.targets[t]; old != nil {
				for _, sr := range old.stacks {
					d.forget(sr.id)
				}
			}
			for _, st := range d.directStacks(t) {
				d.forget(st)
			}
		}
		for _, t := range out {
			d.setTarget(t, d.directTarget(t))
		}
		return out
	}
	if d.useNs != d.wantNs() {
		// Namespace levels appear on every path or leave them all.
		return c.recomputeKind(k, touched)
	}
	if d.viaGateway != (d.refusing > 0) {
		// Entries keep their path's Gateway, or stop keeping it.
		return c.recomputeKind(k, touched)
	}
	if d.viaGateway {
		// Which of a level's attachments a Gateway refuses decides its
		// cut levels (cutLevel), not only whether it is empty.
		structural = true
	}
	seeds := make(map[topology.NodeID]bool, len(dirtyNodes))
	for n := range dirtyNodes {
		seeds[n] = true
		// A Gateway listener's level is in the stacks of the ListenerSet
		// listeners of its name too (gatewaySectionLevel).
		for _, m := range d.listenerSetSections(n) {
			seeds[m] = true
		}
	}
	if len(dirtyNs) > 0 {
		names := map[string]bool{}
		for i := range dirtyNs {
			names[d.nsNames[i]] = true
		}
		for n := range c.graph.Len() {
			r := c.graph.Node(topology.NodeID(n)).Ref
			// The objects of the namespace, and the Namespace itself (an
			// effective target of kinds that list it).
			if (!r.IsSection() && names[r.Namespace]) || (r.GroupKind() == topology.KindNamespace && names[r.Name]) {
				seeds[topology.NodeID(n)] = true
			}
		}
	}
	below := c.descendants(seeds)
	if structural {
		// Earlier Results walk their paths in the entries table they were
		// built with: change a copy.
		d.entries = slices.Clone(d.entries)
		d.run(below)
	}
	// Forget the folds of stacks holding a level that changed: only
	// targets below it carry them.
	checked := map[stackID]bool{}
	targets := d.effectiveNodes(below)
	for _, n := range targets {
		for _, e := range d.entries[n] {
			if e.stack == 0 || checked[e.stack] {
				continue
			}
			checked[e.stack] = true
			for _, l := range d.trie.levels(e.stack) {
				if d.levelHolds(l, dirtyNodes, dirtyNs) {
					d.forget(e.stack)
					break
				}
			}
		}
	}
	// Targets that had contexts and no longer do are below too: collect
	// visits every effective target below.
	d.collect(targets)
	return targets
}

// detach removes an attachment from its level's list and returns the
// level and the list's lengths before and after.
func (d *kindDP) detach(a *attachment) (l level, before, after int) {
	if a.nsName != "" && d.kind.Class == policy.Inherited {
		i := d.nsLevel(a.nsName)
		before = len(d.atNs[i])
		d.atNs[i] = slices.DeleteFunc(d.atNs[i], func(b *attachment) bool { return b == a })
		return level(-(i + 1)), before, len(d.atNs[i])
	}
	list := d.atNode[a.node]
	before = len(list)
	list = slices.DeleteFunc(list, func(b *attachment) bool { return b == a })
	if a.notVia != nil && len(list) < before {
		d.refusing--
	}
	if len(list) == 0 {
		delete(d.atNode, a.node)
	} else {
		d.atNode[a.node] = list
	}
	return level(a.node), before, len(list)
}

// reattach places an attachment at its level, keeping the level's order,
// and returns the level and the list's length before.
func (d *kindDP) reattach(a *attachment) (l level, before int) {
	l, list := d.place(a)
	sortSameLevel(list)
	return l, len(list) - 1
}

// recomputeKind recomputes a kind from scratch (its tallies reset); every
// policy of the kind is touched. It returns the effective targets.
func (c *computation) recomputeKind(k *policy.Kind, touched map[*pstate]bool) []topology.NodeID {
	old := c.dps[k]
	for _, a := range c.atts {
		if a.pol.p.Kind == k {
			a.reach, a.conflicted, a.conflictedBy, a.lostTo, a.affects, a.lossMsg = Reach{}, 0, nil, nil, nil, nil
		}
	}
	for _, ps := range c.policies {
		if ps.p.Kind == k {
			ps.reach, ps.lossMsg, ps.affects = Reach{}, nil, nil
			touched[ps] = true
		}
	}
	c.computeKind(k)
	seen := map[topology.NodeID]bool{}
	var out []topology.NodeID
	for _, l := range [][]topology.NodeID{old.order, c.dps[k].order} {
		for _, n := range l {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// descendants returns the nodes reachable from seeds, seeds included.
func (c *computation) descendants(seeds map[topology.NodeID]bool) map[topology.NodeID]bool {
	out := make(map[topology.NodeID]bool, len(seeds))
	stack := make([]topology.NodeID, 0, len(seeds))
	for n := range seeds {
		out[n] = true
		stack = append(stack, n)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// Unadmitted children too: the paths of some kinds run along them.
		for _, ch := range topology.AllChildren(c.graph.Node(n)) {
			if !out[ch] {
				out[ch] = true
				stack = append(stack, ch)
			}
		}
	}
	return out
}

// insertPolicy and removePolicy keep c.policies sorted by ref.
func (c *computation) insertPolicy(ps *pstate) {
	i := sort.Search(len(c.policies), func(i int) bool { return !c.policies[i].p.Ref.Less(ps.p.Ref) })
	c.policies = slices.Insert(c.policies, i, ps)
	c.byRef[ps.p.Ref] = ps
	c.status[ps] = nil // live; derived after the update
}

func (c *computation) removePolicy(ps *pstate) {
	c.undo.keepStatus(ps, c.status[ps])
	i := sort.Search(len(c.policies), func(i int) bool { return !c.policies[i].p.Ref.Less(ps.p.Ref) })
	if i < len(c.policies) && c.policies[i] == ps {
		c.policies = slices.Delete(c.policies, i, i+1)
	}
	if c.byRef[ps.p.Ref] == ps {
		delete(c.byRef, ps.p.Ref)
	}
	delete(c.status, ps)
}
