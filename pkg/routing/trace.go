package routing

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/istioauthz"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// APIVersion and Kind identify the RequestTrace document (docs/output.md):
// fields may be added, never renamed or removed.
const (
	APIVersion = report.APIVersion
	Kind       = "RequestTrace"
)

// Results of an outcome.
const (
	ResultForwarded  = "forwarded"
	ResultRedirected = "redirected"
	ResultNotFound   = "not-found"
	ResultError      = "error"
)

// RequestTrace is what happens to one request: one outcome per Gateway
// that takes it, and why each other route of the listeners involved did
// not match.
type RequestTrace struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Request    *Request `json:"request"`
	// Outcomes has one entry per Gateway taking the request (exactly one
	// when a Gateway was named).
	Outcomes []Outcome `json:"outcomes"`
	// NotMatched lists, per listener of an outcome, the other routes
	// attached to it or naming it, and the first reason each did not
	// take the request.
	NotMatched []NotMatched `json:"notMatched"`
	// NoGateway says, when Outcomes is empty, why no Gateway takes the
	// request.
	NoGateway string `json:"noGateway,omitempty"`
	// Mesh is set for a request traced in the mesh (TraceMesh): the
	// Service and port it is sent to. Its outcomes are then one per
	// waypoint the Service is bound to (Outcome.Waypoint), or one naming
	// no Gateway when it is bound to none.
	Mesh *MeshTrace `json:"mesh,omitempty"`
	// Partial lists what could not be read from the cluster (set by the
	// CLI): when set, the answer is partial.
	Partial []string `json:"partial,omitempty"`

	// dryRun are the index's Istio dry-run AuthorizationPolicies.
	dryRun map[topology.Ref]bool
}

// Outcome is what one Gateway does with the request: for a mesh request,
// one waypoint.
type Outcome struct {
	// Gateway is the Gateway taking the request: for a mesh request its
	// waypoint, absent when the Service is bound to none.
	Gateway topology.Ref `json:"gateway,omitzero"`
	// Waypoint is set for a mesh request: the waypoint's role and share
	// of the Service's connections.
	Waypoint *WaypointUse `json:"waypoint,omitempty"`
	// Listener is the name of the listener that takes the request, absent
	// when none does; ListenerSet is set when the listener is a
	// ListenerSet's.
	Listener    string        `json:"listener,omitempty"`
	ListenerSet *topology.Ref `json:"listenerSet,omitempty"`
	// Route and Rule (the rule's section name) are absent when nothing
	// matched.
	Route *topology.Ref `json:"route,omitempty"`
	Rule  string        `json:"rule,omitempty"`
	// DelegatedBy are the rules (route sections) that delegated the
	// request to Route (kgateway route delegation), outermost first.
	DelegatedBy []topology.Ref `json:"delegatedBy,omitempty"`
	// Result is forwarded, redirected, not-found or error.
	Result string `json:"result"`
	// Status is set when the Gateway answers itself (redirect, 404, 500).
	Status   int    `json:"status,omitempty"`
	Location string `json:"location,omitempty"`
	// Reason says why the Gateway answers itself.
	Reason string `json:"reason,omitempty"`
	// UpstreamRequest is the request as the backends receive it, after
	// the rule's filters (per-backend filters: see Backends).
	UpstreamRequest *UpstreamRequest `json:"upstreamRequest,omitempty"`
	Backends        []Backend        `json:"backends,omitempty"`
	Mirrors         []Mirror         `json:"mirrors,omitempty"`
	ResponseHeaders *HeaderChanges   `json:"responseHeaders,omitempty"`
	// Timeouts and Retry are the rule's, when set.
	Timeouts *gwv1.HTTPRouteTimeouts `json:"timeouts,omitempty"`
	Retry    *gwv1.HTTPRouteRetry    `json:"retry,omitempty"`
	// Notes name what the rule does that tracing does not model (CORS,
	// external auth, extension filters, session persistence).
	Notes []string `json:"notes,omitempty"`
	// Path is the context the request takes, root first: GatewayClass,
	// Gateway, (ListenerSet,) listener, route, rule and, when one backend
	// receives every request, the backend (and its port).
	Path []topology.Ref `json:"path,omitempty"`
	// EffectivePolicies are the effective policies of every policy kind
	// on the request's context (see AddPolicies).
	EffectivePolicies []EffectivePolicy `json:"effectivePolicies"`
	// Authorization is what Istio's AuthorizationPolicies on the path do
	// with the request (see AddPolicies), when one is there.
	Authorization *istioauthz.Decision `json:"authorization,omitempty"`

	listener *listener
	// l4 is set when the request is carried as a connection (a tcp://
	// or udp:// request, or any request a waypoint proxies as TCP): no
	// HTTP answer; dropInvalid when its implementation leaves invalid
	// backends out (Envoy Gateway), the valid ones taking every
	// connection, rather than rejecting their share (the API).
	l4, dropInvalid bool
	// mesh is set for a mesh request (TraceMesh).
	mesh   *meshOutcome
	winner *candidate
	// backendPaths are the full paths through each valid backend.
	backendPaths [][]topology.Ref
}

