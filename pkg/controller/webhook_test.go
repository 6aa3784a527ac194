package controller

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
	"github.com/attache-dev/attache/pkg/webhook"
)

// warningsOf collects the warnings the API server sends a client.
type warningsOf struct {
	mu    sync.Mutex
	lines []string
}

func (w *warningsOf) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	w.lines = append(w.lines, text)
	w.mu.Unlock()
}

func (w *warningsOf) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.lines
	w.lines = nil
	return out
}

// webhookFixture is the API server calling attache's webhook, installed
// from deploy/base/webhook.yaml, at 127.0.0.1 with envtest's serving
// certificates.
type webhookFixture struct {
	certDir string
	caData  []byte
	ports   []int
	// admissions are the replicas' webhook states, by port index.
	admissions [2]*Admission
	dyn        dynamic.Interface
	warn       *warningsOf
}

// mustUnstructured reads one object from YAML.
func mustUnstructured(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// holdLease creates a leader-election Lease held by someone else for an
// hour, so that a manager electing on it never leads.
func holdLease(t *testing.T, ns, name string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, _ = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	holder, dur, now := "someone-else", int32(3600), metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, AcquireTime: &now, RenewTime: &now}}
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// freePort asks the kernel for a free port on 127.0.0.1.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// shippedWebhook reads the ValidatingWebhookConfiguration of deploy/.
func shippedWebhook(t *testing.T) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	objs, _, err := manifest.Read([]string{filepath.Join(deployDir, "base", "webhook.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Object.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		data, _ := json.Marshal(o.Object.Object)
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := json.Unmarshal(data, &vwc); err != nil {
			t.Fatal(err)
		}
		return &vwc
	}
	t.Fatal("no ValidatingWebhookConfiguration in deploy/base/webhook.yaml")
	return nil
}

// newWebhookFixture installs the shipped webhook configuration, pointed at
// the first of two local ports.
func newWebhookFixture(t *testing.T) *webhookFixture {
	t.Helper()
	wio := &envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"}
	if err := wio.PrepWithoutInstalling(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wio.Cleanup() })
	f := &webhookFixture{certDir: wio.LocalServingCertDir, caData: wio.LocalServingCAData, ports: []int{wio.LocalServingPort, freePort(t)}, warn: &warningsOf{}}
	vwc := shippedWebhook(t)
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore || w.TimeoutSeconds == nil || *w.TimeoutSeconds > 5 {
			t.Fatalf("deploy/base/webhook.yaml: webhook %s must have failurePolicy Ignore and a short timeout", w.Name)
		}
		url := fmt.Sprintf("https://127.0.0.1:%d%s", f.ports[0], *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: f.caData}
	}
	cs := env.Clientset(t)
	ctx := context.Background()
	_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, vwc.Name, metav1.DeleteOptions{})
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), vwc.Name, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandlerWithContext = nil
	cfg.WarningHandler = f.warn
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.dyn = dyn
	return f
}

// serve adds the webhook on ports[i] to a controller's manager.
func (f *webhookFixture) serve(i int, deny ...topology.GroupKind) func(*Controller, manager.Manager) {
	return func(c *Controller, mgr manager.Manager) {
		a, err := c.Admission(AdmissionOptions{Deny: deny, WebhookConfiguration: "attache-webhook", Debounce: 20 * time.Millisecond})
		if err != nil {
			panic(err)
		}
		f.admissions[i] = a
		if err := webhook.Serve(mgr, a, a.Ready, webhook.Options{Host: "127.0.0.1", Port: f.ports[i], CertDir: f.certDir}); err != nil {
			panic(err)
		}
	}
}

