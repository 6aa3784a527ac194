package engine

import (
	"context"
	"time"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Object is an input object and where it came from (a file and document, a
// cluster resource), for messages.
type Object struct {
	// Object is the object itself.
	Object *unstructured.Unstructured
	// Source says where it came from ("file.yaml#2", a resource URL); it
	// prefixes the problems found in it.
	Source string
}

// Options configure a computation.
type Options struct {
	// ControllerName keys the PolicyAncestorStatus entries. Default
	// DefaultControllerName.
	ControllerName string
	// ConditionDomain prefixes <Kind>Affected condition types. Default
	// DefaultConditionDomain.
	ConditionDomain string
	// Kinds are policy kinds registered from Go; they replace a CRD-discovered
	// kind of the same group and kind.
	Kinds []*policy.Kind
	// Custom gives Custom merge functions to CRD-discovered kinds. Like
	// every Custom function, they may be called concurrently (the engine
	// folds distinct stacks in parallel) and must not modify their inputs.
	Custom map[topology.GroupKind]merge.CustomFunc
	// DisableProfiles turns off the built-in kind profiles (package
	// profiles): only CRDs labelled gateway.networking.k8s.io/policy are
	// policy kinds, with the defaults and their annotations; and route
	// delegation is followed under every Gateway, not only those of the
	// implementations that read its form (profiles.DelegationKinds).
	DisableProfiles bool
	// Unread, when set, says which objects the caller could not read (RBAC
	// forbade it): a policy's references to them are neither resolved nor
	// broken, so its ResolvedRefs condition is left out unless another
	// reference is broken; a declared target among them that is not among
	// the objects gets no ancestor entry (PolicyStatus.UnreadTargets)
	// rather than TargetNotFound.
	Unread func(topology.Ref) bool
	// Schemas, when set, checks each policy against the schema of its
	// CRD's version as the API server does on create, for objects that
	// never went through one (files): it compiles a CRD among the objects
	// (crdschema.Cache.Get does), and a policy the schema refuses is
	// Invalid, each refused field a problem. Only kinds whose CRD is among
	// the objects are checked. It is a function so that programs that do
	// not check (the controller) do not link the API server's validation
	// code.
	Schemas func(crd *unstructured.Unstructured) (SchemaValidator, error)
	// Features set the switches of implementations' configurations that
	// kinds' feature gates name ("EnvoyGateway.extensionApis.enableLua"),
	// over what the configurations among the objects say
	// (profiles.Configuration); a feature neither sets is off.
	Features policy.Features
	// Now, when set, is the clock the data of policies' references is
	// judged by (a CRL expires, policy.ContentCRL); time.Now otherwise.
	Now func() time.Time
	// ServedAPIs, when set, are the kinds the cluster serves
	// (policy.ServedByCRDs over every CRD of the cluster): a kind whose
	// implementation needs what is missing there (policy.Kind.Dependencies)
	// has each policy Accepted=False, reason MissingDependency. Nil (files)
	// judges no dependency: they count as installed.
	ServedAPIs policy.ServedAPIs
}

// SchemaValidator checks objects of one CRD's kind against its schema
// (*crdschema.Schema is one): what the API server would refuse, field by
// field.
type SchemaValidator interface {
	Validate(ctx context.Context, obj *unstructured.Unstructured) field.ErrorList
}

// Defaults for Options.
const (
	DefaultControllerName  = "attache.dev/policy-controller"
	DefaultConditionDomain = "attache.dev"
)

// MaxAncestors is the most PolicyAncestorStatus entries a policy status may
// hold (Gateway API limit).
const MaxAncestors = policy.MaxAncestors

// Condition is a status condition without timestamps (the engine has no
// clock; writers stamp lastTransitionTime).
type Condition struct {
	// Type, Status ("True" or "False"), Reason and Message are those of a
	// metav1.Condition.
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// ObservedGeneration is set on Affected conditions: the target's
	// metadata.generation.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Condition types and reasons (GEP-713 latest; project decision 7).
const (
	CondAccepted   = "Accepted"
	CondProgrammed = "Programmed"

	ReasonAccepted       = "Accepted"
	ReasonConflicted     = "Conflicted"
	ReasonInvalid        = "Invalid"
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonDisabled (Envoy Gateway's reason): the policy's kind is off in
	// its implementation's configuration (a feature gate of the whole
	// kind), so it applies nowhere.
	ReasonDisabled = "Disabled"
	// ReasonMissingDependency (Kuadrant's reason): the policy's
	// implementation needs something the cluster does not have installed
	// (policy.Kind.Dependencies), so it accepts no policy of the kind.
	ReasonMissingDependency = "MissingDependency"
	// ReasonTargetConflict: the policy cannot be applied to a target it
	// shares with objects it does not target (kinds that reject route
	// overlaps; NGINX Gateway Fabric's reason).
	ReasonTargetConflict = "TargetConflict"
	// ReasonAncestorNotBound (Istio's reason): the policy targets a
	// Service bound to no waypoint, where alone such a policy applies
	// (kinds with waypoint targets).
	ReasonAncestorNotBound = "AncestorNotBound"
	// ReasonPartiallyInvalid (istiod's, for a kind with
	// policy.Kind.SummaryIstioWaypoint): the summary of a policy bound
	// at some of its targets, not at all.
	ReasonPartiallyInvalid    = "PartiallyInvalid"
	ReasonProgrammed          = "Programmed"
	ReasonPartiallyProgrammed = "PartiallyProgrammed"
	ReasonReconciling         = "Reconciling"
	ReasonOverridden          = "Overridden"
	// ReasonUnknown (Kuadrant's reason): Programmed=False for a policy of
	// a kind reached through Gateways only that is in the path to no
	// (ready) effective target, of a kind whose partly overridden policies
	// are not programmed (NotProgrammedInPart), or whose implementation
	// waits: for another controller's Gateway on its paths
	// (policy.Kind.OtherControllersNotProgrammed), for an object it names
	// to be ready (policy.ObjectRefPath.Ready).
	ReasonUnknown  = "Unknown"
	ReasonAffected = "Affected"
)

// Result is everything the engine computed.
type Result struct {
	// Graph is the hierarchy built from the objects.
	Graph *topology.Graph
	// Grants are the ReferenceGrants among the objects, as the graph's
	// backend links used them (request tracing reads them too).
	Grants *gatewayapi.Grants
	// Kinds are the policy kinds, sorted.
	Kinds []*policy.Kind
	// Policies are every policy instance with its status, sorted by kind then ref.
	Policies []*PolicyStatus
	// Effective are the effective policies, sorted by kind then target.
	Effective []*Effective
	// Affected are the effective targets affected by at least one policy,
	// per kind, sorted.
	Affected []*Affected
	// Problems found in the input (invalid objects, cycles, ...), sorted.
	Problems []diag.Problem
	// ReplacedRules are the route rules the implementation replaces by a
	// direct response because a filter of theirs names a policy that does
	// not exist (policy.Kind.MissingFilterStatus), by rule section.
	ReplacedRules map[topology.Ref]RuleReplacement
	// ReplacedUnder are the objects and sections (routes, rules,
	// Gateways, ListenerSets, listeners) where a policy with errors of a
	// kind with policy.Kind.RouteReplacement attaches, so that its
	// implementation answers with a direct response the requests it
	// would route below them (see policy.Kind.RouteReplacement).
	ReplacedUnder map[topology.Ref]RuleReplacement
}

// RuleReplacement is a route rule (or what an object or section holds)
// answered by a direct response: its status, and why.
type RuleReplacement struct {
	Status int
	Reason string
	// Kind is the policy kind whose implementation replaces it (for a
	// filter naming a policy that does not exist, the kind it names):
	// only through that implementation's Gateways (policy.Kind.Serves).
	Kind *policy.Kind
}

// PolicyStatus is a policy and the status the engine computed for it.
type PolicyStatus struct {
	// Policy is the parsed policy.
	Policy *policy.Policy
	// Conditions summarize all ancestors: Accepted, and Programmed when accepted.
	Conditions []Condition
	// Ancestors has one entry per declared target (at most MaxAncestors;
	// see AncestorsOmitted), in targetRefs order.
	Ancestors []Ancestor
	// AncestorsOmitted counts the entries left out beyond MaxAncestors.
	AncestorsOmitted int
	// Affects are the effective targets this policy contributes to.
	Affects []topology.Ref
	// Reach summarizes where the policy wins, per context.
	Reach Reach
	// InPlaceInvalid are the targets (as attached, before ancestors are
	// named after Gateways) where the policy is Accepted=False/Invalid yet
	// in place (its references do not resolve) and fails its routes (not
	// every broken reference is in a part failing open, Kind.FailOpen),
	// with the message: requests there meet its kind's FailureStatus. Nil
	// when none.
	InPlaceInvalid map[topology.Ref]string `json:"-"`
	// InPlaceInvalidVia, for a target of InPlaceInvalid where the policy
	// fails through some Gateways only (the parameters the others run
	// with allow it: attache.dev/data-plane-allowlists), those Gateways;
	// a target absent here fails through every Gateway.
	InPlaceInvalidVia map[topology.Ref][]topology.Ref `json:"-"`
	// UnlistedTargets are the declared targets that do not resolve, left
	// out of Ancestors for a kind whose implementation lists none of them
	// (policy.Kind.MissingTargetsUnlisted); each is also an input problem.
	UnlistedTargets []topology.Ref `json:"-"`
	// UnreadTargets are the declared targets not judged: not among the
	// objects, and of what the caller could not read (Options.Unread). They
	// have no entry in Ancestors; a policy with no other target is
	// Accepted=False, reason TargetNotFound, its message saying it was not
	// judged (the controller leaves such a policy's status as it is).
	UnreadTargets []topology.Ref `json:"-"`
	// NotAppliedVia, for a target where the policy is Invalid because the
	// parameters of some Gateways' data planes refuse it, under a kind
	// leaving out what its implementation cannot translate
	// (policy.Kind.InvalidNotApplied), those Gateways: the policy is in
	// the target's effective policy, applied through its other Gateways
	// only (attache trace leaves it out of requests through these).
	NotAppliedVia map[topology.Ref][]topology.Ref `json:"-"`
}

// Reach counts a policy's contexts (target and distinct stack) by outcome.
type Reach struct {
	// Contexts is how many distinct contexts the policy is part of; Full,
	// Partial and None split them by its outcome there.
	Contexts int `json:"contexts"`
	Full     int `json:"full"`
	Partial  int `json:"partial"`
	None     int `json:"none"`
}

// Ancestor is one PolicyAncestorStatus entry: a declared target and its conditions.
type Ancestor struct {
	// Ref is the declared target, with its sectionName.
	Ref topology.Ref
	// Conditions are Accepted and, when accepted, Programmed, for this
	// target alone.
	Conditions []Condition
}

// GatewayAPI returns the entry as Gateway API's PolicyAncestorStatus.
func (a Ancestor) GatewayAPI(controllerName string, generation int64, now time.Time) gwv1.PolicyAncestorStatus {
	return toAncestorStatus(a, controllerName, generation, now)
}

// Effective is the effective policy of one kind for one target: one result
// per distinct context.
type Effective struct {
	// Kind is the policy kind.
	Kind *policy.Kind
	// Target is the effective target.
	Target topology.Ref
	// Contexts are the distinct stacks of policies reaching Target.
	Contexts []*Context
}

// Context is a distinct stack of policies reaching a target, its fold, and
// the paths that carry it.
type Context struct {
	// Stack lists the policies on the path, most general first.
	Stack []StackEntry
	// Spec is the effective spec proper.
	Spec map[string]any
	// Fields gives, for every leaf field of Spec, who set it.
	Fields []FieldSource
	// Errors are failures of Custom merge functions in this context.
	Errors []string
	paths  func(yield func([]topology.Ref) bool)
	count  func() int
}

// Paths yields every path (root to target inclusive) of this context.
func (c *Context) Paths(yield func([]topology.Ref) bool) { c.paths(yield) }

// PathCount is the number of paths Paths yields, counted without building
// them (a context behind many listeners and routes has thousands).
func (c *Context) PathCount() int {
	if c.count != nil {
		return c.count()
	}
	n := 0
	c.paths(func([]topology.Ref) bool { n++; return true })
	return n
}

// StackEntry is one policy in a context: where it attaches, with what
// strategy, and which fields it lost to whom.
type StackEntry struct {
	// Attachment (Policy and At) is shared by every context of the policy.
	*Attachment
	// Strategy and Stanza are the policy's resolved merge strategy and
	// its stanza ("defaults", "overrides", or "" for a bare spec).
	Strategy merge.Strategy
	Stanza   string
	// Outcome is "full", "partial" or "none".
	Outcome string
	// Lost lists the fields it set that are not in the effective spec.
	Lost []LostField
	// Conflicted is set when the None strategy rejected this policy here,
	// and ConflictedBy names the established policy that won.
	Conflicted   bool
	ConflictedBy []*Attachment
	// Unsupported, for a policy with a merge type, are the fields its kind
	// does not support at its target that its merge with the policies
	// above would set here: it takes no part in this context (Outcome
	// none) and is Invalid for the listeners on its paths.
	Unsupported []string
	// MergeHolds, for a policy with a merge type, names the field of
	// another policy that its merge with the policies above holds here
	// and that fails that policy's translation ("spec.basicAuth.users of
	// SecurityPolicy ns/gw"): its implementation fails the merged policy,
	// which is Invalid for the listeners on its paths; or its own broken
	// field, naming itself, when that fails open by the merged policy's
	// flags only (with MergeFailedOpen); "" when none.
	MergeHolds string
	// MergeFailedOpen, when MergeHolds is set, are the parts of the
	// merged policy its implementation leaves out because every broken
	// field the merge holds lies in a part that fails open by the merged
	// policy's flags ("spec.extAuth"): the merged policy is still Invalid
	// for those listeners, but the route does not fail.
	MergeFailedOpen []string
	// NotAppliedVia are the Gateways through which its implementation
	// does not apply the policy at its target, though it is in this
	// context's stack: the parameters of their data planes refuse it
	// (PolicyStatus.NotAppliedVia; NGINX Gateway Fabric's NginxProxy
	// without telemetry for an ObservabilityPolicy). The context's spec,
	// with its fields, holds through the context's other Gateways; nil
	// when it applies through all of them.
	NotAppliedVia []topology.Ref
}

// LostField is a field a policy set but that is not in the effective spec.
type LostField struct {
	// Path is the field's path in the spec proper (dotted), or
	// merge.SpecPath (".") for a policy that sets no field and was
	// replaced whole all the same (kinds overridden by presence).
	Path string
	// To are the policies that beat it: the one whose value replaced or
	// deleted it, or the winning side of an atomic merge.
	To []*Attachment
}

// LostPathText words a lost field's path for people: the path itself, or
// for merge.SpecPath, that the whole spec, which sets no field, was lost.
func LostPathText(path string) string {
	if path == merge.SpecPath {
		return wholeEmptySpec
	}
	return path
}

// Attachment is a policy attached to a target.
type Attachment struct {
	// Policy is the policy object.
	Policy topology.Ref
	// At is the target it attaches to (with its section): its level.
	At topology.Ref
}

// FieldSource says who set a field of an effective spec.
type FieldSource struct {
	// Path is the leaf's path in the spec proper (dotted; odd keys quoted).
	Path string
	// Value is the leaf's value: a scalar, a list or an empty object.
	Value any
	// Attachment (Policy and At: where the policy attaches, its level) is
	// shared by every field the policy sets.
	*Attachment
	// Strategy is that policy's merge strategy.
	Strategy merge.Strategy
}

// Affected lists the policies of one kind affecting one target (decision 8)
// and the condition a controller writes on it.
type Affected struct {
	// Kind is the policy kind and Target the affected effective target.
	Kind   *policy.Kind
	Target topology.Ref
	// Policies are those contributing a field to Target's effective
	// policy in some context, sorted.
	Policies []topology.Ref
	// Condition is the <domain>/<Kind>Affected condition for Target.
	Condition Condition
}
