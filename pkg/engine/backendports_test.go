package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// portTopo: Gateways a..d, each with one HTTPRoute: ra to Service svc on
// port 443 (named https), rb to svc on port 80 (named http), rc to Envoy
// Gateway's Backend be on port 3001, rd to ServiceImport imp (not among
// the objects) on port 8080.
func portTopo() string {
	var b strings.Builder
	for _, g := range "abcd" {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %c, namespace: default}
spec:
  gatewayClassName: x
  listeners: [{name: http, protocol: HTTP, port: 80}]
`, g)
	}
	route := func(name, gw, backend string) {
		fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s, namespace: default}
spec:
  parentRefs: [{name: %s}]
  rules: [{backendRefs: [%s]}]
`, name, gw, backend)
	}
	route("ra", "a", "{name: svc, port: 443}")
	route("rb", "b", "{name: svc, port: 80}")
	route("rc", "c", "{group: gateway.envoyproxy.io, kind: Backend, name: be, port: 3001}")
	route("rd", "d", "{group: multicluster.x-k8s.io, kind: ServiceImport, name: imp, port: 8080}")
	b.WriteString(serviceDoc("default", "svc", "{name: https, port: 443}, {name: http, port: 80}"))
	b.WriteString(`---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: be, namespace: default}
spec: {endpoints: [{ip: {address: 10.0.0.1, port: 3001}}]}
`)
	return b.String()
}

// serviceDoc is Service ns/name with ports (a YAML flow list's entries).
func serviceDoc(ns, name, ports string) string {
	return fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {ports: [%s]}\n", name, ns, ports)
}

// sectionBTLSP is a BackendTLSPolicy on section of an object of group and
// kind (no section when "").
func sectionBTLSP(name, group, kind, obj, section string) string {
	ref := fmt.Sprintf("{group: %q, kind: %s, name: %s", group, kind, obj)
	if section != "" {
		ref += ", sectionName: " + section
	}
	return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0,
		"targetRefs: ["+ref+"}]\nvalidation: {hostname: x.example, wellKnownCACertificates: System}")
}

// A policy on a backend's port takes effect through the routes whose
// backendRefs use that port only (GEP-1897; Envoy Gateway matches a
// Service port by name, its Backend's by number): its ancestors are their
// Gateways. A policy on the whole backend, through every route.
func TestGatewayAncestorsFollowBackendPorts(t *testing.T) {
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	docs := []string{btls, portTopo(),
		sectionBTLSP("https", "", "Service", "svc", "https"),
		sectionBTLSP("http", "", "Service", "svc", "http"),
		sectionBTLSP("whole", "", "Service", "svc", ""),
		sectionBTLSP("be-3001", "gateway.envoyproxy.io", "Backend", "be", `"3001"`),
		sectionBTLSP("be-3002", "gateway.envoyproxy.io", "Backend", "be", `"3002"`),
		// The ServiceImport is not among the objects: its port names
		// are unknown, so every route to it counts.
		sectionBTLSP("imp-http", "multicluster.x-k8s.io", "ServiceImport", "imp", "http"),
	}
	res := compute(t, engine.Options{}, docs...)
	gw := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "Gateway.gateway.networking.k8s.io default/"+n+"=Accepted")
		}
		return out
	}
	for name, wantAnc := range map[string][]string{
		"https":   gw("a"),
		"http":    gw("b"),
		"whole":   gw("a", "b"),
		"be-3001": gw("c"),
		// Port 3002 is none of the Backend's (its endpoints' and the
		// routes' to it): no such section (since session 28; before, a
		// Backend was a virtual target, any section of it one too).
		"be-3002":  {"Backend.gateway.envoyproxy.io default/be#3002=TargetNotFound"},
		"imp-http": gw("d"),
	} {
		want(t, name+" ancestors", ancestorsOf(t, res, name), wantAnc)
	}

	// With the ServiceImport read, its port 8080 is named grpc: the policy
	// on its http port takes effect nowhere.
	imp := `---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceImport
metadata: {name: imp, namespace: default}
spec: {ports: [{name: grpc, port: 8080}]}
`
	res = compute(t, engine.Options{}, append(docs, imp)...)
	want(t, "imp-http ancestors, ServiceImport read", ancestorsOf(t, res, "imp-http"), []string{"ServiceImport.multicluster.x-k8s.io default/imp#http=Accepted"})

	// Incremental: the ServiceImport appearing changes the ancestors as
	// Compute says.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	next := decodeDocs(t, append(docs, imp)...)
	if got, wantDump := dump(t, in.Compute(next)), dump(t, engine.Compute(next, engine.Options{})); got != wantDump {
		t.Fatal(firstDiff(got, wantDump))
	}
}

