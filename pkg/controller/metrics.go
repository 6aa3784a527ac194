package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics are registered once, on controller-runtime's registry, so that the
// manager's metrics endpoint serves them. They are process-wide: several
// controllers in one process (as in tests) add to the same series.
var (
	// statusWrites counts write requests that changed an object: a policy's
	// status, a target's status conditions or a target's annotations.
	statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_status_writes_total",
		Help: "Write requests (status and annotation patches) that the controller sent and the API server accepted, by kind of the written object (Kind or Kind.group).",
	}, []string{"kind"})

	// statusWriteErrors counts write requests that failed, conflicts included.
	statusWriteErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_status_write_errors_total",
		Help: "Write requests that failed, by kind of the object and reason (Conflict, NotFound, Invalid, Forbidden, Other).",
	}, []string{"kind", "reason"})

	// reconcileDuration times one recomputation: reading the cache, the
	// engine, the Program hook and the policy status writes.
	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "attache_reconcile_duration_seconds",
		Help:    "Duration of one recomputation: building the input from the informer cache, the engine, the Program hook and the policy status writes.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"controller", "result"})

	// writesThrottled counts writes that waited for the write budget.
	writesThrottled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_write_throttled_total",
		Help: "Writes that waited for the write budget (--write-qps, --write-burst) before being sent.",
	}, []string{"controller"})

	// writeThrottleSeconds sums the time writes waited for the budget.
	writeThrottleSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "attache_write_throttle_seconds_total",
		Help: "Seconds writes waited for the write budget (--write-qps, --write-burst), summed over writes.",
	}, []string{"controller"})

	// queueDepth is the length of the controller's work queues.
	queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "attache_queue_depth",
		Help: "Items waiting in the controller's queues: recompute (at most 2: recompute and policy status check) and targets (target objects whose Affected condition or annotation must be written).",
	}, []string{"controller", "queue"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(statusWrites, statusWriteErrors, reconcileDuration, queueDepth, writesThrottled, writeThrottleSeconds)
}
