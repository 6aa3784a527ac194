package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// FuzzParse parses fuzz bytes, decoded as a JSON object, either as the spec
// of a policy (whole=false) or as the whole policy object (whole=true),
// against a Direct and an Inherited kind.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}], "color": "blue"}`,
		`{"targetRef": {"group": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": "gw", "sectionName": "https"}, "defaults": {"color": "blue"}}`,
		`{"targetRefs": [{"kind": "HTTPRoute", "selector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}], "overrides": {"strategy": "patch", "x": 1}}`,
		`{"targetRefs": [{"kind": "Service", "name": "s", "namespace": ""}, {"kind": "Service", "name": "s"}], "strategy": "merge", "override": {"x": null}}`,
		`{"targetRefs": [{"kind": "Gateway", "selector": {"matchExpressions": [{"key": "k", "operator": "Foo"}]}}], "defaults": {}, "overrides": {}}`,
		`{"targetRefs": ["x", 1, null, [], {"kind": 2}], "default": "x", "strategy": 3}`,
		`{"apiVersion": "policies.example.com/v1", "kind": "ColorPolicy", "metadata": {"name": "p", "namespace": "n", "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {"targetRefs": [{"kind": "Gateway", "name": "g"}], "color": "red"}}`,
		`{"metadata": "x", "spec": {}}`,
		`{"metadata": {"creationTimestamp": 5, "name": 1}, "spec": []}`,
		// Issue 8: Envoy Gateway's targetSelectors and mergeType, group
		// core, bare kinds, Istio's workload selector.
		`{"targetSelectors": [{"kind": "HTTPRoute", "matchLabels": {"a": "b"}, "namespaces": {"from": "Selector", "selector": {"matchLabels": {"t": "w"}}}}], "mergeType": "JSONMerge", "x": 1}`,
		`{"targetSelectors": [{"group": 3, "kind": "", "matchExpressions": "x", "namespaces": {"from": "Other"}}], "mergeType": 7}`,
		`{"targetRefs": [{"group": "core", "kind": "Service", "name": "s", "sectionName": "http"}], "targetSelectors": [], "mergeType": "StrategicMerge"}`,
		`{"targetRefs": [{"kind": "Gateway", "name": "g"}], "selector": {"matchLabels": {"app": "x"}}}`,
		`{"selector": {"matchLabels": {"app": "x"}}, "action": "ALLOW"}`,
		// Istio's untargeted policies: malformed selectors.
		`{"selector": {"matchLabels": {"a": 1}}}`,
		`{"selector": "x", "workloadSelector": {"labels": []}}`,
		`{"workloadSelector": {"labels": {"gateway.networking.k8s.io/gateway-name": "g"}}}`,
		// CA certificate references, well and badly formed.
		`{"validation": {"caCertificateRefs": [{"group": "", "kind": "ConfigMap", "name": "ca"}, {"kind": 1}, "x", {"group": "core", "kind": "Secret", "name": "s", "namespace": ""}]}}`,
		`{"validation": {"caCertificateRefs": {"kind": "ConfigMap"}}}`,
		`{"validation": "x"}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	direct := directKind(f)
	inherited := inheritedKind(f)
	// A kind with the settings of issue 8 (Envoy Gateway's and Istio's).
	settings := mustKind(f, Spec{Class: Inherited, MergeTypeField: "mergeType", TargetingFields: []string{"selector"},
		SameLevel: SameLevelOldestWins, MaxTargetRefs: NoTargetRefLimit})
	// BackendTLSPolicy's CA certificate references.
	noStanzas := mustKind(f, Spec{Class: Direct, NoStanzas: true, CARefs: CARefs{Field: "validation.caCertificateRefs"}})
	// Istio's untargeted scope, over both of its selector fields, and its
	// targetRefs without sectionName.
	untargeted := mustKind(f, Spec{Class: Direct, TargetingFields: []string{"selector", "workloadSelector"},
		Untargeted: UntargetedScope{Mode: UntargetedIstio}, NoSectionNames: true})
	// Gloo's oneofs (an object's and a list's items') and a default read
	// where no reference is given.
	oneofs, err := ParseOneofs("options.hostRewrite|autoHostRewrite; rules[].a|b")
	if err != nil {
		f.Fatal(err)
	}
	refs, err := ParseObjectRefs("providerRefs[] missing=not-programmed default-label=k=v unless=delegate=true")
	if err != nil {
		f.Fatal(err)
	}
	protos := mustKind(f, Spec{Class: Inherited, Oneofs: oneofs, ObjectRefs: refs})
	f.Add([]byte(`{"targetRefs": [{"kind": "HTTPRoute", "name": "r"}], "options": {"hostRewrite": "a", "autoHostRewrite": true}, "rules": [1, {"a": null, "b": 2}], "delegate": "true"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, whole bool) {
		var m map[string]any
		if err := utiljson.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		for _, k := range []*Kind{direct, inherited, settings, noStanzas, untargeted, protos} {
			u := &unstructured.Unstructured{}
			if whole {
				u.Object = m
			} else {
				u.Object = map[string]any{
					"apiVersion": "policies.example.com/v1",
					"kind":       "ColorPolicy",
					"metadata":   map[string]any{"name": "p1", "namespace": "ns1"},
					"spec":       m,
				}
			}
			checkPolicy(t, Parse(u, k), k)
		}
	})
}

