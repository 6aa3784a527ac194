package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// PolicyLabel is the label that marks a CRD as a policy kind (GEP-713); its
// value is the policy class (Direct or Inherited).
const PolicyLabel = "gateway.networking.k8s.io/policy"

// DefaultPageSize is the list page size when Options.PageSize is not set.
const DefaultPageSize = 500

// Options scope a read.
type Options struct {
	// Namespace, when set, is the namespace the question is about; lists
	// that cannot be made cluster-wide fall back to it.
	Namespace string
	// PageSize is the list page size (default DefaultPageSize).
	PageSize int64
	// PolicyKindsOnly reads the policy CRDs and nothing else: enough for
	// questions about the policy kinds themselves, which then need no
	// discovery, no other list, and no RBAC beyond listing CRDs.
	PolicyKindsOnly bool
	// DisableProfiles makes only the CRDs labelled PolicyLabel policy
	// kinds. Otherwise those of kinds with a built-in profile (package
	// profiles) are too. Either way, other CRDs whose schema looks like a
	// policy's are returned (without their instances) so that the caller
	// can say how to declare them.
	DisableProfiles bool
}

// Snapshot is what was read.
type Snapshot struct {
	// Objects are the policy CRDs, their policies and the topology objects,
	// without managedFields. Each Source reads like
	// `cluster: HTTPRoute baker/baker`.
	Objects []engine.Object
	// Skipped says, one line each, what could not be read and why, e.g.
	// `gatewayapi HTTPRoute: cannot list cluster-wide (forbidden); read namespace baker only`
	// or `policies.cupcakes.example RetryPolicy: forbidden in namespace baker; its policies are not shown`.
	// A snapshot with Skipped lines gives a partial answer.
	Skipped []string
	// Unread says the same, structured: one entry per Skipped line, in the
	// same order, so that answers about a kind can say it was not read.
	Unread []Unread
	// UnreadObjects are the single objects that could not be read: CA
	// certificate holders (ConfigMaps, Secrets, ClusterTrustBundles) and
	// cert-manager issuers policies name, which RBAC forbade getting. Their Skipped lines come
	// after those of Unread. Give them to the engine
	// (engine.Options.Unread): references to them are then not judged.
	UnreadObjects []topology.Ref
	// ServedAPIs are the kinds the cluster's CRDs serve
	// (policy.ServedByCRDs over every CRD), for the policy kinds'
	// dependencies (engine.Options.ServedAPIs); nil when the CRDs could
	// not be listed.
	ServedAPIs policy.ServedAPIs
	// Notes say what the answer assumes for what could not be read and
	// hides no object: the implementations' configurations that RBAC
	// forbade listing (their features are then off unless set), and the
	// GatewayClass parameters it forbade getting (their classes then
	// merge their Gateways only if the configuration's default says so).
	Notes []string
}

// NeverRead are the kinds policies may name that the reader does not list:
// their absence from a Snapshot says nothing (ServiceImports, which only
// policies' backendRefs name).
var NeverRead = []topology.GroupKind{topology.KindServiceImport}

// UnreadFunc returns, for engine.Options.Unread, whether an object could
// not be read: one of s.UnreadObjects, an object of a kind of s.Unread
// (outside the one namespace read, if any) or of NeverRead, whose absence
// from Objects says nothing.
func (s *Snapshot) UnreadFunc() func(topology.Ref) bool {
	set := make(map[topology.Ref]bool, len(s.UnreadObjects))
	for _, r := range s.UnreadObjects {
		set[r] = true
	}
	kinds := slices.Clone(s.Unread)
	return func(r topology.Ref) bool {
		if set[r] || slices.Contains(NeverRead, r.GroupKind()) {
			return true
		}
		for _, u := range kinds {
			if u.Group == r.Group && (u.Kind == "" || u.Kind == r.Kind) && (u.Namespace == "" || u.Namespace != r.Namespace) {
				return true
			}
		}
		return false
	}
}

// Unread is a kind whose objects could not all be read.
type Unread struct {
	// Group and Kind name the kind: apiextensions.k8s.io
	// CustomResourceDefinition when the policy CRDs could not be listed (no
	// policy kind is then known), and Kind "" for every kind of Group when
	// the group's discovery failed.
	Group string
	Kind  string
	// Policy is true for a policy kind.
	Policy bool
	// Namespace is the one namespace that was read when the cluster-wide
	// list was forbidden but a list in Options.Namespace was not; "" when
	// no object of the kind was read.
	Namespace string
	// Message is the Skipped line.
	Message string
}

// TopologyKinds are the kinds Read lists besides the policy kinds: those the
// engine reads (gatewayapi.Handles). A kind the cluster does not serve (no
// Gateway API CRDs, no TCPRoute CRD, no ListenerSet CRD before Gateway API
// v1.5, ...) is left out without a word.
var TopologyKinds = gatewayapi.Kinds

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// maxParallelLists bounds the lists in flight: enough to hide the round
// trips of a remote API server, few enough to be a polite client.
const maxParallelLists = 8

