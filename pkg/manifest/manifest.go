// Package manifest reads Kubernetes objects from files, folders and standard
// input: multi-document YAML, JSON (one object, a stream of objects, or an
// array of them), and List objects; and what kustomizations build, as
// kubectl -k does. It is the file
// adapter in front of the engine. A document that cannot be read is reported
// with its file and position, and the rest is still read.
package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// Extensions read when walking a folder.
var Extensions = []string{".yaml", ".yml", ".json"}

// Read reads every path ("-" is stdin). Folders are walked recursively, in
// lexical order, reading files with one of Extensions. A file named more
// than once (twice, or also inside a folder given, or through a symbolic
// link) is read once, under the name it was first given: its objects are
// not duplicates of themselves. It returns the objects read, the problems
// met (bad documents), and an error only for paths that could not be read
// at all.
func Read(paths []string, stdin io.Reader) ([]engine.Object, []diag.Problem, error) {
	var objs []engine.Object
	var probs []diag.Problem
	var errs []error
	seen := map[string]bool{}
	for _, p := range paths {
		if p == "-" {
			o, pr := Decode(stdin, "<stdin>")
			objs, probs = append(objs, o...), append(probs, pr...)
			continue
		}
		files, err := expand(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			k := fileKey(f)
			if seen[k] {
				continue
			}
			seen[k] = true
			if IsKustomization(f) {
				// kustomize's configuration, no object: reading it as one
				// only said it has no kind.
				probs = append(probs, diag.Problem{Source: f, Message: fmt.Sprintf("a kustomization (kustomize's configuration, not an object): skipped; to read what it builds, give its folder with -k %s", filepath.Dir(f))})
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, fmt.Errorf("cannot read %s: %w", f, unwrapPathError(err)))
				continue
			}
			o, pr := Decode(bytes.NewReader(data), f)
			objs, probs = append(objs, o...), append(probs, pr...)
		}
	}
	return objs, probs, errors.Join(errs...)
}

// IsKustomization reports whether the file at path f is a kustomization
// by its name (kustomization.yaml, kustomization.yml or Kustomization, as
// kustomize recognizes them).
func IsKustomization(f string) bool {
	for _, n := range konfig.RecognizedKustomizationFileNames() {
		if filepath.Base(f) == n {
			return true
		}
	}
	return false
}

// ReadKustomizations runs kustomize on each folder, as kubectl -k does
// (kustomize's default options, the API server's order), and reads the
// objects it builds. Each object's source is "kustomize DIR#N", N its
// place in the build. A folder kustomize cannot build (no kustomization,
// a missing base, a bad patch) is an error naming it; the others are still
// read.
func ReadKustomizations(dirs []string) ([]engine.Object, []diag.Problem, error) {
	var objs []engine.Object
	var probs []diag.Problem
	var errs []error
	fsys := filesys.MakeFsOnDisk()
	for _, d := range dirs {
		opts := krusty.MakeDefaultOptions()
		opts.Reorder = krusty.ReorderOptionLegacy // as kubectl -k
		m, err := krusty.MakeKustomizer(opts).Run(fsys, d)
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot build kustomization %s: %w", d, err))
			continue
		}
		y, err := m.AsYaml()
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot build kustomization %s: %w", d, err))
			continue
		}
		o, pr := Decode(bytes.NewReader(y), "kustomize "+d)
		objs, probs = append(objs, o...), append(probs, pr...)
	}
	return objs, probs, errors.Join(errs...)
}

// fileKey identifies the file at path f: its cleaned absolute path, with
// symbolic links resolved where they can be (otherwise the path as given).
func fileKey(f string) string {
	k, err := filepath.Abs(f)
	if err != nil {
		return filepath.Clean(f)
	}
	if r, err := filepath.EvalSymlinks(k); err == nil {
		k = r
	}
	return k
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func expand(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("cannot read %s: no such file or directory", p)
		}
		return nil, fmt.Errorf("cannot read %s: %w", p, unwrapPathError(err))
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot read %s: %w", path, unwrapPathError(err))
		}
		if d.IsDir() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		for _, e := range Extensions {
			if ext == e {
				out = append(out, path)
				break
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Decode reads every document of r. source names r in messages.
func Decode(r io.Reader, source string) ([]engine.Object, []diag.Problem) {
	var objs []engine.Object
	var probs []diag.Problem
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if err == io.EOF {
			break
		}
		src := fmt.Sprintf("%s#%d", source, doc)
		if err != nil {
			probs = append(probs, diag.Problem{Source: src, Message: fmt.Sprintf("cannot read document: %v", err)})
			break
		}
		if len(bytes.TrimSpace(stripComments(raw))) == 0 {
			doc--
			continue
		}
		vals, jsonErr := splitJSON(raw)
		if len(vals) == 0 {
			// Not a JSON document (or its first value is broken): read it
			// as YAML, which reports what is wrong with it.
			o, pr := decodeDoc(raw, src)
			objs, probs = append(objs, o...), append(probs, pr...)
			continue
		}
		// A JSON stream: each value is a document of its own (YAML would
		// read the first value and silently drop the rest).
		for i, v := range vals {
			if i > 0 {
				doc++
				src = fmt.Sprintf("%s#%d", source, doc)
			}
			o, pr := decodeDoc(v, src)
			objs, probs = append(objs, o...), append(probs, pr...)
		}
		if jsonErr != nil {
			doc++
			probs = append(probs, diag.Problem{Source: fmt.Sprintf("%s#%d", source, doc), Message: fmt.Sprintf("not valid JSON: %v; the rest of the stream is not read", jsonErr)})
		}
	}
	return objs, probs
}

// splitJSON splits a document that is a stream of JSON values ({...} {...}
// or one [...]) into its values. It returns no values when the document
// does not start like JSON or its first value is not valid JSON (it is then
// YAML, such as a flow mapping, or broken), and the values read before the
// first invalid one, with that error, when a later value is broken.
func splitJSON(raw []byte) ([][]byte, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	var vals [][]byte
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			return vals, nil
		}
		if err != nil {
			return vals, err
		}
		vals = append(vals, v)
	}
}

