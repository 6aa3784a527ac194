package profiles

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
		{"NginxProxy", `{spec: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: p, namespace: ngf}}}`,
			topology.Ref{Group: "gateway.nginx.org", Kind: "NginxProxy", Namespace: "ngf", Name: "p"}, true},
		// NGF ignores a class's NginxProxy reference without namespace.
		{"NginxProxy without namespace", `{spec: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: p}}}`, topology.Ref{}, false},
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
		{"a string", `{spec: {mergeGateways: "yes"}}`, false, false, "spec.mergeGateways", `"yes" is not a boolean`},
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
	// Only the ways to the backend references are kept, where they are
	// (a Gateway's EnvoyProxy merges over its class's field by field):
	// sink types and a file sink's path go, entries keep their places.
	b, _ := json.Marshal(trimmed.Object["spec"])
	if strings.Contains(string(b), "type") || strings.Contains(string(b), "stdout") {
		t.Errorf("the trim kept more than the backend references: %s", b)
	}
	if sinks, _, _ := unstructured.NestedSlice(trimmed.Object, "spec", "telemetry", "accessLog", "settings"); len(sinks) != 2 {
		t.Errorf("the trim kept %d access log settings, want both in place: %s", len(sinks), b)
	}
}

// A Gateway's own EnvoyProxy is named by its infrastructure's
// parametersRef, in its namespace; its spec replaces the class's, or
// merges over it (RFC 7386) by its mergeType; the trim keeps the merge type
// and the telemetry backends where they are, so trimmed proxies merge as
// whole ones do.
func TestGatewayParameters(t *testing.T) {
	gw := mustObj(t, `{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: g, namespace: apps}, spec: {infrastructure: {parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: own}}}}`)
	if ref, ok := GatewayParametersRef(gw); !ok || ref.String() != "EnvoyProxy.gateway.envoyproxy.io apps/own" {
		t.Errorf("GatewayParametersRef = %v %v", ref, ok)
	}
	for _, doc := range []string{
		`{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: g, namespace: apps}, spec: {infrastructure: {parametersRef: {group: "", kind: ConfigMap, name: own}}}}`,
		`{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: g, namespace: apps}, spec: {infrastructure: {labels: {a: b}}}}`,
		`{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: g, namespace: apps}, spec: {infrastructure: {parametersRef: "x"}}}`,
	} {
		if ref, ok := GatewayParametersRef(mustObj(t, doc)); ok {
			t.Errorf("GatewayParametersRef(%s) = %v, want none", doc, ref)
		}
	}
	class := mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: cls, namespace: sys}, spec: {telemetry: {tracing: {provider: {backendRefs: [{name: tr}]}}, metrics: {sinks: [{openTelemetry: {backendRefs: [{name: m1}]}}]}}}}`)
	for _, c := range []struct{ mergeType, want string }{
		{"", "Service apps/m2"},
		{"Replace", "Service apps/m2"},
		{"Bogus", "Service apps/m2"},
		{"JSONMerge", "Service apps/tr Service apps/m2"},
		{"StrategicMerge", "Service apps/tr Service apps/m2"},
	} {
		own := mustObj(t, fmt.Sprintf(`{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: own, namespace: apps}, spec: {mergeType: %q, telemetry: {metrics: {sinks: [{openTelemetry: {backendRefs: [{name: m2}]}}]}}}}`, c.mergeType))
		for _, trim := range []bool{false, true} {
			cl, ow := class.DeepCopy(), own.DeepCopy()
			if trim {
				cl, ow = TrimClassParameters(cl), TrimClassParameters(ow)
			}
			eff := EffectiveParameters(cl, ow)
			var got []string
			for _, r := range TelemetryBackendRefs(eff) {
				got = append(got, r.String())
			}
			if strings.Join(got, " ") != c.want || eff.GetName() != "own" {
				t.Errorf("mergeType %q (trimmed %v): %s's backends %q, want %q", c.mergeType, trim, eff.GetName(), got, c.want)
			}
		}
	}
	// Envoy Gateway merges typed specs: a null or an empty list of the
	// Gateway's is no value (omitempty), and keeps the class's.
	del := mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: own, namespace: apps}, spec: {mergeType: JSONMerge, telemetry: {tracing: null, metrics: {sinks: []}}}}`)
	if got := TelemetryBackendRefs(EffectiveParameters(class, del)); len(got) != 2 {
		t.Errorf("null tracing, empty sinks: backends %v, want the class's both", got)
	}
	// A list of the Gateway's replaces the class's whole, trimmed or not,
	// even when its entries name no backend.
	fileSink := mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: own, namespace: apps}, spec: {mergeType: JSONMerge, telemetry: {metrics: {sinks: [{type: Prometheus}]}}}}`)
	for _, trim := range []bool{false, true} {
		cl, ow := class.DeepCopy(), fileSink.DeepCopy()
		if trim {
			cl, ow = TrimClassParameters(cl), TrimClassParameters(ow)
		}
		if got := TelemetryBackendRefs(EffectiveParameters(cl, ow)); len(got) != 1 || got[0].Name != "tr" {
			t.Errorf("sinks replaced (trimmed %v): backends %v, want the class's tracing only", trim, got)
		}
	}
	if EffectiveParameters(nil, nil) != nil || EffectiveParameters(class, nil) != class || EffectiveParameters(nil, del) != del {
		t.Error("EffectiveParameters with a level missing is not the other level")
	}
}

// The trim keeps the names of an EnvoyProxy's dynamic modules (an
// EnvoyExtensionPolicy's allowlist), in place, and nothing else of them.
func TestTrimKeepsDynamicModuleNames(t *testing.T) {
	u := TrimClassParameters(mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: p, namespace: sys},
spec: {dynamicModules: [{name: a, source: {remote: {url: "https://x/a.so", sha256: abc}}}, {source: {local: {path: /b.so}}}, {name: c, doNotClose: true}]}}`))
	b, _ := json.Marshal(u.Object["spec"])
	if string(b) != `{"dynamicModules":[{"name":"a"},{},{"name":"c"}]}` {
		t.Errorf("trimmed spec %s, want the names alone, in place", b)
	}
}

