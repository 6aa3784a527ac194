package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// FeatureGate is a switch of its implementation's configuration that a
// kind, or some fields of its policies, need: Envoy Gateway ignores
// EnvoyPatchPolicy unless extensionApis.enableEnvoyPatchPolicy is set,
// and refuses a Lua EnvoyExtensionPolicy unless extensionApis.enableLua
// is. A feature is off unless the configuration attache reads, or the
// caller, turns it on (see Features).
type FeatureGate struct {
	// Feature names the switch: the configuration's kind, then the path
	// of its field ("EnvoyGateway.extensionApis.enableLua").
	Feature string
	// Paths are dotted paths below spec whose fields need it (segments
	// may end in "[]"); none (and no BackendKind): every policy of the
	// kind does.
	Paths []BackendRefPath
	// BackendKind, when set, says that the kind's backendRefs (Kind.
	// BackendRefs) naming a backend of this kind need it: Envoy Gateway
	// refuses a policy's reference to a Backend unless
	// extensionApis.enableBackend is set. Paths is then empty.
	BackendKind topology.GroupKind
}

// backendRefsGate is the annotation form's prefix of a gate on the
// backendRefs naming one kind of backend.
const backendRefsGate = "backendRefs:"

// WholeKind reports whether the gate is on the whole kind (its policies
// are Disabled while the feature is off).
func (g FeatureGate) WholeKind() bool { return len(g.Paths) == 0 && g.BackendKind.Kind == "" }

// String renders the gate in its annotation form:
// "EnvoyGateway.extensionApis.enableLua=lua", "<feature>=*" for the kind.
func (g FeatureGate) String() string {
	if g.BackendKind.Kind != "" {
		return g.Feature + "=" + backendRefsGate + g.BackendKind.String()
	}
	if len(g.Paths) == 0 {
		return g.Feature + "=*"
	}
	parts := make([]string, len(g.Paths))
	for i, p := range g.Paths {
		parts[i] = specPrefixed(p)
	}
	return g.Feature + "=" + strings.Join(parts, ",")
}

// FeatureGatesString renders a kind's gates as the annotation value
// ("none" for none).
func FeatureGatesString(gs []FeatureGate) string { return entriesString(gs) }

// ParseFeatureGates reads the annotation attache.dev/feature-gates:
// entries separated by ";", each "<feature>=<path>,<path>...",
// "<feature>=backendRefs:<Kind>.<group>" (the kind's backendRefs naming
// that kind of backend) or "<feature>=*" (the whole kind); "none" for
// none.
func ParseFeatureGates(v string) ([]FeatureGate, error) {
	return parseEntries(v, "EnvoyGateway.extensionApis.enableLua=lua", func(entry string) (FeatureGate, error) {
		feature, paths, ok := strings.Cut(entry, "=")
		if !ok {
			return FeatureGate{}, fmt.Errorf("entry %q is not <feature>=<path>,<path>... or <feature>=*", entry)
		}
		g := FeatureGate{Feature: strings.TrimSpace(feature)}
		if kind, ok := strings.CutPrefix(strings.TrimSpace(paths), backendRefsGate); ok {
			kind = strings.TrimSpace(kind)
			g.BackendKind = topology.ParseGroupKind(kind)
			if g.BackendKind.Kind == "" || strings.ContainsAny(kind, " ,=*[]") {
				return FeatureGate{}, fmt.Errorf("feature gate %s: %q is not <Kind>.<group>", g.Feature, kind)
			}
			return g, g.validate()
		}
		if strings.TrimSpace(paths) != "*" {
			for _, p := range splitList(paths) {
				g.Paths = append(g.Paths, BackendRefPath(strings.TrimPrefix(p, "spec.")))
			}
			if len(g.Paths) == 0 {
				return FeatureGate{}, fmt.Errorf("feature gate %s names no field (or * for the whole kind)", g.Feature)
			}
		}
		return g, g.validate()
	})
}

// validate checks the feature's name and the paths.
func (g FeatureGate) validate() error {
	if !validFeatureName(g.Feature) {
		return fmt.Errorf("feature gate: %q is not a feature name (letters, digits, '.', '-', '_')", g.Feature)
	}
	for _, p := range g.Paths {
		if err := p.validate(); err != nil {
			return fmt.Errorf("feature gate %s: %v", g.Feature, err)
		}
	}
	return nil
}

