package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// istioTopo: Istio's ingress class, its waypoint class and Envoy
// Gateway's; in default, two Istio Gateways (ingress, with an
// infrastructure label, and other), one of Envoy Gateway, one waypoint;
// in apps, one Istio Gateway.
const istioTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ingress, namespace: default}
spec:
  gatewayClassName: istio
  infrastructure: {labels: {tier: edge}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other, namespace: default}
spec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg-gw, namespace: default}
spec: {gatewayClassName: eg, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: default}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: apps-gw, namespace: apps}
spec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}]}
`

// policiesAt lists the policies in the additive effective policy of kind
// at a Gateway.
func policiesAt(t *testing.T, res *engine.Result, kind, ns, gateway string) []string {
	t.Helper()
	var out []string
	for _, e := range res.Effective {
		if e.Kind.GroupKind.Kind != kind || e.Target != (topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: ns, Name: gateway}) {
			continue
		}
		for _, c := range e.Contexts {
			for k := range c.Spec {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// The pods istiod deploys for a Gateway carry its template's labels: the
// class name and gateway.istio.io/managed (fixed), the Deployment's
// canonical name and revision and the sidecar opt-out (below the
// Gateway's infrastructure labels). A root-namespace policy selecting
// the class reaches every Istio Gateway; a canonical name is the
// Gateway's name with its class's, or its name-override annotation. A
// Gateway naming its own Service by hostname is not deployed by istiod:
// only its gateway name (and infrastructure labels) are known there.
func TestIstioUntargetedTemplateLabels(t *testing.T) {
	const v = "security.istio.io/v1"
	extra := `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: renamed, namespace: default, annotations: {gateway.istio.io/name-override: edge-proxy}}
spec:
  gatewayClassName: istio
  infrastructure: {labels: {service.istio.io/canonical-revision: v2}}
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: byo, namespace: default}
spec: {gatewayClassName: istio, addresses: [{type: Hostname, value: byo-svc}], listeners: [{name: http, protocol: HTTP, port: 80}]}
`
	res := compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), istioTopo+extra,
		`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: by-class, namespace: istio-system}
spec: {action: DENY, selector: {matchLabels: {gateway.networking.k8s.io/gateway-class-name: istio}}}`,
		pol(v, "AuthorizationPolicy", "by-managed", 0, `selector: {matchLabels: {gateway.istio.io/managed: istio.io-gateway-controller}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "by-canonical", 1, `selector: {matchLabels: {service.istio.io/canonical-name: other-istio, sidecar.istio.io/inject: "false"}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "overridden", 2, `selector: {matchLabels: {service.istio.io/canonical-name: edge-proxy, service.istio.io/canonical-revision: v2}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "latest", 3, `selector: {matchLabels: {service.istio.io/canonical-revision: latest}}
action: AUDIT`))
	for gw, wantPols := range map[string][]string{
		"ingress": {"default/by-managed", "default/latest", "istio-system/by-class"},
		"other":   {"default/by-canonical", "default/by-managed", "default/latest", "istio-system/by-class"},
		"renamed": {"default/by-managed", "default/overridden", "istio-system/by-class"},
		"byo":     nil,
		"eg-gw":   nil,
	} {
		want(t, gw, policiesAt(t, res, "AuthorizationPolicy", "default", gw), wantPols)
	}
	want(t, "apps-gw", policiesAt(t, res, "AuthorizationPolicy", "apps", "apps-gw"), []string{"istio-system/by-class"})
	want(t, "waypoint", policiesAt(t, res, "AuthorizationPolicy", "default", "waypoint"), []string(nil))
}

