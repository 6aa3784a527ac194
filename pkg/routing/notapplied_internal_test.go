package routing

import (
	"slices"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// pathKeys reads back the paths merge.JoinPath writes; keyed list items
// and malformed paths are refused.
func TestPathKeys(t *testing.T) {
	for _, keys := range [][]string{{"a"}, {"a", "b-c", "d_e"}, {"metadata", "a.b"}, {"x", "quote\"d", "y"}, {"sp ace"}} {
		path := ""
		for _, k := range keys {
			path = merge.JoinPath(path, k)
		}
		got, ok := pathKeys(path)
		if !ok || !slices.Equal(got, keys) {
			t.Errorf("pathKeys(%q) = %q, %v; want %q", path, got, ok, keys)
		}
	}
	for _, bad := range []string{"", "a.", ".a", "a..b", `headers[name=x].value`, `a["b"`, `a["b"]c`} {
		if got, ok := pathKeys(bad); ok {
			t.Errorf("pathKeys(%q) = %q, want refused", bad, got)
		}
	}
}

// specWithout removes the fields of the dropped attachment only, and the
// objects it leaves empty; the input is not changed.
func TestSpecWithout(t *testing.T) {
	p1 := &engine.Attachment{Policy: topology.Ref{Kind: "P", Name: "one"}}
	p2 := &engine.Attachment{Policy: topology.Ref{Kind: "P", Name: "two"}}
	spec := map[string]any{"a": map[string]any{"b": 1, "c": 2}, "d": map[string]any{"e": 3}}
	fields := []engine.FieldSource{{Path: "a.b", Attachment: p1}, {Path: "a.c", Attachment: p2}, {Path: "d.e", Attachment: p1}}
	got, ok := specWithout(spec, fields, map[engine.Attachment]bool{*p1: true})
	if !ok || len(got) != 1 || len(got["a"].(map[string]any)) != 1 || got["a"].(map[string]any)["c"] != 2 {
		t.Errorf("specWithout = %v, %v", got, ok)
	}
	if len(spec["a"].(map[string]any)) != 2 || spec["d"] == nil {
		t.Errorf("input changed: %v", spec)
	}
}

// FuzzPathKeys: pathKeys never panics, and the keys it reads, joined
// again, read back the same.
func FuzzPathKeys(f *testing.F) {
	for _, s := range []string{"a.b", `metadata["a.b"].c`, `x["q\"d"]`, "headers[name=x].value", `a["b"`, "..", "[", `[""]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		keys, ok := pathKeys(path)
		if !ok {
			return
		}
		joined := ""
		for _, k := range keys {
			joined = merge.JoinPath(joined, k)
		}
		again, ok := pathKeys(joined)
		if !ok || !slices.Equal(again, keys) {
			t.Errorf("pathKeys(%q) = %q; joined %q reads %q, %v", path, keys, joined, again, ok)
		}
	})
}
