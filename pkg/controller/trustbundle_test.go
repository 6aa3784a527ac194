package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"

	"github.com/attache-dev/attache/internal/testpki"
)

// trustBundle is a ClusterTrustBundle at version holding bundle.
func trustBundle(version, name, bundle string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certificates.k8s.io/" + version, "kind": "ClusterTrustBundle",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"trustBundle": bundle},
	}}
}

var gvkTrustBundle = schema.GroupVersionKind{Group: policy.KindClusterTrustBundle.Group, Version: "v1", Kind: policy.KindClusterTrustBundle.Kind}

// TestCacheTrimsTrustBundles: the cache's default transform keeps of a
// ClusterTrustBundle (at any version) its metadata, stripped, and a
// placeholder for a set bundle, never the certificates (nor kubectl's
// copy of them in last-applied-configuration), whatever the
// DefaultTransform; an empty bundle leaves no spec. ClusterTrustBundles
// have no ByObject entry: the cache would fail to start on a cluster that
// does not serve them.
func TestCacheTrimsTrustBundles(t *testing.T) {
	const secretish = "MIIBszCCAVmgAwIBAgIBATAKBggqhkjOPQQDAjAaMRgwFgYDVQQDEw9h"
	bundle := func(version, content string) *unstructured.Unstructured {
		u := trustBundle(version, "b", content)
		u.Object["metadata"] = map[string]any{"name": "b", "uid": "u1", "resourceVersion": "7",
			"annotations":   map[string]any{lastApplied: `{"spec":{"trustBundle":"` + content + `"}}`, "team": "edge"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}}
		u.Object["spec"].(map[string]any)["signerName"] = "example.com/signer"
		return u
	}
	want := func(version string, set bool) string {
		m := map[string]any{"apiVersion": "certificates.k8s.io/" + version, "kind": "ClusterTrustBundle",
			"metadata": map[string]any{"name": "b", "uid": "u1", "resourceVersion": "7", "annotations": map[string]any{"team": "edge"}}}
		if set {
			m["spec"] = map[string]any{"trustBundle": "set"}
		}
		return fmt.Sprint(m)
	}
	forCacheOptions(t, 6, func(name string, opts cache.Options) {
		for proto := range opts.ByObject {
			if gvk := proto.GetObjectKind().GroupVersionKind(); gvk.Group == policy.KindClusterTrustBundle.Group {
				t.Errorf("%s: a ByObject entry for %v: the cache would not start where it is not served", name, gvk)
			}
		}
		for _, v := range []string{"v1", "v1beta1", "v1alpha1"} {
			for _, content := range []string{"-----BEGIN CERTIFICATE-----\n" + secretish + "\n-----END CERTIFICATE-----\n", ""} {
				out, err := opts.DefaultTransform(bundle(v, content))
				if err != nil {
					t.Fatal(err)
				}
				u := out.(*unstructured.Unstructured)
				if got := fmt.Sprint(u.Object); got != want(v, content != "") {
					t.Errorf("%s, ClusterTrustBundle %s, bundle set %v: cached\n%s\nwant\n%s", name, v, content != "", got, want(v, content != ""))
				}
				if raw, _ := json.Marshal(u.Object); strings.Contains(string(raw), secretish) {
					t.Errorf("%s, ClusterTrustBundle %s: the certificate stays in the cache: %s", name, v, raw)
				}
			}
		}
	})
	// Another kind's spec.trustBundle is not a ClusterTrustBundle's.
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "ClusterTrustBundle",
		"metadata": map[string]any{"name": "x"}, "spec": map[string]any{"trustBundle": "keep", "other": "keep"}}}
	if out, err := TransformTrustBundle(other); err != nil || fmt.Sprint(out.(*unstructured.Unstructured).Object["spec"]) != "map[other:keep trustBundle:keep]" {
		t.Errorf("example.com ClusterTrustBundle: %v %v, want it untouched", out, err)
	}
}

