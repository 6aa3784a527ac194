// Package cluster is the live-cluster adapter in front of the engine: it
// discovers policy kinds from CRDs labelled gateway.networking.k8s.io/policy
// and lists the objects the engine needs, paginated, continuing past lists
// that RBAC forbids and saying which ones were skipped.
package cluster
