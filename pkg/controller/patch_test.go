package controller

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestEffectivePatch: after a policy edit in issue 9's first case, the
// JSON patch of each changed EffectivePolicy, applied to an object holding
// the old entry, gives the new entry and the new hash; and it is the
// difference: for a Gateway policy reaching 500 objects, under half of the
// entries' bytes.
func TestEffectivePatch(t *testing.T) {
	for _, c := range []struct {
		kind    string
		atMost  float64 // patch bytes / entry bytes
		changed int
	}{{"Gateway", 0.5, 500}, {"HTTPRoute", 0.8, 1}} {
		p := gen.Params{Gateways: 1, ListenersPerGateway: 63, Routes: 500, Services: 500, Namespaces: 10, Seed: 1}
		var objs []engine.Object
		for _, u := range append(gen.Topology(p), gen.Policies(p, 100)...) {
			objs = append(objs, engine.Object{Object: u})
		}
		idx := -1
		for i, o := range objs {
			refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
			if o.Object.GetKind() == gen.PolicyKind && len(refs) == 1 && refs[0].(map[string]any)["kind"] == c.kind && refs[0].(map[string]any)["sectionName"] == nil {
				idx = i
				break
			}
		}
		gk := topology.GroupKind{Group: gen.PolicyGroup, Kind: gen.PolicyKind}
		ctl := &Controller{opts: Options{ControllerName: testControllerName, ConditionDomain: engine.DefaultConditionDomain, EffectivePolicies: true, EffectivePolicyNamespace: DefaultEffectivePolicyNamespace},
			watches: map[topology.GroupKind]*watch{gk: {gk: gk, gvk: schemaGVK(gk)}}, effective: map[objKey]*effectiveDesired{}}
		ctl.inc = ctl.newEngine(nil, ctl.unreadKind)
		owned := map[topology.GroupKind]bool{gk: true}
		ctl.derive(ctl.inc.Compute(objs), owned, nil, nil, true, ctl.inc.LastChange())
		before := map[objKey][]byte{}
		for k, d := range ctl.effective {
			b, _ := d.entryJSON()
			before[k] = b
		}
		edited := objs[idx].Object.DeepCopy()
		for _, st := range []string{"defaults", "overrides"} {
			if body, ok := edited.Object["spec"].(map[string]any)[st].(map[string]any); ok {
				body["x-edit"] = "edited"
			}
		}
		objs[idx].Object = edited
		res := ctl.inc.Compute(objs)
		_, _, eff := ctl.derive(res, owned, nil, nil, false, ctl.inc.LastChange())
		var sent, whole, changed int
		for k, d := range eff {
			if d.baseHash == "" {
				continue
			}
			changed++
			entry, _ := d.entryJSON()
			patch, ok := effectivePatch(d, entry, testControllerName)
			if !ok {
				sent += len(entry)
				whole += len(entry)
				continue
			}
			obj := map[string]any{
				"metadata":    map[string]any{"annotations": map[string]any{effectiveHashKey(testControllerName): d.baseHash}},
				"controllers": []any{json.RawMessage(before[k]), map[string]any{"controllerName": "example.com/other"}},
			}
			doc, _ := json.Marshal(obj)
			ops, err := jsonpatch.DecodePatch(patch)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			out, err := ops.Apply(doc)
			if err != nil {
				t.Fatalf("%s: the patch does not apply to the old entry: %v", k, err)
			}
			var got, want map[string]any
			_ = json.Unmarshal(out, &got)
			_ = json.Unmarshal(entry, &want)
			if !reflect.DeepEqual(got["controllers"].([]any)[0], any(want)) {
				t.Fatalf("%s: the patched entry is not the new one", k)
			}
			if h := got["metadata"].(map[string]any)["annotations"].(map[string]any)[effectiveHashKey(testControllerName)]; h != d.hash {
				t.Fatalf("%s: hash %v after the patch, want %s", k, h, d.hash)
			}
			// Applied to an object holding another entry, it fails.
			if _, err := ops.Apply([]byte(`{"metadata":{"annotations":{}},"controllers":[]}`)); err == nil {
				t.Fatalf("%s: the patch applies to an object without the old entry", k)
			}
			sent += len(patch)
			whole += len(entry)
		}
		if changed < c.changed {
			t.Fatalf("%s edit: %d entries changed, want at least %d", c.kind, changed, c.changed)
		}
		if float64(sent) > c.atMost*float64(whole) {
			t.Errorf("%s edit: %d bytes sent for %d bytes of entries, want at most %.0f %%", c.kind, sent, whole, 100*c.atMost)
		}
		t.Logf("%s edit: %d entries changed: %d KB sent for %d KB of entries", c.kind, changed, sent>>10, whole>>10)
	}
}
