package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

func init() { register(newGetCommand) }

// listAPIVersion versions the -o json|yaml lists of `attache get`; like the
// effective report, fields may be added but never renamed or removed.
const listAPIVersion = "attache.dev/v1alpha1"

// getOptions are the flags shared by the get subcommands.
type getOptions struct {
	common    *commonOptions
	output    string
	noHeaders bool
}

func newGetOptions(cmd *cobra.Command) *getOptions {
	o := &getOptions{common: newCommonOptions()}
	// -o is registered here rather than through addFlags because the table
	// has no -o value of its own (kubectl prints a table when -o is absent).
	o.common.addFlags(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: table (the default), wide, json or yaml")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "print tables without the header line")
	return o
}

// validate checks the flags that need no input, so that a typo fails before
// a (possibly slow) cluster read. It returns the parsed -l selector.
func (o *getOptions) validate() (labels.Selector, error) {
	switch o.output {
	case "table":
		o.output = "" // the default, named
	case "", "wide", "json", "yaml":
	default:
		return nil, fmt.Errorf("unknown output format %q: use -o table (the default), -o wide, -o json or -o yaml", o.output)
	}
	sel, err := labels.Parse(o.common.selector)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector %q: %v (write it as kubectl does, e.g. -l team=baker or -l 'tier in (web,api)')", o.common.selector, err)
	}
	return sel, nil
}

// structured reports whether the output is a document rather than a table.
func (o *getOptions) structured() bool { return o.output == "json" || o.output == "yaml" }

// printTable prints t the way kubectl prints server-side tables: columns of
// priority 1 only with -o wide.
func (o *getOptions) printTable(w io.Writer, t *metav1.Table) error {
	p := printers.NewTablePrinter(printers.PrintOptions{Wide: o.output == "wide", NoHeaders: o.noHeaders})
	return p.PrintObj(t, w)
}

func newGetCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get TYPE",
		Short: "List policies or policy kinds, with their status (like kubectl get)",
		Long: `Lists policies with their status, or the discovered policy kinds with their
semantics. TYPE is one of:

  policies     every policy of every policy kind (optionally of one kind)
  policykinds  the policy kinds (CRDs labelled gateway.networking.k8s.io/policy)`,
		Example: `  attache get policies -A
  attache get policies retrypolicy -n baker -o wide
  attache get policykinds -f examples/parable -o wide`,
		// Unknown TYPE words reach RunE, so the error can say what to type,
		// even when flags of the subcommands come with them (attache get
		// retrypolicies -f examples/parable).
		Args:               cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			get := cmd.CommandPath()
			if len(args) == 0 {
				return fmt.Errorf("missing TYPE: use %s policies or %s policykinds", get, get)
			}
			return fmt.Errorf("unknown type %q for get: use %s policies or %s policykinds (to list one policy kind, name it after policies: %s policies %s)", args[0], get, get, get, args[0])
		},
	}
	cmd.AddCommand(newGetPoliciesCommand(streams), newGetPolicyKindsCommand(streams))
	return cmd
}

// Table cell helpers.

// emptyCell is printed for an empty cell, so that columns stay readable.
const emptyCell = "-"

func cellOrDash(s string) string {
	if s == "" {
		return emptyCell
	}
	return s
}

// shortKind renders gk for a table: the bare Kind for the core and Gateway
// API groups (the kinds readers know), Kind.group otherwise.
func shortKind(gk topology.GroupKind) string {
	if gk.Group == topology.CoreGroup || gk.Group == topology.GatewayGroup {
		return gk.Kind
	}
	return gk.String()
}

func shortKinds(gks []topology.GroupKind) string {
	s := make([]string, len(gks))
	for i, gk := range gks {
		s[i] = shortKind(gk)
	}
	return strings.Join(s, ",")
}

// kindNames maps every policy kind to the name the tables show: the bare
// Kind, unless two discovered kinds share it (then Kind.group for both).
func kindNames(kinds []*policy.Kind) map[*policy.Kind]string {
	count := map[string]int{}
	for _, k := range kinds {
		count[k.GroupKind.Kind]++
	}
	out := make(map[*policy.Kind]string, len(kinds))
	for _, k := range kinds {
		if count[k.GroupKind.Kind] > 1 {
			out[k] = k.GroupKind.String()
		} else {
			out[k] = k.GroupKind.Kind
		}
	}
	return out
}

