package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the engine reads of Gateways' and routes' status, for kinds whose
// paths run only through what is ready (policy.Kind.ReadyPathsOnly) and
// whose listeners must have routes attached (policy.ListenerAttachedRoutes)
// or their Gateway addresses (policy.ListenerAddresses). An object whose
// status says nothing yet (a manifest, as `attache -f` reads them) counts
// as ready, with addresses, and its listeners' attached routes are those
// attache attaches: its controller will say so once it runs.

// listenerStatus is what a Gateway's (or ListenerSet's) status says of one
// of its listeners.
type listenerStatus struct {
	// read: the object's status says something (listenerStatusRead);
	// otherwise the fields below are not read.
	read bool
	// found: status.listeners has an entry of the listener's name.
	found bool
	// programmed: that entry's Programmed condition is True.
	programmed bool
	// attachedRoutes is that entry's attachedRoutes.
	attachedRoutes int64
}

// routeParentStatus is one entry of a route's status.parents.
type routeParentStatus struct {
	controller string
	// parent is the entry's parentRef (defaults as a route's parentRefs,
	// its sectionName kept); port its port, 0 when unset.
	parent   topology.Ref
	port     int64
	accepted bool
}

// readiness is what the engine read of status, built once per
// computation when a kind needs it.
type readiness struct {
	// listeners are the listeners of Gateways and ListenerSets, by
	// section ref; ports their ports.
	listeners map[topology.Ref]listenerStatus
	ports     map[topology.Ref]int64
	// routes are the status.parents of the routes that have any.
	routes map[topology.Ref][]routeParentStatus
	// controllers are the Gateways' GatewayClass controllerNames as
	// written (no alias), for the Gateways whose class is among the
	// objects.
	controllers map[topology.Ref]string
	// addressless are the Gateways whose status says something
	// (listenerStatusRead) and holds no status.addresses.
	addressless map[topology.Ref]bool
}

// listenerStatusRead reports whether a Gateway's or ListenerSet's status
// says anything yet: listeners, or a condition of Gateway API's (a type
// without a domain: a controller's own, attache's <domain>/<Kind>Affected
// among them, do not count).
func listenerStatusRead(u *unstructured.Unstructured) bool {
	if ls, _, _ := unstructured.NestedSlice(u.Object, "status", "listeners"); len(ls) > 0 {
		return true
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			if t, _ := m["type"].(string); t != "" && !strings.Contains(t, "/") {
				return true
			}
		}
	}
	return false
}

// statusAddressed reports whether a Gateway's status holds addresses.
func statusAddressed(u *unstructured.Unstructured) bool {
	addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	return len(addrs) > 0
}

