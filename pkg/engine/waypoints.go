package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Istio ambient's waypoint binding (istio/istio
// pilot/pkg/serviceregistry/ambient: GetUseWaypoint,
// fetchWaypointForService, makeAllowedRoutes): a policy of a kind with
// waypoint targets (policy.Kind.WaypointTargets) applies to a Service only
// at the waypoint the Service is bound to.
const (
	meshController            = "istio.io/mesh-controller"
	managedLabel              = "gateway.istio.io/managed"
	meshControllerManaged     = "istio.io-mesh-controller"
	eastWestManaged           = "istio.io-eastwest-controller"
	useWaypointLabel          = "istio.io/use-waypoint"
	useWaypointNamespaceLabel = "istio.io/use-waypoint-namespace"
	waypointForLabel          = "istio.io/waypoint-for"
)

// A canary waypoint (istio/istio @ 86c9f01f
// pilot/pkg/serviceregistry/ambient/waypoints.go: ResolveUseWaypointCanary,
// buildWeightedWaypoints; istio.io/api v1.31.4 label and annotation
// docs): ztunnel splits a bound Service's connections between its
// waypoint and the canary by weight, and both serve the Service
// (serviceOwningWaypoints: ServicesForWaypoint lists it at both, whatever
// the weight).
const (
	useWaypointCanaryLabel          = "istio.io/use-waypoint-canary"
	useWaypointCanaryNamespaceLabel = "istio.io/use-waypoint-canary-namespace"
	canaryWeightAnnotation          = CanaryWeightAnnotation
)

// CanaryWeightAnnotation is the annotation of a Service, ServiceEntry or
// Namespace weighing its canary waypoint, which readers that trim
// objects keep.
const CanaryWeightAnnotation = "istio.io/use-waypoint-canary-weight"

// readCanaryWeights reads the canary weight annotation of the Services,
// ServiceEntries and Namespaces among objs that have one.
func readCanaryWeights(objs []*unstructured.Unstructured) map[topology.Ref]string {
	out := map[topology.Ref]string{}
	for _, u := range objs {
		v, ok := u.GetAnnotations()[canaryWeightAnnotation]
		if !ok {
			continue
		}
		switch gk := gkOf(u); gk {
		case topology.KindService, topology.KindServiceEntry, topology.KindNamespace:
			out[topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}] = v
		}
	}
	return out
}

// canaryOf is the canary waypoint of Service (or ServiceEntry) svc, bound
// to waypoint primary, as istiod resolves one: its label
// istio.io/use-waypoint-canary (none when empty or "none"; its namespace
// from istio.io/use-waypoint-canary-namespace, else the Service's), else,
// when the Service has no istio.io/use-waypoint of its own, its
// Namespace's; the weight annotation likewise (absent: 0, which still
// makes a canary), a whole number from 0 to 100; a waypoint other than
// the primary, among the objects and ready, admitting the Service's
// namespace and serving Service traffic. The zero Ref when it has none
// (istiod then reports the canary's error on the Service and keeps the
// primary alone).
func (c *computation) canaryOf(svc, primary topology.Ref) topology.Ref {
	canary, _ := c.canaryWithWeight(svc, primary)
	return canary
}

// canaryWithWeight is canaryOf with the canary's weight: the percent of
// the Service's connections ztunnel sends to the canary, the rest going to
// the primary (buildWeightedWaypoints: primary 100-weight, canary weight).
func (c *computation) canaryWithWeight(svc, primary topology.Ref) (topology.Ref, int) {
	id, ok := c.graph.Lookup(svc)
	if !ok || primary.Name == "" {
		return topology.Ref{}, 0
	}
	own := c.graph.Node(id).Labels
	nsRef := topology.Ref{Kind: topology.KindNamespace.Kind, Name: svc.Namespace}
	var nsLabels map[string]string
	if nsID, ok := c.graph.Lookup(nsRef); ok {
		nsLabels = c.graph.Node(nsID).Labels
	}
	labels, weightFrom := own, []topology.Ref{svc.Object()}
	if name, set := own[useWaypointLabel]; !set || name == "none" {
		// The namespace level, as the primary's.
		if _, has := own[useWaypointCanaryLabel]; !has && nsLabels != nil {
			if _, nsHas := nsLabels[useWaypointCanaryLabel]; nsHas {
				labels = nsLabels
			}
		}
		weightFrom = append(weightFrom, nsRef)
	}
	name := labels[useWaypointCanaryLabel]
	if name == "" || name == "none" {
		return topology.Ref{}, 0
	}
	ns := svc.Namespace
	if v, ok := labels[useWaypointCanaryNamespaceLabel]; ok {
		ns = v
	}
	canary := topology.Ref{Group: topology.KindGateway.Group, Kind: topology.KindGateway.Kind, Namespace: ns, Name: name}
	if canary == primary {
		return topology.Ref{}, 0 // CanarySameAsPrimary
	}
	weight := 0
	for _, r := range weightFrom {
		if v, ok := c.canaryWeights[r]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 100 {
				return topology.Ref{}, 0 // CanaryInvalidWeight
			}
			weight = n
			break
		}
	}
	f, ok := c.gateways[canary]
	if !ok || f.waypointUnready != "" || !waypointAdmits(f, canary.Namespace, svc.Namespace, nsLabels) ||
		(f.waypointFor != "" && f.waypointFor != "service" && f.waypointFor != "all") {
		return topology.Ref{}, 0
	}
	return canary, weight
}

