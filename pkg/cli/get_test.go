package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// getExamples are the inputs of the golden tests, by golden name.
var getExamples = []struct{ name, path string }{
	{"parable", "../../examples/parable"},
	{"example-2", "../../examples/gep-713/example-2"},
	{"example-3", "../../examples/gep-713/example-3"},
}

// getFormats are the -o values of the golden tests and their file suffixes.
var getFormats = []struct{ flag, suffix string }{
	{"", ".txt"},
	{"table", ".txt"}, // the default, named: the same golden
	{"wide", "-wide.txt"},
	{"json", ".json"},
	{"yaml", ".yaml"},
}

func TestGetGolden(t *testing.T) {
	for _, typ := range []string{"policies", "policykinds"} {
		for _, ex := range getExamples {
			for _, f := range getFormats {
				name := "get-" + typ + "-" + ex.name + f.suffix
				t.Run(name, func(t *testing.T) {
					args := []string{"get", typ, "-f", ex.path}
					if f.flag != "" {
						args = append(args, "-o", f.flag)
					}
					out, errOut, err := run(t, args...)
					if err != nil {
						t.Fatalf("attache %s: %v (stderr %q)", strings.Join(args, " "), err, errOut)
					}
					// The examples are valid: any warning is a regression.
					if errOut != "" {
						t.Errorf("unexpected stderr:\n%s", errOut)
					}
					golden(t, name, []byte(out))
				})
			}
		}
	}
}

// getLabelledInput is an input for the filters: policies with labels, targets across
// namespaces, by selector and by section, and more targets than the table
// shows.
const getLabelledInput = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited, owner: platform}
  annotations:
    attache.dev/effective-target-kinds: Service
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies, singular: colorpolicy, shortNames: [cp]}
  scope: Namespaced
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tlspolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations:
    attache.dev/target-kinds: Service
