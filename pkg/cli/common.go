package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/cluster"
	"github.com/attache-dev/attache/pkg/crdschema"
	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// commonOptions are the kubectl-style flags every query command shares.
type commonOptions struct {
	config         *genericclioptions.ConfigFlags
	files          []string
	kustomize      []string // -k: folders kustomize builds
	allNamespaces  bool
	selector       string
	output         string
	controllerName string
	domain         string
	profiles       bool
	validate       bool     // see validateFlagHelp
	features       []string // --feature, read by load into featureSet
	featureSet     policy.Features
	// schemas keeps the CRD schemas compiled for --validate across the
	// computations of one command (impact computes twice).
	schemas crdschema.Cache
	// policyKindsOnly reads only the policy CRDs from a cluster: for
	// questions about the kinds, which need nothing else.
	policyKindsOnly bool
}

func newCommonOptions() *commonOptions {
	return &commonOptions{config: genericclioptions.NewConfigFlags(true)}
}

// addFlags registers -f, -A, -l, -o and the kubeconfig flags (-n,
// --context, --kubeconfig, ...). outputs lists the accepted -o values, the
// first being the default.
func (o *commonOptions) addFlags(cmd *cobra.Command, outputs ...string) {
	fs := cmd.Flags()
	fs.StringArrayVarP(&o.files, "filename", "f", nil, "read manifests from a file, folder, or - (stdin) instead of the cluster (repeatable)")
	fs.StringArrayVarP(&o.kustomize, "kustomize", "k", nil, kustomizeFlagHelp)
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "show objects of every namespace")
	fs.StringVarP(&o.selector, "selector", "l", "", "label selector to filter the listed objects")
	fs.StringVar(&o.controllerName, "controller-name", engine.DefaultControllerName, "controllerName of policy ancestor status entries")
	fs.StringVar(&o.domain, "condition-domain", engine.DefaultConditionDomain, "domain prefix of <Kind>Affected conditions")
	fs.BoolVar(&o.profiles, "profiles", true, profilesFlagHelp)
	fs.BoolVar(&o.validate, "validate", true, validateFlagHelp)
	fs.StringArrayVar(&o.features, "feature", nil, featureFlagHelp)
	if len(outputs) > 0 {
		fs.StringVarP(&o.output, "output", "o", outputs[0], fmt.Sprintf("output format: one of %v", outputs))
	}
	o.config.AddFlags(fs)
}

// kustomizeFlagHelp documents -k, shared by every command that reads files.
const kustomizeFlagHelp = "read what kustomize builds from a folder with a kustomization (as kubectl -k), instead of the cluster; with -f, both are read (repeatable)"

// fromFiles reports whether the input is files (-f or -k), not the cluster.
func (o *commonOptions) fromFiles() bool { return len(o.files) > 0 || len(o.kustomize) > 0 }

// readFiles reads -f and -k; err names the paths that could not be read.
func readFiles(files, kustomize []string, stdin io.Reader) ([]engine.Object, []diag.Problem, error) {
	var objs []engine.Object
	var probs []diag.Problem
	var errs []error
	if len(files) > 0 {
		o, p, err := manifest.Read(files, stdin)
		objs, probs = append(objs, o...), append(probs, p...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w (check the -f paths)", err))
		}
	}
	if len(kustomize) > 0 {
		o, p, err := manifest.ReadKustomizations(kustomize)
		objs, probs = append(objs, o...), append(probs, p...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w (check the -k folders)", err))
		}
	}
	return objs, probs, errors.Join(errs...)
}

// profilesFlagHelp documents --profiles, shared by every command.
const profilesFlagHelp = "apply attache's built-in profiles of the implementations' policy kinds (Envoy Gateway, Istio, NGINX Gateway Fabric, Kuadrant, ...; docs/profiles.md); --profiles=false: only CRDs labelled gateway.networking.k8s.io/policy are policy kinds, and route delegation is followed under every Gateway"

// validateFlagHelp documents --validate, shared by every command.
const validateFlagHelp = "with -f (and for the file of impact --apply), check each policy against the schema of its CRD (when given or in the cluster) as the API server would: a policy it would refuse is Invalid (--validate=false: read policies as written)"

// featureFlagHelp documents --feature, shared by every command.
const featureFlagHelp = "set a feature of an implementation's configuration that a kind's feature gates name, over the configuration read (repeatable): NAME=true|false, e.g. EnvoyGateway.extensionApis.enableLua=true; unset features are as the configuration attache reads says (Envoy Gateway's envoy-gateway-config ConfigMap), else off"

