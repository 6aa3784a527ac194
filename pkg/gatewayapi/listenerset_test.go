package gatewayapi_test

import "testing"

// gwAllowing is Gateway infra/gw of class gc, with one HTTP listener
// "http" on port 80 and the given allowedListeners (a YAML flow value, ""
// for none).
func gwAllowing(allowed string) string {
	spec := `{gatewayClassName: gc, listeners: [{name: http, port: 80, protocol: HTTP}]`
	if allowed != "" {
		spec += `, allowedListeners: ` + allowed
	}
	return obj("Gateway", "infra", "gw", spec+"}")
}

// lset is ListenerSet ns/name, child of Gateway infra/gw, with the given
// listeners (a YAML flow list).
func lset(ns, name, listeners string) string {
	return obj("ListenerSet", ns, name, `{parentRef: {name: gw, namespace: infra}, listeners: `+listeners+`}`)
}

// toLset is an HTTPRoute ns/name whose one parentRef is ListenerSet
// lsNS/ls, with extra fields of the parentRef (a YAML flow mapping body,
// "" for none).
func toLset(ns, name, lsNS, extra string) string {
	ref := `{kind: ListenerSet, name: ls, namespace: ` + lsNS
	if extra != "" {
		ref += ", " + extra
	}
	return obj("HTTPRoute", ns, name, `{parentRefs: [`+ref+`}]}`)
}

const (
	lsHTTP = `[{name: extra, port: 8080, protocol: HTTP}]`
	// cut ends the problem of a ListenerSet that attaches to no Gateway.
	cut = "; the ListenerSet and the routes attached to it reach no Gateway"
)

