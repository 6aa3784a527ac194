package controller

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// EffectivePolicyGVK is the kind of the EffectivePolicy objects (GEP-713
// v1.0.0's PolicyBinding), CRD deploy/crds/effectivepolicies.attache.dev.yaml.
var EffectivePolicyGVK = schema.GroupVersionKind{Group: "attache.dev", Version: "v1alpha1", Kind: "EffectivePolicy"}

// DefaultEffectivePolicyNamespace holds the EffectivePolicy objects of
// cluster-scoped objects other than Namespaces.
const DefaultEffectivePolicyNamespace = "attache-system"

// maxPathsPerContext bounds the paths an EffectivePolicy lists per context
// (a Service behind a Gateway of 64 listeners has 64 paths with one
// result); pathCount says how many there are.
const maxPathsPerContext = 8

// effectiveDesired is this controller's entry in the EffectivePolicy of
// one affected object.
type effectiveDesired struct {
	key    objKey // the EffectivePolicy object
	target topology.Ref
	entry  map[string]any
	json   []byte // entry, for comparisons
}

// effectiveKey names the EffectivePolicy of an object: <kind>.<name> in
// lower case, in the object's namespace (a Namespace's own, for a
// Namespace; ns for other cluster-scoped objects). Names past the API's
// 253 characters are cut and made unique with a hash.
func effectiveKey(target topology.Ref, ns string) objKey {
	name := strings.ToLower(target.Kind) + "." + target.Name
	if len(name) > 253 {
		sum := sha256.Sum256([]byte(name))
		name = name[:253-17] + "-" + hex.EncodeToString(sum[:8])
	}
	switch {
	case target.GroupKind() == topology.KindNamespace:
		ns = target.Name
	case target.Namespace != "":
		ns = target.Namespace
	}
	return objKey{Group: EffectivePolicyGVK.Group, Kind: EffectivePolicyGVK.Kind, Namespace: ns, Name: name}
}

// desiredEffective derives, per affected object (by the key of its target
// object; with only set, of those it holds), this controller's
// EffectivePolicy entry: for each owned policy kind affecting it, the
// policies and, per context, the paths, the effective spec and who set
// each field and who lost what.
func (c *Controller) desiredEffective(res *engine.Result, owned map[topology.GroupKind]bool, only map[objKey]bool) map[objKey]*effectiveDesired {
	effective := map[topology.GroupKind]map[topology.Ref]*engine.Effective{}
	for _, e := range res.Effective {
		if only != nil && !only[keyOfRef(e.Target.Object())] {
			continue
		}
		if owned[e.Kind.GroupKind] {
			if effective[e.Kind.GroupKind] == nil {
				effective[e.Kind.GroupKind] = map[topology.Ref]*engine.Effective{}
			}
			effective[e.Kind.GroupKind][e.Target] = e
		}
	}
	out := map[objKey]*effectiveDesired{}
	kinds := map[objKey][]any{}
	for _, af := range res.Affected { // sorted by kind, then target
		if !owned[af.Kind.GroupKind] || (only != nil && !only[keyOfRef(af.Target.Object())]) {
			continue
		}
		e := effective[af.Kind.GroupKind][af.Target]
		if e == nil {
			continue
		}
		tk := keyOfRef(af.Target.Object())
		if out[tk] == nil {
			out[tk] = &effectiveDesired{key: effectiveKey(af.Target.Object(), c.opts.EffectivePolicyNamespace), target: af.Target.Object()}
		}
		contexts := make([]any, 0, len(e.Contexts))
		for _, ctx := range e.Contexts {
			var paths []any
			n := 0
			ctx.Paths(func(p []topology.Ref) bool {
				n++
				if len(paths) < maxPathsPerContext {
					paths = append(paths, p)
				}
				return true
			})
			contexts = append(contexts, map[string]any{
				"paths":     paths,
				"pathCount": n,
				"spec":      ctx.Spec,
				"sources":   report.SourcesOf(ctx),
			})
		}
		kinds[tk] = append(kinds[tk], map[string]any{
			"policyKind": af.Kind.String(),
			"policies":   af.Policies,
			"contexts":   contexts,
		})
	}
	for tk, d := range out {
		d.entry = map[string]any{"controllerName": c.opts.ControllerName, "policyKinds": kinds[tk]}
		// Through JSON: the entry is then made of what a decoder yields,
		// as the cached object is, and compares byte for byte.
		var m map[string]any
		if err := json.Unmarshal(canonicalJSON(d.entry), &m); err == nil {
			d.entry = m
		}
		// Maps' keys are sorted: the same content, the same bytes.
		d.json = canonicalJSON(d.entry)
	}
	return out
}

