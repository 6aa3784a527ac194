package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/pkg/topology"
)

func TestParseObjectRefs(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "oidc.clientSecret kinds=Secret keys=client-secret", want: "oidc.clientSecret kinds=Secret keys=client-secret"},
		// Defaults: kind Secret, no key; spec. dropped; empty entries skipped.
		{in: " spec.basicAuth.users ; ", want: "basicAuth.users kinds=Secret"},
		{in: "lua[].valueRef kinds=ConfigMap.core keys=lua,+; a.b kinds=Secret,ConfigMap keys=ca.crt,*", want: "lua[].valueRef kinds=ConfigMap keys=lua,+; a.b kinds=Secret,ConfigMap keys=ca.crt,*"},
		{in: "none", want: ""},
		{in: " ; ", err: "names no path"},
		{in: "a..b", err: "not a dotted path"},
		{in: "a kinds=Pod", err: `kind "Pod" is not one attache reads`},
		{in: "a keys=+,lua", err: `key "+"`},
		{in: "a keys=*,+", err: `key "*"`},
		{in: "a color=red", err: `unexpected "color=red"`},
		{in: "a kinds=Secret kinds=ConfigMap", err: "unexpected"},
		{in: "body.valueRef kinds=ConfigMap when=type=ValueRef", want: "body.valueRef kinds=ConfigMap when=type=ValueRef"},
		{in: "a when=type", err: "want field=value"},
		{in: "a when=", err: "want field=value"},
		{in: "a when=a=b=c", err: "want field=value"},
		{in: "ca[] kinds=Secret,ConfigMap keys=ca.crt,* on=HTTPS,TLS", want: "ca[] kinds=Secret,ConfigMap keys=ca.crt,* on=HTTPS,TLS"},
		{in: "a on=", err: "want listener protocols"},
		{in: "a on=HTTPS on=TLS", err: "unexpected"},
		{in: "a on=HT*PS", err: "want listener protocols"},
		{in: "crl.refs[] kinds=Secret,ConfigMap keys=ca.crl,* on=HTTPS,TLS content=crl", want: "crl.refs[] kinds=Secret,ConfigMap keys=ca.crl,* on=HTTPS,TLS content=crl"},
		{in: "keys[] content=distinct", want: "keys[] kinds=Secret content=distinct"},
		{in: "tokenRef keys=token content=nonblank", want: "tokenRef kinds=Secret keys=token content=nonblank"},
		{in: "lua[].valueRef kinds=ConfigMap keys=lua,+ when=type=ValueRef content=lua", want: "lua[].valueRef kinds=ConfigMap keys=lua,+ when=type=ValueRef content=lua"},
		{in: "a content=", err: "content=: want crl, distinct, lua or nonblank"},
		{in: "a content=json", err: "content=json: want crl, distinct, lua or nonblank"},
		{in: "a content=crl content=crl", err: "unexpected"},
		// Read back, "spec.spec.a" would lose its second spec.
		{in: "spec.spec.a", err: "does not start with spec again"},
		// cert-manager's issuers: their status is read, not data.
		{in: "issuerRef kinds=Issuer,ClusterIssuer.cert-manager.io ready=Ready kind=required", want: "issuerRef kinds=Issuer,ClusterIssuer ready=Ready kind=required"},
		{in: "issuerRef kinds=Issuer", want: "issuerRef kinds=Issuer"},
		{in: "a kinds=Issuer,Secret", err: "do not mix"},
		{in: "a kinds=Issuer keys=ca.crt", err: "hold no data"},
		{in: "a ready=Ready", err: "kinds must be Issuer or ClusterIssuer"},
		{in: "a kinds=Issuer ready=", err: "ready=: want a condition type"},
		{in: "a kinds=Issuer ready=a/b", err: "want a condition type"},
		{in: "a kinds=Issuer kind=optional", err: "want kind=required"},
		{in: "a kinds=Issuer kind=required kind=required", err: "unexpected"},
		// Kuadrant's DNS provider Secrets: a missing one leaves the policy
		// not programmed, not Invalid.
		{in: "providerRefs[] missing=not-programmed", want: "providerRefs[] kinds=Secret missing=not-programmed"},
		{in: "a missing=invalid", err: "want missing=not-programmed"},
		{in: "a kinds=Issuer missing=not-programmed", err: "takes no content=, ready=, on= nor issuer kinds"},
		{in: "a content=crl missing=not-programmed", err: "takes no content="},
		// Kuadrant's default provider Secret, read when none is named,
		// unless the policy delegates.
		{in: "providerRefs[] missing=not-programmed default-label=kuadrant.io/default-provider=true unless=delegate=true",
			want: "providerRefs[] kinds=Secret missing=not-programmed default-label=kuadrant.io/default-provider=true unless=delegate=true"},
		{in: "a default-label=", err: "default-label=: want a label"},
		{in: "a default-label=novalue", err: "want a label, key=value"},
		{in: "a default-label=bad/key/x=true", err: "default-label=bad/key/x=true: the key"},
		{in: "a default-label=k=not ok", err: "unexpected"},
		{in: "a default-label=k=v!", err: "the value"},
		{in: "a kinds=Issuer default-label=k=v", err: "kinds must start with ConfigMap or Secret"},
		{in: "a content=crl default-label=k=v", err: "takes no content=, on= nor kind=required"},
		{in: "a unless=", err: "unless=: want field=value"},
		{in: "a unless=delegate", err: "unless=delegate: want field=value"},
	} {
		got, err := ParseObjectRefs(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && ObjectRefsString(got) != c.want:
			t.Errorf("%q read as %q, want %q", c.in, ObjectRefsString(got), c.want)
		}
	}
}

