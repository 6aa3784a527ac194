package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The webhook's metrics, on controller-runtime's registry (the manager's
// metrics endpoint serves them), by kind of the object reviewed
// (Kind or Kind.group).
var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_webhook_requests_total",
		Help: "Admission requests answered, by kind of the object, operation (CREATE, UPDATE, DELETE) and result (allowed, denied).",
	}, []string{"kind", "operation", "result"})
	warnings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_webhook_warnings_total",
		Help: "Warning lines returned in admission responses, by kind of the object.",
	}, []string{"kind"})
	denials = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_webhook_denials_total",
		Help: "Admission requests denied (prevention on for the kind), by kind of the object.",
	}, []string{"kind"})
	latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "attache_webhook_duration_seconds",
		Help:    "Time to answer one admission request (decoding, engine lookup or what-if, wording), by kind of the object.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"kind"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(requests, warnings, denials, latency)
}
