package upstream

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/routing"
)

// meshNS is the conformance suite's mesh namespace (suite.MeshNamespace),
// where its mesh clients run.
const meshNS = "gateway-conformance-mesh"

// meshSkips are the mesh conformance test files whose cases `attache
// trace --mesh` cannot check, and why.
var meshSkips = map[string]string{
	"mesh/httproute-weight": "weights are checked by sampling a distribution; the trace lists the weights instead (checked in pkg/routing)",
	"mesh/grpcroute-weight": "weights are checked by sampling a distribution; the trace lists the weights instead (checked in pkg/routing)",
}

// meshCaseSkips are single mesh cases that cannot be checked, and why.
var meshCaseSkips = map[string]string{
	"mesh/mesh-frontend#1":       "it sends to the pod's IP address, known at run time only (a mesh trace names a Service)",
	"mesh/mesh-consumer-route#0": "a consumer route (of the client's namespace) is applied by the client's sidecar; in Istio ambient a waypoint applies the routes of the Service's and its own namespace only (getVirtualServiceForWaypoint), so it does not apply (sidecars are not modelled)",
}

// meshPathUnchecked are mesh cases whose expected upstream path is not
// checked (the rest of the case is), and why.
var meshPathUnchecked = map[string]string{
	"mesh/httproute-named-rule#1": "it expects the path /named upstream for a request to /unnamed, which no filter rewrites; the suite's mesh client compares headers only (utils/echo compareRequest), so the suite never checks it (the trace keeps /unnamed)",
}

