package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultNamespace is given to namespaced objects that name no namespace.
const DefaultNamespace = "default"

// crdGroupKind identifies CustomResourceDefinition objects.
var crdGroupKind = topology.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// attachment is a policy attached to one node (one resolved declared target).
type attachment struct {
	id     merge.Src
	pol    *pstate
	node   topology.NodeID
	nsName string // set for attachments to a Namespace
	spec   *merge.Tree
	ref    *Attachment
	// dead is set when an update removed the policy: the id stays taken.
	dead bool
	// filter is, for an attachment made by a route rule's ExtensionRef
	// filter (FilterAttachment), the filter's position plus one: such
	// attachments rank first at their rule, in filter order. 0 otherwise.
	filter int
	// Tallies over the contexts it is part of (see kindDP.tally): counts,
	// so that an update can take contexts back.
	reach        Reach
	conflicted   int
	conflictedBy map[*Attachment]int          // winners that rejected it (strategy none)
	lostTo       map[merge.Src]map[string]int // winner attachment id -> fields
	affects      map[topology.NodeID]int      // effective targets it contributes to
	// unsupported counts, per effective target, the contexts where it was
	// dropped for the fields its merge would set (StackEntry.Unsupported).
	unsupported map[topology.NodeID]int
	// lossMsg caches lossSummary of this attachment alone; nil when the
	// fields it lost changed since.
	lossMsg *string
	// failedOpen are the parts of the policy left out of spec at this
	// target (policy.Policy.WithoutFailedOpen): its references there do
	// not resolve, all in parts that fail open.
	failedOpen []string
	// openFields and fullSpec, when failedOpen is set, are the broken
	// fields that fail open and the policy's whole spec: its
	// implementation judges a merged policy's flags, not the policy's
	// (mergeFailOpen).
	openFields []string
	fullSpec   *merge.Tree
	// broken are the fields of its references that do not resolve at
	// this target, and of its values refused there, when they fail the
	// policy closed: a policy with a merge type below it whose merged
	// spec holds one fails too (see mergeBroken).
	broken []string
	// mergeBroken counts, per effective target, the contexts where its
	// merged spec (a policy with a merge type) holds a broken field of a
	// policy above it.
	mergeBroken map[topology.NodeID]int
	// notVia are the Gateways through which the policy is not applied at
	// this target, for a kind leaving out what its implementation cannot
	// translate when the parameters of those Gateways' data planes refuse
	// it (notAppliedVia); nowhere says that is every Gateway of its
	// implementation above the target: it then applies nowhere, but
	// still takes part in conflicts (rejectWhole). nowhere without notVia:
	// its references do not resolve, which its implementation judges
	// after conflicts (policy.Kind.RefsAfterConflicts).
	notVia  []topology.Ref
	nowhere bool
	// notViaReason is the reason its implementation gives for that
	// (policy.Requirement.Reason), "" for Invalid.
	notViaReason string
	// hostInvalid is, for a target one implementation of the kind calls
	// Invalid while another applies the policy there (istiod and
	// kgateway's waypoint class), the first's message: the ancestor says
	// Invalid, the contexts hold the policy.
	hostInvalid string
}

// pstate is a policy being processed.
type pstate struct {
	p         *policy.Policy
	reach     Reach // over distinct contexts, all attachments together
	ancestors []ancestorState
	atts      []*attachment
	attached  map[topology.NodeID]bool // nodes in atts
	// noTarget says why declared targets resolved to nothing (selectors).
	noTarget []string
	// missingDeps says what its kind's implementation needs that is not
	// installed (policy.Kind.MissingDependencies): it attaches nowhere.
	missingDeps string
	// unread are the declared targets not found whose objects the caller
	// could not read (Options.Unread): not judged.
	unread []topology.Ref
	// refsInvalid: its references do not resolve or its values are out of
	// range (untranslatable), so it is Invalid in place; with a merge type
	// it then merges with nothing (its implementation fails the merged
	// policy too). Set when it attaches; a change of what it names
	// attaches it anew.
	refsInvalid bool
	// targetProblems are the invalid targets, reported as problems of the
	// input too; kept with the policy, so that an update replaces them.
	targetProblems []diag.Problem
	// unlisted are the declared targets that do not resolve, left out of
	// the status of a kind whose implementation lists none of them
	// (unlistMissing), as problems; set with the status.
	unlisted []diag.Problem
	// lossMsg caches lossSummary of all its attachments, and affects the
	// sorted effective targets it contributes to; nil when stale. A
	// policy high in the hierarchy shares contexts with every change
	// below it: these keep its status cheap to derive again.
	lossMsg *string
	affects []topology.Ref
	// rejectedBy, for a kind whose conflict scope is the policy, is the
	// attachment of the policy that rejected it at one of its targets (at
	// its own attachment rejectedAt): it then applies nowhere.
	rejectedBy, rejectedAt *attachment
	// overLimit, for a kind that skips the ancestors its status cannot
	// list (policy.AncestorLimitSkip), are the declared targets left
	// unattached because the list was full.
	overLimit []topology.Ref
}

type ancestorState struct {
	ref    topology.Ref
	att    *attachment // nil when not accepted
	reason string
	msg    string
	// foreign: not found because it is another implementation's
	// (notServed), which a summary flattened as istiod's reads as istiod
	// does (istioWaypointSummary).
	foreign bool
}

