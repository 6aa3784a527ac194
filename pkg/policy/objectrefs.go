package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/attache-dev/attache/pkg/topology"
)

// ObjectRefPath is where a kind's policies name a ConfigMap or Secret whose
// data they use (an OIDC client secret, a Lua script, a response body, a
// client CA bundle). A policy naming one that does not exist, lacks the
// data key it needs, or sits in another namespace that no ReferenceGrant
// opens to the policy is Invalid at each of its targets: its
// implementation cannot translate it (Envoy Gateway). References to kinds
// other than Kinds are not judged (the CRD's schema says which kinds a
// reference may name; attache reads ConfigMaps and Secrets only).
type ObjectRefPath struct {
	// Path is the dotted path below spec of one reference object (group,
	// kind, name, and optionally namespace); segments may end in "[]"
	// (each entry of that list), and a path ending in "[]" is a list of
	// references.
	Path BackendRefPath
	// Kinds are the kinds judged, among ObjectHolderKinds; the first is the
	// kind of a reference that names none (default Secret).
	Kinds []topology.GroupKind
	// Keys are the data keys the policy reads, one of which must be
	// present; "*" stands for the holder's only key when it has exactly
	// one, "+" for any key when it has some (Envoy Gateway's fallbacks).
	// Empty: the holder must exist, whatever its keys.
	Keys []string
	// When, if set, is "field=value": the reference is judged only when
	// the object holding it has that field with that value (a union's
	// discriminator, Envoy Gateway's type: ValueRef).
	When string
	// On, if set, are listener protocols: the reference is judged only at
	// a target with a listener of one of them (a Gateway: any of its
	// listeners and its ListenerSets'; a ListenerSet: its own; a listener:
	// itself), a TLS listener counting unless it passes TLS through. The
	// implementation reads it there only (Envoy Gateway's client CA
	// certificates, for listeners that terminate TLS). The policy is then
	// Invalid at those targets only.
	On []string
	// Content, if set, judges the data of a reference that resolves
	// (ContentCRL, ContentDistinct, ContentLua, ContentNonblank): data the implementation refuses makes
	// the policy Invalid as a reference that does not resolve does.
	Content string
	// Ready, if set, is a condition type the object a reference resolves
	// to must hold True in its status: while it does not, the policy is
	// accepted but not programmed (Programmed=False, reason Unknown),
	// its implementation waiting for the object (Kuadrant's TLSPolicy and
	// its issuer's Ready). An object whose status holds no conditions
	// (a manifest) counts as ready. Kinds must be status holders
	// (StatusHolder).
	Ready string
	// KindRequired: a reference that names no kind resolves to nothing,
	// whatever Kinds[0] (Kuadrant links a TLSPolicy to an Issuer only
	// when its issuerRef's kind says Issuer).
	KindRequired bool
	// MissingNotProgrammed: a reference that does not resolve leaves the
	// policy accepted, and not programmed where it has effective targets
	// (Programmed=False, reason Unknown), rather than Invalid: another
	// component reads the object when it acts on what the implementation
	// made for those targets (Kuadrant's DNSPolicy: the DNS operator reads
	// the provider Secret of each DNSRecord, which is not Ready without
	// it).
	MissingNotProgrammed bool
	// DefaultLabel, if set, is "key=value": a policy that gives no
	// reference at the path reads instead the one object of the path's
	// first kind in its own namespace carrying that label; none, or more
	// than one, is a reference that does not resolve (Kuadrant's DNS
	// operator takes a DNSRecord without a provider reference to its
	// namespace's Secret labelled kuadrant.io/default-provider=true).
	DefaultLabel string
	// Unless, if set, is "field=value": the path is not judged, nor its
	// default read, when the object holding it has that field with that
	// value (a string or a boolean, compared as written; Kuadrant's
	// delegating DNSPolicies, delegate: true, name no provider).
	Unless string
}

