package engine_test

import (
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/crdschema"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// tintCRD is an Inherited policy kind whose schema allows two colours and
// whose CEL rule wants a reason for blue.
const tintCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: tintpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
  annotations:
    attache.dev/target-kinds: Gateway.gateway.networking.k8s.io,HTTPRoute.gateway.networking.k8s.io
    attache.dev/effective-target-kinds: HTTPRoute.gateway.networking.k8s.io
spec:
  group: example.com
  scope: Namespaced
  names: {kind: TintPolicy, plural: tintpolicies}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - {rule: "!has(self.color) || self.color != 'blue' || has(self.reason)", message: blue needs a reason}
            properties:
              targetRefs:
                type: array
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
              color: {type: string, enum: [red, blue]}
              reason: {type: string}
`

const tintTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec: {gatewayClassName: c, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: default}
spec: {parentRefs: [{name: g}], rules: [{}]}
`

// cached and compiled give the engine a CRD's schema, kept in a cache or
// compiled at each call.
func cached(c *crdschema.Cache) func(*unstructured.Unstructured) (engine.SchemaValidator, error) {
	return func(crd *unstructured.Unstructured) (engine.SchemaValidator, error) {
		s, err := c.Get(crd)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

func compiled(crd *unstructured.Unstructured) (engine.SchemaValidator, error) {
	s, err := crdschema.Compile(crd)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func tint(name, kind, target string, min int, body string) string {
	return pol("example.com/v1", "TintPolicy", name, min, "targetRefs: [{group: gateway.networking.k8s.io, kind: "+kind+", name: "+target+"}]\n"+body)
}

var tintRoute = topology.Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "default", Name: "r"}

// With ValidateSchemas, a policy its CRD's schema refuses (an OpenAPI rule
// or a CEL rule) is Invalid, each refused field a problem naming it, and
// does not apply; without, it is read as written.
func TestValidateSchemas(t *testing.T) {
	docs := []string{tintCRD, tintTopo,
		tint("gw", "Gateway", "g", 0, "color: red"),
		tint("green", "HTTPRoute", "r", 1, "color: green"),
		tint("blue", "HTTPRoute", "r", 2, "color: blue"),
	}
	for _, compile := range []func(*unstructured.Unstructured) (engine.SchemaValidator, error){cached(&crdschema.Cache{}), compiled} {
		res := compute(t, engine.Options{Schemas: compile}, docs...)
		for name, msg := range map[string]string{
			"green": `spec.color: Unsupported value: "green": supported values: "red", "blue" (its CRD's schema, checked as the API server does)`,
			"blue":  `spec: Invalid value: blue needs a reason (its CRD's schema, checked as the API server does)`,
		} {
			ps := policyStatusOf(t, res, name)
			c := ps.Conditions[0]
			want(t, name+" Accepted", c.Status+"/"+c.Reason, "False/Invalid")
			if !strings.Contains(c.Message, msg) {
				t.Errorf("%s: message %q, want it to contain %q", name, c.Message, msg)
			}
			// green: the enum, then the API server's note that CEL rules
			// were not run; blue: the CEL rule.
			if n := map[string]int{"green": 2, "blue": 1}[name]; len(ps.Policy.Problems) != n {
				t.Errorf("%s: problems %v, want %d", name, ps.Policy.Problems, n)
			}
		}
		want(t, "green's problem field", policyStatusOf(t, res, "green").Policy.Problems[0].Field, "spec.color")
		c := policyStatusOf(t, res, "gw").Conditions[0]
		want(t, "gw Accepted", c.Status+"/"+c.Reason, "True/Accepted")
		want(t, "effective at the route", effective(t, res, "TintPolicy", tintRoute), []string{`{"color":"red"}`})
	}

	res := compute(t, engine.Options{}, docs...)
	for _, name := range []string{"green", "blue"} {
		c := policyStatusOf(t, res, name).Conditions[0]
		want(t, name+" Accepted without ValidateSchemas", c.Status+"/"+c.Reason, "True/Accepted")
	}
	want(t, "effective at the route without ValidateSchemas", effective(t, res, "TintPolicy", tintRoute), []string{`{"color":"blue"}`})
}

// A kind whose CRD is not among the objects (registered from Go) is not
// checked; a CRD whose schema does not compile is reported once and its
// policies are read as written.
func TestValidateSchemasUnchecked(t *testing.T) {
	broken := strings.Replace(tintCRD, "reason: {type: string}", "reason: {pattern: x}", 1)
	res := compute(t, engine.Options{Schemas: compiled}, broken, tintTopo, tint("green", "HTTPRoute", "r", 1, "color: green"))
	c := policyStatusOf(t, res, "green").Conditions[0]
	want(t, "green Accepted under a broken CRD", c.Status+"/"+c.Reason, "True/Accepted")
	n := 0
	for _, p := range res.Problems {
		if strings.Contains(p.Error(), "policies of TintPolicy.example.com are not checked against its schema") && strings.Contains(p.Error(), "not a structural schema") {
			n++
			want(t, "problem object", p.Object.Name, "tintpolicies.example.com")
		}
	}
	want(t, "problems about the broken schema", n, 1)
}

// A CRD whose schema cannot be used is reported while a policy of its kind
// is there, by Compute and the incremental engine alike.
func TestValidateSchemasBrokenCRDIncremental(t *testing.T) {
	broken := strings.Replace(tintCRD, `rule: "!has(self.color)`, `rule: "nosuch() || !has(self.color)`, 1)
	base := decodeDocs(t, broken, tintTopo)
	opts := engine.Options{Schemas: compiled}
	in := engine.NewIncremental(opts)
	for _, s := range []struct {
		what string
		objs []engine.Object
	}{
		{"no policy", base},
		{"a policy", append(append([]engine.Object(nil), base...), decodeDocs(t, tint("green", "HTTPRoute", "r", 1, "color: green"))...)},
		{"no policy again", base},
	} {
		res := in.Compute(s.objs)
		full := engine.Compute(s.objs, opts)
		want(t, s.what+": problems as Compute", problemTexts(res), problemTexts(full))
		n := 0 // the CRD's problem, while a policy of the kind is there
		if s.what == "a policy" {
			n = 1
		}
		if got := len(problemTexts(full)); got != n {
			t.Errorf("%s: %d problems, want %d: %v", s.what, got, n, problemTexts(full))
		}
	}
}

func problemTexts(res *engine.Result) []string {
	var out []string
	for _, p := range res.Problems {
		out = append(out, p.Error())
	}
	return out
}

// The incremental engine checks a changed policy as Compute does, without
// recomputing everything.
func TestValidateSchemasIncremental(t *testing.T) {
	base := decodeDocs(t, tintCRD, tintTopo, tint("gw", "Gateway", "g", 0, "color: red"))
	with := func(body string) []engine.Object {
		return append(append([]engine.Object(nil), base...), decodeDocs(t, tint("route", "HTTPRoute", "r", 1, body))...)
	}
	opts := engine.Options{Schemas: cached(&crdschema.Cache{})}
	in := engine.NewIncremental(opts)
	for i, s := range []struct {
		what, body, accepted, effective string
	}{
		{"valid", "color: blue\nreason: calm", "True/Accepted", `{"color":"blue","reason":"calm"}`},
		{"reason removed", "color: blue", "False/Invalid", `{"color":"red"}`},
		{"red", "color: red", "True/Accepted", `{"color":"red"}`},
		{"unknown field", "color: red\nshade: dark", "False/Invalid", `{"color":"red"}`},
	} {
		res := in.Compute(with(s.body))
		if ch := in.LastChange(); i > 0 && ch.Full {
			t.Errorf("%s: recomputed everything (%s)", s.what, ch.Reason)
		}
		full := engine.Compute(with(s.body), opts)
		c := policyStatusOf(t, res, "route").Conditions[0]
		want(t, s.what+": route", c.Status+"/"+c.Reason, s.accepted)
		want(t, s.what+": route as Compute", policyStatusOf(t, res, "route").Conditions, policyStatusOf(t, full, "route").Conditions)
		want(t, s.what+": effective", effective(t, res, "TintPolicy", tintRoute), []string{s.effective})
		want(t, s.what+": effective as Compute", effective(t, res, "TintPolicy", tintRoute), effective(t, full, "TintPolicy", tintRoute))
	}
}
