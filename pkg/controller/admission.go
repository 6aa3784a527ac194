package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdmaps "maps"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
	"github.com/attache-dev/attache/pkg/webhook"
)

// AdmissionOptions configure the admission webhook's state (Admission).
type AdmissionOptions struct {
	// Deny are the policy kinds for which prevention is on (a CRD's
	// webhook.AnnotationAdmission overrides it either way).
	Deny []topology.GroupKind
	// WebhookConfiguration is the name of the
	// ValidatingWebhookConfiguration whose rules the leader keeps in step
	// with the policy kinds ("": not kept).
	WebhookConfiguration string
	// Debounce delays a recomputation after an event (default 100 ms).
	Debounce time.Duration
}

// Admission answers the admission webhook (webhook.Source) on every
// replica, leader or not: from the controller's engine state on the leader
// once the controller has computed, and otherwise from an engine state of
// its own computed from the manager's cache (dropped once the controller's
// can be used, so that the leader holds one state, not two). It shares the cache's informers with the
// controller and writes nothing but, on the leader, the rules of the
// webhook configuration. Build it with Controller.Admission.
type Admission struct {
	c    *Controller
	opts AdmissionOptions
	deny map[topology.GroupKind]bool
	log  logr.Logger

	// mu serialises the engine: recomputations and what-ifs.
	mu  sync.Mutex
	inc *engine.Incremental
	// incServed are the kinds the CRDs served when inc was made (see
	// Controller.incServed). Under mu.
	incServed policy.ServedAPIs
	// res is the last Result, read without the lock.
	res   atomic.Pointer[engine.Result]
	kinds atomic.Pointer[map[topology.GroupKind]bool] // policy kind -> deny
	// reads are the annotations each policy kind reads of its policies.
	reads atomic.Pointer[map[topology.GroupKind][]string]

	watchMu sync.Mutex
	watches map[topology.GroupKind]*watch
	// unread are the holder and optional topology kinds this replica's
	// own state could not read (see Controller.unreadKinds, which only
	// the leader fills): references to them, and targets of them, are
	// not judged, rather than warned of as missing.
	unread atomic.Pointer[map[topology.GroupKind]bool]
	dirty  chan struct{}
	// synced: this replica's own informers synced; ready: a state was
	// computed from them (or the controller's is used).
	synced atomic.Bool
	ready  atomic.Bool
	// rules are the rules last written to (or found in) the webhook
	// configuration; configurations is the informer of webhook
	// configurations, whose cache says what the rules are now (set by
	// Start when the rules are kept).
	rules          []admissionregistrationv1.RuleWithOperations
	configurations cache.Informer
}

