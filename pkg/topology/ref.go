package topology

import (
	"strings"
)

// Ref identifies a target: an object, or a named section of one when
// SectionName is set. Group is "" for the core API group. It is the REF of
// the public JSON output, so its JSON shape must stay stable.
type Ref struct {
	Group       string `json:"group,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	SectionName string `json:"sectionName,omitempty"`
}

// Object returns the ref without its section: the object that holds it.
func (r Ref) Object() Ref { r.SectionName = ""; return r }

// WithSection returns the ref of the named section of r's object.
func (r Ref) WithSection(s string) Ref { r.SectionName = s; return r }

// IsSection reports whether r names a section of an object.
func (r Ref) IsSection() bool { return r.SectionName != "" }

// GroupKind returns r's group and kind.
func (r Ref) GroupKind() GroupKind { return GroupKind{Group: r.Group, Kind: r.Kind} }

// String renders r as Kind[.group] [namespace/]name[#section], the form used
// in messages.
func (r Ref) String() string {
	var b strings.Builder
	b.WriteString(r.GroupKind().String())
	b.WriteByte(' ')
	if r.Namespace != "" {
		b.WriteString(r.Namespace)
		b.WriteByte('/')
	}
	b.WriteString(r.Name)
	if r.SectionName != "" {
		b.WriteByte('#')
		b.WriteString(r.SectionName)
	}
	return b.String()
}

// Short renders r as Kind [namespace/]name[#section], without the group:
// the form for messages meant to be read.
func (r Ref) Short() string {
	s := r.Kind + " "
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	s += r.Name
	if r.SectionName != "" {
		s += "#" + r.SectionName
	}
	return s
}

// Less orders refs by group, kind, namespace, name and section.
func (r Ref) Less(o Ref) bool { return r.Compare(o) < 0 }

// Compare orders refs by group, kind, namespace, name and section; it
// returns -1, 0 or +1.
func (r Ref) Compare(o Ref) int {
	for _, p := range [...][2]string{{r.Group, o.Group}, {r.Kind, o.Kind}, {r.Namespace, o.Namespace}, {r.Name, o.Name}, {r.SectionName, o.SectionName}} {
		if c := strings.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	return 0
}

// GroupKind is an API group and kind. It matches a kind as written in CRD
// annotations: "Kind" for the core group and "Kind.group" otherwise.
type GroupKind struct {
	Group string
	Kind  string
}

// String renders gk as Kind or Kind.group.
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// ParseGroupKind parses "Kind" or "Kind.group" (the first dot separates them).
func ParseGroupKind(s string) GroupKind {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return GroupKind{Kind: s[:i], Group: s[i+1:]}
	}
	return GroupKind{Kind: s}
}

// Well-known API groups.
const (
	GatewayGroup = "gateway.networking.k8s.io"
	// XGatewayGroup is the group of Gateway API's experimental kinds.
	XGatewayGroup = "gateway.networking.x-k8s.io"
	CoreGroup     = ""
)

// Well-known kinds of the default hierarchy.
var (
	KindGatewayClass = GroupKind{GatewayGroup, "GatewayClass"}
	KindGateway      = GroupKind{GatewayGroup, "Gateway"}
	KindListenerSet  = GroupKind{GatewayGroup, "ListenerSet"}
	// KindXListenerSet is ListenerSet's experimental predecessor
	// (gateway-api's experimental channel up to v1.4, group
	// gateway.networking.x-k8s.io, v1alpha1), still the kind Gloo Gateway
	// reads and kgateway reads besides ListenerSet. It is read exactly as
	// a ListenerSet (see IsListenerSet).
	KindXListenerSet = GroupKind{XGatewayGroup, "XListenerSet"}
	KindHTTPRoute    = GroupKind{GatewayGroup, "HTTPRoute"}
	KindGRPCRoute    = GroupKind{GatewayGroup, "GRPCRoute"}
	KindTLSRoute     = GroupKind{GatewayGroup, "TLSRoute"}
	KindTCPRoute     = GroupKind{GatewayGroup, "TCPRoute"}
	KindUDPRoute     = GroupKind{GatewayGroup, "UDPRoute"}
	KindService      = GroupKind{CoreGroup, "Service"}
	KindNamespace    = GroupKind{CoreGroup, "Namespace"}
	// KindServiceImport is the Multi-Cluster Services API's ServiceImport,
	// a backend kind of Gateway API (GEP-1748).
	KindServiceImport = GroupKind{"multicluster.x-k8s.io", "ServiceImport"}
	// KindServiceEntry is Istio's ServiceEntry: a service outside the
	// cluster's registry, a backend of Istio's routes and, bound to an
	// ambient waypoint, a policy target there.
	KindServiceEntry = GroupKind{"networking.istio.io", "ServiceEntry"}
	// KindEnvoyGatewayBackend is Envoy Gateway's Backend: endpoints
	// (addresses, hostnames, Unix sockets) outside the cluster's Services,
	// a backend of its routes and of its policies' external services.
	KindEnvoyGatewayBackend = GroupKind{"gateway.envoyproxy.io", "Backend"}
)

// ClusterScoped reports whether objects of a kind the topology knows have no
// namespace (GatewayClass, Namespace).
func ClusterScoped(gk GroupKind) bool { return gk == KindGatewayClass || gk == KindNamespace }

// IsListenerSet reports whether gk is a ListenerSet kind: Gateway API's
// ListenerSet or its experimental predecessor XListenerSet, which have the
// same fields, attach to Gateways by the same handshake and hold listeners
// the same way (GEP-1713).
func IsListenerSet(gk GroupKind) bool { return gk == KindListenerSet || gk == KindXListenerSet }

// HoldsListeners reports whether objects of kind gk hold listeners: a
// Gateway, or a ListenerSet of either kind (IsListenerSet).
func HoldsListeners(gk GroupKind) bool { return gk == KindGateway || IsListenerSet(gk) }

// IsListener reports whether r is a listener: a section of a Gateway or of
// a ListenerSet of either kind (HoldsListeners).
func (r Ref) IsListener() bool { return r.IsSection() && HoldsListeners(r.GroupKind()) }

// RouteKinds are the route kinds the default hierarchy knows, in order.
var RouteKinds = []GroupKind{KindHTTPRoute, KindGRPCRoute, KindTLSRoute, KindTCPRoute, KindUDPRoute}

// DefaultHierarchy is the full hierarchy of object kinds, most general first.
// Namespaces are placed per path (see Graph docs), not by edges. A
// ListenerSet (GEP-1713) holds more listeners of its Gateway, so it sits
// between the Gateway and the routes attached to its listeners; so does an
// XListenerSet, at the same level.
var DefaultHierarchy = []GroupKind{
	KindGatewayClass, KindNamespace, KindGateway, KindListenerSet, KindXListenerSet,
	KindHTTPRoute, KindGRPCRoute, KindTLSRoute, KindTCPRoute, KindUDPRoute,
	KindService,
}
