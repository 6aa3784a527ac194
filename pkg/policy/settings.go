package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/attache-dev/attache/pkg/topology"
)

// SameLevel says how policies of one kind attached at the same level (the
// same target) resolve against each other.
type SameLevel string

// Same-level resolutions.
const (
	// SameLevelGEP is GEP-713's rule, the default: the strategies decide
	// (defaults: the newer wins; overrides: the older wins; decision 4).
	SameLevelGEP SameLevel = "gep"
	// SameLevelOldestWins: the oldest policy (then first by
	// namespace/name) wins whole at its level; the others are rejected
	// there (Conflicted when rejected everywhere). Envoy Gateway,
	// BackendTLSPolicy.
	SameLevelOldestWins SameLevel = "oldest-wins"
	// SameLevelMergeDisjoint: policies at one level that set disjoint
	// fields merge; of two that set the same field, the newer is rejected
	// there. NGINX Gateway Fabric.
	SameLevelMergeDisjoint SameLevel = "merge-disjoint"
	// SameLevelOldestFirst: policies at one level merge field by field,
	// the oldest that sets a field keeping it (a field being an entry of
	// the kind's named rules, or a top-level field with named rule "."
	// for a shallow merge); the newer lose what they overlap and none is
	// rejected. Gloo Gateway's RouteOption and VirtualHostOption.
	SameLevelOldestFirst SameLevel = "oldest-first"
)

// Composition says whether the policies reaching a target replace one
// another or all apply.
type Composition string

// Compositions.
const (
	// CompositionMerge is GEP-713's: policies combine by merge strategy.
	CompositionMerge Composition = "merge"
	// CompositionAdditive: every policy reaching a target applies and none
	// replaces another (Istio's authorization, authentication, telemetry);
	// the effective spec holds each policy's spec under its
	// "namespace/name", most general first in the sources.
	CompositionAdditive Composition = "additive"
	// CompositionIstioTelemetry: Istio's Telemetry, as istiod merges it
	// for a Gateway's proxy (package istiotelemetry). The root
	// namespace's Telemetry without selector or targetRefs, then the
	// Gateway namespace's, then every Telemetry of that namespace
	// selecting the Gateway's pods or targeting it, oldest first; later
	// ones override earlier ones per section and provider. Of several
	// Telemetries without selector or targetRefs in one namespace, istiod
	// uses the oldest: the others are Conflicted. A selecting Telemetry
	// in the root namespace applies there only. The effective spec is in
	// istiotelemetry's resolved shape. With WaypointTargets, the kind is
	// also layered at waypoints as istiod layers it there: per Service
	// chain and for the waypoint's own listeners, on the server side.
	CompositionIstioTelemetry Composition = "istio-telemetry"
)

// AncestorMode says which object a policy's status.ancestors entries name.
type AncestorMode string

// Ancestor modes.
const (
	// AncestorTarget names each declared target (GEP-713, the default).
	AncestorTarget AncestorMode = "target"
	// AncestorGateway names each Gateway through which the policy takes
	// effect (GEP-713 "Using upstream PolicyAncestorStatus"; GEP-1897 for
	// BackendTLSPolicy).
	AncestorGateway AncestorMode = "gateway"
	// AncestorGatewayObject is AncestorGateway naming each Gateway as an
	// object, without the sectionName of a route's parentRef (NGINX
	// Gateway Fabric's UpstreamSettingsPolicy).
	AncestorGatewayObject AncestorMode = "gateway-object"
	// AncestorGatewayParentRefs is AncestorGateway keeping a sectionName
	// only where a route's parentRef writes one: a policy on a listener
	// names its Gateway (or ListenerSet) as an object (kgateway).
	AncestorGatewayParentRefs AncestorMode = "gateway-parentrefs"
	// AncestorListenerParents is AncestorGatewayObject naming, for a
	// Gateway target, each ListenerSet (XListenerSet) of the kind's
	// hierarchy that the Gateway admits and that has listeners as well:
	// the parent object of every listener the policy reaches (kgateway's
	// ListenerPolicy reports each listener's PolicyAncestorRef).
	AncestorListenerParents AncestorMode = "listener-parents"
)

// Objects reports whether the mode names Gateways (and ListenerSets) as
// objects, without a sectionName.
func (m AncestorMode) Objects() bool {
	return m == AncestorGatewayObject || m == AncestorListenerParents
}

// Gateways reports whether the mode names Gateways rather than targets.
func (m AncestorMode) Gateways() bool {
	return m == AncestorGateway || m == AncestorGatewayObject || m == AncestorGatewayParentRefs || m == AncestorListenerParents
}

// AncestorLimitMode says what becomes of a policy's ancestors beyond the
// MaxAncestors entries status.ancestors may hold.
type AncestorLimitMode string

// Ancestor limit modes.
const (
	// AncestorLimitReport applies the policy at every ancestor and lists
	// at most MaxAncestors of them (the default; attache's own choice,
	// since Gateway API leaves it open).
	AncestorLimitReport AncestorLimitMode = "report"
	// AncestorLimitSkip applies the policy only at the ancestors that fit
	// in the list, in the order its implementation adds them; the others
	// are neither applied nor listed (NGINX Gateway Fabric's
	// AncestorLimitReached).
	AncestorLimitSkip AncestorLimitMode = "skip"
)

