// Package istioauthz decides what Istio's AuthorizationPolicies on a
// workload (a Gateway) do with one HTTP request, as far as the request
// itself tells: its method, host, path and headers. What it cannot know,
// the client's identity (principals, namespaces, IP blocks), JWT claims,
// connection ports, an external authorizer's answer, makes a rule's
// match unknown rather than guessed, and a decision that depends on one
// says so.
//
// The order is Istio's (istio.io/api security/v1beta1
// authorization_policy.proto): CUSTOM policies first, then DENY, then
// ALLOW; with no ALLOW policy the request is allowed; with ALLOW policies
// it is allowed only when one of them matches. AUDIT policies decide
// nothing. A policy without rules matches nothing; an empty rule matches
// everything.
package istioauthz

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// Request is what a decision reads of a request.
type Request struct {
	// Method, Host (the Host header as sent, with its port if it has
	// one), Path (without the query), PathQuery (with it: the :path
	// pseudo-header) and Scheme.
	Method, Host, Path, PathQuery, Scheme string
	// Headers by lower-case name, as the client sends them.
	Headers map[string]string
}

// Policy is one AuthorizationPolicy: its ref and its spec proper (action,
// rules, provider; the selector or targetRefs that brought it here are
// not read).
type Policy struct {
	Ref  topology.Ref
	Spec map[string]any
}

// Verdicts of a Decision.
const (
	Allow   = "allow"
	Deny    = "deny"
	Unknown = "unknown"
)

// Decision is what the policies do with the request.
type Decision struct {
	// Verdict is allow, deny, or unknown (it depends on what the request
	// does not tell; Unknowns say what).
	Verdict string `json:"verdict"`
	// Policy and Rule are the policy (and its rule, from 0) that decided,
	// when one did: the DENY policy that matched, the ALLOW policy that
	// matched. Rule is -1 when no rule is meant.
	Policy *topology.Ref `json:"policy,omitempty"`
	Rule   int           `json:"rule"`
	// Reason says why, for people.
	Reason string `json:"reason"`
	// Unknowns are the rules whose match the request does not tell, and
	// why, when they bear on the verdict.
	Unknowns []string `json:"unknowns,omitempty"`
}

// match is a three-valued match.
type match int

const (
	no match = iota
	maybe
	yes
)

// Decide applies the policies to the request.
func Decide(pols []Policy, req Request) Decision {
	pols = append([]Policy(nil), pols...)
	sort.Slice(pols, func(i, j int) bool { return pols[i].Ref.Less(pols[j].Ref) })
	byAction := map[string][]Policy{}
	for _, p := range pols {
		a, _ := p.Spec["action"].(string)
		if a == "" {
			a = "ALLOW"
		}
		byAction[a] = append(byAction[a], p)
	}
	var unknowns []string
	// first returns the first policy of action with a rule that matches,
	// and notes the rules whose match is unknown.
	first := func(action string) (*Policy, int) {
		for i := range byAction[action] {
			p := &byAction[action][i]
			rules, _ := p.Spec["rules"].([]any)
			for r, rule := range rules {
				switch m, why := matchRule(rule, req); m {
				case yes:
					return p, r
				case maybe:
					unknowns = append(unknowns, fmt.Sprintf("%s %s rules[%d]: %s", action, p.Ref.Short(), r, why))
				}
			}
		}
		return nil, -1
	}
	custom, customRule := first("CUSTOM")
	d := afterCustom(byAction, first, &unknowns)
	if custom != nil && d.Verdict != Deny {
		// The external authorizer is asked first; only if it allows does
		// the rest apply.
		provider, _ := custom.Spec["provider"].(map[string]any)
		name, _ := provider["name"].(string)
		return Decision{Verdict: Unknown, Policy: &custom.Ref, Rule: customRule, Unknowns: unknowns,
			Reason: fmt.Sprintf("CUSTOM %s rules[%d] matches: the external authorizer %q decides first; if it allows, %s", custom.Ref.Short(), customRule, name, d.Reason)}
	}
	return d
}

