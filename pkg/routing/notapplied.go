package routing

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/report"
	"github.com/attache-dev/attache/pkg/topology"
)

// leaveOutNotApplied says which policies are not applied through o's
// Gateway at the objects on o's paths (engine.PolicyStatus.NotAppliedVia:
// the parameters of that Gateway's data plane refuse them, and their
// implementation leaves them out there, as NGINX Gateway Fabric leaves
// out a policy invalid for a Gateway), and drops from o's effective
// policies what they contribute. An Inherited kind's contexts through
// that Gateway already leave them out (what they would have beaten is
// there instead); a Direct kind's one context holds them: their fields
// leave its spec and sources. An effective policy left with no field
// goes.
func (p *Policies) leaveOutNotApplied(o *Outcome) {
	if len(p.refused) == 0 {
		return
	}
	noted := map[topology.Ref]bool{}
	note := func(st *engine.PolicyStatus) {
		if noted[st.Policy.Ref] {
			return
		}
		noted[st.Policy.Ref] = true
		impl := "its implementation"
		if st.Policy.Kind != nil && st.Policy.Kind.Implementation != "" {
			impl = st.Policy.Kind.Implementation
		}
		o.Notes = append(o.Notes, fmt.Sprintf("%s %s is not applied through Gateway %s: %s refuses it there (see its status)",
			st.Policy.Ref.Kind, nameOf(st.Policy.Ref), nameOf(o.Gateway), impl))
	}
	paths := o.backendPaths
	if len(o.Path) > 0 {
		paths = append([][]topology.Ref{o.Path}, paths...)
	}
	for _, path := range paths {
		for _, ref := range path {
			for _, st := range p.refused[ref] {
				if slices.Contains(st.NotAppliedVia[ref], o.Gateway) {
					note(st)
				}
			}
		}
	}
	out := o.EffectivePolicies[:0]
	for _, ep := range o.EffectivePolicies {
		drop := map[engine.Attachment]bool{}
		if ep.Context != nil {
			for _, e := range ep.Context.Stack {
				if e.Attachment == nil {
					continue
				}
				if st := p.status[e.Policy]; st != nil && slices.Contains(st.NotAppliedVia[e.At], o.Gateway) {
					drop[*e.Attachment] = true
					note(st)
				}
			}
		}
		if len(drop) == 0 {
			out = append(out, ep)
			continue
		}
		spec, ok := specWithout(ep.Spec, ep.Context.Fields, drop)
		if !ok || len(spec) == 0 {
			continue // nothing of it, or nothing attache can tell, is left
		}
		ep.Spec = spec
		ep.Sources = sourcesWithout(ep.Sources, drop)
		out = append(out, ep)
	}
	o.EffectivePolicies = out
}

// specWithout is spec without the leaf fields that the attachments in
// drop set (fields are the context's sources): a copy, objects emptied
// by the removal removed. false when a field's path is not one of plain
// or quoted object keys (a keyed list item), which it cannot remove.
func specWithout(spec map[string]any, fields []engine.FieldSource, drop map[engine.Attachment]bool) (map[string]any, bool) {
	out := deepCopyMap(spec)
	for _, f := range fields {
		if f.Attachment == nil || !drop[*f.Attachment] {
			continue
		}
		keys, ok := pathKeys(f.Path)
		if !ok {
			return nil, false
		}
		deleteAt(out, keys)
	}
	return out, true
}

// sourcesWithout is s without the fields and stack entries of drop.
func sourcesWithout(s report.Sources, drop map[engine.Attachment]bool) report.Sources {
	var out report.Sources
	for _, f := range s.Fields {
		if !drop[engine.Attachment{Policy: f.Policy, At: f.Target}] {
			out.Fields = append(out.Fields, f)
		}
	}
	for _, ps := range s.Policies {
		if !drop[engine.Attachment{Policy: ps.Policy, At: ps.Target}] {
			out.Policies = append(out.Policies, ps)
		}
	}
	if out.Fields == nil {
		out.Fields = []report.FieldSource{}
	}
	if out.Policies == nil {
		out.Policies = []report.PolicySource{}
	}
	return out
}

// pathKeys splits a field path of the engine's (merge.JoinPath: plain
// keys joined by dots, others quoted in brackets) into its keys; false
// for a path with a keyed list item ([name=x]) or that does not parse.
func pathKeys(path string) ([]string, bool) {
	var keys []string
	for path != "" {
		switch {
		case strings.HasPrefix(path, "["):
			q, err := strconv.QuotedPrefix(path[1:])
			if err != nil || !strings.HasPrefix(path[1+len(q):], "]") {
				return nil, false
			}
			k, _ := strconv.Unquote(q)
			keys = append(keys, k)
			path = path[1+len(q)+1:]
			if path != "" && path[0] != '.' && path[0] != '[' {
				return nil, false
			}
		default:
			i := strings.IndexAny(path, ".[")
			if i < 0 {
				i = len(path)
			}
			if i == 0 {
				return nil, false
			}
			keys = append(keys, path[:i])
			path = path[i:]
		}
		if strings.HasPrefix(path, ".") {
			path = path[1:]
			if path == "" {
				return nil, false
			}
		}
	}
	return keys, len(keys) > 0
}

// deleteAt removes the value at keys from m, and the objects left empty
// on the way.
func deleteAt(m map[string]any, keys []string) {
	if len(keys) == 1 {
		delete(m, keys[0])
		return
	}
	child, ok := m[keys[0]].(map[string]any)
	if !ok {
		return
	}
	deleteAt(child, keys[1:])
	if len(child) == 0 {
		delete(m, keys[0])
	}
}

// deepCopyMap copies the objects of a spec (lists and scalars are shared:
// deleteAt changes objects only).
func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if c, ok := v.(map[string]any); ok {
			v = deepCopyMap(c)
		}
		out[k] = v
	}
	return out
}
