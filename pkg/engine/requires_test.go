package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
)

// geoDocs: Envoy Gateway's GatewayClass eg, whose EnvoyProxy sys/geo has
// a MaxMind provider with the city database (provider is its YAML);
// Gateway g with listeners a (a ClientTrafficPolicy detecting the client
// IP from a header: detection is its YAML), b (none) and t (TCP, none);
// HTTPRoutes ra on a, rab on a and b; Gateway plain of a class without
// EnvoyProxy, route rp on it, whose listener detects the client IP; a
// SecurityPolicy on Gateway g's listeners a and t (TCP, not checked).
func geoDocs(provider, detection string) string {
	var b strings.Builder
	b.WriteString("---" + crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies"))
	b.WriteString("---" + crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"))
	b.WriteString(classDoc("eg", egController, "sys/geo") + classDoc("plain", egController, ""))
	b.WriteString(envoyProxyDoc("sys", "geo", "{geoIP: {provider: "+provider+"}}"))
	b.WriteString(gatewayDoc("g", "eg", "[{name: a, protocol: HTTP, port: 80}, {name: b, protocol: HTTP, port: 8080}, {name: t, protocol: TCP, port: 9000}]", ""))
	b.WriteString(gatewayDoc("plain", "plain", "[{name: a, protocol: HTTP, port: 80}]", ""))
	for name, parents := range map[string]string{"ra": "{name: g, sectionName: a}", "rab": "{name: g}", "rp": "{name: plain}"} {
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: %s, namespace: default}\nspec: {parentRefs: [%s], rules: [{}]}\n", name, parents)
	}
	ctp := func(name, gw, section, body string) string {
		return "---" + pol(egV, "ClientTrafficPolicy", name, 0, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: %s, sectionName: %s}]\n%s", gw, section, body))
	}
	b.WriteString(ctp("detect-a", "g", "a", "clientIPDetection: "+detection))
	b.WriteString(ctp("detect-plain", "plain", "a", "clientIPDetection: {customHeader: {name: x-real-ip}}"))
	sp := func(name, route, geo string) string {
		return "---" + pol(egV, "SecurityPolicy", name, 0, fmt.Sprintf("targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: %s}]\nauthorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [%s]}}]}", route, geo))
	}
	b.WriteString(sp("city-a", "ra", "{country: US, city: Seattle}"))
	b.WriteString(sp("city-ab", "rab", "{city: Seattle}"))
	b.WriteString(sp("plain", "rp", "{city: Seattle}"))
	b.WriteString("---" + pol(egV, "SecurityPolicy", "on-listeners", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: a}, {group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: t}]
authorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [{city: Seattle}]}}]}`))
	return b.String()
}

// failingVia lists, short, the Gateways and listeners through which a
// policy Invalid in place fails the requests (PolicyStatus.InPlaceInvalidVia).
func failingVia(st *engine.PolicyStatus) []string {
	var out []string
	for _, ls := range st.InPlaceInvalidVia {
		for _, l := range ls {
			out = append(out, l.Short())
		}
	}
	return out
}

const cityDB = "{type: MaxMind, maxMind: {cityDbSource: {local: {path: /db/city.mmdb}}}}"

// Envoy Gateway authorizes by client IP location only where the listener
// detects the client IP (a ClientTrafficPolicy's clientIPDetection, without
// trusted CIDRs) and the EnvoyProxy the Gateway runs with has a GeoIP
// provider with the databases the locations read: otherwise the policy is
// Invalid in place, failing through the listeners (or Gateways) lacking
// them. A TCP listener is not checked. A Gateway running with the
// configuration's default spec is judged as if it set no provider, unless
// the configuration says it does.
func TestGeoIPRequirements(t *testing.T) {
	res := engine.Compute(decodeDocs(t, geoDocs(cityDB, "{customHeader: {name: x-real-ip}}")), engine.Options{})
	want(t, "city-a", status(t, res, "city-a", "Accepted"), "True/Accepted")
	// Its TCP listener is not checked.
	want(t, "on-listeners", acceptedByAncestor(t, res, "on-listeners"), map[string]string{"Gateway default/g#a": "True/Accepted", "Gateway default/g#t": "True/Accepted"})
	want(t, "plain", status(t, res, "plain", "Accepted"), "False/Invalid")
	if msg := policyStatusOf(t, res, "plain").Ancestors[0].Conditions[0].Message; !strings.Contains(msg, "requires spec.geoIP.provider.maxMind of the configuration's default EnvoyProxy spec") {
		t.Errorf("plain: %q", msg)
	}
	withGeo := engine.Compute(decodeDocs(t, geoDocs(cityDB, "{customHeader: {name: x-real-ip}}")), engine.Options{Features: policy.Features{"EnvoyGateway.envoyProxy.geoIP": {On: true}}})
	want(t, "plain, the default spec sets geoIP", status(t, withGeo, "plain", "Accepted"), "True/Accepted")
	want(t, "city-ab", status(t, res, "city-ab", "Accepted"), "False/Invalid")
	msg := policyStatusOf(t, res, "city-ab").Ancestors[0].Conditions[0].Message
	want(t, "city-ab message", msg, "requirements not met: spec.authorization.rules[0].principal.clientIPGeoLocations[0]: requires spec.clientIPDetection.xForwardedFor or spec.clientIPDetection.customHeader or spec.clientIPDetection.directSourceIP of the ClientTrafficPolicy in effect at Gateway default/g#b")
	want(t, "city-ab fails via", failingVia(policyStatusOf(t, res, "city-ab")), []string{"Gateway default/g#b"})

	// Trusted CIDRs are not for GeoIP.
	res = engine.Compute(decodeDocs(t, geoDocs(cityDB, "{xForwardedFor: {trustedCIDRs: [10.0.0.0/8]}}")), engine.Options{})
	if msg := policyStatusOf(t, res, "city-a").Ancestors[0].Conditions[0].Message; !strings.Contains(msg, "does not work with spec.clientIPDetection.xForwardedFor.trustedCIDRs of the ClientTrafficPolicy in effect at Gateway default/g#a") {
		t.Errorf("city-a with trusted CIDRs: %q", msg)
	}
	// No country database (nor city): country is not read.
	res = engine.Compute(decodeDocs(t, geoDocs("{type: MaxMind, maxMind: {asnDbSource: {local: {path: /db/asn.mmdb}}}}", "{customHeader: {name: x-real-ip}}")), engine.Options{})
	msg = policyStatusOf(t, res, "city-a").Ancestors[0].Conditions[0].Message
	for _, w := range []string{
		"the data plane does not allow: spec.authorization.rules[0].principal.clientIPGeoLocations[0].country: requires spec.geoIP.provider.maxMind.countryDbSource or spec.geoIP.provider.maxMind.cityDbSource of EnvoyProxy sys/geo, which Gateway default/g runs with",
		"spec.authorization.rules[0].principal.clientIPGeoLocations[0].city: requires spec.geoIP.provider.maxMind.cityDbSource of EnvoyProxy sys/geo",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("city-a without databases: %q lacks %q", msg, w)
		}
	}
	wantProblem(t, res, "city-a", "spec.authorization.rules[0].principal.clientIPGeoLocations[0].country", "the data plane does not allow it: requires spec.geoIP.provider.maxMind.countryDbSource")
}

// An external authorizer failing open does not make the policy fail
// everywhere: its GeoIP requirement, unmet at listener b, fails the
// requests through b only, and both are said.
func TestGeoIPRequirementsWithFailOpen(t *testing.T) {
	docs := geoDocs(cityDB, "{customHeader: {name: x-real-ip}}") +
		"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: rab2, namespace: default}\nspec: {parentRefs: [{name: g}], rules: [{}]}\n" +
		"---" + pol(egV, "SecurityPolicy", "open", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rab2}]
extAuth: {failOpen: true, http: {backendRefs: [{name: nosvc, port: 80}]}}
authorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [{city: Seattle}]}}]}`)
	res := engine.Compute(decodeDocs(t, docs), engine.Options{})
	st := policyStatusOf(t, res, "open")
	msg := st.Ancestors[0].Conditions[0].Message
	if !strings.Contains(msg, "failing open") || !strings.Contains(msg, "requirements not met") {
		t.Errorf("open: %q, want both the part failing open and the requirement", msg)
	}
	want(t, "open fails via", failingVia(st), []string{"Gateway default/g#b"})
}

