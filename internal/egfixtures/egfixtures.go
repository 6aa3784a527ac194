// Package egfixtures reads Envoy Gateway's Gateway API translator fixtures
// (internal/gatewayapi/testdata of the github.com/envoyproxy/gateway module,
// pinned in internal/modfixtures) so that attache's verdicts can be compared
// with Envoy Gateway's on Envoy Gateway's own cases. Nothing of Envoy Gateway
// is copied here: the files are read from the module at test time.
//
// An input file (*.in.yaml) is one YAML object whose keys name lists of
// objects (gateways, httpRoutes, backendTrafficPolicies, ...). Load turns it
// into engine objects, filling apiVersion and kind where a list leaves them
// out, reading policies as Envoy Gateway's typed decoding reads them
// (Decode), and adds the Services every translator test gets (service-1 to
// service-4 and mirror-service in "default", as Envoy Gateway's test does).
//
// Envoy Gateway resolves same-target conflicts of a kind by processing
// order: the first policy processed keeps the target. Its provider sorts
// policies by creationTimestamp, then namespace and name, before the
// translator sees them, but the translator test does not sort: the order
// is the file's. No Envoy Gateway policy of a fixture has a
// creationTimestamp, so Load gives each policy without one a timestamp in
// the file's order (a second apart, per kind), for attache's oldest-wins to
// see the order Envoy Gateway's test sees rather than fall back to names.
//
// An output file (*.out.yaml) has the same shape; its policies carry the
// status Envoy Gateway computed. Expect reads, per policy and
// status.ancestors[] entry, the expected verdict.
//
// # Mapping Envoy Gateway's conditions to attache's
//
//   - Accepted: compared as is (True, or False with its reason). Envoy
//     Gateway's reasons Accepted, Conflicted, Invalid and TargetNotFound are
//     attache's; others (Disabled, NoValidCACertificate, ...) are about
//     configuration or content attache does not read.
//   - Overridden=True (Envoy Gateway: a Gateway or listener policy replaced
//     by more specific policies for some routes or listeners): the policy
//     loses some contexts, or all of them. Envoy Gateway does not say which,
//     so attache may say either Programmed=True/PartiallyProgrammed or
//     Programmed=False/Overridden, but not Programmed=True/Programmed.
//   - Merged=True without Overridden (the policy is merged with another,
//     mergeType JSONMerge or StrategicMerge): Envoy Gateway says a merge
//     took place, not whether any of the policy's fields survives it (a
//     JSONMerge replaces lists whole), so any Programmed reason agrees.
//   - Neither, and accepted: nothing overrides it, so attache must say
//     Programmed=True/Programmed.
//   - No status at all (Envoy Gateway ignores a policy whose target does
//     not exist or is in another namespace): attache must accept the policy
//     nowhere (any Accepted=False reason).
//
// A route or route-rule policy with mergeType gets, beside the Accepted
// entry at each of the route's parentRefs, one entry per listener the route
// is attached through that holds only Merged=True ("Merged with policy
// ns/name", written by processBackendTrafficPolicyForRoute and its
// SecurityPolicy and EnvoyExtensionPolicy twins): a record of which
// listener's or Gateway's policy it was merged with, not a verdict of its
// own. Expect leaves these out; an Accepted=False entry at a listener (the
// merge failed) is kept.
//
// Ancestors are mapped with verdict.GatewayAncestors: Envoy Gateway reports a
// route policy under the Gateways of the route's parentRefs, attache under the
// route itself. Gateways of a GatewayClass other than the one the translator
// test manages (ClassName) are left out: Envoy Gateway reports nothing there.
package egfixtures

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/verdict"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Group is Envoy Gateway's API group.
const Group = "gateway.envoyproxy.io"

// PolicyKeys maps the (lower-cased) fixture keys of Envoy Gateway's policy
// kinds to their kinds: the policies compared.
var PolicyKeys = map[string]string{
	"clienttrafficpolicies":  "ClientTrafficPolicy",
	"backendtrafficpolicies": "BackendTrafficPolicy",
	"securitypolicies":       "SecurityPolicy",
	"envoyextensionpolicies": "EnvoyExtensionPolicy",
	"envoypatchpolicies":     "EnvoyPatchPolicy",
}

