package holderdata

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/internal/testpki"
)

var (
	t0   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next = t0.Add(48 * time.Hour)
)

// A CRL's window is read from its first PEM block; Check judges it at a
// time as Envoy Gateway does, and Changes says when that verdict changes.
func TestCRL(t *testing.T) {
	c := Of([]byte(testpki.NewCA(t).CRL(t, t0, next))).CRL
	if c.Err != "" || !c.ThisUpdate.Equal(t0) || !c.NextUpdate.Equal(next) {
		t.Fatalf("CRL = %+v", c)
	}
	for _, tc := range []struct {
		at      time.Time
		want    string
		changes time.Time
	}{
		{t0.Add(-time.Hour), "the CRL is not yet valid (this update starts at 2026-01-01T00:00:00Z)", t0},
		{t0.Add(time.Hour), "", next.Add(time.Nanosecond)},
		{next, "", next.Add(time.Nanosecond)},
		{next.Add(time.Second), "the CRL is expired (next update was due at 2026-01-03T00:00:00Z)", time.Time{}},
	} {
		if got := c.Check(tc.at); got != tc.want {
			t.Errorf("Check(%s) = %q, want %q", tc.at, got, tc.want)
		}
		if got := c.Changes(tc.at); !got.Equal(tc.changes) {
			t.Errorf("Changes(%s) = %s, want %s", tc.at, got, tc.changes)
		}
	}
	if c := Of([]byte("not pem")).CRL; c.Check(t0) != "no PEM data" || !c.Changes(t0).IsZero() {
		t.Errorf("no PEM: %+v", c)
	}
	cert := "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
	if c := Of([]byte(cert)).CRL; !strings.HasPrefix(c.Err, "no CRL: ") {
		t.Errorf("a certificate read as a CRL: %+v", c)
	}
	// A list without a next update never expires.
	if got := (CRL{ThisUpdate: t0}).Check(next.Add(1000 * time.Hour)); got != "" {
		t.Errorf("without a next update: %q", got)
	}
}

// Equal values have equal digests, others not.
func TestDigest(t *testing.T) {
	a, b, a2 := Of([]byte("key1")), Of([]byte("key2")), Of([]byte("key1"))
	if a.Digest != a2.Digest || a.Digest == b.Digest || len(a.Digest) != 32 {
		t.Errorf("digests %s %s %s", a.Digest, b.Digest, a2.Digest)
	}
}

// Redact replaces every value with a token that Read reads as it reads
// the value itself: a Secret's data and a ConfigMap's binaryData as
// base64, a ConfigMap's data and a Secret's stringData as text; no value
// is left.
func TestRedactKeepsTheFacts(t *testing.T) {
	crl := testpki.NewCA(t).CRL(t, t0, next)
	b64 := base64.StdEncoding.EncodeToString
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"}, "type": SDSSecretType,
			"data":       map[string]any{"ca.crl": b64([]byte(crl)), "client1": b64([]byte("key1")), "bad": "not base64!", "none": "", "spaces": b64([]byte(" \t\n")), "url": b64([]byte("http://sds.example"))},
			"stringData": map[string]any{"client2": "key1"}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
			"data":       map[string]any{"ca.crl": crl, "n": int64(3)},
			"binaryData": map[string]any{"bin": b64([]byte("key1"))}}},
	}
	for _, u := range objs {
		before := Read(u)
		red := u.DeepCopy()
		Redact(red)
		after := Read(red)
		if len(before) != len(after) {
			t.Fatalf("%s: %d facts, then %d", u.GetKind(), len(before), len(after))
		}
		for k, f := range before {
			g := after[k]
			if f.Digest != g.Digest || f.CRL.Err != g.CRL.Err || !f.CRL.ThisUpdate.Equal(g.CRL.ThisUpdate) || !f.CRL.NextUpdate.Equal(g.CRL.NextUpdate) || f.Empty != g.Empty || f.Blank != g.Blank || f.URL != g.URL {
				t.Errorf("%s %s: %+v, then %+v", u.GetKind(), k, f, g)
			}
		}
		for _, field := range []string{"data", "binaryData", "stringData"} {
			m, _ := red.Object[field].(map[string]any)
			for k, v := range m {
				if v == nil && k == "n" {
					continue // not a string: no fact
				}
				if s, _ := v.(string); !strings.HasPrefix(s, tokenPrefix) || strings.Contains(s, "key1") || strings.Contains(s, "BEGIN") {
					t.Errorf("%s %s.%s left as %q", u.GetKind(), field, k, v)
				}
			}
		}
	}
	facts := Read(objs[0])
	if facts["ca.crl"].CRL.Err != "" || !facts["ca.crl"].CRL.NextUpdate.Equal(next) {
		t.Errorf("Secret ca.crl: %+v", facts["ca.crl"])
	}
	if f := facts["none"]; !f.Empty || !f.Blank || facts["client1"].Empty || facts["client1"].Blank {
		t.Errorf("an empty value read as not empty, or the other way: %+v, %+v", f, facts["client1"])
	}
	if f := facts["spaces"]; f.Empty || !f.Blank {
		t.Errorf("white space read as %+v, want blank, not empty", f)
	}
	if f := facts["url"]; !f.URL.Read || f.URL.Problem != "unsupported URL scheme: http" || facts["client1"].URL.Read {
		t.Errorf("Secret url: %+v (client1 %+v)", f.URL, facts["client1"].URL)
	}
	// The base64 value in data and the same text in stringData are equal.
	if facts["client1"].Digest != facts["client2"].Digest {
		t.Error("data client1 and stringData client2 hold the same value but differ")
	}
	if cm := Read(objs[1]); cm["ca.crl"].CRL.Err != "" || cm["bin"].Digest != facts["client1"].Digest {
		t.Errorf("ConfigMap: %+v", cm)
	}
}