// checkPolicy asserts the invariants of every parsed policy.
func checkPolicy(t *testing.T, p *Policy, k *Kind) {
	t.Helper()
	if p == nil {
		t.Fatal("Parse returned nil")
	}
	if p.Kind != k {
		t.Fatal("Parse did not keep the kind")
	}
	for _, pr := range p.Problems {
		if pr.Object != p.Ref {
			t.Fatalf("problem %v is not about the policy %v", pr, p.Ref)
		}
		if pr.Field == "" || pr.Message == "" {
			t.Fatalf("problem without a field or message: %+v", pr)
		}
		if pr.Field != "spec" && pr.Field != "metadata.name" && pr.Field != "metadata.creationTimestamp" && !strings.HasPrefix(pr.Field, "spec.") {
			t.Fatalf("problem field %q is outside metadata and spec", pr.Field)
		}
	}
	for _, pr := range p.Ignored {
		sectionName := strings.HasPrefix(pr.Field, "spec.targetRef") && strings.HasSuffix(pr.Field, ".sectionName")
		oneof := strings.HasPrefix(pr.Field, "spec") && strings.Contains(pr.Message, "members of one oneof") && len(k.Oneofs) > 0
		if pr.Object != p.Ref || pr.Message == "" || !(sectionName || oneof) {
			t.Fatalf("ignored %+v is neither a targetRef's sectionName nor oneof members of the policy", pr)
		}
	}
	if len(p.Ignored) > 0 && !k.NoSectionNames && len(k.Oneofs) == 0 {
		t.Fatalf("a kind with section names ignored %v", p.Ignored)
	}
	if p.Invalid() {
		return
	}
	if !k.Supports(p.Strategy) {
		t.Fatalf("strategy %q is not one of the kind's %v", p.Strategy, k.Strategies)
	}
	if p.Stanza != "" && p.Strategy.Stanza() != p.Stanza && p.Strategy != merge.Custom {
		t.Fatalf("stanza %q with strategy %q", p.Stanza, p.Strategy)
	}
	if p.Untargeted != nil && (len(p.Targets) > 0 || k.Untargeted.Mode == UntargetedNone) {
		t.Fatalf("untargeted selection %+v with %d targets, scope %q", p.Untargeted, len(p.Targets), k.Untargeted.Mode)
	}
	switch n, limit := len(p.Targets), k.TargetRefLimit(); {
	case n == 0 && p.UnmodelledTargeting == "" && p.Untargeted == nil:
		t.Fatal("valid policy with no targets")
	case n > 0 && p.UnmodelledTargeting != "":
		t.Fatalf("policy with %d targets says its targeting is unmodelled", n)
	case limit > 0 && n > 2*limit: // targetRefs and targetSelectors each
		t.Fatalf("valid policy with %d targets (limit %d)", n, limit)
	}
	if p.MergeType != "" && p.MergeType != MergeTypeJSON && p.MergeType != MergeTypeStrategic {
		t.Fatalf("merge type %q", p.MergeType)
	}
	if _, ok := p.Spec[k.MergeTypeField]; ok && k.MergeTypeField != "" && p.Stanza == "" {
		t.Fatalf("spec proper holds the merge type field %s", k.MergeTypeField)
	}
	if p.Spec == nil {
		t.Fatal("valid policy with a nil spec proper")
	}
	if p.Stanza == "" {
		keys := append([]string{"targetRefs", "targetRef", "targetSelectors"}, k.TargetingFields...)
		if !k.NoStanzas { // else strategy is a field of the kind's own
			keys = append(keys, "strategy")
		}
		for _, key := range keys {
			if _, ok := p.Spec[key]; ok {
				t.Fatalf("spec proper holds %s", key)
			}
		}
	}
	if _, ok := p.Spec["strategy"]; ok && !k.NoStanzas {
		t.Fatal("spec proper holds strategy")
	}
	if k.NoStanzas && p.Stanza != "" {
		t.Fatalf("stanza %q on a kind without stanzas", p.Stanza)
	}
	seen := map[string]bool{}
	for _, tr := range p.Targets {
		if tr.Kind == "" || tr.Field == "" || strings.Contains(tr.Group, "/") {
			t.Fatalf("bad target %+v", tr)
		}
		if (tr.Name == "") == (tr.Selector == nil) {
			t.Fatalf("target %+v must have exactly one of name and selector", tr)
		}
		if tr.Selector != nil && tr.SectionName != "" {
			t.Fatalf("selector target with a sectionName: %+v", tr)
		}
		if k.NoSectionNames && tr.SectionName != "" {
			t.Fatalf("target %+v has a sectionName, its kind none", tr)
		}
		sel := "<nil>"
		if tr.Selector != nil {
			sel = "sel:" + tr.Selector.String()
		}
		key := strings.Join([]string{tr.Group, tr.Kind, tr.Namespace, tr.Name, tr.SectionName, sel}, "\x00")
		if seen[key] {
			t.Fatalf("duplicate target %+v", tr)
		}
		seen[key] = true
	}
}

