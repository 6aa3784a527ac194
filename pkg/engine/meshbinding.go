package engine

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/topology"
)

// MeshBinding is how Istio ambient binds a Service (or ServiceEntry) to
// waypoints, as the engine reads it for policies (see waypointOf and
// canaryOf): what request tracing of mesh traffic starts from.
type MeshBinding struct {
	// Waypoint is the Gateway the Service is bound to; zero when none,
	// Unbound then saying why ("" for a Service not among the objects).
	Waypoint topology.Ref
	Unbound  string
	// IstioWaypoint says Waypoint is one of Istio's waypoints (class
	// istio-waypoint, or a class of istio.io/mesh-controller), whose proxy
	// istiod programs; another implementation's Gateway may be bound too
	// (istiod takes any Gateway with an address for a waypoint).
	IstioWaypoint bool
	// Canary is the Service's canary waypoint (zero when none): ztunnel
	// sends it CanaryPercent of the Service's connections and Waypoint the
	// rest; CanaryIstio as IstioWaypoint.
	Canary        topology.Ref
	CanaryPercent int
	CanaryIstio   bool
}

// MeshBindings answers, for the Services of one graph, which waypoints
// they are bound to, by the rules the engine applies to policies with
// waypoint targets, whatever policy kinds are among the objects.
type MeshBindings struct{ c *computation }

// NewMeshBindings reads the Gateways, GatewayClasses, Services and
// Namespaces among objs, the objects graph was built from; namespace is
// given to namespaced objects that name none, as the engine does.
func NewMeshBindings(objs []*unstructured.Unstructured, graph *topology.Graph, namespace string) *MeshBindings {
	read := make([]*unstructured.Unstructured, 0, len(objs))
	for _, u := range objs {
		if u == nil || u.Object == nil {
			continue
		}
		switch gkOf(u) {
		case topology.KindGatewayClass, topology.KindNamespace:
		case topology.KindGateway, topology.KindService, topology.KindServiceEntry:
			if u.GetNamespace() == "" {
				u = u.DeepCopy()
				u.SetNamespace(namespace)
			}
		default:
			continue
		}
		read = append(read, u)
	}
	c := &computation{graph: graph}
	c.gateways, c.classControllers = readGateways(read, nil)
	c.canaryWeights = readCanaryWeights(read)
	return &MeshBindings{c: c}
}

// Of is the binding of Service (or ServiceEntry) svc.
func (m *MeshBindings) Of(svc topology.Ref) MeshBinding {
	wp, why := m.c.waypointOf(svc.Object())
	b := MeshBinding{Waypoint: wp, Unbound: strings.TrimSuffix(why, appliesAtWaypointOnly)}
	if wp.Name == "" {
		return b
	}
	b.IstioWaypoint = m.c.isWaypoint(wp)
	b.Canary, b.CanaryPercent = m.c.canaryWithWeight(svc.Object(), wp)
	if b.Canary.Name != "" {
		b.CanaryIstio = m.c.isWaypoint(b.Canary)
	}
	return b
}
