package engine_test

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
)

// incrementalSeeds widens TestIncrementalMatchesComputeProfiles:
// go test ./pkg/engine -run TestIncrementalMatchesComputeProfiles -incremental.seeds=600
var incrementalSeeds = flag.Int("incremental.seeds", 0, "worlds TestIncrementalMatchesComputeProfiles runs (0: its default)")

// profileWorld is a small cluster of the profiled implementations' kinds,
// kept as YAML documents by name so that an edit replaces one document and
// the others keep their decoded objects (the identity an informer keeps):
// Gateways of GatewayClasses of five implementations (and of a class not
// among the objects), with listeners of several protocols and hostnames
// and status or none; ListenerSets and XListenerSets with status or none;
// routes attaching to either, to sections and ports, to other routes
// (delegation, by route or by label), with ExtensionRef filters, delegation
// annotations and route status; and policies of kinds whose profiles read
// all that: kgateway's TrafficPolicy (route replacement, filters, Secrets,
// weights), Kuadrant's RateLimitPolicy (every parentRef, unadmitted ones
// too, ready paths only, other controllers), DNSPolicy and TLSPolicy
// (listener conditions, attached routes, same-second ties, issuers), NGINX
// Gateway Fabric's WAFPolicy and Gloo's RouteOption (with members of a
// oneof). Creation times come from few seconds, so that policies of a kind
// tie at a target.
type profileWorld struct {
	rng   *rand.Rand
	docs  map[string]string
	cache map[string][]engine.Object // by name and text
}

// profileClasses are the GatewayClasses the Gateways pick from ("absent":
// a class not among the objects).
var profileClasses = []string{"kgateway", "istio", "eg", "nginx", "gloo", "absent"}

// profileKinds are the policy kinds of the world, each with three policies.
var profileKinds = []string{"TrafficPolicy", "RateLimitPolicy", "DNSPolicy", "TLSPolicy", "WAFPolicy", "RouteOption", "ReadyPolicy", "ListenerPolicy"}

func (w *profileWorld) one(xs ...string) string { return xs[w.rng.IntN(len(xs))] }
func (w *profileWorld) n(k int) int             { return w.rng.IntN(k) }

func newProfileWorld(seed uint64) *profileWorld {
	w := &profileWorld{rng: rand.New(rand.NewPCG(seed, 0x70726f66)), docs: map[string]string{}, cache: map[string][]engine.Object{}}
	w.docs["kinds"] = strings.Join([]string{
		crd("gateway.kgateway.dev", "TrafficPolicy", "trafficpolicies"),
		labelledCRD("kuadrant.io", "RateLimitPolicy", "ratelimitpolicies", "inherited"),
		labelledCRD("kuadrant.io", "DNSPolicy", "dnspolicies", "direct"),
		labelledCRD("kuadrant.io", "TLSPolicy", "tlspolicies", "direct"),
		labelledCRD("gateway.nginx.org", "WAFPolicy", "wafpolicies", "inherited"),
		crd("gateway.solo.io", "RouteOption", "routeoptions"),
		// Kinds of no profile reading the status of ListenerSets of both
		// kinds, which the profiled kinds do not.
		declaredCRD("example.com", "ReadyPolicy", "readypolicies", "Inherited", "attache.dev/merge-strategies: patch-defaults",
			"attache.dev/path-readiness: status", "attache.dev/reach: gateway"),
		declaredCRD("example.com", "ListenerPolicy", "listenerpolicies", "Direct",
			"attache.dev/target-kinds: Gateway, ListenerSet, XListenerSet.gateway.networking.x-k8s.io",
			"attache.dev/effective-section-kinds: Gateway, ListenerSet, XListenerSet.gateway.networking.x-k8s.io",
			"attache.dev/effective-listeners: attached-routes"),
	}, "\n---\n")
	var classes []string
	for name, ctl := range map[string]string{"kgateway": "kgateway.dev/kgateway", "istio": "istio.io/gateway-controller",
		"eg": "gateway.envoyproxy.io/gatewayclass-controller", "nginx": "gateway.nginx.org/nginx-gateway-controller", "gloo": "solo.io/gloo-gateway"} {
		classes = append(classes, fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: %s}\nspec: {controllerName: %s}\n", name, ctl))
	}
	slices.Sort(classes)
	w.docs["classes"] = strings.Join(classes, "---\n")
	w.docs["service"] = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {ports: [{name: http, port: 80}]}\n"
	w.docs["secret"] = profileSecret
	w.docs["issuer"] = w.issuer()
	for i := range 3 {
		w.docs[fmt.Sprintf("gw%d", i)] = w.gateway(i)
	}
	for i := range 2 {
		w.docs[fmt.Sprintf("ls%d", i)] = w.listenerSet(i)
	}
	for i := range 5 {
		w.docs[fmt.Sprintf("r%d", i)] = w.route(i)
	}
	for _, k := range profileKinds {
		for i := range 3 {
			w.docs[fmt.Sprintf("%s%d", k, i)] = w.policy(k, i)
		}
	}
	return w
}