spec:
  group: policies.example.com
  names: {kind: TLSPolicy, plural: tlspolicies}
  scope: Namespaced
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
metadata: {name: web, namespace: app, labels: {tier: web}}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: many, namespace: app, labels: {team: web}}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, selector: {matchLabels: {tier: web}}}
  - {group: gateway.networking.k8s.io, kind: Gateway, namespace: infra, name: gw, sectionName: http}
  - {group: "", kind: Namespace, name: app}
  color: red
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: plain, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  color: blue
---
apiVersion: policies.example.com/v1
kind: TLSPolicy
metadata: {name: web-tls, namespace: app, labels: {team: web}}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  hostname: web.app
`

func writeGetLabelledInput(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "labelled.yaml")
	if err := os.WriteFile(path, []byte(getLabelledInput), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// names returns the NAME column of a policies table printed with -A or -f
// (KIND, NAMESPACE, NAME, ...).
func nameColumn(t *testing.T, table string) []string {
	t.Helper()
	var out []string
	for i, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		if i == 0 {
			if len(f) < 3 || f[1] != "NAMESPACE" || f[2] != "NAME" {
				t.Fatalf("unexpected header %q", line)
			}
			continue
		}
		out = append(out, f[2])
	}
	return out
}

func TestGetPoliciesFilters(t *testing.T) {
	path := writeGetLabelledInput(t)
	for _, tc := range []struct {
		args []string
		want string // NAME column, comma-separated
	}{
		{[]string{}, "many,plain,web-tls"},
		{[]string{"-A"}, "many,plain,web-tls"},
		{[]string{"-l", "team=web"}, "many,web-tls"},
		{[]string{"-l", "team=web,!owner"}, "many,web-tls"},
		{[]string{"-l", "team notin (web)"}, "plain"},
		{[]string{"colorpolicy"}, "many,plain"},
		{[]string{"colorpolicies"}, "many,plain"},
		{[]string{"cp", "-l", "team"}, "many"},
		{[]string{"ColorPolicy.policies.example.com"}, "many,plain"},
		{[]string{"tlspolicies,colorpolicy"}, "many,plain,web-tls"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := run(t, append([]string{"get", "policies", "-f", path}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nameColumn(t, out), ","); got != tc.want {
				t.Errorf("names %s, want %s\n%s", got, tc.want, out)
			}
		})
	}
}

func TestGetPoliciesNamespace(t *testing.T) {
	// -n drops the NAMESPACE column (as kubectl does) and other namespaces.
	out, _, err := run(t, "get", "policies", "-f", "../../examples/parable", "-n", "infra")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "NAMESPACE") || !strings.Contains(lines[1], "gateway-timeouts") {
		t.Errorf("-n infra:\n%s", out)
	}
}

func TestGetPoliciesCells(t *testing.T) {
	path := writeGetLabelledInput(t)
	out, _, err := run(t, "get", "policies", "-f", path, "colorpolicy")
	if err != nil {
		t.Fatal(err)
	}
	// The policy's own namespace is implied, another one is spelt out; the
	// table shows 3 targets and counts the rest.
	want := "HTTPRoute/web,HTTPRoute[tier=web],Gateway/infra/gw#http + 1 more..."
	if !strings.Contains(out, want) {
		t.Errorf("TARGETS cell: want %q in\n%s", want, out)
	}
	out, _, err = run(t, "get", "policies", "-f", path, "colorpolicy", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if want := want[:strings.Index(want, " + ")] + ",Namespace/app"; !strings.Contains(out, want) {
		t.Errorf("wide TARGETS cell: want %q in\n%s", want, out)
	}
}

func TestGetEmpty(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"get", "policies", "-f", "../../examples/parable", "-n", "nowhere"}, "No policies found in namespace nowhere.\n"},
		{[]string{"get", "policies", "-f", "../../examples/parable", "-l", "team=none"}, "No policies found.\n"},
		{[]string{"get", "policies", "-f", "../../examples/parable", "-n", "infra", "retrypolicy"}, "No RetryPolicy policies found in namespace infra.\n"},
		{[]string{"get", "policykinds", "-f", "../../examples/parable", "-l", "team=none"}, "No policy kinds found"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if out != "" || !strings.HasPrefix(errOut, tc.wantErr) {
				t.Errorf("stdout %q, stderr %q; want nothing and %q", out, errOut, tc.wantErr)
			}
		})
	}
	// Documents stay documents when empty.
	out, errOut, err := run(t, "get", "policies", "-f", "../../examples/parable", "-n", "nowhere", "-o", "json")
	if err != nil || errOut != "" || !strings.Contains(out, `"items": []`) {
		t.Errorf("empty -o json: %v, stderr %q, stdout\n%s", err, errOut, out)
	}
}

func TestGetPolicyKindsFilters(t *testing.T) {
	path := writeGetLabelledInput(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "ColorPolicy.policies.example.com,TLSPolicy.policies.example.com"},
		{[]string{"-l", "owner=platform"}, "ColorPolicy.policies.example.com"},
		{[]string{"tlspolicy"}, "TLSPolicy.policies.example.com"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := run(t, append([]string{"get", "policykinds", "-f", path, "--no-headers"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				got = append(got, strings.Fields(line)[0])
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("kinds %v, want %s\n%s", got, tc.want, out)
			}
		})
	}
}

// TestGetWarnings checks that input problems reach stderr and do not stop
// the listing.
func TestGetWarnings(t *testing.T) {
	in := getLabelledInput + `---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: both, namespace: app}
spec:
  targetRefs: [{group: "", kind: Service, name: web}]
  defaults: {color: red}
  overrides: {color: blue}
