package engine

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// readDelegationPriorities reads, for each kind with a delegation
// priority, the value of its annotation on every HTTPRoute that has it,
// and reports the values the kind does not know (read as the child's).
func (c *computation) readDelegationPriorities(objs []*unstructured.Unstructured) {
	var names []string
	known := map[string]policy.DelegationPriority{}
	for _, k := range c.kinds {
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
			if _, ok := known[name].ParentWins(v); !ok {
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

// parentWins reports whether the policies of route (an HTTPRoute) and its
// rules win over those of the routes it delegates to, for kind k.
func (c *computation) parentWins(k *policy.Kind, route topology.Ref) bool {
	v, ok := c.delegationValues[k.DelegationPriority.Annotation][route]
	if !ok {
		return false
	}
	parent, _ := k.DelegationPriority.ParentWins(v)
	return parent
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
// over its children's: each group folds into one layer (its losses added
// to losses), which overrides the groups below it when its route's
// annotation says the parent wins, and is a default otherwise. Layers are
// returned unchanged when no boundary lets the parent win: then the fold
// over all of them, most specific first, is the same.
func (d *kindDP) delegationLayers(layers []merge.Layer, nodes []topology.NodeID, opts merge.Options, losses *[]merge.Loss) []merge.Layer {
	if !d.kind.DelegationPriority.Enabled() || len(layers) < 2 {
		return layers
	}
	// Groups: runs of layers of one route; the layers above the first
	// route form a group of their own (route "").
	type group struct {
		route      topology.Ref
		start, end int
	}
	var groups []group
	for i := range layers {
		r := d.routeOf(nodes[i])
		if r.Name == "" && len(groups) > 0 {
			r = groups[len(groups)-1].route // a level below a route (a backend) goes with it
		}
		if len(groups) == 0 || groups[len(groups)-1].route != r {
			groups = append(groups, group{route: r, start: i})
		}
		groups[len(groups)-1].end = i + 1
	}
	overrides := false
	for _, g := range groups[:len(groups)-1] {
		if g.route.Name != "" && d.c.parentWins(d.kind, g.route) {
			overrides = true
		}
	}
	if !overrides {
		return layers
	}
	out := make([]merge.Layer, 0, len(groups))
	for i, g := range groups {
		l := layers[g.start]
		if g.end-g.start > 1 {
			r := merge.FoldWith(layers[g.start:g.end], opts)
			*losses = append(*losses, r.Losses...)
			l = merge.Layer{Spec: r.Tree, Src: layers[g.end-1].Src}
		}
		l.Strategy = merge.PatchDefaults
		if i < len(groups)-1 && g.route.Name != "" && d.c.parentWins(d.kind, g.route) {
			l.Strategy = merge.PatchOverrides
		}
		out = append(out, l)
	}
	return out
}

// delegationPriorityChanged reports whether the annotation some kind's
// delegation priority reads differs between two copies of an HTTPRoute
// (sameObject counts annotations on CRDs only).
func (c *computation) delegationPriorityChanged(a, b *unstructured.Unstructured) bool {
	if rawRef(a).GroupKind() != topology.KindHTTPRoute {
		return false
	}
	for _, k := range c.kinds {
		if name := k.DelegationPriority.Annotation; name != "" && a.GetAnnotations()[name] != b.GetAnnotations()[name] {
			return true
		}
	}
	return false
}
