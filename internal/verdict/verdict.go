// Package verdict compares the policy status an implementation computes (on
// its own fixtures) with attache's engine.Result, per policy and ancestor, and
// classifies every difference by its likely cause. It is test infrastructure:
// the comparisons live in internal/egfixtures and internal/upstream.
//
// # Ancestors
//
// Implementations report a policy's status per ancestor in Gateway API's
// sense: the Gateway (or listener, ListenerSet, GatewayClass) through which
// the targeted object is reached. attache reports one entry per declared
// target. Compare therefore maps each of attache's entries to the
// implementation's ancestors with Expected.AncestorsOf (GatewayAncestors by
// default), and compares per implementation ancestor. When several of
// attache's entries map to one ancestor they are combined as attache combines
// its own summary: accepted when one of them is, Programmed=Programmed when
// all accepted ones are, Overridden when all are, PartiallyProgrammed
// otherwise.
//
// # Programmed
//
// Implementations rarely say how much of a policy survives. Expectations
// carry one of four classes (see the constants), read off conditions such as
// Envoy Gateway's Overridden and Merged or Kuadrant's Enforced; they are
// compared only where both sides accept the policy. attache's reason
// Unknown is read as two: overridden in part (engine.NotProgrammedInPart),
// which agrees where PartiallyProgrammed does, and programmed nowhere.
package verdict

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Programmed classes of an expectation.
const (
	// AnyProgrammed: not compared.
	AnyProgrammed = ""
	// Full: the implementation says nothing overrides the policy there;
	// attache must say Programmed=True/Programmed.
	Full = "full"
	// LostContext: the implementation says more specific policies override
	// it for some objects; attache must say PartiallyProgrammed or
	// Programmed=False/Overridden.
	LostContext = "overridden"
	// Contributes: the implementation says it is merged with others, which
	// says nothing of how much of it survives the merge (a merge may
	// replace every field it sets): any Programmed reason agrees.
	Contributes = "merged"
	// NotProgrammed: the implementation accepts the policy but programs
	// it nowhere, for no override (Kuadrant's Enforced=False, reason
	// Unknown: "not in the path to any existing routes", "waiting for the
	// following components to sync"): attache must say Programmed=False,
	// reason Unknown, and not for an override in part.
	NotProgrammed = "not-programmed"
)

// unknownInPart is attache's Programmed reason Unknown for a policy
// overridden in part (engine.NotProgrammedInPart) in its verdicts: its
// implementation would have it in effect in part, as PartiallyProgrammed
// says of other kinds.
const unknownInPart = engine.ReasonUnknown + " (overridden in part)"

// Verdict is what is said of a policy at one ancestor.
type Verdict struct {
	// Accepted is "True", or the reason of Accepted=False.
	Accepted string
	// Programmed is a class (Full, LostContext, Contributes, AnyProgrammed)
	// in expectations, and the Programmed reason in attache's verdicts.
	Programmed string
	// Message is the Accepted condition's message.
	Message string
	// ResolvedRefs is "True", or the reason of ResolvedRefs=False, for
	// kinds with that condition (BackendTLSPolicy); "" in an expectation:
	// not compared.
	ResolvedRefs string
}

func (v Verdict) String() string {
	if v.Accepted == "" {
		if v.Message != "" {
			return "(" + v.Message + ")"
		}
		return "(no status)"
	}
	s := "Accepted=" + v.Accepted
	if v.Accepted != "True" && v.Accepted != "False" {
		s = "Accepted=False/" + v.Accepted
	}
	if v.Programmed != "" {
		s += " Programmed:" + v.Programmed
	}
	if v.ResolvedRefs != "" {
		s += " ResolvedRefs=" + v.ResolvedRefs
	}
	return s
}

// Ancestor is one expected PolicyAncestorStatus entry.
type Ancestor struct {
	// Ref is the ancestor (sectionName included).
	Ref topology.Ref
	// Want is what the implementation says there.
	Want Verdict
}

