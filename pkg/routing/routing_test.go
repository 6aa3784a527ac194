package routing_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// fixture runs the engine over docs and indexes them for tracing; an
// input problem fails the test.
func fixture(t testing.TB, docs string) (*routing.Index, *routing.Policies) {
	t.Helper()
	return build(t, docs, false)
}

// build is fixture, allowing the engine's problems (invalid policies)
// when engineProblems is set.
func build(t testing.TB, docs string, engineProblems bool) (*routing.Index, *routing.Policies) {
	t.Helper()
	objs, probs, err := manifest.Read([]string{"-"}, strings.NewReader(docs))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Fatal(p.Error())
	}
	res := engine.Compute(objs, engine.Options{})
	for _, p := range res.Problems {
		if !engineProblems {
			t.Fatalf("engine: %s", p.Error())
		}
	}
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = o.Object
	}
	ix, bp := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	if len(bp) > 0 {
		t.Fatalf("build: %v", bp)
	}
	return ix, routing.NewPolicies(res)
}

func trace(t testing.TB, ix *routing.Index, pols *routing.Policies, url string, gw *topology.Ref, headers ...string) *routing.RequestTrace {
	t.Helper()
	req, err := routing.ParseRequest(url, "", headers)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ix.Trace(req, gw)
	if err != nil {
		t.Fatal(err)
	}
	pols.AddPolicies(tr)
	return tr
}

// policyTopology has one Gateway with two listeners, a route with two
// rules on both, and a ColorPolicy on each level: the Gateway, each
// listener, the route and each rule. Each policy sets a field of its own
// (patch defaults), so the effective spec names the policies applied.
const policyTopology = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/target-kinds: Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io
    attache.dev/effective-target-kinds: Service
spec:
  group: policies.example
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: example.com/gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: gc
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
  - {name: alt, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [shop.example.com]
  rules:
  - name: cart
    matches: [{path: {type: PathPrefix, value: /cart}}]
    backendRefs: [{name: cart, port: 80}]
  - name: pay
    matches: [{path: {type: Exact, value: /pay}, method: POST}]
    backendRefs: [{name: pay, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: cart, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: pay, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: gateway, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}], defaults: {gateway: set, strategy: patch}}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: web, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: web}], defaults: {web: set, strategy: patch}}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: alt, namespace: infra}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: alt}], defaults: {alt: set, strategy: patch}}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: route, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}], defaults: {route: set, strategy: patch}}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: cart, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop, sectionName: cart}], defaults: {cart: set, strategy: patch}}