// MaxAncestors is the most entries a policy's status.ancestors may hold
// (Gateway API's PolicyStatus: maxItems 16).
const MaxAncestors = 16

// Merge types a MergeTypeField may hold (Envoy Gateway's values).
const (
	// MergeTypeJSON merges the policy with the nearest policy above it as
	// RFC 7386 JSON merge patch.
	MergeTypeJSON = "JSONMerge"
	// MergeTypeStrategic merges it schema-aware: lists with
	// x-kubernetes-list-type map merge item by item on their keys.
	MergeTypeStrategic = "StrategicMerge"
)

// Annotations of the settings beyond GEP-713's descriptor.
const (
	// AnnotationEffectiveSectionKinds lists kinds whose sections (listeners,
	// rules, ports), rather than the objects, are effective targets.
	AnnotationEffectiveSectionKinds = "attache.dev/effective-section-kinds"
	// AnnotationSameLevel is the same-level resolution: gep, oldest-wins
	// or merge-disjoint.
	AnnotationSameLevel = "attache.dev/same-level"
	// AnnotationSameLevelTies, with same-level oldest-wins, says what
	// becomes of policies created in the same second as the oldest at a
	// target: "name" (default: the later by namespace/name is rejected)
	// or "none" (none is rejected; which applies is not determined).
	AnnotationSameLevelTies = "attache.dev/same-level-ties"
	// AnnotationMergeTypeField names the spec field whose value
	// (JSONMerge, StrategicMerge) makes a policy merge with the one above.
	AnnotationMergeTypeField = "attache.dev/merge-type-field"
	// AnnotationComposition is merge or additive.
	AnnotationComposition = "attache.dev/composition"
	// AnnotationNamedRules lists the spec paths (dotted) of named-rule maps,
	// whose entries merge whole.
	AnnotationNamedRules = "attache.dev/named-rules"
	// AnnotationOneofs lists (separated by ";") the kind's oneofs, each a
	// dotted spec path to an object, a dot, and the members separated by
	// "|" ("options.hostRewrite|autoHostRewrite"), or "none" (default).
	AnnotationOneofs = "attache.dev/oneofs"
	// AnnotationDirectSections says ("true"/"false") whether a Direct
	// policy on a whole object also covers its sections; then, separated
	// by ";", "controller=<controllerName> unranked" clauses
	// (ParseDirectSections, Kind.SectionsUnrankedBy).
	AnnotationDirectSections = "attache.dev/direct-sections"
	// AnnotationAncestor is target or gateway.
	AnnotationAncestor = "attache.dev/ancestor"
	// AnnotationAncestorLimit is report or skip: see AncestorLimitMode.
	AnnotationAncestorLimit = "attache.dev/ancestor-limit"
	// AnnotationSchemaMerge says ("true"/"false") whether the kind's patch
	// merges read list types from the CRD's schema (GEP-2649 listMapType).
	AnnotationSchemaMerge = "attache.dev/schema-merge"
	// AnnotationMaxTargetRefs is the most targetRefs (and, separately,
	// targetSelectors) a policy may have: a number, or "none" for no limit.
	// Default GEP-713's 16.
	AnnotationMaxTargetRefs = "attache.dev/max-target-refs"
	// AnnotationStanzas says ("true"/"false") whether a policy's spec may
	// hold GEP-713's defaults/overrides stanzas and strategy field; false:
	// fields of those names are the kind's own (kgateway ListenerPolicy's
	// `default`).
	AnnotationStanzas = "attache.dev/stanzas"
	// AnnotationSectionNames says ("true"/"false"/"ignored") whether the
	// kind's targetRefs have a sectionName; false: its CRD's schema has
	// none, so the API server drops one written there, and a reference
	// names the whole object (Istio's kinds); ignored: the schema keeps
	// it, but the implementation does not read it, so a reference names
	// the whole object too (Kuadrant's extension kinds). Default true.
	AnnotationSectionNames = "attache.dev/section-names"
	// AnnotationEmptyTargetGroup says what a targetRef without group
	// names: "resolve" (default: the one known kind of that name) or
	// "core" (the core group, as Istio reads it).
	AnnotationEmptyTargetGroup = "attache.dev/empty-target-group"
	// AnnotationTargetingFields lists top-level spec fields that select
	// targets in the kind's own way (e.g. a workload selector) and are
	// therefore no part of the spec proper.
	AnnotationTargetingFields = "attache.dev/targeting-fields"
	// AnnotationUntargetedScope says what a policy without targetRefs
	// applies to: "none" (it is Invalid, GEP-713's default) or "istio"
	// (as istiod: the Istio Gateways of its namespace, of every namespace
	// from the root namespace, narrowed by the workload selector), with
	// the root namespace after a colon ("istio:istio-config"; default
	// istio-system).
	AnnotationUntargetedScope = "attache.dev/untargeted-scope"
	// AnnotationSharedPortListeners ("reject", or "allow", the default)
	// says whether a policy on a plain-HTTP listener that shares its port
	// with other plain-HTTP listeners of its Gateway is Invalid there, as
	// Envoy Gateway rejects a ClientTrafficPolicy that one Envoy listener
	// would carry to listeners it does not target.
	AnnotationSharedPortListeners = "attache.dev/shared-port-listeners"
	// AnnotationPortSelection is "none" or "<list>[].<value> key=<field>
	// default=<field>": at a listener, the configuration of the list item
	// whose key is the listener's port replaces the default one
	// (PortSelection): "perPort[].listener key=port default=default".
	AnnotationPortSelection = "attache.dev/port-selection"
	// AnnotationDataPlaneTarget ("true"/"false", default false) says
	// whether a policy of the kind targets one data plane by name: a
	// Gateway, or a GatewayClass whose Gateways are merged into one data
	// plane (Envoy Gateway's EnvoyPatchPolicy with mergeGateways).
	AnnotationDataPlaneTarget = "attache.dev/data-plane-target"
	// AnnotationOverriddenBy ("fields", the default, or "presence") says
	// when a policy counts as overridden: where other policies beat the
	// fields it sets (GEP-713), or wherever a more specific policy replaces
	// it, whatever either sets, its own attachment on a more specific
	// target included (Envoy Gateway).
	AnnotationOverriddenBy = "attache.dev/overridden-by"
	// AnnotationReach ("any", the default, or "gateway") says which paths
	// reach the kind's effective targets: every path, or only those from
	// a Gateway (a policy reaching none is then not programmed: Kuadrant).
	AnnotationReach = "attache.dev/reach"
	// AnnotationSummary ("attache", the default, or "istio-waypoint")
	// says what a policy's summary Accepted condition says: attache's
	// summary of its targets, or istiod's WaypointAccepted condition,
	// flattened over its targetRefs (Kind.SummaryIstioWaypoint).
	AnnotationSummary = "attache.dev/summary"
	// AnnotationRouteParents ("admitted", the default, or "parent-refs")
	// says below which listeners a route's paths run: those that admit it
	// by Gateway API's rules, or every listener its parentRefs name
	// (Kuadrant's policy-machinery).
	AnnotationRouteParents = "attache.dev/route-parents"
	// AnnotationPathReadiness ("ignored", the default, or "status") says
	// whether the kind's paths run only through listeners and routes
	// their status says are ready (Programmed, Accepted): Kuadrant.
	AnnotationPathReadiness = "attache.dev/path-readiness"
	// AnnotationPartlyOverridden ("programmed", the default, or
	// "not-programmed") says what a policy that loses some of what it sets
	// but not all is: PartiallyProgrammed, or Programmed=False (Kuadrant's
	// TokenRateLimitPolicy).
	AnnotationPartlyOverridden = "attache.dev/partly-overridden"
	// AnnotationWeightAnnotation names an annotation of the kind's policy
	// objects holding an integer weight: at one level, a higher weight
	// counts as established before a lower one, whatever their ages
	// (kgateway's kgateway.dev/policy-weight).
	AnnotationWeightAnnotation = "attache.dev/weight-annotation"
	// AnnotationWaypointTargets ("none", the default, or "istio") says
	// whether a Service target takes effect only through the waypoint the
	// Service is bound to (Istio ambient's istio.io/use-waypoint).
	AnnotationWaypointTargets = "attache.dev/waypoint-targets"
	// AnnotationControllers lists (comma separated) the controllerName
	// values of the GatewayClasses whose Gateways the kind's
	// implementation serves, or "any" (default):
	// "gateway.envoyproxy.io/gatewayclass-controller".
	AnnotationControllers = "attache.dev/controllers"
	// AnnotationOtherControllers ("target-not-found", the default,
	// "not-programmed" or "unlisted") says what a policy on another
	// controller's Gateway is: TargetNotFound (Envoy Gateway, NGINX
	// Gateway Fabric), accepted but not programmed while it is in a path
	// through one (Kuadrant: waiting for the Gateway to sync), or listed
	// nowhere in its status, an input problem naming the target (kgateway
	// writes status only for what its own Gateways translate).
	AnnotationOtherControllers = "attache.dev/other-controllers"
	// AnnotationGatewaySections ("own", the default, or "by-name") says
	// what a policy on a Gateway's listener reaches: that listener, or
	// also the listener of that name of each ListenerSet the Gateway
	// admits (Gloo Gateway): see Kind.GatewaySectionsByName.
	AnnotationGatewaySections = "attache.dev/gateway-sections"
	// AnnotationDependencies lists what the kind's implementation needs
	// installed before it accepts a policy, told by the kinds the cluster
	// serves: "<name>=<Kind.group/version>,...|<Kind.group/version>,...;
	// ...", or "none" (default).
	AnnotationDependencies = "attache.dev/dependencies"
	// AnnotationRequiredObjects lists the objects the kind's
	// implementation needs on the cluster before it enforces a policy:
	// "<name>=<Kind.group>; ...", or "none" (default). See
	// Kind.RequiredObjects.
	AnnotationRequiredObjects = "attache.dev/required-objects"
	// AnnotationEffectiveListeners lists (comma separated) conditions a
	// listener must meet to be an effective target of the kind
	// ("hostname", "tls-terminate", "attached-routes", "addresses"), or "any"
	// (default).
	AnnotationEffectiveListeners = "attache.dev/effective-listeners"
	// AnnotationDelegationPriority ("none", the default,
	// "<annotation> parent=<values> [child=<values>]" or "<annotation>
	// child-fields=<path> [groups=...]") says whose policies win across
	// route delegation: the child route's, unless the delegating route's
	// annotation has one of the parent values (kgateway's
	// "kgateway.dev/inherited-policy-priority
	// parent=ShallowMergePreferParent child=..."); or the parent's, but in
	// the entries of <path> the annotation lists (Gloo Gateway's
	// "delegation.gateway.solo.io/enable-policy-overrides
	// child-fields=options ...").
	AnnotationDelegationPriority = "attache.dev/delegation-priority"
	// AnnotationConflictScope ("target", the default, or "policy") says
	// where a policy the same-level rule rejects is rejected: at that
	// target only, or at all its targets (NGINX Gateway Fabric).
	AnnotationConflictScope = "attache.dev/conflict-scope"
	// AnnotationRouteOverlap ("reject", or "allow", the default) says
	// whether a policy targeting a route is rejected (TargetConflict) when
	// a route it does not target shares a Gateway, hostname, port and path
	// with one it targets (NGINX Gateway Fabric).
	AnnotationRouteOverlap = "attache.dev/route-overlap"
	// AnnotationInvalidPolicies ("in-place", the default, or
	// "not-applied") says what becomes of a policy its implementation
	// cannot translate at a target: Invalid in place, keeping its place
	// (Envoy Gateway fails its routes), or Invalid and not applied there
	// (NGINX Gateway Fabric leaves it out); "not-applied
	// references=after-conflicts" leaves it in conflicts when only its
	// references break it (Kind.RefsAfterConflicts).
	AnnotationInvalidPolicies = "attache.dev/invalid-policies"
	// AnnotationMissingTargets ("entry", the default, or "problem") says
	// whether a declared target that does not resolve gets a status
	// ancestor entry (TargetNotFound) or only an input problem (NGINX
	// Gateway Fabric writes no entry for it): see
	// Kind.MissingTargetsUnlisted.
	AnnotationMissingTargets = "attache.dev/missing-targets"
	// AnnotationProgrammed ("gep", the default, or "when-accepted") says
	// what the Programmed condition reports: what the policy contributes
	// (GEP-713) or whether it is accepted there (NGINX Gateway Fabric):
	// see Kind.ProgrammedWhenAccepted.
	AnnotationProgrammed = "attache.dev/programmed"
	// AnnotationFilterAttachment ("extension-ref", or "none", the default)
	// says whether a route rule's ExtensionRef filter naming a policy of
	// the kind attaches it to that rule (Gloo Gateway, kgateway);
	// "extension-ref missing=<status>" also says that a rule whose filter
	// names a policy that does not exist is replaced by a direct response
	// of that status (kgateway: 500).
	AnnotationFilterAttachment = "attache.dev/filter-attachment"
	// AnnotationConflictFields lists the dotted spec paths (comma
	// separated) that two policies at one level conflict on under the
	// merge-disjoint rule; other fields do not conflict (NGINX Gateway
	// Fabric). Absent: every field.
	AnnotationConflictFields = "attache.dev/conflict-fields"
	// AnnotationNotInListenerSets lists the dotted spec paths (comma
	// separated) that the policies above a ListenerSet do not give its
	// listeners (kgateway's ListenerPolicy:
	// "default.clientCertificateValidation"): see Kind.NotInListenerSets.
	AnnotationNotInListenerSets = "attache.dev/not-in-listener-sets"
	// AnnotationInheritedFields lists the dotted spec paths (comma
	// separated) of an additive kind that a context has one value of: the
	// most specific policy setting one (not false, 0 or "") gives it
	// (NGINX Gateway Fabric's RateLimitPolicy: "rateLimit.dryRun,
	// rateLimit.logLevel, rateLimit.rejectCode"). Absent: none.
	AnnotationInheritedFields = "attache.dev/inherited-fields"
	// AnnotationLevelInheritedFields lists the dotted spec paths (comma
	// separated) of an additive kind that a context takes from the most
	// specific level setting them (not false, 0, "", empty): every policy
	// of that level keeps its value, side by side, and the less specific
	// levels' values do not apply there (NGINX Gateway Fabric's
	// RateLimitPolicy: "rateLimit.local.rules", written as limit_req
	// directives, which a location inherits from its server only when it
	// has none of its own). Absent: none.
	AnnotationLevelInheritedFields = "attache.dev/level-inherited-fields"
	// AnnotationCACertificateRefs names the spec field listing the objects
	// that hold the CA certificates a policy trusts, optionally followed by
	// kinds=<ConfigMap,Secret> and keys=<ca.crt,...,*> (see CARefs), or
	// "none": "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt"
	// (Gateway API's BackendTLSPolicy).
	AnnotationCACertificateRefs = "attache.dev/ca-certificate-refs"
	// AnnotationBackendRefs lists (comma separated) the paths below spec
	// where a policy names backends it sends traffic to itself, segments
	// ending in "[]" for lists (see BackendRefPath), or "none":
	// "extAuth.http.backendRefs[], oidc.provider.backendRefs[]"; a last
	// "; ancestors=gateways" names Gateways, not the policy, as the
	// ancestors it gives (Kind.BackendRefAncestorGateways).
	AnnotationBackendRefs = "attache.dev/backend-refs"
	// AnnotationUnresolvedBackendRefs is "invalid" when a policy naming, at
	// its kind's backend-refs paths, a Service that does not resolve is
	// Invalid (Envoy Gateway), or "ignore" (default); "invalid" may be
	// followed by the words of BackendRefRules.
	AnnotationUnresolvedBackendRefs = "attache.dev/unresolved-backend-refs"
	// AnnotationClusterIPRouting is "<parameters path>=<value>": a Gateway
	// whose data-plane parameters hold it sends a policy's external
	// services to a Service's cluster IP, not its endpoints (Envoy
	// Gateway: "routingType=Service"), or "none" (default).
	AnnotationClusterIPRouting = "attache.dev/cluster-ip-routing"
	// AnnotationObjectRefs lists (separated by ";") the paths below spec
	// where a policy names ConfigMaps or Secrets whose data it uses, each
	// optionally followed by kinds=<ConfigMap,Secret> and keys=<key,...>
	// (see ObjectRefPath), or "none": "oidc.clientSecret kinds=Secret
	// keys=client-secret; lua[].valueRef kinds=ConfigMap keys=lua,+".
	AnnotationObjectRefs = "attache.dev/object-refs"
	// AnnotationUnsupportedFields lists (separated by ";") the spec fields
	// a policy may not set at targets of one kind, each entry
	// "<target kind>=<path>,<path>..." (see UnsupportedFields), or "none":
	// "TCPRoute=cors,jwt,authorization.rules[].cel".
	AnnotationUnsupportedFields = "attache.dev/unsupported-fields"
	// AnnotationFailureStatus is the HTTP status with which the
	// implementation answers a route's requests when the policy of this
	// kind applying there is Invalid in place (Envoy Gateway: 500), or
	// "none" (default: the request goes on without it).
	AnnotationFailureStatus = "attache.dev/failure-status"
	// AnnotationRouteReplacement is the HTTP status of the direct
	// response with which the implementation replaces the route rules (or,
	// at a Gateway, ListenerSet or listener, the requests of its
	// listeners) that a policy of the kind with errors reaches (kgateway:
	// 500), or "none" (default).
	AnnotationRouteReplacement = "attache.dev/route-replacement"
	// AnnotationFailOpen lists (separated by ";") the parts of a policy
	// its implementation leaves out, rather than failing the route, when
	// a reference under them does not resolve and their flag is true:
	// "<path>=<boolean field>", or "none": "extProc[]=failOpen".
	AnnotationFailOpen = "attache.dev/fail-open"
	// AnnotationAllowlists binds (entries separated by ";") values of a
	// kind's policies to those the parameters of the target's data plane
	// hold: "<path>=<parameters path>", or "none":
	// "dynamicModule[].name=dynamicModules[].name".
	AnnotationAllowlists = "attache.dev/data-plane-allowlists"
	// AnnotationRequirements lists (separated by ";") what a kind's
	// policies need when they hold a value at a path: "<path> requires
	// <where>:<path>|<path>..." or "<path> excludes <where>:<path>|...",
	// where being "parameters" (the data plane's) or a policy kind as
	// Kind.group (its effective policy at the listeners), or "none".
	AnnotationRequirements = "attache.dev/requires"
	// AnnotationValueRanges bounds (entries separated by ";") fields
	// holding quantities that the implementation checks when it
	// translates a policy: "<path>=<min>..<max>", or "none":
	// "connection.bufferLimit=0..4294967295".
	AnnotationValueRanges = "attache.dev/value-ranges"
	// AnnotationRegexFields lists (separated by ";") the fields holding
	// regular expressions that the implementation compiles when it
	// translates a policy: "<path>[ when=<field>=<value>]", or "none":
	// "authorization.rules[].operation.path.value when=type=RegularExpression".
	AnnotationRegexFields = "attache.dev/regex-fields"
	// AnnotationValidations lists, as YAML or JSON, CEL rules on the
	// content of the kind's policies shaped as a CRD's
	// x-kubernetes-validations, for checks the implementation makes when
	// it translates a policy: "[{rule: <CEL>, message: <text>,
	// fieldPath: <.path>, listenerProtocols: [<protocol>...]}]", or
	// "none"; self is the policy's spec (see Validation).
	AnnotationValidations = "attache.dev/validations"
	// AnnotationFeatureGates lists (separated by ";") the switches of the
	// implementation's configuration that the kind or fields of its
	// policies need: "<feature>=<path>,<path>..." or "<feature>=*" (the
	// whole kind), or "none": "EnvoyGateway.extensionApis.enableLua=lua".
	AnnotationFeatureGates = "attache.dev/feature-gates"
)

