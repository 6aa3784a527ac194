package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// xlsTopo is written after Gloo Gateway's listener-sets translator inputs
// (solo-io/gloo 8d57572e55 projects/gateway2/translator/testutils/inputs/
// listener-sets): Gateway example-gateway (listener http on 8080) admitting
// the XListenerSets of its namespace; XListenerSets foo-listenerset
// (listener foo, 8081) and bar-listenerset (listener bar, 8082); a route
// on each XListenerSet and one on the Gateway; and an XListenerSet of
// another namespace, which the Gateway does not admit.
const xlsTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway, namespace: default}
spec:
  gatewayClassName: example-gateway-class
  listeners: [{name: http, protocol: HTTP, port: 8080}]
  allowedListeners: {namespaces: {from: Same}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: foo-listenerset, namespace: default}
spec:
  parentRef: {name: example-gateway, kind: Gateway, group: gateway.networking.k8s.io}
  listeners: [{name: foo, protocol: HTTP, port: 8081, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: bar-listenerset, namespace: default}
spec:
  parentRef: {name: example-gateway, kind: Gateway, group: gateway.networking.k8s.io}
  listeners: [{name: bar, protocol: HTTP, port: 8082, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: elsewhere, namespace: other}
spec:
  parentRef: {name: example-gateway, namespace: default}
  listeners: [{name: far, protocol: HTTP, port: 8083}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foo-route, namespace: default}
spec:
  parentRefs: [{name: foo-listenerset, group: gateway.networking.x-k8s.io, kind: XListenerSet}]
  hostnames: [foo.example.com]
  rules: [{name: login, matches: [{path: {type: PathPrefix, value: /login}}], backendRefs: [{name: foo-svc, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bar-route, namespace: default}
spec:
  parentRefs: [{name: bar-listenerset, group: gateway.networking.x-k8s.io, kind: XListenerSet}]
  hostnames: [bar.example.com]
  rules: [{name: all, backendRefs: [{name: bar-svc, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: example-route, namespace: default}
spec:
  parentRefs: [{name: example-gateway}]
  hostnames: [example.com]
  rules: [{name: all, backendRefs: [{name: example-svc, port: 80}]}]
`

const (
	xlsGwRef  = `{group: gateway.networking.k8s.io, kind: Gateway, name: example-gateway}`
	xlsFooRef = `{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: foo-listenerset}`
)

// xlsListener is listener l of XListenerSet ns/name.
func xlsListener(ns, name, l string) topology.Ref {
	return topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: ns, Name: name, SectionName: l}
}

// xlsGwListener is listener l of Gateway example-gateway.
func xlsGwListener(l string) topology.Ref {
	return topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "example-gateway", SectionName: l}
}

// Gloo Gateway's VirtualHostOptions at an XListenerSet's listener: those
// on the listener first, then those on the XListenerSet, then those on
// the Gateway, each top-level option taken whole from the first that sets
// it. The Gateway's reach the listeners of every XListenerSet it admits,
// not those of one it does not admit.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// utils/plugin_utils.go (GetPrioritizedListenerPolicies: ListenerSet with
// sectionName, ListenerSet, Gateway with sectionName, Gateway, older first
// in each), virtualhostoptions/virtualhost_options_plugin.go
// (ApplyListenerPlugin shallow-merges them in that order),
// projects/gateway2/query/listenersets.go (allowedListenerSets: the
// Gateway's allowedListeners, None by default).
func TestGlooVirtualHostOptionsReachXListenerSetListeners(t *testing.T) {
	c := crd("gateway.solo.io", "VirtualHostOption", "virtualhostoptions")
	res := compute(t, engine.Options{}, c, xlsTopo,
		pol(glooV, "VirtualHostOption", "gw", 0, `targetRefs: [`+xlsGwRef+`]
options:
  cors: {allowOrigin: [gw.example]}
  headerManipulation: {requestHeadersToRemove: [x-gw]}
  retries: {numRetries: 1}`),
		pol(glooV, "VirtualHostOption", "foo-set", 1, `targetRefs: [`+xlsFooRef+`]
options:
  cors: {allowOrigin: [set.example]}
  headerManipulation: {requestHeadersToRemove: [x-set]}`),
		pol(glooV, "VirtualHostOption", "foo-listener", 2, `targetRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: foo-listenerset, sectionName: foo}]
options:
  cors: {allowOrigin: [listener.example]}`))
	want(t, "foo-listenerset#foo", effective(t, res, "VirtualHostOption", xlsListener("default", "foo-listenerset", "foo")),
		[]string{`{"options":{"cors":{"allowOrigin":["listener.example"]},"headerManipulation":{"requestHeadersToRemove":["x-set"]},"retries":{"numRetries":1}}}`})
	want(t, "bar-listenerset#bar", effective(t, res, "VirtualHostOption", xlsListener("default", "bar-listenerset", "bar")),
		[]string{`{"options":{"cors":{"allowOrigin":["gw.example"]},"headerManipulation":{"requestHeadersToRemove":["x-gw"]},"retries":{"numRetries":1}}}`})
	want(t, "Gateway#http", effective(t, res, "VirtualHostOption", xlsGwListener("http")),
		[]string{`{"options":{"cors":{"allowOrigin":["gw.example"]},"headerManipulation":{"requestHeadersToRemove":["x-gw"]},"retries":{"numRetries":1}}}`})
	// The XListenerSet the Gateway does not admit gets nothing of it.
	want(t, "other/elsewhere#far", effective(t, res, "VirtualHostOption", xlsListener("other", "elsewhere", "far")), []string(nil))
	want(t, "foo-listener", status(t, res, "foo-listener", "Programmed"), "True/Programmed")
	want(t, "foo-set", status(t, res, "foo-set", "Programmed"), "True/PartiallyProgrammed")
	want(t, "gw", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
}

// Gloo Gateway's ListenerOptions (and HttpListenerOptions): at a listener
// the first option in the same order is used whole; of two at one target,
// the older.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// listeneroptions/listener_options_plugin.go and httplisteneroptions/
// httplistener_options_plugin.go (ApplyListenerPlugin: "use the first
// option (highest in priority)"), their query.go (the order of
// GetPrioritizedListenerPolicies).
func TestGlooListenerOptionsAtXListenerSetListeners(t *testing.T) {
	for _, kind := range []string{"ListenerOption", "HttpListenerOption"} {
		t.Run(kind, func(t *testing.T) {
			c := crd("gateway.solo.io", kind, strings.ToLower(kind)+"s")
			res := compute(t, engine.Options{}, c, xlsTopo,
				pol(glooV, kind, "gw", 0, `targetRefs: [`+xlsGwRef+`]
options: {perConnectionBufferLimitBytes: 1024, socketOptions: [{level: 1}]}`),
				pol(glooV, kind, "foo-set", 1, `targetRefs: [`+xlsFooRef+`]
options: {perConnectionBufferLimitBytes: 2048}`),
				pol(glooV, kind, "foo-set-newer", 2, `targetRefs: [`+xlsFooRef+`]
options: {perConnectionBufferLimitBytes: 4096}`))
			want(t, "foo-listenerset#foo", effective(t, res, kind, xlsListener("default", "foo-listenerset", "foo")),
				[]string{`{"options":{"perConnectionBufferLimitBytes":2048}}`})
			want(t, "bar-listenerset#bar", effective(t, res, kind, xlsListener("default", "bar-listenerset", "bar")),
				[]string{`{"options":{"perConnectionBufferLimitBytes":1024,"socketOptions":[{"level":1}]}}`})
			want(t, "Gateway#http", effective(t, res, kind, xlsGwListener("http")),
				[]string{`{"options":{"perConnectionBufferLimitBytes":1024,"socketOptions":[{"level":1}]}}`})
			want(t, "foo-set-newer", status(t, res, "foo-set-newer", "Accepted"), "False/Conflicted")
			want(t, "foo-set", status(t, res, "foo-set", "Accepted"), "True/Accepted")
			want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
		})
	}
}

// kgateway's ListenerPolicy on a Gateway reaches the listeners of the
// ListenerSets and XListenerSets it admits (kgateway's golden
// listener-policy/gateway-wide-mtls-listenerset.yaml records the Gateway's
// policy in the merge metadata of the ListenerSet's Envoy listener): their
// listeners are effective targets of it, the policy of a Gateway listener
// does not reach them. Its status lists those ListenerSets too (each
// listener's PolicyAncestorRef: its Gateway or ListenerSet).
// Source: kgateway-dev/kgateway pkg/krtcollections/policy.go @ 6026ee9847ca
// (GatewaysForEnvoyTransformationFunc: the Gateway's attached policies
// apply to every listener, those of the allowed ListenerSets appended;
// a ListenerSet listener's own policies are its section's and its
// ListenerSet's), translator golden
// listener-policy/gateway-wide-mtls-listenerset.yaml @ d7ab0702bdb8
// (status.policies: ancestors Gateway and ListenerSet), policy.go @
// 0412311c375e (ir.Listener PolicyAncestorRef).
func TestKgatewayListenerPolicyReachesListenerSetListeners(t *testing.T) {
	topo := xlsTopo + `---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls-1, namespace: default}
spec:
  parentRef: {name: example-gateway}
  listeners: [{name: ls-http, protocol: HTTP, port: 8444}]
`
	res := compute(t, engine.Options{}, kgatewayListenerPolicyCRD(), topo,
		pol(kgwV, "ListenerPolicy", "gw", 0, `targetRefs: [`+xlsGwRef+`]
default: {perConnectionBufferLimitBytes: 1024}`),
		pol(kgwV, "ListenerPolicy", "http", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: example-gateway, sectionName: http}]
default: {perConnectionBufferLimitBytes: 2048}`))
	for _, l := range []topology.Ref{
		xlsListener("default", "foo-listenerset", "foo"),
		{Group: topology.GatewayGroup, Kind: "ListenerSet", Namespace: "default", Name: "ls-1", SectionName: "ls-http"},
	} {
		want(t, l.String(), effective(t, res, "ListenerPolicy", l), []string{`{"perConnectionBufferLimitBytes":1024}`})
	}
	want(t, "Gateway#http", effective(t, res, "ListenerPolicy", xlsGwListener("http")), []string{`{"perConnectionBufferLimitBytes":2048}`})
	// Its status names the parent of every listener it reaches: the
	// Gateway and each ListenerSet the Gateway admits (golden: ancestors
	// Gateway example-gateway and ListenerSet ls-1), not one it does not
	// admit; a policy on a Gateway listener names the Gateway alone.
	want(t, "gw ancestors", ancestorsOf(t, res, "gw"), []string{
		"Gateway.gateway.networking.k8s.io default/example-gateway=Accepted",
		"ListenerSet.gateway.networking.k8s.io default/ls-1=Accepted",
		"XListenerSet.gateway.networking.x-k8s.io default/bar-listenerset=Accepted",
		"XListenerSet.gateway.networking.x-k8s.io default/foo-listenerset=Accepted",
	})
	want(t, "http ancestors", ancestorsOf(t, res, "http"), []string{"Gateway.gateway.networking.k8s.io default/example-gateway=Accepted"})
}

// kgateway's TrafficPolicy on a Gateway reaches the routes attached to the
// listeners of an XListenerSet it admits; one on the XListenerSet comes
// before it there, field by field.
// Source: kgateway-dev/kgateway pkg/krtcollections/policy.go @ 0412311c375e
// (XListenerSets read: a listener's attached policies are its section's
// and its XListenerSet's, the Gateway's apply to every listener);
// wellknown/gwapi.go @ 128558ea2bed (XListenerSet kept besides
// ListenerSet).
func TestKgatewayTrafficPolicyThroughXListenerSet(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, xlsTopo,
		pol(kgwV, "TrafficPolicy", "gw", 0, `targetRefs: [`+xlsGwRef+`]
timeouts: {request: 10s}
cors: {allowOrigins: [gw.example]}`),
		pol(kgwV, "TrafficPolicy", "foo-set", 1, `targetRefs: [`+xlsFooRef+`]
cors: {allowOrigins: [set.example]}`))
	fooRule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "foo-route", SectionName: "login"}
	barRule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "bar-route", SectionName: "all"}
	want(t, "foo-route", effective(t, res, "TrafficPolicy", fooRule),
		[]string{`{"cors":{"allowOrigins":["set.example"]},"timeouts":{"request":"10s"}}`})
	want(t, "bar-route", effective(t, res, "TrafficPolicy", barRule),
		[]string{`{"cors":{"allowOrigins":["gw.example"]},"timeouts":{"request":"10s"}}`})
}