---
apiVersion: policies.example/v1
kind: ColorPolicy
metadata: {name: pay, namespace: app}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop, sectionName: pay}], defaults: {pay: set, strategy: patch}}
`

// TestPoliciesOfTheRequestsOwnContext checks that each request gets the
// effective policy of its own context: the Gateway's, its listener's,
// the route's and its rule's policies, and not those of the other
// listener or the other rule.
func TestPoliciesOfTheRequestsOwnContext(t *testing.T) {
	ix, pols := fixture(t, policyTopology)
	for _, tc := range []struct {
		url, method string
		rule        string
		want        []string // fields of the effective spec
		sources     []string // policies that set them
	}{
		{"http://shop.example.com/cart/items", "", "cart", []string{"cart", "gateway", "route", "web"}, []string{"app/cart", "app/route", "infra/gateway", "infra/web"}},
		{"http://shop.example.com/pay", "POST", "pay", []string{"gateway", "pay", "route", "web"}, []string{"app/pay", "app/route", "infra/gateway", "infra/web"}},
		{"http://shop.example.com:8080/pay", "POST", "pay", []string{"alt", "gateway", "pay", "route"}, []string{"app/pay", "app/route", "infra/alt", "infra/gateway"}},
		{"http://shop.example.com:8080/cart", "", "cart", []string{"alt", "cart", "gateway", "route"}, []string{"app/cart", "app/route", "infra/alt", "infra/gateway"}},
	} {
		req, err := routing.ParseRequest(tc.url, tc.method, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ix.Trace(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		pols.AddPolicies(tr)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: %d outcomes", tc.url, len(tr.Outcomes))
		}
		o := tr.Outcomes[0]
		if o.Rule != tc.rule || o.Result != routing.ResultForwarded {
			t.Errorf("%s: rule %q, result %s; want rule %q forwarded", tc.url, o.Rule, o.Result, tc.rule)
			continue
		}
		if len(o.EffectivePolicies) != 1 {
			t.Fatalf("%s: %d effective policies, want 1", tc.url, len(o.EffectivePolicies))
		}
		ep := o.EffectivePolicies[0]
		var fields, sources []string
		for k := range ep.Spec {
			fields = append(fields, k)
		}
		for _, f := range ep.Sources.Fields {
			sources = append(sources, f.Policy.Namespace+"/"+f.Policy.Name)
		}
		sort.Strings(fields)
		sort.Strings(sources)
		if !slices.Equal(fields, tc.want) || !slices.Equal(sources, tc.sources) {
			t.Errorf("%s: effective fields %v from %v, want %v from %v", tc.url, fields, sources, tc.want, tc.sources)
		}
		if ep.Target.Name != o.Backends[0].Ref.Name {
			t.Errorf("%s: effective target %v, want the backend %v", tc.url, ep.Target, o.Backends[0].Ref)
		}
	}
}

// TestWhyNotAndNoMatch checks the 404 with every route's reason, and the
// method reason of a rule that matches everything but the method (not the
// path reason of the route's first rule).
func TestWhyNotAndNoMatch(t *testing.T) {
	ix, pols := fixture(t, policyTopology)
	tr := trace(t, ix, pols, "http://shop.example.com/pay", nil)
	o := tr.Outcomes[0]
	if o.Result != routing.ResultNotFound || o.Status != 404 || o.Route != nil || len(o.EffectivePolicies) != 0 {
		t.Fatalf("GET /pay: %+v, want a 404 without route or policies", o)
	}
	// Rule cart fails on the path, rule pay only on the method: the reason
	// is pay's, the rule that came closest.
	if len(tr.NotMatched) != 1 || tr.NotMatched[0].Reason != "rule pay: method GET is not POST" {
		t.Errorf("why not: %+v", tr.NotMatched)
	}
	tr = trace(t, ix, pols, "http://other.example.com/cart", nil)
	if len(tr.NotMatched) != 1 || !strings.HasPrefix(tr.NotMatched[0].Reason, "hostname:") {
		t.Errorf("why not for another host: %+v", tr.NotMatched)
	}
	// No listener: with --gateway one 404 outcome without listener; without,
	// no outcome and a reason.
	tr = trace(t, ix, pols, "http://shop.example.com:9999/cart", &topology.Ref{Namespace: "infra", Name: "gw"})
	if len(tr.Outcomes) != 1 || tr.Outcomes[0].Listener != "" || tr.Outcomes[0].Status != 404 {
		t.Errorf("--gateway, no listener on the port: %+v", tr.Outcomes)
	}
	tr = trace(t, ix, pols, "http://shop.example.com:9999/cart", nil)
	if len(tr.Outcomes) != 0 || !strings.Contains(tr.NoGateway, "no listener on port 9999") {
		t.Errorf("no Gateway: %+v %q", tr.Outcomes, tr.NoGateway)
	}
	req, _ := routing.ParseRequest("http://x/", "", nil)
	_, err := ix.Trace(req, &topology.Ref{Namespace: "infra", Name: "nope"})
	var nf *routing.GatewayNotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "infra/gw") {
		t.Errorf("unknown Gateway: %v, want a GatewayNotFoundError naming infra/gw", err)
	}
}

// filterTopology has the filters and backends the conformance suite does
// not check by request: weights, mirror fractions, invalid backends,
// precedence across routes by age and name, and GRPC matching.
const filterTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: gc
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: grpc, protocol: HTTP, port: 9000}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b-newer, namespace: ns, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /same}}]
    backendRefs: [{name: s2, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: z-older, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /same}}]
    backendRefs: [{name: s1, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /split}}]
    filters:
    - type: RequestMirror
      requestMirror: {backendRef: {name: s2, port: 80}, fraction: {numerator: 1, denominator: 4}}
    backendRefs:
    - {name: s1, port: 80, weight: 3}
    - {name: s2, port: 80, weight: 1}
    - {name: missing, port: 80, weight: 1}
  - matches: [{path: {type: PathPrefix, value: /broken}}]
    backendRefs:
    - {name: s1, namespace: other, port: 80}
    - {group: example.com, kind: Bucket, name: b}
  - matches: [{path: {type: RegularExpression, value: "/re/[0-9]+"}}]
    backendRefs: [{name: s1, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: ns}
spec:
  # A listener of its own: an HTTPRoute and a GRPCRoute with intersecting
  # hostnames (here none: every hostname) cannot both be accepted on one.
  parentRefs: [{name: gw, sectionName: grpc}]
  rules:
  - matches: [{method: {service: shop.Cart}}]
    backendRefs: [{name: s1, port: 80}]
  - matches: [{method: {service: shop.Cart, method: Pay}}]
    backendRefs: [{name: s2, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: ns}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: ns}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: other}
spec: {ports: [{port: 80}]}
`