// A policy that sends traffic to a backend itself (an Envoy Gateway
// SecurityPolicy's external authorizer) is an ancestor of that backend's
// BackendTLSPolicy, as Envoy Gateway writes it: when it is valid and in
// place somewhere, and its backendRef is allowed and names the port of a
// port policy.
func TestPolicyUsingBackendIsAncestor(t *testing.T) {
	docs := []string{
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		portTopo(),
		serviceDoc("default", "auth", "{name: grpc, port: 9000}, {name: http, port: 8080}"),
		serviceDoc("default", "auth2", "{name: grpc, port: 9000}"),
		serviceDoc("other", "ext", "{name: grpc, port: 9000}"),
		// In place at Gateway a; its authorizer is auth:9000.
		pol(egV, "SecurityPolicy", "sp", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: a}]
extAuth: {grpc: {backendRefs: [{name: auth, port: 9000}]}}`),
		// In place nowhere: its Gateway does not exist.
		pol(egV, "SecurityPolicy", "sp-nowhere", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gone}]
extAuth: {grpc: {backendRefs: [{name: auth2, port: 9000}]}}`),
		// Across namespaces without a ReferenceGrant.
		pol(egV, "SecurityPolicy", "sp-cross", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: b}]
extAuth: {grpc: {backendRefs: [{name: ext, namespace: other, port: 9000}]}}`),
		sectionBTLSP("auth-whole", "", "Service", "auth", ""),
		sectionBTLSP("auth-grpc", "", "Service", "auth", "grpc"),
		sectionBTLSP("auth-http", "", "Service", "auth", "http"),
		sectionBTLSP("auth2", "", "Service", "auth2", ""),
		strings.Replace(sectionBTLSP("ext", "", "Service", "ext", ""), "namespace: default", "namespace: other", 1),
	}
	res := compute(t, engine.Options{}, docs...)
	sp := []string{"SecurityPolicy.gateway.envoyproxy.io default/sp=Accepted"}
	for name, wantAnc := range map[string][]string{
		"auth-whole": sp,
		"auth-grpc":  sp,
		"auth-http":  {"Service default/auth#http=Accepted"},
		"auth2":      {"Service default/auth2=Accepted"},
		"ext":        {"Service other/ext=Accepted"},
	} {
		want(t, name+" ancestors", ancestorsOf(t, res, name), wantAnc)
	}

	// The SecurityPolicy's authorizer moves to another port: the port
	// policies' ancestors follow, incrementally as in full.
	moved := slices.Clone(docs)
	for i, d := range moved {
		if strings.Contains(d, "name: sp,") {
			moved[i] = strings.Replace(d, "port: 9000", "port: 8080", 1)
		}
	}
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	next := decodeDocs(t, moved...)
	got := in.Compute(next)
	if a, b := dump(t, got), dump(t, engine.Compute(next, engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "auth-http ancestors after the move", ancestorsOf(t, got, "auth-http"), sp)
	want(t, "auth-grpc ancestors after the move", ancestorsOf(t, got, "auth-grpc"), []string{"Service default/auth#grpc=Accepted"})
}

// With unresolved backendRefs invalid (Envoy Gateway's SecurityPolicy), a
// policy whose external service's Service is missing, lacks the port, or
// is not granted is Invalid at each target it found, where it keeps its
// place (Envoy Gateway claims the target before translating the policy,
// and fails the route closed): an older such policy beats a valid one on
// the same target; a target it did not find stays TargetNotFound.
func TestUnresolvedBackendRefsInvalid(t *testing.T) {
	sp := func(name, target, ref string) string {
		return pol(egV, "SecurityPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+target+`}]
