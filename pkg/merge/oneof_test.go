package merge

import (
	"slices"
	"testing"
)

// Oneofs (Schema.WithOneof): the member the winning side of a patch sets
// takes the oneof whole; the losing side's other members are removed and
// lost to it.
func TestFoldOneofs(t *testing.T) {
	root := (*Schema)(nil).WithOneof(".", "a", "b")
	// Gloo Gateway's RouteOption: options are named rules, hostRewriteType
	// a oneof among them.
	gloo := (*Schema)(nil).WithAtomicEntries("options").
		WithOneof("options", "hostRewrite", "autoHostRewrite", "hostRewritePathRegex")
	items := testSchema(t).WithOneof("rules[]", "filters", "other")
	for _, c := range []foldCase{
		{
			name:   "at the root: the challenger's member beats the established one's other member",
			schema: root,
			stack: []tl{
				{1, pd, `{"a":1,"c":5}`, nil},
				{2, ad, `{"b":{"x":1}}`, nil},
			},
			want:   `{"b":{"x":1},"c":5}`,
			leaves: map[string]Src{"b.x": 2, "c": 1},
			losses: []Loss{loss(1, "a", 2)},
		},
		{
			name:   "an override's member beats the challenger's other member",
			schema: root,
			stack: []tl{
				{1, po, `{"a":1}`, nil},
				{2, ad, `{"b":2,"c":3}`, nil},
			},
			want:   `{"a":1,"c":3}`,
			leaves: map[string]Src{"a": 1, "c": 2},
			losses: []Loss{loss(2, "b", 1)},
		},
		{
			name:   "nested, among named rules: every leaf of the member removed is lost",
			schema: gloo,
			stack: []tl{
				{1, pd, `{"options":{"hostRewritePathRegex":{"pattern":{"regex":"x"},"substitution":"y"},"timeout":"5s"}}`, nil},
				{2, ad, `{"options":{"autoHostRewrite":true}}`, nil},
			},
			want:   `{"options":{"autoHostRewrite":true,"timeout":"5s"}}`,
			leaves: map[string]Src{"options.autoHostRewrite": 2, "options.timeout": 1},
			losses: []Loss{loss(1, "options.hostRewritePathRegex.pattern.regex", 2), loss(1, "options.hostRewritePathRegex.substitution", 2)},
		},
		{
			name:   "three layers: the most specific member wins, the others lost to it",
			schema: gloo,
			stack: []tl{
				{1, pd, `{"options":{"hostRewrite":"a.example"}}`, nil},
				{2, pd, `{"options":{"hostRewritePathRegex":{"substitution":"y"}}}`, nil},
				{3, ad, `{"options":{"autoHostRewrite":false}}`, nil},
			},
			want:   `{"options":{"autoHostRewrite":false}}`,
			leaves: map[string]Src{"options.autoHostRewrite": 3},
			losses: []Loss{loss(1, "options.hostRewrite", 3), loss(2, "options.hostRewritePathRegex.substitution", 3)},
		},
		{
			name:   "the same member on both sides merges as without the oneof",
			schema: root,
			stack: []tl{
				{1, pd, `{"b":{"x":1}}`, nil},
				{2, ad, `{"b":{"y":2}}`, nil},
			},
			want:   `{"b":{"x":1,"y":2}}`,
			leaves: map[string]Src{"b.x": 1, "b.y": 2},
		},
		{
			name:   "an empty object sets its member",
			schema: root,
			stack: []tl{
				{1, pd, `{"a":1}`, nil},
				{2, ad, `{"b":{}}`, nil},
			},
			want:   `{"b":{}}`,
			leaves: map[string]Src{"b": 2},
			losses: []Loss{loss(1, "a", 2)},
		},
		{
			name:   "a null member of the winner sets nothing: the other member stays",
			schema: root,
			stack: []tl{
				{1, pd, `{"b":1}`, nil},
				{2, ad, `{"a":null}`, nil},
			},
			want:   `{"b":1}`,
			leaves: map[string]Src{"b": 1},
		},
		{
			name:   "a null member of the loser stays a deletion marker",
			schema: root,
			stack: []tl{
				{1, pd, `{"b":5}`, nil},
				{2, po, `{"a":1}`, nil},
				{3, ad, `{"b":null}`, nil},
			},
			// 2's a takes the oneof over 3's null b, which still deletes
			// 1's b as a merge patch does.
			want:   `{"a":1}`,
			leaves: map[string]Src{"a": 2},
			losses: []Loss{loss(1, "b", 3)},
		},
		{
			name:   "in the items of a list-map",
			schema: items,
			stack: []tl{
				{1, pd, `{"rules":[{"name":"r","other":1},{"name":"s","other":2}]}`, nil},
				{2, ad, `{"rules":[{"name":"r","filters":[{"type":"t"}]}]}`, nil},
			},
			want: `{"rules":[{"name":"r","filters":[{"type":"t"}]},{"name":"s","other":2}]}`,
			leaves: map[string]Src{"rules[name=r].name": 2, "rules[name=r].filters[type=t].type": 2,
				"rules[name=s].name": 1, "rules[name=s].other": 1},
			losses: []Loss{loss(1, "rules[name=r].name", 2), loss(1, "rules[name=r].other", 2)},
		},
		{
			name:   "without the oneof both members stay",
			schema: (*Schema)(nil).WithAtomicEntries("options"),
			stack: []tl{
				{1, pd, `{"options":{"hostRewrite":"a.example"}}`, nil},
				{2, ad, `{"options":{"autoHostRewrite":true}}`, nil},
			},
			want:   `{"options":{"autoHostRewrite":true,"hostRewrite":"a.example"}}`,
			leaves: map[string]Src{"options.autoHostRewrite": 2, "options.hostRewrite": 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) { runFoldCase(t, c) })
	}
}

