package controller

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/effectivepolicy"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// EffectivePolicyGVK is the kind of the EffectivePolicy objects (GEP-713
// v1.0.0's PolicyBinding), CRD deploy/crds/effectivepolicies.attache.dev.yaml.
var EffectivePolicyGVK = schema.GroupVersionKind{Group: "attache.dev", Version: "v1alpha1", Kind: "EffectivePolicy"}

// DefaultEffectivePolicyNamespace holds the EffectivePolicy objects of
// cluster-scoped objects other than Namespaces.
const DefaultEffectivePolicyNamespace = "attache-system"

// effectiveDesired is this controller's entry in the EffectivePolicy of
// one affected object, kept once, as the JSON it is written as,
// compressed: at scale these entries would otherwise be a large share of
// the controller's memory (10,000 objects of about 7 KiB), and they are
// read only to be written.
type effectiveDesired struct {
	key    objKey // the EffectivePolicy object
	target topology.Ref
	packed []byte // effectivepolicy.Entry.JSON, DEFLATE-compressed
	size   int32  // the JSON's length
	hash   string // effectivepolicy.Hash of the JSON, the annotation's value
	// parts locate the pieces of the JSON a change replaces whole.
	parts []effectivepolicy.Part
	// baseParts and baseHash are those of the entry this one replaced,
	// when there was one: if the object holds it (its hash annotation
	// says so), only the parts whose hash changed are sent.
	baseParts []effectivepolicy.Part
	baseHash  string
}

// packer is the one DEFLATE writer entries are compressed with, and its
// output buffer. A writer holds more than half a megabyte of state: one
// kept for the process's life costs less than a sync.Pool's, which the
// collector empties, so that an edit rendering hundreds of entries
// allocated a writer again after each collection (a tenth of the first
// scale case's transient heap). Entries are rendered by the main worker,
// one at a time; the mutex only makes that safe to rely on.
var packer struct {
	sync.Mutex
	w   *flate.Writer
	buf bytes.Buffer
}

// pack compresses an entry's JSON.
func pack(b []byte) []byte {
	packer.Lock()
	defer packer.Unlock()
	packer.buf.Reset()
	if packer.w == nil {
		packer.w, _ = flate.NewWriter(&packer.buf, flate.BestSpeed) // a valid level: no error
	} else {
		packer.w.Reset(&packer.buf)
	}
	_, _ = packer.w.Write(b)
	_ = packer.w.Close()
	return bytes.Clone(packer.buf.Bytes())
}

// unpackers reuse DEFLATE readers (tens of kilobytes of tables each).
var unpackers sync.Pool

// entryJSON returns the entry's JSON.
func (d *effectiveDesired) entryJSON() ([]byte, error) { return unpack(d.packed, int(d.size)) }

