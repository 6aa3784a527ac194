package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// serviceEntryObjects: Istio's waypoint class and a waypoint in namespace
// mesh; a ServiceEntry bound to it by its label and one bound to none; an
// AuthorizationPolicy on each.
const serviceEntryObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: mesh}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio-waypoint}
spec: {controllerName: istio.io/mesh-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: mesh}
spec: {gatewayClassName: istio-waypoint, listeners: [{name: mesh, protocol: HBONE, port: 15008}]}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: mesh, labels: {istio.io/use-waypoint: waypoint}}
spec: {hosts: [ext.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: plain, namespace: mesh}
spec: {hosts: [plain.example.com], ports: [{number: 443, name: tls, protocol: TLS}], resolution: DNS}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: on-ext, namespace: mesh}
spec: {targetRefs: [{group: networking.istio.io, kind: ServiceEntry, name: ext}], action: DENY, rules: [{}]}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: on-plain, namespace: mesh}
spec: {targetRefs: [{group: networking.istio.io, kind: ServiceEntry, name: plain}], action: DENY, rules: [{}]}
`

// TestReadServiceEntries: with Istio's CRDs installed, Read lists the
// ServiceEntries (with their labels), so that a policy on one bound to a
// ready waypoint (its status has an address) applies there and one on an
// unbound one is AncestorNotBound.
func TestReadServiceEntries(t *testing.T) {
	istio := filepath.Join(t.TempDir(), "istio-crds.yaml")
	crds, err := os.ReadFile(filepath.Join(modfixtures.Dir(t, modfixtures.IstioAPI), "kubernetes", "customresourcedefinitions.gen.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(istio, crds, 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), istio)...))
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, []byte(serviceEntryObjects), 0o600); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)
	// Live, the Gateway has the conditions its CRD defaults and no
	// address: istiod binds nothing to it yet, nor does attache.
	pending := engine.Compute(read(t, env.Config, Options{}).Objects, engine.Options{})
	if ps := pending.PolicyStatus(ref("security.istio.io", "AuthorizationPolicy", "mesh", "on-ext")); ps == nil || len(ps.Ancestors) != 1 ||
		ps.Ancestors[0].Conditions[0].Reason != "AncestorNotBound" || !strings.Contains(ps.Ancestors[0].Conditions[0].Message, "which is not ready") {
		t.Errorf("on-ext before the waypoint has an address: %+v, want AncestorNotBound, not ready", ps)
	}
	// The waypoint is ready once its controller gives it an address:
	// here, the test does.
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gateways := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}).Namespace("mesh")
	status := []byte(`{"status": {"addresses": [{"type": "Hostname", "value": "waypoint.mesh.svc.cluster.local"}]}}`)
	if _, err := gateways.Patch(context.Background(), "waypoint", types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	snap := read(t, env.Config, Options{})
	var entries []string
	for _, o := range snap.Objects {
		if o.Object.GetKind() == "ServiceEntry" {
			entries = append(entries, o.Object.GetName()+" "+o.Object.GetLabels()["istio.io/use-waypoint"])
		}
	}
	if strings.Join(entries, ",") != "ext waypoint,plain " {
		t.Errorf("ServiceEntries read: %q", entries)
	}
	res := engine.Compute(snap.Objects, engine.Options{})
	target := topology.Ref{Group: topology.KindServiceEntry.Group, Kind: "ServiceEntry", Namespace: "mesh", Name: "ext"}
	paths := contextPaths(res, "", target)
	if want := "GatewayClass istio-waypoint > Gateway mesh/waypoint > ServiceEntry mesh/ext"; strings.Join(paths, "; ") != want {
		t.Errorf("paths to ServiceEntry mesh/ext: %q, want %q", paths, want)
	}
	for name, reason := range map[string]string{"on-ext": "Accepted", "on-plain": "AncestorNotBound"} {
		ps := res.PolicyStatus(ref("security.istio.io", "AuthorizationPolicy", "mesh", name))
		if ps == nil || len(ps.Ancestors) != 1 || ps.Ancestors[0].Conditions[0].Reason != reason {
			t.Errorf("%s: %+v, want one ancestor, %s", name, ps, reason)
		}
	}
}
