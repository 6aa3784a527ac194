// Command attache-controller runs the attache policy controller: it watches
// every CRD labelled gateway.networking.k8s.io/policy (also those created
// after start), the Gateway API objects, Services, Namespaces and
// ReferenceGrants, and writes GEP-713 status for the policy kinds it owns:
// Accepted and Programmed with status.ancestors on the policies, and the
// <domain>/<Kind>Affected condition (or annotation) on what they affect.
//
// Usage:
//
//	attache-controller --controller-name=example.com/policy-controller \
//	    --owned-kinds=ColorPolicy.policies.example.com --leader-elect
//
// Kinds are owned when listed in --owned-kinds or when their CRD carries the
// annotation attache.dev/owned-by: <controller-name>. Logs are structured
// (JSON by default) on standard error; /healthz and /readyz are served on
// --health-probe-bind-address and Prometheus metrics on
// --metrics-bind-address. SIGTERM and SIGINT stop it gracefully (the leader
// lease is released).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/attache-dev/attache/pkg/controller"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/webhook"
)

func main() {
	f, err := parseFlags(os.Args[1:], os.Stderr)
	if err == nil {
		log := newLogger(f, os.Stderr)
		// controller-runtime's own packages log through the global logger.
		ctrllog.SetLogger(log)
		setMemoryLimit(log)
		setGCPercent(log)
		err = run(signals.SetupSignalHandler(), f, log, nil)
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "attache-controller:", err)
		}
		os.Exit(1)
	}
}

// memoryLimitRatio is the share of the container's memory limit given to
// the Go runtime as its soft limit (GOMEMLIMIT): the garbage collector
// works harder as the heap nears it instead of letting the process be
// OOMKilled, and the rest is left to what the runtime does not count.
const memoryLimitRatio = 0.9

// setMemoryLimit sets the Go runtime's soft memory limit to
// memoryLimitRatio of the cgroup's memory limit, unless GOMEMLIMIT is set
// or there is no limit (outside a container).
func setMemoryLimit(log logr.Logger) {
	limit, err := memlimit.Set(memlimit.WithProvider(memlimit.FromCgroup), memlimit.WithRatio(memoryLimitRatio))
	switch {
	case err != nil:
		log.V(1).Info("no memory limit set from the cgroup", "reason", err.Error())
	case limit > 0:
		log.Info("Go memory limit", "bytes", limit, "ratioOfCgroupLimit", memoryLimitRatio)
	}
}

// gcPercent is the garbage collector's target (GOGC) unless GOGC is set:
// the heap may grow by half of what is live between collections rather
// than by all of it (Go's default, 100). A policy edit re-renders hundreds
// of EffectivePolicy entries at once; with 100 it raised the peak by 13 to
// 19 % over the converged one (issue 9's first scale case), with 50 by 7
// to 10 %, for collections that take under 1 % of the CPU
// (docs/performance.md).
const gcPercent = 50

// setGCPercent sets the collector's target to gcPercent unless GOGC is
// set.
func setGCPercent(log logr.Logger) {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	log.V(1).Info("Go GC percent", "GOGC", gcPercent)
}

// Defaults of --kube-api-qps and --kube-api-burst: the client-side limit
// on requests to the API server, the same whether the configuration comes
// from a kubeconfig or from the pod (client-go alone would apply 5 and 10
// with a kubeconfig, and controller-runtime no limit in-cluster).
const (
	DefaultKubeAPIQPS   = 200
	DefaultKubeAPIBurst = 400
)

