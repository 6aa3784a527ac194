package envoylua

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// sandbox opens the libraries a script may use in L and puts the stream
// handle in place. Of Lua's standard libraries: the base functions, table,
// string, math and coroutine, less what Envoy Gateway's validation takes
// away (loading code or modules, metatables, raw access, the globals
// table, debug) and with the functions that can build large strings or
// run long bounded; io and os are stand-ins (standIns).
func sandbox(L *lua.LState, b *budget) {
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	// Removed as Envoy Gateway's validation removes them (a script
	// calling one fails there), and for the sandbox.
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring", "require", "module",
		"getmetatable", "setmetatable", "rawget", "rawset", "_G", "_printregs"} {
		L.SetGlobal(name, lua.LNil)
	}
	L.SetGlobal("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	// collectgarbage would run the process's collector.
	L.SetGlobal("collectgarbage", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 }))
	guardStrings(L, b)
	guardTable(L, b)
	guardCoroutines(L, b)
	standIns(L, b)
	L.SetGlobal(handleGlobal, streamHandle(L))
	// The resolutions timestamp() and timestampString() take.
	res := L.NewTable()
	res.RawSetString("MILLISECOND", lua.LNumber(0))
	res.RawSetString("MICROSECOND", lua.LNumber(1))
	L.SetGlobal("EnvoyTimestampResolution", res)
}

// original is the function a library table holds under name.
func original(L *lua.LState, lib, name string) *lua.LFunction {
	return L.GetField(L.GetGlobal(lib), name).(*lua.LFunction)
}

// callThrough calls fn with the arguments of the running Go function and
// returns its results.
func callThrough(L *lua.LState, fn *lua.LFunction) int {
	n := L.GetTop()
	L.Push(fn)
	for i := 1; i <= n; i++ {
		L.Push(L.Get(i))
	}
	L.Call(n, lua.MultRet)
	return L.GetTop() - n
}

// guardStrings bounds the string functions that can build strings much
// longer than their arguments, or match patterns for long.
func guardStrings(L *lua.LState, b *budget) {
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	set := func(name string, f func(*lua.LState, *lua.LFunction) int) {
		orig := original(L, lua.StringLibName, name)
		str.RawSetString(name, L.NewFunction(func(L *lua.LState) int { return f(L, orig) }))
	}
	set("rep", func(L *lua.LState, orig *lua.LFunction) int {
		s, n := L.CheckString(1), L.CheckInt64(2)
		if n > 0 && len(s) > 0 {
			b.grow(L, int64(len(s))*min(n, MaxString+1), "string.rep")
		}
		return callThrough(L, orig)
	})
	set("format", func(L *lua.LState, orig *lua.LFunction) int {
		b.grow(L, formatBound(L), "string.format")
		return callThrough(L, orig)
	})
	for _, name := range []string{"find", "match"} {
		name := name
		set(name, func(L *lua.LState, orig *lua.LFunction) int {
			s, p := L.CheckString(1), L.CheckString(2)
			if !(name == "find" && lua.LVAsBool(L.Get(4))) {
				patternCost(L, b, "string."+name, s, p)
			}
			return callThrough(L, orig)
		})
	}
	// gmatch is a closure over its iterator; its matches are all found
	// when it is called.
	set("gmatch", func(L *lua.LState, orig *lua.LFunction) int {
		patternCost(L, b, "string.gmatch", L.CheckString(1), L.CheckString(2))
		return callThrough(L, orig)
	})
	str.RawSetString("gfind", str.RawGetString("gmatch"))
	set("gsub", func(L *lua.LState, orig *lua.LFunction) int {
		s, p := L.CheckString(1), L.CheckString(2)
		patternCost(L, b, "string.gsub", s, p)
		mds, err := pm.Find(p, []byte(s), 0, L.OptInt(4, -1))
		if err != nil {
			return callThrough(L, orig) // it raises the pattern's error
		}
		// gopher-lua copies the whole result once per replacement.
		copies := func(out int64) {
			if cost := int64(len(mds)) * (int64(len(s)) + out); cost > maxGsubCopy {
				b.refuse(L, fmt.Sprintf("string.gsub: %d replacements over %d bytes would copy about %d bytes (attache's bound: %d)", len(mds), len(s)+int(out), cost, int64(maxGsubCopy)))
			}
		}
		switch repl := L.Get(3).(type) {
		case lua.LString, *lua.LTable:
			out := gsubBound(s, mds, repl)
			b.grow(L, out, "string.gsub")
			copies(out)
		case *lua.LFunction:
			// Count what the function gives as it is called.
			total := int64(len(s))
			L.Replace(3, L.NewFunction(func(L *lua.LState) int {
				n := L.GetTop()
				L.Push(repl)
				for i := 1; i <= n; i++ {
					L.Push(L.Get(i))
				}
				L.Call(n, 1)
				if v := L.Get(-1); lua.LVCanConvToString(v) {
					total += int64(len(lua.LVAsString(v)))
					b.grow(L, total, "string.gsub")
					copies(total)
				}
				return 1
			}))
		}
		return callThrough(L, orig)
	})
}

