package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// A declared target of a kind the caller could not read (Options.Unread:
// the controller or the reader may not list XListenerSets) is not judged:
// no TargetNotFound entry, listed in UnreadTargets; the policy's other
// targets are judged as usual, and a policy with no other target says it
// was not judged. Without Unread, the same target is TargetNotFound.
func TestUnreadTargetsNotJudged(t *testing.T) {
	docs := []string{`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: xlspolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations: {attache.dev/target-kinds: "Gateway,XListenerSet.gateway.networking.x-k8s.io"}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: XlsPolicy, plural: xlspolicies}
  versions: [{name: v1, served: true, storage: true}]
`, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec: {gatewayClassName: example, listeners: [{name: http, protocol: HTTP, port: 80}]}
`,
		pol("example.com/v1", "XlsPolicy", "both", 0, `targetRefs:
- {group: gateway.networking.k8s.io, kind: Gateway, name: g}
- {group: gateway.networking.x-k8s.io, kind: XListenerSet, name: team}`),
		pol("example.com/v1", "XlsPolicy", "only", 1, `targetRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: team}]`),
	}
	xls := topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: "default", Name: "team"}
	unread := func(r topology.Ref) bool { return r.GroupKind() == xls.GroupKind() }
	res := compute(t, engine.Options{Unread: unread}, docs...)
	byName := map[string]*engine.PolicyStatus{}
	for _, ps := range res.Policies {
		byName[ps.Policy.Ref.Name] = ps
	}
	both, only := byName["both"], byName["only"]
	if both == nil || only == nil {
		t.Fatalf("policies: %v", byName)
	}
	if len(both.Ancestors) != 1 || both.Ancestors[0].Ref.Kind != "Gateway" || !slices.Equal(both.UnreadTargets, []topology.Ref{xls}) {
		t.Errorf("both: ancestors %v, unread %v; want the Gateway's entry only, the XListenerSet unread", both.Ancestors, both.UnreadTargets)
	}
	if got := status(t, res, "both", "Accepted"); got != "True/Accepted" {
		t.Errorf("both: Accepted %s, want True/Accepted", got)
	}
	if len(only.Ancestors) != 0 || !slices.Equal(only.UnreadTargets, []topology.Ref{xls}) {
		t.Errorf("only: ancestors %v, unread %v; want none, the XListenerSet unread", only.Ancestors, only.UnreadTargets)
	}
	if c := only.Conditions[0]; !strings.Contains(c.Message, "not judged") || !strings.Contains(c.Message, "XListenerSet") {
		t.Errorf("only: Accepted message %q does not say it was not judged", c.Message)
	}

	read := compute(t, engine.Options{}, docs...)
	for _, ps := range read.Policies {
		if ps.Policy.Ref.Name != "only" {
			continue
		}
		if len(ps.UnreadTargets) != 0 || len(ps.Ancestors) != 1 || ps.Ancestors[0].Conditions[0].Reason != engine.ReasonTargetNotFound {
			t.Errorf("only, everything read: ancestors %v, unread %v; want one TargetNotFound entry", ps.Ancestors, ps.UnreadTargets)
		}
	}
}