// Setting names, the keys of Kind.Origins.
const (
	SettingClass                 = "class"
	SettingTargetKinds           = "targetKinds"
	SettingEffectiveTargetKinds  = "effectiveTargetKinds"
	SettingEffectiveSectionKinds = "effectiveSectionKinds"
	SettingHierarchy             = "hierarchy"
	SettingStrategies            = "strategies"
	SettingSameLevel             = "sameLevel"
	SettingSameLevelTies         = "sameLevelTies"
	SettingMergeTypeField        = "mergeTypeField"
	SettingComposition           = "composition"
	SettingNamedRules            = "namedRules"
	SettingOneofs                = "oneofs"
	SettingDirectSections        = "directSections"
	SettingAncestor              = "ancestor"
	SettingAncestorLimit         = "ancestorLimit"
	SettingTargetingFields       = "targetingFields"
	SettingSchemaMerge           = "schemaMerge"
	SettingMaxTargetRefs         = "maxTargetRefs"
	SettingStanzas               = "stanzas"
	SettingSectionNames          = "sectionNames"
	SettingEmptyTargetGroup      = "emptyTargetGroup"
	SettingPortSelection         = "portSelection"
	SettingUntargetedScope       = "untargetedScope"
	SettingSharedPortListeners   = "sharedPortListeners"
	SettingDataPlaneTarget       = "dataPlaneTarget"
	SettingOverriddenBy          = "overriddenBy"
	SettingReach                 = "reach"
	SettingSummary               = "summary"
	SettingRouteParents          = "routeParents"
	SettingPathReadiness         = "pathReadiness"
	SettingPartlyOverridden      = "partlyOverridden"
	SettingWeightAnnotation      = "weightAnnotation"
	SettingDelegationPriority    = "delegationPriority"
	SettingWaypointTargets       = "waypointTargets"
	SettingControllers           = "controllers"
	SettingOtherControllers      = "otherControllers"
	SettingGatewaySections       = "gatewaySections"
	SettingDependencies          = "dependencies"
	SettingRequiredObjects       = "requiredObjects"
	SettingEffectiveListeners    = "effectiveListeners"
	SettingConflictScope         = "conflictScope"
	SettingRouteOverlap          = "routeOverlap"
	SettingInvalidPolicies       = "invalidPolicies"
	SettingMissingTargets        = "missingTargets"
	SettingProgrammed            = "programmed"
	SettingFilterAttachment      = "filterAttachment"
	SettingConflictFields        = "conflictFields"
	SettingNotInListenerSets     = "notInListenerSets"
	SettingInheritedFields       = "inheritedFields"
	SettingLevelInheritedFields  = "levelInheritedFields"
	SettingCACertificateRefs     = "caCertificateRefs"
	SettingBackendRefs           = "backendRefs"
	SettingUnresolvedBackendRefs = "unresolvedBackendRefs"
	SettingClusterIPRouting      = "clusterIPRouting"
	SettingObjectRefs            = "objectRefs"
	SettingUnsupportedFields     = "unsupportedFields"
	SettingFailureStatus         = "failureStatus"
	SettingRouteReplacement      = "routeReplacement"
	SettingFailOpen              = "failOpen"
	SettingAllowlists            = "dataPlaneAllowlists"
	SettingRequirements          = "requires"
	SettingValueRanges           = "valueRanges"
	SettingRegexFields           = "regexFields"
	SettingValidations           = "validations"
	SettingFeatureGates          = "featureGates"
)