const profileSecret = "apiVersion: v1\nkind: Secret\nmetadata: {name: users, namespace: default}\ndata: {.htpasswd: YQ==}\n"

// listenerStatus is a status.listeners entry of listener name: some routes
// attached or none, Programmed or not.
func (w *profileWorld) listenerStatus(name string) string {
	return fmt.Sprintf(`{name: %s, attachedRoutes: %d, conditions: [{type: Programmed, status: "%s"}]}`, name, w.n(2), w.one("True", "False"))
}

// gatewayStatus is no status (a manifest), listeners Programmed or not,
// or an Accepted Gateway whose listeners have no conditions yet.
func (w *profileWorld) gatewayStatus() string {
	switch w.n(3) {
	case 0:
		return ""
	case 1:
		return "status:\n  conditions: [{type: Programmed, status: \"True\"}]\n  listeners: [" + w.listenerStatus("l0") + ", " + w.listenerStatus("l1") + "]\n"
	}
	return "status:\n  conditions: [{type: Accepted, status: \"True\"}]\n  listeners: [{name: l0, attachedRoutes: 0}]\n"
}

func (w *profileWorld) gateway(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw%d, namespace: default}\nspec:\n  gatewayClassName: %s\n", i, w.one(profileClasses...))
	if w.n(2) == 0 {
		b.WriteString("  allowedListeners: {namespaces: {from: All}}\n")
	}
	b.WriteString("  listeners:\n")
	for l := range 1 + w.n(3) {
		proto := w.one("HTTP", "HTTP", "HTTPS", "TCP")
		extra := ""
		if w.n(2) == 0 {
			extra += fmt.Sprintf(", hostname: h%d.example.com", w.n(3))
		}
		if proto == "HTTPS" {
			extra += ", tls: {certificateRefs: [{name: cert}]}"
		}
		if w.n(5) == 0 {
			// Admits GRPCRoutes only: the HTTPRoutes naming it are
			// unadmitted there (Kuadrant still links them).
			extra += ", allowedRoutes: {kinds: [{kind: GRPCRoute}]}"
		}
		fmt.Fprintf(&b, "  - {name: l%d, protocol: %s, port: %d%s}\n", l, proto, 80+l, extra)
	}
	b.WriteString(w.gatewayStatus())
	return b.String()
}

func (w *profileWorld) listenerSet(i int) string {
	apiVersion, kind := "gateway.networking.x-k8s.io/v1alpha1", "XListenerSet"
	if w.n(2) == 0 {
		apiVersion, kind = "gateway.networking.k8s.io/v1", "ListenerSet"
	}
	st := ""
	if w.n(2) == 0 {
		st = "status:\n  conditions: [{type: Accepted, status: \"True\"}]\n  listeners: [" + w.listenerStatus("x0") + "]\n"
	}
	return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: ls%d, namespace: default}\nspec:\n  parentRef: {name: gw%d}\n  listeners: [{name: x0, protocol: HTTP, port: %d%s}]\n%s",
		apiVersion, kind, i, w.n(3), 9000+i, w.one("", ", hostname: h0.example.com"), st)
}

func (w *profileWorld) parentRef() string {
	switch w.n(6) {
	case 0:
		return fmt.Sprintf("{name: ls%d, group: %s, kind: %s}", w.n(2), w.one("gateway.networking.x-k8s.io", "gateway.networking.k8s.io"), w.one("XListenerSet", "ListenerSet"))
	case 1:
		return fmt.Sprintf("{name: gw%d, sectionName: l%d}", w.n(3), w.n(3))
	case 2:
		return fmt.Sprintf("{name: gw%d, port: %d}", w.n(3), 80+w.n(3))
	case 3:
		return fmt.Sprintf("{kind: HTTPRoute, name: r%d}", w.n(5))
	}
	return fmt.Sprintf("{name: gw%d}", w.n(3))
}

