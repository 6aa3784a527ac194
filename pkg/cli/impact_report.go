package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// impactAPIVersion and impactKind identify the -o json|yaml document of
// `attache impact`; like the effective report, fields may be added but are
// never renamed or removed.
const (
	impactAPIVersion = "attache.dev/v1alpha1"
	impactKind       = "ImpactReport"
)

// impactReport is the -o json|yaml document of `attache impact`: the
// change assessed, what it would change, totals and a verdict.
type impactReport struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Change     impactChange `json:"change"`
	// Effective lists the effective policies that would change, per
	// policy kind and effective target, sorted.
	Effective []impactTarget `json:"effective"`
	// Policies lists the policies whose status would change (including
	// those deleted or created), sorted by kind then ref.
	Policies []impactPolicy `json:"policies"`
	// Totals count the changed targets per namespace and target kind.
	Totals  []impactTotal `json:"totals"`
	Verdict string        `json:"verdict"`
	// Partial lists what could not be read from the cluster (forbidden
	// lists, ...): when set, changes to what was not read are not shown.
	Partial []string `json:"partial,omitempty"`

	// partialLine is the line the text output starts with when Partial is
	// set.
	partialLine string
}

// impactChange is the change assessed.
type impactChange struct {
	// Action is "delete" or "apply".
	Action string `json:"action"`
	// Policy is the policy deleted.
	Policy *topology.Ref `json:"policy,omitempty"`
	// File and Objects are what is applied.
	File    string         `json:"file,omitempty"`
	Objects []impactObject `json:"objects,omitempty"`
}

// impactObject is one applied object: "create" or "replace".
type impactObject struct {
	Ref    topology.Ref `json:"ref"`
	Action string       `json:"action"`
	Source string       `json:"source,omitempty"`
}

// impactTarget is the change of the effective policy of one kind for one
// target: its paths, grouped by identical change.
type impactTarget struct {
	PolicyKind string       `json:"policyKind"`
	Target     topology.Ref `json:"target"`
	// Change is "changed", "removed" (no policy of the kind would reach the
	// target any more) or "added" (the first one would).
	Change string        `json:"change"`
	Groups []impactGroup `json:"groups"`
}

// impactGroup is a set of paths whose effective policy changes alike.
type impactGroup struct {
	Paths [][]topology.Ref `json:"paths"`
	// PathChange is "removed" when the paths would no longer exist, "added"
	// when they are new, omitted otherwise.
	PathChange string        `json:"pathChange,omitempty"`
	Fields     []impactField `json:"fields"`
}

// impactField is a leaf field of an effective spec that would change;
// Before or After is omitted when the field is not set.
type impactField struct {
	Path   string       `json:"path"`
	Before *impactValue `json:"before,omitempty"`
	After  *impactValue `json:"after,omitempty"`
}

// impactValue is a field's value and the policy that set it, with where that
// policy attaches.
type impactValue struct {
	Value  any          `json:"value"`
	Policy topology.Ref `json:"policy"`
	Target topology.Ref `json:"target"`
}

// impactPolicy is a policy whose status would change: its summary
// conditions before and after ("deleted": no after; "created": no before).
type impactPolicy struct {
	Ref        topology.Ref       `json:"ref"`
	PolicyKind string             `json:"policyKind"`
	Change     string             `json:"change"`
	Before     []engine.Condition `json:"before,omitempty"`
	After      []engine.Condition `json:"after,omitempty"`
}

// impactTotal counts the targets of one kind in one namespace ("" for
// cluster-scoped ones) whose effective policy would change.
type impactTotal struct {
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind"`
	Count     int    `json:"count"`
}

// impactKey is a policy kind (Kind.group) and an effective target.
type impactKey struct {
	kind   string
	target topology.Ref
}

// impactPath is one path of an effective policy and its leaf fields.
type impactPath struct {
	path   []topology.Ref
	fields map[string]*impactValue
}

