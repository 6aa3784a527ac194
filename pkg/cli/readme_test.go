package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// readmeCommand is a command shown in README.md and the output shown for it.
type readmeCommand struct {
	line int // of the command, in README.md
	args []string
	want string // "" when the README shows no output
	// checkOutput is false for commands shown without their output (sh
	// blocks): they must only succeed.
	checkOutput bool
}

// readmeCommands reads the `go run ./cmd/attache ...` commands of README.md:
// in console blocks, "$ " lines and the output up to the next "$ " line or
// the end of the block (a command shown without output followed by a
// mermaid block has that block as its output); in sh blocks, the command
// lines alone.
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	const prefix = "go run ./cmd/attache "
	var cmds []readmeCommand
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if fence != "```console" && fence != "```sh" && fence != "```mermaid" {
			continue
		}
		var block []string
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			block = append(block, lines[i])
		}
		switch fence {
		case "```mermaid":
			if n := len(cmds); n > 0 && cmds[n-1].checkOutput && cmds[n-1].want == "" {
				cmds[n-1].want = strings.Join(block, "\n") + "\n"
			}
		case "```sh":
			for j, l := range block {
				if c, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
					cmds = append(cmds, readmeCommand{line: start + j + 1, args: strings.Fields(c)})
				}
			}
		case "```console":
			for j := 0; j < len(block); j++ {
				c, ok := strings.CutPrefix(block[j], "$ "+prefix)
				if !ok {
					continue
				}
				cmd := readmeCommand{line: start + j + 1, args: strings.Fields(c), checkOutput: true}
				var out []string
				for j+1 < len(block) && !strings.HasPrefix(block[j+1], "$ ") {
					j++
					out = append(out, block[j])
				}
				// The blank line that separates two commands is no output.
				for len(out) > 0 && out[len(out)-1] == "" {
					out = out[:len(out)-1]
				}
				if len(out) > 0 {
					cmd.want = strings.Join(out, "\n") + "\n"
				}
				cmds = append(cmds, cmd)
			}
		}
	}
	return cmds
}

// TestREADMEOutputs runs, from the repository root as a new user would, every
// attache command README.md shows, and compares the output shown with the
// real one: the README never drifts from what the commands print.
func TestREADMEOutputs(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(data))
	t.Chdir("../..")
	checked := 0
	for _, c := range cmds {
		out, errOut, err := run(t, c.args...)
		if err != nil {
			t.Errorf("README.md:%d: attache %s: %v (stderr %q)", c.line, strings.Join(c.args, " "), err, errOut)
			continue
		}
		if !c.checkOutput {
			continue
		}
		checked++
		if c.want == "" {
			t.Errorf("README.md:%d: attache %s: the README shows no output", c.line, strings.Join(c.args, " "))
			continue
		}
		if out != c.want {
			t.Errorf("README.md:%d: attache %s: the README shows another output.\n--- real\n%s\n--- README\n%s", c.line, strings.Join(c.args, " "), out, c.want)
		}
	}
	// The parable section answers each persona: describe, impact, get
	// policies, describe policy, graph. A parser that finds nothing must
	// not pass.
	if checked < 5 {
		t.Errorf("only %d README commands with output found; is the parser still right?", checked)
	}
	// The parable's question asked as a request (issue 10) must be among
	// the commands checked.
	trace := []string{"trace", "http://cupcakes.example/orders", "-f", "examples/parable"}
	if !slices.ContainsFunc(cmds, func(c readmeCommand) bool { return c.checkOutput && c.want != "" && slices.Equal(c.args, trace) }) {
		t.Errorf("README.md shows no output for attache %s", strings.Join(trace, " "))
	}
}

// TestHelpExamplesRun runs, from the repository root, every example of every
// command's help that reads the bundled examples (-f examples/...): a new
// user copying one must not hit an error. Pipes and redirections are cut
// off; a heredoc (<<'EOF') is given on standard input.
func TestHelpExamplesRun(t *testing.T) {
	t.Chdir("../..")
	_, dotErr := exec.LookPath("dot")
	var walk func(*cobra.Command)
	ran := 0
	walk = func(c *cobra.Command) {
		lines := strings.Split(c.Example, "\n")
		for i := 0; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			rest, ok := strings.CutPrefix(line, "attache ")
			if !ok || !strings.Contains(rest, "-f examples/") {
				continue
			}
			var args []string
			var stdin strings.Builder
			for _, f := range strings.Fields(rest) {
				if f == "|" || f == ">" {
					break
				}
				if f == "<<'EOF'" {
					for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "EOF"; i++ {
						stdin.WriteString(strings.TrimPrefix(lines[i], "  ") + "\n")
					}
					break
				}
				args = append(args, f)
			}
			if slices.Contains(args, "svg") || slices.Contains(args, "png") {
				if dotErr != nil {
					continue // TestGraphWithoutGraphviz covers this case
				}
			}
			var out, errOut bytes.Buffer
			root := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(stdin.String()), Out: &out, ErrOut: &errOut})
			root.SetArgs(args)
			if err := root.Execute(); err != nil {
				t.Errorf("%s --help example %q: %v", c.CommandPath(), line, err)
			}
			if errOut.Len() > 0 {
				t.Errorf("%s --help example %q: stderr:\n%s", c.CommandPath(), line, errOut.String())
			}
			ran++
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}))
	if ran < 8 {
		t.Errorf("only %d help examples ran; is the parser still right?", ran)
	}
}
