package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

func init() { register(newDescribeCommand) }

// describeOutputs are the -o values of describe; the first is the default.
var describeOutputs = []string{"text", "json", "yaml"}

// describeOptions are the flags of describe and describe policy.
type describeOptions struct {
	common  *commonOptions
	section string
}

func newDescribeOptions(cmd *cobra.Command) *describeOptions {
	o := &describeOptions{common: newCommonOptions()}
	o.common.addFlags(cmd, describeOutputs...)
	// describe answers for one object: -l is refused (see validate), so it
	// is not offered in the help either.
	_ = cmd.Flags().MarkHidden("selector")
	return o
}

// validate checks the flags that need no input, so that a typo fails before
// a (possibly slow) cluster read.
func (o *describeOptions) validate(cmd *cobra.Command) error {
	if !slices.Contains(describeOutputs, o.common.output) {
		return fmt.Errorf("unknown output format %q: use -o text, -o json or -o yaml", o.common.output)
	}
	// -l comes with the shared flags, but describe answers for one object:
	// ignoring it silently would answer another question than the one asked.
	if o.common.selector != "" {
		return fmt.Errorf("describe takes one object and no -l selector; list policies by label with: %s get policies -l %s", cmd.Root().DisplayName(), o.common.selector)
	}
	return nil
}

func newDescribeCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe TYPE/NAME [--section S]",
		Short: "Show which policies affect an object, and what they set (or a policy's reach)",
		Long: `Answers, in one screen, the three questions of GEP-713's discoverability
problem for any target (GatewayClass, Gateway, ListenerSet, route, Service,
Namespace, or a virtual kind some policy kind targets):

  THAT   whether any policy affects the object
  WHICH  every policy reaching it: attached to it, to one of its sections, or
         to anything above or below it on a path through it; where it attaches,
         its stanza and strategy, its status, and how it fares here
  WHAT   per policy kind, the effective spec of every context (path) through
         the object, each field with the policy that set it, and the values
         that were beaten, by whom; contexts with the same result are grouped

Paths are abbreviated: GatewayClass and Namespace levels are left out and a
section is written after its object (cupcakes#http > baker#orders > Service
baker: listener http of Gateway cupcakes, rule orders of HTTPRoute baker);
-o json and -o yaml give them in full.

--section (or TYPE/NAME#SECTION) narrows the question to a listener (of a
Gateway or a ListenerSet), a route rule or a Service port.

attache describe policy KIND/NAME shows a policy's spec, status, and reach:
how many objects and contexts it affects, where it wins in full, in part, or
not at all, and by whom it is beaten.`,
		Example: `  attache describe httproute/baker -n baker -f examples/parable
  attache describe gateway/cupcakes -n infra --section http -f examples/parable
  attache describe namespace/baker -f examples/parable -o yaml
  attache describe policy retrypolicy/namespace-retries -n baker -f examples/parable`,
		// Argument errors are reported by RunE, so they can say what to type.
		Args: cobra.ArbitraryArgs,
	}
	o := newDescribeOptions(cmd)
	cmd.Flags().StringVar(&o.section, "section", "", "describe one section of the object: a Gateway or ListenerSet listener, a route rule or a Service port")
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.runTarget(cmd, streams, args) }
	cmd.AddCommand(newDescribePolicyCommand(streams))
	return cmd
}

func newDescribePolicyCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "policy KIND/NAME",
		Aliases: []string{"policies"},
		Short:   "Show a policy's spec, status, and reach: what it affects and where it wins",
		Long: `Shows a policy's spec (spec proper, stanza, strategy), its status (summary
conditions and one entry per ancestor), and its reach: totals first (how many
objects, namespaces and contexts it affects), then the contexts where it wins
in full, in part (which fields it lost, to whom) or not at all, and the
declared targets that do not exist.

KIND is a policy kind as attache get policies accepts it (retrypolicy,
retrypolicies, RetryPolicy.policies.example, a CRD short name, ...).`,
		Example: `  attache describe policy retrypolicy/namespace-retries -n baker -f examples/parable
  attache describe policy timeoutpolicy/baker-timeouts -n baker -f examples/parable -o yaml`,
		Args: cobra.ArbitraryArgs,
	}
	o := newDescribeOptions(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.runPolicy(cmd, streams, args) }
	return cmd
}

