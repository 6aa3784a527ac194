package delegation

import (
	"reflect"
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func prefix(p string) Match { return Match{PathType: gwv1.PathMatchPathPrefix, Path: p} }

// Either implementation's annotation turns inheritance on, each with its
// own joins; kgateway's first when both are on.
func TestInheritanceOf(t *testing.T) {
	for v, on := range map[string]bool{"true": true, "Yes": true, "ENABLED": true, "false": false, "": false, "1": false} {
		for ann, kind := range map[string]Inheritance{InheritParentMatcher: KgatewayInheritance, GlooInheritParentMatcher: GlooInheritance} {
			want := NoInheritance
			if on {
				want = kind
			}
			if got := InheritanceOf(map[string]string{ann: v}); got != want {
				t.Errorf("%s=%q: %v, want %v", ann, v, got, want)
			}
		}
	}
	if InheritanceOf(nil) != NoInheritance {
		t.Error("no annotations: inherits")
	}
	if got := InheritanceOf(map[string]string{InheritParentMatcher: "true", GlooInheritParentMatcher: "true"}); got != KgatewayInheritance {
		t.Errorf("both: %v", got)
	}
	if got := InheritanceOf(map[string]string{InheritParentMatcher: "false", GlooInheritParentMatcher: "true"}); got != GlooInheritance {
		t.Errorf("kgateway's off, Gloo's on: %v", got)
	}
}

// Matches applies the API's defaults and keeps every header and query
// parameter match as written, names included: kgateway compares them so.
func TestMatches(t *testing.T) {
	if Matches(nil) != nil {
		t.Error("a rule without matches has matches")
	}
	exact, regex := gwv1.PathMatchExact, gwv1.HeaderMatchRegularExpression
	qregex := gwv1.QueryParamMatchRegularExpression
	v, get := "/a", gwv1.HTTPMethodGet
	got := Matches([]gwv1.HTTPRouteMatch{
		{},
		{Path: &gwv1.HTTPPathMatch{Type: &exact, Value: &v}, Method: &get,
			Headers:     []gwv1.HTTPHeaderMatch{{Name: "X-A", Value: "1"}, {Name: "x-a", Value: "2"}, {Name: "x-b", Value: "b.*", Type: &regex}},
			QueryParams: []gwv1.HTTPQueryParamMatch{{Name: "q", Value: "1", Type: &qregex}, {Name: "q", Value: "2"}, {Name: "Q", Value: "3"}}},
	})
	want := []Match{Default, {PathType: exact, Path: "/a", Method: "GET",
		Headers: []Value{{"X-A", "1", false}, {"x-a", "2", false}, {"x-b", "b.*", true}},
		Query:   []Value{{"q", "1", true}, {"q", "2", false}, {"Q", "3", false}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// RequestMatch lowers header names and keeps the first value match of
// each name (header names compared in any case, query parameter names as
// written), as the API says a request is matched; a match with nothing
// to change keeps its slices.
func TestRequestMatch(t *testing.T) {
	m := Match{PathType: gwv1.PathMatchPathPrefix, Path: "/",
		Headers: []Value{{"X-A", "1", false}, {"x-a", "2", false}, {"X-B", "b.*", true}},
		Query:   []Value{{"q", "1", true}, {"q", "2", false}, {"Q", "3", false}}}
	got := RequestMatch(m)
	want := Match{PathType: gwv1.PathMatchPathPrefix, Path: "/",
		Headers: []Value{{"x-a", "1", false}, {"x-b", "b.*", true}},
		Query:   []Value{{"q", "1", true}, {"Q", "3", false}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if m.Headers[0].Name != "X-A" {
		t.Error("RequestMatch changed its argument")
	}
	if got := RequestMatch(want); &got.Headers[0] != &want.Headers[0] || &got.Query[0] != &want.Query[0] {
		t.Error("a match already in request form was copied")
	}
}

func TestAdmits(t *testing.T) {
	hdr := func(m Match, vs ...Value) Match { m.Headers = vs; return m }
	qry := func(m Match, vs ...Value) Match { m.Query = vs; return m }
	meth := func(m Match, v string) Match { m.Method = v; return m }
	for _, c := range []struct {
		name   string
		p, c   Match
		admits bool
	}{
		{"prefix extended", prefix("/a"), prefix("/a/b"), true},
		{"same prefix", prefix("/a"), prefix("/a"), true},
		{"exact child under it", prefix("/a"), Match{PathType: gwv1.PathMatchExact, Path: "/a/x"}, true},
		{"not extended", prefix("/a"), prefix("/b"), false},
		{"parent exact", Match{PathType: gwv1.PathMatchExact, Path: "/a"}, prefix("/a"), false},
		{"method repeated", meth(prefix("/a"), "GET"), meth(prefix("/a/b"), "GET"), true},
		{"method missing", meth(prefix("/a"), "GET"), prefix("/a/b"), false},
		{"child method under none", prefix("/a"), meth(prefix("/a/b"), "GET"), true},
		{"headers included", hdr(prefix("/"), Value{"x", "1", false}), hdr(prefix("/b"), Value{"y", "2", false}, Value{"x", "1", false}), true},
		{"header value differs", hdr(prefix("/"), Value{"x", "1", false}), hdr(prefix("/b"), Value{"x", "2", false}), false},
		{"header type differs", hdr(prefix("/"), Value{"x", "1", false}), hdr(prefix("/b"), Value{"x", "1", true}), false},
		{"query included", qry(prefix("/"), Value{"q", "1", false}), qry(prefix("/b"), Value{"q", "1", false}), true},
		{"query missing", qry(prefix("/"), Value{"q", "1", false}), prefix("/b"), false},
		{"header name case differs", hdr(prefix("/"), Value{"X-Team", "a", false}), hdr(prefix("/b"), Value{"x-team", "a", false}), false},
		{"query name case differs", qry(prefix("/"), Value{"q", "1", false}), qry(prefix("/b"), Value{"Q", "1", false}), false},
		{"header repeated, the second equal", hdr(prefix("/"), Value{"x", "1", false}), hdr(prefix("/b"), Value{"x", "2", false}, Value{"x", "1", false}), true},
	} {
		if got := Admits(c.p, c.c); got != c.admits {
			t.Errorf("%s: %v, want %v", c.name, got, c.admits)
		}
	}
}

// Inherit joins as kgateway's mergeParentChildRouteMatch: the paths with
// path.Join (a parent Exact match too), the child's path type kept; the
// parent's header and query parameter matches winning a name both use
// (names as written), sorted by name; the parent's method. Joins kgateway
// makes a regular expression of are not modelled.
func TestInherit(t *testing.T) {
	p := Match{PathType: gwv1.PathMatchPathPrefix, Path: "/a", Method: "GET",
		Headers: []Value{{"x", "p", false}, {"b", "p", false}}, Query: []Value{{"q", "p", false}}}
	c := Match{PathType: gwv1.PathMatchExact, Path: "/b", Method: "POST",
		Headers: []Value{{"x", "c", false}, {"y", "c", false}, {"X", "c", false}}, Query: []Value{{"r", "c", true}}}
	got, ok := Inherit(p, c)
	want := Match{PathType: gwv1.PathMatchExact, Path: "/a/b", Method: "GET",
		Headers: []Value{{"X", "c", false}, {"b", "p", false}, {"x", "p", false}, {"y", "c", false}}, Query: []Value{{"q", "p", false}, {"r", "c", true}}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v %v\nwant %+v", got, ok, want)
	}
	p.Method = ""
	if got, _ := Inherit(p, c); got.Method != "POST" {
		t.Errorf("the child's method %q, want kept (the parent names none)", got.Method)
	}
	if got, ok := Inherit(Match{PathType: gwv1.PathMatchExact, Path: "/a/"}, prefix("x/")); !ok || !reflect.DeepEqual(got, prefix("/a/x")) {
		t.Errorf("below an Exact parent: %+v %v, want path prefix /a/x", got, ok)
	}
	regex := Match{PathType: gwv1.PathMatchRegularExpression, Path: "/b.*"}
	if _, ok := Inherit(p, regex); ok {
		t.Error("joined a regular expression child match")
	}
	if _, ok := Inherit(regex, c); ok {
		t.Error("joined to a regular expression parent match")
	}
}

// join keeps the last parent value match of a name (kgateway's map) and
// the first child one.
func TestJoinDuplicates(t *testing.T) {
	got := join([]Value{{"x", "1", false}, {"x", "2", false}}, []Value{{"y", "1", false}, {"y", "2", false}, {"x", "3", false}})
	if want := []Value{{"x", "2", false}, {"y", "1", false}}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if join(nil, nil) != nil {
		t.Error("joined nothing into something")
	}
}

// Admit keeps each admitted child match once, extends each child match by
// every parent match when inheriting, and reads a rule without matches as
// the API server stores it (PathPrefix /).
func TestAdmit(t *testing.T) {
	parents := []Match{prefix("/a"), prefix("/b"), prefix("/")}
	children := []Match{prefix("/b/x"), prefix("/c"), prefix("/a/y")}
	got := Admit(nil, parents, children, NoInheritance)
	want := []Admitted{{prefix("/b/x"), 1, 0, false}, {prefix("/c"), 2, 1, false}, {prefix("/a/y"), 0, 2, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("admitted %+v\nwant %+v", got, want)
	}
	if got := Admit(nil, parents[:2], children[1:2], NoInheritance); got != nil {
		t.Errorf("admitted %+v, want none", got)
	}
	// A rule without matches has the API's default, PathPrefix /: kept
	// below a parent prefix /, dropped below others.
	if got := Admit(nil, parents, nil, NoInheritance); !reflect.DeepEqual(got, []Admitted{{Default, 2, -1, false}}) {
		t.Errorf("a rule without matches: %+v, want the default kept below /", got)
	}
	if got := Admit(nil, parents[:2], nil, NoInheritance); got != nil {
		t.Errorf("a rule without matches below /a, /b: %+v, want dropped", got)
	}
	// Inheriting, every child match is joined to every parent match
	// (kgateway discards none); the joins attache does not model are
	// marked, the child's match in their place.
	exact := Match{PathType: gwv1.PathMatchExact, Path: "/e"}
	regex := Match{PathType: gwv1.PathMatchRegularExpression, Path: "/r.*"}
	got = Admit(nil, []Match{prefix("/a"), exact, regex}, []Match{prefix("/x"), regex}, KgatewayInheritance)
	want = []Admitted{{prefix("/a/x"), 0, 0, false}, {prefix("/e/x"), 1, 0, false}, {prefix("/x"), 2, 0, true},
		{regex, 0, 1, true}, {regex, 1, 1, true}, {regex, 2, 1, true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inheriting %+v\nwant %+v", got, want)
	}
	// A rule without matches takes each parent match, whatever its type.
	got = Admit(nil, []Match{prefix("/a"), exact, regex}, nil, KgatewayInheritance)
	want = []Admitted{{prefix("/a"), 0, -1, false}, {exact, 1, -1, false}, {regex, 2, -1, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inheriting without matches %+v\nwant %+v", got, want)
	}
	// Gloo joins every pair, as text: a regular expression on either side
	// too, the child's type kept.
	got = Admit(nil, []Match{prefix("/a"), regex}, []Match{prefix("/x"), regex}, GlooInheritance)
	want = []Admitted{{prefix("/a/x"), 0, 0, false}, {prefix("/r.*/x"), 1, 0, false},
		{Match{PathType: gwv1.PathMatchRegularExpression, Path: "/a/r.*"}, 0, 1, false}, {Match{PathType: gwv1.PathMatchRegularExpression, Path: "/r.*/r.*"}, 1, 1, false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inheriting as Gloo %+v\nwant %+v", got, want)
	}
	// Appended to dst, whose earlier content stays.
	dst := Admit(nil, parents[:1], children[2:], NoInheritance)
	if got := Admit(dst, parents[:1], children[2:], NoInheritance); len(got) != 2 || !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("appended %+v", got)
	}
}

// A parent match without headers shares no slice with what its inheriting
// children take of it.
func TestAdmitInheritNoneCopies(t *testing.T) {
	p := prefix("/a")
	p.Headers = []Value{{"x", "1", false}}
	got := Admit(nil, []Match{p}, nil, KgatewayInheritance)
	got[0].Match.Headers[0].Value = "changed"
	if p.Headers[0].Value != "1" {
		t.Error("the child's match shares the parent's headers")
	}
}

// Why names the closest miss (the first parent match of those that came
// as close).
func TestWhy(t *testing.T) {
	meth := prefix("/a")
	meth.Method = "GET"
	post := prefix("/b")
	post.Method = "POST"
	hdr := prefix("/a")
	hdr.Headers = []Value{{"x-team", "a", false}, {"x-re", "a.*", true}}
	qry := prefix("/a")
	qry.Query = []Value{{"q", "1", false}}
	exact := Match{PathType: gwv1.PathMatchExact, Path: "/a"}
	regex := Match{PathType: gwv1.PathMatchRegularExpression, Path: "/a.*"}
	for _, c := range []struct {
		name              string
		parents, children []Match
		inherit           Inheritance
		want              string
	}{
		{"admitted", []Match{prefix("/a")}, []Match{prefix("/a/b")}, NoInheritance, ""},
		{"path", []Match{prefix("/a")}, []Match{prefix("/b")}, NoInheritance, "its matches do not extend the parent rule's path prefix /a"},
		{"paths", []Match{prefix("/a"), prefix("/b"), prefix("/a")}, []Match{prefix("/c")}, NoInheritance, "its matches do not extend the parent rule's path prefixes /a, /b"},
		{"no matches", []Match{prefix("/a")}, nil, NoInheritance, "it has no matches (the API's default: every request, path prefix /), which do not extend the parent rule's path prefix /a"},
		{"no matches below /", []Match{prefix("/")}, nil, NoInheritance, ""},
		{"parent exact", []Match{exact}, []Match{prefix("/a")}, NoInheritance, "the parent rule's path match is Exact /a, and only a PathPrefix admits child matches"},
		{"parent exact and regex", []Match{exact, regex}, []Match{prefix("/a")}, NoInheritance, "the parent rule's path match is one of Exact /a, RegularExpression /a.*, and only a PathPrefix admits child matches"},
		{"method", []Match{meth}, []Match{prefix("/b"), prefix("/a/b")}, NoInheritance, "its matches under /a do not name the parent rule's method GET"},
		{"first of equals", []Match{meth, post}, []Match{prefix("/a/b"), prefix("/b/c")}, NoInheritance, "its matches under /a do not name the parent rule's method GET"},
		{"headers", []Match{hdr}, []Match{prefix("/a/b")}, NoInheritance, "its matches under /a do not repeat the parent rule's header matches x-team=a, x-re~a.*"},
		{"query", []Match{qry}, []Match{prefix("/a/b")}, NoInheritance, "its matches under /a do not repeat the parent rule's query parameter matches q=1"},
		{"inherit below Exact", []Match{exact}, nil, KgatewayInheritance, ""},
		{"inherit regex", []Match{prefix("/a")}, []Match{regex}, KgatewayInheritance, ""},
		{"header name case", []Match{hdr}, []Match{{PathType: gwv1.PathMatchPathPrefix, Path: "/a/b", Headers: []Value{{"X-Team", "a", false}, {"x-re", "a.*", true}}}}, NoInheritance,
			"its matches under /a do not repeat the parent rule's header matches x-team=a, x-re~a.*"},
		{"no parents", nil, []Match{prefix("/a")}, NoInheritance, "the parent rule is itself dropped"},
	} {
		if got := Why(c.parents, c.children, c.inherit); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}
