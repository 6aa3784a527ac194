package policy

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/topology"
)

func TestParseCARefs(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "validation.caCertificateRefs", want: "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt"},
		{in: "spec.validation.caCertificateRefs kinds=ConfigMap,Secret.core keys=ca.crt,tls.crt,*", want: "validation.caCertificateRefs kinds=ConfigMap,Secret keys=ca.crt,tls.crt,*"},
		{in: " none ", want: ""},
		{in: "", err: "names no field"},
		{in: "x kinds=ClusterTrustBundle,ClusterTrustBundle.certificates.k8s.io", want: "x kinds=ClusterTrustBundle,ClusterTrustBundle keys=ca.crt"},
		{in: "x kinds=ClusterTrustBundle.core", err: `kind "ClusterTrustBundle.core" cannot hold CA certificates`},
		{in: "x kinds=Service", err: `kind "Service" cannot hold CA certificates`},
		{in: "x; controller=example.com/gw kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any ;",
			want: "x kinds=ConfigMap keys=ca.crt; controller=example.com/gw kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any"},
		{in: "x groups=any; controller=a/b; controller=c/d kinds=Secret", want: "x kinds=ConfigMap keys=ca.crt groups=any; controller=a/b kinds=ConfigMap keys=ca.crt; controller=c/d kinds=Secret keys=ca.crt"},
		{in: "x; kinds=Secret", err: "want controller=<GatewayClass controllerName> first"},
		{in: "x; controller=", err: "want controller=<GatewayClass controllerName> first"},
		{in: "x; controller=a/b; controller=a/b", err: "controller a/b is given twice"},
		{in: "x; controller=a/b groups=some", err: `unexpected "groups=some" after controller=a/b`},
		{in: "x; controller=a/b kinds=Pod", err: `kind "Pod" cannot hold`},
		{in: "x; controller=a/b kinds=Secret max=1", want: "x kinds=ConfigMap keys=ca.crt; controller=a/b kinds=Secret keys=ca.crt max=1"},
		{in: "x max=0", err: "max=0 after the field: want a positive number"},
		{in: "none;", err: "not a dotted path"},
		{in: "x secret-keys=", err: "secret-keys= after the field: want data keys"},
		{in: "x strict strict", err: `unexpected "strict"`},
		{in: "x; controller=a/b max=two", err: "max=two after controller=a/b: want a positive number"},
		{in: "x keys=*,ca.crt", err: `"*" (the only key) last`},
		{in: "x kinds=ConfigMap kinds=Secret", err: `unexpected "kinds=Secret"`},
		{in: "a..b", err: "not a dotted path"},
		{in: "x other", err: `unexpected "other"`},
		{in: "x; controller=a/b kinds=ConfigMap,Secret sds-type=example.com/sds sds-feature=Impl.sds", want: "x kinds=ConfigMap keys=ca.crt; controller=a/b kinds=ConfigMap,Secret keys=ca.crt sds-type=example.com/sds sds-feature=Impl.sds"},
		{in: "x kinds=ConfigMap sds-type=example.com/sds", err: "sds type example.com/sds: Secret is not among the kinds"},
		{in: "x kinds=Secret sds-feature=Impl.sds", err: "want a feature name, with sds-type"},
		{in: "x kinds=Secret secret-type=t sds-type=t", err: "sds type t is also the secret type"},
		{in: "x kinds=Secret sds-type=a sds-type=b", err: `unexpected "sds-type=b"`},
	} {
		r, err := ParseCARefs(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && r.String() != c.want:
			t.Errorf("%q read as %q, want %q", c.in, r.String(), c.want)
		}
	}
}

// Malformed references are problems naming the entry; well-formed ones are
// read with the policy's namespace, group core as "".
func TestReadCARefs(t *testing.T) {
	k := mustKind(t, Spec{Class: Direct, CARefs: CARefs{Field: "validation.caCertificateRefs"}})
	p := parse(t, k, withTargets(`"validation": {"caCertificateRefs": [{"group": "core", "kind": "ConfigMap", "name": "ca"}, {"kind": "ConfigMap"}, "x"]}`))
	if len(p.CARefs) != 1 || p.CARefs[0].Ref().String() != "ConfigMap ns1/ca" {
		t.Errorf("refs = %+v", p.CARefs)
	}
	var fields []string
	for _, pr := range p.Problems {
		fields = append(fields, pr.Field)
	}
	if strings.Join(fields, ",") != "spec.validation.caCertificateRefs[1],spec.validation.caCertificateRefs[2]" {
		t.Errorf("problems = %v", p.Problems)
	}
}

