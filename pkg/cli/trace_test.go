package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/gen"
)

var parable = filepath.Join("..", "..", "examples", "parable")

// TestTraceBadInput checks that bad input gets a clear error, not a panic
// or a silent answer.
func TestTraceBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "cupcakes.example/orders"}, "has no scheme"},
		{[]string{"trace", "http://cupcakes.example:0/"}, "not a number from 1 to 65535"},
		{[]string{"trace", "http://cupcakes.example/", "-H", "x-user"}, `header "x-user" has no colon`},
		{[]string{"trace", "http://cupcakes.example/", "--gateway", "infra/nope"}, "Gateway infra/nope not found (Gateways: infra/cupcakes)"},
		{[]string{"trace", "http://cupcakes.example/", "--gateway", "nope"}, `Gateway "nope" not found in any namespace`},
		{[]string{"trace", "http://cupcakes.example/", "-o", "wide"}, "unknown output format"},
		{[]string{"trace"}, "takes one URL"},
	} {
		_, _, err := run(t, append(tc.args, "-f", parable)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// TestTraceJSON checks the RequestTrace document's shape (docs/output.md)
// on the parable, and that a request the Gateway does not take by its
// listeners gets a 404 outcome with --gateway and none without.
func TestTraceJSON(t *testing.T) {
	out, _, err := run(t, "trace", "http://cupcakes.example/orders/42?x=1", "-H", "X-User: ana", "-f", parable, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "trace-parable-orders.json", []byte(out))
	var doc struct {
		Kind     string
		Request  map[string]any
		Outcomes []struct {
			Listener          string
			Rule              string
			Result            string
			EffectivePolicies []struct {
				PolicyKind string
				Target     struct{ Name string }
			}
		}
		NotMatched []struct{ Reason string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "RequestTrace" || doc.Request["query"] != "x=1" || doc.Request["headers"].(map[string]any)["x-user"] != "ana" {
		t.Errorf("kind %q, request %v", doc.Kind, doc.Request)
	}
	if len(doc.Outcomes) != 1 || doc.Outcomes[0].Rule != "orders" || doc.Outcomes[0].Result != "forwarded" || len(doc.Outcomes[0].EffectivePolicies) != 2 {
		t.Fatalf("outcomes %+v", doc.Outcomes)
	}
	if len(doc.NotMatched) != 2 {
		t.Errorf("notMatched %+v, want frosting and sprinkles", doc.NotMatched)
	}

	out, _, err = run(t, "trace", "http://cupcakes.example:8080/", "--gateway", "infra/cupcakes", "-f", parable, "-o", "yaml")
	if err != nil || !strings.Contains(out, "result: not-found") || !strings.Contains(out, "status: 404") || strings.Contains(out, "listener:") {
		t.Errorf("--gateway, no listener: %v\n%s", err, out)
	}
	out, _, err = run(t, "trace", "http://cupcakes.example:8080/", "-f", parable)
	if err != nil || !strings.Contains(out, "No Gateway takes this request: infra/cupcakes: no listener on port 8080") {
		t.Errorf("no Gateway: %v\n%s", err, out)
	}
	// The other rule of the route: a policy on the orders rule's context
	// must not follow the request elsewhere.
	out, _, err = run(t, "trace", "http://cupcakes.example/bread", "-f", parable)
	if err != nil || !strings.Contains(out, "rule rule-2") || !strings.Contains(out, "Service baker/oven:8080") ||
		!strings.Contains(out, "BackendTLSPolicy\n    for Service oven") {
		t.Errorf("/bread: %v\n%s", err, out)
	}
}

// TestTraceNotFoundListenerPolicies checks that a request the listener
// takes but no route matches (404) still shows, in text as in JSON, the
// effective policies of the context it took: the listener's.
func TestTraceNotFoundListenerPolicies(t *testing.T) {
	eg := filepath.Join("..", "..", "examples", "envoy-gateway")
	out, _, err := run(t, "trace", "grpc://shop.example/a.B/C", "--gateway", "infra/eg", "-f", eg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "404 not found") || !strings.Contains(out, "ClientTrafficPolicy\n    for Gateway eg#http\n      timeout.http.idleTimeout") {
		t.Errorf("a 404 on listener http must show the listener's ClientTrafficPolicy:\n%s", out)
	}
	js, _, err := run(t, "trace", "grpc://shop.example/a.B/C", "--gateway", "infra/eg", "-f", eg, "-o", "json")
	if err != nil || !strings.Contains(js, `"policyKind": "ClientTrafficPolicy.gateway.envoyproxy.io"`) {
		t.Errorf("JSON: %v\n%s", err, js)
	}
	// No policy kinds at all: the heading says so rather than standing
	// alone.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gc
  listeners: [{name: http, protocol: HTTP, port: 80}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "trace", "http://x/", "-f", dir)
	if err != nil || !strings.Contains(out, "Policies on this path: none (no policy kinds among the objects)") {
		t.Errorf("no policy kinds: %v\n%s", err, out)
	}
}

// TestTraceBackendRewriteText checks that the text names the request a
// backend receives when its own URLRewrite changes the host or path, and
// writes a backend without a port without one.
func TestTraceBackendRewriteText(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gc
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs:
    - name: s
      port: 80
      filters:
      - type: URLRewrite
        urlRewrite: {hostname: v2.internal, path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}
  - matches: [{path: {type: PathPrefix, value: /bucket}}]
    backendRefs: [{group: example.com, kind: Bucket, name: b}]
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec: {ports: [{port: 80}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "trace", "http://h/api/x", "-f", dir)
	if err != nil || !strings.Contains(out, "  backend   Service default/s:80  weight 1\n            upstream v2.internal/v2/x\n") {
		t.Errorf("%v\n%s", err, out)
	}
	// A backendRef without a port is written without one (not ":0").
	out, _, err = run(t, "trace", "http://h/bucket", "-f", dir)
	if err != nil || !strings.Contains(out, "  backend   Bucket default/b  weight 1  INVALID") {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestTraceIstioAuthorization: trace says what Istio's AuthorizationPolicies
// on the Gateway do with the request: denied by the DENY policy, allowed
// by an ALLOW rule, or unknown when only a rule about the client could
// allow it; the JSON carries the same decision.
func TestTraceIstioAuthorization(t *testing.T) {
	file := filepath.Join("testdata", "istio-authz.yaml")
	for _, c := range []struct{ url, want string }{
		{"http://shop.example.com/admin/x", "  authz     deny (Istio answers 403): DENY AuthorizationPolicy shop/no-admin rules[0] matches\n"},
		{"http://shop.example.com/public/a", "  authz     allow: ALLOW AuthorizationPolicy shop/internal-only rules[1] matches\n"},
		{"http://shop.example.com/cart", "  authz     unknown: no ALLOW rule surely matches; the verdict depends on rules whose match the request does not tell\n" +
			"            not told by the request: ALLOW AuthorizationPolicy shop/internal-only rules[0]: from.source (ipBlocks) is about the client, which a request does not tell\n"},
	} {
		out, errOut, err := run(t, "trace", c.url, "-f", file)
		if err != nil {
			t.Fatalf("%s: %v: %s", c.url, err, errOut)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: trace lacks %q:\n%s", c.url, c.want, out)
		}
	}
	// The fields of an additive kind's policies are said to apply side by
	// side, not by a merge strategy.
	out, errOut, err := run(t, "trace", "http://shop.example.com/admin/x", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if !strings.Contains(out, "bare spec, additive)") || strings.Contains(out, "patch-defaults") {
		t.Errorf("the policies' fields are not labelled additive:\n%s", out)
	}
	out, errOut, err = run(t, "trace", "http://shop.example.com/admin/x", "-f", file, "-o", "json")
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var tr struct {
		Outcomes []struct {
			Result        string `json:"result"`
			Authorization *struct {
				Verdict string `json:"verdict"`
				Policy  struct{ Name string }
				Rule    int `json:"rule"`
			} `json:"authorization"`
		} `json:"outcomes"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.Outcomes) != 1 || tr.Outcomes[0].Authorization == nil || tr.Outcomes[0].Authorization.Verdict != "deny" ||
		tr.Outcomes[0].Authorization.Policy.Name != "no-admin" || tr.Outcomes[0].Result != "forwarded" {
		t.Errorf("JSON: %s", out)
	}
}

// TestTraceIstioAuthorizationScope: the decision is the Gateway's own:
// policies on its GatewayClass (Istio applies those to waypoints) and dry
// runs (istio.io/dry-run, evaluated but not enforced, noted) take no part;
// the Host header is matched as sent; a Gateway Istio does not program
// gets no decision.
func TestTraceIstioAuthorizationScope(t *testing.T) {
	base := func(controller string) string {
		return implementationCRD("security.istio.io", "AuthorizationPolicy", "authorizationpolicies", "v1") + `---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: ` + controller + `}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ingress, namespace: shop}
spec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}, {name: alt, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  parentRefs: [{name: ingress}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {ports: [{port: 80}]}
`
	}
	const (
		classDeny = `
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: class-deny, namespace: istio-system}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio}]
  action: DENY
  rules: [{}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: dry, namespace: shop, annotations: {istio.io/dry-run: "true"}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ingress}]
  action: DENY
  rules: [{}]
`
		onlyShop = `
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: only-shop, namespace: shop}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ingress}]
  rules: [{to: [{operation: {hosts: [shop.example.com]}}]}]
`
	)
	for _, c := range []struct {
		name, controller, extra string
		args                    []string
		want, not               string
	}{
		{"class and dry run left out", "istio.io/gateway-controller", classDeny, []string{"http://shop.example.com/"},
			"  authz     allow: no DENY policy matches and no ALLOW policy applies to the workload\n", ""},
		// Invalid on Istio's ingress class (istiod attaches class
		// targets at waypoints only; since session 28): not on the path.
		{"the class's policy not on the path", "istio.io/gateway-controller", classDeny, []string{"http://shop.example.com/"}, "    for Gateway ingress\n", "GatewayClass istio"},
		{"dry run noted", "istio.io/gateway-controller", classDeny, []string{"http://shop.example.com/"},
			"note      AuthorizationPolicy shop/dry is a dry run (istio.io/dry-run): Istio evaluates it without enforcing it; the authorization leaves it out", ""},
		{"Host header as given, no port", "istio.io/gateway-controller", onlyShop, []string{"http://10.0.0.1:8080/", "-H", "Host: shop.example.com"}, "  authz     allow: ", ""},
		{"Host header as given, with its port", "istio.io/gateway-controller", onlyShop, []string{"http://10.0.0.1/", "-H", "Host: shop.example.com:8080"}, "  authz     deny ", ""},
		{"URL port in the Host", "istio.io/gateway-controller", onlyShop, []string{"http://shop.example.com:8080/"}, "  authz     deny ", ""},
		{"URL default port left out", "istio.io/gateway-controller", onlyShop, []string{"http://shop.example.com:80/"}, "  authz     allow: ", ""},
		{"not Istio's Gateway", "gateway.envoyproxy.io/gatewayclass-controller", onlyShop, []string{"http://shop.example.com:8080/"}, "  result    forwarded", "authz"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "in.yaml")
			if err := os.WriteFile(f, []byte(base(c.controller)+c.extra), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := run(t, append(append([]string{"trace"}, c.args...), "-f", f)...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			if !strings.Contains(out, c.want) || (c.not != "" && strings.Contains(out, c.not)) {
				t.Errorf("want %q (and no %q):\n%s", c.want, c.not, out)
			}
		})
	}
}

// A request a kgateway route delegates is shown with the rule that
// delegated it.
func TestTraceTextDelegatedBy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deleg.yaml")
	docs := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: kgateway
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: to-a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: delegation.kgateway.dev, kind: label, name: a, namespace: team-a}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a1, namespace: team-a, labels: {delegation.kgateway.dev/label: a}}
spec:
  rules:
  - name: orders
    matches: [{path: {type: PathPrefix, value: /a/orders}}]
    backendRefs: [{name: orders, port: 80}]
`
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "trace", "http://x.example/a/orders", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "route     HTTPRoute team-a/a1, rule orders\n            delegated by HTTPRoute infra/parent, rule to-a\n") {
		t.Errorf("trace does not say which rule delegated:\n%s", out)
	}
}