func (w *profileWorld) route(i int) string {
	parents := []string{w.parentRef()}
	if w.n(2) == 0 {
		parents = append(parents, w.parentRef())
	}
	var meta []string
	if w.n(3) == 0 {
		meta = append(meta, "labels: {delegation.kgateway.dev/label: team}")
	}
	if w.n(4) == 0 {
		meta = append(meta, "annotations: {kgateway.dev/inherited-policy-priority: ShallowMergePreferParent, delegation.gateway.solo.io/enable-policy-overrides: "+w.one("'*'", "hostRewriteType", "timeout")+"}")
	}
	backend := "{name: web, port: 80}"
	switch w.n(5) {
	case 0:
		backend = fmt.Sprintf("{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r%d}", w.n(5))
	case 1:
		backend = "{group: delegation.kgateway.dev, kind: label, name: team}"
	}
	filter := ""
	if w.n(4) == 0 {
		// tp3 is never created: a filter naming a missing policy.
		filter = fmt.Sprintf(", filters: [{type: ExtensionRef, extensionRef: {group: gateway.kgateway.dev, kind: TrafficPolicy, name: tp%d}}]", w.n(4))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r%d, namespace: default", i)
	for _, m := range meta {
		b.WriteString(", " + m)
	}
	fmt.Fprintf(&b, "}\nspec:\n  parentRefs: [%s]\n", strings.Join(parents, ", "))
	if w.n(3) == 0 {
		fmt.Fprintf(&b, "  hostnames: [h%d.example.com]\n", w.n(3))
	}
	fmt.Fprintf(&b, "  rules:\n  - {name: a, backendRefs: [%s]%s}\n  - {name: b, backendRefs: [{name: web, port: 80}]}\n", backend, filter)
	b.WriteString(w.routeStatus())
	return b.String()
}

// routeStatus is no status, or one parent entry of a controller,
// Accepted or not.
func (w *profileWorld) routeStatus() string {
	if w.n(2) == 0 {
		return ""
	}
	return fmt.Sprintf("status:\n  parents:\n  - {parentRef: {name: gw%d}, controllerName: %s, conditions: [{type: Accepted, status: \"%s\"}]}\n",
		w.n(3), w.one("kgateway.dev/kgateway", "istio.io/gateway-controller", "gateway.envoyproxy.io/gatewayclass-controller"), w.one("True", "False"))
}

func (w *profileWorld) target(kinds ...string) string {
	switch w.one(kinds...) {
	case "Gateway":
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: Gateway, name: gw%d}", w.n(4))
	case "Listener":
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: Gateway, name: gw%d, sectionName: l%d}", w.n(3), w.n(3))
	case "XListenerSet":
		return fmt.Sprintf("{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls%d}", w.n(2))
	case "ListenerSet":
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls%d}", w.n(2))
	case "XListener":
		return fmt.Sprintf("{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: ls%d, sectionName: x0}", w.n(2))
	case "ListenerSetListener":
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls%d, sectionName: x0}", w.n(2))
	case "Rule":
		return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r%d, sectionName: %s}", w.n(6), w.one("a", "b"))
	}
	return fmt.Sprintf("{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r%d}", w.n(6))
}

// sharedTarget is a target of Kuadrant's DNSPolicy and TLSPolicy, often
// gw0 or its listener l0, so that policies of a kind meet at a target
// (and tie there when created in the same second).
func (w *profileWorld) sharedTarget() string {
	switch w.n(3) {
	case 0:
		return "{group: gateway.networking.k8s.io, kind: Gateway, name: gw0}"
	case 1:
		return "{group: gateway.networking.k8s.io, kind: Gateway, name: gw0, sectionName: l0}"
	}
	return w.target("Gateway", "Listener")
}

