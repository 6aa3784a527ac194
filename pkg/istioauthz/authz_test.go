package istioauthz

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/topology"
)

// pol builds a policy from its spec in YAML.
func pol(t *testing.T, name, spec string) Policy {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
		t.Fatal(err)
	}
	return Policy{Ref: topology.Ref{Group: "security.istio.io", Kind: "AuthorizationPolicy", Namespace: "shop", Name: name}, Spec: m}
}

// TestDecide: Istio's order (CUSTOM, DENY, ALLOW; no ALLOW policy allows;
// ALLOW policies allow only what they match), its string matches, and
// unknown where the request does not tell.
func TestDecide(t *testing.T) {
	get := Request{Method: "GET", Host: "shop.example.com", Path: "/admin/users", Headers: map[string]string{"x-team": "blue"}}
	for _, c := range []struct {
		name    string
		pols    []string // name=spec, in order
		req     Request
		verdict string
		by      string // the deciding policy's name, "" for none
		reason  string // a part of the reason
	}{
		{"no policy", nil, get, Allow, "", "no ALLOW policy applies"},
		{"allow-nothing ({})", []string{"deny-all={}"}, get, Deny, "", "none matches"},
		{"empty rule allows all", []string{"all={rules: [{}]}"}, get, Allow, "all", "rules[0] matches"},
		{"deny by path prefix", []string{"all={rules: [{}]}", "admin={action: DENY, rules: [{to: [{operation: {paths: [/admin*]}}]}]}"}, get, Deny, "admin", "DENY AuthorizationPolicy shop/admin rules[0] matches"},
		{"deny by suffix", []string{"x={action: DENY, rules: [{to: [{operation: {paths: ['*/users']}}]}]}"}, get, Deny, "x", "matches"},
		{"deny not matching", []string{"x={action: DENY, rules: [{to: [{operation: {paths: [/public*]}}]}]}"}, get, Allow, "", "no DENY policy matches"},
		{"notPaths", []string{"x={action: DENY, rules: [{to: [{operation: {notPaths: [/admin*]}}]}]}"}, get, Allow, "", ""},
		{"host case-insensitive", []string{"x={rules: [{to: [{operation: {hosts: [SHOP.example.COM]}}]}]}"}, get, Allow, "x", ""},
		{"host suffix", []string{"x={rules: [{to: [{operation: {hosts: ['*.example.com'], methods: [GET]}}]}]}"}, get, Allow, "x", ""},
		{"method mismatch denies", []string{"x={rules: [{to: [{operation: {methods: [POST]}}]}]}"}, get, Deny, "", "none matches"},
		{"second operation", []string{"x={rules: [{to: [{operation: {methods: [POST]}}, {operation: {methods: [GET]}}]}]}"}, get, Allow, "x", ""},
		{"header condition", []string{"x={rules: [{when: [{key: 'request.headers[X-Team]', values: [bl*]}]}]}"}, get, Allow, "x", ""},
		{"header condition fails", []string{"x={rules: [{when: [{key: 'request.headers[X-Team]', values: [red]}]}]}"}, get, Deny, "", ""},
		{"header notValues", []string{"x={action: DENY, rules: [{when: [{key: 'request.headers[x-team]', notValues: [blue]}]}]}"}, get, Allow, "", ""},
		{"source unknown", []string{"x={rules: [{from: [{source: {namespaces: [web]}}]}]}"}, get, Unknown, "", "depends on rules"},
		{"source unknown, denied by path anyway", []string{"x={rules: [{from: [{source: {namespaces: [web]}}], to: [{operation: {paths: [/public]}}]}]}"}, get, Deny, "", "none matches"},
		{"deny may apply", []string{"all={rules: [{}]}", "x={action: DENY, rules: [{from: [{source: {ipBlocks: [1.2.3.4]}}]}]}"}, get, Unknown, "all", "unless a CUSTOM or DENY rule"},
		{"claims unknown", []string{"x={rules: [{when: [{key: 'request.auth.claims[iss]', values: [a]}]}]}"}, get, Unknown, "", ""},
		{"ports unknown", []string{"x={rules: [{to: [{operation: {ports: ['8080']}}]}]}"}, get, Unknown, "", ""},
		{"path template", []string{"x={rules: [{to: [{operation: {paths: ['/admin/{*}']}}]}]}"}, get, Unknown, "", ""},
		{"unnormalized path", []string{"x={rules: [{to: [{operation: {paths: [/admin*]}}]}]}"}, Request{Method: "GET", Host: "h", Path: "/a/../admin"}, Unknown, "", ""},
		{"custom first", []string{"ext={action: CUSTOM, provider: {name: opa}, rules: [{}]}", "all={rules: [{}]}"}, get, Unknown, "ext", `external authorizer "opa" decides first; if it allows, ALLOW AuthorizationPolicy shop/all rules[0] matches`},
		{"custom then deny", []string{"ext={action: CUSTOM, provider: {name: opa}, rules: [{}]}", "no={action: DENY, rules: [{}]}"}, get, Deny, "no", "DENY"},
		{"audit decides nothing", []string{"a={action: AUDIT, rules: [{}]}"}, get, Allow, "", ""},
		{"deny without rules matches nothing", []string{"d={action: DENY}"}, get, Allow, "", ""},
		// Envoy's pseudo-headers come from the request line.
		{":authority condition", []string{"x={action: DENY, rules: [{when: [{key: 'request.headers[:authority]', values: [shop.example.com]}]}]}"}, get, Deny, "x", ""},
		{":method condition", []string{"x={rules: [{when: [{key: 'request.headers[:method]', values: [GET]}]}]}"}, get, Allow, "x", ""},
		{":path condition with the query", []string{"x={rules: [{when: [{key: 'request.headers[:path]', values: ['*?a=1']}]}]}"}, Request{Method: "GET", Host: "h", Path: "/p", PathQuery: "/p?a=1"}, Allow, "x", ""},
		// Envoy sets x-forwarded-proto before it authorizes: not the client's.
		{"Envoy-set header", []string{"x={action: DENY, rules: [{when: [{key: 'request.headers[x-forwarded-proto]', values: [http]}]}]}"}, get, Unknown, "", ""},
		// A header sent empty is present.
		{"presence of an empty header", []string{"x={rules: [{when: [{key: 'request.headers[x-empty]', values: ['*']}]}]}"}, Request{Method: "GET", Host: "h", Path: "/", Headers: map[string]string{"x-empty": ""}}, Allow, "x", ""},
		{"absent header is not present", []string{"x={rules: [{when: [{key: 'request.headers[x-none]', values: ['*']}]}]}"}, get, Deny, "", ""},
		// A leading * is read first: *b* is a suffix match for "b*".
		{"*b* is a suffix match", []string{"x={action: DENY, rules: [{when: [{key: 'request.headers[x-a]', values: ['*b*']}]}]}"}, Request{Method: "GET", Host: "h", Path: "/", Headers: map[string]string{"x-a": "*bc"}}, Allow, "", ""},
		{"*b* matches its literal suffix", []string{"x={action: DENY, rules: [{when: [{key: 'request.headers[x-a]', values: ['*b*']}]}]}"}, Request{Method: "GET", Host: "h", Path: "/", Headers: map[string]string{"x-a": "ab*"}}, Deny, "x", ""},
		// notValues with the header absent: the negation matches.
		{"notValues, header absent", []string{"x={rules: [{when: [{key: 'request.headers[x-absent]', notValues: [a]}]}]}"}, get, Allow, "x", ""},
		// A plain path entry decides though another is a template.
		{"plain path beside a template", []string{"x={rules: [{to: [{operation: {paths: ['/admin/{*}', '/admin*']}}]}]}"}, get, Allow, "x", ""},
		{"a dot-file is normalized", []string{"x={rules: [{to: [{operation: {paths: [/.well-known*]}}]}]}"}, Request{Method: "GET", Host: "h", Path: "/.well-known/x"}, Allow, "x", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var pols []Policy
			for _, p := range c.pols {
				name, spec, _ := strings.Cut(p, "=")
				pols = append(pols, pol(t, name, spec))
			}
			d := Decide(pols, c.req)
			by := ""
			if d.Policy != nil {
				by = d.Policy.Name
			}
			if d.Verdict != c.verdict || by != c.by || !strings.Contains(d.Reason, c.reason) {
				t.Errorf("got %s by %q (%s; unknowns %q), want %s by %q with %q", d.Verdict, by, d.Reason, d.Unknowns, c.verdict, c.by, c.reason)
			}
			if d.Verdict == Unknown && len(d.Unknowns) == 0 && !strings.Contains(d.Reason, "external authorizer") {
				t.Errorf("unknown without saying why: %+v", d)
			}
		})
	}
}

