package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// shadeFiles are a policy kind whose schema bounds its level, a Gateway,
// and a policy outside the bound.
const shadeFiles = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: shadepolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Direct}
  annotations: {attache.dev/target-kinds: Gateway.gateway.networking.k8s.io}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: ShadePolicy, plural: shadepolicies}
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
            properties:
              targetRefs: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              level: {type: integer, maximum: 10}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: default}
spec: {gatewayClassName: c, listeners: [{name: http, protocol: HTTP, port: 80}]}
---
apiVersion: example.com/v1
kind: ShadePolicy
metadata: {name: dark, namespace: default}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
  level: 11
`

// With -f, a policy its CRD's schema refuses is Invalid and the warning
// names the field; --validate=false reads it as written. Both for the
// query commands and for effective.
func TestValidateFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shade.yaml")
	if err := os.WriteFile(path, []byte(shadeFiles), 0o644); err != nil {
		t.Fatal(err)
	}
	const warning = "spec.level: Invalid value: 11: should be less than or equal to 10 (its CRD's schema, checked as the API server does)"
	out, errOut, err := run(t, "get", "policies", "-A", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Invalid") || !strings.Contains(errOut, warning) {
		t.Errorf("get with -f: want the policy Invalid and a warning %q; got\n%s\n%s", warning, out, errOut)
	}
	out, errOut, err = run(t, "get", "policies", "-A", "-f", path, "--validate=false")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Accepted") || strings.Contains(errOut, "spec.level") {
		t.Errorf("get --validate=false: want the policy Accepted and no warning; got\n%s\n%s", out, errOut)
	}

	out, errOut, err = run(t, "effective", "-f", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"reason": "Invalid"`) || !strings.Contains(errOut, warning) {
		t.Errorf("effective: want the policy Invalid and the warning; got\n%s\n%s", out, errOut)
	}
	out, _, err = run(t, "effective", "-f", path, "--validate=false")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `"reason": "Invalid"`) || !strings.Contains(out, `"level": 11`) {
		t.Errorf("effective --validate=false: want the policy accepted with level 11; got\n%s", out)
	}
}

// onlySome checks only the objects it keeps (impact --apply against a
// cluster checks the applied file's objects, not the cluster's).
func TestOnlySome(t *testing.T) {
	v := onlySome{refuseAll{}, func(u *unstructured.Unstructured) bool { return u.GetName() == "applied" }}
	a, b := &unstructured.Unstructured{}, &unstructured.Unstructured{}
	a.SetName("applied")
	b.SetName("live")
	if len(v.Validate(context.Background(), a)) != 1 || len(v.Validate(context.Background(), b)) != 0 {
		t.Error("onlySome: want the kept object checked and the other passed")
	}
}

type refuseAll struct{}

func (refuseAll) Validate(context.Context, *unstructured.Unstructured) field.ErrorList {
	return field.ErrorList{field.Invalid(nil, nil, "no")}
}
