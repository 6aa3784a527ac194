package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
)

// requiredCRDs: a policy kind (Direct, on Services) whose implementation
// needs a Gizmo object on the cluster (attache.dev/required-objects, as
// Kuadrant's kinds need a Kuadrant object), and the Gizmo CRD.
var requiredCRDs = testCRD("requiring.example.com", "RequiringPolicy", "requiringpolicies", "Namespaced", "Direct",
	"{attache.dev/target-kinds: Service, attache.dev/required-objects: gizmo=Gizmo.gizmos.example.com}") +
	testCRD("gizmos.example.com", "Gizmo", "gizmos", "Namespaced", "", "")

const requiredObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: req}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: req}
spec: {ports: [{port: 80}]}
---
apiVersion: requiring.example.com/v1
kind: RequiringPolicy
metadata: {name: p, namespace: req}
spec: {targetRefs: [{group: "", kind: Service, name: s}]}
`

const gizmo = `
apiVersion: gizmos.example.com/v1
kind: Gizmo
metadata: {name: the-gizmo, namespace: req, labels: {team: a}}
spec: {secretish: do-not-keep}
`

// TestReadRequiredObjects: Read lists the objects of the kinds a policy
// kind requires (metadata only), and the engine judges from the snapshot
// whether one exists: none, MissingResource; one, programmed; a reader
// that may not list them gets a Skipped line and the policy is not
// judged.
func TestReadRequiredObjects(t *testing.T) {
	dir := t.TempDir()
	crds, objs, giz := filepath.Join(dir, "crds.yaml"), filepath.Join(dir, "objects.yaml"), filepath.Join(dir, "gizmo.yaml")
	for f, content := range map[string]string{crds: requiredCRDs, objs: requiredObjects, giz: gizmo} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), crds)...))
	clustertest.Apply(t, env.Config, nil, objs)
	programmed := func(snap *Snapshot) string {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{Unread: snap.UnreadFunc(), ServedAPIs: snap.ServedAPIs})
		ps := res.PolicyStatus(ref("requiring.example.com", "RequiringPolicy", "req", "p"))
		if ps == nil {
			t.Fatal("no status for RequiringPolicy req/p")
		}
		for _, c := range ps.Conditions {
			if c.Type == "Programmed" {
				return c.Status + "/" + c.Reason + ": " + c.Message
			}
		}
		return "(no Programmed)"
	}
	if got := programmed(read(t, env.Config, Options{})); !strings.HasPrefix(got, "False/MissingResource: Policy is not programmed: gizmo is not installed") {
		t.Errorf("no Gizmo: %s", got)
	}
	clustertest.Apply(t, env.Config, nil, giz)
	snap := read(t, env.Config, Options{})
	if got := programmed(snap); !strings.HasPrefix(got, "True/Programmed") {
		t.Errorf("a Gizmo: %s", got)
	}
	for _, o := range snap.Objects {
		if o.Object.GetKind() == "Gizmo" {
			raw, _ := json.Marshal(o.Object.Object)
			if o.Object.Object["spec"] != nil || o.Object.GetLabels() != nil || o.Object.GetUID() == "" {
				t.Errorf("Gizmo read as %s, want its identifying metadata only", raw)
			}
		}
	}
	t.Run("CannotList", func(t *testing.T) {
		snap := readAs(t, env, "nog", "reader-without-gizmos", []string{"namespaces", "services"}, []string{"list"},
			rbacv1.PolicyRule{APIGroups: []string{"requiring.example.com"}, Resources: []string{"requiringpolicies"}, Verbs: []string{"list"}})
		found := false
		for _, s := range snap.Skipped {
			found = found || strings.Contains(s, "gizmos.example.com Gizmo: cannot list cluster-wide (forbidden)")
		}
		if !found {
			t.Errorf("Skipped %q, want a line for the Gizmos", snap.Skipped)
		}
		if got := programmed(snap); !strings.HasPrefix(got, "True/Programmed") {
			t.Errorf("Gizmos not read: %s, want not judged (programmed)", got)
		}
	})
}
