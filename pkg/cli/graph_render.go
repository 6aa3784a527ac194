package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// Namespaces are drawn as frames (dot clusters, Mermaid subgraphs) around
// their objects and policies, not as nodes linked to their objects: the
// hierarchy has no Namespace edges (project decision 1 places a Namespace on
// each path, above the first object of that namespace), so linking a
// Namespace node to its objects would invent edges that the engine does
// not use, while a frame shows at a glance who owns what, including which
// namespace a policy lives in (Chihiro's RetryPolicy in baker, the platform
// team's TimeoutPolicy in infra). When a policy targets a Namespace, the
// Namespace object is drawn inside its own frame (a folder in dot, a
// double-bordered box in Mermaid) so that the attachment edge has an end.

// graphColor is a state's fill and line colours.
type graphColor struct{ fill, line string }

var graphColors = map[string]graphColor{
	graphProgrammed: {"#c8e6c9", "#2e7d32"},
	graphPartial:    {"#ffe0b2", "#ef6c00"},
	graphOverridden: {"#e0e0e0", "#757575"},
	graphRejected:   {"#ffcdd2", "#c62828"},
	// Not programmed: accepted, yet in effect nowhere.
	graphNotProgrammed: {"#cfd8dc", "#455a64"},
	graphUnknown:       {"#ffffff", "#424242"},
}

// graphLegend explains the drawing; both formats print it as a comment.
var graphLegend = []string{
	"attache graph: Gateway API policy attachment (GEP-713).",
	"Boxes are targets, small boxes their sections (listeners, route rules, Service ports);",
	"solid edges run from less to more specific. Policies are ellipses (dot) or stadiums (mermaid)",
	"with dashed edges to the targets they attach to, coloured by status: green Programmed,",
	"orange PartiallyProgrammed, grey Overridden, blue-grey accepted but programmed nowhere",
	"(Programmed=False, reason Unknown), red not accepted (edge labelled with the reason).",
	"Dashed red boxes are declared targets that do not exist. Frames are namespaces.",
}

// graphTargetLines are the label lines of a target: its kind and name
// (the frame gives the namespace), or "#section" for a section.
func graphTargetLines(t graphTarget) []string {
	r := t.ref
	if r.IsSection() {
		return []string{"#" + r.SectionName}
	}
	lines := []string{kindName(r.GroupKind()), r.Name}
	if t.missing {
		if r.SectionName != "" {
			lines[1] += "#" + r.SectionName
		}
		lines = append(lines, "(not found)")
	}
	return lines
}

// graphPolicyLines are the label lines of a policy.
func graphPolicyLines(p graphPolicy) []string {
	lines := []string{p.kind, p.ref.Name}
	if p.strategy != "" {
		lines = append(lines, p.strategy)
	}
	if p.reason != "" {
		lines = append(lines, p.reason)
	}
	if p.hidden > 0 {
		lines = append(lines, fmt.Sprintf("+%d not drawn", p.hidden))
	}
	return lines
}

// graphFrames groups targets and policies by frame: "" holds the
// cluster-scoped ones.
func graphFrames(m *graphModel) (targets map[string][]graphTarget, policies map[string][]graphPolicy) {
	targets, policies = map[string][]graphTarget{}, map[string][]graphPolicy{}
	for _, t := range m.targets {
		targets[t.ref.Namespace] = append(targets[t.ref.Namespace], t)
	}
	for _, p := range m.policies {
		policies[p.ref.Namespace] = append(policies[p.ref.Namespace], p)
	}
	return targets, policies
}

// graphNamespaceRef is the ref of the Namespace object ns.
func graphNamespaceRef(ns string) topology.Ref {
	return topology.Ref{Kind: topology.KindNamespace.Kind, Name: ns}
}

// Dot.

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// dotLabel joins label lines with dot's centred line break.
func dotLabel(lines []string) string {
	for i, l := range lines {
		lines[i] = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(l)
	}
	return `"` + strings.Join(lines, `\n`) + `"`
}

func dotTargetID(r topology.Ref) string { return dotQuote("target:" + r.String()) }
func dotPolicyID(r topology.Ref) string { return dotQuote("policy:" + r.String()) }

