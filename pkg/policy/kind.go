package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// Class is GEP-713's class of a policy kind.
type Class string

// Policy classes.
const (
	Direct    Class = "Direct"
	Inherited Class = "Inherited"
)

// Label and annotations read from a policy CRD.
const (
	// LabelPolicy marks a CRD as a policy kind (GEP-713 v1.0.0, GEP-2649).
	LabelPolicy = "gateway.networking.k8s.io/policy"
	// AnnotationTargetKinds lists the allowed declared target kinds.
	AnnotationTargetKinds = "attache.dev/target-kinds"
	// AnnotationEffectiveTargetKinds lists the kinds whose effective policies are computed.
	AnnotationEffectiveTargetKinds = "attache.dev/effective-target-kinds"
	// AnnotationHierarchy lists the kind's hierarchy, most general first.
	AnnotationHierarchy = "attache.dev/hierarchy"
	// AnnotationMergeStrategies lists the supported merge strategies.
	AnnotationMergeStrategies = "attache.dev/merge-strategies"
)

// Origin says where a descriptor setting came from.
type Origin string

// Origins of descriptor settings.
const (
	FromLabel      Origin = "label"
	FromAnnotation Origin = "annotation"
	FromDefault    Origin = "default"
	FromGo         Origin = "go"
)

