// Package crdschema checks custom objects against the schema of their
// CustomResourceDefinition as the API server does when they are created:
// unknown fields (kubectl's default strict field validation refuses them),
// nulls dropped and defaults applied, then the OpenAPI rules and the CEL
// rules (x-kubernetes-validations) of the object's version.
//
// Objects read from files never went through an API server; this is how
// attache tells a user that an object in them would be refused by one. It
// uses the API server's own code (k8s.io/apiextensions-apiserver) so that
// the verdicts and messages are the API server's. The package is pure: no
// I/O, no clients.
package crdschema

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Schema is the compiled schema of every version of one CRD.
type Schema struct {
	group, kind string
	versions    map[string]*version
	unchecked   map[string]bool // served versions without a schema
	// preserveUnknown: the (legacy) CRD keeps unknown fields, so none is
	// refused.
	preserveUnknown bool
}

// version is one served version's schema, compiled.
type version struct {
	structural        *structuralschema.Structural
	openAPI           validation.SchemaValidator
	cel               *cel.Validator // nil when the schema has no CEL rules
	statusSubresource bool           // status is cleared on create
}

// Compile compiles the schemas of crd's versions. A CRD that does not
// decode, or a version whose schema is not structural (the API server
// would refuse such a CRD), is an error naming the field; versions without
// a schema are left out (their objects are not checked), as are versions
// not served (their objects are refused).
func Compile(crd *unstructured.Unstructured) (*Schema, error) {
	var v1 apiextv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(crd.Object, &v1); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s does not decode: %w", crd.GetName(), err)
	}
	s := &Schema{group: v1.Spec.Group, kind: v1.Spec.Names.Kind, versions: map[string]*version{}, unchecked: map[string]bool{},
		preserveUnknown: v1.Spec.PreserveUnknownFields}
	for i, ver := range v1.Spec.Versions {
		if !ver.Served {
			continue
		}
		if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
			if _, dup := s.versions[ver.Name]; dup || s.unchecked[ver.Name] {
				return nil, fmt.Errorf("spec.versions[%d].name: version %q given twice", i, ver.Name)
			}
			s.unchecked[ver.Name] = true
			continue
		}
		fld := fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i)
		var internal apiextensions.JSONSchemaProps
		if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(ver.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", fld, err)
		}
		structural, err := structuralschema.NewStructural(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: not a structural schema: %w", fld, err)
		}
		if errs := structuralschema.ValidateStructural(nil, structural); len(errs) > 0 {
			return nil, fmt.Errorf("%s: not a structural schema: %w", fld, errs.ToAggregate())
		}
		openAPI, _, err := validation.NewSchemaValidator(&internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fld, err)
		}
		if _, dup := s.versions[ver.Name]; dup || s.unchecked[ver.Name] {
			return nil, fmt.Errorf("spec.versions[%d].name: version %q given twice", i, ver.Name)
		}
		if err := compileRules(structural, true, fld); err != nil {
			return nil, err
		}
		s.versions[ver.Name] = &version{
			structural:        structural,
			openAPI:           openAPI,
			cel:               cel.NewValidator(structural, true, celconfig.PerCallLimit),
			statusSubresource: ver.Subresources != nil && ver.Subresources.Status != nil,
		}
	}
	return s, nil
}

