package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

func init() { register(newGraphCommand) }

// graphOptions are the flags of `attache graph`.
type graphOptions struct {
	common  *commonOptions
	section string
}

// graphFormats are the -o values; the first is the default.
var graphFormats = []string{"dot", "mermaid", "svg", "png"}

// errGraphvizMissing is returned for -o svg|png when the dot binary is not
// on PATH.
var errGraphvizMissing = errors.New(`graphviz "dot" is not installed; install it (Debian/Ubuntu: apt-get install graphviz) or use -o dot / -o mermaid`)

func newGraphCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &graphOptions{common: newCommonOptions()}
	cmd := &cobra.Command{
		Use:   "graph [TYPE/NAME [--section NAME]] [-n NS] [-f PATH] [-o dot|mermaid|svg|png]",
		Short: "Draw the target hierarchy with the policies attached to it",
		Long: `Draws the hierarchy of targets (GatewayClass > Gateway > [ListenerSet >]
listener > route > rule > Service > port) with every policy attached to it, so
that what a policy reaches can be seen at a glance.

  TYPE/NAME   draw only that object (or, with --section, that section), its
              ancestors and its descendants, with the policies attached to
              them (TYPE: gateway, httproute, service, ..., as in kubectl)
  -n NS       with TYPE/NAME, the object's namespace; without, draw the
              objects of that namespace, their ancestors and descendants,
              and the policies of that namespace (-A, or -f without -n:
              everything)

Targets are boxes, their sections smaller boxes below them. Policies are
ellipses (stadiums in mermaid) with dashed edges to the targets they attach
to, coloured by status: green Programmed, orange PartiallyProgrammed (or not
programmed for being overridden in part), grey Overridden (contributes
nothing), blue-grey accepted but programmed nowhere (Programmed=False,
reason Unknown), red not accepted (the edge is labelled with the reason). Namespaces are drawn as frames around their objects and
policies; a policy attached to a Namespace points at the Namespace drawn in
its frame.

  -o dot      Graphviz source (default)
  -o mermaid  a Mermaid flowchart (renders in GitHub and GitLab markdown)
  -o svg|png  rendered by Graphviz's dot, which must be installed`,
		Example: `  attache graph -f examples/parable -o svg > parable.svg
  attache graph httproute/baker -n baker -f examples/parable -o mermaid
  attache graph gateway/cupcakes --section http -n infra | dot -Tpng > gw.png`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, streams, args) },
	}
	o.common.addFlags(cmd, graphFormats...)
	// -l has no meaning for a drawing of the hierarchy.
	_ = cmd.Flags().MarkHidden("selector")
	cmd.Flags().Lookup("all-namespaces").Usage = "draw every namespace (the default with -f and no -n)"
	cmd.Flags().StringVar(&o.section, "section", "", "with TYPE/NAME: start from this section (listener, route rule or Service port)")
	return cmd
}

func (o *graphOptions) run(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	if !slices.Contains(graphFormats, o.common.output) {
		return fmt.Errorf("unknown output format %q: use -o dot, -o mermaid, -o svg or -o png", o.common.output)
	}
	if o.common.selector != "" {
		return fmt.Errorf("-l is not supported by graph: scope it with TYPE/NAME or -n")
	}
	if o.section != "" && len(args) == 0 {
		return fmt.Errorf("--section needs TYPE/NAME: for example %s gateway/cupcakes --section http", cmd.CommandPath())
	}
	var typ, name string
	if len(args) == 1 {
		var err error
		if typ, name, err = parseTypeName(args[0]); err != nil {
			return err
		}
		if name, o.section, err = splitSection(name, o.section); err != nil {
			return err
		}
	}
	// Rendering needs dot: fail before reading the input.
	dotPath := ""
	if o.common.output == "svg" || o.common.output == "png" {
		p, err := exec.LookPath("dot")
		if err != nil {
			return errGraphvizMissing
		}
		dotPath = p
	}
	// The scope is walked over the whole hierarchy (a route's Gateway may
	// be in another namespace): load reads every namespace, and falls back
	// to ns only for the lists RBAC forbids cluster-wide.
	ns := o.common.namespace()
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	res := l.Result

	var m *graphModel
	switch {
	case typ != "":
		gk, err := resolveTargetType(typ, res.Kinds)
		if err != nil {
			return err
		}
		if gk == topology.KindNamespace {
			if o.section != "" {
				return fmt.Errorf("a Namespace has no sections: drop --section")
			}
			if _, err := findTarget(res.Graph, gk, typ, name, "", "", cmd.Root().DisplayName()); err != nil {
				return err
			}
			m = buildGraphModel(res, graphScopeNamespace(res.Graph, name), name, "namespace "+name)
			break
		}
		ref, err := findTarget(res.Graph, gk, typ, name, o.section, ns, cmd.Root().DisplayName())
		if err != nil {
			return err
		}
		id, _ := res.Graph.Lookup(ref)
		m = buildGraphModel(res, graphScopeFrom(res.Graph, []topology.NodeID{id}), "", refTitle(ref))
	case ns != "":
		m = buildGraphModel(res, graphScopeNamespace(res.Graph, ns), ns, "namespace "+ns)
	default:
		m = buildGraphModel(res, nil, "", "")
	}
	// A drawing cannot carry the warnings: its title says it is partial.
	if note := l.partialNote(); note != "" {
		m.title = strings.TrimPrefix(m.title+" (PARTIAL answer, "+note+")", " ")
	}

	var out bytes.Buffer
	switch o.common.output {
	case "mermaid":
		writeGraphMermaid(&out, m)
	default:
		writeGraphDot(&out, m)
	}
	if dotPath != "" {
		img, err := graphRender(cmd.Context(), dotPath, o.common.output, out.Bytes())
		if err != nil {
			return err
		}
		_, err = streams.Out.Write(img)
		return err
	}
	_, err = streams.Out.Write(out.Bytes())
	return err
}

