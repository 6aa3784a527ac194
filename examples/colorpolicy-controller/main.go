// Command colorpolicy-controller is a small implementer's controller built on
// github.com/attache-dev/attache/pkg/controller: it implements GEP-713's
// ColorPolicy. The library watches the cluster, computes the effective
// colours of every Service and writes the policies' status and the
// colors.example.com/ColorPolicyAffected conditions; this program only adds
// the Program hook, which "programs a data plane" by rendering each
// Service's effective colours into a ConfigMap named effective-colors in the
// Service's namespace (one key per Service).
//
// See README.md for how to run it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/attache-dev/attache/pkg/controller"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// The identity of this implementation (GEP-713 "Status needs to be
// namespaced by implementation").
const (
	ControllerName  = "colors.example.com/colorpolicy-controller"
	ConditionDomain = "colors.example.com"
)

// ConfigMapName is the ConfigMap, in each Service's namespace, holding the
// effective colours: the stand-in for a data plane's configuration.
const ConfigMapName = "effective-colors"

// managedLabel marks the ConfigMaps this program writes; the cache only
// holds those.
var managedLabel = map[string]string{"app.kubernetes.io/managed-by": "colorpolicy-controller"}

// ColorPolicy is the policy kind this program implements.
var ColorPolicy = topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)")
	metrics := flag.String("metrics-bind-address", "0", "address of the metrics endpoint (0: off)")
	probes := flag.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz (0: off)")
	flag.Parse()
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	ctrllog.SetLogger(log)
	cfg, err := loadConfig(*kubeconfig)
	if err == nil {
		err = run(signals.SetupSignalHandler(), cfg, log, *metrics, *probes)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "colorpolicy-controller:", err)
		os.Exit(1)
	}
}

func loadConfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return config.GetConfig()
}

// run builds the manager and the controller and runs them until ctx is done.
func run(ctx context.Context, cfg *rest.Config, log logr.Logger, metricsAddr, probeAddr string) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		Cache: controller.CacheOptions(cache.Options{ByObject: map[client.Object]cache.ByObject{
			// Only our ConfigMaps, not every ConfigMap of the cluster.
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(managedLabel)},
		}}),
	})
	if err != nil {
		return err
	}
	c, err := setup(mgr)
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("controller", c.ReadyCheck); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// setup registers the ColorPolicy kind from Go and the controller with its
// Program hook.
func setup(mgr manager.Manager) (*controller.Controller, error) {
	// Registering the kind from Go fixes its semantics in the program: the
	// CRD's attache.dev/* annotations, if any, are not read.
	kind, err := policy.NewKind(policy.Spec{
		GroupKind:            ColorPolicy,
		Class:                policy.Inherited,
		TargetKinds:          []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute},
		Hierarchy:            []topology.GroupKind{topology.KindGateway, topology.KindHTTPRoute, topology.KindService},
		EffectiveTargetKinds: []topology.GroupKind{topology.KindService},
	})
	if err != nil {
		return nil, err
	}
	p := &programmer{client: mgr.GetClient(), fresh: mgr.GetAPIReader()}
	return controller.New(mgr, controller.Options{
		ControllerName:  ControllerName,
		ConditionDomain: ConditionDomain,
		OwnedKinds:      []topology.GroupKind{ColorPolicy},
		Kinds:           []*policy.Kind{kind},
		Program:         p.program,
	})
}

// programmer renders effective colours into ConfigMaps.
type programmer struct {
	client client.Client // reads from the cache, writes to the API server
	fresh  client.Reader // reads from the API server, after a conflict
}

// colors is one context of a Service: the paths that reach it and the
// effective spec there.
type colors struct {
	Paths []string       `json:"paths"`
	Spec  map[string]any `json:"spec"`
}

// program is the Program hook: it renders, per namespace, every affected
// Service's effective ColorPolicy specs, and writes the ConfigMaps that
// changed. Namespaces where nothing is affected any more get an empty one.
func (p *programmer) program(ctx context.Context, res *engine.Result) error {
	byNS := map[string]map[string]string{}
	for _, eff := range res.Effective {
		if eff.Kind.GroupKind != ColorPolicy || eff.Target.GroupKind() != topology.KindService {
			continue
		}
		var ctxs []colors
		for _, c := range eff.Contexts {
			if len(c.Stack) == 0 {
				continue // no ColorPolicy on these paths
			}
			var paths []string
			c.Paths(func(path []topology.Ref) bool {
				parts := make([]string, len(path))
				for i, r := range path {
					parts[i] = r.Short()
				}
				paths = append(paths, strings.Join(parts, " > "))
				return true
			})
			sort.Strings(paths)
			ctxs = append(ctxs, colors{Paths: paths, Spec: c.Spec})
		}
		if len(ctxs) == 0 {
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep the paths' ">" readable
		enc.SetIndent("", "  ")
		if err := enc.Encode(ctxs); err != nil {
			return err
		}
		if byNS[eff.Target.Namespace] == nil {
			byNS[eff.Target.Namespace] = map[string]string{}
		}
		byNS[eff.Target.Namespace][eff.Target.Name] = buf.String()
	}
	// Namespaces that had a ConfigMap: emptied when nothing is left.
	var existing corev1.ConfigMapList
	if err := p.client.List(ctx, &existing, client.MatchingLabels(managedLabel)); err != nil {
		return err
	}
	for _, cm := range existing.Items {
		if cm.Name == ConfigMapName && byNS[cm.Namespace] == nil {
			byNS[cm.Namespace] = map[string]string{}
		}
	}
	var errs []error
	for ns, data := range byNS {
		if err := p.write(ctx, ns, data); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}

// write creates or updates one namespace's ConfigMap when its data changed.
// It reads the cache first; after a conflict (the cache had not seen our
// last write yet) it reads the API server.
func (p *programmer) write(ctx context.Context, ns string, data map[string]string) error {
	var reader client.Reader = p.client
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		defer func() { reader = p.fresh }()
		var cm corev1.ConfigMap
		err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: ConfigMapName}, &cm)
		if apierrors.IsNotFound(err) {
			if len(data) == 0 {
				return nil
			}
			cm = corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ConfigMapName, Labels: managedLabel},
				Data:       data,
			}
			err = p.client.Create(ctx, &cm)
			if apierrors.IsAlreadyExists(err) {
				return apierrors.NewConflict(corev1.Resource("configmaps"), ConfigMapName, err)
			}
			return err
		}
		if err != nil {
			return err
		}
		if equalData(cm.Data, data) {
			return nil // programmed already: no write
		}
		cm.Data = data
		return p.client.Update(ctx, &cm)
	})
}

func equalData(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}
