package controller

import (
	"testing"

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
