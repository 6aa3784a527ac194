package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
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
	if gk := ref.GroupKind(); k.WaypointTargets && !ref.IsSection() && (gk == topology.KindService || gk == topology.KindServiceEntry) {
		// Such a target applies at its waypoint only (an unbound one:
		// unboundService says so): judged by that waypoint, and by its
		// canary, either serving it.
		id, ok := c.graph.Lookup(ref)
		if !ok {
			return ""
		}
		wp := c.boundWaypoint(id)
		if wp.Name == "" {
			return ""
		}
		served, why := c.gatewayServed(k, wp)
		if canary, has := c.serviceCanary[id]; has && !served {
			served, _ = c.gatewayServed(k, canary)
		}
		if served {
			return ""
		}
		return fmt.Sprintf("%s is bound to waypoint %s, another implementation's: %s", ref.Short(), why, servesText(k))
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

// withWaiting adjusts cond, the Programmed condition of a policy of kind
// k over attachments atts with reach r, for a kind whose policies are not
// programmed while in a path through another controller's Gateway
// (policy.Kind.OtherControllersNotProgrammed), by what the paths through
// such Gateways say, as Kuadrant's status updaters read every path: its
// effective policies are computed there too, though it programs none.
// Of the ready paths (readiness) from atts down to an effective target
// through such Gateways (unservedPaths):
//   - where some of what the policy sets is in effect, its implementation
//     waits for that Gateway: Programmed=False, reason Unknown, naming
//     them, whatever the policy does elsewhere (overridden in part where
//     that is not programmed either, policy.Kind.PartlyOverriddenNotProgrammed,
//     is said first);
//   - where it loses some of what it sets, it is overridden there: in
//     full when it is in effect nowhere (Overridden), else in part
//     (PartiallyProgrammed, or not programmed in part for such kinds).
func (c *computation) withWaiting(k *policy.Kind, r Reach, cond Condition, atts []*attachment) Condition {
	if !k.OtherControllersNotProgrammed || cond.Type != CondProgrammed {
		return cond
	}
	v := c.unservedPaths(k, atts)
	servedAffected := r.Contexts > r.None
	switch {
	case len(v.waiting) == 0 && !v.lost:
		return cond
	case !servedAffected && len(v.waiting) == 0:
		// In effect nowhere, and lost somewhere: overridden in full.
		if cond.Reason == ReasonOverridden {
			cond.Message += "; and on the paths through " + v.gatewaysLost() + ": " + c.lossText(v.lostTo)
			return cond
		}
		return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonOverridden,
			Message: fmt.Sprintf("Policy is overridden on the paths through %s, which its implementation computes but does not program (%s): %s", v.gatewaysLost(), servesText(k), c.lossText(v.lostTo))}
	case k.PartlyOverriddenNotProgrammed && (v.lost || r.Full < r.Contexts):
		// Its implementation reports a rule lost before it waits.
		if NotProgrammedInPart(cond) {
			if v.lost {
				cond.Message += "; and on the paths through " + v.gatewaysLost() + ": " + c.lossText(v.lostTo)
			}
			return cond
		}
		var why []string
		if r.Full < r.Contexts {
			why = append(why, c.lossSummary(atts))
		}
		if v.lost {
			why = append(why, fmt.Sprintf("on the paths through %s, which its implementation computes but does not program (%s): %s", v.gatewaysLost(), servesText(k), c.lossText(v.lostTo)))
		}
		return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonUnknown,
			Message: notProgrammedInPartLead + ": " + strings.Join(why, "; ")}
	case len(v.waiting) > 0:
		return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonUnknown,
			Message: fmt.Sprintf("Policy is not programmed: its implementation waits for %s to sync (%s)", namedAtMost(v.waiting), servesText(k))}
	}
	// In effect on served paths only, lost on some path through another
	// controller's Gateway.
	if cond.Reason == ReasonProgrammed && cond.Status == "True" {
		cond.Reason = ReasonPartiallyProgrammed
	}
	cond.Message += fmt.Sprintf("; overridden in part on the paths through %s, which its implementation computes but does not program: %s", v.gatewaysLost(), c.lossText(v.lostTo))
	return cond
}

