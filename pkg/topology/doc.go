// Package topology holds the hierarchy DAG of targetable objects: Kubernetes
// objects, their named sections (listeners, route rules, Service ports) and
// virtual kinds, linked from the least specific (roots) to the most specific
// (leaves). It is pure: no I/O, no clients. Adapters (see package gatewayapi)
// fill a Builder from objects; the engine walks the resulting Graph.
package topology