// parseConflictScope reads "policy" (true) or "target" (false).
func parseConflictScope(v string) (bool, error) {
	return parseChoice(v, "policy", "target", "conflict scope")
}

// parseOverriddenBy reads "presence" (true) or "fields" (false).
func parseOverriddenBy(v string) (bool, error) {
	return parseChoice(v, "presence", "fields", "overridden-by rule")
}

// parseSharedPort reads "reject" (true) or "allow" (false).
func parseSharedPort(v string) (bool, error) {
	return parseChoice(v, "reject", "allow", "shared-port rule")
}

// The values of AnnotationMissingTargets and AnnotationProgrammed.
const (
	// MissingTargetsEntry: a target that does not resolve gets a
	// TargetNotFound ancestor entry (the default).
	MissingTargetsEntry = "entry"
	// MissingTargetsProblem: it gets no entry, an input problem instead
	// (Kind.MissingTargetsUnlisted).
	MissingTargetsProblem = "problem"
	// ProgrammedGEP: Programmed says what the policy contributes
	// (GEP-713; the default).
	ProgrammedGEP = "gep"
	// ProgrammedWhenAccepted: Programmed says whether the policy is
	// accepted (Kind.ProgrammedWhenAccepted).
	ProgrammedWhenAccepted = "when-accepted"
)

