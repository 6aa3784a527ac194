package policy

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseBackendRefPaths(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "extAuth.http.backendRefs[]", want: "[extAuth.http.backendRefs[]]"},
		{in: "spec.extProc[].backendRefs[], extProc[].backendRef", want: "[extProc[].backendRefs[] extProc[].backendRef]"},
		{in: " none ", want: "[]"},
		{in: "", err: "names no path"},
		{in: "a..b", err: "not a dotted path"},
		{in: "a[].[]", err: "not a dotted path"},
		{in: "a[x]", err: "not a dotted path"},
		{in: "a b", err: "not a dotted path"},
	} {
		got, err := ParseBackendRefPaths(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && fmt.Sprint(got) != c.want:
			t.Errorf("%q read as %v, want %s", c.in, got, c.want)
		}
	}
}

// backendRefs are read through lists and objects with Gateway API's
// defaults (core Service, the policy's namespace); what is not a backendRef
// naming a backend is skipped without making the policy Invalid (its
// content is the implementation's to check).
func TestReadBackendRefs(t *testing.T) {
	k := mustKind(t, Spec{Class: Direct, BackendRefs: []BackendRefPath{"ext[].backendRefs[]", "one.backendRef"}})
	p := parse(t, k, withTargets(`"ext": [
  {"backendRefs": [{"name": "a", "port": 80}, {"group": "core", "kind": "Service", "name": "b", "namespace": "other"}, {"port": 1}, "x", {"name": "c", "port": "80"}]},
  {"backendRefs": "not a list"},
  {"backendRefs": [{"group": "gateway.envoyproxy.io", "kind": "Backend", "name": "d", "port": 3001}]}
],
"one": {"backendRef": {"name": "e"}}`))
	if p.Invalid() {
		t.Fatalf("policy made invalid: %v", p.Problems)
	}
	var got []string
	for _, r := range p.BackendRefs {
		got = append(got, fmt.Sprintf("%s:%d@%s", r.Backend, r.Port, r.Field))
	}
	want := []string{
		"Service ns1/a:80@spec.ext[0].backendRefs[0]",
		"Service other/b:0@spec.ext[0].backendRefs[1]",
		"Backend.gateway.envoyproxy.io ns1/d:3001@spec.ext[2].backendRefs[0]",
		"Service ns1/e:0@spec.one.backendRef",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("backendRefs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The setting is validated from Go and read from the CRD annotation.
func TestBackendRefsSetting(t *testing.T) {
	if _, err := NewKind(Spec{GroupKind: colorGK, Class: Direct, BackendRefs: []BackendRefPath{"a..b"}}); err == nil || !strings.Contains(err.Error(), "not a dotted path") {
		t.Errorf("bad path from Go: %v, want an error saying so", err)
	}
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationBackendRefs: "spec.extAuth.http.backendRefs[]", AnnotationUnresolvedBackendRefs: "invalid"}), nil)
	if fmt.Sprint(k.BackendRefs) != "[extAuth.http.backendRefs[]]" || k.Origins[SettingBackendRefs] != FromAnnotation {
		t.Errorf("backendRefs = %v (origin %q), want [extAuth.http.backendRefs[]] from the annotation", k.BackendRefs, k.Origins[SettingBackendRefs])
	}
	if !k.InvalidOnUnresolvedBackendRefs || k.Origins[SettingUnresolvedBackendRefs] != FromAnnotation {
		t.Errorf("unresolved backendRefs invalid = %v (origin %q), want true from the annotation", k.InvalidOnUnresolvedBackendRefs, k.Origins[SettingUnresolvedBackendRefs])
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationBackendRefs: "spec.extAuth.http.backendRefs[]", AnnotationUnresolvedBackendRefs: "invalid",
		AnnotationClusterIPRouting: "spec.routingType=Service"}), nil)
	if k.ClusterIPRouting != "routingType=Service" || k.Origins[SettingClusterIPRouting] != FromAnnotation || k.ClusterIPRouting.Path() != "routingType" {
		t.Errorf("cluster IP routing = %q (origin %q), want routingType=Service from the annotation", k.ClusterIPRouting, k.Origins[SettingClusterIPRouting])
	}
	if !k.ClusterIPRouting.Holds(map[string]any{"routingType": "Service"}) || k.ClusterIPRouting.Holds(map[string]any{"routingType": "Endpoint"}) || k.ClusterIPRouting.Holds(nil) {
		t.Error("routingType=Service holds where the parameters say otherwise, or not where they say so")
	}
	if k, err := NewKind(Spec{GroupKind: colorGK, Class: Direct}); err != nil || k.ClusterIPRouting.String() != "none" {
		t.Errorf("default cluster IP routing = %v (%v), want none", k, err)
	}
}