// FuzzParseCARefs reads fuzz strings as the attache.dev/ca-certificate-refs
// annotation: never a panic, and a value read without error is written
// back (CARefs.String) to itself.
func FuzzParseCARefs(f *testing.F) {
	for _, s := range []string{
		"validation.caCertificateRefs", "spec.validation.caCertificateRefs kinds=ConfigMap,Secret keys=ca.crt,tls.crt,*",
		"none", "", "x kinds=Pod", "x keys=*,ca.crt", "x kinds=Secret.core kinds=ConfigMap", "a..b", ".a", "x y",
		"x; controller=a/b kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any strict skip-unknown",
		"x max=1 secret-type=kubernetes.io/tls secret-keys=tls.crt,tls.key; controller=c", "none;", "x;;", "x; controller=a; controller=a",
		"x; controller=a kinds=Secret sds-type=t sds-feature=F.x", "x kinds=Secret sds-feature=F",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, err := ParseCARefs(v)
		if err != nil {
			return
		}
		again, err := ParseCARefs(r.String())
		if r.Enabled() && (err != nil || again.String() != r.String()) {
			t.Errorf("%q read as %q, which reads as %q (%v)", v, r.String(), again.String(), err)
		}
	})
}

// FuzzParseBackendRefPaths reads fuzz strings as the attache.dev/backend-refs
// annotation: no panic, and what it accepts reads back the same.
func FuzzParseBackendRefPaths(f *testing.F) {
	for _, s := range []string{
		"extAuth.http.backendRefs[]", "spec.extProc[].backendRefs[], extProc[].backendRef", "none", "", "a..b", "a[].[]", "a[x]", "[]", ",",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		paths, err := ParseBackendRefPaths(v)
		if err != nil || len(paths) == 0 {
			return
		}
		var ss []string
		for _, p := range paths {
			ss = append(ss, string(p))
		}
		again, err := ParseBackendRefPaths(strings.Join(ss, ","))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(paths) {
			t.Errorf("%q read as %v, which reads as %v (%v)", v, paths, again, err)
		}
	})
}

