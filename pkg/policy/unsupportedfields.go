package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// UnsupportedFields are the spec fields a kind's policies may not set at
// targets of one kind: Envoy Gateway rejects a SecurityPolicy on a TCPRoute
// that sets anything but client-CIDR authorization. A policy setting one
// there is Invalid at that target and not attached; one with a merge type
// whose merged spec would set one takes no part in those contexts (the
// implementation rejects it before it claims the target, and the policies
// above apply).
type UnsupportedFields struct {
	// Kind is the target kind (its sections included: a route's rules).
	Kind topology.GroupKind
	// Paths are dotted paths below spec; a segment ending in "[]" ranges
	// over a list's entries ("authorization.rules[].cel").
	Paths []string
}

// String renders the entry as the annotation writes it:
// "TCPRoute.gateway.networking.k8s.io=cors,jwt".
func (u UnsupportedFields) String() string {
	return u.Kind.String() + "=" + strings.Join(u.Paths, ",")
}

// UnsupportedFieldsString renders a kind's entries as the annotation
// attache.dev/unsupported-fields writes them ("none" for no entry).
func UnsupportedFieldsString(us []UnsupportedFields) string { return entriesString(us) }

// ParseUnsupportedFields reads the annotation attache.dev/unsupported-fields:
// entries separated by ";", each "<target kind>=<path>,<path>...", the kind
// bare when only one known kind has that name ("TCPRoute"), else
// Kind.group; "none" for no entry.
func ParseUnsupportedFields(v string) ([]UnsupportedFields, error) {
	return parseEntries(v, "TCPRoute=cors,jwt", func(entry string) (UnsupportedFields, error) {
		kind, paths, ok := strings.Cut(entry, "=")
		if !ok {
			return UnsupportedFields{}, fmt.Errorf("entry %q is not <target kind>=<path>,<path>...", entry)
		}
		gk, err := topology.ResolveGroupKind(strings.TrimSpace(kind), topology.KnownKinds())
		if err != nil {
			return UnsupportedFields{}, fmt.Errorf("entry %q: %v", entry, err)
		}
		u := UnsupportedFields{Kind: gk}
		for _, p := range splitList(paths) {
			u.Paths = append(u.Paths, strings.TrimPrefix(p, "spec."))
		}
		return u, u.validate()
	})
}

// validate checks the entry names a kind and well-formed paths.
func (u UnsupportedFields) validate() error {
	if u.Kind.Kind == "" {
		return fmt.Errorf("an entry names no target kind")
	}
	if len(u.Paths) == 0 {
		return fmt.Errorf("entry for %s names no field", u.Kind)
	}
	for _, p := range u.Paths {
		if err := BackendRefPath(p).validate(); err != nil {
			return fmt.Errorf("entry for %s: %v", u.Kind, err)
		}
	}
	return nil
}

// UnsupportedAt returns the entry of the kind for targets of kind gk, nil
// when its policies may set every field there.
func (k *Kind) UnsupportedAt(gk topology.GroupKind) *UnsupportedFields {
	i := slices.IndexFunc(k.UnsupportedFields, func(u UnsupportedFields) bool { return u.Kind == gk })
	if i < 0 {
		return nil
	}
	return &k.UnsupportedFields[i]
}

// Set returns the fields of the entry that spec (a spec proper) sets, with
// their list positions ("spec.authorization.rules[0].cel"), in path order.
// A field set to null or to an empty list is not set (an empty object is).
func (u *UnsupportedFields) Set(spec map[string]any) []string {
	paths := make([]BackendRefPath, len(u.Paths))
	for i, p := range u.Paths {
		paths[i] = BackendRefPath(p)
	}
	return setFields(spec, paths)
}