// Admission returns the admission webhook's state and adds it to the
// manager; every replica runs it.
func (c *Controller) Admission(opts AdmissionOptions) (*Admission, error) {
	if opts.Debounce == 0 {
		opts.Debounce = 100 * time.Millisecond
	}
	a := &Admission{c: c, opts: opts, deny: map[topology.GroupKind]bool{}, log: c.log.WithName("admission"),
		watches: map[topology.GroupKind]*watch{}, dirty: make(chan struct{}, 1)}
	a.unread.Store(&map[topology.GroupKind]bool{})
	a.inc = c.newEngine(nil, a.unreadKind)
	for _, gk := range opts.Deny {
		a.deny[gk] = true
	}
	empty := map[topology.GroupKind]bool{}
	a.kinds.Store(&empty)
	noReads := map[topology.GroupKind][]string{}
	a.reads.Store(&noReads)
	// Each computation of the controller may change what answers.
	mark := a.markDirty
	c.computed.Store(&mark)
	if err := c.mgr.Add(a); err != nil {
		return nil, fmt.Errorf("admission: adding to the manager: %w", err)
	}
	return a, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica answers the webhook.
func (a *Admission) NeedLeaderElection() bool { return false }

// ReadyCheck is a healthz.Checker: ready once the informers it answers
// from have synced (Ready).
func (a *Admission) ReadyCheck(_ *http.Request) error {
	if !a.Ready() {
		return errors.New("admission informers not synced yet")
	}
	return nil
}

// Ready reports whether the informers the webhook answers from have
// synced: its own, or on the leader the controller's. Until the state is
// computed from them (Computed), requests are admitted without warnings,
// as when the webhook is down (failurePolicy: Ignore), and never denied.
func (a *Admission) Ready() bool {
	return a.synced.Load() || (a.leading() && a.c.cachesReady.Load())
}

// Computed reports whether a state answers: computed from synced caches.
func (a *Admission) Computed() bool { return a.ready.Load() || a.shared() }

// Start keeps the state up to date until ctx is done.
func (a *Admission) Start(ctx context.Context) error {
	crdInf, reg, err := addWatch(ctx, a.c.cache, protoFor(crdGVK), a.handler(), "CustomResourceDefinitions")
	if err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	defer func() { _ = crdInf.RemoveEventHandler(reg) }()
	if a.opts.WebhookConfiguration != "" {
		// The leader keeps the configuration's rules: one written over
		// (kubectl apply -k deploy/ again, a GitOps sync) is written back.
		// Not waited for: without the right to watch them (the shipped
		// RBAC has it), the rules are written when they change, as
		// before.
		vwcInf, vreg, err := addWatch(ctx, a.c.cache, protoFor(vwcGVK), a.configurationHandler(), "ValidatingWebhookConfigurations",
			cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("admission: %w", err)
		}
		defer func() { _ = vwcInf.RemoveEventHandler(vreg) }()
		a.configurations = vwcInf
	}
	defer a.removeWatches()
	resync := time.NewTicker(time.Minute)
	defer resync.Stop()
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-a.dirty:
			// Events come in bursts: one computation for the burst.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(a.opts.Debounce):
			}
		case <-retry.C:
		case <-resync.C:
		}
		if err := a.refresh(ctx); err != nil {
			if !errors.Is(err, errNotSynced) && ctx.Err() == nil {
				a.log.Error(err, "computing the admission state; retrying")
			}
			retry.Reset(200 * time.Millisecond)
		}
	}
}

// markDirty asks for a refresh.
func (a *Admission) markDirty() {
	select {
	case a.dirty <- struct{}{}:
	default:
	}
}

// handler marks the state dirty on any event.
func (a *Admission) handler() toolscache.ResourceEventHandler {
	mark := a.markDirty
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { mark() },
		UpdateFunc: func(any, any) { mark() },
		DeleteFunc: func(any) { mark() },
	}
}

// vwcGVK is the kind of the webhook configuration whose rules the leader
// keeps.
var vwcGVK = admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration")

// configurationHandler asks the leader for a refresh when the webhook
// configuration changes: its rules are then compared and written back if
// someone else wrote them.
func (a *Admission) configurationHandler() toolscache.ResourceEventHandler {
	mark := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GetName() == a.opts.WebhookConfiguration && a.leading() {
			a.markDirty()
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    mark,
		UpdateFunc: func(_, obj any) { mark(obj) },
	}
}

// refresh recomputes the state from the cache, watching the kinds that
// became watchable, and on the leader writes the webhook's rules.
func (a *Admission) refresh(ctx context.Context) error {
	crds, err := a.c.listCRDs(ctx)
	if err != nil {
		return err
	}
	var res *engine.Result
	if a.leading() && !a.shared() {
		// The controller is about to compute: wait for its state rather
		// than hold a second one meanwhile.
		return errNotSynced
	}
	if a.shared() {
		// The controller's state answers: drop ours.
		a.mu.Lock()
		a.inc = nil
		a.mu.Unlock()
		a.res.Store(nil)
		a.removeWatches()
		res = a.c.lastRes.Load()
	} else if res, err = a.refreshOwn(ctx, crds); err != nil {
		return err
	}
	return a.publish(ctx, res, crds)
}

// shared reports whether the controller's engine state answers: this
// replica leads and the controller has computed.
func (a *Admission) shared() bool {
	return a.c.leader.Load() && a.c.synced.Load() && a.c.lastRes.Load() != nil
}

// leading reports whether this replica leads (or runs without leader
// election).
func (a *Admission) leading() bool {
	select {
	case <-a.c.mgr.Elected():
		return true
	default:
		return false
	}
}