// Kind describes a policy kind: its class and the semantics the engine
// applies to its instances. Build one with NewKind (Go) or KindFromCRD.
type Kind struct {
	// GroupKind of the policy resource itself.
	GroupKind topology.GroupKind
	// Class is Direct or Inherited.
	Class Class
	// TargetKinds are the allowed declared target kinds; a target of another
	// kind is Invalid. Sections of an allowed kind are allowed.
	TargetKinds []topology.GroupKind
	// EffectiveTargetKinds are the kinds whose effective policies are computed.
	EffectiveTargetKinds []topology.GroupKind
	// Hierarchy lists object kinds, most general first; other kinds are
	// contracted out of this kind's paths.
	Hierarchy []topology.GroupKind
	// Strategies are the supported merge strategies, in GEP-713's order.
	Strategies []merge.Strategy
	// Custom is the Custom merge function, required when Strategies holds Custom.
	Custom merge.CustomFunc
	// EffectiveSectionKinds are kinds whose sections (listeners, rules,
	// ports) are the effective targets instead of the objects; each is in
	// EffectiveTargetKinds too.
	EffectiveSectionKinds []topology.GroupKind
	// SameLevel is how policies attached at one level resolve (default
	// SameLevelGEP).
	SameLevel SameLevel
	// TiesNotRejected, with SameLevelOldestWins, keeps policies created in
	// the same second as the oldest at a target: none of them is
	// Conflicted (Kuadrant rejects only a strictly newer policy); the
	// first by namespace/name holds in the effective policy and the others
	// are overridden by it, which one the implementation applies being
	// not determined. False: the later by name is rejected.
	TiesNotRejected bool
	// MergeTypeField, when set, names a top-level spec field whose value
	// (MergeTypeJSON, MergeTypeStrategic) makes a policy merge with the
	// nearest policy above it instead of replacing it; it is never part of
	// the effective spec.
	MergeTypeField string
	// Composition is CompositionMerge (default), CompositionAdditive or
	// CompositionIstioTelemetry.
	Composition Composition
	// NamedRules are dotted spec paths of named-rule maps ("." for the spec
	// proper itself, whose top-level fields then merge whole): in a merge,
	// their entries are replaced whole, nothing merges inside one.
	NamedRules []string
	// Oneofs are groups of fields of which at most one is set (protobuf
	// oneofs): where policies patch-merge, the member the winning one
	// sets takes the group whole, the losing one's other members lost to
	// it.
	Oneofs []Oneof
	// DirectSections: a Direct policy on a whole object also covers the
	// object's sections, where a policy on the section beats it.
	DirectSections bool
	// SectionsUnrankedBy, with DirectSections, are the GatewayClass
	// controllerNames at whose Gateways a policy on a whole object and one
	// on its section do not rank: at the section they meet as one level,
	// and the kind's same-level rule decides (NGINX Gateway Fabric's
	// BackendTLSPolicy: the oldest of those on the Service or the port
	// wins, the others Conflicted). Used at sections whose Gateways are all
	// of one such implementation.
	SectionsUnrankedBy []string
	// Ancestor says what status.ancestors entries name (default
	// AncestorTarget).
	Ancestor AncestorMode
	// AncestorServiceGatewaysBy, with Ancestor AncestorGateway, are the
	// GatewayClass controllerNames whose Gateways are named, in the
	// ancestors of a policy on a backend (a Service or one of its ports),
	// as objects, each of them whose routes use any port of the backend's
	// object (NGINX Gateway Fabric's BackendTLSPolicy:
	// collectOrderedGateways over ReferencedService.GatewayNsNames).
	AncestorServiceGatewaysBy []string
	// AncestorLimit says whether the policy applies at the ancestors
	// beyond the MaxAncestors its status can list (default
	// AncestorLimitReport: it does).
	AncestorLimit AncestorLimitMode
	// TargetingFields are top-level spec fields that select targets in the
	// kind's own way; they are no part of the spec proper.
	TargetingFields []string
	// SchemaMerge: the patch merges read list types from Schema (GEP-2649
	// listMapType: lists of type map merge item by item on their keys, sets
	// as sets) instead of replacing lists whole.
	SchemaMerge bool
	// MaxTargetRefs is the most targetRefs (and targetSelectors) a policy
	// may have: 0 for GEP-713's MaxTargetRefs, NoTargetRefLimit for none.
	MaxTargetRefs int
	// NoStanzas: the kind has no GEP-713 stanzas; `default(s)`,
	// `override(s)` and `strategy` are fields of its spec proper, and its
	// policies take the kind's first strategy.
	NoStanzas bool
	// NoSectionNames: the kind's targetRefs have no sectionName (its CRD's
	// schema has none, so the API server drops one written there): a
	// reference's sectionName is read as absent, the reference naming the
	// whole object, and reported in Policy.Ignored (Istio's kinds).
	NoSectionNames bool
	// SectionNamesIgnored (with NoSectionNames): the kind's schema keeps
	// a targetRef's sectionName, but its implementation does not read it
	// (Kuadrant's extension kinds); the report says so.
	SectionNamesIgnored bool
	// EmptyTargetGroupCore: a targetRef without group names the core
	// group, as Istio's PolicyTargetReference reads it (its webhook
	// refuses {kind: Gateway} without group); otherwise a kind written
	// without group is the one known kind of that name.
	EmptyTargetGroupCore bool
	// Untargeted says what a policy without targetRefs applies to (by
	// default nothing: it is Invalid).
	Untargeted UntargetedScope
	// PortSelection: at a listener, the configuration of the listener's
	// port replaces the default one (see PortSelection).
	PortSelection PortSelection
	// RejectSharedPort: a policy on a plain-HTTP listener (on a whole
	// ListenerSet: on any of its plain-HTTP listeners) that shares its port
	// with plain-HTTP listeners of the same Gateway it does not target is
	// Invalid there (Envoy Gateway's ClientTrafficPolicy).
	RejectSharedPort bool
	// DataPlaneTarget: a policy of the kind targets one data plane, found
	// by the reference's name whatever kind it gives: a Gateway of the
	// policy's namespace, or, where Gateways are merged (a GatewayClass
	// whose Gateways share one data plane), the GatewayClass. A reference
	// of another kind than the one its name resolves to is Invalid there,
	// and under merged Gateways a name that is no such GatewayClass is
	// Invalid at a GatewayClass of that name (Envoy Gateway's
	// EnvoyPatchPolicy). Target kinds must include Gateway and
	// GatewayClass.
	DataPlaneTarget bool
	// OverriddenByPresence: a policy is overridden wherever a more
	// specific policy replaces it whole, whatever either sets: a policy
	// that sets no field is overridden there too, and so is a policy's
	// attachment beneath one of its own on a more specific target (Envoy
	// Gateway reports both). By default (GEP-713, decision 8) a policy
	// loses only the fields it sets, to other policies.
	OverriddenByPresence bool
	// ReachThroughGateway: the kind's effective policies are computed only
	// along paths from a Gateway (or its GatewayClass) down to an
	// effective target, so a route with no Gateway above it (no
	// parentRefs, or none naming a Gateway among the objects) gives no
	// context; and an accepted policy in no context is Programmed=False,
	// reason Unknown, rather than programmed with nothing to program
	// (Kuadrant computes effective policies per GatewayClass-to-rule path
	// and reports a policy on none "not in the path to any existing
	// routes"). Inherited kinds only.
	ReachThroughGateway bool
	// SummaryIstioWaypoint: a policy's summary Accepted condition says
	// what istiod's WaypointAccepted condition says of it, flattened over
	// its targetRefs (istio/istio pilot/pkg/model/service.go
	// flattenConditions): one target, that target's verdict; several,
	// True/Accepted when all are bound, True/PartiallyInvalid when some
	// are, False/Invalid when none is, the message naming those that are
	// not ("Invalid targetRefs: Service.core:ns/name, ..."). A target is
	// bound when it is accepted there and, a Gateway, it is ready (has
	// status.addresses). For policies with targetRefs; kinds with
	// waypoint targets only.
	SummaryIstioWaypoint bool
	// RouteParentRefs: a route's paths run from every listener its
	// parentRefs name (the one a sectionName names, else every listener
	// of the Gateway), admitted or not by Gateway API's rules (port,
	// allowedRoutes namespaces and kinds, hostnames), and from no
	// ListenerSet, GAMMA Service or delegating route; by default from
	// the listeners that admit it (Kuadrant's policy-machinery links
	// routes so: gateway_api_topology.go findListenerFromParentRefFunc).
	// Inherited kinds only.
	RouteParentRefs bool
	// ReadyPathsOnly: the kind's paths run only through listeners their
	// Gateway's status says are Programmed and routes whose status says
	// their Gateway accepted them (a status.parents entry of the
	// Gateway's GatewayClass controllerName, naming the Gateway, with
	// Accepted=True; for a GRPCRoute, naming the listener where it names
	// one); an object whose status says nothing yet (a manifest) counts
	// as ready. By default status is not read (Kuadrant's status
	// updaters skip such paths: IsListenerReady, IsHTTPRouteReady,
	// IsGRPCRouteReady). Inherited kinds only.
	ReadyPathsOnly bool
	// PartlyOverriddenNotProgrammed: a policy that loses some of what it
	// sets (in some contexts) but not all of it is Programmed=False,
	// reason Unknown, rather than PartiallyProgrammed: its implementation
	// reports any overridden rule as an issue that keeps the policy from
	// being enforced (Kuadrant's TokenRateLimitPolicy).
	PartlyOverriddenNotProgrammed bool
	// WeightAnnotation, when set, names an annotation of the policy
	// objects holding an integer weight (default 0): at one level,
	// policies are ordered by weight, higher first, before their age, so a
	// higher weight counts as established earlier (kgateway's
	// kgateway.dev/policy-weight). Under the oldest-wins, oldest-first and
	// merge-disjoint rules it wins; under GEP-713's it wins in overrides
	// and loses in defaults, as an older policy does.
	WeightAnnotation string
	// WaypointTargets: a Service target takes effect only through the
	// waypoint the Service is bound to (Istio ambient: its
	// istio.io/use-waypoint label, or its Namespace's); a Service bound to
	// none is not attached (AncestorNotBound).
	WaypointTargets bool
	// Controllers are the controllerName values of the GatewayClasses
	// whose Gateways the kind's implementation serves: a Gateway of a
	// class with another controller is not its, so its policies neither
	// target it nor take effect through it. Empty: any (a class not
	// among the objects counts as the implementation's too).
	Controllers []string
	// OtherControllersNotProgrammed: a policy on another controller's
	// Gateway (Controllers), or on what takes effect only through such
	// Gateways, is accepted rather than TargetNotFound, and a policy in a
	// path through such a Gateway is Programmed=False, reason Unknown,
	// naming the Gateways its implementation waits for (Kuadrant: "waiting
	// for the following components to sync: Gateway (ns/name)"); no
	// context runs through them either way. Needs Controllers; Inherited
	// kinds only.
	OtherControllersNotProgrammed bool
	// GatewaySectionsByName: a policy on a Gateway's listener (a
	// sectionName) also reaches the listener of that name of each
	// ListenerSet (XListenerSet) the Gateway admits, ranked between the
	// policies of that ListenerSet and those of the Gateway: at such a
	// listener the stack is Gateway, Gateway listener, ListenerSet,
	// ListenerSet listener (Gloo Gateway's GetPrioritizedListenerPolicies
	// compares listener names only). Inherited kinds with the Gateway and
	// a ListenerSet kind in their hierarchy only.
	GatewaySectionsByName bool
	// OtherControllersUnlisted: a policy's declared target that is
	// another controller's Gateway (Controllers), or takes effect only
	// through such Gateways, gets no status.ancestors entry and takes no
	// place among the MaxAncestors; an input problem on the policy names
	// it instead, as an implementation that writes policy status only for
	// what its own Gateways translate never sees it (kgateway). A target
	// that does not exist still gets its TargetNotFound entry (unless
	// MissingTargetsUnlisted). Needs Controllers; excludes
	// OtherControllersNotProgrammed (one setting, otherControllers).
	OtherControllersUnlisted bool
	// Dependencies are what the kind's implementation needs installed
	// before it accepts any policy of the kind: where the cluster's
	// served kinds are known (engine.Options.ServedAPIs) and one is
	// missing, each policy is Accepted=False, reason MissingDependency,
	// and applies nowhere (Kuadrant: "[Limitador Operator] is not
	// installed"). Empty: none.
	Dependencies []Dependency
	// RequiredObjects are the objects the kind's implementation needs on
	// the cluster before it enforces any policy of the kind: where the
	// cluster is read (engine.Options.ServedAPIs known) and no object of
	// one's kind exists, each accepted policy is Programmed=False, reason
	// MissingResource (Kuadrant: "kuadrant is not installed, please
	// create resource"). Empty: none.
	RequiredObjects []RequiredObject
	// EffectiveListeners are conditions a listener must meet to be an
	// effective target of the kind (ListenerHostname,
	// ListenerTLSTerminate, ListenerAttachedRoutes): Kuadrant's DNSPolicy
	// makes records for listeners with a hostname and attached routes
	// only, its TLSPolicy certificates for those terminating TLS with
	// their own Secrets. Empty: any listener.
	EffectiveListeners []string
	// DelegationPriority says whose policies win across route delegation
	// (kgateway's kgateway.dev/inherited-policy-priority on the parent
	// route); unset: the child's.
	DelegationPriority DelegationPriority
	// ConflictScopePolicy: a policy that the same-level rule (oldest-wins,
	// merge-disjoint) rejects at one of its targets is rejected at all of
	// them: it applies nowhere and is Conflicted on every ancestor. Being
	// rejected, it beats no one: policies are checked in the established
	// order against the older ones still in place (NGINX Gateway Fabric's
	// markConflictedPolicies). By default a policy is rejected only where
	// it conflicts.
	ConflictScopePolicy bool
	// RejectRouteOverlap: a policy targeting a route is rejected whole
	// (TargetConflict) when another route it does not target shares a
	// Gateway, hostname, port and path with one it targets (NGINX Gateway
	// Fabric's checkTargetRoutesForOverlap: both routes end up in one
	// NGINX location, which cannot carry the policy for one of them).
	RejectRouteOverlap bool
	// InvalidNotApplied: a policy its implementation cannot translate at
	// a target (what makes it Invalid in place: references that do not
	// resolve, values out of range, rules that do not hold, fields turned
	// off, the data plane's parameters) is Invalid there and not attached:
	// it applies nowhere there, nothing loses to it, and it conflicts with
	// no other policy (NGINX Gateway Fabric leaves out a policy whose
	// validator finds a problem). By default it keeps its place, as Envoy
	// Gateway claims the target and fails its routes.
	InvalidNotApplied bool
	// RefsAfterConflicts, with InvalidNotApplied: a policy whose
	// references (BackendRefs, ObjectRefs) are all that keep it from
	// being translated still takes part in conflicts (an older one rejects
	// a newer one), and applies nowhere: NGINX Gateway Fabric resolves a
	// PayloadProcessor's references after it has marked conflicts
	// (processPolicies, then processPayloadProcessorPolicies).
	RefsAfterConflicts bool
	// MissingTargetsUnlisted: a declared target that does not resolve
	// (not among the objects, another implementation's, or, for kinds
	// naming Gateways as ancestors, reached through none of its Gateways)
	// gets no status.ancestors entry and takes no place among the
	// MaxAncestors; the policy carries an input problem naming it instead
	// (NGINX Gateway Fabric drops such a target before it writes status).
	// By default it gets an entry, Accepted=False reason TargetNotFound.
	MissingTargetsUnlisted bool
	// ProgrammedWhenAccepted: the Programmed condition says whether the
	// policy is accepted at the ancestor, not what it contributes there:
	// True (reason Programmed) at every accepted ancestor, overridden or
	// not (the message still says what it loses), and False at every
	// ancestor that is not accepted, reason Overridden when it is
	// Conflicted there, else Reconciling (NGINX Gateway Fabric's
	// settingsPolicyProgrammedCondition). By default (GEP-713, decision 7)
	// Programmed is written at accepted ancestors only, False/Overridden
	// where the policy contributes nothing, PartiallyProgrammed where it
	// loses part.
	ProgrammedWhenAccepted bool
	// FilterAttachment: a policy of the kind is also attached to a route
	// rule by that rule's filter of type ExtensionRef naming it (same
	// namespace as the route), ranking first at the rule, before the
	// policies targeting the rule, in filter order; a policy naming no
	// targets is then valid (Gloo Gateway's RouteOption, kgateway's
	// TrafficPolicy).
	FilterAttachment bool
	// MissingFilterStatus, with FilterAttachment, is the HTTP status of
	// the direct response with which the implementation replaces a route
	// rule whose ExtensionRef filter names a policy of the kind that does
	// not exist (kgateway: 500); 0: such a filter is ignored.
	MissingFilterStatus int
	// NotInListenerSets are dotted spec paths (relative to the spec
	// proper) that the policies above a ListenerSet (XListenerSet) do not
	// give its listeners: there, only the ListenerSet's and its
	// listeners' own policies set them (kgateway resolves a Gateway-wide
	// ListenerPolicy's clientCertificateValidation for the Gateway's own
	// listeners only). Inherited kinds with ListenerSet listeners among
	// their effective targets and defaults strategies only (the policies
	// below win there).
	NotInListenerSets []string
	// ConflictFields, for the merge-disjoint rule, are the dotted spec
	// paths two policies at one level conflict on when both set them (a
	// field at or below the path); other fields they both set do not make
	// them conflict (NGINX Gateway Fabric's validators compare only some
	// fields). Empty: every field conflicts.
	ConflictFields []string
	// InheritedFields, for an additive kind, are the dotted spec paths of
	// which a context has one value rather than one per policy: the most
	// specific policy giving the field a value other than false, 0 or ""
	// gives it, and every other policy's value of that field does not
	// apply there (NGINX Gateway Fabric's RateLimitPolicy: dryRun,
	// logLevel and rejectCode are NGINX directives a route's location
	// inherits from its server unless it writes its own, and NGF writes
	// none for a zero value).
	InheritedFields []string
	// LevelInheritedFields, for an additive kind, are the dotted spec
	// paths a context takes from the most specific level of its stack at
	// which a policy gives them a value other than false, 0, "" or empty:
	// every policy of that level keeps its value there, side by side, and
	// the policies of the other levels lose theirs (NGINX Gateway
	// Fabric's RateLimitPolicy: its rules are limit_req directives, which
	// NGINX lets a location inherit from its server only when the
	// location has none of its own, so a route's rules replace the
	// Gateway's rather than add to them).
	LevelInheritedFields []string
	// CARefs, when enabled, is where the kind's policies name the objects
	// holding the CA certificates they trust: they get a ResolvedRefs
	// condition, and are Accepted=False/NoValidCACertificate when none
	// resolves (Gateway API's BackendTLSPolicy).
	CARefs CARefs
	// BackendRefs are where the kind's policies name backends they send
	// traffic to themselves; such a policy is an ancestor of those
	// backends' policies whose ancestors are Gateways (Envoy Gateway's
	// external authorizers and processors, JWKS and OIDC providers).
	BackendRefs []BackendRefPath
	// BackendRefAncestorGateways: the ancestors a policy naming a backend
	// gives that backend's policies (of kinds whose ancestors are
	// Gateways) are the Gateways through which it applies (NGINX Gateway
	// Fabric's PayloadProcessor: addPayloadProcessorBackendServicesTo
	// ReferencedServices), not the policy itself (Envoy Gateway).
	BackendRefAncestorGateways bool
	// InvalidOnUnresolvedBackendRefs: a policy naming, at BackendRefs, a
	// Service that does not exist, a port the Service lacks (or none), or
	// a Service in another namespace that no ReferenceGrant opens to it,
	// is Invalid at every target (Envoy Gateway). Otherwise such a
	// reference is only not used.
	InvalidOnUnresolvedBackendRefs bool
	// BackendRefRules are how its implementation judges those backendRefs
	// where implementations differ (the zero value: Envoy Gateway's).
	BackendRefRules BackendRefRules
	// ClusterIPRouting is the condition on a Gateway's data-plane
	// parameters under which the implementation sends the policies'
	// external services to a Service's cluster IP (see
	// ClusterIPRouting); "" for none.
	ClusterIPRouting ClusterIPRouting
	// ObjectRefs are where the kind's policies name ConfigMaps and Secrets
	// whose data they use; a policy naming one that does not resolve is
	// Invalid at every target (Envoy Gateway). See ObjectRefPath.
	ObjectRefs []ObjectRefPath
	// UnsupportedFields are, per target kind, the spec fields the kind's
	// policies may not set there (see UnsupportedFields).
	UnsupportedFields []UnsupportedFields
	// FailureStatus is the HTTP status with which the implementation
	// answers a route's requests when the policy of this kind applying
	// there is Invalid in place (its references do not resolve): Envoy
	// Gateway fails such routes closed with a 500. 0: the request goes on as if the policy were not there.
	FailureStatus int
	// RouteReplacement is the HTTP status of the direct response with
	// which the implementation replaces what a policy of the kind with
	// errors reaches (kgateway's route replacement: 500), wherever it
	// attaches: below a route or rule, every route rule (delegated ones
	// included); at a Gateway, every request of its HTTP and HTTPS
	// listeners; at a ListenerSet or listener, the requests of those
	// listeners (on an HTTP listener, those a route of it matches). A
	// policy has errors when it is Invalid in place there, or Invalid for
	// a reason its implementation finds itself (Policy.TranslationInvalid),
	// whether or not it wins a field. 0: nothing is replaced.
	RouteReplacement int
	// FailOpen are the parts of its policies that the implementation
	// leaves out, rather than failing the route with FailureStatus, when
	// a reference under them does not resolve and their flag is true.
	FailOpen []FailOpenPath
	// Allowlists bind values of its policies to those the parameters of
	// the target's data plane hold (Envoy Gateway: a dynamic module must
	// be registered in the EnvoyProxy a Gateway runs with): a policy
	// naming another value is Invalid in place at that target, as one
	// whose references do not resolve.
	Allowlists []Allowlist
	// Requirements say what its policies need of the data plane's
	// parameters or of another kind's effective policy at the listeners
	// when they hold some value (Envoy Gateway's GeoIP authorization): a
	// policy whose requirement is not met is Invalid in place there.
	Requirements []Requirement
	// ValueRanges bound fields holding quantities, which the
	// implementation checks when it translates a policy: a policy with a
	// value outside is Invalid in place, as one whose references do not
	// resolve (Envoy Gateway's buffer limits, HTTP/2 window sizes).
	ValueRanges []ValueRange
	// RegexFields hold regular expressions the implementation compiles
	// when it translates a policy: a policy with one that does not
	// compile is Invalid in place, as one with a value out of range.
	RegexFields []RegexField
	// Validations are CEL rules on its policies' content, for checks the
	// implementation makes in code when it translates a policy: a policy
	// for which one does not hold is Invalid in place, as one with a
	// value out of range (see Validation).
	Validations []Validation
	// FeatureGates are the switches of the implementation's
	// configuration the kind, or fields of its policies, need: a policy of
	// a kind whose feature is off is Disabled at each target and applies
	// nowhere; one setting a field whose feature is off is Invalid in
	// place (Envoy Gateway's EnvoyPatchPolicy and Lua).
	FeatureGates []FeatureGate
	// Implementation names the project whose profile gave settings, if any.
	Implementation string
	// Schema is the CRD's openAPIV3Schema of spec, when known; schema-aware
	// merges read list types from it.
	Schema map[string]any
	// Origins says where each setting came from, keyed by the Setting*
	// names ("class", "targetKinds", ...).
	Origins map[string]Origin
}

