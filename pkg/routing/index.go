package routing

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/delegation"
	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Index holds, per listener, the routes the topology attached to it,
// indexed by hostname and path, so that tracing a request looks its
// candidates up instead of scanning every route. Build it once per
// topology; it is read-only afterwards and safe for concurrent traces.
type Index struct {
	graph    *topology.Graph
	grants   *gatewayapi.Grants
	gateways map[topology.Ref]*gateway
	// order lists the Gateways by ref, for traces without --gateway.
	order    []*gateway
	services map[topology.Ref]*service
	// entries are Istio's ServiceEntries, as services with hosts, by
	// ref: what mesh requests to their hosts reach.
	entries []*service
	// entryOf is entries by ref.
	entryOf map[topology.Ref]*service
	routes  map[topology.Ref]*route
	// dryRun are the Istio AuthorizationPolicies marked istio.io/dry-run:
	// Istio evaluates them without enforcing them.
	dryRun map[topology.Ref]bool
	// problems found while indexing (a delegation expanding too far).
	problems []diag.Problem
	// reachedBy memoises reachedBy.
	reached map[*route][]string
	// objs and namespace are what Build was given; mesh the waypoint
	// bindings read from them on the first mesh trace (meshBindings).
	objs      []*unstructured.Unstructured
	namespace string
	meshOnce  sync.Once
	mesh      *engine.MeshBindings
	// delegationKinds says which delegation forms each implementation
	// follows (nil: every form, under every Gateway; see Options).
	delegationKinds func(controller string) ([]topology.GroupKind, bool)
}

type gateway struct {
	ref topology.Ref
	// istio: Istio programs the Gateway (its class's controller is
	// Istio's, or, the class unknown, it is Istio's default class).
	istio bool
	// controller is its GatewayClass's controllerName, when classKnown
	// (the class is among the objects): policy kinds that name the
	// controllers they serve (policy.Kind.Controllers) do not act
	// through the Gateways of other controllers.
	controller string
	classKnown bool
	// path is the Gateway's path from its root: its GatewayClass when the
	// class is among the objects.
	path []topology.Ref
	// listeners are the Gateway's own, in spec order, then those of the
	// ListenerSets it admits, oldest ListenerSet first (GEP-1713).
	listeners []*listener
}

type listener struct {
	ref     topology.Ref // the listener's section of its Gateway or ListenerSet
	gateway *gateway
	// set is the ListenerSet holding the listener (zero for the Gateway's).
	set      topology.Ref
	port     int32
	protocol gwv1.ProtocolType
	hostname string // "" when none
	http     *table
	grpc     *table
	tls      *table
	// l4 are the TCPRoutes (UDPRoutes) attached to a TCP (UDP) listener,
	// oldest first, then by namespace/name: the first takes its
	// connections (routeL4).
	l4 []*route
	// routes are the routes attached to the listener, by ref.
	routes []*route
	// refused are routes whose parentRefs name the listener's Gateway or
	// ListenerSet but that the topology did not attach here, by ref.
	refused []*route
	// kindConflict are routes the topology attached here that the listener
	// does not accept, because a route of the other kind (HTTPRoute,
	// GRPCRoute) with an intersecting hostname is older: the route, and
	// the route it yields to.
	kindConflict map[*route]*route
}

// table indexes the matches of one route kind on a listener by the
// route hostname they answer for.
type table struct {
	exact    map[string]*hostGroup // route hostname, exact
	wildcard map[string]*hostGroup // route hostname "*.x": key ".x"
	any      *hostGroup            // routes without hostnames
}

// hostGroup indexes matches by path (HTTP) or service (gRPC).
type hostGroup struct {
	exactPath  map[string][]*entry
	prefixPath map[string][]*entry // key: the prefix without trailing "/" ("" for "/")
	regexPath  []*entry
	service    map[string][]*entry // gRPC Exact service
	otherGRPC  []*entry            // gRPC matches without an exact service
	all        []*entry            // TLSRoutes: no match beyond the host
}

type service struct {
	ref   topology.Ref
	ports map[int32]string // port -> section name
	// meshPorts are the ports as mesh tracing reads them: name,
	// appProtocol and protocol (TCP, UDP, ...), by port.
	meshPorts map[int32]servicePort
	// hosts are, for an Istio ServiceEntry, its spec.hosts (lower case):
	// the names a mesh request reaches it by; nil for a Service.
	hosts []string
	// se is, for an Istio ServiceEntry, what decides whether ztunnel
	// captures its hosts' connections; nil for a Service.
	se *seFacts
}

// servicePort is one port of a Service, or of a ServiceEntry (istio:
// its protocol is Istio's name, HTTP, TCP, ..., as written).
type servicePort struct {
	name, appProtocol, protocol string
	istio                       bool
}

// serviceEntry is the GroupKind of Istio's ServiceEntry.
var serviceEntry = topology.KindServiceEntry

