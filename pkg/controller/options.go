package controller

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// AnnotationOwnedBy on a policy CRD names the controller (its
// ControllerName) that owns the kind: that controller writes the status of
// its instances, as if the kind were listed in Options.OwnedKinds.
const AnnotationOwnedBy = "attache.dev/owned-by"

// ProgramFunc is the implementer's hook: it receives every computation and
// applies the effective policies of the kinds it implements (for example to
// a data plane). It must be idempotent: it is called again on every
// recomputation, also when nothing changed (a resync). An error makes the
// Programmed condition of every accepted policy False (reason Reconciling,
// message the error) and the computation is retried with backoff; return
// PolicyErrors to fail only some policies.
type ProgramFunc func(ctx context.Context, res *engine.Result) error

// PolicyErrors is an error a ProgramFunc returns when only some policies
// could not be programmed: those get Programmed=False with their error, the
// others Programmed=True.
type PolicyErrors map[topology.Ref]error

// Error lists the policies and their errors.
func (pe PolicyErrors) Error() string {
	refs := make([]topology.Ref, 0, len(pe))
	for r := range pe {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = fmt.Sprintf("%s: %v", r.Short(), pe[r])
	}
	return strings.Join(parts, "; ")
}

// Options configure a Controller. ControllerName and ConditionDomain take
// the engine's defaults when empty.
type Options struct {
	// ControllerName keys this controller's status.ancestors entries
	// (a Gateway API controller name: domain/path).
	ControllerName string
	// ConditionDomain prefixes the <Kind>Affected condition and annotation
	// written on affected objects. Every condition and annotation named
	// <ConditionDomain>/<anything>Affected is this controller's to add and
	// remove.
	ConditionDomain string
	// OwnedKinds are the policy kinds whose status this controller writes
	// (together with the kinds whose CRD carries AnnotationOwnedBy with
	// ControllerName). Other policy kinds are read, and take part in the
	// computation, but are never written, and their Affected conditions are
	// not written either.
	OwnedKinds []topology.GroupKind
	// Kinds are policy kinds registered from Go (policy.NewKind); they
	// replace a CRD-discovered kind of the same group and kind. Their
	// instances are watched when their CRD is installed, labelled or not.
	Kinds []*policy.Kind
	// Custom gives Custom merge functions to CRD-discovered kinds.
	Custom map[topology.GroupKind]merge.CustomFunc
	// DisableProfiles turns off the built-in kind profiles (package
	// profiles): only CRDs labelled gateway.networking.k8s.io/policy are
	// policy kinds then, and route delegation is followed under every
	// Gateway (engine.Options.DisableProfiles).
	DisableProfiles bool
	// Features set features of the implementations' configurations that
	// kinds' feature gates name (the binary's --feature), over those of
	// the configurations among the watched ConfigMaps (kept whole in the
	// cache, unlike other ConfigMaps: profiles.IsConfiguration), which the
	// engine reads as they change, as Envoy Gateway reloads its own.
	Features policy.Features
	// Program is the implementer's hook (optional: nil programs nothing and
	// always succeeds).
	Program ProgramFunc
	// EffectivePolicies makes the controller write, per object affected
	// by an owned kind, an EffectivePolicy object (GEP-713 v1.0.0's
	// PolicyBinding: EffectivePolicyGVK) holding, under ControllerName,
	// the policies affecting it and the effective spec per kind and
	// context with per-field provenance, and remove it when no longer
	// true. The EffectivePolicy CRD must be installed.
	EffectivePolicies bool
	// EffectivePolicyNamespace holds the EffectivePolicy objects of
	// cluster-scoped objects other than Namespaces (a Namespace's is in
	// it). Default DefaultEffectivePolicyNamespace.
	EffectivePolicyNamespace string

	// Debounce delays a recomputation after the first event, so that a burst
	// of events (a kubectl apply of many objects) costs one. Default 100ms.
	Debounce time.Duration
	// ReconcilingAfter is how long Program may run before the policies whose
	// status is about to change are written Programmed=False/Reconciling
	// (then again when it returns). Default 2s.
	ReconcilingAfter time.Duration
	// WriteQPS and WriteBurst are the write budget: every write the
	// controller sends (policy status, Affected conditions and
	// annotations, EffectivePolicies) takes a token from one limiter.
	// Defaults DefaultWriteQPS and DefaultWriteBurst. The client's own
	// limit (rest.Config QPS and Burst), which also counts reads, should
	// be above it.
	WriteQPS   float64
	WriteBurst int
	// Writers is how many workers write affected objects and
	// EffectivePolicies in parallel, within the budget (one object is
	// never written by two at once). Default DefaultWriters.
	Writers int
	// TargetWriteQPS and TargetWriteBurst are the former names of WriteQPS
	// and WriteBurst, used when those are unset.
	//
	// Deprecated: use WriteQPS and WriteBurst.
	TargetWriteQPS   float64
	TargetWriteBurst int
	// ResyncPeriod is how often everything is recomputed and compared with
	// the cache without an event (the writes only happen if something
	// drifted). Default 1h; negative disables.
	ResyncPeriod time.Duration
}

