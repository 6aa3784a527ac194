package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// xListenerSetObjects: a Gateway admitting the ListenerSets of its
// namespace, an XListenerSet below it with a route, and a Gloo Gateway
// VirtualHostOption (CRD without a policy label, profiled) on the
// XListenerSet.
const xListenerSetObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: edge}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: edge}
spec:
  gatewayClassName: gloo
  listeners: [{name: http, protocol: HTTP, port: 8080}]
  allowedListeners: {namespaces: {from: Same}}
---
apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XListenerSet
metadata: {name: team, namespace: edge, labels: {team: a}}
spec:
  parentRef: {name: gw}
  listeners: [{name: foo, protocol: HTTP, port: 8081}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: foo, namespace: edge}
spec:
  parentRefs: [{name: team, group: gateway.networking.x-k8s.io, kind: XListenerSet}]
  rules: [{name: all, backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: gateway.solo.io/v1
kind: VirtualHostOption
metadata: {name: on-team, namespace: edge}
spec:
  targetRefs: [{group: gateway.networking.x-k8s.io, kind: XListenerSet, name: team}]
  options: {retries: {numRetries: 2}}
`

// glooVirtualHostOptionCRD is a minimal CRD of Gloo Gateway's
// VirtualHostOption (its real one has no policy label either).
const glooVirtualHostOptionCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: virtualhostoptions.gateway.solo.io}
spec:
  group: gateway.solo.io
  names: {kind: VirtualHostOption, listKind: VirtualHostOptionList, plural: virtualhostoptions, singular: virtualhostoption}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

// contextPaths are the paths of the contexts of target's effective
// policies of kind (any kind: ""), written as "A > B".
func contextPaths(res *engine.Result, kind string, target topology.Ref) []string {
	var out []string
	for _, e := range res.Effective {
		if e.Target != target || kind != "" && e.Kind.GroupKind.Kind != kind {
			continue
		}
		for _, c := range e.Contexts {
			for p := range c.Paths {
				var names []string
				for _, r := range p {
					names = append(names, r.Short())
				}
				out = append(out, strings.Join(names, " > "))
			}
		}
	}
	return out
}

// TestReadXListenerSets: with the XListenerSet CRD of Gateway API's
// experimental channel (v1.4.1, the release Gloo Gateway builds with)
// installed beside the standard CRDs, Read lists XListenerSets with their
// labels, so that the route on one hangs below it and its Gateway, and a
// policy on it reaches its listener.
func TestReadXListenerSets(t *testing.T) {
	dir := t.TempDir()
	xls, err := os.ReadFile(filepath.Join(modfixtures.DirAt(t, modfixtures.GatewayAPI, "v1.4.1"),
		"config", "crd", "experimental", "gateway.networking.x-k8s.io_xlistenersets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds := filepath.Join(dir, "crds.yaml")
	if err := os.WriteFile(crds, append(append(xls, "\n---\n"...), glooVirtualHostOptionCRD...), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), crds)...))
	file := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(file, []byte(xListenerSetObjects), 0o600); err != nil {
		t.Fatal(err)
	}
	clustertest.Apply(t, env.Config, nil, file)
	snap := read(t, env.Config, Options{})
	var sets []string
	for _, o := range snap.Objects {
		if o.Object.GetKind() == "XListenerSet" {
			sets = append(sets, o.Object.GetNamespace()+"/"+o.Object.GetName()+" team="+o.Object.GetLabels()["team"])
		}
	}
	if want := []string{"edge/team team=a"}; !slices.Equal(sets, want) {
		t.Errorf("XListenerSets read: %q, want %q", sets, want)
	}
	res := engine.Compute(snap.Objects, engine.Options{})
	listener := topology.Ref{Group: topology.XGatewayGroup, Kind: "XListenerSet", Namespace: "edge", Name: "team", SectionName: "foo"}
	got := contextPaths(res, "VirtualHostOption", listener)
	if want := "Gateway edge/gw > XListenerSet edge/team > XListenerSet edge/team#foo"; strings.Join(got, "; ") != want {
		t.Errorf("VirtualHostOption paths to the XListenerSet's listener: %q, want %q", got, want)
	}
	rule := topology.Ref{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "edge", Name: "foo"}
	id, ok := res.Graph.Lookup(rule)
	if !ok {
		t.Fatal("route edge/foo not in the graph")
	}
	var parents []string
	for _, p := range res.Graph.Node(id).Parents {
		parents = append(parents, res.Graph.Node(p).Ref.Short())
	}
	if want := []string{"XListenerSet edge/team#foo"}; !slices.Equal(parents, want) {
		t.Errorf("parents of the route: %q, want %q", parents, want)
	}
}
