package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/policy"
)

var (
	gvkIssuer       = schema.GroupVersionKind{Group: policy.KindIssuer.Group, Version: "v1", Kind: policy.KindIssuer.Kind}
	gvkIssuerPolicy = schema.GroupVersionKind{Group: "issuer.example.com", Version: "v1", Kind: "IssuerPolicy"}
)

// certManagerCRD is a CRD serving cert-manager.io kind (Issuer or
// ClusterIssuer) at v1 with a status subresource: the test's own, as
// cert-manager's API defines the kinds (schema left open).
func certManagerCRD(kind, plural, scope string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".cert-manager.io"},
		"spec": map[string]any{
			"group": "cert-manager.io", "scope": scope,
			"names": map[string]any{"kind": kind, "plural": plural},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

// TestIssuerChangesRecompute: a Direct kind on Services naming a
// cert-manager Issuer at spec.issuerRef (as Kuadrant's TLSPolicy does:
// attache.dev/object-refs with ready=Ready kind=required) is Invalid
// while the Issuer does not exist, accepted and programmed once it does
// (no status yet), not programmed while its status says Ready=False, and
// programmed again at Ready=True: each a recomputation the Issuer's
// event schedules (the policy does not change; the last two are status
// only). The cache keeps the Issuer's status conditions, not its spec.
func TestIssuerChangesRecompute(t *testing.T) {
	k := newKube(t)
	k.apply("", certManagerCRD("Issuer", "issuers", "Namespaced"), certManagerCRD("ClusterIssuer", "clusterissuers", "Cluster"))
	defer k.deleteCRD("issuers.cert-manager.io")
	defer k.deleteCRD("clusterissuers.cert-manager.io")
	k.apply("", policyCRD(gvkIssuerPolicy, "issuerpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":  "Service",
		policy.AnnotationObjectRefs: "issuerRef kinds=Issuer,ClusterIssuer ready=Ready kind=required",
		AnnotationOwnedBy:           testControllerName,
	}))
	defer k.delete(crdGVK, "", "issuerpolicies."+gvkIssuerPolicy.Group)
	const ns = "issuer-recompute"
	k.namespace(ns)
	r := startController(t, Options{}, nil)
	k.apply(ns, decodeAll(t, egObjects)...)
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvkIssuerPolicy.GroupVersion().String(), "kind": gvkIssuerPolicy.Kind,
		"metadata": map[string]any{"name": "tls"},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}},
			"issuerRef":  map[string]any{"group": "cert-manager.io", "kind": "Issuer", "name": "ca"},
		},
	}})
	expect := func(what, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvkIssuerPolicy, ns, "tls", want, "Accepted", "Programmed")
	}
	expect("no Issuer", "Service/s1 False/Invalid -")
	r.waitIdle(t, 0)
	if w := r.c.watchOf(policy.KindIssuer); w == nil || w.gvk != gvkIssuer {
		t.Fatalf("Issuer watch = %+v, want one at v1", w)
	}

	const secretish = "https://acme.example.com/directory-of-an-account"
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": map[string]any{"name": "ca"},
		"spec": map[string]any{"acme": map[string]any{"server": secretish}},
	}})
	expect("Issuer created, no status", "Service/s1 True/Accepted True/Programmed")
	k.patch(gvkIssuer, ns, "ca", `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Pending","message":"registering"}]}}`, "status")
	expect("Issuer not Ready", "Service/s1 True/Accepted False/Unknown")
	k.patch(gvkIssuer, ns, "ca", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"ACMEAccountRegistered","message":"ok"}]}}`, "status")
	expect("Issuer Ready", "Service/s1 True/Accepted True/Programmed")
	r.waitIdle(t, 0)

	getCtx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cached := &unstructured.Unstructured{}
	cached.SetGroupVersionKind(gvkIssuer)
	if err := r.c.cache.Get(getCtx, client.ObjectKey{Namespace: ns, Name: "ca"}, cached); err != nil {
		t.Fatalf("the Issuer is not in the controller's cache: %v", err)
	}
	if raw, _ := json.Marshal(cached.Object); cached.Object["spec"] != nil || strings.Contains(string(raw), secretish) ||
		fmt.Sprint(cached.Object["status"]) == "<nil>" {
		t.Errorf("cached Issuer: %s, want its status conditions and no spec", raw)
	}
}

// TestIssuerCRDsInstalledLater: cert-manager installed after the
// controller started is picked up when its CRDs are: the Issuers are
// watched, and a TLSPolicy-like policy naming one is Invalid before, then
// accepted and programmed once the Issuer exists, without a restart or
// a resync; cert-manager removed, the watch stops and the policy is
// Invalid again.
func TestIssuerCRDsInstalledLater(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "issuerlate.example.com", Version: "v1", Kind: "IssuerPolicy"}
	k.apply("", policyCRD(gvk, "issuerpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":  "Service",
		policy.AnnotationObjectRefs: "issuerRef kinds=Issuer,ClusterIssuer ready=Ready kind=required",
		AnnotationOwnedBy:           testControllerName,
	}))
	defer k.delete(crdGVK, "", "issuerpolicies."+gvk.Group)
	const ns = "issuer-late"
	k.namespace(ns)
	k.apply(ns, service("s1"), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
		"metadata": map[string]any{"name": "tls"},
		"spec": map[string]any{
			"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "s1"}},
			"issuerRef":  map[string]any{"group": "cert-manager.io", "kind": "Issuer", "name": "ca"},
		},
	}})
	r := startController(t, Options{}, nil)
	waitAncestor(t, k, "no cert-manager", gvk, ns, "tls", "Service/s1 False/Invalid -", "Accepted", "Programmed")
	r.waitIdle(t, 0)
	if w := r.c.watchOf(policy.KindIssuer); w != nil {
		t.Fatalf("Issuers watched before cert-manager is installed: %+v", w)
	}

	k.apply("", certManagerCRD("Issuer", "issuers", "Namespaced"), certManagerCRD("ClusterIssuer", "clusterissuers", "Cluster"))
	k.apply(ns, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Issuer", "metadata": map[string]any{"name": "ca"},
		"spec": map[string]any{},
	}})
	waitAncestor(t, k, "the Issuer created after cert-manager", gvk, ns, "tls", "Service/s1 True/Accepted True/Programmed", "Accepted", "Programmed")
	if w := r.c.watchOf(policy.KindIssuer); w == nil || w.gvk != gvkIssuer {
		t.Errorf("Issuer watch = %+v, want one at v1", w)
	}

	k.deleteCRD("issuers.cert-manager.io")
	k.deleteCRD("clusterissuers.cert-manager.io")
	waitAncestor(t, k, "cert-manager removed", gvk, ns, "tls", "Service/s1 False/Invalid -", "Accepted", "Programmed")
	waitFor(t, "the Issuer watch stopped", func() string {
		if w := r.c.watchOf(policy.KindIssuer); w != nil {
			return fmt.Sprintf("still watching %v", w.gvk)
		}
		return ""
	})
}

var gvkSecret = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// TestDefaultHolderChangesRecompute: a kind reading a default Secret where
// its policies name none (as Kuadrant's DNSPolicy reads its namespace's
// default provider Secret: attache.dev/object-refs with default-label=)
// is not programmed while no Secret carries the label, programmed once
// one does (created, then a second one labelled: not programmed again,
// two defaults), and each label given or taken away recomputes though no
// policy changes and the Secrets' data stays the same. A Secret of
// another namespace does not count; a policy with unless= holding reads
// no default.
func TestDefaultHolderChangesRecompute(t *testing.T) {
	k := newKube(t)
	gvk := schema.GroupVersionKind{Group: "defaultholder.example.com", Version: "v1", Kind: "DNSishPolicy"}
	k.apply("", policyCRD(gvk, "dnsishpolicies", "Direct", map[string]string{
		"attache.dev/target-kinds":  "Service",
		policy.AnnotationObjectRefs: "providerRefs[] kinds=Secret missing=not-programmed default-label=example.com/default-provider=true unless=delegate=true",
		AnnotationOwnedBy:           testControllerName,
	}))
	defer k.delete(crdGVK, "", "dnsishpolicies."+gvk.Group)
	const ns = "default-holder"
	k.namespace(ns)
	k.namespace(ns + "-other")
	on := func(name, svc string, delegate bool) *unstructured.Unstructured {
		spec := map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": svc}}}
		if delegate {
			spec["delegate"] = true
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": map[string]any{"name": name}, "spec": spec}}
	}
	secret := func(name string, labelled bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"k": "eA=="}}}
		if labelled {
			u.SetLabels(map[string]string{"example.com/default-provider": "true"})
		}
		return u
	}
	k.apply(ns, service("s1"), service("s2"), on("dns", "s1", false), on("delegating", "s2", true))
	k.apply(ns+"-other", secret("elsewhere", true))
	r := startController(t, Options{}, nil)
	expect := func(what, name, want string) {
		t.Helper()
		waitAncestor(t, k, what, gvk, ns, name, want, "Accepted", "Programmed")
	}
	expect("no default Secret", "dns", "Service/s1 True/Accepted False/Unknown")
	expect("no default Secret, delegating", "delegating", "Service/s2 True/Accepted True/Programmed")
	k.apply(ns, secret("aws", false))
	r.waitIdle(t, 0)
	expect("an unlabelled Secret", "dns", "Service/s1 True/Accepted False/Unknown")
	k.patch(gvkSecret, ns, "aws", `{"metadata":{"labels":{"example.com/default-provider":"true"}}}`)
	expect("the Secret labelled", "dns", "Service/s1 True/Accepted True/Programmed")
	k.apply(ns, secret("gcp", true))
	expect("two labelled", "dns", "Service/s1 True/Accepted False/Unknown")
	k.patch(gvkSecret, ns, "gcp", `{"metadata":{"labels":{"example.com/default-provider":null}}}`)
	expect("the second's label taken away", "dns", "Service/s1 True/Accepted True/Programmed")
}
