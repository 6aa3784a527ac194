package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/topology"
)

// fakeSource answers as a state holding one policy kind, RetryPolicy,
// whose every change prevention would refuse, and records its calls.
type fakeSource struct {
	deny  bool
	calls []string
}

var retryKind = topology.GroupKind{Group: "policies.example", Kind: "RetryPolicy"}

func (f *fakeSource) Kind(gk topology.GroupKind) (bool, bool) {
	return gk == retryKind, f.deny
}

// ReadAnnotations: RetryPolicy reads a weight annotation of its policies.
func (f *fakeSource) ReadAnnotations(gk topology.GroupKind) []string {
	if gk == retryKind {
		return []string{"example.com/weight"}
	}
	return nil
}

func (f *fakeSource) Affected(ref topology.Ref, deleting bool) []string {
	f.calls = append(f.calls, "affected "+ref.String()+map[bool]string{true: " deleting"}[deleting])
	return []string{ref.Short() + " is affected"}
}

func (f *fakeSource) Created(_ *unstructured.Unstructured, ref topology.Ref) []string {
	f.calls = append(f.calls, "created "+ref.String())
	return []string{ref.Short() + " will be reached"}
}

func (f *fakeSource) Policy(obj *unstructured.Unstructured, ref topology.Ref, op advice.Op) advice.Answer {
	f.calls = append(f.calls, "policy "+string(op)+" "+ref.String())
	return advice.Answer{Lines: []string{ref.Short() + " would be Invalid: no"}, Refusal: ref.Short() + " would be Invalid: no"}
}

// object renders YAML as the raw JSON of an admission request.
func object(t *testing.T, doc string) runtime.RawExtension {
	t.Helper()
	if doc == "" {
		return runtime.RawExtension{}
	}
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: raw}
}

func request(t *testing.T, gk topology.GroupKind, op admissionv1.Operation, sub, obj, old string) admission.Request {
	t.Helper()
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "1", Kind: metav1.GroupVersionKind{Group: gk.Group, Version: "v1", Kind: gk.Kind},
		Namespace: "baker", Name: "r", Operation: op, SubResource: sub,
		Object: object(t, obj), OldObject: object(t, old),
	}}
}

const (
	policy = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker}
spec: {numRetries: 1}
`
	policyRelabelled = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker, labels: {team: baker}, finalizers: []}
spec: {numRetries: 1}
status: {ancestors: []}
`
	policyReweighted = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker, annotations: {example.com/weight: high}}
spec: {numRetries: 1}
`
	policyReannotated = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker, annotations: {example.com/owner: baker}}
spec: {numRetries: 1}
`
	policyEdited = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker}
spec: {numRetries: 2}
`
	policyDeleting = `
apiVersion: policies.example/v1
kind: RetryPolicy
metadata: {name: r, namespace: baker, deletionTimestamp: "2026-12-01T00:00:00Z"}
spec: {numRetries: 2}
`
	route = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: baker}
`
)

