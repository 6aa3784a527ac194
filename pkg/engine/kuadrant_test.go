package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kuadrantTopo: Gateway g (namespace default) with listeners a
// (a.example.com:80), b (b.example.com:80), admin (8080, no hostname) and
// tcp (TCP 9000), none admitting other namespaces (allowedRoutes default
// Same). HTTPRoute ra (hostname a.example.com, parentRef g) attaches to a
// and admin by Gateway API's rules; HTTPRoute rb names listener b on port
// 8080, which b is not on, so it attaches nowhere; HTTPRoute far, in
// namespace other, attaches nowhere. Gateway ls-gw admits ListenerSets;
// HTTPRoute rl attaches to the listener of ListenerSet ls below it.
const kuadrantTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: b, protocol: HTTP, port: 80, hostname: b.example.com}
  - {name: admin, protocol: HTTP, port: 8080}
  - {name: tcp, protocol: TCP, port: 9000}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ra, namespace: default}
spec:
  parentRefs: [{name: g}]
  hostnames: [a.example.com]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: default}
spec:
  parentRefs: [{name: g, sectionName: b, port: 8080}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: far, namespace: other}
spec:
  parentRefs: [{name: g, namespace: default}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ls-gw, namespace: default}
spec:
  gatewayClassName: c
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: ls-gw}
  listeners: [{name: extra, protocol: HTTP, port: 8081}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rl, namespace: default}
spec:
  parentRefs: [{kind: ListenerSet, name: ls}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: other}
spec: {ports: [{name: http, port: 80}]}
`

func kListener(gw, l string) string {
	return `{group: gateway.networking.k8s.io, kind: Gateway, name: ` + gw + `, sectionName: ` + l + `}`
}

// rlpCRD is Kuadrant's RateLimitPolicy CRD as shipped (labelled
// inherited), with the annotations given.
func rlpCRD(annotations ...string) string {
	if len(annotations) == 0 {
		return labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited")
	}
	return declaredCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited", annotations...)
}

// Kuadrant's policy-machinery links a route below every listener of the
// Gateway its parentRef names (the listener a sectionName names), without
// Gateway API's checks (port, allowedRoutes, hostnames, protocol), and
// below no ListenerSet: Kuadrant computes effective policies along those
// paths. A RateLimitPolicy on listener b thus reaches ra, rb and far,
// none of which attaches to b; one on the TCP listener reaches ra too;
// one on ls-gw reaches nothing (rl hangs below a ListenerSet). With
// attache.dev/route-parents: admitted, paths are Gateway API's.
// Source: PM 64133472 machinery/gateway_api_topology.go
// (findListenerFromParentRefFunc); KO ae698811
// effective_ratelimit_policies_reconciler.go (Paths(gatewayClass, rule)).
func TestKuadrantRouteParentRefs(t *testing.T) {
	const v = "kuadrant.io/v1"
	pols := []string{
		pol(v, "RateLimitPolicy", "on-b", 0, "targetRef: "+kListener("g", "b")+"\nlimits: {on-b: {rates: [{limit: 1, window: 1m}]}}"),
		pol(v, "RateLimitPolicy", "on-tcp", 1, "targetRef: "+kListener("g", "tcp")+"\nlimits: {on-tcp: {rates: [{limit: 2, window: 1m}]}}"),
		pol(v, "RateLimitPolicy", "on-ls-gw", 2, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: ls-gw}\nlimits: {on-ls-gw: {rates: [{limit: 3, window: 1m}]}}"),
	}
	onB := `{"limits":{"on-b":{"rates":[{"limit":1,"window":"1m"}]}}}`
	onTCP := `{"limits":{"on-tcp":{"rates":[{"limit":2,"window":"1m"}]}}}`
	onLsGw := `{"limits":{"on-ls-gw":{"rates":[{"limit":3,"window":"1m"}]}}}`
	far := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "other", Name: "far", SectionName: "only"}
	for _, tc := range []struct {
		name        string
		crd         string
		ra, rb, fr  []string
		rl          []string
		programmed  map[string]string
		throughB    int
		routeParent string
	}{
		{"profile: parent-refs", rlpCRD(), []string{onB, onTCP}, []string{onB}, []string{onB, onTCP}, nil,
			map[string]string{"on-b": "True/Programmed", "on-tcp": "True/Programmed", "on-ls-gw": "False/Unknown"}, 3, "parent-refs"},
		{"annotation: admitted", rlpCRD("attache.dev/route-parents: admitted"), nil, nil, nil, []string{onLsGw},
			map[string]string{"on-b": "False/Unknown", "on-tcp": "False/Unknown", "on-ls-gw": "True/Programmed"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, append([]string{tc.crd, kuadrantTopo}, pols...)...)
			for _, p := range res.Problems {
				t.Errorf("problem: %v", p)
			}
			want(t, "ra", effective(t, res, "RateLimitPolicy", rule("ra", "only")), tc.ra)
			want(t, "rb", effective(t, res, "RateLimitPolicy", rule("rb", "only")), tc.rb)
			want(t, "far", effective(t, res, "RateLimitPolicy", far), tc.fr)
			want(t, "rl", effective(t, res, "RateLimitPolicy", rule("rl", "only")), tc.rl)
			for name, w := range tc.programmed {
				want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
			}
			// The paths through listener b are found from it.
			b := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "g", SectionName: "b"}
			want(t, "contexts through listener b", len(res.ContextsThrough(b)), tc.throughB)
			want(t, "routeParents", kindOf(t, res, "RateLimitPolicy").RouteParentRefs, tc.routeParent != "")
		})
	}
}

// The routes' unadmitted parents recompute as Compute does when a policy
// on a listener they name comes and goes, incrementally.
func TestKuadrantRouteParentRefsIncremental(t *testing.T) {
	const v = "kuadrant.io/v1"
	base := []string{rlpCRD(), kuadrantTopo}
	onB := pol(v, "RateLimitPolicy", "on-b", 0, "targetRef: "+kListener("g", "b")+"\nlimits: {on-b: {rates: [{limit: 1, window: 1m}]}}")
	in := engine.NewIncremental(engine.Options{})
	for i, docs := range [][]string{base, append(slices.Clone(base), onB), base, append(slices.Clone(base), onB)} {
		objs := decodeDocs(t, docs...)
		got := in.Compute(objs)
		if i > 0 && in.LastChange().Full {
			t.Errorf("step %d recomputed in full: %s", i, in.LastChange().Reason)
		}
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
		if n := len(effective(t, got, "RateLimitPolicy", rule("rb", "only"))); n != i%2 {
			t.Errorf("step %d: rb has %d contexts, want %d", i, n, i%2)
		}
	}
}

// kuadrantReadyTopo: GatewayClass c of Istio's controller; Gateway g with
// listeners a and c2 Programmed, b not (per its status). HTTPRoutes on
// listener a: ok (Accepted by g from Istio), pending (not Accepted),
// foreign (Accepted by another controller only), manifest (no status);
// HTTPRoute onb on listener b (Accepted); HTTPRoute wide and GRPCRoute
// grpc on the whole Gateway, each Accepted in an entry naming listener a.
var kuadrantReadyTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: c}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: a, protocol: HTTP, port: 80}
  - {name: b, protocol: HTTP, port: 81}
  - {name: c2, protocol: HTTP, port: 8080}
status:
  listeners:
  - {name: a, attachedRoutes: 6, conditions: [{type: Programmed, status: "True"}]}
  - {name: b, attachedRoutes: 1, conditions: [{type: Programmed, status: "False"}]}
  - {name: c2, attachedRoutes: 2, conditions: [{type: Programmed, status: "True"}]}
` + readyRoute("ok", "HTTPRoute", "a", "istio.io/gateway-controller", "{name: g, sectionName: a}", "True") +
	readyRoute("pending", "HTTPRoute", "a", "istio.io/gateway-controller", "{name: g}", "False") +
	readyRoute("foreign", "HTTPRoute", "a", "example.com/other", "{name: g}", "True") +
	readyRoute("manifest", "HTTPRoute", "a", "", "", "") +
	readyRoute("onb", "HTTPRoute", "b", "istio.io/gateway-controller", "{name: g, sectionName: b}", "True") +
	readyRoute("wide", "HTTPRoute", "", "istio.io/gateway-controller", "{name: g, sectionName: a}", "True") +
	readyRoute("grpc", "GRPCRoute", "", "istio.io/gateway-controller", "{name: g, sectionName: a}", "True") + `
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

// readyRoute is a route of kind on listener l of Gateway g (the whole
// Gateway for ""), whose status holds one parent entry of controller ctl
// for parentRef with Accepted=accepted (no status for ctl "").
func readyRoute(name, kind, l, ctl, parentRef, accepted string) string {
	section := ""
	if l != "" {
		section = ", sectionName: " + l
	}
	s := `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ` + kind + `
