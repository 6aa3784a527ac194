package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// maxConflictRetries bounds the fresh-read-and-retry loop of one write.
const maxConflictRetries = 5

// maxMessage is metav1.Condition's message limit.
const maxMessage = 32768

// Messages of the Programmed condition the controller sets.
const (
	msgReconciling   = "Policy is being programmed"
	msgProgramFailed = "Programming failed: "
)

// ownedPolicyConditions are the top-level condition types this controller
// writes on policies; any other type is another writer's and kept.
var ownedPolicyConditions = map[string]bool{
	engine.CondAccepted:       true,
	engine.CondProgrammed:     true,
	engine.ConditionTruncated: true,
	// Said only while a policy of a kind with ancestor limit skip is left
	// out somewhere: owned, so that it goes when that ends.
	engine.ConditionAncestorLimit: true,
}

// policyDesired is the status an owned policy should carry, as far as this
// controller is concerned.
type policyDesired struct {
	key objKey
	gvk schema.GroupVersionKind
	ref topology.Ref
	// generation is the policy's generation the computation read, written
	// as observedGeneration; 0 (left out) when the kind has no status
	// subresource, where every status write bumps the generation.
	generation  int64
	subresource bool
	// ancestorsRequired says the kind's schema requires status.ancestors:
	// an empty list is then written as [], not removed.
	ancestorsRequired bool
	conditions        []engine.Condition
	ancestors         []engine.Ancestor
	omitted           int
}

// desiredPolicies derives the status of every policy of an owned kind
// (with only set, of those it holds) from a computation and the outcome of
// Program: progErr, or pending while it runs.
func (c *Controller) desiredPolicies(res *engine.Result, owned map[topology.GroupKind]bool, crds map[topology.GroupKind]*crdInfo, progErr error, pending bool, only map[topology.Ref]bool) []*policyDesired {
	var out []*policyDesired
	for _, st := range res.Policies {
		p := st.Policy
		gk := p.Ref.GroupKind()
		if !owned[gk] || (only != nil && !only[p.Ref]) {
			continue
		}
		w := c.watchOf(gk)
		if w == nil {
			continue
		}
		if len(st.Ancestors) == 0 && len(st.UnreadTargets) > 0 {
			// Its targets could not be read: not judged, its status is
			// left as it is.
			continue
		}
		d := &policyDesired{key: keyOfRef(p.Ref), gvk: w.gvk, ref: p.Ref, omitted: st.AncestorsOmitted}
		if ci := crds[gk]; ci != nil && ci.statusSubresource {
			d.subresource = true
			d.generation = p.Generation
		}
		if ci := crds[gk]; ci != nil {
			d.ancestorsRequired = ci.statusAncestorsRequired
		}
		perr := policyError(progErr, p.Ref)
		if ci := crds[gk]; ci == nil || ci.statusConditions {
			// Else the kind's status has ancestors only (Envoy Gateway):
			// the summary would be pruned, so it is not written.
			d.conditions = programmed(st.Conditions, perr, pending)
		}
		for _, a := range st.Ancestors {
			d.ancestors = append(d.ancestors, engine.Ancestor{Ref: a.Ref, Conditions: programmed(a.Conditions, perr, pending)})
		}
		out = append(out, d)
	}
	return out
}

// policyError is the Program error for one policy.
func policyError(err error, ref topology.Ref) error {
	var pe PolicyErrors
	if errors.As(err, &pe) {
		return pe[ref]
	}
	return err
}

// programmed turns the engine's Programmed=True (computed as if programming
// succeeded) into False/Reconciling while Program runs or when it failed.
// Overridden policies are left alone: there is nothing of theirs to program.
func programmed(conds []engine.Condition, err error, pending bool) []engine.Condition {
	out := make([]engine.Condition, len(conds))
	copy(out, conds)
	if err == nil && !pending {
		return out
	}
	for i := range out {
		if out[i].Type != engine.CondProgrammed || out[i].Status != string(metav1.ConditionTrue) {
			continue
		}
		out[i].Status, out[i].Reason, out[i].Message = string(metav1.ConditionFalse), engine.ReasonReconciling, msgReconciling
		if err != nil {
			out[i].Message = msgProgramFailed + err.Error()
		}
	}
	return out
}

