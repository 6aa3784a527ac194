package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

const testCRDName = "colorpolicies.policies.example.com"

var (
	colorGK = topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}
	crdRef  = topology.Ref{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: testCRDName}

	inheritedOrder = []merge.Strategy{merge.AtomicDefaults, merge.PatchDefaults, merge.AtomicOverrides, merge.PatchOverrides}
)

func customFn(established, challenger map[string]any) (map[string]any, error) { return challenger, nil }

// newCRD builds a policy CRD; a nil labels map means no labels at all.
func newCRD(labels, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": testCRDName},
		"spec": map[string]any{
			"group": "policies.example.com",
			"names": map[string]any{"kind": "ColorPolicy", "plural": "colorpolicies"},
			"scope": "Namespaced",
		},
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

func policyLabel(v string) map[string]string { return map[string]string{LabelPolicy: v} }

func annField(key string) string { return "metadata.annotations[" + key + "]" }

func mustKindFromCRD(t *testing.T, crd *unstructured.Unstructured, custom merge.CustomFunc) *Kind {
	t.Helper()
	k, p := KindFromCRD(crd, custom)
	if p != nil {
		t.Fatalf("KindFromCRD: unexpected problem: %v", p)
	}
	if k == nil {
		t.Fatalf("KindFromCRD: nil kind for a labelled CRD")
	}
	return k
}

func wantCRDProblem(t *testing.T, k *Kind, p *diag.Problem, field, substr string) {
	t.Helper()
	if p == nil {
		t.Fatalf("want a problem at %s containing %q, got kind %+v", field, substr, k)
	}
	if k != nil {
		t.Errorf("a problem must come with a nil kind, got %+v", k)
	}
	if p.Object != crdRef {
		t.Errorf("problem object = %+v, want the CRD %+v", p.Object, crdRef)
	}
	if p.Field != field {
		t.Errorf("problem field = %q, want %q (message %q)", p.Field, field, p.Message)
	}
	if !strings.Contains(p.Message, substr) {
		t.Errorf("problem message %q does not contain %q", p.Message, substr)
	}
	if !strings.Contains(p.Error(), testCRDName) {
		t.Errorf("problem %q does not name the CRD", p.Error())
	}
}

func gks(ss ...string) []topology.GroupKind {
	out := make([]topology.GroupKind, len(ss))
	for i, s := range ss {
		out[i] = topology.ParseGroupKind(s)
	}
	return out
}

func TestKindFromCRDLabel(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  Class
	}{
		{"Direct", Direct},
		{"direct", Direct},
		{" direct ", Direct},
		{"DIRECT", Direct},
		{"true", Direct},
		{"True", Direct},
		{"Inherited", Inherited},
		{"inherited", Inherited},
		{"INHERITED", Inherited},
	} {
		t.Run(tc.value, func(t *testing.T) {
			k := mustKindFromCRD(t, newCRD(policyLabel(tc.value), nil), nil)
			if k.Class != tc.want {
				t.Errorf("class = %q, want %q", k.Class, tc.want)
			}
			if k.GroupKind != colorGK {
				t.Errorf("group kind = %v, want %v", k.GroupKind, colorGK)
			}
			if k.Origins["class"] != FromLabel {
				t.Errorf("class origin = %q, want %q", k.Origins["class"], FromLabel)
			}
		})
	}
	for _, bad := range []string{"garbage", "", "false", "directly", "inherit"} {
		t.Run("bad/"+bad, func(t *testing.T) {
			k, p := KindFromCRD(newCRD(policyLabel(bad), nil), nil)
			wantCRDProblem(t, k, p, "metadata.labels["+LabelPolicy+"]", `"`+bad+`"`)
		})
	}
	t.Run("missing", func(t *testing.T) {
		for _, labels := range []map[string]string{nil, {"app": "x"}} {
			k, p := KindFromCRD(newCRD(labels, map[string]string{AnnotationMergeStrategies: "bogus"}), nil)
			if k != nil || p != nil {
				t.Errorf("labels %v: got (%v, %v), want (nil, nil) for a CRD that is not a policy", labels, k, p)
			}
		}
	})
}

func TestKindFromCRDNoKindName(t *testing.T) {
	crd := newCRD(policyLabel("Direct"), nil)
	unstructured.RemoveNestedField(crd.Object, "spec", "names", "kind")
	k, p := KindFromCRD(crd, nil)
	wantCRDProblem(t, k, p, "spec.names.kind", "no kind name")
}

func TestKindFromCRDDirectDefaults(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), nil), nil)
	if !slices.Equal(k.Hierarchy, topology.DefaultHierarchy) {
		t.Errorf("hierarchy = %v, want the default %v", k.Hierarchy, topology.DefaultHierarchy)
	}
	if !slices.Equal(k.TargetKinds, k.Hierarchy) {
		t.Errorf("target kinds = %v, want the hierarchy kinds %v", k.TargetKinds, k.Hierarchy)
	}
	if !slices.Equal(k.EffectiveTargetKinds, k.TargetKinds) {
		t.Errorf("effective target kinds = %v, want the target kinds %v", k.EffectiveTargetKinds, k.TargetKinds)
	}
	if !slices.Equal(k.Strategies, []merge.Strategy{merge.None}) {
		t.Errorf("strategies = %v, want [none]", k.Strategies)
	}
	wantOrigins(t, k, map[string]Origin{
		"class": FromLabel, "targetKinds": FromDefault, "effectiveTargetKinds": FromDefault,
		"hierarchy": FromDefault, "strategies": FromDefault,
	})
	// The defaults must be copies: changing the kind must not change the package default.
	k.Hierarchy[0] = topology.GroupKind{Kind: "Changed"}
	if topology.DefaultHierarchy[0].Kind == "Changed" {
		t.Fatal("kind hierarchy aliases topology.DefaultHierarchy")
	}
}

func TestKindFromCRDDirectTargetKinds(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("direct"), map[string]string{
		AnnotationTargetKinds: " HTTPRoute.gateway.networking.k8s.io , Service,",
	}), nil)
	want := []topology.GroupKind{topology.KindHTTPRoute, topology.KindService}
	if !slices.Equal(k.TargetKinds, want) {
		t.Errorf("target kinds = %v, want %v", k.TargetKinds, want)
	}
	if !slices.Equal(k.EffectiveTargetKinds, want) {
		t.Errorf("effective target kinds = %v, want the target kinds %v", k.EffectiveTargetKinds, want)
	}
	if !slices.Equal(k.Hierarchy, topology.DefaultHierarchy) {
		t.Errorf("hierarchy = %v, want the default", k.Hierarchy)
	}
	wantOrigins(t, k, map[string]Origin{
		"class": FromLabel, "targetKinds": FromAnnotation, "effectiveTargetKinds": FromDefault,
		"hierarchy": FromDefault, "strategies": FromDefault,
	})
}

func TestKindFromCRDDirectHierarchyOnly(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{
		AnnotationHierarchy: "Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io",
	}), nil)
	want := []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute}
	if !slices.Equal(k.Hierarchy, want) || !slices.Equal(k.TargetKinds, want) || !slices.Equal(k.EffectiveTargetKinds, want) {
		t.Errorf("hierarchy/target/effective = %v/%v/%v, want all %v", k.Hierarchy, k.TargetKinds, k.EffectiveTargetKinds, want)
	}
}

