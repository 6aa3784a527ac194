package engine

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// listenerPort is a listener's port, whether it is plain HTTP, its
// hostname ("" for none), its protocol and whether it passes TLS through
// (tls.mode Passthrough).
type listenerPort struct {
	port        int64
	http        bool
	hostname    string
	proto       string
	passthrough bool
	// tlsTerminate: it terminates TLS with Secrets of its own namespace
	// (policy.ListenerTLSTerminate).
	tlsTerminate bool
}

// readListenerPorts reads the port and protocol of every listener of the
// Gateways and ListenerSets among objs, by section ref. Malformed
// listeners are left out (package gatewayapi reports them).
func readListenerPorts(objs []*unstructured.Unstructured) map[topology.Ref]listenerPort {
	out := map[topology.Ref]listenerPort{}
	for _, u := range objs {
		gk := gkOf(u)
		if !topology.HoldsListeners(gk) {
			continue
		}
		ls, _, _ := unstructured.NestedSlice(u.Object, "spec", "listeners")
		for _, l := range ls {
			m, ok := l.(map[string]any)
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			proto, _ := m["protocol"].(string)
			host, _ := m["hostname"].(string)
			var port int64
			switch p := m["port"].(type) {
			case int64:
				port = p
			case float64:
				port = int64(p)
			}
			if name == "" || port == 0 {
				continue
			}
			ref := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName(), SectionName: name}
			mode, _, _ := unstructured.NestedString(m, "tls", "mode")
			out[ref] = listenerPort{port: port, http: proto == "HTTP", hostname: host, proto: proto, passthrough: mode == "Passthrough",
				tlsTerminate: terminatesWithOwnSecrets(m, u.GetNamespace())}
		}
	}
	return out
}

// sharedPortConflict says why a kind that rejects shared ports may not
// take the node: a plain-HTTP listener of it (the node, or each of a whole
// ListenerSet's or Gateway's listeners) shares its port with plain-HTTP
// listeners of the same data plane outside the target (its Gateway's, or,
// when the Gateway's class merges its Gateways, those of every Gateway of
// the class), which one Envoy listener would serve with the same
// settings. "" when there is no conflict: a whole Gateway never conflicts
// with its own listeners (Envoy Gateway,
// validatePortOverlapForClientTrafficPolicy).
func (c *computation) sharedPortConflict(id topology.NodeID) string {
	node := c.graph.Node(id)
	ref := node.Ref
	var own []topology.Ref // the target's listeners
	var owner topology.NodeID
	switch gk := ref.GroupKind(); {
	case ref.IsListener():
		own, owner = []topology.Ref{ref}, node.Parents[0]
	case topology.IsListenerSet(gk):
		own, owner = c.sections(id), id
	case gk == topology.KindGateway:
		// Its own listeners never conflict; those of the other Gateways
		// of its data plane (merged Gateways) do.
		if !c.merges(c.gateways[ref].class).merged {
			return ""
		}
		own, owner = c.gatewayListeners(id), id
	default:
		return ""
	}
	gw, ok := c.gatewayOf(owner)
	if !ok {
		return ""
	}
	all, merged := c.dataPlaneListeners(gw)
	var msgs []string
	for _, l := range own {
		lp, ok := c.listenerPorts[l]
		if !ok || !lp.http || !containsRef(all, l) {
			continue // not plain HTTP, or not served (Conflicted)
		}
		var others []string
		for _, o := range all {
			if op, ok := c.listenerPorts[o]; ok && op.http && op.port == lp.port && !containsRef(own, o) {
				others = append(others, o.Short())
			}
		}
		if len(others) > 0 {
			msgs = append(msgs, fmt.Sprintf("listener %s shares port %d with the plain-HTTP listeners %s", l.Short(), lp.port, strings.Join(others, ", ")))
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	if merged != "" {
		merged = " (" + merged + ")"
	}
	return strings.Join(msgs, "; ") + merged + ": one Envoy listener serves them all, so the policy would reach listeners it does not target; Envoy Gateway rejects it there"
}

// gatewayOf is the Gateway of a Gateway or of a ListenerSet it admits.
func (c *computation) gatewayOf(id topology.NodeID) (topology.NodeID, bool) {
	n := c.graph.Node(id)
	if n.Ref.GroupKind() == topology.KindGateway {
		return id, true
	}
	for _, p := range n.Parents {
		if c.graph.Node(p).Ref.GroupKind() == topology.KindGateway {
			return p, true
		}
	}
	return 0, false
}

// gatewayListeners are the listeners of a Gateway and of the ListenerSets
// it admits.
func (c *computation) gatewayListeners(gw topology.NodeID) []topology.Ref {
	out := c.sections(gw)
	for _, ch := range c.graph.Node(gw).Children {
		if topology.IsListenerSet(c.graph.Node(ch).Ref.GroupKind()) {
			out = append(out, c.sections(ch)...)
		}
	}
	return out
}

// sections are the section refs among an object's children.
func (c *computation) sections(id topology.NodeID) []topology.Ref {
	obj := c.graph.Node(id).Ref
	var out []topology.Ref
	for _, ch := range c.graph.Node(id).Children {
		if r := c.graph.Node(ch).Ref; r.IsSection() && r.Object() == obj {
			out = append(out, r)
		}
	}
	return out
}

// terminatesWithOwnSecrets reports whether listener m (of an object in
// namespace ns) terminates TLS with certificates of its own namespace:
// a tls block whose mode is Terminate (the API server's default when
// unset), with certificateRefs, each a core Secret (group "" or "core",
// kind Secret, as defaulted) in ns. This is the listener Kuadrant's
// TLSPolicy issues certificates for (validateGatewayListenerBlock).
func terminatesWithOwnSecrets(m map[string]any, ns string) bool {
	tls, ok := m["tls"].(map[string]any)
	if !ok {
		return false
	}
	if mode, _ := tls["mode"].(string); mode != "" && mode != "Terminate" {
		return false
	}
	refs, _ := tls["certificateRefs"].([]any)
	if len(refs) == 0 {
		return false
	}
	for _, r := range refs {
		rm, ok := r.(map[string]any)
		if !ok {
			return false
		}
		group, _ := rm["group"].(string)
		kind, _ := rm["kind"].(string)
		refNs, _ := rm["namespace"].(string)
		if (group != "" && group != "core") || (kind != "" && kind != "Secret") || (refNs != "" && refNs != ns) {
			return false
		}
	}
	return true
}
