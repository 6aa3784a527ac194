package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// commands are the subcommand constructors; each command's file registers
// itself in init, so commands can be added without touching the root.
var commands []func(genericiooptions.IOStreams) *cobra.Command

func register(f func(genericiooptions.IOStreams) *cobra.Command) { commands = append(commands, f) }
