// Package holderdata says what attache reads of the values a ConfigMap or
// Secret holds, beyond its keys: for each value, a digest (to tell equal
// values apart from different ones without keeping them), when it is
// PEM data, the validity window of the certificate revocation list it
// holds, and, of a ConfigMap's data value that is an Envoy Lua script
// (one naming an entry point of Envoy's Lua filter) of up to MaxScript
// bytes, the verdicts of the checks Envoy Gateway makes of the scripts its
// policies load from ConfigMaps (whether it parses, whether its Strict
// validation passes): they depend on the script alone; and of an Envoy
// Gateway SDS reference Secret's value under key url, whether Envoy
// Gateway takes it for the address of an SDS server. Readers that must
// not keep values (the cluster reader, the controller's cache) replace
// each value with its Fact written as a token (Redact), the checks made
// then, so that no script text is kept; Read gives the same facts from
// the token as from the value, so that the engine judges a policy's
// referenced data the same way from files and from a cluster.
package holderdata

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	luaparse "github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/attache-dev/attache/pkg/envoylua"
)

// Fact is what attache reads of one value.
type Fact struct {
	// Digest tells values apart: equal values, and only they, have equal
	// digests (in one process: the digest is keyed by a random key made
	// at start, so that it cannot be checked against guesses outside it).
	Digest string
	// CRL is the certificate revocation list in the value's first PEM
	// block, as Envoy Gateway reads a CRL.
	CRL CRL
	// Binary is set for a value of a ConfigMap's binaryData (Envoy
	// Gateway reads a ConfigMap's data only).
	Binary bool
	// Lua is what Envoy Gateway reads of a Lua script a policy loads
	// from a ConfigMap's data value.
	Lua Lua
	// Empty says the value is empty (decoded, for a Secret's data), and
	// Blank that it holds white space only (Go's strings.TrimSpace leaves
	// nothing), which Empty implies.
	Empty, Blank bool
	// URL is read of the value under key url (URLKey) of a Secret of
	// SDSSecretType: whether Envoy Gateway takes it for an SDS server's
	// address.
	URL URL
}

// URLKey is the key of an SDS reference Secret holding its server's
// address (Envoy Gateway's ir.NewSDSConfig).
const URLKey = "url"

// URL is Envoy Gateway's verdict on a value as an SDS server's address.
type URL struct {
	// Read says the value was read as one (an SDS reference Secret's,
	// under URLKey).
	Read bool
	// Problem is why Envoy Gateway refuses it (netutil.ParseURL: a unix
	// URL with an absolute path, or unix://./<path>, is the only form
	// taken), "" when it takes it.
	Problem string
}

// Lua is what is read of a ConfigMap data value as a Lua script.
type Lua struct {
	// Read says the value was read as one: a ConfigMap's data value (a
	// Secret's or a binaryData value never is).
	Read bool
	// EntryPoint says the value names envoy_on_request or
	// envoy_on_response, which Envoy Gateway requires of a script.
	EntryPoint bool
	// Judged says the script is checked (Check): it names an entry point
	// and is at most MaxScript bytes long. Longer ones are not judged.
	Judged bool
	// text is the script read from the value, checked when Check is
	// called; from a token, verdict holds the checks Redact made (no text
	// is kept).
	text    string
	checked bool
	verdict LuaVerdict
}

// LuaVerdict is the outcome of the checks of a script, each message at
// most maxVerdict bytes.
type LuaVerdict struct {
	// Syntax is why the script does not parse as Lua (gopher-lua's
	// parser, as Envoy Gateway's), "" when it does.
	Syntax string
	// Strict is why Envoy Gateway's Strict validation refuses the script
	// (envoylua.Validate), "" when it passes or is not judged.
	Strict string
	// StrictNotJudged says which of attache's bounds stopped the Strict
	// run: no verdict.
	StrictNotJudged string
}

// Check returns the verdicts of a judged script's checks (zero when not
// Judged): those Redact made, or, read from the value, made now.
func (l Lua) Check() LuaVerdict {
	switch {
	case !l.Judged:
		return LuaVerdict{}
	case l.checked:
		return l.verdict
	}
	return CheckLua(l.text)
}

// maxVerdict bounds each message of a LuaVerdict: a script's error() may
// raise a message of any length, which a token would keep.
const maxVerdict = 1 << 10

// CheckLua makes the checks of a script: it parses it, and runs it as
// Envoy Gateway's Strict validation does.
func CheckLua(script string) LuaVerdict {
	var v LuaVerdict
	if _, err := luaparse.Parse(strings.NewReader(script), "<inline>"); err != nil {
		v.Syntax = cut(strings.Join(strings.Fields(err.Error()), " "))
	}
	sv := envoylua.Validate(script)
	if sv.Err != nil {
		v.Strict = cut(sv.Err.Error())
	}
	v.StrictNotJudged = cut(sv.NotJudged)
	return v
}