metadata: {name: ` + name + `, namespace: default}
spec:
  parentRefs: [{name: g` + section + `}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]`
	if ctl != "" {
		s += `
status:
  parents:
  - controllerName: ` + ctl + `
    parentRef: ` + parentRef + `
    conditions: [{type: Accepted, status: "` + accepted + `"}]`
	}
	return s
}

// listenersOnPaths returns, per context of kind at target, the listeners
// its paths run through, sorted.
func listenersOnPaths(t *testing.T, res *engine.Result, kind string, target topology.Ref) []string {
	t.Helper()
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != target {
			continue
		}
		for _, c := range e.Contexts {
			c.Paths(func(p []topology.Ref) bool {
				for _, r := range p {
					if r.Kind == "Gateway" && r.IsSection() {
						out = append(out, r.SectionName)
					}
				}
				return true
			})
		}
	}
	slices.Sort(out)
	return out
}

// Kuadrant skips the paths through a listener its Gateway's status does
// not say is Programmed, or a route its status does not say the Gateway
// (its class's controller) accepted; a GRPCRoute's entry must name the
// listener where it names one, an HTTPRoute's need not. A route without
// status counts as ready. A policy whose paths are all skipped is in the
// path to no route, and says what is not ready.
// Source: KO ae698811 internal/controller/ratelimit_policy_status_updater.go
// (enforcedCondition skips such paths), internal/gatewayapi/utils.go
// (IsListenerReady, IsHTTPRouteReady, IsGRPCRouteReady).
func TestKuadrantPathReadiness(t *testing.T) {
	const v = "kuadrant.io/v1"
	onG := pol(v, "RateLimitPolicy", "on-g", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g}\nlimits: {g: {rates: [{limit: 1, window: 1m}]}}")
	onB := pol(v, "RateLimitPolicy", "on-b", 1, "targetRef: "+kListener("g", "b")+"\nlimits: {b: {rates: [{limit: 2, window: 1m}]}}")
	onPending := pol(v, "RateLimitPolicy", "on-pending", 2, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: pending}\nlimits: {p: {rates: [{limit: 3, window: 1m}]}}")
	grpcRule := topology.Ref{Group: topology.GatewayGroup, Kind: "GRPCRoute", Namespace: "default", Name: "grpc", SectionName: "only"}
	for _, tc := range []struct {
		name  string
		crd   string
		paths map[topology.Ref][]string
		onB   string
	}{
		{"profile: status", rlpCRD(), map[topology.Ref][]string{
			rule("ok", "only"): {"a"}, rule("pending", "only"): nil, rule("foreign", "only"): nil, rule("manifest", "only"): {"a"},
			rule("onb", "only"): nil, rule("wide", "only"): {"a", "c2"}, grpcRule: {"a"},
		}, "False/Unknown"},
		{"annotation: ignored", rlpCRD("attache.dev/path-readiness: ignored"), map[topology.Ref][]string{
			rule("ok", "only"): {"a"}, rule("pending", "only"): {"a"}, rule("foreign", "only"): {"a"}, rule("manifest", "only"): {"a"},
			rule("onb", "only"): {"b"}, rule("wide", "only"): {"a", "b", "c2"}, grpcRule: {"a", "b", "c2"},
		}, "True/Programmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{}, tc.crd, kuadrantReadyTopo, onG, onB, onPending)
			for _, p := range res.Problems {
				t.Errorf("problem: %v", p)
			}
			for target, w := range tc.paths {
				want(t, target.Name+" listeners on paths", listenersOnPaths(t, res, "RateLimitPolicy", target), w)
			}
			want(t, "on-b Programmed", status(t, res, "on-b", "Programmed"), tc.onB)
			if tc.onB != "False/Unknown" {
				return
			}
			want(t, "on-b message", condition(t, res, "on-b", "Programmed").Message,
				"Policy is not programmed: it is in the path to no effective target through a Gateway; not ready yet: listener Gateway default/g#b is not Programmed")
			want(t, "on-pending message", condition(t, res, "on-pending", "Programmed").Message,
				"Policy is not programmed: it is in the path to no effective target through a Gateway; not ready yet: HTTPRoute default/pending is not Accepted by Gateway default/g")
		})
	}
}

// Readiness is read from status: a status change the engine reads
// recomputes (Incremental as Compute; StatusReadChanged for adapters),
// one it does not read changes nothing.
func TestKuadrantPathReadinessIncremental(t *testing.T) {
	const v = "kuadrant.io/v1"
	onB := pol(v, "RateLimitPolicy", "on-b", 1, "targetRef: "+kListener("g", "b")+"\nlimits: {b: {rates: [{limit: 2, window: 1m}]}}")
	programmedB := strings.Replace(kuadrantReadyTopo, `{name: b, attachedRoutes: 1, conditions: [{type: Programmed, status: "False"}]}`,
		`{name: b, attachedRoutes: 1, conditions: [{type: Programmed, status: "True"}]}`, 1)
	resolvedB := strings.Replace(kuadrantReadyTopo, `{name: b, attachedRoutes: 1, conditions: [{type: Programmed, status: "False"}]}`,
		`{name: b, attachedRoutes: 1, conditions: [{type: Programmed, status: "False"}, {type: ResolvedRefs, status: "True"}]}`, 1)
	acceptedPending := strings.Replace(kuadrantReadyTopo, `{type: Accepted, status: "False"}`, `{type: Accepted, status: "True"}`, 1)
	if programmedB == kuadrantReadyTopo || resolvedB == kuadrantReadyTopo || acceptedPending == kuadrantReadyTopo {
		t.Fatal("a replacement did not apply")
	}
	in := engine.NewIncremental(engine.Options{})
	for i, step := range []struct {
		topo      string
		onB       string
		recompute bool
	}{
		{kuadrantReadyTopo, "False/Unknown", true},
		{resolvedB, "False/Unknown", false},
		{programmedB, "True/Programmed", true},
		{kuadrantReadyTopo, "False/Unknown", true},
		{acceptedPending, "False/Unknown", true},
	} {
		objs := decodeDocs(t, rlpCRD(), step.topo, onB)
		got := in.Compute(objs)
		if i > 0 && in.LastChange().Full != step.recompute {
			t.Errorf("step %d: recomputed in full %v (%s), want %v", i, in.LastChange().Full, in.LastChange().Reason, step.recompute)
		}
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
		want(t, fmt.Sprintf("step %d on-b", i), status(t, got, "on-b", "Programmed"), step.onB)
	}
	gw := func(topo string) *unstructured.Unstructured {
		for _, o := range decodeDocs(t, topo) {
			if o.Object.GetKind() == "Gateway" {
				return o.Object
			}
		}
		t.Fatal("no Gateway")
		return nil
	}
	want(t, "StatusReadChanged(Programmed)", engine.StatusReadChanged(gw(kuadrantReadyTopo), gw(programmedB)), true)
	want(t, "StatusReadChanged(ResolvedRefs)", engine.StatusReadChanged(gw(kuadrantReadyTopo), gw(resolvedB)), false)
	route := func(topo string) *unstructured.Unstructured {
		for _, o := range decodeDocs(t, topo) {
			if o.Object.GetName() == "pending" {
				return o.Object
			}
		}
		t.Fatal("no route pending")
		return nil
	}
	want(t, "StatusReadChanged(route Accepted)", engine.StatusReadChanged(route(kuadrantReadyTopo), route(acceptedPending)), true)
}

// Kuadrant's DNSPolicy makes no record for a listener without routes
// attached, as its Gateway's status.listeners[].attachedRoutes says; a
// Gateway whose status says nothing (a manifest) has the routes attache
// attaches there. TLSPolicy does not look. A policy with no such listener
// is programmed with nothing to program and says what they lack.
// Source: KO ae698811 internal/controller/effective_dnspolicies_reconciler.go
// ("listener has no attached routes, skipping record create for
// listener"; dnspolicy_status_updater.go: Enforced, "no DNSRecords
// created ... : no routes attached to any gateway listeners").
func TestKuadrantDNSPolicyAttachedRoutes(t *testing.T) {
	const gws = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: manifest, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: used, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: unused, protocol: HTTP, port: 81, hostname: b.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: live, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: used, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: counted, protocol: HTTP, port: 81, hostname: b.example.com}
  - {name: unlisted, protocol: HTTP, port: 82, hostname: c.example.com}
status:
  addresses: [{type: IPAddress, value: 192.0.2.1}]
  listeners:
  - {name: used, attachedRoutes: 0}
  - {name: counted, attachedRoutes: 2}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: manifest, sectionName: used}, {name: live, sectionName: used}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	on := func(kind, name, gw, body string) string {
		return pol("kuadrant.io/v1", kind, name, 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: "+gw+"}\n"+body)
	}
	res := compute(t, engine.Options{}, labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"),
		labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct"), gws,
		on("DNSPolicy", "dns-manifest", "manifest", "loadBalancing: {weight: 1}"),
		on("DNSPolicy", "dns-live", "live", "loadBalancing: {weight: 1}"),
		pol("kuadrant.io/v1", "DNSPolicy", "dns-unused", 1, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: manifest, sectionName: unused}\nloadBalancing: {weight: 1}"))
	var got []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "DNSPolicy" && len(e.Contexts) > 0 {
			got = append(got, e.Target.Name+"#"+e.Target.SectionName)
		}
	}
	slices.Sort(got)
	want(t, "DNSPolicy listeners", got, []string{"live#counted", "manifest#used"})
	want(t, "dns-unused Programmed", condition(t, res, "dns-unused", "Programmed").Message,
		"Policy is programmed; listener Gateway default/manifest#unused is none its implementation acts on (it needs routes attached)")
	if k := kindOf(t, res, "TLSPolicy"); slices.Contains(k.EffectiveListeners, "attached-routes") {
		t.Errorf("TLSPolicy asks for attached routes: %v", k.EffectiveListeners)
	}
}

// kuadrantAddressTopo: Gateway manifest without status, Gateway pending
// whose status has listeners with routes attached but no addresses (nor
// conditions), Gateway addressed with an address; one HTTPRoute on all
// three.
const kuadrantAddressTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: manifest, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: l, protocol: HTTP, port: 80, hostname: a.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: pending, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: l, protocol: HTTP, port: 80, hostname: b.example.com}]
status:
  listeners: [{name: l, attachedRoutes: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: addressed, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: l, protocol: HTTP, port: 80, hostname: c.example.com}]
status:
  addresses: [{type: IPAddress, value: 192.0.2.1}]
  listeners: [{name: l, attachedRoutes: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: manifest}, {name: pending}, {name: addressed}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

// Kuadrant's DNSPolicy builds a record's endpoints from its Gateway's
// status.addresses and makes no record without them; its status stays
// Enforced ("no DNSRecords created based on policy and gateway
// configuration : no valid status addresses to use on gateway"), which is
// attache's programmed with nothing to program. A Gateway without any
// status (a manifest) counts as addressed, as it counts as ready. An
// address arriving is a status change the engine reads (Incremental
// recomputes; StatusReadChanged for adapters); another value is not.
// TLSPolicy does not look at addresses.
// Source: KO ae698811 internal/controller/effective_dnspolicies_reconciler.go
// (ErrNoAddresses; "record for listener has no addresses, skipping record
// create for listener"), dnspolicy_dnsrecords.go (buildEndpoints from
// GatewayWrapper.GetAddresses); tests/common/dnspolicy/
// dnspolicy_controller_test.go ("valid target with no gateway status").
func TestKuadrantDNSPolicyAddresses(t *testing.T) {
	on := func(name, gw string) string {
		return pol("kuadrant.io/v1", "DNSPolicy", name, 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: "+gw+"}\nloadBalancing: {weight: 1}")
	}
	onListener := pol("kuadrant.io/v1", "DNSPolicy", "dns-pending-l", 1, "targetRef: "+kListener("pending", "l")+"\nloadBalancing: {weight: 1}")
	dnsCRD := labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct")
	tlsCRD := labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct")
	dnsListeners := func(res *engine.Result) []string {
		var got []string
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind == "DNSPolicy" && len(e.Contexts) > 0 {
				got = append(got, e.Target.Name+"#"+e.Target.SectionName)
			}
		}
		slices.Sort(got)
		return got
	}
	docs := []string{dnsCRD, tlsCRD, kuadrantAddressTopo, on("dns-manifest", "manifest"), on("dns-pending", "pending"), on("dns-addressed", "addressed"), onListener}
	res := compute(t, engine.Options{}, docs...)
	want(t, "DNSPolicy listeners", dnsListeners(res), []string{"addressed#l", "manifest#l"})
	want(t, "dns-pending Programmed", status(t, res, "dns-pending", "Programmed"), "True/Programmed")
	want(t, "dns-pending-l Programmed", condition(t, res, "dns-pending-l", "Programmed").Message,
		"Policy is programmed; listener Gateway default/pending#l is none its implementation acts on (it needs addresses in its Gateway's status)")
	want(t, "dns-pending Accepted", status(t, res, "dns-pending", "Accepted"), "True/Accepted")
	if k := kindOf(t, res, "TLSPolicy"); slices.Contains(k.EffectiveListeners, "addresses") {
		t.Errorf("TLSPolicy asks for addresses: %v", k.EffectiveListeners)
	}

	addressed := strings.Replace(kuadrantAddressTopo, `listeners: [{name: l, attachedRoutes: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: addressed`, `addresses: [{type: Hostname, value: lb.example.net}]
  listeners: [{name: l, attachedRoutes: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: addressed`, 1)
	moved := strings.Replace(kuadrantAddressTopo, "value: 192.0.2.1", "value: 192.0.2.2", 1)
	if addressed == kuadrantAddressTopo || moved == kuadrantAddressTopo {
		t.Fatal("a replacement did not apply")
	}
	in := engine.NewIncremental(engine.Options{})
	for i, step := range []struct {
		topo      string
		listeners []string
		recompute bool
	}{
		{kuadrantAddressTopo, []string{"addressed#l", "manifest#l"}, true},
		{addressed, []string{"addressed#l", "manifest#l", "pending#l"}, true},
		{kuadrantAddressTopo, []string{"addressed#l", "manifest#l"}, true},
		{moved, []string{"addressed#l", "manifest#l"}, false},
	} {
		objs := decodeDocs(t, append([]string{dnsCRD, tlsCRD, step.topo}, docs[3:]...)...)
		got := in.Compute(objs)
		if i > 0 && in.LastChange().Full != step.recompute {
			t.Errorf("step %d: recomputed in full %v (%s), want %v", i, in.LastChange().Full, in.LastChange().Reason, step.recompute)
		}
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
		want(t, fmt.Sprintf("step %d DNSPolicy listeners", i), dnsListeners(got), step.listeners)
	}
	gw := func(topo, name string) *unstructured.Unstructured {
		for _, o := range decodeDocs(t, topo) {
			if o.Object.GetKind() == "Gateway" && o.Object.GetName() == name {
				return o.Object
			}
		}
		t.Fatal("no Gateway " + name)
		return nil
	}
	want(t, "StatusReadChanged(address assigned)", engine.StatusReadChanged(gw(kuadrantAddressTopo, "pending"), gw(addressed, "pending")), true)
	want(t, "StatusReadChanged(address moved)", engine.StatusReadChanged(gw(kuadrantAddressTopo, "addressed"), gw(moved, "addressed")), false)
}

// Kuadrant configures the data plane of Istio's and Envoy Gateway's
// Gateways only; a policy on a path through another controller's Gateway
// is accepted, and Enforced=False, "waiting for the following components
// to sync: Gateway (ns/name)", even where it also takes effect through a
// served Gateway. No context runs through such a Gateway. With
// attache.dev/other-controllers: target-not-found, such a target is not
// found, as for Envoy Gateway's kinds.
// Source: KO ae698811 internal/controller/ratelimit_policy_status_updater.go
// (enforcedCondition: the default branch of the switch over the affected
// Gateways' classes adds "Gateway (ns/name)" to the components to sync;
// kuadrant.NewErrOutOfSync), data_plane_policies_workflow.go
// (getGatewayControllerNames: istio.io/gateway-controller,
// gateway.envoyproxy.io/gatewayclass-controller by default).
func TestKuadrantOtherControllers(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: nginx}
spec: {controllerName: gateway.nginx.org/nginx-gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: served, namespace: default}
spec:
  gatewayClassName: istio
  listeners: [{name: s-http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ngf, namespace: default}
spec:
  gatewayClassName: nginx
  listeners: [{name: n-http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: default}
spec:
  parentRefs: [{name: served}, {name: ngf}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ngf-only, namespace: default}
spec:
  parentRefs: [{name: ngf}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	const v = "kuadrant.io/v1"
	on := func(name, kind, target string, min int) string {
		return pol(v, "RateLimitPolicy", name, min, "targetRef: {group: gateway.networking.k8s.io, kind: "+kind+", name: "+target+"}\nlimits: {"+name+": {rates: [{limit: 1, window: 1m}]}}")
	}
	// on-served merges its rule in below the route's.
	onServed := pol(v, "RateLimitPolicy", "on-served", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: served}\ndefaults: {strategy: merge, limits: {on-served: {rates: [{limit: 1, window: 1m}]}}}")
	pols := []string{onServed, on("on-ngf", "Gateway", "ngf", 1), on("on-both", "HTTPRoute", "both", 2)}
	waits := "Policy is not programmed: its implementation waits for Gateway default/ngf (GatewayClass nginx, controller gateway.nginx.org/nginx-gateway-controller) to sync (the implementation of RateLimitPolicy.kuadrant.io serves the GatewayClasses of istio.io/gateway-controller, gateway.envoyproxy.io/gatewayclass-controller only)"
	res := compute(t, engine.Options{}, append([]string{rlpCRD(), topo}, pols...)...)
	for _, p := range res.Problems {
		t.Errorf("problem: %v", p)
	}
	for name, w := range map[string]string{"on-served": "True/Programmed", "on-ngf": "False/Unknown", "on-both": "False/Unknown"} {
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
		want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
	}
	want(t, "on-ngf message", condition(t, res, "on-ngf", "Programmed").Message, waits)
	want(t, "on-both message", condition(t, res, "on-both", "Programmed").Message, waits)
	want(t, "both: paths through the served Gateway only", listenersOnPaths(t, res, "RateLimitPolicy", rule("both", "only")), []string{"s-http"})
	want(t, "ngf-only: no context", effective(t, res, "RateLimitPolicy", rule("ngf-only", "only")), []string(nil))

	strict := compute(t, engine.Options{}, append([]string{rlpCRD("attache.dev/other-controllers: target-not-found"), topo}, pols...)...)
	want(t, "target-not-found: on-ngf", status(t, strict, "on-ngf", "Accepted"), "False/TargetNotFound")
	want(t, "target-not-found: on-both", status(t, strict, "on-both", "Programmed"), "True/Programmed")
	want(t, "otherControllers from the profile", kindOf(t, res, "RateLimitPolicy").OtherControllersNotProgrammed, true)
}

// tlsIssuerTopo: Gateway gw with six HTTPS listeners l1..l6, each with a
// hostname and a Secret of its own namespace; cert-manager Issuers ready
// (Ready), pending (not Ready), fresh (no status, as in a manifest), and
// elsewhere (namespace other); ClusterIssuer global (Ready).
const tlsIssuerTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: l1, protocol: HTTPS, port: 441, hostname: l1.example.com, tls: {certificateRefs: [{name: c1}]}}
  - {name: l2, protocol: HTTPS, port: 442, hostname: l2.example.com, tls: {certificateRefs: [{name: c2}]}}
  - {name: l3, protocol: HTTPS, port: 443, hostname: l3.example.com, tls: {certificateRefs: [{name: c3}]}}
  - {name: l4, protocol: HTTPS, port: 444, hostname: l4.example.com, tls: {certificateRefs: [{name: c4}]}}
  - {name: l5, protocol: HTTPS, port: 445, hostname: l5.example.com, tls: {certificateRefs: [{name: c5}]}}
  - {name: l6, protocol: HTTPS, port: 446, hostname: l6.example.com, tls: {certificateRefs: [{name: c6}]}}
  - {name: l7, protocol: HTTPS, port: 447, hostname: l7.example.com, tls: {certificateRefs: [{name: c7}]}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: ready, namespace: default}
spec: {selfSigned: {}}
status:
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: pending, namespace: default}
spec: {acme: {server: https://acme.example.com}}
status:
  conditions: [{type: Ready, status: "False", reason: ErrRegisterACMEAccount}]
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: fresh, namespace: default}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: elsewhere, namespace: other}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: global}
spec: {selfSigned: {}}
status:
  conditions: [{type: Ready, status: "True"}]
`

// tlsOn is a TLSPolicy on listener l of gw naming issuerRef ref.
func tlsOn(name, l, ref string) string {
	return pol("kuadrant.io/v1", "TLSPolicy", name, 0, "targetRef: "+kListener("gw", l)+"\nissuerRef: "+ref)
}

// Kuadrant's TLSPolicy needs its issuer: an Issuer of its own namespace
// (issuerRef kind Issuer) or a ClusterIssuer. One not found, or an
// issuerRef naming no kind (Kuadrant links a TLSPolicy to an Issuer only
// when the kind says Issuer), makes it Accepted=False, Invalid; one whose
// status is not Ready leaves it accepted and not programmed (Kuadrant:
// Enforced=False, "Issuer not ready"). An issuer without status counts
// as ready.
// Source: KO ae698811 internal/controller/tlspolicies_validator.go
// (isIssuerFound: "unable to find issuer"), tls_workflow.go
// (LinkTLSPolicyToIssuerFunc, LinkTLSPolicyToClusterIssuerFunc),
// tlspolicy_status_updater.go (isIssuerReady).
func TestKuadrantTLSPolicyIssuers(t *testing.T) {
	docs := []string{labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct"), tlsIssuerTopo,
		tlsOn("p-ready", "l1", "{kind: Issuer, name: ready}"),
		tlsOn("p-pending", "l2", "{group: cert-manager.io, kind: Issuer, name: pending}"),
		tlsOn("p-fresh", "l3", "{kind: Issuer, name: fresh}"),
		tlsOn("p-cluster", "l4", "{kind: ClusterIssuer, name: global}"),
		tlsOn("p-missing", "l5", "{kind: Issuer, name: nope}"),
		tlsOn("p-nokind", "l6", "{name: ready}"),
		tlsOn("p-other-ns", "l7", "{kind: Issuer, name: elsewhere}"),
	}
	res := compute(t, engine.Options{}, docs...)
	for _, p := range res.Problems {
		if !strings.Contains(p.Message, "does not resolve") {
			t.Errorf("problem: %v", p)
		}
	}
	for name, w := range map[string]string{"p-ready": "True/Programmed", "p-pending": "False/Unknown", "p-fresh": "True/Programmed", "p-cluster": "True/Programmed"} {
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
		want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
	}
	want(t, "p-pending message", condition(t, res, "p-pending", "Programmed").Message,
		"Policy is not programmed: its implementation waits for what it names to be ready: spec.issuerRef: Issuer default/pending is not Ready")
	for name, w := range map[string]string{"p-missing": "spec.issuerRef: Issuer default/nope not found",
		"p-nokind":   "spec.issuerRef: names no kind, and its implementation finds the object only by a kind given (Issuer, ClusterIssuer)",
		"p-other-ns": "spec.issuerRef: Issuer default/elsewhere not found"} {
		c := condition(t, res, name, "Accepted")
		if c.Status+"/"+c.Reason != "False/Invalid" || !strings.Contains(c.Message, w) {
			t.Errorf("%s Accepted = %s/%s %q, want False/Invalid saying %q", name, c.Status, c.Reason, c.Message, w)
		}
	}

	// An issuer getting Ready recomputes (status only: Incremental, and
	// StatusReadChanged for adapters).
	ready := strings.Replace(tlsIssuerTopo, `[{type: Ready, status: "False", reason: ErrRegisterACMEAccount}]`, `[{type: Ready, status: "True"}]`, 1)
	if ready == tlsIssuerTopo {
		t.Fatal("no replacement")
	}
	in := engine.NewIncremental(engine.Options{})
	for i, topo := range []string{tlsIssuerTopo, ready, tlsIssuerTopo} {
		step := append([]string{docs[0], topo}, docs[2:]...)
		objs := decodeDocs(t, step...)
		got := in.Compute(objs)
		if g, w := dump(t, got), dump(t, engine.Compute(objs, engine.Options{})); g != w {
			t.Fatalf("step %d: %s", i, firstDiff(g, w))
		}
		w := "False/Unknown"
		if i == 1 {
			w = "True/Programmed"
		}
		want(t, fmt.Sprintf("step %d p-pending", i), status(t, got, "p-pending", "Programmed"), w)
	}
	issuer := func(topo string) *unstructured.Unstructured {
		for _, o := range decodeDocs(t, topo) {
			if o.Object.GetName() == "pending" {
				return o.Object
			}
		}
		t.Fatal("no Issuer pending")
		return nil
	}
	want(t, "StatusReadChanged(Issuer Ready)", engine.StatusReadChanged(issuer(tlsIssuerTopo), issuer(ready)), true)
}

// kuadrantServed are the kinds of a cluster with Gateway API, Istio and
// the named operators' CRDs, as policy.ServedByCRDs reads them.
func kuadrantServed(t *testing.T, extra ...string) policy.ServedAPIs {
	t.Helper()
	kinds := append([]string{"HTTPRoute.gateway.networking.k8s.io/v1", "WasmPlugin.extensions.istio.io/v1alpha1",
		"EnvoyFilter.networking.istio.io/v1alpha3", "PeerAuthentication.security.istio.io/v1"}, extra...)
	s := policy.ServedAPIs{}
	for _, k := range kinds {
		ds, err := policy.ParseDependencies("x=" + k)
		if err != nil {
			t.Fatal(err)
		}
		ak := ds[0].Alternatives[0][0]
		s[ak] = true
		s[policy.APIKind{GroupKind: ak.GroupKind}] = true
	}
	return s
}

// Kuadrant accepts no policy of a kind whose dependencies are not
// installed: Accepted=False, reason MissingDependency, checked before its
// targets (a policy on a missing route says so too), and the policy
// applies nowhere (the route's rule has no limits). Without
// the cluster's served kinds (files) nothing is judged. TLSPolicy without
// cert-manager is MissingDependency, not its issuer "not found"; DNSPolicy
// needs the DNS operator's DNSRecord.
// Source: KO ae698811 internal/controller/ratelimit_policies_validator.go,
// auth_policies_validator.go, tokenratelimit_policies_validator.go,
// dnspolicies_validator.go, tlspolicies_validator.go (isMissingDependency,
// before isTargetRefsFound), internal/kuadrant/errors.go
// (ErrDependencyNotInstalled: reason MissingDependency),
// state_of_the_world.go (the kinds looked for).
func TestKuadrantMissingDependency(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: https, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: a}]}}]
` + kuadrantRouteToS
	const v = "kuadrant.io/v1"
	docs := []string{rlpCRD(), labelledCRD("kuadrant.io", "AuthPolicy", "authpolicies", "inherited"),
		labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct"), labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"), topo,
		pol(v, "RateLimitPolicy", "on-gw", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\ndefaults: {strategy: merge, limits: {gw: {rates: [{limit: 1, window: 1m}]}}}"),
		pol(v, "RateLimitPolicy", "on-route", 1, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}\nlimits: {route: {rates: [{limit: 2, window: 1m}]}}"),
		pol(v, "RateLimitPolicy", "on-nothing", 2, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: nope}\nlimits: {x: {rates: [{limit: 3, window: 1m}]}}"),
		pol(v, "AuthPolicy", "auth", 3, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}\nrules: {authorization: {allow: {opa: {rego: allow = true}}}}"),
		pol(v, "TLSPolicy", "tls", 4, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\nissuerRef: {kind: Issuer, name: missing}"),
		pol(v, "DNSPolicy", "dns", 5, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\nloadBalancing: {weight: 1}"),
	}
	const noLimitador = "Its implementation needs what is not installed: Limitador Operator (the cluster serves no Limitador.limitador.kuadrant.io/v1alpha1)"
	for _, tc := range []struct {
		name   string
		served policy.ServedAPIs
		want   map[string]string // policy: Accepted
		rule   []string          // the rule's effective limits
	}{
		{"files: not judged", nil, map[string]string{"on-gw": "True/Accepted", "on-route": "True/Accepted", "on-nothing": "False/TargetNotFound",
			"auth": "True/Accepted", "tls": "False/Invalid", "dns": "True/Accepted"}, []string{"gw", "route"}},
		{"Limitador missing", kuadrantServed(t, "Authorino.operator.authorino.kuadrant.io/v1beta1", "AuthConfig.authorino.kuadrant.io/v1beta3",
			"Certificate.cert-manager.io/v1", "Issuer.cert-manager.io/v1", "ClusterIssuer.cert-manager.io/v1", "DNSRecord.kuadrant.io/v1alpha1"),
			map[string]string{"on-gw": "False/MissingDependency", "on-route": "False/MissingDependency", "on-nothing": "False/MissingDependency",
				"auth": "True/Accepted", "tls": "False/Invalid", "dns": "True/Accepted"}, nil},
		{"all installed", kuadrantServed(t, "Limitador.limitador.kuadrant.io/v1alpha1", "Authorino.operator.authorino.kuadrant.io/v1beta1",
			"AuthConfig.authorino.kuadrant.io/v1beta3", "Certificate.cert-manager.io/v1", "Issuer.cert-manager.io/v1", "ClusterIssuer.cert-manager.io/v1",
			"DNSRecord.kuadrant.io/v1alpha1"),
			map[string]string{"on-gw": "True/Accepted", "on-route": "True/Accepted", "on-nothing": "False/TargetNotFound",
				"auth": "True/Accepted", "tls": "False/Invalid", "dns": "True/Accepted"}, []string{"gw", "route"}},
		{"no cert-manager, no DNS operator, Authorino in part", kuadrantServed(t, "Limitador.limitador.kuadrant.io/v1alpha1", "AuthConfig.authorino.kuadrant.io/v1beta3"),
			map[string]string{"on-gw": "True/Accepted", "auth": "False/MissingDependency", "tls": "False/MissingDependency", "dns": "False/MissingDependency"}, []string{"gw", "route"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compute(t, engine.Options{ServedAPIs: tc.served}, docs...)
			for name, w := range tc.want {
				want(t, name+" Accepted", status(t, res, name, "Accepted"), w)
			}
			want(t, "rule r#only limits", rlpLimits(res, "r"), tc.rule)
			if tc.name == "Limitador missing" {
				want(t, "on-nothing message", condition(t, res, "on-nothing", "Accepted").Message, noLimitador)
				want(t, "on-gw Programmed", status(t, res, "on-gw", "Programmed"), "(no Programmed)")
			}
			if tc.name == "no cert-manager, no DNS operator, Authorino in part" {
				want(t, "auth message", condition(t, res, "auth", "Accepted").Message,
					"Its implementation needs what is not installed: Authorino Operator (the cluster serves no Authorino.operator.authorino.kuadrant.io/v1beta1)")
				want(t, "tls message", condition(t, res, "tls", "Accepted").Message,
					"Its implementation needs what is not installed: Cert Manager (the cluster serves no Certificate.cert-manager.io/v1, Issuer.cert-manager.io/v1, ClusterIssuer.cert-manager.io/v1)")
			}
			objs := decodeDocs(t, docs...)
			in := engine.NewIncremental(engine.Options{ServedAPIs: tc.served})
			in.Compute(objs)
			if g, w := dump(t, in.Compute(objs)), dump(t, res); g != w {
				t.Errorf("Incremental: %s", firstDiff(g, w))
			}
		})
	}
}

// A DNSPolicy names its DNS provider's Secret (providerRefs, its own
// namespace), which the DNS operator reads for each DNSRecord the policy
// makes: without it every record stays not Ready, and Kuadrant says
// Enforced=False, Unknown ("policy is not enforced on any DNSRecord: not
// a single DNSRecord is ready"), the policy still accepted. Where it
// makes no record there is nothing to wait for. The Secret arriving
// recomputes the policy (Incremental).
// Source: KO ae698811 internal/controller/dnspolicy_dnsrecords.go
// (desiredDNSRecord: the record's providerRef is the policy's first),
// dnspolicy_status_updater.go (enforcedCondition); Kuadrant/dns-operator
// de271431 internal/provider/factory.go (ProviderFor: the Secret is got
// in the record's namespace, an error if missing),
// internal/controller/dnsrecord_controller.go (Ready=False,
// "DNSProviderError").
func TestKuadrantDNSPolicyProviderSecret(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: bare, protocol: HTTP, port: 81}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	const secret = `
apiVersion: v1
kind: Secret
metadata: {name: aws-credentials, namespace: default}
type: kuadrant.io/aws
data: {AWS_ACCESS_KEY_ID: eA==}
`
	on := func(name, section string, min int) string {
		return pol("kuadrant.io/v1", "DNSPolicy", name, min, "targetRef: "+kListener("gw", section)+"\nproviderRefs: [{name: aws-credentials}]")
	}
	docs := []string{labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"), topo, on("records", "web", 0), on("none", "bare", 1)}
	res := compute(t, engine.Options{}, docs...)
	want(t, "records Accepted", status(t, res, "records", "Accepted"), "True/Accepted")
	want(t, "records Programmed", status(t, res, "records", "Programmed"), "False/Unknown")
	want(t, "records message", condition(t, res, "records", "Programmed").Message,
		"Policy is not programmed: its implementation waits for what it names to be ready: spec.providerRefs[0]: Secret default/aws-credentials not found")
	want(t, "none Programmed (no record to make)", status(t, res, "none", "Programmed"), "True/Programmed")
	withSecret := compute(t, engine.Options{}, append(docs, secret)...)
	want(t, "records Programmed with the Secret", status(t, withSecret, "records", "Programmed"), "True/Programmed")

	in := engine.NewIncremental(engine.Options{})
	in.Compute(decodeDocs(t, docs...))
	objs := decodeDocs(t, append(docs, secret)...)
	if g, w := dump(t, in.Compute(objs)), dump(t, withSecret); g != w {
		t.Errorf("Incremental, the Secret created: %s", firstDiff(g, w))
	}
	if k := kindOf(t, res, "DNSPolicy"); policy.ObjectRefsString(k.ObjectRefs) != "providerRefs[] kinds=Secret missing=not-programmed default-label=kuadrant.io/default-provider=true unless=delegate=true" {
		t.Errorf("DNSPolicy object refs: %q", policy.ObjectRefsString(k.ObjectRefs))
	}
}

// A DNSPolicy naming no provider has its records use its namespace's one
// Secret labelled kuadrant.io/default-provider=true: none, or several,
// leave every record not Ready (Kuadrant: Enforced=False, Unknown), as a
// missing provider Secret does; a Secret of another namespace does not
// count. A delegating DNSPolicy (delegate: true, which the CRD makes
// exclusive with providerRefs) reads no provider. The label added or
// taken away recomputes the policy (Incremental).
// Source: Kuadrant/dns-operator de271431
// internal/controller/dnsrecord_controller.go (the Secrets listed by
// DefaultProviderSecretLabel in the record's namespace: "No default
// provider secret labeled ... was found", "Multiple default providers
// secrets found. Only one expected"; IsDelegating skips it), api/v1alpha1
// shared_types.go (DefaultProviderSecretLabel); KO ae698811
// internal/controller/dnspolicy_dnsrecords.go (the record in the policy's
// namespace, its providerRef only when the policy names one),
// api/v1/dnspolicy_types.go (delegate=true and providerRefs exclusive).
func TestKuadrantDNSPolicyDefaultProvider(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw2, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: web, protocol: HTTP, port: 80, hostname: b.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}, {name: gw2}]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	secret := func(ns, name string, labelled bool) string {
		labels := ""
		if labelled {
			labels = ", labels: {kuadrant.io/default-provider: \"true\"}"
		}
		return "\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + labels + "}\ntype: kuadrant.io/aws\ndata: {AWS_ACCESS_KEY_ID: eA==}\n"
	}
	base := []string{labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"), topo,
		pol("kuadrant.io/v1", "DNSPolicy", "dns", 0, "targetRef: "+kListener("gw", "web")),
		pol("kuadrant.io/v1", "DNSPolicy", "delegating", 1, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw2}\ndelegate: true")}
	const waits = "Policy is not programmed: its implementation waits for what it names to be ready: spec.providerRefs: names no Secret, and "
	for _, c := range []struct {
		name, secrets, programmed, message string
	}{
		{"none labelled", secret("default", "plain", false) + secret("other", "elsewhere", true), "False/Unknown",
			waits + "no Secret in namespace default is labelled kuadrant.io/default-provider=true (the default read then)"},
		{"one labelled", secret("default", "plain", false) + secret("default", "aws", true), "True/Programmed", ""},
		{"two labelled", secret("default", "aws", true) + secret("default", "gcp", true), "False/Unknown",
			waits + "2 Secrets in namespace default are labelled kuadrant.io/default-provider=true (aws, gcp): its implementation reads the default only when there is one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs := append(slices.Clone(base), c.secrets)
			res := compute(t, engine.Options{}, docs...)
			want(t, "Accepted", status(t, res, "dns", "Accepted"), "True/Accepted")
			want(t, "Programmed", status(t, res, "dns", "Programmed"), c.programmed)
			if c.message != "" {
				want(t, "message", condition(t, res, "dns", "Programmed").Message, c.message)
			}
			// The delegating policy, with records to make at gw2,
			// never waits for a provider.
			want(t, "delegating Programmed", status(t, res, "delegating", "Programmed"), "True/Programmed")
		})
	}
	// The label given, then taken away: an Incremental agrees each time.
	in := engine.NewIncremental(engine.Options{})
	steps := [][]string{
		append(slices.Clone(base), secret("default", "aws", false)),
		append(slices.Clone(base), secret("default", "aws", true)),
		append(slices.Clone(base), secret("default", "aws", true)+secret("default", "gcp", true)),
		append(slices.Clone(base), secret("default", "gcp", true)),
		append(slices.Clone(base), secret("default", "gcp", false)),
	}
	for i, docs := range steps {
		got := in.Compute(decodeDocs(t, docs...))
		if g, w := dump(t, got), dump(t, compute(t, engine.Options{}, docs...)); g != w {
			t.Fatalf("Incremental, step %d: %s", i, firstDiff(g, w))
		}
	}
}

// A policy on no listener its kind acts on says why in its Programmed
// message, and what else its message says composes with that: a
// TLSPolicy on a Gateway with no HTTPS listener whose issuer is not
// Ready is not programmed, waiting for the issuer (not "programmed"); with
// its issuer Ready it is programmed with nothing to program, and says
// which listeners it lacks. An Inherited kind computed through Gateways
// only says both that it is not programmed and why.
func TestListenerReasonComposesWithProgrammed(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: a, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: g}]
  rules: [{name: all, backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
`
	issuer := func(ready string) string {
		return `
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: ciss}
spec: {selfSigned: {}}
status: {conditions: [{type: Ready, status: "` + ready + `"}]}
`
	}
	tls := pol("kuadrant.io/v1", "TLSPolicy", "p", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: g}\nissuerRef: {kind: ClusterIssuer, name: ciss}")
	tlsCRD := labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct")
	const lacks = "no listener of Gateway default/g is one its implementation acts on (they need a hostname and TLS terminated with Secrets of its own namespace)"

	c := condition(t, compute(t, engine.Options{}, tlsCRD, topo, issuer("False"), tls), "p", "Programmed")
	want(t, "issuer not Ready", c, engine.Condition{Type: "Programmed", Status: "False", Reason: "Unknown",
		Message: "Policy is not programmed: its implementation waits for what it names to be ready: spec.issuerRef: ClusterIssuer ciss is not Ready"})
	c = condition(t, compute(t, engine.Options{}, tlsCRD, topo, issuer("True"), tls), "p", "Programmed")
	want(t, "issuer Ready", c, engine.Condition{Type: "Programmed", Status: "True", Reason: "Programmed", Message: "Policy is programmed; " + lacks})

	hCRD := declaredCRD("policies.example.com", "HPolicy", "hpolicies", "Inherited",
		"attache.dev/merge-strategies: patch-defaults", "attache.dev/reach: gateway",
		"attache.dev/effective-section-kinds: Gateway", "attache.dev/effective-listeners: hostname")
	h := pol("policies.example.com/v1", "HPolicy", "h", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]\ndefaults: {x: 1}")
	c = condition(t, compute(t, engine.Options{}, hCRD, topo, h), "h", "Programmed")
	want(t, "reach: gateway", c, engine.Condition{Type: "Programmed", Status: "False", Reason: "Unknown",
		Message: "Policy is not programmed: it is in the path to no effective target through a Gateway; no listener of Gateway default/g is one its implementation acts on (they need a hostname)"})
}

