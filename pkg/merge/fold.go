package merge

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Layer is one policy in a stack: its spec proper as a tree, and its merge
// strategy.
type Layer struct {
	Spec     *Tree
	Strategy Strategy
	// Custom is the merge function when Strategy is Custom.
	Custom CustomFunc
	// Src identifies the layer; Spec's nodes carry it.
	Src Src
	// MergeUp, when set (PatchDefaults), makes this layer merge with the
	// nearest layer above it instead of being replaced by it or replacing
	// it: that layer combines with the result this layer heads by MergeUp
	// rather than by its own strategy (Envoy Gateway's mergeType, chosen by
	// the more specific policy). The merged result is then headed by the
	// layer above, whose own MergeUp decides the next step.
	MergeUp Strategy
	// KeepMergeUp makes this layer pass a pending MergeUp from below on to
	// the layer above it: it combines by its own strategy instead (a
	// rule's mergeType policy replaces its route's policy and merges with
	// the Gateway's, as Envoy Gateway does).
	KeepMergeUp bool
}

// Loss says that Loser's field at Path is not in the result because of
// Winners (the sources whose values replaced or deleted it, or which won an
// atomic merge).
type Loss struct {
	Loser   Src
	Path    string
	Winners []Src
}

// Result is an effective policy: the merged tree and what was lost on the way.
type Result struct {
	Tree *Tree
	// Losses are sorted by Loser, then Path.
	Losses []Loss
	// Errors are failures of Custom merge functions; the failing step keeps
	// the challenger (the more specific result) unchanged.
	Errors []error

	winners []Src   // buffer for the losses' winners while folding
	schema  *Schema // Options.Schema while folding
	empties bool    // Options.EmptyReplaced while folding
}

// SpecPath is the path of a Loss that names a layer's spec proper as a
// whole rather than one of its fields (see Options.EmptyReplaced).
const SpecPath = "."

// Options are the optional inputs of FoldWith.
type Options struct {
	// Schema, when not nil, makes the patch strategies merge list-maps and
	// sets item by item, replace atomic maps and named-rule entries whole
	// (see Schema). The atomic strategies, none and custom merge as without
	// it; the layers' lists that it keys are split into items in the result
	// and in losses all the same, so their provenance is per item.
	Schema *Schema
	// EmptyReplaced makes an atomic-defaults step that replaces an
	// established layer setting no field record that layer as losing its
	// whole spec (a Loss at SpecPath) to the challenger's sources: it is
	// replaced all the same, as Envoy Gateway reports a policy overridden
	// by a more specific one whatever either sets. Without it, a layer
	// that sets nothing loses nothing.
	EmptyReplaced bool
}

// Fold computes the effective policy of a stack ordered from the most
// general (established) to the most specific. Per project decision 3, each
// policy's own strategy combines it, as established, with the combined result
// of everything below it (the challenger); an override is therefore final.
// It is FoldWith without options: patches are RFC 7386 throughout.
func Fold(stack []Layer) Result { return FoldWith(stack, Options{}) }

// FoldWith is Fold with options.
func FoldWith(stack []Layer, opts Options) Result {
	r := Result{schema: opts.Schema, empties: opts.EmptyReplaced}
	if len(stack) == 0 {
		return r
	}
	acc := r.spec(stack[len(stack)-1])
	// up is the MergeUp of the layer heading acc: the last one that won
	// whole or merged (a layer beaten by an atomic default leaves it).
	up := stack[len(stack)-1].MergeUp
	for i := len(stack) - 2; i >= 0; i-- {
		l := stack[i]
		switch {
		case up != "" && l.KeepMergeUp:
		case up != "":
			l.Strategy = up
			up = l.MergeUp
		case l.Strategy.IsOverride() || l.Strategy == None:
			up = l.MergeUp
		}
		acc = r.combine(l, acc)
	}
	r.Tree = acc
	r.Losses = sortLosses(r.Losses)
	r.winners = nil
	r.schema = nil
	r.empties = false
	return r
}

