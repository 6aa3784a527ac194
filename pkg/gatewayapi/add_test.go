package gatewayapi_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// obj renders one object as YAML; spec is a YAML flow value ("" for none).
func obj(kind, ns, name, spec string) string {
	api := "gateway.networking.k8s.io/v1"
	switch kind {
	case "Service", "Namespace":
		api = "v1"
	case "XListenerSet":
		api = "gateway.networking.x-k8s.io/v1alpha1"
	}
	s := "apiVersion: " + api + "\nkind: " + kind + "\nmetadata: {name: " + name
	if ns != "" {
		s += ", namespace: " + ns
	}
	s += "}\n"
	if spec != "" {
		s += "spec: " + spec + "\n"
	}
	return s
}

func namespace(name, labels string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + name + ", labels: " + labels + "}\n"
}

// gw is Gateway infra/gw of class gc with the given listeners (a YAML flow
// list).
func gw(listeners string) string {
	return obj("Gateway", "infra", "gw", "{gatewayClassName: gc, listeners: "+listeners+"}")
}

func docs(ds ...string) string { return strings.Join(ds, "\n---\n") }

type addCase struct {
	name string
	in   string
	// extra objects appended to the parsed ones (for input YAML cannot
	// express).
	extra     []*unstructured.Unstructured
	edges     []string
	nodes     []string // checked when not nil
	problems  []string
	cycles    int
	skipOrder bool // input order changes the result (duplicates)
}

