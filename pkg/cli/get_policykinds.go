package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

func newGetPolicyKindsCommand(streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "policykinds [KIND[,KIND...]]",
		Aliases: []string{"policykind"},
		Short:   "List the discovered policy kinds and the semantics attache applies to them",
		Long: `Lists the policy kinds: CRDs labelled gateway.networking.k8s.io/policy (and
kinds registered from Go), with their class, the kinds their policies may
target, the kinds that get effective policies, the hierarchy (-o wide) and the
supported merge strategies; -o wide adds the settings beyond GEP-713's
descriptor (same-level resolution, merge-type field, composition, ...) that
differ from the defaults. With -o wide every setting says where it came from:
(label), (annotation), (profile: <implementation>), (default) or (go). Kinds
with a built-in profile (docs/profiles.md) are policy kinds even without the
label; --profiles=false turns profiles off. -l filters on the CRDs' labels;
-n and -A do not apply, policy kinds are cluster-wide.`,
		Example: `  attache get policykinds -f examples/parable -o wide
  attache get policykinds retrypolicy -o yaml`,
		Args: cobra.MaximumNArgs(1),
	}
	o := newGetOptions(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return o.runPolicyKinds(cmd, streams, args) }
	return cmd
}

// policyKindList is the -o json|yaml document of `attache get policykinds`.
type policyKindList struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Items      []policyKindItem `json:"items"`
	// Partial lists what could not be read from the cluster (the policy
	// CRDs, when listing them is forbidden).
	Partial []string `json:"partial,omitempty"`
}

