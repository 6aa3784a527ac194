package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
)

// patchCRD is a kind whose policies target one data plane, through the
// annotation alone.
const patchCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: patchpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations:
    attache.dev/target-kinds: Gateway.gateway.networking.k8s.io,GatewayClass.gateway.networking.k8s.io
    attache.dev/data-plane-target: "true"
spec:
  group: example.com
  names: {kind: PatchPolicy, plural: patchpolicies}
`

// classWith is a GatewayClass whose parameters are EnvoyProxy params in
// namespace default ("" for none), and an EnvoyProxy of that name whose
// spec.mergeGateways is merge ("" for unset).
func classWith(name, params, merge string) string {
	out := fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %s}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
`, name)
	if params == "" {
		return out
	}
	out = strings.Replace(out, "spec: {", "spec: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: "+params+"}, ", 1)
	spec := "{}"
	if merge != "" {
		spec = "{mergeGateways: " + merge + "}"
	}
	return out + fmt.Sprintf(`---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: %s, namespace: default}
spec: %s
`, params, spec)
}

// gatewayOf is a Gateway of class with one plain-HTTP listener on port,
// for hostname <name>.example.com.
func gatewayOf(name, class string, port int) string {
	return gatewayAt(name, class, name+".example.com", port, 0)
}

// gatewayAt is a Gateway of class created at minute min, with one
// plain-HTTP listener on port for host.
func gatewayAt(name, class, host string, port, min int) string {
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %s, namespace: default, creationTimestamp: "2026-01-01T00:%02d:00Z"}
spec:
  gatewayClassName: %s
  listeners: [{name: http, protocol: HTTP, port: %d, hostname: %s}]