// FuzzParseObjectRefs reads fuzz strings as the attache.dev/object-refs
// annotation: no panic, and what it accepts is written back
// (ObjectRefsString) to itself.
func FuzzParseObjectRefs(f *testing.F) {
	for _, s := range []string{
		"oidc.clientSecret kinds=Secret keys=client-secret", "lua[].valueRef kinds=ConfigMap keys=lua,+; a kinds=Secret,ConfigMap keys=ca.crt,*",
		"none", "", ";", "a kinds=Pod", "a keys=+,x", "a..b", "a[x]", "a keys=", "a kinds=", "a on=HTTPS,TLS", "a on=,",
		"a content=crl", "a content=distinct on=TLS", "a content=", "a kinds=ConfigMap keys=lua,+ content=lua",
		"issuerRef kinds=Issuer,ClusterIssuer ready=Ready kind=required", "a kinds=Issuer ready=", "a kind=required", "a kinds=Issuer,Secret",
		"providerRefs[] kinds=Secret missing=not-programmed", "providerRefs[] missing=not-programmed default-label=kuadrant.io/default-provider=true unless=delegate=true", "a default-label=k= unless==x", "a missing=", "a kinds=Issuer missing=not-programmed",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseObjectRefs, ObjectRefsString) })
}

// FuzzParseDependencies reads fuzz strings as the attache.dev/dependencies
// annotation: no panic, and what it accepts is written back
// (DependenciesString) to itself, and judged against no served kind
// without a panic.
func FuzzParseDependencies(f *testing.F) {
	for _, s := range []string{
		"Limitador Operator=Limitador.limitador.kuadrant.io/v1alpha1",
		"Gateway API provider (istio / envoy gateway)=WasmPlugin.extensions.istio.io/v1alpha1,EnvoyFilter.networking.istio.io/v1alpha3|EnvoyPatchPolicy.gateway.envoyproxy.io/v1alpha1; Gateway API=HTTPRoute.gateway.networking.k8s.io/v1",
		"none", "", ";", "=", "a=", "a=B", "a=B/", "a=b.c/v1", "a=B.c|", "a=B,,C", "a=B; a=C", "a=B.c/v1/v2", "a=B.c d",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if ds := entriesRoundTrip(t, v, ParseDependencies, DependenciesString); ds != nil {
			_ = (&Kind{Dependencies: ds}).MissingDependencies(ServedAPIs{})
		}
	})
}

// FuzzParseUnsupportedFields reads fuzz strings as the
// attache.dev/unsupported-fields annotation: no panic, and what it accepts
// is written back (UnsupportedFieldsString) to itself.
func FuzzParseUnsupportedFields(f *testing.F) {
	for _, s := range []string{
		"TCPRoute=cors,jwt", "TCPRoute=authorization.rules[].cel; Service=a.b", "none", "", ";", "=a", "TCPRoute=",
		"TCPRoute=a..b", "Pod=x", "X.example.com=a[x]", "TCPRoute.gateway.networking.k8s.io=spec.cors",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseUnsupportedFields, UnsupportedFieldsString) })
}