// TestDecideMalformed: specs of the wrong shape decide nothing and do not
// panic.
func TestDecideMalformed(t *testing.T) {
	for _, spec := range []string{"{rules: x}", "{rules: [x, 1, null]}", "{rules: [{to: x, from: [1], when: [x, {key: 1}]}]}", "{action: 7}", "{rules: [{to: [{operation: {hosts: [1, null], paths: x}}]}]}"} {
		d := Decide([]Policy{pol(t, "p", spec)}, Request{Method: "GET", Host: "h", Path: "/"})
		if d.Verdict == "" {
			t.Errorf("%s: no verdict", spec)
		}
	}
}

// FuzzDecide: any spec and request decide something without a panic.
func FuzzDecide(f *testing.F) {
	f.Add("{action: DENY, rules: [{to: [{operation: {paths: [/admin*]}}]}]}", "GET", "/admin", "x-a")
	f.Add("{rules: [{from: [{source: {}}], when: [{key: 'request.headers[x-a]', notValues: ['*']}]}]}", "POST", "//a/%2e", "")
	f.Add("{action: CUSTOM, provider: {name: p}, rules: [{}, x]}", "", "", "")
	f.Fuzz(func(t *testing.T, spec, method, path, header string) {
		var m map[string]any
		if yaml.Unmarshal([]byte(spec), &m) != nil {
			return
		}
		d := Decide([]Policy{{Ref: topology.Ref{Name: "p"}, Spec: m}}, Request{Method: method, Host: "h", Path: path, Headers: map[string]string{header: path}})
		if d.Verdict != Allow && d.Verdict != Deny && d.Verdict != Unknown {
			t.Fatalf("verdict %q", d.Verdict)
		}
	})
}
