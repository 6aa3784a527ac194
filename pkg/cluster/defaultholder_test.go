package cluster

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/attache-dev/attache/internal/testenv"
	"github.com/attache-dev/attache/pkg/cluster/clustertest"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/topology"
)

// defaultHolderDocs: the CRD of a kind on Services reading a default
// Secret where its policies name none (as Kuadrant's DNSPolicy reads its
// namespace's default DNS provider Secret); defaultHolderObjects hold a
// policy naming none, a Secret of its namespace labelled as the default,
// one unlabelled and one labelled in another namespace.
var defaultHolderDocs = testCRD("defaults.example.com", "DNSishPolicy", "dnsishpolicies", "Namespaced", "Direct",
	`{attache.dev/target-kinds: Service, attache.dev/object-refs: "providerRefs[] kinds=Secret missing=not-programmed default-label=example.com/default-provider=true"}`)

const defaultHolderObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: dns}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: dns}
spec: {ports: [{port: 80}]}
---
apiVersion: defaults.example.com/v1
kind: DNSishPolicy
metadata: {name: p, namespace: dns}
spec:
  targetRefs: [{group: "", kind: Service, name: s}]
---
apiVersion: v1
kind: Secret
metadata: {name: provider, namespace: dns, labels: {example.com/default-provider: "true"}}
stringData: {token: secret-value}
---
apiVersion: v1
kind: Secret
metadata: {name: unrelated, namespace: dns}
stringData: {token: "x"}
---
apiVersion: v1
kind: Secret
metadata: {name: elsewhere, namespace: other, labels: {example.com/default-provider: "true"}}
stringData: {token: "y"}
`

// TestReadDefaultHolders: Read lists the holders a policy's defaults are
// looked for among (the kind, its namespace, the label), keeping their
// keys and labels, never their values nor the other Secrets; the policy
// is then programmed. A reader that may get Secrets but not list them
// gets the place in UnreadObjects and a Skipped line, and the default is
// not judged (programmed, not "no default").
func TestReadDefaultHolders(t *testing.T) {
	dir := t.TempDir()
	crds, objs := filepath.Join(dir, "crds.yaml"), filepath.Join(dir, "objects.yaml")
	for f, content := range map[string]string{crds: defaultHolderDocs, objs: defaultHolderObjects} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), crds)...))
	clustertest.Apply(t, env.Config, nil, objs)
	programmed := func(t *testing.T, snap *Snapshot) string {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{Unread: snap.UnreadFunc()})
		ps := res.PolicyStatus(ref("defaults.example.com", "DNSishPolicy", "dns", "p"))
		if ps == nil {
			t.Fatal("no status for the policy")
		}
		for _, c := range ps.Conditions {
			if c.Type == engine.CondProgrammed {
				return c.Status + "/" + c.Reason
			}
		}
		return "none"
	}

	snap := read(t, env.Config, Options{})
	var secrets []string
	for _, o := range snap.Objects {
		if o.Object.GetKind() == "Secret" {
			secrets = append(secrets, o.Object.GetNamespace()+"/"+o.Object.GetName())
			if raw, _ := json.Marshal(o.Object.Object); strings.Contains(string(raw), "secret-value") || strings.Contains(string(raw), base64.StdEncoding.EncodeToString([]byte("secret-value"))) {
				t.Errorf("%s keeps its value", o.Source)
			}
			if o.Object.GetLabels()["example.com/default-provider"] != "true" {
				t.Errorf("%s: labels %v, want the default's label kept", o.Source, o.Object.GetLabels())
			}
		}
	}
	if !slices.Equal(secrets, []string{"dns/provider"}) {
		t.Errorf("Secrets read: %v, want the default of namespace dns only", secrets)
	}
	if got := programmed(t, snap); got != "True/Programmed" {
		t.Errorf("Programmed %s, want True/Programmed (the default found)", got)
	}

	t.Run("ListNotGet", func(t *testing.T) {
		// Listed, the defaults are kept as listed: no get is needed.
		snap := readAs(t, env, "listonly", "reader-listing-secrets", []string{"namespaces", "services"}, []string{"get", "list"},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}},
			rbacv1.PolicyRule{APIGroups: []string{"defaults.example.com"}, Resources: []string{"dnsishpolicies"}, Verbs: []string{"list"}})
		if len(snap.UnreadObjects) > 0 {
			t.Errorf("UnreadObjects %v, want none", snap.UnreadObjects)
		}
		if got := programmed(t, snap); got != "True/Programmed" {
			t.Errorf("Programmed %s, want True/Programmed (the default listed)", got)
		}
	})
	t.Run("CannotList", func(t *testing.T) {
		snap := readAs(t, env, "nolist", "reader-without-secret-lists", []string{"namespaces", "services"}, []string{"get", "list"},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
			rbacv1.PolicyRule{APIGroups: []string{"defaults.example.com"}, Resources: []string{"dnsishpolicies"}, Verbs: []string{"list"}})
		if want := []topology.Ref{{Kind: "Secret", Namespace: "dns"}}; !slices.Equal(snap.UnreadObjects, want) {
			t.Errorf("UnreadObjects %v, want %v", snap.UnreadObjects, want)
		}
		if !slices.ContainsFunc(snap.Skipped, func(s string) bool {
			return strings.Contains(s, "labelled example.com/default-provider=true in dns: cannot list (forbidden)")
		}) {
			t.Errorf("Skipped %q: no line for the default not listed", snap.Skipped)
		}
		if got := programmed(t, snap); got != "True/Programmed" {
			t.Errorf("Programmed %s, want True/Programmed (not judged)", got)
		}
	})
}
