package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// glooDelegTopo is written after Gloo Gateway's delegation translator
// inputs (solo-io/gloo 8d57572e55 projects/gateway2/translator/testutils/
// inputs/delegation/route_options_inheritance_child_override_*.yaml and
// route_options_multi_level_inheritance_override_partial.yaml): Gateway
// example-gateway; HTTPRoute example-route on it, whose rule a delegates
// (under /a) to every HTTPRoute of namespace a-root; route-a-root there
// delegates (under /a/1) to every HTTPRoute of namespace a; route-a has
// rule r1 under /a/1. annotations holds each route's
// delegation.gateway.solo.io/enable-policy-overrides (absent: none).
func glooDelegTopo(annotations map[string]string) string {
	meta := func(name, ns string) string {
		m := "{name: " + name + ", namespace: " + ns
		if v, ok := annotations[name]; ok {
			m += `, annotations: {delegation.gateway.solo.io/enable-policy-overrides: "` + v + `"}`
		}
		return m + "}"
	}
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway, namespace: infra}
spec:
  gatewayClassName: example-gateway-class
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: ` + meta("example-route", "infra") + `
spec:
  parentRefs: [{name: example-gateway}]
  hostnames: [example.com]
  rules:
  - {name: svc, backendRefs: [{name: example-svc, port: 80}]}
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: a-root}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: ` + meta("route-a-root", "a-root") + `
spec:
  rules:
  - name: a1
    matches: [{path: {type: PathPrefix, value: /a/1}}]
    backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: a}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: ` + meta("route-a", "a") + `
spec:
  rules: [{name: r1, matches: [{path: {type: PathPrefix, value: /a/1}}], backendRefs: [{name: svc-a, port: 8080}]}]
`
}

// routeOption is a RouteOption of namespace ns on HTTPRoute route of that
// namespace, created at minute min.
func routeOption(name, ns, route string, min int, options string) string {
	return strings.Replace(pol(glooV, "RouteOption", name, min, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: `+route+`}]
options: `+options), "namespace: default", "namespace: "+ns, 1)
}

// Gloo Gateway's RouteOptions across route delegation: the delegating
// route's options win over its children's, but in the options its
// delegation.gateway.solo.io/enable-policy-overrides annotation names
// ("*": all), where the child's win; an option the parent does not set is
// the child's either way. Boundaries are taken from the child up, each by
// the annotation of the route above it.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// routeoptions/route_options_plugin.go (mergeOptionsForRoute: the
// annotation read on the route whose options are applied, onto the
// translated routes of its children; parseDelegationFieldOverrides),
// projects/gloo/pkg/utils/merge.go (MergeRouteOptionsWithOverrides),
// translator/httproute/gateway_http_route_translator.go (the parent's
// route plugins applied to every delegated route after the child's), and
// the goldens outputs/delegation/route_options_inheritance_child_override_
// {ignore,allow,ok}.yaml, route_options_multi_level_inheritance_override_
// partial.yaml; route_options_plugin_test.go ("faults,timeout").
func TestGlooRouteOptionDelegation(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	parent := routeOption("example-opt", "infra", "example-route", 0, `{faults: {abort: {percentage: 100, httpStatus: 418}}}`)
	r1 := rule("route-a", "r1")
	r1.Namespace = "a"
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		opts        []string
		want        string
	}{
		{"ignore: the parent's faults win", nil,
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{faults: {abort: {percentage: 80, httpStatus: 404}}}`)},
			`{"options":{"faults":{"abort":{"httpStatus":418,"percentage":100}}}}`},
		{"allow: * lets the child's win", map[string]string{"example-route": "*"},
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{faults: {abort: {percentage: 80, httpStatus: 404}}}`)},
			`{"options":{"faults":{"abort":{"httpStatus":404,"percentage":80}}}}`},
		{"ok: the child's other options stay", nil,
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{headerManipulation: {requestHeadersToRemove: [foo]}, cors: {exposeHeaders: [foo], allowOrigin: [baz]}}`)},
			`{"options":{"cors":{"allowOrigin":["baz"],"exposeHeaders":["foo"]},"faults":{"abort":{"httpStatus":418,"percentage":100}},"headerManipulation":{"requestHeadersToRemove":["foo"]}}}`},
		{"a list: the child wins in the options named, in any case", map[string]string{"example-route": " Faults ,timeout"},
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{faults: {abort: {httpStatus: 100}}, timeout: 10s, prefixRewrite: /src}`),
				routeOption("example-opt-2", "infra", "example-route", 2, `{timeout: 5s, prefixRewrite: /dst}`)},
			`{"options":{"faults":{"abort":{"httpStatus":100}},"prefixRewrite":"/dst","timeout":"10s"}}`},
		{"a oneof by its name only", map[string]string{"example-route": "hostRewrite"},
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{hostRewrite: child.example}`),
				routeOption("example-opt-2", "infra", "example-route", 2, `{hostRewrite: parent.example}`)},
			`{"options":{"faults":{"abort":{"httpStatus":418,"percentage":100}},"hostRewrite":"parent.example"}}`},
		{"a oneof named by its group", map[string]string{"example-route": "hostRewriteType"},
			[]string{routeOption("route-a-opt", "a", "route-a", 1, `{hostRewrite: child.example}`),
				routeOption("example-opt-2", "infra", "example-route", 2, `{hostRewrite: parent.example}`)},
			`{"options":{"faults":{"abort":{"httpStatus":418,"percentage":100}},"hostRewrite":"child.example"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, append([]string{c, glooDelegTopo(tc.annotations), parent}, tc.opts...)...)
			want(t, "route-a#r1", effective(t, res, "RouteOption", r1), []string{tc.want})
			if len(res.Problems) > 0 {
				t.Errorf("problems: %v", res.Problems)
			}
		})
	}
}

