package engine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// Conditions and reasons of kinds with CA certificate references (Gateway
// API, BackendTLSPolicy).
const (
	CondResolvedRefs              = "ResolvedRefs"
	ReasonResolvedRefs            = "ResolvedRefs"
	ReasonInvalidKind             = policy.ReasonInvalidKind
	ReasonInvalidCACertificateRef = policy.ReasonInvalidCACertificateRef
	ReasonNoValidCACertificate    = "NoValidCACertificate"
)

// holderKinds collects the kinds whose data some policy kind reads (CA
// certificate holders, object references; nil when none does): only then
// are ConfigMaps and Secrets read.
func (c *computation) collectHolderKinds() {
	c.holderKinds, c.allFacts, c.factTypes = nil, false, nil
	for _, k := range c.kinds {
		for _, gk := range k.HolderKinds() {
			if c.holderKinds == nil {
				c.holderKinds = map[topology.GroupKind]bool{}
				c.holders = map[topology.Ref][]string{}
				c.secretTypes = map[topology.Ref]string{}
			}
			c.holderKinds[gk] = true
		}
		sds := k.CARefs.SDSTypes()
		if (k.HasContent() || len(sds) > 0) && c.holderFacts == nil {
			c.holderFacts = map[topology.Ref]map[string]holderdata.Fact{}
		}
		c.allFacts = c.allFacts || k.HasContent()
		for _, t := range sds {
			if c.factTypes == nil {
				c.factTypes = map[string]bool{}
			}
			c.factTypes[t] = true
		}
		for _, r := range k.ObjectRefs {
			if r.DefaultLabel == "" {
				continue
			}
			if c.holderLabels == nil {
				c.holderLabels = map[string]map[topology.Ref]bool{}
			}
			if c.holderLabels[r.DefaultLabel] == nil {
				c.holderLabels[r.DefaultLabel] = map[topology.Ref]bool{}
			}
		}
	}
}

// clock is the time referenced data is judged at (Options.Now).
func (c *computation) clock() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// addHolder records holder u: its data keys, and its type when a Secret.
func (c *computation) addHolder(u *unstructured.Unstructured) {
	r := holderRef(u)
	c.holders[r] = dataKeys(u)
	for label, set := range c.holderLabels {
		key, val, _ := strings.Cut(label, "=")
		if v, ok := u.GetLabels()[key]; ok && v == val {
			set[r] = true
		} else {
			delete(set, r) // an update may have dropped the label
		}
	}
	if policy.StatusHolder(r.GroupKind()) {
		// An issuer holds no data: what its status says is read.
		if c.holderConds == nil {
			c.holderConds = map[topology.Ref]holderConds{}
		}
		c.holderConds[r] = readHolderConds(u)
		return
	}
	t := ""
	if r.GroupKind() == policy.KindSecret {
		t, _ = u.Object["type"].(string)
		if t == "" {
			t = "Opaque" // the API server's default
		}
		c.secretTypes[r] = t
	}
	if c.holderFacts != nil && !policy.ClusterScopedHolder(r.GroupKind()) {
		if c.allFacts || c.factTypes[t] {
			c.holderFacts[r] = holderdata.Read(u)
		} else {
			delete(c.holderFacts, r) // an update may have changed its type
		}
	}
}

// removeHolder forgets holder r.
func (c *computation) removeHolder(r topology.Ref) {
	delete(c.holders, r)
	delete(c.holderFacts, r)
	delete(c.secretTypes, r)
	delete(c.holderConds, r)
	for _, set := range c.holderLabels {
		delete(set, r)
	}
}

// labelled gives the holders of kind gk in namespace ns carrying label
// (one of holderLabels'), sorted.
func (c *computation) labelled(gk topology.GroupKind, ns, label string) []topology.Ref {
	var out []topology.Ref
	for r := range c.holderLabels[label] {
		if r.GroupKind() == gk && r.Namespace == ns {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b topology.Ref) int { return a.Compare(b) })
	return out
}