// computation holds the state of a computation. Compute uses it once; an
// Incremental keeps it and updates it.
type computation struct {
	opts Options
	// delegationValues are, per annotation a kind's delegation priority
	// reads, its value on each HTTPRoute that has it.
	delegationValues map[string]map[topology.Ref]string
	// adm is what route delegation keeps of the delegated child routes'
	// rules (nil when no route delegates).
	adm *admission
	// boundServices are the Services bound to each waypoint Gateway
	// (waypointServices), computed once; crossBound those bound to one
	// of Istio's waypoints of another namespace, under both namespaces,
	// and crossBoundAll all of them: the namespace-wide Telemetries
	// istiod reads for their chains at the waypoint are attached to them
	// (resolveUntargeted).
	boundServices   map[topology.Ref][]topology.NodeID
	serviceWaypoint map[topology.NodeID]topology.Ref
	crossBound      map[string][]topology.NodeID
	crossBoundAll   []topology.NodeID
	// serviceCanary are the canary waypoints of the Services that have
	// one (canaryOf), which boundServices lists under them too;
	// canaryWeights the istio.io/use-waypoint-canary-weight annotations
	// of Services, ServiceEntries and Namespaces.
	serviceCanary map[topology.NodeID]topology.Ref
	canaryWeights map[topology.Ref]string
	waypointOnce  sync.Once
	graph         *topology.Graph
	grants        *gatewayapi.Grants
	kinds         map[topology.GroupKind]*policy.Kind
	policies      []*pstate // sorted by ref
	byRef         map[topology.Ref]*pstate
	atts          []*attachment
	attByRef      map[*Attachment]merge.Src
	sources       map[topology.Ref]string // where each object came from
	// sourcesMoved is set once an Incremental saw an unchanged object's
	// document move: problems kept from before name the old source.
	sourcesMoved bool
	// problems are those of the input but policies; a policy's own are in
	// its Policy.Problems and its pstate's targetProblems.
	problems []diag.Problem
	// invalidKinds are the kinds whose CRD is invalid, with its name.
	invalidKinds map[topology.GroupKind]string
	// clusterKinds are the kinds whose CRD has scope Cluster.
	clusterKinds map[topology.GroupKind]bool
	dps          map[*policy.Kind]*kindDP
	// parentRefs are the routes' spec.parentRefs as written (namespace
	// defaulted), for ancestors named after Gateways (see gatewayAncestors).
	parentRefs map[topology.Ref][]topology.Ref
	// gateways are the facts about Gateways that untargeted Istio
	// policies are matched with (only when a kind has such a scope).
	gateways map[topology.Ref]gatewayFacts
	// classControllers are the GatewayClasses' controllerNames, read with
	// gateways.
	classControllers map[string]string
	// controllerAliases map a controller name an implementation's
	// configuration gives (Envoy Gateway's gateway.controllerName) to
	// the default name its profiles know it by.
	controllerAliases map[string]string
	// classParams are the GatewayClass parameters among the objects
	// (profiles.IsClassParameters), and mergedClasses what they say of
	// their classes' Gateways (readMergedClasses), only when a kind asks
	// which Gateways share a data plane (needsDataPlanes).
	classParams map[topology.Ref]*unstructured.Unstructured
	// classParamRefs are the parametersRef of each GatewayClass among the
	// objects that names class parameters (profiles.ClassParametersRef).
	classParamRefs map[string]topology.Ref
	// gatewayParamRefs are the EnvoyProxies Gateways among the objects
	// name as their own parameters (profiles.GatewayParametersRef), by
	// Gateway.
	gatewayParamRefs map[topology.Ref]topology.Ref
	// gwParams are the EnvoyProxies the Gateways run with
	// (readGatewayParams).
	gwParams      map[topology.Ref]gwParams
	mergedClasses map[string]classMerge
	// classNames are the GatewayClasses among the objects (with
	// mergedClasses).
	classNames []string
	// listenerPorts are the listeners' ports, for kinds that reject
	// shared ports (only when a kind does).
	listenerPorts map[topology.Ref]listenerPort
	// routeFacts are the routes' hostnames and match counts, and
	// listenerFacts what rules reading listener see of each listener
	// (built on first use), for kinds with such rules.
	routeFacts    map[topology.Ref]routeFacts
	listenerFacts map[topology.Ref]policy.ListenerFacts
	// listenerVerdicts are what rules reading listener said of a policy at
	// a listener, and claimedListeners the listeners (and ListenerSets)
	// each such kind's policies target (both built on first use).
	listenerVerdicts map[listenerVerdict][]policy.FieldProblem
	claimedListeners map[*policy.Kind]map[topology.Ref]bool
	// holderFacts are what is read of the holders' values, by key, for
	// kinds judging referenced data (policy.ObjectRefPath.Content) or SDS
	// reference Secrets; now
	// is the time it is judged at, and recheckAt the first time after it
	// at which a verdict changes (Incremental then recomputes all).
	holderFacts map[topology.Ref]map[string]holderdata.Fact
	// allFacts says a kind judges referenced data, so every holder's
	// values are read; else only Secrets of factTypes are (the SDS
	// reference Secrets of a CA reading, policy.CAReading.SDSType).
	allFacts  bool
	factTypes map[string]bool
	now       time.Time
	recheckAt time.Time
	// backendSections are the backend sections (ports) route rules use,
	// for kinds whose ancestors are Gateways.
	backendSections *backendSections
	// users are the policies naming each backend (backendUsers), built
	// when first needed.
	users map[topology.Ref][]backendUser
	// serviceImports are the ServiceImports among the objects, whose
	// ports name their sections (backendSections).
	serviceImports []*unstructured.Unstructured
	// locations are the routes' locations, for kinds that reject route
	// overlaps (only when a kind does).
	locations *routeLocations
	// filterRefs are the routes' ExtensionRef filters by the policy they
	// name (only when a kind is attached by them).
	filterRefs map[topology.Ref][]filterRef
	// holderKinds are the kinds that hold CA certificates for some policy
	// kind, and holders the data keys of each such object (only when a
	// kind has CA certificate references).
	holderKinds map[topology.GroupKind]bool
	holders     map[topology.Ref][]string
	// requiredKinds count, per kind some policy kind requires an object
	// of (policy.Kind.RequiredObjects), the objects of it not being
	// deleted.
	requiredKinds map[topology.GroupKind]int
	// holderConds are what the status of the status holders among holders
	// says (policy.StatusHolder: cert-manager's issuers).
	holderConds map[topology.Ref]holderConds
	// holderLabels are, for each label some kind's defaults look for
	// (policy.ObjectRefPath.DefaultLabel, "key=value"), the holders
	// carrying it (nil when no kind reads a default).
	holderLabels map[string]map[topology.Ref]bool
	// secretTypes are the types of the Secrets among holders (a kind's
	// CA reading may ask for one: policy.CAReading.SecretType).
	secretTypes map[topology.Ref]string
	schemas     map[*policy.Kind][2]*merge.Schema // see kindSchemas
	// crds are the CRDs among the objects by the kind they define, and
	// crdSchemas their compiled schemas (nil: not usable), only with
	// Options.Schemas.
	crds       map[topology.GroupKind]*unstructured.Unstructured
	crdSchemas map[topology.GroupKind]SchemaValidator
	// schemaProblems say why a kind's schema could not be compiled; the
	// result reports each while a policy of the kind is there.
	schemaProblems map[topology.GroupKind]*diag.Problem
	// ready is what the engine reads of Gateways' and routes' status
	// (readReadiness), only when a kind reads it.
	ready *readiness
	// routeParentIdx is, per route node, the parents of the paths of kinds
	// following every parentRef (routeParentsOf), built on first use.
	routeParentIdx *routeParentIndex
	// features are the switches of the implementations' configurations
	// (Options.Features over those among the objects).
	features    policy.Features
	status      map[*pstate]*PolicyStatus
	sortedKinds []*policy.Kind
	dead        int // attachments of removed policies, still in atts
	// undo is set during a WhatIf (see undoLog).
	undo *undoLog
}