extAuth: {http: {backendRefs: [`+ref+`]}}`)
	}
	docs := []string{
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		portTopo(), serviceDoc("other", "ext", "{name: http, port: 80}"),
	}
	for _, g := range "efghi" {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %c, namespace: default}\nspec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}\n", g))
	}
	docs = append(docs,
		sp("ok", "a", "{name: svc, port: 80}"),
		// Two targets: Invalid at both, reported once.
		sp("missing", "b}, {group: gateway.networking.k8s.io, kind: Gateway, name: c", "{name: nosvc, port: 80}"),
		sp("noport", "f", "{name: svc}"),
		sp("badport", "d", "{name: svc, port: 81}"),
		sp("nogrant", "g", "{name: ext, namespace: other, port: 80}"),
		sp("notarget", "gone", "{name: nosvc, port: 80}"),
		sp("twobad", "h", "{name: nosvc, port: 80}, {name: svc, port: 81}"),
		// Envoy Gateway's Backend (enabled here) that is not there.
		sp("backend", "e", "{group: gateway.envoyproxy.io, kind: Backend, name: nobackend, port: 80}"),
		// Same age, so by name: the Invalid one is established first.
		sp("aa-invalid", "i", "{name: nosvc, port: 80}"),
		sp("zz-valid", "i", "{name: svc, port: 80}"),
	)
	res := compute(t, engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true}}}, docs...)
	gw := func(name, verdict string) string {
		return "Gateway.gateway.networking.k8s.io default/" + name + "=" + verdict
	}
	for name, wantAnc := range map[string][]string{
		"ok":         {gw("a", "Accepted")},
		"missing":    {gw("b", "Invalid"), gw("c", "Invalid")},
		"noport":     {gw("f", "Invalid")},
		"badport":    {gw("d", "Invalid")},
		"nogrant":    {gw("g", "Invalid")},
		"notarget":   {gw("gone", "TargetNotFound")},
		"backend":    {gw("e", "Invalid")},
		"aa-invalid": {gw("i", "Invalid")},
		"zz-valid":   {gw("i", "Conflicted")},
	} {
		want(t, name+" ancestors", ancestorsOf(t, res, name), wantAnc)
	}
	const field = "spec.extAuth.http.backendRefs[0]"
	for name, why := range map[string]string{
		"missing": "Service default/nosvc not found",
		"noport":  "names no port of Service default/svc",
		"badport": "port 81 not found on Service default/svc",
		"nogrant": "no ReferenceGrant in namespace other allows",
		"backend": "Backend default/nobackend not found",
	} {
		if got := status(t, res, name, "Accepted"); got != "False/Invalid" {
			t.Errorf("%s: Accepted %s, want False/Invalid", name, got)
		}
		// The status names the reference by field; the problem, which
		// names the field itself, says why.
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == name && !strings.Contains(ps.Conditions[0].Message, field+": "+why) {
				t.Errorf("%s: Accepted message %q lacks %q", name, ps.Conditions[0].Message, field+": "+why)
			}
		}
		found := false
		for _, p := range res.Problems {
			if p.Object.Name == name {
				if found {
					t.Errorf("%s: reported twice", name)
				}
				found = p.Field == field && strings.HasPrefix(p.Message, "backendRef does not resolve: "+why)
			}
		}
		if !found {
			t.Errorf("%s: no problem naming %s saying %q in %v", name, field, why, res.Problems)
		}
	}
	twobad := 0
	for _, p := range res.Problems {
		if p.Object.Name == "twobad" {
			twobad++
			if p.Message != "backendRef does not resolve: Service default/nosvc not found; nor do spec.extAuth.http.backendRefs[1]: port 81 not found on Service default/svc" {
				t.Errorf("twobad: problem %q, want both references named", p.Message)
			}
		}
	}
	if twobad != 1 {
		t.Errorf("twobad: %d problems, want 1", twobad)
	}
	// A Service the caller could not read is neither resolved nor broken.
	unread := compute(t, engine.Options{Unread: func(r topology.Ref) bool { return r.Name == "nosvc" }}, docs...)
	if got := status(t, unread, "missing", "Accepted"); got != "True/Accepted" {
		t.Errorf("missing with nosvc unread: Accepted %s, want True/Accepted", got)
	}
	// Invalid where found, yet in place: the route is its (Envoy Gateway
	// answers it with a 500), no policy above takes it.
	if got := fmt.Sprint(effective(t, res, "SecurityPolicy", topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: "rd", SectionName: "rule-1"})); !strings.Contains(got, `"port":81`) {
		t.Errorf("effective SecurityPolicy at rd's rule = %v, want badport's", got)
	}
}

// ServiceImports are judged as Services are; an ExternalName Service and a
// port a Service has for UDP only do not resolve (Envoy Gateway's checks of
// its external services); a ServiceImport the caller does not read is not
// judged.
// TestBackendRefsFeatureGate: Envoy Gateway refuses a policy's reference
// to a Backend unless its configuration sets extensionApis.enableBackend
// (off by default): the policy is Invalid, naming the field and the
// feature, and fails its routes; a Service reference of the same policy
// kind is unaffected; an external authorizer failing open does not fail
// them.
func TestBackendRefsFeatureGate(t *testing.T) {
	sp := func(name, target, ext string) string {
		return pol(egV, "SecurityPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+target+`}]
extAuth: `+ext)
	}
	const backend = "{group: gateway.envoyproxy.io, kind: Backend, name: be, port: 80}"
	docs := []string{crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"), portTopo(),
		sp("to-backend", "a", "{http: {backendRefs: ["+backend+"]}}"),
		sp("to-service", "b", "{http: {backendRefs: [{name: svc, port: 80}]}}"),
		sp("fail-open", "c", "{failOpen: true, grpc: {backendRef: "+backend+"}}")}
	res := compute(t, engine.Options{}, docs...)
	want(t, "to-backend", status(t, res, "to-backend", "Accepted"), "False/Invalid")
	msg := policyStatusOf(t, res, "to-backend").Conditions[0].Message
	for _, part := range []string{"spec.extAuth.http.backendRefs[0]: Backend default/be cannot be used: Backend is disabled in its implementation's configuration: it needs EnvoyGateway.extensionApis.enableBackend, off: no configuration attache read turns it on"} {
		if !strings.Contains(msg, part) {
			t.Errorf("to-backend: message %q lacks %q", msg, part)
		}
	}
	want(t, "to-service", status(t, res, "to-service", "Accepted"), "True/Accepted")
	// Invalid in place either way; the one failing open does not fail
	// its routes.
	if len(policyStatusOf(t, res, "to-backend").InPlaceInvalid) == 0 {
		t.Error("to-backend: not in place, failing its routes")
	}
	want(t, "fail-open", status(t, res, "fail-open", "Accepted"), "False/Invalid")
	if got := policyStatusOf(t, res, "fail-open").InPlaceInvalid; len(got) != 0 {
		t.Errorf("fail-open: fails its routes at %v", got)
	}
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "--feature"}}}
	res = compute(t, on, docs...)
	for _, name := range []string{"to-backend", "to-service", "fail-open"} {
		want(t, name+" enabled", status(t, res, name, "Accepted"), "True/Accepted")
	}
}

func TestUnresolvedBackendRefsKinds(t *testing.T) {
	sp := func(name, target, ref string) string {
		return pol(egV, "SecurityPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+target+`}]
