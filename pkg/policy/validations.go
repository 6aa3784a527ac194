package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/merge"
)

// Validation is a rule on the content of a kind's policies, written as a
// rule of a CRD's x-kubernetes-validations: a CEL expression over self,
// the policy's spec, that must be true. It stands for a check the
// implementation makes in code when it translates a policy, where its
// CRD's schema does not (Envoy Gateway's minimum bandwidth, its cipher
// suites): a policy for which the rule does not hold is Invalid in place,
// as one with a value out of range (ValueRange).
//
// Rules are compiled in the Kubernetes API server's CEL environment (the
// libraries of k8s.io/apiserver/pkg/cel/library: lists, regex, quantity,
// URLs, IPs, CIDRs, semver, format; the strings, sets and optional
// extensions) and attache's isNginxSize and nginxSize (nginxSizeLib),
// with self declared dyn; each evaluation is bounded by the
// API server's per-call cost limit, and a policy's rules together by
// ValidationCostBudget. Parsing, the CEL parser's own limits hold
// (expression size, nesting).
type Validation struct {
	// Rule is the CEL expression; it must be of type bool. self is the
	// policy's spec proper (as the paths of the kind's other settings
	// read it: without targetRefs and targetSelectors, inside the stanza
	// for a kind with defaults/overrides), nulls dropped, as the API
	// server drops them before its rules run.
	Rule string `json:"rule"`
	// Message is what a policy for which the rule does not hold is told,
	// after the field; "failed rule: <rule>" when empty, as the API server
	// says.
	Message string `json:"message,omitempty"`
	// FieldPath is the field the message names, below spec, as a CRD
	// rule's fieldPath (".rateLimit.local", ".tls.ciphers[0]",
	// ".a['b.c']"); "" names spec itself.
	FieldPath string `json:"fieldPath,omitempty"`
	// On, if set, are listener protocols (key listenerProtocols): the
	// rule is judged only at a target with a listener of one of them (as
	// ValueRange.On), the policy then Invalid at those targets only (an
	// attache extension of the x-kubernetes-validations shape; not "on",
	// which YAML reads as true).
	On []string `json:"listenerProtocols,omitempty"`
	// UnlessFeature, if set, names a feature of the implementation's
	// configuration (as FeatureGate.Feature) while which is on the rule is
	// not judged: a check the implementation makes only without it, as
	// NGINX Gateway Fabric allows some load-balancing methods only with
	// NGINX Plus. The feature is off unless the configuration or the
	// caller turns it on (Features); an attache extension of the shape.
	UnlessFeature string `json:"unlessFeature,omitempty"`
	// program is Rule, compiled.
	program cel.Program
	// readsListener is set when Rule reads the variable listener (see
	// ListenerFacts): it is then judged at each listener of the On
	// protocols of a target, with that listener's facts.
	readsListener bool
}

// ListenerFacts is what a rule reading the variable listener sees of one
// listener (an attache extension of the x-kubernetes-validations shape,
// for implementations that judge a policy by the listener it lands on,
// such as Envoy Gateway's HTTP/1.0 default host):
//
//	listener.name, listener.protocol, listener.port, listener.hostname ("" for none)
//	listener.routes: the routes attached to it, each
//	  {kind, namespace, name,
//	   hostnames: the hostnames it serves there (its own the listener's
//	     hostname admits, narrowed to it; the listener's, or "*", when
//	     it has none),
//	   matches: the number of its rules' matches, a rule without matches
//	     counting one}
//
// A rule reading listener must set listenerProtocols.
type ListenerFacts map[string]any

// ReadsListener reports whether the rule reads the variable listener.
func (v Validation) ReadsListener() bool { return v.readsListener }

// ValidationCostBudget bounds the cost of evaluating all the rules of
// one policy together (in CEL's cost units; about 0.1 to 0.4 seconds),
// on top of the API server's bound on each evaluation
// (celconfig.PerCallLimit, the same number). The API server allows one
// custom object ten times as much (celconfig.RuntimeCELCostBudget);
// attache evaluates every policy of a kind when it reads them, and the
// rules it is given (Envoy Gateway's) cost a few hundred units. Rules left
// when the budget is spent are not evaluated, and the policy is Invalid,
// as the API server refuses an object whose rules spend its budget.
const ValidationCostBudget = celconfig.PerCallLimit

