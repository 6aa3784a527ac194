package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/istioauthz"
	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

func init() { register(newTraceCommand) }

// traceOutputs are the -o values of trace; the first is the default.
var traceOutputs = []string{"text", "json", "yaml"}

type traceOptions struct {
	common  *commonOptions
	method  string
	headers []string
	gateway string
	mesh    bool
}

func newTraceCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace URL [-X METHOD] [-H 'Name: value']... [--gateway NS/NAME | --mesh]",
		Short: "Show what happens when a request comes in: listener, route, filters, backends, and the policies on its path",
		Long: `Answers GEP-713's question "what happens when request X comes in?" for a
URL (http://, https://, grpc://HOST/package.Service/Method, grpcs://; tcp://HOST:PORT
and udp://HOST:PORT for a connection, which listeners route by port alone):

  which listener of which Gateway takes it (port, protocol, hostname, SNI),
  which route and rule match (with the Gateway API's precedence rules across
  every route of the listener) and why each other route does not,
  what the filters do (header modifiers, redirect, rewrite, mirrors),
  which backends receive it with their weights (invalid ones answer 500;
  no match answers 404; for a connection, the oldest TCPRoute or UDPRoute
  of the listener takes it, and invalid backends reject their share),
  and the effective policy of every policy kind on exactly that path
  (GatewayClass > Gateway > listener > route > rule > backend), each field
  with the policy that set it, as describe shows it.

Without --gateway, every Gateway with a listener taking the request answers.

With --mesh, the request is one a pod sends to a Service in an Istio
ambient mesh (http://NAME.NAMESPACE[.svc[.cluster.local]]:PORT/..., or
NAME with -n; or a host of an Istio ServiceEntry): which Service (or
ServiceEntry) and port it names, which waypoint it goes
through (the Service's istio.io/use-waypoint, and its canary) or none,
which mesh route (GAMMA: an HTTPRoute or GRPCRoute whose parentRef is the
Service) and rule take it, its backends (the Service itself when no route
applies), and the policies on that path as istiod applies them at the
waypoint.

-o json and -o yaml print a RequestTrace document (docs/output.md).`,
		Example: `  attache trace http://cupcakes.example/orders -f examples/parable
  attache trace http://shop.example/checkout -X POST -H x-user:ana --gateway infra/eg -f examples/envoy-gateway
  attache trace grpc://grpc.example/helloworld.Greeter/SayHello -o yaml
  attache trace tcp://db.example:5432 --gateway infra/eg -f examples/envoy-gateway
  attache trace --mesh http://reviews.bookinfo:9080/reviews/1 -H end-user:jason -f examples/mesh`,
		Args: cobra.ArbitraryArgs,
	}
	o := &traceOptions{common: newCommonOptions()}
	o.common.addFlags(cmd, traceOutputs...)
	_ = cmd.Flags().MarkHidden("selector")
	_ = cmd.Flags().MarkHidden("all-namespaces")
	fs := cmd.Flags()
	fs.StringVarP(&o.method, "request", "X", "", "HTTP method (default GET; POST for grpc://)")
	fs.StringArrayVarP(&o.headers, "header", "H", nil, "request header 'Name: value' (repeatable; Host sets the routed host)")
	fs.StringVar(&o.gateway, "gateway", "", "the Gateway the request is sent to, NAMESPACE/NAME (or NAME with -n); default: every Gateway taking it")
	fs.BoolVar(&o.mesh, "mesh", false, "trace the request as a pod sends it to the Service its host names, through the Service's waypoints (Istio ambient, GAMMA routes); -n is the pod's namespace for a host NAME")
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.run(cmd, streams, args) }
	return cmd
}