// policy is policy i of kind, created in one of three seconds (ties).
func (w *profileWorld) policy(kind string, i int) string {
	name := strings.ToLower(kind[:2]) + fmt.Sprint(i)
	meta := fmt.Sprintf("name: %s, namespace: default, creationTimestamp: \"2026-01-01T00:00:%02dZ\"", name, w.n(3))
	var apiVersion, spec string
	switch kind {
	case "TrafficPolicy":
		apiVersion = "gateway.kgateway.dev/v1alpha1"
		if w.n(4) == 0 {
			meta += ", annotations: {kgateway.dev/policy-weight: " + w.one(`"x"`, `"3"`, `"1.5"`) + "}"
		}
		if w.n(5) > 0 {
			spec = "  targetRefs: [" + w.target("Gateway", "Listener", "XListenerSet", "Route", "Rule") + "]\n"
		}
		if w.n(3) == 0 {
			spec += "  basicAuth: {secretRef: {name: " + w.one("users", "nobody") + "}}\n"
		} else {
			spec += fmt.Sprintf("  timeouts: {request: %ds}\n", 1+w.n(9))
		}
	case "RateLimitPolicy":
		apiVersion = "kuadrant.io/v1"
		spec = fmt.Sprintf("  targetRef: %s\n  limits: {l%d: {rates: [{limit: %d, window: 1m}]}}\n", w.target("Gateway", "Listener", "Route", "Rule"), i, 1+w.n(5))
	case "DNSPolicy":
		apiVersion = "kuadrant.io/v1"
		spec = fmt.Sprintf("  targetRef: %s\n  loadBalancing: {weight: %d}\n", w.sharedTarget(), 1+w.n(5))
	case "TLSPolicy":
		apiVersion = "kuadrant.io/v1"
		spec = fmt.Sprintf("  targetRef: %s\n  issuerRef: {kind: Issuer, name: %s}\n", w.sharedTarget(), w.one("iss", "iss", "nope"))
	case "WAFPolicy":
		apiVersion = "gateway.nginx.org/v1alpha1"
		spec = fmt.Sprintf("  targetRefs: [%s, %s]\n  policySource: {fileLocation: f%d}\n", w.target("Gateway", "Route"), w.target("Gateway", "Route"), w.n(3))
	case "RouteOption":
		apiVersion = "gateway.solo.io/v1"
		// Members of one oneof (hostRewriteType), or none.
		member := w.one("", ", hostRewrite: h.example", ", autoHostRewrite: true")
		spec = fmt.Sprintf("  targetRefs: [%s]\n  options: {timeout: %ds%s}\n", w.target("Route"), 1+w.n(9), member)
	case "ReadyPolicy":
		apiVersion = "example.com/v1"
		spec = fmt.Sprintf("  targetRefs: [%s]\n  defaults: {x: %d}\n", w.target("Gateway", "XListenerSet", "ListenerSet", "Route"), w.n(5))
	case "ListenerPolicy":
		apiVersion = "example.com/v1"
		spec = fmt.Sprintf("  targetRefs: [%s]\n  x: %d\n", w.target("Listener", "XListenerSet", "ListenerSet", "XListener", "ListenerSetListener"), w.n(5))
	default:
		panic(kind)
	}
	return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {%s}\nspec:\n%s", apiVersion, kind, meta, spec)
}

func (w *profileWorld) issuer() string {
	return "apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: iss, namespace: default}\nspec: {selfSigned: {}}\n" +
		w.one("", "status:\n  conditions: [{type: Ready, status: \"True\"}]\n", "status:\n  conditions: [{type: Ready, status: \"False\"}]\n")
}

// withStatus replaces the status of document doc by st.
func withStatus(doc, st string) string {
	if i := strings.Index(doc, "status:\n"); i >= 0 {
		doc = doc[:i]
	}
	return doc + st
}