// String renders the kind as Kind.group.
func (k *Kind) String() string { return k.GroupKind.String() }

// AllowsTarget reports whether a declared target of kind gk is allowed.
func (k *Kind) AllowsTarget(gk topology.GroupKind) bool { return slices.Contains(k.TargetKinds, gk) }

// InHierarchy reports whether objects of kind gk are levels of this kind's paths.
func (k *Kind) InHierarchy(gk topology.GroupKind) bool { return slices.Contains(k.Hierarchy, gk) }

// IsEffectiveTarget reports whether objects of kind gk get effective policies.
func (k *Kind) IsEffectiveTarget(gk topology.GroupKind) bool {
	return slices.Contains(k.EffectiveTargetKinds, gk)
}

// RejectsAtOneLevel reports whether the kind's same-level rule rejects
// policies at one level (oldest-wins, merge-disjoint), rather than letting
// them all take part; also under additive composition, where the others
// apply side by side. Strategy none rejects along paths, across levels.
func (k *Kind) RejectsAtOneLevel() bool {
	return k.SameLevel == SameLevelOldestWins || k.SameLevel == SameLevelMergeDisjoint
}

// Supports reports whether the kind supports strategy s.
func (k *Kind) Supports(s merge.Strategy) bool { return slices.Contains(k.Strategies, s) }

// Spec is the Go form of a kind's descriptor; zero fields take the defaults
// documented in docs/semantics.md. The fields mean what Kind's fields of the
// same names mean.
type Spec struct {
	GroupKind             topology.GroupKind
	Class                 Class
	TargetKinds           []topology.GroupKind
	EffectiveTargetKinds  []topology.GroupKind
	EffectiveSectionKinds []topology.GroupKind
	Hierarchy             []topology.GroupKind
	Strategies            []merge.Strategy
	Custom                merge.CustomFunc
	SameLevel             SameLevel
	TiesNotRejected       bool
	MergeTypeField        string
	Composition           Composition
	NamedRules            []string
	Oneofs                []Oneof
	DirectSections        bool
	SectionsUnrankedBy    []string
	Ancestor              AncestorMode
	// AncestorServiceGatewaysBy: see Kind.
	AncestorServiceGatewaysBy []string
	AncestorLimit             AncestorLimitMode
	TargetingFields           []string
	SchemaMerge               bool
	MaxTargetRefs             int
	NoStanzas                 bool
	NoSectionNames            bool
	// SectionNamesIgnored: see Kind (it implies NoSectionNames).
	SectionNamesIgnored  bool
	EmptyTargetGroupCore bool
	Untargeted           UntargetedScope
	PortSelection        PortSelection
	RejectSharedPort     bool
	DataPlaneTarget      bool
	OverriddenByPresence bool
	ReachThroughGateway  bool
	// SummaryIstioWaypoint: see Kind.
	SummaryIstioWaypoint bool
	// RouteParentRefs: see Kind.
	RouteParentRefs bool
	// ReadyPathsOnly: see Kind.
	ReadyPathsOnly bool
	// PartlyOverriddenNotProgrammed: see Kind.
	PartlyOverriddenNotProgrammed bool
	WeightAnnotation              string
	DelegationPriority            DelegationPriority
	WaypointTargets               bool
	Controllers                   []string
	// OtherControllersNotProgrammed: see Kind.
	OtherControllersNotProgrammed bool
	OtherControllersUnlisted      bool
	GatewaySectionsByName         bool
	Dependencies                  []Dependency
	RequiredObjects               []RequiredObject
	EffectiveListeners            []string
	ConflictScopePolicy           bool
	RejectRouteOverlap            bool
	InvalidNotApplied             bool
	// RefsAfterConflicts: see Kind.
	RefsAfterConflicts bool
	// MissingTargetsUnlisted: see Kind.
	MissingTargetsUnlisted bool
	// ProgrammedWhenAccepted: see Kind.
	ProgrammedWhenAccepted bool
	FilterAttachment       bool
	MissingFilterStatus    int
	ConflictFields         []string
	// NotInListenerSets: see Kind.
	NotInListenerSets    []string
	InheritedFields      []string
	LevelInheritedFields []string
	CARefs               CARefs
	BackendRefs          []BackendRefPath
	// BackendRefAncestorGateways: see Kind.
	BackendRefAncestorGateways bool
	// InvalidOnUnresolvedBackendRefs: see Kind.
	InvalidOnUnresolvedBackendRefs bool
	// BackendRefRules: see Kind.
	BackendRefRules   BackendRefRules
	ClusterIPRouting  ClusterIPRouting
	ObjectRefs        []ObjectRefPath
	UnsupportedFields []UnsupportedFields
	FailureStatus     int
	// RouteReplacement: see Kind.
	RouteReplacement int
	FailOpen         []FailOpenPath
	Allowlists       []Allowlist
	Requirements     []Requirement
	ValueRanges      []ValueRange
	RegexFields      []RegexField
	Validations      []Validation
	FeatureGates     []FeatureGate
}

// NewKind builds and validates a kind from a Go descriptor, applying defaults.
func NewKind(s Spec) (*Kind, error) {
	k := &Kind{GroupKind: s.GroupKind, Origins: map[string]Origin{}}
	k.apply(s, FromGo, true)
	k.fillDefaultOrigins()
	if err := k.complete(); err != nil {
		return nil, err
	}
	return k, nil
}

