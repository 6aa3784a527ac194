package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// refsTopo: Gateway g1 and HTTPRoutes r1..r9 on it; in default a Secret
// oidc (client-secret), a Secret sec (tls.crt only), ConfigMaps lua-any
// (another key) and empty (no data); a Secret s in namespaces other (which
// grants SecurityPolicies from default its Secrets) and nogrant.
func refsTopo() string {
	var b strings.Builder
	b.WriteString(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Secret
metadata: {name: oidc, namespace: default}
data: {client-secret: eA==}
---
apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: default}
data: {tls.crt: eA==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: lua-any, namespace: default}
data: {script.lua: "function envoy_on_response(h) end"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty, namespace: default}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: other}
data: {client-secret: eA==}
---
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: nogrant}
data: {client-secret: eA==}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: secrets, namespace: other}
spec:
  from: [{group: gateway.envoyproxy.io, kind: SecurityPolicy, namespace: default}]
  to: [{group: "", kind: Secret}]
`)
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r%d, namespace: default}\nspec: {parentRefs: [{name: g1}], rules: [{}]}\n", i)
	}
	return b.String()
}

// oidcPolicy is a SecurityPolicy on route whose OIDC client secret is
// clientSecret (a YAML flow object).
func oidcPolicy(name, route, clientSecret string) string {
	return pol(egV, "SecurityPolicy", name, 0, fmt.Sprintf(`targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: %s}]
oidc: {provider: {issuer: "https://idp.example"}, clientID: app, clientSecret: %s}`, route, clientSecret))
}

// Envoy Gateway's profiles name the Secrets and ConfigMaps its translator
// reads: one that is missing, lacks the key read, or sits in a namespace
// that grants nothing makes the policy Invalid at its targets, naming the
// field; the rest are Accepted.
func TestObjectRefs(t *testing.T) {
	sp := crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies")
	eep := crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies")
	btp := crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies")
	// Lua on, as Envoy Gateway's configuration must turn it on (its
	// refusal is TestFeatureGates').
	lua := policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true}}
	res := compute(t, engine.Options{Features: lua}, sp, eep, btp, refsTopo(),
		oidcPolicy("ok", "r1", `{name: oidc}`),
		oidcPolicy("missing", "r2", `{name: absent}`),
		oidcPolicy("nokey", "r3", `{name: sec}`),
		oidcPolicy("granted", "r4", `{name: s, namespace: other}`),
		oidcPolicy("ungranted", "r5", `{name: s, namespace: nogrant}`),
		// Lua: the "lua" key, else any key; group v1 as Envoy Gateway
		// writes the core group there.
		pol(egV, "EnvoyExtensionPolicy", "lua-ok", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r6}]
lua: [{type: ValueRef, valueRef: {group: v1, kind: ConfigMap, name: lua-any}}]`),
		pol(egV, "EnvoyExtensionPolicy", "lua-empty", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r7}]
lua: [{type: Inline, inline: "x"}, {type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: empty}}]`),
		pol(egV, "EnvoyExtensionPolicy", "lua-v1-missing", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r9}]
lua: [{type: ValueRef, valueRef: {group: v1, kind: ConfigMap, name: absent}}]`),
		// Envoy Gateway reads the body's valueRef only for type ValueRef.
		pol(egV, "BackendTrafficPolicy", "inline-body", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r8}]
