package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// unrankedTopo: Gateways g1 and g2 of classes c1 and c2, HTTPRoute r1 on
// g1 sending to Service s1's port http (80), and HTTPRoute r2 on g2
// sending to s1's port r2Port.
func unrankedTopo(ctl1, ctl2 string, r2Port int) string {
	return classDoc("c1", ctl1, "") + classDoc("c2", ctl2, "") +
		gatewayDoc("g1", "c1", "[{name: http, protocol: HTTP, port: 80}]", "") +
		gatewayDoc("g2", "c2", "[{name: http, protocol: HTTP, port: 80}]", "") + fmt.Sprintf(`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: default}
spec:
  parentRefs: [{name: g2}]
  rules: [{backendRefs: [{name: s1, port: %d}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}, {name: grpc, port: 9000}]}
`, r2Port)
}

// btls is BackendTLSPolicy name on Service s1 (on its port section when
// not ""), created min minutes in, checking hostname host.
func btls(name string, min int, section, host string) string {
	ref := `{group: "", kind: Service, name: s1`
	if section != "" {
		ref += ", sectionName: " + section
	}
	return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, min, "targetRefs: ["+ref+"}]\nvalidation: {hostname: "+host+"}")
}

func s1Port(p string) topology.Ref {
	return topology.Ref{Kind: "Service", Namespace: "default", Name: "s1", SectionName: p}
}