// The kinds of ObjectRefPath.Content.
const (
	// ContentCRL: the key read (the first of Keys the holder has) holds a
	// PEM certificate revocation list in force (Envoy Gateway's client
	// CRLs, validateCrl: expired or not yet valid refused).
	ContentCRL = "crl"
	// ContentDistinct: the values of the holders named at the path are
	// all distinct, over all their keys, a key met again in a later
	// holder skipped (Envoy Gateway's API keys, buildAPIKeyAuth: a client
	// ID once, a key once).
	ContentDistinct = "distinct"
	// ContentLua: the key read holds a Lua script for Envoy's Lua
	// filter, naming envoy_on_request or envoy_on_response (Envoy
	// Gateway's Lua scripts from ConfigMaps, LuaValidator.Validate, in
	// every validation mode). A holder with several keys, none of them
	// named by Keys, is not judged: Envoy Gateway reads any of them.
	ContentLua = "lua"
	// ContentNonblank: the key read (the first of Keys the holder has)
	// holds more than white space (NGINX Gateway Fabric's PayloadProcessor
	// auth token, resolveExtProcessAuthToken: trimmed, then refused when
	// empty).
	ContentNonblank = "nonblank"
)

// String renders one path in its annotation form:
// "oidc.clientSecret kinds=Secret keys=client-secret".
func (r ObjectRefPath) String() string {
	kinds := make([]string, len(r.Kinds))
	for i, k := range r.Kinds {
		kinds[i] = k.Kind
	}
	s := string(r.Path) + " kinds=" + strings.Join(kinds, ",")
	if len(r.Keys) > 0 {
		s += " keys=" + strings.Join(r.Keys, ",")
	}
	if r.When != "" {
		s += " when=" + r.When
	}
	if len(r.On) > 0 {
		s += " on=" + strings.Join(r.On, ",")
	}
	if r.Content != "" {
		s += " content=" + r.Content
	}
	if r.Ready != "" {
		s += " ready=" + r.Ready
	}
	if r.KindRequired {
		s += " kind=required"
	}
	if r.MissingNotProgrammed {
		s += " missing=not-programmed"
	}
	if r.DefaultLabel != "" {
		s += " default-label=" + r.DefaultLabel
	}
	if r.Unless != "" {
		s += " unless=" + r.Unless
	}
	return s
}

// ObjectRefsString renders a kind's object reference paths as the
// annotation value, "" when none.
func ObjectRefsString(refs []ObjectRefPath) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// withDefaults fills Kinds when empty.
func (r ObjectRefPath) withDefaults() ObjectRefPath {
	if len(r.Kinds) == 0 {
		r.Kinds = []topology.GroupKind{KindSecret}
	}
	return r
}

