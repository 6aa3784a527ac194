// Package envoylua runs an Envoy HTTP Lua filter script the way Envoy
// Gateway's Strict Lua validation runs one (EnvoyProxy `luaValidation:
// Strict`, its default): for each entry point the script's text names
// (envoy_on_request, envoy_on_response), the script is loaded with a call
// of that function appended, handed a stream handle, and run; a Lua error
// on the way refuses the script. Envoy Gateway runs the script against
// stubs of Envoy's Lua API of its own; this package runs it against
// attache's own model of the API as Envoy's Lua filter documentation
// describes it (api.go): every documented method of the stream handle and
// of the objects it returns (headers, buffers, metadata, stream info,
// connections, SSL connections, parsed names), answering with values of
// the documented types.
//
// The model is lenient where Envoy Gateway's validation is: methods do
// not check what they are called on, take any arguments, and return a
// value where Envoy may return nil (trailers, a plain connection's SSL
// object), so that a script Envoy Gateway accepts is accepted here; the
// checks it makes are those Envoy Gateway's validation makes as well (a
// log message or an httpCall cluster that is not a string or number, a
// respond without a :status header). The values are attache's own, so a
// script whose path turns on the exact value of a header can take another
// path here than there.
//
// Scripts are untrusted input, and the sandbox is attache's, not Envoy
// Gateway's (which runs the script in its controller with the file system
// and environment behind path checks): no file, process, environment,
// module loading or debug access (io and os are stand-ins that touch
// nothing, with Envoy Gateway's path and variable refusals); output
// discarded; every run bounded by an instruction budget (deterministic,
// counted per Lua instruction), by the size of the strings it may build,
// by the cost of pattern matches, and, as backstops, by wall time and the
// memory the process allocates meanwhile. A script that runs out of the
// instruction budget is refused, as Envoy Gateway refuses one that runs
// past its 5 s; one that reaches another of attache's bounds is not
// judged (Verdict.NotJudged), since Envoy Gateway would have run it.
package envoylua

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
)

// The entry points Envoy looks for in a script (Envoy's Lua filter
// documentation, "Stream handle API").
const (
	OnRequest  = "envoy_on_request"
	OnResponse = "envoy_on_response"
)

// Verdict is the outcome of running a script.
type Verdict struct {
	// Err, when set, says why the script fails: Envoy Gateway's Strict
	// validation refuses it.
	Err error
	// NotJudged, when set, says which of attache's own bounds the script
	// reached, so that no verdict is given (Err is nil).
	NotJudged string
	// varies says NotJudged is a backstop's (wall time, the process's
	// allocations), which another run may not reach: not kept.
	varies bool
}

// NamesEntryPoint reports whether a script's text names one of Envoy's
// entry points, which Envoy Gateway requires of every Lua script, in any
// validation mode (a substring test, as Envoy Gateway's).
func NamesEntryPoint(script string) bool {
	return strings.Contains(script, OnRequest) || strings.Contains(script, OnResponse)
}

// Validate runs script as Envoy Gateway's Strict validation does: once
// per entry point its text names, each time in a fresh sandbox. A script
// naming none is not run (Envoy Gateway refuses it before validating;
// NamesEntryPoint says so). Verdicts are kept by the script's digest, so
// that a script is run once however many Gateways judge it (but for
// those a backstop stopped, which depend on the machine's load).
func Validate(script string) Verdict {
	key := sha256.Sum256([]byte(script))
	cache.mu.Lock()
	v, ok := cache.m[key]
	cache.mu.Unlock()
	if ok {
		return v
	}
	v = validate(script)
	if v.varies {
		return v
	}
	cache.mu.Lock()
	if len(cache.m) >= cacheSize {
		for k := range cache.m { // evict one, any
			delete(cache.m, k)
			break
		}
	}
	cache.m[key] = v
	cache.mu.Unlock()
	return v
}

// cacheSize bounds the verdicts kept.
const cacheSize = 1024

var cache = struct {
	mu sync.Mutex
	m  map[[32]byte]Verdict
}{m: map[[32]byte]Verdict{}}

// validate is Validate without the cache.
func validate(script string) Verdict {
	for _, entry := range []string{OnRequest, OnResponse} {
		if !strings.Contains(script, entry) {
			continue
		}
		// As Envoy Gateway: the call appended to the script's text, so
		// that a local function of that name is the one called.
		v := run(script+"\n"+entry+"("+handleGlobal+")", entry)
		if v.NotJudged != "" {
			return v
		}
		if v.Err != nil {
			v.Err = fmt.Errorf("with %s: %w", entry, v.Err)
			return v
		}
	}
	return Verdict{}
}