// GatewayAPIPolicyKeys maps the fixture keys of the Gateway API policy
// kinds Envoy Gateway implements to their kinds: compared too.
var GatewayAPIPolicyKeys = map[string]string{
	"backendtlspolicies": "BackendTLSPolicy",
}

// listKinds gives apiVersion and kind for each fixture key (lower case:
// Envoy Gateway reads the keys through encoding/json, which ignores case).
var listKinds = map[string][2]string{
	"gateways":                  {"gateway.networking.k8s.io/v1", "Gateway"},
	"gatewayclass":              {"gateway.networking.k8s.io/v1", "GatewayClass"},
	"listenersets":              {"gateway.networking.k8s.io/v1", "ListenerSet"},
	"httproutes":                {"gateway.networking.k8s.io/v1", "HTTPRoute"},
	"grpcroutes":                {"gateway.networking.k8s.io/v1", "GRPCRoute"},
	"tlsroutes":                 {"gateway.networking.k8s.io/v1alpha2", "TLSRoute"},
	"tcproutes":                 {"gateway.networking.k8s.io/v1alpha2", "TCPRoute"},
	"udproutes":                 {"gateway.networking.k8s.io/v1alpha2", "UDPRoute"},
	"referencegrants":           {"gateway.networking.k8s.io/v1beta1", "ReferenceGrant"},
	"backendtlspolicies":        {"gateway.networking.k8s.io/v1", "BackendTLSPolicy"},
	"namespaces":                {"v1", "Namespace"},
	"services":                  {"v1", "Service"},
	"secrets":                   {"v1", "Secret"},
	"configmaps":                {"v1", "ConfigMap"},
	"endpointslices":            {"discovery.k8s.io/v1", "EndpointSlice"},
	"serviceimports":            {"multicluster.x-k8s.io/v1alpha1", "ServiceImport"},
	"clustertrustbundles":       {"certificates.k8s.io/v1beta1", "ClusterTrustBundle"},
	"envoyproxyforgatewayclass": {Group + "/v1alpha1", "EnvoyProxy"},
	"envoyproxiesforgateways":   {Group + "/v1alpha1", "EnvoyProxy"},
	"backends":                  {Group + "/v1alpha1", "Backend"},
	"httpfilters":               {Group + "/v1alpha1", "HTTPRouteFilter"},
	"extensionreffilters":       {"", ""},
	"extensionserverpolicies":   {"", ""},
}

func init() {
	for k, kind := range PolicyKeys {
		listKinds[k] = [2]string{Group + "/v1alpha1", kind}
	}
}

// listedAt is the creationTimestamp given to the first policy of each kind
// in a fixture; the next ones are a second apart, in the file's order.
var listedAt = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// skippedKeys are fixture keys that hold no object.
var skippedKeys = map[string]bool{defaultSpecKey: true}

// defaultSpecKey is the fixture key of the EnvoyProxy spec that Envoy
// Gateway's configuration gives every GatewayClass (its envoyProxy):
// Load gives it as that configuration's ConfigMap.
const defaultSpecKey = "envoyproxydefaultspec"

// classParamsKey is the fixture key of the EnvoyProxy the translator
// test's GatewayClass has: Load makes the class's parametersRef name it.
const classParamsKey = "envoyproxyforgatewayclass"

// readDoc reads a fixture file as its top-level map, keys lower-cased.
func readDoc(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		lk := strings.ToLower(k)
		if prev, ok := out[lk]; ok {
			// Two spellings of one key (encoding/json would keep the last);
			// keep both lists.
			pl, _ := prev.([]any)
			vl, _ := v.([]any)
			v = append(pl, vl...)
		}
		out[lk] = v
	}
	return out, nil
}

// HasPolicies says whether the fixture input at path holds at least one
// Envoy Gateway policy.
func HasPolicies(path string) (bool, error) {
	doc, err := readDoc(path)
	if err != nil {
		return false, err
	}
	for _, keys := range []map[string]string{PolicyKeys, GatewayAPIPolicyKeys} {
		for k := range keys {
			if l, _ := doc[k].([]any); len(l) > 0 {
				return true, nil
			}
		}
	}
	return false, nil
}

