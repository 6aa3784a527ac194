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
// ambiguous name across namespaces is an error).
func lookupPolicy(res *engine.Result, k *policy.Kind, ns, name string) (*engine.PolicyStatus, error) {
	var found []*engine.PolicyStatus
	for _, p := range res.Policies {
		if p.Policy.Kind == k && p.Policy.Ref.Name == name && (ns == "" || p.Policy.Ref.Namespace == ns) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		where := "any namespace"
		if ns != "" {
			where = "namespace " + ns
		}
		return nil, fmt.Errorf("%s %q not found in %s (list them with: attache get policies -A)", k.GroupKind.Kind, name, where)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%s %q exists in several namespaces; choose one with -n", k.GroupKind.Kind, name)
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
