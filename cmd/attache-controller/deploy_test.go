package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/manifest"
)

var (
	effectivePoliciesGVR     = schema.GroupVersionResource{Group: "attache.dev", Version: "v1alpha1", Resource: "effectivepolicies"}
	secretsGVR               = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	webhookConfigurationsGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
)

// kustomizeBuild renders a kustomization as `kubectl apply -k` does
// (kustomize's own library, the one kubectl embeds).
func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	y, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, probs := manifest.Decode(bytes.NewReader(y), "kustomize build "+dir)
	if len(probs) > 0 {
		t.Fatalf("kustomize build %s: %v", dir, probs)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

func containerArgs(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatal("the Deployment has no container")
	}
	raw, _ := cs[0].(map[string]any)["args"].([]any)
	args := make([]string, len(raw))
	for i, a := range raw {
		args[i] = fmt.Sprint(a)
	}
	return args
}

// TestDeployKustomization checks what `kubectl apply -k deploy/` installs:
// deploy/ and deploy/cert-manager/ build with kustomize; every object of
// deploy/ but the Deployment is accepted by a real API server; the
// controller then runs with the Deployment's own arguments as its
// ServiceAccount, under the shipped RBAC alone, and its certificate
// rotation fills the shipped Secret and injects the CA into the shipped
// webhook configuration, which applying deploy/ again keeps (cert-manager's
// variant leaves that Secret to cert-manager); it becomes ready.
func TestDeployKustomization(t *testing.T) {
	deploy := filepath.Join("..", "..", "deploy")
	objs := kustomizeBuild(t, deploy)
	for _, want := range [][2]string{{"Deployment", "attache-controller"}, {"ValidatingWebhookConfiguration", "attache-webhook"},
		{"Secret", "attache-webhook-tls"}, {"Service", "attache-webhook"}, {"ClusterRole", "attache-controller"},
		{"CustomResourceDefinition", "effectivepolicies.attache.dev"}} {
		if find(objs, want[0], want[1]) == nil {
			t.Fatalf("kustomize build deploy/: no %s %s", want[0], want[1])
		}
	}
	args := containerArgs(t, find(objs, "Deployment", "attache-controller"))
	if !slices.Contains(args, "--webhook-cert-rotation") || !slices.Contains(args, "--effective-policies") {
		t.Fatalf("the Deployment's arguments %q lack rotation or EffectivePolicies", args)
	}
	cm := kustomizeBuild(t, filepath.Join(deploy, "cert-manager"))
	if find(cm, "Certificate", "attache-webhook") == nil {
		t.Error("kustomize build deploy/cert-manager/: no Certificate attache-webhook")
	}
	if vwc := find(cm, "ValidatingWebhookConfiguration", "attache-webhook"); vwc == nil || vwc.GetAnnotations()["cert-manager.io/inject-ca-from"] != "attache-system/attache-webhook" {
		t.Error("deploy/cert-manager/: the webhook configuration does not ask cert-manager for its CA")
	}
	if find(cm, "Secret", "attache-webhook-tls") != nil {
		t.Error("deploy/cert-manager/ ships the webhook's Secret: cert-manager makes it, of type kubernetes.io/tls")
	}
	if cmArgs := containerArgs(t, find(cm, "Deployment", "attache-controller")); !slices.Contains(cmArgs, "--webhook-cert-rotation=false") || slices.Contains(cmArgs, "--webhook-cert-rotation") {
		t.Errorf("deploy/cert-manager/: arguments %q, want rotation off (its patch replaces an argument by index)", cmArgs)
	}

	// The objects, on a real API server (the Gateway API CRDs first, as
	// deploy/README.md says).
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatal(err)
	}
	crds, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(crds...))
	dyn := dynamic.NewForConfigOrDie(env.Config)
	ctx := context.Background()
	apply := func(kinds func(string) bool) {
		dc := discovery.NewDiscoveryClientForConfigOrDie(env.Config)
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		for _, u := range objs {
			if !kinds(u.GetKind()) {
				continue
			}
			m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
			if err != nil {
				t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
			}
			var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				r = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
			}
			if _, err := r.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	apply(func(k string) bool { return k == "Namespace" || k == "CustomResourceDefinition" })
	waitFor(t, "the shipped CRDs served", func() string {
		if _, err := dyn.Resource(effectivePoliciesGVR).Namespace("attache-system").List(ctx, metav1.ListOptions{}); err != nil {
			return err.Error()
		}
		return ""
	})
	apply(func(k string) bool { return k != "Namespace" && k != "CustomResourceDefinition" && k != "Deployment" })

	// The controller, as the Deployment runs it, as its ServiceAccount.
	user := env.UserConfig(t, "system:serviceaccount:attache-system:attache-controller", "system:serviceaccounts", "system:serviceaccounts:attache-system", "system:authenticated")
	probes, metrics, certDir := freeAddr(t), freeAddr(t), t.TempDir()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	args = append(args, "--metrics-bind-address="+metrics, "--health-probe-bind-address="+probes,
		"--leader-election-namespace=attache-system", "--webhook-namespace=attache-system",
		"--webhook-port="+port, "--webhook-cert-dir="+certDir)
	f, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("the Deployment's arguments: %v", err)
	}
	logs := &syncBuffer{}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, f, newLogger(f, logs), user) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the controller did not stop within a minute")
		}
		if t.Failed() {
			t.Logf("controller logs:\n%s", logs.String())
		}
	})

	secrets := dyn.Resource(secretsGVR).Namespace("attache-system")
	vwcs := dyn.Resource(webhookConfigurationsGVR)
	waitFor(t, "certificates in the Secret and the CA in the webhook configuration", func() string {
		s, err := secrets.Get(ctx, "attache-webhook-tls", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		data, _, _ := unstructured.NestedStringMap(s.Object, "data")
		for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
			if data[k] == "" {
				return "Secret attache-webhook-tls has no " + k
			}
		}
		v, err := vwcs.Get(ctx, "attache-webhook", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		hooks, _, _ := unstructured.NestedSlice(v.Object, "webhooks")
		if len(hooks) == 0 {
			return "no webhook"
		}
		ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
		if ca != data["ca.crt"] {
			return "caBundle is not the Secret's ca.crt"
		}
		return ""
	})
	// What the kubelet does with the Deployment's secret volume: the
	// Secret's keys as files in the certificate folder.
	s, err := secrets.Get(ctx, "attache-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(s.Object, "data")

	// `kubectl apply -k deploy/` again (an upgrade, a change of flags)
	// keeps the certificates: as kubectl applies (a three-way strategic
	// merge patch, the manifest being the last one applied), then
	// server-side, forcing conflicts.
	shipped := find(objs, "Secret", "attache-webhook-tls")
	manifestJSON, _ := shipped.MarshalJSON()
	liveJSON, _ := s.MarshalJSON()
	meta, err := strategicpatch.NewPatchMetaFromStruct(&corev1.Secret{})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(manifestJSON, manifestJSON, liveJSON, meta, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Patch(ctx, "attache-webhook-tls", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Apply(ctx, "attache-webhook-tls", shipped, metav1.ApplyOptions{FieldManager: "kubectl", Force: true}); err != nil {
		t.Fatal(err)
	}
	again, err := secrets.Get(ctx, "attache-webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kept, _, _ := unstructured.NestedStringMap(again.Object, "data"); !maps.Equal(kept, data) {
		t.Errorf("applying deploy/ again changed the certificates' Secret (patch %s): keys %v", patch, slices.Sorted(maps.Keys(kept)))
	}
	for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
		b, err := base64.StdEncoding.DecodeString(data[k])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certDir, k), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "/readyz", func() string {
		if code, body := get("http://" + probes + "/readyz"); code != http.StatusOK {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	// The webhook answers over TLS with the certificate the rotator made,
	// for the Service's name, signed by the CA it injected.
	ca, _ := base64.StdEncoding.DecodeString(data["ca.crt"])
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", port), &tls.Config{RootCAs: pool, ServerName: "attache-webhook.attache-system.svc"})
	if err != nil {
		t.Fatalf("the webhook's certificate: %v", err)
	}
	conn.Close()
	if strings.Contains(logs.String(), "forbidden") {
		t.Errorf("the shipped RBAC refused something:\n%s", logs.String())
	}
}
