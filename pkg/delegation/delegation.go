// Package delegation decides which matches of a delegated child
// HTTPRoute's rules kgateway keeps below a delegating rule (route
// delegation: a rule whose backendRef names HTTPRoutes, see package
// gatewayapi). It is pure: both the engine (which child rules are
// effective targets through which parent rule) and request tracing (which
// matches stand in the delegating rule's place) read it.
//
// A child match is admitted by a parent match when the parent's path is a
// PathPrefix that the child's path value starts with, the child's header
// and query parameter matches include the parent's (compared as written,
// names included), and the methods agree when the parent names one; a
// child rule without matches has the API's default match (PathPrefix /, as
// the API server stores it). A child route annotated InheritParentMatcher
// instead writes its matches relative to the parent's (Inherit): kgateway
// keeps all of them, joined to the parent's; the joins that build a
// regular expression are not modelled (Admitted.Unmodelled). A rule keeps
// the matches admitted (or joined); one with none is dropped below that
// parent.
//
// As kgateway reads it: pkg/kgateway/translator/httproute/delegation_helpers.go
// (filterDelegatedChildren, mergeParentChildRouteMatch) and
// pkg/kgateway/utils/delegation/delegation.go (IsDelegatedRouteMatch).
// Gloo Gateway, from which kgateway's delegation comes, admits child
// matches by the same rules (solo-io/gloo projects/gateway2/utils/
// delegation.go IsDelegatedRouteMatch); its annotation
// GlooInheritParentMatcher joins every path textually, regular expressions
// included (projects/gateway2/translator/httproute/delegation_helpers.go
// mergeParentChildRouteMatch), which attache models.
package delegation

import (
	"fmt"
	"path"
	"slices"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// InheritParentMatcher is the annotation of a delegated HTTPRoute (values
// true, yes or enabled, in any case) making its matches extend its parent
// rule's instead of having to repeat them (kgateway).
const InheritParentMatcher = "delegation.kgateway.dev/inherit-parent-matcher"

// GlooInheritParentMatcher is Gloo Gateway's InheritParentMatcher (the
// same values): its joins are textual (GlooInheritance).
const GlooInheritParentMatcher = "delegation.gateway.solo.io/inherit-parent-matcher"

// Inheritance says whether, and by whose joins, a delegated child's
// matches extend its parent rule's.
type Inheritance uint8

// Inheritances.
const (
	// NoInheritance: the child's matches must repeat the parent's.
	NoInheritance Inheritance = iota
	// KgatewayInheritance joins as kgateway does (Inherit), the joins it
	// makes regular expressions of not modelled.
	KgatewayInheritance
	// GlooInheritance joins as Gloo Gateway does: paths joined as text
	// whatever their type (inheritGloo).
	GlooInheritance
)

// InheritanceOf reads a route's annotations: kgateway's
// InheritParentMatcher, else Gloo Gateway's GlooInheritParentMatcher.
// A route with both (read by either implementation) is read as kgateway's.
func InheritanceOf(annotations map[string]string) Inheritance {
	switch {
	case on(annotations[InheritParentMatcher]):
		return KgatewayInheritance
	case on(annotations[GlooInheritParentMatcher]):
		return GlooInheritance
	}
	return NoInheritance
}

// on reports whether an inherit-parent-matcher value turns it on.
func on(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "enabled":
		return true
	}
	return false
}

// Value is a header or query parameter match.
type Value struct {
	// Name is as written (RequestMatch lowers header names).
	Name  string
	Value string
	// Regex is set for type RegularExpression (else Exact).
	Regex bool
}

// Match is one HTTPRoute match, the API's defaults applied: path
// PathPrefix "/", Exact header and query parameter matches. Its header and
// query parameter matches are all those written, in order, names as
// written: kgateway compares them so (IsDelegatedRouteMatch's
// reflect.DeepEqual); RequestMatch is what a request is matched against.
type Match struct {
	PathType gwv1.PathMatchType
	Path     string
	Method   string // "" for any
	Headers  []Value
	Query    []Value
}

// Default is the match of a rule without matches (the API's default):
// every request.
var Default = Match{PathType: gwv1.PathMatchPathPrefix, Path: "/"}

// Matches returns a rule's matches with the API's defaults applied; nil
// for a rule without matches.
func Matches(ms []gwv1.HTTPRouteMatch) []Match {
	if len(ms) == 0 {
		return nil
	}
	out := make([]Match, len(ms))
	for i := range ms {
		m := &ms[i]
		e := Default
		if p := m.Path; p != nil {
			if p.Type != nil {
				e.PathType = *p.Type
			}
			if p.Value != nil {
				e.Path = *p.Value
			}
		}
		if m.Method != nil {
			e.Method = string(*m.Method)
		}
		for _, h := range m.Headers {
			e.Headers = append(e.Headers, Value{string(h.Name), h.Value, h.Type != nil && *h.Type == gwv1.HeaderMatchRegularExpression})
		}
		for _, q := range m.QueryParams {
			e.Query = append(e.Query, Value{string(q.Name), q.Value, q.Type != nil && *q.Type == gwv1.QueryParamMatchRegularExpression})
		}
		out[i] = e
	}
	return out
}

