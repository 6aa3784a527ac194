package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// weightCRD is a Direct kind on Services with merge strategy none and a
// weight annotation, both given by the CRD's annotations.
var weightCRD = declaredCRD("policies.example.com", "TLSPolicy", "tlspolicies", "Direct", "attache.dev/target-kinds: Service", "attache.dev/merge-strategies: none", "attache.dev/weight-annotation: example.com/weight")

// TestWeightStrategyNone: with strategy none the established policy wins
// whole, and a higher weight establishes a policy before an older one;
// the Conflicted messages say what decided (the weight, the age, or the
// name at the same age), and an edit of the weight alone is seen by an
// Incremental.
func TestWeightStrategyNone(t *testing.T) {
	svc := `
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	target := `targetRefs: [{group: "", kind: Service, name: s1}]`
	oldest := pol("policies.example.com/v1", "TLSPolicy", "oldest", 0, target+"\nmode: a")
	heavy := weighted(pol("policies.example.com/v1", "TLSPolicy", "heavy", 1, target+"\nmode: b"), "example.com/weight", "3")
	heavyToo := weighted(pol("policies.example.com/v1", "TLSPolicy", "heavy-too", 2, target+"\nmode: c"), "example.com/weight", "3")
	res := compute(t, engine.Options{}, weightCRD, svc, oldest, heavy, heavyToo)
	want(t, "effective", effective(t, res, "TLSPolicy", dS1), []string{`{"mode":"b"}`})
	want(t, "heavy", status(t, res, "heavy", "Accepted"), "True/Accepted")
	for name, why := range map[string]string{
		"oldest":    "the established policy (the higher example.com/weight) wins",
		"heavy-too": "the established (older) policy wins",
	} {
		c := condition(t, res, name, "Accepted")
		if c.Reason != engine.ReasonConflicted || !strings.Contains(c.Message, "TLSPolicy default/heavy") || !strings.HasSuffix(c.Message, why) {
			t.Errorf("%s: %s %q, want Conflicted by heavy ending %q", name, c.Reason, c.Message, why)
		}
	}

	// The weight alone changes: an Incremental recomputes.
	in := engine.NewIncremental(engine.Options{})
	objs := decodeDocs(t, weightCRD, svc, oldest, heavy)
	in.Compute(objs)
	objs = decodeDocs(t, weightCRD, svc, oldest, weighted(pol("policies.example.com/v1", "TLSPolicy", "heavy", 1, target+"\nmode: b"), "example.com/weight", "-3"))
	res = in.Compute(objs)
	if got, want := dump(t, res), dump(t, engine.Compute(objs, engine.Options{})); got != want {
		t.Fatalf("after a weight edit, the Incremental differs: %s", firstDiff(got, want))
	}
	want(t, "after the edit", effective(t, res, "TLSPolicy", dS1), []string{`{"mode":"a"}`})
}

// modePolicyCRD is an Inherited kind on Gateway > HTTPRoute with strategy
// none and a weight annotation.
var modePolicyCRD = declaredCRD("policies.example.com", "ModePolicy", "modepolicies", "Inherited", "attache.dev/hierarchy: Gateway,HTTPRoute", "attache.dev/merge-strategies: none", "attache.dev/weight-annotation: example.com/weight")

// TestWeightOneLevelOnly: under strategy none a policy on a more specific
// level meets one above it by age, whatever their weights: weights order
// one level only.
func TestWeightOneLevelOnly(t *testing.T) {
	crd := modePolicyCRD
	route := pol("policies.example.com/v1", "ModePolicy", "route", 0, "targetRefs: ["+r1Ref+"]\nmode: route")
	gw := weighted(pol("policies.example.com/v1", "ModePolicy", "gateway", 1, "targetRefs: ["+gwRef+"]\nmode: gateway"), "example.com/weight", "10")
	res := compute(t, engine.Options{}, crd, docsTopo, route, gw)
	want(t, "r1", effective(t, res, "ModePolicy", dR1), []string{`{"mode":"route"}`})
	c := condition(t, res, "gateway", "Accepted")
	if c.Reason != engine.ReasonConflicted || !strings.HasSuffix(c.Message, "the established (older) policy wins") {
		t.Errorf("gateway: %s %q", c.Reason, c.Message)
	}
	want(t, "route", status(t, res, "route", "Accepted"), "True/Accepted")
}
