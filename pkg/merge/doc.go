// Package merge implements GEP-713's merge strategies over spec propers and
// folds a stack of policies into an effective policy, keeping per-field
// provenance: which policy set every leaf field of the result, and which
// fields each policy lost and to whom.
//
// Values are JSON values as decoded by encoding/json or unstructured (maps,
// slices, strings, float64/int64, bools, nil). The patch strategies follow
// RFC 7386 (JSON Merge Patch): objects merge key by key, lists and scalars are
// replaced whole, null deletes. While folding, the accumulated result is
// itself a merge patch: a null set by a more specific policy keeps deleting
// the inherited value all the way up the stack, and nulls are removed only
// from the final effective spec. Each single step agrees with
// github.com/evanphx/json-patch's MergePatch, which the tests use as the
// oracle (up to that library's one inconsistency about nulls inside lists,
// see Tree.Value); the package keeps its own tree because that library cannot carry
// provenance through a merge.
//
// Under a Schema (FoldWith), the patch strategies also merge as a CRD's
// OpenAPI schema says (GEP-2649's listMapType, server-side apply's merge):
// lists marked x-kubernetes-list-type map merge item by item, matched on
// their x-kubernetes-list-map-keys, the patch's item patching the target's;
// sets merge as unions; x-kubernetes-map-type atomic objects and the
// entries of named-rule maps (WithAtomicEntries, Kuadrant's strategy:
// merge) are replaced whole; the members of a oneof (WithOneof, protobuf
// oneofs as Gloo Gateway merges them) merge as one field, the winning
// side's member removing the losing side's others. The items of keyed lists carry their own
// provenance, at paths such as headers[name=x-foo].value (see Leaves and
// KeyText). Values agree with sigs.k8s.io/structured-merge-diff's merge, the
// tests' oracle, except that null deletes here (as in RFC 7386) and that
// data the schema rejects (an item lacking a key, duplicate keys) makes the
// list atomic for that merge instead of an error.
package merge
