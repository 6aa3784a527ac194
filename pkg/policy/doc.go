// Package policy reads policy kinds (from CRDs or Go descriptors) and policy
// instances (from unstructured objects) into validated, pure values: targets,
// stanza, merge strategy and spec proper. It does not resolve targets; the
// engine does that against the topology.
package policy
