package envoylua

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	luaparse "github.com/yuin/gopher-lua/parse"
)

// Bounds of one run. Instructions is the budget standing for Envoy
// Gateway's 5 s (gopher-lua runs some tens of millions of instructions a
// second); the others are attache's own safety bounds.
const (
	// MaxInstructions is the Lua instructions a run may execute.
	MaxInstructions = 10_000_000
	// MaxString is the longest string a run may build (by a library
	// function, checked before it is built, or by concatenation).
	MaxString = 256 << 10
	// MaxStringBytes bounds the bytes of the distinct strings of at
	// least bigString bytes a run builds.
	MaxStringBytes = 16 << 20
	// MaxDepth bounds the nesting of the script's syntax tree (compiling
	// recurses over it; Lua itself refuses more than 200 levels).
	MaxDepth = 1000
	// maxPatternCost bounds the estimated steps of one pattern match.
	maxPatternCost = 5e7
	// maxPatternSubject is the longest subject a pattern with
	// repetitions may match (its matcher recurses per character).
	maxPatternSubject = 64 << 10
	// maxGsubCopy bounds the bytes string.gsub copies (gopher-lua copies
	// its result once per replacement).
	maxGsubCopy = 1e8
	// maxWall and maxAllocated are backstops: the wall time of a run and
	// the bytes the process allocates meanwhile (read every checkEvery
	// instructions).
	maxWall      = 5 * time.Second
	maxAllocated = 64 << 20
	checkEvery   = 1024
	bigString    = 64
)

// Limits of gopher-lua's state, as Envoy Gateway sets them (a script
// needing a deeper call stack or more registers fails there too).
const (
	callStackSize = 256
	registrySize  = 5120
)

// handleGlobal is the global the appended call passes to the entry point.
const handleGlobal = "__attache_envoy_stream_handle"

// errBudget marks errors the bounds raise.
var errBudget = errors.New("attache's Lua budget")

// budget is the context of a run: gopher-lua asks for Done before every
// instruction, which counts them, looks at the strings in the running
// function's registers and, now and then, at the clock and the process's
// allocations. Once a bound is reached Done is closed, so that every
// further instruction raises an error (a script cannot catch its way
// past it: the instruction after the pcall raises too).
type budget struct {
	L       *lua.LState
	n       int64
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex
	after   []func()
	reason  string             // the bound reached; "" while none
	instr   bool               // the bound reached is the instruction budget
	varies  bool               // the bound reached is a backstop (time, the process's allocations)
	seen    map[uintptr]string // held, so that no new string takes an address seen
	bytes   int64
	start   time.Time
	alloc0  uint64
	samples []metrics.Sample
}

func newBudget() *budget {
	b := &budget{done: make(chan struct{}), seen: map[uintptr]string{}, start: time.Now(),
		samples: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
	b.alloc0 = b.allocated()
	return b
}

func (b *budget) allocated() uint64 {
	metrics.Read(b.samples)
	if b.samples[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return b.samples[0].Value.Uint64()
}

// Deadline is part of context.Context: none (the bounds are counted).
func (b *budget) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value is part of context.Context: none.
func (b *budget) Value(any) any { return nil }

// Err is part of context.Context.
func (b *budget) Err() error {
	select {
	case <-b.done:
		return fmt.Errorf("%w: %s", errBudget, b.reason)
	default:
		return nil
	}
}

// AfterFunc lets context.WithCancel (gopher-lua makes a child context
// for each coroutine) be told of the end without a goroutine watching
// Done.
func (b *budget) AfterFunc(f func()) func() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.done:
		go f()
		return func() bool { return false }
	default:
	}
	b.after = append(b.after, f)
	i := len(b.after) - 1
	return func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.after[i] == nil {
			return false
		}
		b.after[i] = nil
		return true
	}
}

// stop closes Done, once, saying why.
func (b *budget) stop(reason string, instr bool) {
	b.once.Do(func() {
		b.mu.Lock()
		b.reason, b.instr = reason, instr
		fs := b.after
		b.after = nil
		close(b.done)
		b.mu.Unlock()
		for _, f := range fs {
			if f != nil {
				f()
			}
		}
	})
}

// Done is part of context.Context; see budget.
func (b *budget) Done() <-chan struct{} {
	b.n++
	if b.n > MaxInstructions {
		b.stop(fmt.Sprintf("ran past %d Lua instructions (Envoy Gateway stops a validation after %v)", MaxInstructions, maxWall), true)
		return b.done
	}
	if b.L != nil {
		th := b.L.G.CurrentThread
		for i, top := 1, th.GetTop(); i <= top; i++ {
			if s, ok := th.Get(i).(lua.LString); ok && len(s) >= bigString {
				b.see(string(s))
			}
		}
	}
	if b.n%checkEvery == 0 {
		if time.Since(b.start) > maxWall {
			b.varies = true
			b.stop(fmt.Sprintf("ran longer than %v", maxWall), false)
		} else if b.allocated()-b.alloc0 > maxAllocated {
			b.varies = true
			b.stop(fmt.Sprintf("the process allocated more than %d MiB while it ran", maxAllocated>>20), false)
		}
	}
	return b.done
}