var listenerSetCases = []addCase{
	{
		name: "allowedListeners from Same",
		in: docs(
			gwAllowing(`{namespaces: {from: Same}}`),
			lset("infra", "ls", lsHTTP),
			lset("apps", "ls", lsHTTP),
			toLset("infra", "r", "infra", ""),
			// Routes of a ListenerSet that is not admitted attach nowhere.
			toLset("apps", "r", "apps", ""),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet infra/ls",
			// The ListenerSet refused and its listeners are still targets.
			"ListenerSet apps/ls -> ListenerSet apps/ls#extra",
			"ListenerSet infra/ls -> ListenerSet infra/ls#extra",
			"ListenerSet infra/ls#extra -> HTTPRoute infra/r",
		},
		nodes: []string{
			"Gateway infra/gw", "Gateway infra/gw#http",
			"HTTPRoute apps/r", "HTTPRoute infra/r",
			"ListenerSet apps/ls", "ListenerSet apps/ls#extra",
			"ListenerSet infra/ls", "ListenerSet infra/ls#extra",
			"Namespace apps", "Namespace infra",
		},
		problems: []string{
			`ListenerSet.gateway.networking.k8s.io apps/ls: spec.parentRef: parent Gateway infra/gw admits only ListenerSets of its own namespace "infra" (spec.allowedListeners.namespaces.from is Same)` + cut,
		},
	},
	{
		name: "allowedListeners from All",
		in: docs(
			gwAllowing(`{namespaces: {from: All}}`),
			lset("infra", "ls", lsHTTP),
			lset("apps", "ls", lsHTTP),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet apps/ls",
			"Gateway infra/gw -> ListenerSet infra/ls",
			"ListenerSet apps/ls -> ListenerSet apps/ls#extra",
			"ListenerSet infra/ls -> ListenerSet infra/ls#extra",
		},
	},
	{
		name: "allowedListeners from Selector",
		in: docs(
			gwAllowing(`{namespaces: {from: Selector, selector: {matchLabels: {team: apps}}}}`),
			namespace("apps", "{team: apps}"),
			namespace("other", "{team: other}"),
			lset("apps", "ls", lsHTTP),
			lset("other", "ls", lsHTTP),
			// No Namespace object: no labels.
			lset("bare", "ls", lsHTTP),
			// Selector does not imply Same.
			lset("infra", "ls", lsHTTP),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet apps/ls",
			"ListenerSet apps/ls -> ListenerSet apps/ls#extra",
			"ListenerSet bare/ls -> ListenerSet bare/ls#extra",
			"ListenerSet infra/ls -> ListenerSet infra/ls#extra",
			"ListenerSet other/ls -> ListenerSet other/ls#extra",
		},
		problems: []string{
			`ListenerSet.gateway.networking.k8s.io bare/ls: spec.parentRef: parent Gateway infra/gw admits only ListenerSets of the namespaces its spec.allowedListeners.namespaces.selector matches, and namespace "bare" does not match` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/ls: spec.parentRef: parent Gateway infra/gw admits only ListenerSets of the namespaces its spec.allowedListeners.namespaces.selector matches, and namespace "infra" does not match` + cut,
			`ListenerSet.gateway.networking.k8s.io other/ls: spec.parentRef: parent Gateway infra/gw admits only ListenerSets of the namespaces its spec.allowedListeners.namespaces.selector matches, and namespace "other" does not match` + cut,
		},
	},
	{
		name: "allowedListeners None, by default, and unusable",
		in: docs(
			obj("Gateway", "infra", "none", `{gatewayClassName: gc, listeners: [], allowedListeners: {namespaces: {from: None}}}`),
			obj("Gateway", "infra", "unset", `{gatewayClassName: gc, listeners: []}`),
			// The CRD defaults namespaces to {from: None}; without it, so do we.
			obj("Gateway", "infra", "empty", `{gatewayClassName: gc, listeners: [], allowedListeners: {}}`),
			obj("Gateway", "infra", "nofrom", `{gatewayClassName: gc, listeners: [], allowedListeners: {namespaces: {}}}`),
			obj("Gateway", "infra", "nosel", `{gatewayClassName: gc, listeners: [], allowedListeners: {namespaces: {from: Selector}}}`),
			obj("Gateway", "infra", "odd", `{gatewayClassName: gc, listeners: [], allowedListeners: {namespaces: {from: Sometimes}}}`),
			obj("ListenerSet", "infra", "to-none", `{parentRef: {name: none}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "to-unset", `{parentRef: {name: unset}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "to-empty", `{parentRef: {name: empty}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "to-nofrom", `{parentRef: {name: nofrom}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "to-nosel", `{parentRef: {name: nosel}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "to-odd", `{parentRef: {name: odd}, listeners: `+lsHTTP+`}`),
		),
		edges: []string{
			"ListenerSet infra/to-empty -> ListenerSet infra/to-empty#extra",
			"ListenerSet infra/to-nofrom -> ListenerSet infra/to-nofrom#extra",
			"ListenerSet infra/to-none -> ListenerSet infra/to-none#extra",
			"ListenerSet infra/to-nosel -> ListenerSet infra/to-nosel#extra",
			"ListenerSet infra/to-odd -> ListenerSet infra/to-odd#extra",
			"ListenerSet infra/to-unset -> ListenerSet infra/to-unset#extra",
		},
		problems: []string{
			`Gateway.gateway.networking.k8s.io infra/nosel: spec.allowedListeners.namespaces.selector: from is Selector but there is no selector; the Gateway admits no ListenerSets`,
			`Gateway.gateway.networking.k8s.io infra/odd: spec.allowedListeners.namespaces.from: unknown value "Sometimes" (want All, Same, Selector or None); the Gateway admits no ListenerSets`,
			`ListenerSet.gateway.networking.k8s.io infra/to-empty: spec.parentRef: parent Gateway infra/empty admits no ListenerSets: spec.allowedListeners.namespaces.from is not set, and defaults to None` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/to-nofrom: spec.parentRef: parent Gateway infra/nofrom admits no ListenerSets: spec.allowedListeners.namespaces.from is not set, and defaults to None` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/to-none: spec.parentRef: parent Gateway infra/none admits no ListenerSets: spec.allowedListeners.namespaces.from is None` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/to-nosel: spec.parentRef: parent Gateway infra/nosel admits no ListenerSets: its spec.allowedListeners.namespaces is unusable (reported on the Gateway)` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/to-odd: spec.parentRef: parent Gateway infra/odd admits no ListenerSets: its spec.allowedListeners.namespaces is unusable (reported on the Gateway)` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/to-unset: spec.parentRef: parent Gateway infra/unset admits no ListenerSets: spec.allowedListeners.namespaces.from is not set, and defaults to None` + cut,
		},
	},
	{
		name: "routes attach to ListenerSet listeners by sectionName, port, or all",
		in: docs(
			gwAllowing(`{namespaces: {from: Same}}`),
			lset("infra", "ls", `[{name: a, port: 8080, protocol: HTTP}, {name: b, port: 8081, protocol: HTTP}]`),
			toLset("infra", "section", "infra", "sectionName: b"),
			toLset("infra", "port", "infra", "port: 8081"),
			toLset("infra", "section-and-port", "infra", "sectionName: a, port: 8081"),
			toLset("infra", "all", "infra", ""),
			// A sectionName of the Gateway is not one of the ListenerSet.
			toLset("infra", "gateway-section", "infra", "sectionName: http"),
			// A Gateway parentRef reaches the Gateway's own listeners only
			// (GEP-1713), even without sectionName.
			obj("HTTPRoute", "infra", "gateway", `{parentRefs: [{name: gw}]}`),
			// A ListenerSet's listener name is not a Gateway section.
			obj("HTTPRoute", "infra", "gateway-ls-section", `{parentRefs: [{name: gw, sectionName: a}]}`),
			// The kind must be given: by default a parentRef names a Gateway.
			obj("HTTPRoute", "infra", "no-kind", `{parentRefs: [{name: ls}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet infra/ls",
			"Gateway infra/gw#http -> HTTPRoute infra/gateway",
			"ListenerSet infra/ls -> ListenerSet infra/ls#a",
			"ListenerSet infra/ls -> ListenerSet infra/ls#b",
			"ListenerSet infra/ls#a -> HTTPRoute infra/all",
			"ListenerSet infra/ls#b -> HTTPRoute infra/all",
			"ListenerSet infra/ls#b -> HTTPRoute infra/port",
			"ListenerSet infra/ls#b -> HTTPRoute infra/section",
		},
	},
	{
		name: "ListenerSet listeners: allowedRoutes, protocol kinds and hostnames",
		in: docs(
			gwAllowing(`{namespaces: {from: All}}`),
			lset("apps", "ls", `[
				{name: same, port: 80, protocol: HTTP, hostname: "*.foo.com"},
				{name: all, port: 81, protocol: HTTP, hostname: "a.foo.com", allowedRoutes: {namespaces: {from: All}}},
				{name: tcp, port: 9000, protocol: TCP},
				{name: grpc, port: 82, protocol: HTTP, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}]`),
			// Same is the ListenerSet's namespace, not its Gateway's.
			obj("HTTPRoute", "apps", "a", `{parentRefs: [{kind: ListenerSet, name: ls}], hostnames: [a.foo.com]}`),
			obj("HTTPRoute", "infra", "a", `{parentRefs: [{kind: ListenerSet, name: ls, namespace: apps}], hostnames: [a.foo.com]}`),
			obj("HTTPRoute", "apps", "b", `{parentRefs: [{kind: ListenerSet, name: ls}], hostnames: [b.foo.com]}`),
			obj("HTTPRoute", "apps", "bar", `{parentRefs: [{kind: ListenerSet, name: ls}], hostnames: [bar.com]}`),
			obj("TCPRoute", "apps", "t", `{parentRefs: [{kind: ListenerSet, name: ls}]}`),
			obj("GRPCRoute", "apps", "g", `{parentRefs: [{kind: ListenerSet, name: ls}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet apps/ls",
			"ListenerSet apps/ls -> ListenerSet apps/ls#all",
			"ListenerSet apps/ls -> ListenerSet apps/ls#grpc",
			"ListenerSet apps/ls -> ListenerSet apps/ls#same",
			"ListenerSet apps/ls -> ListenerSet apps/ls#tcp",
			"ListenerSet apps/ls#all -> GRPCRoute apps/g", // no hostnames: any listener hostname
			"ListenerSet apps/ls#all -> HTTPRoute apps/a",
			"ListenerSet apps/ls#all -> HTTPRoute infra/a",
			"ListenerSet apps/ls#grpc -> GRPCRoute apps/g",
			"ListenerSet apps/ls#same -> GRPCRoute apps/g",
			"ListenerSet apps/ls#same -> HTTPRoute apps/a",
			"ListenerSet apps/ls#same -> HTTPRoute apps/b",
			"ListenerSet apps/ls#tcp -> TCPRoute apps/t",
		},
	},
	{
		name: "ListenerSet without a usable parent Gateway",
		in: docs(
			gwAllowing(`{namespaces: {from: All}}`),
			// The parentRef's namespace defaults to the ListenerSet's.
			obj("ListenerSet", "apps", "missing-ns", `{parentRef: {name: gw}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "missing", `{parentRef: {name: nope}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "nameless", `{parentRef: {}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "other-kind", `{parentRef: {kind: ListenerSet, name: gw}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "core", `{parentRef: {group: "", name: gw}, listeners: `+lsHTTP+`}`),
			obj("ListenerSet", "infra", "dup", `{parentRef: {name: gw}, listeners: [{name: x, port: 1, protocol: HTTP}, {name: x, port: 2, protocol: HTTP}, {port: 3, protocol: HTTP}]}`),
			obj("HTTPRoute", "infra", "r", `{parentRefs: [{kind: ListenerSet, name: missing}, {kind: ListenerSet, name: gone}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet infra/dup",
			"ListenerSet apps/missing-ns -> ListenerSet apps/missing-ns#extra",
			"ListenerSet infra/core -> ListenerSet infra/core#extra",
			"ListenerSet infra/dup -> ListenerSet infra/dup#x",
			"ListenerSet infra/missing -> ListenerSet infra/missing#extra",
			"ListenerSet infra/nameless -> ListenerSet infra/nameless#extra",
			"ListenerSet infra/other-kind -> ListenerSet infra/other-kind#extra",
		},
		problems: []string{
			`ListenerSet.gateway.networking.k8s.io apps/missing-ns: spec.parentRef: parent Gateway apps/gw does not exist` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/core: spec.parentRef: parentRef names kind "Gateway" of group "", not a Gateway of group "gateway.networking.k8s.io"` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/dup: spec.listeners[1].name: duplicate listener name "x"; this listener is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/dup: spec.listeners[2].name: listener has no name; it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/missing: spec.parentRef: parent Gateway infra/nope does not exist` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/nameless: spec.parentRef.name: parentRef has no name` + cut,
			`ListenerSet.gateway.networking.k8s.io infra/other-kind: spec.parentRef: parentRef names kind "ListenerSet" of group "gateway.networking.k8s.io", not a Gateway of group "gateway.networking.k8s.io"` + cut,
		},
	},
	{
		name: "malformed ListenerSets and allowedListeners",
		in: docs(
			obj("Gateway", "infra", "badfrom", `{gatewayClassName: gc, listeners: [], allowedListeners: {namespaces: {from: 5}}}`),
			obj("Gateway", "infra", "badal", `{gatewayClassName: gc, listeners: [], allowedListeners: [a]}`),
			obj("ListenerSet", "infra", "badparent", `{parentRef: x, listeners: []}`),
			obj("ListenerSet", "infra", "badname", `{parentRef: {name: 7}, listeners: []}`),
			obj("ListenerSet", "infra", "badlisteners", `{parentRef: {name: badfrom}, listeners: x}`),
			obj("ListenerSet", "infra", "badport", `{parentRef: {name: badfrom}, listeners: [{name: a, port: "80"}]}`),
			obj("ListenerSet", "infra", "badsel", `{parentRef: {name: badfrom}, listeners: [{name: a, port: 80, allowedRoutes: {namespaces: {selector: {matchLabels: 3}}}}]}`),
			"apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: nospec, namespace: infra}\nspec: 4",
			// Fields the hierarchy does not read cannot spoil a ListenerSet.
			"apiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: unread, namespace: infra}\nstatus: 1\n"+
				"spec: {parentRef: {name: nope}, listeners: [{name: a, port: 80, protocol: HTTPS, tls: 5}]}",
		),
		edges: []string{
			"ListenerSet infra/unread -> ListenerSet infra/unread#a",
		},
		problems: []string{
			`Gateway.gateway.networking.k8s.io infra/badal: spec.allowedListeners: cannot decode the object (want an object, got a list); it is ignored`,
			`Gateway.gateway.networking.k8s.io infra/badfrom: spec.allowedListeners.namespaces.from: cannot decode the object (want a string, got number 5); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/badlisteners: spec.listeners: cannot decode the object (want a list, got string "x"); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/badname: spec.parentRef.name: cannot decode the object (want a string, got number 7); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/badparent: spec.parentRef: cannot decode the object (want an object, got string "x"); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/badport: spec.listeners[0].port: cannot decode the object (want an integer, got string "80"); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/badsel: spec.listeners[0].allowedRoutes.namespaces.selector.matchLabels: cannot decode the object (want an object, got number 3); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/nospec: spec: cannot decode the object (want an object, got number 4); it is ignored`,
			`ListenerSet.gateway.networking.k8s.io infra/unread: spec.parentRef: parent Gateway infra/nope does not exist` + cut,
		},
	},
}

// xListenerSetCases read XListenerSets (gateway.networking.x-k8s.io,
// v1alpha1, the experimental channel's ListenerSet) as ListenerSets: below
// the Gateway that admits them, their listeners taking the routes whose
// parentRef names them by their own group and kind.
var xListenerSetCases = []addCase{
	{
		name: "XListenerSet admitted, routes by its group and kind",
		in: docs(
			gwAllowing(`{namespaces: {from: All}}`),
			obj("XListenerSet", "apps", "ls", `{parentRef: {name: gw, namespace: infra, kind: Gateway, group: gateway.networking.k8s.io}, listeners: [{name: a, port: 8080, protocol: HTTP}, {name: b, port: 8081, protocol: HTTP}]}`),
			// A ListenerSet of the same name is another object.
			lset("apps", "ls", `[{name: a, port: 9090, protocol: HTTP}]`),
			obj("HTTPRoute", "apps", "x", `{parentRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls}]}`),
			obj("HTTPRoute", "apps", "x-section", `{parentRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls, sectionName: b}]}`),
			obj("HTTPRoute", "apps", "x-port", `{parentRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls, port: 8080}]}`),
			// Without its group, the parentRef names a Gateway API kind
			// XListenerSet, which is not one.
			obj("HTTPRoute", "apps", "x-no-group", `{parentRefs: [{kind: XListenerSet, name: ls}]}`),
			obj("HTTPRoute", "apps", "l", `{parentRefs: [{kind: ListenerSet, name: ls}]}`),
			// A Gateway parentRef reaches the Gateway's own listeners only.
			obj("HTTPRoute", "infra", "gateway", `{parentRefs: [{name: gw}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> ListenerSet apps/ls",
			"Gateway infra/gw -> XListenerSet.gateway.networking.x-k8s.io apps/ls",
			"Gateway infra/gw#http -> HTTPRoute infra/gateway",
			"ListenerSet apps/ls -> ListenerSet apps/ls#a",
			"ListenerSet apps/ls#a -> HTTPRoute apps/l",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls -> XListenerSet.gateway.networking.x-k8s.io apps/ls#a",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls -> XListenerSet.gateway.networking.x-k8s.io apps/ls#b",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls#a -> HTTPRoute apps/x",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls#a -> HTTPRoute apps/x-port",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls#b -> HTTPRoute apps/x",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls#b -> HTTPRoute apps/x-section",
		},
	},
	{
		name: "XListenerSet the Gateway does not admit",
		in: docs(
			gwAllowing(`{namespaces: {from: Same}}`),
			obj("XListenerSet", "apps", "ls", `{parentRef: {name: gw, namespace: infra}, listeners: `+lsHTTP+`}`),
			obj("XListenerSet", "infra", "ls", `{parentRef: {name: gw}, listeners: `+lsHTTP+`}`),
			obj("XListenerSet", "infra", "to-x", `{parentRef: {name: ls, kind: XListenerSet, group: gateway.networking.x-k8s.io}, listeners: `+lsHTTP+`}`),
			obj("HTTPRoute", "apps", "r", `{parentRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls}]}`),
		),
		edges: []string{
			"Gateway infra/gw -> Gateway infra/gw#http",
			"Gateway infra/gw -> XListenerSet.gateway.networking.x-k8s.io infra/ls",
			"XListenerSet.gateway.networking.x-k8s.io apps/ls -> XListenerSet.gateway.networking.x-k8s.io apps/ls#extra",
			"XListenerSet.gateway.networking.x-k8s.io infra/ls -> XListenerSet.gateway.networking.x-k8s.io infra/ls#extra",
			"XListenerSet.gateway.networking.x-k8s.io infra/to-x -> XListenerSet.gateway.networking.x-k8s.io infra/to-x#extra",
		},
		problems: []string{
			`XListenerSet.gateway.networking.x-k8s.io apps/ls: spec.parentRef: parent Gateway infra/gw admits only ListenerSets of its own namespace "infra" (spec.allowedListeners.namespaces.from is Same); the XListenerSet and the routes attached to it reach no Gateway`,
			`XListenerSet.gateway.networking.x-k8s.io infra/to-x: spec.parentRef: parentRef names kind "XListenerSet" of group "gateway.networking.x-k8s.io", not a Gateway of group "gateway.networking.k8s.io"; the XListenerSet and the routes attached to it reach no Gateway`,
		},
	},
}

func TestAddXListenerSets(t *testing.T) {
	for _, tc := range xListenerSetCases {
		t.Run(tc.name, func(t *testing.T) { runAddCase(t, tc) })
	}
}

func TestAddListenerSets(t *testing.T) {
	for _, tc := range listenerSetCases {
		t.Run(tc.name, func(t *testing.T) { runAddCase(t, tc) })
	}
}