var addCases = []addCase{
	{
		name: "allowedRoutes from Same by default",
		in: docs(
			gw(`[{name: http, port: 80, protocol: HTTP}]`),
			obj("HTTPRoute", "infra", "r1", `{parentRefs: [{name: gw}]}`),
			obj("HTTPRoute", "baker", "r2", `{parentRefs: [{name: gw, namespace: infra}]}`),
			// parentRef namespace defaults to the route's: baker/gw does not exist.
			obj("HTTPRoute", "baker", "r3", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw#http -> HTTPRoute infra/r1",
		},
	},
	{
		name: "allowedRoutes from All",
		in: docs(
			gw(`[{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]`),
			obj("HTTPRoute", "infra", "r1", `{parentRefs: [{name: gw}]}`),
			obj("HTTPRoute", "baker", "r2", `{parentRefs: [{name: gw, namespace: infra}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw#http -> HTTPRoute baker/r2",
			"Gateway infra/gw#http -> HTTPRoute infra/r1",
		},
	},
	{
		name: "allowedRoutes from Selector",
		in: docs(
			gw(`[
				{name: sel, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {team: baker}}}}},
				{name: unlabelled, port: 81, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: team, operator: DoesNotExist}]}}}}]`),
			namespace("baker", "{team: baker}"),
			namespace("other", "{team: other}"),
			obj("HTTPRoute", "baker", "r", `{parentRefs: [{name: gw, namespace: infra}]}`),
			obj("HTTPRoute", "other", "r", `{parentRefs: [{name: gw, namespace: infra}]}`),
			// No Namespace object: no labels.
			obj("HTTPRoute", "bare", "r", `{parentRefs: [{name: gw, namespace: infra}]}`),
			// Selector does not imply Same.
			obj("HTTPRoute", "infra", "r", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#sel",
			"Gateway infra/gw -> Gateway infra/gw#unlabelled",
			"Gateway infra/gw#sel -> HTTPRoute baker/r",
			"Gateway infra/gw#unlabelled -> HTTPRoute bare/r",
			"Gateway infra/gw#unlabelled -> HTTPRoute infra/r",
		},
	},
	{
		name: "allowedRoutes None and unusable selectors admit nothing",
		in: docs(
			gw(`[
				{name: none, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: None}}},
				{name: bad, port: 81, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchExpressions: [{key: a, operator: Bogus}]}}}},
				{name: nosel, port: 82, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector}}},
				{name: odd, port: 83, protocol: HTTP, allowedRoutes: {namespaces: {from: Sometimes}}}]`),
			obj("HTTPRoute", "infra", "r", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#bad",
			"Gateway infra/gw -> Gateway infra/gw#none",
			"Gateway infra/gw -> Gateway infra/gw#nosel",
			"Gateway infra/gw -> Gateway infra/gw#odd",
		},
		problems: []string{
			`Gateway.gateway.networking.k8s.io infra/gw: spec.listeners[1].allowedRoutes.namespaces.selector: invalid selector: "Bogus" is not a valid label selector operator; the listener admits no routes`,
			`Gateway.gateway.networking.k8s.io infra/gw: spec.listeners[2].allowedRoutes.namespaces.selector: from is Selector but there is no selector; the listener admits no routes`,
			`Gateway.gateway.networking.k8s.io infra/gw: spec.listeners[3].allowedRoutes.namespaces.from: unknown value "Sometimes" (want All, Same, Selector or None); the listener admits no routes`,
		},
	},
	{
		name: "allowedRoutes kinds",
		in: docs(
			gw(`[
				{name: grpc-only, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: GRPCRoute}]}},
				{name: tcp-for-http, port: 81, protocol: TCP, allowedRoutes: {kinds: [{kind: HTTPRoute}]}},
				{name: other-group, port: 82, protocol: HTTP, allowedRoutes: {kinds: [{group: example.com, kind: HTTPRoute}]}}]`),
			obj("HTTPRoute", "infra", "h", `{parentRefs: [{name: gw}]}`),
			obj("GRPCRoute", "infra", "g", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#grpc-only",
			"Gateway infra/gw -> Gateway infra/gw#other-group",
			"Gateway infra/gw -> Gateway infra/gw#tcp-for-http",
			"Gateway infra/gw#grpc-only -> GRPCRoute infra/g",
			"Gateway infra/gw#tcp-for-http -> HTTPRoute infra/h",
		},
	},
	{
		name: "protocol default kinds",
		in: docs(
			gw(`[
				{name: http, port: 80, protocol: HTTP},
				{name: https, port: 443, protocol: HTTPS},
				{name: tls, port: 8443, protocol: TLS},
				{name: tcp, port: 9000, protocol: TCP},
				{name: udp, port: 9001, protocol: UDP},
				{name: custom, port: 9002, protocol: example.com/quic}]`),
			obj("HTTPRoute", "infra", "h", `{parentRefs: [{name: gw}]}`),
			obj("GRPCRoute", "infra", "g", `{parentRefs: [{name: gw}]}`),
			obj("TLSRoute", "infra", "t", `{parentRefs: [{name: gw}]}`),
			obj("TCPRoute", "infra", "tcp", `{parentRefs: [{name: gw}]}`),
			obj("UDPRoute", "infra", "udp", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#custom",
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> Gateway infra/gw#https",
			"Gateway infra/gw -> Gateway infra/gw#tcp",
			"Gateway infra/gw -> Gateway infra/gw#tls",
			"Gateway infra/gw -> Gateway infra/gw#udp",
			"Gateway infra/gw#custom -> GRPCRoute infra/g",
			"Gateway infra/gw#custom -> HTTPRoute infra/h",
			"Gateway infra/gw#custom -> TCPRoute infra/tcp",
			"Gateway infra/gw#custom -> TLSRoute infra/t",
			"Gateway infra/gw#custom -> UDPRoute infra/udp",
			"Gateway infra/gw#http -> GRPCRoute infra/g",
			"Gateway infra/gw#http -> HTTPRoute infra/h",
			"Gateway infra/gw#https -> GRPCRoute infra/g",
			"Gateway infra/gw#https -> HTTPRoute infra/h",
			"Gateway infra/gw#tcp -> TCPRoute infra/tcp",
			"Gateway infra/gw#tls -> TLSRoute infra/t",
			"Gateway infra/gw#udp -> UDPRoute infra/udp",
		},
	},
	{
		name: "hostname intersection",
		in: docs(
			gw(`[
				{name: exact, port: 80, protocol: HTTP, hostname: foo.example.com},
				{name: wild, port: 81, protocol: HTTP, hostname: "*.example.com"},
				{name: wildbar, port: 82, protocol: HTTP, hostname: "*.bar.example.com"},
				{name: any, port: 83, protocol: HTTP}]`),
			obj("HTTPRoute", "infra", "exact", `{parentRefs: [{name: gw}], hostnames: [foo.example.com]}`),
			obj("HTTPRoute", "infra", "other", `{parentRefs: [{name: gw}], hostnames: [other.com]}`),
			obj("HTTPRoute", "infra", "wild", `{parentRefs: [{name: gw}], hostnames: ["*.example.com"]}`),
			obj("HTTPRoute", "infra", "wildbar", `{parentRefs: [{name: gw}], hostnames: ["*.bar.example.com"]}`),
			// A wildcard stands for one label or more...
			obj("HTTPRoute", "infra", "deep", `{parentRefs: [{name: gw}], hostnames: [a.b.example.com]}`),
			// ... and never for none.
			obj("HTTPRoute", "infra", "apex", `{parentRefs: [{name: gw}], hostnames: [example.com]}`),
			obj("HTTPRoute", "infra", "none", `{parentRefs: [{name: gw}]}`),
			obj("HTTPRoute", "infra", "two", `{parentRefs: [{name: gw}], hostnames: [other.com, x.bar.example.com]}`),
			obj("GRPCRoute", "infra", "g", `{parentRefs: [{name: gw}], hostnames: [foo.example.com]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#any",
			"Gateway infra/gw -> Gateway infra/gw#exact",
			"Gateway infra/gw -> Gateway infra/gw#wild",
			"Gateway infra/gw -> Gateway infra/gw#wildbar",
			"Gateway infra/gw#any -> GRPCRoute infra/g",
			"Gateway infra/gw#any -> HTTPRoute infra/apex",
			"Gateway infra/gw#any -> HTTPRoute infra/deep",
			"Gateway infra/gw#any -> HTTPRoute infra/exact",
			"Gateway infra/gw#any -> HTTPRoute infra/none",
			"Gateway infra/gw#any -> HTTPRoute infra/other",
			"Gateway infra/gw#any -> HTTPRoute infra/two",
			"Gateway infra/gw#any -> HTTPRoute infra/wild",
			"Gateway infra/gw#any -> HTTPRoute infra/wildbar",
			"Gateway infra/gw#exact -> GRPCRoute infra/g",
			"Gateway infra/gw#exact -> HTTPRoute infra/exact",
			"Gateway infra/gw#exact -> HTTPRoute infra/none",
			"Gateway infra/gw#exact -> HTTPRoute infra/wild",
			"Gateway infra/gw#wild -> GRPCRoute infra/g",
			"Gateway infra/gw#wild -> HTTPRoute infra/deep",
			"Gateway infra/gw#wild -> HTTPRoute infra/exact",
			"Gateway infra/gw#wild -> HTTPRoute infra/none",
			"Gateway infra/gw#wild -> HTTPRoute infra/two",
			"Gateway infra/gw#wild -> HTTPRoute infra/wild",
			"Gateway infra/gw#wild -> HTTPRoute infra/wildbar",
			"Gateway infra/gw#wildbar -> HTTPRoute infra/none",
			"Gateway infra/gw#wildbar -> HTTPRoute infra/two",
			"Gateway infra/gw#wildbar -> HTTPRoute infra/wild",
			"Gateway infra/gw#wildbar -> HTTPRoute infra/wildbar",
		},
	},
	{
		name: "hostnames of TLSRoute count, TCPRoute has none",
		in: docs(
			gw(`[
				{name: tls, port: 443, protocol: TLS, hostname: a.example.com},
				{name: tcp, port: 9000, protocol: TCP, hostname: a.example.com}]`),
			obj("TLSRoute", "infra", "miss", `{parentRefs: [{name: gw}], hostnames: [b.example.com]}`),
			obj("TLSRoute", "infra", "hit", `{parentRefs: [{name: gw}], hostnames: ["*.example.com"]}`),
			obj("TCPRoute", "infra", "c", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#tcp",
			"Gateway infra/gw -> Gateway infra/gw#tls",
			"Gateway infra/gw#tcp -> TCPRoute infra/c",
			"Gateway infra/gw#tls -> TLSRoute infra/hit",
		},
	},
	{
		name: "sectionName and port parentRefs",
		in: docs(
			gw(`[
				{name: a, port: 80, protocol: HTTP},
				{name: b, port: 80, protocol: HTTP},
				{name: c, port: 8080, protocol: HTTP},
				{name: t, port: 80, protocol: TCP}]`),
			obj("HTTPRoute", "infra", "all", `{parentRefs: [{name: gw}]}`),
			obj("HTTPRoute", "infra", "by-section", `{parentRefs: [{name: gw, sectionName: b}]}`),
			// t is on port 80 but does not admit HTTPRoutes.
			obj("HTTPRoute", "infra", "by-port", `{parentRefs: [{name: gw, port: 80}]}`),
			obj("HTTPRoute", "infra", "no-such-port", `{parentRefs: [{name: gw, port: 81}]}`),
			obj("HTTPRoute", "infra", "section-and-port", `{parentRefs: [{name: gw, sectionName: c, port: 8080}]}`),
			obj("HTTPRoute", "infra", "section-port-mismatch", `{parentRefs: [{name: gw, sectionName: c, port: 80}]}`),
			obj("HTTPRoute", "infra", "no-such-section", `{parentRefs: [{name: gw, sectionName: zz}]}`),
			obj("HTTPRoute", "infra", "section-not-admitting", `{parentRefs: [{name: gw, sectionName: t}]}`),
			obj("HTTPRoute", "infra", "no-such-gateway", `{parentRefs: [{name: nope}]}`),
			obj("HTTPRoute", "infra", "twice", `{parentRefs: [{name: gw, sectionName: a}, {name: gw, sectionName: a}, {name: gw, port: 8080}]}`),
			obj("HTTPRoute", "infra", "explicit-defaults", `{parentRefs: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: infra, name: gw, sectionName: a}]}`),
			// Not Gateway API's group: not a Gateway.
			obj("HTTPRoute", "infra", "other-group", `{parentRefs: [{group: example.com, kind: Gateway, name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#a",
			"Gateway infra/gw -> Gateway infra/gw#b",
			"Gateway infra/gw -> Gateway infra/gw#c",
			"Gateway infra/gw -> Gateway infra/gw#t",
			"Gateway infra/gw#a -> HTTPRoute infra/all",
			"Gateway infra/gw#a -> HTTPRoute infra/by-port",
			"Gateway infra/gw#a -> HTTPRoute infra/explicit-defaults",
			"Gateway infra/gw#a -> HTTPRoute infra/twice",
			"Gateway infra/gw#b -> HTTPRoute infra/all",
			"Gateway infra/gw#b -> HTTPRoute infra/by-port",
			"Gateway infra/gw#b -> HTTPRoute infra/by-section",
			"Gateway infra/gw#c -> HTTPRoute infra/all",
			"Gateway infra/gw#c -> HTTPRoute infra/section-and-port",
			"Gateway infra/gw#c -> HTTPRoute infra/twice",
		},
	},
	{
		name: "GAMMA Service parents",
		in: docs(
			obj("Service", "shop", "cart", `{ports: [{name: http, port: 80}]}`),
			obj("HTTPRoute", "shop", "producer", `{parentRefs: [{group: "", kind: Service, name: cart, port: 80}]}`),
			obj("HTTPRoute", "other", "consumer", `{parentRefs: [{group: "", kind: Service, namespace: shop, name: cart}]}`),
			obj("GRPCRoute", "shop", "g", `{parentRefs: [{group: "", kind: Service, name: cart, sectionName: http}]}`),
			obj("HTTPRoute", "shop", "missing", `{parentRefs: [{group: "", kind: Service, name: gone}]}`),
			// Without group "" the kind is Gateway API's Service: nothing.
			obj("HTTPRoute", "shop", "no-group", `{parentRefs: [{kind: Service, name: cart}]}`),
		),
		edges: []string{
			"Service shop/cart -> GRPCRoute shop/g",
			"Service shop/cart -> HTTPRoute other/consumer",
			"Service shop/cart -> HTTPRoute shop/producer",
			"Service shop/cart -> Service shop/cart#http",
		},
	},
	{
		name: "GAMMA route whose backend is its parent",
		in: docs(
			obj("Service", "shop", "cart", `{}`),
			obj("HTTPRoute", "shop", "r", `{parentRefs: [{group: "", kind: Service, name: cart}], rules: [{backendRefs: [{name: cart}]}]}`),
		),
		// Build drops the edge closing the cycle.
		edges: []string{
			"HTTPRoute shop/r -> HTTPRoute shop/r#rule-1",
			"Service shop/cart -> HTTPRoute shop/r",
		},
		cycles: 1,
	},
	{
		name: "named and unnamed rules",
		in: docs(
			obj("HTTPRoute", "infra", "r", `{rules: [{}, {name: foo}, {}, {name: ""}]}`),
			obj("GRPCRoute", "infra", "g", `{rules: [{}, {name: main}]}`),
			obj("TLSRoute", "infra", "t", `{rules: [{name: main}, {}]}`),
			obj("TCPRoute", "infra", "t", `{rules: [{name: main}, {}]}`),
			obj("UDPRoute", "infra", "u", `{rules: [{}]}`),
		),
		edges: []string{
			"GRPCRoute infra/g -> GRPCRoute infra/g#main",
			"GRPCRoute infra/g -> GRPCRoute infra/g#rule-1",
			"HTTPRoute infra/r -> HTTPRoute infra/r#foo",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-1",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-3",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-4",
			"TCPRoute infra/t -> TCPRoute infra/t#main",
			"TCPRoute infra/t -> TCPRoute infra/t#rule-2",
			"TLSRoute infra/t -> TLSRoute infra/t#main",
			"TLSRoute infra/t -> TLSRoute infra/t#rule-2",
			"UDPRoute infra/u -> UDPRoute infra/u#rule-1",
		},
	},
	{
		name: "rule name collisions",
		in: docs(
			obj("HTTPRoute", "infra", "r", `{rules: [{name: rule-2}, {}, {}]}`),
			// A later explicit name wins too, and rule-1-1 is taken.
			obj("HTTPRoute", "infra", "s", `{rules: [{}, {name: rule-1}, {name: rule-1-1}]}`),
			// Names are 1-based: the first rule's explicit "rule-1" is its
			// default name too, and the second rule's default is "rule-2".
			obj("HTTPRoute", "infra", "k", `{rules: [{name: rule-1}, {}]}`),
			obj("HTTPRoute", "infra", "d", `{rules: [{name: x, backendRefs: [{name: a}]}, {name: x, backendRefs: [{name: b}]}]}`),
			obj("Service", "infra", "a", `{}`),
			obj("Service", "infra", "b", `{}`),
		),
		edges: []string{
			"HTTPRoute infra/d -> HTTPRoute infra/d#x",
			"HTTPRoute infra/d#x -> Service infra/a",
			"HTTPRoute infra/k -> HTTPRoute infra/k#rule-1",
			"HTTPRoute infra/k -> HTTPRoute infra/k#rule-2",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-2",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-2-1",
			"HTTPRoute infra/r -> HTTPRoute infra/r#rule-3",
			"HTTPRoute infra/s -> HTTPRoute infra/s#rule-1",
			"HTTPRoute infra/s -> HTTPRoute infra/s#rule-1-1",
			"HTTPRoute infra/s -> HTTPRoute infra/s#rule-1-2",
		},
		problems: []string{
			`HTTPRoute.gateway.networking.k8s.io infra/d: spec.rules[1].name: duplicate rule name "x"; this rule is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/r: spec.rules[1]: the rule has no name and its default name "rule-2" is the name of spec.rules[0]; it is named "rule-2-1" instead`,
			`HTTPRoute.gateway.networking.k8s.io infra/s: spec.rules[0]: the rule has no name and its default name "rule-1" is the name of spec.rules[1]; it is named "rule-1-2" instead`,
		},
	},
	{
		name: "backends and ReferenceGrants",
		in: docs(
			obj("Service", "app", "api", `{ports: [{name: http, port: 80}]}`),
			obj("Service", "db", "pg", `{ports: [{port: 5432}]}`),
			obj("Service", "db", "redis", `{}`),
			obj("Service", "cache", "mc", `{}`),
			obj("ReferenceGrant", "db", "allow-pg", `{
				from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}],
				to: [{group: "", kind: Service, name: pg}]}`),
			obj("ReferenceGrant", "cache", "allow-grpc", `{
				from: [{group: gateway.networking.k8s.io, kind: GRPCRoute, namespace: app}],
				to: [{group: "", kind: Service}]}`),
			obj("HTTPRoute", "app", "r", `{rules: [{backendRefs: [
				{name: api, port: 80},
				{name: pg, namespace: db, port: 5432},
				{name: redis, namespace: db},
				{name: mc, namespace: cache},
				{name: missing}]}]}`),
			obj("GRPCRoute", "app", "g", `{rules: [{backendRefs: [{name: mc, namespace: cache}, {name: pg, namespace: db}]}]}`),
			// Filter-level backends (mirrors) are not backends of the rule.
			obj("HTTPRoute", "app", "m", `{rules: [{
				filters: [{type: RequestMirror, requestMirror: {backendRef: {group: example.com, kind: Sink, name: s1}}}],
				backendRefs: [{name: api, filters: [{type: RequestMirror, requestMirror: {backendRef: {group: example.com, kind: Sink, name: s2}}}]}]}]}`),
		),
		edges: []string{
			"GRPCRoute app/g -> GRPCRoute app/g#rule-1",
			"GRPCRoute app/g#rule-1 -> Service cache/mc",
			"HTTPRoute app/m -> HTTPRoute app/m#rule-1",
			"HTTPRoute app/m#rule-1 -> Service app/api",
			"HTTPRoute app/r -> HTTPRoute app/r#rule-1",
			"HTTPRoute app/r#rule-1 -> Service app/api",
			"HTTPRoute app/r#rule-1 -> Service db/pg",
			"Service app/api -> Service app/api#http",
			"Service db/pg -> Service db/pg#5432",
		},
	},
	{
		name: "route delegation (kgateway)",
		in: docs(
			gw(`[{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]`),
			obj("HTTPRoute", "infra", "parent", `{parentRefs: [{name: gw}], rules: [
				{name: by-name, backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a1, namespace: team-a}]},
				{name: all-b, backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: team-b}]},
				{name: by-label, backendRefs: [{group: delegation.kgateway.dev, kind: label, name: c, namespace: team-c}]},
				{name: by-label-all, backendRefs: [{group: delegation.kgateway.dev, kind: label, name: d, namespace: all}]},
				{name: missing, backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: nope, namespace: team-a}]}]}`),
			// No ReferenceGrant is needed; no parentRefs: any parent.
			obj("HTTPRoute", "team-a", "a1", `{rules: [{name: x}]}`),
			// Names this parent: delegated to; names another: not.
			obj("HTTPRoute", "team-b", "b1", `{parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: parent, namespace: infra}]}`),
			obj("HTTPRoute", "team-b", "b2", `{parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: other, namespace: infra}]}`),
			// Only a Gateway parentRef: standalone, never a child.
			obj("HTTPRoute", "team-b", "b3", `{parentRefs: [{name: gw, namespace: infra}]}`),
			// Kind not written out: not a parent HTTPRoute.
			obj("HTTPRoute", "team-b", "b4", `{parentRefs: [{name: parent, namespace: infra}]}`),
			// The group left out is Gateway API's (the API server's default).
			obj("HTTPRoute", "team-b", "b6", `{parentRefs: [{kind: HTTPRoute, name: parent, namespace: infra}]}`),
			// Another group: not a parent HTTPRoute.
			obj("HTTPRoute", "team-b", "b7", `{parentRefs: [{group: example.com, kind: HTTPRoute, name: parent, namespace: infra}]}`),
			// Hostnames: refused as a child.
			obj("HTTPRoute", "team-b", "b5", `{hostnames: [b.example]}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: c1, namespace: team-c, labels: {delegation.kgateway.dev/label: c}}\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: c2, namespace: team-a, labels: {delegation.kgateway.dev/label: c}}\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: d1, namespace: team-a, labels: {delegation.kgateway.dev/label: d}}\n",
			// A GRPCRoute does not delegate, nor is an HTTPRoute its backend.
			obj("GRPCRoute", "team-a", "g", `{rules: [{backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: a1}]}]}`),
		),
		edges: []string{
			"GRPCRoute team-a/g -> GRPCRoute team-a/g#rule-1",
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw#http -> HTTPRoute infra/parent",
			"Gateway infra/gw#http -> HTTPRoute team-b/b3",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#all-b",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#by-label",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#by-label-all",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#by-name",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#missing",
			"HTTPRoute infra/parent#all-b -> HTTPRoute team-b/b1",
			"HTTPRoute infra/parent#all-b -> HTTPRoute team-b/b6",
			"HTTPRoute infra/parent#by-label -> HTTPRoute team-c/c1",
			"HTTPRoute infra/parent#by-label-all -> HTTPRoute team-a/d1",
			"HTTPRoute infra/parent#by-name -> HTTPRoute team-a/a1",
			"HTTPRoute team-a/a1 -> HTTPRoute team-a/a1#x",
		},
		problems: []string{
			`HTTPRoute.gateway.networking.k8s.io team-b/b5: spec.hostnames: route HTTPRoute infra/parent delegates to this route (spec.rules[1].backendRefs[0]), which must then have no hostnames (it takes its parent's); it is not delegated to`,
		},
	},
	{
		// Gloo Gateway's label form (solo-io/gloo 8d57572e55
		// projects/gateway2/translator/backendref/types.go
		// RefIsHTTPRouteDelegationLabelSelector, query/httproute.go
		// fetchRoutesByRef): routes selected by its own label, "all" for
		// every namespace unless a Namespace of that name exists; each form
		// reads its own label only.
		name: "route delegation by label (Gloo Gateway)",
		in: docs(
			gw(`[{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]`),
			obj("HTTPRoute", "infra", "parent", `{parentRefs: [{name: gw}], rules: [
				{name: by-label, backendRefs: [{group: delegation.gateway.solo.io, kind: label, name: c, namespace: team-c}]},
				{name: by-label-all, backendRefs: [{group: delegation.gateway.solo.io, kind: label, name: d, namespace: all}]},
				{name: kgateway-label, backendRefs: [{group: delegation.kgateway.dev, kind: label, name: c, namespace: team-c}]}]}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: c1, namespace: team-c, labels: {delegation.gateway.solo.io/label: c}}\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: c2, namespace: team-c, labels: {delegation.kgateway.dev/label: c}}\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: d1, namespace: team-a, labels: {delegation.gateway.solo.io/label: d}}\n",
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw#http -> HTTPRoute infra/parent",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#by-label",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#by-label-all",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#kgateway-label",
			"HTTPRoute infra/parent#by-label -> HTTPRoute team-c/c1",
			"HTTPRoute infra/parent#by-label-all -> HTTPRoute team-a/d1",
			"HTTPRoute infra/parent#kgateway-label -> HTTPRoute team-c/c2",
		},
	},
	{
		name: "Gloo Gateway's wildcard namespace refused while Namespace all exists",
		in: docs(
			namespace("all", "{}"),
			obj("HTTPRoute", "infra", "parent", `{rules: [
				{name: gloo, backendRefs: [{group: delegation.gateway.solo.io, kind: label, name: d, namespace: all}]},
				{name: kgw, backendRefs: [{group: delegation.kgateway.dev, kind: label, name: d, namespace: all}]}]}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: d1, namespace: team-a, labels: {delegation.gateway.solo.io/label: d, delegation.kgateway.dev/label: d}}\n",
		),
		edges: []string{
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#gloo",
			"HTTPRoute infra/parent -> HTTPRoute infra/parent#kgw",
			// kgateway has no such rule.
			"HTTPRoute infra/parent#kgw -> HTTPRoute team-a/d1",
		},
		problems: []string{
			`HTTPRoute.gateway.networking.k8s.io infra/parent: spec.rules[0].backendRefs[0].namespace: namespace "all" selects the routes of every namespace, which Gloo Gateway refuses while a Namespace "all" exists; it delegates to none`,
		},
	},
	{
		name: "virtual backends",
		in: docs(
			obj("ReferenceGrant", "other", "g", `{
				from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}],
				to: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: far}]}`),
			obj("HTTPRoute", "app", "r", `{rules: [{backendRefs: [
				{group: multicluster.x-k8s.io, kind: ServiceImport, name: imp},
				{group: multicluster.x-k8s.io, kind: ServiceImport, name: far, namespace: other},
				{group: multicluster.x-k8s.io, kind: ServiceImport, name: farther, namespace: other},
				{group: "", kind: Namespace, name: app},
				{group: gateway.networking.k8s.io, kind: Gateway, name: nogw}]}]}`),
			obj("HTTPRoute", "app", "r2", `{rules: [{backendRefs: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: imp}]}]}`),
		),
		edges: []string{
			"HTTPRoute app/r -> HTTPRoute app/r#rule-1",
			"HTTPRoute app/r#rule-1 -> ServiceImport.multicluster.x-k8s.io app/imp",
			"HTTPRoute app/r#rule-1 -> ServiceImport.multicluster.x-k8s.io other/far",
			"HTTPRoute app/r2 -> HTTPRoute app/r2#rule-1",
			"HTTPRoute app/r2#rule-1 -> ServiceImport.multicluster.x-k8s.io app/imp",
		},
		nodes: []string{
			"HTTPRoute app/r",
			"HTTPRoute app/r#rule-1",
			"HTTPRoute app/r2",
			"HTTPRoute app/r2#rule-1",
			"Namespace app",
			"Namespace other",
			"ServiceImport.multicluster.x-k8s.io app/imp",
			"ServiceImport.multicluster.x-k8s.io other/far",
		},
	},
	{
		name: "Service port sections",
		in: docs(
			obj("Service", "app", "s", `{ports: [{name: http, port: 80}, {port: 9000}, {name: admin, port: 9001}]}`),
			obj("Service", "app", "dup", `{ports: [{name: a, port: 1}, {name: a, port: 2}, {port: 3}, {name: "3", port: 4}]}`),
		),
		edges: []string{
			"Service app/dup -> Service app/dup#3",
			"Service app/dup -> Service app/dup#a",
			"Service app/s -> Service app/s#9000",
			"Service app/s -> Service app/s#admin",
			"Service app/s -> Service app/s#http",
		},
		problems: []string{
			`Service app/dup: spec.ports[1]: port "a" is already a section of the Service; this port is ignored`,
			`Service app/dup: spec.ports[3]: port "3" is already a section of the Service; this port is ignored`,
		},
	},
	{
		name: "GatewayClass parents",
		in: docs(
			obj("GatewayClass", "", "gc", `{controllerName: example.com/c}`),
			// Cluster-scoped: metadata.namespace is ignored.
			obj("GatewayClass", "stray", "gc2", `{controllerName: example.com/c}`),
			obj("Gateway", "infra", "a", `{gatewayClassName: gc, listeners: []}`),
			obj("Gateway", "infra", "b", `{gatewayClassName: missing, listeners: []}`),
			obj("Gateway", "other", "c", `{gatewayClassName: gc2, listeners: []}`),
		),
		edges: []string{
			"GatewayClass gc -> Gateway infra/a",
			"GatewayClass gc2 -> Gateway other/c",
		},
		nodes: []string{
			"Gateway infra/a",
			"Gateway infra/b",
			"Gateway other/c",
			"GatewayClass gc",
			"GatewayClass gc2",
			"Namespace infra",
			"Namespace other",
		},
	},
	{
		name: "any apiVersion of a handled group and kind",
		in: strings.Join([]string{
			"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: Gateway\nmetadata: {name: gw, namespace: infra}\n" +
				"spec: {gatewayClassName: gc, listeners: [{name: l, port: 1, protocol: example.com/any, allowedRoutes: {namespaces: {from: All}}}]}",
			"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: HTTPRoute\nmetadata: {name: h, namespace: app}\n" +
				"spec: {parentRefs: [{name: gw, namespace: infra}], rules: [{backendRefs: [{name: s, namespace: db}]}]}",
			"apiVersion: gateway.networking.k8s.io/v1alpha2\nkind: TCPRoute\nmetadata: {name: t, namespace: app}\nspec: {parentRefs: [{name: gw, namespace: infra}]}",
			"apiVersion: gateway.networking.k8s.io/v1alpha3\nkind: TLSRoute\nmetadata: {name: t, namespace: app}\nspec: {parentRefs: [{name: gw, namespace: infra}]}",
			"apiVersion: gateway.networking.k8s.io/v1alpha2\nkind: GRPCRoute\nmetadata: {name: g, namespace: app}\nspec: {parentRefs: [{name: gw, namespace: infra}]}",
			"apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g, namespace: db}\n" +
				"spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}], to: [{group: '', kind: Service}]}",
			"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: db}",
			// Not handled: another group, a core kind the topology does not know.
			"apiVersion: example.com/v1\nkind: HTTPRoute\nmetadata: {name: x, namespace: app}\nspec: {parentRefs: [{name: gw, namespace: infra}]}",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ignored}",
		}, "\n---\n"),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#l",
			"Gateway infra/gw#l -> GRPCRoute app/g",
			"Gateway infra/gw#l -> HTTPRoute app/h",
			"Gateway infra/gw#l -> TCPRoute app/t",
			"Gateway infra/gw#l -> TLSRoute app/t",
			"HTTPRoute app/h -> HTTPRoute app/h#rule-1",
			"HTTPRoute app/h#rule-1 -> Service db/s",
		},
		nodes: []string{
			"GRPCRoute app/g",
			"Gateway infra/gw",
			"Gateway infra/gw#l",
			"HTTPRoute app/h",
			"HTTPRoute app/h#rule-1",
			"Namespace app",
			"Namespace db",
			"Namespace infra",
			"Service db/s",
			"TCPRoute app/t",
			"TLSRoute app/t",
		},
	},
	{
		name: "implicit namespaces",
		in: docs(
			namespace("a", "{x: z}"),
			obj("Service", "a", "s", `{}`),
			obj("Service", "b", "s", `{}`),
			obj("GatewayClass", "", "gc", `{controllerName: example.com/c}`),
			obj("HTTPRoute", "c", "r", `{rules: [{backendRefs: [{group: example.com, kind: Sink, name: x}]}]}`),
			obj("ReferenceGrant", "f", "g", `{from: [], to: []}`),
			// An object that does not decode still shows its namespace exists.
			obj("Gateway", "g", "bad", `{listeners: 7}`),
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: e}",
		),
		edges: []string{
			"HTTPRoute c/r -> HTTPRoute c/r#rule-1",
			"HTTPRoute c/r#rule-1 -> Sink.example.com c/x",
		},
		nodes: []string{
			"GatewayClass gc",
			"HTTPRoute c/r",
			"HTTPRoute c/r#rule-1",
			"Namespace a",
			"Namespace b",
			"Namespace c",
			"Namespace f",
			"Namespace g",
			"Service a/s",
			"Service b/s",
			"Sink.example.com c/x",
		},
		problems: []string{
			`Gateway.gateway.networking.k8s.io g/bad: spec.listeners: cannot decode the object (want a list, got number 7); it is ignored`,
		},
	},
	{
		name: "malformed objects",
		in: docs(
			obj("Gateway", "infra", "bad", `{gatewayClassName: gc, listeners: "x"}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {namespace: infra}\nspec: {listeners: []}",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: 5, namespace: infra}\nspec: {listeners: []}",
			"apiVersion: v1\nkind: Namespace\nmetadata: x",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: nsbool, namespace: true}",
			obj("Gateway", "infra", "dupl", `{gatewayClassName: gc, listeners: [
				{name: http, port: 80, protocol: HTTP},
				{name: http, port: 81, protocol: HTTP},
				{port: 82, protocol: HTTP}]}`),
			obj("HTTPRoute", "infra", "port", `{parentRefs: [{name: dupl, port: "80"}]}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: labels, namespace: infra, labels: {a: 1}}",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: spec, namespace: infra}\nspec: x",
			obj("HTTPRoute", "infra", "float", `{parentRefs: [{name: dupl, port: 80.5}]}`),
			obj("Service", "infra", "portname", `{ports: [{port: 80}, {name: 5, port: 81}]}`),
			obj("ReferenceGrant", "infra", "rg", `{from: {}, to: []}`),
			obj("Service", "infra", "twin", `{ports: [{name: a, port: 1}]}`),
			obj("Service", "infra", "twin", `{ports: [{name: b, port: 2}]}`),
			obj("HTTPRoute", "infra", "holes", `{parentRefs: [{}, {name: dupl}], rules: [{backendRefs: [{port: 80}]}]}`),
			// Fields the hierarchy does not read cannot spoil an object.
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"+
				"metadata: {name: unread, namespace: infra, annotations: 5, managedFields: x}\nstatus: 7\n"+
				"spec: {rules: [{matches: x, filters: 3, backendRefs: [{name: twin, weight: x, filters: 1}]}]}",
			obj("Service", "infra", "unread", `{selector: 1, ports: [{name: a, port: 1, targetPort: {a: 1}}]}`),
			obj("Gateway", "infra", "unread", `{gatewayClassName: gc, addresses: 1, listeners: [{name: a, port: 1, protocol: HTTP, tls: 1}]}`),
		),
		extra: []*unstructured.Unstructured{nil, {}, {Object: map[string]any{}}},
		edges: []string{
			"Gateway infra/dupl -> Gateway infra/dupl#http",
			"Gateway infra/dupl#http -> HTTPRoute infra/holes",
			"Gateway infra/unread -> Gateway infra/unread#a",
			"HTTPRoute infra/holes -> HTTPRoute infra/holes#rule-1",
			"HTTPRoute infra/unread -> HTTPRoute infra/unread#rule-1",
			"HTTPRoute infra/unread#rule-1 -> Service infra/twin",
			"Service infra/twin -> Service infra/twin#a",
			"Service infra/unread -> Service infra/unread#a",
		},
		problems: []string{
			`Gateway.gateway.networking.k8s.io infra/: metadata.name: object has no name; it is ignored`,
			`Gateway.gateway.networking.k8s.io infra/: metadata.name: want a string, got number 5; the object is ignored`,
			`HTTPRoute.gateway.networking.k8s.io nsbool: metadata.namespace: want a string, got boolean true; the object is ignored`,
			`Gateway.gateway.networking.k8s.io infra/bad: spec.listeners: cannot decode the object (want a list, got string "x"); it is ignored`,
			`Gateway.gateway.networking.k8s.io infra/dupl: spec.listeners[1].name: duplicate listener name "http"; this listener is ignored`,
			`Gateway.gateway.networking.k8s.io infra/dupl: spec.listeners[2].name: listener has no name; it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/float: spec.parentRefs[0].port: cannot decode the object (want an integer, got number 80.5); it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/holes: spec.parentRefs[0].name: parentRef has no name; it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/holes: spec.rules[0].backendRefs[0].name: backendRef has no name; it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/labels: metadata.labels["a"]: cannot decode the object (want a string, got number 1); it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/port: spec.parentRefs[0].port: cannot decode the object (want an integer, got string "80"); it is ignored`,
			`HTTPRoute.gateway.networking.k8s.io infra/spec: spec: cannot decode the object (want an object, got string "x"); it is ignored`,
			`Namespace : metadata: want an object, got string "x"; the object is ignored`,
			`ReferenceGrant.gateway.networking.k8s.io infra/rg: spec.from: cannot decode the object (want a list, got an object); it is ignored`,
			`Service infra/portname: spec.ports[1].name: cannot decode the object (want a string, got number 5); it is ignored`,
			`Service infra/twin: duplicate object; this copy is ignored`,
		},
		skipOrder: true,
	},
}