func (o *traceOptions) run(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s takes one URL, for example: %s http://cupcakes.example/orders -f examples/parable", cmd.CommandPath(), cmd.CommandPath())
	}
	if !slices.Contains(traceOutputs, o.common.output) {
		return fmt.Errorf("unknown output format %q: use -o text, -o json or -o yaml", o.common.output)
	}
	if o.common.selector != "" {
		return fmt.Errorf("trace takes a URL and no -l selector")
	}
	// Bad input fails before a (possibly slow) cluster read.
	req, err := routing.ParseRequest(args[0], o.method, o.headers)
	if err != nil {
		return err
	}
	if o.mesh && o.gateway != "" {
		return fmt.Errorf("--mesh and --gateway exclude each other: a mesh request goes to a Service's waypoint, not to a Gateway's listener")
	}
	var gw *topology.Ref
	if o.gateway != "" {
		ns, name, ok := strings.Cut(o.gateway, "/")
		if !ok {
			ns, name = "", o.gateway
		}
		if name == "" || strings.Contains(name, "/") || (ok && ns == "") {
			return fmt.Errorf("--gateway %q is not NAMESPACE/NAME (or NAME with -n)", o.gateway)
		}
		gw = &topology.Ref{Namespace: ns, Name: name}
	}
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	if gw != nil && gw.Namespace == "" {
		if gw.Namespace, err = o.gatewayNamespace(l.Result.Graph, gw.Name); err != nil {
			return err
		}
	}
	objs := make([]*unstructured.Unstructured, 0, len(l.Objects))
	for _, ob := range l.Objects {
		objs = append(objs, ob.Object)
	}
	ix, problems := routing.BuildWith(objs, l.Result.Graph, l.Result.Grants, engine.DefaultNamespace, routing.Options{DisableProfiles: !o.common.profiles})
	for _, p := range problems {
		// What tracing left out (a delegation bound, an object it could
		// not decode): the answer may miss it.
		fmt.Fprintf(streams.ErrOut, "warning: %s\n", p.Error())
	}
	var t *routing.RequestTrace
	ns := engine.DefaultNamespace
	if n := o.common.config.Namespace; n != nil && *n != "" {
		ns = *n
	}
	if o.mesh {
		t, err = ix.TraceMesh(req, ns)
	} else {
		t, err = ix.Trace(req, gw)
	}
	if err != nil {
		return err
	}
	routing.NewPolicies(l.Result).AddPolicies(t)
	t.Partial = l.partial()
	if o.common.output != "text" {
		return write(streams.Out, t, o.common.output)
	}
	d := newDescriber(l.Result, o.common.controllerName).withUnread(l)
	printTrace(streams.Out, d, t)
	if len(t.Outcomes) == 0 && t.Mesh == nil {
		if mt, err := ix.TraceMesh(req, ns); err == nil {
			fmt.Fprintf(streams.Out, "The host names %s %s: to trace the request as a pod sends it in the mesh, add --mesh.\n", mt.Mesh.Service.Kind, describeNsName(mt.Mesh.Service))
		}
	}
	return nil
}

// gatewayNamespace finds the namespace of a Gateway named without one: -n
// when given, else the only Gateway of that name.
func (o *traceOptions) gatewayNamespace(g *topology.Graph, name string) (string, error) {
	if o.common.config.Namespace != nil && *o.common.config.Namespace != "" {
		return *o.common.config.Namespace, nil
	}
	var nss []string
	for _, id := range g.ByKind(topology.KindGateway) {
		if r := g.Node(id).Ref; r.Name == name {
			nss = append(nss, r.Namespace)
		}
	}
	switch len(nss) {
	case 0:
		return "", fmt.Errorf("Gateway %q not found in any namespace; name it NAMESPACE/NAME", name)
	case 1:
		return nss[0], nil
	}
	return "", fmt.Errorf("Gateway %q exists in several namespaces (%s); name it NAMESPACE/NAME", name, strings.Join(nss, ", "))
}