// writePolicies writes the policies whose status differs from desired.
// With only (not nil), a policy is written only if its status also differs
// from only's entry for it: the Reconciling pass touches only the policies
// whose status is about to change anyway.
func (c *Controller) writePolicies(ctx context.Context, desired, only []*policyDesired) error {
	var filter map[objKey]*policyDesired
	if only != nil {
		filter = map[objKey]*policyDesired{}
		for _, d := range only {
			filter[d.key] = d
		}
	}
	now := time.Now()
	var (
		errs []error
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	// As many writers as for affected objects, within the same budget.
	work := make(chan *policyDesired)
	for range max(c.opts.Writers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				if err := c.writePolicy(ctx, d, now); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: %w", d.key, err))
					mu.Unlock()
				}
			}
		}()
	}
	defer func() {
		if work != nil { // returned early: let the writers finish
			close(work)
			wg.Wait()
		}
	}()
	for _, d := range desired {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if filter != nil {
			f := filter[d.key]
			if f == nil {
				continue
			}
			obj, err := c.cached(ctx, d.gvk, d.key)
			if err != nil || obj == nil {
				continue
			}
			if _, changed := mergePolicyStatus(obj, f, c.opts.ControllerName, now); !changed {
				continue
			}
		}
		work <- d
	}
	close(work)
	wg.Wait()
	work = nil
	return errors.Join(errs...)
}