func TestKindFromCRDInheritedDefaults(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), nil), nil)
	if !slices.Equal(k.Hierarchy, topology.DefaultHierarchy) {
		t.Errorf("hierarchy = %v, want the default", k.Hierarchy)
	}
	if !slices.Equal(k.TargetKinds, topology.DefaultHierarchy) {
		t.Errorf("target kinds = %v, want the hierarchy kinds", k.TargetKinds)
	}
	last := topology.DefaultHierarchy[len(topology.DefaultHierarchy)-1]
	if !slices.Equal(k.EffectiveTargetKinds, []topology.GroupKind{last}) {
		t.Errorf("effective target kinds = %v, want [%v]", k.EffectiveTargetKinds, last)
	}
	if !slices.Equal(k.Strategies, inheritedOrder) {
		t.Errorf("strategies = %v, want %v", k.Strategies, inheritedOrder)
	}
	if k.Custom != nil {
		t.Error("Custom set without a function")
	}
}

func TestKindFromCRDInheritedHierarchy(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationHierarchy: "GatewayClass.gateway.networking.k8s.io, Gateway.gateway.networking.k8s.io, HTTPRoute.gateway.networking.k8s.io",
	}), nil)
	if !slices.Equal(k.EffectiveTargetKinds, []topology.GroupKind{topology.KindHTTPRoute}) {
		t.Errorf("effective target kinds = %v, want the last hierarchy kind [HTTPRoute]", k.EffectiveTargetKinds)
	}
	if !slices.Equal(k.TargetKinds, k.Hierarchy) {
		t.Errorf("target kinds = %v, want the hierarchy %v", k.TargetKinds, k.Hierarchy)
	}
	if !k.InHierarchy(topology.KindGateway) || k.InHierarchy(topology.KindService) {
		t.Error("InHierarchy disagrees with the hierarchy annotation")
	}
}

func TestKindFromCRDAllAnnotations(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationTargetKinds:          "Gateway.gateway.networking.k8s.io",
		AnnotationEffectiveTargetKinds: "HTTPRoute.gateway.networking.k8s.io,GRPCRoute.gateway.networking.k8s.io",
		AnnotationHierarchy:            "Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io,GRPCRoute.gateway.networking.k8s.io",
		AnnotationMergeStrategies:      " patch-overrides , atomic-defaults, custom",
	}), customFn)
	if !slices.Equal(k.TargetKinds, gks("Gateway.gateway.networking.k8s.io")) {
		t.Errorf("target kinds = %v", k.TargetKinds)
	}
	if !slices.Equal(k.EffectiveTargetKinds, []topology.GroupKind{topology.KindHTTPRoute, topology.KindGRPCRoute}) {
		t.Errorf("effective target kinds = %v", k.EffectiveTargetKinds)
	}
	if !slices.Equal(k.Hierarchy, []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute, topology.KindGRPCRoute}) {
		t.Errorf("hierarchy = %v", k.Hierarchy)
	}
	// GEP-713 order of preference, whatever the annotation's order.
	if want := []merge.Strategy{merge.AtomicDefaults, merge.PatchOverrides, merge.Custom}; !slices.Equal(k.Strategies, want) {
		t.Errorf("strategies = %v, want %v", k.Strategies, want)
	}
	if k.Custom == nil {
		t.Error("Custom function not recorded")
	}
	wantOrigins(t, k, map[string]Origin{
		"class": FromLabel, "targetKinds": FromAnnotation, "effectiveTargetKinds": FromAnnotation,
		"hierarchy": FromAnnotation, "strategies": FromAnnotation,
	})
	if !k.AllowsTarget(topology.KindGateway) || k.AllowsTarget(topology.KindHTTPRoute) {
		t.Error("AllowsTarget disagrees with the target-kinds annotation")
	}
	if !k.IsEffectiveTarget(topology.KindGRPCRoute) || k.IsEffectiveTarget(topology.KindGateway) {
		t.Error("IsEffectiveTarget disagrees with the effective-target-kinds annotation")
	}
	if !k.Supports(merge.Custom) || k.Supports(merge.AtomicOverrides) {
		t.Error("Supports disagrees with the merge-strategies annotation")
	}
	if k.String() != "ColorPolicy.policies.example.com" {
		t.Errorf("String() = %q", k.String())
	}
}

// TestKindFromCRDDataPlaneTarget: the annotation makes a kind whose
// target kinds include Gateway and GatewayClass target data planes; "false"
// and its absence leave it off.
func TestKindFromCRDDataPlaneTarget(t *testing.T) {
	targets := "Gateway.gateway.networking.k8s.io, GatewayClass.gateway.networking.k8s.io"
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationTargetKinds: targets, AnnotationDataPlaneTarget: " true "}), nil)
	if !k.DataPlaneTarget {
		t.Error("data-plane-target true: DataPlaneTarget is off")
	}
	wantOrigins(t, k, map[string]Origin{"class": FromLabel, "targetKinds": FromAnnotation, "dataPlaneTarget": FromAnnotation})
	for _, ann := range []map[string]string{{AnnotationTargetKinds: targets, AnnotationDataPlaneTarget: "false"}, {AnnotationTargetKinds: targets}} {
		if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil); k.DataPlaneTarget {
			t.Errorf("%v: DataPlaneTarget is on", ann)
		}
	}
}

// TestKindFromCRDWeightAnnotation: the CRD names the annotation holding a
// policy's weight; Parse reads it, and a value that is not an int32 makes
// the policy Invalid, naming the annotation.
func TestKindFromCRDWeightAnnotation(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationWeightAnnotation: " example.com/weight "}), nil)
	if k.WeightAnnotation != "example.com/weight" || k.Origins[SettingWeightAnnotation] != FromAnnotation {
		t.Fatalf("weight annotation = %q (origin %q)", k.WeightAnnotation, k.Origins[SettingWeightAnnotation])
	}
	for _, tc := range []struct {
		value   any // nil: no annotation
		weight  int32
		problem string
	}{
		{nil, 0, ""},
		{"12", 12, ""},
		{"-4", -4, ""},
		{" 4", 0, `not " 4"`}, // as kgateway: no spaces
		{"2147483647", 2147483647, ""},
		{"2147483648", 0, `not "2147483648"`},
		{"1e3", 0, `not "1e3"`},
		{"", 0, `not ""`},
	} {
		meta := map[string]any{"name": "p", "namespace": "ns"}
		if tc.value != nil {
			meta["annotations"] = map[string]any{"example.com/weight": tc.value}
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policies.example.com/v1", "kind": "ColorPolicy", "metadata": meta,
			"spec": map[string]any{"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "g"}}, "defaults": map[string]any{"color": "red"}},
		}}
		p := Parse(u, k)
		switch {
		case tc.problem == "" && (len(p.Problems) > 0 || p.Weight != tc.weight):
			t.Errorf("%v: weight %d, problems %v; want %d", tc.value, p.Weight, p.Problems, tc.weight)
		case tc.problem != "" && (len(p.Problems) != 1 || p.Problems[0].Field != "metadata.annotations[example.com/weight]" || !strings.Contains(p.Problems[0].Message, tc.problem)):
			t.Errorf("%v: problems %v, want one on the annotation saying %s", tc.value, p.Problems, tc.problem)
		}
	}
	// A kind without the setting reads no weight.
	plain := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), nil), nil)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policies.example.com/v1", "kind": "ColorPolicy",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "annotations": map[string]any{"example.com/weight": "oops"}},
		"spec":     map[string]any{"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "g"}}},
	}}
	if p := Parse(u, plain); p.Weight != 0 || len(p.Problems) > 0 {
		t.Errorf("a kind without a weight annotation read weight %d, problems %v", p.Weight, p.Problems)
	}
}