// sortLosses sorts losses stably by loser, then path. Losses are recorded
// while walking maps, so their order used to vary from run to run, and so
// would any status built from them. It sorts indices rather than the
// losses themselves, which are large and hold pointers.
func sortLosses(ls []Loss) []Loss {
	if len(ls) < 2 {
		return ls
	}
	idx := make([]int32, len(ls))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &ls[i], &ls[j]
		if c := cmp.Compare(a.Loser, b.Loser); c != 0 {
			return c
		}
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return cmp.Compare(i, j) // stable
	})
	out := make([]Loss, len(ls))
	for i, j := range idx {
		out[i] = ls[j]
	}
	return out
}

// spec returns the layer's spec; a nil Spec is an empty object (it used to
// make an atomic-defaults step panic). Under a schema, the spec's keyed
// lists are split into items (a no-op for specs built by FromValueWith).
func (r *Result) spec(l Layer) *Tree {
	if l.Spec == nil {
		return &Tree{obj: map[string]*Tree{}, src: l.Src} // the root: path ""
	}
	if r.schema != nil {
		return shape(l.Spec, r.schema)
	}
	return l.Spec
}

func (r *Result) combine(est Layer, chal *Tree) *Tree {
	est.Spec = r.spec(est)
	switch est.Strategy {
	case AtomicDefaults:
		if r.empties && est.Spec.obj != nil && !est.Spec.live() {
			r.lose(est.Src, SpecPath, chal.sources())
			return chal
		}
		r.loseAll(est.Spec, chal.sources())
		return chal
	case PatchDefaults:
		return r.patchS("", est.Spec, chal, r.schema)
	case PatchOverrides:
		return r.patchS("", chal, est.Spec, r.schema)
	case Custom:
		return r.custom(est, chal)
	default: // None and AtomicOverrides: the established spec wins whole.
		r.loseAll(chal, []Src{est.Src})
		return est.Spec
	}
}

// loseAll records every leaf of t as lost to winners.
func (r *Result) loseAll(t *Tree, winners []Src) {
	t.walk("", func(path string, n *Tree) { r.lose(n.src, path, winners) })
}

// lose records a loss. The loser is never one of its own winners: the same
// source attached at two levels does not beat itself, so it is left out of
// the winners, and nothing is recorded when no other winner remains. (It
// used to be dropped only when it was the sole winner, so an atomic merge
// whose challenger mixed it with others listed it as beating itself.) Each
// loss gets its own winners, carved from one buffer (capacity capped, so an
// append to one loss's winners cannot write into another's).
func (r *Result) lose(loser Src, path string, winners []Src) {
	start := len(r.winners)
	for _, s := range winners {
		if s != loser {
			r.winners = append(r.winners, s)
		}
	}
	end := len(r.winners)
	if end == start {
		return
	}
	r.Losses = append(r.Losses, Loss{Loser: loser, Path: path, Winners: r.winners[start:end:end]})
}

// patchAt applies p onto t as an RFC 7386 merge patch, keeping nulls as
// deletion markers, and records what t loses.
func (r *Result) patchAt(path string, t, p *Tree) *Tree {
	switch {
	case p == nil:
		return t
	case t == nil:
		return p
	case p.obj == nil: // scalar, list or null replaces whatever was there
		t.walkAt(path, func(lp string, n *Tree) { r.lose(n.src, lp, []Src{p.src}) })
		return p
	case t.obj == nil: // an object replaces a non-object
		switch {
		case t.keyed() != nil: // from FromValueWith: it loses item by item
			ws := p.sources()
			t.walkAt(path, func(lp string, n *Tree) { r.lose(n.src, lp, ws) })
		case !t.null:
			r.lose(t.src, path, p.sources())
		}
		return p
	case len(p.obj) == 0:
		return t
	}
	out := &Tree{obj: make(map[string]*Tree, len(t.obj)+len(p.obj)), src: t.src, path: t.path}
	for k, c := range t.obj {
		out.obj[k] = c
	}
	for k, pc := range p.obj {
		out.obj[k] = r.patchAt(pc.path, t.obj[k], pc)
	}
	if !out.live() {
		// The merge left an empty object, a leaf of its own. Only the patch
		// can have emptied it (every member of the patch is null), so the
		// patch's source set it. It used to keep the target's source, whose
		// spec may have held {a: 1} there: the leaf was attributed to a
		// policy that never set it, and a later replacement recorded a loss
		// for a field that policy does not have.
		out.src = p.src
	}
	return out
}