// route is a route of any handled kind, decoded.
type route struct {
	ref       topology.Ref
	created   time.Time
	hostnames []string
	parents   []gwv1.ParentReference
	rules     []*rule
	// inheritMatcher: as a delegated child, the route's matches extend its
	// parent's (kgateway's delegation.kgateway.dev/inherit-parent-matcher,
	// Gloo Gateway's delegation.gateway.solo.io/inherit-parent-matcher).
	inheritMatcher delegation.Inheritance
}

// rule is one rule of a route, with the section name the topology gives it.
type rule struct {
	route *route
	index int
	name  string
	http  *gwv1.HTTPRouteRule
	grpc  *gwv1.GRPCRouteRule
	tls   *gwv1.TLSRouteRule
	// l4 is set for a TCPRoute's or UDPRoute's rule: its backendRefs.
	l4 *l4Rule
	// entries are the rule's compiled matches, shared by every listener
	// the route is attached to.
	entries []*entry
	// expanded are, for a rule delegating to child routes, the entries
	// standing in its place (entriesOf), computed once.
	expanded []*entry
	// matches are an HTTPRoute rule's matches as written (nil when it has
	// none), as a delegated child's are judged, computed with entries.
	matches []delegation.Match
}

// l4Rule is a TCPRoute or UDPRoute rule: backends, no matches.
type l4Rule struct {
	backendRefs []gwv1.BackendRef
}

// entry is one match of one rule (a rule without matches has one entry
// matching everything), compiled.
type entry struct {
	rule  *rule
	match int // index in the rule's matches; -1 when it has none
	// m is the HTTP match as requests are matched against it
	// (delegation.RequestMatch; delegation.Default for a rule without
	// matches); of a gRPC match, its header matches only.
	m      delegation.Match
	pathRe *regexp.Regexp
	// valueRe are m's RegularExpression value matches compiled; nil when
	// it has none (a pointer: entries are copied per delegation path).
	valueRe *valueRes
	// gRPC
	service, methodName string
	grpcRe              [2]*regexp.Regexp // service, method (RegularExpression)
	// err says why the match cannot match (an invalid regular expression).
	err string
	// via are the rules that delegated to this entry's route (kgateway
	// route delegation), outermost first; nil for a route's own entry.
	via []*rule
}

// Build indexes objs (Gateways, ListenerSets and XListenerSets, HTTPRoutes, GRPCRoutes,
// TLSRoutes, TCPRoutes, UDPRoutes, Services) over graph, the hierarchy the engine built from the
// same objects: a route is attached to a listener exactly when the graph
// links them, and grants are the ReferenceGrants the graph's backend links
// used. Objects that do not decode are reported and left out (the engine
// reports them too). namespace is given to namespaced objects that name
// none, as the engine does.
func Build(objs []*unstructured.Unstructured, graph *topology.Graph, grants *gatewayapi.Grants, namespace string) (*Index, []diag.Problem) {
	return BuildWith(objs, graph, grants, namespace, Options{})
}

// Options are the optional inputs of BuildWith.
type Options struct {
	// DisableProfiles is engine.Options.DisableProfiles of the
	// computation that built the graph: route delegation is then followed
	// under every Gateway, as the graph links it, not only under those of
	// the implementations that read its form (profiles.DelegationKinds).
	DisableProfiles bool
}

