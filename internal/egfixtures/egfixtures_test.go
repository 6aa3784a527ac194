package egfixtures

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/verdict"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// mustMatch lists the fixtures (file name less .in.yaml) on which attache's
// verdicts must equal Envoy Gateway's for every policy and ancestor. The test
// also fails when a fixture outside the list matches fully, so that the list
// stays the exact set of agreeing fixtures.
var mustMatch = map[string]bool{}

const testdata = "internal/gatewayapi/testdata"

// crds are Envoy Gateway's policy CRDs and the Gateway API CRDs its chart
// installs, as a cluster running Envoy Gateway has them.
func crds(t *testing.T, dir string) []engine.Object {
	objs := modfixtures.CRDs(t, dir, "charts/gateway-helm/charts/crds/crds/generated/*.yaml")
	return append(objs, modfixtures.CRDs(t, dir, "charts/gateway-helm/charts/crds/crds/gatewayapi-crds.yaml")...)
}

// TestEnvoyGatewayFixtures runs the engine on every translator fixture
// holding Envoy Gateway policies and compares the policies' status with
// Envoy Gateway's golden output. The full table (fixture, policy, ancestor,
// Envoy Gateway says, attache says, cause, Envoy Gateway's message) goes to
// $ATTACHE_EG_REPORT when set, else to a file under the test's temporary
// directory; -v prints it.
func TestEnvoyGatewayFixtures(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	base := crds(t, dir)
	ins, err := filepath.Glob(filepath.Join(dir, testdata, "*.in.yaml"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no fixtures under %s: %v", testdata, err)
	}
	var all []verdict.Mismatch
	fixtures, matching := 0, 0
	byCause := map[verdict.Cause]int{}
	seen := map[string]bool{}
	for _, in := range ins {
		ok, err := HasPolicies(in)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !ok {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		seen[name] = true
		fixtures++
		objs, err := Load(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		exp, err := Expect(name, strings.TrimSuffix(in, ".in.yaml")+".out.yaml", objs)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(exp.Policies) == 0 {
			t.Errorf("%s: input has policies but the output lists none", name)
			continue
		}
		res := engine.Compute(append(append([]engine.Object(nil), base...), objs...), engine.Options{})
		mm := verdict.Compare(exp, res)
		all = append(all, mm...)
		for _, m := range mm {
			byCause[m.Cause]++
		}
		switch {
		case len(mm) == 0:
			matching++
			if !mustMatch[name] {
				t.Errorf("%s: attache now agrees with Envoy Gateway on every policy: add it to mustMatch", name)
			}
		case mustMatch[name]:
			for _, m := range mm {
				t.Errorf("allow-listed fixture mismatches: %s", m)
			}
		}
	}
	for name := range mustMatch {
		if !seen[name] {
			t.Errorf("mustMatch lists %s, which is not a fixture with Envoy Gateway policies at %s", name, modfixtures.Versions[modfixtures.EnvoyGateway])
		}
	}
	if fixtures < 100 {
		t.Errorf("only %d fixtures with Envoy Gateway policies (expected hundreds): is the fixture layout still %s?", fixtures, testdata)
	}

	report := os.Getenv("ATTACHE_EG_REPORT")
	if report == "" {
		report = filepath.Join(t.TempDir(), "envoy-gateway-fixtures.tsv")
	}
	var b strings.Builder
	b.WriteString("fixture\tpolicy\tancestor\tenvoy gateway says\tattache says\tcause\tenvoy gateway message\n")
	for _, m := range all {
		b.WriteString(m.String() + "\n")
	}
	if err := os.WriteFile(report, []byte(b.String()), 0o644); err != nil {
		t.Errorf("writing the report: %v", err)
	}
	causes := make([]string, 0, len(byCause))
	for c, n := range byCause {
		causes = append(causes, fmt.Sprintf("%d %s", n, c))
	}
	sort.Strings(causes)
	t.Logf("Envoy Gateway %s: %d fixtures with policies, %d match fully; %d mismatches: %s; table: %s",
		modfixtures.Versions[modfixtures.EnvoyGateway], fixtures, matching, len(all), strings.Join(causes, "; "), report)
	t.Log("mismatches grouped by cause and verdicts (count, group, first example):\n" + groups(all))
	if testing.Verbose() {
		t.Log("\n" + b.String())
	}
}

// The converter must see every object and policy of a known fixture, with
// the expectations Envoy Gateway wrote (read here by hand from the module).
func TestLoadAndExpect(t *testing.T) {
	dir := filepath.Join(modfixtures.Dir(t, modfixtures.EnvoyGateway), testdata)
	name := "backendtrafficpolicy-compression-json-merge"
	objs, err := Load(filepath.Join(dir, name+".in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Object.GetKind()]++
	}
	if kinds["Gateway"] != 1 || kinds["HTTPRoute"] != 1 || kinds["BackendTrafficPolicy"] != 2 || kinds["Service"] != 5 {
		t.Errorf("kinds = %v", kinds)
	}
	exp, err := Expect(name, filepath.Join(dir, name+".out.yaml"), objs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range exp.Policies {
		for _, a := range p.Ancestors {
			got[p.Ref.Name+" @ "+a.Ref.Short()] = a.Want.String()
		}
	}
	want := map[string]string{
		"route-compression-policy @ " + gwRef("envoy-gateway", "gateway-1", "http"): "Accepted=True Programmed:merged",
		"gateway-compression-policy @ " + gwRef("envoy-gateway", "gateway-1", ""):   "Accepted=True Programmed:merged",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("expectations:\n got %v\nwant %v", got, want)
	}
}

func gwRef(ns, name, section string) string {
	return topology.Ref{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: ns, Name: name, SectionName: section}.Short()
}

// groups summarises mismatches by cause and by the pair of verdicts, with a
// count and the first example of each group, most frequent first.
func groups(mm []verdict.Mismatch) string {
	type group struct {
		key   string
		n     int
		first verdict.Mismatch
	}
	idx := map[string]*group{}
	var gs []*group
	for _, m := range mm {
		k := fmt.Sprintf("[%s] %s -> %s", m.Cause, m.Want, m.Got)
		g := idx[k]
		if g == nil {
			g = &group{key: k, first: m}
			idx[k] = g
			gs = append(gs, g)
		}
		g.n++
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].n > gs[j].n })
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "%4d  %s\n      e.g. %s\n", g.n, g.key, g.first)
	}
	return b.String()
}
