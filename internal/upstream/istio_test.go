package upstream

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

const istioCRDs = "kubernetes/customresourcedefinitions.gen.yaml"

// TestIstioCRDsParse reads every CRD of istio.io/api through pkg/manifest
// (modfixtures.CRDs fails on any problem) and through the engine, which must
// find nothing wrong in them.
func TestIstioCRDsParse(t *testing.T) {
	crds := modfixtures.CRDs(t, modfixtures.Dir(t, modfixtures.IstioAPI), istioCRDs)
	kinds := map[string]bool{}
	for _, c := range crds {
		k, _, _ := unstructured.NestedString(c.Object.Object, "spec", "names", "kind")
		if k == "" {
			t.Errorf("%s: CRD without spec.names.kind", c.Source)
		}
		kinds[k] = true
	}
	// The file has one CRD per Istio kind; fewer means a document was lost.
	if len(crds) < 14 {
		t.Errorf("%d CRDs read (%v), expected at least 14", len(crds), kinds)
	}
	res := engine.Compute(crds, engine.Options{})
	for _, p := range res.Problems {
		t.Errorf("engine: %s", p.Error())
	}
}

// istioPolicyKinds are the Istio kinds that attach to workloads and Gateways
// as policies (targetRefs or a workload selector).
var istioPolicyKinds = []topology.GroupKind{
	{Group: "security.istio.io", Kind: "AuthorizationPolicy"},
	{Group: "security.istio.io", Kind: "RequestAuthentication"},
	{Group: "telemetry.istio.io", Kind: "Telemetry"},
	{Group: "extensions.istio.io", Kind: "WasmPlugin"},
	{Group: "extensions.istio.io", Kind: "TrafficExtension"},
	{Group: "networking.istio.io", Kind: "EnvoyFilter"},
}

// TestIstioPolicyKindsRecognised: the six Istio policy kinds are policy
// kinds for attache although Istio's CRDs carry no policy label: the Istio
// profile makes them so (their class comes from it), and with the profiles
// off none of Istio's kinds is a policy kind.
func TestIstioPolicyKindsRecognised(t *testing.T) {
	crds := modfixtures.CRDs(t, modfixtures.Dir(t, modfixtures.IstioAPI), istioCRDs)
	res := engine.Compute(crds, engine.Options{})
	known := map[topology.GroupKind]*policy.Kind{}
	for _, k := range res.Kinds {
		known[k.GroupKind] = k
	}
	for _, gk := range istioPolicyKinds {
		k := known[gk]
		if k == nil {
			t.Errorf("%s is not a policy kind (policy kinds: %v)", gk, res.Kinds)
			continue
		}
		if k.Implementation != profiles.Istio || k.Origins[policy.SettingClass] != policy.FromProfile(profiles.Istio) {
			t.Errorf("%s: implementation %q, class from %q; want both from the %s profile", gk, k.Implementation, k.Origins[policy.SettingClass], profiles.Istio)
		}
	}
	if len(res.Kinds) != len(istioPolicyKinds) {
		t.Errorf("policy kinds among Istio's CRDs: %v, want exactly %v", res.Kinds, istioPolicyKinds)
	}
	off := engine.Compute(crds, engine.Options{DisableProfiles: true})
	if len(off.Kinds) != 0 {
		t.Errorf("with the profiles off, policy kinds among Istio's CRDs: %v, want none", off.Kinds)
	}
}