// policyKindItem is one policy kind's descriptor. Kinds are written Kind or
// Kind.group, as in the CRD annotations; origins is keyed by the setting
// ("class", "targetKinds", "effectiveTargetKinds", "hierarchy", "strategies").
type policyKindItem struct {
	PolicyKind           string   `json:"policyKind"`
	Group                string   `json:"group,omitempty"`
	Kind                 string   `json:"kind"`
	CRD                  string   `json:"crd,omitempty"`
	Class                string   `json:"class"`
	TargetKinds          []string `json:"targetKinds"`
	EffectiveTargetKinds []string `json:"effectiveTargetKinds"`
	Hierarchy            []string `json:"hierarchy"`
	Strategies           []string `json:"strategies"`
	// The settings beyond GEP-713's descriptor (docs/semantics.md, "Policy
	// kinds"); added fields, so older readers are unaffected.
	EffectiveSectionKinds []string `json:"effectiveSectionKinds,omitempty"`
	SameLevel             string   `json:"sameLevel"`
	// SameLevelTies is "none" when policies created in the same second as
	// the oldest at a target are not rejected; absent: by name.
	SameLevelTies  string   `json:"sameLevelTies,omitempty"`
	MergeTypeField string   `json:"mergeTypeField,omitempty"`
	Composition    string   `json:"composition"`
	NamedRules     []string `json:"namedRules,omitempty"`
	// Oneofs are the kind's oneofs, each as attache.dev/oneofs writes
	// one ("options.hostRewrite|autoHostRewrite").
	Oneofs         []string `json:"oneofs,omitempty"`
	DirectSections bool     `json:"directSections,omitempty"`
	// DirectSectionsUnrankedBy are the GatewayClass controllerNames at
	// whose Gateways a policy on a section does not beat one on its
	// object: the two meet as one level (attache.dev/direct-sections
	// clauses "controller=<name> unranked"); absent: none.
	DirectSectionsUnrankedBy []string `json:"directSectionsUnrankedBy,omitempty"`
	Ancestor                 string   `json:"ancestor"`
	// AncestorServiceGatewaysBy are the GatewayClass controllerNames whose
	// Gateways name a backend policy's ancestors as objects, each of them
	// whose routes use the backend's object (attache.dev/ancestor clauses
	// "controller=<name> service-gateways"); absent: none.
	AncestorServiceGatewaysBy []string `json:"ancestorServiceGatewaysBy,omitempty"`
	// AncestorLimit is "skip" when a policy does not apply at the
	// ancestors beyond the 16 its status can list; absent: it does.
	AncestorLimit   string   `json:"ancestorLimit,omitempty"`
	TargetingFields []string `json:"targetingFields,omitempty"`
	SchemaMerge     bool     `json:"schemaMerge,omitempty"`
	// MaxTargetRefs: 0 is GEP-713's 16, -1 no limit.
	MaxTargetRefs int `json:"maxTargetRefs,omitempty"`
	// NoStanzas: defaults/overrides/strategy are fields of the kind's own.
	NoStanzas bool `json:"noStanzas,omitempty"`
	// NoSectionNames: the kind's targetRefs have no sectionName (the API
	// server drops one; a reference names the whole object).
	NoSectionNames bool `json:"noSectionNames,omitempty"`
	// SectionNamesIgnored: the kind's targetRefs have a sectionName, which
	// its implementation does not read (a reference names the whole
	// object; noSectionNames is set too).
	SectionNamesIgnored bool `json:"sectionNamesIgnored,omitempty"`
	// EmptyTargetGroup is "core" when a targetRef without group names the
	// core group; absent: the one known kind of that name ("resolve").
	EmptyTargetGroup string `json:"emptyTargetGroup,omitempty"`
	// UntargetedScope: what a policy without targetRefs applies to
	// ("istio", "istio:<root namespace>"); absent: nothing (Invalid).
	UntargetedScope string `json:"untargetedScope,omitempty"`
	// PortSelection: at a listener, the configuration of the list item for
	// its port replaces the default one ("perPort[].listener key=port
	// default=default"); absent: none.
	PortSelection string `json:"portSelection,omitempty"`
	// SharedPortListeners is "reject" when a policy on a plain-HTTP
	// listener sharing its port with others is Invalid; absent: allowed.
	SharedPortListeners string `json:"sharedPortListeners,omitempty"`
	// DataPlaneTarget: a policy targets one data plane by name, a Gateway
	// or a GatewayClass whose Gateways are merged; absent: false.
	DataPlaneTarget bool `json:"dataPlaneTarget,omitempty"`
	// OverriddenBy is "presence" when a policy is overridden wherever a
	// more specific policy replaces it, whatever either sets; absent: by
	// the fields it loses ("fields").
	OverriddenBy string `json:"overriddenBy,omitempty"`
	// Reach is "gateway" when only paths from a Gateway reach the kind's
	// effective targets, a policy reaching none not being programmed;
	// absent: every path ("any").
	Reach string `json:"reach,omitempty"`
	// Summary is "istio-waypoint" when a policy's summary Accepted
	// condition says what istiod's WaypointAccepted says, flattened over
	// its targetRefs.
	Summary string `json:"summary,omitempty"`
	// RouteParents is "parent-refs" when a route's paths run from every
	// listener its parentRefs name, admitted or not; absent: from the
	// listeners that admit it ("admitted").
	RouteParents string `json:"routeParents,omitempty"`
	// PathReadiness is "status" when the kind's paths run only through
	// listeners and routes their status says are ready; absent: status is
	// not read ("ignored").
	PathReadiness string `json:"pathReadiness,omitempty"`
	// PartlyOverridden is "not-programmed" when a policy losing some of
	// what it sets is Programmed=False; absent: PartiallyProgrammed
	// ("programmed").
	PartlyOverridden string `json:"partlyOverridden,omitempty"`
	// WeightAnnotation names the annotation whose integer ranks the
	// policies of one level before their age (higher first); absent: none.
	WeightAnnotation string `json:"weightAnnotation,omitempty"`
	// DelegationPriority says whose policies win across route delegation:
	// "<annotation> parent=<values> [child=<values>]" (the delegating
	// route's annotation values that let its policies win) or
	// "<annotation> child-fields=<path> [groups=...]" (the parent's win
	// but in the fields the annotation lists); absent: the child route's
	// always.
	DelegationPriority string `json:"delegationPriority,omitempty"`
	// WaypointTargets is "istio" when a Service target takes effect only
	// through the waypoint the Service is bound to; absent: "none".
	WaypointTargets string `json:"waypointTargets,omitempty"`
	// Controllers are the controllerName values of the GatewayClasses
	// whose Gateways the kind's implementation serves; absent: any.
	Controllers []string `json:"controllers,omitempty"`
	// OtherControllers is "not-programmed" when a policy on another
	// controller's Gateway is accepted and not programmed while in a path
	// through one, "unlisted" when its status lists no such target;
	// absent: it is TargetNotFound ("target-not-found").
	OtherControllers string `json:"otherControllers,omitempty"`
	// GatewaySections is "by-name" when a policy on a Gateway's listener
	// also reaches the listeners of that name of the Gateway's
	// ListenerSets; absent: "own".
	GatewaySections string `json:"gatewaySections,omitempty"`
	// Dependencies are what the kind's implementation needs installed
	// before it accepts a policy, each "<name>=<Kind.group/version>,...",
	// alternatives separated by "|"; absent: none.
	Dependencies []string `json:"dependencies,omitempty"`
	// RequiredObjects are the objects the kind's implementation needs on
	// the cluster before it enforces a policy, each "<name>=<Kind.group>";
	// absent: none.
	RequiredObjects []string `json:"requiredObjects,omitempty"`
	// EffectiveListeners are the conditions a listener must meet to be an
	// effective target ("hostname", "tls-terminate", "attached-routes");
	// absent: any.
	EffectiveListeners []string `json:"effectiveListeners,omitempty"`
	// ConflictScope is "policy" when a policy rejected at one target is
	// rejected at all of them; absent: at that target only ("target").
	ConflictScope string `json:"conflictScope,omitempty"`
	// RouteOverlap is "reject" when a policy on a route sharing a location
	// with a route it does not target is rejected; absent: allowed.
	RouteOverlap string `json:"routeOverlap,omitempty"`
	// InvalidPolicies is "not-applied" when a policy its implementation
	// cannot translate at a target is not attached there; absent: it is
	// Invalid in place, keeping its place ("in-place").
	InvalidPolicies string `json:"invalidPolicies,omitempty"`
	// InvalidPolicyReferences is "after-conflicts" when, with
	// InvalidPolicies not-applied, a policy whose references are all that
	// break it still takes part in conflicts; absent: it takes part in
	// none.
	InvalidPolicyReferences string `json:"invalidPolicyReferences,omitempty"`
	// MissingTargets is "problem" when a declared target that does not
	// resolve gets no status ancestor entry, only an input problem;
	// absent: a TargetNotFound entry ("entry").
	MissingTargets string `json:"missingTargets,omitempty"`
	// Programmed is "when-accepted" when the Programmed condition says
	// whether the policy is accepted at the ancestor; absent: what it
	// contributes there ("gep").
	Programmed string `json:"programmed,omitempty"`
	// FilterAttachment is "extension-ref" when a route rule's ExtensionRef
	// filter naming a policy attaches it to the rule; absent: none.
	FilterAttachment string `json:"filterAttachment,omitempty"`
	// ConflictFields are the fields two policies at one level conflict
	// on under merge-disjoint; absent: every field.
	ConflictFields []string `json:"conflictFields,omitempty"`
	// NotInListenerSets are the fields the policies above a ListenerSet
	// do not give its listeners; absent: none.
	NotInListenerSets []string `json:"notInListenerSets,omitempty"`
	// InheritedFields are the fields of an additive kind that a context
	// takes from its most specific policy setting them; absent: none.
	InheritedFields []string `json:"inheritedFields,omitempty"`
	// LevelInheritedFields are the fields of an additive kind that a
	// context takes from the most specific level setting them, every
	// policy of that level adding its own; absent: none.
	LevelInheritedFields []string `json:"levelInheritedFields,omitempty"`
	// CACertificateRefs is where policies name the objects holding the CA
	// certificates they trust, in the annotation's form
	// ("validation.caCertificateRefs kinds=ConfigMap keys=ca.crt"); absent:
	// none.
	CACertificateRefs string `json:"caCertificateRefs,omitempty"`
	// BackendRefs are the paths where policies name backends they send
	// traffic to themselves ("extAuth.http.backendRefs[]"); absent: none.
	BackendRefs []string `json:"backendRefs,omitempty"`
	// BackendRefAncestors is "gateways" when the ancestors a policy gives
	// the policies of the backends it names are the Gateways through
	// which it applies; absent: the policy itself.
	BackendRefAncestors string `json:"backendRefAncestors,omitempty"`
	// UnresolvedBackendRefs is "invalid" when a policy whose backendRefs
	// do not resolve is Invalid; absent: such references are ignored.
	UnresolvedBackendRefs string `json:"unresolvedBackendRefs,omitempty"`
	// BackendRefRules are the words of how those backendRefs are judged
	// where implementations differ ("external-name=allowed protocols=any
	// backend-tls=oldest"); absent: as Envoy Gateway judges them.
	BackendRefRules string `json:"backendRefRules,omitempty"`
	// ClusterIPRouting is the condition on a Gateway's data-plane
	// parameters ("routingType=Service") under which policies' external
	// services go to a Service's cluster IP, not its endpoints; absent:
	// none.
	ClusterIPRouting string `json:"clusterIPRouting,omitempty"`
	// ObjectRefs are the paths where policies name ConfigMaps and Secrets
	// whose data they use, each in the annotation's form
	// ("oidc.clientSecret kinds=Secret keys=client-secret"); a policy
	// naming one that does not resolve is Invalid. Absent: none.
	ObjectRefs []string `json:"objectRefs,omitempty"`
	// UnsupportedFields are, per target kind, the spec fields policies may
	// not set there, each in the annotation's form
	// ("TCPRoute.gateway.networking.k8s.io=cors,jwt"); a policy setting
	// one there is Invalid at that target. Absent: none.
	UnsupportedFields []string `json:"unsupportedFields,omitempty"`
	// FailureStatus is the HTTP status with which the implementation
	// answers a route's requests when the policy applying there is Invalid
	// in place; absent: none (the request goes on without it).
	FailureStatus int `json:"failureStatus,omitempty"`
	// RouteReplacement is the HTTP status of the direct response with
	// which the implementation replaces what a policy with errors reaches
	// (its rules, or a Gateway's or listener's requests); absent: none.
	RouteReplacement int `json:"routeReplacement,omitempty"`
	// FailOpen are the parts of policies left out, rather than failing
	// the route, when a reference under them does not resolve and their
	// flag is true, each "<path>=<field>"; absent: none.
	FailOpen []string `json:"failOpen,omitempty"`
	// DataPlaneAllowlists bind values of policies to those the parameters
	// of the target's data plane hold, each "<path>=<parameters path>";
	// absent: none.
	DataPlaneAllowlists []string `json:"dataPlaneAllowlists,omitempty"`
	// Requires are what policies need of the data plane's parameters or of
	// other kinds' policies at the listeners when they hold a value, each
	// "<path> requires|excludes <where>:<path>|..."; absent: none.
	Requires []string `json:"requires,omitempty"`
	// ValueRanges bound fields holding quantities, which the
	// implementation checks when it translates a policy, each
	// "<path>=<min>..<max>"; absent: none.
	ValueRanges []string `json:"valueRanges,omitempty"`
	// RegexFields hold regular expressions the implementation compiles,
	// each "<path>[ when=<field>=<value>]"; absent: none.
	RegexFields []string `json:"regexFields,omitempty"`
	// Validations are CEL rules on policies' content, each {rule,
	// message, fieldPath, listenerProtocols}; absent: none.
	Validations []policy.Validation `json:"validations,omitempty"`
	// FeatureGates are the switches of the implementation's
	// configuration the kind ("<feature>=*") or fields of its policies
	// ("<feature>=<path>,...") need; absent: none.
	FeatureGates []string `json:"featureGates,omitempty"`
	// Profile names the implementation whose built-in profile gave
	// settings, if any.
	Profile string            `json:"profile,omitempty"`
	Origins map[string]string `json:"origins"`
}