responseOverride: [{match: {statusCodes: [{value: 500}]}, response: {body: {type: Inline, inline: "x", valueRef: {group: "", kind: ConfigMap, name: absent}}}}]`),
		// A kind the path does not judge (the CRD's schema decides).
		pol(egV, "EnvoyExtensionPolicy", "unjudged", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r8}]
wasm: [{code: {type: Image, image: {url: x, pullSecretRef: {group: example.com, kind: Vault, name: absent}}}}]`),
	)
	for name, w := range map[string]string{
		"ok": "True/Accepted", "missing": "False/Invalid", "nokey": "False/Invalid",
		"granted": "True/Accepted", "ungranted": "False/Invalid",
		"lua-ok": "True/Accepted", "lua-empty": "False/Invalid", "lua-v1-missing": "False/Invalid", "unjudged": "True/Accepted",
		"inline-body": "True/Accepted",
	} {
		want(t, name, ancestorConds(t, res, name)["Accepted"], w)
	}
	for name, msg := range map[string]string{
		"missing":   "spec.oidc.clientSecret: Secret default/absent not found",
		"nokey":     "spec.oidc.clientSecret: Secret default/sec has no key client-secret",
		"ungranted": "spec.oidc.clientSecret: Secret nogrant/s is in another namespace and no ReferenceGrant in namespace nogrant allows SecurityPolicy.gateway.envoyproxy.io from namespace default to name it",
		"lua-empty": "spec.lua[1].valueRef: ConfigMap default/empty has no key lua (nor any other key)",
	} {
		if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) {
			t.Errorf("%s: ancestor message %q does not say %q", name, got, msg)
		}
	}
	// Each is a problem of the policy, naming the field.
	wantProblem(t, res, "missing", "spec.oidc.clientSecret", "Secret default/absent not found")
	for _, k := range res.Kinds {
		if k.GroupKind.Kind == "SecurityPolicy" && !strings.HasPrefix(string(k.Origins["objectRefs"]), "profile") {
			t.Errorf("origin of objectRefs = %q, want profile", k.Origins["objectRefs"])
		}
	}

	// A holder the caller could not read is not judged.
	hidden := func(r topology.Ref) bool { return r.Name == "absent" }
	res = compute(t, engine.Options{Unread: hidden}, sp, refsTopo(), oidcPolicy("missing", "r2", `{name: absent}`))
	want(t, "unread", ancestorConds(t, res, "missing")["Accepted"], "True/Accepted")
}

