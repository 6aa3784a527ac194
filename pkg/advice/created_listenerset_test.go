package advice_test

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestCreatedListenerSet: an XListenerSet (or ListenerSet) being created
// is told of the policies that will reach it through the Gateway its
// spec.parentRef names: Gloo's ListenerOption on that Gateway (Gateway >
// XListenerSet); for a kind whose hierarchy is Gateway > ListenerSet, the
// policy on the Gateway, not one on a listener of the Gateway (beside
// it, not above); under a Gateway that is not there, none.
func TestCreatedListenerSet(t *testing.T) {
	base := read(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: listeneroptions.gateway.solo.io}
spec:
  group: gateway.solo.io
  names: {kind: ListenerOption, plural: listeneroptions}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: lspolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/target-kinds: Gateway,ListenerSet
    attache.dev/hierarchy: Gateway,ListenerSet
spec:
  group: example.com
  names: {kind: LsPolicy, plural: lspolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: edge}
spec:
  gatewayClassName: gloo
  listeners: [{name: http, protocol: HTTP, port: 8080}]
  allowedListeners: {namespaces: {from: Same}}
---
apiVersion: gateway.solo.io/v1
kind: ListenerOption
metadata: {name: on-gw, namespace: edge}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  options: {perConnectionBufferLimitBytes: 1024}
---
apiVersion: example.com/v1
kind: LsPolicy
metadata: {name: on-gw, namespace: edge}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {color: blue}
---
apiVersion: example.com/v1
kind: LsPolicy
metadata: {name: on-listener, namespace: edge}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]
  defaults: {size: 3}
`)
	res := engine.Compute(base, engine.Options{})
	xls := read(t, `
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: team, namespace: edge}
spec:
  parentRef: {name: gw}
  listeners: [{name: foo, protocol: HTTP, port: 8081}]
`)[0].Object
	xref := topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: "edge", Name: "team"}
	got := advice.Created(res, xls, xref, nil)
	want := []string{"XListenerSet edge/team will be reached by 1 policy: ListenerOption edge/on-gw (options.perConnectionBufferLimitBytes)"}
	if !slices.Equal(got, want) {
		t.Errorf("XListenerSet:\n got %q\nwant %q", got, want)
	}

	ls := read(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: team, namespace: edge}
spec:
  parentRef: {name: gw}
  listeners: [{name: foo, protocol: HTTP, port: 8081}]
`)[0].Object
	lref := topology.Ref{Group: topology.GatewayGroup, Kind: "ListenerSet", Namespace: "edge", Name: "team"}
	got = advice.Created(res, ls, lref, nil)
	want = []string{"ListenerSet edge/team will be reached by 1 policy: LsPolicy edge/on-gw (color)"}
	if !slices.Equal(got, want) {
		t.Errorf("ListenerSet:\n got %q\nwant %q", got, want)
	}

	nowhere := ls.DeepCopy()
	unstructured.SetNestedField(nowhere.Object, "elsewhere", "spec", "parentRef", "name")
	if got := advice.Created(res, nowhere, lref, nil); got != nil {
		t.Errorf("a ListenerSet under a Gateway that is not there: %q", got)
	}
}