`
	path := filepath.Join(t.TempDir(), "invalid.yaml")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "get", "policies", "-f", path, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning: ") || !strings.Contains(errOut, "ColorPolicy") || !strings.Contains(errOut, "app/both") {
		t.Errorf("stderr should warn about ColorPolicy app/both: %q", errOut)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " both ") {
			line = l
		}
	}
	if !strings.Contains(line, "Invalid") || !strings.Contains(line, "a policy takes exactly one merge strategy") {
		t.Errorf("the invalid policy should be listed as Invalid with its message:\n%s", out)
	}
}

func TestGetErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // substrings of the error
	}{
		{[]string{"get", "policies", "-f", "../../examples/parable", "-o", "tabel"}, []string{`unknown output format "tabel"`, "-o table (the default), -o wide, -o json or -o yaml"}},
		{[]string{"get", "policykinds", "-f", "../../examples/parable", "-o", "jsonpath"}, []string{`unknown output format "jsonpath"`, "-o json"}},
		{[]string{"get", "policies", "-f", "../../examples/parable", "nosuchpolicy"}, []string{`unknown policy kind "nosuchpolicy"`, "retrypolicy", "attache get policykinds"}},
		{[]string{"get", "policykinds", "-f", "../../examples/parable", "nosuchpolicy"}, []string{`unknown policy kind "nosuchpolicy"`, "backendtlspolicy"}},
		{[]string{"get", "policies", "-f", "testdata/no-such-dir"}, []string{"testdata/no-such-dir", "check the -f paths"}},
		{[]string{"get", "policykinds", "-f", "testdata/no-such-file.yaml"}, []string{"testdata/no-such-file.yaml", "check the -f paths"}},
		{[]string{"get", "policies", "-f", "../../examples/parable", "-l", "team in"}, []string{`invalid label selector "team in"`, "-l team=baker"}},
		{[]string{"get"}, []string{"missing TYPE", "attache get policies"}},
		{[]string{"get", "retrypolicies"}, []string{`unknown type "retrypolicies"`, "attache get policies retrypolicies"}},
		// kubectl habits: the flags of get policies come along.
		{[]string{"get", "retrypolicies", "-n", "baker", "-o", "wide", "-f", "../../examples/parable"}, []string{`unknown type "retrypolicies"`, "attache get policies retrypolicies"}},
		{[]string{"get", "policies", "a", "b"}, []string{"accepts at most 1 arg"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, _, err := run(t, tc.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if out != "" {
				t.Errorf("stdout not empty on error:\n%s", out)
			}
		})
	}
}

// TestNoCluster: without -f and without any kubeconfig, the error says
// that no cluster is configured and how to give one or read files, instead
// of client-go's refused connection to localhost:8080.
func TestNoCluster(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, args := range [][]string{
		{"get", "policies"},
		{"get", "policykinds"},
		{"describe", "httproute/baker", "-n", "baker"},
		{"impact", "retrypolicy/namespace-retries", "-n", "baker", "--delete"},
		{"graph"},
	} {
		_, _, err := run(t, args...)
		if err == nil {
			t.Fatalf("attache %s: no error without a cluster", strings.Join(args, " "))
		}
		for _, want := range []string{"no kubeconfig found", "--kubeconfig", "-f PATH"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("attache %s: error %q does not say %q", strings.Join(args, " "), err, want)
			}
		}
	}
}

// TestGetAmbiguousKind: two policy kinds of the same name in different
// groups are shown and resolved as Kind.group.
func TestGetAmbiguousKind(t *testing.T) {
	in := getLabelledInput + `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.other.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
spec:
  group: other.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
`
	path := filepath.Join(t.TempDir(), "ambiguous.yaml")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "get", "policies", "-f", path, "colorpolicy")
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "Kind.group") {
		t.Errorf("want an ambiguity error naming Kind.group, got %v", err)
	}
	out, _, err := run(t, "get", "policies", "-f", path, "colorpolicy.policies.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "ColorPolicy.policies.example.com   app ") {
		t.Errorf("KIND column should spell out the group:\n%s", out)
	}
}

// NGINX Gateway Fabric's RateLimitPolicy shows its inherited and
// level-inherited fields in -o
// wide and -o json, with their origin.
func TestGetPolicyKindsInheritedFields(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.nginx.org", "RateLimitPolicy", "ratelimitpolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "inherited-fields=rateLimit.dryRun,rateLimit.logLevel,rateLimit.rejectCode (profile: NGINX Gateway Fabric)") {
		t.Errorf("-o wide lacks the inheritedFields setting:\n%s", out)
	}
	if !strings.Contains(out, "level-inherited-fields=rateLimit.local.rules (profile: NGINX Gateway Fabric)") {
		t.Errorf("-o wide lacks the levelInheritedFields setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"inheritedFields": [`) || !strings.Contains(out, `"inheritedFields": "profile: NGINX Gateway Fabric"`) {
		t.Errorf("-o json lacks the inheritedFields setting or its origin:\n%s", out)
	}
	if !strings.Contains(out, `"levelInheritedFields": [`) || !strings.Contains(out, `"levelInheritedFields": "profile: NGINX Gateway Fabric"`) {
		t.Errorf("-o json lacks the levelInheritedFields setting or its origin:\n%s", out)
	}
}

// NGF's PayloadProcessor reads its backendRefs in its own words: -o wide
// prints them after the values they qualify, -o json in fields of their
// own (the old fields keep their values).
func TestGetPolicyKindsNGFBackendRefWords(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	for _, w := range []string{
		"backend-refs=processors[].extProcess.backendRef; ancestors=gateways (profile: NGINX Gateway Fabric)",
		"unresolved-backend-refs=invalid external-name=allowed protocols=any backend-tls=oldest grant-reason=RefNotPermitted (profile: NGINX Gateway Fabric)",
		"invalid-policies=not-applied references=after-conflicts (profile: NGINX Gateway Fabric)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("-o wide lacks %q:\n%s", w, out)
		}
	}
	out = policyKindsOutput(t, path, "json")
	for _, w := range []string{`"unresolvedBackendRefs": "invalid"`, `"backendRefRules": "external-name=allowed protocols=any backend-tls=oldest grant-reason=RefNotPermitted"`,
		`"backendRefAncestors": "gateways"`, `"invalidPolicies": "not-applied"`, `"invalidPolicyReferences": "after-conflicts"`} {
		if !strings.Contains(out, w) {
			t.Errorf("-o json lacks %s:\n%s", w, out)
		}
	}
}