// The setting from a CRD annotation, on a kind without a profile; "none"
// turns a profile's off.
func TestObjectRefsAnnotation(t *testing.T) {
	annotated := func(v string) string {
		return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: securitypolicies.gateway.envoyproxy.io
  annotations: {attache.dev/object-refs: "` + v + `"}
spec:
  group: gateway.envoyproxy.io
  scope: Namespaced
  names: {kind: SecurityPolicy, plural: securitypolicies}
  versions: [{name: v1alpha1, served: true, storage: true}]
`
	}
	res := compute(t, engine.Options{}, annotated("none"), refsTopo(), oidcPolicy("missing", "r2", `{name: absent}`))
	want(t, "none", ancestorConds(t, res, "missing")["Accepted"], "True/Accepted")

	// Another field and key: basicAuth users must hold .htpasswd.
	res = compute(t, engine.Options{}, annotated("oidc.clientSecret kinds=Secret keys=tls.crt"), refsTopo(),
		oidcPolicy("sec", "r1", `{name: sec}`), oidcPolicy("oidc", "r2", `{name: oidc}`))
	want(t, "keys=tls.crt: sec", ancestorConds(t, res, "sec")["Accepted"], "True/Accepted")
	want(t, "keys=tls.crt: oidc", ancestorConds(t, res, "oidc")["Accepted"], "False/Invalid")
	for _, k := range res.Kinds {
		if k.GroupKind.Kind == "SecurityPolicy" && k.Origins["objectRefs"] != "annotation" {
			t.Errorf("origin of objectRefs = %q, want annotation", k.Origins["objectRefs"])
		}
	}

	res = compute(t, engine.Options{}, annotated("oidc.clientSecret kinds=Pod"), refsTopo())
	if len(res.Problems) == 0 || !strings.Contains(res.Problems[0].Error(), "attache.dev/object-refs") {
		t.Errorf("an unknown kind must make the CRD invalid, naming the annotation: %v", res.Problems)
	}
}

// Creating, changing and deleting a Secret re-derives the verdict of the
// policies naming it without a full computation, as Compute would.
func TestObjectRefsIncremental(t *testing.T) {
	sp := crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies")
	base := decodeDocs(t, sp, refsTopo(), oidcPolicy("p", "r1", `{name: later}`), oidcPolicy("q", "r2", `{name: oidc}`))
	secret := func(key string) []engine.Object {
		return decodeDocs(t, `
apiVersion: v1
kind: Secret
metadata: {name: later, namespace: default}
data: {`+key+`: eA==}`)
	}
	with := func(extra []engine.Object) []engine.Object {
		return append(append([]engine.Object(nil), base...), extra...)
	}
	in := engine.NewIncremental(engine.Options{})
	p := topology.Ref{Group: "gateway.envoyproxy.io", Kind: "SecurityPolicy", Namespace: "default", Name: "p"}
	for i, s := range []struct {
		what     string
		objs     []engine.Object
		accepted string
	}{
		{"first", base, "False/Invalid"},
		{"Secret created", with(secret("client-secret")), "True/Accepted"},
		{"key renamed", with(secret("wrong")), "False/Invalid"},
		{"key back", with(secret("client-secret")), "True/Accepted"},
		{"Secret deleted", base, "False/Invalid"},
	} {
		res := in.Compute(s.objs)
		if ch := in.LastChange(); i > 0 {
			if ch.Full {
				t.Errorf("%s: recomputed everything (%s)", s.what, ch.Reason)
			}
			if len(ch.Statuses) != 1 || ch.Statuses[0] != p {
				t.Errorf("%s: statuses changed = %v, want p only", s.what, ch.Statuses)
			}
		}
		want(t, s.what+": p", ancestorConds(t, res, "p")["Accepted"], s.accepted)
		want(t, s.what+": q", ancestorConds(t, res, "q")["Accepted"], "True/Accepted")
		full := engine.Compute(s.objs, engine.Options{})
		want(t, s.what+": as Compute", ancestorConds(t, res, "p"), ancestorConds(t, full, "p"))
	}
}

// A Secret created in the same input as a generation-only change of the
// policy naming it: the incremental result is Compute's, with the new
// generation.
func TestObjectRefsIncrementalWithGeneration(t *testing.T) {
	sp := crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies")
	withGen := func(gen int) string {
		return strings.Replace(oidcPolicy("p", "r1", `{name: later}`), "namespace: default,", fmt.Sprintf("namespace: default, generation: %d,", gen), 1)
	}
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, sp, refsTopo(), withGen(1)))
	next := decodeDocs(t, sp, refsTopo(), withGen(2), "apiVersion: v1\nkind: Secret\nmetadata: {name: later, namespace: default}\ndata: {client-secret: eA==}\n")
	got := in.Compute(next)
	if a, b := dump(t, got), dump(t, engine.Compute(next, engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	for _, ps := range got.Policies {
		if ps.Policy.Ref.Name == "p" && ps.Policy.Generation != 2 {
			t.Errorf("generation %d, want 2", ps.Policy.Generation)
		}
	}
	want(t, "p", ancestorConds(t, got, "p")["Accepted"], "True/Accepted")
}

// wantProblem fails unless res has a problem of the policy named name, at
// field, whose message contains msg.
func wantProblem(t *testing.T, res *engine.Result, name, field, msg string) {
	t.Helper()
	for _, p := range res.Problems {
		if p.Object.Name == name && p.Field == field && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no problem of %s at %s saying %q: %v", name, field, msg, res.Problems)
}

// ancestorMessage returns the Accepted message of policy name's only
// ancestor entry.
func ancestorMessage(t *testing.T, res *engine.Result, name string) string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == name && len(ps.Ancestors) == 1 {
			for _, c := range ps.Ancestors[0].Conditions {
				if c.Type == "Accepted" {
					return c.Message
				}
			}
		}
	}
	t.Fatalf("no single-ancestor policy %s", name)
	return ""
}

// Envoy Gateway reads a ClientTrafficPolicy's client CA certificates for
// the listeners that terminate TLS only (on=HTTPS,TLS): a missing CA makes
// the policy Invalid at a Gateway with an HTTPS listener, at an HTTPS
// listener and at a ListenerSet with one, but not at a plain-HTTP
// listener, a Gateway without TLS listeners, or a TLS passthrough
// listener. A CA Secret without ca.crt counts when it has one key only.
// (Not modelled: a Gateway policy whose every TLS listener has a policy of
// its own is not read there by Envoy Gateway; attache judges it still.)
func TestObjectRefsOnListeners(t *testing.T) {
	ctp := func(name, kind, target, section, ca string) string {
		sec := ""
		if section != "" {
			sec = ", sectionName: " + section
		}
		return pol(egV, "ClientTrafficPolicy", name, 0, fmt.Sprintf(`targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s%s}]
