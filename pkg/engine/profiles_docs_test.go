package engine_test

// Cases written from the documented behaviour of the implementations whose
// Go modules the module proxy does not serve (NGINX Gateway Fabric,
// Kuadrant, Gloo Gateway, kgateway) and of Istio's kinds that
// profiles_test.go does not cover. Each case names the page or file (and
// version, see docs/profiles.md "Versions read") its expectations come
// from. Where attache cannot model a documented behaviour, the case asserts
// what attache models and the gap is in docs/profiles.md.

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// labelledCRD is crd with the gateway.networking.k8s.io/policy label the
// implementation ships on it.
func labelledCRD(group, kind, plural, label string) string {
	name := plural + "." + group
	return strings.Replace(crd(group, kind, plural), "metadata: {name: "+name+"}",
		fmt.Sprintf("metadata: {name: %s, labels: {gateway.networking.k8s.io/policy: %s}}", name, label), 1)
}

// docsTopo: Gateway g1 (listeners http, admin) and Gateway g2 (listener
// http); HTTPRoute r1 on g1 (no sectionName) with rules first (to s1) and
// second (to s2); HTTPRoute r2 on g2 to s1; GRPCRoute gr1 on g1.
const docsTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: admin, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [{name: g1}]
  rules:
  - name: first
    backendRefs: [{name: s1, port: 80}]
  - name: second
    backendRefs: [{name: s2, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: default}
spec:
  parentRefs: [{name: g2}]
  rules: [{name: only, backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: gr1, namespace: default}
spec:
  parentRefs: [{name: g1}]
  rules: [{name: only, backendRefs: [{name: s2, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s2, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

var (
	dG1 = topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}
	dR1 = topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r1"}
	dS1 = topology.Ref{Kind: "Service", Namespace: "default", Name: "s1"}
)

func dListener(l string) topology.Ref {
	r := dG1
	r.SectionName = l
	return r
}

// ancestorsOf returns a policy's ancestors as "ref=reason", sorted.
func ancestorsOf(t *testing.T, res *engine.Result, name string) []string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		var out []string
		for _, a := range ps.Ancestors {
			out = append(out, a.Ref.String()+"="+a.Conditions[0].Reason)
		}
		sort.Strings(out)
		return out
	}
	t.Fatalf("no policy %s", name)
	return nil
}

func kindOf(t *testing.T, res *engine.Result, kind string) *policy.Kind {
	t.Helper()
	for _, k := range res.Kinds {
		if k.GroupKind.Kind == kind {
			return k
		}
	}
	t.Fatalf("no kind %s among %v (problems %v)", kind, res.Kinds, res.Problems)
	return nil
}

const gwRef = `{group: gateway.networking.k8s.io, kind: Gateway, name: g1}`
const r1Ref = `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}`

// ---------------------------------------------------------------- NGF

// ngfTopo is docsTopo with a hostname on GRPCRoute gr1: without one, NGF
// keys gr1 and r1 by the same location (g1, any host, port 80, "/"), and
// rejects a policy on one of them alone (TargetConflict, see
// TestDocsNGFRouteOverlapTargetConflict).
var ngfTopo = strings.Replace(docsTopo, "metadata: {name: gr1, namespace: default}\nspec:\n", "metadata: {name: gr1, namespace: default}\nspec:\n  hostnames: [grpc.example]\n", 1)

const ngfV1 = "gateway.nginx.org/v1alpha1"

// ngfR3 is HTTPRoute default/r3 on both Gateways of ngfTopo (g1, g2), for
// the per-Gateway cases; ngfR3Ref names it in a targetRef, ngfDR3 is it.
const ngfR3 = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r3, namespace: default}
spec:
  parentRefs: [{name: g1}, {name: g2}]
  hostnames: [three.example]
  rules: [{backendRefs: [{name: s1, port: 80}]}]`

const ngfR3Ref = `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r3}`

var ngfDR3 = topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r3"}

// ngfFlagsOn turns on the NGF controller flags that the kinds gated by
// them need (SnippetsPolicy, PayloadProcessor, ExternalLoadBalancer).
var ngfFlagsOn = engine.Options{Features: policy.Features{
	profiles.NGFSnippets:             {On: true, From: "--feature"},
	profiles.NGFPayloadProcessor:     {On: true, From: "--feature"},
	profiles.NGFExternalLoadBalancer: {On: true, From: "--feature"},
}}

// NGF processes SnippetsPolicy, PayloadProcessor and ExternalLoadBalancer
// only when its controller's flag for each is set (--snippets,
// --payload-processor, --external-load-balancer; the Helm chart leaves
// them off): otherwise it neither watches nor validates them, so they
// apply nowhere. attache cannot read the flags: the kinds are Disabled
// unless --feature turns their flag on.
// Source: NGF e55bfe339 internal/controller/manager.go
// (featureFlagControllerCfgs, createPolicyManager: cfg.Snippets,
// cfg.PayloadProcessor, cfg.ExternalLoadBalancer), cmd/gateway/
// commands.go (the flags, default false), charts/nginx-gateway-fabric
// values.yaml (snippets.enable, payloadProcessor.enable,
// externalLoadBalancer.enable: false), templates/deployment.yaml.
func TestDocsNGFFlagGatedKinds(t *testing.T) {
	for _, k := range []struct{ kind, plural, label, feature, spec string }{
		{"SnippetsPolicy", "snippetspolicies", "direct", profiles.NGFSnippets, `targetRefs: [` + gwRef + `]
snippets: [{context: http, value: "a on;"}]`},
		{"PayloadProcessor", "payloadprocessors", "inherited", profiles.NGFPayloadProcessor, "targetRef: " + gwRef + `
processors: [{type: ExtProcess, extProcess: {backendRef: {name: guard, port: 9000}}}]`},
		{"ExternalLoadBalancer", "externalloadbalancers", "direct", profiles.NGFExternalLoadBalancer, `targetRefs: [` + gwRef + `]
gatewayLink: {virtualServerAddress: 10.0.0.1}`},
	} {
		docs := []string{labelledCRD("gateway.nginx.org", k.kind, k.plural, k.label), ngfTopo + ngfGuards, pol(ngfV1, k.kind, "p", 0, k.spec)}
		res := compute(t, engine.Options{}, docs...)
		want(t, k.kind+" off", status(t, res, "p", "Accepted"), "False/Disabled")
		if msg := ancestorMessage(t, res, "p"); !strings.Contains(msg, "it needs "+k.feature+", off") || !strings.Contains(msg, "--feature "+k.feature+"=true") {
			t.Errorf("%s: message %q", k.kind, msg)
		}
		target := dG1
		if k.kind == "PayloadProcessor" {
			target = dR1 // effective at the Gateway's routes
		}
		if e := effective(t, res, k.kind, target); len(e) != 0 {
			t.Errorf("%s off: effective %v, want none", k.kind, e)
		}
		res = compute(t, engine.Options{Features: policy.Features{k.feature: {On: true, From: "--feature"}}}, docs...)
		want(t, k.kind+" on", status(t, res, "p", "Accepted"), "True/Accepted")
		if e := effective(t, res, k.kind, target); len(e) != 1 {
			t.Errorf("%s on: effective %v, want the policy", k.kind, e)
		}
	}
}

// ngfGuards are the Services, port 9000, that the PayloadProcessors of
// these tests send payloads to (NGF marks one whose backend Service is
// missing invalid).
const ngfGuards = `
---
apiVersion: v1
kind: Service
metadata: {name: guard, namespace: default}
spec: {ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: route-guard, namespace: default}
spec: {ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: other, namespace: default}
spec: {ports: [{port: 9000}]}
`

// ngfClass is an NGF GatewayClass c whose parametersRef names NginxProxy
// ngf/proxy (as NGF's Helm chart makes it), and that NginxProxy with
// spec spec.
func ngfClass(spec string) string {
	return `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: c}
spec:
  controllerName: ` + profiles.NGFController + `
  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: proxy, namespace: ngf}
spec: ` + spec + "\n"
}

// ngfOwnProxy makes Gateway g2 of ngfTopo name NginxProxy default/own
// (spec spec) as its own parameters.
func ngfOwnProxy(topo, spec string) string {
	topo = strings.Replace(topo, "metadata: {name: g2, namespace: default}\nspec:\n",
		"metadata: {name: g2, namespace: default}\nspec:\n  infrastructure: {parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: own}}\n", 1)
	return topo + `
---
apiVersion: gateway.nginx.org/v1alpha2
kind: NginxProxy
metadata: {name: own, namespace: default}
spec: ` + spec + "\n"
}

// An ObservabilityPolicy takes effect through a Gateway only if the
// NginxProxy the Gateway runs with (its own merged over its
// GatewayClass's, field by field) enables telemetry: an exporter endpoint
// set, tracing not disabled. Through a Gateway whose NginxProxy does not,
// the policy is not accepted at the route (NGF's reason
// NginxProxyConfigNotSet) and not applied (the Helm chart's
// NginxProxy sets no exporter); a Gateway running with no NginxProxy at
// all is not checked. A Gateway's empty disabledFeatures clears its
// class's.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (attachPolicyToRoute), nginxproxy.go (buildEffectiveNginxProxy,
// cleanupTelemetry, telemetryEnabledForNginxProxy), gateway.go
// (buildGateways), nginx/config/policies/observability/validator.go
// (ValidateGlobalSettings); charts/nginx-gateway-fabric/templates/
// nginxproxy.yaml, gatewayclass.yaml.
func TestDocsNGFObservabilityPolicyNeedsTelemetry(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	const v = "gateway.nginx.org/v1alpha2"
	dR2 := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r2"}
	pols := []string{
		pol(v, "ObservabilityPolicy", "on-r1", 0, `targetRefs: [`+r1Ref+`]
tracing: {strategy: ratio, ratio: 10}`),
		pol(v, "ObservabilityPolicy", "on-r2", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}]
tracing: {strategy: parent}`),
	}
	const endpoint = `{telemetry: {exporter: {endpoint: "otel.monitoring:4317"}}}`

	t.Run("chart default", func(t *testing.T) {
		// g1 runs with the class's NginxProxy (no exporter); g2 with its
		// own, setting one, over it.
		res := compute(t, engine.Options{}, append([]string{c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), ngfOwnProxy(ngfTopo, endpoint)}, pols...)...)
		want(t, "on-r1", status(t, res, "on-r1", "Accepted"), "False/NginxProxyConfigNotSet")
		msg := ancestorMessage(t, res, "on-r1")
		for _, part := range []string{"spec.tracing: requires spec.telemetry.exporter.endpoint of NginxProxy ngf/proxy, which Gateway default/g1 runs with", "not applied"} {
			if !strings.Contains(msg, part) {
				t.Errorf("on-r1's message %q does not say %q", msg, part)
			}
		}
		want(t, "effective r1", effective(t, res, "ObservabilityPolicy", dR1), []string(nil))
		want(t, "on-r2", status(t, res, "on-r2", "Accepted"), "True/Accepted")
		want(t, "effective r2", effective(t, res, "ObservabilityPolicy", dR2), []string{`{"tracing":{"strategy":"parent"}}`})
	})

	t.Run("route of two Gateways", func(t *testing.T) {
		// r3 is on g1 (the class's NginxProxy: no exporter) and g2 (its
		// own, with one): NGF applies the policy through g2 only; the
		// route's ancestor says it is not accepted for g1. Being valid,
		// the policy still conflicts with a newer one setting tracing,
		// also on r1, where no Gateway accepts it.
		r3, r3Ref, dR3 := ngfR3, ngfR3Ref, ngfDR3
		docs := []string{c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), ngfOwnProxy(ngfTopo, endpoint), r3,
			pol(v, "ObservabilityPolicy", "on-r3", 0, `targetRefs: [`+r3Ref+`]
tracing: {strategy: parent}`),
			pol(v, "ObservabilityPolicy", "on-r3-newer", 1, `targetRefs: [`+r3Ref+`]
tracing: {strategy: ratio, ratio: 5}`),
			pol(v, "ObservabilityPolicy", "on-r1", 2, `targetRefs: [`+r1Ref+`]
tracing: {strategy: ratio, ratio: 10}`),
			pol(v, "ObservabilityPolicy", "on-r1-newer", 3, `targetRefs: [`+r1Ref+`]
tracing: {strategy: parent}`)}
		res := compute(t, engine.Options{}, docs...)
		want(t, "on-r3", status(t, res, "on-r3", "Accepted"), "False/NginxProxyConfigNotSet")
		if msg := ancestorMessage(t, res, "on-r3"); !strings.HasSuffix(msg, "; not applied through Gateway default/g1, applied through its other Gateways") ||
			!strings.Contains(msg, "which Gateway default/g1 runs with") {
			t.Errorf("on-r3's message %q", msg)
		}
		want(t, "effective r3", effective(t, res, "ObservabilityPolicy", dR3), []string{`{"tracing":{"strategy":"parent"}}`})
		g1 := []topology.Ref{{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}}
		if st := policyStatusOf(t, res, "on-r3"); !slices.Equal(st.NotAppliedVia[dR3], g1) {
			t.Errorf("on-r3 NotAppliedVia %v", st.NotAppliedVia)
		}
		// The route's one context (a Direct kind) says so of its entry.
		for _, e := range res.Effective {
			if e.Target != dR3 {
				continue
			}
			for _, ctx := range e.Contexts {
				for _, s := range ctx.Stack {
					if s.Policy.Name == "on-r3" && !slices.Equal(s.NotAppliedVia, g1) {
						t.Errorf("on-r3's stack entry at r3: NotAppliedVia %v, want g1", s.NotAppliedVia)
					}
				}
			}
		}
		want(t, "on-r3-newer", status(t, res, "on-r3-newer", "Accepted"), "False/Conflicted")
		want(t, "on-r1", status(t, res, "on-r1", "Accepted"), "False/NginxProxyConfigNotSet")
		if msg := ancestorMessage(t, res, "on-r1"); !strings.HasSuffix(msg, "; not applied") {
			t.Errorf("on-r1's message %q", msg)
		}
		want(t, "effective r1", effective(t, res, "ObservabilityPolicy", dR1), []string(nil))
		want(t, "on-r1-newer", status(t, res, "on-r1-newer", "Accepted"), "False/Conflicted")

		// An Incremental agrees, also once g1's NginxProxy (the class's)
		// gets an exporter: the policy is then accepted.
		in := engine.NewIncremental(engine.Options{})
		in.Compute(decodeDocs(t, docs...))
		moved := slices.Clone(docs)
		moved[1] = ngfClass(endpoint)
		got := in.Compute(decodeDocs(t, moved...))
		if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, moved...), engine.Options{})); a != b {
			t.Fatal(firstDiff(a, b))
		}
		want(t, "on-r3 with telemetry everywhere", status(t, got, "on-r3", "Accepted"), "True/Accepted")

		// And when r3 is first on g2 alone, then also on g1.
		in = engine.NewIncremental(engine.Options{})
		alone := slices.Clone(docs)
		alone[3] = strings.Replace(r3, "parentRefs: [{name: g1}, {name: g2}]", "parentRefs: [{name: g2}]", 1)
		want(t, "on-r3 on g2 alone", status(t, in.Compute(decodeDocs(t, alone...)), "on-r3", "Accepted"), "True/Accepted")
		got = in.Compute(decodeDocs(t, docs...))
		if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, docs...), engine.Options{})); a != b {
			t.Fatal(firstDiff(a, b))
		}
		want(t, "on-r3 once also on g1", status(t, got, "on-r3", "Accepted"), "False/NginxProxyConfigNotSet")
	})

	t.Run("no NginxProxy", func(t *testing.T) {
		class := strings.Replace(ngfClass(`{}`), "  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}\n", "", 1)
		res := compute(t, engine.Options{}, append([]string{c, class, ngfTopo}, pols...)...)
		want(t, "on-r1", status(t, res, "on-r1", "Accepted"), "True/Accepted")
		want(t, "on-r2", status(t, res, "on-r2", "Accepted"), "True/Accepted")
	})

	t.Run("tracing disabled", func(t *testing.T) {
		// The class's enables the exporter and disables tracing; g2's own
		// empties disabledFeatures, which NGF keeps in the merge.
		res := compute(t, engine.Options{}, append([]string{c,
			ngfClass(`{telemetry: {exporter: {endpoint: "otel:4317"}, disabledFeatures: [DisableTracing]}}`),
			ngfOwnProxy(ngfTopo, `{telemetry: {disabledFeatures: []}}`)}, pols...)...)
		want(t, "on-r1", status(t, res, "on-r1", "Accepted"), "False/NginxProxyConfigNotSet")
		if msg := ancestorMessage(t, res, "on-r1"); !strings.Contains(msg, "does not work with spec.telemetry.disabledFeatures[] of NginxProxy ngf/proxy") {
			t.Errorf("on-r1's message %q", msg)
		}
		want(t, "on-r2", status(t, res, "on-r2", "Accepted"), "True/Accepted")
	})
}

// ObservabilityPolicy targets routes only; of two policies on one route
// that both set tracing (the only field NGF's Conflicts compares), the
// newer is Conflicted and the older's tracing applies.
// Source: NGF e55bfe339 apis/v1alpha2/observabilitypolicy_types.go
// (targetRefs: HTTPRoute, GRPCRoute), internal/controller/nginx/config/
// policies/observability/validator.go (Conflicts),
// internal/controller/state/graph/policies.go (markConflictedPolicies).
func TestDocsNGFObservabilityPolicyTracingConflicts(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	const v = "gateway.nginx.org/v1alpha2"
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(v, "ObservabilityPolicy", "older", 0, `targetRefs: [`+r1Ref+`]
tracing: {strategy: ratio, ratio: 10}`),
		pol(v, "ObservabilityPolicy", "newer", 1, `targetRefs: [`+r1Ref+`]
tracing: {strategy: parent}`),
		pol(v, "ObservabilityPolicy", "on-gateway", 2, `targetRefs: [`+gwRef+`]
tracing: {strategy: parent}`))
	want(t, "older", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "newer", status(t, res, "newer", "Accepted"), "False/Conflicted")
	want(t, "on-gateway", status(t, res, "on-gateway", "Accepted"), "False/Invalid")
	want(t, "effective r1", effective(t, res, "ObservabilityPolicy", dR1), []string{`{"tracing":{"ratio":10,"strategy":"ratio"}}`})
}