// canonicalJSON encodes v with sorted keys (encoding/json sorts map keys).
func canonicalJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// effectiveHandler queues, on a change of an EffectivePolicy made by
// someone else (or its deletion), the object it is about.
func (c *Controller) effectiveHandler() toolscache.ResourceEventHandler {
	queue := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if k, ok := effectiveTarget(u); ok {
			c.targets.Add(k)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		// Add too: an object we created may have to go again before the
		// cache showed it.
		AddFunc:    func(o any) { queue(o) },
		UpdateFunc: func(_, n any) { queue(n) },
		DeleteFunc: queue,
	}
}

// effectiveTarget is the key of the object an EffectivePolicy is about.
func effectiveTarget(u *unstructured.Unstructured) (objKey, bool) {
	t, _, _ := unstructured.NestedMap(u.Object, "targetRef")
	kind, _ := t["kind"].(string)
	name, _ := t["name"].(string)
	if kind == "" || name == "" {
		return objKey{}, false
	}
	group, _ := t["group"].(string)
	ns, _ := t["namespace"].(string)
	return objKey{Group: group, Kind: kind, Namespace: ns, Name: name}, true
}

// queueEffectiveCleanup queues the objects whose EffectivePolicy carries an
// entry of this controller that is no longer desired (the object is no
// longer affected, or is gone).
func (c *Controller) queueEffectiveCleanup(ctx context.Context, desired map[objKey]*effectiveDesired) {
	if !c.opts.EffectivePolicies {
		return
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(EffectivePolicyGVK.GroupVersion().WithKind(EffectivePolicyGVK.Kind + "List"))
	if err := c.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		c.log.Error(err, "listing EffectivePolicies from the cache")
		return
	}
	for i := range list.Items {
		u := &list.Items[i]
		tk, ok := effectiveTarget(u)
		if !ok || desired[tk] != nil {
			continue
		}
		if _, _, ours := splitEntries(u, c.opts.ControllerName); ours != nil {
			c.targets.Add(tk)
		}
	}
}

// splitEntries returns an EffectivePolicy's controllers entries: the
// others', and ours (nil when absent).
func splitEntries(u *unstructured.Unstructured, controllerName string) (all, others []any, ours map[string]any) {
	all, _, _ = unstructured.NestedSlice(u.Object, "controllers")
	for _, e := range all {
		m, _ := e.(map[string]any)
		if m != nil && m["controllerName"] == controllerName {
			ours = m
			continue
		}
		others = append(others, e)
	}
	return all, others, ours
}

// effectiveOf returns the desired EffectivePolicy entry of an object (nil:
// none) and the key of its EffectivePolicy.
func (c *Controller) effectiveOf(tk objKey) (*effectiveDesired, objKey) {
	c.mu.Lock()
	d := c.effective[tk]
	c.mu.Unlock()
	if d != nil {
		return d, d.key
	}
	return nil, effectiveKey(topology.Ref{Group: tk.Group, Kind: tk.Kind, Namespace: tk.Namespace, Name: tk.Name}, c.opts.EffectivePolicyNamespace)
}

// effectiveNeedsWrite reports whether an object's EffectivePolicy differs
// from desired, as the cache shows it.
func (c *Controller) effectiveNeedsWrite(ctx context.Context, tk objKey) bool {
	if !c.opts.EffectivePolicies {
		return false
	}
	d, key := c.effectiveOf(tk)
	u, err := c.cached(ctx, EffectivePolicyGVK, key)
	if err != nil {
		return true
	}
	_, _, write := planEffective(u, d, c.opts.ControllerName)
	return write
}

// planEffective compares an EffectivePolicy (nil: none) with this
// controller's desired entry (nil: none). It returns the controllers list
// to write (nil with write set: delete the object) and whether to write.
func planEffective(u *unstructured.Unstructured, d *effectiveDesired, controllerName string) (controllers []any, create, write bool) {
	if u == nil {
		if d == nil {
			return nil, false, false
		}
		return []any{d.entry}, true, true
	}
	_, others, ours := splitEntries(u, controllerName)
	if d == nil {
		if ours == nil {
			return nil, false, false
		}
		return others, false, true // others nil: the object goes
	}
	if ours != nil && bytes.Equal(canonicalJSON(ours), d.json) {
		return nil, false, false
	}
	return append(others, d.entry), false, true
}

