package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

func newGetPoliciesCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "policies [KIND[,KIND...]]",
		Aliases: []string{"policy"},
		Short:   "List policies of every policy kind with their status",
		Long: `Lists every policy of every discovered policy kind (or of the KINDs given:
retrypolicy, retrypolicies, RetryPolicy.policies.example, a CRD short name, ...)
with the status attache computes for it:

  TARGETS     the declared targets: Kind/name, Kind/namespace/name across
              namespaces, Kind/name#section, Kind[selector]; the table shows
              the first 3, -o wide all of them
  CLASS       Direct or Inherited (the policy kind's class)
  STANZA      defaults, overrides, or - for a bare spec
  STRATEGY    the resolved merge strategy
  ACCEPTED    Accepted, Conflicted, Invalid or TargetNotFound
  PROGRAMMED  Programmed, PartiallyProgrammed or Overridden (- when not accepted)
  AFFECTS     how many effective targets it contributes to
  CONTEXTS    (wide) its contexts where it wins in full/partial/none
  MESSAGE     (wide) the first condition that is not plainly good

Policies come from the cluster, or from manifests with -f (then every
namespace unless -n is given). -l filters on the policies' own labels.`,
		Example: `  attache get policies -f examples/parable
  attache get policies retrypolicy -n baker -o wide
  attache get policies -A -l team=baker -o yaml`,
		Args: cobra.MaximumNArgs(1),
	}
	o := newGetOptions(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.runPolicies(cmd, streams, args) }
	return cmd
}

// policyList is the -o json|yaml document of `attache get policies`.
type policyList struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Items      []policyItem `json:"items"`
	// Partial lists what could not be read from the cluster (forbidden
	// lists, ...): when set, policies and status may be missing or differ.
	Partial []string `json:"partial,omitempty"`
}

// policyItem is one policy: what the table shows, unabridged.
type policyItem struct {
	PolicyKind string            `json:"policyKind"`
	Ref        topology.Ref      `json:"ref"`
	Labels     map[string]string `json:"labels,omitempty"`
	Class      string            `json:"class"`
	Targets    []targetItem      `json:"targets"`
	// Untargeted says what a policy with no targets selects instead, for
	// kinds with an untargeted scope (Istio's): "the Istio Gateways of
	// namespace shop with pod labels ...".
	Untargeted string             `json:"untargeted,omitempty"`
	Stanza     string             `json:"stanza,omitempty"`
	Strategy   string             `json:"strategy,omitempty"`
	Accepted   string             `json:"accepted"`
	Programmed string             `json:"programmed,omitempty"`
	Conditions []engine.Condition `json:"conditions"`
	Affects    []topology.Ref     `json:"affects"`
	Reach      engine.Reach       `json:"reach"`

	kind *policy.Kind // for the KIND cell; not part of the document
}

// targetItem is a declared target: by name (with the resolved namespace,
// none for cluster-scoped kinds) or by label selector.
type targetItem struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	SectionName string `json:"sectionName,omitempty"`
	Selector    string `json:"selector,omitempty"`
}

func (o *getOptions) runPolicies(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	sel, err := o.validate()
	if err != nil {
		return err
	}
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	res := l.Result
	var only []*policy.Kind
	if len(args) == 1 {
		if only, err = resolvePolicyKinds(cmd, args[0], res.Kinds, policyCRDs(l.Objects)); err != nil {
			return err
		}
	}
	ns := o.common.namespace()
	objLabels := objectLabels(l.Objects)
	var items []policyItem
	for _, ps := range res.Policies {
		p := ps.Policy
		if only != nil && !slices.Contains(only, p.Kind) {
			continue
		}
		// Cluster-scoped policies are listed whatever -n says, as kubectl does.
		if ns != "" && p.Ref.Namespace != "" && p.Ref.Namespace != ns {
			continue
		}
		lbls := objLabels[p.Ref.Object()]
		if !sel.Matches(labels.Set(lbls)) {
			continue
		}
		items = append(items, newPolicyItem(ps, lbls))
	}

	if o.structured() {
		if items == nil {
			items = []policyItem{}
		}
		return write(streams.Out, policyList{APIVersion: listAPIVersion, Kind: "PolicyList", Items: items, Partial: l.partial()}, o.output)
	}
	if len(items) == 0 {
		fmt.Fprintln(streams.ErrOut, noPoliciesMessage(only, ns))
		return nil
	}
	return o.printTable(streams.Out, policyTable(items, res, ns == "", o.output == "wide"))
}

// noPoliciesMessage is kubectl's "No resources found" for policies.
func noPoliciesMessage(only []*policy.Kind, ns string) string {
	what := "policies"
	if len(only) > 0 {
		names := make([]string, len(only))
		for i, k := range only {
			names[i] = k.GroupKind.Kind
		}
		what = strings.Join(names, " or ") + " policies"
	}
	if ns == "" {
		return fmt.Sprintf("No %s found.", what)
	}
	return fmt.Sprintf("No %s found in namespace %s.", what, ns)
}

