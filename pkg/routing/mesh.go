package routing

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// MeshTrace is what a mesh request is sent to (attache trace --mesh): the
// Service its host names and the port, and, when the Service is bound to
// no waypoint, why.
type MeshTrace struct {
	Service topology.Ref `json:"service"`
	Port    int32        `json:"port"`
	// PortName is the Service port's name, absent when it has none.
	PortName string `json:"portName,omitempty"`
	// Protocol is the port's protocol as Istio reads it (appProtocol, else
	// the port name's prefix: HTTP, HTTP2, GRPC, TCP, TLS, ...); absent when
	// they name none, and Istio detects HTTP on the connection.
	Protocol string `json:"protocol,omitempty"`
	// Unbound says why the Service is bound to no waypoint; the outcome
	// then names no Gateway.
	Unbound string `json:"unbound,omitempty"`
}

// WaypointUse is the part a waypoint takes in a Service's traffic.
type WaypointUse struct {
	// Role is primary (istio.io/use-waypoint) or canary
	// (istio.io/use-waypoint-canary).
	Role string `json:"role"`
	// Percent of the Service's connections ztunnel sends to it.
	Percent int `json:"percent"`
}

// Roles of a waypoint.
const (
	WaypointPrimary = "primary"
	WaypointCanary  = "canary"
)

// meshOutcome is what an outcome of a mesh trace keeps for its policies.
type meshOutcome struct {
	service topology.Ref
	port    int32
	// istio: the waypoint is one of Istio's (istiod programs it).
	istio bool
	// prefix is the number of levels of the outcome's Path above the
	// Service: the waypoint's class and the waypoint.
	prefix int
	// waypoint is the waypoint Gateway as indexed (nil when none).
	waypoint *gateway
	// l7: the waypoint processes the requests as HTTP.
	l7 bool
	// routed: a route took the request (the Service is then not its
	// backend as such).
	routed bool
}

// MeshHostError says that a mesh request's host names no Service among
// the objects, or a port that Service does not have.
type MeshHostError struct{ msg string }

// Error says what was looked for and what there is.
func (e *MeshHostError) Error() string { return e.msg }

// clusterDomain is the cluster DNS domain Istio names Services with
// (istiod's default domain suffix), for its ordering of routes.
const clusterDomain = "cluster.local"

// meshHost reads the Service a mesh host names, as a pod's DNS resolves
// it: NAME.NAMESPACE.svc.DOMAIN (the domain not checked),
// NAME.NAMESPACE.svc, NAME.NAMESPACE, or NAME in namespace ns (the
// client's own).
func meshHost(host, ns string) (name, namespace string, err error) {
	if net.ParseIP(host) != nil {
		return "", "", &MeshHostError{fmt.Sprintf("host %s is an IP address: a mesh request names a Service (NAME.NAMESPACE[.svc[.cluster.local]])", host)}
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	switch {
	case len(labels) == 1:
		return labels[0], ns, nil
	case len(labels) == 2:
		return labels[0], labels[1], nil
	case labels[2] == "svc":
		return labels[0], labels[1], nil
	}
	return "", "", &MeshHostError{fmt.Sprintf("host %s does not name a Service, nor is it a host of a ServiceEntry among the objects: write NAME.NAMESPACE, NAME.NAMESPACE.svc or NAME.NAMESPACE.svc.cluster.local (or NAME with -n)", host)}
}

// istioProtocol is a Service port's protocol as Istio reads it
// (istio/istio @ 86c9f01f pkg/config/kube/conversion.go ConvertProtocol,
// pkg/config/protocol Parse): UDP for a UDP port; else appProtocol, else
// the port's name, up to its first "-" (grpc-web whole), any case; the
// Kubernetes names kubernetes.io/h2c (HTTP2), kubernetes.io/ws (HTTP) and
// kubernetes.io/wss (HTTPS) as appProtocol; a name Istio does not know
// is TCP on ports 25, 53, 3306 and 27017, else "" (detected).
func istioProtocol(port int32, p servicePort) string {
	if p.protocol == "UDP" {
		return "UDP"
	}
	if p.istio {
		// A ServiceEntry's port names Istio's protocol itself, in any
		// case (protocol.Parse); an unknown one is left to detection.
		switch n := strings.ToLower(p.protocol); n {
		case "tcp", "udp", "grpc", "http", "http2", "https", "tls":
			return strings.ToUpper(n)
		case "grpc-web":
			return "GRPC-Web"
		case "http_proxy":
			return "HTTP_PROXY"
		case "mongo":
			return "Mongo"
		case "redis":
			return "Redis"
		case "mysql":
			return "MySQL"
		}
		return ""
	}
	name := p.name
	if p.appProtocol != "" {
		name = p.appProtocol
		switch name {
		case "kubernetes.io/h2c":
			return "HTTP2"
		case "kubernetes.io/ws":
			return "HTTP"
		case "kubernetes.io/wss":
			return "HTTPS"
		}
	}
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "grpc-web") {
		return "GRPC-Web"
	}
	if i := strings.IndexByte(name, '-'); i >= 0 {
		name = name[:i]
	}
	switch name {
	case "tcp", "udp", "grpc", "http", "http2", "https", "tls":
		return strings.ToUpper(name)
	case "http_proxy":
		return "HTTP_PROXY"
	case "mongo":
		return "Mongo"
	case "redis":
		return "Redis"
	case "mysql":
		return "MySQL"
	}
	switch port {
	case 25, 53, 3306, 27017:
		return "TCP"
	}
	return ""
}

