package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/delegation"
	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// Route delegation keeps only some of a child's rules (kgateway): below
// a delegating rule, a child rule whose matches the delegating rule's do
// not admit is dropped (package delegation). The graph hangs every rule
// of a child below it, so the paths through a dropped rule are cut here:
// each DP entry (and each state of readAdmission's pass) carries the
// matches that the nearest delegating rule on its paths delegates with,
// and a child rule takes an entry only when it keeps some of its matches
// below them. Which matches a delegating child rule keeps depends on the
// path (the matches it inherits, those its parent admits), so it is the
// state a grandchild is judged by; what a rule keeps is judged once per
// (state, rule), whatever the number of paths.
//
// Matches joined under inherit-parent-matcher multiply (children times
// parents, level after level), and so do the lists of a rule reached
// through many paths: a delegating rule's lists hold maxKeptMatches
// matches at most, together; past that its children are not judged
// (state unjudged: kept), as attache trace bounds its expansion, and a
// problem says so.

// Roles of nodes in route delegation (bits).
const (
	roleChildRoute = 1 << iota // an HTTPRoute below a delegating rule
	roleChildRule              // a rule of such a route
	roleDelegating             // an HTTPRoute rule with child routes
)

// States of admission besides the ids of match lists.
const (
	// noList: a path through no delegating rule, or below one whose
	// matches could not be read (not judged); a child route below a
	// delegating rule takes that rule's own matches.
	noList int32 = 0
	// unjudged: below a delegating rule whose matches past
	// maxKeptMatches were not kept: nothing below it is judged.
	unjudged int32 = 1
)

// maxKeptMatches bounds the matches of the lists a delegating child rule
// delegates with, all its paths together; it is routing's bound on the
// matches a delegating rule expands to (maxDelegatedEntries).
const maxKeptMatches = 4096

// admission is what route delegation keeps of the child routes' rules.
// It is built once per computation (an Incremental recomputes everything
// when a route changes); the DP only reads it, but for judge's memo.
type admission struct {
	graph *topology.Graph
	role  []uint8 // by node
	// lists interns the match lists rules delegate with (ids index it;
	// ids noList and unjudged have none); partial marks the lists that
	// also hold joins attache does not model (delegation.Admitted's
	// Unmodelled), which are left out of them: of type
	// RegularExpression, they admit no child match, and every child
	// inheriting the parent's matcher keeps its joins to them.
	lists   [][]delegation.Match
	partial []bool
	ids     map[string]int32
	// rules are the matches of the rules of the routes in delegation, by
	// section node; a rule whose route could not be read is missing.
	rules map[topology.NodeID]*ruleMatches
	// own is, per delegating rule, the id of the list it delegates with
	// when reached through no delegating rule (its own matches).
	own map[topology.NodeID]int32
	// kept memoises judge.
	kept map[admKey]int32
	// unreached marks the child rules that no path reaches: kgateway
	// drops them below every delegating rule above them.
	unreached map[topology.NodeID]bool
	// keptMatches counts, per delegating child rule, the matches of the
	// lists interned for it (maxKeptMatches); charged marks those lists.
	keptMatches map[topology.NodeID]int
	charged     map[admKey]bool
	// capped lists the delegating child rules whose lists went past
	// maxKeptMatches, in the order found; unmodelled marks the (list,
	// rule) pairs whose joins attache does not model.
	capped     []topology.NodeID
	unmodelled map[admKey]bool
}

// newAdmission returns an empty admission over graph g.
func newAdmission(g *topology.Graph) *admission {
	return &admission{graph: g, role: make([]uint8, g.Len()),
		lists: [][]delegation.Match{nil, nil}, partial: []bool{false, false}, ids: map[string]int32{},
		rules: map[topology.NodeID]*ruleMatches{}, own: map[topology.NodeID]int32{}, kept: map[admKey]int32{},
		unreached: map[topology.NodeID]bool{}, keptMatches: map[topology.NodeID]int{}, charged: map[admKey]bool{},
		unmodelled: map[admKey]bool{}}
}

