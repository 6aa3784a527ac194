package engine

import (
	"math"
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/topology"
)

// atListener returns the fold of a stack as it applies at effective
// target n. For a kind choosing its configuration by port
// (policy.PortSelection), or leaving fields of the levels above a
// ListenerSet out at its listeners (policy.Kind.NotInListenerSets), it is
// a result derived anew for each target: at a ListenerSet's listener,
// without what the policies above the ListenerSet set at those paths; at
// a listener, the configuration of its port (see merge.Result.Choose; a
// listener without a port takes the default one); elsewhere the fold as
// it is. A derived result's uses count on the fold, which is then never a
// target's result itself, so that it leaves the memo exactly when no
// target uses it any more. For other kinds it is the fold itself.
func (d *kindDP) atListener(sr *stackResult, n topology.NodeID) *stackResult {
	ps := d.kind.PortSelection
	if !ps.Enabled() && len(d.kind.NotInListenerSets) == 0 {
		return sr
	}
	out := &stackResult{atts: sr.atts, id: sr.id, unsupported: sr.unsupported, brokenMerge: sr.brokenMerge, mergeOpen: sr.mergeOpen, ownOpen: sr.ownOpen,
		conflicted: sr.conflicted, base: sr, result: sr.result}
	ref := d.c.graph.Node(n).Ref
	if ref.IsListener() && topology.IsListenerSet(ref.GroupKind()) && len(d.kind.NotInListenerSets) > 0 {
		set := ref.Object()
		above := map[merge.Src]bool{}
		for _, a := range sr.atts {
			if a.ref.At.Object() != set {
				above[a.id] = true
			}
		}
		if len(above) > 0 {
			for _, p := range d.kind.NotInListenerSets {
				out.result = out.result.Without(strings.Split(p, "."), func(s merge.Src) bool { return above[s] })
			}
		}
	}
	if ps.Enabled() && ref.IsListener() {
		port := math.NaN()
		if lp, ok := d.c.listenerPorts[ref]; ok {
			port = float64(lp.port)
		}
		out.result = out.result.Choose(merge.Choice{List: ps.List, Key: ps.Key, Value: ps.Value, Default: ps.Default}, port)
	}
	d.finish(out)
	return out
}
