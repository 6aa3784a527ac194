package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: %s}\n"

func TestDecodeKeepsGoingPastBadDocuments(t *testing.T) {
	in := strings.Join([]string{
		"# a comment only\n",
		strings.Replace(svc, "%s", "a", 1),
		"kind: [unclosed\n",                     // not YAML
		"apiVersion: v1\nmetadata: {name: x}\n", // no kind
		strings.Replace(svc, "%s", "b", 1),
		`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}}]}`,
	}, "---\n")
	objs, probs := Decode(strings.NewReader(in), "in.yaml")
	var names []string
	for _, o := range objs {
		names = append(names, o.Object.GetName()+"@"+o.Source)
	}
	if got := strings.Join(names, " "); got != "a@in.yaml#1 b@in.yaml#4 c@in.yaml#5.items[0]" {
		t.Errorf("objects: %s", got)
	}
	if len(probs) != 2 {
		t.Fatalf("got %d problems, want 2: %v", len(probs), probs)
	}
	if probs[0].Source != "in.yaml#2" || !strings.Contains(probs[0].Message, "not valid YAML") {
		t.Errorf("first problem %+v", probs[0])
	}
	if probs[1].Source != "in.yaml#3" || !strings.Contains(probs[1].Message, "it has no kind") {
		t.Errorf("second problem %+v", probs[1])
	}
}

func TestReadFoldersFilesAndStdin(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) { writeFile(t, dir, rel, content) }
	write("b/two.yml", strings.Replace(svc, "%s", "two", 1))
	write("a/one.yaml", strings.Replace(svc, "%s", "one", 1))
	write("a/notes.txt", "not read")
	write("three.json", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"three"}}`)
	objs, probs, err := Read([]string{dir, "-"}, strings.NewReader(strings.Replace(svc, "%s", "four", 1)))
	if err != nil || len(probs) != 0 {
		t.Fatalf("err %v, problems %v", err, probs)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Object.GetName())
	}
	// Folders are walked in lexical order; stdin comes where "-" is.
	if got := strings.Join(names, ","); got != "one,two,three,four" {
		t.Errorf("order %s", got)
	}
}

func TestReadReportsUnreadablePathsAndContinues(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(strings.Replace(svc, "%s", "ok", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	objs, _, err := Read([]string{missing, good}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot read "+missing+": no such file or directory") {
		t.Errorf("error %v", err)
	}
	if len(objs) != 1 || objs[0].Object.GetName() != "ok" {
		t.Errorf("the readable file must still be read: %v", objs)
	}
}

// A JSON stream (objects one after another, as jq -c writes them) used to be
// read as YAML, which kept the first object and silently dropped the rest.
func TestDecodeJSONStreamsAndArrays(t *testing.T) {
	obj := func(name string) string {
		return `{"apiVersion":"v1","kind":"Service","metadata":{"name":"` + name + `"}}`
	}
	cases := []struct {
		name, in  string
		want      string // name@source of every object read
		wantProbs []string
	}{
		{"stream", obj("a") + "\n" + obj("b") + obj("c"), "a@in#1 b@in#2 c@in#3", nil},
		{"stream then YAML document", obj("a") + " " + obj("b") + "\n---\n" + strings.Replace(svc, "%s", "c", 1), "a@in#1 b@in#2 c@in#3", nil},
		{"JSON array", "[" + obj("a") + "," + obj("b") + "]", "a@in#1[0] b@in#1[1]", nil},
		{"YAML sequence", "- " + obj("a") + "\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n", "a@in#1[0] b@in#1[1]", nil},
		{"YAML flow mapping is not JSON", "{apiVersion: v1, kind: Service, metadata: {name: a}}", "a@in#1", nil},
		{"broken value after good ones", obj("a") + obj("b") + `{"apiVersion": "v1", "kind": `, "a@in#1 b@in#2", []string{"in#3: not valid JSON"}},
		{"array with a bad item", "[" + obj("a") + `, {"metadata": {}}, 3]`, "a@in#1[0]", []string{"in#1[1]: not a Kubernetes object", "in#1[2]: not a Kubernetes object"}},
		// What is missing is named, and the document is not quoted whole.
		{"no kind", `{"affected": {"s1": ["good"]}, "effective": {}}`, "", []string{"in#1: not a Kubernetes object: it has no kind; it is skipped (give it apiVersion and kind, or leave the file out of -f)"}},
		{"no apiVersion", `{"kind": "Service", "metadata": {"name": "a"}}`, "", []string{"in#1: not a Kubernetes object: it has no apiVersion"}},
		{"a scalar", `"just a string"`, "", []string{"in#1: not a Kubernetes object: a document must be a mapping with apiVersion and kind"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, probs := Decode(strings.NewReader(tc.in), "in")
			var got []string
			for _, o := range objs {
				got = append(got, o.Object.GetName()+"@"+o.Source)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("objects %q, want %q", strings.Join(got, " "), tc.want)
			}
			if len(probs) != len(tc.wantProbs) {
				t.Fatalf("problems %v, want %v", probs, tc.wantProbs)
			}
			for i, p := range probs {
				if !strings.Contains(p.Error(), tc.wantProbs[i]) {
					t.Errorf("problem %q does not contain %q", p.Error(), tc.wantProbs[i])
				}
			}
		})
	}
}

// A file named twice (again, inside a folder also given, as ./f, by its
// absolute path, or through a symbolic link) is read once: its objects
// used to come twice, and the engine reported each as a duplicate of
// itself. The same object in two different files is still read twice (a
// real duplicate, for the engine to report).
func TestReadNamesTheSameFileOnce(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, content := range map[string]string{
		"f.yaml":      strings.Replace(svc, "%s", "f", 1),
		"sub/g.yaml":  strings.Replace(svc, "%s", "g", 1),
		"copy/f.yaml": strings.Replace(svc, "%s", "f", 1),
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("f.yaml", "link.yml"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", "sublink"); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "f.yaml")
	for _, tc := range []struct {
		paths []string
		want  string // name@source of each object read
	}{
		{[]string{"f.yaml", "f.yaml"}, "f@f.yaml#1"},
		{[]string{"f.yaml", "./f.yaml", abs, "sub/../f.yaml"}, "f@f.yaml#1"},
		{[]string{"f.yaml", "link.yml"}, "f@f.yaml#1"},
		{[]string{"link.yml", "f.yaml"}, "f@link.yml#1"},
		{[]string{"sub/g.yaml", "sublink/g.yaml"}, "g@sub/g.yaml#1"},
		// A folder holding a file already read, and the reverse; the walk
		// does not follow the symbolic link to a folder, and reads
		// link.yml (the same file as f.yaml) once.
		{[]string{"f.yaml", "."}, "f@f.yaml#1 f@copy/f.yaml#1 g@sub/g.yaml#1"},
		{[]string{".", "f.yaml", "sub"}, "f@copy/f.yaml#1 f@f.yaml#1 g@sub/g.yaml#1"},
		// Two different files with the same object: both are read.
		{[]string{"f.yaml", "copy/f.yaml"}, "f@f.yaml#1 f@copy/f.yaml#1"},
	} {
		objs, probs, err := Read(tc.paths, nil)
		if err != nil || len(probs) > 0 {
			t.Fatalf("%v: err %v, problems %v", tc.paths, err, probs)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Object.GetName()+"@"+o.Source)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("Read(%q): got %s, want %s", tc.paths, g, tc.want)
		}
	}
}

// An object whose namespace is no namespace name (a template's
// placeholder never filled in) is read as written, with a problem naming
// it and the field; a valid namespace, or none, says nothing.
func TestReadNamespaceNotAName(t *testing.T) {
	const docs = `apiVersion: v1