// The controllers a kind's implementation serves: read from the
// annotation (trimmed, deduplicated), "any" for none; a kind without any
// serves every controller.
func TestControllersSetting(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationControllers: " example.com/a, example.com/b,example.com/a"}), nil)
	if fmt.Sprint(k.Controllers) != "[example.com/a example.com/b]" || k.Origins[SettingControllers] != FromAnnotation {
		t.Errorf("controllers = %v (origin %q), want [example.com/a example.com/b] from the annotation", k.Controllers, k.Origins[SettingControllers])
	}
	if !k.Serves("example.com/b") || k.Serves("example.com/c") {
		t.Error("Serves: want example.com/b served and example.com/c not")
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationControllers: "any"}), nil)
	if len(k.Controllers) != 0 || !k.Serves("example.com/c") || ControllersString(k.Controllers) != "any" {
		t.Errorf("controllers any = %v, want none, serving every controller", k.Controllers)
	}
}

// Listener conditions: read from the annotation on a kind whose effective
// targets are Gateway listeners, deduplicated; "any" for none.
func TestEffectiveListenersSetting(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{
		AnnotationTargetKinds: "Gateway.gateway.networking.k8s.io", AnnotationEffectiveSectionKinds: "Gateway.gateway.networking.k8s.io",
		AnnotationEffectiveListeners: "tls-terminate, hostname, tls-terminate"}), nil)
	if fmt.Sprint(k.EffectiveListeners) != "[tls-terminate hostname]" || k.Origins[SettingEffectiveListeners] != FromAnnotation {
		t.Errorf("effective listeners = %v (origin %q), want [tls-terminate hostname] from the annotation", k.EffectiveListeners, k.Origins[SettingEffectiveListeners])
	}
	if got, err := ParseEffectiveListeners("any"); err != nil || got != nil || EffectiveListenersString(got) != "any" {
		t.Errorf("any = %v, %v; want none", got, err)
	}
}

// A targetRef without group: the one known kind of that name by default;
// the core group with empty-target-group core (Istio).
func TestEmptyTargetGroupSetting(t *testing.T) {
	for _, tc := range []struct{ ann, wantGroup string }{{"", "gateway.networking.k8s.io"}, {"resolve", "gateway.networking.k8s.io"}, {"core", ""}} {
		ann := map[string]string{AnnotationTargetKinds: "Gateway.gateway.networking.k8s.io"}
		if tc.ann != "" {
			ann[AnnotationEmptyTargetGroup] = tc.ann
		}
		k := mustKindFromCRD(t, newCRD(policyLabel("Direct"), ann), nil)
		p := parse(t, k, `{"targetRefs": [{"kind": "Gateway", "name": "gw"}]}`)
		if len(p.Targets) != 1 || p.Targets[0].Group != tc.wantGroup {
			t.Errorf("empty-target-group %q: targets %+v, want group %q", tc.ann, p.Targets, tc.wantGroup)
		}
	}
}

