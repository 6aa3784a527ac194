package engine

import (
	"encoding/binary"
	"sort"

	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// stackID identifies a stack of levels in a trie; 0 is the empty stack.
type stackID int32

// level is a node id (>= 0) or a namespace level -(namespace index + 1).
type level int32

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

// entry is one distinct state reaching a node: a stack and the set of
// namespaces already placed, with back-pointers to the previous hierarchy
// level's states (top: some path starts here at a root).
type entry struct {
	stack stackID
	nsSet int32
	top   bool
	preds []predRef
}

// kindDP is the per-kind state of the context computation.
type kindDP struct {
	c       *computation
	kind    *policy.Kind
	trie    *stackTrie
	sets    *nsSets
	atNode  map[topology.NodeID][]*attachment
	atNs    [][]*attachment
	nsIndex map[string]int32
	nsNames []string
	entries [][]entry
	useNs   bool
	memo    map[stackID]*stackResult
	pre     []*stackResult // stacks folded ahead, in parallel, by prefold
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
}

// policyOutcome is one policy's outcome in a stack, over all its
// attachments on the path.
type policyOutcome struct {
	pol        *pstate
	contrib    int
	lost       bool
	conflicted bool
}

func (c *computation) computeKind(k *policy.Kind) {
	d := &kindDP{c: c, kind: k, trie: newStackTrie(), sets: newNsSets(),
		atNode: map[topology.NodeID][]*attachment{}, nsIndex: map[string]int32{}, memo: map[stackID]*stackResult{}}
	for _, a := range c.atts {
		if a.pol.p.Kind != k {
			continue
		}
		if a.nsName != "" && k.Class == policy.Inherited {
			i, ok := d.nsIndex[a.nsName]
			if !ok {
				i = int32(len(d.atNs))
				d.nsIndex[a.nsName] = i
				d.atNs = append(d.atNs, nil)
				d.nsNames = append(d.nsNames, a.nsName)
			}
			d.atNs[i] = append(d.atNs[i], a)
			continue
		}
		d.atNode[a.node] = append(d.atNode[a.node], a)
	}
	for _, l := range d.atNode {
		sortSameLevel(l)
	}
	for _, l := range d.atNs {
		sortSameLevel(l)
	}
	d.useNs = len(d.atNs) > 0 && k.InHierarchy(topology.KindNamespace)
	if k.Class == policy.Direct {
		d.direct()
		return
	}
	d.run()
	d.collect()
}

// sortSameLevel orders policies at one level: older first (established),
// then by namespace/name (project decision 2). A missing timestamp is the
// zero time.
func sortSameLevel(l []*attachment) {
	sort.SliceStable(l, func(i, j int) bool { return establishedBefore(l[i].pol.p, l[j].pol.p) })
}

func establishedBefore(a, b *policy.Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Ref.Namespace+"/"+a.Ref.Name < b.Ref.Namespace+"/"+b.Ref.Name
}

// run is the dynamic programme over the topology in topological order.
func (d *kindDP) run() {
	g := d.c.graph
	d.entries = make([][]entry, g.Len())
	type item struct {
		stack stackID
		nsSet int32
		top   bool
		preds []predRef
	}
	var items []item
	keyIdx := map[[2]int32]int{}
	for _, n := range g.Order() {
		node := g.Node(n)
		gk := node.Ref.GroupKind()
		if gk == topology.KindNamespace {
			// Namespaces are placed on paths, not reached by edges. A
			// Namespace that is itself an effective target has one
			// context: the Namespace alone, with its own policies.
			if d.useNs && d.kind.IsEffectiveTarget(gk) {
				if i, ok := d.nsIndex[node.Ref.Name]; ok {
					d.entries[n] = []entry{{stack: d.trie.extend(0, level(-(i + 1))), nsSet: d.sets.with(0, i), top: true}}
				}
			}
			continue
		}
		items = items[:0]
		if len(node.Parents) == 0 {
			items = append(items, item{top: true})
		}
		for _, p := range node.Parents {
			pInH := d.inHierarchy(p)
			for idx, e := range d.entries[p] {
				if pInH {
					items = append(items, item{stack: e.stack, nsSet: e.nsSet, preds: []predRef{{p, int32(idx)}}})
				} else {
					items = append(items, item{stack: e.stack, nsSet: e.nsSet, top: e.top, preds: e.preds})
				}
			}
		}
		inH := d.kind.InHierarchy(gk)
		atts := d.atNode[n]
		var nsIdx int32 = -1
		if inH && d.useNs && !node.Ref.IsSection() && node.Ref.Namespace != "" {
			if i, ok := d.nsIndex[node.Ref.Namespace]; ok {
				nsIdx = i
			}
		}
		clear(keyIdx)
		var out []entry
		for _, it := range items {
			s, ns := it.stack, it.nsSet
			if inH {
				if nsIdx >= 0 && !d.sets.has(ns, nsIdx) {
					s = d.trie.extend(s, level(-(nsIdx + 1)))
					ns = d.sets.with(ns, nsIdx)
				}
				if len(atts) > 0 {
					s = d.trie.extend(s, level(n))
				}
			}
			k := [2]int32{int32(s), ns}
			i, ok := keyIdx[k]
			if !ok {
				i = len(out)
				keyIdx[k] = i
				out = append(out, entry{stack: s, nsSet: ns})
			}
			e := &out[i]
			e.top = e.top || it.top
			e.preds = append(e.preds, it.preds...)
		}
		for i := range out {
			out[i].preds = dedupePreds(out[i].preds)
		}
		d.entries[n] = out
	}
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

// collect builds one Effective per effective target, one Context per
// distinct non-empty stack reaching it.
func (d *kindDP) collect() {
	g := d.c.graph
	// Fold every distinct stack reaching an effective target first, in
	// parallel; the loop below then only assembles contexts.
	seen := make([]bool, len(d.trie.parent))
	var stacks []stackID
	for _, gk := range d.kind.EffectiveTargetKinds {
		if !d.kind.InHierarchy(gk) {
			continue
		}
		for _, n := range g.ByKind(gk) {
			for _, e := range d.entries[n] {
				if e.stack != 0 && !seen[e.stack] {
					seen[e.stack] = true
					stacks = append(stacks, e.stack)
				}
			}
		}
	}
	d.prefold(stacks)
	for _, gk := range d.kind.EffectiveTargetKinds {
		if !d.kind.InHierarchy(gk) {
			continue
		}
		for _, n := range g.ByKind(gk) {
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
				continue
			}
			eff := &Effective{Kind: d.kind, Target: g.Node(n).Ref}
			for _, s := range order {
				sr := d.fold(s)
				idxs := byStack[s]
				node := n
				eff.Contexts = append(eff.Contexts, d.context(sr, n, func(yield func([]topology.Ref) bool) {
					for _, i := range idxs {
						if !d.enumerate(node, i, nil, yield) {
							return
						}
					}
				}))
			}
			d.c.result.Effective = append(d.c.result.Effective, eff)
		}
	}
}

// enumerate walks back-pointers from (n, idx) to roots, yielding paths.
func (d *kindDP) enumerate(n topology.NodeID, idx int32, suffix []topology.NodeID, yield func([]topology.Ref) bool) bool {
	e := &d.entries[n][idx]
	suffix = append(suffix, n)
	if e.top && !yield(d.pathRefs(suffix)) {
		return false
	}
	for _, p := range e.preds {
		if !d.enumerate(p.node, p.idx, suffix, yield) {
			return false
		}
	}
	return true
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
// target, and its context is the target alone.
func (d *kindDP) direct() {
	g := d.c.graph
	nodes := make([]topology.NodeID, 0, len(d.atNode))
	for n := range d.atNode {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return g.Node(nodes[i]).Ref.Less(g.Node(nodes[j]).Ref) })
	for _, n := range nodes {
		s := d.trie.extend(0, level(n))
		sr := d.fold(s)
		ref := g.Node(n).Ref
		eff := &Effective{Kind: d.kind, Target: ref}
		eff.Contexts = append(eff.Contexts, d.context(sr, n, func(yield func([]topology.Ref) bool) { yield([]topology.Ref{ref}) }))
		d.c.result.Effective = append(d.c.result.Effective, eff)
	}
}

// stackAtts returns the attachments of a stack, most general first.
func (d *kindDP) stackAtts(s stackID) []*attachment {
	var out []*attachment
	for _, l := range d.trie.levels(s) {
		if l < 0 {
			out = append(out, d.atNs[-l-1]...)
		} else {
			out = append(out, d.atNode[topology.NodeID(l)]...)
		}
	}
	return out
}