// Compute runs the engine over objects.
func Compute(objs []Object, opts Options) *Result {
	return newComputation(opts, objs).result()
}

// newComputation runs the whole computation over objects.
func newComputation(opts Options, objs []Object) *computation {
	if opts.ControllerName == "" {
		opts.ControllerName = DefaultControllerName
	}
	if opts.ConditionDomain == "" {
		opts.ConditionDomain = DefaultConditionDomain
	}
	c := &computation{opts: opts, kinds: map[topology.GroupKind]*policy.Kind{}, attByRef: map[*Attachment]merge.Src{},
		sources: map[topology.Ref]string{}, invalidKinds: map[topology.GroupKind]string{}, clusterKinds: map[topology.GroupKind]bool{},
		dps: map[*policy.Kind]*kindDP{}, status: map[*pstate]*PolicyStatus{}}
	c.now = c.clock()
	topoObjs, policyObjs := c.classify(objs)
	c.parentRefs = routeParentRefs(topoObjs)
	if c.needsDataPlanes() {
		c.gateways, c.classControllers = readGateways(topoObjs, c.controllerAliases)
		c.readMergedClasses(topoObjs)
		c.readGatewayParams()
	}
	for _, k := range c.kinds {
		// Untargeted scopes select Gateways by their facts; CA readings
		// and section rankings by implementation need their classes'
		// controllers.
		if (k.Untargeted.Mode != policy.UntargetedNone || len(k.CARefs.ByController) > 0 || len(k.SectionsUnrankedBy) > 0 || k.WaypointTargets || len(k.Controllers) > 0) && c.gateways == nil {
			c.gateways, c.classControllers = readGateways(topoObjs, c.controllerAliases)
		}
		if k.WaypointTargets && c.canaryWeights == nil {
			c.canaryWeights = readCanaryWeights(topoObjs)
		}
		if (k.RejectSharedPort || len(k.EffectiveListeners) > 0 || k.ObjectRefsOnListeners() || k.ValueRangesOnListeners() || k.ValidationsOnListeners() || k.RequirementsOnListeners() || k.PortSelection.Enabled()) && c.listenerPorts == nil {
			c.listenerPorts = readListenerPorts(topoObjs)
		}
		if k.ValidationsReadListener() && c.routeFacts == nil {
			c.routeFacts = readRouteFacts(topoObjs)
		}
		if (k.Ancestor.Gateways() || k.InvalidOnUnresolvedBackendRefs || k.RequirementsNameServices() || len(k.SectionsUnrankedBy) > 0) && c.backendSections == nil {
			c.backendSections = readBackendSections(topoObjs, c.serviceImports)
		}
	}
	if c.needsReadiness() {
		c.ready = readReadiness(topoObjs)
	}
	c.readDelegationPriorities(topoObjs)
	// Objects with sections (listeners, rules, ports) make several nodes.
	b := topology.NewBuilderSize(4 * len(topoObjs))
	// Route delegation is followed only through the Gateways of
	// implementations that read its form (or of unknown ones), a reading
	// of the profiles: without them, through every Gateway. Routes get
	// unadmitted edges when a kind follows them (Kuadrant).
	// ListenerSets' listeners take the routes a Gateway parentRef names
	// where the Gateway's implementation attaches them so (Gloo Gateway).
	topoOpts := gatewayapi.Options{UnadmittedParents: c.needsUnadmitted()}
	if !c.opts.DisableProfiles {
		alias := func(ctl string) string {
			if a, ok := c.controllerAliases[ctl]; ok {
				return a
			}
			return ctl
		}
		topoOpts.DelegationKinds = func(ctl string) ([]topology.GroupKind, bool) { return profiles.DelegationKinds(alias(ctl)) }
		topoOpts.GatewayRouteListenerSets = func(ctl string) []topology.GroupKind { return profiles.GatewayRouteListenerSets(alias(ctl)) }
	}
	grants, probs := gatewayapi.AddWith(b, topoObjs, topoOpts)
	c.grants = grants
	for _, p := range probs {
		if p.Source == "" {
			p.Source = c.sources[p.Object.Object()]
		}
		c.problems = append(c.problems, p)
	}
	c.parsePolicies(policyObjs)
	c.addVirtualTargets(b)
	c.addBackendPortSections(b)
	g, cycles := b.Build()
	for _, cy := range cycles {
		c.problems = append(c.problems, diag.Problem{Object: cy.Child, Message: cy.Error()})
	}
	c.graph = g
	c.adm = c.readAdmission(topoObjs)
	for _, k := range c.kinds {
		if k.RejectRouteOverlap && c.locations == nil {
			c.locations = c.readRouteLocations(topoObjs)
		}
		if k.FilterAttachment && c.filterRefs == nil {
			c.filterRefs = readFilterRefs(topoObjs)
		}
	}
	for _, ps := range c.policies {
		c.resolve(ps)
	}
	c.sortKinds()
	for _, k := range c.sortedKinds {
		c.computeKind(k)
	}
	for _, ps := range c.policies {
		c.status[ps] = c.policyStatus(ps)
	}
	return c
}

func problemLess(a, b diag.Problem) bool {
	if c := a.Object.Compare(b.Object); c != 0 {
		return c < 0
	}
	if a.Field != b.Field {
		return a.Field < b.Field
	}
	return a.Message < b.Message
}

func (c *computation) sortKinds() {
	out := make([]*policy.Kind, 0, len(c.kinds))
	for _, k := range c.kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	c.sortedKinds = out
}

