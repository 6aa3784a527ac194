package crdschema

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// widgetCRD is a CRD written for these tests: v1 is served with a schema
// holding each kind of rule the API server applies; v0 is no longer
// served; v2 is served without a schema.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.max) || !has(self.min) || self.min <= self.max"
              message: min must not exceed max
            properties:
              timeout: {type: string, pattern: '^[0-9]+s$'}
              min: {type: integer, minimum: 0}
              max: {type: integer}
              mode: {type: string, enum: [Fast, Slow]}
              items:
                type: array
                items:
                  type: object
                  required: [name, kind]
                  properties:
                    name: {type: string, minLength: 1}
                    kind: {type: string, default: Plain}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              note: {type: string}
  - name: v2
    served: true
    storage: false
`

func compileWidget(t testing.TB) *Schema {
	t.Helper()
	s, err := Compile(object(t, widgetCRD))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func object(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatalf("%v", err)
	}
	return &unstructured.Unstructured{Object: m}
}

func widget(t testing.TB, version, spec string) *unstructured.Unstructured {
	return object(t, "apiVersion: example.com/"+version+"\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec: "+spec)
}

func TestValidate(t *testing.T) {
	s := compileWidget(t)
	if got := s.Versions(); !reflect.DeepEqual(got, []string{"v1"}) {
		t.Errorf("Versions() = %v, want [v1] (v0 is not served, v2 has no schema)", got)
	}
	for _, tc := range []struct {
		name, version, spec string
		want                []string // one substring per error, in order
	}{
		{name: "valid", version: "v1", spec: `{timeout: 5s, min: 1, max: 2, mode: Fast, items: [{name: a}], extra: {anything: [1]}}`},
		{name: "pattern", version: "v1", spec: `{timeout: 5sec}`, want: []string{`spec.timeout: Invalid value: "5sec": should match '^[0-9]+s$'`}},
		{name: "minimum", version: "v1", spec: `{min: -1}`, want: []string{"spec.min: Invalid value: -1: should be greater than or equal to 0"}},
		{name: "enum", version: "v1", spec: `{mode: Medium}`, want: []string{`spec.mode: Unsupported value: "Medium"`, notChecked}},
		{name: "required", version: "v1", spec: `{items: [{kind: X}]}`, want: []string{"spec.items[0].name: Required value", notChecked}},
		{name: "default fills a required field", version: "v1", spec: `{items: [{name: a}]}`},
		{name: "null of a non-nullable field is dropped", version: "v1", spec: `{note: null}`},
		{name: "CEL rule", version: "v1", spec: `{min: 3, max: 2}`, want: []string{"spec: Invalid value: min must not exceed max"}},
		{name: "unknown field", version: "v1", spec: `{items: [{name: a, colour: red}]}`, want: []string{"spec.items[0].colour: Invalid value: unknown field"}},
		{name: "unknown field under preserve-unknown-fields", version: "v1", spec: `{extra: {colour: red}}`},
		{name: "version not served", version: "v0", spec: `{}`, want: []string{`apiVersion: Unsupported value: "example.com/v0": supported values: "example.com/v1"`}},
		{name: "version unknown", version: "v9", spec: `{}`, want: []string{`apiVersion: Unsupported value: "example.com/v9"`}},
		{name: "version without schema", version: "v2", spec: `{timeout: 5sec}`},
		{name: "wrong type", version: "v1", spec: `{min: "1"}`, want: []string{`spec.min: Invalid value: "string": must be of type integer`, notChecked}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := widget(t, tc.version, tc.spec)
			before := u.DeepCopy()
			errs := s.Validate(context.Background(), u)
			if !reflect.DeepEqual(u, before) {
				t.Errorf("Validate modified its input:\n%v\nwas\n%v", u.Object, before.Object)
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d %q", len(errs), errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

// Numbers arrive as float64 from YAML decoders and as int from Go callers;
// the API server sees int64, which typed CEL rules need.
func TestValidateNumberTypes(t *testing.T) {
	s := compileWidget(t)
	for _, n := range []any{float64(3), 3, int32(3), int64(3)} {
		u := widget(t, "v1", "{}")
		u.Object["spec"] = map[string]any{"min": n, "max": float64(2)}
		errs := s.Validate(context.Background(), u)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "min must not exceed max") {
			t.Errorf("min %T(3) > max 2: got %v, want the CEL rule's message alone", n, errs)
		}
	}
	u := widget(t, "v1", "{}")
	u.Object["spec"] = map[string]any{"min": 1.5}
	if errs := s.Validate(context.Background(), u); len(errs) == 0 || !strings.Contains(errs[0].Error(), "spec.min: Invalid value: \"number\": must be of type integer") {
		t.Errorf("min 1.5: got %v, want a type error", errs)
	}
}

func TestCompileErrors(t *testing.T) {
	notStructural := strings.Replace(widgetCRD, "timeout: {type: string, pattern: '^[0-9]+s$'}", "timeout: {pattern: '^[0-9]+s$'}", 1)
	if _, err := Compile(object(t, notStructural)); err == nil || !strings.Contains(err.Error(), "spec.versions[1].schema.openAPIV3Schema: not a structural schema") {
		t.Errorf("a property without a type: got %v, want the not-structural error naming the version", err)
	}
	badRule := strings.Replace(widgetCRD, `rule: "!has(self.max)`, `rule: "nosuch(self) || !has(self.max)`, 1)
	if _, err := Compile(object(t, badRule)); err == nil || !strings.Contains(err.Error(), "spec.versions[1].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0]: rule") {
		t.Errorf("a rule that does not compile: got %v, want an error naming the rule", err)
	}
	twice := strings.Replace(widgetCRD, "  - name: v2\n", "  - name: v1\n", 1)
	if _, err := Compile(object(t, twice)); err == nil || !strings.Contains(err.Error(), `version "v1" given twice`) {
		t.Errorf("a version given twice: got %v", err)
	}
	bad := object(t, widgetCRD)
	bad.Object["spec"].(map[string]any)["versions"] = "v1"
	if _, err := Compile(bad); err == nil || !strings.Contains(err.Error(), "widgets.example.com does not decode") {
		t.Errorf("versions not a list: got %v, want a decode error naming the CRD", err)
	}
}

func TestCache(t *testing.T) {
	var c Cache
	a, err := c.Get(object(t, widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Get(object(t, widgetCRD))
	if a != b {
		t.Error("the same CRD content compiled twice")
	}
	other, _ := c.Get(object(t, strings.Replace(widgetCRD, "minimum: 0", "minimum: 5", 1)))
	if other == a {
		t.Error("a changed CRD got the old schema")
	}
	if errs := other.Validate(context.Background(), widget(t, "v1", "{min: 2}")); len(errs) != 1 {
		t.Errorf("changed CRD (minimum 5), min 2: got %v, want one error", errs)
	}
	for i := 0; i < maxCacheEntries+1; i++ {
		crd := object(t, widgetCRD)
		crd.SetName("widgets.example.com")
		crd.SetLabels(map[string]string{"n": strings.Repeat("x", i)})
		if _, err := c.Get(crd); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n > maxCacheEntries {
		t.Errorf("cache holds %d entries, more than its bound %d", n, maxCacheEntries)
	}
}

func TestJSONCopy(t *testing.T) {
	in := map[string]any{"a": []any{float64(1), 1.5, 2, int32(3), uint32(4), float32(5), "s", true, nil},
		"m": map[string]string{"k": "v"}, "l": []string{"x"}}
	got, err := jsonCopy(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{int64(1), 1.5, int64(2), int64(3), int64(4), int64(5), "s", true, nil},
		"m": map[string]any{"k": "v"}, "l": []any{"x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jsonCopy = %#v, want %#v", got, want)
	}
	if _, err := jsonCopy(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("jsonCopy of a channel: no error")
	}
}

// Go callers may hand objects holding maps and lists of other types than
// JSON's, or values JSON cannot hold: refused or checked, never a crash.
func TestValidateGoValues(t *testing.T) {
	s := compileWidget(t)
	u := widget(t, "v1", "{}")
	u.Object["spec"] = map[string]any{"extra": map[string]string{"a": "b"}, "items": []map[string]any{{"name": "a"}}}
	if errs := s.Validate(context.Background(), u); len(errs) != 0 {
		t.Errorf("typed Go maps and lists: got %v, want none", errs)
	}
	u.Object["spec"] = map[string]any{"c": make(chan int)}
	if errs := s.Validate(context.Background(), u); len(errs) != 1 || !strings.Contains(errs[0].Error(), "not JSON") {
		t.Errorf("a channel: got %v, want one not-JSON error", errs)
	}
}

// What the API server does beyond the schema's own rules on create.
func TestValidateAsTheAPIServer(t *testing.T) {
	withStatus := strings.Replace(widgetCRD, `              note: {type: string}