extAuth: {http: {backendRefs: [`+ref+`]}}`)
	}
	const si = "group: multicluster.x-k8s.io, kind: ServiceImport, "
	docs := []string{
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		portTopo(),
		"apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: imp, namespace: default}\nspec: {ports: [{name: http, port: 80, protocol: TCP}]}\n",
		"apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: default}\nspec: {type: ExternalName, externalName: auth.example.com, ports: [{name: http, port: 80}]}\n",
		serviceDoc("default", "dns", "{name: dns, port: 53, protocol: UDP}, {name: both, port: 54, protocol: UDP}, {name: both-tcp, port: 54, protocol: TCP}"),
	}
	for _, g := range "ef" {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %c, namespace: default}\nspec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}\n", g))
	}
	docs = append(docs,
		sp("import-ok", "a", "{"+si+"name: imp, port: 80}"),
		sp("import-missing", "b", "{"+si+"name: noimp, port: 80}"),
		sp("import-badport", "c", "{"+si+"name: imp, port: 81}"),
		sp("externalname", "d", "{name: ext, port: 80}"),
		sp("udp", "e", "{name: dns, port: 53}"),
		sp("udp-and-tcp", "f", "{name: dns, port: 54}"),
	)
	res := compute(t, engine.Options{}, docs...)
	for name, why := range map[string]string{
		"import-ok":      "",
		"import-missing": "ServiceImport default/noimp not found",
		"import-badport": "port 81 not found on ServiceImport default/imp",
		"externalname":   "Service default/ext is of type ExternalName",
		"udp":            "port 53 of Service default/dns is not a TCP port",
		"udp-and-tcp":    "",
	} {
		got := status(t, res, name, "Accepted")
		if why == "" {
			if got != "True/Accepted" {
				t.Errorf("%s: Accepted %s, want True/Accepted", name, got)
			}
			continue
		}
		if got != "False/Invalid" {
			t.Errorf("%s: Accepted %s, want False/Invalid", name, got)
		}
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == name && !strings.Contains(ps.Conditions[0].Message, "spec.extAuth.http.backendRefs[0]: "+why) {
				t.Errorf("%s: Accepted message %q lacks %q", name, ps.Conditions[0].Message, why)
			}
		}
	}
	// The live reader does not list ServiceImports: one it lacks is not judged.
	unread := compute(t, engine.Options{Unread: func(r topology.Ref) bool { return r.Kind == "ServiceImport" }}, docs...)
	if got := status(t, unread, "import-missing", "Accepted"); got != "True/Accepted" {
		t.Errorf("import-missing with ServiceImports unread: Accepted %s, want True/Accepted", got)
	}
}

// The admission webhook's assessment (WhatIf) of a SecurityPolicy naming
// a missing Service says it would be Invalid. And an assessment leaves no
// trace: after one that added a policy naming a backend with that
// backend's BackendTLSPolicy, the BackendTLSPolicy created for real has
// the ancestors a whole computation gives it.
func TestWhatIfUnresolvedBackendRefs(t *testing.T) {
	docs := []string{
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		portTopo(), serviceDoc("default", "auth", "{name: grpc, port: 9000}"),
		pol(egV, "SecurityPolicy", "sp", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: a}]
extAuth: {grpc: {backendRefs: [{name: auth, port: 9000}]}}`),
	}
	objs := decodeDocs(t, docs...)
	in := engine.NewIncremental(engine.Options{})
	in.Compute(objs)
	bad := decodeDocs(t, pol(egV, "SecurityPolicy", "sp-bad", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: b}]
extAuth: {grpc: {backendRefs: [{name: nosvc, port: 9000}]}}`))
	d := in.WhatIf(bad, nil)
	if d.Skipped != "" {
		t.Fatalf("skipped: %s", d.Skipped)
	}
	var after *engine.PolicyStatus
	for _, p := range d.Policies {
		if p.Ref.Name == "sp-bad" {
			after = p.After
		}
	}
	if after == nil || after.Conditions[0].Reason != engine.ReasonInvalid || !strings.Contains(after.Conditions[0].Message, "Service default/nosvc not found") {
		t.Errorf("sp-bad after = %+v, want Invalid naming the missing Service", after)
	}

	// From a state without policies, so that the assessment is the
	// first to need the index of policies naming backends.
	bare := docs[:len(docs)-1]
	in = engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, bare...))
	tls := sectionBTLSP("auth-tls", "", "Service", "auth", "")
	assessed := decodeDocs(t, tls, pol(egV, "SecurityPolicy", "sp-2", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: c}]
extAuth: {grpc: {backendRefs: [{name: auth, port: 9000}]}}`))
	if d := in.WhatIf(assessed, nil); d.Skipped != "" {
		t.Fatalf("skipped: %s", d.Skipped)
	}
	next := decodeDocs(t, append(slices.Clone(bare), tls)...)
	got := in.Compute(next)
	if a, b := dump(t, got), dump(t, engine.Compute(next, engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "auth-tls ancestors", ancestorsOf(t, got, "auth-tls"), []string{"Service default/auth=Accepted"})
}

