package controller

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testpki"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// egObjects is a Gateway, a route and two BackendTrafficPolicies on the
// route (older first), in namespace eg.
const egObjects = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1}
spec: {ports: [{name: http, port: 80}]}
`

const egPolicy = `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: %s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  timeout: {http: {requestTimeout: %s}}
`

func decodeAll(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// TestEnvoyGatewayUnlabelledCRDs installs Envoy Gateway's own CRDs (read
// from its module, unlabelled as it ships them) and checks that the
// controller computes its policies' status by the Envoy Gateway profile:
// of two policies on one route the older wins and the newer is
// Conflicted, and the ancestor is the Gateway.
func TestEnvoyGatewayUnlabelledCRDs(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	k := newKube(t)
	crdFile := filepath.Join(dir, "charts", "gateway-helm", "charts", "crds", "crds", "generated", "gateway.envoyproxy.io_backendtrafficpolicies.yaml")
	k.applyFile(crdFile, "")
	btp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "BackendTrafficPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{btp}}, nil)
	k.namespace("eg")
	k.apply("eg", decodeAll(t, egObjects)...)
	k.apply("eg", decodeAll(t, fmt.Sprintf(egPolicy, "older", "10s"))...)
	time.Sleep(1100 * time.Millisecond) // creationTimestamps are to the second
	k.apply("eg", decodeAll(t, fmt.Sprintf(egPolicy, "newer", "20s"))...)
	gvk := schema.GroupVersionKind{Group: btp.Group, Version: "v1alpha1", Kind: btp.Kind}
	// Envoy Gateway's status schema has ancestors only: the conditions are
	// per ancestor, and the ancestor is the Gateway.
	summary := func(u *unstructured.Unstructured) string { return ancestorSummary(u, "Accepted", "Programmed") }
	waitFor(t, "Envoy Gateway policy status", func() string {
		older, newer := k.get(gvk, "eg", "older"), k.get(gvk, "eg", "newer")
		if got := summary(older); got != "Gateway/g1 True/Accepted True/Programmed" {
			return "older: " + got
		}
		if got := summary(newer); got != "Gateway/g1 False/Conflicted -" {
			return "newer: " + got
		}
		if _, has := older.Object["status"].(map[string]any)["conditions"]; has {
			return "older has status.conditions, which its schema does not keep"
		}
		return ""
	})
	r.waitIdle(t, 0)
	// The controller knew, from its cache of the CRD, not to write them:
	// no write came back pruned.
	r.c.mu.Lock()
	unsettled := len(r.c.unsettledWrites)
	r.c.mu.Unlock()
	if unsettled != 0 {
		t.Errorf("%d writes were not kept by the API server: the controller wrote status.conditions the schema prunes", unsettled)
	}
}

// btlsPolicy is a BackendTLSPolicy on egObjects' Service s1 trusting the
// CA in ConfigMap ca (which the test creates later).
const btlsPolicy = `
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: s1}]
  validation:
    hostname: s1.example
    caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]
