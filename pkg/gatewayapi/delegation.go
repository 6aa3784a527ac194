package gatewayapi

import (
	"errors"

	"github.com/attache-dev/attache/pkg/topology"
)

// Route delegation (kgateway): a rule of an HTTPRoute whose backendRef
// names HTTPRoutes hands its requests to their rules. The child routes
// hang below that rule, so that policies of the parent route and rule
// reach them.
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
	// selects in every namespace (kgateway's default wildcard).
	DelegationAllNamespaces = "all"
)

// delegation says whether backendRef ref of HTTPRoute r delegates to other
// HTTPRoutes: by name ("*": every HTTPRoute of the namespace) or by label.
func delegation(r *route, ref topology.Ref) bool {
	return Delegates(r.ref.GroupKind(), ref.GroupKind())
}

// Delegates reports whether a backendRef of kind backend in a rule of a
// route of kind route delegates to child HTTPRoutes (kgateway route
// delegation): an HTTPRoute's backendRef naming HTTPRoutes, or of the
// label kind.
func Delegates(route, backend topology.GroupKind) bool {
	if route != topology.KindHTTPRoute {
		return false
	}
	return backend == topology.KindHTTPRoute || backend == topology.GroupKind{Group: DelegationGroup, Kind: DelegationLabelKind}
}

// delegate links rule section sid of HTTPRoute r to the child routes its
// backendRef ref (spec.rules[i].backendRefs[j]) selects, as kgateway
// does: no ReferenceGrant is needed; a child with parentRefs accepts only
// the parents it names by an HTTPRoute parentRef (so a child whose
// parentRefs name only Gateways is never delegated to); a child with
// hostnames is refused (it takes its parent's).
func (a *adder) delegate(r *route, sid topology.NodeID, ref topology.Ref, i, j int) {
	var cands []*route
	switch {
	case ref.Kind == DelegationLabelKind:
		for _, c := range a.byDelegationLabel()[ref.Name] {
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
		if c == r || !c.acceptsParent(r.ref) {
			continue
		}
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

// byDelegationLabel indexes the HTTPRoutes by their DelegationLabel, on
// first use.
func (a *adder) byDelegationLabel() map[string][]*route {
	if a.routesByLabel == nil {
		a.routesByLabel = map[string][]*route{}
		for _, r := range a.httpRoutes {
			if v, ok := r.labels[DelegationLabel]; ok {
				a.routesByLabel[v] = append(a.routesByLabel[v], r)
			}
		}
	}
	return a.routesByLabel
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
