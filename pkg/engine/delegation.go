package engine

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/delegation"
	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Route delegation (kgateway): the rules of an HTTPRoute delegated to hang
// below the delegating rule (package gatewayapi), so a stack reaching a
// child's rule holds the levels of the Gateway, of each delegating route
// and of the child, most general first. A kind with a delegation priority
// (policy.Kind.DelegationPriority) folds such a stack by route: the levels
// of each route (the route and its rules) fold into one layer, the levels
// above the first route (Gateway, listeners) into another, and these
// layers meet, from the child up, with the parent's winning (an override)
// where the route above a boundary carries a parent value of the kind's
// annotation, the child's (a default) otherwise. kgateway folds the same
// way: per hierarchy, then across hierarchies by the parent route's
// kgateway.dev/inherited-policy-priority (pkg/pluginsdk/policy/merge.go,
// MergePolicies); its Gateway-level policies never override a route's.
// In the ChildFields mode the parent's win unless the route above the
// boundary lists, in the kind's annotation, entries in which the child's
// win (or "*"): its layer then splits into an override without those
// entries and a default with them. Gloo Gateway folds so: each delegating
// route's RouteOptions are merged onto its children's translated routes,
// the child's kept only in the fields its
// delegation.gateway.solo.io/enable-policy-overrides names
// (routeoptions/route_options_plugin.go, mergeOptionsForRoute;
// projects/gloo/pkg/utils/merge.go, MergeRouteOptionsWithOverrides).