// TestHandler checks what the handler answers and whom it asks: a policy
// change that prevention refuses is denied, with the refusal and the kind,
// when prevention is on for the kind, and admitted with the warnings
// otherwise; never a delete, an update that leaves the policy as it was
// but for metadata (other than annotations its kind reads) and status
// (another controller removing its finalizer
// from a policy that is Invalid must not be held), nor an update of a
// policy being deleted; the other objects get their lines, subresources and
// kinds it does not know nothing, and an object it cannot read a warning.
func TestHandler(t *testing.T) {
	routeKind := topology.GroupKind{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"}
	for _, c := range []struct {
		name      string
		deny      bool
		req       admission.Request
		allowed   bool
		warnings  []string
		call      string
		messageIs string
	}{
		{name: "create, prevention on", deny: true, req: request(t, retryKind, admissionv1.Create, "", policy, ""),
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy CREATE RetryPolicy.policies.example baker/r",
			messageIs: "RetryPolicy baker/r would be Invalid: no (attache prevents this for RetryPolicy.policies.example)"},
		{name: "create, prevention off", req: request(t, retryKind, admissionv1.Create, "", policy, ""), allowed: true,
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy CREATE RetryPolicy.policies.example baker/r"},
		{name: "spec edited", deny: true, req: request(t, retryKind, admissionv1.Update, "", policyEdited, policy),
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy UPDATE RetryPolicy.policies.example baker/r"},
		{name: "metadata and status only", deny: true, req: request(t, retryKind, admissionv1.Update, "", policyRelabelled, policy), allowed: true,
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy UPDATE RetryPolicy.policies.example baker/r"},
		{name: "annotation the kind reads", deny: true, req: request(t, retryKind, admissionv1.Update, "", policyReweighted, policy),
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy UPDATE RetryPolicy.policies.example baker/r"},
		{name: "another annotation", deny: true, req: request(t, retryKind, admissionv1.Update, "", policyReannotated, policy), allowed: true,
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy UPDATE RetryPolicy.policies.example baker/r"},
		{name: "being deleted", deny: true, req: request(t, retryKind, admissionv1.Update, "", policyDeleting, policy), allowed: true,
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy UPDATE RetryPolicy.policies.example baker/r"},
		{name: "delete", deny: true, req: request(t, retryKind, admissionv1.Delete, "", "", policy), allowed: true,
			warnings: []string{"RetryPolicy baker/r would be Invalid: no"}, call: "policy DELETE RetryPolicy.policies.example baker/r"},
		{name: "status", deny: true, req: request(t, retryKind, admissionv1.Update, "status", policyEdited, policy), allowed: true},
		{name: "route updated", req: request(t, routeKind, admissionv1.Update, "", route, route), allowed: true,
			warnings: []string{"HTTPRoute baker/r is affected"}, call: "affected HTTPRoute.gateway.networking.k8s.io baker/r"},
		{name: "route created", req: request(t, routeKind, admissionv1.Create, "", route, ""), allowed: true,
			warnings: []string{"HTTPRoute baker/r will be reached"}, call: "created HTTPRoute.gateway.networking.k8s.io baker/r"},
		{name: "route deleted", req: request(t, routeKind, admissionv1.Delete, "", "", route), allowed: true,
			warnings: []string{"HTTPRoute baker/r is affected"}, call: "affected HTTPRoute.gateway.networking.k8s.io baker/r deleting"},
		{name: "another kind", req: request(t, topology.GroupKind{Kind: "ConfigMap"}, admissionv1.Create, "", "{apiVersion: v1, kind: ConfigMap}", ""), allowed: true},
		{name: "unreadable", req: func() admission.Request {
			r := request(t, routeKind, admissionv1.Update, "", "", "")
			r.Object.Raw = []byte("{")
			return r
		}(), allowed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &fakeSource{deny: c.deny}
			resp := (&Handler{Source: src}).Handle(context.Background(), c.req)
			if resp.Allowed != c.allowed {
				t.Errorf("allowed %v, want %v (%v)", resp.Allowed, c.allowed, resp.Result)
			}
			switch {
			case c.name == "unreadable":
				if len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], "attache: cannot read the object: ") {
					t.Errorf("warnings %q", resp.Warnings)
				}
			case !slices.Equal(resp.Warnings, c.warnings) && len(resp.Warnings)+len(c.warnings) > 0:
				t.Errorf("warnings %q, want %q", resp.Warnings, c.warnings)
			}
			if want := []string{c.call}; c.call == "" && len(src.calls) > 0 || c.call != "" && !slices.Equal(src.calls, want) {
				t.Errorf("calls %q, want %q", src.calls, c.call)
			}
			if c.messageIs != "" && (resp.Result == nil || resp.Result.Message != c.messageIs || resp.Result.Code != http.StatusForbidden) {
				t.Errorf("result %+v, want 403 %q", resp.Result, c.messageIs)
			}
		})
	}
}

// value reads a counter's or a histogram's count.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	if d.Histogram != nil {
		return float64(d.Histogram.GetSampleCount())
	}
	return d.Counter.GetValue()
}

// TestMetrics checks the webhook's metrics by kind: requests by
// operation and result, warning lines, denials, and one latency
// observation per request.
func TestMetrics(t *testing.T) {
	kind := retryKind.String()
	read := func() [5]float64 {
		return [5]float64{
			value(t, requests.WithLabelValues(kind, "CREATE", "denied")),
			value(t, requests.WithLabelValues(kind, "DELETE", "allowed")),
			value(t, warnings.WithLabelValues(kind)),
			value(t, denials.WithLabelValues(kind)),
			value(t, latency.WithLabelValues(kind).(prometheus.Metric)),
		}
	}
	before := read()
	h := &Handler{Source: &fakeSource{deny: true}}
	h.Handle(context.Background(), request(t, retryKind, admissionv1.Create, "", policy, ""))
	h.Handle(context.Background(), request(t, retryKind, admissionv1.Create, "", policy, ""))
	h.Handle(context.Background(), request(t, retryKind, admissionv1.Delete, "", "", policy))
	after := read()
	for i, want := range [5]float64{2, 1, 3, 2, 3} {
		if got := after[i] - before[i]; got != want {
			t.Errorf("metric %d: %v more, want %v", i, got, want)
		}
	}
}

// TestShippedRules checks that the rules deploy/base/webhook.yaml ships
// are those the leader writes before it knows a policy kind (the same
// resources per group), with CREATE, UPDATE and DELETE.
func TestShippedRules(t *testing.T) {
	data, err := os.ReadFile("../../deploy/base/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shipped []admissionregistrationv1.RuleWithOperations
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.Unmarshal([]byte(doc), &vwc); err == nil && vwc.Kind == "ValidatingWebhookConfiguration" {
			for _, w := range vwc.Webhooks {
				if w.Name == Name {
					shipped = w.Rules
				}
			}
		}
	}
	byGroup := func(rules []admissionregistrationv1.RuleWithOperations) string {
		m := map[string][]string{}
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, o := range r.Operations {
					m[g] = append(m[g], "op:"+string(o))
				}
				m[g] = append(m[g], r.Resources...)
			}
		}
		for g := range m {
			sort.Strings(m[g])
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	if got, want := byGroup(shipped), byGroup(Rules(TopologyResources())); got != want {
		t.Errorf("deploy/base/webhook.yaml rules:\n%s\nthe leader writes:\n%s", got, want)
	}
}
