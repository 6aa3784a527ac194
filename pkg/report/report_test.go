package report_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/report"
)

// The document's shape is a public interface (docs/output.md): these tests
// pin it on the JSON itself, not on the Go types.

const input = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: colorpolicies.policies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/hierarchy: Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io,Service
spec:
  group: policies.example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g1}
spec:
  gatewayClassName: example
  listeners: [{name: http, protocol: HTTP, port: 80}, {name: alt, protocol: HTTP, port: 81}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r1}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: s1, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: s1}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: gw, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g1}]
  overrides: {color: red, strategy: patch}
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: route}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]
  strategy: atomic
  color: blue
  size: large
---
apiVersion: policies.example.com/v1
kind: ColorPolicy
metadata: {name: broken}
spec: {targetRefs: [], color: green}
`

func build(t *testing.T, in string) map[string]any {
	t.Helper()
	objs, probs := manifest.Decode(strings.NewReader(in), "in.yaml")
	rep := report.Build(engine.Compute(objs, engine.Options{}), "", probs)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

func TestEmptyInputGivesEmptyListsNotNull(t *testing.T) {
	doc := build(t, "")
	want := map[string]any{
		"apiVersion": report.APIVersion, "kind": report.Kind,
		"effectivePolicies": []any{}, "policies": []any{}, "affected": []any{}, "errors": []any{},
	}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("got %v, want %v", doc, want)
	}
}

func TestShape(t *testing.T) {
	doc := build(t, input)
	eps := doc["effectivePolicies"].([]any)
	// Two paths to s1 (through listeners alt and http), one stack: same
	// spec, ordered by path.
	if len(eps) != 2 {
		t.Fatalf("got %d effective policies, want 2", len(eps))
	}
	for i, e := range eps {
		ep := e.(map[string]any)
		if got := keysOf(ep); !slices.Equal(got, []string{"path", "policyKind", "sources", "spec", "target"}) {
			t.Errorf("effective policy keys %v", got)
		}
		if ep["policyKind"] != "ColorPolicy.policies.example.com" {
			t.Errorf("policyKind %v", ep["policyKind"])
		}
		// REF: empty fields omitted (core group, no section).
		target := ep["target"].(map[string]any)
		if !reflect.DeepEqual(target, map[string]any{"kind": "Service", "namespace": "default", "name": "s1"}) {
			t.Errorf("target %v", target)
		}
		// The path runs from the root to the target inclusive, one entry
		// per object or section.
		path := ep["path"].([]any)
		var rendered []string
		for _, r := range path {
			m := r.(map[string]any)
			s := m["kind"].(string) + "/" + m["name"].(string)
			if sec, ok := m["sectionName"]; ok {
				s += "#" + sec.(string)
			}
			rendered = append(rendered, s)
		}
		listener := []string{"alt", "http"}[i]
		if want := "Gateway/g1 > Gateway/g1#" + listener + " > HTTPRoute/r1 > HTTPRoute/r1#rule-1 > Service/s1"; strings.Join(rendered, " > ") != want {
			t.Errorf("path %s, want %s", strings.Join(rendered, " > "), want)
		}
		if !reflect.DeepEqual(path[len(path)-1], ep["target"]) {
			t.Errorf("the path does not end at the target")
		}
		// The spec proper only: no targetRefs, stanza or strategy.
		if spec := ep["spec"]; !reflect.DeepEqual(spec, map[string]any{"color": "red", "size": "large"}) {
			t.Errorf("spec %v", spec)
		}
		src := ep["sources"].(map[string]any)
		fields := src["fields"].([]any)
		if len(fields) != 2 {
			t.Fatalf("fields %v", fields)
		}
		color := fields[0].(map[string]any)
		if got := keysOf(color); !slices.Equal(got, []string{"path", "policy", "strategy", "target", "value"}) {
			t.Errorf("field source keys %v", got)
		}
		if color["path"] != "color" || color["value"] != "red" || color["strategy"] != "patch-overrides" ||
			color["policy"].(map[string]any)["name"] != "gw" || color["target"].(map[string]any)["kind"] != "Gateway" {
			t.Errorf("color source %v", color)
		}
		pols := src["policies"].([]any)
		if len(pols) != 2 || pols[0].(map[string]any)["policy"].(map[string]any)["name"] != "gw" {
			t.Fatalf("stack %v, want gw (most general) first", pols)
		}
		loser := pols[1].(map[string]any)
		lost := loser["lost"].([]any)[0].(map[string]any)
		if loser["outcome"] != "partial" || lost["path"] != "color" || lost["to"].([]any)[0].(map[string]any)["policy"].(map[string]any)["name"] != "gw" {
			t.Errorf("route's outcome %v", loser)
		}
	}

	pols := doc["policies"].([]any)
	if len(pols) != 3 {
		t.Fatalf("got %d policies", len(pols))
	}
	for _, p := range pols {
		pm := p.(map[string]any)
		for _, k := range []string{"ref", "policyKind", "conditions", "ancestors", "affects", "reach"} {
			if _, ok := pm[k]; !ok {
				t.Errorf("policy %v has no %q", pm["ref"], k)
			}
		}
		for _, c := range pm["conditions"].([]any) {
			if got := keysOf(c.(map[string]any)); !slices.Equal(got, []string{"message", "reason", "status", "type"}) {
				t.Errorf("condition keys %v", got)
			}
		}
	}
	gw := pols[1].(map[string]any)
	anc := gw["ancestors"].([]any)[0].(map[string]any)
	if gw["stanza"] != "overrides" || gw["strategy"] != "patch-overrides" ||
		anc["controllerName"] != engine.DefaultControllerName || anc["ancestorRef"].(map[string]any)["name"] != "g1" {
		t.Errorf("policy gw %v", gw)
	}

	aff := doc["affected"].([]any)
	if len(aff) != 1 {
		t.Fatalf("affected %v", aff)
	}
	a := aff[0].(map[string]any)
	cond := a["condition"].(map[string]any)
	if cond["type"] != "attache.dev/ColorPolicyAffected" || cond["status"] != "True" || len(a["policies"].([]any)) != 2 {
		t.Errorf("affected %v", a)
	}

	// The invalid policy is an error naming the object and the field.
	errs := doc["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	e := errs[0].(map[string]any)
	if e["field"] != "spec.targetRefs" || e["object"].(map[string]any)["name"] != "broken" || e["source"] != "in.yaml#7" || e["message"] == "" {
		t.Errorf("error %v", e)
	}
}