// validate checks a path given from Go, a profile or an annotation.
func (r ObjectRefPath) validate() error {
	if err := r.Path.validate(); err != nil {
		return err
	}
	if strings.HasPrefix(string(r.Path), "spec.") || r.Path == "spec" {
		// The annotation drops one leading "spec.": a path kept so would
		// not read back the same.
		return fmt.Errorf("%s: a path below spec does not start with spec again", r.Path)
	}
	for _, c := range []struct{ word, v string }{{"when", r.When}, {"unless", r.Unless}} {
		if c.v == "" {
			continue
		}
		if f, v, ok := strings.Cut(c.v, "="); !ok || f == "" || v == "" || strings.ContainsAny(c.v, " ,;") || strings.Contains(v, "=") {
			return fmt.Errorf("%s: %s=%s: want field=value", r.Path, c.word, c.v)
		}
	}
	if r.DefaultLabel != "" {
		key, val, ok := strings.Cut(r.DefaultLabel, "=")
		if !ok {
			return fmt.Errorf("%s: default-label=%s: want a label, key=value", r.Path, r.DefaultLabel)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return fmt.Errorf("%s: default-label=%s: the key %s", r.Path, r.DefaultLabel, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			return fmt.Errorf("%s: default-label=%s: the value %s", r.Path, r.DefaultLabel, strings.Join(errs, "; "))
		}
		if len(r.Kinds) > 0 && (ClusterScopedHolder(r.Kinds[0]) || StatusHolder(r.Kinds[0])) {
			return fmt.Errorf("%s: default-label= reads a holder of the policy's namespace by its data: kinds must start with ConfigMap or Secret", r.Path)
		}
		if r.Content != "" || len(r.On) > 0 || r.KindRequired {
			return fmt.Errorf("%s: default-label= judges whether the default holder is there: it takes no content=, on= nor kind=required", r.Path)
		}
	}
	statusHolders := 0
	for _, k := range r.Kinds {
		if !slices.Contains(ObjectHolderKinds, k) {
			return fmt.Errorf("%s: kind %s is not one attache reads (known: %s)", r.Path, k, objectHolderKindsText)
		}
		if StatusHolder(k) {
			statusHolders++
		}
	}
	switch {
	case statusHolders > 0 && statusHolders < len(r.Kinds):
		return fmt.Errorf("%s: kinds=%s: the kinds whose status attache reads (Issuer, ClusterIssuer) do not mix with those whose data it reads", r.Path, kindNames(r.Kinds))
	case statusHolders > 0 && (len(r.Keys) > 0 || r.Content != ""):
		return fmt.Errorf("%s: kinds=%s hold no data: keys= and content= do not apply", r.Path, kindNames(r.Kinds))
	case r.Ready != "" && statusHolders == 0:
		return fmt.Errorf("%s: ready=%s reads a status condition: kinds must be Issuer or ClusterIssuer (cert-manager.io)", r.Path, r.Ready)
	case r.Ready != "" && (strings.ContainsAny(r.Ready, " ,=;/") || len(r.Ready) > 316):
		return fmt.Errorf("%s: ready=%s: want a condition type (Ready)", r.Path, r.Ready)
	case r.MissingNotProgrammed && (r.Content != "" || r.Ready != "" || statusHolders > 0 || len(r.On) > 0):
		return fmt.Errorf("%s: missing=not-programmed judges whether the data holder named resolves: it takes no content=, ready=, on= nor issuer kinds", r.Path)
	}
	for _, proto := range r.On {
		if proto == "" || strings.ContainsAny(proto, " ,=;*+") {
			return fmt.Errorf("%s: on=%s: want listener protocols (HTTPS,TLS)", r.Path, strings.Join(r.On, ","))
		}
	}
	if err := checkProtocols(r.On); err != nil {
		return fmt.Errorf("%s: %v", r.Path, err)
	}
	if r.Content != "" && r.Content != ContentCRL && r.Content != ContentDistinct && r.Content != ContentLua && r.Content != ContentNonblank {
		return fmt.Errorf("%s: content=%s: want %s, %s, %s or %s", r.Path, r.Content, ContentCRL, ContentDistinct, ContentLua, ContentNonblank)
	}
	for i, key := range r.Keys {
		wild := key == "*" || key == "+"
		if key == "" || (wild && i != len(r.Keys)-1) || strings.ContainsAny(key, " ,=;") {
			return fmt.Errorf("%s: key %q: keys are data keys, with \"*\" (the only key) or \"+\" (any key) last", r.Path, key)
		}
	}
	return nil
}

// ParseObjectRefs reads the annotation form: entries separated by ";",
// each a path followed optionally by kinds=<Kind,...>, keys=<key,...>,
// when=<field>=<value>, on=<protocol,...> and content=crl|distinct|lua|nonblank;
// "none" for none.
func ParseObjectRefs(v string) ([]ObjectRefPath, error) {
	if strings.TrimSpace(v) == "none" {
		return nil, nil
	}
	var out []ObjectRefPath
	for _, entry := range strings.Split(v, ";") {
		words := strings.Fields(entry)
		if len(words) == 0 {
			continue
		}
		r := ObjectRefPath{Path: BackendRefPath(strings.TrimPrefix(words[0], "spec."))}
		for _, w := range words[1:] {
			name, val, ok := strings.Cut(w, "=")
			switch {
			case ok && name == "kinds" && len(r.Kinds) == 0:
				for _, k := range splitList(val) {
					gk, found := objectHolderKind(k)
					if !found {
						return nil, fmt.Errorf("%s: kind %q is not one attache reads (known: %s)", words[0], k, objectHolderKindsText)
					}
					r.Kinds = append(r.Kinds, gk)
				}
			case ok && name == "keys" && len(r.Keys) == 0:
				r.Keys = splitList(val)
			case ok && name == "when" && r.When == "":
				r.When = val
				if val == "" {
					return nil, fmt.Errorf("%s: when=: want field=value", words[0])
				}
			case ok && name == "on" && len(r.On) == 0:
				r.On = splitList(val)
				if len(r.On) == 0 {
					return nil, fmt.Errorf("%s: on=: want listener protocols (HTTPS,TLS)", words[0])
				}
			case ok && name == "content" && r.Content == "":
				if r.Content = val; val == "" {
					return nil, fmt.Errorf("%s: content=: want %s, %s, %s or %s", words[0], ContentCRL, ContentDistinct, ContentLua, ContentNonblank)
				}
			case ok && name == "ready" && r.Ready == "":
				if r.Ready = val; val == "" {
					return nil, fmt.Errorf("%s: ready=: want a condition type (Ready)", words[0])
				}
			case ok && name == "kind" && !r.KindRequired:
				if val != "required" {
					return nil, fmt.Errorf("%s: kind=%s: want kind=required", words[0], val)
				}
				r.KindRequired = true
			case ok && name == "missing" && !r.MissingNotProgrammed:
				if val != "not-programmed" {
					return nil, fmt.Errorf("%s: missing=%s: want missing=not-programmed", words[0], val)
				}
				r.MissingNotProgrammed = true
			case ok && name == "default-label" && r.DefaultLabel == "":
				if r.DefaultLabel = val; val == "" {
					return nil, fmt.Errorf("%s: default-label=: want a label, key=value", words[0])
				}
			case ok && name == "unless" && r.Unless == "":
				if r.Unless = val; val == "" {
					return nil, fmt.Errorf("%s: unless=: want field=value", words[0])
				}
			default:
				return nil, fmt.Errorf("%s: unexpected %q after the path (known: kinds=ConfigMap,Secret,Issuer,ClusterIssuer keys=<key>,*,+ when=<field>=<value> on=<protocol>,... content=crl|distinct|lua|nonblank ready=<condition> kind=required missing=not-programmed default-label=<key>=<value> unless=<field>=<value>)", words[0], w)
			}
		}
		r = r.withDefaults()
		if err := r.validate(); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("names no path (e.g. %q), or \"none\"", "oidc.clientSecret kinds=Secret keys=client-secret")
	}
	return out, nil
}

// ObjectRefsOnListeners reports whether some object reference path of the
// kind is judged per target, by listener protocol (ObjectRefPath.On).
func (k *Kind) ObjectRefsOnListeners() bool {
	return slices.ContainsFunc(k.ObjectRefs, func(r ObjectRefPath) bool { return len(r.On) > 0 })
}

// ObjectRef is a ConfigMap or Secret a policy names at one of its kind's
// ObjectRefPaths.
type ObjectRef struct {
	// Object is the holder named (group, kind, namespace, name), defaults
	// applied: the path's first kind, the policy's namespace.
	Object topology.Ref
	// Path is the setting the reference was read under.
	Path *ObjectRefPath
	// Field is the entry's path, for messages.
	Field string
	// KindGiven: the reference names its kind.
	KindGiven bool
	// Default, when set, is the label (ObjectRefPath.DefaultLabel) of the
	// holder read in place of a reference the policy does not give:
	// Object then names no object (its name is empty), only the kind and
	// namespace looked in.
	Default string
}

// readObjectRefs reads the policy's references at its kind's object
// reference paths from spec. An entry that is not a reference object (the
// CRD's schema rejects those) is skipped: attache judges only what it can
// name.
func (p *Policy) readObjectRefs(spec map[string]any) {
	for i := range p.Kind.ObjectRefs {
		path := &p.Kind.ObjectRefs[i]
		if len(path.Kinds) == 0 {
			continue // a Kind not completed by NewKind: nothing to judge
		}
		names, lists := path.Path.segments()
		last := len(names) - 1
		// Walk to the object holding the reference, which When reads.
		walkPath(spec, "spec", names[:last], lists[:last], func(holder any, field string) {
			m, ok := holder.(map[string]any)
			if !ok || !path.applies(m) || path.excepted(m) {
				return
			}
			n := len(p.ObjectRefs)
			walkPath(m, field, names[last:], lists[last:], func(v any, field string) { p.addObjectRef(v, field, path) })
			if len(p.ObjectRefs) == n && path.DefaultLabel != "" && p.Ref.Namespace != "" {
				// None given: the default is read instead.
				def := path.Kinds[0]
				p.ObjectRefs = append(p.ObjectRefs, ObjectRef{Object: topology.Ref{Group: def.Group, Kind: def.Kind, Namespace: p.Ref.Namespace},
					Path: path, Field: field + "." + names[last], Default: path.DefaultLabel})
			}
		})
	}
}

// excepted reports whether object m's field named by Unless has its value
// (a string, or a boolean as written): the path is then not judged.
func (r *ObjectRefPath) excepted(m map[string]any) bool {
	if r.Unless == "" {
		return false
	}
	f, v, _ := strings.Cut(r.Unless, "=")
	switch got := m[f].(type) {
	case string:
		return got == v
	case bool:
		return strconv.FormatBool(got) == v
	}
	return false
}

// applies reports whether references in object m are judged: always, or
// when m's field named by When has its value.
func (r *ObjectRefPath) applies(m map[string]any) bool {
	if r.When == "" {
		return true
	}
	f, v, _ := strings.Cut(r.When, "=")
	got, ok := m[f].(string)
	return ok && got == v
}

// walkPath follows names (lists marking lists) from cur, at field, and
// calls leaf for each value found at the end.
func walkPath(cur any, field string, names []string, lists []bool, leaf func(any, string)) {
	if len(names) == 0 {
		leaf(cur, field)
		return
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return // a field on the way is absent or not an object: nothing named
	}
	v, ok := m[names[0]]
	if !ok || v == nil {
		return
	}
	field += "." + names[0]
	if !lists[0] {
		walkPath(v, field, names[1:], lists[1:], leaf)
		return
	}
	list, _ := v.([]any)
	for i, e := range list {
		walkPath(e, fmt.Sprintf("%s[%d]", field, i), names[1:], lists[1:], leaf)
	}
}

// addObjectRef reads one reference object at field.
func (p *Policy) addObjectRef(v any, field string, path *ObjectRefPath) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	def := path.Kinds[0]
	ref := ObjectRef{Object: topology.Ref{Group: def.Group, Kind: def.Kind, Namespace: p.Ref.Namespace}, Path: path, Field: field}
	for _, f := range []struct {
		key string
		dst *string
	}{{"group", &ref.Object.Group}, {"kind", &ref.Object.Kind}, {"name", &ref.Object.Name}, {"namespace", &ref.Object.Namespace}} {
		v, has := m[f.key]
		if !has || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return
		}
		if s != "" || f.key == "name" || f.key == "group" {
			*f.dst = s
		}
		if f.key == "kind" && s != "" {
			ref.KindGiven = true
		}
	}
	if ref.Object.Group == "core" || ref.Object.Group == "v1" {
		// "v1": Envoy Gateway's validation accepts the core group's
		// version for it in these references; no API group is so named.
		ref.Object.Group = topology.CoreGroup
	}
	if ClusterScopedHolder(ref.Object.GroupKind()) {
		ref.Object.Namespace = "" // a ClusterIssuer has none
	} else if ref.Object.Namespace == "" {
		return // a cluster-scoped policy naming no namespace
	}
	if ref.Object.Name == "" {
		return
	}
	p.ObjectRefs = append(p.ObjectRefs, ref)
}

