package engine_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/attache-dev/attache/internal/testpki"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/holderdata"
)

// secretDoc is a Secret of namespace default holding data (key to value,
// base64-encoded here).
func secretDoc(name string, data map[string]string) string {
	s := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: default}\ndata:\n"
	for k, v := range data {
		s += "  " + k + ": " + base64.StdEncoding.EncodeToString([]byte(v)) + "\n"
	}
	return s
}

// redacted is objs with their ConfigMaps' and Secrets' values replaced as
// the cluster reader and the controller's cache replace them.
func redacted(objs []engine.Object) []engine.Object {
	out := make([]engine.Object, len(objs))
	for i, o := range objs {
		u := o.Object.DeepCopy()
		if k := u.GetKind(); k == "Secret" || k == "ConfigMap" {
			holderdata.Redact(u)
		}
		out[i] = engine.Object{Object: u, Source: o.Source}
	}
	return out
}

// Envoy Gateway's client CRLs (objectRefs content=crl): a
// ClientTrafficPolicy naming a CRL that is expired, not yet in force, or
// no CRL at all is Invalid at a Gateway with a listener terminating TLS,
// naming the reference, the Secret and why; one in force is Accepted; at a
// Gateway with plain HTTP listeners only, the CRL is not read. The same
// from the values as from what the cluster reader keeps of them.
func TestObjectDataCRL(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ca := testpki.NewCA(t)
	docs := []string{crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		secretDoc("in-force", map[string]string{"ca.crl": ca.CRL(t, now.Add(-time.Hour), now.Add(time.Hour))}),
		secretDoc("expired", map[string]string{"ca.crl": ca.CRL(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour))}),
		secretDoc("future", map[string]string{"ca.crl": ca.CRL(t, now.Add(time.Hour), now.Add(48*time.Hour))}),
		secretDoc("garbage", map[string]string{"ca.crl": "not a CRL"}),
	}
	crl := func(secret string) string { return "tls: {clientValidation: {crl: {refs: [{name: " + secret + "}]}}}" }
	for i, s := range []string{"in-force", "expired", "future", "garbage"} {
		docs = append(docs, gatewayDoc("tls-"+s, "eg", "["+httpsListener+"]", ""),
			pol(egV, "ClientTrafficPolicy", s, i, gatewayTarget("tls-"+s, "")+crl(s)))
	}
	docs = append(docs, gatewayDoc("plain", "eg", "[{name: http, protocol: HTTP, port: 80}]", ""),
		pol(egV, "ClientTrafficPolicy", "expired-on-plain", 9, gatewayTarget("plain", "")+crl("expired")))
	objs := decodeDocs(t, docs...)
	opts := engine.Options{Now: func() time.Time { return now }}
	for name, in := range map[string][]engine.Object{"values": objs, "redacted": redacted(objs)} {
		res := engine.Compute(in, opts)
		for pol, w := range map[string]string{
			"in-force": "True/Accepted", "expired": "False/Invalid", "future": "False/Invalid", "garbage": "False/Invalid",
			"expired-on-plain": "True/Accepted",
		} {
			want(t, name+" "+pol, status(t, res, pol, "Accepted"), w)
		}
		if msg := ancestorMessage(t, res, "expired"); msg != "data its implementation refuses: spec.tls.clientValidation.crl.refs[0]: Secret default/expired: ca.crl: the CRL is expired (next update was due at 2026-05-31T00:00:00Z)" {
			t.Errorf("%s: expired: message %q", name, msg)
		}
		wantProblem(t, res, "future", "spec.tls.clientValidation.crl.refs[0]", "data refused by its implementation: Secret default/future: ca.crl: the CRL is not yet valid (this update starts at 2026-06-01T01:00:00Z)")
		wantProblem(t, res, "garbage", "spec.tls.clientValidation.crl.refs[0]", "data refused by its implementation: Secret default/garbage: ca.crl: no PEM data")
	}
}

// Incremental: a CRL in force is judged again once it expires (the whole
// input is recomputed then), without any object changing.
func TestObjectDataCRLExpiresIncrementally(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	ca := testpki.NewCA(t)
	objs := decodeDocs(t, crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		secretDoc("crl", map[string]string{"ca.crl": ca.CRL(t, now.Add(-time.Hour), now.Add(time.Hour))}),
		gatewayDoc("g", "eg", "["+httpsListener+"]", ""),
		pol(egV, "ClientTrafficPolicy", "p", 0, gatewayTarget("g", "")+"tls: {clientValidation: {crl: {refs: [{name: crl}]}}}"))
	clock := now
	in := engine.NewIncremental(engine.Options{Now: func() time.Time { return clock }})
	want(t, "in force", status(t, in.Compute(objs), "p", "Accepted"), "True/Accepted")
	if got, want := in.NextRecheck(), now.Add(time.Hour+time.Nanosecond); !got.Equal(want) {
		t.Errorf("NextRecheck = %s, want just after the CRL's next update %s", got, want)
	}
	clock = now.Add(30 * time.Minute)
	want(t, "still in force", status(t, in.Compute(objs), "p", "Accepted"), "True/Accepted")
	if c := in.LastChange(); c.Full {
		t.Errorf("recomputed all before the CRL expired: %s", c.Reason)
	}
	clock = now.Add(2 * time.Hour)
	want(t, "expired", status(t, in.Compute(objs), "p", "Accepted"), "False/Invalid")
	if c := in.LastChange(); !c.Full || !strings.Contains(c.Reason, "CRL") {
		t.Errorf("LastChange = %+v, want all recomputed for the CRL", c)
	}
	if got := in.NextRecheck(); !got.IsZero() {
		t.Errorf("NextRecheck = %s once expired, want none", got)
	}
}