// Under Gloo Gateway's Gateways, a route whose parentRef names the
// Gateway without sectionName is attached to the listeners of its
// XListenerSets too (Gloo's golden listener-sets-proxy.yaml serves
// example-route on ports 8081 and 8082): a policy on an XListenerSet
// reaches it there. Under a kgateway Gateway, or one of a class attache
// does not see, the route stays on the Gateway's own listeners (Gateway
// API's rule).
// Source: solo-io/gloo 8d57572e55 projects/gateway2/query/query.go
// (isParentRefForResource), translator/testutils/outputs/
// listener-sets-proxy.yaml; kgateway pkg/kgateway/query/query.go
// (isParentRefForResource: the ListenerSet's own group, kind and name).
func TestGatewayRoutesOnXListenerSetsUnderGloo(t *testing.T) {
	c := labelledCRD("policies.example.com", "ColorPolicy", "colorpolicies", "Inherited")
	c = strings.Replace(c, "labels: {gateway.networking.k8s.io/policy: Inherited}}",
		"labels: {gateway.networking.k8s.io/policy: Inherited}, annotations: {attache.dev/hierarchy: \"Gateway,XListenerSet.gateway.networking.x-k8s.io,HTTPRoute\"}}", 1)
	p := pol("policies.example.com/v1", "ColorPolicy", "foo-set", 0, "targetRefs: ["+xlsFooRef+"]\ncolor: blue")
	route := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "example-route"}
	for _, tc := range []struct {
		name, class string
		want        []string
	}{
		{"Gloo Gateway", class("example-gateway-class", "solo.io/gloo-gateway"), []string{`{"color":"blue"}`}},
		{"kgateway", class("example-gateway-class", "kgateway.dev/kgateway"), nil},
		{"class not given", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := []string{c, xlsTopo, p}
			if tc.class != "" {
				docs = append(docs, tc.class)
			}
			res := compute(t, engine.Options{}, docs...)
			want(t, "example-route", effective(t, res, "ColorPolicy", route), tc.want)
			through := false
			for _, path := range contextPaths(res, "ColorPolicy", route) {
				through = through || strings.Contains(path, "foo-listenerset>foo-listenerset#foo>example-route")
			}
			want(t, "a context through foo-listenerset#foo", through, tc.want != nil)
		})
	}
}

