package merge

import "fmt"

// Strategy is a merge strategy of GEP-713, named as in the GEP (kebab case),
// e.g. "atomic-defaults".
type Strategy string

// The merge strategies of GEP-713.
const (
	// None: the established policy wins; every challenger is rejected.
	None Strategy = "none"
	// AtomicDefaults: f(established, challenger) = challenger.
	AtomicDefaults Strategy = "atomic-defaults"
	// PatchDefaults: f(established, challenger) = rfc7386(target=established, patch=challenger).
	PatchDefaults Strategy = "patch-defaults"
	// AtomicOverrides: f(established, challenger) = established.
	AtomicOverrides Strategy = "atomic-overrides"
	// PatchOverrides: f(established, challenger) = rfc7386(target=challenger, patch=established).
	PatchOverrides Strategy = "patch-overrides"
	// Custom: a Go function registered with the policy kind.
	Custom Strategy = "custom"
)

// Order is GEP-713's order of preference among strategies: when a policy
// names none, the first one its kind supports applies.
var Order = []Strategy{AtomicDefaults, PatchDefaults, AtomicOverrides, PatchOverrides, Custom}

// All lists every strategy, None first.
var All = append([]Strategy{None}, Order...)

// ParseStrategy validates a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	for _, k := range All {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown merge strategy %q (known: none, atomic-defaults, patch-defaults, atomic-overrides, patch-overrides, custom)", s)
}

// IsOverride reports whether the strategy lets the established policy win.
func (s Strategy) IsOverride() bool { return s == AtomicOverrides || s == PatchOverrides }

// Stanza returns the stanza word of the strategy: "defaults", "overrides",
// or "" for none and custom.
func (s Strategy) Stanza() string {
	switch s {
	case AtomicDefaults, PatchDefaults:
		return "defaults"
	case AtomicOverrides, PatchOverrides:
		return "overrides"
	}
	return ""
}

// CustomFunc is an implementer's merge function, GEP-713's f(spec, spec) →
// spec. Both arguments and the result are JSON values (spec propers);
// challenger is the combined result of everything more specific. It must not
// modify its arguments.
type CustomFunc func(established, challenger map[string]any) (map[string]any, error)
