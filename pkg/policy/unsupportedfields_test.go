package policy

import (
	"reflect"
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
	k := routeKind(t, Spec{FailOpen: fs})
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

func TestWithoutFailedOpen(t *testing.T) {
	fs, err := ParseFailOpen("extProc[]=failOpen; extAuth=failOpen")
	if err != nil {
		t.Fatal(err)
	}
	k := routeKind(t, Spec{FailOpen: fs})
	spec := func() map[string]any {
		return map[string]any{
			"extProc": []any{
				map[string]any{"name": "a", "failOpen": true},
				map[string]any{"name": "b"},
				map[string]any{"name": "c", "failOpen": true},
			},
			"extAuth": map[string]any{"failOpen": true, "http": map[string]any{"path": "/"}},
			"lua":     []any{map[string]any{"inline": "x"}},
		}
	}
	p := &Policy{Kind: k, Spec: spec()}
	for _, c := range []struct {
		name   string
		fields []string
		parts  []string
		want   map[string]any
	}{
		{name: "nothing broken"},
		{name: "one processor", fields: []string{"spec.extProc[0].backendRefs[0]"}, parts: []string{"spec.extProc[0]"},
			want: map[string]any{
				"extProc": []any{map[string]any{"name": "b"}, map[string]any{"name": "c", "failOpen": true}},
				"extAuth": spec()["extAuth"], "lua": spec()["lua"],
			}},
		{name: "two processors and the authorizer", fields: []string{"spec.extProc[2].backendRef", "spec.extAuth.http.backendRefs[0]", "spec.extProc[0].backendRefs[1]"},
			parts: []string{"spec.extProc[0]", "spec.extProc[2]", "spec.extAuth"},
			want:  map[string]any{"extProc": []any{map[string]any{"name": "b"}}, "extAuth": nil, "lua": spec()["lua"]}},
		// One reference failing closed fails the route: nothing is left out.
		{name: "one fails closed", fields: []string{"spec.extProc[0].backendRefs[0]", "spec.extProc[1].backendRefs[0]"}},
		{name: "outside any part", fields: []string{"spec.lua[0].valueRef"}},
	} {
		got, parts := p.WithoutFailedOpen(c.fields)
		if !reflect.DeepEqual(parts, c.parts) || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, parts %v; want %v, parts %v", c.name, got, parts, c.want, c.parts)
		}
	}
	if !reflect.DeepEqual(p.Spec, spec()) {
		t.Errorf("the policy's spec changed: %v", p.Spec)
	}
}