func TestKindFromCRDConflictScope(t *testing.T) {
	for ann, want := range map[string]bool{"policy": true, "target": false} {
		k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationSameLevel: "merge-disjoint", AnnotationConflictScope: ann}), nil)
		if k.ConflictScopePolicy != want || k.Origins[SettingConflictScope] != FromAnnotation {
			t.Errorf("%s: ConflictScopePolicy %v (origin %q)", ann, k.ConflictScopePolicy, k.Origins[SettingConflictScope])
		}
	}
	for ann, want := range map[string]bool{"reject": true, "allow": false} {
		k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationRouteOverlap: ann}), nil)
		if k.RejectRouteOverlap != want || k.Origins[SettingRouteOverlap] != FromAnnotation {
			t.Errorf("route-overlap %s: RejectRouteOverlap %v (origin %q)", ann, k.RejectRouteOverlap, k.Origins[SettingRouteOverlap])
		}
	}
	for ann, want := range map[string]bool{"not-applied": true, "in-place": false} {
		k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationInvalidPolicies: ann}), nil)
		if k.InvalidNotApplied != want || k.Origins[SettingInvalidPolicies] != FromAnnotation {
			t.Errorf("invalid-policies %s: InvalidNotApplied %v (origin %q)", ann, k.InvalidNotApplied, k.Origins[SettingInvalidPolicies])
		}
	}
	k, p := KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationInvalidPolicies: "drop"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationInvalidPolicies), `unknown invalid-policies rule "drop" (known: in-place, not-applied, not-applied references=after-conflicts)`)
	for ann, want := range map[string]bool{"problem": true, "entry": false} {
		k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationMissingTargets: ann}), nil)
		if k.MissingTargetsUnlisted != want || k.Origins[SettingMissingTargets] != FromAnnotation {
			t.Errorf("missing-targets %s: MissingTargetsUnlisted %v (origin %q)", ann, k.MissingTargetsUnlisted, k.Origins[SettingMissingTargets])
		}
	}
	k, p = KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationMissingTargets: "none"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationMissingTargets), `unknown missing-targets rule "none" (known: entry, problem)`)
	for ann, want := range map[string]bool{"when-accepted": true, "gep": false} {
		k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationProgrammed: ann}), nil)
		if k.ProgrammedWhenAccepted != want || k.Origins[SettingProgrammed] != FromAnnotation {
			t.Errorf("programmed %s: ProgrammedWhenAccepted %v (origin %q)", ann, k.ProgrammedWhenAccepted, k.Origins[SettingProgrammed])
		}
	}
	k, p = KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationProgrammed: "ngf"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationProgrammed), `unknown programmed rule "ngf" (known: gep, when-accepted)`)
	// Strategy none rejects along paths, not at one level: refused.
	k, p = KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationMergeStrategies: "none", AnnotationConflictScope: "policy"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationConflictScope), "needs a same-level rule that rejects policies at one level")
}

func TestKindFromCRDInheritedFields(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationComposition: "additive", AnnotationInheritedFields: " rateLimit.dryRun, rateLimit.rejectCode ,",
	}), nil)
	if !slices.Equal(k.InheritedFields, []string{"rateLimit.dryRun", "rateLimit.rejectCode"}) || k.Origins[SettingInheritedFields] != FromAnnotation {
		t.Errorf("InheritedFields = %q (origin %q)", k.InheritedFields, k.Origins[SettingInheritedFields])
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationComposition: "additive"}), nil)
	if k.InheritedFields != nil || k.Origins[SettingInheritedFields] != FromDefault {
		t.Errorf("without the annotation: InheritedFields = %q (origin %q)", k.InheritedFields, k.Origins[SettingInheritedFields])
	}
}

func TestKindFromCRDLevelInheritedFields(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationComposition: "additive", AnnotationLevelInheritedFields: " rateLimit.local.rules ,", AnnotationInheritedFields: "rateLimit.dryRun",
	}), nil)
	if !slices.Equal(k.LevelInheritedFields, []string{"rateLimit.local.rules"}) || k.Origins[SettingLevelInheritedFields] != FromAnnotation {
		t.Errorf("LevelInheritedFields = %q (origin %q)", k.LevelInheritedFields, k.Origins[SettingLevelInheritedFields])
	}
	for _, tc := range []struct{ name, comp, level, inherited, want string }{
		{"not additive", "merge", "rules", "", "the composition is merge"},
		{"not a path", "additive", "rules..x", "", `"rules..x" is not a dotted spec path`},
		{"same field both ways", "additive", "rateLimit.local", "rateLimit.local", `"rateLimit.local" overlaps the inherited field "rateLimit.local"`},
		{"below an inherited field", "additive", "rateLimit.local.rules", "rateLimit.local", `"rateLimit.local.rules" overlaps the inherited field "rateLimit.local"`},
		{"above an inherited field", "additive", "rateLimit", "rateLimit.dryRun", `"rateLimit" overlaps the inherited field "rateLimit.dryRun"`},
	} {
		ann := map[string]string{AnnotationComposition: tc.comp, AnnotationLevelInheritedFields: tc.level}
		if tc.inherited != "" {
			ann[AnnotationInheritedFields] = tc.inherited
		}
		k, p := KindFromCRD(newCRD(policyLabel("Inherited"), ann), nil)
		wantCRDProblem(t, k, p, annField(AnnotationLevelInheritedFields), tc.want)
	}
}

func TestKindFromCRDDuplicateStrategiesCollapse(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationMergeStrategies: "atomic-overrides,atomic-overrides",
	}), nil)
	if !slices.Equal(k.Strategies, []merge.Strategy{merge.AtomicOverrides}) {
		t.Errorf("strategies = %v, want [atomic-overrides]", k.Strategies)
	}
}

func TestKindFromCRDDirectExplicitNone(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationMergeStrategies: "none"}), nil)
	if !slices.Equal(k.Strategies, []merge.Strategy{merge.None}) || k.Origins["strategies"] != FromAnnotation {
		t.Errorf("strategies = %v (origin %q), want [none] from the annotation", k.Strategies, k.Origins["strategies"])
	}
}

func TestKindFromCRDInvalidAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		label  string
		ann    map[string]string
		custom merge.CustomFunc
		field  string
		substr string
	}{
		{"empty target kinds", "Direct", map[string]string{AnnotationTargetKinds: ""}, nil, annField(AnnotationTargetKinds), "lists no kinds"},
		{"blank target kinds", "Direct", map[string]string{AnnotationTargetKinds: " , ,"}, nil, annField(AnnotationTargetKinds), "lists no kinds"},
		{"empty effective kinds", "Inherited", map[string]string{AnnotationEffectiveTargetKinds: ""}, nil, annField(AnnotationEffectiveTargetKinds), "lists no kinds"},
		{"empty hierarchy", "Inherited", map[string]string{AnnotationHierarchy: " "}, nil, annField(AnnotationHierarchy), "lists no kinds"},
		{"empty strategies", "Inherited", map[string]string{AnnotationMergeStrategies: ""}, nil, annField(AnnotationMergeStrategies), "lists no strategies"},
		{"blank strategies", "Inherited", map[string]string{AnnotationMergeStrategies: ",,"}, nil, annField(AnnotationMergeStrategies), "lists no strategies"},
		{"unknown strategy", "Inherited", map[string]string{AnnotationMergeStrategies: "atomic-defaults,bogus"}, nil, annField(AnnotationMergeStrategies), `"bogus"`},
		{"strategy case", "Inherited", map[string]string{AnnotationMergeStrategies: "Atomic-Defaults"}, nil, annField(AnnotationMergeStrategies), `"Atomic-Defaults"`},
		{"none with others", "Direct", map[string]string{AnnotationMergeStrategies: "none, atomic-defaults"}, nil, annField(AnnotationMergeStrategies), "none cannot be combined"},
		{"custom without function", "Inherited", map[string]string{AnnotationMergeStrategies: "atomic-defaults,custom"}, nil, annField(AnnotationMergeStrategies), "custom"},
		{"duplicate hierarchy kind", "Inherited", map[string]string{AnnotationHierarchy: "Gateway.gateway.networking.k8s.io, HTTPRoute.gateway.networking.k8s.io, Gateway.gateway.networking.k8s.io"}, nil, annField(AnnotationHierarchy), "Gateway.gateway.networking.k8s.io twice"},
		{"target kind without kind name", "Direct", map[string]string{AnnotationTargetKinds: "Gateway.gateway.networking.k8s.io,.gateway.networking.k8s.io"}, nil, annField(AnnotationTargetKinds), "no kind name"},
		{"effective kind without kind name", "Inherited", map[string]string{AnnotationEffectiveTargetKinds: ".x"}, nil, annField(AnnotationEffectiveTargetKinds), "no kind name"},
		{"hierarchy kind without kind name", "Inherited", map[string]string{AnnotationHierarchy: "Gateway.gateway.networking.k8s.io,.g"}, nil, annField(AnnotationHierarchy), "no kind name"},
		{"weight annotation not a name", "Inherited", map[string]string{AnnotationWeightAnnotation: "has space"}, nil, annField(AnnotationWeightAnnotation), `"has space" is not an annotation name`},
		{"conflict scope word", "Inherited", map[string]string{AnnotationSameLevel: "oldest-wins", AnnotationConflictScope: "global"}, nil, annField(AnnotationConflictScope), `"global"`},
		{"conflict scope without a rejecting rule", "Inherited", map[string]string{AnnotationConflictScope: "policy"}, nil, annField(AnnotationConflictScope), "needs a same-level rule that rejects"},
		{"conflict scope of an additive kind without a rejecting rule", "Direct", map[string]string{AnnotationSameLevel: "gep", AnnotationComposition: "additive", AnnotationConflictScope: "policy"}, nil, annField(AnnotationConflictScope), "needs a same-level rule that rejects"},
		{"conflict fields without merge-disjoint", "Inherited", map[string]string{AnnotationConflictFields: "tracing"}, nil, annField(AnnotationConflictFields), "narrow the merge-disjoint rule"},
		{"backend ref path not a path", "Direct", map[string]string{AnnotationBackendRefs: "extAuth..backendRefs[]"}, nil, annField(AnnotationBackendRefs), "not a dotted path"},
		{"unresolved backend refs word", "Direct", map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "reject"}, nil, annField(AnnotationUnresolvedBackendRefs), `"reject"`},
		{"unresolved backend refs without paths", "Direct", map[string]string{AnnotationUnresolvedBackendRefs: "invalid"}, nil, annField(AnnotationUnresolvedBackendRefs), "needs the paths where policies name backends"},
		{"filter attachment missing status without extension-ref", "Direct", map[string]string{AnnotationFilterAttachment: "none missing=500"}, nil, annField(AnnotationFilterAttachment), "want extension-ref missing="},
		{"filter attachment missing not a status", "Direct", map[string]string{AnnotationFilterAttachment: "extension-ref missing=5000"}, nil, annField(AnnotationFilterAttachment), "want extension-ref missing="},
		{"route replacement not a status", "Direct", map[string]string{AnnotationRouteReplacement: "5000"}, nil, annField(AnnotationRouteReplacement), "neither an HTTP status"},
		{"route replacement without route rules", "Direct", map[string]string{AnnotationRouteReplacement: "500"}, nil, annField(AnnotationRouteReplacement), "must then be effective targets"},
		{"empty target group word", "Direct", map[string]string{AnnotationEmptyTargetGroup: "none"}, nil, annField(AnnotationEmptyTargetGroup), `"none"`},
		{"dependencies without a name", "Direct", map[string]string{AnnotationDependencies: "=Limitador.limitador.kuadrant.io/v1alpha1"}, nil, annField(AnnotationDependencies), "a dependency needs a name"},
		{"effective listeners unknown condition", "Direct", map[string]string{AnnotationEffectiveListeners: "hostname,tls"}, nil, annField(AnnotationEffectiveListeners), `listener condition "tls" is not one of hostname, tls-terminate`},
		{"effective listeners without listeners", "Direct", map[string]string{AnnotationEffectiveListeners: "hostname"}, nil, annField(AnnotationEffectiveListeners), "need listeners among the effective targets"},
		{"controllers not a controller name", "Direct", map[string]string{AnnotationControllers: "nginx, example.com/gw"}, nil, annField(AnnotationControllers), `controller "nginx" is not a GatewayClass controllerName`},
		{"cluster IP routing without invalid", "Direct", map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationClusterIPRouting: "routingType=Service"}, nil, annField(AnnotationClusterIPRouting), "needs attache.dev/unresolved-backend-refs: invalid"},
		{"cluster IP routing not a condition", "Direct", map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid", AnnotationClusterIPRouting: "Service"}, nil, annField(AnnotationClusterIPRouting), "want <parameters path>=<value>"},
		{"cluster IP routing on an unread field", "Direct", map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid", AnnotationClusterIPRouting: "telemetry.mode=Service"}, nil, annField(AnnotationClusterIPRouting), `attache does not read "telemetry.mode"`},
		{"reach word", "Inherited", map[string]string{AnnotationReach: "mesh"}, nil, annField(AnnotationReach), `unknown reach "mesh" (known: any, gateway)`},
		{"partly-overridden word", "Inherited", map[string]string{AnnotationPartlyOverridden: "unknown"}, nil, annField(AnnotationPartlyOverridden), `unknown partly-overridden rule "unknown" (known: not-programmed, programmed)`},
		{"reach gateway of a Direct kind", "Direct", map[string]string{AnnotationReach: "gateway"}, nil, annField(AnnotationReach), "narrows the paths of an Inherited kind"},
		{"summary word", "Direct", map[string]string{AnnotationSummary: "istio"}, nil, annField(AnnotationSummary), `unknown summary "istio" (known: attache, istio-waypoint)`},
		{"istio-waypoint summary without waypoint targets", "Direct", map[string]string{AnnotationSummary: "istio-waypoint"}, nil, annField(AnnotationSummary), "the kind needs waypoint targets (attache.dev/waypoint-targets: istio)"},
		{"route parents word", "Inherited", map[string]string{AnnotationRouteParents: "all"}, nil, annField(AnnotationRouteParents), `unknown route parents "all" (known: admitted, parent-refs)`},
		{"path readiness word", "Inherited", map[string]string{AnnotationPathReadiness: "ready"}, nil, annField(AnnotationPathReadiness), `unknown path readiness "ready" (known: ignored, status)`},
		{"path readiness of a Direct kind", "Direct", map[string]string{AnnotationPathReadiness: "status"}, nil, annField(AnnotationPathReadiness), "narrows the paths of an Inherited kind"},
		{"other controllers word", "Inherited", map[string]string{AnnotationControllers: "example.com/gw", AnnotationOtherControllers: "waiting"}, nil, annField(AnnotationOtherControllers), `unknown other controllers rule "waiting" (known: not-programmed, target-not-found, unlisted)`},
		{"gateway sections word", "Inherited", map[string]string{AnnotationGatewaySections: "all"}, nil, annField(AnnotationGatewaySections), `unknown gateway-sections rule "all" (known: by-name, own)`},
		{"gateway sections of a Direct kind", "Direct", map[string]string{AnnotationGatewaySections: "by-name"}, nil, annField(AnnotationGatewaySections), "on the paths of an Inherited kind whose hierarchy holds the Gateway and a ListenerSet kind"},
		{"gateway sections without ListenerSets", "Inherited", map[string]string{AnnotationGatewaySections: "by-name", AnnotationHierarchy: "Gateway,HTTPRoute"}, nil, annField(AnnotationGatewaySections), "whose hierarchy holds the Gateway and a ListenerSet kind"},
		{"not in listener sets of a Direct kind", "Direct", map[string]string{AnnotationNotInListenerSets: "a.b"}, nil, annField(AnnotationNotInListenerSets), "must be effective targets of an Inherited kind with defaults strategies only"},
		{"not in listener sets with overrides", "Inherited", map[string]string{AnnotationNotInListenerSets: "a.b", AnnotationMergeStrategies: "patch-overrides"}, nil, annField(AnnotationNotInListenerSets), "defaults strategies only"},
		{"not in listener sets path", "Inherited", map[string]string{AnnotationNotInListenerSets: "a..b"}, nil, annField(AnnotationNotInListenerSets), `"a..b" is not a dotted spec path`},
		{"other controllers unlisted without controllers", "Direct", map[string]string{AnnotationOtherControllers: "unlisted"}, nil, annField(AnnotationOtherControllers), "other controllers unlisted needs the controllers the kind's implementation serves"},
		{"other controllers without controllers", "Inherited", map[string]string{AnnotationOtherControllers: "not-programmed"}, nil, annField(AnnotationOtherControllers), "needs the controllers the kind's implementation serves"},
		{"other controllers of a Direct kind", "Direct", map[string]string{AnnotationControllers: "example.com/gw", AnnotationOtherControllers: "not-programmed"}, nil, annField(AnnotationOtherControllers), "judges the paths of an Inherited kind"},
		{"route parents of a Direct kind", "Direct", map[string]string{AnnotationRouteParents: "parent-refs"}, nil, annField(AnnotationRouteParents), "which paths an Inherited kind walks"},
		{"backend refs empty", "Direct", map[string]string{AnnotationBackendRefs: " , "}, nil, annField(AnnotationBackendRefs), "names no path"},
		{"object refs kind", "Direct", map[string]string{AnnotationObjectRefs: "a.ref kinds=Pod"}, nil, annField(AnnotationObjectRefs), `kind "Pod"`},
		{"object refs empty", "Direct", map[string]string{AnnotationObjectRefs: " ; "}, nil, annField(AnnotationObjectRefs), "names no path"},
		{"inherited fields of a merging kind", "Inherited", map[string]string{AnnotationInheritedFields: "rateLimit.dryRun"}, nil, annField(AnnotationInheritedFields), "inherited fields single out fields of an additive kind"},
		{"inherited field not a path", "Inherited", map[string]string{AnnotationComposition: "additive", AnnotationInheritedFields: "rateLimit.dryRun, .x"}, nil, annField(AnnotationInheritedFields), `".x" is not a dotted spec path`},
		{"conflict field not a path", "Inherited", map[string]string{AnnotationSameLevel: "merge-disjoint", AnnotationConflictFields: "a..b"}, nil, annField(AnnotationConflictFields), `"a..b" is not a dotted spec path`},
		{"filter attachment under the GEP rule", "Inherited", map[string]string{AnnotationEffectiveSectionKinds: "HTTPRoute", AnnotationFilterAttachment: "extension-ref"}, nil, annField(AnnotationFilterAttachment), "needs a same-level rule of oldest-wins, oldest-first or merge-disjoint"},
		{"filter attachment word", "Inherited", map[string]string{AnnotationFilterAttachment: "yes"}, nil, annField(AnnotationFilterAttachment), `"yes"`},
		{"filter attachment without rule targets", "Inherited", map[string]string{AnnotationFilterAttachment: "extension-ref"}, nil, annField(AnnotationFilterAttachment), "must then be effective targets"},
		{"route overlap word", "Inherited", map[string]string{AnnotationRouteOverlap: "deny"}, nil, annField(AnnotationRouteOverlap), `"deny"`},
		{"data plane target word", "Direct", map[string]string{AnnotationDataPlaneTarget: "yes"}, nil, annField(AnnotationDataPlaneTarget), `"yes" is neither true nor false`},
		{"data plane target without GatewayClass", "Direct", map[string]string{AnnotationTargetKinds: "Gateway.gateway.networking.k8s.io", AnnotationDataPlaneTarget: "true"}, nil, annField(AnnotationDataPlaneTarget), "the target kinds must include both (they are Gateway.gateway.networking.k8s.io)"},
		{"weight annotation bad prefix", "Inherited", map[string]string{AnnotationWeightAnnotation: "-bad-/weight"}, nil, annField(AnnotationWeightAnnotation), "is not an annotation name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, p := KindFromCRD(newCRD(policyLabel(tc.label), tc.ann), tc.custom)
			wantCRDProblem(t, k, p, tc.field, tc.substr)
		})
	}
}