// UpstreamRequest is a request as a backend receives it.
type UpstreamRequest struct {
	Host string `json:"host"`
	// Path includes the query string.
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

// Backend is one backendRef of the matched rule.
type Backend struct {
	Ref    topology.Ref `json:"ref"`
	Port   int32        `json:"port,omitempty"`
	Weight int32        `json:"weight"`
	// Invalid says why requests sent to it get a 500 (missing Service, no
	// ReferenceGrant, unknown kind, ...); absent when valid.
	Invalid string `json:"invalid,omitempty"`
	// UpstreamRequest and ResponseHeaders are set when the backendRef's
	// own filters change the request or the response.
	UpstreamRequest *UpstreamRequest `json:"upstreamRequest,omitempty"`
	ResponseHeaders *HeaderChanges   `json:"responseHeaders,omitempty"`
	Mirrors         []Mirror         `json:"mirrors,omitempty"`
}

// Mirror is a RequestMirror destination.
type Mirror struct {
	Ref  topology.Ref `json:"ref"`
	Port int32        `json:"port,omitempty"`
	// Percent of requests mirrored (100 when the filter sets none).
	Percent float64 `json:"percent"`
	Invalid string  `json:"invalid,omitempty"`
}

// HeaderChanges are ResponseHeaderModifier settings, header names lower
// case.
type HeaderChanges struct {
	Set    map[string]string `json:"set"`
	Add    map[string]string `json:"add"`
	Remove []string          `json:"remove"`
}

// NotMatched is a route on a listener of an outcome that did not take the
// request, and the first reason why.
type NotMatched struct {
	// Gateway is the Gateway (for a mesh request, the waypoint; absent
	// when the Service is bound to none).
	Gateway topology.Ref `json:"gateway,omitzero"`
	// Listener is absent for a mesh request, whose routes name Service
	// instead.
	Listener    string        `json:"listener,omitempty"`
	ListenerSet *topology.Ref `json:"listenerSet,omitempty"`
	Service     *topology.Ref `json:"service,omitempty"`
	Route       topology.Ref  `json:"route"`
	Reason      string        `json:"reason"`
}

// GatewayNotFoundError is returned by Trace for a Gateway that is not
// among the objects.
type GatewayNotFoundError struct {
	Gateway topology.Ref
	// Known are the Gateways there are.
	Known []topology.Ref
}

// Error names the Gateway and those there are.
func (e *GatewayNotFoundError) Error() string {
	names := make([]string, len(e.Known))
	for i, r := range e.Known {
		names[i] = r.Namespace + "/" + r.Name
	}
	known := "there are no Gateways"
	if len(names) > 0 {
		known = "Gateways: " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("Gateway %s/%s not found (%s)", e.Gateway.Namespace, e.Gateway.Name, known)
}

// Trace routes req: through the Gateway gw when given (namespace and
// name), else through every Gateway with a listener taking it. It looks
// the candidates of each listener up in the index; only the why-not
// explanations visit every route of a listener.
func (ix *Index) Trace(req *Request, gw *topology.Ref) (*RequestTrace, error) {
	t := &RequestTrace{APIVersion: APIVersion, Kind: Kind, Request: req, Outcomes: []Outcome{}, NotMatched: []NotMatched{}, dryRun: ix.dryRun}
	if gw != nil {
		ref := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: gw.Namespace, Name: gw.Name}
		g := ix.gateways[ref]
		if g == nil {
			e := &GatewayNotFoundError{Gateway: ref}
			for _, g := range ix.order {
				e.Known = append(e.Known, g.ref)
			}
			return nil, e
		}
		l, why := g.selectListener(req)
		if l == nil {
			status := 404
			if req.IsL4() {
				status = 0 // a connection gets no HTTP answer
			}
			t.Outcomes = append(t.Outcomes, Outcome{Gateway: g.ref, Result: ResultNotFound, Status: status, Reason: why, EffectivePolicies: []EffectivePolicy{}})
			return t, nil
		}
		ix.route(t, l, req)
		return t, nil
	}
	var whys []string
	for _, g := range ix.order {
		l, why := g.selectListener(req)
		if l == nil {
			whys = append(whys, fmt.Sprintf("%s/%s: %s", g.ref.Namespace, g.ref.Name, why))
			continue
		}
		ix.route(t, l, req)
	}
	if len(t.Outcomes) == 0 {
		if len(ix.order) == 0 {
			t.NoGateway = "there are no Gateways"
		} else {
			t.NoGateway = "no Gateway has a listener taking it: " + strings.Join(whys, "; ")
		}
	}
	return t, nil
}

// protocols are the listener protocols a request's scheme reaches.
func protocols(req *Request) []gwv1.ProtocolType {
	switch {
	case req.Scheme == "tcp":
		return []gwv1.ProtocolType{gwv1.TCPProtocolType}
	case req.Scheme == "udp":
		return []gwv1.ProtocolType{gwv1.UDPProtocolType}
	}
	if req.IsTLS() {
		return []gwv1.ProtocolType{gwv1.HTTPSProtocolType, gwv1.TLSProtocolType}
	}
	return []gwv1.ProtocolType{gwv1.HTTPProtocolType}
}

// selectListener returns the listener of g taking req: on req's port, of a
// protocol its scheme reaches, whose hostname matches the host (the SNI
// for TLS), the most specific hostname winning (exact, then the longest
// wildcard, then none), then the first in listener order. Else it says
// why none does.
func (g *gateway) selectListener(req *Request) (*listener, string) {
	host := req.Host
	if req.IsTLS() {
		host = req.SNI
	}
	var best *listener
	bestRank := -1
	onPort, withProto := 0, 0
	for _, l := range g.listeners {
		if l.port != req.Port {
			continue
		}
		onPort++
		if !slices.Contains(protocols(req), l.protocol) {
			continue
		}
		withProto++
		rank := 0
		switch {
		case l.hostname == "", req.IsL4():
			// A TCP or UDP listener's hostname is ignored (the API).
		case !strings.HasPrefix(l.hostname, "*."):
			if l.hostname != host {
				continue
			}
			rank = 1 << 20
		default:
			if !gatewayapi.HostnameIntersects(l.hostname, host) {
				continue
			}
			rank = len(l.hostname)
		}
		if rank > bestRank {
			best, bestRank = l, rank
		}
	}
	if best != nil {
		return best, ""
	}
	switch {
	case onPort == 0:
		return nil, fmt.Sprintf("no listener on port %d", req.Port)
	case withProto == 0:
		return nil, fmt.Sprintf("no listener on port %d takes %s (protocols there: %s)", req.Port, req.Scheme, g.protocolsOn(req.Port))
	}
	return nil, fmt.Sprintf("no listener on port %d accepts host %s (hostnames there: %s)", req.Port, host, g.hostnamesOn(req.Port))
}

func (g *gateway) protocolsOn(port int32) string {
	var out []string
	for _, l := range g.listeners {
		if l.port == port && !slices.Contains(out, string(l.protocol)) {
			out = append(out, string(l.protocol))
		}
	}
	return strings.Join(out, ", ")
}

func (g *gateway) hostnamesOn(port int32) string {
	var out []string
	for _, l := range g.listeners {
		if l.port == port {
			out = append(out, l.hostname)
		}
	}
	return strings.Join(out, ", ")
}

// route matches req against the routes of listener l and appends the
// outcome and the why-nots to t.
func (ix *Index) route(t *RequestTrace, l *listener, req *Request) {
	o := Outcome{Gateway: l.gateway.ref, Listener: l.ref.SectionName, listener: l, EffectivePolicies: []EffectivePolicy{}}
	if l.set != (topology.Ref{}) {
		set := l.set
		o.ListenerSet = &set
	}
	if req.IsL4() {
		ix.routeL4(t, &o, l, req)
		return
	}
	query, _ := url.ParseQuery(req.Query)
	var tab *table
	host := req.Host
	switch {
	case l.protocol == gwv1.TLSProtocolType:
		tab, host = l.tls, req.SNI
	case req.IsGRPC():
		tab = l.grpc
	default:
		tab = l.http
	}
	var best *candidate
	dropped := map[*route]bool{} // by istiod, per route (istioUnconverted)
	consider := func(c candidate) {
		if m, _ := c.e.mismatch(req, query); m != "" {
			return
		}
		if l.gateway.istio {
			r := c.e.rule.route
			d, ok := dropped[r]
			if !ok {
				d = ix.istioUnconverted(r, false) != ""
				dropped[r] = d
			}
			if d {
				return // istiod makes no VirtualService of the route
			}
		}
		if best == nil || better(c, *best) {
			cc := c
			best = &cc
		}
	}
	path := pathOnly(req.Path)
	svc, _, _ := grpcServiceMethod(req.Path)
	tab.groupsFor(host, func(g *hostGroup, exactHost, hostLen int) {
		yield := func(e *entry) { consider(candidate{e: e, exactHost: exactHost, hostLen: hostLen}) }
		switch {
		case l.protocol == gwv1.TLSProtocolType:
			for _, e := range g.all {
				yield(e)
			}
		case req.IsGRPC():
			g.grpcCandidates(svc, yield)
		default:
			g.httpCandidates(path, yield)
		}
	})
	o.Path = append(append([]topology.Ref(nil), l.gateway.path...), l.pathBelowGateway()...)
	if best == nil {
		o.Result, o.Status, o.Reason = ResultNotFound, 404, "no route on the listener matches"
		if tab == nil {
			o.Reason = "no route of a kind serving " + req.Scheme + " is attached to the listener"
		}
	} else {
		o.winner = best
		ix.apply(&o, best.e, req)
	}
	t.Outcomes = append(t.Outcomes, o)
	t.NotMatched = append(t.NotMatched, ix.whyNot(l, req, query, best)...)
}

// routeL4 routes a connection (req.IsL4) taken by TCP or UDP listener l:
// of the routes of its kind attached there, the oldest (then the first by
// namespace/name) takes every connection, the others none (Gateway API's
// conflict rule, which the conformance test
// TCPRouteMultipleRoutesAttachment checks). Its one rule forwards to its
// backends by weight; a connection sent to an invalid backend is
// rejected. Appends the outcome and the why-nots to t.
func (ix *Index) routeL4(t *RequestTrace, o *Outcome, l *listener, req *Request) {
	kind := "TCPRoute"
	if l.protocol == gwv1.UDPProtocolType {
		kind = "UDPRoute"
	}
	o.Path = append(append([]topology.Ref(nil), l.gateway.path...), l.pathBelowGateway()...)
	// Envoy Gateway refuses a route without exactly one rule ("One and
	// only one rule is supported"; v1alpha2 allows 16) and leaves invalid
	// backends out (processTCPRouteParentRefs, processUDPRouteParentRefs).
	eg := l.gateway.classKnown && l.gateway.controller == profiles.EnvoyGatewayController
	o.l4, o.dropInvalid = true, eg
	refused := map[*route]string{}
	var winner *route
	for _, r := range l.l4 {
		switch {
		case len(r.rules) == 0:
			refused[r] = "the route has no rule"
		case eg && len(r.rules) != 1:
			refused[r] = fmt.Sprintf("Envoy Gateway refuses it: it has %d rules (\"One and only one rule is supported\")", len(r.rules))
		case winner == nil:
			winner = r
		}
	}
	if winner == nil {
		o.Result, o.Reason = ResultNotFound, fmt.Sprintf("no %s the implementation accepts is attached to the listener: it takes no %s", kind, l4Noun(req))
	} else {
		ru := winner.rules[0]
		if len(winner.rules) > 1 {
			o.Notes = append(o.Notes, fmt.Sprintf("%s %s has %d rules: the API allows one (v1); only the first is traced",
				kind, nameOf(winner.ref), len(winner.rules)))
		}
		e := ru.entries
		if e == nil {
			e = compile(ru)
		}
		o.winner = &candidate{e: e[0]}
		ix.apply(o, e[0], req)
	}
	t.Outcomes = append(t.Outcomes, *o)
	nm := func(r *route, reason string) {
		n := NotMatched{Gateway: l.gateway.ref, Listener: l.ref.SectionName, Route: r.ref, Reason: reason}
		if l.set != (topology.Ref{}) {
			set := l.set
			n.ListenerSet = &set
		}
		t.NotMatched = append(t.NotMatched, n)
	}
	for _, r := range l.routes {
		switch {
		case r == winner:
		case !slices.Contains(l.l4, r):
			nm(r, fmt.Sprintf("kind: a %s does not serve %s %ss on this listener", r.ref.Kind, strings.ToUpper(req.Scheme), l4Noun(req)))
		case refused[r] != "":
			nm(r, refused[r])
		case winner == nil:
		default:
			why := "is older"
			if !winner.created.Before(r.created) {
				why = "was created at the same time and comes first by namespace/name"
			}
			nm(r, fmt.Sprintf("precedence: %s %s %s: only the oldest %s attached to a listener takes its %ss",
				winner.ref.Kind, nameOf(winner.ref), why, kind, l4Noun(req)))
		}
	}
	for _, r := range l.refused {
		nm(r, r.refusal(l))
	}
}

// pathBelowGateway is the listener's path below its Gateway: the
// ListenerSet, if any, then the listener.
func (l *listener) pathBelowGateway() []topology.Ref {
	if l.set != (topology.Ref{}) {
		return []topology.Ref{l.set, l.ref}
	}
	return []topology.Ref{l.ref}
}

// whyNot explains, for every route of listener l but the winner's, why it
// did not take req.
func (ix *Index) whyNot(l *listener, req *Request, query url.Values, best *candidate) []NotMatched {
	var out []NotMatched
	nm := func(r *route, reason string) {
		n := NotMatched{Gateway: l.gateway.ref, Listener: l.ref.SectionName, Route: r.ref, Reason: reason}
		if l.set != (topology.Ref{}) {
			set := l.set
			n.ListenerSet = &set
		}
		out = append(out, n)
	}
	host := req.Host
	if l.protocol == gwv1.TLSProtocolType {
		host = req.SNI
	}
	for _, r := range l.routes {
		if best != nil && r == best.e.rule.route {
			continue
		}
		if older := l.kindConflict[r]; older != nil {
			nm(r, fmt.Sprintf("not accepted by the listener: %s, older, has an intersecting hostname (an HTTPRoute and a GRPCRoute cannot share a hostname on a listener)", older.ref.Short()))
			continue
		}
		if l.gateway.istio {
			if why := ix.istioUnconverted(r, false); why != "" {
				nm(r, why)
				continue
			}
		}
		nm(r, r.whyNot(l, req, query, host, best))
	}
	for _, r := range l.refused {
		nm(r, r.refusal(l))
	}
	return out
}

// whyNot is the first reason route r on listener l did not take req: the
// hostname, else the first failing condition of the rule match that came
// closest to the request.
func (r *route) whyNot(l *listener, req *Request, query url.Values, host string, best *candidate) string {
	gk := r.ref.GroupKind()
	switch {
	case l.protocol == gwv1.TLSProtocolType && gk != topology.KindTLSRoute,
		l.protocol != gwv1.TLSProtocolType && req.IsGRPC() && gk != topology.KindGRPCRoute,
		l.protocol != gwv1.TLSProtocolType && !req.IsGRPC() && gk != topology.KindHTTPRoute:
		return fmt.Sprintf("kind: a %s does not serve %s requests on this listener", r.ref.Kind, req.Scheme)
	}
	if len(r.hostnames) > 0 {
		ok := false
		for _, h := range r.hostnames {
			if (l.hostname == "" || gatewayapi.HostnameIntersects(l.hostname, h)) && gatewayapi.HostnameIntersects(h, host) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Sprintf("hostname: %s is not among %s", host, strings.Join(r.hostnames, ", "))
		}
	}
	return r.closestMiss(req, query, best, "takes precedence")
}

// closestMiss is why route r did not take req, its hostnames aside: the
// first failing condition of the match that came closest, or that a
// match of it matches but best's rule won (verb says how).
func (r *route) closestMiss(req *Request, query url.Values, best *candidate, verb string) string {
	// The reason is that of the match that came closest: the one failing
	// at the latest stage (path, method, headers, query), the first in
	// rule order among equals.
	closest, stage := "", -1
	for _, ru := range r.rules {
		entries := ru.entries
		if entries == nil { // a route attached nowhere: never compiled
			entries = compile(ru)
		}
		for _, e := range entries {
			m, st := e.mismatch(req, query)
			if m == "" {
				if best != nil {
					return fmt.Sprintf("precedence: rule %s matches, but %s rule %s %s", ru.name, best.e.rule.route.ref.Short(), best.e.rule.name, verb)
				}
				return fmt.Sprintf("rule %s matches but was not chosen", ru.name)
			}
			if st > stage {
				closest, stage = fmt.Sprintf("rule %s: %s", ru.name, m), st
			}
		}
	}
	if closest == "" {
		return "the route has no rules"
	}
	return closest
}

// refusal says why route r, whose parentRefs name l's Gateway or
// ListenerSet, is not attached to l.
func (r *route) refusal(l *listener) string {
	owner := l.ref.Object()
	var sections []string
	for _, p := range r.parents {
		if gatewayapi.ParentOf(r.ref.Namespace, p) != owner {
			continue
		}
		if p.SectionName == nil || *p.SectionName == "" || string(*p.SectionName) == l.ref.SectionName {
			if p.Port != nil && int32(*p.Port) != l.port {
				continue
			}
			if kinds, known := gatewayapi.DefaultRouteKinds(l.protocol); known && !slices.Contains(kinds, r.ref.GroupKind()) {
				return fmt.Sprintf("not accepted by the listener: a %s does not attach to a listener of protocol %s", r.ref.Kind, l.protocol)
			}
			return "not accepted by the listener: its allowedRoutes (namespaces or kinds) or its hostname do not admit the route"
		}
		sections = append(sections, string(*p.SectionName))
	}
	if len(sections) > 0 {
		return "not attached here: its parentRef names listener " + strings.Join(sections, ", ")
	}
	return "not attached here: its parentRef names another port"
}

// apply runs the matched rule: its filters, backends and settings.
func (ix *Index) apply(o *Outcome, e *entry, req *Request) {
	ru := e.rule
	rref := ru.route.ref
	o.Route, o.Rule = &rref, ru.name
	for _, v := range e.via {
		sec := v.route.ref.WithSection(v.name)
		o.Path = append(o.Path, v.route.ref, sec)
		o.DelegatedBy = append(o.DelegatedBy, sec)
		if v.http.Filters != nil || v.http.Timeouts != nil || v.http.Retry != nil {
			o.Notes = append(o.Notes, fmt.Sprintf("the delegating rule %s %s sets filters, timeouts or retry, which kgateway passes on to its children (not modelled)", v.route.ref.Kind, describeRule(sec)))
		}
	}
	o.Path = append(o.Path, rref, rref.WithSection(ru.name))
	up := &UpstreamRequest{Host: req.Host, Path: req.Path, Headers: map[string]string{}}
	if req.Query != "" {
		up.Path += "?" + req.Query
	}
	for k, v := range req.Headers {
		up.Headers[k] = v
	}
	var refs []backendSpec
	switch {
	case ru.http != nil:
		for _, f := range ru.http.Filters {
			if ix.httpFilter(o, f, e, req, up, &o.ResponseHeaders, &o.Mirrors) {
				return // a redirect answers: nothing is forwarded
			}
		}
		if t := ru.http.Timeouts; t != nil {
			o.Timeouts = t
		}
		o.Retry = ru.http.Retry
		if ru.http.SessionPersistence != nil {
			o.Notes = append(o.Notes, "sessionPersistence is set (not modelled)")
		}
		for i := range ru.http.BackendRefs {
			b := &ru.http.BackendRefs[i]
			refs = append(refs, backendSpec{ref: b.BackendObjectReference, weight: b.Weight, http: b.Filters})
		}
	case ru.grpc != nil:
		for _, f := range ru.grpc.Filters {
			ix.grpcFilter(o, f, up, &o.ResponseHeaders, &o.Mirrors)
		}
		if ru.grpc.SessionPersistence != nil {
			o.Notes = append(o.Notes, "sessionPersistence is set (not modelled)")
		}
		for i := range ru.grpc.BackendRefs {
			b := &ru.grpc.BackendRefs[i]
			refs = append(refs, backendSpec{ref: b.BackendObjectReference, weight: b.Weight, grpc: b.Filters})
		}
	case ru.l4 != nil:
		for i := range ru.l4.backendRefs {
			b := &ru.l4.backendRefs[i]
			refs = append(refs, backendSpec{ref: b.BackendObjectReference, weight: b.Weight})
		}
	default:
		for i := range ru.tls.BackendRefs {
			b := &ru.tls.BackendRefs[i]
			refs = append(refs, backendSpec{ref: b.BackendObjectReference, weight: b.Weight})
		}
	}
	if req.IsL4() {
		up = nil // a connection: no request to pass on
	}
	o.UpstreamRequest = up
	ix.backends(o, e, refs, req, up)
}

type backendSpec struct {
	ref    gwv1.BackendObjectReference
	weight *int32
	http   []gwv1.HTTPRouteFilter
	grpc   []gwv1.GRPCRouteFilter
}

// backends resolves the rule's backendRefs and decides the result: the
// request is forwarded when some valid backend has weight; otherwise the
// Gateway answers 500, as the API says for a rule whose backends are all
// invalid (or that has none).
func (ix *Index) backends(o *Outcome, e *entry, refs []backendSpec, req *Request, up *UpstreamRequest) {
	live := 0
	for _, bs := range refs {
		b := Backend{Weight: 1}
		if bs.weight != nil {
			b.Weight = *bs.weight
		}
		b.Ref, b.Port, b.Invalid = ix.resolve(o, bs.ref)
		if len(bs.http) > 0 || len(bs.grpc) > 0 {
			bu := cloneUpstream(up)
			var rh *HeaderChanges
			for _, f := range bs.http {
				ix.backendFilter(o, f, e, req, bu, &rh, &b.Mirrors)
			}
			for _, f := range bs.grpc {
				ix.grpcFilter(o, f, bu, &rh, &b.Mirrors)
			}
			b.UpstreamRequest, b.ResponseHeaders = bu, rh
		}
		if b.Invalid == "" && b.Weight > 0 {
			live++
			p := append(append([]topology.Ref(nil), o.Path...), b.Ref)
			if svc := ix.services[b.Ref]; svc != nil {
				if name, ok := svc.ports[b.Port]; ok {
					p = append(p, b.Ref.WithSection(name))
				}
			}
			o.backendPaths = append(o.backendPaths, p)
		}
		o.Backends = append(o.Backends, b)
	}
	if o.l4 && live > 0 {
		// The API: connections to an invalid backend are rejected, by
		// its weight; Envoy Gateway leaves such a backend out instead.
		var all, bad int64
		for _, b := range o.Backends {
			all += int64(max(b.Weight, 0))
			if b.Invalid != "" {
				bad += int64(max(b.Weight, 0))
			}
		}
		switch {
		case bad > 0 && o.dropInvalid:
			o.Notes = append(o.Notes, fmt.Sprintf("Envoy Gateway leaves the invalid backends out: the valid ones take every %s (the API would reject %s of them)", l4Noun(req), percent(bad, all)))
		case bad > 0:
			o.Notes = append(o.Notes, fmt.Sprintf("%s of %ss go to invalid backends and are %s (their weight %d of %d)", percent(bad, all), l4Noun(req), l4Refused(req), bad, all))
		}
	}
	switch {
	case o.l4 && len(refs) == 0:
		o.Result, o.Reason = ResultError, fmt.Sprintf("the rule has no backendRefs: the %s is %s", l4Noun(req), l4Refused(req))
	case o.l4 && live == 0:
		o.Result, o.Reason = ResultError, fmt.Sprintf("no backendRef of the rule is valid with a weight above 0: the %s is %s", l4Noun(req), l4Refused(req))
	case len(refs) == 0:
		o.Result, o.Status, o.Reason = ResultError, 500, "the rule has no backendRefs"
	case live == 0:
		o.Result, o.Status, o.Reason = ResultError, 500, "no backendRef of the rule is valid with a weight above 0"
	default:
		o.Result = ResultForwarded
		if len(o.backendPaths) == 1 {
			o.Path = o.backendPaths[0]
		}
	}
}

// resolve checks a backendRef of outcome o's route: a Service among the
// objects with that port, in the route's namespace or allowed by a
// ReferenceGrant (which istiod does not ask of a route at its waypoints:
// it converts mesh routes without enforcing them, convertHTTPRoute's
// enforceRefGrant).
func (ix *Index) resolve(o *Outcome, br gwv1.BackendObjectReference) (topology.Ref, int32, string) {
	rref := o.Route
	ref := gatewayapi.BackendOf(rref.Namespace, br)
	var port int32
	if br.Port != nil {
		port = int32(*br.Port)
	}
	if ref.GroupKind() == istioHostname && ix.istioOutcome(o) {
		return ix.resolveHostname(ref, br)
	}
	if ref.GroupKind() != topology.KindService {
		return ref, port, fmt.Sprintf("unknown backend kind %s (InvalidKind)", ref.GroupKind())
	}
	if (o.mesh == nil || !o.mesh.istio) && !ix.grants.Allows(rref.GroupKind(), rref.Namespace, ref) {
		return ref, port, fmt.Sprintf("no ReferenceGrant in namespace %s allows a %s of namespace %s to refer to it (RefNotPermitted)", ref.Namespace, rref.Kind, rref.Namespace)
	}
	svc := ix.services[ref]
	if svc == nil {
		return ref, port, "the Service does not exist (BackendNotFound)"
	}
	if br.Port == nil {
		return ref, port, "the backendRef names no port, which a Service backend needs"
	}
	if _, ok := svc.ports[port]; !ok {
		return ref, port, fmt.Sprintf("the Service has no port %d", port)
	}
	return ref, port, ""
}

func cloneUpstream(u *UpstreamRequest) *UpstreamRequest {
	c := *u
	c.Headers = make(map[string]string, len(u.Headers))
	for k, v := range u.Headers {
		c.Headers[k] = v
	}
	return &c
}

// modifyHeaders applies a RequestHeaderModifier to h: set replaces, add
// appends (joined with ","), remove deletes; names are case-insensitive.
func modifyHeaders(h map[string]string, f *gwv1.HTTPHeaderFilter) {
	for _, s := range f.Set {
		h[strings.ToLower(string(s.Name))] = s.Value
	}
	for _, a := range f.Add {
		n := strings.ToLower(string(a.Name))
		if old, ok := h[n]; ok {
			h[n] = old + "," + a.Value
		} else {
			h[n] = a.Value
		}
	}
	for _, r := range f.Remove {
		delete(h, strings.ToLower(r))
	}
}

// responseChanges records a ResponseHeaderModifier.
func responseChanges(into **HeaderChanges, f *gwv1.HTTPHeaderFilter) {
	if *into == nil {
		*into = &HeaderChanges{Set: map[string]string{}, Add: map[string]string{}, Remove: []string{}}
	}
	c := *into
	for _, s := range f.Set {
		c.Set[strings.ToLower(string(s.Name))] = s.Value
	}
	for _, a := range f.Add {
		n := strings.ToLower(string(a.Name))
		if old, ok := c.Add[n]; ok {
			c.Add[n] = old + "," + a.Value
		} else {
			c.Add[n] = a.Value
		}
	}
	for _, r := range f.Remove {
		c.Remove = append(c.Remove, strings.ToLower(r))
	}
}

// mirror records a RequestMirror.
func (ix *Index) mirror(o *Outcome, f *gwv1.HTTPRequestMirrorFilter, into *[]Mirror) {
	m := Mirror{Percent: 100}
	m.Ref, m.Port, m.Invalid = ix.resolve(o, f.BackendRef)
	switch {
	case f.Percent != nil:
		m.Percent = float64(*f.Percent)
	case f.Fraction != nil:
		den := int32(100)
		if f.Fraction.Denominator != nil {
			den = *f.Fraction.Denominator
		}
		if den > 0 {
			m.Percent = 100 * float64(f.Fraction.Numerator) / float64(den)
		}
	}
	*into = append(*into, m)
}

// httpFilter applies one HTTPRoute filter of the rule matched by e. It
// reports whether the filter answers the request (a redirect).
func (ix *Index) httpFilter(o *Outcome, f gwv1.HTTPRouteFilter, e *entry, req *Request, up *UpstreamRequest, rh **HeaderChanges, mirrors *[]Mirror) bool {
	switch f.Type {
	case gwv1.HTTPRouteFilterRequestHeaderModifier:
		if f.RequestHeaderModifier != nil {
			modifyHeaders(up.Headers, f.RequestHeaderModifier)
		}
	case gwv1.HTTPRouteFilterResponseHeaderModifier:
		if f.ResponseHeaderModifier != nil {
			responseChanges(rh, f.ResponseHeaderModifier)
		}
	case gwv1.HTTPRouteFilterRequestMirror:
		if f.RequestMirror != nil {
			ix.mirror(o, f.RequestMirror, mirrors)
		}
	case gwv1.HTTPRouteFilterURLRewrite:
		if f.URLRewrite == nil {
			return false
		}
		if h := f.URLRewrite.Hostname; h != nil {
			up.Host = string(*h)
		}
		if p := f.URLRewrite.Path; p != nil {
			np := rewritePath(pathOnly(req.Path), p, e)
			if req.Query != "" {
				np += "?" + req.Query
			}
			up.Path = np
		}
	case gwv1.HTTPRouteFilterRequestRedirect:
		if f.RequestRedirect == nil {
			return false
		}
		ix.redirect(o, f.RequestRedirect, e, req)
		return true
	case gwv1.HTTPRouteFilterExtensionRef:
		o.Notes = append(o.Notes, extensionRefNote(f.ExtensionRef))
	default:
		o.Notes = append(o.Notes, fmt.Sprintf("filter %s is not modelled", f.Type))
	}
	return false
}

// extensionRefNote says what trace makes of an ExtensionRef filter: its
// effect is the implementation's; a policy it names, of a kind attached
// by route filters (kgateway, Gloo Gateway), is among the effective
// policies of the request's rule.
func extensionRefNote(ref *gwv1.LocalObjectReference) string {
	if ref == nil {
		return "filter ExtensionRef names nothing (not modelled)"
	}
	return fmt.Sprintf("filter ExtensionRef to %s %s is not modelled as a filter; if its kind is a policy kind attached by route filters, the policy is among the effective policies below",
		topology.GroupKind{Group: string(ref.Group), Kind: string(ref.Kind)}, ref.Name)
}

// backendFilter applies one filter of a backendRef of the rule matched by
// e to up, the request that backend receives. The API leaves a
// backendRef's filters implementation-specific: a URLRewrite rewrites the
// request as the rule's would; a RequestRedirect there is not modelled
// (the rule's redirect is), and a note says so.
func (ix *Index) backendFilter(o *Outcome, f gwv1.HTTPRouteFilter, e *entry, req *Request, up *UpstreamRequest, rh **HeaderChanges, mirrors *[]Mirror) {
	if f.Type == gwv1.HTTPRouteFilterRequestRedirect {
		o.Notes = append(o.Notes, "a backendRef's RequestRedirect filter is not modelled")
		return
	}
	ix.httpFilter(o, f, e, req, up, rh, mirrors)
}

// grpcFilter applies one GRPCRoute filter.
func (ix *Index) grpcFilter(o *Outcome, f gwv1.GRPCRouteFilter, up *UpstreamRequest, rh **HeaderChanges, mirrors *[]Mirror) {
	switch f.Type {
	case gwv1.GRPCRouteFilterRequestHeaderModifier:
		if f.RequestHeaderModifier != nil {
			modifyHeaders(up.Headers, f.RequestHeaderModifier)
		}
	case gwv1.GRPCRouteFilterResponseHeaderModifier:
		if f.ResponseHeaderModifier != nil {
			responseChanges(rh, f.ResponseHeaderModifier)
		}
	case gwv1.GRPCRouteFilterRequestMirror:
		if f.RequestMirror != nil {
			ix.mirror(o, f.RequestMirror, mirrors)
		}
	case gwv1.GRPCRouteFilterExtensionRef:
		o.Notes = append(o.Notes, extensionRefNote(f.ExtensionRef))
	default:
		o.Notes = append(o.Notes, fmt.Sprintf("filter %s is not modelled", f.Type))
	}
}

// rewritePath applies a path modifier to path, matched by entry e:
// ReplaceFullPath replaces it, ReplacePrefixMatch replaces the matched
// PathPrefix (on segment boundaries) and keeps the rest.
func rewritePath(path string, m *gwv1.HTTPPathModifier, e *entry) string {
	switch m.Type {
	case gwv1.FullPathHTTPPathModifier:
		if m.ReplaceFullPath != nil {
			return *m.ReplaceFullPath
		}
	case gwv1.PrefixMatchHTTPPathModifier:
		if m.ReplacePrefixMatch == nil || e.m.PathType != gwv1.PathMatchPathPrefix {
			return path
		}
		rest := strings.TrimPrefix(path, prefixKey(e.m.Path))
		repl := strings.TrimRight(*m.ReplacePrefixMatch, "/")
		out := repl + rest
		if out == "" {
			return "/"
		}
		if !strings.HasPrefix(out, "/") {
			out = "/" + out
		}
		return out
	}
	return path
}

// redirect answers the request with a RequestRedirect: the scheme,
// hostname and path given or the request's; the port given, else the
// scheme's well-known port when the scheme is given, else the listener's;
// a default port (80 for http, 443 for https) is left out of Location.
func (ix *Index) redirect(o *Outcome, f *gwv1.HTTPRequestRedirectFilter, e *entry, req *Request) {
	scheme := req.Scheme
	host := req.Host
	port := o.listenPort()
	if f.Scheme != nil && *f.Scheme != "" {
		scheme = strings.ToLower(*f.Scheme)
		if p, ok := defaultPorts[scheme]; ok {
			port = p
		}
	}
	if f.Hostname != nil {
		host = string(*f.Hostname)
	}
	if f.Port != nil {
		port = int32(*f.Port)
	}
	path := pathOnly(req.Path)
	if f.Path != nil {
		path = rewritePath(path, f.Path, e)
	}
	loc := scheme + "://" + hostPort(scheme, host, port) + path
	if req.Query != "" {
		loc += "?" + req.Query
	}
	o.Result, o.Location, o.Status = ResultRedirected, loc, 302
	if f.StatusCode != nil {
		o.Status = *f.StatusCode
	}
	o.Reason = "RequestRedirect filter (" + strconv.Itoa(o.Status) + ")"
}

// listenPort is the port the request came in on: its listener's, or for
// a mesh request the Service's.
func (o *Outcome) listenPort() int32 {
	if o.mesh != nil {
		return o.mesh.port
	}
	return o.listener.port
}

// describeRule names a route rule as namespace/name rule section.
func describeRule(r topology.Ref) string {
	return r.Namespace + "/" + r.Name + " rule " + r.SectionName
}

// percent writes part of whole as a percentage, with one decimal when it
// is not whole.
func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	if part*100%whole == 0 {
		return fmt.Sprintf("%d%%", part*100/whole)
	}
	return fmt.Sprintf("%.1f%%", float64(part)*100/float64(whole))
}

// l4Noun names what a connection request carries: a connection (tcp://,
// or a request a waypoint proxies as TCP) or datagrams (udp://).
func l4Noun(req *Request) string {
	if req.Scheme == "udp" {
		return "datagram"
	}
	return "connection"
}

// l4Refused says what happens to what l4Noun names when no backend takes
// it.
func l4Refused(req *Request) string {
	if req.Scheme == "udp" {
		return "dropped"
	}
	return "rejected"
}