// FuzzParseFailOpen reads fuzz strings as the attache.dev/fail-open
// annotation: no panic, and what it accepts is written back
// (FailOpenString) to itself.
func FuzzParseFailOpen(f *testing.F) {
	for _, s := range []string{"extProc[]=failOpen; wasm[]=failOpen", "extAuth=failOpen", "none", "", ";", "=x", "a=", "a..b=x", "a=b.c", "spec.spec.a=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseFailOpen, FailOpenString) })
}

// FuzzValueRanges reads fuzz strings as the attache.dev/value-ranges
// annotation (no panic; what it accepts is written back to itself) and
// checks a fuzz value against the ranges read (no panic; a problem names
// a field under spec).
func FuzzValueRanges(f *testing.F) {
	for _, s := range [][2]string{
		{"connection.bufferLimit=0..4294967295", `{"connection": {"bufferLimit": "1T"}}`},
		{"a[].b=1..2; c=-5..5", `{"a": [{"b": 3}, {"b": "x"}, 7, null], "c": 1.5}`},
		{"none", `{}`},
		{"a=1..", `[]`},
		{"a=9223372036854775807..9223372036854775807", `{"a": "9223372036854775808"}`},
		{"a=0..1", `{"a": "1e400"}`},
		{"spec.spec.a=1..2", `{"spec": {"a": 3}}`},
		{"a=1..2 on=HTTP,HTTPS; b=0..0\ton=TCP", `{"a": 3, "b": 1}`},
		{"a=1..2 on=", `{}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, v, spec string) {
		rs := entriesRoundTrip(t, v, ParseValueRanges, ValueRangesString)
		if len(rs) == 0 {
			return
		}
		var m map[string]any
		if utiljson.Unmarshal([]byte(spec), &m) != nil {
			return
		}
		k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, ValueRanges: rs})
		if err != nil {
			return
		}
		for _, pr := range (&Policy{Kind: k, Spec: m}).OutOfRange() {
			if !strings.HasPrefix(pr.Field, "spec.") || pr.Message == "" {
				t.Errorf("problem %+v", pr)
			}
		}
	})
}

// FuzzFeatureGates: any annotation value reads as gates that write back
// as themselves, or as an error; gates read any spec without a panic and
// with problems naming fields below spec.
func FuzzFeatureGates(f *testing.F) {
	for _, s := range [][2]string{
		{"EnvoyGateway.extensionApis.enableLua=lua", `{"lua": [{"inline": "x"}]}`},
		{"a=*; b=x[].y,z", `{"x": [{"y": 1}, 2, null], "z": {}}`},
		{"none", `{}`},
		{"spec.a=spec.spec", `{"spec": 1}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, v, spec string) {
		gs := entriesRoundTrip(t, v, ParseFeatureGates, FeatureGatesString)
		if len(gs) == 0 {
			return
		}
		var m map[string]any
		if utiljson.Unmarshal([]byte(spec), &m) != nil {
			return
		}
		k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, FeatureGates: gs})
		if err != nil {
			t.Fatalf("gates %q read but refused by NewKind: %v", FeatureGatesString(gs), err)
		}
		for _, pr := range (&Policy{Kind: k, Spec: m}).GatedOff(nil) {
			if !strings.HasPrefix(pr.Field, "spec.") || !strings.Contains(pr.Message, "needs ") {
				t.Errorf("problem %+v", pr)
			}
		}
	})
}

// entriesRoundTrip reads v as an annotation of ";"-separated entries with
// parse and, when it is accepted, checks that render writes the entries
// back to a value read as the same entries. It returns the entries (none
// when v is refused or names none).
func entriesRoundTrip[T any](t *testing.T, v string, parse func(string) ([]T, error), render func([]T) string) []T {
	t.Helper()
	es, err := parse(v)
	if err != nil || len(es) == 0 {
		return nil
	}
	again, err := parse(render(es))
	if err != nil || render(again) != render(es) {
		t.Errorf("%q read as %q, which reads as %q (%v)", v, render(es), render(again), err)
	}
	return es
}

// FuzzParseRequiredObjects reads fuzz strings as the
// attache.dev/required-objects annotation: no panic, and what it accepts
// renders (RequiredObjectsString) to itself.
func FuzzParseRequiredObjects(f *testing.F) {
	for _, s := range []string{"kuadrant=Kuadrant.kuadrant.io", "a=B.c; d=E.f", "none", "", ";", "=", "a=", "a=B", "a=B.", "a=B.c/v1", "a=B.c; a=D.e", " a = B.c "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if rs := entriesRoundTrip(t, v, ParseRequiredObjects, RequiredObjectsString); rs != nil {
			_ = (&Kind{RequiredObjects: rs}).MissingRequiredObjects(func(topology.GroupKind) bool { return false }, nil)
		}
	})
}

// FuzzParseAllowlists reads fuzz strings as the
// attache.dev/data-plane-allowlists annotation: no panic, and a value it
// accepts renders (AllowlistsString) to itself.
func FuzzParseAllowlists(f *testing.F) {
	for _, s := range []string{"dynamicModule[].name=dynamicModules[].name", "spec.a.b=spec.dynamicModules[].name", "none", "", ";", "=x", "a=", "a=telemetry", "a..b=dynamicModules[].name"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseAllowlists, AllowlistsString) })
}

