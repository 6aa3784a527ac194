package engine

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// routeLocations are, per HTTPRoute and GRPCRoute, the places its rules
// take on its Gateways, written as NGINX Gateway Fabric keys them:
// "{gateway namespace}/{gateway name}:{hostname}:{port}{path}". Two routes
// sharing one are served by one NGINX location, which a policy on only one
// of them cannot be applied to (see RejectRouteOverlap).
type routeLocations struct {
	byRoute map[topology.Ref][]string
	byKey   map[string][]topology.Ref
	// gateway is the Gateway of each location.
	gateway map[string]topology.Ref
}

// routeSpec is what the locations of a route are made of.
type routeSpec struct {
	hostnames []string
	paths     []string
}

// readRouteLocations computes the locations of every route the graph
// attaches to listeners. The hostnames a listener accepts of a route, the
// paths of its matches (an HTTPRoute match without a path, or a rule
// without matches, is the prefix "/"; a GRPCRoute match is
// "/{service}/{method}", "/" without a method) and the listener's port
// follow NGF's findAcceptedHostnames, the API server's defaults and
// ConvertGRPCMatches. A route attached to a ListenerSet's listener is keyed
// by the ListenerSet's Gateway.
func (c *computation) readRouteLocations(topoObjs []*unstructured.Unstructured) *routeLocations {
	specs := map[topology.Ref]routeSpec{}
	forRoutes(topoObjs, func(u *unstructured.Unstructured, gk topology.GroupKind, ns string) {
		var rs routeSpec
		hosts, _, _ := unstructured.NestedSlice(u.Object, "spec", "hostnames")
		for _, h := range hosts {
			if s, ok := h.(string); ok {
				rs.hostnames = append(rs.hostnames, s)
			}
		}
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		for _, r := range rules {
			rm, _ := r.(map[string]any)
			matches, _ := rm["matches"].([]any)
			if len(matches) == 0 {
				rs.paths = append(rs.paths, "/")
			}
			for _, m := range matches {
				mm, _ := m.(map[string]any)
				rs.paths = append(rs.paths, matchPath(gk, mm))
			}
		}
		specs[topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: u.GetName()}] = rs
	})
	ports := c.listenerPorts
	if ports == nil {
		ports = readListenerPorts(topoObjs)
	}
	out := &routeLocations{byRoute: map[topology.Ref][]string{}, byKey: map[string][]topology.Ref{}, gateway: map[string]topology.Ref{}}
	for ref, rs := range specs {
		id, ok := c.graph.Lookup(ref)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, l := range c.graph.Node(id).Parents {
			lref := c.graph.Node(l).Ref
			lp, isListener := ports[lref]
			if !isListener {
				continue
			}
			// The listener's object (a Gateway, or a ListenerSet, whose
			// Gateway keys it).
			owner, ok := c.graph.Lookup(lref.Object())
			if !ok {
				continue
			}
			gw, ok := c.gatewayOf(owner)
			if !ok {
				continue
			}
			g := c.graph.Node(gw).Ref
			for _, h := range acceptedHostnames(lp.hostname, rs.hostnames) {
				for _, p := range rs.paths {
					key := fmt.Sprintf("%s/%s:%s:%d%s", g.Namespace, g.Name, h, lp.port, p)
					if !seen[key] {
						seen[key] = true
						out.byRoute[ref] = append(out.byRoute[ref], key)
						out.byKey[key] = append(out.byKey[key], ref)
						out.gateway[key] = g
					}
				}
			}
		}
	}
	for _, refs := range out.byKey {
		sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	}
	return out
}

// forRoutes calls f with every HTTPRoute and GRPCRoute among objs, its
// kind and its namespace (defaulted as Compute defaults it).
func forRoutes(objs []*unstructured.Unstructured, f func(u *unstructured.Unstructured, gk topology.GroupKind, ns string)) {
	for _, u := range objs {
		gk := gkOf(u)
		if gk != topology.KindHTTPRoute && gk != topology.KindGRPCRoute {
			continue
		}
		ns := u.GetNamespace()
		if ns == "" {
			ns = DefaultNamespace
		}
		f(u, gk, ns)
	}
}

// matchPath is the path NGF keys a route match by.
func matchPath(gk topology.GroupKind, m map[string]any) string {
	if gk == topology.KindGRPCRoute {
		method, _ := m["method"].(map[string]any)
		svc, _ := method["service"].(string)
		name, _ := method["method"].(string)
		if svc != "" && name != "" {
			return "/" + svc + "/" + name
		}
		return "/"
	}
	path, _ := m["path"].(map[string]any)
	if v, ok := path["value"].(string); ok {
		return v
	}
	return "/"
}

// acceptedHostnames are the hostnames a listener (hostname l, "" for none)
// accepts of a route's hostnames, as NGF writes them: the listener's (or
// "*") for a route without hostnames, else the more specific of each
// matching pair.
func acceptedHostnames(l string, route []string) []string {
	if len(route) == 0 {
		if l == "" {
			return []string{"*"}
		}
		return []string{l}
	}
	var out []string
	for _, r := range route {
		if hostMatch(l, r) {
			out = append(out, moreSpecificHostname(l, r))
		}
	}
	return out
}

// hostMatch is NGF's match of a listener hostname with a route hostname.
func hostMatch(l, r string) bool {
	wild := func(a, b string) bool {
		return strings.HasPrefix(a, "*.") && strings.HasSuffix(b, strings.TrimPrefix(a, "*"))
	}
	return l == "" || l == r || wild(l, r) || wild(r, l)
}

// moreSpecificHostname is NGF's GetMoreSpecificHostname of two matching
// hostnames.
func moreSpecificHostname(a, b string) string {
	switch {
	case a == b || b == "":
		return a
	case a == "":
		return b
	case strings.HasPrefix(a, "*."):
		if strings.HasPrefix(b, "*.") && strings.Count(a, ".") > strings.Count(b, ".") {
			return a
		}
		return b
	case strings.HasPrefix(b, "*."):
		return a
	}
	return ""
}

// routeOverlap says why policy p, of a kind that rejects route overlaps,
// cannot be applied: a route it targets shares a location with a route it
// does not target. "" when none does. Routes are checked in ref order, so
// the message names the same pair every time.
func (c *computation) routeOverlap(p *policy.Policy) string {
	if c.locations == nil {
		return ""
	}
	targeted := map[topology.Ref]bool{}
	var routes []topology.Ref
	for _, t := range p.Targets {
		gk := t.GroupKind()
		if t.Selector != nil || t.SectionName != "" || (gk != topology.KindHTTPRoute && gk != topology.KindGRPCRoute) {
			continue
		}
		ref := targetRef(t)
		if _, ok := c.locations.byRoute[ref]; ok && !targeted[ref] {
			targeted[ref] = true
			routes = append(routes, ref)
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].Less(routes[j]) })
	for _, r := range routes {
		for _, key := range c.locations.byRoute[r] {
			if ok, _ := c.gatewayServed(p.Kind, c.locations.gateway[key]); !ok {
				continue // another implementation's Gateway: not its location
			}
			for _, o := range c.locations.byKey[key] {
				if !targeted[o] {
					return fmt.Sprintf("Policy cannot be applied to target %s since another route, %s, shares %s (namespace/gateway-name:hostname:port/path) with it, and it does not target that route",
						r.Short(), o.Short(), key)
				}
			}
		}
	}
	return ""
}