func TestKindFromCRDCustomWithFunction(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationMergeStrategies: "custom"}), customFn)
	if !slices.Equal(k.Strategies, []merge.Strategy{merge.Custom}) || k.Custom == nil {
		t.Errorf("strategies = %v, custom set = %v; want [custom] with the function", k.Strategies, k.Custom != nil)
	}
}

// wantOrigins checks every setting's origin: those in want as given, every
// other one FromDefault.
func wantOrigins(t *testing.T, k *Kind, want map[string]Origin) {
	t.Helper()
	full := map[string]Origin{}
	for _, s := range Settings() {
		full[s] = FromDefault
	}
	for s, o := range want {
		full[s] = o
	}
	want = full
	if !reflect.DeepEqual(k.Origins, want) {
		t.Errorf("origins = %v, want %v", k.Origins, want)
	}
}

func TestNewKindCustom(t *testing.T) {
	k, err := NewKind(Spec{
		GroupKind:  colorGK,
		Class:      Inherited,
		Hierarchy:  []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute},
		Strategies: []merge.Strategy{merge.Custom, merge.AtomicDefaults},
		Custom:     customFn,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []merge.Strategy{merge.AtomicDefaults, merge.Custom}; !slices.Equal(k.Strategies, want) {
		t.Errorf("strategies = %v, want %v (GEP order)", k.Strategies, want)
	}
	if k.Custom == nil {
		t.Error("Custom function not kept")
	}
	if got, _ := k.Custom(map[string]any{"a": 1}, map[string]any{"b": 2}); got["b"] != 2 {
		t.Errorf("Custom function is not the one given: %v", got)
	}
	if !slices.Equal(k.TargetKinds, k.Hierarchy) {
		t.Errorf("target kinds = %v, want the hierarchy", k.TargetKinds)
	}
	if !slices.Equal(k.EffectiveTargetKinds, []topology.GroupKind{topology.KindHTTPRoute}) {
		t.Errorf("effective target kinds = %v, want [HTTPRoute]", k.EffectiveTargetKinds)
	}
	wantOrigins(t, k, map[string]Origin{
		"class": FromGo, "targetKinds": FromDefault, "effectiveTargetKinds": FromDefault,
		"hierarchy": FromGo, "strategies": FromGo, "directSections": FromGo, "schemaMerge": FromGo, "stanzas": FromGo, "sectionNames": FromGo,
	})
}

func TestNewKindDefaults(t *testing.T) {
	d, err := NewKind(Spec{GroupKind: colorGK, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindGateway}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Strategies, []merge.Strategy{merge.None}) {
		t.Errorf("direct strategies = %v, want [none]", d.Strategies)
	}
	if !slices.Equal(d.EffectiveTargetKinds, []topology.GroupKind{topology.KindGateway}) {
		t.Errorf("direct effective target kinds = %v, want the target kinds", d.EffectiveTargetKinds)
	}
	if !slices.Equal(d.Hierarchy, topology.DefaultHierarchy) {
		t.Errorf("direct hierarchy = %v, want the default", d.Hierarchy)
	}
	i, err := NewKind(Spec{GroupKind: colorGK, Class: Inherited})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(i.Strategies, inheritedOrder) {
		t.Errorf("inherited strategies = %v, want %v", i.Strategies, inheritedOrder)
	}
}

func TestNewKindDoesNotAliasSpec(t *testing.T) {
	s := Spec{
		GroupKind:   colorGK,
		Class:       Inherited,
		TargetKinds: []topology.GroupKind{topology.KindGateway},
		Hierarchy:   []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute},
	}
	k, err := NewKind(s)
	if err != nil {
		t.Fatal(err)
	}
	s.TargetKinds[0] = topology.KindService
	s.Hierarchy[1] = topology.KindService
	if k.TargetKinds[0] != topology.KindGateway || k.Hierarchy[1] != topology.KindHTTPRoute {
		t.Errorf("kind changed with the caller's Spec: targets %v, hierarchy %v", k.TargetKinds, k.Hierarchy)
	}
}

func TestNewKindErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   Spec
		substr string
	}{
		{"no kind name", Spec{Class: Direct}, "no kind name"},
		{"no class", Spec{GroupKind: colorGK}, "neither Direct nor Inherited"},
		{"lowercase class", Spec{GroupKind: colorGK, Class: "direct"}, "neither Direct nor Inherited"},
		{"custom without function", Spec{GroupKind: colorGK, Class: Inherited, Strategies: []merge.Strategy{merge.Custom}}, "custom"},
		{"none with others", Spec{GroupKind: colorGK, Class: Direct, Strategies: []merge.Strategy{merge.None, merge.PatchDefaults}}, "none cannot be combined"},
		{"duplicate hierarchy", Spec{GroupKind: colorGK, Class: Inherited, Hierarchy: []topology.GroupKind{topology.KindGateway, topology.KindGateway}}, "twice"},
		{"unknown strategy", Spec{GroupKind: colorGK, Class: Inherited, Strategies: []merge.Strategy{"bogus"}}, `"bogus"`},
		{"empty target kind", Spec{GroupKind: colorGK, Class: Direct, TargetKinds: []topology.GroupKind{{Group: "g"}}}, "no kind name"},
		{"waypoint targets with section names", Spec{GroupKind: colorGK, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindService}, WaypointTargets: true}, "section names must be false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := NewKind(tc.spec)
			if err == nil {
				t.Fatalf("want an error containing %q, got kind %+v", tc.substr, k)
			}
			if k != nil {
				t.Errorf("an error must come with a nil kind")
			}
			if !strings.Contains(err.Error(), tc.substr) {
				t.Errorf("error %q does not contain %q", err, tc.substr)
			}
		})
	}
}

// checkKind asserts the invariants every valid kind holds.
func checkKind(t *testing.T, k *Kind) {
	t.Helper()
	if k.GroupKind.Kind == "" {
		t.Fatalf("kind without a kind name: %+v", k)
	}
	if k.Class != Direct && k.Class != Inherited {
		t.Fatalf("class %q", k.Class)
	}
	for name, list := range map[string][]topology.GroupKind{"targetKinds": k.TargetKinds, "effectiveTargetKinds": k.EffectiveTargetKinds, "hierarchy": k.Hierarchy} {
		if len(list) == 0 {
			t.Fatalf("%s is empty", name)
		}
		for _, gk := range list {
			if gk.Kind == "" {
				t.Fatalf("%s has an entry without a kind name: %v", name, list)
			}
		}
	}
	seen := map[topology.GroupKind]bool{}
	for _, gk := range k.Hierarchy {
		if seen[gk] {
			t.Fatalf("hierarchy repeats %v", gk)
		}
		seen[gk] = true
	}
	if len(k.Strategies) == 0 {
		t.Fatal("no strategies")
	}
	// Strategies are known, unique and in GEP order.
	last := -1
	for _, s := range k.Strategies {
		i := slices.Index(merge.All, s)
		if i < 0 || i <= last {
			t.Fatalf("strategies %v are not known, unique and in GEP order", k.Strategies)
		}
		last = i
	}
	if k.Supports(merge.None) && len(k.Strategies) != 1 {
		t.Fatalf("none combined with others: %v", k.Strategies)
	}
	if k.Supports(merge.Custom) && k.Custom == nil {
		t.Fatal("custom without a function")
	}
	for _, key := range []string{"class", "targetKinds", "effectiveTargetKinds", "hierarchy", "strategies"} {
		if k.Origins[key] == "" {
			t.Fatalf("no origin for %s: %v", key, k.Origins)
		}
	}
}