// Judged reports whether the reference names a kind its path judges.
func (r ObjectRef) Judged() bool { return slices.Contains(r.Path.Kinds, r.Object.GroupKind()) }

// ObjectRefProblem says why one reference does not resolve.
type ObjectRefProblem struct {
	Ref ObjectRef
	// Message names the field, the object and what is wrong.
	Message string
}

// CheckObjectRefs resolves the policy's object references, except those
// whose path is judged per target (ObjectRefPath.On: see
// CheckObjectRefsWhere). keys gives the data keys of a holder (ok false
// when it does not exist); unread, when not nil, says which holders could
// not be read (they are not judged); granted says whether a ReferenceGrant
// lets the policy name a holder in another namespace.
func (p *Policy) CheckObjectRefs(keys func(topology.Ref) ([]string, bool), unread func(topology.Ref) bool, granted func(topology.Ref) bool) []ObjectRefProblem {
	return p.CheckObjectRefsWhere(keys, unread, granted, func(path *ObjectRefPath) bool { return len(path.On) == 0 })
}

// CheckObjectRefsWhere is CheckObjectRefs for the references whose path
// judge accepts (at a target: those whose On protocols it has).
func (p *Policy) CheckObjectRefsWhere(keys func(topology.Ref) ([]string, bool), unread func(topology.Ref) bool, granted func(topology.Ref) bool, judge func(*ObjectRefPath) bool) []ObjectRefProblem {
	return p.CheckObjectRefsWith(Holders{Keys: keys, Unread: unread, Granted: granted}, judge)
}

