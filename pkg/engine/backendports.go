package engine

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// serviceImport is the Multi-Cluster Services API's ServiceImport, whose
// ports are named as a Service's are.
var serviceImport = topology.KindServiceImport

// backendSections records, per route rule section, the sections of the
// backends its backendRefs use: per backend object, the section each
// backendRef's port names. A Service's (or ServiceImport's) port is named
// by its name, or by its number when it has none (as package gatewayapi
// names a Service's sections); any other backend's port by its number
// (Envoy Gateway's reading of its Backend). A backendRef without a port,
// or whose port the Service does not have, uses no section. A
// ServiceImport that is not among the objects uses anySection: its port
// names are unknown, so every section of it counts as used.
type backendSections struct {
	byRule map[topology.Ref]map[topology.Ref][]string
	// portNames are the Services' and ServiceImports' port names by
	// number.
	portNames map[topology.Ref]map[int64]string
	// nonTCP are their port numbers with no TCP entry (UDP or SCTP
	// only): no HTTP or gRPC service listens there.
	nonTCP map[topology.Ref]map[int64]bool
	// externalName are the Services of type ExternalName, which have
	// no endpoints of their own.
	externalName map[topology.Ref]bool
	// headless are the Services without a cluster IP ("None") and the
	// ServiceImports without IPs, which Envoy Gateway sends to their
	// endpoints even under cluster IP routing.
	headless map[topology.Ref]bool
	// egBackends are Envoy Gateway's Backends among the objects.
	egBackends map[topology.Ref]egBackend
}

// egBackend is what Envoy Gateway's translator reads of a Backend to
// decide whether a policy's external service may use it
// (validateExtServiceBackendReference, processBackendDestinationSetting):
// whether it is a dynamic resolver, and the type of its endpoints'
// addresses.
type egBackend struct {
	dynamicResolver bool
	addressType     addressType
	// badEndpoint says which endpoint Envoy Gateway cannot send to
	// (DestinationEndpoint.Validate: a port 0, a host that is neither a
	// DNS subdomain nor an IP address; an ip entry whose address does not
	// parse, which it cannot translate), "" when none.
	badEndpoint string
}

// addressType is the type of a destination's addresses, as Envoy
// Gateway's ir.DestinationAddressType: every endpoint an IP address, a
// hostname or a Unix socket, or a mix (with a hostname: mixed; without:
// static). "" when it has no endpoints.
type addressType string

const (
	addressIP     addressType = "IP"
	addressFQDN   addressType = "FQDN"
	addressUDS    addressType = "UDS"
	addressStatic addressType = "STATIC"
	addressMixed  addressType = "MIXED"
)

// readEGBackend reads a Backend's type and the address type of its
// endpoints as processBackendDestinationSetting does: an ip entry that is
// no IP address counts as no type, so its Backend has one type only when
// every endpoint has it.
func readEGBackend(u *unstructured.Unstructured) egBackend {
	var b egBackend
	if t, _, _ := unstructured.NestedString(u.Object, "spec", "type"); t == "DynamicResolver" {
		b.dynamicResolver = true
	}
	eps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
	counts := map[addressType]int{}
	bad := func(i int, format string, args ...any) {
		if b.badEndpoint == "" {
			b.badEndpoint = fmt.Sprintf("spec.endpoints[%d]", i) + fmt.Sprintf(format, args...)
		}
	}
	for i, e := range eps {
		m, _ := e.(map[string]any)
		var host string
		var port any
		switch {
		case m["ip"] != nil:
			host, _, _ = unstructured.NestedString(m, "ip", "address")
			port, _, _ = unstructured.NestedFieldNoCopy(m, "ip", "port")
			if net.ParseIP(host) == nil {
				bad(i, ".ip.address %q is not an IP address", host)
				continue
			}
			counts[addressIP]++
		case m["fqdn"] != nil:
			host, _, _ = unstructured.NestedString(m, "fqdn", "hostname")
			port, _, _ = unstructured.NestedFieldNoCopy(m, "fqdn", "port")
			counts[addressFQDN]++
			if _, err := netip.ParseAddr(host); len(validation.IsDNS1123Subdomain(host)) > 0 && err != nil {
				bad(i, ".fqdn.hostname %q is neither a DNS subdomain nor an IP address", host)
			}
		case m["unix"] != nil:
			counts[addressUDS]++
			continue
		default:
			continue
		}
		if n, ok := intField(port); !ok || n == 0 {
			bad(i, " has no port (or port 0)")
		}
	}
	for t, n := range counts {
		if n == len(eps) {
			b.addressType = t
		}
	}
	if len(counts) > 0 && b.addressType == "" {
		b.addressType = addressStatic
		if counts[addressFQDN] > 0 {
			b.addressType = addressMixed
		}
	}
	return b
}

// anySection stands for every section of a backend whose ports are unknown.
const anySection = "*"

