package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
)

// GEP-2649's RetryOnPolicy precedence tables ("empty list in HTTPRoute"),
// over the hierarchy Namespace > Gateway > HTTPRoute, as amended by project
// decision 4: between two defaults at the same level the newer (challenger)
// wins, not the first created. Policy A is always created before policy B.

const retryTopology = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retryonpolicies.networking.example.io
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/hierarchy: Namespace,Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io
spec:
  group: networking.example.io
  names: {kind: RetryOnPolicy, plural: retryonpolicies}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: you-must-retry, namespace: appns}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: route, namespace: appns}
spec:
  parentRefs: [{name: you-must-retry}]
`

// level is where a policy attaches: "" (no policy), Namespace, Gateway or HTTPRoute.
type retryPolicy struct {
	level  string
	stanza string // defaults | overrides
}

func (p retryPolicy) manifest(name, created string) string {
	if p.level == "" {
		return ""
	}
	group, target := "gateway.networking.k8s.io", map[string]string{"Namespace": "appns", "Gateway": "you-must-retry", "HTTPRoute": "route"}[p.level]
	if p.level == "Namespace" {
		group = ""
	}
	return fmt.Sprintf(`---
apiVersion: networking.example.io/v1alpha1
kind: RetryOnPolicy
metadata: {name: %s, namespace: appns, creationTimestamp: %q}
spec:
  targetRef: {group: %q, kind: %s, name: %s}
  %s:
    retryOn: [%q]
`, name, created, group, p.level, target, p.stanza, name)
}

func TestGEP2649PrecedenceTables(t *testing.T) {
	levels := []string{"", "Namespace", "Gateway", "HTTPRoute"}
	rank := map[string]int{"Namespace": 0, "Gateway": 1, "HTTPRoute": 2}
	tables := []struct {
		name      string
		rowStanza string // policy B (rows)
		colStanza string // policy A (columns)
		expect    func(row, col string) string
	}{
		{"overrides-vs-defaults", "defaults", "overrides", func(row, col string) string {
			// An override at any level beats any default.
			if col != "" {
				return "a"
			}
			if row != "" {
				return "b"
			}
			return ""
		}},
		{"overrides-vs-overrides", "overrides", "overrides", func(row, col string) string {
			switch {
			case row == "" && col == "":
				return ""
			case row == "":
				return "a"
			case col == "":
				return "b"
			case rank[col] < rank[row]: // the higher override wins
				return "a"
			case rank[row] < rank[col]:
				return "b"
			}
			return "a" // same level: the older override wins
		}},
		{"defaults-vs-defaults", "defaults", "defaults", func(row, col string) string {
			switch {
			case row == "" && col == "":
				return ""
			case row == "":
				return "a"
			case col == "":
				return "b"
			case rank[col] > rank[row]: // the more specific default wins
				return "a"
			case rank[row] > rank[col]:
				return "b"
			}
			return "b" // same level: the newer default wins (decision 4)
		}},
	}
	for _, tb := range tables {
		for _, row := range levels {
			for _, col := range levels {
				name := fmt.Sprintf("%s/B-%s-%s/A-%s-%s", tb.name, orNone(row), tb.rowStanza, orNone(col), tb.colStanza)
				t.Run(name, func(t *testing.T) {
					src := retryTopology +
						retryPolicy{col, tb.colStanza}.manifest("a", "2026-01-01T00:00:00Z") +
						retryPolicy{row, tb.rowStanza}.manifest("b", "2026-01-02T00:00:00Z")
					objs, probs := manifest.Decode(strings.NewReader(src), name)
					rep := report.Build(engine.Compute(objs, engine.Options{}), "", probs)
					if len(rep.Errors) > 0 {
						t.Fatalf("unexpected errors: %v", rep.Errors)
					}
					want := tb.expect(row, col)
					var got []string
					for _, e := range rep.EffectivePolicies {
						if e.Target.Name != "route" {
							t.Fatalf("effective target %v, want the HTTPRoute", e.Target)
						}
						got = append(got, fmt.Sprint(e.Spec["retryOn"]))
						if p := renderPath(e.Path); p != "ns:appns > appns/you-must-retry > appns/route" {
							t.Errorf("path %q", p)
						}
					}
					switch {
					case want == "" && len(got) != 0:
						t.Errorf("got %v, want no effective policy", got)
					case want != "" && (len(got) != 1 || got[0] != "["+want+"]"):
						t.Errorf("got %v, want policy %s's retryOn [%s]", got, want, want)
					}
				})
			}
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