// flags are the command-line settings.
type flags struct {
	kubeconfig         string
	controllerName     string
	conditionDomain    string
	ownedKinds         string
	leaderElect        bool
	leaderElectionNS   string
	leaderElectionID   string
	metricsAddr        string
	probeAddr          string
	pprofAddr          string
	writeQPS           float64
	writeBurst         int
	writers            int
	kubeAPIQPS         float64
	kubeAPIBurst       int
	resync             time.Duration
	logFormat          string
	verbosity          int
	gracefulShutdownIn time.Duration
	effectivePolicies  bool
	effectivePolicyNS  string
	profiles           bool
	webhookPort        int
	webhookCertDir     string
	webhookConfig      string
	webhookRotation    bool
	webhookSecret      string
	webhookService     string
	webhookNamespace   string
	admissionDeny      string
	features           policy.Features // --feature, repeatable
}

func parseFlags(args []string, out io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("attache-controller", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.controllerName, "controller-name", engine.DefaultControllerName, "controller name keying this controller's status.ancestors entries (domain/path)")
	fs.StringVar(&f.conditionDomain, "condition-domain", engine.DefaultConditionDomain, "domain of the <domain>/<Kind>Affected conditions and annotations on affected objects")
	fs.StringVar(&f.ownedKinds, "owned-kinds", "", "comma-separated policy kinds (Kind.group) whose status this controller writes; CRDs annotated "+controller.AnnotationOwnedBy+": <controller-name> are owned too")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader among replicas: only the leader writes")
	fs.StringVar(&f.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", "attache-controller", "name of the leader election Lease")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (0 disables them)")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0", "address of Go's /debug/pprof endpoints, to profile memory and CPU (0, the default, disables them)")
	fs.Float64Var(&f.writeQPS, "write-qps", controller.DefaultWriteQPS, "the write budget: most writes per second, every write counted (policy status, Affected conditions and annotations, EffectivePolicies); keep it under --kube-api-qps")
	fs.Float64Var(&f.writeQPS, "target-write-qps", controller.DefaultWriteQPS, "deprecated: the former name of --write-qps")
	fs.IntVar(&f.writeBurst, "write-burst", controller.DefaultWriteBurst, "writes allowed in a burst above --write-qps")
	fs.IntVar(&f.writers, "writers", controller.DefaultWriters, "workers writing affected objects and EffectivePolicies in parallel, within the write budget")
	fs.Float64Var(&f.kubeAPIQPS, "kube-api-qps", DefaultKubeAPIQPS, "client-side limit of requests per second to the API server, every request (reads, watches, writes) counted; "+
		"applies with --kubeconfig and in-cluster alike (client-go's silent default would be 5 with a kubeconfig and none in-cluster); negative: no client-side limit")
	fs.IntVar(&f.kubeAPIBurst, "kube-api-burst", DefaultKubeAPIBurst, "requests allowed in a burst above --kube-api-qps")
	fs.DurationVar(&f.resync, "resync-period", time.Hour, "how often everything is recomputed and compared without an event (0: never)")
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or text")
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity (1 logs every write)")
	fs.BoolVar(&f.effectivePolicies, "effective-policies", false, "write an EffectivePolicy object per affected object (its CRD must be installed: deploy/crds/effectivepolicies.attache.dev.yaml)")
	fs.StringVar(&f.effectivePolicyNS, "effective-policy-namespace", controller.DefaultEffectivePolicyNamespace, "namespace of the EffectivePolicy objects of cluster-scoped objects other than Namespaces")
	fs.BoolVar(&f.profiles, "profiles", true, "apply attache's built-in profiles of the implementations' policy kinds (Envoy Gateway, Istio, ...; docs/profiles.md); false: only CRDs labelled gateway.networking.k8s.io/policy are policy kinds, and route delegation is followed under every Gateway")
	fs.IntVar(&f.webhookPort, "webhook-port", 0, "port of the admission webhook (HTTPS; every replica serves it); 0: no webhook")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the webhook's tls.crt and tls.key")
	fs.StringVar(&f.webhookConfig, "webhook-configuration", "attache-webhook", "ValidatingWebhookConfiguration whose rules follow the policy kinds (and whose caBundle --webhook-cert-rotation sets)")
	fs.BoolVar(&f.webhookRotation, "webhook-cert-rotation", false, "make and rotate the webhook's certificates (kept in --webhook-secret) instead of reading those cert-manager mounts")
	fs.StringVar(&f.webhookSecret, "webhook-secret", "attache-webhook-tls", "Secret of the webhook's certificates, in --webhook-namespace (with --webhook-cert-rotation)")
	fs.StringVar(&f.webhookService, "webhook-service", "attache-webhook", "Service of the webhook, in --webhook-namespace: the certificate's DNS name (with --webhook-cert-rotation)")
	fs.StringVar(&f.webhookNamespace, "webhook-namespace", os.Getenv("POD_NAMESPACE"), "namespace of --webhook-secret and --webhook-service (default $POD_NAMESPACE)")
	fs.StringVar(&f.admissionDeny, "admission-deny", "", "comma-separated policy kinds (Kind.group) whose policies the webhook denies when they would be Invalid or Conflicted (a CRD annotated "+webhook.AnnotationAdmission+": deny or warn decides for its kind)")
	fs.DurationVar(&f.gracefulShutdownIn, "graceful-shutdown-timeout", 30*time.Second, "time given to in-flight work on shutdown")
	fs.Func("feature", "set a feature of an implementation's configuration that a kind's feature gates name, over the configuration read at start (repeatable): NAME=true|false, e.g. EnvoyGateway.extensionApis.enableLua=true", func(v string) error {
		name, on, err := policy.ParseFeature(v)
		if err != nil {
			return err
		}
		if f.features == nil {
			f.features = policy.Features{}
		}
		f.features[name] = policy.Feature{On: on, From: "--feature " + v}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if f.kubeAPIQPS == 0 {
		return nil, fmt.Errorf("--kube-api-qps must not be 0 (positive: the limit; negative: no limit)")
	}
	if f.kubeAPIQPS > 0 && f.kubeAPIBurst < 1 {
		return nil, fmt.Errorf("--kube-api-burst must be at least 1, not %d", f.kubeAPIBurst)
	}
	if f.writeQPS <= 0 || f.writeBurst < 1 || f.writers < 1 {
		return nil, fmt.Errorf("--write-qps must be positive and --write-burst and --writers at least 1 (have %v, %d, %d)", f.writeQPS, f.writeBurst, f.writers)
	}
	if f.webhookPort > 0 && f.webhookRotation && f.webhookNamespace == "" {
		return nil, fmt.Errorf("--webhook-cert-rotation needs --webhook-namespace (or $POD_NAMESPACE)")
	}
	if f.logFormat != "json" && f.logFormat != "text" {
		return nil, fmt.Errorf("--log-format must be json or text, not %q", f.logFormat)
	}
	return f, nil
}

// newLogger builds the structured logger: log/slog behind logr, as
// controller-runtime logs through logr. Verbosity n enables logr's V(n).
func newLogger(f *flags, out io.Writer) logr.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(-f.verbosity)}
	var h slog.Handler = slog.NewJSONHandler(out, opts)
	if f.logFormat == "text" {
		h = slog.NewTextHandler(out, opts)
	}
	return logr.FromSlogHandler(h)
}

