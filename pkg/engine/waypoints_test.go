package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// waypointTopo: istioTopo's waypoint (default/waypoint, HBONE listener
// admitting namespaces labelled mesh=on) and a second one serving
// workloads only; Services bound to them in every way Istio binds them,
// or not bound.
const waypointTopo = istioTopo + `
---
apiVersion: v1
kind: Namespace
metadata: {name: default, labels: {mesh: "on"}}
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
	waypoint := admittingWaypoint(t)
	var docs []string
	for _, svc := range []string{"default/bound", "default/plain", "apps/by-ns", "apps/opted-out", "default/missing-wp", "default/workload-wp", "far/not-admitted"} {
		ns, name, _ := strings.Cut(svc, "/")
		docs = append(docs, fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-%s, namespace: %s}\nspec: {targetRefs: [{kind: Service, group: \"\", name: %s}], action: DENY, rules: [{}]}\n", name, ns, name))
	}
	res := compute(t, engine.Options{}, append([]string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), waypoint}, docs...)...)
	wantAccepted(t, res, map[string]string{
		"on-bound":        "True/Accepted",
		"on-by-ns":        "True/Accepted",
		"on-plain":        "False/AncestorNotBound",
		"on-opted-out":    "False/AncestorNotBound",
		"on-missing-wp":   "False/AncestorNotBound",
		"on-workload-wp":  "False/AncestorNotBound",
		"on-not-admitted": "False/AncestorNotBound",
	})
	wantAcceptedSays(t, res, map[string]string{
		"on-plain":        "Service default/plain is not bound to a waypoint (no istio.io/use-waypoint label on it or its Namespace)",
		"on-opted-out":    "(its label istio.io/use-waypoint is none)",
		"on-missing-wp":   "names waypoint Gateway default/nope (its label istio.io/use-waypoint), which is not among the objects",
		"on-workload-wp":  `serves "workload" traffic, not Services'`,
		"on-not-admitted": "does not admit namespace far",
	})
	for _, e := range res.Effective {
		if e.Target.Name == "plain" {
			t.Errorf("a policy applies at unbound Service default/plain: %+v", e.Contexts)
		}
	}
}

// At a Service bound to a waypoint apply the policies on the Service, on
// the waypoint Gateway and, from the root namespace, on Istio's waypoint
// class, all of them (additive), on the path class > waypoint > Service;
// at a Service bound to none, none of them.
// Source: istio/istio @ 86c9f01f pilot/pkg/model/policyattachment.go
// (ShouldAttachPolicy: Gateway targets by the waypoint's name, for every
// Service it serves; GatewayClass istio-waypoint from the root namespace),
// pilot/pkg/model/authorization.go (ListAuthorizationPolicies: root,
// waypoint and Service namespaces), pilot/pkg/networking/core/waypoint.go
// (ServicesForWaypoint).
func TestWaypointPoliciesReachBoundServices(t *testing.T) {
	ap := func(name, ns, kind, group, target string) string {
		return fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: %s}\nspec: {targetRefs: [{kind: %s, group: %q, name: %s}], action: DENY, rules: [{}]}\n", name, ns, kind, group, target)
	}
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), admittingWaypoint(t),
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n",
		ap("on-class", "istio-system", "GatewayClass", "gateway.networking.k8s.io", "istio-waypoint"),
		ap("on-waypoint", "default", "Gateway", "gateway.networking.k8s.io", "waypoint"),
		ap("on-bound", "default", "Service", "", "bound"),
		ap("on-plain", "default", "Service", "", "plain"))
	svc := func(ns, name string) topology.Ref { return topology.Ref{Kind: "Service", Namespace: ns, Name: name} }
	keys := func(target topology.Ref) []string { return policiesAndPath(res, "AuthorizationPolicy", target) }
	want(t, "bound", keys(svc("default", "bound")), []string{"default/on-bound", "default/on-waypoint", "istio-system/on-class",
		"path: GatewayClass istio-waypoint > Gateway default/waypoint > Service default/bound"})
	want(t, "by-ns", keys(svc("apps", "by-ns")), []string{"default/on-waypoint", "istio-system/on-class",
		"path: GatewayClass istio-waypoint > Gateway default/waypoint > Service apps/by-ns"})
	want(t, "plain", keys(svc("default", "plain")), []string(nil))
	want(t, "waypoint", keys(topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "waypoint"}),
		[]string{"default/on-waypoint", "istio-system/on-class", "path: GatewayClass istio-waypoint > Gateway default/waypoint"})
	// The ingress Gateway gets none of them.
	want(t, "ingress", keys(topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "ingress"}), []string(nil))
}

// admittingWaypoint is waypointTopo with the waypoint's HBONE listener
// admitting the namespaces labelled mesh=on.
func admittingWaypoint(t *testing.T) string {
	t.Helper()
	topo := strings.Replace(waypointTopo, "metadata: {name: waypoint, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}",
		"metadata: {name: waypoint, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {mesh: \"on\"}}}}}]}", 1)
	if topo == waypointTopo {
		t.Fatal("istioTopo changed: no waypoint Gateway to admit namespaces")
	}
	return topo
}

