package cli

import (
	"regexp"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// PluginName is how kubectl runs attache as a plugin: the binary
// kubectl-attache on PATH is invoked for `kubectl attache ...`.
const PluginName = "kubectl attache"

// exampleCommand matches an example line that starts with the attache command.
var exampleCommand = regexp.MustCompile(`(?m)^(\s*)attache `)

// NewPluginCommand returns the attache command tree as the kubectl plugin
// (binary kubectl-attache): usage lines, help and examples read
// "kubectl attache ...".
func NewPluginCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := NewRootCommand(streams)
	// The display name, not Use: cobra takes a command's name from the first
	// word of Use, and "kubectl" would then be the name of every path.
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = PluginName
	var rewrite func(*cobra.Command)
	rewrite = func(c *cobra.Command) {
		c.Example = exampleCommand.ReplaceAllString(c.Example, "${1}"+PluginName+" ")
		for _, sub := range c.Commands() {
			rewrite(sub)
		}
	}
	rewrite(root)
	return root
}
