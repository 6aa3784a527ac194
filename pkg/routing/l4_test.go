package routing_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// l4Topology: Gateway g with TCP listener db (port 5432, a hostname,
// which the API says a TCP listener ignores) and UDP listener dns (53);
// TCPRoutes old and new on db (new created later), UDPRoute resolver on
// dns, and TCPRoute split on listener other (6000), sending 3 to a
// Service and 1 to one that does not exist.
const l4Topology = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: db, protocol: TCP, port: 5432, hostname: db.example}
  - {name: dns, protocol: UDP, port: 53}
  - {name: other, protocol: TCP, port: 6000}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: new, namespace: default, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{name: g, sectionName: db}]
  rules: [{backendRefs: [{name: pg-new, port: 5432}]}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: old, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: g, sectionName: db}]
  rules: [{name: only, backendRefs: [{name: pg, port: 5432}]}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: UDPRoute
metadata: {name: resolver, namespace: default}
spec:
  parentRefs: [{name: g, sectionName: dns}]
  rules: [{backendRefs: [{name: coredns, port: 53}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: split, namespace: default}
spec:
  parentRefs: [{name: g, sectionName: other}]
  rules: [{backendRefs: [{name: pg, port: 5432, weight: 3}, {name: gone, port: 5432}]}]
---
apiVersion: v1
kind: Service
metadata: {name: pg, namespace: default}
spec: {ports: [{name: postgres, port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: pg-new, namespace: default}
spec: {ports: [{name: postgres, port: 5432}]}
---
apiVersion: v1
kind: Service
metadata: {name: coredns, namespace: default}
spec: {ports: [{name: dns, port: 53, protocol: UDP}]}
`

// A TCP connection is taken by the TCP listener on its port, whatever its
// host (a TCP listener's hostname is ignored), and by the oldest TCPRoute
// attached there (Gateway API; conformance TCPRouteMultipleRoutesAttachment);
// the newer is listed as not taking it, and why.
func TestTraceTCPOldestRouteTakesTheListener(t *testing.T) {
	ix, pols := fixture(t, l4Topology)
	for _, host := range []string{"db.example", "elsewhere.example"} {
		tr := trace(t, ix, pols, "tcp://"+host+":5432", nil)
		if len(tr.Outcomes) != 1 {
			t.Fatalf("%s: outcomes %+v (noGateway %q)", host, tr.Outcomes, tr.NoGateway)
		}
		o := tr.Outcomes[0]
		if o.Listener != "db" || o.Route == nil || o.Route.Name != "old" || o.Rule != "only" || o.Result != routing.ResultForwarded || o.Status != 0 {
			t.Fatalf("%s: outcome %+v", host, o)
		}
		if len(o.Backends) != 1 || o.Backends[0].Ref.Name != "pg" || o.Backends[0].Port != 5432 || o.UpstreamRequest != nil {
			t.Errorf("%s: backends %+v, upstream %+v", host, o.Backends, o.UpstreamRequest)
		}
		if got := pathString(o.Path); got != "Gateway default/g > Gateway default/g#db > TCPRoute default/old > TCPRoute default/old#only > Service default/pg > Service default/pg#postgres" {
			t.Errorf("%s: path %s", host, got)
		}
		// The newer, then the routes naming other listeners of g.
		if len(tr.NotMatched) != 3 || tr.NotMatched[0].Route.Name != "new" ||
			tr.NotMatched[0].Reason != "precedence: TCPRoute default/old is older: only the oldest TCPRoute attached to a listener takes its connections" ||
			tr.NotMatched[1].Route.Name != "split" || tr.NotMatched[1].Reason != "not attached here: its parentRef names listener other" {
			t.Errorf("%s: not matched %+v", host, tr.NotMatched)
		}
	}
}

// A UDP connection goes to the UDP listener's UDPRoute; a connection to a
// port without a listener of its protocol is taken by none.
func TestTraceUDPAndNoListener(t *testing.T) {
	ix, pols := fixture(t, l4Topology)
	tr := trace(t, ix, pols, "udp://dns.example:53", nil)
	if len(tr.Outcomes) != 1 || tr.Outcomes[0].Route == nil || tr.Outcomes[0].Route.Name != "resolver" || tr.Outcomes[0].Result != routing.ResultForwarded {
		t.Fatalf("udp: %+v", tr.Outcomes)
	}
	tr = trace(t, ix, pols, "tcp://dns.example:53", nil)
	if len(tr.Outcomes) != 0 || !strings.Contains(tr.NoGateway, "no listener on port 53 takes tcp (protocols there: UDP)") {
		t.Errorf("tcp to the UDP port: outcomes %+v, noGateway %q", tr.Outcomes, tr.NoGateway)
	}
	tr = trace(t, ix, pols, "udp://db.example:5432", nil)
	if len(tr.Outcomes) != 0 || !strings.Contains(tr.NoGateway, "takes udp (protocols there: TCP)") {
		t.Errorf("udp to the TCP port: outcomes %+v, noGateway %q", tr.Outcomes, tr.NoGateway)
	}
}

// Connections to an invalid backend are rejected by its weight (the API:
// "if an invalid backend is requested to have 80% of connections, then
// 80% of connections must be rejected"); with no valid backend, every
// connection is, and no HTTP status is given.
func TestTraceTCPInvalidBackendsRejectTheirShare(t *testing.T) {
	ix, pols := fixture(t, l4Topology)
	o := trace(t, ix, pols, "tcp://x.example:6000", nil).Outcomes[0]
	if o.Result != routing.ResultForwarded || len(o.Backends) != 2 || o.Backends[1].Invalid == "" {
		t.Fatalf("outcome %+v", o)
	}
	if !slices.Contains(o.Notes, "25% of connections go to invalid backends and are rejected (their weight 1 of 4)") {
		t.Errorf("notes %q", o.Notes)
	}
	// The only backend missing: every connection rejected.
	ix, pols = fixture(t, strings.Replace(l4Topology, "{name: pg, port: 5432, weight: 3}, ", "", 1))
	o = trace(t, ix, pols, "tcp://x.example:6000", nil).Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 0 || o.Reason != "no backendRef of the rule is valid with a weight above 0: the connection is rejected" {
		t.Errorf("outcome %+v", o)
	}
}

// A TCP listener with no TCPRoute takes no connection; the others routes
// naming the Gateway are listed with why they are not there.
func TestTraceTCPListenerWithoutRoute(t *testing.T) {
	ix, pols := fixture(t, strings.Replace(l4Topology, "sectionName: other}", "sectionName: db}", 1)+`---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: default}
spec:
  parentRefs: [{name: g}]
  rules: [{backendRefs: [{name: pg, port: 5432}]}]
`)
	tr := trace(t, ix, pols, "tcp://x.example:6000", nil)
	if len(tr.Outcomes) != 1 {
		t.Fatalf("outcomes %+v", tr.Outcomes)
	}
	o := tr.Outcomes[0]
	if o.Listener != "other" || o.Route != nil || o.Result != routing.ResultNotFound || o.Status != 0 ||
		o.Reason != "no TCPRoute the implementation accepts is attached to the listener: it takes no connection" {
		t.Errorf("outcome %+v", o)
	}
	var reasons []string
	for _, n := range tr.NotMatched {
		reasons = append(reasons, n.Route.Name+": "+n.Reason)
	}
	if !slices.ContainsFunc(reasons, func(r string) bool { return strings.HasPrefix(r, "web: ") }) {
		t.Errorf("not matched %q: want the HTTPRoute on the Gateway listed", reasons)
	}
}

func TestParseConnectionRequests(t *testing.T) {
	req, err := routing.ParseRequest("TCP://DB.Example:5432/", "", nil)
	if err != nil || req.Scheme != "tcp" || req.Host != "db.example" || req.Port != 5432 || req.Method != "" || req.Path != "" || !req.IsL4() || req.URL() != "tcp://db.example:5432" {
		t.Fatalf("got %+v, %v", req, err)
	}
	for _, tc := range []struct{ url, method, header, want string }{
		{"tcp://db.example", "", "", "names no port"},
		{"udp://db.example:0", "", "", "not a number from 1 to 65535"},
		{"tcp://db.example:5432/x", "", "", "has no path, query or fragment"},
		{"tcp://db.example:5432?a=b", "", "", "has no path, query or fragment"},
		{"tcp://u@db.example:5432", "", "", "user information"},
		{"tcp://:5432", "", "", "has no host"},
		{"tcp://db.example:5432", "GET", "", "has no method: leave -X GET out"},
		{"tcp://db.example:5432", "", "x-a: b", "has no headers"},
		{"sctp://db.example:5432", "", "", "use http, https, grpc, grpcs, tcp or udp"},
	} {
		var hs []string
		if tc.header != "" {
			hs = []string{tc.header}
		}
		if _, err := routing.ParseRequest(tc.url, tc.method, hs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -X %q -H %q: error %v, want one saying %q", tc.url, tc.method, tc.header, err, tc.want)
		}
	}
}

// pathString renders a path as "Kind ns/name#section > ...".
func pathString(p []topology.Ref) string {
	parts := make([]string, len(p))
	for i, r := range p {
		parts[i] = r.Short()
	}
	return strings.Join(parts, " > ")
}

// Two TCPRoutes created at the same time: the first by namespace/name
// takes the listener, and the other's reason says so.
func TestTraceTCPTieByName(t *testing.T) {
	same := strings.Replace(l4Topology, `creationTimestamp: "2026-02-01T00:00:00Z"`, `creationTimestamp: "2026-01-01T00:00:00Z"`, 1)
	ix, pols := fixture(t, same)
	tr := trace(t, ix, pols, "tcp://db.example:5432", nil)
	if o := tr.Outcomes[0]; o.Route == nil || o.Route.Name != "new" {
		t.Fatalf("route %v, want new (n before o)", o.Route)
	}
	if r := tr.NotMatched[0]; r.Route.Name != "old" || !strings.Contains(r.Reason, "TCPRoute default/new was created at the same time and comes first by namespace/name") {
		t.Errorf("not matched %+v", r)
	}
}

// In the mesh, a tcp:// request to a TCP port goes through the waypoint to
// the Service as a connection (no upstream request); one to an HTTP port
// is refused with how to trace it; udp:// is not carried.
func TestMeshTCPConnection(t *testing.T) {
	ix, pols := fixture(t, bookinfo)
	tr := meshTrace(t, ix, pols, "tcp://reviews.bookinfo:9090", "default")
	o := tr.Outcomes[0]
	if o.Result != routing.ResultForwarded || o.UpstreamRequest != nil || o.Route != nil || !strings.Contains(strings.Join(o.Notes, ";"), "port 9090 is TCP") {
		t.Errorf("outcome %+v", o)
	}
	want(t, "backends", backendNames(o), []string{"bookinfo/reviews:9090"})
	for url, w := range map[string]string{
		"tcp://reviews.bookinfo:9080": "port 9080 of Service bookinfo/reviews is HTTP: a waypoint parses its connections as HTTP, so trace a request on it as http:// or grpc://",
		"udp://reviews.bookinfo:9090": "neither ztunnel nor a waypoint carries UDP",
	} {
		if _, err := meshTraceErr(ix, pols, url, "default"); err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %v, want one saying %q", url, err, w)
		}
	}
}

// FuzzTraceConnection checks that no tcp:// or udp:// URL panics a trace
// of l4Topology, and that each outcome is taken by a listener of the
// request's protocol and port.
func FuzzTraceConnection(f *testing.F) {
	ix, pols := fixture(f, l4Topology)
	for _, u := range []string{"tcp://db.example:5432", "udp://x:53", "tcp://x:6000", "tcp://x:1", "udp://[::1]:5432"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, url string) {
		req, err := routing.ParseRequest(url, "", nil)
		if err != nil || !req.IsL4() {
			return
		}
		tr, err := ix.Trace(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		pols.AddPolicies(tr)
		if (len(tr.Outcomes) == 0) == (tr.NoGateway == "") {
			t.Fatalf("%q: %d outcomes, noGateway %q", url, len(tr.Outcomes), tr.NoGateway)
		}
		for _, o := range tr.Outcomes {
			if o.Status != 0 || o.UpstreamRequest != nil || o.Result == "" {
				t.Fatalf("%q: outcome %+v", url, o)
			}
		}
	})
}

// meshL4Routes are a Service with a TCP port (reviews' 9090) and the
// TCPRoutes and TLSRoutes naming it, added to bookinfo: raw (the oldest
// TCPRoute), raw-late (a newer one), raw-other-port (port 9080), tls-named
// (a TLSRoute with another hostname) and, with withTLS, tls (a TLSRoute
// without hostnames, newer than both TCPRoutes).
func meshL4Routes(withTLS bool) string {
	s := bookinfo + `
---
apiVersion: v1
kind: Service
metadata: {name: raw-v1, namespace: bookinfo}
spec: {ports: [{name: tcp, port: 9090}]}
---
apiVersion: v1
kind: Service
metadata: {name: raw-v2, namespace: bookinfo}
spec: {ports: [{name: tcp, port: 9090}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: raw, namespace: bookinfo, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, port: 9090}]
  rules: [{backendRefs: [{name: raw-v1, port: 9090, weight: 3}, {name: raw-v2, port: 9090, weight: 1}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: raw-late, namespace: bookinfo, creationTimestamp: "2026-02-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews}]
  rules: [{backendRefs: [{name: raw-v2, port: 9090}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: raw-other-port, namespace: bookinfo}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews, port: 9080}]
  rules: [{backendRefs: [{name: raw-v2, port: 9090}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls-named, namespace: bookinfo}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews}]
  hostnames: [reviews.example]
  rules: [{backendRefs: [{name: raw-v2, port: 9090}]}]
`
	if withTLS {
		s += `---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: tls, namespace: bookinfo, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{group: "", kind: Service, name: reviews}]
  rules: [{backendRefs: [{name: raw-v2, port: 9090}]}]
`
	}
	return s
}

// At Istio's waypoint a connection to a TCP port goes by istiod's
// getWaypointTCPRoutes: the first TLSRoute naming the Service on that
// port, else the first TCPRoute, oldest first, to its weighted backends.
func TestMeshTCPRoutesAtTheWaypoint(t *testing.T) {
	ix, pols := fixture(t, meshL4Routes(false))
	tr := meshTrace(t, ix, pols, "tcp://reviews.bookinfo:9090", "default")
	o := tr.Outcomes[0]
	if o.Route == nil || o.Route.Name != "raw" || o.Result != routing.ResultForwarded || o.UpstreamRequest != nil {
		t.Fatalf("outcome %+v", o)
	}
	want(t, "backends", backendNames(o), []string{"bookinfo/raw-v1:9090", "bookinfo/raw-v2:9090"})
	reasons := map[string]string{}
	for _, n := range tr.NotMatched {
		reasons[n.Route.Name] = n.Reason
	}
	for name, w := range map[string]string{
		"raw-late":       "precedence: TCPRoute bookinfo/raw comes first at the waypoint",
		"raw-other-port": "port: its parentRef names port 9080 of the Service, not 9090",
		"tls-named":      "hostnames: at a waypoint a TLSRoute applies without hostnames, or when the one that overlaps the Service's name is reviews.bookinfo.svc.cluster.local",
		"reviews":        "port 9090 is TCP: the waypoint does not route its connections as HTTP",
	} {
		if !strings.HasPrefix(reasons[name], w) {
			t.Errorf("%s: reason %q, want %q", name, reasons[name], w)
		}
	}
	// An http:// request to the TCP port is proxied as TCP the same way.
	if o := meshTrace(t, ix, pols, "http://reviews.bookinfo:9090/", "default").Outcomes[0]; o.Route == nil || o.Route.Name != "raw" {
		t.Errorf("http to the TCP port: route %v", o.Route)
	}

	// A TLSRoute without hostnames comes before every TCPRoute, newer as it is.
	ix, pols = fixture(t, meshL4Routes(true))
	tr = meshTrace(t, ix, pols, "tcp://reviews.bookinfo:9090", "default")
	if o := tr.Outcomes[0]; o.Route == nil || o.Route.Name != "tls" {
		t.Fatalf("with a TLSRoute: route %v", o.Route)
	}
	for _, n := range tr.NotMatched {
		if n.Route.Name == "raw" && !strings.HasPrefix(n.Reason, "precedence: TLSRoute bookinfo/tls comes first") {
			t.Errorf("raw: %q", n.Reason)
		}
	}
}

// At Envoy Gateway's Gateways, a TCPRoute without exactly one rule is
// refused (the next oldest takes the listener) and invalid backends are
// left out, the valid ones taking every connection (EG v1.9.1
// processTCPRouteParentRefs). Elsewhere the first rule is traced, with a
// note, and invalid backends reject their share.
func TestTraceTCPAtEnvoyGateway(t *testing.T) {
	eg := `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: c}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
` + strings.TrimPrefix(l4Topology, "\n") + `---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: two-rules, namespace: default, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: g, sectionName: db}]
  rules: [{backendRefs: [{name: pg, port: 5432}]}, {backendRefs: [{name: pg-new, port: 5432}]}]
`
	ix, pols := fixture(t, eg)
	tr := trace(t, ix, pols, "tcp://db.example:5432", nil)
	if o := tr.Outcomes[0]; o.Route == nil || o.Route.Name != "old" {
		t.Fatalf("route %v, want old (two-rules refused)", o.Route)
	}
	if !slices.ContainsFunc(tr.NotMatched, func(n routing.NotMatched) bool {
		return n.Route.Name == "two-rules" && strings.Contains(n.Reason, "Envoy Gateway refuses it: it has 2 rules")
	}) {
		t.Errorf("not matched %+v", tr.NotMatched)
	}
	o := trace(t, ix, pols, "tcp://x.example:6000", nil).Outcomes[0]
	if o.Result != routing.ResultForwarded || !slices.Contains(o.Notes, "Envoy Gateway leaves the invalid backends out: the valid ones take every connection (the API would reject 25% of them)") {
		t.Errorf("split at EG: %+v", o)
	}

	// Without the class (no implementation known): the older route with
	// two rules takes the listener, its first rule traced.
	ix, pols = fixture(t, strings.SplitN(eg, "---\n", 2)[1])
	o = trace(t, ix, pols, "tcp://db.example:5432", nil).Outcomes[0]
	if o.Route == nil || o.Route.Name != "two-rules" || o.Rule != "rule-1" || !strings.Contains(strings.Join(o.Notes, ";"), "has 2 rules: the API allows one (v1); only the first is traced") {
		t.Errorf("without EG: %+v", o)
	}
}

// A connection gets no HTTP status anywhere: not through a named Gateway
// without a listener on the port either; a UDP datagram to an invalid
// backend is dropped; a UDPRoute naming a Gateway is not taken by its
// TCP listener for its kind.
func TestTraceConnectionWording(t *testing.T) {
	ix, pols := fixture(t, l4Topology)
	o := trace(t, ix, pols, "tcp://db.example:7777", &topology.Ref{Namespace: "default", Name: "g"}).Outcomes[0]
	if o.Status != 0 || o.Result != routing.ResultNotFound {
		t.Errorf("no listener: %+v", o)
	}
	broken := strings.Replace(l4Topology, "rules: [{backendRefs: [{name: coredns, port: 53}]}]", "rules: [{backendRefs: [{name: gone, port: 53}]}]", 1)
	ix, pols = fixture(t, broken)
	o = trace(t, ix, pols, "udp://x:53", nil).Outcomes[0]
	if o.Result != routing.ResultError || o.Reason != "no backendRef of the rule is valid with a weight above 0: the datagram is dropped" {
		t.Errorf("udp to a missing backend: %+v", o)
	}
	attachAll := l4Topology + `---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: UDPRoute
metadata: {name: everywhere, namespace: default}
spec:
  parentRefs: [{name: g}]
  rules: [{backendRefs: [{name: coredns, port: 53}]}]
`
	ix, pols = fixture(t, attachAll)
	tr := trace(t, ix, pols, "tcp://x:6000", nil)
	for _, n := range tr.NotMatched {
		if n.Route.Name == "everywhere" && n.Reason != "not accepted by the listener: a UDPRoute does not attach to a listener of protocol TCP" {
			t.Errorf("everywhere: %q", n.Reason)
		}
	}
}

// At a waypoint a TLSRoute taking a tcp:// connection passes on no
// request; an http:// request to the TCP port, proxied as TCP, whose
// route's backends are all invalid, is rejected, with no HTTP status.
func TestMeshTCPConnectionNoHTTP(t *testing.T) {
	ix, pols := fixture(t, meshL4Routes(true))
	if o := meshTrace(t, ix, pols, "tcp://reviews.bookinfo:9090", "default").Outcomes[0]; o.Route == nil || o.Route.Name != "tls" || o.UpstreamRequest != nil {
		t.Errorf("tcp via the TLSRoute: route %v upstream %+v", o.Route, o.UpstreamRequest)
	}
	gone := strings.ReplaceAll(meshL4Routes(false), "{name: raw-v1, port: 9090, weight: 3}, {name: raw-v2, port: 9090, weight: 1}", "{name: nope, port: 9090}")
	ix, pols = fixture(t, gone)
	o := meshTrace(t, ix, pols, "http://reviews.bookinfo:9090/x", "default").Outcomes[0]
	if o.Result != routing.ResultError || o.Status != 0 || !strings.HasSuffix(o.Reason, "the connection is rejected") {
		t.Errorf("http to the TCP port, backend missing: %+v", o)
	}
}