// graphRender pipes dot source through Graphviz's dot binary.
func graphRender(ctx context.Context, dotPath, format string, src []byte) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(ctx, dotPath, "-T"+format)
	c.Stdin = bytes.NewReader(src)
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("graphviz dot failed to render %s: %s (the source is printed by -o dot)", format, msg)
	}
	return stdout.Bytes(), nil
}

// graphScopeFrom returns the start nodes with all their ancestors and
// descendants (not their siblings).
func graphScopeFrom(g *topology.Graph, start []topology.NodeID) map[topology.NodeID]bool {
	in := map[topology.NodeID]bool{}
	mark := func(id topology.NodeID, _ *topology.Node) bool { in[id] = true; return true }
	g.Walk(start, topology.Parents, mark)
	g.Walk(start, topology.Children, mark)
	return in
}

// graphScopeNamespace scopes to the objects of namespace ns (and the
// Namespace itself) with their ancestors and descendants.
func graphScopeNamespace(g *topology.Graph, ns string) map[topology.NodeID]bool {
	var start []topology.NodeID
	for id := topology.NodeID(0); int(id) < g.Len(); id++ {
		r := g.Node(id).Ref
		if r.Namespace == ns || (r.GroupKind() == topology.KindNamespace && r.Name == ns) {
			start = append(start, id)
		}
	}
	return graphScopeFrom(g, start)
}

// graphCompare orders targets as the hierarchy does (GatewayClass,
// Gateway, ListenerSet, routes, Service, then other kinds), then by ref; a section
// follows its object.
func graphCompare(a, b topology.Ref) int {
	rank := func(gk topology.GroupKind) int {
		if i := slices.Index(topology.DefaultHierarchy, gk); i >= 0 {
			return i
		}
		return len(topology.DefaultHierarchy)
	}
	if c := rank(a.GroupKind()) - rank(b.GroupKind()); c != 0 {
		return c
	}
	return a.Compare(b)
}

// Policy and attachment states, which pick the colours.
const (
	graphProgrammed = "programmed"
	graphPartial    = "partial"
	graphOverridden = "overridden"
	graphRejected   = "rejected"
	// graphNotProgrammed: accepted, but its implementation programs it
	// nowhere (yet): Programmed=False, reason Unknown (Kuadrant's kinds:
	// in the path to no effective target, waiting for a Gateway).
	graphNotProgrammed = "notprogrammed"
	graphUnknown       = "unknown"
)

// graphState maps conditions to a state and the reason shown.
func graphState(conds []engine.Condition) (state, reason string) {
	var programmed *engine.Condition
	for i := range conds {
		c := &conds[i]
		switch c.Type {
		case engine.CondAccepted:
			if c.Status != "True" {
				return graphRejected, c.Reason
			}
		case engine.CondProgrammed:
			programmed = c
		}
	}
	if programmed == nil {
		return graphUnknown, ""
	}
	switch programmed.Reason {
	case engine.ReasonProgrammed:
		return graphProgrammed, programmed.Reason
	case engine.ReasonPartiallyProgrammed:
		return graphPartial, programmed.Reason
	case engine.ReasonOverridden:
		return graphOverridden, programmed.Reason
	case engine.ReasonUnknown:
		// Kuadrant's reason: a policy overridden in part, of a kind that
		// then calls it not programmed, is partial as PartiallyProgrammed
		// is; any other Unknown is programmed nowhere.
		if engine.NotProgrammedInPart(*programmed) {
			return graphPartial, programmed.Reason
		}
		return graphNotProgrammed, programmed.Reason
	}
	return graphUnknown, programmed.Reason
}

// graphModel is what is drawn, sorted, independent of the output format.
type graphModel struct {
	// title names the scope ("" for the whole graph).
	title string
	// targets are the target nodes drawn (no Namespaces: those are frames),
	// sorted by ref so that sections follow their object.
	targets []graphTarget
	// edges are hierarchy edges between drawn targets, sorted.
	edges [][2]topology.Ref
	// policies are sorted by policy kind then ref.
	policies []graphPolicy
	// namespaces are the frames drawn, sorted; targeted says which ones a
	// drawn policy attaches to.
	namespaces []string
	targeted   map[string]bool
}