// The backendRefs setting of Envoy Gateway's SecurityPolicy shows in -o
// wide and -o json, with its origin.
func TestGetPolicyKindsBackendRefs(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "backend-refs=extAuth.grpc.backendRef,extAuth.grpc.backendRefs[],extAuth.http.backendRef,extAuth.http.backendRefs[],jwt.providers[].remoteJWKS.backendRefs[],oidc.provider.backendRefs[] (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the backendRefs setting:\n%s", out)
	}
	if !strings.Contains(out, "unresolved-backend-refs=invalid (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the unresolved backendRefs rule:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"backendRefs": [`) || !strings.Contains(out, `"oidc.provider.backendRefs[]"`) || !strings.Contains(out, `"backendRefs": "profile: Envoy Gateway"`) || !strings.Contains(out, `"unresolvedBackendRefs": "invalid"`) {
		t.Errorf("-o json lacks the backendRefs setting or its origin:\n%s", out)
	}
	// The Secrets and ConfigMaps it reads (objectRefs), one part per path.
	if !strings.Contains(out, `"oidc.clientSecret kinds=Secret keys=client-secret"`) || !strings.Contains(out, `"objectRefs": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the objectRefs setting or its origin:\n%s", out)
	}
	out = policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "object-refs=jwt.providers[].localJWKS.valueRef kinds=ConfigMap keys=jwks,+ when=type=ValueRef (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the objectRefs setting:\n%s", out)
	}
	// What it may not set on a TCPRoute (unsupportedFields).
	if !strings.Contains(out, "unsupported-fields=TCPRoute.gateway.networking.k8s.io=cors,csrf,jwt,oidc,apiKeyAuth,basicAuth,extAuth,authorization.rules[].cel,") {
		t.Errorf("-o wide lacks the unsupportedFields setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"unsupportedFields": [`) || !strings.Contains(out, `"unsupportedFields": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the unsupportedFields setting or its origin:\n%s", out)
	}
	// The status of a route whose policy is Invalid in place.
	if !strings.Contains(out, `"failureStatus": 500`) || !strings.Contains(out, `"failureStatus": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the failureStatus setting or its origin:\n%s", out)
	}
	// The external authorizer failing open.
	if !strings.Contains(out, `"extAuth=failOpen"`) || !strings.Contains(out, `"failOpen": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the failOpen setting or its origin:\n%s", out)
	}
}

// Envoy Gateway's EnvoyExtensionPolicy names the dynamic modules it loads,
// which the EnvoyProxy of the Gateway must register: the setting shows
// with its origin, and an annotation sets it on a kind of one's own. So
// does SecurityPolicy's regexFields.
func TestGetPolicyKindsAllowlists(t *testing.T) {
	dir := t.TempDir()
	eep := filepath.Join(dir, "eep.yaml")
	if err := os.WriteFile(eep, []byte(implementationCRD("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies", "v1alpha1")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "get", "policykinds", "-f", eep, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "data-plane-allowlist=dynamicModule[].name=dynamicModules[].name (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the dataPlaneAllowlists setting:\n%s", out)
	}
	out, _, err = run(t, "get", "policykinds", "-f", eep, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"dataPlaneAllowlists": [
        "dynamicModule[].name=dynamicModules[].name"`) || !strings.Contains(out, `"dataPlaneAllowlists": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the dataPlaneAllowlists setting or its origin:\n%s", out)
	}
	own := filepath.Join(dir, "own.yaml")
	crd := strings.Replace(implementationCRD("example.com", "ModPolicy", "modpolicies", "v1"), "metadata: {name: modpolicies.example.com}",
		`metadata: {name: modpolicies.example.com, labels: {gateway.networking.k8s.io/policy: Direct}, annotations: {attache.dev/data-plane-allowlists: "spec.modules[].name=dynamicModules[].name"}}`, 1)
	if err := os.WriteFile(own, []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "get", "policykinds", "-f", own, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "data-plane-allowlist=modules[].name=dynamicModules[].name (annotation)") {
		t.Errorf("-o wide lacks the annotated dataPlaneAllowlists setting:\n%s", out)
	}
	// Regular expressions Envoy Gateway compiles (SecurityPolicy).
	sp := filepath.Join(dir, "sp.yaml")
	if err := os.WriteFile(sp, []byte(implementationCRD("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies", "v1alpha1")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "get", "policykinds", "-f", sp, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "requires=authorization.rules[].principal.clientIPGeoLocations[] excludes ClientTrafficPolicy.gateway.envoyproxy.io:clientIPDetection.xForwardedFor.trustedCIDRs on=HTTP,HTTPS (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the requires setting:\n%s", out)
	}
	if !strings.Contains(out, "regex-field=authorization.rules[].operation.path.value when=type=RegularExpression (profile: Envoy Gateway)") {
		t.Errorf("-o wide lacks the regexFields setting:\n%s", out)
	}
	out, _, err = run(t, "get", "policykinds", "-f", sp, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"authorization.rules[].operation.path.value when=type=RegularExpression"`) || !strings.Contains(out, `"regexFields": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the regexFields setting or its origin:\n%s", out)
	}
	// What GeoIP authorization needs (requires).
	if !strings.Contains(out, `"authorization.rules[].principal.clientIPGeoLocations[] requires parameters:geoIP.provider.maxMind"`) || !strings.Contains(out, `"requires": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the requires setting or its origin:\n%s", out)
	}
	// A parameters field attache does not read is refused, naming it.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(crd, "=dynamicModules[].name", "=telemetry.tracing", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := run(t, "get", "policykinds", "-f", bad)
	if !strings.Contains(errOut, `attache does not read "telemetry.tracing" of the data plane's parameters (it reads dynamicModules[].name, geoIP.provider, luaValidation, routingType, telemetry.exporter.endpoint, telemetry.disabledFeatures[], waf.enable, dnsResolver)`) {
		t.Errorf("an allowlist on an unread parameters field is not refused with its reason:\n%s", errOut)
	}
}

