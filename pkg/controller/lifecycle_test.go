package controller

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// SizePolicy is a Direct policy kind owned through the CRD annotation,
// with a status subresource, targeting Services, Namespaces, HTTPRoutes and
// Gateways; TintPolicy an Inherited one (see tintPolicyCRD).
var (
	gvkSizePolicy = schema.GroupVersionKind{Group: "late.example.com", Version: "v1", Kind: "SizePolicy"}
	gvkTintPolicy = schema.GroupVersionKind{Group: "counting.example.com", Version: "v1", Kind: "TintPolicy"}
)

func sizePolicyCRD() *unstructured.Unstructured {
	return policyCRD(gvkSizePolicy, "sizepolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Service,Namespace,HTTPRoute.gateway.networking.k8s.io,Gateway.gateway.networking.k8s.io",
		AnnotationOwnedBy:          testControllerName,
	})
}

// tintPolicyCRD is an Inherited kind (Gateway > HTTPRoute > Service) with a
// status subresource, owned through the CRD annotation.
func tintPolicyCRD() *unstructured.Unstructured {
	return policyCRD(gvkTintPolicy, "tintpolicies", "Inherited", map[string]string{
		"attache.dev/target-kinds":           "Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io",
		"attache.dev/hierarchy":              "Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io,Service",
		"attache.dev/effective-target-kinds": "Service",
		AnnotationOwnedBy:                    testControllerName,
	})
}

func policyCRD(gvk schema.GroupVersionKind, plural, class string, ann map[string]string) *unstructured.Unstructured {
	a := map[string]any{}
	for k, v := range ann {
		a[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":        plural + "." + gvk.Group,
			"labels":      map[string]any{"gateway.networking.k8s.io/policy": class},
			"annotations": a,
		},
		"spec": map[string]any{
			"group": gvk.Group,
			"names": map[string]any{"kind": gvk.Kind, "plural": plural},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": gvk.Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

func service(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}},
	}}
}

func gateway(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"gatewayClassName": "example",
			"listeners": []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80)}}},
	}}
}

func route(name, gw string, backends ...string) *unstructured.Unstructured {
	var refs []any
	for _, b := range backends {
		refs = append(refs, map[string]any{"name": b, "port": int64(80)})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"parentRefs": []any{map[string]any{"name": gw}},
			"rules": []any{map[string]any{"backendRefs": refs}}},
	}}
}

// pol is a policy of gvk targeting kind/name (Service and Namespace are
// core, the others Gateway API) with the given spec fields.
func pol(gvk schema.GroupVersionKind, name, kind, target string, fields map[string]any) *unstructured.Unstructured {
	group := topology.GatewayGroup
	if kind == "Service" || kind == "Namespace" {
		group = ""
	}
	spec := map[string]any{"targetRefs": []any{map[string]any{"group": group, "kind": kind, "name": target}}}
	for k, v := range fields {
		spec[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
		"metadata": map[string]any{"name": name},
		"spec":     spec,
	}}
}

// affected is the message of a target's Affected condition of a kind, ""
// when absent.
func affected(u *unstructured.Unstructured, kind string) string {
	c := condition(u, "attache.dev/"+kind+"Affected")
	if c == nil {
		return ""
	}
	return fmt.Sprint(c["message"])
}

// TestPolicyCRDCreatedAfterStart creates a policy CRD while the controller
// runs: its kind is watched without a restart, and owned through the CRD
// annotation.
func TestPolicyCRDCreatedAfterStart(t *testing.T) {
	k := newKube(t)
	r := startController(t, Options{}, nil)
	r.waitIdle(t, 0)
	const ns = "late"
	k.namespace(ns)
	k.apply(ns, service("a"))
	// A kind of its own, so that it is new whatever ran before.
	gvkLate := schema.GroupVersionKind{Group: "after.example.com", Version: "v1", Kind: "LatePolicy"}
	k.apply("", policyCRD(gvkLate, "latepolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Service",
		AnnotationOwnedBy:          testControllerName,
	}))
	k.apply(ns, pol(gvkLate, "sp", "Service", "a", map[string]any{"size": int64(3)}))
	waitFor(t, "LatePolicy sp accepted and Service a affected", func() string {
		p := k.get(gvkLate, ns, "sp")
		if got := policySummary(p); got != "True/Accepted True/Programmed" {
			return "sp: " + got
		}
		if og := condition(p, "Accepted")["observedGeneration"]; og != p.GetGeneration() {
			return fmt.Sprintf("sp: observedGeneration %v, generation %d", og, p.GetGeneration())
		}
		if got := affected(k.get(gvkService, ns, "a"), "LatePolicy"); got != "Affected by LatePolicy late/sp" {
			return "Service a: " + got
		}
		return ""
	})
}

