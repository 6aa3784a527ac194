package gatewayapi

import (
	"github.com/attache-dev/attache/pkg/topology"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Grants indexes ReferenceGrants. The zero value and nil allow only
// same-namespace references.
type Grants struct {
	m map[grantKey][]grantTo
}

// grantKey is what a reference is looked up by: where the grant lives (the
// namespace of the referent) and who may refer.
type grantKey struct {
	toNamespace string
	from        topology.GroupKind
	fromNS      string
}

// grantTo is one `to` entry; an empty name allows every object of the kind.
type grantTo struct {
	gk   topology.GroupKind
	name string
}

// add indexes one ReferenceGrant living in namespace ns: every from entry
// is allowed to refer to every to entry.
func (g *Grants) add(ns string, spec *gwv1.ReferenceGrantSpec) {
	if len(spec.From) == 0 || len(spec.To) == 0 {
		return
	}
	if g.m == nil {
		g.m = map[grantKey][]grantTo{}
	}
	to := make([]grantTo, 0, len(spec.To))
	for _, t := range spec.To {
		e := grantTo{gk: topology.GroupKind{Group: string(t.Group), Kind: string(t.Kind)}}
		if t.Name != nil {
			e.name = string(*t.Name)
		}
		to = append(to, e)
	}
	for _, f := range spec.From {
		k := grantKey{
			toNamespace: ns,
			from:        topology.GroupKind{Group: string(f.Group), Kind: string(f.Kind)},
			fromNS:      string(f.Namespace),
		}
		g.m[k] = append(g.m[k], to...)
	}
}

// Allows reports whether a ReferenceGrant in to.Namespace allows references
// from objects of kind from in namespace fromNamespace to the object to
// (to.SectionName is ignored). A `to` entry without a name allows every
// object of its group and kind. References within one namespace are always
// allowed.
func (g *Grants) Allows(from topology.GroupKind, fromNamespace string, to topology.Ref) bool {
	if fromNamespace == to.Namespace {
		return true
	}
	if g == nil {
		return false
	}
	for _, t := range g.m[grantKey{toNamespace: to.Namespace, from: from, fromNS: fromNamespace}] {
		if t.gk == to.GroupKind() && (t.name == "" || t.name == to.Name) {
			return true
		}
	}
	return false
}
