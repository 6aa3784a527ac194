package gatewayapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/topology"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindReferenceGrant is the ReferenceGrant kind. Add reads ReferenceGrants
// into the Grants it returns; they are not nodes.
var KindReferenceGrant = topology.GroupKind{Group: topology.GatewayGroup, Kind: "ReferenceGrant"}

// Kinds are the kinds Add reads, in a fixed order: what an adapter must
// list or watch for the engine besides policies and their CRDs.
var Kinds = []topology.GroupKind{
	topology.KindNamespace,
	topology.KindService,
	topology.KindServiceEntry,
	topology.KindEnvoyGatewayBackend,
	topology.KindGatewayClass,
	topology.KindGateway,
	topology.KindListenerSet,
	topology.KindXListenerSet,
	topology.KindHTTPRoute,
	topology.KindGRPCRoute,
	topology.KindTLSRoute,
	topology.KindTCPRoute,
	topology.KindUDPRoute,
	KindReferenceGrant,
}

var handled = func() map[topology.GroupKind]bool {
	m := make(map[topology.GroupKind]bool, len(Kinds))
	for _, gk := range Kinds {
		m[gk] = true
	}
	return m
}()

// Handles reports whether Add reads objects of this kind: GatewayClass,
// Gateway, ListenerSet, XListenerSet, the route kinds of topology.RouteKinds, Service,
// Istio's ServiceEntry, Envoy Gateway's Backend, Namespace and
// ReferenceGrant.
func Handles(gk topology.GroupKind) bool { return handled[gk] }

// Protocol defaults of listeners without allowedRoutes.kinds.
var (
	httpKinds = []topology.GroupKind{topology.KindHTTPRoute, topology.KindGRPCRoute}
	tlsKinds  = []topology.GroupKind{topology.KindTLSRoute}
	tcpKinds  = []topology.GroupKind{topology.KindTCPRoute}
	udpKinds  = []topology.GroupKind{topology.KindUDPRoute}
)

// DefaultRouteKinds are the route kinds a listener of protocol proto
// takes when its allowedRoutes name none; false for a protocol Gateway
// API does not define (an implementation's own), whose kinds only the
// implementation knows.
func DefaultRouteKinds(proto gwv1.ProtocolType) ([]topology.GroupKind, bool) {
	switch proto {
	case gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType:
		return httpKinds, true
	case gwv1.TLSProtocolType:
		return tlsKinds, true
	case gwv1.TCPProtocolType:
		return tcpKinds, true
	case gwv1.UDPProtocolType:
		return udpKinds, true
	}
	return nil, false
}

// meta is what every node needs from an object.
type meta struct {
	ref    topology.Ref
	labels map[string]string
	gen    int64
}

func newMeta(ref topology.Ref, om *objectMeta) meta {
	return meta{ref: ref, labels: om.Labels, gen: om.Generation}
}

type gatewayObj struct {
	meta
	spec gatewaySpec
}

type listenerSetObj struct {
	meta
	parentRef gwv1.ParentGatewayReference
	listeners []listenerSpec
}

type serviceObj struct {
	meta
	ports []servicePort
}

// route is any route kind, reduced to what the hierarchy needs.
type route struct {
	meta
	id      topology.NodeID
	parents []gwv1.ParentReference
	// hostnamed is set for the kinds whose hostnames must intersect the
	// listener's (HTTPRoute, GRPCRoute, TLSRoute).
	hostnamed bool
	hostnames []gwv1.Hostname
	rules     []routeRule
	// attached holds, per parentRef, the listeners that take the route,
	// when delegationReach found them first (nil: not computed).
	attached [][]*listener
}

// parent is a direct parent of routes (GEP-1713): a Gateway or a
// ListenerSet (or XListenerSet), with its listeners and what admission needs precomputed.
type parent struct {
	id topology.NodeID
	ns string
	// controller is the controllerName of its Gateway's GatewayClass,
	// "" when that class is not among the objects.
	controller string
	listeners  []*listener
	byName     map[string]*listener
	// listenerSets is a Gateway's spec.allowedListeners.namespaces.
	listenerSets nsFilter
	// kind is the parent's kind; sets, of a Gateway, are the
	// ListenerSets (and XListenerSets) it admits, in ref order.
	kind topology.GroupKind
	sets []*parent
}

type listener struct {
	id       topology.NodeID
	name     string
	port     int32
	hostname string // "" for none
	// routes is allowedRoutes.namespaces.
	routes  nsFilter
	kinds   []topology.GroupKind
	anyKind bool
}

