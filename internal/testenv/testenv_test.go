package testenv

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// widgetCRD is a tiny namespaced CRD whose schema the real API server
// enforces (spec.size must be an integer).
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.testenv.attache.dev
spec:
  group: testenv.attache.dev
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
`

var widgetGVK = schema.GroupVersionKind{Group: "testenv.attache.dev", Version: "v1", Kind: "Widget"}

func widget(ns, name string, size any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["spec"] = map[string]any{"size": size}
	return u
}

// TestVersionsMatchToolsModule keeps the constants that locate the cache in
// step with what hack/envtest-assets.sh builds (read from the tools go.mod).
func TestVersionsMatchToolsModule(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "hack", "tools", "envtest", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{"k8s.io/kubernetes": KubernetesVersion, "go.etcd.io/etcd/server/v3": EtcdVersion}
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && want[fields[0]] != "" && !strings.Contains(sc.Text(), "=>") {
			got[fields[0]] = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for mod, v := range want {
		if got[mod] != v {
			t.Errorf("hack/tools/envtest/go.mod requires %s %q, testenv expects %q", mod, got[mod], v)
		}
	}
}

func TestCacheDir(t *testing.T) {
	suffix := "k8s-" + KubernetesVersion + "-etcd-" + EtcdVersion
	t.Setenv(CacheEnvVar, "/x/cache")
	t.Setenv("XDG_CACHE_HOME", "/y")
	if got, _ := CacheDir(); got != filepath.Join("/x/cache", suffix) {
		t.Errorf("with %s: CacheDir() = %q", CacheEnvVar, got)
	}
	t.Setenv(CacheEnvVar, "")
	if got, _ := CacheDir(); got != filepath.Join("/y/attache/envtest", suffix) {
		t.Errorf("with XDG_CACHE_HOME: CacheDir() = %q", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/h")
	if got, _ := CacheDir(); got != filepath.Join("/h/.cache/attache/envtest", suffix) {
		t.Errorf("with HOME only: CacheDir() = %q", got)
	}
}

func TestAssetsDirMissingTellsToBuild(t *testing.T) {
	t.Setenv(AssetsEnvVar, t.TempDir())
	_, err := AssetsDir()
	if err == nil || !strings.Contains(err.Error(), "hack/envtest-assets.sh") {
		t.Fatalf("AssetsDir() on an empty directory: err = %v, want one that names hack/envtest-assets.sh", err)
	}

	// Empty KUBEBUILDER_ASSETS means the cache; an empty cache fails too.
	t.Setenv(AssetsEnvVar, "")
	t.Setenv(CacheEnvVar, t.TempDir())
	if _, err := AssetsDir(); err == nil || !strings.Contains(err.Error(), "hack/envtest-assets.sh") {
		t.Fatalf("AssetsDir() on an empty cache: err = %v", err)
	}
}

// TestRealAPIServer starts one control plane and checks, against it, the
// built-in types, a CRD from a directory, the RBAC helpers and the restart.
func TestRealAPIServer(t *testing.T) {
	crdDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(crdDir, "widgets.yaml"), []byte(widgetCRD), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Start(t, WithCRDDirectoryPaths(crdDir))
	ctx := context.Background()
	cs := env.Clientset(t)
	c := env.Client(t)

	t.Run("Version", func(t *testing.T) {
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != KubernetesVersion {
			t.Errorf("server version %q, want %q", v.GitVersion, KubernetesVersion)
		}
		if len(env.CRDs) != 1 || env.CRDs[0].Name != "widgets.testenv.attache.dev" {
			t.Errorf("installed CRDs %v, want widgets.testenv.attache.dev", env.CRDs)
		}
	})

	const ns = "smoke"
	t.Run("NamespaceAndConfigMap", func(t *testing.T) {
		if _, err := cs.CoreV1().Namespaces().Create(ctx,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns},
			Data:       map[string]string{"k": "v"},
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm"}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Data["k"] != "v" || got.UID == "" || got.ResourceVersion == "" {
			t.Errorf("read back %+v, want data k=v with a uid and a resourceVersion", got)
		}
		// A second create of the same name is a conflict: the store is real.
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			t.Errorf("second create: err = %v, want AlreadyExists", err)
		}
	})

	t.Run("CRD", func(t *testing.T) {
		if err := c.Create(ctx, widget(ns, "w1", 3)); err != nil {
			t.Fatal(err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(widgetGVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, got); err != nil {
			t.Fatal(err)
		}
		if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
			t.Errorf("spec.size = %d, want 3 (object %v)", size, got.Object)
		}
		// The CRD's schema is enforced by the API server.
		if err := c.Create(ctx, widget(ns, "bad", "three")); !apierrors.IsInvalid(err) {
			t.Errorf("create with a string size: err = %v, want Invalid", err)
		}
	})

	t.Run("UserRBAC", func(t *testing.T) {
		alice := kubernetes.NewForConfigOrDie(env.UserConfig(t, "alice"))
		if _, err := alice.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("list as alice without RBAC: err = %v, want Forbidden", err)
		}
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-reader", Namespace: ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"},
			}},
		}
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		env.BindRole(t, ns, "alice", "Role", "cm-reader")
		list, err := alice.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list as alice with the Role bound: %v", err)
		}
		found := false
		for _, cm := range list.Items {
			found = found || cm.Name == "cm"
		}
		if !found {
			t.Errorf("alice's list %v lacks configmap cm", list.Items)
		}
		// The grant is what the Role says, no more.
		if _, err := alice.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list in another namespace: err = %v, want Forbidden", err)
		}
		if _, err := alice.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list secrets: err = %v, want Forbidden", err)
		}
		if err := alice.CoreV1().ConfigMaps(ns).Delete(ctx, "cm", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("delete: err = %v, want Forbidden", err)
		}

		// BindClusterRole, as tests do with a shipped ClusterRole.
		bob := kubernetes.NewForConfigOrDie(env.UserConfig(t, "bob", "some-group"))
		if _, err := bob.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("list configmaps as bob without RBAC: err = %v, want Forbidden", err)
		}
		cr := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-lister"},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list"},
			}},
		}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		env.BindClusterRole(t, "bob", "cm-lister")
		if _, err := bob.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list configmaps in all namespaces as bob with cm-lister bound: %v", err)
		}
		if _, err := bob.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("get as bob (only list granted): err = %v, want Forbidden", err)
		}
	})

	t.Run("RestartAPIServer", func(t *testing.T) {
		host := env.Config.Host
		before := processStartTime(t, cs)
		alice := kubernetes.NewForConfigOrDie(env.UserConfig(t, "alice"))

		env.RestartAPIServer(t)

		if env.Config.Host != host {
			t.Errorf("host changed from %s to %s", host, env.Config.Host)
		}
		if after := processStartTime(t, cs); after <= before {
			t.Errorf("process_start_time_seconds %v after restart, %v before: not a new process", after, before)
		}
		// Clients made before the restart work (same port, serving
		// certificates and client CA) and the data (in etcd) is kept.
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil || cm.Data["k"] != "v" {
			t.Fatalf("configmap after restart: %v, %v", cm, err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(widgetGVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, got); err != nil {
			t.Errorf("widget after restart: %v", err)
		}
		if _, err := alice.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{}); err != nil {
			t.Errorf("alice after restart: %v", err)
		}
		if err := c.Create(ctx, widget(ns, "w2", 5)); err != nil {
			t.Errorf("create after restart: %v", err)
		}
	})
}

// processStartTime reads the kube-apiserver's process_start_time_seconds
// metric.
func processStartTime(t *testing.T, cs kubernetes.Interface) float64 {
	t.Helper()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "process_start_time_seconds "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("parsing %q: %v", line, err)
			}
			return v
		}
	}
	t.Fatal("no process_start_time_seconds in /metrics")
	return 0
}