// Load reads a fixture input (*.in.yaml) as engine objects, with the
// Services every translator test adds (CommonServices) and, unless the
// fixture has it, the GatewayClass the test runs as (ClassName); its
// policies read as Envoy Gateway decodes them against their CRDs among
// crds (Decode; none: as written).
func Load(path string, crds []engine.Object) ([]engine.Object, error) {
	doc, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	base := filepath.Base(path)
	var objs []engine.Object
	have := map[topology.Ref]bool{}
	for _, k := range keys {
		if skippedKeys[k] {
			continue
		}
		av, ok := listKinds[k]
		if !ok {
			return nil, fmt.Errorf("%s: unknown fixture key %q", path, k)
		}
		items, isList := doc[k].([]any)
		if !isList {
			items = []any{doc[k]}
		}
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s[%d] is not an object", path, k, i)
			}
			u := &unstructured.Unstructured{Object: m}
			if u.GetAPIVersion() == "" {
				u.SetAPIVersion(av[0])
			}
			if u.GetKind() == "" {
				u.SetKind(av[1])
			}
			if u.GetKind() == "" {
				return nil, fmt.Errorf("%s: %s[%d] has no kind", path, k, i)
			}
			_, dated, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "creationTimestamp")
			if _, isPolicy := PolicyKeys[k]; isPolicy && !dated {
				// The translator test hands Envoy Gateway the policies in
				// the file's order, unsorted: the first listed is the
				// oldest (see the package documentation).
				u.SetCreationTimestamp(metav1.NewTime(listedAt.Add(time.Duration(i) * time.Second)))
			}
			have[refOf(u)] = true
			objs = append(objs, engine.Object{Object: u, Source: fmt.Sprintf("%s#%s[%d]", base, k, i)})
		}
	}
	for _, s := range append(CommonServices(), gatewayClass()) {
		if !have[refOf(s.Object)] {
			objs = append(objs, s)
		}
	}
	if spec, ok := doc[defaultSpecKey].(map[string]any); ok {
		objs = append(objs, configuration(spec))
	}
	Decode(objs, crds)
	if ep, ok := doc[classParamsKey].(map[string]any); ok {
		params := &unstructured.Unstructured{Object: ep}
		for _, o := range objs {
			if o.Object.GetKind() == "GatewayClass" && o.Object.GetName() == ClassName {
				ref := map[string]any{"group": Group, "kind": "EnvoyProxy", "name": params.GetName(), "namespace": params.GetNamespace()}
				if err := unstructured.SetNestedMap(o.Object.Object, ref, "spec", "parametersRef"); err != nil {
					return nil, fmt.Errorf("%s: %v", path, err)
				}
			}
		}
	}
	return objs, nil
}

// configuration is Envoy Gateway's configuration ConfigMap with spec as
// its GatewayClasses' default EnvoyProxy spec (envoyProxy), and no other
// setting: the translator test's features are set apart (see
// harnessFeatures in the tests).
func configuration(spec map[string]any) engine.Object {
	doc, _ := yaml.Marshal(map[string]any{"apiVersion": Group + "/v1alpha1", "kind": "EnvoyGateway", "envoyProxy": spec})
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "envoy-gateway-system", "name": "envoy-gateway-config"},
		"data":     map[string]any{"envoy-gateway.yaml": string(doc)},
	}}
	return engine.Object{Object: u, Source: "egfixtures configuration (" + defaultSpecKey + ")"}
}

// gatewayClass is the GatewayClass the translator test runs as (ClassName):
// the test has it without an object, and EnvoyPatchPolicies target it.
func gatewayClass() engine.Object {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": ClassName},
		"spec":     map[string]any{"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
	}}
	return engine.Object{Object: u, Source: "egfixtures GatewayClass " + ClassName}
}

// CommonServices are the Services Envoy Gateway's translator test adds to
// every fixture: service-1 to service-4 (ports http 8080, https 8443, tcp
// 8163, udp 8162) and mirror-service (http 8080), in "default".
func CommonServices() []engine.Object {
	svc := func(name string, ports ...[3]any) engine.Object {
		var ps []any
		for _, p := range ports {
			ps = append(ps, map[string]any{"name": p[0], "port": p[1], "protocol": p[2]})
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"namespace": "default", "name": name},
			"spec":     map[string]any{"ports": ps},
		}}
		return engine.Object{Object: u, Source: "egfixtures common Service " + name}
	}
	http := [3]any{"http", int64(8080), "TCP"}
	var out []engine.Object
	for i := 1; i <= 4; i++ {
		out = append(out, svc(fmt.Sprintf("service-%d", i), http,
			[3]any{"https", int64(8443), "TCP"}, [3]any{"tcp", int64(8163), "TCP"}, [3]any{"udp", int64(8162), "UDP"}))
	}
	return append(out, svc("mirror-service", http))
}

