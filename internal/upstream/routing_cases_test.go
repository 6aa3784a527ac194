package upstream

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// routingCase is one request/expected-response case of a Gateway API
// conformance test, read from the test's Go source (a composite literal of
// http.ExpectedResponse or grpc.ExpectedResponse), with the Gateway and
// listener its requests are sent to.
type routingCase struct {
	file  string // tests/<file>.go
	index int    // its position among the file's cases
	line  int
	// targets are the Gateways whose address the request goes to, each
	// with the listener whose port it uses ("" for the first): the last
	// one bound before the case, or, when the case comes first (a table
	// shared by several subtests), every one the file binds.
	targets []gatewayTarget
	grpc    bool
	// tcp (udp) is set for a tcp.ExpectedResponse (udp.ExpectedResponse):
	// a connection, whose backend is all there is to check.
	tcp, udp bool

	// The request.
	host, method, path string
	headers            map[string]string
	grpcMethod         string // Echo, EchoTwo, EchoThree

	// What must come back.
	status                    []int // 200 when none is given
	grpcCode                  string
	backend, namespace        string
	expPath, expHost          string
	expHeaders                map[string]string
	expAbsent                 []string
	hasExpectedRequest        bool
	redirect                  *redirectExpect
	respHeaders               map[string]string
	respAbsent                []string
	backendSetResponseHeaders map[string]string
	mirrors                   []mirrorExpect

	// unreadable names the fields whose value could not be read.
	unreadable []string
}

type gatewayTarget struct{ gateway, listener string }

type redirectExpect struct{ scheme, host, port, path string }

type mirrorExpect struct {
	name, namespace string
	percent         int
}

// routingFile is a conformance test file's manifests and cases.
type routingFile struct {
	file      string
	manifests []string
	cases     []*routingCase
	// otherCases counts the ExpectedResponse literals the harness does
	// not read (the tcp package's outside the forms tcpCases reads): such
	// a file must be skipped with a reason, never dropped silently.
	otherCases int
}

// suiteUtils are the suite's request packages by import path.
var suiteUtils = map[string]string{
	"sigs.k8s.io/gateway-api/conformance/utils/http": "http",
	"sigs.k8s.io/gateway-api/conformance/utils/grpc": "grpc",
	"sigs.k8s.io/gateway-api/conformance/utils/tcp":  "tcp",
}

// canonicalPkgs maps the names under which file f imports the suite's
// request packages (h for http, say) to their own names.
func canonicalPkgs(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		canon, ok := suiteUtils[path]
		if !ok {
			continue
		}
		local := canon
		if im.Name != nil {
			local = im.Name.Name
		}
		out[local] = canon
	}
	return out
}

