package gatewayapi

import (
	"errors"
	"fmt"
	"slices"

	"github.com/attache-dev/attache/pkg/topology"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Route delegation (kgateway, and Gloo Gateway before it): a rule of an
// HTTPRoute whose backendRef names HTTPRoutes hands its requests to their
// rules. The child routes hang below that rule, so that policies of the
// parent route and rule reach them.
const (
	// DelegationLabel is the label selecting the child routes of a
	// backendRef of group DelegationGroup and kind DelegationLabelKind:
	// the routes whose label has the backendRef's name as value.
	DelegationLabel = "delegation.kgateway.dev/label"
	// DelegationGroup and DelegationLabelKind make a backendRef select
	// child routes by DelegationLabel.
	DelegationGroup     = "delegation.kgateway.dev"
	DelegationLabelKind = "label"
	// DelegationAllNamespaces, as the namespace of a label backendRef,
	// selects in every namespace (kgateway's and Gloo Gateway's default
	// wildcard).
	DelegationAllNamespaces = "all"
	// GlooDelegationGroup and GlooDelegationLabel are Gloo Gateway's
	// DelegationGroup and DelegationLabel (kind DelegationLabelKind).
	GlooDelegationGroup = "delegation.gateway.solo.io"
	GlooDelegationLabel = "delegation.gateway.solo.io/label"
)

// KindDelegationLabel and KindGlooDelegationLabel are the kinds of
// kgateway's and Gloo Gateway's label backendRefs.
var (
	KindDelegationLabel     = topology.GroupKind{Group: DelegationGroup, Kind: DelegationLabelKind}
	KindGlooDelegationLabel = topology.GroupKind{Group: GlooDelegationGroup, Kind: DelegationLabelKind}
)

// delegationLabel is the label a label backendRef of kind gk selects
// child routes by.
func delegationLabel(gk topology.GroupKind) string {
	if gk == KindGlooDelegationLabel {
		return GlooDelegationLabel
	}
	return DelegationLabel
}

// delegation says whether backendRef ref of HTTPRoute r delegates to other
// HTTPRoutes: by name ("*": every HTTPRoute of the namespace) or by label.
func delegation(r *route, ref topology.Ref) bool {
	return Delegates(r.ref.GroupKind(), ref.GroupKind())
}

// Delegates reports whether a backendRef of kind backend in a rule of a
// route of kind route delegates to child HTTPRoutes (route delegation): an
// HTTPRoute's backendRef naming HTTPRoutes, or of kgateway's or Gloo
// Gateway's label kind.
func Delegates(route, backend topology.GroupKind) bool {
	if route != topology.KindHTTPRoute {
		return false
	}
	return backend == topology.KindHTTPRoute || backend == KindDelegationLabel || backend == KindGlooDelegationLabel
}

// delegate links rule section sid of HTTPRoute r to the child routes its
// backendRef ref (spec.rules[i].backendRefs[j]) selects, as kgateway
// does: no ReferenceGrant is needed; a child with parentRefs accepts only
// the parents it names by an HTTPRoute parentRef (so a child whose
// parentRefs name only Gateways is never delegated to); a child with
// hostnames is refused (it takes its parent's).
func (a *adder) delegate(r *route, sid topology.NodeID, ref topology.Ref, i, j int) {
	cands, refused := a.selected(r, ref)
	if refused {
		a.problem(r.ref, fmt.Sprintf("spec.rules[%d].backendRefs[%d].namespace", i, j), "namespace %q selects the routes of every namespace, which Gloo Gateway refuses while a Namespace %q exists; it delegates to none", DelegationAllNamespaces, DelegationAllNamespaces)
		return
	}
	for _, c := range cands {
		if len(c.hostnames) > 0 {
			if !a.refusedChild[c] {
				a.refusedChild[c] = true
				a.problem(c.ref, "spec.hostnames", "route %s delegates to this route (spec.rules[%d].backendRefs[%d]), which must then have no hostnames (it takes its parent's); it is not delegated to", r.ref.Short(), i, j)
			}
			continue
		}
		a.b.AddEdge(sid, c.id)
	}
}

// selected returns the HTTPRoutes that backendRef ref of HTTPRoute r
// selects and that accept r as their parent (their hostnames not judged),
// or refused when Gloo Gateway's wildcard namespace is refused (a
// Namespace has its name: it would otherwise mean that namespace).
func (a *adder) selected(r *route, ref topology.Ref) (out []*route, refused bool) {
	var cands []*route
	switch {
	case ref.Kind == DelegationLabelKind:
		if ref.Namespace == DelegationAllNamespaces && ref.GroupKind() == KindGlooDelegationLabel {
			if _, ok := a.nsLabels[DelegationAllNamespaces]; ok {
				return nil, true
			}
		}
		for _, c := range a.byDelegationLabel(delegationLabel(ref.GroupKind()))[ref.Name] {
			if ref.Namespace == DelegationAllNamespaces || c.ref.Namespace == ref.Namespace {
				cands = append(cands, c)
			}
		}
	case ref.Name == "*":
		cands = a.httpRoutesByNS()[ref.Namespace]
	default:
		if c := a.httpRoute[ref]; c != nil {
			cands = append(cands, c)
		}
	}
	for _, c := range cands {
		if c != r && c.acceptsParent(r.ref) {
			out = append(out, c)
		}
	}
	return out, false
}

// DelegationFollowed reports whether a route reached through Gateways of
// the GatewayClass controllers given ("" for a Gateway whose class is not
// among the objects) follows a delegating backendRef of kind backend:
// when none is given (nothing to judge by), kinds is nil, or some
// controller's implementation is unknown to kinds or follows that kind.
func DelegationFollowed(controllers []string, backend topology.GroupKind, kinds func(string) ([]topology.GroupKind, bool)) bool {
	if len(controllers) == 0 || kinds == nil {
		return true
	}
	for _, c := range controllers {
		if c == "" {
			return true
		}
		if ks, known := kinds(c); !known || slices.Contains(ks, backend) {
			return true
		}
	}
	return false
}

// follows reports whether a delegating backendRef of kind backend of
// HTTPRoute r is followed (DelegationFollowed, by the Gateways that reach
// r: delegationReach).
func (a *adder) follows(r *route, backend topology.GroupKind) bool {
	return DelegationFollowed(sortedKeys(a.reach[r]), backend, a.opts.DelegationKinds)
}

// delegationReach returns, per HTTPRoute, the controllers of the Gateways
// (of their GatewayClasses; "" for a class not among the objects) it is
// reached through: those whose listeners it attaches to, and, through the
// delegations followed (follows), those of its delegating parents, to a
// fixpoint. A route reached through none delegates as if every form were
// followed: no Gateway is there to tell.
func (a *adder) delegationReach() map[*route]map[string]bool {
	if a.opts.DelegationKinds == nil || !slices.ContainsFunc(a.httpRoutes, delegates) {
		return nil // every delegation is followed, or there is none
	}
	reach := map[*route]map[string]bool{}
	add := func(r *route, c string) bool {
		if reach[r][c] {
			return false
		}
		if reach[r] == nil {
			reach[r] = map[string]bool{}
		}
		reach[r][c] = true
		return true
	}
	var queue []*route
	for _, r := range a.httpRoutes {
		// The listeners found are kept for attach, which links them.
		r.attached = make([][]*listener, len(r.parents))
		for i := range r.parents {
			p := &r.parents[i]
			if topology.HoldsListeners(ParentOf(r.ref.Namespace, *p).GroupKind()) {
				pa, ls := a.listenersOf(r, p)
				r.attached[i] = ls
				if len(ls) > 0 {
					add(r, pa.controller)
				}
			}
		}
		if len(reach[r]) > 0 {
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if r.ref.GroupKind() != topology.KindHTTPRoute {
			continue
		}
		ctls := sortedKeys(reach[r])
		names := make([]*gwv1.SectionName, len(r.rules))
		for i := range r.rules {
			names[i] = r.rules[i].Name
		}
		sections, _ := RuleSections(names)
		for i := range r.rules {
			if sections[i] == "" {
				continue // ignored, as addRules ignores it
			}
			for j := range r.rules[i].BackendRefs {
				ref := BackendOf(r.ref.Namespace, r.rules[i].BackendRefs[j])
				if ref.Name == "" || !delegation(r, ref) || !DelegationFollowed(ctls, ref.GroupKind(), a.opts.DelegationKinds) {
					continue
				}
				cands, _ := a.selected(r, ref)
				for _, c := range cands {
					if len(c.hostnames) > 0 {
						continue
					}
					changed := false
					for _, ctl := range ctls {
						changed = add(c, ctl) || changed
					}
					if changed {
						queue = append(queue, c)
					}
				}
			}
		}
	}
	return reach
}

// delegates reports whether HTTPRoute r has a delegating backendRef.
func delegates(r *route) bool {
	for i := range r.rules {
		for j := range r.rules[i].BackendRefs {
			if delegation(r, BackendOf(r.ref.Namespace, r.rules[i].BackendRefs[j])) {
				return true
			}
		}
	}
	return false
}

// sortedKeys are the keys of m, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// acceptsParent reports whether HTTPRoute c may be delegated to by route
// parent: c names no parents, or names parent by an HTTPRoute parentRef
// (kind HTTPRoute; the group, when written, Gateway API's, as the API
// server defaults it; the namespace defaults to c's).
func (c *route) acceptsParent(parent topology.Ref) bool {
	if len(c.parents) == 0 {
		return true
	}
	for _, p := range c.parents {
		if (p.Group != nil && string(*p.Group) != topology.GatewayGroup) || p.Kind == nil || string(*p.Kind) != topology.KindHTTPRoute.Kind {
			continue
		}
		ns := c.ref.Namespace
		if p.Namespace != nil && *p.Namespace != "" {
			ns = string(*p.Namespace)
		}
		if string(p.Name) == parent.Name && ns == parent.Namespace {
			return true
		}
	}
	return false
}

// httpRoutesByNS indexes the HTTPRoutes by namespace, on first use.
func (a *adder) httpRoutesByNS() map[string][]*route {
	if a.routesByNS == nil {
		a.routesByNS = map[string][]*route{}
		for _, r := range a.httpRoutes {
			a.routesByNS[r.ref.Namespace] = append(a.routesByNS[r.ref.Namespace], r)
		}
	}
	return a.routesByNS
}

// byDelegationLabel indexes the HTTPRoutes by their label named label
// (DelegationLabel, GlooDelegationLabel), on first use.
func (a *adder) byDelegationLabel(label string) map[string][]*route {
	if a.routesByLabel == nil {
		a.routesByLabel = map[string]map[string][]*route{}
	}
	m, ok := a.routesByLabel[label]
	if !ok {
		m = map[string][]*route{}
		for _, r := range a.httpRoutes {
			if v, ok := r.labels[label]; ok {
				m[v] = append(m[v], r)
			}
		}
		a.routesByLabel[label] = m
	}
	return m
}

// DecodeHTTPRouteRules decodes the names and matches of the rules of an
// HTTPRoute (its unstructured content), which Add does not read: which of
// a delegated child's rules kgateway keeps depends on them. On failure,
// field is the JSON path of the field that does not decode ("" when it
// could not be found).
func DecodeHTTPRouteRules(obj map[string]any) (rules []HTTPRouteRule, field string, err error) {
	var r httpRouteRulesObject
	if e := decode(obj, &r); e != nil {
		return nil, e.field, errors.New(e.msg)
	}
	return r.Spec.Rules, "", nil
}
