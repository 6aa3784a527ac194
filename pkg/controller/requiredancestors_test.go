package controller

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/attache-dev/attache/pkg/policy"
)

// requiredAncestorsCRD is a policy CRD whose status schema is Gateway API's
// PolicyStatus as the implementations' CRDs generate it (NGINX Gateway
// Fabric's, Envoy Gateway's, BackendTLSPolicy's): status.ancestors
// required, at most 16 entries; with conditions, a status.conditions field
// beside it (as a custom kind may have).
func requiredAncestorsCRD(gvk schema.GroupVersionKind, plural string, conditions bool, ann map[string]string) *unstructured.Unstructured {
	u := policyCRD(gvk, plural, "Direct", ann)
	props := map[string]any{"ancestors": map[string]any{"type": "array", "maxItems": int64(16),
		"items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	if conditions {
		props["conditions"] = map[string]any{"type": "array",
			"items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	}
	v := u.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	v["schema"] = map[string]any{"openAPIV3Schema": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			"status": map[string]any{"type": "object", "required": []any{"ancestors"}, "properties": props},
		},
	}}
	return u
}

// ancestorsField returns a policy's status.ancestors and whether the field
// is there.
func ancestorsField(u *unstructured.Unstructured) ([]any, bool) {
	l, found, _ := unstructured.NestedSlice(u.Object, "status", "ancestors")
	return l, found
}

// formatAny renders a list read from an object, or "absent".
func formatAny(l []any, found bool) string {
	if !found {
		return "absent"
	}
	return fmt.Sprint(l)
}

// A kind listing no missing target (attache.dev/missing-targets: problem,
// every NGINX Gateway Fabric kind) whose status schema requires
// status.ancestors: when the policy's only target is deleted, its last
// entry goes (status.ancestors: [], as removing the field is refused), and
// the controller settles instead of retrying the refused write.
func TestRequiredAncestorsLastEntryRemoved(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "reqanc.example.com", Version: "v1", Kind: "ReqAncPolicy"}
	k.apply("", requiredAncestorsCRD(gvk, "reqancpolicies", false, map[string]string{
		"attache.dev/target-kinds":      "Service",
		policy.AnnotationMissingTargets: "problem",
		AnnotationOwnedBy:               testControllerName,
	}))
	defer k.delete(crdGVK, "", "reqancpolicies."+gvk.Group)
	const ns = "reqanc-deleted"
	k.namespace(ns)
	k.apply(ns, service("s1"), pol(gvk, "p", "Service", "s1", map[string]any{"x": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "the entry for s1", func() string {
		if got := ancestorSummary(k.get(gvk, ns, "p"), "Accepted"); got != "Service/s1 True/Accepted" {
			return got
		}
		return ""
	})
	r.waitIdle(t, 0)
	k.delete(gvkService, ns, "s1")
	waitFor(t, "the entry for s1 gone", func() string {
		if anc, found := ancestorsField(k.get(gvk, ns, "p")); !found || len(anc) != 0 {
			return "status.ancestors: " + formatAny(anc, found)
		}
		return ""
	})
	r.waitIdle(t, 0)
	if n := r.c.queue.NumRequeues(itemRecompute); n != 0 {
		t.Errorf("the last recomputation failed (%d retries)", n)
	}
}

// After an upgrade to a release listing no missing target for the kind,
// the TargetNotFound entries an older release wrote go: the policy with
// ours only gets status.ancestors: [], the one with another controller's
// entry keeps that one.
func TestRequiredAncestorsOldEntriesRemoved(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "reqanc2.example.com", Version: "v1", Kind: "ReqAncPolicy"}
	k.apply("", requiredAncestorsCRD(gvk, "reqancpolicies", false, map[string]string{
		"attache.dev/target-kinds":      "Service",
		policy.AnnotationMissingTargets: "problem",
		AnnotationOwnedBy:               testControllerName,
	}))
	defer k.delete(crdGVK, "", "reqancpolicies."+gvk.Group)
	const ns = "reqanc-upgrade"
	const other = "other.example.com/x"
	k.namespace(ns)
	k.apply(ns, pol(gvk, "p", "Service", "gone", map[string]any{"x": int64(1)}), pol(gvk, "q", "Service", "gone", map[string]any{"x": int64(1)}))
	entry := func(ctl string) string {
		return `{"ancestorRef":{"group":"","kind":"Service","name":"gone","namespace":"` + ns + `"},"controllerName":"` + ctl +
			`","conditions":[{"type":"Accepted","status":"False","reason":"TargetNotFound","message":"old","lastTransitionTime":"2024-01-01T00:00:00Z"}]}`
	}
	k.patch(gvk, ns, "p", `{"status":{"ancestors":[`+entry(testControllerName)+`]}}`, "status")
	k.patch(gvk, ns, "q", `{"status":{"ancestors":[`+entry(testControllerName)+`,`+entry(other)+`]}}`, "status")
	r := startController(t, Options{}, nil)
	waitFor(t, "our old entries gone", func() string {
		for _, n := range []string{"p", "q"} {
			if anc := ancestorsOf(k.get(gvk, ns, n), testControllerName); len(anc) != 0 {
				return n + ": " + fmt.Sprint(anc)
			}
		}
		return ""
	})
	r.waitIdle(t, 0)
	if anc, found := ancestorsField(k.get(gvk, ns, "p")); !found || len(anc) != 0 {
		t.Errorf("p: status.ancestors %s, want []", formatAny(anc, found))
	}
	if anc := ancestorsOf(k.get(gvk, ns, "q"), other); len(anc) != 1 {
		t.Errorf("q: %d entries of %s, want 1", len(anc), other)
	}
	if n := r.c.queue.NumRequeues(itemRecompute); n != 0 {
		t.Errorf("the last recomputation failed (%d retries)", n)
	}
}

// A new policy with no entry, of a kind whose schema requires
// status.ancestors and has status.conditions: its first status carries
// its conditions and an empty status.ancestors, not a status the schema
// refuses.
func TestRequiredAncestorsFirstStatusWithout(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "reqanc3.example.com", Version: "v1", Kind: "ReqAncPolicy"}
	k.apply("", requiredAncestorsCRD(gvk, "reqancpolicies", true, map[string]string{
		"attache.dev/target-kinds":      "Service",
		policy.AnnotationMissingTargets: "problem",
		AnnotationOwnedBy:               testControllerName,
	}))
	defer k.delete(crdGVK, "", "reqancpolicies."+gvk.Group)
	const ns = "reqanc-first"
	k.namespace(ns)
	k.apply(ns, pol(gvk, "p", "Service", "gone", map[string]any{"x": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "the policy's conditions", func() string {
		p := k.get(gvk, ns, "p")
		if c := condition(p, "Accepted"); c == nil || c["status"] != "False" {
			return fmt.Sprintf("Accepted: %v", c)
		}
		if anc, found := ancestorsField(p); !found || len(anc) != 0 {
			return "status.ancestors: " + formatAny(anc, found)
		}
		return ""
	})
	r.waitIdle(t, 0)
	if n := r.c.queue.NumRequeues(itemRecompute); n != 0 {
		t.Errorf("the last recomputation failed (%d retries)", n)
	}
}