// hasUnservedGateway reports whether some Gateway among the objects is of
// a class whose controller the implementation of kind k does not serve.
func (c *computation) hasUnservedGateway(k *policy.Kind) bool {
	for gw := range c.gateways {
		if ok, _ := c.gatewayServed(k, gw); !ok {
			return true
		}
	}
	return false
}

// unservedVerdict is what the ready paths of a policy through Gateways its
// implementation does not serve say (unservedPaths).
type unservedVerdict struct {
	// waiting names (as gatewayServed does), sorted, the Gateways on
	// whose paths some of what the policy sets is in effect.
	waiting []string
	// lost: on some path it loses some of what it sets; lostVia are those
	// Gateways (sorted names), lostTo who beat it there, with the fields.
	lost    bool
	lostVia []string
	lostTo  map[merge.Src]map[string]bool
}

// gatewaysLost names the Gateways where the policy lost something.
func (v unservedVerdict) gatewaysLost() string { return namedAtMost(v.lostVia) }

// unservedPaths folds, for a kind with OtherControllersNotProgrammed, the
// ready paths from the nodes of atts (the attachments of one policy)
// through the Gateways its implementation does not serve down to the
// kind's effective targets (a route's rules, or the route), as the kind's
// contexts are folded elsewhere, and says where the policy is in effect
// and where it loses something. A kind whose paths hold Namespaces or run
// below route delegation is not folded there: every such Gateway counts
// as one where it is in effect.
func (c *computation) unservedPaths(k *policy.Kind, atts []*attachment) unservedVerdict {
	var v unservedVerdict
	if len(atts) == 0 {
		return v
	}
	ps := atts[0].pol
	d := c.dps[k]
	foldable := d != nil && !d.useNs && c.adm == nil
	folds := map[stackID]*stackResult{}
	waiting, lostVia := map[string]bool{}, map[string]bool{}
	c.eachUnservedPath(k, atts, func(why string, nodes []topology.NodeID) {
		if !foldable {
			waiting[why] = true
			return
		}
		var s stackID
		for _, n := range nodes {
			if len(d.atNode[n]) > 0 && d.inHierarchy(n) {
				s = d.trie.extend(s, level(n))
			}
		}
		sr, ok := folds[s]
		if !ok {
			// Not memoized: no context uses it, so no update would
			// refresh it.
			sr = d.compute(s)
			folds[s] = sr
		}
		for _, o := range sr.policies {
			if o.pol != ps {
				continue
			}
			if o.contrib > 0 {
				waiting[why] = true
			}
			if o.lost || o.conflicted {
				lostVia[why] = true
				v.lost = true
			}
		}
		for _, l := range sr.losses {
			if sr.atts[l.att].pol != ps {
				continue
			}
			if v.lostTo == nil {
				v.lostTo = map[merge.Src]map[string]bool{}
			}
			if v.lostTo[l.winner] == nil {
				v.lostTo[l.winner] = map[string]bool{}
			}
			v.lostTo[l.winner][l.path] = true
		}
	})
	v.waiting = slices.Sorted(maps.Keys(waiting))
	v.lostVia = slices.Sorted(maps.Keys(lostVia))
	return v
}

