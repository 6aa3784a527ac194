package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

const (
	describeParable  = "../../examples/parable"
	describeExample3 = "../../examples/gep-713/example-3"
)

func TestDescribeGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		// Ana's question: the namespace retries must show at once.
		{"describe-httproute-baker.txt", []string{"describe", "httproute/baker", "-n", "baker", "-f", describeParable}},
		{"describe-httproute-baker.json", []string{"describe", "httproute/baker", "-n", "baker", "-f", describeParable, "-o", "json"}},
		{"describe-httproute-baker.yaml", []string{"describe", "httproute/baker", "-n", "baker", "-f", describeParable, "-o", "yaml"}},
		{"describe-httproute-frosting.txt", []string{"describe", "httproute/frosting", "-n", "baker", "-f", describeParable}},
		{"describe-service-oven.txt", []string{"describe", "service/oven", "-n", "baker", "-f", describeParable}},
		{"describe-gateway-cupcakes.txt", []string{"describe", "gateway/cupcakes", "-n", "infra", "-f", describeParable}},
		{"describe-gateway-cupcakes-http.txt", []string{"describe", "gateway/cupcakes", "-n", "infra", "--section", "http", "-f", describeParable}},
		{"describe-namespace-baker.txt", []string{"describe", "namespace/baker", "-f", describeParable}},
		// Chihiro's question: how many things does this policy affect?
		{"describe-policy-namespace-retries.txt", []string{"describe", "policy", "retrypolicy/namespace-retries", "-n", "baker", "-f", describeParable}},
		{"describe-policy-baker-timeouts.txt", []string{"describe", "policy", "timeoutpolicy/baker-timeouts", "-n", "baker", "-f", describeParable}},
		{"describe-policy-baker-timeouts.json", []string{"describe", "policy", "timeoutpolicy/baker-timeouts", "-n", "baker", "-f", describeParable, "-o", "json"}},
		{"describe-policy-baker-timeouts.yaml", []string{"describe", "policy", "timeoutpolicy/baker-timeouts", "-n", "baker", "-f", describeParable, "-o", "yaml"}},
		{"describe-example-3-service-b1.txt", []string{"describe", "service/b1", "-n", "default", "-f", describeExample3}},
		{"describe-gatewayclass-cupcakes.txt", []string{"describe", "gatewayclass/cupcakes", "-f", describeParable}},
		// A route rule: the section of Ana's route that sends to Service baker.
		{"describe-httproute-baker-orders.txt", []string{"describe", "httproute/baker", "-n", "baker", "--section", "orders", "-f", describeParable}},
		{"describe-namespace-baker.json", []string{"describe", "namespace/baker", "-f", describeParable, "-o", "json"}},
		{"describe-policy-namespace-retries.yaml", []string{"describe", "policy", "retrypolicy/namespace-retries", "-n", "baker", "-f", describeParable, "-o", "yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			if err != nil {
				t.Fatalf("attache %s: %v (stderr %q)", strings.Join(tc.args, " "), err, errOut)
			}
			// The examples are valid: any warning is a regression.
			if errOut != "" {
				t.Errorf("unexpected stderr:\n%s", errOut)
			}
			golden(t, tc.name, []byte(out))
		})
	}
}

// TestDescribeRouteKinds describes an object of every route kind, and a
// rule, behind one Gateway (testdata/route-kinds.yaml): each one shows the
// Gateway's policy, and the TCPRoute rule its own policy beating it.
func TestDescribeRouteKinds(t *testing.T) {
	var all strings.Builder
	for _, args := range [][]string{
		{"httproute/web"},
		{"grpcroute/orders"},
		{"tlsroute/vault"},
		{"tcproute/db"},
		{"udproute/dns"},
		{"tcproute/db", "--section", "primary"},
		{"grpcroute/orders#list"},
	} {
		args = append([]string{"describe"}, args...)
		args = append(args, "-n", "apps", "-f", "testdata/route-kinds.yaml")
		out, errOut, err := run(t, args...)
		if err != nil {
			t.Fatalf("attache %s: %v (stderr %q)", strings.Join(args, " "), err, errOut)
		}
		if errOut != "" {
			t.Errorf("attache %s: unexpected stderr:\n%s", strings.Join(args, " "), errOut)
		}
		fmt.Fprintf(&all, "$ attache %s\n%s\n", strings.Join(args, " "), out)
	}
	golden(t, "describe-route-kinds.txt", []byte(all.String()))
}