// unpack decompresses what pack compressed; size, the length of the
// result when known (0 otherwise), sizes the buffer once.
func unpack(packed []byte, size int) ([]byte, error) {
	src := bytes.NewReader(packed)
	r, _ := unpackers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		return nil, err
	}
	defer unpackers.Put(r)
	if size <= 0 {
		return io.ReadAll(r)
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Annotations of an EffectivePolicy. The controller caches only the
// objects' metadata (their bodies would be most of its memory), so the
// metadata says what each holds: whose entries, with which content, about
// which object.
const (
	// effectiveHashPrefix, followed by a digest of a controller name, is
	// the annotation holding the hash of that controller's entry.
	effectiveHashPrefix = "effective.attache.dev/"
	// effectiveTargetAnnotation holds the object an EffectivePolicy is
	// about: group/Kind/namespace/name (none of them holds a "/").
	effectiveTargetAnnotation = "effective.attache.dev/target"
)

// effectiveHashKey is the annotation holding the hash of a controller's
// entry: the prefix and 16 hex digits of its name's SHA-256 (controller
// names hold slashes and may be longer than an annotation name).
func effectiveHashKey(controllerName string) string {
	sum := sha256.Sum256([]byte(controllerName))
	return effectiveHashPrefix + hex.EncodeToString(sum[:8])
}

// targetAnnotation renders a target for effectiveTargetAnnotation.
func targetAnnotation(r topology.Ref) string {
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
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
// EffectivePolicy entry (package effectivepolicy).
func (c *Controller) desiredEffective(res *engine.Result, owned map[topology.GroupKind]bool, only map[objKey]bool) map[objKey]*effectiveDesired {
	var onlyRef func(topology.Ref) bool
	if only != nil {
		onlyRef = func(r topology.Ref) bool { return only[keyOfRef(r)] }
	}
	out := map[objKey]*effectiveDesired{}
	effectivepolicy.EachEncoded(res, c.opts.ControllerName, func(gk topology.GroupKind) bool { return owned[gk] }, onlyRef, effectivepolicy.Limits{},
		func(target topology.Ref, _ *effectivepolicy.Entry, b []byte, parts []effectivepolicy.Part) {
			// b is reused for the next entry: only its compressed copy is kept.
			out[keyOfRef(target)] = &effectiveDesired{key: effectiveKey(target, c.opts.EffectivePolicyNamespace), target: target,
				packed: pack(b), size: int32(len(b)), hash: effectivepolicy.Hash(b), parts: parts}
		})
	return out
}

// effectiveMetaProto is an EffectivePolicy's metadata, the form in which
// the controller caches and lists them.
func effectiveMetaProto() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(EffectivePolicyGVK)
	return m
}

// effectiveHandler queues the object an EffectivePolicy is about when the
// object's metadata no longer says it holds the entry desired: changed or
// deleted by someone else. Our own writes carry the desired hash and queue
// nothing.
func (c *Controller) effectiveHandler() toolscache.ResourceEventHandler {
	check := func(obj any, deleted bool) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj, deleted = t.Obj, true
		}
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		tk, ok := effectiveTarget(m)
		if !ok {
			return
		}
		d, _ := c.effectiveOf(tk)
		if deleted {
			if d != nil {
				c.targets.Add(tk)
			}
			return
		}
		if plan := planEffective(m, d, c.opts.ControllerName); plan != effectiveNone {
			c.targets.Add(tk)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { check(o, false) },
		UpdateFunc: func(_, n any) { check(n, false) },
		DeleteFunc: func(o any) { check(o, true) },
	}
}

// effectiveTarget is the key of the object an EffectivePolicy is about, from
// its annotation (absent on objects written before it existed).
func effectiveTarget(m metav1.Object) (objKey, bool) {
	parts := strings.Split(m.GetAnnotations()[effectiveTargetAnnotation], "/")
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return objKey{}, false
	}
	return objKey{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}, true
}

