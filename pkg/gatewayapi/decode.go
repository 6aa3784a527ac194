package gatewayapi

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// decodeErr is a decoding failure: the JSON path of the offending field
// when it could be found, and what is wrong with it.
type decodeErr struct {
	field, msg string
}

// decode converts obj into the projection into points to (see types.go).
// The converter's errors do not name the field, so on failure locate walks
// obj along the type to find it.
func decode(obj map[string]any, into any) *decodeErr {
	err := convert(obj, into)
	if err == nil {
		return nil
	}
	if field, msg, ok := locate(obj, reflect.TypeOf(into).Elem(), ""); ok {
		return &decodeErr{field: field, msg: msg}
	}
	return &decodeErr{msg: err.Error()}
}

// convert runs the unstructured converter. It turns a panic of the
// converter (third-party code, fed arbitrary input) into an error, as Add
// must never panic.
func convert(obj map[string]any, into any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot decode: %v", r)
		}
	}()
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// locate finds the first value in v (unstructured: maps, slices, strings,
// int64, float64, bool) that does not fit the Go type t as the unstructured
// converter reads it, and returns its JSON path (under path) and what is
// wrong. Unknown object keys are ignored, as the converter ignores them.
func locate(v any, t reflect.Type, path string) (field, msg string, found bool) {
	if v == nil {
		return "", "", false // null leaves the zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		// The converter round-trips such types (IntOrString, Quantity,
		// Time) through their JSON form; do the same.
		data, err := json.Marshal(v)
		if err == nil {
			err = reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(data)
		}
		if err != nil {
			return path, err.Error(), true
		}
		return "", "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return path, want("an object", v), true
		}
		return locateFields(m, t, path)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				return path, want("a base64 string", v), true
			}
			return "", "", false
		}
		s, ok := v.([]any)
		if !ok {
			return path, want("a list", v), true
		}
		for i, e := range s {
			if f, m, ok := locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return f, m, true
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return path, want("an object", v), true
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys) // report the same field every time
		for _, k := range keys {
			if f, msg, ok := locate(m[k], t.Elem(), fmt.Sprintf("%s[%q]", path, k)); ok {
				return f, msg, true
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return path, want("a string", v), true
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return path, want("a boolean", v), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n := v.(type) {
		case int, int32, int64:
		case float64:
			if n != math.Trunc(n) {
				return path, want("an integer", v), true
			}
		default:
			return path, want("an integer", v), true
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int, int32, int64, float64:
		default:
			return path, want("a number", v), true
		}
	}
	return "", "", false
}

// locateFields is locate for the fields of struct type t, read from m;
// embedded inline structs read the same m.
func locateFields(m map[string]any, t reflect.Type, path string) (string, string, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if fld, msg, ok := locateFields(m, ft, path); ok {
					return fld, msg, true
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		v, ok := m[name]
		if !ok {
			continue
		}
		p := name
		if path != "" {
			p = path + "." + name
		}
		if fld, msg, ok := locate(v, f.Type, p); ok {
			return fld, msg, true
		}
	}
	return "", "", false
}

// want says what a field should hold and what it holds instead.
func want(what string, v any) string {
	return fmt.Sprintf("want %s, got %s", what, describe(v))
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		return fmt.Sprintf("string %q", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case bool:
		return fmt.Sprintf("boolean %t", x)
	case int, int32, int64, float64:
		return fmt.Sprintf("number %v", x)
	default:
		return fmt.Sprintf("%T", v)
	}
}