// dataKeys returns the sorted data keys of a ConfigMap (data, binaryData)
// or Secret (data, stringData): which keys a holder has is all the engine
// reads of it, so that readers may drop the values.
func dataKeys(u *unstructured.Unstructured) []string {
	keys := []string{}
	if policy.StatusHolder(gkOf(u)) {
		return keys // no data: its status is read (readHolderConds)
	}
	if gkOf(u) == policy.KindClusterTrustBundle {
		// A ClusterTrustBundle holds certificates when its bundle is set.
		if b, _, _ := unstructured.NestedString(u.Object, "spec", "trustBundle"); b != "" {
			keys = append(keys, policy.TrustBundleKey)
		}
		return keys
	}
	for _, f := range []string{"data", "binaryData", "stringData"} {
		m, _ := u.Object[f].(map[string]any)
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// holderRef is the reference under which a holder is looked up: its
// namespace defaulted as classify defaults it.
func holderRef(u *unstructured.Unstructured) topology.Ref {
	r := refOf(u)
	if policy.ClusterScopedHolder(r.GroupKind()) {
		r.Namespace = ""
	} else if r.Namespace == "" {
		r.Namespace = DefaultNamespace
	}
	return r
}

// caCheck is the outcome of resolving a policy's CA certificate references.
type caCheck struct {
	// resolved is the ResolvedRefs condition.
	resolved Condition
	// noValid is set when the policy names references and none resolves:
	// Accepted=False/NoValidCACertificate with message msg.
	noValid bool
	// invalid is set when the policy names more references than the
	// reading takes (CAReading.Max): Accepted=False/Invalid with message
	// msg, and no ResolvedRefs (NGINX Gateway Fabric says none).
	invalid bool
	msg     string
}

// checkCARefs resolves the CA certificate references of p, for a kind that
// has them; nil otherwise, and when some reference could not be read
// (Options.Unread) and none of the others is broken: nothing is said then.
func (c *computation) checkCARefs(p *policy.Policy) *caCheck {
	return c.checkCARefsAs(p, p.Kind.CARefs.For(""))
}

// caReadingAt is the reading of p's CA certificate references at target:
// that of the implementation serving the Gateways above it (the
// controllerName of their GatewayClass; through a ListenerSet, its
// Gateway's) when the kind has one for it and they all have the same;
// else the kind's default. Gateways whose class is not among the objects
// say nothing. A target with no such Gateway above it takes the
// Gateways of the policies sending traffic to it themselves (an Envoy
// Gateway SecurityPolicy's external authorization service).
func (c *computation) caReadingAt(p *policy.Policy, target topology.Ref) policy.CARefs {
	if len(p.Kind.CARefs.ByController) == 0 {
		return p.Kind.CARefs.For("")
	}
	return readingOf(p, c.controllersAt(target))
}

// controllersAt are the implementations target takes effect through:
// those of the Gateways above it (controllersAbove), else those of the
// policies sending traffic to it themselves (an Envoy Gateway
// SecurityPolicy's authorizer, an NGINX Gateway Fabric PayloadProcessor's
// backend: the Gateways above their targets; an EnvoyProxy sending its
// telemetry there: Envoy Gateway).
func (c *computation) controllersAt(target topology.Ref) map[string]bool {
	ctls := c.controllersAbove(target)
	if len(ctls) == 0 {
		for _, u := range c.policiesUsing(target) {
			if ps := c.byRef[u]; ps != nil {
				c.addControllersOf(ps.p, ctls)
			} else if u.GroupKind() == profiles.EnvoyProxy {
				ctls[profiles.EnvoyGatewayController] = true
			}
		}
	}
	return ctls
}

// caReadingUsedBy is the reading of p's CA certificate references at
// backend b when policy user sends traffic to it: as caReadingAt, with the
// Gateways of user's targets when none is above b. (For use while
// policies are attached, when policiesUsing is not yet known.)
func (c *computation) caReadingUsedBy(p *policy.Policy, b topology.Ref, user *policy.Policy) policy.CARefs {
	if len(p.Kind.CARefs.ByController) == 0 {
		return p.Kind.CARefs.For("")
	}
	ctls := c.controllersAbove(b)
	if len(ctls) == 0 {
		c.addControllersOf(user, ctls)
	}
	return readingOf(p, ctls)
}

// readingOf is p's reading for the one implementation of ctls, the
// default for none or several.
func readingOf(p *policy.Policy, ctls map[string]bool) policy.CARefs {
	if len(ctls) == 1 {
		for ctl := range ctls {
			return p.Kind.CARefs.For(ctl)
		}
	}
	return p.Kind.CARefs.For("") // none known, or Gateways of several implementations
}

// addControllersOf adds to ctls the controllers above the targets of p
// named by reference.
func (c *computation) addControllersOf(p *policy.Policy, ctls map[string]bool) {
	for _, t := range p.Targets {
		if t.Selector == nil {
			for ctl := range c.controllersAbove(targetRef(t)) {
				ctls[ctl] = true
			}
		}
	}
}

// controllersAbove are the controllerNames of the GatewayClasses of the
// Gateways above target (gatewaysAbove; a ListenerSet stands for its
// Gateway), of those whose class is among the objects.
func (c *computation) controllersAbove(target topology.Ref) map[string]bool {
	out := map[string]bool{}
	for _, gw := range c.gatewaysAbove(target) {
		ref := gw.Object()
		if topology.IsListenerSet(ref.GroupKind()) {
			ref = c.listenerSetGateway(ref)
		}
		if f, ok := c.gateways[ref]; ok && f.classKnown {
			out[f.controller] = true
		}
	}
	return out
}

// listenerSetGateway is the Gateway ListenerSet ls is attached to (its
// parent in the graph), the zero Ref when none admits it.
func (c *computation) listenerSetGateway(ls topology.Ref) topology.Ref {
	id, ok := c.graph.Lookup(ls)
	if !ok {
		return topology.Ref{}
	}
	for _, p := range c.graph.Node(id).Parents {
		if r := c.graph.Node(p).Ref; r.GroupKind() == topology.KindGateway {
			return r.Object()
		}
	}
	return topology.Ref{}
}

// checkCARefsAs is checkCARefs under reading r (policy.CARefs.For).
func (c *computation) checkCARefsAs(p *policy.Policy, r policy.CARefs) *caCheck {
	if !p.Kind.CARefs.Enabled() {
		return nil
	}
	if r.Max > 0 && len(p.CARefs) > r.Max {
		return &caCheck{invalid: true, msg: fmt.Sprintf("spec.%s: %d references, its implementation takes at most %d", r.Field, len(p.CARefs), r.Max)}
	}
	holder := func(r topology.Ref) (policy.Holder, bool) {
		k, ok := c.holders[r]
		return policy.Holder{Keys: k, Type: c.secretTypes[r], Facts: c.holderFacts[r]}, ok
	}
	probs, valid, unknown := p.CheckCARefsWith(r, policy.CAHolders{Holder: holder, Unread: c.opts.Unread, Features: c.features})
	if len(probs) == 0 {
		if unknown {
			return nil
		}
		msg := "Resolved all the object references"
		if len(p.CARefs) == 0 {
			msg = "The policy names no CA certificate references"
		}
		return &caCheck{resolved: Condition{Type: CondResolvedRefs, Status: "True", Reason: ReasonResolvedRefs, Message: msg}}
	}
	msgs := make([]string, len(probs))
	for i, pr := range probs {
		msgs[i] = pr.Message
	}
	msg := strings.Join(msgs, "; ")
	// One reason for the condition: that of the first broken reference.
	out := &caCheck{resolved: Condition{Type: CondResolvedRefs, Status: "False", Reason: probs[0].Reason, Message: msg}}
	// Gateway API: no valid one when none resolves; a strict reading
	// (Envoy Gateway) fails at the first that does not.
	if (valid == 0 && !unknown) || r.Strict {
		out.noValid = true
		out.msg = fmt.Sprintf("No valid CA certificate: %s", msg)
	}
	return out
}

// referencesHolder reports whether p names holder r among its CA
// certificate references (under any reading of its kind: Envoy Gateway's
// names a ClusterTrustBundle by kind alone) or object references.
func referencesHolder(p *policy.Policy, r topology.Ref) bool {
	if slices.Contains(p.HolderRefs(), r) {
		return true
	}
	for _, ref := range p.ObjectRefs {
		if ref.Object == r {
			return true
		}
	}
	return false
}

// unresolvedObjectRefs checks the object references of p (a kind with
// ObjectRefs): the field of the first that does not resolve, the message
// for the policy's ancestors (every broken reference) and the problem to
// report for that field; all empty when every judged one resolves.
func (c *computation) unresolvedObjectRefs(p *policy.Policy) (field, msg, problem string) {
	return c.unresolvedObjectRefsWhere(p, func(path *policy.ObjectRefPath) bool { return len(path.On) == 0 })
}

// unresolvedRefsAt is unresolvedObjectRefs for the references p's kind
// judges at some targets only (ObjectRefPath.On): those whose listener
// protocols target at has.
func (c *computation) unresolvedRefsAt(p *policy.Policy, at topology.Ref) (field, msg, problem string) {
	if p.Kind.ObjectRefsOnListeners() && len(p.ObjectRefs) > 0 {
		field, msg, problem = c.unresolvedObjectRefsWhere(p, func(path *policy.ObjectRefPath) bool {
			return len(path.On) > 0 && c.hasListener(at, path.On)
		})
	}
	for _, g := range []struct {
		head, one string
		bad       []policy.FieldProblem
	}{
		{"values its implementation refuses: ", "value refused by its implementation: ", c.rangesAt(p, at)},
		{"the data plane does not allow: ", "the data plane does not allow it: ", c.notAllowedAt(p, at)},
	} {
		if len(g.bad) == 0 {
			continue
		}
		refused := g.head + fieldProblems(g.bad)
		if msg != "" {
			msg += "; " + refused
			continue
		}
		field, msg, problem = g.bad[0].Field, refused, g.one+g.bad[0].Message
		if len(g.bad) > 1 {
			problem += "; and " + fieldProblems(g.bad[1:])
		}
	}
	return field, msg, problem
}

// rangesAt are the values of p out of the ranges its kind checks at
// targets with listeners of some protocols only (ValueRange.On), then the
// rules of its kind judged there only that do not hold (Validation.On),
// at target at.
func (c *computation) rangesAt(p *policy.Policy, at topology.Ref) []policy.FieldProblem {
	var out []policy.FieldProblem
	if p.Kind.ValueRangesOnListeners() {
		out = p.OutOfRangeWhere(func(r policy.ValueRange) bool { return len(r.On) > 0 && c.hasListener(at, r.On) })
	}
	if p.Kind.ValidationsOnListeners() {
		out = append(out, p.ViolationsUnder(c.features, func(v policy.Validation) bool { return len(v.On) > 0 && c.hasListener(at, v.On) })...)
	}
	if p.Kind.ValidationsReadListener() {
		out = append(out, c.listenerViolations(p, at)...)
	}
	return out
}

// hasListener reports whether target at (a Gateway with its ListenerSets'
// listeners, a ListenerSet, a listener) has a listener of one of protos;
// a TLS listener that passes TLS through does not count.
func (c *computation) hasListener(at topology.Ref, protos []string) bool {
	for _, l := range c.listenersAt(at) {
		lp, ok := c.listenerPorts[l]
		if ok && slices.Contains(protos, lp.proto) && !(lp.proto == "TLS" && lp.passthrough) {
			return true
		}
	}
	return false
}

// listenersAt are the listeners of target at: a Gateway's with its
// ListenerSets', a ListenerSet's, a listener itself; none for other
// targets.
func (c *computation) listenersAt(at topology.Ref) []topology.Ref {
	id, ok := c.graph.Lookup(at)
	if !ok {
		return nil
	}
	switch gk := at.GroupKind(); {
	case at.IsListener():
		return []topology.Ref{at}
	case gk == topology.KindGateway:
		return c.gatewayListeners(id)
	case topology.IsListenerSet(gk):
		return c.sections(id)
	}
	return nil
}

// failsClosed reports whether a policy Invalid in place at target at
// fails its routes (Kind.FailureStatus): some reference that does not
// resolve there lies outside the parts its kind lets fail open
// (Kind.FailOpen) with their flag set.
func (c *computation) failsClosed(p *policy.Policy, at topology.Ref) bool {
	if len(p.Kind.FailOpen) == 0 {
		return true
	}
	fields := c.brokenFields(p, at)
	for _, f := range fields {
		if !p.FailsOpen(f) {
			return true
		}
	}
	return len(fields) == 0
}

// brokenFields are the fields of the references of p that its kind judges
// and that do not resolve at target at, and of its values out of range.
func (c *computation) brokenFields(p *policy.Policy, at topology.Ref) []string {
	var fields []string
	if p.Kind.InvalidOnUnresolvedBackendRefs {
		fields, _ = c.brokenBackendRefs(p)
	}
	h := c.holdersFor(p)
	judge := func(path *policy.ObjectRefPath) bool { return len(path.On) == 0 || c.hasListener(at, path.On) }
	for _, pr := range append(p.CheckObjectRefsWith(h, judge), c.objectDataProblems(p, judge)...) {
		fields = append(fields, pr.Ref.Field)
	}
	// A value out of range, or a field whose feature is off, fails the
	// policy wherever it lies; a range checked on some listeners only,
	// where they are.
	for _, b := range c.refusedValues(p) {
		fields = append(fields, b.Field)
	}
	for _, b := range c.rangesAt(p, at) {
		fields = append(fields, b.Field)
	}
	for _, b := range c.notAllowedAt(p, at) {
		fields = append(fields, b.Field)
	}
	return fields
}

// refusedValues are the fields of p its implementation refuses whatever
// the target: values out of its kind's ranges, then fields that need a
// feature its configuration has off.
func (c *computation) refusedValues(p *policy.Policy) []policy.FieldProblem {
	var out []policy.FieldProblem
	if len(p.Kind.ValueRanges) > 0 {
		out = p.OutOfRange()
	}
	if len(p.Kind.RegexFields) > 0 {
		out = append(out, p.BadRegexes()...)
	}
	if len(p.Kind.Validations) > 0 {
		out = append(out, p.ViolationsUnder(c.features, everyTarget)...)
	}
	if len(p.Kind.FeatureGates) > 0 {
		out = append(out, p.GatedOff(c.features)...)
	}
	return out
}

// everyTarget accepts the rules judged at every target (policy.Policy.
// Violations).
func everyTarget(v policy.Validation) bool { return len(v.On) == 0 }

// unresolvedObjectRefsWhere checks the object references of p whose path
// judge accepts.
func (c *computation) unresolvedObjectRefsWhere(p *policy.Policy, judge func(*policy.ObjectRefPath) bool) (field, msg, problem string) {
	h := c.holdersFor(p)
	probs := p.CheckObjectRefsWith(h, judge)
	data := c.objectDataProblems(p, judge)
	var msgs []string
	for _, g := range []struct {
		probs              []policy.ObjectRefProblem
		head, first, later string
	}{
		{probs, "references do not resolve: ", "reference does not resolve: ", "; nor do "},
		{data, "data its implementation refuses: ", "data refused by its implementation: ", "; nor "},
	} {
		if len(g.probs) == 0 {
			continue
		}
		texts := make([]string, len(g.probs))
		for i, pr := range g.probs {
			texts[i] = pr.Message
		}
		msgs = append(msgs, g.head+strings.Join(texts, "; "))
		if field == "" {
			field = g.probs[0].Ref.Field
			problem = g.first + strings.TrimPrefix(texts[0], field+": ")
			if len(texts) > 1 {
				problem += g.later + strings.Join(texts[1:], "; ")
			}
		}
	}
	return field, strings.Join(msgs, "; "), problem
}

// holdersFor is what the checks of p's object references read of the
// ConfigMaps and Secrets.
func (c *computation) holdersFor(p *policy.Policy) policy.Holders {
	return policy.Holders{
		Keys: func(r topology.Ref) ([]string, bool) {
			k, ok := c.holders[r]
			return k, ok
		},
		Facts:    func(r topology.Ref) map[string]holderdata.Fact { return c.holderFacts[r] },
		Unread:   c.opts.Unread,
		Granted:  func(r topology.Ref) bool { return c.grantAllows(p, r) },
		Now:      c.now,
		Labelled: c.labelled,
	}
}

// objectDataProblems are the problems of the data p's references name
// (policy.ObjectRefPath.Content), of the paths judge accepts; the first
// time a verdict changes is kept in recheckAt.
func (c *computation) objectDataProblems(p *policy.Policy, judge func(*policy.ObjectRefPath) bool) []policy.ObjectRefProblem {
	if c.holderFacts == nil || !p.Kind.HasContent() {
		return nil
	}
	probs, t := p.CheckObjectData(c.holdersFor(p), judge)
	if !t.IsZero() && (c.recheckAt.IsZero() || t.Before(c.recheckAt)) {
		c.recheckAt = t
	}
	return probs
}

// untranslatable checks what p's implementation checks when it
// translates p, which makes p Invalid in place: the references its kind
// judges (backendRefs under unresolvedBackendRefs: invalid, then
// objectRefs), then the values its kind bounds (valueRanges), compiles
// (regexFields) or judges by rules (validations) and the fields whose
// feature its configuration has off (featureGates). It returns
// the field of the first that fails, the message for the policy's
// ancestors and the problem to report; all empty when none fails.
func (c *computation) untranslatable(p *policy.Policy) (field, msg, problem string) {
	if p.Kind.InvalidOnUnresolvedBackendRefs {
		field, msg, problem = c.unresolvedBackendRefs(p)
	}
	if msg == "" && len(p.ObjectRefs) > 0 {
		field, msg, problem = c.unresolvedObjectRefs(p)
	}
	var ranges, gated []policy.FieldProblem
	if len(p.Kind.ValueRanges) > 0 {
		ranges = p.OutOfRange()
	}
	if len(p.Kind.RegexFields) > 0 {
		ranges = append(ranges, p.BadRegexes()...)
	}
	if len(p.Kind.Validations) > 0 {
		ranges = append(ranges, p.ViolationsUnder(c.features, everyTarget)...)
	}
	if len(p.Kind.FeatureGates) > 0 {
		gated = p.GatedOff(c.features)
	}
	if len(ranges)+len(gated) == 0 {
		return field, msg, problem
	}
	var groups []string
	for _, g := range []struct {
		head string
		bad  []policy.FieldProblem
	}{{"values its implementation refuses: ", ranges}, {"fields its implementation's configuration turns off: ", gated}} {
		if len(g.bad) > 0 {
			groups = append(groups, g.head+fieldProblems(g.bad))
		}
	}
	refused := strings.Join(groups, "; ")
	if msg != "" {
		return field, msg + "; " + refused, problem
	}
	bad := append(ranges, gated...)
	if len(ranges) > 0 {
		problem = "value refused by its implementation: " + bad[0].Message
	} else {
		problem = "field turned off by its implementation's configuration: " + bad[0].Message
	}
	if len(bad) > 1 {
		problem += "; nor " + fieldProblems(bad[1:])
	}
	return bad[0].Field, refused, problem
}

// fieldProblems renders field problems as "<field>: <message>; ...".
func fieldProblems(bad []policy.FieldProblem) string {
	parts := make([]string, len(bad))
	for i, b := range bad {
		parts[i] = b.Field + ": " + b.Message
	}
	return strings.Join(parts, "; ")
}

// caByGateway returns, for a target of a policy with CA certificate
// references read per implementation (policy.CARefs.ByController) whose
// Gateways are of several implementations, the conditions of each
// Gateway's ancestor entry under its own implementation's reading (nil
// for a Gateway whose class is not among the objects: the target's
// entry stands); nil otherwise. Each implementation writes its own entry
// as it reads the references (a Service behind an Envoy Gateway and an
// NGINX Gateway Fabric Gateway).
func (c *computation) caByGateway(ps *pstate, att *attachment, target topology.Ref) func(topology.Ref) []Condition {
	if len(ps.p.Kind.CARefs.ByController) == 0 || (len(c.controllersAbove(target)) < 2 && !c.gatewayUsers(target)) {
		return nil
	}
	return func(gw topology.Ref) []Condition {
		ref := gw.Object()
		if topology.IsListenerSet(ref.GroupKind()) {
			ref = c.listenerSetGateway(ref)
		}
		f, ok := c.gateways[ref]
		if !ok || !f.classKnown {
			return nil
		}
		chk := c.checkCARefsAs(ps.p, ps.p.Kind.CARefs.For(f.controller))
		switch {
		case chk == nil:
			return nil
		case chk.invalid:
			return []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonInvalid, Message: chk.msg}}
		case chk.noValid:
			return []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonNoValidCACertificate, Message: chk.msg}, chk.resolved}
		}
		return []Condition{
			{Type: CondAccepted, Status: "True", Reason: ReasonAccepted, Message: "Policy is accepted for this target"},
			c.programmed(ps, att),
			chk.resolved,
		}
	}
}