func TestBackendsFiltersAndPrecedence(t *testing.T) {
	ix, pols := fixture(t, filterTopology)

	// Same match in two routes: the older route wins, whatever its name.
	o := trace(t, ix, pols, "http://h/same/x", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "z-older" {
		t.Errorf("/same: route %v, want the older z-older", o.Route)
	}

	o = trace(t, ix, pols, "http://h/split", nil).Outcomes[0]
	var weights []string
	for _, b := range o.Backends {
		w := b.Ref.Name + "=" + string(rune('0'+b.Weight))
		if b.Invalid != "" {
			w += "!"
		}
		weights = append(weights, w)
	}
	if o.Result != routing.ResultForwarded || !slices.Equal(weights, []string{"s1=3", "s2=1", "missing=1!"}) {
		t.Errorf("/split: %s %v, want forwarded to s1=3 s2=1 and the missing Service invalid", o.Result, weights)
	}
	if len(o.Mirrors) != 1 || o.Mirrors[0].Percent != 25 || o.Mirrors[0].Ref.Name != "s2" {
		t.Errorf("/split mirrors: %+v, want s2 at 25%%", o.Mirrors)
	}
	if o.Path[len(o.Path)-1].Kind != "HTTPRoute" {
		t.Errorf("/split: several backends, so the path ends at the rule: %v", o.Path)
	}

	o = trace(t, ix, pols, "http://h/broken", nil).Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 500 || len(o.Backends) != 2 ||
		!strings.Contains(o.Backends[0].Invalid, "RefNotPermitted") || !strings.Contains(o.Backends[1].Invalid, "InvalidKind") {
		t.Errorf("/broken: %+v, want a 500 with a RefNotPermitted and an InvalidKind backend", o)
	}

	o = trace(t, ix, pols, "http://h/re/42", nil).Outcomes[0]
	if o.Rule != "rule-4" {
		t.Errorf("/re/42: rule %q, want the regular expression's rule-4", o.Rule)
	}
	if o := trace(t, ix, pols, "http://h/re/4x", nil).Outcomes[0]; o.Result != routing.ResultNotFound {
		t.Errorf("/re/4x: %s, want not-found (the expression is anchored)", o.Result)
	}

	// gRPC: a method match beats a service-only match.
	o = trace(t, ix, pols, "grpc://h:9000/shop.Cart/Pay", nil).Outcomes[0]
	if o.Rule != "rule-2" || o.Backends[0].Ref.Name != "s2" {
		t.Errorf("grpc Pay: rule %q, want rule-2 (service and method)", o.Rule)
	}
	o = trace(t, ix, pols, "grpc://h:9000/shop.Cart/List", nil).Outcomes[0]
	if o.Rule != "rule-1" {
		t.Errorf("grpc List: rule %q, want rule-1 (service only)", o.Rule)
	}
}

// TestParseRequestErrors checks that bad input gets a clear error.
func TestParseRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		url, method string
		headers     []string
		want        string
	}{
		{"http//x", "", nil, "has no scheme"},
		{"ftp://x/", "", nil, "unsupported scheme"},
		{"http://", "", nil, "has no host"},
		{"http://x:99999/", "", nil, "is not a number from 1 to 65535"},
		{"http://x:/", "", nil, "empty port"},
		{"http://%zz/", "", nil, "malformed URL"},
		{"grpc://x/onlyone", "", nil, "/package.Service/Method"},
		{"http://x/", "GE T", nil, "not an HTTP method"},
		{"http://x/", "", []string{"novalue"}, "has no colon"},
		{"http://x/", "", []string{": v"}, "has no name"},
		{"http://x/", "", []string{"a b: v"}, "header names cannot hold"},
	} {
		_, err := routing.ParseRequest(tc.url, tc.method, tc.headers)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRequest(%q, %q, %q) = %v, want an error saying %q", tc.url, tc.method, tc.headers, err, tc.want)
		}
	}
	r, err := routing.ParseRequest("https://Shop.Example:8443/a%20b?x=1", "", []string{"X-A: 1", "x-a: 2", "Host: other.example:1"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Host != "other.example" || r.SNI != "shop.example" || r.Port != 8443 || r.Path != "/a%20b" || r.Query != "x=1" || r.Headers["x-a"] != "1,2" || r.Method != "GET" {
		t.Errorf("parsed %+v", r)
	}
}

// FuzzParseRequest checks that no URL, method or header panics the parser
// or yields a request routing cannot use.
func FuzzParseRequest(f *testing.F) {
	f.Add("http://cupcakes.example/orders?x=1", "GET", "X-A: b")
	f.Add("grpcs://h:443/pkg.Svc/M", "", "host: a:1")
	f.Add("https://[::1]:8443/", "POST", ":")
	f.Add("tcp://db.example:5432", "", "")
	f.Add("udp://[::1]:53/", "", "")
	f.Fuzz(func(t *testing.T, url, method, header string) {
		var headers []string
		if header != "" {
			headers = []string{header}
		}
		r, err := routing.ParseRequest(url, method, headers)
		if err != nil {
			if r != nil {
				t.Fatal("a request and an error")
			}
			return
		}
		if r.IsL4() {
			// A connection: host and port, nothing else.
			if r.Host == "" || r.Port <= 0 || r.Path != "" || r.Method != "" || r.Query != "" || len(r.Headers) != 0 {
				t.Fatalf("%q: unusable connection %+v", url, r)
			}
			return
		}
		if r.Host == "" || r.Port <= 0 || !strings.HasPrefix(r.Path, "/") || r.Method == "" {
			t.Fatalf("%q: unusable request %+v", url, r)
		}
		for n := range r.Headers {
			if n != strings.ToLower(n) {
				t.Fatalf("header name %q not lower case", n)
			}
		}
	})
}

// TestWhyNotClosestRule checks that a route's why-not names the rule that
// came closest to the request (path, then method, headers, query), the
// first in rule order among equals, and not the first rule's path.
func TestWhyNotClosestRule(t *testing.T) {
	ix, pols := fixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: gc
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: grpc, protocol: HTTP, port: 9000}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: s, port: 80}]
  - name: b
    matches: [{path: {type: PathPrefix, value: /b}, headers: [{name: x-v, value: "1"}]}]
    backendRefs: [{name: s, port: 80}]
  - name: c
    matches: [{path: {type: PathPrefix, value: /b}, headers: [{name: x-w, value: "1"}], queryParams: [{name: q, value: "1"}]}]
    backendRefs: [{name: s, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: g, namespace: ns}
spec:
  parentRefs: [{name: gw, sectionName: grpc}]
  rules:
  - name: other
    matches: [{method: {service: x.Other}}]
    backendRefs: [{name: s, port: 80}]
  - name: pay
    matches: [{method: {service: shop.Cart, method: Pay}}]
    backendRefs: [{name: s, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec: {ports: [{port: 80}]}
`)
	for _, tc := range []struct {
		url     string
		headers []string
		want    string
	}{
		{"http://h/b", nil, "rule b: header x-v is absent"},
		{"http://h/b", []string{"x-w: 1"}, "rule c: query parameter q is absent"},
		{"http://h/c", nil, "rule a: path /c does not start with /a"},
		{"grpc://h:9000/shop.Cart/Get", nil, `rule pay: method "Get" does not match "Pay"`},
	} {
		tr := trace(t, ix, pols, tc.url, nil, tc.headers...)
		var got []string
		for _, n := range tr.NotMatched {
			if n.Route.Kind == "HTTPRoute" && !strings.HasPrefix(tc.url, "grpc") || n.Route.Kind == "GRPCRoute" && strings.HasPrefix(tc.url, "grpc") {
				got = append(got, n.Reason)
			}
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s %v: why not %q, want %q", tc.url, tc.headers, got, tc.want)
		}
	}
}

// TestHTTPRouteGRPCRouteConflict checks the GRPCRoute API's rule: of an
// HTTPRoute and a GRPCRoute with intersecting hostnames on one listener,
// only the older (then the first by namespace/name) is accepted; the
// other takes no request there and its why-not says so. Routes whose
// hostnames do not intersect both stay.
func TestHTTPRouteGRPCRouteConflict(t *testing.T) {
	ix, pols := fixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: gc
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.com]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc-newer, namespace: ns, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: ["*.example.com"]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rpc-other, namespace: ns, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example.net]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web-newer, namespace: ns, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example.net]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: ns}
spec: {ports: [{port: 80}]}
`)
	reason := func(tr *routing.RequestTrace, name string) string {
		for _, n := range tr.NotMatched {
			if n.Route.Name == name {
				return n.Reason
			}
		}
		return ""
	}
	// The older HTTPRoute keeps a.example.com: the newer GRPCRoute, whose
	// wildcard covers it, is not accepted (on any of its hostnames).
	tr := trace(t, ix, pols, "grpc://a.example.com/x.Y/Z", nil)
	if o := tr.Outcomes[0]; o.Result != routing.ResultNotFound || !strings.Contains(reason(tr, "rpc-newer"), "not accepted by the listener: HTTPRoute ns/web, older") {
		t.Errorf("gRPC to a.example.com: %s %v, want a 404 and rpc-newer not accepted; why not %+v", o.Result, o.Route, tr.NotMatched)
	}
	tr = trace(t, ix, pols, "grpc://c.example.com/x.Y/Z", nil)
	if o := tr.Outcomes[0]; o.Result != routing.ResultNotFound {
		t.Errorf("gRPC to c.example.com: %s %v, want a 404 (rpc-newer is not accepted at all)", o.Result, o.Route)
	}
	if o := trace(t, ix, pols, "http://a.example.com/", nil).Outcomes[0]; o.Route == nil || o.Route.Name != "web" {
		t.Errorf("HTTP to a.example.com: route %v, want web", o.Route)
	}
	// b.example.net: the older GRPCRoute wins over the newer HTTPRoute.
	if o := trace(t, ix, pols, "grpc://b.example.net/x.Y/Z", nil).Outcomes[0]; o.Route == nil || o.Route.Name != "rpc-other" {
		t.Errorf("gRPC to b.example.net: route %v, want rpc-other", o.Route)
	}
	tr = trace(t, ix, pols, "http://b.example.net/", nil)
	if o := tr.Outcomes[0]; o.Result != routing.ResultNotFound || !strings.Contains(reason(tr, "web-newer"), "GRPCRoute ns/rpc-other, older") {
		t.Errorf("HTTP to b.example.net: %s %v, want a 404 and web-newer not accepted; why not %+v", o.Result, o.Route, tr.NotMatched)
	}
}

// TestBackendURLRewrite checks a backendRef's own URLRewrite (the API
// allows it there, implementation-specific): the request that backend
// receives is rewritten, the others' is not; a backendRef's
// RequestRedirect is named as not modelled rather than dropped.
func TestBackendURLRewrite(t *testing.T) {
	ix, pols := fixture(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: gc
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs:
    - name: s1
      port: 80
      filters:
      - type: URLRewrite
        urlRewrite: {hostname: v2.internal, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
    - name: s2
      port: 80
      filters:
      - type: RequestRedirect
        requestRedirect: {hostname: elsewhere.example}
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: ns}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: ns}
spec: {ports: [{port: 80}]}
`)
	o := trace(t, ix, pols, "http://h/api/users?x=1", nil).Outcomes[0]
	if o.Result != routing.ResultForwarded || len(o.Backends) != 2 {
		t.Fatalf("%+v", o)
	}
	if u := o.UpstreamRequest; u.Host != "h" || u.Path != "/api/users?x=1" {
		t.Errorf("the rule's upstream request %+v, want it unchanged", u)
	}
	if u := o.Backends[0].UpstreamRequest; u == nil || u.Host != "v2.internal" || u.Path != "/v2/users?x=1" {
		t.Errorf("s1's upstream request %+v, want v2.internal/v2/users?x=1", u)
	}
	if !slices.ContainsFunc(o.Notes, func(n string) bool {
		return strings.Contains(n, "RequestRedirect") && strings.Contains(n, "backendRef")
	}) {
		t.Errorf("notes %q, want the backendRef's RequestRedirect named as not modelled", o.Notes)
	}
}

// TestXListenerSetListeners checks that a request on the port of an
// XListenerSet's listener (gateway.networking.x-k8s.io, read as a
// ListenerSet) is taken there by the route attached to it, through the
// XListenerSet on the request's path, where the Gateway's Gloo
// VirtualHostOption and the XListenerSet's meet; the Gateway's own
// listener does not take it.
func TestXListenerSetListeners(t *testing.T) {
	ix, pols := fixture(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: virtualhostoptions.gateway.solo.io}
spec:
  group: gateway.solo.io
  names: {kind: VirtualHostOption, plural: virtualhostoptions}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: example-gateway, namespace: default}
spec:
  gatewayClassName: gloo
  listeners: [{name: http, protocol: HTTP, port: 8080}]
  allowedListeners: {namespaces: {from: Same}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: foo-listenerset, namespace: default}
spec:
  parentRef: {name: example-gateway, kind: Gateway, group: gateway.networking.k8s.io}
  listeners: [{name: foo, protocol: HTTP, port: 8081}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foo-route, namespace: default}
spec:
  parentRefs: [{name: foo-listenerset, group: gateway.networking.x-k8s.io, kind: XListenerSet}]
  hostnames: [foo.example.com]
  rules: [{name: login, matches: [{path: {type: PathPrefix, value: /login}}], backendRefs: [{name: foo-svc, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: foo-svc, namespace: default}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.solo.io/v1
kind: VirtualHostOption
metadata: {name: gw, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: example-gateway}]
  options: {retries: {numRetries: 1}, cors: {allowOrigin: [gw.example]}}
---
apiVersion: gateway.solo.io/v1
kind: VirtualHostOption
metadata: {name: foo-set, namespace: default, creationTimestamp: "2026-01-01T00:01:00Z"}
spec:
  targetRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: foo-listenerset}]
  options: {cors: {allowOrigin: [set.example]}}
`)
	tr := trace(t, ix, pols, "http://foo.example.com:8081/login", nil)
	if len(tr.Outcomes) != 1 {
		t.Fatalf("outcomes %+v", tr.Outcomes)
	}
	o := tr.Outcomes[0]
	xls := topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: "default", Name: "foo-listenerset"}
	if o.Listener != "foo" || o.ListenerSet == nil || *o.ListenerSet != xls || o.Route == nil || o.Route.Name != "foo-route" || o.Rule != "login" {
		t.Fatalf("outcome: listener %q of %v, route %v rule %q", o.Listener, o.ListenerSet, o.Route, o.Rule)
	}
	if !slices.Contains(o.Path, xls) || !slices.Contains(o.Path, xls.WithSection("foo")) {
		t.Errorf("path %v lacks the XListenerSet and its listener", o.Path)
	}
	var got string
	for _, e := range o.EffectivePolicies {
		if e.Kind.GroupKind.Kind == "VirtualHostOption" {
			b, _ := json.Marshal(e.Spec)
			got = string(b)
		}
	}
	if want := `{"options":{"cors":{"allowOrigin":["set.example"]},"retries":{"numRetries":1}}}`; got != want {
		t.Errorf("VirtualHostOption on the path = %s, want %s", got, want)
	}
	// The Gateway's own listener (8080) has no route for it.
	if tr := trace(t, ix, pols, "http://foo.example.com:8080/login", nil); len(tr.Outcomes) != 1 || tr.Outcomes[0].Route != nil {
		t.Errorf("on the Gateway's listener: %+v", tr.Outcomes)
	}
}
