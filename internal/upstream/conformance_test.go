package upstream

import (
	"path/filepath"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/verdict"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// conformanceNS is the conformance suite's infrastructure namespace.
const conformanceNS = "gateway-conformance-infra"

// backendTLSCase is one conformance test: its manifest and the status the
// test's Go code requires of each BackendTLSPolicy at a Gateway ancestor.
type backendTLSCase struct {
	file   string // conformance test, tests/<file>.go and tests/<file>.yaml
	expect []backendTLSExpect
}

type backendTLSExpect struct {
	policy, gateway string
	// accepted is "True" or the reason of Accepted=False.
	accepted string
}

// Facts read off the Go code of the conformance tests named in file
// (sigs.k8s.io/gateway-api/conformance, version pinned in modfixtures): each
// entry is a BackendTLSPolicyMustHaveCondition call's policy, Gateway and
// Accepted condition, for the manifests as first applied.
var backendTLSCases = []backendTLSCase{
	{file: "backendtlspolicy-conflict-resolution", expect: []backendTLSExpect{
		{"conflicted-without-section-name-1", "same-namespace", "True"},
		{"conflicted-without-section-name-2", "same-namespace", "Conflicted"},
		{"conflicted-with-section-name-1", "same-namespace", "True"},
		{"conflicted-with-section-name-2", "same-namespace", "Conflicted"},
		{"not-conflicted-with-section-name", "same-namespace", "True"},
		{"not-conflicted-without-section-name", "same-namespace", "True"},
	}},
	{file: "backendtlspolicy-invalid-ca-certificate-ref", expect: []backendTLSExpect{
		{"nonexistent-ca-certificate-ref", "same-namespace", "NoValidCACertificate"},
		{"malformed-ca-certificate-ref", "same-namespace", "NoValidCACertificate"},
	}},
	{file: "backendtlspolicy-invalid-kind", expect: []backendTLSExpect{
		{"invalid-kind", "same-namespace", "NoValidCACertificate"},
	}},
	{file: "backendtlspolicy-observed-generation-bump", expect: []backendTLSExpect{
		{"observed-generation-bump", "same-namespace", "True"},
	}},
	{file: "backendtlspolicy-san", expect: []backendTLSExpect{
		{"san-dns", "same-namespace", "True"},
		{"san-dns-mismatch", "same-namespace", "True"},
		{"san-uri", "same-namespace", "True"},
		{"san-uri-mismatch", "same-namespace", "True"},
		{"multiple-sans", "same-namespace", "True"},
		{"multiple-mismatch-sans", "same-namespace", "True"},
	}},
	{file: "backendtlspolicy", expect: []backendTLSExpect{
		{"normative-test", "same-namespace-with-https-listener", "True"},
		{"normative-test", "same-namespace", "True"},
		{"host-mismatch", "same-namespace", "True"},
		{"cert-mismatch", "same-namespace", "True"},
		{"reconcile-test", "same-namespace", "True"},
	}},
}

// TestGatewayAPIConformanceBackendTLSPolicy runs the engine over each
// BackendTLSPolicy conformance test's manifests (with the suite's base
// manifests and the BackendTLSPolicy CRD of the pinned gateway-api module)
// and checks the Accepted condition the test requires per Gateway ancestor.
// Reasons attache cannot give (NoValidCACertificate: the CA certificate refs
// are content attache does not read) are reported, not failed; every other
// difference fails.
func TestGatewayAPIConformanceBackendTLSPolicy(t *testing.T) {
	conf := modfixtures.Dir(t, modfixtures.GatewayAPIConformance)
	crds := modfixtures.CRDs(t, modfixtures.Dir(t, modfixtures.GatewayAPI), "config/crd/standard/gateway.networking.k8s.io_backendtlspolicies.yaml")
	for _, c := range backendTLSCases {
		t.Run(c.file, func(t *testing.T) {
			objs, probs, err := manifest.Read([]string{
				filepath.Join(conf, "base", "manifests.yaml"),
				filepath.Join(conf, "tests", c.file+".yaml"),
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probs {
				t.Errorf("reading the manifests: %s", p.Error())
			}
			res := engine.Compute(append(append([]engine.Object(nil), crds...), objs...), engine.Options{})
			exp := verdict.Expected{Fixture: c.file, AncestorsOf: verdict.GatewayAncestors(objs)}
			index := map[topology.Ref]int{}
			for _, e := range c.expect {
				ref := topology.Ref{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy", Namespace: conformanceNS, Name: e.policy}
				i, ok := index[ref]
				if !ok {
					i = len(exp.Policies)
					index[ref] = i
					exp.Policies = append(exp.Policies, verdict.Policy{Ref: ref})
				}
				exp.Policies[i].Ancestors = append(exp.Policies[i].Ancestors, verdict.Ancestor{
					Ref:  topology.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: conformanceNS, Name: e.gateway},
					Want: verdict.Verdict{Accepted: e.accepted},
				})
			}
			judged := 0
			for _, ps := range res.Policies {
				if _, ok := index[ps.Policy.Ref]; ok {
					judged++
					t.Logf("%s: %v", ps.Policy.Ref.Short(), ps.Conditions)
				}
			}
			if judged != len(index) {
				t.Errorf("attache gave a status to %d of the %d BackendTLSPolicies the test checks", judged, len(index))
			}
			for _, m := range verdict.Compare(exp, res) {
				// The conformance tests check the named Gateway only: an
				// ancestor attache adds beyond those is not a difference.
				if m.Want.Accepted == "" && m.Ancestor != "(policy)" {
					continue
				}
				if m.Cause == verdict.CauseContent {
					t.Logf("not judged by attache: %s", m)
					continue
				}
				t.Errorf("%s", m)
			}
		})
	}
}