// TestIstioUntargetedPolicies: an Istio policy without targetRefs applies
// as istiod applies it to the Gateway API Gateways it deploys: every Istio
// Gateway of its namespace (of every namespace from istio-system), not a
// waypoint nor another implementation's Gateway, narrowed by its workload
// selector over the labels attache can know the Gateway's pods carry (the
// gateway name, spec.infrastructure.labels). A selector on other labels
// selects workloads attache does not see: not Invalid. A malformed
// selector is Invalid, naming the field.
func TestIstioUntargetedPolicies(t *testing.T) {
	const v = "security.istio.io/v1"
	rootPolicy := `
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: mesh-wide, namespace: istio-system}
spec: {action: DENY}`
	res := compute(t, engine.Options{},
		crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"),
		crd("networking.istio.io", "EnvoyFilter", "envoyfilters"),
		istioTopo, rootPolicy,
		pol(v, "AuthorizationPolicy", "ns-wide", 0, `action: ALLOW`),
		pol(v, "AuthorizationPolicy", "by-name", 1, `selector: {matchLabels: {gateway.networking.k8s.io/gateway-name: ingress}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "by-infra", 2, `selector: {matchLabels: {tier: edge}}
action: AUDIT`),
		pol(v, "AuthorizationPolicy", "unseen", 3, `selector: {matchLabels: {app: reviews}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "nowhere", 4, `selector: {matchLabels: {gateway.networking.k8s.io/gateway-name: nope}}
action: ALLOW`),
		pol(v, "AuthorizationPolicy", "malformed", 5, `selector: nope`),
		pol("networking.istio.io/v1alpha3", "EnvoyFilter", "filter", 6, `workloadSelector: {labels: {gateway.networking.k8s.io/gateway-name: other}}
configPatches: []`))

	want(t, "ingress", policiesAt(t, res, "AuthorizationPolicy", "default", "ingress"),
		[]string{"default/by-infra", "default/by-name", "default/ns-wide", "istio-system/mesh-wide"})
	want(t, "other", policiesAt(t, res, "AuthorizationPolicy", "default", "other"),
		[]string{"default/ns-wide", "istio-system/mesh-wide"})
	want(t, "apps-gw", policiesAt(t, res, "AuthorizationPolicy", "apps", "apps-gw"), []string{"istio-system/mesh-wide"})
	want(t, "eg-gw", policiesAt(t, res, "AuthorizationPolicy", "default", "eg-gw"), []string(nil))
	want(t, "waypoint", policiesAt(t, res, "AuthorizationPolicy", "default", "waypoint"), []string(nil))
	want(t, "EnvoyFilter at other", policiesAt(t, res, "EnvoyFilter", "default", "other"), []string{"default/filter"})
	want(t, "EnvoyFilter at ingress", policiesAt(t, res, "EnvoyFilter", "default", "ingress"), []string(nil))

	for _, name := range []string{"ns-wide", "by-name", "by-infra", "mesh-wide"} {
		want(t, name+" Accepted", status(t, res, name, "Accepted"), "True/Accepted")
	}
	msg := func(name string) string {
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == name {
				var parts []string
				for _, c := range ps.Conditions {
					parts = append(parts, c.Type+"="+c.Status+"/"+c.Reason+": "+c.Message)
				}
				return strings.Join(parts, " | ")
			}
		}
		return ""
	}
	if m := msg("unseen"); strings.Contains(m, "Invalid") || !strings.Contains(m, "spec.selector.matchLabels: selects workloads by labels attache cannot see on Gateways (app)") {
		t.Errorf("unseen: %s", m)
	}
	if m := msg("nowhere"); !strings.Contains(m, "matches the pods of no Istio Gateway in namespace default (gateway.networking.k8s.io/gateway-name=nope)") {
		t.Errorf("nowhere: %s", m)
	}
	if got := status(t, res, "malformed", "Accepted"); got != "False/Invalid" || !strings.Contains(msg("malformed"), "spec.selector") {
		t.Errorf("malformed: %s (%s)", got, msg("malformed"))
	}

	// Without the GatewayClass objects (files that hold none), the class
	// name decides: Istio's default class yes, its waypoint class and
	// others no.
	var gateways []string
	for _, doc := range strings.Split(istioTopo, "\n---\n") {
		if strings.Contains(doc, "kind: Gateway\n") {
			gateways = append(gateways, doc)
		}
	}
	res = compute(t, engine.Options{}, crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"),
		strings.Join(gateways, "\n---\n"), pol(v, "AuthorizationPolicy", "ns-wide", 0, `action: ALLOW`))
	for gw, wantPols := range map[string][]string{"ingress": {"default/ns-wide"}, "other": {"default/ns-wide"}, "eg-gw": nil, "waypoint": nil} {
		want(t, gw+" without classes", policiesAt(t, res, "AuthorizationPolicy", "default", gw), wantPols)
	}
}

