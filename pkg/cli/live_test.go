package cli

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
)

// TestLive runs the commands against a real API server holding the parable,
// through --kubeconfig files: as the admin, who reads everything, and as Ana,
// whose RBAC (clustertest.Ana) hides RetryPolicies, the shared Gateway and
// ListenerSets.
// One control plane serves all the subtests.
func TestLive(t *testing.T) {
	t0 := time.Now()
	env := testenv.Start(t)
	clustertest.Parable(t, env, filepath.Join("..", ".."))
	admin := clustertest.WriteKubeconfig(t, env.Config, "default")
	ana := clustertest.WriteKubeconfig(t, clustertest.Ana(t, env), "baker")
	t.Logf("control plane up and parable applied in %v", time.Since(t0).Round(time.Millisecond))

	const anaRetries = "warning: partial answer: policies.cupcakes.example RetryPolicy: forbidden in namespace baker; its policies are not shown"

	t.Run("GetPoliciesAdmin", func(t *testing.T) {
		out, errOut := runLive(t, "get", "policies", "-A", "--kubeconfig", admin)
		for _, want := range []string{"namespace-retries", "frosting-retries", "gateway-timeouts", "baker-timeouts", "oven-tls-new"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(errOut, "partial answer") {
			t.Errorf("admin's answer is partial:\n%s", errOut)
		}
	})

	// The live answer is the answer over the same manifests with -f.
	t.Run("GetPoliciesAdminSameAsFiles", func(t *testing.T) {
		live, _ := runLive(t, "get", "policies", "-A", "-o", "json", "--kubeconfig", admin)
		files, _ := runLive(t, "get", "policies", "-A", "-o", "json", "-f", filepath.Join("..", "..", "examples", "parable"))
		if live != files {
			t.Errorf("get policies -A -o json differs between the cluster and -f:\n--- cluster\n%s\n--- files\n%s", live, files)
		}
	})

	// Every command and format gives, from the cluster, what it gives from
	// the same objects in files: the parable and the Gateway API CRDs the
	// cluster serves (one of them, BackendTLSPolicy, is a policy kind).
	files := []string{"-f", filepath.Join("..", "..", "examples", "parable")}
	for _, f := range clustertest.GatewayAPICRDs(t, "tcproutes") {
		files = append(files, "-f", f)
	}
	for _, args := range [][]string{
		{"get", "policykinds", "-o", "wide"},
		{"get", "policykinds", "-o", "yaml"},
		{"get", "policies", "-n", "baker", "-o", "wide"},
		{"describe", "httproute/baker", "-n", "baker"},
		{"describe", "httproute/baker", "-n", "baker", "-o", "json"},
		{"describe", "gateway/cupcakes", "-n", "infra", "--section", "http"},
		{"describe", "namespace/baker", "-o", "yaml"},
		{"describe", "policy", "retrypolicy/namespace-retries", "-n", "baker"},
		{"describe", "policy", "timeoutpolicy/gateway-timeouts", "-n", "infra", "-o", "yaml"},
		{"impact", "retrypolicy/namespace-retries", "-n", "baker", "--delete"},
		{"impact", "--apply", filepath.Join("testdata", "impact-gateway-retries.yaml"), "-o", "json"},
		{"graph", "httproute/baker", "-n", "baker"},
		{"trace", "http://cupcakes.example/orders"},
		{"trace", "http://cupcakes.example/orders", "-H", "x-user: ana", "-o", "json"},
		// Not -A: the cluster has Services of its own (default/kubernetes).
		{"graph", "-n", "baker", "-o", "mermaid"},
	} {
		t.Run("SameAsFiles "+strings.Join(args, " "), func(t *testing.T) {
			live, _ := runLive(t, append(slices.Clone(args), "--kubeconfig", admin)...)
			want, _ := runLive(t, append(slices.Clone(args), files...)...)
			if live != want {
				t.Errorf("differs between the cluster and -f:\n--- cluster\n%s\n--- files\n%s", live, want)
			}
		})
	}

	// impact --apply reads its file from disk even against a cluster: a
	// policy the cluster's CRD refuses is reported as the API server would
	// refuse it (here Gateway API's BackendTLSPolicy without the required
	// validation.hostname), and --validate=false reads it as written.
	t.Run("ImpactApplyRefusedBySchema", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "btls.yaml")
		const btls = `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: oven-tls-bad, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Service, name: oven}]
  validation: {wellKnownCACertificates: System}
`
		if err := os.WriteFile(file, []byte(btls), 0o644); err != nil {
			t.Fatal(err)
		}
		const refused = "spec.validation.hostname: Required value (its CRD's schema, checked as the API server does)"
		_, errOut := runLive(t, "impact", "--apply", file, "--kubeconfig", admin)
		if !strings.Contains(errOut, refused) {
			t.Errorf("impact --apply of a policy the CRD refuses: stderr lacks %q:\n%s", refused, errOut)
		}
		_, errOut = runLive(t, "impact", "--apply", file, "--kubeconfig", admin, "--validate=false")
		if strings.Contains(errOut, "its CRD's schema") {
			t.Errorf("impact --apply --validate=false still checks the schema:\n%s", errOut)
		}
	})

	// Ana may list the policy CRDs: the kinds are a full answer for her,
	// however little else she can read.
	t.Run("GetPolicyKindsAna", func(t *testing.T) {
		out, errOut := runLive(t, "get", "policykinds", "--kubeconfig", ana)
		if errOut != "" {
			t.Errorf("stderr should be empty, the answer is not partial:\n%s", errOut)
		}
		if !strings.Contains(out, "RetryPolicy.policies.cupcakes.example") {
			t.Errorf("stdout lacks RetryPolicy, which Ana cannot list but whose CRD she can:\n%s", out)
		}
	})

	t.Run("DescribeHTTPRouteAdmin", func(t *testing.T) {
		out, errOut := runLive(t, "describe", "httproute/baker", "-n", "baker", "--kubeconfig", admin)
		for _, want := range []string{"namespace-retries", "baker-timeouts", "gateway-timeouts"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(errOut, "partial answer") {
			t.Errorf("admin's answer is partial:\n%s", errOut)
		}
	})

	// Without -n, the namespace is the kubeconfig context's: baker.
	t.Run("GetPoliciesAna", func(t *testing.T) {
		out, errOut := runLive(t, "get", "policies", "--kubeconfig", ana)
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
		if !strings.Contains(errOut, anaRetries) {
			t.Errorf("stderr lacks %q:\n%s", anaRetries, errOut)
		}
		if !strings.Contains(errOut, "gatewayapi Gateway: forbidden in namespace baker") {
			t.Errorf("stderr does not name the Gateways as forbidden:\n%s", errOut)
		}
		if !strings.Contains(out, "baker-timeouts") || strings.Contains(out, "namespace-retries") {
			t.Errorf("stdout should list baker-timeouts and not namespace-retries:\n%s", out)
		}
	})

	t.Run("GetPoliciesAnaAllNamespaces", func(t *testing.T) {
		_, errOut := runLive(t, "get", "policies", "-A", "--kubeconfig", ana)
		want := "warning: partial answer: policies.cupcakes.example RetryPolicy: cannot list cluster-wide (forbidden); its policies are not shown"
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	})

	t.Run("DescribeHTTPRouteAna", func(t *testing.T) {
		out, errOut := runLive(t, "describe", "httproute/baker", "-n", "baker", "--kubeconfig", ana)
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
		if !strings.Contains(errOut, anaRetries) {
			t.Errorf("stderr lacks %q:\n%s", anaRetries, errOut)
		}
		if !strings.Contains(out, "baker-timeouts") || strings.Contains(out, "namespace-retries") {
			t.Errorf("stdout should show baker-timeouts and not namespace-retries:\n%s", out)
		}
		// The hidden kinds come first and the verdict closes the warnings.
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "this answer is PARTIAL") {
			t.Errorf("stderr does not end with the partial verdict:\n%s", errOut)
		}
		if strings.Index(errOut, anaRetries) > strings.Index(errOut, "could only be read in one namespace") {
			t.Errorf("hidden kinds must come before the narrowed ones:\n%s", errOut)
		}
		// The answer itself says it is partial, and does not say "none"
		// for the RetryPolicies Ana cannot read: that is the parable's
		// question, and its answer is unknown to her.
		for _, want := range []string{
			"HTTPRoute baker/baker\nPARTIAL ANSWER: 6 kinds could not be read and 8 kinds only in namespace baker (see the warnings)",
			"RetryPolicy: unknown (no RetryPolicy could be read)",
			"TimeoutPolicy\n    partial: only the TimeoutPolicy of namespace baker could be read; the others may change this\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "RetryPolicy: none") {
			t.Errorf("stdout says no RetryPolicy applies, which Ana cannot know:\n%s", out)
		}
	})

	// Every answer Ana gets is marked partial, on stdout too: the -o json
	// documents list what was not read, text answers start with a line,
	// drawings say it in their title.
	t.Run("PartialAnswersAna", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"get", "policies", "-o", "json"}, `"partial": [`},
			{[]string{"describe", "httproute/baker", "-o", "yaml"}, "unread: no RetryPolicy could be read"},
			{[]string{"describe", "policy", "timeoutpolicy/baker-timeouts"}, "TimeoutPolicy baker/baker-timeouts\nPARTIAL ANSWER: "},
			{[]string{"describe", "policy", "timeoutpolicy/baker-timeouts", "-o", "json"}, "policies.cupcakes.example RetryPolicy: forbidden in namespace baker; its policies are not shown"},
			{[]string{"impact", "timeoutpolicy/baker-timeouts", "--delete"}, "Impact of deleting TimeoutPolicy baker/baker-timeouts\nPARTIAL ANSWER: "},
			{[]string{"impact", "timeoutpolicy/baker-timeouts", "--delete", "-o", "yaml"}, "partial:\n- "},
			{[]string{"graph", "httproute/baker", "-o", "mermaid"}, "title: HTTPRoute baker/baker (PARTIAL answer, 6 kinds could not be read and 8 kinds only in namespace baker)"},
		} {
			out, _ := runLive(t, append(tc.args, "--kubeconfig", ana)...)
			if !strings.Contains(out, tc.want) {
				t.Errorf("attache %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), tc.want, out)
			}
		}
	})
}

// TestLiveUnreachable: a kubeconfig pointing at a closed port fails with an
// error that says what to check.
func TestLiveUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "https://" + l.Addr().String()
	l.Close()
	kc := clustertest.WriteKubeconfig(t, &rest.Config{Host: host, BearerToken: "x", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, "baker")
	_, errOut, err := run(t, "get", "policies", "--kubeconfig", kc)
	if err == nil {
		t.Fatalf("no error reading a closed port; stderr:\n%s", errOut)
	}
	for _, want := range []string{host, "connection refused", "--kubeconfig", "--context"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func runLive(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	out, errOut, err := run(t, args...)
	if err != nil {
		t.Fatalf("attache %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut)
	}
	return out, errOut
}
