package cluster

import (
	"encoding/json"
	"fmt"
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

// testCRD is a CRD of kind in group (plural, scope), serving v1 with an
// open schema, labelled a policy kind of class label when set, with the
// YAML flow map annotations (e.g. "{attache.dev/target-kinds: Service}")
// when set.
func testCRD(group, kind, plural, scope, label, annotations string) string {
	meta := ""
	if label != "" {
		meta += "\n  labels: {gateway.networking.k8s.io/policy: " + label + "}"
	}
	if annotations != "" {
		meta += "\n  annotations: " + annotations
	}
	return fmt.Sprintf(`---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.%s%s
spec:
  group: %s
  scope: %s
  names: {kind: %s, plural: %s}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, plural, group, meta, group, scope, kind, plural)
}

// issuerCRDs are the test's own CRDs of Kuadrant's TLSPolicy (labelled
// direct, as shipped) and, with certManager, of cert-manager's Issuer,
// ClusterIssuer and Certificate (schemas left open; no status subresource,
// so that the manifests below set their status).
func issuerCRDs(certManager bool) string {
	crd := func(group, kind, plural, scope, label string) string {
		return testCRD(group, kind, plural, scope, label, "")
	}
	out := crd("kuadrant.io", "TLSPolicy", "tlspolicies", "Namespaced", "direct")
	if certManager {
		out += crd("cert-manager.io", "Issuer", "issuers", "Namespaced", "") + crd("cert-manager.io", "ClusterIssuer", "clusterissuers", "Cluster", "") +
			crd("cert-manager.io", "Certificate", "certificates", "Namespaced", "")
	}
	return out
}

// issuerObjects: Gateway tls/gw with listeners a, b, c, d (HTTPS, a
// hostname and a Secret each); Issuers ready (Ready) and pending (not
// Ready), ClusterIssuer global (Ready), each with a spec the reader must
// drop; TLSPolicies naming each, and one naming an Issuer that does not
// exist, one per listener.
const issuerObjects = `
apiVersion: v1
kind: Namespace
metadata: {name: tls}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: tls}
spec:
  gatewayClassName: c
  listeners:
  - {name: a, protocol: HTTPS, port: 441, hostname: a.example.com, tls: {certificateRefs: [{name: a}]}}
  - {name: b, protocol: HTTPS, port: 442, hostname: b.example.com, tls: {certificateRefs: [{name: b}]}}
  - {name: c, protocol: HTTPS, port: 443, hostname: c.example.com, tls: {certificateRefs: [{name: c}]}}
  - {name: d, protocol: HTTPS, port: 444, hostname: d.example.com, tls: {certificateRefs: [{name: d}]}}
---
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: p-ready, namespace: tls}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: a}
  issuerRef: {group: cert-manager.io, kind: Issuer, name: ready}
---
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: p-pending, namespace: tls}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: b}
  issuerRef: {group: cert-manager.io, kind: Issuer, name: pending}
---
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: p-cluster, namespace: tls}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: c}
  issuerRef: {group: cert-manager.io, kind: ClusterIssuer, name: global}
---
apiVersion: kuadrant.io/v1
kind: TLSPolicy
metadata: {name: p-missing, namespace: tls}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: d}
  issuerRef: {group: cert-manager.io, kind: Issuer, name: absent}
`

const issuerInstances = `
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: ready, namespace: tls}
spec: {acme: {server: https://acme.example.com/secret-directory}}
status:
  conditions: [{type: Ready, status: "True", reason: ACMEAccountRegistered}]
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: pending, namespace: tls}
spec: {selfSigned: {}}
status:
  conditions: [{type: Ready, status: "False", reason: Pending}]
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: global}
spec: {selfSigned: {}}
status:
  conditions: [{type: Ready, status: "True"}]
