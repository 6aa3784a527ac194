//go:build scale

package scale

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/effectivepolicy"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

var (
	caseFlag    = flag.String("case", "small", "size to run: small, first, second or large (issue 9)")
	binaryFlag  = flag.String("binary", "", "attache-controller binary to run (default: built from this tree)")
	outFlag     = flag.String("out", "", "directory for scale-<case>.json, scale-<case>.md and the controller's logs (default: none)")
	argsFlag    = flag.String("controller-args", "", "more flags for the controller, space separated")
	timeoutFlag = flag.Duration("converge-timeout", 0, "bound on convergence (default: per case)")
	memLimFlag  = flag.String("gomemlimit", "", "GOMEMLIMIT of the controller alone (the API server and etcd must not get it)")
	envFlag     = flag.String("controller-env", "", "more environment for the controller alone, space separated NAME=value (GODEBUG=gctrace=1 logs each collection's live heap)")
	webhookFlag = flag.Bool("webhook", true, "serve the admission webhook too (--webhook-port, certificates made here), as the shipped Deployment does")
	assertFlag  = flag.Bool("assert", false, "fail unless writes equal the floor, every EffectivePolicy is within its bound and a restart writes nothing (what CI checks: none of it depends on timing)")
)

// scaleCase is a named size.
type scaleCase struct {
	name     string
	params   gen.Params
	policies int
	timeout  time.Duration
}

// cases are the sizes of issue 9 ("first", "second") and a quick one.
var cases = map[string]scaleCase{
	"small":  {"small", gen.Params{Gateways: 1, ListenersPerGateway: 8, Routes: 50, Services: 50, Namespaces: 5, Seed: 1}, 60, 3 * time.Minute},
	"first":  {"first", gen.Params{Gateways: 1, ListenersPerGateway: 63, Routes: 500, Services: 500, Namespaces: 10, Seed: 1}, 100, 10 * time.Minute},
	"second": {"second", gen.Params{Gateways: 10, ListenersPerGateway: 16, Routes: 2000, Services: 2000, Namespaces: 20, Seed: 1}, 1000, 20 * time.Minute},
	// The engine issue's large topology.
	"large": {"large", gen.Params{Gateways: 50, ListenersPerGateway: 64, Routes: 10000, Services: 10000, Namespaces: 100, Seed: 1}, 5000, 40 * time.Minute},
}

// epBound is the most bytes an EffectivePolicy may take as the API serves
// it: the entry's budget, and room for the object's metadata (names,
// labels, annotations, managedFields).
var epBound = effectivepolicy.DefaultLimits.Bytes + 4<<10

const (
	controllerUser  = "attache-scale-controller"
	controllerName  = engine.DefaultControllerName
	conditionType   = engine.DefaultConditionDomain + "/" + gen.PolicyKind + "Affected"
	epNamespace     = "attache-system"
	quietConverged  = 5 * time.Second // no controller write for this long, then the state is checked
	quietAfterEdit  = 3 * time.Second
	pollEvery       = 250 * time.Millisecond
	editTimeout     = 5 * time.Minute
	stopGracePeriod = 30 * time.Second
)

