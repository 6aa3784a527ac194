package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// filterRef is a route rule's ExtensionRef filter naming a policy.
type filterRef struct {
	rule  topology.Ref // the rule section
	field string       // where the filter is written
	order int          // the filter's position among the rule's filters
}

// readFilterRefs indexes, by the policy they name (group, kind, the
// route's namespace, name), the ExtensionRef filters of the rules of every
// HTTPRoute and GRPCRoute, for kinds attached by them (FilterAttachment).
// Rules are named as the topology names them. Malformed routes and
// filters are skipped (package gatewayapi reports the routes).
func readFilterRefs(topoObjs []*unstructured.Unstructured) map[topology.Ref][]filterRef {
	out := map[topology.Ref][]filterRef{}
	forRoutes(topoObjs, func(u *unstructured.Unstructured, gk topology.GroupKind, ns string) {
		refs := gatewayapi.ExtensionRefs(u, ns)
		if len(refs) == 0 {
			return
		}
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		names := make([]*gwv1.SectionName, len(rules))
		for i, r := range rules {
			if rm, ok := r.(map[string]any); ok {
				if n, ok := rm["name"].(string); ok {
					sn := gwv1.SectionName(n)
					names[i] = &sn
				}
			}
		}
		sections, _ := gatewayapi.RuleSections(names)
		for _, e := range refs {
			if sections[e.Rule] == "" {
				continue // a duplicate name: the rule is ignored
			}
			rule := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: u.GetName(), SectionName: sections[e.Rule]}
			out[e.Target] = append(out[e.Target], filterRef{rule: rule, field: fmt.Sprintf("%s spec.rules[%d].filters[%d].extensionRef", rule.Object().Short(), e.Rule, e.Filter), order: e.Filter})
		}
	})
	return out
}

// attachByFilters attaches a policy of a kind with FilterAttachment to the
// rules whose ExtensionRef filters name it. Such an attachment ranks first
// at its rule (see sortSameLevel).
func (c *computation) attachByFilters(ps *pstate) {
	refs := c.filterRefs[ps.p.Ref]
	k := ps.p.Kind
	for _, f := range refs {
		gk := f.rule.GroupKind()
		if !k.IsEffectiveSection(gk) {
			// The route names a policy of a kind that does not apply to
			// its rules: not attached, and said so on the policy.
			ps.ancestors = append(ps.ancestors, ancestorState{ref: f.rule, reason: ReasonInvalid,
				msg: fmt.Sprintf("%s names it, but %s applies to the rules of %s only", f.field, k, kindList(k.EffectiveSectionKinds))})
			continue
		}
		id, ok := c.graph.Lookup(f.rule)
		if !ok {
			continue // the route is not in the topology (or its rule was dropped)
		}
		if ps.attached[id] {
			// It targets the rule too: one attachment, ranked by the
			// filter (the first filter naming it).
			for _, a := range ps.atts {
				if a.node == id && (a.filter == 0 || f.order+1 < a.filter) {
					a.filter = f.order + 1
				}
			}
			continue
		}
		if a := c.attach(ps, id, policy.TargetRef{Group: f.rule.Group, Kind: f.rule.Kind, Namespace: f.rule.Namespace, Name: f.rule.Name, SectionName: f.rule.SectionName, Field: f.field}); a != nil {
			a.filter = f.order + 1
		}
	}
	if len(ps.p.Targets) == 0 && len(refs) == 0 {
		ps.noTarget = append(ps.noTarget, "spec: names no targets, and no route rule's ExtensionRef filter names it")
	}
}
