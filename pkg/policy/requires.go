package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// Requirement says what a kind's policies need, when they hold a value at
// a path, of what the implementation reads beside them: the parameters of
// the data plane the target's Gateways run with (Envoy Gateway: GeoIP
// authorization needs the EnvoyProxy's geoIP provider), or the effective
// policy of another kind at the listeners the target's requests pass
// (GeoIP authorization needs a ClientTrafficPolicy's clientIPDetection
// there). A policy whose requirement is not met is one its implementation
// cannot translate there.
type Requirement struct {
	// Path is the dotted path below the policy's spec whose value, when
	// present, makes the requirement apply; segments may end in "[]".
	Path BackendRefPath
	// Of is the policy kind whose effective policy at the listeners is
	// read; the zero GroupKind reads the data plane's parameters.
	Of topology.GroupKind
	// Any are dotted paths below that spec, one of which must hold a
	// value; with Excludes, none of which may.
	Any []BackendRefPath
	// Excludes turns the requirement around: the paths must not hold a
	// value.
	Excludes bool
	// On, for a requirement on another kind, are the listener protocols
	// where it is checked (Envoy Gateway checks GeoIP on its HTTP
	// listeners only); all listeners when empty.
	On []string
	// Reason, when set, is the reason of the Accepted=False condition its
	// implementation writes when this requirement (on the data plane's
	// parameters) is all that refuses the policy at a target (NGINX
	// Gateway Fabric: NginxProxyConfigNotSet); Invalid otherwise.
	Reason string
	// Values, when set (as long as Any), are the values the paths of Any
	// must hold, as text (true, a string, a number): "" for any value
	// (NGINX Gateway Fabric's WAFPolicy needs waf.enable true, not just
	// set). A requirement on the parameters only.
	Values []string
	// WithoutParameters says what a Gateway running with no parameters
	// (neither it nor its GatewayClass names any) makes of a requirement
	// on them, where its implementation does not check it against a
	// default (profiles.ChecksWithoutParameters false): "" not judged;
	// WithoutParametersUnmet: not met; WithoutParametersUnmetAtGateways:
	// not met at a Gateway target, not judged at others (NGINX Gateway
	// Fabric judges a WAFPolicy on a Gateway whatever it runs with, one
	// on a route only against an NginxProxy).
	WithoutParameters string
	// ServiceType, when set, makes the requirement apply only where the
	// value at Path is a backend reference (name, namespace, kind, group)
	// naming a Service of that type (NGINX Gateway Fabric's
	// PayloadProcessor needs a DNS resolver for an ExternalName backend);
	// the caller judges it (Requirement.NamesService).
	ServiceType string
}

// Requirement.WithoutParameters values.
const (
	WithoutParametersUnmet           = "unmet"
	WithoutParametersUnmetAtGateways = "unmet-at-gateways"
)

// RequirementParameters is the word naming the data plane's parameters in
// a requirement.
const RequirementParameters = "parameters"

// ServiceTypeExternalName is the Service type a requirement may ask for
// (Requirement.ServiceType): the one attache reads.
const ServiceTypeExternalName = "ExternalName"

// conditionReason is metav1.Condition's pattern for reasons.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// String renders the requirement in its annotation form:
// "a.b[] requires ClientTrafficPolicy.gateway.envoyproxy.io:x|y".
func (r Requirement) String() string {
	verb := "requires"
	if r.Excludes {
		verb = "excludes"
	}
	of := RequirementParameters
	if r.Of != (topology.GroupKind{}) {
		of = r.Of.Kind + "." + r.Of.Group
	}
	alts := make([]string, len(r.Any))
	for i, a := range r.Any {
		alts[i] = r.alt(i, specPrefixed(a))
	}
	s := specPrefixed(r.Path) + " " + verb + " " + of + ":" + strings.Join(alts, "|")
	if len(r.On) > 0 {
		s += " on=" + strings.Join(r.On, ",")
	}
	if r.Reason != "" {
		s += " reason=" + r.Reason
	}
	if r.WithoutParameters != "" {
		s += " without-parameters=" + r.WithoutParameters
	}
	if r.ServiceType != "" {
		s += " service=" + r.ServiceType
	}
	return s
}

