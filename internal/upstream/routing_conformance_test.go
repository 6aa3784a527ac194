package upstream

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/routing"
	"github.com/attache-dev/attache/pkg/topology"
)

// routingSkips are the conformance test files whose cases `attache trace`
// cannot check, and why. Every other file of the suite's tests/ folder
// with request cases runs in full (the tcp package's cases as tcp://
// connections, since session 34): a file with cases the harness cannot
// read fails the test unless it is listed here.
// The test fails when an entry names a file that no longer exists or has
// no cases (the list went stale).
var routingSkips = map[string]string{
	"httproute-https-listener":                                       "its cases are a struct of its own, sent over TLS with the test's certificate",
	"httproute-service-types":                                        "its requests are built in a loop over Service types backed by EndpointSlices the test creates",
	"httproute-timeout-request":                                      "the backend delays its answer: the expected 504 is timing, not routing",
	"httproute-timeout-backend-request":                              "the backend delays its answer: the expected 504 is timing, not routing",
	"httproute-retry":                                                "the backend answers the retried status codes: retries happen at run time",
	"httproute-cors":                                                 "CORS preflight answers are not modelled (the CORS filter is reported as a note)",
	"httproute-backend-protocol-h2c":                                 "the backend protocol (h2c) is a property of the connection, not of routing",
	"httproute-https-listener-detect-misdirected-requests":           "421 Misdirected Request depends on the TLS connection's SNI and certificate",
	"httproute-weight":                                               "weights are checked by sampling a distribution; the trace lists the weights instead (checked in pkg/routing)",
	"grpcroute-weight":                                               "weights are checked by sampling a distribution; the trace lists the weights instead (checked in pkg/routing)",
	"httproute-request-percentage-mirror":                            "mirrored percentages are checked by sampling; the trace reports the percentage (checked in pkg/routing)",
	"gateway-with-clientcertificate-validation":                      "client certificate validation is TLS content",
	"gateway-with-clientcertificate-validation-insecure-fallback":    "client certificate validation is TLS content",
	"gateway-invalid-default-frontend-client-certificate-validation": "client certificate validation is TLS content",
	"gateway-tls-backend-client-certificate":                         "the Gateway's client certificate to the backend is TLS content",
	"backendtlspolicy":                                               "BackendTLSPolicy: the outcome is the Gateway's TLS connection to the backend (CA, SAN, SNI), not routing",
	"backendtlspolicy-conflict-resolution":                           "BackendTLSPolicy: the outcome is the Gateway's TLS connection to the backend (CA, SAN, SNI), not routing",
	"backendtlspolicy-invalid-ca-certificate-ref":                    "BackendTLSPolicy: the outcome is the Gateway's TLS connection to the backend (CA, SAN, SNI), not routing",
	"backendtlspolicy-invalid-kind":                                  "BackendTLSPolicy: the outcome is the Gateway's TLS connection to the backend (CA, SAN, SNI), not routing",
	"backendtlspolicy-san":                                           "BackendTLSPolicy: the outcome is the Gateway's TLS connection to the backend (CA, SAN, SNI), not routing",
	"tlsroute-simple-same-namespace":                                 "its SNI is the TLSRoute's hostname as read from the cluster at run time, and the check is the TLS connection; TLSRoute SNI routing is run by tlsroute-hostname-intersection",
	"tlsroute-terminate-simple-same-namespace":                       "its SNI is the TLSRoute's hostname as read from the cluster at run time, and the check is the TLS connection; TLSRoute SNI routing is run by tlsroute-hostname-intersection",
	"tlsroute-mixed-termination-same-namespace":                      "its SNI is the TLSRoute's hostname as read from the cluster at run time, and the check is the TLS connection; TLSRoute SNI routing is run by tlsroute-hostname-intersection",
}

// routingCaseSkips are single cases that cannot be checked, by file and
// index (the n-th ExpectedResponse literal of the file), and why.
var routingCaseSkips = map[string]string{
	"httproute-reference-grant#1": "the test deletes the ReferenceGrant before this request",
}

