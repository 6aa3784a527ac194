package cli

import (
	"testing"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// --feature names a validation rule judges unless they are on count as
// used (NGF.nginx.plus), as do gated ones; any other name is warned about.
func TestUnusedFeatures(t *testing.T) {
	var kinds []*policy.Kind
	for _, name := range []string{"UpstreamSettingsPolicy", "SnippetsPolicy"} {
		p, ok := profiles.Lookup(topology.GroupKind{Group: "gateway.nginx.org", Kind: name})
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		k, err := policy.NewKind(p.Spec)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, k)
	}
	set := policy.Features{profiles.NGFPlus: {On: true}, profiles.NGFSnippets: {On: true}, "NGF.typo": {On: true}}
	got := unusedFeatures(set, kinds)
	if len(got) != 1 || got[0][:len("--feature NGF.typo:")] != "--feature NGF.typo:" {
		t.Errorf("unusedFeatures = %q, want one warning, about NGF.typo", got)
	}
}