`

// TestBackendTLSPolicyCAConfigMap: the controller watches the ConfigMaps
// BackendTLSPolicies name. Without its ConfigMap the policy is
// Accepted=False/NoValidCACertificate with ResolvedRefs=False; once the
// ConfigMap holds ca.crt it is accepted with ResolvedRefs=True, and
// removing the key takes that back. The cache keeps the ConfigMap's keys,
// not their values.
func TestBackendTLSPolicyCAConfigMap(t *testing.T) {
	k := newKube(t)
	btls := topology.GroupKind{Group: topology.GatewayGroup, Kind: "BackendTLSPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{btls}}, nil)
	const ns = "btls"
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects+"\n---\n"+btlsPolicy)...)
	gvk := schema.GroupVersionKind{Group: btls.Group, Version: "v1", Kind: btls.Kind}
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvk, ns, "tls", want, "Accepted", "ResolvedRefs")
	}
	expect("no ConfigMap", "Gateway/g1 False/NoValidCACertificate False/InvalidCACertificateRef")

	cm := func(key string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "ca"},
			"data":     map[string]any{key: "-----BEGIN CERTIFICATE-----\nsecret-looking value\n"},
		}}
	}
	k.apply(ns, cm("ca.crt"))
	expect("ConfigMap with ca.crt", "Gateway/g1 True/Accepted True/ResolvedRefs")

	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if err := r.c.cache.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ca"}, cached); err != nil {
		t.Fatalf("the ConfigMap is not in the controller's cache: %v", err)
	}
	if data, _ := cached.Object["data"].(map[string]any); len(data) != 1 || !holderdata.Redacted(data["ca.crt"]) || strings.Contains(fmt.Sprint(data), "secret-looking") {
		t.Errorf("cached data = %v, want the key with what is read of its value only", data)
	}

	k.delete(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, ns, "ca")
	k.apply(ns, cm("other"))
	expect("ConfigMap without ca.crt", "Gateway/g1 False/NoValidCACertificate False/InvalidCACertificateRef")
	r.waitIdle(t, 0)
}

// waitAncestor waits until the ancestorSummary of policy ns/name (of
// gvk), for condition types, is want.
func waitAncestor(t *testing.T, k *kube, what string, gvk schema.GroupVersionKind, ns, name, want string, types ...string) {
	t.Helper()
	waitFor(t, what, func() string {
		if got := ancestorSummary(k.get(gvk, ns, name), types...); got != want {
			return got
		}
		return ""
	})
}

// ancestorSummary is "Kind/name" of a policy's only ancestor entry of the
// test controller, then "Status/Reason" of each condition type.
func ancestorSummary(u *unstructured.Unstructured, types ...string) string {
	anc := ancestorsOf(u, testControllerName)
	if len(anc) != 1 {
		return fmt.Sprintf("%d ancestors", len(anc))
	}
	ref, _ := anc[0]["ancestorRef"].(map[string]any)
	conds := &unstructured.Unstructured{Object: map[string]any{"c": anc[0]["conditions"]}}
	out := fmt.Sprintf("%v/%v", ref["kind"], ref["name"])
	for _, typ := range types {
		out += " " + condSummary(condition(conds, typ, "c"))
	}
	return out
}

// TestPolicyUsingBackendInStatus: through the real API server, an Envoy
// Gateway SecurityPolicy whose external authorizer is a Service becomes the
// ancestor of that Service's BackendTLSPolicy; pointed at a missing Service
// it is Invalid, and the BackendTLSPolicy has no such ancestor any more.
func TestPolicyUsingBackendInStatus(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("securitypolicies")
	btls := topology.GroupKind{Group: topology.GatewayGroup, Kind: "BackendTLSPolicy"}
	sp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "SecurityPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{btls, sp}}, nil)
	const ns = "extauth"
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects+`
---
apiVersion: v1
kind: Service
metadata: {name: auth}
spec: {ports: [{name: grpc, port: 9000}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: auth-tls}
spec:
  targetRefs: [{group: "", kind: Service, name: auth}]
  validation: {hostname: auth.example, wellKnownCACertificates: System}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: sp}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
  extAuth: {grpc: {backendRefs: [{name: auth, port: 9000}]}}
`)...)
	btlsGVK := schema.GroupVersionKind{Group: btls.Group, Version: "v1", Kind: btls.Kind}
	spGVK := schema.GroupVersionKind{Group: sp.Group, Version: "v1alpha1", Kind: sp.Kind}
	expect := func(what string, gvk schema.GroupVersionKind, name, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvk, ns, name, want, "Accepted")
	}
	expect("the SecurityPolicy as the BackendTLSPolicy's ancestor", btlsGVK, "auth-tls", "SecurityPolicy/sp True/Accepted")
	expect("the SecurityPolicy accepted", spGVK, "sp", "Gateway/g1 True/Accepted")

	k.patch(spGVK, ns, "sp", `{"spec": {"extAuth": {"grpc": {"backendRefs": [{"name": "nosvc", "port": 9000}]}}}}`)
	expect("the SecurityPolicy invalid", spGVK, "sp", "Gateway/g1 False/Invalid")
	expect("the BackendTLSPolicy used by nothing", btlsGVK, "auth-tls", "Service/auth True/Accepted")
	r.waitIdle(t, 0)
}

// oidcPolicy is an Envoy Gateway SecurityPolicy on egObjects' route whose
// OIDC client secret is Secret oidc (which the test creates later).
const oidcPolicy = `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: SecurityPolicy
metadata: {name: oidc}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  oidc:
    provider: {issuer: "https://idp.example"}
    clientID: app
    clientSecret: {name: oidc}
