package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	// Origins says where each setting came from, keyed by "class",
	// "targetKinds", "effectiveTargetKinds", "hierarchy", "strategies".
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

// Supports reports whether the kind supports strategy s.
func (k *Kind) Supports(s merge.Strategy) bool { return slices.Contains(k.Strategies, s) }

// Spec is the Go form of a kind's descriptor; zero fields take the defaults
// documented in docs/semantics.md.
type Spec struct {
	GroupKind            topology.GroupKind
	Class                Class
	TargetKinds          []topology.GroupKind
	EffectiveTargetKinds []topology.GroupKind
	Hierarchy            []topology.GroupKind
	Strategies           []merge.Strategy
	Custom               merge.CustomFunc
}

// NewKind builds and validates a kind from a Go descriptor, applying defaults.
func NewKind(s Spec) (*Kind, error) {
	k := &Kind{GroupKind: s.GroupKind, Class: s.Class, Custom: s.Custom, Origins: map[string]Origin{"class": FromGo}}
	set := func(name string, given bool) {
		if given {
			k.Origins[name] = FromGo
		} else {
			k.Origins[name] = FromDefault
		}
	}
	// Copies, so that the caller's later changes to s do not reach the kind.
	k.TargetKinds, k.Hierarchy = slices.Clone(s.TargetKinds), slices.Clone(s.Hierarchy)
	k.EffectiveTargetKinds, k.Strategies = slices.Clone(s.EffectiveTargetKinds), slices.Clone(s.Strategies)
	set("targetKinds", len(s.TargetKinds) > 0)
	set("hierarchy", len(s.Hierarchy) > 0)
	set("effectiveTargetKinds", len(s.EffectiveTargetKinds) > 0)
	set("strategies", len(s.Strategies) > 0)
	if err := k.complete(); err != nil {
		return nil, err
	}
	return k, nil
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
	if len(k.Hierarchy) == 0 {
		k.Hierarchy = slices.Clone(topology.DefaultHierarchy)
	}
	if len(k.TargetKinds) == 0 {
		// Default: every kind of the hierarchy (sections included).
		k.TargetKinds = slices.Clone(k.Hierarchy)
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
	seen := map[topology.GroupKind]bool{}
	for _, gk := range k.Hierarchy {
		if seen[gk] {
			return settingErrorf("hierarchy", "hierarchy names %s twice", gk)
		}
		seen[gk] = true
	}
	k.TargetKinds, k.EffectiveTargetKinds = dedupe(k.TargetKinds), dedupe(k.EffectiveTargetKinds)
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
	"targetKinds":          AnnotationTargetKinds,
	"effectiveTargetKinds": AnnotationEffectiveTargetKinds,
	"hierarchy":            AnnotationHierarchy,
	"strategies":           AnnotationMergeStrategies,
}

// KindFromCRD reads a policy kind from a CustomResourceDefinition object. It
// returns (nil, nil) when the CRD is not labelled as a policy kind, and a
// problem naming the CRD and the offending label or annotation when the
// descriptor is invalid. custom, when not nil, is the kind's Custom merge
// function (registered from Go by an implementer).
func KindFromCRD(crd *unstructured.Unstructured, custom merge.CustomFunc) (*Kind, *diag.Problem) {
	ref := topology.Ref{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: crd.GetName()}
	label, ok := crd.GetLabels()[LabelPolicy]
	if !ok {
		return nil, nil
	}
	fail := func(field, format string, args ...any) (*Kind, *diag.Problem) {
		p := diag.Newf(ref, field, format, args...)
		return nil, &p
	}
	k := &Kind{Origins: map[string]Origin{"class": FromLabel}, Custom: custom}
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "direct", "true":
		k.Class = Direct
	case "inherited":
		k.Class = Inherited
	default:
		return fail("metadata.labels["+LabelPolicy+"]", "value %q is not Direct, Inherited or true", label)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	if kind == "" {
		return fail("spec.names.kind", "policy CRD has no kind name")
	}
	k.GroupKind = topology.GroupKind{Group: group, Kind: kind}
	ann := crd.GetAnnotations()
	kinds := func(key, name string) ([]topology.GroupKind, bool) {
		v, ok := ann[key]
		if !ok {
			k.Origins[name] = FromDefault
			return nil, true
		}
		k.Origins[name] = FromAnnotation
		var out []topology.GroupKind
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, topology.ParseGroupKind(s))
			}
		}
		return out, len(out) > 0
	}
	var good bool
	if k.TargetKinds, good = kinds(AnnotationTargetKinds, "targetKinds"); !good {
		return fail("metadata.annotations["+AnnotationTargetKinds+"]", "lists no kinds")
	}
	if k.EffectiveTargetKinds, good = kinds(AnnotationEffectiveTargetKinds, "effectiveTargetKinds"); !good {
		return fail("metadata.annotations["+AnnotationEffectiveTargetKinds+"]", "lists no kinds")
	}
	if k.Hierarchy, good = kinds(AnnotationHierarchy, "hierarchy"); !good {
		return fail("metadata.annotations["+AnnotationHierarchy+"]", "lists no kinds")
	}
	if v, ok := ann[AnnotationMergeStrategies]; ok {
		k.Origins["strategies"] = FromAnnotation
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			st, err := merge.ParseStrategy(s)
			if err != nil {
				return fail("metadata.annotations["+AnnotationMergeStrategies+"]", "%v", err)
			}
			k.Strategies = append(k.Strategies, st)
		}
		if len(k.Strategies) == 0 {
			return fail("metadata.annotations["+AnnotationMergeStrategies+"]", "lists no strategies")
		}
	} else {
		k.Origins["strategies"] = FromDefault
	}
	if err := k.complete(); err != nil {
		// Name the annotation the offending setting came from.
		field := "metadata.annotations"
		var se *settingError
		if errors.As(err, &se) {
			if key, ok := annotationOf[se.setting]; ok {
				field = "metadata.annotations[" + key + "]"
			}
		}
		return fail(field, "%v", err)
	}
	return k, nil
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
