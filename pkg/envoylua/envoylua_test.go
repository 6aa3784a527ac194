package envoylua

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Scripts using each part of Envoy's documented stream-handle API, in the
// ways its documentation shows, run without error: the model answers with
// the documented types (a buffer's length is a number, SAN lists are
// tables, a parsed name's organizationName is a table that also
// concatenates, as Envoy Gateway's validation gives a string there).
func TestModelAnswersTheDocumentedAPI(t *testing.T) {
	for name, body := range map[string]string{
		"headers": `local hs = h:headers()
			hs:add("x-size", h:body():length())
			hs:replace("content-type", "text/html")
			hs:remove("foo")
			local v = hs:get(":path") .. hs:getAtIndex("x", 0)
			assert(hs:getNumValues("x") + 1 > 0)
			for k, v in pairs(hs) do h:logInfo(k .. "=" .. v) end
			hs:setHttp1ReasonPhrase("Nope"); assert(type(hs:getHttp1ReasonPhrase()) == "string")
			local tr = h:trailers(); tr:add("t", "v")`,
		"body": `local b = h:body(true)
			local bytes = b:getBytes(0, b:length())
			h:logErr("body: " .. bytes)
			b:setBytes("<html></html>")
			local last
			for chunk in h:bodyChunks() do chunk:setBytes(""); last = chunk end
			last:setBytes("done")`,
		"httpCall and respond": `local headers, body = h:httpCall("lua_cluster",
				{[":method"] = "POST", [":path"] = "/", [":authority"] = "lua_cluster", ["set-cookie"] = {"a=1", "b=2"}},
				"hello world", 5000)
			h:headers():add("upstream_body_size", #body)
			local _, _ = h:httpCall("c", {[":method"] = "GET"}, nil, {["asynchronous"] = true, ["timeout_ms"] = 100})
			h:respond({[":status"] = "403", ["upstream_foo"] = headers["foo"]}, "nope")
			h:respond({[":status"] = 200})`,
		"metadata and filter context": `local m = h:metadata()
			local v = m:get("key")
			for k, v in pairs(m) do h:logDebug(k) end
			local ctx = h:filterContext()
			if ctx ~= nil then local c = ctx:get("custom"); if c ~= nil then h:headers():add("x", c) end end
			local _ = ctx["key"]`,
		"stream info": `local si = h:streamInfo()
			h:logInfo(si:protocol() .. si:routeName() .. si:virtualClusterName() .. si:requestedServerName())
			h:logInfo(si:downstreamDirectLocalAddress() .. si:downstreamLocalAddress() .. si:downstreamDirectRemoteAddress() .. si:downstreamRemoteAddress())
			local dm = si:dynamicMetadata()
			dm:set("envoy.filters.http.lua", "request.info", {auth = "a"})
			local entry = dm:get("envoy.filters.http.lua")
			local _ = entry["request.info"]
			h:logInfo("meta: " .. entry)
			for k, v in pairs(dm) do end
			local typed = si:dynamicTypedMetadata("envoy.filters.http.set_metadata")
			if typed then local _ = typed.metadata_namespace end
			local fs = si:filterState():get("auth.result", "field")
			local ssl = si:downstreamSslConnection()
			assert(ssl:tlsVersion())`,
		"connection and SSL": `local conn = h:connection()
			local ssl = conn:ssl()
			if ssl == nil then return end
			if ssl:peerCertificatePresented() and ssl:peerCertificateValidated() then
				h:logTrace(table.concat(ssl:uriSanLocalCertificate(), ","))
				h:logTrace(table.concat(ssl:uriSanPeerCertificate(), ",") .. table.concat(ssl:dnsSansPeerCertificate(), ",") .. table.concat(ssl:dnsSansLocalCertificate(), ","))
				h:logTrace(table.concat(ssl:oidsPeerCertificate(), ",") .. table.concat(ssl:oidsLocalCertificate(), ","))
				h:logTrace(ssl:sha256PeerCertificateDigest() .. ssl:serialNumberPeerCertificate() .. ssl:issuerPeerCertificate() .. ssl:subjectPeerCertificate() .. ssl:subjectLocalCertificate())
				h:logTrace(ssl:urlEncodedPemEncodedPeerCertificate() .. ssl:urlEncodedPemEncodedPeerCertificateChain())
				h:logTrace(ssl:sessionId() .. ssl:ciphersuiteId() .. ssl:ciphersuiteString() .. ssl:tlsVersion())
				assert(ssl:expirationPeerCertificate() > ssl:validFromPeerCertificate())
				local subject = ssl:parsedSubjectPeerCertificate()
				if subject then
					h:logTrace("CN: " .. subject:commonName())
					h:logTrace("O: " .. table.concat(subject:organizationName(), ","))
					h:logTrace("O: " .. subject:organizationName())
				end
			end
			local cx = h:connectionStreamInfo()
			local _ = cx:dynamicMetadata():get("envoy.lb")
			local _ = cx:dynamicTypedMetadata("envoy.filters.listener.proxy_protocol")`,
		"the rest": `h:setUpstreamOverrideHost("192.168.21.13", false)
			h:clearRouteCache()
			local key = h:importPublicKey("der", 3)
			local ok, err = h:verifySignature("SHA256", key, "sig", 3, "data", 4)
			assert(ok and err == "")
			assert(h:base64Escape("input string") == "aW5wdXQgc3RyaW5n")
			assert(h:timestamp() > 0 and h:timestamp(EnvoyTimestampResolution.MILLISECOND) > 0)
			assert(#h:timestampString(EnvoyTimestampResolution.MICROSECOND) > #h:timestampString())
			h:logTrace("t"); h:logDebug(1); h:logInfo("i"); h:logWarn("w"); h:logErr("e"); h:logCritical("c")`,
		"the standard libraries": `local t = {3, 1, 2}
			table.sort(t); table.insert(t, 4); table.remove(t, 1)
			local s = string.format("%s-%d-%05.2f", "a", 3, 1.5):upper():rep(2):sub(2, 5)
			local a, b = ("key=value"):match("^(.-)=(.-)$")
			local n = select("#", unpack({1, 2, 3}))
			local r = ("a,b,c"):gsub(",", ";")
			for w in ("a b c"):gmatch("%a") do end
			local ok = pcall(error, "caught")
			local co = coroutine.wrap(function(x) coroutine.yield(x + 1) end)
			assert(co(1) == 2)
			assert(math.floor(2.5) == 2 and tostring(nil) == "nil" and tonumber("12") == 12)
			local d = os.date("!%Y-%m-%dT%H:%M:%SZ", os.time()); local c = os.clock()
			print("discarded")`,
	} {
		script := "function envoy_on_request(h)\n" + body + "\nend\nfunction envoy_on_response(h)\n" + body + "\nend"
		if v := validate(script); v.Err != nil || v.NotJudged != "" {
			t.Errorf("%s: %+v", name, v)
		}
	}
}

