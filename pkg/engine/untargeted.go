package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Istio's names for what an untargeted policy may reach (istio/istio
// pkg/config/constants and the gateway deployment controller).
const (
	istioGatewayController = "istio.io/gateway-controller"
	istioDefaultClass      = "istio"
	// gatewayNameLabel is on every pod of a Gateway that Istio deploys;
	// istiod knows a Gateway API Gateway's workloads by it.
	gatewayNameLabel = "gateway.networking.k8s.io/gateway-name"
	// The other labels istiod's gateway template (kube-gateway.yaml)
	// gives the pods of a Gateway it deploys: fixed, over the Gateway's
	// infrastructure labels, or defaults below them.
	gatewayClassNameLabel   = "gateway.networking.k8s.io/gateway-class-name"
	istioManagedLabel       = "gateway.istio.io/managed"
	istioManagedValue       = "istio.io-gateway-controller"
	canonicalNameLabel      = "service.istio.io/canonical-name"
	canonicalRevisionLabel  = "service.istio.io/canonical-revision"
	sidecarInjectLabel      = "sidecar.istio.io/inject"
	nameOverrideAnnotation  = "gateway.istio.io/name-override"
	istioDefaultRevisionTag = "latest"
)

// gatewayFacts are what an untargeted Istio policy is matched with: the
// Gateway's class, whether that class is known and its controller, and
// the labels its deployed pods are given besides the gateway name
// (spec.infrastructure.labels).
type gatewayFacts struct {
	class, controller string
	classKnown        bool
	infraLabels       map[string]string
	// deployed says istiod deploys the Gateway's pods from its template
	// (it does not name one existing Service by hostname: IsManaged), so
	// their labels are the template's; deployment is their Deployment's
	// name (gateway.istio.io/name-override, else <gateway>-<class>).
	deployed   bool
	deployment string
	// created orders the Gateways of a merged data plane, as Envoy
	// Gateway does (creationTimestamp, then namespace and name).
	created time.Time
	// waypointFor is the Gateway's istio.io/waypoint-for label, else its
	// class's, "" for none (Istio's default: service).
	waypointFor string
	// waypointFrom and waypointSel are the allowedRoutes namespaces of
	// the listener of its inbound binding, else of its HBONE listener
	// (port 15008), which decide which namespaces' Services may use it as
	// a waypoint ("" from: Same; waypointAllowedRoutes).
	waypointFrom string
	waypointSel  labels.Selector
	// waypointBinding is its inbound binding annotation (its own, else
	// its class's), "" for none or one istiod ignores.
	waypointBinding string
	// waypointUnready says why istiod would not take it for a waypoint
	// yet, "" when it would (waypointReadiness).
	waypointUnready string
}

// waypointListener names the listener whose allowedRoutes decide who may
// bind to the waypoint, for messages.
func (f gatewayFacts) waypointListener() string {
	if f.waypointBinding != "" {
		return fmt.Sprintf("listener of its inbound binding %s (%s), else its HBONE listener (port 15008),", f.waypointBinding, inboundBindingAnnotation)
	}
	return "HBONE listener (port 15008)"
}

// readGateways reads the facts of every Gateway among objs, and every
// GatewayClass's controllerName; a name aliases maps is read as the
// default name it stands for (an implementation configured with another
// controller name).
func readGateways(objs []*unstructured.Unstructured, aliases map[string]string) (map[topology.Ref]gatewayFacts, map[string]string) {
	controllers := map[string]string{}
	classWaypointFor := map[string]string{}
	classAnnotations := map[string]map[string]string{}
	for _, u := range objs {
		if gkOf(u) == topology.KindGatewayClass {
			ctl, _, _ := unstructured.NestedString(u.Object, "spec", "controllerName")
			if a, ok := aliases[ctl]; ok {
				ctl = a
			}
			controllers[u.GetName()] = ctl
			classWaypointFor[u.GetName()] = u.GetLabels()[waypointForLabel]
			classAnnotations[u.GetName()] = u.GetAnnotations()
		}
	}
	out := map[topology.Ref]gatewayFacts{}
	for _, u := range objs {
		if gkOf(u) != topology.KindGateway {
			continue
		}
		class, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName")
		f := gatewayFacts{class: class, created: u.GetCreationTimestamp().Time}
		f.controller, f.classKnown = controllers[class]
		f.waypointFor = classWaypointFor[class]
		if v, ok := u.GetLabels()[waypointForLabel]; ok {
			f.waypointFor = v
		}
		f.waypointFrom, f.waypointSel = waypointAllowedRoutes(u, classAnnotations[class])
		if v, ok := inboundBindingOf(u, classAnnotations[class]); ok {
			if _, valid := parseInboundBinding(v); valid {
				f.waypointBinding = v
			}
		}
		f.waypointUnready = waypointReadiness(u)
		f.deployed = istioDeploys(u)
		f.deployment = u.GetName() + "-" + class
		if v := u.GetAnnotations()[nameOverrideAnnotation]; v != "" {
			f.deployment = v
		}
		// Malformed labels are left out: package gatewayapi does not read
		// infrastructure, and a wrong label only narrows what matches.
		if m, ok, _ := unstructured.NestedMap(u.Object, "spec", "infrastructure", "labels"); ok {
			f.infraLabels = map[string]string{}
			for k, v := range m {
				if s, isStr := v.(string); isStr {
					f.infraLabels[k] = s
				}
			}
		}
		out[topology.Ref{Group: topology.KindGateway.Group, Kind: topology.KindGateway.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}] = f
	}
	return out, controllers
}

