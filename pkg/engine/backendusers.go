package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
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
			if !c.grantAllows(p, br.Backend) {
				continue
			}
			u := backendUser{policy: p.Ref, port: br.Port}
			if !slices.Contains(c.users[br.Backend], u) {
				c.users[br.Backend] = append(c.users[br.Backend], u)
			}
		}
	}
	// The EnvoyProxies the Gateways run with send their telemetry to
	// backends: Envoy Gateway makes each an ancestor of those backends'
	// BackendTLSPolicies.
	for _, tp := range c.telemetryProxies() {
		for _, b := range profiles.TelemetryBackendRefs(tp.params) {
			u := backendUser{policy: tp.ref}
			if !slices.Contains(c.users[b], u) {
				c.users[b] = append(c.users[b], u)
			}
		}
	}
	return c.users
}

// telemetryProxy is an EnvoyProxy some Gateway runs with, and the
// parameters it runs with (merged over its class's for a Gateway's own).
type telemetryProxy struct {
	ref    topology.Ref
	params *unstructured.Unstructured
}

// telemetryProxies are the EnvoyProxies the Gateways among the objects
// run with (gatewayParams; a Gateway whose proxy attache cannot tell
// sends nothing here), in Gateway order; a proxy several Gateways run with
// is listed for each merge of it.
func (c *computation) telemetryProxies() []telemetryProxy {
	if len(c.classParams) == 0 {
		return nil
	}
	gws := slices.SortedFunc(maps.Keys(c.gateways), func(a, b topology.Ref) int { return a.Compare(b) })
	var out []telemetryProxy
	for _, gw := range gws {
		ref, params, known := c.gatewayParams(gw)
		if !known || params == nil || slices.ContainsFunc(out, func(o telemetryProxy) bool { return o.ref == ref && o.params == params }) {
			continue
		}
		out = append(out, telemetryProxy{ref: ref, params: params})
	}
	return out
}

// policiesUsing returns the policies that use target (a backend, or a
// section of one: then those naming its port, named as backendSections
// names ports), as ancestors: Envoy Gateway makes such a policy the
// ancestor of the backend's BackendTLSPolicy, the parent of that traffic.
func (c *computation) policiesUsing(target topology.Ref) []topology.Ref {
	users := c.backendUsers()[target.Object()]
	var out []topology.Ref
	for _, u := range users {
		if target.IsSection() {
			sec := c.portSection(target.Object(), u.port)
			if ps := c.byRef[u.policy]; ps != nil && ps.p.Kind.BackendRefAncestorGateways && unnamedPort(sec) {
				// A kind naming Gateways as those ancestors selects a
				// port's policies by the port's name (NGINX Gateway
				// Fabric's selectBackendTLSPolicyForService): an unnamed
				// port has none.
				continue
			}
			if sec != target.SectionName {
				continue
			}
		}
		if !slices.Contains(out, u.policy) {
			out = append(out, u.policy)
		}
	}
	return out
}