func TestWithOneof(t *testing.T) {
	base := (*Schema)(nil).WithAtomicEntries("options")
	s := base.WithOneof("options", "a", "b").WithOneof("options", "c", "d", "e").WithOneof("", "x", "y").WithOneof("l[].m", "p", "q")
	if got, want := s.String(), "oneof(x|y){l:[{m:oneof(p|q)}] options:entriesoneof(a|b)oneof(c|d|e)}"; got != want {
		t.Errorf("WithOneof = %s, want %s", got, want)
	}
	if got := base.String(); got != "{options:entries}" {
		t.Errorf("WithOneof changed its receiver: %s", got)
	}
	// Nothing to add: fewer than two members, an empty or repeated one, a
	// member of another oneof there.
	for _, members := range [][]string{nil, {"a"}, {"a", ""}, {"f", "f"}, {"b", "f"}} {
		if got, want := s.WithOneof("options", members...).String(), s.String(); got != want {
			t.Errorf("WithOneof(options, %q) = %s, want %s", members, got, want)
		}
	}
	if s.plain() || (*Schema)(nil).WithOneof(".", "a", "b").plain() {
		t.Error("a node with a oneof is plain")
	}
}

func TestFieldPaths(t *testing.T) {
	v := mustJSON(t, `{"options":{"hostRewritePathRegex":{"pattern":{"regex":"x"},"substitution":"y"},"hostRewrite":"h","timeout":"5s","jwt":null},
		"rules":[{"name":"r","other":{}}],"e":{}}`)
	tr := FromValue(v, 1)
	var leaves []string
	for _, l := range tr.Leaves() {
		leaves = append(leaves, l.Path)
	}
	if got := tr.FieldPaths(nil); !slices.Equal(got, leaves) {
		t.Errorf("FieldPaths(nil) = %q, want the leaves %q", got, leaves)
	}
	s := testSchema(t).WithOneof("options", "hostRewrite", "hostRewritePathRegex").WithOneof("options", "jwt", "jwtStaged").
		WithOneof("rules[]", "filters", "other")
	want := []string{"e", `options.timeout`, `options["hostRewrite|hostRewritePathRegex"]`, `rules[name=r].name`, `rules[name=r]["filters|other"]`}
	slices.Sort(want)
	if got := FromValueWith(v, 1, s).FieldPaths(s); !slices.Equal(got, want) {
		t.Errorf("FieldPaths = %q, want %q", got, want)
	}
}