// classify finds policy kinds (CRDs and Go kinds) and splits objects into
// topology objects and policies. Objects of no known kind are ignored.
func (c *computation) classify(objs []Object) (topo []*unstructured.Unstructured, pols []Object) {
	seen := map[topology.Ref]string{}
	invalidKinds := c.invalidKinds // kind -> its invalid CRD
	clusterCRDs := c.clusterKinds  // kinds of CRDs with scope Cluster
	for _, o := range objs {
		if o.Object != nil && o.Object.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: crdGroupKind.Group, Kind: crdGroupKind.Kind}) {
			if scope, _, _ := unstructured.NestedString(o.Object.Object, "spec", "scope"); scope == "Cluster" {
				clusterCRDs[crdKind(o.Object)] = true
			}
		}
	}
	var rest []Object
	for _, o := range objs {
		u := o.Object
		if u == nil {
			continue
		}
		gk := topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}
		if u.GetNamespace() == "" && gk.Kind != "" && gk != crdGroupKind && !topology.ClusterScoped(gk) && !clusterCRDs[gk] {
			// As kubectl apply would: a namespaced object without a
			// namespace lands in "default".
			u = u.DeepCopy()
			u.SetNamespace(DefaultNamespace)
			o.Object = u
		}
		gvk := u.GroupVersionKind()
		ref := topology.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		if gvk.Kind == "" || u.GetAPIVersion() == "" {
			c.problems = append(c.problems, diag.Problem{Object: ref, Source: o.Source, Message: "object has no apiVersion or kind; ignored"})
			continue
		}
		if ref.Name == "" {
			c.problems = append(c.problems, diag.Problem{Object: ref, Source: o.Source, Field: "metadata.name", Message: "object has no name; ignored"})
			continue
		}
		if prev, dup := seen[ref]; dup {
			c.problems = append(c.problems, diag.Problem{Object: ref, Source: o.Source, Message: fmt.Sprintf("duplicate object (first seen in %s); this copy is ignored", orUnknown(prev))})
			continue
		}
		seen[ref] = o.Source
		c.sources[ref] = o.Source
		if ref.GroupKind() == crdGroupKind {
			if c.opts.Schemas != nil {
				if c.crds == nil {
					c.crds = map[topology.GroupKind]*unstructured.Unstructured{}
				}
				c.crds[crdKind(u)] = u
			}
			k, prob := policy.KindFromCRDWithProfile(u, c.opts.Custom[crdKind(u)], c.profile(crdKind(u)))
			if prob != nil {
				prob.Source = o.Source
				c.problems = append(c.problems, *prob)
				invalidKinds[crdKind(u)] = ref.Name
				continue
			}
			if k == nil {
				continue
			}
			c.kinds[k.GroupKind] = k
			continue
		}
		rest = append(rest, o)
	}
	for _, k := range c.opts.Kinds {
		c.kinds[k.GroupKind] = k
	}
	c.collectHolderKinds()
	c.collectRequiredKinds()
	for _, o := range rest {
		if profiles.IsConfiguration(o.Object) {
			c.readConfiguration(o)
		}
		gk := topology.GroupKind{Group: o.Object.GroupVersionKind().Group, Kind: o.Object.GetKind()}
		if _, isPolicy := c.kinds[gk]; isPolicy {
			pols = append(pols, o)
		} else if crd, bad := invalidKinds[gk]; bad {
			c.problems = append(c.problems, diag.Problem{Object: refOf(o.Object), Source: o.Source,
				Message: fmt.Sprintf("ignored: its policy kind is not usable because CRD %s is invalid (see the error about it)", crd)})
		} else if gatewayapi.Handles(gk) {
			topo = append(topo, o.Object)
		} else if c.holderKinds[gk] {
			c.addHolder(o.Object)
		} else if gk == serviceImport {
			c.serviceImports = append(c.serviceImports, o.Object)
		} else if _, req := c.requiredKinds[gk]; req && o.Object.GetDeletionTimestamp() == nil {
			c.requiredKinds[gk]++
		} else if profiles.IsClassParameters(o.Object) && c.needsDataPlanes() {
			if c.classParams == nil {
				c.classParams = map[topology.Ref]*unstructured.Unstructured{}
			}
			c.classParams[refOf(o.Object)] = o.Object
		}
	}
	for name, f := range c.opts.Features {
		if c.features == nil {
			c.features = policy.Features{}
		}
		c.features[name] = f
	}
	return topo, pols
}

// readConfiguration reads the features an implementation's configuration
// sets. Of several configurations (several installations), a feature is
// on when one turns it on: attache does not tell which GatewayClasses
// each serves.
func (c *computation) readConfiguration(o Object) {
	if name := profiles.ControllerName(o.Object); name != "" && name != profiles.EnvoyGatewayController {
		// Envoy Gateway runs under another controller name: its
		// classes' Gateways are Envoy Gateway's all the same.
		if c.controllerAliases == nil {
			c.controllerAliases = map[string]string{}
		}
		c.controllerAliases[name] = profiles.EnvoyGatewayController
	}
	features, _, field, err := profiles.Configuration(o.Object)
	if err != nil {
		c.problems = append(c.problems, diag.Problem{Object: refOf(o.Object), Source: o.Source, Field: field, Message: err.Error()})
	}
	from := fmt.Sprintf("ConfigMap %s/%s", o.Object.GetNamespace(), o.Object.GetName())
	for name, on := range features {
		if c.features == nil {
			c.features = policy.Features{}
		}
		if prev, seen := c.features[name]; seen && (prev.On || !on) {
			continue
		}
		c.features[name] = policy.Feature{On: on, From: from}
	}
}

// profile returns the built-in profile of a policy kind, unless profiles
// are off.
func (c *computation) profile(gk topology.GroupKind) *policy.Profile {
	if c.opts.DisableProfiles {
		return nil
	}
	p, _ := profiles.Lookup(gk)
	return p
}

// routeParentRefs reads the parentRefs of every route as written: group
// (default gateway.networking.k8s.io), kind (default Gateway), namespace
// (default the route's), name and sectionName. Malformed entries are
// skipped (package gatewayapi reports them).
func routeParentRefs(objs []*unstructured.Unstructured) map[topology.Ref][]topology.Ref {
	out := map[topology.Ref][]topology.Ref{}
	for _, u := range objs {
		gk := topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}
		if !slices.Contains(topology.RouteKinds, gk) {
			continue
		}
		route := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
		for _, r := range refs {
			m, ok := r.(map[string]any)
			if !ok {
				continue
			}
			pr := gatewayapi.ParentRefOf(m, route.Namespace)
			if pr.Name != "" && !slices.Contains(out[route], pr) {
				out[route] = append(out[route], pr)
			}
		}
	}
	return out
}

