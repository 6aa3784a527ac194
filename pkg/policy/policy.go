package policy

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// MaxTargetRefs is the most targetRefs a policy may declare (GEP-713).
const MaxTargetRefs = 16

// TargetRef is one entry of spec.targetRefs (or spec.targetRef).
type TargetRef struct {
	// Group and Kind of the target; Group "" is the core group.
	Group string
	Kind  string
	// Name, Namespace (the policy's when absent or empty) and SectionName
	// for a reference by name.
	Name        string
	Namespace   string
	SectionName string
	// Selector, for a reference by labels, over objects of Group/Kind in the
	// policy's namespace (all namespaces for cluster-scoped kinds, and for
	// cluster-scoped policies).
	Selector labels.Selector
	// Namespaces, for a selector from Envoy Gateway's targetSelectors,
	// widens the namespaces it selects in; nil means the policy's own.
	Namespaces *NamespaceFilter
	// Field is the path of this entry in the policy, for messages.
	Field string
}

// NamespaceFilter says in which namespaces a selector selects (Envoy
// Gateway's targetSelectors[].namespaces). Targets it selects in another
// namespace than the policy's without a ReferenceGrant are skipped, not
// invalid, as Envoy Gateway does.
type NamespaceFilter struct {
	// From is "Same", "All" or "Selector".
	From string
	// Selector selects Namespaces by label when From is "Selector".
	Selector labels.Selector
}

// Namespace filter values.
const (
	NamespacesSame     = "Same"
	NamespacesAll      = "All"
	NamespacesSelector = "Selector"
)

// GroupKind returns the target's group and kind.
func (t TargetRef) GroupKind() topology.GroupKind {
	return topology.GroupKind{Group: t.Group, Kind: t.Kind}
}

// Policy is a parsed policy instance. Parse always returns one; when
// Problems is not empty the policy is not accepted (reason Invalid).
type Policy struct {
	// Ref is the policy object (group, kind, namespace, name).
	Ref topology.Ref
	// Kind is the policy's kind descriptor.
	Kind *Kind
	// Created is metadata.creationTimestamp; zero when absent (sorts as equal).
	Created time.Time
	// Generation is metadata.generation.
	Generation int64
	// Weight is the value of the kind's WeightAnnotation (0 when absent or
	// the kind has none): at one level, a higher weight counts as
	// established before a lower one.
	Weight int32
	// Targets are the declared targets, in order.
	Targets []TargetRef
	// Stanza is "defaults", "overrides", or "" for a bare spec proper.
	Stanza string
	// Strategy is the resolved merge strategy.
	Strategy merge.Strategy
	// Spec is the spec proper: no targetRefs, stanza wrapper or strategy field.
	Spec map[string]any
	// MergeType is the value of the kind's MergeTypeField (MergeTypeJSON,
	// MergeTypeStrategic), "" when absent: the policy then merges with the
	// nearest policy above it instead of replacing it.
	MergeType string
	// UnmodelledTargeting names the field that selects the policy's targets
	// when it is one of the kind's TargetingFields attache does not model
	// (e.g. "spec.selector", Istio's workload selector); the policy then
	// has no Targets and is not Invalid.
	UnmodelledTargeting string
	// Untargeted, for a kind whose UntargetedScope is set, is what a
	// policy naming no targets selects in its stead.
	Untargeted *WorkloadSelection
	// CARefs are the policy's CA certificate references, for a kind with
	// CARefs (see Kind.CARefs), in order.
	CARefs []CARef
	// BackendRefs are the backends the policy names at its kind's
	// BackendRefs paths, in order.
	BackendRefs []BackendRef
	// ObjectRefs are the ConfigMaps and Secrets the policy names at its
	// kind's ObjectRefs paths, in order.
	ObjectRefs []ObjectRef
	// badRegexes are BadRegexes as Parse read them (regexesRead): the
	// engine asks at every target and status pass, and a regular
	// expression compiles once.
	badRegexes  []FieldProblem
	regexesRead bool
	// validations are the kind's rules that do not hold for the policy
	// (Violations) as Parse evaluated them (validationsRead): once per
	// policy.
	validations     []ruleProblem
	validationsRead bool
	// translationProblems counts the Problems its implementation finds
	// when it translates the policy (see TranslationInvalid).
	translationProblems int
	// Problems make the policy Invalid; each names the field.
	Problems []diag.Problem
	// Ignored are what Parse read as absent because the kind's API server
	// drops it (a targetRef's sectionName of a kind with NoSectionNames),
	// each naming the field: reported, they do not make the policy
	// Invalid.
	Ignored []diag.Problem
}