// The inbound binding of a waypoint (istio/istio @ 6cd5e918
// pilot/pkg/serviceregistry/ambient/waypoints.go: makeInboundBinding,
// findBoundListener): how ztunnel sends it traffic, from the annotation
// on the Gateway, else on its class ("<protocol>" or "<protocol>/<port>",
// protocol NONE or PROXY); a waypoint sandwiched behind ztunnel by PROXY
// (kgateway's and agentgateway's waypoint classes) listens with protocol
// istio.io/PROXY.
const (
	inboundBindingAnnotation = "ambient.istio.io/waypoint-inbound-binding"
	proxyListenerProtocol    = "istio.io/PROXY"
)

// inboundBinding is a parsed inbound binding: its protocol and port (0:
// none, also when the port does not parse, as istiod reads it).
type inboundBinding struct {
	protocol string
	port     uint32
}

// parseInboundBinding reads an inbound binding annotation; false when
// istiod ignores it (more than one "/", a protocol other than NONE or
// PROXY).
func parseInboundBinding(v string) (inboundBinding, bool) {
	parts := strings.Split(v, "/")
	if len(parts) > 2 || (parts[0] != "NONE" && parts[0] != "PROXY") {
		return inboundBinding{}, false
	}
	b := inboundBinding{protocol: parts[0]}
	if len(parts) == 2 {
		if n, err := strconv.ParseUint(parts[1], 10, 32); err == nil {
			b.port = uint32(n)
		}
	}
	return b, true
}

// waypointAllowedRoutes reads the allowedRoutes namespaces of the listener
// that decides which namespaces may bind to a Gateway as a waypoint
// (makeAllowedRoutes): the listener its inbound binding names (by port,
// else for PROXY the istio.io/PROXY listener), else its HBONE listener on
// port 15008; "" when it has neither, or the listener says nothing (Same).
// classAnnotations are its class's. Under Selector, the selector parsed; a
// missing or malformed one selects nothing, as Istio's
// LabelSelectorAsSelector of nil does.
func waypointAllowedRoutes(u *unstructured.Unstructured, classAnnotations map[string]string) (string, labels.Selector) {
	ann, ok := inboundBindingOf(u, classAnnotations)
	var match func(proto, port string) bool
	if b, valid := parseInboundBinding(ann); ok && valid {
		switch {
		case b.port != 0:
			match = func(_, port string) bool { return port == strconv.FormatUint(uint64(b.port), 10) }
		case b.protocol == "PROXY":
			match = func(proto, _ string) bool { return proto == proxyListenerProtocol }
		}
	}
	ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
	hbone := func(proto, port string) bool { return proto == "HBONE" && port == "15008" }
	for _, m := range []func(proto, port string) bool{match, hbone} {
		if m == nil {
			continue
		}
		for _, l := range ls {
			l, ok := l.(map[string]any)
			if !ok {
				continue
			}
			proto, _, _ := unstructured.NestedString(l, "protocol")
			port, _, _ := unstructured.NestedFieldNoCopy(l, "port")
			if m(proto, fmt.Sprint(port)) {
				return listenerNamespaces(l)
			}
		}
	}
	return "", nil
}

