package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
)

// A kind's CEL rules (attache.dev/validations): a policy for which one
// does not hold is Invalid in place (it keeps its route, whose requests
// get the kind's failure status, and the Gateway's policy does not apply
// there), its ancestor's message and problem naming the rule's field and
// message; one whose evaluation fails is Invalid too, naming the rule; a
// policy keeping every rule is Accepted.
func TestValidationsInPlace(t *testing.T) {
	btp := strings.Replace(crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies"),
		"metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}",
		`metadata:
  name: backendtrafficpolicies.gateway.envoyproxy.io
  annotations:
    attache.dev/validations: |
      - rule: "!has(self.timeout) || !has(self.timeout.http) || self.timeout.http.requestTimeout != '0s'"
        message: a request timeout of 0s is not allowed
        fieldPath: .timeout.http.requestTimeout
      - rule: "!has(self.retry) || self.retry.numRetries >= 0"
        fieldPath: .retry`, 1)
	res := compute(t, engine.Options{}, btp, egTopo,
		pol(egV, "BackendTrafficPolicy", "gw", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
timeout: {http: {requestTimeout: 5s}}`),
		pol(egV, "BackendTrafficPolicy", "route", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
timeout: {http: {requestTimeout: 0s}}`),
		pol(egV, "BackendTrafficPolicy", "no-key", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}]
retry: {perRetry: {timeout: 1s}}`))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "route", status(t, res, "route", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "route"); !strings.Contains(msg, "values its implementation refuses: spec.timeout.http.requestTimeout: a request timeout of 0s is not allowed") {
		t.Errorf("route: ancestor message %q", msg)
	}
	wantProblem(t, res, "route", "spec.timeout.http.requestTimeout", "value refused by its implementation: a request timeout of 0s is not allowed")
	// In place: the route's spec, not the Gateway's timeout; its requests
	// fail.
	want(t, "effective r1", effective(t, res, "BackendTrafficPolicy", rule("r1", "first")),
		[]string{`{"timeout":{"http":{"requestTimeout":"0s"}}}`})
	if len(policyStatusOf(t, res, "route").InPlaceInvalid) != 1 {
		t.Errorf("route InPlaceInvalid = %v, want its route", policyStatusOf(t, res, "route").InPlaceInvalid)
	}
	// A rule whose evaluation fails (no such key) does not hold either.
	want(t, "no-key", status(t, res, "no-key", "Accepted"), "False/Invalid")
	wantProblem(t, res, "no-key", "spec.retry", `value refused by its implementation: rule validations[1] "!has(self.retry) || self.retry.numRetries >= 0" could not be evaluated: no such key: numRetries`)
}

// A rule judged at some listeners only (listenerProtocols): Envoy
// Gateway checks a ClientTrafficPolicy's cipher suites for the listeners
// that terminate TLS; a policy naming one it does not support is Invalid
// at a Gateway with an HTTPS listener and at that listener, Accepted at a
// Gateway with plain HTTP listeners and at its plain listener.
func TestValidationsOnListeners(t *testing.T) {
	ctp := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	gws := gatewayDoc("plain", "eg", "[{name: http, protocol: HTTP, port: 80}]", "") +
		gatewayDoc("mixed", "eg", "[{name: http, protocol: HTTP, port: 80}, "+httpsListener+"]", "")
	target := gatewayTarget
	bad := "tls: {ciphers: [ECDHE-RSA-AES128-GCM-SHA256, INVALID-CIPHER]}"
	res := compute(t, engine.Options{}, ctp, gws,
		pol(egV, "ClientTrafficPolicy", "on-plain", 0, target("plain", "")+bad),
		pol(egV, "ClientTrafficPolicy", "on-mixed-http", 1, target("mixed", "http")+bad),
		pol(egV, "ClientTrafficPolicy", "on-mixed-https", 2, target("mixed", "https")+bad),
		pol(egV, "ClientTrafficPolicy", "fine-on-https", 3, target("mixed", "https")+"tls: {ciphers: [TLS_RSA_WITH_AES_128_CBC_SHA]}"))
	for name, w := range map[string]string{
		"on-plain":       "True/Accepted",
		"on-mixed-http":  "True/Accepted",
		"on-mixed-https": "False/Invalid",
	} {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
	if msg := ancestorMessage(t, res, "on-mixed-https"); !strings.Contains(msg, "values its implementation refuses: spec.tls.ciphers: names a cipher suite Envoy Gateway does not support") {
		t.Errorf("on-mixed-https: message %q", msg)
	}
	wantProblem(t, res, "on-mixed-https", "spec.tls.ciphers", "names a cipher suite Envoy Gateway does not support")
	// A newer policy on that listener, whose ciphers are fine, is
	// Conflicted there (the older one wins), not Invalid.
	want(t, "fine-on-https", status(t, res, "fine-on-https", "Accepted"), "False/Conflicted")
	// On the whole mixed Gateway, which has an HTTPS listener: refused.
	res = compute(t, engine.Options{}, ctp, gws, pol(egV, "ClientTrafficPolicy", "on-mixed", 0, target("mixed", "")+bad))
	want(t, "on-mixed", status(t, res, "on-mixed", "Accepted"), "False/Invalid")
}

// routeOnListener is an HTTPRoute attached to listener section of
// Gateway gw, with hostnames (a YAML list) and one rule of the given
// matches (a YAML list).
func routeOnListener(name, gw, section, hostnames, matches string) string {
	return "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: " + name + ", namespace: default}\n" +
		"spec: {parentRefs: [{name: " + gw + ", sectionName: " + section + "}], hostnames: " + hostnames +
		", rules: [{matches: " + matches + ", backendRefs: [{name: svc, port: 80}]}]}\n"
}

// Rules reading listener: Envoy Gateway's HTTP/1.0 default host needs the
// listener's exact hostname or exactly one exact hostname among its
// routes (one per hostname and rule match; a route hostname under a
// wildcard listener's counts); a route without hostnames serves the
// listener's or any. A policy on a listener with none, or with more than
// one, is Invalid there, naming the listener; on the whole Gateway,
// Invalid when one of its listeners fails.
func TestValidationsReadingListener(t *testing.T) {
	ctp := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	topo := gatewayDoc("gw", "eg", `[{name: exact, protocol: HTTP, port: 8080, hostname: www.example.com},
  {name: none, protocol: HTTP, port: 8081}, {name: one, protocol: HTTP, port: 8082},
  {name: two, protocol: HTTP, port: 8083}, {name: wild, protocol: HTTP, port: 8084, hostname: "*.example.com"},
  {name: any, protocol: HTTP, port: 8085}]`, "") +
		routeOnListener("r-one", "gw", "one", "[a.example.com]", "[{path: {value: /}}]") +
		routeOnListener("r-two", "gw", "two", "[b.example.com]", "[{path: {value: /a}}, {path: {value: /b}}]") +
		routeOnListener("r-wild", "gw", "wild", `["*.com", c.example.com]`, "[]") +
		routeOnListener("r-any", "gw", "any", "[]", "[]")
	http10 := "http1: {http10: {useDefaultHost: true}}"
	var pols []string
	for i, l := range []string{"exact", "none", "one", "two", "wild", "any"} {
		pols = append(pols, pol(egV, "ClientTrafficPolicy", "on-"+l, i, gatewayTarget("gw", l)+http10))
	}
	pols = append(pols, pol(egV, "ClientTrafficPolicy", "without", 9, gatewayTarget("gw", "none")+"http1: {http10: {}}"))
	res := compute(t, engine.Options{}, append([]string{ctp, topo}, pols...)...)
	for name, w := range map[string]string{
		"on-exact": "True/Accepted", "on-one": "True/Accepted", "on-wild": "True/Accepted",
		"on-none": "False/Invalid", "on-two": "False/Invalid", "on-any": "False/Invalid",
	} {
		want(t, name, status(t, res, name, "Accepted"), w)
	}
	wantProblem(t, res, "on-none", "spec.http1.http10.useDefaultHost",
		"value refused by its implementation: the listener has no exact hostname, nor does any route attached to it, so there is no default host to take (at listener Gateway default/gw#none)")
	wantProblem(t, res, "on-two", "spec.http1.http10.useDefaultHost",
		"value refused by its implementation: the listener has no exact hostname and its routes offer more than one (one per exact hostname and rule match), so there is no one default host to take (at listener Gateway default/gw#two)")
	// Without useDefaultHost nothing is asked; the older on-none is
	// Invalid in place, so this one is Conflicted by it at most, never
	// Invalid.
	if got := status(t, res, "without", "Accepted"); got == "False/Invalid" {
		t.Errorf("without: %s, want not Invalid", got)
	}
	// On the whole Gateway: none, two and any fail.
	res = compute(t, engine.Options{}, ctp, topo, pol(egV, "ClientTrafficPolicy", "whole", 0, gatewayTarget("gw", "")+http10))
	want(t, "whole", status(t, res, "whole", "Accepted"), "False/Invalid")
	for _, l := range []string{"none", "two", "any"} {
		if msg := ancestorMessage(t, res, "whole"); !strings.Contains(msg, "(at listener Gateway default/gw#"+l+")") {
			t.Errorf("whole: message %q does not name listener %s", msg, l)
		}
	}
}

// A rule of one's own reading listener (attache.dev/validations): it sees
// the listener's name, port and routes (kind, namespace, name, and the
// hostnames they serve there: those the listener's admits, narrowed to it,
// each once); it is judged at each listener of its protocols at the
// target, not elsewhere.
func TestValidationsReadingListenerAnnotation(t *testing.T) {
	k := declaredCRD("example.com", "LimitPolicy", "limitpolicies", "Direct",
		`attache.dev/target-kinds: Gateway`,
		`attache.dev/validations: '[{rule: "listener.routes.all(r, r.kind == ''HTTPRoute'' && r.namespace == ''default'' && r.name != ''r-'' + listener.name) || listener.port != 8082", message: "no route named after its listener on 8082", listenerProtocols: [HTTP]},
      {rule: "listener.name != ''narrow'' || listener.routes.all(r, r.hostnames == [''z.example.com''])", message: "narrowed", listenerProtocols: [HTTP]}]'`)
	topo := gatewayDoc("gw", "eg", "[{name: one, protocol: HTTP, port: 8082}, {name: two, protocol: HTTP, port: 8083}, {name: narrow, protocol: HTTP, port: 8084, hostname: z.example.com}]", "") +
		routeOnListener("r-narrow", "gw", "narrow", `["*.example.com", z.example.com, other.io]`, "[]") +
		gatewayDoc("tls", "eg", "[{name: x, protocol: HTTPS, port: 8082, tls: {certificateRefs: [{name: cert}]}}]", "") +
		routeOnListener("r-one", "gw", "one", "[]", "[]") + routeOnListener("r-two", "gw", "two", "[]", "[]") +
		routeOnListener("r-x", "tls", "x", "[]", "[]")
	res := compute(t, engine.Options{}, k, topo,
		pol("example.com/v1", "LimitPolicy", "on-gw", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n"),
		pol("example.com/v1", "LimitPolicy", "on-tls", 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: tls}]\n"))
	want(t, "on-gw", status(t, res, "on-gw", "Accepted"), "False/Invalid")
	wantProblem(t, res, "on-gw", "spec", "value refused by its implementation: no route named after its listener on 8082 (at listener Gateway default/gw#one)")
	if msg := ancestorMessage(t, res, "on-gw"); strings.Contains(msg, "narrowed") {
		t.Errorf("on-gw: route hostnames not narrowed to the listener's once each: %q", msg)
	}
	// An HTTPS listener is not among the rule's protocols.
	want(t, "on-tls", status(t, res, "on-tls", "Accepted"), "True/Accepted")
}

