package policy

import (
	"strings"
	"testing"
)

// NGINX sizes: digits and an optional k, m or g in either case; nothing
// else (signs, fractions, other units, overflow).
func TestParseNginxSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"0", 0, true}, {"8k", 8192, true}, {"8K", 8192, true},
		{"16m", 16 << 20, true}, {"1M", 1 << 20, true}, {"2g", 2 << 30, true}, {" 4k ", 4096, true},
		{"", 0, false}, {"k", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1.5k", 0, false},
		{"1kb", 0, false}, {"1t", 0, false}, {"1 k", 0, false},
		{"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775808", 0, false}, {"8589934592g", 0, false},
	} {
		got, err := ParseNginxSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseNginxSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// The validations environment's isNginxSize and nginxSize compare sizes
// written with different units; nginxSize of something else cannot be
// evaluated.
func TestValidationsNginxSize(t *testing.T) {
	vs, err := ParseValidations(`
- {rule: "!isNginxSize(self.a) || !isNginxSize(self.b) || nginxSize(self.a) > nginxSize(self.b)", fieldPath: .a, message: a must be larger}
- {rule: "nginxSize(self.a) >= 0", fieldPath: .a}
`)
	if err != nil {
		t.Fatal(err)
	}
	k := validationsKind(t, vs)
	for _, c := range []struct{ a, b, want string }{
		{"1m", "1023k", ""},
		{"1m", "1024k", "a must be larger"},
		{"1K", "1000", ""},
		{"4k", "8k", "a must be larger"},
		{"1g", "1023m", ""},
		{"x", "8k", `could not be evaluated: nginxSize("x"): not an NGINX size`},
		{"8k", "y", ""},
	} {
		var msgs []string
		for _, v := range parsed(k, map[string]any{"a": c.a, "b": c.b}).Violations() {
			msgs = append(msgs, v.Message)
		}
		got := strings.Join(msgs, "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("a=%s b=%s: %q, want %q", c.a, c.b, got, c.want)
		}
	}
	if _, err := ParseValidations(`[{rule: "nginxSize(1) > 0"}]`); err == nil || !strings.Contains(err.Error(), "does not compile") {
		t.Errorf("nginxSize of an int: %v", err)
	}
}
