package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

func TestParseFeatureGates(t *testing.T) {
	gs, err := ParseFeatureGates(" EnvoyGateway.extensionApis.enableLua = spec.lua, wasm[].code ; my-impl.patches=* ")
	if err != nil {
		t.Fatal(err)
	}
	if got := FeatureGatesString(gs); got != "EnvoyGateway.extensionApis.enableLua=lua,wasm[].code; my-impl.patches=*" {
		t.Errorf("read as %q", got)
	}
	if len(gs) != 2 || len(gs[1].Paths) != 0 {
		t.Errorf("a gate of the whole kind has no path: %+v", gs)
	}
	if gs, err := ParseFeatureGates("none"); err != nil || gs != nil {
		t.Errorf("none: %v, %v", gs, err)
	}
	for v, msg := range map[string]string{
		"":             "names no entry",
		"lua":          "is not <feature>=<path>",
		"=lua":         `"" is not a feature name`,
		"a b=lua":      `"a b" is not a feature name`,
		"x=":           "names no field (or * for the whole kind)",
		"x=, ,":        "names no field",
		"x=a..b":       "dotted path",
		"x=*,lua":      "dotted path",
		"x/y.enable=a": "is not a feature name",
	} {
		if _, err := ParseFeatureGates(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error saying %q", v, err, msg)
		}
	}
}

func TestParseFeature(t *testing.T) {
	for v, want := range map[string]bool{"A.b=true": true, "A.b = off": false, "A.b=ON": true, "A.b=false": false} {
		name, on, err := ParseFeature(v)
		if err != nil || name != "A.b" || on != want {
			t.Errorf("%q: %q %v %v", v, name, on, err)
		}
	}
	for v, msg := range map[string]string{"A.b": "is not <feature>=true|false", "A.b=yes": `"yes" is not true or false`, "=true": "is not <feature>"} {
		if _, _, err := ParseFeature(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error saying %q", v, err, msg)
		}
	}
}

// A gated field set is refused while its feature is off, wherever it lies
// in lists; absent, null and empty lists are not set; the message says
// where the feature's state came from.
func TestGatedOff(t *testing.T) {
	gs, err := ParseFeatureGates("Impl.lua=lua; Impl.wasm=wasm[].code; Impl.kind=*")
	if err != nil {
		t.Fatal(err)
	}
	k := routeKind(t, Spec{FeatureGates: gs})
	if k.Origins[SettingFeatureGates] != FromGo {
		t.Errorf("origin %q", k.Origins[SettingFeatureGates])
	}
	p := &Policy{Kind: k, Spec: map[string]any{
		"lua":  []any{map[string]any{"inline": "x"}},
		"wasm": []any{map[string]any{"code": map[string]any{}}, map[string]any{"name": "no code"}, map[string]any{"code": nil}, map[string]any{"code": "c"}},
	}}
	got := p.GatedOff(nil)
	want := []string{"spec.lua", "spec.wasm[0].code", "spec.wasm[3].code"}
	if len(got) != len(want) {
		t.Fatalf("GatedOff = %v, want fields %v", got, want)
	}
	for i, fp := range got {
		if fp.Field != want[i] {
			t.Errorf("field %d: %s, want %s", i, fp.Field, want[i])
		}
	}
	if !strings.Contains(got[0].Message, "needs Impl.lua, off: no configuration attache read turns it on") || !strings.Contains(got[0].Message, "--feature Impl.lua=true") {
		t.Errorf("message %q", got[0].Message)
	}
	f := Features{"Impl.lua": {On: false, From: "ConfigMap ns/cfg"}, "Impl.wasm": {On: true, From: "--feature Impl.wasm=true"}}
	got = p.GatedOff(f)
	if !reflect.DeepEqual(got, []FieldProblem{{Field: "spec.lua", Message: "needs Impl.lua, off in ConfigMap ns/cfg"}}) {
		t.Errorf("with wasm on, lua off in a ConfigMap: %v", got)
	}
	p.Spec = map[string]any{"lua": []any{}, "wasm": nil}
	if got := p.GatedOff(nil); len(got) != 0 {
		t.Errorf("empty list and null are not set: %v", got)
	}
	// The whole kind.
	if g, msg := k.DisabledBy(f); g == nil || g.Feature != "Impl.kind" || msg != "P is disabled in its implementation's configuration: it needs Impl.kind, off: no configuration attache read turns it on (set --feature Impl.kind=true, or give attache the implementation's configuration where attache reads one: Envoy Gateway's envoy-gateway-config)" {
		t.Errorf("DisabledBy = %v, %q", g, msg)
	}
	f["Impl.kind"] = Feature{On: true}
	if g, msg := k.DisabledBy(f); g != nil || msg != "" {
		t.Errorf("feature on: DisabledBy = %v, %q", g, msg)
	}
}

