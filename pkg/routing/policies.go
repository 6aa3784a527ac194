package routing

import (
	"fmt"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/istioauthz"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// EffectivePolicy is the effective policy of one kind for one target on
// the request's context, with its provenance: an EFFECTIVE entry of
// `attache effective` (docs/output.md).
type EffectivePolicy struct {
	PolicyKind string `json:"policyKind"`
	// Target is the effective target, on the request's path.
	Target topology.Ref `json:"target"`
	// Path is the context's path as the engine has it (Namespaces placed,
	// levels outside the kind's hierarchy left out).
	Path    []topology.Ref `json:"path"`
	Spec    map[string]any `json:"spec"`
	Sources report.Sources `json:"sources"`
	Errors  []string       `json:"errors,omitempty"`

	// Kind and Context are the engine's, for printers.
	Kind    *policy.Kind    `json:"-"`
	Context *engine.Context `json:"-"`
}

// Policies finds the effective policies on a request's context in an
// engine result, by effective target: a lookup per level of the path.
type Policies struct {
	byTarget map[topology.Ref][]*engine.Effective
	status   map[topology.Ref]*engine.PolicyStatus
	replaced map[topology.Ref]engine.RuleReplacement
	// under: engine.Result.ReplacedUnder.
	under map[topology.Ref]engine.RuleReplacement
	// refused are, per target, the statuses of the policies not applied
	// there through some Gateways (engine.PolicyStatus.NotAppliedVia).
	refused map[topology.Ref][]*engine.PolicyStatus
}

// NewPolicies indexes the effective policies of res by target, and the
// policies' statuses by policy.
func NewPolicies(res *engine.Result) *Policies {
	p := &Policies{byTarget: make(map[topology.Ref][]*engine.Effective, len(res.Effective)),
		status: make(map[topology.Ref]*engine.PolicyStatus, len(res.Policies)), replaced: res.ReplacedRules, under: res.ReplacedUnder}
	for _, e := range res.Effective {
		p.byTarget[e.Target] = append(p.byTarget[e.Target], e)
	}
	for _, ps := range res.Policies {
		p.status[ps.Policy.Ref] = ps
		for at := range ps.NotAppliedVia {
			if p.refused == nil {
				p.refused = map[topology.Ref][]*engine.PolicyStatus{}
			}
			p.refused[at] = append(p.refused[at], ps)
		}
	}
	return p
}

// AddPolicies fills the EffectivePolicies of every outcome of t: for each
// level of the request's path (of each path through a valid backend) that
// is an effective target of some policy kind, the context of that kind
// whose path is the request's, as the engine computed it. A policy on
// another rule or listener is on no such context, so it does not appear.
func (p *Policies) AddPolicies(t *RequestTrace) {
	for i := range t.Outcomes {
		o := &t.Outcomes[i]
		if o.mesh != nil {
			p.addMeshPolicies(o)
		} else {
			p.addPathPolicies(o)
		}
		p.leaveOutNotApplied(o)
		o.Authorization = authorize(o, t.Request, t.dryRun)
		if o.Result == ResultForwarded {
			if status, why := p.failedClosed(o); status != 0 {
				o.Result, o.Status, o.Reason = ResultError, status, why
			}
		}
		if o.Result == ResultForwarded || o.Result == ResultRedirected {
			// A rule its implementation replaced by a direct response
			// (its redirect too: the direct response is its action).
			for _, ref := range o.Path {
				if rr, ok := p.replaced[ref]; ok && (o.listener == nil || o.listener.gateway.serves(rr.Kind)) {
					o.Result, o.Status, o.Reason = ResultError, rr.Status, rr.Reason
					break
				}
			}
		}
		if rr, ok := p.replacedUnder(o); ok {
			o.Result, o.Status, o.Reason = ResultError, rr.Status, rr.Reason
		}
	}
}

// addPathPolicies fills the effective policies of Gateway outcome o (see
// AddPolicies).
func (p *Policies) addPathPolicies(o *Outcome) {
	paths := o.backendPaths
	if len(paths) == 0 && len(o.Path) > 0 {
		paths = [][]topology.Ref{o.Path}
	}
	seen := map[*engine.Context]bool{}
	for _, path := range paths {
		for n := range path {
			if delegatingRule(path, n) {
				// Its policies reach the child's rule, whose context
				// holds them: it answers no request itself.
				continue
			}
			for _, e := range p.byTarget[path[n]] {
				if o.listener != nil && !o.listener.gateway.serves(e.Kind) {
					// Another implementation's Gateway: a Direct
					// kind's context (its target alone) does not
					// say so, its implementation does not act here.
					continue
				}
				p.addContext(o, seen, e, path[:n+1])
			}
		}
	}
}

// addContext adds to o the context of e whose path is path, if any and
// not already added.
func (p *Policies) addContext(o *Outcome, seen map[*engine.Context]bool, e *engine.Effective, path []topology.Ref) {
	c, cp := contextOn(e, path)
	p.addFound(o, seen, e, c, cp)
}

// addFound adds context c of e (its path cp) to o, unless nil or added.
func (p *Policies) addFound(o *Outcome, seen map[*engine.Context]bool, e *engine.Effective, c *engine.Context, cp []topology.Ref) {
	if c == nil || seen[c] {
		return
	}
	seen[c] = true
	o.EffectivePolicies = append(o.EffectivePolicies, EffectivePolicy{
		PolicyKind: e.Kind.String(), Target: e.Target, Path: cp, Spec: c.Spec,
		Sources: report.SourcesOf(c), Errors: c.Errors, Kind: e.Kind, Context: c,
	})
}

// addMeshPolicies fills the effective policies of mesh outcome o: for the
// kinds with waypoint targets (Istio's), the Service's context through
// o's waypoint, which holds, as istiod applies them there, the policies
// on the Service, on the waypoint and on the waypoint class; for the
// other kinds, those on the request's path below the waypoint (the
// route, its rule, the backend), as for a Gateway, through a waypoint
// whose implementation serves the kind. A Service bound to no waypoint
// gets none: no proxy applies them.
func (p *Policies) addMeshPolicies(o *Outcome) {
	m := o.mesh
	if o.Gateway.Name == "" {
		return
	}
	seen := map[*engine.Context]bool{}
	canaryTelemetry := false
	for _, e := range p.byTarget[m.service] {
		if !e.Kind.WaypointTargets {
			continue
		}
		c, cp := waypointContext(e, o.Gateway)
		if c == nil && o.Waypoint != nil && o.Waypoint.Role == WaypointCanary && e.Kind.Composition == policy.CompositionIstioTelemetry {
			canaryTelemetry = true
		}
		p.addFound(o, seen, e, c, cp)
	}
	if canaryTelemetry {
		o.Notes = append(o.Notes, "Telemetry at a canary waypoint is not modelled (attache layers it at the primary waypoint only)")
	}
	paths := o.backendPaths
	if len(paths) == 0 {
		paths = [][]topology.Ref{o.Path}
	}
	for _, full := range paths {
		path := full[m.prefix:] // below the waypoint: the Service first
		for n := range path {
			if n == 0 && m.routed {
				// The Service a route took the request from: its own
				// policies of other kinds are a backend's.
				continue
			}
			for _, e := range p.byTarget[path[n]] {
				if e.Kind.WaypointTargets || (m.waypoint != nil && !m.waypoint.serves(e.Kind)) {
					continue
				}
				p.addContext(o, seen, e, path[:n+1])
			}
		}
	}
}

// waypointContext is the context of e (a kind with waypoint targets, on
// a Service) through waypoint wp: the one with a path through wp, or,
// when no path of e names a Gateway (the Service is bound to another
// implementation's Gateway, whose own policies do not reach it), the
// Service's own; nil when there is none (no policy applies there).
func waypointContext(e *engine.Effective, wp topology.Ref) (*engine.Context, []topology.Ref) {
	var own *engine.Context
	var ownPath []topology.Ref
	for _, c := range e.Contexts {
		var found []topology.Ref
		c.Paths(func(path []topology.Ref) bool {
			if slices.Contains(path, wp) {
				found = slices.Clone(path)
				return false
			}
			if !slices.ContainsFunc(path, func(r topology.Ref) bool { return r.GroupKind() == topology.KindGateway }) && own == nil {
				own, ownPath = c, slices.Clone(path)
			}
			return true
		})
		if found != nil {
			return c, found
		}
	}
	return own, ownPath
}

// replacedUnder is the replacement (engine.Result.ReplacedUnder) that
// answers outcome o, if any: one on its route or rule (or a delegating
// one above) when a rule matched; one on its Gateway (its HTTP and HTTPS
// listeners), ListenerSet or listener (on an HTTPS listener, whose whole
// route configuration kgateway replaces, also when no route matched),
// through a Gateway serving the kind.
func (p *Policies) replacedUnder(o *Outcome) (engine.RuleReplacement, bool) {
	if len(p.under) == 0 || o.listener == nil {
		return engine.RuleReplacement{}, false
	}
	matched := o.Result == ResultForwarded || o.Result == ResultRedirected
	if !matched && o.Result != ResultNotFound {
		return engine.RuleReplacement{}, false
	}
	proto := o.listener.protocol
	httpish := proto == gwv1.HTTPProtocolType || proto == gwv1.HTTPSProtocolType
	for _, ref := range o.Path {
		rr, ok := p.under[ref]
		if !ok || !o.listener.gateway.serves(rr.Kind) {
			continue
		}
		switch gk := ref.GroupKind(); {
		case gk == topology.KindGateway && !ref.IsSection():
			if httpish {
				return rr, true
			}
		case gk == topology.KindGateway || gk.Kind == "ListenerSet" || gk.Kind == "XListenerSet":
			if (matched && httpish) || proto == gwv1.HTTPSProtocolType {
				return rr, true
			}
		default:
			if matched {
				return rr, true
			}
		}
	}
	return engine.RuleReplacement{}, false
}

// failedClosed says whether the Gateway answers the request itself because
// a policy applying on its path is Invalid there yet in place (its
// references do not resolve) and its kind fails such routes closed
// (Kind.FailureStatus: Envoy Gateway's 500): the status and why; 0
// otherwise. A policy applies when it sets a field of the context's
// effective spec or is the most specific policy there neither Conflicted
// nor dropped for unsupported fields (one setting nothing still claims the
// route); it is judged where it attaches on this path
// (engine.PolicyStatus.InPlaceInvalid), not at its other targets. When
// that most specific policy has a merge type, its implementation
// translates it merged with the policies above: the route fails when it
// is Invalid there itself or its merge holds a broken field of one above
// (engine.StackEntry.MergeHolds) that does not fail open by the merged
// policy's flags (StackEntry.MergeFailedOpen), and only then.
func (p *Policies) failedClosed(o *Outcome) (int, string) {
	for _, ep := range o.EffectivePolicies {
		if ep.Kind == nil || ep.Kind.FailureStatus == 0 || ep.Context == nil {
			continue
		}
		var applying []engine.Attachment
		add := func(a *engine.Attachment) {
			if a != nil && !slices.Contains(applying, *a) {
				applying = append(applying, *a)
			}
		}
		for _, f := range ep.Context.Fields {
			add(f.Attachment)
		}
		var last *engine.StackEntry
		for i := len(ep.Context.Stack) - 1; i >= 0; i-- {
			if e := &ep.Context.Stack[i]; !e.Conflicted && len(e.Unsupported) == 0 {
				last = e
				add(e.Attachment)
				break
			}
		}
		impl := ep.Kind.Implementation
		if impl == "" {
			impl = "the implementation"
		}
		if st := p.statusOf(last); st != nil && st.Policy.MergeType != "" {
			// The most specific policy merges with those above it: its
			// implementation translates the merged policy, which fails
			// when that fails or holds a broken field of one above.
			if msg, ok := st.InPlaceInvalid[last.At]; ok && failsVia(st, last.At, o) {
				return ep.Kind.FailureStatus, fmt.Sprintf("%s %s applies here but is Invalid (%s); %s answers the route's requests with %d",
					last.Policy.Kind, nameOf(last.Policy), msg, impl, ep.Kind.FailureStatus)
			}
			if last.MergeHolds != "" && len(last.MergeFailedOpen) == 0 {
				return ep.Kind.FailureStatus, fmt.Sprintf("%s %s applies here merged (%s) with the policies above it, holding %s, which its implementation cannot translate; %s answers the route's requests with %d",
					last.Policy.Kind, nameOf(last.Policy), st.Policy.MergeType, last.MergeHolds, impl, ep.Kind.FailureStatus)
			}
			continue
		}
		for _, a := range applying {
			st := p.status[a.Policy]
			if st == nil {
				continue
			}
			if msg, ok := st.InPlaceInvalid[a.At]; ok && failsVia(st, a.At, o) {
				return ep.Kind.FailureStatus, fmt.Sprintf("%s %s applies here but is Invalid (%s); %s answers the route's requests with %d",
					a.Policy.Kind, nameOf(a.Policy), msg, impl, ep.Kind.FailureStatus)
			}
		}
	}
	return 0, ""
}

// failsVia reports whether the policy of st, Invalid in place at target
// at, fails the requests of outcome o: through every Gateway unless it
// fails through some Gateways or listeners only
// (engine.PolicyStatus.InPlaceInvalidVia).
func failsVia(st *engine.PolicyStatus, at topology.Ref, o *Outcome) bool {
	via, some := st.InPlaceInvalidVia[at]
	if !some || slices.Contains(via, o.Gateway) {
		return true
	}
	listener := o.Gateway.WithSection(o.Listener)
	if o.ListenerSet != nil {
		listener = o.ListenerSet.WithSection(o.Listener)
	}
	return o.Listener != "" && slices.Contains(via, listener)
}

// statusOf is the status of entry e's policy; nil for none.
func (p *Policies) statusOf(e *engine.StackEntry) *engine.PolicyStatus {
	if e == nil || e.Attachment == nil {
		return nil
	}
	return p.status[e.Policy]
}

// nameOf is a policy's namespace/name (its name alone when cluster-scoped).
func nameOf(r topology.Ref) string {
	if r.Namespace != "" {
		return r.Namespace + "/" + r.Name
	}
	return r.Name
}

// authorizationPolicy is Istio's AuthorizationPolicy kind.
var authorizationPolicy = topology.GroupKind{Group: "security.istio.io", Kind: "AuthorizationPolicy"}

// Istio's names: the Gateway controller, its default GatewayClass, and the
// annotation of policies evaluated without being enforced.
const (
	istioController   = "istio.io/gateway-controller"
	istioDefaultClass = "istio"
	istioDryRun       = "istio.io/dry-run"
)

// authorize decides what the AuthorizationPolicies on an outcome's Gateway
// (among its effective policies) do with the request, when Istio programs
// that Gateway; nil otherwise. Istio authorizes before it routes, so a
// request no route takes is decided too. Policies on a Service apply at
// its waypoint, and on a GatewayClass at waypoints of Istio's waypoint
// class: not at this Gateway. A dry-run policy is left out, with a note.
// The kind is additive: its effective spec holds each policy's spec
// proper under its "namespace/name". For a mesh request, at one of
// Istio's waypoints processing it as HTTP: the policies of the Service's
// context there (on the Service, the waypoint and the waypoint class).
func authorize(o *Outcome, req *Request, dryRun map[topology.Ref]bool) *istioauthz.Decision {
	if req == nil {
		return nil
	}
	onPath := func(target topology.Ref) bool { return target.Object().GroupKind() == topology.KindGateway }
	switch {
	case o.mesh != nil:
		if !o.mesh.istio || !o.mesh.l7 || o.Gateway.Name == "" {
			return nil
		}
		onPath = func(target topology.Ref) bool { return target.Object() == o.mesh.service }
	case o.listener == nil || !o.listener.gateway.istio:
		return nil
	}
	var pols []istioauthz.Policy
	seen := map[topology.Ref]bool{} // also the dry runs: the Gateway has policies
	for _, ep := range o.EffectivePolicies {
		if ep.Kind == nil || ep.Kind.GroupKind != authorizationPolicy || ep.Kind.Composition != policy.CompositionAdditive {
			continue
		}
		if !onPath(ep.Target) {
			continue
		}
		for key, v := range ep.Spec {
			spec, _ := v.(map[string]any)
			ns, name, ok := strings.Cut(key, "/")
			if !ok {
				ns, name = "", key
			}
			ref := topology.Ref{Group: authorizationPolicy.Group, Kind: authorizationPolicy.Kind, Namespace: ns, Name: name}
			if seen[ref] {
				continue
			}
			seen[ref] = true
			if dryRun[ref] {
				o.Notes = append(o.Notes, fmt.Sprintf("%s is a dry run (%s): Istio evaluates it without enforcing it; the authorization leaves it out", ref.Short(), istioDryRun))
				continue
			}
			pols = append(pols, istioauthz.Policy{Ref: ref, Spec: spec})
		}
	}
	if len(seen) == 0 {
		return nil
	}
	if req.IsL4() {
		o.Notes = append(o.Notes, fmt.Sprintf("AuthorizationPolicies apply to %s connections by their TCP rules only (source, destination port and IP); not decided here", strings.ToUpper(req.Scheme)))
		return nil
	}
	host := req.HostHeader
	if host == "" {
		host = req.Host
	}
	path := req.Path
	if req.Query != "" {
		path += "?" + req.Query
	}
	d := istioauthz.Decide(pols, istioauthz.Request{Method: req.Method, Host: host, Path: req.Path, PathQuery: path, Scheme: req.Scheme, Headers: req.Headers})
	return &d
}

// contextOn returns the context of e whose path is path (root to e's
// target): the engine's paths leave out the levels outside the kind's
// hierarchy and add Namespaces, so both are compared without them. A
// Direct kind's context is its target alone.
func contextOn(e *engine.Effective, path []topology.Ref) (*engine.Context, []topology.Ref) {
	var want []topology.Ref
	for _, r := range path {
		if e.Kind.InHierarchy(r.GroupKind()) {
			want = append(want, r)
		}
	}
	for _, c := range e.Contexts {
		var found []topology.Ref
		c.Paths(func(p []topology.Ref) bool {
			if samePath(p, want) || e.Kind.Class == policy.Direct && len(p) == 1 && p[0] == e.Target {
				found = append([]topology.Ref(nil), p...)
				return false
			}
			return true
		})
		if found != nil {
			return c, found
		}
	}
	return nil, nil
}

// serves reports whether the implementation of kind k acts through
// Gateway g: yes unless k names the controllers it serves and g's class,
// among the objects, has another (as the engine reads it,
// policy.Kind.Serves).
func (g *gateway) serves(k *policy.Kind) bool {
	return k == nil || !g.classKnown || k.Serves(g.controller)
}

// samePath reports whether the engine's path p, without its Namespace
// levels, is want.
func samePath(p, want []topology.Ref) bool {
	i := 0
	for _, r := range p {
		if r.GroupKind() == topology.KindNamespace && !r.IsSection() {
			continue
		}
		if i >= len(want) || want[i] != r {
			return false
		}
		i++
	}
	return i == len(want)
}

// delegatingRule reports whether path[n] is a route rule that delegated
// the request to the route after it (kgateway route delegation).
func delegatingRule(path []topology.Ref, n int) bool {
	return n+1 < len(path) && path[n].IsSection() && slices.Contains(topology.RouteKinds, path[n].GroupKind()) &&
		!path[n+1].IsSection() && slices.Contains(topology.RouteKinds, path[n+1].GroupKind())
}