// apply copies the settings s gives into k, recording origin for each. When
// all is set, every setting counts as given (Go descriptors: Class and the
// booleans are always given); otherwise only non-zero ones do (profiles).
// Settings k already has an origin for are kept (the CRD's own label and
// annotations win over a profile).
func (k *Kind) apply(s Spec, origin Origin, all bool) {
	set := func(name string, given bool, do func()) {
		if _, done := k.Origins[name]; done {
			return
		}
		if given {
			do()
			k.Origins[name] = origin
		}
	}
	set(SettingClass, all || s.Class != "", func() { k.Class = s.Class })
	// Copies, so that the caller's later changes to s do not reach the kind.
	set(SettingTargetKinds, len(s.TargetKinds) > 0, func() { k.TargetKinds = slices.Clone(s.TargetKinds) })
	set(SettingHierarchy, len(s.Hierarchy) > 0, func() { k.Hierarchy = slices.Clone(s.Hierarchy) })
	set(SettingEffectiveTargetKinds, len(s.EffectiveTargetKinds) > 0, func() { k.EffectiveTargetKinds = slices.Clone(s.EffectiveTargetKinds) })
	set(SettingEffectiveSectionKinds, len(s.EffectiveSectionKinds) > 0, func() { k.EffectiveSectionKinds = slices.Clone(s.EffectiveSectionKinds) })
	set(SettingStrategies, len(s.Strategies) > 0, func() { k.Strategies = slices.Clone(s.Strategies) })
	set(SettingSameLevel, s.SameLevel != "", func() { k.SameLevel = s.SameLevel })
	set(SettingSameLevelTies, s.TiesNotRejected, func() { k.TiesNotRejected = true })
	set(SettingMergeTypeField, s.MergeTypeField != "", func() { k.MergeTypeField = s.MergeTypeField })
	set(SettingComposition, s.Composition != "", func() { k.Composition = s.Composition })
	set(SettingNamedRules, len(s.NamedRules) > 0, func() { k.NamedRules = slices.Clone(s.NamedRules) })
	set(SettingOneofs, len(s.Oneofs) > 0, func() { k.Oneofs = cloneOneofs(s.Oneofs) })
	set(SettingDirectSections, all || s.DirectSections, func() {
		k.DirectSections, k.SectionsUnrankedBy = s.DirectSections, slices.Clone(s.SectionsUnrankedBy)
	})
	set(SettingAncestor, s.Ancestor != "", func() {
		k.Ancestor, k.AncestorServiceGatewaysBy = s.Ancestor, slices.Clone(s.AncestorServiceGatewaysBy)
	})
	set(SettingAncestorLimit, s.AncestorLimit != "", func() { k.AncestorLimit = s.AncestorLimit })
	set(SettingTargetingFields, len(s.TargetingFields) > 0, func() { k.TargetingFields = slices.Clone(s.TargetingFields) })
	set(SettingSchemaMerge, all || s.SchemaMerge, func() { k.SchemaMerge = s.SchemaMerge })
	set(SettingMaxTargetRefs, s.MaxTargetRefs != 0, func() { k.MaxTargetRefs = s.MaxTargetRefs })
	set(SettingStanzas, all || s.NoStanzas, func() { k.NoStanzas = s.NoStanzas })
	set(SettingSectionNames, all || s.NoSectionNames || s.SectionNamesIgnored, func() {
		k.NoSectionNames, k.SectionNamesIgnored = s.NoSectionNames || s.SectionNamesIgnored, s.SectionNamesIgnored
	})
	set(SettingEmptyTargetGroup, s.EmptyTargetGroupCore, func() { k.EmptyTargetGroupCore = s.EmptyTargetGroupCore })
	set(SettingUntargetedScope, s.Untargeted.Mode != UntargetedNone, func() { k.Untargeted = s.Untargeted })
	set(SettingPortSelection, s.PortSelection.Enabled(), func() { k.PortSelection = s.PortSelection })
	set(SettingSharedPortListeners, s.RejectSharedPort, func() { k.RejectSharedPort = s.RejectSharedPort })
	set(SettingDataPlaneTarget, s.DataPlaneTarget, func() { k.DataPlaneTarget = s.DataPlaneTarget })
	set(SettingOverriddenBy, s.OverriddenByPresence, func() { k.OverriddenByPresence = s.OverriddenByPresence })
	set(SettingReach, s.ReachThroughGateway, func() { k.ReachThroughGateway = true })
	set(SettingSummary, s.SummaryIstioWaypoint, func() { k.SummaryIstioWaypoint = true })
	set(SettingRouteParents, s.RouteParentRefs, func() { k.RouteParentRefs = true })
	set(SettingPathReadiness, s.ReadyPathsOnly, func() { k.ReadyPathsOnly = true })
	set(SettingPartlyOverridden, s.PartlyOverriddenNotProgrammed, func() { k.PartlyOverriddenNotProgrammed = true })
	set(SettingWeightAnnotation, s.WeightAnnotation != "", func() { k.WeightAnnotation = s.WeightAnnotation })
	set(SettingDelegationPriority, !s.DelegationPriority.isZero(), func() { k.DelegationPriority = s.DelegationPriority.clone() })
	set(SettingWaypointTargets, s.WaypointTargets, func() { k.WaypointTargets = true })
	set(SettingControllers, len(s.Controllers) > 0, func() { k.Controllers = slices.Clone(s.Controllers) })
	set(SettingOtherControllers, s.OtherControllersNotProgrammed || s.OtherControllersUnlisted, func() {
		k.OtherControllersNotProgrammed, k.OtherControllersUnlisted = s.OtherControllersNotProgrammed, s.OtherControllersUnlisted
	})
	set(SettingGatewaySections, s.GatewaySectionsByName, func() { k.GatewaySectionsByName = true })
	set(SettingDependencies, len(s.Dependencies) > 0, func() {
		k.Dependencies = make([]Dependency, len(s.Dependencies))
		for i, d := range s.Dependencies {
			k.Dependencies[i] = Dependency{Name: d.Name}
			for _, alt := range d.Alternatives {
				k.Dependencies[i].Alternatives = append(k.Dependencies[i].Alternatives, slices.Clone(alt))
			}
		}
	})
	set(SettingRequiredObjects, len(s.RequiredObjects) > 0, func() { k.RequiredObjects = slices.Clone(s.RequiredObjects) })
	set(SettingEffectiveListeners, len(s.EffectiveListeners) > 0, func() { k.EffectiveListeners = slices.Clone(s.EffectiveListeners) })
	set(SettingConflictScope, s.ConflictScopePolicy, func() { k.ConflictScopePolicy = s.ConflictScopePolicy })
	set(SettingRouteOverlap, s.RejectRouteOverlap, func() { k.RejectRouteOverlap = s.RejectRouteOverlap })
	set(SettingInvalidPolicies, s.InvalidNotApplied || s.RefsAfterConflicts, func() {
		k.InvalidNotApplied, k.RefsAfterConflicts = s.InvalidNotApplied, s.RefsAfterConflicts
	})
	set(SettingMissingTargets, s.MissingTargetsUnlisted, func() { k.MissingTargetsUnlisted = true })
	set(SettingProgrammed, s.ProgrammedWhenAccepted, func() { k.ProgrammedWhenAccepted = true })
	set(SettingFilterAttachment, s.FilterAttachment, func() {
		k.FilterAttachment, k.MissingFilterStatus = s.FilterAttachment, s.MissingFilterStatus
	})
	set(SettingConflictFields, len(s.ConflictFields) > 0, func() { k.ConflictFields = slices.Clone(s.ConflictFields) })
	set(SettingNotInListenerSets, len(s.NotInListenerSets) > 0, func() { k.NotInListenerSets = slices.Clone(s.NotInListenerSets) })
	set(SettingInheritedFields, len(s.InheritedFields) > 0, func() { k.InheritedFields = slices.Clone(s.InheritedFields) })
	set(SettingLevelInheritedFields, len(s.LevelInheritedFields) > 0, func() { k.LevelInheritedFields = slices.Clone(s.LevelInheritedFields) })
	set(SettingCACertificateRefs, s.CARefs.Enabled(), func() {
		k.CARefs = s.CARefs.clone()
	})
	set(SettingBackendRefs, len(s.BackendRefs) > 0 || s.BackendRefAncestorGateways, func() {
		k.BackendRefs, k.BackendRefAncestorGateways = slices.Clone(s.BackendRefs), s.BackendRefAncestorGateways
	})
	set(SettingUnresolvedBackendRefs, s.InvalidOnUnresolvedBackendRefs || s.BackendRefRules != BackendRefRules{}, func() {
		k.InvalidOnUnresolvedBackendRefs, k.BackendRefRules = s.InvalidOnUnresolvedBackendRefs, s.BackendRefRules
	})
	set(SettingClusterIPRouting, s.ClusterIPRouting != "", func() { k.ClusterIPRouting = s.ClusterIPRouting })
	set(SettingObjectRefs, len(s.ObjectRefs) > 0, func() {
		k.ObjectRefs = make([]ObjectRefPath, len(s.ObjectRefs))
		for i, r := range s.ObjectRefs {
			// A copy, its lists not shared with the Spec's.
			r.Kinds, r.Keys, r.On = slices.Clone(r.Kinds), slices.Clone(r.Keys), slices.Clone(r.On)
			k.ObjectRefs[i] = r
		}
	})
	set(SettingUnsupportedFields, len(s.UnsupportedFields) > 0, func() {
		k.UnsupportedFields = make([]UnsupportedFields, len(s.UnsupportedFields))
		for i, u := range s.UnsupportedFields {
			k.UnsupportedFields[i] = UnsupportedFields{Kind: u.Kind, Paths: slices.Clone(u.Paths)}
		}
	})
	set(SettingFailureStatus, s.FailureStatus != 0, func() { k.FailureStatus = s.FailureStatus })
	set(SettingRouteReplacement, s.RouteReplacement != 0, func() { k.RouteReplacement = s.RouteReplacement })
	set(SettingFailOpen, len(s.FailOpen) > 0, func() { k.FailOpen = slices.Clone(s.FailOpen) })
	set(SettingAllowlists, len(s.Allowlists) > 0, func() { k.Allowlists = slices.Clone(s.Allowlists) })
	set(SettingRequirements, len(s.Requirements) > 0, func() {
		k.Requirements = make([]Requirement, len(s.Requirements))
		for i, r := range s.Requirements {
			r.Any, r.On = slices.Clone(r.Any), slices.Clone(r.On)
			k.Requirements[i] = r
		}
	})
	set(SettingValueRanges, len(s.ValueRanges) > 0, func() { k.ValueRanges = slices.Clone(s.ValueRanges) })
	set(SettingRegexFields, len(s.RegexFields) > 0, func() { k.RegexFields = slices.Clone(s.RegexFields) })
	set(SettingValidations, len(s.Validations) > 0, func() {
		k.Validations = make([]Validation, len(s.Validations))
		for i, v := range s.Validations {
			v.On = slices.Clone(v.On)
			k.Validations[i] = v
		}
	})
	set(SettingFeatureGates, len(s.FeatureGates) > 0, func() {
		k.FeatureGates = make([]FeatureGate, len(s.FeatureGates))
		for i, g := range s.FeatureGates {
			k.FeatureGates[i] = FeatureGate{Feature: g.Feature, Paths: slices.Clone(g.Paths), BackendKind: g.BackendKind}
		}
	})
	if s.Custom != nil && k.Custom == nil {
		k.Custom = s.Custom
	}
}

// settingError is an error of complete about one setting, keyed as in
// Kind.Origins ("class", "hierarchy", ...; "kind" for the kind name), so that
// KindFromCRD can name the label or annotation it came from.
type settingError struct {
	setting string
	msg     string
}

func (e *settingError) Error() string { return e.msg }

func settingErrorf(setting, format string, args ...any) error {
	return &settingError{setting: setting, msg: fmt.Sprintf(format, args...)}
}