// A policy Conflicted at one of its targets is invalid as a whole: it
// applies at none of them, is Conflicted on every ancestor, and, being
// invalid, no longer conflicts with others. The policies are checked in
// the established order (NGF sorts each target's policies by creation
// time, then name, and skips those already invalid).
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (markConflictedPolicies: "conflicted.Valid = false", "Ignore policy
// that has already been marked as invalid").
func TestDocsNGFConflictRejectsPolicyEverywhere(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	const v = "gateway.nginx.org/v1alpha2"
	r2Ref := `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}`
	grRef := `{group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}`
	dR2 := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r2"}
	dGR1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	res := compute(t, engine.Options{}, c, ngfTopo,
		// a on r1; b on r1 and r2 conflicts with a on r1; c on r2 would
		// conflict with b, which is out; d on r2 and gr1 sets another
		// field than c and merges with it on r2.
		pol(v, "ObservabilityPolicy", "a", 0, `targetRefs: [`+r1Ref+`]
tracing: {strategy: ratio, ratio: 10}`),
		pol(v, "ObservabilityPolicy", "b", 1, `targetRefs: [`+r1Ref+`, `+r2Ref+`]
tracing: {strategy: parent}`),
		pol(v, "ObservabilityPolicy", "c", 2, `targetRefs: [`+r2Ref+`]
tracing: {strategy: ratio, ratio: 50}`),
		pol(v, "ObservabilityPolicy", "d", 3, `targetRefs: [`+r2Ref+`, `+grRef+`]
metrics: {useServiceNames: true}`))
	want(t, "b", status(t, res, "b", "Accepted"), "False/Conflicted")
	want(t, "b ancestors", ancestorsOf(t, res, "b"), []string{
		"HTTPRoute.gateway.networking.k8s.io default/r1=Conflicted",
		"HTTPRoute.gateway.networking.k8s.io default/r2=Conflicted",
	})
	msg := condition(t, res, "b", "Accepted").Message
	if !strings.Contains(msg, "ObservabilityPolicy default/a") || !strings.Contains(msg, "rejected at all of them") {
		t.Errorf("b's message: %s", msg)
	}
	want(t, "r1", effective(t, res, "ObservabilityPolicy", dR1), []string{`{"tracing":{"ratio":10,"strategy":"ratio"}}`})
	want(t, "r2: b is out, c stands", effective(t, res, "ObservabilityPolicy", dR2), []string{`{"metrics":{"useServiceNames":true},"tracing":{"ratio":50,"strategy":"ratio"}}`})
	want(t, "gr1", effective(t, res, "ObservabilityPolicy", dGR1), []string{`{"metrics":{"useServiceNames":true}}`})
	for _, name := range []string{"a", "c", "d"} {
		want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
		want(t, name+" Programmed", status(t, res, name, "Programmed"), "True/Programmed")
	}

	// An Incremental agrees after each policy is removed and put back.
	docs := []string{c, ngfTopo,
		pol(v, "ObservabilityPolicy", "a", 0, `targetRefs: [`+r1Ref+`]
tracing: {strategy: ratio, ratio: 10}`),
		pol(v, "ObservabilityPolicy", "b", 1, `targetRefs: [`+r1Ref+`, `+r2Ref+`]
tracing: {strategy: parent}`),
		pol(v, "ObservabilityPolicy", "c", 2, `targetRefs: [`+r2Ref+`]
tracing: {strategy: ratio, ratio: 50}`)}
	objs := decodeDocs(t, docs...)
	in := engine.NewIncremental(engine.Options{})
	in.Compute(objs)
	for i := len(objs) - 3; i < len(objs); i++ {
		for _, step := range [][]engine.Object{slices.Delete(slices.Clone(objs), i, i+1), objs} {
			got := in.Compute(step)
			if g, w := dump(t, got), dump(t, engine.Compute(step, engine.Options{})); g != w {
				t.Fatalf("without %s then back: %s", objs[i].Object.GetName(), firstDiff(g, w))
			}
		}
	}
	// Without a, b stands on both routes and c is Conflicted by it.
	res = engine.Compute(slices.Delete(slices.Clone(objs), len(objs)-3, len(objs)-2), engine.Options{})
	want(t, "without a: b", status(t, res, "b", "Accepted"), "True/Accepted")
	want(t, "without a: c", status(t, res, "c", "Accepted"), "False/Conflicted")
}

// A policy on a route is rejected whole (TargetConflict) when another
// route it does not target shares namespace/gateway:hostname:port/path
// with it: both would be one NGINX location. Routes are keyed by the
// hostnames their listeners accept (the listener's, or "*", for a route
// without hostnames), the listener's port and each match's path (a rule
// without matches: "/"; a GRPCRoute match "/{service}/{method}").
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (checkTargetRoutesForOverlap, checkForRouteOverlap,
// buildGatewayHostPortPaths), route_common.go (findAcceptedHostnames,
// GetMoreSpecificHostname), grpcroute.go (ConvertGRPCMatches).
func TestDocsNGFRouteOverlapTargetConflict(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	grRef := `{group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}`
	onR1 := pol(ngfV1, "ClientSettingsPolicy", "on-r1", 0, `targetRef: `+r1Ref+`
body: {maxSize: 10m}`)
	// docsTopo: gr1 has no hostname and no matches, so it takes
	// default/g1:*:80/ as r1 does.
	res := compute(t, engine.Options{}, c, docsTopo, onR1)
	want(t, "on r1 alone", status(t, res, "on-r1", "Accepted"), "False/TargetConflict")
	msg := condition(t, res, "on-r1", "Accepted").Message
	if !strings.Contains(msg, "GRPCRoute default/gr1") || !strings.Contains(msg, "default/g1:*:80/") || strings.Count(msg, "Policy cannot") != 1 {
		t.Errorf("message: %s", msg)
	}
	want(t, "r1 gets nothing", effective(t, res, "ClientSettingsPolicy", dR1), []string(nil))

	// A policy on the Gateway is not about routes: accepted.
	res = compute(t, engine.Options{}, c, docsTopo, pol(ngfV1, "ClientSettingsPolicy", "on-gw", 0, `targetRef: `+gwRef+`
body: {maxSize: 10m}`))
	want(t, "on the Gateway", status(t, res, "on-gw", "Accepted"), "True/Accepted")

	// gr1 with a hostname of its own: the keys differ (NGF compares
	// hostnames as written).
	res = compute(t, engine.Options{}, c, ngfTopo, onR1)
	want(t, "gr1 with a hostname", status(t, res, "on-r1", "Accepted"), "True/Accepted")

	// gr1 with a method match: /svc/Get, not /.
	withMethod := strings.Replace(docsTopo, "rules: [{name: only, backendRefs: [{name: s2, port: 80}]}]\n---\napiVersion: v1",
		"rules: [{name: only, matches: [{method: {service: svc, method: Get}}], backendRefs: [{name: s2, port: 80}]}]\n---\napiVersion: v1", 1)
	if withMethod == docsTopo {
		t.Fatal("the topology changed: gr1's rule not found")
	}
	res = compute(t, engine.Options{}, c, withMethod, onR1)
	want(t, "gr1 with a method match", status(t, res, "on-r1", "Accepted"), "True/Accepted")

	// A policy targeting both overlapping routes is accepted. The Service
	// s1 is not a route: it does not count.
	ogV := "gateway.nginx.org/v1alpha2"
	oc := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	res = compute(t, engine.Options{}, oc, docsTopo, pol(ogV, "ObservabilityPolicy", "both", 0, `targetRefs: [`+r1Ref+`, `+grRef+`]
tracing: {strategy: parent}`))
	want(t, "both routes", status(t, res, "both", "Accepted"), "True/Accepted")
	res = compute(t, engine.Options{}, oc, docsTopo, pol(ogV, "ObservabilityPolicy", "gr-only", 0, `targetRefs: [`+grRef+`]
tracing: {strategy: parent}`))
	want(t, "gr1 alone", status(t, res, "gr-only", "Accepted"), "False/TargetConflict")

	// A listener hostname: a route without hostnames takes it, and so does
	// a route with a matching wildcard... and the more specific of them is
	// the key (so a route on "*.example.com" and one on "a.example.com" on
	// a listener "a.example.com" share a.example.com).
	hosted := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: h, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: web, protocol: HTTP, port: 8080, hostname: a.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: h}]
  hostnames: ["*.example.com"]
  rules: [{matches: [{path: {type: PathPrefix, value: /api}}], backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: default}
spec:
  parentRefs: [{name: h}]
  rules: [{matches: [{path: {type: Exact, value: /api}}], backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other-path, namespace: default}
spec:
  parentRefs: [{name: h}]
  rules: [{matches: [{path: {type: PathPrefix, value: /web}}], backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	res = compute(t, engine.Options{}, c, hosted, pol(ngfV1, "ClientSettingsPolicy", "on-wild", 0, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: wild}
body: {maxSize: 10m}`), pol(ngfV1, "ClientSettingsPolicy", "on-other", 1, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: other-path}
body: {maxSize: 10m}`))
	want(t, "wild shares a.example.com:8080/api with plain", status(t, res, "on-wild", "Accepted"), "False/TargetConflict")
	if msg := condition(t, res, "on-wild", "Accepted").Message; !strings.Contains(msg, "default/h:a.example.com:8080/api") || !strings.Contains(msg, "HTTPRoute default/plain") {
		t.Errorf("message: %s", msg)
	}
	want(t, "other path", status(t, res, "on-other", "Accepted"), "True/Accepted")

	// Routes on a ListenerSet's listener are keyed by its Gateway; a
	// targetSelectors entry (not NGF's, but the setting is attache's) adds
	// no ancestor of its own.
	ls := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: gw}
  listeners: [{name: a, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ra, namespace: default, labels: {app: a}}
spec:
  parentRefs: [{kind: ListenerSet, name: ls, sectionName: a}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: default}
spec:
  parentRefs: [{kind: ListenerSet, name: ls, sectionName: a}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	res = compute(t, engine.Options{}, c, ls, pol(ngfV1, "ClientSettingsPolicy", "on-ra", 0, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: ra}
body: {maxSize: 10m}`))
	want(t, "ListenerSet listener", status(t, res, "on-ra", "Accepted"), "False/TargetConflict")
	if msg := condition(t, res, "on-ra", "Accepted").Message; !strings.Contains(msg, "default/gw:*:8080/") {
		t.Errorf("message: %s", msg)
	}
	sel := labelledCRD("policies.example.com", "OvPolicy", "ovpolicies", "Direct")
	sel = strings.Replace(sel, "labels: {gateway.networking.k8s.io/policy: Direct}}", "labels: {gateway.networking.k8s.io/policy: Direct}, annotations: {attache.dev/route-overlap: reject}}", 1)
	res = compute(t, engine.Options{}, sel, ls, pol("policies.example.com/v1", "OvPolicy", "mixed", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ra}]
targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {app: a}}]
x: 1`))
	want(t, "mixed", status(t, res, "mixed", "Accepted"), "False/TargetConflict")
	want(t, "mixed ancestors", ancestorsOf(t, res, "mixed"), []string{"HTTPRoute.gateway.networking.k8s.io default/ra=TargetConflict"})
}

// Two policies at one target conflict only on the fields NGF's validator
// for the kind compares: two ObservabilityPolicies both setting metrics
// merge (only tracing conflicts), while two ClientSettingsPolicies setting
// keepAlive.timeout.server and keepAlive.timeout.header conflict (NGF
// compares keepAlive.timeout as a whole).
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// observability/validator.go and clientsettings/validator.go (Conflicts).
func TestDocsNGFConflictFields(t *testing.T) {
	const v = "gateway.nginx.org/v1alpha2"
	oc := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	res := compute(t, engine.Options{}, oc, ngfTopo,
		pol(v, "ObservabilityPolicy", "older", 0, `targetRefs: [`+r1Ref+`]
metrics: {useServiceNames: true}
tracing: {strategy: ratio}`),
		pol(v, "ObservabilityPolicy", "newer", 1, `targetRefs: [`+r1Ref+`]
metrics: {useServiceNames: false, server: x}`))
	want(t, "newer, metrics only", status(t, res, "newer", "Accepted"), "True/Accepted")
	want(t, "older", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "kind", kindOf(t, res, "ObservabilityPolicy").ConflictFields, []string{"tracing"})

	cc := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	res = compute(t, engine.Options{}, cc, ngfTopo,
		pol(ngfV1, "ClientSettingsPolicy", "server", 0, `targetRef: `+r1Ref+`
keepAlive: {timeout: {server: 10s}}`),
		pol(ngfV1, "ClientSettingsPolicy", "header", 1, `targetRef: `+r1Ref+`
keepAlive: {timeout: {header: 5s}}`))
	want(t, "server", status(t, res, "server", "Accepted"), "True/Accepted")
	want(t, "header", status(t, res, "header", "Accepted"), "False/Conflicted")
	want(t, "r1", effective(t, res, "ClientSettingsPolicy", dR1), []string{`{"keepAlive":{"timeout":{"server":"10s"}}}`})
}

// UpstreamSettingsPolicy targets Services written with group "" or "core";
// policies on one Service that set disjoint fields merge; of two setting
// zoneSize the newer is Conflicted; the ancestors are the Gateways whose
// routes use the Service.
// Source: NGF e55bfe339 apis/v1alpha1/upstreamsettingspolicy_types.go;
// internal/controller/nginx/config/policies/upstreamsettings/validator.go
// (Conflicts) and processor.go (merge); internal/controller/state/graph/
// policies.go (attachPolicyToService: one ancestor per Gateway, named
// without sectionName); docs.nginx.com nginx-gateway-fabric
// traffic-management/upstream-settings.
func TestDocsNGFUpstreamSettingsPolicy(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct")
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(ngfV1, "UpstreamSettingsPolicy", "zone", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
zoneSize: 512k`),
		pol(ngfV1, "UpstreamSettingsPolicy", "keepalive", 1, `targetRefs: [{group: core, kind: Service, name: s1}]
keepAlive: {connections: 32}`),
		pol(ngfV1, "UpstreamSettingsPolicy", "zone-newer", 2, `targetRefs: [{group: "", kind: Service, name: s1}]
zoneSize: 1m`),
		pol(ngfV1, "UpstreamSettingsPolicy", "on-route", 3, `targetRefs: [`+r1Ref+`]
zoneSize: 1m`))
	want(t, "zone", status(t, res, "zone", "Accepted"), "True/Accepted")
	want(t, "keepalive (group core)", status(t, res, "keepalive", "Accepted"), "True/Accepted")
	want(t, "zone-newer", status(t, res, "zone-newer", "Accepted"), "False/Conflicted")
	want(t, "on-route", status(t, res, "on-route", "Accepted"), "False/Invalid")
	want(t, "effective s1", effective(t, res, "UpstreamSettingsPolicy", dS1), []string{`{"keepAlive":{"connections":32},"zoneSize":"512k"}`})
	want(t, "zone Programmed", status(t, res, "zone", "Programmed"), "True/Programmed")
	want(t, "ancestors of zone", ancestorsOf(t, res, "zone"), []string{
		"Gateway.gateway.networking.k8s.io default/g1=Accepted",
		"Gateway.gateway.networking.k8s.io default/g2=Accepted",
	})
}

// A value NGF's validator refuses in code makes the policy Invalid and
// not applied, and, being invalid, it conflicts with nothing: here a
// hashMethodKey starting with '_' (the CRD's pattern lets it through,
// NGF's variable-name check does not) and a ClientSettingsPolicy size in
// upper case.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// upstreamsettings/validator.go (validateLoadBalancingMethod:
// ValidateNginxVariableName), clientsettings/validator.go
// (validateClientBody: ValidateNginxSize), internal/controller/nginx/
// config/validation/generic.go; apis/v1alpha1/upstreamsettingspolicy_types.go
// (HashMethodKey pattern); graph/policies.go (Valid: len(conds) == 0).
func TestDocsNGFFormatsRefused(t *testing.T) {
	usp := labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct")
	csp := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	res := compute(t, engine.Options{}, usp, csp, ngfTopo,
		pol(ngfV1, "UpstreamSettingsPolicy", "bad-key", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
loadBalancingMethod: hash
hashMethodKey: $_client`),
		pol(ngfV1, "UpstreamSettingsPolicy", "good-key", 1, `targetRefs: [{group: "", kind: Service, name: s1}]
loadBalancingMethod: hash consistent
hashMethodKey: $remote_addr`),
		pol(ngfV1, "ClientSettingsPolicy", "upper", 0, "targetRef: "+r1Ref+"\nbody: {maxSize: 10M}"))
	want(t, "bad-key", status(t, res, "bad-key", "Accepted"), "False/Invalid")
	if msg := condition(t, res, "bad-key", "Accepted").Message; !strings.Contains(msg, "spec.hashMethodKey: must be an NGINX variable") || !strings.HasSuffix(msg, "not applied") {
		t.Errorf("bad-key's message %q", msg)
	}
	want(t, "good-key", status(t, res, "good-key", "Accepted"), "True/Accepted")
	want(t, "effective s1", effective(t, res, "UpstreamSettingsPolicy", dS1), []string{`{"hashMethodKey":"$remote_addr","loadBalancingMethod":"hash consistent"}`})
	want(t, "upper", status(t, res, "upper", "Accepted"), "False/Invalid")
	want(t, "effective r1", effective(t, res, "ClientSettingsPolicy", dR1), []string(nil))
}

// Without NGINX Plus (NGF's default, and attache's unless the feature
// NGF.nginx.plus is on), an UpstreamSettingsPolicy asking for a
// load-balancing method only NGINX Plus has is Invalid, at each Gateway
// using the Service, and not applied; being invalid, it does not conflict
// with a newer policy setting the same field, which applies. With the
// feature on, it is the older and wins.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// upstreamsettings/validator.go (validateLoadBalancingMethod: "NGINX OSS
// supports the following load balancing methods: ..."),
// internal/controller/nginx/config/http/config.go (OSSAllowedLBMethods,
// PlusAllowedLBMethods), internal/controller/manager.go (NewValidator
// with cfg.Plus), cmd/gateway/commands.go (--nginx-plus, false).
func TestDocsNGFUpstreamSettingsPlusMethods(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct")
	docs := []string{c, ngfTopo,
		pol(ngfV1, "UpstreamSettingsPolicy", "plus", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
loadBalancingMethod: "random two least_time=header"`),
		pol(ngfV1, "UpstreamSettingsPolicy", "oss", 1, `targetRefs: [{group: "", kind: Service, name: s1}]
loadBalancingMethod: "least_time header"`)}
	res := compute(t, engine.Options{}, docs...)
	want(t, "plus on OSS", status(t, res, "plus", "Accepted"), "False/Invalid")
	want(t, "plus ancestors", ancestorsOf(t, res, "plus"), []string{
		"Gateway.gateway.networking.k8s.io default/g1=Invalid",
		"Gateway.gateway.networking.k8s.io default/g2=Invalid",
	})
	msg := condition(t, res, "plus", "Accepted").Message
	if !strings.Contains(msg, "spec.loadBalancingMethod: NGINX OSS supports the following load balancing methods: hash, ") ||
		!strings.Contains(msg, "--feature NGF.nginx.plus=true") {
		t.Errorf("plus's message: %s", msg)
	}
	want(t, "oss", status(t, res, "oss", "Accepted"), "True/Accepted")
	want(t, "effective s1", effective(t, res, "UpstreamSettingsPolicy", dS1), []string{`{"loadBalancingMethod":"least_time header"}`})

	res = compute(t, engine.Options{Features: policy.Features{profiles.NGFPlus: {On: true, From: "--feature"}}}, docs...)
	want(t, "plus on Plus", status(t, res, "plus", "Accepted"), "True/Accepted")
	want(t, "oss on Plus", status(t, res, "oss", "Accepted"), "False/Conflicted")
	want(t, "effective s1 on Plus", effective(t, res, "UpstreamSettingsPolicy", dS1), []string{`{"loadBalancingMethod":"random two least_time=header"}`})
}

// NGF applies its policies only at the ancestors their status can list
// (16): an UpstreamSettingsPolicy on a Service that the routes of 17
// Gateways use is listed, and applied, at the first 16 of them; the
// condition names the 17th. Every NGF kind but ExternalLoadBalancer has
// the setting.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (attachPolicyToService: ngfPolicyAncestorsFull, the Gateway then
// InvalidForGateways) and policy_ancestor.go (maxAncestors).
func TestDocsNGFAncestorLimit(t *testing.T) {
	docs := []string{labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct"),
		"apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: default}\nspec: {ports: [{port: 80}]}"}
	var parents []string
	for i := range 17 {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g%02d, namespace: default}\nspec: {gatewayClassName: c, listeners: [{name: http, protocol: HTTP, port: 80}]}", i))
		parents = append(parents, fmt.Sprintf("{name: g%02d}", i))
	}
	docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r1, namespace: default}\nspec: {parentRefs: [%s], rules: [{backendRefs: [{name: s1, port: 80}]}]}", strings.Join(parents, ", ")),
		pol(ngfV1, "UpstreamSettingsPolicy", "zone", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
zoneSize: 512k`))
	res := compute(t, engine.Options{}, docs...)
	want(t, "zone", status(t, res, "zone", "Accepted"), "True/Accepted")
	want(t, "ancestors", len(ancestorsOf(t, res, "zone")), 16)
	c := condition(t, res, "zone", engine.ConditionAncestorLimit)
	want(t, "limit", c.Status+"/"+c.Reason, "True/AncestorLimitReached")
	if !strings.HasPrefix(c.Message, "Not applied at Gateway default/g16: ") {
		t.Errorf("message %q", c.Message)
	}
	for _, kind := range []string{"ClientSettingsPolicy", "ProxySettingsPolicy", "RateLimitPolicy", "ObservabilityPolicy", "UpstreamSettingsPolicy", "SnippetsPolicy", "PayloadProcessor"} {
		res := compute(t, engine.Options{}, crd("gateway.nginx.org", kind, strings.ToLower(kind)+"s"))
		want(t, kind, kindOf(t, res, kind).AncestorLimit, policy.AncestorLimitSkip)
	}
	res = compute(t, engine.Options{}, crd("gateway.nginx.org", "ExternalLoadBalancer", "externalloadbalancers"))
	want(t, "ExternalLoadBalancer", kindOf(t, res, "ExternalLoadBalancer").AncestorLimit, policy.AncestorLimitReport)
}

// ProxySettingsPolicy is inherited: a route's settings take precedence over
// the Gateway's, setting by setting; at one target the newer of two
// policies setting the same field is Conflicted.
// Source: docs.nginx.com nginx-gateway-fabric traffic-management/
// proxy-settings ("Settings applied to an HTTPRoute or GRPCRoute take
// precedence over settings applied to a Gateway"); NGF e55bfe339
// internal/controller/nginx/config/policies/proxysettings/validator.go.
func TestDocsNGFProxySettingsRouteTakesPrecedence(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ProxySettingsPolicy", "proxysettingspolicies", "inherited")
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(ngfV1, "ProxySettingsPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
buffering: {bufferSize: 4k}
timeout: {read: 60s}`),
		pol(ngfV1, "ProxySettingsPolicy", "gw-newer", 1, `targetRefs: [`+gwRef+`]
buffering: {bufferSize: 8k}`),
		pol(ngfV1, "ProxySettingsPolicy", "route", 2, `targetRefs: [`+r1Ref+`]
timeout: {read: 10s}`))
	want(t, "gw-newer", status(t, res, "gw-newer", "Accepted"), "False/Conflicted")
	want(t, "effective r1", effective(t, res, "ProxySettingsPolicy", dR1), []string{`{"buffering":{"bufferSize":"4k"},"timeout":{"read":"10s"}}`})
	gr1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	want(t, "effective gr1", effective(t, res, "ProxySettingsPolicy", gr1), []string{`{"buffering":{"bufferSize":"4k"},"timeout":{"read":"60s"}}`})
	// NGF reports a policy it accepts as programmed, however much of it
	// a route's policy overrides (programmed: when-accepted); the message
	// still says what it loses.
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/Programmed")
	if msg := condition(t, res, "gw", "Programmed").Message; !strings.Contains(msg, "What it contributes: Policy is programmed in full in 1, in part in 1 of 2 contexts") ||
		!strings.Contains(msg, "beaten by ProxySettingsPolicy default/route") {
		t.Errorf("gw's Programmed message %q", msg)
	}
	want(t, "gw-newer Programmed", status(t, res, "gw-newer", "Programmed"), "False/Overridden")
}

// A ProxySettingsPolicy whose busyBuffersSize is not larger than its
// bufferSize, or not less than all its buffers but one, is Invalid and
// applies nowhere; being invalid, it does not conflict with an older
// valid policy setting the same field, which applies.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// proxysettings/validator.go (validateBusyBufferSizeRelationships: "must
// be larger than bufferSize", "must be less than the size of all
// proxy_buffers minus one buffer"); internal/controller/state/graph/
// policies.go (Valid: len(conds) == 0; markConflictedPolicies skips
// invalid policies).
func TestDocsNGFProxySettingsBusyBuffers(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ProxySettingsPolicy", "proxysettingspolicies", "inherited")
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(ngfV1, "ProxySettingsPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
buffering: {bufferSize: 4k, busyBuffersSize: 8k}`),
		pol(ngfV1, "ProxySettingsPolicy", "small", 1, `targetRefs: [`+r1Ref+`]
buffering: {bufferSize: 1m, busyBuffersSize: 1024k}`),
		pol(ngfV1, "ProxySettingsPolicy", "big", 2, `targetRefs: [`+gwRef+`]
buffering: {buffers: {number: 4, size: 8k}, busyBuffersSize: 24k}`))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "small", status(t, res, "small", "Accepted"), "False/Invalid")
	if msg := condition(t, res, "small", "Accepted").Message; !strings.Contains(msg, "spec.buffering.busyBuffersSize: must be larger than bufferSize") {
		t.Errorf("small's message: %s", msg)
	}
	want(t, "big, not Conflicted", status(t, res, "big", "Accepted"), "False/Invalid")
	if msg := condition(t, res, "big", "Accepted").Message; !strings.Contains(msg, "must be less than the size of all proxy_buffers minus one buffer") {
		t.Errorf("big's message: %s", msg)
	}
	want(t, "effective r1", effective(t, res, "ProxySettingsPolicy", dR1), []string{`{"buffering":{"bufferSize":"4k","busyBuffersSize":"8k"}}`})
}

