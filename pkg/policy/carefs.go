package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// CA certificate holders attache can resolve: core ConfigMaps and Secrets,
// whose data keys it reads (never their values, so that a reader may strip
// them).
var (
	KindConfigMap = topology.GroupKind{Kind: "ConfigMap"}
	KindSecret    = topology.GroupKind{Kind: "Secret"}
)

// CAHolderKinds are the kinds CARefs.Kinds may name.
var CAHolderKinds = []topology.GroupKind{KindConfigMap, KindSecret}

// CARefs says where a kind's policies name the objects holding the CA
// certificates they trust, as BackendTLSPolicy's
// spec.validation.caCertificateRefs does. A policy's references are then
// resolved against the holders in its namespace, and its status carries
// Gateway API's ResolvedRefs condition; when none resolves, it is
// Accepted=False with reason NoValidCACertificate (it still governs its
// targets: connections through it fail). The zero value: no such field.
type CARefs struct {
	// Field is the dotted path, below spec, of the list of references;
	// each entry has group, kind and name (and may have namespace).
	Field string
	// Kinds are the kinds a reference may name, among CAHolderKinds
	// (default ConfigMap, Gateway API's Core support); a reference to any
	// other kind is invalid (InvalidKind).
	Kinds []topology.GroupKind
	// Keys are the data keys holding the certificate, tried in order
	// (default ca.crt); a last "*" stands for the holder's only key when it
	// has exactly one (Envoy Gateway's fallback).
	Keys []string
}

// Enabled reports whether the kind has CA certificate references.
func (r CARefs) Enabled() bool { return r.Field != "" }

// String renders the setting as its annotation value:
// "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt"; "" when off.
func (r CARefs) String() string {
	if !r.Enabled() {
		return ""
	}
	kinds := make([]string, len(r.Kinds))
	for i, k := range r.Kinds {
		kinds[i] = k.Kind
	}
	return fmt.Sprintf("%s kinds=%s keys=%s", r.Field, strings.Join(kinds, ","), strings.Join(r.Keys, ","))
}

// withDefaults fills Kinds and Keys when empty.
func (r CARefs) withDefaults() CARefs {
	if r.Enabled() && len(r.Kinds) == 0 {
		r.Kinds = []topology.GroupKind{KindConfigMap}
	}
	if r.Enabled() && len(r.Keys) == 0 {
		r.Keys = []string{"ca.crt"}
	}
	return r
}

// validate checks a setting given from Go or a profile.
func (r CARefs) validate() error {
	if !r.Enabled() {
		return nil
	}
	if strings.Trim(r.Field, ".") != r.Field || strings.Contains(r.Field, "..") || strings.ContainsAny(r.Field, " ,=") {
		return fmt.Errorf("field %q is not a dotted path below spec", r.Field)
	}
	for _, k := range r.Kinds {
		if !slices.Contains(CAHolderKinds, k) {
			return fmt.Errorf("kind %s cannot hold CA certificates attache reads (known: ConfigMap, Secret)", k)
		}
	}
	for i, key := range r.Keys {
		if key == "" || (key == "*" && i != len(r.Keys)-1) || strings.ContainsAny(key, " ,=") {
			return fmt.Errorf("key %q: keys are data keys, with \"*\" (the only key) last", key)
		}
	}
	return nil
}

// ParseCARefs reads the annotation form: the field, then optionally
// kinds=<Kind,...> and keys=<key,...>, separated by spaces; "none" turns
// the setting off.
func ParseCARefs(v string) (CARefs, error) {
	words := strings.Fields(v)
	if len(words) == 0 {
		return CARefs{}, fmt.Errorf("names no field (e.g. %q), or \"none\"", "validation.caCertificateRefs")
	}
	if len(words) == 1 && words[0] == "none" {
		return CARefs{}, nil
	}
	r := CARefs{Field: strings.TrimPrefix(words[0], "spec.")}
	for _, w := range words[1:] {
		name, val, ok := strings.Cut(w, "=")
		switch {
		case ok && name == "kinds" && len(r.Kinds) == 0:
			for _, k := range splitList(val) {
				gk, found := caHolderKind(k)
				if !found {
					return CARefs{}, fmt.Errorf("kind %q cannot hold CA certificates attache reads (known: ConfigMap, Secret)", k)
				}
				r.Kinds = append(r.Kinds, gk)
			}
		case ok && name == "keys" && len(r.Keys) == 0:
			r.Keys = splitList(val)
		default:
			return CARefs{}, fmt.Errorf("unexpected %q after the field (known: kinds=ConfigMap,Secret keys=ca.crt,*)", w)
		}
	}
	r = r.withDefaults()
	return r, r.validate()
}

// caHolderKind resolves a kind name as written ("ConfigMap", "ConfigMap.",
// "Secret.core") to one of CAHolderKinds.
func caHolderKind(s string) (topology.GroupKind, bool) {
	name, group, _ := strings.Cut(s, ".")
	if group == "core" {
		group = ""
	}
	gk := topology.GroupKind{Group: group, Kind: name}
	return gk, slices.Contains(CAHolderKinds, gk)
}