// An Incremental agrees with Compute when a policy on the waypoint or its
// class comes and goes: the Services bound to it are recomputed; and when
// a Service's own policy (one naming its port: the whole Service, Istio's
// targetRefs having no sectionName) goes while the waypoint's or the
// class's stay; and when that policy's sectionName goes and comes back
// (its target the same, the problem it makes not).
func TestWaypointPoliciesIncremental(t *testing.T) {
	base := []string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), admittingWaypoint(t), `
apiVersion: v1
kind: Service
metadata: {name: ported, namespace: apps}
spec: {ports: [{name: http, port: 80}]}`,
		"apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-bound, namespace: default}\nspec: {targetRefs: [{kind: Service, group: \"\", name: bound}], action: DENY, rules: [{}]}\n",
		"apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-port, namespace: apps}\nspec: {targetRefs: [{kind: Service, group: \"\", name: ported, sectionName: http}], action: DENY, rules: [{}]}\n"}
	onWaypoint := "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-waypoint, namespace: default}\nspec: {targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}], action: ALLOW, rules: [{}]}\n"
	onClass := "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-class, namespace: istio-system}\nspec: {targetRefs: [{kind: GatewayClass, group: gateway.networking.k8s.io, name: istio-waypoint}], action: AUDIT, rules: [{}]}\n"
	withoutPort := func(docs ...string) []string {
		out := slices.DeleteFunc(slices.Clone(docs), func(d string) bool { return strings.Contains(d, "name: on-port,") })
		if len(out) != len(docs)-1 {
			t.Fatalf("no on-port among %d documents", len(docs))
		}
		return out
	}
	// on-port without the sectionName it cannot have: the same target,
	// no problem.
	unported := slices.Clone(base)
	unported[len(unported)-1] = strings.Replace(unported[len(unported)-1], "name: ported, sectionName: http}", "name: ported}", 1)
	if unported[len(unported)-1] == base[len(base)-1] {
		t.Fatal("on-port names no port")
	}
	in := engine.NewIncremental(engine.Options{})
	for i, docs := range [][]string{base, append(slices.Clone(base), onWaypoint), base, append(slices.Clone(base), onClass), base,
		append(slices.Clone(base), onWaypoint), withoutPort(append(slices.Clone(base), onWaypoint)...), append(slices.Clone(base), onWaypoint),
		append(slices.Clone(base), onClass), withoutPort(append(slices.Clone(base), onClass)...), base, unported, base} {
		objs := decodeDocs(t, docs...)
		got := dump(t, in.Compute(objs))
		if i > 0 && in.LastChange().Full {
			t.Errorf("step %d recomputed in full: %s", i, in.LastChange().Reason)
		}
		if w := dump(t, engine.Compute(objs, engine.Options{})); got != w {
			t.Fatalf("step %d: %s", i, firstDiff(got, w))
		}
	}
}

// Istio's finer points: a waypoint's own Service is bound to none; a
// targetRef's sectionName, which Istio's CRDs do not have (the API server
// drops it), is read as absent and reported: the policy targets the whole
// Service, here bound to none; a GatewayClass target outside
// the root namespace is Invalid; a Service bound to a Gateway that is no
// waypoint (an ingress) takes its Service policies, while the Gateway's
// policies do not reach it; a selector naming nothing admits nothing; the
// path names the waypoint even when only its class has policies.
func TestWaypointFinerPoints(t *testing.T) {
	topo := admittingWaypoint(t) + `
---
apiVersion: v1
kind: Service
metadata: {name: waypoint-svc, namespace: default, labels: {gateway.istio.io/managed: istio.io-mesh-controller, istio.io/use-waypoint: waypoint}}
---
apiVersion: v1
kind: Service
metadata: {name: ported, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: via-ingress, namespace: default, labels: {istio.io/use-waypoint: ingress}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: no-selector, namespace: default}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: Selector}}}]}
---
apiVersion: v1
kind: Service
metadata: {name: to-no-selector, namespace: default, labels: {istio.io/use-waypoint: no-selector}}
`
	ap := func(name, ns, kind, group, target, section string) string {
		sec := ""
		if section != "" {
			sec = ", sectionName: " + section
		}
		return fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: %s}\nspec: {targetRefs: [{kind: %s, group: %q, name: %s%s}], action: DENY, rules: [{}]}\n", name, ns, kind, group, target, sec)
	}
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), topo,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n",
		ap("on-waypoint-svc", "default", "Service", "", "waypoint-svc", ""),
		ap("on-port", "default", "Service", "", "ported", "http"),
		ap("class-elsewhere", "apps", "GatewayClass", "gateway.networking.k8s.io", "istio-waypoint", ""),
		ap("class-root", "istio-system", "GatewayClass", "gateway.networking.k8s.io", "istio-waypoint", ""),
		// Istio's ingress class: istiod attaches class targets at
		// waypoints only, and its waypoint status calls this one Invalid
		// (WaypointPolicyStatusCollection; since session 28).
		ap("class-ingress", "istio-system", "GatewayClass", "gateway.networking.k8s.io", "istio", ""),
		ap("on-via-ingress", "default", "Service", "", "via-ingress", ""),
		ap("on-ingress", "default", "Gateway", "gateway.networking.k8s.io", "ingress", ""),
		ap("on-to-no-selector", "default", "Service", "", "to-no-selector", ""),
		ap("on-bound", "default", "Service", "", "bound", ""))
	wantAccepted(t, res, map[string]string{
		"on-waypoint-svc":   "False/AncestorNotBound",
		"on-port":           "False/AncestorNotBound",
		"class-elsewhere":   "False/Invalid",
		"class-root":        "True/Accepted",
		"class-ingress":     "False/Invalid",
		"on-via-ingress":    "True/Accepted",
		"on-to-no-selector": "False/AncestorNotBound",
	})
	if got := condition(t, res, "class-elsewhere", "Accepted").Message; !strings.Contains(got, "must be in the root namespace istio-system") || strings.Count(got, "spec.targetRefs[0]:") != 1 {
		t.Errorf("class-elsewhere: %s", got)
	}
	if got := condition(t, res, "class-ingress", "Accepted").Message; !strings.Contains(got, `GatewayClass istio has controller "istio.io/gateway-controller", and a policy targeting a GatewayClass applies at waypoints only, whose GatewayClass must use controller name istio.io/mesh-controller`) || strings.Count(got, "spec.targetRefs[0]:") != 1 {
		t.Errorf("class-ingress: %s", got)
	}
	if got := condition(t, res, "on-port", "Accepted").Message; !strings.Contains(got, "Service default/ported is not bound to a waypoint") {
		t.Errorf("on-port: %s", got)
	}
	var problems []string
	for _, p := range res.Problems {
		if p.Object.Name == "on-port" {
			problems = append(problems, p.Field+": "+p.Message)
		}
	}
	want(t, "on-port problems", problems, []string{"spec.targetRefs[0].sectionName: sectionName is not part of AuthorizationPolicy's targetRefs; the API server drops it, so the policy targets the whole Service"})
	spec := func(target topology.Ref) (keys []string, path string) {
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind == "AuthorizationPolicy" && e.Target == target {
				for _, c := range e.Contexts {
					for k := range c.Spec {
						keys = append(keys, k)
					}
					for p := range c.Paths {
						for _, r := range p {
							path += r.Short() + " > "
						}
					}
				}
			}
		}
		slices.Sort(keys)
		return keys, path
	}
	keys, _ := spec(topology.Ref{Kind: "Service", Namespace: "default", Name: "via-ingress"})
	want(t, "via-ingress", keys, []string{"default/on-via-ingress"})
	keys, path := spec(topology.Ref{Kind: "Service", Namespace: "apps", Name: "by-ns"})
	want(t, "by-ns", keys, []string{"istio-system/class-root"})
	want(t, "by-ns path", path, "GatewayClass istio-waypoint > Gateway default/waypoint > Service apps/by-ns > ")
}