// alt renders the i-th path of Any, named name, with the value it must
// hold (Values): "spec.waf.enable=true".
func (r Requirement) alt(i int, name string) string {
	if i < len(r.Values) && r.Values[i] != "" {
		return name + "=" + r.Values[i]
	}
	return name
}

// RequirementsString renders a kind's requirements as the annotation
// value ("none" for none).
func RequirementsString(rs []Requirement) string { return entriesString(rs) }

// ParseRequirements reads the annotation attache.dev/requires: entries
// separated by ";", each "<path> requires <where>:<path>|<path>..." or
// "<path> excludes <where>:<path>|...", where is "parameters" or a policy
// kind as Kind.group, the latter optionally followed by
// " on=<protocol>,..." (the listeners checked), the former by
// " reason=<Reason>" (the reason its implementation gives when the
// requirement is all that refuses the policy),
// " without-parameters=unmet|unmet-at-gateways" and " service=<type>"
// (see Requirement), its paths by "=<value>" (the value they must
// hold); "none" for none.
func ParseRequirements(v string) ([]Requirement, error) {
	return parseEntries(v, "a.b[] requires parameters:x.y", func(entry string) (Requirement, error) {
		words := strings.Fields(entry)
		var on []string
		var reason, without, service string
		for len(words) > 3 {
			last := words[len(words)-1]
			word, val, _ := strings.Cut(last, "=")
			switch {
			case word == "on" && on != nil, word == "reason" && reason != "",
				word == "without-parameters" && without != "", word == "service" && service != "":
				return Requirement{}, fmt.Errorf("entry %q: %s= is given twice", entry, word)
			case word == "on" && val != "":
				on = splitList(val)
			case word == "reason" && val != "":
				reason = val
			case word == "without-parameters" && val != "":
				without = val
			case word == "service" && val != "":
				service = val
			default:
				return Requirement{}, fmt.Errorf("entry %q: %q is not on=<protocol>,..., reason=<Reason>, without-parameters=unmet|unmet-at-gateways nor service=<type>", entry, last)
			}
			words = words[:len(words)-1]
		}
		if len(words) != 3 || (words[1] != "requires" && words[1] != "excludes") {
			return Requirement{}, fmt.Errorf("entry %q is not <path> requires|excludes <where>:<path>|<path>...", entry)
		}
		where, alts, ok := strings.Cut(words[2], ":")
		if !ok {
			return Requirement{}, fmt.Errorf("entry %q: %q is not <where>:<path>|<path>...", entry, words[2])
		}
		r := Requirement{Path: BackendRefPath(strings.TrimPrefix(words[0], "spec.")), Excludes: words[1] == "excludes", On: on, Reason: reason,
			WithoutParameters: without, ServiceType: service}
		if where != RequirementParameters {
			kind, group, ok := strings.Cut(where, ".")
			if !ok || kind == "" || group == "" {
				return Requirement{}, fmt.Errorf("entry %q: %q is neither %q nor a policy kind as Kind.group", entry, where, RequirementParameters)
			}
			r.Of = topology.GroupKind{Group: group, Kind: kind}
		}
		for _, a := range strings.Split(alts, "|") {
			path, value, _ := strings.Cut(a, "=")
			r.Any = append(r.Any, BackendRefPath(strings.TrimPrefix(path, "spec.")))
			r.Values = append(r.Values, value)
		}
		if !slices.ContainsFunc(r.Values, func(v string) bool { return v != "" }) {
			r.Values = nil
		}
		return r, r.validate()
	})
}

