package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// ngfProc is a PayloadProcessor spec sending to backendRef ref.
func ngfProc(target, ref string) string {
	return "targetRef: " + target + "\nprocessors: [{type: ExtProcess, extProcess: {backendRef: " + ref + "}}]"
}

// The ExtProcess backend of a PayloadProcessor must resolve as NGF
// resolves it: a Service among the objects, the port named and the
// Service's (of any protocol), in another namespace only with a
// ReferenceGrant from PayloadProcessors (else RefNotPermitted, NGF's
// reason); an ExternalName Service may be
// used (with a resolver: TestDocsNGFPayloadProcessorExternalNameNeedsResolver).
// Otherwise NGF marks it invalid and applies it nowhere: a route whose
// own is refused takes its Gateway's.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (validatePayloadProcessorRefs: "cross-namespace reference to Service
// ... not permitted by any ReferenceGrant"), payloadprocessor.go
// (resolvePayloadProcessor: "backend Service ... not found", "port is not
// set", getServicePort: "No matching port"), policies.go
// (resolveEffectivePayloadProcessors, firstValidPayloadProcessorForGateway:
// policy.Valid).
func TestDocsNGFPayloadProcessorBackend(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	svcs := ngfGuards + `
---
apiVersion: v1
kind: Service
metadata: {name: udp, namespace: default}
spec: {ports: [{port: 9000, protocol: UDP}]}
---
apiVersion: v1
kind: Service
metadata: {name: far, namespace: guards}
spec: {ports: [{port: 9000}]}
`
	grant := `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: pp, namespace: guards}
spec:
  from: [{group: gateway.nginx.org, kind: PayloadProcessor, namespace: default}]
  to: [{group: "", kind: Service}]
`
	gw := pol(ngfV1, "PayloadProcessor", "gw", 0, ngfProc(gwRef, "{name: guard, port: 9000}"))
	for _, tc := range []struct {
		name, ref, extra, msg, reason string
	}{
		{"missing Service", "{name: nope, port: 9000}", "", "spec.processors[0].extProcess.backendRef: Service default/nope not found", "Invalid"},
		{"no port", "{name: route-guard}", "", "spec.processors[0].extProcess.backendRef: names no port of Service default/route-guard", "Invalid"},
		{"port not the Service's", "{name: route-guard, port: 9001}", "", "spec.processors[0].extProcess.backendRef: port 9001 not found on Service default/route-guard", "Invalid"},
		{"UDP port", "{name: udp, port: 9000}", "", "", ""},
		// NGF's own reason (validatePayloadProcessorRefs: NewPolicyRefNotPermitted).
		{"other namespace, no grant", "{name: far, namespace: guards, port: 9000}", "",
			"spec.processors[0].extProcess.backendRef: no ReferenceGrant in namespace guards allows PayloadProcessor.gateway.nginx.org from namespace default", "RefNotPermitted"},
		{"other namespace, granted", "{name: far, namespace: guards, port: 9000}", grant, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := pol(ngfV1, "PayloadProcessor", "rp", 1, ngfProc(r1Ref, tc.ref))
			res := compute(t, ngfFlagsOn, c, ngfTopo+svcs+tc.extra, gw, rp)
			want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
			got := effective(t, res, "PayloadProcessor", dR1)
			if tc.msg == "" {
				want(t, "rp", status(t, res, "rp", "Accepted"), "True/Accepted")
				if len(got) != 1 || !strings.Contains(got[0], `"name":"`+strings.TrimSuffix(strings.Fields(tc.ref)[1], ",")+`"`) {
					t.Errorf("effective r1 = %v, want rp's", got)
				}
				return
			}
			want(t, "rp", status(t, res, "rp", "Accepted"), "False/"+tc.reason)
			if m := ancestorMessage(t, res, "rp"); !strings.Contains(m, tc.msg) || !strings.HasSuffix(m, "; not applied") {
				t.Errorf("rp's message %q, want %q, not applied", m, tc.msg)
			}
			// The Gateway's applies on the route instead.
			want(t, "effective r1", got, []string{`{"processors":[{"extProcess":{"backendRef":{"name":"guard","port":9000}},"type":"ExtProcess"}]}`})
		})
	}
}

