package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// targetTypes maps the TYPE words users type (kubectl style: singular,
// plural, short names, case-insensitive) to target kinds.
var targetTypes = map[string]topology.GroupKind{}

func init() {
	add := func(gk topology.GroupKind, words ...string) {
		for _, w := range words {
			targetTypes[w] = gk
		}
	}
	add(topology.KindGatewayClass, "gatewayclass", "gatewayclasses", "gc")
	add(topology.KindGateway, "gateway", "gateways", "gtw")
	add(topology.KindListenerSet, "listenerset", "listenersets", "lset")
	add(topology.KindXListenerSet, "xlistenerset", "xlistenersets")
	add(topology.KindHTTPRoute, "httproute", "httproutes")
	add(topology.KindGRPCRoute, "grpcroute", "grpcroutes")
	add(topology.KindTLSRoute, "tlsroute", "tlsroutes")
	add(topology.KindTCPRoute, "tcproute", "tcproutes")
	add(topology.KindUDPRoute, "udproute", "udproutes")
	add(topology.KindService, "service", "services", "svc")
	add(topology.KindNamespace, "namespace", "namespaces", "ns")
}

// parseTypeName splits TYPE/NAME.
func parseTypeName(arg string) (typ, name string, err error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || name == "" {
		return "", "", fmt.Errorf("%q is not TYPE/NAME (for example httproute/baker or service/baker)", arg)
	}
	return strings.ToLower(typ), name, nil
}

// splitSection reads NAME#SECTION, the form describe prints sections in, as
// NAME and --section SECTION; flag is the --section value.
func splitSection(name, flag string) (string, string, error) {
	n, s, ok := strings.Cut(name, "#")
	if !ok {
		return name, flag, nil
	}
	if flag != "" && flag != s {
		return "", "", fmt.Errorf("two sections given: #%s and --section %s; give one", s, flag)
	}
	return n, s, nil
}

// resolveTargetType finds the target kind for a TYPE word: a known word, a
// Kind or Kind.group, or a virtual kind some policy kind allows.
func resolveTargetType(typ string, kinds []*policy.Kind) (topology.GroupKind, error) {
	if gk, ok := targetTypes[typ]; ok {
		return gk, nil
	}
	for _, k := range kinds {
		for _, gk := range k.TargetKinds {
			if strings.EqualFold(gk.Kind, typ) || strings.EqualFold(gk.String(), typ) {
				return gk, nil
			}
		}
	}
	words := make([]string, 0, len(targetTypes))
	for w := range targetTypes {
		words = append(words, w)
	}
	sort.Strings(words)
	return topology.GroupKind{}, fmt.Errorf("unknown type %q; use one of: %s (or a kind some policy kind targets)", typ, strings.Join(words, ", "))
}

// resolvePolicyKind finds a policy kind by its kind name (any case,
// optionally with a plural "s" or ".group").
func resolvePolicyKind(typ string, kinds []*policy.Kind) (*policy.Kind, error) {
	var names []string
	base, group, _ := strings.Cut(typ, ".")
	for _, k := range kinds {
		kind := strings.ToLower(k.GroupKind.Kind)
		if group != "" && group != strings.ToLower(k.GroupKind.Group) {
			continue
		}
		if base == kind || base == pluralKind(kind) {
			return k, nil
		}
		names = append(names, strings.ToLower(k.GroupKind.Kind))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("unknown policy kind %q: no policy kinds found (a policy CRD carries the label gateway.networking.k8s.io/policy)", typ)
	}
	return nil, fmt.Errorf("unknown policy kind %q; known policy kinds: %s", typ, strings.Join(names, ", "))
}

// pluralKind is the English plural kubectl users type for a lower-case kind
// (retrypolicy: retrypolicies; gateway: gateways).
func pluralKind(kind string) string {
	switch {
	case strings.HasSuffix(kind, "y") && !strings.HasSuffix(kind, "ay") && !strings.HasSuffix(kind, "ey"):
		return strings.TrimSuffix(kind, "y") + "ies"
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"), strings.HasSuffix(kind, "ch"):
		return kind + "es"
	}
	return kind + "s"
}

// lookupPolicy finds a policy by kind and name in a namespace ("" = any; an
// ambiguous name across namespaces is an error). root is the command users
// type (attache or kubectl attache), for the hints of the errors.
func lookupPolicy(res *engine.Result, k *policy.Kind, ns, name, root string) (*engine.PolicyStatus, error) {
	var found []*engine.PolicyStatus
	var elsewhere, here []string
	for _, p := range res.Policies {
		if p.Policy.Kind != k {
			continue
		}
		r := p.Policy.Ref
		inScope := ns == "" || r.Namespace == ns
		switch {
		case r.Name == name && inScope:
			found = append(found, p)
		case r.Name == name:
			elsewhere = append(elsewhere, r.Namespace)
		case inScope:
			here = append(here, r.Name)
		}
	}
	switch len(found) {
	case 0:
		where := "any namespace"
		if ns != "" {
			where = "namespace " + ns
		}
		var hints []string
		if len(elsewhere) > 0 {
			hints = append(hints, fmt.Sprintf("it exists in namespace %s: use -n %s", strings.Join(elsewhere, ", "), elsewhere[0]))
		}
		if len(here) > 0 {
			hints = append(hints, fmt.Sprintf("%s in %s: %s", impactPlural(k.GroupKind.Kind), where, describeList(here, 10)))
		}
		hints = append(hints, fmt.Sprintf("list every policy with: %s get policies -A", root))
		return nil, fmt.Errorf("%s %q not found in %s (%s)", k.GroupKind.Kind, name, where, strings.Join(hints, "; "))
	case 1:
		return found[0], nil
	}
	nss := make([]string, len(found))
	for i, p := range found {
		nss[i] = p.Policy.Ref.Namespace
	}
	return nil, fmt.Errorf("%s %q exists in several namespaces (%s); choose one with -n", k.GroupKind.Kind, name, strings.Join(nss, ", "))
}

// kindName is a kind as shown to people: the bare Kind for the core and
// Gateway API groups, Kind.group otherwise.
func kindName(gk topology.GroupKind) string {
	if gk.Group == topology.CoreGroup || gk.Group == topology.GatewayGroup {
		return gk.Kind
	}
	return gk.String()
}

// refTitle renders a ref as "Kind namespace/name#section" with kindName.
func refTitle(r topology.Ref) string {
	return kindName(r.GroupKind()) + " " + strings.TrimPrefix(r.Short(), r.Kind+" ")
}