// TestDescribeSameAnswer checks the other spellings of a question give the
// same answer: kubectl's TYPE NAME, TYPE/NAME#SECTION, a policy kind as TYPE,
// -A, and the plural policy kind.
func TestDescribeSameAnswer(t *testing.T) {
	for _, tc := range []struct{ want, got []string }{
		{[]string{"describe", "httproute/baker", "-n", "baker"}, []string{"describe", "httproutes", "baker", "-A"}},
		{[]string{"describe", "gateway/cupcakes", "--section", "http"}, []string{"describe", "gtw/cupcakes#http", "-n", "infra"}},
		{[]string{"describe", "policy", "retrypolicy/namespace-retries", "-n", "baker"}, []string{"describe", "retrypolicy/namespace-retries"}},
		{[]string{"describe", "policy", "retrypolicy/namespace-retries"}, []string{"describe", "policies", "retrypolicies", "namespace-retries", "-n", "baker"}},
	} {
		t.Run(strings.Join(tc.got, " "), func(t *testing.T) {
			want, _, err := run(t, append(tc.want, "-f", describeParable)...)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := run(t, append(tc.got, "-f", describeParable)...)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestDescribeErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", "widget/baker"}, []string{`unknown type "widget"`, "httproute", "describe policy KIND/NAME"}},
		{[]string{"describe", "httproute/bakr", "-n", "baker"}, []string{"httproute/bakr not found in namespace baker", "-A", "baker, frosting, sprinkles"}},
		{[]string{"describe", "httproute/baker", "-n", "infra"}, []string{"httproute/baker not found in namespace infra", "it exists in namespace baker: use -n baker"}},
		{[]string{"describe", "service/nope"}, []string{"service/nope not found in any namespace", "Service objects in any namespace"}},
		{[]string{"describe", "grpcroute/x"}, []string{"grpcroute/x not found", "there is no GRPCRoute", "attache get policies -A"}},
		{[]string{"describe", "httproute"}, []string{`"httproute" is not TYPE/NAME`, "httproute/baker"}},
		{[]string{"describe", "gatewayclass/nope", "-n", "baker"}, []string{"gatewayclass/nope not found in the input", "GatewayClass objects in the input: cupcakes"}},
		{[]string{"describe", "policy", "retrypolicy/namespace-retries", "-n", "infra"}, []string{`RetryPolicy "namespace-retries" not found in namespace infra`, "it exists in namespace baker: use -n baker"}},
		{[]string{"describe", "/baker"}, []string{"is not TYPE/NAME"}},
		{[]string{"describe"}, []string{"takes one TYPE/NAME", "describe httproute/baker -n baker"}},
		{[]string{"describe", "gateway/cupcakes", "--section", "https"}, []string{`has no section "https"`, "its sections are: http"}},
		{[]string{"describe", "namespace/baker", "--section", "x"}, []string{"Namespace baker has no sections", "without --section"}},
		{[]string{"describe", "gateway/cupcakes#http", "--section", "admin"}, []string{"two sections given"}},
		{[]string{"describe", "httproute/baker", "-o", "wide"}, []string{`unknown output format "wide"`, "-o text, -o json or -o yaml"}},
		{[]string{"describe", "httproute/baker", "-l", "team=baker"}, []string{"no -l selector", "attache get policies -l team=baker"}},
		{[]string{"describe", "policy", "widgetpolicy/x"}, []string{`unknown policy kind "widgetpolicy"`, "retrypolicy", "get policykinds"}},
		{[]string{"describe", "policy", "retrypolicy/nope", "-n", "baker"}, []string{`RetryPolicy "nope" not found in namespace baker`, "attache get policies -A"}},
		{[]string{"describe", "policy", "retrypolicy"}, []string{"is not TYPE/NAME"}},
		{[]string{"describe", "policy", "retrypolicy,timeoutpolicy/x"}, []string{"takes one policy kind"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, append(tc.args, "-f", describeParable)...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestDescribeNotInEffect covers what the parable does not show: a policy
// attached to the object that is in no context (a missing ReferenceGrant,
// a missing section), and an object no policy reaches.
func TestDescribeNotInEffect(t *testing.T) {
	dir := t.TempDir()
	input := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/effective-target-kinds: Service}
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: alone, namespace: quiet}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: on-gw, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra}]
  color: red
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: on-rule, namespace: app}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: rule-1}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: rule-9}
  color: blue