// TestUntargetedScopeAnnotation: the CRD annotation sets the scope and
// its root namespace; without it (and without a profile), a policy with
// no targets stays Invalid.
func TestUntargetedScopeAnnotation(t *testing.T) {
	kindCRD := func(ann string) string {
		return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: meshpolicies.mesh.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations: {` + ann + `attache.dev/target-kinds: Gateway}
spec:
  group: mesh.example.com
  scope: Namespaced
  names: {kind: MeshPolicy, plural: meshpolicies}
  versions: [{name: v1, served: true, storage: true}]`
	}
	root := `
apiVersion: mesh.example.com/v1
kind: MeshPolicy
metadata: {name: everywhere, namespace: mesh-config}
spec: {x: 1}`
	res := compute(t, engine.Options{}, kindCRD(`attache.dev/untargeted-scope: "istio:mesh-config", `), istioTopo, root)
	want(t, "apps-gw", policiesAt(t, res, "MeshPolicy", "apps", "apps-gw"), []string{"x"})
	want(t, "everywhere", status(t, res, "everywhere", "Accepted"), "True/Accepted")

	res = compute(t, engine.Options{}, kindCRD(""), istioTopo, root)
	want(t, "without the annotation", status(t, res, "everywhere", "Accepted"), "False/Invalid")

	res = compute(t, engine.Options{}, kindCRD(`attache.dev/untargeted-scope: "mesh", `), istioTopo, root)
	found := false
	for _, p := range res.Problems {
		if strings.Contains(p.Error(), "attache.dev/untargeted-scope") && strings.Contains(p.Error(), `unknown untargeted scope "mesh"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("an unknown scope is not reported against its annotation: %v", res.Problems)
	}
}

// TestIncrementalUntargeted: the incremental engine sees an edit of an
// untargeted policy's selector (and of its namespace-wide reach): each
// step gives what a full computation gives, without recomputing in full.
func TestIncrementalUntargeted(t *testing.T) {
	objs, probs := manifest.Decode(strings.NewReader(strings.Join([]string{
		crd("security.istio.io", "AuthorizationPolicy", "authorizationpolicies"), istioTopo,
		pol("security.istio.io/v1", "AuthorizationPolicy", "p", 0, `selector: {matchLabels: {gateway.networking.k8s.io/gateway-name: ingress}}
action: ALLOW`),
	}, "\n---\n")), t.Name())
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	in := engine.NewIncremental(engine.Options{})
	check := func(step string, wantIngress, wantOther []string) {
		t.Helper()
		res := in.Compute(objs)
		if ch := in.LastChange(); ch.Full && step != "start" {
			t.Fatalf("%s: recomputed in full: %s", step, ch.Reason)
		}
		want(t, step+": ingress", policiesAt(t, res, "AuthorizationPolicy", "default", "ingress"), wantIngress)
		want(t, step+": other", policiesAt(t, res, "AuthorizationPolicy", "default", "other"), wantOther)
		full := engine.Compute(objs, engine.Options{})
		want(t, step+": other, computed in full", policiesAt(t, full, "AuthorizationPolicy", "default", "other"), wantOther)
	}
	check("start", []string{"default/p"}, nil)
	edit := func(f func(spec map[string]any)) {
		for i, o := range objs {
			if o.Object.GetName() == "p" {
				u := o.Object.DeepCopy()
				f(u.Object["spec"].(map[string]any))
				u.SetResourceVersion(u.GetResourceVersion() + "1")
				objs[i].Object = u
			}
		}
	}
	edit(func(spec map[string]any) {
		spec["selector"] = map[string]any{"matchLabels": map[string]any{"gateway.networking.k8s.io/gateway-name": "other"}}
	})
	check("selector names other", nil, []string{"default/p"})
	edit(func(spec map[string]any) { delete(spec, "selector") })
	check("namespace-wide", []string{"default/p"}, []string{"default/p"})
}