// writeGraphDot writes m as Graphviz dot source.
func writeGraphDot(w io.Writer, m *graphModel) {
	for _, l := range graphLegend {
		fmt.Fprintf(w, "// %s\n", l)
	}
	fmt.Fprintln(w, "digraph attache {")
	attrs := `rankdir=TB, fontname="Helvetica", fontsize=12`
	if m.title != "" {
		attrs += ", labelloc=t, label=" + dotQuote(m.title)
	}
	fmt.Fprintf(w, "  graph [%s];\n", attrs)
	fmt.Fprintln(w, `  node [fontname="Helvetica", fontsize=11, shape=box];`)
	fmt.Fprintln(w, `  edge [fontname="Helvetica", fontsize=9, color="#616161"];`)
	targets, policies := graphFrames(m)
	body := func(indent, ns string) {
		if ns != "" && m.targeted[ns] {
			fmt.Fprintf(w, "%s%s [shape=folder, label=%s];\n", indent, dotTargetID(graphNamespaceRef(ns)), dotLabel([]string{"Namespace", ns}))
		}
		for _, t := range targets[ns] {
			attrs := "label=" + dotLabel(graphTargetLines(t))
			switch {
			case t.missing:
				c := graphColors[graphRejected].line
				attrs += fmt.Sprintf(`, style=dashed, color=%q, fontcolor=%q`, c, c)
			case t.ref.IsSection():
				attrs += `, fontsize=9, height=0.3, margin="0.08,0.02"`
			}
			fmt.Fprintf(w, "%s%s [%s];\n", indent, dotTargetID(t.ref), attrs)
		}
		for _, p := range policies[ns] {
			c := graphColors[p.state]
			fmt.Fprintf(w, "%s%s [shape=ellipse, style=filled, fillcolor=%q, color=%q, label=%s];\n",
				indent, dotPolicyID(p.ref), c.fill, c.line, dotLabel(graphPolicyLines(p)))
		}
	}
	body("  ", "")
	for _, ns := range m.namespaces {
		fmt.Fprintf(w, "  subgraph %s {\n", dotQuote("cluster_ns_"+ns))
		fmt.Fprintf(w, "    label=%s; style=\"dashed,rounded\"; color=\"#9e9e9e\"; fontcolor=\"#616161\";\n", dotQuote("namespace "+ns))
		body("    ", ns)
		fmt.Fprintln(w, "  }")
	}
	for _, e := range m.edges {
		fmt.Fprintf(w, "  %s -> %s;\n", dotTargetID(e[0]), dotTargetID(e[1]))
	}
	for _, p := range m.policies {
		for _, a := range p.attach {
			attrs := fmt.Sprintf("style=dashed, color=%q", graphColors[a.state].line)
			if a.reason != "" {
				attrs += fmt.Sprintf(", label=%s, fontcolor=%q", dotQuote(a.reason), graphColors[a.state].line)
			}
			fmt.Fprintf(w, "  %s -> %s [%s];\n", dotPolicyID(p.ref), dotTargetID(a.to), attrs)
		}
	}
	fmt.Fprintln(w, "}")
}

// Mermaid.

// mermaidText escapes label text for a quoted Mermaid label.
func mermaidText(s string) string {
	return strings.NewReplacer("#", "#35;", `"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(s)
}

func mermaidLabel(lines []string) string {
	for i, l := range lines {
		lines[i] = mermaidText(l)
	}
	return `"` + strings.Join(lines, "<br/>") + `"`
}

// writeGraphMermaid writes m as a Mermaid flowchart. Node ids are
// numbered in the model's (sorted) order, so the output is deterministic.
func writeGraphMermaid(w io.Writer, m *graphModel) {
	if m.title != "" {
		fmt.Fprintf(w, "---\ntitle: %s\n---\n", m.title)
	}
	fmt.Fprintln(w, "flowchart TB")
	for _, l := range graphLegend {
		fmt.Fprintf(w, "  %%%% %s\n", l)
	}
	ids := map[topology.Ref]string{}
	for i, t := range m.targets {
		ids[t.ref] = fmt.Sprintf("t%d", i)
	}
	for i, ns := range m.namespaces {
		if m.targeted[ns] {
			ids[graphNamespaceRef(ns)] = fmt.Sprintf("n%d", i)
		}
	}
	pids := map[topology.Ref]string{}
	for i, p := range m.policies {
		pids[p.ref] = fmt.Sprintf("p%d", i)
	}
	targets, policies := graphFrames(m)
	body := func(indent, ns string) {
		if ns != "" && m.targeted[ns] {
			fmt.Fprintf(w, "%s%s[[%s]]\n", indent, ids[graphNamespaceRef(ns)], mermaidLabel([]string{"Namespace", ns}))
		}
		for _, t := range targets[ns] {
			class := ""
			switch {
			case t.missing:
				class = ":::missing"
			case t.ref.IsSection():
				class = ":::section"
			}
			fmt.Fprintf(w, "%s%s[%s]%s\n", indent, ids[t.ref], mermaidLabel(graphTargetLines(t)), class)
		}
		for _, p := range policies[ns] {
			fmt.Fprintf(w, "%s%s([%s]):::%s\n", indent, pids[p.ref], mermaidLabel(graphPolicyLines(p)), p.state)
		}
	}
	body("  ", "")
	for i, ns := range m.namespaces {
		fmt.Fprintf(w, "  subgraph ns%d[%s]\n", i, mermaidLabel([]string{"namespace " + ns}))
		body("    ", ns)
		fmt.Fprintln(w, "  end")
	}
	link := 0
	for _, e := range m.edges {
		fmt.Fprintf(w, "  %s --> %s\n", ids[e[0]], ids[e[1]])
		link++
	}
	var styles []string
	for _, p := range m.policies {
		for _, a := range p.attach {
			if a.reason != "" {
				fmt.Fprintf(w, "  %s -. %s .-> %s\n", pids[p.ref], mermaidLabel([]string{a.reason}), ids[a.to])
			} else {
				fmt.Fprintf(w, "  %s -.-> %s\n", pids[p.ref], ids[a.to])
			}
			styles = append(styles, fmt.Sprintf("  linkStyle %d stroke:%s", link, graphColors[a.state].line))
			link++
		}
	}
	for _, s := range styles {
		fmt.Fprintln(w, s)
	}
	for i := range m.namespaces {
		fmt.Fprintf(w, "  style ns%d fill:none,stroke:#9e9e9e,stroke-dasharray:4 3\n", i)
	}
	fmt.Fprintln(w, "  classDef section font-size:10px")
	fmt.Fprintf(w, "  classDef missing stroke:%s,stroke-dasharray:4 3,color:%s\n", graphColors[graphRejected].line, graphColors[graphRejected].line)
	for _, st := range []string{graphProgrammed, graphPartial, graphOverridden, graphRejected, graphNotProgrammed, graphUnknown} {
		c := graphColors[st]
		fmt.Fprintf(w, "  classDef %s fill:%s,stroke:%s\n", st, c.fill, c.line)
	}
}