func refOf(u *unstructured.Unstructured) topology.Ref {
	g := u.GetAPIVersion()
	if i := strings.Index(g, "/"); i >= 0 {
		g = g[:i]
	} else {
		g = ""
	}
	ns := u.GetNamespace()
	if ns == "" && !topology.ClusterScoped(topology.GroupKind{Group: g, Kind: u.GetKind()}) {
		ns = engine.DefaultNamespace
	}
	return topology.Ref{Group: g, Kind: u.GetKind(), Namespace: ns, Name: u.GetName()}
}

// Expect reads a fixture output (*.out.yaml): the expected verdict of every
// Envoy Gateway policy, per ancestor. objs are the fixture's input objects
// (for the ancestors of route targets); name names the fixture.
func Expect(name, path string, objs []engine.Object) (verdict.Expected, error) {
	doc, err := readDoc(path)
	if err != nil {
		return verdict.Expected{}, err
	}
	exp := verdict.Expected{Fixture: name, AncestorsOf: managedAncestors(objs)}
	keys := make([]string, 0, len(PolicyKeys)+len(GatewayAPIPolicyKeys))
	for k := range PolicyKeys {
		keys = append(keys, k)
	}
	for k := range GatewayAPIPolicyKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The output leaves out policies Envoy Gateway wrote no status for:
	// the policies are the input's, their statuses the output's.
	status := map[topology.Ref][]any{}
	for _, k := range keys {
		items, _ := doc[k].([]any)
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return exp, fmt.Errorf("%s: %s[%d] is not an object", path, k, i)
			}
			u := policyObject(m, k)
			ancs, _, _ := unstructured.NestedSlice(m, "status", "ancestors")
			status[refOf(u)] = ancs
		}
	}
	// Envoy Gateway's SDS reference Secrets, which a CA reference may name.
	sds := map[topology.Ref]bool{}
	for _, o := range objs {
		if o.Object.GetKind() == "Secret" && o.Object.Object["type"] == SDSSecretType {
			sds[refOf(o.Object)] = true
		}
	}
	for _, o := range objs {
		if !isPolicyKind(o.Object.GetAPIVersion(), o.Object.GetKind()) {
			continue
		}
		p := verdict.Policy{Ref: refOf(o.Object), Unmodelled: unmodelled(o.Object, sds)}
		for j, a := range status[p.Ref] {
			am, _ := a.(map[string]any)
			ea, keep, err := ancestor(am, p.Ref)
			if err != nil {
				return exp, fmt.Errorf("%s: %s status.ancestors[%d]: %w", path, p.Ref.Short(), j, err)
			}
			if keep {
				p.Ancestors = append(p.Ancestors, ea)
			}
		}
		exp.Policies = append(exp.Policies, p)
	}
	return exp, nil
}

// ClassName is the GatewayClass Envoy Gateway's translator test manages.
const ClassName = "envoy-gateway-class"

// managedAncestors is verdict.GatewayAncestors less the Gateways of another
// GatewayClass: Envoy Gateway writes no ancestor entry for a Gateway it does
// not manage (a route attached to one of its Gateways and to another
// controller's), while attache, which has no notion of controllers, judges
// every parent.
func managedAncestors(objs []engine.Object) func(*engine.Result, topology.Ref) []topology.Ref {
	unmanaged := map[topology.Ref]bool{}
	for _, o := range objs {
		u := o.Object
		if u.GetKind() != "Gateway" || !strings.HasPrefix(u.GetAPIVersion(), "gateway.networking.k8s.io/") {
			continue
		}
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName"); c != ClassName {
			unmanaged[refOf(u)] = true
		}
	}
	all := verdict.GatewayAncestors(objs)
	return func(res *engine.Result, t topology.Ref) []topology.Ref {
		var out []topology.Ref
		for _, r := range all(res, t) {
			if !unmanaged[r.Object()] {
				out = append(out, r)
			}
		}
		return out
	}
}