var (
	gvrRoute   = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	gvrRetry   = schema.GroupVersionResource{Group: "policies.cupcakes.example", Version: "v1", Resource: "retrypolicies"}
	gvrTLS     = schema.GroupVersionResource{Group: "policies.cupcakes.example", Version: "v1", Resource: "backendtlspolicies"}
	gvrService = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

var dryRun = []string{metav1.DryRunAll}

// updateRoute sends an update of HTTPRoute baker/baker (a label), dry run
// unless real, and returns the warnings.
func (f *webhookFixture) updateRoute(t *testing.T, real bool) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	r, err := f.dyn.Resource(gvrRoute).Namespace("baker").Get(ctx, "baker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.SetLabels(map[string]string{"touched": fmt.Sprint(time.Now().UnixNano())})
	opts := metav1.UpdateOptions{DryRun: dryRun}
	if real {
		opts.DryRun = nil
	}
	f.warn.take()
	_, err = f.dyn.Resource(gvrRoute).Namespace("baker").Update(ctx, r, opts)
	return f.warn.take(), err
}

// create sends a dry-run create and returns the warnings and the error.
func (f *webhookFixture) create(gvr schema.GroupVersionResource, yamlDoc string) ([]string, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(yamlDoc), &u.Object); err != nil {
		return nil, err
	}
	f.warn.take()
	_, err := f.dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{DryRun: dryRun})
	return f.warn.take(), err
}

// deleteDryRun sends a dry-run delete and returns the warnings.
func (f *webhookFixture) deleteDryRun(t *testing.T, gvr schema.GroupVersionResource, ns, name string) []string {
	t.Helper()
	f.warn.take()
	if err := f.dyn.Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{DryRun: dryRun}); err != nil {
		t.Fatal(err)
	}
	return f.warn.take()
}

// applyParable creates the parable's CRDs, Namespaces, topology and
// policies, less the policies named in drop (every test of the package
// applying it drops the same topology objects: none), and deletes its CRDs,
// and so its policies, when the test ends.
func applyParable(t *testing.T, k *kube, drop ...string) {
	t.Helper()
	objs, probs, err := manifest.Read([]string{"../../examples/parable"}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	for _, o := range objs {
		if o.Object.GetKind() == "CustomResourceDefinition" {
			k.applyCRD(o.Object.DeepCopy())
			name := o.Object.GetName()
			t.Cleanup(func() {
				// Gone before the next test applies the parable: a CRD
				// being deleted cannot be updated, nor its kind served.
				ctx := context.Background()
				_ = k.dyn.Resource(crdGVR).Delete(ctx, name, metav1.DeleteOptions{})
				for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					if _, err := k.dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
						return
					}
				}
				t.Errorf("CRD %s still there after its deletion", name)
			})
		}
	}
	for _, o := range objs {
		if o.Object.GetKind() == "Namespace" {
			k.namespace(o.Object.GetName())
		}
	}
	for _, o := range objs {
		u := o.Object
		if u.GetKind() == "CustomResourceDefinition" || u.GetKind() == "Namespace" || slices.Contains(drop, u.GetName()) {
			continue
		}
		if k.get(u.GroupVersionKind(), u.GetNamespace(), u.GetName()) != nil {
			// The topology an earlier test applied (the policies went
			// with their CRDs).
			continue
		}
		k.apply(u.GetNamespace(), u)
	}
}

// webhookRules returns the resources of the installed webhook's rules.
func webhookRules(t *testing.T) []string {
	t.Helper()
	vwc, err := env.Clientset(t).AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), "attache-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range vwc.Webhooks {
		for _, r := range w.Rules {
			for _, res := range r.Resources {
				out = append(out, r.APIGroups[0]+"/"+res)
			}
		}
		if !bytes.Equal(w.ClientConfig.CABundle, vwc.Webhooks[0].ClientConfig.CABundle) || len(w.ClientConfig.CABundle) == 0 {
			t.Fatal("the caBundle was lost")
		}
	}
	return out
}

// review posts an AdmissionReview of a route's update to the replica on
// port, as the API server would, and returns its warnings. A replica still
// starting (not listening yet, or not ready to answer) is an error, for
// waitFor to retry.
func (f *webhookFixture) review(port int, route *unstructured.Unstructured) ([]string, error) {
	return f.reviewOf(port, gvrRoute, "UPDATE", route)
}