// TestPolicyDeletedCleansUp deletes policies: the Affected conditions of
// the Service and the Namespace and the annotation of the HTTPRoute they
// affected go.
func TestPolicyDeletedCleansUp(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "cleanup"
	k.namespace(ns)
	k.apply(ns, service("a"), gateway("g"), route("r", "g", "a"))
	k.apply(ns,
		pol(gvkSizePolicy, "on-svc", "Service", "a", map[string]any{"size": int64(1)}),
		pol(gvkSizePolicy, "on-route", "HTTPRoute", "r", map[string]any{"size": int64(2)}),
		pol(gvkSizePolicy, "on-ns", "Namespace", ns, map[string]any{"size": int64(3)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "the Service and Namespace conditions and the route annotation", func() string {
		if got := affected(k.get(gvkService, ns, "a"), "SizePolicy"); got != "Affected by SizePolicy cleanup/on-svc" {
			return "Service a: " + got
		}
		if got := affected(k.get(gvkNamespace, "", ns), "SizePolicy"); got != "Affected by SizePolicy cleanup/on-ns" {
			return "Namespace: " + got
		}
		if got := k.get(gvkHTTPRoute, ns, "r").GetAnnotations()["attache.dev/SizePolicyAffected"]; got != "true" {
			return "HTTPRoute r annotation: " + got
		}
		return ""
	})
	// Namespace conditions have no observedGeneration field: the
	// comparison must settle all the same.
	r.waitIdle(t, 0)
	n0 := r.writes.count()
	r.c.queue.Add(itemRecompute)
	r.waitIdle(t, r.c.computations.Load())
	if w := r.writes.since(n0); len(w) > 0 {
		t.Errorf("converged, a recomputation wrote %v", w)
	}
	k.delete(gvkSizePolicy, ns, "on-svc")
	k.delete(gvkSizePolicy, ns, "on-route")
	k.delete(gvkSizePolicy, ns, "on-ns")
	waitFor(t, "the conditions and annotation removed", func() string {
		if c := condition(k.get(gvkService, ns, "a"), "attache.dev/SizePolicyAffected"); c != nil {
			return fmt.Sprintf("Service a still has %v", c)
		}
		if c := condition(k.get(gvkNamespace, "", ns), "attache.dev/SizePolicyAffected"); c != nil {
			return fmt.Sprintf("Namespace still has %v", c)
		}
		if got, ok := k.get(gvkHTTPRoute, ns, "r").GetAnnotations()["attache.dev/SizePolicyAffected"]; ok {
			return "HTTPRoute r still annotated: " + got
		}
		return ""
	})
}

// TestTargetDeletedTargetNotFound deletes a policy's target: the policy
// turns TargetNotFound; created again, it is picked up again.
func TestTargetDeletedTargetNotFound(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "notfound"
	k.namespace(ns)
	k.apply(ns, service("a"), pol(gvkSizePolicy, "sp", "Service", "a", map[string]any{"size": int64(1)}))
	startController(t, Options{}, nil)
	waitFor(t, "sp accepted", func() string {
		if got := policySummary(k.get(gvkSizePolicy, ns, "sp")); got != "True/Accepted True/Programmed" {
			return got
		}
		return ""
	})
	k.delete(gvkService, ns, "a")
	waitFor(t, "sp TargetNotFound", func() string {
		p := k.get(gvkSizePolicy, ns, "sp")
		if got := policySummary(p); got != "False/TargetNotFound -" {
			return got
		}
		anc := ancestorsOf(p, testControllerName)
		if len(anc) != 1 || condSummary(condition(&unstructured.Unstructured{Object: anc[0]}, "Accepted", "conditions")) != "False/TargetNotFound" {
			return fmt.Sprintf("ancestors %v", anc)
		}
		return ""
	})
	k.apply(ns, service("a"))
	waitFor(t, "sp accepted again, Service a affected", func() string {
		if got := policySummary(k.get(gvkSizePolicy, ns, "sp")); got != "True/Accepted True/Programmed" {
			return got
		}
		if got := affected(k.get(gvkService, ns, "a"), "SizePolicy"); got == "" {
			return "Service a not affected"
		}
		return ""
	})
}

// inNamespace keeps the write requests on objects of namespace ns (and on
// the Namespace itself).
func inNamespace(writes []string, ns string) []string {
	var out []string
	for _, w := range writes {
		if strings.Contains(w, "/namespaces/"+ns+"/") || strings.HasSuffix(w, "/namespaces/"+ns) {
			out = append(out, w)
		}
	}
	return out
}

// counterValue reads attache_status_writes_total for a kind.
func counterValue(t *testing.T, kind string) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := statusWrites.WithLabelValues(kind).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestWriteCounts checks the fanout goals by counting the write requests
// the API server receives from the controller and the
// attache_status_writes_total counter.
func TestWriteCounts(t *testing.T) {
	k := newKube(t)
	k.apply("", tintPolicyCRD())
	k.applyFile(filepath.Join("..", "..", "deploy", "crds", "effectivepolicies.attache.dev.yaml"), "")
	const ns = "count"
	k.namespace(ns)
	k.apply(ns, gateway("g"), route("r1", "g", "a"), route("r2", "g", "b"), service("a"), service("b"))
	opts := Options{EffectivePolicies: true}
	r := startController(t, opts, nil)
	r.waitIdle(t, 0)
	before := r.writes.count()

	// Creating a policy that affects N=2 Services: at most N+1 writes for
	// status and Affected conditions, plus N EffectivePolicies.
	t0 := time.Now()
	k.apply(ns, pol(gvkTintPolicy, "t1", "Gateway", "g", map[string]any{"tint": "red"}))
	waitFor(t, "t1 accepted, a and b affected", func() string {
		if got := policySummary(k.get(gvkTintPolicy, ns, "t1")); got != "True/Accepted True/Programmed" {
			return "t1: " + got
		}
		for _, s := range []string{"a", "b"} {
			if got := affected(k.get(gvkService, ns, s), "TintPolicy"); got != "Affected by TintPolicy count/t1" {
				return "Service " + s + ": " + got
			}
			if effectiveEntry(k.get(gvkEffectivePolicy, ns, "service."+s), testControllerName) == nil {
				return "no EffectivePolicy service." + s
			}
		}
		return ""
	})
	r.waitIdle(t, 0)
	created := inNamespace(r.writes.since(before), ns)
	t.Logf("creating t1 (N=2): %d writes in %v: %v", len(created), time.Since(t0).Round(time.Millisecond), created)
	if eff := countContaining(created, "/effectivepolicies"); len(created)-eff > 3 || eff > 2 {
		t.Errorf("creating a policy affecting 2 Services cost %d writes (%d of EffectivePolicies), want at most 3 + 2", len(created), eff)
	}

	// A resync (a full computation, everything compared) with nothing
	// changed writes nothing.
	n0, c0 := r.writes.count(), r.c.computations.Load()
	r.c.queue.Add(itemResync)
	r.waitIdle(t, c0)
	if w := r.writes.since(n0); len(w) > 0 {
		t.Errorf("resync with nothing changed wrote %v", w)
	}

	// Editing the spec without changing what it affects: only t1's status
	// (its observedGeneration), no target condition.
	n0, c0 = r.writes.count(), r.c.computations.Load()
	svcBefore := counterValue(t, "Service")
	polBefore := counterValue(t, "TintPolicy.counting.example.com")
	edited := k.patch(gvkTintPolicy, ns, "t1", `{"spec":{"tint":"blue"}}`)
	waitFor(t, "t1's observedGeneration", func() string {
		p := k.get(gvkTintPolicy, ns, "t1")
		if og := condition(p, "Programmed")["observedGeneration"]; og != edited.GetGeneration() {
			return fmt.Sprintf("observedGeneration %v, want %d", og, edited.GetGeneration())
		}
		return ""
	})
	waitFor(t, "the EffectivePolicies showing blue", func() string {
		for _, svc := range []string{"a", "b"} {
			if v := entryField(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service."+svc), testControllerName), "tint", "t1"); v != "blue" {
				return fmt.Sprintf("%s: tint %v", svc, v)
			}
		}
		return ""
	})
	r.waitIdle(t, c0)
	w := r.writes.since(n0)
	t.Logf("editing t1's spec: %v", w)
	if eff := countContaining(w, "/effectivepolicies/service."); len(w) != 3 || eff != 2 || countContaining(w, "/tintpolicies/t1/status") != 1 {
		t.Errorf("editing t1's spec wrote %v, want only t1's status and the 2 EffectivePolicies", w)
	}
	if d := counterValue(t, "Service") - svcBefore; d != 0 {
		t.Errorf("attache_status_writes_total{kind=Service} grew by %v", d)
	}
	if d := counterValue(t, "TintPolicy.counting.example.com") - polBefore; d != 1 {
		t.Errorf("attache_status_writes_total{kind=TintPolicy.counting.example.com} grew by %v, want 1", d)
	}

	// A restart with nothing changed writes nothing.
	r.stop()
	r2 := startController(t, opts, nil)
	r2.waitIdle(t, 0)
	// Only this test's objects: others' (with -shuffle) may need a write
	// from a new controller.
	if w := inNamespace(r2.writes.since(0), ns); len(w) > 0 {
		t.Errorf("restart with nothing changed wrote %v", w)
	}
}

// countContaining counts the writes whose path contains s.
func countContaining(writes []string, s string) int {
	n := 0
	for _, w := range writes {
		if strings.Contains(w, s) {
			n++
		}
	}
	return n
}

// TestOtherWritersKept checks that another controller's ancestor entry and
// conditions, on the policy and on the target, survive our writes, also
// when it writes concurrently.
func TestOtherWritersKept(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "foreign"
	k.namespace(ns)
	k.apply(ns, service("a"), pol(gvkSizePolicy, "sp", "Service", "a", map[string]any{"size": int64(1)}))
	const other = "other.example.com/ctrl"
	// theirWrite is how a well-behaved other controller writes: read,
	// replace its own entry and condition, update with the
	// resourceVersion, retry on conflict.
	theirWrite := func(i int) {
		t.Helper()
		entry := map[string]any{
			"ancestorRef":    map[string]any{"group": "", "kind": "Service", "name": "a", "namespace": ns},
			"controllerName": other,
			"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted",
				"message": fmt.Sprintf("theirs %d", i), "lastTransitionTime": "2020-01-01T00:00:00Z"}},
		}
		cond := map[string]any{"type": "other.example.com/Ready", "status": "True", "reason": "Ready",
			"message": fmt.Sprintf("theirs %d", i), "lastTransitionTime": "2020-01-01T00:00:00Z"}
		for attempt := 0; ; attempt++ {
			u := k.get(gvkSizePolicy, ns, "sp")
			var anc, conds []any
			l, _, _ := unstructured.NestedSlice(u.Object, "status", "ancestors")
			for _, a := range maps(l) {
				if a["controllerName"] != other {
					anc = append(anc, a)
				}
			}
			l, _, _ = unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range maps(l) {
				if c["type"] != "other.example.com/Ready" {
					conds = append(conds, c)
				}
			}
			u.Object["status"] = map[string]any{"ancestors": append(anc, entry), "conditions": append(conds, cond)}
			_, err := k.resource(u).UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
			if err == nil {
				return
			}
			if !apierrors.IsConflict(err) || attempt > 50 {
				t.Errorf("their write %d: %v", i, err)
				return
			}
		}
	}
	theirWrite(0)
	k.patch(gvkService, ns, "a", `{"status":{"conditions":[{"type":"other.example.com/Healthy","status":"True","reason":"Healthy","message":"theirs","lastTransitionTime":"2020-01-01T00:00:00Z"}]}}`, "status")
	r := startController(t, Options{}, nil)

	check := func(i int) string {
		p := k.get(gvkSizePolicy, ns, "sp")
		if got := policySummary(p); got != "True/Accepted True/Programmed" {
			return "sp: " + got
		}
		theirs := ancestorsOf(p, other)
		if len(theirs) != 1 || condition(&unstructured.Unstructured{Object: theirs[0]}, "Accepted", "conditions")["message"] != fmt.Sprintf("theirs %d", i) {
			return fmt.Sprintf("their ancestor entries: %v", theirs)
		}
		if len(ancestorsOf(p, testControllerName)) != 1 {
			return "our ancestor entry missing"
		}
		if c := condition(p, "other.example.com/Ready"); c == nil || c["message"] != fmt.Sprintf("theirs %d", i) || c["lastTransitionTime"] != "2020-01-01T00:00:00Z" {
			return fmt.Sprintf("their condition: %v", c)
		}
		svc := k.get(gvkService, ns, "a")
		if c := condition(svc, "other.example.com/Healthy"); c == nil || c["lastTransitionTime"] != "2020-01-01T00:00:00Z" {
			return fmt.Sprintf("their Service condition: %v", c)
		}
		if affected(svc, "SizePolicy") == "" {
			return "Service a not affected"
		}
		return ""
	}
	waitFor(t, "our status next to theirs", func() string { return check(0) })
	r.waitIdle(t, 0)

	// They write; we have nothing to write.
	n0 := r.writes.count()
	theirWrite(1)
	r.waitIdle(t, 0)
	if w := r.writes.since(n0); len(w) > 0 {
		t.Errorf("their status write made us write %v", w)
	}
	waitFor(t, "their write kept", func() string { return check(1) })

	// Both write at once: our spec edits force our writes while they
	// rewrite theirs; conflicts are retried and both survive.
	conflicts := func() float64 {
		m := &dto.Metric{}
		if err := statusWriteErrors.WithLabelValues("SizePolicy.late.example.com", "Conflict").Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	conflicts0 := conflicts()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 2; i <= 20; i++ {
			theirWrite(i)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var last *unstructured.Unstructured
	go func() {
		defer wg.Done()
		for i := 2; i <= 10; i++ {
			last = k.patch(gvkSizePolicy, ns, "sp", fmt.Sprintf(`{"spec":{"size":%d}}`, i))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	wg.Wait()
	waitFor(t, "both writers' final status", func() string {
		if msg := check(20); msg != "" {
			return msg
		}
		p := k.get(gvkSizePolicy, ns, "sp")
		if og := condition(p, "Accepted")["observedGeneration"]; og != last.GetGeneration() {
			return fmt.Sprintf("observedGeneration %v, want %d", og, last.GetGeneration())
		}
		return ""
	})
	t.Logf("our write conflicts retried meanwhile: %v", conflicts()-conflicts0)
}

// TestAPIServerRestart restarts kube-apiserver under a running controller:
// it converges on what changed after the restart.
func TestAPIServerRestart(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "restart"
	k.namespace(ns)
	k.apply(ns, service("a"), service("b"), pol(gvkSizePolicy, "sp1", "Service", "a", map[string]any{"size": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "Service a affected", func() string {
		if affected(k.get(gvkService, ns, "a"), "SizePolicy") == "" {
			return "not yet"
		}
		return ""
	})
	r.waitIdle(t, 0)
	env.RestartAPIServer(t)
	k = newKube(t) // fresh discovery
	k.apply(ns, pol(gvkSizePolicy, "sp2", "Service", "b", map[string]any{"size": int64(2)}))
	k.delete(gvkSizePolicy, ns, "sp1")
	waitFor(t, "b affected by sp2, a by nothing", func() string {
		if got := policySummary(k.get(gvkSizePolicy, ns, "sp2")); got != "True/Accepted True/Programmed" {
			return "sp2: " + got
		}
		if got := affected(k.get(gvkService, ns, "b"), "SizePolicy"); got != "Affected by SizePolicy restart/sp2" {
			return "Service b: " + got
		}
		if got := affected(k.get(gvkService, ns, "a"), "SizePolicy"); got != "" {
			return "Service a: " + got
		}
		return ""
	})
}

// TestGatewayConditionCap fills a Gateway's conditions (the API allows 8):
// the Affected condition goes to an annotation, with an Event, and moves
// into the conditions once there is room.
func TestGatewayConditionCap(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "cap"
	k.namespace(ns)
	k.apply(ns, gateway("g"))
	var conds []string
	for i := range 8 {
		conds = append(conds, fmt.Sprintf(`{"type":"other.example.com/C%d","status":"True","reason":"R","message":"m","lastTransitionTime":"2020-01-01T00:00:00Z"}`, i))
	}
	k.patch(gvkGateway, ns, "g", `{"status":{"conditions":[`+strings.Join(conds, ",")+`]}}`, "status")
	k.apply(ns, pol(gvkSizePolicy, "sp", "Gateway", "g", map[string]any{"size": int64(1)}))
	startController(t, Options{}, nil)
	waitFor(t, "the annotation on the full Gateway", func() string {
		g := k.get(gvkGateway, ns, "g")
		if got := g.GetAnnotations()["attache.dev/SizePolicyAffected"]; got != "true" {
			return "annotation: " + got
		}
		if l, _, _ := unstructured.NestedSlice(g.Object, "status", "conditions"); len(l) != 8 {
			return fmt.Sprintf("%d conditions", len(l))
		}
		return ""
	})
	waitFor(t, "the Event", func() string {
		evs, err := env.Clientset(t).EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "AffectedConditionOverflow" && e.Regarding.Name == "g" && e.Regarding.Kind == "Gateway" {
				return ""
			}
		}
		return fmt.Sprintf("no AffectedConditionOverflow event among %d", len(evs.Items))
	})
	// Room again: the condition replaces the annotation.
	k.patch(gvkGateway, ns, "g", `{"status":{"conditions":[`+strings.Join(conds[:6], ",")+`]}}`, "status")
	waitFor(t, "the condition in place of the annotation", func() string {
		g := k.get(gvkGateway, ns, "g")
		if got, ok := g.GetAnnotations()["attache.dev/SizePolicyAffected"]; ok {
			return "annotation still there: " + got
		}
		if affected(g, "SizePolicy") != "Affected by SizePolicy cap/sp" {
			return "no condition"
		}
		return ""
	})
}

// TestProgramHook checks Programmed against the Program hook: False with
// its error, Reconciling while it runs, True once it succeeded; and
// PolicyErrors failing one policy only.
func TestProgramHook(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "program"
	k.namespace(ns)
	k.apply(ns, service("a"), service("b"),
		pol(gvkSizePolicy, "sp", "Service", "a", map[string]any{"size": int64(1)}),
		pol(gvkSizePolicy, "sp2", "Service", "b", map[string]any{"size": int64(1)}))

	var mode atomic.Value // "fail", "ok", "block", "one"
	mode.Store("fail")
	release := make(chan struct{})
	var calls atomic.Int64
	program := func(ctx context.Context, res *engine.Result) error {
		calls.Add(1)
		switch mode.Load() {
		case "fail":
			return errors.New("data plane down")
		case "block":
			select {
			case <-release:
			case <-ctx.Done():
			}
		case "one":
			return PolicyErrors{{Group: gvkSizePolicy.Group, Kind: "SizePolicy", Namespace: ns, Name: "sp2"}: errors.New("sp2 rejected")}
		}
		return nil
	}
	startController(t, Options{Program: program, ReconcilingAfter: 300 * time.Millisecond}, nil)
	programmedOf := func(name string) map[string]any { return condition(k.get(gvkSizePolicy, ns, name), "Programmed") }
	waitFor(t, "Programmed False with the hook's error", func() string {
		c := programmedOf("sp")
		if c == nil || c["status"] != "False" || c["reason"] != "Reconciling" || c["message"] != "Programming failed: data plane down" {
			return fmt.Sprintf("%v", c)
		}
		if condSummary(condition(k.get(gvkSizePolicy, ns, "sp"), "Accepted")) != "True/Accepted" {
			return "not accepted"
		}
		return ""
	})
	mode.Store("ok")
	waitFor(t, "Programmed True after a retry", func() string {
		if got := condSummary(programmedOf("sp")); got != "True/Programmed" {
			return got
		}
		return ""
	})
	mode.Store("block")
	edited := k.patch(gvkSizePolicy, ns, "sp", `{"spec":{"size":5}}`)
	waitFor(t, "Reconciling while Program runs", func() string {
		c := programmedOf("sp")
		if c == nil || c["reason"] != "Reconciling" || c["message"] != msgReconciling || c["observedGeneration"] != edited.GetGeneration() {
			return fmt.Sprintf("%v", c)
		}
		// sp2's status does not change with this computation: left alone.
		if got := condSummary(programmedOf("sp2")); got != "True/Programmed" {
			return "sp2: " + got
		}
		return ""
	})
	close(release)
	waitFor(t, "Programmed once Program returned", func() string {
		c := programmedOf("sp")
		if condSummary(c) != "True/Programmed" || c["observedGeneration"] != edited.GetGeneration() {
			return fmt.Sprintf("%v", c)
		}
		return ""
	})
	mode.Store("one")
	k.patch(gvkSizePolicy, ns, "sp2", `{"spec":{"size":7}}`)
	waitFor(t, "only sp2 failed", func() string {
		if c := programmedOf("sp2"); c == nil || c["message"] != "Programming failed: sp2 rejected" {
			return fmt.Sprintf("sp2: %v", c)
		}
		if got := condSummary(programmedOf("sp")); got != "True/Programmed" {
			return "sp: " + got
		}
		return ""
	})
	mode.Store("ok")
	waitFor(t, "sp2 programmed", func() string {
		if got := condSummary(programmedOf("sp2")); got != "True/Programmed" {
			return got
		}
		return ""
	})
	if calls.Load() == 0 {
		t.Error("Program never called")
	}
}

// staleCache serves one object as it was earlier: a cache that has not
// seen the latest write yet.
type staleCache struct {
	cache.Cache
	obj *unstructured.Unstructured
}

func (s staleCache) Get(_ context.Context, _ client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	s.obj.DeepCopyInto(out.(*unstructured.Unstructured))
	return nil
}

// TestConflictRetriedFromFreshRead writes a policy's status from a stale
// cache while another controller has written since: the patch (with the
// stale resourceVersion as precondition) conflicts, is retried from a
// fresh read, and the other controller's entry survives.
func TestConflictRetriedFromFreshRead(t *testing.T) {
	k := newKube(t)
	k.apply("", sizePolicyCRD())
	const ns = "conflict"
	k.namespace(ns)
	k.apply(ns, service("a"), pol(gvkSizePolicy, "sp", "Service", "a", map[string]any{"size": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "sp accepted", func() string {
		if got := policySummary(k.get(gvkSizePolicy, ns, "sp")); got != "True/Accepted True/Programmed" {
			return got
		}
		return ""
	})
	r.waitIdle(t, 0)
	r.stop()
	key := objKey{Group: gvkSizePolicy.Group, Kind: "SizePolicy", Namespace: ns, Name: "sp"}
	d := *r.c.policies[key]
	stale := k.get(gvkSizePolicy, ns, "sp")

	// Another controller adds its entry.
	theirs := stale.DeepCopy()
	anc, _, _ := unstructured.NestedSlice(theirs.Object, "status", "ancestors")
	anc = append(anc, map[string]any{
		"ancestorRef":    map[string]any{"group": "", "kind": "Service", "name": "a", "namespace": ns},
		"controllerName": "other.example.com/ctrl",
		"conditions": []any{map[string]any{"type": "Accepted", "status": "True", "reason": "Accepted",
			"message": "theirs", "lastTransitionTime": "2020-01-01T00:00:00Z"}},
	})
	if err := unstructured.SetNestedSlice(theirs.Object, anc, "status", "ancestors"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.resource(theirs).UpdateStatus(context.Background(), theirs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Ours, from the stale cache, with something to change.
	d.conditions = append([]engine.Condition(nil), d.conditions...)
	d.conditions[0].Message = "forced"
	c := &Controller{opts: r.c.opts, client: r.c.client, api: r.c.api, log: r.c.log,
		cache: staleCache{obj: stale}, stale: map[objKey]map[string]bool{}, unsettledWrites: map[objKey]string{}}
	conflict := func() float64 {
		m := &dto.Metric{}
		if err := statusWriteErrors.WithLabelValues("SizePolicy.late.example.com", "Conflict").Write(m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}
	c0, n0 := conflict(), r.writes.count()
	if err := c.writePolicy(context.Background(), &d, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := conflict() - c0; got != 1 {
		t.Errorf("conflicts: %v, want 1", got)
	}
	// The client is the stopped manager's: its write counter still counts.
	if w := r.writes.since(n0); len(w) != 2 {
		t.Errorf("write requests %v, want the conflicting patch and its retry", w)
	}
	p := k.get(gvkSizePolicy, ns, "sp")
	if got := condition(p, "Accepted")["message"]; got != "forced" {
		t.Errorf("our condition: %v", got)
	}
	if a := ancestorsOf(p, "other.example.com/ctrl"); len(a) != 1 {
		t.Errorf("their entry lost: %v", p.Object["status"])
	}
	if a := ancestorsOf(p, testControllerName); len(a) != 1 {
		t.Errorf("our entry: %v", a)
	}
}

// TestPrunedStatusDoesNotLoop owns a kind whose status schema has
// ancestors but no conditions (as BackendTLSPolicy's): the API server
// drops the conditions written, and the controller must not write them
// again and again.
func TestPrunedStatusDoesNotLoop(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "strict.example.com", Version: "v1", Kind: "StrictPolicy"}
	crd := policyCRD(gvk, "strictpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Service",
		AnnotationOwnedBy:          testControllerName,
	})
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	versions[0].(map[string]any)["schema"] = map[string]any{"openAPIV3Schema": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			"status": map[string]any{"type": "object", "properties": map[string]any{
				"ancestors": map[string]any{"type": "array", "items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	k.apply("", crd)
	const ns = "strict"
	k.namespace(ns)
	k.apply(ns, service("a"), pol(gvk, "sp", "Service", "a", map[string]any{"size": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "the ancestors written", func() string {
		p := k.get(gvk, ns, "sp")
		if len(ancestorsOf(p, testControllerName)) != 1 {
			return fmt.Sprintf("status %v", p.Object["status"])
		}
		if affected(k.get(gvkService, ns, "a"), "StrictPolicy") == "" {
			return "Service a not affected"
		}
		return ""
	})
	r.waitIdle(t, 0)
	n0 := r.writes.count()
	time.Sleep(time.Second)
	r.c.queue.Add(itemRecompute)
	r.waitIdle(t, r.c.computations.Load())
	if w := inNamespace(r.writes.since(n0), ns); len(w) > 0 {
		t.Errorf("writes after convergence: %v", w)
	}
	if w := inNamespace(r.writes.since(0), ns); len(w) > 2 {
		t.Errorf("%d writes in all, want 2 (the policy once, the Service once): %v", len(w), w)
	}
}