// CheckObjectRefsWith is CheckObjectRefsWhere with the holders h, whose
// Labelled, when set, finds the defaults (ObjectRefPath.DefaultLabel; not
// judged without it).
func (p *Policy) CheckObjectRefsWith(h Holders, judge func(*ObjectRefPath) bool) []ObjectRefProblem {
	return p.checkObjectRefs(h, func(path *ObjectRefPath) bool { return !path.MissingNotProgrammed && judge(path) })
}

// WaitingObjectRefs resolves the object references whose path leaves the
// policy not programmed when they do not resolve
// (ObjectRefPath.MissingNotProgrammed), as CheckObjectRefs does the others.
func (p *Policy) WaitingObjectRefs(keys func(topology.Ref) ([]string, bool), unread func(topology.Ref) bool, granted func(topology.Ref) bool) []ObjectRefProblem {
	return p.WaitingObjectRefsWith(Holders{Keys: keys, Unread: unread, Granted: granted})
}

// WaitingObjectRefsWith is WaitingObjectRefs with the holders h (see
// CheckObjectRefsWith).
func (p *Policy) WaitingObjectRefsWith(h Holders) []ObjectRefProblem {
	return p.checkObjectRefs(h, func(path *ObjectRefPath) bool { return path.MissingNotProgrammed })
}

