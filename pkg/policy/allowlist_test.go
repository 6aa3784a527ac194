package policy

import (
	"strings"
	"testing"
)

// The annotation's grammar, its errors, and the check of a policy's
// values against what the data plane's parameters hold.
func TestAllowlists(t *testing.T) {
	as, err := ParseAllowlists(" spec.dynamicModule[].name = spec.dynamicModules[].name ")
	if err != nil {
		t.Fatal(err)
	}
	if got := AllowlistsString(as); got != "dynamicModule[].name=dynamicModules[].name" {
		t.Errorf("AllowlistsString = %q", got)
	}
	for v, msg := range map[string]string{
		"dynamicModule[].name":                 "is not <path>=<parameters path>",
		"dynamicModule[].name=telemetry":       `attache does not read "telemetry" of the data plane's parameters (it reads dynamicModules[].name, geoIP.provider, luaValidation, routingType, telemetry.exporter.endpoint, telemetry.disabledFeatures[], waf.enable, dnsResolver)`,
		"a..b=dynamicModules[].name":           "is not a dotted path below spec",
		";":                                    "names no entry",
		"x=dynamicModules[].name; y=spec.nope": `attache does not read "nope"`,
	} {
		if _, err := ParseAllowlists(v); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseAllowlists(%q) = %v, want an error saying %q", v, err, msg)
		}
	}
	k := routeKind(t, Spec{Allowlists: as})
	if !k.ReadsDataPlanes() {
		t.Error("a kind with allowlists does not read data planes")
	}
	p := &Policy{Kind: k, Spec: map[string]any{"dynamicModule": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": int64(3)}, "junk"}}}
	var asked []BackendRefPath
	got := p.NotAllowed(func(in BackendRefPath) []string { asked = append(asked, in); return []string{"a", "3"} })
	if len(got) != 1 || got[0].Field != "spec.dynamicModule[1].name" || got[0].Message != `"b" is not among spec.dynamicModules[].name` {
		t.Errorf("NotAllowed = %+v, want b alone", got)
	}
	if len(asked) != 1 || asked[0] != "dynamicModules[].name" {
		t.Errorf("asked for %v", asked)
	}
	// No values: nothing asked, nothing wrong.
	none := &Policy{Kind: k, Spec: map[string]any{}}
	if got := none.NotAllowed(func(BackendRefPath) []string { t.Error("asked without values"); return nil }); got != nil {
		t.Errorf("NotAllowed without values = %v", got)
	}
}