func (o *getOptions) runPolicyKinds(cmd *cobra.Command, streams genericiooptions.IOStreams, args []string) error {
	sel, err := o.validate()
	if err != nil {
		return err
	}
	// The kinds come from their CRDs alone: listing policies and targets
	// would cost time and, for a user with narrow RBAC, call an answer
	// partial that is not.
	o.common.policyKindsOnly = true
	l, err := o.common.load(cmd.Context(), streams)
	if err != nil {
		return err
	}
	l.warn(streams)
	crds := policyCRDs(l.Objects)
	kinds := l.Result.Kinds
	if len(args) == 1 {
		if kinds, err = resolvePolicyKinds(cmd, args[0], kinds, crds); err != nil {
			return err
		}
	}
	var shown []*policy.Kind
	var items []policyKindItem
	for _, k := range kinds {
		// A kind registered from Go has no CRD, hence no labels: it only
		// matches an empty selector.
		crd := crds[k.GroupKind]
		if !sel.Matches(labels.Set(crd.labels)) {
			continue
		}
		shown = append(shown, k)
		items = append(items, newPolicyKindItem(k, crd.name))
	}

	if o.structured() {
		if items == nil {
			items = []policyKindItem{}
		}
		return write(streams.Out, policyKindList{APIVersion: listAPIVersion, Kind: "PolicyKindList", Items: items, Partial: l.partial()}, o.output)
	}
	if len(items) == 0 {
		fmt.Fprintln(streams.ErrOut, "No policy kinds found (a policy kind is a CRD labelled gateway.networking.k8s.io/policy or one of the implementations' kinds in docs/profiles.md; with -f, include the CRDs).")
		return nil
	}
	return o.printTable(streams.Out, policyKindTable(shown, o.output == "wide"))
}

