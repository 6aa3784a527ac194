package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// targetKind says how a kind of affected object carries the Affected
// condition.
type targetKind struct {
	// conditions: the kind has status.conditions (metav1.Condition-like)
	// behind a status subresource; otherwise the annotation is used.
	conditions bool
	// cap is the most conditions the API accepts (0: no limit). Past it,
	// the annotation is used instead, with an Event.
	cap int
	// noObservedGeneration: the kind's conditions have no
	// observedGeneration field (the API server would drop it, and the
	// comparison would never settle).
	noObservedGeneration bool
}

// targetKinds are the kinds with status.conditions; every other kind gets
// the annotation (GEP-713 "Target object status").
var targetKinds = map[topology.GroupKind]targetKind{
	topology.KindService:      {conditions: true},
	topology.KindNamespace:    {conditions: true, noObservedGeneration: true},
	topology.KindGateway:      {conditions: true, cap: 8},
	topology.KindListenerSet:  {conditions: true, cap: 8},
	topology.KindXListenerSet: {conditions: true, cap: 8},
	topology.KindGatewayClass: {conditions: true, cap: 8},
}

// targetDesired are the Affected conditions an object should carry,
// sorted by type.
type targetDesired struct {
	conditions []engine.Condition
}

// fingerprint identifies the desired content (nil: none).
func (d *targetDesired) fingerprint() string {
	if d == nil {
		return ""
	}
	b, _ := json.Marshal(d.conditions)
	return string(b)
}

// desiredTargets derives, from a computation, the Affected conditions of
// every affected object for the owned kinds (with only set, of the objects
// it holds). A section (a listener, a route rule, a Service port) is
// reported on its object.
func (c *Controller) desiredTargets(res *engine.Result, owned map[topology.GroupKind]bool, only map[objKey]bool) map[objKey]*targetDesired {
	type kk struct {
		obj  objKey
		kind string
	}
	merged := map[kk][]*engine.Affected{}
	for _, af := range res.Affected {
		if !owned[af.Kind.GroupKind] {
			continue
		}
		obj := keyOfRef(af.Target.Object())
		if only != nil && !only[obj] {
			continue
		}
		k := kk{obj, af.Condition.Type}
		merged[k] = append(merged[k], af)
	}
	out := map[objKey]*targetDesired{}
	for k, afs := range merged {
		cond := afs[0].Condition
		if len(afs) > 1 {
			// Several sections of one object: one condition naming every
			// policy, in the engine's words.
			seen := map[topology.Ref]bool{}
			var pols []topology.Ref
			for _, af := range afs {
				for _, p := range af.Policies {
					if !seen[p] {
						seen[p] = true
						pols = append(pols, p)
					}
				}
			}
			sort.Slice(pols, func(i, j int) bool { return pols[i].Less(pols[j]) })
			names := make([]string, len(pols))
			for i, p := range pols {
				names[i] = strings.TrimPrefix(p.Namespace+"/"+p.Name, "/")
			}
			cond.Message = fmt.Sprintf("Affected by %s %s", afs[0].Kind.GroupKind.Kind, strings.Join(names, ", "))
		}
		if targetKinds[k.obj.gk()].noObservedGeneration {
			cond.ObservedGeneration = 0
		}
		d := out[k.obj]
		if d == nil {
			d = &targetDesired{}
			out[k.obj] = d
		}
		d.conditions = append(d.conditions, cond)
	}
	for _, d := range out {
		sort.Slice(d.conditions, func(i, j int) bool { return d.conditions[i].Type < d.conditions[j].Type })
	}
	return out
}

// queueTargets queues the objects whose Affected conditions or annotations
// differ from desired: those desired, and those that carry ours (to remove
// what is no longer true). objs is the computation's input, so the
// comparison is with the same cache state.
func (c *Controller) queueTargets(objs []engine.Object, desired map[objKey]*targetDesired) {
	n := 0
	seen := map[objKey]bool{}
	for _, o := range objs {
		k := keyOf(o.Object)
		if k.gk() == (topology.GroupKind{Group: crdGVK.Group, Kind: crdGVK.Kind}) {
			continue
		}
		if desired[k] == nil && !c.carriesOurs(o.Object) {
			continue
		}
		seen[k] = true
		if p := c.planTarget(o.Object, desired[k]); p.any() {
			c.targets.Add(k)
			n++
		}
	}
	// Desired objects not in the input are not watched (virtual targets,
	// kinds the cluster does not serve): nothing to write.
	if n > 0 {
		c.log.V(1).Info("queued affected objects", "count", n)
	}
	c.observeQueues()
}