// BuildWith is Build with options.
func BuildWith(objs []*unstructured.Unstructured, graph *topology.Graph, grants *gatewayapi.Grants, namespace string, opts Options) (*Index, []diag.Problem) {
	ix := &Index{graph: graph, grants: grants, gateways: map[topology.Ref]*gateway{},
		services: map[topology.Ref]*service{}, entryOf: map[topology.Ref]*service{}, routes: map[topology.Ref]*route{}, objs: objs, namespace: namespace}
	if !opts.DisableProfiles {
		ix.delegationKinds = profiles.DelegationKinds
	}
	var problems []diag.Problem
	type lsObj struct {
		ref     topology.Ref
		created time.Time
		spec    []gwv1.ListenerEntry
	}
	var (
		gws     []*gwv1.Gateway
		sets    []lsObj
		classes = map[string]string{} // GatewayClass name -> controllerName
		// aliases: a controller name Envoy Gateway's configuration gives
		// -> the default name its profiles know it by.
		aliases = map[string]string{}
	)
	ix.dryRun = map[topology.Ref]bool{}
	for _, u := range objs {
		if u == nil || u.Object == nil {
			continue
		}
		gvk := u.GroupVersionKind()
		gk := topology.GroupKind{Group: gvk.Group, Kind: gvk.Kind}
		ref := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		if ref.Namespace == "" && !topology.ClusterScoped(gk) {
			ref.Namespace = namespace
		}
		decode := func(into any) bool {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
				problems = append(problems, diag.Newf(ref, "", "cannot decode the object for request tracing (%v); it is left out", err))
				return false
			}
			return true
		}
		if name := profiles.ControllerName(u); name != "" {
			aliases[name] = profiles.EnvoyGatewayController
		}
		switch gk {
		case topology.KindGatewayClass:
			c, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName")
			classes[u.GetName()] = c
		case authorizationPolicy:
			if u.GetAnnotations()[istioDryRun] == "true" {
				ix.dryRun[ref] = true
			}
		case topology.KindGateway:
			var g gwv1.Gateway
			if decode(&g) {
				g.Namespace = ref.Namespace
				gws = append(gws, &g)
			}
		case topology.KindListenerSet, topology.KindXListenerSet:
			// An XListenerSet's listeners have a ListenerSet's shape.
			var ls gwv1.ListenerSet
			if decode(&ls) {
				sets = append(sets, lsObj{ref: ref, created: ls.CreationTimestamp.Time, spec: ls.Spec.Listeners})
			}
		case topology.KindService:
			var s struct {
				Spec struct {
					Ports []struct {
						Name        string  `json:"name,omitempty"`
						Port        int32   `json:"port"`
						AppProtocol *string `json:"appProtocol,omitempty"`
						Protocol    string  `json:"protocol,omitempty"`
					} `json:"ports,omitempty"`
				} `json:"spec"`
			}
			if decode(&s) {
				svc := &service{ref: ref, ports: map[int32]string{}, meshPorts: map[int32]servicePort{}}
				for _, p := range s.Spec.Ports {
					name := p.Name
					if name == "" {
						name = fmt.Sprint(p.Port)
					}
					svc.ports[p.Port] = name
					sp := servicePort{name: p.Name, protocol: p.Protocol}
					if p.AppProtocol != nil {
						sp.appProtocol = *p.AppProtocol
					}
					if _, dup := svc.meshPorts[p.Port]; !dup || sp.protocol != "UDP" {
						// A port number for TCP and UDP: the TCP one is the
						// one HTTP is sent to.
						svc.meshPorts[p.Port] = sp
					}
				}
				ix.services[ref] = svc
			}
		case topology.KindServiceEntry:
			// Its hosts and ports, for mesh traces; no sections (Istio's
			// targetRefs name no port).
			var se struct {
				Spec struct {
					Hosts     []string `json:"hosts,omitempty"`
					Addresses []string `json:"addresses,omitempty"`
					Ports     []struct {
						Number   int32  `json:"number"`
						Name     string `json:"name,omitempty"`
						Protocol string `json:"protocol,omitempty"`
					} `json:"ports,omitempty"`
					Location   string `json:"location,omitempty"`
					Resolution string `json:"resolution,omitempty"`
				} `json:"spec"`
			}
			if decode(&se) {
				svc := &service{ref: ref, ports: map[int32]string{}, meshPorts: map[int32]servicePort{},
					se: &seFacts{created: u.GetCreationTimestamp().Time, addresses: len(se.Spec.Addresses) > 0,
						resolution: strings.ToUpper(se.Spec.Resolution), internal: strings.EqualFold(se.Spec.Location, "MESH_INTERNAL"),
						noAllocate: strings.EqualFold(u.GetLabels()[autoallocateLabel], "false")}}
				if svc.se.resolution == "" {
					svc.se.resolution = "NONE"
				}
				for _, h := range se.Spec.Hosts {
					svc.hosts = append(svc.hosts, strings.ToLower(h))
				}
				for _, p := range se.Spec.Ports {
					if _, dup := svc.meshPorts[p.Number]; !dup {
						svc.meshPorts[p.Number] = servicePort{name: p.Name, protocol: p.Protocol, istio: true}
					}
				}
				ix.entries = append(ix.entries, svc)
				ix.entryOf[ref] = svc
			}
		case topology.KindHTTPRoute:
			var r gwv1.HTTPRoute
			if decode(&r) {
				rt := newRoute(ref, r.CreationTimestamp.Time, r.Spec.Hostnames, r.Spec.ParentRefs)
				rt.inheritMatcher = delegation.InheritanceOf(u.GetAnnotations())
				addRules(rt, r.Spec.Rules, func(x *gwv1.HTTPRouteRule) *gwv1.SectionName { return x.Name },
					func(ru *rule, x *gwv1.HTTPRouteRule) { ru.http = x })
				ix.routes[ref] = rt
			}
		case topology.KindGRPCRoute:
			var r gwv1.GRPCRoute
			if decode(&r) {
				rt := newRoute(ref, r.CreationTimestamp.Time, r.Spec.Hostnames, r.Spec.ParentRefs)
				addRules(rt, r.Spec.Rules, func(x *gwv1.GRPCRouteRule) *gwv1.SectionName { return x.Name },
					func(ru *rule, x *gwv1.GRPCRouteRule) { ru.grpc = x })
				ix.routes[ref] = rt
			}
		case topology.KindTLSRoute:
			var r gwv1.TLSRoute
			if decode(&r) {
				rt := newRoute(ref, r.CreationTimestamp.Time, r.Spec.Hostnames, r.Spec.ParentRefs)
				addRules(rt, r.Spec.Rules, func(x *gwv1.TLSRouteRule) *gwv1.SectionName { return x.Name },
					func(ru *rule, x *gwv1.TLSRouteRule) { ru.tls = x })
				ix.routes[ref] = rt
			}
		case topology.KindTCPRoute:
			// v1 and v1alpha2 have the same shape.
			var r gwv1.TCPRoute
			if decode(&r) {
				rt := newRoute(ref, r.CreationTimestamp.Time, nil, r.Spec.ParentRefs)
				addRules(rt, r.Spec.Rules, func(x *gwv1.TCPRouteRule) *gwv1.SectionName { return x.Name },
					func(ru *rule, x *gwv1.TCPRouteRule) { ru.l4 = &l4Rule{backendRefs: x.BackendRefs} })
				ix.routes[ref] = rt
			}
		case topology.KindUDPRoute:
			var r gwv1.UDPRoute
			if decode(&r) {
				rt := newRoute(ref, r.CreationTimestamp.Time, nil, r.Spec.ParentRefs)
				addRules(rt, r.Spec.Rules, func(x *gwv1.UDPRouteRule) *gwv1.SectionName { return x.Name },
					func(ru *rule, x *gwv1.UDPRouteRule) { ru.l4 = &l4Rule{backendRefs: x.BackendRefs} })
				ix.routes[ref] = rt
			}
		}
	}

	for _, g := range gws {
		ref := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: g.Namespace, Name: g.Name}
		if _, ok := graph.Lookup(ref); !ok {
			continue
		}
		gw := &gateway{ref: ref, path: []topology.Ref{ref}}
		if c, known := classes[string(g.Spec.GatewayClassName)]; known {
			gw.istio = c == istioController
			gw.controller, gw.classKnown = c, true
			if a, ok := aliases[c]; ok {
				gw.controller = a
			}
		} else {
			gw.istio = g.Spec.GatewayClassName == istioDefaultClass
		}
		class := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGatewayClass.Kind, Name: string(g.Spec.GatewayClassName)}
		if _, ok := graph.Lookup(class); ok {
			gw.path = []topology.Ref{class, ref}
		}
		for _, l := range g.Spec.Listeners {
			ix.addListener(gw, ref, topology.Ref{}, l.Name, l.Port, l.Protocol, l.Hostname)
		}
		ix.gateways[ref] = gw
		ix.order = append(ix.order, gw)
	}
	slices.SortFunc(ix.order, func(a, b *gateway) int { return a.ref.Compare(b.ref) })
	// ListenerSets' listeners come after the Gateway's, oldest set first,
	// then by namespace/name (GEP-1713's listener precedence).
	slices.SortFunc(sets, func(a, b lsObj) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return a.ref.Compare(b.ref)
	})
	for _, ls := range sets {
		id, ok := graph.Lookup(ls.ref)
		if !ok {
			continue
		}
		// Only a ListenerSet its Gateway admits hangs below it.
		for _, p := range graph.Node(id).Parents {
			gw := ix.gateways[graph.Node(p).Ref]
			if gw == nil {
				continue
			}
			for _, l := range ls.spec {
				ix.addListener(gw, ls.ref, ls.ref, l.Name, l.Port, l.Protocol, l.Hostname)
			}
		}
	}
	slices.SortFunc(ix.entries, func(a, b *service) int { return a.ref.Compare(b.ref) })
	ix.attach()
	// Mesh routes hang below Services, not listeners: compile their
	// rules now, so that traces only read the index.
	for _, r := range ix.routes {
		for _, p := range r.parents {
			if gk := gatewayapi.ParentOf(r.ref.Namespace, p).GroupKind(); gk == topology.KindService || gk == serviceEntry {
				for _, ru := range r.rules {
					ru.compile()
				}
				break
			}
		}
	}
	return ix, append(problems, ix.problems...)
}

