package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/manifest"
)

// TestExample3 runs the program on GEP-713 Example 3 against a real API
// server: the policies get this implementation's status, and the ConfigMap
// holds each Service's effective colours.
func TestExample3(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatal(err)
	}
	crds, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(crds, filepath.Join("..", "..", "deploy", "crds"))...),
		testenv.WithAPIServerFlag("shutdown-watch-termination-grace-period", "2s"))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, env.Config, logr.Discard(), "0", "0") }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	// Example 3 in namespace default, without its CRD (the shipped one,
	// with a status subresource, is installed).
	objs, probs, err := manifest.Read([]string{filepath.Join("..", "gep-713", "example-3", "manifests.yaml")}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(env.Config)))
	for _, o := range objs {
		u := o.Object
		if u.GetKind() == "CustomResourceDefinition" {
			continue
		}
		m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	cs := env.Clientset(t)
	policies := dyn.Resource(schema.GroupVersionResource{Group: "policies.example.com", Version: "v1", Resource: "colorpolicies"}).Namespace("default")
	want := map[string]string{"p1": "PartiallyProgrammed", "p2": "Programmed", "p3": "Programmed", "p4": "PartiallyProgrammed"}
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = check(ctx, t, cs.CoreV1().ConfigMaps("default"), cs.CoreV1().Services("default"), policies, want); last == "" {
			return
		}
	}
	t.Fatalf("not converged after 30s: %s", last)
}

type getter[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// check returns what is not as expected yet, or "".
func check(ctx context.Context, t *testing.T, cms getter[*corev1.ConfigMap], svcs getter[*corev1.Service], pols dynamic.ResourceInterface, want map[string]string) string {
	t.Helper()
	for name, reason := range want {
		p, err := pols.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		anc, _, _ := unstructured.NestedSlice(p.Object, "status", "ancestors")
		ok := false
		for _, a := range anc {
			a := a.(map[string]any)
			if a["controllerName"] != ControllerName {
				continue
			}
			for _, c := range a["conditions"].([]any) {
				c := c.(map[string]any)
				if c["type"] == "Programmed" && c["reason"] == reason {
					ok = true
				}
			}
		}
		if !ok {
			return fmt.Sprintf("%s: no ancestor entry of %s with Programmed %s: %v", name, ControllerName, reason, anc)
		}
	}
	svc, err := svcs.Get(ctx, "b2", metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	found := false
	for _, c := range svc.Status.Conditions {
		if c.Type == "colors.example.com/ColorPolicyAffected" && c.Message == "Affected by ColorPolicy default/p3, default/p4" {
			found = true
		}
	}
	if !found {
		return fmt.Sprintf("Service b2 conditions: %v", svc.Status.Conditions)
	}
	cm, err := cms.Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var b2 []colors
	if err := json.Unmarshal([]byte(cm.Data["b2"]), &b2); err != nil {
		return fmt.Sprintf("ConfigMap b2: %v: %q", err, cm.Data["b2"])
	}
	// GEP-713 Example 3: g2 > r4 > b2 is {dark: olive, light: yellow}.
	if len(b2) != 1 || fmt.Sprint(b2[0].Spec) != "map[colors:map[dark:olive light:yellow]]" {
		return fmt.Sprintf("ConfigMap b2: %s", cm.Data["b2"])
	}
	// The path README.md shows; r4's one unnamed rule is rule-1.
	if len(b2[0].Paths) != 1 || b2[0].Paths[0] != "Gateway default/g2 > Gateway default/g2#http > HTTPRoute default/r4 > HTTPRoute default/r4#rule-1 > Service default/b2" {
		return fmt.Sprintf("ConfigMap b2 paths: %v", b2[0].Paths)
	}
	if cm.Data["b1"] == "" {
		return "ConfigMap has no b1"
	}
	return ""
}