// describeArg reads TYPE/NAME (or kubectl's TYPE NAME) from args.
func describeArg(cmd *cobra.Command, args []string, what string) (typ, name string, err error) {
	switch {
	case len(args) == 2 && !strings.Contains(args[0], "/"):
		args = []string{args[0] + "/" + args[1]}
	case len(args) != 1:
		return "", "", fmt.Errorf("%s takes one %s, for example: %s", cmd.CommandPath(), what, describeExample(cmd, what))
	}
	return parseTypeName(args[0])
}

func describeExample(cmd *cobra.Command, what string) string {
	if what == "KIND/NAME" {
		return cmd.CommandPath() + " retrypolicy/namespace-retries -n baker"
	}
	return cmd.CommandPath() + " httproute/baker -n baker"
}

func (o *describeOptions) runTarget(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	typ, name, err := describeArg(cmd, args, "TYPE/NAME")
	if err != nil {
		return err
	}
	name, section, err := splitSection(name, o.section)
	if err != nil {
		return err
	}
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	res := l.Result
	gk, typeErr := resolveTargetType(typ, res.Kinds)
	if typeErr != nil {
		// kubectl describe KIND/NAME works for any kind: a policy kind word
		// here means the policy.
		if ks, err := resolvePolicyKinds(cmd, typ, res.Kinds, policyCRDs(l.Objects)); err == nil && len(ks) == 1 && section == "" {
			return o.describePolicy(cmd, streams, l, ks[0], name)
		}
		return fmt.Errorf("%w; to describe a policy: %s policy KIND/NAME", typeErr, cmd.CommandPath())
	}
	ref, err := findTarget(res.Graph, gk, typ, name, section, o.common.namespace(), cmd.Root().DisplayName())
	if err != nil {
		return err
	}
	d := newDescriber(res, o.common.controllerName).withUnread(l)
	desc := d.target(ref)
	if o.common.output != "text" {
		return write(streams.Out, desc, o.common.output)
	}
	return d.printTarget(streams.Out, desc)
}

func (o *describeOptions) runPolicy(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	typ, name, err := describeArg(cmd, args, "KIND/NAME")
	if err != nil {
		return fmt.Errorf("%w; a policy is KIND/NAME, for example retrypolicy/namespace-retries", err)
	}
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	ks, err := resolvePolicyKinds(cmd, typ, l.Result.Kinds, policyCRDs(l.Objects))
	if err != nil {
		return err
	}
	if len(ks) != 1 {
		return fmt.Errorf("%s takes one policy kind, not %q", cmd.CommandPath(), typ)
	}
	return o.describePolicy(cmd, streams, l, ks[0], name)
}

func (o *describeOptions) describePolicy(cmd *cobra.Command, streams genericiooptions.IOStreams, l *loaded, k *policy.Kind, name string) error {
	ns := o.common.namespace()
	root := cmd.Root().DisplayName()
	ps, err := lookupPolicy(l.Result, k, ns, name, root)
	if err != nil && ns != "" {
		// Cluster-scoped policies are found whatever -n says, as kubectl does.
		if cs, csErr := lookupPolicy(l.Result, k, "", name, root); csErr == nil && cs.Policy.Ref.Namespace == "" {
			ps, err = cs, nil
		}
	}
	if err != nil {
		return err
	}
	d := newDescriber(l.Result, o.common.controllerName).withUnread(l)
	desc := d.policy(ps)
	if o.common.output != "text" {
		return write(streams.Out, desc, o.common.output)
	}
	return d.printPolicy(streams.Out, desc)
}

