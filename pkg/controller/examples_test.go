package controller

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/manifest"
)

// exampleWant is what a GEP-713 example must converge to.
type exampleWant struct {
	// policies: name -> "Accepted-status/reason Programmed-status/reason".
	policies map[string]string
	// ancestors: policy name -> its one ancestorRef, as Kind/name.
	ancestors map[string]string
	// services: name -> the policies named by ColorPolicyAffected ("" none).
	services map[string]string
}

func exampleFile(n int) string {
	return filepath.Join("..", "..", "examples", "gep-713", fmt.Sprintf("example-%d", n), "manifests.yaml")
}

// TestGEPExample1 applies GEP-713 Example 1 (a Direct policy, strategy
// none) and checks its outcomes: b1 is affected by p1 alone, p1 is
// enforced, p2 conflicts with p1 and is not accepted, b2 is untouched.
func TestGEPExample1(t *testing.T) {
	k := newKube(t)
	// Example 1's ColorPolicy is Direct; the other tests' is Inherited:
	// put theirs back after.
	t.Cleanup(func() {
		objs, _, _ := manifest.Read([]string{exampleFile(3)}, nil)
		for _, o := range objs {
			if o.Object.GetKind() == "CustomResourceDefinition" {
				k.applyCRD(o.Object)
			}
		}
	})
	const ns = "ex1"
	k.applyFile(effectivePolicyCRD, "")
	r := startController(t, Options{EffectivePolicies: true}, nil)
	k.namespace(ns)
	k.applyFile(exampleFile(1), ns)
	waitFor(t, "Example 1's status", func() string {
		var bad []string
		if got := policySummary(k.get(gvkColorPolicy, ns, "p1")); got != "True/Accepted True/Programmed" {
			bad = append(bad, "p1: "+got)
		}
		p2 := k.get(gvkColorPolicy, ns, "p2")
		if got := policySummary(p2); got != "False/Conflicted -" {
			bad = append(bad, "p2: "+got)
		} else if msg, _ := condition(p2, "Accepted")["message"].(string); !strings.Contains(msg, ns+"/p1") {
			bad = append(bad, "p2's message does not name p1: "+msg)
		}
		if c := condition(k.get(gvkService, ns, "b1"), "attache.dev/ColorPolicyAffected"); c == nil || c["message"] != "Affected by ColorPolicy "+ns+"/p1" {
			bad = append(bad, fmt.Sprintf("b1: %v", c))
		}
		if got := entryField(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service.b1"), testControllerName), "color", "p1"); got != "red" {
			bad = append(bad, fmt.Sprintf("EffectivePolicy service.b1: color by p1 = %v, want red", got))
		}
		return strings.Join(bad, "; ")
	})
	r.waitIdle(t, 0)
	if c := condition(k.get(gvkService, ns, "b2"), "attache.dev/ColorPolicyAffected"); c != nil {
		t.Errorf("b2 carries %v", c)
	}
	if u := k.get(gvkEffectivePolicy, ns, "service.b2"); u != nil {
		t.Errorf("b2, affected by nothing, has an EffectivePolicy")
	}
}

// TestGEPExample2 applies GEP-713 Example 2 (atomic defaults and
// overrides) and checks every policy status and Affected condition.
func TestGEPExample2(t *testing.T) {
	runExample(t, 2, "ex2", exampleWant{
		policies: map[string]string{
			"p1": "True/Accepted True/PartiallyProgrammed",
			"p2": "True/Accepted True/Programmed",
			"p3": "True/Accepted True/Programmed",
			"p4": "True/Accepted False/Overridden",
		},
		ancestors: map[string]string{"p1": "Gateway/g1", "p2": "HTTPRoute/r1", "p3": "Gateway/g2", "p4": "HTTPRoute/r4"},
		services:  map[string]string{"b1": "p1, p2, p3", "b2": "p3"},
	})
}

// TestGEPExample3 applies GEP-713 Example 3 (merged specs: atomic and
// patch) and checks every policy status and Affected condition.
func TestGEPExample3(t *testing.T) {
	runExample(t, 3, "ex3", example3)
}