// afterCustom decides by the DENY and ALLOW policies; unknowns already
// holds the CUSTOM rules whose match is unknown.
func afterCustom(byAction map[string][]Policy, first func(string) (*Policy, int), unknowns *[]string) Decision {
	if p, r := first("DENY"); p != nil {
		return Decision{Verdict: Deny, Policy: &p.Ref, Rule: r, Unknowns: *unknowns,
			Reason: fmt.Sprintf("DENY %s rules[%d] matches", p.Ref.Short(), r)}
	}
	stoppers := len(*unknowns) // CUSTOM or DENY rules that may match
	const unless = ", unless a CUSTOM or DENY rule whose match the request does not tell applies"
	if len(byAction["ALLOW"]) == 0 {
		d := Decision{Verdict: Allow, Rule: -1, Reason: "no DENY policy matches and no ALLOW policy applies to the workload"}
		if stoppers > 0 {
			d.Verdict, d.Reason, d.Unknowns = Unknown, d.Reason+unless, *unknowns
		}
		return d
	}
	if p, r := first("ALLOW"); p != nil {
		d := Decision{Verdict: Allow, Policy: &p.Ref, Rule: r, Reason: fmt.Sprintf("ALLOW %s rules[%d] matches", p.Ref.Short(), r)}
		if stoppers > 0 {
			d.Verdict, d.Reason, d.Unknowns = Unknown, d.Reason+unless, (*unknowns)[:stoppers]
		}
		return d
	}
	if len(*unknowns) > 0 {
		return Decision{Verdict: Unknown, Rule: -1, Unknowns: *unknowns,
			Reason: "no ALLOW rule surely matches; the verdict depends on rules whose match the request does not tell"}
	}
	return Decision{Verdict: Deny, Rule: -1, Reason: fmt.Sprintf("ALLOW policies apply to the workload (%s) and none matches", refList(byAction["ALLOW"]))}
}

// refList names policies.
func refList(pols []Policy) string {
	names := make([]string, len(pols))
	for i, p := range pols {
		names[i] = p.Ref.Short()
	}
	return strings.Join(names, ", ")
}

// matchRule matches one rule: every part set (from, to, when) must match;
// within from and to, one entry is enough.
func matchRule(rule any, req Request) (match, string) {
	m, ok := rule.(map[string]any)
	if !ok {
		return no, ""
	}
	result, why := yes, ""
	and := func(x match, w string) {
		if x < result {
			result = x
			why = w
		}
	}
	if from, ok := m["from"].([]any); ok && len(from) > 0 {
		and(anyOf(from, "source", func(s map[string]any) (match, string) {
			if len(s) == 0 {
				return yes, ""
			}
			return maybe, "from.source (" + strings.Join(slices.Sorted(maps.Keys(s)), ", ") + ") is about the client, which a request does not tell"
		}))
	}
	if to, ok := m["to"].([]any); ok && len(to) > 0 {
		and(anyOf(to, "operation", func(o map[string]any) (match, string) { return matchOperation(o, req) }))
	}
	if when, ok := m["when"].([]any); ok {
		for _, c := range when {
			cm, _ := c.(map[string]any)
			and(matchCondition(cm, req))
		}
	}
	return result, why
}

// anyOf matches a list of entries each holding a map under field: yes when
// one does, maybe when none does but one may.
func anyOf(list []any, field string, f func(map[string]any) (match, string)) (match, string) {
	best, why := no, ""
	for _, e := range list {
		em, _ := e.(map[string]any)
		inner, _ := em[field].(map[string]any)
		m, w := f(inner)
		if m > best {
			best, why = m, w
		}
	}
	return best, why
}

// matchOperation matches the to.operation fields: each set one must.
func matchOperation(o map[string]any, req Request) (match, string) {
	result, why := yes, ""
	field := func(name string, value string, fold, negate bool) {
		vals := strs(o[name])
		if vals == nil {
			return
		}
		hit := false
		for _, v := range vals {
			if stringMatch(v, value, fold) {
				hit = true
				break
			}
		}
		if hit == negate {
			result, why = no, ""
		}
	}
	field("hosts", req.Host, true, false)
	field("notHosts", req.Host, true, true)
	field("methods", req.Method, false, false)
	field("notMethods", req.Method, false, true)
	if result == no {
		return no, ""
	}
	// Paths: plain entries are matched; a path template ({*}, {**}) is
	// not, so it leaves the match unknown unless a plain entry decides.
	// Istio matches the path it normalized first: a path normalization
	// would change leaves it unknown.
	paths, templates := splitTemplates(strs(o["paths"]))
	notPaths, notTemplates := splitTemplates(strs(o["notPaths"]))
	if len(paths)+len(templates)+len(notPaths)+len(notTemplates) > 0 && !normalized(req.Path) {
		return maybe, "the path is matched after Istio normalizes it, which tracing does not do"
	}
	if len(paths)+len(templates) > 0 {
		hit := false
		for _, p := range paths {
			hit = hit || stringMatch(p, req.Path, false)
		}
		switch {
		case hit:
		case len(templates) > 0:
			result, why = maybe, "to.operation.paths uses a path template ({*}, {**}), not evaluated"
		default:
			return no, ""
		}
	}
	for _, p := range notPaths {
		if stringMatch(p, req.Path, false) {
			return no, ""
		}
	}
	if len(notTemplates) > 0 {
		result, why = maybe, "to.operation.notPaths uses a path template ({*}, {**}), not evaluated"
	}
	if o["ports"] != nil || o["notPorts"] != nil {
		return maybe, "to.operation ports are the connection's (the workload's own port), which a request does not tell"
	}
	return result, why
}