// implementationCRD is a namespaced CRD as an implementation ships it:
// no policy label, no attache annotation (its built-in profile applies).
func implementationCRD(group, kind, plural, version string) string {
	return fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %s.%s}
spec:
  group: %s
  scope: Namespaced
  names: {kind: %s, plural: %s}
  versions: [{name: %s, served: true, storage: true}]
`, plural, group, group, kind, plural, version)
}

// A CRD that looks like a policy kind but that its controller translates
// into policies of other kinds (Kuadrant's PlanPolicy into RateLimitPolicy)
// gets a note saying so, not the advice to declare it; another unknown
// look-alike still gets that advice.
func TestLookAlikeTranslatedKind(t *testing.T) {
	crd := func(group, kind, plural string) string {
		return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: %[2]s, plural: %[3]s}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {targetRef: {type: object}}}}}}
`, group, kind, plural)
	}
	path := filepath.Join(t.TempDir(), "crds.yaml")
	if err := os.WriteFile(path, []byte(crd("extensions.kuadrant.io", "PlanPolicy", "planpolicies")+"---\n"+crd("example.com", "ShapePolicy", "shapepolicies")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "get", "policies", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "CRD planpolicies.extensions.kuadrant.io: PlanPolicy.extensions.kuadrant.io's controller (Kuadrant) translates each PlanPolicy into RateLimitPolicy.kuadrant.io objects, which attache reads") {
		t.Errorf("no translation note for PlanPolicy:\n%s", errOut)
	}
	if strings.Contains(errOut, "PlanPolicy.extensions.kuadrant.io looks like a policy kind") {
		t.Errorf("PlanPolicy is advised to be declared:\n%s", errOut)
	}
	if !strings.Contains(errOut, "ShapePolicy.example.com looks like a policy kind") {
		t.Errorf("the other look-alike lost its warning:\n%s", errOut)
	}
}

