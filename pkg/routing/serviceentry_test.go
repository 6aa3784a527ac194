package routing_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// egress: namespace egress with waypoint egress/waypoint and ServiceEntry
// api (hosts api.example.com and *.api.example.com; ports 80 HTTP and
// 443 TLS; resolution DNS) bound to it; an HTTPRoute on the
// ServiceEntry's port 80 sends /v2 to Service egress/v2, and one naming
// ServiceEntry alias (host api.example.com, no address) sends /extra to
// it; AuthorizationPolicies on the ServiceEntry (deny /admin) and on the
// waypoint (GET only). ServiceEntry other, in namespace shop, lists
// api.example.com too; ServiceEntry direct is bound to no waypoint;
// ServiceEntry dyn (*.dyn.example.com, DYNAMIC_DNS, ports 80 HTTP and
// 443 TLS) is bound to the waypoint; ServiceEntries old and new, in
// namespaces a and b, list shared.example.com (old is older); quiet (no
// address, the oldest) and loud in namespace a and far in b list
// shadow.example.com; and wild,
// in namespace b, *.example.org (with spec.addresses).
const egress = meshCRDs + `
---
apiVersion: v1
kind: Namespace
metadata: {name: egress}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: egress}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: egress, labels: {istio.io/use-waypoint: waypoint}, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  hosts: [api.example.com, "*.api.example.com"]
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: tls, protocol: TLS}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: alias, namespace: egress, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  hosts: [api.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: other, namespace: shop}
spec:
  hosts: [api.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: direct, namespace: egress}
spec:
  hosts: [direct.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: dyn, namespace: egress, labels: {istio.io/use-waypoint: waypoint}}
spec:
  hosts: ["*.dyn.example.com"]
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: tls, protocol: TLS}, {number: 8443, name: https, protocol: HTTPS}]
  resolution: DYNAMIC_DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: new, namespace: b, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  hosts: [shared.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: old, namespace: a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  hosts: [shared.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: quiet, namespace: a, creationTimestamp: "2025-12-01T00:00:00Z"}
spec:
  hosts: [shadow.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: loud, namespace: a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  hosts: [shadow.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: far, namespace: b, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  hosts: [shadow.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: wild, namespace: b}
spec:
  hosts: ["*.example.org"]
  addresses: [240.0.0.9]
  ports: [{number: 80, name: http, protocol: HTTP}]
---
apiVersion: v1
kind: Service
metadata: {name: v2, namespace: egress}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: egress}
spec:
  parentRefs: [{group: networking.istio.io, kind: ServiceEntry, name: api, port: 80}]
  rules:
  - name: v2
    matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: v2, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: extra, namespace: egress}
spec:
  parentRefs: [{group: networking.istio.io, kind: ServiceEntry, name: alias}]
  rules:
  - name: extra
    matches: [{path: {type: PathPrefix, value: /extra}}]
    backendRefs: [{name: v2, port: 80}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: no-admin, namespace: egress}
spec:
  targetRefs: [{group: networking.istio.io, kind: ServiceEntry, name: api}]
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin*"]}}]}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: get-only, namespace: egress}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: waypoint}]
  action: ALLOW
  rules: [{to: [{operation: {methods: [GET]}}]}]
`