// A policy judging its backendRefs (Envoy Gateway's SecurityPolicy) is
// Invalid when the BackendTLSPolicy Envoy Gateway uses for the backend's
// port (the one on that port, else the one on the whole Service) has no
// valid CA certificate; creating the CA's ConfigMap accepts it, in an
// Incremental as in Compute.
func TestUnresolvedBackendRefsBackendTLS(t *testing.T) {
	btlsp := func(name, svc, section, cm string) string {
		ref := "{group: \"\", kind: Service, name: " + svc
		if section != "" {
			ref += ", sectionName: " + section
		}
		return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0, "targetRefs: ["+ref+"}]\n"+
			"validation: {hostname: x.example, caCertificateRefs: [{group: \"\", kind: ConfigMap, name: "+cm+"}]}")
	}
	sp := func(name, gw, svc string) string {
		return pol(egV, "SecurityPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+gw+`}]
extAuth: {http: {backendRefs: [{name: `+svc+`, port: 80}]}}`)
	}
	docs := []string{
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		portTopo(),
		serviceDoc("default", "auth", "{name: http, port: 80}"),
		serviceDoc("default", "auth2", "{name: http, port: 80}"),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: default}\ndata: {ca.crt: x}\n",
		// auth: the whole-Service policy's CA is missing, but the port's
		// policy, which Envoy Gateway prefers, has one.
		btlsp("auth-whole", "auth", "", "later"), btlsp("auth-port", "auth", "http", "good"),
		// auth2: only the whole-Service policy, without a CA.
		btlsp("auth2-whole", "auth2", "", "later"),
		sp("uses-auth", "a", "auth"), sp("uses-auth2", "b", "auth2"),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "uses-auth", status(t, res, "uses-auth", "Accepted"), "True/Accepted")
	want(t, "uses-auth2", status(t, res, "uses-auth2", "Accepted"), "False/Invalid")
	msg := "spec.extAuth.http.backendRefs[0]: the BackendTLSPolicy default/auth2-whole of Service default/auth2 has no valid CA certificate"
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name == "uses-auth2" && !strings.Contains(ps.Conditions[0].Message, msg) {
			t.Errorf("uses-auth2: Accepted message %q lacks %q", ps.Conditions[0].Message, msg)
		}
	}

	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	next := decodeDocs(t, append(slices.Clone(docs), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, namespace: default}\ndata: {ca.crt: x}\n")...)
	got := in.Compute(next)
	if a, b := dump(t, got), dump(t, engine.Compute(next, engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "uses-auth2 once the CA exists", status(t, got, "uses-auth2", "Accepted"), "True/Accepted")
}

// egBackendDoc is Envoy Gateway Backend ns/name with spec.
func egBackendDoc(ns, name, spec string) string {
	return fmt.Sprintf("---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: Backend\nmetadata: {name: %s, namespace: %s}\nspec: %s\n", name, ns, spec)
}

// Envoy Gateway's Backends as a policy's external services, as its
// translator judges them (validateExtServiceBackendReference,
// translateExtServiceBackendRefs @ v1.9.1): one that is not there, a
// dynamic resolver, one in another namespace without a ReferenceGrant,
// and one external service whose backends mix hostnames with addresses
// or sockets (within a Backend or across its backendRefs, a Service
// counting as addresses; weight 0 left out) make the policy Invalid in
// place; addresses with sockets do not; a failing-open extension
// processor is left out rather than failing the route; a Backend the
// caller did not read is not judged.
func TestEGBackendsOfExternalServices(t *testing.T) {
	be := func(name string) string { return "{group: gateway.envoyproxy.io, kind: Backend, name: " + name + "}" }
	ep := func(name, target, extProc string) string {
		return pol(egV, "EnvoyExtensionPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+target+`}]