// Envoy Gateway's API keys (objectRefs content=distinct): the keys of the
// Secrets a SecurityPolicy names must differ, a client ID met again in a
// later Secret skipped (its value not compared); a repeated key makes the
// policy Invalid, naming both.
func TestObjectDataDistinctAPIKeys(t *testing.T) {
	sp := crd("gateway.envoyproxy.io", "SecurityPolicy", "securitypolicies")
	secrets := secretDoc("keys-a", map[string]string{"client1": "k1", "client2": "k2"}) +
		secretDoc("keys-b", map[string]string{"client2": "k1", "client3": "k3"}) +
		secretDoc("keys-c", map[string]string{"client4": "k2"}) +
		secretDoc("keys-d", map[string]string{"a": "same", "b": "same"})
	apiKeys := func(names ...string) string {
		refs := make([]string, len(names))
		for i, n := range names {
			refs[i] = "{name: " + n + "}"
		}
		return "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r1}]\napiKeyAuth: {extractFrom: [{headers: [X-API-KEY]}], credentialRefs: [" + strings.Join(refs, ", ") + "]}"
	}
	for _, tc := range []struct {
		refs      []string
		want, msg string
	}{
		{[]string{"keys-a", "keys-b"}, "True/Accepted", ""},
		{[]string{"keys-a", "keys-c"}, "False/Invalid", "data its implementation refuses: spec.apiKeyAuth.credentialRefs[1]: Secret default/keys-c: the value of client4 is that of client2 of Secret default/keys-a: the values must be distinct"},
		{[]string{"keys-d"}, "False/Invalid", "data its implementation refuses: spec.apiKeyAuth.credentialRefs[0]: Secret default/keys-d: the value of b is that of a: the values must be distinct"},
	} {
		objs := decodeDocs(t, sp, egTopo, secrets, pol(egV, "SecurityPolicy", "p", 0, apiKeys(tc.refs...)))
		for name, in := range map[string][]engine.Object{"values": objs, "redacted": redacted(objs)} {
			res := engine.Compute(in, engine.Options{})
			want(t, name+" "+strings.Join(tc.refs, ","), status(t, res, "p", "Accepted"), tc.want)
			if tc.msg != "" {
				if msg := ancestorMessage(t, res, "p"); msg != tc.msg {
					t.Errorf("%s %v: message %q, want %q", name, tc.refs, msg, tc.msg)
				}
			}
		}
	}
}

// A ConfigMap's CRL is read from its data only, as Envoy Gateway reads
// it: a CRL under binaryData does not count, and the only key of data is
// read then.
func TestObjectDataCRLNotFromBinaryData(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	crl := testpki.NewCA(t).CRL(t, now.Add(-time.Hour), now.Add(time.Hour))
	b64 := base64.StdEncoding.EncodeToString([]byte(crl))
	cm := func(name, data, binary string) string {
		return "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: " + data + "\nbinaryData: " + binary + "\n"
	}
	objs := decodeDocs(t, crd("gateway.envoyproxy.io", "ClientTrafficPolicy", "clienttrafficpolicies"),
		cm("binary-crl", "{x: garbage}", "{ca.crl: "+b64+"}"),
		cm("binary-only", "{}", "{ca.crl: "+b64+", other: "+b64+"}"),
		gatewayDoc("g1", "eg", "["+httpsListener+"]", ""), gatewayDoc("g2", "eg", "["+httpsListener+"]", ""),
		pol(egV, "ClientTrafficPolicy", "binary-crl", 0, gatewayTarget("g1", "")+"tls: {clientValidation: {crl: {refs: [{kind: ConfigMap, name: binary-crl}]}}}"),
		pol(egV, "ClientTrafficPolicy", "binary-only", 1, gatewayTarget("g2", "")+"tls: {clientValidation: {crl: {refs: [{kind: ConfigMap, name: binary-only}]}}}"))
	for name, in := range map[string][]engine.Object{"values": objs, "redacted": redacted(objs)} {
		res := engine.Compute(in, engine.Options{Now: func() time.Time { return now }})
		want(t, name+" binary-crl", status(t, res, "binary-crl", "Accepted"), "False/Invalid")
		wantProblem(t, res, "binary-crl", "spec.tls.clientValidation.crl.refs[0]", "data refused by its implementation: ConfigMap default/binary-crl: x: no PEM data")
		want(t, name+" binary-only", status(t, res, "binary-only", "Accepted"), "False/Invalid")
		wantProblem(t, res, "binary-only", "spec.tls.clientValidation.crl.refs[0]", "data refused by its implementation: ConfigMap default/binary-only: has no key ca.crl (nor")
	}
}