`, name, min, class, port, host)
}

func patchPolicy(name, kind, target string) string {
	return pol("example.com/v1", "PatchPolicy", name, 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: "+kind+", name: "+target+"}]\npatch: x")
}

// ancestorOf is the one ancestor of a policy: its ref, reason and message.
func ancestorOf(t *testing.T, res *engine.Result, name string) (ref, reason, msg string) {
	t.Helper()
	ps := policyStatusOf(t, res, name)
	if len(ps.Ancestors) != 1 || len(ps.Ancestors[0].Conditions) == 0 {
		t.Fatalf("%s: ancestors %+v, want one", name, ps.Ancestors)
	}
	a := ps.Ancestors[0]
	return a.Ref.Short(), a.Conditions[0].Reason, a.Conditions[0].Message
}

// TestDataPlaneTarget: a kind whose policies target a data plane resolves
// a target's name as its implementation does (Envoy Gateway's
// EnvoyPatchPolicy): a GatewayClass that merges its Gateways, else a
// Gateway of the policy's namespace, whatever kind the reference gives,
// and says at that object when the kind is the wrong one.
func TestDataPlaneTarget(t *testing.T) {
	topo := []string{patchCRD,
		classWith("merged", "mp", "true"), classWith("plain", "pp", "false"), classWith("bare", "", ""), classWith("lonely", "lp", "true"),
		gatewayOf("gm", "merged", 80), gatewayOf("gp", "plain", 80), gatewayOf("gb", "bare", 80)}
	from := map[string]string{
		"mp": "spec.mergeGateways of EnvoyProxy default/mp, its parametersRef",
		"pp": "spec.mergeGateways of EnvoyProxy default/pp, its parametersRef",
	}
	type want struct{ ref, reason, msg string }
	check := func(t *testing.T, res *engine.Result, cases map[string]want) {
		t.Helper()
		for _, p := range res.Problems {
			if p.Object.Kind == "EnvoyProxy" {
				t.Errorf("problem: %v", p)
			}
		}
		for name, w := range cases {
			ref, reason, msg := ancestorOf(t, res, name)
			if ref != w.ref || reason != w.reason || !strings.Contains(msg, w.msg) {
				t.Errorf("%s: %s %s %q\nwant %s %s %q", name, ref, reason, msg, w.ref, w.reason, w.msg)
			}
		}
	}

	t.Run("one class merges", func(t *testing.T) {
		docs := append(topo,
			patchPolicy("class-merged", "GatewayClass", "merged"),
			patchPolicy("gateway-named-merged", "Gateway", "merged"),
			patchPolicy("gateway-of-merged", "Gateway", "gm"),
			patchPolicy("gateway-plain", "Gateway", "gp"),
			patchPolicy("class-named-gp", "GatewayClass", "gp"),
			patchPolicy("class-plain", "GatewayClass", "plain"),
			patchPolicy("nothing", "Gateway", "nothing"),
			patchPolicy("class-lonely", "GatewayClass", "lonely"))
		res := compute(t, engine.Options{}, docs...)
		check(t, res, map[string]want{
			"class-merged":         {"GatewayClass merged", "Accepted", ""},
			"gateway-named-merged": {"GatewayClass merged", "Invalid", "kind Gateway.gateway.networking.k8s.io: the name merged is GatewayClass merged, which merges its Gateways into one data plane (" + from["mp"] + "); target it as GatewayClass"},
			"gateway-of-merged":    {"GatewayClass gm", "Invalid", "Gateway default/gm belongs to GatewayClass merged, which merges its Gateways into one data plane (" + from["mp"] + "): policies of PatchPolicy.example.com target the GatewayClass, and there is no merged GatewayClass gm"},
			"gateway-plain":        {"Gateway default/gp", "Accepted", ""},
			"class-named-gp":       {"Gateway default/gp", "Invalid", "kind GatewayClass.gateway.networking.k8s.io: the name gp is Gateway default/gp, whose GatewayClass plain does not merge its Gateways (" + from["pp"] + "); target it as Gateway"},
			"class-plain":          {"GatewayClass plain", "Invalid", "no GatewayClass plain that merges its Gateways into one data plane, and no Gateway default/plain"},
			"nothing":              {"GatewayClass nothing", "Invalid", "no GatewayClass nothing that merges its Gateways into one data plane, and no Gateway default/nothing"},
			"class-lonely":         {"GatewayClass lonely", "Invalid", "GatewayClass lonely merges its Gateways into one data plane (spec.mergeGateways of EnvoyProxy default/lp, its parametersRef), and has no Gateway: there is no data plane to target"},
		})
		// The accepted policies affect what they target.
		if got := policyStatusOf(t, res, "class-merged").Affects; len(got) != 1 || got[0].Short() != "GatewayClass merged" {
			t.Errorf("class-merged affects %v", got)
		}
	})

	t.Run("no class merges", func(t *testing.T) {
		docs := []string{patchCRD, classWith("plain", "pp", "false"), classWith("bare", "", ""), gatewayOf("gp", "plain", 80),
			patchPolicy("class-plain", "GatewayClass", "plain"),
			patchPolicy("class-none", "GatewayClass", "none"),
			patchPolicy("gateway-none", "Gateway", "none"),
			patchPolicy("gateway-plain", "Gateway", "gp")}
		check(t, compute(t, engine.Options{}, docs...), map[string]want{
			"class-plain":   {"GatewayClass plain", "TargetNotFound", "spec.targetRefs[0]: GatewayClass plain does not merge its Gateways (" + from["pp"] + "), so its implementation looks for Gateway default/plain, which is not found"},
			"class-none":    {"GatewayClass none", "TargetNotFound", "spec.targetRefs[0]: GatewayClass none not found, and no GatewayClass merges its Gateways"},
			"gateway-none":  {"Gateway default/none", "TargetNotFound", "spec.targetRefs[0]: Gateway default/none not found"},
			"gateway-plain": {"Gateway default/gp", "Accepted", ""},
		})
	})

	t.Run("the configuration's default", func(t *testing.T) {
		// A class whose parameters do not say takes the configuration's
		// default; one whose parameters say false keeps it.
		docs := []string{patchCRD, classWith("bare", "", ""), classWith("unset", "up", ""), classWith("plain", "pp", "false"),
			gatewayOf("gp", "plain", 80), gatewayOf("gb", "bare", 80), gatewayOf("gu", "unset", 80),
			patchPolicy("class-bare", "GatewayClass", "bare"),
			patchPolicy("class-unset", "GatewayClass", "unset"),
			patchPolicy("gateway-plain", "Gateway", "gp")}
		on := policy.Features{profiles.EGMergeGateways: {On: true, From: "--feature"}}
		check(t, compute(t, engine.Options{Features: on}, docs...), map[string]want{
			"class-bare":    {"GatewayClass bare", "Accepted", ""},
			"class-unset":   {"GatewayClass unset", "Accepted", ""},
			"gateway-plain": {"Gateway default/gp", "Accepted", ""},
		})
		res := compute(t, engine.Options{Features: on}, append(docs, patchPolicy("gateway-named-bare", "Gateway", "bare"))...)
		if _, reason, msg := ancestorOf(t, res, "gateway-named-bare"); reason != "Invalid" || !strings.Contains(msg, "(EnvoyGateway.envoyProxy.mergeGateways in --feature)") {
			t.Errorf("gateway-named-bare: %s %q, want Invalid saying the default came from --feature", reason, msg)
		}
		// And from the configuration's ConfigMap.
		cm := `
apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-gateway-config, namespace: envoy-gateway-system}
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    envoyProxy: {mergeGateways: true}
`
		check(t, compute(t, engine.Options{}, append(docs, cm)...), map[string]want{
			"class-bare":    {"GatewayClass bare", "Accepted", ""},
			"gateway-plain": {"Gateway default/gp", "Accepted", ""},
		})
		off := policy.Features{profiles.EGMergeGateways: {On: false, From: "--feature"}}
		if _, reason, _ := ancestorOf(t, compute(t, engine.Options{Features: off}, append(docs, cm)...), "class-bare"); reason != "TargetNotFound" {
			t.Errorf("--feature off over the ConfigMap: class-bare is %s, want TargetNotFound", reason)
		}
		// The default on, but every class's parameters say false: no
		// class merges, and a name that is nothing is not found.
		res = compute(t, engine.Options{Features: on}, patchCRD, classWith("plain", "pp", "false"), gatewayOf("gp", "plain", 80),
			patchPolicy("nothing", "Gateway", "nothing"))
		if ref, reason, _ := ancestorOf(t, res, "nothing"); ref != "Gateway default/nothing" || reason != "TargetNotFound" {
			t.Errorf("default on, overridden by every class: nothing is %s %s, want TargetNotFound at Gateway default/nothing", ref, reason)
		}
	})

	t.Run("parameters in another namespace", func(t *testing.T) {
		// A parametersRef without namespace names an EnvoyProxy in
		// default: the one in namespace eg does not count.
		class := strings.Replace(classWith("c", "", ""), "spec: {", "spec: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: ep}, ", 1)
		ep := "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyProxy\nmetadata: {name: ep, namespace: eg}\nspec: {mergeGateways: true}\n"
		res := compute(t, engine.Options{}, patchCRD, class, ep, gatewayOf("gc", "c", 80), patchPolicy("class-c", "GatewayClass", "c"))
		if _, reason, _ := ancestorOf(t, res, "class-c"); reason != "TargetNotFound" {
			t.Errorf("EnvoyProxy eg/ep merged class c: class-c is %s", reason)
		}
		res = compute(t, engine.Options{}, patchCRD, strings.Replace(class, "name: ep}", "name: ep, namespace: eg}", 1), ep, gatewayOf("gc", "c", 80), patchPolicy("class-c", "GatewayClass", "c"))
		if _, reason, msg := ancestorOf(t, res, "class-c"); reason != "Accepted" {
			t.Errorf("with the namespace: class-c is %s %q", reason, msg)
		}
	})

	t.Run("parameters that are no boolean", func(t *testing.T) {
		docs := []string{patchCRD, classWith("odd", "op", `"yes"`), gatewayOf("go", "odd", 80), patchPolicy("gateway-odd", "Gateway", "go")}
		res := compute(t, engine.Options{}, docs...)
		found := false
		for _, p := range res.Problems {
			if p.Object.Name == "op" && p.Field == "spec.mergeGateways" && strings.Contains(p.Message, "not a boolean") {
				found = true
			}
		}
		if !found {
			t.Errorf("problems %v, want one naming EnvoyProxy op's spec.mergeGateways", res.Problems)
		}
		// The class then does not merge: the Gateway is the target.
		if _, reason, msg := ancestorOf(t, res, "gateway-odd"); reason != "Accepted" {
			t.Errorf("gateway-odd: %s %q", reason, msg)
		}
	})

	t.Run("kinds that do not target data planes ignore merging", func(t *testing.T) {
		plain := strings.Replace(patchCRD, `attache.dev/data-plane-target: "true"`, `attache.dev/data-plane-target: "false"`, 1)
		res := compute(t, engine.Options{}, plain, classWith("merged", "mp", "true"), gatewayOf("gm", "merged", 80),
			patchPolicy("gateway-of-merged", "Gateway", "gm"), patchPolicy("class-merged", "GatewayClass", "merged"))
		for _, name := range []string{"gateway-of-merged", "class-merged"} {
			if _, reason, msg := ancestorOf(t, res, name); reason != "Accepted" {
				t.Errorf("%s: %s %q", name, reason, msg)
			}
		}
	})
}

// TestEnvoyPatchPolicyDisabledFirst: Envoy Gateway's EnvoyPatchPolicy
// resolves its target by name and then says Disabled when the
// configuration does not enable the kind, before judging the target's
// kind; enabled, the wrong kind is Invalid.
func TestEnvoyPatchPolicyDisabledFirst(t *testing.T) {
	docs := []string{crd("gateway.envoyproxy.io", "EnvoyPatchPolicy", "envoypatchpolicies"), classWith("plain", "pp", "false"), gatewayOf("gp", "plain", 80),
		pol(egV, "EnvoyPatchPolicy", "wrong-kind", 0, "targetRef: {group: gateway.networking.k8s.io, kind: GatewayClass, name: gp}\ntype: JSONPatch\njsonPatches: []"),
		pol(egV, "EnvoyPatchPolicy", "right", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gp}\ntype: JSONPatch\njsonPatches: []")}
	res := compute(t, engine.Options{}, docs...)
	for _, name := range []string{"wrong-kind", "right"} {
		if ref, reason, _ := ancestorOf(t, res, name); ref != "Gateway default/gp" || reason != "Disabled" {
			t.Errorf("disabled, %s: %s %s, want Disabled at Gateway default/gp", name, ref, reason)
		}
	}
	// Merged: a Gateway of the merged class is Invalid (its
	// implementation finds no merged class of that name before it looks
	// at the switch); the merged class under the wrong kind is Disabled.
	merged := []string{docs[0], classWith("m", "mp", "true"), gatewayOf("gm", "m", 80),
		pol(egV, "EnvoyPatchPolicy", "gateway-of-merged", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gm}\ntype: JSONPatch\njsonPatches: []"),
		pol(egV, "EnvoyPatchPolicy", "class-as-gateway", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: m}\ntype: JSONPatch\njsonPatches: []")}
	mres := compute(t, engine.Options{}, merged...)
	if ref, reason, _ := ancestorOf(t, mres, "gateway-of-merged"); ref != "GatewayClass gm" || reason != "Invalid" {
		t.Errorf("disabled, gateway-of-merged: %s %s, want Invalid at GatewayClass gm", ref, reason)
	}
	if ref, reason, _ := ancestorOf(t, mres, "class-as-gateway"); ref != "GatewayClass m" || reason != "Disabled" {
		t.Errorf("disabled, class-as-gateway: %s %s, want Disabled at GatewayClass m", ref, reason)
	}
	res = compute(t, engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableEnvoyPatchPolicy": {On: true}}}, docs...)
	if ref, reason, _ := ancestorOf(t, res, "wrong-kind"); ref != "Gateway default/gp" || reason != "Invalid" {
		t.Errorf("enabled, wrong-kind: %s %s, want Invalid at Gateway default/gp", ref, reason)
	}
	if _, reason, msg := ancestorOf(t, res, "right"); reason != "Accepted" {
		t.Errorf("enabled, right: %s %q", reason, msg)
	}
}

// TestSharedPortAcrossMergedGateways: when a GatewayClass merges its
// Gateways, one Envoy listener serves the plain-HTTP listeners of all of
// them on a port, so a ClientTrafficPolicy on one such listener, or on a
// whole Gateway, reaches the other Gateways' too: Invalid. A listener with
// the protocol, port and hostname of an earlier Gateway's is Conflicted
// and not served: it shares nothing. Without merging, each Gateway is its
// own data plane.
func TestSharedPortAcrossMergedGateways(t *testing.T) {
	ctp := func(name, target, section string) string {
		ref := "{group: gateway.networking.k8s.io, kind: Gateway, name: " + target
		if section != "" {
			ref += ", sectionName: " + section
		}
		return pol(egV, "ClientTrafficPolicy", name, 0, "targetRefs: ["+ref+"}]\ntimeout: {http: {idleTimeout: 5s}}")
	}
	docs := func(merge string) []string {
		return []string{crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
			classWith("eg", "p", merge), gatewayAt("a", "eg", "a.example.com", 80, 1), gatewayAt("b", "eg", "b.example.com", 80, 2), gatewayOf("c", "eg", 8080),
			// Created before c and d: d's listener repeats c's.
			gatewayAt("d", "eg", "c.example.com", 8080, 3),
			ctp("on-listener", "a", "http"), ctp("on-gateway", "a", ""), ctp("on-own-port", "c", "http"), ctp("on-own-gateway", "c", ""),
			ctp("on-conflicted", "d", "http")}
	}
	res := compute(t, engine.Options{}, docs("true")...)
	for _, name := range []string{"on-listener", "on-gateway"} {
		_, reason, msg := ancestorOf(t, res, name)
		if reason != "Invalid" || !strings.Contains(msg, "Gateway default/a#http shares port 80 with the plain-HTTP listeners Gateway default/b#http") ||
			!strings.Contains(msg, "(GatewayClass eg merges its Gateways into one data plane (spec.mergeGateways of EnvoyProxy default/p, its parametersRef))") {
			t.Errorf("merged, %s: %s %q", name, reason, msg)
		}
	}
	for _, name := range []string{"on-own-port", "on-own-gateway", "on-conflicted"} {
		if _, reason, msg := ancestorOf(t, res, name); reason != "Accepted" {
			t.Errorf("merged, %s: %s %q", name, reason, msg)
		}
	}
	res = compute(t, engine.Options{}, docs("false")...)
	for _, name := range []string{"on-listener", "on-gateway", "on-own-port", "on-own-gateway", "on-conflicted"} {
		if _, reason, msg := ancestorOf(t, res, name); reason != "Accepted" {
			t.Errorf("not merged, %s: %s %q", name, reason, msg)
		}
	}
}

// TestIncrementalClassParameters: the incremental engine reads a change of
// a GatewayClass's EnvoyProxy: turning mergeGateways on and off changes
// the ClientTrafficPolicy's verdict, as a full computation does.
func TestIncrementalClassParameters(t *testing.T) {
	docs := []string{crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		classWith("eg", "p", "false"), gatewayOf("a", "eg", 80), gatewayOf("b", "eg", 80),
		pol(egV, "ClientTrafficPolicy", "on-listener", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: a, sectionName: http}]\ntimeout: {http: {idleTimeout: 5s}}")}
	in := engine.NewIncremental(engine.Options{})
	for i, merge := range []string{"false", "true", "false"} {
		docs[1] = classWith("eg", "p", merge)
		got := in.Compute(decodeDocs(t, docs...))
		wantReason := map[string]string{"false": "Accepted", "true": "Invalid"}[merge]
		if _, reason, msg := ancestorOf(t, got, "on-listener"); reason != wantReason {
			t.Errorf("step %d (mergeGateways %s): %s %q, want %s", i, merge, reason, msg, wantReason)
		}
	}
}

// TestMergedListenerConflictOrder: of two listeners of a merged data plane
// with one protocol, port and hostname, the earlier Gateway's is served
// (creationTimestamp, then namespace and name) and the later one is
// Conflicted: only the served one shares its port with a third Gateway's
// listener.
func TestMergedListenerConflictOrder(t *testing.T) {
	ctp := func(name, target string) string {
		return pol(egV, "ClientTrafficPolicy", name, 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: "+target+", sectionName: http}]\ntimeout: {http: {idleTimeout: 5s}}")
	}
	for _, tc := range []struct {
		name             string
		cMin, dMin       int
		served, conflict string
	}{
		{"c first", 1, 3, "on-c", "on-d"},
		{"d first", 3, 1, "on-d", "on-c"},
		{"same time, by name", 1, 1, "on-c", "on-d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"), classWith("eg", "p", "true"),
				gatewayAt("c", "eg", "x.example.com", 8080, tc.cMin), gatewayAt("d", "eg", "x.example.com", 8080, tc.dMin), gatewayAt("e", "eg", "e.example.com", 8080, 2),
				ctp("on-c", "c"), ctp("on-d", "d"))
			_, reason, msg := ancestorOf(t, res, tc.served)
			if reason != "Invalid" || !strings.Contains(msg, "with the plain-HTTP listeners Gateway default/e#http") || strings.Contains(msg, "Gateway default/c#http, ") {
				t.Errorf("%s (served): %s %q, want Invalid for sharing with e only", tc.served, reason, msg)
			}
			if _, reason, msg := ancestorOf(t, res, tc.conflict); reason != "Accepted" {
				t.Errorf("%s (Conflicted, not served): %s %q", tc.conflict, reason, msg)
			}
		})
	}
}