// httpProtocol reports whether a waypoint processes a port of protocol p
// (istioProtocol) as HTTP: an HTTP protocol, or none (Istio detects the
// HTTP of the request).
func httpProtocol(p string) bool {
	switch p {
	case "", "HTTP", "HTTP2", "HTTP_PROXY", "GRPC", "GRPC-Web":
		return true
	}
	return false
}

// meshBindings are the waypoint bindings of the index's Services, read
// on the first mesh trace.
func (ix *Index) meshBindings() *engine.MeshBindings {
	ix.meshOnce.Do(func() { ix.mesh = engine.NewMeshBindings(ix.objs, ix.graph, ix.namespace) })
	return ix.mesh
}

// TraceMesh routes req as a pod of namespace ns sends it in an Istio
// ambient mesh: to the Service its URL's host names (meshHost), on the
// URL's port, through each waypoint the Service is bound to (its primary
// and its canary), which routes it by the HTTPRoutes and GRPCRoutes whose
// parentRefs name the Service (GAMMA). A Service bound to no waypoint
// gets one outcome naming no Gateway: its connections go to its endpoints
// as they are. The Host header (-H Host:) does not choose the Service.
func (ix *Index) TraceMesh(req *Request, ns string) (*RequestTrace, error) {
	if req.IsTLS() {
		return nil, fmt.Errorf("--mesh traces http:// and grpc:// requests: a waypoint does not terminate the TLS of an %s request, so it cannot route it", req.Scheme)
	}
	svc, note, uncaptured := ix.serviceEntryFor(req.SNI, ns)
	var name, namespace string
	if svc != nil {
		name, namespace = svc.ref.Name, svc.ref.Namespace
	} else {
		var err error
		if name, namespace, err = meshHost(req.SNI, ns); err != nil {
			return nil, err
		}
		ref := topology.Ref{Kind: topology.KindService.Kind, Namespace: namespace, Name: name}
		if svc = ix.services[ref]; svc == nil {
			return nil, &MeshHostError{fmt.Sprintf("host %s names Service %s/%s, which is not among the objects (%s)", req.SNI, namespace, name, ix.servicesOf(namespace))}
		}
	}
	ref := svc.ref
	sp, ok := svc.meshPorts[req.Port]
	if !ok {
		return nil, &MeshHostError{fmt.Sprintf("%s %s/%s has no port %d (its ports: %s); write the port in the URL", ref.Kind, namespace, name, req.Port, svc.portList())}
	}
	proto := istioProtocol(req.Port, sp)
	if req.Scheme == "udp" {
		return nil, &MeshHostError{fmt.Sprintf("a udp:// request: neither ztunnel nor a waypoint carries UDP (port %d of %s %s/%s)", req.Port, ref.Kind, namespace, name)}
	}
	if req.IsL4() && proto != "" && httpProtocol(proto) {
		return nil, &MeshHostError{fmt.Sprintf("port %d of %s %s/%s is %s: a waypoint parses its connections as HTTP, so trace a request on it as http:// or grpc://", req.Port, ref.Kind, namespace, name, proto)}
	}
	if proto == "UDP" {
		return nil, &MeshHostError{fmt.Sprintf("port %d of %s %s/%s is UDP, which neither ztunnel nor a waypoint carries as HTTP", req.Port, ref.Kind, namespace, name)}
	}
	t := &RequestTrace{APIVersion: APIVersion, Kind: Kind, Request: req, Outcomes: []Outcome{}, NotMatched: []NotMatched{}, dryRun: ix.dryRun,
		Mesh: &MeshTrace{Service: ref, Port: req.Port, PortName: sp.name, Protocol: proto}}
	b := ix.meshBindings().Of(ref)
	if uncaptured != "" {
		t.Mesh.Unbound = uncaptured
		ix.unboundOutcome(t, svc, req, "not captured: the connection goes to the address the client's DNS gives as it is, so no route and no L7 policy applies",
			"the ServiceEntry's host has no address: ztunnel sends its connections to no waypoint")
		return t, nil
	}
	if b.Waypoint.Name == "" {
		t.Mesh.Unbound = b.Unbound
		ix.unboundOutcome(t, svc, req, svc.words("no waypoint: ztunnel sends the connection to the Service's endpoints at L4, so no route and no L7 policy applies (sidecars are not modelled)"),
			svc.words("the Service is bound to no waypoint: no proxy applies its routes"))
		if note != "" {
			t.Outcomes[0].Notes = append(t.Outcomes[0].Notes, note)
		}
		return t, nil
	}
	defer func() {
		if note != "" {
			for i := range t.Outcomes {
				t.Outcomes[i].Notes = append(t.Outcomes[i].Notes, note)
			}
		}
	}()
	primary := 100
	if b.Canary.Name != "" {
		primary = 100 - b.CanaryPercent
	}
	ix.meshRoute(t, svc, proto, req, b.Waypoint, b.IstioWaypoint, WaypointUse{Role: WaypointPrimary, Percent: primary})
	if b.Canary.Name != "" {
		ix.meshRoute(t, svc, proto, req, b.Canary, b.CanaryIstio, WaypointUse{Role: WaypointCanary, Percent: b.CanaryPercent})
	}
	return t, nil
}