// see counts a string built by the run, once per string data (the
// strings counted are held until the run ends, so that the count does
// not depend on when the collector frees one and an address comes back).
func (b *budget) see(s string) {
	if len(s) > MaxString {
		b.stop(fmt.Sprintf("built a string of %d bytes (attache's bound: %d)", len(s), MaxString), false)
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if had := b.seen[p]; len(s) > len(had) {
		b.bytes += int64(len(s) - len(had))
		b.seen[p] = s
		if b.bytes > MaxStringBytes {
			b.stop(fmt.Sprintf("built more than %d MiB of strings", MaxStringBytes>>20), false)
		}
	}
}

// grow checks, before a library function builds a string of n bytes,
// that it may: otherwise the run stops and the function raises.
func (b *budget) grow(L *lua.LState, n int64, what string) {
	if n > MaxString {
		b.stop(fmt.Sprintf("%s would build a string of %d bytes (attache's bound: %d)", what, n, MaxString), false)
	} else if b.bytes+n > MaxStringBytes {
		b.stop(fmt.Sprintf("%s would take the strings built past %d MiB", what, MaxStringBytes>>20), false)
	}
	select {
	case <-b.done:
		L.RaiseError("%v", b.Err())
	default:
	}
}

// refuse stops the run at one of attache's bounds (not the instruction
// budget) and raises.
func (b *budget) refuse(L *lua.LState, reason string) {
	b.stop(reason, false)
	L.RaiseError("%v", b.Err())
}

// run loads code in a fresh sandbox and runs it.
func run(code, entry string) (v Verdict) {
	chunk, err := luaparse.Parse(strings.NewReader(code), "<script>")
	if err != nil {
		return Verdict{Err: fmt.Errorf("does not parse: %s", strings.Join(strings.Fields(err.Error()), " "))}
	}
	if d := depth(chunk); d > MaxDepth {
		return Verdict{NotJudged: fmt.Sprintf("its syntax nests more than %d levels deep (attache's bound)", MaxDepth)}
	}
	proto, err := lua.Compile(chunk, "<script>")
	if err != nil {
		return Verdict{Err: fmt.Errorf("does not compile: %v", err)}
	}
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       callStackSize,
		RegistrySize:        registrySize,
		RegistryMaxSize:     registrySize,
		IncludeGoStackTrace: false,
	})
	defer L.Close()
	b := newBudget()
	defer b.stop("the run ended", false) // ends the coroutines' child contexts
	sandbox(L, b)
	L.SetContext(b)
	b.L = L
	defer func() {
		// gopher-lua turns panics into errors in PCall; this is for the
		// sandbox's own code around it.
		if r := recover(); r != nil {
			v = Verdict{Err: fmt.Errorf("the Lua runtime failed: %v", r)}
		}
	}()
	L.Push(L.NewFunctionFromProto(proto))
	// An error handler returning the error as it is: without one, PCall
	// builds a stack traceback, one line per tail call recorded, so an
	// endless tail call stopped by the budget would allocate hundreds of
	// MiB after the bounds stopped counting (luaMessage drops the
	// traceback anyway). On a call-stack overflow the handler cannot be
	// called and gopher-lua builds it all the same (docs/performance.md).
	err = L.PCall(0, 0, L.NewFunction(func(*lua.LState) int { return 1 }))
	b.mu.Lock()
	reason, instr := b.reason, b.instr
	b.mu.Unlock()
	switch {
	case reason != "" && instr:
		return Verdict{Err: errors.New(reason)}
	case reason != "":
		return Verdict{NotJudged: reason, varies: b.varies}
	case err != nil:
		return Verdict{Err: errors.New(luaMessage(err))}
	}
	return Verdict{}
}

// luaMessage is a Lua error's message without its stack traceback.
func luaMessage(err error) string {
	var api *lua.ApiError
	if errors.As(err, &api) && api.Object != nil {
		msg, _, _ := strings.Cut(api.Object.String(), "\nstack traceback:")
		return msg
	}
	msg, _, _ := strings.Cut(err.Error(), "\nstack traceback:")
	return msg
}

// depth is the nesting of a syntax tree: its deepest chain of nodes
// (pointers to structs of package ast), walked without recursion.
func depth(chunk []ast.Stmt) int {
	type item struct {
		v reflect.Value
		d int
	}
	stack := []item{{reflect.ValueOf(chunk), 0}}
	deepest := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		v, d := it.v, it.d
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				continue
			}
			if v.Kind() == reflect.Pointer {
				d++
				if d > deepest {
					deepest = d
				}
				if d > MaxDepth {
					return d
				}
			}
			stack = append(stack, item{v.Elem(), d})
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				stack = append(stack, item{v.Index(i), d})
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanInterface() {
					stack = append(stack, item{f, d})
				}
			}
		}
	}
	return deepest
}