// gatewayUsers reports whether a policy sending traffic to target gives
// its backend's policies the Gateways it applies through as ancestors
// (policy.Kind.BackendRefAncestorGateways): each of those is judged by its
// own implementation's reading, which need not be that of the Gateways
// above target.
func (c *computation) gatewayUsers(target topology.Ref) bool {
	for _, u := range c.policiesUsing(target) {
		if ps := c.byRef[u]; ps != nil && ps.p.Kind.BackendRefAncestorGateways {
			return true
		}
	}
	return false
}

// holderConds is what the status of a status holder (policy.StatusHolder:
// cert-manager's issuers) says: the condition types it holds True, and
// whether it holds conditions at all (a manifest holds none).
type holderConds struct {
	read      bool
	trueTypes []string
}

// readHolderConds reads the status conditions of a status holder.
func readHolderConds(u *unstructured.Unstructured) holderConds {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	hc := holderConds{read: len(conds) > 0}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["status"] == "True" {
			if t, _ := m["type"].(string); t != "" && !slices.Contains(hc.trueTypes, t) {
				hc.trueTypes = append(hc.trueTypes, t)
			}
		}
	}
	sort.Strings(hc.trueTypes)
	return hc
}

// holderCondsDigest is readHolderConds as a string, for comparing two
// copies of a status holder ("" for any other object).
func holderCondsDigest(u *unstructured.Unstructured) string {
	if !policy.StatusHolder(gkOf(u)) {
		return ""
	}
	hc := readHolderConds(u)
	return strconv.FormatBool(hc.read) + "\x00" + strings.Join(hc.trueTypes, "\x00")
}