// Listener facts as Envoy Gateway computes a listener's hosts: a route's
// hostname that another listener on the same port declares is that
// listener's, not served here. (Policies on the whole Gateway: one on a
// listener sharing its port is refused there.)
func TestValidationsReadingListenerSamePort(t *testing.T) {
	ctp := crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")
	listeners := `[{name: wild, protocol: HTTP, port: 80, hostname: "*.example.com"}, {name: exact, protocol: HTTP, port: 80, hostname: www.example.com}]`
	topo := gatewayDoc("two-left", "eg", listeners, "") + gatewayDoc("none-left", "eg", listeners, "") +
		routeOnListener("r-two", "two-left", "wild", "[www.example.com, foo.example.com]", "[]") +
		routeOnListener("r-one", "none-left", "wild", "[www.example.com]", "[]")
	http10 := "http1: {http10: {useDefaultHost: true}}"
	res := compute(t, engine.Options{}, ctp, topo,
		pol(egV, "ClientTrafficPolicy", "two-left", 0, gatewayTarget("two-left", "")+http10),
		pol(egV, "ClientTrafficPolicy", "none-left", 1, gatewayTarget("none-left", "")+http10))
	// foo.example.com only: one default host.
	want(t, "two-left", status(t, res, "two-left", "Accepted"), "True/Accepted")
	// www.example.com is the exact listener's: none left.
	want(t, "none-left", status(t, res, "none-left", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "none-left"); !strings.Contains(msg, "nor does any route attached to it") || !strings.Contains(msg, "#wild)") {
		t.Errorf("none-left: message %q", msg)
	}
}

// A policy on a whole Gateway is judged at the listeners it lands on: not
// at one another policy of its kind targets (Envoy Gateway translates a
// Gateway's policy for the sections no section policy claimed). Taking the
// section policy away (Incremental) judges the listener again.
func TestValidationsReadingListenerClaimedSections(t *testing.T) {
	objs := decodeDocs(t, crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		gatewayDoc("gw", "eg", "[{name: none, protocol: HTTP, port: 8081}, {name: exact, protocol: HTTP, port: 8080, hostname: www.example.com}]", ""),
		pol(egV, "ClientTrafficPolicy", "section", 0, gatewayTarget("gw", "none")+"http1: {http10: {}}"),
		pol(egV, "ClientTrafficPolicy", "whole", 1, gatewayTarget("gw", "")+"http1: {http10: {useDefaultHost: true}}"))
	in := engine.NewIncremental(engine.Options{})
	res := in.Compute(objs)
	want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
	want(t, "section", status(t, res, "section", "Accepted"), "True/Accepted")
	res = in.Compute(append(objs[:2:2], objs[3]))
	want(t, "whole without the section policy", status(t, res, "whole", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "whole"); !strings.Contains(msg, "(at listener Gateway default/gw#none)") {
		t.Errorf("whole: message %q", msg)
	}
}

// Envoy Gateway's EnvoyExtensionPolicy profile: an inline Lua script
// that defines neither envoy_on_request nor envoy_on_response is refused
// whatever the EnvoyProxy's luaValidation (luavalidator.Validate checks
// the text first), so the policy is Invalid in place; a script defining
// one, or a script from a ConfigMap, is not judged so.
func TestEGLuaEntryPoints(t *testing.T) {
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true, From: "--feature"}}}
	// One policy a target: the route's rules and the Gateway.
	lua := func(name, target, entries string) string {
		return pol(egV, "EnvoyExtensionPolicy", name, 0, "targetRefs: ["+target+"]\nlua: ["+entries+"]")
	}
	res := compute(t, on, crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"), egTopo,
		lua("none", "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}", `{type: Inline, inline: "function on_request(h) end"}`),
		lua("request", "{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}", `{type: Inline, inline: "function envoy_on_request(h) end"}`),
		lua("second", "{group: gateway.networking.k8s.io, kind: Gateway, name: g1}", `{type: Inline, inline: "function envoy_on_response(h) end"}, {type: Inline, inline: "local x = 1"}`))
	want(t, "none", status(t, res, "none", "Accepted"), "False/Invalid")
	wantProblem(t, res, "none", "spec.lua", "value refused by its implementation: an inline Lua script must define envoy_on_request() or envoy_on_response()")
	want(t, "request", status(t, res, "request", "Accepted"), "True/Accepted")
	want(t, "second", status(t, res, "second", "Accepted"), "False/Invalid")
}

