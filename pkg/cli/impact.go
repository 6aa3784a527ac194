package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

func init() { register(newImpactCommand) }

// impactOptions are the flags of `attache impact`.
type impactOptions struct {
	common *commonOptions
	delete bool
	apply  string
}

func newImpactCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &impactOptions{common: newCommonOptions()}
	cmd := &cobra.Command{
		Use:   "impact (KIND/NAME --delete | --apply FILE) [-n NS] [-f PATH] [-o text|json|yaml]",
		Short: "Show what would change if a policy were deleted or manifests applied",
		Long: `Answers "what happens if I delete this policy?" (or apply these manifests)
before anything is touched: attache computes every effective policy and every
policy status twice, as things are and as they would be, and prints the
difference. Nothing is ever written to a cluster.

  KIND/NAME --delete   the policy deleted (KIND: retrypolicy, RetryPolicy.group,
                       ...; -n chooses its namespace)
  --apply FILE         the objects of FILE (a file, a folder, or - for standard
                       input) applied: each one is created, or replaces the
                       object with the same group, kind, namespace and name.
                       FILE may hold policies, routes, Services, anything.
                       Objects without a namespace go to -n (or "default").

It prints every target whose effective policy would change, field by field
(before -> after, "(unset)" when a field is not set), once per group of paths
that change alike; the policies whose Accepted or Programmed condition would
change; totals per namespace and target kind; and a one-line verdict. The
whole input is compared, every namespace: a policy's reach does not stop at
its own namespace.`,
		Example: `  # Before deleting the namespace-wide RetryPolicy (the GEP-713 parable):
  attache impact retrypolicy/namespace-retries -n baker --delete -f examples/parable
  # Before applying a change (a file, a folder, or - for standard input):
  attache impact --apply - -f examples/parable <<'EOF'
  apiVersion: policies.cupcakes.example/v1
  kind: RetryPolicy
  metadata: {name: gateway-retries, namespace: infra}
  spec:
    targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: cupcakes}]
    overrides: {numRetries: 1, strategy: patch}
  EOF`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, streams, args) },
	}
	o.common.addFlags(cmd, "text", "json", "yaml")
	// -l has no meaning here: the whole input is always compared.
	_ = cmd.Flags().MarkHidden("selector")
	cmd.Flags().Lookup("all-namespaces").Usage = "find KIND/NAME in any namespace (the comparison always covers every namespace)"
	cmd.Flags().BoolVar(&o.delete, "delete", false, "show what deleting the policy KIND/NAME would change")
	cmd.Flags().StringVar(&o.apply, "apply", "", "show what applying the objects of this file, folder or - (stdin) would change")
	return cmd
}

// validate checks the arguments and flags before any input is read.
func (o *impactOptions) validate(cmd *cobra.Command, args []string) error {
	name := cmd.CommandPath()
	switch o.common.output {
	case "text", "json", "yaml":
	default:
		return fmt.Errorf("unknown output format %q: use -o text, -o json or -o yaml", o.common.output)
	}
	if o.common.selector != "" {
		return fmt.Errorf("-l is not supported by impact: the whole input is always compared")
	}
	applying := cmd.Flags().Changed("apply")
	switch {
	case o.delete && applying:
		return fmt.Errorf("--delete and --apply cannot be combined: ask about one change at a time")
	case o.delete && len(args) == 0:
		return fmt.Errorf("--delete needs the policy to delete: %s KIND/NAME --delete (for example %s retrypolicy/namespace-retries -n baker --delete)", name, name)
	case applying && len(args) > 0:
		return fmt.Errorf("--apply takes no KIND/NAME (%s): the objects come from the file; to see a deletion, use %s %s --delete", args[0], name, args[0])
	case applying && o.apply == "":
		return fmt.Errorf("--apply needs a file, a folder, or - for standard input")
	case !o.delete && !applying:
		if len(args) == 1 {
			return fmt.Errorf("what about %s? add --delete to see what deleting it would change", args[0])
		}
		return fmt.Errorf("say which change to assess: %s KIND/NAME --delete, or %s --apply FILE", name, name)
	}
	if applying && o.apply == "-" && slices.Contains(o.common.files, "-") {
		return fmt.Errorf("--apply - and -f - both want standard input: give one of them as a file")
	}
	return nil
}