// maxTargetsShown caps the TARGETS cell of the plain table (kubectl
// truncates lists the same way, e.g. endpoints); -o wide shows them all.
const maxTargetsShown = 3

// truncateList joins items, keeping the first max when max > 0.
func joinTruncated(items []string, max int) string {
	if len(items) == 0 {
		return emptyCell
	}
	if max <= 0 || len(items) <= max {
		return strings.Join(items, ",")
	}
	return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
}

// Policy kind resolution.

// crdNames are the names kubectl accepts for a CRD's kind.
type crdNames struct {
	name     string // metadata.name, e.g. retrypolicies.policies.cupcakes.example
	labels   map[string]string
	plural   string
	singular string
	short    []string
}

// policyCRDs indexes the CRD objects of the input by the group and kind they
// define, for kubectl-style names and for -l on policy kinds.
func policyCRDs(objs []engine.Object) map[topology.GroupKind]crdNames {
	out := map[topology.GroupKind]crdNames{}
	for _, o := range objs {
		u := o.Object
		if u == nil || u.GroupVersionKind().GroupKind() != crdGroupKind {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		if kind == "" {
			continue
		}
		n := crdNames{name: u.GetName(), labels: u.GetLabels()}
		n.plural, _, _ = unstructured.NestedString(u.Object, "spec", "names", "plural")
		n.singular, _, _ = unstructured.NestedString(u.Object, "spec", "names", "singular")
		n.short, _, _ = unstructured.NestedStringSlice(u.Object, "spec", "names", "shortNames")
		out[topology.GroupKind{Group: group, Kind: kind}] = n
	}
	return out
}

var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// words lists the lower-case names a user may type for k: kind, plurals,
// the CRD's singular, plural and short names, each also with ".group".
func kindWords(k *policy.Kind, crd crdNames) []string {
	kind := strings.ToLower(k.GroupKind.Kind)
	ws := []string{kind, kind + "s", kind + "es"}
	if base, ok := strings.CutSuffix(kind, "y"); ok {
		ws = append(ws, base+"ies")
	}
	for _, s := range append([]string{crd.plural, crd.singular}, crd.short...) {
		if s != "" {
			ws = append(ws, strings.ToLower(s))
		}
	}
	if g := strings.ToLower(k.GroupKind.Group); g != "" {
		for _, w := range slices.Clone(ws) {
			ws = append(ws, w+"."+g)
		}
	}
	return ws
}

// resolvePolicyKinds resolves a comma-separated list of policy kind names
// (kubectl style: any case, singular, plural, short names, optionally
// .group). Unknown names fail with the known kinds listed and the command
// that lists them (cmd's root: attache or kubectl attache).
func resolvePolicyKinds(cmd *cobra.Command, arg string, kinds []*policy.Kind, crds map[topology.GroupKind]crdNames) ([]*policy.Kind, error) {
	var out []*policy.Kind
	for _, typ := range strings.Split(strings.ToLower(arg), ",") {
		typ = strings.TrimSpace(typ)
		if typ == "" {
			continue
		}
		var found []*policy.Kind
		for _, k := range kinds {
			if slices.Contains(kindWords(k, crds[k.GroupKind]), typ) {
				found = append(found, k)
			}
		}
		switch len(found) {
		case 0:
			// resolvePolicyKind knows the words of types.go and, failing,
			// gives the shared message listing the known kinds.
			k, err := resolvePolicyKind(typ, kinds)
			if err != nil {
				return nil, fmt.Errorf("%w (list them with: %s get policykinds)", err, cmd.Root().DisplayName())
			}
			found = []*policy.Kind{k}
		case 1:
		default:
			names := make([]string, len(found))
			for i, k := range found {
				names[i] = k.GroupKind.String()
			}
			return nil, fmt.Errorf("policy kind %q is ambiguous: it names %s; write it as Kind.group", typ, strings.Join(names, " and "))
		}
		if !slices.Contains(out, found[0]) {
			out = append(out, found[0])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policy kind in %q: give a kind such as retrypolicy, or none to list every kind", arg)
	}
	return out, nil
}
