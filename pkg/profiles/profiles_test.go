package profiles

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// The kinds issue 8 lists, per implementation (GEP-713's table and what the
// projects ship).
var required = map[string][]topology.GroupKind{
	GatewayAPI:   {{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy"}, {Group: "gateway.networking.x-k8s.io", Kind: "XBackendTrafficPolicy"}},
	EnvoyGateway: egKinds("ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy", "EnvoyPatchPolicy"),
	Istio: {{Group: "security.istio.io", Kind: "AuthorizationPolicy"}, {Group: "security.istio.io", Kind: "RequestAuthentication"},
		{Group: "telemetry.istio.io", Kind: "Telemetry"}, {Group: "extensions.istio.io", Kind: "WasmPlugin"}, {Group: "extensions.istio.io", Kind: "TrafficExtension"},
		{Group: "networking.istio.io", Kind: "EnvoyFilter"}},
	NGF: group("gateway.nginx.org", "ClientSettingsPolicy", "ObservabilityPolicy", "UpstreamSettingsPolicy", "ProxySettingsPolicy", "RateLimitPolicy", "SnippetsPolicy",
		"PayloadProcessor", "ExternalLoadBalancer", "WAFPolicy"),
	Kuadrant: append(group("kuadrant.io", "RateLimitPolicy", "AuthPolicy", "TokenRateLimitPolicy", "DNSPolicy", "TLSPolicy"),
		group("extensions.kuadrant.io", "TelemetryPolicy", "ThreatPolicy")...),
	Gloo:     group("gateway.solo.io", "RouteOption", "VirtualHostOption", "ListenerOption", "HttpListenerOption"),
	KGateway: group("gateway.kgateway.dev", "TrafficPolicy", "ListenerPolicy", "HTTPListenerPolicy", "BackendConfigPolicy"),
}

func group(g string, kinds ...string) []topology.GroupKind {
	out := make([]topology.GroupKind, len(kinds))
	for i, k := range kinds {
		out[i] = topology.GroupKind{Group: g, Kind: k}
	}
	return out
}

func egKinds(kinds ...string) []topology.GroupKind { return group("gateway.envoyproxy.io", kinds...) }

func crdOf(gk topology.GroupKind, label string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "x." + gk.Group},
		"spec":     map[string]any{"group": gk.Group, "names": map[string]any{"kind": gk.Kind, "plural": "x"}},
	}}
	if label != "" {
		u.SetLabels(map[string]string{policy.LabelPolicy: label})
	}
	return u
}

func TestEveryRequiredKindHasAProfile(t *testing.T) {
	for impl, gks := range required {
		for _, gk := range gks {
			p, ok := Lookup(gk)
			if !ok {
				t.Errorf("%s: no profile for %s", impl, gk)
				continue
			}
			if p.Implementation != impl {
				t.Errorf("%s: profile of %s says %q", impl, gk, p.Implementation)
			}
		}
	}
	if n, want := len(All()), 37; n != want {
		t.Errorf("%d profiles, want %d (update the required list with the new ones)", n, want)
	}
}

// Every profile gives a valid kind from an unlabelled CRD and from a CRD
// with the label its implementation ships, every setting it gives
// credited to it.
func TestProfilesMakeValidKinds(t *testing.T) {
	for _, p := range All() {
		for _, label := range []string{"", p.ShippedLabel} {
			k, prob := policy.KindFromCRDWithProfile(crdOf(p.Spec.GroupKind, label), nil, &p)
			if prob != nil {
				t.Errorf("%s (label %q): %v", p.Spec.GroupKind, label, prob)
				continue
			}
			if k.Implementation != p.Implementation {
				t.Errorf("%s: implementation %q", p.Spec.GroupKind, k.Implementation)
			}
			if k.Class != p.Spec.Class || k.Origins[policy.SettingClass] != policy.FromProfile(p.Implementation) {
				t.Errorf("%s (label %q): class %s from %s, want %s from the profile", p.Spec.GroupKind, label, k.Class, k.Origins[policy.SettingClass], p.Spec.Class)
			}
		}
	}
}

// The CRD's own label (other than the shipped one) and annotations replace
// the profile setting by setting.
func TestLabelAndAnnotationsOverrideTheProfile(t *testing.T) {
	gk := topology.GroupKind{Group: "gateway.kgateway.dev", Kind: "TrafficPolicy"}
	p, _ := Lookup(gk)
	crd := crdOf(gk, "Direct") // as kgateway ships it: the profile's class stands
	k, prob := policy.KindFromCRDWithProfile(crd, nil, p)
	if prob != nil || k.Class != policy.Inherited {
		t.Fatalf("shipped label: class %v, problem %v; want Inherited from the profile", k, prob)
	}
	crd = crdOf(gk, "Direct")
	crd.SetLabels(map[string]string{policy.LabelPolicy: "true"}) // a user's choice
	crd.SetAnnotations(map[string]string{policy.AnnotationSameLevel: "oldest-wins"})
	k, prob = policy.KindFromCRDWithProfile(crd, nil, p)
	if prob != nil {
		t.Fatal(prob)
	}
	if k.Class != policy.Direct || k.Origins[policy.SettingClass] != policy.FromLabel {
		t.Errorf("class %s from %s, want Direct from the label", k.Class, k.Origins[policy.SettingClass])
	}
	if k.SameLevel != policy.SameLevelOldestWins || k.Origins[policy.SettingSameLevel] != policy.FromAnnotation {
		t.Errorf("same level %s from %s, want oldest-wins from the annotation", k.SameLevel, k.Origins[policy.SettingSameLevel])
	}
	if k.Origins[policy.SettingTargetKinds] != policy.FromProfile(KGateway) {
		t.Errorf("target kinds from %s, want the profile", k.Origins[policy.SettingTargetKinds])
	}
}
