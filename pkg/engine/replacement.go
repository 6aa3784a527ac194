package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/topology"
)

// routeReplacements are the objects and sections below which the
// implementation of a kind with policy.Kind.RouteReplacement answers with
// a direct response what it would route: wherever a policy of the kind
// with errors attaches (Invalid in place there, or Invalid for a reason
// its implementation finds itself: policy.Policy.TranslationInvalid),
// whether or not the policy wins a field there, as kgateway merges every
// attached policy and keeps the errors of each. The rules whose
// ExtensionRef filters name such a policy, or one its API server refuses
// (which does not exist on a cluster), are added to rules. Each entry
// is also a problem on the policy. A TranslationInvalid policy's
// targetSelectors are not followed (attache resolves the targets of
// valid policies only). Nothing is replaced where the policy takes effect
// only through other implementations' Gateways (policy.Kind.Controllers):
// its implementation never translates it there; through a route's other
// Gateways, attache trace judges each (RuleReplacement.Kind).
func (c *computation) routeReplacements(rules map[topology.Ref]RuleReplacement, problems *[]diag.Problem) (map[topology.Ref]RuleReplacement, map[topology.Ref]RuleReplacement) {
	var out map[topology.Ref]RuleReplacement
	for _, ps := range c.policies {
		k := ps.p.Kind
		if k.RouteReplacement == 0 {
			continue
		}
		type hit struct {
			at  topology.Ref
			why string
		}
		var hits []hit
		if ps.p.Invalid() {
			msgs := make([]string, len(ps.p.Problems))
			for i, pr := range ps.p.Problems {
				msgs[i] = pr.Field + ": " + pr.Message
			}
			why := strings.Join(msgs, "; ")
			// A filter naming it has its rule replaced: the policy has
			// errors, or, refused by its API server, does not exist.
			state := "which has errors (" + why + ")"
			if !ps.p.TranslationInvalid() {
				state = "which its API server refuses (" + why + "), so that it does not exist"
			}
			for _, f := range c.filterRefs[ps.p.Ref] {
				if _, ok := c.graph.Lookup(f.rule); !ok || c.notServed(k, f.rule) != "" {
					// (A rule reached only through other implementations'
					// Gateways is theirs to answer.)
					continue
				}
				if rules == nil {
					rules = map[topology.Ref]RuleReplacement{}
				}
				if _, seen := rules[f.rule]; !seen {
					rules[f.rule] = RuleReplacement{Status: k.RouteReplacement, Kind: k,
						Reason: fmt.Sprintf("rule %s of %s: its ExtensionRef filter names %s %s/%s, %s, so its implementation replaces the rule with a %d direct response",
							f.rule.SectionName, f.rule.Object().Short(), k.GroupKind.Kind, ps.p.Ref.Namespace, ps.p.Ref.Name, state, k.RouteReplacement)}
				}
			}
		}
		if ps.p.TranslationInvalid() {
			msgs := make([]string, len(ps.p.Problems))
			for i, pr := range ps.p.Problems {
				msgs[i] = pr.Field + ": " + pr.Message
			}
			why := strings.Join(msgs, "; ")
			for _, t := range ps.p.Targets {
				if t.Selector != nil {
					continue
				}
				at := targetRef(t)
				if _, ok := c.graph.Lookup(at); ok && k.AllowsTarget(at.GroupKind()) && c.notServed(k, at) == "" {
					hits = append(hits, hit{at, why})
				}
			}
		}
		if st := c.status[ps]; st != nil {
			ats := make([]topology.Ref, 0, len(st.InPlaceInvalid))
			for at := range st.InPlaceInvalid {
				ats = append(ats, at)
			}
			slices.SortFunc(ats, func(a, b topology.Ref) int {
				if a.Less(b) {
					return -1
				}
				if b.Less(a) {
					return 1
				}
				return 0
			})
			for _, at := range ats {
				hits = append(hits, hit{at, st.InPlaceInvalid[at]})
			}
		}
		impl := k.Implementation
		if impl == "" {
			impl = "its implementation"
		}
		for _, h := range hits {
			what := replacedScope(h.at)
			why := fmt.Sprintf("%s %s/%s has errors (%s), so %s replaces %s with a %d direct response",
				k.GroupKind.Kind, ps.p.Ref.Namespace, ps.p.Ref.Name, h.why, impl, what, k.RouteReplacement)
			if out == nil {
				out = map[topology.Ref]RuleReplacement{}
			}
			if _, seen := out[h.at]; !seen {
				out[h.at] = RuleReplacement{Status: k.RouteReplacement, Reason: why, Kind: k}
			}
			*problems = append(*problems, diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref],
				Message: fmt.Sprintf("it has errors, so %s replaces %s with a %d direct response", impl, what, k.RouteReplacement)})
		}
	}
	return out, rules
}

// replacedScope says what a replacement at at covers.
func replacedScope(at topology.Ref) string {
	obj := at.Object().Short()
	switch gk := at.GroupKind(); {
	case gk == topology.KindGateway && !at.IsSection():
		return "every request of the HTTP and HTTPS listeners of " + obj + " (its ListenerSets' included)"
	case gk == topology.KindGateway || gk.Kind == "ListenerSet" || gk.Kind == "XListenerSet":
		if at.IsSection() {
			return fmt.Sprintf("the requests of listener %s of %s (on an HTTPS listener every request, on an HTTP listener those of the hostnames its routes serve)", at.SectionName, obj)
		}
		return "the requests of the listeners of " + obj + " (on an HTTPS listener every request, on an HTTP listener those of the hostnames its routes serve)"
	case at.IsSection():
		return fmt.Sprintf("rule %s of %s and every rule delegated below it", at.SectionName, obj)
	}
	return "every rule of " + obj + " and every rule delegated below them"
}
