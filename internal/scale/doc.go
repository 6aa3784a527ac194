// Package scale holds the scale harness of issue 9: a build-tagged test
// (go test -tags scale, run through hack/scale.sh) that starts the real
// kube-apiserver and etcd, creates a generated topology and policies of a
// named size, runs the real attache-controller binary as its own process
// against it, and prints how long it takes to be ready and to converge,
// its peak memory, its write requests against the floor, the size of the
// EffectivePolicies and the latency of two policy edits.
//
// The harness measures; it asserts nothing about speed or memory, and it
// is not part of the normal test run (hack/test.sh does not pass the tag).
package scale