// complete validates k and fills defaults for empty settings. Its errors are
// *settingError.
func (k *Kind) complete() error {
	if k.GroupKind.Kind == "" {
		return settingErrorf("kind", "policy kind has no kind name")
	}
	if k.Class != Direct && k.Class != Inherited {
		return settingErrorf("class", "class %q is neither Direct nor Inherited", k.Class)
	}
	for _, list := range []struct {
		setting string
		kinds   []topology.GroupKind
	}{{"hierarchy", k.Hierarchy}, {"targetKinds", k.TargetKinds}, {"effectiveTargetKinds", k.EffectiveTargetKinds}} {
		for _, gk := range list.kinds {
			if gk.Kind == "" {
				return settingErrorf(list.setting, "%s lists a kind with no kind name (group %q)", list.setting, gk.Group)
			}
		}
	}
	for _, s := range k.Strategies {
		if _, err := merge.ParseStrategy(string(s)); err != nil {
			return settingErrorf("strategies", "%v", err)
		}
	}
	if k.SameLevel == "" {
		k.SameLevel = SameLevelGEP
	} else if _, err := ParseSameLevel(string(k.SameLevel)); err != nil {
		return settingErrorf(SettingSameLevel, "%v", err)
	}
	if k.Composition == "" {
		k.Composition = CompositionMerge
	} else if _, err := ParseComposition(string(k.Composition)); err != nil {
		return settingErrorf(SettingComposition, "%v", err)
	}
	if k.Ancestor == "" {
		k.Ancestor = AncestorTarget
	} else if _, err := ParseAncestorMode(string(k.Ancestor)); err != nil {
		return settingErrorf(SettingAncestor, "%v", err)
	}
	if len(k.AncestorServiceGatewaysBy) > 0 && k.Ancestor != AncestorGateway {
		return settingErrorf(SettingAncestor, "controller=... service-gateways clauses name Gateways as ancestors: they need the mode gateway")
	}
	for _, ctl := range k.AncestorServiceGatewaysBy {
		if ctl == "" {
			return settingErrorf(SettingAncestor, "a service-gateways clause names no controller")
		}
	}
	if k.AncestorLimit == "" {
		k.AncestorLimit = AncestorLimitReport
	} else if _, err := ParseAncestorLimitMode(string(k.AncestorLimit)); err != nil {
		return settingErrorf(SettingAncestorLimit, "%v", err)
	}
	for _, f := range append(slices.Clone(k.TargetingFields), k.MergeTypeField) {
		if strings.ContainsAny(f, ". ") {
			return settingErrorf(SettingTargetingFields, "%q is not a top-level spec field name", f)
		}
	}
	if k.WeightAnnotation != "" {
		if errs := validation.IsQualifiedName(k.WeightAnnotation); len(errs) > 0 {
			return settingErrorf(SettingWeightAnnotation, "%q is not an annotation name: %s", k.WeightAnnotation, strings.Join(errs, "; "))
		}
	}
	for _, p := range k.NamedRules {
		if p == "." {
			continue // the spec proper itself: its top-level fields merge whole
		}
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
			return settingErrorf(SettingNamedRules, "%q is not a dotted spec path", p)
		}
	}
	if err := validateOneofs(k.Oneofs); err != nil {
		return settingErrorf(SettingOneofs, "%v", err)
	}
	if len(k.Hierarchy) == 0 {
		k.Hierarchy = slices.Clone(topology.DefaultHierarchy)
	}
	if len(k.TargetKinds) == 0 {
		// Default: every kind of the hierarchy (sections included).
		k.TargetKinds = slices.Clone(k.Hierarchy)
	}
	if len(k.EffectiveTargetKinds) == 0 && len(k.EffectiveSectionKinds) > 0 {
		// The sections given are the effective targets, and nothing else.
		k.EffectiveTargetKinds = slices.Clone(k.EffectiveSectionKinds)
	}
	if len(k.EffectiveTargetKinds) == 0 {
		if k.Class == Direct {
			k.EffectiveTargetKinds = slices.Clone(k.TargetKinds)
		} else {
			k.EffectiveTargetKinds = []topology.GroupKind{k.Hierarchy[len(k.Hierarchy)-1]}
		}
	}
	if len(k.Strategies) == 0 {
		if k.Class == Direct {
			k.Strategies = []merge.Strategy{merge.None}
		} else {
			k.Strategies = []merge.Strategy{merge.AtomicDefaults, merge.PatchDefaults, merge.AtomicOverrides, merge.PatchOverrides}
		}
	}
	if k.MissingFilterStatus != 0 && (!k.FilterAttachment || k.MissingFilterStatus < 100 || k.MissingFilterStatus > 599) {
		return settingErrorf(SettingFilterAttachment, "missing=%d needs extension-ref and an HTTP status (100 to 599)", k.MissingFilterStatus)
	}
	if k.FilterAttachment && !slices.Contains(k.EffectiveSectionKinds, topology.KindHTTPRoute) && !slices.Contains(k.EffectiveSectionKinds, topology.KindGRPCRoute) {
		return settingErrorf(SettingFilterAttachment, "filter attachment attaches policies to route rules, which must then be effective targets: add HTTPRoute or GRPCRoute to the effective section kinds")
	}
	if k.FilterAttachment && ((k.SameLevel == SameLevelGEP && !k.Supports(merge.None)) || k.ConflictScopePolicy) {
		// A filter ranks its policy first at the rule: under GEP-713's rule
		// first means older, which loses in defaults; and conflict scope
		// orders policies, not attachments.
		return settingErrorf(SettingFilterAttachment, "filter attachment ranks a policy first at its rule, which needs a same-level rule of oldest-wins, oldest-first or merge-disjoint (or strategy none) and the conflict scope target; the same-level rule is %s", k.SameLevel)
	}
	if len(k.ConflictFields) > 0 && k.SameLevel != SameLevelMergeDisjoint {
		return settingErrorf(SettingConflictFields, "conflict fields narrow the merge-disjoint rule; the same-level rule is %s", k.SameLevel)
	}
	for _, p := range k.ConflictFields {
		if !dottedPath(p) {
			return settingErrorf(SettingConflictFields, "%q is not a dotted spec path", p)
		}
	}
	for _, p := range k.NotInListenerSets {
		if !dottedPath(p) {
			return settingErrorf(SettingNotInListenerSets, "%q is not a dotted spec path", p)
		}
	}
	if len(k.NotInListenerSets) > 0 && (k.Class != Inherited || (!k.IsEffectiveSection(topology.KindListenerSet) && !k.IsEffectiveSection(topology.KindXListenerSet)) ||
		slices.ContainsFunc(k.Strategies, func(s merge.Strategy) bool { return s == merge.AtomicOverrides || s == merge.PatchOverrides })) {
		if k.Origins[SettingNotInListenerSets].isProfile() {
			// A profile's setting, the CRD having changed what it
			// applies to: it does not apply.
			k.NotInListenerSets = nil
			k.Origins[SettingNotInListenerSets] = FromDefault
		} else {
			return settingErrorf(SettingNotInListenerSets, "fields not in ListenerSets are left out at ListenerSet listeners, which must be effective targets of an Inherited kind with defaults strategies only")
		}
	}
	if k.DataPlaneTarget && (!slices.Contains(k.TargetKinds, topology.KindGateway) || !slices.Contains(k.TargetKinds, topology.KindGatewayClass)) {
		return settingErrorf(SettingDataPlaneTarget, "a data-plane target is a Gateway or a GatewayClass: the target kinds must include both (they are %s)", kindsString(k.TargetKinds))
	}
	if len(k.InheritedFields) > 0 && k.Composition != CompositionAdditive {
		return settingErrorf(SettingInheritedFields, "inherited fields single out fields of an additive kind, whose policies otherwise all apply; the composition is %s", k.Composition)
	}
	for _, p := range k.InheritedFields {
		if !dottedPath(p) {
			return settingErrorf(SettingInheritedFields, "%q is not a dotted spec path", p)
		}
	}
	if k.TiesNotRejected && k.SameLevel != SameLevelOldestWins {
		if k.Origins[SettingSameLevelTies].isProfile() {
			// A profile's setting for its rule, which the CRD changed:
			// it does not apply.
			k.TiesNotRejected = false
		} else {
			return settingErrorf(SettingSameLevelTies, "ties matter to the same-level rule oldest-wins; the rule is %s", k.SameLevel)
		}
	}
	if k.TiesNotRejected && (k.ConflictScopePolicy || (k.Supports(merge.None) && !k.DirectSections)) {
		return settingErrorf(SettingSameLevelTies, "ties are kept per level: not with conflict-scope policy, nor with strategy none without direct-sections")
	}
	if len(k.SectionsUnrankedBy) > 0 && (!k.DirectSections || k.Class != Direct) {
		return settingErrorf(SettingDirectSections, "controller=... unranked clauses say how a Direct kind's policies on an object and on its sections meet: they need a Direct kind with direct-sections true")
	}
	for _, ctl := range k.SectionsUnrankedBy {
		if ctl == "" {
			return settingErrorf(SettingDirectSections, "an unranked clause names no controller")
		}
	}
	if err := k.DelegationPriority.validate(); err != nil {
		return settingErrorf(SettingDelegationPriority, "%v", err)
	}
	if k.DelegationPriority.Enabled() && (k.Class != Inherited || k.Composition != CompositionMerge || k.Supports(merge.None) ||
		k.Supports(merge.AtomicOverrides) || k.Supports(merge.PatchOverrides) || len(k.UnsupportedFields) > 0 ||
		!k.InHierarchy(topology.KindHTTPRoute) || k.InHierarchy(topology.KindNamespace)) {
		if k.Origins[SettingDelegationPriority].isProfile() {
			// A profile's setting, the CRD having changed what it
			// applies to (a Direct label): it does not apply.
			k.DelegationPriority = DelegationPriority{}
			k.Origins[SettingDelegationPriority] = FromDefault
		} else {
			return settingErrorf(SettingDelegationPriority, "parents' policies win over children's only where policies merge down a hierarchy through HTTPRoutes: an Inherited kind, composition merge, defaults strategies only (no none, no overrides), no unsupported fields, HTTPRoute and no Namespace in the hierarchy")
		}
	}
	for i, d := range k.Dependencies {
		if err := d.validate(); err != nil {
			return settingErrorf(SettingDependencies, "%v", err)
		}
		if slices.ContainsFunc(k.Dependencies[:i], func(o Dependency) bool { return o.Name == d.Name }) {
			return settingErrorf(SettingDependencies, "dependency %q is given twice", d.Name)
		}
	}
	if len(k.RequiredObjects) > 0 && k.ProgrammedWhenAccepted {
		// Programmed would both follow Accepted and say what is missing.
		if !k.Origins[SettingRequiredObjects].isProfile() {
			return settingErrorf(SettingRequiredObjects, "required objects make Programmed say what is missing; with programmed: when-accepted it follows Accepted: choose one")
		}
		// A profile's setting, the CRD having asked for the other: it
		// does not apply.
		k.RequiredObjects = nil
		k.Origins[SettingRequiredObjects] = FromDefault
	}
	for i, r := range k.RequiredObjects {
		if err := r.validate(); err != nil {
			return settingErrorf(SettingRequiredObjects, "%v", err)
		}
		if slices.ContainsFunc(k.RequiredObjects[:i], func(o RequiredObject) bool { return o.Name == r.Name }) {
			return settingErrorf(SettingRequiredObjects, "required object %q is given twice", r.Name)
		}
	}
	for _, c := range k.EffectiveListeners {
		if _, err := ParseEffectiveListeners(c); err != nil {
			return settingErrorf(SettingEffectiveListeners, "%v", err)
		}
	}
	if len(k.EffectiveListeners) > 0 && !slices.ContainsFunc(k.EffectiveSectionKinds, topology.HoldsListeners) {
		return settingErrorf(SettingEffectiveListeners, "listener conditions need listeners among the effective targets (Gateway, ListenerSet or XListenerSet sections)")
	}
	for _, ctl := range k.Controllers {
		if err := validateControllerName(ctl); err != nil {
			return settingErrorf(SettingControllers, "%v", err)
		}
	}
	if k.OtherControllersNotProgrammed && (len(k.Controllers) == 0 || k.Class != Inherited) {
		switch {
		case k.Origins[SettingOtherControllers].isProfile():
			// A profile's setting, the CRD having made the kind Direct
			// or serve any controller: nothing is another's, or no path
			// is walked.
			k.OtherControllersNotProgrammed = false
			k.Origins[SettingOtherControllers] = FromDefault
		case len(k.Controllers) == 0:
			return settingErrorf(SettingOtherControllers, "other controllers not-programmed needs the controllers the kind's implementation serves (%s)", AnnotationControllers)
		default:
			return settingErrorf(SettingOtherControllers, "other controllers not-programmed judges the paths of an Inherited kind; the class is %s", k.Class)
		}
	}
	if k.OtherControllersNotProgrammed && k.OtherControllersUnlisted {
		return settingErrorf(SettingOtherControllers, "other controllers are either not-programmed or unlisted, not both")
	}
	if k.OtherControllersUnlisted && len(k.Controllers) == 0 {
		if k.Origins[SettingOtherControllers].isProfile() {
			// A profile's setting, the CRD serving any controller:
			// nothing is another's.
			k.OtherControllersUnlisted = false
			k.Origins[SettingOtherControllers] = FromDefault
		} else {
			return settingErrorf(SettingOtherControllers, "other controllers unlisted needs the controllers the kind's implementation serves (%s)", AnnotationControllers)
		}
	}
	if k.ReachThroughGateway && k.Class != Inherited {
		if k.Origins[SettingReach].isProfile() {
			// A profile's setting, the CRD's label having made the kind
			// Direct: its paths are not walked, so it does not apply.
			k.ReachThroughGateway = false
			k.Origins[SettingReach] = FromDefault
		} else {
			return settingErrorf(SettingReach, "reach gateway narrows the paths of an Inherited kind; the class is %s", k.Class)
		}
	}
	if k.SummaryIstioWaypoint && !k.WaypointTargets && k.Origins[SettingSummary].isProfile() {
		// A profile's setting, an annotation having turned the waypoint
		// targets off: there is nothing to flatten.
		k.SummaryIstioWaypoint = false
		k.Origins[SettingSummary] = FromDefault
	}
	if k.SummaryIstioWaypoint && !k.WaypointTargets {
		// Bound, for istiod, is bound through a waypoint.
		return settingErrorf(SettingSummary, "summary istio-waypoint flattens istiod's waypoint binding of the targets: the kind needs waypoint targets (%s: istio)", AnnotationWaypointTargets)
	}
	if k.RouteParentRefs && k.Class != Inherited {
		if k.Origins[SettingRouteParents].isProfile() {
			// As reach: a Direct kind walks no paths.
			k.RouteParentRefs = false
			k.Origins[SettingRouteParents] = FromDefault
		} else {
			return settingErrorf(SettingRouteParents, "route parents parent-refs say which paths an Inherited kind walks; the class is %s", k.Class)
		}
	}
	if k.GatewaySectionsByName && (k.Class != Inherited || !k.InHierarchy(topology.KindGateway) ||
		(!k.InHierarchy(topology.KindListenerSet) && !k.InHierarchy(topology.KindXListenerSet))) {
		if k.Origins[SettingGatewaySections].isProfile() {
			// A profile's setting, the CRD's label or hierarchy leaving
			// no ListenerSet listener below a Gateway on the kind's paths.
			k.GatewaySectionsByName = false
			k.Origins[SettingGatewaySections] = FromDefault
		} else {
			return settingErrorf(SettingGatewaySections, "gateway sections by-name reach ListenerSets' listeners on the paths of an Inherited kind whose hierarchy holds the Gateway and a ListenerSet kind")
		}
	}
	if k.ReadyPathsOnly && k.Class != Inherited {
		if k.Origins[SettingPathReadiness].isProfile() {
			// As reach: a Direct kind walks no paths.
			k.ReadyPathsOnly = false
			k.Origins[SettingPathReadiness] = FromDefault
		} else {
			return settingErrorf(SettingPathReadiness, "path readiness status narrows the paths of an Inherited kind; the class is %s", k.Class)
		}
	}
	if k.WaypointTargets && !k.AllowsTarget(topology.KindService) && !k.AllowsTarget(topology.KindGatewayClass) {
		// Waypoints bind Services, and the waypoint class reaches every
		// waypoint (EnvoyFilter takes class targets only).
		return settingErrorf(SettingWaypointTargets, "waypoints bind Services and take the waypoint class's policies: neither Service nor GatewayClass is a target kind of the kind")
	}
	if k.WaypointTargets && !k.NoSectionNames {
		// istiod matches a targetRef by group, kind and name only
		// (ShouldAttachPolicy): a policy on a port would apply to the
		// whole Service.
		blamed := SettingSectionNames
		if k.Origins[SettingSectionNames] == FromDefault {
			blamed = SettingWaypointTargets
		}
		return settingErrorf(blamed, "waypoint targets are istiod's, which reads no sectionName in targetRefs (a policy naming a port applies to the whole Service): section names must be false (%s)", AnnotationSectionNames)
	}
	if k.PortSelection.Enabled() {
		if err := k.PortSelection.validate(); err != nil {
			return settingErrorf(SettingPortSelection, "%v", err)
		}
		if !slices.ContainsFunc(k.EffectiveSectionKinds, topology.HoldsListeners) {
			return settingErrorf(SettingPortSelection, "a configuration is chosen by port at listeners: the effective section kinds must include Gateway, ListenerSet or XListenerSet")
		}
		if k.Composition != CompositionMerge {
			return settingErrorf(SettingPortSelection, "a configuration is chosen in the merged policy: the composition must be merge, not %s", k.Composition)
		}
	}
	if len(k.LevelInheritedFields) > 0 && k.Composition != CompositionAdditive {
		return settingErrorf(SettingLevelInheritedFields, "level-inherited fields single out fields of an additive kind, whose policies otherwise all apply; the composition is %s", k.Composition)
	}
	for _, p := range k.LevelInheritedFields {
		if !dottedPath(p) {
			return settingErrorf(SettingLevelInheritedFields, "%q is not a dotted spec path", p)
		}
		for _, q := range k.InheritedFields {
			if p == q || strings.HasPrefix(p, q+".") || strings.HasPrefix(q, p+".") {
				return settingErrorf(SettingLevelInheritedFields, "%q overlaps the inherited field %q: a field is inherited one way", p, q)
			}
		}
	}
	k.CARefs = k.CARefs.withDefaults()
	if err := k.CARefs.validate(); err != nil {
		return settingErrorf(SettingCACertificateRefs, "%v", err)
	}
	for _, p := range k.BackendRefs {
		if err := p.validate(); err != nil {
			return settingErrorf(SettingBackendRefs, "%v", err)
		}
	}
	for i := range k.ObjectRefs {
		k.ObjectRefs[i] = k.ObjectRefs[i].withDefaults()
		if err := k.ObjectRefs[i].validate(); err != nil {
			return settingErrorf(SettingObjectRefs, "%v", err)
		}
	}
	for i, u := range k.UnsupportedFields {
		if err := u.validate(); err != nil {
			return settingErrorf(SettingUnsupportedFields, "%v", err)
		}
		if slices.ContainsFunc(k.UnsupportedFields[:i], func(o UnsupportedFields) bool { return o.Kind == u.Kind }) {
			return settingErrorf(SettingUnsupportedFields, "two entries for %s: list its fields in one", u.Kind)
		}
	}
	for _, f := range k.FailOpen {
		if err := f.validate(); err != nil {
			return settingErrorf(SettingFailOpen, "%v", err)
		}
	}
	for _, a := range k.Allowlists {
		if err := a.validate(); err != nil {
			return settingErrorf(SettingAllowlists, "%v", err)
		}
	}
	for _, r := range k.Requirements {
		if err := r.validate(); err != nil {
			return settingErrorf(SettingRequirements, "%v", err)
		}
	}
	for _, r := range k.ValueRanges {
		if err := r.validate(); err != nil {
			return settingErrorf(SettingValueRanges, "%v", err)
		}
	}
	for _, r := range k.RegexFields {
		if err := r.validate(); err != nil {
			return settingErrorf(SettingRegexFields, "%v", err)
		}
	}
	for i := range k.Validations {
		if err := k.Validations[i].compile(i); err != nil {
			return settingErrorf(SettingValidations, "policy kind %s: %v", k.GroupKind, err)
		}
	}
	for _, g := range k.FeatureGates {
		if err := g.validate(); err != nil {
			return settingErrorf(SettingFeatureGates, "%v", err)
		}
		if g.BackendKind.Kind != "" && len(k.BackendRefs) == 0 {
			return settingErrorf(SettingFeatureGates, "feature gate %s: it gates backendRefs naming %s, and the kind names no backendRefs paths (%s)", g.Feature, g.BackendKind, AnnotationBackendRefs)
		}
	}
	if k.FailureStatus != 0 && (k.FailureStatus < 100 || k.FailureStatus > 599) {
		return settingErrorf(SettingFailureStatus, "%d is not an HTTP status (100 to 599)", k.FailureStatus)
	}
	if k.RouteReplacement != 0 && (k.RouteReplacement < 100 || k.RouteReplacement > 599) {
		return settingErrorf(SettingRouteReplacement, "%d is not an HTTP status (100 to 599)", k.RouteReplacement)
	}
	if k.RouteReplacement != 0 && !slices.Contains(k.EffectiveSectionKinds, topology.KindHTTPRoute) && !slices.Contains(k.EffectiveSectionKinds, topology.KindGRPCRoute) {
		return settingErrorf(SettingRouteReplacement, "route replacement replaces route rules, which must then be effective targets: add HTTPRoute or GRPCRoute to the effective section kinds")
	}
	if k.RefsAfterConflicts && !k.InvalidNotApplied {
		return settingErrorf(SettingInvalidPolicies, "%s qualifies not-applied", refsAfterConflicts)
	}
	if k.RefsAfterConflicts && !k.ConflictScopePolicy {
		// Only a policy rejected as a whole is taken out of every level
		// after the conflicts: elsewhere it would stay in effect.
		return settingErrorf(SettingInvalidPolicies, "%s needs conflicts of whole policies (%s: policy)", refsAfterConflicts, AnnotationConflictScope)
	}
	if r := k.BackendRefRules.GrantReason; r != "" && (!conditionReason.MatchString(r) || len(r) > 1024) {
		return settingErrorf(SettingUnresolvedBackendRefs, "%s%s: not a condition reason (CamelCase: a letter, then letters, digits, '_', ',' or ':')", backendRuleGrantReason, r)
	}
	if k.BackendRefRules != (BackendRefRules{}) && !k.InvalidOnUnresolvedBackendRefs {
		return settingErrorf(SettingUnresolvedBackendRefs, "%s tells how invalid judges backendRefs", k.BackendRefRules)
	}
	if k.BackendRefAncestorGateways && len(k.BackendRefs) == 0 {
		return settingErrorf(SettingBackendRefs, "%s needs paths", backendRefAncestorsGateways)
	}
	if k.InvalidOnUnresolvedBackendRefs && len(k.BackendRefs) == 0 {
		return settingErrorf(SettingUnresolvedBackendRefs, "invalid needs the paths where policies name backends (%s)", AnnotationBackendRefs)
	}
	if err := k.ClusterIPRouting.validate(); err != nil {
		return settingErrorf(SettingClusterIPRouting, "%v", err)
	}
	if k.ClusterIPRouting != "" && !k.InvalidOnUnresolvedBackendRefs {
		return settingErrorf(SettingClusterIPRouting, "it tells how backendRefs are checked, which needs %s: invalid", AnnotationUnresolvedBackendRefs)
	}
	if k.ConflictScopePolicy && !k.RejectsAtOneLevel() {
		return settingErrorf(SettingConflictScope, "conflict scope policy needs a same-level rule that rejects policies at one level (oldest-wins, merge-disjoint), not %s", k.SameLevel)
	}
	seen := map[topology.GroupKind]bool{}
	for _, gk := range k.Hierarchy {
		if seen[gk] {
			return settingErrorf("hierarchy", "hierarchy names %s twice", gk)
		}
		seen[gk] = true
	}
	// A kind whose sections are effective targets has them among its
	// effective target kinds too.
	for _, gk := range k.EffectiveSectionKinds {
		if !slices.Contains(k.EffectiveTargetKinds, gk) {
			k.EffectiveTargetKinds = append(k.EffectiveTargetKinds, gk)
		}
	}
	k.TargetKinds, k.EffectiveTargetKinds = dedupe(k.TargetKinds), dedupe(k.EffectiveTargetKinds)
	k.EffectiveSectionKinds = dedupe(k.EffectiveSectionKinds)
	if k.Class == Inherited {
		// An Inherited kind reaches its effective targets along paths of
		// its hierarchy: a target or effective target outside it could
		// never take part in a context.
		for _, gk := range k.TargetKinds {
			if !seen[gk] {
				return settingErrorf("targetKinds", "target kind %s is not in the hierarchy (%s); add it there or remove it", gk, kindsString(k.Hierarchy))
			}
		}
		for _, gk := range k.EffectiveTargetKinds {
			if !seen[gk] {
				if slices.Contains(k.EffectiveSectionKinds, gk) {
					return settingErrorf(SettingEffectiveSectionKinds, "effective section kind %s is not in the hierarchy (%s); add it there or remove it", gk, kindsString(k.Hierarchy))
				}
				return settingErrorf("effectiveTargetKinds", "effective target kind %s is not in the hierarchy (%s); add it there or remove it", gk, kindsString(k.Hierarchy))
			}
		}
	}
	if slices.Contains(k.Strategies, merge.None) && len(k.Strategies) > 1 {
		return settingErrorf("strategies", "merge strategy none cannot be combined with other strategies (GEP-713)")
	}
	if slices.Contains(k.Strategies, merge.Custom) && k.Custom == nil {
		return settingErrorf("strategies", "merge strategy custom needs a Go merge function registered with the kind")
	}
	// Keep GEP-713's order of preference so the first supported one is the default.
	ordered := make([]merge.Strategy, 0, len(k.Strategies))
	for _, s := range merge.All {
		if slices.Contains(k.Strategies, s) {
			ordered = append(ordered, s)
		}
	}
	k.Strategies = ordered
	return nil
}