// kindSchemas returns, once per kind, the merge schemas of its patch
// merges: named marks its named-rule maps and oneofs only (RFC 7386
// elsewhere); full also reads list types from its CRD's spec schema. A
// schema the merge package refuses is reported once against the kind, and
// full then falls back to named.
func (c *computation) kindSchemas(k *policy.Kind) (named, full *merge.Schema) {
	if s, ok := c.schemas[k]; ok {
		return s[0], s[1]
	}
	// The kind's own markers, on top of a schema (nil: none).
	mark := func(s *merge.Schema) *merge.Schema {
		if len(k.NamedRules) > 0 {
			s = s.WithAtomicEntries(k.NamedRules...)
		}
		for _, o := range k.Oneofs {
			s = s.WithOneof(o.Path, o.Members...)
		}
		return s
	}
	named = mark(nil)
	full = named
	if k.Schema != nil && (k.SchemaMerge || k.MergeTypeField != "") {
		s, err := merge.SchemaFromOpenAPI(k.Schema)
		if err != nil {
			ref := topology.Ref{Group: crdGroupKind.Group, Kind: crdGroupKind.Kind, Name: k.String()}
			c.problems = append(c.problems, diag.Problem{Object: ref, Field: "spec.versions[].schema.openAPIV3Schema.properties.spec",
				Message: fmt.Sprintf("list types not usable for schema-aware merges of %s (lists are replaced whole instead): %v", k, err)})
		} else if s != nil {
			full = mark(s)
		}
	}
	if c.schemas == nil {
		c.schemas = map[*policy.Kind][2]*merge.Schema{}
	}
	c.schemas[k] = [2]*merge.Schema{named, full}
	return named, full
}

// crdKind is the group and kind a CRD defines.
func crdKind(u *unstructured.Unstructured) topology.GroupKind {
	g, _, _ := unstructured.NestedString(u.Object, "spec", "group")
	k, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
	return topology.GroupKind{Group: g, Kind: k}
}

