package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

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
	if len(got) != 1 || !strings.HasPrefix(got[0], "--feature NGF.typo:") {
		t.Errorf("unusedFeatures = %q, want one warning, about NGF.typo", got)
	}
}

// NGINX Gateway Fabric writes no status entry for a target it does not
// find: describe still lists it among the targets not found, and the
// problem names it; get policykinds shows the settings.
func TestDescribeNGFMissingTarget(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "ngf-missing-target.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", "policy", "clientsettingspolicy/missing", "-n", "default"}, []string{
			"Accepted=False TargetNotFound: spec.targetRef: HTTPRoute default/nope not found",
			"Ancestors:\n  none",
			"Targets not found: HTTPRoute default/nope",
		}},
		{[]string{"get", "policykinds", "-o", "wide"}, []string{
			"missing-targets=problem (profile: NGINX Gateway Fabric)",
			"programmed=when-accepted (profile: NGINX Gateway Fabric)",
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, err := run(t, append(tc.args, "-f", path)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
			if !strings.Contains(stderr, "spec.targetRef: HTTPRoute default/nope not found; NGINX Gateway Fabric writes no status entry") {
				t.Errorf("stderr does not name the missing target:\n%s", stderr)
			}
		})
	}
}

// attache effective warns, on stderr, of a --feature no policy kind's gate
// names (a typo), as the other commands do; stdout stays the report alone.
func TestEffectiveWarnsOfUnusedFeatures(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		out, errOut, err := run(t, "effective", "-f", filepath.Join("..", "..", "examples", "gep-713", "example-3"),
			"--feature", "NGF.nginxGateway.snippet.enable=true", "-o", format)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut, "warning: --feature NGF.nginxGateway.snippet.enable: no policy kind's feature gate names it") {
			t.Errorf("-o %s: stderr lacks the warning:\n%s", format, errOut)
		}
		var v map[string]any
		if err := yaml.Unmarshal([]byte(out), &v); err != nil || v["kind"] != "EffectivePolicyReport" {
			t.Errorf("-o %s: stdout is not the report alone (%v):\n%s", format, err, out)
		}
		if strings.Contains(out, "warning") {
			t.Errorf("-o %s: a warning on stdout", format)
		}
	}
}