// addRules adds the rules of a route of any kind, named as the engine
// names them (gatewayapi.RuleSections); name reads a rule's name and set
// stores the typed rule in the index's rule.
func addRules[R any](rt *route, rules []R, name func(*R) *gwv1.SectionName, set func(*rule, *R)) {
	names := make([]*gwv1.SectionName, len(rules))
	for i := range rules {
		names[i] = name(&rules[i])
	}
	sections, _ := gatewayapi.RuleSections(names)
	for i := range rules {
		if sections[i] != "" {
			ru := &rule{route: rt, index: i, name: sections[i]}
			set(ru, &rules[i])
			rt.rules = append(rt.rules, ru)
		}
	}
}

func newRoute(ref topology.Ref, created time.Time, hostnames []gwv1.Hostname, parents []gwv1.ParentReference) *route {
	r := &route{ref: ref, created: created, parents: parents}
	for _, h := range hostnames {
		r.hostnames = append(r.hostnames, strings.ToLower(string(h)))
	}
	return r
}

func (ix *Index) addListener(gw *gateway, owner, set topology.Ref, name gwv1.SectionName, port gwv1.PortNumber, proto gwv1.ProtocolType, host *gwv1.Hostname) {
	ref := owner.WithSection(string(name))
	if _, ok := ix.graph.Lookup(ref); !ok || name == "" {
		return
	}
	for _, l := range gw.listeners {
		if l.ref == ref {
			return // a duplicate name: the topology ignores it too
		}
	}
	l := &listener{ref: ref, gateway: gw, set: set, port: int32(port), protocol: proto}
	if host != nil {
		l.hostname = strings.ToLower(string(*host))
	}
	gw.listeners = append(gw.listeners, l)
}