// An inline Lua script that does not parse is refused where the EnvoyProxy
// the Gateway runs with validates Lua (Strict, the default, or
// InsecureSyntax), not where it says luaValidation: Disabled: the policy
// on both Gateways is Invalid at the first only, and a route attached to
// both fails through the first only.
func TestEGLuaSyntaxPerGateway(t *testing.T) {
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true, From: "--feature"}}}
	const bad = `{type: Inline, inline: "function envoy_on_response(h)\n  if 1 > 0\n  end\nend"}`
	res := compute(t, on, crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"),
		classDoc("strict", egController, "sys/strict")+classDoc("lax", egController, "sys/lax"),
		envoyProxyDoc("sys", "strict", "{}"), envoyProxyDoc("sys", "lax", "{luaValidation: Disabled}"),
		gatewayDoc("gs", "strict", "[{name: http, protocol: HTTP, port: 80}]", ""),
		gatewayDoc("go", "lax", "[{name: http, protocol: HTTP, port: 80}]", ""),
		pol(egV, "EnvoyExtensionPolicy", "bad-lua", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gs}, {group: gateway.networking.k8s.io, kind: Gateway, name: go}]\nlua: ["+bad+"]"))
	want(t, "bad-lua ancestors", ancestorsOf(t, res, "bad-lua"), []string{
		"Gateway.gateway.networking.k8s.io default/go=Accepted",
		"Gateway.gateway.networking.k8s.io default/gs=Invalid",
	})
	for _, a := range policyStatusOf(t, res, "bad-lua").Ancestors {
		if a.Ref.Name != "gs" {
			continue
		}
		if msg := a.Conditions[0].Message; !strings.Contains(msg, "spec.lua[0].inline: Lua does not parse: ") || !strings.Contains(msg, "(EnvoyProxy sys/strict checks it), which Gateway default/gs runs with") {
			t.Errorf("bad-lua at gs: message %q", msg)
		}
	}
}