// Defaults of the write budget and writers (docs/performance.md, issue 9):
// at 150 writes per second the first case of the scale harness (1,100
// objects to write) converges in about 6 s and the second (5,000) in about
// 35 s; four writers keep that budget busy on a 2-core machine, where one
// write takes a few milliseconds of the API server's time.
const (
	DefaultWriteQPS   = 150
	DefaultWriteBurst = 300
	DefaultWriters    = 4
)

// controllerNameRE is Gateway API's GatewayController pattern.
var controllerNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$`)

// complete applies defaults and validates.
func (o *Options) complete() error {
	if o.ControllerName == "" {
		o.ControllerName = engine.DefaultControllerName
	}
	if o.ConditionDomain == "" {
		o.ConditionDomain = engine.DefaultConditionDomain
	}
	var errs []error
	if len(o.ControllerName) > 253 || !controllerNameRE.MatchString(o.ControllerName) {
		errs = append(errs, fmt.Errorf("controller name %q is not a Gateway API controller name (domain/path)", o.ControllerName))
	}
	if msgs := validation.IsDNS1123Subdomain(o.ConditionDomain); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("condition domain %q: %s", o.ConditionDomain, strings.Join(msgs, "; ")))
	}
	if o.EffectivePolicyNamespace == "" {
		o.EffectivePolicyNamespace = DefaultEffectivePolicyNamespace
	}
	if msgs := validation.IsDNS1123Label(o.EffectivePolicyNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("EffectivePolicy namespace %q: %s", o.EffectivePolicyNamespace, strings.Join(msgs, "; ")))
	}
	for i, k := range o.Kinds {
		if k == nil {
			errs = append(errs, fmt.Errorf("Kinds[%d] is nil", i))
		}
	}
	if o.Debounce <= 0 {
		o.Debounce = 100 * time.Millisecond
	}
	if o.ReconcilingAfter <= 0 {
		o.ReconcilingAfter = 2 * time.Second
	}
	if o.WriteQPS <= 0 {
		o.WriteQPS = o.TargetWriteQPS
	}
	if o.WriteQPS <= 0 {
		o.WriteQPS = DefaultWriteQPS
	}
	if o.WriteBurst <= 0 {
		o.WriteBurst = o.TargetWriteBurst
	}
	if o.WriteBurst <= 0 {
		o.WriteBurst = max(DefaultWriteBurst, int(o.WriteQPS))
	}
	if o.Writers <= 0 {
		o.Writers = DefaultWriters
	}
	if o.ResyncPeriod == 0 {
		o.ResyncPeriod = time.Hour
	}
	return errors.Join(errs...)
}

// ParseKinds parses a comma-separated list of kinds written Kind (core
// group) or Kind.group, as the --owned-kinds flag takes them.
func ParseKinds(s string) ([]topology.GroupKind, error) {
	var out []topology.GroupKind
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		gk := topology.ParseGroupKind(part)
		if gk.Kind == "" {
			return nil, fmt.Errorf("%q: no kind name", part)
		}
		out = append(out, gk)
	}
	return out, nil
}
