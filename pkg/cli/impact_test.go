package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	impactParable  = "../../examples/parable"
	impactExample2 = "../../examples/gep-713/example-2"
)

func TestImpactGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		// The parable: every Service of baker loses its retries; frosting
		// keeps retryOn from frosting-retries but loses numRetries.
		{"impact-parable-delete-namespace-retries.txt", []string{"retrypolicy/namespace-retries", "-n", "baker", "--delete", "-f", impactParable}},
		{"impact-parable-delete-namespace-retries.json", []string{"retrypolicy/namespace-retries", "-n", "baker", "--delete", "-f", impactParable, "-o", "json"}},
		{"impact-parable-delete-gateway-timeouts.txt", []string{"timeoutpolicy/gateway-timeouts", "-n", "infra", "--delete", "-f", impactParable}},
		{"impact-parable-apply-gateway-retries.txt", []string{"--apply", "testdata/impact-gateway-retries.yaml", "-f", impactParable}},
		{"impact-parable-apply-gateway-retries.yaml", []string{"--apply", "testdata/impact-gateway-retries.yaml", "-f", impactParable, "-o", "yaml"}},
		// A policy that contributes nothing: nothing else changes.
		{"impact-parable-delete-oven-tls-new.txt", []string{"backendtlspolicies/oven-tls-new", "-n", "baker", "--delete", "-f", impactParable}},
		// The loser of a none (Direct) conflict takes over.
		{"impact-parable-delete-oven-tls.txt", []string{"backendtlspolicy/oven-tls", "-n", "baker", "--delete", "-f", impactParable}},
		// Routes applied: a path disappears, new paths appear.
		{"impact-example-2-apply-reroute.txt", []string{"--apply", "testdata/impact-example-2-reroute.yaml", "-f", impactExample2}},
		// Two paths of one Service changing alike are one group.
		{"impact-two-routes-delete.txt", []string{"colorpolicy/gw-color", "--delete", "-f", "testdata/impact-two-routes.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, append([]string{"impact"}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v (stderr %q)", err, errOut)
			}
			if errOut != "" {
				t.Errorf("unexpected stderr:\n%s", errOut)
			}
			golden(t, tc.name, []byte(out))
		})
	}
}

