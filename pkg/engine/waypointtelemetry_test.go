package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// waypointTelemetryDocs: admittingWaypoint's topology and two more
// Services bound to default/waypoint (one with a port, which a Telemetry
// names: it targets the whole Service), with istio-system admitted by that waypoint
// and holding a Service bound to it and a waypoint of its own; Telemetries in the root namespace (two
// namespace-wide, one targeting the waypoint class), in default (one
// namespace-wide, some targeting the waypoint or a Service) and in apps
// (one namespace-wide, one targeting a Service), and one namespace-wide in
// far, whose only Service is bound to none.
func waypointTelemetryDocs(t *testing.T) []string {
	return []string{
		crd("telemetry.istio.io", "Telemetry", "telemetries"), admittingWaypoint(t), `
apiVersion: v1
kind: Namespace
metadata: {name: istio-system, labels: {mesh: "on"}}
---
apiVersion: v1
kind: Service
metadata: {name: bound-2, namespace: default, labels: {istio.io/use-waypoint: waypoint}}
---
apiVersion: v1
kind: Service
metadata: {name: ported, namespace: default, labels: {istio.io/use-waypoint: waypoint}}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: root-svc, namespace: istio-system, labels: {istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: root-wp, namespace: istio-system}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}`,
		telemetry("istio-system", "mesh", 0, `accessLogging: [{providers: [{name: envoy}]}]
tracing: [{providers: [{name: zipkin}], randomSamplingPercentage: 1}]`),
		telemetry("istio-system", "mesh-later", 1, `tracing: [{randomSamplingPercentage: 99}]`),
		telemetry("apps", "apps-ns", 2, `tracing: [{randomSamplingPercentage: 30}]`),
		telemetry("default", "wp-ns", 3, `tracing: [{randomSamplingPercentage: 20}]`),
		telemetry("default", "on-waypoint", 4, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
accessLogging: [{match: {mode: SERVER}, disabled: true}]
tracing: [{match: {mode: CLIENT}, randomSamplingPercentage: 44}]`),
		telemetry("default", "on-bound", 5, `targetRefs: [{kind: Service, group: "", name: bound}]
tracing: [{randomSamplingPercentage: 50}]`),
		telemetry("apps", "on-by-ns", 6, `targetRefs: [{kind: Service, group: "", name: by-ns}]
tracing: [{customTags: {team: {literal: {value: apps}}}}]`),
		telemetry("istio-system", "on-class", 7, `targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio-waypoint}]
tracing: [{customTags: {class: {literal: {value: waypoint}}}}]`),
		telemetry("default", "on-plain", 8, `targetRefs: [{kind: Service, group: "", name: plain}]
tracing: [{randomSamplingPercentage: 80}]`),
		telemetry("default", "on-waypoint-later", 9, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
tracing: [{randomSamplingPercentage: 60}]`),
		telemetry("default", "on-port", 10, `targetRefs: [{kind: Service, group: "", name: ported, sectionName: http}]
tracing: [{randomSamplingPercentage: 70}]`),
		telemetry("default", "on-both", 11, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}, {kind: Service, group: "", name: bound}]