// eachUnservedPath calls yield with the nodes, most general first (its
// GatewayClass when among the objects, the Gateway, the listener, the
// route, the effective target), of each ready path of kind k from one of
// atts through a Gateway its implementation does not serve
// (gatewayServed, whose why names it) down to an effective target: a rule
// of a route the kind takes effect on per rule, else the route.
func (c *computation) eachUnservedPath(k *policy.Kind, atts []*attachment, yield func(why string, nodes []topology.NodeID)) {
	g := c.graph
	classOf := func(gw topology.NodeID) []topology.NodeID {
		for _, p := range g.Node(gw).Parents {
			if g.Node(p).Ref.GroupKind() == topology.KindGatewayClass {
				return []topology.NodeID{p}
			}
		}
		return nil
	}
	// below walks from listener l (ready) of unserved Gateway gw to the
	// effective targets of route rt (only, when set) or of every ready
	// route below it.
	below := func(why string, gw, l topology.NodeID, only topology.NodeID, hasOnly bool) {
		lr := g.Node(l).Ref
		if c.ready.listenerReady(lr) != "" {
			return
		}
		head := append(classOf(gw), gw, l)
		for _, rt := range c.routesBelowListener(k, l) {
			if hasOnly && rt != only {
				continue
			}
			rr := g.Node(rt).Ref
			if c.ready.routeReady(rr, lr) != "" {
				continue
			}
			path := append(slices.Clip(head), rt)
			if k.IsEffectiveSection(rr.GroupKind()) {
				for _, sec := range g.Sections(rt) {
					yield(why, append(slices.Clip(path), sec))
				}
			} else if k.IsEffectiveTarget(rr.GroupKind()) {
				yield(why, path)
			}
		}
	}
	gateway := func(gw topology.NodeID) (string, bool) {
		ok, why := c.gatewayServed(k, g.Node(gw).Ref)
		return why, !ok
	}
	for _, a := range atts {
		ref := g.Node(a.node).Ref
		switch gk := ref.GroupKind(); {
		case gk == topology.KindGatewayClass:
			for _, gw := range g.Node(a.node).Children {
				if r := g.Node(gw).Ref; r.GroupKind() != topology.KindGateway || r.IsSection() {
					continue
				}
				if why, unserved := gateway(gw); unserved {
					for _, l := range g.Sections(gw) {
						below(why, gw, l, 0, false)
					}
				}
			}
		case gk == topology.KindGateway && ref.IsSection():
			gw := g.Node(a.node).Parents[0]
			if why, unserved := gateway(gw); unserved {
				below(why, gw, a.node, 0, false)
			}
		case gk == topology.KindGateway:
			if why, unserved := gateway(a.node); unserved {
				for _, l := range g.Sections(a.node) {
					below(why, a.node, l, 0, false)
				}
			}
		case slices.Contains(topology.RouteKinds, gk):
			rt := a.node
			if ref.IsSection() {
				rt = g.Node(a.node).Parents[0]
			}
			for lr := range c.routeListeners(k, ref) {
				if lr.GroupKind() != topology.KindGateway {
					continue
				}
				l, ok := g.Lookup(lr)
				if !ok {
					continue
				}
				gw := g.Node(l).Parents[0]
				why, unserved := gateway(gw)
				if !unserved {
					continue
				}
				if !ref.IsSection() {
					below(why, gw, l, rt, true)
					continue
				}
				// A rule: the paths to it alone.
				if c.ready.listenerReady(lr) == "" && c.ready.routeReady(ref.Object(), lr) == "" {
					yield(why, append(classOf(gw), gw, l, rt, a.node))
				}
			}
		}
	}
}

// lossText names who beat a policy, on which fields, as lossSummary does.
func (c *computation) lossText(lostTo map[merge.Src]map[string]bool) string {
	ids := slices.SortedFunc(maps.Keys(lostTo), func(x, y merge.Src) int {
		if attLess(*c.atts[x].ref, *c.atts[y].ref) {
			return -1
		}
		if attLess(*c.atts[y].ref, *c.atts[x].ref) {
			return 1
		}
		return 0
	})
	parts := make([]string, 0, len(ids))
	for i, id := range ids {
		if i == maxWinnersNamed {
			parts = append(parts, fmt.Sprintf("and %d more policies", len(ids)-i))
			break
		}
		paths := make([]string, 0, len(lostTo[id]))
		for p := range lostTo[id] {
			paths = append(paths, LostPathText(p))
		}
		sort.Strings(paths)
		w := c.atts[id].ref
		parts = append(parts, fmt.Sprintf("%s beaten by %s %s (on %s)", strings.Join(paths, ", "), w.Policy.Kind, shortName(w.Policy), w.At.Short()))
	}
	return strings.Join(parts, "; ")
}
