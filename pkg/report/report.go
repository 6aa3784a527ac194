// Package report renders an engine Result as the public, versioned document
// printed by `attache effective` (documented in docs/output.md). Its JSON
// shape is a public interface: fields may be added, never renamed or removed.
package report

import (
	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// APIVersion and Kind identify the document.
const (
	APIVersion = "attache.dev/v1alpha1"
	Kind       = "EffectivePolicyReport"
)

// Ref is a target or policy reference; empty fields are omitted.
type Ref = topology.Ref

// Report is the whole document.
type Report struct {
	APIVersion        string            `json:"apiVersion"`
	Kind              string            `json:"kind"`
	EffectivePolicies []EffectivePolicy `json:"effectivePolicies"`
	Policies          []Policy          `json:"policies"`
	Affected          []Affected        `json:"affected"`
	Errors            []diag.Problem    `json:"errors"`
}

// EffectivePolicy is the effective policy of one kind for one target in one
// context (path).
type EffectivePolicy struct {
	PolicyKind string         `json:"policyKind"`
	Target     Ref            `json:"target"`
	Path       []Ref          `json:"path"`
	Spec       map[string]any `json:"spec"`
	Sources    Sources        `json:"sources"`
	// Errors are failures of custom merge functions in this context.
	Errors []string `json:"errors,omitempty"`
}

// Sources is the provenance of an effective policy.
type Sources struct {
	// Fields says, for every leaf field of spec, which policy set it, where
	// that policy attaches (its level) and with which strategy.
	Fields []FieldSource `json:"fields"`
	// Policies lists every policy on the path, most general first, with its
	// outcome here and the fields it lost, and to whom.
	Policies []PolicySource `json:"policies"`
}

// FieldSource is the provenance of one leaf field.
type FieldSource struct {
	Path     string `json:"path"`
	Value    any    `json:"value"`
	Policy   Ref    `json:"policy"`
	Target   Ref    `json:"target"`
	Strategy string `json:"strategy"`
}

// PolicySource is one policy of a context's stack.
type PolicySource struct {
	Policy     Ref    `json:"policy"`
	Target     Ref    `json:"target"`
	Strategy   string `json:"strategy"`
	Stanza     string `json:"stanza,omitempty"`
	Outcome    string `json:"outcome"`
	Conflicted bool   `json:"conflicted,omitempty"`
	// Unsupported are the fields its merge with the policies above would
	// set that its kind does not support at its target: it takes no part
	// here (outcome none).
	Unsupported []string `json:"unsupported,omitempty"`
	// MergeHolds names the field of another policy that its merge with
	// the policies above holds here and that fails that policy's
	// translation: the merged policy fails.
	MergeHolds string `json:"mergeHolds,omitempty"`
	// MergeFailedOpen, with MergeHolds, are the parts of the merged policy
	// its implementation leaves out because what the merge holds fails
	// open by the merged policy's flags (the route does not fail).
	MergeFailedOpen []string `json:"mergeFailedOpen,omitempty"`
	// NotAppliedVia are the Gateways through which its implementation does
	// not apply it here (the parameters of their data planes refuse it):
	// the context's spec holds through its other Gateways only, where the
	// policy sets fields.
	NotAppliedVia []Ref       `json:"notAppliedVia,omitempty"`
	Lost          []LostField `json:"lost,omitempty"`
}

// LostField is a field a policy set that did not make it, and who beat it.
type LostField struct {
	Path string       `json:"path"`
	To   []Attachment `json:"to"`
}

// Attachment is a policy and the target it attaches to.
type Attachment struct {
	Policy Ref `json:"policy"`
	Target Ref `json:"target"`
}

// Condition is a status condition (no timestamps).
type Condition = engine.Condition

// Policy is a policy's status.
type Policy struct {
	Ref              Ref          `json:"ref"`
	PolicyKind       string       `json:"policyKind"`
	Strategy         string       `json:"strategy,omitempty"`
	Stanza           string       `json:"stanza,omitempty"`
	Conditions       []Condition  `json:"conditions"`
	Ancestors        []Ancestor   `json:"ancestors"`
	AncestorsOmitted int          `json:"ancestorsOmitted,omitempty"`
	Affects          []Ref        `json:"affects"`
	Reach            engine.Reach `json:"reach"`
}

// Ancestor is a PolicyAncestorStatus entry.
type Ancestor struct {
	AncestorRef    Ref         `json:"ancestorRef"`
	ControllerName string      `json:"controllerName"`
	Conditions     []Condition `json:"conditions"`
}

// Affected lists the policies of a kind affecting a target, and the
// condition a controller writes on it.
type Affected struct {
	PolicyKind string    `json:"policyKind"`
	Target     Ref       `json:"target"`
	Policies   []Ref     `json:"policies"`
	Condition  Condition `json:"condition"`
}

// Build renders r. controllerName keys ancestor entries.
func Build(r *engine.Result, controllerName string, extra []diag.Problem) *Report {
	out := &Report{APIVersion: APIVersion, Kind: Kind,
		EffectivePolicies: []EffectivePolicy{}, Policies: []Policy{}, Affected: []Affected{}, Errors: []diag.Problem{}}
	if controllerName == "" {
		controllerName = engine.DefaultControllerName
	}
	for _, e := range r.Effective {
		for _, c := range e.Contexts {
			src := sources(c)
			c.Paths(func(p []topology.Ref) bool {
				out.EffectivePolicies = append(out.EffectivePolicies, EffectivePolicy{
					PolicyKind: e.Kind.String(), Target: e.Target, Path: append([]Ref(nil), p...),
					Spec: c.Spec, Sources: src, Errors: c.Errors,
				})
				return true
			})
		}
	}
	sortEffective(out.EffectivePolicies)
	for _, p := range r.Policies {
		rp := Policy{Ref: p.Policy.Ref, PolicyKind: p.Policy.Kind.String(), Strategy: string(p.Policy.Strategy), Stanza: p.Policy.Stanza,
			Conditions: p.Conditions, Ancestors: []Ancestor{}, AncestorsOmitted: p.AncestorsOmitted, Affects: p.Affects, Reach: p.Reach}
		if rp.Affects == nil {
			rp.Affects = []Ref{}
		}
		for _, a := range p.Ancestors {
			rp.Ancestors = append(rp.Ancestors, Ancestor{AncestorRef: a.Ref, ControllerName: controllerName, Conditions: a.Conditions})
		}
		out.Policies = append(out.Policies, rp)
	}
	for _, a := range r.Affected {
		out.Affected = append(out.Affected, Affected{PolicyKind: a.Kind.String(), Target: a.Target, Policies: a.Policies, Condition: a.Condition})
	}
	out.Errors = append(out.Errors, extra...)
	out.Errors = append(out.Errors, r.Problems...)
	return out
}

// SourcesOf renders who set each field of a context's effective spec and
// what each policy of its stack lost, as the report's sources.
func SourcesOf(c *engine.Context) Sources { return sources(c) }

func sources(c *engine.Context) Sources {
	s := Sources{Fields: make([]FieldSource, 0, len(c.Fields)), Policies: make([]PolicySource, 0, len(c.Stack))}
	for _, f := range c.Fields {
		s.Fields = append(s.Fields, FieldSource{Path: f.Path, Value: f.Value, Policy: f.Policy, Target: f.At, Strategy: string(f.Strategy)})
	}
	for _, e := range c.Stack {
		ps := PolicySource{Policy: e.Policy, Target: e.At, Strategy: string(e.Strategy), Stanza: e.Stanza, Outcome: e.Outcome, Conflicted: e.Conflicted, Unsupported: e.Unsupported, MergeHolds: e.MergeHolds, MergeFailedOpen: e.MergeFailedOpen, NotAppliedVia: e.NotAppliedVia}
		for _, l := range e.Lost {
			lf := LostField{Path: l.Path}
			for _, t := range l.To {
				lf.To = append(lf.To, Attachment{Policy: t.Policy, Target: t.At})
			}
			ps.Lost = append(ps.Lost, lf)
		}
		s.Policies = append(s.Policies, ps)
	}
	return s
}