extProc: [`+extProc+`]`)
	}
	docs := []string{crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"), portTopo(),
		egBackendDoc("default", "ip", "{endpoints: [{ip: {address: 10.0.0.1, port: 3001}}]}"),
		egBackendDoc("default", "fqdn", "{endpoints: [{fqdn: {hostname: ext.example.com, port: 3001}}]}"),
		egBackendDoc("default", "ip-uds", "{endpoints: [{ip: {address: 10.0.0.2, port: 3002}}, {unix: {path: /var/run/ext.sock}}]}"),
		egBackendDoc("default", "ip-fqdn", "{endpoints: [{ip: {address: 10.0.0.3, port: 3003}}, {fqdn: {hostname: ext.example.com, port: 3003}}]}"),
		egBackendDoc("default", "dyn", "{type: DynamicResolver}"),
		egBackendDoc("other", "far", "{endpoints: [{ip: {address: 10.0.0.4, port: 3004}}]}"),
	}
	for _, g := range "efghijk" {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %c, namespace: default}\nspec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}\n", g))
	}
	docs = append(docs,
		ep("ip-and-fqdn", "a", "{backendRefs: ["+be("ip")+", "+be("fqdn")+"]}"),
		ep("ip-and-uds", "b", "{backendRefs: ["+be("ip-uds")+"]}"),
		ep("one-mixed", "c", "{backendRefs: ["+be("ip-fqdn")+"]}"),
		ep("service-and-fqdn", "d", "{backendRefs: [{name: svc, port: 80}, "+be("fqdn")+"]}"),
		ep("fqdn-weight-0", "e", "{backendRefs: [{name: svc, port: 80}, {group: gateway.envoyproxy.io, kind: Backend, name: fqdn, weight: 0}]}"),
		ep("two-services", "f", "{backendRefs: ["+be("fqdn")+"]}, {backendRefs: ["+be("ip")+"]}"),
		ep("dynamic", "g", "{backendRefs: ["+be("dyn")+"]}"),
		ep("far", "h", "{backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: far, namespace: other}]}"),
		ep("open-mixed", "i", "{failOpen: true, backendRefs: ["+be("ip")+", "+be("fqdn")+"]}"),
	)
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "--feature"}}}
	res := compute(t, on, docs...)
	mixed := func(list string) string {
		return list + ": its backends mix hostnames with other endpoint types ("
	}
	for name, wantWhy := range map[string]string{
		"ip-and-fqdn":      mixed("spec.extProc[0].backendRefs") + "Backend default/ip: IP; Backend default/fqdn: FQDN)",
		"one-mixed":        mixed("spec.extProc[0].backendRefs") + "Backend default/ip-fqdn: MIXED)",
		"service-and-fqdn": mixed("spec.extProc[0].backendRefs") + "Service default/svc: IP; Backend default/fqdn: FQDN)",
		"dynamic":          "spec.extProc[0].backendRefs[0]: Backend default/dyn is of type DynamicResolver",
		"far":              "spec.extProc[0].backendRefs[0]: no ReferenceGrant in namespace other allows",
		"open-mixed":       mixed("spec.extProc[0].backendRefs"),
		"ip-and-uds":       "",
		"fqdn-weight-0":    "",
		"two-services":     "",
	} {
		ps := policyStatusOf(t, res, name)
		if wantWhy == "" {
			want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
			continue
		}
		want(t, name, status(t, res, name, "Accepted"), "False/Invalid")
		if msg := ps.Conditions[0].Message; !strings.Contains(msg, wantWhy) {
			t.Errorf("%s: message %q lacks %q", name, msg, wantWhy)
		}
		// In place, failing the route, unless it fails open.
		if got, open := len(ps.InPlaceInvalid) > 0, name == "open-mixed"; got == open {
			t.Errorf("%s: in place, failing its routes: %v, want %v", name, got, !open)
		}
	}
	// A Backend the caller could not read is not judged.
	unread := compute(t, engine.Options{Features: on.Features, Unread: func(r topology.Ref) bool { return r.Kind == "Backend" }}, docs...)
	for _, name := range []string{"ip-and-fqdn", "one-mixed", "service-and-fqdn", "dynamic", "far"} {
		want(t, name+" unread", status(t, unread, name, "Accepted"), "True/Accepted")
	}
}

// Under an EnvoyProxy's routingType Service, Envoy Gateway sends a
// policy's external services to a Service's cluster IP, which has no
// address type (processServiceDestinationSetting @ v1.9.1), so a Service
// and a hostname Backend do not mix there: a policy on two Gateways is
// Invalid at the one routing to endpoints only. A headless Service goes
// to its endpoints under either, and a Backend mixing hostnames with
// addresses is refused under either; a Gateway whose EnvoyProxy says
// nothing routes to endpoints.
func TestEGClusterIPRoutingMixes(t *testing.T) {
	be := func(name string) string { return "{group: gateway.envoyproxy.io, kind: Backend, name: " + name + "}" }
	gw := func(name string) string {
		return "{group: gateway.networking.k8s.io, kind: Gateway, name: " + name + "}"
	}
	ep := func(name, targets, refs string) string {
		return pol(egV, "EnvoyExtensionPolicy", name, 0, "targetRefs: ["+targets+"]\nextProc: [{backendRefs: ["+refs+"]}]")
	}
	listeners := "[{name: http, protocol: HTTP, port: 80}]"
	headless := strings.Replace(serviceDoc("default", "hl", "{name: http, port: 80}"), "spec: {ports:", "spec: {clusterIP: None, ports:", 1)
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "--feature"}}}
	res := compute(t, on, crd("gateway.envoyproxy.io", "EnvoyExtensionPolicy", "envoyextensionpolicies"),
		classDoc("endpoints", egController, "sys/endpoints")+classDoc("cluster-ip", egController, "sys/cluster-ip"),
		envoyProxyDoc("sys", "endpoints", "{}"), envoyProxyDoc("sys", "cluster-ip", "{routingType: Service}"),
		gatewayDoc("ge", "endpoints", listeners, ""), gatewayDoc("gs", "cluster-ip", listeners, ""),
		gatewayDoc("gs2", "cluster-ip", listeners, ""), gatewayDoc("gs3", "cluster-ip", listeners, ""),
		// Its class is not among the objects: routing to endpoints, the
		// default, is assumed.
		gatewayDoc("gu", "unknown", listeners, ""),
		serviceDoc("default", "svc", "{name: http, port: 80}"), headless,
		egBackendDoc("default", "fqdn", "{endpoints: [{fqdn: {hostname: ext.example.com, port: 3001}}]}"),
		egBackendDoc("default", "ip-fqdn", "{endpoints: [{ip: {address: 10.0.0.3, port: 3003}}, {fqdn: {hostname: ext.example.com, port: 3003}}]}"),
		ep("service-fqdn", gw("ge")+", "+gw("gs")+", "+gw("gu"), "{name: svc, port: 80}, "+be("fqdn")),
		ep("headless-fqdn", gw("gs2"), "{name: hl, port: 80}, "+be("fqdn")),
		ep("one-mixed", gw("gs3"), "{name: svc, port: 80}, "+be("ip-fqdn")))
	want(t, "service-fqdn ancestors", ancestorsOf(t, res, "service-fqdn"), []string{
		"Gateway.gateway.networking.k8s.io default/ge=Invalid",
		"Gateway.gateway.networking.k8s.io default/gs=Accepted",
		"Gateway.gateway.networking.k8s.io default/gu=Invalid",
	})
	for _, a := range policyStatusOf(t, res, "service-fqdn").Ancestors {
		if a.Ref.Name == "ge" {
			if msg := a.Conditions[0].Message; !strings.Contains(msg, "spec.extProc[0].backendRefs: its backends mix hostnames with other endpoint types (Service default/svc: IP; Backend default/fqdn: FQDN)") ||
				!strings.Contains(msg, "(a Service counting as its endpoints' IP addresses: EnvoyProxy sys/endpoints does not set routingType=Service), which Gateway default/ge runs with") {
				t.Errorf("service-fqdn at ge: message %q", msg)
			}
		}
	}
	want(t, "headless-fqdn ancestors", ancestorsOf(t, res, "headless-fqdn"), []string{"Gateway.gateway.networking.k8s.io default/gs2=Invalid"})
	want(t, "one-mixed ancestors", ancestorsOf(t, res, "one-mixed"), []string{"Gateway.gateway.networking.k8s.io default/gs3=Invalid"})
}

// More of Envoy Gateway's reading of Backends: a reference of weight 0 is
// checked (found, granted) but not translated, so neither its feature nor
// its endpoints nor an ExternalName matter; an endpoint Envoy Gateway
// cannot use (an address that is none, a hostname with a trailing dot,
// port 0) breaks the reference; a Backend the topology cannot decode is
// not found; of an external authorizer with both backendRef and
// backendRefs only the list counts; a BackendTLSPolicy on a Backend port
// only an endpoint has, or only a policy's backendRef names, finds its
// section (the policy its ancestor), one on another port does not; an
// Incremental sees a Backend's endpoints change.
func TestEGBackendEdges(t *testing.T) {
	be := func(name, extra string) string {
		return "{group: gateway.envoyproxy.io, kind: Backend, name: " + name + extra + "}"
	}
	sp := func(name, target, extAuth string) string {
		return pol(egV, "SecurityPolicy", name, 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: `+target+`}]
extAuth: `+extAuth)
	}
	docs := []string{crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"), portTopo(),
		serviceDoc("default", "extname", "{name: http, port: 80}"),
		egBackendDoc("default", "fqdn", "{endpoints: [{fqdn: {hostname: ext.example.com, port: 443}}]}"),
		egBackendDoc("default", "not-ip", "{endpoints: [{ip: {address: not-an-ip, port: 443}}]}"),
		egBackendDoc("default", "dot", "{endpoints: [{fqdn: {hostname: ext.example.com., port: 443}}]}"),
		egBackendDoc("default", "port0", "{endpoints: [{ip: {address: 10.0.0.9, port: 0}}]}"),
		egBackendDoc("default", "broken", "{endpoints: 7}"),
		egBackendDoc("default", "tls", "{endpoints: [{fqdn: {hostname: tls.example.com, port: 443}}]}"),
		sectionBTLSP("on-443", "gateway.envoyproxy.io", "Backend", "tls", `"443"`),
		sectionBTLSP("on-8443", "gateway.envoyproxy.io", "Backend", "tls", `"8443"`),
		sectionBTLSP("on-9999", "gateway.envoyproxy.io", "Backend", "tls", `"9999"`),
	}
	docs[len(docs)-8] = strings.Replace(docs[len(docs)-8], "spec: {ports:", "spec: {type: ExternalName, externalName: ext.example.com, ports:", 1)
	for _, g := range "efghij" {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %c, namespace: default}\nspec: {gatewayClassName: x, listeners: [{name: http, protocol: HTTP, port: 80}]}\n", g))
	}
	docs = append(docs,
		sp("weight-0", "a", "{http: {backendRefs: [{name: svc, port: 80}, "+be("fqdn", ", weight: 0")+", {name: extname, port: 80, weight: 0}]}}"),
		sp("not-ip", "b", "{http: {backendRefs: ["+be("not-ip", "")+"]}}"),
		sp("dot", "c", "{http: {backendRefs: ["+be("dot", "")+"]}}"),
		sp("port0", "d", "{http: {backendRefs: ["+be("port0", "")+"]}}"),
		sp("broken", "e", "{http: {backendRefs: ["+be("broken", "")+"]}}"),
		sp("both", "f", "{grpc: {backendRef: {name: nosvc, port: 80}, backendRefs: [{name: svc, port: 80}]}}"),
		sp("tls-user", "g", "{http: {backendRefs: ["+be("tls", ", port: 8443")+"]}}"),
	)
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "--feature"}}}
	res := compute(t, on, docs...)
	for name, wantWhy := range map[string]string{
		"weight-0": "",
		"both":     "",
		"tls-user": "",
		"not-ip":   `spec.extAuth.http.backendRefs[0]: Backend default/not-ip has an endpoint Envoy Gateway cannot use: spec.endpoints[0].ip.address "not-an-ip" is not an IP address`,
		"dot":      `Backend default/dot has an endpoint Envoy Gateway cannot use: spec.endpoints[0].fqdn.hostname "ext.example.com." is neither a DNS subdomain nor an IP address`,
		"port0":    "Backend default/port0 has an endpoint Envoy Gateway cannot use: spec.endpoints[0] has no port (or port 0)",
		"broken":   "Backend default/broken not found",
	} {
		if wantWhy == "" {
			want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
			continue
		}
		want(t, name, status(t, res, name, "Accepted"), "False/Invalid")
		if msg := policyStatusOf(t, res, name).Conditions[0].Message; !strings.Contains(msg, wantWhy) {
			t.Errorf("%s: message %q lacks %q", name, msg, wantWhy)
		}
	}
	// Without the Backend feature, a reference of weight 0 still does not
	// count; one of weight 1 does.
	off := compute(t, engine.Options{}, docs...)
	want(t, "weight-0, Backend off", status(t, off, "weight-0", "Accepted"), "True/Accepted")
	want(t, "tls-user, Backend off", status(t, off, "tls-user", "Accepted"), "False/Invalid")
	for name, anc := range map[string][]string{
		"on-443":  {"Backend.gateway.envoyproxy.io default/tls#443=Accepted"},
		"on-8443": {"SecurityPolicy.gateway.envoyproxy.io default/tls-user=Accepted"},
		"on-9999": {"Backend.gateway.envoyproxy.io default/tls#9999=TargetNotFound"},
	} {
		want(t, name+" ancestors", ancestorsOf(t, res, name), anc)
	}

	// The Backend's endpoint turns from a hostname into an address: an
	// Incremental agrees with Compute.
	mixed := []string{crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"), portTopo(),
		egBackendDoc("default", "flip", "{endpoints: [{fqdn: {hostname: ext.example.com, port: 443}}]}"),
		sp("svc-and-flip", "a", "{http: {backendRefs: [{name: svc, port: 80}, "+be("flip", "")+"]}}")}
	in := engine.NewIncremental(on)
	want(t, "mixed", status(t, in.Compute(decodeDocs(t, mixed...)), "svc-and-flip", "Accepted"), "False/Invalid")
	mixed[2] = egBackendDoc("default", "flip", "{endpoints: [{ip: {address: 10.0.0.1, port: 443}}]}")
	want(t, "no longer mixed", status(t, in.Compute(decodeDocs(t, mixed...)), "svc-and-flip", "Accepted"), "True/Accepted")
	want(t, "as Compute", status(t, engine.Compute(decodeDocs(t, mixed...), on), "svc-and-flip", "Accepted"), "True/Accepted")
}