// edit changes, adds or deletes one document and says which.
func (w *profileWorld) edit() string {
	switch w.n(12) {
	case 0, 1, 2, 3:
		name := fmt.Sprintf("%s%d", w.one(profileKinds...), w.n(3))
		kind, i := name[:len(name)-1], int(name[len(name)-1]-'0')
		w.docs[name] = w.policy(kind, i)
		return "policy " + name
	case 4:
		name := fmt.Sprintf("%s%d", w.one(profileKinds...), w.n(3))
		if _, ok := w.docs[name]; ok {
			delete(w.docs, name)
			return "delete " + name
		}
		kind, i := name[:len(name)-1], int(name[len(name)-1]-'0')
		w.docs[name] = w.policy(kind, i)
		return "re-add " + name
	case 5:
		name := fmt.Sprintf("gw%d", w.n(3))
		w.docs[name] = withStatus(w.docs[name], w.gatewayStatus())
		return "status of " + name
	case 6:
		w.docs["issuer"] = w.issuer()
		return "issuer status"
	case 7:
		if _, ok := w.docs["secret"]; ok {
			delete(w.docs, "secret")
			return "secret deleted"
		}
		w.docs["secret"] = profileSecret
		return "secret added"
	case 8:
		name := fmt.Sprintf("r%d", w.n(5))
		w.docs[name] = w.route(int(name[1] - '0'))
		return "route " + name
	case 9:
		name := fmt.Sprintf("r%d", w.n(5))
		w.docs[name] = withStatus(w.docs[name], w.routeStatus())
		return "status of " + name
	case 10:
		name := fmt.Sprintf("ls%d", w.n(2))
		st := ""
		if w.n(3) > 0 {
			st = "status:\n  conditions: [{type: Accepted, status: \"True\"}]\n  listeners: [" + w.listenerStatus("x0") + "]\n"
		}
		w.docs[name] = withStatus(w.docs[name], st)
		return "status of " + name
	}
	name := fmt.Sprintf("ls%d", w.n(2))
	w.docs[name] = w.listenerSet(int(name[2] - '0'))
	return "listener set " + name
}

// objects decodes the documents, in name order; an unchanged document
// keeps its objects.
func (w *profileWorld) objects(t *testing.T) []engine.Object {
	t.Helper()
	var out []engine.Object
	for _, name := range slices.Sorted(maps.Keys(w.docs)) {
		key := name + "\x00" + w.docs[name]
		objs, ok := w.cache[key]
		if !ok {
			var probs []diag.Problem
			objs, probs = manifest.Decode(strings.NewReader(w.docs[name]), name)
			if len(probs) > 0 {
				t.Fatalf("decode %s: %v\n%s", name, probs, w.docs[name])
			}
			w.cache[key] = objs
		}
		out = append(out, objs...)
	}
	return out
}

// yaml is the world as one manifest, for a failure's message.
func (w *profileWorld) yaml() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(w.docs)) {
		fmt.Fprintf(&b, "---\n# %s\n%s", name, w.docs[name])
	}
	return b.String()
}

// TestIncrementalMatchesComputeProfiles applies random edits to worlds of
// the profiled kinds (profileWorld) and checks, after each, that the
// Incremental's Result is Compute's in full (route replacements included);
// a failure prints the world. -incremental.seeds runs more worlds.
func TestIncrementalMatchesComputeProfiles(t *testing.T) {
	seeds, steps := 12, 30
	if testing.Short() {
		seeds = 3
	}
	if *incrementalSeeds > 0 {
		seeds = *incrementalSeeds
	}
	total, incremental, contexts, replaced, ties := 0, 0, 0, 0, 0
	byKind := map[string]int{} // contexts
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		w := newProfileWorld(seed)
		in := engine.NewIncremental(engine.Options{})
		for step := range steps {
			what := "first"
			if step > 0 {
				what = w.edit()
			}
			objs := w.objects(t)
			got := in.Compute(objs)
			want := engine.Compute(objs, engine.Options{})
			if g, wd := dump(t, got), dump(t, want); g != wd {
				t.Fatalf("seed %d step %d (%s; full=%v %s): %s\n%s", seed, step, what, in.LastChange().Full, in.LastChange().Reason, firstDiff(g, wd), w.yaml())
			}
			total++
			if !in.LastChange().Full {
				incremental++
			}
			for _, e := range want.Effective {
				contexts += len(e.Contexts)
				byKind[e.Kind.GroupKind.Kind] += len(e.Contexts)
			}
			replaced += len(want.ReplacedRules) + len(want.ReplacedUnder)
			for _, ps := range want.Policies {
				for _, c := range ps.Conditions {
					if strings.Contains(c.Message, "created in the same second") {
						ties++
					}
				}
			}
		}
	}
	t.Logf("%d computations, %d incremental; %d contexts (%v), %d replacements, %d same-second notes", total, incremental, contexts, byKind, replaced, ties)
	for _, k := range profileKinds {
		if byKind[k] == 0 {
			t.Errorf("no %s is in any context: the worlds do not exercise it", k)
		}
	}
	// The worlds exercise what they are for.
	if incremental == 0 || contexts == 0 || replaced == 0 || ties == 0 {
		t.Fatalf("the worlds exercise too little: %d incremental, %d contexts, %d replacements, %d same-second notes", incremental, contexts, replaced, ties)
	}
}