// A mesh request to a ServiceEntry's host goes through the ServiceEntry's
// waypoint: its GAMMA routes (parentRef the ServiceEntry) route it, and
// the AuthorizationPolicies on the ServiceEntry and the waypoint decide
// it (istiod applies them there as for a Service).
func TestMeshServiceEntryHost(t *testing.T) {
	ix, pols := fixture(t, egress)
	tr := meshTrace(t, ix, pols, "http://api.example.com/v2/x", "egress")
	if tr.Mesh.Service.Kind != "ServiceEntry" || tr.Mesh.Service.Name != "api" || tr.Mesh.Protocol != "HTTP" {
		t.Fatalf("mesh %+v", tr.Mesh)
	}
	o := tr.Outcomes[0]
	if o.Gateway.Name != "waypoint" || o.Route == nil || o.Route.Name != "api" || o.Rule != "v2" {
		t.Fatalf("outcome %+v", o)
	}
	want(t, "backends", backendNames(o), []string{"egress/v2:80"})
	want(t, "policies", policyKeys(o), []string{"AuthorizationPolicy:api=get-only+no-admin"})
	if o.Authorization == nil || o.Authorization.Verdict != "allow" {
		t.Errorf("authorization %+v", o.Authorization)
	}
	if o := meshTrace(t, ix, pols, "http://api.example.com/admin", "egress").Outcomes[0]; o.Authorization == nil || o.Authorization.Verdict != "deny" {
		t.Errorf("/admin: authorization %+v", o.Authorization)
	}

	// No route matches /: istiod answers 404 there, as for a Service with
	// routes on the port.
	if o := meshTrace(t, ix, pols, "http://api.example.com/", "egress").Outcomes[0]; o.Result != routing.ResultNotFound {
		t.Errorf("/: %+v", o)
	}
	// A route naming another ServiceEntry whose host overlaps applies at
	// the waypoint (istiod compares the VirtualServices' hosts).
	if o := meshTrace(t, ix, pols, "http://api.example.com/extra", "egress").Outcomes[0]; o.Route == nil || o.Route.Name != "extra" {
		t.Errorf("/extra: %+v", o)
	}
	// A wildcard host with resolution DNS has no address: ztunnel's DNS
	// proxy does not answer for it, so the connection goes out as it is,
	// through no waypoint.
	tr = meshTrace(t, ix, pols, "tcp://eu.api.example.com:443", "egress")
	if o := tr.Outcomes[0]; tr.Mesh.Service.Name != "api" || o.Gateway.Name != "" || !strings.Contains(tr.Mesh.Unbound, "host *.api.example.com of ServiceEntry egress/api has no address (*.api.example.com is a wildcard host and resolution is DNS") {
		t.Errorf("wildcard tcp: mesh %+v outcome %+v", tr.Mesh, o)
	}
	// A wildcard DYNAMIC_DNS host has one: its HTTP port reaches the
	// waypoint; its TLS port has no filter chain there.
	tr = meshTrace(t, ix, pols, "http://x.dyn.example.com/", "egress")
	if o := tr.Outcomes[0]; tr.Mesh.Service.Name != "dyn" || tr.Mesh.Unbound != "" || o.Gateway.Name != "waypoint" || o.Result != routing.ResultForwarded {
		t.Errorf("dyn http: mesh %+v outcome %+v", tr.Mesh, o)
	}
	tr = meshTrace(t, ix, pols, "tcp://x.dyn.example.com:443", "egress")
	if o := tr.Outcomes[0]; o.Gateway.Name != "waypoint" || o.Result != routing.ResultError || !strings.Contains(o.Reason, "no filter chain for TLS port of wildcard host *.dyn.example.com") {
		t.Errorf("dyn tls: outcome %+v", o)
	}
	tr = meshTrace(t, ix, pols, "tcp://x.dyn.example.com:8443", "egress")
	if o := tr.Outcomes[0]; o.Result != routing.ResultError || !strings.Contains(o.Reason, "no filter chain for HTTPS port") {
		t.Errorf("dyn https: outcome %+v", o)
	}
	// Of ServiceEntries in other namespaces, the oldest; a host listed
	// exactly wins over a wildcard covering it.
	tr = meshTrace(t, ix, pols, "http://shared.example.com/", "egress")
	if tr.Mesh.Service.Namespace != "a" || !strings.Contains(strings.Join(tr.Outcomes[0].Notes, ";"), "also a host of ServiceEntry b/new") {
		t.Errorf("shared from egress: mesh %+v notes %v", tr.Mesh, tr.Outcomes[0].Notes)
	}
	if tr := meshTrace(t, ix, pols, "http://shared.example.com/", "b"); tr.Mesh.Service.Name != "new" {
		t.Errorf("shared from b: mesh %+v", tr.Mesh)
	}
	// istiod keeps one ServiceEntry per namespace, the oldest, before
	// ztunnel drops those without an address: quiet shadows loud, and the
	// request from namespace a goes to b's.
	if tr := meshTrace(t, ix, pols, "http://shadow.example.com/", "a"); tr.Mesh.Service.Name != "far" {
		t.Errorf("shadow from a: mesh %+v", tr.Mesh)
	}
	if tr := meshTrace(t, ix, pols, "http://www.example.org/", "egress"); tr.Mesh.Service.Name != "wild" || tr.Mesh.Unbound == "" || strings.Contains(tr.Mesh.Unbound, "no address") {
		t.Errorf("wildcard with spec.addresses: mesh %+v", tr.Mesh)
	}
	// From namespace shop, its own ServiceEntry for the host is taken, bound
	// to no waypoint; the other is named in a note.
	tr = meshTrace(t, ix, pols, "http://api.example.com/v2", "shop")
	if o := tr.Outcomes[0]; tr.Mesh.Service.Namespace != "shop" || o.Gateway.Name != "" || !strings.Contains(strings.Join(o.Notes, ";"), "also a host of ServiceEntry egress/alias, egress/api") {
		t.Errorf("from shop: mesh %+v outcome %+v", tr.Mesh, o)
	}
	// A ServiceEntry bound to no waypoint: ztunnel sends the connection on.
	if tr := meshTrace(t, ix, pols, "http://direct.example.com/", "egress"); !strings.Contains(tr.Mesh.Unbound, "istio.io/use-waypoint") || tr.Outcomes[0].Gateway.Name != "" {
		t.Errorf("direct: %+v", tr.Mesh)
	}
	// A port the ServiceEntry lacks is an error naming it.
	if _, err := meshTraceErr(ix, pols, "http://api.example.com:8080/", "egress"); err == nil || !strings.Contains(err.Error(), "ServiceEntry egress/api has no port 8080 (its ports: 80, 443)") {
		t.Errorf("port 8080: %v", err)
	}
}

