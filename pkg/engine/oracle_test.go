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
// Affected sets must be the policies that set a field somewhere (decision 8),
// and each policy's Accepted and Programmed reasons must follow from its
// outcomes over the distinct contexts it reaches (decisions 5 and 7).
func TestContextsAgainstPathEnumeration(t *testing.T) {
	iterations := 400
	if testing.Short() {
		iterations = 50
	}
	compared := 0
	for seed := int64(1); seed <= int64(iterations); seed++ {
		compared += checkAgainstOracle(t, seed)
	}
	t.Logf("%d contexts compared over %d worlds", compared, iterations)
	if compared < iterations {
		t.Fatalf("only %d contexts compared over %d worlds: the generator is too sparse to test anything", compared, iterations)
	}
}

// FuzzContextsAgainstPathEnumeration runs the same comparison on worlds
// generated from fuzzed seeds.
func FuzzContextsAgainstPathEnumeration(f *testing.F) {
	for seed := range int64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) { checkAgainstOracle(t, seed) })
}

// checkAgainstOracle compares the engine with the oracle on the world of a
// seed and returns how many contexts it compared.
func checkAgainstOracle(t *testing.T, seed int64) int {
	t.Helper()
	objs := randomWorld(rand.New(rand.NewSource(seed)))
	res := engine.Compute(objs, engine.Options{})
	oracle, ok := enumerateContexts(res)
	if !ok {
		return 0 // too many paths for the oracle
	}
	want, wantAffected, wantStatus := oracle.contexts, oracle.affected, oracle.status
	got, gotAffected, gotStatus := engineContexts(res)
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
	if !reflect.DeepEqual(gotStatus, wantStatus) {
		t.Fatalf("seed %d: policy status\n got: %v\nwant: %v\n%s", seed, gotStatus, wantStatus, dumpWorld(objs))
	}
	return len(want)
}

// outcome is what a (kind, target, path) context must hold.
type outcome struct {
	Spec  map[string]any
	Stack []string // policy@level, most general first
}

// reasons renders Accepted[/Programmed] reasons.
func reasons(cs []engine.Condition) string {
	var st string
	for _, c := range cs {
		switch c.Type {
		case engine.CondAccepted:
			st = c.Reason + st
		case engine.CondProgrammed:
			st += "/" + c.Reason
		}
	}
	return st
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
func engineContexts(res *engine.Result) (map[string]outcome, map[string][]string, map[string]string) {
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
	status := map[string]string{}
	for _, ps := range res.Policies {
		p := ps.Policy
		if p.Kind.Class != policy.Inherited || p.Invalid() {
			continue
		}
		status[policyKey(p)] = reasons(ps.Conditions)
		var anc []string
		for _, a := range ps.Ancestors {
			anc = append(anc, a.Ref.String()+"="+reasons(a.Conditions))
		}
		sort.Strings(anc)
		status[policyKey(p)] += " " + strings.Join(anc, " ")
	}
	return out, affected, status
}

// oracleResult is what the oracle expects: contexts by (kind, path),
// Affected sets by (kind, target), and each policy's Accepted/Programmed
// reasons, in summary and per ancestor.
type oracleResult struct {
	contexts map[string]outcome
	affected map[string][]string
	status   map[string]string
}

// oracleAtt is a policy attached to a level: a node or a namespace.
type oracleAtt struct {
	p  *policy.Policy
	at topology.Ref
}

// tally counts contexts by a policy's (or one attachment's) outcome there.
type tally struct{ contexts, full, partial, none, conflicted int }

func (t *tally) add(conflicted, lost, contrib bool) {
	t.contexts++
	switch {
	case conflicted:
		t.none++
		t.conflicted++
	case !lost:
		t.full++
	case contrib:
		t.partial++
	default:
		t.none++
	}
}

// reason is decision 7's Programmed reason for a tally.
func (t tally) reason() string {
	switch {
	case t.full == t.contexts:
		return "Programmed"
	case t.none == t.contexts:
		return "Overridden"
	}
	return "PartiallyProgrammed"
}

func policyKey(p *policy.Policy) string { return p.Ref.Kind + " " + p.Ref.Namespace + "/" + p.Ref.Name }

// enumerateContexts is the oracle: it recomputes every context of every
// Inherited kind by enumerating paths. It reports false when a world has
// too many paths to enumerate.
func enumerateContexts(res *engine.Result) (oracleResult, bool) {
	g := res.Graph
	out := map[string]outcome{}
	affected := map[string]map[string]bool{}
	polTally := map[*policy.Policy]*tally{}
	attTally := map[oracleAtt]*tally{}
	atts := map[*policy.Policy][]oracleAtt{}
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
			polTally[p] = &tally{}
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
					a := oracleAtt{p, r}
					atts[p] = append(atts[p], a)
					attTally[a] = &tally{}
				}
			}
		}
		for _, l := range atNode {
			sort.SliceStable(l, func(i, j int) bool { return olderOrFirst(l[i], l[j]) })
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
					return oracleResult{}, false
				}
			}
		}
		seenContext := map[string]bool{}
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
			// Per stack entry: rejected by strategy none, lost a field to
			// another policy (a policy never beats itself), set a field.
			conflicted := make([]bool, len(stack))
			lost := make([]bool, len(stack))
			contrib := make([]bool, len(stack))
			if k.Supports(merge.None) {
				// Decision 5: the established policy (oldest, then by
				// name; levels do not matter) wins whole; every other
				// policy is rejected here.
				w := stack[0].p
				for _, a := range stack[1:] {
					if olderOrFirst(a.p, w) {
						w = a.p
					}
				}
				var first = -1
				for i, a := range stack {
					conflicted[i] = a.p != w
					if a.p == w && first < 0 {
						first = i
					}
				}
				r := merge.Fold([]merge.Layer{{Spec: merge.FromValue(w.Spec, merge.Src(first)), Strategy: merge.None, Src: merge.Src(first)}})
				o.Spec = r.Tree.Object()
				contrib[first] = len(r.Tree.Leaves()) > 0
			} else {
				// Decisions 2 and 3: most general first; each policy's
				// own strategy folds it onto everything below it.
				layers := make([]merge.Layer, len(stack))
				for i, a := range stack {
					layers[i] = merge.Layer{Spec: merge.FromValue(a.p.Spec, merge.Src(i)), Strategy: a.p.Strategy, Src: merge.Src(i)}
				}
				r := merge.Fold(layers)
				o.Spec = r.Tree.Object()
				for _, l := range r.Tree.Leaves() {
					contrib[l.Src] = true
				}
				for _, l := range r.Losses {
					for _, w := range l.Winners {
						if stack[w].p != stack[l.Loser].p {
							lost[l.Loser] = true
						}
					}
				}
			}
			out[key] = o
			target := path[len(path)-1]
			ak := k.String() + " " + target.String()
			for i, a := range stack {
				if contrib[i] {
					if affected[ak] == nil {
						affected[ak] = map[string]bool{}
					}
					affected[ak][a.p.Ref.Namespace+"/"+a.p.Ref.Name] = true
				}
			}
			// Status counts distinct contexts: a target and a stack.
			ck := target.String() + " " + strings.Join(o.Stack, ",")
			if seenContext[ck] {
				continue
			}
			seenContext[ck] = true
			type combined struct{ conflicted, lost, contrib bool }
			byPolicy := map[*policy.Policy]*combined{}
			for i, a := range stack {
				attTally[a].add(conflicted[i], lost[i], contrib[i])
				c := byPolicy[a.p]
				if c == nil {
					c = &combined{}
					byPolicy[a.p] = c
				}
				c.conflicted = c.conflicted || conflicted[i]
				c.lost = c.lost || lost[i]
				c.contrib = c.contrib || contrib[i]
			}
			for p, c := range byPolicy {
				polTally[p].add(c.conflicted, c.lost, c.contrib)
			}
		}
	}
	// Decision 7: an ancestor is Conflicted when strategy none rejects its
	// attachment in every context it reaches, else Accepted with the
	// Programmed reason of its own contexts; the policy is accepted when
	// one ancestor is, with the Programmed reason of every distinct context
	// it reaches through any target (losing a context is losing something).
	status := map[string]string{}
	for p, pt := range polTally {
		var anc []string
		accepted := false
		for _, a := range atts[p] {
			at := attTally[a]
			if at.contexts > 0 && at.conflicted == at.contexts {
				anc = append(anc, a.at.String()+"=Conflicted")
				continue
			}
			accepted = true
			anc = append(anc, a.at.String()+"=Accepted/"+at.reason())
		}
		sort.Strings(anc)
		sum := "Conflicted"
		if accepted {
			sum = "Accepted/" + pt.reason()
		}
		status[policyKey(p)] = sum + " " + strings.Join(anc, " ")
	}
	aff := map[string][]string{}
	for k, set := range affected {
		for p := range set {
			aff[k] = append(aff[k], p)
		}
		sort.Strings(aff[k])
	}
	return oracleResult{out, aff, status}, true
}