// References are read through lists and objects, with the path's first
// kind and the policy's namespace as defaults; what is not a reference
// naming an object is skipped; the core group may be written "", "core" or
// "v1".
func TestReadObjectRefs(t *testing.T) {
	refs, err := ParseObjectRefs("ext[].valueRef kinds=ConfigMap,Secret keys=lua,+; one.secretRef")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	p := parse(t, k, withTargets(`"ext": [
  {"valueRef": {"name": "a"}},
  {"valueRef": {"group": "v1", "kind": "Secret", "name": "b", "namespace": "other"}},
  {"valueRef": {"kind": "ConfigMap"}},
  {"valueRef": "x"},
  {"valueRef": {"name": 3}},
  {"valueRef": {"group": "example.com", "kind": "Vault", "name": "c"}}
],
"one": {"secretRef": {"group": "core", "name": "d"}}`))
	if p.Invalid() {
		t.Fatalf("policy made invalid: %v", p.Problems)
	}
	var got []string
	for _, r := range p.ObjectRefs {
		got = append(got, fmt.Sprintf("%s@%s judged=%v", r.Object, r.Field, r.Judged()))
	}
	want := []string{
		"ConfigMap ns1/a@spec.ext[0].valueRef judged=true",
		"Secret other/b@spec.ext[1].valueRef judged=true",
		"Vault.example.com ns1/c@spec.ext[5].valueRef judged=false",
		"Secret ns1/d@spec.one.secretRef judged=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("object refs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h := fmt.Sprint(p.HolderRefs()); h != "[ConfigMap ns1/a Secret other/b Secret ns1/d]" {
		t.Errorf("holder refs = %s", h)
	}
	if h := fmt.Sprint(k.HolderKinds()); h != "[ConfigMap Secret]" {
		t.Errorf("holder kinds = %s", h)
	}
}

// Each way a reference fails, with the key rules: a named key, "*" the only
// key, "+" any key.
func TestCheckObjectRefs(t *testing.T) {
	refs, err := ParseObjectRefs("a.ref kinds=ConfigMap keys=lua,+; b.ref keys=ca.crt,*; c.ref keys=client-secret; d.ref")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	holders := map[string][]string{
		"ConfigMap ns1/other-key": {"x"},
		"ConfigMap ns1/empty":     {},
		"Secret ns1/one":          {"tls.crt"},
		"Secret ns1/two":          {"tls.crt", "tls.key"},
		"Secret ns1/cs":           {"client-secret"},
		"Secret granted/s":        {},
		"Secret hidden/s":         {},
	}
	keys := func(r topology.Ref) ([]string, bool) { v, ok := holders[r.String()]; return v, ok }
	unread := func(r topology.Ref) bool { return r.Namespace == "hidden" }
	granted := func(r topology.Ref) bool { return r.Namespace == "granted" }
	for _, c := range []struct{ spec, want string }{
		{`"a": {"ref": {"kind": "ConfigMap", "name": "other-key"}}`, ""},
		{`"a": {"ref": {"kind": "ConfigMap", "name": "empty"}}`, "spec.a.ref: ConfigMap ns1/empty has no key lua (nor any other key)"},
		{`"b": {"ref": {"name": "one"}}`, ""},
		{`"b": {"ref": {"name": "two"}}`, "spec.b.ref: Secret ns1/two has no key ca.crt (nor a single key)"},
		{`"c": {"ref": {"name": "cs"}}`, ""},
		{`"c": {"ref": {"name": "one"}}`, "spec.c.ref: Secret ns1/one has no key client-secret"},
		{`"d": {"ref": {"name": "absent"}}`, "spec.d.ref: Secret ns1/absent not found"},
		{`"d": {"ref": {"name": "s", "namespace": "granted"}}`, ""},
		{`"d": {"ref": {"name": "s", "namespace": "hidden"}}`, ""},
		{`"d": {"ref": {"name": "s", "namespace": "closed"}}`, "spec.d.ref: Secret closed/s is in another namespace and no ReferenceGrant in namespace closed allows ColorPolicy.policies.example.com from namespace ns1 to name it"},
	} {
		p := parse(t, k, withTargets(c.spec))
		var msgs []string
		for _, pr := range p.CheckObjectRefs(keys, unread, granted) {
			msgs = append(msgs, pr.Message)
		}
		if got := strings.Join(msgs, "; "); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.spec, got, c.want)
		}
	}
}