// resource is one kind to list.
type resource struct {
	label      string // for Skipped lines: `gatewayapi HTTPRoute`
	kind       string
	gvr        schema.GroupVersionResource
	namespaced bool
	policy     bool
}

// result is what reading one resource gave.
type result struct {
	objects []engine.Object
	unread  []Unread
}

// unread records that res could not be read in full: in namespace ns only
// ("" for not at all), for the reason msg.
func (res resource) unread(ns, msg string) []Unread {
	return []Unread{{Group: res.gvr.Group, Kind: res.kind, Policy: res.policy, Namespace: ns, Message: msg}}
}

// reader holds the clients and options of one Read.
type reader struct {
	dyn  dynamic.Interface
	host string
	opts Options
	// kinds caches policyKinds, once the CRDs are read.
	kinds []*policy.Kind
	// paramResources are the resources of the kinds of
	// profiles.ClassParametersKinds whose CRDs are installed (from the CRD
	// list of readPolicyCRDs): the versions readClassParams gets.
	paramResources map[topology.GroupKind]resource
	// holderResources are the resources of the holder kinds that are not
	// core v1 (policy.DiscoveredHolder: ClusterTrustBundle, cert-manager's
	// Issuer and ClusterIssuer), at the version discovery found; a kind
	// the cluster does not serve has none.
	holderResources map[topology.GroupKind]resource
	// failedGroups are the API groups whose discovery failed, with why.
	failedGroups map[string]error
	// served are the kinds the CRDs serve (Snapshot.ServedAPIs).
	served policy.ServedAPIs
	// crdResources are the resources of every CRD's kind (from the CRD
	// list of readPolicyCRDs), for the kinds of the objects policy kinds
	// require (readRequired).
	crdResources map[topology.GroupKind]resource
}

