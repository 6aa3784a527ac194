package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Istio ambient's waypoint binding (istio/istio
// pilot/pkg/serviceregistry/ambient: GetUseWaypoint,
// fetchWaypointForService, makeAllowedRoutes): a policy of a kind with
// waypoint targets (policy.Kind.WaypointTargets) applies to a Service only
// at the waypoint the Service is bound to.
const (
	useWaypointLabel          = "istio.io/use-waypoint"
	useWaypointNamespaceLabel = "istio.io/use-waypoint-namespace"
	waypointForLabel          = "istio.io/waypoint-for"
)

// hboneAllowedRoutes reads the allowedRoutes namespaces of a Gateway's
// HBONE listener on port 15008: what decides which namespaces may bind to
// it as a waypoint ("" and nil when it has none: Same).
func hboneAllowedRoutes(u *unstructured.Unstructured) (string, map[string]any) {
	ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
	for _, l := range ls {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		proto, _, _ := unstructured.NestedString(m, "protocol")
		port, _, _ := unstructured.NestedFieldNoCopy(m, "port")
		if proto != "HBONE" || fmt.Sprint(port) != "15008" {
			continue
		}
		from, _, _ := unstructured.NestedString(m, "allowedRoutes", "namespaces", "from")
		sel, _, _ := unstructured.NestedMap(m, "allowedRoutes", "namespaces", "selector")
		return from, sel
	}
	return "", nil
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
// targeting it from the root namespace applies at every waypoint.
const waypointClass = "istio-waypoint"

// unboundService says why Service svc is bound to no waypoint, as Istio
// binds Services: its own istio.io/use-waypoint label, else its
// Namespace's; the waypoint among the objects, serving Service traffic
// (istio.io/waypoint-for service or all, on the Gateway, else its class;
// service by default), and admitting the Service's namespace by its HBONE
// listener's allowedRoutes when it is in another. "" when it is bound.
// Whether the waypoint is ready (its status addresses) is not read.
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
	wp, none, set := useWaypoint(c.graph.Node(id).Labels, svc.Namespace)
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
		return topology.Ref{}, fmt.Sprintf("Service %s is not bound to a waypoint (%s is none); a policy targeting it applies only at its waypoint", svc.Short(), where)
	case !set:
		return topology.Ref{}, fmt.Sprintf("Service %s is not bound to a waypoint (no %s label on it or its Namespace); a policy targeting it applies only at its waypoint", svc.Short(), useWaypointLabel)
	}
	f, ok := c.gateways[wp]
	if !ok {
		return topology.Ref{}, fmt.Sprintf("Service %s names waypoint %s (%s), which is not among the objects", svc.Short(), wp.Short(), where)
	}
	if t := f.waypointFor; t != "" && t != "service" && t != "all" {
		return topology.Ref{}, fmt.Sprintf("Service %s names waypoint %s, which serves %q traffic, not Services' (%s)", svc.Short(), wp.Short(), t, waypointForLabel)
	}
	if wp.Namespace != svc.Namespace && !waypointAdmits(f, wp.Namespace, svc.Namespace, nsLabels) {
		return topology.Ref{}, fmt.Sprintf("Service %s names waypoint %s, whose HBONE listener (port 15008) does not admit namespace %s (allowedRoutes)", svc.Short(), wp.Short(), svc.Namespace)
	}
	return wp, ""
}

// waypointAdmits reports whether waypoint f (in namespace own) admits a
// Service of namespace ns (its labels nsLabels): Same by default, All,
// or Selector over the Namespace's labels.
func waypointAdmits(f gatewayFacts, own, ns string, nsLabels map[string]string) bool {
	switch f.waypointFrom {
	case "All":
		return true
	case "Selector":
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(f.waypointSel, &ls); err != nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		return err == nil && sel.Matches(labels.Set(nsLabels))
	default:
		return ns == own
	}
}

// waypointServices indexes, once per computation, the Services bound to
// each waypoint Gateway (waypointOf).
func (c *computation) waypointServices() map[topology.Ref][]topology.NodeID {
	c.waypointOnce.Do(func() {
		c.boundServices = map[topology.Ref][]topology.NodeID{}
		for _, id := range c.graph.ByKind(topology.KindService) {
			if wp, why := c.waypointOf(c.graph.Node(id).Ref); why == "" && wp.Name != "" {
				c.boundServices[wp] = append(c.boundServices[wp], id)
			}
		}
	})
	return c.boundServices
}

// throughWaypoints reports whether the kind's policies on a waypoint (and
// on the waypoint class) reach the Services bound to it: waypoint targets
// and every policy applying (additive), as istiod lists them at a
// waypoint. (Telemetry's own layering at waypoints is not modelled.)
func (d *kindDP) throughWaypoints() bool {
	return d.kind.WaypointTargets && d.kind.Composition == policy.CompositionAdditive
}

// waypointLevels are the levels above a Direct target n that apply at it
// through waypoints, most general first: for a Service bound to waypoint
// W, W's GatewayClass when it is Istio's waypoint class, then W; for a
// waypoint Gateway, its class. Only levels with attachments are kept.
func (d *kindDP) waypointLevels(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	var gw topology.Ref
	switch ref.GroupKind() {
	case topology.KindService:
		if ref.IsSection() {
			return nil
		}
		wp, why := d.c.waypointOf(ref)
		if why != "" || wp.Name == "" {
			return nil
		}
		gw = wp
	case topology.KindGateway:
		if len(d.c.waypointServices()[ref]) == 0 && d.c.gateways[ref].class != waypointClass {
			return nil
		}
	default:
		return nil
	}
	var out []topology.NodeID
	add := func(r topology.Ref) {
		if id, ok := g.Lookup(r); ok && len(d.atNode[id]) > 0 {
			out = append(out, id)
		}
	}
	waypoint := ref
	if gw.Name != "" {
		waypoint = gw
	}
	if f, ok := d.c.gateways[waypoint]; ok && f.class == waypointClass {
		add(topology.Ref{Group: topology.KindGatewayClass.Group, Kind: topology.KindGatewayClass.Kind, Name: waypointClass})
	}
	if gw.Name != "" {
		add(gw)
	}
	return out
}

// waypointTargets are the Direct targets that the attachments at node n
// also reach through waypoints: for a waypoint Gateway, the Services bound
// to it; for Istio's waypoint class, its Gateways and their Services.
func (d *kindDP) waypointTargets(n topology.NodeID) []topology.NodeID {
	g := d.c.graph
	ref := g.Node(n).Ref
	bound := d.c.waypointServices()
	switch ref.GroupKind() {
	case topology.KindGateway:
		return bound[ref]
	case topology.KindGatewayClass:
		if ref.Name != waypointClass {
			return nil
		}
		var out []topology.NodeID
		for _, id := range g.ByKind(topology.KindGateway) {
			gw := g.Node(id).Ref
			if d.c.gateways[gw].class == waypointClass {
				out = append(out, id)
				out = append(out, bound[gw]...)
			}
		}
		return out
	}
	return nil
}
