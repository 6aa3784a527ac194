package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
)

// allowlistDocs: GatewayClass eg whose EnvoyProxy sys/cls registers
// dynamic module a; Gateways g1 (the class's proxy), g2 (its own,
// registering b only), g3 (its own, merged over the class's), gx (of an
// Envoy Gateway class without parameters: the configuration's default
// spec), go (of another implementation's class); an HTTPRoute on each (r1,
// r2, r3, rx, ro) and r12 on g1 and g2; EnvoyExtensionPolicies loading
// modules. own is g2's proxy's registered modules.
func allowlistDocs(own string) string {
	var b strings.Builder
	b.WriteString(crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"))
	b.WriteString(classDoc("eg", egController, "sys/cls") + classDoc("plain", egController, "") + classDoc("other", "example.com/other", ""))
	b.WriteString(envoyProxyDoc("sys", "cls", "{dynamicModules: [{name: a, source: {local: {path: /a.so}}}]}"))
	b.WriteString(envoyProxyDoc("default", "own", "{dynamicModules: ["+own+"]}"))
	b.WriteString(envoyProxyDoc("default", "mrg", "{mergeType: JSONMerge, logging: {level: {default: warn}}}"))
	for _, g := range []struct{ name, class, params string }{{"g1", "eg", ""}, {"g2", "eg", "own"}, {"g3", "eg", "mrg"}, {"gx", "plain", ""}, {"go", "other", ""}} {
		b.WriteString(gatewayDoc(g.name, g.class, "[{name: http, protocol: HTTP, port: 80}]", g.params))
	}
	for name, parents := range map[string]string{"r1": "{name: g1}", "r2": "{name: g2}", "r3": "{name: g3}", "rx": "{name: gx}", "ro": "{name: go}", "r12": "{name: g1}, {name: g2}"} {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: default}\nspec: {parentRefs: [%s], rules: [{}]}\n", name, parents)
	}
	eep := func(name, kind, target, module string) string {
		return "---" + pol(egV, "EnvoyExtensionPolicy", name, 0, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\ndynamicModule: [{name: %s}]", kind, target, module))
	}
	b.WriteString(eep("p1", "HTTPRoute", "r1", "a"))
	b.WriteString(eep("p2", "HTTPRoute", "r2", "a"))
	b.WriteString(eep("p3", "HTTPRoute", "r3", "a"))
	b.WriteString(eep("px", "HTTPRoute", "rx", "zzz"))
	b.WriteString(eep("po", "HTTPRoute", "ro", "zzz"))
	b.WriteString(eep("p12", "HTTPRoute", "r12", "a"))
	b.WriteString(eep("pg", "Gateway", "g1", "b"))
	return b.String()
}

// Envoy Gateway loads a dynamic module only when the EnvoyProxy the
// Gateway runs with registers it: a policy loading another is Invalid in
// place (its routes fail through that Gateway), judged per Gateway above
// its target with the proxy that Gateway runs with (its class's, its own,
// or its own merged over its class's; with neither, the configuration's
// default spec, which registers none unless the configuration says so); a
// route attached only to a Gateway of another implementation is no target
// of Envoy Gateway's (TargetNotFound, naming the class's controller).
func TestDataPlaneAllowlist(t *testing.T) {
	res := engine.Compute(decodeDocs(t, allowlistDocs("{name: b}")), engine.Options{})
	for name, want := range map[string]string{"p1": "True/Accepted", "p2": "False/Invalid", "p3": "True/Accepted", "px": "False/Invalid", "po": "False/TargetNotFound", "p12": "False/Invalid", "pg": "False/Invalid"} {
		if got := status(t, res, name, "Accepted"); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if msg := policyStatusOf(t, res, "po").Ancestors[0].Conditions[0].Message; !strings.Contains(msg, "spec.targetRefs[0]: HTTPRoute default/ro takes effect only through other implementations' Gateways (Gateway default/go (GatewayClass other, controller example.com/other)): the implementation of EnvoyExtensionPolicy.gateway.envoyproxy.io serves the GatewayClasses of gateway.envoyproxy.io/gatewayclass-controller only") {
		t.Errorf("po: %q", msg)
	}
	msg := policyStatusOf(t, res, "p2").Ancestors[0].Conditions[0].Message
	want(t, "p2 message", msg, `the data plane does not allow: spec.dynamicModule[0].name: "a" is not among spec.dynamicModules[].name of EnvoyProxy default/own, which Gateway default/g2 runs with`)
	if !strings.Contains(policyStatusOf(t, res, "pg").Ancestors[0].Conditions[0].Message, "of EnvoyProxy sys/cls, which Gateway default/g1 runs with") {
		t.Errorf("pg: %v, want the class's proxy named", policyStatusOf(t, res, "pg").Ancestors[0].Conditions)
	}
	if msg := policyStatusOf(t, res, "px").Ancestors[0].Conditions[0].Message; !strings.Contains(msg, `"zzz" is not among spec.dynamicModules[].name of the configuration's default EnvoyProxy spec (neither the Gateway nor its GatewayClass names an EnvoyProxy), which Gateway default/gx runs with`) {
		t.Errorf("px: %q", msg)
	}
	// In place: its route's requests fail, through g2 only for r12.
	if len(policyStatusOf(t, res, "p2").InPlaceInvalid) != 1 {
		t.Errorf("p2 InPlaceInvalid = %v, want its route", policyStatusOf(t, res, "p2").InPlaceInvalid)
	}
	want(t, "p12 fails via", failingVia(policyStatusOf(t, res, "p12")), []string{"Gateway default/g2"})
	if v := policyStatusOf(t, res, "p2").InPlaceInvalidVia; len(v) != 1 {
		t.Errorf("p2 InPlaceInvalidVia = %v, want its route through g2", v)
	}
	// A configuration whose default spec registers modules: not judged.
	withDefault := engine.Compute(decodeDocs(t, allowlistDocs("{name: b}")), engine.Options{Features: policy.Features{profiles.EGDefaultDynamicModules: {On: true, From: "--feature"}}})
	want(t, "px with default modules", status(t, withDefault, "px", "Accepted"), "True/Accepted")
	wantProblem(t, res, "p2", "spec.dynamicModule[0].name", `the data plane does not allow it: "a" is not among spec.dynamicModules[].name of EnvoyProxy default/own, which Gateway default/g2 runs with`)

	// g2's proxy registering a too, incrementally as Compute says.
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct{ what, own, p2 string }{{"b only", "{name: b}", "False/Invalid"}, {"a and b", "{name: b}, {name: a}", "True/Accepted"}, {"b again", "{name: b}", "False/Invalid"}} {
		objs := decodeDocs(t, allowlistDocs(s.own))
		res := in.Compute(objs)
		want(t, s.what+": p2", status(t, res, "p2", "Accepted"), s.p2)
		full := engine.Compute(objs, engine.Options{})
		for _, name := range []string{"p1", "p2", "p12", "pg"} {
			want(t, s.what+": "+name+" as Compute", policyStatusOf(t, res, name), policyStatusOf(t, full, name))
		}
	}
}
