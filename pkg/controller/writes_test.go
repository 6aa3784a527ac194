package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestWriteBudgetThrottles: writes past the burst wait for the budget and
// are counted as throttled; those within it are not.
func TestWriteBudgetThrottles(t *testing.T) {
	c := &Controller{opts: Options{ControllerName: "example.com/budget-test", WriteQPS: 50, WriteBurst: 2},
		limiter: rate.NewLimiter(50, 2), log: logr.Discard()}
	before := testutil.ToFloat64(writesThrottled.WithLabelValues(c.opts.ControllerName))
	for range 2 {
		if err := c.waitWrite(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(writesThrottled.WithLabelValues(c.opts.ControllerName)) - before; got != 0 {
		t.Fatalf("%v writes throttled within the burst, want 0", got)
	}
	for range 3 {
		if err := c.waitWrite(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(writesThrottled.WithLabelValues(c.opts.ControllerName)) - before; got != 3 {
		t.Fatalf("%v writes throttled past the burst, want 3", got)
	}
	if s := testutil.ToFloat64(writeThrottleSeconds.WithLabelValues(c.opts.ControllerName)); s <= 0 {
		t.Fatalf("throttle seconds %v, want > 0", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.limiter = rate.NewLimiter(0.001, 1)
	_ = c.limiter.Allow()
	if err := c.waitWrite(ctx); err == nil {
		t.Fatal("a throttled write went on after its context was cancelled")
	}
}

// TestPlanEffective: the metadata alone decides whether our entry is to
// apply, to remove, or as desired.
func TestPlanEffective(t *testing.T) {
	const name = "example.com/plan-test"
	d := &effectiveDesired{hash: "aaaa"}
	meta := func(ann map[string]string, labels map[string]string) *metav1.PartialObjectMetadata {
		m := effectiveMetaProto()
		m.SetAnnotations(ann)
		m.SetLabels(labels)
		return m
	}
	key := effectiveHashKey(name)
	tagged := map[string]string{effectiveTargetAnnotation: "/Service/ns/s"}
	withHash := func(h string) map[string]string {
		return map[string]string{effectiveTargetAnnotation: "/Service/ns/s", key: h}
	}
	managed := map[string]string{"app.kubernetes.io/managed-by": "attache"}
	var none *metav1.PartialObjectMetadata
	for _, c := range []struct {
		what string
		m    metav1.Object
		d    *effectiveDesired
		want effectivePlan
	}{
		{"no object, nothing desired", none, nil, effectiveNone},
		{"no object, desired", none, d, effectiveApply},
		{"ours current", meta(withHash("aaaa"), managed), d, effectiveNone},
		{"ours outdated", meta(withHash("bbbb"), managed), d, effectiveApply},
		{"others' only, desired", meta(tagged, managed), d, effectiveApply},
		{"others' only, nothing desired", meta(tagged, managed), nil, effectiveNone},
		{"ours, nothing desired", meta(withHash("aaaa"), managed), nil, effectiveRemove},
		{"written before the annotations, nothing desired", meta(nil, managed), nil, effectiveRemove},
		{"someone else's object, nothing desired", meta(nil, nil), nil, effectiveNone},
	} {
		if got := planEffective(c.m, c.d, name); got != c.want {
			t.Errorf("%s: plan %d, want %d", c.what, got, c.want)
		}
	}
}

// TestOwnWritesQueueNothing: the event of an EffectivePolicy as we wrote it
// queues nothing (the queue depth is the work left); one changed by
// someone else, or deleted, queues its object.
func TestOwnWritesQueueNothing(t *testing.T) {
	c := &Controller{opts: Options{ControllerName: "example.com/queue-test"},
		targets:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[objKey]()),
		effective: map[objKey]*effectiveDesired{}}
	defer c.targets.ShutDown()
	target := topology.Ref{Kind: "Service", Namespace: "ns", Name: "s"}
	tk := keyOfRef(target)
	c.effective[tk] = &effectiveDesired{key: effectiveKey(target, "x"), target: target, hash: "aaaa"}
	m := effectiveMetaProto()
	m.SetAnnotations(map[string]string{effectiveTargetAnnotation: targetAnnotation(target), effectiveHashKey(c.opts.ControllerName): "aaaa"})
	h := c.effectiveHandler()
	h.OnAdd(m, false)
	h.OnUpdate(m, m)
	if n := c.targets.Len(); n != 0 {
		t.Fatalf("our own write queued %d objects", n)
	}
	changed := m.DeepCopy()
	changed.Annotations[effectiveHashKey(c.opts.ControllerName)] = "bbbb"
	h.OnUpdate(m, changed)
	if n := c.targets.Len(); n != 1 {
		t.Fatalf("a change by someone else queued %d objects, want 1", n)
	}
	got, _ := c.targets.Get()
	c.targets.Done(got)
	if got != tk {
		t.Fatalf("queued %v, want %v", got, tk)
	}
	h.OnDelete(m)
	if n := c.targets.Len(); n != 1 {
		t.Fatalf("a deletion queued %d objects, want 1", n)
	}
}

// TestTransformStrip: the cache keeps neither managedFields nor kubectl's
// last-applied copy of an object, and keeps every other annotation.
func TestTransformStrip(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAnnotations(map[string]string{lastApplied: `{"big":"copy"}`, "keep": "me"})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	out, err := TransformStrip(u)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*unstructured.Unstructured)
	if len(got.GetManagedFields()) != 0 {
		t.Error("managedFields kept")
	}
	if a := got.GetAnnotations(); a[lastApplied] != "" || a["keep"] != "me" || len(a) != 1 {
		t.Errorf("annotations %v, want only keep=me", a)
	}
	m := effectiveMetaProto()
	m.SetAnnotations(map[string]string{lastApplied: "x"})
	if out, _ := TransformStrip(m); len(out.(*metav1.PartialObjectMetadata).GetAnnotations()) != 0 {
		t.Error("last-applied kept on metadata-only objects")
	}
}

// TestPackRoundTrip: a desired entry is kept compressed and comes back
// byte for byte, with its length known or not; a wrong length is an error.
func TestPackRoundTrip(t *testing.T) {
	for _, in := range []string{"", `{"controllerName":"x"}`, strings.Repeat(`{"a":[1,2,3]}`, 5000)} {
		d := &effectiveDesired{packed: pack([]byte(in))}
		for _, size := range []int32{0, int32(len(in))} {
			d.size = size
			out, err := d.entryJSON()
			if err != nil || string(out) != in {
				t.Fatalf("round trip of %d bytes (size %d): %d bytes back, %v", len(in), size, len(out), err)
			}
		}
		if len(in) > 0 {
			d.size = int32(len(in)) + 1
			if _, err := d.entryJSON(); err == nil {
				t.Errorf("%d bytes read back as %d without an error", len(in), d.size)
			}
		}
		d.size = 0
		if len(in) > 10000 && len(d.packed) > len(in)/10 {
			t.Errorf("%d bytes packed into %d", len(in), len(d.packed))
		}
	}
}

// TestPruneStale: the write records of objects gone from the engine's last
// input, and of EffectivePolicies no longer desired, are forgotten; those
// of objects still there and of desired EffectivePolicies are kept.
func TestPruneStale(t *testing.T) {
	c := &Controller{opts: Options{ControllerName: testControllerName, ConditionDomain: engine.DefaultConditionDomain}}
	c.inc = c.newEngine(nil, c.unreadKind)
	route := mustYAML(t, `{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: kept, namespace: ns}, spec: {}}`)
	c.inc.Compute([]engine.Object{{Object: route}})
	kept, gone := keyOf(route), objKey{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "ns", Name: "gone"}
	epWanted := objKey{Group: EffectivePolicyGVK.Group, Kind: EffectivePolicyGVK.Kind, Namespace: "ns", Name: "httproute.kept"}
	epGone := objKey{Group: EffectivePolicyGVK.Group, Kind: EffectivePolicyGVK.Kind, Namespace: "ns", Name: "httproute.gone"}
	c.effective = map[objKey]*effectiveDesired{kept: {key: epWanted}}
	c.stale = map[objKey]map[string]bool{kept: {"1": true}, gone: {"2": true}, epWanted: {"3": true}, epGone: {"4": true}}
	c.unsettledWrites = map[objKey]string{kept: "a", gone: "b"}
	c.rejectedWrites = map[objKey]rejection{kept: {fingerprint: "c"}, gone: {fingerprint: "d"}}
	c.pruneStale()
	var staleKeys, unsettled, rejected []string
	for k := range c.stale {
		staleKeys = append(staleKeys, k.String())
	}
	for k := range c.unsettledWrites {
		unsettled = append(unsettled, k.String())
	}
	for k := range c.rejectedWrites {
		rejected = append(rejected, k.String())
	}
	slices.Sort(staleKeys)
	if want := []string{epWanted.String(), kept.String()}; !slices.Equal(staleKeys, want) {
		t.Errorf("stale records %v, want %v", staleKeys, want)
	}
	if want := []string{kept.String()}; !slices.Equal(unsettled, want) {
		t.Errorf("unsettled writes %v, want %v", unsettled, want)
	}
	if want := []string{kept.String()}; !slices.Equal(rejected, want) {
		t.Errorf("refused writes %v, want %v", rejected, want)
	}
}
