package advice

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Created words which policies an object being created will be reached
// by. For a route: those attached (accepted, of a kind whose hierarchy
// holds the route's kind) to a level above it — the Gateways and listeners
// its parentRefs name and what is above them, its Namespace — or naming
// the route itself. For a ListenerSet or XListenerSet: those attached to
// the Gateway its spec.parentRef names or above it (whether that Gateway's
// allowedListeners admits it is not judged, as a route's allowedRoutes
// are not), or naming it. For another kind (a Service, a Gateway, a Namespace):
// those naming it, by name or label selector, and for a backend those
// attached to the routes and rules naming it (referrers) or above them. Each with the fields it
// sets. The new object is not in res, so this is read from the policies'
// targets and specs, not from a computation: which of them wins a field
// where they overlap is known once the object exists (`attache
// describe`). No policy: no line.
//
// referrers are the routes (or their rules) that already name obj as a
// backend: a backend being created is reached, through them, by what is
// attached to them and above them.
func Created(res *engine.Result, obj *unstructured.Unstructured, ref topology.Ref, referrers []topology.Ref) []string {
	if res == nil || res.Graph == nil || obj == nil {
		return nil
	}
	levels := map[topology.Ref]bool{}
	var parents []any
	if isRouteKind(ref.GroupKind()) {
		levels[topology.Ref{Kind: topology.KindNamespace.Kind, Name: ref.Namespace}] = true
		parents, _, _ = unstructured.NestedSlice(obj.Object, "spec", "parentRefs")
	}
	for _, r := range referrers {
		if id, ok := res.Graph.Lookup(r); ok {
			addAncestors(res.Graph, levels, id)
			levels[topology.Ref{Kind: topology.KindNamespace.Kind, Name: r.Namespace}] = true
			if ref.Namespace != "" {
				levels[topology.Ref{Kind: topology.KindNamespace.Kind, Name: ref.Namespace}] = true
			}
		}
	}
	if gk := ref.GroupKind(); gk == topology.KindListenerSet || gk == topology.KindXListenerSet {
		// Its Gateway (spec.parentRef, which names no section) and every
		// level above it; the Gateway's own listeners are beside it, not
		// above.
		if m, ok, _ := unstructured.NestedMap(obj.Object, "spec", "parentRef"); ok {
			if id, ok := res.Graph.Lookup(gatewayapi.ParentRefOf(m, ref.Namespace).Object()); ok {
				addAncestors(res.Graph, levels, id)
			}
		}
	}
	for _, p := range parents {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		pr := gatewayapi.ParentRefOf(m, ref.Namespace)
		id, ok := res.Graph.Lookup(pr)
		if !ok {
			continue
		}
		// The parent, its listeners when no sectionName picks one, and
		// every level above them.
		addAncestors(res.Graph, levels, id)
		if pr.SectionName == "" {
			for _, sec := range res.Graph.Sections(id) {
				addAncestors(res.Graph, levels, sec)
			}
		}
	}
	objLabels := labels.Set(obj.GetLabels())
	named := filterNames(obj, ref)
	var found []*reaching
	for _, ps := range res.Policies {
		p := ps.Policy
		if p == nil || p.Invalid() || p.Kind == nil || !p.Kind.InHierarchy(ref.GroupKind()) {
			continue
		}
		if !targetsAny(p, ref, levels, objLabels) && !filterReaches(ps, ref, named, levels) {
			continue
		}
		fields := leafPaths(p.Spec, "")
		if len(fields) == 0 {
			continue
		}
		found = append(found, &reaching{ref: p.Ref, stanza: p.Stanza, fields: fields})
	}
	if len(found) == 0 {
		return nil
	}
	lines := reachLines(found, fmt.Sprintf("%s will be reached by %s: ", Name(ref), plural(len(found), "policy")), Name(ref)+" will also be reached by: ")
	return finish(lines, command("describe", ref, ""))
}

// filterNames are the policies a route's rules name in ExtensionRef
// filters (group, kind, the route's namespace, name); nil for other
// objects.
func filterNames(obj *unstructured.Unstructured, ref topology.Ref) map[topology.Ref]bool {
	if !isRouteKind(ref.GroupKind()) {
		return nil
	}
	out := map[topology.Ref]bool{}
	for _, e := range gatewayapi.ExtensionRefs(obj, ref.Namespace) {
		out[e.Target] = true
	}
	return out
}

// filterReaches reports whether a policy of a kind attached by route
// filters (policy.Kind.FilterAttachment) reaches the object being created:
// a route whose rules name it, or a backend of a rule it is attached to
// (an accepted ancestor among levels).
func filterReaches(ps *engine.PolicyStatus, ref topology.Ref, named map[topology.Ref]bool, levels map[topology.Ref]bool) bool {
	p := ps.Policy
	if !p.Kind.FilterAttachment {
		return false
	}
	if named[p.Ref] && p.Kind.IsEffectiveSection(ref.GroupKind()) {
		return true
	}
	for _, a := range ps.Ancestors {
		if levels[a.Ref] && len(a.Conditions) > 0 && a.Conditions[0].Type == engine.CondAccepted && a.Conditions[0].Status == "True" {
			return true
		}
	}
	return false
}

// addAncestors adds node id and every level above it to levels.
func addAncestors(g *topology.Graph, levels map[topology.Ref]bool, id topology.NodeID) {
	g.Walk([]topology.NodeID{id}, topology.Parents, func(_ topology.NodeID, n *topology.Node) bool {
		levels[n.Ref] = true
		return true
	})
}

// isRouteKind reports whether gk is one of the Gateway API route kinds.
func isRouteKind(gk topology.GroupKind) bool {
	for _, k := range topology.RouteKinds {
		if k == gk {
			return true
		}
	}
	return false
}

// targetsAny reports whether one of p's targets is one of levels, or the
// object ref itself (by name, any section, or by a label selector on its
// kind in its namespace).
func targetsAny(p *policy.Policy, ref topology.Ref, levels map[topology.Ref]bool, objLabels labels.Set) bool {
	for _, t := range p.Targets {
		ns := t.Namespace
		if ns == "" {
			ns = p.Ref.Namespace
		}
		gk := topology.GroupKind{Group: t.Group, Kind: t.Kind}
		if t.Selector != nil {
			if gk == ref.GroupKind() && (p.Ref.Namespace == "" || p.Ref.Namespace == ref.Namespace || t.Namespaces != nil) && t.Selector.Matches(objLabels) {
				return true
			}
			continue
		}
		if gk == ref.GroupKind() && t.Name == ref.Name && (clusterScoped(gk) || ns == ref.Namespace) {
			return true
		}
		r := topology.Ref{Group: t.Group, Kind: t.Kind, Name: t.Name, SectionName: t.SectionName}
		if !clusterScoped(gk) {
			r.Namespace = ns
		}
		if levels[r] {
			return true
		}
	}
	return false
}

// clusterScoped are the level kinds without a namespace.
func clusterScoped(gk topology.GroupKind) bool {
	return gk == topology.KindNamespace || gk == topology.KindGatewayClass
}

// leafPaths lists the dotted paths of a spec's leaves, sorted.
func leafPaths(m map[string]any, prefix string) []string {
	var out []string
	for k, v := range m {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leafPaths(sub, path)...)
			continue
		}
		out = append(out, path)
	}
	sort.Strings(out)
	return out
}