// Decode reads each policy of objs as Envoy Gateway's translator test
// decodes it (sigs.k8s.io/yaml into its Go types, through
// encoding/json), against the schema of its CRD among crds (of the
// version it is written in, else the CRD's storage version), so that
// the CRD's schema judges what the translator read rather than how the
// fixture spells it:
//
//   - an object key that is none of the schema's properties but one of
//     them but for case (encoding/json matches field names regardless of
//     case: "backoff" is backOff, "Name" name) is renamed to it, unless
//     the object also has the key so named;
//   - a required string property left out, without a default, whose
//     schema admits the empty string, is given it, which the typed
//     decoding reads there (the required fields of Envoy Gateway's and
//     Gateway API's types are values, not pointers: a BackendTLSPolicy
//     targetRef without group names the core group, as a user writes
//     `group: ""` on a cluster). One the schema defaults is left to it;
//     one refusing the empty string (an enum) stays missing, refused.
//
// Specs are copied, not changed in place. A policy whose CRD is not
// among crds is left as written.
func Decode(objs, crds []engine.Object) {
	specs := map[schema.GroupVersionKind]map[string]any{}
	for _, c := range crds {
		u := c.Object
		g, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		k, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			name, _ := m["name"].(string)
			spec, _, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema", "properties", "spec")
			specs[schema.GroupVersionKind{Group: g, Version: name, Kind: k}] = spec
		}
		if st := policy.CRDVersion(u, false); st != nil {
			name, _ := st["name"].(string)
			specs[schema.GroupVersionKind{Group: g, Kind: k}] = specs[schema.GroupVersionKind{Group: g, Version: name, Kind: k}]
		}
	}
	for _, o := range objs {
		gvk := o.Object.GroupVersionKind()
		if !isPolicyKind(o.Object.GetAPIVersion(), gvk.Kind) {
			continue
		}
		s, ok := specs[gvk]
		if !ok {
			s, ok = specs[schema.GroupVersionKind{Group: gvk.Group, Kind: gvk.Kind}]
		}
		if spec, has := o.Object.Object["spec"]; ok && has {
			o.Object.Object["spec"] = decodeAs(spec, s)
		}
	}
}

// admitsEmpty says whether the schema s of a property is a string's that
// admits the empty string and has no default: the API server defaults a
// property left out, and an empty string it refuses would only change
// why the policy is refused.
func admitsEmpty(s map[string]any) bool {
	if s["type"] != "string" {
		return false
	}
	if _, has := s["default"]; has {
		return false
	}
	if enum, has := s["enum"].([]any); has && !slices.Contains(enum, any("")) {
		return false
	}
	if n, _ := s["minLength"].(int64); n > 0 {
		return false
	}
	if n, _ := s["minLength"].(float64); n > 0 {
		return false
	}
	if pat, has := s["pattern"].(string); has {
		re, err := regexp.Compile(pat)
		return err == nil && re.MatchString("")
	}
	return true
}

// decodeAs copies v (a JSON value) read against its schema s (see
// Decode). A value outside s, or under a schema keeping unknown fields
// without properties, is copied as it is.
func decodeAs(v any, s map[string]any) any {
	switch t := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		more, _ := s["additionalProperties"].(map[string]any)
		out := make(map[string]any, len(t))
		for k, e := range t {
			name := k
			if _, known := props[k]; !known {
				var folded []string
				for p := range props {
					if _, taken := t[p]; !taken && strings.EqualFold(p, k) {
						folded = append(folded, p)
					}
				}
				if len(folded) == 1 {
					name = folded[0]
				}
			}
			sub, _ := props[name].(map[string]any)
			if sub == nil {
				sub = more
			}
			out[name] = decodeAs(e, sub)
		}
		required, _ := s["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			p, _ := props[name].(map[string]any)
			if _, has := out[name]; !has && admitsEmpty(p) {
				out[name] = ""
			}
		}
		return out
	case []any:
		items, _ := s["items"].(map[string]any)
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = decodeAs(e, items)
		}
		return out
	}
	return v
}

func policyObject(m map[string]any, key string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		u.SetKind(listKinds[key][1])
	}
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(listKinds[key][0])
	}
	return u
}