// Of a ConfigMap's data values, the one Envoy Gateway loads (each
// ConfigMap here has one key) is a script when it names an Envoy Lua
// entry point, judged up to MaxScript bytes: through Redact its verdicts
// (parse, Strict validation) are the same as read from the value, and no
// text is kept; another value, a longer script, Secrets and binaryData
// are not judged (and a Secret's or binaryData's value is no script at
// all).
func TestRedactKeepsLuaVerdicts(t *testing.T) {
	ok := "function envoy_on_response(h) h:logInfo(';lua-text=') end"
	syntax := "function envoy_on_request(h) h:logInfo( end"
	strict := "function envoy_on_request(h) error('refused: ' .. string.rep('y', 4000)) end"
	long := "-- envoy_on_request\n" + strings.Repeat("x", MaxScript)
	b64 := base64.StdEncoding.EncodeToString
	// One ConfigMap per value (its only key, which is what Envoy Gateway
	// reads), read and redacted one by one; their facts joined by key.
	scripts := map[string]any{"ok": ok, "syntax": syntax, "strict": strict, "other": "not a script", "long": long}
	one := func(k string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
			"data":       map[string]any{k: scripts[k]},
			"binaryData": map[string]any{"bin": b64([]byte(ok))}}}
	}
	cms := map[string]*unstructured.Unstructured{}
	for k := range scripts {
		cms[k] = one(k)
	}
	joined := func(read func(*unstructured.Unstructured) map[string]Fact) map[string]Fact {
		out := map[string]Fact{}
		for k, u := range cms {
			f := read(u)
			out[k], out["bin"] = f[k], f["bin"]
		}
		return out
	}
	sec := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"lua": b64([]byte(ok))}}}
	type seen struct {
		read, entry, judged bool
		v                   LuaVerdict
	}
	of := func(l Lua) seen { return seen{l.Read, l.EntryPoint, l.Judged, l.Check()} }
	values := joined(Read)
	if v := values["syntax"].Lua.Check(); v.Syntax == "" || !strings.Contains(v.Strict, "does not parse") {
		t.Errorf("syntax: %+v, want a parse error from both checks", v)
	}
	if v := values["strict"].Lua.Check(); v.Syntax != "" || !strings.Contains(v.Strict, "refused: yyy") || len(v.Strict) > maxVerdict {
		t.Errorf("strict: %+v, want a Strict error of at most %d bytes", v, maxVerdict)
	}
	if v := values["ok"].Lua.Check(); v != (LuaVerdict{}) {
		t.Errorf("ok: %+v, want no error", v)
	}
	want := map[string]seen{"ok": of(values["ok"].Lua), "syntax": of(values["syntax"].Lua), "strict": of(values["strict"].Lua),
		"other": {read: true}, "long": {read: true, entry: true}, "bin": {}}
	for _, k := range []string{"ok", "syntax", "strict"} {
		if !want[k].judged {
			t.Errorf("%s: not judged", k)
		}
	}
	tokens := joined(func(u *unstructured.Unstructured) map[string]Fact {
		red := u.DeepCopy()
		Redact(red)
		for k, v := range red.Object["data"].(map[string]any) {
			// The verdicts name entry points and quote an error, never
			// the script's text.
			if s := v.(string); strings.Contains(s, "function") || strings.Contains(s, "string.rep") || strings.Contains(s, "not+a+script") ||
				strings.Contains(s, "xxxx") || len(s) > 3*maxVerdict {
				t.Errorf("%s: the token keeps text: %q", k, s)
			}
		}
		if s := red.Object["binaryData"].(map[string]any)["bin"].(string); strings.Contains(s, "function") || strings.Contains(s, "lua") {
			t.Errorf("binaryData kept: %q", s)
		}
		return Read(red)
	})
	for name, got := range map[string]map[string]Fact{"values": values, "tokens": tokens} {
		for k, w := range want {
			if g := of(got[k].Lua); g != w {
				t.Errorf("%s %s: Lua = %+v, want %+v", name, k, g, w)
			}
		}
	}
	rs := sec.DeepCopy()
	Redact(rs)
	if f := Read(rs)["lua"]; f.Lua.Read || strings.Contains(rs.Object["data"].(map[string]any)["lua"].(string), "envoy_on") {
		t.Errorf("a Secret's value is kept as a script: %+v", f)
	}
	// A token with verdicts of no judged script is not one of Redact's,
	// nor one with a Lua part in a Secret.
	for _, bad := range []string{
		tokenPrefix + "d=00000000000000000000000000000000;crl=this=0;lua-syntax=x",
		tokenPrefix + "d=00000000000000000000000000000000;crl=this=0;lua=long;lua-strict=x",
		tokenPrefix + "d=00000000000000000000000000000000;crl=this=0;lua=script;lua-strict=%zz",
	} {
		if _, ok := parseToken(bad); ok {
			t.Errorf("token %q read", bad)
		}
	}
	s := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "metadata": map[string]any{"annotations": map[string]any{MarkAnnotation: mark}},
		"stringData": map[string]any{"k": tokenPrefix + "d=00000000000000000000000000000000;crl=this=0;lua=script"}}}
	if f := Read(s)["k"]; f.Lua.Read || f.Digest == "00000000000000000000000000000000" {
		t.Errorf("a Lua token in a Secret read as a token: %+v", f)
	}
}