func refOf(u *unstructured.Unstructured) topology.Ref {
	return topology.Ref{Group: u.GroupVersionKind().Group, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

func orUnknown(s string) string {
	if s == "" {
		return "the input"
	}
	return s
}

func (c *computation) parsePolicies(objs []Object) {
	for _, o := range objs {
		gk := topology.GroupKind{Group: o.Object.GroupVersionKind().Group, Kind: o.Object.GetKind()}
		c.policies = append(c.policies, &pstate{p: c.parse(o, c.kinds[gk])})
	}
	sort.Slice(c.policies, func(i, j int) bool { return c.policies[i].p.Ref.Less(c.policies[j].p.Ref) })
	c.byRef = make(map[topology.Ref]*pstate, len(c.policies))
	for _, ps := range c.policies {
		c.byRef[ps.p.Ref] = ps
	}
}

// parse parses a policy object, its problems naming where it came from.
// With Options.Schemas, what its CRD's schema refuses makes it Invalid
// too.
func (c *computation) parse(o Object, k *policy.Kind) *policy.Policy {
	p := policy.Parse(o.Object, k)
	if c.opts.Schemas != nil {
		if s := c.crdSchema(k.GroupKind); s != nil {
			for _, e := range s.Validate(context.Background(), o.Object) {
				fld := e.Field
				if fld == "<nil>" {
					fld = ""
				}
				p.Problems = append(p.Problems, diag.Newf(p.Ref, fld, "%s (its CRD's schema, checked as the API server does)", e.ErrorBody()))
			}
		}
	}
	for i := range p.Problems {
		p.Problems[i].Source = o.Source
	}
	for i := range p.Ignored {
		p.Ignored[i].Source = o.Source
	}
	return p
}

// crdSchema returns the compiled schema of the CRD defining gk, nil when
// the CRD is not among the objects or its schema cannot be compiled (then
// reported against the CRD while a policy of the kind is there). Schemas
// are compiled when a policy needs them: compiling is the cost.
func (c *computation) crdSchema(gk topology.GroupKind) SchemaValidator {
	if s, ok := c.crdSchemas[gk]; ok {
		return s
	}
	crd := c.crds[gk]
	if crd == nil {
		return nil
	}
	if c.crdSchemas == nil {
		c.crdSchemas = map[topology.GroupKind]SchemaValidator{}
	}
	s, err := c.opts.Schemas(crd)
	if err != nil {
		ref := topology.Ref{Group: crdGroupKind.Group, Kind: crdGroupKind.Kind, Name: crd.GetName()}
		if c.schemaProblems == nil {
			c.schemaProblems = map[topology.GroupKind]*diag.Problem{}
		}
		c.schemaProblems[gk] = &diag.Problem{Object: ref, Source: c.sources[ref],
			Message: fmt.Sprintf("policies of %s are not checked against its schema: %v", gk, err)}
		s = nil
	}
	c.crdSchemas[gk] = s
	return s
}

// knownKind reports whether objects of gk come from the topology (so a
// missing one is TargetNotFound rather than a virtual target).
func knownKind(gk topology.GroupKind) bool {
	return gk == topology.KindNamespace || gatewayapi.Handles(gk)
}

// targetRef turns a by-name TargetRef into the node ref it names.
func targetRef(t policy.TargetRef) topology.Ref {
	r := topology.Ref{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, SectionName: t.SectionName}
	if topology.ClusterScoped(r.GroupKind()) {
		r.Namespace = ""
	}
	return r
}

// isVirtual reports whether a by-name target is of a kind the topology
// does not know and the policy kind allows: a node of its own.
func isVirtual(p *policy.Policy, t policy.TargetRef) bool {
	return t.Selector == nil && !knownKind(t.GroupKind()) && p.Kind.AllowsTarget(t.GroupKind())
}

// addVirtualTargets adds nodes for targets of kinds the topology does not
// know, when the policy kind allows them (GEP-713 "Targeting virtual types").
func (c *computation) addVirtualTargets(b *topology.Builder) {
	for _, ps := range c.policies {
		if ps.p.Invalid() {
			continue
		}
		for _, t := range ps.p.Targets {
			if !isVirtual(ps.p, t) {
				continue
			}
			r := targetRef(t)
			obj := b.AddNode(r.Object(), nil, 0)
			if r.IsSection() {
				b.AddSection(obj, r.SectionName)
			}
		}
	}
}

// addBackendPortSections adds, to each Envoy Gateway Backend among the
// objects, a section for every port a valid policy's backendRefs name it
// with: Envoy Gateway matches a BackendTLSPolicy's sectionName with the
// port the backendRef names, a policy's external service's too (package
// gatewayapi adds its endpoints' ports and those routes name).
func (c *computation) addBackendPortSections(b *topology.Builder) {
	for _, ps := range c.policies {
		if ps.p.Invalid() {
			continue
		}
		for _, br := range ps.p.BackendRefs {
			if br.Backend.GroupKind() != topology.KindEnvoyGatewayBackend || br.Port <= 0 {
				continue
			}
			if id, ok := b.Lookup(br.Backend); ok {
				b.AddSection(id, strconv.FormatInt(br.Port, 10))
			}
		}
	}
}

// resolve turns a policy's declared targets into attachments, or into
// ancestors that are not accepted, with the reason.
func (c *computation) resolve(ps *pstate) {
	{
		p := ps.p
		if p.Invalid() {
			return
		}
		if msg := p.Kind.MissingDependencies(c.opts.ServedAPIs); msg != "" {
			// Its implementation accepts no policy of the kind, whatever
			// it targets (Kuadrant checks before looking for targets).
			ps.missingDeps = "Its implementation needs what is not installed: " + msg
			for _, t := range p.Targets {
				if t.Selector == nil { // a selector names no object
					ps.ancestors = append(ps.ancestors, ancestorState{ref: targetRef(t), reason: ReasonMissingDependency, msg: ps.missingDeps})
				}
			}
			return
		}
		if p.Untargeted != nil {
			c.resolveUntargeted(ps)
			return
		}
		if p.Kind.RejectRouteOverlap {
			if msg := c.routeOverlap(p); msg != "" {
				// The whole policy is rejected (NGF marks it invalid),
				// at every target.
				for _, t := range p.Targets {
					if t.Selector == nil { // a selector names no object
						ps.ancestors = append(ps.ancestors, ancestorState{ref: targetRef(t), reason: ReasonTargetConflict, msg: msg})
					}
				}
				return
			}
		}
		if p.UnmodelledTargeting != "" {
			ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: selects its targets in a way attache does not model (workloads, not Gateway API objects); its effect is not computed", p.UnmodelledTargeting))
		}
		for _, t := range p.Targets {
			gk := t.GroupKind()
			if t.Selector == nil && c.ancestorsFull(ps, targetRef(t)) {
				continue
			}
			if p.Kind.DataPlaneTarget && t.Selector == nil {
				c.resolveDataPlane(ps, t)
				continue
			}
			if !p.Kind.AllowsTarget(gk) {
				msg := fmt.Sprintf("kind %s is not a target kind of %s (allowed: %s)", gk, p.Kind, kindList(p.Kind.TargetKinds))
				if gk.Group == "" && p.Kind.EmptyTargetGroupCore && slices.ContainsFunc(p.Kind.TargetKinds, func(a topology.GroupKind) bool { return a.Kind == gk.Kind }) {
					msg += "; a targetRef without group names the core group: give the group"
				}
				c.invalidTarget(ps, t, targetRef(t), msg)
				continue
			}
			if t.Selector != nil {
				n := 0
				for _, id := range c.graph.ByKind(gk) {
					node := c.graph.Node(id)
					if !c.inSelectorScope(p, t, node.Ref) {
						continue
					}
					if !t.Selector.Matches(labels.Set(node.Labels)) {
						continue
					}
					if c.ancestorsFull(ps, node.Ref) {
						n++ // selected, though not applied
						continue
					}
					if !c.grantAllows(p, node.Ref) {
						if t.Namespaces != nil {
							// Envoy Gateway's targetSelectors skip what no
							// ReferenceGrant allows in a wider scope.
							continue
						}
						n++
						// A selected Namespace other than the policy's own is a
						// cross-namespace target too (decision 9).
						c.invalidTarget(ps, t, node.Ref, noGrant(p, node.Ref))
						continue
					}
					if c.notServed(p.Kind, node.Ref) != "" {
						continue // another implementation's: not selected
					}
					n++
					c.attachChecked(ps, id, t)
				}
				if n == 0 {
					where := "in namespace " + p.Ref.Namespace
					switch {
					case p.Ref.Namespace == "" || (t.Namespaces != nil && t.Namespaces.From == policy.NamespacesAll):
						where = "in any namespace (that a ReferenceGrant opens to it)"
					case t.Namespaces != nil:
						where = fmt.Sprintf("in the namespaces matching %q (that a ReferenceGrant opens to it)", t.Namespaces.Selector.String())
					}
					ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: selector %q matches no %s %s", t.Field, t.Selector.String(), gk, where))
				}
				continue
			}
			ref := targetRef(t)
			if ref.IsSection() && p.Kind.Class == policy.Inherited && p.Kind.IsEffectiveTarget(gk) && !p.Kind.IsEffectiveSection(gk) {
				// Sections sit below their object, and contexts end at the
				// effective target: a policy there could never apply.
				c.invalidTarget(ps, t, ref, fmt.Sprintf("%s is a section of an effective target of %s; policies apply to %s objects, so target %s instead", ref.Short(), p.Kind, gk.Kind, ref.Object().Short()))
				continue
			}
			if p.Ref.Namespace == "" && ref.Namespace == "" && knownKind(gk) && !topology.ClusterScoped(gk) {
				// A cluster-scoped policy has no namespace to default to.
				c.invalidTarget(ps, t, ref, fmt.Sprintf("%s objects are namespaced and the policy is cluster-scoped: give the target's namespace", gk.Kind))
				continue
			}
			if !c.grantAllows(p, ref) {
				c.invalidTarget(ps, t, ref, noGrant(p, ref))
				continue
			}
			id, ok := c.graph.Lookup(ref)
			if !ok && c.opts.Unread != nil && c.opts.Unread(ref.Object()) {
				if _, objOK := c.graph.Lookup(ref.Object()); !objOK {
					// Its kind could not be read (RBAC): neither found nor
					// not found.
					ps.unread = append(ps.unread, ref)
					continue
				}
			}
			if !ok {
				msg := fmt.Sprintf("%s: %s not found", t.Field, ref.Short())
				if ref.IsSection() {
					if _, objOK := c.graph.Lookup(ref.Object()); objOK {
						msg = fmt.Sprintf("%s: %s has no section %q", t.Field, ref.Object().Short(), ref.SectionName)
					}
				}
				ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, reason: ReasonTargetNotFound, msg: msg})
				continue
			}
			if p.Kind.WaypointTargets && ref.GroupKind() == topology.KindGatewayClass && p.Ref.Namespace != p.Kind.Untargeted.Root() {
				// istiod honours a GatewayClass target from the root
				// namespace only.
				c.invalidTarget(ps, t, ref, fmt.Sprintf("a policy targeting a GatewayClass must be in the root namespace %s", p.Kind.Untargeted.Root()))
				continue
			}
			if p.Kind.WaypointTargets && ref.GroupKind() == topology.KindGatewayClass {
				if ctl := c.classControllers[ref.Name]; ctl != meshController {
					// Nor one of another controller: istiod attaches it
					// at waypoints only, and calls it Invalid.
					msg := fmt.Sprintf("GatewayClass %s has controller %q, and a policy targeting a GatewayClass applies at waypoints only, whose GatewayClass must use controller name %s", ref.Name, ctl, meshController)
					if c.kgatewayWaypointClass(p.Kind, ref, ctl) {
						// kgateway applies it all the same, at the
						// Services bound to its waypoints.
						c.attachChecked(ps, id, t)
						for _, a := range ps.atts {
							if a.node == id {
								a.hostInvalid = t.Field + ": " + msg + "; kgateway applies it at the Services bound to its waypoints outside the root namespace"
							}
						}
						ps.targetProblems = append(ps.targetProblems, diag.Problem{Object: p.Ref, Source: c.sources[p.Ref], Field: t.Field,
							Message: msg + " (istiod's verdict; kgateway applies it at the Services bound to its waypoints outside the root namespace)"})
						continue
					}
					c.invalidTarget(ps, t, ref, msg)
					continue
				}
			}
			if gk := ref.GroupKind(); p.Kind.WaypointTargets && (gk == topology.KindService || gk == topology.KindServiceEntry) {
				if msg := c.unboundService(ref.Object()); msg != "" {
					ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, reason: ReasonAncestorNotBound, msg: msg})
					continue
				}
			}
			if msg := c.notServed(p.Kind, ref); msg != "" {
				// Its implementation does not see the target (another
				// implementation's Gateway, or what only such Gateways
				// reach): as not found.
				ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, reason: ReasonTargetNotFound, msg: t.Field + ": " + msg, foreign: true})
				continue
			}
			c.attachChecked(ps, id, t)
		}
		if p.Kind.FilterAttachment {
			c.attachByFilters(ps)
		}
	}
}