// FuzzParseRegexFields reads fuzz strings as the attache.dev/regex-fields
// annotation: no panic, and a value it accepts renders
// (RegexFieldsString) to itself.
func FuzzParseRegexFields(f *testing.F) {
	for _, s := range []string{"a.b[].value when=type=RegularExpression", "a; b[]", "none", "", ";", "a when=", "a when==x", "spec.a when=x=y when=z=w", "lua[].inline syntax=lua when=type=Inline unless=luaValidation=Disabled", "a unless=luaValidation=", "a syntax=lua syntax=lua",
		"lua[].valueRef syntax=envoy-lua when=type=ValueRef unless=luaValidation=Disabled|InsecureSyntax", "a unless=luaValidation=|", "a syntax=envoy-lua syntax=lua"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseRegexFields, RegexFieldsString) })
}

// FuzzParseOneofs reads fuzz strings as the attache.dev/oneofs
// annotation: no panic, and a value it accepts renders (OneofsString) to
// itself.
func FuzzParseOneofs(f *testing.F) {
	for _, s := range []string{"options.hostRewrite|autoHostRewrite|hostRewritePathRegex|hostRewriteHeader; options.ratelimit|rateLimitConfigs", "a|b", "none", "", ";", "a", "a|", "|a", ".a|b", "a.|b",
		"spec.a|b", "spec.spec.a|b", "spec|x", "rules[].a|b", "a|b; b|c", "a.b|c; a.c|d", "a|a", "a.b|c.d", "a b|c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseOneofs, OneofsString) })
}

// FuzzParseRequirements reads fuzz strings as the attache.dev/requires
// annotation: no panic, and a value it accepts renders
// (RequirementsString) to itself.
func FuzzParseRequirements(f *testing.F) {
	for _, s := range []string{"a[] requires parameters:geoIP.provider.maxMind", "a requires X.y:b|c; a excludes X.y:b.d", "none", "", ";", "a requires", "a requires :", "a requires X.:b", "a requires X.y:", "a requires X.y:b||c", "a requires X.y:spec.spec.b on=HTTP,HTTPS", "a requires X.y:b on=HTTP on=TCP", "a requires parameters:b reason=R", "a requires parameters:b reason=R reason=S", "a requires X.y:b reason=R on=HTTP",
		"type requires parameters:waf.enable=true reason=NginxProxyConfigNotSet without-parameters=unmet-at-gateways", "a requires parameters:dnsResolver service=ExternalName without-parameters=unmet",
		"a requires parameters:waf.enable=|waf.enable=x", "a requires parameters:waf.enable=a=b", "a requires X.y:b=c", "a requires parameters:dnsResolver service=x service=y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) { entriesRoundTrip(t, v, ParseRequirements, RequirementsString) })
}

// FuzzParseDelegationPriority reads fuzz strings as the
// attache.dev/delegation-priority annotation: no panic, and a value it
// accepts renders to a value read the same.
func FuzzParseDelegationPriority(f *testing.F) {
	for _, s := range []string{"none", "", "a.io/p parent=A", "a.io/p parent=A,B child=C", "a.io/p child=C", "a.io/p parent=A child=A", "a parent=,", "a.io/p parent=A child=C x",
		"a.io/p child-fields=options", "a.io/p child-fields=. groups=g:a|b,h:c", "a.io/p child-fields=a..b", "a.io/p child-fields=o groups=g:a,h:a", "a.io/p child-fields=o groups=:a", "a.io/p child-fields=o parent=A", "a.io/p child-fields=spec.options", "a.io/p child-fields=spec.spec.o"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := ParseDelegationPriority(v)
		if err != nil {
			return
		}
		again, err := ParseDelegationPriority(d.String())
		if err != nil || again.String() != d.String() {
			t.Fatalf("%q renders %q, read back as %q (%v)", v, d.String(), again.String(), err)
		}
	})
}

// FuzzParseValidations reads fuzz strings as the attache.dev/validations
// annotation: no panic, a value it accepts renders (ValidationsString) to
// itself, and its rules evaluate on a small spec (true, false or an
// error, within the cost limits) without a panic.
func FuzzParseValidations(f *testing.F) {
	for _, s := range []string{
		`[{rule: "has(self.a)", message: must set a, fieldPath: .a}]`,
		`[{"rule": "self.l.all(x, x > 0)", "listenerProtocols": ["HTTPS"]}]`,
		`- rule: "quantity(self.q).isLessThan(quantity('1Mi'))"`,
		`[{rule: "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z > 0)))"}]`,
		`[{rule: "self.s.matches('^(a+)+$')"}]`,
		"none", "", "[]", "[{}]", "{rule: x}", `[{rule: "self.a =="}]`, `[{rule: "1"}]`, `[{rule: "true", fieldPath: "a"}]`,
	} {
		f.Add(s)
	}
	spec := map[string]any{"a": int64(1), "s": "aaaa", "q": "1Ki", "l": []any{int64(1), int64(2), int64(3)}, "m": map[string]any{"k": "v"}}
	f.Fuzz(func(t *testing.T, v string) {
		vs := entriesRoundTrip(t, v, ParseValidations, ValidationsString)
		if len(vs) == 0 {
			return
		}
		k, err := NewKind(Spec{GroupKind: topology.GroupKind{Group: "x.io", Kind: "P"}, Class: Direct, TargetKinds: []topology.GroupKind{topology.KindHTTPRoute}, Validations: vs})
		if err != nil {
			t.Fatalf("%q: accepted by ParseValidations, refused by NewKind: %v", v, err)
		}
		(&Policy{Kind: k, Spec: spec}).Violations()
	})
}

// FuzzParsePortSelection reads fuzz strings as the
// attache.dev/port-selection annotation: no panic, and what it accepts is
// written back (String) to itself, read again the same.
func FuzzParsePortSelection(f *testing.F) {
	for _, s := range []string{"perPort[].listener key=port default=default", "none", "", "a[].b key=c", "a[].b key=c default=a",
		"a[].b key=b default=d", "a.b[].c key=p default=d", "a[].b default=d key=p", "a[].b key=p key=q", "a[] key=p default=d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParsePortSelection(v)
		if err != nil {
			return
		}
		again, err := ParsePortSelection(s.String())
		if err != nil || again != s {
			t.Fatalf("%q read as %+v, written %q, read again %+v (%v)", v, s, s.String(), again, err)
		}
	})
}