// targetRefKey is the key of the object an EffectivePolicy's targetRef
// names, for objects without the target annotation.
func targetRefKey(u *unstructured.Unstructured) (objKey, bool) {
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
// longer affected, or is gone). EffectivePolicies written before the
// annotations existed are read from the API server once per full
// comparison, to find out.
func (c *Controller) queueEffectiveCleanup(ctx context.Context, desired map[objKey]*effectiveDesired) {
	if !c.opts.EffectivePolicies {
		return
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(EffectivePolicyGVK.GroupVersion().WithKind(EffectivePolicyGVK.Kind + "List"))
	if err := c.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		c.log.Error(err, "listing EffectivePolicies from the cache")
		return
	}
	hashKey := effectiveHashKey(c.opts.ControllerName)
	for i := range list.Items {
		m := &list.Items[i]
		tk, ok := effectiveTarget(m)
		if !ok {
			c.queueLegacyEffective(ctx, m, desired)
			continue
		}
		if _, ours := m.GetAnnotations()[hashKey]; ours && desired[tk] == nil {
			c.targets.Add(tk)
		}
	}
}

// queueLegacyEffective queues the object of an EffectivePolicy written
// before the annotations existed when it holds our entry.
func (c *Controller) queueLegacyEffective(ctx context.Context, m *metav1.PartialObjectMetadata, desired map[objKey]*effectiveDesired) {
	if m.GetLabels()["app.kubernetes.io/managed-by"] != "attache" {
		return
	}
	u, err := c.fresh(ctx, EffectivePolicyGVK, objKey{Group: EffectivePolicyGVK.Group, Kind: EffectivePolicyGVK.Kind, Namespace: m.GetNamespace(), Name: m.GetName()})
	if err != nil || u == nil {
		return
	}
	tk, ok := targetRefKey(u)
	if _, _, ours := splitEntries(u, c.opts.ControllerName); ok && (ours != nil || desired[tk] != nil) {
		c.targets.Add(tk)
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

// cachedEffective reads an EffectivePolicy's metadata from the cache; nil
// when it is not there.
func (c *Controller) cachedEffective(ctx context.Context, key objKey) (*metav1.PartialObjectMetadata, error) {
	m := effectiveMetaProto()
	if err := c.cache.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name}, m, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return m, nil
}

// effectiveNeedsWrite reports whether an object's EffectivePolicy differs
// from desired, as the cache shows it.
func (c *Controller) effectiveNeedsWrite(ctx context.Context, tk objKey) bool {
	if !c.opts.EffectivePolicies {
		return false
	}
	d, key := c.effectiveOf(tk)
	m, err := c.cachedEffective(ctx, key)
	if err != nil {
		return true
	}
	return planEffective(m, d, c.opts.ControllerName) != effectiveNone
}

// effectivePlan is what an EffectivePolicy needs.
type effectivePlan int

const (
	effectiveNone   effectivePlan = iota // as desired
	effectiveApply                       // our entry to create or replace
	effectiveRemove                      // our entry to remove
)

// planEffective compares an EffectivePolicy's metadata (nil: none) with
// this controller's desired entry (nil: none). An object without the
// annotations (written before them) gets our entry applied when one is
// desired; the removal path reads it to find out whether it holds ours.
func planEffective(m metav1.Object, d *effectiveDesired, controllerName string) effectivePlan {
	var have string
	var ok, legacy bool
	if m != nil && !reflect.ValueOf(m).IsNil() {
		have, ok = m.GetAnnotations()[effectiveHashKey(controllerName)]
		_, tagged := m.GetAnnotations()[effectiveTargetAnnotation]
		legacy = !tagged && m.GetLabels()["app.kubernetes.io/managed-by"] == "attache"
	}
	switch {
	case d != nil && (!ok || have != d.hash):
		return effectiveApply
	case d == nil && (ok || legacy):
		return effectiveRemove
	}
	return effectiveNone
}

// absent marks, in the stale records of an EffectivePolicy, that it was
// just created or deleted and the cache may not show it yet.
const absent = "\x00created-or-deleted"

// syncEffective writes the EffectivePolicy of one affected object when its
// metadata says it differs from the last computation's: our entry applied
// (created with the object, or replaced; other controllers' entries are
// theirs under server-side apply), or removed (the object deleted with
// the last entry).
func (c *Controller) syncEffective(ctx context.Context, tk objKey) error {
	if !c.opts.EffectivePolicies || !c.synced.Load() {
		return nil
	}
	d, key := c.effectiveOf(tk)
	m, err := c.cachedEffective(ctx, key)
	if meta.IsNoMatchError(err) {
		c.markUnsettled(key, "no-crd", "EffectivePolicy (is its CRD installed?)")
		return nil // said once; the next full comparison tries again
	}
	if err != nil {
		return err
	}
	rv := absent
	if m != nil {
		rv = m.GetResourceVersion()
	}
	if c.isStale(key, rv) {
		return nil // our last write is on its way to the cache
	}
	switch planEffective(m, d, c.opts.ControllerName) {
	case effectiveApply:
		if c.unsettled(key, d.hash) {
			return nil
		}
		if m != nil && d.baseHash != "" && m.GetAnnotations()[effectiveHashKey(c.opts.ControllerName)] == d.baseHash {
			// The object holds the entry this one replaced: send the
			// difference; on any failure, the whole entry below.
			if stored, err := c.patchEffective(ctx, key, d); err == nil {
				c.markStale(key, rv)
				if stored.GetAnnotations()[effectiveHashKey(c.opts.ControllerName)] != d.hash {
					c.markUnsettled(key, d.hash, "EffectivePolicy")
				}
				return nil
			}
		}
		stored, err := c.applyEffective(ctx, key, d)
		if err != nil {
			return err
		}
		c.markStale(key, rv)
		if m == nil {
			c.markStale(key, absent) // the cache may show no object a while yet
		}
		if stored.GetAnnotations()[effectiveHashKey(c.opts.ControllerName)] != d.hash {
			c.markUnsettled(key, d.hash, "EffectivePolicy")
		}
		return nil
	case effectiveRemove:
		return c.removeEffective(ctx, key, rv)
	}
	return nil
}

// fieldOwner is the field manager of this controller's server-side applies
// (at most 128 characters).
func (c *Controller) fieldOwner() string {
	o := "attache:" + c.opts.ControllerName
	if len(o) > 128 {
		o = o[:128]
	}
	return o
}

// applyEffective applies our entry with server-side apply: the API server
// merges it into the controllers list by controllerName, so the others'
// entries need not be read, and creates the object when it is missing.
func (c *Controller) applyEffective(ctx context.Context, key objKey, d *effectiveDesired) (*metav1.PartialObjectMetadata, error) {
	if err := c.waitWrite(ctx); err != nil {
		return nil, err
	}
	head, err := json.Marshal(map[string]any{
		"apiVersion": EffectivePolicyGVK.GroupVersion().String(),
		"kind":       EffectivePolicyGVK.Kind,
		"metadata": map[string]any{
			"name": key.Name, "namespace": key.Namespace,
			"labels": map[string]string{"app.kubernetes.io/managed-by": "attache"},
			"annotations": map[string]string{
				effectiveHashKey(c.opts.ControllerName): d.hash,
				effectiveTargetAnnotation:               targetAnnotation(d.target),
			},
		},
		"targetRef": refMap(d.target),
	})
	if err != nil {
		return nil, err
	}
	entry, err := d.entryJSON()
	if err != nil {
		return nil, err
	}
	// The entry's bytes as they are: no decoded copy.
	body := make([]byte, 0, len(head)+len(entry)+20)
	body = append(body, head[:len(head)-1]...)
	body = append(body, `,"controllers":[`...)
	body = append(body, entry...)
	body = append(body, "]}"...)
	// The answer as metadata only: all that is read of it is the hash.
	u := effectiveMetaProto()
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	err = c.client.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, body), client.FieldOwner(c.fieldOwner()), client.ForceOwnership)
	c.countWrite(key, err)
	if err != nil {
		return nil, err
	}
	c.log.V(1).Info("applied", "object", key.String(), "bytes", len(entry))
	return u, nil
}