func FuzzKindFromCRD(f *testing.F) {
	f.Add("Inherited", "", "", "", "", uint8(0), false)
	f.Add("Direct", "Gateway.gateway.networking.k8s.io", "", "", "none", uint8(0b11111), false)
	f.Add("true", "", "", "Gateway.g,HTTPRoute.g", "", uint8(0b00100), false)
	f.Add("inherited", "Gateway.g", "HTTPRoute.g", "Gateway.g,HTTPRoute.g", "patch-overrides,custom", uint8(0b11111), true)
	f.Add("INHERITED", ",", " .x ", "A,A", "custom", uint8(0b11111), false)
	f.Add("garbage", "", "", "", "", uint8(0b10000), false)
	f.Fuzz(func(t *testing.T, label, targets, effective, hierarchy, strategies string, present uint8, withCustom bool) {
		labels := map[string]string{}
		if present&0b10000 == 0 {
			labels[LabelPolicy] = label
		}
		ann := map[string]string{}
		for i, kv := range [][2]string{
			{AnnotationTargetKinds, targets},
			{AnnotationEffectiveTargetKinds, effective},
			{AnnotationHierarchy, hierarchy},
			{AnnotationMergeStrategies, strategies},
		} {
			if present&(1<<i) != 0 {
				ann[kv[0]] = kv[1]
			}
		}
		var custom merge.CustomFunc
		if withCustom {
			custom = customFn
		}
		k, p := KindFromCRD(newCRD(labels, ann), custom)
		if _, labelled := labels[LabelPolicy]; !labelled {
			if k != nil || p != nil {
				t.Fatalf("unlabelled CRD gave (%v, %v)", k, p)
			}
			return
		}
		if (k == nil) == (p == nil) {
			t.Fatalf("want exactly one of kind and problem, got (%v, %v)", k, p)
		}
		if p != nil {
			if p.Object != crdRef || p.Field == "" || p.Message == "" {
				t.Fatalf("problem does not name the CRD and a field: %+v", p)
			}
			if p.Field != "metadata.labels["+LabelPolicy+"]" && p.Field != "spec.names.kind" && !strings.HasPrefix(p.Field, "metadata.annotations[attache.dev/") {
				t.Fatalf("problem field %q is not the label or an annotation", p.Field)
			}
			return
		}
		checkKind(t, k)
		// A valid kind's settings must survive revalidation from Go unchanged.
		k2, err := NewKind(Spec{
			GroupKind: k.GroupKind, Class: k.Class, TargetKinds: k.TargetKinds,
			EffectiveTargetKinds: k.EffectiveTargetKinds, Hierarchy: k.Hierarchy,
			Strategies: k.Strategies, Custom: k.Custom,
		})
		if err != nil {
			t.Fatalf("valid kind %+v fails NewKind: %v", k, err)
		}
		if !slices.Equal(k2.Strategies, k.Strategies) || !slices.Equal(k2.TargetKinds, k.TargetKinds) ||
			!slices.Equal(k2.EffectiveTargetKinds, k.EffectiveTargetKinds) || !slices.Equal(k2.Hierarchy, k.Hierarchy) {
			t.Fatalf("revalidation changed the kind: %+v vs %+v", k, k2)
		}
	})
}

// TestNamedRulesRoot: "." (the spec proper itself, a shallow merge) is a
// named-rule path; empty and malformed paths are not.
func TestNamedRulesRoot(t *testing.T) {
	gk := topology.GroupKind{Group: "example.com", Kind: "ShallowPolicy"}
	if _, err := NewKind(Spec{GroupKind: gk, Class: Inherited, NamedRules: []string{".", "limits"}}); err != nil {
		t.Errorf(`"." refused: %v`, err)
	}
	for _, bad := range []string{"", "..", ".limits", "limits.", "a..b"} {
		if _, err := NewKind(Spec{GroupKind: gk, Class: Inherited, NamedRules: []string{bad}}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestKindFromCRDSameLevelTies(t *testing.T) {
	ann := func(same, ties string, more ...string) map[string]string {
		m := map[string]string{AnnotationSameLevel: same, AnnotationSameLevelTies: ties, AnnotationDirectSections: "true"}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i]] = more[i+1]
		}
		return m
	}
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann("oldest-wins", "none")), nil)
	if !k.TiesNotRejected || k.Origins[SettingSameLevelTies] != FromAnnotation {
		t.Errorf("TiesNotRejected = %v (origin %q)", k.TiesNotRejected, k.Origins[SettingSameLevelTies])
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann("oldest-wins", "name")), nil)
	if k.TiesNotRejected {
		t.Error("same-level-ties: name keeps ties")
	}
	for _, tc := range []struct {
		ann  map[string]string
		want string
	}{
		{ann("gep", "none"), "ties matter to the same-level rule oldest-wins; the rule is gep"},
		{ann("oldest-wins", "maybe"), `"maybe"`},
		{ann("oldest-wins", "none", AnnotationConflictScope, "policy"), "not with conflict-scope policy"},
		{ann("oldest-wins", "none", AnnotationDirectSections, "false"), "nor with strategy none without direct-sections"},
	} {
		k, p := KindFromCRD(newCRD(policyLabel("Direct"), tc.ann), nil)
		wantCRDProblem(t, k, p, annField(AnnotationSameLevelTies), tc.want)
	}
	// Given from Go for another rule, the setting is refused too (only a
	// profile's is dropped when the CRD changes the rule).
	if _, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute},
		SameLevel: SameLevelMergeDisjoint, TiesNotRejected: true}); err == nil || !strings.Contains(err.Error(), "ties matter to the same-level rule oldest-wins") {
		t.Errorf("ties from Go with merge-disjoint: %v, want refused", err)
	}
}

// TestKindFromCRDSectionNames: attache.dev/section-names "false" says the
// kind's targetRefs have no sectionName; "ignored", that they have one its
// implementation does not read (a reference names the whole object either
// way); "true" and its absence, that they have. Waypoint targets (istiod's, which reads no sectionName) need it
// false: without the annotation the waypoint-targets annotation is blamed,
// with "true" the section-names one.
func TestKindFromCRDSectionNames(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationSectionNames: " false "}), nil)
	if !k.NoSectionNames {
		t.Error("section-names false: NoSectionNames is off")
	}
	wantOrigins(t, k, map[string]Origin{"class": FromLabel, "sectionNames": FromAnnotation})
	for _, ann := range []map[string]string{{AnnotationSectionNames: "true"}, {}} {
		if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil); k.NoSectionNames {
			t.Errorf("%v: NoSectionNames is on", ann)
		}
	}
	if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationSectionNames: "ignored"}), nil); !k.NoSectionNames || !k.SectionNamesIgnored {
		t.Errorf("section-names ignored: NoSectionNames %v, SectionNamesIgnored %v; want both", k.NoSectionNames, k.SectionNamesIgnored)
	}
	if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationSectionNames: "false"}), nil); k.SectionNamesIgnored {
		t.Error("section-names false: SectionNamesIgnored is on")
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationTargetKinds: "Service",
		AnnotationWaypointTargets: "istio", AnnotationSectionNames: "false", AnnotationSummary: "istio-waypoint"}), nil)
	if !k.NoSectionNames || !k.WaypointTargets || !k.SummaryIstioWaypoint {
		t.Errorf("waypoint targets without section names, istiod's summary: %+v", k)
	}
	for _, tc := range []struct {
		ann   map[string]string
		field string
	}{
		{map[string]string{AnnotationSectionNames: "no"}, annField(AnnotationSectionNames)},
		{map[string]string{AnnotationTargetKinds: "Service", AnnotationWaypointTargets: "istio"}, annField(AnnotationWaypointTargets)},
		{map[string]string{AnnotationTargetKinds: "Service", AnnotationWaypointTargets: "istio", AnnotationSectionNames: "true"}, annField(AnnotationSectionNames)},
	} {
		k, p := KindFromCRD(newCRD(policyLabel("Direct"), tc.ann), nil)
		substr := "section names must be false (attache.dev/section-names)"
		if tc.ann[AnnotationSectionNames] == "no" {
			substr = `"no" is neither true, false nor ignored`
		}
		wantCRDProblem(t, k, p, tc.field, substr)
	}
}