// NGF resolves a PayloadProcessor's references after it has marked
// conflicts: an older policy whose backend is missing still rejects a
// newer one on its target (Conflicted), and applies nowhere itself, so
// the route takes its Gateway's. An Incremental agrees as the Service
// comes and goes.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (processPolicies: markConflictedPolicies, then
// validatePayloadProcessorRefs), graph.go (BuildGraph: processPolicies,
// then processPayloadProcessorPolicies).
func TestDocsNGFPayloadProcessorReferencesAfterConflicts(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	gw := pol(ngfV1, "PayloadProcessor", "gw", 0, ngfProc(gwRef, "{name: guard, port: 9000}"))
	older := pol(ngfV1, "PayloadProcessor", "older", 1, ngfProc(r1Ref, "{name: late, port: 9000}"))
	newer := pol(ngfV1, "PayloadProcessor", "newer", 2, ngfProc(r1Ref, "{name: route-guard, port: 9000}"))
	late := `
---
apiVersion: v1
kind: Service
metadata: {name: late, namespace: default}
spec: {ports: [{port: 9000}]}
`
	without := []string{c, ngfTopo + ngfGuards, gw, older, newer}
	res := compute(t, ngfFlagsOn, without...)
	want(t, "older", status(t, res, "older", "Accepted"), "False/Invalid")
	if m := ancestorMessage(t, res, "older"); !strings.Contains(m, "Service default/late not found") || !strings.HasSuffix(m, "; not applied") {
		t.Errorf("older's message %q", m)
	}
	want(t, "newer", status(t, res, "newer", "Accepted"), "False/Conflicted")
	want(t, "effective r1", effective(t, res, "PayloadProcessor", dR1),
		[]string{`{"processors":[{"extProcess":{"backendRef":{"name":"guard","port":9000}},"type":"ExtProcess"}]}`})

	// The Service created: the older applies, the newer is still
	// Conflicted.
	with := []string{c, ngfTopo + ngfGuards + late, gw, older, newer}
	res = compute(t, ngfFlagsOn, with...)
	want(t, "older, Service there", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "newer, Service there", status(t, res, "newer", "Accepted"), "False/Conflicted")
	want(t, "effective r1, Service there", effective(t, res, "PayloadProcessor", dR1),
		[]string{`{"processors":[{"extProcess":{"backendRef":{"name":"late","port":9000}},"type":"ExtProcess"}]}`})

	incrementalAgrees(t, ngfFlagsOn, without, with, without)
}

