package engine_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestContextsAgainstPathEnumeration checks the engine's dynamic programme
// against the literal reading of GEP-713's abstract process and decisions 1
// to 5, on random small topologies: enumerate every root-to-target path of
// the graph, contract it to the kind's hierarchy, place each Namespace
// directly above the first object of that namespace, stack the policies of
// each level (older first, then by namespace/name), and fold the stack (or,
// for strategy none, take the established policy whole). Every (target,
// path) must get exactly the engine's effective spec and stack, and the
// Affected sets must be the policies that set a field somewhere (decision 8).
func TestContextsAgainstPathEnumeration(t *testing.T) {
	iterations := 400
	if testing.Short() {
		iterations = 50
	}
	compared := 0
	for seed := int64(1); seed <= int64(iterations); seed++ {
		objs := randomWorld(rand.New(rand.NewSource(seed)))
		res := engine.Compute(objs, engine.Options{})
		want, wantAffected, ok := enumerateContexts(res)
		if !ok {
			continue // too many paths for the oracle
		}
		got, gotAffected := engineContexts(res)
		compared += len(want)
		if !reflect.DeepEqual(keys(got), keys(want)) {
			t.Fatalf("seed %d: contexts differ\n got: %s\nwant: %s\n%s", seed, strings.Join(keys(got), "\n      "), strings.Join(keys(want), "\n      "), dumpWorld(objs))
		}
		for k, w := range want {
			if g := got[k]; !reflect.DeepEqual(g, w) {
				t.Fatalf("seed %d: context %s\n got: %+v\nwant: %+v\n%s", seed, k, g, w, dumpWorld(objs))
			}
		}
		if !reflect.DeepEqual(gotAffected, wantAffected) {
			t.Fatalf("seed %d: affected\n got: %v\nwant: %v\n%s", seed, gotAffected, wantAffected, dumpWorld(objs))
		}
	}
	t.Logf("%d contexts compared over %d worlds", compared, iterations)
	if compared < iterations {
		t.Fatalf("only %d contexts compared over %d worlds: the generator is too sparse to test anything", compared, iterations)
	}
}

// outcome is what a (kind, target, path) context must hold.
type outcome struct {
	Spec  map[string]any
	Stack []string // policy@level, most general first
}

func keys(m map[string]outcome) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func pathKey(kind *policy.Kind, path []topology.Ref) string {
	parts := make([]string, len(path))
	for i, r := range path {
		parts[i] = r.String()
	}
	return kind.String() + " | " + strings.Join(parts, " > ")
}

func attKey(pol, at topology.Ref) string { return pol.Namespace + "/" + pol.Name + "@" + at.String() }

// engineContexts flattens the engine's result into the oracle's shape.
func engineContexts(res *engine.Result) (map[string]outcome, map[string][]string) {
	out := map[string]outcome{}
	for _, e := range res.Effective {
		if e.Kind.Class != policy.Inherited {
			continue
		}
		for _, c := range e.Contexts {
			var stack []string
			for _, s := range c.Stack {
				stack = append(stack, attKey(s.Policy, s.At))
			}
			c.Paths(func(p []topology.Ref) bool {
				out[pathKey(e.Kind, p)] = outcome{Spec: c.Spec, Stack: stack}
				return true
			})
		}
	}
	affected := map[string][]string{}
	for _, a := range res.Affected {
		if a.Kind.Class != policy.Inherited {
			continue
		}
		k := a.Kind.String() + " " + a.Target.String()
		for _, p := range a.Policies {
			affected[k] = append(affected[k], p.Namespace+"/"+p.Name)
		}
	}
	return out, affected
}

// oracleAtt is a policy attached to a level: a node or a namespace.
type oracleAtt struct {
	p  *policy.Policy
	at topology.Ref
}

