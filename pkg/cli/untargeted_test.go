package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUntargetedPolicies: get and describe say what an Istio policy with no
// targetRefs applies to, and describe of the Gateway lists the policies
// that reach it so.
func TestUntargetedPolicies(t *testing.T) {
	const f = "testdata/istio-untargeted.yaml"
	out, _, err := run(t, "get", "policies", "-A", "-f", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"allow-ingress   (the Istio Gateways of namespace shop with pod labels gateway.networking.k8s.io/gateway-name=ingress)",
		"deny-all        (the Istio Gateways of namespace shop)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("get policies lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, "get", "policies", "-A", "-f", f, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Ref        struct{ Name string } `json:"ref"`
			Untargeted string                `json:"untargeted"`
			Accepted   string                `json:"accepted"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 3 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, it := range list.Items {
		if it.Untargeted == "" || (it.Ref.Name == "reviews") != (it.Accepted == "TargetNotFound") {
			t.Errorf("%s: untargeted %q, accepted %q", it.Ref.Name, it.Untargeted, it.Accepted)
		}
	}
	out, _, err = run(t, "describe", "gateway", "ingress", "-n", "shop", "-f", f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Affected by policies: yes (2)") || !strings.Contains(out, "AuthorizationPolicy shop/deny-all") || strings.Contains(out, "shop/reviews") {
		t.Errorf("describe gateway:\n%s", out)
	}
	out, _, err = run(t, "describe", "authorizationpolicy", "reviews", "-n", "shop", "-f", f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Targets:      none declared: the Istio Gateways of namespace shop with pod labels app=reviews") ||
		!strings.Contains(out, "selects workloads by labels attache cannot see on Gateways (app)") {
		t.Errorf("describe policy:\n%s", out)
	}
}