func (o *impactOptions) run(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	if err := o.validate(cmd, args); err != nil {
		return err
	}
	var typ, name string
	if o.delete {
		var err error
		if typ, name, err = parseTypeName(args[0]); err != nil {
			return err
		}
	}
	// The file to apply is read first, so that a bad path fails before a
	// (possibly slow) cluster read.
	var applyObjs []engine.Object
	if o.apply != "" {
		objs, probs, err := manifest.Read([]string{o.apply}, streams.In)
		if err != nil {
			return fmt.Errorf("--apply: %w", err)
		}
		for _, p := range probs {
			fmt.Fprintf(streams.ErrOut, "warning: --apply: %s\n", p.Error())
		}
		if len(objs) == 0 {
			return fmt.Errorf("--apply %s holds no objects: nothing to assess", o.apply)
		}
		applyObjs = objs
	}
	// -n names the policy to delete (or the namespace of namespace-less
	// objects to apply); the input itself is read in every namespace, since
	// a policy's reach does not stop at its namespace (load falls back to
	// ns only for the lists RBAC forbids cluster-wide).
	ns := o.common.namespace()
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	before := l.Result

	var change impactChange
	var afterObjs []engine.Object
	if o.delete {
		k, err := resolvePolicyKind(typ, before.Kinds)
		if err != nil {
			return fmt.Errorf("%w (list them with: %s get policykinds)", err, cmd.Root().DisplayName())
		}
		ps, err := lookupPolicy(before, k, ns, name, cmd.Root().DisplayName())
		if err != nil {
			return err
		}
		ref := ps.Policy.Ref
		change = impactChange{Action: "delete", Policy: &ref}
		scope := impactScopes(l.Objects)
		for _, obj := range l.Objects {
			if obj.Object != nil && impactObjectRef(obj.Object, scope) == ref {
				continue
			}
			afterObjs = append(afterObjs, obj)
		}
	} else {
		defNS := ns // -n, or the context's namespace when reading a cluster
		if defNS == "" {
			defNS = "default"
		}
		change = impactChange{Action: "apply", File: o.apply}
		afterObjs, change.Objects = impactApply(l.Objects, applyObjs, defNS, streams)
	}
	opts := l.engineOptions(o.common)
	if o.apply != "" && o.common.validate && opts.Schemas == nil {
		// Read from a cluster, the applied file still never went through
		// its API server: check its objects, and only them (the cluster's
		// own passed), against the cluster's CRDs.
		applied := map[topology.Ref]bool{}
		for _, a := range change.Objects {
			applied[a.Ref] = true
		}
		scope := impactScopes(l.Objects, applyObjs)
		check := schemaCheck(&o.common.schemas)
		opts.Schemas = func(crd *unstructured.Unstructured) (engine.SchemaValidator, error) {
			v, err := check(crd)
			if err != nil {
				return nil, err
			}
			return onlySome{v, func(u *unstructured.Unstructured) bool { return applied[impactObjectRef(u, scope)] }}, nil
		}
	}
	after := engine.Compute(afterObjs, opts)
	impactWarnNew(streams, before.Problems, after.Problems)

	rep := buildImpact(before, after, change)
	if len(l.Unread) > 0 {
		rep.Partial = l.partial()
		var b strings.Builder
		l.printPartial(&b)
		rep.partialLine = strings.TrimSuffix(b.String(), "\n")
	}
	if o.common.output != "text" {
		return write(streams.Out, rep, o.common.output)
	}
	printImpact(streams.Out, rep)
	return nil
}