// nsFilter is a resolved namespaces setting (from and selector) of an
// allowedRoutes or an allowedListeners: the namespaces whose objects it
// admits.
type nsFilter struct {
	// from is Same, All, Selector or None (unknown values and unusable
	// selectors become None, after a problem is reported).
	from gwv1.FromNamespaces
	sel  labels.Selector
	// nsOK caches sel's verdict per namespace: many routes share a
	// namespace, and matching is the costly part of admission.
	nsOK map[string]bool
	// defaulted says that from was not given; invalid, that it became
	// None after a problem. They only shape the words of a refusal.
	defaulted, invalid bool
}

// adder holds the state of one Add call.
type adder struct {
	b        *topology.Builder
	problems []diag.Problem
	grants   *Grants
	// nsLabels holds the labels of the Namespace objects given; a
	// namespace without one has no labels.
	nsLabels map[string]labels.Set
	// owned marks, by node id, the object nodes Add made: links go only to
	// objects among the input, never to whatever else the builder holds.
	// (A slice over the dense ids, rather than another map keyed by Ref.)
	owned []bool
	// parents holds every Gateway and the ListenerSets their Gateway
	// admits: what a route's parentRef can attach to.
	parents map[topology.Ref]*parent
	// httpRoutes are the HTTPRoutes of the input (in ref order) and
	// httpRoute indexes them: what a delegating backendRef selects from.
	httpRoutes []*route
	httpRoute  map[topology.Ref]*route
	// refusedChild marks the routes refused as children (reported once).
	refusedChild map[*route]bool
	// opts are Add's options; classControllers the controllerNames of
	// the GatewayClasses given, by name.
	opts             Options
	classControllers map[string]string
	// reach holds, per route, the controllers of the Gateways whose
	// delegations reach it (delegationReach).
	reach map[*route]map[string]bool
	// routesByNS and routesByLabel index httpRoutes for delegations by
	// "*" and by label (per label name), built on first use.
	routesByNS    map[string][]*route
	routesByLabel map[string]map[string][]*route
}

// egBackendObj is an Envoy Gateway Backend of the input, with its
// endpoints' ports.
type egBackendObj struct {
	meta
	ports []int32
}

// addObject adds the node of an object of the input.
func (a *adder) addObject(m meta) topology.NodeID {
	id := a.b.AddNode(m.ref, m.labels, m.gen)
	for int(id) >= len(a.owned) {
		a.owned = append(a.owned, make([]bool, len(a.owned)+64)...)
	}
	a.owned[id] = true
	return id
}

// object finds the node of an object of the input.
func (a *adder) object(ref topology.Ref) (topology.NodeID, bool) {
	id, ok := a.b.Lookup(ref)
	if !ok || int(id) >= len(a.owned) || !a.owned[id] {
		return 0, false
	}
	return id, true
}

// Add adds every object of a kind it Handles to b, links them, and returns
// the ReferenceGrant index. Objects of other kinds, and nil ones, are
// ignored. Invalid objects are reported, naming the object and the field,
// and skipped or partly used. The result does not depend on the order of
// objs, except which of two copies of one object is kept (the first).
func Add(b *topology.Builder, objs []*unstructured.Unstructured) (*Grants, []diag.Problem) {
	return AddWith(b, objs, Options{})
}

// Options are the optional inputs of AddWith.
type Options struct {
	// DelegationKinds says, for a GatewayClass controllerName, the kinds
	// of backendRef whose route delegation its implementation follows
	// (topology.KindHTTPRoute, KindDelegationLabel, ...), and whether the
	// implementation is known. Nil: none is known (every delegation is
	// followed).
	DelegationKinds func(controller string) (kinds []topology.GroupKind, known bool)
	// UnadmittedParents also links every route below the listeners of the
	// Gateways its parentRefs name that do not admit it (the listener a
	// sectionName names, else every listener of the Gateway, whatever
	// the port, allowedRoutes and hostnames), by unadmitted edges
	// (topology.Node.Unadmitted), as Kuadrant's policy-machinery links
	// routes. ListenerSet parents get none.
	UnadmittedParents bool
	// GatewayRouteListenerSets says, for a GatewayClass controllerName,
	// the kinds of ListenerSet (topology.KindXListenerSet, ...) whose
	// listeners also take the routes whose parentRef names their Gateway
	// without sectionName, as its own listeners do (port and admission
	// alike): Gloo Gateway's attachment. Nil, or none for a controller:
	// Gateway API's rule, a parentRef to a Gateway never reaches its
	// ListenerSets' listeners (GEP-1713).
	GatewayRouteListenerSets func(controller string) []topology.GroupKind
}