// readRoutingFile parses tests/<file>.go of the conformance module at dir
// and extracts its cases. consts holds the string constants of the
// suite's packages (confsuite.InfrastructureNamespace, ...).
func readRoutingFile(dir, file string, consts map[string]string) (*routingFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "tests", file+".go"), nil, 0)
	if err != nil {
		return nil, err
	}
	rf := &routingFile{file: file}
	pkgs := canonicalPkgs(f)
	// responseType names the type of a literal with the suite's package
	// names (h.ExpectedResponse is http.ExpectedResponse).
	responseType := func(e ast.Expr) string {
		tn := typeName(e)
		arr := strings.HasPrefix(tn, "[]")
		pkg, name, ok := strings.Cut(strings.TrimPrefix(tn, "[]"), ".")
		if !ok || name != "ExpectedResponse" {
			return tn
		}
		if c, ok := pkgs[pkg]; ok {
			pkg = c
		}
		if arr {
			return "[]" + pkg + "." + name
		}
		return pkg + "." + name
	}
	env := map[string]string{}
	for k, v := range consts {
		env[k] = v
	}
	// gwVars maps variables holding a Gateway's NamespacedName to its name;
	// addrVars, variables holding a Gateway's address (the result of a
	// call naming kubernetes.NewGatewayRef) to that Gateway and listener.
	gwVars := map[string]string{}
	addrVars := map[string]gatewayTarget{}
	addrRefs := map[string]*ast.CallExpr{} // their NewGatewayRef calls
	// uses are the calls sending requests to an address variable.
	type use struct {
		pos, end token.Pos
		target   gatewayTarget
		ref      *ast.CallExpr // the variable's NewGatewayRef call
	}
	// l4Lits are the tcp.ExpectedResponse and udp.ExpectedResponse
	// literals (udp: the connection is udp://), read after the others.
	type l4Lit struct {
		lit *ast.CompositeLit
		udp bool
	}
	var l4Lits []l4Lit
	// ranges are the loops over slice literals of strings or of structs
	// with string fields (envs: a binding of the loop's variable, or of
	// the struct's fields, per element), helpers the function literals
	// assigned to a variable, helperCalls the calls of those variables:
	// a connection case is read once per element, and per call.
	type litRange struct {
		pos, end token.Pos
		envs     []map[string]string
	}
	var ranges []litRange
	sliceVars := map[string]ast.Expr{} // variables holding a slice literal
	helpers := map[string]*ast.FuncLit{}
	var helperCalls []*ast.CallExpr
	var uses []use
	type bound struct {
		pos    token.Pos
		target gatewayTarget
	}
	var bindings []bound
	// groups are the top-level ExpectedResponse literals (a table or a
	// single case), with the cases they hold.
	type group struct {
		pos, end token.Pos
		cases    []*ast.CompositeLit
		grpc     bool
	}
	var groups []*group
	inGroup := func(p token.Pos) bool {
		for _, g := range groups {
			if g.pos <= p && p < g.end {
				return true
			}
		}
		return false
	}
	gatewayRefIn := func(call *ast.CallExpr, env map[string]string) (gatewayTarget, bool) {
		var b gatewayTarget
		if len(call.Args) == 0 {
			return b, false
		}
		if id, ok := call.Args[0].(*ast.Ident); ok {
			b.gateway = gwVars[id.Name]
		}
		if cl, ok := call.Args[0].(*ast.CompositeLit); ok {
			b.gateway, _ = nnName(cl, env)
		}
		if len(call.Args) > 1 {
			b.listener, _ = evalString(call.Args[1], env)
		}
		return b, b.gateway != ""
	}
	gatewayRef := func(call *ast.CallExpr) (gatewayTarget, bool) { return gatewayRefIn(call, env) }
	// findRef finds a NewGatewayRef call in e.
	findRef := func(e ast.Node) (gatewayTarget, *ast.CallExpr, bool) {
		var b gatewayTarget
		var ref *ast.CallExpr
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && !found {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewGatewayRef" {
					b, found = gatewayRef(call)
					ref = call
				}
			}
			return !found
		})
		return b, ref, found
	}

	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok && id.Name == "Manifests" {
				if cl, ok := x.Value.(*ast.CompositeLit); ok {
					for _, e := range cl.Elts {
						if s, ok := evalString(e, env); ok {
							rf.manifests = append(rf.manifests, s)
						}
					}
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range x.Lhs {
				if i < len(x.Rhs) {
					bindVar(lhs, x.Rhs[i], env, gwVars)
					if fl, ok := x.Rhs[i].(*ast.FuncLit); ok {
						if id, ok := lhs.(*ast.Ident); ok {
							helpers[id.Name] = fl
						}
					}
					if isSliceLit(x.Rhs[i]) {
						if id, ok := lhs.(*ast.Ident); ok {
							sliceVars[id.Name] = x.Rhs[i]
						}
					}
					if b, ref, ok := findRef(x.Rhs[i]); ok {
						if id, ok := lhs.(*ast.Ident); ok {
							addrVars[id.Name], addrRefs[id.Name] = b, ref
						}
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range x.Names {
				if i < len(x.Values) {
					bindVar(name, x.Values[i], env, gwVars)
					if b, ref, ok := findRef(x.Values[i]); ok {
						addrVars[name.Name], addrRefs[name.Name] = b, ref
					}
				}
			}
		case *ast.RangeStmt:
			if id, ok := x.Value.(*ast.Ident); ok {
				over := x.X
				if v, ok := over.(*ast.Ident); ok && sliceVars[v.Name] != nil {
					over = sliceVars[v.Name]
				}
				if envs := rangeEnvs(id.Name, over, env); envs != nil {
					ranges = append(ranges, litRange{x.Pos(), x.End(), envs})
				}
			}
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewGatewayRef" {
				if b, ok := gatewayRef(x); ok {
					bindings = append(bindings, bound{x.Pos(), b})
				}
			}
			if id, ok := x.Fun.(*ast.Ident); ok && helpers[id.Name] != nil {
				helperCalls = append(helperCalls, x)
			}
			for _, a := range x.Args {
				if id, ok := a.(*ast.Ident); ok {
					if b, ok := addrVars[id.Name]; ok {
						uses = append(uses, use{x.Pos(), x.End(), b, addrRefs[id.Name]})
					}
				}
			}
		case *ast.CompositeLit:
			if inGroup(x.Pos()) {
				return true
			}
			switch tn := responseType(x.Type); tn {
			case "tcp.ExpectedResponse", "udp.ExpectedResponse":
				l4Lits = append(l4Lits, l4Lit{x, strings.HasPrefix(tn, "udp")})
			case "[]tcp.ExpectedResponse", "[]udp.ExpectedResponse":
				rf.otherCases += len(x.Elts)
			case "http.ExpectedResponse", "grpc.ExpectedResponse":
				groups = append(groups, &group{pos: x.Pos(), end: x.End(), cases: []*ast.CompositeLit{x}, grpc: strings.HasPrefix(tn, "grpc")})
			case "[]http.ExpectedResponse", "[]grpc.ExpectedResponse":
				g := &group{pos: x.Pos(), end: x.End(), grpc: strings.HasPrefix(tn, "[]grpc")}
				for _, e := range x.Elts {
					if cl, ok := e.(*ast.CompositeLit); ok && cl.Type == nil {
						g.cases = append(g.cases, cl)
					}
				}
				groups = append(groups, g)
			}
		}
		return true
	})
	sort.Slice(groups, func(i, j int) bool { return groups[i].pos < groups[j].pos })
	enclosesGroup := func(pos, end token.Pos) bool {
		for _, g := range groups {
			if pos <= g.pos && g.end <= end {
				return true
			}
		}
		return false
	}
	i := 0
	for gi, g := range groups {
		// A group's requests go to the addresses of the calls enclosing it
		// or following it, up to the next group.
		next := token.Pos(1 << 30)
		if gi+1 < len(groups) {
			next = groups[gi+1].pos
		}
		var targets []gatewayTarget
		for _, u := range uses {
			if u.pos <= g.pos && g.end <= u.end {
				targets = []gatewayTarget{u.target}
			}
		}
		for _, u := range uses {
			if len(targets) == 1 && targets[0] == u.target {
				continue
			}
			if g.end <= u.pos && u.pos < next && !enclosesGroup(u.pos, u.end) {
				targets = append(targets, u.target)
			}
		}
		if len(targets) == 0 {
			// The address went through another variable, or the cases are
			// appended one by one: the Gateway bound last before them.
			for _, b := range bindings {
				if b.pos < g.pos {
					targets = []gatewayTarget{b.target}
				}
			}
		}
		for _, cl := range g.cases {
			c := &routingCase{file: file, index: i, line: fset.Position(cl.Pos()).Line, grpc: g.grpc, targets: targets}
			i++
			readCase(c, cl, env)
			rf.cases = append(rf.cases, c)
		}
	}
	// A connection case (TCP, UDP): sent to the address of the call
	// enclosing it, its NewGatewayRef read again in the case's
	// environment: once per element of the innermost loop over a slice
	// literal around it, and, inside a helper function, once per call of
	// it with its parameters bound. A literal in a helper never called
	// directly is not read (counted in otherCases: the file fails).
	for _, l := range l4Lits {
		cl := l.lit
		envs := []map[string]string{env}
		for name, fl := range helpers {
			if fl.Pos() > cl.Pos() || cl.End() > fl.End() {
				continue
			}
			envs = nil
			var params []string
			for _, f := range fl.Type.Params.List {
				for _, n := range f.Names {
					params = append(params, n.Name)
				}
			}
			for _, call := range helperCalls {
				if call.Fun.(*ast.Ident).Name != name {
					continue
				}
				e := maps.Clone(env)
				for i, a := range call.Args {
					if v, ok := evalString(a, env); ok && i < len(params) {
						e[params[i]] = v
					}
				}
				envs = append(envs, e)
			}
		}
		var inner *litRange
		for i := range ranges {
			if r := &ranges[i]; r.pos <= cl.Pos() && cl.End() <= r.end && (inner == nil || inner.pos < r.pos) {
				inner = r
			}
		}
		if inner != nil {
			var each []map[string]string
			for _, e := range envs {
				for _, re := range inner.envs {
					m := maps.Clone(e)
					maps.Copy(m, re)
					each = append(each, m)
				}
			}
			envs = each
		}
		if len(envs) == 0 {
			rf.otherCases++
			continue
		}
		var ref *ast.CallExpr
		for _, u := range uses {
			if u.pos <= cl.Pos() && cl.End() <= u.end && u.ref != nil {
				ref = u.ref
			}
		}
		for _, e := range envs {
			c := &routingCase{file: file, index: i, line: fset.Position(cl.Pos()).Line, tcp: !l.udp, udp: l.udp}
			i++
			if ref != nil {
				if b, ok := gatewayRefIn(ref, e); ok {
					c.targets = []gatewayTarget{b}
				}
			}
			readL4Case(c, cl, e)
			rf.cases = append(rf.cases, c)
		}
	}
	return rf, nil
}

