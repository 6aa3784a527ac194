package controller

import (
	"context"
	"errors"
	"fmt"
	stdmaps "maps"
	"slices"
	"sort"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// crdGVK is the kind of CustomResourceDefinitions, always watched.
var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// topologyKinds are the kinds the engine reads besides policies. The core
// ones are always watched; the others when their CRD is installed and
// established (a cluster need not serve every route kind, nor ListenerSet,
// which Gateway API releases before v1.5 lack).
var topologyKinds = gatewayapi.Kinds

// optionalTopology are the topology kinds the controller computes without
// when it may not list and watch them (a ClusterRole older than the kind's
// rule, or a custom one), as for holders: logged once, their objects are
// left out and targets of them not judged (engine.Options.Unread). Each
// is served only on some clusters (XListenerSet by Gateway API's
// experimental channel before v1.5, which Gloo Gateway and kgateway
// install; ListenerSet from v1.5; Istio's ServiceEntry; Envoy Gateway's
// Backend), and was added to the shipped ClusterRole after the others:
// without them the computation is the one of the releases that did not
// read them. The other topology kinds are needed: without one, targets
// would look missing and policies would be written TargetNotFound, so the
// controller waits for access.
var optionalTopology = map[topology.GroupKind]bool{
	topology.KindListenerSet:         true,
	topology.KindXListenerSet:        true,
	topology.KindServiceEntry:        true,
	topology.KindEnvoyGatewayBackend: true,
}

// coreVersions are the versions of the topology kinds served without a CRD.
var coreVersions = map[topology.GroupKind]string{
	topology.KindNamespace: "v1",
	topology.KindService:   "v1",
}

var coreResources = map[topology.GroupKind]string{
	topology.KindNamespace: "namespaces",
	topology.KindService:   "services",
}

// holderResources are the resources of the kinds that hold the data
// policies name (CA certificates, object references), watched while a
// policy kind reads them: ConfigMaps and Secrets (core, v1),
// ClusterTrustBundles and cert-manager's Issuers and ClusterIssuers (at
// the version the API server serves: discoveredHolders).
var holderResources = map[topology.GroupKind]string{
	policy.KindConfigMap:          "configmaps",
	policy.KindSecret:             "secrets",
	policy.KindClusterTrustBundle: "clustertrustbundles",
	policy.KindIssuer:             "issuers",
	policy.KindClusterIssuer:      "clusterissuers",
}

// discoveredHolders are the holder kinds whose served version is found
// through discovery (or their CRD: crdHolders), with the versions looked
// for, preferred first:
// ClusterTrustBundle is v1 in recent Kubernetes releases, v1beta1 or
// v1alpha1 behind a feature gate in older ones, and often not served at
// all. A kind not served is not watched: the objects a policy names
// cannot exist, and the references to them are not found, as the
// implementation would not find them.
var discoveredHolders = map[topology.GroupKind][]string{
	policy.KindClusterTrustBundle: {"v1", "v1beta1", "v1alpha1"},
	// cert-manager's issuers (Kuadrant's TLSPolicy names one): served
	// only where cert-manager is installed.
	policy.KindIssuer:        {"v1"},
	policy.KindClusterIssuer: {"v1"},
}

// crdHolders are the holder kinds of discoveredHolders that CRDs serve
// (cert-manager's): whether and at which version they are served is read
// from their CRD, which the controller watches, so that cert-manager
// installed (or removed) after the controller started is picked up at
// once; the others (ClusterTrustBundle, built in) are asked of discovery.
var crdHolders = map[topology.GroupKind]bool{
	policy.KindIssuer:        true,
	policy.KindClusterIssuer: true,
}

// crdInfo is what the controller needs from a CustomResourceDefinition.
type crdInfo struct {
	name   string
	gk     topology.GroupKind
	plural string
	obj    *unstructured.Unstructured
	scope  string
	// version is the version watched: the storage version when served,
	// else the first served one; "" when none is served.
	version string
	// served are the versions served.
	served      []string
	established bool
	// statusSubresource says whether that version has the status
	// subresource: policy status is then patched there, else on the object.
	statusSubresource bool
	// statusConditions says whether that version's schema keeps
	// status.conditions (Envoy Gateway's policies have status.ancestors
	// only: the API server would prune summary conditions).
	statusConditions bool
	// statusAncestorsRequired says whether that version's schema requires
	// status.ancestors, as Gateway API's PolicyStatus does (and every
	// implementation's policy CRD built on it): a status without the field
	// is refused.
	statusAncestorsRequired bool
	// policy says the CRD is labelled gateway.networking.k8s.io/policy or
	// its kind has a built-in profile (when profiles are on).
	policy  bool
	ownedBy string
	// holderKinds are the kinds holding the data its policies name (a
	// policy kind with CA certificate or object references), and
	// ConfigMaps for a kind that reads data planes (the configuration
	// holds the default of merged Gateways).
	holderKinds []topology.GroupKind
	// dataPlanes says its policies ask which Gateways share a data plane
	// (policy.Kind.ReadsDataPlanes): GatewayClass parameters are then watched.
	dataPlanes bool
	// dependencies are the kinds its implementation needs served
	// (policy.Kind.Dependencies).
	dependencies []policy.APIKind
	// requiredKinds are the kinds of the objects its implementation needs
	// on the cluster (policy.Kind.RequiredObjects).
	requiredKinds []topology.GroupKind
}

// requiredKindsOf are the kinds of kind k's required objects.
func requiredKindsOf(k *policy.Kind) []topology.GroupKind {
	var out []topology.GroupKind
	for _, r := range k.RequiredObjects {
		if !slices.Contains(out, r.Kind) {
			out = append(out, r.Kind)
		}
	}
	return out
}

// holderKindsOf are the holder kinds watched for a policy kind: its own
// (policy.Kind.HolderKinds), and ConfigMaps when it reads data planes.
func holderKindsOf(k *policy.Kind) []topology.GroupKind {
	out := k.HolderKinds()
	if k.ReadsDataPlanes() && !slices.Contains(out, policy.KindConfigMap) {
		out = append(out, policy.KindConfigMap)
	}
	return out
}

func readCRD(u *unstructured.Unstructured, withProfiles bool) *crdInfo {
	ci := &crdInfo{name: u.GetName(), obj: u}
	ci.gk.Group, _, _ = unstructured.NestedString(u.Object, "spec", "group")
	ci.gk.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "names", "kind")
	ci.scope, _, _ = unstructured.NestedString(u.Object, "spec", "scope")
	ci.plural, _, _ = unstructured.NestedString(u.Object, "spec", "names", "plural")
	_, ci.policy = u.GetLabels()[policy.LabelPolicy]
	if _, known := profiles.Lookup(ci.gk); known && withProfiles {
		ci.policy = true
	}
	ci.ownedBy = u.GetAnnotations()[AnnotationOwnedBy]
	if ci.policy {
		var prof *policy.Profile
		if withProfiles {
			prof, _ = profiles.Lookup(ci.gk)
		}
		// An invalid descriptor is reported by the engine; no holders.
		if k, prob := policy.KindFromCRDWithProfile(u, nil, prof); prob == nil && k != nil {
			ci.holderKinds = holderKindsOf(k)
			ci.dataPlanes = k.ReadsDataPlanes()
			ci.dependencies = policy.DependencyKinds([]*policy.Kind{k})
			ci.requiredKinds = requiredKindsOf(k)
		}
	}
	if first := policy.CRDVersion(u, true); first != nil {
		ci.version, _ = first["name"].(string)
		_, ci.statusSubresource, _ = unstructured.NestedMap(first, "subresources", "status")
		ci.statusConditions = keepsStatusConditions(first)
		required, _, _ := unstructured.NestedStringSlice(first, "schema", "openAPIV3Schema", "properties", "status", "required")
		ci.statusAncestorsRequired = slices.Contains(required, "ancestors")
	}
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		if m, ok := v.(map[string]any); ok && m["served"] == true {
			if name, ok := m["name"].(string); ok {
				ci.served = append(ci.served, name)
			}
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			ci.established = true
		}
	}
	return ci
}

