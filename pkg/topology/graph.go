package topology

import (
	"fmt"
	"slices"
	"sort"
)

// NodeID indexes a node in a Graph. IDs are dense, from 0.
type NodeID int32

// Node is one target: an object, a section of one, or a virtual object.
type Node struct {
	Ref Ref
	// Labels are the object's labels (for label-selector targetRefs and
	// namespace selectors). Sections share their object's labels.
	Labels map[string]string
	// Generation is the object's metadata.generation (0 when unknown); it
	// becomes the observedGeneration of Affected conditions.
	Generation int64
	// Parents and Children are the edges of the hierarchy, less specific
	// to more specific. A section's first parent is its object.
	Parents  []NodeID
	Children []NodeID
	// Unadmitted are, for a route, the listeners its parentRefs name
	// (the one a sectionName names, else every listener of the Gateway)
	// that do not admit it by Gateway API's rules (port, allowedRoutes,
	// hostnames), and UnadmittedChildren, for a listener, those routes:
	// edges outside the hierarchy that some implementations follow all
	// the same (Kuadrant's policy-machinery links a route below every
	// listener its parentRefs name). Only kinds that ask for them read
	// them (policy.Kind.RouteParentRefs); they are set only when the
	// builder is asked to (gatewayapi.Options.UnadmittedParents).
	Unadmitted         []NodeID
	UnadmittedChildren []NodeID
}

// Graph is an immutable hierarchy DAG with lookup indexes. Namespaces are
// nodes (so they can be targeted and selected) but carry no edges: the engine
// places a Namespace on each path directly above the first object of that
// namespace (project decision 1).
type Graph struct {
	nodes  []Node
	index  map[Ref]NodeID
	byKind map[GroupKind][]NodeID
	order  []NodeID
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Node returns the node with the given id.
func (g *Graph) Node(id NodeID) *Node { return &g.nodes[id] }

// Lookup finds the node for ref.
func (g *Graph) Lookup(ref Ref) (NodeID, bool) {
	id, ok := g.index[ref]
	return id, ok
}

// ByKind returns the object nodes (not sections) of a kind, sorted by ref.
func (g *Graph) ByKind(gk GroupKind) []NodeID { return g.byKind[gk] }

// Order returns every node in a topological order: parents before children.
func (g *Graph) Order() []NodeID { return g.order }

// Sections returns the section nodes of an object node.
func (g *Graph) Sections(obj NodeID) []NodeID {
	var out []NodeID
	for _, c := range g.nodes[obj].Children {
		if g.nodes[c].Ref.IsSection() && g.nodes[c].Ref.Object() == g.nodes[obj].Ref {
			out = append(out, c)
		}
	}
	return out
}

// Walk visits the nodes reachable from start by next (Parents: upwards,
// Children: downwards), start included, each once, depth first. visit
// returns whether to go on past the node.
func (g *Graph) Walk(start []NodeID, next func(*Node) []NodeID, visit func(NodeID, *Node) bool) {
	seen := make(map[NodeID]bool, len(start))
	stack := append([]NodeID(nil), start...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		node := &g.nodes[n]
		if visit(n, node) {
			stack = append(stack, next(node)...)
		}
	}
}

// Parents is Walk's direction upwards: a node's parents.
func Parents(n *Node) []NodeID { return n.Parents }

// Children is Walk's direction downwards: a node's children.
func Children(n *Node) []NodeID { return n.Children }

// AllChildren is Walk's direction downwards along unadmitted edges too: a
// node's children, then its unadmitted children (Node.Unadmitted).
func AllChildren(n *Node) []NodeID {
	if len(n.UnadmittedChildren) == 0 {
		return n.Children
	}
	return append(append(make([]NodeID, 0, len(n.Children)+len(n.UnadmittedChildren)), n.Children...), n.UnadmittedChildren...)
}

// Builder accumulates nodes and edges; Build freezes them into a Graph.
// Building is linear in nodes plus edges.
type Builder struct {
	g Graph
	// parentSets index the parents of nodes with many of them (a route
	// under 64 listeners), so duplicate edges are found without a scan;
	// short parent lists are scanned, which is cheaper than any map.
	parentSets map[NodeID]map[NodeID]struct{}
}

// scanLimit is the parent count up to which duplicates are found by a scan.
const scanLimit = 16

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return NewBuilderSize(0) }

