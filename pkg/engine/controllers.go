package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// gatewayServed reports whether the implementation of kind k serves
// Gateway gw (a listener or ListenerSet stands for its Gateway): yes,
// unless the kind names the controllers it serves (Kind.Controllers) and
// the Gateway's GatewayClass is among the objects with another
// controllerName; then why names the class and its controller. A Gateway
// whose class attache cannot see counts as served: files often hold no
// GatewayClass.
func (c *computation) gatewayServed(k *policy.Kind, gw topology.Ref) (bool, string) {
	if len(k.Controllers) == 0 {
		return true, ""
	}
	gw = gw.Object()
	if topology.IsListenerSet(gw.GroupKind()) {
		if gw = c.listenerSetGateway(gw); gw == (topology.Ref{}) {
			return true, ""
		}
	}
	f, ok := c.gateways[gw]
	if !ok || !f.classKnown || k.Serves(f.controller) {
		return true, ""
	}
	return false, fmt.Sprintf("Gateway %s/%s (GatewayClass %s, controller %s)", gw.Namespace, gw.Name, f.class, f.controller)
}

// servesText names what the implementation of kind k serves, for
// messages.
func servesText(k *policy.Kind) string {
	return fmt.Sprintf("the implementation of %s serves the GatewayClasses of %s only", k.GroupKind, strings.Join(k.Controllers, ", "))
}

// servedGatewaysAbove is gatewaysAbove(ref) without the Gateways the
// implementation of kind k does not serve.
func (c *computation) servedGatewaysAbove(k *policy.Kind, ref topology.Ref) []topology.Ref {
	gws := c.gatewaysAbove(ref)
	if len(k.Controllers) == 0 {
		return gws
	}
	out := make([]topology.Ref, 0, len(gws))
	for _, gw := range gws {
		if ok, _ := c.gatewayServed(k, gw); ok {
			out = append(out, gw)
		}
	}
	return out
}

// notServed says why the implementation of kind k cannot act on target
// ref: a GatewayClass with another controller, or an object every Gateway
// above which (gatewaysAbove) is of such a class; "" when it can, or when
// no Gateway is above (nothing to judge by).
func (c *computation) notServed(k *policy.Kind, ref topology.Ref) string {
	if len(k.Controllers) == 0 || k.OtherControllersNotProgrammed {
		// Any target is the implementation's, or it accepts them all
		// (and waits for them: withWaiting).
		return ""
	}
	if ref.GroupKind() == topology.KindGatewayClass {
		if ctl, ok := c.classControllers[ref.Name]; ok && !k.Serves(ctl) {
			return fmt.Sprintf("GatewayClass %s has controller %s, and %s", ref.Name, ctl, servesText(k))
		}
		return ""
	}
	gws := c.gatewaysAbove(ref)
	var whys []string
	for _, gw := range gws {
		ok, why := c.gatewayServed(k, gw)
		if ok {
			return ""
		}
		if !slices.Contains(whys, why) {
			whys = append(whys, why)
		}
	}
	if len(whys) == 0 {
		return ""
	}
	if topology.HoldsListeners(ref.GroupKind()) {
		return fmt.Sprintf("%s is another implementation's: %s", whys[0], servesText(k))
	}
	return fmt.Sprintf("%s takes effect only through other implementations' Gateways (%s): %s", ref.Short(), strings.Join(whys, "; "), servesText(k))
}

// withWaiting makes cond, the Programmed condition of a policy of kind k
// over attachments atts, Programmed=False, reason Unknown, naming the
// Gateways its implementation waits for, when the kind's policies are not
// programmed while in a path through another controller's Gateway
// (policy.Kind.OtherControllersNotProgrammed) and one of atts is: on a
// path through a listener and route that are ready (readiness) down to a
// route rule. A policy overridden (in full, or in part where that is not
// programmed either) keeps its condition: its implementation says so
// first.
func (c *computation) withWaiting(k *policy.Kind, cond Condition, atts []*attachment) Condition {
	if !k.OtherControllersNotProgrammed || cond.Reason == ReasonOverridden || NotProgrammedInPart(cond) {
		return cond
	}
	whys := c.waitingFor(k, atts)
	if len(whys) == 0 {
		return cond
	}
	return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonUnknown,
		Message: fmt.Sprintf("Policy is not programmed: its implementation waits for %s to sync (%s)", namedAtMost(whys), servesText(k))}
}

// waitingFor lists, sorted, the Gateways of other controllers (as
// gatewayServed names them) through which a path of kind k from one of
// atts runs, ready, to a route rule.
func (c *computation) waitingFor(k *policy.Kind, atts []*attachment) []string {
	g := c.graph
	seen := map[topology.Ref]bool{}
	var out []string
	add := func(gw topology.Ref) {
		gw = gw.Object()
		if seen[gw] {
			return
		}
		seen[gw] = true
		if ok, why := c.gatewayServed(k, gw); !ok {
			out = append(out, why)
		}
	}
	// readyListener reports whether a ready route with rules hangs below
	// ready listener node l.
	readyListener := func(l topology.NodeID) bool {
		lr := g.Node(l).Ref
		if c.ready.listenerReady(lr) != "" {
			return false
		}
		for _, rt := range c.routesBelowListener(k, l) {
			if c.ready.routeReady(g.Node(rt).Ref, lr) == "" && len(g.Sections(rt)) > 0 {
				return true
			}
		}
		return false
	}
	gatewayReady := func(gw topology.NodeID) bool {
		for _, l := range g.Sections(gw) {
			if readyListener(l) {
				return true
			}
		}
		return false
	}
	for _, a := range atts {
		ref := g.Node(a.node).Ref
		switch gk := ref.GroupKind(); {
		case gk == topology.KindGatewayClass:
			for _, gw := range g.Node(a.node).Children {
				if r := g.Node(gw).Ref; r.GroupKind() == topology.KindGateway && !seen[r] && gatewayReady(gw) {
					add(r)
				}
			}
		case gk == topology.KindGateway && ref.IsSection():
			if !seen[ref.Object()] && readyListener(a.node) {
				add(ref)
			}
		case gk == topology.KindGateway:
			if !seen[ref] && gatewayReady(a.node) {
				add(ref)
			}
		case slices.Contains(topology.RouteKinds, gk):
			for l := range c.routeListeners(k, ref) {
				if l.GroupKind() == topology.KindGateway && !seen[l.Object()] &&
					c.ready.listenerReady(l) == "" && c.ready.routeReady(ref.Object(), l) == "" {
					add(l)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