// keepsStatusConditions reports whether a CRD version's schema keeps
// status.conditions: no schema, a status that preserves unknown fields or
// is absent from a schema that does, or a status with a conditions field.
func keepsStatusConditions(version map[string]any) bool {
	root, found, _ := unstructured.NestedMap(version, "schema", "openAPIV3Schema")
	if !found {
		return true
	}
	status, found, _ := unstructured.NestedMap(root, "properties", "status")
	if !found {
		keep, _, _ := unstructured.NestedBool(root, "x-kubernetes-preserve-unknown-fields")
		return keep
	}
	if keep, _, _ := unstructured.NestedBool(status, "x-kubernetes-preserve-unknown-fields"); keep {
		return true
	}
	_, found, _ = unstructured.NestedMap(status, "properties", "conditions")
	return found
}

// role says what a watched kind is to the controller.
type role int

const (
	roleTopology role = iota
	rolePolicy
	// roleHolder: ConfigMaps, Secrets and ClusterTrustBundles holding the
	// data policies name (CA certificates). Without access, references to
	// them are not judged (engine.Options.Unread).
	roleHolder
	// roleClassParams: GatewayClass parameters (Envoy Gateway's
	// EnvoyProxies), watched while a policy kind reads data planes. Without
	// access, each GatewayClass merges its Gateways as the configuration's
	// default says.
	roleClassParams
	// roleRequired: the kinds of the objects a policy kind's
	// implementation needs on the cluster (policy.Kind.RequiredObjects:
	// Kuadrant's Kuadrant object), watched for whether one exists. Without
	// access, whether one is missing is not judged.
	roleRequired
)