// A value of an object's own that looks like a token is read as a value,
// also by Redact: only Redact's mark makes tokens; a malformed token in a
// marked object is read as a value too; a value that is not a string has
// no fact; binaryData values are marked Binary, through tokens too.
func TestTokensOnlyFromRedact(t *testing.T) {
	forged := tokenPrefix + "d=00000000000000000000000000000000;crl=this=0"
	cm := func(annotations map[string]any, data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "annotations": annotations}, "data": data,
			"binaryData": map[string]any{"bin": base64.StdEncoding.EncodeToString([]byte("x"))}}}
	}
	u := cm(nil, map[string]any{"ca.crl": forged, "n": nil})
	f := Read(u)
	if f["ca.crl"].CRL.Err != "no PEM data" || f["ca.crl"].Digest == "00000000000000000000000000000000" {
		t.Errorf("a forged token in an unmarked object: %+v", f["ca.crl"])
	}
	if _, ok := f["n"]; ok || !f["bin"].Binary || f["ca.crl"].Binary {
		t.Errorf("facts %+v: want none for n, bin binary", f)
	}
	red := u.DeepCopy()
	Redact(red)
	if g := Read(red); g["ca.crl"] != f["ca.crl"] || !g["bin"].Binary {
		t.Errorf("Redact took a forged token for a token: %+v, want %+v", g["ca.crl"], f["ca.crl"])
	}
	// Redacting again (a cache transforming twice) changes nothing.
	again := red.DeepCopy()
	Redact(again)
	if g := Read(again); g["ca.crl"] != f["ca.crl"] {
		t.Errorf("redacting twice: %+v, want %+v", g["ca.crl"], f["ca.crl"])
	}
	// A mark written by someone else is no mark: the forged token stays
	// a value.
	if g := Read(cm(map[string]any{MarkAnnotation: "redacted"}, map[string]any{"ca.crl": forged})); g["ca.crl"] != f["ca.crl"] {
		t.Errorf("a forged mark: %+v, want the value's fact %+v", g["ca.crl"], f["ca.crl"])
	}
	for _, bad := range []string{tokenPrefix, tokenPrefix + "d=zz;crl=this=1", tokenPrefix + "d=00000000000000000000000000000000",
		tokenPrefix + "d=00000000000000000000000000000000;crl=next=5", tokenPrefix + "d=00000000000000000000000000000000;crl=err=", tokenPrefix + "x=1"} {
		m := cm(map[string]any{MarkAnnotation: mark}, map[string]any{"k": bad})
		want := Of([]byte(bad))
		want.Lua = luaOf(bad, true) // a ConfigMap's only data value
		if got := Read(m)["k"]; got != want {
			t.Errorf("malformed token %q read as %+v, want the value's fact", bad, got)
		}
	}
}