// CARef is one CA certificate reference of a policy, as written.
type CARef struct {
	// Group (core: "") and Kind as written; Kind is never empty.
	Group, Kind string
	// Name of the holder, and its Namespace: the policy's when the entry
	// names none.
	Name, Namespace string
	// Field is the entry's path, for messages.
	Field string
}

// Ref is the holder the reference names.
func (r CARef) Ref() topology.Ref {
	return topology.Ref{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// readCARefs reads the kind's CA certificate references from spec (the
// object's spec, before stanzas are taken apart: the field is the kind's
// own). Malformed entries are problems of the policy.
func (p *Policy) readCARefs(spec map[string]any, bad func(string, string, ...any)) {
	r := p.Kind.CARefs
	if !r.Enabled() {
		return
	}
	var cur any = spec
	path := strings.Split(r.Field, ".")
	for _, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if cur, ok = m[seg]; !ok {
			return
		}
	}
	field := "spec." + r.Field
	list, ok := cur.([]any)
	if !ok {
		if cur != nil {
			bad(field, "must be a list of references, not %s", typeName(cur))
		}
		return
	}
	for i, e := range list {
		ef := fmt.Sprintf("%s[%d]", field, i)
		m, ok := e.(map[string]any)
		if !ok {
			bad(ef, "must be an object with kind and name, not %s", typeName(e))
			continue
		}
		ref := CARef{Namespace: p.Ref.Namespace, Field: ef}
		for _, f := range []struct {
			key string
			dst *string
		}{{"group", &ref.Group}, {"kind", &ref.Kind}, {"name", &ref.Name}, {"namespace", &ref.Namespace}} {
			v, has := m[f.key]
			if !has || v == nil {
				continue
			}
			s, isStr := v.(string)
			if !isStr {
				bad(ef+"."+f.key, "must be a string, not %s", typeName(v))
				continue
			}
			if s != "" || f.key != "namespace" {
				*f.dst = s
			}
		}
		if ref.Group == "core" {
			ref.Group = ""
		}
		if ref.Kind == "" || ref.Name == "" {
			bad(ef, "names no kind or no name")
			continue
		}
		p.CARefs = append(p.CARefs, ref)
	}
}

// CA reference reasons (Gateway API, BackendTLSPolicy).
const (
	ReasonInvalidKind             = "InvalidKind"
	ReasonInvalidCACertificateRef = "InvalidCACertificateRef"
)

// CARefProblem says why a reference does not resolve, with the reason of
// the ResolvedRefs condition: ReasonInvalidKind or
// ReasonInvalidCACertificateRef.
type CARefProblem struct {
	Ref     CARef
	Reason  string
	Message string
}

// CheckCARefs resolves the policy's CA certificate references. keys gives
// the data keys of a holder (ok false when it does not exist); unread, when
// not nil, says which holders could not be read at all. It returns the
// problems of the references that do not resolve, how many resolve, and
// whether some could not be judged (unread).
func (p *Policy) CheckCARefs(keys func(topology.Ref) ([]string, bool), unread func(topology.Ref) bool) (probs []CARefProblem, valid int, unknown bool) {
	r := p.Kind.CARefs
	for _, ref := range p.CARefs {
		gk := topology.GroupKind{Group: ref.Group, Kind: ref.Kind}
		what := ref.Kind + " " + ref.Namespace + "/" + ref.Name
		switch {
		case !slices.Contains(r.Kinds, gk):
			probs = append(probs, CARefProblem{ref, ReasonInvalidKind, fmt.Sprintf("%s: kind %s is not supported (supported: %s)", ref.Field, gk, kindsString(r.Kinds))})
		case ref.Namespace != p.Ref.Namespace:
			probs = append(probs, CARefProblem{ref, ReasonInvalidCACertificateRef, fmt.Sprintf("%s: %s is in another namespace than the policy", ref.Field, what)})
		case unread != nil && unread(ref.Ref()):
			unknown = true
		default:
			have, found := keys(ref.Ref())
			switch {
			case !found:
				probs = append(probs, CARefProblem{ref, ReasonInvalidCACertificateRef, fmt.Sprintf("%s: %s not found", ref.Field, what)})
			case !holdsCert(have, r.Keys):
				probs = append(probs, CARefProblem{ref, ReasonInvalidCACertificateRef, fmt.Sprintf("%s: %s has no key %s", ref.Field, what, keysText(r.Keys))})
			default:
				valid++
			}
		}
	}
	return probs, valid, unknown
}

// holdsCert reports whether a holder with data keys have holds a
// certificate under one of keys ("*": its only key).
func holdsCert(have, keys []string) bool {
	for _, k := range keys {
		if k == "*" && len(have) == 1 || slices.Contains(have, k) {
			return true
		}
	}
	return false
}

func keysText(keys []string) string {
	var named []string
	only := false
	for _, k := range keys {
		if k == "*" {
			only = true
		} else {
			named = append(named, k)
		}
	}
	s := strings.Join(named, " or ")
	if only {
		s += " (nor a single key)"
	}
	return s
}