// validate checks the paths, and that parameters paths lie in what the
// readers keep (ParametersPaths).
func (r Requirement) validate() error {
	if err := r.Path.validate(); err != nil {
		return fmt.Errorf("requirement: %v", err)
	}
	if len(r.Any) == 0 {
		return fmt.Errorf("requirement %s: no path", r.Path)
	}
	if len(r.On) > 0 && r.Of == (topology.GroupKind{}) {
		return fmt.Errorf("requirement %s: on= reads listeners, and the parameters are a data plane's", r.Path)
	}
	if r.Reason != "" {
		if r.Of != (topology.GroupKind{}) {
			return fmt.Errorf("requirement %s: reason= is for requirements on the parameters", r.Path)
		}
		if !conditionReason.MatchString(r.Reason) || len(r.Reason) > 1024 {
			return fmt.Errorf("requirement %s: reason=%s is not a condition reason (CamelCase: a letter, then letters, digits, '_', ',' or ':')", r.Path, r.Reason)
		}
	}
	if r.Of != (topology.GroupKind{}) && (r.Values != nil || r.WithoutParameters != "" || r.ServiceType != "") {
		return fmt.Errorf("requirement %s: values, without-parameters= and service= are for requirements on the parameters", r.Path)
	}
	if r.Values != nil && len(r.Values) != len(r.Any) {
		return fmt.Errorf("requirement %s: %d values for %d paths", r.Path, len(r.Values), len(r.Any))
	}
	for _, v := range r.Values {
		if strings.ContainsAny(v, " =|;") {
			return fmt.Errorf("requirement %s: value %q holds a space, '=', '|' or ';'", r.Path, v)
		}
	}
	switch r.WithoutParameters {
	case "", WithoutParametersUnmet, WithoutParametersUnmetAtGateways:
	default:
		return fmt.Errorf("requirement %s: without-parameters=%s: want %s or %s", r.Path, r.WithoutParameters, WithoutParametersUnmet, WithoutParametersUnmetAtGateways)
	}
	if r.ServiceType != "" && r.ServiceType != ServiceTypeExternalName {
		return fmt.Errorf("requirement %s: service=%s: attache reads of a Service's type only whether it is %s", r.Path, r.ServiceType, ServiceTypeExternalName)
	}
	for _, proto := range r.On {
		if proto == "" || strings.ContainsAny(proto, " ,=;*+") {
			return fmt.Errorf("requirement %s: on=%s: want listener protocols (HTTP,HTTPS)", r.Path, strings.Join(r.On, ","))
		}
	}
	if err := checkProtocols(r.On); err != nil {
		return fmt.Errorf("requirement %s: %v", r.Path, err)
	}
	for _, a := range r.Any {
		if err := a.validate(); err != nil {
			return fmt.Errorf("requirement %s: %v", r.Path, err)
		}
		if r.Of == (topology.GroupKind{}) {
			if err := parametersPathRead(a); err != nil {
				return fmt.Errorf("requirement %s: %v", r.Path, err)
			}
		}
	}
	return nil
}

// RequirementsNameServices reports whether some requirement of the kind
// applies only where the policy names a Service of a type
// (Requirement.ServiceType).
func (k *Kind) RequirementsNameServices() bool {
	return slices.ContainsFunc(k.Requirements, func(r Requirement) bool { return r.ServiceType != "" })
}

// RequirementsOnListeners reports whether some requirement of the kind is
// checked at listeners of some protocols only (Requirement.On).
func (k *Kind) RequirementsOnListeners() bool {
	return slices.ContainsFunc(k.Requirements, func(r Requirement) bool { return len(r.On) > 0 })
}

// RequirementsOf are the kind's requirements on the effective policy of
// kind of (or on the data plane's parameters, for the zero GroupKind).
func (k *Kind) RequirementsOf(of topology.GroupKind) []Requirement {
	var out []Requirement
	for _, r := range k.Requirements {
		if r.Of == of {
			out = append(out, r)
		}
	}
	return out
}