// watch is one watched kind: its informer and our handler on it.
type watch struct {
	gk       topology.GroupKind
	resource string // plural, for the access check
	gvk      schema.GroupVersionKind
	role     role
	proto    *unstructured.Unstructured // for cache calls: the GVK
	inf      cache.Informer
	reg      toolscache.ResourceEventHandlerRegistration
}

// addWatch adds h to the cache's informer for proto, with the errors of
// both steps saying what was watched; the caller takes h off with
// inf.RemoveEventHandler(reg) when it stops.
func addWatch(ctx context.Context, c cache.Cache, proto client.Object, h toolscache.ResourceEventHandler, what string,
	opts ...cache.InformerGetOption) (cache.Informer, toolscache.ResourceEventHandlerRegistration, error) {
	inf, err := c.GetInformer(ctx, proto, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("watching %s: %w", what, err)
	}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return nil, nil, fmt.Errorf("watching %s: %w", what, err)
	}
	return inf, reg, nil
}

func protoFor(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// listCRDs reads every CRD from the cache.
func (c *Controller) listCRDs(ctx context.Context) (map[topology.GroupKind]*crdInfo, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(crdGVK.GroupVersion().WithKind("CustomResourceDefinitionList"))
	if err := c.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing CRDs from the cache: %w", err)
	}
	out := make(map[topology.GroupKind]*crdInfo, len(list.Items))
	for i := range list.Items {
		ci := readCRD(&list.Items[i], !c.opts.DisableProfiles)
		if ci.gk.Kind == "" {
			continue
		}
		out[ci.gk] = ci
	}
	return out, nil
}

// wantedKinds says which kinds to watch, and with which role, given the
// CRDs. The holder kinds of discoveredHolders have no version yet:
// resolveHolderVersions finds it.
func (c *Controller) wantedKinds(crds map[topology.GroupKind]*crdInfo) map[topology.GroupKind]*watch {
	want := map[topology.GroupKind]*watch{}
	add := func(gk topology.GroupKind, version, resource string, r role) {
		if _, discovered := discoveredHolders[gk]; discovered && r == roleHolder {
			version = "" // found by resolveHolderVersions
		}
		want[gk] = &watch{gk: gk, gvk: schema.GroupVersionKind{Group: gk.Group, Version: version, Kind: gk.Kind}, resource: resource, role: r}
	}
	for _, gk := range topologyKinds {
		if v, ok := coreVersions[gk]; ok {
			add(gk, v, coreResources[gk], roleTopology)
			continue
		}
		if ci := crds[gk]; ci != nil && ci.established && ci.version != "" {
			add(gk, ci.version, ci.plural, roleTopology)
		}
	}
	for gk, ci := range crds {
		if (ci.policy || c.goKinds[gk]) && ci.established && ci.version != "" && want[gk] == nil {
			add(gk, ci.version, ci.plural, rolePolicy)
			for _, h := range ci.holderKinds {
				if want[h] == nil {
					add(h, "v1", holderResources[h], roleHolder)
				}
			}
		}
	}
	var required []topology.GroupKind
	for gk, w := range want {
		if ci := crds[gk]; w.role == rolePolicy && ci != nil {
			required = append(required, ci.requiredKinds...)
		}
	}
	for _, k := range c.opts.Kinds {
		required = append(required, requiredKindsOf(k)...)
	}
	for _, gk := range required {
		// Not served: no such object can exist, and the engine finds none.
		if ci := crds[gk]; ci != nil && ci.established && ci.version != "" && want[gk] == nil {
			add(gk, ci.version, ci.plural, roleRequired)
		}
	}
	dataPlanes := false
	for gk, w := range want {
		if ci := crds[gk]; w.role == rolePolicy && ci != nil && ci.dataPlanes {
			dataPlanes = true
		}
	}
	for _, k := range c.opts.Kinds {
		for _, h := range holderKindsOf(k) {
			if want[h] == nil {
				add(h, "v1", holderResources[h], roleHolder)
			}
		}
		dataPlanes = dataPlanes || k.ReadsDataPlanes()
	}
	if dataPlanes {
		for _, gk := range profiles.ClassParametersKinds {
			if ci := crds[gk]; ci != nil && ci.established && ci.version != "" && want[gk] == nil {
				add(gk, ci.version, ci.plural, roleClassParams)
			}
		}
	}
	return want
}

