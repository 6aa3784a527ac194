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
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
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
