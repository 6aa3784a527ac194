package envoylua

import (
	"encoding/base64"
	"slices"
	"strconv"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// attache's model of the API Envoy's HTTP Lua filter gives a script
// (Envoy's documentation: configuration/http/http_filters/lua_filter,
// "Stream handle API" and the object APIs after it), written from that
// documentation. Every object is a table whose methods come from its
// metatable, so that pairs() over a headers or metadata object walks its
// entries. Methods ignore what they are called on and accept any
// arguments, except where both Envoy and Envoy Gateway's validation fail
// a call: a log message, and httpCall's cluster, must be a string or a
// number, and respond() needs a headers table with :status.
//
// The values are neutral: a header, metadata or filter state value is a
// string that matches nothing a script is likely to test for, so that a
// script takes no branch on a value attache cannot know (Envoy Gateway's
// validation answers likewise with fixed strings), and numbers, lists and
// booleans are of the documented types.
const (
	neutral  = "attache-value"
	bodyText = "attache-body"
)

// logMethods are the log*() methods of every object (Envoy's lua_common).
var logMethods = []string{"logTrace", "logDebug", "logInfo", "logWarn", "logErr", "logCritical"}

// object makes an object with the given methods (and the log methods)
// and raw entries.
func object(L *lua.LState, methods map[string]lua.LGFunction, entries map[string]lua.LValue) *lua.LTable {
	m := L.NewTable()
	for _, name := range logMethods {
		name := name
		m.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if !lua.LVCanConvToString(L.Get(2)) {
				L.RaiseError("bad argument #1 to '%s' (string expected, got %s)", name, L.Get(2).Type())
			}
			return 0
		}))
	}
	for name, f := range methods {
		m.RawSetString(name, L.NewFunction(f))
	}
	mt := L.NewTable()
	mt.RawSetString("__index", m)
	o := L.NewTable()
	for k, v := range entries {
		o.RawSetString(k, v)
	}
	L.SetMetatable(o, mt)
	return o
}

// returning makes a method returning vs.
func returning(vs ...lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		for _, v := range vs {
			L.Push(v)
		}
		return len(vs)
	}
}

// list makes a list of strings.
func list(L *lua.LState, items ...string) *lua.LTable {
	t := L.NewTable()
	for _, s := range items {
		t.Append(lua.LString(s))
	}
	return t
}

// stringish makes a table that also concatenates and prints as text:
// where Envoy documents a table and Envoy Gateway's validation answers a
// string (a parsed name's organizationName(), dynamic metadata's get()),
// a script written for either passes.
func stringish(L *lua.LState, t *lua.LTable, text string) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LString(text)); return 1 }))
	mt.RawSetString("__concat", L.NewFunction(func(L *lua.LState) int {
		side := func(v lua.LValue) string {
			if v == t {
				return text
			}
			if lua.LVCanConvToString(v) {
				return lua.LVAsString(v)
			}
			L.RaiseError("attempt to concatenate a %s value", v.Type())
			return ""
		}
		L.Push(lua.LString(side(L.Get(1)) + side(L.Get(2))))
		return 1
	}))
	L.SetMetatable(t, mt)
	return t
}

// headersObject is a header map (Envoy's "Header object API").
func headersObject(L *lua.LState) *lua.LTable {
	none := returning()
	return object(L, map[string]lua.LGFunction{
		"add":                  none,
		"get":                  returning(lua.LString(neutral)),
		"getAtIndex":           returning(lua.LString(neutral)),
		"getNumValues":         returning(lua.LNumber(1)),
		"remove":               none,
		"replace":              none,
		"setHttp1ReasonPhrase": none,
		"getHttp1ReasonPhrase": returning(lua.LString("OK")),
	}, map[string]lua.LValue{"x-attache": lua.LString(neutral)})
}

// buffer is a body buffer (Envoy's "Buffer API").
func buffer(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{
		"length":   returning(lua.LNumber(len(bodyText))),
		"getBytes": returning(lua.LString(bodyText)),
		"setBytes": returning(),
	}, nil)
}

// metadataObject is route metadata or a filter context (Envoy's
// "Metadata object API").
func metadataObject(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{"get": returning(lua.LString(neutral))},
		map[string]lua.LValue{"attache": lua.LString(neutral)})
}

// dynamicMetadata is a stream's dynamic metadata ("Dynamic metadata
// object API"): get(filterName) gives that filter's table.
func dynamicMetadata(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{
		"get": func(L *lua.LState) int { L.Push(stringish(L, L.NewTable(), neutral)); return 1 },
		"set": returning(),
	}, map[string]lua.LValue{"attache": L.NewTable()})
}

