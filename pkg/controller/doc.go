// Package controller runs the attache engine in a cluster, from informer
// caches, and writes GEP-713 status without flooding the API server.
//
// A Controller watches, through a controller-runtime manager's cache
// (unstructured informers), the CustomResourceDefinitions labelled
// gateway.networking.k8s.io/policy and the instances of those kinds (also
// of CRDs created after start: their informers are started on the fly),
// GatewayClasses, Gateways, ListenerSets, XListenerSets and the route kinds when the
// cluster serves them, Services, Namespaces and ReferenceGrants, and, for
// the policy kinds that read them, ConfigMaps and Secrets (their data keys;
// the implementations' configurations whole) and GatewayClass parameters
// (Envoy Gateway's EnvoyProxies, for which Gateways share a data plane;
// their spec.mergeGateways only). Every
// relevant event schedules one coalesced recomputation: the engine runs
// over the cached objects (never fresh LISTs), the implementer's Program
// hook runs, and then
//
//   - the policies of the kinds the controller owns get their Accepted and
//     Programmed conditions and their status.ancestors entries under the
//     controller's name; conditions and entries of other controllers are kept;
//   - the objects they affect get the <domain>/<Kind>Affected condition
//     (Service, Namespace, Gateway, ListenerSet, XListenerSet, GatewayClass)
//     or, for objects without status.conditions (routes) or whose
//     conditions are full (Gateway, the ListenerSets and GatewayClass allow
//     8), the annotation
//     of the same name.
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
// With Options.EffectivePolicies, every object affected by an owned kind
// also gets an EffectivePolicy object (GEP-713 v1.0.0's PolicyBinding) in
// its namespace, named <kind>.<name>, holding under the controller's name
// the policies affecting it and the effective spec per policy kind and
// context, each field with the policy that set it; entries of other
// controllers are kept, and the object is deleted with the last entry.
//
// Computations are incremental (engine.Incremental): an event that changes
// policies recomputes only the contexts below where they attach, and only
// the policies and objects the engine recomputed are compared with the
// cache and written; any other change recomputes everything. At start and
// on resync everything is recomputed and compared; after a failed write or
// Program, everything is compared.
//
// Not implemented: listener-level conditions (an affected section is
// reported on its object).
package controller