// Objects of a profiled policy kind, or looking like policies, given
// without their kind's CRD are not read as policies: a warning per kind
// says so, with the count and the first object, rather than a bare "No
// policies found"; an object of another kind is not warned of, nor are
// the kind's objects once its CRD is given.
func TestWarnPoliciesWithoutCRD(t *testing.T) {
	const objs = `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: a, namespace: default}
spec: {targetRefs: [{group: "", kind: Service, name: s}], validation: {hostname: a.example, wellKnownCACertificates: System}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: b, namespace: default}
spec: {targetRefs: [{group: "", kind: Service, name: t}], validation: {hostname: b.example, wellKnownCACertificates: System}}
---
apiVersion: example.com/v1
kind: ShapePolicy
metadata: {name: c, namespace: default}
spec: {targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 3}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec: {parentRefs: [{name: g}], targetRefs: [{kind: Service, name: stray}]}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "objs.yaml")
	if err := os.WriteFile(path, []byte(objs), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "get", "policies", "-A", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"warning: 2 BackendTLSPolicy.gateway.networking.k8s.io objects (the first at " + path + "#1) given without the kind's CustomResourceDefinition, so not read as policies (a policy kind of Gateway API",
		"warning: 1 ShapePolicy.example.com object (the first at " + path + "#3) given without the kind's CustomResourceDefinition, so not read as policies (its objects look like policies",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("no warning %q in:\n%s", w, errOut)
		}
	}
	if strings.Contains(errOut, "Widget") || strings.Contains(errOut, "HTTPRoute") {
		t.Errorf("a kind that is no policy (or a route, read without a CRD) is warned of:\n%s", errOut)
	}
	if !strings.Contains(out+errOut, "No policies found") {
		t.Errorf("stdout: %s", out)
	}
	// effective says it too, on stderr (stdout stays the report).
	if _, errOut, err := run(t, "effective", "-f", path); err != nil || !strings.Contains(errOut, "2 BackendTLSPolicy.gateway.networking.k8s.io objects") {
		t.Errorf("effective: %v, stderr:\n%s", err, errOut)
	}
	crd := filepath.Join(dir, "crd.yaml")
	if err := os.WriteFile(crd, []byte(implementationCRD("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies", "v1")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = run(t, "get", "policies", "-A", "-f", path, "-f", crd)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut, "BackendTLSPolicy.gateway.networking.k8s.io objects") || !strings.Contains(out, "BackendTLSPolicy") {
		t.Errorf("with the CRD given: stdout\n%s\nstderr\n%s", out, errOut)
	}
}

// writeCRDFile writes crd to a file of its own and returns its path.
func writeCRDFile(t *testing.T, crd string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(path, []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// policyKindsOutput is the output of get policykinds -f path -o format.
func policyKindsOutput(t *testing.T, path, format string) string {
	t.Helper()
	out, _, err := run(t, "get", "policykinds", "-f", path, "-o", format)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kgateway's TrafficPolicy reads the delegation priority of its parent
// routes: -o wide and -o json show the setting and its origin.
func TestGetPolicyKindsDelegationPriority(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "delegation-priority=kgateway.dev/inherited-policy-priority parent=ShallowMergePreferParent child=ShallowMergePreferChild,DeepMergePreferChild,DeepMergePreferParent (profile: kgateway)") {
		t.Errorf("-o wide lacks the delegationPriority setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"delegationPriority": "kgateway.dev/inherited-policy-priority parent=ShallowMergePreferParent child=ShallowMergePreferChild,DeepMergePreferChild,DeepMergePreferParent"`) ||
		!strings.Contains(out, `"delegationPriority": "profile: kgateway"`) {
		t.Errorf("-o json lacks the delegationPriority setting or its origin:\n%s", out)
	}
}

// kgateway's TrafficPolicy replaces what a policy with errors reaches:
// -o wide and -o json show routeReplacement and its origin.
func TestGetPolicyKindsRouteReplacement(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "route-replacement=500 (profile: kgateway)") {
		t.Errorf("-o wide lacks the routeReplacement setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"routeReplacement": 500`) || !strings.Contains(out, `"routeReplacement": "profile: kgateway"`) {
		t.Errorf("-o json lacks the routeReplacement setting or its origin:\n%s", out)
	}
}

// kgateway's TrafficPolicy serves kgateway's Gateways only and lists no
// target of another implementation: -o wide and -o json show controllers
// and otherControllers with their origins.
func TestGetPolicyKindsOtherControllersUnlisted(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "controllers=kgateway.dev/kgateway (profile: kgateway)") || !strings.Contains(out, "other-controllers=unlisted (profile: kgateway)") {
		t.Errorf("-o wide lacks the controllers or otherControllers setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"otherControllers": "unlisted"`) || !strings.Contains(out, `"otherControllers": "profile: kgateway"`) {
		t.Errorf("-o json lacks the otherControllers setting or its origin:\n%s", out)
	}
}