// class is GatewayClass name of controller ctl.
func class(name, ctl string) string {
	return "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: " + name + "}\nspec: {controllerName: " + ctl + "}\n"
}

// xlsNamedTopo is xlsTopo with the Gateway's listener named foo, as
// foo-listenerset's.
var xlsNamedTopo = strings.Replace(xlsTopo, "listeners: [{name: http, protocol: HTTP, port: 8080}]", "listeners: [{name: foo, protocol: HTTP, port: 8080}]", 1)

// Gloo Gateway matches a Gateway option's sectionName against the names
// of every listener it translates, its XListenerSets' too: at
// foo-listenerset's listener foo the VirtualHostOptions apply in the order
// XListenerSet listener, XListenerSet, Gateway listener foo, Gateway, each
// top-level option from the first that sets it; the Gateway's listener
// foo takes its own and the Gateway's; bar-listenerset's listener bar
// (another name) the Gateway's only. ListenerOptions: the first in that
// order, whole. An Incremental agrees as the Gateway listener's policy
// comes and goes.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// utils/plugin_utils.go (GetPrioritizedListenerPolicies: "we have a
// section name, now check if it matches the specific listener provided",
// the listener's name only), utils/testutils/plugin_test_utils.go
// ("Attach policy to listenerSet and gw with and without section name":
// ListenerSet section, ListenerSet, Gateway section, Gateway).
func TestGlooGatewaySectionOptionsAtXListenerSetListeners(t *testing.T) {
	gwFoo := `{group: gateway.networking.k8s.io, kind: Gateway, name: example-gateway, sectionName: foo}`
	setFoo := `{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: foo-listenerset, sectionName: foo}`
	c := crd("gateway.solo.io", "VirtualHostOption", "virtualhostoptions")
	docs := []string{c, xlsNamedTopo,
		pol(glooV, "VirtualHostOption", "gw", 0, `targetRefs: [`+xlsGwRef+`]
options: {cors: {allowOrigin: [gw]}, headerManipulation: {requestHeadersToRemove: [gw]}, retries: {numRetries: 1}, timeout: 1s}`),
		pol(glooV, "VirtualHostOption", "gw-foo", 1, `targetRefs: [`+gwFoo+`]
options: {cors: {allowOrigin: [gw-foo]}, headerManipulation: {requestHeadersToRemove: [gw-foo]}, retries: {numRetries: 2}}`),
		pol(glooV, "VirtualHostOption", "set", 2, `targetRefs: [`+xlsFooRef+`]
options: {cors: {allowOrigin: [set]}, headerManipulation: {requestHeadersToRemove: [set]}}`),
		pol(glooV, "VirtualHostOption", "set-foo", 3, `targetRefs: [`+setFoo+`]
options: {cors: {allowOrigin: [set-foo]}}`),
	}
	check := func(t *testing.T, res *engine.Result, withGwFoo bool) {
		t.Helper()
		fooWant := `{"options":{"cors":{"allowOrigin":["set-foo"]},"headerManipulation":{"requestHeadersToRemove":["set"]},"retries":{"numRetries":2},"timeout":"1s"}}`
		gwWant := `{"options":{"cors":{"allowOrigin":["gw-foo"]},"headerManipulation":{"requestHeadersToRemove":["gw-foo"]},"retries":{"numRetries":2},"timeout":"1s"}}`
		if !withGwFoo {
			fooWant = `{"options":{"cors":{"allowOrigin":["set-foo"]},"headerManipulation":{"requestHeadersToRemove":["set"]},"retries":{"numRetries":1},"timeout":"1s"}}`
			gwWant = `{"options":{"cors":{"allowOrigin":["gw"]},"headerManipulation":{"requestHeadersToRemove":["gw"]},"retries":{"numRetries":1},"timeout":"1s"}}`
		}
		want(t, "foo-listenerset#foo", effective(t, res, "VirtualHostOption", xlsListener("default", "foo-listenerset", "foo")), []string{fooWant})
		want(t, "Gateway#foo", effective(t, res, "VirtualHostOption", xlsGwListener("foo")), []string{gwWant})
		want(t, "bar-listenerset#bar", effective(t, res, "VirtualHostOption", xlsListener("default", "bar-listenerset", "bar")),
			[]string{`{"options":{"cors":{"allowOrigin":["gw"]},"headerManipulation":{"requestHeadersToRemove":["gw"]},"retries":{"numRetries":1},"timeout":"1s"}}`})
	}
	res := compute(t, engine.Options{}, docs...)
	check(t, res, true)
	want(t, "gw-foo", status(t, res, "gw-foo", "Programmed"), "True/PartiallyProgrammed")
	want(t, "gw-foo affects", policyStatusOf(t, res, "gw-foo").Affects, []topology.Ref{xlsGwListener("foo"), xlsListener("default", "foo-listenerset", "foo")})

	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	without := append(append([]string(nil), docs[:3]...), docs[4:]...)
	got := in.Compute(decodeDocs(t, without...))
	if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, without...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	check(t, got, false)
	got = in.Compute(decodeDocs(t, docs...))
	if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, docs...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	check(t, got, true)

	// ListenerOptions: the first in that order is used whole.
	lc := crd("gateway.solo.io", "ListenerOption", "listeneroptions")
	res = compute(t, engine.Options{}, lc, xlsNamedTopo,
		pol(glooV, "ListenerOption", "gw", 0, `targetRefs: [`+xlsGwRef+`]
options: {perConnectionBufferLimitBytes: 1024}`),
		pol(glooV, "ListenerOption", "gw-foo", 1, `targetRefs: [`+gwFoo+`]
options: {perConnectionBufferLimitBytes: 2048}`))
	want(t, "ListenerOption foo-listenerset#foo", effective(t, res, "ListenerOption", xlsListener("default", "foo-listenerset", "foo")), []string{`{"options":{"perConnectionBufferLimitBytes":2048}}`})
	want(t, "ListenerOption bar-listenerset#bar", effective(t, res, "ListenerOption", xlsListener("default", "bar-listenerset", "bar")), []string{`{"options":{"perConnectionBufferLimitBytes":1024}}`})
}

