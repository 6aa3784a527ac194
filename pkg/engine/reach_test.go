package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// reachCRD is colorCRD (atomic defaults) with the kind setting reach set
// to v, and Service as its effective target.
func reachCRD(v string) string {
	return strings.Replace(fmt.Sprintf(colorCRD, "atomic-defaults"), "    attache.dev/merge-strategies:",
		"    attache.dev/reach: "+v+"\n    attache.dev/merge-strategies:", 1)
}

// reachTopo is topo with an HTTPRoute naming no parent (orphan, to s2), one
// whose parent Gateway is not among the objects (lost, to s3) and a Gateway
// no route attaches to (g2).
const reachTopo = topo + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orphan}
spec:
  rules: [{backendRefs: [{name: s2, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost}
spec:
  parentRefs: [{name: missing}]
  rules: [{backendRefs: [{name: s3, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g2}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: s2}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: s3}
spec: {ports: [{name: http, port: 80}]}
`

// With reach "gateway", only paths from a Gateway reach effective targets:
// the routes with no Gateway above them give no context, and an accepted
// policy in no context is Programmed=False, reason Unknown. With "any"
// (the default) those routes' paths start at the routes themselves, and a
// policy in no context is programmed, with nothing to program.
func TestReachGateway(t *testing.T) {
	pols := []string{
		colorPolicy("on-g1", "g1", "Gateway", "color: red"),
		colorPolicy("on-g2", "g2", "Gateway", "color: red"),
		colorPolicy("on-orphan", "orphan", "HTTPRoute", "color: red"),
		colorPolicy("on-lost", "lost", "HTTPRoute", "color: red"),
	}
	for _, tc := range []struct {
		reach   string
		want    map[string]string
		targets []string
	}{
		{"gateway", map[string]string{"on-g1": "True/Programmed", "on-g2": "False/Unknown", "on-orphan": "False/Unknown", "on-lost": "False/Unknown"}, []string{"s1"}},
		{"any", map[string]string{"on-g1": "True/Programmed", "on-g2": "True/Programmed", "on-orphan": "True/Programmed", "on-lost": "True/Programmed"}, []string{"s1", "s2", "s3"}},
	} {
		t.Run(tc.reach, func(t *testing.T) {
			res := compute(t, engine.Options{}, append([]string{reachCRD(tc.reach), reachTopo}, pols...)...)
			for name, w := range tc.want {
				want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
				want(t, name+" Programmed", status(t, res, name, "Programmed"), w)
			}
			var targets []string
			for _, e := range res.Effective {
				targets = append(targets, e.Target.Name)
			}
			want(t, "effective targets", targets, tc.targets)
			if tc.reach == "gateway" {
				want(t, "on-g2 message", condition(t, res, "on-g2", "Programmed").Message,
					"Policy is not programmed: it is in the path to no effective target through a Gateway")
				// A route's missing parents are named (since session 32).
				want(t, "on-orphan message", condition(t, res, "on-orphan", "Programmed").Message,
					"Policy is not programmed: it is in the path to no effective target through a Gateway; HTTPRoute default/orphan names no parent Gateway")
				if m := condition(t, res, "on-lost", "Programmed").Message; m != "Policy is not programmed: it is in the path to no effective target through a Gateway; HTTPRoute default/lost names Gateway default/missing, not among the objects" {
					t.Errorf("on-lost message %q, want it to name the missing Gateway", m)
				}
				if engine.NotProgrammedInPart(condition(t, res, "on-g2", "Programmed")) {
					t.Error("NotProgrammedInPart reads a policy in no context as overridden in part")
				}
			}
		})
	}
}

// A Gateway whose GatewayClass is not among the objects starts paths all
// the same (attache's inputs often leave classes out); one whose class is
// there starts none of its own: its paths start at the class.
func TestReachGatewayWithoutClassObject(t *testing.T) {
	class := `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: example}
spec: {controllerName: example.com/gateway}`
	for _, withClass := range []bool{false, true} {
		docs := []string{reachCRD("gateway"), topo, colorPolicy("p", "g1", "Gateway", "color: red")}
		if withClass {
			docs = append(docs, class)
		}
		res := compute(t, engine.Options{}, docs...)
		want(t, fmt.Sprintf("class object %v: Programmed", withClass), status(t, res, "p", "Programmed"), "True/Programmed")
	}
}

func TestReachAnnotationChecked(t *testing.T) {
	for _, tc := range []struct{ crd, want string }{
		{reachCRD("mesh"), `unknown reach "mesh" (known: any, gateway)`},
		{strings.Replace(reachCRD("gateway"), "policy: Inherited", "policy: Direct", 1), "reach gateway narrows the paths of an Inherited kind; the class is Direct"},
	} {
		res := compute(t, engine.Options{}, tc.crd, topo)
		found := false
		for _, p := range res.Problems {
			if s := fmt.Sprint(p); strings.Contains(s, "attache.dev/reach") && strings.Contains(s, tc.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem names attache.dev/reach and %q: %+v", tc.want, res.Problems)
		}
	}
}

// The Kuadrant profiles reach through Gateways; a CRD labelled Direct
// drops the profile's setting (its paths are not walked) without a problem.
func TestReachGatewayFromProfile(t *testing.T) {
	for _, tc := range []struct {
		label string
		want  bool
	}{{"inherited", true}, {"Direct", false}} {
		res := compute(t, engine.Options{}, labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", tc.label), topo)
		for _, p := range res.Problems {
			t.Errorf("label %s: problem %v", tc.label, p)
		}
		k := kindOf(t, res, "RateLimitPolicy")
		want(t, "label "+tc.label+": reach through Gateways", k.ReachThroughGateway, tc.want)
	}
}