// NGF's RateLimitPolicy rules: several policies on one target each add
// their rules, but a route with rules of its own does not get the
// Gateway's. NGF writes a Gateway's rules as limit_req directives at its
// server and a route's at its location, and NGINX lets a location inherit
// limit_req only when it has none of its own (NGF's docs say the two
// apply together; NGINX does not do that:
// hack/nginx-limit-req-inheritance.sh). A route policy setting no rules
// keeps the Gateway's.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// ratelimit/generator.go (tmplServer for Gateway policies, tmplLocation
// for route policies), validator.go (only dryRun, logLevel and rejectCode
// conflict, see TestDocsNGFRateLimitConflicts); nginx.org
// ngx_http_limit_req_module ("inherited from the previous configuration
// level if and only if there are no limit_req directives defined on the
// current level").
func TestDocsNGFRateLimitRules(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	grRef := `{group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}`
	dGR1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	docs := []string{c, ngfTopo,
		pol(ngfV1, "RateLimitPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
rateLimit: {local: {rules: [{key: $binary_remote_addr, rate: 10r/s, zoneSize: 10m}]}}`),
		pol(ngfV1, "RateLimitPolicy", "gw-2", 1, `targetRefs: [`+gwRef+`]
rateLimit: {local: {rules: [{key: $http_x_user, rate: 5r/s, zoneSize: 10m}]}}`),
		pol(ngfV1, "RateLimitPolicy", "route", 2, `targetRefs: [`+r1Ref+`]
rateLimit: {local: {rules: [{key: $binary_remote_addr, rate: 100r/s, zoneSize: 10m}]}}`),
		pol(ngfV1, "RateLimitPolicy", "route-2", 3, `targetRefs: [`+r1Ref+`]
rateLimit: {local: {rules: [{key: $http_x_user, rate: 50r/s}]}}`),
		pol(ngfV1, "RateLimitPolicy", "grpc-code", 4, `targetRefs: [`+grRef+`]
rateLimit: {rejectCode: 466, local: {rules: []}}`)}
	res := compute(t, engine.Options{}, docs...)
	for _, n := range []string{"gw", "gw-2", "route", "route-2", "grpc-code"} {
		want(t, n+" Accepted", status(t, res, n, "Accepted"), "True/Accepted")
	}
	// r1: its two policies' rules side by side, none of the Gateway's
	// (a route policy loosens the Gateway's limit there).
	want(t, "effective r1", effective(t, res, "RateLimitPolicy", dR1), []string{`{` +
		`"default/route":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"100r/s","zoneSize":"10m"}]}}},` +
		`"default/route-2":{"rateLimit":{"local":{"rules":[{"key":"$http_x_user","rate":"50r/s"}]}}}}`})
	// gr1: its policy writes no limit_req, so both Gateway policies' rules
	// apply, with its reject code.
	want(t, "effective gr1", effective(t, res, "RateLimitPolicy", dGR1), []string{`{` +
		`"default/grpc-code":{"rateLimit":{"rejectCode":466}},` +
		`"default/gw":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"10r/s","zoneSize":"10m"}]}}},` +
		`"default/gw-2":{"rateLimit":{"local":{"rules":[{"key":"$http_x_user","rate":"5r/s","zoneSize":"10m"}]}}}}`})
	want(t, "losses", lossList(res, "RateLimitPolicy"), []string{
		`gr1: grpc-code ["default/grpc-code"].rateLimit.local.rules to gw,gw-2 (partial)`,
		`r1: gw ["default/gw"].rateLimit.local.rules to route,route-2 (none)`,
		`r1: gw-2 ["default/gw-2"].rateLimit.local.rules to route,route-2 (none)`,
	})
	// Incremental: the route policies deleted, r1 gets the Gateway's
	// rules back, as Compute gives them.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	docs = append(docs[:4], docs[6])
	got, full := in.Compute(decodeDocs(t, docs...)), engine.Compute(decodeDocs(t, docs...), engine.Options{})
	want(t, "incremental r1", effective(t, got, "RateLimitPolicy", dR1), []string{`{` +
		`"default/gw":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"10r/s","zoneSize":"10m"}]}}},` +
		`"default/gw-2":{"rateLimit":{"local":{"rules":[{"key":"$http_x_user","rate":"5r/s","zoneSize":"10m"}]}}}}`})
	want(t, "incremental = compute", effective(t, got, "RateLimitPolicy", dR1), effective(t, full, "RateLimitPolicy", dR1))

	// NGF's documented reading, by clearing the profile's setting on the
	// CRD: r1 gets the Gateway's rules with its own.
	documented := strings.Replace(c, "labels: {", `annotations: {attache.dev/level-inherited-fields: ""}, labels: {`, 1)
	res = compute(t, engine.Options{}, documented, ngfTopo, docs[2], docs[3],
		pol(ngfV1, "RateLimitPolicy", "route", 2, `targetRefs: [`+r1Ref+`]
rateLimit: {local: {rules: [{rate: 100r/s}]}}`))
	want(t, "documented r1", effective(t, res, "RateLimitPolicy", dR1), []string{`{` +
		`"default/gw":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"10r/s","zoneSize":"10m"}]}}},` +
		`"default/gw-2":{"rateLimit":{"local":{"rules":[{"key":"$http_x_user","rate":"5r/s","zoneSize":"10m"}]}}},` +
		`"default/route":{"rateLimit":{"local":{"rules":[{"rate":"100r/s"}]}}}}`})
}

// dryRun, logLevel and rejectCode of a RateLimitPolicy are single NGINX
// directives: the Gateway's policies write them at its server, a route's
// at its location, which inherits each of the server's unless it writes
// its own; and NGF writes none for false or zero. So a route takes its own rejectCode (NGF's functional
// test: Gateway 429, route 466, the route answers 466), keeps the
// Gateway's where it sets none, and its dryRun: false does not undo the
// Gateway's dryRun: true.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// ratelimit/generator.go (rateLimitReqTemplate: "if .DryRun", "if
// .LogLevel", "if .RejectCode"; tmplServer for Gateway policies,
// tmplLocation for route policies); tests/suite/rate_limit_policy_test.go
// and manifests/rate-limit-policy/{gateway,route}-rate-limit*.yaml.
func TestDocsNGFRateLimitInheritedFields(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	grRef := `{group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}`
	dGR1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	docs := []string{c, ngfTopo,
		pol(ngfV1, "RateLimitPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
rateLimit: {dryRun: true, logLevel: info, rejectCode: 429, local: {rules: [{rate: 15r/m}]}}`),
		pol(ngfV1, "RateLimitPolicy", "route", 1, `targetRefs: [`+r1Ref+`]
rateLimit: {logLevel: warn, rejectCode: 466, local: {rules: [{rate: 1r/m}]}}`),
		pol(ngfV1, "RateLimitPolicy", "grpc", 2, `targetRefs: [`+grRef+`]
rateLimit: {dryRun: false, local: {rules: [{rate: 5r/s}]}}`)}
	res := compute(t, engine.Options{}, docs...)
	for _, n := range []string{"gw", "route", "grpc"} {
		want(t, n+" Accepted", status(t, res, n, "Accepted"), "True/Accepted")
	}
	// Each route has rules of its own, so the Gateway's rules apply at
	// neither (TestDocsNGFRateLimitRules); its other fields one by one.
	want(t, "effective r1", effective(t, res, "RateLimitPolicy", dR1), []string{`{` +
		`"default/gw":{"rateLimit":{"dryRun":true}},` +
		`"default/route":{"rateLimit":{"local":{"rules":[{"rate":"1r/m"}]},"logLevel":"warn","rejectCode":466}}}`})
	want(t, "effective gr1", effective(t, res, "RateLimitPolicy", dGR1), []string{`{` +
		`"default/grpc":{"rateLimit":{"local":{"rules":[{"rate":"5r/s"}]}}},` +
		`"default/gw":{"rateLimit":{"dryRun":true,"logLevel":"info","rejectCode":429}}}`})
	// Who lost what, to whom.
	want(t, "losses", lossList(res, "RateLimitPolicy"), []string{
		`gr1: grpc ["default/grpc"].rateLimit.dryRun to gw (partial)`,
		`gr1: gw ["default/gw"].rateLimit.local.rules to grpc (partial)`,
		`r1: gw ["default/gw"].rateLimit.local.rules to route (partial)`,
		`r1: gw ["default/gw"].rateLimit.logLevel to route (partial)`,
		`r1: gw ["default/gw"].rateLimit.rejectCode to route (partial)`,
	})
	// Incremental: the same, then the route policy's rejectCode removed
	// gives r1 the Gateway's back.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	docs[3] = pol(ngfV1, "RateLimitPolicy", "route", 1, `targetRefs: [`+r1Ref+`]
rateLimit: {logLevel: warn, local: {rules: [{rate: 1r/m}]}}`)
	got := in.Compute(decodeDocs(t, docs...))
	want(t, "incremental r1", effective(t, got, "RateLimitPolicy", dR1), []string{`{` +
		`"default/gw":{"rateLimit":{"dryRun":true,"rejectCode":429}},` +
		`"default/route":{"rateLimit":{"local":{"rules":[{"rate":"1r/m"}]},"logLevel":"warn"}}}`})
	full := engine.Compute(decodeDocs(t, docs...), engine.Options{})
	want(t, "incremental = compute", effective(t, got, "RateLimitPolicy", dR1), effective(t, full, "RateLimitPolicy", dR1))
	want(t, "incremental Programmed = compute", condition(t, got, "gw", "Programmed"), condition(t, full, "gw", "Programmed"))
}

// Two RateLimitPolicies on one target conflict when both set dryRun, both
// logLevel or both rejectCode: the newer is Conflicted, at all its targets
// (a policy Conflicted at one applies at none), and its rules apply
// nowhere. Policies setting them at different targets, or setting
// different ones, all apply.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/
// ratelimit/validator.go (conflicts); internal/controller/state/graph/
// policies.go (markConflictedPolicies: conflicted.Valid = false).
func TestDocsNGFRateLimitConflicts(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	rule := func(rate string) string {
		return `local: {rules: [{key: $binary_remote_addr, rate: ` + rate + `, zoneSize: 10m}]}`
	}
	grRef := `{group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}`
	dGR1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(ngfV1, "RateLimitPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
rateLimit: {dryRun: true, `+rule("10r/s")+`}`),
		// Another field than gw's: no conflict.
		pol(ngfV1, "RateLimitPolicy", "gw-log", 1, `targetRefs: [`+gwRef+`]
rateLimit: {logLevel: warn, `+rule("9r/s")+`}`),
		// At a route: not the same target as gw.
		pol(ngfV1, "RateLimitPolicy", "r1-a", 2, `targetRefs: [`+r1Ref+`]
rateLimit: {dryRun: false, rejectCode: 503, `+rule("5r/s")+`}`),
		// rejectCode again at r1: Conflicted there, so at gr1 too.
		pol(ngfV1, "RateLimitPolicy", "r1-r2-b", 3, `targetRefs: [`+r1Ref+`, `+grRef+`]
rateLimit: {rejectCode: 429, `+rule("1r/s")+`}`))
	for n, w := range map[string]string{"gw": "True/Accepted", "gw-log": "True/Accepted", "r1-a": "True/Accepted", "r1-r2-b": "False/Conflicted"} {
		want(t, n+" Accepted", status(t, res, n, "Accepted"), w)
	}
	want(t, "r1-r2-b ancestors", ancestorsOf(t, res, "r1-r2-b"), []string{
		"GRPCRoute.gateway.networking.k8s.io default/gr1=Conflicted",
		"HTTPRoute.gateway.networking.k8s.io default/r1=Conflicted",
	})
	// r1-a's dryRun: false writes no directive, so r1 keeps gw's dry run
	// (TestDocsNGFRateLimitInheritedFields); its rules replace the
	// Gateway's there (TestDocsNGFRateLimitRules).
	want(t, "effective r1", effective(t, res, "RateLimitPolicy", dR1), []string{`{` +
		`"default/gw":{"rateLimit":{"dryRun":true}},` +
		`"default/gw-log":{"rateLimit":{"logLevel":"warn"}},` +
		`"default/r1-a":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"5r/s","zoneSize":"10m"}]},"rejectCode":503}}}`})
	want(t, "effective gr1", effective(t, res, "RateLimitPolicy", dGR1), []string{`{` +
		`"default/gw":{"rateLimit":{"dryRun":true,"local":{"rules":[{"key":"$binary_remote_addr","rate":"10r/s","zoneSize":"10m"}]}}},` +
		`"default/gw-log":{"rateLimit":{"local":{"rules":[{"key":"$binary_remote_addr","rate":"9r/s","zoneSize":"10m"}]},"logLevel":"warn"}}}`})
	if c := condition(t, res, "r1-r2-b", "Accepted"); !strings.Contains(c.Message, "r1-a") {
		t.Errorf("r1-r2-b: message %q does not name r1-a", c.Message)
	}

	// Incremental: r1-a deleted, r1-r2-b applies at both routes.
	objs := decodeDocs(t, c, ngfTopo, pol(ngfV1, "RateLimitPolicy", "r1-r2-b", 3, `targetRefs: [`+r1Ref+`, `+grRef+`]
rateLimit: {rejectCode: 429, `+rule("1r/s")+`}`))
	in := engine.NewIncremental(engine.Options{})
	in.Compute(append(objs, decodeDocs(t, pol(ngfV1, "RateLimitPolicy", "r1-a", 2, `targetRefs: [`+r1Ref+`]
rateLimit: {rejectCode: 503}`))...))
	got := in.Compute(objs)
	want(t, "after delete", status(t, got, "r1-r2-b", "Accepted"), "True/Accepted")
	want(t, "after delete gr1", effective(t, got, "RateLimitPolicy", dGR1), effective(t, engine.Compute(objs, engine.Options{}), "RateLimitPolicy", dGR1))
	if e := effective(t, got, "RateLimitPolicy", dGR1); len(e) != 1 || !strings.Contains(e[0], "429") {
		t.Errorf("after delete: effective gr1 = %v, want r1-r2-b's rules", e)
	}
}

// SnippetsPolicy: every policy on a Gateway applies (NGF's Conflicts is
// always false); only Gateways are targets.
// Source: NGF e55bfe339 apis/v1alpha1/snippetspolicy_types.go;
// internal/controller/nginx/config/policies/snippetspolicy/validator.go.
func TestDocsNGFSnippetsPolicyIsAdditive(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "SnippetsPolicy", "snippetspolicies", "direct")
	res := compute(t, ngfFlagsOn, c, ngfTopo,
		pol(ngfV1, "SnippetsPolicy", "a", 0, `targetRefs: [`+gwRef+`]
snippets: [{context: http, value: "a on;"}]`),
		pol(ngfV1, "SnippetsPolicy", "b", 1, `targetRefs: [`+gwRef+`]
snippets: [{context: http, value: "b on;"}]`),
		pol(ngfV1, "SnippetsPolicy", "on-route", 2, `targetRefs: [`+r1Ref+`]
snippets: [{context: http, value: "c on;"}]`))
	want(t, "a", status(t, res, "a", "Programmed"), "True/Programmed")
	want(t, "b", status(t, res, "b", "Programmed"), "True/Programmed")
	want(t, "on-route", status(t, res, "on-route", "Accepted"), "False/Invalid")
	want(t, "effective g1", effective(t, res, "SnippetsPolicy", dG1), []string{
		`{"default/a":{"snippets":[{"context":"http","value":"a on;"}]},"default/b":{"snippets":[{"context":"http","value":"b on;"}]}}`})
}

// ---------------------------------------------------------------- Kuadrant

// AuthPolicy: a Gateway policy with `overrides` and `strategy: merge` keeps
// its named rules over the route's same-named ones (whole, nothing of the
// route's rule survives) and lets the route's other rules through; with
// atomic overrides the Gateway's policy replaces the route's entirely.
// Source: KO ae698811 api/v1/merge_strategies.go (merge overrides: the less
// specific policy's rules, plus the more specific rules whose names are
// missing; atomic overrides: the less specific wins), api/v1/
// authpolicy_types.go (rules.authentication, rules.authorization maps);
// doc/overviews/auth.md (a Gateway's overrides cannot be weakened by
// route-level policies).
func TestDocsKuadrantAuthPolicyGatewayOverrides(t *testing.T) {
	c := labelledCRD("kuadrant.io", "AuthPolicy", "authpolicies", "inherited")
	const v = "kuadrant.io/v1"
	route := pol(v, "AuthPolicy", "route", 1, `targetRef: `+r1Ref+`
rules:
  authentication:
    api-key: {apiKey: {selector: {matchLabels: {app: a}}}}
  authorization:
    admins: {patternMatching: {patterns: [{predicate: "auth.identity.group == 'team'"}]}}
    team: {patternMatching: {patterns: [{predicate: "true"}]}}`)
	res := compute(t, engine.Options{}, c, docsTopo, route,
		pol(v, "AuthPolicy", "gw", 0, `targetRef: `+gwRef+`
overrides:
  strategy: merge
  rules:
    authorization:
      admins: {opa: {rego: "allow = true"}}`))
	want(t, "rule first", effective(t, res, "AuthPolicy", rule("r1", "first")), []string{`{"rules":{` +
		`"authentication":{"api-key":{"apiKey":{"selector":{"matchLabels":{"app":"a"}}}}},` +
		`"authorization":{"admins":{"opa":{"rego":"allow = true"}},"team":{"patternMatching":{"patterns":[{"predicate":"true"}]}}}}}`})
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/Programmed")
	want(t, "route Programmed", status(t, res, "route", "Programmed"), "True/PartiallyProgrammed")
	want(t, "route Accepted", status(t, res, "route", "Accepted"), "True/Accepted")

	atomic := compute(t, engine.Options{}, c, docsTopo, route,
		pol(v, "AuthPolicy", "gw", 0, `targetRef: `+gwRef+`
overrides:
  rules:
    authorization:
      admins: {opa: {rego: "allow = true"}}`))
	want(t, "atomic: rule first", effective(t, atomic, "AuthPolicy", rule("r1", "first")),
		[]string{`{"rules":{"authorization":{"admins":{"opa":{"rego":"allow = true"}}}}}`})
	// Kuadrant: Enforced=False, reason Overridden.
	want(t, "atomic: route Programmed", status(t, atomic, "route", "Programmed"), "False/Overridden")
}

// AuthPolicy's single-entry rules: with `strategy: merge`,
// rules.response.unauthenticated and rules.response.unauthorized are one
// rule each, taken whole from the more specific policy (nothing of the
// Gateway's survives inside it); the success headers and filters still
// merge entry by entry, and a rule only one side has is kept. The top-level
// `when` is one rule too.
// Source: KO ae698811 api/v1/authpolicy_types.go Rules()/SetRules()
// ("response.unauthenticated#", "response.unauthorized#",
// "response.success.headers#<name>", "response.success.metadata#<name>"
// for the json field filters, "conditions#" for when).
func TestDocsKuadrantAuthPolicyResponseRulesWhole(t *testing.T) {
	c := labelledCRD("kuadrant.io", "AuthPolicy", "authpolicies", "inherited")
	const v = "kuadrant.io/v1"
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(v, "AuthPolicy", "gw", 0, `targetRef: `+gwRef+`
defaults:
  strategy: merge
  when: [{predicate: "request.host == 'a'"}, {predicate: "true"}]
  rules:
    authentication:
      key: {apiKey: {selector: {matchLabels: {app: a}}}}
    response:
      unauthenticated: {code: 401, body: {value: go away}}
      unauthorized: {code: 403}
      success:
        headers: {h1: {plain: {value: "1"}}, h2: {plain: {value: "2"}}}
        filters: {f1: {plain: {value: "1"}}}`),
		pol(v, "AuthPolicy", "route", 1, `targetRef: `+r1Ref+`
when: [{predicate: "request.method == 'GET'"}]
rules:
  authorization:
    allow: {opa: {rego: "allow = true"}}
  response:
    unauthenticated: {headers: {x-reason: {value: nope}}}
    success:
      headers: {h1: {plain: {value: "r"}}}`))
	want(t, "rule first", effective(t, res, "AuthPolicy", rule("r1", "first")), []string{`{` +
		`"rules":{"authentication":{"key":{"apiKey":{"selector":{"matchLabels":{"app":"a"}}}}},` +
		`"authorization":{"allow":{"opa":{"rego":"allow = true"}}},` +
		`"response":{"success":{"filters":{"f1":{"plain":{"value":"1"}}},"headers":{"h1":{"plain":{"value":"r"}},"h2":{"plain":{"value":"2"}}}},` +
		`"unauthenticated":{"headers":{"x-reason":{"value":"nope"}}},"unauthorized":{"code":403}}},` +
		`"when":[{"predicate":"request.method == 'GET'"}]}`})
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
	msg := condition(t, res, "gw", "Programmed").Message
	for _, lost := range []string{"rules.response.unauthenticated.code", "rules.response.unauthenticated.body.value", "when"} {
		if !strings.Contains(msg, lost) {
			t.Errorf("gw Programmed message %q does not name %s as lost", msg, lost)
		}
	}
	want(t, "route Programmed", status(t, res, "route", "Programmed"), "True/Programmed")
}

// RateLimitPolicy, AuthPolicy, TokenRateLimitPolicy in the path to no route:
// on a Gateway no route attaches to, on a route naming no parent, on a
// route whose Gateway is missing. Kuadrant accepts them (their targets
// exist) but computes effective policies only along GatewayClass-to-rule
// paths, and reports Enforced=False, reason Unknown, "<Kind> is not in the
// path to any existing routes"; attache says Programmed=False, reason
// Unknown, and gives the routes without a Gateway no context. DNSPolicy acts
// on listeners, and is programmed on a Gateway without routes.
// Source: KO ae698811 internal/controller/
// effective_ratelimit_policies_reconciler.go (calculateEffectivePolicies:
// Paths(gatewayClass, routeRule)), ratelimit_policy_status_updater.go,
// auth_policy_status_updater.go, tokenratelimitpolicy_status_updater.go
// (enforcedCondition: kuadrant.NewErrNoRoutes), internal/kuadrant/errors.go.
func TestDocsKuadrantNoRoutes(t *testing.T) {
	const extra = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g3, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orphan, namespace: default}
