package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestParseDirectSections(t *testing.T) {
	for _, tc := range []struct {
		in      string
		on      bool
		by      []string
		wantErr string
	}{
		{in: "true", on: true},
		{in: " false ", on: false},
		{in: "true; controller=gateway.nginx.org/nginx-gateway-controller unranked", on: true, by: []string{"gateway.nginx.org/nginx-gateway-controller"}},
		{in: "true; controller=a unranked; ; controller=b unranked", on: true, by: []string{"a", "b"}},
		{in: "yes", wantErr: "neither true nor false"},
		{in: "false; controller=a unranked", wantErr: "needs true"},
		{in: "true; a unranked", wantErr: "want controller=<GatewayClass controllerName> unranked"},
		{in: "true; controller= unranked", wantErr: "want controller="},
		{in: "true; controller=a", wantErr: "want the one word unranked"},
		{in: "true; controller=a ranked", wantErr: "want the one word unranked"},
		{in: "true; controller=a unranked extra", wantErr: "want the one word unranked"},
		{in: "true; controller=a unranked; controller=a unranked", wantErr: "named twice"},
	} {
		on, by, err := ParseDirectSections(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || on != tc.on || !slices.Equal(by, tc.by) {
			t.Errorf("%q = %v, %v, %v; want %v, %v", tc.in, on, by, err, tc.on, tc.by)
		}
	}
}

// The clauses come from the CRD's annotation, replace the profile's
// setting whole, and need a Direct kind.
func TestDirectSectionsUnrankedFromCRD(t *testing.T) {
	crd := func(class, v string) *Kind {
		t.Helper()
		k, p := KindFromCRD(newCRD(map[string]string{LabelPolicy: class}, map[string]string{AnnotationDirectSections: v}), nil)
		if p != nil {
			t.Fatalf("%s, %q: %v", class, v, p)
		}
		return k
	}
	k := crd("Direct", "true; controller=x.example/c unranked")
	if !k.SectionsUnrankedAt("x.example/c") || k.SectionsUnrankedAt("y.example/c") {
		t.Errorf("unranked at %v, want x.example/c only", k.SectionsUnrankedBy)
	}
	if got := FormatDirectSections(k.DirectSections, k.SectionsUnrankedBy); got != "true; controller=x.example/c unranked" {
		t.Errorf("written back as %q", got)
	}
	if k := crd("Direct", "true"); len(k.SectionsUnrankedBy) != 0 {
		t.Errorf("plain true gave %v", k.SectionsUnrankedBy)
	}
	_, p := KindFromCRD(newCRD(map[string]string{LabelPolicy: "Inherited"}, map[string]string{AnnotationDirectSections: "true; controller=x.example/c unranked"}), nil)
	if p == nil || p.Field != "metadata.annotations["+AnnotationDirectSections+"]" || !strings.Contains(p.Message, "need a Direct kind") {
		t.Errorf("Inherited kind with unranked clauses: problem %+v", p)
	}
}

// FuzzParseDirectSections: no panic, and what is accepted is written back
// (FormatDirectSections) to a value read again the same.
func FuzzParseDirectSections(f *testing.F) {
	for _, s := range []string{"true", "false", "true; controller=a unranked", "true; controller=a unranked; controller=b unranked",
		"false; controller=a unranked", "true;", "true; controller=a", "true; controller==b unranked", ";;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		on, by, err := ParseDirectSections(v)
		if err != nil {
			return
		}
		on2, by2, err := ParseDirectSections(FormatDirectSections(on, by))
		if err != nil || on2 != on || !slices.Equal(by, by2) {
			t.Fatalf("%q read as %v %v, written %q, read again %v %v (%v)", v, on, by, FormatDirectSections(on, by), on2, by2, err)
		}
	})
}
