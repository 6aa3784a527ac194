// Package effectivepolicy renders, from an engine Result, a controller's
// entry in the EffectivePolicy object of one affected object (GEP-713
// v1.0.0's PolicyBinding; the shape is documented in docs/output.md, "The
// same shapes in the cluster").
//
// An entry is compact and bounded by design, since every affected object of
// a cluster gets one and the API server keeps objects under etcd's 1.5 MiB:
// policies are named by namespace/name within their kind, levels and paths
// as one line of text, and each part is capped (Limits) with a count of
// what was left out. Whatever is cut, the entry says for every field of
// every context which policies set it (Kind.Fields), as long as the fields
// fit in Limits.Fields.
//
// The package is pure: no I/O, no clients.
package effectivepolicy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// Limits bound an entry. Zero fields take DefaultLimits' values.
type Limits struct {
	// Contexts is the most contexts listed per policy kind (those with the
	// most paths first); Kind.ContextCount says how many there are.
	Contexts int
	// Fields is the most field paths listed in Kind.Fields;
	// Kind.FieldCount says how many there are.
	Fields int
	// Policies is the most policies listed in Kind.Policies;
	// Kind.PolicyCount says how many there are.
	Policies int
	// Bytes bounds the JSON encoding of an entry: past it, contexts are
	// dropped, then fields, then policies, from the largest policy kind,
	// until it fits (the counts keep saying how many there are).
	Bytes int
}

// DefaultLimits keep an entry of one policy kind to a few kilobytes in
// common cases (docs/performance.md, issue 9) and every entry under 64 KiB.
var DefaultLimits = Limits{Contexts: 3, Fields: 256, Policies: 64, Bytes: 64 << 10}