// uses reports whether rule uses section of backend.
func (bs *backendSections) uses(rule, backend topology.Ref, section string) bool {
	used := bs.byRule[rule][backend]
	return slices.Contains(used, section) || slices.Contains(used, anySection)
}

// readBackendSections reads what backendSections holds from the routes and
// Services among objs and the ServiceImports imports. Malformed entries are
// skipped (package gatewayapi reports them).
func readBackendSections(objs, imports []*unstructured.Unstructured) *backendSections {
	portNames := map[topology.Ref]map[int64]string{}
	nonTCP := map[topology.Ref]map[int64]bool{}
	externalName, headless := map[topology.Ref]bool{}, map[topology.Ref]bool{}
	egBackends := map[topology.Ref]egBackend{}
	for _, u := range slices.Concat(objs, imports) {
		gk := gkOf(u)
		if gk == topology.KindEnvoyGatewayBackend {
			egBackends[topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}] = readEGBackend(u)
			continue
		}
		if gk != topology.KindService && gk != serviceImport {
			continue
		}
		ref := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		if t, _, _ := unstructured.NestedString(u.Object, "spec", "type"); t == "ExternalName" && gk == topology.KindService {
			externalName[ref] = true
		}
		if ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP"); ip == "None" && gk == topology.KindService {
			headless[ref] = true
		}
		if ips, _, _ := unstructured.NestedSlice(u.Object, "spec", "ips"); len(ips) == 0 && gk == serviceImport {
			headless[ref] = true
		}
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		names, tcp := map[int64]string{}, map[int64]bool{}
		for _, p := range ports {
			m, ok := p.(map[string]any)
			if !ok {
				continue
			}
			n, ok := intField(m["port"])
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			if name == "" {
				name = strconv.FormatInt(n, 10)
			}
			if _, dup := names[n]; !dup {
				names[n] = name
			}
			if proto, _ := m["protocol"].(string); proto == "" || proto == "TCP" {
				tcp[n] = true
			}
		}
		for n := range names {
			if !tcp[n] {
				if nonTCP[ref] == nil {
					nonTCP[ref] = map[int64]bool{}
				}
				nonTCP[ref][n] = true
			}
		}
		portNames[ref] = names
	}
	out := map[topology.Ref]map[topology.Ref][]string{}
	for _, u := range objs {
		gk := gkOf(u)
		if !slices.Contains(topology.RouteKinds, gk) {
			continue
		}
		route := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
		names := make([]*gwv1.SectionName, len(rules))
		for i, r := range rules {
			if m, ok := r.(map[string]any); ok {
				if n, ok := m["name"].(string); ok && n != "" {
					names[i] = (*gwv1.SectionName)(&n)
				}
			}
		}
		sections, _ := gatewayapi.RuleSections(names)
		for i, r := range rules {
			m, ok := r.(map[string]any)
			if !ok || sections[i] == "" {
				continue
			}
			brs, _ := m["backendRefs"].([]any)
			rule := route
			rule.SectionName = sections[i]
			for _, b := range brs {
				bm, ok := b.(map[string]any)
				if !ok {
					continue
				}
				port, ok := intField(bm["port"])
				if !ok {
					continue
				}
				backend := gatewayapi.BackendOf(route.Namespace, backendObjectRef(bm))
				section := strconv.FormatInt(port, 10)
				if names, ok := portNames[backend]; ok {
					if section, ok = names[port]; !ok {
						continue
					}
				} else if bgk := backend.GroupKind(); bgk == topology.KindService {
					continue // not among the objects: never linked
				} else if _, found := egBackends[backend]; bgk == topology.KindEnvoyGatewayBackend && !found {
					continue // likewise
				} else if bgk == serviceImport {
					section = anySection
				}
				if out[rule] == nil {
					out[rule] = map[topology.Ref][]string{}
				}
				if !slices.Contains(out[rule][backend], section) {
					out[rule][backend] = append(out[rule][backend], section)
				}
			}
		}
	}
	return &backendSections{byRule: out, portNames: portNames, nonTCP: nonTCP, externalName: externalName, headless: headless, egBackends: egBackends}
}

// backendObjectRef reads the group, kind, name and namespace of an
// unstructured backendRef (the port is read by the caller).
func backendObjectRef(m map[string]any) gwv1.BackendObjectReference {
	var br gwv1.BackendObjectReference
	if s, ok := m["group"].(string); ok {
		br.Group = (*gwv1.Group)(&s)
	}
	if s, ok := m["kind"].(string); ok {
		br.Kind = (*gwv1.Kind)(&s)
	}
	if s, ok := m["namespace"].(string); ok {
		br.Namespace = (*gwv1.Namespace)(&s)
	}
	if s, ok := m["name"].(string); ok {
		br.Name = gwv1.ObjectName(s)
	}
	return br
}

// intField reads an integer of an unstructured object (int64 from YAML or
// JSON decoding, float64 from encoding/json into any).
func intField(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}
