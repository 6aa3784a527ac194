package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// kgwClassTopo: kgateway's waypoint class, waypoint default/kgw with
// Service default/to-kgw bound to it, and waypoint istio-system/root-kgw
// (in the root namespace) with Service istio-system/to-root bound to it.
const kgwClassTopo = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: authorizationpolicies.security.istio.io}
spec:
  group: security.istio.io
  scope: Namespaced
  names: {kind: AuthorizationPolicy, plural: authorizationpolicies}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: v1
kind: Namespace
metadata: {name: istio-system}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway-waypoint}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kgw, namespace: default}
spec: {gatewayClassName: kgateway-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {addresses: [{type: IPAddress, value: 10.0.0.7}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: root-kgw, namespace: istio-system}
spec: {gatewayClassName: kgateway-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {addresses: [{type: IPAddress, value: 10.0.0.8}]}
---
apiVersion: v1
kind: Service
metadata: {name: to-kgw, namespace: default, labels: {istio.io/use-waypoint: kgw}}
---
apiVersion: v1
kind: Service
metadata: {name: to-root, namespace: istio-system, labels: {istio.io/use-waypoint: root-kgw}}
`

// classAP is AuthorizationPolicy ns/name on GatewayClass kgateway-waypoint.
func classAP(ns, name string) string {
	return `---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ` + name + `, namespace: ` + ns + `}
spec: {targetRefs: [{kind: GatewayClass, group: gateway.networking.k8s.io, name: kgateway-waypoint}], action: DENY, rules: [{}]}
`
}

// kgateway applies the AuthorizationPolicies on its waypoint class from
// the root namespace at the Services bound to its waypoints outside the
// root namespace (waypointquery GetAuthorizationPoliciesForGatewayClass);
// istiod calls such a policy Invalid (the class is not of its mesh
// controller), which attache keeps as the policy's status. One from
// another namespace applies nowhere (istiod: root namespace only; kgateway
// reads the root namespace's).
func TestKgatewayWaypointClassPolicies(t *testing.T) {
	svc := func(ns, name string) topology.Ref { return topology.Ref{Kind: "Service", Namespace: ns, Name: name} }
	docs := []string{kgwClassTopo, classAP("istio-system", "on-class"), classAP("default", "elsewhere")}
	res := compute(t, engine.Options{}, docs...)
	want(t, "on-class", status(t, res, "on-class", "Accepted"), "False/Invalid")
	if m := ancestorMessage(t, res, "on-class"); !strings.Contains(m, "must use controller name istio.io/mesh-controller; kgateway applies it at the Services bound to its waypoints outside the root namespace") {
		t.Errorf("on-class message %q", m)
	}
	want(t, "elsewhere", status(t, res, "elsewhere", "Accepted"), "False/Invalid")
	stackAt := func(ref topology.Ref) (names []string, path []string) {
		for _, e := range res.Effective {
			if e.Target != ref || e.Kind.GroupKind.Kind != "AuthorizationPolicy" {
				continue
			}
			for _, c := range e.Contexts {
				for _, s := range c.Stack {
					names = append(names, s.Policy.Name)
				}
				c.Paths(func(p []topology.Ref) bool {
					for _, r := range p {
						path = append(path, r.Kind+":"+r.Name)
					}
					return false
				})
			}
		}
		slices.Sort(names)
		return names, path
	}
	names, path := stackAt(svc("default", "to-kgw"))
	want(t, "at to-kgw", names, []string{"on-class"})
	want(t, "path to to-kgw", path, []string{"GatewayClass:kgateway-waypoint", "Gateway:kgw", "Service:to-kgw"})
	names, _ = stackAt(svc("istio-system", "to-root"))
	want(t, "at to-root (a root-namespace waypoint)", names, []string(nil))

	// (Documents keep their places: a source names its document.)
	incrementalAgrees(t, engine.Options{},
		[]string{kgwClassTopo, classAP("default", "elsewhere")},
		[]string{kgwClassTopo, classAP("default", "elsewhere"), classAP("istio-system", "on-class")},
		[]string{kgwClassTopo, classAP("default", "elsewhere")})
}