// cut bounds a message to maxVerdict bytes, at a character boundary.
func cut(s string) string {
	if len(s) <= maxVerdict {
		return s
	}
	const more = " ... (cut)"
	i := maxVerdict - len(more)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + more
}

// MaxScript is the longest script judged.
const MaxScript = 128 << 10

// luaOf reads a ConfigMap data value as a Lua script, judged only when
// judge is set (the value is the one Envoy Gateway reads: scriptKey).
func luaOf(value string, judge bool) Lua {
	l := Lua{Read: true, EntryPoint: envoylua.NamesEntryPoint(value)}
	if judge && l.EntryPoint && len(value) <= MaxScript {
		l.Judged, l.text = true, value
	}
	return l
}

// scriptKey is the key of ConfigMap u's data whose value Envoy Gateway
// loads as a Lua script: "lua", else the only key (its
// getLuaBodyFromLocalObjectReference; with several keys, none named lua,
// it reads any of them, which attache does not judge), "" when none. Only
// that value's script is checked: a ConfigMap of many scripts would
// otherwise cost a run of each, bounded one by one but not together, in
// the controller's cache transform.
func scriptKey(u *unstructured.Unstructured) string {
	if u.GetKind() != "ConfigMap" {
		return ""
	}
	data, _ := u.Object["data"].(map[string]any)
	if _, ok := data["lua"]; ok {
		return "lua"
	}
	if len(data) == 1 {
		for k := range data {
			return k
		}
	}
	return ""
}

// CRL is the validity window of a certificate revocation list, or why the
// value holds none.
type CRL struct {
	// ThisUpdate and NextUpdate are the list's; NextUpdate is zero when
	// the list names none.
	ThisUpdate, NextUpdate time.Time
	// Err, when set, says why the value holds no list ("no PEM data", or
	// the parser's error).
	Err string
}

// Check judges the list at time now: "" when it holds a list in force,
// otherwise what is wrong, in Envoy Gateway's words (validateCrl).
func (c CRL) Check(now time.Time) string {
	switch {
	case c.Err != "":
		return c.Err
	case !c.NextUpdate.IsZero() && now.After(c.NextUpdate):
		return fmt.Sprintf("the CRL is expired (next update was due at %s)", c.NextUpdate.UTC().Format(time.RFC3339))
	case now.Before(c.ThisUpdate):
		return fmt.Sprintf("the CRL is not yet valid (this update starts at %s)", c.ThisUpdate.UTC().Format(time.RFC3339))
	}
	return ""
}

// Changes returns the first time after now at which Check's verdict
// changes (zero for none).
func (c CRL) Changes(now time.Time) time.Time {
	if c.Err != "" {
		return time.Time{}
	}
	if now.Before(c.ThisUpdate) {
		return c.ThisUpdate
	}
	if !c.NextUpdate.IsZero() && !now.After(c.NextUpdate) {
		return c.NextUpdate.Add(time.Nanosecond)
	}
	return time.Time{}
}

// tokenPrefix starts a value Redact wrote; Read takes a value for a token
// only in an object Redact of this process marked (MarkAnnotation), so
// that a value of a ConfigMap's own that looks like one is read as what
// it is.
const tokenPrefix = "attache.dev/holder-fact;"

// MarkAnnotation marks an object whose values Redact replaced, with this
// process's mark (random, made at start): an object the API server gives
// with the annotation (written by someone) is not taken for one.
const MarkAnnotation = "attache.dev/holder-facts"

// mark is this process's value of MarkAnnotation.
var mark = func() string {
	mac := hmac.New(sha256.New, digestKey)
	mac.Write([]byte(MarkAnnotation))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}()

// marked reports whether Redact of this process replaced u's values.
func marked(u *unstructured.Unstructured) bool { return u.GetAnnotations()[MarkAnnotation] == mark }

// digestKey keys the digests of this process.
var digestKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("holderdata: no random key: " + err.Error())
	}
	return k
}()

// Of reads the fact of one value.
func Of(value []byte) Fact {
	mac := hmac.New(sha256.New, digestKey)
	mac.Write(value)
	return Fact{Digest: hex.EncodeToString(mac.Sum(nil)[:16]), CRL: crlOf(value), Empty: len(value) == 0, Blank: strings.TrimSpace(string(value)) == ""}
}