// A ClientTrafficPolicy detecting the client IP on listener b, added and
// removed, makes city-ab valid and Invalid again, as Compute says.
func TestGeoIPRequirementsIncremental(t *testing.T) {
	base := decodeDocs(t, geoDocs(cityDB, "{customHeader: {name: x-real-ip}}"))
	withB := append(append([]engine.Object(nil), base...), decodeDocs(t, "---"+pol(egV, "ClientTrafficPolicy", "detect-b", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: b}]\nclientIPDetection: {xForwardedFor: {numTrustedHops: 1}}"))...)
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct {
		what string
		objs []engine.Object
		want string
	}{{"none on b", base, "False/Invalid"}, {"detect on b", withB, "True/Accepted"}, {"removed", base, "False/Invalid"}} {
		res := in.Compute(s.objs)
		want(t, s.what, status(t, res, "city-ab", "Accepted"), s.want)
		full := engine.Compute(s.objs, engine.Options{})
		want(t, s.what+" as Compute", policyStatusOf(t, res, "city-ab"), policyStatusOf(t, full, "city-ab"))
	}
}

// A route policy with a merge type is judged merged with the policy above,
// as Envoy Gateway translates it: the Gateway policy's GeoIP locations,
// kept by the merge, need detection at listener b too; a merge that
// replaces the authorization rules does not.
func TestGeoIPRequirementsMerged(t *testing.T) {
	extra := func(body string) string {
		return geoDocs(cityDB, "{customHeader: {name: x-real-ip}}") +
			"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: rm, namespace: default}\nspec: {parentRefs: [{name: g}], rules: [{}]}\n" +
			"---" + pol(egV, "SecurityPolicy", "gw-geo", 0, `targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
authorization: {defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [{city: Seattle}]}}]}`) +
			"---" + pol(egV, "SecurityPolicy", "m", 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rm}]\n"+body)
	}
	res := engine.Compute(decodeDocs(t, extra("mergeType: StrategicMerge\ncors: {allowOrigins: [\"https://a.example\"]}")), engine.Options{})
	st := policyStatusOf(t, res, "m")
	if msg := st.Ancestors[0].Conditions[0].Message; !strings.Contains(msg, "of the ClientTrafficPolicy in effect at Gateway default/g#b, merged (StrategicMerge) with the policies above it") {
		t.Errorf("m: %q", msg)
	}
	want(t, "m fails via", failingVia(st), []string{"Gateway default/g#b"})
	res = engine.Compute(decodeDocs(t, extra("mergeType: JSONMerge\nauthorization: {rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}]}")), engine.Options{})
	want(t, "m replacing the rules", status(t, res, "m", "Accepted"), "True/Accepted")
	// A merge type alone: the merged policy is the Gateway's.
	res = engine.Compute(decodeDocs(t, extra("mergeType: JSONMerge")), engine.Options{})
	want(t, "m, merge type alone, fails via", failingVia(policyStatusOf(t, res, "m")), []string{"Gateway default/g#b"})
}