func (l Limits) complete() Limits {
	d := DefaultLimits
	if l.Contexts <= 0 {
		l.Contexts = d.Contexts
	}
	if l.Fields <= 0 {
		l.Fields = d.Fields
	}
	if l.Policies <= 0 {
		l.Policies = d.Policies
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	return l
}

// Entry is one controller's entry of an EffectivePolicy.
type Entry struct {
	ControllerName string `json:"controllerName"`
	PolicyKinds    []Kind `json:"policyKinds"`
}

// Kind is what one policy kind does to the object.
type Kind struct {
	// PolicyKind is Kind.group of the policy kind.
	PolicyKind string `json:"policyKind"`
	// Policies are the policies contributing a field in some context
	// (AFFECTED's), sorted, at most Limits.Policies of PolicyCount.
	Policies    []topology.Ref `json:"policies"`
	PolicyCount int            `json:"policyCount"`
	// Fields maps every field path set in some context to the policies
	// (namespace/name) setting it, at most Limits.Fields of FieldCount,
	// in path order.
	Fields     map[string][]string `json:"fields"`
	FieldCount int                 `json:"fieldCount"`
	// Contexts are the distinct stacks of policies reaching the object
	// (or its sections), at most Limits.Contexts of ContextCount, those
	// carried by the most paths first.
	Contexts     []Context `json:"contexts"`
	ContextCount int       `json:"contextCount"`
}

// Context is the effective policy in one context.
type Context struct {
	// Path is one path carrying the context, as text: levels from the
	// root, most general first, joined by " > " (an object followed by
	// one of its sections is written once, as the section).
	Path string `json:"path"`
	// PathCount is how many paths carry it.
	PathCount int `json:"pathCount"`
	// Target is the effective target when it is a section of the object
	// (a route rule, a listener, a Service port).
	Target string `json:"target,omitempty"`
	// Spec is the effective spec proper.
	Spec map[string]any `json:"spec"`
	// SetBy maps every leaf field path of Spec to the policy that set it.
	SetBy map[string]string `json:"setBy"`
	// Policies is the stack, most general first.
	Policies []Policy `json:"policies"`
	// Errors are failures of custom merge functions here.
	Errors []string `json:"errors,omitempty"`
}

// Policy is one policy of a context's stack.
type Policy struct {
	// Policy is its namespace/name (name for a cluster-scoped policy).
	Policy string `json:"policy"`
	// Target is where it attaches (its level), as text.
	Target   string `json:"target"`
	Strategy string `json:"strategy"`
	Stanza   string `json:"stanza,omitempty"`
	// Outcome is full, partial or none.
	Outcome    string `json:"outcome"`
	Conflicted bool   `json:"conflicted,omitempty"`
	// Lost maps each policy that beat it to the field paths it lost to
	// that policy.
	Lost map[string][]string `json:"lost,omitempty"`
}

// JSON encodes the entry canonically: maps' keys sorted, so the same
// content gives the same bytes.
func (e *Entry) JSON() []byte {
	b, _ := e.Parts()
	return b
}

// Part is one piece of an entry's JSON that a change replaces whole: a
// field of a policy kind, or one field of one of its contexts. A
// controller keeps the parts of every entry it wrote, so a part is small:
// its place is three indexes (Path renders it) rather than a string.
type Part struct {
	// Kind is the index of the policy kind in policyKinds.
	Kind int16
	// Context is the index of the context in the kind's contexts, or -1
	// for a field of the kind itself.
	Context int16
	// Field indexes the field's name (Path gives it).
	Field uint8
	// Off and Len locate its value in the entry's JSON.
	Off, Len int32
	// Hash fingerprints the value.
	Hash uint64
}

// partFields are the names of the fields a Part can be: those of Kind
// and of Context, in the order of their JSON.
var partFields = [...]string{"policyKind", "policies", "policyCount", "fields", "fieldCount", "contextCount",
	"path", "pathCount", "target", "spec", "setBy", "errors"}

// partField is the index of a field's name in partFields.
func partField(name string) uint8 {
	for i, f := range partFields {
		if f == name {
			return uint8(i)
		}
	}
	panic("effectivepolicy: no part field " + name) // a programming error: the names are this file's
}

// Path is the JSON pointer (RFC 6901) of the part, from the entry.
func (p Part) Path() string {
	s := "/policyKinds/" + strconv.Itoa(int(p.Kind)) + "/"
	if p.Context >= 0 {
		s += "contexts/" + strconv.Itoa(int(p.Context)) + "/"
	}
	return s + partFields[p.Field]
}

// SamePlace says whether two parts are the same field of the same kind and
// context, whatever their values.
func (p Part) SamePlace(q Part) bool {
	return p.Kind == q.Kind && p.Context == q.Context && p.Field == q.Field
}

// Parts encodes the entry as JSON does (the same bytes as JSON) and says
// where each part's value is, so that the difference between two entries
// is found by comparing the parts' hashes, without decoding either: the
// parts whose hash changed are replaced, the others stay.
func (e *Entry) Parts() ([]byte, []Part) { return e.AppendParts(nil) }

// AppendParts is Parts writing the JSON after dst (whose bytes it may
// reuse): a caller rendering many entries one at a time keeps one buffer.
func (e *Entry) AppendParts(dst []byte) ([]byte, []Part) { return e.appendParts(dst, nil) }

// Renderer renders the entries of one engine result, encoding each
// distinct effective spec once: the contexts under the same policies
// share their spec (570 specs for 3,600 contexts in issue 9's first
// case), and encoding specs was most of a rendering's allocations. It
// keeps each spec it encoded (so that no other map can take its address)
// and must not outlive the result, whose specs are never modified.
type Renderer struct {
	specs map[uintptr]renderedSpec
	// names and shorts are the policy names and the short forms of
	// targets written so far: the same few hundred, thousands of times.
	names, shorts map[topology.Ref]string
}

// name is PolicyName(ref), made once per policy.
func (r *Renderer) name(ref topology.Ref) string {
	if r == nil {
		return PolicyName(ref)
	}
	return memoString(&r.names, ref, PolicyName)
}

// short is ref.Short(), made once per ref.
func (r *Renderer) short(ref topology.Ref) string {
	if r == nil {
		return ref.Short()
	}
	return memoString(&r.shorts, ref, topology.Ref.Short)
}

// memoString returns f(ref), remembered in *m.
func memoString(m *map[topology.Ref]string, ref topology.Ref, f func(topology.Ref) string) string {
	if s, ok := (*m)[ref]; ok {
		return s
	}
	if *m == nil {
		*m = map[topology.Ref]string{}
	}
	s := f(ref)
	(*m)[ref] = s
	return s
}

// renderedSpec is a spec and its JSON.
type renderedSpec struct {
	spec map[string]any
	json []byte
}

// AppendParts is Entry.AppendParts, encoding the specs through r.
func (r *Renderer) AppendParts(e *Entry, dst []byte) ([]byte, []Part) { return e.appendParts(dst, r) }

// spec appends the JSON of a spec to b, encoded once per map.
func (r *Renderer) spec(b *bytes.Buffer, enc *json.Encoder, m map[string]any) error {
	if r == nil || len(m) == 0 {
		return encodeValue(b, enc, m)
	}
	key := reflect.ValueOf(m).Pointer()
	if rs, ok := r.specs[key]; ok {
		b.Write(rs.json)
		return nil
	}
	off := b.Len()
	if err := encodeValue(b, enc, m); err != nil {
		return err
	}
	if r.specs == nil {
		r.specs = map[uintptr]renderedSpec{}
	}
	r.specs[key] = renderedSpec{m, bytes.Clone(b.Bytes()[off:])}
	return nil
}

// encodeValue appends v's JSON, as json.Marshal writes it, to b.
func encodeValue(b *bytes.Buffer, enc *json.Encoder, v any) error {
	off := b.Len()
	if err := enc.Encode(v); err != nil {
		b.Truncate(off)
		return err
	}
	b.Truncate(b.Len() - 1) // Encode ends with a newline
	return nil
}

func (e *Entry) appendParts(dst []byte, r *Renderer) ([]byte, []Part) {
	b := bytes.NewBuffer(dst)
	// One encoder writes every value in place (json.Marshal would
	// allocate each); it escapes HTML as Marshal does, and ends each
	// value with a newline, cut below.
	enc := json.NewEncoder(b)
	parts := make([]Part, 0, e.partCount())
	value := func(kind, context int, field string, v any) bool {
		off := b.Len()
		var err error
		if m, ok := v.(map[string]any); ok && field == "spec" {
			err = r.spec(b, enc, m)
		} else {
			err = encodeValue(b, enc, v)
		}
		if err != nil { // only unencodable spec values; the engine yields none
			return false
		}
		raw := b.Bytes()[off:]
		parts = append(parts, Part{Kind: int16(kind), Context: int16(context), Field: partField(field),
			Off: int32(off), Len: int32(len(raw)), Hash: fnv64(raw)})
		return true
	}
	name, _ := json.Marshal(e.ControllerName)
	b.WriteString(`{"controllerName":`)
	b.Write(name)
	b.WriteString(`,"policyKinds":[`)
	for i := range e.PolicyKinds {
		k := &e.PolicyKinds[i]
		if i > 0 {
			b.WriteByte(',')
		}
		ok := true
		b.WriteByte('{')
		for j, f := range []keyValue{{"policyKind", k.PolicyKind}, {"policies", k.Policies}, {"policyCount", k.PolicyCount}, {"fields", k.Fields}, {"fieldCount", k.FieldCount}} {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + f.key + `":`)
			ok = ok && value(i, -1, f.key, f.v)
		}
		b.WriteString(`,"contexts":[`)
		for j := range k.Contexts {
			c := &k.Contexts[j]
			if j > 0 {
				b.WriteByte(',')
			}
			// Each field of a context is a part: an edit of a policy
			// above changes the spec and who set it, not the rest.
			fields := []keyValue{{"path", c.Path}, {"pathCount", c.PathCount}}
			if c.Target != "" {
				fields = append(fields, keyValue{"target", c.Target})
			}
			fields = append(fields, keyValue{"spec", c.Spec}, keyValue{"setBy", c.SetBy}, keyValue{"policies", c.Policies})
			if len(c.Errors) > 0 {
				fields = append(fields, keyValue{"errors", c.Errors})
			}
			b.WriteByte('{')
			for n, f := range fields {
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"` + f.key + `":`)
				ok = ok && value(i, j, f.key, f.v)
			}
			b.WriteByte('}')
		}
		b.WriteString(`],"contextCount":`)
		ok = ok && value(i, -1, "contextCount", k.ContextCount)
		b.WriteByte('}')
		if !ok {
			out, _ := json.Marshal(map[string]any{"controllerName": e.ControllerName, "error": "an effective spec cannot be encoded"})
			return out, nil
		}
	}
	b.WriteString("]}")
	return b.Bytes(), parts
}

// partCount is the number of parts Parts makes, to size its slice once.
func (e *Entry) partCount() int {
	n := 0
	for i := range e.PolicyKinds {
		n += 6
		for j := range e.PolicyKinds[i].Contexts {
			n += 7
			if e.PolicyKinds[i].Contexts[j].Target == "" {
				n--
			}
			if len(e.PolicyKinds[i].Contexts[j].Errors) == 0 {
				n--
			}
		}
	}
	return n
}

// keyValue is one field of an object Parts writes, in the order of the
// struct's JSON (the keys of Kind and Context).
type keyValue struct {
	key string
	v   any
}

// fnv64 is FNV-1a: a fingerprint of a part, not a defence.
func fnv64(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// Hash is a short fingerprint of an entry's JSON, for the annotation that
// tells a controller whether the stored entry is the one it wants without
// reading it.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Build renders the entries of every affected object of the kinds owned
// says yes to (all when owned is nil), by the object's ref (a section's
// object). With only set, only the objects it says yes to are rendered.
func Build(res *engine.Result, controllerName string, owned func(topology.GroupKind) bool, only func(topology.Ref) bool, lim Limits) map[topology.Ref]*Entry {
	out := map[topology.Ref]*Entry{}
	Each(res, controllerName, owned, only, lim, func(obj topology.Ref, e *Entry) { out[obj] = e })
	return out
}

// Each is Build one object at a time: fn gets each entry as it is
// rendered and may keep it or not, so that a caller keeping only the
// encoded entries never holds every rendered one at once.
func Each(res *engine.Result, controllerName string, owned func(topology.GroupKind) bool, only func(topology.Ref) bool, lim Limits, fn func(obj topology.Ref, e *Entry)) {
	EachEncoded(res, controllerName, owned, only, lim, func(obj topology.Ref, e *Entry, _ []byte, _ []Part) { fn(obj, e) })
}

// EachEncoded is Each handing fn each entry's JSON and parts too (as
// Entry.Parts gives them), encoded once: they are valid only during the
// call (their buffer is reused), and the entry must not be changed.
func EachEncoded(res *engine.Result, controllerName string, owned func(topology.GroupKind) bool, only func(topology.Ref) bool, lim Limits, fn func(obj topology.Ref, e *Entry, json []byte, parts []Part)) {
	lim = lim.complete()
	type kt struct {
		gk     topology.GroupKind
		target topology.Ref
	}
	effective := map[kt]*engine.Effective{}
	for _, e := range res.Effective {
		if (owned == nil || owned(e.Kind.GroupKind)) && (only == nil || only(e.Target.Object())) {
			effective[kt{e.Kind.GroupKind, e.Target}] = e
		}
	}
	// Per object, its affected sections by kind: pointers only.
	type part struct {
		af *engine.Affected
		e  *engine.Effective
	}
	var order []topology.Ref
	byObj := map[topology.Ref][]part{}
	for _, af := range res.Affected { // sorted by kind, then target
		if (owned != nil && !owned(af.Kind.GroupKind)) || (only != nil && !only(af.Target.Object())) {
			continue
		}
		e := effective[kt{af.Kind.GroupKind, af.Target}]
		if e == nil {
			continue
		}
		obj := af.Target.Object()
		if byObj[obj] == nil {
			order = append(order, obj)
		}
		byObj[obj] = append(byObj[obj], part{af, e})
	}
	var r Renderer
	var buf []byte
	for _, obj := range order {
		parts := byObj[obj]
		en := &Entry{ControllerName: controllerName}
		for i := 0; i < len(parts); {
			kindName := parts[i].af.Kind.String()
			var policies []topology.Ref
			seen := map[topology.Ref]bool{}
			var ctxs []rawContext
			for ; i < len(parts) && parts[i].af.Kind.String() == kindName; i++ {
				for _, p := range parts[i].af.Policies {
					if !seen[p] {
						seen[p] = true
						policies = append(policies, p)
					}
				}
				for _, c := range parts[i].e.Contexts {
					ctxs = append(ctxs, rawContext{c, parts[i].af.Target, c.PathCount()})
				}
			}
			en.PolicyKinds = append(en.PolicyKinds, kind(&r, kindName, policies, ctxs, lim))
		}
		var encoded []Part
		buf, encoded = fit(en, lim.Bytes, &r, buf[:0])
		delete(byObj, obj)
		fn(obj, en, buf, encoded)
	}
}

// context renders one engine context of target, carried by paths paths.
func context(r *Renderer, c *engine.Context, target topology.Ref, paths int) Context {
	out := Context{Spec: c.Spec, SetBy: make(map[string]string, len(c.Fields)), Errors: c.Errors}
	if out.Spec == nil {
		out.Spec = map[string]any{}
	}
	if target.IsSection() {
		out.Target = r.short(target)
	}
	// One path is shown; the others were counted without being built.
	c.Paths(func(p []topology.Ref) bool {
		out.Path = PathText(p)
		return false
	})
	out.PathCount = paths
	for _, f := range c.Fields {
		out.SetBy[f.Path] = r.name(f.Policy)
	}
	out.Policies = make([]Policy, 0, len(c.Stack))
	for _, e := range c.Stack {
		p := Policy{Policy: r.name(e.Policy), Target: r.short(e.At), Strategy: string(e.Strategy), Stanza: e.Stanza, Outcome: e.Outcome, Conflicted: e.Conflicted}
		for _, l := range e.Lost {
			if p.Lost == nil {
				p.Lost = map[string][]string{}
			}
			if len(l.To) == 0 {
				p.Lost[""] = append(p.Lost[""], l.Path)
			}
			for _, t := range l.To {
				w := r.name(t.Policy)
				p.Lost[w] = append(p.Lost[w], l.Path)
			}
		}
		out.Policies = append(out.Policies, p)
	}
	return out
}

// rawContext is an engine context of a target, before it is rendered.
type rawContext struct {
	c      *engine.Context
	target topology.Ref
	paths  int
}

// kind assembles one policy kind's part, capped by lim: every context's
// fields go into Fields, and only the contexts kept are rendered.
func kind(r *Renderer, name string, policies []topology.Ref, ctxs []rawContext, lim Limits) Kind {
	sort.Slice(policies, func(i, j int) bool { return policies[i].Less(policies[j]) })
	k := Kind{PolicyKind: name, PolicyCount: len(policies), ContextCount: len(ctxs)}
	k.Policies = policies[:min(len(policies), lim.Policies)]
	setters := map[string][]string{}
	for _, rc := range ctxs {
		for _, f := range rc.c.Fields {
			p := r.name(f.Policy)
			if !contains(setters[f.Path], p) {
				setters[f.Path] = append(setters[f.Path], p)
			}
		}
	}
	paths := make([]string, 0, len(setters))
	for p := range setters {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	k.FieldCount = len(paths)
	k.Fields = make(map[string][]string, min(len(paths), lim.Fields))
	for _, p := range paths[:min(len(paths), lim.Fields)] {
		s := setters[p]
		sort.Strings(s)
		k.Fields[p] = s
	}
	// The contexts carried by the most paths first; among equals, the
	// engine's order (deterministic).
	sort.SliceStable(ctxs, func(i, j int) bool { return ctxs[i].paths > ctxs[j].paths })
	k.Contexts = make([]Context, 0, min(len(ctxs), lim.Contexts))
	for _, rc := range ctxs[:min(len(ctxs), lim.Contexts)] {
		k.Contexts = append(k.Contexts, context(r, rc.c, rc.target, rc.paths))
	}
	return k
}

// fit drops, from the largest policy kind, contexts, then fields, then
// policies until the entry's JSON is at most max bytes, or nothing is
// left to drop, and returns the JSON (in buf) and parts of what is left.
func fit(e *Entry, max int, r *Renderer, buf []byte) ([]byte, []Part) {
	for {
		b, parts := r.AppendParts(e, buf[:0])
		buf = b
		if len(b) <= max {
			return b, parts
		}
		largest, size := -1, 0
		for i := range e.PolicyKinds {
			k := &e.PolicyKinds[i]
			if len(k.Contexts) == 0 && len(k.Fields) == 0 && len(k.Policies) == 0 {
				continue
			}
			b, _ := json.Marshal(k)
			if len(b) > size {
				largest, size = i, len(b)
			}
		}
		if largest < 0 {
			return b, parts
		}
		k := &e.PolicyKinds[largest]
		switch {
		case len(k.Contexts) > 0:
			k.Contexts = k.Contexts[:len(k.Contexts)-1]
		case len(k.Fields) > 0:
			keep := len(k.Fields) / 2
			paths := make([]string, 0, len(k.Fields))
			for p := range k.Fields {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths[keep:] {
				delete(k.Fields, p)
			}
		default:
			k.Policies = k.Policies[:len(k.Policies)/2]
		}
	}
}

// PolicyName names a policy within its kind: namespace/name, or name for
// a cluster-scoped one.
func PolicyName(r topology.Ref) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// PathText writes a path as one line, most general level first: each level
// as Kind [namespace/]name[#section], joined by " > ", an object followed
// by one of its own sections written once, as the section.
func PathText(p []topology.Ref) string {
	var b strings.Builder
	for i, r := range p {
		if i+1 < len(p) && p[i+1].IsSection() && p[i+1].Object() == r {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(" > ")
		}
		b.WriteString(r.Short())
	}
	return b.String()
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// String renders an entry's size and counts, for logs.
func (e *Entry) String() string {
	var parts []string
	for _, k := range e.PolicyKinds {
		parts = append(parts, fmt.Sprintf("%s: %d/%d contexts, %d/%d fields, %d/%d policies",
			k.PolicyKind, len(k.Contexts), k.ContextCount, len(k.Fields), k.FieldCount, len(k.Policies), k.PolicyCount))
	}
	return strings.Join(parts, "; ")
}