// run runs the controller until ctx is done. cfg, when not nil, replaces
// the configuration from the kubeconfig (tests).
func run(ctx context.Context, f *flags, log logr.Logger, cfg *rest.Config) error {
	owned, err := controller.ParseKinds(f.ownedKinds)
	if err != nil {
		return fmt.Errorf("--owned-kinds: %w", err)
	}
	cfg, err = clientConfig(f, cfg)
	if err != nil {
		return err
	}
	if err := registerRuntimeCollectors(ctrlmetrics.Registry); err != nil {
		return fmt.Errorf("registering the Go and process metrics: %w", err)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Cache:                         controller.CacheOptions(cache.Options{}),
		Metrics:                       metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:        f.probeAddr,
		PprofBindAddress:              f.pprofAddr,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              f.leaderElectionID,
		LeaderElectionNamespace:       f.leaderElectionNS,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &f.gracefulShutdownIn,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	c, err := controller.New(mgr, controller.Options{
		ControllerName:  f.controllerName,
		ConditionDomain: f.conditionDomain,
		OwnedKinds:      owned,
		WriteQPS:        f.writeQPS,
		WriteBurst:      f.writeBurst,
		Writers:         f.writers,
		ResyncPeriod:    resyncOption(f.resync),

		EffectivePolicies:        f.effectivePolicies,
		DisableProfiles:          !f.profiles,
		Features:                 f.features,
		EffectivePolicyNamespace: f.effectivePolicyNS,
	})
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("controller", c.ReadyCheck); err != nil {
		return err
	}
	if f.webhookPort > 0 {
		if err := serveWebhook(mgr, c, f); err != nil {
			return err
		}
	}
	log.Info("starting attache-controller", "controllerName", f.controllerName, "conditionDomain", f.conditionDomain,
		"ownedKinds", f.ownedKinds, "leaderElect", f.leaderElect)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running: %w", err)
	}
	log.Info("stopped")
	return nil
}

