package engine

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

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

// unboundService says why Service svc is bound to no waypoint, as Istio
// binds Services: its own istio.io/use-waypoint label, else its
// Namespace's; the waypoint among the objects, serving Service traffic
// (istio.io/waypoint-for service or all, on the Gateway, else its class;
// service by default), and admitting the Service's namespace by its HBONE
// listener's allowedRoutes when it is in another. "" when it is bound.
// Whether the waypoint is ready (its status addresses) is not read.
func (c *computation) unboundService(svc topology.Ref) string {
	id, ok := c.graph.Lookup(svc)
	if !ok {
		return ""
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
		return fmt.Sprintf("Service %s is not bound to a waypoint (%s is none); a policy targeting it applies only at its waypoint", svc.Short(), where)
	case !set:
		return fmt.Sprintf("Service %s is not bound to a waypoint (no %s label on it or its Namespace); a policy targeting it applies only at its waypoint", svc.Short(), useWaypointLabel)
	}
	f, ok := c.gateways[wp]
	if !ok {
		return fmt.Sprintf("Service %s names waypoint %s (%s), which is not among the objects", svc.Short(), wp.Short(), where)
	}
	if t := f.waypointFor; t != "" && t != "service" && t != "all" {
		return fmt.Sprintf("Service %s names waypoint %s, which serves %q traffic, not Services' (%s)", svc.Short(), wp.Short(), t, waypointForLabel)
	}
	if wp.Namespace != svc.Namespace && !waypointAdmits(f, wp.Namespace, svc.Namespace, nsLabels) {
		return fmt.Sprintf("Service %s names waypoint %s, whose HBONE listener (port 15008) does not admit namespace %s (allowedRoutes)", svc.Short(), wp.Short(), svc.Namespace)
	}
	return ""
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
