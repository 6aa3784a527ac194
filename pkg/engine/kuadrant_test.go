package engine_test

import (
	"slices"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// kuadrantTopo: Gateway g (namespace default) with listeners a
// (a.example.com:80), b (b.example.com:80), admin (8080, no hostname) and
// tcp (TCP 9000), none admitting other namespaces (allowedRoutes default
// Same). HTTPRoute ra (hostname a.example.com, parentRef g) attaches to a
// and admin by Gateway API's rules; HTTPRoute rb names listener b on port
// 8080, which b is not on, so it attaches nowhere; HTTPRoute far, in
// namespace other, attaches nowhere. Gateway ls-gw admits ListenerSets;
// HTTPRoute rl attaches to the listener of ListenerSet ls below it.
const kuadrantTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: b, protocol: HTTP, port: 80, hostname: b.example.com}
  - {name: admin, protocol: HTTP, port: 8080}
  - {name: tcp, protocol: TCP, port: 9000}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ra, namespace: default}
spec:
  parentRefs: [{name: g}]
  hostnames: [a.example.com]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: default}
spec:
  parentRefs: [{name: g, sectionName: b, port: 8080}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: far, namespace: other}
spec:
  parentRefs: [{name: g, namespace: default}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ls-gw, namespace: default}
spec:
  gatewayClassName: c
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: ls-gw}
  listeners: [{name: extra, protocol: HTTP, port: 8081}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rl, namespace: default}
spec:
  parentRefs: [{kind: ListenerSet, name: ls}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: other}
spec: {ports: [{name: http, port: 80}]}
`

func kListener(gw, l string) string {
	return `{group: gateway.networking.k8s.io, kind: Gateway, name: ` + gw + `, sectionName: ` + l + `}`
}

// rlpCRD is Kuadrant's RateLimitPolicy CRD as shipped (labelled
// inherited), with the annotations given.
func rlpCRD(annotations ...string) string {
	if len(annotations) == 0 {
		return labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	}
	return declaredCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited", annotations...)
}

// Kuadrant's policy-machinery links a route below every listener of the
// Gateway its parentRef names (the listener a sectionName names), without
// Gateway API's checks (port, allowedRoutes, hostnames, protocol), and
// below no ListenerSet: Kuadrant computes effective policies along those
// paths. A RateLimitPolicy on listener b thus reaches ra, rb and far,
// none of which attaches to b; one on the TCP listener reaches ra too;
// one on ls-gw reaches nothing (rl hangs below a ListenerSet). With
// attache.dev/route-parents: admitted, paths are Gateway API's.
// Source: PM 64133472 machinery/gateway_api_topology.go
// (findListenerFromParentRefFunc); KO ae698811
// effective_ratelimit_policies_reconciler.go (Paths(gatewayClass, rule)).
func TestKuadrantRouteParentRefs(t *testing.T) {
	const v = "kuadrant.io/v1"
	pols := []string{
		pol(v, "RateLimitPolicy", "on-b", 0, "targetRef: "+kListener("g", "b")+"\nlimits: {on-b: {rates: [{limit: 1, window: 1m}]}}"),
		pol(v, "RateLimitPolicy", "on-tcp", 1, "targetRef: "+kListener("g", "tcp")+"\nlimits: {on-tcp: {rates: [{limit: 2, window: 1m}]}}"),
		pol(v, "RateLimitPolicy", "on-ls-gw", 2, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: ls-gw}\nlimits: {on-ls-gw: {rates: [{limit: 3, window: 1m}]}}"),
	}
	onB := `{"limits":{"on-b":{"rates":[{"limit":1,"window":"1m"}]}}}`
	onTCP := `{"limits":{"on-tcp":{"rates":[{"limit":2,"window":"1m"}]}}}`
	onLsGw := `{"limits":{"on-ls-gw":{"rates":[{"limit":3,"window":"1m"}]}}}`
	far := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "other", Name: "far", SectionName: "only"}
	for _, tc := range []struct {
		name        string
		crd         string
		ra, rb, fr  []string
		rl          []string
		programmed  map[string]string
		throughB    int
		routeParent string
	}{
		{"profile: parent-refs", rlpCRD(), []string{onB, onTCP}, []string{onB}, []string{onB, onTCP}, nil,
			map[string]string{"on-b": "True/Programmed", "on-tcp": "True/Programmed", "on-ls-gw": "False/Unknown"}, 3, "parent-refs"},
		{"annotation: admitted", rlpCRD("attache.dev/route-parents: admitted"), nil, nil, nil, []string{onLsGw},
			map[string]string{"on-b": "False/Unknown", "on-tcp": "False/Unknown", "on-ls-gw": "True/Programmed"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, append([]string{tc.crd, kuadrantTopo}, pols...)...)
			for _, p := range res.Problems {
				t.Errorf("problem: %v", p)
			}
			want(t, "ra", effective(t, res, "RateLimitPolicy", rule("ra", "only")), tc.ra)
			want(t, "rb", effective(t, res, "RateLimitPolicy", rule("rb", "only")), tc.rb)
			want(t, "far", effective(t, res, "RateLimitPolicy", far), tc.fr)
			want(t, "rl", effective(t, res, "RateLimitPolicy", rule("rl", "only")), tc.rl)
			for name, w := range tc.programmed {
				want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
			}
			// The paths through listener b are found from it.
			b := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g", SectionName: "b"}
			want(t, "contexts through listener b", len(res.ContextsThrough(b)), tc.throughB)
			want(t, "routeParents", kindOf(t, res, "RateLimitPolicy").RouteParentRefs, tc.routeParent != "")
		})
	}
}

// The routes' unadmitted parents recompute as Compute does when a policy
// on a listener they name comes and goes, incrementally.
func TestKuadrantRouteParentRefsIncremental(t *testing.T) {
	const v = "kuadrant.io/v1"
	base := []string{rlpCRD(), kuadrantTopo}
	onB := pol(v, "RateLimitPolicy", "on-b", 0, "targetRef: "+kListener("g", "b")+"\nlimits: {on-b: {rates: [{limit: 1, window: 1m}]}}")
	in := engine.NewIncremental(engine.Options{})
	for i, docs := range [][]string{base, append(slices.Clone(base), onB), base, append(slices.Clone(base), onB)} {
		objs := decodeDocs(t, docs...)
		got := in.Compute(objs)
		if i > 0 && in.LastChange().Full {
			t.Errorf("step %d recomputed in full: %s", i, in.LastChange().Reason)
		}
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
		if n := len(effective(t, got, "RateLimitPolicy", rule("rb", "only"))); n != i%2 {
			t.Errorf("step %d: rb has %d contexts, want %d", i, n, i%2)
		}
	}
}