// walkAt is walk with a starting path.
func (t *Tree) walkAt(path string, fn func(string, *Tree)) {
	if t == nil {
		return
	}
	if t.obj == nil {
		if _, ok := t.val.(*klist); ok {
			t.walk(path, fn) // a keyed list's items
		} else if !t.null {
			fn(path, t)
		}
		return
	}
	t.walk(path, fn)
	if len(t.obj) == 0 && path == "" {
		fn(path, t)
	}
}

// custom runs an implementer's merge function and attributes each leaf of
// its result to the challenger's leaf that held the same value at the same
// path, or else to the established policy (whose strategy decided it).
//
// Losses: a leaf of either operand that is not in the result as it was is
// lost to whoever holds its path in the result; a leaf the result does not
// have at all is lost to the established policy when it is the challenger's
// (the function dropped it), and to the challenger's sources when it is the
// established policy's own (its function preferred the challenger, as
// atomic-defaults does). An empty object whose path is an object in the
// result was merged, not lost. When the function fails (error, panic, or no
// function) the step keeps the challenger, records an error, and records the
// established policy's leaves as lost to the challenger, exactly as an
// atomic-defaults step would: before, they vanished without a loss, so a
// policy whose function failed looked fully in effect.
func (r *Result) custom(est Layer, chal *Tree) *Tree {
	v, err := callCustom(est.Custom, est.Spec.Object(), chal.Object())
	if err != nil {
		r.Errors = append(r.Errors, err)
		r.loseAll(est.Spec, chal.sources())
		return chal
	}
	// Split the result's keyed lists as the operands' are, so its items
	// are credited one by one.
	res := shape(FromValue(v, est.Src), r.schema)
	type leaf struct {
		v   any
		src Src
	}
	index := func(t *Tree) map[string]leaf {
		m := map[string]leaf{}
		t.walk("", func(p string, n *Tree) { m[p] = leaf{n.Value(), n.src} })
		return m
	}
	chalLeaves, estLeaves := index(chal), index(est.Spec)
	// res was just built and is not shared: its leaves (the same ones walk
	// and Leaves see, empty objects included) can be re-sourced in place.
	resSrc := map[string]Src{}
	res.walk("", func(path string, n *Tree) {
		s := est.Src
		if l, ok := chalLeaves[path]; ok && reflect.DeepEqual(l.v, n.Value()) {
			s = l.src
		}
		n.src = s
		resSrc[path] = s
	})
	resObj := map[string]bool{}
	res.walkObjects("", func(path string) { resObj[path] = true })
	var chalSrcs []Src
	for _, side := range []struct {
		m     map[string]leaf
		isEst bool
	}{{chalLeaves, false}, {estLeaves, true}} {
		for p, l := range side.m {
			w, ok := resSrc[p]
			switch {
			case ok && w == l.src:
				continue
			case ok:
				r.lose(l.src, p, []Src{w})
			case isEmptyObject(l.v) && resObj[p]:
				continue // merged into an object of the result
			case side.isEst:
				if chalSrcs == nil {
					chalSrcs = chal.sources()
				}
				r.lose(l.src, p, chalSrcs)
			default:
				r.lose(l.src, p, []Src{est.Src})
			}
		}
	}
	return res
}

// callCustom runs f, turning a missing function, an error and a panic into
// an error. Only the call is guarded, so a panic cannot leave a step half
// recorded.
func callCustom(f CustomFunc, est, chal map[string]any) (v map[string]any, err error) {
	if f == nil {
		return nil, fmt.Errorf("custom merge strategy has no merge function")
	}
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("custom merge function panicked: %v", p)
		}
	}()
	v, err = f(est, chal)
	if err != nil {
		return nil, fmt.Errorf("custom merge function failed: %w", err)
	}
	return v, nil
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// walkObjects calls fn with the path of every non-null object below t (t
// itself excluded).
func (t *Tree) walkObjects(path string, fn func(string)) {
	for k, c := range t.obj {
		if c.obj != nil {
			p := JoinPath(path, k)
			fn(p)
			c.walkObjects(p, fn)
		} else if kl := c.keyed(); kl != nil {
			for _, it := range kl.items {
				if it.obj != nil {
					fn(it.path)
					it.walkObjects(it.path, fn)
				}
			}
		}
	}
}