// customWaypoints: a waypoint GatewayClass of Istio's mesh controller
// other than istio-waypoint, a waypoint of it in default and one in the
// root namespace, each with a Service of its namespace bound to it.
const customWaypoints = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: custom-wp}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: custom, namespace: default}
spec: {gatewayClassName: custom-wp, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: v1
kind: Service
metadata: {name: at-custom, namespace: default, labels: {istio.io/use-waypoint: custom}}
---
apiVersion: v1
kind: Namespace
metadata: {name: istio-system}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: root-custom, namespace: istio-system}
spec: {gatewayClassName: custom-wp, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: v1
kind: Service
metadata: {name: at-root-custom, namespace: istio-system, labels: {istio.io/use-waypoint: root-custom}}
`

// A policy of the root namespace targeting the GatewayClass istio-waypoint
// applies at every waypoint, whatever the waypoint's own class: istiod
// checks the policy's namespace, that the proxy is a waypoint and the
// targetRef's name, never the proxy's class; and a Gateway of any class of
// Istio's mesh controller is deployed as a waypoint. The additive kinds
// reach every waypoint and its Services; Telemetry the waypoints and
// Services of the root namespace (where istiod scans the root namespace).
// An Incremental agrees with Compute as the class's policy comes and goes.
// Source: istio/istio @ 86c9f01f pilot/pkg/model/policyattachment.go
// (ShouldAttachPolicy: "Is p.IsWaypoint good enough or do we specifically
// need to check that it is an istio-waypoint?"),
// pilot/pkg/config/kube/gatewaycommon/classinfo.go (the mesh controller's
// template "waypoint"), manifests/charts/istio-control/istio-discovery/
// files/waypoint.yaml (args "proxy waypoint": a waypoint proxy).
func TestWaypointClassPoliciesReachOtherClasses(t *testing.T) {
	topo := admittingWaypoint(t) + customWaypoints
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), topo,
		"apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-class, namespace: istio-system}\nspec: {targetRefs: [{kind: GatewayClass, group: gateway.networking.k8s.io, name: istio-waypoint}], action: AUDIT, rules: [{}]}\n")
	paths := func(target topology.Ref) (keys []string, path string) {
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind != "AuthorizationPolicy" || e.Target != target {
				continue
			}
			for _, c := range e.Contexts {
				for k := range c.Spec {
					keys = append(keys, k)
				}
				for p := range c.Paths {
					var parts []string
					for _, r := range p {
						parts = append(parts, r.Short())
					}
					path = strings.Join(parts, " > ")
				}
			}
		}
		return keys, path
	}
	keys, path := paths(istioGateway("default", "custom"))
	want(t, "custom", keys, []string{"istio-system/on-class"})
	want(t, "custom path", path, "GatewayClass istio-waypoint > Gateway default/custom")
	keys, path = paths(service("default", "at-custom"))
	want(t, "at-custom", keys, []string{"istio-system/on-class"})
	want(t, "at-custom path", path, "GatewayClass istio-waypoint > Gateway default/custom > Service default/at-custom")
	// The ingress Gateway is no waypoint.
	keys, _ = paths(istioGateway("default", "ingress"))
	want(t, "ingress", keys, []string(nil))

	res = compute(t, engine.Options{}, crd("telemetry.istio.io", "Telemetry", "telemetries"), topo,
		telemetry("istio-system", "on-class", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio-waypoint}]
tracing: [{randomSamplingPercentage: 10}]`))
	for _, target := range []topology.Ref{istioGateway("istio-system", "root-custom"), service("istio-system", "at-root-custom")} {
		want(t, target.Short(), fieldsAt(t, res, target), []string{"tracing.randomSamplingPercentage=10@on-class"})
	}
	_, path = stackAt(res, service("istio-system", "at-root-custom"))
	want(t, "at-root-custom path", path, "GatewayClass istio-waypoint > Gateway istio-system/root-custom > Service istio-system/at-root-custom")
	// Not where istiod scans another namespace than the root.
	for _, target := range []topology.Ref{istioGateway("default", "custom"), service("default", "at-custom")} {
		want(t, target.Short(), fieldsAt(t, res, target), []string(nil))
	}

	// An Incremental agrees as the class's policy comes and goes.
	for _, k := range []struct{ crd, pol string }{
		{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"),
			"apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-class, namespace: istio-system}\nspec: {targetRefs: [{kind: GatewayClass, group: gateway.networking.k8s.io, name: istio-waypoint}], action: AUDIT, rules: [{}]}\n"},
		{crd("telemetry.istio.io", "Telemetry", "telemetries"),
			telemetry("istio-system", "on-class", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio-waypoint}]\ntracing: [{randomSamplingPercentage: 10}]")},
	} {
		in := engine.NewIncremental(engine.Options{})
		for i, docs := range [][]string{{k.crd, topo}, {k.crd, topo, k.pol}, {k.crd, topo}} {
			objs := decodeDocs(t, docs...)
			got := dump(t, in.Compute(objs))
			if i > 0 && in.LastChange().Full {
				t.Errorf("step %d recomputed in full: %s", i, in.LastChange().Reason)
			}
			if w := dump(t, engine.Compute(objs, engine.Options{})); got != w {
				t.Fatalf("step %d: %s", i, firstDiff(got, w))
			}
		}
	}
}

