package profiles

import (
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
