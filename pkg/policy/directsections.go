package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ParseDirectSections reads attache.dev/direct-sections: "true" or
// "false", then, separated by ";", a clause per implementation at whose
// Gateways a policy on a whole object and one on its section meet as one
// level: "controller=<GatewayClass controllerName> unranked" (NGINX
// Gateway Fabric's BackendTLSPolicy selection). It returns the flag and
// those controllers, in the order written.
func ParseDirectSections(v string) (on bool, unrankedBy []string, err error) {
	clauses := strings.Split(v, ";")
	if on, err = parseBool(clauses[0]); err != nil {
		return false, nil, err
	}
	for _, cl := range clauses[1:] {
		words := strings.Fields(cl)
		if len(words) == 0 {
			continue
		}
		name, ctl, ok := strings.Cut(words[0], "=")
		if !ok || name != "controller" || ctl == "" {
			return false, nil, fmt.Errorf("clause %q: want controller=<GatewayClass controllerName> unranked", strings.TrimSpace(cl))
		}
		if len(words) != 2 || words[1] != "unranked" {
			return false, nil, fmt.Errorf("clause %q: after controller=%s, want the one word unranked", strings.TrimSpace(cl), ctl)
		}
		if slices.Contains(unrankedBy, ctl) {
			return false, nil, fmt.Errorf("clause %q: controller %s is named twice", strings.TrimSpace(cl), ctl)
		}
		unrankedBy = append(unrankedBy, ctl)
	}
	if len(unrankedBy) > 0 && !on {
		return false, nil, fmt.Errorf("%q: a controller=... unranked clause needs true (sections covered by their object's policies)", v)
	}
	return on, unrankedBy, nil
}

// FormatDirectSections writes the setting as ParseDirectSections reads
// it.
func FormatDirectSections(on bool, unrankedBy []string) string {
	s := fmt.Sprint(on)
	for _, ctl := range unrankedBy {
		s += "; controller=" + ctl + " unranked"
	}
	return s
}

// SectionsUnrankedAt reports whether, at the Gateways of implementation
// controller, the kind's policies on a whole object and on its sections
// meet at a section as one level (Kind.SectionsUnrankedBy).
func (k *Kind) SectionsUnrankedAt(controller string) bool {
	return k.DirectSections && slices.Contains(k.SectionsUnrankedBy, controller)
}