// The values of AnnotationGatewaySections.
const (
	GatewaySectionsOwn    = "own"
	GatewaySectionsByName = "by-name"
)

// The values of AnnotationOtherControllers.
const (
	OtherControllersTargetNotFound = "target-not-found"
	OtherControllersNotProgrammed  = "not-programmed"
	OtherControllersUnlisted       = "unlisted"
)

// ParseOtherControllers reads AnnotationOtherControllers: whether a
// policy on another controller's Gateway is accepted and not programmed
// (Kind.OtherControllersNotProgrammed), or unlisted
// (Kind.OtherControllersUnlisted); neither for "target-not-found".
func ParseOtherControllers(v string) (notProgrammed, unlisted bool, err error) {
	switch strings.TrimSpace(v) {
	case OtherControllersTargetNotFound:
		return false, false, nil
	case OtherControllersNotProgrammed:
		return true, false, nil
	case OtherControllersUnlisted:
		return false, true, nil
	}
	return false, false, fmt.Errorf("unknown other controllers rule %q (known: %s, %s, %s)", v,
		OtherControllersNotProgrammed, OtherControllersTargetNotFound, OtherControllersUnlisted)
}

// parseChoice reads a setting of two words: yes (true) or no (false); what
// names the setting in the error.
func parseChoice(v, yes, no, what string) (bool, error) {
	switch strings.TrimSpace(v) {
	case yes:
		return true, nil
	case no:
		return false, nil
	}
	known := []string{yes, no}
	slices.Sort(known)
	return false, fmt.Errorf("unknown %s %q (known: %s)", what, v, strings.Join(known, ", "))
}