`, `              note: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port]
                items: {type: object, required: [port], properties: {port: {type: integer}, name: {type: string}}}
          status:
            type: object
            required: [ready]
            properties: {ready: {type: boolean}}
`, 1)
	withSub := strings.Replace(withStatus, "    served: true\n    storage: true\n    schema:", "    served: true\n    storage: true\n    subresources: {status: {}}\n    schema:", 1)
	bare, sub := compile(t, withStatus), compile(t, withSub)
	ctx := context.Background()
	u := widget(t, "v1", "{}")
	u.Object["status"] = map[string]any{"phase": "x"}
	if errs := sub.Validate(ctx, u); len(errs) != 1 || !strings.Contains(errs[0].Error(), "status.phase: Invalid value: unknown field") {
		t.Errorf("status subresource: got %v, want only the unknown field (status is cleared on create, after decoding)", errs)
	}
	if errs := bare.Validate(ctx, u); len(errs) != 3 || !strings.Contains(errs[1].Error(), "status.ready: Required value") || errs[2].Detail != notChecked {
		t.Errorf("no status subresource: got %v, want the unknown field, status.ready required and the not-checked note", errs)
	}
	dup := widget(t, "v1", "{ports: [{port: 80}, {port: 80, name: b}]}")
	if errs := bare.Validate(ctx, dup); len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.ports[1]: Duplicate value") {
		t.Errorf("list-map duplicate keys: got %v, want a duplicate", errs)
	}
	// A wrong type stops CEL as at the API server, with its note.
	errs := bare.Validate(ctx, widget(t, "v1", `{min: "3", max: 2}`))
	if len(errs) != 2 || errs[1].Detail != notChecked || errs[1].Field != "" {
		t.Errorf("type error and a failing CEL rule: got %v, want the type error and the not-checked note", errs)
	}
	legacy := strings.Replace(widgetCRD, "  scope: Namespaced\n", "  scope: Namespaced\n  preserveUnknownFields: true\n", 1)
	if errs := compile(t, legacy).Validate(ctx, widget(t, "v1", "{colour: red}")); len(errs) != 0 {
		t.Errorf("preserveUnknownFields: got %v, want none", errs)
	}
}

func compile(t *testing.T, crd string) *Schema {
	t.Helper()
	s, err := Compile(object(t, crd))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// FuzzValidate: any object, of any shape, gets errors or none, never a
// panic.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"min":3,"max":2}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"items":[{"name":""},null,7]}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":null}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","spec":[1,2]}`,
		`{"apiVersion":"example.com/v0","kind":"Widget"}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":5},"spec":{"extra":{"x":{"y":[]}}}}`,
	} {
		f.Add(seed)
	}
	s := compileWidget(f)
	f.Fuzz(func(t *testing.T, js string) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(js), &m); err != nil || m == nil {
			return
		}
		_ = s.Validate(context.Background(), &unstructured.Unstructured{Object: m})
	})
}