// The annotation sets the kind's gates, and a bad one names the setting.
func TestFeatureGatesAnnotation(t *testing.T) {
	crd := newCRD(policyLabel("Direct"), map[string]string{AnnotationFeatureGates: "Impl.x=a.b"})
	k := mustKindFromCRD(t, crd, nil)
	if FeatureGatesString(k.FeatureGates) != "Impl.x=a.b" || k.Origins[SettingFeatureGates] != FromAnnotation {
		t.Errorf("gates %v from %s", k.FeatureGates, k.Origins[SettingFeatureGates])
	}
	crd.SetAnnotations(map[string]string{AnnotationFeatureGates: "Impl.x"})
	if _, prob := KindFromCRD(crd, nil); prob == nil || prob.Field != annField(AnnotationFeatureGates) {
		t.Errorf("bad annotation: %v", prob)
	}
}

// A gate on the backendRefs naming one kind of backend: its annotation
// form round-trips, it needs the kind's backendRefs paths, it never
// disables the whole kind, and BackendGatedOff names it while its feature
// is off.
func TestBackendKindGate(t *testing.T) {
	gs, err := ParseFeatureGates("Impl.backend = backendRefs: Backend.x.io ; Impl.lua=lua")
	if err != nil {
		t.Fatal(err)
	}
	if got := FeatureGatesString(gs); got != "Impl.backend=backendRefs:Backend.x.io; Impl.lua=lua" {
		t.Errorf("read as %q", got)
	}
	backend := topology.GroupKind{Group: "x.io", Kind: "Backend"}
	if gs[0].BackendKind != backend || len(gs[0].Paths) != 0 || gs[0].WholeKind() {
		t.Errorf("gate %+v", gs[0])
	}
	for v, msg := range map[string]string{
		"x=backendRefs:":          `"" is not <Kind>.<group>`,
		"x=backendRefs:a b.io":    `"a b.io" is not <Kind>.<group>`,
		"x=backendRefs:B.io,lua":  `"B.io,lua" is not <Kind>.<group>`,
		"a b=backendRefs:Backend": "is not a feature name",
	} {
		if _, err := ParseFeatureGates(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error saying %q", v, err, msg)
		}
	}
	spec := Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, FeatureGates: gs}
	if _, err := NewKind(spec); err == nil || !strings.Contains(err.Error(), "the kind names no backendRefs paths") {
		t.Errorf("a backend gate without backendRefs paths: %v", err)
	}
	spec.BackendRefs = []BackendRefPath{"ext.backendRefs[]"}
	k, err := NewKind(spec)
	if err != nil {
		t.Fatal(err)
	}
	if g, msg := k.DisabledBy(nil); g != nil || msg != "" {
		t.Errorf("a backend gate disables the kind: %v %q", g, msg)
	}
	if msg := k.BackendGatedOff(backend, Features{"Impl.backend": {From: "ConfigMap ns/c"}}); msg != "Backend is disabled in its implementation's configuration: it needs Impl.backend, off in ConfigMap ns/c" {
		t.Errorf("off: %q", msg)
	}
	if msg := k.BackendGatedOff(backend, Features{"Impl.backend": {On: true}}); msg != "" {
		t.Errorf("on: %q", msg)
	}
	if msg := k.BackendGatedOff(topology.KindService, nil); msg != "" {
		t.Errorf("a Service: %q", msg)
	}
	// A copy of the kind keeps the gate's backend kind.
	if k2, err := NewKind(spec); err != nil || k2.FeatureGates[0].BackendKind != backend {
		t.Errorf("copied gate: %+v %v", k2.FeatureGates, err)
	}
}
