// Package gen generates synthetic Gateway API topologies, as unstructured
// objects, for benchmarks and scale tests.
package gen

import (
	"fmt"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Params sizes a generated topology. Negative sizes count as zero, and
// Namespaces as at least one.
type Params struct {
	// Gateways is the number of Gateways, all in namespace "infra".
	Gateways int
	// ListenersPerGateway is the number of HTTP listeners of each Gateway,
	// l0, l1, ..., on ports 8000, 8001, ...
	ListenersPerGateway int
	// Routes is the number of HTTPRoutes, two rules each.
	Routes int
	// Services is the number of Services, ports http/80 and admin/9000.
	Services int
	// Namespaces is the number of namespaces ns-0, ns-1, ... that hold
	// the routes and Services.
	Namespaces int
	// Seed drives the random choices (namespace labels, which Service each
	// rule starts from); a topology is a function of Params.
	Seed int64
}

// Namespace of the Gateways, and name of the GatewayClass.
const (
	InfraNamespace = "infra"
	ClassName      = "bench"
)

// Topology returns a GatewayClass; a Namespace object (with labels) for
// "infra" and for each of ns-0..ns-<Namespaces-1>; Gateways gw-0.. in
// "infra", whose listeners admit HTTPRoutes from all namespaces and have no
// hostname; Services svc-<j> in ns-<j mod Namespaces>; and HTTPRoutes
// route-<i> in ns-<i mod Namespaces>, each with one parentRef, without
// sectionName, to gw-<i mod Gateways> (so attached to all its listeners;
// none when there are no Gateways) and two rules with one backendRef each
// to a Service of the route's namespace (none when it has no Service).
// Within a namespace the rules take its Services in turn, from a random
// start, so that every Service is a backend when there are at least as
// many rules as Services. Objects come in that order, and are the same for
// the same Params.
func Topology(p Params) []*unstructured.Unstructured {
	p.Gateways, p.ListenersPerGateway = max(p.Gateways, 0), max(p.ListenersPerGateway, 0)
	p.Routes, p.Services, p.Namespaces = max(p.Routes, 0), max(p.Services, 0), max(p.Namespaces, 1)
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x617474616368)) //nolint:gosec // benchmark data, not security
	out := make([]*unstructured.Unstructured, 0, 2+p.Namespaces+p.Gateways+p.Services+p.Routes)

	out = append(out, object("gateway.networking.k8s.io/v1", "GatewayClass", "", ClassName, nil, map[string]any{
		"controllerName": "attache.dev/bench",
	}))

	tiers := []string{"frontend", "backend", "data"}
	out = append(out, object("v1", "Namespace", "", InfraNamespace, map[string]any{"tier": "infra"}, nil))
	for n := range p.Namespaces {
		out = append(out, object("v1", "Namespace", "", nsName(n), map[string]any{
			"team": fmt.Sprintf("team-%d", rng.IntN(10)),
			"tier": tiers[rng.IntN(len(tiers))],
		}, nil))
	}

	for g := range p.Gateways {
		listeners := make([]any, p.ListenersPerGateway)
		for l := range listeners {
			listeners[l] = map[string]any{
				"name":     fmt.Sprintf("l%d", l),
				"port":     int64(8000 + l),
				"protocol": "HTTP",
				"allowedRoutes": map[string]any{
					"namespaces": map[string]any{"from": "All"},
				},
			}
		}
		out = append(out, object("gateway.networking.k8s.io/v1", "Gateway", InfraNamespace, gwName(g), nil, map[string]any{
			"gatewayClassName": ClassName,
			"listeners":        listeners,
		}))
	}

	// byNS lists each namespace's Services; start is where its rules begin
	// taking them.
	byNS := make([][]string, p.Namespaces)
	for s := range p.Services {
		name := fmt.Sprintf("svc-%d", s)
		byNS[s%p.Namespaces] = append(byNS[s%p.Namespaces], name)
		out = append(out, object("v1", "Service", nsName(s%p.Namespaces), name, map[string]any{"app": name}, map[string]any{
			"selector": map[string]any{"app": name},
			"ports": []any{
				map[string]any{"name": "http", "port": int64(80), "targetPort": int64(8080), "protocol": "TCP"},
				map[string]any{"name": "admin", "port": int64(9000), "targetPort": int64(9000), "protocol": "TCP"},
			},
		}))
	}
	next := make([]int, p.Namespaces)
	for n := range next {
		if len(byNS[n]) > 0 {
			next[n] = rng.IntN(len(byNS[n]))
		}
	}

	for r := range p.Routes {
		n := r % p.Namespaces
		name := fmt.Sprintf("route-%d", r)
		spec := map[string]any{}
		if p.Gateways > 0 {
			spec["parentRefs"] = []any{map[string]any{"name": gwName(r % p.Gateways), "namespace": InfraNamespace}}
		}
		rules := make([]any, 2)
		for i := range rules {
			rule := map[string]any{
				"matches": []any{map[string]any{"path": map[string]any{
					"type": "PathPrefix", "value": fmt.Sprintf("/%s/%d", name, i),
				}}},
			}
			if svcs := byNS[n]; len(svcs) > 0 {
				rule["backendRefs"] = []any{map[string]any{"name": svcs[next[n]], "port": int64(80)}}
				next[n] = (next[n] + 1) % len(svcs)
			}
			rules[i] = rule
		}
		spec["rules"] = rules
		out = append(out, object("gateway.networking.k8s.io/v1", "HTTPRoute", nsName(n), name, map[string]any{"app": name}, spec))
	}
	return out
}

func nsName(n int) string { return fmt.Sprintf("ns-%d", n) }
func gwName(g int) string { return fmt.Sprintf("gw-%d", g) }

// object builds an unstructured object holding only the types a JSON
// decoder yields (string, int64, map[string]any, []any), so that it is
// what a real input would be.
func object(apiVersion, kind, namespace, name string, labels, spec map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	if labels != nil {
		md["labels"] = labels
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	if spec != nil {
		obj["spec"] = spec
		md["generation"] = int64(1)
	}
	return &unstructured.Unstructured{Object: obj}
}
