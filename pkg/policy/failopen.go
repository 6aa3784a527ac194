package policy

import (
	"fmt"
	"strings"
)

// FailOpenPath is a part of a kind's policies that its implementation
// leaves out, rather than failing the route (Kind.FailureStatus), when a
// reference under it does not resolve and its own flag says so: Envoy
// Gateway's external authorizer (extAuth.failOpen) and each extension
// processor and Wasm module (extProc[].failOpen, wasm[].failOpen).
type FailOpenPath struct {
	// Entry is the dotted path below spec of the part; segments may end
	// in "[]" (each entry of that list).
	Entry BackendRefPath
	// Field is the boolean field of the part that makes it fail open.
	Field string
}

// String renders the path in its annotation form: "extProc[]=failOpen".
func (f FailOpenPath) String() string { return specPrefixed(f.Entry) + "=" + f.Field }

// FailOpenString renders a kind's paths as the annotation value ("none"
// for none).
func FailOpenString(fs []FailOpenPath) string { return entriesString(fs) }

// ParseFailOpen reads the annotation attache.dev/fail-open: entries
// separated by ";", each "<path>=<boolean field>"; "none" for none.
func ParseFailOpen(v string) ([]FailOpenPath, error) {
	return parseEntries(v, "extProc[]=failOpen", func(entry string) (FailOpenPath, error) {
		path, field, ok := strings.Cut(entry, "=")
		if !ok {
			return FailOpenPath{}, fmt.Errorf("entry %q is not <path>=<boolean field>", entry)
		}
		f := FailOpenPath{Entry: BackendRefPath(strings.TrimPrefix(strings.TrimSpace(path), "spec.")), Field: strings.TrimSpace(field)}
		return f, f.validate()
	})
}

// parseEntries reads an annotation of entries separated by ";" ("none"
// for none), each read by parse; example is a valid value, for the
// message about a value with no entry.
func parseEntries[T any](v, example string, parse func(string) (T, error)) ([]T, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	var out []T
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		e, err := parse(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("names no entry (e.g. %q), or \"none\"", example)
	}
	return out, nil
}

// entriesString renders entries as parseEntries reads them ("none" for
// none).
func entriesString[T fmt.Stringer](es []T) string {
	if len(es) == 0 {
		return "none"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

// validate checks the path and the field's name.
func (f FailOpenPath) validate() error {
	if err := f.Entry.validate(); err != nil {
		return fmt.Errorf("fail-open entry: %v", err)
	}
	if f.Field == "" || strings.ContainsAny(f.Field, " ,=;.[]*") {
		return fmt.Errorf("fail-open entry %s: %q is not a field name", f.Entry, f.Field)
	}
	return nil
}

// FailsOpen reports whether the policy's implementation leaves out, rather
// than failing the route for, a broken reference at field (as messages
// name it: "spec.extProc[0].backendRefs[1]"): it lies in a part of one of
// the kind's FailOpen paths whose flag is true.
func (p *Policy) FailsOpen(field string) bool { return p.Kind.failsOpenIn(p.Spec, field) }

// failsOpenIn is FailsOpen of a policy of the kind with spec.
func (k *Kind) failsOpenIn(spec map[string]any, field string) bool {
	open := false
	for _, f := range k.FailOpen {
		names, lists := f.Entry.segments()
		walkPath(spec, "spec", names, lists, func(v any, at string) {
			m, ok := v.(map[string]any)
			if !ok || (field != at && !strings.HasPrefix(field, at+".") && !strings.HasPrefix(field, at+"[")) {
				return
			}
			if b, _ := m[f.Field].(bool); b {
				open = true
			}
		})
	}
	return open
}

// WithoutFailedOpen is the spec its implementation applies when the
// references at fields (as FailsOpen reads them) do not resolve and every
// one of them fails open: the spec without each part of the kind's
// FailOpen paths, flag set, that holds one of them: an entry left out of
// its list; a part of an object made null, which deletes it also from what
// a merge type merges the policy with (RFC 7386), as its implementation
// leaves it out of the merged policy. parts are the parts left
// out, as fields ("spec.extProc[0]"), in the order of the kind's paths; none when some field
// does not fail open (the implementation fails the route instead) or none
// is given. The policy's spec is not changed.
func (p *Policy) WithoutFailedOpen(fields []string) (spec map[string]any, parts []string) {
	return p.Kind.WithoutFailedOpen(p.Spec, fields)
}

// WithoutFailedOpen is Policy.WithoutFailedOpen for a spec of the kind
// (a spec proper, such as the one a merge type makes of two policies:
// its implementation judges the merged policy's flags).
func (k *Kind) WithoutFailedOpen(in map[string]any, fields []string) (spec map[string]any, parts []string) {
	if len(fields) == 0 {
		return nil, nil
	}
	for _, f := range fields {
		if !k.failsOpenIn(in, f) {
			return nil, nil
		}
	}
	drop := map[string]bool{}
	for _, f := range k.FailOpen {
		names, lists := f.Entry.segments()
		walkPath(in, "spec", names, lists, func(v any, at string) {
			m, ok := v.(map[string]any)
			if b, _ := m[f.Field].(bool); !ok || !b || drop[at] {
				return
			}
			for _, field := range fields {
				if field == at || strings.HasPrefix(field, at+".") || strings.HasPrefix(field, at+"[") {
					drop[at] = true
					parts = append(parts, at)
					return
				}
			}
		})
	}
	if len(parts) == 0 {
		return nil, nil
	}
	spec, _ = WithoutFields(in, parts).(map[string]any)
	return spec, parts
}

// WithoutFields copies spec (a spec proper) without the values at fields
// ("spec.extAuth", "spec.extProc[0]"): an entry left out of its list, a
// member of an object made null.
func WithoutFields(spec any, fields []string) any {
	drop := map[string]bool{}
	for _, f := range fields {
		drop[f] = true
	}
	return withoutFields(spec, "spec", drop)
}

// withoutFields copies v (a JSON value at field) without the values at the
// fields in drop, named as walkPath names them.
func withoutFields(v any, field string, drop map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if f := field + "." + k; drop[f] {
				out[k] = nil
			} else {
				out[k] = withoutFields(e, f, drop)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			if f := fmt.Sprintf("%s[%d]", field, i); !drop[f] {
				out = append(out, withoutFields(e, f, drop))
			}
		}
		return out
	}
	return v
}