`

// TestSecurityPolicySecretRef: with Envoy Gateway's SecurityPolicy CRD as
// it ships, the controller watches the Secrets its policies name (its
// profile's objectRefs). Without the Secret the policy is Invalid; once
// the Secret holds client-secret it is accepted, and a Secret without that
// key takes it back. The cache keeps the Secret's keys, not their values.
func TestSecurityPolicySecretRef(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("securitypolicies")
	sp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "SecurityPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{sp}}, nil)
	const ns = "oidc"
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects+"\n---\n"+oidcPolicy)...)
	gvk := schema.GroupVersionKind{Group: sp.Group, Version: "v1alpha1", Kind: sp.Kind}
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvk, ns, "oidc", want, "Accepted")
	}
	expect("no Secret", "Gateway/g1 False/Invalid")

	secret := func(key string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": "oidc"},
			"stringData": map[string]any{key: "hunter2"},
		}}
	}
	k.apply(ns, secret("client-secret"))
	expect("Secret with client-secret", "Gateway/g1 True/Accepted")

	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Secret"})
	if err := r.c.cache.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "oidc"}, cached); err != nil {
		t.Fatalf("the Secret is not in the controller's cache: %v", err)
	}
	if data, _ := cached.Object["data"].(map[string]any); len(data) != 1 || !holderdata.Redacted(data["client-secret"]) || strings.Contains(fmt.Sprint(data), "aHVudGVyMg") {
		t.Errorf("cached data = %v, want the key with what is read of its value only", data)
	}

	k.delete(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, ns, "oidc")
	k.apply(ns, secret("other"))
	expect("Secret without client-secret", "Gateway/g1 False/Invalid")
	r.waitIdle(t, 0)
}

// egFeaturePolicies: a Lua EnvoyExtensionPolicy on egObjects' route and an
// EnvoyPatchPolicy on its Gateway.
const egFeaturePolicies = `
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: lua}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  lua: [{type: Inline, inline: "function envoy_on_response(h) end"}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: patch}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
  type: JSONPatch
  jsonPatches: [{type: "type.googleapis.com/envoy.config.listener.v3.Listener", name: x, operation: {op: add, path: /a, value: 1}}]