// cached reads an object from the cache; nil when it is not there.
func (c *Controller) cached(ctx context.Context, gvk schema.GroupVersionKind, k objKey) (*unstructured.Unstructured, error) {
	u := protoFor(gvk)
	if err := c.cache.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// fresh reads an object from the API server; nil when it does not exist.
func (c *Controller) fresh(ctx context.Context, gvk schema.GroupVersionKind, k objKey) (*unstructured.Unstructured, error) {
	u := protoFor(gvk)
	if err := c.api.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// writePolicy patches one policy's status when it differs from desired,
// from the cache first, and from fresh reads after a conflict.
func (c *Controller) writePolicy(ctx context.Context, d *policyDesired, now time.Time) error {
	useFresh := false
	var seen []string
	for attempt := 0; ; attempt++ {
		var obj *unstructured.Unstructured
		var err error
		if useFresh {
			obj, err = c.fresh(ctx, d.gvk, d.key)
		} else {
			obj, err = c.cached(ctx, d.gvk, d.key)
		}
		if err != nil || obj == nil {
			return err
		}
		if !useFresh && c.isStale(d.key, obj.GetResourceVersion()) {
			return nil // our last write is on its way to the cache
		}
		status, changed := mergePolicyStatus(obj, d, c.opts.ControllerName, now)
		if !changed || c.unsettled(d.key, d.fingerprint()) {
			return nil
		}
		seen = append(seen, obj.GetResourceVersion())
		patch := map[string]any{
			"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion()},
			"status":   status,
		}
		if err := c.waitWrite(ctx); err != nil {
			return err
		}
		stored, err := c.patch(ctx, d.gvk, d.key, patch, d.subresource)
		if err == nil {
			c.markStale(d.key, seen...)
			if _, still := mergePolicyStatus(stored, d, c.opts.ControllerName, now); still {
				// The API server dropped part of what we wrote (a schema
				// without status.conditions, say): writing it again would
				// loop.
				c.markUnsettled(d.key, d.fingerprint(), "policy status")
			}
			return nil
		}
		if apierrors.IsConflict(err) && attempt < maxConflictRetries {
			useFresh = true
			continue
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		if refusedWrite(err) {
			c.markRejected(obj, d.gvk, d.key, d.fingerprint(), "policy status", err)
			return nil
		}
		return err
	}
}

// patch sends a JSON merge patch to the object or its status subresource,
// counts it, and returns the object the API server stored.
func (c *Controller) patch(ctx context.Context, gvk schema.GroupVersionKind, k objKey, body map[string]any, status bool) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	u := protoFor(gvk)
	u.SetNamespace(k.Namespace)
	u.SetName(k.Name)
	p := client.RawPatch(types.MergePatchType, data)
	if status {
		err = c.client.Status().Patch(ctx, u, p)
	} else {
		err = c.client.Patch(ctx, u, p)
	}
	c.countWrite(k, err)
	if err != nil {
		return nil, err
	}
	c.log.V(1).Info("wrote", "object", k.String(), "subresource", status, "patch", string(data))
	return u, nil
}

// writeErrorReason is the reason label of attache_status_write_errors_total.
func writeErrorReason(err error) string {
	switch {
	case apierrors.IsConflict(err):
		return "Conflict"
	case apierrors.IsNotFound(err):
		return "NotFound"
	case apierrors.IsAlreadyExists(err):
		return "AlreadyExists"
	case apierrors.IsInvalid(err):
		return "Invalid"
	case apierrors.IsForbidden(err):
		return "Forbidden"
	}
	return "Other"
}

// mergePolicyStatus returns obj's status with this controller's conditions
// and ancestor entries replaced by desired ones (other writers' kept as
// they are), and whether that changes anything but lastTransitionTime. Only
// the conditions and ancestors fields are returned: the patch leaves the
// rest of the status alone.
func mergePolicyStatus(obj *unstructured.Unstructured, d *policyDesired, controllerName string, now time.Time) (map[string]any, bool) {
	status, _ := obj.Object["status"].(map[string]any)
	oldConds := maps(status["conditions"])
	oldAnc := maps(status["ancestors"])

	var others, oldOurs []map[string]any
	for _, a := range oldAnc {
		if a["controllerName"] == controllerName {
			oldOurs = append(oldOurs, a)
		} else {
			others = append(others, a)
		}
	}
	// status.ancestors holds at most MaxAncestors entries, all controllers
	// together: ours give way to the others already there.
	ancestors, omitted := d.ancestors, d.omitted
	if room := max(engine.MaxAncestors-len(others), 0); len(ancestors) > room {
		ancestors = append([]engine.Ancestor(nil), ancestors...)
		sort.SliceStable(ancestors, func(i, j int) bool {
			ai, aj := accepted(ancestors[i].Conditions), accepted(ancestors[j].Conditions)
			if ai != aj {
				return !ai
			}
			return ancestors[i].Ref.Less(ancestors[j].Ref)
		})
		omitted += len(ancestors) - room
		ancestors = ancestors[:room]
	}
	conds := make([]engine.Condition, 0, len(d.conditions)+1)
	for _, cd := range d.conditions {
		if cd.Type != engine.ConditionTruncated {
			conds = append(conds, cd)
		}
	}
	if omitted > 0 {
		conds = append(conds, engine.Condition{Type: engine.ConditionTruncated, Status: "True", Reason: "TooManyAncestors",
			Message: fmt.Sprintf("%d ancestor entries were left out; at most %d are reported", omitted, engine.MaxAncestors)})
	}

	oldByRef := map[string]map[string]any{}
	for _, a := range oldOurs {
		oldByRef[ancestorKey(a["ancestorRef"])] = a
	}
	newOurs := make([]map[string]any, 0, len(ancestors))
	for _, a := range ancestors {
		ref := ancestorRefMap(a.Ref)
		prev := oldByRef[ancestorKey(ref)]
		var prevConds []map[string]any
		if prev != nil {
			prevConds = maps(prev["conditions"])
		}
		newOurs = append(newOurs, map[string]any{
			"ancestorRef":    ref,
			"controllerName": controllerName,
			"conditions":     listOrNil(conditionMaps(a.Conditions, d.generation, prevConds, now)),
		})
	}
	var newConds []map[string]any
	var oldOwnedConds []map[string]any
	for _, cd := range oldConds {
		if t, _ := cd["type"].(string); ownedPolicyConditions[t] {
			oldOwnedConds = append(oldOwnedConds, cd)
		} else {
			newConds = append(newConds, cd)
		}
	}
	ourConds := conditionMaps(conds, d.generation, oldOwnedConds, now)
	newConds = append(newConds, ourConds...)

	changed := !reflect.DeepEqual(normConditions(oldOwnedConds), normConditions(ourConds)) ||
		!reflect.DeepEqual(normAncestors(oldOurs), normAncestors(newOurs)) ||
		len(oldOurs) != len(newOurs)
	anc := listOrNil(append(others, newOurs...))
	if _, had := status["ancestors"]; anc == nil && (had || d.ancestorsRequired) {
		// Removing the field would be refused by a schema requiring it
		// (Gateway API's PolicyStatus and the policy CRDs built on it: 422
		// "status.ancestors: Required value"), and the entry we mean to
		// remove would stay. No known schema sets minItems on it.
		anc = []any{}
	}
	out := map[string]any{
		"conditions": listOrNil(newConds),
		"ancestors":  anc,
	}
	return out, changed
}

func accepted(conds []engine.Condition) bool {
	for _, c := range conds {
		if c.Type == engine.CondAccepted {
			return c.Status == "True"
		}
	}
	return false
}

// listOrNil turns an empty list into nil, so that the merge patch removes
// the field instead of writing [].
func listOrNil(l []map[string]any) any {
	if len(l) == 0 {
		return nil
	}
	out := make([]any, len(l))
	for i, m := range l {
		out[i] = m
	}
	return out
}

// maps returns the maps of an unstructured list (other items are dropped).
func maps(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, it := range l {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// conditionMaps renders conditions as unstructured metav1.Conditions, with
// the lastTransitionTime of prev's condition of the same type when its
// status is the same, else now.
func conditionMaps(conds []engine.Condition, generation int64, prev []map[string]any, now time.Time) []map[string]any {
	prevByType := map[string]map[string]any{}
	for _, p := range prev {
		if t, ok := p["type"].(string); ok {
			prevByType[t] = p
		}
	}
	ts := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	out := make([]map[string]any, 0, len(conds))
	for _, cd := range conds {
		m := map[string]any{
			"type":               cd.Type,
			"status":             cd.Status,
			"reason":             cd.Reason,
			"message":            truncate(cd.Message),
			"lastTransitionTime": ts,
		}
		gen := generation
		if cd.ObservedGeneration != 0 {
			gen = cd.ObservedGeneration
		}
		if gen > 0 {
			m["observedGeneration"] = gen
		}
		if p := prevByType[cd.Type]; p != nil && p["status"] == cd.Status {
			if lt, ok := p["lastTransitionTime"].(string); ok && lt != "" {
				m["lastTransitionTime"] = lt
			}
		}
		out = append(out, m)
	}
	return out
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage-3] + "..."
}

// normConditions keys conditions by type, without lastTransitionTime, for a
// comparison that ignores order and timestamps. Numbers are normalized to
// int64 (JSON decoding may give float64 or int64).
func normConditions(conds []map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(conds))
	for _, cd := range conds {
		n := make(map[string]any, len(cd))
		for k, v := range cd {
			if k == "lastTransitionTime" {
				continue
			}
			n[k] = normNumber(v)
		}
		t, _ := cd["type"].(string)
		out[t] = n
	}
	return out
}

func normNumber(v any) any {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
	}
	return v
}

// normAncestors keys ancestor entries by ref, with normalized conditions.
func normAncestors(l []map[string]any) map[string]map[string]map[string]any {
	out := make(map[string]map[string]map[string]any, len(l))
	for _, a := range l {
		out[ancestorKey(a["ancestorRef"])] = normConditions(maps(a["conditions"]))
	}
	return out
}

// ancestorRefMap renders a ref as a Gateway API ParentReference, as
// engine.Ancestor.GatewayAPI does.
func ancestorRefMap(r topology.Ref) map[string]any {
	m := map[string]any{"group": r.Group, "kind": r.Kind, "name": r.Name}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	if r.SectionName != "" {
		m["sectionName"] = r.SectionName
	}
	return m
}

// ancestorKey identifies a ParentReference, with its API defaults (group
// gateway.networking.k8s.io, kind Gateway).
func ancestorKey(v any) string {
	m, _ := v.(map[string]any)
	str := func(k, def string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		return def
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%v", str("group", topology.GatewayGroup), str("kind", "Gateway"),
		str("namespace", ""), str("name", ""), str("sectionName", ""), normNumber(m["port"]))
}

// fingerprint identifies the content of a desired status, to recognize the
// same content again.
func (d *policyDesired) fingerprint() string {
	b, _ := json.Marshal(struct {
		G int64
		C []engine.Condition
		A []engine.Ancestor
		O int
	}{d.generation, d.conditions, d.ancestors, d.omitted})
	return string(b)
}