// The BackendTLSPolicy of a PayloadProcessor's backend: NGF takes the
// oldest on the Service's port or on the whole Service, whichever, and a
// PayloadProcessor whose BackendTLSPolicy is not valid is invalid itself
// (Envoy Gateway would take the one on the port). A valid one takes the
// Gateways above the processor's targets as its ancestors.
// Source: NGF e55bfe339 internal/controller/state/graph/backend_refs.go
// (selectBackendTLSPolicyForService: sort.LessClientObject over every
// policy on the Service, sectionName nil or the port's name; "The
// BackendTLSPolicy is invalid"), payloadprocessor.go
// (resolveExtProcessBackendTLS,
// addPayloadProcessorBackendServicesToReferencedServices,
// payloadProcessorGateways), backend_tls_policy.go
// (addGatewaysForBackendTLSPolicies).
func TestDocsNGFPayloadProcessorBackendTLS(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	svc := `
---
apiVersion: v1
kind: Service
metadata: {name: tls-guard, namespace: default}
spec: {ports: [{name: grpc, port: 9000}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: default}
data: {ca.crt: x}
`
	tlsPolicy := func(name string, min int, section, cm string) string {
		ref := "{group: \"\", kind: Service, name: tls-guard"
		if section != "" {
			ref += ", sectionName: " + section
		}
		return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, min, "targetRefs: ["+ref+"}]\n"+
			"validation: {hostname: guard.example, caCertificateRefs: [{group: \"\", kind: ConfigMap, name: "+cm+"}]}")
	}
	rp := pol(ngfV1, "PayloadProcessor", "rp", 5, ngfProc(r1Ref, "{name: tls-guard, port: 9000}"))
	class := ngfClass(`{}`)

	// The older on the whole Service names a missing CA; the newer on the
	// port is valid: NGF takes the older.
	res := compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc, tlsPolicy("whole", 0, "", "missing"), tlsPolicy("port", 1, "grpc", "ca"), rp)
	want(t, "rp", status(t, res, "rp", "Accepted"), "False/Invalid")
	if m := ancestorMessage(t, res, "rp"); !strings.Contains(m, "the BackendTLSPolicy default/whole of Service default/tls-guard, the oldest on it, is not valid") || !strings.HasSuffix(m, "; not applied") {
		t.Errorf("rp's message %q", m)
	}
	want(t, "effective r1", effective(t, res, "PayloadProcessor", dR1), []string(nil))

	// Valid and oldest: rp applies, and the BackendTLSPolicy's ancestor
	// is r1's Gateway (the route's only parent), as an object.
	res = compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc, tlsPolicy("whole", 0, "", "ca"), rp)
	want(t, "rp, valid", status(t, res, "rp", "Accepted"), "True/Accepted")
	want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})

	// Of the two on its backend, NGF takes the older and writes the newer
	// Conflicted (selectBackendTLSPolicyForService, resolveExtProcessBackendTLS),
	// though the newer is on the port: NGF ranks neither above the other.
	res = compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc, tlsPolicy("whole", 0, "", "ca"), tlsPolicy("port", 1, "grpc", "ca"), rp)
	want(t, "rp, two on its backend", status(t, res, "rp", "Accepted"), "True/Accepted")
	want(t, "whole's ancestors, two", ancestorsOf(t, res, "whole"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	want(t, "port's ancestors, two", ancestorsOf(t, res, "port"), []string{"Gateway.gateway.networking.k8s.io default/g1=Conflicted"})
	want(t, "the backend's", effective(t, res, "BackendTLSPolicy", topology.Ref{Kind: "Service", Namespace: "default", Name: "tls-guard", SectionName: "grpc"}),
		[]string{`{"validation":{"caCertificateRefs":[{"group":"","kind":"ConfigMap","name":"ca"}],"hostname":"guard.example"}}`})

	// The older on the port the processor sends to: the newer on the
	// Service loses at that port, the only one used (by the processor's
	// Gateway), so it is Conflicted, whatever other ports the Service has.
	svc2 := strings.Replace(svc, "{name: grpc, port: 9000}", "{name: grpc, port: 9000}, {name: other, port: 8080}", 1)
	res = compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc2, tlsPolicy("port", 0, "grpc", "ca"), tlsPolicy("whole", 1, "", "ca"), rp)
	want(t, "whole, newer", status(t, res, "whole", "Accepted"), "False/Conflicted")
	want(t, "port, older", status(t, res, "port", "Accepted"), "True/Accepted")

	// A processor that is Conflicted gives it no ancestor.
	older := pol(ngfV1, "PayloadProcessor", "older", 4, ngfProc(r1Ref, "{name: guard, port: 9000}"))
	res = compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc+ngfGuards, tlsPolicy("whole", 0, "", "ca"), older, rp)
	want(t, "rp, newer", status(t, res, "rp", "Accepted"), "False/Conflicted")
	if got := ancestorsOf(t, res, "whole"); len(got) != 1 || strings.Contains(got[0], "Gateway") {
		t.Errorf("whole's ancestors = %v, want its Service's entry only", got)
	}
}