// kgateway's golden gateway-wide-mtls-listenerset, in attache's terms: a
// Gateway-wide ListenerPolicy's clientCertificateValidation applies at the
// Gateway's own listener, not at the listener of its ListenerSet, which
// takes its other fields; its status names the Gateway and the
// ListenerSet. An Incremental agrees.
// Source: kgateway-dev/kgateway pkg/kgateway/translator/gateway/testutils/
// inputs/listener-policy/gateway-wide-mtls-listenerset.yaml and its output
// @ d7ab0702bdb8 (no validationContext on ls-https; ancestors
// example-gateway and ls-1), pkg/kgateway/translator/listener/
// gateway_listener_translator.go @ d7ab0702bdb8 (translateTLSConfig:
// Gateway-level policies "ONLY for the Gateway's own listeners").
func TestKgatewayGatewayWideClientValidationNotInListenerSets(t *testing.T) {
	topo := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway, namespace: default}
spec:
  gatewayClassName: kgateway
  listeners: [{name: gw-https, protocol: HTTPS, port: 8443, hostname: gw.example.com, tls: {mode: Terminate, certificateRefs: [{name: server-cert}]}}]
  allowedListeners: {namespaces: {from: All}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls-1, namespace: ls-ns}
spec:
  parentRef: {name: example-gateway, namespace: default, kind: Gateway, group: gateway.networking.k8s.io}
  listeners: [{name: ls-https, protocol: HTTPS, port: 8444, hostname: ls.example.com, tls: {mode: Terminate, certificateRefs: [{name: server-cert}]}}]