tls: {clientValidation: {caCertificateRefs: [{name: %s}]}}`, kind, target, sec, ca))
	}
	gw := func(name, listeners string) string {
		return fmt.Sprintf("---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: default}\nspec: {gatewayClassName: eg, allowedListeners: {namespaces: {from: Same}}, listeners: [%s]}\n", name, listeners)
	}
	const https = "{name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}"
	res := compute(t, engine.Options{},
		crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		gw("mixed", "{name: http, protocol: HTTP, port: 80}, "+https),
		gw("plain", "{name: http, protocol: HTTP, port: 80}"),
		gw("passthrough", "{name: tls, protocol: TLS, port: 8443, tls: {mode: Passthrough}}"),
		gw("terminate", "{name: tls, protocol: TLS, port: 8443, tls: {certificateRefs: [{name: cert}]}}"),
		gw("base", "{name: http, protocol: HTTP, port: 80}"),
		gw("base2", "{name: http, protocol: HTTP, port: 80}"),
		gw("base3", "{name: http, protocol: HTTP, port: 80}"),
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: ls3, namespace: default}\nspec: {parentRef: {name: base3}, listeners: ["+https+"]}\n",
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: ListenerSet\nmetadata: {name: ls, namespace: default}\nspec: {parentRef: {name: base}, listeners: ["+https+"]}\n",
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: pair, namespace: default}\ndata: {tls.crt: eA==, tls.key: eA==}\n",
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: only, namespace: default}\ndata: {bundle.pem: eA==}\n",
		ctp("gw-mixed", "Gateway", "mixed", "", "missing"),
		ctp("gw-plain", "Gateway", "plain", "", "missing"),
		ctp("l-https", "Gateway", "mixed", "https", "pair"),
		ctp("l-http", "Gateway", "mixed", "http", "missing"),
		ctp("passthrough", "Gateway", "passthrough", "", "missing"),
		ctp("terminate", "Gateway", "terminate", "", "only"),
		ctp("ls", "ListenerSet", "ls", "", "missing"),
		ctp("gw-base2", "Gateway", "base2", "", "missing"),
		// A Gateway's policy covers its ListenerSets' listeners.
		ctp("gw-base3", "Gateway", "base3", "", "missing"),
	)
	for name, want := range map[string]string{
		"gw-mixed":    "False/Invalid",
		"gw-plain":    "True/Accepted",
		"l-https":     "False/Invalid",
		"l-http":      "True/Accepted",
		"passthrough": "True/Accepted",
		"terminate":   "True/Accepted",
		"ls":          "False/Invalid",
		"gw-base2":    "True/Accepted",
		"gw-base3":    "False/Invalid",
	} {
		if got := status(t, res, name, "Accepted"); got != want {
			t.Errorf("%s: Accepted %s, want %s", name, got, want)
		}
	}
	const field = "spec.tls.clientValidation.caCertificateRefs[0]"
	for name, why := range map[string]string{
		"gw-mixed": "Secret default/missing not found",
		"l-https":  "Secret default/pair has no key ca.crt",
	} {
		found := false
		for _, p := range res.Problems {
			if p.Object.Name == name {
				found = found || (p.Field == field && strings.Contains(p.Message, why))
			}
		}
		if !found {
			t.Errorf("%s: no problem naming %s saying %q in %v", name, field, why, res.Problems)
		}
	}
}

// A route policy with mergeType whose own references do not resolve is
// Invalid in place and merges with nothing: the Gateway policy is
// overridden for the route (Envoy Gateway fails the merged policy and
// answers the route with a 500). Once the ConfigMap exists it merges,
// incrementally as Compute says.
func TestObjectRefsMergeType(t *testing.T) {
	btp := func(name, kind, target string, min int, body string) string {
		return pol(egV, "BackendTrafficPolicy", name, min, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: %s, name: %s}]\n%s", kind, target, body))
	}
	base := decodeDocs(t, crd("gateway.envoyproxy.io", "BackendTrafficPolicy", "backendtrafficpolicies"), refsTopo(),
		btp("gw", "Gateway", "g1", 0, "timeout: {http: {requestTimeout: 5s}}"),
		btp("route", "HTTPRoute", "r1", 1, `mergeType: JSONMerge
responseOverride: [{match: {statusCodes: [{value: 500}]}, response: {body: {type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: page}}}}]`))
	page := decodeDocs(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: page, namespace: default}\ndata: {response.body: x}\n")
	rule := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: "r1", SectionName: "rule-1"}
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct {
		what     string
		objs     []engine.Object
		accepted string
		merged   bool
	}{
		{"ConfigMap missing", base, "False/Invalid", false},
		{"ConfigMap created", append(append([]engine.Object(nil), base...), page...), "True/Accepted", true},
		{"ConfigMap deleted", base, "False/Invalid", false},
	} {
		res := in.Compute(s.objs)
		want(t, s.what+": route", status(t, res, "route", "Accepted"), s.accepted)
		eff := effective(t, res, "BackendTrafficPolicy", rule)
		if len(eff) != 1 || strings.Contains(eff[0], "requestTimeout") != s.merged {
			t.Errorf("%s: effective at r1 = %v, want the Gateway's timeout merged: %v", s.what, eff, s.merged)
		}
		full := engine.Compute(s.objs, engine.Options{})
		want(t, s.what+": as Compute", effective(t, res, "BackendTrafficPolicy", rule), effective(t, full, "BackendTrafficPolicy", rule))
		want(t, s.what+": gw as Compute", ancestorConds(t, res, "gw"), ancestorConds(t, full, "gw"))
	}
}