// enumerateContexts is the oracle: it recomputes every context of every
// Inherited kind by enumerating paths. It reports false when a world has
// too many paths to enumerate.
func enumerateContexts(res *engine.Result) (map[string]outcome, map[string][]string, bool) {
	g := res.Graph
	out := map[string]outcome{}
	affected := map[string]map[string]bool{}
	for _, k := range res.Kinds {
		if k.Class != policy.Inherited {
			continue
		}
		// Attachments: every declared target of a valid policy that
		// exists and is a level of the kind (the generator makes no
		// cross-namespace targets and no sections of effective targets).
		atNode := map[topology.Ref][]*policy.Policy{}
		for _, ps := range res.Policies {
			p := ps.Policy
			if p.Kind != k || p.Invalid() {
				continue
			}
			for _, t := range p.Targets {
				r := topology.Ref{Group: t.Group, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, SectionName: t.SectionName}
				if topology.ClusterScoped(r.GroupKind()) {
					r.Namespace = ""
				}
				if _, ok := g.Lookup(r); !ok || !k.AllowsTarget(r.GroupKind()) {
					continue
				}
				if !slices.Contains(atNode[r], p) {
					atNode[r] = append(atNode[r], p)
				}
			}
		}
		for _, l := range atNode {
			sort.SliceStable(l, func(i, j int) bool {
				if !l[i].Created.Equal(l[j].Created) {
					return l[i].Created.Before(l[j].Created)
				}
				return l[i].Ref.Namespace+"/"+l[i].Ref.Name < l[j].Ref.Namespace+"/"+l[j].Ref.Name
			})
		}
		inH := func(r topology.Ref) bool { return k.InHierarchy(r.GroupKind()) }
		withNs := k.InHierarchy(topology.KindNamespace)
		// Every path of the full graph from a root, contracted to the
		// kind's hierarchy, recorded at each effective target.
		paths := map[string][]topology.Ref{}
		count := 0
		var walk func(id topology.NodeID, full []topology.Ref) bool
		walk = func(id topology.NodeID, full []topology.Ref) bool {
			if count++; count > 20000 {
				return false
			}
			n := g.Node(id)
			full = append(full, n.Ref)
			if !n.Ref.IsSection() && inH(n.Ref) && k.IsEffectiveTarget(n.Ref.GroupKind()) {
				var contracted []topology.Ref
				seenNs := map[string]bool{}
				for _, r := range full {
					if !inH(r) {
						continue
					}
					// Decision 1: a Namespace directly above the first
					// object of that namespace, at most once per path.
					if withNs && !r.IsSection() && r.Namespace != "" && !seenNs[r.Namespace] {
						seenNs[r.Namespace] = true
						contracted = append(contracted, topology.Ref{Kind: "Namespace", Name: r.Namespace})
					}
					contracted = append(contracted, r)
				}
				paths[pathKey(k, contracted)] = contracted
			}
			for _, c := range n.Children {
				if !walk(c, full) {
					return false
				}
			}
			return true
		}
		for id := topology.NodeID(0); int(id) < g.Len(); id++ {
			n := g.Node(id)
			if len(n.Parents) == 0 && n.Ref.GroupKind() != topology.KindNamespace {
				if !walk(id, nil) {
					return nil, nil, false
				}
			}
		}
		for key, path := range paths {
			var stack []oracleAtt
			for _, r := range path {
				for _, p := range atNode[r] {
					stack = append(stack, oracleAtt{p, r})
				}
			}
			if len(stack) == 0 {
				continue
			}
			var o outcome
			for _, a := range stack {
				o.Stack = append(o.Stack, attKey(a.p.Ref, a.at))
			}
			var winner map[merge.Src]bool
			if k.Supports(merge.None) {
				// Decision 5: the established policy (oldest, then by
				// name; levels do not matter) wins whole.
				w := stack[0].p
				for _, a := range stack[1:] {
					if a.p.Created.Before(w.Created) || (a.p.Created.Equal(w.Created) && a.p.Ref.Namespace+"/"+a.p.Ref.Name < w.Ref.Namespace+"/"+w.Ref.Name) {
						w = a.p
					}
				}
				r := merge.Fold([]merge.Layer{{Spec: merge.FromValue(w.Spec, 0), Strategy: merge.None}})
				o.Spec = r.Tree.Object()
				if len(r.Tree.Leaves()) > 0 {
					winner = map[merge.Src]bool{0: true}
				}
				stack = []oracleAtt{{w, topology.Ref{}}}
			} else {
				// Decisions 2 and 3: most general first; each policy's
				// own strategy folds it onto everything below it.
				layers := make([]merge.Layer, len(stack))
				for i, a := range stack {
					layers[i] = merge.Layer{Spec: merge.FromValue(a.p.Spec, merge.Src(i)), Strategy: a.p.Strategy, Src: merge.Src(i)}
				}
				r := merge.Fold(layers)
				o.Spec = r.Tree.Object()
				winner = map[merge.Src]bool{}
				for _, l := range r.Tree.Leaves() {
					winner[l.Src] = true
				}
			}
			out[key] = o
			target := path[len(path)-1]
			ak := k.String() + " " + target.String()
			for src := range winner {
				p := stack[src].p
				if affected[ak] == nil {
					affected[ak] = map[string]bool{}
				}
				affected[ak][p.Ref.Namespace+"/"+p.Ref.Name] = true
			}
		}
	}
	aff := map[string][]string{}
	for k, set := range affected {
		for p := range set {
			aff[k] = append(aff[k], p)
		}
		sort.Strings(aff[k])
	}
	return out, aff, true
}

