package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// expectation is the content of a case's expected.yaml.
type expectation struct {
	// Inputs are extra manifest paths, relative to the case folder.
	Inputs []string `json:"inputs"`
	// Effective maps a rendered path to the effective spec. Every effective
	// policy computed must be listed: no more, no less.
	Effective map[string]map[string]any `json:"effective"`
	// Sources maps a rendered path to field path -> policy name (optional).
	Sources map[string]map[string]string `json:"sources"`
	// Affected maps a target name to the names of the policies affecting it.
	// Every affected target must be listed.
	Affected map[string][]string `json:"affected"`
	// Policies maps a policy name to its expected status.
	Policies map[string]policyExpectation `json:"policies"`
	// Errors are substrings; each must occur in some reported error, and
	// there must be exactly as many errors as listed.
	Errors []string `json:"errors"`
}

type policyExpectation struct {
	// Accepted and Programmed are the reasons of the summary conditions
	// ("" Programmed means there must be no Programmed condition).
	Accepted   string `json:"accepted"`
	Programmed string `json:"programmed"`
	// Message is a substring of the Programmed (or, when not accepted, the
	// Accepted) condition's message.
	Message string `json:"message"`
	// Ancestors maps a target name to "AcceptedReason[/ProgrammedReason]".
	Ancestors map[string]string `json:"ancestors"`
	// Affects lists the targets the policy contributes to (optional).
	Affects []string `json:"affects"`
}

func TestConformance(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under testdata/: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, dir) })
	}
}

func runCase(t *testing.T, dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want expectation
	if err := yaml.UnmarshalStrict(raw, &want); err != nil {
		t.Fatalf("expected.yaml: %v", err)
	}
	paths := []string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "expected.yaml" && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".json")) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	for _, in := range want.Inputs {
		paths = append(paths, filepath.Join(dir, in))
	}
	objs, probs, err := manifest.Read(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := engine.Compute(objs, engine.Options{})
	rep := report.Build(res, "", probs)
	check(t, want, rep)
}

func check(t *testing.T, want expectation, rep *report.Report) {
	t.Helper()
	kinds := map[string]bool{}
	for _, e := range rep.EffectivePolicies {
		kinds[e.PolicyKind] = true
	}
	multi := len(kinds) > 1
	got := map[string]map[string]any{}
	gotSources := map[string]map[string]string{}
	for _, e := range rep.EffectivePolicies {
		key := renderPath(e.Path)
		if multi {
			key = strings.SplitN(e.PolicyKind, ".", 2)[0] + " " + key
		}
		if _, dup := got[key]; dup {
			t.Errorf("path %q rendered twice (make names unique in the case)", key)
		}
		got[key] = e.Spec
		gotSources[key] = map[string]string{}
		for _, f := range e.Sources.Fields {
			gotSources[key][f.Path] = name(f.Policy)
		}
	}
	if !reflect.DeepEqual(normalize(got), normalize(want.Effective)) {
		t.Errorf("effective policies:\n got: %s\nwant: %s", dump(got), dump(want.Effective))
	}
	for path, fields := range want.Sources {
		if !reflect.DeepEqual(gotSources[path], fields) {
			t.Errorf("sources of %q: got %v, want %v", path, gotSources[path], fields)
		}
	}
	gotAffected := map[string][]string{}
	for _, a := range rep.Affected {
		var ps []string
		for _, p := range a.Policies {
			ps = append(ps, name(p))
		}
		gotAffected[name(a.Target)] = append(gotAffected[name(a.Target)], ps...)
	}
	for k := range gotAffected {
		sort.Strings(gotAffected[k])
	}
	if want.Affected == nil {
		want.Affected = map[string][]string{}
	}
	if !reflect.DeepEqual(gotAffected, want.Affected) {
		t.Errorf("affected:\n got: %v\nwant: %v", gotAffected, want.Affected)
	}
	byName := map[string]report.Policy{}
	for _, p := range rep.Policies {
		byName[name(p.Ref)] = p
	}
	for n, pw := range want.Policies {
		p, ok := byName[n]
		if !ok {
			t.Errorf("policy %s: not in the report", n)
			continue
		}
		checkPolicy(t, n, pw, p)
	}
	if len(rep.Errors) != len(want.Errors) {
		t.Errorf("got %d errors, want %d:\n%s", len(rep.Errors), len(want.Errors), errorList(rep))
	}
	for _, sub := range want.Errors {
		found := false
		for _, e := range rep.Errors {
			if strings.Contains(e.Error(), sub) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error contains %q; errors:\n%s", sub, errorList(rep))
		}
	}
}