// annotationOf maps a setting (as keyed in Kind.Origins) to its annotation.
var annotationOf = map[string]string{
	SettingTargetKinds:           AnnotationTargetKinds,
	SettingEffectiveTargetKinds:  AnnotationEffectiveTargetKinds,
	SettingEffectiveSectionKinds: AnnotationEffectiveSectionKinds,
	SettingHierarchy:             AnnotationHierarchy,
	SettingStrategies:            AnnotationMergeStrategies,
	SettingSameLevel:             AnnotationSameLevel,
	SettingMergeTypeField:        AnnotationMergeTypeField,
	SettingComposition:           AnnotationComposition,
	SettingNamedRules:            AnnotationNamedRules,
	SettingOneofs:                AnnotationOneofs,
	SettingDirectSections:        AnnotationDirectSections,
	SettingAncestor:              AnnotationAncestor,
	SettingAncestorLimit:         AnnotationAncestorLimit,
	SettingTargetingFields:       AnnotationTargetingFields,
	SettingSchemaMerge:           AnnotationSchemaMerge,
	SettingMaxTargetRefs:         AnnotationMaxTargetRefs,
	SettingStanzas:               AnnotationStanzas,
	SettingSectionNames:          AnnotationSectionNames,
	SettingEmptyTargetGroup:      AnnotationEmptyTargetGroup,
	SettingUntargetedScope:       AnnotationUntargetedScope,
	SettingPortSelection:         AnnotationPortSelection,
	SettingSharedPortListeners:   AnnotationSharedPortListeners,
	SettingDataPlaneTarget:       AnnotationDataPlaneTarget,
	SettingOverriddenBy:          AnnotationOverriddenBy,
	SettingReach:                 AnnotationReach,
	SettingSummary:               AnnotationSummary,
	SettingRouteParents:          AnnotationRouteParents,
	SettingPathReadiness:         AnnotationPathReadiness,
	SettingPartlyOverridden:      AnnotationPartlyOverridden,
	SettingWeightAnnotation:      AnnotationWeightAnnotation,
	SettingDelegationPriority:    AnnotationDelegationPriority,
	SettingWaypointTargets:       AnnotationWaypointTargets,
	SettingControllers:           AnnotationControllers,
	SettingOtherControllers:      AnnotationOtherControllers,
	SettingGatewaySections:       AnnotationGatewaySections,
	SettingDependencies:          AnnotationDependencies,
	SettingRequiredObjects:       AnnotationRequiredObjects,
	SettingEffectiveListeners:    AnnotationEffectiveListeners,
	SettingConflictScope:         AnnotationConflictScope,
	SettingRouteOverlap:          AnnotationRouteOverlap,
	SettingInvalidPolicies:       AnnotationInvalidPolicies,
	SettingMissingTargets:        AnnotationMissingTargets,
	SettingProgrammed:            AnnotationProgrammed,
	SettingFilterAttachment:      AnnotationFilterAttachment,
	SettingConflictFields:        AnnotationConflictFields,
	SettingNotInListenerSets:     AnnotationNotInListenerSets,
	SettingInheritedFields:       AnnotationInheritedFields,
	SettingLevelInheritedFields:  AnnotationLevelInheritedFields,
	SettingCACertificateRefs:     AnnotationCACertificateRefs,
	SettingBackendRefs:           AnnotationBackendRefs,
	SettingUnresolvedBackendRefs: AnnotationUnresolvedBackendRefs,
	SettingClusterIPRouting:      AnnotationClusterIPRouting,
	SettingObjectRefs:            AnnotationObjectRefs,
	SettingUnsupportedFields:     AnnotationUnsupportedFields,
	SettingFailureStatus:         AnnotationFailureStatus,
	SettingRouteReplacement:      AnnotationRouteReplacement,
	SettingFailOpen:              AnnotationFailOpen,
	SettingSameLevelTies:         AnnotationSameLevelTies,
	SettingAllowlists:            AnnotationAllowlists,
	SettingRequirements:          AnnotationRequirements,
	SettingValueRanges:           AnnotationValueRanges,
	SettingRegexFields:           AnnotationRegexFields,
	SettingValidations:           AnnotationValidations,
	SettingFeatureGates:          AnnotationFeatureGates,
}