// checkObjectRefs resolves the object references whose path judge accepts.
func (p *Policy) checkObjectRefs(h Holders, judge func(*ObjectRefPath) bool) []ObjectRefProblem {
	keys, unread, granted := h.Keys, h.Unread, h.Granted
	var probs []ObjectRefProblem
	for _, ref := range p.ObjectRefs {
		o := ref.Object
		if !ref.Judged() || (unread != nil && unread(o)) || !judge(ref.Path) {
			continue
		}
		if ref.Default != "" {
			if h.Labelled == nil {
				continue // the defaults cannot be looked for: not judged
			}
			found := h.Labelled(o.GroupKind(), o.Namespace, ref.Default)
			if len(found) != 1 {
				probs = append(probs, ObjectRefProblem{Ref: ref, Message: ref.Field + ": " + defaultMissing(o, ref.Default, found)})
				continue
			}
			o = found[0]
		}
		what := fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name)
		clusterScoped := ClusterScopedHolder(o.GroupKind())
		if clusterScoped {
			what = o.Kind + " " + o.Name
		}
		why := ""
		if ref.Path.KindRequired && !ref.KindGiven {
			why = fmt.Sprintf("names no kind, and its implementation finds the object only by a kind given (%s)", kindNames(ref.Path.Kinds))
		} else if !clusterScoped && o.Namespace != p.Ref.Namespace && !granted(o) {
			why = fmt.Sprintf("%s is in another namespace and no ReferenceGrant in namespace %s allows %s from namespace %s to name it", what, o.Namespace, p.Ref.GroupKind(), p.Ref.Namespace)
		} else if have, found := keys(o); !found {
			why = what + " not found"
		} else if len(ref.Path.Keys) > 0 && !holdsKey(have, ref.Path.Keys) {
			why = fmt.Sprintf("%s has no key %s", what, objectKeysText(ref.Path.Keys))
		}
		if why != "" {
			probs = append(probs, ObjectRefProblem{Ref: ref, Message: ref.Field + ": " + why})
		}
	}
	return probs
}

// defaultMissing says why no default holder of o's kind in o's namespace
// is read: none carries the label, or several do (found).
func defaultMissing(o topology.Ref, label string, found []topology.Ref) string {
	if len(found) == 0 {
		return fmt.Sprintf("names no %s, and no %s in namespace %s is labelled %s (the default read then)", o.Kind, o.Kind, o.Namespace, label)
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Name
	}
	slices.Sort(names)
	return fmt.Sprintf("names no %s, and %d %ss in namespace %s are labelled %s (%s): its implementation reads the default only when there is one", o.Kind, len(found), o.Kind, o.Namespace, label, strings.Join(names, ", "))
}

// DefaultHolder is where a policy's default holder is looked for
// (ObjectRefPath.DefaultLabel): the objects of a kind in a namespace with a
// label.
type DefaultHolder struct {
	Kind      topology.GroupKind
	Namespace string
	// Label is "key=value".
	Label string
}