`
	path := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"describe", "gateway/gw", "-n", "infra"}, []string{
			"Affected by policies: yes (1; 1 more is attached but not in effect)",
			"ColorPolicy app/on-rule  on HTTPRoute app/r#rule-1 (below)",
			"Attached here but not in effect (1):",
			"ColorPolicy app/on-gw  on Gateway infra/gw (this object)",
			"here (Gateway infra/gw): Accepted=False Invalid:", "ReferenceGrant",
		}},
		{[]string{"describe", "httproute/r", "-n", "app"}, []string{
			"on HTTPRoute app/r#rule-1 (a section of this object)",
			`color: "blue"  <- ColorPolicy app/on-rule (HTTPRoute app/r#rule-1, bare spec, atomic-defaults)`,
			"for gw#http > r#rule-1 > Service s",
		}},
		{[]string{"describe", "service/alone"}, []string{
			"Affected by policies: no\n",
			"No policy of any kind reaches it",
			"ColorPolicy: none here (no ColorPolicy in effect on any path through this Service)",
		}},
		{[]string{"describe", "policy", "colorpolicy/on-rule"}, []string{
			"Affects 1 Service in 1 namespace; 1 context: 1 full, 0 partial, 0 none",
			"Targets:      HTTPRoute app/r#rule-1, HTTPRoute app/r#rule-9",
			"attached at HTTPRoute app/r#rule-1",
			"Targets not found: HTTPRoute app/r#rule-9",
		}},
		{[]string{"describe", "policy", "colorpolicy/on-gw"}, []string{
			"Affects nothing; 0 contexts: 0 full, 0 partial, 0 none",
			"Not accepted at:", "Gateway infra/gw: Accepted=False Invalid:",
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := run(t, append(tc.args, "-f", path)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestDescribeAgreesWithEngine checks, on every example and conformance
// input, that describe's own per-context tallies match the engine's: the
// outcome of a policy in a context is recomputed here (the engine does not
// expose it per context), so a change in the engine's rule must show.
func TestDescribeAgreesWithEngine(t *testing.T) {
	inputs, _ := filepath.Glob("../../conformance/testdata/*/manifests.yaml")
	inputs = append(inputs, describeParable, describeExample3, "../../examples/gep-713/example-1", "../../examples/gep-713/example-2", "../../examples/gep-713/abstract")
	checked := 0
	for _, in := range inputs {
		objs, _, err := manifest.Read([]string{in}, strings.NewReader(""))
		if err != nil {
			continue // inputs that cannot be read are another test's business
		}
		res := engine.Compute(objs, engine.Options{})
		d := newDescriber(res, "")
		for _, ps := range res.Policies {
			checked++
			desc := d.policy(ps)
			var got engine.Reach
			for _, c := range desc.Reach.Contexts {
				got.Contexts++
				switch c.Outcome {
				case engine.OutcomeFull:
					got.Full++
				case engine.OutcomePartial:
					got.Partial++
				default:
					got.None++
				}
			}
			if got != ps.Reach {
				t.Errorf("%s: %s: describe counts %+v, engine %+v", in, ps.Policy.Ref.Short(), got, ps.Reach)
			}
		}
		// Every effective target: the policies describe says set fields are
		// those the engine says affect it.
		affected := map[topology.Ref]map[topology.Ref]bool{}
		for _, a := range res.Affected {
			for _, p := range a.Policies {
				if affected[a.Target] == nil {
					affected[a.Target] = map[topology.Ref]bool{}
				}
				affected[a.Target][p] = true
			}
		}
		for _, e := range res.Effective {
			desc := d.target(e.Target)
			for _, p := range desc.Policies {
				if p.PolicyKind != e.Kind.String() {
					continue
				}
				if p.SetsFields != affected[e.Target][p.Policy] {
					t.Errorf("%s: %s: describe says %s sets fields: %v; engine Affected: %v", in, e.Target.Short(), p.Policy.Short(), p.SetsFields, affected[e.Target][p.Policy])
				}
			}
		}
	}
	t.Logf("%d policies checked", checked)
	// Guard against a glob that silently matches nothing.
	if checked < 50 {
		t.Fatalf("only %d policies checked; are the inputs still there?", checked)
	}
}

// TestDescribeJSONShape pins the top-level field names of the documents.
func TestDescribeJSONShape(t *testing.T) {
	for _, tc := range []struct {
		args []string
		keys []string
	}{
		{[]string{"describe", "service/oven", "-n", "baker"}, []string{"apiVersion", "kind", "object", "affected", "policies", "effective"}},
		{[]string{"describe", "policy", "retrypolicy/namespace-retries", "-n", "baker"}, []string{"apiVersion", "kind", "policy", "policyKind", "class", "targets", "stanza", "strategy", "spec", "conditions", "ancestors", "reach"}},
	} {
		out, _, err := run(t, append(tc.args, "-f", describeParable, "-o", "json")...)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.keys {
			if _, ok := doc[k]; !ok {
				t.Errorf("%s: no %q in %s", strings.Join(tc.args, " "), k, out)
			}
		}
	}
}

func TestDescribePath(t *testing.T) {
	gw := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "cupcakes"}
	rt := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "baker", Name: "baker"}
	svc := topology.Ref{Kind: "Service", Namespace: "baker", Name: "baker"}
	for _, tc := range []struct {
		path []topology.Ref
		want string
	}{
		{[]topology.Ref{{Group: topology.GatewayGroup, Kind: "GatewayClass", Name: "cupcakes"}, {Kind: "Namespace", Name: "infra"}, gw, gw.WithSection("http"),
			{Kind: "Namespace", Name: "baker"}, rt, rt.WithSection("orders"), svc}, "cupcakes#http > baker#orders > Service baker"},
		{[]topology.Ref{svc}, "Service baker"},
		{[]topology.Ref{gw.WithSection("http")}, "Gateway cupcakes#http"},
		// Mesh: a parent Service keeps its kind.
		{[]topology.Ref{svc, rt, rt.WithSection("rule-1"), {Kind: "Service", Namespace: "baker", Name: "oven"}}, "Service baker > baker#rule-1 > Service oven"},
	} {
		if got := describePath(tc.path); got != tc.want {
			t.Errorf("describePath = %q, want %q", got, tc.want)
		}
	}
}

// TestDescribeEmptySpec: a policy whose spec sets nothing (only targetRefs,
// or an empty stanza) contributes no field, so it does not affect the
// object (decision 8); it is not beaten either, and nothing may say it
// "wins in full". Before the fix, the summary counted it as beaten entirely
// while its own line said it won in full.
func TestDescribeEmptySpec(t *testing.T) {
	input := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/effective-target-kinds: Service}
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: red, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: red
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: only-targets, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: empty-defaults, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  defaults: {}
`
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, errOut, err := run(t, append(args, "-f", path)...)
		if err != nil {
			t.Fatalf("attache %s: %v (stderr %q)", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	contains := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output does not say %q:\n%s", w, out)
			}
		}
		if strings.Contains(out, "wins in full") || strings.Contains(out, "Wins in full") || strings.Contains(out, "programmed in full") {
			t.Errorf("output says a policy wins in full, yet none sets a field:\n%s", out)
		}
	}

	// The route's empty atomic defaults replace everything above it: red
	// is beaten entirely, the two empty policies set nothing.
	out := mustRun("describe", "service/s", "-n", "app")
	contains(out,
		"Affected by policies: no (1 policy reaches it but is beaten entirely; 2 policies reach it but set no field)\n",
		"bare spec, atomic-defaults; Accepted, Overridden; here: beaten entirely in its only context",
		"bare spec, atomic-defaults; Accepted, Programmed; here: sets no field in its only context",
		"defaults, atomic-defaults; Accepted, Programmed; here: sets no field in its only context",
		"(empty spec)")

	var doc targetDescription
	if err := json.Unmarshal([]byte(mustRun("describe", "service/s", "-n", "app", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Affected {
		t.Error("describe -o json: affected is true, yet no policy sets a field")
	}
	for _, p := range doc.Policies {
		if p.SetsFields {
			t.Errorf("describe -o json: %s sets fields", p.Policy.Name)
		}
	}

	contains(mustRun("describe", "policy", "colorpolicy/empty-defaults", "-n", "app"),
		"Affects nothing; 1 context: 1 full, 0 partial, 0 none",
		"Sets no field in 1 context:",
		"Programmed=True Programmed: Policy is programmed but sets no field in its only context, so it affects nothing")

	// get policies: nothing affected, and the status message says why.
	var list struct {
		Items []struct {
			Ref     topology.Ref `json:"ref"`
			Affects []topology.Ref
			Conds   []engine.Condition `json:"conditions"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun("get", "policies", "-n", "app", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 {
		t.Fatalf("get policies -o json: %d items, want 3", len(list.Items))
	}
	for _, it := range list.Items {
		if len(it.Affects) != 0 {
			t.Errorf("%s affects %v", it.Ref.Name, it.Affects)
		}
		if it.Ref.Name == "red" {
			continue
		}
		if c := it.Conds[len(it.Conds)-1]; c.Reason != engine.ReasonProgrammed || !strings.Contains(c.Message, "sets no field") {
			t.Errorf("%s: Programmed condition %+v does not say it sets no field", it.Ref.Name, c)
		}
	}
	contains(mustRun("get", "policies", "-n", "app", "-o", "wide"))
}

// TestDescribeWeight: a kind given a weight annotation by its CRD
// (attache.dev/weight-annotation) with the oldest-wins rule: the newer
// policy with the higher weight is established at the level, the older is
// Conflicted with a message saying the weight decided, and describe shows
// each policy's weight. A CRD naming no valid annotation is rejected,
// naming its annotation.
func TestDescribeWeight(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations: {attache.dev/same-level: oldest-wins, attache.dev/weight-annotation: %s}
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`
	rest := `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: old, namespace: app, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  defaults: {color: red}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: heavy, namespace: app, creationTimestamp: "2024-01-02T00:00:00Z", annotations: {example.com/weight: "7"}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  defaults: {color: blue}
`
	file := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(crd, "example.com/weight")+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "describe", "colorpolicy", "old", "-n", "app", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	for _, s := range []string{
		"Weight:       0 (example.com/weight; at one level, the higher goes first)",
		"Conflicted",
		"Conflicts with the established ColorPolicy app/heavy on the same target HTTPRoute app/r: the policy with the highest example.com/weight on a target wins, the oldest of equal weight (its example.com/weight is higher (7, not 0))",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("describe old lacks %q:\n%s", s, out)
		}
	}
	out, errOut, err = run(t, "describe", "colorpolicy", "heavy", "-n", "app", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if !strings.Contains(out, "Weight:       7 (example.com/weight") || !strings.Contains(out, "Programmed=True") {
		t.Errorf("describe heavy:\n%s", out)
	}

	if err := os.WriteFile(file, []byte(fmt.Sprintf(crd, `"not a name!"`)+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ = run(t, "get", "policykinds", "-f", file)
	if !strings.Contains(errOut, "metadata.annotations[attache.dev/weight-annotation]") || !strings.Contains(errOut, `"not a name!" is not an annotation name`) {
		t.Errorf("an invalid weight annotation name is not reported on the CRD's annotation: %s", errOut)
	}
}

// TestFilterAttachedPolicyTargets: a kgateway TrafficPolicy with no
// targetRefs, named by a rule's ExtensionRef filter, is accepted at that
// rule; get and describe say what it applies to instead of its targets.
func TestFilterAttachedPolicyTargets(t *testing.T) {
	file := filepath.Join("testdata", "kgateway-extensionref.yaml")
	out, errOut, err := run(t, "get", "policies", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if !strings.Contains(out, "(the route rules whose ExtensionRef filters name it)") || !strings.Contains(out, "Accepted   Programmed") {
		t.Errorf("get policies:\n%s", out)
	}
	out, errOut, err = run(t, "describe", "trafficpolicy", "by-filter", "-n", "default", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	// Its ancestor is the rule's Gateway (kgateway's); its reach names
	// the rule.
	for _, s := range []string{"Targets:      none declared: the route rules whose ExtensionRef filters name it", "Gateway default/g1\n    Accepted=True", "g1#http > HTTPRoute r1#rule-1"} {
		if !strings.Contains(out, s) {
			t.Errorf("describe lacks %q:\n%s", s, out)
		}
	}
	// trace: the rule's request gets the policy, and the filter's note
	// points there.
	out, errOut, err = run(t, "trace", "http://x/", "-f", file)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	for _, s := range []string{"filter ExtensionRef to TrafficPolicy.gateway.kgateway.dev by-filter is not modelled as a filter; if its kind is a policy kind attached by route filters, the policy is among the effective policies below",
		`timeouts.request: "3s"  <- TrafficPolicy default/by-filter (HTTPRoute default/r1#rule-1`} {
		if !strings.Contains(out, s) {
			t.Errorf("trace lacks %q:\n%s", s, out)
		}
	}
}

// TestDescribeIstioTelemetry: describe shows istiod's merge of the
// Telemetries on a Gateway, each value with the Telemetry that set it, and
// says why a second namespace-wide Telemetry is Conflicted.
func TestDescribeIstioTelemetry(t *testing.T) {
	const file = "testdata/istio-telemetry.yaml"
	out, _, err := run(t, "describe", "gateway", "ingress", "-n", "shop", "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`accessLogging.envoy.filter.expression: "response.code >= 500"  <- Telemetry shop/ingress-logs`,
		`tracing.provider: "zipkin"             <- Telemetry istio-system/mesh-default`,
		`tracing.randomSamplingPercentage: 100  <- Telemetry shop/shop`,
		`tracing.randomSamplingPercentage  (beaten by Telemetry shop/shop on Gateway shop/ingress)`,
	} {
		if !strings.Contains(out, line) {
			t.Errorf("describe gateway lacks %q:\n%s", line, out)
		}
	}
	out, _, err = run(t, "describe", "telemetry", "shop-2", "-n", "shop", "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Accepted=False Conflicted: Conflicts with the established Telemetry shop/shop, also without selector or targetRefs in namespace shop",
		"Conflicted (istiod applies only the oldest Telemetry without selector or targetRefs of a namespace)",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("describe telemetry lacks %q:\n%s", line, out)
		}
	}
}