// TestGatewayAPIConformanceRouting runs every request/expected-response
// case of the Gateway API conformance suite's tests (pinned module,
// read at test time: the test files' Go sources parsed with go/ast, and
// their manifests) through attache's request tracing, and compares the
// outcome: status, backend, rewritten path, host and headers, redirect
// location, response headers and mirrors.
func TestGatewayAPIConformanceRouting(t *testing.T) {
	conf := modfixtures.Dir(t, modfixtures.GatewayAPIConformance)
	consts, err := suiteConsts(conf)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(conf, "tests", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	ran, skipped, unreadable := 0, 0, 0
	seenSkip := map[string]bool{}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".go")
		if strings.HasSuffix(name, "_test") || name == "main" {
			continue
		}
		rf, err := readRoutingFile(conf, name, consts)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(rf.cases) == 0 && rf.otherCases == 0 {
			continue
		}
		if why, ok := routingSkips[name]; ok {
			seenSkip[name] = true
			skipped += len(rf.cases) + rf.otherCases
			t.Logf("%s: %d cases skipped: %s", name, len(rf.cases)+rf.otherCases, why)
			continue
		}
		if rf.otherCases > 0 {
			t.Errorf("%s: %d request cases the harness does not read (a table of tcp.ExpectedResponse): run them, or list the file in routingSkips with a reason", name, rf.otherCases)
			continue
		}
		t.Run(name, func(t *testing.T) {
			ix, pols := buildFixture(t, conf, rf)
			for _, c := range rf.cases {
				key := fmt.Sprintf("%s#%d", name, c.index)
				if why, ok := routingCaseSkips[key]; ok {
					seenSkip[key] = true
					skipped++
					t.Logf("case %d (line %d) skipped: %s", c.index, c.line, why)
					continue
				}
				if len(c.unreadable) > 0 {
					unreadable++
					t.Errorf("case %d (line %d): cannot read %s from the test's source", c.index, c.line, strings.Join(c.unreadable, ", "))
					continue
				}
				if len(c.targets) == 0 {
					unreadable++
					t.Errorf("case %d (line %d): no Gateway found for it in the test's source", c.index, c.line)
					continue
				}
				for _, target := range c.targets {
					ran++
					if msg := runCase(ix, pols, c, target, hostPortSelectsAddress[name]); msg != "" {
						t.Errorf("case %d (line %d, Gateway %s): %s", c.index, c.line, target.gateway, msg)
					}
				}
			}
		})
	}
	for k := range routingSkips {
		if !seenSkip[k] {
			t.Errorf("routingSkips names %s, which has no request cases in the conformance module any more: remove it", k)
		}
	}
	for k := range routingCaseSkips {
		if !seenSkip[k] {
			t.Errorf("routingCaseSkips names %s, which is not a case any more: remove it", k)
		}
	}
	t.Logf("conformance routing cases: %d run, %d skipped (listed with reasons), %d unreadable", ran, skipped, unreadable)
	if ran < 150 {
		t.Errorf("only %d conformance cases ran; is the extraction still right?", ran)
	}
}

// buildFixture reads the suite's base manifests and the test's, and
// indexes them as `attache trace` does.
func buildFixture(t *testing.T, conf string, rf *routingFile) (*routing.Index, *routing.Policies) {
	t.Helper()
	paths := []string{filepath.Join(conf, "base", "manifests.yaml")}
	for _, m := range rf.manifests {
		paths = append(paths, filepath.Join(conf, m))
	}
	if len(rf.manifests) == 0 {
		if _, err := os.Stat(filepath.Join(conf, "tests", rf.file+".yaml")); err == nil {
			paths = append(paths, filepath.Join(conf, "tests", rf.file+".yaml"))
		}
	}
	objs, _, err := manifest.Read(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := engine.Compute(objs, engine.Options{})
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = o.Object
	}
	ix, probs := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	for _, p := range probs {
		t.Logf("%s", p.Error())
	}
	return ix, routing.NewPolicies(res)
}

// hostPortSelectsAddress names the tests whose own code sends a request
// to the Gateway address of the port its Host header names, else to the
// listener given here (rather than to the listener the test bound last).
var hostPortSelectsAddress = map[string]string{
	"httproute-listener-port-matching": "listener-1",
}