// inboundBindingOf is the inbound binding annotation of Gateway u: its
// own when it has one, whatever its value, else its class's
// (getGatewayOrGatewayClassAnnotation); false when neither has one.
func inboundBindingOf(u *unstructured.Unstructured, classAnnotations map[string]string) (string, bool) {
	if v, ok := u.GetAnnotations()[inboundBindingAnnotation]; ok {
		return v, true
	}
	v, ok := classAnnotations[inboundBindingAnnotation]
	return v, ok
}

// listenerNamespaces reads a listener's allowedRoutes namespaces (see
// waypointAllowedRoutes).
func listenerNamespaces(m map[string]any) (string, labels.Selector) {
	from, _, _ := unstructured.NestedString(m, "allowedRoutes", "namespaces", "from")
	if from != "Selector" {
		return from, nil
	}
	raw, found, err := unstructured.NestedMap(m, "allowedRoutes", "namespaces", "selector")
	if !found || err != nil {
		return from, labels.Nothing()
	}
	var sel metav1.LabelSelector
	if runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel) != nil {
		return from, labels.Nothing()
	}
	parsed, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return from, labels.Nothing()
	}
	return from, parsed
}

// StatusReadChanged reports whether the engine may read a difference
// between two copies of an object's status: of a Gateway, whether istiod
// would take it for a waypoint yet (its status addresses); of a Gateway or
// ListenerSet, its listeners' Programmed conditions and attached routes,
// and whether a Gateway whose status says something has addresses;
// of a route, its parents' controllers, parentRefs and Accepted
// conditions (statusDigest); of a cert-manager issuer, the conditions it
// holds True. Adapters that skip status-only updates must not skip these.
func StatusReadChanged(a, b *unstructured.Unstructured) bool {
	if gkOf(b) == topology.KindGateway && waypointReadiness(a) != waypointReadiness(b) {
		return true
	}
	return statusDigest(a) != statusDigest(b) || holderCondsDigest(a) != holderCondsDigest(b)
}

// waypointReadiness says whether istiod would take a Gateway for a
// waypoint yet (WaypointsCollection): only once its status has addresses,
// which its controller sets when the waypoint's deployment has a ready
// pod. A Gateway whose status has neither addresses nor a condition of
// Gateway API's (types without a domain: a controller's own, such as
// attache's <domain>/<Kind>Affected, do not count; a manifest, as
// `attache -f` reads them, has none) is taken as ready: attache then
// answers for the Gateway as declared. "" when ready, else why not.
func waypointReadiness(u *unstructured.Unstructured) string {
	if addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses"); len(addrs) > 0 {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			if t, _ := m["type"].(string); t != "" && !strings.Contains(t, "/") {
				return "it has no status.addresses yet (istiod binds to a waypoint once its deployment has a ready pod)"
			}
		}
	}
	return ""
}

// useWaypoint reads the istio.io/use-waypoint labels of an object in
// namespace ns: the waypoint named (its namespace from
// istio.io/use-waypoint-namespace, else ns), none when it says "none",
// and whether it has the label at all.
func useWaypoint(l map[string]string, ns string) (wp topology.Ref, none, set bool) {
	name, set := l[useWaypointLabel]
	if !set {
		return topology.Ref{}, false, false
	}
	if name == "none" {
		return topology.Ref{}, true, true
	}
	if v, ok := l[useWaypointNamespaceLabel]; ok {
		ns = v
	}
	return topology.Ref{Group: topology.KindGateway.Group, Kind: topology.KindGateway.Kind, Namespace: ns, Name: name}, false, true
}

// waypointClass is the GatewayClass of Istio's waypoints: a policy
// targeting it from the root namespace applies at every waypoint, of that
// class or another of Istio's mesh controller (istiod's ShouldAttachPolicy
// checks the targetRef's name and that the proxy is a waypoint, not the
// proxy's class).
const waypointClass = "istio-waypoint"

// unboundService says why Service (or ServiceEntry) svc is bound to no
// waypoint, as Istio binds them: its own istio.io/use-waypoint label, else its
// Namespace's; the waypoint among the objects, serving Service traffic
// (istio.io/waypoint-for service or all, on the Gateway, else its class;
// service by default), and admitting the Service's namespace by its HBONE
// listener's allowedRoutes when it is in another. "" when it is bound.
// The waypoint must be ready (waypointReadiness).
func (c *computation) unboundService(svc topology.Ref) string {
	_, why := c.waypointOf(svc)
	return why
}

