// Package engine computes, from Kubernetes objects, what GEP-713 asks a
// policy controller to compute: for every policy kind, the effective policy
// of every effective target in every context (path), with per-field
// provenance, and the status of every policy (Accepted, Programmed, per
// ancestor) and of what it affects (<Kind>Affected).
//
// It is pure and deterministic: no I/O, no clients, no clock. Adapters feed
// it objects (files, a cluster); sinks print or write its Result.
//
// Scaling: contexts are not enumerated path by path. A dynamic programme over
// the topology, in topological order, keeps at every node the distinct stacks
// of policies that reach it (interned in a trie), so a node with a thousand
// incoming paths that carry the same policies holds one state; each distinct
// stack is folded once, whatever the number of targets and paths sharing it.
// Paths are enumerated only on request, from back-pointers.
//
// Compute runs once over its input. Incremental keeps its state between
// computations, for a controller: a change of policies re-runs the
// programme only below the levels where they attach, folds again only the
// stacks holding those levels, and re-derives only the status of the
// policies sharing a context with them; its Results equal Compute's.
package engine