// kuadrantRouteToS is HTTPRoute default/r below Gateway gw, its one rule
// (named only) to Service default/s.
const kuadrantRouteToS = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec:
  parentRefs: [{name: gw}]
  rules: [{name: only, backendRefs: [{name: s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`

// rlpLimits are the names of the limits of the effective RateLimitPolicies
// of route's rules, sorted.
func rlpLimits(res *engine.Result, route string) []string {
	var limits []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind == "RateLimitPolicy" && e.Target.Name == route {
			for _, ctx := range e.Contexts {
				m, _ := ctx.Spec["limits"].(map[string]any)
				for l := range m {
					limits = append(limits, l)
				}
			}
		}
	}
	slices.Sort(limits)
	return limits
}

// Kuadrant enforces no RateLimitPolicy, AuthPolicy or TokenRateLimitPolicy
// while no Kuadrant object exists (one being deleted does not count):
// Enforced=False, reason MissingResource, "kuadrant is not installed,
// please create resource", said before anything else about the policy's
// paths; the policy stays accepted. attache: Programmed=False, reason
// MissingResource, only where the cluster was read (ServedAPIs known) and
// the Kuadrant kind could be listed; DNSPolicy and TLSPolicy do not look.
// Incrementally, the Kuadrant object arriving recomputes the policies.
// Source: KO ae698811 internal/controller/ratelimit_policy_status_updater.go,
// auth_policy_status_updater.go, tokenratelimitpolicy_status_updater.go
// (enforcedCondition: GetKuadrantFromTopology nil first),
// state_of_the_world.go (GetKuadrantFromTopology: no deletion timestamp),
// internal/kuadrant/errors.go (ErrSystemResource).
func TestKuadrantMissingResource(t *testing.T) {
	const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec:
  gatewayClassName: c
  listeners: [{name: web, protocol: HTTP, port: 80, hostname: a.example.com}]
status: {addresses: [{type: IPAddress, value: 10.0.0.1}]}
` + kuadrantRouteToS
	const kuadrantObj = `
apiVersion: kuadrant.io/v1beta1
kind: Kuadrant
metadata: {name: kuadrant, namespace: kuadrant-system}
`
	const v = "kuadrant.io/v1"
	docs := []string{rlpCRD(), labelledCRD("kuadrant.io", "AuthPolicy", "authpolicies", "inherited"),
		labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"), topo,
		pol(v, "RateLimitPolicy", "rlp", 0, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}\nlimits: {route: {rates: [{limit: 2, window: 1m}]}}"),
		pol(v, "AuthPolicy", "auth", 1, "targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}\nrules: {authorization: {allow: {opa: {rego: allow = true}}}}"),
		pol(v, "DNSPolicy", "dns", 2, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}\nloadBalancing: {weight: 1}"),
	}
	served := kuadrantServed(t, "Limitador.limitador.kuadrant.io/v1alpha1", "Authorino.operator.authorino.kuadrant.io/v1beta1",
		"AuthConfig.authorino.kuadrant.io/v1beta3", "DNSRecord.kuadrant.io/v1alpha1", "Kuadrant.kuadrant.io/v1beta1")
	const missing = "Policy is not programmed: kuadrant is not installed, please create resource (no Kuadrant.kuadrant.io object on the cluster)"
	deleting := strings.Replace(kuadrantObj, "namespace: kuadrant-system}", "namespace: kuadrant-system, deletionTimestamp: \"2026-01-01T00:00:00Z\", finalizers: [x]}", 1)
	unreadKuadrant := func(r topology.Ref) bool { return r.Group == "kuadrant.io" && r.Kind == "Kuadrant" }
	for _, tc := range []struct {
		name   string
		opts   engine.Options
		extra  []string
		rlp    string // RateLimitPolicy and AuthPolicy: Programmed
		reason string
	}{
		{"files: not judged", engine.Options{}, nil, "True/Programmed", ""},
		{"no Kuadrant object", engine.Options{ServedAPIs: served}, nil, "False/MissingResource", missing},
		{"one being deleted", engine.Options{ServedAPIs: served}, []string{deleting}, "False/MissingResource", missing},
		{"one", engine.Options{ServedAPIs: served}, []string{kuadrantObj}, "True/Programmed", ""},
		{"Kuadrant objects not read", engine.Options{ServedAPIs: served, Unread: unreadKuadrant}, nil, "True/Programmed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := append(slices.Clone(docs), tc.extra...)
			res := compute(t, tc.opts, d...)
			for _, name := range []string{"rlp", "auth"} {
				want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
				want(t, name+" Programmed", status(t, res, name, "Programmed"), tc.rlp)
				if tc.reason != "" {
					want(t, name+" message", condition(t, res, name, "Programmed").Message, tc.reason)
				}
			}
			if got := status(t, res, "dns", "Programmed"); strings.Contains(got, engine.ReasonMissingResource) {
				t.Errorf("dns Programmed %s: DNSPolicy does not need the Kuadrant object", got)
			}
			// The policy keeps its place: its limits are the rule's.
			want(t, "rule limits", rlpLimits(res, "r"), []string{"route"})
		})
	}
	// Incremental: the Kuadrant object created, being deleted (the same
	// object, a deletion timestamp set), back, then deleted.
	in := engine.NewIncremental(engine.Options{ServedAPIs: served})
	in.Compute(decodeDocs(t, docs...))
	for _, step := range []struct {
		what  string
		extra []string
		want  string
	}{{"created", []string{kuadrantObj}, "True/Programmed"}, {"being deleted", []string{deleting}, "False/MissingResource"},
		{"back", []string{kuadrantObj}, "True/Programmed"}, {"deleted", nil, "False/MissingResource"}} {
		d := append(slices.Clone(docs), step.extra...)
		got, full := in.Compute(decodeDocs(t, d...)), engine.Compute(decodeDocs(t, d...), engine.Options{ServedAPIs: served})
		want(t, step.what, status(t, got, "rlp", "Programmed"), step.want)
		if g, w := dump(t, got), dump(t, full); g != w {
			t.Errorf("%s: Incremental: %s", step.what, firstDiff(g, w))
		}
	}
}

// A DNSPolicy's excludeAddresses entry holding a '/' must be a CIDR, else
// Kuadrant does not accept the policy; one without is an address as
// written, never judged. The refused policy still holds its listener: the
// Gateway's policy does not cover it (Kuadrant's listenersForPolicy
// skips every listener with a DNSPolicy of its own). Kuadrant's reason is
// Unknown (its Validate error is no PolicyError); attache says Invalid.
// Source: Kuadrant/kuadrant-operator @ ae698811 api/v1/dnspolicy_types.go
// (ExcludeAddresses.Validate: "could not parse the CIDR from the
// excludeAddresses field"), internal/controller/dnspolicies_validator.go
// (policy.Validate after isConflict), effective_dnspolicies_reconciler.go
// (listenersForPolicy).
func TestKuadrantDNSPolicyExcludeAddresses(t *testing.T) {
	dnsCRD := labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct")
	onGateway := pol("kuadrant.io/v1", "DNSPolicy", "gw", 0, "targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: addressed}\nloadBalancing: {weight: 1}")
	for _, tc := range []struct {
		exclude, accepted string
	}{
		{`["10.0.0.0/8", "192.0.2.1", "lb.example.net"]`, "True/Accepted"},
		{`["10.0.0.0/33"]`, "False/Invalid"},
		{`["not/a-cidr"]`, "False/Invalid"},
		{`[]`, "True/Accepted"},
	} {
		t.Run(tc.exclude, func(t *testing.T) {
			onListener := pol("kuadrant.io/v1", "DNSPolicy", "l", 1, "targetRef: "+kListener("addressed", "l")+"\nexcludeAddresses: "+tc.exclude)
			res := compute(t, engine.Options{}, dnsCRD, kuadrantAddressTopo, onGateway, onListener)
			want(t, "l", status(t, res, "l", "Accepted"), tc.accepted)
			if tc.accepted != "True/Accepted" {
				if m := condition(t, res, "l", "Accepted").Message; !strings.Contains(m, "spec.excludeAddresses: could not parse the CIDR") {
					t.Errorf("message %q", m)
				}
			}
			// The listener's own policy holds it either way: the
			// Gateway's is beaten there.
			l := topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "addressed", SectionName: "l"}
			var stack []string
			for _, e := range res.Effective {
				if e.Kind.GroupKind.Kind == "DNSPolicy" && e.Target == l {
					for _, c := range e.Contexts {
						for _, s := range c.Stack {
							stack = append(stack, s.Policy.Name+":"+s.Outcome)
						}
					}
				}
			}
			want(t, "stack at addressed#l", stack, []string{"gw:none", "l:full"})
		})
	}
}
