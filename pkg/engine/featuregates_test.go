package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// egConfig is Envoy Gateway's configuration ConfigMap with extensionApis.
func egConfig(extensionApis string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-gateway-config, namespace: envoy-gateway-system}
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    extensionApis: %s
`, extensionApis)
}

// featureDocs: Envoy Gateway's EnvoyExtensionPolicy and EnvoyPatchPolicy
// CRDs, refsTopo, a Gateway-wide extension processor, a Lua policy on
// route r1 and an EnvoyPatchPolicy on the Gateway.
func featureDocs() []string {
	return append(failOpenDocs(),
		crd("gateway.envoyproxy.io", "EnvoyPatchPolicy", "envoypatchpolicies"),
		pol(egV, "EnvoyExtensionPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
extProc: [{backendRefs: [{name: ext, port: 9000}]}]`),
		onRoute("EnvoyExtensionPolicy", "lua", "r1", 1, `lua: [{type: Inline, inline: "function envoy_on_response(h) end"}]`),
		pol(egV, "EnvoyPatchPolicy", "patch", 2, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
type: JSONPatch
jsonPatches: [{type: "type.googleapis.com/envoy.config.listener.v3.Listener", name: x, operation: {op: add, path: /a, value: 1}}]`),
	)
}

var g1 = topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}

// Envoy Gateway ignores EnvoyPatchPolicy (Disabled) and refuses Lua
// (Invalid, in place: the route fails) unless its configuration turns them
// on; attache reads that configuration among the objects, and
// Options.Features overrides it.
func TestFeatureGates(t *testing.T) {
	const luaOff = "fields its implementation's configuration turns off: spec.lua: needs EnvoyGateway.extensionApis.enableLua, "
	for _, c := range []struct {
		what     string
		config   string // extensionApis, or "" for no ConfigMap
		features policy.Features
		lua      string // lua's Accepted, then a fragment of its ancestor message
		luaWhy   string
		patch    string
		patchWhy string
	}{
		{"no configuration: Envoy Gateway's defaults", "", nil,
			"False/Invalid", luaOff + "off: no configuration attache read turns it on (set --feature EnvoyGateway.extensionApis.enableLua=true, or give attache the implementation's configuration where attache reads one: Envoy Gateway's envoy-gateway-config)",
			"False/Disabled", "EnvoyPatchPolicy is disabled in its implementation's configuration: it needs EnvoyGateway.extensionApis.enableEnvoyPatchPolicy, off: no configuration"},
		{"the configuration leaves them off", "{enableBackend: true}", nil,
			"False/Invalid", luaOff + "off in ConfigMap envoy-gateway-system/envoy-gateway-config",
			"False/Disabled", "enableEnvoyPatchPolicy, off in ConfigMap envoy-gateway-system/envoy-gateway-config"},
		{"the configuration turns them on", "{enableLua: true, enableEnvoyPatchPolicy: true}", nil,
			"True/Accepted", "Policy is accepted", "True/Accepted", "Policy is accepted"},
		{"--feature over the configuration", "{enableLua: true, enableEnvoyPatchPolicy: false}",
			policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: false, From: "--feature EnvoyGateway.extensionApis.enableLua=false"},
				"EnvoyGateway.extensionApis.enableEnvoyPatchPolicy": {On: true, From: "--feature"}},
			"False/Invalid", luaOff + "off in --feature EnvoyGateway.extensionApis.enableLua=false", "True/Accepted", "Policy is accepted"},
	} {
		t.Run(c.what, func(t *testing.T) {
			docs := featureDocs()
			if c.config != "" {
				docs = append(docs, egConfig(c.config))
			}
			res := compute(t, engine.Options{Features: c.features}, docs...)
			want(t, "lua: Accepted", status(t, res, "lua", "Accepted"), c.lua)
			want(t, "patch: Accepted", status(t, res, "patch", "Accepted"), c.patch)
			for name, msg := range map[string]string{"lua": c.luaWhy, "patch": c.patchWhy} {
				if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) {
					t.Errorf("%s: ancestor message %q does not say %q", name, got, msg)
				}
			}
			// Lua refused stays in place at its route (the route fails, as
			// Envoy Gateway fails it), the Gateway's processor does not
			// reach r1; a disabled EnvoyPatchPolicy applies nowhere.
			want(t, "effective at r1", effective(t, res, "EnvoyExtensionPolicy", routeRule("r1")),
				[]string{`{"lua":[{"inline":"function envoy_on_response(h) end","type":"Inline"}]}`})
			patches := effective(t, res, "EnvoyPatchPolicy", g1)
			if on := c.patch == "True/Accepted"; on != (len(patches) == 1) {
				t.Errorf("EnvoyPatchPolicy effective at g1: %v (enabled: %v)", patches, on)
			}
			if c.lua != "True/Accepted" {
				wantProblem(t, res, "lua", "spec.lua", "field turned off by its implementation's configuration: needs EnvoyGateway.extensionApis.enableLua, off")
			}
			for _, p := range res.Problems {
				if c.lua == "True/Accepted" && p.Object.Name == "lua" {
					t.Errorf("lua accepted, but a problem: %v", p)
				}
			}
		})
	}
}

// A configuration created, edited and deleted is read again: Incremental
// agrees with Compute at each step. A broken one is a problem naming it,
// and its features are those it could read.
func TestFeatureGatesIncremental(t *testing.T) {
	base := decodeDocs(t, featureDocs()...)
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct {
		what   string
		config string
		lua    string
	}{
		{"none", "", "False/Invalid"},
		{"created", "{enableLua: true}", "True/Accepted"},
		{"edited", "{enableLua: false}", "False/Invalid"},
		{"edited again", "{enableLua: true, enableEnvoyPatchPolicy: true}", "True/Accepted"},
		{"deleted", "", "False/Invalid"},
		{"broken", "{enableLua: true, enableBackend: maybe}", "True/Accepted"},
	} {
		objs := base
		if s.config != "" {
			objs = append(decodeDocs(t, egConfig(s.config)), base...)
		}
		got := in.Compute(objs)
		full := engine.Compute(objs, engine.Options{})
		for _, name := range []string{"lua", "patch", "gw"} {
			want(t, s.what+": "+name+" as Compute", status(t, got, name, "Accepted"), status(t, full, name, "Accepted"))
		}
		want(t, s.what+": lua", status(t, got, "lua", "Accepted"), s.lua)
		want(t, s.what+": r1 as Compute", effective(t, got, "EnvoyExtensionPolicy", routeRule("r1")), effective(t, full, "EnvoyExtensionPolicy", routeRule("r1")))
		want(t, s.what+": g1 as Compute", effective(t, got, "EnvoyPatchPolicy", g1), effective(t, full, "EnvoyPatchPolicy", g1))
		broken := false
		for _, p := range full.Problems {
			if p.Object.Kind == "ConfigMap" && p.Field == "data[envoy-gateway.yaml]" && strings.Contains(p.Message, "extensionApis.enableBackend is not a boolean") {
				broken = true
			}
		}
		if broken != (s.what == "broken") {
			t.Errorf("%s: a problem naming the configuration: %v; problems %v", s.what, broken, full.Problems)
		}
	}
}

// A whole-kind gate holds however a policy would attach: here by a route
// rule's ExtensionRef filter (an annotation-declared gate).
func TestFeatureGateFilterAttachment(t *testing.T) {
	gated := strings.Replace(filterCRD("none"), "    attache.dev/filter-attachment: extension-ref\n",
		"    attache.dev/filter-attachment: extension-ref\n    attache.dev/feature-gates: Impl.kind=*\n", 1)
	topo := filterTopo(t, `    - {type: ExtensionRef, extensionRef: {group: policies.example.com, kind: FPolicy, name: byf}}`)
	byf := pol("policies.example.com/v1", "FPolicy", "byf", 5, `x: filter`)
	res := compute(t, engine.Options{}, gated, topo, byf)
	want(t, "off: effective at r1#first", effective(t, res, "FPolicy", rule("r1", "first")), []string(nil))
	want(t, "off: byf Accepted", status(t, res, "byf", "Accepted"), "False/Disabled")
	res = compute(t, engine.Options{Features: policy.Features{"Impl.kind": {On: true}}}, gated, topo, byf)
	want(t, "on: effective at r1#first", effective(t, res, "FPolicy", rule("r1", "first")), []string{`{"x":"filter"}`})
}