// How a kind's backendRefs are judged and whom they make ancestors, and
// whether references are judged after conflicts: read from the
// annotations (NGINX Gateway Fabric's PayloadProcessor's words), refused
// when malformed or given where they mean nothing, and set from Go.
func TestBackendRefRulesSettings(t *testing.T) {
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{
		AnnotationBackendRefs:           "processors[].extProcess.backendRef; ancestors=gateways",
		AnnotationUnresolvedBackendRefs: "invalid external-name=allowed protocols=any backend-tls=oldest grant-reason=RefNotPermitted",
		AnnotationInvalidPolicies:       "not-applied references=after-conflicts",
		AnnotationConflictScope:         "policy", AnnotationSameLevel: "oldest-wins",
	}), nil)
	if fmt.Sprint(k.BackendRefs) != "[processors[].extProcess.backendRef]" || !k.BackendRefAncestorGateways || k.Origins[SettingBackendRefs] != FromAnnotation {
		t.Errorf("backendRefs = %v, ancestors gateways %v (origin %q)", k.BackendRefs, k.BackendRefAncestorGateways, k.Origins[SettingBackendRefs])
	}
	want := BackendRefRules{ExternalNameAllowed: true, AnyProtocol: true, TLSOldest: true, GrantReason: "RefNotPermitted"}
	if !k.InvalidOnUnresolvedBackendRefs || k.BackendRefRules != want || k.BackendRefRules.String() != "external-name=allowed protocols=any backend-tls=oldest grant-reason=RefNotPermitted" {
		t.Errorf("unresolved backendRefs = %v %+v (%q)", k.InvalidOnUnresolvedBackendRefs, k.BackendRefRules, k.BackendRefRules)
	}
	if !k.InvalidNotApplied || !k.RefsAfterConflicts {
		t.Errorf("invalid policies: not applied %v, references after conflicts %v; want both", k.InvalidNotApplied, k.RefsAfterConflicts)
	}
	// One word alone; the default reads none.
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid protocols=any", AnnotationInvalidPolicies: "not-applied"}), nil)
	if k.BackendRefRules != (BackendRefRules{AnyProtocol: true}) || k.BackendRefAncestorGateways || k.RefsAfterConflicts {
		t.Errorf("rules %+v, ancestors gateways %v, after conflicts %v; want protocols=any only", k.BackendRefRules, k.BackendRefAncestorGateways, k.RefsAfterConflicts)
	}
	for _, tc := range []struct {
		ann        map[string]string
		field, msg string
	}{
		{map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid tls=oldest"}, AnnotationUnresolvedBackendRefs, `unknown word "tls=oldest" after invalid`},
		{map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid protocols=any protocols=any"}, AnnotationUnresolvedBackendRefs, `word "protocols=any" given twice`},
		{map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "ignore protocols=any"}, AnnotationUnresolvedBackendRefs, "ignore takes no words"},
		{map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid grant-reason=Ref-Not"}, AnnotationUnresolvedBackendRefs, "grant-reason=Ref-Not: not a condition reason"},
		{map[string]string{AnnotationBackendRefs: "a.backendRef", AnnotationUnresolvedBackendRefs: "invalid grant-reason=A grant-reason=B"}, AnnotationUnresolvedBackendRefs, `word "grant-reason=" given twice`},
		{map[string]string{AnnotationBackendRefs: "a.backendRef; ancestors=policy"}, AnnotationBackendRefs, `unknown word "ancestors=policy" after the paths`},
		{map[string]string{AnnotationBackendRefs: "none; ancestors=gateways"}, AnnotationBackendRefs, "ancestors=gateways needs paths"},
		{map[string]string{AnnotationInvalidPolicies: "in-place references=after-conflicts"}, AnnotationInvalidPolicies, "unknown invalid-policies rule"},
	} {
		k, p := KindFromCRD(newCRD(policyLabel("Direct"), tc.ann), nil)
		wantCRDProblem(t, k, p, annField(tc.field), tc.msg)
	}
	// From Go: words where they mean nothing are refused.
	for _, tc := range []struct {
		spec Spec
		msg  string
	}{
		{Spec{GroupKind: colorGK, Class: Direct, RefsAfterConflicts: true}, "references=after-conflicts qualifies not-applied"},
		// Only a policy rejected whole leaves every level after the
		// conflicts (review of session 33).
		{Spec{GroupKind: colorGK, Class: Direct, InvalidNotApplied: true, RefsAfterConflicts: true}, "references=after-conflicts needs conflicts of whole policies"},
		{Spec{GroupKind: colorGK, Class: Direct, BackendRefs: []BackendRefPath{"a.backendRef"}, BackendRefRules: BackendRefRules{TLSOldest: true}}, "backend-tls=oldest tells how invalid judges backendRefs"},
		{Spec{GroupKind: colorGK, Class: Direct, BackendRefAncestorGateways: true}, "ancestors=gateways needs paths"},
		{Spec{GroupKind: colorGK, Class: Direct, BackendRefs: []BackendRefPath{"a.backendRef"}, InvalidOnUnresolvedBackendRefs: true, BackendRefRules: BackendRefRules{GrantReason: "no reason"}}, "grant-reason=no reason: not a condition reason"},
	} {
		if _, err := NewKind(tc.spec); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewKind(%+v) = %v, want an error containing %q", tc.spec, err, tc.msg)
		}
	}
}
