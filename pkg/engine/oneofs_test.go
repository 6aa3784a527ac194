package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
)

// A oneof declared by annotation on a kind of merge-disjoint policies is
// one field: of two policies at one target setting different members,
// the newer sets a field the older sets, and is rejected there; one
// setting another field merges.
func TestOneofMergeDisjointAnnotation(t *testing.T) {
	c := strings.Replace(crd("example.com", "RewritePolicy", "rewritepolicies"), "metadata: {name: rewritepolicies.example.com}", `metadata:
  name: rewritepolicies.example.com
  labels: {gateway.networking.k8s.io/policy: direct}
  annotations: {attache.dev/same-level: merge-disjoint, attache.dev/target-kinds: HTTPRoute, attache.dev/oneofs: "rewrite.host|autoHost"}`, 1)
	const v = "example.com/v1alpha1"
	res := compute(t, engine.Options{}, c, docsTopo,
		pol(v, "RewritePolicy", "a", 0, "targetRefs: ["+r1Ref+"]\nrewrite: {host: a.example}"),
		pol(v, "RewritePolicy", "b", 1, "targetRefs: ["+r1Ref+"]\nrewrite: {autoHost: true}"),
		pol(v, "RewritePolicy", "c", 2, "targetRefs: ["+r1Ref+"]\nrewrite: {path: /c}"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	want(t, "effective", effective(t, res, "RewritePolicy", rule("r1", "")), []string{`{"rewrite":{"host":"a.example","path":"/c"}}`})
	want(t, "b", status(t, res, "b", "Accepted"), "False/Conflicted")
	want(t, "c", status(t, res, "c", "Accepted"), "True/Accepted")
}
