package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestPluginCommand: the kubectl plugin runs the same tree and presents
// itself as "kubectl attache".
func TestPluginCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewPluginCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"get", "policies", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, want := range []string{"kubectl attache get policies [KIND", "  kubectl attache get policies -f examples/parable"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "kubectl kubectl") || strings.Contains(help, "\n  attache ") {
		t.Errorf("help not rewritten cleanly:\n%s", help)
	}

	out.Reset()
	cmd = NewPluginCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"get", "policies", "-f", "../../examples/parable", "-n", "infra"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "gateway-timeouts") {
		t.Errorf("plugin get policies:\n%s", out.String())
	}

	cmd = NewPluginCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"get", "policies", "-f", "../../examples/parable", "nosuch"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "kubectl attache get policykinds") {
		t.Errorf("plugin errors should name kubectl attache, got %v", err)
	}

	// Every hint names the command the user has: kubectl attache, not
	// attache, which a plugin user may not have installed.
	for _, args := range [][]string{
		{"describe", "grpcroute/x", "-n", "baker"},
		{"describe", "policy", "retrypolicy/x", "-n", "baker"},
		{"impact", "retrypolicy/x", "-n", "baker", "--delete"},
		{"graph", "grpcroute/x", "-n", "baker"},
		{"describe", "httproute/baker", "-l", "team=baker"},
	} {
		cmd = NewPluginCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs(append(args, "-f", "../../examples/parable"))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "kubectl attache get policies") {
			t.Errorf("kubectl attache %s: error should name kubectl attache get policies, got %v", strings.Join(args, " "), err)
		}
	}
}