// isPolicyKind says whether objects of apiVersion and kind are compared.
func isPolicyKind(apiVersion, kind string) bool {
	keys := PolicyKeys
	if apiVersion != Group+"/v1alpha1" {
		keys = GatewayAPIPolicyKeys
		if !strings.HasPrefix(apiVersion, "gateway.networking.k8s.io/") {
			return false
		}
	}
	for _, k := range keys {
		if k == kind {
			return true
		}
	}
	return false
}

// SDSSecretType is the type of Envoy Gateway's SDS reference Secrets, which
// point Envoy at a secret discovery service instead of holding data.
const SDSSecretType = "gateway.envoyproxy.io/sds"

// unmodelled names what a policy uses that attache does not model. sds are
// the SDS reference Secrets.
func unmodelled(u *unstructured.Unstructured, sds map[topology.Ref]bool) string {
	var what []string
	if u.GetKind() == "BackendTLSPolicy" {
		// Envoy Gateway's Backend and ServiceImport targets (their ports
		// by number) and ClusterTrustBundle CA references are modelled;
		// Secrets that point Envoy at a secret discovery service are not.
		cas, _, _ := unstructured.NestedSlice(u.Object, "spec", "validation", "caCertificateRefs")
		for _, r := range cas {
			m, _ := r.(map[string]any)
			name, _ := m["name"].(string)
			if m["kind"] == "Secret" && sds[topology.Ref{Kind: "Secret", Namespace: u.GetNamespace(), Name: name}] {
				what = append(what, "SDS reference Secret")
			}
		}
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "targetSelectors"); ok {
		what = append(what, "targetSelectors")
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "targetRefs")
	if one, ok, _ := unstructured.NestedMap(u.Object, "spec", "targetRef"); ok {
		refs = append(refs, one)
	}
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["kind"] == "ListenerSet" {
			what = append(what, "ListenerSet target")
			break
		}
	}
	return strings.Join(what, ", ")
}

// ancestor reads one status.ancestors entry. keep is false for a merge
// record (see the package documentation), which is no verdict.
func ancestor(am map[string]any, pol topology.Ref) (a verdict.Ancestor, keep bool, err error) {
	ref, _, _ := unstructured.NestedMap(am, "ancestorRef")
	r := gatewayapi.ParentRefOf(ref, pol.Namespace)
	if r.Kind == "GatewayClass" {
		r.Namespace = ""
	}
	if r.Name == "" {
		return verdict.Ancestor{}, false, fmt.Errorf("ancestorRef without a name")
	}
	conds, _, _ := unstructured.NestedSlice(am, "conditions")
	var v verdict.Verdict
	overridden, merged := false, false
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		status, _ := cm["status"].(string)
		reason, _ := cm["reason"].(string)
		switch cm["type"] {
		case "Accepted":
			v.Message, _ = cm["message"].(string)
			if status == "True" {
				v.Accepted = "True"
			} else {
				v.Accepted = reason
			}
		case "Overridden":
			overridden = status == "True"
		case "Merged":
			merged = status == "True"
		case "ResolvedRefs":
			v.ResolvedRefs = reason
			if status == "True" {
				v.ResolvedRefs = "True"
			}
		}
	}
	if v.Accepted == "" {
		switch {
		case merged && !overridden:
			// A merge record: Envoy Gateway's verdict on the policy is the
			// Accepted entry at the route's parentRef.
			return verdict.Ancestor{}, false, nil
		case !overridden:
			return verdict.Ancestor{}, false, fmt.Errorf("no Accepted, Overridden or Merged condition")
		}
		// Envoy Gateway sometimes writes only Overridden (e.g. in
		// envoyextensionpolicy-status-conditions-truncated); it writes it
		// for policies it applies, so the entry counts as accepted.
		v.Accepted = "True"
	}
	// For Gateway API kinds Envoy Gateway says nothing of how much of a
	// policy applies (no Overridden or Merged): Programmed is not compared.
	if v.Accepted == "True" && pol.Group == Group {
		switch {
		case overridden:
			v.Programmed = verdict.LostContext
		case merged:
			v.Programmed = verdict.Contributes
		default:
			v.Programmed = verdict.Full
		}
	}
	return verdict.Ancestor{Ref: r, Want: v}, true, nil
}