// NewBuilderSize returns an empty builder with room for about n nodes, so a
// large topology is built without regrowing its index again and again.
func NewBuilderSize(n int) *Builder {
	return &Builder{
		g:          Graph{nodes: make([]Node, 0, n), index: make(map[Ref]NodeID, n), byKind: map[GroupKind][]NodeID{}},
		parentSets: map[NodeID]map[NodeID]struct{}{},
	}
}

// AddNode adds (or finds) the node for ref. Labels and generation are set
// on first addition or when given non-empty later (an object seen first as
// a reference and later for real).
func (b *Builder) AddNode(ref Ref, labels map[string]string, generation int64) NodeID {
	if id, ok := b.g.index[ref]; ok {
		n := &b.g.nodes[id]
		if labels != nil {
			n.Labels = labels
		}
		if generation != 0 {
			n.Generation = generation
		}
		return id
	}
	id := NodeID(len(b.g.nodes))
	b.g.nodes = append(b.g.nodes, Node{Ref: ref, Labels: labels, Generation: generation})
	b.g.index[ref] = id
	if !ref.IsSection() {
		b.g.byKind[ref.GroupKind()] = append(b.g.byKind[ref.GroupKind()], id)
	}
	return id
}

// AddSection adds the section node of an object node, linked below it.
func (b *Builder) AddSection(obj NodeID, section string) NodeID {
	o := b.g.nodes[obj]
	id := b.AddNode(o.Ref.WithSection(section), o.Labels, o.Generation)
	b.AddEdge(obj, id)
	return id
}

// Lookup finds a node added so far.
func (b *Builder) Lookup(ref Ref) (NodeID, bool) {
	id, ok := b.g.index[ref]
	return id, ok
}

// Node returns a node added so far.
func (b *Builder) Node(id NodeID) *Node { return &b.g.nodes[id] }

// AddEdge links parent above child. Duplicate edges and self loops are ignored.
func (b *Builder) AddEdge(parent, child NodeID) {
	if parent == child {
		return
	}
	c := &b.g.nodes[child]
	if set, ok := b.parentSets[child]; ok {
		if _, dup := set[parent]; dup {
			return
		}
		set[parent] = struct{}{}
	} else {
		for _, p := range c.Parents {
			if p == parent {
				return
			}
		}
		if len(c.Parents) == scanLimit {
			set := make(map[NodeID]struct{}, 2*scanLimit)
			for _, p := range c.Parents {
				set[p] = struct{}{}
			}
			set[parent] = struct{}{}
			b.parentSets[child] = set
		}
	}
	b.g.nodes[parent].Children = append(b.g.nodes[parent].Children, child)
	c.Parents = append(c.Parents, parent)
}

// AddUnadmittedEdge links route child below listener parent outside the
// hierarchy (Node.Unadmitted): parent names a listener the route's
// parentRefs name and that does not admit it. Duplicates are ignored, and
// so is an edge of the hierarchy between the two, once built.
func (b *Builder) AddUnadmittedEdge(parent, child NodeID) {
	if parent == child || slices.Contains(b.g.nodes[child].Unadmitted, parent) {
		return
	}
	b.g.nodes[parent].UnadmittedChildren = append(b.g.nodes[parent].UnadmittedChildren, child)
	b.g.nodes[child].Unadmitted = append(b.g.nodes[child].Unadmitted, parent)
}