// UntargetedScope says what a policy without targetRefs or
// targetSelectors applies to. The zero value: nothing (it is Invalid).
type UntargetedScope struct {
	// Mode is UntargetedNone or UntargetedIstio.
	Mode string
	// RootNamespace, for UntargetedIstio: a policy there applies in every
	// namespace (Istio's meshConfig.rootNamespace).
	RootNamespace string
}

// Untargeted scope modes.
const (
	// UntargetedNone: a policy must name its targets (GEP-713).
	UntargetedNone = ""
	// UntargetedIstio: as istiod treats a policy without targetRefs on a
	// Gateway API Gateway it deploys (istio/istio
	// pilot/pkg/model/policyattachment.go, ShouldAttachPolicy): it applies
	// to the Istio Gateways (not waypoints) of its namespace, or of every
	// namespace from the root namespace, whose workload labels its
	// selector matches (none: all of them).
	UntargetedIstio = "istio"
	// DefaultIstioRootNamespace is Istio's default root namespace.
	DefaultIstioRootNamespace = "istio-system"
)

// String renders the scope as its annotation writes it.
func (u UntargetedScope) String() string {
	switch {
	case u.Mode == UntargetedNone:
		return "none"
	case u.RootNamespace != "" && u.RootNamespace != DefaultIstioRootNamespace:
		return u.Mode + ":" + u.RootNamespace
	}
	return u.Mode
}

