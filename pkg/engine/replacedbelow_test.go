package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// TestReplacedBelowWithoutRoutes: for Envoy Gateway's kinds (overridden by
// presence), a Gateway-wide BackendTrafficPolicy with a listener policy on
// a listener that no route uses is PartiallyProgrammed, naming it, as
// Envoy Gateway reports it overridden "for these gateway listeners"
// (policyScopeGraph.GetWithDescendants); not when the listener policy
// merges (mergeType), nor without it. An Incremental follows the listener
// policy coming and going.
func TestReplacedBelowWithoutRoutes(t *testing.T) {
	gw := pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 10s}}`)
	admin := pol(egV, "BackendTrafficPolicy", "admin", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: admin}]
timeout: {http: {requestTimeout: 1s}}`)
	merging := pol(egV, "BackendTrafficPolicy", "admin", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: admin}]
mergeType: JSONMerge
timeout: {http: {requestTimeout: 1s}}`)

	res := compute(t, engine.Options{}, btpCRD, egTopo, gw, admin)
	want(t, "gw", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
	if msg := condition(t, res, "gw", "Programmed").Message; !strings.Contains(msg, "the more specific BackendTrafficPolicy default/admin on Gateway default/g1#admin replaces it there") {
		t.Errorf("message: %s", msg)
	}
	want(t, "admin", status(t, res, "admin", "Programmed"), "True/Programmed")
	want(t, "rule first", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")), []string{`{"timeout":{"http":{"requestTimeout":"10s"}}}`})

	res = compute(t, engine.Options{}, btpCRD, egTopo, gw, merging)
	want(t, "gw, the listener's merging", status(t, res, "gw", "Programmed"), "True/Programmed")
	res = compute(t, engine.Options{}, btpCRD, egTopo, gw)
	want(t, "gw alone", status(t, res, "gw", "Programmed"), "True/Programmed")

	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, btpCRD, egTopo, gw))
	for i, step := range [][]string{{btpCRD, egTopo, gw, admin}, {btpCRD, egTopo, gw, merging}, {btpCRD, egTopo, gw}} {
		objs := decodeDocs(t, step...)
		if g, w := dump(t, in.Compute(objs)), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
	}
}
