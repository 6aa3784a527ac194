package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

const (
	graphParable  = "../../examples/parable"
	graphExample2 = "../../examples/gep-713/example-2"
)

func TestGraphGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"graph-parable-httproute-baker", []string{"httproute/baker", "-n", "baker", "-f", graphParable}},
		{"graph-parable", []string{"-f", graphParable}},
		{"graph-example-2", []string{"-f", graphExample2}},
	} {
		for _, f := range []struct{ flag, ext string }{{"dot", ".dot"}, {"mermaid", ".mmd"}} {
			name := tc.name + f.ext
			t.Run(name, func(t *testing.T) {
				args := append([]string{"graph"}, tc.args...)
				args = append(args, "-o", f.flag)
				out, errOut, err := run(t, args...)
				if err != nil {
					t.Fatalf("%v (stderr %q)", err, errOut)
				}
				if errOut != "" {
					t.Errorf("unexpected stderr:\n%s", errOut)
				}
				golden(t, name, []byte(out))
			})
		}
	}
}

// TestGraphDefaultIsDot checks that -o defaults to dot.
func TestGraphDefaultIsDot(t *testing.T) {
	def, _, err := run(t, "graph", "-f", graphExample2)
	if err != nil {
		t.Fatal(err)
	}
	dot, _, err := run(t, "graph", "-f", graphExample2, "-o", "dot")
	if err != nil {
		t.Fatal(err)
	}
	if def != dot {
		t.Error("graph without -o differs from -o dot")
	}
}

func TestGraphScopes(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		want     []string
		wantNot  []string
		checkDot bool
	}{
		// A section: its object above, the routes below; not the other
		// namespace's unrelated policies.
		{args: []string{"gateway/cupcakes", "--section", "http", "-n", "infra"},
			want:    []string{`"target:Gateway.gateway.networking.k8s.io infra/cupcakes#http"`, `"target:GatewayClass.gateway.networking.k8s.io cupcakes"`, `"target:HTTPRoute.gateway.networking.k8s.io baker/frosting"`, `label="Gateway infra/cupcakes#http"`},
			wantNot: nil},
		// A Service: its routes and Gateway above, its port below, not the
		// sibling Services.
		{args: []string{"service/frosting", "-n", "baker"},
			want:    []string{`"target:Service baker/frosting#http"`, `"target:HTTPRoute.gateway.networking.k8s.io baker/frosting#rule-1"`, "frosting-retries", "namespace-retries"},
			wantNot: []string{`"target:Service baker/oven"`, "oven-tls", "baker-timeouts"}},
		// -n without TYPE/NAME: that namespace's objects and their
		// ancestors and descendants.
		{args: []string{"-n", "infra"},
			want: []string{"gateway-timeouts", `"target:Service baker/oven"`}},
		// The Namespace type is the same scope as -n.
		{args: []string{"namespace/baker"},
			want: []string{`label="namespace baker"`, "namespace-retries", `"target:Namespace baker" [shape=folder`}},
		// TYPE/NAME#SECTION, as describe prints sections, is --section.
		{args: []string{"gateway/cupcakes#http", "-n", "infra"},
			want: []string{`label="Gateway infra/cupcakes#http"`}},
		// Any namespace when reading files without -n.
		{args: []string{"svc/oven"},
			want:    []string{"oven-tls-new", `label="Conflicted"`},
			wantNot: []string{"frosting"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := run(t, append(append([]string{"graph"}, tc.args...), "-f", graphParable)...)
			if err != nil {
				t.Fatalf("%v (stderr %q)", err, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("output has %s:\n%s", w, out)
				}
			}
		})
	}
}

func TestGraphMissingTarget(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: lost, namespace: shop}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: gone}]
  color: red
`
	var out, errOut bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"graph", "-f", "-", "-o", "mermaid"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`["HTTPRoute<br/>gone<br/>(not found)"]:::missing`, `-. "TargetNotFound" .->`, ":::rejected"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %s:\n%s", w, out.String())
		}
	}
}

func TestGraphHiddenTargets(t *testing.T) {
	// A policy with targets outside the drawn scope says how many are not
	// drawn; the whole graph draws them all.
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
---
apiVersion: v1
kind: Service
metadata: {name: a, namespace: shop}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: shop}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: both, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: a}, {group: "", kind: Service, name: b}]
  color: red
`
	for _, tc := range []struct {
		args []string
		want string
		edge int
	}{
		{[]string{"service/a"}, `\n+1 not drawn"`, 1},
		{nil, `label="ColorPolicy\nboth\natomic-defaults\nProgrammed"`, 2},
	} {
		var out, errOut bytes.Buffer
		cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut})
		cmd.SetArgs(append([]string{"graph", "-f", "-"}, tc.args...))
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("graph %v lacks %s:\n%s", tc.args, tc.want, out.String())
		}
		if n := strings.Count(out.String(), `"policy:ColorPolicy.policies.example.com shop/both" ->`); n != tc.edge {
			t.Errorf("graph %v: %d attachment edges, want %d", tc.args, n, tc.edge)
		}
	}
}