// Field is where a violation of the rule is reported: "spec" followed by
// FieldPath.
func (v Validation) Field() string { return "spec" + v.FieldPath }

// String renders the rule as the annotation reads it: one JSON object.
func (v Validation) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ValidationsString renders a kind's rules as the annotation value: a
// JSON list ("none" for none).
func ValidationsString(vs []Validation) string {
	if len(vs) == 0 {
		return "none"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ParseValidations reads the annotation attache.dev/validations: a YAML
// or JSON list of rules, each {rule, message, fieldPath,
// listenerProtocols, unlessFeature} (rule required, other keys refused),
// or "none". Each rule is compiled; an
// error names the rule by its index ("validations[1]").
func ParseValidations(v string) ([]Validation, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	var out []Validation
	if err := yaml.UnmarshalStrict([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("is not a list of rules {rule, message, fieldPath, listenerProtocols, unlessFeature}: %v", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf(`lists no rule (e.g. [{rule: "has(self.x)", message: "must set x"}]), or "none"`)
	}
	for i := range out {
		if err := out[i].compile(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fieldPathSyntax is a CRD rule's fieldPath as attache reads it: fields
// (".name", "['any name']") and list indexes ("[0]").
var fieldPathSyntax = regexp.MustCompile(`^(\.[A-Za-z_$][A-Za-z0-9_$-]*|\['[^'\\]*'\]|\[[0-9]+\])*$`)

// compile checks the rule's fields and compiles it, unless it is already
// compiled; i is its index, for errors.
func (v *Validation) compile(i int) error {
	name := fmt.Sprintf("validations[%d]", i)
	switch {
	case strings.TrimSpace(v.Rule) == "":
		return fmt.Errorf("%s: rule is empty", name)
	case strings.ContainsAny(v.Message, "\r\n"):
		return fmt.Errorf("%s: message holds a line break", name)
	case !fieldPathSyntax.MatchString(v.FieldPath):
		return fmt.Errorf("%s: fieldPath %q is not a path below spec such as .a.b, .a[0] or .a['b.c']", name, v.FieldPath)
	}
	for _, proto := range v.On {
		if proto == "" || strings.ContainsAny(proto, " ,=;*+.") {
			return fmt.Errorf("%s: listenerProtocols: %q is not a listener protocol (HTTP, HTTPS)", name, proto)
		}
	}
	if err := checkProtocols(v.On); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if v.UnlessFeature != "" && !validFeatureName(v.UnlessFeature) {
		return fmt.Errorf("%s: unlessFeature %q is not a feature name (letters, digits, '.', '-', '_')", name, v.UnlessFeature)
	}
	if v.program != nil {
		return nil
	}
	cr, err := compileRule(v.Rule)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if cr.readsListener && len(v.On) == 0 {
		return fmt.Errorf("%s: rule %q reads listener, so it must set listenerProtocols (the listeners it is judged at)", name, v.Rule)
	}
	v.program, v.readsListener = cr.program, cr.readsListener
	return nil
}

// compiledRule is a rule compiled, and whether it reads listener.
type compiledRule struct {
	program       cel.Program
	readsListener bool
}

// compiledRules are the rules compiled so far, by their text, so that a
// rule compiles once per process, whether it comes from a profile (the
// kinds built from it) or an annotation read again; at most
// maxCompiledRules are kept.
var compiledRules struct {
	sync.Mutex
	programs map[string]compiledRule
}

// maxCompiledRules bounds compiledRules (annotations edited over and over
// in a long-running controller).
const maxCompiledRules = 1024

// compileRule compiles rule, or finds it compiled.
func compileRule(rule string) (compiledRule, error) {
	compiledRules.Lock()
	cr, ok := compiledRules.programs[rule]
	compiledRules.Unlock()
	if ok {
		return cr, nil
	}
	env, err := validationEnv()
	if err != nil {
		return cr, fmt.Errorf("no CEL environment: %v", err)
	}
	ast, iss := env.Compile(rule)
	if iss.Err() != nil {
		return cr, fmt.Errorf("rule %q does not compile: %v", rule, strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) {
		return cr, fmt.Errorf("rule %q is of type %s, want bool", rule, t)
	}
	if cr.program, err = env.Program(ast); err != nil {
		return cr, fmt.Errorf("rule %q: %v", rule, err)
	}
	if strings.Contains(rule, listenerVar) {
		// It reads the variable unless it compiles without it (a
		// comprehension's own variable may be named so).
		bare, err := selfOnlyEnv()
		if err != nil {
			return cr, fmt.Errorf("no CEL environment: %v", err)
		}
		_, iss := bare.Compile(rule)
		cr.readsListener = iss.Err() != nil
	}
	compiledRules.Lock()
	if compiledRules.programs == nil {
		compiledRules.programs = map[string]compiledRule{}
	}
	if len(compiledRules.programs) < maxCompiledRules {
		compiledRules.programs[rule] = cr
	}
	compiledRules.Unlock()
	return cr, nil
}

// listenerVar is the variable a rule reads a listener's facts from.
const listenerVar = "listener"

// selfOnlyEnv is validationEnv without listener, to tell the rules that
// read it. Built once.
var selfOnlyEnv = sync.OnceValues(func() (*cel.Env, error) { return celEnv("self") })

// validationEnv is the CEL environment rules compile in: the API server's
// (every library this build knows, as for the rules it has stored) and
// nginxSizeLib, with
// self and listener (ListenerFacts) dyn. Built once.
var validationEnv = sync.OnceValues(func() (*cel.Env, error) { return celEnv("self", listenerVar) })

// celEnv is the API server's environment for stored rules with the
// variables vars, of type dyn, and attache's functions on NGINX sizes
// (nginxSizeLib).
func celEnv(vars ...string) (*cel.Env, error) {
	opts := make([]cel.EnvOption, len(vars), len(vars)+len(nginxSizeLib))
	for i, v := range vars {
		opts[i] = cel.Variable(v, cel.DynType)
	}
	opts = append(opts, nginxSizeLib...)
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions:        opts,
	})
	if err != nil {
		return nil, err
	}
	return set.StoredExpressionsEnv(), nil
}

// ValidationsOnListeners reports whether some of the kind's rules are
// judged at targets with listeners of given protocols only.
func (k *Kind) ValidationsOnListeners() bool {
	for _, v := range k.Validations {
		if len(v.On) > 0 {
			return true
		}
	}
	return false
}

// Violations are the kind's rules (Validations) judged at every target
// (those without On) that do not hold for the policy: one problem per
// rule, at its field, in the order of the rules. A rule that evaluates to
// false says its message; one whose evaluation fails (no such key, a
// value of another type, its cost limit) is a problem too, naming the
// rule and the error, as the API server refuses an object when one of its
// rules cannot be evaluated. A parsed policy answers what Parse found.
func (p *Policy) Violations() []FieldProblem {
	return p.ViolationsWhere(func(v Validation) bool { return len(v.On) == 0 })
}

// ViolationsWhere is Violations for the rules judge accepts.
func (p *Policy) ViolationsWhere(judge func(Validation) bool) []FieldProblem {
	return p.violations(judge, nil)
}

// Judged reports whether the rule is judged while f is in force: unless
// its UnlessFeature is on.
func (v Validation) Judged(f Features) bool { return v.UnlessFeature == "" || !f.On(v.UnlessFeature) }

// ViolationsUnder is ViolationsWhere for the rules judge accepts that are
// judged while f is in force (Judged); the message of a rule with
// UnlessFeature says that feature is off, and why.
func (p *Policy) ViolationsUnder(f Features, judge func(Validation) bool) []FieldProblem {
	return p.violations(func(v Validation) bool { return v.Judged(f) && judge(v) }, f)
}

// violations are the problems of the rules judge accepts, those with
// UnlessFeature saying its state in f.
func (p *Policy) violations(judge func(Validation) bool, f Features) []FieldProblem {
	probs := p.validations
	if !p.validationsRead {
		probs = p.checkValidations()
	}
	var out []FieldProblem
	for i, v := range p.Kind.Validations {
		if judge(v) {
			for _, pr := range probs {
				if pr.index == i {
					if v.UnlessFeature != "" {
						pr.Message = fmt.Sprintf("%s (judged while %s is %s)", pr.Message, v.UnlessFeature, f.state(v.UnlessFeature))
					}
					out = append(out, pr.FieldProblem)
				}
			}
		}
	}
	return out
}

// ruleProblem is a problem of the rule at index.
type ruleProblem struct {
	index int
	FieldProblem
}

// errBudget: the policy's rules spent ValidationCostBudget.
var errBudget = errors.New("the rules of this policy ran out of cost budget; this and later rules were not evaluated")

// checkValidations evaluates the kind's rules on the policy's spec.
func (p *Policy) checkValidations() []ruleProblem {
	if p.Kind == nil || len(p.Kind.Validations) == 0 {
		return nil
	}
	self, _ := merge.PruneNulls(p.Spec).(map[string]any)
	if self == nil {
		self = map[string]any{}
	}
	var out []ruleProblem
	budget := int64(ValidationCostBudget)
	for i, v := range p.Kind.Validations {
		if v.program == nil {
			_ = v.compile(i) // a rule that does not compile fails in eval
		}
		if v.readsListener {
			continue // judged per listener (ListenerViolations)
		}
		out = append(out, v.judge(i, map[string]any{"self": self}, &budget)...)
	}
	return out
}

// judge evaluates rule v, at index i, with vars: its problem if it does
// not hold or cannot be evaluated, nil if it holds.
func (v Validation) judge(i int, vars map[string]any, budget *int64) []ruleProblem {
	err := errBudget
	var val any
	if *budget > 0 {
		val, err = v.eval(vars, budget)
	}
	switch {
	case err != nil:
		return []ruleProblem{{i, FieldProblem{Field: v.Field(), Message: fmt.Sprintf("rule validations[%d] %q could not be evaluated: %v", i, v.Rule, err)}}}
	case val == true:
		return nil
	}
	msg := v.Message
	if msg == "" {
		msg = "failed rule: " + v.Rule
	}
	return []ruleProblem{{i, FieldProblem{Field: v.Field(), Message: msg}}}
}

// ListenerViolations are the kind's rules reading listener (see
// ListenerFacts) that judge accepts and that do not hold for the policy
// at listener l, as Violations says them; the rules together are bounded
// by ValidationCostBudget.
func (p *Policy) ListenerViolations(l ListenerFacts, judge func(Validation) bool) []FieldProblem {
	if p.Kind == nil {
		return nil
	}
	var self map[string]any
	var out []FieldProblem
	budget := int64(ValidationCostBudget)
	for i, v := range p.Kind.Validations {
		if v.program == nil {
			_ = v.compile(i)
		}
		if !v.readsListener || !judge(v) {
			continue
		}
		if self == nil {
			if self, _ = merge.PruneNulls(p.Spec).(map[string]any); self == nil {
				self = map[string]any{}
			}
		}
		for _, pr := range v.judge(i, map[string]any{"self": self, listenerVar: map[string]any(l)}, &budget) {
			out = append(out, pr.FieldProblem)
		}
	}
	return out
}

// ValidationsReadListener reports whether some of the kind's rules read
// listener (ListenerFacts).
func (k *Kind) ValidationsReadListener() bool {
	for _, v := range k.Validations {
		if v.readsListener {
			return true
		}
	}
	return false
}

// eval evaluates the rule with vars (self, and listener for a rule
// reading it), taking its cost from budget: true, false, or an error (a
// result that is not a bool is one).
func (v Validation) eval(vars map[string]any, budget *int64) (any, error) {
	prog := v.program
	if prog == nil {
		// A Validation built in Go and not through a kind: compile now.
		if err := v.compile(0); err != nil {
			return nil, err
		}
		prog = v.program
	}
	out, det, err := prog.ContextEval(context.Background(), vars)
	if det != nil && det.ActualCost() != nil {
		*budget -= int64(min(*det.ActualCost(), uint64(ValidationCostBudget)))
	}
	if err != nil {
		return nil, err
	}
	if *budget < 0 {
		return nil, errBudget
	}
	b, ok := out.(types.Bool)
	if !ok {
		return nil, fmt.Errorf("got %s, want a bool", out.Type())
	}
	return bool(b), nil
}
