package engine

import (
	"slices"
	"strconv"

	"github.com/attache-dev/attache/pkg/topology"
)

// backendUser is a policy that sends traffic to a backend itself (one of
// its kind's BackendRefs paths names it), on a port (0: none).
type backendUser struct {
	policy topology.Ref
	port   int64
}

// backendUsers maps each backend object to the policies that use it:
// valid policies attached somewhere, whose backendRefs the ReferenceGrants
// allow, in policy order. Built once per computation (a change to a
// policy that names backends recomputes everything, see cannotUpdate).
func (c *computation) backendUsers() map[topology.Ref][]backendUser {
	if c.users != nil {
		return c.users
	}
	c.users = map[topology.Ref][]backendUser{}
	for _, ps := range c.policies {
		p := ps.p
		if len(p.BackendRefs) == 0 || p.Invalid() || len(ps.atts) == 0 {
			continue
		}
		for _, br := range p.BackendRefs {
			if !c.grants.Allows(p.Ref.GroupKind(), p.Ref.Namespace, br.Backend) {
				continue
			}
			u := backendUser{policy: p.Ref, port: br.Port}
			if !slices.Contains(c.users[br.Backend], u) {
				c.users[br.Backend] = append(c.users[br.Backend], u)
			}
		}
	}
	return c.users
}

// policiesUsing returns the policies that use target (a backend, or a
// section of one: then those naming its port, named as backendSections
// names ports), as ancestors: Envoy Gateway makes such a policy the
// ancestor of the backend's BackendTLSPolicy, the parent of that traffic.
func (c *computation) policiesUsing(target topology.Ref) []topology.Ref {
	users := c.backendUsers()[target.Object()]
	var out []topology.Ref
	for _, u := range users {
		if target.IsSection() && c.portSection(target.Object(), u.port) != target.SectionName {
			continue
		}
		if !slices.Contains(out, u.policy) {
			out = append(out, u.policy)
		}
	}
	return out
}

// portSection names port of backend as a section: a Service's or
// ServiceImport's port by its name (its number when unnamed), another
// backend's by its number; "" for no port or a port the Service lacks.
func (c *computation) portSection(backend topology.Ref, port int64) string {
	if port == 0 {
		return ""
	}
	if c.backendSections == nil {
		return ""
	}
	if names, ok := c.backendSections.portNames[backend]; ok {
		return names[port]
	}
	if gk := backend.GroupKind(); gk == topology.KindService || gk == serviceImport {
		return ""
	}
	return strconv.FormatInt(port, 10)
}
