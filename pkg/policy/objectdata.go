package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/topology"
)

// Holders is what the checks of a policy's object references read of the
// ConfigMaps and Secrets they name.
type Holders struct {
	// Keys gives the data keys of a holder; ok is false when it does not
	// exist.
	Keys func(topology.Ref) (keys []string, ok bool)
	// Facts gives what is read of a holder's values, by key
	// (package holderdata).
	Facts func(topology.Ref) map[string]holderdata.Fact
	// Unread, when not nil, says which holders could not be read: they
	// are not judged.
	Unread func(topology.Ref) bool
	// Granted says whether a ReferenceGrant lets the policy name a holder
	// in another namespace.
	Granted func(topology.Ref) bool
	// Now is the time CRLs are judged at.
	Now time.Time
	// Labelled, when not nil, gives the holders of kind gk in namespace
	// ns carrying label ("key=value"), for the defaults of
	// ObjectRefPath.DefaultLabel (nil: the defaults are not judged).
	Labelled func(gk topology.GroupKind, ns, label string) []topology.Ref
}

// HasContent reports whether some object reference path of the kind
// judges the data it names (ObjectRefPath.Content).
func (k *Kind) HasContent() bool {
	return slices.ContainsFunc(k.ObjectRefs, func(r ObjectRefPath) bool { return r.Content != "" })
}

// CheckObjectData judges the data of the policy's references whose path
// names a Content and that judge accepts, among those that resolve (in
// the policy's namespace or granted, found, holding a key the path reads):
// one problem per reference whose data its implementation refuses, in
// order, and the first time after h.Now at which a verdict changes (a CRL
// coming into force or expiring; zero for none).
func (p *Policy) CheckObjectData(h Holders, judge func(*ObjectRefPath) bool) (probs []ObjectRefProblem, changes time.Time) {
	type seen struct {
		key    string
		holder topology.Ref
	}
	// Per path (ContentDistinct): the keys and values met so far, and
	// whether a duplicate was reported (the implementation stops there).
	clients := map[*ObjectRefPath]map[string]bool{}
	values := map[*ObjectRefPath]map[string]seen{}
	reported := map[*ObjectRefPath]bool{}
	for _, ref := range p.ObjectRefs {
		o, path := ref.Object, ref.Path
		if path.Content == "" || !ref.Judged() || (h.Unread != nil && h.Unread(o)) || !judge(path) {
			continue
		}
		if o.Namespace != p.Ref.Namespace && !h.Granted(o) {
			continue
		}
		have, found := h.Keys(o)
		if !found || (len(path.Keys) > 0 && !holdsKey(have, path.Keys)) {
			continue // does not resolve: CheckObjectRefs says so
		}
		facts := h.Facts(o)
		what := fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name)
		switch path.Content {
		case ContentCRL:
			// Of a ConfigMap, its data only: Envoy Gateway does not read
			// binaryData there.
			text := slices.DeleteFunc(slices.Clone(have), func(k string) bool { return facts[k].Binary })
			key := keyRead(text, path.Keys)
			if key == "" {
				probs = append(probs, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s: has no key %s outside binaryData, where the CRL is read", ref.Field, what, objectKeysText(path.Keys))})
				continue
			}
			f, ok := facts[key]
			if !ok {
				continue // its values were not read
			}
			if why := f.CRL.Check(h.Now); why != "" {
				probs = append(probs, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s: %s: %s", ref.Field, what, key, why)})
			}
			if t := f.CRL.Changes(h.Now); !t.IsZero() && (changes.IsZero() || t.Before(changes)) {
				changes = t
			}
		case ContentNonblank:
			key := keyRead(have, path.Keys)
			if f, ok := facts[key]; ok && key != "" && f.Blank {
				probs = append(probs, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s: %s is empty (or white space only)", ref.Field, what, key)})
			}
		case ContentLua:
			if f, ok := luaFact(ref, have, facts); ok && !f.Lua.EntryPoint {
				probs = append(probs, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s: %s", ref.Field, what, LuaNoEntryPoint)})
			}
		case ContentDistinct:
			if reported[path] {
				continue
			}
			if clients[path] == nil {
				clients[path], values[path] = map[string]bool{}, map[string]seen{}
			}
			keys := slices.Clone(have)
			slices.Sort(keys)
			for _, k := range keys {
				f, ok := facts[k]
				if !ok || clients[path][k] {
					continue
				}
				if first, dup := values[path][f.Digest]; dup {
					where := ""
					if first.holder != o {
						where = fmt.Sprintf(" of %s %s/%s", first.holder.Kind, first.holder.Namespace, first.holder.Name)
					}
					probs = append(probs, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s: the value of %s is that of %s%s: the values must be distinct", ref.Field, what, k, first.key, where)})
					reported[path] = true
					break
				}
				clients[path][k] = true
				values[path][f.Digest] = seen{key: k, holder: o}
			}
		}
	}
	return probs, changes
}

// LuaNoEntryPoint says why a Lua script naming neither of Envoy's entry
// points is refused.
const LuaNoEntryPoint = "a Lua script must define envoy_on_request() or envoy_on_response()"

// luaFact is what is read, as a Lua script, of the value a reference reads
// (ContentLua) of a holder with the keys have: the first of its path's
// named keys the holder has among its data values, else its only data
// value when the path reads any key ("+" or "*"); false when it has none
// of them or several (its implementation reads any), or its values were
// not read as scripts.
func luaFact(ref ObjectRef, have []string, facts map[string]holderdata.Fact) (holderdata.Fact, bool) {
	var data []string
	for _, k := range have {
		if facts[k].Lua.Read {
			data = append(data, k)
		}
	}
	for _, k := range ref.Path.Keys {
		switch {
		case (k == "+" || k == "*") && len(data) == 1:
			return facts[data[0]], true
		case slices.Contains(data, k):
			return facts[k], true
		}
	}
	return holderdata.Fact{}, false
}

// keyRead is the key a reference with keys reads of a holder that has
// the data keys have (sorted): the first of keys it has; "*" its only
// key, "+" its first; with no keys, its first.
func keyRead(have, keys []string) string {
	for _, k := range keys {
		switch {
		case k == "*" && len(have) == 1, k == "+" && len(have) > 0:
			return have[0]
		case slices.Contains(have, k):
			return k
		}
	}
	if len(keys) == 0 && len(have) > 0 {
		return have[0]
	}
	return ""
}
