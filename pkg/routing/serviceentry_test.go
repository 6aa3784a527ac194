package routing_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
)

// egress: namespace egress with waypoint egress/waypoint and ServiceEntry
// api (hosts api.example.com and *.api.example.com; ports 80 HTTP and
// 443 TLS) bound to it; an HTTPRoute on the ServiceEntry's port 80 sends
// /v2 to Service egress/v2; AuthorizationPolicies on the ServiceEntry
// (deny /admin) and on the waypoint (GET only). ServiceEntry other, in
// namespace shop, lists api.example.com too; ServiceEntry direct is bound
// to no waypoint.
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
metadata: {name: api, namespace: egress, labels: {istio.io/use-waypoint: waypoint}}
spec:
  hosts: [api.example.com, "*.api.example.com"]
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: tls, protocol: TLS}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: other, namespace: shop}
spec:
  hosts: [api.example.com]
  ports: [{number: 80, name: http, protocol: HTTP}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: direct, namespace: egress}
spec:
  hosts: [direct.example.com]
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
	// A wildcard host, on the TLS port: proxied as TCP to the ServiceEntry.
	tr = meshTrace(t, ix, pols, "tcp://eu.api.example.com:443", "egress")
	if o := tr.Outcomes[0]; tr.Mesh.Service.Name != "api" || tr.Mesh.Protocol != "TLS" || o.Result != routing.ResultForwarded || len(o.Backends) != 1 || o.Backends[0].Ref.Kind != "ServiceEntry" {
		t.Errorf("wildcard tcp: mesh %+v outcome %+v", tr.Mesh, o)
	}
	// From namespace shop, its own ServiceEntry for the host is taken, bound
	// to no waypoint; the other is named in a note.
	tr = meshTrace(t, ix, pols, "http://api.example.com/v2", "shop")
	if o := tr.Outcomes[0]; tr.Mesh.Service.Namespace != "shop" || o.Gateway.Name != "" || !strings.Contains(strings.Join(o.Notes, ";"), "also a host of ServiceEntry egress/api") {
		t.Errorf("from shop: mesh %+v outcome %+v", tr.Mesh, o)
	}
	// A ServiceEntry bound to no waypoint: ztunnel sends the connection on.
	if tr := meshTrace(t, ix, pols, "http://direct.example.com/", "egress"); tr.Mesh.Unbound == "" || tr.Outcomes[0].Gateway.Name != "" {
		t.Errorf("direct: %+v", tr.Mesh)
	}
	// A port the ServiceEntry lacks is an error naming it.
	if _, err := meshTraceErr(ix, pols, "http://api.example.com:8080/", "egress"); err == nil || !strings.Contains(err.Error(), "ServiceEntry egress/api has no port 8080 (its ports: 80, 443)") {
		t.Errorf("port 8080: %v", err)
	}
}