func gkOf(u *unstructured.Unstructured) topology.GroupKind {
	return topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}
}

// istio reports whether istiod configures the Gateway's workloads with
// untargeted policies: a class of Istio's gateway controller (when the
// class is unknown, Istio's default class name). Waypoints never take
// them, and their class (istio-waypoint) is of Istio's mesh controller.
func (f gatewayFacts) istio() bool {
	if f.classKnown {
		return f.controller == istioGatewayController
	}
	return f.class == istioDefaultClass
}

// podLabel is the value of a label of the Gateway's pods, when attache
// can know it.
func (f gatewayFacts) podLabel(gateway, key string) (string, bool) {
	if key == gatewayNameLabel {
		return gateway, true
	}
	if f.deployed {
		switch key {
		case gatewayClassNameLabel:
			return f.class, true
		case istioManagedLabel:
			return istioManagedValue, true
		}
	}
	if v, ok := f.infraLabels[key]; ok {
		return v, true
	}
	if f.deployed {
		switch key {
		case canonicalNameLabel:
			return f.deployment, true
		case canonicalRevisionLabel:
			return istioDefaultRevisionTag, true
		case sidecarInjectLabel:
			return "false", true
		}
	}
	return "", false
}

// istioDeploys reports whether istiod deploys Gateway u's pods itself:
// unless its addresses name one existing Service by hostname (or hold
// several), as IsManaged reads them.
func istioDeploys(u *unstructured.Unstructured) bool {
	addrs, _, _ := unstructured.NestedSlice(u.Object, "spec", "addresses")
	switch len(addrs) {
	case 0:
		return true
	case 1:
		m, _ := addrs[0].(map[string]any)
		t, _ := m["type"].(string)
		return t == "" || t == "IPAddress"
	}
	return false
}

// resolveUntargeted attaches a policy without targets of an
// UntargetedIstio kind to what istiod applies it to: the Istio Gateways of
// its namespace (of every namespace from the root namespace) whose pods'
// labels include its selector's. A selector naming labels attache cannot
// know on a Gateway's pods is reported as selecting workloads attache does
// not model, unless it matched a Gateway anyway.
func (c *computation) resolveUntargeted(ps *pstate) {
	p := ps.p
	sel := p.Untargeted
	root := p.Kind.Untargeted.Root()
	field := sel.Field
	if field == "" {
		field = "spec"
	}
	meshWide := p.UntargetedMeshWide()
	// istiod applies a Telemetry without selector or targetRefs at
	// waypoints too (applicableTelemetries reads it by namespace, without
	// ShouldAttachPolicy): at those of its namespace (of every namespace
	// from the root namespace), and for the chains of the Services bound
	// to one of another namespace (telemetryLevels).
	atWaypoints := waypointTelemetry(p.Kind) && len(sel.MatchLabels) == 0
	matched, inScope := 0, 0
	unknown := map[string]bool{}
	for _, id := range c.graph.ByKind(topology.KindGateway) {
		ref := c.graph.Node(id).Ref
		if ref.Namespace != p.Ref.Namespace && !meshWide {
			continue
		}
		if atWaypoints && c.isWaypoint(ref) {
			inScope++
			matched++
			c.attach(ps, id, policy.TargetRef{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Field: field})
			continue
		}
		f, ok := c.gateways[ref]
		if !ok || !f.istio() {
			continue
		}
		inScope++
		match := true
		for k, v := range sel.MatchLabels {
			got, known := f.podLabel(ref.Name, k)
			if !known {
				unknown[k] = true
			}
			if !known || got != v {
				match = false
			}
		}
		if !match {
			continue
		}
		matched++
		c.attach(ps, id, policy.TargetRef{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Field: field})
	}
	if atWaypoints {
		c.waypointServices()
		svcs := c.crossBound[p.Ref.Namespace]
		if meshWide {
			svcs = c.crossBoundAll
		}
		for _, id := range svcs {
			ref := c.graph.Node(id).Ref
			inScope++
			matched++
			c.attach(ps, id, policy.TargetRef{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Field: field})
		}
	}
	if matched > 0 {
		return
	}
	where := "in namespace " + p.Ref.Namespace
	if meshWide {
		where = "in any namespace (the policy is in the root namespace " + root + ")"
	}
	switch {
	case len(unknown) > 0:
		keys := slices.Sorted(maps.Keys(unknown))
		ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: selects workloads by labels attache cannot see on Gateways (%s); its effect on other workloads is not computed", field, strings.Join(keys, ", ")))
	case inScope == 0 && atWaypoints:
		ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: applies to the workloads of its scope; no Gateway of Istio (class of %s) or waypoint is %s, nor a Service bound to a waypoint of another namespace", field, istioGatewayController, where))
	case inScope == 0:
		ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: applies to the workloads of its scope; no Gateway of Istio (class of %s, not a waypoint) is %s", field, istioGatewayController, where))
	default:
		ps.noTarget = append(ps.noTarget, fmt.Sprintf("%s: matches the pods of no Istio Gateway %s (%s)", field, where, labelText(sel.MatchLabels)))
	}
}

// labelText renders labels as k=v, sorted.
func labelText(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