// Istio binds a ServiceEntry to a waypoint as it binds a Service (its
// istio.io/use-waypoint label, else its Namespace's): a policy targeting
// the ServiceEntry applies there, with the waypoint's and the waypoint
// class's, on the path class > waypoint > ServiceEntry; an unbound one is
// AncestorNotBound, and one that is not among the objects TargetNotFound
// (since session 27 attache reads ServiceEntries; before, any name was a
// target of its own, bound to nothing).
// Source: istio/istio @ 86c9f01f pilot/pkg/model/policyattachment.go
// (ShouldAttachPolicy: "ServiceEntry attached", for services of the
// External registry at waypoints), pilot/pkg/serviceregistry/ambient
// (ServiceEntries bound by the same labels as Services).
func TestWaypointServiceEntries(t *testing.T) {
	ap := func(name, ns, kind, group, target string) string {
		return fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: %s}\nspec: {targetRefs: [{kind: %s, group: %q, name: %s}], action: DENY, rules: [{}]}\n", name, ns, kind, group, target)
	}
	se := func(name, ns, labels string) string {
		return fmt.Sprintf("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: %s, namespace: %s, labels: {%s}}\nspec: {hosts: [%s.example.com], ports: [{number: 443, name: https, protocol: TLS}], resolution: DNS}\n", name, ns, labels, name)
	}
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), admittingWaypoint(t),
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n",
		se("ext", "default", "istio.io/use-waypoint: waypoint"), se("by-ns", "apps", ""), se("plain", "default", ""),
		ap("on-class", "istio-system", "GatewayClass", "gateway.networking.k8s.io", "istio-waypoint"),
		ap("on-waypoint", "default", "Gateway", "gateway.networking.k8s.io", "waypoint"),
		ap("on-ext", "default", "ServiceEntry", "networking.istio.io", "ext"),
		ap("on-by-ns", "apps", "ServiceEntry", "networking.istio.io", "by-ns"),
		ap("on-plain", "default", "ServiceEntry", "networking.istio.io", "plain"),
		ap("on-missing", "default", "ServiceEntry", "networking.istio.io", "missing"))
	entry := func(ns, name string) topology.Ref {
		return topology.Ref{Group: "networking.istio.io", Kind: "ServiceEntry", Namespace: ns, Name: name}
	}
	keys := func(target topology.Ref) []string { return policiesAndPath(res, "AuthorizationPolicy", target) }
	want(t, "ext", keys(entry("default", "ext")), []string{"default/on-ext", "default/on-waypoint", "istio-system/on-class",
		"path: GatewayClass istio-waypoint > Gateway default/waypoint > ServiceEntry default/ext"})
	want(t, "by-ns", keys(entry("apps", "by-ns")), []string{"apps/on-by-ns", "default/on-waypoint", "istio-system/on-class",
		"path: GatewayClass istio-waypoint > Gateway default/waypoint > ServiceEntry apps/by-ns"})
	want(t, "plain", keys(entry("default", "plain")), []string(nil))
	want(t, "on-ext", status(t, res, "on-ext", "Accepted"), "True/Accepted")
	want(t, "on-plain", status(t, res, "on-plain", "Accepted"), "False/AncestorNotBound")
	if got := condition(t, res, "on-plain", "Accepted").Message; !strings.Contains(got, "ServiceEntry default/plain is not bound to a waypoint") {
		t.Errorf("on-plain: %q", got)
	}
	want(t, "on-missing", status(t, res, "on-missing", "Accepted"), "False/TargetNotFound")
}

// policiesAndPath lists, per context of kind's effective policy at target,
// the keys of its spec (the policies of an additive kind), sorted, then
// "path: " and the context's path.
func policiesAndPath(res *engine.Result, kind string, target topology.Ref) (out []string) {
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			for k := range c.Spec {
				out = append(out, k)
			}
			slices.Sort(out)
			var path []string
			for p := range c.Paths {
				for _, r := range p {
					path = append(path, r.Short())
				}
			}
			out = append(out, "path: "+strings.Join(path, " > "))
		}
	}
	return out
}

// readinessTopo: Istio's waypoint class and kgateway's, whose inbound
// binding annotation sandwiches its waypoints behind ztunnel by PROXY on
// port 15088; waypoints in namespace mesh: pending (its controller wrote
// conditions, no address yet), ready (an address), declared (no status, as
// a manifest), sandwich (kgateway's class: its PROXY listener on 15088
// admits every namespace, its HBONE one its own only), proxy-any (its own
// annotation PROXY, no port: the istio.io/PROXY listener decides) and
// bogus (an annotation istiod ignores: the HBONE listener decides); a
// Service in namespace apps bound to each, with a policy on it.
func readinessTopo(pendingStatus string) []string {
	gw := func(name, class, annotations, listeners, status string) string {
		return fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: mesh, annotations: {%s}}\nspec: {gatewayClassName: %s, listeners: [%s]}\n%s", name, annotations, class, listeners, status)
	}
	const hboneAll = "{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: All}}}"
	const hboneSame = "{name: mesh, protocol: HBONE, port: 15008}"
	const ready = "status: {addresses: [{type: Hostname, value: w.mesh.svc.cluster.local}]}\n"
	docs := []string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), classDoc("istio-waypoint", "istio.io/mesh-controller", ""), `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: kgateway-waypoint, annotations: {ambient.istio.io/waypoint-inbound-binding: PROXY/15088}}
spec: {controllerName: kgateway.dev/kgateway}
---
apiVersion: v1
kind: Namespace
metadata: {name: mesh}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps}
`,
		gw("pending", "istio-waypoint", "", hboneAll, pendingStatus),
		gw("ready", "istio-waypoint", "", hboneAll, ready),
		gw("declared", "istio-waypoint", "", hboneAll, ""),
		gw("sandwich", "kgateway-waypoint", "", hboneSame+", {name: proxy, protocol: istio.io/PROXY, port: 15088, allowedRoutes: {namespaces: {from: All}}}", ready),
		gw("proxy-any", "istio-waypoint", "ambient.istio.io/waypoint-inbound-binding: PROXY", hboneSame+", {name: proxy, protocol: istio.io/PROXY, port: 15099, allowedRoutes: {namespaces: {from: All}}}", ready),
		gw("bogus", "kgateway-waypoint", "ambient.istio.io/waypoint-inbound-binding: TUNNEL/15088", hboneSame+", {name: proxy, protocol: istio.io/PROXY, port: 15088, allowedRoutes: {namespaces: {from: All}}}", ready),
		// An empty annotation of its own hides the class's; NONE without
		// a port names no listener: the HBONE listener decides.
		gw("empty", "kgateway-waypoint", `ambient.istio.io/waypoint-inbound-binding: ""`, hboneSame+", {name: proxy, protocol: istio.io/PROXY, port: 15088, allowedRoutes: {namespaces: {from: All}}}", ready),
		gw("none-binding", "istio-waypoint", "ambient.istio.io/waypoint-inbound-binding: NONE", hboneAll, ready),
		// The bound listener says nothing of namespaces: Same, though the
		// HBONE listener admits all.
		gw("bound-same", "kgateway-waypoint", "", hboneAll+", {name: proxy, protocol: istio.io/PROXY, port: 15088}", ready),
		// Only a controller's own condition (a domain in its type): no
		// word from the waypoint's controller yet, taken as declared.
		gw("own-condition", "istio-waypoint", "", hboneAll, "status: {conditions: [{type: attache.dev/AuthorizationPolicyAffected, status: \"True\", reason: Affected, message: x, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n"),
	}
	for _, wp := range []string{"pending", "ready", "declared", "sandwich", "proxy-any", "bogus", "empty", "none-binding", "bound-same", "own-condition"} {
		docs = append(docs, fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: to-%s, namespace: apps, labels: {istio.io/use-waypoint: %s, istio.io/use-waypoint-namespace: mesh}}\n---\napiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: on-%s, namespace: apps}\nspec: {targetRefs: [{kind: Service, group: \"\", name: to-%s}], action: DENY, rules: [{}]}\n", wp, wp, wp, wp))
	}
	return docs
}