// WorkloadSelection is what a policy without targets selects under
// UntargetedIstio: the workloads of its scope whose labels include
// MatchLabels (all of them when it is empty).
type WorkloadSelection struct {
	// MatchLabels are the labels a workload must carry.
	MatchLabels map[string]string
	// Field is where they are written ("spec.selector.matchLabels"), ""
	// for a policy of the whole namespace.
	Field string
}

// Text says what a policy without targets in namespace ns selects under
// scope, for people: "the Istio Gateways of namespace shop with pod labels
// app=x" ("of every namespace" from the root namespace).
func (w *WorkloadSelection) Text(ns string, scope UntargetedScope) string {
	return w.text(ns, ns == scope.Root())
}

// UntargetedMeshWide reports whether the policy, naming no targets,
// applies in every namespace: it is in the root namespace of its kind's
// untargeted scope, and, for a kind of composition istio-telemetry, has no
// selector (istiod takes a workload's selecting Telemetries from its own
// namespace only).
func (p *Policy) UntargetedMeshWide() bool {
	if p.Untargeted == nil || p.Ref.Namespace != p.Kind.Untargeted.Root() {
		return false
	}
	return p.Kind.Composition != CompositionIstioTelemetry || len(p.Untargeted.MatchLabels) == 0
}

// UntargetedText is Text for the policy's own selection, namespace and
// kind; "" when it names targets. A Telemetry without selector (a kind of
// composition istio-telemetry with waypoint targets) applies at waypoints
// too, as istiod reads it there: the text says so.
func (p *Policy) UntargetedText() string {
	if p.Untargeted == nil {
		return ""
	}
	meshWide := p.UntargetedMeshWide()
	if p.Kind.WaypointTargets && p.Kind.Composition == CompositionIstioTelemetry && len(p.Untargeted.MatchLabels) == 0 {
		if meshWide {
			return "the Istio Gateways and waypoints of every namespace (" + p.Ref.Namespace + " is the root namespace), and at waypoints every Service bound to one"
		}
		return "the Istio Gateways and waypoints of namespace " + p.Ref.Namespace + ", and at waypoints the Services of namespace " + p.Ref.Namespace + " and those its waypoints serve"
	}
	return p.Untargeted.text(p.Ref.Namespace, meshWide)
}

func (w *WorkloadSelection) text(ns string, meshWide bool) string {
	where := "of namespace " + ns
	if meshWide {
		where = "of every namespace (" + ns + " is the root namespace)"
	}
	out := "the Istio Gateways " + where
	if len(w.MatchLabels) > 0 {
		keys := make([]string, 0, len(w.MatchLabels))
		for k := range w.MatchLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			keys[i] = k + "=" + w.MatchLabels[k]
		}
		out += " with pod labels " + strings.Join(keys, ",")
	}
	return out
}

// workloadSelection reads the workload selector of the first of fields
// the spec holds: {matchLabels: {...}} (Istio's selector) or {labels:
// {...}} (EnvoyFilter's workloadSelector). It is nil only when a field is
// malformed (reported through bad).
func workloadSelection(spec map[string]any, fields []string, bad func(string, string, ...any)) *WorkloadSelection {
	for _, f := range fields {
		v, ok := spec[f]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad("spec."+f, "must be an object, not %s", typeName(v))
			return nil
		}
		for _, key := range []string{"matchLabels", "labels"} {
			raw, ok := m[key]
			if !ok || raw == nil {
				continue
			}
			field := "spec." + f + "." + key
			lm, ok := raw.(map[string]any)
			if !ok {
				bad(field, "must be an object, not %s", typeName(raw))
				return nil
			}
			sel := &WorkloadSelection{MatchLabels: make(map[string]string, len(lm)), Field: field}
			for k, lv := range lm {
				s, ok := lv.(string)
				if !ok {
					bad(field+"."+k, "must be a string, not %s", typeName(lv))
					return nil
				}
				sel.MatchLabels[k] = s
			}
			return sel
		}
		return &WorkloadSelection{Field: "spec." + f}
	}
	return &WorkloadSelection{}
}

