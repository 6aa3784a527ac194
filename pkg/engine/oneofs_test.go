package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// Gloo Gateway merges options by Go struct field, and a protobuf oneof is
// one field: the winning side's member takes the whole oneof, the losing
// side's other members are dropped, never kept beside it.
// Source: solo-io/gloo 8d57572e55 projects/gloo/api/v1/route_options.proto
// (oneof host_rewrite_type: host_rewrite, auto_host_rewrite,
// host_rewrite_path_regex, host_rewrite_header), projects/gloo/pkg/utils/
// merge.go (MergeRouteOptionsWithOverrides, ShallowMergeRouteOptions: one
// reflect field per oneof), projects/gateway2/translator/plugins/
// routeoptions/route_options_plugin.go (mergeOptionsForRoute: the parent's
// options dst, the child's src).

// Across delegation the parent's hostRewrite takes the oneof from the
// child's autoHostRewrite; with enable-policy-overrides naming the oneof,
// the child's autoHostRewrite takes it whole.
func TestGlooRouteOptionDelegationOneof(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	r1 := rule("route-a", "r1")
	r1.Namespace = "a"
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want, lost  []string
	}{
		{"the parent wins the oneof", nil,
			[]string{`{"options":{"hostRewrite":"parent.example"}}`},
			[]string{"route-a-opt: options.autoHostRewrite to example-opt"}},
		{"the override names the oneof: the child's member wins it", map[string]string{"example-route": "hostRewriteType"},
			[]string{`{"options":{"autoHostRewrite":true}}`},
			[]string{"example-opt: options.hostRewrite to route-a-opt"}},
		{"the override names another option: the parent still wins the oneof", map[string]string{"example-route": "timeout"},
			[]string{`{"options":{"hostRewrite":"parent.example"}}`},
			[]string{"route-a-opt: options.autoHostRewrite to example-opt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, c, glooDelegTopo(tc.annotations),
				routeOption("example-opt", "infra", "example-route", 0, `{hostRewrite: parent.example}`),
				routeOption("route-a-opt", "a", "route-a", 1, `{autoHostRewrite: true}`))
			want(t, "route-a#r1", effective(t, res, "RouteOption", r1), tc.want)
			want(t, "lost", lostAt(t, res, "RouteOption", r1), tc.lost)
			if len(res.Problems) > 0 {
				t.Errorf("problems: %v", res.Problems)
			}
		})
	}
}

// Two RouteOptions on one route: the older's member takes the oneof (its
// options merged first, GetRouteOptionForRouteRule), the newer's other
// member is lost to it, the newer's other options still apply; a newer
// RouteOption with a member of another oneof is untouched.
func TestGlooRouteOptionsOneofOldestFirst(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "RouteOption", "older", 0, `targetRefs: [`+r1Ref+`]
options: {hostRewrite: a.example}`),
		pol(glooV, "RouteOption", "newer", 1, `targetRefs: [`+r1Ref+`]
options: {autoHostRewrite: true, timeout: 3s}`),
		pol(glooV, "RouteOption", "newest", 2, `targetRefs: [`+r1Ref+`]
options: {hostRewritePathRegex: {pattern: {regex: "^/(.+)$"}, substitution: \1.example}, rateLimitConfigs: {refs: [{name: rl, namespace: default}]}}`))
	want(t, "effective", effective(t, res, "RouteOption", rule("r1", "first")),
		[]string{`{"options":{"hostRewrite":"a.example","rateLimitConfigs":{"refs":[{"name":"rl","namespace":"default"}]},"timeout":"3s"}}`})
	want(t, "lost", lostAt(t, res, "RouteOption", rule("r1", "first")), []string{
		"newer: options.autoHostRewrite to older",
		"newest: options.hostRewritePathRegex.pattern.regex to older",
		"newest: options.hostRewritePathRegex.substitution to older",
	})
	want(t, "older", status(t, res, "older", "Programmed"), "True/Programmed")
	want(t, "newer", status(t, res, "newer", "Programmed"), "True/PartiallyProgrammed")
	want(t, "newest", status(t, res, "newest", "Programmed"), "True/PartiallyProgrammed")
}