// olderOrFirst is decision 2's order at one level (and strategy none's
// order everywhere): older first, then by namespace/name.
func olderOrFirst(a, b *policy.Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Ref.Namespace+"/"+a.Ref.Name < b.Ref.Namespace+"/"+b.Ref.Name
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
		// target picks a target of an allowed kind and the namespace it is
		// in ("" for a GatewayClass: any policy may target it).
		target := func() (string, map[string]any, bool) {
			switch rnd.Intn(7) {
			case 0:
				return "", map[string]any{"group": "gateway.networking.k8s.io", "kind": "GatewayClass", "name": pick("gc1", "gc2")}, allowed("GatewayClass.gateway.networking.k8s.io")
			case 1:
				ns := pick(nss...)
				return ns, map[string]any{"group": "", "kind": "Namespace", "name": ns}, allowed("Namespace")
			case 2, 3:
				gw := gateways[rnd.Intn(len(gateways))]
				ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw.name}
				if rnd.Intn(2) == 0 {
					ls := listeners[gw]
					ref["sectionName"] = ls[rnd.Intn(len(ls))]
				}
				return gw.ns, ref, allowed("Gateway.gateway.networking.k8s.io")
			case 4, 5:
				r := routes[rnd.Intn(len(routes))]
				ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": r.name}
				if rnd.Intn(2) == 0 {
					ref["sectionName"] = fmt.Sprintf("rule-%d", 1+rnd.Intn(rules[r]))
				}
				return r.ns, ref, allowed("HTTPRoute.gateway.networking.k8s.io")
			}
			s := services[rnd.Intn(len(services))]
			return s.ns, map[string]any{"group": "", "kind": "Service", "name": s.name}, true
		}
		for i := range rnd.Intn(9) {
			ns, ref, ok := target()
			if !ok {
				continue
			}
			if ns == "" {
				ns = pick(nss...)
			}
			refs := []any{ref}
			// A second target in the same namespace (no ReferenceGrant
			// needed), often on the same paths: a policy at two levels.
			for range 3 {
				ns2, ref2, ok := target()
				if ok && (ns2 == "" || ns2 == ns) && rnd.Intn(2) == 0 {
					refs = append(refs, ref2)
					break
				}
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
			spec["targetRefs"] = refs
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