// printTrace prints the text form: per Gateway, the story of the request,
// then the policies on its path, then why the other routes did not match.
func printTrace(w io.Writer, d *describer, t *routing.RequestTrace) {
	r := t.Request
	if r.IsL4() {
		fmt.Fprintf(w, "%s connection to %s\n", strings.ToUpper(r.Scheme), r.URL())
	} else {
		fmt.Fprintf(w, "%s %s\n", r.Method, r.URL())
	}
	for _, n := range sortedKeys(r.Headers) {
		fmt.Fprintf(w, "  %s: %s\n", n, r.Headers[n])
	}
	if d.partialLine != "" {
		fmt.Fprintln(w, d.partialLine)
	}
	if t.Mesh != nil {
		for i := range t.Outcomes {
			printMeshOutcome(w, d, t, &t.Outcomes[i])
		}
		return
	}
	if len(t.Outcomes) == 0 {
		fmt.Fprintf(w, "\nNo Gateway takes this request: %s\n", strings.TrimPrefix(t.NoGateway, "no Gateway has a listener taking it: "))
		return
	}
	for i := range t.Outcomes {
		printOutcome(w, d, t, &t.Outcomes[i])
	}
}

func printOutcome(w io.Writer, d *describer, t *routing.RequestTrace, o *routing.Outcome) {
	fmt.Fprintf(w, "\nGateway %s\n", describeNsName(o.Gateway))
	if o.Listener == "" {
		fmt.Fprintf(w, "  listener  none: %s\n", o.Reason)
		if t.Request.IsL4() {
			fmt.Fprintln(w, "  result    not taken")
		} else {
			fmt.Fprintf(w, "  result    %d not found\n", o.Status)
		}
		return
	}
	ls := ""
	if o.ListenerSet != nil {
		ls = " of " + o.ListenerSet.Kind + " " + describeNsName(*o.ListenerSet)
	}
	fmt.Fprintf(w, "  listener  %s%s\n", o.Listener, ls)
	printOutcomeBody(w, d, t, o)
	var others []routing.NotMatched
	for _, n := range t.NotMatched {
		if n.Gateway == o.Gateway && n.Listener == o.Listener && equalRefPtr(n.ListenerSet, o.ListenerSet) {
			others = append(others, n)
		}
	}
	printOthers(w, fmt.Sprintf("Other routes on listener %s:", o.Listener), others)
}

// printMeshOutcome prints the story of a mesh request through one
// waypoint (or none), as printOutcome does for a Gateway's listener.
func printMeshOutcome(w io.Writer, d *describer, t *routing.RequestTrace, o *routing.Outcome) {
	m := t.Mesh
	port := fmt.Sprintf("port %d", m.Port)
	if m.PortName != "" {
		port += " (" + m.PortName + ")"
	}
	proto := m.Protocol
	if proto == "" {
		proto = "protocol detected"
	}
	fmt.Fprintf(w, "\n%s %s, %s, %s\n", m.Service.Kind, describeNsName(m.Service), port, proto)
	if o.Gateway.Name == "" {
		fmt.Fprintf(w, "  waypoint  none: %s\n", m.Unbound)
	} else {
		use := ""
		if u := o.Waypoint; u != nil {
			use = fmt.Sprintf(" (%s, %d%% of connections)", u.Role, u.Percent)
		}
		fmt.Fprintf(w, "  waypoint  Gateway %s%s\n", describeNsName(o.Gateway), use)
	}
	printOutcomeBody(w, d, t, o)
	var others []routing.NotMatched
	for _, n := range t.NotMatched {
		if n.Gateway == o.Gateway {
			others = append(others, n)
		}
	}
	printOthers(w, fmt.Sprintf("Other routes of %s %s:", m.Service.Kind, describeNsName(m.Service)), others)
}

// printOthers prints the routes that did not take the request, and why.
func printOthers(w io.Writer, heading string, others []routing.NotMatched) {
	if len(others) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", heading)
	lefts, notes := make([]string, len(others)), make([]string, len(others))
	for i, n := range others {
		lefts[i] = n.Route.Kind + " " + describeNsName(n.Route)
		notes[i] = n.Reason
	}
	fieldLines(w, "  ", lefts, notes)
}