func TestAdd(t *testing.T) {
	for _, tc := range addCases {
		t.Run(tc.name, func(t *testing.T) { runAddCase(t, tc) })
	}
}

// runAddCase checks the edges, nodes, problems and cycles of one case, and
// (unless skipOrder) that reversing the input changes nothing.
func runAddCase(t *testing.T, tc addCase) {
	t.Helper()
	objs := append(parse(t, tc.in), tc.extra...)
	before := parse(t, tc.in)
	g, _, probs, cycles := build(t, objs)
	for i, u := range before {
		if !reflect.DeepEqual(u.Object, objs[i].Object) {
			t.Errorf("Add modified its input:\n%v\nwas\n%v", objs[i].Object, u.Object)
		}
	}
	diff(t, "edges", edges(g), tc.edges)
	if tc.nodes != nil {
		diff(t, "nodes", nodes(g), tc.nodes)
	}
	diff(t, "problems", problemStrings(probs), slices.Sorted(slices.Values(tc.problems)))
	if len(cycles) != tc.cycles {
		t.Errorf("got %d cycles %v, want %d", len(cycles), cycles, tc.cycles)
	}
	for _, id := range g.ByKind(topology.KindNamespace) {
		if n := g.Node(id); len(n.Parents)+len(n.Children) != 0 {
			t.Errorf("%s has edges: namespaces must have none", n.Ref)
		}
	}
	if tc.skipOrder {
		return
	}
	// The graph does not depend on the input order.
	rev := slices.Clone(objs)
	slices.Reverse(rev)
	g2, _, probs2, _ := build(t, rev)
	if got, want := orderRefs(g2), orderRefs(g); !slices.Equal(got, want) {
		t.Errorf("reversed input gives another order:\n%v\nwant\n%v", got, want)
	}
	diff(t, "problems with reversed input", problemStrings(probs2), problemStrings(probs))
}