// servicesOf lists the Services of namespace ns, for messages.
func (ix *Index) servicesOf(ns string) string {
	var names []string
	for r := range ix.services {
		if r.Namespace == ns {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return "namespace " + ns + " has no Services among them"
	}
	slices.Sort(names)
	return "Services of namespace " + ns + ": " + strings.Join(names, ", ")
}

// portList lists the Service's ports, for messages.
func (s *service) portList() string {
	ports := make([]int, 0, len(s.meshPorts))
	for p := range s.meshPorts {
		ports = append(ports, int(p))
	}
	slices.Sort(ports)
	out := make([]string, len(ports))
	for i, p := range ports {
		out[i] = strconv.Itoa(p)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// servicePath is the path of a Service as a backend: the Service and its
// port's section.
func (ix *Index) servicePath(svc *service, port int32) []topology.Ref {
	p := []topology.Ref{svc.ref}
	if name, ok := svc.ports[port]; ok {
		p = append(p, svc.ref.WithSection(name))
	}
	return p
}

// toService makes outcome o a request forwarded to the Service itself,
// on the request's port.
func (ix *Index) toService(o *Outcome, svc *service, req *Request) {
	o.Result = ResultForwarded
	o.Backends = append(o.Backends, Backend{Ref: svc.ref, Port: req.Port, Weight: 1})
	o.Path = append(o.Path, ix.servicePath(svc, req.Port)[1:]...)
	if req.IsL4() {
		return // a connection: no request to pass on
	}
	up := &UpstreamRequest{Host: req.Host, Path: req.Path + queryOf(req), Headers: map[string]string{}}
	for k, v := range req.Headers {
		up.Headers[k] = v
	}
	o.UpstreamRequest = up
}

func queryOf(req *Request) string {
	if req.Query == "" {
		return ""
	}
	return "?" + req.Query
}

// unboundOutcome is the outcome of a request to a Service whose
// connections go through no waypoint (bound to none, or not captured by
// ztunnel): they go to the Service as they are, so no route and no L7
// policy applies (note says so); the routes naming the Service are
// listed as not taking it, for reason.
func (ix *Index) unboundOutcome(t *RequestTrace, svc *service, req *Request, note, reason string) {
	o := Outcome{EffectivePolicies: []EffectivePolicy{}, Path: []topology.Ref{svc.ref},
		mesh: &meshOutcome{service: svc.ref, port: req.Port}}
	ix.toService(&o, svc, req)
	o.Notes = append(o.Notes, note)
	t.Outcomes = append(t.Outcomes, o)
	for _, r := range ix.meshRoutesAt(svc, topology.Ref{}, false) {
		t.NotMatched = append(t.NotMatched, NotMatched{Service: refPtr(svc.ref), Route: r.ref, Reason: reason})
	}
}

func refPtr(r topology.Ref) *topology.Ref { return &r }

// meshGroup is, at one of Istio's waypoints, the routes istiod merges
// into one VirtualService for a Service: those of one namespace whose
// parentRefs name the Service with one port, or without one, by one host
// (a ServiceEntry's, parentHosts) (istio/istio
// @ 86c9f01f pilot/pkg/config/kube/gateway/route_collections.go
// HTTPRouteCollection: key namespace[/port]/host; mergeHTTPRoutes, which
// merges HTTPRoutes and GRPCRoutes alike, controller.go).
type meshGroup struct {
	ns      string
	port    int32 // 0: the parentRefs name no port
	created time.Time
	name    string // the merged VirtualService's name, for ties
	routes  []*route
	entries []*entry
}

// meshRoute routes req to Service svc (its port's protocol proto) at
// waypoint wp, and appends the outcome and the why-nots to t.
func (ix *Index) meshRoute(t *RequestTrace, svc *service, proto string, req *Request, wp topology.Ref, istio bool, use WaypointUse) {
	g := ix.gateways[wp]
	o := Outcome{Gateway: wp, Waypoint: &use, EffectivePolicies: []EffectivePolicy{},
		mesh: &meshOutcome{service: svc.ref, port: req.Port, istio: istio, waypoint: g, l7: httpProtocol(proto) && !req.IsL4()}}
	if g != nil {
		o.Path = append(o.Path, g.path...)
	} else {
		o.Path = append(o.Path, wp)
	}
	o.mesh.prefix = len(o.Path)
	o.Path = append(o.Path, svc.ref)
	if svc.se != nil && istio {
		if why := svc.se.waypointLacks(svc.meshName(), proto); why != "" {
			o.l4 = true // no HTTP answer either: the connection is reset
			o.Result, o.Reason = ResultError, why
			t.Outcomes = append(t.Outcomes, o)
			reason := "the waypoint does not serve the ServiceEntry's host on this port"
			if svc.se.internal {
				reason = "the waypoint does not serve the ServiceEntry at all"
			}
			for _, r := range ix.meshRoutesAt(svc, wp, istio) {
				t.NotMatched = append(t.NotMatched, NotMatched{Gateway: wp, Service: refPtr(svc.ref), Route: r.ref, Reason: reason})
			}
			return
		}
	}
	if !istio {
		o.Notes = append(o.Notes, fmt.Sprintf("Gateway %s is not one of Istio's waypoints (class istio-waypoint or of istio.io/mesh-controller): istiod does not program it, and its routing is traced by Gateway API's rules for mesh routes", nameOf(wp)))
	}
	if !o.mesh.l7 {
		what := fmt.Sprintf("port %d is %s", req.Port, proto)
		if proto == "" {
			what = fmt.Sprintf("the connection to port %d is not HTTP (the port's protocol is detected)", req.Port)
		}
		o.l4 = true // proxied as TCP: no HTTP answer
		var best *route
		why := map[*route]string{}
		if istio {
			best, why = ix.meshL4Route(svc, req, wp)
		}
		if best != nil {
			e := best.rules[0].entries
			if e == nil {
				e = compile(best.rules[0])
			}
			o.winner = &candidate{e: e[0]}
			o.mesh.routed = true
			ix.apply(&o, e[0], req)
			o.Notes = append(o.Notes, svc.words(fmt.Sprintf("%s: the waypoint proxies its connections as TCP, by %s %s (istiod: the first TLSRoute, else the first TCPRoute, naming the Service on that port), and AuthorizationPolicies apply their TCP rules only (not decided here)", what, best.ref.Kind, nameOf(best.ref))))
		} else {
			ix.toService(&o, svc, req)
			tail := svc.words("no TCPRoute or TLSRoute of the Service applies on that port")
			if !istio {
				tail = "TCPRoutes and TLSRoutes at another implementation's waypoint are not traced"
			}
			o.Notes = append(o.Notes, svc.words(fmt.Sprintf("%s: the waypoint proxies its connections as TCP to the Service (%s), so HTTPRoutes and GRPCRoutes do not apply, and AuthorizationPolicies apply their TCP rules only (not decided here)", what, tail)))
		}
		t.Outcomes = append(t.Outcomes, o)
		for _, r := range ix.meshRoutesAt(svc, wp, istio) {
			if r == best {
				continue
			}
			reason, ok := why[r]
			switch gk := r.ref.GroupKind(); {
			case ok:
			case gk == topology.KindUDPRoute:
				reason = "kind: a UDPRoute does not apply in the mesh: neither ztunnel nor a waypoint carries UDP"
			case gk == topology.KindTCPRoute || gk == topology.KindTLSRoute:
				reason = fmt.Sprintf("a %s at another implementation's waypoint is not traced", r.ref.Kind)
			default:
				reason = fmt.Sprintf("%s: the waypoint does not route its connections as HTTP", what)
			}
			t.NotMatched = append(t.NotMatched, NotMatched{Gateway: wp, Service: refPtr(svc.ref), Route: r.ref, Reason: reason})
		}
		return
	}
	query, _ := url.ParseQuery(req.Query)
	groups, why := ix.meshCandidates(svc, req, wp, istio)
	var best *candidate
	var order []*entry // Istio's order, when istio
	for _, mg := range groups {
		order = append(order, mg.entries...)
	}
	if istio {
		for _, e := range order {
			if m, _ := e.mismatch(req, query); m == "" {
				best = &candidate{e: e}
				break
			}
		}
	} else {
		for _, e := range order {
			if m, _ := e.mismatch(req, query); m == "" {
				if c := (candidate{e: e}); best == nil || better(c, *best) {
					best = &c
				}
			}
		}
	}
	switch {
	case len(order) == 0:
		// istiod's default route at the waypoint (no VirtualService for
		// the port): to the Service itself.
		ix.toService(&o, svc, req)
		o.Notes = append(o.Notes, svc.words(fmt.Sprintf("no route of the Service applies on port %d: the waypoint sends the request to the Service's endpoints", req.Port)))
	case best == nil:
		o.Result, o.Status, o.Reason = ResultNotFound, 404, svc.words("no route of the Service matches (the waypoint answers 404)")
	default:
		o.winner = best
		o.mesh.routed = true
		ix.apply(&o, best.e, req)
	}
	t.Outcomes = append(t.Outcomes, o)
	// Why not, per route of the Service.
	taken := map[*route]bool{}
	for _, mg := range groups {
		for _, r := range mg.routes {
			taken[r] = true
		}
	}
	verb := "takes precedence"
	if istio {
		verb = "comes first at the waypoint (Istio's order)"
	}
	for _, r := range ix.meshRoutesAt(svc, wp, istio) {
		if best != nil && r == best.e.rule.route {
			continue
		}
		reason, ok := why[r]
		if !ok && taken[r] {
			reason = r.closestMiss(req, query, best, verb)
		}
		if reason == "" {
			continue
		}
		t.NotMatched = append(t.NotMatched, NotMatched{Gateway: wp, Service: refPtr(svc.ref), Route: r.ref, Reason: reason})
	}
}

// meshCandidates are the route entries that may take req to Service svc
// at waypoint wp, in the order they are tried, and why each other route
// naming the Service does not take part.
//
// At one of Istio's waypoints (istio): the HTTPRoutes and GRPCRoutes with
// a parentRef reaching the Service (naming it, or a ServiceEntry or
// Service whose hosts overlap its name: parentHosts) without a port or
// with the request's, of the Service's namespace or the waypoint's
// (getVirtualServiceForWaypoint in
// pilot/pkg/networking/core/listener_waypoint.go), grouped as istiod
// merges them (meshGroup); groups by creation time of their oldest route
// (then name, namespace: sortMergedVirtualServicesByCreationTime); in a
// group, the routes by creation time (then namespace, name), each rule's
// matches one by one, then sorted stably by istiod's sortHTTPRoutes: a
// match before none, path match type (Exact, PathPrefix, then
// RegularExpression; a GRPCRoute's method match as the path istiod makes
// of it), path length, method, number of header matches, of query
// parameter matches. The first that matches takes the request (Envoy's
// route order).
//
// Elsewhere (another implementation's waypoint): the routes of the
// Service's namespace (producer routes), one group, compared by Gateway
// API's precedence (better).
func (ix *Index) meshCandidates(svc *service, req *Request, wp topology.Ref, istio bool) ([]*meshGroup, map[*route]string) {
	why := map[*route]string{}
	byKey := map[[3]string]*meshGroup{}
	var groups []*meshGroup
	add := func(r *route, port int32, host string) {
		key := [3]string{r.ref.Namespace, strconv.Itoa(int(port)), host}
		if !istio {
			key = [3]string{}
		}
		mg := byKey[key]
		if mg == nil {
			mg = &meshGroup{ns: r.ref.Namespace, port: port, created: r.created}
			mg.name = r.ref.Namespace + "~" + host
			if port != 0 {
				mg.name = r.ref.Namespace + "~" + strconv.Itoa(int(port)) + "~" + host
			}
			byKey[key] = mg
			groups = append(groups, mg)
		}
		if !slices.Contains(mg.routes, r) {
			mg.routes = append(mg.routes, r)
			if r.created.Before(mg.created) {
				mg.created = r.created
			}
		}
	}
	for _, r := range ix.meshRoutesAt(svc, wp, istio) {
		gk := r.ref.GroupKind()
		if gk != topology.KindHTTPRoute && gk != topology.KindGRPCRoute {
			why[r] = fmt.Sprintf("kind: a %s does not serve %s requests", r.ref.Kind, req.Scheme)
			continue
		}
		if !istio && req.IsGRPC() != (gk == topology.KindGRPCRoute) {
			why[r] = fmt.Sprintf("kind: a %s does not serve %s requests", r.ref.Kind, req.Scheme)
			continue
		}
		if ns := r.ref.Namespace; ns != svc.ref.Namespace && (!istio || ns != wp.Namespace) {
			if istio {
				why[r] = svc.words(fmt.Sprintf("a route of namespace %s: at the waypoint only the routes of the Service's namespace (%s) and of the waypoint's (%s) apply; a consumer route needs its client's sidecar (not modelled)", ns, svc.ref.Namespace, wp.Namespace))
			} else {
				why[r] = fmt.Sprintf("a consumer route of namespace %s: it applies to the requests of that namespace's clients only (not traced)", ns)
			}
			continue
		}
		if istio {
			if why1 := ix.istioUnconverted(r, true); why1 != "" {
				why[r] = why1
				continue
			}
		}
		var names []string // the ports named, "PORT of WHAT"
		took := false
		for _, p := range r.parents {
			hosts := ix.parentHosts(r, p, svc, istio)
			if len(hosts) == 0 {
				continue
			}
			var port int32
			if p.Port != nil {
				port = int32(*p.Port)
			}
			if port != 0 && port != req.Port {
				names = append(names, fmt.Sprintf("%d of %s", port, parentNoun(r, p, svc)))
				continue
			}
			for _, h := range hosts {
				add(r, port, h) // a VirtualService per host
			}
			took = true
		}
		if !took {
			why[r] = fmt.Sprintf("port: its parentRef names port %s, not %d", strings.Join(names, ", "), req.Port)
		}
	}
	for _, mg := range groups {
		slices.SortStableFunc(mg.routes, func(a, b *route) int {
			if c := a.created.Compare(b.created); c != 0 {
				return c
			}
			if c := strings.Compare(a.ref.Namespace, b.ref.Namespace); c != 0 {
				return c
			}
			// istiod compares the VirtualServices' names, NAME~N~...
			return strings.Compare(a.ref.Name+"~", b.ref.Name+"~")
		})
		for _, r := range mg.routes {
			for _, ru := range r.rules {
				ru.compile()
				mg.entries = append(mg.entries, ru.entries...)
			}
		}
		if istio {
			portMatch := mg.port != 0
			slices.SortStableFunc(mg.entries, func(a, b *entry) int { return compareIstio(a, b, portMatch) })
		}
	}
	slices.SortStableFunc(groups, func(a, b *meshGroup) int {
		if istio {
			// istiod lists the waypoint's own namespace's routes first,
			// then the others, each part by age (pilot/pkg/model
			// push_context.go VirtualServicesForGateway: "Favor
			// same-namespace Gateway routes", read for the waypoint's
			// egress listener, sidecar.go DefaultSidecarScopeForGateway).
			if ao, bo := a.ns == wp.Namespace, b.ns == wp.Namespace; ao != bo {
				if ao {
					return -1
				}
				return 1
			}
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(a.ns, b.ns)
	})
	return groups, why
}

// istioKey is an entry's place in istiod's sortHTTPRoutes (istio/istio @
// 86c9f01f pilot/pkg/config/kube/gateway/conversion.go: sortHTTPRoutes,
// getURIRank, getURILength, createURIMatch, createGRPCURIMatch): whether
// it has a match (a route of a parentRef with a port always has one), the
// path match's rank (Exact 3, PathPrefix 2, RegularExpression 1, none -1)
// and length (a PathPrefix without one trailing "/", unless "/"), and its
// method, header and query parameter matches.
type istioKey struct {
	match                                bool
	rank, length, method, headers, query int
}

func istioKeyOf(e *entry, portMatch bool) istioKey {
	k := istioKey{match: e.match >= 0 || portMatch, rank: -1}
	if e.match < 0 {
		return k
	}
	k.headers = len(e.m.Headers)
	if e.rule.grpc != nil {
		m := e.rule.grpc.Matches[e.match].Method
		if m == nil || (m.Service == nil && m.Method == nil) {
			return k
		}
		regex := m.Type != nil && *m.Type == gwv1.GRPCMethodMatchRegularExpression
		svc, method := deref(m.Service), deref(m.Method)
		switch {
		case m.Service == nil:
			k.rank, k.length = 1, len("/[^/]+/"+method)
		case m.Method == nil && regex:
			k.rank, k.length = 1, len("/"+svc+"/.+")
		case m.Method == nil:
			k.rank, k.length = 2, len("/"+svc+"/")
		case regex:
			k.rank, k.length = 1, len("/"+svc+"/"+method)
		default:
			k.rank, k.length = 3, len("/"+svc+"/"+method)
		}
		return k
	}
	switch e.m.PathType {
	case gwv1.PathMatchExact:
		k.rank, k.length = 3, len(e.m.Path)
	case gwv1.PathMatchPathPrefix:
		p := e.m.Path
		if p != "/" {
			p = strings.TrimSuffix(p, "/")
		}
		k.rank, k.length = 2, len(p)
	case gwv1.PathMatchRegularExpression:
		k.rank, k.length = 1, len(e.m.Path)
	}
	if e.m.Method != "" {
		k.method = 1
	}
	k.query = len(e.m.Query)
	return k
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// compareIstio orders entries a and b as istiod's sortHTTPRoutes does:
// -1 when a comes first, 0 when the sort keeps their order.
func compareIstio(a, b *entry, portMatch bool) int {
	ka, kb := istioKeyOf(a, portMatch), istioKeyOf(b, portMatch)
	switch {
	case ka.match != kb.match:
		if ka.match {
			return -1
		}
		return 1
	case !ka.match:
		return 0
	}
	for _, d := range [][2]int{{ka.rank, kb.rank}, {ka.length, kb.length}, {ka.method, kb.method}, {ka.headers, kb.headers}, {ka.query, kb.query}} {
		if d[0] != d[1] {
			if d[0] > d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// unconvertedFilter names the first filter of route r that istiod cannot
// convert (its conversion fails, and the route gives no VirtualService:
// convertHTTPRoute, convertGRPCRoute in
// pilot/pkg/config/kube/gateway/conversion.go), "" when there is none.
func unconvertedFilter(r *route) string {
	for _, ru := range r.rules {
		switch {
		case ru.http != nil:
			for _, f := range ru.http.Filters {
				switch f.Type {
				case gwv1.HTTPRouteFilterRequestHeaderModifier, gwv1.HTTPRouteFilterResponseHeaderModifier, gwv1.HTTPRouteFilterRequestRedirect,
					gwv1.HTTPRouteFilterRequestMirror, gwv1.HTTPRouteFilterURLRewrite, gwv1.HTTPRouteFilterCORS:
				default:
					return fmt.Sprintf("%s (rule %s)", f.Type, ru.name)
				}
			}
		case ru.grpc != nil:
			for _, f := range ru.grpc.Filters {
				switch f.Type {
				case gwv1.GRPCRouteFilterRequestHeaderModifier, gwv1.GRPCRouteFilterResponseHeaderModifier, gwv1.GRPCRouteFilterRequestMirror:
				default:
					return fmt.Sprintf("%s (rule %s)", f.Type, ru.name)
				}
			}
		}
	}
	return ""
}

// meshL4Route is the route that takes a connection to Service svc's TCP
// port at Istio's waypoint wp (istio/istio @ 86c9f01f
// pilot/pkg/networking/core/listener_waypoint.go getWaypointTCPRoutes):
// of the TLSRoutes and TCPRoutes whose parentRef names the Service
// without a port or with the request's, of the Service's namespace or
// the waypoint's (getVirtualServiceForWaypoint), in the waypoint's order
// (its namespace's first, then the oldest, then by name: one
// VirtualService per route), the first TLSRoute, else the first
// TCPRoute (getTLSRouteMatch before getTCPRouteMatch, "respect TLS
// routes before TCP routes"). A TLSRoute applies there without
// hostnames, or when the one of its hostnames that overlaps the
// Service's name is that name (its SNI hosts, as the waypoint compares
// them: augmentTLSPortMatch, compatibleRoutesForHost). Its first rule
// takes the connection (every rule of the route has the same match). nil
// when none applies; why says, per other route of the Service, why it
// does not take the connection.
func (ix *Index) meshL4Route(svc *service, req *Request, wp topology.Ref) (*route, map[*route]string) {
	why := map[*route]string{}
	fqdn := svc.meshName()
	var tls, tcp []*route
	for _, r := range ix.meshRoutesAt(svc, wp, true) {
		gk := r.ref.GroupKind()
		if gk != topology.KindTLSRoute && gk != topology.KindTCPRoute {
			continue // meshRoute says why
		}
		if ns := r.ref.Namespace; ns != svc.ref.Namespace && ns != wp.Namespace {
			why[r] = svc.words(fmt.Sprintf("a route of namespace %s: at the waypoint only the routes of the Service's namespace (%s) and of the waypoint's (%s) apply", ns, svc.ref.Namespace, wp.Namespace))
			continue
		}
		var ports []string
		took := false
		for _, p := range r.parents {
			if len(ix.parentHosts(r, p, svc, true)) == 0 {
				continue
			}
			if p.Port == nil || int32(*p.Port) == req.Port {
				took = true
				break
			}
			ports = append(ports, fmt.Sprintf("%d of %s", int(*p.Port), parentNoun(r, p, svc)))
		}
		switch {
		case !took:
			why[r] = fmt.Sprintf("port: its parentRef names port %s, not %d", strings.Join(ports, ", "), req.Port)
			continue
		case len(r.rules) == 0:
			why[r] = "the route has no rule"
			continue
		case gk == topology.KindTLSRoute && !waypointSNIMatch(r.hostnames, fqdn):
			why[r] = svc.words(fmt.Sprintf("hostnames: at a waypoint a TLSRoute applies without hostnames, or when the one that overlaps the Service's name is %s (istiod matches its SNI hosts so)", fqdn))
			continue
		}
		if gk == topology.KindTLSRoute {
			tls = append(tls, r)
		} else {
			tcp = append(tcp, r)
		}
	}
	order := func(a, b *route) int {
		if ao, bo := a.ref.Namespace == wp.Namespace, b.ref.Namespace == wp.Namespace; ao != bo {
			if ao {
				return -1
			}
			return 1
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		if c := strings.Compare(a.ref.Name+"~", b.ref.Name+"~"); c != 0 {
			return c
		}
		return strings.Compare(a.ref.Namespace, b.ref.Namespace)
	}
	slices.SortStableFunc(tls, order)
	slices.SortStableFunc(tcp, order)
	all := append(tls, tcp...)
	if len(all) == 0 {
		return nil, why
	}
	best := all[0]
	for _, r := range all[1:] {
		why[r] = fmt.Sprintf("precedence: %s %s comes first at the waypoint (istiod takes the first TLSRoute, else the first TCPRoute, its namespace's first, then the oldest)", best.ref.Kind, nameOf(best.ref))
	}
	return best, why
}

// waypointSNIMatch reports whether a TLSRoute with hostnames applies at a
// waypoint for the Service named fqdn: without hostnames, or when, of
// several, those overlapping fqdn are fqdn alone; of one, it is fqdn.
func waypointSNIMatch(hostnames []string, fqdn string) bool {
	if len(hostnames) == 0 {
		return true
	}
	sni := hostnames
	if len(hostnames) > 1 {
		sni = nil
		for _, h := range hostnames {
			if gatewayapi.HostnameIntersects(h, fqdn) {
				sni = append(sni, h)
			}
		}
	}
	return len(sni) == 1 && sni[0] == fqdn
}

// words is msg about svc, which says "the Service", as said of a
// ServiceEntry when svc is one.
func (s *service) words(msg string) string {
	if s.se == nil {
		return msg
	}
	return strings.ReplaceAll(msg, "the Service", "the ServiceEntry")
}

// meshName is the host istiod names svc's VirtualServices by: a
// Service's cluster name, or a ServiceEntry's host the request named
// (its first host when tracing did not pick one).
func (s *service) meshName() string {
	if len(s.hosts) > 0 {
		return s.hosts[0]
	}
	return s.ref.Name + "." + s.ref.Namespace + ".svc." + clusterDomain
}