// egressGateway: an Istio egress Gateway (class istio) whose HTTPRoute
// sends /cnn to Hostname edition.cnn.com (a ServiceEntry's host), /missing
// to a host no ServiceEntry lists and /svc to a Service's cluster name;
// HTTPRoute ns sends /ns to a Hostname with a namespace (empty: istiod
// refuses any), and HTTPRoute noport /noport to Service local without a
// port, both of which istiod refuses.
const egressGateway = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: egress, namespace: istio-egress}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: cnn, namespace: istio-egress}
spec:
  hosts: [edition.cnn.com]
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: DNS
---
apiVersion: v1
kind: Service
metadata: {name: local, namespace: shop}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: out, namespace: istio-egress}
spec:
  parentRefs: [{name: egress}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /cnn}}]
    backendRefs: [{group: networking.istio.io, kind: Hostname, name: edition.cnn.com, port: 443}]
  - matches: [{path: {type: PathPrefix, value: /missing}}]
    backendRefs: [{group: networking.istio.io, kind: Hostname, name: nowhere.example.com, port: 443}]
  - matches: [{path: {type: PathPrefix, value: /svc}}]
    backendRefs: [{group: networking.istio.io, kind: Hostname, name: local.shop.svc.cluster.local, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ns, namespace: istio-egress}
spec:
  parentRefs: [{name: egress}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ns}}]
    backendRefs: [{group: networking.istio.io, kind: Hostname, namespace: "", name: edition.cnn.com, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: noport, namespace: istio-egress}
spec:
  parentRefs: [{name: egress}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /noport}}]
    backendRefs: [{name: local}]
`

// At istiod's Gateways a backendRef of kind Hostname (networking.istio.io)
// names a ServiceEntry's host or a Service's cluster name; elsewhere it is
// an unknown kind.
func TestIstioHostnameBackends(t *testing.T) {
	ix, pols := fixture(t, egressGateway)
	gw := &topology.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "istio-egress", Name: "egress"}
	o := trace(t, ix, pols, "http://any.example/cnn", gw).Outcomes[0]
	if o.Result != routing.ResultForwarded || len(o.Backends) != 1 || o.Backends[0].Invalid != "" ||
		o.Backends[0].Ref != (topology.Ref{Group: "networking.istio.io", Kind: "Hostname", Name: "edition.cnn.com"}) || o.Backends[0].Port != 443 {
		t.Errorf("/cnn: %+v", o)
	}
	if o := trace(t, ix, pols, "http://any.example/svc", gw).Outcomes[0]; o.Result != routing.ResultForwarded {
		t.Errorf("/svc: %+v", o)
	}
	if o := trace(t, ix, pols, "http://any.example/missing", gw).Outcomes[0]; o.Result != routing.ResultError || o.Status != 500 || len(o.Backends) != 1 ||
		!strings.Contains(o.Backends[0].Invalid, "no ServiceEntry among the objects lists host nowhere.example.com") {
		t.Errorf("/missing: %+v", o)
	}
	// A Hostname with a namespace, or a Service backend without port, is a
	// hard error of istiod's conversion: the whole route gives nothing.
	for path, why := range map[string]string{
		"/ns":     "backendRef edition.cnn.com of rule rule-1: namespace may not be set with Hostname type, so it drops the whole route",
		"/noport": "backendRef local of rule rule-1: port is required in backendRef, so it drops the whole route",
	} {
		tr := trace(t, ix, pols, "http://any.example"+path, gw)
		if o := tr.Outcomes[0]; o.Result != routing.ResultNotFound || o.Route != nil {
			t.Errorf("%s: %+v", path, o)
		}
		found := false
		for _, nm := range tr.NotMatched {
			found = found || strings.Contains(nm.Reason, why)
		}
		if !found {
			t.Errorf("%s: no why-not saying %q in %+v", path, why, tr.NotMatched)
		}
	}
	// Another implementation's Gateway does not read the kind.
	other := strings.Replace(egressGateway, "istio.io/gateway-controller", "example.com/other", 1)
	ix, pols = fixture(t, other)
	if o := trace(t, ix, pols, "http://any.example/cnn", gw).Outcomes[0]; o.Result != routing.ResultError || !strings.Contains(o.Backends[0].Invalid, "InvalidKind") {
		t.Errorf("/cnn at another implementation: %+v", o)
	}
	// There a backendRef without port is an invalid backend (Gateway API).
	if o := trace(t, ix, pols, "http://any.example/noport", gw).Outcomes[0]; o.Result != routing.ResultError || o.Status != 500 || o.Route == nil {
		t.Errorf("/noport at another implementation: %+v", o)
	}
}
