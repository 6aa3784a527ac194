package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

func TestParseUnsupportedFields(t *testing.T) {
	us, err := ParseUnsupportedFields(" TCPRoute = spec.cors, authorization.rules[].cel ; Service=a")
	if err != nil {
		t.Fatal(err)
	}
	want := "TCPRoute.gateway.networking.k8s.io=cors,authorization.rules[].cel; Service=a"
	if got := UnsupportedFieldsString(us); got != want {
		t.Errorf("read as %q, want %q", got, want)
	}
	if us[0].Kind != topology.KindTCPRoute {
		t.Errorf("bare TCPRoute resolved to %s", us[0].Kind)
	}
	if us, err := ParseUnsupportedFields("none"); err != nil || us != nil {
		t.Errorf("none: %v, %v", us, err)
	}
	for v, msg := range map[string]string{
		"":                  "names no entry",
		"TCPRoute":          "is not <target kind>=",
		"TCPRoute=":         "names no field",
		"TCPRoute=a..b":     "is not a dotted path",
		"TCPRoute=a[x]":     "is not a dotted path",
		"=cors":             "names no target kind",
		"TCPRoute=a, b c":   "is not a dotted path",
		"TCPRoute=a,,b; ; ": "",
	} {
		_, err := ParseUnsupportedFields(v)
		switch {
		case msg == "" && err != nil:
			t.Errorf("%q: %v", v, err)
		case msg != "" && (err == nil || !strings.Contains(err.Error(), msg)):
			t.Errorf("%q: error %v, want one saying %q", v, err, msg)
		}
	}
}

func TestUnsupportedFieldsSet(t *testing.T) {
	us, err := ParseUnsupportedFields("TCPRoute=cors,jwt,authorization.rules[].cel,authorization.rules[].principal.headers")
	if err != nil {
		t.Fatal(err)
	}
	spec := map[string]any{
		"cors": map[string]any{}, // an empty object is set
		"jwt":  nil,              // null is not
		"authorization": map[string]any{"rules": []any{
			map[string]any{"principal": map[string]any{"headers": []any{}}},      // an empty list is not
			map[string]any{"cel": map[string]any{"expression": "true"}},          // set
			map[string]any{"principal": map[string]any{"headers": []any{"x-a"}}}, // set
			"not an object",
		}},
	}
	got := us[0].Set(spec)
	want := []string{"spec.cors", "spec.authorization.rules[1].cel", "spec.authorization.rules[2].principal.headers"}
	if !slices.Equal(got, want) {
		t.Errorf("Set = %v, want %v", got, want)
	}
	if got := us[0].Set(map[string]any{"authorization": map[string]any{"rules": "x"}}); len(got) != 0 {
		t.Errorf("malformed rules: Set = %v, want none", got)
	}
}

// The setting from an annotation, with its origin, and its errors naming
// the annotation.
func TestUnsupportedFieldsSetting(t *testing.T) {
	k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindTCPRoute},
		UnsupportedFields: []UnsupportedFields{{Kind: topology.KindTCPRoute, Paths: []string{"a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if u := k.UnsupportedAt(topology.KindTCPRoute); u == nil || u.Paths[0] != "a" {
		t.Errorf("UnsupportedAt(TCPRoute) = %v", u)
	}
	if u := k.UnsupportedAt(topology.KindHTTPRoute); u != nil {
		t.Errorf("UnsupportedAt(HTTPRoute) = %v, want nil", u)
	}
	if k.Origins[SettingUnsupportedFields] != FromGo {
		t.Errorf("origin %q", k.Origins[SettingUnsupportedFields])
	}
	_, err = NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindTCPRoute},
		UnsupportedFields: []UnsupportedFields{{Kind: topology.KindTCPRoute, Paths: []string{"a"}}, {Kind: topology.KindTCPRoute, Paths: []string{"b"}}}})
	if err == nil || !strings.Contains(err.Error(), "two entries for TCPRoute") {
		t.Errorf("two entries for one kind: %v", err)
	}
}

func TestFailOpen(t *testing.T) {
	fs, err := ParseFailOpen(" spec.extProc[] = failOpen ; extAuth=failOpen")
	if err != nil {
		t.Fatal(err)
	}
	if got := FailOpenString(fs); got != "extProc[]=failOpen; extAuth=failOpen" {
		t.Errorf("read as %q", got)
	}
	for v, msg := range map[string]string{"": "names no entry", "extProc[]": "is not <path>=", "a..b=x": "dotted path", "a=": "not a field name", "a=x.y": "not a field name"} {
		if _, err := ParseFailOpen(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error saying %q", v, err, msg)
		}
	}
	k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, FailOpen: fs})
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Kind: k, Spec: map[string]any{
		"extProc": []any{
			map[string]any{"failOpen": "true"}, // not a boolean
			map[string]any{"failOpen": true},
		},
		"extAuth": map[string]any{"failOpen": true},
	}}
	for field, want := range map[string]bool{
		"spec.extProc[1].backendRefs[0]":   true,
		"spec.extProc[0].backendRefs[0]":   false,
		"spec.extAuth.http.backendRefs[0]": true,
		"spec.extAuthz.backendRef":         false, // not under extAuth
		"spec.lua[0].valueRef":             false,
	} {
		if got := p.FailsOpen(field); got != want {
			t.Errorf("FailsOpen(%s) = %v, want %v", field, got, want)
		}
	}
}