// typedMetadata answers dynamicTypedMetadata(filterName): a table.
func typedMetadata(L *lua.LState) int { L.Push(L.NewTable()); return 1 }

// parsedName is a certificate's parsed subject ("Parsed name object API").
func parsedName(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{
		"commonName":       returning(lua.LString("attache.example.com")),
		"organizationName": func(L *lua.LState) int { L.Push(stringish(L, list(L, "attache"), "attache")); return 1 },
	}, nil)
}

// sslConnection is an SSL connection ("SSL connection object API").
func sslConnection(L *lua.LState) *lua.LTable {
	str := func(s string) lua.LGFunction { return returning(lua.LString(s)) }
	lst := func(items ...string) lua.LGFunction {
		return func(L *lua.LState) int { L.Push(list(L, items...)); return 1 }
	}
	return object(L, map[string]lua.LGFunction{
		"peerCertificatePresented":                 returning(lua.LTrue),
		"peerCertificateValidated":                 returning(lua.LTrue),
		"uriSanLocalCertificate":                   lst("spiffe://attache.example.com/local"),
		"sha256PeerCertificateDigest":              str("a7f3c9e2b1d4056f8e9a0b1c2d3e4f5061728394a5b6c7d8e9f00112233445566"),
		"serialNumberPeerCertificate":              str("1000"),
		"issuerPeerCertificate":                    str("CN=attache CA,O=attache"),
		"subjectPeerCertificate":                   str("CN=attache.example.com,O=attache"),
		"parsedSubjectPeerCertificate":             func(L *lua.LState) int { L.Push(parsedName(L)); return 1 },
		"uriSanPeerCertificate":                    lst("spiffe://attache.example.com/peer"),
		"subjectLocalCertificate":                  str("CN=local.attache.example.com,O=attache"),
		"urlEncodedPemEncodedPeerCertificate":      str("-----BEGIN%20CERTIFICATE-----%0A-----END%20CERTIFICATE-----%0A"),
		"urlEncodedPemEncodedPeerCertificateChain": str("-----BEGIN%20CERTIFICATE-----%0A-----END%20CERTIFICATE-----%0A"),
		"dnsSansPeerCertificate":                   lst("peer.attache.example.com"),
		"dnsSansLocalCertificate":                  lst("local.attache.example.com"),
		"oidsPeerCertificate":                      lst("2.5.29.17"),
		"oidsLocalCertificate":                     lst("2.5.29.17"),
		"validFromPeerCertificate":                 returning(lua.LNumber(1700000000)),
		"expirationPeerCertificate":                returning(lua.LNumber(4102444800)),
		"sessionId":                                str("00112233445566778899aabbccddeeff"),
		"ciphersuiteId":                            str("0x1301"),
		"ciphersuiteString":                        str("TLS_AES_128_GCM_SHA256"),
		"tlsVersion":                               str("TLSv1.3"),
	}, nil)
}

// streamInfo is a stream's information ("Stream info object API").
func streamInfo(L *lua.LState) *lua.LTable {
	str := func(s string) lua.LGFunction { return returning(lua.LString(s)) }
	return object(L, map[string]lua.LGFunction{
		"protocol":                      str("HTTP/1.1"),
		"routeName":                     str("attache-route"),
		"virtualClusterName":            str(""),
		"downstreamDirectLocalAddress":  str("10.0.0.2:10080"),
		"downstreamLocalAddress":        str("10.0.0.2:10080"),
		"downstreamDirectRemoteAddress": str("10.0.0.3:40000"),
		"downstreamRemoteAddress":       str("10.0.0.3:40000"),
		"dynamicMetadata":               func(L *lua.LState) int { L.Push(dynamicMetadata(L)); return 1 },
		"dynamicTypedMetadata":          typedMetadata,
		"filterState": func(L *lua.LState) int {
			L.Push(object(L, map[string]lua.LGFunction{"get": returning(lua.LString(neutral))}, nil))
			return 1
		},
		"downstreamSslConnection": func(L *lua.LState) int { L.Push(sslConnection(L)); return 1 },
		"requestedServerName":     str("attache.example.com"),
	}, nil)
}