// Root is the root namespace of an Istio scope (its default if unset).
func (u UntargetedScope) Root() string {
	if u.RootNamespace == "" {
		return DefaultIstioRootNamespace
	}
	return u.RootNamespace
}

// ParseUntargetedScope reads "none", "istio" or "istio:<root namespace>".
func ParseUntargetedScope(s string) (UntargetedScope, error) {
	mode, root, hasRoot := strings.Cut(strings.TrimSpace(s), ":")
	switch mode {
	case "none", "":
		if hasRoot {
			return UntargetedScope{}, fmt.Errorf("untargeted scope %q: only istio takes a root namespace", s)
		}
		return UntargetedScope{}, nil
	case UntargetedIstio:
		if hasRoot && len(validation.IsDNS1123Label(root)) > 0 {
			return UntargetedScope{}, fmt.Errorf("untargeted scope %q: %q is not a namespace name", s, root)
		}
		return UntargetedScope{Mode: UntargetedIstio, RootNamespace: root}, nil
	}
	return UntargetedScope{}, fmt.Errorf("unknown untargeted scope %q (known: none, istio, istio:<root namespace>)", s)
}

// NoTargetRefLimit is the MaxTargetRefs of kinds whose policies may have any
// number of targets (Envoy Gateway's CRDs set no maxItems).
const NoTargetRefLimit = -1

// parseFailureStatus reads an HTTP status (100..599) or "none" (0).
func parseFailureStatus(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "none" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 || n > 599 {
		return 0, fmt.Errorf("%q is neither an HTTP status (100 to 599) nor none", v)
	}
	return n, nil
}

// parseMaxTargetRefs reads "none" or a positive number.
func parseMaxTargetRefs(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "none" {
		return NoTargetRefLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is neither a positive number nor none", v)
	}
	return n, nil
}

// TargetRefLimit is the most targetRefs a policy of the kind may have, or
// 0 for no limit.
func (k *Kind) TargetRefLimit() int {
	switch {
	case k.MaxTargetRefs == 0:
		return MaxTargetRefs
	case k.MaxTargetRefs < 0:
		return 0
	}
	return k.MaxTargetRefs
}