// runCase traces one case sent to target and says how the outcome differs
// from what the conformance test expects ("" when it does not).
func runCase(ix *routing.Index, pols *routing.Policies, c *routingCase, target gatewayTarget, hostPortListener string) string {
	if hostPortListener != "" {
		target.listener = hostPortListener
	}
	port, proto, err := ix.ListenerPort(conformanceNS, target.gateway, target.listener)
	if err != nil && target.listener != "" {
		// The suite falls back to the first listener for a name the
		// Gateway does not have (WaitForGatewayAddress).
		port, proto, err = ix.ListenerPort(conformanceNS, target.gateway, "")
	}
	if err != nil {
		return err.Error()
	}
	host := c.host
	if host == "" {
		host = "192.0.2.1" // the Gateway's address
	}
	var headers []string
	hostOnly := host
	if h, p, ok := strings.Cut(host, ":"); ok && !strings.Contains(p, ":") {
		hostOnly = h
		headers = append(headers, "Host: "+host)
		if n, err := strconv.Atoi(p); err == nil && hostPortListener != "" {
			port = int32(n)
		}
	}
	names := make([]string, 0, len(c.headers))
	for n := range c.headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		headers = append(headers, n+": "+c.headers[n])
	}
	// A listener terminating or passing TLS through is sent TLS.
	tls := proto == "HTTPS" || proto == "TLS"
	var raw string
	switch {
	case c.tcp:
		raw, headers = fmt.Sprintf("tcp://%s:%d", hostOnly, port), nil
	case c.udp:
		raw, headers = fmt.Sprintf("udp://%s:%d", hostOnly, port), nil
	case c.grpc && tls:
		raw = fmt.Sprintf("grpcs://%s:%d/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/%s", hostOnly, port, c.grpcMethod)
	case c.grpc:
		raw = fmt.Sprintf("grpc://%s:%d/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/%s", hostOnly, port, c.grpcMethod)
	case tls:
		raw = fmt.Sprintf("https://%s:%d%s", hostOnly, port, c.path)
	default:
		raw = fmt.Sprintf("http://%s:%d%s", hostOnly, port, c.path)
	}
	req, err := routing.ParseRequest(raw, c.method, headers)
	if err != nil {
		return err.Error()
	}
	tr, err := ix.Trace(req, &topology.Ref{Namespace: conformanceNS, Name: target.gateway})
	if err != nil {
		return err.Error()
	}
	pols.AddPolicies(tr)
	if len(tr.Outcomes) != 1 {
		return fmt.Sprintf("%d outcomes, want 1", len(tr.Outcomes))
	}
	return checkOutcome(tr.Outcomes[0], c, req, raw)
}

// checkOutcome says how outcome o of c's request req (sent as raw)
// differs from what the conformance test expects ("" when it does not).
func checkOutcome(o routing.Outcome, c *routingCase, req *routing.Request, raw string) string {
	got := fmt.Sprintf("%s %s: %s %d %s", req.Method, raw, o.Result, o.Status, o.Reason)

	if c.tcp || c.udp {
		// The connection reaches the backend, which echoes its name.
		return expectBackend(o, c, got)
	}
	if c.grpc {
		switch c.grpcCode {
		case "", "OK":
			return expectBackend(o, c, got)
		case "Unimplemented":
			if o.Result != routing.ResultNotFound {
				return got + ", want no match (Unimplemented)"
			}
			return ""
		}
		return got + ", want gRPC code " + c.grpcCode
	}

	want := c.status
	if len(want) == 0 {
		want = []int{200}
	}
	status := o.Status
	if o.Result == routing.ResultForwarded {
		status = 200
	}
	if !slices.Contains(want, status) {
		return fmt.Sprintf("%s; want status %v", got, want)
	}
	if c.redirect != nil {
		return expectRedirect(o, c, req, got)
	}
	if status != 200 {
		return ""
	}
	if msg := expectBackend(o, c, got); msg != "" {
		return msg
	}
	up := o.UpstreamRequest
	for _, b := range o.Backends {
		if b.Ref.Name == c.backend && b.UpstreamRequest != nil {
			up = b.UpstreamRequest
		}
	}
	if c.hasExpectedRequest {
		if c.expPath != "" && up.Path != c.expPath {
			return fmt.Sprintf("%s; upstream path %q, want %q", got, up.Path, c.expPath)
		}
		if c.expHost != "" && up.Host != c.expHost {
			return fmt.Sprintf("%s; upstream host %q, want %q", got, up.Host, c.expHost)
		}
		for n, v := range c.expHeaders {
			if gv, ok := up.Headers[strings.ToLower(n)]; !ok || gv != v {
				return fmt.Sprintf("%s; upstream header %s=%q, want %q", got, n, gv, v)
			}
		}
		for _, n := range c.expAbsent {
			if _, ok := up.Headers[strings.ToLower(n)]; ok {
				return fmt.Sprintf("%s; upstream header %s present, want absent", got, n)
			}
		}
	} else if up.Path != c.path && c.path != "" {
		return fmt.Sprintf("%s; upstream path %q, want it unchanged", got, up.Path)
	}
	if msg := expectResponseHeaders(o, c, got); msg != "" {
		return msg
	}
	return expectMirrors(o, c, got)
}