// TestTrustBundlesWanted: ClusterTrustBundles are wanted as holders while
// a policy kind reads them (BackendTLSPolicy, for Envoy Gateway's
// classes), without a version: it is discovered. Not for kinds that do
// not.
func TestTrustBundlesWanted(t *testing.T) {
	c := &Controller{goKinds: map[topology.GroupKind]bool{}}
	sp := topology.GroupKind{Group: "x.example", Kind: "SizePolicy"}
	crds := map[topology.GroupKind]*crdInfo{
		sp: {gk: sp, plural: "sizepolicies", version: "v1", established: true, policy: true, holderKinds: []topology.GroupKind{policy.KindConfigMap}},
	}
	if w := c.wantedKinds(crds)[policy.KindClusterTrustBundle]; w != nil {
		t.Errorf("ClusterTrustBundles watched without a kind reading them: %+v", w)
	}
	crds[sp].holderKinds = append(crds[sp].holderKinds, policy.KindClusterTrustBundle)
	w := c.wantedKinds(crds)[policy.KindClusterTrustBundle]
	if w == nil || w.role != roleHolder || w.resource != "clustertrustbundles" || w.gvk != (schema.GroupVersionKind{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}) {
		t.Errorf("ClusterTrustBundle watch = %+v, want a holder watch of certificates.k8s.io clustertrustbundles, version to discover", w)
	}
	// The Gateway API's BackendTLSPolicy, as the controller reads its CRD.
	crdFiles, err := gatewayAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range crdFiles {
		if !strings.Contains(f, "backendtlspolicies") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		if ci := readCRD(u, true); !slices.Contains(ci.holderKinds, policy.KindClusterTrustBundle) {
			t.Errorf("BackendTLSPolicy: holder kinds %v, want ClusterTrustBundle among them", ci.holderKinds)
		}
	}
}

var gvkTrustPolicy = schema.GroupVersionKind{Group: "ctb.example.com", Version: "v1", Kind: "TrustPolicy"}

// trustPolicyCRD is a Direct kind on Services whose policies name
// ClusterTrustBundles only (validation.caCertificateRefs): the
// controller's reading of them, whatever a profile says.
func trustPolicyCRD() *unstructured.Unstructured {
	return policyCRD(gvkTrustPolicy, "trustpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":         "Service",
		policy.AnnotationCACertificateRefs: "validation.caCertificateRefs kinds=ClusterTrustBundle",
		AnnotationOwnedBy:                  testControllerName,
	})
}

// TestTrustBundleChangesRecompute: a TrustPolicy naming ClusterTrustBundle
// <name> (absent) is Accepted=False/NoValidCACertificate; creating the
// bundle makes it accepted with ResolvedRefs=True, deleting it takes that
// back: each a recomputation the bundle's event schedules (the policy
// does not change). The cache holds the bundle at v1, with a placeholder
// for the certificates. A bundle no policy names schedules no
// recomputation.
func TestTrustBundleChangesRecompute(t *testing.T) {
	k := newKube(t)
	k.apply("", trustPolicyCRD())
	defer k.delete(crdGVK, "", "trustpolicies."+gvkTrustPolicy.Group)
	const ns, bundleName, unnamed = "ctb-recompute", "attache-test-recompute", "attache-test-unnamed"
	defer k.delete(gvkTrustBundle, "", bundleName)
	defer k.delete(gvkTrustBundle, "", unnamed)
	k.namespace(ns)
	r := startController(t, Options{}, nil)
	k.apply(ns, decodeAll(t, egObjects)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkTrustPolicy.GroupVersion().String(), "kind": gvkTrustPolicy.Kind,
		"metadata": map[string]any{"name": "trust"},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}},
			"validation": map[string]any{"caCertificateRefs": []any{map[string]any{"group": "certificates.k8s.io", "kind": "ClusterTrustBundle", "name": bundleName}}},
		},
	}})
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvkTrustPolicy, ns, "trust", want, "Accepted", "ResolvedRefs")
	}
	expect("no ClusterTrustBundle", "Service/s1 False/NoValidCACertificate False/InvalidCACertificateRef")
	r.waitIdle(t, 0)
	if w := r.c.watchOf(policy.KindClusterTrustBundle); w == nil || w.gvk != gvkTrustBundle {
		t.Fatalf("ClusterTrustBundles watch = %+v, want one at v1", w)
	}

	pemText := testpki.CAPEM(t)
	k.apply("", trustBundle("v1", bundleName, pemText))
	expect("ClusterTrustBundle created", "Service/s1 True/Accepted True/ResolvedRefs")
	r.waitIdle(t, 0)
	getCtx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(gvkTrustBundle)
	if err := r.c.cache.Get(getCtx, client.ObjectKey{Name: bundleName}, cached); err != nil {
		t.Fatalf("the ClusterTrustBundle is not in the controller's cache: %v", err)
	}
	if raw, _ := json.Marshal(cached.Object); fmt.Sprint(cached.Object["spec"]) != "map[trustBundle:set]" || strings.Contains(string(raw), "CERTIFICATE") {
		t.Errorf("cached ClusterTrustBundle: %s, want spec.trustBundle a placeholder", raw)
	}

	n := r.c.computations.Load()
	k.apply("", trustBundle("v1", unnamed, pemText))
	time.Sleep(300 * time.Millisecond) // past the debounce
	r.waitIdle(t, 0)
	if got := r.c.computations.Load(); got != n {
		t.Errorf("a ClusterTrustBundle no policy names scheduled %d recomputations", got-n)
	}

	k.delete(gvkTrustBundle, "", bundleName)
	expect("ClusterTrustBundle deleted", "Service/s1 False/NoValidCACertificate False/InvalidCACertificateRef")
	r.waitIdle(t, 0)
}