// findTarget finds the object (and section) to describe or draw. ns ""
// searches every namespace; cluster-scoped objects are found whatever ns
// says. Errors name what was looked for and say what to do; root is the
// command users type (attache or kubectl attache).
func findTarget(g *topology.Graph, gk topology.GroupKind, typ, name, section, ns, root string) (topology.Ref, error) {
	var found, elsewhere []topology.Ref
	var here []string
	for _, id := range g.ByKind(gk) {
		r := g.Node(id).Ref
		inScope := ns == "" || r.Namespace == "" || r.Namespace == ns
		switch {
		case r.Name == name && inScope:
			found = append(found, r)
		case r.Name == name:
			elsewhere = append(elsewhere, r)
		case inScope:
			here = append(here, r.Name)
		}
	}
	where := "any namespace"
	switch {
	case topology.ClusterScoped(gk):
		where, ns = "the input", ""
	case ns != "":
		where = "namespace " + ns
	}
	switch {
	case len(found) > 1:
		nss := make([]string, len(found))
		for i, r := range found {
			nss[i] = r.Namespace
		}
		return topology.Ref{}, fmt.Errorf("%s/%s exists in several namespaces (%s); choose one with -n", typ, name, strings.Join(nss, ", "))
	case len(found) == 0:
		msg := fmt.Sprintf("%s/%s not found in %s", typ, name, where)
		var hints []string
		if len(elsewhere) > 0 {
			nss := make([]string, len(elsewhere))
			for i, r := range elsewhere {
				nss[i] = r.Namespace
			}
			hints = append(hints, fmt.Sprintf("it exists in namespace %s: use -n %s", strings.Join(nss, ", "), nss[0]))
		} else if ns != "" {
			hints = append(hints, "use -A to search every namespace, or -n NS")
		}
		if len(here) > 0 {
			hints = append(hints, fmt.Sprintf("%s objects in %s: %s", describeKind(gk), where, describeList(here, 10)))
		} else {
			hints = append(hints, fmt.Sprintf("there is no %s in %s; %s get policies -A lists the policies and their targets", describeKind(gk), where, root))
		}
		return topology.Ref{}, fmt.Errorf("%s (%s)", msg, strings.Join(hints, "; "))
	}
	ref := found[0]
	if section == "" {
		return ref, nil
	}
	id, _ := g.Lookup(ref)
	var sections []string
	for _, s := range g.Sections(id) {
		sr := g.Node(s).Ref
		if sr.SectionName == section {
			return sr, nil
		}
		sections = append(sections, sr.SectionName)
	}
	if len(sections) == 0 {
		return topology.Ref{}, fmt.Errorf("%s has no sections; describe it without --section", describeLevel(ref))
	}
	return topology.Ref{}, fmt.Errorf("%s has no section %q; its sections are: %s", describeLevel(ref), section, strings.Join(sections, ", "))
}

// describeList joins items, keeping the first max.
func describeList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// describer renders descriptions from one engine result.
type describer struct {
	res            *engine.Result
	controllerName string
	// kindName is the name policy refs are printed with: the bare Kind
	// unless two policy kinds share it.
	kindName map[topology.GroupKind]string
	// additive are the policy kinds whose policies all apply side by side
	// (policy.CompositionAdditive): their merge strategy says nothing.
	additive map[topology.GroupKind]bool
	policies map[topology.Ref]*engine.PolicyStatus
	// specLeaves caches each policy's spec leaves, to show beaten values
	// (the engine records what was lost, not the value).
	specLeaves map[topology.Ref]map[string]any
	// For answers read from a cluster that could not all be read: the
	// documents' partial list, the line text answers start with, and the
	// policy kinds not read in full (nil: everything was read).
	partial     []string
	partialLine string
	unreadKind  func(topology.GroupKind) (ns string, ok bool)
}

// withUnread marks the descriptions of d as partial when l could not read
// everything.
func (d *describer) withUnread(l *loaded) *describer {
	if len(l.Unread) == 0 {
		return d
	}
	d.partial = l.partial()
	var b strings.Builder
	l.printPartial(&b)
	d.partialLine = strings.TrimSuffix(b.String(), "\n")
	d.unreadKind = l.unreadPolicyKind
	return d
}

func newDescriber(res *engine.Result, controllerName string) *describer {
	if controllerName == "" {
		controllerName = engine.DefaultControllerName
	}
	d := &describer{res: res, controllerName: controllerName,
		kindName:   map[topology.GroupKind]string{},
		additive:   map[topology.GroupKind]bool{},
		policies:   map[topology.Ref]*engine.PolicyStatus{},
		specLeaves: map[topology.Ref]map[string]any{}}
	// Policy kinds print as their bare Kind, unless two discovered kinds
	// share it (then Kind.group for both).
	count := map[string]int{}
	for _, k := range res.Kinds {
		count[k.GroupKind.Kind]++
	}
	for _, k := range res.Kinds {
		d.additive[k.GroupKind] = k.Composition == policy.CompositionAdditive
		d.kindName[k.GroupKind] = k.GroupKind.Kind
		if count[k.GroupKind.Kind] > 1 {
			d.kindName[k.GroupKind] = k.GroupKind.String()
		}
	}
	for _, ps := range res.Policies {
		d.policies[ps.Policy.Ref] = ps
	}
	return d
}