// queueChangedTargets is queueTargets for the objects whose targets (or
// sections) the engine recomputed in its last, incremental, computation:
// no other object's Affected conditions can have changed.
func (c *Controller) queueChangedTargets(ctx context.Context, change engine.Change, desired map[objKey]*targetDesired) {
	seen := map[objKey]bool{}
	n := 0
	for _, refs := range change.Targets {
		for _, r := range refs {
			k := keyOfRef(r.Object())
			if seen[k] {
				continue
			}
			seen[k] = true
			if c.effectiveNeedsWrite(ctx, k) {
				c.targets.Add(k)
				n++
				continue
			}
			w := c.watchOf(k.gk())
			if w == nil {
				continue // not watched (a virtual target): no condition to write
			}
			u, err := c.cached(ctx, w.gvk, k)
			if err != nil || u == nil {
				continue
			}
			if p := c.planTarget(u, desired[k]); p.any() {
				c.targets.Add(k)
				n++
			}
		}
	}
	if n > 0 {
		c.log.V(1).Info("queued affected objects", "count", n)
	}
	c.observeQueues()
}

// carriesOurs reports whether an object has one of our conditions or
// annotations.
func (c *Controller) carriesOurs(u *unstructured.Unstructured) bool {
	for k := range u.GetAnnotations() {
		if c.isOurs(k) {
			return true
		}
	}
	if _, ok := targetKinds[keyOf(u).gk()]; !ok {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cd := range maps(conds) {
		if t, _ := cd["type"].(string); c.isOurs(t) {
			return true
		}
	}
	return false
}

// targetPlan is what must be written on one object.
type targetPlan struct {
	// status is the merge patch of the status subresource (nil: none).
	status map[string]any
	// annotations maps annotation keys to "true" (add) or nil (remove).
	annotations map[string]any
	// overflow are the condition types that do not fit in the object's
	// conditions and go to annotations instead.
	overflow []string
	others   int
}

func (p *targetPlan) any() bool { return p.status != nil || len(p.annotations) > 0 }

// planTarget compares an object with its desired Affected conditions.
func (c *Controller) planTarget(u *unstructured.Unstructured, d *targetDesired) *targetPlan {
	p := &targetPlan{}
	var want []engine.Condition
	if d != nil {
		want = d.conditions
	}
	tk, hasConds := targetKinds[keyOf(u).gk()]
	var inConds, asAnnotations []engine.Condition
	if hasConds && tk.conditions {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var others, oldOurs []map[string]any
		for _, cd := range maps(conds) {
			if t, _ := cd["type"].(string); c.isOurs(t) {
				oldOurs = append(oldOurs, cd)
			} else {
				others = append(others, cd)
			}
		}
		p.others = len(others)
		room := len(want)
		if tk.cap > 0 {
			room = min(room, max(tk.cap-len(others), 0))
		}
		inConds, asAnnotations = want[:room], want[room:]
		newOurs := conditionMaps(inConds, 0, oldOurs, time.Now())
		if !reflect.DeepEqual(normConditions(oldOurs), normConditions(newOurs)) || len(oldOurs) != len(newOurs) {
			all := make([]any, 0, len(others)+len(newOurs))
			for _, o := range others {
				all = append(all, o)
			}
			for _, n := range newOurs {
				all = append(all, n)
			}
			p.status = map[string]any{
				"metadata": map[string]any{"resourceVersion": u.GetResourceVersion()},
				"status":   map[string]any{"conditions": all},
			}
		}
		for _, cd := range asAnnotations {
			p.overflow = append(p.overflow, cd.Type)
		}
	} else {
		asAnnotations = want
	}
	wantAnn := map[string]bool{}
	for _, cd := range asAnnotations {
		wantAnn[cd.Type] = true
	}
	have := u.GetAnnotations()
	for k := range have {
		if c.isOurs(k) && !wantAnn[k] {
			p.annotation(k, nil)
		}
	}
	for k := range wantAnn {
		if have[k] != "true" {
			p.annotation(k, "true")
		}
	}
	return p
}

func (p *targetPlan) annotation(k string, v any) {
	if p.annotations == nil {
		p.annotations = map[string]any{}
	}
	p.annotations[k] = v
}

// processTarget is the target worker's loop body: it yields to the main
// queue (policy status first), waits for the write rate limiter, and
// writes one object.
func (c *Controller) processTarget(ctx context.Context) bool {
	k, shutdown := c.targets.Get()
	if shutdown {
		return false
	}
	c.targetBusy.Add(1)
	defer func() {
		c.targets.Done(k)
		c.targetBusy.Add(-1)
		c.observeQueues()
	}()
	c.yield(ctx)
	if err := errors.Join(c.syncTarget(ctx, k), c.syncEffective(ctx, k)); err != nil {
		if ctx.Err() == nil {
			c.log.Error(err, "writing Affected condition or EffectivePolicy; retrying", "object", k.String())
			c.targets.AddRateLimited(k)
		}
		return true
	}
	c.targets.Forget(k)
	return true
}

// maxYield bounds how long target writes wait for the main queue, so that
// a stream of events cannot starve them.
const maxYield = 2 * time.Second

// yield waits while the main worker has work, up to maxYield.
func (c *Controller) yield(ctx context.Context) {
	deadline := time.Now().Add(maxYield)
	for (c.busy.Load() || c.queue.Len() > 0) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// syncTarget writes one object's Affected conditions and annotations when
// they differ from the last computation's.
func (c *Controller) syncTarget(ctx context.Context, k objKey) error {
	if !c.synced.Load() {
		// Before the first computation nothing is desired yet: writing
		// now would remove conditions that are still true.
		return nil
	}
	w := c.watchOf(k.gk())
	if w == nil {
		return nil
	}
	c.mu.Lock()
	d := c.desired[k]
	c.mu.Unlock()
	useFresh := false
	var seen []string
	for attempt := 0; ; attempt++ {
		var u *unstructured.Unstructured
		var err error
		if useFresh {
			u, err = c.fresh(ctx, w.gvk, k)
		} else {
			u, err = c.cached(ctx, w.gvk, k)
		}
		if err != nil || u == nil {
			return err
		}
		if !useFresh && c.isStale(k, u.GetResourceVersion()) {
			return nil // our last write is on its way to the cache
		}
		p := c.planTarget(u, d)
		if !p.any() || c.unsettled(k, d.fingerprint()) {
			return nil
		}
		seen = append(seen, u.GetResourceVersion())
		if p.status != nil {
			if err := c.waitWrite(ctx); err != nil {
				return err
			}
			stored, err := c.patch(ctx, w.gvk, k, p.status, true)
			if err == nil {
				u = stored
			}
			if apierrors.IsConflict(err) && attempt < maxConflictRetries {
				useFresh = true
				continue
			}
			if apierrors.IsNotFound(err) {
				return nil
			}
			if refusedWrite(err) {
				c.markRejected(u, w.gvk, k, d.fingerprint(), "Affected condition", err)
				return nil
			}
			if err != nil {
				return err
			}
		}
		if len(p.annotations) > 0 {
			if err := c.waitWrite(ctx); err != nil {
				return err
			}
			// Annotations merge key by key: no precondition needed.
			stored, err := c.patch(ctx, w.gvk, k, map[string]any{"metadata": map[string]any{"annotations": p.annotations}}, false)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if refusedWrite(err) {
				c.markRejected(u, w.gvk, k, d.fingerprint(), "Affected annotation", err)
				return nil
			}
			if err != nil {
				return err
			}
			c.reportOverflow(u, w.gvk, p)
			u = stored
		}
		c.markStale(k, seen...)
		if c.planTarget(u, d).any() {
			// The API server dropped part of what we wrote: writing it
			// again would loop.
			c.markUnsettled(k, d.fingerprint(), "Affected condition")
		}
		return nil
	}
}

// reportOverflow logs and records an Event when Affected conditions went to
// annotations because the object's conditions are full.
func (c *Controller) reportOverflow(u *unstructured.Unstructured, gvk schema.GroupVersionKind, p *targetPlan) {
	var added []string
	for _, t := range p.overflow {
		if v, ok := p.annotations[t]; ok && v != nil {
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return
	}
	cap := targetKinds[keyOf(u).gk()].cap
	note := fmt.Sprintf("status.conditions is full (%d of at most %d used by other writers): %s set as annotation instead",
		p.others, cap, strings.Join(added, ", "))
	c.log.Info("Affected condition set as annotation: conditions full", "object", keyOf(u).String(), "types", added, "otherConditions", p.others, "cap", cap)
	ref := u.DeepCopy()
	ref.SetGroupVersionKind(gvk)
	c.recorder.Eventf(ref, nil, "Warning", "AffectedConditionOverflow", "SetAnnotation", "%s", note)
}
