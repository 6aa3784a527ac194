package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ParseControllers reads the annotation attache.dev/controllers: the
// controllerName values of the GatewayClasses whose Gateways the kind's
// implementation serves, comma separated, or "any" (nil).
func ParseControllers(v string) ([]string, error) {
	return parseAnyList(v, validateControllerName)
}

// parseAnyList reads a comma-separated list of entries, each checked by
// check, in order and without repeats, or "any" (nil).
func parseAnyList(v string, check func(string) error) ([]string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "any" {
		return nil, nil
	}
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if err := check(e); err != nil {
			return nil, err
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// anyListString renders a list parseAnyList reads ("any" for none).
func anyListString(l []string) string {
	if len(l) == 0 {
		return "any"
	}
	return strings.Join(l, ",")
}

// ControllersString renders a kind's controllers as the annotation value
// ("any" for none).
func ControllersString(cs []string) string { return anyListString(cs) }

// Serves reports whether the kind's implementation serves the Gateways of
// a GatewayClass whose controllerName is controller (a kind without
// Controllers serves any).
func (k *Kind) Serves(controller string) bool {
	return len(k.Controllers) == 0 || slices.Contains(k.Controllers, controller)
}

// validateControllerName checks a GatewayClass controllerName as Gateway
// API shapes it: a domain-prefixed path ("example.com/controller").
func validateControllerName(c string) error {
	domain, path, ok := strings.Cut(c, "/")
	if !ok || domain == "" || path == "" || strings.ContainsAny(c, " \t,;") || len(c) > 253 {
		return fmt.Errorf("controller %q is not a GatewayClass controllerName (a domain-prefixed path such as example.com/gateway-controller)", c)
	}
	return nil
}