// absent marks, in the stale records of an EffectivePolicy, that it was
// just created or deleted and the cache may not show it yet.
const absent = "\x00created-or-deleted"

// syncEffective writes the EffectivePolicy of one affected object when it
// differs from the last computation's: created, our entry replaced (other
// controllers' kept), or our entry removed (the object deleted with the
// last entry). Conflicts are retried from fresh reads.
func (c *Controller) syncEffective(ctx context.Context, tk objKey) error {
	if !c.opts.EffectivePolicies || !c.synced.Load() {
		return nil
	}
	d, key := c.effectiveOf(tk)
	useFresh := false
	for attempt := 0; ; attempt++ {
		var u *unstructured.Unstructured
		var err error
		if useFresh {
			u, err = c.fresh(ctx, EffectivePolicyGVK, key)
		} else {
			u, err = c.cached(ctx, EffectivePolicyGVK, key)
		}
		if meta.IsNoMatchError(err) {
			c.markUnsettled(key, "no-crd", "EffectivePolicy (is its CRD installed?)")
			return nil // said once; the next full comparison tries again
		}
		if err != nil {
			return err
		}
		rv := absent
		if u != nil {
			rv = u.GetResourceVersion()
		}
		if !useFresh && c.isStale(key, rv) {
			return nil // our last write is on its way to the cache
		}
		controllers, create, write := planEffective(u, d, c.opts.ControllerName)
		if !write || (d != nil && c.unsettled(key, string(d.json))) {
			return nil
		}

		if err := c.limiter.Wait(ctx); err != nil {
			return err
		}
		stored, err := c.writeEffective(ctx, key, u, d, controllers, create)
		switch {
		case err == nil:
			c.markStale(key, rv)
			if create {
				// The cache may show no object a while yet.
				c.markStale(key, absent)
			}
			if stored != nil && d != nil {
				if _, _, again := planEffective(stored, d, c.opts.ControllerName); again {
					// The API server did not keep what we wrote: writing
					// it again would loop.
					c.markUnsettled(key, string(d.json), "EffectivePolicy")
				}
			}
			return nil
		case (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < maxConflictRetries:
			useFresh = true
			continue
		case apierrors.IsNotFound(err) && d == nil:
			return nil
		case apierrors.IsNotFound(err) && attempt < maxConflictRetries:
			useFresh = true // deleted meanwhile: create it
			continue
		}
		return err
	}
}

// writeEffective sends one write of an EffectivePolicy and counts it. It
// returns the object stored (nil after a delete).
func (c *Controller) writeEffective(ctx context.Context, key objKey, u *unstructured.Unstructured, d *effectiveDesired, controllers []any, create bool) (*unstructured.Unstructured, error) {
	kind := key.gk().String()
	var err error
	switch {
	case create:
		obj := protoFor(EffectivePolicyGVK)
		obj.SetNamespace(key.Namespace)
		obj.SetName(key.Name)
		obj.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "attache"})
		obj.Object["targetRef"] = refMap(d.target)
		obj.Object["controllers"] = controllers
		err = c.client.Create(ctx, obj)
		u = obj
	case controllers == nil:
		// Our entry was the last: the object goes, if nobody wrote meanwhile.
		rv := u.GetResourceVersion()
		err = c.client.Delete(ctx, u.DeepCopy(), client.Preconditions{ResourceVersion: &rv})
	default:
		patch := map[string]any{
			"metadata":    map[string]any{"resourceVersion": u.GetResourceVersion()},
			"controllers": controllers,
		}
		if d != nil {
			patch["targetRef"] = refMap(d.target)
		}
		return c.patch(ctx, EffectivePolicyGVK, key, patch, false) // counts itself
	}
	if err != nil {
		statusWriteErrors.WithLabelValues(kind, writeErrorReason(err)).Inc()
		return nil, err
	}
	statusWrites.WithLabelValues(kind).Inc()
	c.log.V(1).Info("wrote", "object", key.String(), "create", create, "delete", controllers == nil && !create)
	if !create {
		return nil, nil
	}
	return u, nil
}

// refMap renders a target as the targetRef of an EffectivePolicy.
func refMap(r topology.Ref) map[string]any {
	m := map[string]any{"group": r.Group, "kind": r.Kind, "name": r.Name}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}

// errEffectiveCRD says the EffectivePolicy CRD is missing while the
// objects are enabled.
var errEffectiveCRD = errors.New("EffectivePolicies is enabled but the EffectivePolicy CRD is not installed: apply deploy/crds/effectivepolicies.attache.dev.yaml")