// What Envoy Gateway's Strict validation refuses, attache refuses: calls
// of what Envoy's API lacks, of globals that do not exist, of what the
// validation removes, the checks both make, paths and variables it
// protects, a stack too deep, a script that does not parse once the call
// is appended, one that runs for ever (the instruction budget, also in a
// coroutine, also past a pcall).
func TestRefusals(t *testing.T) {
	for body, want := range map[string]string{
		`h:unknownApi()`:                                     "attempt to call a non-function object",
		`h:httpPostCall("c", {}, "b", 1)`:                    "attempt to call a non-function object",
		`h:headers():get("x"):nope()`:                        "attempt to call a non-function object",
		`return envoy.lua.ResponseStatus.Continue`:           "attempt to index a non-table object(nil) with key 'lua'",
		`json.decode(h:body():getBytes(0, 1))`:               "attempt to index a non-table object(nil) with key 'decode'",
		`h:logInfo(nil)`:                                     "bad argument #1 to 'logInfo' (string expected, got nil)",
		`h:streamInfo():logWarn({})`:                         "bad argument #1 to 'logWarn'",
		`h:httpCall(nil, {}, "", 1)`:                         "bad argument #1 to 'httpCall'",
		`h:respond({}, "nope")`:                              "respond: the headers must be a table setting :status",
		`h:respond("403")`:                                   "respond: the headers must be a table setting :status",
		`setmetatable({}, {})`:                               "attempt to call a non-function object",
		`local f = loadstring("return 1")`:                   "attempt to call a non-function object",
		`require("json")`:                                    "attempt to call a non-function object",
		`debug.getinfo(1)`:                                   "attempt to index a non-table object(nil) with key 'getinfo'",
		`io.popen("ls")`:                                     "attempt to call a non-function object",
		`os.execute("ls")`:                                   "attempt to call a non-function object",
		`local x = _G.h`:                                     "attempt to index a non-table object(nil)",
		`io.open("/etc/passwd")`:                             "access to critical path /etc/passwd is restricted for security",
		`io.lines("etc//passwd/")`:                           "access to critical path etc//passwd/ is restricted for security",
		`os.remove("/var/run/secrets/token")`:                "access to critical path",
		`io.open("/tmp/../etc/passwd")`:                      "path traversals are restricted for security",
		`io.input([[etc\.\passwd]])`:                         "path traversals are restricted for security",
		`os.getenv("pwd")`:                                   "access to critical environment variable pwd is restricted for security",
		`os.setenv("PWD", "/")`:                              "setting critical environment variable PWD",
		`local function f(n) return f(n + 1) + 1 end f(1)`:   "stack overflow",
		`while true do end`:                                  "ran past 10000000 Lua instructions",
		`coroutine.wrap(function() while true do end end)()`: "ran past 10000000 Lua instructions",
		`pcall(function() while true do end end) local n = 0 while true do n = n + 1 end`: "ran past 10000000 Lua instructions",
	} {
		v := validate("function envoy_on_request(h)\n" + body + "\nend")
		if v.Err == nil || !strings.Contains(v.Err.Error(), want) {
			t.Errorf("%s: %+v, want an error saying %q", body, v, want)
		}
	}
	// The call is appended to the script's text: a script ending in a
	// return does not parse then.
	if v := validate("function envoy_on_request(h) end\nreturn 1"); v.Err == nil || !strings.Contains(v.Err.Error(), "does not parse") {
		t.Errorf("a script ending in return: %+v", v)
	}
}