spec:
  rules: [{name: only, backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost, namespace: default}
spec:
  parentRefs: [{name: missing}]
  rules: [{name: only, backendRefs: [{name: s1, port: 80}]}]`
	ref := func(kind, name string) string {
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: %s, name: %s}", kind, name)
	}
	const limits = "limits: {l: {rates: [{limit: 1, window: 1m}]}}"
	res := compute(t, engine.Options{}, docsTopo, extra,
		labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited"),
		labelledCRD("kuadrant.io", "AuthPolicy", "authpolicies", "inherited"),
		labelledCRD("kuadrant.io", "TokenRateLimitPolicy", "tokenratelimitpolicies", "inherited"),
		labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"),
		pol("kuadrant.io/v1", "RateLimitPolicy", "rl-g1", 0, "targetRef: "+gwRef+"\n"+limits),
		pol("kuadrant.io/v1", "RateLimitPolicy", "rl-g3", 0, "targetRef: "+ref("Gateway", "g3")+"\n"+limits),
		pol("kuadrant.io/v1", "AuthPolicy", "auth-orphan", 0, "targetRef: "+ref("HTTPRoute", "orphan")+"\nrules: {authorization: {a: {opa: {rego: allow}}}}"),
		pol("kuadrant.io/v1alpha1", "TokenRateLimitPolicy", "tokens-lost", 0, "targetRef: "+ref("HTTPRoute", "lost")+"\n"+limits),
		pol("kuadrant.io/v1", "DNSPolicy", "dns-g3", 0, "targetRef: "+ref("Gateway", "g3")+"\nloadBalancing: {weight: 1}"))
	for name, w := range map[string]string{"rl-g1": "True/Programmed", "rl-g3": "False/Unknown", "auth-orphan": "False/Unknown",
		"tokens-lost": "False/Unknown", "dns-g3": "True/Programmed"} {
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
		want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
	}
	for _, route := range []string{"orphan", "lost"} {
		want(t, route+" contexts", effective(t, res, "AuthPolicy", rule(route, "only")), []string(nil))
		want(t, route+" contexts", effective(t, res, "TokenRateLimitPolicy", rule(route, "only")), []string(nil))
	}
}

// TokenRateLimitPolicy: `defaults` with `strategy: merge` on the Gateway add
// the limits the route does not name; a same-named route limit replaces
// the Gateway's whole. GRPCRoutes are no targets of this kind.
// Source: KO ae698811 api/v1alpha1/tokenratelimitpolicy_types.go (CEL:
// Gateway and HTTPRoute targets; limits map), api/v1/merge_strategies.go
// (merge defaults); internal/controller/
// effective_tokenratelimit_policies_reconciler.go.
func TestDocsKuadrantTokenRateLimitMergeDefaults(t *testing.T) {
	c := labelledCRD("kuadrant.io", "TokenRateLimitPolicy", "tokenratelimitpolicies", "inherited")
	const v = "kuadrant.io/v1alpha1"
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(v, "TokenRateLimitPolicy", "gw", 0, `targetRef: `+gwRef+`
defaults:
  strategy: merge
  limits:
    free: {rates: [{limit: 100, window: 1h}], when: [{predicate: "auth.identity.tier == 'free'"}]}
    paid: {rates: [{limit: 1000, window: 1h}]}`),
		pol(v, "TokenRateLimitPolicy", "route", 1, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}
limits:
  free: {rates: [{limit: 10, window: 1h}]}`),
		pol(v, "TokenRateLimitPolicy", "grpc", 2, `targetRef: {group: gateway.networking.k8s.io, kind: GRPCRoute, name: gr1}
limits:
  free: {rates: [{limit: 1, window: 1h}]}`))
	want(t, "rule second", effective(t, res, "TokenRateLimitPolicy", rule("r1", "second")),
		[]string{`{"limits":{"free":{"rates":[{"limit":10,"window":"1h"}]},"paid":{"rates":[{"limit":1000,"window":"1h"}]}}}`})
	want(t, "rule first", effective(t, res, "TokenRateLimitPolicy", rule("r1", "first")),
		[]string{`{"limits":{"free":{"rates":[{"limit":100,"window":"1h"}],"when":[{"predicate":"auth.identity.tier == 'free'"}]},"paid":{"rates":[{"limit":1000,"window":"1h"}]}}}`})
	want(t, "route", status(t, res, "route", "Accepted"), "True/Accepted")
	want(t, "grpc", status(t, res, "grpc", "Accepted"), "False/Invalid")
	// A rule overridden on some path: Kuadrant's TokenRateLimitPolicy is
	// Enforced=False, reason Unknown ("policy rule(s) overridden: ...";
	// KO ae698811 tokenratelimitpolicy_status_updater.go enforcedCondition),
	// where a RateLimitPolicy stays Enforced, "partially enforced".
	want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "False/Unknown")
	if msg := condition(t, res, "gw", "Programmed").Message; !strings.Contains(msg, "not programmed, as it is overridden in part") ||
		!strings.Contains(msg, "limits.free.rates, limits.free.when beaten by TokenRateLimitPolicy default/route") {
		t.Errorf("gw Programmed message %q does not say why, nor who beat which rule", msg)
	}
	if !engine.NotProgrammedInPart(condition(t, res, "gw", "Programmed")) {
		t.Error("NotProgrammedInPart does not read gw's Programmed=False/Unknown as overridden in part")
	}
	want(t, "route Programmed", status(t, res, "route", "Programmed"), "True/Programmed")
	rlp := compute(t, engine.Options{}, labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited"), docsTopo,
		pol("kuadrant.io/v1", "RateLimitPolicy", "gw", 0, `targetRef: `+gwRef+`
defaults:
  strategy: merge
  limits: {free: {rates: [{limit: 100, window: 1h}]}, paid: {rates: [{limit: 1000, window: 1h}]}}`),
		pol("kuadrant.io/v1", "RateLimitPolicy", "route", 1, `targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}
limits: {free: {rates: [{limit: 10, window: 1h}]}}`))
	want(t, "RateLimitPolicy gw Programmed", status(t, rlp, "gw", "Programmed"), "True/PartiallyProgrammed")
	// Overridden in every context: Overridden, as the other kinds.
	all := compute(t, engine.Options{}, c, docsTopo,
		pol(v, "TokenRateLimitPolicy", "gw", 0, `targetRef: `+gwRef+`
limits: {free: {rates: [{limit: 100, window: 1h}]}}`),
		pol(v, "TokenRateLimitPolicy", "route", 1, `targetRef: `+r1Ref+`
limits: {free: {rates: [{limit: 10, window: 1h}]}}`))
	want(t, "all overridden: gw Programmed", status(t, all, "gw", "Programmed"), "False/Overridden")
}

// tlsListenersTopo is docsTopo with g1's listeners (http, admin) serving
// HTTPS for a hostname each, terminating TLS with Secrets of their own
// namespace: listeners Kuadrant's DNSPolicy and TLSPolicy act on.
var tlsListenersTopo = strings.Replace(docsTopo,
	"listeners: [{name: http, protocol: HTTP, port: 80}, {name: admin, protocol: HTTP, port: 8080}]",
	"listeners: [{name: http, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: a-cert}]}}, "+
		"{name: admin, protocol: HTTPS, port: 8443, hostname: admin.example.com, tls: {mode: Terminate, certificateRefs: [{group: \"\", kind: Secret, name: admin-cert}]}}]", 1) +
	issuers("issuer-1", "issuer-2", "issuer-3")

// issuers are cert-manager Issuers of namespace default, for Kuadrant's
// TLSPolicies to name (kind: Issuer): without one, a TLSPolicy is Invalid.
func issuers(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "\n---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: %s, namespace: default}\nspec: {selfSigned: {}}\n", n)
	}
	return b.String()
}

// Listener-level Direct kinds: a policy on a whole Gateway covers its
// listeners; a policy on a listener beats it there and both stay Accepted;
// of two policies on the same target the older wins and the newer is
// Conflicted.
//
// Sources:
//   - Kuadrant DNSPolicy, TLSPolicy: KO ae698811 internal/controller/
//     effective_dnspolicies_reconciler.go (listenersForPolicy: a Gateway
//     policy covers listeners without their own), effective_tls_policies_
//     reconciler.go (getTLSPoliciesForListener), dnspolicies_validator.go
//     and tlspolicies_validator.go (isConflict: a strictly older policy on
//     the identical targetRef makes the newer Conflicted).
//   - Gloo ListenerOption, HttpListenerOption: solo-io/gloo 8d57572e55
//     projects/gateway2/translator/plugins/listeneroptions and
//     httplisteneroptions (the first option in priority order, section
//     targets before whole-Gateway targets, older first, is used whole;
//     Gloo writes no Conflicted status: the status half is attache's).
//
// kuadrantDefaultProvider is the default DNS provider Secret of namespace
// default, which a DNSPolicy naming no providerRefs uses (without one it
// is not programmed: TestKuadrantDNSPolicyDefaultProvider).
const kuadrantDefaultProvider = `
apiVersion: v1
kind: Secret
metadata: {name: dns-provider, namespace: default, labels: {kuadrant.io/default-provider: "true"}}
type: kuadrant.io/aws
data: {AWS_ACCESS_KEY_ID: eA==}
`

func TestDocsListenerKindsSectionBeatsGatewayOldestWins(t *testing.T) {
	for _, tc := range []struct {
		group, kind, plural, label, version, body string
	}{
		{"kuadrant.io", "DNSPolicy", "dnspolicies", "direct", "kuadrant.io/v1", `loadBalancing: {weight: %d}`},
		{"kuadrant.io", "TLSPolicy", "tlspolicies", "direct", "kuadrant.io/v1", `issuerRef: {kind: Issuer, name: issuer-%d}`},
		{"gateway.solo.io", "ListenerOption", "listeneroptions", "", "gateway.solo.io/v1", `options: {perConnectionBufferLimitBytes: %d}`},
		{"gateway.solo.io", "HttpListenerOption", "httplisteneroptions", "", "gateway.solo.io/v1", `options: {httpConnectionManagerSettings: {maxConnectionDuration: %ds}}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			c := crd(tc.group, tc.kind, tc.plural)
			if tc.label != "" {
				c = labelledCRD(tc.group, tc.kind, tc.plural, tc.label)
			}
			target := gwRef
			listener := `{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}`
			if strings.HasPrefix(tc.version, "kuadrant.io") {
				target, listener = "targetRef: "+target, "targetRef: "+listener
			} else {
				target, listener = "targetRefs: ["+target+"]", "targetRefs: ["+listener+"]"
			}
			res := compute(t, engine.Options{}, c, tlsListenersTopo, kuadrantDefaultProvider,
				pol(tc.version, tc.kind, "gw", 0, target+"\n"+fmt.Sprintf(tc.body, 1)),
				pol(tc.version, tc.kind, "gw-newer", 1, target+"\n"+fmt.Sprintf(tc.body, 2)),
				pol(tc.version, tc.kind, "listener", 2, listener+"\n"+fmt.Sprintf(tc.body, 3)))
			spec := func(n int) []string {
				doc := compute(t, engine.Options{DisableProfiles: true}, labelledCRD("x.example", "X", "xs", "Direct"), docsTopo,
					pol("x.example/v1", "X", "x", 0, "targetRefs: ["+gwRef+"]\n"+fmt.Sprintf(tc.body, n)))
				return effective(t, doc, "X", dG1)
			}
			want(t, "listener http", effective(t, res, tc.kind, dListener("http")), spec(3))
			want(t, "listener admin", effective(t, res, tc.kind, dListener("admin")), spec(1))
			want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
			want(t, "gw Programmed", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
			want(t, "listener", status(t, res, "listener", "Accepted"), "True/Accepted")
			want(t, "gw-newer", status(t, res, "gw-newer", "Accepted"), "False/Conflicted")
		})
	}
}

// Kuadrant rejects a DNSPolicy or TLSPolicy only when another on the same
// target is strictly older: two created in the same second both stand.
// The first by name shows in the effective policy, the other is overridden
// by it, its Programmed message saying which one holds is not determined;
// a strictly newer one is Conflicted. Other oldest-wins kinds still reject
// the later by name.
// Source: KO ae698811 internal/controller/dnspolicies_validator.go and
// tlspolicies_validator.go (isConflict: CreationTimestamp.Before).
func TestDocsKuadrantSameSecondNotRejected(t *testing.T) {
	for _, tc := range []struct{ kind, plural, body, version, tie string }{
		{"DNSPolicy", "dnspolicies", `loadBalancing: {weight: %d}`, "kuadrant.io/v1", "True/Accepted"},
		{"TLSPolicy", "tlspolicies", `issuerRef: {kind: Issuer, name: issuer-%d}`, "kuadrant.io/v1", "True/Accepted"},
		{"ListenerOption", "listeneroptions", `options: {perConnectionBufferLimitBytes: %d}`, glooV, "False/Conflicted"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			group := strings.Split(tc.version, "/")[0]
			target := "targetRef: " + gwRef
			if group == "gateway.solo.io" {
				target = "targetRefs: [" + gwRef + "]"
			}
			res := compute(t, engine.Options{}, crd(group, tc.kind, tc.plural), tlsListenersTopo, kuadrantDefaultProvider,
				pol(tc.version, tc.kind, "b-later", 0, target+"\n"+fmt.Sprintf(tc.body, 2)),
				pol(tc.version, tc.kind, "a-first", 0, target+"\n"+fmt.Sprintf(tc.body, 1)),
				pol(tc.version, tc.kind, "c-newer", 1, target+"\n"+fmt.Sprintf(tc.body, 3)))
			want(t, "a-first", status(t, res, "a-first", "Programmed"), "True/Programmed")
			want(t, "b-later", status(t, res, "b-later", "Accepted"), tc.tie)
			want(t, "c-newer", status(t, res, "c-newer", "Accepted"), "False/Conflicted")
			eff := effective(t, res, tc.kind, dListener("http"))
			if len(eff) != 1 || !strings.Contains(eff[0], "1") || strings.Contains(eff[0], "2") {
				t.Errorf("effective = %v, want a-first's", eff)
			}
			if tc.tie != "True/Accepted" {
				return
			}
			c := condition(t, res, "b-later", "Programmed")
			if c.Reason != "Overridden" || !strings.Contains(c.Message, "created in the same second as "+tc.kind+" default/a-first on the same target, which the effective policy shows: its implementation applies either, which one holds is not determined") {
				t.Errorf("b-later Programmed %s %q", c.Reason, c.Message)
			}
		})
	}
}

// Policies without a creationTimestamp (read from files) are no tie: the
// later by name is Conflicted. A CRD changing the same-level rule drops
// the profile's tie setting instead of making the kind unusable.
func TestDocsKuadrantTiesEdges(t *testing.T) {
	c := crd("kuadrant.io", "DNSPolicy", "dnspolicies")
	undated := func(name string, w int) string {
		return fmt.Sprintf("apiVersion: kuadrant.io/v1\nkind: DNSPolicy\nmetadata: {name: %s, namespace: default}\nspec:\n  targetRef: %s\n  loadBalancing: {weight: %d}\n", name, gwRef, w)
	}
	res := compute(t, engine.Options{}, c, tlsListenersTopo, undated("a", 1), undated("b", 2))
	want(t, "b undated", status(t, res, "b", "Accepted"), "False/Conflicted")
	disjoint := strings.Replace(c, "metadata: {name: dnspolicies.kuadrant.io}", `metadata: {name: dnspolicies.kuadrant.io, annotations: {attache.dev/same-level: merge-disjoint}}`, 1)
	res = compute(t, engine.Options{}, disjoint, tlsListenersTopo,
		pol("kuadrant.io/v1", "DNSPolicy", "a", 0, "targetRef: "+gwRef+"\nloadBalancing: {weight: 1}"))
	want(t, "a under merge-disjoint", status(t, res, "a", "Accepted"), "True/Accepted")
}

// ---------------------------------------------------------------- Gloo

const glooV = "gateway.solo.io/v1"

// RouteOption: RouteOptions on one route are shallow-merged oldest first:
// disjoint options combine; where two set the same option the older keeps
// it whole (nothing merges inside an option), and the newer still gives
// its other options; none is rejected (same-level rule oldest-first).
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// routeoptions/query/query.go (GetRouteOptionForRouteRule),
// projects/gloo/pkg/utils/merge.go (ShallowMergeRouteOptions).
func TestDocsGlooRouteOptionsMergeOldestFirst(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "RouteOption", "timeout", 0, `targetRefs: [`+r1Ref+`]
options: {timeout: 10s}`),
		pol(glooV, "RouteOption", "retries", 1, `targetRefs: [`+r1Ref+`]
options: {retries: {retryOn: 5xx, numRetries: 3}}`),
		pol(glooV, "RouteOption", "timeout-newer", 2, `targetRefs: [`+r1Ref+`]
options: {timeout: 3s, prefixRewrite: /v2}`),
		pol(glooV, "RouteOption", "retries-newer", 3, `targetRefs: [`+r1Ref+`]
options: {retries: {perTryTimeout: 1s}}`))
	for _, r := range []string{"first", "second"} {
		want(t, "effective r1 rule "+r, effective(t, res, "RouteOption", rule("r1", r)),
			[]string{`{"options":{"prefixRewrite":"/v2","retries":{"numRetries":3,"retryOn":"5xx"},"timeout":"10s"}}`})
	}
	want(t, "timeout", status(t, res, "timeout", "Programmed"), "True/Programmed")
	want(t, "retries", status(t, res, "retries", "Programmed"), "True/Programmed")
	want(t, "timeout-newer accepted", status(t, res, "timeout-newer", "Accepted"), "True/Accepted")
	want(t, "timeout-newer", status(t, res, "timeout-newer", "Programmed"), "True/PartiallyProgrammed")
	want(t, "retries-newer accepted", status(t, res, "retries-newer", "Accepted"), "True/Accepted")
	want(t, "retries-newer", status(t, res, "retries-newer", "Programmed"), "False/Overridden")
}

// A RouteOption named by a rule's ExtensionRef filter comes first at that
// rule: its options win there, the route's RouteOptions (oldest first)
// fill the options it leaves unset; other rules only get the route's.
// Of two filters on one rule, the first wins. A RouteOption used only by
// a filter names no targets and is valid.
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// routeoptions/query/query.go (GetRouteOptionForRouteRule: filter
// attachments merged first, then the targetRef ones by creation time;
// lookupFilterAttachments).
func TestDocsGlooRouteOptionExtensionRefFilter(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	topo := strings.Replace(docsTopo, `  - name: first
    backendRefs: [{name: s1, port: 80}]`, `  - name: first
    filters:
    - {type: ExtensionRef, extensionRef: {group: gateway.solo.io, kind: RouteOption, name: filter-a}}
    - {type: ExtensionRef, extensionRef: {group: gateway.solo.io, kind: RouteOption, name: filter-b}}
    backendRefs: [{name: s1, port: 80}]`, 1)
	if topo == docsTopo {
		t.Fatal("the topology changed: r1's rule first not found")
	}
	res := compute(t, engine.Options{}, c, topo,
		pol(glooV, "RouteOption", "route", 0, `targetRefs: [`+r1Ref+`]
options: {timeout: 10s, retries: {numRetries: 3}}`),
		pol(glooV, "RouteOption", "filter-b", 1, `options: {timeout: 2s, prefixRewrite: /b}`),
		pol(glooV, "RouteOption", "filter-a", 2, `options: {timeout: 1s}`))
	want(t, "rule first", effective(t, res, "RouteOption", rule("r1", "first")),
		[]string{`{"options":{"prefixRewrite":"/b","retries":{"numRetries":3},"timeout":"1s"}}`})
	want(t, "rule second", effective(t, res, "RouteOption", rule("r1", "second")),
		[]string{`{"options":{"retries":{"numRetries":3},"timeout":"10s"}}`})
	want(t, "filter-a", status(t, res, "filter-a", "Programmed"), "True/Programmed")
	want(t, "filter-b", status(t, res, "filter-b", "Programmed"), "True/PartiallyProgrammed")
	want(t, "route", status(t, res, "route", "Programmed"), "True/PartiallyProgrammed")
}

// VirtualHostOption at one listener: older first, option by option.
// Source: as below (GetPrioritizedListenerPolicies sorts by creation time
// within a priority; ApplyListenerPlugin shallow-merges in that order).
func TestDocsGlooVirtualHostOptionsOneListenerOldestFirst(t *testing.T) {
	c := crd("gateway.solo.io", "VirtualHostOption", "virtualhostoptions")
	listener := `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}]`
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "VirtualHostOption", "older", 0, listener+`
options:
  cors: {allowOrigin: [a.example]}`),
		pol(glooV, "VirtualHostOption", "newer", 1, listener+`
options:
  cors: {allowOrigin: [b.example], maxAge: 1d}
  headerManipulation: {requestHeadersToRemove: [x-debug]}`))
	want(t, "listener http", effective(t, res, "VirtualHostOption", dListener("http")),
		[]string{`{"options":{"cors":{"allowOrigin":["a.example"]},"headerManipulation":{"requestHeadersToRemove":["x-debug"]}}}`})
	want(t, "older", status(t, res, "older", "Programmed"), "True/Programmed")
	want(t, "newer", status(t, res, "newer", "Programmed"), "True/PartiallyProgrammed")
	want(t, "newer accepted", status(t, res, "newer", "Accepted"), "True/Accepted")
}

// VirtualHostOption: the options of a listener-targeted VirtualHostOption
// come first, the Gateway-wide one fills the options it leaves unset
// (shallow merge: each top-level option is taken whole from the first
// VirtualHostOption that sets it).
// Source: solo-io/gloo 8d57572e55 projects/gateway2/translator/plugins/
// virtualhostoptions/virtualhost_options_plugin.go (ApplyListenerPlugin
// merges every attached option in priority order),
// virtualhostoptions/query/query.go (section targets first),
// projects/gloo/pkg/utils/merge.go (ShallowMergeVirtualHostOptions).
func TestDocsGlooVirtualHostOptionShallowMergeWithGateway(t *testing.T) {
	c := crd("gateway.solo.io", "VirtualHostOption", "virtualhostoptions")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "VirtualHostOption", "gw", 0, `targetRefs: [`+gwRef+`]
options:
  cors: {allowOrigin: [a.example], maxAge: 1d}
  headerManipulation: {requestHeadersToRemove: [x-debug]}`),
		pol(glooV, "VirtualHostOption", "listener", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}]
options:
  cors: {allowOrigin: [b.example]}`))
	want(t, "listener http", effective(t, res, "VirtualHostOption", dListener("http")),
		[]string{`{"options":{"cors":{"allowOrigin":["b.example"]},"headerManipulation":{"requestHeadersToRemove":["x-debug"]}}}`})
	want(t, "listener admin", effective(t, res, "VirtualHostOption", dListener("admin")),
		[]string{`{"options":{"cors":{"allowOrigin":["a.example"],"maxAge":"1d"},"headerManipulation":{"requestHeadersToRemove":["x-debug"]}}}`})
	want(t, "gw", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
	want(t, "listener", status(t, res, "listener", "Programmed"), "True/Programmed")
}

