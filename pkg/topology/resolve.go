package topology

import (
	"fmt"
	"slices"
	"strings"
)

// CoreAlias is how some implementations write the core API group in a
// reference ("group: core", NGINX Gateway Fabric's UpstreamSettingsPolicy).
const CoreAlias = "core"

// KnownKinds returns the kinds the topology builds nodes for: the default
// hierarchy's kinds. A bare kind name resolves among them.
func KnownKinds() []GroupKind { return DefaultHierarchy }

// NormalizeGroup maps the alias "core" to the core group ("").
func NormalizeGroup(group string) string {
	if group == CoreAlias {
		return CoreGroup
	}
	return group
}

// ResolveKindName resolves a kind written without a group to the one kind
// of that name in known. It returns ok=false when none has that name, and
// an error listing the candidates when several do.
func ResolveKindName(name string, known []GroupKind) (gk GroupKind, ok bool, err error) {
	var found []GroupKind
	for _, k := range known {
		if k.Kind == name && !slices.Contains(found, k) {
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return GroupKind{}, false, nil
	case 1:
		return found[0], true, nil
	}
	names := make([]string, len(found))
	for i, k := range found {
		names[i] = k.String()
	}
	return GroupKind{}, false, fmt.Errorf("kind name %q is ambiguous: write one of %s", name, strings.Join(names, ", "))
}

// ResolveGroupKind parses a kind as written in a descriptor: "Kind.group",
// "Kind.core" (the core group) or a bare "Kind", which resolves to the one
// kind of that name in known ("Gateway" is Gateway.gateway.networking.k8s.io)
// and otherwise names a core-group kind. An ambiguous bare name is an error.
func ResolveGroupKind(s string, known []GroupKind) (GroupKind, error) {
	gk := ParseGroupKind(s)
	if gk.Group != "" {
		gk.Group = NormalizeGroup(gk.Group)
		return gk, nil
	}
	r, ok, err := ResolveKindName(gk.Kind, known)
	if err != nil {
		return GroupKind{}, err
	}
	if ok {
		return r, nil
	}
	return gk, nil
}
