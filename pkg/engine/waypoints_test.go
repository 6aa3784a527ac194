package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// waypointTopo: istioTopo's waypoint (default/waypoint, HBONE listener
// admitting namespaces labelled mesh=on) and a second one serving
// workloads only; Services bound to them in every way Istio binds them,
// or not bound.
const waypointTopo = istioTopo + `
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps, labels: {mesh: "on", istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default}}
---
apiVersion: v1
kind: Namespace
metadata: {name: far}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: wl-only, namespace: default, labels: {istio.io/waypoint-for: workload}}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: v1
kind: Service
metadata: {name: bound, namespace: default, labels: {istio.io/use-waypoint: waypoint}}
---
apiVersion: v1
kind: Service
metadata: {name: plain, namespace: default}
---
apiVersion: v1
kind: Service
metadata: {name: by-ns, namespace: apps}
---
apiVersion: v1
kind: Service
metadata: {name: opted-out, namespace: apps, labels: {istio.io/use-waypoint: none}}
---
apiVersion: v1
kind: Service
metadata: {name: missing-wp, namespace: default, labels: {istio.io/use-waypoint: nope}}
---
apiVersion: v1
kind: Service
metadata: {name: workload-wp, namespace: default, labels: {istio.io/use-waypoint: wl-only}}
---
apiVersion: v1
kind: Service
metadata: {name: not-admitted, namespace: far, labels: {istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default}}
`

// A policy targeting a Service applies only at the waypoint the Service is
// bound to (its istio.io/use-waypoint label, else its Namespace's; the
// waypoint serving Service traffic; another namespace admitted by the
// waypoint's HBONE listener); a Service bound to none is AncestorNotBound,
// as istiod reports it, and the policy does not apply there.
// Source: istio/istio @ 86c9f01f pilot/pkg/serviceregistry/ambient
// (GetUseWaypoint, fetchWaypointForService, makeAllowedRoutes),
// pilot/pkg/model/policyattachment.go (ShouldAttachPolicy: targetRefs
// policies only at waypoints), the waypoint policy status
// (WaypointAccepted, reason AncestorNotBound).
func TestWaypointTargets(t *testing.T) {
	waypoint := strings.Replace(waypointTopo, "metadata: {name: waypoint, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}",
		"metadata: {name: waypoint, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {mesh: \"on\"}}}}}]}", 1)
	if waypoint == waypointTopo {
		t.Fatal("istioTopo changed: no waypoint Gateway to admit namespaces")
	}
	var docs []string
	for _, svc := range []string{"default/bound", "default/plain", "apps/by-ns", "apps/opted-out", "default/missing-wp", "default/workload-wp", "far/not-admitted"} {
		ns, name, _ := strings.Cut(svc, "/")
		docs = append(docs, fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-%s, namespace: %s}\nspec: {targetRefs: [{kind: Service, group: \"\", name: %s}], action: DENY, rules: [{}]}\n", name, ns, name))
	}
	res := compute(t, engine.Options{}, append([]string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), waypoint}, docs...)...)
	for name, w := range map[string]string{
		"on-bound":        "True/Accepted",
		"on-by-ns":        "True/Accepted",
		"on-plain":        "False/AncestorNotBound",
		"on-opted-out":    "False/AncestorNotBound",
		"on-missing-wp":   "False/AncestorNotBound",
		"on-workload-wp":  "False/AncestorNotBound",
		"on-not-admitted": "False/AncestorNotBound",
	} {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
	for name, msg := range map[string]string{
		"on-plain":        "Service default/plain is not bound to a waypoint (no istio.io/use-waypoint label on it or its Namespace)",
		"on-opted-out":    "(its label istio.io/use-waypoint is none)",
		"on-missing-wp":   "names waypoint Gateway default/nope (its label istio.io/use-waypoint), which is not among the objects",
		"on-workload-wp":  `serves "workload" traffic, not Services'`,
		"on-not-admitted": "does not admit namespace far",
	} {
		if got := condition(t, res, name, "Accepted").Message; !strings.Contains(got, msg) {
			t.Errorf("%s: %q lacks %q", name, got, msg)
		}
	}
	for _, e := range res.Effective {
		if e.Target.Name == "plain" {
			t.Errorf("a policy applies at unbound Service default/plain: %+v", e.Contexts)
		}
	}
}