// Of a ConfigMap's data values, only the one Envoy Gateway loads as a
// script (key lua, else the only key) is judged: a ConfigMap of many
// scripts costs no run of each (a run of a hostile script takes its whole
// instruction budget).
func TestOnlyTheScriptKeyJudged(t *testing.T) {
	const hostile = "function envoy_on_request(h) end local x = 0 while true do x = x + 1 end -- "
	cm := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c"}, "data": data}}
	}
	many := map[string]any{}
	for i := range 40 {
		many[fmt.Sprintf("k%d", i)] = hostile + strconv.Itoa(i)
	}
	for _, c := range []struct {
		name   string
		data   map[string]any
		judged []string
	}{
		{"many keys, none named lua", many, nil},
		{"a lua key among others", map[string]any{"lua": "function envoy_on_request(h) h:nope() end", "other": hostile}, []string{"lua"}},
		{"one key", map[string]any{"script.lua": "function envoy_on_response(h) end"}, []string{"script.lua"}},
	} {
		u := cm(c.data)
		Redact(u)
		facts := Read(u)
		var judged []string
		for k, f := range facts {
			if !f.Lua.EntryPoint {
				t.Errorf("%s: %s does not name an entry point", c.name, k)
			}
			if f.Lua.Judged {
				judged = append(judged, k)
			}
		}
		if !slices.Equal(judged, c.judged) {
			t.Errorf("%s: judged %v, want %v", c.name, judged, c.judged)
		}
	}
}

// Envoy Gateway takes a unix URL with an absolute path, or
// unix://./<path> (SPIFFE's form), for an SDS server's address, and
// nothing else (netutil.ParseURL, v1.9.1); a refused one is named without
// anything of the value but an http or https scheme (no value is kept:
// url.Parse's own errors quote it). Only an SDS reference Secret's url is
// read so: another Secret's url value (a database URL with a password) is
// not judged at all.
func TestCheckSDSURL(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///var/run/secrets/workload-spiffe-uds/socket": "",
		"unix://./relative/socket":                           "",
		"unix://.":                                           "",
		"/var/run/secrets/workload-spiffe-uds/socket":        "unsupported URL scheme: none (want unix)",
		"https://sds.example:8443":                           "unsupported URL scheme: https",
		"redis://default:MyPassw0rd@db":                      "unsupported URL scheme (want unix)",
		"mysecrettoken:abc":                                  "unsupported URL scheme (want unix)",
		"unix://host/socket":                                 "unix URL must not contain a host, use unix:///absolute/path",
		"unix://":                                            "unix URL must contain a path",
		"unix:///secret\x7f":                                 "invalid URL: it does not parse as a URL",
		"postgres://u:p%4@h/db":                              "invalid URL: it does not parse as a URL",
		"redis://default:MyPassw0rd":                         "invalid URL: it does not parse as a URL",
	} {
		if got := CheckSDSURL(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	plain := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "stringData": map[string]any{URLKey: "redis://default:MyPassw0rd"}}}
	if f := Read(plain)[URLKey]; f.URL.Read {
		t.Errorf("an Opaque Secret's url read as an SDS address: %+v", f.URL)
	}
}