// The entry points: each one the text names runs, in a fresh sandbox (a
// global the request's run set is not there for the response's); a local
// function of that name is the one called, as the call is appended to the
// script's text; a name only in a comment calls nothing (refused); a
// script naming none is not run.
func TestEntryPoints(t *testing.T) {
	for script, want := range map[string]string{
		"local function envoy_on_request(h) h:logInfo('local') end":                                                "",
		"function envoy_on_request(h) seen = true end\nfunction envoy_on_response(h) assert(seen, 'not seen') end": "with envoy_on_response: <script>:2: not seen",
		"-- envoy_on_response is not defined\nfunction envoy_on_request(h) end":                                    "with envoy_on_response: <script>:3: attempt to call a non-function object",
		"function envoy_on_response(h) h:nope() end":                                                               "with envoy_on_response",
		"h:nope()": "",
		"function envoy_on_request(h) end\nfunction envoy_on_response(h) h:logInfo(h:headers():get(':status')) end": "",
	} {
		v := validate(script)
		switch {
		case want == "" && v.Err != nil, want != "" && (v.Err == nil || !strings.Contains(v.Err.Error(), want)):
			t.Errorf("%q: %+v, want %q", script, v, want)
		}
	}
	if NamesEntryPoint("h:nope()") || !NamesEntryPoint("-- envoy_on_response") {
		t.Error("NamesEntryPoint")
	}
}

// attache's own bounds: a script building a long string (by
// concatenation or a library function), a pattern match or gsub that
// could take long, or syntax nested too deep, is not judged rather than
// refused (Envoy Gateway would have run it).
func TestNotJudged(t *testing.T) {
	for body, want := range map[string]string{
		`local s = "x" for i = 1, 40 do s = s .. s end`:                                  "built a string of 524288 bytes (attache's bound: 262144)",
		`local t = {} for i = 1, 100 do t[i] = ("x"):rep(200000) .. i end`:               "built more than 16 MiB of strings",
		`string.rep("ab", 1e12)`:                                                         "string.rep would build a string",
		`string.format("%999999d", 1)`:                                                   "string.format would build a string",
		`local t = {} for i = 1, 2000 do t[i] = ("y"):rep(200) end table.concat(t, ",")`: "table.concat would build a string",
		`string.find(("a"):rep(3000), "a-a-a-b")`:                                        "string.find: pattern \"a-a-a-b\" over 3000 bytes may take about",
		`local s = ("a"):rep(100000) s:match(".*b")`:                                     "string.match: a pattern with repetitions over 100000 bytes",
		`("x"):rep(100000):gsub(".", "%0")`:                                              "string.gsub",
		`("x"):rep(20000):gsub(".", function(c) return c end)`:                           "string.gsub: 20000 replacements",
	} {
		v := validate("function envoy_on_request(h)\n" + body + "\nend")
		if v.Err != nil || !strings.Contains(v.NotJudged, want) {
			t.Errorf("%s: %+v, want not judged: %q", body, v, want)
		}
	}
	deep := "function envoy_on_request(h) local x = " + strings.Repeat("{", MaxDepth) + "1" + strings.Repeat("}", MaxDepth) + " end"
	if v := validate(deep); v.Err != nil || !strings.Contains(v.NotJudged, "nests more than") {
		t.Errorf("deep syntax: %+v", v)
	}
}

// Validate keeps verdicts by script.
func TestValidateCaches(t *testing.T) {
	s := "function envoy_on_request(h) h:cached() end -- TestValidateCaches"
	a := Validate(s)
	key := [32]byte{}
	cache.mu.Lock()
	n := len(cache.m)
	for k, v := range cache.m {
		if v.Err != nil && a.Err != nil && v.Err.Error() == a.Err.Error() {
			key = k
		}
	}
	cache.mu.Unlock()
	if a.Err == nil || n == 0 || key == ([32]byte{}) {
		t.Fatalf("verdict %+v not kept (%d kept)", a, n)
	}
	if b := Validate(s); b != a {
		t.Errorf("second verdict %+v, want the kept %+v", b, a)
	}
}