// effectiveKinds renders the effective target kinds, a kind whose sections
// are the effective targets as "HTTPRoute rules".
func effectiveKinds(k *policy.Kind) string {
	s := make([]string, len(k.EffectiveTargetKinds))
	for i, gk := range k.EffectiveTargetKinds {
		s[i] = shortKind(gk)
		if k.IsEffectiveSection(gk) {
			s[i] += " " + policy.SectionNoun(gk)
		}
	}
	return strings.Join(s, ",")
}

// effectiveOriginSetting is the setting whose origin the effective target
// column shows: the effective section kinds when they gave the column and
// the effective target kinds were not set themselves.
func effectiveOriginSetting(k *policy.Kind) string {
	if len(k.EffectiveSectionKinds) > 0 && k.Origins[policy.SettingEffectiveTargetKinds] == policy.FromDefault {
		return policy.SettingEffectiveSectionKinds
	}
	return policy.SettingEffectiveTargetKinds
}

// semantics renders the settings that differ from GEP-713's defaults, for
// the wide table: "-" when there is none.
func semantics(k *policy.Kind, origin func(setting, cell string) string) string {
	var parts []string
	if k.SameLevel != policy.SameLevelGEP {
		parts = append(parts, origin(policy.SettingSameLevel, "same-level="+string(k.SameLevel)))
		if k.TiesNotRejected {
			parts = append(parts, origin(policy.SettingSameLevelTies, "same-level-ties=none"))
		}
	}
	if k.MergeTypeField != "" {
		parts = append(parts, origin(policy.SettingMergeTypeField, "merge-type-field="+k.MergeTypeField))
	}
	if k.Composition != policy.CompositionMerge {
		parts = append(parts, origin(policy.SettingComposition, "composition="+string(k.Composition)))
	}
	if len(k.NamedRules) > 0 {
		parts = append(parts, origin(policy.SettingNamedRules, "named-rules="+strings.Join(k.NamedRules, ",")))
	}
	for _, o := range k.Oneofs {
		parts = append(parts, origin(policy.SettingOneofs, "oneof="+o.String()))
	}
	if k.DirectSections {
		w := "direct-sections"
		if len(k.SectionsUnrankedBy) > 0 {
			w += "=" + policy.FormatDirectSections(true, k.SectionsUnrankedBy)
		}
		parts = append(parts, origin(policy.SettingDirectSections, w))
	}
	if k.Ancestor != policy.AncestorTarget {
		parts = append(parts, origin(policy.SettingAncestor, "ancestor="+policy.FormatAncestor(k.Ancestor, k.AncestorServiceGatewaysBy)))
	}
	if k.AncestorLimit != policy.AncestorLimitReport {
		parts = append(parts, origin(policy.SettingAncestorLimit, "ancestor-limit="+string(k.AncestorLimit)))
	}
	if k.SchemaMerge {
		parts = append(parts, origin(policy.SettingSchemaMerge, "schema-merge"))
	}
	if k.NoStanzas {
		parts = append(parts, origin(policy.SettingStanzas, "no-stanzas"))
	}
	switch {
	case k.SectionNamesIgnored:
		parts = append(parts, origin(policy.SettingSectionNames, "section-names=ignored"))
	case k.NoSectionNames:
		parts = append(parts, origin(policy.SettingSectionNames, "no-section-names"))
	}
	if k.EmptyTargetGroupCore {
		parts = append(parts, origin(policy.SettingEmptyTargetGroup, "empty-target-group=core"))
	}
	switch {
	case k.MaxTargetRefs < 0:
		parts = append(parts, origin(policy.SettingMaxTargetRefs, "max-target-refs=none"))
	case k.MaxTargetRefs > 0:
		parts = append(parts, origin(policy.SettingMaxTargetRefs, fmt.Sprintf("max-target-refs=%d", k.MaxTargetRefs)))
	}
	if len(k.TargetingFields) > 0 {
		parts = append(parts, origin(policy.SettingTargetingFields, "targeting-fields="+strings.Join(k.TargetingFields, ",")))
	}
	if k.PortSelection.Enabled() {
		parts = append(parts, origin(policy.SettingPortSelection, "port-selection="+k.PortSelection.String()))
	}
	if k.Untargeted.Mode != policy.UntargetedNone {
		parts = append(parts, origin(policy.SettingUntargetedScope, "untargeted-scope="+k.Untargeted.String()))
	}
	if k.RejectSharedPort {
		parts = append(parts, origin(policy.SettingSharedPortListeners, "shared-port-listeners=reject"))
	}
	if k.DataPlaneTarget {
		parts = append(parts, origin(policy.SettingDataPlaneTarget, "data-plane-target"))
	}
	if k.OverriddenByPresence {
		parts = append(parts, origin(policy.SettingOverriddenBy, "overridden-by=presence"))
	}
	if k.ReachThroughGateway {
		parts = append(parts, origin(policy.SettingReach, "reach=gateway"))
	}
	if k.RouteParentRefs {
		parts = append(parts, origin(policy.SettingRouteParents, "route-parents=parent-refs"))
	}
	if k.ReadyPathsOnly {
		parts = append(parts, origin(policy.SettingPathReadiness, "path-readiness=status"))
	}
	if k.PartlyOverriddenNotProgrammed {
		parts = append(parts, origin(policy.SettingPartlyOverridden, "partly-overridden=not-programmed"))
	}
	if k.WeightAnnotation != "" {
		parts = append(parts, origin(policy.SettingWeightAnnotation, "weight-annotation="+k.WeightAnnotation))
	}
	if k.DelegationPriority.Enabled() {
		parts = append(parts, origin(policy.SettingDelegationPriority, "delegation-priority="+k.DelegationPriority.String()))
	}
	if k.WaypointTargets {
		parts = append(parts, origin(policy.SettingWaypointTargets, "waypoint-targets=istio"))
	}
	if k.SummaryIstioWaypoint {
		parts = append(parts, origin(policy.SettingSummary, "summary=istio-waypoint"))
	}
	if len(k.Controllers) > 0 {
		parts = append(parts, origin(policy.SettingControllers, "controllers="+policy.ControllersString(k.Controllers)))
	}
	if k.OtherControllersNotProgrammed {
		parts = append(parts, origin(policy.SettingOtherControllers, "other-controllers="+policy.OtherControllersNotProgrammed))
	}
	if k.OtherControllersUnlisted {
		parts = append(parts, origin(policy.SettingOtherControllers, "other-controllers="+policy.OtherControllersUnlisted))
	}
	if k.GatewaySectionsByName {
		parts = append(parts, origin(policy.SettingGatewaySections, "gateway-sections="+policy.GatewaySectionsByName))
	}
	if len(k.Dependencies) > 0 {
		parts = append(parts, origin(policy.SettingDependencies, "dependencies="+policy.DependenciesString(k.Dependencies)))
	}
	if len(k.RequiredObjects) > 0 {
		parts = append(parts, origin(policy.SettingRequiredObjects, "required-objects="+policy.RequiredObjectsString(k.RequiredObjects)))
	}
	if len(k.EffectiveListeners) > 0 {
		parts = append(parts, origin(policy.SettingEffectiveListeners, "effective-listeners="+policy.EffectiveListenersString(k.EffectiveListeners)))
	}
	if k.ConflictScopePolicy {
		parts = append(parts, origin(policy.SettingConflictScope, "conflict-scope=policy"))
	}
	if k.RejectRouteOverlap {
		parts = append(parts, origin(policy.SettingRouteOverlap, "route-overlap=reject"))
	}
	if k.InvalidNotApplied {
		v := "invalid-policies=not-applied"
		if k.RefsAfterConflicts {
			v += " references=after-conflicts"
		}
		parts = append(parts, origin(policy.SettingInvalidPolicies, v))
	}
	if k.MissingTargetsUnlisted {
		parts = append(parts, origin(policy.SettingMissingTargets, "missing-targets="+policy.MissingTargetsProblem))
	}
	if k.ProgrammedWhenAccepted {
		parts = append(parts, origin(policy.SettingProgrammed, "programmed="+policy.ProgrammedWhenAccepted))
	}
	if k.FilterAttachment {
		parts = append(parts, origin(policy.SettingFilterAttachment, "filter-attachment="+filterAttachment(k)))
	}
	if len(k.ConflictFields) > 0 {
		parts = append(parts, origin(policy.SettingConflictFields, "conflict-fields="+strings.Join(k.ConflictFields, ",")))
	}
	if len(k.NotInListenerSets) > 0 {
		parts = append(parts, origin(policy.SettingNotInListenerSets, "not-in-listener-sets="+strings.Join(k.NotInListenerSets, ",")))
	}
	if len(k.InheritedFields) > 0 {
		parts = append(parts, origin(policy.SettingInheritedFields, "inherited-fields="+strings.Join(k.InheritedFields, ",")))
	}
	if len(k.LevelInheritedFields) > 0 {
		parts = append(parts, origin(policy.SettingLevelInheritedFields, "level-inherited-fields="+strings.Join(k.LevelInheritedFields, ",")))
	}
	if k.CARefs.Enabled() {
		parts = append(parts, origin(policy.SettingCACertificateRefs, "ca-certificate-refs="+k.CARefs.String()))
	}
	if len(k.BackendRefs) > 0 {
		v := "backend-refs=" + strings.Join(backendRefPaths(k), ",")
		if k.BackendRefAncestorGateways {
			v += "; ancestors=gateways"
		}
		parts = append(parts, origin(policy.SettingBackendRefs, v))
	}
	if k.InvalidOnUnresolvedBackendRefs {
		parts = append(parts, origin(policy.SettingUnresolvedBackendRefs, strings.TrimSpace("unresolved-backend-refs=invalid "+k.BackendRefRules.String())))
	}
	if k.ClusterIPRouting != "" {
		parts = append(parts, origin(policy.SettingClusterIPRouting, "cluster-ip-routing="+k.ClusterIPRouting.String()))
	}
	for _, r := range k.ObjectRefs {
		parts = append(parts, origin(policy.SettingObjectRefs, "object-refs="+r.String()))
	}
	for _, u := range k.UnsupportedFields {
		parts = append(parts, origin(policy.SettingUnsupportedFields, "unsupported-fields="+u.String()))
	}
	if k.FailureStatus != 0 {
		parts = append(parts, origin(policy.SettingFailureStatus, fmt.Sprintf("failure-status=%d", k.FailureStatus)))
	}
	if k.RouteReplacement != 0 {
		parts = append(parts, origin(policy.SettingRouteReplacement, fmt.Sprintf("route-replacement=%d", k.RouteReplacement)))
	}
	for _, f := range k.FailOpen {
		parts = append(parts, origin(policy.SettingFailOpen, "fail-open="+f.String()))
	}
	for _, a := range k.Allowlists {
		parts = append(parts, origin(policy.SettingAllowlists, "data-plane-allowlist="+a.String()))
	}
	for _, r := range k.Requirements {
		parts = append(parts, origin(policy.SettingRequirements, "requires="+r.String()))
	}
	for _, r := range k.ValueRanges {
		parts = append(parts, origin(policy.SettingValueRanges, "value-range="+r.String()))
	}
	for _, r := range k.RegexFields {
		parts = append(parts, origin(policy.SettingRegexFields, "regex-field="+r.String()))
	}
	for _, v := range k.Validations {
		parts = append(parts, origin(policy.SettingValidations, "validation="+v.String()))
	}
	for _, g := range k.FeatureGates {
		parts = append(parts, origin(policy.SettingFeatureGates, "feature-gate="+g.String()))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func groupKindNames(gks []topology.GroupKind) []string {
	out := make([]string, len(gks))
	for i, gk := range gks {
		out[i] = gk.String()
	}
	return out
}

func strategyNames(ss []merge.Strategy) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func newPolicyKindItem(k *policy.Kind, crd string) policyKindItem {
	it := policyKindItem{
		PolicyKind:                k.String(),
		Group:                     k.GroupKind.Group,
		Kind:                      k.GroupKind.Kind,
		CRD:                       crd,
		Class:                     string(k.Class),
		TargetKinds:               groupKindNames(k.TargetKinds),
		EffectiveTargetKinds:      groupKindNames(k.EffectiveTargetKinds),
		Hierarchy:                 groupKindNames(k.Hierarchy),
		Strategies:                strategyNames(k.Strategies),
		EffectiveSectionKinds:     groupKindNames(k.EffectiveSectionKinds),
		SameLevel:                 string(k.SameLevel),
		SameLevelTies:             map[bool]string{true: "none"}[k.TiesNotRejected],
		MergeTypeField:            k.MergeTypeField,
		Composition:               string(k.Composition),
		NamedRules:                k.NamedRules,
		DirectSections:            k.DirectSections,
		DirectSectionsUnrankedBy:  k.SectionsUnrankedBy,
		Ancestor:                  string(k.Ancestor),
		AncestorServiceGatewaysBy: k.AncestorServiceGatewaysBy,
		AncestorLimit:             map[bool]string{true: string(k.AncestorLimit)}[k.AncestorLimit != policy.AncestorLimitReport],
		TargetingFields:           k.TargetingFields,
		SchemaMerge:               k.SchemaMerge,
		MaxTargetRefs:             k.MaxTargetRefs,
		NoStanzas:                 k.NoStanzas,
		NoSectionNames:            k.NoSectionNames,
		SectionNamesIgnored:       k.SectionNamesIgnored,
		EmptyTargetGroup:          map[bool]string{true: "core"}[k.EmptyTargetGroupCore],
		WeightAnnotation:          k.WeightAnnotation,
		Profile:                   k.Implementation,
		Origins:                   make(map[string]string, len(k.Origins)),
	}
	if k.DelegationPriority.Enabled() {
		it.DelegationPriority = k.DelegationPriority.String()
	}
	if k.WaypointTargets {
		it.WaypointTargets = "istio"
	}
	it.Controllers = k.Controllers
	if k.OtherControllersNotProgrammed {
		it.OtherControllers = policy.OtherControllersNotProgrammed
	}
	if k.OtherControllersUnlisted {
		it.OtherControllers = policy.OtherControllersUnlisted
	}
	if k.GatewaySectionsByName {
		it.GatewaySections = policy.GatewaySectionsByName
	}
	for _, d := range k.Dependencies {
		it.Dependencies = append(it.Dependencies, d.String())
	}
	for _, r := range k.RequiredObjects {
		it.RequiredObjects = append(it.RequiredObjects, r.String())
	}
	it.EffectiveListeners = k.EffectiveListeners
	if k.PortSelection.Enabled() {
		it.PortSelection = k.PortSelection.String()
	}
	if k.Untargeted.Mode != policy.UntargetedNone {
		it.UntargetedScope = k.Untargeted.String()
	}
	if k.RejectSharedPort {
		it.SharedPortListeners = "reject"
	}
	it.DataPlaneTarget = k.DataPlaneTarget
	if k.OverriddenByPresence {
		it.OverriddenBy = "presence"
	}
	if k.SummaryIstioWaypoint {
		it.Summary = "istio-waypoint"
	}
	if k.ReachThroughGateway {
		it.Reach = "gateway"
	}
	if k.RouteParentRefs {
		it.RouteParents = "parent-refs"
	}
	if k.ReadyPathsOnly {
		it.PathReadiness = "status"
	}
	if k.PartlyOverriddenNotProgrammed {
		it.PartlyOverridden = "not-programmed"
	}
	if k.ConflictScopePolicy {
		it.ConflictScope = "policy"
	}
	if k.RejectRouteOverlap {
		it.RouteOverlap = "reject"
	}
	if k.InvalidNotApplied {
		it.InvalidPolicies = "not-applied"
		if k.RefsAfterConflicts {
			it.InvalidPolicyReferences = "after-conflicts"
		}
	}
	if k.MissingTargetsUnlisted {
		it.MissingTargets = policy.MissingTargetsProblem
	}
	if k.ProgrammedWhenAccepted {
		it.Programmed = policy.ProgrammedWhenAccepted
	}
	if k.FilterAttachment {
		it.FilterAttachment = filterAttachment(k)
	}
	it.ConflictFields = k.ConflictFields
	it.NotInListenerSets = k.NotInListenerSets
	it.InheritedFields = k.InheritedFields
	it.LevelInheritedFields = k.LevelInheritedFields
	it.CACertificateRefs = k.CARefs.String()
	it.BackendRefs = backendRefPaths(k)
	if k.BackendRefAncestorGateways {
		it.BackendRefAncestors = "gateways"
	}
	if k.InvalidOnUnresolvedBackendRefs {
		it.UnresolvedBackendRefs = "invalid"
		it.BackendRefRules = k.BackendRefRules.String()
	}
	if k.ClusterIPRouting != "" {
		it.ClusterIPRouting = string(k.ClusterIPRouting)
	}
	for _, r := range k.ObjectRefs {
		it.ObjectRefs = append(it.ObjectRefs, r.String())
	}
	for _, u := range k.UnsupportedFields {
		it.UnsupportedFields = append(it.UnsupportedFields, u.String())
	}
	it.FailureStatus = k.FailureStatus
	it.RouteReplacement = k.RouteReplacement
	for _, f := range k.FailOpen {
		it.FailOpen = append(it.FailOpen, f.String())
	}
	for _, a := range k.Allowlists {
		it.DataPlaneAllowlists = append(it.DataPlaneAllowlists, a.String())
	}
	for _, r := range k.Requirements {
		it.Requires = append(it.Requires, r.String())
	}
	for _, r := range k.RegexFields {
		it.RegexFields = append(it.RegexFields, r.String())
	}
	for _, o := range k.Oneofs {
		it.Oneofs = append(it.Oneofs, o.String())
	}
	it.Validations = slices.Clone(k.Validations)
	for _, r := range k.ValueRanges {
		it.ValueRanges = append(it.ValueRanges, r.String())
	}
	for _, g := range k.FeatureGates {
		it.FeatureGates = append(it.FeatureGates, g.String())
	}
	if len(it.EffectiveSectionKinds) == 0 {
		it.EffectiveSectionKinds = nil
	}
	for setting, origin := range k.Origins {
		it.Origins[setting] = string(origin)
	}
	return it
}

// policyKindTable builds the table; with -o wide each setting is followed by
// its origin in parentheses, and the hierarchy is shown.
func policyKindTable(kinds []*policy.Kind, wide bool) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Kind", Type: "string", Format: "name"},
		{Name: "Class", Type: "string"},
		{Name: "Target-Kinds", Type: "string"},
		{Name: "Effective-Target-Kinds", Type: "string"},
		{Name: "Hierarchy", Type: "string", Priority: 1},
		{Name: "Strategies", Type: "string"},
		{Name: "Semantics", Type: "string", Priority: 1},
	}}
	for _, k := range kinds {
		// origin suffixes a cell with where its setting came from (wide only).
		origin := func(setting, cell string) string {
			if !wide {
				return cell
			}
			o, ok := k.Origins[setting]
			if !ok {
				return cell
			}
			return fmt.Sprintf("%s (%s)", cell, o)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{
			k.GroupKind.String(),
			origin("class", string(k.Class)),
			origin("targetKinds", shortKinds(k.TargetKinds)),
			origin(effectiveOriginSetting(k), effectiveKinds(k)),
			origin("hierarchy", shortKinds(k.Hierarchy)),
			origin("strategies", strings.Join(strategyNames(k.Strategies), ",")),
			semantics(k, origin),
		}})
	}
	return t
}

// backendRefPaths lists a kind's backendRefs paths as strings.
func backendRefPaths(k *policy.Kind) []string {
	var out []string
	for _, p := range k.BackendRefs {
		out = append(out, string(p))
	}
	return out
}

// filterAttachment renders a kind's filter attachment in its annotation's
// form ("extension-ref", "extension-ref missing=500").
func filterAttachment(k *policy.Kind) string {
	if k.MissingFilterStatus != 0 {
		return fmt.Sprintf("extension-ref missing=%d", k.MissingFilterStatus)
	}
	return "extension-ref"
}
