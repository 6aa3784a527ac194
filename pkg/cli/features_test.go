package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// profileKinds are the kinds of the profiles of group named names.
func profileKinds(t *testing.T, group string, names ...string) []*policy.Kind {
	t.Helper()
	var kinds []*policy.Kind
	for _, name := range names {
		p, ok := profiles.Lookup(topology.GroupKind{Group: group, Kind: name})
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		k, err := policy.NewKind(p.Spec)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, k)
	}
	return kinds
}

// --feature names a validation rule judges unless they are on count as
// used (NGF.nginx.plus), as do gated ones, and for Envoy Gateway's kinds
// its mergeGateways default and the fields of its default EnvoyProxy spec
// they judge (session 30: these were warned about as changing nothing);
// any other name is warned about, and Envoy Gateway's names where no
// kind serves its Gateways.
func TestUnusedFeatures(t *testing.T) {
	ngf := profileKinds(t, "gateway.nginx.org", "UpstreamSettingsPolicy", "SnippetsPolicy", "ObservabilityPolicy")
	eg := profileKinds(t, "gateway.envoyproxy.io", "EnvoyPatchPolicy", "ClientTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy")
	defaults := []string{profiles.EGMergeGateways, profiles.EGDefaultDynamicModules, "EnvoyGateway.envoyProxy.geoIP",
		"EnvoyGateway.envoyProxy.luaValidation", "EnvoyGateway.envoyProxy.routingType"}
	set := policy.Features{profiles.NGFPlus: {On: true}, profiles.NGFSnippets: {On: true}, "NGF.typo": {On: true},
		"EnvoyGateway.envoyProxy.typo": {On: true}}
	for _, d := range defaults {
		set[d] = policy.Feature{On: true}
	}
	warned := func(kinds []*policy.Kind) []string {
		var names []string
		for _, w := range unusedFeatures(set, kinds) {
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--feature "), ":")
			names = append(names, name)
		}
		return names
	}
	if got := warned(append(ngf, eg...)); strings.Join(got, " ") != "EnvoyGateway.envoyProxy.typo NGF.typo" {
		t.Errorf("NGF's and Envoy Gateway's kinds: warned about %q, want the two typos only", got)
	}
	want := append(slices.Clone(defaults), "EnvoyGateway.envoyProxy.typo", "NGF.typo")
	slices.Sort(want)
	if got := warned(ngf); !slices.Equal(got, want) {
		t.Errorf("NGF's kinds only: warned about %q, want %q", got, want)
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
		if !strings.Contains(errOut, "warning: --feature NGF.nginxGateway.snippet.enable: none of the policy kinds read uses it") {
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

// A route's PayloadProcessor that NGINX Gateway Fabric refuses for one of
// its Gateways (an ExternalName backend, that Gateway's NginxProxy without
// DNS resolver) leaves the Gateway's own processor in effect through it:
// trace through g1 shows g1's, with a note; through g2, the route's.
func TestTraceRefusedRoutePolicyFallsBack(t *testing.T) {
	path := filepath.Join("testdata", "ngf-payload-fallback.yaml")
	for _, tc := range []struct{ gw, want, not string }{
		{"default/g1", "<- PayloadProcessor default/gw-proc (Gateway default/g1", "<- PayloadProcessor default/route-proc"},
		{"default/g2", "<- PayloadProcessor default/route-proc (HTTPRoute default/r", "gw-proc"},
	} {
		out, _, err := run(t, "trace", "http://x/", "--gateway", tc.gw, "--feature", "NGF.nginxGateway.payloadProcessor.enable=true", "-f", path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("through %s: want %q and not %q:\n%s", tc.gw, tc.want, tc.not, out)
		}
		const note = "PayloadProcessor default/route-proc is not applied through Gateway default/g1"
		if strings.Contains(out, note) != (tc.gw == "default/g1") {
			t.Errorf("through %s: the note %q is wrong:\n%s", tc.gw, note, out)
		}
	}
}

// An ObservabilityPolicy on a route of two NGF Gateways, one of whose
// NginxProxy exports no telemetry: the route's one context (a Direct kind)
// holds the policy, and describe and effective say, of its entry, that it
// is not applied through that Gateway (NGF leaves it out there).
func TestNotAppliedViaShown(t *testing.T) {
	path := filepath.Join("testdata", "ngf-not-applied.yaml")
	out, _, err := run(t, "describe", "httproute/r", "-n", "default", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	const line = "not applied through Gateway default/g1: ObservabilityPolicy default/tracing (NGINX Gateway Fabric refuses it there; see its status)"
	if !strings.Contains(out, line) {
		t.Errorf("describe does not say %q:\n%s", line, out)
	}
	if strings.Contains(out, "Gateway default/g2:") {
		t.Errorf("describe says the policy is not applied through g2:\n%s", out)
	}
	for _, args := range [][]string{{"describe", "httproute/r", "-n", "default", "-o", "json"}, {"effective"}} {
		out, _, err := run(t, append(args, "-f", path)...)
		if err != nil {
			t.Fatal(err)
		}
		const field = `"notAppliedVia": [
              {
                "group": "gateway.networking.k8s.io",
                "kind": "Gateway",
                "namespace": "default",
                "name": "g1"
              }
            ]`
		if !strings.Contains(strings.ReplaceAll(out, " ", ""), strings.ReplaceAll(field, " ", "")) {
			t.Errorf("%s: no notAppliedVia naming g1:\n%s", args[0], out)
		}
	}
}