// splitTemplates separates plain paths from path templates.
func splitTemplates(paths []string) (plain, templates []string) {
	for _, p := range paths {
		if strings.Contains(p, "{") {
			templates = append(templates, p)
		} else {
			plain = append(plain, p)
		}
	}
	return plain, templates
}

// normalized reports whether Istio's default path normalization (RFC 3986
// dot segments, merged slashes, percent-decoding of unreserved
// characters) would leave path as it is, as far as a plain check tells:
// no "." or ".." segment, no "//", no percent-encoding.
func normalized(path string) bool {
	if strings.Contains(path, "//") || strings.Contains(path, "%") {
		return false
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// matchCondition matches one when condition: request.headers[name] is
// read from the request; other keys are not.
func matchCondition(c map[string]any, req Request) (match, string) {
	key, _ := c["key"].(string)
	name, ok := strings.CutPrefix(key, "request.headers[")
	if !ok || !strings.HasSuffix(name, "]") {
		return maybe, fmt.Sprintf("when %q is not told by the request", key)
	}
	name = strings.ToLower(strings.TrimSuffix(name, "]"))
	value, present := header(req, name)
	if !present && envoySets(name) {
		return maybe, fmt.Sprintf("when %q: Envoy sets that header before it authorizes", key)
	}
	if vals := strs(c["values"]); vals != nil {
		hit := false
		for _, v := range vals {
			hit = hit || (present && headerMatch(v, value))
		}
		if !hit {
			return no, ""
		}
	}
	for _, v := range strs(c["notValues"]) {
		// The negation of a header matcher: an absent header matches.
		if present && headerMatch(v, value) {
			return no, ""
		}
	}
	return yes, ""
}

// header reads a request header as Envoy's matcher sees it: the
// pseudo-headers from the request line, the others as the client sent
// them.
func header(req Request, name string) (string, bool) {
	switch name {
	case ":authority", "host":
		return req.Host, req.Host != ""
	case ":method":
		return req.Method, req.Method != ""
	case ":path":
		return req.PathQuery, req.PathQuery != ""
	case ":scheme":
		return req.Scheme, req.Scheme != ""
	}
	v, ok := req.Headers[name]
	return v, ok
}

// envoySets reports whether Envoy adds the header itself before its
// authorization filter runs, so that its value is not the client's.
func envoySets(name string) bool {
	switch name {
	case "x-forwarded-proto", "x-forwarded-for", "x-request-id", "x-forwarded-client-cert", "x-forwarded-host", "x-forwarded-port":
		return true
	}
	return strings.HasPrefix(name, "x-envoy-")
}

// headerMatch is stringMatch for a header value: "*" is presence, which a
// header sent empty has.
func headerMatch(pattern, value string) bool {
	if pattern == "*" {
		return true
	}
	return stringMatch(pattern, value, false)
}

// stringMatch is Istio's string match: "*" (presence: any non-empty
// value), "*abc" (suffix; a leading "*" is read first), "abc*" (prefix),
// else exact; fold makes it case-insensitive.
func stringMatch(pattern, value string, fold bool) bool {
	if fold {
		pattern, value = strings.ToLower(pattern), strings.ToLower(value)
	}
	switch {
	case pattern == "*":
		return value != ""
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(value, strings.TrimPrefix(pattern, "*"))
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(value, strings.TrimSuffix(pattern, "*"))
	}
	return pattern == value
}

// strs reads a list of strings; nil when absent or empty.
func strs(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