// The trim keeps an EnvoyProxy's GeoIP provider whole (a SecurityPolicy's
// GeoIP requirements read it), and nothing else of geoIP.
func TestTrimKeepsGeoIPProvider(t *testing.T) {
	u := TrimClassParameters(mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: p, namespace: sys},
spec: {geoIP: {provider: {type: MaxMind, maxMind: {cityDbSource: {local: {path: /db/c.mmdb}}}}, other: 1}, concurrency: 2}}`))
	b, _ := json.Marshal(u.Object["spec"])
	if string(b) != `{"geoIP":{"provider":{"maxMind":{"cityDbSource":{"local":{"path":"/db/c.mmdb"}}},"type":"MaxMind"}}}` {
		t.Errorf("trimmed spec %s, want the GeoIP provider alone", b)
	}
}

// The Lua validation mode and the routing type are kept: where Lua
// validation is Disabled, Envoy Gateway does not parse a Gateway's inline
// Lua (regexFields unless=); under routingType Service it sends external
// services to a Service's cluster IP (clusterIPRouting).
func TestTrimKeepsLuaValidationAndRoutingType(t *testing.T) {
	u := TrimClassParameters(mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, metadata: {name: p, namespace: sys},
spec: {luaValidation: Disabled, routingType: Service, concurrency: 2}}`))
	b, _ := json.Marshal(u.Object["spec"])
	if string(b) != `{"luaValidation":"Disabled","routingType":"Service"}` {
		t.Errorf("trimmed spec %s, want luaValidation and routingType alone", b)
	}
}

// NGF merges a Gateway's NginxProxy over its class's whatever it says:
// field by field, lists whole; an empty disabledFeatures clears the
// class's, an empty list NGF does not clear (omitempty) leaves it, and a
// null is unset. Trimming keeps the telemetry fields the requirements
// read, and nothing of the deployment's settings.
func TestEffectiveParametersNginxProxy(t *testing.T) {
	class := TrimClassParameters(mustObj(t, `{apiVersion: gateway.nginx.org/v1alpha2, kind: NginxProxy, metadata: {name: c, namespace: ngf},
  spec: {kubernetes: {deployment: {replicas: 2}}, telemetry: {exporter: {endpoint: "otel:4317", interval: 5s},
    disabledFeatures: [DisableTracing], serviceName: x}}}`))
	if got, _ := json.Marshal(class.Object["spec"]); string(got) != `{"telemetry":{"disabledFeatures":["DisableTracing"],"exporter":{"endpoint":"otel:4317"}}}` {
		t.Errorf("trimmed class spec %s", got)
	}
	for _, tc := range []struct{ gw, want string }{
		{`{}`, `{"telemetry":{"disabledFeatures":["DisableTracing"],"exporter":{"endpoint":"otel:4317"}}}`},
		{`{telemetry: {disabledFeatures: []}}`, `{"telemetry":{"disabledFeatures":[],"exporter":{"endpoint":"otel:4317"}}}`},
		{`{telemetry: {exporter: {endpoint: null}, spanAttributes: []}}`, `{"telemetry":{"disabledFeatures":["DisableTracing"],"exporter":{"endpoint":"otel:4317"},"spanAttributes":[]}}`},
		{`{metrics: {port: 9113}, rewriteClientIP: {setIPRecursively: true, trustedAddresses: []}, kubernetes: {service: {loadBalancerSourceRanges: []}}}`,
			`{"kubernetes":{"service":{}},"metrics":{"port":9113},"rewriteClientIP":{"setIPRecursively":true,"trustedAddresses":[]},"telemetry":{"disabledFeatures":["DisableTracing"],"exporter":{"endpoint":"otel:4317"}}}`},
	} {
		gw := mustObj(t, `{apiVersion: gateway.nginx.org/v1alpha2, kind: NginxProxy, metadata: {name: own, namespace: default}, spec: `+tc.gw+`}`)
		out := EffectiveParameters(class, gw)
		if got, _ := json.Marshal(out.Object["spec"]); string(got) != tc.want || out.GetName() != "own" {
			t.Errorf("Gateway's %s over the class's: %s %s, want %s", tc.gw, out.GetName(), got, tc.want)
		}
	}
	// A level of another kind is not merged.
	ep := mustObj(t, `{apiVersion: gateway.envoyproxy.io/v1alpha1, kind: EnvoyProxy, spec: {mergeType: JSONMerge}}`)
	if EffectiveParameters(class, ep) != ep {
		t.Error("an EnvoyProxy over an NginxProxy: want the Gateway's alone")
	}
	if ParametersKindOf(NGFController) != NginxProxy || ParametersKindOf(EnvoyGatewayController) != EnvoyProxy || ParametersKindOf("x") != (topology.GroupKind{}) {
		t.Error("ParametersKindOf")
	}
	if ChecksWithoutParameters(NGFController) || !ChecksWithoutParameters(EnvoyGatewayController) {
		t.Error("ChecksWithoutParameters")
	}
}
