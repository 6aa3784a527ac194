package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// Rendering helpers shared by describe and describe policy.

// describeNsName renders [namespace/]name[#section].
func describeNsName(r topology.Ref) string {
	s := r.Name
	if r.Namespace != "" {
		s = r.Namespace + "/" + s
	}
	if r.SectionName != "" {
		s += "#" + r.SectionName
	}
	return s
}

// describeLevel renders a target the way describe names levels:
// `Namespace baker`, `Gateway infra/cupcakes`, `HTTPRoute baker/frosting#rule-1`
// (the form of the engine's status messages).
func describeLevel(r topology.Ref) string { return r.Short() }

// describeKind renders a target kind in text: the bare Kind, as
// describeLevel (Ref.Short) and the engine's status messages write it, so
// one object reads the same everywhere; -o json|yaml keep the group.
func describeKind(gk topology.GroupKind) string { return gk.Kind }

// describeOrNone renders an empty string as "-".
func describeOrNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// describeCondition finds the condition of type typ, or nil.
func describeCondition(conds []engine.Condition, typ string) *engine.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// policyName renders a policy ref: `RetryPolicy baker/namespace-retries`.
func (d *describer) policyName(r topology.Ref) string {
	k, ok := d.kindName[r.GroupKind()]
	if !ok {
		k = describeKind(r.GroupKind())
	}
	return k + " " + describeNsName(r)
}

// describePath abbreviates a path for text output: GatewayClass and
// Namespace levels are left out (one class per Gateway; namespaces are
// implied), a section is written after its object as everywhere else in
// the output (`cupcakes#http`; a slash would read as namespace/name), and the
// last entry, the effective target, keeps its kind. Intermediate objects of
// other kinds than Gateway and routes (a ListenerSet, a mesh parent
// Service, a virtual kind) keep theirs too.
func describePath(p []topology.Ref) string {
	var parts []string
	for i := 0; i < len(p); i++ {
		r := p[i]
		gk := r.GroupKind()
		if topology.ClusterScoped(gk) {
			continue
		}
		s := r.Name
		if r.IsSection() {
			s += "#" + r.SectionName
		} else if i+1 < len(p) && p[i+1].IsSection() && p[i+1].Object() == r {
			s += "#" + p[i+1].SectionName
			i++
		}
		if i == len(p)-1 || (gk != topology.KindGateway && !isRouteKind(gk)) {
			s = describeKind(gk) + " " + s
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 && len(p) > 0 {
		// A path of cluster-scoped objects only (a GatewayClass's own
		// context): name the last.
		r := p[len(p)-1]
		return describeKind(r.GroupKind()) + " " + r.Name
	}
	return strings.Join(parts, " > ")
}

func isRouteKind(gk topology.GroupKind) bool {
	for _, k := range topology.RouteKinds {
		if k == gk {
			return true
		}
	}
	return false
}

// compactJSON renders a value as compact JSON, without HTML escaping (values
// are read by people, and `<` is no threat in a terminal).
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// describeLeaf is one leaf of a spec: a scalar, a list, an empty object or
// a null (a deletion marker, which a policy admin wants to see).
type describeLeaf struct {
	Path  string
	Value any
}

// specLeaves lists the leaves of spec, sorted by path, with paths written
// as the engine writes them (merge.JoinPath).
func specLeaves(spec map[string]any) []describeLeaf {
	var out []describeLeaf
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok || (len(m) == 0 && path != "") {
			out = append(out, describeLeaf{path, v})
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(merge.JoinPath(path, k), m[k])
		}
	}
	walk("", spec)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// lostValue returns the value a policy set at path: the engine records
// which fields a policy lost, not their values, so they are read back from
// the policy's spec.
func (d *describer) lostValue(pol topology.Ref, path string) any {
	leaves, ok := d.specLeaves[pol]
	if !ok {
		leaves = map[string]any{}
		if ps := d.policies[pol]; ps != nil {
			for _, l := range specLeaves(ps.Policy.Spec) {
				leaves[l.Path] = l.Value
			}
		}
		d.specLeaves[pol] = leaves
	}
	return leaves[path]
}

// strategyWord renders a policy's merge strategy for prose: "additive"
// for a kind whose policies all apply side by side, whatever strategy its
// policies resolve to.
func (d *describer) strategyWord(gk topology.GroupKind, strategy string) string {
	if d.additive[gk] {
		return "additive"
	}
	return strategy
}

// stanzaWord renders a stanza for prose: a bare spec is implicit defaults.
func stanzaWord(s string) string {
	if s == "" {
		return "bare spec"
	}
	return s
}

// fieldLines prints `path: value` lines padded so that the notes after them
// line up; very long left sides are not padded, so one long value does not
// push every note off the screen.
func fieldLines(w io.Writer, indent string, lefts, notes []string) {
	const maxPad = 40
	width := 0
	for _, l := range lefts {
		if len(l) <= maxPad && len(l) > width {
			width = len(l)
		}
	}
	for i, l := range lefts {
		if notes[i] == "" {
			fmt.Fprintf(w, "%s%s\n", indent, l)
			continue
		}
		fmt.Fprintf(w, "%s%-*s  %s\n", indent, width, l, notes[i])
	}
}

// plural renders n and a noun, with a naive English plural (enough for
// Kind names and the words used here).
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"), strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		noun += "es"
	case len(noun) > 1 && strings.HasSuffix(noun, "y") && !strings.ContainsAny(noun[len(noun)-2:len(noun)-1], "aeiou"):
		noun = noun[:len(noun)-1] + "ies"
	default:
		noun += "s"
	}
	return fmt.Sprintf("%d %s", n, noun)
}

// conditionLine renders a condition as `Type=Status Reason: message`.
func conditionLine(c engine.Condition) string {
	s := fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason)
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}

// statusWords renders a policy's summary status as its reasons:
// `Accepted, PartiallyProgrammed`, or the reason it is not accepted.
func statusWords(conds []engine.Condition) string {
	var words []string
	for _, t := range []string{engine.CondAccepted, engine.CondProgrammed} {
		if c := describeCondition(conds, t); c != nil {
			words = append(words, c.Reason)
		}
	}
	if len(words) == 0 {
		return "no status"
	}
	return strings.Join(words, ", ")
}

// maxPathsShown caps the paths listed per group in text output, so that a
// Gateway in front of hundreds of Services still fits a screen; -o json and
// -o yaml list them all.
const maxPathsShown = 6

// printPaths prints abbreviated paths, one a line, at most maxPathsShown.
func printPaths(w io.Writer, indent string, paths [][]topology.Ref) {
	for i, p := range paths {
		if i == maxPathsShown {
			fmt.Fprintf(w, "%s... and %s (-o yaml lists them all)\n", indent, plural(len(paths)-i, "more path"))
			return
		}
		fmt.Fprintf(w, "%s%s\n", indent, describePath(p))
	}
}

// describeOrNoneWord renders an empty list as "none", for prose.
func describeOrNoneWord(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
