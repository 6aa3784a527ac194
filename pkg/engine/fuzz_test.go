package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/report"
)

// FuzzCompute feeds arbitrary manifests through what attache effective
// does: decoding, the engine, the report and its JSON. Whatever the input,
// nothing may panic (an invalid object is reported, never fatal), and the
// same input must give the same bytes.
func FuzzCompute(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/gep-713/*/manifests.yaml")
	more, _ := filepath.Glob("../../conformance/testdata/*/manifests.yaml")
	// Issue 8's profiles: Istio's untargeted policies, Envoy Gateway's
	// shared listener ports.
	more = append(more, "../cli/testdata/istio-untargeted.yaml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	// Envoy Gateway's Backends behind a policy's external service (address
	// types, ports, weights); Istio waypoints with inbound bindings and
	// statuses, and Services bound to them (readinessTopo).
	f.Add([]byte(strings.Join(append([]string{
		crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"),
		egBackendDoc("default", "b", "{endpoints: [{ip: {address: 10.0.0.1, port: 80}}, {fqdn: {hostname: x.example, port: 0}}, {unix: {path: /s}}]}"),
		gatewayDoc("g", "eg", "[{name: a, protocol: HTTP, port: 80}]", ""),
		pol(egV, "SecurityPolicy", "p", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]\n"+
			"extAuth: {http: {backendRef: {name: s, port: 1}, backendRefs: [{group: gateway.envoyproxy.io, kind: Backend, name: b, port: 8443, weight: 0}, {name: s, port: 80}]}}"),
	}, readinessTopo("status: {conditions: [{type: Programmed, status: \"False\"}]}\n")...), "\n---\n")))
	// NGF's PayloadProcessors: backends missing, across namespaces,
	// behind BackendTLSPolicies, on a Gateway and on a route (references
	// judged after conflicts), with a BackendTLSPolicy taking their
	// Gateways as ancestors.
	f.Add([]byte(strings.Join([]string{
		labelledCRD("gateway.nginx.org", "PayloadProcessor", "payloadprocessors", "inherited"),
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		ngfTopo + ngfGuards,
		pol(ngfV1, "PayloadProcessor", "gw", 0, ngfProc(gwRef, "{name: guard, port: 9000}")),
		pol(ngfV1, "PayloadProcessor", "older", 1, ngfProc(r1Ref, "{name: nope, namespace: other, port: 9000}")),
		pol(ngfV1, "PayloadProcessor", "newer", 2, ngfProc(r1Ref, "{name: route-guard}")),
		pol("gateway.networking.k8s.io/v1", "BackendTLSPolicy", "t", 0, "targetRefs: [{group: \"\", kind: Service, name: guard}]\nvalidation: {hostname: g.example, caCertificateRefs: [{group: \"\", kind: ConfigMap, name: ca}]}"),
	}, "\n---\n")))
	// BackendTLSPolicies on a Service and on its port at NGF's Gateways,
	// which rank neither (join levels), and at Envoy Gateway's.
	f.Add([]byte(strings.Join([]string{
		crd("gateway.networking.k8s.io", "BackendTLSPolicy", "backendtlspolicies"),
		unrankedTopo(profiles.NGFController, profiles.EnvoyGatewayController, 9000),
		btls("port", 0, "http", "b.example"), btls("whole", 1, "", "a.example"), btls("grpc", 2, "grpc", "c.example"),
	}, "\n---\n")))
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clienttrafficpolicies.gateway.envoyproxy.io}
spec: {group: gateway.envoyproxy.io, scope: Namespaced, names: {kind: ClientTrafficPolicy, plural: clienttrafficpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: eg, allowedListeners: {namespaces: {from: Same}}, listeners: [{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 80, hostname: b.example}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: d}
spec: {parentRef: {name: g}, listeners: [{name: c, protocol: HTTP, port: 80, hostname: c.example}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: p, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}, {group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: a}]}
`))
	// Envoy Gateway's merged Gateways: EnvoyPatchPolicies resolved by
	// name, one EnvoyProxy of the wrong shape, a shared port across two
	// Gateways of the merged class.
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: envoypatchpolicies.gateway.envoyproxy.io}
spec: {group: gateway.envoyproxy.io, scope: Namespaced, names: {kind: EnvoyPatchPolicy, plural: envoypatchpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clienttrafficpolicies.gateway.envoyproxy.io}
spec: {group: gateway.envoyproxy.io, scope: Namespaced, names: {kind: ClientTrafficPolicy, plural: clienttrafficpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: m}
spec: {controllerName: x, parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: p, namespace: d}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: o}
spec: {controllerName: x, parametersRef: {group: gateway.envoyproxy.io, kind: EnvoyProxy, name: q}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: p, namespace: d}
spec: {mergeGateways: true}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyProxy
metadata: {name: q, namespace: default}
spec: {mergeGateways: [true]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: a, namespace: d}
spec: {gatewayClassName: m, listeners: [{name: h, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: b, namespace: d}
spec: {gatewayClassName: m, listeners: [{name: h, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: c, namespace: d}
spec: {gatewayClassName: o, listeners: [{name: h, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: e1, namespace: d}
spec: {targetRef: {group: gateway.networking.k8s.io, kind: GatewayClass, name: m}, type: JSONPatch}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: EnvoyPatchPolicy
metadata: {name: e2, namespace: d}
spec: {targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: a}, type: JSONPatch}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: t, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: a}, {group: gateway.networking.k8s.io, kind: Gateway, name: c, sectionName: h}]}
`))
	// Istio's Telemetry at waypoints: namespace-wide ones of the root,
	// the waypoint's and a bound Service's namespace, one on the waypoint
	// class, a Service of the root namespace at a waypoint of another,
	// one Service label of the wrong shape.
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: telemetries.telemetry.istio.io}
spec: {group: telemetry.istio.io, scope: Namespaced, names: {kind: Telemetry, plural: telemetries}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: w, namespace: d}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: m, protocol: HBONE, port: 15008, allowedRoutes: {namespaces: {from: All}}}]}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: a, labels: {istio.io/use-waypoint: w, istio.io/use-waypoint-namespace: d}}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: r, namespace: istio-system, labels: {istio.io/use-waypoint: w, istio.io/use-waypoint-namespace: d}}
---
apiVersion: v1
kind: Service
metadata: {name: x, namespace: d, labels: {istio.io/use-waypoint: [w]}}
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: mesh, namespace: istio-system, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {tracing: [{providers: [{name: zipkin}], randomSamplingPercentage: 1}]}
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: ns, namespace: d, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {tracing: [{randomSamplingPercentage: 2}], accessLogging: [{match: {mode: SERVER}, providers: [{name: envoy}]}]}
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: ns, namespace: a, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {metrics: [{overrides: [{match: {mode: SERVER}, disabled: true}]}]}
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: c, namespace: istio-system}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: istio-waypoint}], tracing: [{customTags: {a: {literal: {value: b}}}}]}
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: p, namespace: a}
spec: {targetRefs: [{kind: Service, group: "", name: s, sectionName: http}, {group: gateway.networking.k8s.io, kind: Gateway, name: w}], tracing: [{match: {mode: 2}}]}
`))
	// NGINX Gateway Fabric's RateLimitPolicy (additive, inherited
	// fields) at a Gateway and its route, one with a rejectCode of the
	// wrong shape.
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratelimitpolicies.gateway.nginx.org}
spec: {group: gateway.nginx.org, scope: Namespaced, names: {kind: RateLimitPolicy, plural: ratelimitpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: nginx, listeners: [{name: a, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: d}
spec: {parentRefs: [{name: g}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: gw, namespace: d, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}], rateLimit: {dryRun: true, rejectCode: 429, logLevel: info}}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: route, namespace: d, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], rateLimit: {dryRun: false, rejectCode: {a: 1}, logLevel: [warn]}}
`))
	// Gloo's RouteOptions at one route (oldest-first, shallow) and an empty
	// Envoy Gateway policy beneath its own route attachment (overridden by
	// presence).
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: routeoptions.gateway.solo.io}
spec: {group: gateway.solo.io, scope: Namespaced, names: {kind: RouteOption, plural: routeoptions}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtrafficpolicies.gateway.envoyproxy.io}
spec: {group: gateway.envoyproxy.io, scope: Namespaced, names: {kind: BackendTrafficPolicy, plural: backendtrafficpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: eg, listeners: [{name: a, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: d}
spec: {parentRefs: [{name: g}], rules: [{backendRefs: [{name: s, port: 80}]}]}
---
apiVersion: gateway.solo.io/v1
kind: RouteOption
metadata: {name: old, namespace: d, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], options: {timeout: 1s, retries: {numRetries: 2}}}
---
apiVersion: gateway.solo.io/v1
kind: RouteOption
metadata: {name: new, namespace: d, creationTimestamp: "2026-01-02T00:00:00Z"}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], options: {timeout: 2s, prefixRewrite: /x}}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: both, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]}
`))
	// BackendTLSPolicy CA references read per implementation (Envoy
	// Gateway's class, a ListenerSet, a ClusterTrustBundle by kind alone,
	// a TLS Secret) and NGF rate limits across levels.
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backendtlspolicies.gateway.networking.k8s.io}
spec: {group: gateway.networking.k8s.io, scope: Namespaced, names: {kind: BackendTLSPolicy, plural: backendtlspolicies}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratelimitpolicies.gateway.nginx.org, labels: {gateway.networking.k8s.io/policy: inherited}}
spec: {group: gateway.nginx.org, scope: Namespaced, names: {kind: RateLimitPolicy, plural: ratelimitpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: eg, allowedListeners: {namespaces: {from: Same}}, listeners: [{name: a, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: d}
spec: {parentRef: {name: g}, listeners: [{name: c, protocol: HTTP, port: 81}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: d}
spec: {parentRefs: [{name: g}, {kind: ListenerSet, name: ls}], rules: [{backendRefs: [{name: s, port: 443}]}]}
---
apiVersion: certificates.k8s.io/v1
kind: ClusterTrustBundle
metadata: {name: b}
spec: {trustBundle: x}
---
apiVersion: v1
kind: Secret
metadata: {name: t, namespace: d}
type: kubernetes.io/tls
data: {tls.crt: eA==, tls.key: eA==}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: p, namespace: d}
spec: {targetRefs: [{group: "", kind: Service, name: s}], validation: {hostname: s.example, caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: b}, {kind: Secret, name: t}, {kind: Foo, name: f}]}}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: gw, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}], rateLimit: {rejectCode: 429, local: {rules: [{rate: 1r/s}]}}}
---
apiVersion: gateway.nginx.org/v1alpha1
kind: RateLimitPolicy
metadata: {name: rt, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}], rateLimit: {local: {rules: [{rate: 9r/s}]}}}
`))
	// kgateway route delegation: child rules kept, dropped and inherited,
	// matches that do not decode, a cycle.
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trafficpolicies.gateway.kgateway.dev}
spec: {group: gateway.kgateway.dev, scope: Namespaced, names: {kind: TrafficPolicy, plural: trafficpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: kgateway, listeners: [{name: a, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: p, namespace: d}
spec: {parentRefs: [{name: g}], rules: [{matches: [{path: {type: PathPrefix, value: /a}, method: GET, headers: [{name: x, value: "1"}]}], backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*"}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: c, namespace: d, annotations: {delegation.kgateway.dev/inherit-parent-matcher: "yes"}}
spec: {rules: [{matches: [{path: {type: RegularExpression, value: "/("}}]}, {backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: p}]}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: e, namespace: d}
spec: {rules: [{matches: [{path: {value: 7}}]}, {matches: [{path: {type: PathPrefix, value: /a/b}, method: GET, headers: [{name: x, value: "1"}]}]}]}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: t, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}], timeouts: {request: 1s}}
`))
	f.Fuzz(func(t *testing.T, in []byte) {
		run := func() []byte {
			objs, probs := manifest.Decode(bytes.NewReader(in), "in")
			// NGF's flag-gated kinds on, so that their policies are
			// computed rather than Disabled (no other kind reads them).
			rep := report.Build(engine.Compute(objs, ngfFlagsOn), "", probs)
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatalf("the report does not marshal: %v", err)
			}
			return b
		}
		if a, b := run(), run(); !bytes.Equal(a, b) {
			t.Fatalf("two runs over the same input differ:\n%s\n%s", a, b)
		}
	})
}
