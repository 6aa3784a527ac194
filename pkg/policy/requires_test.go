package policy

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

// The annotation's grammar, its errors, and the check of a policy against
// a spec.
func TestRequirements(t *testing.T) {
	v := "spec.geo[] requires ClientTrafficPolicy.gateway.envoyproxy.io:detect.a|detect.b; geo[] excludes ClientTrafficPolicy.gateway.envoyproxy.io:detect.a.cidrs; geo[].city requires parameters:geoIP.provider.maxMind.cityDbSource"
	rs, err := ParseRequirements(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := RequirementsString(rs); got != "geo[] requires ClientTrafficPolicy.gateway.envoyproxy.io:detect.a|detect.b; geo[] excludes ClientTrafficPolicy.gateway.envoyproxy.io:detect.a.cidrs; geo[].city requires parameters:geoIP.provider.maxMind.cityDbSource" {
		t.Errorf("RequirementsString = %q", got)
	}
	for bad, msg := range map[string]string{
		"geo[] needs parameters:geoIP.provider":                        "is not <path> requires|excludes",
		"geo[] requires parameters":                                    `"parameters" is not <where>:<path>`,
		"geo[] requires Thing:x":                                       "is neither \"parameters\" nor a policy kind as Kind.group",
		"geo[] requires parameters:telemetry.x":                        `attache does not read "telemetry.x" of the data plane's parameters`,
		"geo[] requires parameters:geoIP.providerX":                    `attache does not read "geoIP.providerX"`,
		"geo[] requires X.y:a..b":                                      "is not a dotted path below spec",
		"a..b requires X.y:a":                                          "is not a dotted path below spec",
		"geo[] requires X.y:a on=":                                     `"on=" is not on=<protocol>,...`,
		"geo[] requires X.y:a when=x":                                  `"when=x" is not on=<protocol>,...`,
		"geo[] requires X.y:a on=http":                                 "HTTP, not http",
		"geo[] requires parameters:geoIP.provider on=HTTP":             "on= reads listeners",
		"geo[] requires X.y:a reason=Nope":                             "reason= is for requirements on the parameters",
		"geo[] requires parameters:geoIP.provider reason=Not-A-Reason": "is not a condition reason",
		"geo[] requires parameters:geoIP.provider reason=A reason=B":   "reason= is given twice",
		"geo[] requires X.y:a on=HTTP on=TCP":                          "on= is given twice",
		"geo[] requires parameters:geoIP.provider reason=":             `"reason=" is not on=<protocol>,..., reason=<Reason>, without-parameters=unmet|unmet-at-gateways nor service=<type>`,
		// Values, without-parameters=, service= (session 30).
		"geo[] requires X.y:a=true":                                   "values, without-parameters= and service= are for requirements on the parameters",
		"geo[] requires X.y:a without-parameters=unmet":               "values, without-parameters= and service= are for requirements on the parameters",
		"geo[] requires parameters:waf.enable without-parameters=yes": "without-parameters=yes: want unmet or unmet-at-gateways",
		"geo[] requires parameters:dnsResolver service=ClusterIP":     "service=ClusterIP: attache reads of a Service's type only whether it is ExternalName",
		"geo[] requires parameters:waf.enable=a=b":                    `value "a=b" holds`,
	} {
		if _, err := ParseRequirements(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRequirements(%q) = %v, want an error saying %q", bad, err, msg)
		}
	}
	on, err := ParseRequirements("geo[] requires X.y:spec.spec.b on=HTTP,HTTPS")
	if err != nil || len(on) != 1 || len(on[0].On) != 2 || on[0].Any[0] != "spec.b" {
		t.Fatalf("on= requirement: %+v, %v", on, err)
	}
	if got := RequirementsString(on); got != "geo[] requires X.y:spec.spec.b on=HTTP,HTTPS" {
		t.Errorf("RequirementsString = %q (a path starting with spec keeps its prefix)", got)
	}
	// reason=, on the parameters: kept, rendered, and given to the
	// problems of an unmet requirement.
	withReason, err := ParseRequirements("spec.tracing requires parameters:telemetry.exporter.endpoint reason=NginxProxyConfigNotSet")
	if err != nil || len(withReason) != 1 || withReason[0].Reason != "NginxProxyConfigNotSet" {
		t.Fatalf("reason= requirement: %+v, %v", withReason, err)
	}
	if got := RequirementsString(withReason); got != "tracing requires parameters:telemetry.exporter.endpoint reason=NginxProxyConfigNotSet" {
		t.Errorf("RequirementsString = %q", got)
	}
	traced := &Policy{Kind: routeKind(t, Spec{Requirements: withReason}), Spec: map[string]any{"tracing": map[string]any{"strategy": "parent"}}}
	if got := traced.Unmet(withReason, nil, "it"); len(got) != 1 || got[0].Reason != "NginxProxyConfigNotSet" {
		t.Errorf("Unmet = %+v, want one problem with the reason", got)
	}
	// A value to hold (NGF's waf.enable: true), a data plane without
	// parameters, a Service type: kept and rendered; a value is read as
	// text, any other value (or none, or an object) does not meet it.
	waf, err := ParseRequirements("spec.type requires parameters:spec.waf.enable=true|dnsResolver reason=NginxProxyConfigNotSet without-parameters=unmet-at-gateways service=ExternalName")
	if err != nil || len(waf) != 1 || waf[0].WithoutParameters != WithoutParametersUnmetAtGateways || waf[0].ServiceType != "ExternalName" ||
		strings.Join(waf[0].Values, ",") != "true," {
		t.Fatalf("values requirement: %+v, %v", waf, err)
	}
	if got := RequirementsString(waf); got != "type requires parameters:waf.enable=true|dnsResolver reason=NginxProxyConfigNotSet without-parameters=unmet-at-gateways service=ExternalName" {
		t.Errorf("RequirementsString = %q", got)
	}
	enable := waf[0]
	enable.Any, enable.Values = enable.Any[:1], enable.Values[:1]
	typed := &Policy{Kind: routeKind(t, Spec{}), Spec: map[string]any{"type": "HTTP"}}
	for _, c := range []struct {
		name   string
		params map[string]any
		unmet  bool
	}{
		{"true", map[string]any{"waf": map[string]any{"enable": true}}, false},
		{"false", map[string]any{"waf": map[string]any{"enable": false}}, true},
		{"the string true", map[string]any{"waf": map[string]any{"enable": "true"}}, false},
		{"unset", map[string]any{"waf": map[string]any{}}, true},
		{"an object", map[string]any{"waf": map[string]any{"enable": map[string]any{"x": true}}}, true},
		{"no parameters", nil, true},
	} {
		got := typed.Unmet([]Requirement{enable}, c.params, "the proxy")
		if (len(got) > 0) != c.unmet {
			t.Errorf("waf.enable %s: Unmet = %+v, want unmet %v", c.name, got, c.unmet)
		}
		if len(got) > 0 && got[0].Message != "requires spec.waf.enable=true of the proxy" {
			t.Errorf("waf.enable %s: message %q", c.name, got[0].Message)
		}
	}
	// service=: applies where the reference names a Service of the type.
	pp := ParseRequirementsMust(t, "processors[].extProcess.backendRef requires parameters:dnsResolver service=ExternalName")[0]
	external := func(ref topology.Ref, typ string) bool {
		return ref.Name == "ext" && ref.Namespace == "ns" && typ == "ExternalName"
	}
	for _, c := range []struct {
		ref  map[string]any
		want bool
	}{
		{map[string]any{"name": "ext"}, true},
		{map[string]any{"name": "ext", "kind": "Service", "group": "core"}, true},
		{map[string]any{"name": "ext", "namespace": "other"}, false},
		{map[string]any{"name": "cluster"}, false},
		{map[string]any{"name": "ext", "kind": "Backend", "group": "example.com"}, false},
	} {
		spec := map[string]any{"processors": []any{map[string]any{"extProcess": map[string]any{"backendRef": c.ref}}}}
		if got := pp.NamesService(spec, "ns", external); got != c.want {
			t.Errorf("NamesService(%v) = %v, want %v", c.ref, got, c.want)
		}
	}
	if !(Requirement{Path: "a", Any: []BackendRefPath{"b"}}).NamesService(nil, "ns", external) {
		t.Error("a requirement without service= does not apply")
	}
	if !routeKind(t, Spec{Requirements: []Requirement{pp}}).RequirementsNameServices() {
		t.Error("RequirementsNameServices is false for a service= requirement")
	}
	k := routeKind(t, Spec{Requirements: append(rs, on...)})
	if !k.ReadsDataPlanes() || !k.RequirementsOnListeners() {
		t.Error("a kind requiring parameters, on some listeners, does not read data planes or listeners")
	}
	ctp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"}
	if n := len(k.RequirementsOf(ctp)); n != 2 {
		t.Errorf("%d requirements of ClientTrafficPolicy, want 2", n)
	}
	p := &Policy{Kind: k, Spec: map[string]any{"geo": []any{map[string]any{"country": "US"}, map[string]any{"city": "X"}}}}
	for _, c := range []struct {
		name string
		spec map[string]any
		want string
	}{
		{"none", nil, "spec.geo[0]: requires spec.detect.a or spec.detect.b of it"},
		{"b", map[string]any{"detect": map[string]any{"b": map[string]any{}}}, ""},
		{"a with cidrs", map[string]any{"detect": map[string]any{"a": map[string]any{"cidrs": []any{"x"}}}}, "spec.geo[0]: does not work with spec.detect.a.cidrs of it"},
		{"a, cidrs null", map[string]any{"detect": map[string]any{"a": map[string]any{"cidrs": nil}}}, ""},
	} {
		var got []string
		for _, b := range p.Unmet(k.RequirementsOf(ctp), c.spec, "it") {
			got = append(got, b.Field+": "+b.Message)
		}
		if strings.Join(got, "; ") != c.want {
			t.Errorf("%s: Unmet = %q, want %q", c.name, got, c.want)
		}
	}
	got := p.Unmet(k.RequirementsOf(topology.GroupKind{}), map[string]any{"geoIP": map[string]any{"provider": map[string]any{}}}, "the proxy")
	if len(got) != 1 || got[0].Field != "spec.geo[1].city" {
		t.Errorf("parameters Unmet = %+v, want the city entry", got)
	}
	// A policy holding nothing at the path needs nothing.
	if got := (&Policy{Kind: k, Spec: map[string]any{"geo": []any{}}}).Unmet(k.Requirements, nil, "x"); got != nil {
		t.Errorf("Unmet without a value = %v", got)
	}
}

// ParseRequirementsMust is ParseRequirements, failing the test on an error.
func ParseRequirementsMust(t *testing.T, v string) []Requirement {
	t.Helper()
	rs, err := ParseRequirements(v)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
