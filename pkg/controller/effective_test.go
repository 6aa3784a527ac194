package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var gvkEffectivePolicy = EffectivePolicyGVK

// effectiveEntry returns a controller's entry of an EffectivePolicy (nil:
// none or no object).
func effectiveEntry(u *unstructured.Unstructured, controllerName string) map[string]any {
	if u == nil {
		return nil
	}
	_, _, ours := splitEntries(u, controllerName)
	return ours
}

// entryPolicies lists the policies of an entry's first policy kind, as
// names.
func entryPolicies(e map[string]any) string {
	kinds, _ := e["policyKinds"].([]any)
	if len(kinds) == 0 {
		return ""
	}
	pols, _ := kinds[0].(map[string]any)["policies"].([]any)
	var names []string
	for _, p := range pols {
		names = append(names, fmt.Sprint(p.(map[string]any)["name"]))
	}
	return strings.Join(names, ", ")
}

// entryField finds, in the contexts of an entry, the value a policy (by
// name) set at a dotted field path (nil: it set none).
func entryField(e map[string]any, path, policy string) any {
	b, _ := json.Marshal(e)
	var v struct {
		PolicyKinds []struct {
			Contexts []struct {
				Spec  map[string]any    `json:"spec"`
				SetBy map[string]string `json:"setBy"`
			} `json:"contexts"`
		} `json:"policyKinds"`
	}
	_ = json.Unmarshal(b, &v)
	for _, k := range v.PolicyKinds {
		for _, c := range k.Contexts {
			if by := c.SetBy[path]; by != policy && !strings.HasSuffix(by, "/"+policy) {
				continue
			}
			var cur any = c.Spec
			for _, f := range strings.Split(path, ".") {
				m, _ := cur.(map[string]any)
				cur = m[f]
			}
			return cur
		}
	}
	return nil
}