// reviewOf posts an AdmissionReview of obj (of resource gvr) to the
// replica on port and returns its warnings.
func (f *webhookFixture) reviewOf(port int, gvr schema.GroupVersionResource, op string, obj *unstructured.Unstructured) ([]string, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.caData)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	raw, _ := json.Marshal(obj.Object)
	gvk := obj.GroupVersionKind()
	req := map[string]any{
		"uid":       "1",
		"kind":      map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"resource":  map[string]any{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource},
		"name":      obj.GetName(),
		"namespace": obj.GetNamespace(),
		"operation": op,
		"userInfo":  map[string]any{"username": "test"},
		"object":    json.RawMessage(raw),
	}
	if op != "CREATE" {
		req["oldObject"] = json.RawMessage(raw)
	}
	body, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d%s", port, webhook.Path), "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("replica on port %d: %w", port, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var rev struct {
		Response struct {
			Allowed  bool     `json:"allowed"`
			Warnings []string `json:"warnings"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &rev); err != nil || !rev.Response.Allowed {
		return nil, fmt.Errorf("replica on port %d: %s (%v)", port, data, err)
	}
	return rev.Response.Warnings, nil
}

const routeLine = "HTTPRoute baker/baker is affected by 2 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn), TimeoutPolicy infra/gateway-timeouts (overrides: idle, request)"

// TestWebhook runs the admission webhook of issue 11 behind the real API
// server, installed from deploy/base/webhook.yaml: a route's update is warned
// with the policies affecting it, a policy's create with its impact, a
// delete with what loses its policy; the rules, written over, are written
// back; prevention (off, then on through the
// CRD annotation) denies a second BackendTLSPolicy on one Service and an
// Invalid policy; a policy CRD created after start is covered; two
// replicas both answer, the second running under the shipped RBAC
// (deploy/base/clusterrole.yaml and the webhook's role) and sending no
// request to the API server to answer a route, a Service being created or
// a policy's edit; and with both stopped, applies go through.
func TestWebhook(t *testing.T) {
	f := newWebhookFixture(t)
	k := newKube(t)
	applyParable(t, k, "baker-timeouts", "oven-tls-new")
	r1 := startController(t, Options{}, nil, f.serve(0))

	// Rules follow the policy kinds.
	waitFor(t, "the policy kinds in the webhook's rules", func() string {
		if rules := webhookRules(t); !slices.Contains(rules, "policies.cupcakes.example/retrypolicies") {
			return fmt.Sprint(rules)
		}
		return ""
	})

	// Rules written over, as applying deploy/ again does: the leader
	// writes them back.
	shippedRules, _ := json.Marshal(map[string]any{"webhooks": []any{map[string]any{"name": webhook.Name, "rules": shippedWebhook(t).Webhooks[0].Rules}}})
	if _, err := env.Clientset(t).AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(context.Background(), "attache-webhook",
		types.StrategicMergePatchType, shippedRules, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the policy kinds back in the webhook's rules", func() string {
		if rules := webhookRules(t); !slices.Contains(rules, "policies.cupcakes.example/retrypolicies") {
			return fmt.Sprint(rules)
		}
		return ""
	})

	// A route affected by policies.
	waitFor(t, "the route's warning", func() string {
		w, err := f.updateRoute(t, false)
		if err != nil || !slices.Equal(w, []string{routeLine}) {
			return fmt.Sprintf("%q %v", w, err)
		}
		return ""
	})

	// A route being created: the policies that will reach it.
	created, err := f.create(gvrRoute, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: muffins, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  rules: [{backendRefs: [{name: baker, port: 8080}]}]
`)
	if err != nil || len(created) == 0 || !strings.HasPrefix(created[0], "HTTPRoute baker/muffins will be reached by 2 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn)") {
		t.Errorf("creating a route: %q %v", created, err)
	}

	// A Service being created that a route already names as a backend:
	// the policies reaching it through that route.
	if _, err := f.dyn.Resource(gvrRoute).Namespace("baker").Create(context.Background(), mustUnstructured(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: icing, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  rules: [{backendRefs: [{name: icing, port: 8080}]}]
`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the warning of a Service a route names", func() string {
		w, err := f.create(gvrService, `
apiVersion: v1
kind: Service
metadata: {name: icing, namespace: baker}
spec: {ports: [{port: 8080}]}
`)
		if err != nil || len(w) == 0 || !strings.HasPrefix(w[0], "Service baker/icing will be reached by 2 policies: RetryPolicy baker/namespace-retries (numRetries, retryOn)") {
			return fmt.Sprintf("%q %v", w, err)
		}
		return ""
	})
	if err := f.dyn.Resource(gvrRoute).Namespace("baker").Delete(context.Background(), "icing", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A delete: what loses its policy.
	if w := f.deleteDryRun(t, gvrRetry, "baker", "namespace-retries"); !slices.Contains(w, "deleting RetryPolicy baker/namespace-retries leaves 3 Services in baker with no RetryPolicy") {
		t.Errorf("delete: %q", w)
	}

	// A policy: its impact, with the change applied (as README.md shows
	// it: gw-retries first, then route-retries).
	waitFor(t, "the Gateway-wide policy's impact", func() string {
		w, err := f.create(gvrRetry, gwRetries)
		if want := []string{
			"RetryPolicy infra/gw-retries changes the effective RetryPolicy of 4 Services in baker",
			"RetryPolicy baker/frosting-retries would go from Accepted, Programmed to Accepted, Overridden",
		}; err != nil || !slices.Equal(w, want) {
			return fmt.Sprintf("%q, want %q (%v)", w, want, err)
		}
		return ""
	})
	k.apply("infra", mustYAML(t, gwRetries))
	waitFor(t, "the policy's impact", func() string {
		w, err := f.create(gvrRetry, routeRetries)
		for _, want := range []string{
			"RetryPolicy baker/route-retries changes the effective RetryPolicy of 3 Services in baker",
			"RetryPolicy baker/route-retries: retryOn is overridden by RetryPolicy infra/gw-retries on Gateway infra/cupcakes",
		} {
			if err != nil || !slices.Contains(w, want) {
				return fmt.Sprintf("no %q in %q (%v)", want, w, err)
			}
		}
		return ""
	})

	// Prevention off: admitted, with warnings.
	w, err := f.create(gvrTLS, secondTLS)
	if err != nil || !containsPrefix(w, "BackendTLSPolicy baker/oven-tls-new would be Conflicted: ") {
		t.Errorf("second BackendTLSPolicy, prevention off: %q %v", w, err)
	}
	w, err = f.create(gvrRetry, invalidRetries)
	if err != nil || !containsPrefix(w, "RetryPolicy baker/both would be Invalid: ") {
		t.Errorf("invalid policy, prevention off: %q %v", w, err)
	}

	// Prevention on, by CRD annotation.
	for _, crd := range []string{"backendtlspolicies.policies.cupcakes.example", "retrypolicies.policies.cupcakes.example"} {
		k.patch(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", crd,
			`{"metadata":{"annotations":{"`+webhook.AnnotationAdmission+`":"deny"}}}`)
	}
	// As README.md shows it.
	denied := `admission webhook "validate.attache.dev" denied the request: BackendTLSPolicy baker/oven-tls-new would be Conflicted: Conflicts with the established BackendTLSPolicy baker/oven-tls (on Service baker/oven); with merge strategy none the established (older) policy wins (attache prevents this for BackendTLSPolicy.policies.cupcakes.example)`
	// The warning kubectl prints before the error: the same reason, cut.
	deniedWarning := "BackendTLSPolicy baker/oven-tls-new would be Conflicted: Conflicts with the established BackendTLSPolicy baker/oven-tls (on Service baker/oven); with merge strategy none the ..."
	waitFor(t, "the second BackendTLSPolicy denied", func() string {
		w, err := f.create(gvrTLS, secondTLS)
		if err == nil || !apierrors.IsForbidden(err) || err.Error() != denied || !slices.Equal(w, []string{deniedWarning}) {
			return fmt.Sprintf("%v (warnings %q)", err, w)
		}
		return ""
	})
	// The two CRDs' annotations may reach the webhook's state in two
	// refreshes: RetryPolicy's is waited for too.
	waitFor(t, "an invalid policy denied", func() string {
		if _, err := f.create(gvrRetry, invalidRetries); err == nil || !strings.Contains(err.Error(), "would be Invalid") {
			return fmt.Sprint(err)
		}
		return ""
	})
	if _, err := f.create(gvrRetry, routeRetries); err != nil {
		t.Errorf("an accepted policy, prevention on: %v", err)
	}

	// A policy CRD created after start.
	k.applyCRD(sizePolicyCRD())
	t.Cleanup(func() {
		_ = k.dyn.Resource(crdGVR).Delete(context.Background(), "sizepolicies."+gvkSizePolicy.Group, metav1.DeleteOptions{})
	})
	gvrSize := schema.GroupVersionResource{Group: gvkSizePolicy.Group, Version: "v1", Resource: "sizepolicies"}
	waitFor(t, "the late kind covered", func() string {
		w, err := f.create(gvrSize, `{apiVersion: late.example.com/v1, kind: SizePolicy, metadata: {name: big, namespace: baker},
  spec: {targetRefs: [{group: "", kind: Service, name: oven}], size: 3}}`)
		if err != nil || !slices.Contains(w, "SizePolicy baker/big changes the effective SizePolicy of 1 Service in baker") {
			return fmt.Sprintf("%q %v (rules %v)", w, err, webhookRules(t))
		}
		return ""
	})

	// The first replica leads: its webhook answers from the controller's
	// engine state and keeps none of its own.
	waitFor(t, "the leader's webhook sharing the controller's state", func() string {
		if a := f.admissions[0]; !a.shared() || a.res.Load() != nil {
			return fmt.Sprintf("shared %v, own result kept %v", a.shared(), a.res.Load() != nil)
		}
		return ""
	})

	// A second replica, under the shipped RBAC, that does not lead (the
	// Lease is someone else's): it answers from a state of its own, as
	// the leader does.
	cfg := rest.CopyConfig(shippedRBACUser(t))
	calls := &apiCalls{}
	cfg.Wrap(calls.wrap)
	holdLease(t, "attache-system", "attache-webhook-test")
	r2 := startControllerWith(t, Options{}, cfg, func(o *manager.Options) {
		o.LeaderElection, o.LeaderElectionNamespace, o.LeaderElectionID = true, "attache-system", "attache-webhook-test"
	}, f.serve(1))
	route, err := f.dyn.Resource(gvrRoute).Namespace("baker").Get(context.Background(), "baker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// gw-retries now affects the route too.
	want := "HTTPRoute baker/baker is affected by 3 policies: RetryPolicy baker/namespace-retries (numRetries), RetryPolicy infra/gw-retries (overrides: retryOn)"
	waitFor(t, "both replicas answer", func() string {
		for _, p := range f.ports {
			w, err := f.review(p, route)
			if err != nil {
				return err.Error()
			}
			if len(w) == 0 || w[0] != want {
				return fmt.Sprintf("port %d: %q", p, w)
			}
		}
		return ""
	})
	if r2.c.leader.Load() || f.admissions[1].shared() || f.admissions[1].res.Load() == nil {
		t.Errorf("the second replica leads (%v) or has no state of its own", r2.c.leader.Load())
	}

	// No API call per request: the second replica answers a route, a
	// Service being created (the routes naming it are read from the
	// cache) and a policy's edit (a what-if) without one.
	svc := mustUnstructured(t, "{apiVersion: v1, kind: Service, metadata: {name: baker, namespace: baker}, spec: {ports: [{port: 8080}]}}")
	edited, err := f.dyn.Resource(gvrRetry).Namespace("baker").Get(context.Background(), "namespace-retries", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(edited.Object, int64(7), "spec", "defaults", "numRetries"); err != nil {
		t.Fatal(err)
	}
	before := calls.list()
	for range 5 {
		for _, r := range []struct {
			gvr schema.GroupVersionResource
			op  string
			obj *unstructured.Unstructured
		}{{gvrRoute, "UPDATE", route}, {gvrService, "CREATE", svc}, {gvrRetry, "UPDATE", edited}} {
			if w, err := f.reviewOf(f.ports[1], r.gvr, r.op, r.obj); err != nil || len(w) == 0 {
				t.Fatalf("%s %s on the second replica: %q %v", r.op, r.obj.GetName(), w, err)
			}
		}
	}
	if during := calls.list()[len(before):]; len(during) > 0 {
		t.Errorf("the second replica called the API server while answering: %q", during)
	}

	// Both down: nothing is blocked.
	r1.stop()
	r2.stop()
	t0 := time.Now()
	if _, err := f.updateRoute(t, true); err != nil {
		t.Fatalf("update with the webhook down: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("update with the webhook down took %v", d)
	}
}

// apiCalls records the requests a client sends but for watches, the
// leader election's Lease and access reviews (a refresh of the webhook's
// state may ask one, never a request).
type apiCalls struct {
	mu    sync.Mutex
	calls []string
}

func (a *apiCalls) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Query().Get("watch") != "true" && !strings.Contains(r.URL.Path, "/leases/") && !strings.HasSuffix(r.URL.Path, "accessreviews") {
			a.mu.Lock()
			a.calls = append(a.calls, r.Method+" "+r.URL.Path)
			a.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (a *apiCalls) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

func containsPrefix(lines []string, prefix string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) })
}

func mustYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// shippedRBACUser is a user bound to deploy/base/clusterrole.yaml, the
// webhook's ClusterRole of deploy/base/webhook.yaml, and read access to the
// parable's policy kinds (what an installer of them adds).
func shippedRBACUser(t *testing.T) *rest.Config {
	t.Helper()
	ctx := context.Background()
	cs := env.Clientset(t)
	var roles []*rbacv1.ClusterRole
	data, err := os.ReadFile(filepath.Join(deployDir, "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	roles = append(roles, &role)
	objs, _, err := manifest.Read([]string{filepath.Join(deployDir, "base", "webhook.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Object.GetKind() == "ClusterRole" {
			raw, _ := json.Marshal(o.Object.Object)
			var r rbacv1.ClusterRole
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			roles = append(roles, &r)
		}
	}
	if len(roles) != 2 {
		t.Fatal("deploy/base/webhook.yaml has no ClusterRole")
	}
	roles = append(roles, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "attache-test-parable"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"policies.cupcakes.example", gvkSizePolicy.Group},
			Resources: []string{"retrypolicies", "timeoutpolicies", "backendtlspolicies", "sizepolicies"}, Verbs: []string{"get", "list", "watch"}}},
	})
	const user = "system:serviceaccount:attache-system:attache-webhook-test"
	for _, r := range roles {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		env.BindClusterRole(t, user, r.Name)
	}
	return env.UserConfig(t, user)
}

const (
	gwRetries = `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: gw-retries, namespace: infra}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: cupcakes}]
  overrides: {retryOn: ["503"], strategy: patch}
`
	routeRetries = `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: route-retries, namespace: baker}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: sprinkles}
  defaults: {retryOn: ["5xx"], numRetries: 5}