// Unmet checks the policy's requirements on one spec (the parameters, or
// another kind's effective policy at a listener; nil for none): one
// problem per requirement that applies (the policy holds a value at its
// path, the field named being the first such value's) and is not met, in
// the order of the kind's requirements. what names the spec for messages.
func (p *Policy) Unmet(rs []Requirement, spec map[string]any, what string) []FieldProblem {
	var out []FieldProblem
	for _, r := range rs {
		fields, _ := valuesOrObjects(p.Spec, r.Path)
		if len(fields) == 0 {
			continue
		}
		held := false
		for i, a := range r.Any {
			want := ""
			if i < len(r.Values) {
				want = r.Values[i]
			}
			held = held || holdsValue(spec, a, want)
		}
		alts := make([]string, len(r.Any))
		for i, a := range r.Any {
			alts[i] = r.alt(i, "spec."+string(a))
		}
		switch {
		case !r.Excludes && !held:
			out = append(out, FieldProblem{Field: fields[0], Message: fmt.Sprintf("requires %s of %s", strings.Join(alts, " or "), what), Reason: r.Reason})
		case r.Excludes && held:
			out = append(out, FieldProblem{Field: fields[0], Message: fmt.Sprintf("does not work with %s of %s", strings.Join(alts, " or "), what), Reason: r.Reason})
		}
	}
	return out
}

// Requires reports whether some requirement of the policy's kind on kind
// of applies to it: it holds a value at the requirement's path.
func (p *Policy) Requires(of topology.GroupKind) bool {
	return slices.ContainsFunc(p.Kind.RequirementsOf(of), func(r Requirement) bool {
		_, n := valuesOrObjects(p.Spec, r.Path)
		return n > 0
	})
}

// holdsValue reports whether spec holds a value at path: any value (an
// object or list too) when want is "", else a scalar whose text is want
// (true, a string, a number).
func holdsValue(spec map[string]any, path BackendRefPath, want string) bool {
	if want == "" {
		f, _ := valuesOrObjects(spec, path)
		return len(f) > 0
	}
	held := false
	names, lists := path.segments()
	walkPath(spec, "spec", names, lists, func(v any, _ string) {
		switch v.(type) {
		case nil, map[string]any, []any:
		default:
			held = held || fmt.Sprint(v) == want
		}
	})
	return held
}

// NamesService reports whether the requirement applies to spec as its
// ServiceType asks: always without one; else when a value at its Path is
// a backend reference (an object with name, and optionally namespace,
// defaulting to ns, kind Service and group "" or core) for which
// serviceIs says the Service is of that type.
func (r Requirement) NamesService(spec map[string]any, ns string, serviceIs func(ref topology.Ref, typ string) bool) bool {
	if r.ServiceType == "" {
		return true
	}
	found := false
	names, lists := r.Path.segments()
	walkPath(spec, "spec", names, lists, func(v any, _ string) {
		m, ok := v.(map[string]any)
		if !ok || found {
			return
		}
		name, _ := m["name"].(string)
		kind, _ := m["kind"].(string)
		group, _ := m["group"].(string)
		if name == "" || (kind != "" && kind != "Service") || (group != "" && group != "core") {
			return
		}
		refNs := ns
		if n, _ := m["namespace"].(string); n != "" {
			refNs = n
		}
		found = serviceIs(topology.Ref{Kind: "Service", Namespace: refNs, Name: name}, r.ServiceType)
	})
	return found
}

// valuesOrObjects are the fields at path below spec holding any value
// (an object or list as well as a scalar; null is none).
func valuesOrObjects(spec map[string]any, path BackendRefPath) (fields []string, n int) {
	names, lists := path.segments()
	walkPath(spec, "spec", names, lists, func(v any, at string) {
		if v != nil {
			fields = append(fields, at)
		}
	})
	return fields, len(fields)
}
