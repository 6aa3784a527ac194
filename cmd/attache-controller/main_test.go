package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/manifest"
)

func TestParseFlags(t *testing.T) {
	var out bytes.Buffer
	f, err := parseFlags([]string{"--controller-name=example.com/c", "--owned-kinds=A.x.io,B", "--leader-elect", "--log-format=text"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if f.controllerName != "example.com/c" || f.ownedKinds != "A.x.io,B" || !f.leaderElect || f.logFormat != "text" {
		t.Errorf("flags: %+v", f)
	}
	for _, bad := range [][]string{{"--log-format=xml"}, {"extra"}, {"--nope"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestClientConfig checks that the configuration the binary builds carries
// the client-side limits, with --kubeconfig and without it (the path that
// also goes in-cluster), by default and when set.
func TestClientConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Without --kubeconfig: controller-runtime's loader, which would
	// otherwise leave no limit; not in a pod here, so $KUBECONFIG.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", kubeconfig)
	for _, tc := range []struct {
		args       []string
		qps, burst float32
	}{
		{[]string{"--kubeconfig=" + kubeconfig}, DefaultKubeAPIQPS, DefaultKubeAPIBurst},
		{nil, DefaultKubeAPIQPS, DefaultKubeAPIBurst},
		{[]string{"--kubeconfig=" + kubeconfig, "--kube-api-qps=7.5", "--kube-api-burst=9"}, 7.5, 9},
		{[]string{"--kube-api-qps=7.5", "--kube-api-burst=9"}, 7.5, 9},
		{[]string{"--kube-api-qps=-1"}, -1, DefaultKubeAPIBurst},
	} {
		f, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientConfig(f, nil)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.QPS != tc.qps || float32(cfg.Burst) != tc.burst || cfg.RateLimiter != nil {
			t.Errorf("%v: QPS %v, Burst %d, limiter %v; want %v, %v, none", tc.args, cfg.QPS, cfg.Burst, cfg.RateLimiter, tc.qps, tc.burst)
		}
		if cfg.Host != "https://127.0.0.1:1" || !strings.HasPrefix(cfg.UserAgent, "attache-controller/") {
			t.Errorf("%v: host %q, user agent %q", tc.args, cfg.Host, cfg.UserAgent)
		}
	}
	// A configuration given (tests) gets them too.
	f, _ := parseFlags(nil, io.Discard)
	cfg, err := clientConfig(f, &rest.Config{Host: "https://127.0.0.1:2", QPS: 1, Burst: 1})
	if err != nil || cfg.QPS != DefaultKubeAPIQPS || cfg.Burst != DefaultKubeAPIBurst {
		t.Errorf("given configuration: %v %v %v", cfg.QPS, cfg.Burst, err)
	}
	for _, bad := range [][]string{{"--kube-api-qps=0"}, {"--kube-api-burst=0"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestRuntimeCollectors checks that the Go and process collectors are
// registered, once however many times run registers them.
func TestRuntimeCollectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	for range 2 {
		if err := registerRuntimeCollectors(reg); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, mf := range mfs {
		found[mf.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes"} {
		if !found[name] {
			t.Errorf("no %s", name)
		}
	}
}

// freeAddr returns a local address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		// The port is free again once closed: the kernel may give it
		// back to the next call, for an instance's other server.
		if !handedOut[addr] {
			handedOut[addr] = true
			return addr
		}
	}
}

// handedOut are the addresses freeAddr returned.
var (
	handedOutMu sync.Mutex
	handedOut   = map[string]bool{}
)

// syncBuffer is a log sink written by the controller and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type instance struct {
	metrics, probes string
	logs            *syncBuffer
	stop            func() error
}

func start(t *testing.T, env *testenv.Env, extra ...string) *instance {
	t.Helper()
	in := &instance{metrics: freeAddr(t), probes: freeAddr(t), logs: &syncBuffer{}}
	args := append([]string{
		"--owned-kinds=ColorPolicy.policies.example.com",
		"--leader-elect", "--leader-election-namespace=default",
		"--metrics-bind-address=" + in.metrics,
		"--health-probe-bind-address=" + in.probes,
	}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	f, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- run(ctx, f, newLogger(f, in.logs), env.Config) }()
	var once sync.Once
	in.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				err = fmt.Errorf("did not stop within a minute")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := in.stop(); err != nil {
			t.Errorf("run: %v", err)
		}
		if t.Failed() {
			t.Logf("logs of the instance on %s:\n%s", in.probes, in.logs.String())
		}
	})
	return in
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitFor(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var msg string
	for time.Now().Before(deadline) {
		if msg = cond(); msg == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: %s", what, msg)
}

// TestBinary runs two replicas with leader election against a real API
// server: probes and metrics are served, the leader writes GEP-713 Example
// 3's status, and when it stops the other takes over.
func TestBinary(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // each instance logs to its own buffer
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatal(err)
	}
	crds, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(crds, filepath.Join("..", "..", "deploy", "crds"))...),
		testenv.WithAPIServerFlag("shutdown-watch-termination-grace-period", "2s"))

	a := start(t, env)
	b := start(t, env)
	for _, in := range []*instance{a, b} {
		waitFor(t, "/healthz and /readyz of "+in.probes, func() string {
			for _, p := range []string{"/healthz", "/readyz"} {
				if code, body := get("http://" + in.probes + p); code != http.StatusOK {
					return fmt.Sprintf("%s: %d %s", p, code, body)
				}
			}
			return ""
		})
	}

	objs, probs, err := manifest.Read([]string{filepath.Join("..", "..", "examples", "gep-713", "example-3", "manifests.yaml")}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	dyn := dynamic.NewForConfigOrDie(env.Config)
	ctx := context.Background()
	resources := map[string]string{"Gateway": "gateways", "HTTPRoute": "httproutes", "Service": "services", "ColorPolicy": "colorpolicies"}
	for _, o := range objs {
		u := o.Object
		res, ok := resources[u.GetKind()]
		if !ok {
			continue // the example's CRD: the shipped one is installed
		}
		gvr := u.GroupVersionKind().GroupVersion().WithResource(res)
		if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	policies := dyn.Resource(schema.GroupVersionResource{Group: "policies.example.com", Version: "v1", Resource: "colorpolicies"}).Namespace("default")
	programmed := func(name, want string) string {
		p, err := policies.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == "Programmed" && m["reason"] == want {
				return ""
			}
		}
		return fmt.Sprintf("%s: conditions %v, want Programmed %s", name, conds, want)
	}
	waitFor(t, "Example 3's status", func() string {
		for name, want := range map[string]string{"p1": "PartiallyProgrammed", "p2": "Programmed", "p3": "Programmed", "p4": "PartiallyProgrammed"} {
			if msg := programmed(name, want); msg != "" {
				return msg
			}
		}
		return ""
	})
	metricsOf := func(in *instance) string {
		_, body := get("http://" + in.metrics + "/metrics")
		return body
	}
	waitFor(t, "the metrics", func() string {
		body := metricsOf(a) + metricsOf(b)
		for _, m := range []string{`attache_status_writes_total{kind="ColorPolicy.policies.example.com"}`, "attache_reconcile_duration_seconds_bucket", "attache_queue_depth",
			"go_goroutines", "process_resident_memory_bytes"} {
			if !strings.Contains(body, m) {
				return "no " + m
			}
		}
		return ""
	})

	// Stop one; whichever was the leader, the other writes the next change.
	if err := a.stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	if _, err := policies.Patch(ctx, "p4", "application/merge-patch+json", []byte(`{"spec":{"colors":{"dark":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// p4 now sets colors.light only, which p3's override beats.
	waitFor(t, "the remaining replica writing", func() string { return programmed("p4", "Overridden") })
	if logs := a.logs.String(); !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("the stopped instance did not log its shutdown:\n%s", logs)
	}
}

// TestSetGCPercent: without GOGC the collector's target becomes gcPercent;
// a GOGC given is left alone.
func TestSetGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "")
	setGCPercent(logr.Discard())
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("without GOGC: %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "80")
	setGCPercent(logr.Discard())
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: changed to %d", got)
	}
}
