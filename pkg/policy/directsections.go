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
	if unrankedBy, err = parseControllerClauses(clauses[1:], "unranked"); err != nil {
		return false, nil, err
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

// parseControllerClauses reads clauses "controller=<GatewayClass
// controllerName> <word>" (empty ones skipped), returning the
// controllers in the order written; a controller named twice is an
// error.
func parseControllerClauses(clauses []string, word string) ([]string, error) {
	var ctls []string
	for _, cl := range clauses {
		words := strings.Fields(cl)
		if len(words) == 0 {
			continue
		}
		name, ctl, ok := strings.Cut(words[0], "=")
		if !ok || name != "controller" || ctl == "" {
			return nil, fmt.Errorf("clause %q: want controller=<GatewayClass controllerName> %s", strings.TrimSpace(cl), word)
		}
		if len(words) != 2 || words[1] != word {
			return nil, fmt.Errorf("clause %q: after controller=%s, want the one word %s", strings.TrimSpace(cl), ctl, word)
		}
		if slices.Contains(ctls, ctl) {
			return nil, fmt.Errorf("clause %q: controller %s is named twice", strings.TrimSpace(cl), ctl)
		}
		ctls = append(ctls, ctl)
	}
	return ctls, nil
}