// impactIndex lists every path of every effective policy of r.
func impactIndex(r *engine.Result) map[impactKey]map[string]*impactPath {
	out := map[impactKey]map[string]*impactPath{}
	for _, e := range r.Effective {
		k := impactKey{e.Kind.String(), e.Target}
		paths := out[k]
		if paths == nil {
			paths = map[string]*impactPath{}
			out[k] = paths
		}
		for _, c := range e.Contexts {
			fields := make(map[string]*impactValue, len(c.Fields))
			for _, f := range c.Fields {
				fields[f.Path] = &impactValue{Value: f.Value, Policy: f.Policy, Target: f.At}
			}
			c.Paths(func(p []topology.Ref) bool {
				paths[impactPathKey(p)] = &impactPath{path: slices.Clone(p), fields: fields}
				return true
			})
		}
	}
	return out
}

func impactPathKey(p []topology.Ref) string {
	s := make([]string, len(p))
	for i, r := range p {
		s[i] = r.String()
	}
	return strings.Join(s, " > ")
}

// impactJSON renders v as compact JSON, without HTML escaping; it is how
// values are compared and printed.
func impactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// impactFieldChanges compares the fields of one path before and after.
func impactFieldChanges(before, after *impactPath) []impactField {
	var b, a map[string]*impactValue
	if before != nil {
		b = before.fields
	}
	if after != nil {
		a = after.fields
	}
	var paths []string
	for p := range b {
		paths = append(paths, p)
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []impactField
	for _, p := range paths {
		bv, av := b[p], a[p]
		if bv != nil && av != nil && impactJSON(bv.Value) == impactJSON(av.Value) {
			continue
		}
		out = append(out, impactField{Path: p, Before: bv, After: av})
	}
	return out
}

// impactPathExists reports whether p is a path of g: every target exists
// and each one is below the previous one (Namespaces aside: they are placed
// on paths, not linked by edges; levels of kinds outside a policy kind's
// hierarchy are contracted out of its paths, hence "below", not "child").
func impactPathExists(g *topology.Graph, p []topology.Ref) bool {
	prev := topology.NodeID(-1)
	for _, r := range p {
		id, ok := g.Lookup(r)
		if !ok {
			return false
		}
		if r.GroupKind() == topology.KindNamespace {
			continue
		}
		if prev >= 0 && !impactBelow(g, prev, id) {
			return false
		}
		prev = id
	}
	return true
}

// impactBelow reports whether to is a descendant of from.
func impactBelow(g *topology.Graph, from, to topology.NodeID) bool {
	if slices.Contains(g.Node(from).Children, to) {
		return true
	}
	seen := map[topology.NodeID]bool{from: true}
	stack := []topology.NodeID{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range g.Node(n).Children {
			if c == to {
				return true
			}
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return false
}

func impactComparePaths(a, b []topology.Ref) int {
	for k := 0; k < len(a) && k < len(b); k++ {
		if c := a[k].Compare(b[k]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// buildImpact compares two engine results.
func buildImpact(before, after *engine.Result, change impactChange) *impactReport {
	rep := &impactReport{APIVersion: impactAPIVersion, Kind: impactKind, Change: change,
		Effective: []impactTarget{}, Policies: []impactPolicy{}, Totals: []impactTotal{}}
	bi, ai := impactIndex(before), impactIndex(after)
	var keys []impactKey
	for k := range bi {
		keys = append(keys, k)
	}
	for k := range ai {
		if _, ok := bi[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y impactKey) int {
		if c := strings.Compare(x.kind, y.kind); c != 0 {
			return c
		}
		return x.target.Compare(y.target)
	})
	for _, k := range keys {
		bp, ap := bi[k], ai[k]
		var pathKeys []string
		for p := range bp {
			pathKeys = append(pathKeys, p)
		}
		for p := range ap {
			if _, ok := bp[p]; !ok {
				pathKeys = append(pathKeys, p)
			}
		}
		groups := map[string]*impactGroup{}
		for _, pk := range pathKeys {
			b, a := bp[pk], ap[pk]
			fields := impactFieldChanges(b, a)
			if len(fields) == 0 {
				continue
			}
			g := impactGroup{Fields: fields}
			var path []topology.Ref
			switch {
			case a == nil:
				path = b.path
				if !impactPathExists(after.Graph, path) {
					g.PathChange = "removed"
				}
			case b == nil:
				path = a.path
				if !impactPathExists(before.Graph, path) {
					g.PathChange = "added"
				}
			default:
				path = b.path
			}
			sig := impactJSON(g)
			if prev, ok := groups[sig]; ok {
				prev.Paths = append(prev.Paths, path)
				continue
			}
			g.Paths = [][]topology.Ref{path}
			groups[sig] = &g
		}
		if len(groups) == 0 {
			continue
		}
		t := impactTarget{PolicyKind: k.kind, Target: k.target, Change: "changed"}
		switch {
		case len(ap) == 0:
			t.Change = "removed"
		case len(bp) == 0:
			t.Change = "added"
		}
		for _, g := range groups {
			slices.SortFunc(g.Paths, impactComparePaths)
			t.Groups = append(t.Groups, *g)
		}
		slices.SortFunc(t.Groups, func(x, y impactGroup) int { return impactComparePaths(x.Paths[0], y.Paths[0]) })
		rep.Effective = append(rep.Effective, t)
	}
	rep.Policies = impactPolicies(before, after)
	rep.Totals = impactTotals(rep.Effective)
	rep.Verdict = impactVerdict(rep)
	return rep
}

// impactSummary keeps a policy's Accepted and Programmed conditions.
func impactSummary(conds []engine.Condition) []engine.Condition {
	var out []engine.Condition
	for _, c := range conds {
		if c.Type == engine.CondAccepted || c.Type == engine.CondProgrammed {
			out = append(out, c)
		}
	}
	return out
}

// impactPolicies lists the policies whose Accepted or Programmed condition
// (status, reason or message) would change, and those deleted or created.
func impactPolicies(before, after *engine.Result) []impactPolicy {
	type entry struct {
		kind string
		b, a []engine.Condition
		inB  bool
		inA  bool
	}
	byRef := map[topology.Ref]*entry{}
	var refs []topology.Ref
	get := func(ps *engine.PolicyStatus) *entry {
		e := byRef[ps.Policy.Ref]
		if e == nil {
			e = &entry{kind: ps.Policy.Kind.String()}
			byRef[ps.Policy.Ref] = e
			refs = append(refs, ps.Policy.Ref)
		}
		return e
	}
	for _, ps := range before.Policies {
		e := get(ps)
		e.b, e.inB = impactSummary(ps.Conditions), true
	}
	for _, ps := range after.Policies {
		e := get(ps)
		e.a, e.inA = impactSummary(ps.Conditions), true
	}
	slices.SortFunc(refs, func(x, y topology.Ref) int {
		if c := strings.Compare(byRef[x].kind, byRef[y].kind); c != 0 {
			return c
		}
		return x.Compare(y)
	})
	out := []impactPolicy{}
	for _, r := range refs {
		e := byRef[r]
		p := impactPolicy{Ref: r, PolicyKind: e.kind, Before: e.b, After: e.a}
		switch {
		case !e.inA:
			p.Change = "deleted"
		case !e.inB:
			p.Change = "created"
		case slices.Equal(e.b, e.a):
			continue
		default:
			p.Change = "changed"
		}
		out = append(out, p)
	}
	return out
}

// impactTotals counts distinct changed targets per namespace and kind.
func impactTotals(ts []impactTarget) []impactTotal {
	seen := map[topology.Ref]bool{}
	counts := map[[2]string]int{}
	for _, t := range ts {
		if seen[t.Target] {
			continue
		}
		seen[t.Target] = true
		counts[[2]string{t.Target.Namespace, kindName(t.Target.GroupKind())}]++
	}
	out := []impactTotal{}
	for k, n := range counts {
		out = append(out, impactTotal{Namespace: k[0], Kind: k[1], Count: n})
	}
	slices.SortFunc(out, func(x, y impactTotal) int {
		if c := strings.Compare(x.Namespace, y.Namespace); c != 0 {
			return c
		}
		return strings.Compare(x.Kind, y.Kind)
	})
	return out
}

// impactSubject reports whether the change itself deletes, creates or
// replaces the policy ref (its own status change is no side effect).
func impactSubject(c impactChange, ref topology.Ref) bool {
	if c.Policy != nil && *c.Policy == ref {
		return true
	}
	for _, o := range c.Objects {
		if o.Ref == ref {
			return true
		}
	}
	return false
}

// impactAction says the change in words: "deleting RetryPolicy baker/x".
func impactAction(c impactChange) string {
	if c.Action == "delete" && c.Policy != nil {
		return "deleting " + impactObjectString(*c.Policy)
	}
	if c.File == "-" {
		return "applying the objects of standard input"
	}
	return "applying " + c.File
}

// impactVerdict sums the report up in one sentence.
func impactVerdict(rep *impactReport) string {
	action := impactAction(rep.Change)
	others := 0
	for _, p := range rep.Policies {
		if !impactSubject(rep.Change, p.Ref) {
			others++
		}
	}
	targets := map[topology.Ref]bool{}
	namespaces := map[string]bool{}
	removed := map[string]int{} // policy kind -> targets left with none
	var kinds []string
	for _, t := range rep.Effective {
		targets[t.Target] = true
		namespaces[t.Target.Namespace] = true
		if t.Change == "removed" {
			if removed[t.PolicyKind] == 0 {
				kinds = append(kinds, t.PolicyKind)
			}
			removed[t.PolicyKind]++
		}
	}
	if len(targets) == 0 {
		if others == 0 {
			return fmt.Sprintf("no change: %s would change no effective policy and no other policy's status", action)
		}
		return fmt.Sprintf("%s would change no effective policy, but the status of %s", action, impactCount(others, "other policy", "other policies"))
	}
	var where string
	var nsList []string
	for ns := range namespaces {
		if ns == "" {
			ns = "cluster scope"
		}
		nsList = append(nsList, ns)
	}
	slices.Sort(nsList)
	if len(nsList) == 1 {
		where = "namespace " + nsList[0]
		if nsList[0] == "cluster scope" {
			where = "cluster scope"
		}
	} else {
		where = fmt.Sprintf("%d namespaces (%s)", len(nsList), strings.Join(nsList, ", "))
	}
	s := fmt.Sprintf("%s would change the effective policies of %s in %s", action, impactCount(len(targets), "target", "targets"), where)
	for _, k := range kinds {
		who := fmt.Sprintf("%d of them", removed[k])
		switch {
		case removed[k] == len(targets) && removed[k] == 1:
			who = "it"
		case removed[k] == len(targets):
			who = "all of them"
		}
		s += fmt.Sprintf("; %s would be left with no %s at all", who, impactPolicyKindName(k, nil))
	}
	if others > 0 {
		s += fmt.Sprintf("; the status of %s would change", impactCount(others, "other policy", "other policies"))
	}
	return s
}

func impactCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// impactPolicyKindName prints a policy kind (Kind.group) as its bare Kind,
// unless ambiguous lists it with other kinds of the same Kind.
func impactPolicyKindName(kind string, ambiguous map[string]bool) string {
	k, _, _ := strings.Cut(kind, ".")
	if ambiguous[k] {
		return kind
	}
	return k
}

// impactObjectString renders an object (a policy, an applied object) as
// "Kind namespace/name": the bare Kind, as people write it.
func impactObjectString(r topology.Ref) string {
	s := r.Kind + " "
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	return s + r.Name
}

// impactPolicyRef renders a policy ref with its kind as the report prints it.
func impactPolicyRef(r topology.Ref, kind string, ambiguous map[string]bool) string {
	s := impactPolicyKindName(kind, ambiguous) + " "
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	return s + r.Name
}

// impactPathString renders a path without its last entry (the target):
// Kind/name, a section joined to its object (Gateway/cupcakes#http), the
// namespace written only when it differs from the one in effect: the last
// Namespace entry of the path, else the target's.
func impactPathString(p []topology.Ref) string {
	if len(p) <= 1 {
		return ""
	}
	var parts []string
	var last topology.Ref
	ns := p[len(p)-1].Namespace
	for _, r := range p[:len(p)-1] {
		if r.GroupKind() == topology.KindNamespace {
			ns = r.Name
		}
		if r.IsSection() && len(parts) > 0 && last == r.Object() {
			parts[len(parts)-1] += "#" + r.SectionName
			last = r
			continue
		}
		s := kindName(r.GroupKind()) + "/"
		if r.Namespace != "" && r.Namespace != ns {
			s += r.Namespace + "/"
		}
		s += r.Name
		if r.IsSection() {
			s += "#" + r.SectionName
		}
		parts = append(parts, s)
		last = r
	}
	return strings.Join(parts, " > ")
}

func impactValueString(v *impactValue) string {
	if v == nil {
		return "(unset)"
	}
	return impactJSON(v.Value)
}

// printImpact prints the report for people.
func printImpact(w io.Writer, rep *impactReport) {
	// Policy kinds are printed by their bare Kind unless two share it.
	byKind := map[string]map[string]bool{}
	note := func(kind string) {
		k, _, _ := strings.Cut(kind, ".")
		if byKind[k] == nil {
			byKind[k] = map[string]bool{}
		}
		byKind[k][kind] = true
	}
	for _, t := range rep.Effective {
		note(t.PolicyKind)
	}
	for _, p := range rep.Policies {
		note(p.PolicyKind)
	}
	amb := map[string]bool{}
	for k, set := range byKind {
		amb[k] = len(set) > 1
	}

	action := impactAction(rep.Change)
	fmt.Fprintf(w, "Impact of %s\n", action)
	if rep.partialLine != "" {
		fmt.Fprintln(w, rep.partialLine)
	}
	for _, o := range rep.Change.Objects {
		fmt.Fprintf(w, "  %s %s\n", o.Action, impactObjectString(o.Ref))
	}
	fmt.Fprintln(w)

	if len(rep.Effective) == 0 {
		fmt.Fprintln(w, "Effective policies: no change.")
	} else {
		n := map[topology.Ref]bool{}
		for _, t := range rep.Effective {
			n[t.Target] = true
		}
		fmt.Fprintf(w, "Effective policies that would change (%s):\n", impactCount(len(n), "target", "targets"))
		for _, t := range rep.Effective {
			kind := impactPolicyKindName(t.PolicyKind, amb)
			fmt.Fprintf(w, "\n  %s of %s", kind, refTitle(t.Target))
			switch t.Change {
			case "removed":
				fmt.Fprintf(w, ": no %s would apply to it any more", kind)
			case "added":
				fmt.Fprintf(w, ": a %s would apply to it for the first time", kind)
			}
			fmt.Fprintln(w)
			for _, g := range t.Groups {
				for _, p := range g.Paths {
					via := impactPathString(p)
					if via == "" {
						fmt.Fprint(w, "    attached directly")
					} else {
						fmt.Fprintf(w, "    via %s", via)
					}
					switch g.PathChange {
					case "removed":
						fmt.Fprint(w, " (this path would no longer exist)")
					case "added":
						fmt.Fprint(w, " (a new path)")
					}
					fmt.Fprintln(w)
				}
				for _, f := range g.Fields {
					fmt.Fprintf(w, "      %s: %s -> %s\n", f.Path, impactValueString(f.Before), impactValueString(f.After))
				}
			}
		}
	}
	fmt.Fprintln(w)

	if len(rep.Policies) == 0 {
		fmt.Fprintln(w, "Policy status: no change.")
	} else {
		fmt.Fprintf(w, "Policy status that would change (%s):\n\n", impactCount(len(rep.Policies), "policy", "policies"))
		for _, p := range rep.Policies {
			name := impactPolicyRef(p.Ref, p.PolicyKind, amb)
			switch p.Change {
			case "deleted":
				fmt.Fprintf(w, "  %s: deleted (was %s)\n", name, impactReasons(p.Before))
			case "created":
				fmt.Fprintf(w, "  %s: created (%s)\n", name, impactReasons(p.After))
				impactPrintMessages(w, nil, p.After)
			default:
				var parts []string
				for _, typ := range []string{engine.CondAccepted, engine.CondProgrammed} {
					b, a := impactCondition(p.Before, typ), impactCondition(p.After, typ)
					switch {
					case b == nil && a == nil, b != nil && a != nil && *b == *a:
					case b != nil && a != nil && b.Status == a.Status && b.Reason == a.Reason:
						parts = append(parts, fmt.Sprintf("%s: %s (new message)", typ, a.Reason))
					default:
						parts = append(parts, fmt.Sprintf("%s: %s -> %s", typ, impactReason(b), impactReason(a)))
					}
				}
				fmt.Fprintf(w, "  %s: %s\n", name, strings.Join(parts, ", "))
				impactPrintMessages(w, p.Before, p.After)
			}
		}
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Totals:")
	if len(rep.Totals) == 0 {
		fmt.Fprintln(w, "  no target would change")
	}
	for _, t := range rep.Totals {
		where := "in namespace " + t.Namespace
		if t.Namespace == "" {
			where = "(cluster-scoped)"
		}
		fmt.Fprintf(w, "  %s %s would change\n", impactCount(t.Count, t.Kind, impactPlural(t.Kind)), where)
	}
	if n := len(rep.Policies); n > 0 {
		fmt.Fprintf(w, "  %s would change status\n", impactCount(n, "policy", "policies"))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Verdict: %s.\n", rep.Verdict)
}

// impactPrintMessages prints the messages of the conditions that changed,
// except a plain "Policy is accepted".
func impactPrintMessages(w io.Writer, before, after []engine.Condition) {
	for _, a := range after {
		if b := impactCondition(before, a.Type); b != nil && *b == a {
			continue
		}
		if a.Type == engine.CondAccepted && a.Reason == engine.ReasonAccepted {
			continue
		}
		fmt.Fprintf(w, "    %s: %s\n", a.Type, a.Message)
	}
}

func impactCondition(conds []engine.Condition, typ string) *engine.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func impactReason(c *engine.Condition) string {
	if c == nil {
		return "(none)"
	}
	return c.Reason
}

// impactReasons joins the reasons of conds: "Accepted, PartiallyProgrammed".
func impactReasons(conds []engine.Condition) string {
	var s []string
	for _, c := range conds {
		s = append(s, c.Reason)
	}
	return strings.Join(s, ", ")
}

// impactPlural is the English plural of a kind name: Services,
// GatewayClasses, Policies.
func impactPlural(kind string) string {
	word, group, _ := strings.Cut(kind, ".")
	switch {
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"):
		word += "es"
	case strings.HasSuffix(word, "y") && len(word) > 1 && !strings.ContainsRune("aeiouAEIOU", rune(word[len(word)-2])):
		word = word[:len(word)-1] + "ies"
	default:
		word += "s"
	}
	if group != "" {
		return word + "." + group
	}
	return word
}
