package controller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/topology"
)

// TestListenerSetWatchedOnlyWhenServed: ListenerSet is watched like the
// route kinds, only when its CRD is installed and established, so that a
// cluster with an older Gateway API (no ListenerSet CRD) is computed
// without it rather than waited for.
func TestListenerSetWatchedOnlyWhenServed(t *testing.T) {
	c := &Controller{goKinds: map[topology.GroupKind]bool{}}
	crd := func(gk topology.GroupKind, plural string, established bool) *crdInfo {
		return &crdInfo{gk: gk, plural: plural, version: "v1", established: established}
	}
	older := map[topology.GroupKind]*crdInfo{
		topology.KindGateway:   crd(topology.KindGateway, "gateways", true),
		topology.KindHTTPRoute: crd(topology.KindHTTPRoute, "httproutes", true),
	}
	want := c.wantedKinds(older)
	if w := want[topology.KindListenerSet]; w != nil {
		t.Errorf("ListenerSet watched without its CRD: %+v", w)
	}
	if want[topology.KindGateway] == nil || want[topology.KindService] == nil {
		t.Errorf("Gateway and Service must be watched: %v", want)
	}

	older[topology.KindListenerSet] = crd(topology.KindListenerSet, "listenersets", false)
	if w := c.wantedKinds(older)[topology.KindListenerSet]; w != nil {
		t.Errorf("ListenerSet watched before its CRD is established: %+v", w)
	}

	older[topology.KindListenerSet].established = true
	w := c.wantedKinds(older)[topology.KindListenerSet]
	if w == nil || w.role != roleTopology || w.resource != "listenersets" || w.gvk.Version != "v1" {
		t.Errorf("ListenerSet watch = %+v, want a topology watch of listenersets v1", w)
	}
	if !targetKinds[topology.KindListenerSet].conditions || targetKinds[topology.KindListenerSet].cap != 8 {
		t.Errorf("ListenerSet carries Affected conditions, at most 8 (its CRD's maxItems): %+v", targetKinds[topology.KindListenerSet])
	}
}

// TestXListenerSetWatchedWhenServed: XListenerSet (the experimental
// channel's ListenerSet, gateway.networking.x-k8s.io v1alpha1) is watched
// as a topology kind once its CRD is established, and carries Affected
// conditions as a ListenerSet does (its CRD's status.conditions hold 8).
func TestXListenerSetWatchedWhenServed(t *testing.T) {
	c := &Controller{goKinds: map[topology.GroupKind]bool{}}
	crds := map[topology.GroupKind]*crdInfo{
		topology.KindGateway:      {gk: topology.KindGateway, plural: "gateways", version: "v1", established: true},
		topology.KindXListenerSet: {gk: topology.KindXListenerSet, plural: "xlistenersets", version: "v1alpha1", established: false},
	}
	if w := c.wantedKinds(crds)[topology.KindXListenerSet]; w != nil {
		t.Errorf("XListenerSet watched before its CRD is established: %+v", w)
	}
	crds[topology.KindXListenerSet].established = true
	w := c.wantedKinds(crds)[topology.KindXListenerSet]
	if w == nil || w.role != roleTopology || w.resource != "xlistenersets" || w.gvk.Group != topology.XGatewayGroup || w.gvk.Version != "v1alpha1" {
		t.Errorf("XListenerSet watch = %+v, want a topology watch of xlistenersets v1alpha1", w)
	}
	if tk := targetKinds[topology.KindXListenerSet]; !tk.conditions || tk.cap != 8 {
		t.Errorf("XListenerSet carries Affected conditions, at most 8: %+v", tk)
	}
}

// The CRD cache transform keeps what says whether a version's status keeps
// conditions: Envoy Gateway's status (ancestors only) does not, so the
// controller writes no conditions there; a status with conditions, or one
// preserving unknown fields, does. It keeps whether status.ancestors is
// required (Envoy Gateway's, Gateway API's PolicyStatus), so that an empty
// list is written as []; and no other part of the schema stays.
func TestTransformCRDKeepsStatusSchemaSkeleton(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	raw, err := os.ReadFile(filepath.Join(dir, "charts", "gateway-helm", "charts", "crds", "crds", "generated", "gateway.envoyproxy.io_backendtrafficpolicies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	eg := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &eg.Object); err != nil {
		t.Fatal(err)
	}
	crd := func(version string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.example.com}
spec:
  group: example.com
  names: {kind: ColorPolicy, plural: colorpolicies}
  scope: Namespaced
  versions:
  - ` + version
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, tc := range []struct {
		name     string
		crd      *unstructured.Unstructured
		want     bool
		required bool
	}{
		{"Envoy Gateway: ancestors only", eg, false, true},
		{"ancestors required, with conditions", crd(`{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {status: {type: object, required: [conditions, ancestors], properties: {conditions: {type: array, items: {type: object}}, ancestors: {type: array, items: {type: object}}}}}}}}`), true, true},
		{"status with conditions", crd(`{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {color: {type: string}}}, status: {type: object, properties: {conditions: {type: array, items: {type: object}}}}}}}}`), true, false},
		{"status preserving unknown fields", crd(`{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {status: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}`), true, false},
		{"no status, root closed", crd(`{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object}}}}}`), false, false},
		{"no status, root open", crd(`{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}`), true, false},
		{"no schema", crd(`{name: v1, served: true, storage: true}`), true, false},
	} {
		before := readCRD(tc.crd.DeepCopy(), true).statusConditions
		out, err := TransformCRD(tc.crd.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		u := out.(*unstructured.Unstructured)
		if got := readCRD(u, true).statusConditions; got != tc.want || before != tc.want {
			t.Errorf("%s: statusConditions %v from the cache, %v from the CRD; want %v", tc.name, got, before, tc.want)
		}
		if got, before := readCRD(u, true).statusAncestorsRequired, readCRD(tc.crd.DeepCopy(), true).statusAncestorsRequired; got != tc.required || before != tc.required {
			t.Errorf("%s: statusAncestorsRequired %v from the cache, %v from the CRD; want %v", tc.name, got, before, tc.required)
		}
		b, _ := json.Marshal(u.Object["spec"])
		if strings.Contains(string(b), `"spec":`) || strings.Contains(string(b), `"type"`) || strings.Contains(string(b), `"items"`) {
			t.Errorf("%s: the cached CRD keeps more of the schema than the skeleton: %s", tc.name, b)
		}
	}
}