// TestImpactParableJSON checks the structured answer to the parable's
// question, independently of the golden file.
func TestImpactParableJSON(t *testing.T) {
	out, _, err := run(t, "impact", "retrypolicy/namespace-retries", "-n", "baker", "--delete", "-f", impactParable, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep impactReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != impactKind || rep.APIVersion != impactAPIVersion {
		t.Errorf("document is %s %s", rep.APIVersion, rep.Kind)
	}
	changes := map[string]string{}
	fields := map[string][]string{}
	for _, e := range rep.Effective {
		if !strings.HasPrefix(e.PolicyKind, "RetryPolicy.") {
			t.Errorf("unexpected policy kind %s", e.PolicyKind)
		}
		changes[e.Target.Name] = e.Change
		for _, g := range e.Groups {
			for _, f := range g.Fields {
				if f.After != nil {
					t.Errorf("%s: %s would be set after deleting the only policy setting it", e.Target.Name, f.Path)
				}
				fields[e.Target.Name] = append(fields[e.Target.Name], f.Path)
			}
		}
	}
	want := map[string]string{"baker": "removed", "oven": "removed", "sprinkles": "removed", "frosting": "changed"}
	for svc, c := range want {
		if changes[svc] != c {
			t.Errorf("Service %s: change %q, want %q", svc, changes[svc], c)
		}
	}
	if got := strings.Join(fields["frosting"], ","); got != "numRetries" {
		t.Errorf("frosting loses %s, want only numRetries (retryOn stays from frosting-retries)", got)
	}
	if len(rep.Totals) != 1 || rep.Totals[0] != (impactTotal{Namespace: "baker", Kind: "Service", Count: 4}) {
		t.Errorf("totals %+v, want 4 Services in baker", rep.Totals)
	}
	if len(rep.Policies) != 1 || rep.Policies[0].Change != "deleted" {
		t.Errorf("policies %+v, want only the deleted one", rep.Policies)
	}
}

func TestImpactApplyNamespace(t *testing.T) {
	// r5 has no namespace: -n gives it one, as kubectl apply -n would.
	out, _, err := run(t, "impact", "--apply", "testdata/impact-example-2-reroute.yaml", "-f", impactExample2, "-n", "other", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rep impactReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range rep.Change.Objects {
		got = append(got, o.Action+" "+o.Ref.Namespace+"/"+o.Ref.Name)
	}
	if strings.Join(got, ",") != "replace default/r2,create other/r5" {
		t.Errorf("applied objects %v", got)
	}
}

func TestImpactNoChangeApply(t *testing.T) {
	// Applying what is already there changes nothing, and says so.
	out, _, err := run(t, "impact", "--apply", impactParable+"/policies.yaml", "-f", impactParable)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Effective policies: no change.", "Policy status: no change.", "no target would change", "Verdict: no change:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}

func TestImpactWarnsAboutNewProblems(t *testing.T) {
	// An invalid policy applied: its problem comes with the change, and
	// the policy shows up as created but not accepted.
	file := filepath.Join(t.TempDir(), "bad.yaml")
	bad := `apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: both-stanzas, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}]
  defaults: {numRetries: 1}
  overrides: {numRetries: 2}
`
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "impact", "--apply", file, "-f", impactParable)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning: after the change:") || !strings.Contains(errOut, "both-stanzas") {
		t.Errorf("stderr does not report the new problem:\n%s", errOut)
	}
	if !strings.Contains(out, "RetryPolicy baker/both-stanzas: created (Invalid)") {
		t.Errorf("output does not show the invalid policy:\n%s", out)
	}
}

func TestImpactErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"retrypolicy/nope", "-n", "baker", "--delete", "-f", impactParable}, []string{`RetryPolicy "nope" not found in namespace baker`, "RetryPolicies in namespace baker: frosting-retries, namespace-retries", "attache get policies -A"}},
		{[]string{"retrypolicy/namespace-retries", "-n", "infra", "--delete", "-f", impactParable}, []string{`RetryPolicy "namespace-retries" not found in namespace infra`, "it exists in namespace baker: use -n baker"}},
		{[]string{"nopolicy/x", "--delete", "-f", impactParable}, []string{`unknown policy kind "nopolicy"`, "retrypolicy"}},
		{[]string{"--delete", "-f", impactParable}, []string{"--delete needs the policy", "KIND/NAME --delete"}},
		{[]string{"retrypolicy/namespace-retries", "--delete", "--apply", "testdata/impact-gateway-retries.yaml", "-f", impactParable}, []string{"--delete and --apply cannot be combined"}},
		{[]string{"--apply", "testdata/no-such-file.yaml", "-f", impactParable}, []string{"--apply", "cannot read testdata/no-such-file.yaml"}},
		{[]string{"retrypolicy/namespace-retries", "-f", impactParable}, []string{"add --delete"}},
		{[]string{"retrypolicy/namespace-retries", "--apply", "testdata/impact-gateway-retries.yaml", "-f", impactParable}, []string{"--apply takes no KIND/NAME"}},
		{[]string{"-f", impactParable}, []string{"KIND/NAME --delete", "--apply FILE"}},
		{[]string{"retrypolicy", "--delete", "-f", impactParable}, []string{"is not TYPE/NAME"}},
		{[]string{"retrypolicy/namespace-retries", "--delete", "-f", impactParable, "-o", "wide"}, []string{`unknown output format "wide"`}},
		{[]string{"--apply", "-", "-f", "-"}, []string{"both want standard input"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := run(t, append([]string{"impact"}, tc.args...)...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
