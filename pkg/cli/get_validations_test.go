package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kind's CEL rules (validations) show with -o wide, one origin each,
// and as objects with -o json: Envoy Gateway's ClientTrafficPolicy's
// cipher suites, and an annotation on a kind of one's own; a rule that
// does not compile refuses the CRD, naming the annotation, the kind and
// the rule.
func TestGetPolicyKindsValidations(t *testing.T) {
	dir := t.TempDir()
	ctp := filepath.Join(dir, "ctp.yaml")
	if err := os.WriteFile(ctp, []byte(implementationCRD("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies", "v1alpha1")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "get", "policykinds", "-f", ctp, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `validation={"rule":"!has(self.tls) || !has(self.tls.ciphers) || self.tls.ciphers.all(c, c in ['ECDHE-ECDSA-AES128-GCM-SHA256'`) ||
		!strings.Contains(out, `"message":"names a cipher suite Envoy Gateway does not support","fieldPath":".tls.ciphers","listenerProtocols":["HTTPS","TLS"]} (profile: Envoy Gateway)`) {
		t.Errorf("-o wide lacks the validations setting:\n%s", out)
	}
	out, _, err = run(t, "get", "policykinds", "-f", ctp, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"validations": [
        {
          "rule": "!has(self.tls)`) || !strings.Contains(out, `"fieldPath": ".tls.ciphers",`) || !strings.Contains(out, `"validations": "profile: Envoy Gateway"`) {
		t.Errorf("-o json lacks the validations setting or its origin:\n%s", out)
	}
	own := filepath.Join(dir, "own.yaml")
	crd := strings.Replace(implementationCRD("example.com", "ModPolicy", "modpolicies", "v1"), "metadata: {name: modpolicies.example.com}",
		`metadata: {name: modpolicies.example.com, labels: {gateway.networking.k8s.io/policy: Direct}, annotations: {attache.dev/validations: "[{rule: \"has(self.mode)\", message: must set a mode}]"}}`, 1)
	if err := os.WriteFile(own, []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "get", "policykinds", "-f", own, "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `validation={"rule":"has(self.mode)","message":"must set a mode"} (annotation)`) {
		t.Errorf("-o wide lacks the annotated validations setting:\n%s", out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(crd, `has(self.mode)`, `has(self.mode) &&`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, "get", "policykinds", "-f", bad)
	if !strings.Contains(errOut+errString(err), `metadata.annotations[attache.dev/validations]: policy kind ModPolicy.example.com: validations[0]: rule "has(self.mode) &&" does not compile`) {
		t.Errorf("a rule that does not compile: %v\n%s", err, errOut)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
