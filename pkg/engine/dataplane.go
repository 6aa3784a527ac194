package engine

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/diag"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// classMerge says whether a GatewayClass merges its Gateways into one data
// plane, and where attache learnt it.
type classMerge struct {
	merged bool
	from   string
}

// needsDataPlanes reports whether a kind asks which Gateways share a data
// plane: one whose policies target a data plane, or one that rejects a
// listener policy another listener of the data plane would carry.
func (c *computation) needsDataPlanes() bool {
	for _, k := range c.kinds {
		if k.ReadsDataPlanes() {
			return true
		}
	}
	return false
}

// readMergedClasses reads, for every GatewayClass among the objects,
// whether its Gateways are merged into one data plane: its parameters
// (profiles.ClassParametersRef, e.g. Envoy Gateway's EnvoyProxy) say so,
// else the implementation's configuration's default
// (profiles.EGMergeGateways), else not. Parameters that are not among the
// objects leave the default (their implementation would not accept the
// class; attache does not judge GatewayClasses).
func (c *computation) readMergedClasses(topo []*unstructured.Unstructured) {
	c.mergedClasses = map[string]classMerge{}
	for _, u := range topo {
		if gkOf(u) == topology.KindGateway {
			if ref, ok := profiles.GatewayParametersRef(u); ok {
				if c.gatewayParamRefs == nil {
					c.gatewayParamRefs = map[topology.Ref]topology.Ref{}
				}
				c.gatewayParamRefs[refOf(u)] = ref
			}
			continue
		}
		if gkOf(u) != topology.KindGatewayClass {
			continue
		}
		c.classNames = append(c.classNames, u.GetName())
		ref, ok := profiles.ClassParametersRef(u)
		if !ok {
			continue
		}
		if c.classParamRefs == nil {
			c.classParamRefs = map[string]topology.Ref{}
		}
		c.classParamRefs[u.GetName()] = ref
		params := c.classParams[ref]
		if params == nil || ref.GroupKind() != profiles.EnvoyProxy {
			continue // only an EnvoyProxy says whether Gateways merge
		}
		merged, set, field, err := profiles.MergesGateways(params)
		if err != nil {
			c.problems = append(c.problems, diag.Problem{Object: ref, Source: c.sources[ref], Field: field, Message: err.Error()})
		}
		if set {
			c.mergedClasses[u.GetName()] = classMerge{merged: merged, from: fmt.Sprintf("spec.mergeGateways of %s %s/%s, its parametersRef", ref.Kind, ref.Namespace, ref.Name)}
		}
	}
}

// merges says whether GatewayClass class merges its Gateways, and where
// attache learnt it (for messages).
func (c *computation) merges(class string) classMerge {
	if m, ok := c.mergedClasses[class]; ok {
		return m
	}
	if f, ok := c.features[profiles.EGMergeGateways]; ok {
		from := f.From
		if from == "" {
			from = "the configuration"
		}
		return classMerge{merged: f.On, from: profiles.EGMergeGateways + " in " + from}
	}
	return classMerge{from: "no configuration attache read merges Gateways"}
}

// anyMerged reports whether a GatewayClass among the objects merges its
// Gateways (by its parameters or the configuration's default): the
// implementation then looks a data-plane target's name up as a
// GatewayClass. With no GatewayClass among the objects, the default
// says.
func (c *computation) anyMerged() bool {
	if len(c.classNames) == 0 {
		return c.features.On(profiles.EGMergeGateways)
	}
	for _, name := range c.classNames {
		if c.merges(name).merged {
			return true
		}
	}
	return false
}

// classHasGateways reports whether a Gateway of GatewayClass class is
// among the objects: a merged class's data plane exists only with one.
func (c *computation) classHasGateways(class string) bool {
	for _, f := range c.gateways {
		if f.class == class {
			return true
		}
	}
	return false
}

