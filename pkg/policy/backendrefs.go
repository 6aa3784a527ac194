package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// BackendRefPath is where a kind's policies name backends they send
// traffic to themselves (an external authorizer, a JWKS or OIDC provider,
// an external processor): a dotted path below spec whose segments may end
// in "[]" (each entry of that list). A path ending in "[]" is a list of
// backendRefs; otherwise it is one backendRef object. Each backendRef has
// Gateway API's BackendObjectReference fields: group (default core), kind
// (default Service), name, namespace (default the policy's), port.
//
// Envoy Gateway then makes the policy an ancestor of the BackendTLSPolicy
// of such a backend (it is the parent of that traffic, not a Gateway):
// attache does so for kinds whose ancestors are Gateways.
type BackendRefPath string

// segments splits the path into its field names, each with whether it is
// a list to range over.
func (p BackendRefPath) segments() (names []string, lists []bool) {
	for _, s := range strings.Split(string(p), ".") {
		name, list := strings.CutSuffix(s, "[]")
		names = append(names, name)
		lists = append(lists, list)
	}
	return names, lists
}

// validate checks the path's syntax.
func (p BackendRefPath) validate() error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	names, _ := p.segments()
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, " ,=[]*") {
			return fmt.Errorf("%q is not a dotted path below spec (segments may end in [] for lists)", string(p))
		}
	}
	return nil
}

// ParseBackendRefPaths reads the annotation form: paths separated by
// commas (spaces allowed), a leading "spec." dropped; "none" for none.
func ParseBackendRefPaths(v string) ([]BackendRefPath, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	var out []BackendRefPath
	for _, s := range splitList(v) {
		p := BackendRefPath(strings.TrimPrefix(s, "spec."))
		if err := p.validate(); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("names no path (e.g. %q), or \"none\"", "extAuth.http.backendRefs[]")
	}
	return out, nil
}

// BackendRef is a backend a policy names in one of its kind's
// BackendRefPaths.
type BackendRef struct {
	// Backend is the object (group, kind, namespace, name), defaults
	// applied.
	Backend topology.Ref
	// Port is the port named, 0 when none.
	Port int64
	// ZeroWeight says the entry sets weight 0: its implementation
	// checks the reference but sends it no traffic (Envoy Gateway leaves
	// it out of the external service's destinations).
	ZeroWeight bool
	// Field is the entry's path, for messages.
	Field string
}

// readBackendRefs reads the policy's backendRefs at its kind's paths from
// spec. They serve the ancestors of the backends' policies only: checking
// them is the implementation's (as for the rest of the policy's content),
// so an entry that is not a backendRef naming a backend is skipped, and
// the policy is not made Invalid for it.
//
// Of an object with both a backendRef and a non-empty backendRefs list,
// the list is read and the single reference left out, as Envoy Gateway
// reads its external authorizers (translateExtAuth: backendRefs when set,
// else backendRef).
func (p *Policy) readBackendRefs(spec map[string]any) {
	for _, path := range p.Kind.BackendRefs {
		names, lists := path.segments()
		walkPath(spec, "spec", names, lists, p.addBackendRef)
	}
	lists := map[string]bool{}
	for _, br := range p.BackendRefs {
		if parent, _, ok := strings.Cut(br.Field, ".backendRefs["); ok {
			lists[parent] = true
		}
	}
	p.BackendRefs = slices.DeleteFunc(p.BackendRefs, func(br BackendRef) bool {
		parent, single := strings.CutSuffix(br.Field, ".backendRef")
		return single && lists[parent]
	})
}

// addBackendRef reads one backendRef object at field.
func (p *Policy) addBackendRef(v any, field string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	ref := BackendRef{Backend: topology.Ref{Group: topology.CoreGroup, Kind: "Service", Namespace: p.Ref.Namespace}, Field: field}
	for _, f := range []struct {
		key string
		dst *string
	}{{"group", &ref.Backend.Group}, {"kind", &ref.Backend.Kind}, {"name", &ref.Backend.Name}, {"namespace", &ref.Backend.Namespace}} {
		v, has := m[f.key]
		if !has || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return
		}
		if s != "" || f.key == "name" {
			*f.dst = s
		}
	}
	if ref.Backend.Group == "core" {
		ref.Backend.Group = topology.CoreGroup
	}
	if ref.Backend.Name == "" {
		return
	}
	port, ok := number(m["port"])
	if !ok {
		return
	}
	ref.Port = port
	if w, ok := number(m["weight"]); ok && m["weight"] != nil && w == 0 {
		ref.ZeroWeight = true
	}
	p.BackendRefs = append(p.BackendRefs, ref)
}

// number reads an integer field of an unstructured object: 0 and true for
// none; false for a value that is no number.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case nil:
		return 0, true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}
