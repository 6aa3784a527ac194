package egfixtures

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/envoylua"
)

// validatorTests is Envoy Gateway's test file of its Lua validator.
const validatorTests = "internal/gatewayapi/luavalidator/lua_validator_test.go"

// luaCase is one case of Envoy Gateway's validator tests.
type luaCase struct {
	test, name, code string
	// wantErr: Envoy Gateway refuses the script; careless: its test does
	// not say (Test_ResourceLimitsAndPanicRecovery's cases without an
	// expected error only check that nothing crashes).
	wantErr, careless bool
}

// validatorCases reads the cases of Envoy Gateway's validator tests from
// the module: the struct literals with a code field, leaving out those
// giving an EnvoyProxy (other validation modes than Strict).
func validatorCases(t *testing.T, dir string) []luaCase {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, validatorTests), nil, 0)
	if err != nil {
		t.Fatalf("reading Envoy Gateway's Lua validator tests: %v", err)
	}
	var out []luaCase
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			fields := map[string]ast.Expr{}
			for _, e := range lit.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok {
						fields[k.Name] = kv.Value
					}
				}
			}
			str := func(name string) (string, bool) {
				b, ok := fields[name].(*ast.BasicLit)
				if !ok || b.Kind != token.STRING {
					return "", false
				}
				s, err := strconv.Unquote(b.Value)
				return s, err == nil
			}
			code, ok := str("code")
			if !ok {
				return true
			}
			if _, proxied := fields["proxy"]; proxied {
				return false
			}
			name, _ := str("name")
			c := luaCase{test: fn.Name.Name, name: name, code: code}
			expected, hasExpected := str("expectedErrSubstring")
			switch {
			case !hasExpected:
				c.wantErr = true // Test_Blocked, Test_UnsafePackageReference
			case expected != "":
				c.wantErr = true
			case fn.Name.Name == "Test_ResourceLimitsAndPanicRecovery":
				c.careless = true
			}
			out = append(out, c)
			return false
		})
	}
	return out
}

var errNoEntryPoint = errors.New("names no entry point")

// Envoy Gateway's own Lua validator tests (the Strict cases: every one
// giving no EnvoyProxy), read from the module at test time, run through
// attache's model of Envoy's Lua API: every script they accept is
// accepted, every one they refuse is refused.
func TestLuaValidatorCases(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	cases := validatorCases(t, dir)
	if len(cases) < 50 {
		t.Fatalf("only %d cases read from %s (expected about 90): has its layout changed?", len(cases), validatorTests)
	}
	refused, accepted := 0, 0
	for _, c := range cases {
		v := envoylua.Validate(c.code)
		if !envoylua.NamesEntryPoint(c.code) {
			// Refused before any validation mode, as attache's rule on
			// the policy refuses it; Validate does not run it.
			v.Err = errNoEntryPoint
		}
		id := c.test + "/" + c.name
		switch {
		case c.careless:
		case !c.wantErr && v.Err != nil:
			t.Errorf("%s: Envoy Gateway accepts it, attache refuses it: %v", id, v.Err)
		case c.wantErr && v.Err == nil:
			t.Errorf("%s: Envoy Gateway refuses it, attache accepts it (not judged: %q)", id, v.NotJudged)
		case c.wantErr:
			refused++
		default:
			accepted++
		}
	}
	t.Logf("%d cases of Envoy Gateway's Lua validator tests: %d refused by both, %d accepted by both", len(cases), refused, accepted)
}