// SDSSecretType is the type of Envoy Gateway's SDS reference Secrets
// (api/v1alpha1 SDSSecretType), whose url value is read as an SDS
// server's address (URL).
const SDSSecretType = "gateway.envoyproxy.io/sds"

// CheckSDSURL is Envoy Gateway's check of an SDS server's address
// (internal/utils/net ParseURL, v1.9.1): "" when it takes s, else why not,
// in words that quote nothing of s (its scheme only when http or https,
// which Envoy Gateway names as not supported yet): the verdict is kept in
// a token in place of a Secret's value.
func CheckSDSURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "invalid URL: it does not parse as a URL"
	}
	switch {
	case u.Scheme == "http" || u.Scheme == "https":
		return "unsupported URL scheme: " + u.Scheme
	case u.Scheme == "":
		return "unsupported URL scheme: none (want unix)"
	case u.Scheme != "unix":
		return "unsupported URL scheme (want unix)"
	case u.Host != "" && u.Host != ".":
		return "unix URL must not contain a host, use unix:///absolute/path"
	case u.Path == "" && u.Host != ".":
		return "unix URL must contain a path"
	}
	return ""
}

// crlOf reads the list in the first PEM block of value (Envoy Gateway
// decodes one block and parses it as a list).
func crlOf(value []byte) CRL {
	block, _ := pem.Decode(value)
	if block == nil {
		return CRL{Err: "no PEM data"}
	}
	l, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		return CRL{Err: "no CRL: " + err.Error()}
	}
	return CRL{ThisUpdate: l.ThisUpdate, NextUpdate: l.NextUpdate}
}

// token writes f as a value.
func (f Fact) token() string {
	crl := "err=" + url.QueryEscape(f.CRL.Err)
	if f.CRL.Err == "" {
		crl = "this=" + strconv.FormatInt(f.CRL.ThisUpdate.Unix(), 10)
		if !f.CRL.NextUpdate.IsZero() {
			crl += ",next=" + strconv.FormatInt(f.CRL.NextUpdate.Unix(), 10)
		}
	}
	if f.Binary {
		crl += ";bin"
	}
	extra := ""
	if l := f.Lua; l.EntryPoint {
		// A ConfigMap data value that names no entry point has no Lua
		// part: Read tells one from where it is.
		extra = ";lua=long"
		if l.Judged {
			v := l.Check()
			extra = ";lua=script"
			for _, p := range []struct{ name, msg string }{{"lua-syntax", v.Syntax}, {"lua-strict", v.Strict}, {"lua-strict-nj", v.StrictNotJudged}} {
				if p.msg != "" {
					extra += ";" + p.name + "=" + url.QueryEscape(p.msg)
				}
			}
		}
	}
	if f.Empty {
		extra += ";empty"
	} else if f.Blank {
		extra += ";blank"
	}
	if f.URL.Read {
		v := "ok"
		if f.URL.Problem != "" {
			v = url.QueryEscape(f.URL.Problem)
		}
		extra += ";url=" + v
	}
	return tokenPrefix + "d=" + f.Digest + ";crl=" + crl + extra
}

// parseToken reads a token; ok is false when s is none or malformed (a
// digest of 32 hexadecimal digits and a CRL part, both required).
func parseToken(s string) (Fact, bool) {
	rest, ok := strings.CutPrefix(s, tokenPrefix)
	if !ok {
		return Fact{}, false
	}
	var f Fact
	var hasCRL bool
	verdicts := map[string]*string{"lua-syntax": &f.Lua.verdict.Syntax, "lua-strict": &f.Lua.verdict.Strict, "lua-strict-nj": &f.Lua.verdict.StrictNotJudged}
	for _, part := range strings.Split(rest, ";") {
		name, val, _ := strings.Cut(part, "=")
		if dst := verdicts[name]; dst != nil {
			msg, err := url.QueryUnescape(val)
			if err != nil || msg == "" || *dst != "" || len(msg) > maxVerdict {
				return Fact{}, false
			}
			*dst = msg
			continue
		}
		switch name {
		case "d":
			if b, err := hex.DecodeString(val); err != nil || len(b) != 16 {
				return Fact{}, false
			}
			f.Digest = val
		case "bin":
			f.Binary = true
		case "empty":
			if f.Blank || val != "" {
				return Fact{}, false
			}
			f.Empty, f.Blank = true, true
		case "blank":
			if f.Blank || val != "" {
				return Fact{}, false
			}
			f.Blank = true
		case "url":
			msg, err := url.QueryUnescape(val)
			if err != nil || msg == "" || f.URL.Read || len(msg) > maxVerdict {
				return Fact{}, false
			}
			f.URL.Read = true
			if msg != "ok" {
				f.URL.Problem = msg
			}
		case "lua":
			if f.Lua.EntryPoint || (val != "long" && val != "script") {
				return Fact{}, false
			}
			f.Lua.Read, f.Lua.EntryPoint = true, true
			f.Lua.Judged, f.Lua.checked = val == "script", val == "script"
		case "crl":
			hasCRL = true
			if e, isErr := strings.CutPrefix(val, "err="); isErr {
				var err error
				if f.CRL.Err, err = url.QueryUnescape(e); err != nil || f.CRL.Err == "" {
					return Fact{}, false
				}
				continue
			}
			var this bool
			for _, kv := range strings.Split(val, ",") {
				k, v, _ := strings.Cut(kv, "=")
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return Fact{}, false
				}
				switch k {
				case "this":
					f.CRL.ThisUpdate, this = time.Unix(n, 0).UTC(), true
				case "next":
					f.CRL.NextUpdate = time.Unix(n, 0).UTC()
				default:
					return Fact{}, false
				}
			}
			if !this {
				return Fact{}, false
			}
		default:
			return Fact{}, false
		}
	}
	if f.Digest == "" || !hasCRL || (f.Lua.verdict != LuaVerdict{} && !f.Lua.Judged) {
		return Fact{}, false
	}
	return f, true
}