// readDelegationPriorities reads, for each kind with a delegation
// priority, the value of its annotation on every HTTPRoute that has it,
// and reports the values the kind does not know (read as the child's).
func (c *computation) readDelegationPriorities(objs []*unstructured.Unstructured) {
	var names []string
	known := map[string]policy.DelegationPriority{}
	// Kinds in order, so that of two kinds reading one annotation the
	// same one says which values are known, whatever the map order.
	kinds := make([]*policy.Kind, 0, len(c.kinds))
	for _, k := range c.kinds {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b *policy.Kind) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range kinds {
		if d := k.DelegationPriority; d.Enabled() && !slices.Contains(names, d.Annotation) {
			names = append(names, d.Annotation)
			known[d.Annotation] = d
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	c.delegationValues = map[string]map[topology.Ref]string{}
	for _, u := range objs {
		if rawRef(u).GroupKind() != topology.KindHTTPRoute {
			continue
		}
		a := u.GetAnnotations()
		for _, name := range names {
			v, ok := a[name]
			if !ok {
				continue
			}
			ref := rawRef(u)
			if c.delegationValues[name] == nil {
				c.delegationValues[name] = map[topology.Ref]string{}
			}
			c.delegationValues[name][ref] = v
			if d := known[name]; d.ChildFields != "" {
				if all, wins := d.ChildWinsIn(v); !all && wins == nil {
					c.problems = append(c.problems, diag.Problem{Object: ref, Source: c.sources[ref],
						Field:   fmt.Sprintf("metadata.annotations[%s]", name),
						Message: fmt.Sprintf("%q names no field (want * or a comma separated list of fields); the route's policies win over its children's in every field, as without it", v)})
				}
			} else if _, ok := d.ParentWins(v); !ok {
				c.problems = append(c.problems, diag.Problem{Object: ref, Source: c.sources[ref],
					Field:   fmt.Sprintf("metadata.annotations[%s]", name),
					Message: fmt.Sprintf("%q is not a known value (%s); its children's policies win, as by default", v, knownValues(known[name]))})
			}
		}
	}
}

// knownValues lists the values a delegation priority knows.
func knownValues(d policy.DelegationPriority) string {
	return fmt.Sprint(append(slices.Clone(d.Parent), d.Child...))
}

// delegationMeet says how the policies of route (an HTTPRoute) and its
// rules meet those of the routes it delegates to, for kind k: the
// parent's win (parent) or the child's; with childWins set, the parent's
// win but in the entries of the kind's ChildFields object it picks.
func (c *computation) delegationMeet(k *policy.Kind, route topology.Ref) (parent bool, childWins func(key string) bool) {
	d := k.DelegationPriority
	v, ok := c.delegationValues[d.Annotation][route]
	if d.ChildFields == "" {
		if !ok {
			return false, nil
		}
		parent, _ = d.ParentWins(v)
		return parent, nil
	}
	if !ok {
		return true, nil
	}
	if all, wins := d.ChildWinsIn(v); !all {
		return true, wins
	}
	return false, nil
}

// childFieldsPath is the path of a ChildFields setting as Tree.Split
// takes it ("." is the spec itself).
func childFieldsPath(p string) []string {
	if p == "." {
		return nil
	}
	return strings.Split(p, ".")
}

// routeOf is the route owning node n (the route itself or a rule of it),
// the zero Ref for any other node.
func (d *kindDP) routeOf(n topology.NodeID) topology.Ref {
	ref := d.c.graph.Node(n).Ref
	if slices.Contains(topology.RouteKinds, ref.GroupKind()) {
		return ref.Object()
	}
	return topology.Ref{}
}

// delegationLayers regroups the layers of a stack (nodes: the level of
// each) by route when a delegating route on it makes its policies win
// over its children's: the layers of each route (the route and its rules;
// a level below a route, a backend, with that route) fold into one layer (its losses added to
// losses), which overrides the layers below it when its route's
// annotation says the parent wins, and is a default otherwise. The layers
// above the first route (Gateway, listeners) stay as they are: they never
// override a route's but by their own strategy. Layers are returned
// unchanged when no boundary lets the parent win: then the fold over all
// of them, most specific first, is the same.
func (d *kindDP) delegationLayers(layers []merge.Layer, nodes []topology.NodeID, opts merge.Options, losses *[]merge.Loss) []merge.Layer {
	if !d.kind.DelegationPriority.Enabled() || len(layers) < 2 {
		return layers
	}
	owner := d.layerRoutes(nodes)
	overrides := false
	for i := range layers {
		last := i+1 < len(layers) && owner[i+1] != owner[i]
		if owner[i].Name != "" && last {
			if parent, _ := d.c.delegationMeet(d.kind, owner[i]); parent {
				overrides = true
			}
		}
	}
	if !overrides {
		return layers
	}
	out := make([]merge.Layer, 0, len(layers))
	for i := 0; i < len(layers); {
		j := i + 1
		for j < len(layers) && owner[j] == owner[i] {
			j++
		}
		if owner[i].Name == "" {
			out = append(out, layers[i:j]...) // above the routes: as they are
			i = j
			continue
		}
		l := layers[i]
		if j-i > 1 {
			r := merge.FoldWith(layers[i:j], opts)
			*losses = append(*losses, r.Losses...)
			l = merge.Layer{Spec: r.Tree, Src: layers[j-1].Src}
		}
		l.Strategy, l.MergeUp, l.KeepMergeUp = merge.PatchDefaults, "", false
		if j < len(layers) {
			parent, childWins := d.c.delegationMeet(d.kind, owner[i])
			if parent {
				l.Strategy = merge.PatchOverrides
			}
			if childWins != nil {
				// The entries the child wins in meet the layers below as a
				// default, the rest as an override.
				if in, rest := l.Spec.Split(childFieldsPath(d.kind.DelegationPriority.ChildFields), childWins); in != nil {
					if !rest.Empty() {
						out = append(out, merge.Layer{Spec: rest, Src: l.Src, Strategy: merge.PatchOverrides})
					}
					l.Spec, l.Strategy = in, merge.PatchDefaults
				}
			}
		}
		out = append(out, l)
		i = j
	}
	return out
}

// layerRoutes is, per level of a stack, the route whose group it is in
// (the zero Ref above the first route): a route or its rule, that route;
// any other level below a route (a backend), the route above it. (Kinds
// with Namespace levels are refused a delegation priority: a Namespace
// level after a route may stand above a delegated child or above a
// backend, which the stack does not tell.)
func (d *kindDP) layerRoutes(nodes []topology.NodeID) []topology.Ref {
	out := make([]topology.Ref, len(nodes))
	var cur topology.Ref
	for i, n := range nodes {
		if r := d.routeOf(n); r.Name != "" {
			cur = r
		}
		out[i] = cur
	}
	return out
}

// delegationAnnotationsChanged reports whether two copies of an HTTPRoute
// differ in an annotation route delegation reads: the one some kind's
// delegation priority reads, or an inherit-parent-matcher annotation
// (delegation.InheritanceOf), which
// decides which of a child's rules kgateway keeps (sameObject counts
// annotations on CRDs only).
func (c *computation) delegationAnnotationsChanged(a, b *unstructured.Unstructured) bool {
	if rawRef(a).GroupKind() != topology.KindHTTPRoute {
		return false
	}
	if delegation.InheritanceOf(a.GetAnnotations()) != delegation.InheritanceOf(b.GetAnnotations()) {
		return true
	}
	for _, k := range c.kinds {
		if name := k.DelegationPriority.Annotation; name != "" && a.GetAnnotations()[name] != b.GetAnnotations()[name] {
			return true
		}
	}
	return false
}

// delegating reports whether node n is a route rule delegating to child
// routes (kgateway route delegation): it is no effective target, as it
// answers no request itself; its requests are its children's rules'.
func (c *computation) delegating(n topology.NodeID) bool {
	node := c.graph.Node(n)
	if !node.Ref.IsSection() || !slices.Contains(topology.RouteKinds, node.Ref.GroupKind()) {
		return false
	}
	for _, ch := range node.Children {
		if r := c.graph.Node(ch).Ref; !r.IsSection() && slices.Contains(topology.RouteKinds, r.GroupKind()) {
			return true
		}
	}
	return false
}
