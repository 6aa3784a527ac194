package gatewayapi_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Gloo Gateway attaches a route whose parentRef names a Gateway without
// sectionName to the listeners of that Gateway's XListenerSets too, by
// port and by each listener's admission (allowedRoutes: Same is the
// XListenerSet's namespace); not with a sectionName, not to a
// ListenerSet's (Gloo reads XListenerSets only), not to one the Gateway
// does not admit. kgateway's Gateways and Gateways of unknown classes
// follow Gateway API's rule; so does Add, without options.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/query/query.go
// (isParentRefForResource, parentRefMatchListener), query/httproute.go
// (getRoutesForResource, processRoute); kgateway pkg/kgateway/query/query.go
// (isParentRefForResource: the resource's own group, kind and name).
func TestGatewayRoutesOnListenerSetsByImplementation(t *testing.T) {
	gateway := func(name, cls string) string {
		return obj("Gateway", "infra", name, `{gatewayClassName: `+cls+`, listeners: [{name: http, port: 80, protocol: HTTP}], allowedListeners: {namespaces: {from: All}}}`)
	}
	xls := func(name, gw, listeners string) string {
		return obj("XListenerSet", "apps", name, `{parentRef: {name: `+gw+`, namespace: infra}, listeners: `+listeners+`}`)
	}
	two := `[{name: a, port: 8081, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}, {name: b, port: 8082, protocol: HTTP}]`
	route := func(name, refs string) string {
		return obj("HTTPRoute", "infra", name, `{parentRefs: [`+refs+`]}`)
	}
	objs := parse(t, docs(
		class("gloo", profiles.GlooController),
		class("kgw", profiles.KGatewayController),
		gateway("gloo", "gloo"), gateway("kgw", "kgw"), gateway("unknown", "not-given"),
		xls("x", "gloo", two),
		xls("kx", "kgw", two),
		xls("ux", "unknown", two),
		lset("apps", "l", `[{name: c, port: 8083, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]`),
		// Not admitted: another Gateway's namespace rule.
		obj("Gateway", "infra", "strict", `{gatewayClassName: gloo, listeners: [{name: http, port: 80, protocol: HTTP}]}`),
		xls("sx", "strict", two),
		route("on-gloo", `{name: gloo}`),
		route("on-gloo-section", `{name: gloo, sectionName: http}`),
		route("on-gloo-port", `{name: gloo, port: 8081}`),
		route("on-kgw", `{name: kgw}`),
		route("on-unknown", `{name: unknown}`),
		route("on-strict", `{name: strict}`),
	))
	routeEdges := func(opts gatewayapi.Options) []string {
		b := topology.NewBuilder()
		gatewayapi.AddWith(b, objs, opts)
		g, _ := b.Build()
		var out []string
		for _, e := range edges(g) {
			if _, to, _ := strings.Cut(e, " -> "); strings.HasPrefix(to, "HTTPRoute ") {
				out = append(out, e)
			}
		}
		return out
	}
	own := []string{
		"Gateway infra/gloo#http -> HTTPRoute infra/on-gloo",
		"Gateway infra/gloo#http -> HTTPRoute infra/on-gloo-section",
		"Gateway infra/kgw#http -> HTTPRoute infra/on-kgw",
		"Gateway infra/strict#http -> HTTPRoute infra/on-strict",
		"Gateway infra/unknown#http -> HTTPRoute infra/on-unknown",
	}
	diff(t, "edges (Gateway API)", routeEdges(gatewayapi.Options{}), own)
	diff(t, "edges (by implementation)", routeEdges(gatewayapi.Options{GatewayRouteListenerSets: profiles.GatewayRouteListenerSets}), append(own,
		"XListenerSet.gateway.networking.x-k8s.io apps/x#a -> HTTPRoute infra/on-gloo",
		"XListenerSet.gateway.networking.x-k8s.io apps/x#a -> HTTPRoute infra/on-gloo-port",
	))
}