// Invalid reports whether the policy failed validation.
func (p *Policy) Invalid() bool { return len(p.Problems) > 0 }

// TranslationInvalid reports whether the policy is Invalid for reasons
// its implementation finds itself when it translates the policy (a
// weight annotation that is not an integer), and for no reason the API
// server refuses it for: such a policy exists on a cluster, and its
// implementation attaches it with errors (kgateway then replaces what
// it reaches: Kind.RouteReplacement).
func (p *Policy) TranslationInvalid() bool {
	return len(p.Problems) > 0 && p.translationProblems == len(p.Problems)
}

// stanzaKeys maps each stanza key (plural and singular) to its canonical name.
var stanzaKeys = map[string]string{"defaults": "defaults", "default": "defaults", "overrides": "overrides", "override": "overrides"}

// stanzaOrder fixes the order stanza keys are looked for, so messages are deterministic.
var stanzaOrder = []string{"default", "defaults", "override", "overrides"}

// Parse reads a policy of kind k from u. It never fails: problems are
// collected in the result.
func Parse(u *unstructured.Unstructured, k *Kind) *Policy {
	gk := u.GroupVersionKind().GroupKind()
	p := &Policy{
		Ref:        topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()},
		Kind:       k,
		Generation: u.GetGeneration(),
	}
	bad := func(field, format string, args ...any) {
		p.Problems = append(p.Problems, diag.Newf(p.Ref, field, format, args...))
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	if ts, ok := meta["creationTimestamp"]; ok && ts != nil {
		if s, isStr := ts.(string); !isStr {
			bad("metadata.creationTimestamp", "must be an RFC 3339 time string, not %s", typeName(ts))
		} else {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				bad("metadata.creationTimestamp", "not an RFC 3339 time: %q", s)
			} else {
				p.Created = t.Time
			}
		}
	}
	if p.Ref.Name == "" {
		bad("metadata.name", "policy has no name")
	}
	p.readWeight(meta, bad)
	rawSpec, ok := u.Object["spec"]
	if !ok {
		bad("spec", "policy has no spec")
		return p
	}
	spec, ok := rawSpec.(map[string]any)
	if !ok {
		bad("spec", "must be an object, not %s", typeName(rawSpec))
		return p
	}
	p.parseTargets(spec, bad)
	p.parseIntent(spec, bad)
	p.readCARefs(spec, bad)
	p.readBackendRefs(spec)
	p.readObjectRefs(spec)
	p.dropShadowedMembers()
	p.badRegexes, p.regexesRead = p.checkRegexes(), true
	p.validations, p.validationsRead = p.checkValidations(), true
	return p
}