// bindVar records `name := value` when value is a string or a
// NamespacedName literal.
func bindVar(lhs, rhs ast.Expr, env, gwVars map[string]string) {
	id, ok := lhs.(*ast.Ident)
	if !ok {
		return
	}
	if cl, ok := rhs.(*ast.CompositeLit); ok && typeName(cl.Type) == "types.NamespacedName" {
		if name, ok := nnName(cl, env); ok {
			gwVars[id.Name] = name
		}
		return
	}
	if s, ok := evalString(rhs, env); ok {
		env[id.Name] = s
	}
}

func nnName(cl *ast.CompositeLit, env map[string]string) (string, bool) {
	for _, e := range cl.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok && keyName(kv) == "Name" {
			return evalString(kv.Value, env)
		}
	}
	return "", false
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return typeName(t.X) + "." + t.Sel.Name
	case *ast.ArrayType:
		return "[]" + typeName(t.Elt)
	case *ast.StarExpr:
		return "*" + typeName(t.X)
	}
	return ""
}

func keyName(kv *ast.KeyValueExpr) string {
	if id, ok := kv.Key.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// evalString evaluates a string expression: a literal, a known constant
// or variable (confsuite.X is looked up as X), or a concatenation.
func evalString(e ast.Expr, env map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
		return x.Value, x.Kind == token.INT
	case *ast.Ident:
		s, ok := env[x.Name]
		return s, ok
	case *ast.SelectorExpr:
		s, ok := env[x.Sel.Name]
		return s, ok
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, ok1 := evalString(x.X, env)
			b, ok2 := evalString(x.Y, env)
			return a + b, ok1 && ok2
		}
	case *ast.ParenExpr:
		return evalString(x.X, env)
	}
	return "", false
}

