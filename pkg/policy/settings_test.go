package policy

import "testing"

// TestParseUntargetedScope: the annotation's values, and that String
// writes what Parse reads.
func TestParseUntargetedScope(t *testing.T) {
	for in, want := range map[string]UntargetedScope{
		"none":              {},
		"":                  {},
		"istio":             {Mode: UntargetedIstio},
		" istio:mesh-root ": {Mode: UntargetedIstio, RootNamespace: "mesh-root"},
	} {
		got, err := ParseUntargetedScope(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
		if back, err := ParseUntargetedScope(got.String()); err != nil || back.Mode != got.Mode || back.Root() != got.Root() {
			t.Errorf("%q: String %q reads back as %+v %v", in, got.String(), back, err)
		}
	}
	for _, in := range []string{"mesh", "none:x", "istio:Not_A_Namespace", "istio:"} {
		if got, err := ParseUntargetedScope(in); err == nil {
			t.Errorf("%q: accepted as %+v", in, got)
		}
	}
	if r := (UntargetedScope{Mode: UntargetedIstio}).Root(); r != DefaultIstioRootNamespace {
		t.Errorf("default root %q", r)
	}
}

// TestParseSharedPort: the annotation's two values; anything else is an
// error.
func TestParseSharedPort(t *testing.T) {
	for in, want := range map[string]bool{"reject": true, " allow ": false} {
		if got, err := parseSharedPort(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "true", "Reject"} {
		if _, err := parseSharedPort(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// The filter-attachment annotation: none, extension-ref, and
// extension-ref with the status of the direct response replacing a rule
// whose filter names a missing policy.
func TestParseFilterAttachment(t *testing.T) {
	for v, want := range map[string][2]int{"none": {0, 0}, "extension-ref": {1, 0}, " extension-ref  missing=500 ": {1, 500}} {
		on, missing, err := parseFilterAttachment(v)
		if err != nil || (on != (want[0] == 1)) || missing != want[1] {
			t.Errorf("parseFilterAttachment(%q) = %v, %d, %v; want %v", v, on, missing, err, want)
		}
	}
	for _, v := range []string{"", "extension-ref missing=", "extension-ref 500", "extension-ref missing=500 x", "none missing=500"} {
		if _, _, err := parseFilterAttachment(v); err == nil {
			t.Errorf("parseFilterAttachment(%q): no error", v)
		}
	}
}