// RequestMatch is m as a request is matched against it: header names in
// lower case (they are case-insensitive), and of several header (or query
// parameter) matches of one name only the first, as the API says. m's
// slices are shared when nothing changes.
func RequestMatch(m Match) Match {
	m.Headers = firstOfEach(m.Headers, strings.ToLower)
	m.Query = firstOfEach(m.Query, func(s string) string { return s })
	return m
}

// firstOfEach is vs with names passed through norm, the first of each
// name only; vs itself when that is what it is.
func firstOfEach(vs []Value, norm func(string) string) []Value {
	same := true
	for i, v := range vs {
		n := norm(v.Name)
		if n != v.Name || slices.ContainsFunc(vs[:i], func(w Value) bool { return norm(w.Name) == n }) {
			same = false
			break
		}
	}
	if same {
		return vs
	}
	out := make([]Value, 0, len(vs))
	for _, v := range vs {
		v.Name = norm(v.Name)
		if !slices.ContainsFunc(out, func(w Value) bool { return w.Name == v.Name }) {
			out = append(out, v)
		}
	}
	return out
}

// Admitted is a match kept of a child rule below a delegating rule: the
// match as the child then matches requests, the position of the parent
// match that admitted (or extended) it, and that of the child's match it
// comes from (-1: the child rule has no matches: it takes the parent's when
// inheriting, else the API's default, Default).
type Admitted struct {
	Match  Match
	Parent int
	Child  int
	// Unmodelled: the child inherits the parent's matcher and kgateway
	// keeps this match joined to the parent's as a regular expression,
	// which attache does not model; Match is then the child's match as
	// written. Its path would be of type RegularExpression, so as a
	// parent match it would admit no child match (Admits), and every
	// join to it would be Unmodelled again.
	Unmodelled bool
}

// Admit appends to dst what a child rule keeps below a delegating rule:
// parents are the delegating rule's matches (as it was itself kept, for a
// delegating child; a rule without matches delegates with Default),
// children the child rule's (nil: it has none), inherit whether the child
// route inherits its parent's matcher, and by whose joins. Without inherit, each child match
// admitted by some parent match is kept once; with it, each child match
// is joined to every parent match (Inherit; Unmodelled when attache does
// not model the join), and a rule without matches takes every parent
// match. Nothing appended: the rule is dropped below that parent (Why
// says why); with inherit that is only when parents is empty.
func Admit(dst []Admitted, parents, children []Match, inherit Inheritance) []Admitted {
	out := dst
	if len(children) == 0 {
		if inherit == NoInheritance {
			// The API server stores a rule without matches with the
			// match of every request (the CRD's default, PathPrefix /),
			// and kgateway judges that: kept below a parent prefix /.
			n := len(out)
			out = Admit(out, parents, []Match{Default}, NoInheritance)
			for k := n; k < len(out); k++ {
				out[k].Child = -1
			}
			return out
		}
		// kgateway (and Gloo) take the parent match as it is, whatever its
		// type.
		for i, p := range parents {
			p.Headers, p.Query = slices.Clone(p.Headers), slices.Clone(p.Query)
			out = append(out, Admitted{Match: p, Parent: i, Child: -1})
		}
		return out
	}
	for j, c := range children {
		for i, p := range parents {
			if inherit != NoInheritance {
				m, ok := inheritGloo(p, c), true
				if inherit == KgatewayInheritance {
					m, ok = Inherit(p, c)
				}
				if !ok {
					m = c
				}
				out = append(out, Admitted{Match: m, Parent: i, Child: j, Unmodelled: !ok})
				continue
			}
			if Admits(p, c) {
				out = append(out, Admitted{Match: c, Parent: i, Child: j})
				break // one admitting parent match is enough
			}
		}
	}
	return out
}

// Admits reports whether parent match p admits child match c: p's path
// is a PathPrefix that c's path value starts with, c's header and query
// matches include p's, and the methods agree when p names one.
func Admits(p, c Match) bool {
	return refusal(p, c) == stageAdmitted
}

// Stages of admission, in the order they are checked: the furthest a
// refused pair got says best why.
const (
	stagePathType = iota // the parent's path is no PathPrefix
	stagePath            // the child's path does not extend it
	stageMethod
	stageHeaders
	stageQuery
	stageAdmitted
)

// refusal is the stage at which p refuses c, stageAdmitted when it admits.
func refusal(p, c Match) int {
	switch {
	case p.PathType != gwv1.PathMatchPathPrefix:
		return stagePathType
	case !strings.HasPrefix(c.Path, p.Path):
		return stagePath
	case p.Method != "" && c.Method != p.Method:
		return stageMethod
	case !includes(c.Headers, p.Headers):
		return stageHeaders
	case !includes(c.Query, p.Query):
		return stageQuery
	}
	return stageAdmitted
}