func (p *Policy) parseTargets(spec map[string]any, bad func(string, string, ...any)) {
	refs, hasRefs := spec["targetRefs"]
	ref, hasRef := spec["targetRef"]
	sels, hasSels := spec["targetSelectors"]
	var entries []any
	var field string
	switch {
	case hasRefs && hasRef:
		bad("spec", "has both targetRef and targetRefs; use targetRefs")
		return
	case hasRefs:
		list, ok := refs.([]any)
		if !ok {
			bad("spec.targetRefs", "must be a list, not %s", typeName(refs))
			return
		}
		entries, field = list, "spec.targetRefs"
	case hasRef:
		entries, field = []any{ref}, "spec.targetRef"
	}
	var selEntries []any
	if hasSels && sels != nil {
		list, ok := sels.([]any)
		if !ok {
			bad("spec.targetSelectors", "must be a list, not %s", typeName(sels))
			return
		}
		selEntries = list
	}
	if len(entries) == 0 && len(selEntries) == 0 {
		if p.Kind.Untargeted.Mode == UntargetedIstio {
			p.Untargeted = workloadSelection(spec, p.Kind.TargetingFields, bad)
			return
		}
		for _, f := range p.Kind.TargetingFields {
			if v, ok := spec[f]; ok && v != nil {
				// Selected in the kind's own way (Istio's workload
				// selector): valid, but nothing attache can resolve.
				p.UnmodelledTargeting = "spec." + f
				return
			}
		}
		if p.Kind.FilterAttachment {
			// Attached by the route filters that name it, if any.
			return
		}
		bad("spec.targetRefs", "policy has no targets")
		return
	}
	if limit := p.Kind.TargetRefLimit(); limit > 0 {
		if len(entries) > limit {
			bad("spec.targetRefs", "has %d entries; at most %d are allowed", len(entries), limit)
			return
		}
		if len(selEntries) > limit {
			bad("spec.targetSelectors", "has %d entries; at most %d are allowed", len(selEntries), limit)
			return
		}
	}
	type refKey struct{ group, kind, namespace, name, section, selector string }
	seen := map[refKey]bool{}
	for i, e := range entries {
		f := field
		if hasRefs {
			f = fmt.Sprintf("%s[%d]", field, i)
		}
		m, ok := e.(map[string]any)
		if !ok {
			bad(f, "must be an object, not %s", typeName(e))
			continue
		}
		t := TargetRef{Field: f, Namespace: p.Ref.Namespace}
		okAll := true
		str := func(key string, dst *string) {
			v, present := m[key]
			if !present || v == nil {
				return
			}
			s, isStr := v.(string)
			if !isStr {
				bad(f+"."+key, "must be a string, not %s", typeName(v))
				okAll = false
				return
			}
			*dst = s
		}
		str("group", &t.Group)
		str("kind", &t.Kind)
		str("name", &t.Name)
		// An empty namespace, like an absent one, is the policy's.
		var ns string
		str("namespace", &ns)
		if ns != "" {
			t.Namespace = ns
		}
		var ignored *diag.Problem
		if !p.Kind.NoSectionNames {
			str("sectionName", &t.SectionName)
		} else if v, present := m["sectionName"]; present && v != nil && v != "" {
			// Not in the kind's schema: the API server prunes it, and the
			// reference names the whole object.
			what := t.Kind
			if what == "" {
				what = "object"
			}
			pr := diag.Newf(p.Ref, f+".sectionName", "sectionName is not part of %s's targetRefs; the API server drops it, so the policy targets the whole %s", p.Ref.Kind, what)
			if p.Kind.SectionNamesIgnored {
				pr = diag.Newf(p.Ref, f+".sectionName", "%s's implementation does not read a targetRef's sectionName, so the policy targets the whole %s", p.Ref.Kind, what)
			}
			ignored = &pr
		}
		// Tolerate "group/version" as in GEP-713's own examples.
		if i := strings.IndexByte(t.Group, '/'); i >= 0 {
			t.Group = t.Group[:i]
		}
		t.Group = topology.NormalizeGroup(t.Group)
		if t.Kind == "" && okAll {
			bad(f+".kind", "is required")
			okAll = false
		}
		if _, given := m["group"]; !given && t.Kind != "" && okAll && !p.Kind.EmptyTargetGroupCore {
			// A kind written without its group is the one known kind of
			// that name (Gateway is Gateway.gateway.networking.k8s.io).
			gk, found, err := topology.ResolveKindName(t.Kind, topology.KnownKinds())
			if err != nil {
				bad(f+".kind", "%v", err)
				okAll = false
			} else if found {
				t.Group = gk.Group
			}
		}
		if sel, present := m["selector"]; present && sel != nil {
			if t.Name != "" {
				bad(f, "has both name and selector; use one")
				okAll = false
			} else if t.SectionName != "" {
				bad(f+".sectionName", "cannot be used with a selector")
				okAll = false
			} else {
				var ls metav1.LabelSelector
				sm, isMap := sel.(map[string]any)
				if !isMap {
					bad(f+".selector", "must be a label selector object, not %s", typeName(sel))
					okAll = false
				} else if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(sm, &ls, true); err != nil {
					// Unknown fields are errors: a misspelt matchLabels
					// would otherwise select every object of the kind.
					bad(f+".selector", "is not a label selector: %v", err)
					okAll = false
				} else if s, err := metav1.LabelSelectorAsSelector(&ls); err != nil {
					bad(f+".selector", "is not a valid label selector: %v", err)
					okAll = false
				} else {
					t.Selector = s
				}
			}
		} else if t.Name == "" && okAll {
			bad(f+".name", "is required (or give a selector)")
			okAll = false
		}
		if !okAll {
			continue
		}
		if ignored != nil {
			p.Ignored = append(p.Ignored, *ignored)
		}
		key := refKey{group: t.Group, kind: t.Kind, namespace: t.Namespace, name: t.Name, section: t.SectionName}
		if t.Selector != nil {
			key.selector = "selector:" + t.Selector.String()
		}
		if seen[key] {
			continue // a repeated reference adds nothing
		}
		seen[key] = true
		p.Targets = append(p.Targets, t)
	}
	for i, e := range selEntries {
		t, ok := p.parseTargetSelector(fmt.Sprintf("spec.targetSelectors[%d]", i), e, bad)
		if !ok {
			continue
		}
		key := refKey{group: t.Group, kind: t.Kind, selector: "targetSelector:" + t.Selector.String()}
		if t.Namespaces != nil {
			key.namespace = t.Namespaces.From + ":" + fmt.Sprint(t.Namespaces.Selector)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		p.Targets = append(p.Targets, t)
	}
}

// parseTargetSelector reads one entry of Envoy Gateway's targetSelectors:
// {group (default gateway.networking.k8s.io), kind, matchLabels,
// matchExpressions, namespaces: {from: Same|All|Selector, selector}}.
func (p *Policy) parseTargetSelector(f string, e any, bad func(string, string, ...any)) (TargetRef, bool) {
	m, ok := e.(map[string]any)
	if !ok {
		bad(f, "must be an object, not %s", typeName(e))
		return TargetRef{}, false
	}
	t := TargetRef{Field: f, Namespace: p.Ref.Namespace, Group: topology.GatewayGroup}
	for key, dst := range map[string]*string{"group": &t.Group, "kind": &t.Kind} {
		v, present := m[key]
		if !present || v == nil {
			continue
		}
		str, isStr := v.(string)
		if !isStr {
			bad(f+"."+key, "must be a string, not %s", typeName(v))
			return TargetRef{}, false
		}
		*dst = str
	}
	t.Group = topology.NormalizeGroup(t.Group)
	if t.Kind == "" {
		bad(f+".kind", "is required")
		return TargetRef{}, false
	}
	ls := map[string]any{}
	for _, key := range []string{"matchLabels", "matchExpressions"} {
		if v, present := m[key]; present && v != nil {
			ls[key] = v
		}
	}
	sel, err := labelSelector(ls)
	if err != nil {
		bad(f, "is not a valid label selector: %v", err)
		return TargetRef{}, false
	}
	t.Selector = sel
	if raw, present := m["namespaces"]; present && raw != nil {
		nm, isMap := raw.(map[string]any)
		if !isMap {
			bad(f+".namespaces", "must be an object, not %s", typeName(raw))
			return TargetRef{}, false
		}
		nf := &NamespaceFilter{From: NamespacesSame}
		if v, present := nm["from"]; present && v != nil {
			from, isStr := v.(string)
			if !isStr || (from != NamespacesSame && from != NamespacesAll && from != NamespacesSelector) {
				bad(f+".namespaces.from", "must be Same, All or Selector, not %v", v)
				return TargetRef{}, false
			}
			nf.From = from
		}
		if nf.From == NamespacesSelector {
			raw, present := nm["selector"]
			sm, isMap := raw.(map[string]any)
			if !present || !isMap {
				bad(f+".namespaces.selector", "is required (a label selector) when from is Selector")
				return TargetRef{}, false
			}
			nsel, err := labelSelector(sm)
			if err != nil {
				bad(f+".namespaces.selector", "is not a valid label selector: %v", err)
				return TargetRef{}, false
			}
			nf.Selector = nsel
		}
		if nf.From != NamespacesSame {
			t.Namespaces = nf
		}
	}
	return t, true
}

// labelSelector converts a label selector object, refusing unknown fields:
// a misspelt matchLabels would otherwise select every object of the kind.
func labelSelector(m map[string]any) (labels.Selector, error) {
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(m, &ls, true); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

func (p *Policy) parseIntent(spec map[string]any, bad func(string, string, ...any)) {
	k := p.Kind
	if k.NoStanzas {
		// No stanza, no strategy word: every other field is the kind's own.
		p.Spec = make(map[string]any, len(spec))
		for key, v := range spec {
			if !isTargeting(k, key) {
				p.Spec[key] = v
			}
		}
		p.readMergeType(spec, bad)
		if s, err := resolveStrategy(k, "", ""); err != nil {
			bad("spec", "%v", err)
		} else {
			p.Strategy = s
		}
		return
	}
	var stanzaKey string
	for _, key := range stanzaOrder {
		if _, ok := spec[key]; !ok {
			continue
		}
		if stanzaKey != "" {
			bad("spec", "has both %q and %q; a policy takes exactly one merge strategy (one stanza)", stanzaKey, key)
			return
		}
		stanzaKey, p.Stanza = key, stanzaKeys[key]
	}
	body := spec
	bodyField := "spec"
	// strategyWord is the strategy named in spec.strategy or in the
	// stanza's strategy field; strategyField is where it was named.
	var strategyWord, strategyField string
	if v, ok := spec["strategy"]; ok {
		s, isStr := v.(string)
		if !isStr {
			bad("spec.strategy", "must be a string, not %s", typeName(v))
			return
		}
		if s != "" {
			strategyWord, strategyField = s, "spec.strategy"
		}
	}
	if stanzaKey != "" {
		raw := spec[stanzaKey]
		m, ok := raw.(map[string]any)
		if !ok {
			bad("spec."+stanzaKey, "must be an object, not %s", typeName(raw))
			return
		}
		var extra []string
		for key := range spec {
			if key != stanzaKey && !isTargeting(k, key) && key != "strategy" {
				extra = append(extra, key)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			bad("spec."+extra[0], "is outside spec.%s; with a stanza, the whole spec proper goes inside it", stanzaKey)
			return
		}
		if v, ok := m["strategy"]; ok {
			s, isStr := v.(string)
			if !isStr {
				bad("spec."+stanzaKey+".strategy", "must be a string, not %s", typeName(v))
				return
			}
			if strategyWord != "" && s != "" && canonicalWord(strategyWord) != canonicalWord(s) {
				bad("spec."+stanzaKey+".strategy", "is %q but spec.strategy is %q; a policy takes exactly one merge strategy", s, strategyWord)
				return
			}
			if strategyWord == "" && s != "" {
				strategyWord, strategyField = s, "spec."+stanzaKey+".strategy"
			}
		}
		body, bodyField = m, "spec."+stanzaKey
	}
	p.Spec = make(map[string]any, len(body))
	for key, v := range body {
		if bodyField == "spec" && isTargeting(k, key) {
			continue
		}
		if key == "strategy" {
			continue
		}
		p.Spec[key] = v
	}
	if !p.readMergeType(spec, bad) {
		return
	}
	s, err := resolveStrategy(k, p.Stanza, strategyWord)
	if err != nil {
		field := "spec"
		if strategyField != "" {
			field = strategyField
		} else if stanzaKey != "" {
			field = "spec." + stanzaKey
		}
		bad(field, "%v", err)
		return
	}
	p.Strategy = s
}

// readWeight reads the kind's weight annotation: an integer in the range
// of int32, as kgateway parses its kgateway.dev/policy-weight.
func (p *Policy) readWeight(meta map[string]any, bad func(string, string, ...any)) {
	name := p.Kind.WeightAnnotation
	if name == "" {
		return
	}
	anns, _ := meta["annotations"].(map[string]any)
	v, ok := anns[name]
	if !ok {
		return
	}
	field := fmt.Sprintf("metadata.annotations[%s]", name)
	s, isStr := v.(string)
	if !isStr {
		// The API server keeps annotations as strings: not a
		// translation problem.
		bad(field, "must be a string holding an integer, not %s", typeName(v))
		return
	}
	w, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		bad(field, "must be an integer between %d and %d (the policy's weight), not %q", math.MinInt32, math.MaxInt32, s)
		p.translationProblems++
		return
	}
	p.Weight = int32(w)
}

// readMergeType reads the kind's merge-type field, reporting false (and a
// problem) when its value is not a merge type.
func (p *Policy) readMergeType(spec map[string]any, bad func(string, string, ...any)) bool {
	k := p.Kind
	if k.MergeTypeField == "" {
		return true
	}
	v, ok := spec[k.MergeTypeField]
	if !ok || v == nil {
		return true
	}
	mt, isStr := v.(string)
	if !isStr || (mt != MergeTypeJSON && mt != MergeTypeStrategic) {
		bad("spec."+k.MergeTypeField, "must be %s or %s, not %v", MergeTypeJSON, MergeTypeStrategic, v)
		return false
	}
	p.MergeType = mt
	return true
}

// isTargeting reports whether a top-level spec field says where the policy
// applies or how it merges rather than what it sets: targetRef(s),
// targetSelectors, and the kind's own targeting and merge-type fields.
func isTargeting(k *Kind, key string) bool {
	return key == "targetRefs" || key == "targetRef" || key == "targetSelectors" || k.IsTargetingField(key)
}

// resolveStrategy picks the strategy named by the stanza and strategy word,
// among those the kind supports, in GEP-713's order of preference. A stanza
// selects among the strategies of its own semantics (defaults or overrides);
// custom is selected only by the word "custom" or, for a bare spec without a
// word, when it is the first the kind supports.
func resolveStrategy(k *Kind, stanza, word string) (merge.Strategy, error) {
	supported := strings.Join(strategyNames(k.Strategies), ", ")
	if k.Supports(merge.None) {
		if stanza != "" || word != "" {
			return "", fmt.Errorf("kind %s supports only the none merge strategy; remove the %s", k, orWord(stanza, word))
		}
		return merge.None, nil
	}
	candidates := family(word)
	if candidates == nil {
		return "", fmt.Errorf("unknown strategy %q (use atomic, patch or merge)", word)
	}
	for _, s := range k.Strategies {
		if !containsStrategy(candidates, s) {
			continue
		}
		// A stanza asks for its own semantics: defaults or overrides. Custom
		// has no stanza and is only chosen by name (or for a bare spec).
		if stanza != "" && word != "custom" && s.Stanza() != stanza {
			continue
		}
		return s, nil
	}
	what := "stanza " + orWord(stanza, "")
	if stanza == "" {
		what = "bare spec proper"
	}
	if word != "" {
		what += fmt.Sprintf(" with strategy %q", word)
	}
	return "", fmt.Errorf("no merge strategy of kind %s fits the %s (supported: %s)", k, what, supported)
}

// family returns the strategies a strategy word selects among (in GEP-713's
// order), or nil for an unknown word. "merge" is a synonym of "patch".
func family(word string) []merge.Strategy {
	switch word {
	case "":
		return merge.Order
	case "atomic":
		return []merge.Strategy{merge.AtomicDefaults, merge.AtomicOverrides}
	case "patch", "merge":
		return []merge.Strategy{merge.PatchDefaults, merge.PatchOverrides}
	case "custom":
		return []merge.Strategy{merge.Custom}
	}
	return nil
}

// canonicalWord folds the synonym "merge" into "patch".
func canonicalWord(word string) string {
	if word == "merge" {
		return "patch"
	}
	return word
}

func containsStrategy(list []merge.Strategy, s merge.Strategy) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func strategyNames(list []merge.Strategy) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

func orWord(stanza, word string) string {
	switch {
	case stanza != "" && word != "":
		return fmt.Sprintf("%q stanza and strategy %q", stanza, word)
	case stanza != "":
		return fmt.Sprintf("%q", stanza)
	}
	return fmt.Sprintf("strategy %q", word)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, int:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