// gsubBound is the length of gsub's result with a string or table
// replacement: the subject, plus each match's replacement.
func gsubBound(s string, mds []*pm.MatchData, repl lua.LValue) int64 {
	total := int64(len(s))
	for _, m := range mds {
		switch r := repl.(type) {
		case lua.LString:
			// Each %d stands for a capture (or the whole match): at most
			// the subject.
			n := int64(len(r))
			for i := 0; i+1 < len(r); i++ {
				if r[i] == '%' {
					if c := r[i+1]; c >= '0' && c <= '9' {
						n += int64(len(s))
					}
					i++
				}
			}
			total += n
		case *lua.LTable:
			idx := 0
			if m.CaptureLength() > 2 {
				idx = 2
			}
			var v lua.LValue
			if m.IsPosCapture(idx) {
				v = r.RawGetInt(m.Capture(idx))
			} else {
				v = r.RawGetString(s[m.Capture(idx):m.Capture(idx+1)])
			}
			if lua.LVCanConvToString(v) {
				total += int64(len(lua.LVAsString(v)))
			}
		}
		if total > MaxStringBytes {
			break
		}
	}
	return total
}

// formatBound bounds the length of string.format's result (gopher-lua
// formats with Go's fmt, whose widths reach a million): the format, and
// per directive its width or precision and the text of its argument.
func formatBound(L *lua.LState) int64 {
	f := L.CheckString(1)
	total := int64(len(f))
	arg := 2
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		var widest int64
		for i < len(f) && strings.IndexByte("-+ #0123456789.*", f[i]) >= 0 {
			j := i
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				j++
			}
			if j > i {
				if n, err := strconv.ParseInt(f[i:j], 10, 64); err == nil && n > widest {
					widest = n
				} else if err != nil {
					widest = MaxString + 1
				}
				i = j
				continue
			}
			i++
		}
		total += widest + 32
		if arg <= L.GetTop() {
			if v := L.Get(arg); lua.LVCanConvToString(v) {
				total += int64(len(lua.LVAsString(v)))
			}
		}
		arg++
	}
	return total
}

// patternCost refuses (not judged) a match whose cost the bound cannot
// promise: gopher-lua's matcher backtracks, so a pattern with r
// repetitions (*, +, -) over a subject of n bytes may take about
// (n+1)^r steps from each start position, and it recurses per character.
func patternCost(L *lua.LState, b *budget, what, s, p string) {
	reps, optional, anchored := patternShape(p)
	if reps == 0 && optional == 0 {
		return
	}
	if reps > 0 && len(s) > maxPatternSubject {
		b.refuse(L, fmt.Sprintf("%s: a pattern with repetitions over %d bytes (attache's bound: %d)", what, len(s), maxPatternSubject))
	}
	cost := 1.0
	for range reps {
		cost *= float64(len(s) + 1)
	}
	for range optional {
		cost *= 2
	}
	if !anchored {
		cost *= float64(len(s) + 1)
	}
	if cost > maxPatternCost {
		b.refuse(L, fmt.Sprintf("%s: pattern %q over %d bytes may take about %.0g steps (attache's bound: %.0g)", what, p, len(s), cost, float64(maxPatternCost)))
	}
}

// patternShape counts a Lua pattern's repetitions (items followed by *, +
// or -) and optional items (?), and whether it is anchored (^).
func patternShape(p string) (reps, optional int, anchored bool) {
	i := 0
	if strings.HasPrefix(p, "^") {
		anchored, i = true, 1
	}
	for i < len(p) {
		switch c := p[i]; c {
		case '(', ')':
			i++
			continue
		case '%':
			if i+1 < len(p) && p[i+1] == 'b' {
				i += 4
				continue
			}
			if i+1 < len(p) && p[i+1] == 'f' {
				i = skipSet(p, i+2)
				continue
			}
			i += 2
		case '[':
			i = skipSet(p, i)
		case '$':
			i++
			continue
		default:
			i++
		}
		if i < len(p) {
			switch p[i] {
			case '*', '+', '-':
				reps++
				i++
			case '?':
				optional++
				i++
			}
		}
	}
	return reps, optional, anchored
}