// streamHandle is the handle an entry point is called with ("Stream
// handle API").
func streamHandle(L *lua.LState) *lua.LTable {
	newHeaders := func(L *lua.LState) int { L.Push(headersObject(L)); return 1 }
	return object(L, map[string]lua.LGFunction{
		"headers": newHeaders,
		"body":    func(L *lua.LState) int { L.Push(buffer(L)); return 1 },
		"bodyChunks": func(L *lua.LState) int {
			left := 2
			L.Push(L.NewFunction(func(L *lua.LState) int {
				if left == 0 {
					L.Push(lua.LNil)
					return 1
				}
				left--
				L.Push(buffer(L))
				return 1
			}))
			return 1
		},
		"trailers": newHeaders,
		"httpCall": func(L *lua.LState) int {
			if !lua.LVCanConvToString(L.Get(2)) {
				L.RaiseError("bad argument #1 to 'httpCall' (string expected, got %s)", L.Get(2).Type())
			}
			// The response: the request's headers with :status, and its
			// body.
			h := L.NewTable()
			if req, ok := L.Get(3).(*lua.LTable); ok {
				req.ForEach(func(k, v lua.LValue) { h.RawSet(k, v) })
			}
			if h.RawGetString(":status") == lua.LNil {
				h.RawSetString(":status", lua.LString("200"))
			}
			body := lua.LString("")
			if s, ok := L.Get(4).(lua.LString); ok {
				body = s
			}
			L.Push(h)
			L.Push(body)
			return 2
		},
		"respond": func(L *lua.LState) int {
			h, ok := L.Get(2).(*lua.LTable)
			if !ok || !lua.LVCanConvToString(h.RawGetString(":status")) {
				L.RaiseError("respond: the headers must be a table setting :status")
			}
			return 0
		},
		"metadata":                func(L *lua.LState) int { L.Push(metadataObject(L)); return 1 },
		"streamInfo":              func(L *lua.LState) int { L.Push(streamInfo(L)); return 1 },
		"connection":              func(L *lua.LState) int { L.Push(connection(L)); return 1 },
		"connectionStreamInfo":    func(L *lua.LState) int { L.Push(connectionStreamInfo(L)); return 1 },
		"setUpstreamOverrideHost": returning(),
		"clearRouteCache":         returning(),
		"filterContext":           func(L *lua.LState) int { L.Push(metadataObject(L)); return 1 },
		"importPublicKey":         returning(lua.LString("attache-public-key")),
		"verifySignature":         returning(lua.LTrue, lua.LString("")),
		"base64Escape": func(L *lua.LState) int {
			v := L.Get(2)
			if lua.LVCanConvToString(v) {
				v = lua.LString(base64.StdEncoding.EncodeToString([]byte(lua.LVAsString(v))))
			}
			L.Push(v)
			return 1
		},
		"timestamp": func(L *lua.LState) int { L.Push(lua.LNumber(time.Now().UnixMilli())); return 1 },
		"timestampString": func(L *lua.LState) int {
			t := time.Now()
			s := strconv.FormatInt(t.UnixMilli(), 10)
			if n, ok := L.Get(2).(lua.LNumber); ok && n == 1 {
				s = strconv.FormatInt(t.UnixMicro(), 10)
			}
			L.Push(lua.LString(s))
			return 1
		},
	}, nil)
}

// connection is a stream's connection ("Connection object API").
func connection(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{
		"ssl": func(L *lua.LState) int { L.Push(sslConnection(L)); return 1 },
	}, nil)
}

// connectionStreamInfo is a connection's stream information
// ("Connection stream info object API").
func connectionStreamInfo(L *lua.LState) *lua.LTable {
	return object(L, map[string]lua.LGFunction{
		"dynamicMetadata":      func(L *lua.LState) int { L.Push(dynamicMetadata(L)); return 1 },
		"dynamicTypedMetadata": typedMetadata,
	}, nil)
}

// Methods lists the methods of each object of the model, by the name of
// its section in Envoy's documentation, for tests to compare with other
// models of the API.
func Methods() map[string][]string {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	out := map[string][]string{}
	add := func(name string, o *lua.LTable) {
		idx := L.GetMetatable(o).(*lua.LTable).RawGetString("__index").(*lua.LTable)
		idx.ForEach(func(k, _ lua.LValue) { out[name] = append(out[name], k.String()) })
		slices.Sort(out[name])
	}
	add("stream handle", streamHandle(L))
	add("header object", headersObject(L))
	add("buffer", buffer(L))
	add("metadata object", metadataObject(L))
	add("stream info object", streamInfo(L))
	add("connection stream info object", connectionStreamInfo(L))
	add("dynamic metadata object", dynamicMetadata(L))
	add("connection object", connection(L))
	add("SSL connection object", sslConnection(L))
	add("parsed name object", parsedName(L))
	return out
}
