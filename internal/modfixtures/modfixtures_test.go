package modfixtures

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Each pinned module must come with the files the other tests read.
func TestDirHasExpectedFiles(t *testing.T) {
	want := map[string]string{
		EnvoyGateway:          "internal/gatewayapi/testdata/base/base.yaml",
		IstioAPI:              "kubernetes/customresourcedefinitions.gen.yaml",
		GatewayAPI:            "config/crd/standard/gateway.networking.k8s.io_backendtlspolicies.yaml",
		GatewayAPIConformance: "tests/backendtlspolicy.yaml",
	}
	for module := range Versions {
		if _, ok := want[module]; !ok {
			t.Errorf("pinned module %s is not checked here", module)
		}
	}
	for module, file := range want {
		dir := Dir(t, module)
		if !strings.Contains(filepath.ToSlash(dir), "@"+Versions[module]) {
			t.Errorf("Dir(%s) = %s, not the pinned version %s", module, dir, Versions[module])
		}
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			t.Errorf("%s@%s: %v", module, Versions[module], err)
		}
	}
}

func TestDirCachesPerProcess(t *testing.T) {
	a := Dir(t, GatewayAPI)
	b := Dir(t, GatewayAPI)
	if a != b || a == "" {
		t.Fatalf("Dir twice: %q then %q", a, b)
	}
}

func TestCRDsReadsEnvoyGatewayPolicyCRDs(t *testing.T) {
	crds := CRDs(t, Dir(t, EnvoyGateway), "charts/gateway-helm/charts/crds/crds/generated/*.yaml")
	kinds := map[string]bool{}
	for _, c := range crds {
		k, _, _ := unstructured.NestedString(c.Object.Object, "spec", "names", "kind")
		kinds[k] = true
	}
	for _, k := range []string{"BackendTrafficPolicy", "ClientTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy", "EnvoyPatchPolicy"} {
		if !kinds[k] {
			t.Errorf("no CRD of kind %s among %v", k, kinds)
		}
	}
}

func TestCleanGOFLAGS(t *testing.T) {
	got := cleanGOFLAGS("-mod=vendor -buildvcs=false -modfile=x.mod --mod=mod -trimpath")
	if got != "-buildvcs=false -trimpath" {
		t.Fatalf("cleanGOFLAGS = %q", got)
	}
}

// An unknown version is an error from the proxy or cache, reported (not a
// directory).
func TestDownloadUnknownVersionFails(t *testing.T) {
	if _, err := download(GatewayAPI, "v0.0.0-does-not-exist"); err == nil {
		t.Fatal("download of a version that does not exist succeeded")
	}
}

// The newest conformance release asks for a newer Go than this toolchain:
// DirAt extracts it itself, with the file only that release has.
func TestDirAtExtractsModuleForNewerGo(t *testing.T) {
	dir := DirAt(t, GatewayAPIConformance, GatewayAPIConformanceLatest)
	if !strings.Contains(filepath.ToSlash(dir), "@"+GatewayAPIConformanceLatest) {
		t.Errorf("DirAt = %s, not version %s", dir, GatewayAPIConformanceLatest)
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "backendtlspolicy-grpcroute.yaml")); err != nil {
		t.Errorf("%v", err)
	}
}

// unzip refuses a zip whose hash is not the one the go command verified.
func TestUnzipChecksTheHash(t *testing.T) {
	DirAt(t, GatewayAPIConformance, GatewayAPIConformanceLatest) // downloads the zip
	zipFile := filepath.Join(goModCache(t), "cache", "download", "sigs.k8s.io", "gateway-api", "conformance", "@v", GatewayAPIConformanceLatest+".zip")
	if _, err := os.Stat(zipFile); err != nil {
		t.Skipf("no zip in the module cache: %v", err)
	}
	_, err := unzip(GatewayAPIConformance, GatewayAPIConformanceLatest, zipFile, "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if err == nil || !strings.Contains(err.Error(), "checksum database says") {
		t.Errorf("unzip with a wrong hash: %v, want a hash mismatch", err)
	}
}

func goModCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
