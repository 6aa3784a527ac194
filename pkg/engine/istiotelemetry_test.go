package engine_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// telemetry is a Telemetry in namespace ns, created min minutes after the
// hour.
func telemetry(ns, name string, min int, spec string) string {
	return fmt.Sprintf(`
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: %s, namespace: %s, creationTimestamp: "2026-01-01T00:%02d:00Z"}
spec:
%s
`, name, ns, min, indent(spec, "  "))
}

// telemetryDocs: in the root namespace two Telemetries without selector
// (istiod takes the older) and one with a selector (it applies in the
// root namespace only); in default two without selector, one selecting
// the ingress Gateway's pods by its infrastructure label and one
// targeting it.
func telemetryDocs() []string {
	return []string{
		crd("telemetry.istio.io", "Telemetry", "telemetries"), istioTopo,
		telemetry("istio-system", "mesh", 0, `accessLogging: [{providers: [{name: envoy}]}]
tracing: [{providers: [{name: zipkin}], randomSamplingPercentage: 1}]
metrics: [{overrides: [{match: {metric: REQUEST_COUNT}, disabled: true}]}]`),
		telemetry("istio-system", "mesh-later", 1, `tracing: [{randomSamplingPercentage: 99}]`),
		telemetry("istio-system", "root-selector", 2, `selector: {matchLabels: {tier: edge}}
tracing: [{randomSamplingPercentage: 7}]`),
		telemetry("default", "ns", 3, `tracing: [{randomSamplingPercentage: 50}]`),
		telemetry("default", "ns-later", 4, `accessLogging: [{disabled: true}]`),
		telemetry("default", "edge", 5, `selector: {matchLabels: {tier: edge}}
accessLogging: [{providers: [{name: envoy}], disabled: true}]`),
		telemetry("default", "by-ref", 6, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ingress}]
tracing: [{customTags: {team: {literal: {value: edge}}}}]`),
	}
}

func istioGateway(ns, name string) topology.Ref {
	return topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: ns, Name: name}
}

// fieldsAt renders the effective Telemetry fields at a Gateway as
// path=value@policy.
func fieldsAt(t *testing.T, res *engine.Result, gw topology.Ref) []string {
	t.Helper()
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != "Telemetry" || e.Target != gw {
			continue
		}
		for _, c := range e.Contexts {
			for _, f := range c.Fields {
				v, _ := json.Marshal(f.Value)
				out = append(out, fmt.Sprintf("%s=%s@%s", f.Path, v, f.Attachment.Policy.Name))
			}
		}
	}
	return out
}

func conditionMessage(res *engine.Result, name, typ string) string {
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		for _, c := range ps.Conditions {
			if c.Type == typ {
				return c.Message
			}
		}
	}
	return ""
}

// TestIstioTelemetryLayering: the Telemetries reaching a Gateway merge as
// istiod merges them (pilot/pkg/model/telemetry.go at istio/istio
// 86c9f01fd73): the root namespace's, then the namespace's, then those
// selecting or targeting the Gateway, later ones overriding per section
// and provider; of several without selector in one namespace only the
// oldest applies, the others are Conflicted; a selecting Telemetry of the
// root namespace does not reach another namespace's Gateways.
func TestIstioTelemetryLayering(t *testing.T) {
	res := compute(t, engine.Options{}, telemetryDocs()...)
	want(t, "ingress", fieldsAt(t, res, istioGateway("default", "ingress")), []string{
		"accessLogging.envoy.disabled=true@edge",
		"metrics.prometheus.overrides.REQUEST_COUNT.disabled=true@mesh",
		`tracing.customTags.team.literal.value="edge"@by-ref`,
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=50@ns",
	})
	want(t, "other", fieldsAt(t, res, istioGateway("default", "other")), []string{
		"accessLogging.envoy={}@mesh",
		"metrics.prometheus.overrides.REQUEST_COUNT.disabled=true@mesh",
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=50@ns",
	})
	want(t, "apps-gw", fieldsAt(t, res, istioGateway("apps", "apps-gw")), []string{
		"accessLogging.envoy={}@mesh",
		"metrics.prometheus.overrides.REQUEST_COUNT.disabled=true@mesh",
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=1@mesh",
	})
	for _, name := range []string{"mesh-later", "ns-later"} {
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "False/Conflicted")
		if m := conditionMessage(res, name, "Accepted"); !strings.Contains(m, "istiod applies only the oldest such Telemetry of a namespace (it is older)") {
			t.Errorf("%s: %s", name, m)
		}
	}
	want(t, "root-selector Accepted", status(t, res, "root-selector", "Accepted"), "False/TargetNotFound")
	if m := conditionMessage(res, "root-selector", "Accepted"); !strings.Contains(m, "no Istio Gateway of Istio") && !strings.Contains(m, "in namespace istio-system") {
		t.Errorf("root-selector: %s", m)
	}
	// mesh's sampling holds at apps-gw only; ns's replaces it in default.
	want(t, "mesh Programmed", status(t, res, "mesh", "Programmed"), "True/PartiallyProgrammed")
	if m := conditionMessage(res, "mesh", "Programmed"); !strings.Contains(m, "tracing.randomSamplingPercentage") {
		t.Errorf("mesh: %s", m)
	}
	for _, name := range []string{"ns", "edge", "by-ref"} {
		want(t, name+" Programmed", status(t, res, name, "Programmed"), "True/Programmed")
	}
}

// TestIncrementalIstioTelemetry: deleting the namespace's oldest
// Telemetry without selector puts the next one in its place; the
// incremental engine gives what a full computation gives.
func TestIncrementalIstioTelemetry(t *testing.T) {
	objs, probs := manifest.Decode(strings.NewReader(strings.Join(telemetryDocs(), "\n---\n")), t.Name())
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	in := engine.NewIncremental(engine.Options{})
	in.Compute(objs)
	objs = slices.DeleteFunc(objs, func(o engine.Object) bool { return o.Object.GetName() == "ns" })
	res := in.Compute(objs)
	full := engine.Compute(objs, engine.Options{})
	for _, gw := range []topology.Ref{istioGateway("default", "ingress"), istioGateway("default", "other")} {
		want(t, gw.Name+" incremental = full", fieldsAt(t, res, gw), fieldsAt(t, full, gw))
	}
	want(t, "other", fieldsAt(t, res, istioGateway("default", "other")), []string{
		"accessLogging.envoy.disabled=true@ns-later",
		"metrics.prometheus.overrides.REQUEST_COUNT.disabled=true@mesh",
		`tracing.provider="zipkin"@mesh`,
		"tracing.randomSamplingPercentage=1@mesh",
	})
	want(t, "ns-later Accepted", status(t, res, "ns-later", "Accepted"), "True/Accepted")
}