// FuzzLuaField parses fuzz strings as an inline Lua script of a field
// with syntax=lua, and runs them as one with syntax=envoy-lua (Envoy
// Gateway's Strict validation, in attache's sandbox): no panic, no hang,
// and problems only with their field and a message saying the script
// does not parse (once) or fails.
func FuzzLuaField(f *testing.F) {
	for _, s := range []string{"function envoy_on_request(h) end", "if x then", "local = 1", "", "--[[", "\"\\", "a = {[1]=", "goto x ::x::",
		"function envoy_on_request(h) h:headers():get(1):x() end",
		"function envoy_on_response(h) while true do end end",
		"function envoy_on_request(h) local s = 'x' for i = 1, 64 do s = s .. s end end",
		"function envoy_on_request(h) return h:body():getBytes(0, 1):rep(1e9) end",
		"function envoy_on_request(h) coroutine.wrap(function() while true do end end)() end",
		"function envoy_on_request(h) string.find(string.rep('a', 5000), '.-.-.-.-b') end",
		"function envoy_on_request(h) io.open('/etc/passwd'); os.getenv('pwd') end",
		"function envoy_on_request(h) pcall(function() while true do end end) while true do end end",
	} {
		f.Add(s)
	}
	rs, err := ParseRegexFields("lua[].inline syntax=lua; lua[].inline syntax=envoy-lua")
	if err != nil {
		f.Fatal(err)
	}
	k := routeKind(f, Spec{RegexFields: rs})
	f.Fuzz(func(t *testing.T, script string) {
		p := &Policy{Kind: k, Spec: map[string]any{"lua": []any{map[string]any{"inline": script}}}}
		probs := p.BadRegexes()
		for _, b := range probs {
			if b.Field != "spec.lua[0].inline" || !(strings.HasPrefix(b.Message, "Lua does not parse: ") || strings.HasPrefix(b.Message, "the Lua script fails when run against Envoy's Lua API")) {
				t.Fatalf("problem %+v", b)
			}
		}
		if len(probs) > 1 {
			t.Fatalf("%d problems for one script: %+v", len(probs), probs)
		}
	})
}

