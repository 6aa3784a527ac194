package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// Allowlist says that each value at a path of a kind's policies must be
// among the values at a path of the parameters the data plane of the
// policy's target runs with (Envoy Gateway: a dynamic module that an
// EnvoyExtensionPolicy loads must be registered in the EnvoyProxy's
// spec.dynamicModules). A policy naming a value that is not is one its
// implementation cannot translate there.
type Allowlist struct {
	// Path is the dotted path below the policy's spec to the values;
	// segments may end in "[]" (each entry of that list).
	Path BackendRefPath
	// In is the dotted path below the parameters' spec to the allowed
	// values: one of ParametersPaths.
	In BackendRefPath
}

// ParametersPaths are the fields of data-plane parameters (Envoy
// Gateway's EnvoyProxy, NGINX Gateway Fabric's NginxProxy) that an
// Allowlist or a Requirement may read: the readers keep these (and what
// else attache reads) of the parameters they get, and drop the rest (a
// deployment's settings).
var ParametersPaths = []BackendRefPath{"dynamicModules[].name", "geoIP.provider", "luaValidation", "routingType",
	"telemetry.exporter.endpoint", "telemetry.disabledFeatures[]", "waf.enable", "dnsResolver"}

// String renders the allowlist in its annotation form:
// "dynamicModule[].name=dynamicModules[].name".
func (a Allowlist) String() string { return specPrefixed(a.Path) + "=" + specPrefixed(a.In) }

// AllowlistsString renders a kind's allowlists as the annotation value
// ("none" for none).
func AllowlistsString(as []Allowlist) string { return entriesString(as) }

// ParseAllowlists reads the annotation attache.dev/data-plane-allowlists:
// entries separated by ";", each "<path>=<parameters path>"; "none" for
// none.
func ParseAllowlists(v string) ([]Allowlist, error) {
	return parseEntries(v, "dynamicModule[].name=dynamicModules[].name", func(entry string) (Allowlist, error) {
		path, in, ok := strings.Cut(entry, "=")
		if !ok {
			return Allowlist{}, fmt.Errorf("entry %q is not <path>=<parameters path>", entry)
		}
		a := Allowlist{Path: BackendRefPath(strings.TrimPrefix(strings.TrimSpace(path), "spec.")), In: BackendRefPath(strings.TrimPrefix(strings.TrimSpace(in), "spec."))}
		return a, a.validate()
	})
}

// validate checks both paths, and that the parameters' one is read.
func (a Allowlist) validate() error {
	if err := a.Path.validate(); err != nil {
		return fmt.Errorf("allowlist entry: %v", err)
	}
	if err := parametersPathRead(a.In); err != nil {
		return fmt.Errorf("allowlist entry %s: %v", a.Path, err)
	}
	return nil
}

// parametersPathRead refuses a path of the data plane's parameters that
// lies outside ParametersPaths (the readers drop the rest).
func parametersPathRead(p BackendRefPath) error {
	if slices.ContainsFunc(ParametersPaths, func(kept BackendRefPath) bool { return p == kept || strings.HasPrefix(string(p), string(kept)+".") }) {
		return nil
	}
	names := make([]string, len(ParametersPaths))
	for i, k := range ParametersPaths {
		names[i] = string(k)
	}
	return fmt.Errorf("attache does not read %q of the data plane's parameters (it reads %s)", string(p), strings.Join(names, ", "))
}

// ValuesAt returns the string values at path below spec, each with its
// field ("spec.dynamicModule[1].name"); values of other types are
// rendered by fmt.
func ValuesAt(spec map[string]any, path BackendRefPath) (fields, values []string) {
	names, lists := path.segments()
	walkPath(spec, "spec", names, lists, func(v any, at string) {
		if v == nil {
			return
		}
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		fields = append(fields, at)
		values = append(values, s)
	})
	return fields, values
}

// NotAllowed checks the policy's values at its kind's allowlists against
// allowed, which gives the values the parameters hold at a path (In): one
// problem per value that is not among them, in the order of the kind's
// allowlists.
func (p *Policy) NotAllowed(allowed func(in BackendRefPath) []string) []FieldProblem {
	return p.NotAllowedWhere(func(Allowlist) bool { return true }, allowed)
}

// NotAllowedWhere is NotAllowed for the allowlists judge accepts.
func (p *Policy) NotAllowedWhere(judge func(Allowlist) bool, allowed func(in BackendRefPath) []string) []FieldProblem {
	var out []FieldProblem
	for _, a := range p.Kind.Allowlists {
		if !judge(a) {
			continue
		}
		fields, values := ValuesAt(p.Spec, a.Path)
		if len(fields) == 0 {
			continue
		}
		ok := allowed(a.In)
		for i, v := range values {
			if !slices.Contains(ok, v) {
				out = append(out, FieldProblem{Field: fields[i], Message: fmt.Sprintf("%q is not among spec.%s", v, a.In)})
			}
		}
	}
	return out
}

// ReadsDataPlanes reports whether the kind's policies are judged by the
// data planes the Gateways run on: a kind whose policies target one
// (DataPlaneTarget), one that rejects a listener policy other listeners
// of the data plane would carry (RejectSharedPort), one whose values
// the data plane's parameters must allow (Allowlists), or one whose
// backends' mixes the parameters decide (ClusterIPRouting). Readers then
// get the data planes' parameters (Envoy Gateway's EnvoyProxies) and the
// configuration's default.
func (k *Kind) ReadsDataPlanes() bool {
	return k.DataPlaneTarget || k.RejectSharedPort || len(k.Allowlists) > 0 || len(k.RequirementsOf(topology.GroupKind{})) > 0 || k.RegexFieldsPerGateway() ||
		k.ClusterIPRouting != ""
}

// RegexFieldsPerGateway reports whether some of the kind's RegexFields
// are judged per Gateway (an Unless condition on its parameters).
func (k *Kind) RegexFieldsPerGateway() bool {
	return slices.ContainsFunc(k.RegexFields, func(r RegexField) bool { return r.Unless != "" })
}