// kgateway's ListenerPolicy names the ListenerSets it reaches and gives
// them no Gateway-wide client certificate validation: -o wide shows both
// settings with their origins.
func TestGetPolicyKindsListenerPolicyListenerSets(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.kgateway.dev", "ListenerPolicy", "listenerpolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	for _, w := range []string{"ancestor=listener-parents (profile: kgateway)", "not-in-listener-sets=default.clientCertificateValidation (profile: kgateway)"} {
		if !strings.Contains(out, w) {
			t.Errorf("-o wide lacks %q:\n%s", w, out)
		}
	}
}

// Gloo Gateway's VirtualHostOption: a Gateway listener's options reach
// the XListenerSet listeners of its name; -o wide and -o json show
// gatewaySections and its origin.
func TestGetPolicyKindsGatewaySections(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.solo.io", "VirtualHostOption", "virtualhostoptions", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "gateway-sections=by-name (profile: Gloo Gateway)") {
		t.Errorf("-o wide lacks the gatewaySections setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"gatewaySections": "by-name"`) || !strings.Contains(out, `"gatewaySections": "profile: Gloo Gateway"`) {
		t.Errorf("-o json lacks the gatewaySections setting or its origin:\n%s", out)
	}
}

// Gloo Gateway's RouteOption: the parent wins across delegation but in the
// options enable-policy-overrides names; -o wide and -o json show the
// child-fields form (not kgateway's parent= form) with the oneof groups.
func TestGetPolicyKindsDelegationPriorityChildFields(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.solo.io", "RouteOption", "routeoptions", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "delegation-priority=delegation.gateway.solo.io/enable-policy-overrides child-fields=options groups=hostRewriteType:") {
		t.Errorf("-o wide lacks the child-fields form of delegationPriority:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"delegationPriority": "delegation.gateway.solo.io/enable-policy-overrides child-fields=options groups=hostRewriteType:hostRewrite|autoHostRewrite|hostRewritePathRegex|hostRewriteHeader,`) ||
		!strings.Contains(out, `"delegationPriority": "profile: Gloo Gateway"`) {
		t.Errorf("-o json lacks the delegationPriority setting or its origin:\n%s", out)
	}
}

// Gloo's RouteOption has protobuf oneofs among its options: -o wide and
// -o json show them and their origin.
func TestGetPolicyKindsOneofs(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.solo.io", "RouteOption", "routeoptions", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "oneof=options.hostRewrite|autoHostRewrite|hostRewritePathRegex|hostRewriteHeader (profile: Gloo Gateway)") ||
		!strings.Contains(out, "oneof=options.jwt|jwtStaged|jwtProvidersStaged (profile: Gloo Gateway)") {
		t.Errorf("-o wide lacks the oneofs:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"options.ratelimit|rateLimitConfigs",`) || !strings.Contains(out, `"oneofs": "profile: Gloo Gateway"`) {
		t.Errorf("-o json lacks the oneofs or their origin:\n%s", out)
	}
}