// Read lists, from the cluster that cfg points at, the policy CRDs (those
// labelled PolicyLabel), every policy of those kinds and the topology
// objects of TopologyKinds that the cluster serves (with
// Options.PolicyKindsOnly, the policy CRDs only). It also reads what the
// policy kinds need besides: the implementations' configurations
// (readConfigurations), the ConfigMaps, Secrets, ClusterTrustBundles and
// cert-manager issuers policies name (readHolders) and the GatewayClass parameters that say
// which Gateways share a data plane (readClassParams). Lists are paginated
// (Options.PageSize) and cluster-wide even when Options.Namespace is set: a
// policy's effect crosses namespaces (a route in one namespace hangs below a
// Gateway in another, whose policies reach the route, and a policy's status
// depends on every context it is in), so an answer about one namespace
// needs the objects of the others. A list that RBAC forbids cluster-wide is
// made in Options.Namespace instead, and what could not be read at all is left out;
// both are said in Snapshot.Skipped and are not errors. Any other failure
// (unreachable server, rejected credentials, ...) is an error that says what
// to check.
func Read(ctx context.Context, cfg *rest.Config, opts Options) (*Snapshot, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	cfg = rest.CopyConfig(cfg)
	// client-go's defaults when unset (5 QPS, burst 10) would throttle the
	// parallel lists of one read, pages included.
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	r := &reader{host: strings.TrimSuffix(cfg.Host, "/"), opts: opts}
	// One HTTP client for discovery and the lists, so that they share
	// connections.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, r.fatal("creating a client", err)
	}
	if r.dyn, err = dynamic.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, r.fatal("creating a client", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, r.fatal("creating a discovery client", err)
	}

	snap := &Snapshot{}
	if opts.PolicyKindsOnly {
		crds, _, crdUnread, err := r.readPolicyCRDs(ctx)
		if err != nil {
			return nil, err
		}
		snap.Objects = crds
		snap.addUnread(crdUnread)
		return snap, nil
	}
	topo, skipped, err := r.discoverTopology(ctx, disc)
	if err != nil {
		return nil, err
	}
	crds, pols, crdUnread, err := r.readPolicyCRDs(ctx)
	if err != nil {
		return nil, err
	}
	snap.Objects = append(snap.Objects, crds...)
	snap.ServedAPIs = r.served
	snap.addUnread(crdUnread)
	snap.addUnread(skipped)

	todo := append(topo, pols...)
	results := make([]result, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelLists)
	for i, res := range todo {
		g.Go(func() error {
			var err error
			results[i], err = r.read(gctx, res)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// Results are gathered in the order of todo, not of completion, so that
	// two reads of the same cluster give the same snapshot.
	for _, res := range results {
		snap.Objects = append(snap.Objects, res.objects...)
		snap.addUnread(res.unread)
	}
	if err := r.readConfigurations(ctx, snap); err != nil {
		return nil, err
	}
	if err := r.readHolders(ctx, snap); err != nil {
		return nil, err
	}
	if err := r.readRequired(ctx, snap); err != nil {
		return nil, err
	}
	if err := r.readClassParams(ctx, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// readConfigurations lists, in every namespace, the ConfigMaps named as
// the implementations' installers name those of their configuration
// (profiles.ConfigMapNames), whole: the engine reads from them the
// features that kinds' feature gates name, and the default of whether a
// GatewayClass merges its Gateways (profiles.EGMergeGateways) for kinds
// that ask which Gateways share a data plane (profiles.Configuration).
// Few and small, they are listed by name, not among all ConfigMaps.
func (r *reader) readConfigurations(ctx context.Context, snap *Snapshot) error {
	if !slices.ContainsFunc(r.policyKinds(snap), func(k *policy.Kind) bool { return len(k.FeatureGates) > 0 || k.ReadsDataPlanes() }) {
		return nil // no kind reads a configuration: none is listed
	}
	cms := r.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	for _, name := range profiles.ConfigMapNames {
		items, err := r.list(ctx, cms, "", metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		switch {
		case apierrors.IsForbidden(err):
			snap.Notes = append(snap.Notes, fmt.Sprintf("core ConfigMap %s: cannot list (forbidden); the features of the configuration it holds are off unless --feature sets them", name))
			continue
		case err != nil:
			return r.fatal("listing ConfigMaps named "+name, err)
		}
		for i := range items {
			u := &items[i]
			if u.GetKind() == "" {
				u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
			}
			if !profiles.IsConfiguration(u) {
				continue
			}
			snap.Objects = append(snap.Objects, object(u, "ConfigMap"))
		}
	}
	return nil
}

// policyKinds are the policy kinds the snapshot's CRDs define (with the
// profiles, unless they are off); read once per Read, by the readers that
// need them.
func (r *reader) policyKinds(snap *Snapshot) []*policy.Kind {
	if r.kinds != nil {
		return r.kinds
	}
	r.kinds = []*policy.Kind{}
	for _, o := range snap.Objects {
		u := o.Object
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		var prof *policy.Profile
		if !r.opts.DisableProfiles {
			prof, _ = profiles.Lookup(topology.GroupKind{Group: nestedString(u, "spec", "group"), Kind: nestedString(u, "spec", "names", "kind")})
		}
		if k, prob := policy.KindFromCRDWithProfile(u, nil, prof); prob == nil && k != nil {
			r.kinds = append(r.kinds, k)
		}
	}
	return r.kinds
}

// readHolders gets the ConfigMaps, Secrets, ClusterTrustBundles and
// cert-manager issuers that the snapshot's policies name for their data
// (kinds with CA certificate or object references), one by one: a
// cluster's ConfigMaps are many and can be large, the ones named are few.
// Only what the engine reads is kept: the data keys of a ConfigMap or
// Secret (a Secret's values are not kept in memory), whether a
// ClusterTrustBundle's bundle is set (trustBundleOnly), an issuer's status
// conditions (conditionsOnly). A ClusterTrustBundle or ClusterIssuer is
// got cluster-scoped; those kinds and Issuer at the version discovery
// found (holderResource); when the cluster does not serve the kind the
// object is left out, as one that is not there: the implementation would
// not find it either. One that RBAC forbids getting,
// or whose group's discovery failed, is recorded in UnreadObjects and
// Skipped.
func (r *reader) readHolders(ctx context.Context, snap *Snapshot) error {
	kinds := map[topology.GroupKind]*policy.Kind{}
	for _, k := range r.policyKinds(snap) {
		if len(k.HolderKinds()) > 0 {
			kinds[k.GroupKind] = k
		}
	}
	if len(kinds) == 0 {
		return nil
	}
	seen := map[topology.Ref]bool{}
	whole := map[topology.Ref]bool{} // implementations' configurations, read whole already
	for _, o := range snap.Objects {
		if profiles.IsConfiguration(o.Object) {
			r := topology.Ref{Kind: "ConfigMap", Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}
			seen[r], whole[r] = true, true
		}
	}
	var refs []topology.Ref
	var defaults []policy.DefaultHolder
	for _, o := range snap.Objects {
		k := kinds[topology.GroupKind{Group: o.Object.GroupVersionKind().Group, Kind: o.Object.GetKind()}]
		if k == nil || o.Object.GetNamespace() == "" {
			continue
		}
		p := policy.Parse(o.Object, k)
		for _, hr := range p.HolderRefs() {
			if !seen[hr] {
				seen[hr] = true
				refs = append(refs, hr)
			}
		}
		for _, d := range p.DefaultHolders() {
			if !slices.Contains(defaults, d) {
				defaults = append(defaults, d)
			}
		}
	}
	// The defaults of references the policies do not give (Kuadrant's
	// default DNS provider Secret): the holders carrying the label, listed
	// and kept as listed (keys only), also those some policy names.
	listed := map[topology.Ref]bool{}
	for _, d := range defaults {
		found, forbidden, err := r.listDefault(ctx, d)
		if err != nil {
			return err
		}
		if forbidden {
			// Not judged: the reference a policy would read names no
			// object, only the kind and namespace looked in.
			snap.UnreadObjects = append(snap.UnreadObjects, topology.Ref{Group: d.Kind.Group, Kind: d.Kind.Kind, Namespace: d.Namespace})
			snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s labelled %s in %s: cannot list (forbidden); the defaults read there are not judged", label(d.Kind.Group, d.Kind.Kind), d.Label, d.Namespace))
			continue
		}
		for _, u := range found {
			hr := topology.Ref{Group: d.Kind.Group, Kind: d.Kind.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
			if !listed[hr] && !whole[hr] {
				listed[hr] = true
				snap.Objects = append(snap.Objects, object(keysOnly(u), hr.Kind))
			}
		}
	}
	refs = slices.DeleteFunc(refs, func(r topology.Ref) bool { return listed[r] })
	slices.SortFunc(refs, func(a, b topology.Ref) int { return a.Compare(b) })
	got := make([]*unstructured.Unstructured, len(refs))
	unread := make([]string, len(refs)) // why, for the Skipped line
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelLists)
	for i, hr := range refs {
		res, served, why := r.holderResource(hr.GroupKind())
		if why != "" {
			unread[i] = why
			continue
		}
		if !served {
			continue // the object cannot be there
		}
		g.Go(func() error {
			// A ClusterTrustBundle's or ClusterIssuer's ref has no
			// namespace: cluster-scoped.
			u, err := r.dyn.Resource(res.gvr).Namespace(hr.Namespace).Get(gctx, hr.Name, metav1.GetOptions{})
			switch {
			case err == nil && hr.GroupKind() == policy.KindClusterTrustBundle:
				got[i] = trustBundleOnly(u)
			case err == nil && policy.StatusHolder(hr.GroupKind()):
				got[i] = conditionsOnly(u)
			case err == nil:
				got[i] = keysOnly(u)
			case apierrors.IsNotFound(err):
			case apierrors.IsForbidden(err):
				unread[i] = "cannot get (forbidden)"
			default:
				return r.fatal("getting "+hr.String(), err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, hr := range refs {
		switch {
		case got[i] != nil:
			snap.Objects = append(snap.Objects, object(got[i], hr.Kind))
		case unread[i] != "":
			name := hr.Name
			if hr.Namespace != "" {
				name = hr.Namespace + "/" + hr.Name
			}
			snap.UnreadObjects = append(snap.UnreadObjects, hr)
			snap.Skipped = append(snap.Skipped, fmt.Sprintf("%s %s: %s; the references to it are not judged", label(hr.Group, hr.Kind), name, unread[i]))
		}
	}
	return nil
}

// readRequired lists the objects of the kinds the snapshot's policy kinds
// require one of (policy.Kind.RequiredObjects: Kuadrant's Kuadrant
// objects), metadata only: the engine reads whether one not being deleted
// exists. A kind no CRD serves has no objects (the engine finds none
// missing only when one is there); one RBAC forbids listing is an Unread
// kind, so that its absence is not judged.
func (r *reader) readRequired(ctx context.Context, snap *Snapshot) error {
	var kinds []topology.GroupKind
	for _, k := range r.policyKinds(snap) {
		for _, ro := range k.RequiredObjects {
			if !slices.Contains(kinds, ro.Kind) {
				kinds = append(kinds, ro.Kind)
			}
		}
	}
	slices.SortFunc(kinds, func(a, b topology.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	for _, gk := range kinds {
		res, served := r.crdResources[gk]
		if !served {
			continue
		}
		got, err := r.read(ctx, res)
		if err != nil {
			return err
		}
		for _, o := range got.objects {
			o.Object = metadataOnly(o.Object)
			snap.Objects = append(snap.Objects, o)
		}
		snap.addUnread(got.unread)
	}
	return nil
}

// metadataOnly keeps of u its apiVersion, kind and the metadata the engine
// reads of a required object (engine.RequiredObjectMetadata).
func metadataOnly(u *unstructured.Unstructured) *unstructured.Unstructured {
	md, _ := u.Object["metadata"].(map[string]any)
	slim := map[string]any{}
	for _, k := range engine.RequiredObjectMetadata {
		if v, ok := md[k]; ok {
			slim[k] = v
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": slim}}
}

// listDefault gives the holders of d's kind in its namespace carrying its
// label, as listed; forbidden when RBAC does not allow the list.
func (r *reader) listDefault(ctx context.Context, d policy.DefaultHolder) (found []*unstructured.Unstructured, forbidden bool, err error) {
	res, served, why := r.holderResource(d.Kind)
	if !served || why != "" {
		return nil, false, nil
	}
	list, err := r.dyn.Resource(res.gvr).Namespace(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: d.Label})
	switch {
	case apierrors.IsForbidden(err):
		return nil, true, nil
	case err != nil:
		return nil, false, r.fatal("listing "+d.Kind.String()+" labelled "+d.Label+" in "+d.Namespace, err)
	}
	found = make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		found[i] = &list.Items[i]
	}
	return found, false, nil
}

// holderResource is the resource to get holders of kind gk from: core v1
// for ConfigMaps and Secrets; for ClusterTrustBundles, whose version
// depends on the Kubernetes release (v1 in recent ones, v1beta1 or
// v1alpha1 behind a feature gate in older ones, often not served at
// all), and cert-manager's issuers (served with cert-manager), the one
// discovery found. served is false when the cluster does not serve the
// kind; why says, when its group's discovery failed, that it is not known
// whether it does.
func (r *reader) holderResource(gk topology.GroupKind) (res resource, served bool, why string) {
	if policy.DiscoveredHolder(gk) {
		if res, served = r.holderResources[gk]; served {
			return res, true, "" // a version is served, whichever failed
		}
		if err := r.failedGroups[gk.Group]; err != nil {
			return res, false, fmt.Sprintf("discovery of %s failed (%v)", gk.Group, err)
		}
		return res, false, ""
	}
	return resource{
		label:      label(gk.Group, gk.Kind),
		kind:       gk.Kind,
		gvr:        schema.GroupVersionResource{Group: gk.Group, Version: "v1", Resource: strings.ToLower(gk.Kind) + "s"},
		namespaced: true,
	}, true, ""
}

// readClassParams gets, when a policy kind of the snapshot reads data
// planes (policy.Kind.ReadsDataPlanes), the GatewayClass parameters that the
// snapshot's GatewayClasses name (profiles.ClassParametersRef: Envoy
// Gateway's EnvoyProxy, whose spec.mergeGateways makes the class's
// Gateways one data plane; NGF's NginxProxy, whether telemetry is on) and
// those its Gateways name as their own (profiles.GatewayParametersRef:
// where their telemetry goes), one by one, at the version their CRD stores
// (else its first served one). Only what the engine reads is kept
// (profiles.TrimClassParameters). One that is not there, or whose kind is
// not served, is left out: the class then takes the configuration's
// default, as the implementation would not even accept it. One that RBAC
// forbids getting is left out too, and a Notes line says what is assumed
// instead.
func (r *reader) readClassParams(ctx context.Context, snap *Snapshot) error {
	if !slices.ContainsFunc(r.policyKinds(snap), (*policy.Kind).ReadsDataPlanes) {
		return nil
	}
	classes := map[topology.Ref][]string{}  // the GatewayClasses naming each
	gateways := map[topology.Ref][]string{} // the Gateways naming each as their own
	for _, o := range snap.Objects {
		u := o.Object
		switch (topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}) {
		case topology.KindGatewayClass:
			if ref, ok := profiles.ClassParametersRef(u); ok {
				classes[ref] = append(classes[ref], u.GetName())
			}
		case topology.KindGateway:
			if ref, ok := profiles.GatewayParametersRef(u); ok {
				gateways[ref] = append(gateways[ref], u.GetNamespace()+"/"+u.GetName())
			}
		}
	}
	refs := slices.SortedFunc(maps.Keys(classes), func(a, b topology.Ref) int { return a.Compare(b) })
	for ref := range gateways {
		if _, named := classes[ref]; !named {
			refs = append(refs, ref)
		}
	}
	slices.SortFunc(refs, func(a, b topology.Ref) int { return a.Compare(b) })
	got := make([]*unstructured.Unstructured, len(refs))
	forbidden := make([]bool, len(refs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxParallelLists)
	for i, pr := range refs {
		res, served := r.paramResources[pr.GroupKind()]
		if !served {
			continue // no CRD: the object cannot be there
		}
		g.Go(func() error {
			u, err := r.dyn.Resource(res.gvr).Namespace(pr.Namespace).Get(gctx, pr.Name, metav1.GetOptions{})
			switch {
			case err == nil:
				got[i] = profiles.TrimClassParameters(u)
			case apierrors.IsNotFound(err):
			case apierrors.IsForbidden(err):
				forbidden[i] = true
			default:
				return r.fatal("getting "+res.label+" "+pr.Namespace+"/"+pr.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, pr := range refs {
		switch {
		case got[i] != nil:
			snap.Objects = append(snap.Objects, object(got[i], pr.Kind))
		case forbidden[i] && pr.GroupKind() != profiles.EnvoyProxy:
			// NGF's NginxProxy: what policies need of it is not judged
			// (the engine judges nothing of parameters it does not have).
			var names []string
			for _, n := range classes[pr] {
				names = append(names, "GatewayClass "+n)
			}
			for _, n := range gateways[pr] {
				names = append(names, "Gateway "+n)
			}
			slices.Sort(names)
			snap.Notes = append(snap.Notes, fmt.Sprintf("%s %s/%s: cannot get (forbidden); what policies need of it is not judged (named by %s)",
				label(pr.Group, pr.Kind), pr.Namespace, pr.Name, strings.Join(names, ", ")))
		case forbidden[i]:
			if names := classes[pr]; len(names) > 0 {
				slices.Sort(names)
				what := "GatewayClass " + names[0] + "'s Gateways are"
				if len(names) > 1 {
					what = "the Gateways of GatewayClasses " + strings.Join(names, ", ") + " are"
				}
				snap.Notes = append(snap.Notes, fmt.Sprintf("%s %s/%s: cannot get (forbidden); %s taken as merged into one data plane only if the configuration's default (%s) says so",
					label(pr.Group, pr.Kind), pr.Namespace, pr.Name, what, profiles.EGMergeGateways))
			}
			if names := gateways[pr]; len(names) > 0 {
				slices.Sort(names)
				snap.Notes = append(snap.Notes, fmt.Sprintf("%s %s/%s: cannot get (forbidden); the backends the telemetry of Gateway %s goes to are not known",
					label(pr.Group, pr.Kind), pr.Namespace, pr.Name, strings.Join(names, ", ")))
			}
		}
	}
	return nil
}

// keysOnly drops the values of a ConfigMap's or Secret's data, keeping the
// keys and what the engine judges of the values (package holderdata: a
// digest, a CRL's validity), and the
// kubectl.kubernetes.io/last-applied-configuration annotation, which holds
// them too when kubectl apply made the object.
func keysOnly(u *unstructured.Unstructured) *unstructured.Unstructured {
	holderdata.Redact(u)
	dropLastApplied(u)
	return u
}

// lastApplied is the annotation kubectl apply keeps a copy of its input in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// dropLastApplied drops the lastApplied annotation: a copy of the values
// a holder's reader drops.
func dropLastApplied(u *unstructured.Unstructured) {
	if a := u.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		if len(a) == 0 {
			a = nil // no empty annotations left behind
		}
		u.SetAnnotations(a)
	}
}

// conditionsOnly keeps of a cert-manager issuer what the engine reads:
// apiVersion, kind, metadata (without the lastApplied annotation, a copy
// of its spec) and status.conditions; its spec (an ACME account, a Vault
// server) is dropped.
func conditionsOnly(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": u.Object["metadata"]}
	if conds, ok, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); ok {
		out["status"] = map[string]any{"conditions": conds}
	}
	u.Object = out
	dropLastApplied(u)
	return u
}

// trustBundlePlaceholder stands for the content of a ClusterTrustBundle's
// spec.trustBundle: the engine reads whether the bundle is set, never the
// certificates.
const trustBundlePlaceholder = "set"

// trustBundleOnly keeps of a ClusterTrustBundle what the engine reads:
// apiVersion, kind, metadata (without the lastApplied annotation, a copy
// of the bundle), and spec.trustBundle replaced by trustBundlePlaceholder
// when it is set (left out when it is empty).
func trustBundleOnly(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": u.Object["metadata"]}
	if b, _, _ := unstructured.NestedString(u.Object, "spec", "trustBundle"); b != "" {
		out["spec"] = map[string]any{"trustBundle": trustBundlePlaceholder}
	}
	u.Object = out
	dropLastApplied(u)
	return u
}

func nestedString(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}

// addUnread records what could not be read, in Unread and Skipped.
func (s *Snapshot) addUnread(us []Unread) {
	for _, u := range us {
		s.Unread = append(s.Unread, u)
		s.Skipped = append(s.Skipped, u.Message)
	}
}

// discoverTopology finds, through discovery, the served version of each of
// TopologyKinds: the group's preferred version when it serves the kind, else
// the highest-priority version that does. It finds that of ClusterTrustBundle
// too (r.holderResources), by the same rule: v1, else v1beta1, else v1alpha1,
// the priority order of certificates.k8s.io in every release; and records
// the groups whose discovery failed (r.failedGroups).
func (r *reader) discoverTopology(ctx context.Context, disc *discovery.DiscoveryClient) ([]resource, []Unread, error) {
	lists, err := disc.ServerPreferredResourcesWithContext(ctx)
	var failed *discovery.ErrGroupDiscoveryFailed
	if err != nil && !errors.As(err, &failed) {
		return nil, nil, r.fatal("discovering the served kinds", err)
	}
	var skipped []Unread
	if failed != nil {
		r.failedGroups = map[string]error{}
		for gv, gerr := range failed.Groups {
			r.failedGroups[gv.Group] = gerr
		}
		// Only the groups of the kinds we need matter; a broken aggregated
		// API of another group must not stop the read.
		for gv, gerr := range failed.Groups {
			for _, gk := range TopologyKinds {
				if gk.Group == gv.Group {
					msg := fmt.Sprintf("%s: discovery of %s failed (%v); its kinds are not shown", groupLabel(gv.Group), gv, gerr)
					skipped = append(skipped, Unread{Group: gv.Group, Message: msg})
					break
				}
			}
		}
		slices.SortFunc(skipped, func(a, b Unread) int { return strings.Compare(a.Message, b.Message) }) // map order
	}
	found := map[topology.GroupKind]resource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, ar := range l.APIResources {
			gk := topology.GroupKind{Group: gv.Group, Kind: ar.Kind}
			if policy.DiscoveredHolder(gk) && !strings.Contains(ar.Name, "/") && slices.Contains(ar.Verbs, "get") {
				// A holder, got by name (readHolders).
				if r.holderResources == nil {
					r.holderResources = map[topology.GroupKind]resource{}
				}
				if _, dup := r.holderResources[gk]; !dup {
					r.holderResources[gk] = resource{label: label(gv.Group, ar.Kind), kind: ar.Kind, gvr: gv.WithResource(ar.Name), namespaced: ar.Namespaced}
				}
				continue
			}
			if strings.Contains(ar.Name, "/") || !gatewayapi.Handles(gk) || !slices.Contains(ar.Verbs, "list") {
				continue // subresources (httproutes/status) share the kind
			}
			if _, dup := found[gk]; dup {
				continue
			}
			found[gk] = resource{
				label:      label(gv.Group, ar.Kind),
				kind:       ar.Kind,
				gvr:        gv.WithResource(ar.Name),
				namespaced: ar.Namespaced,
			}
		}
	}
	var out []resource
	for _, gk := range TopologyKinds {
		if res, ok := found[gk]; ok {
			out = append(out, res)
		}
	}
	return out, skipped, nil
}

// readPolicyCRDs lists the policy CRDs and returns them as objects, with the
// policy kinds to list.
func (r *reader) readPolicyCRDs(ctx context.Context) ([]engine.Object, []resource, []Unread, error) {
	// Every CRD: unlabelled ones of profiled kinds are policy kinds too,
	// and unlabelled ones that look like policy kinds are warned about.
	items, err := r.list(ctx, r.dyn.Resource(crdGVR), "", metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, nil, []Unread{{Group: crdGVR.Group, Kind: "CustomResourceDefinition", Policy: true,
			Message: "apiextensions.k8s.io CustomResourceDefinition: cannot list (forbidden); " +
				"policy kinds cannot be discovered, so no policies are shown"}}, nil
	}
	if err != nil {
		return nil, nil, nil, r.fatal("listing the policy CRDs", err)
	}
	var objs []engine.Object
	var pols []resource
	var skipped []Unread
	all := make([]*unstructured.Unstructured, len(items))
	for i := range items {
		all[i] = &items[i]
	}
	r.served = policy.ServedByCRDs(all)
	for i := range items {
		u := &items[i]
		_, labelled := u.GetLabels()[PolicyLabel]
		gk := topology.GroupKind{}
		gk.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
		gk.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "names", "kind")
		if res, why := policyResource(u); why == "" {
			res.policy = false
			if r.crdResources == nil {
				r.crdResources = map[topology.GroupKind]resource{}
			}
			r.crdResources[gk] = res
		}
		if slices.Contains(profiles.ClassParametersKinds, gk) {
			// GatewayClass parameters: their objects are got one by
			// one (readClassParams), at this CRD's version.
			if res, why := policyResource(u); why == "" {
				res.policy = false
				if r.paramResources == nil {
					r.paramResources = map[topology.GroupKind]resource{}
				}
				r.paramResources[gk] = res
			}
		}
		if _, profiled := profiles.Lookup(gk); !labelled && (!profiled || r.opts.DisableProfiles) {
			if policy.LooksLikePolicy(u) {
				objs = append(objs, object(u, "CustomResourceDefinition"))
			}
			continue
		}
		objs = append(objs, object(u, "CustomResourceDefinition"))
		res, why := policyResource(u)
		if why != "" {
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			skipped = append(skipped, Unread{Group: group, Kind: kind, Policy: true, Message: why})
			continue
		}
		pols = append(pols, res)
	}
	return objs, pols, skipped, nil
}

// policyResource is the resource of a policy CRD's instances, at its storage
// version when served, else its first served version. why is set when there
// is none to list.
func policyResource(crd *unstructured.Unstructured) (res resource, why string) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	lbl := label(group, kind)
	if kind == "" || plural == "" {
		return res, fmt.Sprintf("%s: CRD %s names no kind or plural; its policies are not shown", lbl, crd.GetName())
	}
	var version string
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		served, _ := m["served"].(bool)
		storage, _ := m["storage"].(bool)
		if !served || name == "" {
			continue
		}
		if storage || version == "" {
			version = name
		}
		if storage {
			break
		}
	}
	if version == "" {
		return res, fmt.Sprintf("%s: CRD %s serves no version; its policies are not shown", lbl, crd.GetName())
	}
	return resource{
		label:      lbl,
		kind:       kind,
		gvr:        schema.GroupVersionResource{Group: group, Version: version, Resource: plural},
		namespaced: scope != "Cluster",
		policy:     true,
	}, ""
}

// read lists one resource cluster-wide, falling back to Options.Namespace
// when that is forbidden.
func (r *reader) read(ctx context.Context, res resource) (result, error) {
	ri := r.dyn.Resource(res.gvr)
	what := "objects"
	if res.policy {
		what = "policies"
	}
	items, err := r.list(ctx, ri, "", metav1.ListOptions{})
	switch {
	case err == nil:
		return r.result(res, items, nil), nil
	case apierrors.IsNotFound(err):
		// Deleted since discovery, or a CRD not established yet.
		return result{unread: res.unread("", fmt.Sprintf("%s: not served by the API server (%s); its %s are not shown", res.label, res.gvr, what))}, nil
	case !apierrors.IsForbidden(err):
		return result{}, r.fatal("listing "+res.label, err)
	}

	ns := r.opts.Namespace
	if ns == "" {
		return result{unread: res.unread("", fmt.Sprintf("%s: cannot list cluster-wide (forbidden); its %s are not shown", res.label, what))}, nil
	}
	narrowed := fmt.Sprintf("%s: cannot list cluster-wide (forbidden); read namespace %s only", res.label, ns)
	if !res.namespaced {
		if res.gvr.Resource != "namespaces" || res.gvr.Group != "" {
			return result{unread: res.unread("", fmt.Sprintf("%s: cannot list (forbidden; cluster-scoped, so namespace %s does not help); its %s are not shown", res.label, ns, what))}, nil
		}
		// RBAC authorizes a get of namespace N as a request in N, so a
		// RoleBinding in the namespace can grant it.
		u, err := ri.Get(ctx, ns, metav1.GetOptions{})
		switch {
		case err == nil:
			return r.result(res, []unstructured.Unstructured{*u}, res.unread(ns, narrowed)), nil
		case apierrors.IsNotFound(err):
			return result{unread: res.unread(ns, narrowed)}, nil
		case apierrors.IsForbidden(err):
			return result{unread: res.unread("", fmt.Sprintf("%s: cannot list cluster-wide nor get namespace %s (forbidden); namespaces are not shown", res.label, ns))}, nil
		default:
			return result{}, r.fatal("getting namespace "+ns, err)
		}
	}
	items, err = r.list(ctx, ri, ns, metav1.ListOptions{})
	switch {
	case err == nil:
		return r.result(res, items, res.unread(ns, narrowed)), nil
	case apierrors.IsForbidden(err):
		return result{unread: res.unread("", fmt.Sprintf("%s: forbidden in namespace %s; its %s are not shown", res.label, ns, what))}, nil
	case apierrors.IsNotFound(err):
		return result{unread: res.unread("", fmt.Sprintf("%s: not served by the API server (%s); its %s are not shown", res.label, res.gvr, what))}, nil
	default:
		return result{}, r.fatal("listing "+res.label+" in namespace "+ns, err)
	}
}

func (r *reader) result(res resource, items []unstructured.Unstructured, unread []Unread) result {
	out := result{unread: unread, objects: make([]engine.Object, 0, len(items))}
	for i := range items {
		u := &items[i]
		if u.GetKind() == "" {
			u.SetGroupVersionKind(res.gvr.GroupVersion().WithKind(res.kind))
		}
		out.objects = append(out.objects, object(u, res.kind))
	}
	return out
}

// list lists every page of a resource in namespace ("" for all, or for a
// cluster-scoped resource), with opts' selectors.
func (r *reader) list(ctx context.Context, ri dynamic.NamespaceableResourceInterface, ns string, opts metav1.ListOptions) ([]unstructured.Unstructured, error) {
	opts.Limit = r.opts.PageSize
	var items []unstructured.Unstructured
	restarted := false
	for {
		l, err := ri.Namespace(ns).List(ctx, opts)
		if err != nil {
			// A continue token expires with etcd compaction (410 Gone):
			// start over once rather than return a list with a hole.
			if apierrors.IsResourceExpired(err) && opts.Continue != "" && !restarted {
				restarted, items, opts.Continue = true, nil, ""
				continue
			}
			return nil, err
		}
		items = append(items, l.Items...)
		if l.GetContinue() == "" {
			return items, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// fatal wraps an error that stops the read with what to check.
func (r *reader) fatal(doing string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reading the cluster at %s: %s: %w", r.host, doing, err)
	}
	hint := "is it running and reachable? Check --kubeconfig and --context, or read manifests with -f PATH"
	if apierrors.IsUnauthorized(err) {
		hint = "the API server rejected the credentials: check the user of --kubeconfig and --context (an expired token or certificate?)"
	}
	return fmt.Errorf("reading the cluster at %s: %s: %w; %s", r.host, doing, err, hint)
}

// object strips managedFields, which the engine never reads and which are
// often the bulk of an object, and says where the object came from.
func object(u *unstructured.Unstructured, kind string) engine.Object {
	u.SetManagedFields(nil)
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return engine.Object{Object: u, Source: "cluster: " + kind + " " + name}
}

// label names a kind in Skipped lines: `gatewayapi HTTPRoute`,
// `core Service`, `policies.cupcakes.example RetryPolicy`.
func label(group, kind string) string { return groupLabel(group) + " " + kind }

func groupLabel(group string) string {
	switch group {
	case "":
		return "core"
	case topology.GatewayGroup:
		return "gatewayapi"
	}
	return group
}