func stripComments(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func decodeDoc(raw []byte, src string) ([]engine.Object, []diag.Problem) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, []diag.Problem{{Source: src, Message: fmt.Sprintf("not valid YAML or JSON: %v", err)}}
	}
	js = bytes.TrimSpace(js)
	if bytes.Equal(js, []byte("null")) {
		return nil, nil
	}
	if len(js) > 0 && js[0] == '[' {
		// A bare list of objects (a JSON array or a YAML sequence), read
		// like the items of a List.
		var items []json.RawMessage
		if err := json.Unmarshal(js, &items); err != nil {
			return nil, []diag.Problem{{Source: src, Message: fmt.Sprintf("not a list of Kubernetes objects: %v", err)}}
		}
		var objs []engine.Object
		var probs []diag.Problem
		for i, it := range items {
			o, pr := decodeDoc(it, fmt.Sprintf("%s[%d]", src, i))
			objs, probs = append(objs, o...), append(probs, pr...)
		}
		return objs, probs
	}
	// apimachinery's own error for a document without kind quotes the
	// whole document: say what is missing instead.
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, []diag.Problem{{Source: src, Message: "not a Kubernetes object: a document must be a mapping with apiVersion and kind; it is skipped (leave such files out of -f)"}}
	}
	if k, _ := head.Kind.(string); k == "" {
		return nil, []diag.Problem{{Source: src, Message: "not a Kubernetes object: it has no kind; it is skipped (give it apiVersion and kind, or leave the file out of -f)"}}
	}
	if v, _ := head.APIVersion.(string); v == "" {
		return nil, []diag.Problem{{Source: src, Message: "not a Kubernetes object: it has no apiVersion; it is skipped (give it apiVersion and kind, or leave the file out of -f)"}}
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, []diag.Problem{{Source: src, Message: fmt.Sprintf("not a Kubernetes object: %v; it is skipped", err)}}
	}
	if u.IsList() {
		list, err := u.ToList()
		if err != nil {
			return nil, []diag.Problem{{Source: src, Message: fmt.Sprintf("not a valid List: %v", err)}}
		}
		out := make([]engine.Object, 0, len(list.Items))
		var probs []diag.Problem
		for i := range list.Items {
			o := engine.Object{Object: &list.Items[i], Source: fmt.Sprintf("%s.items[%d]", src, i)}
			if o.Object.GetKind() == "" || o.Object.GetAPIVersion() == "" {
				probs = append(probs, diag.Problem{Source: o.Source, Message: "not a Kubernetes object: a List item needs apiVersion and kind; it is skipped"})
				continue
			}
			out, probs = append(out, o), append(probs, checkMeta(o)...)
		}
		return out, probs
	}
	o := engine.Object{Object: u, Source: src}
	return []engine.Object{o}, checkMeta(o)
}

// checkMeta says when an object's namespace is no namespace name (a
// DNS-1123 label): the API server would refuse the object. It is kept
// (its answers hold for the name as written); most often the name is a
// template's placeholder (${NAMESPACE}) that was never filled in.
func checkMeta(o engine.Object) []diag.Problem {
	ns := o.Object.GetNamespace()
	if ns == "" || len(validation.IsDNS1123Label(ns)) == 0 {
		return nil
	}
	hint := ""
	if strings.ContainsAny(ns, "${}") {
		hint = " (a template placeholder not filled in?)"
	}
	gvk := o.Object.GroupVersionKind()
	return []diag.Problem{{Object: topology.Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: ns, Name: o.Object.GetName()}, Source: o.Source, Field: "metadata.namespace",
		Message: fmt.Sprintf("%q is not a namespace name (a DNS-1123 label: lower-case letters, digits and '-')%s; the API server would refuse the object; read as written", ns, hint)}}
}