// fields are the fields of a ConfigMap or Secret holding values, with
// whether their values are base64 encoded.
var fields = []struct {
	name   string
	base64 map[string]bool // by object kind
}{
	{"data", map[string]bool{"Secret": true}},
	{"binaryData", map[string]bool{"ConfigMap": true}},
	{"stringData", nil},
}

// Read gives the facts of the values of u, a ConfigMap or Secret, by key:
// read from the values, or, in an object Redact marked, from the tokens it
// wrote in their place. A value that is not a string has no fact; one
// that is not base64 where it must be is read as its text (the API
// server refuses both; bad input never stops the reading).
func Read(u *unstructured.Unstructured) map[string]Fact {
	return read(u, marked(u))
}

// read is Read, taking tokens for what they say when tokens is set.
func read(u *unstructured.Unstructured, tokens bool) map[string]Fact {
	out := map[string]Fact{}
	script := scriptKey(u)
	for _, f := range fields {
		m, _ := u.Object[f.name].(map[string]any)
		for k, v := range m {
			s, isStr := v.(string)
			if !isStr {
				continue
			}
			cmData := f.name == "data" && u.GetKind() == "ConfigMap"
			if tokens {
				if fact, ok := parseToken(s); ok && (cmData || !fact.Lua.Read) && fact.URL.Read == urlOf(u, f.name, k) {
					// Every ConfigMap data value is read as a script.
					fact.Lua.Read = cmData
					out[k] = fact
					continue
				}
			}
			b := []byte(s)
			if f.base64[u.GetKind()] {
				if dec, err := base64.StdEncoding.DecodeString(s); err == nil {
					b = dec
				}
			}
			fact := Of(b)
			fact.Binary = f.name == "binaryData"
			if cmData {
				fact.Lua = luaOf(s, k == script)
			}
			if urlOf(u, f.name, k) {
				fact.URL = URL{Read: true, Problem: CheckSDSURL(string(b))}
			}
			out[k] = fact
		}
	}
	return out
}

// urlOf reports whether the value of key k in field of u is read as an
// SDS server's address: the data or stringData value under URLKey of a
// Secret of SDSSecretType (no other Secret's value is judged).
func urlOf(u *unstructured.Unstructured, field, k string) bool {
	if k != URLKey || u.GetKind() != "Secret" || field == "binaryData" {
		return false
	}
	t, _ := u.Object["type"].(string)
	return t == SDSSecretType
}

// Redact replaces each value of u, a ConfigMap or Secret as the API
// server gives it, with the token of its fact, and marks u
// (MarkAnnotation), so that u keeps its keys and what Read reads of its
// values, never the values. Values that look like tokens are read as
// values: only Redact's own marks make tokens. An object it marked
// already is left as it is (a cache may transform an object twice).
func Redact(u *unstructured.Unstructured) {
	if marked(u) {
		return
	}
	facts := read(u, false)
	for _, f := range fields {
		m, ok := u.Object[f.name].(map[string]any)
		if !ok {
			continue
		}
		for k := range m {
			if fact, ok := facts[k]; ok && fact.Binary == (f.name == "binaryData") {
				m[k] = fact.token()
			} else {
				m[k] = nil // not a string: no fact
			}
		}
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[MarkAnnotation] = mark
	u.SetAnnotations(a)
}

// Redacted reports whether v is a value Redact wrote (not a value of the
// object's own).
func Redacted(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, ok = parseToken(s)
	return ok
}
