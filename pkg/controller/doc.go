// Package controller runs the attache engine in a cluster, from informer
// caches, and writes GEP-713 status without flooding the API server.
//
// A Controller watches, through a controller-runtime manager's cache
// (unstructured informers), the CustomResourceDefinitions labelled
// gateway.networking.k8s.io/policy and the instances of those kinds (also
// of CRDs created after start: their informers are started on the fly),
// GatewayClasses, Gateways, the route kinds the cluster serves, Services,
// Namespaces and ReferenceGrants. Every relevant event schedules one
// coalesced recomputation: the engine runs over the cached objects (never
// fresh LISTs), the implementer's Program hook runs, and then
//
//   - the policies of the kinds the controller owns get their Accepted and
//     Programmed conditions and their status.ancestors entries under the
//     controller's name; conditions and entries of other controllers are kept;
//   - the objects they affect get the <domain>/<Kind>Affected condition
//     (Service, Namespace, Gateway, GatewayClass) or, for objects without
//     status.conditions (routes) or whose conditions are full (Gateway and
//     GatewayClass allow 8), the annotation of the same name.
//
// Writes are merge patches sent only when the content changed (conditions
// compared without lastTransitionTime, which is kept while the status is
// unchanged), with the resourceVersion as precondition and retried on
// conflict from a fresh read. Target writes go through their own
// rate-limited queue that yields to recomputation. The metrics
// attache_status_writes_total{kind}, attache_status_write_errors_total,
// attache_reconcile_duration_seconds and attache_queue_depth are registered
// on controller-runtime's metrics registry.
//
// Not implemented yet: EffectivePolicy objects (Options.EffectivePolicies),
// incremental recomputation (every event recomputes everything, from the
// cache), and listener-level conditions (an affected section is reported on
// its object).
package controller