`
	docs := []string{kgatewayListenerPolicyCRD(), topo,
		pol(kgwV, "ListenerPolicy", "gateway-wide-mtls", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: example-gateway}]
default:
  perConnectionBufferLimitBytes: 1024
  clientCertificateValidation: {mode: Optional, caCertificateRefs: [{name: shared-ca-cert, kind: Secret, group: ""}]}`)}
	ls := topology.Ref{Group: topology.GatewayGroup, Kind: "ListenerSet", Namespace: "ls-ns", Name: "ls-1", SectionName: "ls-https"}
	gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "example-gateway", SectionName: "gw-https"}
	for _, res := range []*engine.Result{compute(t, engine.Options{}, docs...), engine.NewIncremental(engine.Options{}).Compute(decodeDocs(t, docs...))} {
		want(t, "gw-https", effective(t, res, "ListenerPolicy", gw),
			[]string{`{"clientCertificateValidation":{"caCertificateRefs":[{"group":"","kind":"Secret","name":"shared-ca-cert"}],"mode":"Optional"},"perConnectionBufferLimitBytes":1024}`})
		want(t, "ls-https", effective(t, res, "ListenerPolicy", ls), []string{`{"perConnectionBufferLimitBytes":1024}`})
		want(t, "ancestors", ancestorsOf(t, res, "gateway-wide-mtls"), []string{
			"Gateway.gateway.networking.k8s.io default/example-gateway=Accepted",
			"ListenerSet.gateway.networking.k8s.io ls-ns/ls-1=Accepted",
		})
		want(t, "Programmed", status(t, res, "gateway-wide-mtls", "Programmed"), "True/Programmed")
	}
	// A CRD annotation naming another path changes what is left out.
	c := strings.Replace(kgatewayListenerPolicyCRD(), "labels: {gateway.networking.k8s.io/policy: Direct}}",
		"labels: {gateway.networking.k8s.io/policy: Direct}, annotations: {attache.dev/not-in-listener-sets: default.perConnectionBufferLimitBytes}}", 1)
	res := compute(t, engine.Options{}, append([]string{c}, docs[1:]...)...)
	want(t, "ls-https, buffer left out", effective(t, res, "ListenerPolicy", ls),
		[]string{`{"clientCertificateValidation":{"caCertificateRefs":[{"group":"","kind":"Secret","name":"shared-ca-cert"}],"mode":"Optional"}}`})
}