// objectLabels indexes the input objects' labels by ref: the engine's
// policy.Policy does not keep them, and -l filters on them.
func objectLabels(objs []engine.Object) map[topology.Ref]map[string]string {
	out := make(map[topology.Ref]map[string]string, len(objs))
	for _, o := range objs {
		if o.Object == nil {
			continue
		}
		gk := o.Object.GroupVersionKind().GroupKind()
		out[topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}] = o.Object.GetLabels()
	}
	return out
}

func newPolicyItem(ps *engine.PolicyStatus, lbls map[string]string) policyItem {
	p := ps.Policy
	it := policyItem{
		kind:       p.Kind,
		PolicyKind: p.Kind.String(),
		Ref:        p.Ref,
		Labels:     lbls,
		Class:      string(p.Kind.Class),
		Targets:    make([]targetItem, 0, len(p.Targets)),
		Stanza:     p.Stanza,
		Strategy:   string(p.Strategy),
		Conditions: ps.Conditions,
		Affects:    ps.Affects,
		Reach:      ps.Reach,
	}
	if it.Conditions == nil {
		it.Conditions = []engine.Condition{}
	}
	if it.Affects == nil {
		it.Affects = []topology.Ref{}
	}
	if c := findCondition(ps.Conditions, engine.CondAccepted); c != nil {
		it.Accepted = c.Reason
	}
	if c := findCondition(ps.Conditions, engine.CondProgrammed); c != nil {
		it.Programmed = c.Reason
	}
	it.Untargeted = untargetedText(p)
	for _, t := range p.Targets {
		ti := targetItem{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, SectionName: t.SectionName}
		if topology.ClusterScoped(t.GroupKind()) {
			ti.Namespace = ""
		}
		if t.Selector != nil {
			ti.Selector = t.Selector.String()
		}
		it.Targets = append(it.Targets, ti)
	}
	return it
}

func findCondition(conds []engine.Condition, typ string) *engine.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// firstProblem is the message of the first condition that is not plainly
// good (Accepted/Accepted, Programmed/Programmed): what the reader should
// look at first.
func firstUnhappyMessage(conds []engine.Condition) string {
	for _, c := range conds {
		good := c.Status == string(metav1.ConditionTrue) &&
			((c.Type == engine.CondAccepted && c.Reason == engine.ReasonAccepted) ||
				(c.Type == engine.CondProgrammed && c.Reason == engine.ReasonProgrammed))
		if !good {
			return c.Message
		}
	}
	return ""
}

// targetCell renders a declared target compactly: Kind/name, with the
// namespace only when it is not the policy's own.
func targetCell(t targetItem, policyNS string) string {
	kind := shortKind(topology.GroupKind{Group: t.Group, Kind: t.Kind})
	if t.Selector != "" {
		return kind + "[" + t.Selector + "]"
	}
	s := kind + "/"
	if t.Namespace != "" && t.Namespace != policyNS {
		s += t.Namespace + "/"
	}
	s += t.Name
	if t.SectionName != "" {
		s += "#" + t.SectionName
	}
	return s
}

// policyTable builds the kubectl-style table; priority-1 columns are shown
// with -o wide only.
func policyTable(items []policyItem, res *engine.Result, withNamespace, wide bool) *metav1.Table {
	cols := []metav1.TableColumnDefinition{{Name: "Kind", Type: "string"}}
	if withNamespace {
		cols = append(cols, metav1.TableColumnDefinition{Name: "Namespace", Type: "string"})
	}
	cols = append(cols,
		metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"},
		metav1.TableColumnDefinition{Name: "Targets", Type: "string"},
		metav1.TableColumnDefinition{Name: "Class", Type: "string"},
		metav1.TableColumnDefinition{Name: "Stanza", Type: "string"},
		metav1.TableColumnDefinition{Name: "Strategy", Type: "string"},
		metav1.TableColumnDefinition{Name: "Accepted", Type: "string"},
		metav1.TableColumnDefinition{Name: "Programmed", Type: "string"},
		metav1.TableColumnDefinition{Name: "Affects", Type: "integer"},
		metav1.TableColumnDefinition{Name: "Contexts", Type: "string", Priority: 1, Description: "contexts where the policy wins in full/partial/none"},
		metav1.TableColumnDefinition{Name: "Message", Type: "string", Priority: 1},
	)
	names := kindNames(res.Kinds)
	maxTargets := maxTargetsShown
	if wide {
		maxTargets = 0
	}
	t := &metav1.Table{ColumnDefinitions: cols}
	for _, it := range items {
		targets := make([]string, len(it.Targets))
		for i, tg := range it.Targets {
			targets[i] = targetCell(tg, it.Ref.Namespace)
		}
		if it.Untargeted != "" {
			targets = append(targets, "("+it.Untargeted+")")
		}
		cells := []any{names[it.kind]}
		if withNamespace {
			cells = append(cells, it.Ref.Namespace)
		}
		cells = append(cells,
			it.Ref.Name,
			joinTruncated(targets, maxTargets),
			it.Class,
			cellOrDash(it.Stanza),
			cellOrDash(it.Strategy),
			cellOrDash(it.Accepted),
			cellOrDash(it.Programmed),
			int64(len(it.Affects)),
			fmt.Sprintf("%d/%d/%d", it.Reach.Full, it.Reach.Partial, it.Reach.None),
			cellOrDash(firstUnhappyMessage(it.Conditions)),
		)
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells})
	}
	return t
}
