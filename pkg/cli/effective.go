package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/internal/jsonyaml"
	"github.com/attache-dev/attache/pkg/crdschema"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
)

type effectiveOptions struct {
	files          []string
	kustomize      []string
	output         string
	controllerName string
	domain         string
	profiles       bool
	validate       bool // see validateFlagHelp
	features       []string
}

func newEffectiveCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &effectiveOptions{}
	cmd := &cobra.Command{
		Use:   "effective -f PATH [-f PATH ...] [-k FOLDER ...] [-o json|yaml]",
		Short: "Compute effective policies and policy status from manifests",
		Long: `Reads manifests (files, folders, or - for standard input; multi-document YAML
or JSON; with -k, what kustomize builds from a folder, as kubectl -k), finds policy kinds from CRDs labelled gateway.networking.k8s.io/policy
and from the CRDs of the implementations' kinds attache has a built-in profile
for (docs/profiles.md), and prints every effective policy per target and context (path) with per-field
provenance, every policy's status, and what each policy affects.

Invalid objects are reported on standard error and in "errors"; they never stop
the run. The output format is documented in docs/output.md.`,
		Example: `  attache effective -f examples/gep-713/example-2
  cat manifests.yaml | attache effective -f - -o yaml
  attache effective -k overlays/production`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(streams) },
	}
	cmd.Flags().StringArrayVarP(&o.files, "filename", "f", nil, "manifest file, folder, or - for stdin (repeatable)")
	cmd.Flags().StringArrayVarP(&o.kustomize, "kustomize", "k", nil, "folder with a kustomization: read what kustomize builds from it, as kubectl -k (repeatable; with -f, both are read)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "json", "output format: json or yaml")
	cmd.Flags().StringVar(&o.controllerName, "controller-name", engine.DefaultControllerName, "controllerName of the policy ancestor status entries")
	cmd.Flags().StringVar(&o.domain, "condition-domain", engine.DefaultConditionDomain, "domain prefix of <Kind>Affected conditions")
	cmd.Flags().BoolVar(&o.profiles, "profiles", true, profilesFlagHelp)
	cmd.Flags().BoolVar(&o.validate, "validate", true, validateFlagHelp)
	cmd.Flags().StringArrayVar(&o.features, "feature", nil, featureFlagHelp)
	return cmd
}

func (o *effectiveOptions) run(streams genericiooptions.IOStreams) error {
	if len(o.files) == 0 && len(o.kustomize) == 0 {
		return fmt.Errorf("no input: give manifests with -f PATH (a file, a folder, or - for standard input) or -k FOLDER (a kustomization)")
	}
	if o.output != "json" && o.output != "yaml" {
		return fmt.Errorf("unknown output format %q: use -o json or -o yaml", o.output)
	}
	features, err := parseFeatures(o.features)
	if err != nil {
		return err
	}
	objs, probs, readErr := readFiles(o.files, o.kustomize, streams.In)
	opts := engine.Options{ControllerName: o.controllerName, ConditionDomain: o.domain, DisableProfiles: !o.profiles, Features: features}
	if o.validate {
		opts.Schemas = schemaCheck(&crdschema.Cache{})
	}
	res := engine.Compute(objs, opts)
	rep := report.Build(res, o.controllerName, probs)
	for _, p := range rep.Errors {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", p.Error())
	}
	// On stderr, as the other commands say them: stdout stays the report.
	for _, n := range unusedFeatures(features, res.Kinds) {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", n)
	}
	for _, w := range append(lookAlikes(objs, res.Kinds), withoutCRD(objs, res.Kinds)...) {
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", w)
	}
	if err := write(streams.Out, rep, o.output); err != nil {
		return err
	}
	return readErr
}

func write(w io.Writer, v any, format string) error {
	if format == "yaml" {
		// Compact JSON: the YAML does not depend on its layout. jsonyaml
		// gives yaml.JSONToYAML's bytes without its costly round trip
		// through interface{} values.
		js, err := json.Marshal(v)
		if err != nil {
			return err
		}
		y, err := jsonyaml.Convert(js)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(js, '\n'))
	return err
}