// errNoPatch says the difference of an entry is not worth sending, or
// cannot be: the whole entry is applied instead.
var errNoPatch = errors.New("no patch")

// patchEffective sends the difference between the entry d replaced and d
// as a JSON patch (RFC 6902): the parts (a policy kind's field, one of its
// contexts) whose hash changed, replaced whole, guarded by tests that the
// object holds that entry (its hash) at the first place of controllers
// (ours). Nothing is decoded to find them. Where our entry is not the first, or the
// difference is not smaller than the entry, it returns errNoPatch and the
// caller applies the whole entry.
func (c *Controller) patchEffective(ctx context.Context, key objKey, d *effectiveDesired) (*metav1.PartialObjectMetadata, error) {
	c.mu.Lock()
	skip := c.noPatch[key]
	c.mu.Unlock()
	if skip {
		return nil, errNoPatch
	}
	entry, err := d.entryJSON()
	if err != nil {
		return nil, err
	}
	body, ok := effectivePatch(d, entry, c.opts.ControllerName)
	if !ok {
		return nil, errNoPatch
	}
	if err := c.waitWrite(ctx); err != nil {
		return nil, err
	}
	u := effectiveMetaProto()
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	err = c.client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(c.fieldOwner()))
	c.countWrite(key, err)
	if err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsConflict(err) || apierrors.IsBadRequest(err) {
			// A failed test: most likely another controller's entry is
			// first. Apply whole from now on for this object.
			c.mu.Lock()
			c.noPatch[key] = true
			c.mu.Unlock()
		}
		return nil, err
	}
	c.log.V(1).Info("patched", "object", key.String(), "bytes", len(body), "entryBytes", len(entry))
	return u, nil
}

