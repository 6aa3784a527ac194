package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// one before two: whether they are created in the same second (the
	// name breaks the tie) or not (the older wins), one wins on s1.
	k.apply(ns, service("s1"), service("s2"), pol(gvk, "one", "Service", "s1", map[string]any{"x": int64(1)}), two)
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

// A status write refused with 403 (the role grants no patch of the kind's
// status) is said once, in one Warning Event, and tried again once the
// refusal is no longer trusted (recheckAccess): once patch is granted, the
// status is written without anything else changing.
func TestForbiddenStatusWriteRetried(t *testing.T) {
	defer func(d time.Duration) { recheckAccess = d }(recheckAccess)
	recheckAccess = 2 * time.Second
	ctx := context.Background()
	cs := env.Clientset(t)
	gvk := schema.GroupVersionKind{Group: "forbid.example.com", Version: "v1", Kind: "ForbidPolicy"}
	const user = "system:serviceaccount:attache-system:attache-controller-forbid"
	role := shippedRoleWithout(t, "attache-controller-forbid")
	read := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "attache-test-forbid-read"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{gvk.Group}, Resources: []string{"forbidpolicies"}, Verbs: []string{"get", "list", "watch"}}}}
	write := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "attache-test-forbid-write"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{gvk.Group}, Resources: []string{"forbidpolicies/status"}, Verbs: []string{"patch"}}}}
	for _, r := range []*rbacv1.ClusterRole{role, read, write} {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	env.BindClusterRole(t, user, role.Name)
	env.BindClusterRole(t, user, read.Name)
	k := newKube(t)
	k.apply("", policyCRD(gvk, "forbidpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds": "Service",
		AnnotationOwnedBy:          testControllerName,
	}))
	defer k.delete(crdGVK, "", "forbidpolicies."+gvk.Group)
	const ns = "forbid"
	k.namespace(ns)
	k.apply(ns, service("s1"), pol(gvk, "p", "Service", "s1", map[string]any{"x": int64(1)}))
	forbidden0 := forbiddenWrites(t)
	startController(t, Options{}, env.UserConfig(t, user))
	waitFor(t, "a forbidden status write", func() string {
		if forbiddenWrites(t) == forbidden0 {
			return "none yet"
		}
		return ""
	})
	// Refused again at least once more before the grant: said once all
	// the same.
	waitFor(t, "the write tried again", func() string {
		if forbiddenWrites(t) < forbidden0+2 {
			return "not yet"
		}
		return ""
	})
	env.BindClusterRole(t, user, write.Name)
	waitAncestor(t, k, "the policy's status once patch is granted", gvk, ns, "p", "Service/s1 True/Accepted", "Accepted")
	evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs.Items {
		if e.Reason == "StatusWriteRefused" && e.Regarding.Name == "p" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d StatusWriteRefused Events on p, want 1", n)
	}
}