// Across two delegations: route-a-root lets its child win in
// headerManipulation and faults, example-route (no annotation) wins in
// everything it sets: its cors and faults over route-a's, route-a's
// headerManipulation over route-a-root's.
// Source: as above, golden outputs/delegation/
// route_options_multi_level_inheritance_override_partial.yaml (route-a's
// route: cors and faults of example-opt, headerManipulation of
// route-a-opt).
func TestGlooRouteOptionDelegationMultiLevel(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	res := compute(t, engine.Options{}, c, glooDelegTopo(map[string]string{"route-a-root": "headerManipulation,faults"}),
		routeOption("example-opt", "infra", "example-route", 0, `{faults: {abort: {percentage: 100, httpStatus: 418}}, cors: {exposeHeaders: [example], allowOrigin: [example]}}`),
		routeOption("route-a-root-opt", "a-root", "route-a-root", 1, `{headerManipulation: {requestHeadersToRemove: [foo]}}`),
		routeOption("route-a-opt", "a", "route-a", 2, `{headerManipulation: {requestHeadersToRemove: [override]}, cors: {exposeHeaders: [foo], allowOrigin: [baz]}}`))
	r1 := rule("route-a", "r1")
	r1.Namespace = "a"
	want(t, "route-a#r1", effective(t, res, "RouteOption", r1), []string{
		`{"options":{"cors":{"allowOrigin":["example"],"exposeHeaders":["example"]},"faults":{"abort":{"httpStatus":418,"percentage":100}},"headerManipulation":{"requestHeadersToRemove":["override"]}}}`})
	want(t, "route-a-root-opt", status(t, res, "route-a-root-opt", "Programmed"), "False/Overridden")
	want(t, "route-a-opt", status(t, res, "route-a-opt", "Programmed"), "True/PartiallyProgrammed")
	want(t, "example-opt", status(t, res, "example-opt", "Programmed"), "True/Programmed")
}

// An annotation naming no option is reported and read as none: the
// parent's options win.
func TestGlooRouteOptionDelegationEmptyList(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	res := compute(t, engine.Options{}, c, glooDelegTopo(map[string]string{"example-route": " , "}),
		routeOption("example-opt", "infra", "example-route", 0, `{timeout: 5s}`),
		routeOption("route-a-opt", "a", "route-a", 1, `{timeout: 10s}`))
	r1 := rule("route-a", "r1")
	r1.Namespace = "a"
	want(t, "route-a#r1", effective(t, res, "RouteOption", r1), []string{`{"options":{"timeout":"5s"}}`})
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Error(), `metadata.annotations[delegation.gateway.solo.io/enable-policy-overrides]: " , " names no field`) {
		t.Errorf("problems: %v", res.Problems)
	}
}

// A RouteOption a delegating rule's ExtensionRef filter names is the
// parent's too: it wins over the child's options but where the parent's
// annotation lets the child's win.
// Source: as TestGlooRouteOptionDelegation; the parent's rule context
// (its filters' RouteOptions first, then the route's) is what the route
// plugin applies to the children's routes.
func TestGlooRouteOptionDelegationParentFilter(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	r1 := rule("route-a", "r1")
	r1.Namespace = "a"
	for annotation, wantSpec := range map[string]string{
		"":        `{"options":{"prefixRewrite":"/child","timeout":"3s"}}`,
		"timeout": `{"options":{"prefixRewrite":"/child","timeout":"10s"}}`,
	} {
		annotations := map[string]string{}
		if annotation != "" {
			annotations["example-route"] = annotation
		}
		topo := glooDelegTopo(annotations)
		const at = "  - name: a\n"
		if !strings.Contains(topo, at) {
			t.Fatal("glooDelegTopo changed: no rule a")
		}
		topo = strings.Replace(topo, at, at+"    filters: [{type: ExtensionRef, extensionRef: {group: gateway.solo.io, kind: RouteOption, name: rule-opt}}]\n", 1)
		res := compute(t, engine.Options{}, c, topo,
			strings.Replace(pol(glooV, "RouteOption", "rule-opt", 0, `options: {timeout: 3s}`), "namespace: default", "namespace: infra", 1),
			routeOption("route-a-opt", "a", "route-a", 1, `{timeout: 10s, prefixRewrite: /child}`))
		want(t, "route-a#r1 with "+annotation, effective(t, res, "RouteOption", r1), []string{wantSpec})
	}
}