// pointerEscaper escapes a key for a JSON pointer (RFC 6901); built once,
// as a Replacer prepares tables.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// effectivePatch builds the JSON patch from d's base to d (entry is d's
// JSON): the tests and the hash, then a replace of every part whose hash
// changed. ok is false when the parts differ in shape (another number of
// kinds or contexts, a field present in one only) or the patch is not
// smaller than the entry.
func effectivePatch(d *effectiveDesired, entry []byte, controllerName string) (body []byte, ok bool) {
	if len(d.parts) != len(d.baseParts) {
		return nil, false
	}
	hashPath := "/metadata/annotations/" + pointerEscaper.Replace(effectiveHashKey(controllerName))
	var b bytes.Buffer
	b.Grow(len(entry) / 2)
	op := func(name, path string, value []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		p, _ := json.Marshal(path)
		b.WriteString(`{"op":"` + name + `","path":`)
		b.Write(p)
		b.WriteString(`,"value":`)
		b.Write(value)
		b.WriteByte('}')
	}
	str := func(s string) []byte { v, _ := json.Marshal(s); return v }
	b.WriteByte('[')
	op("test", hashPath, str(d.baseHash))
	op("test", "/controllers/0/controllerName", str(controllerName))
	op("replace", hashPath, str(d.hash))
	for i, p := range d.parts {
		if !d.baseParts[i].SamePlace(p) {
			return nil, false
		}
		if d.baseParts[i].Hash != p.Hash {
			op("replace", "/controllers/0"+p.Path(), entry[p.Off:p.Off+p.Len])
		}
	}
	b.WriteByte(']')
	if b.Len() >= len(entry) {
		return nil, false
	}
	return b.Bytes(), true
}

// removeEffective removes our entry from an EffectivePolicy, read fresh
// (removals are rare, and the cache holds no bodies): the object is
// deleted when ours was the last entry, patched without ours otherwise,
// both on the resourceVersion read. Conflicts are retried.
func (c *Controller) removeEffective(ctx context.Context, key objKey, cachedRV string) error {
	hashKey := effectiveHashKey(c.opts.ControllerName)
	for attempt := 0; ; attempt++ {
		u, err := c.fresh(ctx, EffectivePolicyGVK, key)
		if err != nil || u == nil {
			return err
		}
		_, others, ours := splitEntries(u, c.opts.ControllerName)
		_, tagged := u.GetAnnotations()[hashKey]
		if ours == nil && !tagged {
			return nil
		}
		if err := c.waitWrite(ctx); err != nil {
			return err
		}
		rv := u.GetResourceVersion()
		if len(others) == 0 {
			err = c.client.Delete(ctx, u, client.Preconditions{ResourceVersion: &rv})
		} else {
			patch := map[string]any{
				"metadata":    map[string]any{"resourceVersion": rv, "annotations": map[string]any{hashKey: nil}},
				"controllers": others,
			}
			var data []byte
			if data, err = json.Marshal(patch); err == nil {
				err = c.client.Patch(ctx, u, client.RawPatch(types.MergePatchType, data))
			}
		}
		c.countWrite(key, err)
		switch {
		case err == nil || apierrors.IsNotFound(err):
			c.markStale(key, cachedRV)
			return nil
		case apierrors.IsConflict(err) && attempt < maxConflictRetries:
			continue
		}
		return err
	}
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