// syncInformers starts informers for the kinds that became watchable (a
// policy CRD created after start, a route CRD installed later), stops those
// whose CRD is gone, and reports whether every watched informer has synced.
// Only the controller's worker calls it.
func (c *Controller) syncInformers(ctx context.Context, crds map[topology.GroupKind]*crdInfo) (bool, error) {
	want := c.wantedKinds(crds)
	undiscovered := c.resolveHolderVersions(ctx, want, crds)
	var add []*watch
	// Only this worker changes c.watches; the lock is for the event
	// handlers' reads, and is not held across API calls.
	c.mu.Lock()
	var remove []*watch
	for gk, w := range c.watches {
		if nw := want[gk]; nw != nil && nw.gvk == w.gvk {
			w.role = nw.role
			continue
		}
		remove = append(remove, w)
		delete(c.watches, gk)
	}
	for _, w := range want {
		if c.watches[w.gk] == nil {
			add = append(add, w)
		}
	}
	c.mu.Unlock()

	for _, w := range remove {
		if err := w.inf.RemoveEventHandler(w.reg); err != nil {
			c.log.Error(err, "removing event handler", "kind", w.gk.String())
		}
		// The informer of a kind that is no longer served would retry its
		// list forever; one that is still served (a CRD that lost its
		// label, a changed version) is left to whoever else uses it, but
		// for a discovered holder kind, whose version changes when the
		// old one is no longer served.
		_, discovered := discoveredHolders[w.gk]
		if (want[w.gk] == nil || discovered) && crds[w.gk] == nil && coreVersions[w.gk] == "" {
			if err := c.cache.RemoveInformer(ctx, w.proto); err != nil {
				c.log.Error(err, "removing informer", "kind", w.gk.String())
			}
		}
		c.log.Info("stopped watching", "kind", w.gk.String(), "version", w.gvk.Version)
	}

	sort.Slice(add, func(i, j int) bool { return add[i].gk.String() < add[j].gk.String() })
	var errs []error
	// Holder kinds wanted but not readable: kept from the last sync for
	// those still not added, recomputed for those tried now.
	unread := map[topology.GroupKind]bool{}
	c.mu.Lock()
	for gk := range c.unreadKinds {
		if want[gk] != nil && c.watches[gk] == nil {
			unread[gk] = true
		}
	}
	c.mu.Unlock()
	for _, w := range add {
		delete(unread, w.gk)
	}
	for gk := range undiscovered {
		unread[gk] = true
	}
	for _, w := range add {
		ok, err := c.canWatch(ctx, w)
		if err != nil {
			// Not known: computing without the kind could remove
			// conditions that are still true.
			errs = append(errs, err)
			continue
		}
		if !ok {
			if w.role == rolePolicy {
				// A policy kind this controller may not read is left
				// out (its policies are not seen), rather than
				// blocking every other kind.
				continue
			}
			if w.role == roleHolder || w.role == roleRequired || (w.role == roleTopology && optionalTopology[w.gk]) {
				// References to the holders, and targets of the
				// optional topology kind, are then not judged.
				unread[w.gk] = true
				continue
			}
			if w.role == roleClassParams {
				// Computed without them: each GatewayClass merges
				// its Gateways as the configuration's default says.
				c.mu.Lock()
				said := c.unreadParams[w.gk]
				c.unreadParams[w.gk] = true
				c.mu.Unlock()
				if !said {
					c.log.Info("not watching GatewayClass parameters: list and watch are not allowed; "+
						"GatewayClasses merge their Gateways only if the configuration's default says so ("+profiles.EGMergeGateways+")",
						"kind", w.gk.String(), "resource", w.resource)
				}
				continue
			}
			// Without a topology kind, targets would look missing and
			// policies would be written TargetNotFound: wait instead.
			errs = append(errs, fmt.Errorf("cannot list and watch %s: forbidden; grant it to the controller", w.gk))
			continue
		}
		w.proto = protoFor(w.gvk)
		h := c.handler(w.gk)
		switch w.role {
		case roleHolder:
			h = c.holderHandler()
		case roleClassParams:
			h = c.classParamsHandler()
		case roleRequired:
			h = c.requiredHandler()
		}
		inf, reg, err := addWatch(ctx, c.cache, w.proto, h, w.gk.String(), cache.BlockUntilSynced(false))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.inf, w.reg = inf, reg
		c.mu.Lock()
		c.watches[w.gk] = w
		delete(c.unreadParams, w.gk) // a later denial is said again
		c.mu.Unlock()
		c.log.Info("watching", "kind", w.gk.String(), "version", w.gvk.Version, "policy", w.role == rolePolicy)
	}
	c.mu.Lock()
	changed := !stdmaps.Equal(unread, c.unreadKinds)
	c.unreadKinds = unread
	c.mu.Unlock()
	for gk := range unread {
		if optionalTopology[gk] {
			// Nothing else may happen to ask again: a grant is picked
			// up when the denial is no longer trusted.
			c.queue.AddAfter(itemRecompute, recheckAccess)
			break
		}
	}
	if changed {
		// The engine judged references with the other set: start over.
		c.resetEngine()
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	for _, w := range c.watchList() {
		if !w.inf.HasSynced() || !w.reg.HasSynced() {
			return false, nil
		}
	}
	return true, nil
}

// resolveHolderVersions sets the version of the wanted holder kinds of
// discoveredHolders to the one the API server serves (crdHolders: the
// first of the versions looked for that their established CRD serves;
// the others: servedVersion), and takes out of want those it does not
// serve, and those whose discovery failed, which it returns: references
// to them are then not judged.
func (c *Controller) resolveHolderVersions(ctx context.Context, want map[topology.GroupKind]*watch, crds map[topology.GroupKind]*crdInfo) map[topology.GroupKind]bool {
	var failed map[topology.GroupKind]bool
	for gk, versions := range discoveredHolders {
		w := want[gk]
		if w == nil || w.role != roleHolder {
			continue
		}
		var v string
		var err error
		if crdHolders[gk] {
			v = c.crdServedVersion(gk, crds[gk], versions)
		} else {
			v, err = c.servedVersion(ctx, gk, w.resource, versions)
		}
		switch {
		case err != nil:
			delete(want, gk)
			if failed == nil {
				failed = map[topology.GroupKind]bool{}
			}
			failed[gk] = true
		case v == "":
			delete(want, gk)
		default:
			w.gvk.Version = v
		}
	}
	return failed
}

// discoveryResult is the outcome of one servedVersion lookup.
type discoveryResult struct {
	version string // "" when not served
	err     error
	at      time.Time
}

// servedVersion returns the first of versions at which the API server
// serves resource of gk's group with list and watch, "" when none. The
// answer is trusted for recheckAccess: a kind turned on, or a version
// retired, by an upgrade of the API server is picked up then.
func (c *Controller) servedVersion(ctx context.Context, gk topology.GroupKind, resource string, versions []string) (string, error) {
	c.accessMu.Lock()
	prev, ok := c.discovered[gk]
	c.accessMu.Unlock()
	if ok && time.Since(prev.at) < recheckAccess {
		return prev.version, prev.err
	}
	res := discoveryResult{at: time.Now()}
	for _, v := range versions {
		gv := schema.GroupVersion{Group: gk.Group, Version: v}.String()
		l, err := c.disc.ServerResourcesForGroupVersionWithContext(ctx, gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			res.err = fmt.Errorf("discovering %s: %w", gv, err)
			break
		}
		if slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool {
			return r.Name == resource && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
		}) {
			res.version = v
			break
		}
	}
	if err := ctx.Err(); err != nil && res.err != nil {
		return "", res.err // cancelled: not an answer to keep
	}
	c.noteServed(gk, res)
	return res.version, res.err
}