// jsonCopy copies obj as the API server decodes a request's JSON: whole
// numbers int64 (YAML decoders and Go callers may give float64 or int,
// which CEL rules typed integer refuse), other numbers float64, and every
// map and list of JSON's own types (a Go caller's map[string]string
// would crash the validators).
func jsonCopy(obj map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// compileRules compiles the CEL rules (x-kubernetes-validations) of node
// and of the nodes below it, as the API server does when it accepts a
// CRD: a rule that does not compile is an error naming where it is, not a
// verdict on every object of the kind (the validator would report "rule
// compile error" for each).
func compileRules(node *structuralschema.Structural, root bool, fld string) error {
	if node == nil {
		return nil
	}
	if len(node.XValidations) > 0 {
		results, err := cel.Compile(node, model.SchemaDeclType(node, root || node.XEmbeddedResource), celconfig.PerCallLimit,
			environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
		if err != nil {
			return fmt.Errorf("%s: x-kubernetes-validations: %w", fld, err)
		}
		for i, r := range results {
			if r.Error != nil {
				return fmt.Errorf("%s.x-kubernetes-validations[%d]: rule %q does not compile: %v", fld, i, node.XValidations[i].Rule, r.Error)
			}
			if r.MessageExpressionError != nil {
				return fmt.Errorf("%s.x-kubernetes-validations[%d]: messageExpression does not compile: %v", fld, i, r.MessageExpressionError)
			}
		}
	}
	names := make([]string, 0, len(node.Properties))
	for k := range node.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := node.Properties[k]
		if err := compileRules(&p, false, fld+".properties."+k); err != nil {
			return err
		}
	}
	if err := compileRules(node.Items, false, fld+".items"); err != nil {
		return err
	}
	if node.AdditionalProperties != nil {
		return compileRules(node.AdditionalProperties.Structural, false, fld+".additionalProperties")
	}
	return nil
}

// Versions are the served versions with a schema, sorted.
func (s *Schema) Versions() []string {
	out := make([]string, 0, len(s.versions))
	for v := range s.versions {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Validate returns what the API server would refuse in u, an object of
// the CRD's group and kind, field by field (nil when it would accept it).
// u is not modified: defaults are applied to a copy. An object of a
// version the CRD does not define is one error on apiVersion; a version
// without a schema is not checked.
func (s *Schema) Validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	gvk := u.GroupVersionKind()
	ver, ok := s.versions[gvk.Version]
	if !ok {
		if s.unchecked[gvk.Version] || len(s.versions) == 0 {
			return nil
		}
		return field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), u.GetAPIVersion(), apiVersions(s.group, s.Versions()))}
	}
	obj, err := jsonCopy(u.Object)
	if err != nil {
		return field.ErrorList{field.Invalid(nil, nil, fmt.Sprintf("not JSON: %v", err))}
	}
	var errs field.ErrorList
	if !s.preserveUnknown {
		unknown := pruning.PruneWithOptions(obj, ver.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		sort.Strings(unknown)
		for _, p := range unknown {
			errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: pathOf(p).String(), BadValue: field.OmitValueType{},
				Detail: "unknown field: kubectl apply refuses it (strict field validation, its default), the API server alone drops it"})
		}
	}
	if ver.statusSubresource {
		// The API server clears status on create (PrepareForCreate):
		// written in a file, as in a dump from a cluster, it is not
		// checked.
		delete(obj, "status")
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, ver.structural)
	structuraldefaulting.Default(obj, ver.structural)
	errs = append(errs, validation.ValidateCustomResource(nil, obj, ver.openAPI)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, obj)...)
	if ver.cel != nil {
		if blocking(errs) {
			// As the API server: CEL rules are not run over an object of
			// the wrong shape.
			errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, BadValue: field.OmitValueType{}, Detail: notChecked})
		} else {
			celErrs, _ := ver.cel.Validate(ctx, nil, ver.structural, obj, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, celErrs...)
		}
	}
	for _, e := range errs {
		// The OpenAPI validator repeats the path ("spec.x in body should
		// match ..."); the error already names it.
		e.Detail = strings.Replace(e.Detail, e.Field+" in body ", "", 1)
	}
	return errs
}

// notChecked is the API server's note when it does not run CEL rules.
const notChecked = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// blocking reports whether errs hold an error after which the API server
// does not run CEL rules (its hasBlockingErr: a wrong type, a missing
// field, a value not in the enum, too long, too many).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// apiVersions renders group/version for each version.
func apiVersions(group string, versions []string) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = group + "/" + v
		if group == "" {
			out[i] = v
		}
	}
	return out
}

// pathOf turns a dotted field path with [i] indexes, as pruning reports
// them, into a field.Path.
func pathOf(p string) *field.Path {
	var fp *field.Path
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if fp == nil {
			fp = field.NewPath(name)
		} else {
			fp = fp.Child(name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			fp = fp.Key(idx)
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return fp
}

// Cache keeps compiled schemas by CRD content, so that computations over
// the same CRDs (a test over many fixtures, a CLI run computing twice)
// compile each once: compiling CEL rules takes far longer than checking
// an object. It is safe for concurrent use. The zero value is ready.
type Cache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cacheEntry
}

type cacheEntry struct {
	schema *Schema
	err    error
}

// maxCacheEntries bounds a Cache: CRDs are few, but a long-running caller
// re-reading changed CRDs must not grow it without end.
const maxCacheEntries = 256

// Get returns crd's compiled schema, compiling it when its content was not
// seen before. It marshals the CRD to find it: callers checking many
// objects keep the result.
func (c *Cache) Get(crd *unstructured.Unstructured) (*Schema, error) {
	raw, err := json.Marshal(crd.Object)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s does not encode: %w", crd.GetName(), err)
	}
	key := sha256.Sum256(raw)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.schema, e.err
	}
	s, err := Compile(crd)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCacheEntries {
		c.entries = map[[sha256.Size]byte]cacheEntry{}
	}
	c.entries[key] = cacheEntry{schema: s, err: err}
	return s, err
}
