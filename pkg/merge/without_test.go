package merge

import (
	"reflect"
	"testing"
)

// Without leaves out what the dropped sources set below a path, and their
// losses there: a field of a more specific source stays, with its losses;
// an object emptied goes; outside the path nothing changes; r itself is
// left as it was.
func TestResultWithout(t *testing.T) {
	s := listenerSchema(t)
	c := foldCase{stack: []tl{
		{1, pd, `{"default":{"validation":{"ca":["a"]},"buffer":1},"other":{"validation":1}}`, nil},
		{2, pd, `{"default":{"validation":{"ca":["b"]},"buffer":2}}`, nil},
		{3, pd, `{"default":{"tracing":{"x":3}}}`, nil},
	}, schema: s}
	r := c.stackCase(t).fold()
	before := jsonOf(r.Tree.Value())
	leaves := func(r Result) map[string]Src {
		out := map[string]Src{}
		for _, l := range r.Tree.Leaves() {
			out[l.Path] = l.Src
		}
		return out
	}
	dropLow := func(s Src) bool { return s < 3 }
	got := r.Without([]string{"default", "validation"}, dropLow)
	want(t, "leaves", leaves(got), map[string]Src{"default.buffer": 2, "default.tracing.x": 3, "other.validation": 1})
	want(t, "losses", got.Losses, []Loss{loss(1, "default.buffer", 2)})
	want(t, "r unchanged", jsonOf(r.Tree.Value()), before)
	// Only what source 2 set: source 1's value lost to it, and stays lost.
	got = r.Without([]string{"default", "validation"}, func(s Src) bool { return s == 2 })
	want(t, "leaves dropping 2", leaves(got), map[string]Src{"default.buffer": 2, "default.tracing.x": 3, "other.validation": 1})
	want(t, "losses dropping 2", got.Losses, []Loss{loss(1, "default.buffer", 2), loss(1, "default.validation.ca", 2)})
	// Everything of default dropped: the emptied object goes too.
	got = r.Without([]string{"default"}, func(Src) bool { return true })
	want(t, "default dropped", jsonOf(got.Tree.Value()), `{"other":{"validation":1}}`)
	// A path that is not there, or under a scalar: r itself.
	if got := r.Without([]string{"default", "buffer", "x"}, dropLow); !reflect.DeepEqual(got, r) {
		t.Errorf("under a scalar: %s", jsonOf(got.Tree.Value()))
	}
	if got := r.Without([]string{"none"}, dropLow); !reflect.DeepEqual(got, r) {
		t.Errorf("missing path: %s", jsonOf(got.Tree.Value()))
	}
}

func want(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
