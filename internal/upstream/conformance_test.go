package upstream

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	// resolved, when set, is the reason of ResolvedRefs=False the test
	// requires.
	resolved string
}

// Facts read off the Go code of the conformance tests named in file
// (sigs.k8s.io/gateway-api/conformance at modfixtures.GatewayAPIConformanceLatest): each
// entry is a BackendTLSPolicyMustHaveCondition call's policy, Gateway and
// Accepted condition, for the manifests as first applied.
var backendTLSCases = []backendTLSCase{
	{file: "backendtlspolicy-conflict-resolution", expect: []backendTLSExpect{
		{"conflicted-without-section-name-1", "same-namespace", "True", ""},
		{"conflicted-without-section-name-2", "same-namespace", "Conflicted", ""},
		{"conflicted-with-section-name-1", "same-namespace", "True", ""},
		{"conflicted-with-section-name-2", "same-namespace", "Conflicted", ""},
		{"not-conflicted-with-section-name", "same-namespace", "True", ""},
		{"not-conflicted-without-section-name", "same-namespace", "True", ""},
	}},
	{file: "backendtlspolicy-grpcroute", expect: []backendTLSExpect{
		{"grpc-normative-test", "same-namespace", "True", ""},
		{"grpc-host-mismatch", "same-namespace", "True", ""},
		{"grpc-cert-mismatch", "same-namespace", "True", ""},
	}},
	{file: "backendtlspolicy-invalid-ca-certificate-ref", expect: []backendTLSExpect{
		{"nonexistent-ca-certificate-ref", "same-namespace", "NoValidCACertificate", "InvalidCACertificateRef"},
		{"malformed-ca-certificate-ref", "same-namespace", "NoValidCACertificate", "InvalidCACertificateRef"},
	}},
	{file: "backendtlspolicy-invalid-kind", expect: []backendTLSExpect{
		{"invalid-kind", "same-namespace", "NoValidCACertificate", "InvalidKind"},
	}},
	{file: "backendtlspolicy-observed-generation-bump", expect: []backendTLSExpect{
		{"observed-generation-bump", "same-namespace", "True", ""},
	}},
	// The foreign status entry the test then seeds is the controller's
	// concern (kept by its status writer); the engine's part is the
	// policy's own entry.
	{file: "backendtlspolicy-preserve-foreign-status", expect: []backendTLSExpect{
		{"backendtlspolicy-preserve-foreign-status", "same-namespace", "True", ""},
	}},
	{file: "backendtlspolicy-san", expect: []backendTLSExpect{
		{"san-dns", "same-namespace", "True", ""},
		{"san-dns-mismatch", "same-namespace", "True", ""},
		{"san-uri", "same-namespace", "True", ""},
		{"san-uri-mismatch", "same-namespace", "True", ""},
		{"multiple-sans", "same-namespace", "True", ""},
		{"multiple-mismatch-sans", "same-namespace", "True", ""},
	}},
	{file: "backendtlspolicy-tlsroute-terminate", expect: []backendTLSExpect{
		{"btls-tlsroute-terminate-test", "gateway-btls-tlsroute-terminate", "True", ""},
	}},
	{file: "backendtlspolicy", expect: []backendTLSExpect{
		{"normative-test", "same-namespace-with-https-listener", "True", ""},
		{"normative-test", "same-namespace", "True", ""},
		{"host-mismatch", "same-namespace", "True", ""},
		{"cert-mismatch", "same-namespace", "True", ""},
		{"reconcile-test", "same-namespace", "True", ""},
	}},
}

// TestGatewayAPIConformanceBackendTLSPolicy runs the engine over each
// BackendTLSPolicy conformance test's manifests (with the suite's base
// manifests and the BackendTLSPolicy CRD of the pinned gateway-api module)
// and checks the Accepted condition the test requires per Gateway ancestor.
// The CA certificate ConfigMaps the suite creates at setup are added as it
// adds them. The ResolvedRefs condition is checked too: the reason the test
// requires, and True wherever the policy is accepted.
func TestGatewayAPIConformanceBackendTLSPolicy(t *testing.T) {
	conf := modfixtures.DirAt(t, modfixtures.GatewayAPIConformance, modfixtures.GatewayAPIConformanceLatest)
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
			objs = append(objs, suiteCAConfigMaps(t, conf)...)
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
				t.Errorf("%s", m)
			}
			for _, e := range c.expect {
				want := e.resolved
				switch {
				case want == "" && e.accepted == "True":
					want = "True"
				case want == "":
					continue // Conflicted: the test says nothing of ResolvedRefs
				}
				if got := resolvedRefsAt(res, e.policy, e.gateway); got != want {
					t.Errorf("%s at Gateway %s: ResolvedRefs %s, want %s", e.policy, e.gateway, got, want)
				}
			}
		})
	}
}

// resolvedRefsAt is attache's ResolvedRefs condition of BackendTLSPolicy
// policy at the ancestor Gateway gateway: "True", the reason of False, or
// "(none)".
func resolvedRefsAt(res *engine.Result, policy, gateway string) string {
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Kind != "BackendTLSPolicy" || ps.Policy.Ref.Name != policy || ps.Policy.Ref.Namespace != conformanceNS {
			continue
		}
		for _, a := range ps.Ancestors {
			if a.Ref.Object() != (topology.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: conformanceNS, Name: gateway}) {
				continue
			}
			for _, c := range a.Conditions {
				if c.Type == engine.CondResolvedRefs {
					if c.Status == "True" {
						return "True"
					}
					return c.Reason
				}
			}
		}
	}
	return "(none)"
}

// caConfigMapCall is a call of the conformance suite's setup that creates a
// CA certificate ConfigMap (with the certificate under ca.crt) in the
// infrastructure namespace.
var caConfigMapCall = regexp.MustCompile(`MustCreateCACertConfigMap\(t, InfrastructureNamespace, "([^"]+)"\)`)

// suiteCAConfigMaps are the ConfigMaps the conformance suite creates at
// setup, read off its code (utils/suite/suite.go) rather than listed here,
// so that a new one in a later version is not missed.
func suiteCAConfigMaps(t *testing.T, conf string) []engine.Object {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(conf, "utils", "suite", "suite.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []engine.Object
	for _, m := range caConfigMapCall.FindAllStringSubmatch(string(src), -1) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": m[1], "namespace": conformanceNS},
			"data":     map[string]any{"ca.crt": "(the suite's generated certificate)"},
		}}
		out = append(out, engine.Object{Object: u, Source: "conformance suite setup"})
	}
	if len(out) == 0 || !slices.ContainsFunc(out, func(o engine.Object) bool { return o.Object.GetName() == "tls-checks-ca-certificate" }) {
		t.Fatalf("found %d CA ConfigMaps created by the suite's setup, not tls-checks-ca-certificate: has utils/suite/suite.go changed?", len(out))
	}
	return out
}