// crdServedVersion returns the first of versions that ci, the CRD of a
// holder kind of crdHolders, serves once established; "" when none, or
// when there is no such CRD.
func (c *Controller) crdServedVersion(gk topology.GroupKind, ci *crdInfo, versions []string) string {
	res := discoveryResult{at: time.Now()}
	if ci != nil && ci.established {
		for _, v := range versions {
			if slices.Contains(ci.served, v) {
				res.version = v
				break
			}
		}
	}
	c.noteServed(gk, res)
	return res.version
}

// noteServed records whether a holder kind is served, and logs it when
// that changed.
func (c *Controller) noteServed(gk topology.GroupKind, res discoveryResult) {
	c.accessMu.Lock()
	prev, ok := c.discovered[gk]
	c.discovered[gk] = res
	c.accessMu.Unlock()
	if !ok || prev.version != res.version || (prev.err == nil) != (res.err == nil) {
		switch {
		case res.err != nil:
			c.log.Error(res.err, "cannot tell whether the API server serves a holder kind; references to its objects are not judged", "kind", gk.String())
		case res.version == "":
			c.log.Info("holder kind not served by the API server: not watched, references to its objects are not found", "kind", gk.String())
		}
	}
}

// watchOf returns the watch of a kind, or nil.
func (c *Controller) watchOf(gk topology.GroupKind) *watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watches[gk]
}