// graphTarget is a drawn target.
type graphTarget struct {
	ref topology.Ref
	// missing marks a declared target that does not exist (TargetNotFound).
	missing bool
}

// graphPolicy is a drawn policy and its attachments.
type graphPolicy struct {
	ref      topology.Ref
	kind     string // as drawn: bare Kind unless two policy kinds share it
	strategy string
	state    string
	reason   string
	attach   []graphAttach
	// hidden counts declared targets outside the drawn scope.
	hidden int
}

// graphAttach is a dashed edge from a policy to a target (a Namespace
// target points at its frame).
type graphAttach struct {
	to     topology.Ref
	state  string
	reason string // set when the attachment is not accepted
}

// buildGraphModel collects what to draw. scope nil means the whole graph;
// ns is the namespace of a -n scope ("" otherwise), whose policies are
// drawn even when their targets are missing.
func buildGraphModel(res *engine.Result, scope map[topology.NodeID]bool, ns, title string) *graphModel {
	g := res.Graph
	m := &graphModel{title: title, targeted: map[string]bool{}}
	inScope := func(id topology.NodeID) bool { return scope == nil || scope[id] }

	// Namespaces in scope: those of the drawn objects (the engine places a
	// Namespace on every path through its objects) and the scoped one.
	nsIn := map[string]bool{}
	if ns != "" {
		nsIn[ns] = true
	}
	drawn := map[topology.Ref]bool{}
	for id := topology.NodeID(0); int(id) < g.Len(); id++ {
		r := g.Node(id).Ref
		if !inScope(id) {
			continue
		}
		if r.GroupKind() == topology.KindNamespace {
			if scope == nil {
				nsIn[r.Name] = true
			}
			continue
		}
		drawn[r] = true
		m.targets = append(m.targets, graphTarget{ref: r})
		if r.Namespace != "" {
			nsIn[r.Namespace] = true
		}
		for _, c := range g.Node(id).Children {
			if inScope(c) && g.Node(c).Ref.GroupKind() != topology.KindNamespace {
				m.edges = append(m.edges, [2]topology.Ref{r, g.Node(c).Ref})
			}
		}
	}

	// Policy kinds are drawn by their bare Kind unless two share it.
	count := map[string]int{}
	for _, k := range res.Kinds {
		count[k.GroupKind.Kind]++
	}
	frames := map[string]bool{}
	for _, ps := range res.Policies {
		p := ps.Policy
		gp := graphPolicy{ref: p.Ref, kind: p.Kind.GroupKind.Kind, strategy: string(p.Strategy)}
		if count[p.Kind.GroupKind.Kind] > 1 {
			gp.kind = p.Kind.GroupKind.String()
		}
		gp.state, gp.reason = graphState(ps.Conditions)
		for _, a := range ps.Ancestors {
			st, reason := graphState(a.Conditions)
			if st != graphRejected {
				reason = ""
			}
			ga := graphAttach{to: a.Ref, state: st, reason: reason}
			_, exists := g.Lookup(a.Ref)
			switch {
			case a.Ref.GroupKind() == topology.KindNamespace && exists && (scope == nil || nsIn[a.Ref.Name]):
			case exists && drawn[a.Ref]:
			case !exists && (scope == nil || (ns != "" && p.Ref.Namespace == ns)):
				// A declared target that does not exist: drawn as a
				// missing box in whole-graph and namespace views.
				if !drawn[a.Ref] {
					drawn[a.Ref] = true
					m.targets = append(m.targets, graphTarget{ref: a.Ref, missing: true})
				}
			default:
				gp.hidden++
				continue
			}
			gp.attach = append(gp.attach, ga)
		}
		gp.hidden += ps.AncestorsOmitted
		if len(gp.attach) == 0 && !(scope == nil || (ns != "" && p.Ref.Namespace == ns)) {
			continue
		}
		for _, a := range gp.attach {
			if a.to.GroupKind() == topology.KindNamespace {
				m.targeted[a.to.Name] = true
				frames[a.to.Name] = true
			}
		}
		slices.SortFunc(gp.attach, func(x, y graphAttach) int { return x.to.Compare(y.to) })
		m.policies = append(m.policies, gp)
	}
	slices.SortFunc(m.policies, func(x, y graphPolicy) int {
		if c := strings.Compare(x.kind, y.kind); c != 0 {
			return c
		}
		return x.ref.Compare(y.ref)
	})
	slices.SortFunc(m.targets, func(x, y graphTarget) int { return graphCompare(x.ref, y.ref) })
	slices.SortFunc(m.edges, func(x, y [2]topology.Ref) int {
		if c := graphCompare(x[0], y[0]); c != 0 {
			return c
		}
		return graphCompare(x[1], y[1])
	})

	// A frame per namespace holding something drawn.
	for _, t := range m.targets {
		if t.ref.Namespace != "" {
			frames[t.ref.Namespace] = true
		}
	}
	for _, p := range m.policies {
		if p.ref.Namespace != "" {
			frames[p.ref.Namespace] = true
		}
	}
	for n := range frames {
		m.namespaces = append(m.namespaces, n)
	}
	slices.Sort(m.namespaces)
	return m
}
