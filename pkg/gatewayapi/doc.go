// Package gatewayapi adapts Gateway API and core objects, given as
// unstructured objects, to the topology: it adds GatewayClasses, Gateways
// and their listeners, ListenerSets (and their experimental predecessor,
// XListenerSets) and their listeners, routes (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute,
// UDPRoute) and their rules, Services and their ports, Istio's
// ServiceEntries (objects with their labels, the backends of Istio's routes
// and targets at its waypoints), Envoy Gateway's Backends (objects, the
// backends of its routes and policies), and Namespaces to a topology.Builder, links
// them, and indexes ReferenceGrants. It is pure: no I/O, no clients.
//
// Objects are recognised by group and kind, whatever version their
// apiVersion names, and decoded with the unstructured converter into
// projections: structs holding only the fields the hierarchy reads, typed
// with the sigs.k8s.io/gateway-api apis/v1 and k8s.io/api/core/v1 types of
// those fields (v1.6.3 serves every handled Gateway API kind in v1, and
// the older versions' types have the same shape; a test checks it;
// XListenerSet, gateway.networking.x-k8s.io/v1alpha1, is no longer in the
// module, and its fields read here have a ListenerSet's shape). Status
// and every other field are not read. An object whose read fields do not
// decode is reported, naming the field, and skipped.
//
// # Hierarchy
//
//	GatewayClass > Gateway > listener > route > rule > backend
//	Gateway > ListenerSet > listener > route (GEP-1713)
//	Gateway > XListenerSet > listener > route (the same, experimental)
//	Service > route (GAMMA: a parentRef of group "" and kind Service)
//	Service > port
//	HTTPRoute rule > HTTPRoute (kgateway route delegation)
//
// Namespaces are nodes without edges; the engine places them on paths.
//
// # Section names
//
// A Gateway's sections are its listeners, by name, and so are a
// ListenerSet's. A Service's sections are
// its ports, by name, or by the port number in decimal when the port has no
// name. A route's sections are its rules: rules[i].name when set, else
// "rule-<n>", n being the 1-based index of the rule (spec.rules[0] is
// "rule-1"), the convention of Kuadrant's policy-machinery
// (machinery/gateway_api_topology.go). When that default name is the
// explicit name of another rule of the route, the unnamed rule is named
// "rule-<n>-<k>" instead, with the smallest k (from 1) that no other rule of
// the route uses, and the collision is reported.
//
// # Attachment
//
// A route's parentRef to a Gateway attaches it to the listener its
// sectionName names, or to the listeners on its port, or else to every
// listener; always only to listeners that admit the route: by
// allowedRoutes.namespaces (Same by default, All, Selector over the labels
// of the Namespace objects given; None and unknown values admit nothing),
// by allowedRoutes.kinds or the protocol's default kinds, and by hostname
// intersection for HTTPRoute, GRPCRoute and TLSRoute. A parentRef to a
// ListenerSet (kind ListenerSet) attaches the route to that ListenerSet's
// listeners in the same way, Same meaning the ListenerSet's namespace; a
// parentRef to a Gateway never reaches its ListenerSets' listeners, unless
// AddWith's Options.GatewayRouteListenerSets says the Gateway's
// implementation attaches it so (Gloo Gateway: a parentRef without
// sectionName also takes its XListenerSets' listeners, by port and
// admission). A parentRef to a Gateway, ListenerSet, listener or Service
// that is not among the objects links nothing.
//
// An XListenerSet is read exactly as a ListenerSet, in this section and
// the next: a route attaches to it by a parentRef of group
// gateway.networking.x-k8s.io and kind XListenerSet, and the Gateway's
// spec.allowedListeners (the same field in the experimental channel)
// admits it.
//
// A ListenerSet hangs below the Gateway its spec.parentRef names only when
// that Gateway's spec.allowedListeners.namespaces admits the ListenerSet's
// namespace (Same, All, Selector over the labels of the Namespace objects
// given; None, the default when unset, and unknown values admit none).
// Otherwise, or when that Gateway is not among the objects, the ListenerSet
// and its listeners are nodes without a parent, no route attaches to them,
// and a problem on the ListenerSet's spec.parentRef says why.
//
// A rule links to each of its backendRefs (filter-level backends are
// ignored): to the Service when it is among the objects; to a node of its
// own kind (a virtual backend) when its kind is not one this package
// handles; to nothing when it is in another namespace and no ReferenceGrant
// allows it, or when it names a route, but for delegation.
//
// Route delegation is kgateway's and Gloo Gateway's: an HTTPRoute rule's
// backendRef of kind HTTPRoute names a child HTTPRoute (namespace: the
// parent's by default; name "*": every HTTPRoute of that namespace), and
// one of group delegation.kgateway.dev (delegation.gateway.solo.io) and
// kind label selects the HTTPRoutes whose delegation.kgateway.dev/label
// (delegation.gateway.solo.io/label) label is its name (namespace "all":
// in every namespace; Gloo Gateway's form refuses it while a Namespace
// "all" exists). With AddWith's Options.DelegationKinds, a form is
// followed only from routes reached through a Gateway whose
// implementation follows it, or whose implementation is unknown
// (DelegationFollowed); a backendRef not followed is reported and links
// nothing. The rule links to each child that names no parentRefs
// or names the parent by an HTTPRoute parentRef (kind written out; the
// group Gateway API's, written or left out), and has no hostnames (one that has is reported); no ReferenceGrant
// is needed. Children may delegate in turn; a cycle loses an edge in
// topology.Builder.Build. Every rule of a child hangs below the child,
// whatever its matches: which of them kgateway keeps below a delegating
// rule depends on the path (package delegation decides, the engine cuts
// the paths; DecodeHTTPRouteRules reads the matches for it).
package gatewayapi