// refreshOwn recomputes this replica's own state from the cache, watching
// the kinds that became watchable.
func (a *Admission) refreshOwn(ctx context.Context, crds map[topology.GroupKind]*crdInfo) (*engine.Result, error) {
	want := a.c.wantedKinds(crds)
	undiscovered := a.c.resolveHolderVersions(ctx, want, crds)
	unreadChanged, err := a.syncWatches(ctx, want, undiscovered)
	if err != nil {
		return nil, err
	}
	var objs []engine.Object
	for _, ci := range crds {
		if ci.policy {
			objs = append(objs, engine.Object{Object: ci.obj, Source: "cluster: CustomResourceDefinition " + ci.name})
		}
	}
	a.watchMu.Lock()
	ws := make([]*watch, 0, len(a.watches))
	for _, w := range a.watches {
		ws = append(ws, w)
	}
	a.watchMu.Unlock()
	sort.Slice(ws, func(i, j int) bool { return ws[i].gk.String() < ws[j].gk.String() })
	for _, w := range ws {
		if !w.inf.HasSynced() || !w.reg.HasSynced() {
			return nil, errNotSynced
		}
	}
	a.synced.Store(true)
	for _, w := range ws {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(w.gvk.GroupVersion().WithKind(w.gvk.Kind + "List"))
		if err := a.c.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing %s from the cache: %w", w.gk, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			objs = append(objs, engine.Object{Object: u, Source: "cluster: " + keyOf(u).String()})
		}
	}
	a.mu.Lock()
	if served, _ := a.c.servedByCRDs(crds); a.inc == nil || a.incServed == nil || !stdmaps.Equal(served, a.incServed) || unreadChanged {
		// A dependency's CRD installed or removed, or a kind became
		// readable or unreadable (references were judged with the
		// other set): start afresh.
		a.inc, a.incServed = a.c.newEngine(served, a.unreadKind), served
	}
	res := a.compute(objs)
	a.mu.Unlock()
	if res == nil {
		return nil, errors.New("the engine failed; recomputing")
	}
	a.res.Store(res)
	return res, nil
}

// publish makes the policy kinds of res (and whether each is denied)
// current, marks the state ready and, on the leader, writes the webhook's
// rules.
func (a *Admission) publish(ctx context.Context, res *engine.Result, crds map[topology.GroupKind]*crdInfo) error {
	kinds := map[topology.GroupKind]bool{}
	reads := map[topology.GroupKind][]string{}
	var policyResources []webhook.Resource
	for _, k := range res.Kinds {
		if k.WeightAnnotation != "" {
			reads[k.GroupKind] = []string{k.WeightAnnotation}
		}
		deny := a.deny[k.GroupKind]
		if ci := crds[k.GroupKind]; ci != nil {
			switch strings.TrimSpace(ci.obj.GetAnnotations()[webhook.AnnotationAdmission]) {
			case "deny":
				deny = true
			case "warn":
				deny = false
			}
			if ci.plural != "" {
				policyResources = append(policyResources, webhook.Resource{Group: k.GroupKind.Group, Resource: ci.plural})
			}
		}
		kinds[k.GroupKind] = deny
	}
	a.kinds.Store(&kinds)
	a.reads.Store(&reads)
	a.ready.Store(true)
	select {
	case <-a.c.mgr.Elected():
		return a.writeRules(ctx, append(webhook.TopologyResources(), policyResources...))
	default:
		return nil
	}
}

// compute runs the engine, a panic turned into a fresh engine and nil.
func (a *Admission) compute(objs []engine.Object) (res *engine.Result) {
	defer func() {
		if r := recover(); r != nil {
			a.log.Error(fmt.Errorf("%v", r), "the engine panicked")
			a.inc = a.c.newEngine(a.incServed, a.unreadKind)
			res = nil
		}
	}()
	return a.inc.Compute(objs)
}

// unreadKind reports whether this replica's own state could not read gk.
func (a *Admission) unreadKind(gk topology.GroupKind) bool { return (*a.unread.Load())[gk] }