// ---------------------------------------------------------------- kgateway

const kgwV = "gateway.kgateway.dev/v1alpha1"

// TrafficPolicy: kgateway labels the CRD Direct, but the policy inherits
// from the Gateway to its routes; the route's policy takes precedence
// field by field (ShallowMergePreferChild, the default) and the Gateway's
// other fields remain.
// Source: kgateway-dev/kgateway api/v1alpha1/kgateway/traffic_policy_types.go
// @ 7a44f6cb07bb (label Direct; Gateway, listener, HTTPRoute, rule
// targets); kgateway-dev/kgateway.dev content/docs/main/about/policies/
// merging.md (ShallowMergePreferChild: child wins per top-level field).
// The Gateway's timeouts.streamIdle goes with its timeouts (a shallow
// merge: named rule "." in the profile), where RFC 7386 would keep it.
func TestDocsKgatewayTrafficPolicyInheritsDespiteDirectLabel(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(kgwV, "TrafficPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
timeouts: {request: 10s, streamIdle: 60s}
cors: {allowOrigins: [a.example]}`),
		pol(kgwV, "TrafficPolicy", "route", 1, `targetRefs: [`+r1Ref+`]
timeouts: {request: 3s}`),
		pol(kgwV, "TrafficPolicy", "rule", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: second}]
timeouts: {request: 1s}`))
	k := kindOf(t, res, "TrafficPolicy")
	want(t, "class", k.Class, policy.Inherited)
	want(t, "rule first", effective(t, res, "TrafficPolicy", rule("r1", "first")), []string{`{"cors":{"allowOrigins":["a.example"]},"timeouts":{"request":"3s"}}`})
	want(t, "rule second", effective(t, res, "TrafficPolicy", rule("r1", "second")), []string{`{"cors":{"allowOrigins":["a.example"]},"timeouts":{"request":"1s"}}`})
	want(t, "gw", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
	want(t, "rule", status(t, res, "rule", "Accepted"), "True/Accepted")
}

// HTTPListenerPolicy targets Gateways only (all their HTTP listeners);
// weighted sets an annotation on a policy written by pol.
func weighted(doc, annotation, value string) string {
	return strings.Replace(doc, "metadata: {", fmt.Sprintf("metadata: {annotations: {%s: %q}, ", annotation, value), 1)
}

// TrafficPolicies on one target are ordered by kgateway.dev/policy-weight,
// higher first, then by age, oldest first; the first to set a top-level
// field keeps it whole and the others fill only the fields it leaves
// unset (AugmentedShallowMerge within one hierarchy level). None is
// rejected.
// Source: kgateway-dev/kgateway api/annotations (PolicyPrecedenceWeight:
// "Policies with higher weight implies higher priority, and are evaluated
// before policies with lower weight", default 0);
// pkg/krtcollections/policy.go (attached policies sorted by weight, then
// creation time); pkg/pluginsdk/policy/merge.go (same hierarchy:
// AugmentedShallowMerge, keep the accumulator's set fields);
// pkg/pluginsdk/utils/policy.go ParsePrecedenceWeightAnnotation (int32).
func TestDocsKgatewayTrafficPolicyWeightThenAge(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	const w = "kgateway.dev/policy-weight"
	older := pol(kgwV, "TrafficPolicy", "older", 0, `targetRefs: [`+r1Ref+`]
timeouts: {request: 10s}
cors: {allowOrigins: [a.example]}`)
	newer := pol(kgwV, "TrafficPolicy", "newer", 1, `targetRefs: [`+r1Ref+`]
timeouts: {request: 3s, streamIdle: 30s}
retry: {attempts: 2}`)

	// Equal weights (none given): the older keeps timeouts whole.
	res := compute(t, engine.Options{}, c, docsTopo, older, newer)
	want(t, "weightAnnotation", kindOf(t, res, "TrafficPolicy").WeightAnnotation, w)
	want(t, "same weight", effective(t, res, "TrafficPolicy", rule("r1", "first")),
		[]string{`{"cors":{"allowOrigins":["a.example"]},"retry":{"attempts":2},"timeouts":{"request":"10s"}}`})
	want(t, "same weight: older", status(t, res, "older", "Programmed"), "True/Programmed")
	want(t, "same weight: newer", status(t, res, "newer", "Programmed"), "True/PartiallyProgrammed")

	// The newer with a higher weight goes first: it keeps timeouts whole.
	res = compute(t, engine.Options{}, c, docsTopo, older, weighted(newer, w, "10"))
	want(t, "newer weighs more", effective(t, res, "TrafficPolicy", rule("r1", "first")),
		[]string{`{"cors":{"allowOrigins":["a.example"]},"retry":{"attempts":2},"timeouts":{"request":"3s","streamIdle":"30s"}}`})
	want(t, "weighted newer", status(t, res, "newer", "Programmed"), "True/Programmed")
	want(t, "lighter older", status(t, res, "older", "Programmed"), "True/PartiallyProgrammed")
	want(t, "lighter older accepted", status(t, res, "older", "Accepted"), "True/Accepted")

	// Negative weights are allowed: the older with -1 goes after the newer.
	res = compute(t, engine.Options{}, c, docsTopo, weighted(older, w, "-1"), newer)
	want(t, "older weighs less", effective(t, res, "TrafficPolicy", rule("r1", "first")),
		[]string{`{"cors":{"allowOrigins":["a.example"]},"retry":{"attempts":2},"timeouts":{"request":"3s","streamIdle":"30s"}}`})

	// Weights rank one level only: the route's policy still beats a
	// heavier Gateway policy per top-level field.
	gw := weighted(pol(kgwV, "TrafficPolicy", "gw", 2, `targetRefs: [`+gwRef+`]
timeouts: {request: 99s}`), w, "100")
	res = compute(t, engine.Options{}, c, docsTopo, older, gw)
	want(t, "heavier Gateway policy", effective(t, res, "TrafficPolicy", rule("r1", "first")),
		[]string{`{"cors":{"allowOrigins":["a.example"]},"timeouts":{"request":"10s"}}`})

	// A weight that is not an int32 makes the policy Invalid, naming the
	// annotation; the other policy still applies.
	for _, bad := range []string{"high", "1.5", "2147483648"} {
		res = compute(t, engine.Options{}, c, docsTopo, older, weighted(newer, w, bad))
		want(t, "bad weight "+bad, status(t, res, "newer", "Accepted"), "False/Invalid")
		msg := condition(t, res, "newer", "Accepted").Message
		if !strings.Contains(msg, "metadata.annotations[kgateway.dev/policy-weight]") || !strings.Contains(msg, bad) {
			t.Errorf("bad weight %s: message %q names neither the annotation nor the value", bad, msg)
		}
		want(t, "bad weight "+bad+": older alone", effective(t, res, "TrafficPolicy", rule("r1", "first")),
			[]string{`{"cors":{"allowOrigins":["a.example"]},"timeouts":{"request":"10s"}}`})
	}
}

// A TrafficPolicy named by a rule's ExtensionRef filter applies to that
// rule, ahead of the policies targeting the rule and the route: its
// top-level fields win there, theirs fill the rest. It needs no
// targetRefs; one with neither targets nor a filter naming it applies
// nowhere (TargetNotFound), and is not Invalid.
// Source: kgateway.dev docs about/policies (attachment priority:
// "ExtensionRef filter > route rule (sectionName) > whole HTTPRoute");
// kgateway-dev/kgateway api/v1alpha1/kgateway/traffic_policy_types.go
// (targetRefs optional); docs/merging design note ("rule-level extension
// refs, rule-level attached policies, and route-level attached policies
// together as the same hierarchy", extension refs first).
func TestDocsKgatewayTrafficPolicyExtensionRefFilter(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	topo := strings.Replace(docsTopo, `  - name: first
    backendRefs: [{name: s1, port: 80}]`, `  - name: first
    filters:
    - type: ExtensionRef
      extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: by-filter}
    backendRefs: [{name: s1, port: 80}]`, 1)
	if topo == docsTopo {
		t.Fatal("the topology changed: r1's rule first not found")
	}
	docs := []string{c, topo,
		pol(kgwV, "TrafficPolicy", "rule-target", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
timeouts: {request: 10s}
cors: {allowOrigins: [a.example]}`),
		pol(kgwV, "TrafficPolicy", "route", 1, `targetRefs: [`+r1Ref+`]
retry: {attempts: 2}
timeouts: {request: 20s}`),
		pol(kgwV, "TrafficPolicy", "by-filter", 2, `timeouts: {request: 3s}`),
		pol(kgwV, "TrafficPolicy", "unused", 3, `timeouts: {request: 1s}`),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "rule first", effective(t, res, "TrafficPolicy", rule("r1", "first")),
		[]string{`{"cors":{"allowOrigins":["a.example"]},"retry":{"attempts":2},"timeouts":{"request":"3s"}}`})
	want(t, "rule second", effective(t, res, "TrafficPolicy", rule("r1", "second")),
		[]string{`{"retry":{"attempts":2},"timeouts":{"request":"20s"}}`})
	want(t, "by-filter", status(t, res, "by-filter", "Accepted"), "True/Accepted")
	want(t, "by-filter Programmed", status(t, res, "by-filter", "Programmed"), "True/Programmed")
	// Its ancestor is the rule's Gateway (the kind's ancestor mode).
	want(t, "by-filter ancestors", ancestorsOf(t, res, "by-filter"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	want(t, "rule-target", status(t, res, "rule-target", "Programmed"), "True/PartiallyProgrammed")
	want(t, "unused", status(t, res, "unused", "Accepted"), "False/TargetNotFound")
	if msg := condition(t, res, "unused", "Accepted").Message; !strings.Contains(msg, "no route rule's ExtensionRef filter names it") {
		t.Errorf("unused: %s", msg)
	}

	// An Incremental agrees when the filter's policy changes and goes.
	objs := decodeDocs(t, docs...)
	in := engine.NewIncremental(engine.Options{})
	in.Compute(objs)
	edited, _ := manifest.Decode(strings.NewReader(strings.Join(append(docs[:len(docs)-2:len(docs)-2],
		pol(kgwV, "TrafficPolicy", "by-filter", 2, `cors: {allowOrigins: [z.example]}`)), "\n---\n")), t.Name())
	for _, step := range [][]engine.Object{edited, objs[:len(objs)-2], objs} {
		if g, w := dump(t, in.Compute(step)), dump(t, engine.Compute(step, engine.Options{})); g != w {
			t.Fatalf("%s", firstDiff(g, w))
		}
	}

	// Without profiles the kind knows no filters: no targets is Invalid.
	res = compute(t, engine.Options{DisableProfiles: true}, labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Inherited"), topo,
		pol(kgwV, "TrafficPolicy", "by-filter", 2, `timeouts: {request: 3s}`))
	want(t, "no profile", status(t, res, "by-filter", "Accepted"), "False/Invalid")
}

// BackendConfigPolicy targets Services and kgateway Backends.
// Source: kgateway-dev/kgateway api/v1alpha1/kgateway/
// http_listener_policy_types.go @ 2e8910734ae6 and
// backend_config_policy_types.go @ 44a41714556c (CEL on targetRefs).
func TestDocsKgatewayDirectKindsTargets(t *testing.T) {
	hlp := labelledCRD("gateway.kgateway.dev", "HTTPListenerPolicy", "httplistenerpolicies", "Direct")
	bcp := labelledCRD("gateway.kgateway.dev", "BackendConfigPolicy", "backendconfigpolicies", "Direct")
	res := compute(t, engine.Options{}, hlp, bcp, docsTopo,
		pol(kgwV, "HTTPListenerPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
serverHeaderTransformation: PassThrough`),
		pol(kgwV, "HTTPListenerPolicy", "on-route", 0, `targetRefs: [`+r1Ref+`]
serverHeaderTransformation: PassThrough`),
		pol(kgwV, "BackendConfigPolicy", "svc", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
connectTimeout: 5s`),
		pol(kgwV, "BackendConfigPolicy", "backend", 0, `targetRefs: [{group: gateway.kgateway.dev, kind: Backend, name: b1}]
connectTimeout: 5s`),
		pol(kgwV, "BackendConfigPolicy", "bcp-on-route", 0, `targetRefs: [`+r1Ref+`]
connectTimeout: 5s`))
	want(t, "HTTPListenerPolicy gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "HTTPListenerPolicy effective g1", effective(t, res, "HTTPListenerPolicy", dG1), []string{`{"serverHeaderTransformation":"PassThrough"}`})
	want(t, "HTTPListenerPolicy on-route", status(t, res, "on-route", "Accepted"), "False/Invalid")
	want(t, "BackendConfigPolicy svc", effective(t, res, "BackendConfigPolicy", dS1), []string{`{"connectTimeout":"5s"}`})
	want(t, "BackendConfigPolicy backend", status(t, res, "backend", "Accepted"), "True/Accepted")
	want(t, "BackendConfigPolicy on-route", status(t, res, "bcp-on-route", "Accepted"), "False/Invalid")
}

// Several BackendConfigPolicies on one Service merge field by field: each
// top-level field whole from the first policy setting it (higher weight
// first, then older), the fields of `dns` one by one; the others fill what
// it leaves unset, and none is Conflicted.
// Source: kgateway-dev/kgateway pkg/kgateway/extensions2/plugins/
// backendconfigpolicy/merge.go @ 934d0c38d3c7 (mergeBackendConfigPolicies:
// one merge per field, dns.refreshRate and dns.jitter apart; its test
// TestMergeOlderWinsPerField), pkg/kgateway/translator/irtranslator/
// backend.go @ 0451ae1c489c (applyBasePolicies: the attached policies
// merged into one before ProcessBackend).
func TestDocsKgatewayBackendConfigPolicyMergesPerField(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "BackendConfigPolicy", "backendconfigpolicies", "Direct")
	const w = "kgateway.dev/policy-weight"
	svc := `targetRefs: [{group: "", kind: Service, name: s1}]`
	older := pol(kgwV, "BackendConfigPolicy", "older", 0, svc+`
connectTimeout: 5s
dns: {refreshRate: 10s}`)
	newer := pol(kgwV, "BackendConfigPolicy", "newer", 1, svc+`
connectTimeout: 9s
perConnectionBufferLimitBytes: 1024
dns: {refreshRate: 60s, jitter: 1s}`)

	res := compute(t, engine.Options{}, c, docsTopo, older, newer)
	want(t, "same weight", effective(t, res, "BackendConfigPolicy", dS1),
		[]string{`{"connectTimeout":"5s","dns":{"jitter":"1s","refreshRate":"10s"},"perConnectionBufferLimitBytes":1024}`})
	want(t, "older", status(t, res, "older", "Programmed"), "True/Programmed")
	want(t, "newer accepted", status(t, res, "newer", "Accepted"), "True/Accepted")
	want(t, "newer", status(t, res, "newer", "Programmed"), "True/PartiallyProgrammed")

	// A higher weight ranks the newer first.
	res = compute(t, engine.Options{}, c, docsTopo, older, weighted(newer, w, "5"))
	want(t, "newer weighs more", effective(t, res, "BackendConfigPolicy", dS1),
		[]string{`{"connectTimeout":"9s","dns":{"jitter":"1s","refreshRate":"60s"},"perConnectionBufferLimitBytes":1024}`})
	want(t, "lighter older", status(t, res, "older", "Programmed"), "False/Overridden")
}

// HTTPListenerPolicies on one Gateway merge as ListenerPolicies'
// httpSettings do: each field whole from the first policy setting it
// (higher weight first, then older), the others filling the rest; none is
// Conflicted.
// Source: kgateway-dev/kgateway pkg/kgateway/extensions2/plugins/
// httplistenerpolicy/httplistener_plugin.go @ 32362ea9e918 (the spec
// wrapped as a ListenerPolicy's default.httpSettings; MergePolicies with
// listenerpolicy.MergePolicies).
func TestDocsKgatewayHTTPListenerPolicyMergesPerField(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "HTTPListenerPolicy", "httplistenerpolicies", "Direct")
	const w = "kgateway.dev/policy-weight"
	older := pol(kgwV, "HTTPListenerPolicy", "older", 0, `targetRefs: [`+gwRef+`]
xffNumTrustedHops: 2
accessLog: [{fileSink: {path: /dev/stdout}}]`)
	newer := pol(kgwV, "HTTPListenerPolicy", "newer", 1, `targetRefs: [`+gwRef+`]
xffNumTrustedHops: 5
useRemoteAddress: false`)

	res := compute(t, engine.Options{}, c, docsTopo, older, newer)
	want(t, "same weight", effective(t, res, "HTTPListenerPolicy", dG1),
		[]string{`{"accessLog":[{"fileSink":{"path":"/dev/stdout"}}],"useRemoteAddress":false,"xffNumTrustedHops":2}`})
	want(t, "newer accepted", status(t, res, "newer", "Accepted"), "True/Accepted")
	want(t, "newer", status(t, res, "newer", "Programmed"), "True/PartiallyProgrammed")

	res = compute(t, engine.Options{}, c, docsTopo, older, weighted(newer, w, "1"))
	want(t, "newer weighs more", effective(t, res, "HTTPListenerPolicy", dG1),
		[]string{`{"accessLog":[{"fileSink":{"path":"/dev/stdout"}}],"useRemoteAddress":false,"xffNumTrustedHops":5}`})
	want(t, "lighter older", status(t, res, "older", "Programmed"), "True/PartiallyProgrammed")
}

// ---------------------------------------------------------------- Istio

// RequestAuthentication, WasmPlugin, TrafficExtension and EnvoyFilter:
// every policy that
// targets a Gateway applies (none replaces another), and a policy that
// selects workloads by labels instead of targetRefs is not invalid.
// Sources (istio/istio 86c9f01fd73): pilot/pkg/model/authentication.go
// (initAuthenticationPolicies: all matching RequestAuthentications
// contribute), pilot/pkg/model/push_context.go (EnvoyFilters: all apply,
// ordered; WasmPlugins by phase and priority); istio/api protos (selector,
// workloadSelector, targetRefs mutually exclusive). Telemetry merges as
// istiod merges it: TestIstioTelemetryLayering.
func TestDocsIstioKindsAdditiveAndSelectorNotInvalid(t *testing.T) {
	for _, tc := range []struct {
		group, kind, plural, version, selector, a, b string
	}{
		{"security.istio.io", "RequestAuthentication", "requestauthentications", "security.istio.io/v1", "selector: {matchLabels: {app: x}}",
			`jwtRules: [{issuer: a.example}]`, `jwtRules: [{issuer: b.example}]`},
		{"extensions.istio.io", "WasmPlugin", "wasmplugins", "extensions.istio.io/v1alpha1", "selector: {matchLabels: {app: x}}",
			`url: oci://a`, `url: oci://b`},
		{"extensions.istio.io", "TrafficExtension", "trafficextensions", "extensions.istio.io/v1alpha1", "selector: {matchLabels: {app: x}}",
			`wasm: {url: oci://a}`, `lua: {inlineCode: "function envoy_on_request(h) end"}`},
		{"networking.istio.io", "EnvoyFilter", "envoyfilters", "networking.istio.io/v1alpha3", "workloadSelector: {labels: {app: x}}",
			`priority: 1`, `priority: 2`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			res := compute(t, engine.Options{}, crd(tc.group, tc.kind, tc.plural), docsTopo,
				pol(tc.version, tc.kind, "a", 0, "targetRefs: ["+gwRef+"]\n"+tc.a),
				pol(tc.version, tc.kind, "b", 1, "targetRefs: ["+gwRef+"]\n"+tc.b),
				pol(tc.version, tc.kind, "workloads", 2, tc.selector+"\n"+tc.a))
			for _, n := range []string{"a", "b"} {
				want(t, n+" Accepted", status(t, res, n, "Accepted"), "True/Accepted")
				want(t, n+" Programmed", status(t, res, n, "Programmed"), "True/Programmed")
			}
			got := effective(t, res, tc.kind, dG1)
			if len(got) != 1 || !strings.Contains(got[0], `"default/a":`) || !strings.Contains(got[0], `"default/b":`) {
				t.Errorf("effective g1 = %v, want both policies side by side", got)
			}
			want(t, "workloads", status(t, res, "workloads", "Accepted"), "False/TargetNotFound")
		})
	}
}