// evalMap evaluates a map[string]string literal.
func evalMap(e ast.Expr, env map[string]string) (map[string]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, false
		}
		k, ok1 := evalString(kv.Key, env)
		v, ok2 := evalString(kv.Value, env)
		if !ok1 || !ok2 {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

func evalStrings(e ast.Expr, env map[string]string) ([]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		s, ok := evalString(el, env)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// unary strips & from &T{...}.
func unary(e ast.Expr) ast.Expr {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		return u.X
	}
	return e
}

// rangeEnvs are the bindings a loop over slice literal x gives its
// variable name, one per element: the element itself (a string), or the
// string fields of a struct element by their names (s.listener is then
// read as listener, as evalString reads a selector); nil when x is no
// such literal.
func rangeEnvs(name string, x ast.Expr, env map[string]string) []map[string]string {
	if vs, ok := evalStrings(x, env); ok {
		out := make([]map[string]string, len(vs))
		for i, v := range vs {
			out[i] = map[string]string{name: v}
		}
		return out
	}
	cl, ok := x.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []map[string]string
	for _, el := range cl.Elts {
		ecl, ok := el.(*ast.CompositeLit)
		if !ok {
			return nil
		}
		m := map[string]string{}
		for _, f := range ecl.Elts {
			if kv, ok := f.(*ast.KeyValueExpr); ok {
				if v, ok := evalString(kv.Value, env); ok {
					m[keyName(kv)] = v
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// isSliceLit reports whether e is a slice composite literal (of an
// anonymous struct type too).
func isSliceLit(e ast.Expr) bool {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return false
	}
	at, ok := cl.Type.(*ast.ArrayType)
	return ok && at.Len == nil
}

// readL4Case reads a tcp.ExpectedResponse (Backend, Namespace) or
// udp.ExpectedResponse (Service, Namespace) literal into c.
func readL4Case(c *routingCase, cl *ast.CompositeLit, env map[string]string) {
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			c.unreadable = append(c.unreadable, "positional fields")
			continue
		}
		var into *string
		switch k := keyName(kv); k {
		case "Backend", "Service":
			into = &c.backend
		case "Namespace":
			into = &c.namespace
		default:
			c.unreadable = append(c.unreadable, k)
			continue
		}
		if v, ok := evalString(kv.Value, env); ok {
			*into = v
		} else {
			c.unreadable = append(c.unreadable, keyName(kv))
		}
	}
}

// readCase reads the fields of an ExpectedResponse literal into c; a
// field it cannot read is named in c.unreadable.
func readCase(c *routingCase, cl *ast.CompositeLit, env map[string]string) {
	bad := func(field string) { c.unreadable = append(c.unreadable, field) }
	str := func(field string, e ast.Expr, into *string) {
		if s, ok := evalString(e, env); ok {
			*into = s
		} else {
			bad(field)
		}
	}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			bad("positional fields")
			continue
		}
		switch k := keyName(kv); k {
		case "Request":
			readRequest(c, unary(kv.Value), env, &c.host, &c.method, &c.path, &c.headers, bad, "Request")
		case "ExpectedRequest":
			c.hasExpectedRequest = true
			er, ok := unary(kv.Value).(*ast.CompositeLit)
			if !ok {
				bad(k)
				continue
			}
			for _, f := range er.Elts {
				fkv, ok := f.(*ast.KeyValueExpr)
				if !ok {
					bad(k)
					continue
				}
				switch keyName(fkv) {
				case "Request":
					var method string
					readRequest(c, unary(fkv.Value), env, &c.expHost, &method, &c.expPath, &c.expHeaders, bad, "ExpectedRequest.Request")
				case "AbsentHeaders":
					if v, ok := evalStrings(fkv.Value, env); ok {
						c.expAbsent = v
					} else {
						bad("ExpectedRequest.AbsentHeaders")
					}
				default:
					bad("ExpectedRequest." + keyName(fkv))
				}
			}
		case "RedirectRequest":
			rr, ok := unary(kv.Value).(*ast.CompositeLit)
			if !ok {
				bad(k)
				continue
			}
			c.redirect = &redirectExpect{}
			for _, f := range rr.Elts {
				fkv := f.(*ast.KeyValueExpr)
				switch keyName(fkv) {
				case "Scheme":
					str("RedirectRequest.Scheme", fkv.Value, &c.redirect.scheme)
				case "Host":
					str("RedirectRequest.Host", fkv.Value, &c.redirect.host)
				case "Port":
					str("RedirectRequest.Port", fkv.Value, &c.redirect.port)
				case "Path":
					str("RedirectRequest.Path", fkv.Value, &c.redirect.path)
				}
			}
		case "Response":
			rr, ok := unary(kv.Value).(*ast.CompositeLit)
			if !ok {
				bad(k)
				continue
			}
			for _, f := range rr.Elts {
				fkv := f.(*ast.KeyValueExpr)
				switch keyName(fkv) {
				case "StatusCode":
					var s string
					str("Response.StatusCode", fkv.Value, &s)
					if n, err := strconv.Atoi(s); err == nil {
						c.status = append(c.status, n)
					}
				case "StatusCodes":
					if v, ok := evalStrings(fkv.Value, env); ok {
						for _, s := range v {
							n, _ := strconv.Atoi(s)
							c.status = append(c.status, n)
						}
					} else {
						bad("Response.StatusCodes")
					}
				case "Headers":
					if m, ok := evalMap(fkv.Value, env); ok {
						c.respHeaders = m
					} else {
						bad("Response.Headers")
					}
				case "AbsentHeaders":
					if v, ok := evalStrings(fkv.Value, env); ok {
						c.respAbsent = v
					} else {
						bad("Response.AbsentHeaders")
					}
				case "Code":
					if sel, ok := fkv.Value.(*ast.SelectorExpr); ok {
						c.grpcCode = sel.Sel.Name
					} else {
						bad("Response.Code")
					}
				default:
					bad("Response." + keyName(fkv))
				}
			}
		case "BackendSetResponseHeaders":
			if m, ok := evalMap(kv.Value, env); ok {
				c.backendSetResponseHeaders = m
			} else {
				bad(k)
			}
		case "Backend":
			str(k, kv.Value, &c.backend)
		case "Namespace":
			str(k, kv.Value, &c.namespace)
		case "MirroredTo":
			ml, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				bad(k)
				continue
			}
			for _, m := range ml.Elts {
				mcl, ok := m.(*ast.CompositeLit)
				if !ok {
					bad(k)
					continue
				}
				me := mirrorExpect{percent: 100}
				for _, f := range mcl.Elts {
					fkv := f.(*ast.KeyValueExpr)
					switch keyName(fkv) {
					case "BackendRef":
						bcl, _ := unary(fkv.Value).(*ast.CompositeLit)
						if bcl == nil {
							bad(k)
							continue
						}
						for _, bf := range bcl.Elts {
							bkv := bf.(*ast.KeyValueExpr)
							switch keyName(bkv) {
							case "Name":
								str(k, bkv.Value, &me.name)
							case "Namespace":
								str(k, bkv.Value, &me.namespace)
							}
						}
					case "Percent":
						// ptr.To(int32(N))
						s := strings.TrimSpace(exprDigits(fkv.Value))
						if n, err := strconv.Atoi(s); err == nil {
							me.percent = n
						} else {
							bad("MirroredTo.Percent")
						}
					}
				}
				c.mirrors = append(c.mirrors, me)
			}
		case "EchoRequest":
			c.grpcMethod = "Echo"
		case "EchoTwoRequest":
			c.grpcMethod = "EchoTwo"
		case "EchoThreeRequest":
			c.grpcMethod = "EchoThree"
		case "RequestMetadata":
			rm, ok := unary(kv.Value).(*ast.CompositeLit)
			if !ok {
				bad(k)
				continue
			}
			for _, f := range rm.Elts {
				fkv := f.(*ast.KeyValueExpr)
				switch keyName(fkv) {
				case "Authority":
					str("RequestMetadata.Authority", fkv.Value, &c.host)
				case "Metadata":
					if m, ok := evalMap(fkv.Value, env); ok {
						c.headers = m
					} else {
						bad("RequestMetadata.Metadata")
					}
				}
			}
		case "TestCaseName":
		default:
			bad(k)
		}
	}
}