func checkPolicy(t *testing.T, n string, pw policyExpectation, p report.Policy) {
	t.Helper()
	acc, prog := cond(p.Conditions, engine.CondAccepted), cond(p.Conditions, engine.CondProgrammed)
	if acc == nil || acc.Reason != pw.Accepted {
		t.Errorf("policy %s: Accepted = %+v, want reason %s", n, acc, pw.Accepted)
	} else if wantStatus := map[bool]string{true: "True", false: "False"}[pw.Accepted == engine.ReasonAccepted]; acc.Status != wantStatus {
		t.Errorf("policy %s: Accepted status %s, want %s", n, acc.Status, wantStatus)
	}
	switch {
	case pw.Programmed == "" && prog != nil:
		t.Errorf("policy %s: unexpected Programmed condition %+v", n, prog)
	case pw.Programmed != "" && (prog == nil || prog.Reason != pw.Programmed):
		t.Errorf("policy %s: Programmed = %+v, want reason %s", n, prog, pw.Programmed)
	}
	if pw.Message != "" {
		c := acc
		if prog != nil {
			c = prog
		}
		if c == nil || !strings.Contains(c.Message, pw.Message) {
			t.Errorf("policy %s: message %q does not contain %q", n, msgOf(c), pw.Message)
		}
	}
	if pw.Ancestors != nil {
		got := map[string]string{}
		for _, a := range p.Ancestors {
			s := cond(a.Conditions, engine.CondAccepted).Reason
			if pc := cond(a.Conditions, engine.CondProgrammed); pc != nil {
				s += "/" + pc.Reason
			}
			got[name(a.AncestorRef)] = s
		}
		if !reflect.DeepEqual(got, pw.Ancestors) {
			t.Errorf("policy %s ancestors: got %v, want %v", n, got, pw.Ancestors)
		}
	}
	if pw.Affects != nil {
		got := []string{}
		for _, r := range p.Affects {
			got = append(got, name(r))
		}
		sort.Strings(got)
		sort.Strings(pw.Affects)
		if !reflect.DeepEqual(got, pw.Affects) {
			t.Errorf("policy %s affects: got %v, want %v", n, got, pw.Affects)
		}
	}
}

func msgOf(c *engine.Condition) string {
	if c == nil {
		return ""
	}
	return c.Message
}

func cond(cs []engine.Condition, typ string) *engine.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// renderPath renders a path as object names joined by " > "; sections are
// left out and namespaces are written ns:NAME.
func renderPath(p []topology.Ref) string {
	var parts []string
	for _, r := range p {
		if r.IsSection() {
			continue
		}
		parts = append(parts, name(r))
	}
	return strings.Join(parts, " > ")
}

// name is a ref's short name: ns:NAME for namespaces, NAME#SECTION for sections,
// NAMESPACE/NAME outside the default namespace.
func name(r topology.Ref) string {
	n := r.Name
	if r.Kind == "Namespace" && r.Group == "" {
		return "ns:" + n
	}
	if r.Namespace != "" && r.Namespace != "default" {
		n = r.Namespace + "/" + n
	}
	if r.SectionName != "" {
		n += "#" + r.SectionName
	}
	return n
}

func normalize(v any) any {
	b, _ := yaml.Marshal(v)
	var out any
	_ = yaml.Unmarshal(b, &out)
	return out
}

func dump(v any) string {
	b, _ := yaml.Marshal(v)
	return "\n" + string(b)
}

func errorList(rep *report.Report) string {
	var b strings.Builder
	for _, e := range rep.Errors {
		fmt.Fprintf(&b, "  - %s\n", e.Error())
	}
	return b.String()
}