// impactScopes returns the group/kinds whose objects are cluster-scoped:
// Namespace, GatewayClass, CRDs, and the kinds of CRDs with scope Cluster.
func impactScopes(objs ...[]engine.Object) map[topology.GroupKind]bool {
	out := map[topology.GroupKind]bool{
		topology.KindNamespace:    true,
		topology.KindGatewayClass: true,
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	}
	for _, list := range objs {
		for _, o := range list {
			u := o.Object
			if u == nil || u.GroupVersionKind().Group != "apiextensions.k8s.io" || u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			if scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope"); scope == "Cluster" {
				g, _, _ := unstructured.NestedString(u.Object, "spec", "group")
				k, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
				out[topology.GroupKind{Group: g, Kind: k}] = true
			}
		}
	}
	return out
}

// impactObjectRef is the identity of an object as the engine sees it:
// group, kind, namespace and name, a namespaced object without namespace
// being in "default" (as kubectl apply would put it) and a cluster-scoped
// one having none.
func impactObjectRef(u *unstructured.Unstructured, clusterScoped map[topology.GroupKind]bool) topology.Ref {
	r := topology.Ref{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	switch {
	case clusterScoped[r.GroupKind()]:
		r.Namespace = ""
	case r.Namespace == "":
		r.Namespace = "default"
	}
	return r
}

// onlySome checks the objects keep selects and passes the others.
type onlySome struct {
	engine.SchemaValidator
	keep func(*unstructured.Unstructured) bool
}

// Validate implements engine.SchemaValidator.
func (o onlySome) Validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	if !o.keep(u) {
		return nil
	}
	return o.SchemaValidator.Validate(ctx, u)
}

// impactApply returns objs with apply's objects applied (created, or
// replacing the object of the same identity) and what happened to each.
// Namespaced objects of apply without a namespace get defNS.
func impactApply(objs, apply []engine.Object, defNS string, streams genericiooptions.IOStreams) ([]engine.Object, []impactObject) {
	scope := impactScopes(objs, apply)
	out := slices.Clone(objs)
	index := map[topology.Ref]int{}
	for i, o := range out {
		if o.Object != nil {
			index[impactObjectRef(o.Object, scope)] = i
		}
	}
	var actions []impactObject
	applied := map[topology.Ref]int{} // ref -> index in actions
	for _, o := range apply {
		u := o.Object
		if u == nil {
			continue
		}
		gk := topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}
		if u.GetNamespace() == "" && !scope[gk] && defNS != "" {
			u = u.DeepCopy()
			u.SetNamespace(defNS)
			o.Object = u
		}
		ref := impactObjectRef(u, scope)
		if j, dup := applied[ref]; dup {
			fmt.Fprintf(streams.ErrOut, "warning: --apply: %s: %s appears more than once; the last one is applied\n", o.Source, impactObjectString(ref))
			out[index[ref]] = o
			actions[j].Source = o.Source
			continue
		}
		act := impactObject{Ref: ref, Source: o.Source}
		if i, ok := index[ref]; ok {
			act.Action = "replace"
			out[i] = o
		} else {
			act.Action = "create"
			index[ref] = len(out)
			out = append(out, o)
		}
		applied[ref] = len(actions)
		actions = append(actions, act)
	}
	slices.SortStableFunc(actions, func(a, b impactObject) int { return a.Ref.Compare(b.Ref) })
	return out, actions
}

// impactWarnNew prints the problems that only the changed input has: the
// change would introduce them.
func impactWarnNew(streams genericiooptions.IOStreams, before, after []diag.Problem) {
	seen := map[string]bool{}
	for _, p := range before {
		seen[p.Error()] = true
	}
	for _, p := range after {
		if !seen[p.Error()] {
			fmt.Fprintf(streams.ErrOut, "warning: after the change: %s\n", p.Error())
		}
	}
}
