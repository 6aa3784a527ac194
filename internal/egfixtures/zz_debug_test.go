package egfixtures

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
)

func TestZZDebug(t *testing.T) {
	name := os.Getenv("EGF")
	if name == "" {
		t.Skip()
	}
	dir := modfixtures.Dir(t, modfixtures.EnvoyGateway)
	base := crds(t, dir)
	objs, err := Load(filepath.Join(dir, testdata, name+".in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := engine.Compute(append(base, objs...), engine.Options{})
	for _, p := range res.Policies {
		b, _ := json.MarshalIndent(struct{ C, A any }{p.Conditions, p.Ancestors}, "", " ")
		t.Logf("%s\n%s", p.Policy.Ref, b)
	}
	for _, p := range res.Problems {
		t.Logf("problem %v", p)
	}
}