// FuzzParseKindLists reads fuzz strings as the list-valued annotations of
// session 29 (attache.dev/controllers, effective-listeners,
// cluster-ip-routing) and attache.dev/other-controllers: no panic, and
// what each accepts is written back to a value it reads the same.
func FuzzParseKindLists(f *testing.F) {
	for _, s := range []string{"any", "", "example.com/a, example.com/b", "hostname,tls-terminate", "routingType=Service", "spec.routingType=Service", "a=b=c", ",", "x/", "/x", "none", "attached-routes", "hostname,attached-routes,tls-terminate", "attached-routes,attached-routes", "unlisted", " not-programmed", "target-not-found"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if cs, err := ParseControllers(v); err == nil {
			if again, err := ParseControllers(ControllersString(cs)); err != nil || !slices.Equal(again, cs) {
				t.Errorf("controllers %q: read %v, written %q, read again %v (%v)", v, cs, ControllersString(cs), again, err)
			}
		}
		if ls, err := ParseEffectiveListeners(v); err == nil {
			if again, err := ParseEffectiveListeners(EffectiveListenersString(ls)); err != nil || !slices.Equal(again, ls) {
				t.Errorf("effective listeners %q: read %v, read again %v (%v)", v, ls, again, err)
			}
		}
		if np, ul, err := ParseOtherControllers(v); err == nil {
			word := OtherControllersTargetNotFound
			switch {
			case np && ul:
				t.Errorf("other controllers %q: both not-programmed and unlisted", v)
			case np:
				word = OtherControllersNotProgrammed
			case ul:
				word = OtherControllersUnlisted
			}
			if np2, ul2, err := ParseOtherControllers(word); err != nil || np2 != np || ul2 != ul {
				t.Errorf("other controllers %q: read %v/%v, written %q, read again %v/%v (%v)", v, np, ul, word, np2, ul2, err)
			}
		}
		if c, err := ParseClusterIPRouting(v); err == nil {
			if again, err := ParseClusterIPRouting(c.String()); err != nil || again != c {
				t.Errorf("cluster IP routing %q: read %q, read again %q (%v)", v, c, again, err)
			}
			_ = c.Holds(map[string]any{"routingType": v})
		}
	})
}

// FuzzParseBackendRefSettings reads fuzz strings as the
// attache.dev/unresolved-backend-refs, attache.dev/backend-refs and
// attache.dev/invalid-policies annotations: no panic, and the rules the
// first accepts are written back (BackendRefRules.String) to themselves.
func FuzzParseBackendRefSettings(f *testing.F) {
	for _, s := range []string{
		"invalid", "ignore", "invalid external-name=allowed protocols=any backend-tls=oldest", "invalid protocols=any protocols=any", "invalid grant-reason=RefNotPermitted", "invalid grant-reason=",
		"ignore protocols=any", "a; ancestors=gateways", "none; ancestors=gateways", "not-applied references=after-conflicts", "", ";",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		invalid, rules, err := ParseUnresolvedBackendRefs(v)
		if err == nil {
			w := "ignore"
			if invalid {
				w = strings.TrimSpace("invalid " + rules.String())
			}
			inv2, again, err := ParseUnresolvedBackendRefs(w)
			if err != nil || inv2 != invalid || again != rules {
				t.Errorf("%q read as %v %+v, written %q, which reads as %v %+v (%v)", v, invalid, rules, w, inv2, again, err)
			}
		} else if rules != (BackendRefRules{}) || invalid {
			t.Errorf("%q refused (%v) but read as %v %+v", v, err, invalid, rules)
		}
		if paths, gws, err := ParseBackendRefSetting(v); err == nil && gws && len(paths) == 0 {
			t.Errorf("%q read as ancestors=gateways without paths", v)
		}
		if na, after, err := ParseInvalidPolicies(v); err == nil && after && !na {
			t.Errorf("%q read as references=after-conflicts without not-applied", v)
		}
	})
}
