package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/profiles"
)

// ngfCRD is a CRD of NGF's group that keeps whatever its objects hold,
// labelled as a policy kind of the given class ("" for none).
func ngfCRD(kind, plural, version, class string) string {
	labels := ""
	if class != "" {
		labels = fmt.Sprintf("\n  labels: {%s: %s}", PolicyLabel, class)
	}
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.gateway.nginx.org%s
spec:
  group: gateway.nginx.org
  scope: Namespaced
  names: {kind: %s, plural: %s, singular: %s, listKind: %sList}
  versions:
  - name: %s
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, plural, labels, kind, plural, strings.ToLower(kind), kind, version)
}

// ngfProxyObjects: NGF's GatewayClass ngf naming NginxProxy ngf/proxy
// (exporter endpoint set, tracing disabled, and deployment settings);
// Gateway g1 running with it, g2 with its own NginxProxy ngf/own that
// empties disabledFeatures; an ObservabilityPolicy on a route of each.
const ngfProxyObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: ngf}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ngf}
spec:
  controllerName: ` + profiles.NGFController + `
  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: proxy, namespace: ngf, labels: {team: edge}}
spec:
  kubernetes: {deployment: {replicas: 2}}
  telemetry: {exporter: {endpoint: "otel.ngf:4317", interval: 5s}, disabledFeatures: [DisableTracing], serviceName: edge}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: own, namespace: ngf}
spec:
  telemetry: {disabledFeatures: []}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: ngf}
spec:
  gatewayClassName: ngf
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: ngf}
spec:
  gatewayClassName: ngf
  infrastructure: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: own}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: ngf}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: ngf}
spec:
  parentRefs: [{name: g2}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: ngf}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: on-r1, namespace: ngf}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  tracing: {strategy: ratio, ratio: 10}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: ObservabilityPolicy
metadata: {name: on-r2, namespace: ngf}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]
  tracing: {strategy: parent}
`

// TestReadNginxProxies: with NGF's ObservabilityPolicy (a kind whose
// policies need telemetry enabled in the NginxProxy a Gateway runs with),
// Read gets the NginxProxies that GatewayClasses and Gateways name,
// trimmed to the telemetry fields read. The engine then finds the policy
// through g1 (the class's NginxProxy disables tracing) not accepted
// (NGF's reason NginxProxyConfigNotSet) and the
// one through g2 (its own empties disabledFeatures) Accepted. A reader
// that may not get NginxProxies gets a note, and nothing is judged of
// them.
func TestReadNginxProxies(t *testing.T) {
	dir := t.TempDir()
	crds := []string{}
	for _, c := range []struct{ kind, plural, version, class string }{
		{"NginxProxy", "nginxproxies", "v1alpha2", ""},
		{"ObservabilityPolicy", "observabilitypolicies", "v1alpha2", "direct"},
	} {
		f := filepath.Join(dir, c.plural+".yaml")
		if err := os.WriteFile(f, []byte(ngfCRD(c.kind, c.plural, c.version, c.class)), 0o600); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, f)
	}
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), crds...)...))
	file := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(file, []byte(ngfProxyObjects), 0o600); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)

	// check computes the snapshot and compares each policy's Accepted
	// reason, and the refused one's message.
	check := func(t *testing.T, snap *Snapshot, want map[string]string) {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{})
		for name, reason := range want {
			ps := res.PolicyStatus(ref("gateway.nginx.org", "ObservabilityPolicy", "ngf", name))
			if ps == nil || len(ps.Ancestors) != 1 || len(ps.Ancestors[0].Conditions) == 0 {
				t.Errorf("ObservabilityPolicy ngf/%s: status %+v, want one ancestor", name, ps)
				continue
			}
			c := ps.Ancestors[0].Conditions[0]
			if c.Reason != reason {
				t.Errorf("ObservabilityPolicy ngf/%s: %s %q, want %s", name, c.Reason, c.Message, reason)
			}
			if msg := "spec.tracing: does not work with spec.telemetry.disabledFeatures[] of NginxProxy ngf/proxy, which Gateway ngf/g1 runs with"; reason == "NginxProxyConfigNotSet" && !strings.Contains(c.Message, msg) {
				t.Errorf("ObservabilityPolicy ngf/%s: message %q, want it to say %q", name, c.Message, msg)
			}
		}
	}

	t.Run("Admin", func(t *testing.T) {
		// The telemetry fields read only.
		snap := readParameters(t, env, "gateway.nginx.org/v1alpha2", "NginxProxy", map[string]string{
			"proxy": "map[telemetry:map[disabledFeatures:[DisableTracing] exporter:map[endpoint:otel.ngf:4317]]]",
			"own":   "map[telemetry:map[disabledFeatures:[]]]"})
		check(t, snap, map[string]string{"on-r1": "NginxProxyConfigNotSet", "on-r2": "Accepted"})
	})

	t.Run("CannotGetNginxProxies", func(t *testing.T) {
		snap := readAs(t, env, "nell", "reader-without-nginxproxies", []string{"namespaces", "services", "configmaps"}, []string{"list"},
			rbacv1.PolicyRule{APIGroups: []string{"gateway.nginx.org"}, Resources: []string{"observabilitypolicies"}, Verbs: []string{"list"}})
		want := []string{
			"gateway.nginx.org NginxProxy ngf/own: cannot get (forbidden); what policies need of it is not judged (named by Gateway ngf/g2)",
			"gateway.nginx.org NginxProxy ngf/proxy: cannot get (forbidden); what policies need of it is not judged (named by GatewayClass ngf)",
		}
		if !slices.Equal(snap.Notes, want) {
			t.Errorf("Notes:\n%s\nwant:\n%s", strings.Join(snap.Notes, "\n"), strings.Join(want, "\n"))
		}
		check(t, snap, map[string]string{"on-r1": "Accepted", "on-r2": "Accepted"})
	})
}
