package engine

import (
	"fmt"
	"slices"
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
	if len(k.Controllers) == 0 {
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
	if g := ref.GroupKind(); g == topology.KindGateway || topology.IsListenerSet(g) {
		return fmt.Sprintf("%s is another implementation's: %s", whys[0], servesText(k))
	}
	return fmt.Sprintf("%s takes effect only through other implementations' Gateways (%s): %s", ref.Short(), strings.Join(whys, "; "), servesText(k))
}
