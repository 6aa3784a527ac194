package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// TestPortSelectionIncremental replays edits of kgateway ListenerPolicies
// (per-port configurations chosen at each listener) through an
// Incremental engine, each step checked against a whole computation and,
// for policy edits, a WhatIf against the two computations: the results
// derived per listener port must follow their folds, including a fold
// that goes unused while its policy changes and comes back.
func TestPortSelectionIncremental(t *testing.T) {
	objs := decodeDocs(t, kgatewayListenerPolicyCRD(), docsTopo)
	in := engine.NewIncremental(engine.Options{})
	step := func(what string, policyOnly bool, docs ...string) {
		t.Helper()
		before := slices.Clone(objs)
		for _, d := range docs {
			o := decodeDocs(t, strings.TrimPrefix(d, "-"))[0]
			i := slices.IndexFunc(objs, func(x engine.Object) bool {
				return x.Object.GetKind() == o.Object.GetKind() && x.Object.GetName() == o.Object.GetName() && x.Object.GetNamespace() == o.Object.GetNamespace()
			})
			switch {
			case strings.HasPrefix(d, "-"):
				objs = slices.Delete(objs, i, i+1)
			case i >= 0:
				objs[i] = o
			default:
				objs = append(objs, o)
			}
		}
		if policyOnly {
			apply, remove := changedObjects(before, objs)
			if d := in.WhatIf(apply, remove); d.Skipped == "" {
				checkDelta(t, what, d, engine.Compute(before, engine.Options{}), engine.Compute(objs, engine.Options{}))
			} else {
				t.Fatalf("%s: WhatIf skipped: %s", what, d.Skipped)
			}
		}
		got := dump(t, in.Compute(objs))
		if ch := in.LastChange(); policyOnly && ch.Full {
			t.Fatalf("%s: recomputed in full: %s", what, ch.Reason)
		}
		if want := dump(t, engine.Compute(objs, engine.Options{})); got != want {
			t.Fatalf("%s: %s", what, firstDiff(got, want))
		}
	}
	gw := func(name string, min int, spec string) string {
		return pol(kgwV, "ListenerPolicy", name, min, `targetRefs: [`+gwRef+`]`+"\n"+spec)
	}
	step("start", false)
	step("a Gateway policy", true, gw("gw", 0, `default: {perConnectionBufferLimitBytes: 1}
perPort: [{port: 80, listener: {perConnectionBufferLimitBytes: 80}}]`))
	step("a newer one with another port", true, gw("gw-newer", 1, `perPort: [{port: 8080, listener: {proxyProtocol: {}}}]`))
	step("the older's entry for 80 edited", true, gw("gw", 0, `default: {perConnectionBufferLimitBytes: 1}
perPort: [{port: 80, listener: {perConnectionBufferLimitBytes: 81}}, {port: 8080, listener: {perConnectionBufferLimitBytes: 88}}]`))
	// Each listener gets a policy of its own: the Gateway's stack goes
	// unused; the Gateway's policy changes meanwhile; the listeners'
	// policies are removed and the stack comes back.
	listener := func(l string) string {
		return pol(kgwV, "ListenerPolicy", l, 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: `+l+`}]
default: {perConnectionBufferLimitBytes: 2}`)
	}
	step("a listener's own policy", true, listener("admin"))
	step("the other listener's own policy", true, listener("http"))
	step("the Gateway's policy edited above them", true, gw("gw", 0, `default: {perConnectionBufferLimitBytes: 3}`))
	step("the listeners' policies removed", true, "-"+listener("admin"), "-"+listener("http"))
	step("a weight puts the newer first", true, weighted(gw("gw-newer", 1, `perPort: [{port: 8080, listener: {proxyProtocol: {}}}]
default: {perConnectionBufferLimitBytes: 4}`), "kgateway.dev/policy-weight", "10"))
	// A listener's port changes: the topology changed, everything again.
	step("admin moves to port 80", false, strings.Replace(docsTopo[:strings.Index(docsTopo, "\n---")], "port: 8080", "port: 80", 1))
	step("the newer removed", true, "-"+gw("gw-newer", 1, ""))
}