// Istio's AuthorizationPolicy binds Service targets to waypoints, and its
// summary is istiod's flattened WaypointAccepted: -o wide and -o json
// show the settings and their origin.
func TestGetPolicyKindsWaypointTargets(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("security.istio.io", "AuthorizationPolicy", "authorizationpolicies", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "waypoint-targets=istio (profile: Istio)") || !strings.Contains(out, "summary=istio-waypoint (profile: Istio)") {
		t.Errorf("-o wide lacks the waypointTargets or summary setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"waypointTargets": "istio"`) || !strings.Contains(out, `"waypointTargets": "profile: Istio"`) ||
		!strings.Contains(out, `"summary": "istio-waypoint"`) || !strings.Contains(out, `"summary": "profile: Istio"`) {
		t.Errorf("-o json lacks the waypointTargets or summary setting or its origin:\n%s", out)
	}
}

// Istio's targetRefs have no sectionName: -o wide and -o json show the
// setting and its origin.
func TestGetPolicyKindsSectionNames(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("telemetry.istio.io", "Telemetry", "telemetries", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "no-section-names (profile: Istio)") {
		t.Errorf("-o wide lacks the sectionNames setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"noSectionNames": true`) || !strings.Contains(out, `"sectionNames": "profile: Istio"`) {
		t.Errorf("-o json lacks the sectionNames setting or its origin:\n%s", out)
	}
}

// NGF's kinds apply only at the ancestors their status lists: -o wide and
// -o json show the setting and its origin.
func TestGetPolicyKindsAncestorLimit(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "ancestor-limit=skip (profile: NGINX Gateway Fabric)") {
		t.Errorf("-o wide lacks the ancestorLimit setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"ancestorLimit": "skip"`) || !strings.Contains(out, `"ancestorLimit": "profile: NGINX Gateway Fabric"`) {
		t.Errorf("-o json lacks the ancestorLimit setting or its origin:\n%s", out)
	}
}

// Kuadrant's DNSPolicy needs Gateway API and the DNS operator installed:
// -o wide and -o json show its dependencies and their origin.
func TestGetPolicyKindsDependencies(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "dependencies=Gateway API=HTTPRoute.gateway.networking.k8s.io/v1; DNS Operator=DNSRecord.kuadrant.io/v1alpha1 (profile: Kuadrant)") {
		t.Errorf("-o wide lacks the dependencies setting:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"DNS Operator=DNSRecord.kuadrant.io/v1alpha1"`) || !strings.Contains(out, `"dependencies": "profile: Kuadrant"`) {
		t.Errorf("-o json lacks the dependencies setting or its origin:\n%s", out)
	}
}

// Kuadrant's TelemetryPolicy keeps a targetRef's sectionName unread: -o
// wide and -o json say so, with the origin.
func TestGetPolicyKindsSectionNamesIgnored(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("extensions.kuadrant.io", "TelemetryPolicy", "telemetrypolicies", "v1alpha1"))
	out := policyKindsOutput(t, path, "wide")
	if !strings.Contains(out, "section-names=ignored (profile: Kuadrant)") || strings.Contains(out, "no-section-names") {
		t.Errorf("-o wide lacks section-names=ignored:\n%s", out)
	}
	out = policyKindsOutput(t, path, "json")
	if !strings.Contains(out, `"sectionNamesIgnored": true`) || !strings.Contains(out, `"sectionNames": "profile: Kuadrant"`) {
		t.Errorf("-o json lacks sectionNamesIgnored or its origin:\n%s", out)
	}
}

// BackendTLSPolicy's direct-sections setting names the implementation at
// whose Gateways a policy on a port does not beat one on the whole
// Service, in -o wide and -o json.
func TestGetPolicyKindsDirectSectionsUnranked(t *testing.T) {
	path := writeCRDFile(t, implementationCRD("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies", "v1"))
	out := policyKindsOutput(t, path, "wide")
	if w := "direct-sections=true; controller=gateway.nginx.org/nginx-gateway-controller unranked (profile: Gateway API)"; !strings.Contains(out, w) {
		t.Errorf("-o wide lacks %q:\n%s", w, out)
	}
	out = policyKindsOutput(t, path, "json")
	if w := `"directSectionsUnrankedBy": [
        "gateway.nginx.org/nginx-gateway-controller"
      ]`; !strings.Contains(out, w) {
		t.Errorf("-o json lacks %s:\n%s", w, out)
	}
}

// -k reads what kustomize builds (here the example moved to namespace
// prod by an overlay), with -f in the same run; effective takes it too.
func TestKustomizeFlag(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "gep-713", "example-3", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		filepath.Join(base, "manifests.yaml"):            string(data),
		filepath.Join(base, "kustomization.yaml"):        "resources: [manifests.yaml]\n",
		filepath.Join(dir, "prod", "kustomization.yaml"): "resources: [../base]\nnamespace: prod\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, err := run(t, "get", "policies", "-k", filepath.Join(dir, "prod"), "-A")
	if err != nil || errOut != "" {
		t.Fatalf("get -k: %v %s", err, errOut)
	}
	if !strings.Contains(out, "prod        p3     Gateway/g2") {
		t.Errorf("get -k: policies not in namespace prod:\n%s", out)
	}
	out, errOut, err = run(t, "effective", "-k", filepath.Join(dir, "prod"), "-f", base)
	if err != nil {
		t.Fatalf("effective -k -f: %v %s", err, errOut)
	}
	// Both inputs are read: the base's copy lands in default, beside prod's.
	if !strings.Contains(out, `"namespace": "prod"`) || !strings.Contains(out, `"namespace": "default"`) {
		t.Errorf("effective -k -f: not both namespaces:\n%.2000s", out)
	}
	if !strings.Contains(errOut, "kustomization.yaml: a kustomization") {
		t.Errorf("effective -f base: no word on the kustomization skipped:\n%s", errOut)
	}
	if _, _, err := run(t, "get", "policies", "-k", filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "check the -k folders") {
		t.Errorf("get -k none: %v", err)
	}
}