kind: Service
metadata: {name: a, namespace: "${APP_NAMESPACE}"}
---
apiVersion: v1
kind: Service
metadata: {name: b, namespace: Team_A}
---
apiVersion: v1
kind: Service
metadata: {name: c, namespace: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
`
	objs, probs, err := Read([]string{"-"}, strings.NewReader(docs))
	if err != nil || len(objs) != 4 {
		t.Fatalf("%d objects, %v; want all 4 read", len(objs), err)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.Error())
	}
	if len(got) != 2 || !strings.Contains(got[0], `Service ${APP_NAMESPACE}/a: metadata.namespace: "${APP_NAMESPACE}" is not a namespace name`) ||
		!strings.Contains(got[0], "a template placeholder not filled in?") ||
		!strings.Contains(got[1], `metadata.namespace: "Team_A" is not a namespace name`) || strings.Contains(got[1], "template") {
		t.Errorf("problems %q", got)
	}
}

// Any input is read without a panic: what is not a Kubernetes object is
// a problem, and every object read has a kind.
func FuzzReadStream(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: \"${NS}\"}\n",
		"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Service, metadata: {name: x, namespace: Bad_NS}}]\n",
		"---\n---\nkind: X\n", "[1, 2]", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\"}", "a: [", "\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		objs, _, _ := Read([]string{"-"}, strings.NewReader(s))
		for _, o := range objs {
			if o.Object == nil || o.Object.GetKind() == "" {
				t.Fatalf("%q: an object without a kind: %+v", s, o)
			}
		}
	})
}

// A kustomization in a folder given with -f is no object: it is skipped
// with a message pointing at -k; -k builds it as kubectl -k does (here its
// namespace transformer), and a folder kustomize cannot build is an error
// naming it while the others are still read.
func TestKustomizations(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) { writeFile(t, dir, rel, content) }
	write("base/one.yaml", strings.Replace(svc, "%s", "one", 1))
	write("base/kustomization.yaml", "resources: [one.yaml]\n")
	write("prod/kustomization.yml", "resources: [../base]\nnamespace: prod\nnamePrefix: p-\n")
	objs, probs, err := Read([]string{filepath.Join(dir, "base")}, nil)
	if err != nil || len(objs) != 1 || len(probs) != 1 {
		t.Fatalf("-f base: objects %d, problems %v, err %v", len(objs), probs, err)
	}
	if m := probs[0].Message; probs[0].Source != filepath.Join(dir, "base", "kustomization.yaml") || !strings.Contains(m, "a kustomization") || !strings.Contains(m, "-k "+filepath.Join(dir, "base")) {
		t.Errorf("-f base: problem %+v", probs[0])
	}
	objs, probs, err = ReadKustomizations([]string{filepath.Join(dir, "prod"), filepath.Join(dir, "none"), filepath.Join(dir, "base")})
	if len(probs) != 0 {
		t.Fatalf("-k: problems %v", probs)
	}
	if err == nil || !strings.Contains(err.Error(), "cannot build kustomization "+filepath.Join(dir, "none")) {
		t.Errorf("-k none: err %v", err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.Object.GetNamespace()+"/"+o.Object.GetName()+" "+o.Source)
	}
	want := []string{"prod/p-one kustomize " + filepath.Join(dir, "prod") + "#1", "/one kustomize " + filepath.Join(dir, "base") + "#1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("-k objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// writeFile writes content to dir/rel, making its folders.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