// istiod binds a Service to a waypoint only once the waypoint Gateway has
// status addresses (WaypointsCollection; attache takes a Gateway without
// any status, as manifests are, as ready), and admits other namespaces by
// the allowedRoutes of the listener its inbound binding names (by port,
// else the istio.io/PROXY listener for PROXY; an annotation istiod ignores
// leaves the HBONE listener deciding). An Incremental sees the address
// come.
// Source: istio/istio @ 6cd5e918 pilot/pkg/serviceregistry/ambient/waypoints.go
// (WaypointsCollection, fetchWaypointForTarget: ReportWaypointIsNotReady;
// makeInboundBinding, findBoundListener, makeAllowedRoutes).
func TestWaypointReadinessAndInboundBinding(t *testing.T) {
	const pending = "status: {conditions: [{type: Programmed, status: \"False\", reason: Pending, message: waiting, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n"
	docs := readinessTopo(pending)
	res := compute(t, engine.Options{}, docs...)
	wantAccepted(t, res, map[string]string{
		"on-pending":       "False/AncestorNotBound",
		"on-ready":         "True/Accepted",
		"on-declared":      "True/Accepted",
		"on-sandwich":      "True/Accepted",
		"on-proxy-any":     "True/Accepted",
		"on-bogus":         "False/AncestorNotBound",
		"on-empty":         "False/AncestorNotBound",
		"on-none-binding":  "True/Accepted",
		"on-bound-same":    "False/AncestorNotBound",
		"on-own-condition": "True/Accepted",
	})
	wantAcceptedSays(t, res, map[string]string{
		"on-pending":    "Service apps/to-pending names waypoint Gateway mesh/pending (its label istio.io/use-waypoint), which is not ready: it has no status.addresses yet",
		"on-bogus":      "names waypoint Gateway mesh/bogus, whose HBONE listener (port 15008) does not admit namespace apps",
		"on-empty":      "names waypoint Gateway mesh/empty, whose HBONE listener (port 15008) does not admit namespace apps",
		"on-bound-same": "names waypoint Gateway mesh/bound-same, whose listener of its inbound binding PROXY/15088 (ambient.istio.io/waypoint-inbound-binding), else its HBONE listener (port 15008), does not admit namespace apps",
	})

	// The address comes: an Incremental recomputes, as Compute does.
	in := engine.NewIncremental(engine.Options{})
	objs := decodeDocs(t, docs...)
	in.Compute(objs)
	after := decodeDocs(t, readinessTopo("status: {addresses: [{type: Hostname, value: p.mesh.svc.cluster.local}], conditions: [{type: Programmed, status: \"True\", reason: Programmed, message: ok, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n")...)
	got := in.Compute(after)
	if ch := in.LastChange(); !ch.Full && len(ch.Statuses) == 0 {
		t.Errorf("the pending waypoint's address changed nothing: %+v", ch)
	}
	want(t, "on-pending once ready", status(t, got, "on-pending", "Accepted"), "True/Accepted")
	want(t, "as Compute", status(t, engine.Compute(after, engine.Options{}), "on-pending", "Accepted"), "True/Accepted")
	// The class's binding goes: its sandwiched waypoint admits by its
	// HBONE listener (its own namespace only), as Compute says.
	noBinding := readinessTopo(pending)
	for i, d := range noBinding {
		noBinding[i] = strings.Replace(d, "annotations: {ambient.istio.io/waypoint-inbound-binding: PROXY/15088}", "annotations: {}", 1)
	}
	unbound := decodeDocs(t, noBinding...)
	want(t, "sandwich without the class's binding", status(t, in.Compute(unbound), "on-sandwich", "Accepted"), "False/AncestorNotBound")
	want(t, "as Compute", status(t, engine.Compute(unbound, engine.Options{}), "on-sandwich", "Accepted"), "False/AncestorNotBound")
	// Our own condition on the Gateway, no address: nothing to recompute.
	in.Compute(objs)
	in.Compute(decodeDocs(t, readinessTopo(strings.Replace(pending, "message: waiting", "message: still waiting", 1))...))
	if ch := in.LastChange(); ch.Full || len(ch.Statuses) > 0 {
		t.Errorf("a condition's message recomputed: %+v", ch)
	}
}