// An EnvoyFilter targeting a Service (or ServiceEntry), which its proto
// lists, is never applied: istiod matches EnvoyFilters with the proxy's
// policy matcher and never with a Service (pilot/pkg/model/push_context.go
// getMatchedEnvoyFilters: PolicyMatcherForProxy without WithService,
// istio/istio 86c9f01fd73). attache says so (Invalid, naming the kinds it
// takes) rather than listing it as the Service's effective policy.
func TestDocsIstioEnvoyFilterServiceTargetNeverApplies(t *testing.T) {
	res := compute(t, engine.Options{}, crd("networking.istio.io", "EnvoyFilter", "envoyfilters"), docsTopo,
		pol("networking.istio.io/v1alpha3", "EnvoyFilter", "on-service", 0, "targetRefs: [{kind: Service, name: s1}]\npriority: 1"),
		pol("networking.istio.io/v1alpha3", "EnvoyFilter", "on-gateway", 1, "targetRefs: ["+gwRef+"]\npriority: 1"))
	want(t, "on-service", status(t, res, "on-service", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "on-service"); !strings.Contains(msg, "kind Service is not a target kind of EnvoyFilter.networking.istio.io (allowed: Gateway.gateway.networking.k8s.io, GatewayClass.gateway.networking.k8s.io)") {
		t.Errorf("on-service: message %q", msg)
	}
	want(t, "on-gateway", status(t, res, "on-gateway", "Accepted"), "True/Accepted")
}

// Istio's targetRefs have no sectionName (istio/istio 86c9f01fd73
// manifests/charts/base/files/crd-all.gen.yaml: PolicyTargetReference is
// group, kind, name, namespace; the API server prunes an unknown field),
// and istiod matches a targetRef by group, kind and name
// (pilot/pkg/model/policyattachment.go ShouldAttachPolicy): a policy
// naming a listener applies to the whole Gateway. attache reads it so, as
// for every Istio kind, and reports the dropped field; the listener gets
// no policy of its own.
func TestDocsIstioSectionNameDropped(t *testing.T) {
	for _, tc := range []struct{ group, kind, plural, version, spec string }{
		{"security.istio.io", "AuthorizationPolicy", "authorizationpolicies", "security.istio.io/v1", "action: DENY\nrules: [{}]"},
		{"security.istio.io", "RequestAuthentication", "requestauthentications", "security.istio.io/v1", "jwtRules: [{issuer: a.example}]"},
		{"telemetry.istio.io", "Telemetry", "telemetries", "telemetry.istio.io/v1", "tracing: [{randomSamplingPercentage: 5}]"},
		{"extensions.istio.io", "WasmPlugin", "wasmplugins", "extensions.istio.io/v1alpha1", "url: oci://a"},
		{"extensions.istio.io", "TrafficExtension", "trafficextensions", "extensions.istio.io/v1alpha1", "wasm: {url: oci://a}"},
		{"networking.istio.io", "EnvoyFilter", "envoyfilters", "networking.istio.io/v1alpha3", "priority: 1"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			res := compute(t, engine.Options{}, crd(tc.group, tc.kind, tc.plural), istioTopo,
				pol(tc.version, tc.kind, "on-listener", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ingress, sectionName: http}]\n"+tc.spec))
			want(t, "Accepted", status(t, res, "on-listener", "Accepted"), "True/Accepted")
			var targets []string
			for _, e := range res.Effective {
				if e.Kind.GroupKind.Kind == tc.kind {
					targets = append(targets, e.Target.Short())
				}
			}
			want(t, "targets", targets, []string{"Gateway default/ingress"})
			var problems []string
			for _, p := range res.Problems {
				problems = append(problems, p.Field+": "+p.Message)
			}
			want(t, "problems", problems, []string{"spec.targetRefs[0].sectionName: sectionName is not part of " + tc.kind + "'s targetRefs; the API server drops it, so the policy targets the whole Gateway"})
		})
	}
}

// An EnvoyFilter on the waypoint GatewayClass from the root namespace
// applies at every waypoint (istiod's policy matcher takes such a class
// target at waypoint proxies, whatever the kind: ShouldAttachPolicy);
// one on the ingress class, or from another namespace, applies nowhere,
// which attache says as Invalid; one on an ingress Gateway applies there.
// Source: istio/istio 86c9f01fd73 pilot/pkg/model/policyattachment.go
// (ShouldAttachPolicy), pilot/pkg/model/push_context.go
// (getMatchedEnvoyFilters: the proxy's policy matcher).
func TestDocsIstioEnvoyFilterWaypointClass(t *testing.T) {
	const v = "networking.istio.io/v1alpha3"
	class := func(name string) string {
		return "targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: " + name + "}]\nconfigPatches: []"
	}
	res := compute(t, engine.Options{}, crd("networking.istio.io", "EnvoyFilter", "envoyfilters"), istioTopo,
		"---\napiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nmetadata: {name: at-waypoints, namespace: istio-system}\nspec:\n  "+strings.ReplaceAll(class("istio-waypoint"), "\n", "\n  ")+"\n",
		"---\napiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nmetadata: {name: on-ingress-class, namespace: istio-system}\nspec:\n  "+strings.ReplaceAll(class("istio"), "\n", "\n  ")+"\n",
		pol(v, "EnvoyFilter", "not-root", 0, class("istio-waypoint")),
		pol(v, "EnvoyFilter", "on-ingress", 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ingress}]\nconfigPatches: []"))
	want(t, "waypoint", policiesAt(t, res, "EnvoyFilter", "default", "waypoint"), []string{"istio-system/at-waypoints"})
	want(t, "ingress", policiesAt(t, res, "EnvoyFilter", "default", "ingress"), []string{"default/on-ingress"})
	want(t, "at-waypoints", status(t, res, "at-waypoints", "Accepted"), "True/Accepted")
	want(t, "on-ingress-class", status(t, res, "on-ingress-class", "Accepted"), "False/Invalid")
	want(t, "not-root", status(t, res, "not-root", "Accepted"), "False/Invalid")
}

// An Istio targetRef without group names the core group
// (PolicyTargetReference: "empty string for core"), so {kind: Gateway}
// names no Gateway API Gateway: istiod's webhook refuses it
// (validatePolicyTargetReference), and without the webhook it matches
// nothing (ShouldAttachPolicy compares group and kind). attache says
// Invalid, with a hint; a Service without group is the core Service, as
// before. Kinds of other implementations still resolve a bare kind.
func TestDocsIstioTargetRefWithoutGroup(t *testing.T) {
	const v = "security.istio.io/v1"
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), istioTopo,
		"---\napiVersion: v1\nkind: Service\nmetadata: {name: svc, namespace: default}\nspec: {ports: [{port: 80}]}\n",
		pol(v, "AuthorizationPolicy", "no-group", 0, "targetRefs: [{kind: Gateway, name: ingress}]\naction: DENY\nrules: [{}]"),
		pol(v, "AuthorizationPolicy", "service", 1, "targetRefs: [{kind: Service, name: svc}]\naction: DENY\nrules: [{}]"))
	want(t, "no-group", status(t, res, "no-group", "Accepted"), "False/Invalid")
	if msg := condition(t, res, "no-group", "Accepted").Message; !strings.Contains(msg, "kind Gateway is not a target kind of AuthorizationPolicy.security.istio.io") ||
		!strings.Contains(msg, "a targetRef without group names the core group: give the group") {
		t.Errorf("no-group: %q", msg)
	}
	want(t, "service (core by default)", status(t, res, "service", "Accepted") != "False/Invalid", true)
}

// kgateway's ListenerPolicy keeps its configuration in a spec field named
// `default` (ListenerDefaultConfig), not GEP-713's defaults stanza: its
// profile says the kind has no stanzas, so the field is part of the spec,
// and a listener without a perPort entry for its port takes it. Without
// the CRD's schema perPort is one value, which the older policy gives
// whole.
// Source: kgateway-dev/kgateway api/v1alpha1/kgateway/
// listener_policy_types.go @ e30e64597093 (Default *ListenerDefaultConfig
// `json:"default"`).
func TestDocsKgatewayListenerPolicyDefaultField(t *testing.T) {
	c := labelledCRD("gateway.kgateway.dev", "ListenerPolicy", "listenerpolicies", "Direct")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(kgwV, "ListenerPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
default: {perConnectionBufferLimitBytes: 1024}
perPort: [{port: 8080, listener: {perConnectionBufferLimitBytes: 1}}]`),
		pol(kgwV, "ListenerPolicy", "gw-newer", 1, `targetRefs: [`+gwRef+`]
perPort: [{port: 80, listener: {perConnectionBufferLimitBytes: 2}}]`))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "listener http", effective(t, res, "ListenerPolicy", dListener("http")),
		[]string{`{"perConnectionBufferLimitBytes":1024}`})
	want(t, "listener admin", effective(t, res, "ListenerPolicy", dListener("admin")),
		[]string{`{"perConnectionBufferLimitBytes":1}`})
}

// kgatewayListenerPolicyCRD is a ListenerPolicy CRD whose schema says
// what the merges read: perPort a list-map keyed by port.
func kgatewayListenerPolicyCRD() string {
	return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: listenerpolicies.gateway.kgateway.dev, labels: {gateway.networking.k8s.io/policy: Direct}}
spec:
  group: gateway.kgateway.dev
  scope: Namespaced
  names: {kind: ListenerPolicy, plural: listenerpolicies}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              perPort:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items: {type: object, properties: {port: {type: integer}, listener: {type: object}}}
`
}

// kgateway merges the ListenerPolicies reaching a listener field by field
// (the listener's own first, then the Gateway's; at one level by weight,
// then age): inside `default` and inside each `perPort` entry's
// `listener` every field is taken whole from the first policy setting it,
// `httpSettings` one level deeper; `perPort` entries meet by port. At a
// listener, the merged entry for its port, when there is one, replaces
// `default` whole: nothing of `default` applies there. No policy is
// Conflicted.
// Source: kgateway-dev/kgateway pkg/kgateway/extensions2/plugins/
// listenerpolicy/merge.go @ 2c302a02413c (MergePolicies: mergeDefault,
// mergePerPort, mergeListenerPolicy, mergeHttpSettings), listener_plugin.go
// @ 07765bb87b2c (getPolicy: perPortPolicy[port], else defaultPolicy),
// pkg/pluginsdk/policy/merge.go @ 29d8e4c2a0c9 (AugmentedShallowMerge at
// one level and across levels); api/v1alpha1/kgateway/
// listener_policy_types.go @ 028d2df5f049 (perPort "completely replaces the
// default configuration").
func TestDocsKgatewayListenerPolicyPerPort(t *testing.T) {
	res := compute(t, engine.Options{}, kgatewayListenerPolicyCRD(), docsTopo,
		pol(kgwV, "ListenerPolicy", "gw", 0, `targetRefs: [`+gwRef+`]
default:
  perConnectionBufferLimitBytes: 1024
  httpSettings: {xffNumTrustedHops: 1, tracing: {provider: a}}
perPort: [{port: 80, listener: {proxyProtocol: {}}}]`),
		pol(kgwV, "ListenerPolicy", "gw-newer", 1, `targetRefs: [`+gwRef+`]
default:
  perConnectionBufferLimitBytes: 2048
  httpSettings: {useRemoteAddress: false, tracing: {attributes: b}}
perPort: [{port: 80, listener: {perConnectionBufferLimitBytes: 4096}}, {port: 9090, listener: {perConnectionBufferLimitBytes: 1}}]`),
		pol(kgwV, "ListenerPolicy", "admin", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: admin}]
default: {perConnectionBufferLimitBytes: 512}`))
	// Port 80: both policies' entries for it, merged; no default field.
	want(t, "listener http", effective(t, res, "ListenerPolicy", dListener("http")),
		[]string{`{"perConnectionBufferLimitBytes":4096,"proxyProtocol":{}}`})
	// Port 8080: the defaults merged, the listener's policy first; tracing
	// whole from the older policy, the other httpSettings fields merged.
	want(t, "listener admin", effective(t, res, "ListenerPolicy", dListener("admin")),
		[]string{`{"httpSettings":{"tracing":{"provider":"a"},"useRemoteAddress":false,"xffNumTrustedHops":1},"perConnectionBufferLimitBytes":512}`})
	for _, name := range []string{"gw", "gw-newer", "admin"} {
		want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
	}
	// At port 80, what the policies set in default is lost to the entry
	// for the port (a policy never loses to itself: each names the
	// other); the entry for port 9090 is no part of it.
	lost := lostAt(t, res, "ListenerPolicy", dListener("http"))
	want(t, "lost at http", lost, []string{
		"gw-newer: default.httpSettings.tracing.attributes to gw",
		"gw-newer: default.httpSettings.useRemoteAddress to gw",
		"gw-newer: default.perConnectionBufferLimitBytes to gw",
		// The key of an item both set is the older's (as in any
		// list-map merge).
		"gw-newer: perPort[port=80].port to gw",
		"gw: default.httpSettings.tracing.provider to gw-newer",
		"gw: default.httpSettings.xffNumTrustedHops to gw-newer",
		"gw: default.perConnectionBufferLimitBytes to gw-newer",
	})
	want(t, "lost at admin", lostAt(t, res, "ListenerPolicy", dListener("admin")), []string{
		"gw-newer: default.httpSettings.tracing.attributes to gw",
		"gw-newer: default.perConnectionBufferLimitBytes to gw",
		"gw: default.perConnectionBufferLimitBytes to admin",
	})
	// A Gateway without listeners on 80 or 8080 (g2 has one on 80 only,
	// no policy): nothing. A policy setting only another port's entry
	// contributes nothing at a listener.
	res = compute(t, engine.Options{}, kgatewayListenerPolicyCRD(), docsTopo,
		pol(kgwV, "ListenerPolicy", "other-port", 0, `targetRefs: [`+gwRef+`]
perPort: [{port: 9090, listener: {perConnectionBufferLimitBytes: 1}}]`))
	want(t, "other port only", effective(t, res, "ListenerPolicy", dListener("http")), []string{`{}`})
}

// lostAt lists, for each context of kind's effective policy at target,
// the fields each policy lost and to whom ("policy: path to a,b").
func lostAt(t *testing.T, res *engine.Result, kind string, target topology.Ref) []string {
	t.Helper()
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			for _, se := range c.Stack {
				for _, lf := range se.Lost {
					var to []string
					for _, w := range lf.To {
						to = append(to, w.Policy.Name)
					}
					out = append(out, se.Policy.Name+": "+lf.Path+" to "+strings.Join(to, ","))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// NGINX Gateway Fabric names the Gateway of an UpstreamSettingsPolicy's
// ancestor without the sectionName the route's parentRef carries, where a
// BackendTLSPolicy (ancestor mode gateway, as the Gateway API conformance
// suite checks) keeps the parentRef as written; two parentRefs to listeners
// of one Gateway give it once.
// Source: NGF v2 internal/controller/state/graph (createParentReference:
// group, kind, namespace and name only; parentRefEqual compares no more).
func TestDocsNGFUpstreamSettingsAncestorWithoutSection(t *testing.T) {
	topo := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: alt, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1, namespace: default}
spec:
  parentRefs: [{name: g1, sectionName: http}, {name: g1, sectionName: alt}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	res := compute(t, engine.Options{},
		labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct"),
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"), topo,
		pol(ngfV1, "UpstreamSettingsPolicy", "usp", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
zoneSize: 512k`),
		pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "btp", 0, `targetRefs: [{group: "", kind: Service, name: s1}]
validation: {hostname: s1.example, wellKnownCACertificates: System}`))
	want(t, "usp ancestors", ancestorsOf(t, res, "usp"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	want(t, "btp ancestors", ancestorsOf(t, res, "btp"), []string{
		"Gateway.gateway.networking.k8s.io default/g1#alt=Accepted",
		"Gateway.gateway.networking.k8s.io default/g1#http=Accepted",
	})
}

// NGF's PayloadProcessor: a route takes its own, else its Gateway's,
// whole; two on one target conflict whatever they set (Conflicts is
// always true): the newer is Conflicted at all its targets.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (resolveEffectivePayloadProcessors: "A PayloadProcessor attached directly
// to the Route wins ... otherwise fall back to the Gateway's");
// internal/controller/nginx/config/policies/payloadprocessor/validator.go
// (Conflicts returns true); apis/v1alpha1/payloadprocessor_types.go
// (targetRef: Gateway or HTTPRoute).
func TestDocsNGFPayloadProcessor(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	proc := func(svc string) string {
		return `processors: [{type: ExtProcess, extProcess: {backendRef: {name: ` + svc + `, port: 9000}, timeout: 1s}}]`
	}
	res := compute(t, ngfFlagsOn, c, ngfTopo+ngfGuards,
		pol(ngfV1, "PayloadProcessor", "gw", 0, "targetRef: "+gwRef+"\n"+proc("guard")),
		pol(ngfV1, "PayloadProcessor", "route", 1, "targetRef: "+r1Ref+"\n"+proc("route-guard")),
		pol(ngfV1, "PayloadProcessor", "route-newer", 2, "targetRef: "+r1Ref+"\n"+proc("other")))
	want(t, "gw", status(t, res, "gw", "Accepted"), "True/Accepted")
	want(t, "route", status(t, res, "route", "Accepted"), "True/Accepted")
	want(t, "route-newer", status(t, res, "route-newer", "Accepted"), "False/Conflicted")
	// The route's own, whole: none of the Gateway's fields.
	want(t, "effective r1", effective(t, res, "PayloadProcessor", dR1),
		[]string{`{"processors":[{"extProcess":{"backendRef":{"name":"route-guard","port":9000},"timeout":"1s"},"type":"ExtProcess"}]}`})
	// A route without one takes the Gateway's (gr1 is a GRPCRoute:
	// NGF applies PayloadProcessors to HTTP routes only).
	res = compute(t, ngfFlagsOn, c, ngfTopo+ngfGuards, pol(ngfV1, "PayloadProcessor", "gw", 0, "targetRef: "+gwRef+"\n"+proc("guard")))
	want(t, "effective r1, Gateway only", effective(t, res, "PayloadProcessor", dR1),
		[]string{`{"processors":[{"extProcess":{"backendRef":{"name":"guard","port":9000},"timeout":"1s"},"type":"ExtProcess"}]}`})
	gr1 := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "gr1"}
	if e := effective(t, res, "PayloadProcessor", gr1); len(e) != 0 {
		t.Errorf("effective gr1 = %v, want none", e)
	}
}

// NGF's ExternalLoadBalancer: one per Gateway; of two on one Gateway the
// older (then by namespace/name) is accepted and the newer Conflicted.
// Source: NGF e55bfe339 internal/controller/state/graph/
// externalloadbalancer.go (processExternalLoadBalancers: "when several
// target the same Gateway the oldest is accepted and the rest are
// Conflicted"); apis/v1alpha1/externalloadbalancer_types.go (targetRefs:
// one Gateway).
func TestDocsNGFExternalLoadBalancer(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ExternalLoadBalancer", "externalloadbalancers", "direct")
	link := func(addr string) string {
		return "targetRefs: [" + gwRef + "]\ngatewayLink: {virtualServerAddress: " + addr + "}"
	}
	res := compute(t, ngfFlagsOn, c, ngfTopo,
		pol(ngfV1, "ExternalLoadBalancer", "older", 0, link("10.0.0.1")),
		pol(ngfV1, "ExternalLoadBalancer", "newer", 1, link("10.0.0.2")))
	want(t, "older", status(t, res, "older", "Accepted"), "True/Accepted")
	want(t, "newer", status(t, res, "newer", "Accepted"), "False/Conflicted")
	g1 := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}
	want(t, "effective g1", effective(t, res, "ExternalLoadBalancer", g1), []string{`{"gatewayLink":{"virtualServerAddress":"10.0.0.1"}}`})
}

// Kuadrant's ThreatPolicy: every policy on a route's Gateway and on the
// route adds its threat check to that route, each kept (additive); a
// policy on another Gateway's route does not reach it.
// Source: Kuadrant/kuadrant-operator cmd/extensions/threat-policy
// (api/v1alpha1/threatpolicy_types.go: one targetRef, Gateway or
// HTTPRoute; internal/controller/threatpolicy_reconciler.go: each policy
// registers its own pipeline), internal/extension/registry.go
// (mutateWasmConfig appends every matching policy's actions to the action
// sets of its routes, or of all the Gateway's routes) @ ae698811.
func TestDocsKuadrantThreatPolicyAdditive(t *testing.T) {
	const v = "extensions.kuadrant.io/v1alpha1"
	threat := func(name string, min int, kind, target string, threshold int) string {
		return pol(v, "ThreatPolicy", name, min, fmt.Sprintf("targetRef: {group: gateway.networking.k8s.io, kind: %s, name: %s}\nthreshold: %d", kind, target, threshold))
	}
	res := compute(t, engine.Options{}, crd("extensions.kuadrant.io", "ThreatPolicy", "threatpolicies"), docsTopo,
		threat("gw", 0, "Gateway", "g1", 7), threat("route", 1, "HTTPRoute", "r1", 3), threat("other", 2, "HTTPRoute", "r2", 5))
	want(t, "r1", effective(t, res, "ThreatPolicy", rule("r1", "")), []string{`{"default/gw":{"threshold":7},"default/route":{"threshold":3}}`})
	want(t, "r2", effective(t, res, "ThreatPolicy", rule("r2", "")), []string{`{"default/other":{"threshold":5}}`})
	for _, p := range []string{"gw", "route", "other"} {
		want(t, p, status(t, res, p, "Programmed"), "True/Programmed")
	}
}

// Kuadrant's TelemetryPolicy: every policy on a Gateway adds its metric
// labels there (additive); none is Conflicted. Which of two policies'
// values a label both set takes is not determined (Kuadrant walks a map).
// Source: Kuadrant/kuadrant-operator cmd/extensions/telemetry-policy
// (api/v1alpha1/telemetrypolicy_types.go: targetRef kind Gateway only;
// internal/controller/telemetrypolicy_reconciler.go: AddDataTo per
// label), internal/extension/registry.go (GetRequestBindings: the first
// binding of a name seen, over a map) @ ae698811.
func TestDocsKuadrantTelemetryPolicyAdditive(t *testing.T) {
	const v = "extensions.kuadrant.io/v1alpha1"
	tel := func(name string, min int, labels string) string {
		return pol(v, "TelemetryPolicy", name, min, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1}\nmetrics: {default: {labels: "+labels+"}}")
	}
	c := crd("extensions.kuadrant.io", "TelemetryPolicy", "telemetrypolicies")
	res := compute(t, engine.Options{}, c, docsTopo, tel("users", 0, "{user: auth.identity.userid}"), tel("groups", 1, "{group: auth.identity.groups}"))
	want(t, "g1", effective(t, res, "TelemetryPolicy", topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}),
		[]string{`{"default/groups":{"metrics":{"default":{"labels":{"group":"auth.identity.groups"}}}},"default/users":{"metrics":{"default":{"labels":{"user":"auth.identity.userid"}}}}}`})
	want(t, "groups", status(t, res, "groups", "Accepted"), "True/Accepted")
	// Only Gateways: a route target is not one of the kind's.
	res = compute(t, engine.Options{}, c, docsTopo, pol(v, "TelemetryPolicy", "on-route", 0, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}\nmetrics: {default: {labels: {a: b}}}"))
	if got := status(t, res, "on-route", "Accepted"); !strings.HasPrefix(got, "False/") {
		t.Errorf("a TelemetryPolicy on a route: %s, want not accepted", got)
	}
}

