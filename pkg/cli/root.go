// Package cli holds the attache commands (cobra), wiring the file adapter,
// the engine and the printers. cmd/attache only calls NewRootCommand.
package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// NewRootCommand returns the attache command tree.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "attache",
		Short: "Gateway API policy attachment: effective policies, status and discoverability",
		Long: `attache computes what GEP-713 policy attachment means for a set of objects:
the effective policy of every target in every context, with the policy that set
each field, and the status of every policy and of what it affects.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(newEffectiveCommand(streams))
	for _, f := range commands {
		root.AddCommand(f(streams))
	}
	return root
}
