// Package webhook is attache's validating admission webhook (issue 11): an
// admission.Handler that answers, from a Source's in-memory state, with
// warnings saying which policies affect an object being applied and what a
// policy change would do, and that denies, for the kinds where prevention
// is on, a policy that would be Invalid or Conflicted. It makes no API
// call per request. It also derives the rules of the
// ValidatingWebhookConfiguration from the policy kinds known at run time.
package webhook

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/attache-dev/attache/pkg/advice"
	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// Path is where the webhook is served.
const Path = "/validate"

// Name is the name of the webhook in the ValidatingWebhookConfiguration
// that deploy/ ships (its rules are kept up to date with the policy kinds).
const Name = "validate.attache.dev"

// AnnotationAdmission on a policy CRD turns prevention on ("deny") or off
// ("warn") for its kind, whatever --admission-deny says.
const AnnotationAdmission = "attache.dev/admission"

// Source is the in-memory state the webhook answers from. Its methods are
// called concurrently.
type Source interface {
	// Kind says whether gk is a policy kind, and whether prevention is on
	// for it.
	Kind(gk topology.GroupKind) (isPolicy, deny bool)
	// Affected words which policies affect the object ref (see
	// advice.Affected).
	Affected(ref topology.Ref, deleting bool) []string
	// Created words which policies an object being created, not yet in
	// the state, will be reached by (see advice.Created).
	Created(obj *unstructured.Unstructured, ref topology.Ref) []string
	// Policy words what applying obj (op Create or Update; obj is nil for
	// Delete) or deleting the policy ref would do (see advice.Policy).
	Policy(obj *unstructured.Unstructured, ref topology.Ref, op advice.Op) advice.Answer
}

// AnnotationsReader is implemented by a Source whose policy kinds read
// some annotations of their policies (a weight: policy.Kind's
// WeightAnnotation): an update that changes one of them changes the
// policy, so prevention judges it like a change of its spec.
type AnnotationsReader interface {
	// ReadAnnotations lists the annotations the kind gk reads.
	ReadAnnotations(gk topology.GroupKind) []string
}

// Handler is the admission handler. It never fails a request: an object
// it cannot read, or a kind it does not know, is allowed without warning.
type Handler struct {
	Source Source
}

var _ admission.Handler = (*Handler)(nil)

// Handle answers one admission request.
func (h *Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	t0 := time.Now()
	gk := topology.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	kind := gk.String()
	resp := h.answer(req, gk)
	if resp.Warnings == nil {
		resp.Warnings = []string{}
	}
	result := "allowed"
	if !resp.Allowed {
		result = "denied"
		denials.WithLabelValues(kind).Inc()
	}
	requests.WithLabelValues(kind, string(req.Operation), result).Inc()
	warnings.WithLabelValues(kind).Add(float64(len(resp.Warnings)))
	latency.WithLabelValues(kind).Observe(time.Since(t0).Seconds())
	return resp
}

func (h *Handler) answer(req admission.Request, gk topology.GroupKind) admission.Response {
	if req.SubResource != "" {
		return admission.Allowed("")
	}
	ref := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: req.Namespace, Name: req.Name}
	op := advice.Op(req.Operation)
	isPolicy, deny := h.Source.Kind(gk)
	if !isPolicy && !gatewayapi.Handles(gk) && gk != topology.KindNamespace {
		return admission.Allowed("")
	}
	var obj *unstructured.Unstructured
	if op != advice.Delete {
		obj = &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
			return admission.Allowed("").WithWarnings(fmt.Sprintf("attache: cannot read the object: %v", err))
		}
		if obj.GetNamespace() == "" && req.Namespace != "" {
			obj.SetNamespace(req.Namespace)
		}
		if ref.Name == "" {
			ref.Name = obj.GetName() // generateName: known only now
		}
	}
	if !isPolicy {
		var lines []string
		switch op {
		case advice.Update, advice.Delete:
			lines = h.Source.Affected(ref, op == advice.Delete)
		case advice.Create:
			lines = h.Source.Created(obj, ref)
		}
		return admission.Allowed("").WithWarnings(lines...)
	}
	switch op {
	case advice.Create, advice.Update, advice.Delete:
	default:
		return admission.Allowed("")
	}
	a := h.Source.Policy(obj, ref, op)
	var read []string
	if r, ok := h.Source.(AnnotationsReader); ok {
		read = r.ReadAnnotations(gk)
	}
	if deny && a.Refusal != "" && op != advice.Delete && !(op == advice.Update && leftAsItWas(obj, req.OldObject.Raw, read)) {
		r := admission.Denied(a.Refusal + " (attache prevents this for " + gk.String() + ")")
		r.Result.Code = http.StatusForbidden
		return r.WithWarnings(a.Lines...)
	}
	return admission.Allowed("").WithWarnings(a.Lines...)
}

// leftAsItWas reports whether an update leaves a policy as it was but for
// its metadata and status (labels, annotations other than those its kind
// reads, finalizers, owner references: often another controller's write,
// like the removal of its finalizer from a policy being deleted), or is an
// update of a policy being deleted. Prevention never denies those: it
// keeps a policy from being made Invalid or Conflicted, and must not hold
// one that already is where it is.
func leftAsItWas(obj *unstructured.Unstructured, oldRaw []byte, read []string) bool {
	if obj.GetDeletionTimestamp() != nil {
		return true
	}
	old := &unstructured.Unstructured{}
	if len(oldRaw) == 0 || old.UnmarshalJSON(oldRaw) != nil {
		return false
	}
	content := func(m map[string]any) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	for _, k := range read {
		v, ok := obj.GetAnnotations()[k]
		ov, oldOK := old.GetAnnotations()[k]
		if v != ov || ok != oldOK {
			return false
		}
	}
	return reflect.DeepEqual(content(obj.Object), content(old.Object))
}

// Resource is a resource the webhook is called for: a group and a plural.
type Resource struct {
	Group, Resource string
}

// TopologyResources are the resources of the objects policies can affect:
// the Gateway API kinds the engine reads, Services and Namespaces
// (ReferenceGrants, which no policy affects, left out): the rules of
// deploy/base/webhook.yaml.
func TopologyResources() []Resource {
	var out []Resource
	for _, gk := range gatewayapi.Kinds {
		if gk == gatewayapi.KindReferenceGrant {
			continue
		}
		out = append(out, Resource{Group: gk.Group, Resource: Plural(gk.Kind)})
	}
	return out
}

// Plural is the resource name of a Gateway API or core kind.
func Plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"):
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies" // serviceentries
	}
	return k + "s"
}

// Rules are the webhook's rules for these resources (topology ones and
// policy kinds'): one rule per group, CREATE, UPDATE and DELETE, every
// version, sorted as given.
func Rules(resources []Resource) []admissionregistrationv1.RuleWithOperations {
	var groups []string
	byGroup := map[string][]string{}
	for _, r := range resources {
		if _, ok := byGroup[r.Group]; !ok {
			groups = append(groups, r.Group)
		}
		if !contains(byGroup[r.Group], r.Resource) {
			byGroup[r.Group] = append(byGroup[r.Group], r.Resource)
		}
	}
	scope := admissionregistrationv1.AllScopes
	out := make([]admissionregistrationv1.RuleWithOperations, 0, len(groups))
	for _, g := range groups {
		out = append(out, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: byGroup[g], Scope: &scope},
		})
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
