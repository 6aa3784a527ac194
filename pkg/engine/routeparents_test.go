package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The route parents kept once per graph (routeParentsOf) are, for every
// route, its Gateway listener parents and its unadmitted ones, none else
// (not a ListenerSet's listener, nor a GAMMA Service); routeListeners
// yields the listeners among a kind's path parents; and reading attached
// routes where no kind reads status writes nothing.
func TestRouteParentsOnce(t *testing.T) {
	const docs = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratelimitpolicies.kuadrant.io, labels: {gateway.networking.k8s.io/policy: inherited}}
spec: {group: kuadrant.io, scope: Namespaced, names: {kind: RateLimitPolicy, plural: ratelimitpolicies}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  allowedListeners: {namespaces: {from: All}}
  listeners:
  - {name: a, protocol: HTTP, port: 80}
  - {name: only-grpc, protocol: HTTP, port: 81, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: g}
  listeners: [{name: x, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: g}, {name: ls, kind: ListenerSet}, {name: web, kind: Service, group: ""}]
  rules: [{name: all, backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
`
	var objs []Object
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, Object{Object: u})
	}
	c := newComputation(Options{}, objs)
	g := c.graph
	route, ok := g.Lookup(topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r"})
	if !ok {
		t.Fatal("no route r")
	}
	var got []string
	for _, p := range c.routeParentsOf(route) {
		got = append(got, g.Node(p).Ref.Short())
	}
	slices.Sort(got)
	if w := []string{"Gateway default/g#a", "Gateway default/g#only-grpc"}; !slices.Equal(got, w) {
		t.Errorf("routeParentsOf(r) = %v, want %v (a admitted, only-grpc not)", got, w)
	}
	rlp := c.kinds[topology.GroupKind{Group: "kuadrant.io", Kind: "RateLimitPolicy"}]
	if rlp == nil || !rlp.RouteParentRefs {
		t.Fatal("RateLimitPolicy does not follow every parentRef")
	}
	generic := *rlp // the same kind, following the hierarchy's parents
	generic.RouteParentRefs = false
	for _, tc := range []struct {
		name string
		want []string
		kind bool
	}{{"RouteParentRefs", []string{"Gateway default/g#a", "Gateway default/g#only-grpc"}, true}, {"hierarchy parents", []string{"Gateway default/g#a", "ListenerSet default/ls#x"}, false}} {
		k := rlp
		if !tc.kind {
			k = &generic
		}
		var ls []string
		for l := range c.routeListeners(k, g.Node(route).Ref.WithSection("all")) {
			ls = append(ls, l.Short())
		}
		slices.Sort(ls)
		if !slices.Equal(ls, tc.want) {
			t.Errorf("%s: routeListeners = %v, want %v", tc.name, ls, tc.want)
		}
	}
	l, _ := g.Lookup(topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g", SectionName: "a"})
	c.ready = nil
	if !c.hasAttachedRoutes(l) {
		t.Error("listener a has route r attached")
	}
	if c.ready != nil {
		t.Error("hasAttachedRoutes wrote readiness")
	}
}
