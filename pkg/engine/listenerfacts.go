package engine

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// routeFacts is what a rule reading listener (policy.ListenerFacts) sees
// of a route, whatever listener it is attached to: its own hostnames and
// the number of its rules' matches.
type routeFacts struct {
	hostnames []string
	matches   int64
}

// readRouteFacts reads the hostnames and match counts of the routes among
// objs, for kinds with rules reading listener. Malformed fields count as
// absent (package gatewayapi reports them).
func readRouteFacts(objs []*unstructured.Unstructured) map[topology.Ref]routeFacts {
	out := map[topology.Ref]routeFacts{}
	for _, u := range objs {
		if !slices.Contains(topology.RouteKinds, gkOf(u)) {
			continue
		}
		var f routeFacts
		hs, _, _ := unstructured.NestedSlice(u.Object, "spec", "hostnames")
		for _, h := range hs {
			if s, ok := h.(string); ok && s != "" {
				f.hostnames = append(f.hostnames, s)
			}
		}
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		for _, r := range rules {
			m, _ := r.(map[string]any)
			ms, _ := m["matches"].([]any)
			f.matches += max(int64(len(ms)), 1)
		}
		out[refOf(u)] = f
	}
	return out
}

// listenerFactsOf builds the facts a rule reading listener sees of
// listener l (policy.ListenerFacts): its name, protocol, port and
// hostname, and the routes attached to it with the hostnames they serve
// there. Built once per listener and computation.
func (c *computation) listenerFactsOf(l topology.Ref) policy.ListenerFacts {
	if f, ok := c.listenerFacts[l]; ok {
		return f
	}
	lp := c.listenerPorts[l]
	routes := []any{}
	if id, ok := c.graph.Lookup(l); ok {
		for _, ch := range c.graph.Node(id).Children {
			r := c.graph.Node(ch).Ref
			if r.IsSection() || !slices.Contains(topology.RouteKinds, r.GroupKind()) {
				continue
			}
			rf := c.routeFacts[r]
			hosts := []any{}
			for _, h := range rf.hostnames {
				if n, ok := gatewayapi.NarrowHostname(lp.hostname, h); ok && !slices.Contains(hosts, any(n)) {
					hosts = append(hosts, n)
				}
			}
			if len(rf.hostnames) == 0 {
				// A route without hostnames serves the listener's, or any.
				hosts = append(hosts, cmp.Or(lp.hostname, "*"))
			}
			routes = append(routes, map[string]any{
				"kind": r.Kind, "namespace": r.Namespace, "name": r.Name,
				"hostnames": hosts, "matches": rf.matches,
			})
		}
	}
	f := policy.ListenerFacts{
		"name": l.SectionName, "protocol": lp.proto, "port": lp.port,
		"hostname": lp.hostname, "routes": routes,
	}
	if c.listenerFacts == nil {
		c.listenerFacts = map[topology.Ref]policy.ListenerFacts{}
	}
	c.listenerFacts[l] = f
	return f
}

// listenerViolations are the rules of p's kind reading listener that do
// not hold at the listeners of target at of the rules' protocols (a TLS
// listener passing TLS through not counting, as for the other rules judged
// there), each problem naming its listener.
func (c *computation) listenerViolations(p *policy.Policy, at topology.Ref) []policy.FieldProblem {
	var out []policy.FieldProblem
	for _, l := range c.listenersAt(at) {
		lp, ok := c.listenerPorts[l]
		if !ok || (lp.proto == "TLS" && lp.passthrough) {
			continue
		}
		for _, pr := range p.ListenerViolations(c.listenerFactsOf(l), func(v policy.Validation) bool { return slices.Contains(v.On, lp.proto) }) {
			pr.Message = fmt.Sprintf("%s (at listener %s)", pr.Message, l.Short())
			out = append(out, pr)
		}
	}
	return out
}