// unnamedPort reports whether a port's section name (portSection) stands
// for a port without a name: it is its number (a port's name holds a
// letter), or "".
func unnamedPort(section string) bool {
	return strings.Trim(section, "0123456789") == ""
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

// unresolvedBackendRefs says why a policy's backendRefs do not resolve:
// msg names every reference that does not, by field; field is the first's
// and problem says the same without repeating it. All "" when they
// resolve. What breaks one (Envoy Gateway's validateExtServiceBackendReference
// and processServiceDestinationSetting): a Service or ServiceImport that is
// not among the objects, one in another namespace that no ReferenceGrant
// opens to the policy, no port, a port it lacks or has for UDP only, a
// Service of type ExternalName, a backend whose BackendTLSPolicy has no
// valid CA certificate, a backend of a kind that a feature gate of the
// policy's kind needs on while the configuration has it off (Envoy
// Gateway's Backend without extensionApis.enableBackend), an Envoy
// Gateway Backend that is not among the objects, is a dynamic resolver or
// lies in another namespace that no ReferenceGrant opens, and one
// external service whose backends mix a hostname with other endpoint
// types (mixedEndpoints). Backends of other kinds are not otherwise
// checked (attache does not read them), nor objects the caller could not
// read (Options.Unread).
func (c *computation) unresolvedBackendRefs(p *policy.Policy) (field, msg, problem string) {
	fields, whys := c.brokenBackendRefs(p)
	if len(fields) == 0 {
		return "", "", ""
	}
	bad := make([]string, len(fields))
	for i := range fields {
		bad[i] = fields[i] + ": " + whys[i]
	}
	field, problem = fields[0], "backendRef does not resolve: "+whys[0]
	if len(bad) > 1 {
		problem += "; nor do " + strings.Join(bad[1:], "; ")
	}
	return field, "backendRefs do not resolve: " + strings.Join(bad, "; "), problem
}

// brokenBackendRefs returns the fields of the policy's backendRefs that
// do not resolve (see unresolvedBackendRefs), with why, in order.
func (c *computation) brokenBackendRefs(p *policy.Policy) (fields, whys []string) {
	fields, whys = c.brokenBackendRefsEach(p)
	// The mixes judged wherever the policy applies: under cluster IP
	// routing (ClusterIPRouting) too, where a Service has no address
	// type; those under endpoint routing only are judged per Gateway
	// (mixedViaEndpoints).
	f, why := c.mixedEndpoints(p, fields, p.Kind.ClusterIPRouting != "")
	return append(fields, f...), append(whys, why...)
}

// mixedViaEndpoints are the external services of p whose backends mix
// hostnames with other endpoint types when a Service is sent to its
// endpoints (IP addresses) but not when it is sent to its cluster IP:
// with a kind's ClusterIPRouting, Envoy Gateway's translation fails for
// them through the Gateways whose parameters do not hold it only.
func (c *computation) mixedViaEndpoints(p *policy.Policy) []policy.FieldProblem {
	if p.Kind.ClusterIPRouting == "" || !p.Kind.InvalidOnUnresolvedBackendRefs || len(p.BackendRefs) == 0 {
		return nil
	}
	broken, _ := c.brokenBackendRefsEach(p)
	always, _ := c.mixedEndpoints(p, broken, true)
	fields, whys := c.mixedEndpoints(p, broken, false)
	var out []policy.FieldProblem
	for i, f := range fields {
		if !slices.Contains(always, f) {
			out = append(out, policy.FieldProblem{Field: f, Message: whys[i]})
		}
	}
	return out
}

// brokenBackendRefsEach is brokenBackendRefs of each reference alone,
// without the mixes of endpoint types across references.
func (c *computation) brokenBackendRefsEach(p *policy.Policy) (fields, whys []string) {
	for _, br := range p.BackendRefs {
		b := br.Backend
		gk := b.GroupKind()
		read := (gk == topology.KindService || gk == serviceImport || gk == topology.KindEnvoyGatewayBackend) && (c.opts.Unread == nil || !c.opts.Unread(b))
		why := ""
		if read {
			why = c.unresolvedBackendRef(p, br)
		}
		// Envoy Gateway checks a reference of weight 0 but sends it
		// nothing: it neither asks for its feature nor translates it
		// (translateExtServiceBackendRefs).
		if why == "" && !br.ZeroWeight {
			if off := p.Kind.BackendGatedOff(gk, c.features); off != "" {
				why = fmt.Sprintf("%s %s/%s cannot be used: %s", gk.Kind, b.Namespace, b.Name, off)
			} else if read {
				why = c.untranslatableBackendRef(p, br)
			}
		}
		if why != "" {
			fields, whys = append(fields, br.Field), append(whys, why)
		}
	}
	return fields, whys
}

// refsReason is the Accepted=False reason of policy p at target at when
// what its implementation cannot translate there includes its references:
// its kind's BackendRefRules.GrantReason when one of its backendRefs lies
// in another namespace that no ReferenceGrant opens and nothing but
// references refuses it (NGINX Gateway Fabric judges the grants first,
// RefNotPermitted, after its validator), else Invalid.
func (c *computation) refsReason(p *policy.Policy, at topology.Ref) string {
	k := p.Kind
	if k.BackendRefRules.GrantReason == "" || !k.InvalidOnUnresolvedBackendRefs || !c.onlyReferencesRefuse(p, at) {
		return ReasonInvalid
	}
	for _, br := range p.BackendRefs {
		if !c.grantAllows(p, br.Backend) {
			return k.BackendRefRules.GrantReason
		}
	}
	return ReasonInvalid
}

// unresolvedBackendRef says why reference br of p does not resolve, as
// Envoy Gateway's validateExtServiceBackendReference judges it: a Service
// or ServiceImport not granted, not there, without the port named (or
// none), or with it for UDP only; a Backend not there (its node: one the
// topology could not decode is not), a dynamic resolver, or not granted.
// "" when it resolves.
func (c *computation) unresolvedBackendRef(p *policy.Policy, br policy.BackendRef) string {
	b := br.Backend
	what := fmt.Sprintf("%s %s/%s", b.Kind, b.Namespace, b.Name)
	if b.GroupKind() == topology.KindEnvoyGatewayBackend {
		be, found := c.backendSections.egBackends[b]
		if _, ok := c.graph.Lookup(b); !ok {
			found = false
		}
		switch {
		case !found:
			return what + " not found"
		case be.dynamicResolver:
			return what + " is of type DynamicResolver, which Envoy Gateway does not support for a policy's external services"
		case !c.grantAllows(p, b):
			return noGrant(p, b)
		}
		return ""
	}
	names, found := c.backendSections.portNames[b]
	switch {
	case !c.grantAllows(p, b):
		return noGrant(p, b)
	case !found:
		return what + " not found"
	case br.Port == 0:
		return "names no port of " + what
	}
	if _, ok := names[br.Port]; !ok {
		return fmt.Sprintf("port %d not found on %s", br.Port, what)
	}
	if c.backendSections.nonTCP[b][br.Port] && !p.Kind.BackendRefRules.AnyProtocol {
		return fmt.Sprintf("port %d of %s is not a TCP port", br.Port, what)
	}
	return ""
}

// untranslatableBackendRef says why Envoy Gateway cannot send to resolved
// reference br of p (processExtServiceDestination, then the destination's
// Validate): a Service of type ExternalName; a backend whose
// BackendTLSPolicy has no valid CA certificate; a Backend with an endpoint
// it cannot use. "" when it can.
func (c *computation) untranslatableBackendRef(p *policy.Policy, br policy.BackendRef) string {
	b := br.Backend
	what := fmt.Sprintf("%s %s/%s", b.Kind, b.Namespace, b.Name)
	if b.GroupKind() == topology.KindEnvoyGatewayBackend {
		if bad := c.backendSections.egBackends[b].badEndpoint; bad != "" {
			return what + " has an endpoint Envoy Gateway cannot use: " + bad
		}
		return ""
	}
	rules := p.Kind.BackendRefRules
	if c.backendSections.externalName[b] && !rules.ExternalNameAllowed {
		return what + " is of type ExternalName, which has no endpoints to send to (use a backend with a hostname, such as Envoy Gateway's Backend)"
	}
	names := c.backendSections.portNames[b]
	if rules.TLSOldest {
		// A port's sectionName is its name; an unnamed port has none.
		port := names[br.Port]
		if unnamedPort(port) {
			port = ""
		}
		tls := c.oldestBackendTLSPolicy(b, port)
		if tls == nil {
			return ""
		}
		// Judged as the user's implementation judges every
		// BackendTLSPolicy, whatever other Gateways send to the backend
		// or stand above the user's targets: its kind's controllers, else
		// those of its targets' Gateways.
		ctls := map[string]bool{}
		for _, ctl := range p.Kind.Controllers {
			ctls[ctl] = true
		}
		if len(ctls) == 0 {
			c.addControllersOf(p, ctls)
		}
		why := ""
		if tls.Invalid() {
			why = "it is invalid"
		} else if chk := c.checkCARefsAs(tls, readingOf(tls, ctls)); chk != nil && (chk.invalid || chk.noValid) {
			why = chk.msg
		}
		if why == "" {
			return ""
		}
		return fmt.Sprintf("the BackendTLSPolicy %s/%s of %s, the oldest on it, is not valid (%s)", tls.Ref.Namespace, tls.Ref.Name, what, why)
	}
	if tls := c.backendTLSPolicyFor(b, names[br.Port]); tls != nil {
		// Envoy Gateway builds the connection with the backend's
		// BackendTLSPolicy: without a CA it fails.
		if chk := c.checkCARefsAs(tls, c.caReadingUsedBy(tls, b, p)); chk != nil && chk.noValid {
			return fmt.Sprintf("the BackendTLSPolicy %s/%s of %s has no valid CA certificate (%s)", tls.Ref.Namespace, tls.Ref.Name, what, chk.resolved.Message)
		}
	}
	return ""
}

// mixedEndpoints checks each external service of p (the backendRefs of one
// list, or one backendRef: those whose fields differ in their last
// segment's index only) none of whose references is broken (broken: their
// fields) as Envoy Gateway's translateExtServiceBackendRefs does
// (RouteDestination.HasMixedEndpoints): the backends it sends to (weight 0
// left out) must not mix a hostname with an IP address or a Unix socket,
// within one Backend or across them. A Service or ServiceImport counts as
// IP addresses (its EndpointSlices'), but with clusterIP (routing to its
// cluster IP: processServiceDestinationSetting) as no type unless it is
// headless; an unread Backend leaves the service unjudged. It returns
// each mixed service's field (the list's) and why.
func (c *computation) mixedEndpoints(p *policy.Policy, broken []string, clusterIP bool) (fields, whys []string) {
	type service struct {
		field string
		types []string // "Backend default/b: FQDN", in order
		set   map[addressType]bool
		skip  bool
	}
	var order []string
	services := map[string]*service{}
	for _, br := range p.BackendRefs {
		list := br.Field
		if i := strings.LastIndexByte(list, '['); i > strings.LastIndexByte(list, '.') {
			list = list[:i]
		}
		s := services[list]
		if s == nil {
			s = &service{field: list, set: map[addressType]bool{}}
			services[list] = s
			order = append(order, list)
		}
		if slices.Contains(broken, br.Field) {
			s.skip = true
		}
		if br.ZeroWeight || s.skip {
			continue
		}
		b := br.Backend
		var t addressType
		switch gk := b.GroupKind(); gk {
		case topology.KindService, serviceImport:
			if clusterIP && !c.backendSections.headless[b] {
				continue
			}
			t = addressIP
		case topology.KindEnvoyGatewayBackend:
			if c.opts.Unread != nil && c.opts.Unread(b) {
				s.skip = true
				continue
			}
			t = c.backendSections.egBackends[b].addressType
		}
		if t == "" {
			continue
		}
		s.set[t] = true
		s.types = append(s.types, fmt.Sprintf("%s %s/%s: %s", b.Kind, b.Namespace, b.Name, t))
	}
	for _, list := range order {
		s := services[list]
		if s.skip || !(s.set[addressMixed] || (s.set[addressFQDN] && len(s.set) > 1)) {
			continue
		}
		fields = append(fields, s.field)
		whys = append(whys, fmt.Sprintf("its backends mix hostnames with other endpoint types (%s), which Envoy Gateway does not support for an external service", strings.Join(s.types, "; ")))
	}
	return fields, whys
}

// oldestBackendTLSPolicy returns the policy with CA certificate references
// (BackendTLSPolicy) that NGINX Gateway Fabric uses for the connections to
// port (a section name, "" for none) of Service svc: the oldest of those
// on that port or on the whole Service, valid or not
// (selectBackendTLSPolicyForService: a policy's namespace must be the
// Service's, which a local target reference ensures); nil when none.
func (c *computation) oldestBackendTLSPolicy(svc topology.Ref, port string) *policy.Policy {
	var oldest *policy.Policy
	for _, ps := range c.policies {
		p := ps.p
		if !p.Kind.CARefs.Enabled() {
			continue
		}
		for _, t := range p.Targets {
			if t.Selector != nil || t.Group != svc.Group || t.Kind != svc.Kind || t.Name != svc.Name || t.Namespace != svc.Namespace {
				continue
			}
			if (t.SectionName == "" || t.SectionName == port) && (oldest == nil || olderBefore(p, oldest)) {
				oldest = p
			}
		}
	}
	return oldest
}

// backendTLSPolicyFor returns the policy with CA certificate references
// (BackendTLSPolicy) that Envoy Gateway uses for the connections to port
// (a section name, "" for none) of Service svc: the oldest valid one on
// that port, else the oldest on the whole Service (getBackendTLSPolicy);
// nil when none.
func (c *computation) backendTLSPolicyFor(svc topology.Ref, port string) *policy.Policy {
	var onPort, whole *policy.Policy
	for _, ps := range c.policies {
		p := ps.p
		if !p.Kind.CARefs.Enabled() || p.Invalid() {
			continue
		}
		for _, t := range p.Targets {
			if t.Selector != nil || t.Group != svc.Group || t.Kind != svc.Kind || t.Name != svc.Name || t.Namespace != svc.Namespace {
				continue
			}
			switch {
			case t.SectionName == "" && (whole == nil || olderBefore(p, whole)):
				whole = p
			case t.SectionName != "" && t.SectionName == port && (onPort == nil || olderBefore(p, onPort)):
				onPort = p
			}
		}
	}
	if onPort != nil {
		return onPort
	}
	return whole
}
