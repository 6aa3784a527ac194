package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseValueRanges(t *testing.T) {
	rs, err := ParseValueRanges(" spec.connection.bufferLimit = 0..4294967295 ; http2.windows[]=65535..2147483647")
	if err != nil {
		t.Fatal(err)
	}
	if got := ValueRangesString(rs); got != "connection.bufferLimit=0..4294967295; http2.windows[]=65535..2147483647" {
		t.Errorf("read as %q", got)
	}
	// A field named spec below spec is written back with the prefix.
	if rs, err := ParseValueRanges("spec.spec.a=1..2"); err != nil || ValueRangesString(rs) != "spec.spec.a=1..2" {
		t.Errorf("spec.spec.a: %v, %v", rs, err)
	}
	if rs, err := ParseValueRanges("none"); err != nil || rs != nil {
		t.Errorf("none: %v, %v", rs, err)
	}
	// A range checked on some listeners only.
	rs, err = ParseValueRanges("a=1..2\ton=HTTP, HTTPS; b=3..4")
	if err != nil || ValueRangesString(rs) != "a=1..2 on=HTTP,HTTPS; b=3..4" || !reflect.DeepEqual(rs[0].On, []string{"HTTP", "HTTPS"}) {
		t.Errorf("on=: %v, %v", rs, err)
	}
	for v, msg := range map[string]string{
		"":                     "names no entry",
		"a=1":                  "is not <path>=<min>..<max>",
		"a=x..2":               `minimum "x" is not a whole number`,
		"a=1..1Ki":             `maximum "1Ki" is not a whole number`,
		"a=5..1":               "minimum 5 is above maximum 1",
		"a..b=1..2":            "dotted path",
		"a=1..2 on=":           "on=: want listener protocols",
		"a=1..2 on=HTTP extra": "on=HTTP extra: want listener protocols",
		"a=1..2 on=H.T":        "on=H.T: want listener protocols",
	} {
		if _, err := ParseValueRanges(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error saying %q", v, err, msg)
		}
	}
}

// Quantities as strings or numbers, in lists and objects; absent and null
// are not checked.
func TestOutOfRange(t *testing.T) {
	rs, err := ParseValueRanges("connection.bufferLimit=0..4294967295; rules[].size=1024..2048; limits[]=1..10")
	if err != nil {
		t.Fatal(err)
	}
	k := routeKind(t, Spec{ValueRanges: rs})
	if k.Origins[SettingValueRanges] != FromGo {
		t.Errorf("origin %q", k.Origins[SettingValueRanges])
	}
	p := &Policy{Kind: k, Spec: map[string]any{
		"connection": map[string]any{"bufferLimit": "1T"},
		"rules": []any{
			map[string]any{"size": "1Ki"}, // 1024: in range
			map[string]any{"size": int64(4096)},
			map[string]any{"size": "2.5"},  // not whole
			map[string]any{"size": "lots"}, // not a quantity
			map[string]any{"size": nil},    // null: not checked
			map[string]any{},               // absent
			map[string]any{"size": float64(2048)},
			map[string]any{"size": uint16(2049)},
		},
		"limits": []any{int64(0), "10"},
	}}
	want := []FieldProblem{
		{Field: "spec.connection.bufferLimit", Message: "1T is out of range, must be between 0 and 4294967295"},
		{Field: "spec.rules[1].size", Message: "4096 is out of range, must be between 1024 and 2048"},
		{Field: "spec.rules[2].size", Message: "2.5 is not a whole number (of bytes, or of the field's unit) that fits in 64 bits"},
		{Field: "spec.rules[3].size", Message: `"lots" is not a quantity`},
		{Field: "spec.rules[7].size", Message: "2049 is out of range, must be between 1024 and 2048"},
		{Field: "spec.limits[0]", Message: "0 is out of range, must be between 1 and 10"},
	}
	if got := p.OutOfRange(); !reflect.DeepEqual(got, want) {
		t.Errorf("OutOfRange =\n%v\nwant\n%v", got, want)
	}
	p.Spec = map[string]any{"connection": map[string]any{"bufferLimit": "4Gi"}}
	if got := p.OutOfRange(); len(got) != 1 || got[0].Message != "4Gi is out of range, must be between 0 and 4294967295" {
		t.Errorf("4Gi (one above the maximum): %v", got)
	}
	p.Spec = map[string]any{"connection": map[string]any{"bufferLimit": float64(4294967296)}}
	if got := p.OutOfRange(); len(got) != 1 || got[0].Message != "4294967296 is out of range, must be between 0 and 4294967295" {
		t.Errorf("a float64 one above the maximum: %v", got)
	}
	p.Spec = map[string]any{"connection": map[string]any{"bufferLimit": "4294967295"}}
	if got := p.OutOfRange(); len(got) != 0 {
		t.Errorf("the maximum itself: %v", got)
	}
}

// A protocol written in another case than Gateway API's never matches a
// listener: refused, naming the right one; an implementation's own
// protocol is taken as written.
func TestOnProtocolsCase(t *testing.T) {
	if _, err := ParseValueRanges("a=0..1 on=HTTP,http"); err == nil || !strings.Contains(err.Error(), "listener protocols are matched as written: HTTP, not http") {
		t.Errorf("value range on=http: %v", err)
	}
	if _, err := ParseObjectRefs("ca kinds=Secret on=Tls"); err == nil || !strings.Contains(err.Error(), "TLS, not Tls") {
		t.Errorf("object ref on=Tls: %v", err)
	}
	if _, err := ParseValueRanges("a=0..1 on=HTTP,QUICish"); err != nil {
		t.Errorf("an implementation's own protocol: %v", err)
	}
}
