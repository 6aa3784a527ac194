package gatewayapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// parse turns "---"-separated YAML documents into unstructured objects.
func parse(t testing.TB, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("bad YAML fixture: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatalf("bad fixture: %v\n%s", err, doc)
		}
		out = append(out, u)
	}
	return out
}

// short renders a ref as Kind [namespace/]name[#section], with the group
// only when it is neither the core nor the Gateway API group.
func short(r topology.Ref) string {
	s := r.Kind
	if r.Group != topology.CoreGroup && r.Group != topology.GatewayGroup {
		s += "." + r.Group
	}
	s += " "
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	s += r.Name
	if r.SectionName != "" {
		s += "#" + r.SectionName
	}
	return s
}

// edges renders every edge of g as "parent -> child", sorted.
func edges(g *topology.Graph) []string {
	var out []string
	for i := range g.Len() {
		n := g.Node(topology.NodeID(i))
		for _, c := range n.Children {
			out = append(out, short(n.Ref)+" -> "+short(g.Node(c).Ref))
		}
	}
	slices.Sort(out)
	return out
}

// nodes renders every node of g, sorted.
func nodes(g *topology.Graph) []string {
	out := make([]string, 0, g.Len())
	for i := range g.Len() {
		out = append(out, short(g.Node(topology.NodeID(i)).Ref))
	}
	slices.Sort(out)
	return out
}

func problemStrings(ps []diag.Problem) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Error())
	}
	slices.Sort(out)
	return out
}

// build runs Add and Build over objs.
func build(t testing.TB, objs []*unstructured.Unstructured) (*topology.Graph, *gatewayapi.Grants, []diag.Problem, []topology.CycleError) {
	t.Helper()
	b := topology.NewBuilder()
	grants, probs := gatewayapi.Add(b, objs)
	if grants == nil {
		t.Fatal("Add returned nil Grants")
	}
	g, cycles := b.Build()
	return g, grants, probs, cycles
}

// diff reports the lines only in want and only in got.
func diff(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("\n  missing: " + w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("\n  extra:   " + g)
		}
	}
	t.Errorf("%s differ:%s\ngot:\n  %s", what, b.String(), strings.Join(got, "\n  "))
}