// serveWebhook adds the admission webhook: its state, its server and,
// with --webhook-cert-rotation, its certificates.
func serveWebhook(mgr manager.Manager, c *controller.Controller, f *flags) error {
	deny, err := controller.ParseKinds(f.admissionDeny)
	if err != nil {
		return fmt.Errorf("--admission-deny: %w", err)
	}
	a, err := c.Admission(controller.AdmissionOptions{Deny: deny, WebhookConfiguration: f.webhookConfig})
	if err != nil {
		return err
	}
	o := webhook.Options{Port: f.webhookPort, CertDir: f.webhookCertDir}
	if f.webhookRotation {
		o.Rotation = &webhook.Rotation{Secret: types.NamespacedName{Namespace: f.webhookNamespace, Name: f.webhookSecret},
			Service: f.webhookService, WebhookConfiguration: f.webhookConfig}
	}
	return webhook.Serve(mgr, a, a.Ready, o)
}

// clientConfig returns the configuration of the controller's clients: cfg
// when not nil (tests), else the --kubeconfig file, else in-cluster, then
// $KUBECONFIG, then ~/.kube/config; in every case with the client-side
// limits of --kube-api-qps and --kube-api-burst and the user agent.
func clientConfig(f *flags, cfg *rest.Config) (*rest.Config, error) {
	if cfg == nil {
		var err error
		if f.kubeconfig != "" {
			cfg, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
		} else {
			cfg, err = config.GetConfig()
		}
		if err != nil {
			return nil, fmt.Errorf("loading the cluster configuration: %w", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "attache-controller/" + rest.DefaultKubernetesUserAgent()
	cfg.QPS, cfg.Burst = float32(f.kubeAPIQPS), f.kubeAPIBurst
	if f.kubeAPIQPS < 0 {
		cfg.QPS = -1 // client-go: no client-side rate limiter
	}
	cfg.RateLimiter = nil // QPS and Burst, not a limiter from elsewhere
	return cfg, nil
}

// registerRuntimeCollectors adds the Go runtime and process collectors
// (go_*, process_*) to reg, the registry that the manager's /metrics
// serves, unless they are registered already: controller-runtime's
// controller package registers its own when linked (the webhook's
// certificate rotator links it).
func registerRuntimeCollectors(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			// controller-runtime's collectors carry more runtime
			// metrics: the descriptors clash, and theirs serve.
			if !errors.As(err, &already) && !strings.Contains(err.Error(), "already exists with the same fully-qualified name") {
				return err
			}
		}
	}
	return nil
}

// resyncOption maps the flag (0: never) to Options.ResyncPeriod (negative:
// never).
func resyncOption(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