// ruleMatches is a rule of a route in delegation.
type ruleMatches struct {
	index   int                // in spec.rules
	matches []delegation.Match // nil: the rule has none
	// inherit: whether (and whose) its route's inherit-parent-matcher
	// annotation is.
	inherit delegation.Inheritance
}

type admKey struct {
	list int32
	rule topology.NodeID
}

// readAdmission finds the delegated child routes in the graph, reads the
// matches of their rules and of the delegating rules above them, and
// reports, per delegating rule and child rule it drops, why. Nil when no
// route delegates.
func (c *computation) readAdmission(topoObjs []*unstructured.Unstructured) *admission {
	g := c.graph
	var a *admission
	for _, n := range g.ByKind(topology.KindHTTPRoute) {
		for _, p := range g.Node(n).Parents {
			if pr := g.Node(p).Ref; !pr.IsSection() || pr.GroupKind() != topology.KindHTTPRoute {
				continue
			}
			if a == nil {
				a = newAdmission(g)
			}
			a.role[p] |= roleDelegating
			a.role[n] |= roleChildRoute
			for _, s := range g.Sections(n) {
				a.role[s] |= roleChildRule
			}
		}
	}
	if a == nil {
		return nil
	}
	for _, u := range topoObjs {
		if gkOf(u) != topology.KindHTTPRoute {
			continue
		}
		ref := refOf(u)
		n, ok := g.Lookup(ref)
		if !ok || !a.inDelegation(n) {
			continue
		}
		rules, field, err := gatewayapi.DecodeHTTPRouteRules(u.Object)
		if err != nil {
			c.problems = append(c.problems, diag.Problem{Object: ref, Source: c.sources[ref], Field: field,
				Message: fmt.Sprintf("cannot decode its rules' matches (%v); which of its rules route delegation keeps is not judged", err)})
			continue
		}
		names := make([]*gwv1.SectionName, len(rules))
		for i := range rules {
			names[i] = rules[i].Name
		}
		sections, _ := gatewayapi.RuleSections(names) // Add reported their problems
		inherit := delegation.InheritanceOf(u.GetAnnotations())
		for i, name := range sections {
			if s, ok := g.Lookup(ref.WithSection(name)); ok && name != "" {
				a.rules[s] = &ruleMatches{index: i, matches: delegation.Matches(rules[i].Matches), inherit: inherit}
			}
		}
	}
	for n := range a.role {
		if a.role[n]&roleDelegating == 0 {
			continue
		}
		if r := a.rules[topology.NodeID(n)]; r != nil {
			ms := r.matches
			if ms == nil {
				ms = []delegation.Match{delegation.Default} // the API's default
			}
			a.own[topology.NodeID(n)] = a.intern(ms, false)
		}
	}
	c.problems = append(c.problems, a.pass(c.sources)...)
	return a
}

// inDelegation reports whether route node n delegates or is delegated to.
func (a *admission) inDelegation(n topology.NodeID) bool {
	if a.role[n]&roleChildRoute != 0 {
		return true
	}
	for _, s := range a.graph.Sections(n) {
		if a.role[s]&roleDelegating != 0 {
			return true
		}
	}
	return false
}

// intern returns the id of a match list, partial or not.
func (a *admission) intern(ms []delegation.Match, partial bool) int32 {
	k := listKey(ms, partial)
	if id, ok := a.ids[k]; ok {
		return id
	}
	return a.add(k, ms, partial)
}

// add interns a list of key k that is not interned yet.
func (a *admission) add(k string, ms []delegation.Match, partial bool) int32 {
	id := int32(len(a.lists))
	a.lists = append(a.lists, ms)
	a.partial = append(a.partial, partial)
	a.ids[k] = id
	return id
}