// wantAccepted checks each named policy's summary Accepted condition, as
// "Status/Reason".
func wantAccepted(t *testing.T, res *engine.Result, wants map[string]string) {
	t.Helper()
	for name, w := range wants {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
}

// wantAcceptedSays checks that each named policy's summary Accepted
// message holds the text given.
func wantAcceptedSays(t *testing.T, res *engine.Result, says map[string]string) {
	t.Helper()
	for name, msg := range says {
		if got := condition(t, res, name, "Accepted").Message; !strings.Contains(got, msg) {
			t.Errorf("%s: %q lacks %q", name, got, msg)
		}
	}
}

// An AuthorizationPolicy's summary Accepted condition says what istiod's
// WaypointAccepted says, flattened over its targetRefs: one target, its
// verdict; several, True/Accepted when all are bound, True/PartiallyInvalid
// when some are, False/Invalid when none is, naming the others; a Gateway
// istiod does not take for a waypoint yet (no status.addresses) is not
// bound. A RequestAuthentication (istiod writes no such condition) keeps
// attache's summary.
// Source: istio/istio @ 86c9f01f pilot/pkg/model/service.go
// (flattenConditions), pilot/pkg/serviceregistry/ambient/policies.go
// (WaypointPolicyStatusCollection: per target, the Ancestor
// "<Kind>.<group or core>:<namespace>/<name>").
func TestWaypointAcceptedFlattened(t *testing.T) {
	svc := func(name string) string { return fmt.Sprintf("{kind: Service, group: \"\", name: %s}", name) }
	pending := "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: pending, namespace: default}\n" +
		"spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}\n" +
		"status: {conditions: [{type: Programmed, status: \"False\", reason: Pending, message: waiting, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n"
	var docs []string
	for name, targets := range map[string]string{
		"one-bound":   svc("bound"),
		"one-unbound": svc("plain"),
		"some":        svc("bound") + ", " + svc("plain"),
		"all":         svc("bound") + ", {kind: Gateway, group: gateway.networking.k8s.io, name: waypoint}",
		"none":        svc("absent") + ", " + svc("plain"),
		"pending":     svc("bound") + ", {kind: Gateway, group: gateway.networking.k8s.io, name: pending}",
	} {
		for _, kind := range []string{"AuthorizationPolicy", "RequestAuthentication"} {
			docs = append(docs, fmt.Sprintf("apiVersion: security.istio.io/v1\nkind: %s\nmetadata: {name: %s-%s, namespace: default}\nspec: {targetRefs: [%s]}\n", kind, strings.ToLower(kind[:4]), name, targets))
		}
	}
	res := compute(t, engine.Options{}, append([]string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"),
		crd("security.istio.io", "RequestAuthentication", "requestauthentications"), admittingWaypoint(t) + pending}, docs...)...)
	for name, w := range map[string]struct{ accepted, says string }{
		"auth-one-bound":   {"True/Accepted", "Policy is accepted for Service default/bound"},
		"auth-one-unbound": {"False/AncestorNotBound", "Service default/plain is not bound to a waypoint"},
		"auth-some":        {"True/PartiallyInvalid", "Invalid targetRefs: Service.core:default/plain"},
		"auth-all":         {"True/Accepted", ""},
		"auth-none":        {"False/Invalid", "Invalid targetRefs: Service.core:default/absent, Service.core:default/plain"},
		"auth-pending":     {"True/PartiallyInvalid", "Invalid targetRefs: Gateway.gateway.networking.k8s.io:default/pending"},
		"requ-some":        {"True/Accepted", "Policy is accepted for 1 of 2 targets"},
		"requ-none":        {"False/TargetNotFound", ""},
		"requ-pending":     {"True/Accepted", "Policy is accepted"},
	} {
		c := condition(t, res, name, "Accepted")
		want(t, name, c.Status+"/"+c.Reason, w.accepted)
		if !strings.HasPrefix(c.Message, w.says) || (w.says == "" && strings.HasPrefix(name, "auth") && c.Message != "") {
			t.Errorf("%s: message %q, want %q", name, c.Message, w.says)
		}
	}
}

// A Service with a canary waypoint (istio.io/use-waypoint-canary, its
// weight annotation) is served by both waypoints, so each applies its own
// policies and the Service's: the Service's effective policy has a
// context through each. No canary when it is the primary, its weight is
// not a whole number from 0 to 100, or it is not ready; from the
// Namespace's labels only when the Service names no waypoint itself.
// Incremental agrees with Compute as the weight annotation changes.
// Source: istio/istio @ 86c9f01f pilot/pkg/serviceregistry/ambient
// (waypoints.go ResolveUseWaypointCanary, buildWeightedWaypoints;
// ambientindex.go serviceOwningWaypoints, ServicesForWaypoint).
func TestWaypointCanary(t *testing.T) {
	gw := func(name, extra string) string {
		return fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: default}\n"+
			"spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}\n%s", name, extra)
	}
	svc := func(name, ns, labels, annotations string) string {
		return fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s, labels: {%s}, annotations: {%s}}\n", name, ns, labels, annotations)
	}
	ap := func(name, kind, group, target string) string {
		return fmt.Sprintf("---\napiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: default}\nspec: {targetRefs: [{kind: %s, group: %q, name: %s}], action: DENY, rules: [{}]}\n", name, kind, group, target)
	}
	const primary = "istio.io/use-waypoint: waypoint, "
	topo := strings.Replace(admittingWaypoint(t)+gw("canary", ""), "metadata: {name: canary, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}",
		"metadata: {name: canary, namespace: default}\nspec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: All}}}]}", 1) +
		gw("pending", "status: {conditions: [{type: Programmed, status: \"False\", reason: Pending, message: waiting, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]}\n") +
		"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: cns, labels: {mesh: \"on\", istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default, " +
		"istio.io/use-waypoint-canary: canary, istio.io/use-waypoint-canary-namespace: default}, annotations: {istio.io/use-waypoint-canary-weight: \"50\"}}\n" +
		svc("split", "default", primary+"istio.io/use-waypoint-canary: canary", "istio.io/use-waypoint-canary-weight: \"10\"") +
		svc("zero", "default", primary+"istio.io/use-waypoint-canary: canary", "") +
		svc("same", "default", primary+"istio.io/use-waypoint-canary: waypoint", "") +
		svc("badweight", "default", primary+"istio.io/use-waypoint-canary: canary", "istio.io/use-waypoint-canary-weight: \"101\"") +
		svc("unready", "default", primary+"istio.io/use-waypoint-canary: pending", "") +
		svc("from-ns", "cns", "", "") +
		svc("own-primary", "cns", "istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default", "")
	docs := []string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), topo,
		ap("on-waypoint", "Gateway", "gateway.networking.k8s.io", "waypoint"), ap("on-canary", "Gateway", "gateway.networking.k8s.io", "canary")}
	res := compute(t, engine.Options{}, docs...)
	contexts := func(res *engine.Result, ns, name string) []string {
		var out []string
		for _, e := range res.Effective {
			if e.Target.Kind != "Service" || e.Target.Namespace != ns || e.Target.Name != name {
				continue
			}
			for _, c := range e.Contexts {
				var pols []string
				for _, s := range c.Stack {
					pols = append(pols, s.Policy.Name)
				}
				out = append(out, strings.Join(pols, "+"))
			}
		}
		slices.Sort(out)
		return out
	}
	for svc, w := range map[string][]string{
		"default/split":     {"on-canary", "on-waypoint"},
		"default/zero":      {"on-canary", "on-waypoint"},
		"default/same":      {"on-waypoint"},
		"default/badweight": {"on-waypoint"},
		"default/unready":   {"on-waypoint"},
		"cns/from-ns":       {"on-canary", "on-waypoint"},
		// The Service names its waypoint: the Namespace's canary is not read.
		"cns/own-primary": {"on-waypoint"},
	} {
		ns, name, _ := strings.Cut(svc, "/")
		want(t, svc+" contexts", contexts(res, ns, name), w)
	}
	// Incremental: the weight made invalid, then valid again.
	in := engine.NewIncremental(engine.Options{})
	base := decodeDocs(t, docs...)
	for _, weight := range []string{"10", "abc", "0"} {
		objs := decodeDocs(t, strings.Replace(strings.Join(docs, "\n---\n"), `istio.io/use-waypoint-canary-weight: "10"`, "istio.io/use-waypoint-canary-weight: \""+weight+"\"", 1))
		if weight == "10" {
			objs = base
		}
		got, full := in.Compute(objs), engine.Compute(objs, engine.Options{})
		want(t, "weight "+weight+": as Compute", contexts(got, "default", "split"), contexts(full, "default", "split"))
	}
	if got := contexts(in.Compute(decodeDocs(t, strings.Replace(strings.Join(docs, "\n---\n"), `istio.io/use-waypoint-canary-weight: "10"`, `istio.io/use-waypoint-canary-weight: "abc"`, 1))), "default", "split"); !slices.Equal(got, []string{"on-waypoint"}) {
		t.Errorf("invalid weight, incrementally: %v", got)
	}
}