// What NGF reads of a PayloadProcessor's backend where it differs from
// what else attache reads there (review of session 33):
//   - a BackendTLSPolicy's sectionName names a port by its name, so one
//     naming "9000" does not cover an unnamed port 9000
//     (selectBackendTLSPolicyForService: servicePort.Name);
//   - the BackendTLSPolicy is judged by NGF's own rules (one CA
//     reference) even when an Envoy Gateway route sends to the same
//     Service, and its ancestor through the processor's Gateway says so;
//   - the processor's Gateways are the BackendTLSPolicy's ancestors even
//     where NGF then refuses the processor for that Gateway's data plane
//     (payloadProcessorGateways runs before attachPolicies); a policy on
//     another port, or on an unnamed port by sectionName, is never
//     selected, and NGF writes no status for it
//     (PrepareBackendTLSPolicyRequests: IsReferenced only);
//   - a backendRef without a port is refused by NGF's validator, before
//     conflicts: such a policy rejects no newer one.
func TestDocsNGFPayloadProcessorBackendReadings(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	btls := crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies")
	tlsPolicy := func(name, svc, section, cms string) string {
		ref := "{group: \"\", kind: Service, name: " + svc
		if section != "" {
			ref += ", sectionName: \"" + section + "\""
		}
		var refs []string
		for _, cm := range strings.Split(cms, ",") {
			refs = append(refs, "{group: \"\", kind: ConfigMap, name: "+cm+"}")
		}
		return pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", name, 0, "targetRefs: ["+ref+"}]\n"+
			"validation: {hostname: guard.example, caCertificateRefs: ["+strings.Join(refs, ", ")+"]}")
	}
	cas := `
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca, namespace: default}
data: {ca.crt: x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca2, namespace: default}
data: {ca.crt: x}
`
	class := ngfClass(`{}`)

	t.Run("unnamed port", func(t *testing.T) {
		svc := "\n---\napiVersion: v1\nkind: Service\nmetadata: {name: plain, namespace: default}\nspec: {ports: [{port: 9000}]}\n"
		rp := pol(ngfV1, "PayloadProcessor", "rp", 5, ngfProc(r1Ref, "{name: plain, port: 9000}"))
		res := compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc, tlsPolicy("sec", "plain", "9000", "missing"), rp)
		want(t, "rp", status(t, res, "rp", "Accepted"), "True/Accepted")
		for _, a := range ancestorsOf(t, res, "sec") {
			if strings.Contains(a, "Gateway") {
				t.Errorf("sec's ancestor %s: NGF never selects it", a)
			}
		}
	})

	t.Run("NGF's reading beside an Envoy Gateway route", func(t *testing.T) {
		svc := "\n---\napiVersion: v1\nkind: Service\nmetadata: {name: shared, namespace: default}\nspec: {ports: [{name: grpc, port: 9000}]}\n"
		eg := "\n" + classDoc("eg", egController, "") + gatewayDoc("geg", "eg", "[{name: http, protocol: HTTP, port: 80}]", "") + `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reg, namespace: default}
spec: {parentRefs: [{name: geg}], hostnames: [eg.example], rules: [{backendRefs: [{name: shared, port: 9000}]}]}
`
		rp := pol(ngfV1, "PayloadProcessor", "rp", 5, ngfProc(r1Ref, "{name: shared, port: 9000}"))
		// Or r1 itself also under an Envoy Gateway Gateway.
		sharedR1 := strings.Replace(ngfTopo, "metadata: {name: r1, namespace: default}\nspec:\n  parentRefs: [{name: g1}]", "metadata: {name: r1, namespace: default}\nspec:\n  parentRefs: [{name: g1}, {name: geg}]", 1)
		if sharedR1 == ngfTopo {
			t.Fatal("r1's parentRefs not replaced")
		}
		egOnly := strings.Replace(eg, "rules: [{backendRefs: [{name: shared, port: 9000}]}]", "rules: [{backendRefs: [{name: s1, port: 80}]}]", 1)
		for _, topo := range []string{ngfTopo, ngfTopo + eg, sharedR1 + egOnly} {
			extra := topo != ngfTopo
			res := compute(t, ngfFlagsOn, c, btls, class, topo+svc+cas, tlsPolicy("two", "shared", "", "ca,ca2"), rp)
			want(t, "rp", status(t, res, "rp", "Accepted"), "False/Invalid")
			for _, a := range ancestorsOf(t, res, "two") {
				if strings.Contains(a, "default/g1") && !strings.HasSuffix(a, "=Invalid") {
					t.Errorf("with the Envoy Gateway route %v: ancestor %s, want Invalid by NGF's reading", extra, a)
				}
			}
		}
	})

	t.Run("Gateways refusing the processor, other ports", func(t *testing.T) {
		svc := "\n---\napiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: default}\nspec: {type: ExternalName, externalName: guard.example.com, ports: [{name: https, port: 9000}, {name: metrics, port: 9100}]}\n"
		rp := pol(ngfV1, "PayloadProcessor", "rp", 5, ngfProc(r1Ref, "{name: ext, port: 9000}"))
		noResolver := strings.Replace(ngfClass(`{}`), "  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}\n", "", 1)
		res := compute(t, ngfFlagsOn, c, btls, noResolver, ngfTopo+svc+cas, tlsPolicy("whole", "ext", "", "ca"), rp)
		want(t, "rp, no resolver", status(t, res, "rp", "Accepted"), "False/Invalid")
		want(t, "whole's ancestors", ancestorsOf(t, res, "whole"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
		res = compute(t, ngfFlagsOn, c, btls, ngfClass(`{dnsResolver: {addresses: [{type: IPAddress, value: 10.0.0.53}]}}`), ngfTopo+svc+cas, tlsPolicy("metrics", "ext", "metrics", "ca"), rp)
		want(t, "rp, resolver", status(t, res, "rp", "Accepted"), "True/Accepted")
		want(t, "metrics' ancestors", ancestorsOf(t, res, "metrics"), []string{"Service default/ext#metrics=Accepted"})
	})

	t.Run("no port: the validator's, before conflicts", func(t *testing.T) {
		older := pol(ngfV1, "PayloadProcessor", "older", 1, ngfProc(r1Ref, "{name: route-guard}"))
		newer := pol(ngfV1, "PayloadProcessor", "newer", 2, ngfProc(r1Ref, "{name: other, port: 9000}"))
		res := compute(t, ngfFlagsOn, c, ngfTopo+ngfGuards, older, newer)
		want(t, "older", status(t, res, "older", "Accepted"), "False/Invalid")
		want(t, "newer", status(t, res, "newer", "Accepted"), "True/Accepted")
	})
}

// A policy whose references its kind judges after conflicts, applied
// nowhere, fails no request: a kind replacing what a broken policy
// reaches (route-replacement) replaces nothing for it (review of session
// 33: it was taken for Invalid in place).
func TestRefsAfterConflictsReplaceNothing(t *testing.T) {
	c := declaredCRD("example.com", "Guard", "guards", "direct",
		"attache.dev/target-kinds: HTTPRoute",
		"attache.dev/effective-section-kinds: HTTPRoute",
		"attache.dev/backend-refs: backendRef",
		"attache.dev/unresolved-backend-refs: invalid",
		"attache.dev/conflict-scope: policy", "attache.dev/same-level: oldest-wins",
		`attache.dev/route-replacement: "500"`,
		`attache.dev/invalid-policies: "not-applied references=after-conflicts"`)
	p := pol("example.com/v1", "Guard", "g", 1, "targetRefs: ["+r1Ref+"]\nbackendRef: {name: nope, port: 9000}")
	res := compute(t, engine.Options{}, c, docsTopo, p)
	want(t, "g", status(t, res, "g", "Accepted"), "False/Invalid")
	if m := ancestorMessage(t, res, "g"); !strings.HasSuffix(m, "; not applied") {
		t.Errorf("message %q", m)
	}
	wantReplacesNothing(t, res, "g")
}

// wantReplacesNothing fails when policy name is taken for Invalid in
// place: the replacement of what it reaches, or InPlaceInvalid targets.
func wantReplacesNothing(t *testing.T, res *engine.Result, name string) {
	t.Helper()
	for _, pr := range res.Problems {
		if strings.Contains(pr.Message, "replaces") {
			t.Errorf("problem %q: %s replaces nothing", pr.Message, name)
		}
	}
	if st := policyStatusOf(t, res, name); len(st.InPlaceInvalid) != 0 {
		t.Errorf("%s: InPlaceInvalid %v, want none", name, st.InPlaceInvalid)
	}
}

// A policy refused through some Gateways only (their data plane's
// parameters) and applied through the others fails no request: a kind
// replacing what a broken policy reaches replaces nothing for it
// (review of session 33). A WAFPolicy-like kind with route replacement:
// r3 runs through g1, whose NginxProxy does not enable WAF, and g2,
// whose does.
func TestPartlyRefusedReplacesNothing(t *testing.T) {
	c := strings.Replace(labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited"),
		"labels: {gateway.networking.k8s.io/policy: inherited}",
		`labels: {gateway.networking.k8s.io/policy: inherited}, annotations: {attache.dev/effective-section-kinds: HTTPRoute, attache.dev/route-replacement: "500", attache.dev/requires: "securityLogs requires parameters:waf.enable=true reason=NginxProxyConfigNotSet"}`, 1)
	if !strings.Contains(c, "route-replacement") {
		t.Fatal("the CRD's annotations were not added")
	}
	logged := pol(ngfV1, "WAFPolicy", "logged", 1, "targetRefs: ["+ngfR3Ref+"]\ntype: HTTP\npolicySource: {httpSource: {url: 'https://b.example/p.tgz'}}\nsecurityLogs: [{destination: {type: stderr}}]")
	res := compute(t, engine.Options{}, c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), ngfOwnProxy(ngfTopo, `{waf: {enable: true}}`), ngfR3, logged)
	if m := ancestorMessage(t, res, "logged"); !strings.Contains(m, "not applied through Gateway default/g1, applied through its other Gateways") {
		t.Fatalf("logged's message %q, want it refused through g1 only", m)
	}
	wantReplacesNothing(t, res, "logged")
}