// skipSet returns the index after the set starting at p[i] ('[').
func skipSet(p string, i int) int {
	if i >= len(p) || p[i] != '[' {
		return i
	}
	i++
	if i < len(p) && p[i] == '^' {
		i++
	}
	first := true
	for i < len(p) {
		switch {
		case p[i] == '%':
			i += 2
		case p[i] == ']' && !first:
			return i + 1
		default:
			i++
		}
		first = false
	}
	return i
}

// guardTable bounds table.concat.
func guardTable(L *lua.LState, b *budget) {
	tbl := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	orig := original(L, lua.TabLibName, "concat")
	tbl.RawSetString("concat", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		sep := L.OptString(2, "")
		i, j := L.OptInt(3, 1), L.OptInt(4, t.Len())
		var total int64
		for k := i; k <= j; k++ {
			v := t.RawGetInt(k)
			if !lua.LVCanConvToString(v) {
				break // concat raises it
			}
			total += int64(len(lua.LVAsString(v)) + len(sep))
			if total > MaxString {
				break
			}
		}
		b.grow(L, total, "table.concat")
		return callThrough(L, orig)
	}))
}

// guardCoroutines gives each coroutine the run's budget (gopher-lua gives
// a coroutine a child context, which would not count its instructions).
func guardCoroutines(L *lua.LState, b *budget) {
	co := L.GetGlobal(lua.CoroutineLibName).(*lua.LTable)
	create, resume := original(L, lua.CoroutineLibName, "create"), original(L, lua.CoroutineLibName, "resume")
	mine := L.NewFunction(func(L *lua.LState) int {
		n := callThrough(L, create)
		if th, ok := L.Get(-1).(*lua.LState); ok {
			th.SetContext(b)
		}
		return n
	})
	co.RawSetString("create", mine)
	co.RawSetString("wrap", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckFunction(1)
		L.Push(mine)
		L.Push(fn)
		L.Call(1, 1)
		th := L.Get(-1)
		L.Push(L.NewFunction(func(L *lua.LState) int {
			n := L.GetTop()
			L.Push(resume)
			L.Push(th)
			for i := 1; i <= n; i++ {
				L.Push(L.Get(i))
			}
			L.Call(n+1, lua.MultRet)
			if lua.LVIsFalse(L.Get(n + 1)) {
				L.RaiseError("%s", lua.LVAsString(L.Get(n+2)))
			}
			return L.GetTop() - n - 1
		}))
		return 1
	}))
}

// Envoy Gateway's validation refuses, in io and os, these paths and
// their subtrees, any path with a "." or ".." segment (both after
// turning backslashes into slashes), and these environment variables
// (case-insensitive): Envoy Gateway v1.9.1
// internal/gatewayapi/luavalidator/security.lua. The stand-ins refuse
// the same; they touch no file and read no variable.
var (
	criticalPaths   = []string{"/etc", "/proc", "/sys", "/certs", "/var/run/secrets", "/run/secrets"}
	criticalEnvVars = []string{"PWD"}
)