// waypointOf is the waypoint Gateway Service svc is bound to, or why it is
// bound to none (see unboundService).
func (c *computation) waypointOf(svc topology.Ref) (topology.Ref, string) {
	id, ok := c.graph.Lookup(svc)
	if !ok {
		return topology.Ref{}, ""
	}
	own := c.graph.Node(id).Labels
	if m := own[managedLabel]; m == meshControllerManaged || m == eastWestManaged {
		// A waypoint's (or east-west gateway's) own Service takes none.
		return topology.Ref{}, fmt.Sprintf("%s is a waypoint's own Service (%s=%s), which is bound to no waypoint", svc.Short(), managedLabel, m)
	}
	wp, none, set := useWaypoint(own, svc.Namespace)
	var nsLabels map[string]string
	if nsID, ok := c.graph.Lookup(topology.Ref{Kind: topology.KindNamespace.Kind, Name: svc.Namespace}); ok {
		nsLabels = c.graph.Node(nsID).Labels
	}
	where := "its label " + useWaypointLabel
	if !set {
		wp, none, set = useWaypoint(nsLabels, svc.Namespace)
		where = "its Namespace's label " + useWaypointLabel
	}
	switch {
	case none:
		return topology.Ref{}, fmt.Sprintf("%s is not bound to a waypoint (%s is none)%s", svc.Short(), where, appliesAtWaypointOnly)
	case !set:
		return topology.Ref{}, fmt.Sprintf("%s is not bound to a waypoint (no %s label on it or its Namespace)%s", svc.Short(), useWaypointLabel, appliesAtWaypointOnly)
	}
	f, ok := c.gateways[wp]
	if !ok {
		return topology.Ref{}, fmt.Sprintf("%s names waypoint %s (%s), which is not among the objects", svc.Short(), wp.Short(), where)
	}
	if f.waypointUnready != "" {
		return topology.Ref{}, fmt.Sprintf("%s names waypoint %s (%s), which is not ready: %s", svc.Short(), wp.Short(), where, f.waypointUnready)
	}
	if t := f.waypointFor; t != "" && t != "service" && t != "all" {
		return topology.Ref{}, fmt.Sprintf("%s names waypoint %s, which serves %q traffic, not Services' (%s)", svc.Short(), wp.Short(), t, waypointForLabel)
	}
	if !waypointAdmits(f, wp.Namespace, svc.Namespace, nsLabels) {
		return topology.Ref{}, fmt.Sprintf("%s names waypoint %s, whose %s does not admit namespace %s (allowedRoutes)", svc.Short(), wp.Short(), f.waypointListener(), svc.Namespace)
	}
	return wp, ""
}

// appliesAtWaypointOnly ends the messages of waypointOf for a Service
// bound to no waypoint: what it means for the policies targeting it.
const appliesAtWaypointOnly = "; a policy targeting it applies only at its waypoint"

// waypointAdmits reports whether waypoint f (in namespace own) admits a
// Service of namespace ns (its labels nsLabels): Same by default (own
// namespace only), All, or Selector over the Namespace's labels (its own
// namespace too only when selected).
func waypointAdmits(f gatewayFacts, own, ns string, nsLabels map[string]string) bool {
	switch f.waypointFrom {
	case "All":
		return true
	case "Selector":
		return f.waypointSel != nil && f.waypointSel.Matches(labels.Set(nsLabels))
	default:
		return ns == own
	}
}

// waypointServices indexes, once per computation, the Services (and
// Istio's ServiceEntries, bound the same way) bound to each waypoint
// Gateway (waypointOf), and each one's binding; and those bound to one of
// Istio's waypoints in another namespace, under their namespace and their
// waypoint's (crossBound).
func (c *computation) waypointServices() map[topology.Ref][]topology.NodeID {
	c.waypointOnce.Do(func() {
		c.boundServices = map[topology.Ref][]topology.NodeID{}
		c.serviceWaypoint = map[topology.NodeID]topology.Ref{}
		c.serviceCanary = map[topology.NodeID]topology.Ref{}
		c.crossBound = map[string][]topology.NodeID{}
		for _, id := range slices.Concat(c.graph.ByKind(topology.KindService), c.graph.ByKind(topology.KindServiceEntry)) {
			ref := c.graph.Node(id).Ref
			if wp, why := c.waypointOf(ref); why == "" && wp.Name != "" {
				c.boundServices[wp] = append(c.boundServices[wp], id)
				c.serviceWaypoint[id] = wp
				if canary := c.canaryOf(ref, wp); canary.Name != "" {
					c.boundServices[canary] = append(c.boundServices[canary], id)
					c.serviceCanary[id] = canary
				}
				if wp.Namespace != ref.Namespace && c.isWaypoint(wp) {
					c.crossBound[ref.Namespace] = append(c.crossBound[ref.Namespace], id)
					c.crossBound[wp.Namespace] = append(c.crossBound[wp.Namespace], id)
					c.crossBoundAll = append(c.crossBoundAll, id)
				}
			}
		}
	})
	return c.boundServices
}

