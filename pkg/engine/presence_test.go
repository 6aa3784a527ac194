package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// presenceCRD is colorCRD (atomic defaults) with the kind setting
// overridden-by set to v.
func presenceCRD(v string) string {
	return strings.Replace(fmt.Sprintf(colorCRD, "atomic-defaults"), "    attache.dev/merge-strategies:",
		"    attache.dev/overridden-by: "+v+"\n    attache.dev/merge-strategies:", 1)
}

// programmedAt returns the Programmed condition of policy name's ancestor
// on target (a Kind/name), and the policy's own summary.
func programmedAt(t *testing.T, res *engine.Result, name, target string) (anc, summary engine.Condition) {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		for _, c := range ps.Conditions {
			if c.Type == engine.CondProgrammed {
				summary = c
			}
		}
		for _, a := range ps.Ancestors {
			if a.Ref.Kind+"/"+a.Ref.Name != target {
				continue
			}
			for _, c := range a.Conditions {
				if c.Type == engine.CondProgrammed {
					return c, summary
				}
			}
		}
	}
	t.Fatalf("no Programmed condition for %s on %s in %+v", name, target, res.Policies)
	return
}

// With overridden-by "presence" (Envoy Gateway), a policy is overridden
// wherever a more specific policy replaces it, whatever either sets; with
// "fields" (the default, decision 8), a policy that sets nothing loses
// nothing, and a policy never beats itself. The effective spec is the same
// either way: the setting changes only what the status says.
func TestOverriddenByPresence(t *testing.T) {
	for _, tc := range []struct {
		setting                   string
		wantEmpty, wantGatewayOwn string
	}{
		{"presence", engine.ReasonOverridden, engine.ReasonOverridden},
		{"fields", engine.ReasonProgrammed, engine.ReasonProgrammed},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			// An empty Gateway policy above a route policy.
			res := compute(t, engine.Options{}, presenceCRD(tc.setting), topo,
				colorPolicy("top", "g1", "Gateway", ""),
				colorPolicy("low", "r1", "HTTPRoute", "color: blue"))
			if got := res.Effective[0].Contexts[0].Spec["color"]; got != "blue" {
				t.Errorf("color = %v, want blue", got)
			}
			anc, _ := programmedAt(t, res, "top", "Gateway/g1")
			if anc.Reason != tc.wantEmpty {
				t.Errorf("empty Gateway policy: Programmed %s (%s), want %s", anc.Reason, anc.Message, tc.wantEmpty)
			}
			if tc.setting == "presence" && !strings.Contains(anc.Message, "its whole spec (it sets no field) beaten by ColorPolicy default/low (on HTTPRoute default/r1)") {
				t.Errorf("message %q does not say the empty spec was replaced, and by whom", anc.Message)
			}
			if tc.setting == "fields" && !strings.Contains(anc.Message, "sets no field") {
				t.Errorf("message %q does not say it sets no field", anc.Message)
			}

			// One policy on the Gateway and on its route.
			res = compute(t, engine.Options{}, presenceCRD(tc.setting), topo, `
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: both}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}
  color: red
`)
			if got := res.Effective[0].Contexts[0].Spec["color"]; got != "red" {
				t.Errorf("color = %v, want red", got)
			}
			anc, summary := programmedAt(t, res, "both", "Gateway/g1")
			if anc.Reason != tc.wantGatewayOwn {
				t.Errorf("Gateway attachment beneath its own route attachment: Programmed %s (%s), want %s", anc.Reason, anc.Message, tc.wantGatewayOwn)
			}
			if tc.setting == "presence" && !strings.Contains(anc.Message, "color beaten by ColorPolicy default/both (on HTTPRoute default/r1)") {
				t.Errorf("message %q does not name the route attachment", anc.Message)
			}
			if route, _ := programmedAt(t, res, "both", "HTTPRoute/r1"); route.Reason != engine.ReasonProgrammed {
				t.Errorf("route attachment: Programmed %s (%s), want Programmed", route.Reason, route.Message)
			}
			// As a policy, it lost nothing to any other policy.
			if summary.Reason != engine.ReasonProgrammed {
				t.Errorf("policy summary: Programmed %s (%s), want Programmed", summary.Reason, summary.Message)
			}
		})
	}
}

func TestOverriddenByAnnotationRejectsUnknownValues(t *testing.T) {
	res := compute(t, engine.Options{}, presenceCRD("always"), topo, colorPolicy("p", "g1", "Gateway", "color: red"))
	for _, p := range res.Problems {
		if s := fmt.Sprint(p); strings.Contains(s, "metadata.annotations[attache.dev/overridden-by]") && strings.Contains(s, `unknown overridden-by rule "always" (known: fields, presence)`) {
			return
		}
	}
	t.Errorf("no problem names the annotation and its value: %+v", res.Problems)
}
