package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listenerSetKinds are the two ListenerSet kinds, each read the same way.
var listenerSetKinds = []struct{ apiVersion, kind string }{
	{"gateway.networking.k8s.io/v1", "ListenerSet"},
	{"gateway.networking.x-k8s.io/v1alpha1", "XListenerSet"},
}

// lsStatusTopo: Gateway gw admitting ListenerSet ls (of kind lsKind) with
// listener a, whose status says a is Programmed (or not) with attached
// routes attached; HTTPRoute r on ls, to Service web.
func lsStatusTopo(apiVersion, lsKind, programmed string, attached int) string {
	group, _, _ := strings.Cut(apiVersion, "/")
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: example
  allowedListeners: {namespaces: {from: All}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: ` + apiVersion + `
kind: ` + lsKind + `
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: gw}
  listeners: [{name: a, protocol: HTTP, port: 8080}]
status:
  conditions: [{type: Accepted, status: "True"}]
  listeners: [{name: a, attachedRoutes: ` + string(rune('0'+attached)) + `, conditions: [{type: Programmed, status: "` + programmed + `"}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: ls, group: ` + group + `, kind: ` + lsKind + `}]
  rules: [{name: all, backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
`
}

// readyCRD is an Inherited kind whose paths run through ready listeners
// and routes only (path-readiness: status), computed through Gateways
// only (reach: gateway), so that a policy on no path says why.
const readyCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/merge-strategies: patch-defaults, attache.dev/path-readiness: status, attache.dev/reach: gateway}
spec:
  group: policies.example.com
  names: {kind: RPolicy, plural: rpolicies}
`

// An XListenerSet's status is read as a ListenerSet's: a listener it does
// not say is Programmed is on no path of a kind reading readiness, and the
// policy says so; the attached routes it counts decide whether its
// listener is an effective target of a kind needing routes attached.
func TestListenerSetKindsStatusRead(t *testing.T) {
	onGw := pol("policies.example.com/v1", "RPolicy", "p", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ndefaults: {x: 1}")
	lCRD := declaredCRD("policies.example.com", "LPolicy", "lpolicies", "Direct",
		"attache.dev/target-kinds: Gateway, ListenerSet, XListenerSet.gateway.networking.x-k8s.io",
		"attache.dev/effective-section-kinds: Gateway, ListenerSet, XListenerSet.gateway.networking.x-k8s.io",
		"attache.dev/effective-listeners: attached-routes")
	for _, lk := range listenerSetKinds {
		t.Run(lk.kind, func(t *testing.T) {
			group, _, _ := strings.Cut(lk.apiVersion, "/")
			svc := topology.Ref{Kind: "Service", Namespace: "default", Name: "web"}
			contexts := func(res *engine.Result, kind string, at topology.Ref) int {
				n := 0
				for _, e := range res.Effective {
					if e.Kind.GroupKind.Kind == kind && e.Target == at {
						n += len(e.Contexts)
					}
				}
				return n
			}
			res := compute(t, engine.Options{}, readyCRD, lsStatusTopo(lk.apiVersion, lk.kind, "False", 1), onGw)
			want(t, "contexts at the Service behind a listener not Programmed", contexts(res, "RPolicy", svc), 0)
			if msg := condition(t, res, "p", "Programmed").Message; !strings.Contains(msg, "listener "+lk.kind+" default/ls#a is not Programmed") {
				t.Errorf("Programmed message does not name the listener not Programmed: %q", msg)
			}
			res = compute(t, engine.Options{}, readyCRD, lsStatusTopo(lk.apiVersion, lk.kind, "True", 1), onGw)
			want(t, "contexts at the Service behind a Programmed listener", contexts(res, "RPolicy", svc), 1)

			onA := pol("policies.example.com/v1", "LPolicy", "l", 0, "targetRefs: [{group: "+group+", kind: "+lk.kind+", name: ls, sectionName: a}]\nx: 1")
			a := topology.Ref{Group: group, Kind: lk.kind, Namespace: "default", Name: "ls", SectionName: "a"}
			// The route attaches to a; the status counting none wins.
			res = compute(t, engine.Options{}, lCRD, lsStatusTopo(lk.apiVersion, lk.kind, "True", 0), onA)
			want(t, "contexts at a listener whose status counts no route", contexts(res, "LPolicy", a), 0)
			res = compute(t, engine.Options{}, lCRD, lsStatusTopo(lk.apiVersion, lk.kind, "True", 1), onA)
			want(t, "contexts at a listener whose status counts a route", contexts(res, "LPolicy", a), 1)
		})
	}
}

// A status write on an XListenerSet that the engine reads (Programmed,
// attachedRoutes) is a change: StatusReadChanged says so, and Incremental
// recomputes and answers as Compute.
func TestListenerSetKindsStatusChange(t *testing.T) {
	onGw := pol("policies.example.com/v1", "RPolicy", "p", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\ndefaults: {x: 1}")
	for _, lk := range listenerSetKinds {
		t.Run(lk.kind, func(t *testing.T) {
			ls := func(topo string) *unstructured.Unstructured {
				for _, o := range decodeDocs(t, topo) {
					if o.Object.GetKind() == lk.kind {
						return o.Object
					}
				}
				t.Fatal("no " + lk.kind)
				return nil
			}
			notProgrammed := lsStatusTopo(lk.apiVersion, lk.kind, "False", 1)
			programmed := lsStatusTopo(lk.apiVersion, lk.kind, "True", 1)
			want(t, "StatusReadChanged(Programmed)", engine.StatusReadChanged(ls(notProgrammed), ls(programmed)), true)
			want(t, "StatusReadChanged(attachedRoutes)", engine.StatusReadChanged(ls(programmed), ls(lsStatusTopo(lk.apiVersion, lk.kind, "True", 2))), true)
			want(t, "StatusReadChanged(same)", engine.StatusReadChanged(ls(programmed), ls(programmed)), false)
			in := engine.NewIncremental(engine.Options{})
			for i, topo := range []string{notProgrammed, programmed, notProgrammed} {
				objs := decodeDocs(t, readyCRD, topo, onGw)
				got := in.Compute(objs)
				if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
					t.Fatalf("step %d (full=%v %s): %s", i, in.LastChange().Full, in.LastChange().Reason, firstDiff(g, w))
				}
			}
		})
	}
}
