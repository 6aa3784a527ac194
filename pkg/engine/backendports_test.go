package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// portTopo: Gateways a..d, each with one HTTPRoute: ra to Service svc on
// port 443 (named https), rb to svc on port 80 (named http), rc to Envoy
// Gateway's Backend be on port 3001, rd to ServiceImport imp (not among
// the objects) on port 8080.
func portTopo() string {
	var b strings.Builder
	for _, g := range "abcd" {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %c, namespace: default}
spec:
  gatewayClassName: x
  listeners: [{name: http, protocol: HTTP, port: 80}]
`, g)
	}
	route := func(name, gw, backend string) {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: default}
spec:
  parentRefs: [{name: %s}]
  rules: [{backendRefs: [%s]}]
`, name, gw, backend)
	}
	route("ra", "a", "{name: svc, port: 443}")
	route("rb", "b", "{name: svc, port: 80}")
	route("rc", "c", "{group: gateway.envoyproxy.io, kind: Backend, name: be, port: 3001}")
	route("rd", "d", "{group: multicluster.x-k8s.io, kind: ServiceImport, name: imp, port: 8080}")
	b.WriteString(`---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{name: https, port: 443}, {name: http, port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: be, namespace: default}
spec: {endpoints: [{ip: {address: 10.0.0.1, port: 3001}}]}
`)
	return b.String()
}

// sectionBTLSP is a BackendTLSPolicy on section of an object of group and
// kind (no section when "").
func sectionBTLSP(name, group, kind, obj, section string) string {
	ref := fmt.Sprintf("{group: %q, kind: %s, name: %s", group, kind, obj)
	if section != "" {
		ref += ", sectionName: " + section
	}
	return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0,
		"targetRefs: ["+ref+"}]\nvalidation: {hostname: x.example, wellKnownCACertificates: System}")
}

// A policy on a backend's port takes effect through the routes whose
// backendRefs use that port only (GEP-1897; Envoy Gateway matches a
// Service port by name, its Backend's by number): its ancestors are their
// Gateways. A policy on the whole backend, through every route.
func TestGatewayAncestorsFollowBackendPorts(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	docs := []string{btls, portTopo(),
		sectionBTLSP("https", "", "Service", "svc", "https"),
		sectionBTLSP("http", "", "Service", "svc", "http"),
		sectionBTLSP("whole", "", "Service", "svc", ""),
		sectionBTLSP("be-3001", "gateway.envoyproxy.io", "Backend", "be", `"3001"`),
		sectionBTLSP("be-3002", "gateway.envoyproxy.io", "Backend", "be", `"3002"`),
		// The ServiceImport is not among the objects: its port names
		// are unknown, so every route to it counts.
		sectionBTLSP("imp-http", "multicluster.x-k8s.io", "ServiceImport", "imp", "http"),
	}
	res := compute(t, engine.Options{}, docs...)
	gw := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "Gateway.gateway.networking.k8s.io default/"+n+"=Accepted")
		}
		return out
	}
	for name, wantAnc := range map[string][]string{
		"https":   gw("a"),
		"http":    gw("b"),
		"whole":   gw("a", "b"),
		"be-3001": gw("c"),
		// Through no Gateway: the target stays the ancestor.
		"be-3002":  {"Backend.gateway.envoyproxy.io default/be#3002=Accepted"},
		"imp-http": gw("d"),
	} {
		want(t, name+" ancestors", ancestorsOf(t, res, name), wantAnc)
	}

	// With the ServiceImport read, its port 8080 is named grpc: the policy
	// on its http port takes effect nowhere.
	imp := `---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: imp, namespace: default}
spec: {ports: [{name: grpc, port: 8080}]}
`
	res = compute(t, engine.Options{}, append(docs, imp)...)
	want(t, "imp-http ancestors, ServiceImport read", ancestorsOf(t, res, "imp-http"), []string{"ServiceImport.multicluster.x-k8s.io default/imp#http=Accepted"})

	// Incremental: the ServiceImport appearing changes the ancestors as
	// Compute says.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	next := decodeDocs(t, append(docs, imp)...)
	if got, wantDump := dump(t, in.Compute(next)), dump(t, engine.Compute(next, engine.Options{})); got != wantDump {
		t.Fatal(firstDiff(got, wantDump))
	}
}