// References are judged as the reading given says: its kinds (by kind
// alone when groups=any), its keys; a ClusterTrustBundle is
// cluster-scoped and holds certificates when its trust bundle is set.
func TestCheckCARefsAs(t *testing.T) {
	r, err := ParseCARefs("validation.caCertificateRefs; controller=eg kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, CARefs: r})
	p := parse(t, k, withTargets(`"validation": {"caCertificateRefs": [
		{"group": "", "kind": "ClusterTrustBundle", "name": "bundle"},
		{"group": "certificates.k8s.io", "kind": "ClusterTrustBundle", "name": "empty"},
		{"group": "", "kind": "Secret", "name": "s"},
		{"group": "", "kind": "ConfigMap", "name": "cm"}]}`))
	holders := map[string]Holder{
		"ClusterTrustBundle.certificates.k8s.io bundle": {Keys: []string{TrustBundleKey}},
		"ClusterTrustBundle.certificates.k8s.io empty":  {},
		"Secret ns1/s":     {Keys: []string{"tls.crt"}, Type: "Opaque"},
		"ConfigMap ns1/cm": {Keys: []string{"a", "b"}},
	}
	holder := func(ref topology.Ref) (Holder, bool) { h, ok := holders[ref.String()]; return h, ok }
	judge := func(r CARefs) string {
		probs, valid, _ := p.CheckCARefsAs(r, holder, nil)
		var out []string
		for _, pr := range probs {
			out = append(out, pr.Reason+": "+pr.Message)
		}
		return fmt.Sprintf("%d valid; %s", valid, strings.Join(out, "; "))
	}
	if got, want := judge(k.CARefs.For("")), "0 valid; "+
		"InvalidKind: spec.validation.caCertificateRefs[0]: kind ClusterTrustBundle is not supported (supported: ConfigMap); "+
		"InvalidKind: spec.validation.caCertificateRefs[1]: kind ClusterTrustBundle.certificates.k8s.io is not supported (supported: ConfigMap); "+
		"InvalidKind: spec.validation.caCertificateRefs[2]: kind Secret is not supported (supported: ConfigMap); "+
		"InvalidCACertificateRef: spec.validation.caCertificateRefs[3]: ConfigMap ns1/cm has no key ca.crt"; got != want {
		t.Errorf("default reading:\n got %s\nwant %s", got, want)
	}
	if got, want := judge(k.CARefs.For("eg")), "2 valid; "+
		"InvalidCACertificateRef: spec.validation.caCertificateRefs[1]: ClusterTrustBundle empty has an empty trust bundle; "+
		"InvalidCACertificateRef: spec.validation.caCertificateRefs[3]: ConfigMap ns1/cm has no key ca.crt or tls.crt (nor a single key)"; got != want {
		t.Errorf("eg reading:\n got %s\nwant %s", got, want)
	}
	if got := judge(k.CARefs.For("other")); !strings.HasPrefix(got, "0 valid;") {
		t.Errorf("another controller reads as the default: %s", got)
	}
	var refs []string
	for _, h := range p.HolderRefs() {
		refs = append(refs, h.String())
	}
	if got, want := strings.Join(refs, ", "), "ClusterTrustBundle.certificates.k8s.io bundle, ClusterTrustBundle.certificates.k8s.io empty, Secret ns1/s, ConfigMap ns1/cm"; got != want {
		t.Errorf("HolderRefs = %s, want %s", got, want)
	}
	if got := kindsString(k.HolderKinds()); got != "ConfigMap, Secret, ClusterTrustBundle.certificates.k8s.io" {
		t.Errorf("HolderKinds = %s", got)
	}
}

// Envoy Gateway's strict reading: other kinds are skipped beside known
// ones, and any reference that does not resolve counts; an empty bundle
// adds nothing, and fails only when nothing else gives a certificate.
// NGINX Gateway Fabric's: a Secret of the type asked for, with every
// secret key.
func TestCheckCARefsStrictAndSecrets(t *testing.T) {
	r, err := ParseCARefs("validation.caCertificateRefs; controller=eg kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any strict skip-unknown; controller=ngf kinds=ConfigMap,Secret keys=ca.crt max=1 secret-type=kubernetes.io/tls secret-keys=tls.crt,tls.key")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(); got != "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt; controller=eg kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,tls.crt,* groups=any strict skip-unknown; controller=ngf kinds=ConfigMap,Secret keys=ca.crt max=1 secret-type=kubernetes.io/tls secret-keys=tls.crt,tls.key" {
		t.Errorf("round trip: %s", got)
	}
	k := mustKind(t, Spec{Class: Direct, CARefs: r})
	holders := map[string]Holder{
		"ConfigMap ns1/good":                           {Keys: []string{"ca.crt"}},
		"ClusterTrustBundle.certificates.k8s.io empty": {},
		"Secret ns1/opaque":                            {Keys: []string{"ca.crt"}, Type: "Opaque"},
		"Secret ns1/tls":                               {Keys: []string{"tls.crt", "tls.key"}, Type: "kubernetes.io/tls"},
		"Secret ns1/half":                              {Keys: []string{"tls.crt"}, Type: "kubernetes.io/tls"},
	}
	holder := func(ref topology.Ref) (Holder, bool) { h, ok := holders[ref.String()]; return h, ok }
	judge := func(ctl, refs string) string {
		p := parse(t, k, withTargets(`"validation": {"caCertificateRefs": [`+refs+`]}`))
		probs, valid, _ := p.CheckCARefsAs(k.CARefs.For(ctl), holder, nil)
		out := fmt.Sprintf("%d valid", valid)
		for _, pr := range probs {
			out += "; " + pr.Reason + ": " + strings.TrimPrefix(pr.Message, "spec.validation.caCertificateRefs")
		}
		return out
	}
	for _, tc := range []struct{ ctl, refs, want string }{
		{"eg", `{"kind": "ConfigMap", "name": "good"}, {"kind": "Foo", "name": "x"}`, "1 valid"},
		{"eg", `{"kind": "Foo", "name": "x"}`, "0 valid; InvalidKind: [0]: kind Foo is not supported (supported: ConfigMap, Secret, ClusterTrustBundle.certificates.k8s.io)"},
		{"eg", `{"kind": "ConfigMap", "name": "good"}, {"kind": "ClusterTrustBundle", "name": "empty"}`, "1 valid"},
		{"eg", `{"kind": "ClusterTrustBundle", "name": "empty"}`, "0 valid; InvalidCACertificateRef: [0]: ClusterTrustBundle empty has an empty trust bundle, and no other reference gives a certificate"},
		{"eg", `{"kind": "ConfigMap", "name": "good"}, {"kind": "ConfigMap", "name": "gone"}`, "1 valid; InvalidCACertificateRef: [1]: ConfigMap ns1/gone not found"},
		{"ngf", `{"kind": "Secret", "name": "tls"}`, "1 valid"},
		{"ngf", `{"kind": "Secret", "name": "opaque"}`, `0 valid; InvalidCACertificateRef: [0]: Secret ns1/opaque is of type "Opaque", not kubernetes.io/tls`},
		{"ngf", `{"kind": "Secret", "name": "half"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/half has no key tls.key"},
		{"ngf", `{"kind": "ConfigMap", "name": "good"}`, "1 valid"},
		// The default reading: no skipping, a bundle is no kind it reads.
		{"", `{"kind": "ConfigMap", "name": "good"}, {"kind": "Foo", "name": "x"}`, "1 valid; InvalidKind: [1]: kind Foo is not supported (supported: ConfigMap)"},
	} {
		if got := judge(tc.ctl, tc.refs); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.ctl, tc.refs, got, tc.want)
		}
	}
}

// An SDS reference Secret (Envoy Gateway's reading, SDSType): taken, as
// the CA, with the reading's feature on, a secretName and a unix url
// (what holderdata read of its values); refused with the feature off, as
// a second one, without either key or with one empty, with a URL Envoy
// Gateway does not take, and beside certificates (then no reference
// counts as valid: Envoy Gateway fails the policy).
func TestCheckCARefsSDS(t *testing.T) {
	r, err := ParseCARefs("validation.caCertificateRefs; controller=eg kinds=ConfigMap,Secret keys=ca.crt,tls.crt,* groups=any strict skip-unknown sds-type=gateway.envoyproxy.io/sds sds-feature=EG.sds")
	if err != nil {
		t.Fatal(err)
	}
	k := mustKind(t, Spec{Class: Direct, CARefs: r})
	const sdsType = "gateway.envoyproxy.io/sds"
	fact := func(v string) holderdata.Fact {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "type": holderdata.SDSSecretType, "stringData": map[string]any{holderdata.URLKey: v, "other": v}}}
		return holderdata.Read(u)[holderdata.URLKey]
	}
	good := map[string]holderdata.Fact{"secretName": holderdata.Of([]byte("ROOTCA")), "url": fact("unix:///var/run/sds.sock")}
	holders := map[string]Holder{
		"ConfigMap ns1/ca":     {Keys: []string{"ca.crt"}},
		"Secret ns1/sds":       {Keys: []string{"secretName", "url"}, Type: sdsType, Facts: good},
		"Secret ns1/sds2":      {Keys: []string{"secretName", "url"}, Type: sdsType, Facts: good},
		"Secret ns1/no-name":   {Keys: []string{"url"}, Type: sdsType, Facts: good},
		"Secret ns1/empty":     {Keys: []string{"secretName", "url"}, Type: sdsType, Facts: map[string]holderdata.Fact{"secretName": holderdata.Of(nil), "url": good["url"]}},
		"Secret ns1/http":      {Keys: []string{"secretName", "url"}, Type: sdsType, Facts: map[string]holderdata.Fact{"secretName": good["secretName"], "url": fact("http://sds:8080")}},
		"Secret ns1/unread":    {Keys: []string{"secretName", "url"}, Type: sdsType},
		"Secret ns1/plain-sds": {Keys: []string{"ca.crt"}, Type: "Opaque"},
	}
	holder := func(ref topology.Ref) (Holder, bool) { h, ok := holders[ref.String()]; return h, ok }
	judge := func(ctl string, on bool, refs string) string {
		p := parse(t, k, withTargets(`"validation": {"caCertificateRefs": [`+refs+`]}`))
		probs, valid, _ := p.CheckCARefsWith(k.CARefs.For(ctl), CAHolders{Holder: holder, Features: Features{"EG.sds": {On: on}}})
		out := fmt.Sprintf("%d valid", valid)
		for _, pr := range probs {
			out += "; " + pr.Reason + ": " + strings.TrimPrefix(pr.Message, "spec.validation.caCertificateRefs")
		}
		return out
	}
	for _, tc := range []struct {
		ctl        string
		on         bool
		refs, want string
	}{
		{"eg", true, `{"kind": "Secret", "name": "sds"}`, "1 valid"},
		{"eg", true, `{"kind": "Secret", "name": "unread"}`, "1 valid"}, // values not read: keys alone judged
		{"eg", false, `{"kind": "Secret", "name": "sds"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/sds is an SDS reference Secret (type gateway.envoyproxy.io/sds), and SDS Secret references are off: EG.sds is not set"},
		{"eg", true, `{"kind": "Secret", "name": "sds"}, {"kind": "Secret", "name": "sds2"}`, "1 valid; InvalidCACertificateRef: [1]: Secret ns1/sds2 is a second SDS reference Secret: one policy may name one"},
		{"eg", true, `{"kind": "Secret", "name": "no-name"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/no-name is an invalid SDS reference Secret: no secretName found"},
		{"eg", true, `{"kind": "Secret", "name": "empty"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/empty is an invalid SDS reference Secret: no secretName found"},
		{"eg", true, `{"kind": "Secret", "name": "http"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/http is an invalid SDS reference Secret: invalid URL in it: unsupported URL scheme: http"},
		{"eg", true, `{"kind": "Secret", "name": "sds"}, {"kind": "ConfigMap", "name": "ca"}`, "0 valid; InvalidCACertificateRef: [0]: Secret ns1/sds is an SDS reference Secret, which cannot be mixed with other CA certificate references"},
		{"eg", true, `{"kind": "Secret", "name": "plain-sds"}`, "1 valid"},
		// The default reading has no SDS: such a Secret is read for a
		// certificate (and holds none).
		{"", true, `{"kind": "Secret", "name": "sds"}`, "0 valid; InvalidKind: [0]: kind Secret is not supported (supported: ConfigMap)"},
	} {
		if got := judge(tc.ctl, tc.on, tc.refs); got != tc.want {
			t.Errorf("%s on=%v %s:\n got %s\nwant %s", tc.ctl, tc.on, tc.refs, got, tc.want)
		}
	}
	if got := r.SDSFeatures(); len(got) != 1 || got[0] != "EG.sds" {
		t.Errorf("SDSFeatures: %v", got)
	}
	if got := r.SDSTypes(); len(got) != 1 || got[0] != sdsType {
		t.Errorf("SDSTypes: %v", got)
	}
}
