package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
)

// egManifests: a Gateway, a route, a Service and two BackendTrafficPolicies
// on the route, the second one newer.
const egManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: eg}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: eg}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: eg}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: eg}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: older, namespace: eg, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  timeout: {http: {requestTimeout: 10s}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: newer, namespace: eg, creationTimestamp: "2026-01-01T00:00:05Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  timeout: {http: {requestTimeout: 20s}}
`

// TestLiveEnvoyGatewayUnlabelledCRDs runs attache against a real API server
// serving Envoy Gateway's own CRDs (from its module, without the policy
// label): its policies are shown with the Envoy Gateway profile's verdicts,
// and not at all with --profiles=false.
func TestLiveEnvoyGatewayUnlabelledCRDs(t *testing.T) {
	eg := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	file, kc := liveCluster(t, egManifests, "eg", filepath.Join(eg, "charts", "gateway-helm", "charts", "crds", "crds", "generated"))
	out, _ := runLive(t, "get", "policies", "-A", "--kubeconfig", kc)
	lines := policyLines(out, "BackendTrafficPolicy")
	if !strings.Contains(lines["older"], "Accepted") || strings.Contains(lines["older"], "Conflicted") {
		t.Errorf("older: %q, want Accepted\n%s", lines["older"], out)
	}
	if !strings.Contains(lines["newer"], "Conflicted") {
		t.Errorf("newer: %q, want Conflicted\n%s", lines["newer"], out)
	}
	kinds, _ := runLive(t, "get", "policykinds", "-o", "wide", "--kubeconfig", kc)
	for _, k := range []string{"ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy", "EnvoyPatchPolicy"} {
		if !strings.Contains(kinds, k+".gateway.envoyproxy.io") {
			t.Errorf("get policykinds lacks %s:\n%s", k, kinds)
		}
	}
	if !strings.Contains(kinds, "(profile: Envoy Gateway)") {
		t.Errorf("get policykinds -o wide does not name the profile:\n%s", kinds)
	}
	// The answer from the cluster is the answer from the same objects in
	// files.
	files := []string{"get", "policies", "-A", "-o", "json", "-f", file, "-f", filepath.Join(eg, "charts", "gateway-helm", "charts", "crds", "crds", "generated", "gateway.envoyproxy.io_backendtrafficpolicies.yaml")}
	live, _ := runLive(t, "get", "policies", "-A", "-o", "json", "--kubeconfig", kc)
	if fromFiles, _ := runLive(t, files...); live != fromFiles {
		t.Errorf("cluster and files differ:\n--- cluster\n%s\n--- files\n%s", live, fromFiles)
	}
	off, errOff := runLive(t, "get", "policies", "-A", "--profiles=false", "--kubeconfig", kc)
	if strings.Contains(off, "BackendTrafficPolicy") {
		t.Errorf("--profiles=false still shows Envoy Gateway policies:\n%s\n%s", off, errOff)
	}
	// Without profiles, the CRDs look like policy kinds nobody declared.
	if !strings.Contains(errOff, "CRD backendtrafficpolicies.gateway.envoyproxy.io: BackendTrafficPolicy.gateway.envoyproxy.io looks like a policy kind") {
		t.Errorf("--profiles=false gives no look-alike warning:\n%s", errOff)
	}
}

// btlsManifests: a route to Services s1 and s2, the ConfigMap ca holding a
// CA certificate, and BackendTLSPolicies on s1 (naming ca) and s2 (naming
// a ConfigMap that does not exist).
const btlsManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: tls}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: tls}
spec:
  gatewayClassName: x
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: tls}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 443}, {name: s2, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: tls}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: tls}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: tls}
data: {ca.crt: "-----BEGIN CERTIFICATE-----"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: trusted, namespace: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: s1}]
  validation: {hostname: s1.example, caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: untrusted, namespace: tls}
spec:
  targetRefs: [{group: "", kind: Service, name: s2}]
  validation: {hostname: s2.example, caCertificateRefs: [{group: "", kind: ConfigMap, name: absent}]}
`

// TestLiveBackendTLSPolicyCARefs: read from a cluster, the ConfigMaps
// BackendTLSPolicies name are got and judged as from files: the policy
// whose ConfigMap exists is accepted, the other NoValidCACertificate.
func TestLiveBackendTLSPolicyCARefs(t *testing.T) {
	file, kc := liveCluster(t, btlsManifests, "tls")
	out, _ := runLive(t, "get", "policies", "-A", "--kubeconfig", kc)
	lines := policyLines(out, "BackendTLSPolicy")
	if !strings.Contains(lines["trusted"], "Accepted") || strings.Contains(lines["trusted"], "NoValidCACertificate") {
		t.Errorf("trusted: %q\n%s", lines["trusted"], out)
	}
	if !strings.Contains(lines["untrusted"], "NoValidCACertificate") {
		t.Errorf("untrusted: %q, want NoValidCACertificate\n%s", lines["untrusted"], out)
	}
	live, _ := runLive(t, "get", "policies", "-A", "-o", "json", "--kubeconfig", kc)
	var crd string
	for _, f := range clustertest.GatewayAPICRDs(t) {
		if strings.Contains(filepath.Base(f), "backendtlspolicies") {
			crd = f
		}
	}
	fromFiles, _ := runLive(t, "get", "policies", "-A", "-o", "json", "-f", file, "-f", crd)
	if live != fromFiles {
		t.Errorf("cluster and files differ:\n--- cluster\n%s\n--- files\n%s", live, fromFiles)
	}
	if !strings.Contains(live, `"ResolvedRefs"`) {
		t.Errorf("no ResolvedRefs condition in the JSON:\n%s", live)
	}
}

// liveCluster starts an API server with the Gateway API CRDs and those of
// crds, applies manifests (written to the returned file) and returns a
// kubeconfig for it in namespace ns.
func liveCluster(t *testing.T, manifests, ns string, crds ...string) (file, kubeconfig string) {
	t.Helper()
	env := testenv.Start(t)
	clustertest.InstallCRDs(t, env.Config, append(clustertest.GatewayAPICRDs(t), crds...)...)
	file = filepath.Join(t.TempDir(), ns+".yaml")
	if err := os.WriteFile(file, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)
	return file, clustertest.WriteKubeconfig(t, env.Config, ns)
}

// policyLines maps the name of each policy of kind in a `get policies -A`
// table to its line.
func policyLines(out, kind string) map[string]string {
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == kind {
			lines[f[2]] = l
		}
	}
	return lines
}