// The Gateway policy gaining and losing its GeoIP locations changes the
// merging route policy's verdict, incrementally as Compute says.
func TestGeoIPRequirementsMergedIncremental(t *testing.T) {
	docs := func(gwAuth string) []engine.Object {
		return decodeDocs(t, geoDocs(cityDB, "{customHeader: {name: x-real-ip}}")+
			"---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: rm, namespace: default}\nspec: {parentRefs: [{name: g}], rules: [{}]}\n"+
			"---"+pol(egV, "SecurityPolicy", "gw-geo", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]\nauthorization: "+gwAuth)+
			"---"+pol(egV, "SecurityPolicy", "m", 1, "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rm}]\nmergeType: StrategicMerge\ncors: {allowOrigins: [\"https://a.example\"]}"))
	}
	geo := "{defaultAction: Deny, rules: [{action: Allow, principal: {clientIPGeoLocations: [{city: Seattle}]}}]}"
	cidr := "{defaultAction: Deny, rules: [{action: Allow, principal: {clientCIDRs: [10.0.0.0/8]}}]}"
	in := engine.NewIncremental(engine.Options{})
	for _, s := range []struct{ what, auth, want string }{{"geo", geo, "False/Invalid"}, {"cidr", cidr, "True/Accepted"}, {"geo again", geo, "False/Invalid"}} {
		objs := docs(s.auth)
		res := in.Compute(objs)
		want(t, s.what, status(t, res, "m", "Accepted"), s.want)
		want(t, s.what+" as Compute", policyStatusOf(t, res, "m"), policyStatusOf(t, engine.Compute(objs, engine.Options{}), "m"))
	}
}

// A ClientTrafficPolicy change recomputes everything only while some
// SecurityPolicy holds GeoIP locations (its status reads it).
func TestGeoIPRequirementsDependents(t *testing.T) {
	detectB := "---" + pol(egV, "ClientTrafficPolicy", "detect-b", 0, "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g, sectionName: b}]\nclientIPDetection: {xForwardedFor: {numTrustedHops: 1}}")
	for _, c := range []struct {
		name string
		docs string
		full bool
	}{
		{"with GeoIP", geoDocs(cityDB, "{customHeader: {name: x-real-ip}}"), true},
		{"without", strings.ReplaceAll(geoDocs(cityDB, "{customHeader: {name: x-real-ip}}"), "clientIPGeoLocations", "clientCIDRs"), false},
	} {
		in := engine.NewIncremental(engine.Options{})
		in.Compute(decodeDocs(t, c.docs))
		in.Compute(decodeDocs(t, c.docs+detectB))
		if ch := in.LastChange(); ch.Full != c.full || (c.full && !strings.Contains(ch.Reason, "reads ClientTrafficPolicy policies at its listeners")) {
			t.Errorf("%s: Full %v (%q), want %v", c.name, ch.Full, ch.Reason, c.full)
		}
	}
}