// dataPlaneListeners are the listeners one data plane serves with gw's:
// those of gw and of the ListenerSets it admits, and, when its class
// merges its Gateways, those of every Gateway of the class but a listener
// whose protocol, port and hostname an earlier one of another Gateway
// has (Envoy Gateway marks it Conflicted and leaves it out:
// validateConflictedMergedListeners; Gateways ordered by creation, then
// namespace and name). merged says where that was learnt ("" when gw's
// class does not merge).
func (c *computation) dataPlaneListeners(gw topology.NodeID) (out []topology.Ref, merged string) {
	ref := c.graph.Node(gw).Ref
	class := c.gateways[ref].class
	m := c.merges(class)
	if !m.merged {
		return c.gatewayListeners(gw), ""
	}
	var peers []topology.Ref
	for r, f := range c.gateways {
		if f.class == class {
			peers = append(peers, r)
		}
	}
	sort.Slice(peers, func(i, j int) bool {
		ti, tj := c.gateways[peers[i]].created, c.gateways[peers[j]].created
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return peers[i].Compare(peers[j]) < 0
	})
	seen := map[listenerPort]bool{}
	for _, r := range peers {
		id, ok := c.graph.Lookup(r)
		if !ok {
			continue
		}
		for _, l := range c.gatewayListeners(id) {
			lp, ok := c.listenerPorts[l]
			if ok {
				key := listenerPort{port: lp.port, proto: lp.proto, hostname: lp.hostname}
				if seen[key] {
					continue // Conflicted: not served
				}
				seen[key] = true
			}
			out = append(out, l)
		}
	}
	return out, fmt.Sprintf("GatewayClass %s merges its Gateways into one data plane (%s)", class, m.from)
}

// resolveDataPlane resolves a target of a kind whose policies target one
// data plane (Kind.DataPlaneTarget) as its implementation does: by name,
// as a GatewayClass that merges its Gateways, else as a Gateway of the
// policy's namespace, whatever kind the reference gives; the kind is
// checked after the name resolved (and after the kind's feature gates).
func (c *computation) resolveDataPlane(ps *pstate, t policy.TargetRef) {
	p := ps.p
	gk := t.GroupKind()
	classRef := topology.Ref{Group: topology.KindGatewayClass.Group, Kind: topology.KindGatewayClass.Kind, Name: t.Name}
	gwRef := topology.Ref{Group: topology.KindGateway.Group, Kind: topology.KindGateway.Kind, Namespace: p.Ref.Namespace, Name: t.Name}
	if id, ok := c.graph.Lookup(classRef); ok {
		if m := c.merges(t.Name); m.merged && !c.classHasGateways(t.Name) {
			// Its implementation builds a data plane per Gateway:
			// there is none to patch.
			c.invalidTarget(ps, t, classRef, fmt.Sprintf("GatewayClass %s merges its Gateways into one data plane (%s), and has no Gateway: there is no data plane to target", t.Name, m.from))
			return
		} else if m.merged {
			if gk == topology.KindGatewayClass {
				c.attachChecked(ps, id, t)
				return
			}
			if c.disabledAt(ps, id) {
				return
			}
			c.invalidTarget(ps, t, classRef, fmt.Sprintf("kind %s: the name %s is GatewayClass %s, which merges its Gateways into one data plane (%s); target it as %s",
				gk, t.Name, t.Name, m.from, topology.KindGatewayClass))
			return
		}
	}
	if id, ok := c.graph.Lookup(gwRef); ok {
		class := c.gateways[gwRef].class
		if m := c.merges(class); m.merged {
			// The implementation looks the name up among the merged
			// GatewayClasses, and finds none.
			c.invalidTarget(ps, t, classRef, fmt.Sprintf("%s belongs to GatewayClass %s, which merges its Gateways into one data plane (%s): policies of %s target the GatewayClass, and there is no merged GatewayClass %s",
				gwRef.Short(), class, m.from, p.Kind, t.Name))
			return
		}
		if gk == topology.KindGateway {
			c.attachChecked(ps, id, t)
			return
		}
		if c.disabledAt(ps, id) {
			return
		}
		c.invalidTarget(ps, t, gwRef, fmt.Sprintf("kind %s: the name %s is %s, whose GatewayClass %s does not merge its Gateways (%s); target it as %s",
			gk, t.Name, gwRef.Short(), class, c.merges(class).from, topology.KindGateway))
		return
	}
	if c.anyMerged() {
		c.invalidTarget(ps, t, classRef, fmt.Sprintf("no GatewayClass %s that merges its Gateways into one data plane, and no %s", t.Name, gwRef.Short()))
		return
	}
	msg := fmt.Sprintf("%s: %s not found", t.Field, gwRef.Short())
	if gk == topology.KindGatewayClass {
		if _, ok := c.graph.Lookup(classRef); ok {
			msg = fmt.Sprintf("%s: GatewayClass %s does not merge its Gateways (%s), so its implementation looks for %s, which is not found", t.Field, t.Name, c.merges(t.Name).from, gwRef.Short())
		} else {
			msg = fmt.Sprintf("%s: %s not found, and no GatewayClass merges its Gateways", t.Field, classRef.Short())
		}
	}
	ps.ancestors = append(ps.ancestors, ancestorState{ref: targetRef(t), reason: ReasonTargetNotFound, msg: msg})
}
