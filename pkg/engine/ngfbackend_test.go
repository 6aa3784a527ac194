package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
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

	in := engine.NewIncremental(ngfFlagsOn)
	for i, step := range [][]string{without, with, without} {
		got := in.Compute(decodeDocs(t, step...))
		if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, step...), ngfFlagsOn)); a != b {
			t.Fatalf("step %d: %s", i, firstDiff(a, b))
		}
	}
}

// The BackendTLSPolicy of a PayloadProcessor's backend: NGF takes the
// oldest on the Service's port or on the whole Service, whichever, and a
// PayloadProcessor whose BackendTLSPolicy is not valid is invalid itself
// (Envoy Gateway would take the one on the port). A valid one takes the
// Gateways the processor applies through as its ancestors.
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

	// A processor that is Conflicted gives it no ancestor.
	older := pol(ngfV1, "PayloadProcessor", "older", 4, ngfProc(r1Ref, "{name: guard, port: 9000}"))
	res = compute(t, ngfFlagsOn, c, btls, class, ngfTopo+svc+ngfGuards, tlsPolicy("whole", 0, "", "ca"), older, rp)
	want(t, "rp, newer", status(t, res, "rp", "Accepted"), "False/Conflicted")
	if got := ancestorsOf(t, res, "whole"); len(got) != 1 || strings.Contains(got[0], "Gateway") {
		t.Errorf("whole's ancestors = %v, want its Service's entry only", got)
	}
}