// Policy is the expected status of one policy.
type Policy struct {
	// Ref is the policy.
	Ref topology.Ref
	// Ancestors are the implementation's entries. None means the
	// implementation wrote no status at all (it ignores policies whose
	// targets it cannot find or may not reach): attache must then accept the
	// policy nowhere.
	Ancestors []Ancestor
	// Unmodelled, when not empty, names what the policy uses that attache
	// does not model (e.g. "targetSelectors"): its mismatches get
	// CauseUnmodelled.
	Unmodelled string
}

// Expected is the expected status of the policies of one fixture.
type Expected struct {
	// Fixture names the fixture in reports.
	Fixture string
	// Policies are the policies compared; others in the Result are ignored.
	Policies []Policy
	// AncestorsOf maps a target declared by a policy to the implementation's
	// ancestors for it. Nil: GatewayAncestors(nil).
	AncestorsOf func(res *engine.Result, target topology.Ref) []topology.Ref
}

// Cause classifies a mismatch.
type Cause string

// Causes, from "attache cannot know" to "attache is wrong".
const (
	// CauseUnknownKind: attache does not treat the policy's kind as a
	// policy kind at all.
	CauseUnknownKind Cause = "attache does not recognise the kind"
	// CauseContent: the implementation rejects the policy for its content
	// (fields attache does not read, referenced Secrets/ConfigMaps/
	// Services, feature flags), not for its targets or precedence.
	CauseContent Cause = "implementation validates content attache does not read"
	// CauseUnmodelled: the policy or ancestor uses targeting or references
	// attache does not model (targetSelectors, Envoy Gateway's Backend
	// targets, backends referenced by other policies, ClusterTrustBundles,
	// SDS reference Secrets).
	CauseUnmodelled Cause = "targeting or references attache does not model"
	// CauseTruncated: an ancestor is on one side only, and one side's list
	// is at the Gateway API limit of 16 entries: the two keep different ones.
	CauseTruncated Cause = "ancestor lists truncated at 16"
	// CauseStatusContradicts: the implementation's status says something
	// its own translation does not do (e.g. Overridden for a route its
	// translator leaves to that policy); attache follows the translation.
	// Callers set it for the cases they have read in the implementation's
	// code; Compare never does.
	CauseStatusContradicts Cause = "implementation's status contradicts its own translation"
	// CauseSchemaRefused: the fixture holds a policy that its CRD's schema
	// refuses (attache checks files as the API server would), which the
	// implementation's translator was handed directly, and attache's
	// verdict with schema validation off is not the implementation's
	// either. Callers set it; Compare never does.
	CauseSchemaRefused Cause = "fixture holds a policy its CRD's schema refuses"
	// CauseSchemaRefusedTranslationAgrees: the policy's CRD's schema
	// refuses it (attache says so; no cluster can hold it), and with
	// schema validation off, in the world the implementation's translator
	// saw, attache's verdict is the implementation's. Callers set it;
	// Compare never does.
	CauseSchemaRefusedTranslationAgrees Cause = "its CRD's schema refuses the policy; with schema validation off attache agrees"
	// CauseUnreached: the implementation writes no status for a policy
	// whose ancestors are Gateways when no Gateway reaches its targets;
	// attache reports it at the targets themselves, as docs/semantics.md
	// decides (attache.dev/ancestor: "a target no Gateway reaches keeps
	// its own entry").
	CauseUnreached Cause = "attache reports a policy no Gateway reaches at its targets (documented)"
	// CauseSemantics: targeting or precedence differ: attache is wrong or
	// its profile of the kind is.
	CauseSemantics Cause = "attache wrong (targeting/precedence)"
)

