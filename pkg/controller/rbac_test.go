package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

var deployDir = filepath.Join("..", "..", "deploy")

// forbiddenWrites sums attache_status_write_errors_total{reason=Forbidden}.
func forbiddenWrites(t *testing.T) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "attache_status_write_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == "Forbidden" {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// TestShippedClusterRole runs the controller as a user bound to
// deploy/base/clusterrole.yaml only (plus, for the test's own SizePolicy kind,
// the rules an installer of that kind would add): GEP-713 Example 3, a
// route annotation and the Event of a full Gateway all get written, and no
// write is forbidden. Kinds the role does not grant (TintPolicy) are left
// out without blocking the others.
func TestShippedClusterRole(t *testing.T) {
	ctx := context.Background()
	cs := env.Clientset(t)
	data, err := os.ReadFile(filepath.Join(deployDir, "base", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatalf("deploy/base/clusterrole.yaml: %v", err)
	}
	extra := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "attache-test-sizepolicies"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{gvkSizePolicy.Group}, Resources: []string{"sizepolicies"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{gvkSizePolicy.Group}, Resources: []string{"sizepolicies/status"}, Verbs: []string{"patch"}},
		},
	}
	for _, r := range []*rbacv1.ClusterRole{&role, extra} {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	const user = "system:serviceaccount:attache-system:attache-controller"
	env.BindClusterRole(t, user, role.Name)
	env.BindClusterRole(t, user, extra.Name)

	k := newKube(t)
	// The shipped ColorPolicy CRD: with the status subresource the role
	// grants patch on.
	k.applyFile(filepath.Join(deployDir, "crds", "colorpolicies.policies.example.com.yaml"), "")
	k.applyFile(filepath.Join(deployDir, "crds", "effectivepolicies.attache.dev.yaml"), "")
	k.apply("", sizePolicyCRD())
	const ns = "rbac"
	k.namespace(ns)
	forbidden0 := forbiddenWrites(t)
	r := startController(t, Options{EffectivePolicies: true}, env.UserConfig(t, user))

	// Example 3 without its CRD (the shipped one stays).
	objs, probs, err := manifest.Read([]string{exampleFile(3)}, nil)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	for _, o := range objs {
		if o.Object.GetKind() != "CustomResourceDefinition" {
			k.apply(ns, o.Object)
		}
	}
	checkExample(t, k, ns, example3)
	waitFor(t, "the EffectivePolicies of b1 and b2", func() string {
		for _, svc := range []string{"b1", "b2"} {
			if effectiveEntry(k.get(gvkEffectivePolicy, ns, "service."+svc), testControllerName) == nil {
				return "no EffectivePolicy service." + svc
			}
		}
		return ""
	})

	var conds []string
	for i := range 8 {
		conds = append(conds, fmt.Sprintf(`{"type":"other.example.com/C%d","status":"True","reason":"R","message":"m","lastTransitionTime":"2020-01-01T00:00:00Z"}`, i))
	}
	k.patch(gvkGateway, ns, "g1", `{"status":{"conditions":[`+strings.Join(conds, ",")+`]}}`, "status")
	k.apply(ns,
		pol(gvkSizePolicy, "on-route", "HTTPRoute", "r2", map[string]any{"size": int64(1)}),
		pol(gvkSizePolicy, "on-gateway", "Gateway", "g1", map[string]any{"size": int64(1)}))
	waitFor(t, "the annotations on the route and the full Gateway, and the Event", func() string {
		if got := k.get(gvkHTTPRoute, ns, "r2").GetAnnotations()["attache.dev/SizePolicyAffected"]; got != "true" {
			return "HTTPRoute r2: " + got
		}
		if got := k.get(gvkGateway, ns, "g1").GetAnnotations()["attache.dev/SizePolicyAffected"]; got != "true" {
			return "Gateway g1: " + got
		}
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == "AffectedConditionOverflow" && e.Regarding.Name == "g1" {
				return ""
			}
		}
		return "no Event"
	})
	r.waitIdle(t, 0)
	if d := forbiddenWrites(t) - forbidden0; d != 0 {
		t.Errorf("%v writes were forbidden", d)
	}
}

// Every built-in profile's policy kind can be read under the shipped
// ClusterRole: a kind the controller may not list is left out (its
// policies ignored, logged once), so a profiled kind missing from the
// role would be blind in every cluster running the shipped manifests. The
// kinds' resource names are those of the machine-readable summary of
// docs/profiles.md (its crd: field), which pkg/profiles checks against the
// profiles.
func TestShippedClusterRoleReadsEveryProfiledKind(t *testing.T) {
	role := shippedRoleWithout(t, "attache-controller")
	grants := func(group, resource string) bool {
		verbs := map[string]bool{}
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) {
				for _, v := range r.Verbs {
					verbs[v] = true
				}
			}
		}
		return verbs["get"] && verbs["list"] && verbs["watch"]
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "profiles.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "## Machine-readable summary")
	if !ok {
		t.Fatal("docs/profiles.md has no machine-readable summary")
	}
	_, block, _ = strings.Cut(block, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	var summary struct {
		Profiles []struct {
			Group, Kind, CRD string
		}
	}
	if err := yaml.Unmarshal([]byte(block), &summary); err != nil {
		t.Fatal(err)
	}
	crdOf := map[topology.GroupKind]string{}
	for _, p := range summary.Profiles {
		crdOf[topology.GroupKind{Group: p.Group, Kind: p.Kind}] = p.CRD
	}
	for _, p := range profiles.All() {
		gk := p.Spec.GroupKind
		crd := crdOf[gk]
		resource, group, ok := strings.Cut(crd, ".")
		if !ok || group != gk.Group {
			t.Errorf("%s: the summary's crd is %q, want <resource>.%s", gk, crd, gk.Group)
			continue
		}
		if !grants(gk.Group, resource) {
			t.Errorf("%s: deploy/base/clusterrole.yaml does not grant get, list and watch on %s", gk, crd)
		}
	}
	// The objects the profiled kinds' implementations require: without
	// access, whether one is missing is not judged.
	required := map[topology.GroupKind]string{{Group: "kuadrant.io", Kind: "Kuadrant"}: "kuadrants"}
	for _, gk := range profiles.RequiredObjectKinds() {
		resource, known := required[gk]
		if !known {
			t.Errorf("required object kind %s: add its resource to this test", gk)
			continue
		}
		if !grants(gk.Group, resource) {
			t.Errorf("required object kind %s: deploy/base/clusterrole.yaml does not grant get, list and watch on %s", gk, resource)
		}
	}
}
