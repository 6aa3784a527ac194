package policy

import (
	"fmt"
	"sort"
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
	// Field is the path of this entry in the policy, for messages.
	Field string
}

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
	// Targets are the declared targets, in order.
	Targets []TargetRef
	// Stanza is "defaults", "overrides", or "" for a bare spec proper.
	Stanza string
	// Strategy is the resolved merge strategy.
	Strategy merge.Strategy
	// Spec is the spec proper: no targetRefs, stanza wrapper or strategy field.
	Spec map[string]any
	// Problems make the policy Invalid; each names the field.
	Problems []diag.Problem
}

// Invalid reports whether the policy failed validation.
func (p *Policy) Invalid() bool { return len(p.Problems) > 0 }

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
	return p
}

func (p *Policy) parseTargets(spec map[string]any, bad func(string, string, ...any)) {
	refs, hasRefs := spec["targetRefs"]
	ref, hasRef := spec["targetRef"]
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
	if len(entries) == 0 {
		bad("spec.targetRefs", "policy has no targets")
		return
	}
	if len(entries) > MaxTargetRefs {
		bad("spec.targetRefs", "has %d entries; at most %d are allowed", len(entries), MaxTargetRefs)
		return
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
		str("sectionName", &t.SectionName)
		// Tolerate "group/version" as in GEP-713's own examples.
		if i := strings.IndexByte(t.Group, '/'); i >= 0 {
			t.Group = t.Group[:i]
		}
		if t.Kind == "" && okAll {
			bad(f+".kind", "is required")
			okAll = false
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
}

func (p *Policy) parseIntent(spec map[string]any, bad func(string, string, ...any)) {
	k := p.Kind
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
			if key != stanzaKey && key != "targetRefs" && key != "targetRef" && key != "strategy" {
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
		if bodyField == "spec" && (key == "targetRefs" || key == "targetRef") {
			continue
		}
		if key == "strategy" {
			continue
		}
		p.Spec[key] = v
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