// ctbObjects: GatewayClasses ctb-eg (Envoy Gateway's controllerName) and
// ctb-other (another implementation's), a Gateway of each (geg, gother),
// a route from each to a Service of its own (seg, sother), and a
// BackendTLSPolicy on each Service naming ClusterTrustBundle %[1]s with
// group "", as Envoy Gateway's own fixtures do (it reads the kind only).
const ctbObjects = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ctb-eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ctb-other}
spec: {controllerName: example.com/other}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: geg}
spec:
  gatewayClassName: ctb-eg
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gother}
spec:
  gatewayClassName: ctb-other
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reg}
spec:
  parentRefs: [{name: geg}]
  rules: [{backendRefs: [{name: seg, port: 443}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rother}
spec:
  parentRefs: [{name: gother}]
  rules: [{backendRefs: [{name: sother, port: 443}]}]
---
apiVersion: v1
kind: Service
metadata: {name: seg}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Service
metadata: {name: sother}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: eg}
spec:
  targetRefs: [{group: "", kind: Service, name: seg}]
  validation: {hostname: seg.example, caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: %[1]s}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: other}
spec:
  targetRefs: [{group: "", kind: Service, name: sother}]
  validation: {hostname: sother.example, caCertificateRefs: [{group: "", kind: ClusterTrustBundle, name: %[1]s}]}
