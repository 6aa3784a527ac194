package profiles

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The features of Envoy Gateway's configuration (its EnvoyGateway
// object, extensionApis) that its profiles' feature gates name. Each is
// off by default in Envoy Gateway v1.9.
const (
	egEnableLua              = "EnvoyGateway.extensionApis.enableLua"
	egEnableEnvoyPatchPolicy = "EnvoyGateway.extensionApis.enableEnvoyPatchPolicy"
	egEnableBackend          = "EnvoyGateway.extensionApis.enableBackend"
	// EGEnableSDSSecretRef lets a BackendTLSPolicy at Envoy Gateway's
	// Gateways name an SDS reference Secret for its CA
	// (policy.CAReading.SDSFeature).
	EGEnableSDSSecretRef = "EnvoyGateway.extensionApis.enableSDSSecretRef"
)

// egConfigKey is the key of Envoy Gateway's ConfigMap that holds its
// configuration (the Helm chart's envoy-gateway-config).
const egConfigKey = "envoy-gateway.yaml"

// ConfigMapNames are the names that the implementations' installers give
// the ConfigMaps holding their configuration: a cluster reader gets those
// (in every namespace) for Configuration to read.
var ConfigMapNames = []string{"envoy-gateway-config"}

// IsConfiguration reports whether u holds an implementation's
// configuration that Configuration reads: a ConfigMap with Envoy
// Gateway's key, whatever its name. A copy whose values were dropped
// (keys only) holds none.
func IsConfiguration(u *unstructured.Unstructured) bool {
	if u == nil || u.GetKind() != "ConfigMap" || u.GroupVersionKind().Group != "" {
		return false
	}
	doc, _, _ := unstructured.NestedString(u.Object, "data", egConfigKey)
	return strings.TrimSpace(doc) != ""
}

// Configuration reads the features that the implementation's
// configuration held by u sets, each on or off (ok is false when u holds
// none: see IsConfiguration). A configuration it cannot read gives the
// field and why; the features are then those it could read, which the
// implementation itself would refuse to start with.
func Configuration(u *unstructured.Unstructured) (features map[string]bool, ok bool, field string, err error) {
	if !IsConfiguration(u) {
		return nil, false, "", nil
	}
	doc, _, _ := unstructured.NestedString(u.Object, "data", egConfigKey)
	field = "data[" + egConfigKey + "]"
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		return nil, true, field, fmt.Errorf("Envoy Gateway's configuration is not YAML: %v", err)
	}
	if kind, _ := cfg["kind"].(string); kind != "EnvoyGateway" {
		return nil, true, field, fmt.Errorf("holds no Envoy Gateway configuration: its kind is %q, not EnvoyGateway", kind)
	}
	if av, _ := cfg["apiVersion"].(string); !strings.HasPrefix(av, "gateway.envoyproxy.io/") {
		return nil, true, field, fmt.Errorf("holds no Envoy Gateway configuration: its apiVersion is %q, not gateway.envoyproxy.io/<version>", av)
	}
	features = map[string]bool{egEnableLua: false, egEnableEnvoyPatchPolicy: false, egEnableBackend: false, EGEnableSDSSecretRef: false, EGMergeGateways: false}
	for _, f := range defaultSpecFields {
		features[DefaultSpecFeature(f)] = false
	}
	var problems []string
	// The GatewayClasses' default EnvoyProxy spec: its mergeGateways is
	// the default of those whose EnvoyProxy does not set it.
	switch ep := cfg["envoyProxy"].(type) {
	case nil:
	case map[string]any:
		switch v := ep["mergeGateways"].(type) {
		case nil:
		case bool:
			features[EGMergeGateways] = v
		default:
			problems = append(problems, "envoyProxy.mergeGateways is not a boolean")
		}
		for _, f := range defaultSpecFields {
			switch v := ep[f].(type) {
			case []any:
				features[DefaultSpecFeature(f)] = len(v) > 0
			case map[string]any:
				features[DefaultSpecFeature(f)] = len(v) > 0
			case string:
				features[DefaultSpecFeature(f)] = v != ""
			}
		}
	default:
		problems = append(problems, "envoyProxy is not an object")
	}
	apis, present := cfg["extensionApis"]
	if !present || apis == nil {
		return features, true, fieldIf(problems, field), problemsErr(problems)
	}
	m, isMap := apis.(map[string]any)
	if !isMap {
		return features, true, field, fmt.Errorf("%s", strings.Join(append(problems, "extensionApis is not an object"), "; "))
	}
	flag := func(name string) (*bool, bool) {
		v, set := m[name]
		if !set || v == nil {
			return nil, true
		}
		b, isBool := v.(bool)
		if !isBool {
			problems = append(problems, fmt.Sprintf("extensionApis.%s is not a boolean", name))
			return nil, false
		}
		return &b, true
	}
	deref := func(b *bool) bool { return b != nil && *b }
	patch, _ := flag("enableEnvoyPatchPolicy")
	backend, _ := flag("enableBackend")
	sds, _ := flag("enableSDSSecretRef")
	enableLua, _ := flag("enableLua")
	disableLua, _ := flag("disableLua")
	features[egEnableEnvoyPatchPolicy] = deref(patch)
	features[egEnableBackend] = deref(backend)
	features[EGEnableSDSSecretRef] = deref(sds)
	// enableLua wins over the deprecated disableLua; with neither, Lua
	// is off (ExtensionAPISettings.LuaDisabled).
	features[egEnableLua] = deref(enableLua) || (disableLua != nil && !*disableLua)
	if disableLua != nil && *disableLua == deref(enableLua) {
		problems = append(problems, "extensionApis.disableLua and enableLua have the same value: Envoy Gateway refuses this configuration (they are mutually exclusive)")
	}
	return features, true, fieldIf(problems, field), problemsErr(problems)
}

// fieldIf is field when there are problems, else "".
func fieldIf(problems []string, field string) string {
	if len(problems) == 0 {
		return ""
	}
	return field
}

// problemsErr joins problems into one error; nil for none.
func problemsErr(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}

// ControllerName is the GatewayClass controllerName the Envoy Gateway
// configuration held by u gives (gateway.controllerName), "" when u holds
// none or it sets none (Envoy Gateway then uses EnvoyGatewayController).
func ControllerName(u *unstructured.Unstructured) string {
	if !IsConfiguration(u) {
		return ""
	}
	doc, _, _ := unstructured.NestedString(u.Object, "data", egConfigKey)
	var cfg struct {
		Gateway struct {
			ControllerName string `json:"controllerName"`
		} `json:"gateway"`
	}
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		return ""
	}
	return strings.TrimSpace(cfg.Gateway.ControllerName)
}