// AddWith is Add with options: a route's delegating backendRef links its
// child routes only when DelegationFollowed says some Gateway it is
// reached through follows that form of delegation, and routes get
// unadmitted edges when opts asks for them.
func AddWith(b *topology.Builder, objs []*unstructured.Unstructured, opts Options) (*Grants, []diag.Problem) {
	a := &adder{
		b:                b,
		grants:           &Grants{},
		nsLabels:         map[string]labels.Set{},
		parents:          map[topology.Ref]*parent{},
		opts:             opts,
		classControllers: map[string]string{},
	}
	var (
		classes, namespaces []meta
		gateways            []*gatewayObj
		listenerSets        []*listenerSetObj
		services            []*serviceObj
		serviceEntries      []meta
		backends            []*egBackendObj
		routes              []*route
	)
	seen := make(map[topology.Ref]struct{}, len(objs))
	implicitNS := map[string]struct{}{}
	for _, u := range objs {
		if u == nil || u.Object == nil {
			continue
		}
		gvk := u.GroupVersionKind()
		gk := topology.GroupKind{Group: gvk.Group, Kind: gvk.Kind}
		if !Handles(gk) {
			continue
		}
		ref, ok := a.objectRef(u, gk)
		if !ok {
			continue
		}
		if ref.Namespace != "" {
			implicitNS[ref.Namespace] = struct{}{}
		}
		if _, dup := seen[ref]; dup {
			a.problem(ref, "", "duplicate object; this copy is ignored")
			continue
		}
		seen[ref] = struct{}{}

		switch gk {
		case topology.KindGatewayClass:
			var o metaObject
			if a.decode(u, ref, &o) {
				classes = append(classes, newMeta(ref, &o.Metadata))
				// Read leniently: a malformed one shapes nothing else.
				ctl, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName")
				a.classControllers[ref.Name] = ctl
			}
		case topology.KindNamespace:
			var o metaObject
			if a.decode(u, ref, &o) {
				namespaces = append(namespaces, newMeta(ref, &o.Metadata))
			}
		case topology.KindGateway:
			var o gatewayObject
			if a.decode(u, ref, &o) {
				gateways = append(gateways, &gatewayObj{meta: newMeta(ref, &o.Metadata), spec: o.Spec})
			}
		case topology.KindListenerSet, topology.KindXListenerSet:
			// An XListenerSet (v1alpha1) has the fields of a ListenerSet
			// that shape the hierarchy, with the same meaning; only its
			// listeners' port may be left out (0: the implementation
			// picks one), which is read as written.
			var o listenerSetObject
			if a.decode(u, ref, &o) {
				listenerSets = append(listenerSets, &listenerSetObj{meta: newMeta(ref, &o.Metadata), parentRef: o.Spec.ParentRef, listeners: o.Spec.Listeners})
			}
		case topology.KindService:
			var o serviceObject
			if a.decode(u, ref, &o) {
				services = append(services, &serviceObj{meta: newMeta(ref, &o.Metadata), ports: o.Spec.Ports})
			}
		case topology.KindServiceEntry:
			// Istio's: a node with its labels (its waypoint binding), no
			// sections (Istio's targetRefs name no port).
			var o metaObject
			if a.decode(u, ref, &o) {
				serviceEntries = append(serviceEntries, newMeta(ref, &o.Metadata))
			}
		case topology.KindEnvoyGatewayBackend:
			// Envoy Gateway's: a node whose sections are its ports, by
			// number (its endpoints' and those routes name it with,
			// linkBackend), as Envoy Gateway matches a BackendTLSPolicy's
			// sectionName; what its endpoints are the engine reads.
			var o egBackendObject
			if a.decode(u, ref, &o) {
				b := &egBackendObj{meta: newMeta(ref, &o.Metadata)}
				for _, e := range o.Spec.Endpoints {
					switch {
					case e.IP != nil:
						b.ports = append(b.ports, e.IP.Port)
					case e.FQDN != nil:
						b.ports = append(b.ports, e.FQDN.Port)
					}
				}
				backends = append(backends, b)
			}
		case KindReferenceGrant:
			var o referenceGrantObject
			if a.decode(u, ref, &o) {
				a.grants.add(ref.Namespace, &o.Spec)
			}
		case topology.KindTCPRoute, topology.KindUDPRoute:
			var o plainRouteObject
			if a.decode(u, ref, &o) {
				routes = append(routes, &route{meta: newMeta(ref, &o.Metadata), parents: o.Spec.ParentRefs, rules: o.Spec.Rules})
			}
		default: // HTTPRoute, GRPCRoute, TLSRoute
			var o routeObject
			if a.decode(u, ref, &o) {
				routes = append(routes, &route{meta: newMeta(ref, &o.Metadata), parents: o.Spec.ParentRefs,
					hostnamed: true, hostnames: o.Spec.Hostnames, rules: o.Spec.Rules})
			}
		}
	}

	// Sorting makes node ids, hence the graph's order and which edge of a
	// cycle Build drops, independent of the input order.
	slices.SortFunc(classes, func(x, y meta) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(namespaces, func(x, y meta) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(gateways, func(x, y *gatewayObj) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(listenerSets, func(x, y *listenerSetObj) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(services, func(x, y *serviceObj) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(serviceEntries, func(x, y meta) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(backends, func(x, y *egBackendObj) int { return x.ref.Compare(y.ref) })
	slices.SortFunc(routes, func(x, y *route) int { return x.ref.Compare(y.ref) })

	for _, c := range classes {
		a.addObject(c)
	}
	a.addNamespaces(namespaces, implicitNS)
	for _, g := range gateways {
		a.addGateway(g)
	}
	// After the Gateways, which they attach to, and before the routes,
	// which attach to them.
	for _, ls := range listenerSets {
		a.addListenerSet(ls)
	}
	for _, s := range services {
		a.addService(s)
	}
	for _, e := range serviceEntries {
		a.addObject(e)
	}
	for _, be := range backends {
		id := a.addObject(be.meta)
		for _, port := range be.ports {
			if port > 0 {
				a.b.AddSection(id, strconv.Itoa(int(port)))
			}
		}
	}
	// Every route node exists before any is linked, so that a backendRef to
	// a route links whatever the order.
	a.httpRoute = map[topology.Ref]*route{}
	a.refusedChild = map[*route]bool{}
	for _, r := range routes {
		r.id = a.addObject(r.meta)
		if r.ref.GroupKind() == topology.KindHTTPRoute {
			a.httpRoutes = append(a.httpRoutes, r)
			a.httpRoute[r.ref] = r
		}
	}
	a.reach = a.delegationReach()
	for _, r := range routes {
		a.linkRoute(r, r.id)
	}
	return a.grants, a.problems
}

// objectRef returns the ref of object u of kind gk, or reports why it has
// none. (The unstructured accessors would turn a name or namespace of the
// wrong type into "", and an object into a cluster-wide one.)
func (a *adder) objectRef(u *unstructured.Unstructured, gk topology.GroupKind) (topology.Ref, bool) {
	ref := topology.Ref{Group: gk.Group, Kind: gk.Kind}
	md, isMap := u.Object["metadata"].(map[string]any)
	if !isMap {
		if v := u.Object["metadata"]; v != nil {
			a.problem(ref, "metadata", "%s; the object is ignored", want("an object", v))
		} else {
			a.problem(ref, "metadata.name", "object has no name; it is ignored")
		}
		return ref, false
	}
	// Both are read before either is reported, so that a problem names
	// the object as well as it can.
	name, nameOK := md["name"].(string)
	ns, nsOK := md["namespace"].(string)
	if nameOK {
		ref.Name = name
	}
	if nsOK && !topology.ClusterScoped(gk) {
		ref.Namespace = ns
	}
	if v := md["name"]; v != nil && !nameOK {
		a.problem(ref, "metadata.name", "%s; the object is ignored", want("a string", v))
		return ref, false
	}
	if v := md["namespace"]; v != nil && !nsOK && !topology.ClusterScoped(gk) {
		a.problem(ref, "metadata.namespace", "%s; the object is ignored", want("a string", v))
		return ref, false
	}
	if ref.Name == "" {
		a.problem(ref, "metadata.name", "object has no name; it is ignored")
		return ref, false
	}
	return ref, true
}

func (a *adder) problem(obj topology.Ref, field, format string, args ...any) {
	a.problems = append(a.problems, diag.Newf(obj, field, format, args...))
}

// decode decodes u into its projection into (see types.go), reporting a
// failure.
func (a *adder) decode(u *unstructured.Unstructured, ref topology.Ref, into any) bool {
	if e := decode(u.Object, into); e != nil {
		a.problem(ref, e.field, "cannot decode the object (%s); it is ignored", e.msg)
		return false
	}
	return true
}

// addNamespaces adds a node for every Namespace object, and one without
// labels for every other namespace holding an object of a kind Add reads
// (even an invalid one: it shows that the namespace exists), so that
// policies can target it. Namespaces get no edges: the engine places them
// on paths.
func (a *adder) addNamespaces(namespaces []meta, implicit map[string]struct{}) {
	for _, n := range namespaces {
		a.nsLabels[n.ref.Name] = n.labels
		a.addObject(n)
		delete(implicit, n.ref.Name)
	}
	names := make([]string, 0, len(implicit))
	for ns := range implicit {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		a.addObject(meta{ref: topology.Ref{Group: topology.KindNamespace.Group, Kind: topology.KindNamespace.Kind, Name: ns}})
	}
}

func (a *adder) addGateway(g *gatewayObj) {
	id := a.addObject(g.meta)
	class := topology.Ref{Group: topology.KindGatewayClass.Group, Kind: topology.KindGatewayClass.Kind, Name: string(g.spec.GatewayClassName)}
	if cid, ok := a.object(class); ok {
		a.b.AddEdge(cid, id)
	}
	p := a.addListeners(g.ref, id, g.spec.Listeners)
	p.kind = topology.KindGateway
	p.controller = a.classControllers[string(g.spec.GatewayClassName)]
	// No allowedListeners, or no namespaces in it, is None: the API's
	// default (by CRD defaulting, and in the types' docs).
	var from *gwv1.FromNamespaces
	var sel *metav1.LabelSelector
	if al := g.spec.AllowedListeners; al != nil && al.Namespaces != nil {
		from, sel = al.Namespaces.From, al.Namespaces.Selector
	}
	p.listenerSets = a.namespaces(from, sel, gwv1.NamespacesFromNone, g.ref, "spec.allowedListeners.namespaces", "the Gateway admits no ListenerSets")
	a.parents[g.ref] = p
}

// addListeners adds the listener sections of obj (node id), a Gateway or a
// ListenerSet, whose spec.listeners are specs.
func (a *adder) addListeners(obj topology.Ref, id topology.NodeID, specs []listenerSpec) *parent {
	p := &parent{id: id, ns: obj.Namespace, byName: make(map[string]*listener, len(specs))}
	for i := range specs {
		l := &specs[i]
		field := fmt.Sprintf("spec.listeners[%d]", i)
		name := string(l.Name)
		if name == "" {
			a.problem(obj, field+".name", "listener has no name; it is ignored")
			continue
		}
		if _, dup := p.byName[name]; dup {
			a.problem(obj, field+".name", "duplicate listener name %q; this listener is ignored", name)
			continue
		}
		li := &listener{id: a.b.AddSection(id, name), name: name, port: int32(l.Port)}
		if l.Hostname != nil {
			li.hostname = string(*l.Hostname)
		}
		a.admission(li, l, obj, field)
		p.byName[name] = li
		p.listeners = append(p.listeners, li)
	}
	return p
}

// addListenerSet adds ListenerSet ls and its listeners, below its parent
// Gateway when that Gateway admits it. Only then can routes attach to its
// listeners: the listeners of a ListenerSet its Gateway does not admit
// serve nothing (GEP-1713).
func (a *adder) addListenerSet(ls *listenerSetObj) {
	id := a.addObject(ls.meta)
	p := a.addListeners(ls.ref, id, ls.listeners)
	p.kind = ls.ref.GroupKind()
	if gw := a.parentGateway(ls); gw != nil {
		a.b.AddEdge(gw.id, id)
		p.controller = gw.controller
		a.parents[ls.ref] = p
		gw.sets = append(gw.sets, p)
	}
}

// parentGateway returns the Gateway that ListenerSet ls attaches to, or
// nil after reporting why there is none, so that neither the ListenerSet
// nor the routes attached to it are cut off without a word.
func (a *adder) parentGateway(ls *listenerSetObj) *parent {
	cut := "the " + ls.ref.Kind + " and the routes attached to it reach no Gateway"
	pr := &ls.parentRef
	ref := topology.Ref{Group: topology.GatewayGroup, Kind: topology.KindGateway.Kind, Namespace: ls.ref.Namespace, Name: string(pr.Name)}
	// As for routes' parentRefs: a nil group is Gateway API's, an explicit
	// "" the core group.
	if pr.Group != nil {
		ref.Group = string(*pr.Group)
	}
	if pr.Kind != nil && *pr.Kind != "" {
		ref.Kind = string(*pr.Kind)
	}
	if pr.Namespace != nil && *pr.Namespace != "" {
		ref.Namespace = string(*pr.Namespace)
	}
	switch {
	case ref.Name == "":
		a.problem(ls.ref, "spec.parentRef.name", "parentRef has no name; %s", cut)
		return nil
	case ref.GroupKind() != topology.KindGateway:
		// The group is spelled out: a core-group "Gateway" would read as
		// one otherwise.
		a.problem(ls.ref, "spec.parentRef", "parentRef names kind %q of group %q, not a Gateway of group %q; %s", ref.Kind, ref.Group, topology.GatewayGroup, cut)
		return nil
	}
	gw := a.parents[ref]
	if gw == nil {
		a.problem(ls.ref, "spec.parentRef", "parent %s does not exist; %s", ref.Short(), cut)
		return nil
	}
	if !a.admitsNamespace(&gw.listenerSets, gw.ns, ls.ref.Namespace) {
		a.problem(ls.ref, "spec.parentRef", "parent %s %s; %s", ref.Short(), refusal(&gw.listenerSets, gw.ns, ls.ref.Namespace), cut)
		return nil
	}
	return gw
}

// refusal says why a Gateway in namespace own, whose allowedListeners
// resolved to f, does not admit a ListenerSet of namespace ns.
func refusal(f *nsFilter, own, ns string) string {
	const field = "spec.allowedListeners.namespaces"
	switch {
	case f.invalid:
		return "admits no ListenerSets: its " + field + " is unusable (reported on the Gateway)"
	case f.from == gwv1.NamespacesFromSame:
		return fmt.Sprintf("admits only ListenerSets of its own namespace %q (%s.from is Same)", own, field)
	case f.from == gwv1.NamespacesFromSelector:
		return fmt.Sprintf("admits only ListenerSets of the namespaces its %s.selector matches, and namespace %q does not match", field, ns)
	case f.defaulted:
		return "admits no ListenerSets: " + field + ".from is not set, and defaults to None"
	default:
		return "admits no ListenerSets: " + field + ".from is None"
	}
}

// namespaces resolves the namespaces setting of obj at field: from (nil
// or "" for def) and sel. An unusable setting is reported, ending with
// consequence, and admits nothing.
func (a *adder) namespaces(from *gwv1.FromNamespaces, sel *metav1.LabelSelector, def gwv1.FromNamespaces, obj topology.Ref, field, consequence string) nsFilter {
	f := nsFilter{from: def, defaulted: true}
	if from != nil && *from != "" {
		f.from, f.defaulted = *from, false
	}
	switch f.from {
	case gwv1.NamespacesFromSame, gwv1.NamespacesFromAll, gwv1.NamespacesFromNone:
	case gwv1.NamespacesFromSelector:
		if sel == nil {
			a.problem(obj, field+".selector", "from is Selector but there is no selector; %s", consequence)
			f.from, f.invalid = gwv1.NamespacesFromNone, true
			break
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			a.problem(obj, field+".selector", "invalid selector: %v; %s", err, consequence)
			f.from, f.invalid = gwv1.NamespacesFromNone, true
			break
		}
		f.sel, f.nsOK = s, map[string]bool{}
	default:
		a.problem(obj, field+".from", "unknown value %q (want All, Same, Selector or None); %s", string(f.from), consequence)
		f.from, f.invalid = gwv1.NamespacesFromNone, true
	}
	return f
}

// admitsNamespace reports whether f, set on an object of namespace own,
// admits an object of namespace ns.
func (a *adder) admitsNamespace(f *nsFilter, own, ns string) bool {
	switch f.from {
	case gwv1.NamespacesFromAll:
		return true
	case gwv1.NamespacesFromSame:
		return ns == own
	case gwv1.NamespacesFromSelector:
		ok, cached := f.nsOK[ns]
		if !cached {
			ok = f.sel.Matches(a.nsLabels[ns])
			f.nsOK[ns] = ok
		}
		return ok
	default:
		return false
	}
}

// admission precomputes which namespaces and kinds listener l of obj (a
// Gateway or a ListenerSet) admits.
func (a *adder) admission(li *listener, l *listenerSpec, obj topology.Ref, field string) {
	var from *gwv1.FromNamespaces
	var sel *metav1.LabelSelector
	ar := l.AllowedRoutes
	if ar != nil && ar.Namespaces != nil {
		from, sel = ar.Namespaces.From, ar.Namespaces.Selector
	}
	li.routes = a.namespaces(from, sel, gwv1.NamespacesFromSame, obj, field+".allowedRoutes.namespaces", "the listener admits no routes")
	if ar != nil && len(ar.Kinds) > 0 {
		li.kinds = make([]topology.GroupKind, len(ar.Kinds))
		for i, k := range ar.Kinds {
			li.kinds[i] = topology.GroupKind{Group: topology.GatewayGroup, Kind: string(k.Kind)}
			if k.Group != nil {
				li.kinds[i].Group = string(*k.Group)
			}
		}
		return
	}
	if kinds, ok := DefaultRouteKinds(l.Protocol); ok {
		li.kinds = kinds
	} else {
		// Implementation-specific protocols: only the implementation knows
		// its route kinds, so none is excluded.
		li.anyKind = true
	}
}

// admits reports whether listener l of a Gateway or ListenerSet in
// namespace ns admits route r: by namespace, kind and hostname.
func (a *adder) admits(l *listener, ns string, r *route) bool {
	if !l.anyKind && !slices.Contains(l.kinds, r.ref.GroupKind()) {
		return false
	}
	if !a.admitsNamespace(&l.routes, ns, r.ref.Namespace) {
		return false
	}
	return !r.hostnamed || hostnamesIntersect(l.hostname, r.hostnames)
}

func (a *adder) addService(s *serviceObj) {
	id := a.addObject(s.meta)
	seen := make(map[string]struct{}, len(s.ports))
	for i := range s.ports {
		p := &s.ports[i]
		name := p.Name
		if name == "" {
			name = strconv.Itoa(int(p.Port))
		}
		if _, dup := seen[name]; dup {
			a.problem(s.ref, fmt.Sprintf("spec.ports[%d]", i), "port %q is already a section of the Service; this port is ignored", name)
			continue
		}
		seen[name] = struct{}{}
		a.b.AddSection(id, name)
	}
}

// linkRoute links route r (node id) below its parents and its rules below
// it.
func (a *adder) linkRoute(r *route, id topology.NodeID) {
	for i := range r.parents {
		a.attach(r, id, &r.parents[i], i)
	}
	a.addRules(r, id)
}

// attach links route r below what its i-th parentRef p names.
func (a *adder) attach(r *route, id topology.NodeID, p *gwv1.ParentReference, i int) {
	if p.Name == "" {
		a.problem(r.ref, fmt.Sprintf("spec.parentRefs[%d].name", i), "parentRef has no name; it is ignored")
		return
	}
	parent := ParentOf(r.ref.Namespace, *p)
	switch gk := parent.GroupKind(); {
	case topology.HoldsListeners(gk):
		if r.attached != nil {
			for _, l := range r.attached[i] {
				a.b.AddEdge(l.id, id)
			}
		} else {
			a.eachListener(r, p, func(l *listener) { a.b.AddEdge(l.id, id) })
		}
		// Unadmitted edges only below Gateways: policy-machinery knows
		// no ListenerSets.
		if a.opts.UnadmittedParents && gk == topology.KindGateway {
			a.eachNamedListener(r, p, func(l *listener, takes bool) {
				if !takes {
					a.b.AddUnadmittedEdge(l.id, id)
				}
			})
		}
	case gk == topology.KindService:
		// GAMMA: the route hangs below the Service object itself, even when
		// the parentRef names a port (there is no per-port mesh routing in
		// the hierarchy). Not below an Istio ServiceEntry: only Istio
		// reads such a parentRef, and another implementation's policies on
		// a route would gain a mesh context there.
		if sid, ok := a.object(parent); ok {
			a.b.AddEdge(sid, id)
		}
	}
}

// listenersOf returns the Gateway or ListenerSet (parent) that route r's
// parentRef p names and the listeners of it that take r (none when it is
// not among the objects, or is a ListenerSet its Gateway does not admit,
// reported on the ListenerSet). A ListenerSet is the direct parent of its
// routes (GEP-1713): they attach to its listeners, never to its
// Gateway's; an XListenerSet is named by its own group and kind. Under a
// Gateway whose implementation says so (Options.GatewayRouteListenerSets),
// a parentRef naming the Gateway without sectionName takes the listeners
// of its ListenerSets of those kinds too.
func (a *adder) listenersOf(r *route, p *gwv1.ParentReference) (*parent, []*listener) {
	var out []*listener
	return a.eachListener(r, p, func(l *listener) { out = append(out, l) }), out
}

// eachListener calls fn with each listener listenersOf returns, without
// collecting them (a route's parentRef may take 64 listeners), and
// returns the parent.
func (a *adder) eachListener(r *route, p *gwv1.ParentReference, fn func(*listener)) *parent {
	pa := a.eachNamedListener(r, p, func(l *listener, takes bool) {
		if takes {
			fn(l)
		}
	})
	if pa == nil || len(pa.sets) == 0 || (p.SectionName != nil && *p.SectionName != "") || a.opts.GatewayRouteListenerSets == nil {
		return pa
	}
	// The Gateway's implementation attaches it to the listeners of its
	// ListenerSets too (Gloo Gateway's isParentRefForResource).
	kinds := a.opts.GatewayRouteListenerSets(pa.controller)
	for _, ls := range pa.sets {
		if !slices.Contains(kinds, ls.kind) {
			continue
		}
		for _, l := range ls.listeners {
			if (p.Port == nil || int32(*p.Port) == l.port) && a.admits(l, ls.ns, r) {
				fn(l)
			}
		}
	}
	return pa
}

// eachNamedListener calls fn with each listener route r's parentRef p
// names (the one its sectionName names, else every listener of the
// parent), and whether that listener takes r (port and admission), and
// returns the parent.
func (a *adder) eachNamedListener(r *route, p *gwv1.ParentReference, fn func(l *listener, takes bool)) *parent {
	pa := a.parents[ParentOf(r.ref.Namespace, *p)]
	if pa == nil {
		return nil
	}
	takes := func(l *listener) bool {
		return (p.Port == nil || int32(*p.Port) == l.port) && a.admits(l, pa.ns, r)
	}
	if p.SectionName != nil && *p.SectionName != "" {
		if l := pa.byName[string(*p.SectionName)]; l != nil {
			fn(l, takes(l))
		}
		return pa
	}
	for _, l := range pa.listeners {
		fn(l, takes(l))
	}
	return pa
}

// addRules adds the rule sections of route r (see the package doc for
// their names) and links each to its backends.
func (a *adder) addRules(r *route, id topology.NodeID) {
	names := make([]*gwv1.SectionName, len(r.rules))
	for i := range r.rules {
		names[i] = r.rules[i].Name
	}
	sections, problems := RuleSections(names)
	for _, p := range problems {
		a.problem(r.ref, p.Field, "%s", p.Message)
	}
	for i, name := range sections {
		if name == "" {
			continue
		}
		sid := a.b.AddSection(id, name)
		for j := range r.rules[i].BackendRefs {
			a.linkBackend(r, sid, &r.rules[i].BackendRefs[j], i, j)
		}
	}
}

// RuleProblem is a problem with a rule's name found by RuleSections: the
// field (spec.rules[i] or its name) and what is wrong.
type RuleProblem struct {
	Field, Message string
}

// RuleSections returns the section names of a route's rules, given their
// spec.rules[].name (nil or "" when unset), as the package doc describes:
// the name when set, else "rule-<n>" (1-based), or "rule-<n>-<k>" when
// that is another rule's explicit name. A rule whose explicit name an
// earlier rule already has gets "" (it is ignored). Every package that
// names rules (the topology, request tracing) calls it, so that a section
// name means the same rule everywhere.
func RuleSections(names []*gwv1.SectionName) ([]string, []RuleProblem) {
	out := make([]string, len(names))
	var problems []RuleProblem
	// explicit maps explicit names to the first rule that has them, so that
	// a default name gives way to the explicit name of a later rule too.
	// Without explicit names (the common case) no name can collide.
	var explicit map[string]int
	for i, n := range names {
		if n != nil && *n != "" {
			if explicit == nil {
				explicit = map[string]int{}
			}
			if _, dup := explicit[string(*n)]; !dup {
				explicit[string(*n)] = i
			}
		}
	}
	var used map[string]struct{}
	if explicit != nil {
		used = make(map[string]struct{}, len(names))
	}
	for i, n := range names {
		var name string
		if n != nil && *n != "" {
			name = string(*n)
			if _, dup := used[name]; dup {
				problems = append(problems, RuleProblem{fmt.Sprintf("spec.rules[%d].name", i), fmt.Sprintf("duplicate rule name %q; this rule is ignored", name)})
				continue
			}
		} else {
			// 1-based, as Kuadrant's policy-machinery names unnamed rules
			// (machinery/gateway_api_topology.go), so that a policy's
			// sectionName "rule-1" means the first rule everywhere.
			name = "rule-" + strconv.Itoa(i+1)
			if owner, taken := explicit[name]; taken {
				base := name
				for k := 1; ; k++ {
					name = base + "-" + strconv.Itoa(k)
					_, isExplicit := explicit[name]
					_, isUsed := used[name]
					if !isExplicit && !isUsed {
						break
					}
				}
				problems = append(problems, RuleProblem{fmt.Sprintf("spec.rules[%d]", i),
					fmt.Sprintf("the rule has no name and its default name %q is the name of spec.rules[%d]; it is named %q instead", base, owner, name)})
			}
		}
		if used != nil {
			used[name] = struct{}{}
		}
		out[i] = name
	}
	return out, problems
}

// linkBackend links rule section sid of route r to backendRef br
// (spec.rules[i].backendRefs[j]).
func (a *adder) linkBackend(r *route, sid topology.NodeID, br *gwv1.BackendObjectReference, i, j int) {
	ref := BackendOf(r.ref.Namespace, *br)
	if ref.Name == "" {
		a.problem(r.ref, fmt.Sprintf("spec.rules[%d].backendRefs[%d].name", i, j), "backendRef has no name; it is ignored")
		return
	}
	if delegation(r, ref) {
		if a.follows(r, ref.GroupKind()) {
			a.delegate(r, sid, ref, i, j)
		} else {
			a.problem(r.ref, fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j),
				"the implementations of the Gateways this route is reached through (GatewayClass controllers %s) do not delegate to HTTPRoutes by a backendRef of kind %s; it links nothing",
				strings.Join(sortedKeys(a.reach[r]), ", "), ref.GroupKind())
		}
		return
	}
	if !a.grants.Allows(r.ref.GroupKind(), r.ref.Namespace, ref) {
		return
	}
	if gk := ref.GroupKind(); Handles(gk) {
		// Kinds read from the input are never invented: only an object
		// among the input is linked (for Services, the rule above). A
		// Namespace gets no edges, nor does a route a rule cannot
		// delegate to (only HTTPRoutes delegate, to HTTPRoutes).
		if gk != topology.KindNamespace && !slices.Contains(topology.RouteKinds, gk) {
			if bid, ok := a.object(ref); ok {
				a.b.AddEdge(sid, bid)
				if gk == topology.KindEnvoyGatewayBackend && br.Port != nil && *br.Port > 0 {
					// The port a route names is a section of the
					// Backend, whatever its endpoints' ports.
					a.b.AddSection(bid, strconv.Itoa(int(*br.Port)))
				}
			}
		}
		return
	}
	a.b.AddEdge(sid, a.b.AddNode(ref, nil, 0))
}