// printOutcomeBody prints what happens to the request once a listener
// (or a waypoint) has it: route, result, upstream request, backends,
// settings, notes, path, authorization and the policies on the path.
func printOutcomeBody(w io.Writer, d *describer, t *routing.RequestTrace, o *routing.Outcome) {
	if o.Route != nil {
		fmt.Fprintf(w, "  route     %s %s, rule %s\n", o.Route.Kind, describeNsName(*o.Route), o.Rule)
		for _, d := range o.DelegatedBy {
			fmt.Fprintf(w, "            delegated by %s %s, rule %s\n", d.Kind, describeNsName(d.Object()), d.SectionName)
		}
	}
	switch l4 := t.Request.IsL4(); {
	case l4 && o.Result == routing.ResultNotFound:
		fmt.Fprintf(w, "  result    not taken: %s\n", o.Reason)
	case l4 && o.Result == routing.ResultError:
		fmt.Fprintf(w, "  result    rejected: %s\n", o.Reason)
	case o.Result == routing.ResultRedirected:
		fmt.Fprintf(w, "  result    %d redirect to %s\n", o.Status, o.Location)
	case o.Result == routing.ResultNotFound:
		fmt.Fprintf(w, "  result    %d not found: %s\n", o.Status, o.Reason)
	case o.Result == routing.ResultError:
		fmt.Fprintf(w, "  result    %d: %s\n", o.Status, o.Reason)
	default:
		fmt.Fprintln(w, "  result    forwarded")
	}
	if u := o.UpstreamRequest; u != nil && o.Result == routing.ResultForwarded {
		changed := u.Host != t.Request.Host || u.Path != t.Request.Path+queryPart(t.Request.Query)
		if changed {
			fmt.Fprintf(w, "  upstream  %s%s\n", u.Host, u.Path)
		}
		printHeaderDiff(w, "            ", t.Request.Headers, u.Headers)
	}
	for _, b := range o.Backends {
		line := fmt.Sprintf("%s %s%s  weight %d", b.Ref.Kind, describeNsName(b.Ref), portPart(b.Port), b.Weight)
		switch {
		case b.Invalid != "" && t.Request.IsL4():
			line += "  INVALID (its connections are rejected): " + b.Invalid
		case b.Invalid != "":
			line += "  INVALID (answers 500): " + b.Invalid
		}
		fmt.Fprintf(w, "  backend   %s\n", line)
		if bu := b.UpstreamRequest; bu != nil {
			if bu.Host != o.UpstreamRequest.Host || bu.Path != o.UpstreamRequest.Path {
				fmt.Fprintf(w, "            upstream %s%s\n", bu.Host, bu.Path)
			}
			printHeaderDiff(w, "            ", o.UpstreamRequest.Headers, bu.Headers)
		}
		printResponseHeaders(w, "            ", b.ResponseHeaders)
		printMirrors(w, "            ", b.Mirrors)
	}
	printMirrors(w, "  ", o.Mirrors)
	printResponseHeaders(w, "  ", o.ResponseHeaders)
	if tm := o.Timeouts; tm != nil {
		var parts []string
		if tm.Request != nil {
			parts = append(parts, "request "+string(*tm.Request))
		}
		if tm.BackendRequest != nil {
			parts = append(parts, "backendRequest "+string(*tm.BackendRequest))
		}
		fmt.Fprintf(w, "  timeouts  %s\n", strings.Join(parts, ", "))
	}
	if rt := o.Retry; rt != nil {
		fmt.Fprintf(w, "  retry     %s\n", compactJSON(rt))
	}
	for _, n := range o.Notes {
		fmt.Fprintf(w, "  note      %s\n", n)
	}
	if len(o.Path) > 0 {
		fmt.Fprintf(w, "  path      %s\n", describePath(o.Path))
	}
	if a := o.Authorization; a != nil {
		verdict := a.Verdict
		if verdict == istioauthz.Deny {
			verdict = "deny (Istio answers 403)"
		}
		fmt.Fprintf(w, "  authz     %s: %s\n", verdict, a.Reason)
		for _, u := range a.Unknowns {
			fmt.Fprintf(w, "            not told by the request: %s\n", u)
		}
	}

	// The listener is a context of its own: a 404 there still gets the
	// policies of GatewayClass, Gateway and listener.
	printTracePolicies(w, d, o)
}