// withUnreadyRefs makes cond, the Programmed condition of policy p with
// reach r, Programmed=False, reason Unknown, when an object p names at a
// path with a Ready condition (policy.ObjectRefPath.Ready) exists and its
// status does not hold that condition True: its implementation waits for
// it (Kuadrant's TLSPolicy, for its issuer to be Ready); and, where p has
// effective targets, when a reference at a path whose missing objects
// leave it not programmed (policy.ObjectRefPath.MissingNotProgrammed)
// does not resolve (Kuadrant's DNSPolicy, its provider Secret).
func (c *computation) withUnreadyRefs(p *policy.Policy, r Reach, cond Condition) Condition {
	var probs []policy.ObjectRefProblem
	if c.holderConds != nil {
		probs = p.NotReadyRefs(func(r topology.Ref) ([]string, bool, bool) {
			if _, found := c.holders[r]; !found {
				return nil, false, false
			}
			hc := c.holderConds[r]
			return hc.trueTypes, hc.read, true
		})
	}
	if r.Contexts > 0 && len(p.ObjectRefs) > 0 {
		h := c.holdersFor(p)
		probs = append(probs, p.WaitingObjectRefsWith(h)...)
	}
	if len(probs) == 0 {
		return cond
	}
	texts := make([]string, len(probs))
	for i, pr := range probs {
		texts[i] = pr.Message
	}
	return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonUnknown,
		Message: "Policy is not programmed: its implementation waits for what it names to be ready: " + strings.Join(texts, "; ")}
}