// The setting is validated from Go and read from the CRD annotation.
func TestObjectRefsSetting(t *testing.T) {
	if _, err := NewKind(Spec{GroupKind: colorGK, Class: Direct, ObjectRefs: []ObjectRefPath{{Path: "a..b"}}}); err == nil || !strings.Contains(err.Error(), "not a dotted path") {
		t.Errorf("bad path from Go: %v, want an error saying so", err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: []ObjectRefPath{{Path: "a.ref"}}})
	if got := ObjectRefsString(k.ObjectRefs); got != "a.ref kinds=Secret" {
		t.Errorf("Go default = %q, want a.ref kinds=Secret", got)
	}
	k = mustKindFromCRD(t, newCRD(policyLabel("Direct"), map[string]string{AnnotationObjectRefs: "spec.oidc.clientSecret keys=client-secret"}), nil)
	if got := ObjectRefsString(k.ObjectRefs); got != "oidc.clientSecret kinds=Secret keys=client-secret" || k.Origins[SettingObjectRefs] != FromAnnotation {
		t.Errorf("objectRefs = %q (origin %q), want oidc.clientSecret kinds=Secret keys=client-secret from the annotation", got, k.Origins[SettingObjectRefs])
	}
}

// A path with when= judges a reference only where the object holding it
// has the discriminator's value.
func TestReadObjectRefsWhen(t *testing.T) {
	refs, err := ParseObjectRefs("lua[].valueRef kinds=ConfigMap when=type=ValueRef")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	p := parse(t, k, withTargets(`"lua": [
  {"type": "ValueRef", "valueRef": {"kind": "ConfigMap", "name": "a"}},
  {"type": "Inline", "inline": "x", "valueRef": {"kind": "ConfigMap", "name": "stray"}},
  {"valueRef": {"kind": "ConfigMap", "name": "untyped"}},
  {"type": 3, "valueRef": {"kind": "ConfigMap", "name": "odd"}}
]`))
	var got []string
	for _, r := range p.ObjectRefs {
		got = append(got, r.Object.String()+"@"+r.Field)
	}
	if fmt.Sprint(got) != "[ConfigMap ns1/a@spec.lua[0].valueRef]" {
		t.Errorf("object refs = %v, want only the ValueRef entry's", got)
	}
}