// FuzzCompile: any CRD, however broken its schema, compiles or is an
// error, never a panic.
func FuzzCompile(f *testing.F) {
	f.Add(`{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"self.a >"}]}}}`)
	f.Add(`{"type":"object","properties":{"spec":{"type":"array"}}}`)
	f.Add(`{"type":"object","properties":{"spec":{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}}}`)
	f.Add(`{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-int-or-string":true}}}`)
	f.Add(`{"type":"object","properties":{"spec":{"$ref":"#/x"}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(schema), &m); err != nil || m == nil {
			return
		}
		crd := object(t, widgetCRD)
		crd.Object["spec"].(map[string]any)["versions"] = []any{map[string]any{
			"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": m}}}
		s, err := Compile(crd)
		if err != nil {
			return
		}
		_ = s.Validate(context.Background(), widget(t, "v1", `{a: 1, b: [x], c: {d: null}}`))
	})
}

// BenchmarkCompile: one CRD's schema with a CEL rule, compiled.
func BenchmarkCompile(b *testing.B) {
	crd := object(b, widgetCRD)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Compile(crd); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate: one object with a refused field checked.
func BenchmarkValidate(b *testing.B) {
	s := compileWidget(b)
	u := widget(b, "v1", `{timeout: 5sec, min: 3, max: 2, mode: Fast, items: [{name: a}, {name: b, kind: X}], extra: {a: 1}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(s.Validate(context.Background(), u)) == 0 {
			b.Fatal("no errors")
		}
	}
}