// At NGINX Gateway Fabric's Gateways, a BackendTLSPolicy on a Service port
// does not beat one on the whole Service: of those covering the port the
// oldest wins, and the others are Conflicted, "Conflicts with another
// BackendTLSPolicy targeting the same Service". Elsewhere (Gateway API's
// reading, Envoy Gateway's) the port's wins there and both are Accepted
// (gateway-api conformance BackendTLSPolicyConflictResolution).
// Source: NGF e55bfe339 internal/controller/state/graph/backend_refs.go
// (selectBackendTLSPolicyForService: every policy whose targetRef is the
// Service with no sectionName or the port's name; sort.LessClientObject;
// findBackendTLSPolicyForService: NewPolicyConflicted on the losers).
func TestNGFBackendTLSPolicySectionsUnranked(t *testing.T) {
	crdDoc := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	ngf, eg := profiles.NGFController, profiles.EnvoyGatewayController
	g1 := "Gateway.gateway.networking.k8s.io default/g1"
	g2 := "Gateway.gateway.networking.k8s.io default/g2"

	t.Run("older on the Service beats the newer on the port", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(ngf, ngf, 9000), btls("whole", 0, "", "a.example"), btls("port", 1, "http", "b.example"))
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"a.example"}}`})
		want(t, "grpc", effective(t, res, "BackendTLSPolicy", s1Port("grpc")), []string{`{"validation":{"hostname":"a.example"}}`})
		want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
		// NGF names every Gateway whose routes use the Service as an
		// ancestor of a policy on one of its ports (g2 uses grpc only),
		// with the policy's conditions.
		want(t, "port's ancestors", ancestorsOf(t, res, "port"), []string{g1 + "=Conflicted", g2 + "=Conflicted"})
		for gw, m := range acceptedMessages(t, res, "port") {
			if !strings.Contains(m, "Conflicts with the established BackendTLSPolicy default/whole (on Service default/s1)") {
				t.Errorf("port's message at %s %q", gw, m)
			}
		}
	})

	t.Run("older on the port: the newer on the Service loses through g1, wins through g2", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(ngf, ngf, 9000), btls("port", 0, "http", "b.example"), btls("whole", 1, "", "a.example"))
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"b.example"}}`})
		want(t, "grpc", effective(t, res, "BackendTLSPolicy", s1Port("grpc")), []string{`{"validation":{"hostname":"a.example"}}`})
		want(t, "port", status(t, res, "port", "Accepted"), "True/Accepted")
		want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{g1 + "=Conflicted", g2 + "=Accepted"})
		if m := acceptedMessages(t, res, "whole")[g1]; !strings.Contains(m, "Conflicts with the established BackendTLSPolicy default/port on Service default/s1#http (it is older), at every one of the ports used through Gateway default/g1:") {
			t.Errorf("whole's message at g1 %q", m)
		}
	})

	t.Run("older on the port, the only port used: the newer on the Service is Conflicted", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(ngf, ngf, 80), btls("port", 0, "http", "b.example"), btls("whole", 1, "", "a.example"))
		want(t, "whole", status(t, res, "whole", "Accepted"), "False/Conflicted")
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{g1 + "=Conflicted", g2 + "=Conflicted"})
		for gw, m := range acceptedMessages(t, res, "whole") {
			if !strings.Contains(m, "at every one of the ports used through a Gateway") {
				t.Errorf("whole's message at %s %q", gw, m)
			}
		}
	})

	t.Run("Envoy Gateway's Gateways: the port's wins there, neither Conflicted", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(eg, eg, 9000), btls("whole", 0, "", "a.example"), btls("port", 1, "http", "b.example"))
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"b.example"}}`})
		want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
		want(t, "port", status(t, res, "port", "Accepted"), "True/Accepted")
	})

	t.Run("a port used through Gateways of both: Gateway API's reading", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(ngf, eg, 80), btls("whole", 0, "", "a.example"), btls("port", 1, "http", "b.example"))
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"b.example"}}`})
		want(t, "port", status(t, res, "port", "Accepted"), "True/Accepted")
	})

	t.Run("the CRD's annotation turns it off", func(t *testing.T) {
		c := strings.Replace(crdDoc, "metadata: {name: backendtlspolicies.gateway.networking.k8s.io}", `metadata:
  name: backendtlspolicies.gateway.networking.k8s.io
  annotations: {attache.dev/direct-sections: "true"}`, 1)
		if c == crdDoc {
			t.Fatalf("CRD document not annotated:\n%s", crdDoc)
		}
		res := compute(t, engine.Options{}, c, unrankedTopo(ngf, ngf, 9000), btls("whole", 0, "", "a.example"), btls("port", 1, "http", "b.example"))
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"b.example"}}`})
		want(t, "port", status(t, res, "port", "Accepted"), "True/Accepted")
	})

	// NGF matches a port policy by the port's name: one naming an unnamed
	// port by its number never applies, and the Service's stands there.
	t.Run("an unnamed port takes only the Service's", func(t *testing.T) {
		topo := strings.Replace(unrankedTopo(ngf, ngf, 9000), "{name: http, port: 80}", "{port: 80}", 1)
		res := compute(t, engine.Options{}, crdDoc, topo, btls("port", 0, `"80"`, "b.example"), btls("whole", 1, "", "a.example"))
		want(t, "80", effective(t, res, "BackendTLSPolicy", s1Port("80")), []string{`{"validation":{"hostname":"a.example"}}`})
		want(t, "whole", status(t, res, "whole", "Accepted"), "True/Accepted")
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{g1 + "=Accepted", g2 + "=Accepted"})
	})

	// A policy naming both the Service and its port meets itself once
	// (NGF: Accepted, its Conflicted condition replaced by the later
	// Accepted), and still beats a newer one.
	t.Run("one policy on the Service and its port", func(t *testing.T) {
		both := pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "both", 0,
			"targetRefs: [{group: \"\", kind: Service, name: s1}, {group: \"\", kind: Service, name: s1, sectionName: http}]\nvalidation: {hostname: a.example}")
		res := compute(t, engine.Options{}, crdDoc, unrankedTopo(ngf, ngf, 9000), both, btls("port", 1, "http", "b.example"))
		want(t, "both", status(t, res, "both", "Accepted"), "True/Accepted")
		for _, m := range acceptedMessages(t, res, "both") {
			if strings.Contains(m, "Conflicts") {
				t.Errorf("both conflicts with itself: %q", m)
			}
		}
		if p := status(t, res, "both", "Programmed"); p != "True/Programmed" {
			t.Errorf("both Programmed %s", p)
		}
		want(t, "http", effective(t, res, "BackendTLSPolicy", s1Port("http")), []string{`{"validation":{"hostname":"a.example"}}`})
		want(t, "port", status(t, res, "port", "Accepted"), "False/Conflicted")
	})

	t.Run("Incremental agrees", func(t *testing.T) {
		topo := unrankedTopo(ngf, ngf, 9000)
		incrementalAgrees(t, engine.Options{},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example")},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example"), btls("port", 0, "http", "b.example")},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example"), btls("port", 2, "http", "b.example")},
			[]string{crdDoc, topo, btls("port", 2, "http", "b.example")},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example"), btls("port", 0, "http", "b.example")},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example"), pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "both", 0,
				"targetRefs: [{group: \"\", kind: Service, name: s1}, {group: \"\", kind: Service, name: s1, sectionName: http}]\nvalidation: {hostname: c.example}")},
			[]string{crdDoc, topo, btls("whole", 1, "", "a.example")})
		unnamed := strings.Replace(topo, "{name: http, port: 80}", "{port: 80}", 1)
		incrementalAgrees(t, engine.Options{},
			[]string{crdDoc, unnamed, btls("whole", 1, "", "a.example")},
			[]string{crdDoc, unnamed, btls("whole", 1, "", "a.example"), btls("port", 0, `"80"`, "b.example")},
			[]string{crdDoc, unnamed, btls("port", 0, `"80"`, "b.example")})
	})
}

// acceptedMessages returns the Accepted message of each of policy name's
// ancestor entries, by ancestor.
func acceptedMessages(t *testing.T, res *engine.Result, name string) map[string]string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		out := map[string]string{}
		for _, a := range ps.Ancestors {
			for _, c := range a.Conditions {
				if c.Type == "Accepted" {
					out[a.Ref.String()] = c.Message
				}
			}
		}
		return out
	}
	t.Fatalf("no policy %s", name)
	return nil
}

// NGINX Gateway Fabric names the ancestors of a BackendTLSPolicy as its
// Gateways, objects without the sectionName of the routes' parentRefs,
// each of them whose routes use the Service, whatever the port
// (addGatewaysForBackendTLSPolicies, collectOrderedGateways over
// ReferencedService.GatewayNsNames; PrepareBackendTLSPolicyRequests);
// Envoy Gateway's Gateways keep the parentRefs as written.
// Source: NGF e55bfe339 internal/controller/state/graph/backend_tls_policy.go,
// internal/controller/status/prepare_requests.go.
func TestNGFBackendTLSPolicyAncestors(t *testing.T) {
	crdDoc := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	ngf, eg := profiles.NGFController, profiles.EnvoyGatewayController
	withSections := func(ctl1, ctl2 string) string {
		return strings.ReplaceAll(unrankedTopo(ctl1, ctl2, 9000), "parentRefs: [{name: g", "parentRefs: [{sectionName: http, name: g")
	}
	t.Run("NGF: Gateways as objects, every one using the Service", func(t *testing.T) {
		topo := withSections(ngf, ngf)
		if !strings.Contains(topo, "sectionName: http, name: g2") {
			t.Fatalf("topology without sectionNames:\n%s", topo)
		}
		res := compute(t, engine.Options{}, crdDoc, topo, btls("port", 0, "http", "b.example"))
		want(t, "port's ancestors", ancestorsOf(t, res, "port"), []string{
			"Gateway.gateway.networking.k8s.io default/g1=Accepted", "Gateway.gateway.networking.k8s.io default/g2=Accepted"})
		res = compute(t, engine.Options{}, crdDoc, topo, btls("whole", 0, "", "a.example"))
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{
			"Gateway.gateway.networking.k8s.io default/g1=Accepted", "Gateway.gateway.networking.k8s.io default/g2=Accepted"})
	})
	t.Run("Envoy Gateway: the parentRefs of the routes using the port", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, withSections(eg, eg), btls("port", 0, "http", "b.example"))
		want(t, "port's ancestors", ancestorsOf(t, res, "port"), []string{"Gateway.gateway.networking.k8s.io default/g1#http=Accepted"})
	})
	t.Run("a route on another port adds its Gateway, in Incremental too", func(t *testing.T) {
		topo := withSections(ngf, ngf)
		i := strings.Index(topo, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r2")
		j := strings.Index(topo, "---\napiVersion: v1\nkind: Service")
		if i < 0 || j < i {
			t.Fatalf("cannot cut route r2 out of:\n%s", topo)
		}
		without := topo[:i] + topo[j:]
		p := btls("port", 0, "http", "b.example")
		want(t, "without r2", ancestorsOf(t, compute(t, engine.Options{}, crdDoc, without, p), "port"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
		incrementalAgrees(t, engine.Options{}, []string{crdDoc, without, p}, []string{crdDoc, topo, p}, []string{crdDoc, without, p})
	})
	// NGF writes no status for a policy none of its routes selects: a
	// port no route of its Gateways uses, or an unnamed one (NGF matches
	// a port policy by the port's name); attache keeps its own reading.
	t.Run("a port NGF does not use: entries as before", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, withSections(eg, ngf), btls("port", 0, "http", "b.example"))
		want(t, "port's ancestors", ancestorsOf(t, res, "port"), []string{"Gateway.gateway.networking.k8s.io default/g1#http=Accepted"})
		res = compute(t, engine.Options{}, crdDoc, strings.ReplaceAll(withSections(ngf, ngf), "port: 9000}]}]", "port: 80}]}]"), btls("grpc", 0, "grpc", "b.example"))
		want(t, "unused port's ancestors", ancestorsOf(t, res, "grpc"), []string{"Service default/s1#grpc=Accepted"})
	})
	t.Run("both: each Gateway named as its implementation names it", func(t *testing.T) {
		res := compute(t, engine.Options{}, crdDoc, withSections(ngf, eg), btls("port", 0, "http", "b.example"))
		want(t, "port's ancestors", ancestorsOf(t, res, "port"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
		res = compute(t, engine.Options{}, crdDoc, withSections(eg, ngf), btls("whole", 0, "", "a.example"))
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{
			"Gateway.gateway.networking.k8s.io default/g1#http=Accepted", "Gateway.gateway.networking.k8s.io default/g2=Accepted"})
	})
}