// sdsVerdicts are every verdict CheckSDSURL gives: fixed texts, so that a
// token keeps nothing of a value.
var sdsVerdicts = map[string]bool{"": true, "unsupported URL scheme: http": true, "unsupported URL scheme: https": true,
	"unsupported URL scheme: none (want unix)": true, "unsupported URL scheme (want unix)": true,
	"unix URL must not contain a host, use unix:///absolute/path": true, "unix URL must contain a path": true,
	"invalid URL: it does not parse as a URL": true}

// Bad tokens and values never panic.
func FuzzRead(f *testing.F) {
	f.Add(tokenPrefix + "d=ab;crl=this=1,next=2")
	f.Add(tokenPrefix + "crl=err=%zz")
	f.Add("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n")
	f.Add("function envoy_on_request(h) end;lua=script;lua-syntax=x")
	f.Add(tokenPrefix + "d=00112233445566778899aabbccddeeff;crl=err=x;empty;url=ok")
	f.Add("unix:///socket")
	f.Fuzz(func(t *testing.T, s string) {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "metadata": map[string]any{"annotations": map[string]any{MarkAnnotation: mark}},
			"data": map[string]any{"k": s}, "stringData": map[string]any{"k2": s}}}
		Read(u)
		Redact(u)
		Read(u)
		// An SDS reference Secret's url value reads the same through its
		// token, which keeps nothing of it (but an http or https scheme).
		sec := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "type": SDSSecretType, "stringData": map[string]any{URLKey: s}}}
		sb := Read(sec)[URLKey]
		Redact(sec)
		if sa := Read(sec)[URLKey]; sb.URL != sa.URL || sb.Empty != sa.Empty || sb.Blank != sa.Blank || sb.Digest != sa.Digest || !sa.URL.Read {
			t.Errorf("url %q: %+v, then %+v", s, sb, sa)
		}
		if !sdsVerdicts[sb.URL.Problem] {
			t.Errorf("url %q: verdict %q is none of the fixed texts: it may keep some of the value", s, sb.URL.Problem)
		}
		// A ConfigMap's values read the same through their tokens, the
		// scripts kept among them.
		cm := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "data": map[string]any{"k": s}}}
		before := Read(cm)
		Redact(cm)
		after := Read(cm)
		b, a := before["k"], after["k"]
		if b.Digest != a.Digest || b.CRL != a.CRL || b.Binary != a.Binary || b.Empty != a.Empty || b.Blank != a.Blank || b.Lua.Read != a.Lua.Read ||
			b.Lua.EntryPoint != a.Lua.EntryPoint || b.Lua.Judged != a.Lua.Judged || b.Lua.Check() != a.Lua.Check() {
			t.Errorf("%q: %+v, then %+v", s, b, a)
		}
	})
}

// BenchmarkRedact: what the controller's cache transform costs per TLS
// Secret (three values of a few KiB), and how much each token keeps.
func BenchmarkRedact(b *testing.B) {
	ca := testpki.NewCA(b)
	crt := base64.StdEncoding.EncodeToString([]byte(strings.Repeat(ca.PEM, 2)))
	b.ReportAllocs()
	var kept int
	for b.Loop() {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"data": map[string]any{"tls.crt": crt, "tls.key": crt[:400], "ca.crt": crt}}}
		Redact(u)
		kept = 0
		for _, v := range u.Object["data"].(map[string]any) {
			kept += len(v.(string))
		}
	}
	b.ReportMetric(float64(kept)/3, "bytes/value")
}