// isPolicyKind reports whether gk is watched as a policy kind.
func (c *Controller) isPolicyKind(gk topology.GroupKind) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.watches[gk]
	return w != nil && w.role == rolePolicy
}

// watchList returns the watches, sorted by kind, for a deterministic input.
func (c *Controller) watchList() []*watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*watch, 0, len(c.watches))
	for _, w := range c.watches {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gk.String() < out[j].gk.String() })
	return out
}

// recheckAccess is how long a denied access check is trusted (a variable
// so that tests can see a grant picked up without waiting a minute).
var recheckAccess = time.Minute

// access is the outcome of an access check.
type access struct {
	allowed bool
	at      time.Time
}

// canWatch asks the API server (SelfSubjectAccessReview) whether this
// controller may list and watch a kind cluster-wide. An allowed kind is not
// asked again; a denied one after recheckAccess, so that a grant made later
// is picked up.
func (c *Controller) canWatch(ctx context.Context, w *watch) (bool, error) {
	c.accessMu.Lock()
	prev, ok := c.access[w.gk]
	c.accessMu.Unlock()
	if ok && (prev.allowed || time.Since(prev.at) < recheckAccess) {
		return prev.allowed, nil
	}
	allowed := true
	for _, verb := range []string{"list", "watch"} {
		sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: w.gk.Group, Resource: w.resource},
		}}
		res, err := c.authz.Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("checking access to %s: %w", w.gk, err)
		}
		allowed = allowed && res.Status.Allowed
	}
	c.accessMu.Lock()
	c.access[w.gk] = access{allowed: allowed, at: time.Now()}
	c.accessMu.Unlock()
	// Said when access is first denied, not at every recheck; class
	// parameters are said once by syncInformers.
	if !allowed && (!ok || prev.allowed) && w.role != roleClassParams {
		switch w.role {
		case rolePolicy:
			c.log.Info("not watching a policy kind: list and watch are not allowed; its policies are ignored", "kind", w.gk.String(), "resource", w.resource)
		case roleRequired:
			c.log.Info("not watching a kind of object a policy kind's implementation needs: list and watch are not allowed; whether one is missing is not judged", "kind", w.gk.String(), "resource", w.resource)
		case roleHolder:
			// The shipped ClusterRole leaves Secrets out on purpose.
			c.log.Info("not watching a kind policies name for its data: list and watch are not allowed; references to it are not judged", "kind", w.gk.String(), "resource", w.resource)
		case roleTopology:
			if optionalTopology[w.gk] {
				// A ClusterRole older than the kind's rule: the image
				// upgraded without deploy/ applied again.
				c.log.Error(nil, "not watching a topology kind: list and watch are not allowed; computing without its objects (policies targeting them are not judged, routes attached to them are left unattached); grant it to the controller (deploy/base/clusterrole.yaml)",
					"kind", w.gk.String(), "resource", w.resource)
				break
			}
			c.log.Error(nil, "cannot list and watch a kind the engine needs; waiting for access", "kind", w.gk.String(), "resource", w.resource)
		default:
			c.log.Error(nil, "cannot list and watch a kind the engine needs; waiting for access", "kind", w.gk.String(), "resource", w.resource)
		}
	}
	return allowed, nil
}