`

var (
	btlsKind = topology.GroupKind{Group: topology.GatewayGroup, Kind: "BackendTLSPolicy"}
	gvkBTLS  = schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "BackendTLSPolicy"}
	gvkClass = schema.GroupVersionKind{Group: topology.GatewayGroup, Version: "v1", Kind: "GatewayClass"}
)

// applyCTBObjects creates ctbObjects in ns (naming bundle), and deletes
// its GatewayClasses, which are cluster-scoped, at the end of the test.
func applyCTBObjects(t *testing.T, k *kube, ns, bundle string) {
	t.Helper()
	k.namespace(ns)
	t.Cleanup(func() {
		k.delete(gvkClass, "", "ctb-eg")
		k.delete(gvkClass, "", "ctb-other")
	})
	k.apply(ns, decodeAll(t, fmt.Sprintf(ctbObjects, bundle))...)
}

// TestBackendTLSPolicyClusterTrustBundle: end to end, under the shipped
// ClusterRole (plus patch on BackendTLSPolicy status). A BackendTLSPolicy
// naming a ClusterTrustBundle (group "") below a Gateway of Envoy
// Gateway's class is judged as Envoy Gateway reads it: NoValidCACertificate
// while the bundle does not exist, accepted with ResolvedRefs=True once it
// does, NoValidCACertificate again once it is deleted. Below a Gateway of
// another class, Gateway API's core reading (ConfigMaps only) makes the
// same reference InvalidKind. A controller that may not list
// ClusterTrustBundles does not judge references to them: the first
// policy is accepted, without the bundle, with no ResolvedRefs condition.
func TestBackendTLSPolicyClusterTrustBundle(t *testing.T) {
	k := newKube(t)
	const ns, bundleName = "ctb-e2e", "attache-test-e2e"
	defer k.delete(gvkTrustBundle, "", bundleName)
	applyCTBObjects(t, k, ns, bundleName)
	r := startController(t, Options{OwnedKinds: []topology.GroupKind{btlsKind}}, trustBundleUser(t, true))
	expect := func(what, name, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvkBTLS, ns, name, want, "Accepted", "ResolvedRefs")
	}
	expect("Envoy Gateway, no bundle", "eg", "Gateway/geg False/NoValidCACertificate False/InvalidCACertificateRef")
	expect("another implementation, no bundle", "other", "Gateway/gother False/NoValidCACertificate False/InvalidKind")

	k.apply("", trustBundle("v1", bundleName, testpki.CAPEM(t)))
	expect("Envoy Gateway, bundle created", "eg", "Gateway/geg True/Accepted True/ResolvedRefs")
	expect("another implementation, bundle created", "other", "Gateway/gother False/NoValidCACertificate False/InvalidKind")

	k.delete(gvkTrustBundle, "", bundleName)
	expect("Envoy Gateway, bundle deleted", "eg", "Gateway/geg False/NoValidCACertificate False/InvalidCACertificateRef")
	r.waitIdle(t, 0)
	r.stop()

	r = startController(t, Options{OwnedKinds: []topology.GroupKind{btlsKind}}, trustBundleUser(t, false))
	expect("Envoy Gateway, ClusterTrustBundles not readable", "eg", "Gateway/geg True/Accepted -")
	expect("another implementation, ClusterTrustBundles not readable", "other", "Gateway/gother False/NoValidCACertificate False/InvalidKind")
	r.waitIdle(t, 0)
	if w := r.c.watchOf(policy.KindClusterTrustBundle); w != nil {
		t.Errorf("ClusterTrustBundles watched without the right to: %+v", w)
	}
}

// trustBundleUser is a user bound to deploy/base/clusterrole.yaml (with
// its rule on clustertrustbundles, or without), plus get and status patch
// on BackendTLSPolicies.
func trustBundleUser(t *testing.T, bundles bool) *rest.Config {
	return shippedRoleUser(t, "trustbundles", policy.KindClusterTrustBundle.Group, "clustertrustbundles", bundles, topology.GatewayGroup, "backendtlspolicies")
}

// TestTrustBundleServedVersions runs the controller against API servers
// serving ClusterTrustBundles at v1beta1 only, and not at all. The
// manager starts either way (no ByObject entry for them); ClusterTrustBundles
// are watched at v1beta1 in the first, and the bundle there makes the
// BackendTLSPolicy below Envoy Gateway's class accepted; in the second
// they are not watched, and the reference is not found (the bundle
// cannot exist), not left unjudged.
func TestTrustBundleServedVersions(t *testing.T) {
	crds, err := gatewayAPICRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, runtimeConfig, version, want string
	}{
		{"v1beta1", "certificates.k8s.io/v1beta1=true,certificates.k8s.io/v1/clustertrustbundles=false", "v1beta1", "Gateway/geg True/Accepted True/ResolvedRefs"},
		{"NotServed", "certificates.k8s.io/v1/clustertrustbundles=false", "", "Gateway/geg False/NoValidCACertificate False/InvalidCACertificateRef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := testenv.Start(t, testenv.WithCRDDirectoryPaths(crds...),
				testenv.WithAPIServerFlag("runtime-config", c.runtimeConfig),
				testenv.WithAPIServerFlag("shutdown-watch-termination-grace-period", "2s"))
			k := newKubeFor(t, e.Config)
			const ns, bundleName = "ctb-versions", "attache-test-versions"
			applyCTBObjects(t, k, ns, bundleName)
			if c.version != "" {
				k.apply("", trustBundle(c.version, bundleName, testpki.CAPEM(t)))
			}
			r := startController(t, Options{OwnedKinds: []topology.GroupKind{btlsKind}}, e.Config)
			waitAncestor(t, k, "the BackendTLSPolicy below Envoy Gateway's class", gvkBTLS, ns, "eg", c.want, "Accepted", "ResolvedRefs")
			r.waitIdle(t, 0)
			w := r.c.watchOf(policy.KindClusterTrustBundle)
			switch {
			case c.version == "" && w != nil:
				t.Errorf("ClusterTrustBundles watched where they are not served: %+v", w)
			case c.version != "" && (w == nil || w.gvk.Version != c.version):
				t.Errorf("ClusterTrustBundles watch = %+v, want one at %s", w, c.version)
			}
			r.c.mu.Lock()
			unread := r.c.unreadKinds[policy.KindClusterTrustBundle]
			r.c.mu.Unlock()
			if unread {
				t.Error("ClusterTrustBundles taken as unreadable: references to them would not be judged")
			}
		})
	}
}