func TestGraphSVG(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip(`graphviz "dot" is not installed: skipping the svg rendering test (apt-get install graphviz to run it)`)
	}
	out, errOut, err := run(t, "graph", "httproute/baker", "-n", "baker", "-f", graphParable, "-o", "svg")
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, errOut)
	}
	if !strings.HasPrefix(out, "<?xml") && !strings.HasPrefix(out, "<svg") {
		t.Errorf("not an svg document: %.80q", out)
	}
	// Graphviz writes "-" as &#45; in svg text.
	if !strings.Contains(out, "namespace&#45;retries") {
		t.Error("the svg does not show the namespace RetryPolicy")
	}
	png, _, err := run(t, "graph", "-f", graphExample2, "-o", "png")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(png, "\x89PNG") {
		t.Errorf("not a png: %.8q", png)
	}
}

func TestGraphWithoutGraphviz(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // a PATH without dot
	for _, format := range []string{"svg", "png"} {
		_, _, err := run(t, "graph", "-f", graphParable, "-o", format)
		if err == nil {
			t.Fatalf("-o %s without dot: no error", format)
		}
		want := `graphviz "dot" is not installed; install it (Debian/Ubuntu: apt-get install graphviz) or use -o dot / -o mermaid`
		if err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
	// dot and mermaid need no graphviz.
	for _, format := range []string{"dot", "mermaid"} {
		if _, _, err := run(t, "graph", "-f", graphParable, "-o", format); err != nil {
			t.Errorf("-o %s: %v", format, err)
		}
	}
}

func TestGraphErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"httproute/nope", "-n", "baker"}, []string{`httproute/nope not found in namespace baker`, "HTTPRoute objects in namespace baker: baker, frosting, sprinkles"}},
		{[]string{"httproute/baker", "-n", "infra"}, []string{`httproute/baker not found in namespace infra`, "it exists in namespace baker: use -n baker"}},
		{[]string{"gateway/cupcakes", "--section", "https", "-n", "infra"}, []string{`Gateway infra/cupcakes has no section "https"`, "its sections are: http"}},
		{[]string{"gateway/cupcakes#http", "--section", "https", "-n", "infra"}, []string{"two sections given"}},
		{[]string{"--section", "http"}, []string{"--section needs TYPE/NAME"}},
		{[]string{"widget/x"}, []string{`unknown type "widget"`}},
		{[]string{"httproute"}, []string{"is not TYPE/NAME"}},
		{[]string{"-o", "pdf"}, []string{`unknown output format "pdf"`, "-o mermaid"}},
		{[]string{"namespace/nowhere"}, []string{`namespace/nowhere not found`, "Namespace objects in the input: baker, infra"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, append(append([]string{"graph"}, tc.args...), "-f", graphParable)...)
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

// Kuadrant's Programmed=False, reason Unknown draws by what it says: a
// TokenRateLimitPolicy overridden in part (not programmed for that) as
// partial, as PartiallyProgrammed draws; one in the path to no route as
// not programmed; neither as the "unknown" of a policy with no Programmed
// condition.
func TestGraphKuadrantUnknown(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tokenratelimitpolicies.kuadrant.io
  labels: {gateway.networking.k8s.io/policy: inherited}
spec:
  group: kuadrant.io
  names: {kind: TokenRateLimitPolicy, plural: tokenratelimitpolicies}
  scope: Namespaced
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: shop}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: idle, namespace: shop}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: shop}
spec:
  parentRefs: [{name: gw}]
  rules:
  - {name: first, backendRefs: [{name: s, port: 80}]}
  - {name: second, backendRefs: [{name: s, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: shop}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: kuadrant.io/v1alpha1
kind: TokenRateLimitPolicy
metadata: {name: wide, namespace: shop, creationTimestamp: "2025-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  defaults:
    strategy: merge
    limits: {free: {rates: [{limit: 100, window: 1h}]}}
---
apiVersion: kuadrant.io/v1alpha1
kind: TokenRateLimitPolicy
metadata: {name: narrow, namespace: shop, creationTimestamp: "2025-01-02T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}
  limits: {free: {rates: [{limit: 10, window: 1h}]}}
---
apiVersion: kuadrant.io/v1alpha1
kind: TokenRateLimitPolicy
metadata: {name: nowhere, namespace: shop}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: idle}
  limits: {free: {rates: [{limit: 1, window: 1h}]}}
`
	var out, errOut bytes.Buffer
	cmd := NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"graph", "-f", "-", "-o", "mermaid"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v (stderr %q)", err, errOut.String())
	}
	for _, w := range []string{`TokenRateLimitPolicy<br/>wide<br/>patch-defaults<br/>Unknown"]):::partial`,
		`TokenRateLimitPolicy<br/>nowhere<br/>atomic-defaults<br/>Unknown"]):::notprogrammed`,
		`TokenRateLimitPolicy<br/>narrow<br/>atomic-defaults<br/>Programmed"]):::programmed`,
		"classDef notprogrammed fill:#cfd8dc,stroke:#455a64"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %s:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), "):::unknown") {
		t.Errorf("a policy draws as unknown:\n%s", out.String())
	}
}