// syncWatches gets the informers of the wanted kinds (shared with the
// controller's, when this replica leads) and drops those no longer wanted.
// The holder kinds, required objects' kinds and optional topology kinds it
// may not watch, and undiscovered (holder kinds whose served version could
// not be found),
// become the unread kinds; it reports whether they changed.
func (a *Admission) syncWatches(ctx context.Context, want map[topology.GroupKind]*watch, undiscovered map[topology.GroupKind]bool) (bool, error) {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	unread := map[topology.GroupKind]bool{}
	for gk := range undiscovered {
		unread[gk] = true
	}
	for gk, w := range a.watches {
		if nw := want[gk]; nw == nil || nw.gvk != w.gvk {
			_ = w.inf.RemoveEventHandler(w.reg)
			delete(a.watches, gk)
		}
	}
	var errs []error
	for gk, w := range want {
		if a.watches[gk] != nil {
			continue
		}
		ok, err := a.c.canWatch(ctx, w)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			switch {
			case w.role == roleHolder || w.role == roleRequired || (w.role == roleTopology && optionalTopology[gk]):
				unread[gk] = true
			case w.role == roleTopology:
				errs = append(errs, fmt.Errorf("cannot list and watch %s: forbidden", gk))
			}
			continue
		}
		w.proto = protoFor(w.gvk)
		inf, reg, err := addWatch(ctx, a.c.cache, w.proto, a.handler(), gk.String(), cache.BlockUntilSynced(false))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.inf, w.reg = inf, reg
		a.watches[gk] = w
	}
	changed := !stdmaps.Equal(unread, *a.unread.Load())
	a.unread.Store(&unread)
	return changed, errors.Join(errs...)
}

func (a *Admission) removeWatches() {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	for gk, w := range a.watches {
		_ = w.inf.RemoveEventHandler(w.reg)
		delete(a.watches, gk)
	}
}

// writeRules sets the rules of the webhook (webhook.Name) in the webhook
// configuration when they differ from those it has (read from the cache:
// someone may have written over them since): a strategic merge patch,
// which keeps the caBundle that cert-manager or the certificate rotator
// injects.
func (a *Admission) writeRules(ctx context.Context, resources []webhook.Resource) error {
	if a.opts.WebhookConfiguration == "" {
		return nil
	}
	rules := webhook.Rules(resources)
	if a.configurations != nil && a.configurations.HasSynced() {
		live := protoFor(vwcGVK)
		switch err := a.c.cache.Get(ctx, client.ObjectKey{Name: a.opts.WebhookConfiguration}, live); {
		case apierrors.IsNotFound(err):
			return a.notInstalled(rules)
		case err != nil:
			return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", a.opts.WebhookConfiguration, err)
		}
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &vwc); err != nil {
			return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", a.opts.WebhookConfiguration, err)
		}
		for _, w := range vwc.Webhooks {
			if w.Name == webhook.Name && equality.Semantic.DeepEqual(w.Rules, rules) {
				a.rules = rules
				return nil
			}
		}
	} else if reflect.DeepEqual(rules, a.rules) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"webhooks": []any{map[string]any{"name": webhook.Name, "rules": rules}}})
	if err != nil {
		return err
	}
	target := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	target.Name = a.opts.WebhookConfiguration
	if err := a.c.client.Patch(ctx, target, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return a.notInstalled(rules)
		}
		return fmt.Errorf("writing the rules of ValidatingWebhookConfiguration %s: %w", a.opts.WebhookConfiguration, err)
	}
	a.log.Info("webhook rules written", "name", a.opts.WebhookConfiguration, "resources", len(resources))
	a.rules = rules
	return nil
}

// notInstalled notes, once per set of rules, that the webhook
// configuration is not there to write them to.
func (a *Admission) notInstalled(rules []admissionregistrationv1.RuleWithOperations) error {
	if !reflect.DeepEqual(rules, a.rules) {
		a.log.Info("the webhook configuration is not installed; its rules are not kept", "name", a.opts.WebhookConfiguration)
		a.rules = rules
	}
	return nil
}

// Kind implements webhook.Source.
func (a *Admission) Kind(gk topology.GroupKind) (isPolicy, deny bool) {
	deny, isPolicy = (*a.kinds.Load())[gk]
	return isPolicy, deny
}

// ReadAnnotations implements webhook.AnnotationsReader.
func (a *Admission) ReadAnnotations(gk topology.GroupKind) []string {
	return (*a.reads.Load())[gk]
}

// Affected implements webhook.Source: from the last Result, no lock.
func (a *Admission) Affected(ref topology.Ref, deleting bool) []string {
	return advice.Affected(a.result(), ref, deleting)
}

// Created implements webhook.Source: from the last Result, no lock, and
// for a backend the routes naming it, read from the cache.
func (a *Admission) Created(obj *unstructured.Unstructured, ref topology.Ref) []string {
	res := a.result()
	if res == nil {
		return nil
	}
	return advice.Created(res, obj, ref, a.referrers(ref))
}