// A declared target of a kind that could not be read (a ClusterRole
// without it) is listed as not read, not judged: neither among the
// targets not found nor silently left out.
func TestDescribePolicyTargetsNotRead(t *testing.T) {
	const docs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.example.com, labels: {gateway.networking.k8s.io/policy: Direct}, annotations: {attache.dev/target-kinds: "Gateway,XListenerSet.gateway.networking.x-k8s.io"}}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: ColorPolicy, plural: colorpolicies}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: c}
spec: {controllerName: example.com/c}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: example.com/v1
kind: ColorPolicy
metadata: {name: p, namespace: default}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: g}
  - {group: gateway.networking.x-k8s.io, kind: XListenerSet, name: team}
  color: blue
`
	objs, _, err := manifest.Read([]string{"-"}, strings.NewReader(docs))
	if err != nil {
		t.Fatal(err)
	}
	res := engine.Compute(objs, engine.Options{Unread: func(r topology.Ref) bool { return r.GroupKind() == topology.KindXListenerSet }})
	d := newDescriber(res, "")
	var desc *policyDescription
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == "p" {
			desc = d.policy(ps)
		}
	}
	if desc == nil {
		t.Fatalf("no policy p: %v", res.Problems)
	}
	xls := topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: "default", Name: "team"}
	if !slices.Equal(desc.Reach.TargetsNotRead, []report.Ref{xls}) || len(desc.Reach.TargetsNotFound) != 0 {
		t.Errorf("not read %v, not found %v; want the XListenerSet not read, none not found", desc.Reach.TargetsNotRead, desc.Reach.TargetsNotFound)
	}
	var b strings.Builder
	if err := d.printPolicy(&b, desc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  Targets not read (not judged): XListenerSet default/team\n") || !strings.Contains(b.String(), "  Targets not found: none\n") {
		t.Errorf("text:\n%s", b.String())
	}
}

// A section among what a policy affects is counted as a section (a
// Service's port), not as one more object of its kind.
func TestReachSummarySections(t *testing.T) {
	svc := func(name, port string) report.Ref {
		return report.Ref{Kind: "Service", Namespace: "default", Name: name, SectionName: port}
	}
	r := policyReach{Affects: []report.Ref{svc("a", "http"), svc("a", "https"), svc("b", "")}, Namespaces: []string{"default"},
		Totals: engine.Reach{Contexts: 3, Full: 3}}
	if got, want := reachSummary(r), "Affects 2 Service ports and 1 Service in 1 namespace; 3 contexts: 3 full, 0 partial, 0 none"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	rule := report.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: "r", SectionName: "rule-1"}
	listener := report.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "default", Name: "g", SectionName: "http"}
	r = policyReach{Affects: []report.Ref{rule, listener}, Namespaces: []string{"default"}, Totals: engine.Reach{Contexts: 2, Full: 2}}
	if got, want := reachSummary(r), "Affects 1 HTTPRoute rule and 1 Gateway listener in 1 namespace; 2 contexts: 2 full, 0 partial, 0 none"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
