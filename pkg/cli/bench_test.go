package cli

import (
	"bytes"
	"io"
	"testing"

	"github.com/attache-dev/attache/internal/gen"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
)

// benchReport is the report of `attache effective` over a generated
// topology whose JSON output is a few megabytes (~3.6 MB).
func benchReport(tb testing.TB) *report.Report {
	tb.Helper()
	p := gen.Params{Gateways: 2, ListenersPerGateway: 2, Routes: 100, Services: 100, Namespaces: 10, Seed: 1}
	var objs []engine.Object
	for _, u := range append(gen.Topology(p), gen.Policies(p, 50)...) {
		objs = append(objs, engine.Object{Object: u})
	}
	res := engine.Compute(objs, engine.Options{})
	if len(res.Problems) > 0 {
		tb.Fatalf("problems: %v", res.Problems[0])
	}
	return report.Build(res, engine.DefaultControllerName, nil)
}

// benchmarkWrite measures printing the report of `attache effective` in
// format (the computation is not timed: it is the same for both formats).
func benchmarkWrite(b *testing.B, format string) {
	rep := benchReport(b)
	var buf bytes.Buffer
	if err := write(&buf, rep, format); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if err := write(io.Discard, rep, format); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEffectiveJSON and BenchmarkEffectiveYAML compare the cost of
// `attache effective -o json` and `-o yaml` output.
func BenchmarkEffectiveJSON(b *testing.B) { benchmarkWrite(b, "json") }

// BenchmarkEffectiveYAML: see BenchmarkEffectiveJSON.
func BenchmarkEffectiveYAML(b *testing.B) { benchmarkWrite(b, "yaml") }