// parseFeatures reads the --feature flags.
func parseFeatures(flags []string) (policy.Features, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := policy.Features{}
	for _, f := range flags {
		name, on, err := policy.ParseFeature(f)
		if err != nil {
			return nil, err
		}
		out[name] = policy.Feature{On: on, From: "--feature " + f}
	}
	return out, nil
}

// engineOptions are the engine options the flags give.
func (o *commonOptions) engineOptions() engine.Options {
	opts := engine.Options{ControllerName: o.controllerName, ConditionDomain: o.domain, DisableProfiles: !o.profiles, Features: o.featureSet}
	if o.validate && o.fromFiles() {
		opts.Schemas = schemaCheck(&o.schemas)
	}
	return opts
}

// schemaCheck gives the engine the schemas of c (engine.Options.Schemas).
func schemaCheck(c *crdschema.Cache) func(*unstructured.Unstructured) (engine.SchemaValidator, error) {
	return func(crd *unstructured.Unstructured) (engine.SchemaValidator, error) {
		s, err := c.Get(crd)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// namespace is the namespace the question is scoped to: "" with -A, else
// -n, else the kubeconfig context's namespace (or "default"; with -f and no
// -n, "" meaning every namespace).
func (o *commonOptions) namespace() string {
	if o.allNamespaces {
		return ""
	}
	if o.config.Namespace != nil && *o.config.Namespace != "" {
		return *o.config.Namespace
	}
	if o.fromFiles() {
		return ""
	}
	ns, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// loaded is the input of a question and the engine's answer.
type loaded struct {
	Objects  []engine.Object
	Problems []diag.Problem
	// Unread lists what could not be read (e.g. lists forbidden by RBAC);
	// the answer is then partial and commands say so.
	Unread []cluster.Unread
	// unreadObjects says which single objects could not be read (see
	// cluster.Snapshot.UnreadObjects); nil when none.
	unreadObjects func(topology.Ref) bool
	// notes are the cluster read's assumptions (cluster.Snapshot.Notes).
	notes []string
	// served are the kinds the cluster's CRDs serve
	// (cluster.Snapshot.ServedAPIs); nil for files.
	served policy.ServedAPIs
	Result *engine.Result
}

// load reads the input (files with -f, else the cluster) and runs the engine.
func (o *commonOptions) load(ctx context.Context, streams genericiooptions.IOStreams) (*loaded, error) {
	l := &loaded{}
	var err error
	if o.featureSet, err = parseFeatures(o.features); err != nil {
		return nil, err
	}
	if o.fromFiles() {
		objs, probs, err := readFiles(o.files, o.kustomize, streams.In)
		if err != nil {
			return nil, err
		}
		l.Objects, l.Problems = objs, probs
	} else {
		if err := o.checkClusterConfigured(); err != nil {
			return nil, err
		}
		cfg, err := o.config.ToRESTConfig()
		if err != nil {
			return nil, fmt.Errorf("cannot reach a cluster: %w (set --kubeconfig/--context, or read manifests with -f PATH)", err)
		}
		snap, err := cluster.Read(ctx, cfg, cluster.Options{Namespace: o.namespace(), PolicyKindsOnly: o.policyKindsOnly, DisableProfiles: !o.profiles})
		if err != nil {
			return nil, err
		}
		l.Objects, l.Unread, l.unreadObjects, l.notes, l.served = snap.Objects, snap.Unread, snap.UnreadFunc(), snap.Notes, snap.ServedAPIs
	}
	l.Result = engine.Compute(l.Objects, l.engineOptions(o))
	l.notes = append(l.notes, unusedFeatures(o.featureSet, l.Result.Kinds)...)
	return l, nil
}

// unusedFeatures warns about --feature names that computing with the
// policy kinds read does not read (engine.FeaturesRead: their feature
// gates, the features their validation rules are judged unless, Envoy
// Gateway's mergeGateways default and the fields of its default
// EnvoyProxy spec they judge): a typo changes nothing, silently
// otherwise.
func unusedFeatures(set policy.Features, kinds []*policy.Kind) []string {
	read := engine.FeaturesRead(kinds)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if !read[name] {
			out = append(out, fmt.Sprintf("--feature %s: none of the policy kinds read uses it (a feature gate, a rule judged unless it, Envoy Gateway's mergeGateways default or a field of its default EnvoyProxy spec), so it changes nothing (attache get policykinds -o wide lists the gates)", name))
		}
	}
	return out
}

// engineOptions are the engine options of the flags, with the objects the
// cluster read could not get.
func (l *loaded) engineOptions(o *commonOptions) engine.Options {
	opts := o.engineOptions()
	opts.Unread = l.unreadObjects
	opts.ServedAPIs = l.served
	return opts
}

// checkClusterConfigured fails when there is no cluster to read: no
// kubeconfig, no --server and not in a pod. client-go would otherwise fall
// back to http://localhost:8080 and fail with "connection refused", which
// does not tell a new user what is missing.
func (o *commonOptions) checkClusterConfigured() error {
	if o.config.APIServer != nil && *o.config.APIServer != "" {
		return nil
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return nil // in a pod: client-go uses the in-cluster configuration
	}
	raw, err := o.config.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return nil // a broken kubeconfig is reported by ToRESTConfig
	}
	return fmt.Errorf("no cluster to read: no kubeconfig found (--kubeconfig, $KUBECONFIG or ~/.kube/config); point --kubeconfig at one, or read manifests with -f PATH (for example -f examples/parable)")
}

// warn prints the problems and the partial-read notes on stderr.
func (l *loaded) warn(streams genericiooptions.IOStreams) {
	for _, p := range l.Problems {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", p.Error())
	}
	for _, p := range l.Result.Problems {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", p.Error())
	}
	for _, w := range lookAlikes(l.Objects, l.Result.Kinds) {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", w)
	}
	for _, w := range withoutCRD(l.Objects, l.Result.Kinds) {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", w)
	}
	for _, n := range l.notes {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", n)
	}
	// What could not be read at all hides policies and changes answers:
	// say it first, then the lists narrowed to one namespace.
	hidden, narrowed := l.unreadSplit()
	for _, u := range hidden {
		fmt.Fprintf(streams.ErrOut, "warning: partial answer: %s\n", u.Message)
	}
	if len(narrowed) > 0 {
		fmt.Fprintf(streams.ErrOut, "warning: partial answer: %d kinds could only be read in one namespace:\n", len(narrowed))
		for _, u := range narrowed {
			fmt.Fprintf(streams.ErrOut, "  %s\n", u.Message)
		}
	}
	if note := l.partialNote(); note != "" {
		fmt.Fprintf(streams.ErrOut, "warning: this answer is PARTIAL: %s; what was not read may change the results shown\n", note)
	}
}

// lookAlikes warns about CRDs whose schema has a policy's targetRef(s) or
// targetSelectors while attache reads them as no policy kind (neither
// labelled nor known to a profile): their policies would be ignored
// without a word. The warning says how to declare them.
func lookAlikes(objs []engine.Object, kinds []*policy.Kind) []string {
	known := map[topology.GroupKind]bool{}
	for _, k := range kinds {
		known[k.GroupKind] = true
	}
	var out []string
	for _, o := range objs {
		u := o.Object
		if u == nil || u.GetKind() != "CustomResourceDefinition" || !policy.LooksLikePolicy(u) {
			continue
		}
		if _, labelled := u.GetLabels()[policy.LabelPolicy]; labelled {
			continue // labelled: a valid kind, or an error already reported
		}
		var gk topology.GroupKind
		gk.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
		gk.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "names", "kind")
		if known[gk] {
			continue
		}
		if tr, ok := profiles.TranslatedInto(gk); ok {
			into := make([]string, len(tr.Into))
			for i, k := range tr.Into {
				into[i] = k.String()
			}
			out = append(out, fmt.Sprintf("CRD %s: %s's controller (%s) translates each %s into %s objects, which attache reads; %s is not read itself (declaring it a policy kind would count its effect twice)",
				u.GetName(), gk, tr.Implementation, gk.Kind, strings.Join(into, ", "), gk.Kind))
			continue
		}
		out = append(out, fmt.Sprintf("CRD %s: %s looks like a policy kind (its spec has targetRef, targetRefs or targetSelectors) but is neither labelled %s nor known to a built-in profile, so its policies are ignored; declare it with `kubectl label crd %s %s=Inherited` (or Direct) and, where the defaults do not fit, the attache.dev/* annotations (docs/semantics.md)",
			u.GetName(), gk, policy.LabelPolicy, u.GetName(), policy.LabelPolicy))
	}
	return out
}