// Methods lists the model's methods of each object of Envoy's API.
func TestMethods(t *testing.T) {
	m := Methods()
	for obj, methods := range map[string][]string{
		"stream handle":         {"headers", "body", "bodyChunks", "trailers", "httpCall", "respond", "metadata", "streamInfo", "connection", "connectionStreamInfo", "setUpstreamOverrideHost", "clearRouteCache", "filterContext", "importPublicKey", "verifySignature", "base64Escape", "timestamp", "timestampString", "logInfo"},
		"SSL connection object": {"peerCertificatePresented", "parsedSubjectPeerCertificate", "tlsVersion", "logCritical"},
		"header object":         {"add", "get", "getAtIndex", "getNumValues", "remove", "replace", "setHttp1ReasonPhrase", "getHttp1ReasonPhrase"},
	} {
		for _, name := range methods {
			if !slices.Contains(m[obj], name) {
				t.Errorf("%s lacks %s: %v", obj, name, m[obj])
			}
		}
	}
}

// FuzzValidate runs fuzz strings as scripts, and as the body of an entry
// point: no panic and no hang (the budgets), and the same verdict twice.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		"h:headers():get('x')", "while true do end", "local s = 'x' for i = 1, 64 do s = s .. s end",
		"return h:body():getBytes(0, 1):rep(1e9)", "coroutine.wrap(function() while true do end end)()",
		"string.find(string.rep('a', 5000), '.-.-.-.-b')", "io.open('/etc/passwd')", "setfenv(1, {})",
		"local t = {} for i = 1, 1e6 do t[#t + 1] = {} end", "string.format('%0999999.999999f', 1)",
		"local co = coroutine.create(function() coroutine.yield() end) coroutine.resume(co) coroutine.resume(co) coroutine.resume(co)",
		"xpcall(function() error({}) end, function(e) error(e) end)", "select(-1, 1)", "unpack({}, 1, 1e8)",
		"string.byte(('x'):rep(100000), 1, -1)", "table.concat({1, 2, {}})", "os.date(('%c'):rep(10000))",
		"(''):gsub('', ('x'):rep(1000))", "newproxy(true)", "getfenv(0).h = 1 tostring(getfenv(0))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, script := range []string{s, "function envoy_on_request(h)\n" + s + "\nend"} {
			a, b := validate(script), validate(script)
			backstop := func(v Verdict) bool {
				return strings.Contains(v.NotJudged, "ran longer than") || strings.Contains(v.NotJudged, "the process allocated")
			}
			if backstop(a) || backstop(b) {
				continue // wall time and the process's allocations vary
			}
			if a.NotJudged != b.NotJudged || (a.Err == nil) != (b.Err == nil) || (a.Err != nil && a.Err.Error() != b.Err.Error()) {
				t.Fatalf("%q: %+v, then %+v", script, a, b)
			}
		}
	})
}

// BenchmarkValidate: one uncached run of a script of the size of Envoy
// Gateway's fixtures' (both entry points), and the instruction budget's
// worst case (a loop to the end of it).
func BenchmarkValidate(b *testing.B) {
	for name, script := range map[string]string{
		"typical": `function envoy_on_request(h)
				local path = h:headers():get(":path")
				if path and path:find("^/api") then h:headers():add("x-api", "1") end
				for chunk in h:bodyChunks() do h:logInfo("chunk " .. chunk:length()) end
			end
			function envoy_on_response(h)
				local ct = h:headers():get("content-type")
				if ct and string.find(ct, "application/json", 1, true) then h:body():setBytes("{}") end
			end`,
		"budget": `function envoy_on_request(h) while true do end end`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				validate(script)
			}
		})
	}
}

// A script whose endless tail calls run into the instruction budget stops
// within attache's allocation bound: the error's stack traceback, which
// gopher-lua would build with one line per tail call recorded (millions),
// after the bounds stop counting, is never built.
func TestTailCallsStopWithinBounds(t *testing.T) {
	const s = "function envoy_on_request(h) local function f(n) return f(n+1) end f(1) end"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := validate(s)
	runtime.ReadMemStats(&after)
	if v.Err == nil || !strings.Contains(v.Err.Error(), "ran past") {
		t.Fatalf("verdict %+v, want refused for running past the instruction budget", v)
	}
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MiB", got>>20)
	if got > 2*maxAllocated {
		t.Errorf("the run allocated %d MiB, over twice attache's bound of %d MiB", got>>20, maxAllocated>>20)
	}
}
