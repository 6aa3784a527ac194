package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ClusterIPRouting is the condition, "<parameters path>=<value>", under
// which the implementation sends a policy's external services (its
// BackendRefs) to a Service's cluster IP rather than to its endpoints:
// Envoy Gateway's EnvoyProxy "routingType=Service". A Gateway whose
// parameters hold that value gives such a Service (one that is not
// headless) no endpoint address type, so it does not count when a
// service's backends are checked for mixed address types. "" for none.
type ClusterIPRouting string

// ParseClusterIPRouting reads the annotation attache.dev/cluster-ip-routing:
// "<parameters path>=<value>", or "none".
func ParseClusterIPRouting(v string) (ClusterIPRouting, error) {
	v = strings.TrimSpace(v)
	if v == "none" || v == "" {
		return "", nil
	}
	c := ClusterIPRouting(strings.TrimPrefix(v, "spec."))
	return c, c.validate()
}

// String renders the condition in its annotation form ("none" for none).
func (c ClusterIPRouting) String() string {
	if c == "" {
		return "none"
	}
	return string(c)
}

func (c ClusterIPRouting) validate() error {
	if c == "" {
		return nil
	}
	path, v, ok := strings.Cut(string(c), "=")
	if !ok || v == "" || strings.ContainsAny(string(c), " ,;") || strings.Contains(v, "=") {
		return fmt.Errorf("%q: want <parameters path>=<value> (routingType=Service) or none", string(c))
	}
	if err := BackendRefPath(path).validate(); err != nil {
		return fmt.Errorf("%q: %v", string(c), err)
	}
	if err := parametersPathRead(BackendRefPath(path)); err != nil {
		return fmt.Errorf("%q: %v", string(c), err)
	}
	return nil
}

// Path is the parameters path the condition reads.
func (c ClusterIPRouting) Path() BackendRefPath {
	path, _, _ := strings.Cut(string(c), "=")
	return BackendRefPath(path)
}

// Holds reports whether parameters spec hold the condition's value.
func (c ClusterIPRouting) Holds(spec map[string]any) bool {
	path, want, ok := strings.Cut(string(c), "=")
	if !ok {
		return false
	}
	_, values := ValuesAt(spec, BackendRefPath(path))
	return slices.Contains(values, want)
}
