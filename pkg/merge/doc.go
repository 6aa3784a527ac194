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
package merge
