package gatewayapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// class is GatewayClass name of controller ctl.
func class(name, ctl string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: " + name + "}\nspec: {controllerName: " + ctl + "}\n"
}

// A delegating backendRef links its children only when an implementation
// of a Gateway the route is reached through follows its form: kgateway
// HTTPRoute names and its label, Gloo Gateway HTTPRoute names and its own
// label, Envoy Gateway none; a Gateway whose class is unknown (not among
// the objects, or of another controller) follows every form. Children are
// reached through what their parents are; a refused backendRef is
// reported and links nothing.
func TestDelegationByImplementation(t *testing.T) {
	gateway := func(name, cls string) string {
		return obj("Gateway", "infra", name, `{gatewayClassName: `+cls+`, listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]}`)
	}
	byName := func(n string) string {
		return `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ` + n + `, namespace: kids}`
	}
	kgwLabel := `{group: delegation.kgateway.dev, kind: label, name: x, namespace: kids}`
	glooLabel := `{group: delegation.gateway.solo.io, kind: label, name: yy, namespace: kids}`
	parent := func(name, gw, rules string) string {
		return obj("HTTPRoute", "infra", name, `{parentRefs: [`+gw+`], rules: `+rules+`}`)
	}
	objs := parse(t, docs(
		class("kgw", profiles.KGatewayController),
		class("gloo", profiles.GlooController),
		class("eg", profiles.EnvoyGatewayController),
		class("custom", "example.com/custom"),
		gateway("kgw", "kgw"), gateway("gloo", "gloo"), gateway("eg", "eg"), gateway("custom", "custom"), gateway("unknown", "not-given"),
		parent("on-kgw", "{name: kgw}", `[{name: name, backendRefs: [`+byName("a")+`]}, {name: kgw-label, backendRefs: [`+kgwLabel+`]}, {name: gloo-label, backendRefs: [`+glooLabel+`]}]`),
		parent("on-gloo", "{name: gloo}", `[{name: name, backendRefs: [`+byName("mid")+`]}, {name: kgw-label, backendRefs: [`+kgwLabel+`]}, {name: gloo-label, backendRefs: [`+glooLabel+`]}]`),
		parent("on-eg", "{name: eg}", `[{name: name, backendRefs: [`+byName("a")+`]}]`),
		parent("on-eg-and-kgw", "{name: eg}, {name: kgw}", `[{name: name, backendRefs: [`+byName("a")+`]}]`),
		parent("on-custom", "{name: custom}", `[{name: gloo-label, backendRefs: [`+glooLabel+`]}]`),
		parent("on-unknown", "{name: unknown}", `[{name: kgw-label, backendRefs: [`+kgwLabel+`]}]`),
		obj("HTTPRoute", "kids", "a", `{rules: [{name: r}]}`),
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: b, namespace: kids, labels: {delegation.kgateway.dev/label: x}}\nspec: {rules: [{name: r}]}\n",
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: c, namespace: kids, labels: {delegation.gateway.solo.io/label: yy}}\nspec: {rules: [{name: r}]}\n",
		// Reached through Gloo only (on-gloo): its kgateway label is not
		// followed, its Gloo label is.
		obj("HTTPRoute", "kids", "mid", `{rules: [{name: kgw-label, backendRefs: [`+kgwLabel+`]}, {name: gloo-label, backendRefs: [`+glooLabel+`]}]}`),
	))
	b := topology.NewBuilder()
	_, probs := gatewayapi.AddWith(b, objs, gatewayapi.Options{DelegationKinds: profiles.DelegationKinds})
	g, _ := b.Build()
	var got []string
	for _, e := range edges(g) {
		if isDelegation(e) {
			got = append(got, e)
		}
	}
	want := []string{
		"HTTPRoute infra/on-custom#gloo-label -> HTTPRoute kids/c",
		"HTTPRoute infra/on-eg-and-kgw#name -> HTTPRoute kids/a",
		"HTTPRoute infra/on-gloo#gloo-label -> HTTPRoute kids/c",
		"HTTPRoute infra/on-gloo#name -> HTTPRoute kids/mid",
		"HTTPRoute infra/on-kgw#kgw-label -> HTTPRoute kids/b",
		"HTTPRoute infra/on-kgw#name -> HTTPRoute kids/a",
		"HTTPRoute infra/on-unknown#kgw-label -> HTTPRoute kids/b",
		"HTTPRoute kids/mid#gloo-label -> HTTPRoute kids/c",
	}
	diff(t, "delegation edges", got, want)
	diff(t, "problems", problemStrings(probs), slices.Sorted(slices.Values([]string{
		`HTTPRoute.gateway.networking.k8s.io infra/on-eg: spec.rules[0].backendRefs[0]: the implementations of the Gateways this route is reached through (GatewayClass controllers gateway.envoyproxy.io/gatewayclass-controller) do not delegate to HTTPRoutes by a backendRef of kind HTTPRoute.gateway.networking.k8s.io; it links nothing`,
		`HTTPRoute.gateway.networking.k8s.io infra/on-gloo: spec.rules[1].backendRefs[0]: the implementations of the Gateways this route is reached through (GatewayClass controllers solo.io/gloo-gateway) do not delegate to HTTPRoutes by a backendRef of kind label.delegation.kgateway.dev; it links nothing`,
		`HTTPRoute.gateway.networking.k8s.io infra/on-kgw: spec.rules[2].backendRefs[0]: the implementations of the Gateways this route is reached through (GatewayClass controllers kgateway.dev/kgateway) do not delegate to HTTPRoutes by a backendRef of kind label.delegation.gateway.solo.io; it links nothing`,
		`HTTPRoute.gateway.networking.k8s.io kids/mid: spec.rules[0].backendRefs[0]: the implementations of the Gateways this route is reached through (GatewayClass controllers solo.io/gloo-gateway) do not delegate to HTTPRoutes by a backendRef of kind label.delegation.kgateway.dev; it links nothing`,
	})))
	// Without options (Add), every form is followed, as before.
	b = topology.NewBuilder()
	_, probs = gatewayapi.Add(b, objs)
	g, _ = b.Build()
	n := 0
	for _, e := range edges(g) {
		if isDelegation(e) {
			n++
		}
	}
	if n != 12 || len(probs) != 0 {
		t.Errorf("Add: %d delegation edges, problems %v; want 12 and none", n, probs)
	}
}

// isDelegation reports whether edge e (as edges writes it) links a rule
// to a child route.
func isDelegation(e string) bool {
	from, to, _ := strings.Cut(e, " -> ")
	return strings.HasPrefix(from, "HTTPRoute ") && strings.Contains(from, "#") && strings.HasPrefix(to, "HTTPRoute ") && !strings.Contains(to, "#")
}