// allSettings lists every setting, in the order they are shown.
var allSettings = []string{
	SettingClass, SettingTargetKinds, SettingEffectiveTargetKinds, SettingEffectiveSectionKinds,
	SettingHierarchy, SettingStrategies, SettingSameLevel, SettingSameLevelTies, SettingMergeTypeField, SettingComposition,
	SettingNamedRules, SettingOneofs, SettingDirectSections, SettingAncestor, SettingAncestorLimit, SettingTargetingFields, SettingSchemaMerge, SettingMaxTargetRefs, SettingStanzas,
	SettingSectionNames, SettingEmptyTargetGroup, SettingUntargetedScope, SettingPortSelection, SettingSharedPortListeners, SettingDataPlaneTarget, SettingOverriddenBy, SettingReach, SettingRouteParents, SettingPathReadiness, SettingPartlyOverridden, SettingWeightAnnotation,
	SettingDelegationPriority, SettingWaypointTargets, SettingSummary, SettingControllers, SettingOtherControllers, SettingGatewaySections, SettingDependencies, SettingRequiredObjects, SettingEffectiveListeners, SettingConflictScope, SettingRouteOverlap, SettingInvalidPolicies, SettingMissingTargets, SettingProgrammed, SettingFilterAttachment, SettingConflictFields, SettingNotInListenerSets, SettingInheritedFields,
	SettingLevelInheritedFields, SettingCACertificateRefs, SettingBackendRefs, SettingUnresolvedBackendRefs, SettingClusterIPRouting, SettingObjectRefs,
	SettingUnsupportedFields, SettingFailureStatus, SettingRouteReplacement, SettingFailOpen, SettingAllowlists, SettingRequirements, SettingValueRanges, SettingRegexFields, SettingValidations, SettingFeatureGates,
}

// Settings lists the names of every setting of a kind, the keys of
// Kind.Origins, in the order they are shown.
func Settings() []string { return slices.Clone(allSettings) }

// fillDefaultOrigins marks every setting nothing gave as a default.
func (k *Kind) fillDefaultOrigins() {
	for _, name := range allSettings {
		if _, ok := k.Origins[name]; !ok {
			k.Origins[name] = FromDefault
		}
	}
}

// KindFromCRD reads a policy kind from a CustomResourceDefinition object. It
// returns (nil, nil) when the CRD is not labelled as a policy kind, and a
// problem naming the CRD and the offending label or annotation when the
// descriptor is invalid. custom, when not nil, is the kind's Custom merge
// function (registered from Go by an implementer).
func KindFromCRD(crd *unstructured.Unstructured, custom merge.CustomFunc) (*Kind, *diag.Problem) {
	return KindFromCRDWithProfile(crd, custom, nil)
}