// egFeatureManifests: a Gateway and a route, a Lua EnvoyExtensionPolicy
// on the route, an EnvoyPatchPolicy on the Gateway, and Envoy Gateway's
// configuration turning Lua on (EnvoyPatchPolicy stays off).
const egFeatureManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: eg}
---
apiVersion: v1
kind: Namespace
metadata: {name: envoy-gateway-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: envoy-gateway-config, namespace: envoy-gateway-system}
data:
  envoy-gateway.yaml: |
    apiVersion: gateway.envoyproxy.io/v1alpha1
    kind: EnvoyGateway
    provider: {type: Kubernetes}
    extensionApis: {enableLua: true}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: eg}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: eg}
spec:
  parentRefs: [{name: g1}]
  rules: [{matches: [{path: {type: PathPrefix, value: /}}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: lua, namespace: eg}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  lua: [{type: Inline, inline: "function envoy_on_response(h) end"}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: patch, namespace: eg}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}
  type: JSONPatch
  jsonPatches: [{type: "type.googleapis.com/envoy.config.listener.v3.Listener", name: x, operation: {op: add, path: /a, value: 1}}]
`

// TestLiveEnvoyGatewayConfiguration: attache reads Envoy Gateway's
// configuration from the cluster (the ConfigMap, values and all), as from
// files; --feature overrides it, and a bad --feature is refused.
func TestLiveEnvoyGatewayConfiguration(t *testing.T) {
	eg := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	crds := filepath.Join(eg, "charts", "gateway-helm", "charts", "crds", "crds", "generated")
	file, kc := liveCluster(t, egFeatureManifests, "eg", crds)
	out, _ := runLive(t, "get", "policies", "-A", "--kubeconfig", kc)
	if l := policyLines(out, "EnvoyExtensionPolicy")["lua"]; !strings.Contains(l, "Accepted") || strings.Contains(l, "Invalid") {
		t.Errorf("lua: %q, want Accepted (the configuration turns Lua on)\n%s", l, out)
	}
	if l := policyLines(out, "EnvoyPatchPolicy")["patch"]; !strings.Contains(l, "Disabled") {
		t.Errorf("patch: %q, want Disabled\n%s", l, out)
	}
	on, _ := runLive(t, "get", "policies", "-A", "--kubeconfig", kc, "--feature", "EnvoyGateway.extensionApis.enableEnvoyPatchPolicy=true",
		"--feature", "EnvoyGateway.extensionApis.enableLua=false")
	if l := policyLines(on, "EnvoyPatchPolicy")["patch"]; !strings.Contains(l, "Accepted") || strings.Contains(l, "Disabled") {
		t.Errorf("patch with --feature ...=true: %q, want Accepted\n%s", l, on)
	}
	if l := policyLines(on, "EnvoyExtensionPolicy")["lua"]; !strings.Contains(l, "Invalid") {
		t.Errorf("lua with --feature ...enableLua=false: %q, want Invalid\n%s", l, on)
	}
	desc, _ := runLive(t, "describe", "envoypatchpolicy", "patch", "-n", "eg", "--kubeconfig", kc)
	if !strings.Contains(desc, "it needs EnvoyGateway.extensionApis.enableEnvoyPatchPolicy, off in ConfigMap envoy-gateway-system/envoy-gateway-config") {
		t.Errorf("describe does not say where the feature is off:\n%s", desc)
	}
	// The same objects in files give the same answer.
	live, _ := runLive(t, "get", "policies", "-A", "-o", "json", "--kubeconfig", kc)
	files := []string{"get", "policies", "-A", "-o", "json", "-f", file,
		"-f", filepath.Join(crds, "gateway.envoyproxy.io_envoyextensionpolicies.yaml"), "-f", filepath.Join(crds, "gateway.envoyproxy.io_envoypatchpolicies.yaml")}
	if fromFiles, _ := runLive(t, files...); live != fromFiles {
		t.Errorf("cluster and files differ:\n--- cluster\n%s\n--- files\n%s", live, fromFiles)
	}
	if _, _, err := run(t, "get", "policies", "-A", "-f", file, "--feature", "EnvoyGateway.extensionApis.enableLua=maybe"); err == nil || !strings.Contains(err.Error(), `"maybe" is not true or false`) {
		t.Errorf("a bad --feature: %v", err)
	}
	withCRDs := append(files[3:], "--feature", "EnvoyGateway.extensionApis.enableLUA=true", "--feature", "EnvoyGateway.extensionApis.enableLua=true")
	_, stderr, err := run(t, append([]string{"get", "policies", "-A"}, withCRDs...)...)
	if err != nil || !strings.Contains(stderr, "--feature EnvoyGateway.extensionApis.enableLUA: none of the policy kinds read uses it") || strings.Contains(stderr, "enableLua: no policy") {
		t.Errorf("--feature names, one no gate names: %v, stderr:\n%s", err, stderr)
	}
}