// Kuadrant's extension kinds keep a targetRef's sectionName in their
// schema but never read it: what a TelemetryPolicy on a listener
// registers is the whole Gateway's, a ThreatPolicy on a route rule the
// whole route's. attache reads such a reference as the whole object and
// says so (a problem on the policy, which stays accepted); before, a
// TelemetryPolicy on a listener took effect there alone.
// Source: Kuadrant/kuadrant-operator internal/extension/manager.go
// (createLocatorFromProtobuf: kind, group, namespace and name; the
// pipeline commit's TargetRef: group, kind, name, namespace),
// pkg/extension/controller/utils.go (convertPolicyToProtobuf keeps the
// sectionName, unread after), cmd/extensions/threat-policy/internal/
// controller/threatpolicy_reconciler.go (validateTarget: by name) @
// ae698811.
func TestDocsKuadrantExtensionsIgnoreSectionName(t *testing.T) {
	const v = "extensions.kuadrant.io/v1alpha1"
	res := compute(t, engine.Options{}, crd("extensions.kuadrant.io", "TelemetryPolicy", "telemetrypolicies"),
		crd("extensions.kuadrant.io", "ThreatPolicy", "threatpolicies"), docsTopo,
		pol(v, "TelemetryPolicy", "on-listener", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: admin}\nmetrics: {default: {labels: {user: auth.identity.userid}}}"),
		pol(v, "ThreatPolicy", "on-rule", 1, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}\nthreshold: 3"))
	g1 := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}
	want(t, "g1", effective(t, res, "TelemetryPolicy", g1), []string{`{"default/on-listener":{"metrics":{"default":{"labels":{"user":"auth.identity.userid"}}}}}`})
	want(t, "r1", effective(t, res, "ThreatPolicy", rule("r1", "")), []string{`{"default/on-rule":{"threshold":3}}`})
	for _, p := range []string{"on-listener", "on-rule"} {
		want(t, p, status(t, res, p, "Accepted"), "True/Accepted")
	}
	var msgs []string
	for _, p := range res.Problems {
		msgs = append(msgs, p.Field+": "+p.Message)
	}
	want(t, "problems", msgs, []string{
		"spec.targetRef.sectionName: TelemetryPolicy's implementation does not read a targetRef's sectionName, so the policy targets the whole Gateway",
		"spec.targetRef.sectionName: ThreatPolicy's implementation does not read a targetRef's sectionName, so the policy targets the whole HTTPRoute",
	})
}

// kgateway names the Gateway as the ancestor of its listener-level
// policies and of any policy on a listener (a TrafficPolicy's too),
// without the listener, and of a TrafficPolicy on a route its parentRefs
// as written; never the route.
// Source: kgateway-dev/kgateway pkg/krtcollections/policy.go (listener
// PolicyAncestorRef: the Gateway or ListenerSet, no sectionName),
// irtranslator/route.go (routeAncestorRef: the route's ListenerParentRef);
// translator goldens listener-policy/gateway-wide-mtls-listenerset.yaml,
// route-section-attachment.yaml.
func TestDocsKgatewayAncestors(t *testing.T) {
	lp := labelledCRD("gateway.kgateway.dev", "ListenerPolicy", "listenerpolicies", "Direct")
	tp := labelledCRD("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies", "Direct")
	res := compute(t, engine.Options{}, lp, tp, docsTopo,
		pol(kgwV, "ListenerPolicy", "on-listener", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}]
default: {perConnectionBufferLimitBytes: 1024}`),
		pol(kgwV, "TrafficPolicy", "on-rule", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1, sectionName: first}]
timeouts: {request: 1s}`),
		pol(kgwV, "TrafficPolicy", "on-listeners", 2, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}, {group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: admin}]
timeouts: {request: 2s}`),
		pol(kgwV, "TrafficPolicy", "on-parentref-section", 3, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r3}]
timeouts: {request: 3s}`),
		`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r3, namespace: default}
spec:
  parentRefs: [{name: g1, sectionName: admin}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
`)
	want(t, "on-listener", ancestorsOf(t, res, "on-listener"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	want(t, "on-rule", ancestorsOf(t, res, "on-rule"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	// A TrafficPolicy on two listeners of one Gateway: the Gateway once
	// (since session 27; before, each listener).
	want(t, "on-listeners", ancestorsOf(t, res, "on-listeners"), []string{"Gateway.gateway.networking.k8s.io default/g1=Accepted"})
	// A route's parentRef with a sectionName keeps it.
	want(t, "on-parentref-section", ancestorsOf(t, res, "on-parentref-section"), []string{"Gateway.gateway.networking.k8s.io default/g1#admin=Accepted"})
}

// ancestorCondList returns the conditions of policy name's ancestors, one
// string per ancestor: "ref: Type=Status/Reason, ...", in status order.
func ancestorCondList(t *testing.T, res *engine.Result, name string) []string {
	t.Helper()
	for _, ps := range res.Policies {
		if ps.Policy.Ref.Name != name {
			continue
		}
		out := []string{}
		for _, a := range ps.Ancestors {
			var cs []string
			for _, c := range a.Conditions {
				cs = append(cs, c.Type+"="+c.Status+"/"+c.Reason)
			}
			out = append(out, a.Ref.Short()+": "+strings.Join(cs, ", "))
		}
		return out
	}
	t.Fatalf("no policy %s", name)
	return nil
}

// NGF writes no status entry for a target it does not resolve: a Gateway,
// route or Service that is not among the objects, another
// implementation's, or (UpstreamSettingsPolicy) a Service no route of
// its Gateways uses; it drops such targets before it attaches the policy,
// so they take no place under the 16-ancestor limit either. attache says
// so with an input problem on the policy (its summary condition says it
// too), not with a TargetNotFound entry; the CRD's
// attache.dev/missing-targets: entry gives the entry back.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (processPolicies: gatewayExists, routes, services, "continue";
// "if len(targetRefs) == 0 continue"), service.go
// (buildReferencedServices), status/prepare_requests.go
// (PrepareNGFPolicyRequests: an entry per pol.Ancestors only).
func TestDocsNGFNoStatusForMissingTargets(t *testing.T) {
	obs := labelledCRD("gateway.nginx.org", "ObservabilityPolicy", "observabilitypolicies", "direct")
	usp := labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct")
	csp := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	const v2 = "gateway.nginx.org/v1alpha2"
	other := `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-gw, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: unused, namespace: default}
spec: {ports: [{port: 80}]}`
	docs := []string{obs, usp, csp, ngfTopo, other,
		pol(v2, "ObservabilityPolicy", "half", 0, `targetRefs: [`+r1Ref+`, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: nope}]
tracing: {strategy: parent}`),
		pol(ngfV1, "ClientSettingsPolicy", "gone", 0, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: nope}
body: {maxSize: 1m}`),
		pol(ngfV1, "ClientSettingsPolicy", "elsewhere", 0, `targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: eg-gw}
body: {maxSize: 1m}`),
		pol(ngfV1, "UpstreamSettingsPolicy", "idle", 0, `targetRefs: [{group: "", kind: Service, name: unused}]
zoneSize: 1m`),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "half ancestors", ancestorCondList(t, res, "half"), []string{"HTTPRoute default/r1: Accepted=True/Accepted, Programmed=True/Programmed"})
	if p := problemsOf(res, "half"); len(p) != 1 || !strings.HasPrefix(p[0], "spec.targetRefs[1]: HTTPRoute default/nope not found; NGINX Gateway Fabric writes no status entry") {
		t.Errorf("half's problems %q", p)
	}
	want(t, "half", status(t, res, "half", "Accepted"), "True/Accepted")
	for name, says := range map[string]string{
		"gone":      "spec.targetRef: Gateway default/nope not found",
		"elsewhere": "spec.targetRef: Gateway default/eg-gw (GatewayClass eg, controller gateway.envoyproxy.io/gatewayclass-controller) is another implementation's",
		"idle":      "spec.targetRefs[0]: Service default/unused takes effect through no Gateway of NGINX Gateway Fabric",
	} {
		want(t, name+" ancestors", ancestorCondList(t, res, name), []string{})
		if p := problemsOf(res, name); len(p) != 1 || !strings.HasPrefix(p[0], says) {
			t.Errorf("%s's problems %q, want one saying %q", name, p, says)
		}
	}
	// The summary still says why (get and describe show it).
	want(t, "gone", status(t, res, "gone", "Accepted"), "False/TargetNotFound")

	// Once the route is created, an Incremental lists it and the
	// problem goes, as a full computation does.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	created := append(slices.Clone(docs), `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: nope, namespace: default}
spec:
  parentRefs: [{name: g1}]
  hostnames: [nope.example]
  rules: [{backendRefs: [{name: s1, port: 80}]}]`)
	got := in.Compute(decodeDocs(t, created...))
	if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, created...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "half, route created", len(ancestorCondList(t, got, "half")), 2)
	want(t, "half problems, route created", problemsOf(got, "half"), []string(nil))

	// The CRD's annotation gives the TargetNotFound entry back.
	withEntry := strings.Replace(obs, "labels: {gateway.networking.k8s.io/policy: direct}}",
		"labels: {gateway.networking.k8s.io/policy: direct}, annotations: {attache.dev/missing-targets: entry}}", 1)
	docs[0] = withEntry
	res = compute(t, engine.Options{}, docs...)
	want(t, "half ancestors, entry", ancestorCondList(t, res, "half"), []string{
		"HTTPRoute default/r1: Accepted=True/Accepted, Programmed=True/Programmed",
		"HTTPRoute default/nope: Accepted=False/TargetNotFound, Programmed=False/Reconciling"})
	want(t, "half problems, entry", problemsOf(res, "half"), []string(nil))
}

// A missing target takes no place under NGF's 16-ancestor limit: an
// UpstreamSettingsPolicy naming a missing Service first, then a Service
// the routes of 16 Gateways use, is applied and listed at all 16.
// Source: as TestDocsNGFNoStatusForMissingTargets, and policies.go
// (attachPolicyToService: ngfPolicyAncestorsFull counts the entries
// added).
func TestDocsNGFMissingTargetTakesNoPlace(t *testing.T) {
	docs := []string{labelledCRD("gateway.nginx.org", "UpstreamSettingsPolicy", "upstreamsettingspolicies", "direct"),
		"apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: default}\nspec: {ports: [{port: 80}]}"}
	var parents []string
	for i := range 16 {
		docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: g%02d, namespace: default}\nspec: {gatewayClassName: c, listeners: [{name: http, protocol: HTTP, port: 80}]}", i))
		parents = append(parents, fmt.Sprintf("{name: g%02d}", i))
	}
	docs = append(docs, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r1, namespace: default}\nspec: {parentRefs: [%s], rules: [{backendRefs: [{name: s1, port: 80}]}]}", strings.Join(parents, ", ")),
		pol(ngfV1, "UpstreamSettingsPolicy", "zone", 0, `targetRefs: [{group: "", kind: Service, name: missing}, {group: "", kind: Service, name: s1}]
zoneSize: 512k`))
	res := compute(t, engine.Options{}, docs...)
	want(t, "ancestors", len(ancestorsOf(t, res, "zone")), 16)
	for _, ps := range res.Policies {
		for _, c := range ps.Conditions {
			if c.Type == engine.ConditionAncestorLimit {
				t.Errorf("%s: %s", c.Type, c.Message)
			}
		}
	}
}

// NGF's Programmed condition on its settings policies says whether the
// policy is accepted at the ancestor: Programmed=True wherever it is
// accepted, even when a more specific policy overrides it entirely;
// Programmed=False, reason Overridden, where it is Conflicted; reason
// Reconciling where it is Invalid or TargetConflict (and NGF's other
// reasons). Types and reasons as NGF writes them; the messages are
// attache's.
// Source: NGF e55bfe339 internal/controller/status/prepare_requests.go
// (PrepareNGFPolicyRequests, settingsPolicyKinds,
// settingsPolicyProgrammedCondition, ancestorAccepted,
// ancestorConflicted), internal/controller/state/conditions/
// conditions.go (NewSettingsPolicyProgrammed, NewSettingsPolicyOverridden,
// NewSettingsPolicyNotProgrammed).
func TestDocsNGFProgrammedWording(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "ClientSettingsPolicy", "clientsettingspolicies", "inherited")
	g2 := `{group: gateway.networking.k8s.io, kind: Gateway, name: g2}`
	r2 := `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}`
	res := compute(t, engine.Options{}, c, ngfTopo,
		// g2's only route r2 has its own maxSize: g2's policy is beaten
		// in its only context.
		pol(ngfV1, "ClientSettingsPolicy", "on-g2", 0, "targetRef: "+g2+"\nbody: {maxSize: 1m}"),
		pol(ngfV1, "ClientSettingsPolicy", "on-r2", 1, "targetRef: "+r2+"\nbody: {maxSize: 2m}"),
		pol(ngfV1, "ClientSettingsPolicy", "on-r2-newer", 2, "targetRef: "+r2+"\nbody: {maxSize: 3m}"),
		pol(ngfV1, "ClientSettingsPolicy", "bad", 3, "targetRef: "+r1Ref+"\nbody: {maxSize: 1M}"))
	want(t, "on-g2", ancestorCondList(t, res, "on-g2"), []string{"Gateway default/g2: Accepted=True/Accepted, Programmed=True/Programmed"})
	if msg := condition(t, res, "on-g2", "Programmed").Message; !strings.Contains(msg, "Policy is overridden in its only context: body.maxSize beaten by ClientSettingsPolicy default/on-r2") {
		t.Errorf("on-g2's Programmed message %q", msg)
	}
	want(t, "on-r2", ancestorCondList(t, res, "on-r2"), []string{"HTTPRoute default/r2: Accepted=True/Accepted, Programmed=True/Programmed"})
	want(t, "on-r2-newer", ancestorCondList(t, res, "on-r2-newer"), []string{"HTTPRoute default/r2: Accepted=False/Conflicted, Programmed=False/Overridden"})
	want(t, "bad", ancestorCondList(t, res, "bad"), []string{"HTTPRoute default/r1: Accepted=False/Invalid, Programmed=False/Reconciling"})
	want(t, "bad summary", status(t, res, "bad", "Programmed"), "False/Reconciling")

	// TargetConflict (docsTopo: gr1 shares r1's location).
	res = compute(t, engine.Options{}, c, docsTopo, pol(ngfV1, "ClientSettingsPolicy", "on-r1", 0, "targetRef: "+r1Ref+"\nbody: {maxSize: 10m}"))
	want(t, "on-r1", ancestorCondList(t, res, "on-r1"), []string{"HTTPRoute default/r1: Accepted=False/TargetConflict, Programmed=False/Reconciling"})

	// GEP-713's wording where the CRD says so: on-g2 is overridden.
	gep := strings.Replace(c, "labels: {gateway.networking.k8s.io/policy: inherited}}",
		"labels: {gateway.networking.k8s.io/policy: inherited}, annotations: {attache.dev/programmed: gep}}", 1)
	res = compute(t, engine.Options{}, gep, ngfTopo,
		pol(ngfV1, "ClientSettingsPolicy", "on-g2", 0, "targetRef: "+g2+"\nbody: {maxSize: 1m}"),
		pol(ngfV1, "ClientSettingsPolicy", "on-r2", 1, "targetRef: "+r2+"\nbody: {maxSize: 2m}"),
		pol(ngfV1, "ClientSettingsPolicy", "on-r2-newer", 2, "targetRef: "+r2+"\nbody: {maxSize: 3m}"))
	want(t, "on-g2, gep", ancestorCondList(t, res, "on-g2"), []string{"Gateway default/g2: Accepted=True/Accepted, Programmed=False/Overridden"})
	want(t, "on-r2-newer, gep", ancestorCondList(t, res, "on-r2-newer"), []string{"HTTPRoute default/r2: Accepted=False/Conflicted"})
}

// WAFPolicy: inherited, on Gateways and HTTP/GRPC routes; NGF writes every
// valid policy reaching a route (the Gateway's at its server, the route's
// at its location, several on one target side by side: they never
// conflict), so the route's effective policy lists them all (additive);
// a target of another kind is Invalid (not applied), a missing one gets
// no status entry (NGF's functional test: "no ancestor status for a
// policy targeting a nonexistent Gateway").
// Source: NGF e55bfe339 apis/v1alpha1/wafpolicy_types.go (targetRefs,
// inherited label), internal/controller/nginx/config/policies/waf/
// validator.go (Validate: Gateway, HTTPRoute, GRPCRoute; Conflicts false),
// waf/generator.go (GenerateForServer, GenerateForLocation: one file per
// policy), tests/suite/waf_policy_test.go.
func TestDocsNGFWAFPolicy(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited")
	src := func(url string) string {
		return "type: HTTP\npolicySource: {httpSource: {url: '" + url + "'}}"
	}
	res := compute(t, engine.Options{}, c, ngfTopo,
		pol(ngfV1, "WAFPolicy", "gw-waf", 0, "targetRefs: ["+gwRef+"]\n"+src("https://b.example/gw.tgz")),
		pol(ngfV1, "WAFPolicy", "gw-waf-2", 1, "targetRefs: ["+gwRef+"]\n"+src("https://b.example/gw2.tgz")),
		pol(ngfV1, "WAFPolicy", "route-waf", 2, "targetRefs: ["+r1Ref+"]\n"+src("https://b.example/r1.tgz")),
		pol(ngfV1, "WAFPolicy", "on-svc", 3, "targetRefs: [{group: \"\", kind: Service, name: s1}]\n"+src("https://b.example/s.tgz")),
		pol(ngfV1, "WAFPolicy", "on-missing", 4, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: nope}]\n"+src("https://b.example/n.tgz")))
	k := kindOf(t, res, "WAFPolicy")
	want(t, "origin", k.Origins[policy.SettingComposition], policy.FromProfile(profiles.NGF))
	for _, name := range []string{"gw-waf", "gw-waf-2", "route-waf"} {
		want(t, name, status(t, res, name, "Accepted"), "True/Accepted")
	}
	want(t, "on-svc", status(t, res, "on-svc", "Accepted"), "False/Invalid")
	want(t, "on-missing ancestors", ancestorCondList(t, res, "on-missing"), []string{})
	e := effective(t, res, "WAFPolicy", dR1)
	if len(e) != 1 {
		t.Fatalf("effective r1 = %v, want one context", e)
	}
	for _, name := range []string{"default/gw-waf", "default/gw-waf-2", "default/route-waf"} {
		if !strings.Contains(e[0], `"`+name+`"`) {
			t.Errorf("effective r1 %s does not list %s", e[0], name)
		}
	}
}

// A WAFPolicy takes effect through a Gateway only if the NginxProxy the
// Gateway runs with (its own merged over its class's, field by field)
// says waf.enable: true; otherwise NGF does not accept it there (reason
// NginxProxyConfigNotSet, "WAF is not enabled in NginxProxy") and does
// not apply it. A Gateway target is judged even when its Gateway runs
// with no NginxProxy at all; a route target only against one.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/waf/
// validator.go (ValidateGlobalSettings), internal/controller/state/graph/
// policies.go (attachPolicyToGateway, attachPolicyToRoute), nginxproxy.go
// (WAFEnabledForNginxProxy, cleanupWAF).
func TestDocsNGFWAFPolicyNeedsWAFEnabled(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited")
	const src = "type: HTTP\npolicySource: {httpSource: {url: 'https://b.example/p.tgz'}}"
	g2Ref := `{group: gateway.networking.k8s.io, kind: Gateway, name: g2}`
	r2Ref := `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r2}`
	pols := []string{
		pol(ngfV1, "WAFPolicy", "on-g1", 0, "targetRefs: ["+gwRef+"]\n"+src),
		pol(ngfV1, "WAFPolicy", "on-g2", 1, "targetRefs: ["+g2Ref+"]\n"+src),
		pol(ngfV1, "WAFPolicy", "on-r1", 2, "targetRefs: ["+r1Ref+"]\n"+src),
		pol(ngfV1, "WAFPolicy", "on-r2", 3, "targetRefs: ["+r2Ref+"]\n"+src),
	}
	accepted := func(res *engine.Result) map[string]string {
		out := map[string]string{}
		for _, n := range []string{"on-g1", "on-g2", "on-r1", "on-r2"} {
			out[n] = status(t, res, n, "Accepted")
		}
		return out
	}
	const notSet, ok = "False/NginxProxyConfigNotSet", "True/Accepted"
	for _, tc := range []struct {
		name, class, own string // the class's NginxProxy spec ("" none named), g2's own ("" none)
		want             map[string]string
	}{
		// g1 runs with the class's (no waf), g2 with its own over it.
		{"g2's own enables WAF", `{kubernetes: {deployment: {replicas: 1}}}`, `{waf: {enable: true}}`,
			map[string]string{"on-g1": notSet, "on-g2": ok, "on-r1": notSet, "on-r2": ok}},
		// The class enables it; g2's own sets another waf field, merged.
		{"class enables, g2 sets bundleFailOpen", `{waf: {enable: true}}`, `{waf: {bundleFailOpen: true}}`,
			map[string]string{"on-g1": ok, "on-g2": ok, "on-r1": ok, "on-r2": ok}},
		{"g2's own disables it", `{waf: {enable: true}}`, `{waf: {enable: false}}`,
			map[string]string{"on-g1": ok, "on-g2": notSet, "on-r1": ok, "on-r2": notSet}},
		// No NginxProxy at all: a Gateway target is refused, a route's
		// is not judged.
		{"no NginxProxy", "", "",
			map[string]string{"on-g1": notSet, "on-g2": notSet, "on-r1": ok, "on-r2": ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := ngfClass(tc.class)
			if tc.class == "" {
				class = strings.Replace(ngfClass(`{}`), "  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}\n", "", 1)
			}
			topo := ngfTopo
			if tc.own != "" {
				topo = ngfOwnProxy(ngfTopo, tc.own)
			}
			docs := append([]string{c, class, topo}, pols...)
			res := compute(t, engine.Options{}, docs...)
			want(t, "Accepted", accepted(res), tc.want)
			for n, w := range tc.want {
				msg := ancestorMessage(t, res, n)
				if w == notSet && (!strings.Contains(msg, "spec.type: requires spec.waf.enable=true of ") || !strings.HasSuffix(msg, "; not applied")) {
					t.Errorf("%s: message %q", n, msg)
				}
			}
			if tc.class == "" && !strings.Contains(ancestorMessage(t, res, "on-g1"), "an NginxProxy (Gateway default/g1 runs with none") {
				t.Errorf("on-g1: message %q does not say g1 runs with no NginxProxy", ancestorMessage(t, res, "on-g1"))
			}
			// Not applied where refused.
			if tc.want["on-r1"] == notSet {
				for _, e := range effective(t, res, "WAFPolicy", dR1) {
					if strings.Contains(e, "on-r1") || strings.Contains(e, "on-g1") {
						t.Errorf("effective r1 %s holds a refused policy", e)
					}
				}
			}
			// An Incremental agrees after a policy edit.
			in := engine.NewIncremental(engine.Options{})
			in.Compute(decodeDocs(t, docs...))
			edited := slices.Clone(docs)
			edited[len(edited)-1] = pol(ngfV1, "WAFPolicy", "on-r2", 3, "targetRefs: ["+r2Ref+"]\ntype: N1C\npolicySource: {n1cSource: {url: 'https://n1c.example'}}")
			if a, b := dump(t, in.Compute(decodeDocs(t, edited...))), dump(t, engine.Compute(decodeDocs(t, edited...), engine.Options{})); a != b {
				t.Fatal(firstDiff(a, b))
			}
		})
	}
}

// A WAFPolicy on a route of two Gateways, one of which runs with an
// NginxProxy that does not enable WAF: NGF marks it invalid for that
// Gateway only (InvalidForGateways) and writes it for the other; the
// route's ancestor is not accepted, saying so. On a route of that Gateway
// alone it applies nowhere. WAFPolicies take part in no conflict, so one
// refused everywhere plays no part at all.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (attachPolicyToRoute: ValidateGlobalSettings per parent Gateway,
// InvalidForGateways), dataplane/configuration.go (buildPolicies: a
// policy invalid for a Gateway left out of its configuration only),
// policies/waf/validator.go (ValidateGlobalSettings, Conflicts false).
func TestDocsNGFWAFPolicyRefusedByOneGateway(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited")
	const src = "type: HTTP\npolicySource: {httpSource: {url: 'https://b.example/p.tgz'}}"
	r3, r3Ref, dR3 := ngfR3, ngfR3Ref, ngfDR3
	g1 := []topology.Ref{{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g1"}}
	// g1 runs with the class's NginxProxy (no WAF), g2 with its own
	// enabling it.
	docs := []string{c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), ngfOwnProxy(ngfTopo, `{waf: {enable: true}}`), r3,
		pol(ngfV1, "WAFPolicy", "on-r3", 0, "targetRefs: ["+r3Ref+"]\n"+src),
		pol(ngfV1, "WAFPolicy", "on-r1", 1, "targetRefs: ["+r1Ref+"]\n"+src),
	}
	res := compute(t, engine.Options{}, docs...)
	want(t, "on-r3", status(t, res, "on-r3", "Accepted"), "False/NginxProxyConfigNotSet")
	if msg := ancestorMessage(t, res, "on-r3"); !strings.HasSuffix(msg, "; not applied through Gateway default/g1, applied through its other Gateways") {
		t.Errorf("on-r3's message %q", msg)
	}
	if st := policyStatusOf(t, res, "on-r3"); !slices.Equal(st.NotAppliedVia[dR3], g1) {
		t.Errorf("on-r3 NotAppliedVia %v, want g1", st.NotAppliedVia)
	}
	// In r3's contexts through g2 only (g2 applies it), its entry
	// naming no Gateway: no path of those crosses g1.
	want(t, "r3 by Gateway", contextsByGateway(res, "WAFPolicy", dR3), map[string][]string{"g2": {"on-r3:full"}})
	for _, e := range res.Effective {
		for _, ctx := range e.Contexts {
			for _, s := range ctx.Stack {
				if s.NotAppliedVia != nil {
					t.Errorf("%s at %s: NotAppliedVia %v", s.Policy, e.Target, s.NotAppliedVia)
				}
			}
		}
	}
	// r1 is on g1 only: refused there, applied nowhere.
	want(t, "on-r1", status(t, res, "on-r1", "Accepted"), "False/NginxProxyConfigNotSet")
	if msg := ancestorMessage(t, res, "on-r1"); !strings.HasSuffix(msg, "; not applied") {
		t.Errorf("on-r1's message %q", msg)
	}
	want(t, "effective r1", effective(t, res, "WAFPolicy", dR1), []string(nil))
	if st := policyStatusOf(t, res, "on-r1"); st.NotAppliedVia != nil {
		t.Errorf("on-r1 NotAppliedVia %v, want none (not applied at all)", st.NotAppliedVia)
	}
	// An Incremental agrees, also once g1's NginxProxy (the class's)
	// enables WAF.
	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	moved := slices.Clone(docs)
	moved[1] = ngfClass(`{waf: {enable: true}}`)
	got := in.Compute(decodeDocs(t, moved...))
	if a, b := dump(t, got), dump(t, engine.Compute(decodeDocs(t, moved...), engine.Options{})); a != b {
		t.Fatal(firstDiff(a, b))
	}
	want(t, "on-r3 once g1 enables WAF", status(t, got, "on-r3", "Accepted"), "True/Accepted")
}

// With what a Gateway refuses read per policy (here, by annotation, only
// a WAFPolicy with security logs needs WAF enabled), a route's level
// through the refusing Gateway keeps the policies it does not refuse;
// an Incremental agrees as refused and accepted policies come and go.
func TestDocsNGFWAFPolicyPartlyRefusedLevel(t *testing.T) {
	c := strings.Replace(labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited"),
		"labels: {gateway.networking.k8s.io/policy: inherited}",
		`labels: {gateway.networking.k8s.io/policy: inherited}, annotations: {attache.dev/requires: "securityLogs requires parameters:waf.enable=true reason=NginxProxyConfigNotSet"}`, 1)
	const src = "type: HTTP\npolicySource: {httpSource: {url: 'https://b.example/p.tgz'}}"
	const logs = "\nsecurityLogs: [{destination: {type: stderr}}]"
	r3, r3Ref, dR3 := ngfR3, ngfR3Ref, ngfDR3
	base := []string{c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), ngfOwnProxy(ngfTopo, `{waf: {enable: true}}`), r3}
	plain := pol(ngfV1, "WAFPolicy", "plain", 0, "targetRefs: ["+r3Ref+"]\n"+src)
	logged := pol(ngfV1, "WAFPolicy", "logged", 1, "targetRefs: ["+r3Ref+"]\n"+src+logs)
	logged2 := pol(ngfV1, "WAFPolicy", "logged2", 2, "targetRefs: ["+r3Ref+"]\n"+src+logs)
	onG1 := pol(ngfV1, "WAFPolicy", "on-g1", 3, "targetRefs: ["+gwRef+"]\n"+src)
	plain2 := pol(ngfV1, "WAFPolicy", "plain2", 4, "targetRefs: ["+r3Ref+"]\n"+src)
	res := compute(t, engine.Options{}, append(slices.Clone(base), plain, logged, onG1)...)
	want(t, "logged", status(t, res, "logged", "Accepted"), "False/NginxProxyConfigNotSet")
	want(t, "plain", status(t, res, "plain", "Accepted"), "True/Accepted")
	want(t, "r3 by Gateway", contextsByGateway(res, "WAFPolicy", dR3),
		map[string][]string{"g1": {"on-g1:full", "plain:full"}, "g2": {"logged:full", "plain:full"}})

	in := engine.NewIncremental(engine.Options{})
	// Input problems name their document by position, which moves as
	// policies come and go: that is left out of the comparison.
	positions := regexp.MustCompile(`(?m)^.*"source": ".*$`)
	for i, step := range [][]string{
		{plain},                         // nothing refused
		{plain, logged},                 // a refused one comes: g1's level without it
		{plain, logged, logged2, onG1},  // another, and g1's own
		{logged, logged2, onG1},         // g1 refuses all of r3's
		{plain2, logged, logged2, onG1}, // one it does not refuse comes there
		{plain, onG1},                   // none refused any more
		{logged, onG1},                  // one again, the only one on r3
		{logged, onG1, plain2},          // one g1 does not refuse joins it
	} {
		docs := append(slices.Clone(base), step...)
		got := in.Compute(decodeDocs(t, docs...))
		a := positions.ReplaceAllString(dump(t, got), "")
		b := positions.ReplaceAllString(dump(t, engine.Compute(decodeDocs(t, docs...), engine.Options{})), "")
		if a != b {
			t.Fatalf("step %d: %s", i, firstDiff(a, b))
		}
		if (i >= 2 && i <= 4 || i == 7) && in.LastChange().Full {
			t.Errorf("step %d: computed whole (%s)", i, in.LastChange().Reason)
		}
	}
}

