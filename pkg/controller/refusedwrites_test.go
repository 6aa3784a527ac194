package controller

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A policy whose status the API server refuses (its CRD allows one
// ancestor entry, it has two targets) does not fail the computations: the
// other policies are written, the controller settles without retrying,
// the refusal is said in a Warning Event on the policy, and once the CRD
// allows more entries the policy's status is written.
func TestRefusedPolicyStatusSettles(t *testing.T) {
	ctx := context.Background()
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "refused.example.com", Version: "v1", Kind: "RefusedPolicy"}
	crd := func(maxItems int64) {
		u := requiredAncestorsCRD(gvk, "refusedpolicies", true, map[string]string{
			"attache.dev/target-kinds": "Service",
			AnnotationOwnedBy:          testControllerName,
		})
		v := u.Object["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		status := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["status"].(map[string]any)
		status["properties"].(map[string]any)["ancestors"].(map[string]any)["maxItems"] = maxItems
		k.apply("", u)
	}
	crd(1)
	defer k.delete(crdGVK, "", "refusedpolicies."+gvk.Group)
	const ns = "refused"
	k.namespace(ns)
	two := pol(gvk, "two", "Service", "s1", map[string]any{"x": int64(1)})
	spec := two.Object["spec"].(map[string]any)
	spec["targetRefs"] = append(spec["targetRefs"].([]any), map[string]any{"group": "", "kind": "Service", "name": "s2"})
	k.apply(ns, service("s1"), service("s2"), two, pol(gvk, "one", "Service", "s1", map[string]any{"x": int64(1)}))
	r := startController(t, Options{}, nil)
	waitFor(t, "the status of the policy with one target", func() string {
		if got := ancestorSummary(k.get(gvk, ns, "one"), "Accepted"); got != "Service/s1 True/Accepted" {
			return got
		}
		return ""
	})
	r.waitIdle(t, 0)
	if n := r.c.queue.NumRequeues(itemRecompute); n != 0 {
		t.Errorf("the last recomputation failed (%d retries)", n)
	}
	if anc := ancestorsOf(k.get(gvk, ns, "two"), testControllerName); len(anc) != 0 {
		t.Errorf("two: %d entries, though its status is refused", len(anc))
	}
	evs, err := env.Clientset(t).EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs.Items {
		if e.Reason == "StatusWriteRefused" && e.Regarding.Name == "two" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d StatusWriteRefused Events on two, want 1", n)
	}

	// The rest keeps working: a new policy is written.
	k.apply(ns, service("s3"), pol(gvk, "later", "Service", "s3", map[string]any{"x": int64(1)}))
	waitFor(t, "the status of a policy created later", func() string {
		if got := ancestorSummary(k.get(gvk, ns, "later"), "Accepted"); got != "Service/s3 True/Accepted" {
			return got
		}
		return ""
	})

	// The CRD allows the entries now: the refused status is written.
	crd(16)
	waitFor(t, "the status of the policy with two targets", func() string {
		if anc := ancestorsOf(k.get(gvk, ns, "two"), testControllerName); len(anc) != 2 {
			return fmt.Sprintf("%d entries", len(anc))
		}
		return ""
	})
}