// TestEffectivePolicies runs GEP-713 Example 3 with EffectivePolicy objects
// on: one per affected Service, naming the policies and, per field, who set
// it; another controller's entry kept; an edit of a policy's spec rewrites
// only the EffectivePolicies whose content changes and no Affected
// condition; deleting the policies deletes the objects.
func TestEffectivePolicies(t *testing.T) {
	k := newKube(t)
	k.applyFile(effectivePolicyCRD, "")
	const ns = "ep3"
	k.namespace(ns)
	k.applyFile(exampleFile(3), ns)
	r := startController(t, Options{EffectivePolicies: true}, nil)
	checkExample(t, k, ns, example3)
	waitFor(t, "EffectivePolicies of b1 and b2", func() string {
		var bad []string
		for _, svc := range sortedKeys(example3.services) {
			u := k.get(gvkEffectivePolicy, ns, "service."+svc)
			e := effectiveEntry(u, testControllerName)
			if e == nil {
				bad = append(bad, "service."+svc+": no entry")
				continue
			}
			if got := entryPolicies(e); got != example3.services[svc] {
				bad = append(bad, fmt.Sprintf("service.%s: policies %q, want %q", svc, got, example3.services[svc]))
			}
			if ref, _, _ := unstructured.NestedStringMap(u.Object, "targetRef"); ref["kind"] != "Service" || ref["name"] != svc || ref["namespace"] != ns {
				bad = append(bad, fmt.Sprintf("service.%s: targetRef %v", svc, ref))
			}
		}
		return strings.Join(bad, "; ")
	})
	// GEP-713 Example 3, g2 > r4 > b2: light is p3's (a patch override on
	// the Gateway), dark is p4's (its atomic default on the route).
	b2 := effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b2"), testControllerName)
	if v := entryField(b2, "colors.light", "p3"); v != "yellow" {
		t.Errorf("b2 colors.light set by p3 = %v, want yellow", v)
	}
	if v := entryField(b2, "colors.dark", "p4"); v != "olive" {
		t.Errorf("b2 colors.dark set by p4 = %v, want olive", v)
	}
	if v := entryField(b2, "colors.light", "p4"); v != nil {
		t.Errorf("b2 colors.light set by p4 = %v, want p3's override to win", v)
	}
	// Nothing else is an effective target: no other EffectivePolicy.
	if got := len(k.list(gvkEffectivePolicy, ns)); got != 2 {
		t.Errorf("%d EffectivePolicies in %s, want 2", got, ns)
	}
	r.waitIdle(t, 0)

	// Another controller's entry on b1, applied as a controller does
	// (server-side apply of its own entry), survives our writes.
	other := `{"apiVersion":"attache.dev/v1alpha1","kind":"EffectivePolicy","metadata":{"name":"service.b1","namespace":"` + ns + `"},` +
		`"targetRef":{"kind":"Service","namespace":"` + ns + `","name":"b1"},"controllers":[{"controllerName":"example.com/other","policyKinds":[]}]}`
	ep := &unstructured.Unstructured{}
	ep.SetGroupVersionKind(gvkEffectivePolicy)
	ep.SetNamespace(ns)
	force := true
	if _, err := k.resource(ep).Patch(context.Background(), "service.b1", types.ApplyPatchType, []byte(other), metav1.PatchOptions{FieldManager: "example.com/other", Force: &force}); err != nil {
		t.Fatal(err)
	}

	// Editing p3's light colour (p3 affects b1 and b2, and wins light in
	// both): the same objects are affected, so no Affected condition is
	// written; both EffectivePolicies change.
	n0, c0 := r.writes.count(), r.c.computations.Load()
	k.patch(gvkColorPolicy, ns, "p3", `{"spec":{"overrides":{"colors":{"light":"teal"}}}}`)
	waitFor(t, "b1 and b2 showing p3's new light colour", func() string {
		for _, svc := range []string{"b1", "b2"} {
			e := effectiveEntry(k.get(gvkEffectivePolicy, ns, "service."+svc), testControllerName)
			if v := entryField(e, "colors.light", "p3"); v != "teal" {
				return fmt.Sprintf("%s: colors.light by p3 = %v", svc, v)
			}
		}
		return ""
	})
	r.waitIdle(t, c0)
	w := r.writes.since(n0)
	t.Logf("editing p3's spec: %v", w)
	var effWrites int
	for _, x := range w {
		switch {
		case strings.Contains(x, "/services/"):
			t.Errorf("editing p3's spec wrote an Affected condition: %s", x)
		case strings.Contains(x, "/effectivepolicies/"):
			effWrites++
		case strings.Contains(x, "/colorpolicies/p3/status"):
		case strings.Contains(x, "/colorpolicies/"):
			// p3's colour may change what the others lose: their status may move.
		default:
			t.Errorf("unexpected write %s", x)
		}
	}
	if effWrites != 2 {
		t.Errorf("%d EffectivePolicy writes, want 2 (b1 and b2)", effWrites)
	}
	if e := effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b1"), "example.com/other"); e == nil {
		t.Error("the other controller's entry on b1 is gone")
	}
	// The edit sent the differences (JSON patches), not whole entries;
	// the entries read back above are the desired ones.
	for i, ct := range r.writes.contentTypes(n0) {
		if strings.Contains(w[i], "/effectivepolicies/") && ct != string(types.JSONPatchType) {
			t.Errorf("%s sent as %s, want a JSON patch of the difference", w[i], ct)
		}
	}

	// Someone puts another entry before ours (a plain rewrite of the
	// list): the difference cannot be sent there; the entry is applied
	// whole, with at most one refused attempt, and is right.
	k.patch(gvkEffectivePolicy, ns, "service.b2", `{"controllers":[{"controllerName":"example.com/first","policyKinds":[]}, `+mustJSON(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b2"), testControllerName))+`]}`)
	n1, c1 := r.writes.count(), r.c.computations.Load()
	k.patch(gvkColorPolicy, ns, "p3", `{"spec":{"overrides":{"colors":{"light":"navy"}}}}`)
	waitFor(t, "b2 showing p3's navy", func() string {
		if v := entryField(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b2"), testControllerName), "colors.light", "p3"); v != "navy" {
			return fmt.Sprintf("colors.light by p3 = %v", v)
		}
		return ""
	})
	r.waitIdle(t, c1)
	b2Writes := 0
	for _, x := range r.writes.since(n1) {
		if strings.Contains(x, "/effectivepolicies/service.b2") {
			b2Writes++
		}
	}
	if b2Writes < 1 || b2Writes > 2 {
		t.Errorf("%d writes of service.b2 with another entry first, want 1 or 2", b2Writes)
	}
	if effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b2"), "example.com/first") == nil {
		t.Error("the entry put first on b2 is gone")
	}

	// The first entry goes again (b2 holds only ours).
	k.patch(gvkEffectivePolicy, ns, "service.b2", `{"controllers":[`+mustJSON(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b2"), testControllerName))+`]}`)

	// Deleting the policies: our entries go; b2's object with them, b1's
	// stays for the other controller.
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		k.delete(gvkColorPolicy, ns, p)
	}
	waitFor(t, "our EffectivePolicy entries removed", func() string {
		if u := k.get(gvkEffectivePolicy, ns, "service.b2"); u != nil {
			return "service.b2 still exists"
		}
		u := k.get(gvkEffectivePolicy, ns, "service.b1")
		if u == nil {
			return "service.b1 was deleted with the other controller's entry"
		}
		if effectiveEntry(u, testControllerName) != nil {
			return "service.b1 still has our entry"
		}
		return ""
	})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// list lists the objects of a kind in ns.
func (k *kube) list(gvk schema.GroupVersionKind, ns string) []unstructured.Unstructured {
	k.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	l, err := k.resource(u).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return l.Items
}