// Profile is a built-in descriptor of a policy kind an implementation ships
// (package profiles holds them). Its settings apply when the kind's CRD is
// present; the CRD's label and attache.dev/* annotations replace them
// setting by setting.
type Profile struct {
	// Implementation names the project, e.g. "Envoy Gateway"; it is the
	// origin shown for the settings the profile gave.
	Implementation string
	// Spec holds the settings; zero fields are left to the CRD and the
	// defaults. Spec.GroupKind names the kind the profile describes.
	Spec Spec
	// ShippedLabel is the gateway.networking.k8s.io/policy label value
	// the implementation's own CRD carries ("" when none). A label with
	// that value is the implementation's, not the user's choice, and does
	// not replace the profile's class (kgateway labels its inherited
	// TrafficPolicy "Direct").
	ShippedLabel string
}

// FromProfile returns the origin of a setting given by a profile of impl.
func FromProfile(impl string) Origin { return Origin("profile: " + impl) }

// isProfile reports whether a profile gave the setting.
func (o Origin) isProfile() bool { return strings.HasPrefix(string(o), "profile: ") }

// ParseSameLevel validates a same-level resolution name.
func ParseSameLevel(s string) (SameLevel, error) {
	switch v := SameLevel(strings.TrimSpace(s)); v {
	case SameLevelGEP, SameLevelOldestWins, SameLevelMergeDisjoint, SameLevelOldestFirst:
		return v, nil
	}
	return "", fmt.Errorf("unknown same-level resolution %q (known: gep, oldest-wins, merge-disjoint, oldest-first)", s)
}

// ParseComposition validates a composition name.
func ParseComposition(s string) (Composition, error) {
	switch v := Composition(strings.TrimSpace(s)); v {
	case CompositionMerge, CompositionAdditive, CompositionIstioTelemetry:
		return v, nil
	}
	return "", fmt.Errorf("unknown composition %q (known: merge, additive, istio-telemetry)", s)
}

// ParseAncestorMode validates an ancestor mode name.
func ParseAncestorMode(s string) (AncestorMode, error) {
	switch v := AncestorMode(strings.TrimSpace(s)); v {
	case AncestorTarget, AncestorGateway, AncestorGatewayObject, AncestorGatewayParentRefs, AncestorListenerParents:
		return v, nil
	}
	return "", fmt.Errorf("unknown ancestor mode %q (known: target, gateway, gateway-object, gateway-parentrefs, listener-parents)", s)
}

// ParseAncestorLimitMode validates an ancestor limit mode name.
func ParseAncestorLimitMode(s string) (AncestorLimitMode, error) {
	switch v := AncestorLimitMode(strings.TrimSpace(s)); v {
	case AncestorLimitReport, AncestorLimitSkip:
		return v, nil
	}
	return "", fmt.Errorf("unknown ancestor limit mode %q (known: report, skip)", s)
}

// SectionNoun names the sections of objects of kind gk, for messages:
// listeners, rules, ports, or sections.
func SectionNoun(gk topology.GroupKind) string {
	switch {
	case gk == topology.KindGateway || gk.Kind == "ListenerSet" || gk.Kind == "XListenerSet":
		return "listeners"
	case slices.Contains(topology.RouteKinds, gk):
		return "rules"
	case gk == topology.KindService:
		return "ports"
	}
	return "sections"
}

// IsEffectiveSection reports whether the sections of objects of kind gk are
// this kind's effective targets (instead of the objects).
func (k *Kind) IsEffectiveSection(gk topology.GroupKind) bool {
	return slices.Contains(k.EffectiveSectionKinds, gk)
}

// IsEffectiveNode reports whether a node with this ref is an effective
// target of the kind: an object of an effective target kind, or a section
// of an effective section kind.
func (k *Kind) IsEffectiveNode(r topology.Ref) bool {
	if r.IsSection() {
		return k.IsEffectiveSection(r.GroupKind())
	}
	return k.IsEffectiveTarget(r.GroupKind()) && !k.IsEffectiveSection(r.GroupKind())
}

// IsTargetingField reports whether a top-level spec field selects targets
// (and so is no part of the spec proper).
func (k *Kind) IsTargetingField(f string) bool {
	return (k.MergeTypeField != "" && f == k.MergeTypeField) || slices.Contains(k.TargetingFields, f)
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return false, fmt.Errorf("%q is neither true nor false", s)
	}
	return b, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseFilterAttachment reads attache.dev/filter-attachment: "none",
// "extension-ref" or "extension-ref missing=<status>".
func parseFilterAttachment(v string) (on bool, missing int, err error) {
	f := strings.Fields(v)
	if len(f) == 0 || len(f) > 2 {
		return false, 0, fmt.Errorf("%q: want none, extension-ref or extension-ref missing=<status>", v)
	}
	if on, err = parseChoice(f[0], "extension-ref", "none", "filter attachment"); err != nil || len(f) == 1 {
		return on, 0, err
	}
	s, ok := strings.CutPrefix(f[1], "missing=")
	n, convErr := strconv.Atoi(s)
	if !on || !ok || convErr != nil || n < 100 || n > 599 {
		return false, 0, fmt.Errorf("%q: want extension-ref missing=<HTTP status, 100 to 599>", v)
	}
	return true, n, nil
}