// KindFromCRDWithProfile is KindFromCRD with the built-in profile of the
// CRD's kind, when there is one: the CRD is then a policy kind even without
// the label, and the label and every attache.dev/* annotation replace the
// profile's setting of the same name. Bare kind names in annotations resolve
// among the topology's kinds (topology.ResolveGroupKind).
func KindFromCRDWithProfile(crd *unstructured.Unstructured, custom merge.CustomFunc, prof *Profile) (*Kind, *diag.Problem) {
	ref := topology.Ref{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: crd.GetName()}
	label, labelled := crd.GetLabels()[LabelPolicy]
	if !labelled && prof == nil {
		return nil, nil
	}
	fail := func(field, format string, args ...any) (*Kind, *diag.Problem) {
		p := diag.Newf(ref, field, format, args...)
		return nil, &p
	}
	k := &Kind{Origins: map[string]Origin{}, Custom: custom}
	if labelled && prof != nil && prof.ShippedLabel != "" && strings.EqualFold(strings.TrimSpace(label), prof.ShippedLabel) {
		labelled = false // the implementation's own label: the profile knows better
	}
	if labelled {
		k.Origins[SettingClass] = FromLabel
		switch strings.ToLower(strings.TrimSpace(label)) {
		case "direct", "true":
			k.Class = Direct
		case "inherited":
			k.Class = Inherited
		default:
			return fail("metadata.labels["+LabelPolicy+"]", "value %q is not Direct, Inherited or true", label)
		}
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	if kind == "" {
		return fail("spec.names.kind", "policy CRD has no kind name")
	}
	k.GroupKind = topology.GroupKind{Group: group, Kind: kind}
	k.Schema = SpecSchema(crd)
	ann := crd.GetAnnotations()
	annField := func(key string) string { return "metadata.annotations[" + key + "]" }
	kinds := func(key, name string, dst *[]topology.GroupKind) *diag.Problem {
		v, ok := ann[key]
		if !ok {
			return nil
		}
		k.Origins[name] = FromAnnotation
		for _, s := range splitList(v) {
			gk, err := topology.ResolveGroupKind(s, topology.KnownKinds())
			if err != nil {
				_, p := fail(annField(key), "%v", err)
				return p
			}
			*dst = append(*dst, gk)
		}
		if len(*dst) == 0 {
			_, p := fail(annField(key), "lists no kinds")
			return p
		}
		return nil
	}
	for _, x := range []struct {
		key, name string
		dst       *[]topology.GroupKind
	}{
		{AnnotationTargetKinds, SettingTargetKinds, &k.TargetKinds},
		{AnnotationEffectiveTargetKinds, SettingEffectiveTargetKinds, &k.EffectiveTargetKinds},
		{AnnotationEffectiveSectionKinds, SettingEffectiveSectionKinds, &k.EffectiveSectionKinds},
		{AnnotationHierarchy, SettingHierarchy, &k.Hierarchy},
	} {
		if p := kinds(x.key, x.name, x.dst); p != nil {
			return nil, p
		}
	}
	if v, ok := ann[AnnotationMergeStrategies]; ok {
		k.Origins[SettingStrategies] = FromAnnotation
		for _, s := range splitList(v) {
			st, err := merge.ParseStrategy(s)
			if err != nil {
				return fail(annField(AnnotationMergeStrategies), "%v", err)
			}
			k.Strategies = append(k.Strategies, st)
		}
		if len(k.Strategies) == 0 {
			return fail(annField(AnnotationMergeStrategies), "lists no strategies")
		}
	}
	type word struct {
		key, name string
		set       func(string) error
	}
	for _, w := range []word{
		{AnnotationSameLevel, SettingSameLevel, func(v string) (err error) { k.SameLevel, err = ParseSameLevel(v); return }},
		{AnnotationSameLevelTies, SettingSameLevelTies, func(v string) (err error) {
			k.TiesNotRejected, err = parseChoice(v, "none", "name", "same-level ties")
			return
		}},
		{AnnotationComposition, SettingComposition, func(v string) (err error) { k.Composition, err = ParseComposition(v); return }},
		{AnnotationAncestor, SettingAncestor, func(v string) (err error) {
			k.Ancestor, k.AncestorServiceGatewaysBy, err = ParseAncestor(v)
			return
		}},
		{AnnotationAncestorLimit, SettingAncestorLimit, func(v string) (err error) { k.AncestorLimit, err = ParseAncestorLimitMode(v); return }},
		{AnnotationDirectSections, SettingDirectSections, func(v string) (err error) {
			k.DirectSections, k.SectionsUnrankedBy, err = ParseDirectSections(v)
			return
		}},
		{AnnotationSchemaMerge, SettingSchemaMerge, func(v string) (err error) { k.SchemaMerge, err = parseBool(v); return }},
		{AnnotationStanzas, SettingStanzas, func(v string) (err error) {
			var b bool
			b, err = parseBool(v)
			k.NoStanzas = !b
			return
		}},
		{AnnotationEmptyTargetGroup, SettingEmptyTargetGroup, func(v string) (err error) {
			k.EmptyTargetGroupCore, err = parseChoice(v, "core", "resolve", "empty target group rule")
			return
		}},
		{AnnotationSectionNames, SettingSectionNames, func(v string) (err error) {
			if strings.TrimSpace(v) == "ignored" {
				k.NoSectionNames, k.SectionNamesIgnored = true, true
				return nil
			}
			b, err := parseBool(v)
			if err != nil {
				return fmt.Errorf("%q is neither true, false nor ignored", strings.TrimSpace(v))
			}
			k.NoSectionNames, k.SectionNamesIgnored = !b, false
			return nil
		}},
		{AnnotationMaxTargetRefs, SettingMaxTargetRefs, func(v string) (err error) { k.MaxTargetRefs, err = parseMaxTargetRefs(v); return }},
		{AnnotationMergeTypeField, SettingMergeTypeField, func(v string) error { k.MergeTypeField = strings.TrimSpace(v); return nil }},
		{AnnotationNamedRules, SettingNamedRules, func(v string) error { k.NamedRules = splitList(v); return nil }},
		{AnnotationOneofs, SettingOneofs, func(v string) (err error) { k.Oneofs, err = ParseOneofs(v); return }},
		{AnnotationTargetingFields, SettingTargetingFields, func(v string) error { k.TargetingFields = splitList(v); return nil }},
		{AnnotationUntargetedScope, SettingUntargetedScope, func(v string) (err error) { k.Untargeted, err = ParseUntargetedScope(v); return }},
		{AnnotationPortSelection, SettingPortSelection, func(v string) (err error) { k.PortSelection, err = ParsePortSelection(v); return }},
		{AnnotationSharedPortListeners, SettingSharedPortListeners, func(v string) (err error) { k.RejectSharedPort, err = parseSharedPort(v); return }},
		{AnnotationDataPlaneTarget, SettingDataPlaneTarget, func(v string) (err error) { k.DataPlaneTarget, err = parseBool(v); return }},
		{AnnotationOverriddenBy, SettingOverriddenBy, func(v string) (err error) { k.OverriddenByPresence, err = parseOverriddenBy(v); return }},
		{AnnotationReach, SettingReach, func(v string) (err error) {
			k.ReachThroughGateway, err = parseChoice(v, "gateway", "any", "reach")
			return
		}},
		{AnnotationSummary, SettingSummary, func(v string) (err error) {
			k.SummaryIstioWaypoint, err = parseChoice(v, "istio-waypoint", "attache", "summary")
			return
		}},
		{AnnotationRouteParents, SettingRouteParents, func(v string) (err error) {
			k.RouteParentRefs, err = parseChoice(v, "parent-refs", "admitted", "route parents")
			return
		}},
		{AnnotationPathReadiness, SettingPathReadiness, func(v string) (err error) {
			k.ReadyPathsOnly, err = parseChoice(v, "status", "ignored", "path readiness")
			return
		}},
		{AnnotationPartlyOverridden, SettingPartlyOverridden, func(v string) (err error) {
			k.PartlyOverriddenNotProgrammed, err = parseChoice(v, "not-programmed", "programmed", "partly-overridden rule")
			return
		}},
		{AnnotationWeightAnnotation, SettingWeightAnnotation, func(v string) error { k.WeightAnnotation = strings.TrimSpace(v); return nil }},
		{AnnotationControllers, SettingControllers, func(v string) (err error) { k.Controllers, err = ParseControllers(v); return }},
		{AnnotationOtherControllers, SettingOtherControllers, func(v string) (err error) {
			k.OtherControllersNotProgrammed, k.OtherControllersUnlisted, err = ParseOtherControllers(v)
			return
		}},
		{AnnotationGatewaySections, SettingGatewaySections, func(v string) (err error) {
			k.GatewaySectionsByName, err = parseChoice(v, GatewaySectionsByName, GatewaySectionsOwn, "gateway-sections rule")
			return
		}},
		{AnnotationDependencies, SettingDependencies, func(v string) (err error) {
			k.Dependencies, err = ParseDependencies(v)
			return
		}},
		{AnnotationRequiredObjects, SettingRequiredObjects, func(v string) (err error) {
			k.RequiredObjects, err = ParseRequiredObjects(v)
			return
		}},
		{AnnotationEffectiveListeners, SettingEffectiveListeners, func(v string) (err error) {
			k.EffectiveListeners, err = ParseEffectiveListeners(v)
			return
		}},
		{AnnotationWaypointTargets, SettingWaypointTargets, func(v string) (err error) {
			k.WaypointTargets, err = parseChoice(v, "istio", "none", "waypoint-targets rule")
			return
		}},
		{AnnotationDelegationPriority, SettingDelegationPriority, func(v string) (err error) {
			k.DelegationPriority, err = ParseDelegationPriority(v)
			return
		}},
		{AnnotationConflictScope, SettingConflictScope, func(v string) (err error) { k.ConflictScopePolicy, err = parseConflictScope(v); return }},
		{AnnotationRouteOverlap, SettingRouteOverlap, func(v string) (err error) {
			k.RejectRouteOverlap, err = parseChoice(v, "reject", "allow", "route-overlap rule")
			return
		}},
		{AnnotationInvalidPolicies, SettingInvalidPolicies, func(v string) (err error) {
			k.InvalidNotApplied, k.RefsAfterConflicts, err = ParseInvalidPolicies(v)
			return
		}},
		{AnnotationMissingTargets, SettingMissingTargets, func(v string) (err error) {
			k.MissingTargetsUnlisted, err = parseChoice(v, MissingTargetsProblem, MissingTargetsEntry, "missing-targets rule")
			return
		}},
		{AnnotationProgrammed, SettingProgrammed, func(v string) (err error) {
			k.ProgrammedWhenAccepted, err = parseChoice(v, ProgrammedWhenAccepted, ProgrammedGEP, "programmed rule")
			return
		}},
		{AnnotationConflictFields, SettingConflictFields, func(v string) error { k.ConflictFields = splitList(v); return nil }},
		{AnnotationNotInListenerSets, SettingNotInListenerSets, func(v string) error { k.NotInListenerSets = splitList(v); return nil }},
		{AnnotationInheritedFields, SettingInheritedFields, func(v string) error { k.InheritedFields = splitList(v); return nil }},
		{AnnotationLevelInheritedFields, SettingLevelInheritedFields, func(v string) error { k.LevelInheritedFields = splitList(v); return nil }},
		{AnnotationCACertificateRefs, SettingCACertificateRefs, func(v string) (err error) { k.CARefs, err = ParseCARefs(v); return }},
		{AnnotationBackendRefs, SettingBackendRefs, func(v string) (err error) {
			k.BackendRefs, k.BackendRefAncestorGateways, err = ParseBackendRefSetting(v)
			return
		}},
		{AnnotationUnresolvedBackendRefs, SettingUnresolvedBackendRefs, func(v string) (err error) {
			k.InvalidOnUnresolvedBackendRefs, k.BackendRefRules, err = ParseUnresolvedBackendRefs(v)
			return
		}},
		{AnnotationClusterIPRouting, SettingClusterIPRouting, func(v string) (err error) { k.ClusterIPRouting, err = ParseClusterIPRouting(v); return }},
		{AnnotationObjectRefs, SettingObjectRefs, func(v string) (err error) { k.ObjectRefs, err = ParseObjectRefs(v); return }},
		{AnnotationFailureStatus, SettingFailureStatus, func(v string) (err error) { k.FailureStatus, err = parseFailureStatus(v); return }},
		{AnnotationRouteReplacement, SettingRouteReplacement, func(v string) (err error) { k.RouteReplacement, err = parseFailureStatus(v); return }},
		{AnnotationFailOpen, SettingFailOpen, func(v string) (err error) { k.FailOpen, err = ParseFailOpen(v); return }},
		{AnnotationAllowlists, SettingAllowlists, func(v string) (err error) { k.Allowlists, err = ParseAllowlists(v); return }},
		{AnnotationRequirements, SettingRequirements, func(v string) (err error) { k.Requirements, err = ParseRequirements(v); return }},
		{AnnotationValueRanges, SettingValueRanges, func(v string) (err error) { k.ValueRanges, err = ParseValueRanges(v); return }},
		{AnnotationRegexFields, SettingRegexFields, func(v string) (err error) { k.RegexFields, err = ParseRegexFields(v); return }},
		{AnnotationValidations, SettingValidations, func(v string) (err error) {
			if k.Validations, err = ParseValidations(v); err != nil {
				err = fmt.Errorf("policy kind %s: %w", k.GroupKind, err)
			}
			return
		}},
		{AnnotationFeatureGates, SettingFeatureGates, func(v string) (err error) { k.FeatureGates, err = ParseFeatureGates(v); return }},
		{AnnotationUnsupportedFields, SettingUnsupportedFields, func(v string) (err error) {
			k.UnsupportedFields, err = ParseUnsupportedFields(v)
			return
		}},
		{AnnotationFilterAttachment, SettingFilterAttachment, func(v string) (err error) {
			k.FilterAttachment, k.MissingFilterStatus, err = parseFilterAttachment(v)
			return
		}},
	} {
		v, ok := ann[w.key]
		if !ok {
			continue
		}
		k.Origins[w.name] = FromAnnotation
		if err := w.set(v); err != nil {
			return fail(annField(w.key), "%v", err)
		}
	}
	if prof != nil {
		k.Implementation = prof.Implementation
		k.apply(prof.Spec, FromProfile(prof.Implementation), false)
	}
	if k.Class == "" {
		// Unreachable for the built-in profiles, which all give a class.
		return fail("metadata.labels["+LabelPolicy+"]", "no class: label the CRD Direct or Inherited")
	}
	k.fillDefaultOrigins()
	if err := k.complete(); err != nil {
		// Name the annotation the offending setting came from.
		field := "metadata.annotations"
		var se *settingError
		if errors.As(err, &se) {
			if key, ok := annotationOf[se.setting]; ok {
				field = annField(key)
				if o := k.Origins[se.setting]; o != FromAnnotation && o != FromDefault {
					return fail(field, "%v (setting %s from %s)", err, se.setting, o)
				}
			}
		}
		return fail(field, "%v", err)
	}
	return k, nil
}

// CRDVersion returns the entry of spec.versions that readers of the CRD's
// objects use: the storage version, else the first one; with servedOnly,
// among the served versions only. Nil when there is none.
func CRDVersion(crd *unstructured.Unstructured, servedOnly bool) map[string]any {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var chosen map[string]any
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if served, _ := m["served"].(bool); servedOnly && !served {
			continue
		}
		if chosen == nil {
			chosen = m
		}
		if st, _ := m["storage"].(bool); st {
			return m
		}
	}
	return chosen
}

// SpecSchema returns the openAPIV3Schema of spec of the CRD's storage
// version (else its first version), or nil when the CRD has none.
func SpecSchema(crd *unstructured.Unstructured) map[string]any {
	chosen := CRDVersion(crd, false)
	if chosen == nil {
		return nil
	}
	spec, _, _ := unstructured.NestedMap(chosen, "schema", "openAPIV3Schema", "properties", "spec")
	return spec
}

// LooksLikePolicy reports whether a CRD's spec schema has the fields of a
// policy (targetRef, targetRefs or targetSelectors): a kind that is likely a
// policy kind though neither labelled nor known to a profile.
func LooksLikePolicy(crd *unstructured.Unstructured) bool {
	props, _, _ := unstructured.NestedMap(SpecSchema(crd), "properties")
	for _, f := range []string{"targetRef", "targetRefs", "targetSelectors"} {
		if _, ok := props[f]; ok {
			return true
		}
	}
	return false
}

// dedupe drops repeated kinds, keeping the first of each.
func dedupe(gks []topology.GroupKind) []topology.GroupKind {
	out := gks[:0:0]
	for _, gk := range gks {
		if !slices.Contains(out, gk) {
			out = append(out, gk)
		}
	}
	return out
}

func kindsString(gks []topology.GroupKind) string {
	s := make([]string, len(gks))
	for i, gk := range gks {
		s[i] = gk.String()
	}
	return strings.Join(s, ", ")
}

// dottedPath reports whether p is a dotted spec path: non-empty segments
// separated by dots.
func dottedPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, ".") && !strings.HasSuffix(p, ".") && !strings.Contains(p, "..")
}