// checkPath raises for a path Envoy Gateway's validation refuses.
func checkPath(L *lua.LState, v lua.LValue) {
	s, ok := v.(lua.LString)
	if !ok {
		return
	}
	p := strings.ReplaceAll(string(s), `\`, "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			L.RaiseError("path traversals are restricted for security")
		}
	}
	abs := path.Clean("/" + p)
	for _, c := range criticalPaths {
		if abs == c || strings.HasPrefix(abs, c+"/") {
			L.RaiseError("access to critical path %s is restricted for security", string(s))
		}
	}
}

// checkEnv raises for a variable Envoy Gateway's validation refuses.
func checkEnv(L *lua.LState, v lua.LValue, what string) {
	if s, ok := v.(lua.LString); ok {
		for _, c := range criticalEnvVars {
			if strings.EqualFold(string(s), c) {
				L.RaiseError("%s critical environment variable %s is restricted for security", what, string(s))
			}
		}
	}
}

// standIns installs io and os as stand-ins: Envoy Gateway's validation
// runs the script with gopher-lua's io and os (behind checkPath and
// checkEnv); here a file opened is one that reads nothing and discards
// what is written, a variable is unset, a file removed or renamed is not
// there, and os.exit and os.execute are absent (Envoy Gateway removes
// them, and io.popen).
func standIns(L *lua.LState, b *budget) {
	file := L.NewTable()
	fileMethods := map[string]lua.LGFunction{
		"read":  func(L *lua.LState) int { L.Push(lua.LNil); return 1 },
		"write": func(L *lua.LState) int { L.Push(file); return 1 },
		"lines": func(L *lua.LState) int {
			L.Push(L.NewFunction(func(L *lua.LState) int { L.Push(lua.LNil); return 1 }))
			return 1
		},
		"close":   func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"flush":   func(L *lua.LState) int { L.Push(file); return 1 },
		"seek":    func(L *lua.LState) int { L.Push(lua.LNumber(0)); return 1 },
		"setvbuf": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
	}
	L.SetFuncs(file, fileMethods)
	io := L.NewTable()
	L.SetFuncs(io, map[string]lua.LGFunction{
		"open": func(L *lua.LState) int { checkPath(L, L.Get(1)); L.Push(file); return 1 },
		"lines": func(L *lua.LState) int {
			checkPath(L, L.Get(1))
			return fileMethods["lines"](L)
		},
		"input":   func(L *lua.LState) int { checkPath(L, L.Get(1)); L.Push(file); return 1 },
		"output":  func(L *lua.LState) int { checkPath(L, L.Get(1)); L.Push(file); return 1 },
		"read":    fileMethods["read"],
		"write":   fileMethods["write"],
		"close":   fileMethods["close"],
		"flush":   fileMethods["flush"],
		"tmpfile": func(L *lua.LState) int { L.Push(file); return 1 },
		"type": func(L *lua.LState) int {
			if L.Get(1) == file {
				L.Push(lua.LString("file"))
			} else {
				L.Push(lua.LNil)
			}
			return 1
		},
	})
	for _, name := range []string{"stdin", "stdout", "stderr"} {
		io.RawSetString(name, file)
	}
	L.SetGlobal("io", io)
	os := L.NewTable()
	notThere := func(L *lua.LState) int {
		L.Push(lua.LNil)
		L.Push(lua.LString("No such file or directory"))
		return 2
	}
	L.SetFuncs(os, map[string]lua.LGFunction{
		"time": func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				field := func(k string, def int) int {
					if n, ok := t.RawGetString(k).(lua.LNumber); ok {
						return int(n)
					}
					return def
				}
				L.Push(lua.LNumber(time.Date(field("year", 1970), time.Month(field("month", 1)), field("day", 1),
					field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local).Unix()))
				return 1
			}
			L.Push(lua.LNumber(time.Now().Unix()))
			return 1
		},
		"clock":    func(L *lua.LState) int { L.Push(lua.LNumber(time.Since(b.start).Seconds())); return 1 },
		"difftime": func(L *lua.LState) int { L.Push(lua.LNumber(L.CheckNumber(1) - L.OptNumber(2, 0))); return 1 },
		"date": func(L *lua.LState) int {
			f := L.OptString(1, "%c")
			b.grow(L, int64(len(f))*64, "os.date")
			t := time.Now()
			if n, ok := L.Get(2).(lua.LNumber); ok {
				t = time.Unix(int64(n), 0)
			}
			if strings.HasPrefix(f, "!") {
				f, t = f[1:], t.UTC()
			}
			if strings.HasPrefix(f, "*t") {
				tb := L.NewTable()
				for k, v := range map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day(), "hour": t.Hour(),
					"min": t.Minute(), "sec": t.Second(), "wday": int(t.Weekday()) + 1, "yday": t.YearDay()} {
					tb.RawSetString(k, lua.LNumber(v))
				}
				tb.RawSetString("isdst", lua.LFalse)
				L.Push(tb)
				return 1
			}
			L.Push(lua.LString(strftime(f, t)))
			return 1
		},
		"getenv": func(L *lua.LState) int { checkEnv(L, L.Get(1), "access to"); L.Push(lua.LNil); return 1 },
		"setenv": func(L *lua.LState) int { checkEnv(L, L.Get(1), "setting"); L.Push(lua.LTrue); return 1 },
		"remove": func(L *lua.LState) int { checkPath(L, L.Get(1)); return notThere(L) },
		"rename": func(L *lua.LState) int {
			checkPath(L, L.Get(1))
			checkPath(L, L.Get(2))
			return notThere(L)
		},
		"tmpname": func(L *lua.LState) int { L.Push(lua.LString("/tmp/lua_attache")); return 1 },
	})
	L.SetGlobal("os", os)
}

// strftime formats t for os.date's common directives (others are kept as
// written).
func strftime(f string, t time.Time) string {
	var out strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 == len(f) {
			out.WriteByte(f[i])
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			fmt.Fprintf(&out, "%04d", t.Year())
		case 'y':
			fmt.Fprintf(&out, "%02d", t.Year()%100)
		case 'm':
			fmt.Fprintf(&out, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&out, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&out, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&out, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&out, "%02d", t.Second())
		case 'c':
			out.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'x':
			out.WriteString(t.Format("01/02/06"))
		case 'X':
			out.WriteString(t.Format("15:04:05"))
		case '%':
			out.WriteByte('%')
		default:
			out.WriteByte('%')
			out.WriteByte(f[i])
		}
	}
	return out.String()
}
