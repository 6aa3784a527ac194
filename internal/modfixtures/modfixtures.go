// Package modfixtures gives tests the files of other projects' Go modules,
// pinned here, as the Go module proxy serves them: Envoy Gateway's
// translator fixtures and CRDs, Istio's CRDs, Gateway API's CRDs and
// conformance manifests. Nothing of theirs is copied into this repository:
// tests read the module's extracted directory in the Go module cache, so only
// the first run downloads (a second is instant, and offline).
//
// When a module cannot be had (no proxy, no cache), Dir fails the test with a
// message saying so; under `go test -short` it skips instead.
package modfixtures

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	gomodule "golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/manifest"
)

// Module paths of the pinned modules.
const (
	EnvoyGateway          = "github.com/envoyproxy/gateway"
	IstioAPI              = "istio.io/api"
	GatewayAPI            = "sigs.k8s.io/gateway-api"
	GatewayAPIConformance = "sigs.k8s.io/gateway-api/conformance"
)

// Versions pins every module the fixtures come from. Changing a version
// changes the expectations read from it: rerun the tests of internal/... and
// review their reports.
var Versions = map[string]string{
	// Newest release on the proxy; its zip holds internal/gatewayapi/testdata
	// and charts/gateway-helm/charts/crds.
	EnvoyGateway: "v1.9.1",
	// Newest v1.x; kubernetes/customresourcedefinitions.gen.yaml.
	IstioAPI: "v1.32.0",
	// The version in this repository's go.mod.
	GatewayAPI: "v1.6.3",
	// The release of GatewayAPI, whose routing attache trace implements
	// (its routing tests are run against trace). See also
	// GatewayAPIConformanceLatest.
	GatewayAPIConformance: "v1.6.3",
}

// GatewayAPIConformanceLatest is the newest conformance release, whose
// BackendTLSPolicy tests (GRPCRoute, TLSRoute Terminate, foreign status
// added) the policy tests also run: read it with DirAt. Its routing tests
// follow gateway-api v1.7.0, which this module cannot use yet (it declares
// go 1.27). The go command downloads it but, for that reason, does not
// extract it: DirAt does.
const GatewayAPIConformanceLatest = "v1.7.0"

var (
	mu   sync.Mutex
	dirs = map[string]string{}
)

// Dir returns the directory of the pinned version of module (a key of
// Versions), downloading it through the Go module proxy when the module cache
// does not have it. It fails the test when the module cannot be had, and skips
// it instead under -short.
func Dir(tb testing.TB, module string) string {
	tb.Helper()
	version, ok := Versions[module]
	if !ok {
		tb.Fatalf("modfixtures: module %s has no pinned version (add it to Versions)", module)
	}
	return DirAt(tb, module, version)
}

// DirAt is Dir for a given version of module.
func DirAt(tb testing.TB, module, version string) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	key := module + "@" + version
	if d, ok := dirs[key]; ok {
		return d
	}
	d, err := download(module, version)
	if err != nil {
		msg := fmt.Sprintf("modfixtures: cannot get %s@%s from the Go module proxy or cache (these tests read its files at test time; check GOPROXY and the network): %v", module, version, err)
		if testing.Short() {
			tb.Skip(msg)
		}
		tb.Fatal(msg)
	}
	dirs[key] = d
	return d
}

func download(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	// Outside any module (and workspace), `go mod download m@v` needs no
	// go.mod; -mod and -modfile flags in GOFLAGS would make it fail.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS="+cleanGOFLAGS(os.Getenv("GOFLAGS")), "GOWORK=off", "GO111MODULE=on")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error, Zip, Sum string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return "", fmt.Errorf("go mod download: %v; %s", runErr, strings.TrimSpace(stderr.String()))
	}
	if info.Error != "" {
		if info.Zip != "" && info.Sum != "" && strings.Contains(info.Error, "requires go") {
			return unzip(module, version, info.Zip, info.Sum)
		}
		return "", fmt.Errorf("go mod download: %s", info.Error)
	}
	if runErr != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download: %v; %s", runErr, strings.TrimSpace(stderr.String()))
	}
	return info.Dir, nil
}

// unzip extracts a module zip the go command downloaded and verified but
// would not extract, because the module asks for a newer Go than the
// running toolchain (this package reads its files, never builds it). The
// zip is checked against the module's go.sum hash again, and extracted once
// into the user cache (attache/modfixtures), like the envtest binaries.
func unzip(module, version, zipFile, sum string) (string, error) {
	got, err := dirhash.HashZip(zipFile, dirhash.Hash1)
	if err != nil {
		return "", fmt.Errorf("hashing %s: %v", zipFile, err)
	}
	if got != sum {
		return "", fmt.Errorf("%s has hash %s, the checksum database says %s", zipFile, got, sum)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	escaped, err := gomodule.EscapePath(module)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "attache", "modfixtures", escaped+"@"+version)
	done := filepath.Join(dir, ".attache-extracted")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	// Extract beside the final directory, then rename: a run cut short
	// never leaves a half-extracted directory that looks complete.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".extract-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	into := filepath.Join(tmp, "m")
	if err := modzip.Unzip(into, gomodule.Version{Path: module, Version: version}, zipFile); err != nil {
		return "", fmt.Errorf("extracting %s: %v", zipFile, err)
	}
	if err := os.WriteFile(filepath.Join(into, ".attache-extracted"), []byte(sum+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Rename(into, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// cleanGOFLAGS drops the flags that break `go mod download` outside a module.
func cleanGOFLAGS(flags string) string {
	var keep []string
	for _, f := range strings.Fields(flags) {
		if strings.HasPrefix(f, "-mod=") || strings.HasPrefix(f, "-modfile=") ||
			strings.HasPrefix(f, "--mod=") || strings.HasPrefix(f, "--modfile=") {
			continue
		}
		keep = append(keep, f)
	}
	return strings.Join(keep, " ")
}

// CRDs reads, through pkg/manifest, the CustomResourceDefinitions in the files
// of dir matching glob (filepath.Glob syntax, relative to dir). It fails the
// test when nothing matches, a document cannot be read, or no CRD is found.
func CRDs(tb testing.TB, dir, glob string) []engine.Object {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, glob))
	if err != nil {
		tb.Fatalf("modfixtures: bad glob %q: %v", glob, err)
	}
	if len(files) == 0 {
		tb.Fatalf("modfixtures: no file matches %s in %s", glob, dir)
	}
	sort.Strings(files)
	objs, probs, err := manifest.Read(files, nil)
	if err != nil {
		tb.Fatalf("modfixtures: %v", err)
	}
	for _, p := range probs {
		tb.Errorf("modfixtures: %s", p.Error())
	}
	var crds []engine.Object
	for _, o := range objs {
		if o.Object.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		}
	}
	if len(crds) == 0 {
		tb.Fatalf("modfixtures: no CustomResourceDefinition in %s/%s", dir, glob)
	}
	return crds
}