// A kind whose only reading of the data planes is its cluster-ip-routing
// condition (declared by annotations, no allowlist or requirement) reads
// the EnvoyProxies too: a Service and a hostname Backend do not mix under
// the proxy's routingType Service, and an Incremental sees the proxy
// change.
func TestClusterIPRoutingAloneReadsDataPlanes(t *testing.T) {
	docs := []string{
		declaredCRD("example.com", "ExtPolicy", "extpolicies", "Inherited",
			"attache.dev/target-kinds: Gateway.gateway.networking.k8s.io",
			`attache.dev/backend-refs: "ext.backendRefs[]"`,
			"attache.dev/unresolved-backend-refs: invalid",
			"attache.dev/cluster-ip-routing: routingType=Service"),
		classDoc("cluster-ip", egController, "sys/cip"),
		envoyProxyDoc("sys", "cip", "{routingType: Service}"),
		gatewayDoc("gs", "cluster-ip", "[{name: http, protocol: HTTP, port: 80}]", ""),
		serviceDoc("default", "svc", "{name: http, port: 80}"),
		egBackendDoc("default", "fqdn", "{endpoints: [{fqdn: {hostname: ext.example.com, port: 3001}}]}"),
		pol("example.com/v1", "ExtPolicy", "xp", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gs}]\n"+
			"ext: {backendRefs: [{name: svc, port: 80}, {group: gateway.envoyproxy.io, kind: Backend, name: fqdn}]}"),
	}
	on := engine.Options{Features: policy.Features{"EnvoyGateway.extensionApis.enableBackend": {On: true, From: "--feature"}}}
	in := engine.NewIncremental(on)
	want(t, "under routingType Service", status(t, in.Compute(decodeDocs(t, docs...)), "xp", "Accepted"), "True/Accepted")
	docs[2] = envoyProxyDoc("sys", "cip", "{}")
	want(t, "routing to endpoints", status(t, in.Compute(decodeDocs(t, docs...)), "xp", "Accepted"), "False/Invalid")
	want(t, "as Compute", status(t, engine.Compute(decodeDocs(t, docs...), on), "xp", "Accepted"), "False/Invalid")
}
