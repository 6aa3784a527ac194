// Package conformance runs attache's conformance suite: one folder per case
// under testdata/, each with manifests and an expected.yaml stating the
// outcome (effective specs per path, provenance, Affected sets, policy
// status, errors). See README.md in this folder for the format.
package conformance