// boundWaypoint is the waypoint Service node n is bound to (waypointOf),
// from the index; the zero Ref when none.
func (c *computation) boundWaypoint(n topology.NodeID) topology.Ref {
	c.waypointServices()
	return c.serviceWaypoint[n]
}

// isWaypoint reports whether Gateway gw is one of Istio's waypoints (its
// class is the waypoint class, or of Istio's mesh controller): only there
// do its policies, and its class's, apply for the Services bound to it.
func (c *computation) isWaypoint(gw topology.Ref) bool {
	f, ok := c.gateways[gw]
	return ok && (f.class == waypointClass || (f.classKnown && f.controller == meshController))
}

// kgatewayWaypointClass is the GatewayClass of kgateway's waypoints, the
// one name its waypoint translator looks policies up by
// (waypointquery/waypoint_authz.go).
const kgatewayWaypointClass = "kgateway-waypoint"

// isKgatewayWaypoint reports whether Gateway gw is one of kgateway's
// waypoints (of its waypoint class): kgateway applies the Istio
// AuthorizationPolicies targeting it to every Service bound to it
// (waypoint_translator.go buildServiceChains:
// GetAuthorizationPoliciesForGateway with
// GetAuthorizationPoliciesForService).
func (c *computation) isKgatewayWaypoint(gw topology.Ref) bool {
	f, ok := c.gateways[gw]
	return ok && f.class == kgatewayWaypointClass && (!f.classKnown || f.controller == profiles.KGatewayController)
}

// throughWaypoints reports whether the kind's policies on a waypoint (and
// on the waypoint class) reach the Services bound to it: waypoint targets
// and every policy applying (additive), as istiod lists them at a
// waypoint. Telemetry layers otherwise: telemetryAtWaypoints.
func (d *kindDP) throughWaypoints() bool {
	return d.kind.WaypointTargets && d.kind.Composition == policy.CompositionAdditive
}

// waypointTelemetry reports whether kind k is layered at waypoints as
// istiod layers Telemetry there: waypoint targets and composition
// istio-telemetry (see telemetryLevels).
func waypointTelemetry(k *policy.Kind) bool {
	return k.WaypointTargets && k.Composition == policy.CompositionIstioTelemetry
}

// telemetryAtWaypoints is waypointTelemetry for the kind computed.
func (d *kindDP) telemetryAtWaypoints() bool { return waypointTelemetry(d.kind) }

// waypointClassNode is the node of Istio's waypoint GatewayClass.
func (c *computation) waypointClassNode() (topology.NodeID, bool) {
	return c.graph.Lookup(topology.Ref{Group: topology.KindGatewayClass.Group, Kind: topology.KindGatewayClass.Kind, Name: waypointClass})
}

// telemetryLevels are the levels whose attachments make up target n's
// Telemetry at a waypoint, most general first, as istiod gathers them
// (istio/istio pilot/pkg/model/telemetry.go applicableTelemetries): the
// root namespace's namespace-wide Telemetry, the waypoint's namespace's,
// for a Service of another namespace that namespace's, then the
// Telemetries of ONE namespace that target the waypoint or the Service
// (ShouldAttachPolicy): the waypoint's own for its own listeners, the
// Service's for the Service's chain.
//
//   - A waypoint Gateway W (its own listeners): the waypoint class when W
//     is in the root namespace (whatever W's class), then W, where the
//     namespace-wide Telemetries of the root namespace and of W's are
//     attached besides those targeting it (resolveUntargeted).
//   - A Service S bound to waypoint W: the waypoint class when S is in the
//     root namespace; W when S is in W's namespace (its namespace-wide and
//     targeting Telemetries); then S: those targeting it, and, S being in
//     another namespace than W, the namespace-wide ones of the root
//     namespace, W's and S's, attached to S.
//
// Nil for any other target: its levels are the usual ones. (A kind with
// waypoint targets has no section targets: its targetRefs carry no
// sectionName, policy.Kind.NoSectionNames.)
func (d *kindDP) telemetryLevels(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	root := d.kind.Untargeted.Root()
	classLevel := func(ns string) []topology.NodeID {
		if ns != root {
			return nil
		}
		if id, ok := d.c.waypointClassNode(); ok {
			return []topology.NodeID{id}
		}
		return nil
	}
	switch ref.GroupKind() {
	case topology.KindGateway:
		if ref.IsSection() || !d.c.isWaypoint(ref) {
			return nil
		}
		return append(classLevel(ref.Namespace), n)
	case topology.KindService, topology.KindServiceEntry:
		if ref.IsSection() {
			return nil
		}
		wp := d.c.boundWaypoint(n)
		if wp.Name == "" || !d.c.isWaypoint(wp) {
			return nil
		}
		out := classLevel(ref.Namespace)
		if wp.Namespace == ref.Namespace {
			if id, ok := g.Lookup(wp); ok {
				out = append(out, id)
			}
		}
		return append(out, n)
	}
	return nil
}