// The key a reference reads of a holder: the first of its keys the holder
// has, "*" its only key, "+" its first; without keys, its first.
// A path with a default (default-label=) that the policy gives no
// reference at reads the default: one reference naming no object, the
// kind and the policy's namespace looked in; none when the policy gives
// one, or when unless= holds (a boolean or a string compared as written).
func TestReadObjectRefsDefault(t *testing.T) {
	refs, err := ParseObjectRefs("providerRefs[] missing=not-programmed default-label=kuadrant.io/default-provider=true unless=delegate=true")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	for _, c := range []struct {
		spec     string
		defaults []DefaultHolder
		named    []topology.Ref
	}{
		{`{}`, []DefaultHolder{{Kind: KindSecret, Namespace: "ns1", Label: "kuadrant.io/default-provider=true"}}, nil},
		{`{"providerRefs": []}`, []DefaultHolder{{Kind: KindSecret, Namespace: "ns1", Label: "kuadrant.io/default-provider=true"}}, nil},
		{`{"providerRefs": [{"name": "aws"}]}`, nil, []topology.Ref{{Kind: "Secret", Namespace: "ns1", Name: "aws"}}},
		{`{"delegate": true}`, nil, nil},
		{`{"delegate": "true"}`, nil, nil},
		{`{"delegate": false}`, []DefaultHolder{{Kind: KindSecret, Namespace: "ns1", Label: "kuadrant.io/default-provider=true"}}, nil},
	} {
		p := parse(t, k, withTargets(strings.TrimSuffix(strings.TrimPrefix(c.spec, "{"), "}")))
		if got := p.DefaultHolders(); !slices.Equal(got, c.defaults) {
			t.Errorf("%s: defaults %v, want %v", c.spec, got, c.defaults)
		}
		if got := p.HolderRefs(); !slices.Equal(got, c.named) {
			t.Errorf("%s: named %v, want %v", c.spec, got, c.named)
		}
		// Judged with the holders found: one resolves, none or two do
		// not; without a lookup the default is not judged.
		for _, found := range [][]topology.Ref{nil, {{Kind: "Secret", Namespace: "ns1", Name: "a"}}, {{Kind: "Secret", Namespace: "ns1", Name: "a"}, {Kind: "Secret", Namespace: "ns1", Name: "b"}}} {
			h := Holders{Keys: func(r topology.Ref) ([]string, bool) { return []string{"k"}, r.Name != "" }, Granted: func(topology.Ref) bool { return true },
				Labelled: func(gk topology.GroupKind, ns, label string) []topology.Ref { return found }}
			probs := p.WaitingObjectRefsWith(h)
			if wantProbs := len(c.defaults) > 0 && len(found) != 1; (len(probs) > 0) != wantProbs {
				t.Errorf("%s with %d labelled: problems %v", c.spec, len(found), probs)
			}
			h.Labelled = nil
			if probs := p.WaitingObjectRefsWith(h); len(c.defaults) > 0 && len(probs) > 0 {
				t.Errorf("%s without a lookup: problems %v, want the default not judged", c.spec, probs)
			}
		}
	}
}

func TestKeyRead(t *testing.T) {
	for _, c := range []struct {
		have, keys []string
		want       string
	}{
		{[]string{"a", "ca.crl"}, []string{"ca.crl", "*"}, "ca.crl"},
		{[]string{"other"}, []string{"ca.crl", "*"}, "other"},
		{[]string{"a", "b"}, []string{"ca.crl", "*"}, ""},
		{[]string{"a", "b"}, []string{"x", "+"}, "a"},
		{[]string{"b", "c"}, nil, "b"},
		{nil, nil, ""},
	} {
		if got := keyRead(c.have, c.keys); got != c.want {
			t.Errorf("keyRead(%v, %v) = %q, want %q", c.have, c.keys, got, c.want)
		}
	}
}