// referrers are the rules of the cached routes in ref's namespace that
// name ref as a backend (a route being created has none: routes are not
// backends).
func (a *Admission) referrers(ref topology.Ref) []topology.Ref {
	var out []topology.Ref
	for _, gk := range topology.RouteKinds {
		if gk == ref.GroupKind() {
			return nil
		}
		a.watchMu.Lock()
		w := a.watches[gk]
		a.watchMu.Unlock()
		if w == nil {
			w = a.c.watchOf(gk)
		}
		if w == nil {
			continue
		}
		// The routes of the object's namespace (the cache's namespace
		// index): a route elsewhere naming it needs a ReferenceGrant, and
		// is left out to keep the answer within milliseconds on large
		// clusters.
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(w.gvk.GroupVersion().WithKind(w.gvk.Kind + "List"))
		if err := a.c.cache.List(context.Background(), list, client.InNamespace(ref.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		for i := range list.Items {
			out = append(out, ruleReferrers(&list.Items[i], gk, ref)...)
		}
	}
	return out
}

// ruleReferrers are the rules of route u (of kind gk) whose backendRefs
// name ref, as sections of the route.
func ruleReferrers(u *unstructured.Unstructured, gk topology.GroupKind, ref topology.Ref) []topology.Ref {
	// Read in place (NestedSlice would copy every route): this runs over
	// every cached route for each Service created.
	spec, _ := u.Object["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	var hits []int
	for i, r := range rules {
		rm, _ := r.(map[string]any)
		brs, _ := rm["backendRefs"].([]any)
		for _, b := range brs {
			bm, _ := b.(map[string]any)
			if bm != nil && backendNames(bm, u, ref) {
				hits = append(hits, i)
				break
			}
		}
	}
	if len(hits) == 0 {
		return nil
	}
	names := make([]*gwv1.SectionName, len(rules))
	for i, r := range rules {
		rm, _ := r.(map[string]any)
		if n, _ := rm["name"].(string); n != "" {
			sn := gwv1.SectionName(n)
			names[i] = &sn
		}
	}
	sections, _ := gatewayapi.RuleSections(names)
	route := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	out := make([]topology.Ref, 0, len(hits))
	for _, i := range hits {
		out = append(out, route.WithSection(sections[i]))
	}
	return out
}

// backendNames reports whether a backendRef of route u (defaults: core
// Service, the route's namespace) names ref. The name is compared first:
// it rules out nearly every backendRef at the cost of one lookup.
func backendNames(b map[string]any, u *unstructured.Unstructured, ref topology.Ref) bool {
	if name, _ := b["name"].(string); name != ref.Name {
		return false
	}
	routeNS := u.GetNamespace()
	group, _ := b["group"].(string)
	kind, _ := b["kind"].(string)
	if kind == "" {
		kind = "Service"
	}
	ns, _ := b["namespace"].(string)
	if ns == "" {
		ns = routeNS
	}
	return group == ref.Group && kind == ref.Kind && ns == ref.Namespace
}

// result is the last Result answers are read from: the controller's on
// the leader, this replica's own otherwise; nil until one is computed.
func (a *Admission) result() *engine.Result {
	if !a.Computed() {
		return nil
	}
	res := a.res.Load()
	if a.shared() || res == nil {
		res = a.c.lastRes.Load()
	}
	return res
}

// Policy implements webhook.Source: a what-if on the state answering (the
// controller's on the leader, else this replica's own), under its lock.
func (a *Admission) Policy(obj *unstructured.Unstructured, ref topology.Ref, op advice.Op) advice.Answer {
	if !a.Computed() {
		return advice.Answer{} // nothing computed yet: nothing to say
	}
	var inc *engine.Incremental
	if a.shared() {
		a.c.engineMu.Lock()
		defer a.c.engineMu.Unlock()
		inc = a.c.inc
	} else {
		a.mu.Lock()
		defer a.mu.Unlock()
		inc = a.inc
	}
	if inc == nil {
		return advice.Answer{} // between the two states: nothing known
	}
	var d *engine.Delta
	if op == advice.Delete {
		d = inc.WhatIf(nil, []topology.Ref{ref})
	} else {
		d = inc.WhatIf([]engine.Object{{Object: obj, Source: "admission request"}}, nil)
	}
	return advice.Policy(d, ref, op)
}