// istiod takes any Gateway for a waypoint once it has status addresses,
// whatever its class or controller (WaypointsCollection over every
// Gateway of the discovered namespaces; no class, controller or
// revision filter): a Service labelled for an Envoy Gateway Gateway with
// an address is bound to it, and istiod's WaypointAccepted of a policy on
// that Gateway, or on that Service, says bound; without an address,
// neither. But istiod configures only its own Gateways' proxies
// (ShouldAttachPolicy matches a proxy's Gateway name label), so no policy
// of Istio's kinds applies on such a Gateway or at such a waypoint:
// attache's verdict on the target is TargetNotFound, naming the class and
// its controller (the kind's controllers, since session 32; before, the
// Service's own policies applied in its own context and a policy on the
// Gateway applied there), no context runs through it, and the summary
// keeps istiod's word. A RequestAuthentication (no such summary) is
// TargetNotFound; on Istio's own ingress it applies.
// Source: istio/istio @ 86c9f01f pilot/pkg/serviceregistry/ambient
// (waypoints.go gatewayToWaypointTransform, fetchWaypointForTarget;
// ambientindex.go: the Gateways informer filtered by discovery
// namespaces only, pkg/kube/multicluster/cluster.go; policies.go
// WaypointPolicyStatusCollection); pilot/pkg/model/policyattachment.go.
func TestWaypointOfAnotherImplementation(t *testing.T) {
	docs := []string{crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"),
		crd("security.istio.io", "RequestAuthentication", "requestauthentications"), istioTopo, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-addressed, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {addresses: [{type: IPAddress, value: 10.0.0.9}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-pending, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {conditions: [{type: Programmed, status: "False", reason: Pending, message: waiting, lastTransitionTime: "2026-01-01T00:00:00Z"}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: unknown-class, namespace: default}
spec: {gatewayClassName: not-among-the-objects, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: wp, namespace: default}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
status: {addresses: [{type: IPAddress, value: 10.0.0.8}]}
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
apiVersion: v1
kind: Service
metadata: {name: to-eg, namespace: default, labels: {istio.io/use-waypoint: eg-addressed}}
---
apiVersion: v1
kind: Service
metadata: {name: to-pending, namespace: default, labels: {istio.io/use-waypoint: eg-pending}}
---
apiVersion: v1
kind: Service
metadata: {name: eg-canary, namespace: default, labels: {istio.io/use-waypoint: wp, istio.io/use-waypoint-canary: eg-addressed}, annotations: {istio.io/use-waypoint-canary-weight: "50"}}
---
apiVersion: v1
kind: Service
metadata: {name: eg-primary, namespace: default, labels: {istio.io/use-waypoint: eg-addressed, istio.io/use-waypoint-canary: wp}, annotations: {istio.io/use-waypoint-canary-weight: "50"}}
---
apiVersion: v1
kind: Service
metadata: {name: to-kgw, namespace: default, labels: {istio.io/use-waypoint: kgw}}
`}
	for name, target := range map[string]string{
		"on-to-eg": "{kind: Service, group: \"\", name: to-eg}", "on-to-pending": "{kind: Service, group: \"\", name: to-pending}",
		"on-eg": "{kind: Gateway, group: gateway.networking.k8s.io, name: eg-addressed}", "on-eg-pending": "{kind: Gateway, group: gateway.networking.k8s.io, name: eg-pending}",
		"on-ingress": "{kind: Gateway, group: gateway.networking.k8s.io, name: ingress}", "on-unknown-class": "{kind: Gateway, group: gateway.networking.k8s.io, name: unknown-class}",
		"on-eg-canary": "{kind: Service, group: \"\", name: eg-canary}", "on-eg-primary": "{kind: Service, group: \"\", name: eg-primary}",
		"on-to-kgw": "{kind: Service, group: \"\", name: to-kgw}", "on-kgw": "{kind: Gateway, group: gateway.networking.k8s.io, name: kgw}",
	} {
		docs = append(docs, fmt.Sprintf("---\napiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: %s, namespace: default}\nspec: {targetRefs: [%s], action: DENY, rules: [{}]}\n", name, target))
	}
	docs = append(docs, `---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: ra-on-eg, namespace: default}
spec: {targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: eg-addressed}], jwtRules: [{issuer: a.example}]}
---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: ra-on-ingress, namespace: default}
spec: {targetRefs: [{kind: Gateway, group: gateway.networking.k8s.io, name: ingress}], jwtRules: [{issuer: a.example}]}
---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: ra-on-to-kgw, namespace: default}
spec: {targetRefs: [{kind: Service, group: "", name: to-kgw}], jwtRules: [{issuer: a.example}]}
`)
	res := compute(t, engine.Options{}, docs...)
	wantAccepted(t, res, map[string]string{
		"on-to-eg": "True/Accepted", "on-to-pending": "False/AncestorNotBound",
		"on-eg": "True/Accepted", "on-eg-pending": "False/TargetNotFound",
		"on-ingress": "True/Accepted", "on-unknown-class": "True/Accepted",
		"ra-on-eg": "False/TargetNotFound", "ra-on-ingress": "True/Accepted",
		"on-eg-canary": "True/Accepted", "on-eg-primary": "True/Accepted",
		// kgateway's waypoint reads AuthorizationPolicies, not the others.
		"on-to-kgw": "True/Accepted", "ra-on-to-kgw": "False/TargetNotFound", "on-kgw": "True/Accepted",
	})
	wantAcceptedSays(t, res, map[string]string{
		"on-eg":    "bound, as istiod says; spec.targetRefs[0]: Gateway default/eg-addressed (GatewayClass eg, controller gateway.envoyproxy.io/gatewayclass-controller) is another implementation's",
		"on-to-eg": "Service default/to-eg is bound to waypoint Gateway default/eg-addressed (GatewayClass eg, controller gateway.envoyproxy.io/gatewayclass-controller), another implementation's",
		"ra-on-eg": "is another implementation's: the implementation of RequestAuthentication.security.istio.io serves the GatewayClasses of istio.io/gateway-controller",
	})
	// The per-target verdicts are attache's.
	for _, name := range []string{"on-eg", "on-to-eg"} {
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name != name {
				continue
			}
			if len(ps.Ancestors) != 1 || len(ps.Ancestors[0].Conditions) == 0 || ps.Ancestors[0].Conditions[0].Reason != engine.ReasonTargetNotFound {
				t.Errorf("%s: ancestors %+v, want one TargetNotFound", name, ps.Ancestors)
			}
		}
	}
	policiesAt := func(ref topology.Ref) []string {
		var stack []string
		for _, e := range res.Effective {
			if e.Target == ref {
				for _, c := range e.Contexts {
					for _, s := range c.Stack {
						stack = append(stack, s.Policy.Name)
					}
				}
			}
		}
		slices.Sort(stack)
		return stack
	}
	gw := func(name string) topology.Ref {
		return topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: name}
	}
	want(t, "policies at to-eg", policiesAt(topology.Ref{Kind: "Service", Namespace: "default", Name: "to-eg"}), []string(nil))
	want(t, "policies at eg-addressed", policiesAt(gw("eg-addressed")), []string(nil))
	want(t, "policies at ingress", policiesAt(gw("ingress")), []string{"on-ingress", "ra-on-ingress"})
	want(t, "policies at unknown-class", policiesAt(gw("unknown-class")), []string{"on-unknown-class"})
	// A Service split between Istio's waypoint and another
	// implementation's: one context, through Istio's (whichever is the
	// primary); none through the other.
	svcPaths := func(name string) []string {
		var out []string
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind == "AuthorizationPolicy" && e.Target == (topology.Ref{Kind: "Service", Namespace: "default", Name: name}) {
				for _, c := range e.Contexts {
					c.Paths(func(p []topology.Ref) bool {
						var names []string
						for _, r := range p {
							names = append(names, r.Name)
						}
						out = append(out, strings.Join(names, ">"))
						return true
					})
				}
			}
		}
		slices.Sort(out)
		return out
	}
	want(t, "eg-canary paths", svcPaths("eg-canary"), []string{"istio-waypoint>wp>eg-canary"})
	want(t, "eg-primary paths", svcPaths("eg-primary"), []string{"istio-waypoint>wp>eg-primary"})
	// kgateway applies at a Service bound to its waypoint the policies on
	// the waypoint Gateway too (since session 33; before, the Service's
	// own only): kgateway-dev/kgateway
	// internal/kgateway/extensions2/plugins/waypoint/waypoint_translator.go
	// (buildServiceChains), waypointquery/waypoint_authz.go
	// (GetAuthorizationPoliciesForGateway, buildAuthzTargetIndex).
	// Its path starts at kgateway's waypoint class (since session 34:
	// kgateway applies the root namespace's policies on it there too).
	want(t, "to-kgw paths", svcPaths("to-kgw"), []string{"kgateway-waypoint>kgw>to-kgw"})
	want(t, "policies at to-kgw", policiesAt(topology.Ref{Kind: "Service", Namespace: "default", Name: "to-kgw"}), []string{"on-kgw", "on-to-kgw"})
	// An Incremental agrees as the policy on kgateway's waypoint comes and
	// goes (the Services bound to it recomputed).
	without := slices.DeleteFunc(slices.Clone(docs), func(d string) bool { return strings.Contains(d, "name: on-kgw,") })
	if len(without) != len(docs)-1 {
		t.Fatalf("on-kgw not found among the documents")
	}
	incrementalAgrees(t, engine.Options{}, without, docs, without)
}

// MeshBindings answers as the policies' binding does, with no policy kind
// among the objects: the waypoint of each Service of waypointTopo (or why
// none), Istio's or not, and a canary with its share of the connections
// (100-weight to the primary, weight to the canary, as istiod's
// buildWeightedWaypoints splits them). A manifest's Service without a
// namespace is the default namespace's.
func TestMeshBindings(t *testing.T) {
	docs := admittingWaypoint(t) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: canary, namespace: default}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: v1
kind: Service
metadata: {name: split, labels: {istio.io/use-waypoint: waypoint, istio.io/use-waypoint-canary: canary}, annotations: {istio.io/use-waypoint-canary-weight: "25"}}
`
	objs := decodeDocs(t, docs)
	res := engine.Compute(objs, engine.Options{})
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = o.Object
	}
	mb := engine.NewMeshBindings(us, res.Graph, engine.DefaultNamespace)
	svc := func(ns, name string) topology.Ref { return topology.Ref{Kind: "Service", Namespace: ns, Name: name} }
	gw := func(name string) topology.Ref {
		return topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: name}
	}
	for _, c := range []struct {
		svc     topology.Ref
		want    engine.MeshBinding
		unbound string
	}{
		{svc("default", "bound"), engine.MeshBinding{Waypoint: gw("waypoint"), IstioWaypoint: true}, ""},
		{svc("apps", "by-ns"), engine.MeshBinding{Waypoint: gw("waypoint"), IstioWaypoint: true}, ""},
		{svc("default", "split"), engine.MeshBinding{Waypoint: gw("waypoint"), IstioWaypoint: true, Canary: gw("canary"), CanaryPercent: 25, CanaryIstio: true}, ""},
		{svc("default", "plain"), engine.MeshBinding{}, "no istio.io/use-waypoint label on it or its Namespace"},
		{svc("default", "workload-wp"), engine.MeshBinding{}, `serves "workload" traffic`},
		{svc("far", "not-admitted"), engine.MeshBinding{}, "does not admit namespace far"},
	} {
		got := mb.Of(c.svc)
		unbound := got.Unbound
		got.Unbound = ""
		if got != c.want || !strings.Contains(unbound, c.unbound) || (c.unbound == "") != (unbound == "") {
			t.Errorf("%s: %+v (unbound %q), want %+v (unbound saying %q)", c.svc.Short(), got, unbound, c.want, c.unbound)
		}
	}
}