// A PayloadProcessor's auth token Secret (its namespace, key token) must
// resolve, the token not empty once trimmed: missing, without the key, or
// blank, NGF marks the policy invalid and applies it nowhere; with it,
// the policy applies.
// Source: NGF e55bfe339 internal/controller/state/graph/payloadprocessor.go
// (resolveExtProcessAuthToken: "auth token Secret %s/%s not found",
// "missing %q key", "has empty %q key" after strings.TrimSpace;
// secrets.GuardrailsTokenKey "token").
func TestDocsNGFPayloadProcessorAuthToken(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	svc := "\n---\napiVersion: v1\nkind: Service\nmetadata: {name: guard, namespace: default}\nspec: {ports: [{port: 9000}]}\n"
	secretWith := func(key, b64 string) string {
		return "\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: guard-token, namespace: default}\ndata: {" + key + ": \"" + b64 + "\"}\n"
	}
	secret := func(key string) string { return secretWith(key, "dG9rZW4=") }
	pp := pol(ngfV1, "PayloadProcessor", "pp", 0, "targetRef: "+r1Ref+
		"\nprocessors: [{type: ExtProcess, extProcess: {backendRef: {name: guard, port: 9000}, authTokenRef: {name: guard-token}}}]")
	for _, tc := range []struct{ name, extra, accepted, msg string }{
		{"missing", "", "False/Invalid", "spec.processors[0].extProcess.authTokenRef: Secret default/guard-token not found"},
		{"without the key", secret("other"), "False/Invalid", "spec.processors[0].extProcess.authTokenRef: Secret default/guard-token has no key token"},
		{"with the key", secret("token"), "True/Accepted", ""},
		// Trimmed, then refused when empty (since session 32).
		{"empty", secretWith("token", ""), "False/Invalid", "spec.processors[0].extProcess.authTokenRef: Secret default/guard-token: token is empty (or white space only)"},
		{"white space", secretWith("token", "IAkK"), "False/Invalid", "token is empty (or white space only)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, ngfFlagsOn, c, ngfClass(`{}`), ngfTopo+svc+tc.extra, pp)
			want(t, "Accepted", status(t, res, "pp", "Accepted"), tc.accepted)
			if tc.msg != "" {
				if m := ancestorMessage(t, res, "pp"); !strings.Contains(m, tc.msg) || !strings.HasSuffix(m, "; not applied") {
					t.Errorf("message %q, want %q, not applied", m, tc.msg)
				}
				want(t, "effective r1", effective(t, res, "PayloadProcessor", dR1), []string(nil))
			} else if len(effective(t, res, "PayloadProcessor", dR1)) != 1 {
				t.Errorf("effective r1: %v, want the policy", effective(t, res, "PayloadProcessor", dR1))
			}
		})
	}
}

// A PayloadProcessor whose ExtProcess backend is an ExternalName Service
// needs a DNS resolver in the NginxProxy each Gateway runs with; without
// one, or without an NginxProxy, NGF marks it invalid for that Gateway
// (Invalid, "PayloadProcessor ExternalName backend requires ...") and
// does not apply it there; a backend of another type needs none. Still
// valid for NGF, such a policy conflicts with a newer one on its target
// (markConflictedPolicies runs before the Gateways are judged).
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (payloadProcessorResolverMissing in attachPolicyToGateway and
// attachPolicyToRoute), payloadprocessor.go (resolvePayloadProcessor).
func TestDocsNGFPayloadProcessorExternalNameNeedsResolver(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	svcs := `
---
apiVersion: v1
kind: Service
metadata: {name: guard-ext, namespace: default}
spec: {type: ExternalName, externalName: guard.example.com, ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: guard, namespace: default}
spec: {ports: [{port: 9000}]}
`
	g2Ref := `{group: gateway.networking.k8s.io, kind: Gateway, name: g2}`
	proc := func(svc string) string {
		return "processors: [{type: ExtProcess, extProcess: {backendRef: {name: " + svc + ", port: 9000}}}]"
	}
	pols := []string{
		pol(ngfV1, "PayloadProcessor", "ext-on-g1", 0, "targetRef: "+gwRef+"\n"+proc("guard-ext")),
		pol(ngfV1, "PayloadProcessor", "ext-on-g2", 1, "targetRef: "+g2Ref+"\n"+proc("guard-ext")),
		pol(ngfV1, "PayloadProcessor", "ext-on-r1", 2, "targetRef: "+r1Ref+"\n"+proc("guard-ext")),
		pol(ngfV1, "PayloadProcessor", "cluster-on-r1", 3, "targetRef: "+r1Ref+"\n"+proc("guard")),
	}
	const bad, ok = "False/Invalid", "True/Accepted"
	for _, tc := range []struct {
		name, class, own string
		want             map[string]string
	}{
		// g1 runs with the class's (no resolver), g2 with its own over it.
		{"g2's own has a resolver", `{kubernetes: {deployment: {replicas: 1}}}`, `{dnsResolver: {addresses: [{type: IPAddress, value: 10.0.0.53}]}}`,
			map[string]string{"ext-on-g1": bad, "ext-on-g2": ok, "ext-on-r1": bad, "cluster-on-r1": "False/Conflicted"}},
		{"no NginxProxy", "", "",
			map[string]string{"ext-on-g1": bad, "ext-on-g2": bad, "ext-on-r1": bad, "cluster-on-r1": "False/Conflicted"}},
		// The cluster Service first: it needs no resolver.
		{"a cluster Service", "", "",
			map[string]string{"cluster-on-r1": ok}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class := ngfClass(tc.class)
			if tc.class == "" {
				class = strings.Replace(ngfClass(`{}`), "  parametersRef: {group: gateway.nginx.org, kind: NginxProxy, name: proxy, namespace: ngf}\n", "", 1)
			}
			topo := ngfTopo + svcs
			if tc.own != "" {
				topo = ngfOwnProxy(ngfTopo, tc.own) + svcs
			}
			ps := pols
			if tc.name == "a cluster Service" {
				ps = pols[3:]
			}
			res := compute(t, ngfFlagsOn, append([]string{c, class, topo}, ps...)...)
			if tc.name == "no NginxProxy" {
				// Nothing of the kind applies at r1.
				want(t, "effective r1", effective(t, res, "PayloadProcessor", dR1), []string(nil))
			}
			for n, w := range tc.want {
				want(t, n, status(t, res, n, "Accepted"), w)
				if msg := ancestorMessage(t, res, n); w == bad && !strings.Contains(msg, "spec.processors[0].extProcess.backendRef: requires spec.dnsResolver of ") {
					t.Errorf("%s: message %q", n, msg)
				}
			}
		})
	}
}

// contextsByGateway lists, per Gateway on the paths of kind's contexts at
// target, the stack entries of those contexts as "policy:outcome",
// sorted; a context whose paths cross no Gateway is under "".
func contextsByGateway(res *engine.Result, kind string, target topology.Ref) map[string][]string {
	out := map[string][]string{}
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, ctx := range e.Contexts {
			var entries []string
			for _, s := range ctx.Stack {
				entries = append(entries, s.Policy.Name+":"+s.Outcome)
			}
			ctx.Paths(func(p []topology.Ref) bool {
				gw := ""
				for _, r := range p {
					if r.Kind == "Gateway" && !r.IsSection() {
						gw = r.Name
					}
				}
				for _, x := range entries {
					if !slices.Contains(out[gw], x) {
						out[gw] = append(out[gw], x)
					}
				}
				return true
			})
		}
	}
	for gw := range out {
		slices.Sort(out[gw])
	}
	return out
}

// NGF picks a route's PayloadProcessor per Gateway: the route's own where
// it is valid for that Gateway, else the Gateway's. A route policy
// refused through g1 (an ExternalName backend, and g1's NginxProxy has no
// DNS resolver) leaves g1's own policy in effect on the route through
// g1; through g2, whose NginxProxy has one, the route's applies.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (resolveEffectivePayloadProcessors, firstValidPayloadProcessorForGateway:
// a route policy in InvalidForGateways is skipped for that Gateway).
func TestDocsNGFPayloadProcessorRefusedFallsBackToGateway(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited")
	topo := ngfOwnProxy(ngfTopo, `{dnsResolver: {addresses: [{type: IPAddress, value: 10.0.0.53}]}}`) + "\n---" + ngfR3 + `
---
apiVersion: v1
kind: Service
metadata: {name: guard-ext, namespace: default}
spec: {type: ExternalName, externalName: guard.example.com, ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: guard, namespace: default}
spec: {ports: [{port: 9000}]}
`
	proc := func(svc string) string {
		return "processors: [{type: ExtProcess, extProcess: {backendRef: {name: " + svc + ", port: 9000}}}]"
	}
	dR3 := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "default", Name: "r3"}
	gwpp := pol(ngfV1, "PayloadProcessor", "gwpp", 0, "targetRef: "+gwRef+"\n"+proc("guard"))
	rpp := pol(ngfV1, "PayloadProcessor", "rpp", 1, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r3}\n"+proc("guard-ext"))
	docs := []string{c, ngfClass(`{kubernetes: {deployment: {replicas: 1}}}`), topo, gwpp, rpp}
	res := compute(t, ngfFlagsOn, docs...)
	want(t, "r3 by Gateway", contextsByGateway(res, "PayloadProcessor", dR3), map[string][]string{"g1": {"gwpp:full"}, "g2": {"rpp:full"}})
	want(t, "gwpp", status(t, res, "gwpp", "Accepted"), "True/Accepted")
	if st := policyStatusOf(t, res, "gwpp"); st.Reach.None != 0 {
		t.Errorf("gwpp is beaten somewhere: %+v", st.Reach)
	}
	want(t, "rpp", status(t, res, "rpp", "Accepted"), "False/Invalid")
	if msg := ancestorMessage(t, res, "rpp"); !strings.HasSuffix(msg, "; not applied through Gateway default/g1, applied through its other Gateways") {
		t.Errorf("rpp's message %q", msg)
	}
	// Its entry through g2 names no Gateway: no path of that context
	// crosses g1.
	for _, e := range res.Effective {
		for _, ctx := range e.Contexts {
			for _, s := range ctx.Stack {
				if s.NotAppliedVia != nil {
					t.Errorf("%s at %s: NotAppliedVia %v", s.Policy, e.Target, s.NotAppliedVia)
				}
			}
		}
	}

	// An Incremental agrees when rpp comes and goes.
	without := docs[:4]
	incrementalAgrees(t, ngfFlagsOn, without, docs, without)
}

// The Secrets a WAFPolicy names for fetching its bundles must resolve:
// the auth Secret (a token, or a username), the TLS CA Secret (ca.crt),
// for the policy and for its security logs; otherwise NGF marks it
// invalid and does not apply it (its ResolvedRefs=False InvalidRef; attache:
// Invalid, not applied, naming the reference).
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (processWAFPolicies, fetchPolicyBundle, fetchSecurityLogBundles,
// resolveBundleAuth, resolveTLSCA; policy.Valid = false),
// dataplane/configuration.go (buildPolicies skips invalid policies),
// graph/shared/secrets/secrets.go (token, username, password, ca.crt).
func TestDocsNGFWAFPolicySecrets(t *testing.T) {
	c := labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited")
	secrets := `
---
apiVersion: v1
kind: Secret
metadata: {name: tok, namespace: default}
data: {token: eA==}
---
apiVersion: v1
kind: Secret
metadata: {name: ca, namespace: default}
data: {ca.crt: eA==}
`
	src := func(extra string) string {
		return "type: HTTP\npolicySource: {httpSource: {url: 'https://b.example/p.tgz'}" + extra + "}"
	}
	res := compute(t, engine.Options{}, c, ngfTopo+secrets,
		pol(ngfV1, "WAFPolicy", "ok", 0, "targetRefs: ["+gwRef+"]\n"+src(", auth: {secretRef: {name: tok}}, tlsSecret: {name: ca}")),
		pol(ngfV1, "WAFPolicy", "no-auth", 1, "targetRefs: ["+gwRef+"]\n"+src(", auth: {secretRef: {name: absent}}")),
		pol(ngfV1, "WAFPolicy", "ca-no-key", 2, "targetRefs: ["+gwRef+"]\n"+src(", tlsSecret: {name: tok}")),
		pol(ngfV1, "WAFPolicy", "log-no-ca", 3, "targetRefs: ["+r1Ref+"]\n"+src("")+
			"\nsecurityLogs: [{logSource: {httpSource: {url: 'https://b.example/l.tgz'}, tlsSecret: {name: absent}}}]"))
	want(t, "ok", status(t, res, "ok", "Accepted"), "True/Accepted")
	for name, msg := range map[string]string{
		"no-auth":   "spec.policySource.auth.secretRef: Secret default/absent not found",
		"ca-no-key": "spec.policySource.tlsSecret: Secret default/tok has no key ca.crt",
		"log-no-ca": "spec.securityLogs[0].logSource.tlsSecret: Secret default/absent not found",
	} {
		want(t, name, status(t, res, name, "Accepted"), "False/Invalid")
		if got := ancestorMessage(t, res, name); !strings.Contains(got, msg) || !strings.HasSuffix(got, "; not applied") {
			t.Errorf("%s: message %q, want it to say %q, not applied", name, got, msg)
		}
	}
	for _, e := range effective(t, res, "WAFPolicy", dR1) {
		if strings.Contains(e, "no-auth") || strings.Contains(e, "ca-no-key") || strings.Contains(e, "log-no-ca") {
			t.Errorf("effective r1 %s holds a policy whose Secrets do not resolve", e)
		}
	}
}