// An issuer reference: its kind picks Issuer (the policy's namespace) or
// ClusterIssuer (no namespace); with kind=required, one naming no kind
// resolves to nothing; with ready=Ready, one whose issuer's status does
// not hold Ready=True is reported, one with no status is not.
func TestIssuerRefs(t *testing.T) {
	refs, err := ParseObjectRefs("issuerRef kinds=Issuer,ClusterIssuer ready=Ready kind=required")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	issuer := topology.Ref{Group: KindIssuer.Group, Kind: KindIssuer.Kind, Namespace: "ns1", Name: "a"}
	cluster := topology.Ref{Group: KindClusterIssuer.Group, Kind: KindClusterIssuer.Kind, Name: "global"}
	for _, c := range []struct {
		ref    string
		object topology.Ref
		exists bool
		status []string // nil: no conditions
		broken string
		ready  string
	}{
		{`{"kind": "Issuer", "name": "a"}`, issuer, true, []string{"Ready"}, "", ""},
		{`{"group": "cert-manager.io", "kind": "Issuer", "name": "a"}`, issuer, true, []string{"Other"}, "", "spec.issuerRef: Issuer ns1/a is not Ready"},
		{`{"kind": "Issuer", "name": "a"}`, issuer, true, nil, "", ""},
		{`{"kind": "Issuer", "name": "a"}`, issuer, false, nil, "spec.issuerRef: Issuer ns1/a not found", ""},
		{`{"kind": "ClusterIssuer", "name": "global"}`, cluster, true, []string{}, "", "spec.issuerRef: ClusterIssuer global is not Ready"},
		{`{"kind": "ClusterIssuer", "name": "global"}`, cluster, false, nil, "spec.issuerRef: ClusterIssuer global not found", ""},
		{`{"name": "a"}`, issuer, true, []string{"Other"}, "spec.issuerRef: names no kind", ""},
	} {
		p := parse(t, k, withTargets(`"issuerRef": `+c.ref))
		if len(p.ObjectRefs) != 1 || p.ObjectRefs[0].Object != c.object {
			t.Fatalf("%s: references %+v, want %v", c.ref, p.ObjectRefs, c.object)
		}
		probs := p.CheckObjectRefs(func(r topology.Ref) ([]string, bool) { return nil, c.exists && r == c.object }, nil, func(topology.Ref) bool { return false })
		var broken string
		if len(probs) > 0 {
			broken = probs[0].Message
		}
		if !strings.HasPrefix(broken, c.broken) || (c.broken == "") != (broken == "") {
			t.Errorf("%s: broken %q, want %q", c.ref, broken, c.broken)
		}
		nr := p.NotReadyRefs(func(r topology.Ref) ([]string, bool, bool) {
			return c.status, c.status != nil, c.exists && r == c.object
		})
		var ready string
		if len(nr) > 0 {
			ready = nr[0].Message
		}
		if ready != c.ready {
			t.Errorf("%s: not ready %q, want %q", c.ref, ready, c.ready)
		}
	}
}

// A reference at a path with missing=not-programmed never makes its
// policy Invalid (CheckObjectRefs leaves it out) and is resolved by
// WaitingObjectRefs instead: missing, or in a namespace no grant opens;
// an unread one is not judged.
func TestWaitingObjectRefs(t *testing.T) {
	refs, err := ParseObjectRefs("providerRefs[] missing=not-programmed; other.secretRef")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, ObjectRefs: refs})
	p := parse(t, k, withTargets(`"providerRefs": [{"name": "gone"}, {"name": "there"}, {"name": "far", "namespace": "other"}, {"name": "unread"}],
  "other": {"secretRef": {"name": "gone"}}`))
	keys := func(r topology.Ref) ([]string, bool) { return nil, r.Name == "there" || r.Name == "far" }
	unread := func(r topology.Ref) bool { return r.Name == "unread" }
	granted := func(topology.Ref) bool { return false }
	var invalid, waiting []string
	for _, pr := range p.CheckObjectRefs(keys, unread, granted) {
		invalid = append(invalid, pr.Message)
	}
	for _, pr := range p.WaitingObjectRefs(keys, unread, granted) {
		waiting = append(waiting, pr.Message)
	}
	if want := []string{"spec.other.secretRef: Secret ns1/gone not found"}; !slices.Equal(invalid, want) {
		t.Errorf("CheckObjectRefs: %q, want %q", invalid, want)
	}
	if want := []string{"spec.providerRefs[0]: Secret ns1/gone not found",
		"spec.providerRefs[2]: Secret other/far is in another namespace and no ReferenceGrant in namespace other allows " + p.Ref.GroupKind().String() + " from namespace ns1 to name it"}; !slices.Equal(waiting, want) {
		t.Errorf("WaitingObjectRefs: %q, want %q", waiting, want)
	}
}
