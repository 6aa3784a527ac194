package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
)

// egClassDoc is GatewayClass eg, of Envoy Gateway's controller.
const egClassDoc = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
`

// egBackendObjects: an Envoy Gateway Gateway; Backends by address (ip) and
// by hostname (fqdn); an EnvoyExtensionPolicy whose external processor
// sends to both (mixed) and one that sends to the first only.
const egBackendObjects = egClassDoc + `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: ip, namespace: default}
spec: {endpoints: [{ip: {address: 10.0.0.1, port: 9000}}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: fqdn, namespace: default}
spec: {endpoints: [{fqdn: {hostname: ext.example.com, port: 9000}}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: mixed, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
  extProc: [{backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: ip}, {group: gateway.envoyproxy.io, kind: Backend, name: fqdn}]}]
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyExtensionPolicy
metadata: {name: plain, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: http}]
  extProc: [{backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: ip}]}]
`

// TestReadEGBackends: with Envoy Gateway's CRDs installed, Read lists its
// Backends, so that the engine judges the external services of its
// policies live as from files: one mixing a hostname with an address is
// Invalid, one with addresses only Accepted.
func TestReadEGBackends(t *testing.T) {
	generated := filepath.Join(modfixtures.Dir(t, modfixtures.EnvoyGateway), "charts", "gateway-helm", "charts", "crds", "crds", "generated")
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t),
		filepath.Join(generated, "gateway.envoyproxy.io_backends.yaml"),
		filepath.Join(generated, "gateway.envoyproxy.io_envoyextensionpolicies.yaml"))...))
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(egBackendObjects), 0o600); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)
	snap := read(t, env.Config, Options{})
	var backends []string
	for _, o := range snap.Objects {
		if o.Object.GetKind() == "Backend" {
			backends = append(backends, o.Object.GetName())
		}
	}
	slices.Sort(backends)
	if strings.Join(backends, ",") != "fqdn,ip" {
		t.Errorf("Backends read: %q", backends)
	}
	res := engine.Compute(snap.Objects, engine.Options{Unread: snap.UnreadFunc(),
		Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "test"}}})
	for name, want := range map[string]struct{ reason, msg string }{
		"mixed": {"Invalid", "spec.extProc[0].backendRefs: its backends mix hostnames with other endpoint types (Backend default/ip: IP; Backend default/fqdn: FQDN)"},
		"plain": {"Accepted", ""},
	} {
		ps := res.PolicyStatus(ref("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "default", name))
		if ps == nil || len(ps.Ancestors) != 1 {
			t.Errorf("%s: %+v, want one ancestor", name, ps)
			continue
		}
		if c := ps.Ancestors[0].Conditions[0]; c.Reason != want.reason || !strings.Contains(c.Message, want.msg) {
			t.Errorf("%s: %s %q, want %s saying %q", name, c.Reason, c.Message, want.reason, want.msg)
		}
	}
}
