package engine

import (
	"encoding/binary"
	"slices"
	"sort"
	"sync"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// stackID identifies a stack of levels in a trie; 0 is the empty stack.
type stackID int32

// level is a node id (>= 0), a namespace level -(namespace index + 1),
// or, from cutBase on, a node's level without the attachments refused
// through the path's Gateway (kindDP.cuts).
type level int32

// cutBase is the first cut level: node ids stay below joinBase.
const cutBase level = 1 << 30

// joinBase is the first join level (joinLevel), below cutBase.
const joinBase level = 1 << 29

// joinLevel is the one level that a Direct kind's policies on an object
// and on one of its sections make at that section where the kind does not
// rank them (policy.Kind.SectionsUnrankedBy): the attachments of both, in
// established order, meet under the kind's same-level rule (NGINX Gateway
// Fabric's selectBackendTLSPolicyForService).
type joinLevel struct {
	obj, sec topology.NodeID
}

// cutLevel is the level of a node without some of its attachments: those
// that the parameters of a Gateway's data plane refuse (attachment.notVia),
// on the paths through that Gateway. Its implementation leaves them out
// there, and what they would have beaten applies (NGINX Gateway Fabric's
// resolveEffectivePayloadProcessors).
type cutLevel struct {
	node topology.NodeID
	out  []merge.Src // the attachments left out, in id order
}

// stackTrie interns stacks of levels, each extending its parent by one level.
type stackTrie struct {
	parent []stackID
	level  []level
	index  map[[2]int32]stackID
}

func newStackTrie() *stackTrie {
	return &stackTrie{parent: []stackID{0}, level: []level{0}, index: map[[2]int32]stackID{}}
}

func (t *stackTrie) extend(s stackID, l level) stackID {
	k := [2]int32{int32(s), int32(l)}
	if id, ok := t.index[k]; ok {
		return id
	}
	id := stackID(len(t.parent))
	t.parent = append(t.parent, s)
	t.level = append(t.level, l)
	t.index[k] = id
	return id
}

// levels returns the stack's levels, most general first.
func (t *stackTrie) levels(s stackID) []level {
	var out []level
	for ; s != 0; s = t.parent[s] {
		out = append(out, t.level[s])
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// nsSets interns sets of namespace indexes (the namespaces with policies
// already placed on a path), so a Namespace appears at most once per path.
type nsSets struct {
	members [][]int32
	index   map[string]int32
	add     map[[2]int32]int32
}

func newNsSets() *nsSets {
	return &nsSets{members: [][]int32{nil}, index: map[string]int32{"": 0}, add: map[[2]int32]int32{}}
}

func (n *nsSets) has(set, x int32) bool {
	for _, m := range n.members[set] {
		if m == x {
			return true
		}
	}
	return false
}

func (n *nsSets) with(set, x int32) int32 {
	k := [2]int32{set, x}
	if id, ok := n.add[k]; ok {
		return id
	}
	m := append(append([]int32(nil), n.members[set]...), x)
	sort.Slice(m, func(i, j int) bool { return m[i] < m[j] })
	// Fixed-width members make distinct sets distinct keys.
	key := make([]byte, 0, 4*len(m))
	for _, v := range m {
		key = binary.BigEndian.AppendUint32(key, uint32(v))
	}
	id, ok := n.index[string(key)]
	if !ok {
		id = int32(len(n.members))
		n.members = append(n.members, m)
		n.index[string(key)] = id
	}
	n.add[k] = id
	return id
}

type predRef struct {
	node topology.NodeID
	idx  int32
}

// entry is one distinct state reaching a node: a stack, the set of
// namespaces already placed and, below route delegation, the matches the
// nearest delegating rule delegates with (admission.step), with
// back-pointers to the previous hierarchy level's states (top: some path
// starts here at a root).
type entry struct {
	stack stackID
	nsSet int32
	adm   int32
	top   bool
	preds []predRef
}

// kindDP is the per-kind state of the context computation. It outlives
// one computation in an Incremental: entries, the trie, the folded stacks
// and the per-target results are updated in place for the nodes a change
// can reach.
type kindDP struct {
	c    *computation
	kind *policy.Kind
	// named and full are the merge schemas of the kind's patch merges:
	// named marks only its named-rule maps; full also reads the CRD's list
	// types (SchemaMerge, and folds with a StrategicMerge policy).
	named, full *merge.Schema
	trie        *stackTrie
	sets        *nsSets
	atNode      map[topology.NodeID][]*attachment
	atNs        [][]*attachment
	nsIndex     map[string]int32
	nsNames     []string
	entries     [][]entry
	useNs       bool
	// refusing counts the attachments in atNode refused through some
	// Gateways (notVia); viaGateway says the entries were built keeping
	// their path's Gateway, which they then need (refusing > 0).
	refusing   int
	viaGateway bool
	// gws, with viaGateway, hold per node the path's Gateway of each of
	// its entries, as node + 1 (0: none yet): beside the entries, which
	// other kinds keep as small as they were.
	gws [][]int32
	// cuts are the cut levels (level cutBase + index), cutIndex their
	// keys.
	cuts     []cutLevel
	cutIndex map[string]level
	// joins are the join levels (level joinBase + index), joinIndex their
	// keys.
	joins     []joinLevel
	joinIndex map[joinLevel]level
	memo      map[stackID]*stackResult
	pre       []*stackResult // stacks folded ahead, in parallel, by prefold
	// targets holds, per effective target with at least one context, its
	// contexts and the stacks tallied for them.
	targets map[topology.NodeID]*targetState
	// order lists the keys of targets, sorted by ref.
	order []topology.NodeID
	// touched, during an update, collects the policies of every context
	// replaced or added: their status may change.
	touched map[*pstate]bool
	// beforeAff and beforeLoss, during an update, hold whether each tally
	// entry that moved was there before it (see movedAff).
	beforeAff  map[affKey]bool
	beforeLoss map[lossKey]bool
	// unused, during an update, lists the folds whose last context was
	// taken back: evicted from memo at the end unless used again, so that
	// memo only holds folds some target uses (an update invalidates the
	// folds of the targets below what changed; a fold no target uses
	// would escape that and come back stale).
	unused []*stackResult
}

// targetState is the effective policy of one target and what was tallied
// for it, so that an update can take it back.
type targetState struct {
	eff      *Effective
	stacks   []*stackResult // one per context, in eff.Contexts order
	affected *Affected      // nil when no policy contributes a field
}

// stackResult is a folded stack, shared by every target and path carrying it.
type stackResult struct {
	atts    []*attachment
	result  merge.Result
	spec    map[string]any
	fields  []FieldSource
	entries []StackEntry
	contrib []int // leaves contributed, by position in atts
	// policies are the outcomes per policy (a policy may be attached at
	// several levels of one path).
	policies []policyOutcome
	// losses flattens the entries' Lost fields, per winner, for tallies.
	losses []stackLoss
	// uses counts the contexts tallied with this stack: who beat whom is
	// tallied once, when the first context uses it.
	uses int
	// id is the stack folded.
	id stackID
	// unsupported are, per attachment with a merge type dropped from the
	// fold, the fields its kind does not support at its target that its
	// merged spec would set (see unmergeUnsupported).
	unsupported map[merge.Src][]string
	// brokenMerge are, per attachment with a merge type whose merged spec
	// holds a broken field of a policy above it, that field (see
	// mergeBroken).
	brokenMerge map[merge.Src]brokenField
	// mergeOpen are, per attachment of those whose broken field fails
	// open in the merged policy (its flags), the parts left out of it
	// (see mergeFailOpen).
	mergeOpen map[merge.Src][]string
	// ownOpen are, per attachment with a merge type whose own broken
	// fields fail open by the merged policy's flags (and not by its own),
	// those parts (see mergeOwnFailOpen); they are in mergeOpen too,
	// unless the merged policy fails closed for another field.
	ownOpen map[merge.Src][]string
	// conflicted are the attachments a same-level rule rejected, with
	// the one that won.
	conflicted map[merge.Src]*attachment
	// base, for the result at one listener port of a kind choosing its
	// configuration by port (policy.PortSelection), is the fold it was
	// derived from: its uses count this result's.
	base *stackResult
}

// policyOutcome is one policy's outcome in a stack, over all its
// attachments on the path.
type policyOutcome struct {
	pol        *pstate
	contrib    int
	lost       bool
	conflicted bool
	dropped    bool // merging it would set unsupported fields
}

// newKindDP indexes the attachments of kind k by level.
func (c *computation) newKindDP(k *policy.Kind) *kindDP {
	d := &kindDP{c: c, kind: k, trie: newStackTrie(), sets: newNsSets(),
		atNode: map[topology.NodeID][]*attachment{}, nsIndex: map[string]int32{}, memo: map[stackID]*stackResult{},
		targets: map[topology.NodeID]*targetState{}}
	for _, a := range c.atts {
		if a.dead || a.pol.p.Kind != k {
			continue
		}
		d.place(a)
	}
	for _, l := range d.atNode {
		sortSameLevel(l)
	}
	for _, l := range d.atNs {
		sortSameLevel(l)
	}
	// Before rejectWhole: the merge-disjoint rule reads the oneofs.
	d.named, d.full = c.kindSchemas(k)
	if k.ConflictScopePolicy {
		d.rejectWhole()
	}
	d.refusing = 0
	for _, l := range d.atNode {
		for _, a := range l {
			if a.notVia != nil {
				d.refusing++
			}
		}
	}
	d.useNs = d.wantNs()
	return d
}

// place adds an attachment to its level's list (unsorted) and returns the
// level and the list.
func (d *kindDP) place(a *attachment) (l level, list []*attachment) {
	if a.nsName != "" && d.kind.Class == policy.Inherited {
		i := d.nsLevel(a.nsName)
		d.atNs[i] = append(d.atNs[i], a)
		return level(-(i + 1)), d.atNs[i]
	}
	d.atNode[a.node] = append(d.atNode[a.node], a)
	if a.notVia != nil {
		d.refusing++
	}
	return level(a.node), d.atNode[a.node]
}

// nsLevel returns the index of a namespace's level, adding it if new.
func (d *kindDP) nsLevel(ns string) int32 {
	i, ok := d.nsIndex[ns]
	if !ok {
		i = int32(len(d.atNs))
		d.nsIndex[ns] = i
		d.atNs = append(d.atNs, nil)
		d.nsNames = append(d.nsNames, ns)
	}
	return i
}

// wantNs reports whether namespace levels take part in paths.
func (d *kindDP) wantNs() bool {
	if !d.kind.InHierarchy(topology.KindNamespace) {
		return false
	}
	for _, l := range d.atNs {
		if len(l) > 0 {
			return true
		}
	}
	return false
}

func (c *computation) computeKind(k *policy.Kind) {
	d := c.newKindDP(k)
	c.dps[k] = d
	if k.Class == policy.Direct {
		d.direct()
		return
	}
	d.run(nil)
	d.collect(d.effectiveNodes(nil))
}

// sortSameLevel orders policies at one level: older first (established),
// then by namespace/name (project decision 2). A missing timestamp is the
// zero time.
func sortSameLevel(l []*attachment) {
	sort.SliceStable(l, func(i, j int) bool {
		// Attachments by route filters first, in filter order.
		if fi, fj := l[i].filter, l[j].filter; fi != fj {
			return fi != 0 && (fj == 0 || fi < fj)
		}
		return establishedBefore(l[i].pol.p, l[j].pol.p)
	})
}

// establishedBefore orders the policies of one level: the higher weight
// first (kinds with a weight annotation; 0 otherwise), then the older, then
// by namespace/name (decision 2).
func establishedBefore(a, b *policy.Policy) bool {
	if a.Weight != b.Weight {
		return a.Weight > b.Weight
	}
	return olderBefore(a, b)
}

// olderBefore orders policies by age, then by namespace/name (decision 2),
// whatever their weights: policies of different levels meet so.
func olderBefore(a, b *policy.Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Ref.Namespace+"/"+a.Ref.Name < b.Ref.Namespace+"/"+b.Ref.Name
}

// run is the dynamic programme over the topology in topological order:
// over every node, or, when only is set, over the nodes it holds (whose
// parents outside it must be up to date).
func (d *kindDP) run(only map[topology.NodeID]bool) {
	g := d.c.graph
	if d.entries == nil {
		d.entries = make([][]entry, g.Len())
	}
	if only == nil {
		d.viaGateway = d.refusing > 0
		d.gws = nil
		if d.viaGateway {
			d.gws = make([][]int32, g.Len())
		}
	}
	type item struct {
		stack stackID
		nsSet int32
		adm   int32
		gw    int32
		top   bool
		preds []predRef
	}
	var items []item
	keyIdx := map[[4]int32]int{}
	cutAt := map[int32]level{} // per path Gateway at one node: its level there
	for _, n := range g.Order() {
		if only != nil && !only[n] {
			continue
		}
		node := g.Node(n)
		gk := node.Ref.GroupKind()
		if gk == topology.KindNamespace {
			// Namespaces are placed on paths, not reached by edges. A
			// Namespace that is itself an effective target has one
			// context: the Namespace alone, with its own policies.
			d.entries[n] = nil
			if d.viaGateway {
				d.gws[n] = nil
			}
			if d.useNs && d.kind.IsEffectiveTarget(gk) {
				if i, ok := d.nsIndex[node.Ref.Name]; ok && len(d.atNs[i]) > 0 {
					d.entries[n] = []entry{{stack: d.trie.extend(0, level(-(i + 1))), nsSet: d.sets.with(0, i), top: true}}
				}
			}
			continue
		}
		isGateway := gk == topology.KindGateway && !node.Ref.IsSection()
		if isGateway {
			if ok, _ := d.c.gatewayServed(d.kind, node.Ref); !ok {
				// Another implementation's Gateway: no context of this
				// kind runs through it.
				d.entries[n] = nil
				if d.viaGateway {
					d.gws[n] = nil
				}
				continue
			}
		}
		if d.kind.ReadyPathsOnly && node.Ref.IsListener() &&
			d.c.ready.listenerReady(node.Ref) != "" {
			// A listener that is not Programmed yet: no path runs
			// through it.
			d.entries[n] = nil
			if d.viaGateway {
				d.gws[n] = nil
			}
			continue
		}
		items = items[:0]
		parents := d.c.pathParents(d.kind, n, node)
		if len(parents) == 0 && d.startsPath(gk) {
			items = append(items, item{top: true})
		}
		for _, p := range parents {
			if d.kind.ReadyPathsOnly && !d.readyBelow(p, node) {
				continue // the route is not accepted there yet
			}
			pInH := d.inHierarchy(p)
			var pgws []int32
			if d.viaGateway {
				pgws = d.gws[p]
			}
			for idx, e := range d.entries[p] {
				var gw int32
				if idx < len(pgws) {
					gw = pgws[idx]
				}
				var adm int32
				if a := d.c.adm; a != nil {
					var kept bool
					if adm, kept = a.step(p, n, e.adm); !kept {
						continue // kgateway drops this rule below that parent
					}
				}
				if pInH {
					items = append(items, item{stack: e.stack, nsSet: e.nsSet, adm: adm, gw: gw, preds: []predRef{{p, int32(idx)}}})
				} else {
					items = append(items, item{stack: e.stack, nsSet: e.nsSet, adm: adm, gw: gw, top: e.top, preds: e.preds})
				}
			}
		}
		inH := d.kind.InHierarchy(gk)
		atts := d.atNode[n]
		var nsIdx int32 = -1
		if inH && d.useNs && !node.Ref.IsSection() && node.Ref.Namespace != "" {
			if i, ok := d.nsIndex[node.Ref.Namespace]; ok && len(d.atNs[i]) > 0 {
				nsIdx = i
			}
		}
		// Paths through a Gateway leave out below it what its data
		// plane's parameters refuse: they carry it.
		cut := false
		if d.viaGateway {
			if isGateway {
				for i := range items {
					items[i].gw = int32(n) + 1
				}
			}
			cut = inH && slices.ContainsFunc(atts, func(a *attachment) bool { return a.notVia != nil })
			clear(cutAt)
		}
		// A Gateway listener's policies at the ListenerSet listener of
		// its name, between the ListenerSet's and the Gateway's.
		gwSec, lsLevel, splice := d.gatewaySectionLevel(node)
		clear(keyIdx)
		var out []entry
		var outGws []int32
		for _, it := range items {
			s, ns := it.stack, it.nsSet
			if inH && splice {
				s = d.spliceBefore(s, lsLevel, gwSec)
			}
			if inH {
				if nsIdx >= 0 && !d.sets.has(ns, nsIdx) {
					s = d.trie.extend(s, level(-(nsIdx + 1)))
					ns = d.sets.with(ns, nsIdx)
				}
				if len(atts) > 0 {
					l := level(n)
					if cut && it.gw != 0 {
						var seen bool
						if l, seen = cutAt[it.gw]; !seen {
							l = d.cutLevel(n, topology.NodeID(it.gw-1))
							cutAt[it.gw] = l
						}
					}
					if l != cutAll {
						s = d.trie.extend(s, l)
					}
				}
			}
			k := [4]int32{int32(s), ns, it.adm, it.gw}
			i, ok := keyIdx[k]
			if !ok {
				i = len(out)
				keyIdx[k] = i
				out = append(out, entry{stack: s, nsSet: ns, adm: it.adm})
				if d.viaGateway {
					outGws = append(outGws, it.gw)
				}
			}
			e := &out[i]
			e.top = e.top || it.top
			e.preds = append(e.preds, it.preds...)
		}
		for i := range out {
			out[i].preds = dedupePreds(out[i].preds)
		}
		d.entries[n] = out
		if d.viaGateway {
			d.gws[n] = outGws
		}
	}
}

// cutAll stands for a cut level without attachments: no level at all.
const cutAll level = -1 << 31

// cutLevel is node n's level on the paths through Gateway gw: the node's
// own when gw refuses none of its attachments, cutAll when it refuses
// them all, else the cut level without those it refuses (interned by the
// attachments left out, so that Gateways refusing the same ones share
// it).
func (d *kindDP) cutLevel(n, gw topology.NodeID) level {
	ref := d.c.graph.Node(gw).Ref
	var out []merge.Src
	atts := d.atNode[n]
	for _, a := range atts {
		if slices.Contains(a.notVia, ref) {
			out = append(out, a.id)
		}
	}
	switch len(out) {
	case 0:
		return level(n)
	case len(atts):
		return cutAll
	}
	slices.Sort(out)
	key := make([]byte, 0, 4*(len(out)+1))
	key = binary.BigEndian.AppendUint32(key, uint32(n))
	for _, id := range out {
		key = binary.BigEndian.AppendUint32(key, uint32(id))
	}
	if l, ok := d.cutIndex[string(key)]; ok {
		return l
	}
	if d.cutIndex == nil {
		d.cutIndex = map[string]level{}
	}
	l := cutBase + level(len(d.cuts))
	d.cuts = append(d.cuts, cutLevel{node: n, out: out})
	d.cutIndex[string(key)] = l
	return l
}

// levelNode is the node of a node's level or of a cut level, the section
// of a join level (whose object levelHolds also counts); false for a
// namespace level.
func (d *kindDP) levelNode(l level) (topology.NodeID, bool) {
	switch {
	case l < 0:
		return 0, false
	case l >= cutBase:
		return d.cuts[l-cutBase].node, true
	case l >= joinBase:
		return d.joins[l-joinBase].sec, true
	}
	return topology.NodeID(l), true
}

// levelHolds reports whether level l holds the attachments of a node in
// nodes, or of a namespace (by index) in nss.
func (d *kindDP) levelHolds(l level, nodes map[topology.NodeID]bool, nss map[int32]bool) bool {
	switch {
	case l < 0:
		return nss[int32(-l-1)]
	case l >= joinBase && l < cutBase:
		j := d.joins[l-joinBase]
		return nodes[j.obj] || nodes[j.sec]
	}
	n, _ := d.levelNode(l)
	return nodes[n]
}

// joinOf is the join level of object obj and its section sec (interned).
func (d *kindDP) joinOf(obj, sec topology.NodeID) level {
	j := joinLevel{obj: obj, sec: sec}
	if l, ok := d.joinIndex[j]; ok {
		return l
	}
	if d.joinIndex == nil {
		d.joinIndex = map[joinLevel]level{}
	}
	l := joinBase + level(len(d.joins))
	d.joins = append(d.joins, j)
	d.joinIndex[j] = l
	return l
}

// levelAtts are the attachments of a level, in established order.
func (d *kindDP) levelAtts(l level) []*attachment {
	switch {
	case l < 0:
		return d.atNs[-l-1]
	case l >= cutBase:
		c := d.cuts[l-cutBase]
		var out []*attachment
		for _, a := range d.atNode[c.node] {
			if _, left := slices.BinarySearch(c.out, a.id); !left {
				out = append(out, a)
			}
		}
		return out
	case l >= joinBase:
		// A policy on both the object and the section meets itself once,
		// on the object (NGINX Gateway Fabric's selection keeps it).
		j := d.joins[l-joinBase]
		out := slices.Clone(d.atNode[j.obj])
		for _, a := range d.atNode[j.sec] {
			if !slices.ContainsFunc(d.atNode[j.obj], func(b *attachment) bool { return b.pol == a.pol }) {
				out = append(out, a)
			}
		}
		sortSameLevel(out)
		return out
	}
	return d.atNode[topology.NodeID(l)]
}

// startsPath reports whether a root of kind gk starts paths of the kind:
// any root does, unless the kind is reached through Gateways only, whose
// paths start at a GatewayClass or, its class not among the objects, at a
// Gateway (attache's inputs often leave GatewayClasses out).
func (d *kindDP) startsPath(gk topology.GroupKind) bool {
	return !d.kind.ReachThroughGateway || gk == topology.KindGatewayClass || gk == topology.KindGateway
}

func (d *kindDP) inHierarchy(n topology.NodeID) bool {
	return d.kind.InHierarchy(d.c.graph.Node(n).Ref.GroupKind())
}

func dedupePreds(p []predRef) []predRef {
	if len(p) < 2 {
		return p
	}
	sort.Slice(p, func(i, j int) bool {
		if p[i].node != p[j].node {
			return p[i].node < p[j].node
		}
		return p[i].idx < p[j].idx
	})
	out := p[:1]
	for _, x := range p[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// effectiveNodes returns the effective targets of the kind, in ref order
// within each effective target kind; with only set, those it holds.
func (d *kindDP) effectiveNodes(only map[topology.NodeID]bool) []topology.NodeID {
	var out []topology.NodeID
	for _, gk := range d.kind.EffectiveTargetKinds {
		if !d.kind.InHierarchy(gk) {
			continue
		}
		sections := d.kind.IsEffectiveSection(gk)
		for _, n := range d.c.graph.ByKind(gk) {
			if !sections {
				if only == nil || only[n] {
					out = append(out, n)
				}
				continue
			}
			for _, sn := range d.c.graph.Sections(n) {
				if (only == nil || only[sn]) && !d.c.delegating(sn) && d.listenerQualifies(sn) {
					out = append(out, sn)
				}
			}
		}
	}
	return out
}

// listenerQualifies reports whether section node n meets the kind's
// listener conditions (policy.Kind.EffectiveListeners) when it is a
// listener; any other section does.
func (d *kindDP) listenerQualifies(n topology.NodeID) bool {
	if len(d.kind.EffectiveListeners) == 0 {
		return true
	}
	ref := d.c.graph.Node(n).Ref
	if !topology.HoldsListeners(ref.GroupKind()) {
		return true
	}
	l, ok := d.c.listenerPorts[ref]
	if !ok {
		return false
	}
	for _, cond := range d.kind.EffectiveListeners {
		switch cond {
		case policy.ListenerHostname:
			if l.hostname == "" {
				return false
			}
		case policy.ListenerTLSTerminate:
			if !l.tlsTerminate {
				return false
			}
		case policy.ListenerAttachedRoutes:
			if !d.c.hasAttachedRoutes(n) {
				return false
			}
		case policy.ListenerAddresses:
			if !d.c.hasAddresses(n) {
				return false
			}
		}
	}
	return true
}

// collect builds one Effective per effective target of nodes, one Context
// per distinct non-empty stack reaching it (a target's previous contexts
// are taken back first).
func (d *kindDP) collect(nodes []topology.NodeID) {
	// Fold every distinct stack reaching these targets first, in
	// parallel; the loop below then only assembles contexts.
	seen := map[stackID]bool{}
	var stacks []stackID
	for _, n := range nodes {
		for _, e := range d.entries[n] {
			if e.stack != 0 && !seen[e.stack] {
				seen[e.stack] = true
				if _, done := d.memo[e.stack]; !done {
					stacks = append(stacks, e.stack)
				}
			}
		}
	}
	d.prefold(stacks)
	for _, n := range nodes {
		d.setTarget(n, d.dpTarget(n))
	}
	d.pre = nil
}

// dpTarget computes the contexts of an effective target from its entries.
func (d *kindDP) dpTarget(n topology.NodeID) *targetState {
	es := d.entries[n]
	byStack := map[stackID][]int32{}
	var order []stackID
	for i, e := range es {
		if e.stack == 0 {
			continue
		}
		if _, ok := byStack[e.stack]; !ok {
			order = append(order, e.stack)
		}
		byStack[e.stack] = append(byStack[e.stack], int32(i))
	}
	if len(order) == 0 {
		return nil
	}
	ts := &targetState{eff: &Effective{Kind: d.kind, Target: d.c.graph.Node(n).Ref}}
	// The paths are walked from this node's entries as they are now: the
	// closure keeps this entries table, which an update replaces rather
	// than modifies, so earlier Results keep their paths.
	entries := d.entries
	for _, s := range order {
		sr := d.atListener(d.fold(s), n)
		idxs := byStack[s]
		ts.stacks = append(ts.stacks, sr)
		ts.eff.Contexts = append(ts.eff.Contexts, newContext(sr, func(yield func([]topology.Ref) bool) {
			for _, i := range idxs {
				if !d.enumerate(entries, n, i, nil, yield) {
					return
				}
			}
		}, func() int {
			memo := countMemos.Get().(map[entryAt]int)
			defer func() { clear(memo); countMemos.Put(memo) }()
			total := 0
			for _, i := range idxs {
				total += countPaths(entries, entryAt{n, i}, memo)
			}
			return total
		}))
	}
	return ts
}

// setTarget replaces the state of target n: it takes back what was tallied
// for the old one, tallies the new one and derives its Affected entry.
func (d *kindDP) setTarget(n topology.NodeID, ts *targetState) {
	old := d.targets[n]
	if old != nil {
		d.tally(old, n, -1)
		d.touch(old)
	}
	if ts == nil {
		if old != nil {
			delete(d.targets, n)
			d.removeOrder(n)
		}
		return
	}
	d.tally(ts, n, +1)
	d.touch(ts)
	ts.affected = d.affected(ts, n)
	d.targets[n] = ts
	if old == nil {
		d.insertOrder(n)
	}
}

// touch records, during an update, the policies of a target's contexts.
func (d *kindDP) touch(ts *targetState) {
	if d.touched == nil {
		return
	}
	for _, sr := range ts.stacks {
		for _, po := range sr.policies {
			d.touched[po.pol] = true
		}
	}
}

// insertOrder and removeOrder keep order sorted by ref.
func (d *kindDP) insertOrder(n topology.NodeID) {
	g := d.c.graph
	ref := g.Node(n).Ref
	i := sort.Search(len(d.order), func(i int) bool { return !g.Node(d.order[i]).Ref.Less(ref) })
	d.order = append(d.order, 0)
	copy(d.order[i+1:], d.order[i:])
	d.order[i] = n
}

func (d *kindDP) removeOrder(n topology.NodeID) {
	g := d.c.graph
	ref := g.Node(n).Ref
	i := sort.Search(len(d.order), func(i int) bool { return !g.Node(d.order[i]).Ref.Less(ref) })
	if i < len(d.order) && d.order[i] == n {
		d.order = append(d.order[:i], d.order[i+1:]...)
	}
}

// enumerate walks back-pointers from (n, idx) to roots, yielding paths.
func (d *kindDP) enumerate(entries [][]entry, n topology.NodeID, idx int32, suffix []topology.NodeID, yield func([]topology.Ref) bool) bool {
	e := &entries[n][idx]
	suffix = append(suffix, n)
	if e.top && !yield(d.pathRefs(suffix)) {
		return false
	}
	for _, p := range e.preds {
		if !d.enumerate(entries, p.node, p.idx, suffix, yield) {
			return false
		}
	}
	return true
}

// entryAt names one entry of a node's entries table.
type entryAt struct {
	node topology.NodeID
	idx  int32
}

// countMemos reuse countPaths' memos: a controller counts the paths of
// every context it renders, and a fresh map each time was a fifth of what
// rendering allocated.
var countMemos = sync.Pool{New: func() any { return map[entryAt]int{} }}

// countPaths is the number of paths enumerate yields from an entry,
// memoised per entry: linear in the entries, whatever the number of paths.
func countPaths(entries [][]entry, at entryAt, memo map[entryAt]int) int {
	if n, ok := memo[at]; ok {
		return n
	}
	e := &entries[at.node][at.idx]
	n := 0
	if e.top {
		n = 1
	}
	for _, p := range e.preds {
		n += countPaths(entries, entryAt{p.node, p.idx}, memo)
	}
	memo[at] = n
	return n
}

// pathRefs turns a reversed node path into refs, root first, placing each
// Namespace directly above the first object of that namespace (decision 1).
func (d *kindDP) pathRefs(rev []topology.NodeID) []topology.Ref {
	g := d.c.graph
	withNs := d.kind.InHierarchy(topology.KindNamespace)
	out := make([]topology.Ref, 0, len(rev)+2)
	seen := map[string]bool{}
	for i := len(rev) - 1; i >= 0; i-- {
		r := g.Node(rev[i]).Ref
		if withNs && !r.IsSection() && r.Namespace != "" && !seen[r.Namespace] {
			seen[r.Namespace] = true
			out = append(out, topology.Ref{Kind: "Namespace", Name: r.Namespace})
		}
		out = append(out, r)
	}
	return out
}

// direct computes Direct kinds: the declared target is the effective
// target, and its context is the target alone (with DirectSections, the
// sections of an object are the effective targets, below the object).
func (d *kindDP) direct() {
	done := map[topology.NodeID]bool{}
	for n := range d.atNode {
		for _, t := range d.directTargets(n) {
			if !done[t] {
				done[t] = true
				d.setTarget(t, d.directTarget(t))
			}
		}
	}
}

// directSectionsOf reports whether a Direct kind's policies on objects of
// kind gk cover their sections, which are the effective targets.
func (d *kindDP) directSectionsOf(gk topology.GroupKind) bool {
	return d.kind.DirectSections && d.kind.IsEffectiveSection(gk)
}

// directTargets returns the effective targets that the attachments at node
// n reach for a Direct kind: n itself, or with DirectSections, the
// sections of the object n; at waypoints, the targets reached through
// them (waypointTargets, telemetryTargets).
func (d *kindDP) directTargets(n topology.NodeID) []topology.NodeID {
	ref := d.c.graph.Node(n).Ref
	out := []topology.NodeID{n}
	if !ref.IsSection() && d.directSectionsOf(ref.GroupKind()) {
		out = d.c.graph.Sections(n)
	}
	if d.c.adm != nil {
		// A child rule kgateway drops everywhere is no target.
		out = slices.DeleteFunc(slices.Clone(out), d.c.unreachedRule)
	}
	if len(d.kind.EffectiveListeners) > 0 {
		// Nor a listener the kind's implementation leaves alone.
		out = slices.DeleteFunc(slices.Clone(out), func(t topology.NodeID) bool { return !d.listenerQualifies(t) })
	}
	switch {
	case d.throughWaypoints():
		// And what its attachments reach through waypoints.
		out = append(slices.Clip(out), d.waypointTargets(n)...)
	case d.telemetryAtWaypoints():
		// And the targets whose layering at a waypoint holds it.
		out = append(slices.Clip(out), d.telemetryTargets(n)...)
	}
	return out
}

// directStack is the stack of a Direct kind's effective target n: its own
// level, below its object's when the object's policies cover it, below
// the waypoint's (and its class's) it is reached through; or, for a kind
// layered as Telemetry at waypoints, telemetryLevels. A Service with a
// canary waypoint has a second stack, through the canary: directStacks.
func (d *kindDP) directStack(n topology.NodeID) stackID {
	return d.directStackVia(n, d.waypointPath(n))
}

// directStacks are the stacks of a Direct kind's effective target n, one
// per waypoint path (waypointPaths) for a kind whose policies reach
// Services through waypoints, else directStack's.
func (d *kindDP) directStacks(n topology.NodeID) []stackID {
	if !d.throughWaypoints() {
		return []stackID{d.directStack(n)}
	}
	var out []stackID
	for _, wpath := range d.waypointPaths(n) {
		out = append(out, d.directStackVia(n, wpath))
	}
	return out
}

// directStackVia is directStack through the waypoint path wpath.
func (d *kindDP) directStackVia(n topology.NodeID, wpath []topology.NodeID) stackID {
	ref := d.c.graph.Node(n).Ref
	var s stackID
	if d.telemetryAtWaypoints() {
		if ls := d.telemetryLevels(n); ls != nil {
			// istiod's layering at the waypoint.
			for _, l := range ls {
				if len(d.atNode[l]) > 0 {
					s = d.trie.extend(s, level(l))
				}
			}
			return s
		}
	}
	if d.throughWaypoints() {
		for _, l := range wpath {
			if len(d.atNode[l]) > 0 {
				s = d.trie.extend(s, level(l))
			}
		}
	}
	if ref.IsSection() && d.directSectionsOf(ref.GroupKind()) {
		obj, ok := d.c.graph.Lookup(ref.Object())
		hasObj := ok && len(d.atNode[obj]) > 0
		// Whether the object's and the section's policies rank matters
		// only where the section has some (the Gateways above it are
		// looked up then only).
		unranked := len(d.atNode[n]) > 0 && (hasObj || unnamedPort(ref.SectionName)) && d.unrankedAt(ref)
		if unranked && unnamedPort(ref.SectionName) {
			// Its implementation matches a port's policies by the
			// port's name: an unnamed port has none, only the object's.
			if hasObj {
				s = d.trie.extend(s, level(obj))
			}
			return s
		}
		if hasObj {
			if unranked {
				// The object's policies and the section's meet as one.
				return d.trie.extend(s, d.joinOf(obj, n))
			}
			s = d.trie.extend(s, level(obj))
		}
	}
	if len(d.atNode[n]) > 0 {
		s = d.trie.extend(s, level(n))
	}
	return s
}

// directTarget computes the contexts of a Direct kind's target: one,
// or, for a Service with a canary waypoint, one per waypoint path whose
// stack differs (paths with the same stack share a context).
func (d *kindDP) directTarget(n topology.NodeID) *targetState {
	ref := d.c.graph.Node(n).Ref
	wpaths := [][]topology.NodeID{d.waypointPath(n)}
	if d.throughWaypoints() {
		wpaths = d.waypointPaths(n)
	}
	var ts *targetState
	var stacks []stackID
	var paths [][][]topology.Ref
	for _, wpath := range wpaths {
		s := d.directStackVia(n, wpath)
		if s == 0 {
			continue
		}
		path := []topology.Ref{ref}
		if d.throughWaypoints() || d.telemetryAtWaypoints() {
			// The waypoint (and its class) the target is reached through.
			path = nil
			for _, l := range wpath {
				path = append(path, d.c.graph.Node(l).Ref)
			}
			path = append(path, ref)
		}
		if i := slices.Index(stacks, s); i >= 0 {
			paths[i] = append(paths[i], path)
			continue
		}
		if ts == nil {
			ts = &targetState{eff: &Effective{Kind: d.kind, Target: ref}}
		}
		stacks = append(stacks, s)
		paths = append(paths, [][]topology.Ref{path})
		ts.stacks = append(ts.stacks, d.atListener(d.fold(s), n))
	}
	if ts == nil {
		return nil
	}
	for i, sr := range ts.stacks {
		ps := paths[i]
		ts.eff.Contexts = append(ts.eff.Contexts, newContext(sr, func(yield func([]topology.Ref) bool) {
			for _, p := range ps {
				if !yield(p) {
					return
				}
			}
		}, func() int { return len(ps) }))
	}
	return ts
}

// stackLevels returns the attachments of a stack grouped by level, most
// general first; within a level, in established order.
func (d *kindDP) stackLevels(s stackID) [][]*attachment {
	var out [][]*attachment
	for _, l := range d.trie.levels(s) {
		out = append(out, d.levelAtts(l))
	}
	return out
}

// stackAtts returns the attachments of a stack, most general first.
func (d *kindDP) stackAtts(s stackID) []*attachment {
	var out []*attachment
	for _, l := range d.trie.levels(s) {
		out = append(out, d.levelAtts(l)...)
	}
	return out
}