// example3 is what GEP-713 Example 3 converges to.
var example3 = exampleWant{
	policies: map[string]string{
		"p1": "True/Accepted True/PartiallyProgrammed",
		"p2": "True/Accepted True/Programmed",
		"p3": "True/Accepted True/Programmed",
		"p4": "True/Accepted True/PartiallyProgrammed",
	},
	ancestors: map[string]string{"p1": "Gateway/g1", "p2": "HTTPRoute/r1", "p3": "Gateway/g2", "p4": "HTTPRoute/r4"},
	services:  map[string]string{"b1": "p1, p2, p3", "b2": "p3, p4"},
}

func runExample(t *testing.T, n int, ns string, want exampleWant) {
	k := newKube(t)
	k.applyFile(effectivePolicyCRD, "")
	r := startController(t, Options{EffectivePolicies: true}, nil)
	k.namespace(ns)
	k.applyFile(exampleFile(n), ns)
	checkExample(t, k, ns, want)
	r.waitIdle(t, 0)
	t.Logf("converged with %d write requests: %v", r.writes.count(), r.writes.since(0))
}

// effectivePolicyCRD is the shipped EffectivePolicy CRD.
var effectivePolicyCRD = filepath.Join("..", "..", "deploy", "crds", "effectivepolicies.attache.dev.yaml")

// checkExample waits until the policies and Services of an example applied
// in ns have the wanted status, and, the controller writing them, the
// wanted EffectivePolicies: one per affected Service naming its policies.
func checkExample(t *testing.T, k *kube, ns string, want exampleWant) {
	t.Helper()
	waitFor(t, "the example's status", func() string {
		var bad []string
		for _, name := range sortedKeys(want.policies) {
			u := k.get(gvkColorPolicy, ns, name)
			if got := policySummary(u); got != want.policies[name] {
				bad = append(bad, fmt.Sprintf("%s: %s, want %s", name, got, want.policies[name]))
				continue
			}
			anc := ancestorsOf(u, testControllerName)
			if len(anc) != 1 {
				bad = append(bad, fmt.Sprintf("%s: %d ancestor entries, want 1", name, len(anc)))
				continue
			}
			ref, _ := anc[0]["ancestorRef"].(map[string]any)
			if got := fmt.Sprintf("%v/%v", ref["kind"], ref["name"]); got != want.ancestors[name] || ref["namespace"] != ns {
				bad = append(bad, fmt.Sprintf("%s: ancestor %s in %v, want %s in %s", name, got, ref["namespace"], want.ancestors[name], ns))
			}
			if got := condSummary(condition(&unstructured.Unstructured{Object: anc[0]}, "Accepted", "conditions")); got != "True/Accepted" {
				bad = append(bad, fmt.Sprintf("%s: ancestor Accepted %s", name, got))
			}
		}
		for _, name := range sortedKeys(want.services) {
			svc := k.get(gvkService, ns, name)
			c := condition(svc, "attache.dev/ColorPolicyAffected")
			wantMsg := "Affected by ColorPolicy " + prefixAll(ns+"/", want.services[name])
			if c == nil || c["status"] != "True" || c["reason"] != "Affected" || c["message"] != wantMsg {
				bad = append(bad, fmt.Sprintf("Service %s: condition %v, want True/Affected %q", name, c, wantMsg))
			}
			if got := entryPolicies(effectiveEntry(k.get(gvkEffectivePolicy, ns, "service."+name), testControllerName)); got != want.services[name] {
				bad = append(bad, fmt.Sprintf("EffectivePolicy service.%s: policies %q, want %q", name, got, want.services[name]))
			}
		}
		return strings.Join(bad, "; ")
	})
	// Routes are not effective targets of ColorPolicy here: they carry
	// nothing.
	for _, route := range []string{"r1", "r2", "r3", "r4"} {
		if a := k.get(gvkHTTPRoute, ns, route).GetAnnotations()["attache.dev/ColorPolicyAffected"]; a != "" {
			t.Errorf("HTTPRoute %s has the Affected annotation %q", route, a)
		}
	}
}

func prefixAll(prefix, list string) string {
	parts := strings.Split(list, ", ")
	for i := range parts {
		parts[i] = prefix + parts[i]
	}
	return strings.Join(parts, ", ")
}