// ancestorsFull reports whether target ref of a policy whose kind skips
// the ancestors beyond its status's MaxAncestors entries finds the list
// full, and records it then: it is neither attached nor listed, as NGINX
// Gateway Fabric leaves it (AncestorLimitReached). Only kinds naming
// their ancestors after targets are judged here, one entry per target in
// targetRefs order; the others are cut when their status is written
// (limitAncestors). A target already listed still fits.
func (c *computation) ancestorsFull(ps *pstate, ref topology.Ref) bool {
	k := ps.p.Kind
	if k.AncestorLimit != policy.AncestorLimitSkip || k.Ancestor != policy.AncestorTarget || len(ps.ancestors) < MaxAncestors {
		return false
	}
	if slices.ContainsFunc(ps.ancestors, func(a ancestorState) bool { return a.ref == ref }) {
		return false
	}
	if k.MissingTargetsUnlisted {
		// Targets that do not resolve get no entry, so they take no
		// place, and meet no full list.
		if c.unresolvedTarget(k, ref) != "" {
			return false
		}
		n := 0
		for _, a := range ps.ancestors {
			if c.unresolvedTarget(k, a.ref) == "" {
				n++
			}
		}
		if n < MaxAncestors {
			return false
		}
	}
	if !slices.Contains(ps.overLimit, ref) {
		ps.overLimit = append(ps.overLimit, ref)
	}
	return true
}

// attachChecked attaches a declared target after the checks of the
// policy's kind on the policy and the target itself (backendRefs that do
// not resolve, shared listener ports): a target failing one is Invalid
// instead.
func (c *computation) attachChecked(ps *pstate, id topology.NodeID, t policy.TargetRef) {
	if c.disabledAt(ps, id) {
		return
	}
	// A policy whose references do not resolve is Invalid at each target
	// (policyStatus says so) but keeps its place there: Envoy Gateway
	// records it as the route's policy before translating it, and fails
	// the route closed (a 500 direct response) when translation fails.
	// The input problem is said once, not per target.
	broken, untranslatable := false, false
	if field, _, problem := c.untranslatable(ps.p); problem != "" {
		broken, untranslatable = true, true
		ps.refsInvalid = true
		prob := diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref], Field: field, Message: problem}
		if !slices.Contains(ps.targetProblems, prob) {
			ps.targetProblems = append(ps.targetProblems, prob)
		}
	}
	if field, _, problem := c.unresolvedRefsAt(ps.p, c.graph.Node(id).Ref); problem != "" {
		broken = true
		prob := diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref], Field: field, Message: problem}
		if !slices.Contains(ps.targetProblems, prob) {
			ps.targetProblems = append(ps.targetProblems, prob)
		}
	}
	var notVia []topology.Ref
	refsNowhere := false
	if untranslatable && ps.p.Kind.RefsAfterConflicts && c.onlyReferencesRefuse(ps.p, c.graph.Node(id).Ref) {
		// Its implementation resolves the references after it has
		// marked conflicts: attached, so that it takes part in them, and
		// applied nowhere.
		refsNowhere, broken = true, false
	} else if broken && ps.p.Kind.InvalidNotApplied {
		if notVia = c.notAppliedVia(ps.p, c.graph.Node(id).Ref); notVia == nil {
			c.notApplied(ps, id)
			return
		}
		// Refused through some Gateways only: attached, so that it takes
		// part in conflicts, and left out through those Gateways.
		broken = false
	}
	if ps.p.Kind.RejectSharedPort {
		if msg := c.sharedPortConflict(id); msg != "" {
			c.invalidTarget(ps, t, c.graph.Node(id).Ref, msg)
			return
		}
	}
	if msg := unsupportedOwn(ps, c.graph.Node(id).Ref); msg != "" {
		c.invalidTarget(ps, t, c.graph.Node(id).Ref, msg)
		return
	}
	a := c.attach(ps, id, t)
	if a != nil && refsNowhere {
		a.nowhere = true
	}
	if a != nil && notVia != nil {
		a.notVia = notVia
		a.nowhere = c.refusedThroughAll(ps.p.Kind, a.ref.At, notVia)
		a.notViaReason = c.notAllowedReason(ps.p, a.ref.At)
	}
	if a == nil || !broken {
		return
	}
	fields := c.brokenFields(ps.p, a.ref.At)
	if len(ps.p.Kind.FailOpen) > 0 {
		// Its implementation leaves out the parts whose references fail
		// open, and applies the rest.
		if spec, parts := ps.p.WithoutFailedOpen(fields); parts != nil {
			a.failedOpen, a.openFields, a.fullSpec = parts, fields, a.spec
			a.spec = merge.FromValue(specWith(ps.p, spec), a.id)
			return
		}
	}
	a.broken = fields
}