var (
	policyGVR = schema.GroupVersionResource{Group: gen.PolicyGroup, Version: "v1", Resource: "benchpolicies"}
	epGVR     = schema.GroupVersionResource{Group: "attache.dev", Version: "v1alpha1", Resource: "effectivepolicies"}
	resources = map[string]schema.GroupVersionResource{
		"Namespace":    {Version: "v1", Resource: "namespaces"},
		"Service":      {Version: "v1", Resource: "services"},
		"GatewayClass": {Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"},
		"Gateway":      {Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"},
		"HTTPRoute":    {Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"},
		gen.PolicyKind: policyGVR,
	}
)

// Result is what one run measured; it is written as JSON.
type Result struct {
	Case     string     `json:"case"`
	Params   gen.Params `json:"params"`
	Policies int        `json:"policies"`
	Objects  int        `json:"objects"`
	ReadySec float64    `json:"readySeconds"`
	// CachesSyncedSec and FirstComputationSec are the controller's own
	// figures (its log), from its start: its informers synced (when it
	// becomes ready), and its first computation done (writes start).
	CachesSyncedSec     float64 `json:"cachesSyncedSeconds"`
	FirstComputationSec float64 `json:"firstComputationSeconds"`
	ConvergeSec         float64 `json:"convergeSeconds"`
	// PeakRSS is VmHWM at convergence, FinalRSS VmHWM at the end (after
	// the edits); RSSConverged is VmRSS at convergence.
	PeakRSSMiB      float64        `json:"peakRSSMiBAtConvergence"`
	RSSConvergedMiB float64        `json:"rssMiBAtConvergence"`
	FinalPeakRSSMiB float64        `json:"finalPeakRSSMiB"`
	Writes          int            `json:"writes"`
	WritesBy        map[string]int `json:"writesByResource"`
	WriteErrors     int            `json:"writeErrors"`
	AccessReviews   int            `json:"selfSubjectAccessReviews"` // not counted in Writes
	MetricWrites    float64        `json:"metricStatusWrites"`
	// Floor is the number of objects that must change: every policy's
	// status, every affected object's condition or annotation, and one
	// EffectivePolicy per affected object.
	Floor         int       `json:"floor"`
	Affected      int       `json:"affected"`
	EPCount       int       `json:"effectivePolicies"`
	EPMedianBytes int       `json:"effectivePolicyMedianBytes"`
	EPMaxBytes    int       `json:"effectivePolicyMaxBytes"`
	EPTotalBytes  int       `json:"effectivePolicyTotalBytes"`
	Edits         []EditRes `json:"edits"`
	// Restart: the controller stopped and started again over the same
	// state; its writes must be none.
	RestartReadySec float64 `json:"restartReadySeconds"`
	RestartWrites   int     `json:"restartWrites"`
	Note            string  `json:"note,omitempty"`
}

// EditRes is one policy edit: a new field added to the policy's stanza.
type EditRes struct {
	What       string         `json:"what"`
	Policy     string         `json:"policy"`
	Changed    int            `json:"effectivePoliciesToChange"`
	VisibleSec float64        `json:"visibleSeconds"` // the first EffectivePolicy carries it
	DoneSec    float64        `json:"doneSeconds"`    // last write of the edit
	Writes     int            `json:"writes"`
	WritesBy   map[string]int `json:"writesByResource"`
	AddedMiB   float64        `json:"peakRSSAddedMiB"` // VmHWM after minus before
}

func TestScale(t *testing.T) {
	sc, ok := cases[*caseFlag]
	if !ok {
		t.Fatalf("unknown -case %q: small, first, second or large", *caseFlag)
	}
	timeout := sc.timeout
	if *timeoutFlag > 0 {
		timeout = *timeoutFlag
	}
	work := t.TempDir()
	// The controller's logs are kept with the results when -out is given.
	logDir := work
	if *outFlag != "" {
		logDir = *outFlag
		must(t, os.MkdirAll(logDir, 0o755))
	}
	bin := *binaryFlag
	if bin == "" {
		bin = filepath.Join(work, "attache-controller")
		build := exec.Command("go", "build", "-o", bin, "./cmd/attache-controller")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the controller: %v\n%s", err, out)
		}
	}

	// The control plane, with an audit log of the controller's writes.
	auditPolicy := filepath.Join(work, "audit-policy.yaml")
	auditLog := filepath.Join(work, "audit.log")
	must(t, os.WriteFile(auditPolicy, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["`+controllerUser+`"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`), 0o600))
	crds, err := gatewayAPICRDs()
	must(t, err)
	t0 := time.Now()
	env := testenv.Start(t,
		testenv.WithCRDDirectoryPaths(append(crds, filepath.Join("..", "..", "deploy", "crds"))...),
		testenv.WithCRDs(benchPolicyCRD()),
		testenv.WithAPIServerFlag("service-cluster-ip-range", "10.0.0.0/16"),
		testenv.WithAPIServerFlag("audit-policy-file", auditPolicy),
		testenv.WithAPIServerFlag("audit-log-path", auditLog),
		testenv.WithAPIServerFlag("audit-log-mode", "blocking"),
		testenv.WithAPIServerFlag("shutdown-watch-termination-grace-period", "2s"))
	t.Logf("control plane up in %v", time.Since(t0).Round(time.Millisecond))

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	dyn, err := dynamic.NewForConfig(cfg)
	must(t, err)
	ctx := context.Background()

	// The objects, created before the controller starts.
	objs := gen.Topology(sc.params)
	pols := gen.Policies(sc.params, sc.policies)
	all := append(append([]*unstructured.Unstructured{}, objs...), pols[1:]...)
	t0 = time.Now()
	create(t, dyn, []*unstructured.Unstructured{namespaceObj(epNamespace)})
	for _, pass := range [][]string{{"Namespace"}, {"GatewayClass", "Gateway", "Service", "HTTPRoute", gen.PolicyKind}} {
		var batch []*unstructured.Unstructured
		for _, u := range all {
			if contains(pass, u.GetKind()) {
				batch = append(batch, u)
			}
		}
		create(t, dyn, batch)
	}
	t.Logf("created %d objects in %v", len(all), time.Since(t0).Round(time.Millisecond))

	// What the state must be, from the engine over the same input.
	engineIn := make([]engine.Object, 0, len(objs)+len(pols))
	for _, u := range append(append([]*unstructured.Unstructured{}, objs...), pols...) {
		engineIn = append(engineIn, engine.Object{Object: u})
	}
	want := expect(engine.Compute(engineIn, engine.Options{}))
	res := &Result{Case: sc.name, Params: sc.params, Policies: sc.policies, Objects: len(all) + 1,
		Affected: len(want.affected), Floor: want.policies + 2*len(want.affected)}

	// The controller, as its own process, as a user of its own (whose
	// writes the audit log records).
	user := env.UserConfig(t, controllerUser, "system:masters")
	kubeconfig := filepath.Join(work, "kubeconfig")
	must(t, writeKubeconfig(user, kubeconfig))
	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	for probeAddr == metricsAddr {
		probeAddr = freeAddr(t)
	}
	args := []string{"--kubeconfig=" + kubeconfig, "--effective-policies",
		"--owned-kinds=" + gen.PolicyKind + "." + gen.PolicyGroup,
		"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=" + probeAddr}
	webhookAddr := ""
	if *webhookFlag {
		certDir := filepath.Join(work, "webhook-certs")
		must(t, writeServingCert(certDir))
		webhookAddr = freeAddr(t)
		_, port, _ := net.SplitHostPort(webhookAddr)
		// The API server does not call it (no configuration installed):
		// it is served, and its state kept, as on the shipped leader.
		args = append(args, "--webhook-port="+port, "--webhook-cert-dir="+certDir, "--webhook-configuration=")
	}
	args = append(args, strings.Fields(*argsFlag)...)
	p := startProcess(t, bin, args, filepath.Join(logDir, "controller-"+sc.name+".log"))
	audit := &auditReader{path: auditLog}

	// Ready.
	start := p.started
	deadline := start.Add(timeout)
	res.ReadySec = waitReady(t, p, probeAddr, timeout)
	if webhookAddr != "" {
		// Served: a TLS handshake succeeds (the server starts with the
		// manager, before the caches sync).
		ok := false
		for i := 0; i < 50 && !ok; i++ {
			conn, err := tls.Dial("tcp", webhookAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // our own self-signed certificate
			if ok = err == nil; ok {
				conn.Close()
			} else {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if !ok {
			t.Fatalf("the webhook is not served on %s\n%s", webhookAddr, p.tail())
		}
	}
	res.CachesSyncedSec = p.logSeconds("informer caches synced", "sinceStart", 10*time.Second)
	res.FirstComputationSec = p.logSeconds("first computation done", "sinceStart", timeout)
	t.Logf("ready in %.2fs (caches synced at %.2fs, first computation done at %.2fs)", res.ReadySec, res.CachesSyncedSec, res.FirstComputationSec)

	// Converged: the last write of the controller, once its writes have
	// stopped for quietConverged and the stored state is the expected one.
	var eps []*unstructured.Unstructured
	lastCheck := time.Time{}
	for {
		p.sample()
		must(t, audit.read())
		if p.exited() {
			t.Fatalf("the controller exited\n%s", p.tail())
		}
		if time.Now().After(deadline) {
			msg := "(no state check yet)"
			if !lastCheck.IsZero() {
				msg = check(ctx, dyn, want, &eps)
			}
			t.Fatalf("not converged within %v: %d writes, last %v; %s\n%s", timeout, audit.n, audit.last, msg, p.tail())
		}
		if audit.n > 0 && time.Since(audit.last) > quietConverged && time.Since(lastCheck) > quietConverged {
			lastCheck = time.Now()
			msg := check(ctx, dyn, want, &eps)
			must(t, audit.read())
			if msg == "" && time.Since(audit.last) > quietConverged {
				break
			}
			t.Logf("quiet but not converged: %s", msg)
		}
		time.Sleep(pollEvery)
	}
	res.ConvergeSec = audit.last.Sub(start).Seconds()
	hwm, rss := p.memory()
	res.PeakRSSMiB, res.RSSConvergedMiB = mib(hwm), mib(rss)
	res.Writes, res.WritesBy, res.WriteErrors, res.AccessReviews = audit.n, audit.byResource(0), audit.errors, audit.questions
	res.MetricWrites = metricSum(metricsAddr, "attache_status_writes_total")
	sizes := make([]int, 0, len(eps))
	for _, u := range eps {
		b, _ := json.Marshal(u.Object)
		sizes = append(sizes, len(b))
		res.EPTotalBytes += len(b)
	}
	sort.Ints(sizes)
	res.EPCount = len(sizes)
	if len(sizes) > 0 {
		res.EPMedianBytes, res.EPMaxBytes = sizes[len(sizes)/2], sizes[len(sizes)-1]
	}
	t.Logf("converged in %.2fs: %d writes for a floor of %d", res.ConvergeSec, res.Writes, res.Floor)

	// Two edits: a route policy, then a Gateway policy.
	for _, kind := range []string{"HTTPRoute", "Gateway"} {
		e := edit(t, ctx, dyn, p, audit, engineIn, kind)
		res.Edits = append(res.Edits, e)
		t.Logf("%s: visible in %.3fs, done in %.3fs, %d writes for %d EffectivePolicies", e.What, e.VisibleSec, e.DoneSec, e.Writes, e.Changed)
	}
	hwm, _ = p.memory()
	res.FinalPeakRSSMiB = mib(hwm)

	// A restart over the same state writes nothing.
	p.stop(t)
	must(t, audit.read())
	n0 := audit.n
	p = startProcess(t, bin, args, filepath.Join(logDir, "controller-"+sc.name+"-restarted.log"))
	res.RestartReadySec = waitReady(t, p, probeAddr, timeout)
	quiet := time.Now()
	for {
		p.sample()
		must(t, audit.read())
		if p.exited() {
			t.Fatalf("the restarted controller exited\n%s", p.tail())
		}
		// Its first computation done (reported once ready), then quiet.
		if audit.n > n0 {
			quiet = audit.last
		}
		if metricSum(metricsAddr, "attache_reconcile_duration_seconds_count") >= 1 && time.Since(quiet) > quietConverged {
			break
		}
		if time.Since(quiet) > timeout {
			t.Fatalf("the restarted controller kept writing for %v", timeout)
		}
		time.Sleep(pollEvery)
	}
	res.RestartWrites = audit.n - n0
	t.Logf("restarted: ready in %.2fs, %d writes", res.RestartReadySec, res.RestartWrites)
	res.Note = fmt.Sprintf("%d CPUs shared with other work; writes counted by the API server's audit log (user %s); webhook served: %v; controller's GOMEMLIMIT=%q", runtimeCPUs(), controllerUser, *webhookFlag, *memLimFlag)

	printResult(t, res)
	if *assertFlag {
		if res.Writes != res.Floor || res.WriteErrors != 0 {
			t.Errorf("%d writes (%d failed) for a floor of %d: want exactly the floor", res.Writes, res.WriteErrors, res.Floor)
		}
		if res.EPMaxBytes > epBound || res.EPCount != res.Affected {
			t.Errorf("%d EffectivePolicies for %d affected objects, largest %d bytes: want one each, at most %d bytes", res.EPCount, res.Affected, res.EPMaxBytes, epBound)
		}
		if res.RestartWrites != 0 {
			t.Errorf("a restart over the same state wrote %d times, want none", res.RestartWrites)
		}
	}
}

// isBenchKind says whether a policy kind is the harness's.
func isBenchKind(gk topology.GroupKind) bool {
	return gk.Kind == gen.PolicyKind && gk.Group == gen.PolicyGroup
}

// expected is the state the controller must reach.
type expected struct {
	policies int
	affected map[topology.Ref]bool // objects with a condition or annotation and an EffectivePolicy
	eps      map[string]bool       // namespace/name of the EffectivePolicies
}

func expect(r *engine.Result) *expected {
	w := &expected{affected: map[topology.Ref]bool{}, eps: map[string]bool{}}
	for _, ps := range r.Policies {
		if ps.Policy.Kind.GroupKind.Kind == gen.PolicyKind {
			w.policies++
		}
	}
	effective := map[topology.Ref]bool{}
	for _, e := range r.Effective {
		if e.Kind.GroupKind.Kind == gen.PolicyKind {
			effective[e.Target.Object()] = true
		}
	}
	for _, af := range r.Affected {
		if af.Kind.GroupKind.Kind == gen.PolicyKind && effective[af.Target.Object()] {
			ref := af.Target.Object()
			w.affected[ref] = true
			w.eps[epKey(ref)] = true
		}
	}
	return w
}

// epKey is the namespace/name of an object's EffectivePolicy
// (pkg/controller's naming, names short enough here not to be cut).
func epKey(r topology.Ref) string {
	ns := r.Namespace
	switch {
	case r.Kind == "Namespace" && r.Group == "":
		ns = r.Name
	case ns == "":
		ns = epNamespace
	}
	return ns + "/" + strings.ToLower(r.Kind) + "." + r.Name
}

// check returns "" when the stored state is the expected one: every
// policy has an ancestor entry of this controller, every affected object
// its condition (or annotation) and its EffectivePolicy with an entry of
// this controller, and there is no other EffectivePolicy. It keeps the
// EffectivePolicies it listed in eps.
func check(ctx context.Context, dyn dynamic.Interface, w *expected, eps *[]*unstructured.Unstructured) string {
	policies, err := list(ctx, dyn, policyGVR)
	if err != nil {
		return err.Error()
	}
	withStatus := 0
	for _, p := range policies {
		anc, _, _ := unstructured.NestedSlice(p.Object, "status", "ancestors")
		for _, a := range anc {
			if m, _ := a.(map[string]any); m != nil && m["controllerName"] == controllerName {
				withStatus++
				break
			}
		}
	}
	if withStatus != w.policies {
		return fmt.Sprintf("%d of %d policies have status", withStatus, w.policies)
	}
	got, err := list(ctx, dyn, epGVR)
	if err != nil {
		return err.Error()
	}
	ours := 0
	for _, u := range got {
		k := u.GetNamespace() + "/" + u.GetName()
		if !w.eps[k] {
			return "unexpected EffectivePolicy " + k
		}
		if strings.Contains(string(mustJSON(u.Object["controllers"])), `"controllerName":"`+controllerName+`"`) {
			ours++
		}
	}
	if ours != len(w.eps) {
		return fmt.Sprintf("%d of %d EffectivePolicies", ours, len(w.eps))
	}
	*eps = got
	marked := 0
	for kind, gvr := range resources {
		if kind == gen.PolicyKind {
			continue
		}
		objs, err := list(ctx, dyn, gvr)
		if err != nil {
			return err.Error()
		}
		for _, u := range objs {
			ref := topology.Ref{Group: gvr.Group, Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName()}
			if !w.affected[ref] {
				continue
			}
			if _, ok := u.GetAnnotations()[conditionType]; ok {
				marked++
				continue
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, _ := c.(map[string]any); m != nil && m["type"] == conditionType {
					marked++
					break
				}
			}
		}
	}
	if marked != len(w.affected) {
		return fmt.Sprintf("%d of %d affected objects marked", marked, len(w.affected))
	}
	return ""
}

// edit adds a field to the stanza of the first policy on a kind (without
// section) whose change reaches at least one EffectivePolicy, by the
// engine, and measures until the first carries it and until the
// controller's writes stop.
func edit(t *testing.T, ctx context.Context, dyn dynamic.Interface, p *process, audit *auditReader, in []engine.Object, kind string) EditRes {
	t.Helper()
	// A field of its own per edit: an EffectivePolicy mentions it (in its
	// spec, or as a field lost to another policy) exactly when the edit
	// changed it.
	field := "x-scale-edit-" + strings.ToLower(kind)
	nonce := fmt.Sprintf("edit-%d", time.Now().UnixNano())
	var (
		idx     = -1
		stanza  string
		changed []topology.Ref
	)
	tried := 0
	for i, o := range in {
		if o.Object.GetKind() != gen.PolicyKind || tried >= 20 {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(o.Object.Object, "spec", "targetRefs")
		if len(refs) != 1 || refs[0].(map[string]any)["kind"] != kind || refs[0].(map[string]any)["sectionName"] != nil {
			continue
		}
		tried++
		stanza = "defaults"
		if _, ok := o.Object.Object["spec"].(map[string]any)["overrides"]; ok {
			stanza = "overrides"
		}
		edited := o.Object.DeepCopy()
		must(t, unstructured.SetNestedField(edited.Object, nonce, "spec", stanza, field))
		saved := in[i]
		in[i] = engine.Object{Object: edited}
		r := engine.Compute(in, engine.Options{})
		changed = changed[:0]
		// The entries the controller writes, rendered as it renders them:
		// those naming the field (set, or lost to another policy) change.
		for obj, en := range effectivepolicy.Build(r, controllerName, isBenchKind, nil, effectivepolicy.Limits{}) {
			if bytes.Contains(en.JSON(), []byte(field)) {
				changed = append(changed, obj)
			}
		}
		sort.Slice(changed, func(i, j int) bool { return changed[i].Less(changed[j]) })
		if len(changed) > 0 {
			idx = i
			break // in keeps the edit: the next one is computed over it
		}
		in[i] = saved
	}
	if idx < 0 {
		t.Fatalf("no %s policy whose edit changes an EffectivePolicy (tried %d)", kind, tried)
	}
	pol := in[idx].Object
	e := EditRes{What: kind + " policy", Policy: pol.GetNamespace() + "/" + pol.GetName(), Changed: len(changed)}
	hwm0, _ := p.memory()
	must(t, audit.read())
	n0 := audit.n
	first := changed[0]
	epNS, epName, _ := strings.Cut(epKey(first), "/")
	patch := fmt.Sprintf(`{"spec":{%q:{%q:%q}}}`, stanza, field, nonce)
	t0 := time.Now()
	if _, err := dyn.Resource(policyGVR).Namespace(pol.GetNamespace()).Patch(ctx, pol.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := t0.Add(editTimeout)
	for e.VisibleSec == 0 {
		u, err := dyn.Resource(epGVR).Namespace(epNS).Get(ctx, epName, metav1.GetOptions{})
		if err == nil && bytes.Contains(mustJSON(u.Object), []byte(field)) {
			e.VisibleSec = time.Since(t0).Seconds()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not visible on %s/%s within %v\n%s", e.What, epNS, epName, editTimeout, p.tail())
		}
		p.sample()
		time.Sleep(10 * time.Millisecond)
	}
	// Done: every changed EffectivePolicy carries it and writes stopped.
	for {
		p.sample()
		must(t, audit.read())
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done within %v\n%s", e.What, editTimeout, p.tail())
		}
		if time.Since(audit.last) > quietAfterEdit {
			var eps []*unstructured.Unstructured
			var err error
			if eps, err = list(ctx, dyn, epGVR); err == nil {
				carry := 0
				for _, u := range eps {
					if bytes.Contains(mustJSON(u.Object), []byte(field)) {
						carry++
					}
				}
				must(t, audit.read())
				if carry == len(changed) && time.Since(audit.last) > quietAfterEdit {
					break
				}
			}
		}
		time.Sleep(pollEvery)
	}
	e.DoneSec = audit.last.Sub(t0).Seconds()
	if audit.n == n0 {
		e.DoneSec = e.VisibleSec
	}
	e.Writes, e.WritesBy = audit.n-n0, audit.byResource(n0)
	hwm1, _ := p.memory()
	e.AddedMiB = mib(hwm1 - hwm0)
	return e
}

// printResult prints the result as a Markdown table row and as JSON, and writes
// both under -out.
func printResult(t *testing.T, r *Result) {
	t.Helper()
	md := markdown(r)
	js, _ := json.MarshalIndent(r, "", "  ")
	fmt.Printf("\n%s\n%s\n", md, js)
	if *outFlag != "" {
		must(t, os.MkdirAll(*outFlag, 0o755))
		must(t, os.WriteFile(filepath.Join(*outFlag, "scale-"+r.Case+".json"), append(js, '\n'), 0o644))
		must(t, os.WriteFile(filepath.Join(*outFlag, "scale-"+r.Case+".md"), []byte(md), 0o644))
	}
}

func markdown(r *Result) string {
	var b strings.Builder
	b.WriteString("| case | objects | ready (first computation) | converged | peak RSS (at convergence) | writes / floor | EffectivePolicies: n, median, max | route-policy edit: visible, done, writes / EPs | Gateway-policy edit: visible, done, writes / EPs | peak RSS after edits | restart: ready, writes |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	p := r.Params
	fmt.Fprintf(&b, "| %s: G=%d x L=%d, R=%d, S=%d, NS=%d, P=%d | %d | %.1f s (%.1f s) | %.1f s | %.0f MiB (%.0f MiB) | %d / %d = %.2f | %d, %.1f KiB, %.1f KiB |",
		r.Case, p.Gateways, p.ListenersPerGateway, p.Routes, p.Services, p.Namespaces, r.Policies, r.Objects,
		r.ReadySec, r.FirstComputationSec, r.ConvergeSec, r.PeakRSSMiB, r.RSSConvergedMiB, r.Writes, r.Floor, float64(r.Writes)/float64(max(r.Floor, 1)),
		r.EPCount, float64(r.EPMedianBytes)/1024, float64(r.EPMaxBytes)/1024)
	for _, e := range r.Edits {
		fmt.Fprintf(&b, " %.0f ms, %.2f s, %d / %d |", e.VisibleSec*1000, e.DoneSec, e.Writes, e.Changed)
	}
	fmt.Fprintf(&b, " %.0f MiB (+%.0f) | %.1f s, %d |\n", r.FinalPeakRSSMiB, r.FinalPeakRSSMiB-r.PeakRSSMiB, r.RestartReadySec, r.RestartWrites)
	return b.String()
}

// auditReader follows the audit log: the controller's write requests.
type auditReader struct {
	path    string
	off     int64
	partial []byte
	n       int
	errors  int
	// questions are the SelfSubjectAccessReviews, not counted as writes.
	questions int
	last      time.Time
	res       []string // resource[/subresource] of each write, in order
}

type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp metav1.MicroTime `json:"stageTimestamp"`
}

func (a *auditReader) read() error {
	f, err := os.Open(a.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(a.off, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	a.off += int64(len(data))
	data = append(a.partial, data...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		a.partial = data
		return nil
	}
	a.partial = append([]byte(nil), data[end+1:]...)
	sc := bufio.NewScanner(bytes.NewReader(data[:end+1]))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		if ev.Stage != "ResponseComplete" {
			continue
		}
		if ev.ObjectRef.Resource == "selfsubjectaccessreviews" {
			// Access checks are questions, not writes to stored objects.
			a.questions++
			continue
		}
		a.n++
		if ev.ResponseStatus.Code >= 300 {
			a.errors++
		}
		r := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			r += "/" + ev.ObjectRef.Subresource
		}
		a.res = append(a.res, ev.Verb+" "+r)
		if t := ev.StageTimestamp.Time; t.After(a.last) {
			a.last = t
		}
	}
	return sc.Err()
}

func (a *auditReader) byResource(from int) map[string]int {
	m := map[string]int{}
	for _, r := range a.res[from:] {
		m[r]++
	}
	return m
}

// process is the controller's process.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	log     string
	done    chan struct{}
	mu      sync.Mutex
	hwm     int64 // bytes, largest VmHWM seen
	rss     int64 // bytes, last VmRSS
}

func startProcess(t *testing.T, bin string, args []string, logPath string) *process {
	t.Helper()
	lf, err := os.Create(logPath)
	must(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = os.Environ()
	if *memLimFlag != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+*memLimFlag)
	}
	cmd.Env = append(cmd.Env, strings.Fields(*envFlag)...)
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	must(t, cmd.Start())
	p.started = time.Now()
	go func() { _ = cmd.Wait(); lf.Close(); close(p.done) }()
	t.Cleanup(func() {
		if !p.exited() {
			p.stop(t)
		}
		if t.Failed() {
			t.Logf("controller log: %s", logPath)
		}
	})
	return p
}

// waitReady polls /readyz every 100 ms until it answers 200 and returns
// the seconds since the process started.
func waitReady(t *testing.T, p *process, probeAddr string, timeout time.Duration) float64 {
	t.Helper()
	deadline := p.started.Add(timeout)
	for {
		if code, _ := get("http://" + probeAddr + "/readyz"); code == http.StatusOK {
			return time.Since(p.started).Seconds()
		}
		if time.Now().After(deadline) || p.exited() {
			t.Fatalf("not ready within %v (exited: %v)\n%s", timeout, p.exited(), p.tail())
		}
		p.sample()
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for the process to exit (killed after
// stopGracePeriod).
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGracePeriod):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("the controller did not stop within %v of SIGTERM: killed", stopGracePeriod)
	}
}

// logSeconds waits (up to wait) for the controller's log line holding msg
// and returns its duration field in seconds (-1 when there is none).
func (p *process) logSeconds(msg, field string, wait time.Duration) float64 {
	deadline := time.Now().Add(wait)
	for {
		data, _ := os.ReadFile(p.log)
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, msg) {
				continue
			}
			var v map[string]any
			if json.Unmarshal([]byte(line), &v) == nil {
				s, _ := v[field].(string)
				if d, err := time.ParseDuration(s); err == nil {
					return d.Seconds()
				}
			}
		}
		if time.Now().After(deadline) || p.exited() {
			return -1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// sample reads VmHWM and VmRSS from /proc.
func (p *process) sample() {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		f := strings.Fields(v) // "123456 kB"
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmHWM" {
			p.hwm = max(p.hwm, kb<<10)
		} else {
			p.rss = kb << 10
		}
	}
}

func (p *process) memory() (hwm, rss int64) {
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hwm, p.rss
}

func (p *process) tail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return "--- end of the controller's log ---\n" + string(data)
}

// create creates objects with a few workers.
func create(t *testing.T, dyn dynamic.Interface, objs []*unstructured.Unstructured) {
	t.Helper()
	ch := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range ch {
				u = u.DeepCopy()
				unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
				gvr, ok := resources[u.GetKind()]
				var err error
				if !ok {
					err = fmt.Errorf("no resource for %s", u.GetKind())
				} else if u.GetNamespace() == "" {
					_, err = dyn.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{})
				} else {
					_, err = dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
				}
				if err != nil && !apierrors.IsAlreadyExists(err) {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("creating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, u := range objs {
		ch <- u
	}
	close(ch)
	wg.Wait()
	must(t, firstErr)
}

// list lists every object of a resource, 500 at a time.
func list(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := dyn.Resource(gvr).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// benchPolicyCRD is gen's policy kind as a servable CRD: gen.Policies'
// CRD (labels and names) with a version, an open schema and a status
// subresource.
func benchPolicyCRD() *apiextensionsv1.CustomResourceDefinition {
	src := gen.Policies(gen.Params{}, 0)[0]
	open := true
	schemaProps := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec":   {Type: "object", XPreserveUnknownFields: &open},
		"status": {Type: "object", XPreserveUnknownFields: &open},
	}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: src.GetName(), Labels: src.GetLabels(), Annotations: src.GetAnnotations()},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gen.PolicyGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: gen.PolicyKind, Plural: "benchpolicies", ListKind: gen.PolicyKind + "List", Singular: "benchpolicy"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schemaProps},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func gatewayAPICRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return nil, fmt.Errorf("locating sigs.k8s.io/gateway-api: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Gateway API CRDs (%v)", err)
	}
	return files, nil
}

func writeKubeconfig(c *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	kc.AuthInfos["controller"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "controller"}
	kc.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kc, path)
}

// metricSum adds the values of every series of a metric on /metrics.
func metricSum(addr, name string) float64 {
	_, body := get("http://" + addr + "/metrics")
	sum := 0.0
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

func get(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// writeServingCert writes a self-signed serving certificate for 127.0.0.1
// as tls.crt and tls.key in dir.
func writeServingCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "attache-scale"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

func namespaceObj(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func runtimeCPUs() int { return runtime.NumCPU() }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