`
	secondTLS = `
apiVersion: policies.cupcakes.example/v1
kind: BackendTLSPolicy
metadata: {name: oven-tls-new, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Service, name: oven}]
  hostname: oven.internal
`
	invalidRetries = `
apiVersion: policies.cupcakes.example/v1
kind: RetryPolicy
metadata: {name: both, namespace: baker}
spec:
  targetRefs: [{group: "", kind: Namespace, name: baker}]
  defaults: {numRetries: 1}
  overrides: {numRetries: 2}
`
)

// TestWebhookReadyAfterSync checks that a replica's webhook is ready
// (/readyz) only once the informers it answers from have synced: with the
// list of Services held back, it is not, and it answers nothing; let go,
// it becomes ready and answers.
func TestWebhookReadyAfterSync(t *testing.T) {
	f := newWebhookFixture(t)
	k := newKube(t)
	applyParable(t, k, "baker-timeouts", "oven-tls-new")
	release := make(chan struct{})
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			// The list of Services, whether a list or a watch sending
			// the initial events (client-go's watch-list).
			if r.URL.Path == "/api/v1/services" {
				select {
				case <-release:
				case <-r.Context().Done():
					return nil, r.Context().Err()
				}
			}
			return rt.RoundTrip(r)
		})
	})
	probes := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	startControllerWith(t, Options{}, cfg, func(o *manager.Options) { o.HealthProbeBindAddress = probes }, f.serve(0))
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + probes + "/readyz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	route, err := f.dyn.Resource(gvrRoute).Namespace("baker").Get(context.Background(), "baker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Serving, not ready: the webhook's check fails, and it says nothing.
	waitFor(t, "the webhook served", func() string {
		if _, err := f.review(f.ports[0], route); err != nil {
			return err.Error()
		}
		return ""
	})
	for range 10 {
		if code, body := readyz(); code == http.StatusOK || !strings.Contains(body, "webhook") {
			t.Fatalf("ready before the Services were listed: %d %s", code, body)
		}
		if w, err := f.review(f.ports[0], route); err != nil || len(w) > 0 {
			t.Fatalf("answered before the Services were listed: %q %v", w, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(release)
	waitFor(t, "/readyz", func() string {
		if code, body := readyz(); code != http.StatusOK {
			return fmt.Sprintf("%d %s", code, body)
		}
		return ""
	})
	waitFor(t, "the route's warning", func() string {
		if w, err := f.review(f.ports[0], route); err != nil || !slices.Equal(w, []string{routeLine}) {
			return fmt.Sprintf("%q %v", w, err)
		}
		return ""
	})
}

// TestWebhookDenyFlag checks prevention turned on by the flag
// (AdmissionOptions.Deny, --admission-deny) for one kind: an Invalid
// RetryPolicy is denied while a Conflicted BackendTLSPolicy, of a kind not
// named, is admitted with its warning; the CRD annotation
// attache.dev/admission: warn then turns it off for RetryPolicy.
func TestWebhookDenyFlag(t *testing.T) {
	f := newWebhookFixture(t)
	k := newKube(t)
	applyParable(t, k, "baker-timeouts", "oven-tls-new")
	startController(t, Options{}, nil, f.serve(0, topology.GroupKind{Group: "policies.cupcakes.example", Kind: "RetryPolicy"}))
	waitFor(t, "an invalid policy denied by the flag", func() string {
		if _, err := f.create(gvrRetry, invalidRetries); err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "would be Invalid") {
			return fmt.Sprint(err)
		}
		return ""
	})
	if w, err := f.create(gvrTLS, secondTLS); err != nil || !containsPrefix(w, "BackendTLSPolicy baker/oven-tls-new would be Conflicted: ") {
		t.Errorf("a kind the flag does not name: %q %v", w, err)
	}
	k.patch(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", "retrypolicies.policies.cupcakes.example",
		`{"metadata":{"annotations":{"`+webhook.AnnotationAdmission+`":"warn"}}}`)
	waitFor(t, "the annotation winning over the flag", func() string {
		if w, err := f.create(gvrRetry, invalidRetries); err != nil || !containsPrefix(w, "RetryPolicy baker/both would be Invalid: ") {
			return fmt.Sprintf("%q %v", w, err)
		}
		return ""
	})
}
