package engine

import (
	"math"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// atListener returns the fold of a stack as it applies at effective
// target n. For a kind choosing its configuration by port
// (policy.PortSelection) it is a result derived anew for each target: at
// a listener, the configuration of its port (see merge.Result.Choose; a
// listener without a port takes the default one), elsewhere the fold as it
// is. A derived result's uses count on the fold, which is then never a
// target's result itself, so that it leaves the memo exactly when no
// target uses it any more. For other kinds it is the fold itself.
func (d *kindDP) atListener(sr *stackResult, n topology.NodeID) *stackResult {
	ps := d.kind.PortSelection
	if !ps.Enabled() {
		return sr
	}
	out := &stackResult{atts: sr.atts, id: sr.id, unsupported: sr.unsupported, brokenMerge: sr.brokenMerge, mergeOpen: sr.mergeOpen, ownOpen: sr.ownOpen,
		conflicted: sr.conflicted, base: sr, result: sr.result}
	if ref := d.c.graph.Node(n).Ref; ref.IsSection() && (ref.GroupKind() == topology.KindGateway || topology.IsListenerSet(ref.GroupKind())) {
		port := math.NaN()
		if lp, ok := d.c.listenerPorts[ref]; ok {
			port = float64(lp.port)
		}
		out.result = sr.result.Choose(merge.Choice{List: ps.List, Key: ps.Key, Value: ps.Value, Default: ps.Default}, port)
	}
	d.finish(out)
	return out
}
