package policy

import (
	"strings"
	"testing"
)

func TestParseCARefs(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "validation.caCertificateRefs", want: "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt"},
		{in: "spec.validation.caCertificateRefs kinds=ConfigMap,Secret.core keys=ca.crt,tls.crt,*", want: "validation.caCertificateRefs kinds=ConfigMap,Secret keys=ca.crt,tls.crt,*"},
		{in: " none ", want: ""},
		{in: "", err: "names no field"},
		{in: "x kinds=ClusterTrustBundle", err: `kind "ClusterTrustBundle" cannot hold CA certificates`},
		{in: "x keys=*,ca.crt", err: `"*" (the only key) last`},
		{in: "x kinds=ConfigMap kinds=Secret", err: `unexpected "kinds=Secret"`},
		{in: "a..b", err: "not a dotted path"},
		{in: "x other", err: `unexpected "other"`},
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
