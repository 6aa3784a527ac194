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
	v = strings.TrimSpace(v)
	if v == "" || v == "any" {
		return nil, nil
	}
	var out []string
	for _, c := range strings.Split(v, ",") {
		c = strings.TrimSpace(c)
		if err := validateControllerName(c); err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// ControllersString renders a kind's controllers as the annotation value
// ("any" for none).
func ControllersString(cs []string) string {
	if len(cs) == 0 {
		return "any"
	}
	return strings.Join(cs, ",")
}

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
