package routing_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// meshCRDs are Istio's AuthorizationPolicy and Telemetry kinds (their
// profiles apply when the CRDs are among the objects).
const meshCRDs = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: authorizationpolicies.security.istio.io}
spec:
  group: security.istio.io
  scope: Namespaced
  names: {kind: AuthorizationPolicy, plural: authorizationpolicies}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: telemetries.telemetry.istio.io}
spec:
  group: telemetry.istio.io
  scope: Namespaced
  names: {kind: Telemetry, plural: telemetries}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: v1
kind: Namespace
metadata: {name: istio-system}
`

// bookinfo: namespace bookinfo uses waypoint bookinfo/waypoint; reviews
// has a GAMMA route sending jason to v2 and the others to v1; details
// has no route and a canary waypoint taking 10% of its connections;
// ratings opts out of the waypoint. AuthorizationPolicies on the
// waypoint (GET only), on reviews (no /admin) and on the canary (deny
// all); a mesh-wide Telemetry and one on reviews.
const bookinfo = meshCRDs + `
---
apiVersion: v1
kind: Namespace
metadata: {name: bookinfo, labels: {istio.io/use-waypoint: waypoint}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: bookinfo}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: canary, namespace: bookinfo}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: bookinfo}
spec: {ports: [{name: http, port: 9080}, {name: tcp-raw, port: 9090}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews-v1, namespace: bookinfo}
spec: {ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata: {name: reviews-v2, namespace: bookinfo}
spec: {ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata:
  name: details
  namespace: bookinfo
  labels: {istio.io/use-waypoint-canary: canary}
  annotations: {istio.io/use-waypoint-canary-weight: "10"}
spec: {ports: [{name: http, port: 9080}]}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: bookinfo, labels: {istio.io/use-waypoint: none}}
spec: {ports: [{port: 9080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reviews, namespace: bookinfo, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
  rules:
  - name: v2
    matches: [{headers: [{name: end-user, value: jason}]}]
    backendRefs: [{name: reviews-v2, port: 9080}]
  - name: v1
    backendRefs: [{name: reviews-v1, port: 9080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ratings, namespace: bookinfo}
spec:
  parentRefs: [{group: "", kind: Service, name: ratings}]
  rules: [{backendRefs: [{name: reviews-v1, port: 9080}]}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: get-only, namespace: bookinfo}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
  action: ALLOW
  rules: [{to: [{operation: {methods: [GET]}}]}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: no-admin, namespace: bookinfo}
spec:
  targetRefs: [{group: "", kind: Service, name: reviews}]
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: canary-closed, namespace: bookinfo}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: canary}]
  action: DENY
  rules: [{}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: mesh-default, namespace: istio-system, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  tracing: [{providers: [{name: zipkin}], randomSamplingPercentage: 1}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: reviews-logs, namespace: bookinfo, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  targetRefs: [{kind: Service, group: "", name: reviews}]
  accessLogging: [{providers: [{name: envoy}]}]
`

func meshTrace(t testing.TB, ix *routing.Index, pols *routing.Policies, url, ns string, headers ...string) *routing.RequestTrace {
	t.Helper()
	tr, err := meshTraceErr(ix, pols, url, ns, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func meshTraceErr(ix *routing.Index, pols *routing.Policies, url, ns string, headers ...string) (*routing.RequestTrace, error) {
	req, err := routing.ParseRequest(url, "", headers)
	if err != nil {
		return nil, err
	}
	tr, err := ix.TraceMesh(req, ns)
	if err != nil {
		return nil, err
	}
	pols.AddPolicies(tr)
	return tr, nil
}

// backendNames are an outcome's backends, as NS/NAME:PORT.
func backendNames(o routing.Outcome) []string {
	var out []string
	for _, b := range o.Backends {
		out = append(out, b.Ref.Namespace+"/"+b.Ref.Name+":"+strconv.Itoa(int(b.Port)))
	}
	return out
}

// policyKeys names an outcome's effective policies as
// Kind:target=policy+policy, the policies in their stack's order.
func policyKeys(o routing.Outcome) []string {
	var out []string
	for _, ep := range o.EffectivePolicies {
		var pols []string
		for _, s := range ep.Sources.Policies {
			pols = append(pols, s.Policy.Name)
		}
		kind, _, _ := strings.Cut(ep.PolicyKind, ".")
		out = append(out, kind+":"+ep.Target.Name+"="+strings.Join(pols, "+"))
	}
	return out
}

// A request to a Service bound to a waypoint goes through it: the GAMMA
// route whose parentRef is the Service takes it by its rules' matches
// (hostnames are not used: the route has none, and the host is the
// Service's), its backends receive it, and the policies on that path are
// those istiod applies at the waypoint for the Service's chain: the
// AuthorizationPolicies on the Service and on the waypoint, decided for
// the request, and the Telemetry layered there.
// Source: istio/istio @ 86c9f01f pilot/pkg/networking/core/listener_waypoint.go
// (buildWaypointInboundHTTPRouteConfig: the mesh VirtualServices of the
// Service's host), pilot/pkg/config/kube/gateway/route_collections.go
// (HTTPRouteCollection: a mesh parent's VirtualService host is the
// Service's name, the route's hostnames are not read).
func TestMeshBoundServiceRoute(t *testing.T) {
	ix, pols := fixture(t, bookinfo)
	tr := meshTrace(t, ix, pols, "http://reviews.bookinfo:9080/reviews/1", "default", "end-user: jason")
	if m := tr.Mesh; m == nil || m.Service != (topology.Ref{Kind: "Service", Namespace: "bookinfo", Name: "reviews"}) || m.Port != 9080 || m.PortName != "http" || m.Protocol != "HTTP" || m.Unbound != "" {
		t.Fatalf("mesh %+v", tr.Mesh)
	}
	if len(tr.Outcomes) != 1 {
		t.Fatalf("%d outcomes, want 1 (no canary)", len(tr.Outcomes))
	}
	o := tr.Outcomes[0]
	if o.Gateway.Name != "waypoint" || o.Waypoint == nil || *o.Waypoint != (routing.WaypointUse{Role: "primary", Percent: 100}) {
		t.Errorf("waypoint %v %+v", o.Gateway, o.Waypoint)
	}
	if o.Route == nil || o.Route.Name != "reviews" || o.Rule != "v2" || o.Result != routing.ResultForwarded {
		t.Errorf("route %v rule %q result %s", o.Route, o.Rule, o.Result)
	}
	want(t, "backends", backendNames(o), []string{"bookinfo/reviews-v2:9080"})
	want(t, "path", refNames(o.Path), []string{"GatewayClass istio-waypoint", "Gateway bookinfo/waypoint", "Service bookinfo/reviews",
		"HTTPRoute bookinfo/reviews", "HTTPRoute bookinfo/reviews#v2", "Service bookinfo/reviews-v2", "Service bookinfo/reviews-v2#http"})
	want(t, "policies", policyKeys(o), []string{"AuthorizationPolicy:reviews=get-only+no-admin", "Telemetry:reviews=mesh-default+reviews-logs"})
	if a := o.Authorization; a == nil || a.Verdict != "allow" {
		t.Errorf("authorization %+v, want allow (GET, not /admin)", a)
	}
	// The other rule for anyone else; the DENY on the Service for /admin.
	o = meshTrace(t, ix, pols, "http://reviews.bookinfo.svc.cluster.local:9080/admin/x", "default").Outcomes[0]
	if o.Rule != "v1" || o.Authorization == nil || o.Authorization.Verdict != "deny" || !strings.Contains(o.Authorization.Reason, "no-admin") {
		t.Errorf("/admin: rule %q authorization %+v", o.Rule, o.Authorization)
	}
	// The rule that did not match says why.
	tr = meshTrace(t, ix, pols, "http://reviews.bookinfo.svc:9080/", "default")
	if len(tr.NotMatched) != 0 {
		t.Errorf("notMatched %+v: the winning route is not listed", tr.NotMatched)
	}
	// Backend Services' own policies (bound to the same waypoint) are not
	// applied on this hop: the waypoint sends to their endpoints.
	for _, k := range policyKeys(tr.Outcomes[0]) {
		if strings.Contains(k, "reviews-v1") {
			t.Errorf("policy of the backend applied at the waypoint: %s", k)
		}
	}
}

// refNames renders refs as Kind ns/name#section.
func refNames(rs []topology.Ref) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Short()
	}
	return out
}

func want(t *testing.T, what string, got, w []string) {
	t.Helper()
	if !slices.Equal(got, w) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, w)
	}
}

// A Service with no route: the waypoint sends the request to the Service
// itself, and the Service's policies at the waypoint apply. Its canary
// waypoint takes its share of the connections with the canary's policies
// (a DENY there), not the primary's. A Service bound to no waypoint: no
// proxy routes it (its route is listed as not applied) and no L7 policy
// applies. A TCP port: no HTTP routing at the waypoint.
// Source: buildWaypointInboundHTTPRouteConfig (no VirtualService routes:
// buildSidecarInboundHTTPRouteConfig, the Service's own cluster);
// pilot/pkg/serviceregistry/ambient/waypoints.go buildWeightedWaypoints
// (primary 100-weight, canary weight); buildWaypointInternal (a TCP port's
// chain is a TCP proxy).
func TestMeshNoRouteCanaryUnboundTCP(t *testing.T) {
	ix, pols := fixture(t, bookinfo)
	tr := meshTrace(t, ix, pols, "http://details:9080/d", "bookinfo")
	if len(tr.Outcomes) != 2 {
		t.Fatalf("%d outcomes, want the primary and the canary", len(tr.Outcomes))
	}
	for i, w := range []struct {
		gw, role string
		percent  int
		policies []string
		verdict  string
	}{
		{"waypoint", "primary", 90, []string{"AuthorizationPolicy:details=get-only", "Telemetry:details=mesh-default"}, "allow"},
		{"canary", "canary", 10, []string{"AuthorizationPolicy:details=canary-closed"}, "deny"},
	} {
		o := tr.Outcomes[i]
		if o.Gateway.Name != w.gw || o.Waypoint == nil || o.Waypoint.Role != w.role || o.Waypoint.Percent != w.percent {
			t.Errorf("outcome %d: %v %+v, want %s %s %d%%", i, o.Gateway, o.Waypoint, w.gw, w.role, w.percent)
		}
		if o.Route != nil || o.Result != routing.ResultForwarded {
			t.Errorf("outcome %d: route %v result %s, want the Service itself", i, o.Route, o.Result)
		}
		want(t, w.gw+" backends", backendNames(o), []string{"bookinfo/details:9080"})
		want(t, w.gw+" policies", policyKeys(o), w.policies)
		if o.Authorization == nil || o.Authorization.Verdict != w.verdict {
			t.Errorf("%s: authorization %+v, want %s", w.gw, o.Authorization, w.verdict)
		}
	}
	if n := strings.Join(tr.Outcomes[1].Notes, "; "); !strings.Contains(n, "Telemetry at a canary waypoint is not modelled") {
		t.Errorf("canary notes %q", n)
	}

	tr = meshTrace(t, ix, pols, "http://ratings.bookinfo:9080/", "default")
	o := tr.Outcomes[0]
	if o.Gateway != (topology.Ref{}) || !strings.Contains(tr.Mesh.Unbound, "istio.io/use-waypoint is none") || o.Result != routing.ResultForwarded ||
		len(o.EffectivePolicies) != 0 || o.Authorization != nil {
		t.Errorf("unbound: gateway %v unbound %q result %s policies %v authz %+v", o.Gateway, tr.Mesh.Unbound, o.Result, policyKeys(o), o.Authorization)
	}
	want(t, "unbound backends", backendNames(o), []string{"bookinfo/ratings:9080"})
	if len(tr.NotMatched) != 1 || tr.NotMatched[0].Route.Name != "ratings" || !strings.Contains(tr.NotMatched[0].Reason, "bound to no waypoint") {
		t.Errorf("unbound notMatched %+v", tr.NotMatched)
	}
	if tr.Mesh.Protocol != "" {
		t.Errorf("an unnamed port's protocol %q, want none (detected)", tr.Mesh.Protocol)
	}

	tr = meshTrace(t, ix, pols, "http://reviews.bookinfo:9090/", "default")
	o = tr.Outcomes[0]
	if tr.Mesh.Protocol != "TCP" || o.Route != nil || o.Authorization != nil || !strings.Contains(strings.Join(o.Notes, ";"), "port 9090 is TCP") {
		t.Errorf("TCP port: protocol %q route %v authz %+v notes %q", tr.Mesh.Protocol, o.Route, o.Authorization, o.Notes)
	}
	want(t, "TCP port backends", backendNames(o), []string{"bookinfo/reviews:9090"})
	if len(tr.NotMatched) != 1 || !strings.Contains(tr.NotMatched[0].Reason, "does not route its connections as HTTP") {
		t.Errorf("TCP port notMatched %+v", tr.NotMatched)
	}
}

// Bad mesh requests are errors naming what is wrong.
func TestMeshRequestErrors(t *testing.T) {
	ix, pols := fixture(t, bookinfo)
	for url, w := range map[string]string{
		"http://reviewz.bookinfo:9080/":        "names Service bookinfo/reviewz, which is not among the objects (Services of namespace bookinfo: details, ratings, reviews, reviews-v1, reviews-v2)",
		"http://reviews.bookinfo/":             "Service bookinfo/reviews has no port 80 (its ports: 9080, 9090)",
		"http://10.0.0.1:9080/":                "is an IP address",
		"http://reviews.bookinfo.example.com/": "does not name a Service",
		"https://reviews.bookinfo:9080/":       "does not terminate the TLS",
		"http://reviews:9080/":                 "names Service default/reviews, which is not among the objects (namespace default has no Services",
	} {
		_, err := meshTraceErr(ix, pols, url, "default")
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %v, want one saying %q", url, err, w)
		}
		var me *routing.MeshHostError
		if err != nil && !strings.HasPrefix(url, "https") && !errors.As(err, &me) {
			t.Errorf("%s: error %T, want a MeshHostError", url, err)
		}
	}
}

// istiodOrder: Service shop/cart bound to waypoint infra/waypoint (which
// admits every namespace). Routes of shop, of the waypoint's namespace
// infra and of a client namespace.
var istiodOrder = meshCRDs + `
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: infra}
spec:
  gatewayClassName: istio-waypoint
  listeners: [{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: v1
kind: Service
metadata: {name: cart, namespace: shop, labels: {istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: infra}}
spec: {ports: [{name: http, port: 80}, {name: http-alt, port: 8080}, {name: grpc, port: 7070}]}
` + backendsOf("old", "new", "regex", "prefix", "infra", "client", "ext", "other-port", "grpc") + `
---
# Older, parentRef with a port: its VirtualService (shop/80) comes first.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: by-port, namespace: shop, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, port: 80}]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: old, port: 80}]
  - name: x-regex
    matches: [{path: {type: RegularExpression, value: "/x/[0-9]+"}}]
    backendRefs: [{name: regex, port: 80}]
---
# Newer, no port: another VirtualService (shop), after by-port's.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: portless, namespace: shop, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart}]
  rules:
  - name: ab
    matches: [{path: {type: Exact, value: /a/b}}]
    backendRefs: [{name: new, port: 80}]
---
# Newest, with the port: merged into by-port's VirtualService, whose
# matches istiod sorts: PathPrefix before RegularExpression.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: x-prefix, namespace: shop, creationTimestamp: "2026-01-03T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, port: 80}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /x}}]
    backendRefs: [{name: prefix, port: 80}]
---
# The waypoint's namespace: applies; its backend in shop needs no
# ReferenceGrant at a waypoint.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: from-infra, namespace: infra, creationTimestamp: "2025-12-31T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, namespace: shop}]
  rules:
  - matches: [{path: {type: Exact, value: /infra}}]
    backendRefs: [{name: infra, namespace: shop, port: 80}]
---
# A consumer route of a client namespace: not at the waypoint.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: consumer, namespace: client, creationTimestamp: "2025-12-30T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, namespace: shop}]
  rules: [{backendRefs: [{name: client, namespace: shop, port: 80}]}]
---
# A filter istiod does not convert: the whole route is dropped.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: with-extension, namespace: shop, creationTimestamp: "2025-12-30T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart}]
  rules:
  - filters: [{type: ExtensionRef, extensionRef: {group: example.com, kind: Thing, name: t}}]
    backendRefs: [{name: ext, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-8080, namespace: shop}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, port: 8080}]
  rules: [{backendRefs: [{name: other-port, port: 80}]}]
---
# A GRPCRoute with the same key as by-port: merged with the HTTPRoutes.
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: shop, creationTimestamp: "2026-01-04T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, port: 7070}]
  rules:
  - matches: [{method: {service: shop.Cart, method: Get}}]
    backendRefs: [{name: grpc, port: 80}]
`

// backendsOf declares a Service on port 80 for each name, in shop.
func backendsOf(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString("---\napiVersion: v1\nkind: Service\nmetadata: {name: " + n + ", namespace: shop}\nspec: {ports: [{name: http, port: 80}]}\n")
	}
	return b.String()
}

// At one of Istio's waypoints, the mesh routes are tried in istiod's
// order, not by Gateway API's precedence across routes: one
// VirtualService per route namespace and parentRef port (or none),
// oldest first, each concatenated whole; within one, the matches sorted
// by istiod's sortHTTPRoutes (Exact, PathPrefix, then RegularExpression).
// So an older route's PathPrefix /a takes /a/b before a newer route's
// Exact /a/b, and a newer PathPrefix /x takes /x/1 before an older
// RegularExpression of the same VirtualService. Routes of the waypoint's
// namespace apply (their cross-namespace backends need no ReferenceGrant),
// consumer routes and routes with a filter istiod cannot convert do not,
// nor routes on another port.
// Source: istio/istio @ 86c9f01f pilot/pkg/config/kube/gateway/route_collections.go
// (HTTPRouteCollection: key namespace[/port]/host; mergeHTTPRoutes),
// conversion.go (sortHTTPRoutes, convertHTTPRoute: enforceRefGrant is
// false for mesh parents, an unsupported filter fails the route),
// pilot/pkg/model/virtualservice_controller.go
// (sortMergedVirtualServicesByCreationTime), listener_waypoint.go
// (getVirtualServiceForWaypoint: the Service's and the waypoint's
// namespaces).
func TestMeshIstiodRouteOrder(t *testing.T) {
	ix, pols := fixture(t, istiodOrder)
	for _, c := range []struct {
		url, route, rule, backend string
	}{
		{"http://cart.shop/a/b", "by-port", "a", "old"},
		{"http://cart.shop/x/1", "x-prefix", "rule-1", "prefix"},
		{"http://cart.shop/infra", "from-infra", "rule-1", "infra"},
		{"http://cart.shop:8080/", "on-8080", "rule-1", "other-port"},
		{"grpc://cart.shop:7070/shop.Cart/Get", "grpc", "rule-1", "grpc"},
	} {
		o := meshTrace(t, ix, pols, c.url, "default").Outcomes[0]
		if o.Route == nil || o.Route.Name != c.route || o.Rule != c.rule || o.Result != routing.ResultForwarded {
			t.Errorf("%s: route %v rule %q result %s %s, want %s rule %s", c.url, o.Route, o.Rule, o.Result, o.Reason, c.route, c.rule)
			continue
		}
		want(t, c.url+" backends", backendNames(o), []string{"shop/" + c.backend + ":80"})
		if o.Backends[0].Invalid != "" {
			t.Errorf("%s: backend invalid: %s", c.url, o.Backends[0].Invalid)
		}
	}
	// A request no route of the port matches: the waypoint answers 404.
	tr := meshTrace(t, ix, pols, "http://cart.shop/none", "default")
	o := tr.Outcomes[0]
	if o.Result != routing.ResultNotFound || o.Status != 404 {
		t.Errorf("/none: %s %d, want not-found 404", o.Result, o.Status)
	}
	why := map[string]string{}
	for _, n := range tr.NotMatched {
		if n.Gateway.Name != "waypoint" || n.Service == nil || n.Service.Name != "cart" || n.Listener != "" {
			t.Errorf("notMatched %+v: want the waypoint and Service cart", n)
		}
		why[n.Route.Name] = n.Reason
	}
	for route, w := range map[string]string{
		"consumer":       "a route of namespace client: at the waypoint only the routes of the Service's namespace (shop) and of the waypoint's (infra) apply",
		"with-extension": "its filter ExtensionRef (rule rule-1) is none of those it supports",
		"on-8080":        "port: its parentRef names port 8080 of the Service, not 80",
		"by-port":        "rule a: path /none does not start with /a",
		"portless":       "rule ab: path /none is not exactly /a/b",
		"grpc":           "port: its parentRef names port 7070",
	} {
		if !strings.Contains(why[route], w) {
			t.Errorf("why not %s: %q, want %q", route, why[route], w)
		}
	}
	// The precedence why-not names Istio's order.
	tr = meshTrace(t, ix, pols, "http://cart.shop/a/b", "default")
	for _, n := range tr.NotMatched {
		if n.Route.Name == "portless" && !strings.Contains(n.Reason, "rule ab matches, but HTTPRoute shop/by-port rule a comes first at the waypoint (Istio's order)") {
			t.Errorf("portless on /a/b: %q", n.Reason)
		}
	}
}

// istiod lists the routes of the waypoint's own namespace before the
// others, whatever their age: a newer catch-all route of the waypoint's
// namespace beats an older one of the Service's.
// Source: istio/istio @86c9f01f pilot/pkg/model/push_context.go
// (VirtualServicesForGateway: "Favor same-namespace Gateway routes"),
// sidecar.go (DefaultSidecarScopeForGateway: a waypoint's routes).
func TestMeshWaypointNamespaceRoutesFirst(t *testing.T) {
	head, _, _ := strings.Cut(istiodOrder, "# Older, parentRef with a port")
	ix, pols := fixture(t, head+`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: producer, namespace: shop, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart}]
  rules: [{backendRefs: [{name: old, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: from-infra, namespace: infra, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart, namespace: shop}]
  rules: [{backendRefs: [{name: new, namespace: shop, port: 80}]}]
`)
	tr := meshTrace(t, ix, pols, "http://cart.shop/x", "default")
	o := tr.Outcomes[0]
	if o.Route == nil || o.Route.Name != "from-infra" || o.Result != routing.ResultForwarded {
		t.Fatalf("route %v result %s %s, want from-infra", o.Route, o.Result, o.Reason)
	}
	want(t, "backends", backendNames(o), []string{"shop/new:80"})
	said := false
	for _, n := range tr.NotMatched {
		if n.Route.Name == "producer" {
			said = true
			if !strings.Contains(n.Reason, "HTTPRoute infra/from-infra rule rule-1 comes first at the waypoint (Istio's order)") {
				t.Errorf("producer: %q", n.Reason)
			}
		}
	}
	if !said {
		t.Errorf("producer not among the routes not taken: %+v", tr.NotMatched)
	}
}

// A Service bound to another implementation's Gateway (one with an
// address, which istiod takes for a waypoint): istiod programs none of
// its routes; the trace follows Gateway API's precedence there (Exact
// before PathPrefix whatever the age) and says so.
func TestMeshOtherImplementationWaypoint(t *testing.T) {
	ix, pols := fixture(t, istiodOrder+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/mesh}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other-wp, namespace: shop}
spec: {gatewayClassName: other, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {addresses: [{type: IPAddress, value: 10.0.0.9}]}
---
apiVersion: v1
kind: Service
metadata: {name: cart2, namespace: shop, labels: {istio.io/use-waypoint: other-wp}}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: old-prefix, namespace: shop, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart2, port: 80}]
  rules: [{matches: [{path: {type: PathPrefix, value: /a}}], backendRefs: [{name: old, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: new-exact, namespace: shop, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: cart2}]
  rules: [{matches: [{path: {type: Exact, value: /a/b}}], backendRefs: [{name: new, port: 80}]}]
`)
	o := meshTrace(t, ix, pols, "http://cart2.shop/a/b", "default").Outcomes[0]
	if o.Gateway.Name != "other-wp" || o.Route == nil || o.Route.Name != "new-exact" {
		t.Errorf("gateway %v route %v, want other-wp and new-exact (Gateway API's precedence)", o.Gateway, o.Route)
	}
	if !strings.Contains(strings.Join(o.Notes, ";"), "is not one of Istio's waypoints") {
		t.Errorf("notes %q", o.Notes)
	}
}

// FuzzTraceMesh checks that no URL, header or namespace panics a mesh
// trace of the bookinfo mesh: it answers (one outcome per waypoint, or
// one naming none) or says why not.
func FuzzTraceMesh(f *testing.F) {
	// With the egress ServiceEntries (serviceentry_test.go) too.
	ix, pols := fixture(f, bookinfo+strings.TrimPrefix(egress, meshCRDs))
	f.Add("http://reviews.bookinfo:9080/reviews/1", "end-user: jason", "default")
	f.Add("http://eu.api.example.com/v2", "x: y", "shop")
	f.Add("grpc://api.example.com:443/a.B/C", "x: y", "egress")
	f.Add("grpc://details:9080/a.B/C", "host: x:1", "bookinfo")
	f.Add("http://ratings.bookinfo.svc.cluster.local.:9080/", ":", "")
	f.Add("http://[::1]:9080/", "x: y", "bookinfo")
	f.Add("tcp://x.dyn.example.com:443", "", "egress")
	f.Add("http://shared.example.com/", "", "b")
	f.Add("http://www.example.org/extra", "", "a")
	f.Fuzz(func(t *testing.T, url, header, ns string) {
		req, err := routing.ParseRequest(url, "", []string{header})
		if err != nil {
			return
		}
		tr, err := ix.TraceMesh(req, ns)
		if err != nil {
			if tr != nil {
				t.Fatal("a trace and an error")
			}
			return
		}
		pols.AddPolicies(tr)
		if tr.Mesh == nil || len(tr.Outcomes) == 0 || len(tr.Outcomes) > 2 {
			t.Fatalf("%q: mesh %+v, %d outcomes", url, tr.Mesh, len(tr.Outcomes))
		}
		for _, o := range tr.Outcomes {
			if (o.Gateway.Name == "") != (tr.Mesh.Unbound != "") || o.Result == "" {
				t.Fatalf("%q: outcome %+v (unbound %q)", url, o, tr.Mesh.Unbound)
			}
		}
	})
}