// TestKindFromCRDPortSelection: attache.dev/port-selection names the list
// of per-port configurations, their key and value fields and the default;
// a malformed value, or a kind without listener contexts or whose policies
// all apply side by side, is refused naming the annotation.
func TestKindFromCRDPortSelection(t *testing.T) {
	listeners := map[string]string{AnnotationPortSelection: "perPort[].listener key=port default=default",
		AnnotationTargetKinds: "Gateway", AnnotationEffectiveSectionKinds: "Gateway"}
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), listeners), nil)
	if want := (PortSelection{List: "perPort", Key: "port", Value: "listener", Default: "default"}); k.PortSelection != want {
		t.Errorf("PortSelection = %+v, want %+v", k.PortSelection, want)
	}
	wantOrigins(t, k, map[string]Origin{"class": FromLabel, "portSelection": FromAnnotation, "targetKinds": FromAnnotation, "effectiveSectionKinds": FromAnnotation})
	if got := k.PortSelection.String(); got != "perPort[].listener key=port default=default" {
		t.Errorf("String() = %q", got)
	}
	if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationPortSelection: "none"}), nil); k.PortSelection.Enabled() {
		t.Errorf("none: %+v", k.PortSelection)
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range listeners {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		ann  map[string]string
		want string
	}{
		{with(AnnotationPortSelection, "perPort key=port default=default"), `is not "<list>[].<value>"`},
		{with(AnnotationPortSelection, "perPort[].listener key=port"), "want"},
		{with(AnnotationPortSelection, "perPort[].listener key=port default=perPort"), "the list and the default are the same field"},
		{with(AnnotationPortSelection, "a.b[].listener key=port default=d"), `the list "a.b" is not a field name`},
		{with(AnnotationPortSelection, "perPort[].port key=port default=d"), "an item's key and value are the same field"},
		{with(AnnotationEffectiveSectionKinds, "HTTPRoute", AnnotationTargetKinds, "HTTPRoute"), "the effective section kinds must include Gateway, ListenerSet or XListenerSet"},
		{with(AnnotationComposition, "additive"), "the composition must be merge, not additive"},
	} {
		k, p := KindFromCRD(newCRD(policyLabel("Direct"), tc.ann), nil)
		wantCRDProblem(t, k, p, annField(AnnotationPortSelection), tc.want)
	}
}

// TestParseAncestorMode: every mode reads back; Gateways says which name
// Gateways; an unknown one lists the modes.
func TestParseAncestorMode(t *testing.T) {
	for _, tc := range []struct {
		in       string
		gateways bool
	}{{"target", false}, {" gateway", true}, {"gateway-object", true}, {"gateway-parentrefs ", true}} {
		m, err := ParseAncestorMode(tc.in)
		if err != nil || string(m) != strings.TrimSpace(tc.in) || m.Gateways() != tc.gateways {
			t.Errorf("%q: %q, %v (Gateways %v)", tc.in, m, err, m.Gateways())
		}
	}
	if _, err := ParseAncestorMode("route"); err == nil || !strings.Contains(err.Error(), "gateway-parentrefs") {
		t.Errorf("unknown mode: %v", err)
	}
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationAncestor: "gateway-parentrefs"}), nil)
	if k.Ancestor != AncestorGatewayParentRefs {
		t.Errorf("annotation: %q", k.Ancestor)
	}
}

// TestKindAncestorLimit: attache.dev/ancestor-limit "skip" says a policy
// applies only at the ancestors its status can list; "report" and its
// absence, at all of them. A profile gives the setting through set() (the
// CRD's annotation wins), NewKind refuses an unknown mode, and the
// annotation an unknown word, naming it.
func TestKindAncestorLimit(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationAncestorLimit: " skip "}), nil)
	if k.AncestorLimit != AncestorLimitSkip {
		t.Errorf("ancestor-limit skip: AncestorLimit = %q", k.AncestorLimit)
	}
	wantOrigins(t, k, map[string]Origin{"class": FromLabel, "ancestorLimit": FromAnnotation})
	for _, ann := range []map[string]string{{AnnotationAncestorLimit: "report"}, {}} {
		if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil); k.AncestorLimit != AncestorLimitReport {
			t.Errorf("%v: AncestorLimit = %q, want report", ann, k.AncestorLimit)
		}
	}
	k, p := KindFromCRD(newCRD(policyLabel("Direct"), map[string]string{AnnotationAncestorLimit: "drop"}), nil)
	wantCRDProblem(t, k, p, annField(AnnotationAncestorLimit), `unknown ancestor limit mode "drop" (known: report, skip)`)

	prof := &Profile{Implementation: "Impl", Spec: Spec{GroupKind: colorGK, Class: Direct, AncestorLimit: AncestorLimitSkip}}
	k, p = KindFromCRDWithProfile(newCRD(nil, nil), nil, prof)
	if p != nil {
		t.Fatal(p)
	}
	if k.AncestorLimit != AncestorLimitSkip || k.Origins[SettingAncestorLimit] != FromProfile("Impl") {
		t.Errorf("profile: AncestorLimit = %q from %q, want skip from the profile", k.AncestorLimit, k.Origins[SettingAncestorLimit])
	}
	k, p = KindFromCRDWithProfile(newCRD(nil, map[string]string{AnnotationAncestorLimit: "report"}), nil, prof)
	if p != nil {
		t.Fatal(p)
	}
	if k.AncestorLimit != AncestorLimitReport || k.Origins[SettingAncestorLimit] != FromAnnotation {
		t.Errorf("annotation over profile: AncestorLimit = %q from %q", k.AncestorLimit, k.Origins[SettingAncestorLimit])
	}
	if _, err := NewKind(Spec{GroupKind: colorGK, Class: Direct, AncestorLimit: "drop"}); err == nil || !strings.Contains(err.Error(), "ancestor limit") {
		t.Errorf("NewKind with an unknown ancestor limit: %v", err)
	}
}

// TestKindFromCRDRouteReplacement: attache.dev/route-replacement takes an
// HTTP status (or none) for a kind whose effective targets include route
// rules.
func TestKindFromCRDRouteReplacement(t *testing.T) {
	ann := map[string]string{AnnotationRouteReplacement: " 500 ", AnnotationEffectiveSectionKinds: "HTTPRoute", AnnotationTargetKinds: "HTTPRoute"}
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil)
	if k.RouteReplacement != 500 || k.Origins[SettingRouteReplacement] != FromAnnotation {
		t.Errorf("RouteReplacement = %d (origin %v), want 500 from the annotation", k.RouteReplacement, k.Origins[SettingRouteReplacement])
	}
	ann[AnnotationRouteReplacement] = "none"
	if k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil); k.RouteReplacement != 0 {
		t.Errorf("none: RouteReplacement = %d", k.RouteReplacement)
	}
}