// inSelectorScope reports whether a selector of policy p may select the
// object ref by namespace: the policy's own namespace (every namespace for a
// cluster-scoped policy, or a cluster-scoped object), or, with a namespace
// filter, the namespaces it names (from Selector: only those whose labels
// match, the policy's own included).
func (c *computation) inSelectorScope(p *policy.Policy, t policy.TargetRef, ref topology.Ref) bool {
	if ref.Namespace == "" || p.Ref.Namespace == "" {
		return true
	}
	if t.Namespaces == nil {
		return ref.Namespace == p.Ref.Namespace
	}
	switch t.Namespaces.From {
	case policy.NamespacesAll:
		return true
	case policy.NamespacesSelector:
		id, ok := c.graph.Lookup(topology.Ref{Kind: topology.KindNamespace.Kind, Name: ref.Namespace})
		return ok && t.Namespaces.Selector.Matches(labels.Set(c.graph.Node(id).Labels))
	}
	return false
}

// invalidTarget records a declared target the policy may not have: its
// ancestor is Accepted=False, reason Invalid, and, like every other failed
// validation, it is reported as a problem naming the policy and the field.
// (A target that is not found is not: it may be created later.)
func (c *computation) invalidTarget(ps *pstate, t policy.TargetRef, ref topology.Ref, msg string) {
	ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, reason: ReasonInvalid, msg: t.Field + ": " + msg})
	ps.targetProblems = append(ps.targetProblems, diag.Problem{Object: ps.p.Ref, Source: c.sources[ps.p.Ref], Field: t.Field, Message: msg})
}

// noGrant says that no ReferenceGrant allows policy p to target ref.
func noGrant(p *policy.Policy, ref topology.Ref) string {
	return fmt.Sprintf("no ReferenceGrant in namespace %s allows %s from namespace %s to target %s", targetNamespace(ref), p.Ref.GroupKind(), p.Ref.Namespace, ref.Short())
}

func targetNamespace(r topology.Ref) string {
	if r.GroupKind() == topology.KindNamespace {
		return r.Name
	}
	return r.Namespace
}

// grantAllows checks project decision 9: a target in another namespace than
// a namespaced policy's needs a ReferenceGrant there.
func (c *computation) grantAllows(p *policy.Policy, ref topology.Ref) bool {
	ns := targetNamespace(ref)
	// A cluster-scoped policy is in no namespace: its references cross none
	// (and a ReferenceGrant could not name it: its from needs a namespace).
	if ns == "" || ns == p.Ref.Namespace || p.Ref.Namespace == "" {
		return true
	}
	to := ref.Object()
	to.Namespace = ns
	return c.grants.Allows(p.Ref.GroupKind(), p.Ref.Namespace, to)
}

// disabledAt reports whether the policy's kind is off in its
// implementation's configuration (a feature gate of the whole kind): its
// implementation ignores it, so it is not attached (nothing applies,
// nothing below loses to it) and the target's ancestor says Disabled,
// once. Every way of attaching (targetRefs, selectors, filters, untargeted
// scopes) asks first.
func (c *computation) disabledAt(ps *pstate, id topology.NodeID) bool {
	if len(ps.p.Kind.FeatureGates) == 0 {
		return false
	}
	_, msg := ps.p.Kind.DisabledBy(c.features)
	if msg == "" {
		return false
	}
	if !ps.attached[id] {
		if ps.attached == nil {
			ps.attached = map[topology.NodeID]bool{}
		}
		ps.attached[id] = true
		ps.ancestors = append(ps.ancestors, ancestorState{ref: c.graph.Node(id).Ref, reason: ReasonDisabled, msg: msg})
	}
	return true
}

// notApplied records a policy its implementation cannot translate at
// target id, under a kind whose implementation then leaves it out
// (policy.Kind.InvalidNotApplied): Invalid there, saying why, and not
// attached, so that it applies nowhere there and conflicts with nothing.
func (c *computation) notApplied(ps *pstate, id topology.NodeID) {
	if ps.attached[id] {
		return // two targetRefs reaching one target count once
	}
	if ps.attached == nil {
		ps.attached = map[topology.NodeID]bool{}
	}
	ps.attached[id] = true
	ref := c.graph.Node(id).Ref
	_, msg, _ := c.untranslatable(ps.p)
	if _, at, _ := c.unresolvedRefsAt(ps.p, ref); at != "" {
		msg = strings.TrimPrefix(msg+"; "+at, "; ")
	}
	reason := c.refsReason(ps.p, ref)
	if c.onlyDataPlaneRefuses(ps.p, ref) {
		// Its implementation's own reason for what the Gateways'
		// parameters refuse (NGF: NginxProxyConfigNotSet).
		if r := c.notAllowedReason(ps.p, ref); r != "" {
			reason = r
		}
	}
	ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, reason: reason, msg: msg + "; not applied"})
}

func (c *computation) attach(ps *pstate, id topology.NodeID, t policy.TargetRef) *attachment {
	if ps.attached[id] || c.disabledAt(ps, id) {
		return nil // two targetRefs reaching one target attach once
	}
	if ps.attached == nil {
		ps.attached = map[topology.NodeID]bool{}
	}
	ps.attached[id] = true
	a := &attachment{id: merge.Src(len(c.atts)), pol: ps, node: id}
	ref := c.graph.Node(id).Ref
	if ref.GroupKind() == topology.KindNamespace {
		a.nsName = ref.Name
	}
	a.spec = merge.FromValue(specOf(ps.p), a.id)
	a.ref = &Attachment{Policy: ps.p.Ref, At: ref}
	c.atts = append(c.atts, a)
	c.attByRef[a.ref] = a.id
	ps.atts = append(ps.atts, a)
	ps.ancestors = append(ps.ancestors, ancestorState{ref: ref, att: a})
	return a
}

// specOf is the spec a policy contributes to a fold: its spec proper, or,
// for additive kinds, the spec proper under the policy's
// "namespace/name", so that every policy reaching a target keeps its own.
func specOf(p *policy.Policy) map[string]any { return specWith(p, p.Spec) }

// specWith is specOf for spec in place of the policy's own.
func specWith(p *policy.Policy, spec map[string]any) map[string]any {
	if p.Kind.Composition != policy.CompositionAdditive {
		return spec
	}
	return map[string]any{additiveKey(p): spec}
}

func kindList(gks []topology.GroupKind) string {
	s := make([]string, len(gks))
	for i, gk := range gks {
		s[i] = gk.String()
	}
	return strings.Join(s, ", ")
}