// DefaultHolders are the places the policy's defaults are looked for,
// each once: the references it does not give, whose paths read a default
// (readers list these holders; HolderRefs names the others).
func (p *Policy) DefaultHolders() []DefaultHolder {
	var out []DefaultHolder
	for _, ref := range p.ObjectRefs {
		if ref.Default == "" || !ref.Judged() {
			continue
		}
		d := DefaultHolder{Kind: ref.Object.GroupKind(), Namespace: ref.Object.Namespace, Label: ref.Default}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// holdsKey reports whether a holder with data keys have has one of keys
// ("*": its only key; "+": any key).
func holdsKey(have, keys []string) bool {
	if slices.Contains(keys, "+") && len(have) > 0 {
		return true
	}
	return holdsCert(have, keys)
}

// objectKeysText renders keys for a message: "lua (nor any other key)".
func objectKeysText(keys []string) string {
	if n := len(keys); n > 0 && keys[n-1] == "+" {
		named := keys[:n-1]
		if len(named) == 0 {
			return "at all"
		}
		return strings.Join(named, " or ") + " (nor any other key)"
	}
	return keysText(keys)
}

// HolderKinds are the kinds of the objects the kind's policies name for
// their data (CA certificate holders and object references): the engine
// reads those kinds only for such kinds.
func (k *Kind) HolderKinds() []topology.GroupKind {
	out := k.CARefs.AllKinds()
	for _, r := range k.ObjectRefs {
		for _, gk := range r.Kinds {
			if !slices.Contains(out, gk) {
				out = append(out, gk)
			}
		}
	}
	if len(k.FeatureGates) > 0 && !slices.Contains(out, KindConfigMap) {
		// Implementations keep their configuration, which feature gates
		// read, in a ConfigMap.
		out = append(out, KindConfigMap)
	}
	return out
}

// HolderRefs are the ConfigMaps and Secrets the policy names for their
// data, of kinds its kind judges, each once: its CA certificate references
// in its own namespace and its object references.
func (p *Policy) HolderRefs() []topology.Ref {
	var out []topology.Ref
	add := func(r topology.Ref) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	readings := []CARefs{p.Kind.CARefs.For("")}
	for _, c := range p.Kind.CARefs.ByController {
		readings = append(readings, p.Kind.CARefs.For(c.Controller))
	}
	for _, ref := range p.CARefs {
		for _, rd := range readings {
			if r, ok := rd.holderRef(ref); ok && (r.Namespace == p.Ref.Namespace || ClusterScopedHolder(r.GroupKind())) {
				add(r)
			}
		}
	}
	for _, ref := range p.ObjectRefs {
		if ref.Judged() && ref.Default == "" {
			add(ref.Object)
		}
	}
	return out
}

// kindNames names kinds by their bare names, for messages.
func kindNames(gks []topology.GroupKind) string {
	names := make([]string, len(gks))
	for i, k := range gks {
		names[i] = k.Kind
	}
	return strings.Join(names, ", ")
}

// NotReadyRefs are the policy's object references at paths with Ready
// that resolve to an object whose status does not hold that condition
// True. conds gives the condition types a holder's status holds True, and
// whether its status holds any conditions (read); found false: it does
// not exist (CheckObjectRefs says so). An object whose status holds none
// counts as ready: its controller has not spoken yet.
func (p *Policy) NotReadyRefs(conds func(topology.Ref) (trueTypes []string, read, found bool)) []ObjectRefProblem {
	var out []ObjectRefProblem
	for _, ref := range p.ObjectRefs {
		if ref.Path.Ready == "" || !ref.Judged() || (ref.Path.KindRequired && !ref.KindGiven) {
			continue
		}
		types, read, found := conds(ref.Object)
		if !found || !read || slices.Contains(types, ref.Path.Ready) {
			continue
		}
		o := ref.Object
		what := fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name)
		if ClusterScopedHolder(o.GroupKind()) {
			what = o.Kind + " " + o.Name
		}
		out = append(out, ObjectRefProblem{Ref: ref, Message: fmt.Sprintf("%s: %s is not %s", ref.Field, what, ref.Path.Ready)})
	}
	return out
}