// includes reports whether every value match of want is among have.
func includes(have, want []Value) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Inherit is child match c joined to parent match p, for a child with
// InheritParentMatcher, as kgateway's mergeParentChildRouteMatch joins
// them: p's path joined before c's (path.Join; c's path type kept), p's
// header and query matches with c's of other names (by name as written,
// sorted by name), p's method when it names one. Not modelled (false):
// joins kgateway makes a regular expression of: a parent match of type
// RegularExpression (it builds a regular expression keeping the parent's),
// a child match of type RegularExpression (path.Join applied to the
// expression).
func Inherit(p, c Match) (Match, bool) {
	if p.PathType == gwv1.PathMatchRegularExpression || c.PathType == gwv1.PathMatchRegularExpression {
		return Match{}, false
	}
	d := c
	d.Path = path.Join(p.Path, c.Path)
	if p.Method != "" {
		d.Method = p.Method
	}
	d.Headers, d.Query = join(p.Headers, c.Headers), join(p.Query, c.Query)
	return d, true
}

// inheritGloo is child match c joined to parent match p as Gloo Gateway's
// mergeParentChildRouteMatch joins them: as Inherit, but the paths are
// joined as text whatever their types (a RegularExpression too: path.Join
// applied to the expression), c's path type kept.
func inheritGloo(p, c Match) Match {
	d := c
	d.Path = path.Join(p.Path, c.Path)
	if p.Method != "" {
		d.Method = p.Method
	}
	d.Headers, d.Query = join(p.Headers, c.Headers), join(p.Query, c.Query)
	return d
}

// join is kgateway's mergeHeaders (and mergeQueries): parent's value
// matches (the last of a name), then child's of other names (the first of
// a name), sorted by name; names compared as written.
func join(parent, child []Value) []Value {
	if len(parent)+len(child) == 0 {
		return nil
	}
	out := make([]Value, 0, len(parent)+len(child))
	at := map[string]int{}
	for _, p := range parent {
		if i, ok := at[p.Name]; ok {
			out[i] = p
			continue
		}
		at[p.Name] = len(out)
		out = append(out, p)
	}
	for _, c := range child {
		if _, ok := at[c.Name]; !ok {
			at[c.Name] = len(out)
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Value) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Why says why Admit keeps nothing of a child rule (children) below
// parent matches parents: the reason of the parent and child matches that
// came closest, e.g. "its matches do not extend the parent rule's path
// prefix /a". "" when Admit keeps something.
func Why(parents, children []Match, inherit Inheritance) string {
	if len(Admit(nil, parents, children, inherit)) > 0 {
		return ""
	}
	if len(parents) == 0 {
		return "the parent rule is itself dropped" // not reached: a dropped rule delegates nothing
	}
	none := len(children) == 0
	if none {
		children = []Match{Default} // as the API server stores it
	}
	best, at := -1, Match{}
	for _, p := range parents {
		for _, c := range children {
			if s := refusal(p, c); s > best {
				best, at = s, p
			}
		}
	}
	switch best {
	case stagePathType:
		return fmt.Sprintf("the parent rule's path match is %s, and only a PathPrefix admits child matches", DescribePaths(parents))
	case stagePath:
		if none {
			return fmt.Sprintf("it has no matches (the API's default: every request, path prefix /), which do not extend the parent rule's %s", DescribePaths(parents))
		}
		return fmt.Sprintf("its matches do not extend the parent rule's %s", DescribePaths(parents))
	case stageMethod:
		return fmt.Sprintf("its matches under %s do not name the parent rule's method %s", at.Path, at.Method)
	case stageHeaders:
		return fmt.Sprintf("its matches under %s do not repeat the parent rule's header matches %s", at.Path, describeValues(at.Headers))
	default:
		return fmt.Sprintf("its matches under %s do not repeat the parent rule's query parameter matches %s", at.Path, describeValues(at.Query))
	}
}

// DescribePaths names the path matches of a rule: "path prefix /a",
// "path prefixes /a, /b", or with their types when not all are prefixes.
func DescribePaths(ms []Match) string {
	var paths []string
	prefixes := true
	for _, m := range ms {
		prefixes = prefixes && m.PathType == gwv1.PathMatchPathPrefix
	}
	for _, m := range ms {
		s := m.Path
		if !prefixes {
			s = string(m.PathType) + " " + s
		}
		if !slices.Contains(paths, s) {
			paths = append(paths, s)
		}
	}
	switch {
	case !prefixes && len(paths) == 1:
		return paths[0]
	case !prefixes:
		return "one of " + strings.Join(paths, ", ")
	case len(paths) == 1:
		return "path prefix " + paths[0]
	}
	return "path prefixes " + strings.Join(paths, ", ")
}

// describeValues writes value matches as name=value (name~value for a
// regular expression).
func describeValues(vs []Value) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		op := "="
		if v.Regex {
			op = "~"
		}
		out[i] = v.Name + op + v.Value
	}
	return strings.Join(out, ", ")
}
