package profiles

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/topology"
)

func mustObj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestClassParametersRef(t *testing.T) {
	for _, tc := range []struct {
		name, class string
		want        topology.Ref
		ok          bool
	}{
		{"namespace given", `{spec: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: p, namespace: eg}}}`,
			topology.Ref{Group: "gateway.envoyproxy.io", Kind: "EnvoyProxy", Namespace: "eg", Name: "p"}, true},
		{"namespace defaults to default", `{spec: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: p}}}`,
			topology.Ref{Group: "gateway.envoyproxy.io", Kind: "EnvoyProxy", Namespace: "default", Name: "p"}, true},
		{"another kind", `{spec: {parametersRef: {group: "", kind: ConfigMap, name: p}}}`, topology.Ref{}, false},
		{"no name", `{spec: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy}}}`, topology.Ref{}, false},
		{"no parametersRef", `{spec: {controllerName: x}}`, topology.Ref{}, false},
		{"parametersRef not an object", `{spec: {parametersRef: 3}}`, topology.Ref{}, false},
		{"fields of the wrong type", `{spec: {parametersRef: {group: 1, kind: [], name: {}}}}`, topology.Ref{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ClassParametersRef(mustObj(t, tc.class))
			if got != tc.want || ok != tc.ok {
				t.Errorf("ClassParametersRef = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestMergesGateways(t *testing.T) {
	for _, tc := range []struct {
		name, params      string
		merged, set       bool
		field, errMessage string
	}{
		{"true", `{spec: {mergeGateways: true}}`, true, true, "", ""},
		{"false", `{spec: {mergeGateways: false}}`, false, true, "", ""},
		{"unset", `{spec: {provider: {type: Kubernetes}}}`, false, false, "", ""},
		{"null", `{spec: {mergeGateways: null}}`, false, false, "", ""},
		{"no spec", `{metadata: {name: p}}`, false, false, "", ""},
		{"a string", `{spec: {mergeGateways: "yes"}}`, false, false, "spec.mergeGateways", "spec.mergeGateways is yes, not a boolean"},
		{"spec not an object", `{spec: [1]}`, false, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, set, field, err := MergesGateways(mustObj(t, tc.params))
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if merged != tc.merged || set != tc.set || field != tc.field || msg != tc.errMessage {
				t.Errorf("MergesGateways = %v, %v, %q, %q; want %v, %v, %q, %q", merged, set, field, msg, tc.merged, tc.set, tc.field, tc.errMessage)
			}
		})
	}
}

func TestIsClassParameters(t *testing.T) {
	if !IsClassParameters(mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy}`)) {
		t.Error("an EnvoyProxy is class parameters")
	}
	for _, y := range []string{`{apiVersion: v1, kind: EnvoyProxy}`, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: Backend}`} {
		if IsClassParameters(mustObj(t, y)) {
			t.Errorf("%s is not class parameters", y)
		}
	}
	if IsClassParameters(nil) {
		t.Error("nil is not class parameters")
	}
}

func TestTrimClassParameters(t *testing.T) {
	u := mustObj(t, `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p, namespace: eg, uid: u1, resourceVersion: "7", labels: {a: b}, managedFields: [{manager: x}]}
spec:
  mergeGateways: true
  provider: {type: Kubernetes, kubernetes: {envoyDeployment: {replicas: 3}}}
status: {x: 1}`)
	want := mustObj(t, `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p, namespace: eg, uid: u1, resourceVersion: "7"}
spec: {mergeGateways: true}`)
	got := TrimClassParameters(u)
	gy, _ := yaml.Marshal(got.Object)
	wy, _ := yaml.Marshal(want.Object)
	if string(gy) != string(wy) {
		t.Errorf("trimmed:\n%s\nwant:\n%s", gy, wy)
	}
	if m, set, _, _ := MergesGateways(got); !m || !set {
		t.Error("the trimmed object no longer merges Gateways")
	}
	unset := TrimClassParameters(mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: q}, spec: {logging: {}}}`))
	if _, ok := unset.Object["spec"]; ok {
		t.Errorf("a spec without mergeGateways is kept: %v", unset.Object)
	}
}

// An EnvoyProxy's telemetry backends are read from its traces, access
// logs (OpenTelemetry and ALS sinks) and metrics, each once, with the
// defaults of a backendRef (a Service of the EnvoyProxy's namespace), and
// survive the trim the cluster reader and controller cache apply.
func TestTelemetryBackendRefs(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p, namespace: sys}
spec:
  mergeGateways: true
  telemetry:
    tracing: {provider: {type: OpenTelemetry, backendRefs: [{name: otel, namespace: obs, kind: Backend, group: gateway.envoyproxy.io}]}}
    accessLog:
      settings:
      - sinks:
        - {type: OpenTelemetry, openTelemetry: {backendRefs: [{name: otel, namespace: obs, kind: Backend, group: gateway.envoyproxy.io}, {name: collector, port: 4317}]}}
        - {type: ALS, als: {backendRefs: [{name: als, group: core, kind: Service}]}}
        - {type: File, file: {path: /dev/stdout}}
      - sinks: "not a list"
    metrics:
      sinks: [{type: OpenTelemetry, openTelemetry: {backendRefs: [{name: metrics, namespace: obs}, {namespace: obs}, "x"]}}]
`), &u.Object); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range TelemetryBackendRefs(u) {
		got = append(got, r.String())
	}
	want := []string{"Backend.gateway.envoyproxy.io obs/otel", "Service sys/collector", "Service sys/als", "Service obs/metrics"}
	if !slices.Equal(got, want) {
		t.Errorf("TelemetryBackendRefs = %q, want %q", got, want)
	}
	trimmed := TrimClassParameters(u.DeepCopy())
	var again []string
	for _, r := range TelemetryBackendRefs(trimmed) {
		again = append(again, r.String())
	}
	if !slices.Equal(again, want) {
		t.Errorf("after the trim: %q, want %q", again, want)
	}
	if merged, set, _, err := MergesGateways(trimmed); !merged || !set || err != nil {
		t.Errorf("the trim lost mergeGateways: %v %v %v", merged, set, err)
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(trimmed.Object, "spec", "telemetry", "accessLog"); has {
		t.Errorf("the trim kept more than the backend references: %v", trimmed.Object["spec"])
	}
}
