package policy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Dependencies read from the annotation: names, alternatives of kinds at
// versions (or any version), rendered back to the same value; "none" for
// none; errors name the dependency and what is wrong.
func TestDependenciesSetting(t *testing.T) {
	const v = "Limitador Operator=Limitador.limitador.kuadrant.io/v1alpha1; Gateway API provider (istio / envoy gateway)=WasmPlugin.extensions.istio.io/v1alpha1,EnvoyFilter.networking.istio.io|EnvoyPatchPolicy.gateway.envoyproxy.io/v1alpha1"
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationDependencies: v}), nil)
	if got := DependenciesString(k.Dependencies); got != v || k.Origins[SettingDependencies] != FromAnnotation {
		t.Errorf("dependencies = %q (origin %q), want %q from the annotation", got, k.Origins[SettingDependencies], v)
	}
	if d := k.Dependencies[1]; len(d.Alternatives) != 2 || len(d.Alternatives[0]) != 2 || d.Alternatives[0][1].Version != "" || d.Alternatives[0][1].Group != "networking.istio.io" {
		t.Errorf("provider read as %#v", d)
	}
	if ds, err := ParseDependencies("none"); err != nil || ds != nil || DependenciesString(ds) != "none" {
		t.Errorf("none = %v, %v", ds, err)
	}
	for _, tc := range []struct{ v, err string }{
		{"Limitador", "want <name>=<Kind.group/version>"},
		{"=Limitador.limitador.kuadrant.io", "needs a name"},
		{"L=", `"": a kind is needed`},
		{"L=limitador.kuadrant.io/v1", "starts with an upper-case letter"},
		{"L=Limitador.limitador.kuadrant.io/", "the version after / is empty"},
		{"L=Limitador.limitador.kuadrant.io/v1|", `dependency "L": "": a kind is needed`},
		{"L=A.x; L=B.y", `dependency "L" is given twice`},
		{"L=A.x y/v1", "holds no spaces"},
		{"x=Foo", `"Foo": a dependency is a kind a CustomResourceDefinition serves, so it names its group`},
		{"x=Foo./v1", `"Foo./v1": the group after . is empty`},
	} {
		if _, err := ParseDependencies(tc.v); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want one saying %q", tc.v, err, tc.err)
		}
	}
}

// What a kind's implementation lacks: none when any alternative is served
// in full, at the version named (or any); every missing kind of each
// alternative named otherwise; nothing judged without served kinds.
func TestMissingDependencies(t *testing.T) {
	ds, err := ParseDependencies("Gateway API=HTTPRoute.gateway.networking.k8s.io/v1; " +
		"Provider=WasmPlugin.extensions.istio.io/v1alpha1,EnvoyFilter.networking.istio.io/v1alpha3|EnvoyPatchPolicy.gateway.envoyproxy.io; " +
		"Limitador Operator=Limitador.limitador.kuadrant.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	k := &Kind{Dependencies: ds}
	crd := func(group, kind string, versions ...string) *unstructured.Unstructured {
		var vs []any
		for _, v := range versions {
			vs = append(vs, map[string]any{"name": v, "served": true})
		}
		vs = append(vs, map[string]any{"name": "v0", "served": false})
		return &unstructured.Unstructured{Object: map[string]any{"kind": "CustomResourceDefinition",
			"spec": map[string]any{"group": group, "names": map[string]any{"kind": kind}, "versions": vs}}}
	}
	unestablished := crd("limitador.kuadrant.io", "Limitador", "v1alpha1")
	unestablished.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "False"}}}
	for _, tc := range []struct {
		name string
		crds []*unstructured.Unstructured
		want string
	}{
		{"all installed, Istio", []*unstructured.Unstructured{crd("gateway.networking.k8s.io", "HTTPRoute", "v1", "v1beta1"),
			crd("extensions.istio.io", "WasmPlugin", "v1alpha1"), crd("networking.istio.io", "EnvoyFilter", "v1alpha3"),
			crd("limitador.kuadrant.io", "Limitador", "v1alpha1")}, ""},
		{"Envoy Gateway at any version", []*unstructured.Unstructured{crd("gateway.networking.k8s.io", "HTTPRoute", "v1"),
			crd("gateway.envoyproxy.io", "EnvoyPatchPolicy", "v1beta9"), crd("limitador.kuadrant.io", "Limitador", "v1alpha1")}, ""},
		{"Istio in part, Limitador at another version", []*unstructured.Unstructured{crd("gateway.networking.k8s.io", "HTTPRoute", "v1"),
			crd("networking.istio.io", "EnvoyFilter", "v1alpha3"), crd("limitador.kuadrant.io", "Limitador", "v1beta1")},
			"Provider (the cluster serves no WasmPlugin.extensions.istio.io/v1alpha1; nor EnvoyPatchPolicy.gateway.envoyproxy.io); " +
				"Limitador Operator (the cluster serves no Limitador.limitador.kuadrant.io/v1alpha1)"},
		{"a version not served, a CRD not established", []*unstructured.Unstructured{crd("gateway.networking.k8s.io", "HTTPRoute", "v0"),
			crd("gateway.envoyproxy.io", "EnvoyPatchPolicy", "v1alpha1"), unestablished},
			"Gateway API (the cluster serves no HTTPRoute.gateway.networking.k8s.io/v1); Limitador Operator (the cluster serves no Limitador.limitador.kuadrant.io/v1alpha1)"},
	} {
		if got := k.MissingDependencies(ServedByCRDs(tc.crds)); got != tc.want {
			t.Errorf("%s: missing %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := k.MissingDependencies(nil); got != "" {
		t.Errorf("not known: missing %q, want nothing judged", got)
	}
}