// meshWaypoint is what an Istio ambient install adds to the suite's mesh
// namespace for its mesh tests (written for attache from Istio's ambient
// docs): a waypoint, of Istio's waypoint class, that the namespace uses.
const meshWaypoint = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: gateway-conformance-mesh}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
`

// TestGatewayAPIConformanceMeshRouting runs the request cases of the
// Gateway API conformance suite's mesh (GAMMA) tests (pinned module, read
// at test time as TestGatewayAPIConformanceRouting reads the Gateway
// tests) through `attache trace --mesh`, the suite's mesh namespace
// using an Istio waypoint as an ambient install sets it up: status,
// backend, rewritten path and headers, redirect, response headers.
func TestGatewayAPIConformanceMeshRouting(t *testing.T) {
	conf := modfixtures.Dir(t, modfixtures.GatewayAPIConformance)
	consts, err := suiteConsts(conf)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(conf, "tests", "mesh", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	ran, skipped := 0, 0
	seen := map[string]bool{}
	for _, path := range files {
		name := "mesh/" + strings.TrimSuffix(filepath.Base(path), ".go")
		if strings.HasSuffix(name, "_test") || name == "mesh/main" {
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
		if why, ok := meshSkips[name]; ok {
			seen[name] = true
			skipped += len(rf.cases)
			t.Logf("%s: %d cases skipped: %s", name, len(rf.cases), why)
			continue
		}
		if rf.otherCases > 0 {
			t.Errorf("%s: %d request cases of a kind the harness does not read: run them, or list the file in meshSkips with a reason", name, rf.otherCases)
			continue
		}
		t.Run(strings.TrimPrefix(name, "mesh/"), func(t *testing.T) {
			ix, pols := buildMeshFixture(t, conf, rf)
			for _, c := range rf.cases {
				key := fmt.Sprintf("%s#%d", name, c.index)
				if why, ok := meshCaseSkips[key]; ok {
					seen[key] = true
					skipped++
					t.Logf("case %d (line %d) skipped: %s", c.index, c.line, why)
					continue
				}
				if len(c.unreadable) > 0 {
					t.Errorf("case %d (line %d): cannot read %s from the test's source", c.index, c.line, strings.Join(c.unreadable, ", "))
					continue
				}
				if c.tcp || c.udp {
					t.Errorf("case %d (line %d): a TCP case, which this harness does not send: run it, or list it in meshCaseSkips with a reason", c.index, c.line)
					continue
				}
				ran++
				if why, ok := meshPathUnchecked[key]; ok {
					seen[key] = true
					t.Logf("case %d (line %d): upstream path not checked: %s", c.index, c.line, why)
					cc := *c
					cc.expPath = ""
					c = &cc
				}
				if msg := runMeshCase(ix, pols, c); msg != "" {
					t.Errorf("case %d (line %d): %s", c.index, c.line, msg)
				}
			}
		})
	}
	for _, m := range []map[string]string{meshSkips, meshCaseSkips, meshPathUnchecked} {
		for k := range m {
			if !seen[k] {
				t.Errorf("a mesh skip names %s, which is not a file or case with requests any more: remove it", k)
			}
		}
	}
	t.Logf("conformance mesh routing cases: %d run, %d skipped (listed with reasons)", ran, skipped)
	if ran < 30 {
		t.Errorf("only %d mesh conformance cases ran; is the extraction still right?", ran)
	}
}

// buildMeshFixture reads the suite's mesh manifests, the test's and
// meshWaypoint, labels the mesh namespace to use the waypoint, and
// indexes them as `attache trace` does.
func buildMeshFixture(t *testing.T, conf string, rf *routingFile) (*routing.Index, *routing.Policies) {
	t.Helper()
	paths := []string{filepath.Join(conf, "mesh", "manifests.yaml")}
	for _, m := range rf.manifests {
		paths = append(paths, filepath.Join(conf, m))
	}
	objs, _, err := manifest.Read(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	wp, probs := manifest.Decode(strings.NewReader(meshWaypoint), "meshWaypoint")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	objs = append(objs, wp...)
	labelled := false
	for _, o := range objs {
		if o.Object.GetKind() == "Namespace" && o.Object.GetName() == meshNS {
			l := o.Object.GetLabels()
			if l == nil {
				l = map[string]string{}
			}
			l["istio.io/use-waypoint"] = "waypoint"
			o.Object.SetLabels(l)
			labelled = true
		}
	}
	if !labelled {
		t.Fatalf("no Namespace %s among the suite's mesh manifests", meshNS)
	}
	res := engine.Compute(objs, engine.Options{})
	us := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		us[i] = o.Object
	}
	ix, bp := routing.Build(us, res.Graph, res.Grants, engine.DefaultNamespace)
	for _, p := range bp {
		t.Logf("%s", p.Error())
	}
	return ix, routing.NewPolicies(res)
}

// runMeshCase traces one mesh case as the suite's echo client sends it
// from the mesh namespace (host "echo" when the case names none, port 80
// unless the host names one) and says how the outcome differs from what
// the test expects ("" when it does not).
func runMeshCase(ix *routing.Index, pols *routing.Policies, c *routingCase) string {
	host := c.host
	if host == "" {
		host = "echo"
	}
	var headers []string
	names := make([]string, 0, len(c.headers))
	for n := range c.headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		headers = append(headers, n+": "+c.headers[n])
	}
	scheme := "http"
	if c.grpc {
		scheme = "grpc"
	}
	raw := fmt.Sprintf("%s://%s%s", scheme, host, c.path)
	if c.grpc {
		raw = fmt.Sprintf("grpc://%s/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/%s", host, c.grpcMethod)
	}
	req, err := routing.ParseRequest(raw, c.method, headers)
	if err != nil {
		return err.Error()
	}
	tr, err := ix.TraceMesh(req, meshNS)
	if err != nil {
		return err.Error()
	}
	pols.AddPolicies(tr)
	if len(tr.Outcomes) != 1 {
		return fmt.Sprintf("%d outcomes, want 1", len(tr.Outcomes))
	}
	o := tr.Outcomes[0]
	if o.Gateway.Name != "waypoint" {
		return fmt.Sprintf("%s: through %v, want the mesh namespace's waypoint (%s)", raw, o.Gateway, tr.Mesh.Unbound)
	}
	cc := *c
	if cc.namespace == "" {
		cc.namespace = meshNS
	}
	// The suite names the backend by its pods' prefix: the pods of
	// Service echo-v1 are named echo-v1-...; those of Service echo (which
	// selects both versions), echo-v1-... or echo-v2-...
	if strings.HasPrefix(cc.backend, "echo-") && slices.ContainsFunc(o.Backends, func(b routing.Backend) bool { return b.Ref.Name == "echo" }) {
		cc.backend = "echo"
	}
	c = &cc
	return checkOutcome(o, c, req, raw)
}
