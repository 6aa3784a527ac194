package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// TestBadInput feeds the controller malformed policies, a target of a kind
// the policy kind does not allow, a missing target, a policy CRD whose
// hierarchy names a kind twice (a cycle), and a mesh route that makes a
// cycle in the topology. Each is reported (in the policy's status, or by
// a Warning Event on the CRD), nothing crashes, and a good policy next to
// them is accepted and affects its Service.
func TestBadInput(t *testing.T) {
	k := newKube(t)
	k.apply("", tintPolicyCRD())
	gvkBroken := schema.GroupVersionKind{Group: "broken.example.com", Version: "v1", Kind: "BrokenPolicy"}
	k.apply("", policyCRD(gvkBroken, "brokenpolicies", "Inherited", map[string]string{
		"attache.dev/hierarchy": "Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io,Gateway.gateway.networking.k8s.io",
		AnnotationOwnedBy:       testControllerName,
	}))
	const ns = "bad"
	k.namespace(ns)
	loop := route("loop", "g", "a")
	// A mesh route below Service a, routing to a: a > loop > a.
	loop.Object["spec"].(map[string]any)["parentRefs"] = []any{map[string]any{"group": "", "kind": "Service", "name": "a", "port": int64(80)}}
	k.apply(ns, gateway("g"), route("r", "g", "a"), service("a"), loop)
	r := startController(t, Options{}, nil)

	bothStanzas := pol(gvkTintPolicy, "both-stanzas", "Gateway", "g", map[string]any{
		"defaults": map[string]any{"tint": "red"}, "overrides": map[string]any{"tint": "blue"}})
	noTargets := pol(gvkTintPolicy, "no-targets", "Gateway", "g", map[string]any{"tint": "red"})
	delete(noTargets.Object["spec"].(map[string]any), "targetRefs")
	badStrategy := pol(gvkTintPolicy, "bad-strategy", "Gateway", "g", map[string]any{"tint": "red", "strategy": "shuffle"})
	wrongKind := pol(gvkTintPolicy, "wrong-kind", "Gateway", "g", map[string]any{"tint": "red"})
	wrongKind.Object["spec"].(map[string]any)["targetRefs"] = []any{map[string]any{"group": "acme.io", "kind": "Frobnicator", "name": "f"}}
	k.apply(ns,
		bothStanzas, noTargets, badStrategy, wrongKind,
		pol(gvkTintPolicy, "missing-target", "Gateway", "nowhere", map[string]any{"tint": "red"}),
		pol(gvkBroken, "of-broken-kind", "Gateway", "g", map[string]any{"x": "y"}),
		pol(gvkTintPolicy, "good", "HTTPRoute", "r", map[string]any{"tint": "green"}),
	)

	want := map[string]struct{ summary, msg string }{
		"good":           {"True/Accepted True/Programmed", ""},
		"both-stanzas":   {"False/Invalid -", "spec"},
		"no-targets":     {"False/Invalid -", "spec.targetRefs"},
		"bad-strategy":   {"False/Invalid -", "shuffle"},
		"wrong-kind":     {"False/Invalid -", "Frobnicator"},
		"missing-target": {"False/TargetNotFound -", "nowhere"},
	}
	waitFor(t, "every policy's status, a's Affected condition and the CRD's Event", func() string {
		var bad []string
		for _, name := range sortedKeys(want) {
			u := k.get(gvkTintPolicy, ns, name)
			if got := policySummary(u); got != want[name].summary {
				bad = append(bad, fmt.Sprintf("%s: %s, want %s", name, got, want[name].summary))
				continue
			}
			if msg, _ := condition(u, "Accepted")["message"].(string); !strings.Contains(msg, want[name].msg) {
				bad = append(bad, fmt.Sprintf("%s: message %q does not name %q", name, msg, want[name].msg))
			}
		}
		if got := affected(k.get(gvkService, ns, "a"), "TintPolicy"); got != "Affected by TintPolicy bad/good" {
			bad = append(bad, "Service a: "+got)
		}
		if ev := crdEvent(t, "brokenpolicies."+gvkBroken.Group); !strings.Contains(ev, "hierarchy") {
			bad = append(bad, "BrokenPolicy CRD event: "+ev)
		}
		return strings.Join(bad, "; ")
	})
	// The instance of the broken kind is left alone: its kind is unusable.
	if st := k.get(gvkBroken, ns, "of-broken-kind").Object["status"]; st != nil {
		t.Errorf("the instance of the broken kind got a status: %v", st)
	}
	// Still alive and computing: a new good policy is picked up.
	c0 := r.c.computations.Load()
	k.apply(ns, pol(gvkTintPolicy, "good-2", "Gateway", "g", map[string]any{"overrides": map[string]any{"tint": "black"}}))
	waitFor(t, "good-2 accepted", func() string {
		if got := policySummary(k.get(gvkTintPolicy, ns, "good-2")); got != "True/Accepted True/Programmed" {
			return got
		}
		return ""
	})
	r.waitIdle(t, c0)
}

// crdEvent returns the message of the Warning Event InvalidPolicyKind on a
// CRD ("" when there is none).
func crdEvent(t *testing.T, crd string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := cs.EventsV1().Events(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.Reason == "InvalidPolicyKind" && e.Regarding.Name == crd {
			return e.Note
		}
	}
	return ""
}