// CycleError reports an edge dropped because it closed a cycle: Parent was
// to be linked above Child.
type CycleError struct{ Parent, Child Ref }

// Error says which edge was dropped.
func (e CycleError) Error() string {
	return fmt.Sprintf("%s -> %s closes a cycle in the hierarchy; that edge is ignored", e.Parent, e.Child)
}

// Build sorts the graph topologically and returns it. Edges that close a
// cycle (possible with mesh routes whose backends are their own parents) are
// removed and reported, so the result is always a DAG. The builder must not
// be used afterwards.
func (b *Builder) Build() (*Graph, []CycleError) {
	g := &b.g
	b.parentSets = nil
	for gk := range g.byKind {
		ids := g.byKind[gk]
		sort.Slice(ids, func(i, j int) bool { return g.nodes[ids[i]].Ref.Less(g.nodes[ids[j]].Ref) })
	}
	var cycles []CycleError
	// Iterative DFS colouring finds back edges; dropping them leaves a DAG.
	const (
		white = 0
		grey  = 1
		black = 2
	)
	// An unadmitted edge alongside an edge of the hierarchy between the
	// same nodes is no edge of its own.
	for id := range g.nodes {
		n := &g.nodes[id]
		if len(n.Unadmitted) > 0 {
			n.Unadmitted = slices.DeleteFunc(n.Unadmitted, func(p NodeID) bool {
				if !slices.Contains(n.Parents, p) {
					return false
				}
				g.nodes[p].UnadmittedChildren = remove(g.nodes[p].UnadmittedChildren, NodeID(id))
				return true
			})
		}
	}
	color := make([]uint8, len(g.nodes))
	type frame struct {
		id NodeID
		i  int
	}
	var back, backUnadmitted [][2]NodeID
	post := make([]NodeID, 0, len(g.nodes))
	for root := range g.nodes {
		if color[root] != white {
			continue
		}
		stack := []frame{{NodeID(root), 0}}
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			// The children, then the unadmitted children, so that the
			// order puts a listener before the routes below it either
			// way. An unadmitted edge runs from a listener to a route,
			// so it closes no cycle of its own; one that would is
			// dropped.
			ch, un := g.nodes[top.id].Children, g.nodes[top.id].UnadmittedChildren
			if top.i < len(ch)+len(un) {
				c, unadmitted := NodeID(0), top.i >= len(ch)
				if unadmitted {
					c = un[top.i-len(ch)]
				} else {
					c = ch[top.i]
				}
				top.i++
				switch {
				case color[c] == white:
					color[c] = grey
					stack = append(stack, frame{c, 0})
				case color[c] == grey && unadmitted:
					backUnadmitted = append(backUnadmitted, [2]NodeID{top.id, c})
				case color[c] == grey:
					back = append(back, [2]NodeID{top.id, c})
				}
				continue
			}
			color[top.id] = black
			post = append(post, top.id)
			stack = stack[:len(stack)-1]
		}
	}
	for _, e := range back {
		g.nodes[e[0]].Children = remove(g.nodes[e[0]].Children, e[1])
		g.nodes[e[1]].Parents = remove(g.nodes[e[1]].Parents, e[0])
		cycles = append(cycles, CycleError{Parent: g.nodes[e[0]].Ref, Child: g.nodes[e[1]].Ref})
	}
	for _, e := range backUnadmitted {
		g.nodes[e[0]].UnadmittedChildren = remove(g.nodes[e[0]].UnadmittedChildren, e[1])
		g.nodes[e[1]].Unadmitted = remove(g.nodes[e[1]].Unadmitted, e[0])
	}
	g.order = make([]NodeID, len(post))
	for i, id := range post {
		g.order[len(post)-1-i] = id
	}
	return g, cycles
}

func remove(s []NodeID, x NodeID) []NodeID {
	for i, v := range s {
		if v == x {
			return append(s[:i:i], s[i+1:]...)
		}
	}
	return s
}