// withoutCRD warns about objects given (with -f) without the CRD of their
// kind, where the kind is one a built-in profile knows or the objects look
// like policies (spec.targetRef, targetRefs or targetSelectors): attache
// reads policy kinds from their CRDs, so such objects are ignored, and
// "No policies found" would not say why. One line per kind.
func withoutCRD(objs []engine.Object, kinds []*policy.Kind) []string {
	known := map[topology.GroupKind]bool{}
	for _, k := range kinds {
		known[k.GroupKind] = true
	}
	for _, o := range objs {
		if u := o.Object; u != nil && u.GetKind() == "CustomResourceDefinition" {
			var gk topology.GroupKind
			gk.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
			gk.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "names", "kind")
			known[gk] = true // given: a kind, or a problem already said
		}
	}
	type seen struct {
		n     int
		first string
		impl  string // the profile's implementation, "" for a look-alike
	}
	found := map[topology.GroupKind]*seen{}
	var order []topology.GroupKind
	for _, o := range objs {
		u := o.Object
		if u == nil {
			continue
		}
		gvk := u.GroupVersionKind()
		gk := topology.GroupKind{Group: gvk.Group, Kind: gvk.Kind}
		if gk.Group == "" || known[gk] || gatewayapi.Handles(gk) {
			continue // the core group, a kind given, or a topology kind read without a CRD
		}
		if s := found[gk]; s != nil {
			s.n++
			continue
		}
		impl := ""
		if p, ok := profiles.Lookup(gk); ok {
			impl = p.Implementation
		} else if !hasTargetFields(u) {
			continue
		}
		found[gk] = &seen{n: 1, first: o.Source, impl: impl}
		order = append(order, gk)
	}
	out := make([]string, 0, len(order))
	for _, gk := range order {
		s := found[gk]
		what := "its objects look like policies (spec has targetRef, targetRefs or targetSelectors)"
		if s.impl != "" {
			what = "a policy kind of " + s.impl + " (docs/profiles.md), read as one once its CRD is given"
		}
		objects := "object"
		if s.n > 1 {
			objects = "objects"
		}
		out = append(out, fmt.Sprintf("%d %s %s (the first at %s) given without the kind's CustomResourceDefinition, so not read as policies (%s); add the CRD with -f (the implementation's CRD manifest, or `kubectl get crd -o yaml` of a cluster that has it)",
			s.n, gk, objects, s.first, what))
	}
	return out
}