// Mismatch is one difference.
type Mismatch struct {
	Fixture string
	// Policy is the policy; Ancestor the implementation's ancestor, or
	// "(policy)" for a policy-level difference.
	Policy   topology.Ref
	Ancestor string
	// Want is what the implementation says, Got what attache says.
	Want, Got Verdict
	Cause     Cause
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t[%s]\t%s", m.Fixture, m.Policy.Short(), m.Ancestor, m.Want, m.Got, m.Cause, oneLine(m.Want.Message))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// gatewayKinds are the kinds of the ancestors attache names.
var gatewayKinds = map[string]bool{"Gateway": true, "ListenerSet": true, "GatewayClass": true}

// attacheReasons are the Accepted=False reasons attache can give.
var attacheReasons = map[string]bool{
	engine.ReasonConflicted: true, engine.ReasonInvalid: true, engine.ReasonTargetNotFound: true,
	engine.ReasonNoValidCACertificate: true,
}

// targeting says an Invalid message is about targets rather than content.
var targeting = regexp.MustCompile(`(?i)targetref|target ref|sectionname|section name`)

// Compare returns every difference between exp and res, sorted.
func Compare(exp Expected, res *engine.Result) []Mismatch {
	ancestorsOf := exp.AncestorsOf
	if ancestorsOf == nil {
		ancestorsOf = GatewayAncestors(nil)
	}
	byRef := map[topology.Ref]*engine.PolicyStatus{}
	for _, ps := range res.Policies {
		byRef[ps.Policy.Ref] = ps
	}
	var out []Mismatch
	for _, p := range exp.Policies {
		add := func(anc string, want, got Verdict, cause Cause) {
			if p.Unmodelled != "" && cause == CauseSemantics {
				cause = CauseUnmodelled
			}
			out = append(out, Mismatch{Fixture: exp.Fixture, Policy: p.Ref, Ancestor: anc, Want: want, Got: got, Cause: cause})
		}
		ps := byRef[p.Ref]
		if ps == nil {
			want := Verdict{}
			if len(p.Ancestors) > 0 {
				want = p.Ancestors[0].Want
			}
			// Even when the implementation wrote no status either: attache
			// did not judge the policy, which is not agreement.
			cause := CauseUnknownKind
			if attacheKnowsKind(res, p.Ref) {
				cause = CauseSemantics
			}
			add("(policy)", want, Verdict{Message: "no policy status"}, cause)
			continue
		}
		if len(p.Ancestors) == 0 {
			// No status from the implementation: attache must accept it nowhere.
			got := summary(ps)
			if got.Accepted == "True" {
				cause := CauseSemantics
				if unreached(ps) {
					cause = CauseUnreached
				}
				add("(policy)", Verdict{}, got, cause)
			}
			continue
		}
		gotBy := map[topology.Ref][]engine.Ancestor{}
		for _, a := range ps.Ancestors {
			for _, r := range ancestorsOf(res, a.Ref) {
				gotBy[r] = append(gotBy[r], a)
			}
		}
		truncated := len(p.Ancestors) >= engine.MaxAncestors || ps.AncestorsOmitted > 0 || len(gotBy) > engine.MaxAncestors
		oneSide := func(c Cause) Cause {
			if truncated && c == CauseSemantics {
				return CauseTruncated
			}
			return c
		}
		seen := map[topology.Ref]bool{}
		for _, ea := range p.Ancestors {
			seen[ea.Ref] = true
			got, ok := combine(gotBy[ea.Ref])
			if !ok {
				add(ea.Ref.Short(), ea.Want, Verdict{Message: "no ancestor"}, oneSide(classify(ea.Want, ea.Ref)))
				continue
			}
			if !agree(ea.Want, got) {
				add(ea.Ref.Short(), ea.Want, got, classify(ea.Want, ea.Ref))
			}
		}
		var extra []topology.Ref
		for r := range gotBy {
			if !seen[r] {
				extra = append(extra, r)
			}
		}
		sort.Slice(extra, func(i, j int) bool { return extra[i].Less(extra[j]) })
		for _, r := range extra {
			got, _ := combine(gotBy[r])
			add(r.Short(), Verdict{Message: "no ancestor"}, got, oneSide(classify(Verdict{}, r)))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Fixture != b.Fixture {
			return a.Fixture < b.Fixture
		}
		if c := a.Policy.Compare(b.Policy); c != 0 {
			return c < 0
		}
		return a.Ancestor < b.Ancestor
	})
	return out
}

// unreached reports whether ps, of a kind whose ancestors are Gateways,
// has none: every ancestor is a target no Gateway (nor a policy or a data
// plane's parameters using it) reaches.
func unreached(ps *engine.PolicyStatus) bool {
	if m := ps.Policy.Kind.Ancestor; m != policy.AncestorGateway && m != policy.AncestorGatewayObject {
		return false
	}
	for _, a := range ps.Ancestors {
		if !slices.ContainsFunc(ps.Policy.Targets, func(t policy.TargetRef) bool {
			return t.Group == a.Ref.Group && t.Kind == a.Ref.Kind && t.Name == a.Ref.Name && t.Namespace == a.Ref.Namespace && t.SectionName == a.Ref.SectionName
		}) {
			return false
		}
	}
	return len(ps.Ancestors) > 0
}

// attacheKnowsKind says whether res has a policy kind for ref's kind.
func attacheKnowsKind(res *engine.Result, ref topology.Ref) bool {
	for _, k := range res.Kinds {
		if k.GroupKind == ref.GroupKind() {
			return true
		}
	}
	return false
}

func classify(want Verdict, anc topology.Ref) Cause {
	if anc.Kind == "ListenerSet" || !gatewayKinds[anc.Kind] {
		// Also an ancestor that is no Gateway: Envoy Gateway names the
		// policy or EnvoyProxy whose backend a BackendTLSPolicy secures,
		// backend references attache does not follow.
		return CauseUnmodelled
	}
	if want.Accepted != "" && want.Accepted != "True" && !attacheReasons[want.Accepted] {
		return CauseContent
	}
	if want.Accepted == engine.ReasonInvalid && !targeting.MatchString(want.Message) {
		return CauseContent
	}
	return CauseSemantics
}

// agree says whether attache's verdict got satisfies want.
func agree(want, got Verdict) bool {
	if want.Accepted != got.Accepted {
		return false
	}
	if want.ResolvedRefs != "" && want.ResolvedRefs != got.ResolvedRefs {
		return false
	}
	if want.Accepted != "True" {
		return true
	}
	switch want.Programmed {
	case Full:
		return got.Programmed == engine.ReasonProgrammed
	case LostContext:
		return got.Programmed == engine.ReasonPartiallyProgrammed || got.Programmed == engine.ReasonOverridden ||
			got.Programmed == unknownInPart
	case Contributes:
		return got.Programmed == engine.ReasonProgrammed || got.Programmed == engine.ReasonPartiallyProgrammed ||
			got.Programmed == engine.ReasonOverridden || got.Programmed == unknownInPart
	case NotProgrammed:
		return got.Programmed == engine.ReasonUnknown
	}
	return true
}

// fromConditions reads attache's conditions as a Verdict.
func fromConditions(conds []engine.Condition) Verdict {
	var v Verdict
	for _, c := range conds {
		switch c.Type {
		case engine.CondAccepted:
			v.Message = c.Message
			if c.Status == "True" {
				v.Accepted = "True"
			} else {
				v.Accepted = c.Reason
			}
		case engine.CondProgrammed:
			v.Programmed = c.Reason
			if engine.NotProgrammedInPart(c) {
				v.Programmed = unknownInPart
			}
		case engine.CondResolvedRefs:
			v.ResolvedRefs = c.Reason
			if c.Status == "True" {
				v.ResolvedRefs = "True"
			}
		}
	}
	return v
}

func summary(ps *engine.PolicyStatus) Verdict { return fromConditions(ps.Conditions) }

// combine folds attache's entries mapped to one ancestor (see the package
// documentation); false when there are none.
func combine(as []engine.Ancestor) (Verdict, bool) {
	if len(as) == 0 {
		return Verdict{}, false
	}
	var accepted []Verdict
	first := fromConditions(as[0].Conditions)
	for _, a := range as {
		v := fromConditions(a.Conditions)
		if v.Accepted == "True" {
			accepted = append(accepted, v)
		}
	}
	if len(accepted) == 0 {
		return first, true
	}
	out := accepted[0]
	for _, v := range accepted[1:] {
		if v.Programmed != out.Programmed {
			out.Programmed = engine.ReasonPartiallyProgrammed
		}
	}
	return out, true
}

// GatewayAncestors returns the usual ancestor mapping of Gateway API
// implementations: a Gateway, listener, ListenerSet or GatewayClass target
// is its own ancestor; a route (or route rule) has the Gateways of its
// parentRefs, as written in the route (sectionName kept, namespace defaulted
// to the route's); any other target (a Service, ...) has the Gateways above
// it in attache's graph. routes are the input objects holding the routes'
// parentRefs; nil falls back to the graph for routes too (listeners above
// the route).
func GatewayAncestors(objs []engine.Object) func(*engine.Result, topology.Ref) []topology.Ref {
	parents := map[topology.Ref][]topology.Ref{}
	for _, o := range objs {
		u := o.Object
		if !routeKinds[u.GetKind()] {
			continue
		}
		ns := u.GetNamespace()
		if ns == "" {
			ns = engine.DefaultNamespace
		}
		route := topology.Ref{Group: groupOf(u.GetAPIVersion()), Kind: u.GetKind(), Namespace: ns, Name: u.GetName()}
		refs, _, _ := nestedSlice(u.Object, "spec", "parentRefs")
		for _, r := range refs {
			m, _ := r.(map[string]any)
			parents[route] = append(parents[route], gatewayapi.ParentRefOf(m, ns))
		}
	}
	return func(res *engine.Result, t topology.Ref) []topology.Ref {
		switch {
		case t.Group == gatewayGroup && (t.Kind == "Gateway" || t.Kind == "ListenerSet" || t.Kind == "GatewayClass"):
			return []topology.Ref{t}
		case t.Group == gatewayGroup && routeKinds[t.Kind] && objs != nil:
			return parents[t.Object()]
		case isPolicy(res, t), slices.Contains(profiles.ClassParametersKinds, t.GroupKind()):
			// A policy sending traffic to the backend itself (Envoy
			// Gateway's external services), or GatewayClass parameters
			// sending their telemetry there (an EnvoyProxy), is the
			// ancestor as named.
			return []topology.Ref{t}
		}
		return gatewaysAbove(res.Graph, t)
	}
}

const gatewayGroup = "gateway.networking.k8s.io"

// isPolicy reports whether ref names a policy of res.
func isPolicy(res *engine.Result, ref topology.Ref) bool {
	for _, ps := range res.Policies {
		if ps.Policy.Ref == ref {
			return true
		}
	}
	return false
}

var routeKinds = map[string]bool{"HTTPRoute": true, "GRPCRoute": true, "TLSRoute": true, "TCPRoute": true, "UDPRoute": true}

func groupOf(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

func nestedSlice(m map[string]any, path ...string) ([]any, bool, error) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = mm[p]
	}
	s, ok := cur.([]any)
	return s, ok, nil
}

// gatewaysAbove returns the Gateway objects above t in g: listeners count
// as their Gateway, for implementations that report the Gateway only.
func gatewaysAbove(g *topology.Graph, t topology.Ref) []topology.Ref {
	if g == nil {
		return nil
	}
	id, ok := g.Lookup(t)
	if !ok {
		return nil
	}
	found := map[topology.Ref]bool{}
	g.Walk([]topology.NodeID{id}, topology.Parents, func(_ topology.NodeID, node *topology.Node) bool {
		if node.Ref.Group == gatewayGroup && node.Ref.Kind == "Gateway" {
			found[node.Ref.Object()] = true
			return false
		}
		return true
	})
	out := make([]topology.Ref, 0, len(found))
	for r := range found {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}
