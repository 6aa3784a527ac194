package engine_test

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// caTopo: Gateway g1, an HTTPRoute to Services a..g, and ConfigMaps: good
// (ca.crt), nokey (another key), and Secret sec (tls.crt only).
func caTopo() string {
	var b strings.Builder
	b.WriteString(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: x
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [{name: g1}]
  rules:
  - backendRefs: [{name: a, port: 443}, {name: b, port: 443}, {name: c, port: 443}, {name: d, port: 443}, {name: e, port: 443}, {name: f, port: 443}, {name: g, port: 443}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: good, namespace: default}
data: {ca.crt: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: nokey, namespace: default}
data: {other: x}
---
apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: default}
data: {tls.crt: eA==}
`)
	for _, s := range "abcdefg" {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %c, namespace: default}\nspec: {ports: [{name: https, port: 443}]}\n", s)
	}
	return b.String()
}

// btlsp is a BackendTLSPolicy on Service svc with CA references refs (a
// YAML flow list).
func btlsp(name, svc, refs string) string {
	return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0, fmt.Sprintf(`targetRefs: [{group: "", kind: Service, name: %s}]
validation: {hostname: x.example, caCertificateRefs: %s}`, svc, refs))
}

// ancestorConds returns, per condition type, "Status/Reason" of policy
// name's only ancestor entry.
func ancestorConds(t *testing.T, res *engine.Result, name string) map[string]string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		if len(ps.Ancestors) != 1 {
			t.Fatalf("%s: %d ancestors, want 1: %v", name, len(ps.Ancestors), ps.Ancestors)
		}
		out := map[string]string{}
		for _, c := range ps.Ancestors[0].Conditions {
			out[c.Type] = c.Status + "/" + c.Reason
		}
		return out
	}
	t.Fatalf("no policy %s", name)
	return nil
}

func TestCACertificateRefs(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	res := compute(t, engine.Options{}, btls, caTopo(),
		btlsp("ok", "a", `[{group: "", kind: ConfigMap, name: good}]`),
		btlsp("missing", "b", `[{group: "", kind: ConfigMap, name: absent}]`),
		btlsp("nokey", "c", `[{group: "", kind: ConfigMap, name: nokey}]`),
		// Core support is ConfigMaps: a Secret is an unsupported kind.
		btlsp("secret", "d", `[{group: "", kind: Secret, name: sec}]`),
		// One of two resolves: accepted, but ResolvedRefs is False.
		btlsp("mixed", "e", `[{group: "", kind: ConfigMap, name: good}, {group: "", kind: ConfigMap, name: absent}]`),
		btlsp("none", "f", `[]`),
		btlsp("crossns", "g", `[{group: "", kind: ConfigMap, name: good, namespace: other}]`))
	for name, wantConds := range map[string]map[string]string{
		"ok":      {"Accepted": "True/Accepted", "Programmed": "True/Programmed", "ResolvedRefs": "True/ResolvedRefs"},
		"missing": {"Accepted": "False/NoValidCACertificate", "ResolvedRefs": "False/InvalidCACertificateRef"},
		"nokey":   {"Accepted": "False/NoValidCACertificate", "ResolvedRefs": "False/InvalidCACertificateRef"},
		"secret":  {"Accepted": "False/NoValidCACertificate", "ResolvedRefs": "False/InvalidKind"},
		"mixed":   {"Accepted": "True/Accepted", "Programmed": "True/Programmed", "ResolvedRefs": "False/InvalidCACertificateRef"},
		"none":    {"Accepted": "True/Accepted", "Programmed": "True/Programmed", "ResolvedRefs": "True/ResolvedRefs"},
		"crossns": {"Accepted": "False/NoValidCACertificate", "ResolvedRefs": "False/InvalidCACertificateRef"},
	} {
		want(t, name+" ancestor", ancestorConds(t, res, name), wantConds)
		want(t, name+" summary Accepted", status(t, res, name, "Accepted"), wantConds["Accepted"])
		want(t, name+" summary ResolvedRefs", status(t, res, name, "ResolvedRefs"), wantConds["ResolvedRefs"])
	}
	// The message names the reference and why.
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == "nokey" {
			if msg := ps.Conditions[0].Message; !strings.Contains(msg, "spec.validation.caCertificateRefs[0]: ConfigMap default/nokey has no key ca.crt") {
				t.Errorf("nokey message = %q", msg)
			}
		}
	}
	// Without a valid CA the policy still governs its Service: connections
	// through it fail (Gateway API), which the effective policy must show.
	b := topology.Ref{Kind: "Service", Namespace: "default", Name: "b", SectionName: "https"}
	want(t, "effective at b", effective(t, res, "BackendTLSPolicy", b), []string{`{"validation":{"caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"absent"}],"hostname":"x.example"}}`})
}

// Envoy Gateway's reading, declared on the CRD: Secrets too, and tls.crt
// or a holder's only key; "none" turns the check off.
func TestCACertificateRefsAnnotation(t *testing.T) {
	annotated := func(v string) string {
		return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backendtlspolicies.gateway.networking.k8s.io
  annotations: {attache.dev/ca-certificate-refs: "` + v + `"}
spec:
  group: gateway.networking.k8s.io
  scope: Namespaced
  names: {kind: BackendTLSPolicy, plural: backendtlspolicies}
  versions: [{name: v1, served: true, storage: true}]
`
	}
	res := compute(t, engine.Options{}, annotated("validation.caCertificateRefs kinds=ConfigMap,Secret keys=ca.crt,tls.crt,*"), caTopo(),
		btlsp("secret", "a", `[{group: "", kind: Secret, name: sec}]`),
		btlsp("onlykey", "b", `[{group: "", kind: ConfigMap, name: nokey}]`))
	want(t, "secret", status(t, res, "secret", "ResolvedRefs"), "True/ResolvedRefs")
	want(t, "only key", status(t, res, "onlykey", "ResolvedRefs"), "True/ResolvedRefs")
	if len(res.Kinds) != 1 || res.Kinds[0].Origins["caCertificateRefs"] != "annotation" {
		t.Errorf("origin of caCertificateRefs: %v", res.Kinds)
	}

	res = compute(t, engine.Options{}, annotated("none"), caTopo(), btlsp("missing", "a", `[{group: "", kind: ConfigMap, name: absent}]`))
	want(t, "off: Accepted", status(t, res, "missing", "Accepted"), "True/Accepted")
	want(t, "off: ResolvedRefs", status(t, res, "missing", "ResolvedRefs"), "(no ResolvedRefs)")

	res = compute(t, engine.Options{}, annotated("validation.caCertificateRefs kinds=Pod"), caTopo())
	if len(res.Kinds) != 0 || len(res.Problems) == 0 || !strings.Contains(res.Problems[0].Error(), "attache.dev/ca-certificate-refs") {
		t.Errorf("an unknown holder kind must make the CRD invalid, naming the annotation: kinds %v, problems %v", res.Kinds, res.Problems)
	}
}

// A reference the caller could not read is not judged.
func TestCACertificateRefsUnread(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	unread := func(r topology.Ref) bool { return r.Name == "hidden" }
	res := compute(t, engine.Options{Unread: unread}, btls, caTopo(),
		btlsp("hidden", "a", `[{group: "", kind: ConfigMap, name: hidden}]`),
		btlsp("hidden-and-missing", "b", `[{group: "", kind: ConfigMap, name: hidden}, {group: "", kind: ConfigMap, name: absent}]`))
	want(t, "hidden Accepted", status(t, res, "hidden", "Accepted"), "True/Accepted")
	want(t, "hidden ResolvedRefs", status(t, res, "hidden", "ResolvedRefs"), "(no ResolvedRefs)")
	// One broken, one unknown: ResolvedRefs is False, but whether any
	// resolves is not known, so the policy is not called invalid.
	want(t, "hidden-and-missing Accepted", status(t, res, "hidden-and-missing", "Accepted"), "True/Accepted")
	want(t, "hidden-and-missing ResolvedRefs", status(t, res, "hidden-and-missing", "ResolvedRefs"), "False/InvalidCACertificateRef")
}

// Adding, changing and removing a ConfigMap re-derives the status of the
// policies naming it, without a full computation, as Compute would.
func TestCACertificateRefsIncremental(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	base := decodeDocs(t, btls, caTopo(),
		btlsp("p", "a", `[{group: "", kind: ConfigMap, name: later}]`),
		btlsp("q", "b", `[{group: "", kind: ConfigMap, name: good}]`))
	cm := func(key string) []engine.Object {
		return decodeDocs(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: later, namespace: default}
data: {`+key+`: x}`)
	}
	in := engine.NewIncremental(engine.Options{})
	steps := []struct {
		what     string
		objs     []engine.Object
		accepted string
	}{
		{"first", base, "False/NoValidCACertificate"},
		{"ConfigMap created", append(append([]engine.Object(nil), base...), cm("ca.crt")...), "True/Accepted"},
		{"key renamed", append(append([]engine.Object(nil), base...), cm("wrong")...), "False/NoValidCACertificate"},
		{"key back", append(append([]engine.Object(nil), base...), cm("ca.crt")...), "True/Accepted"},
		{"ConfigMap deleted", base, "False/NoValidCACertificate"},
	}
	for i, s := range steps {
		res := in.Compute(s.objs)
		ch := in.LastChange()
		if i > 0 {
			if ch.Full {
				t.Errorf("%s: recomputed everything (%s)", s.what, ch.Reason)
			}
			p := topology.Ref{Group: topology.GatewayGroup, Kind: "BackendTLSPolicy", Namespace: "default", Name: "p"}
			if len(ch.Statuses) != 1 || ch.Statuses[0] != p {
				t.Errorf("%s: statuses changed = %v, want p only", s.what, ch.Statuses)
			}
		}
		want(t, s.what+": p", status(t, res, "p", "Accepted"), s.accepted)
		want(t, s.what+": q", status(t, res, "q", "Accepted"), "True/Accepted")
		full := engine.Compute(s.objs, engine.Options{})
		want(t, s.what+": as Compute", ancestorConds(t, res, "p"), ancestorConds(t, full, "p"))
	}
}

// implTopo: GatewayClasses eg (Envoy Gateway), ngf (NGINX Gateway Fabric)
// and other (another controller), a Gateway of each with a route to
// Services s-eg, s-ngf and s-other; Service s-mixed is used from the eg
// and other Gateways. Holders: ClusterTrustBundles bundle (set) and empty
// (no bundle), Secrets sec (kubernetes.io/tls) and opaque (ca.crt), and
// ConfigMap tlsonly (tls.crt).
const implTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ngf}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g-eg, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g-ngf, namespace: default}
spec: {gatewayClassName: ngf, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g-other, namespace: default}
spec: {gatewayClassName: other, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r-eg, namespace: default}
spec: {parentRefs: [{name: g-eg}], rules: [{backendRefs: [{name: s-eg, port: 443}, {name: s-eg2, port: 443}, {name: s-eg3, port: 443}, {name: s-mixed, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r-ngf, namespace: default}
spec: {parentRefs: [{name: g-ngf}], rules: [{backendRefs: [{name: s-ngf, port: 443}, {name: s-ngf2, port: 443}, {name: s-ngf3, port: 443}, {name: s-ngf4, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r-other, namespace: default}
spec: {parentRefs: [{name: g-other}], rules: [{backendRefs: [{name: s-other, port: 443}, {name: s-mixed, port: 443}]}]}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: bundle}
spec: {trustBundle: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: empty}
spec: {trustBundle: ""}
---
apiVersion: v1
kind: Secret
metadata: {name: sec, namespace: default}
type: kubernetes.io/tls
data: {tls.crt: eA==, tls.key: eA==}
---
apiVersion: v1
kind: Secret
metadata: {name: opaque, namespace: default}
data: {ca.crt: eA==}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: tlsonly, namespace: default}
data: {tls.crt: x}
`

// BackendTLSPolicy's CA references are judged as the implementation
// behind the policy's Gateway reads them: Envoy Gateway by kind alone
// (its fixtures write a ClusterTrustBundle with group ""), also
// ClusterTrustBundles, Secrets and tls.crt, an empty bundle adding
// nothing and any broken reference failing the policy; NGINX Gateway
// Fabric one reference, a ConfigMap under ca.crt or a kubernetes.io/tls
// Secret; another controller Gateway API's Core reading (a ConfigMap). A
// Service used from Gateways of two implementations is judged at each
// Gateway as its implementation reads it, and accepted (summary) when one
// of them accepts it.
func TestCACertificateRefsByImplementation(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	var svcs strings.Builder
	for _, s := range []string{"s-eg", "s-eg2", "s-eg3", "s-ngf", "s-ngf2", "s-ngf3", "s-ngf4", "s-other", "s-mixed"} {
		fmt.Fprintf(&svcs, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\nspec: {ports: [{name: https, port: 443}]}\n", s)
	}
	ctb := `[{group: "", kind: ClusterTrustBundle, name: bundle}]`
	docs := []string{btls, implTopo, svcs.String(),
		btlsp("eg-bundle", "s-eg", ctb),
		btlsp("eg-empty", "s-eg2", `[{group: certificates.k8s.io, kind: ClusterTrustBundle, name: empty}, {group: "", kind: ConfigMap, name: tlsonly}]`),
		btlsp("ngf-secret", "s-ngf", `[{group: "", kind: Secret, name: sec}]`),
		btlsp("ngf-bundle", "s-ngf2", ctb),
		btlsp("eg-one-gone", "s-eg3", `[{group: "", kind: ConfigMap, name: tlsonly}, {group: "", kind: ConfigMap, name: gone}]`),
		btlsp("ngf-opaque", "s-ngf4", `[{group: "", kind: Secret, name: opaque}]`),
		// NGINX Gateway Fabric takes one reference: two make it Invalid.
		btlsp("ngf-two", "s-ngf3", `[{group: "", kind: Secret, name: sec}, {group: "", kind: Secret, name: sec}]`),
		btlsp("other-secret", "s-other", `[{group: "", kind: Secret, name: sec}]`),
		btlsp("mixed-bundle", "s-mixed", ctb),
	}
	res := compute(t, engine.Options{}, docs...)
	ancestors := func(res *engine.Result, name string) []string {
		var out []string
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name != name {
				continue
			}
			for _, a := range ps.Ancestors {
				s := a.Ref.Name
				for _, c := range a.Conditions {
					if c.Type != "Programmed" {
						s += " " + c.Type + "=" + c.Status + "/" + c.Reason
					}
				}
				out = append(out, s)
			}
		}
		return out
	}
	for name, w := range map[string][]string{
		"eg-bundle": {"g-eg Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"},
		// The empty bundle adds nothing; tls.crt gives the certificate.
		"eg-empty": {"g-eg Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"},
		// One of two resolves: Envoy Gateway stops at the broken one.
		"eg-one-gone":  {"g-eg Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		"ngf-opaque":   {"g-ngf Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		"ngf-secret":   {"g-ngf Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"},
		"ngf-bundle":   {"g-ngf Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind"},
		"ngf-two":      {"g-ngf Accepted=False/Invalid"},
		"other-secret": {"g-other Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind"},
		"mixed-bundle": {"g-eg Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs", "g-other Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind"},
	} {
		want(t, name, ancestors(res, name), w)
	}
	want(t, "eg-bundle summary", status(t, res, "eg-bundle", "ResolvedRefs"), "True/ResolvedRefs")
	want(t, "ngf-bundle summary", status(t, res, "ngf-bundle", "ResolvedRefs"), "False/InvalidKind")
	want(t, "mixed-bundle summary", status(t, res, "mixed-bundle", "Accepted"), "True/Accepted")
	if c := condition(t, res, "ngf-two", "Accepted"); c.Reason != "Invalid" || !strings.Contains(c.Message, "spec.validation.caCertificateRefs: 2 references, its implementation takes at most 1") {
		t.Errorf("ngf-two: Accepted %s %q", c.Reason, c.Message)
	}
	if c := condition(t, res, "ngf-opaque", "ResolvedRefs"); !strings.Contains(c.Message, `Secret default/opaque is of type "Opaque", not kubernetes.io/tls`) {
		t.Errorf("ngf-opaque: ResolvedRefs message %q", c.Message)
	}

	// Incremental: the bundle deleted, then the eg class handed to another
	// controller; each step as Compute gives it.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	noBundle := strings.Replace(implTopo, "metadata: {name: bundle}\nspec: {trustBundle: \"-----BEGIN CERTIFICATE-----\"}", "metadata: {name: unrelated}\nspec: {trustBundle: x}", 1)
	otherClass := strings.Replace(implTopo, "metadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}", "metadata: {name: eg}\nspec: {controllerName: example.com/another}", 1)
	for _, step := range []struct {
		what, topo, want string
	}{
		{"bundle deleted", noBundle, "g-eg Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		{"bundle back", implTopo, "g-eg Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"},
		{"class to another controller", otherClass, "g-eg Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind"},
	} {
		d := append([]string{btls, step.topo}, docs[2:]...)
		got, full := in.Compute(decodeDocs(t, d...)), engine.Compute(decodeDocs(t, d...), engine.Options{})
		want(t, step.what, ancestors(got, "eg-bundle"), []string{step.want})
		want(t, step.what+": as Compute", ancestors(got, "eg-bundle"), ancestors(full, "eg-bundle"))
	}
}

// The implementation behind a target is found through a ListenerSet (its
// Gateway's class), a Gateway whose class is not among the objects says
// nothing, and a backend only a policy sends traffic to (an Envoy Gateway
// SecurityPolicy's external authorizer) takes the Gateways of that policy.
func TestCACertificateRefsReadingThroughListenerSetAndUsers(t *testing.T) {
	docs := []string{
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g-eg, namespace: default}
spec: {gatewayClassName: eg, allowedListeners: {namespaces: {from: Same}}, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g-unknown, namespace: default}
spec: {gatewayClassName: not-here, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec: {parentRef: {name: g-eg}, listeners: [{name: extra, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: via-ls, namespace: default}
spec: {parentRefs: [{kind: ListenerSet, name: ls}], rules: [{backendRefs: [{name: s-ls, port: 443}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: default}
spec: {parentRefs: [{name: g-eg}, {name: g-unknown}], rules: [{backendRefs: [{name: s-both, port: 443}]}]}
---
apiVersion: v1
kind: Secret
metadata: {name: ca, namespace: default}
data: {ca.crt: eA==}
`,
		serviceDoc("default", "s-ls", "{name: https, port: 443}"),
		serviceDoc("default", "s-both", "{name: https, port: 443}"),
		serviceDoc("default", "auth", "{name: grpc, port: 9000}"),
		pol(egV, "SecurityPolicy", "sp", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g-eg}]
extAuth: {grpc: {backendRefs: [{name: auth, port: 9000}]}}`),
		btlsp("ls-secret", "s-ls", `[{group: "", kind: Secret, name: ca}]`),
		btlsp("both-secret", "s-both", `[{group: "", kind: Secret, name: ca}]`),
		btlsp("auth-secret", "auth", `[{group: "", kind: Secret, name: ca}]`),
	}
	res := compute(t, engine.Options{}, docs...)
	for _, name := range []string{"ls-secret", "both-secret", "auth-secret"} {
		want(t, name, status(t, res, name, "ResolvedRefs"), "True/ResolvedRefs")
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
	}
	// The authorizer's policy is valid: its backend's CA resolves.
	want(t, "sp", status(t, res, "sp", "Accepted"), "True/Accepted")
}

// An EnvoyProxy of a GatewayClass with Gateways that sends its telemetry
// to a backend is an ancestor of that backend's BackendTLSPolicy, as Envoy
// Gateway writes it, and the references are read as Envoy Gateway reads
// them there; one of a class without Gateways is not.
func TestTelemetryProxyIsAncestor(t *testing.T) {
	docs := []string{
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		classDoc("eg", egController, "sys/tel") + classDoc("idle", egController, "sys/idle"),
		envoyProxyDoc("sys", "tel", "{telemetry: {tracing: {provider: {type: OpenTelemetry, backendRefs: [{name: otel, namespace: default, kind: Backend, group: gateway.envoyproxy.io}]}}}}"),
		envoyProxyDoc("sys", "idle", "{telemetry: {metrics: {sinks: [{type: OpenTelemetry, openTelemetry: {backendRefs: [{name: metrics, namespace: default}]}}]}}}"),
		gatewayDoc("g", "eg", "[{name: http, protocol: HTTP, port: 80}]", ""), `---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: otel, namespace: default}
spec: {endpoints: [{fqdn: {hostname: otel.example.com, port: 4317}}]}
---
apiVersion: v1
kind: Secret
metadata: {name: ca, namespace: default}
data: {ca.crt: eA==}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: otel-tls, namespace: default}
spec: {targetRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: otel}], validation: {hostname: otel.example.com, caCertificateRefs: [{group: "", kind: Secret, name: ca}]}}
`,
		serviceDoc("default", "metrics", "{name: grpc, port: 4317}"),
		btlsp("metrics-tls", "metrics", `[{group: "", kind: ConfigMap, name: none}]`),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "otel-tls ancestors", ancestorsOf(t, res, "otel-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io sys/tel=Accepted"})
	want(t, "otel-tls ResolvedRefs", status(t, res, "otel-tls", "ResolvedRefs"), "True/ResolvedRefs")
	// The idle class has no Gateway: its EnvoyProxy is no ancestor.
	for _, a := range ancestorsOf(t, res, "metrics-tls") {
		if strings.Contains(a, "EnvoyProxy") {
			t.Errorf("metrics-tls has the idle class's EnvoyProxy as an ancestor: %s", a)
		}
	}
}

// A Gateway's own EnvoyProxy (spec.infrastructure.parametersRef) replaces
// its class's, or merges over it by its mergeType, as Envoy Gateway runs
// the Gateway: the backends of the proxy it runs with have that proxy as
// their BackendTLSPolicies' ancestor. A class that merges its Gateways
// ignores their own; a Gateway whose own is missing runs with none.
func TestGatewayEnvoyProxyTelemetry(t *testing.T) {
	ep := envoyProxyDoc
	tracing := func(svc string) string {
		return fmt.Sprintf("{tracing: {provider: {type: OpenTelemetry, backendRefs: [{name: %s, namespace: default}]}}}", svc)
	}
	metrics := func(svc string) string {
		return fmt.Sprintf("{metrics: {sinks: [{type: OpenTelemetry, openTelemetry: {backendRefs: [{name: %s, namespace: default}]}}]}}", svc)
	}
	gw := func(name, class, params string) string {
		return gatewayDoc(name, class, "[{name: http, protocol: HTTP, port: 80}]", params)
	}
	docs := []string{
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		classDoc("eg", egController, "sys/cls") + classDoc("merged", egController, "sys/mg"),
		ep("sys", "cls", "{telemetry: "+tracing("t-cls")+"}"),
		ep("default", "own", "{telemetry: "+metrics("t-own")+"}"),
		ep("default", "mrg", "{mergeType: StrategicMerge, telemetry: "+metrics("t-mrg")+"}"),
		ep("sys", "mg", "{mergeGateways: true, telemetry: "+tracing("t-mg")+"}"),
		ep("default", "ignored", "{telemetry: "+metrics("t-ign")+"}"),
		gw("g-own", "eg", "own"), gw("g-merge", "eg", "mrg"), gw("g-missing", "eg", "gone"), gw("g-m", "merged", "ignored"),
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ca, namespace: default}\ndata: {ca.crt: x}\n",
	}
	for _, svc := range []string{"t-cls", "t-own", "t-mrg", "t-mg", "t-ign"} {
		docs = append(docs, serviceDoc("default", svc, "{name: grpc, port: 4317}"), "---"+btlsp(svc+"-tls", svc, `[{group: "", kind: ConfigMap, name: ca}]`))
	}
	res := compute(t, engine.Options{}, docs...)
	proxies := func(name string) []string {
		var out []string
		for _, a := range ancestorsOf(t, res, name) {
			if strings.HasPrefix(a, "EnvoyProxy") {
				out = append(out, a)
			}
		}
		return out
	}
	// No Gateway runs with the class's alone: g-own replaces it, g-merge
	// merges over it (keeping its tracing), g-missing runs with none.
	want(t, "t-cls", proxies("t-cls-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io default/mrg=Accepted"})
	want(t, "t-own", proxies("t-own-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io default/own=Accepted"})
	want(t, "t-mrg", proxies("t-mrg-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io default/mrg=Accepted"})
	// A class merging its Gateways runs them with its own proxy only.
	want(t, "t-mg", proxies("t-mg-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io sys/mg=Accepted"})
	want(t, "t-ign", proxies("t-ign-tls"), []string(nil))

	// A Gateway without its own runs with the class's.
	res = compute(t, engine.Options{}, append(docs, gw("g-plain", "eg", ""))...)
	want(t, "t-cls with g-plain", proxies("t-cls-tls"), []string{"EnvoyProxy.gateway.envoyproxy.io default/mrg=Accepted", "EnvoyProxy.gateway.envoyproxy.io sys/cls=Accepted"})
}

// An Envoy Gateway SDS reference Secret (type gateway.envoyproxy.io/sds)
// as a BackendTLSPolicy's CA, at an Envoy Gateway Gateway: refused until
// Envoy Gateway's configuration sets extensionApis.enableSDSSecretRef
// (among the objects, or --feature), then taken with a secretName and a
// unix url; a url Envoy Gateway does not take is refused, from files and
// from a cluster reader's redacted copy alike (holderdata's tokens). At
// another implementation's Gateway such a Secret is no CA holder of its
// reading. Incrementally, a Secret whose type or url changes is judged
// anew.
func TestCACertificateRefsSDS(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	b64 := base64.StdEncoding.EncodeToString
	sdsSecret := func(name, typ, url string) string {
		return fmt.Sprintf("---\napiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ntype: %s\ndata: {secretName: %s, url: %s}\n", name, typ, b64([]byte("ROOTCA")), b64([]byte(url)))
	}
	var svcs strings.Builder
	for _, s := range []string{"s-eg", "s-eg2", "s-other"} {
		fmt.Fprintf(&svcs, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\nspec: {ports: [{name: https, port: 443}]}\n", s)
	}
	const egConfig = `
apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-gateway-config, namespace: envoy-gateway-system}
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    extensionApis: {enableSDSSecretRef: true}
`
	docs := []string{btls, implTopo, svcs.String(),
		sdsSecret("sds", "gateway.envoyproxy.io/sds", "unix:///var/run/secrets/workload-spiffe-uds/socket"),
		sdsSecret("sds-http", "gateway.envoyproxy.io/sds", "http://sds.example:8080"),
		btlsp("eg-sds", "s-eg", `[{group: "", kind: Secret, name: sds}]`),
		btlsp("eg-sds-http", "s-eg2", `[{group: "", kind: Secret, name: sds-http}]`),
		btlsp("other-sds", "s-other", `[{group: "", kind: Secret, name: sds}]`),
	}
	verdict := func(res *engine.Result, name string) string {
		c := condition(t, res, name, "ResolvedRefs")
		return status(t, res, name, "Accepted") + " " + c.Status + "/" + c.Reason + ": " + c.Message
	}
	off := compute(t, engine.Options{}, docs...)
	if got := verdict(off, "eg-sds"); !strings.HasPrefix(got, "False/NoValidCACertificate False/InvalidCACertificateRef") ||
		!strings.Contains(got, "SDS Secret references are off: EnvoyGateway.extensionApis.enableSDSSecretRef is not set") {
		t.Errorf("feature off: %s", got)
	}
	for name, opts := range map[string]engine.Options{
		"--feature": {Features: policy.Features{profiles.EGEnableSDSSecretRef: {On: true, From: "--feature"}}},
		"config":    {},
	} {
		d := docs
		if name == "config" {
			d = append(slices.Clone(docs), egConfig)
		}
		res := compute(t, opts, d...)
		if got := verdict(res, "eg-sds"); !strings.HasPrefix(got, "True/Accepted True/ResolvedRefs") {
			t.Errorf("%s: eg-sds %s", name, got)
		}
		if got := verdict(res, "eg-sds-http"); !strings.HasPrefix(got, "False/NoValidCACertificate False/InvalidCACertificateRef") || !strings.Contains(got, "invalid URL in it: unsupported URL scheme: http") {
			t.Errorf("%s: eg-sds-http %s", name, got)
		}
		if got := verdict(res, "other-sds"); !strings.HasPrefix(got, "False/NoValidCACertificate False/InvalidKind") {
			t.Errorf("%s: other-sds %s", name, got)
		}
	}
	on := engine.Options{Features: policy.Features{profiles.EGEnableSDSSecretRef: {On: true}}}
	// As a cluster reader gives them: values replaced by holderdata's tokens.
	objs := decodeDocs(t, docs...)
	for _, o := range objs {
		if o.Object.GetKind() == "Secret" {
			holderdata.Redact(o.Object)
			if strings.Contains(fmt.Sprint(o.Object.Object["data"]), b64([]byte("http://sds.example:8080"))) {
				t.Fatal("a value survived Redact")
			}
		}
	}
	red := engine.Compute(objs, on)
	for _, name := range []string{"eg-sds", "eg-sds-http", "other-sds"} {
		want(t, name+" redacted", verdict(red, name), verdict(compute(t, on, docs...), name))
	}
	// Incremental: the Secret made Opaque (then a plain Secret without
	// ca.crt: no certificate), and its url changed.
	in := engine.NewIncremental(on)
	in.Compute(decodeDocs(t, docs...))
	for _, step := range []struct{ what, secret, want string }{
		{"made Opaque", sdsSecret("sds", "Opaque", "unix:///s"), "False/NoValidCACertificate False/InvalidCACertificateRef: spec.validation.caCertificateRefs[0]: Secret default/sds has no key ca.crt or tls.crt (nor a single key)"},
		{"url with a host", sdsSecret("sds", "gateway.envoyproxy.io/sds", "unix://host/s"), "False/NoValidCACertificate False/InvalidCACertificateRef: spec.validation.caCertificateRefs[0]: Secret default/sds is an invalid SDS reference Secret: invalid URL in it: unix URL must not contain a host, use unix:///absolute/path"},
		{"back", docs[3], "True/Accepted True/ResolvedRefs: Resolved all the object references"},
	} {
		d := slices.Clone(docs)
		d[3] = step.secret
		got, full := in.Compute(decodeDocs(t, d...)), engine.Compute(decodeDocs(t, d...), on)
		want(t, step.what, verdict(got, "eg-sds"), step.want)
		want(t, step.what+": as Compute", verdict(got, "eg-sds"), verdict(full, "eg-sds"))
	}
}