// --profiles=false turns off the implementations' reading of route
// delegation too: under an Envoy Gateway Gateway, which delegates nothing,
// kgateway's label form is followed only then.
func TestTraceDelegationProfilesOff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deleg.yaml")
	docs := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: infra}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: to-a
    matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{group: delegation.kgateway.dev, kind: label, name: a, namespace: team-a}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a1, namespace: team-a, labels: {delegation.kgateway.dev/label: a}}
spec:
  rules:
  - name: orders
    matches: [{path: {type: PathPrefix, value: /a/orders}}]
    backendRefs: [{name: orders, port: 80}]
`
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	const delegated = "route     HTTPRoute team-a/a1, rule orders\n            delegated by HTTPRoute infra/parent, rule to-a\n"
	out, _, err := run(t, "trace", "http://x.example/a/orders", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, delegated) {
		t.Errorf("with profiles, Envoy Gateway's Gateway delegates:\n%s", out)
	}
	out, _, err = run(t, "trace", "http://x.example/a/orders", "-f", path, "--profiles=false")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, delegated) {
		t.Errorf("--profiles=false does not follow the delegation:\n%s", out)
	}
}

// TestTraceWarnsWhatTracingLeftOut checks that what building the trace's
// index reports (here route delegation expanding past its bound) is
// printed as a warning, as the engine's problems are.
func TestTraceWarnsWhatTracingLeftOut(t *testing.T) {
	var docs []string
	for _, u := range gen.InheritChain(6, 4) {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	file := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "trace", "http://x/l0m0/l1m0/l2m0/l3m0/l4m0/l5m0/l6m0", "-f", file)
	if err != nil || !strings.Contains(out, "r6") {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(errOut, "warning: HTTPRoute.gateway.networking.k8s.io default/r0: spec.rules[0]: the routes this rule delegates to reach more than 4096 matches") {
		t.Errorf("no warning of the bound:\n%s", errOut)
	}
}

// TestTraceMesh checks attache trace --mesh on a bookinfo mesh (Istio
// ambient, GAMMA routes): the text form names the Service and port, the
// waypoint (and a canary's share), the route and rule, backends, the
// decision of the AuthorizationPolicies and the policies istiod applies
// at the waypoint; a Service without route goes to itself, one bound to no
// waypoint through none; YAML is a RequestTrace with `mesh`. Bad
// combinations are refused, and a request no Gateway takes whose host
// names a Service says --mesh would trace it.
func TestTraceMesh(t *testing.T) {
	file := filepath.Join("..", "..", "examples", "mesh", "bookinfo.yaml")
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"trace-mesh-reviews.txt", []string{"http://reviews.bookinfo:9080/reviews/1", "-H", "end-user: jason"}},
		{"trace-mesh-details-canary.txt", []string{"http://details:9080/details/1", "-n", "bookinfo", "-X", "POST"}},
		{"trace-mesh-ratings-unbound.yaml", []string{"http://ratings.bookinfo.svc.cluster.local:9080/", "-o", "yaml"}},
	} {
		out, _, err := run(t, append(append([]string{"trace", "--mesh"}, c.args...), "-f", file)...)
		if err != nil {
			t.Fatalf("%s: %v", c.golden, err)
		}
		golden(t, c.golden, []byte(out))
	}
	out, _, err := run(t, "trace", "--mesh", "http://reviews.bookinfo:9080/admin", "-f", file)
	if err != nil || !strings.Contains(out, "authz     deny (Istio answers 403): DENY AuthorizationPolicy bookinfo/no-admin rules[0] matches") ||
		!strings.Contains(out, "route     HTTPRoute bookinfo/reviews, rule v1") {
		t.Errorf("/admin: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "--mesh", "http://reviews.bookinfo:9080/", "--gateway", "bookinfo/waypoint"}, "--mesh and --gateway exclude each other"},
		{[]string{"trace", "--mesh", "http://reviews.bookinfo/"}, "Service bookinfo/reviews has no port 80 (its ports: 9080, 9090)"},
		{[]string{"trace", "--mesh", "http://reviews:9080/"}, "names Service default/reviews, which is not among the objects"},
	} {
		_, _, err := run(t, append(tc.args, "-f", file)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
	out, _, err = run(t, "trace", "http://reviews.bookinfo:9080/", "-f", file)
	if err != nil || !strings.Contains(out, "The host names Service bookinfo/reviews: to trace the request as a pod sends it in the mesh, add --mesh.") {
		t.Errorf("hint: %v\n%s", err, out)
	}
	// The Gateway form is unchanged by the mesh's fields.
	out, _, err = run(t, "trace", "http://cupcakes.example/orders", "-f", parable, "-o", "json")
	if err != nil || strings.Contains(out, `"mesh"`) || strings.Contains(out, `"waypoint"`) {
		t.Errorf("Gateway trace: %v\n%s", err, out)
	}
}
