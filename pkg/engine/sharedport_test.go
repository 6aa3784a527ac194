package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// TestEnvoyGatewaySharedPortListeners: Envoy Gateway serves the
// plain-HTTP listeners of a Gateway (its ListenerSets' included) that share
// a port with one Envoy listener, so a ClientTrafficPolicy on one of them,
// or on a whole ListenerSet holding one, would reach listeners it does not
// target: it is Invalid there. A Gateway-wide policy, an HTTPS listener and
// a port of its own are fine; the annotation turns the rule off.
func TestEnvoyGatewaySharedPortListeners(t *testing.T) {
	topo := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec:
  gatewayClassName: eg
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: a, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: b, protocol: HTTP, port: 80, hostname: b.example.com}
  - {name: tls, protocol: HTTPS, port: 443, hostname: a.example.com, tls: {certificateRefs: [{name: c}]}}
  - {name: tls2, protocol: HTTPS, port: 443, hostname: b.example.com, tls: {certificateRefs: [{name: c}]}}
  - {name: alone, protocol: HTTP, port: 9090}
  - {name: d, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: default}
spec:
  parentRef: {name: g}
  listeners: [{name: e, protocol: HTTP, port: 8080, hostname: e.example.com}, {name: f, protocol: HTTP, port: 7070}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: own, namespace: default}
spec:
  parentRef: {name: g}
  listeners: [{name: lx, protocol: HTTP, port: 6060, hostname: x.example.com}, {name: ly, protocol: HTTP, port: 6060, hostname: y.example.com}]
`
	ctp := func(name, kind, target, section string) string {
		ref := "{group: gateway.networking.k8s.io, kind: " + kind + ", name: " + target
		if section != "" {
			ref += ", sectionName: " + section
		}
		return pol(egV, "ClientTrafficPolicy", name, 0, "targetRefs: ["+ref+"}]\ntimeout: {http: {idleTimeout: 5s}}")
	}
	docs := []string{topo,
		ctp("on-a", "Gateway", "g", "a"), ctp("on-tls", "Gateway", "g", "tls"), ctp("on-alone", "Gateway", "g", "alone"),
		ctp("on-d", "Gateway", "g", "d"), ctp("on-gateway", "Gateway", "g", ""), ctp("on-ls", "ListenerSet", "ls", ""),
		ctp("on-own", "ListenerSet", "own", "")}
	res := compute(t, engine.Options{}, append([]string{crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies")}, docs...)...)
	accepted := func(res *engine.Result, name string) (string, string) {
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == name {
				for _, c := range ps.Conditions {
					if c.Type == "Accepted" {
						return c.Status + "/" + c.Reason, c.Message
					}
				}
			}
		}
		return "", ""
	}
	for name, wantMsg := range map[string]string{
		"on-a":  "listener Gateway default/g#a shares port 80 with the plain-HTTP listeners Gateway default/g#b",
		"on-d":  "listener Gateway default/g#d shares port 8080 with the plain-HTTP listeners ListenerSet default/ls#e",
		"on-ls": "listener ListenerSet default/ls#e shares port 8080 with the plain-HTTP listeners Gateway default/g#d",
	} {
		got, msg := accepted(res, name)
		if got != "False/Invalid" || !strings.Contains(msg, wantMsg) || !strings.Contains(msg, "Envoy Gateway rejects it there") {
			t.Errorf("%s: %s %q, want Invalid with %q", name, got, msg, wantMsg)
		}
	}
	for _, name := range []string{"on-tls", "on-alone", "on-gateway", "on-own"} {
		if got, msg := accepted(res, name); got != "True/Accepted" {
			t.Errorf("%s: %s %q, want Accepted", name, got, msg)
		}
	}

	// The CRD's annotation turns the rule off.
	allow := strings.Replace(crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		"metadata: {name: clienttrafficpolicies.gateway.envoyproxy.io}",
		"metadata: {name: clienttrafficpolicies.gateway.envoyproxy.io, annotations: {attache.dev/shared-port-listeners: allow}}", 1)
	res = compute(t, engine.Options{}, append([]string{allow}, docs...)...)
	if got, msg := accepted(res, "on-a"); got != "True/Accepted" {
		t.Errorf("on-a with the rule off: %s %q", got, msg)
	}
}