// exprDigits returns the first integer literal inside e.
func exprDigits(e ast.Expr) string {
	var out string
	ast.Inspect(e, func(n ast.Node) bool {
		if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.INT && out == "" {
			out = bl.Value
		}
		return out == ""
	})
	return out
}

func readRequest(c *routingCase, e ast.Expr, env map[string]string, host, method, path *string, headers *map[string]string, bad func(string), where string) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		bad(where)
		return
	}
	for _, f := range cl.Elts {
		kv, ok := f.(*ast.KeyValueExpr)
		if !ok {
			bad(where)
			continue
		}
		k := keyName(kv)
		var into *string
		switch k {
		case "Host":
			into = host
		case "Method":
			into = method
		case "Path":
			into = path
		case "Headers":
			if m, ok := evalMap(kv.Value, env); ok {
				*headers = m
			} else {
				bad(where + ".Headers")
			}
			continue
		case "Request": // ExpectedRequest embeds a Request
			readRequest(c, unary(kv.Value), env, host, method, path, headers, bad, where)
			continue
		case "UnfollowRedirect":
			// How the client treats a redirect: the case's RedirectRequest
			// says what the redirect must be.
			continue
		default:
			bad(where + "." + k)
			continue
		}
		if s, ok := evalString(kv.Value, env); ok {
			*into = s
		} else if sel, ok := kv.Value.(*ast.SelectorExpr); ok && k == "Method" {
			// http.MethodPost and the like.
			*into = strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
		} else {
			bad(where + "." + k)
		}
	}
}

// suiteConsts reads the package-level string constants of the conformance
// utils packages the tests name (suite, http, ...).
func suiteConsts(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, pkg := range []string{"utils/suite", "tests"} {
		files, err := filepath.Glob(filepath.Join(dir, pkg, "*.go"))
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := evalString(vs.Values[i], out); ok {
								out[n.Name] = v
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}
