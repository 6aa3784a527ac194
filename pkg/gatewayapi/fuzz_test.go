package gatewayapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// fuzzKinds are the kinds FuzzAdd gives to documents that do not name a
// handled one.
var fuzzKinds = append(slices.Clone(topology.DefaultHierarchy), gatewayapi.KindReferenceGrant)

// FuzzAdd feeds Add arbitrary JSON: a list of documents, each an object of a
// handled kind (its own when it names one, else one picked by kinds), and
// checks that Add and Build neither panic nor break the invariants.
func FuzzAdd(f *testing.F) {
	for _, tc := range slices.Concat(addCases, listenerSetCases, xListenerSetCases) {
		var docs []any
		for _, u := range parse(f, tc.in) {
			docs = append(docs, u.Object)
		}
		data, err := json.Marshal(docs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte{0, 1, 2})
	}
	f.Add([]byte(`[{"metadata":{"name":"a","namespace":"b"},"spec":{"listeners":"x"}}]`), []byte{2})
	f.Add([]byte(`[{"metadata":{"name":"a","namespace":"b"},"spec":{"rules":[{},{"name":"rule-2"}],"parentRefs":[{"group":"","kind":"Service","name":"a"}]}}]`), []byte{3})
	f.Add([]byte(`[null, 1, "x", [], {}]`), []byte{})
	// A Gateway admitting ListenerSets, a ListenerSet and a route to it,
	// the kinds picked by index in fuzzKinds: Gateway, ListenerSet, HTTPRoute
	// (XListenerSet is 4).
	f.Add([]byte(`[{"metadata":{"name":"g","namespace":"n"},"spec":{"allowedListeners":{"namespaces":{"from":"All"}},"listeners":[{"name":"a","port":1,"protocol":"HTTP"}]}},`+
		`{"metadata":{"name":"s","namespace":"n"},"spec":{"parentRef":{"name":"g"},"listeners":[{"name":"a","port":1,"protocol":"HTTP"}]}},`+
		`{"metadata":{"name":"r","namespace":"n"},"spec":{"parentRefs":[{"kind":"ListenerSet","name":"s","sectionName":"a"}]}}]`), []byte{2, 3, 5})
	f.Add([]byte(`[{"apiVersion":"gateway.networking.k8s.io/v1","kind":"ListenerSet","metadata":{"name":"s","namespace":"n"},"spec":{"parentRef":{"name":["g"]},"listeners":{"a":1}}}]`), []byte{})
	// Gloo Gateway's class, its Gateway, an XListenerSet and a route
	// naming the Gateway (odd length: with the implementations' options).
	f.Add([]byte(`[{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"c"},"spec":{"controllerName":"solo.io/gloo-gateway"}},`+
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"g","namespace":"n"},"spec":{"gatewayClassName":"c","allowedListeners":{"namespaces":{"from":"Same"}},"listeners":[{"name":"a","port":1,"protocol":"HTTP"}]}},`+
		`{"apiVersion":"gateway.networking.x-k8s.io/v1alpha1","kind":"XListenerSet","metadata":{"name":"s","namespace":"n"},"spec":{"parentRef":{"name":"g"},"listeners":[{"name":"b","port":2,"protocol":"HTTP"}]}},`+
		`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"name":"r","namespace":"n"},"spec":{"parentRefs":[{"name":"g","port":2}]}}] `), []byte{})

	f.Fuzz(func(t *testing.T, data []byte, kinds []byte) {
		var v any
		if err := utiljson.Unmarshal(data, &v); err != nil {
			return
		}
		docs, ok := v.([]any)
		if !ok {
			docs = []any{v}
		}
		objs := make([]*unstructured.Unstructured, 0, len(docs))
		for i, d := range docs {
			m, ok := d.(map[string]any)
			if !ok {
				objs = append(objs, &unstructured.Unstructured{})
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			gvk := u.GroupVersionKind()
			if !gatewayapi.Handles(topology.GroupKind{Group: gvk.Group, Kind: gvk.Kind}) && len(kinds) > 0 {
				gk := fuzzKinds[int(kinds[i%len(kinds)])%len(fuzzKinds)]
				api := "v1"
				if gk.Group != "" {
					api = gk.Group + "/v1"
				}
				m["apiVersion"], m["kind"] = api, gk.Kind
			}
			objs = append(objs, u)
		}

		b := topology.NewBuilder()
		// Every other input with the implementations' delegation forms
		// (which delegations are followed depends on the Gateways') and
		// their attachment of Gateway routes to ListenerSets' listeners.
		var opts gatewayapi.Options
		if len(data)%2 == 1 {
			opts.DelegationKinds = profiles.DelegationKinds
			opts.GatewayRouteListenerSets = profiles.GatewayRouteListenerSets
		}
		grants, probs := gatewayapi.AddWith(b, objs, opts)
		if grants == nil {
			t.Fatal("nil Grants")
		}
		for _, p := range probs {
			if p.Object.Kind == "" || p.Message == "" {
				t.Errorf("problem without object kind or message: %+v", p)
			}
		}
		g, _ := b.Build()
		if len(g.Order()) != g.Len() {
			t.Errorf("order has %d nodes, graph %d", len(g.Order()), g.Len())
		}
		for i := range g.Len() {
			n := g.Node(topology.NodeID(i))
			if n.Ref.GroupKind() == topology.KindNamespace && len(n.Parents)+len(n.Children) != 0 {
				t.Errorf("%s has edges", n.Ref)
			}
			if n.Ref.IsSection() {
				if len(n.Parents) == 0 || g.Node(n.Parents[0]).Ref != n.Ref.Object() {
					t.Errorf("section %s is not below its object", n.Ref)
				}
			}
			// A ListenerSet hangs below a Gateway (at most one: its
			// parentRef) and nothing else.
			if topology.IsListenerSet(n.Ref.GroupKind()) && !n.Ref.IsSection() {
				if len(n.Parents) > 1 {
					t.Errorf("%s has %d parents", n.Ref, len(n.Parents))
				}
				for _, p := range n.Parents {
					if pr := g.Node(p).Ref; pr.GroupKind() != topology.KindGateway || pr.IsSection() {
						t.Errorf("%s is below %s, not a Gateway", n.Ref, pr)
					}
				}
			}
		}
		for _, u := range objs {
			grants.Allows(topology.KindHTTPRoute, u.GetNamespace(), topology.Ref{Kind: "Service", Namespace: u.GetName(), Name: u.GetName()})
		}
	})
}