// telemetryTargets are the targets besides n whose Telemetry levels
// (telemetryLevels) hold n: for a waypoint, the Services of its namespace
// bound to it; for the waypoint class, the waypoints of the root namespace
// (whatever their class) and the Services of the root namespace bound to
// one.
func (d *kindDP) telemetryTargets(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	if ref.IsSection() {
		return nil
	}
	bound := d.c.waypointServices()
	var out []topology.NodeID
	switch ref.GroupKind() {
	case topology.KindGateway:
		if !d.c.isWaypoint(ref) {
			return nil
		}
		for _, s := range bound[ref] {
			if g.Node(s).Ref.Namespace == ref.Namespace {
				out = append(out, s)
			}
		}
	case topology.KindGatewayClass:
		if ref.Name != waypointClass {
			return nil
		}
		root := d.kind.Untargeted.Root()
		for _, id := range g.ByKind(topology.KindGateway) {
			gw := g.Node(id).Ref
			if !d.c.isWaypoint(gw) {
				continue
			}
			if gw.Namespace == root {
				out = append(out, id)
			}
			for _, s := range bound[gw] {
				if g.Node(s).Ref.Namespace == root {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// waypointPath is what a Direct target n is reached through, most general
// first: for a Service bound to a waypoint W of Istio's,
// the waypoint class, then W; for a waypoint Gateway, the waypoint class
// (whatever the waypoint's own class: a policy on the waypoint class
// applies at every waypoint). Its levels with attachments are the stack's;
// all of it is the context's path.
func (d *kindDP) waypointPath(n topology.NodeID) []topology.NodeID {
	ref := d.c.graph.Node(n).Ref
	switch ref.GroupKind() {
	case topology.KindService, topology.KindServiceEntry:
		if ref.IsSection() {
			return nil
		}
		if gw := d.c.boundWaypoint(n); gw.Name != "" {
			return d.waypointPathVia(gw)
		}
	case topology.KindGateway:
		if !ref.IsSection() && d.c.isWaypoint(ref) {
			if id, ok := d.c.waypointClassNode(); ok {
				return []topology.NodeID{id}
			}
		}
	}
	return nil
}

// waypointPaths are the waypoint paths of a Direct target n: its
// waypointPath, and for a Service with a canary waypoint (canaryOf) the
// path through the canary too (both serve it; nil when the canary is
// none of Istio's waypoints, as a primary that is none).
//
// A waypoint the kind's implementation does not serve (another
// implementation's, policy.Kind.Controllers) gives no path: no policy of
// the kind applies there. One it serves that is none of Istio's (kgateway's
// waypoint, for AuthorizationPolicy) gives that waypoint, then the Service.
func (d *kindDP) waypointPaths(n topology.NodeID) [][]topology.NodeID {
	ref := d.c.graph.Node(n).Ref
	primary := topology.Ref{}
	if gk := ref.GroupKind(); (gk == topology.KindService || gk == topology.KindServiceEntry) && !ref.IsSection() {
		primary = d.c.boundWaypoint(n)
	}
	if primary.Name == "" {
		return [][]topology.NodeID{d.waypointPath(n)}
	}
	var paths [][]topology.NodeID
	if ok, _ := d.c.gatewayServed(d.kind, primary); ok {
		paths = append(paths, d.waypointPath(n))
	}
	if canary, ok := d.c.serviceCanary[n]; ok && d.c.throughWaypointsKind(d.kind) {
		if served, _ := d.c.gatewayServed(d.kind, canary); served {
			paths = append(paths, d.waypointPathVia(canary))
		}
	}
	return paths
}

// waypointPathVia is the waypoint path of a Service through waypoint
// Gateway gw: the waypoint class, then gw; gw alone for one of kgateway's
// waypoints, for a kind reaching Services through waypoints (kgateway
// also applies the policies on its waypoint class from the root namespace,
// which istiod, and so attache, calls Invalid: not modelled); nil when gw
// is none of these.
func (d *kindDP) waypointPathVia(gw topology.Ref) []topology.NodeID {
	if d.throughWaypoints() && d.c.isKgatewayWaypoint(gw) {
		id, ok := d.c.graph.Lookup(gw)
		if !ok {
			return nil
		}
		if cls, ok := d.kgatewayClassNode(gw); ok {
			return []topology.NodeID{cls, id}
		}
		return []topology.NodeID{id}
	}
	if !d.c.isWaypoint(gw) {
		return nil
	}
	var out []topology.NodeID
	if id, ok := d.c.waypointClassNode(); ok {
		out = append(out, id)
	}
	if id, ok := d.c.graph.Lookup(gw); ok {
		out = append(out, id)
	}
	return out
}

// kgatewayClassNode is, for one of kgateway's waypoints gw outside the
// root namespace, its GatewayClass's node: kgateway applies the policies
// on its waypoint class from the root namespace there (waypointquery
// GetAuthorizationPoliciesForGatewayClass, skipped for a waypoint in the
// root namespace); false for a kind its implementation does not read
// there, or a class not among the objects.
func (d *kindDP) kgatewayClassNode(gw topology.Ref) (topology.NodeID, bool) {
	if gw.Namespace == d.kind.Untargeted.Root() || !d.kind.Serves(profiles.KGatewayController) {
		return 0, false
	}
	return d.c.graph.Lookup(topology.Ref{Group: topology.KindGatewayClass.Group, Kind: topology.KindGatewayClass.Kind, Name: kgatewayWaypointClass})
}

// kgatewayWaypointClass reports whether a policy of kind k targeting
// GatewayClass ref (of controller ctl) is one kgateway applies at its
// waypoints: kgateway's waypoint class, for a kind reaching Services
// through waypoints that kgateway reads (AuthorizationPolicy).
func (c *computation) kgatewayWaypointClass(k *policy.Kind, ref topology.Ref, ctl string) bool {
	return ref.Name == kgatewayWaypointClass && ctl == profiles.KGatewayController && c.throughWaypointsKind(k) && k.Serves(profiles.KGatewayController)
}

// throughWaypointsKind is kindDP.throughWaypoints for kind k.
func (c *computation) throughWaypointsKind(k *policy.Kind) bool {
	return k.WaypointTargets && k.Composition == policy.CompositionAdditive
}

// waypointTargets are the Direct targets that the attachments at node n
// also reach through waypoints: for a waypoint Gateway, the Services bound
// to it; for Istio's waypoint class, every waypoint (whatever its class)
// and their Services.
func (d *kindDP) waypointTargets(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	bound := d.c.waypointServices()
	var out []topology.NodeID
	switch ref.GroupKind() {
	case topology.KindGateway:
		if !ref.IsSection() && (d.c.isWaypoint(ref) || d.c.isKgatewayWaypoint(ref)) {
			out = append(out, bound[ref]...)
		}
	case topology.KindGatewayClass:
		if ref.Name == kgatewayWaypointClass {
			// kgateway: the Services bound to its waypoints outside the
			// root namespace.
			for _, id := range g.ByKind(topology.KindGateway) {
				if gw := g.Node(id).Ref; d.c.isKgatewayWaypoint(gw) && gw.Namespace != d.kind.Untargeted.Root() {
					out = append(out, bound[gw]...)
				}
			}
			return out
		}
		if ref.Name != waypointClass {
			return nil
		}
		seen := map[topology.NodeID]bool{}
		for _, id := range g.ByKind(topology.KindGateway) {
			gw := g.Node(id).Ref
			if d.c.isWaypoint(gw) {
				out = append(out, id)
				for _, svc := range bound[gw] {
					// A Service with a canary is bound under both.
					if !seen[svc] {
						seen[svc] = true
						out = append(out, svc)
					}
				}
			}
		}
	}
	return out
}