// Every Lua script of Envoy Gateway's translator fixtures, inline or from
// a ConfigMap, runs through attache's model of Envoy's Lua API as Envoy
// Gateway's Strict validation ran it: a script of a policy Envoy Gateway
// refused for its Lua ("Lua: validation failed") is refused, every other
// one accepted. Fixtures whose EnvoyProxy sets another validation mode
// are left out.
func TestLuaScriptsOfFixtures(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	ins, err := filepath.Glob(filepath.Join(dir, testdata, "*.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		EnvoyProxyForGatewayClass *struct {
			Spec map[string]any `json:"spec"`
		} `json:"envoyProxyForGatewayClass"`
		ConfigMaps []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Data     map[string]string                `json:"data"`
		} `json:"configMaps"`
		EnvoyExtensionPolicies []struct {
			Metadata struct{ Name, Namespace string } `json:"metadata"`
			Spec     struct {
				Lua []struct {
					Type     string `json:"type"`
					Inline   string `json:"inline"`
					ValueRef *struct {
						Name string `json:"name"`
					} `json:"valueRef"`
				} `json:"lua"`
			} `json:"spec"`
			Status struct {
				Ancestors []struct {
					Conditions []struct{ Message string } `json:"conditions"`
				} `json:"ancestors"`
			} `json:"status"`
		} `json:"envoyExtensionPolicies"`
	}
	read := func(path string) doc {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var d doc
		if err := yaml.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		return d
	}
	scripts, refused := 0, 0
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		d := read(in)
		if len(d.EnvoyExtensionPolicies) == 0 {
			continue
		}
		if p := d.EnvoyProxyForGatewayClass; p != nil && p.Spec["luaValidation"] != nil && p.Spec["luaValidation"] != "Strict" {
			continue
		}
		out := read(strings.TrimSuffix(in, ".in.yaml") + ".out.yaml")
		for _, pol := range d.EnvoyExtensionPolicies {
			luaRefused := false
			for _, o := range out.EnvoyExtensionPolicies {
				if o.Metadata == pol.Metadata {
					for _, a := range o.Status.Ancestors {
						for _, c := range a.Conditions {
							luaRefused = luaRefused || strings.Contains(c.Message, "Lua: validation failed")
						}
					}
				}
			}
			for i, l := range pol.Spec.Lua {
				script := l.Inline
				if l.Type == "ValueRef" && l.ValueRef != nil {
					script = ""
					for _, cm := range d.ConfigMaps {
						if cm.Metadata.Name == l.ValueRef.Name && cm.Metadata.Namespace == pol.Metadata.Namespace {
							script = cm.Data["lua"]
						}
					}
				}
				if !envoylua.NamesEntryPoint(script) {
					continue // refused before any validation (attache's CEL rule)
				}
				scripts++
				v := envoylua.Validate(script)
				id := name + " " + pol.Metadata.Namespace + "/" + pol.Metadata.Name + " lua[" + strconv.Itoa(i) + "]"
				switch {
				case luaRefused && v.Err == nil:
					t.Errorf("%s: Envoy Gateway refuses its Lua, attache accepts it (not judged: %q)", id, v.NotJudged)
				case !luaRefused && v.Err != nil:
					t.Errorf("%s: Envoy Gateway accepts it, attache refuses it: %v", id, v.Err)
				case luaRefused:
					refused++
				}
			}
		}
	}
	if scripts < 10 || refused == 0 {
		t.Errorf("%d Lua scripts in the fixtures, %d refused (expected dozens, one refused): has the fixtures' layout changed?", scripts, refused)
	}
	t.Logf("%d Lua scripts of Envoy Gateway's fixtures, %d refused by both", scripts, refused)
}

// Every method Envoy Gateway's stubs of Envoy's Lua API give an object
// (read from the module at test time: mocks.lua's "function
// Object:method(" lines), attache's model of that API gives the object
// too, so that no script calling one is refused by attache alone.
func TestLuaModelHasTheStubsMethods(t *testing.T) {
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	b, err := os.ReadFile(filepath.Join(dir, "internal/gatewayapi/luavalidator/mocks.lua"))
	if err != nil {
		t.Fatal(err)
	}
	// Envoy Gateway's object names, and the sections of Envoy's
	// documentation attache's model names them by.
	objects := map[string]string{
		"StreamHandle": "stream handle", "Headers": "header object", "Buffer": "buffer",
		"Metadata": "metadata object", "StreamInfo": "stream info object", "ConnectionStreamInfo": "connection stream info object",
		"DynamicMetadata": "dynamic metadata object", "Connection": "connection object",
		"SSLConnectionObject": "SSL connection object", "ParsedName": "parsed name object",
	}
	model := envoylua.Methods()
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "function ")
		obj, method, found := strings.Cut(rest, ":")
		if !ok || !found {
			continue
		}
		method, _, _ = strings.Cut(method, "(")
		name, known := objects[obj]
		if !known {
			t.Errorf("mocks.lua has methods of %s, which this test does not map to the model", obj)
			continue
		}
		n++
		if !slices.Contains(model[name], method) {
			t.Errorf("%s:%s (Envoy Gateway's stubs) is not a method of attache's %s", obj, method, name)
		}
	}
	if n < 50 {
		t.Errorf("only %d methods read from mocks.lua (expected about 100): has its layout changed?", n)
	}
}
