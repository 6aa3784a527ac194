package upstream

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
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