// A RouteOption setting two members of one oneof itself keeps the one
// declared last in route_options.proto (autoHostRewrite after
// hostRewrite), as Gloo's protobuf decoding does; the other is reported
// ignored; the option applies, and meets another on the route as usual.
// Source: solo-io/gloo 8d57572e55 projects/gateway/pkg/api/v1/kube/apis/
// gateway.solo.io/v1/types.go (UnmarshalJSON: protoutils.UnmarshalResource,
// golang/protobuf jsonpb: members set in declaration order),
// projects/gloo/api/v1/route_options.proto (oneof host_rewrite_type).
func TestGlooRouteOptionTwoMembersLastDeclared(t *testing.T) {
	c := crd("gateway.solo.io", "RouteOption", "routeoptions")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "RouteOption", "both", 0, `targetRefs: [`+r1Ref+`]
options: {hostRewrite: a.example, autoHostRewrite: true}`),
		pol(glooV, "RouteOption", "other", 1, `targetRefs: [`+r1Ref+`]
options: {timeout: 3s}`))
	want(t, "both", status(t, res, "both", "Accepted"), "True/Accepted")
	want(t, "effective", effective(t, res, "RouteOption", rule("r1", "first")), []string{`{"options":{"autoHostRewrite":true,"timeout":"3s"}}`})
	said := false
	for _, p := range res.Problems {
		if p.Object.Name == "both" && p.Field == "spec.options" && strings.Contains(p.Message, "decodes the one declared last only, autoHostRewrite; hostRewrite ignored") {
			said = true
		}
	}
	if !said {
		t.Errorf("no problem says hostRewrite is ignored: %v", res.Problems)
	}
}

// VirtualHostOption: the listener's ratelimit takes the oneof from the
// Gateway's rateLimitConfigs (ShallowMergeVirtualHostOptions, the
// listener's first); the other listener keeps the Gateway's.
// Source: solo-io/gloo 8d57572e55 projects/gloo/api/v1/
// virtual_host_options.proto (oneof rate_limit_config_type),
// virtualhostoptions/virtualhost_options_plugin.go (ApplyListenerPlugin).
func TestGlooVirtualHostOptionOneof(t *testing.T) {
	c := crd("gateway.solo.io", "VirtualHostOption", "virtualhostoptions")
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(glooV, "VirtualHostOption", "gw", 0, `targetRefs: [`+gwRef+`]
options: {rateLimitConfigs: {refs: [{name: rl, namespace: default}]}, jwtStaged: {beforeExtAuth: {providers: {}}}}`),
		pol(glooV, "VirtualHostOption", "listener", 1, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1, sectionName: http}]
options: {ratelimit: {rateLimits: [{actions: [{genericKey: {descriptorValue: x}}]}]}, jwt: {providers: {}}}`))
	want(t, "listener http", effective(t, res, "VirtualHostOption", dListener("http")),
		[]string{`{"options":{"jwt":{"providers":{}},"ratelimit":{"rateLimits":[{"actions":[{"genericKey":{"descriptorValue":"x"}}]}]}}}`})
	want(t, "lost at http", lostAt(t, res, "VirtualHostOption", dListener("http")), []string{
		"gw: options.jwtStaged.beforeExtAuth.providers to listener",
		"gw: options.rateLimitConfigs.refs to listener",
	})
	want(t, "listener admin", effective(t, res, "VirtualHostOption", dListener("admin")),
		[]string{`{"options":{"jwtStaged":{"beforeExtAuth":{"providers":{}}},"rateLimitConfigs":{"refs":[{"name":"rl","namespace":"default"}]}}}`})
	want(t, "gw", status(t, res, "gw", "Programmed"), "True/PartiallyProgrammed")
}

// A oneof declared by annotation on a kind of merge-disjoint policies is
// one field: of two policies at one target setting different members,
// the newer sets a field the older sets, and is rejected there; one
// setting another field merges.
func TestOneofMergeDisjointAnnotation(t *testing.T) {
	c := strings.Replace(crd("example.com", "RewritePolicy", "rewritepolicies"), "metadata: {name: rewritepolicies.example.com}", `metadata:
  name: rewritepolicies.example.com
  labels: {gateway.networking.k8s.io/policy: direct}
  annotations: {attache.dev/same-level: merge-disjoint, attache.dev/target-kinds: HTTPRoute, attache.dev/oneofs: "rewrite.host|autoHost"}`, 1)
	const v = "example.com/v1alpha1"
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(v, "RewritePolicy", "a", 0, "targetRefs: ["+r1Ref+"]\nrewrite: {host: a.example}"),
		pol(v, "RewritePolicy", "b", 1, "targetRefs: ["+r1Ref+"]\nrewrite: {autoHost: true}"),
		pol(v, "RewritePolicy", "c", 2, "targetRefs: ["+r1Ref+"]\nrewrite: {path: /c}"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	want(t, "effective", effective(t, res, "RewritePolicy", rule("r1", "")), []string{`{"rewrite":{"host":"a.example","path":"/c"}}`})
	want(t, "b", status(t, res, "b", "Accepted"), "False/Conflicted")
	want(t, "c", status(t, res, "c", "Accepted"), "True/Accepted")
}