// randomWorld generates a small world: GatewayClasses, Gateways with
// listeners admitting routes in various ways, HTTPRoutes (some mesh) with
// rules and backends across namespaces, ReferenceGrants, Services, and
// policies of three Inherited kinds (default hierarchy; a random
// sub-hierarchy; strategy none) at every level, with clashing specs and
// timestamps.
func randomWorld(rnd *rand.Rand) []engine.Object {
	var objs []unstructured.Unstructured
	add := func(m map[string]any) { objs = append(objs, unstructured.Unstructured{Object: m}) }
	pick := func(s ...string) string { return s[rnd.Intn(len(s))] }
	nss := []string{"ns-a", "ns-b", "ns-c"}
	for _, ns := range nss {
		add(obj("v1", "Namespace", "", ns, map[string]any{"team": pick("x", "y")}, nil))
	}
	for _, gc := range []string{"gc1", "gc2"} {
		add(obj("gateway.networking.k8s.io/v1", "GatewayClass", "", gc, nil, map[string]any{"controllerName": "example.com/c"}))
	}
	type named struct{ ns, name string }
	var gateways, services, routes []named
	listeners := map[named][]string{}
	rules := map[named]int{}
	for i := range 1 + rnd.Intn(3) {
		gw := named{pick(nss...), fmt.Sprintf("gw%d", i)}
		gateways = append(gateways, gw)
		var ls []any
		for j := range 1 + rnd.Intn(3) {
			l := map[string]any{"name": fmt.Sprintf("l%d", j), "protocol": "HTTP", "port": int64(80 + rnd.Intn(2))}
			if h := pick("", "", "*.a.com", "x.a.com"); h != "" {
				l["hostname"] = h
			}
			switch pick("Same", "All", "Selector") {
			case "All":
				l["allowedRoutes"] = map[string]any{"namespaces": map[string]any{"from": "All"}}
			case "Selector":
				l["allowedRoutes"] = map[string]any{"namespaces": map[string]any{"from": "Selector", "selector": map[string]any{"matchLabels": map[string]any{"team": "x"}}}}
			}
			ls = append(ls, l)
			listeners[gw] = append(listeners[gw], fmt.Sprintf("l%d", j))
		}
		add(obj("gateway.networking.k8s.io/v1", "Gateway", gw.ns, gw.name, nil, map[string]any{"gatewayClassName": pick("gc1", "gc2", "gone"), "listeners": ls}))
	}
	for i := range 1 + rnd.Intn(4) {
		s := named{pick(nss...), fmt.Sprintf("svc%d", i)}
		services = append(services, s)
		add(obj("v1", "Service", s.ns, s.name, nil, map[string]any{"ports": []any{map[string]any{"name": "http", "port": int64(80)}}}))
	}
	for i := range 1 + rnd.Intn(5) {
		r := named{pick(nss...), fmt.Sprintf("r%d", i)}
		routes = append(routes, r)
		var parents []any
		for range 1 + rnd.Intn(2) {
			if rnd.Intn(4) == 0 {
				s := services[rnd.Intn(len(services))]
				parents = append(parents, map[string]any{"group": "", "kind": "Service", "name": s.name, "namespace": s.ns})
				continue
			}
			gw := gateways[rnd.Intn(len(gateways))]
			p := map[string]any{"name": gw.name, "namespace": gw.ns}
			if rnd.Intn(3) == 0 {
				ls := listeners[gw]
				p["sectionName"] = ls[rnd.Intn(len(ls))]
			}
			if rnd.Intn(4) == 0 {
				p["port"] = int64(80 + rnd.Intn(2))
			}
			parents = append(parents, p)
		}
		var rs []any
		n := 1 + rnd.Intn(3)
		rules[r] = n
		for range n {
			var brs []any
			for range 1 + rnd.Intn(2) {
				s := services[rnd.Intn(len(services))]
				brs = append(brs, map[string]any{"name": s.name, "namespace": s.ns, "port": int64(80)})
			}
			rs = append(rs, map[string]any{"backendRefs": brs})
		}
		spec := map[string]any{"parentRefs": parents, "rules": rs}
		if h := pick("", "x.a.com", "y.b.com"); h != "" {
			spec["hostnames"] = []any{h}
		}
		add(obj("gateway.networking.k8s.io/v1", "HTTPRoute", r.ns, r.name, nil, spec))
	}
	for _, ns := range nss {
		if rnd.Intn(2) == 0 {
			add(obj("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", ns, "grant", nil, map[string]any{
				"from": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": pick(nss...)}},
				"to":   []any{map[string]any{"group": "", "kind": "Service"}},
			}))
		}
	}
	// Policy kinds: the default hierarchy; a random sub-hierarchy; none.
	sub := []string{}
	for _, gk := range topology.DefaultHierarchy[:len(topology.DefaultHierarchy)-1] {
		if rnd.Intn(2) == 0 {
			sub = append(sub, gk.String())
		}
	}
	sub = append(sub, "Service")
	kinds := []struct {
		kind   string
		ann    map[string]any
		levels []string // kinds it may target
		none   bool
	}{
		{"FullPolicy", nil, nil, false},
		{"SubPolicy", map[string]any{policy.AnnotationHierarchy: strings.Join(sub, ",")}, sub, false},
		{"NonePolicy", map[string]any{policy.AnnotationMergeStrategies: "none"}, nil, true},
	}
	stamps := []string{"", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"}
	for _, k := range kinds {
		crd := obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", strings.ToLower(k.kind)+"s.policies.example.com", map[string]any{policy.LabelPolicy: "Inherited"},
			map[string]any{"group": "policies.example.com", "names": map[string]any{"kind": k.kind, "plural": strings.ToLower(k.kind) + "s"}, "scope": "Namespaced"})
		if k.ann != nil {
			crd["metadata"].(map[string]any)["annotations"] = k.ann
		}
		add(crd)
		allowed := func(gk string) bool { return k.levels == nil || slices.Contains(k.levels, gk) }
		for i := range rnd.Intn(9) {
			var ns string
			var ref map[string]any
			switch rnd.Intn(7) {
			case 0:
				if !allowed("GatewayClass.gateway.networking.k8s.io") {
					continue
				}
				ns, ref = pick(nss...), map[string]any{"group": "gateway.networking.k8s.io", "kind": "GatewayClass", "name": pick("gc1", "gc2")}
			case 1:
				if !allowed("Namespace") {
					continue
				}
				ns = pick(nss...)
				ref = map[string]any{"group": "", "kind": "Namespace", "name": ns}
			case 2, 3:
				if !allowed("Gateway.gateway.networking.k8s.io") {
					continue
				}
				gw := gateways[rnd.Intn(len(gateways))]
				ns, ref = gw.ns, map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw.name}
				if rnd.Intn(2) == 0 {
					ls := listeners[gw]
					ref["sectionName"] = ls[rnd.Intn(len(ls))]
				}
			case 4, 5:
				if !allowed("HTTPRoute.gateway.networking.k8s.io") {
					continue
				}
				r := routes[rnd.Intn(len(routes))]
				ns, ref = r.ns, map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": r.name}
				if rnd.Intn(2) == 0 {
					ref["sectionName"] = fmt.Sprintf("rule-%d", rnd.Intn(rules[r]))
				}
			default:
				s := services[rnd.Intn(len(services))]
				ns, ref = s.ns, map[string]any{"group": "", "kind": "Service", "name": s.name}
			}
			spec := map[string]any{}
			for _, key := range []string{"a", "b", "c"} {
				switch rnd.Intn(5) {
				case 0:
					spec[key] = int64(i)
				case 1:
					spec[key] = map[string]any{"x": int64(i), pick("y", "z"): pick("v", "w")}
				case 2:
					spec[key] = map[string]any{"x": nil}
				case 3:
					spec[key] = nil
				}
			}
			spec["who"] = fmt.Sprintf("%s-p%d", k.kind, i)
			if !k.none {
				switch pick("bare", "defaults", "overrides") {
				case "defaults":
					spec = map[string]any{"defaults": spec}
				case "overrides":
					spec = map[string]any{"overrides": spec}
				}
				if w := pick("", "atomic", "patch"); w != "" {
					spec["strategy"] = w
				}
			}
			spec["targetRefs"] = []any{ref}
			p := obj("policies.example.com/v1", k.kind, ns, fmt.Sprintf("p%d", i), nil, spec)
			if ts := pick(stamps...); ts != "" {
				p["metadata"].(map[string]any)["creationTimestamp"] = ts
			}
			add(p)
		}
	}
	out := make([]engine.Object, len(objs))
	for i := range objs {
		out[i] = engine.Object{Object: &objs[i], Source: fmt.Sprintf("#%d", i)}
	}
	return out
}

func obj(apiVersion, kind, ns, name string, labels, spec map[string]any) map[string]any {
	md := map[string]any{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	if labels != nil {
		md["labels"] = labels
	}
	m := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	if spec != nil {
		m["spec"] = spec
	}
	return m
}

func dumpWorld(objs []engine.Object) string {
	var b strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&b, "  %v\n", o.Object.Object)
	}
	return b.String()
}