// Envoy Gateway's Strict Lua validation (the default): a script calling
// what Envoy's Lua API lacks is refused where the EnvoyProxy the Gateway
// runs with validates Strict, not where it says InsecureSyntax (which
// only parses) or Disabled; likewise a script from a ConfigMap (its text
// kept by holderdata), and one there naming no entry point is refused
// whatever the mode.
func TestEGLuaStrictPerGateway(t *testing.T) {
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true, From: "--feature"}}}
	const unknown = `{type: Inline, inline: "function envoy_on_response(h) h:headers():unknownApi() end"}`
	targets := "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gs}, {group: gateway.networking.k8s.io, kind: Gateway, name: gi}, {group: gateway.networking.k8s.io, kind: Gateway, name: gd}]\n"
	cm := func(name, key, script string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata:\n  %s: %q\n", name, key, script)
	}
	base := []string{crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"),
		classDoc("strict", egController, "sys/strict") + classDoc("insecure", egController, "sys/insecure") + classDoc("disabled", egController, "sys/disabled"),
		envoyProxyDoc("sys", "strict", "{luaValidation: Strict}"), envoyProxyDoc("sys", "insecure", "{luaValidation: InsecureSyntax}"),
		envoyProxyDoc("sys", "disabled", "{luaValidation: Disabled}"),
		gatewayDoc("gs", "strict", "[{name: http, protocol: HTTP, port: 80}]", ""),
		gatewayDoc("gi", "insecure", "[{name: http, protocol: HTTP, port: 80}]", ""),
		gatewayDoc("gd", "disabled", "[{name: http, protocol: HTTP, port: 80}]", ""),
		cm("script", "lua", "function envoy_on_request(h) h:logInfo(nil) end"),
		cm("only", "filter.lua", "function envoy_on_request(h) h:logInfo('fine') end"),
		cm("noentry", "lua", "print('no entry point')")}
	policies := map[string]string{
		"inline":     pol(egV, "EnvoyExtensionPolicy", "inline", 0, targets+"lua: ["+unknown+"]"),
		"from-cm":    pol(egV, "EnvoyExtensionPolicy", "from-cm", 0, targets+"lua: [{type: ValueRef, valueRef: {group: \"\", kind: ConfigMap, name: script}}]"),
		"fine-cm":    pol(egV, "EnvoyExtensionPolicy", "fine-cm", 0, targets+"lua: [{type: ValueRef, valueRef: {group: \"\", kind: ConfigMap, name: only}}]"),
		"noentry-cm": pol(egV, "EnvoyExtensionPolicy", "noentry-cm", 0, targets+"lua: [{type: ValueRef, valueRef: {group: \"\", kind: ConfigMap, name: noentry}}]"),
	}
	results := map[string]*engine.Result{}
	for name, doc := range policies {
		results[name] = compute(t, on, append(slices.Clone(base), doc)...)
	}
	for name, wants := range map[string][]string{
		"inline":     {"default/gd=Accepted", "default/gi=Accepted", "default/gs=Invalid"},
		"from-cm":    {"default/gd=Accepted", "default/gi=Accepted", "default/gs=Invalid"},
		"fine-cm":    {"default/gd=Accepted", "default/gi=Accepted", "default/gs=Accepted"},
		"noentry-cm": {"default/gd=Invalid", "default/gi=Invalid", "default/gs=Invalid"},
	} {
		var full []string
		for _, w := range wants {
			full = append(full, "Gateway.gateway.networking.k8s.io "+w)
		}
		want(t, name+" ancestors", ancestorsOf(t, results[name], name), full)
	}
	for name, says := range map[string]string{
		"inline":     "spec.lua[0].inline: the Lua script fails when run against Envoy's Lua API, as Envoy Gateway's Strict validation runs it: with envoy_on_response: <script>:1: attempt to call a non-function object (EnvoyProxy sys/strict checks it), which Gateway default/gs runs with",
		"from-cm":    "spec.lua[0].valueRef: ConfigMap default/script: the Lua script fails when run against Envoy's Lua API",
		"noentry-cm": "spec.lua[0].valueRef: ConfigMap default/noentry: a Lua script must define envoy_on_request() or envoy_on_response()",
	} {
		for _, a := range policyStatusOf(t, results[name], name).Ancestors {
			if a.Ref.Name == "gs" && !strings.Contains(a.Conditions[0].Message, says) {
				t.Errorf("%s at gs: message %q lacks %q", name, a.Conditions[0].Message, says)
			}
		}
	}
}