// conditionTrue reports whether conditions (a status conditions list)
// hold typ with status True.
func conditionTrue(conds []any, typ string) bool {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// intOf reads an integer of an unstructured object.
func intOf(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return 0
}

// listenerStatuses reads what a Gateway's or ListenerSet's status says:
// whether it says anything (listenerStatusRead), and the first
// status.listeners entry of each name (Kuadrant takes the first).
func listenerStatuses(u *unstructured.Unstructured) (read bool, byName map[string]listenerStatus) {
	if !listenerStatusRead(u) {
		return false, nil
	}
	byName = map[string]listenerStatus{}
	sts, _, _ := unstructured.NestedSlice(u.Object, "status", "listeners")
	for _, st := range sts {
		m, ok := st.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if _, dup := byName[name]; name == "" || dup {
			continue
		}
		conds, _ := m["conditions"].([]any)
		byName[name] = listenerStatus{read: true, found: true, programmed: conditionTrue(conds, "Programmed"), attachedRoutes: intOf(m["attachedRoutes"])}
	}
	return true, byName
}

// routeParentStatuses reads a route's status.parents entries.
func routeParentStatuses(u *unstructured.Unstructured) []routeParentStatus {
	parents, _, _ := unstructured.NestedSlice(u.Object, "status", "parents")
	var out []routeParentStatus
	for _, p := range parents {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		pr, _ := m["parentRef"].(map[string]any)
		ps := routeParentStatus{parent: gatewayapi.ParentRefOf(pr, u.GetNamespace()), port: intOf(pr["port"])}
		ps.controller, _ = m["controllerName"].(string)
		conds, _ := m["conditions"].([]any)
		ps.accepted = conditionTrue(conds, "Accepted")
		out = append(out, ps)
	}
	return out
}

// readReadiness reads the status of the Gateways, ListenerSets and
// routes among objs.
func readReadiness(objs []*unstructured.Unstructured) *readiness {
	r := &readiness{listeners: map[topology.Ref]listenerStatus{}, ports: map[topology.Ref]int64{},
		routes: map[topology.Ref][]routeParentStatus{}, controllers: map[topology.Ref]string{}, addressless: map[topology.Ref]bool{}}
	classes := map[string]string{}
	for _, u := range objs {
		if gkOf(u) == topology.KindGatewayClass {
			classes[u.GetName()], _, _ = unstructured.NestedString(u.Object, "spec", "controllerName")
		}
	}
	for _, u := range objs {
		gk := gkOf(u)
		obj := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		switch {
		case topology.HoldsListeners(gk):
			if gk == topology.KindGateway {
				class, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName")
				if ctl, ok := classes[class]; ok {
					r.controllers[obj] = ctl
				}
			}
			read, byName := listenerStatuses(u)
			if gk == topology.KindGateway && read && !statusAddressed(u) {
				r.addressless[obj] = true
			}
			specs, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
			for _, l := range specs {
				m, ok := l.(map[string]any)
				if !ok {
					continue
				}
				name, _ := m["name"].(string)
				if name == "" {
					continue
				}
				ref := obj.WithSection(name)
				r.ports[ref] = intOf(m["port"])
				ls := byName[name]
				ls.read = read
				r.listeners[ref] = ls
			}
		case slices.Contains(topology.RouteKinds, gk):
			if ps := routeParentStatuses(u); len(ps) > 0 {
				r.routes[obj] = ps
			}
		}
	}
	return r
}

// listenerRead returns what the status of listener l's object says of l,
// when it says anything (listenerStatusRead); false too when no kind reads
// status (r is nil).
func (r *readiness) listenerRead(l topology.Ref) (listenerStatus, bool) {
	if r == nil {
		return listenerStatus{}, false
	}
	ls, ok := r.listeners[l]
	return ls, ok && ls.read
}

// listenerReady says why listener l (a section ref) is not ready: its
// object's status says something, and not that the listener is
// Programmed. "" when it is ready.
func (r *readiness) listenerReady(l topology.Ref) string {
	ls, ok := r.listenerRead(l)
	if !ok || ls.programmed {
		return "" // read nothing (or no kind reads status), or ready
	}
	if !ls.found {
		return fmt.Sprintf("listener %s has no status yet", l.Short())
	}
	return fmt.Sprintf("listener %s is not Programmed", l.Short())
}

// routeReady says why route is not ready below listener l of a Gateway,
// as Kuadrant reads it (IsHTTPRouteReady, IsGRPCRouteReady): its status
// has parents, and the first naming the listener's Gateway with the
// controllerName of the Gateway's class (any, when the class is not among
// the objects; for a GRPCRoute, also the listener's name and port where
// the entry gives them) is not Accepted, or there is none. "" when ready.
func (r *readiness) routeReady(route, l topology.Ref) string {
	if r == nil {
		return "" // no kind reads status
	}
	ps, ok := r.routes[route]
	if !ok {
		return ""
	}
	gw := l.Object()
	ctl, classKnown := r.controllers[gw]
	grpc := route.GroupKind() == topology.KindGRPCRoute
	for _, p := range ps {
		if (classKnown && p.controller != ctl) || p.parent.Object() != gw {
			continue
		}
		if grpc && ((p.parent.SectionName != "" && p.parent.SectionName != l.SectionName) || (p.port != 0 && p.port != r.ports[l])) {
			continue
		}
		if p.accepted {
			return ""
		}
		return fmt.Sprintf("%s %s/%s is not Accepted by Gateway %s/%s", route.Kind, route.Namespace, route.Name, gw.Namespace, gw.Name)
	}
	by := ""
	if classKnown {
		by = " from controller " + ctl
	}
	return fmt.Sprintf("%s %s/%s has no status for Gateway %s/%s%s yet", route.Kind, route.Namespace, route.Name, gw.Namespace, gw.Name, by)
}

// statusDigest is what the engine reads of an object's status for
// readiness and attached routes (readReadiness), as a string: equal for
// two copies of an object when the engine reads no difference.
func statusDigest(u *unstructured.Unstructured) string {
	gk := gkOf(u)
	var b strings.Builder
	switch {
	case topology.HoldsListeners(gk):
		read, byName := listenerStatuses(u)
		if !read {
			return ""
		}
		b.WriteString("read")
		if gk == topology.KindGateway && !statusAddressed(u) {
			b.WriteString("\x02no addresses")
		}
		names := make([]string, 0, len(byName))
		for name := range byName {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ls := byName[name]
			fmt.Fprintf(&b, "\x01%s\x00%t\x00%d", name, ls.programmed, ls.attachedRoutes)
		}
	case slices.Contains(topology.RouteKinds, gk):
		for _, ps := range routeParentStatuses(u) {
			fmt.Fprintf(&b, "\x01%s\x00%s\x00%d\x00%t", ps.controller, ps.parent, ps.port, ps.accepted)
		}
	}
	return b.String()
}

// statusReadChanged reports whether the computation reads a difference
// between two copies of a topology object's status (statusDigest): only
// when a kind reads status.
func (c *computation) statusReadChanged(a, b *unstructured.Unstructured) bool {
	return c.ready != nil && statusDigest(a) != statusDigest(b)
}

// maxUnreadyNamed bounds how many unready listeners and routes a message
// names.
const maxUnreadyNamed = 3

// withUnready adds to cond, the Programmed condition of a policy of kind
// k with reach r over attachments atts, what is not ready on the paths
// those attachments would take, when the policy is in no context and the
// kind's paths run through ready listeners and routes only
// (policy.Kind.ReadyPathsOnly): why it is in the path to nothing.
func (c *computation) withUnready(k *policy.Kind, r Reach, cond Condition, atts []*attachment) Condition {
	if !k.ReadyPathsOnly || r.Contexts != 0 || cond.Status != "False" {
		return cond
	}
	why := c.unreadyOnPaths(k, atts)
	if len(why) == 0 {
		return cond
	}
	cond.Message += "; not ready yet: " + namedAtMost(why)
	return cond
}

// namedAtMost joins the first maxUnreadyNamed of whys, saying how many
// more there are.
func namedAtMost(whys []string) string {
	if len(whys) > maxUnreadyNamed {
		return fmt.Sprintf("%s and %d more", strings.Join(whys[:maxUnreadyNamed], "; "), len(whys)-maxUnreadyNamed)
	}
	return strings.Join(whys, "; ")
}

// unreadyOnPaths lists, sorted, what is not ready (readiness) on the
// paths of kind k through the nodes of atts: the listeners below them,
// and the routes below those listeners, that keep their paths short of
// an effective target; for an attachment on a route or rule, the
// listeners above it and its readiness there.
func (c *computation) unreadyOnPaths(k *policy.Kind, atts []*attachment) []string {
	g := c.graph
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	isRoute := func(r topology.Ref) bool { return slices.Contains(topology.RouteKinds, r.GroupKind()) }
	checkListener := func(l topology.NodeID) {
		lr := g.Node(l).Ref
		if why := c.ready.listenerReady(lr); why != "" {
			add(why)
			return
		}
		for _, rt := range c.routesBelowListener(k, l) {
			add(c.ready.routeReady(g.Node(rt).Ref, lr))
		}
	}
	visited := map[topology.NodeID]bool{}
	for _, a := range atts {
		ref := g.Node(a.node).Ref
		if isRoute(ref) {
			for l := range c.routeListeners(k, ref) {
				if why := c.ready.listenerReady(l); why != "" {
					add(why)
				} else {
					add(c.ready.routeReady(ref.Object(), l))
				}
			}
			continue
		}
		// Down to the listeners (the node itself, for a listener).
		g.Walk([]topology.NodeID{a.node}, topology.Children, func(n topology.NodeID, node *topology.Node) bool {
			if visited[n] {
				return false
			}
			visited[n] = true
			if node.Ref.IsListener() {
				checkListener(n)
				return false
			}
			return !isRoute(node.Ref)
		})
	}
	sort.Strings(out)
	return out
}

// hasAttachedRoutes reports whether listener node n has routes attached
// (policy.ListenerAttachedRoutes): its Gateway's (or ListenerSet's)
// status.listeners entry says attachedRoutes above 0; when that status
// says nothing yet (a manifest), whether attache attaches a route there
// by Gateway API's rules, as the Gateway's controller will count it.
func (c *computation) hasAttachedRoutes(n topology.NodeID) bool {
	node := c.graph.Node(n)
	if ls, ok := c.ready.listenerRead(node.Ref); ok {
		return ls.attachedRoutes > 0
	}
	for _, ch := range node.Children {
		if r := c.graph.Node(ch).Ref; !r.IsSection() && slices.Contains(topology.RouteKinds, r.GroupKind()) {
			return true
		}
	}
	return false
}

// hasAddresses reports whether the Gateway of listener node n (a
// ListenerSet's listener: the Gateway above the ListenerSet) has addresses
// (policy.ListenerAddresses), as its status says; a Gateway whose status
// says nothing yet (a manifest) counts as having them, as it counts as
// ready, and so does a listener whose Gateway is not among the objects.
func (c *computation) hasAddresses(n topology.NodeID) bool {
	if c.ready == nil {
		return true // no status read
	}
	obj := c.graph.Node(n).Ref.Object()
	if topology.IsListenerSet(obj.GroupKind()) {
		id, ok := c.graph.Lookup(obj)
		if !ok {
			return true
		}
		for _, p := range c.graph.Node(id).Parents {
			if r := c.graph.Node(p).Ref; r.GroupKind() == topology.KindGateway && !r.IsSection() {
				return !c.ready.addressless[r]
			}
		}
		return true
	}
	return !c.ready.addressless[obj]
}

// routesBelowListener are the routes that paths of kind k through
// listener node n go on to: its children, and for a kind whose routes
// hang below every listener their parentRefs name
// (policy.Kind.RouteParentRefs), its unadmitted children too, below
// Gateway listeners only.
func (c *computation) routesBelowListener(k *policy.Kind, n topology.NodeID) []topology.NodeID {
	node := c.graph.Node(n)
	if k.RouteParentRefs && node.Ref.GroupKind() != topology.KindGateway {
		return nil // such kinds link routes below Gateway listeners only
	}
	children := node.Children
	if k.RouteParentRefs {
		children = topology.AllChildren(node)
	}
	var rs []topology.NodeID
	for _, ch := range children {
		if r := c.graph.Node(ch).Ref; !r.IsSection() && slices.Contains(topology.RouteKinds, r.GroupKind()) {
			rs = append(rs, ch)
		}
	}
	return rs
}