`

// TestReadIssuers: Kuadrant's TLSPolicies name cert-manager issuers. Read
// gets the ones named (Issuers in the policy's namespace, ClusterIssuers
// cluster-scoped), at the version discovery finds, keeping their status
// conditions and never their spec; one that does not exist is absent, and
// so is every one where cert-manager is not installed. The CRDs read say
// which kinds the cluster serves (Snapshot.ServedAPIs): where
// cert-manager is installed, a missing issuer makes its policy Invalid;
// where it is not, every policy is MissingDependency, as Kuadrant says
// (files, without served kinds, Invalid). A reader that may not get
// issuers gets them in UnreadObjects and Skipped, and the references are
// not judged.
func TestReadIssuers(t *testing.T) {
	type want map[string]string // policy name: Accepted, Programmed
	check := func(t *testing.T, snap *Snapshot, w want) {
		t.Helper()
		res := engine.Compute(snap.Objects, engine.Options{Unread: snap.UnreadFunc(), ServedAPIs: snap.ServedAPIs})
		for name, wv := range w {
			ps := res.PolicyStatus(ref("kuadrant.io", "TLSPolicy", "tls", name))
			if ps == nil {
				t.Errorf("TLSPolicy %s: no status", name)
				continue
			}
			var got []string
			for _, c := range ps.Conditions {
				got = append(got, c.Status+"/"+c.Reason)
			}
			if g := strings.Join(got, " "); g != wv {
				t.Errorf("TLSPolicy %s: %s, want %s (%+v)", name, g, wv, ps.Conditions)
			}
		}
	}
	issuers := func(snap *Snapshot) []*engine.Object {
		var out []*engine.Object
		for i, o := range snap.Objects {
			if o.Object.GroupVersionKind().Group == "cert-manager.io" {
				out = append(out, &snap.Objects[i])
			}
		}
		return out
	}
	for _, certManager := range []bool{true, false} {
		t.Run(fmt.Sprintf("cert-manager %v", certManager), func(t *testing.T) {
			dir := t.TempDir()
			crds := filepath.Join(dir, "crds.yaml")
			objs := filepath.Join(dir, "objects.yaml")
			docs := issuerObjects
			if certManager {
				docs += issuerInstances
			}
			for f, content := range map[string]string{crds: issuerCRDs(certManager), objs: docs} {
				if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := testenv.Start(t, testenv.WithCRDDirectoryPaths(append(clustertest.GatewayAPICRDs(t), crds)...))
			clustertest.Apply(t, env.Config, nil, objs)

			snap := read(t, env.Config, Options{})
			if len(snap.Skipped) > 0 || len(snap.UnreadObjects) > 0 {
				t.Errorf("Skipped %q, UnreadObjects %v; want none", snap.Skipped, snap.UnreadObjects)
			}
			got := issuers(snap)
			if !certManager {
				if len(got) > 0 {
					t.Errorf("issuers read where cert-manager is not installed: %v", got)
				}
				check(t, snap, want{"p-ready": "False/MissingDependency", "p-missing": "False/MissingDependency"})
				snap.ServedAPIs = nil
				check(t, snap, want{"p-ready": "False/Invalid", "p-missing": "False/Invalid"})
				return
			}
			var names []string
			for _, o := range got {
				u := o.Object
				names = append(names, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
				raw, _ := json.Marshal(u.Object)
				if u.Object["spec"] != nil || strings.Contains(string(raw), "secret-directory") || u.GetUID() == "" || u.Object["status"] == nil {
					t.Errorf("%s: %s, want metadata and status conditions only", o.Source, raw)
				}
			}
			slices.Sort(names)
			if w := []string{"ClusterIssuer /global", "Issuer tls/pending", "Issuer tls/ready"}; !slices.Equal(names, w) {
				t.Errorf("issuers read: %v, want %v", names, w)
			}
			check(t, snap, want{"p-ready": "True/Accepted True/Programmed", "p-pending": "True/Accepted False/Unknown",
				"p-cluster": "True/Accepted True/Programmed", "p-missing": "False/Invalid"})

			t.Run("CannotGet", func(t *testing.T) {
				snap := readAs(t, env, "nia", "reader-without-issuers", []string{"namespaces", "services", "configmaps", "secrets"}, []string{"get", "list"},
					rbacv1.PolicyRule{APIGroups: []string{"kuadrant.io"}, Resources: []string{"tlspolicies"}, Verbs: []string{"list"}})
				wantUnread := []topology.Ref{ref("cert-manager.io", "ClusterIssuer", "", "global"), ref("cert-manager.io", "Issuer", "tls", "absent"),
					ref("cert-manager.io", "Issuer", "tls", "pending"), ref("cert-manager.io", "Issuer", "tls", "ready")}
				if !slices.Equal(snap.UnreadObjects, wantUnread) {
					t.Errorf("UnreadObjects %v, want %v", snap.UnreadObjects, wantUnread)
				}
				if len(issuers(snap)) > 0 {
					t.Errorf("issuers read without the right to get them")
				}
				// Not judged: accepted and programmed.
				check(t, snap, want{"p-pending": "True/Accepted True/Programmed", "p-missing": "True/Accepted True/Programmed"})
			})
		})
	}
}
