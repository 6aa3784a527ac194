package engine_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
)

// FuzzCompute feeds arbitrary manifests through what attache effective
// does: decoding, the engine, the report and its JSON. Whatever the input,
// nothing may panic (an invalid object is reported, never fatal), and the
// same input must give the same bytes.
func FuzzCompute(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/gep-713/*/manifests.yaml")
	more, _ := filepath.Glob("../../conformance/testdata/*/manifests.yaml")
	// Issue 8's profiles: Istio's untargeted policies, Envoy Gateway's
	// shared listener ports.
	more = append(more, "../cli/testdata/istio-untargeted.yaml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clienttrafficpolicies.gateway.envoyproxy.io}
spec: {group: gateway.envoyproxy.io, scope: Namespaced, names: {kind: ClientTrafficPolicy, plural: clienttrafficpolicies}, versions: [{name: v1alpha1, served: true, storage: true}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: d}
spec: {gatewayClassName: eg, allowedListeners: {namespaces: {from: Same}}, listeners: [{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 80, hostname: b.example}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: d}
spec: {parentRef: {name: g}, listeners: [{name: c, protocol: HTTP, port: 80, hostname: c.example}]}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: p, namespace: d}
spec: {targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}, {group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: a}]}
`))
	f.Fuzz(func(t *testing.T, in []byte) {
		run := func() []byte {
			objs, probs := manifest.Decode(bytes.NewReader(in), "in")
			rep := report.Build(engine.Compute(objs, engine.Options{}), "", probs)
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatalf("the report does not marshal: %v", err)
			}
			return b
		}
		if a, b := run(), run(); !bytes.Equal(a, b) {
			t.Fatalf("two runs over the same input differ:\n%s\n%s", a, b)
		}
	})
}