// listKey is what tells match lists apart: every field of every match.
func listKey(ms []delegation.Match, partial bool) string {
	var b strings.Builder
	if partial {
		b.WriteByte('+')
	}
	str := func(s string) { // length-prefixed: no separator to confuse
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	for _, m := range ms {
		str(string(m.PathType))
		str(m.Path)
		str(m.Method)
		for _, vs := range [][]delegation.Value{m.Headers, m.Query} {
			b.WriteString(strconv.Itoa(len(vs)))
			for _, v := range vs {
				str(v.Name)
				str(v.Value)
				if v.Regex {
					b.WriteByte('~')
				} else {
					b.WriteByte('=')
				}
			}
		}
	}
	return b.String()
}

// step is the state an entry of parent p with state s gives child n, and
// whether there is one (false: kgateway drops rule n on those paths). A
// child route takes the list its delegating parent delegates with; its
// rule, what it keeps of that list (judge); any other node, noList.
func (a *admission) step(p, n topology.NodeID, s int32) (int32, bool) {
	switch r := a.role[n]; {
	case r&roleChildRoute != 0:
		if s == noList {
			// Below a delegating rule reached through no other (own),
			// or below a listener (no list: not delegated to).
			return a.own[p], true
		}
		return s, true
	case r&roleChildRule != 0 && s != noList:
		v := a.judge(s, n)
		return max(v, noList), v >= 0
	}
	return noList, true
}

// judge is what child rule n keeps below a delegating rule delegating
// with list s: -1 nothing (dropped); else, for a rule delegating in turn,
// the id of the matches it delegates with (unjudged past
// maxKeptMatches), noList for another.
func (a *admission) judge(s int32, n topology.NodeID) int32 {
	k := admKey{s, n}
	if v, ok := a.kept[k]; ok {
		return v
	}
	delegating := a.role[n]&roleDelegating != 0
	var v int32
	switch r := a.rules[n]; {
	case s == unjudged:
		if delegating {
			v = unjudged
		}
	case r != nil:
		kept := delegation.Admit(nil, a.lists[s], r.matches, r.inherit)
		modelled := 0
		for _, x := range kept {
			if !x.Unmodelled {
				modelled++
			}
		}
		if modelled < len(kept) {
			a.unmodelled[k] = true
		}
		// Joins to the parent's unmodelled matches are unmodelled too.
		partial := modelled < len(kept) || r.inherit != delegation.NoInheritance && a.partial[s]
		switch {
		case modelled == 0 && !partial:
			v = -1
		case delegating:
			ms := make([]delegation.Match, 0, modelled)
			for _, x := range kept {
				if !x.Unmodelled {
					ms = append(ms, x.Match)
				}
			}
			v = a.keep(n, ms, partial)
		}
	}
	a.kept[k] = v
	return v
}

// keep is the id of list ms (partial or not) that delegating child rule n
// delegates with, unjudged when n's lists would pass maxKeptMatches.
func (a *admission) keep(n topology.NodeID, ms []delegation.Match, partial bool) int32 {
	if len(ms) <= maxKeptMatches {
		k := listKey(ms, partial)
		id, known := a.ids[k]
		if known && a.charged[admKey{id, n}] {
			return id
		}
		if len(ms) <= maxKeptMatches-a.keptMatches[n] {
			if !known {
				id = a.add(k, ms, partial)
			}
			a.charged[admKey{id, n}] = true
			a.keptMatches[n] += len(ms)
			return id
		}
	}
	if !slices.Contains(a.capped, n) {
		a.capped = append(a.capped, n)
	}
	return unjudged
}

// pass walks the graph from its roots, as the DP does, with states in
// place of stacks: it judges every (state, child rule) a path reaches,
// marks the child rules no path reaches, and returns the problems: one
// per delegating rule and child rule it drops on some path (naming the
// matches it was judged against when it is kept on others through that
// rule), one per such pair whose joins attache does not model, one per
// delegating rule whose lists went past maxKeptMatches.
func (a *admission) pass(sources map[topology.Ref]string) []diag.Problem {
	g := a.graph
	zero := []int32{noList} // the state of most nodes, shared
	states := make([][]int32, g.Len())
	var buf []int32
	seen := map[int32]bool{} // buf's, as a rule may have thousands
	for _, n := range g.Order() {
		node := g.Node(n)
		buf = buf[:0]
		clear(seen)
		if len(node.Parents) == 0 {
			buf = append(buf, noList)
		}
		for _, p := range node.Parents {
			for _, s := range states[p] {
				if v, ok := a.step(p, n, s); ok && !seen[v] {
					seen[v] = true
					buf = append(buf, v)
				}
			}
		}
		switch {
		case len(buf) == 1 && buf[0] == noList:
			states[n] = zero
		case len(buf) > 0:
			states[n] = slices.Clone(buf)
		case a.role[n]&roleChildRule != 0:
			a.unreached[n] = true
		}
	}
	var problems []diag.Problem
	problem := func(n topology.NodeID, format string, args ...any) {
		ref := g.Node(n).Ref
		route := ref.Object()
		problems = append(problems, diag.Problem{Object: route, Source: sources[route], Field: fmt.Sprintf("spec.rules[%d]", a.rules[n].index),
			Message: fmt.Sprintf("rule %s ", ref.SectionName) + fmt.Sprintf(format, args...)})
	}
	var lists, dropped []int32
	for _, n := range g.ByKind(topology.KindHTTPRoute) {
		if a.role[n]&roleChildRoute == 0 {
			continue
		}
		parents := g.Node(n).Parents
		for i, p := range parents {
			if a.role[p]&roleDelegating == 0 || slices.Contains(parents[:i], p) {
				continue
			}
			// The lists judged below p (on some path, p is not judged).
			lists = lists[:0]
			clear(seen)
			for _, s := range states[p] {
				if l, _ := a.step(p, n, s); l != noList && l != unjudged && !seen[l] {
					seen[l] = true
					lists = append(lists, l)
				}
			}
			parent := g.Node(p).Ref
			by := func() string { return fmt.Sprintf("%s rule %s", parent.Object().Short(), parent.SectionName) }
			for _, rn := range g.Sections(n) {
				r := a.rules[rn]
				if r == nil {
					continue
				}
				dropped = dropped[:0]
				unmodelled := false
				for _, l := range lists {
					if a.judge(l, rn) < 0 {
						dropped = append(dropped, l)
					}
					unmodelled = unmodelled || a.unmodelled[admKey{l, rn}]
				}
				switch {
				case len(dropped) == 0:
				case len(dropped) == len(lists):
					problem(rn, "is not delegated to by %s: %s; it is no effective target through that rule", by(), a.why(dropped[0], r))
				default:
					// Kept on other paths through p: say which.
					more := ""
					if len(dropped) > 1 {
						more = fmt.Sprintf(" (and %d more)", len(dropped)-1)
					}
					problem(rn, "is not delegated to by %s where that rule delegates with %s%s: %s; it is no effective target on those paths",
						by(), a.describe(dropped[0]), more, a.why(dropped[0], r))
				}
				if unmodelled {
					below := ""
					if a.role[rn]&roleDelegating != 0 {
						below = ", and the routes it delegates to with them"
					}
					problem(rn, "is kept below %s, but attache does not model some of its matches there: kgateway joins them to that rule's into regular expressions (%s); request tracing leaves them out%s",
						by(), delegation.InheritParentMatcher, below)
				}
			}
		}
	}
	for _, n := range a.capped {
		problem(n, "delegates with more than %d matches through all its delegation paths (joined to those of the rules above it); which rules of the routes it delegates to kgateway keeps is not judged past them: they are kept", maxKeptMatches)
	}
	return problems
}

// describe names the matches of list l, e.g. "path prefix /a".
func (a *admission) describe(l int32) string {
	ms := a.lists[l]
	switch {
	case !a.partial[l]:
		return delegation.DescribePaths(ms)
	case len(ms) == 0:
		return "regular expressions attache does not model"
	}
	return delegation.DescribePaths(ms) + " and regular expressions attache does not model"
}

// why says why rule r is dropped below list l (delegation.Why); the
// joins a partial list leaves out are of type RegularExpression, which
// admits no child match.
func (a *admission) why(l int32, r *ruleMatches) string {
	if len(a.lists[l]) == 0 && a.partial[l] {
		return "the parent rule's matches there are regular expressions joined to its parent's, and only a PathPrefix admits child matches"
	}
	return delegation.Why(a.lists[l], r.matches, r.inherit)
}

// unreachedRule reports whether n is a delegated child's rule that
// kgateway drops below every delegating rule above it: no effective
// target.
func (c *computation) unreachedRule(n topology.NodeID) bool {
	return c.adm != nil && c.adm.unreached[n]
}