// validFeatureName reports whether s can name a feature: what the
// annotation and the --feature flag can both carry.
func validFeatureName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// Feature is the state of one feature of an implementation's
// configuration.
type Feature struct {
	// On is whether the feature is enabled.
	On bool
	// From says where attache learnt it, for messages: "ConfigMap
	// envoy-gateway-system/envoy-gateway-config", "--feature".
	From string
}

// Features are the states of the features that feature gates name, by
// name. A feature absent is off: the gates attache declares are of
// features their implementations turn off by default.
type Features map[string]Feature

// On reports whether the feature name is on.
func (f Features) On(name string) bool { return f[name].On }

// state says why a feature is off, for messages.
func (f Features) state(name string) string {
	if s, ok := f[name]; ok && s.From != "" {
		return "off in " + s.From
	}
	return fmt.Sprintf("off: no configuration attache read turns it on (set --feature %s=true, or give attache the implementation's configuration where attache reads one: Envoy Gateway's envoy-gateway-config)", name)
}

// ParseFeature reads a --feature flag value: "<feature>=true|false" (or
// on|off).
func ParseFeature(v string) (string, bool, error) {
	name, val, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || !validFeatureName(name) {
		return "", false, fmt.Errorf("--feature %q is not <feature>=true|false (e.g. EnvoyGateway.extensionApis.enableLua=true)", v)
	}
	switch strings.ToLower(strings.TrimSpace(val)) {
	case "true", "on":
		return name, true, nil
	case "false", "off":
		return name, false, nil
	}
	return "", false, fmt.Errorf("--feature %s: %q is not true or false", name, strings.TrimSpace(val))
}

// DisabledBy returns the gate of the whole kind whose feature is off in
// f, with the message its policies' ancestors get; nil when none is.
func (k *Kind) DisabledBy(f Features) (*FeatureGate, string) {
	for i, g := range k.FeatureGates {
		if g.WholeKind() && !f.On(g.Feature) {
			return &k.FeatureGates[i], fmt.Sprintf("%s is disabled in its implementation's configuration: it needs %s, %s", k.GroupKind.Kind, g.Feature, f.state(g.Feature))
		}
	}
	return nil, ""
}

// BackendGatedOff says why the kind's policies may not name a backend of
// kind gk while f is in force: a gate on such backendRefs whose feature
// is off ("" when none is).
func (k *Kind) BackendGatedOff(gk topology.GroupKind, f Features) string {
	for _, g := range k.FeatureGates {
		if g.BackendKind == gk && !f.On(g.Feature) {
			return fmt.Sprintf("%s is disabled in its implementation's configuration: it needs %s, %s", gk.Kind, g.Feature, f.state(g.Feature))
		}
	}
	return ""
}

// GatedOff returns the fields the policy sets that need a feature off in
// f, in the order of its kind's gates; a field absent, null or an empty
// list is not set.
func (p *Policy) GatedOff(f Features) []FieldProblem {
	var out []FieldProblem
	for _, g := range p.Kind.FeatureGates {
		if len(g.Paths) == 0 || f.On(g.Feature) {
			continue
		}
		for _, field := range setFields(p.Spec, g.Paths) {
			if !slices.ContainsFunc(out, func(fp FieldProblem) bool { return fp.Field == field }) {
				out = append(out, FieldProblem{Field: field, Message: fmt.Sprintf("needs %s, %s", g.Feature, f.state(g.Feature))})
			}
		}
	}
	return out
}

// setFields returns the fields at paths below spec that are set, with
// their list positions, in path order: not absent, null or an empty list
// (an empty object is set).
func setFields(spec map[string]any, paths []BackendRefPath) []string {
	var out []string
	for _, p := range paths {
		names, lists := p.segments()
		walkPath(spec, "spec", names, lists, func(v any, field string) {
			if l, isList := v.([]any); v == nil || (isList && len(l) == 0) {
				return
			}
			out = append(out, field)
		})
	}
	return out
}