// attach fills each listener's tables from the graph's listener -> route
// edges, and its refused routes from the routes' parentRefs.
func (ix *Index) attach() {
	byParent := map[topology.Ref][]*route{}
	for _, r := range ix.routes {
		for _, p := range r.parents {
			byParent[gatewayapi.ParentOf(r.ref.Namespace, p)] = append(byParent[gatewayapi.ParentOf(r.ref.Namespace, p)], r)
		}
	}
	for _, gw := range ix.order {
		for _, l := range gw.listeners {
			id, _ := ix.graph.Lookup(l.ref)
			attached := map[topology.Ref]bool{}
			for _, c := range ix.graph.Node(id).Children {
				r := ix.routes[ix.graph.Node(c).Ref]
				if r == nil || attached[r.ref] {
					continue
				}
				attached[r.ref] = true
				l.routes = append(l.routes, r)
			}
			l.resolveKindConflicts()
			for _, r := range l.routes {
				if l.kindConflict[r] == nil {
					ix.addRoute(l, r)
				}
			}
			owner := l.ref.Object()
			for _, r := range byParent[owner] {
				if !attached[r.ref] && !slices.Contains(l.refused, r) {
					l.refused = append(l.refused, r)
				}
			}
			slices.SortFunc(l.routes, func(a, b *route) int { return a.ref.Compare(b.ref) })
			slices.SortFunc(l.refused, func(a, b *route) int { return a.ref.Compare(b.ref) })
			slices.SortFunc(l.l4, olderRoute)
		}
	}
}

// resolveKindConflicts applies the GRPCRoute API's rule to the routes
// attached to l: when an HTTPRoute and a GRPCRoute on one listener have
// intersecting hostnames, exactly one of the two is accepted, the oldest
// (then the first by {namespace}/{name}). Routes are taken in that order,
// each accepted unless it intersects an accepted route of the other kind.
func (l *listener) resolveKindConflicts() {
	var cands []*route
	nHTTP, nGRPC := 0, 0
	for _, r := range l.routes {
		switch r.ref.GroupKind() {
		case topology.KindGRPCRoute:
			nGRPC++
			cands = append(cands, r)
		case topology.KindHTTPRoute:
			nHTTP++
			cands = append(cands, r)
		}
	}
	if nHTTP == 0 || nGRPC == 0 {
		return // one kind only: nothing to resolve
	}
	slices.SortFunc(cands, olderRoute)
	// accepted holds the accepted routes by kind: a route is compared with
	// those of the other kind only.
	accepted := map[topology.GroupKind][]*route{}
	for _, r := range cands {
		other := topology.KindHTTPRoute
		if r.ref.GroupKind() == topology.KindHTTPRoute {
			other = topology.KindGRPCRoute
		}
		var beaten *route
		for _, a := range accepted[other] {
			if l.hostnamesIntersect(a, r) {
				beaten = a
				break
			}
		}
		if beaten == nil {
			accepted[r.ref.GroupKind()] = append(accepted[r.ref.GroupKind()], r)
			continue
		}
		if l.kindConflict == nil {
			l.kindConflict = map[*route]*route{}
		}
		l.kindConflict[r] = beaten
	}
}

// olderRoute orders routes as the API breaks conflicts between them: the
// oldest first, then by {namespace}/{name} (then by kind).
func olderRoute(a, b *route) int {
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	if c := strings.Compare(a.ref.Namespace+"/"+a.ref.Name, b.ref.Namespace+"/"+b.ref.Name); c != 0 {
		return c
	}
	return a.ref.Compare(b.ref)
}

// hostnamesIntersect reports whether routes a and b, both attached to l,
// answer a common hostname on it: a route without hostnames answers every
// hostname the listener takes; route hostnames the listener's hostname
// does not match are ignored.
func (l *listener) hostnamesIntersect(a, b *route) bool {
	if len(a.hostnames) == 0 || len(b.hostnames) == 0 {
		return true
	}
	for _, ha := range a.hostnames {
		if l.hostname != "" && !gatewayapi.HostnameIntersects(l.hostname, ha) {
			continue
		}
		for _, hb := range b.hostnames {
			if l.hostname != "" && !gatewayapi.HostnameIntersects(l.hostname, hb) {
				continue
			}
			if gatewayapi.HostnameIntersects(ha, hb) {
				return true
			}
		}
	}
	return false
}