// hasTargetFields reports whether object u's spec has a policy's
// targetRef, targetRefs or targetSelectors.
func hasTargetFields(u *unstructured.Unstructured) bool {
	spec, _ := u.Object["spec"].(map[string]any)
	for _, f := range []string{"targetRef", "targetRefs", "targetSelectors"} {
		if _, ok := spec[f]; ok {
			return true
		}
	}
	return false
}

// unreadSplit separates what could not be read at all from the kinds read
// in one namespace only.
func (l *loaded) unreadSplit() (hidden, narrowed []cluster.Unread) {
	for _, u := range l.Unread {
		if u.Namespace != "" {
			narrowed = append(narrowed, u)
		} else {
			hidden = append(hidden, u)
		}
	}
	return hidden, narrowed
}

// partial lists, for the -o json|yaml documents, what could not be read:
// the answer is partial when it is not empty.
func (l *loaded) partial() []string {
	var out []string
	for _, u := range l.Unread {
		out = append(out, u.Message)
	}
	return out
}

// partialNote says why the answer is partial ("5 kinds could not be read
// and 8 kinds only in namespace baker"), "" when it is not: for the stderr
// verdict, and the line text answers carry on stdout.
func (l *loaded) partialNote() string {
	hidden, narrowed := l.unreadSplit()
	var parts []string
	if len(hidden) > 0 {
		parts = append(parts, plural(len(hidden), "kind")+" could not be read")
	}
	if len(narrowed) > 0 {
		nss := map[string]bool{}
		for _, u := range narrowed {
			nss[u.Namespace] = true
		}
		where := "one namespace"
		if len(nss) == 1 {
			where = "namespace " + narrowed[0].Namespace
		}
		parts = append(parts, fmt.Sprintf("%s only in %s", plural(len(narrowed), "kind"), where))
		if len(hidden) == 0 {
			parts[len(parts)-1] = plural(len(narrowed), "kind") + " could only be read in " + where
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " and ")
}

// printPartial prints, at the top of a text answer, that it is partial.
func (l *loaded) printPartial(w io.Writer) {
	if note := l.partialNote(); note != "" {
		fmt.Fprintf(w, "PARTIAL ANSWER: %s (see the warnings); what was not read may change what is shown here.\n", note)
	}
}

// unreadPolicyKind says whether the policies of kind gk could not all be
// read: ok, and the one namespace read ("" when none).
func (l *loaded) unreadPolicyKind(gk topology.GroupKind) (ns string, ok bool) {
	for _, u := range l.Unread {
		if u.Policy && u.Group == gk.Group && u.Kind == gk.Kind {
			return u.Namespace, true
		}
	}
	return "", false
}