`

// TestEnvoyGatewayConfiguration: the controller reads Envoy Gateway's
// configuration ConfigMap (here: EnvoyPatchPolicy on, Lua off), with
// Options.Features (the binary's --feature) over it (Lua on): both
// policies are accepted. Edited to turn EnvoyPatchPolicy off, the
// ConfigMap is read again, as Envoy Gateway reloads its own: the
// EnvoyPatchPolicy is then Disabled.
func TestEnvoyGatewayConfiguration(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("envoyextensionpolicies", "envoypatchpolicies")
	const cfgNS = "envoy-gateway-system"
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	k.namespace(cfgNS)
	k.apply(cfgNS, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "envoy-gateway-config"},
		"data": map[string]any{"envoy-gateway.yaml": "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\n" +
			"extensionApis: {enableEnvoyPatchPolicy: true, enableLua: false}\n"},
	}})
	// The API server is shared: leave no configuration to later tests.
	defer k.delete(cmGVK, cfgNS, "envoy-gateway-config")
	eep := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyExtensionPolicy"}
	epp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyPatchPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{eep, epp},
		Features: policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true, From: "--feature"}}}, nil)
	const ns = "egconfig"
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects+"\n---\n"+egFeaturePolicies)...)
	eepGVK := schema.GroupVersionKind{Group: eep.Group, Version: "v1alpha1", Kind: eep.Kind}
	eppGVK := schema.GroupVersionKind{Group: epp.Group, Version: "v1alpha1", Kind: epp.Kind}
	waitAncestor(t, k, "Lua, on by Options.Features", eepGVK, ns, "lua", "Gateway/g1 True/Accepted", "Accepted")
	waitAncestor(t, k, "EnvoyPatchPolicy, on in the ConfigMap", eppGVK, ns, "patch", "Gateway/g1 True/Accepted", "Accepted")
	k.patch(cmGVK, cfgNS, "envoy-gateway-config", `{"data":{"envoy-gateway.yaml":"apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyGateway\nextensionApis: {enableLua: false}\n"}}`)
	waitAncestor(t, k, "EnvoyPatchPolicy, off in the edited ConfigMap", eppGVK, ns, "patch", "Gateway/g1 False/Disabled", "Accepted")
	waitAncestor(t, k, "Lua, still on by Options.Features", eepGVK, ns, "lua", "Gateway/g1 True/Accepted", "Accepted")
	r.waitIdle(t, 0)
}

// TestEnvoyExtensionPolicyLuaConfigMap: a Lua script an
// EnvoyExtensionPolicy loads from a ConfigMap is judged as Envoy
// Gateway's Strict validation judges it (the default, for a Gateway of
// Envoy Gateway's class without an EnvoyProxy), from what the
// controller's cache keeps of the ConfigMap: the verdicts of its Lua
// script's checks (not its text), and of other values only what is read
// of them. A script calling what
// Envoy's Lua API lacks makes the policy Invalid; edited to a good one,
// it is accepted.
func TestEnvoyExtensionPolicyLuaConfigMap(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("envoyextensionpolicies")
	eep := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyExtensionPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{eep},
		Features: policy.Features{"EnvoyGateway.extensionApis.enableLua": {On: true, From: "--feature"}}}, nil)
	const ns = "luacm"
	k.namespace(ns)
	k.apply(ns, decodeAll(t, egObjects+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: script}
data:
  lua: "function envoy_on_response(h) h:headers():unknownApi() end"
  notes: "not a script, and not kept"
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: lua}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  lua: [{type: ValueRef, valueRef: {group: "", kind: ConfigMap, name: script}}]
`)...)
	// The API server is shared: leave no GatewayClass to later tests.
	defer k.delete(schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "GatewayClass"}, "", "eg")
	gvk := schema.GroupVersionKind{Group: eep.Group, Version: "v1alpha1", Kind: eep.Kind}
	waitAncestor(t, k, "a script calling what Envoy's Lua API lacks", gvk, ns, "lua", "Gateway/g1 False/Invalid", "Accepted")

	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(cmGVK)
	if err := r.c.cache.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "script"}, cached); err != nil {
		t.Fatalf("the ConfigMap is not in the controller's cache: %v", err)
	}
	data, _ := cached.Object["data"].(map[string]any)
	if s, _ := data["lua"].(string); !holderdata.Redacted(s) || strings.Contains(s, "unknownApi") || !strings.Contains(s, "lua-strict=") {
		t.Errorf("cached lua = %q, want the token keeping the verdicts of the script, not its text", s)
	}
	if s, _ := data["notes"].(string); !holderdata.Redacted(s) || strings.Contains(s, "not kept") {
		t.Errorf("cached notes = %q, want what is read of it only", s)
	}
	k.patch(cmGVK, ns, "script", `{"data":{"lua":"function envoy_on_response(h) h:headers():replace('x', 'y') end"}}`)
	waitAncestor(t, k, "a script Envoy's Lua API runs", gvk, ns, "lua", "Gateway/g1 True/Accepted", "Accepted")
	r.waitIdle(t, 0)
}

// A ClientTrafficPolicy naming a CRL that expires while nothing changes:
// the controller recomputes when it does (engine.Incremental.NextRecheck),
// not at its next resync, and reads the CRL's validity from what its cache
// keeps of the Secret (holderdata), never the value.
func TestClientTrafficPolicyCRLExpires(t *testing.T) {
	k := newKube(t)
	k.applyEGCRDs("clienttrafficpolicies")
	ctp := topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"}
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{ctp}}, nil)
	const ns = "crl"
	k.namespace(ns)
	now := time.Now().Truncate(time.Second)
	// Long enough to see it in force on a loaded machine, short enough for
	// the test.
	const life = 15 * time.Second
	crl := testpki.NewCA(t).CRL(t, now.Add(-time.Hour), now.Add(life))
	k.apply(ns, decodeAll(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tls}
spec:
  gatewayClassName: eg
  listeners: [{name: https, protocol: HTTPS, port: 443, tls: {certificateRefs: [{name: cert}]}}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: mtls}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: tls}]
  tls: {clientValidation: {crl: {refs: [{name: crl}]}}}`)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "crl"},
		"stringData": map[string]any{"ca.crl": crl},
	}})
	gvk := schema.GroupVersionKind{Group: ctp.Group, Version: "v1alpha1", Kind: ctp.Kind}
	waitAncestor(t, k, "CRL in force", gvk, ns, "mtls", "Gateway/tls True/Accepted", "Accepted")
	if time.Now().After(now.Add(life)) {
		t.Skipf("the CRL expired before the policy was seen in force (a slow machine): nothing to test")
	}
	waitAncestor(t, k, "CRL expired", gvk, ns, "mtls", "Gateway/tls False/Invalid", "Accepted")
	if time.Now().Before(now.Add(life)) {
		t.Errorf("Invalid before the CRL expired")
	}
	r.waitIdle(t, 0)
}