func expectBackend(o routing.Outcome, c *routingCase, got string) string {
	if o.Result != routing.ResultForwarded {
		return got + ", want forwarded"
	}
	if c.backend == "" {
		return ""
	}
	ns := c.namespace
	if ns == "" {
		ns = conformanceNS
	}
	var names []string
	for _, b := range o.Backends {
		if b.Invalid == "" && b.Weight > 0 && b.Ref.Name == c.backend && b.Ref.Namespace == ns {
			return ""
		}
		names = append(names, b.Ref.Namespace+"/"+b.Ref.Name)
	}
	return fmt.Sprintf("%s; backends %v, want %s/%s", got, names, ns, c.backend)
}

func expectRedirect(o routing.Outcome, c *routingCase, req *routing.Request, got string) string {
	if o.Result != routing.ResultRedirected {
		return got + ", want a redirect"
	}
	u, err := url.Parse(o.Location)
	if err != nil {
		return fmt.Sprintf("%s; location %q: %v", got, o.Location, err)
	}
	want := *c.redirect
	if want.host == "" {
		want.host = u.Hostname()
	}
	if want.scheme == "" {
		want.scheme = req.Scheme
	}
	switch {
	case u.Hostname() != want.host:
		return fmt.Sprintf("%s; location %s, want host %s", got, o.Location, want.host)
	case u.Scheme != want.scheme:
		return fmt.Sprintf("%s; location %s, want scheme %s", got, o.Location, want.scheme)
	case want.path != "" && u.Path != want.path:
		return fmt.Sprintf("%s; location %s, want path %s", got, o.Location, want.path)
	}
	port := u.Port()
	if want.port == "" {
		if (u.Scheme == "http" && port != "" && port != "80") || (u.Scheme == "https" && port != "" && port != "443") {
			return fmt.Sprintf("%s; location %s, want the scheme's default port", got, o.Location)
		}
	} else if port != want.port {
		return fmt.Sprintf("%s; location %s, want port %s", got, o.Location, want.port)
	}
	return ""
}

func expectResponseHeaders(o routing.Outcome, c *routingCase, got string) string {
	if c.respHeaders == nil && c.respAbsent == nil {
		return ""
	}
	h := map[string]string{}
	for n, v := range c.backendSetResponseHeaders {
		h[strings.ToLower(n)] = v
	}
	apply := func(rh *routing.HeaderChanges) {
		if rh == nil {
			return
		}
		for n, v := range rh.Set {
			h[n] = v
		}
		for n, v := range rh.Add {
			if old, ok := h[n]; ok {
				h[n] = old + "," + v
			} else {
				h[n] = v
			}
		}
		for _, n := range rh.Remove {
			delete(h, n)
		}
	}
	apply(o.ResponseHeaders)
	for _, b := range o.Backends {
		if b.Ref.Name == c.backend {
			apply(b.ResponseHeaders)
		}
	}
	for n, v := range c.respHeaders {
		if h[strings.ToLower(n)] != v {
			return fmt.Sprintf("%s; response header %s=%q, want %q", got, n, h[strings.ToLower(n)], v)
		}
	}
	for _, n := range c.respAbsent {
		if _, ok := h[strings.ToLower(n)]; ok {
			return fmt.Sprintf("%s; response header %s present, want absent", got, n)
		}
	}
	return ""
}

func expectMirrors(o routing.Outcome, c *routingCase, got string) string {
	if len(c.mirrors) == 0 {
		return ""
	}
	ms := append([]routing.Mirror(nil), o.Mirrors...)
	for _, b := range o.Backends {
		ms = append(ms, b.Mirrors...)
	}
	for _, want := range c.mirrors {
		ns := want.namespace
		if ns == "" {
			ns = conformanceNS
		}
		found := false
		for _, m := range ms {
			if m.Ref.Name == want.name && m.Ref.Namespace == ns && m.Invalid == "" && int(m.Percent) == want.percent {
				found = true
			}
		}
		if !found {
			return fmt.Sprintf("%s; mirrors %+v, want %s/%s at %d%%", got, ms, ns, want.name, want.percent)
		}
	}
	return ""
}
