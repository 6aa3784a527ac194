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
	// The hostnames of the other listeners on its port are theirs: a
	// route's hostname equal to one is not served here (Envoy Gateway's
	// computeHosts).
	others := c.samePortHostnames(l, lp)
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
				if n, ok := gatewayapi.NarrowHostname(lp.hostname, h); ok && !slices.Contains(hosts, any(n)) && !slices.Contains(others, n) {
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

// samePortHostnames are the hostnames of the listeners other than l on
// l's port, of its Gateway and the Gateway's ListenerSets.
func (c *computation) samePortHostnames(l topology.Ref, lp listenerPort) []string {
	gw := l.Object()
	if topology.IsListenerSet(gw.GroupKind()) {
		gw = c.listenerSetGateway(gw)
	}
	id, ok := c.graph.Lookup(gw)
	if !ok {
		return nil
	}
	var out []string
	for _, o := range c.gatewayListeners(id) {
		if op, ok := c.listenerPorts[o]; ok && o != l && op.port == lp.port && op.hostname != "" {
			out = append(out, op.hostname)
		}
	}
	return out
}

// listenerVerdict keys what a policy's rules reading listener say at one
// listener.
type listenerVerdict struct {
	p *policy.Policy
	l topology.Ref
}

// listenerViolations are the rules of p's kind reading listener that do
// not hold at the listeners of target at of the rules' protocols (a TLS
// listener passing TLS through not counting, as for the other rules judged
// there), each problem naming its listener; evaluated once per policy and
// listener. At a whole Gateway or ListenerSet, the listeners another policy
// of the kind targets more specifically (the listener, or its ListenerSet)
// are not judged: the implementation translates the policy for the others
// only (Envoy Gateway's claimed sections).
func (c *computation) listenerViolations(p *policy.Policy, at topology.Ref) []policy.FieldProblem {
	var out []policy.FieldProblem
	for _, l := range c.listenersAt(at) {
		lp, ok := c.listenerPorts[l]
		if !ok || (lp.proto == "TLS" && lp.passthrough) || c.claimedBelow(p.Kind, at, l) {
			continue
		}
		key := listenerVerdict{p, l}
		probs, done := c.listenerVerdicts[key]
		if !done {
			for _, pr := range p.ListenerViolations(c.listenerFactsOf(l), func(v policy.Validation) bool { return v.Judged(c.features) && slices.Contains(v.On, lp.proto) }) {
				pr.Message = fmt.Sprintf("%s (at listener %s)", pr.Message, l.Short())
				probs = append(probs, pr)
			}
			if c.listenerVerdicts == nil {
				c.listenerVerdicts = map[listenerVerdict][]policy.FieldProblem{}
			}
			c.listenerVerdicts[key] = probs
		}
		out = append(out, probs...)
	}
	return out
}

// claimedBelow reports whether, for a policy of kind k at target at (a
// whole Gateway or ListenerSet), listener l is targeted more specifically
// by a policy of k: l itself, or, at a Gateway, l's ListenerSet.
func (c *computation) claimedBelow(k *policy.Kind, at, l topology.Ref) bool {
	if at.IsSection() {
		return false
	}
	claims := c.claimedListeners[k]
	if claims == nil {
		claims = map[topology.Ref]bool{}
		for _, ps := range c.policies {
			if ps.p.Kind == k {
				for _, r := range claimRefs(ps.p) {
					claims[r] = true
				}
			}
		}
		if c.claimedListeners == nil {
			c.claimedListeners = map[*policy.Kind]map[topology.Ref]bool{}
		}
		c.claimedListeners[k] = claims
	}
	return claims[l] || (at.GroupKind() == topology.KindGateway && topology.IsListenerSet(l.Object().GroupKind()) && claims[l.Object()])
}

// targetRefsOf are p's targets by name (not by selector), namespaces
// defaulted.
func targetRefsOf(p *policy.Policy) []topology.Ref {
	var out []topology.Ref
	for _, t := range p.Targets {
		if t.Selector == nil {
			out = append(out, topology.Ref{Group: t.Group, Kind: t.Kind, Namespace: cmp.Or(t.Namespace, p.Ref.Namespace), Name: t.Name, SectionName: t.SectionName})
		}
	}
	return out
}

// claimRefs are p's targets that claim listeners from a policy of its kind
// on their whole Gateway (claimedBelow): a Gateway's listener, a
// ListenerSet or one of its listeners.
func claimRefs(p *policy.Policy) []topology.Ref {
	return slices.DeleteFunc(targetRefsOf(p), func(r topology.Ref) bool {
		gk := r.GroupKind()
		return !(gk == topology.KindGateway && r.IsSection()) && !topology.IsListenerSet(gk)
	})
}
