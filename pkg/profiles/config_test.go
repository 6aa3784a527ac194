package profiles

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// egConfigMap is a ConfigMap holding doc under Envoy Gateway's key.
func egConfigMap(doc string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "envoy-gateway-config", "namespace": "envoy-gateway-system"},
		"data":     map[string]any{egConfigKey: doc},
	}}
}

const egHeader = "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\nprovider:\n  type: Kubernetes\n"

// Envoy Gateway's configuration: every feature is off unless set, Lua as
// LuaDisabled reads it (enableLua over the deprecated disableLua).
func TestConfiguration(t *testing.T) {
	off := map[string]bool{egEnableLua: false, egEnableEnvoyPatchPolicy: false, egEnableBackend: false, EGEnableSDSSecretRef: false, EGMergeGateways: false, EGDefaultDynamicModules: false, "EnvoyGateway.envoyProxy.geoIP": false,
		"EnvoyGateway.envoyProxy.luaValidation": false, "EnvoyGateway.envoyProxy.routingType": false}
	with := func(on ...string) map[string]bool {
		m := maps.Clone(off)
		for _, f := range on {
			m[f] = true
		}
		return m
	}
	for _, tc := range []struct {
		name, doc string
		want      map[string]bool
		problem   string
	}{
		{"the Helm chart's default", egHeader, off, ""},
		{"extensionApis null", egHeader + "extensionApis:\n", off, ""},
		{"all on", egHeader + "extensionApis:\n  enableEnvoyPatchPolicy: true\n  enableBackend: true\n  enableLua: true\n  enableSDSSecretRef: true\n", with(egEnableLua, egEnableEnvoyPatchPolicy, egEnableBackend, EGEnableSDSSecretRef), ""},
		{"SDS not a boolean", egHeader + "extensionApis:\n  enableSDSSecretRef: 1\n", off, "extensionApis.enableSDSSecretRef is not a boolean"},
		{"deprecated disableLua false", egHeader + "extensionApis:\n  disableLua: false\n", with(egEnableLua),
			"disableLua and enableLua have the same value"},
		{"disableLua true", egHeader + "extensionApis:\n  disableLua: true\n", off, ""},
		{"enableLua with disableLua false", egHeader + "extensionApis:\n  enableLua: true\n  disableLua: false\n", with(egEnableLua), ""},
		{"enableLua wins over disableLua true", egHeader + "extensionApis:\n  enableLua: true\n  disableLua: true\n", with(egEnableLua), "have the same value"},
		{"not a boolean", egHeader + "extensionApis:\n  enableBackend: \"yes\"\n  enableLua: true\n", with(egEnableLua), "extensionApis.enableBackend is not a boolean"},
		{"extensionApis a list", egHeader + "extensionApis: [1]\n", off, "extensionApis is not an object"},
		{"merged Gateways by default", egHeader + "envoyProxy:\n  mergeGateways: true\n", with(EGMergeGateways), ""},
		{"merged Gateways with extensions", egHeader + "envoyProxy:\n  mergeGateways: true\nextensionApis:\n  enableLua: true\n", with(EGMergeGateways, egEnableLua), ""},
		{"envoyProxy without mergeGateways", egHeader + "envoyProxy:\n  mergeBackends: true\n", off, ""},
		{"default dynamic modules", egHeader + "envoyProxy:\n  dynamicModules: [{name: a}]\n", with(EGDefaultDynamicModules), ""},
		{"no default dynamic modules", egHeader + "envoyProxy:\n  dynamicModules: []\n", off, ""},
		{"default GeoIP", egHeader + "envoyProxy:\n  geoIP: {provider: {type: MaxMind}}\n", with("EnvoyGateway.envoyProxy.geoIP"), ""},
		{"default routing type and Lua validation", egHeader + "envoyProxy:\n  routingType: Service\n  luaValidation: Disabled\n",
			with("EnvoyGateway.envoyProxy.routingType", "EnvoyGateway.envoyProxy.luaValidation"), ""},
		{"empty default routing type", egHeader + "envoyProxy:\n  routingType: \"\"\n", off, ""},
		{"mergeGateways not a boolean", egHeader + "envoyProxy:\n  mergeGateways: \"yes\"\nextensionApis:\n  enableLua: true\n", with(egEnableLua), "envoyProxy.mergeGateways is not a boolean"},
		{"envoyProxy a string", egHeader + "envoyProxy: x\n", off, "envoyProxy is not an object"},
		{"two problems", egHeader + "envoyProxy: x\nextensionApis: [1]\n", off, "envoyProxy is not an object; extensionApis is not an object"},
		{"not YAML", "kind: [", nil, "is not YAML"},
		{"another kind", "apiVersion: v1\nkind: Pod\n", nil, `its kind is "Pod", not EnvoyGateway`},
		{"another group", "apiVersion: example.com/v1\nkind: EnvoyGateway\n", nil, `its apiVersion is "example.com/v1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, field, err := Configuration(egConfigMap(tc.doc))
			if !ok {
				t.Fatal("not read as a configuration")
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("features %v, want %v", got, tc.want)
			}
			switch {
			case tc.problem == "" && err != nil:
				t.Errorf("problem %q at %s", err, field)
			case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem) || field != "data[envoy-gateway.yaml]"):
				t.Errorf("problem %v at %q, want one saying %q at data[envoy-gateway.yaml]", err, field, tc.problem)
			}
		})
	}
	// Not configurations: other ConfigMaps, a copy whose values were
	// dropped (the controller's cache keeps keys only), other kinds.
	other := egConfigMap(egHeader)
	other.Object["data"] = map[string]any{"ca.crt": "x"}
	stripped := egConfigMap("")
	secret := egConfigMap(egHeader)
	secret.SetKind("Secret")
	for name, u := range map[string]*unstructured.Unstructured{"other": other, "stripped": stripped, "secret": secret, "nil": nil} {
		if IsConfiguration(u) {
			t.Errorf("%s: read as a configuration", name)
		}
		if f, ok, _, err := Configuration(u); ok || f != nil || err != nil {
			t.Errorf("%s: %v %v %v", name, f, ok, err)
		}
	}
}

// The profiles' gates name features the configuration reader sets, or
// those only --feature sets (NGINX Gateway Fabric's flags).
func TestGatesNameReadFeatures(t *testing.T) {
	read, _, _, _ := Configuration(egConfigMap(egHeader))
	n, flagOnly := 0, 0
	for _, p := range All() {
		for _, g := range p.Spec.FeatureGates {
			n++
			if slices.Contains(FlagOnlyFeatures, g.Feature) {
				flagOnly++
				continue
			}
			if _, ok := read[g.Feature]; !ok {
				t.Errorf("%s: gate %s names a feature the configuration reader does not set", p.Spec.GroupKind, g.Feature)
			}
		}
	}
	if n-flagOnly < 2 {
		t.Errorf("%d gates read from a configuration, want Envoy Gateway's EnvoyPatchPolicy and Lua", n-flagOnly)
	}
	if flagOnly != 3 {
		t.Errorf("%d flag-only gates, want NGF's SnippetsPolicy, PayloadProcessor and ExternalLoadBalancer", flagOnly)
	}
}

// The controller name Envoy Gateway's configuration gives, "" when it
// gives none or the object holds no configuration.
func TestControllerName(t *testing.T) {
	for doc, want := range map[string]string{
		egHeader: "",
		egHeader + "gateway:\n  controllerName: example.com/eg-tenant\n": "example.com/eg-tenant",
		egHeader + "gateway: [1]\n":                                      "",
		"kind: [":                                                        "",
	} {
		if got := ControllerName(egConfigMap(doc)); got != want {
			t.Errorf("ControllerName(%q) = %q, want %q", doc, got, want)
		}
	}
	if got := ControllerName(nil); got != "" {
		t.Errorf("ControllerName(nil) = %q", got)
	}
}