// printTracePolicies prints the effective policies on the outcome's path,
// as describe prints them, then the kinds with none there.
func printTracePolicies(w io.Writer, d *describer, o *routing.Outcome) {
	if len(o.EffectivePolicies) == 0 && len(d.res.Kinds) == 0 {
		fmt.Fprintln(w, "\nPolicies on this path: none (no policy kinds among the objects)")
		return
	}
	fmt.Fprintln(w, "\nPolicies on this path:")
	have := map[string]bool{}
	for _, ep := range o.EffectivePolicies {
		name := d.kindName[ep.Kind.GroupKind]
		if !have[ep.PolicyKind] {
			fmt.Fprintf(w, "  %s\n", name)
			if u := d.unreadReason(ep.Kind); u != "" {
				fmt.Fprintf(w, "    partial: %s; the others may change this\n", u)
			}
		}
		have[ep.PolicyKind] = true
		r := d.effectiveResult(ep.Context)
		r.Contexts = []contextPaths{{Target: ep.Target, Paths: [][]topology.Ref{ep.Path}}}
		d.printResult(w, r)
	}
	for _, k := range d.res.Kinds {
		if have[k.String()] {
			continue
		}
		name := d.kindName[k.GroupKind]
		if u := d.unreadReason(k); u != "" {
			fmt.Fprintf(w, "  %s: unknown (%s)\n", name, u)
			continue
		}
		fmt.Fprintf(w, "  %s: none on this path\n", name)
	}
}

func equalRefPtr(a, b *topology.Ref) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// portPart is ":PORT", or "" for a backendRef that names no port.
func portPart(p int32) string {
	if p == 0 {
		return ""
	}
	return fmt.Sprintf(":%d", p)
}

func queryPart(q string) string {
	if q == "" {
		return ""
	}
	return "?" + q
}

// printHeaderDiff prints the headers the filters set, added to or removed
// from before.
func printHeaderDiff(w io.Writer, indent string, before, after map[string]string) {
	for _, n := range sortedKeys(after) {
		if old, ok := before[n]; !ok || old != after[n] {
			fmt.Fprintf(w, "%sheader %s: %s\n", indent, n, after[n])
		}
	}
	for _, n := range sortedKeys(before) {
		if _, ok := after[n]; !ok {
			fmt.Fprintf(w, "%sheader %s removed\n", indent, n)
		}
	}
}

func printResponseHeaders(w io.Writer, indent string, h *routing.HeaderChanges) {
	if h == nil {
		return
	}
	for _, n := range sortedKeys(h.Set) {
		fmt.Fprintf(w, "%sresponse header %s set to %s\n", indent, n, h.Set[n])
	}
	for _, n := range sortedKeys(h.Add) {
		fmt.Fprintf(w, "%sresponse header %s: %s added\n", indent, n, h.Add[n])
	}
	for _, n := range h.Remove {
		fmt.Fprintf(w, "%sresponse header %s removed\n", indent, n)
	}
}

func printMirrors(w io.Writer, indent string, ms []routing.Mirror) {
	for _, m := range ms {
		s := fmt.Sprintf("%smirror    %s %s%s (%g%% of requests)", indent, m.Ref.Kind, describeNsName(m.Ref), portPart(m.Port), m.Percent)
		if m.Invalid != "" {
			s += "  INVALID: " + m.Invalid
		}
		fmt.Fprintln(w, s)
	}
}

// sortedKeys are a map's keys, sorted.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