metrics: [{reportingInterval: 7s}]`),
		telemetry("far", "far-ns", 12, `tracing: [{randomSamplingPercentage: 5}]`),
	}
}

func service(ns, name string) topology.Ref {
	return topology.Ref{Kind: "Service", Namespace: ns, Name: name}
}

// stackAt lists the policies of the Telemetry context at target, in
// order, and its path.
func stackAt(res *engine.Result, target topology.Ref) (stack []string, path string) {
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != "Telemetry" || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			for _, s := range c.Stack {
				entry := s.Policy.Name + "@" + s.At.Short()
				if s.Conflicted {
					entry += " (Conflicted)"
				}
				stack = append(stack, entry)
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
	return stack, path
}

// At a waypoint istiod layers Telemetry per chain (istio/istio @ 86c9f01f
// pilot/pkg/model/telemetry.go applicableTelemetries, called with the
// waypoint proxy and a Service from
// pilot/pkg/networking/core/listener_waypoint.go, for the waypoint's own
// listeners with none): the root namespace's namespace-wide Telemetry,
// the waypoint namespace's, for a Service of another namespace that
// namespace's, then the Telemetries of ONE namespace (the Service's, or
// the waypoint's for its own listeners) targeting the waypoint, its class
// (from the root namespace) or the Service, oldest first
// (ShouldAttachPolicy); the listeners are a sidecar's inbound, so the
// server side counts.
func TestWaypointTelemetryLayering(t *testing.T) {
	res := compute(t, engine.Options{}, waypointTelemetryDocs(t)...)
	waypoint := istioGateway("default", "waypoint")

	// The waypoint's own listeners: namespace-wide ones and those
	// targeting it; the server side (on-waypoint's CLIENT tracing entry
	// does not count, its SERVER access log entry does).
	want(t, "waypoint", fieldsAt(t, res, waypoint), []string{
		"accessLogging.envoy.disabled=true@on-waypoint",
		`metrics.prometheus.reportingInterval="7s"@on-both`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=60@on-waypoint-later",
	})
	stack, path := stackAt(res, waypoint)
	want(t, "waypoint stack", stack, []string{"mesh@Gateway default/waypoint", "mesh-later@Gateway default/waypoint (Conflicted)",
		"wp-ns@Gateway default/waypoint", "on-waypoint@Gateway default/waypoint", "on-waypoint-later@Gateway default/waypoint",
		"on-both@Gateway default/waypoint"})
	want(t, "waypoint path", path, "GatewayClass istio-waypoint > Gateway default/waypoint")

	// A Service of the waypoint's namespace: the same, and its own, in
	// creation order with the waypoint's (on-waypoint-later is newer than
	// on-bound).
	want(t, "bound", fieldsAt(t, res, service("default", "bound")), []string{
		"accessLogging.envoy.disabled=true@on-waypoint",
		`metrics.prometheus.reportingInterval="7s"@on-both`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=60@on-waypoint-later",
	})
	stack, path = stackAt(res, service("default", "bound"))
	want(t, "bound stack", stack, []string{"mesh@Gateway default/waypoint", "mesh-later@Gateway default/waypoint (Conflicted)",
		"wp-ns@Gateway default/waypoint", "on-waypoint@Gateway default/waypoint", "on-bound@Service default/bound",
		"on-waypoint-later@Gateway default/waypoint", "on-both@Gateway default/waypoint", "on-both@Service default/bound"})
	want(t, "bound path", path, "GatewayClass istio-waypoint > Gateway default/waypoint > Service default/bound")
	// A Telemetry targeting both the waypoint and the Service applies
	// once, credited where it comes first.
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "Telemetry" && e.Target == service("default", "bound") {
			for _, f := range e.Contexts[0].Fields {
				if f.Policy.Name == "on-both" && f.At != waypoint {
					t.Errorf("on-both's %s credited at %s", f.Path, f.At.Short())
				}
			}
		}
	}
	// One without Telemetries of its own has the waypoint's.
	want(t, "bound-2", fieldsAt(t, res, service("default", "bound-2")), fieldsAt(t, res, waypoint))
	// A Telemetry naming a port targets the whole Service: Istio's
	// targetRefs have no sectionName (the API server drops it), and it
	// is reported.
	want(t, "ported", fieldsAt(t, res, service("default", "ported")), []string{
		"accessLogging.envoy.disabled=true@on-waypoint",
		`metrics.prometheus.reportingInterval="7s"@on-both`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=70@on-port",
	})
	port := service("default", "ported")
	port.SectionName = "http"
	want(t, "ported:http", fieldsAt(t, res, port), []string(nil))
	want(t, "on-port", status(t, res, "on-port", "Accepted"), "True/Accepted")
	var problems []string
	for _, p := range res.Problems {
		if p.Object.Name == "on-port" {
			problems = append(problems, p.Field+": "+p.Message)
		}
	}
	want(t, "on-port problems", problems, []string{"spec.targetRefs[0].sectionName: sectionName is not part of Telemetry's targetRefs; the API server drops it, so the policy targets the whole Service"})

	// A Service of another namespace: the namespace-wide ones of the root,
	// the waypoint's and its own namespace, in that order (apps-ns is the
	// older), then those targeting it; not those targeting the waypoint.
	want(t, "by-ns", fieldsAt(t, res, service("apps", "by-ns")), []string{
		"accessLogging.envoy={}@mesh",
		`tracing.customTags.team.literal.value="apps"@on-by-ns`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=30@apps-ns",
	})
	stack, path = stackAt(res, service("apps", "by-ns"))
	want(t, "by-ns stack", stack, []string{"mesh@Service apps/by-ns", "mesh-later@Service apps/by-ns (Conflicted)",
		"wp-ns@Service apps/by-ns", "apps-ns@Service apps/by-ns", "on-by-ns@Service apps/by-ns"})
	want(t, "by-ns path", path, "GatewayClass istio-waypoint > Gateway default/waypoint > Service apps/by-ns")

	// A Service of the root namespace at a waypoint of another: the root
	// namespace's again after the waypoint namespace's (its sampling, not
	// wp-ns's), and the class's Telemetry (istiod scans the root
	// namespace).
	want(t, "root-svc", fieldsAt(t, res, service("istio-system", "root-svc")), []string{
		"accessLogging.envoy={}@mesh",
		`tracing.customTags.class.literal.value="waypoint"@on-class`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=1@mesh",
	})
	// mesh took back the sampling it lost to wp-ns: it lost nothing.
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "Telemetry" && e.Target == service("istio-system", "root-svc") {
			for _, s := range e.Contexts[0].Stack {
				var lost []string
				for _, l := range s.Lost {
					lost = append(lost, l.Path)
				}
				switch s.Policy.Name {
				case "mesh":
					want(t, "mesh lost at root-svc", lost, []string(nil))
				case "wp-ns":
					want(t, "wp-ns lost at root-svc", lost, []string{"tracing.randomSamplingPercentage"})
				}
			}
		}
	}
	// A waypoint of the root namespace: the class's Telemetry, no other
	// namespace's.
	want(t, "root-wp", fieldsAt(t, res, istioGateway("istio-system", "root-wp")), []string{
		"accessLogging.envoy={}@mesh",
		`tracing.customTags.class.literal.value="waypoint"@on-class`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=1@mesh",
	})
	// Not at a Service of default: istiod scans default's Telemetries.
	for _, f := range fieldsAt(t, res, service("default", "bound")) {
		if strings.Contains(f, "on-class") {
			t.Errorf("bound: %s", f)
		}
	}

	// An unbound Service: nothing applies, its policy is not bound.
	want(t, "plain", fieldsAt(t, res, service("default", "plain")), []string(nil))
	want(t, "on-plain", status(t, res, "on-plain", "Accepted"), "False/AncestorNotBound")
	want(t, "mesh-later", status(t, res, "mesh-later", "Accepted"), "False/Conflicted")

	// A namespace-wide Telemetry names where it applies, waypoints
	// included; where there is none of them, it says so.
	for _, ps := range res.Policies {
		switch ps.Policy.Ref.Name {
		case "wp-ns":
			want(t, "wp-ns text", ps.Policy.UntargetedText(), "the Istio Gateways and waypoints of namespace default, and at waypoints the Services of namespace default and those its waypoints serve")
		case "mesh":
			want(t, "mesh text", ps.Policy.UntargetedText(), "the Istio Gateways and waypoints of every namespace (istio-system is the root namespace), and at waypoints every Service bound to one")
		}
	}
	want(t, "far-ns", status(t, res, "far-ns", "Accepted"), "False/TargetNotFound")
	if m := conditionMessage(res, "far-ns", "Accepted"); !strings.Contains(m, "no Gateway of Istio (class of istio.io/gateway-controller) or waypoint is in namespace far, nor a Service bound to a waypoint of another namespace") {
		t.Errorf("far-ns: %s", m)
	}

	// The ingress Gateway is still a client: on-waypoint's entries do
	// not reach it, wp-ns's does.
	want(t, "ingress", fieldsAt(t, res, istioGateway("default", "ingress")), []string{
		"accessLogging.envoy={}@mesh",
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=20@wp-ns",
	})
}

// An Incremental agrees with Compute as the Telemetries at a waypoint come
// and go (namespace-wide ones, on the waypoint, on its class, on a bound
// Service, one naming a port of a Service, which targets the Service) and
// as bindings change (a Service's label, a Namespace's): every target
// whose layering holds a changed level is recomputed.
func TestWaypointTelemetryIncremental(t *testing.T) {
	all := waypointTelemetryDocs(t)
	without := func(docs []string, names ...string) []string {
		out := slices.DeleteFunc(slices.Clone(docs), func(d string) bool {
			for _, n := range names {
				if strings.Contains(d, "kind: Telemetry\nmetadata: {name: "+n+",") {
					return true
				}
			}
			return false
		})
		if len(out) != len(docs)-len(names) {
			t.Fatalf("removing %v left %d of %d documents", names, len(out), len(docs))
		}
		return out
	}
	rebind := func(docs []string, from, to string) []string {
		out := slices.Clone(docs)
		for i := range out {
			out[i] = strings.Replace(out[i], from, to, 1)
		}
		if slices.Equal(out, docs) {
			t.Fatalf("no %q to rebind", from)
		}
		return out
	}
	steps := []struct {
		docs []string
		full bool
	}{
		{docs: without(all, "wp-ns", "on-class", "on-waypoint-later", "apps-ns", "on-port")},
		{docs: without(all, "on-class", "on-waypoint-later", "apps-ns", "on-port")},
		{docs: without(all, "on-waypoint-later", "apps-ns", "on-port")},
		{docs: without(all, "apps-ns", "on-port")},
		{docs: without(all, "on-port")},
		{docs: all},
		{docs: without(all, "mesh", "on-bound", "on-both")},
		{docs: all},
		// The Service's own Telemetries go, the waypoint's staying.
		{docs: without(all, "on-port")},
		{docs: all},
		{docs: without(all, "on-port", "on-both")},
		{docs: all},
		// Bindings are topology: a full computation.
		{docs: rebind(all, "metadata: {name: bound-2, namespace: default, labels: {istio.io/use-waypoint: waypoint}}", "metadata: {name: bound-2, namespace: default}"), full: true},
		{docs: rebind(all, `metadata: {name: apps, labels: {mesh: "on", istio.io/use-waypoint: waypoint, istio.io/use-waypoint-namespace: default}}`, `metadata: {name: apps, labels: {mesh: "on"}}`), full: true},
	}
	in := engine.NewIncremental(engine.Options{})
	for i, st := range steps {
		objs := decodeDocs(t, st.docs...)
		got := dump(t, in.Compute(objs))
		if i > 0 && in.LastChange().Full != st.full {
			t.Errorf("step %d: full = %v (%s), want %v", i, in.LastChange().Full, in.LastChange().Reason, st.full)
		}
		if w := dump(t, engine.Compute(objs, engine.Options{})); got != w {
			t.Fatalf("step %d: %s", i, firstDiff(got, w))
		}
	}
}
