package policy

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

// Required objects read from the annotation: names and kinds, rendered back
// to the same value; "none" for none; errors name the entry and what is
// wrong. Missing ones are named in Kuadrant's words; an unread kind is not
// judged.
func TestRequiredObjectsSetting(t *testing.T) {
	const v = "kuadrant=Kuadrant.kuadrant.io; limitador=Limitador.limitador.kuadrant.io"
	k := mustKindFromCRD(t, newCRD(policyLabel("Inherited"), map[string]string{AnnotationRequiredObjects: v}), nil)
	if got := RequiredObjectsString(k.RequiredObjects); got != v || k.Origins[SettingRequiredObjects] != FromAnnotation {
		t.Errorf("required objects = %q (origin %q), want %q from the annotation", got, k.Origins[SettingRequiredObjects], v)
	}
	if rs, err := ParseRequiredObjects(" none "); err != nil || rs != nil || RequiredObjectsString(rs) != "none" {
		t.Errorf("none = %v, %v", rs, err)
	}
	for _, tc := range []struct{ v, err string }{
		{"kuadrant", "want <name>=<Kind.group>"},
		{"=Kuadrant.kuadrant.io", `required object "": want a name`},
		{"k=Kuadrant", "want Kind.group"},
		{"k=Kuadrant.", "want Kind.group"},
		{"k=Kuadrant.kuadrant.io/v1beta1", "want Kind.group"},
		{"k=A.x; k=B.y", `required object "k" is given twice`},
		{"a|b=A.x", "want a name"},
	} {
		if _, err := ParseRequiredObjects(tc.v); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want one saying %q", tc.v, err, tc.err)
		}
	}
	// A bad value on a CRD is a problem naming the annotation.
	if _, prob := KindFromCRD(newCRD(policyLabel("Inherited"), map[string]string{AnnotationRequiredObjects: "k=Kuadrant"}), nil); prob == nil || !strings.Contains(prob.Error(), AnnotationRequiredObjects) {
		t.Errorf("bad annotation: problem %v, want one naming %s", prob, AnnotationRequiredObjects)
	}
	if _, prob := KindFromCRD(newCRD(policyLabel("Inherited"), map[string]string{AnnotationRequiredObjects: "k=K.x", AnnotationProgrammed: "when-accepted"}), nil); prob == nil || !strings.Contains(prob.Error(), "choose one") {
		t.Errorf("with programmed: when-accepted: problem %v, want the two refused together", prob)
	}
	// A profile's required objects give way to the CRD's programmed:
	// when-accepted.
	prof := &Profile{Implementation: "Impl", Spec: Spec{Class: Inherited, RequiredObjects: []RequiredObject{{Name: "k", Kind: topology.GroupKind{Group: "x", Kind: "K"}}}}}
	pk, prob := KindFromCRDWithProfile(newCRD(nil, map[string]string{AnnotationProgrammed: "when-accepted"}), nil, prof)
	if prob != nil || pk == nil || len(pk.RequiredObjects) != 0 || pk.Origins[SettingRequiredObjects] != FromDefault || !pk.ProgrammedWhenAccepted {
		t.Errorf("profile's required objects with the CRD's programmed: when-accepted: kind %+v, problem %v; want the CRD's setting, the profile's dropped", pk, prob)
	}
	kuadrant := topology.GroupKind{Group: "kuadrant.io", Kind: "Kuadrant"}
	none := func(topology.GroupKind) bool { return false }
	want := "kuadrant is not installed, please create resource (no Kuadrant.kuadrant.io object on the cluster); limitador is not installed, please create resource (no Limitador.limitador.kuadrant.io object on the cluster)"
	if got := k.MissingRequiredObjects(none, nil); got != want {
		t.Errorf("none present: %q, want %q", got, want)
	}
	onlyKuadrant := func(gk topology.GroupKind) bool { return gk == kuadrant }
	if got := k.MissingRequiredObjects(onlyKuadrant, func(gk topology.GroupKind) bool { return gk != kuadrant }); got != "" {
		t.Errorf("Kuadrant present, Limitador not read: %q, want none missing", got)
	}
}