func orderRefs(g *topology.Graph) []string {
	var out []string
	for _, id := range g.Order() {
		out = append(out, short(g.Node(id).Ref))
	}
	return out
}

func TestAddLabelsAndGeneration(t *testing.T) {
	objs := parse(t, docs(
		namespace("a", "{team: x}"),
		"apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a, generation: 3, labels: {app: s}}\nspec: {ports: [{name: http, port: 80}]}",
		obj("Service", "b", "s", `{}`),
		"apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: gc, namespace: ignored, generation: 2}",
	))
	g, _, probs, _ := build(t, objs)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	check := func(ref topology.Ref, labels map[string]string, gen int64) {
		t.Helper()
		id, ok := g.Lookup(ref)
		if !ok {
			t.Errorf("no node %s; nodes: %v", ref, nodes(g))
			return
		}
		n := g.Node(id)
		if !maps(n.Labels, labels) || n.Generation != gen {
			t.Errorf("%s: labels %v generation %d, want %v and %d", ref, n.Labels, n.Generation, labels, gen)
		}
	}
	check(topology.Ref{Kind: "Namespace", Name: "a"}, map[string]string{"team": "x"}, 0)
	check(topology.Ref{Kind: "Namespace", Name: "b"}, nil, 0)
	check(topology.Ref{Kind: "Service", Namespace: "a", Name: "s"}, map[string]string{"app": "s"}, 3)
	check(topology.Ref{Kind: "Service", Namespace: "a", Name: "s", SectionName: "http"}, map[string]string{"app": "s"}, 3)
	check(topology.Ref{Group: topology.GatewayGroup, Kind: "GatewayClass", Name: "gc"}, nil, 2)
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestHandles(t *testing.T) {
	for _, gk := range append(slices.Clone(topology.DefaultHierarchy), topology.GroupKind{Group: topology.GatewayGroup, Kind: "ReferenceGrant"}) {
		if !gatewayapiHandles(gk) {
			t.Errorf("Handles(%s) = false", gk)
		}
	}
	for _, gk := range []topology.GroupKind{
		{Kind: "ConfigMap"},
		{Group: "example.com", Kind: "HTTPRoute"},
		{Group: topology.GatewayGroup, Kind: "BackendTLSPolicy"},
		{Kind: "Gateway"},
	} {
		if gatewayapiHandles(gk) {
			t.Errorf("Handles(%s) = true", gk)
		}
	}
}