// addRoute indexes route r's matches on listener l under each of its
// hostnames that intersect the listener's (the others are ignored, as the
// API says).
func (ix *Index) addRoute(l *listener, r *route) {
	var t **table
	switch r.ref.GroupKind() {
	case topology.KindHTTPRoute:
		t = &l.http
	case topology.KindGRPCRoute:
		t = &l.grpc
	case topology.KindTLSRoute:
		t = &l.tls
	case topology.KindTCPRoute, topology.KindUDPRoute:
		// A TCPRoute on a TLS listener (terminated: Envoy Gateway) is
		// not traced: tls:// is no scheme here.
		if gk := r.ref.GroupKind(); (l.protocol == gwv1.TCPProtocolType && gk == topology.KindTCPRoute) ||
			(l.protocol == gwv1.UDPProtocolType && gk == topology.KindUDPRoute) {
			l.l4 = append(l.l4, r)
		}
		return
	default:
		return
	}
	if *t == nil {
		*t = &table{exact: map[string]*hostGroup{}, wildcard: map[string]*hostGroup{}}
	}
	var groups []*hostGroup
	if len(r.hostnames) == 0 {
		if (*t).any == nil {
			(*t).any = &hostGroup{}
		}
		groups = append(groups, (*t).any)
	}
	for _, h := range r.hostnames {
		if l.hostname != "" && !gatewayapi.HostnameIntersects(l.hostname, h) {
			continue
		}
		m, key := (*t).exact, h
		if strings.HasPrefix(h, "*.") {
			m, key = (*t).wildcard, h[1:]
		}
		g := m[key]
		if g == nil {
			g = &hostGroup{}
			m[key] = g
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, ru := range r.rules {
		entries := ix.entriesOf(ru)
		for _, e := range entries {
			for _, g := range groups {
				g.add(e)
			}
		}
	}
}

// maxDelegatedEntries bounds the matches one delegating rule expands to:
// each delegation path is a route of its own (kgateway clones a child per
// parent), so chains of routes delegating to several children multiply.
const maxDelegatedEntries = 4096

// entriesOf returns the entries a rule puts in a listener's tables: its
// own matches, or for a rule delegating to child HTTPRoutes (kgateway),
// the matches of the children's rules that its matches admit, through
// every level of delegation, computed once for every listener. kgateway
// programs no route of its own for a delegating rule.
func (ix *Index) entriesOf(ru *rule) []*entry {
	ru.compile()
	if !ix.delegates(ru) {
		return ru.entries
	}
	if ru.expanded == nil {
		b := expansion{left: maxDelegatedEntries}
		parents := ru.matches
		if parents == nil {
			parents = []delegation.Match{delegation.Default}
		}
		ru.expanded = ix.expand(ru, parents, []*route{ru.route}, &b)
		if b.cut {
			ix.problems = append(ix.problems, diag.Newf(ru.route.ref, fmt.Sprintf("spec.rules[%d]", ru.index),
				"the routes this rule delegates to reach more than %d matches through all their delegation paths; request tracing keeps the first %d", maxDelegatedEntries, maxDelegatedEntries))
		}
		if ru.expanded == nil {
			ru.expanded = []*entry{}
		}
	}
	return ru.expanded
}

// expansion is what is left of the bound on the matches a delegating
// rule expands to: left, and whether some were left out (cut).
type expansion struct {
	left int
	cut  bool
}

// take is how many of n matches fit, which it counts.
func (b *expansion) take(n int) int {
	k := min(n, b.left)
	b.left -= k
	b.cut = b.cut || k < n
	return k
}

// expand returns the entries of the children of delegating rule ru whose
// own matches are parents (its own, or what its parent kept of them):
// what package delegation keeps of each child rule's matches below them
// (admitted, or joined for a child with InheritParentMatcher; the joins it
// does not model are left out, as the engine reports), and for a child
// rule delegating in turn, its children's below those, each entry naming
// the delegating rules on its way (via). seen holds the routes on the way
// (cycles); b the matches left: a child rule delegates with no more (joined
// matches multiply), and no more entries are returned.
func (ix *Index) expand(ru *rule, parents []delegation.Match, seen []*route, b *expansion) []*entry {
	id, ok := ix.graph.Lookup(ru.route.ref.WithSection(ru.name))
	if !ok || len(parents) == 0 {
		return nil // below no match, no child match is kept
	}
	var out []*entry
	var buf [2]delegation.Admitted
	admitted := buf[:0] // reused from one child rule to the next
	for _, c := range ix.graph.Node(id).Children {
		child := ix.routes[ix.graph.Node(c).Ref]
		if child == nil || slices.Contains(seen, child) {
			continue
		}
		for _, cr := range child.rules {
			cr.compile()
			ps := parents
			if child.inheritMatcher != delegation.NoInheritance {
				// Each parent match gives one joined match per match of
				// the rule (or one): no more are needed than fit.
				per := max(len(cr.matches), 1)
				if need := (b.left + per - 1) / per; len(ps) > need {
					ps, b.cut = ps[:need], true
				}
			}
			admitted = delegation.Admit(admitted[:0], ps, cr.matches, child.inheritMatcher)
			admitted = slices.DeleteFunc(admitted, func(a delegation.Admitted) bool { return a.Unmodelled })
			var entries []*entry
			if ix.delegates(cr) {
				// Its matches as kept: all of its own (most often), or
				// some, or joined.
				kept := cr.matches
				if child.inheritMatcher != delegation.NoInheritance || len(admitted) != len(cr.matches) {
					n := len(admitted)
					if n > b.left {
						n = b.left
						b.cut = true
					}
					kept = make([]delegation.Match, n)
					for i, a := range admitted[:n] {
						kept[i] = a.Match
					}
				}
				entries = ix.expand(cr, kept, append(seen, child), b)
			} else {
				n := b.take(len(admitted))
				entries = make([]*entry, 0, n)
				for _, a := range admitted[:n] {
					d := *cr.entries[max(a.Child, 0)]
					if child.inheritMatcher != delegation.NoInheritance {
						d.setMatch(a.Match) // joined to the parent's
					}
					entries = append(entries, &d)
				}
			}
			for _, e := range entries {
				d := *e
				d.via = append([]*rule{ru}, e.via...)
				out = append(out, &d)
			}
			if b.cut && b.left == 0 {
				return out
			}
		}
	}
	return out
}

// delegates reports whether an HTTPRoute rule delegates to child routes:
// some backendRef of it names HTTPRoutes (kgateway, Gloo Gateway), in a
// form that the implementations of the Gateways its route is reached
// through follow (gatewayapi.DelegationFollowed, as the engine's topology
// links the children).
func (ix *Index) delegates(ru *rule) bool {
	if ru.http == nil {
		return false
	}
	for _, b := range ru.http.BackendRefs {
		gk := gatewayapi.BackendOf(ru.route.ref.Namespace, b.BackendObjectReference).GroupKind()
		if gatewayapi.Delegates(ru.route.ref.GroupKind(), gk) && gatewayapi.DelegationFollowed(ix.reachedBy(ru.route), gk, ix.delegationKinds) {
			return true
		}
	}
	return false
}

// reachedBy are the controllers of the GatewayClasses of the Gateways
// route r is reached through in the graph ("" for a class not among the
// objects): those whose listeners (or whose ListenerSets' listeners) it
// hangs below, and those of the routes whose rules delegate to it, sorted.
func (ix *Index) reachedBy(r *route) []string {
	if got, ok := ix.reached[r]; ok {
		return got
	}
	if ix.reached == nil {
		ix.reached = map[*route][]string{}
	}
	ix.reached[r] = nil // a cycle adds nothing
	id, ok := ix.graph.Lookup(r.ref)
	if !ok {
		return nil
	}
	var out []string
	addGw := func(gw topology.Ref) {
		if g := ix.gateways[gw]; g != nil {
			c := ""
			if g.classKnown {
				c = g.controller
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	for _, p := range ix.graph.Node(id).Parents {
		ref := ix.graph.Node(p).Ref
		gk := ref.GroupKind()
		switch {
		case ref.IsSection() && gk == topology.KindGateway:
			addGw(ref.Object())
		case ref.IsSection() && topology.IsListenerSet(gk):
			if ls, ok := ix.graph.Lookup(ref.Object()); ok {
				for _, gp := range ix.graph.Node(ls).Parents {
					addGw(ix.graph.Node(gp).Ref)
				}
			}
		case ref.IsSection() && gk == topology.KindHTTPRoute:
			if parent := ix.routes[ref.Object()]; parent != nil {
				for _, c := range ix.reachedBy(parent) {
					if !slices.Contains(out, c) {
						out = append(out, c)
					}
				}
			}
		}
	}
	slices.Sort(out)
	ix.reached[r] = out
	return out
}

// InheritParentMatcher is delegation.InheritParentMatcher, the annotation
// of a delegated HTTPRoute making its matches extend its parent rule's.
const InheritParentMatcher = delegation.InheritParentMatcher

func (g *hostGroup) add(e *entry) {
	ru := e.rule
	switch {
	case ru.tls != nil:
		g.all = append(g.all, e)
	case ru.grpc != nil:
		if e.service != "" && e.grpcRe[0] == nil {
			if g.service == nil {
				g.service = map[string][]*entry{}
			}
			g.service[e.service] = append(g.service[e.service], e)
		} else {
			g.otherGRPC = append(g.otherGRPC, e)
		}
	default:
		switch e.m.PathType {
		case gwv1.PathMatchExact:
			if g.exactPath == nil {
				g.exactPath = map[string][]*entry{}
			}
			g.exactPath[e.m.Path] = append(g.exactPath[e.m.Path], e)
		case gwv1.PathMatchPathPrefix:
			if g.prefixPath == nil {
				g.prefixPath = map[string][]*entry{}
			}
			k := prefixKey(e.m.Path)
			g.prefixPath[k] = append(g.prefixPath[k], e)
		default:
			g.regexPath = append(g.regexPath, e)
		}
	}
}

// prefixKey is a PathPrefix value without its trailing slashes: "/a/" and
// "/a" match the same paths, and "/" is "".
func prefixKey(v string) string { return strings.TrimRight(v, "/") }

// compile sets the rule's entries and matches, once.
func (ru *rule) compile() {
	if ru.entries == nil {
		ru.entries = compile(ru)
	}
}

// compile returns the entries of a rule: one per match, defaults applied
// (PathPrefix "/", Exact header and query matches); it sets an HTTP
// rule's matches.
func compile(ru *rule) []*entry {
	switch {
	case ru.tls != nil, ru.l4 != nil:
		return []*entry{{rule: ru, match: -1}}
	case ru.grpc != nil:
		if len(ru.grpc.Matches) == 0 {
			return []*entry{{rule: ru, match: -1}}
		}
		out := make([]*entry, 0, len(ru.grpc.Matches))
		for i := range ru.grpc.Matches {
			m := &ru.grpc.Matches[i]
			e := &entry{rule: ru, match: i}
			if mm := m.Method; mm != nil {
				if mm.Service != nil {
					e.service = *mm.Service
				}
				if mm.Method != nil {
					e.methodName = *mm.Method
				}
				if mm.Type != nil && *mm.Type == gwv1.GRPCMethodMatchRegularExpression {
					for j, v := range []string{e.service, e.methodName} {
						if v != "" {
							e.grpcRe[j] = e.regexp(v)
						}
					}
				}
			}
			for _, h := range m.Headers {
				regex := h.Type != nil && *h.Type == gwv1.GRPCHeaderMatchRegularExpression
				e.m.Headers = append(e.m.Headers, delegation.Value{Name: strings.ToLower(string(h.Name)), Value: h.Value, Regex: regex})
			}
			e.compileValues()
			out = append(out, e)
		}
		return out
	}
	ms := delegation.Matches(ru.http.Matches)
	ru.matches = ms
	if ms == nil {
		return []*entry{{rule: ru, match: -1, m: delegation.Default}}
	}
	out := make([]*entry, len(ms))
	for i, m := range ms {
		e := &entry{rule: ru, match: i}
		e.setMatch(m)
		out[i] = e
	}
	return out
}

// setMatch makes HTTP match m (as written, defaults applied) the entry's,
// as requests are matched against it (delegation.RequestMatch), and
// compiles it.
func (e *entry) setMatch(m delegation.Match) {
	e.m, e.pathRe, e.err = delegation.RequestMatch(m), nil, ""
	switch m.PathType {
	case gwv1.PathMatchExact, gwv1.PathMatchPathPrefix:
	case gwv1.PathMatchRegularExpression:
		e.pathRe = e.regexp(m.Path)
	default:
		e.err = fmt.Sprintf("unknown path match type %q", m.PathType)
	}
	e.compileValues()
}

// valueRes are the compiled RegularExpression header and query parameter
// matches of an entry, by position (nil for an Exact one).
type valueRes struct {
	headers, query []*regexp.Regexp
}

// compileValues compiles the entry's RegularExpression header and query
// parameter matches.
func (e *entry) compileValues() {
	h, q := e.compileAll(e.m.Headers), e.compileAll(e.m.Query)
	e.valueRe = nil
	if h != nil || q != nil {
		e.valueRe = &valueRes{h, q}
	}
}

func (e *entry) compileAll(vs []delegation.Value) []*regexp.Regexp {
	var out []*regexp.Regexp
	for i, v := range vs {
		if v.Regex {
			if out == nil {
				out = make([]*regexp.Regexp, len(vs))
			}
			out[i] = e.regexp(v.Value)
		}
	}
	return out
}

// regexp compiles a RegularExpression match value with Go's regexp (RE2
// syntax), anchored: the value must match whole. A value that does not
// compile makes the entry match nothing, and says why.
func (e *entry) regexp(v string) *regexp.Regexp {
	re, err := regexp.Compile("^(?:" + v + ")$")
	if err != nil {
		e.err = fmt.Sprintf("regular expression %q does not compile (%v)", v, err)
		return nil
	}
	return re
}

// ListenerPort returns the port and protocol of a Gateway's listener by
// name, or of its first listener when name is "": what a client of that
// Gateway's address uses.
func (ix *Index) ListenerPort(namespace, gatewayName, name string) (int32, gwv1.ProtocolType, error) {
	g := ix.gateways[topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: namespace, Name: gatewayName}]
	if g == nil {
		return 0, "", fmt.Errorf("Gateway %s/%s not found", namespace, gatewayName)
	}
	for _, l := range g.listeners {
		if name == "" || l.ref.SectionName == name {
			return l.port, l.protocol, nil
		}
	}
	return 0, "", fmt.Errorf("Gateway %s/%s has no listener %q", namespace, gatewayName, name)
}
