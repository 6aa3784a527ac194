package controller

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// CacheOptions returns o completed for the controller: managedFields and
// the kubectl.kubernetes.io/last-applied-configuration annotation (a copy
// of the object, doubling its size) are stripped from every cached object
// (unless o sets a DefaultTransform), CustomResourceDefinitions are cached
// without their schemas, which are most of their size (the Gateway API's
// are hundreds of kilobytes each), but for the skeleton that says whether
// a version's status keeps conditions (statusSchemaSkeleton),
// ConfigMaps and Secrets with a token of what is read of each value in
// place of the value (TransformHolder),
// ClusterTrustBundles without their certificates (TransformTrustBundle),
// cert-manager's issuers with their status conditions only
// (TransformIssuer), GatewayClass parameters with what the engine reads
// only (TransformClassParams) and Istio's ServiceEntries with their
// metadata only (TransformServiceEntry), as the objects profiled kinds'
// implementations need (TransformRequired); the last five after the
// DefaultTransform, whichever it is. Pass the result as the manager's Options.Cache.
func CacheOptions(o cache.Options) cache.Options {
	if o.DefaultTransform == nil {
		o.DefaultTransform = TransformStrip
	}
	// Not ByObject entries: the cache resolves those when it is built,
	// and fails on a kind that is not served then (no Envoy Gateway CRDs
	// yet, no ClusterTrustBundles on many clusters); and an entry names
	// one version, where the EnvoyProxy watched is its CRD's and the
	// ClusterTrustBundle the one served.
	base := o.DefaultTransform
	o.DefaultTransform = func(in any) (any, error) {
		out, err := base(in)
		if err != nil {
			return nil, err
		}
		if out, err = TransformClassParams(out); err != nil {
			return nil, err
		}
		if out, err = TransformServiceEntry(out); err != nil {
			return nil, err
		}
		if out, err = TransformRequired(out); err != nil {
			return nil, err
		}
		if out, err = TransformIssuer(out); err != nil {
			return nil, err
		}
		return TransformTrustBundle(out)
	}
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	o.ByObject[protoFor(crdGVK)] = cache.ByObject{Transform: TransformCRD}
	for gk := range holderResources {
		if _, discovered := discoveredHolders[gk]; discovered {
			continue // not always served: see above
		}
		o.ByObject[protoFor(schema.GroupVersionKind{Group: gk.Group, Version: "v1", Kind: gk.Kind})] = cache.ByObject{Transform: TransformHolder}
	}
	return o
}

// trustBundlePlaceholder stands for the content of a cached
// ClusterTrustBundle's spec.trustBundle.
const trustBundlePlaceholder = "set"

// TransformTrustBundle is a cache transform for ClusterTrustBundles
// (certificates.k8s.io, at any version), watched for the CA certificates
// policies name: the engine reads whether the bundle is set, never the
// certificates, so it keeps apiVersion, kind, metadata (stripped, see
// TransformStrip: kubectl's last-applied copy would hold the bundle) and
// spec.trustBundle replaced by a placeholder when set, left out when
// empty. Other objects, and objects that are not unstructured, are left
// alone.
func TransformTrustBundle(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || (topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}) != policy.KindClusterTrustBundle {
		return in, nil
	}
	if _, err := TransformStrip(u); err != nil {
		return nil, err
	}
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": u.Object["metadata"]}
	if b, _, _ := unstructured.NestedString(u.Object, "spec", "trustBundle"); b != "" {
		out["spec"] = map[string]any{"trustBundle": trustBundlePlaceholder}
	}
	u.Object = out
	return u, nil
}

// TransformIssuer is a cache transform for cert-manager's Issuers and
// ClusterIssuers (cert-manager.io, at any version), watched for the
// issuers policies name: the engine reads whether one exists and the
// conditions of its status, so it keeps apiVersion, kind, metadata
// (stripped, see TransformStrip) and status.conditions; the spec (an ACME
// account, a Vault server) is dropped. Other objects, and objects that
// are not unstructured, are left alone.
func TransformIssuer(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || !policy.StatusHolder(topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}) {
		return in, nil
	}
	if _, err := TransformStrip(u); err != nil {
		return nil, err
	}
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": u.Object["metadata"]}
	if st, ok := u.Object["status"].(map[string]any); ok {
		if conds, ok := st["conditions"]; ok {
			out["status"] = map[string]any{"conditions": conds}
		}
	}
	u.Object = out
	return u, nil
}

// TransformHolder is a cache transform for ConfigMaps and Secrets, watched
// for the data policies name: the engine reads which data keys they have
// and, of the values, only a keyed digest, a CRL's validity and, of a
// ConfigMap data value naming an Envoy Lua entry point, the verdicts of
// the checks of the script (package holderdata), so each value is
// replaced by a token of those, the checks made here (parsing and Envoy
// Gateway's Strict validation: about 2 ms for a script of Envoy Gateway's
// fixtures' size, 4 ms for a 128 KiB value that does not parse). No text
// stays in the controller's memory, a Secret's content never; a token
// holds under 200 bytes plus the checks' error messages (at most 1 KiB
// each), whatever the size of the value. Objects that are not
// unstructured, such as the typed Secrets other components read through
// the manager, are left alone.
func TransformHolder(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return in, nil
	}
	if _, err := TransformStrip(u); err != nil {
		return nil, err
	}
	if profiles.IsConfiguration(u) {
		// An implementation's configuration: the engine reads its values
		// (the features kinds' feature gates name).
		return u, nil
	}
	holderdata.Redact(u)
	return u, nil
}

// TransformClassParams is a cache transform for GatewayClass parameters
// (profiles.IsClassParameters: Envoy Gateway's EnvoyProxies and NGF's
// NginxProxies, at any version), watched for whether their classes merge
// their Gateways, where telemetry goes, which dynamic modules Gateways
// may load and whether telemetry is on: it keeps only what the engine
// reads (profiles.TrimClassParameters), not the deployment settings that
// are most of an EnvoyProxy or NginxProxy. Other objects,
// and objects that are not unstructured, are left alone.
func TransformClassParams(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || !profiles.IsClassParameters(u) {
		return in, nil
	}
	return profiles.TrimClassParameters(u), nil
}

// requiredKinds are the kinds TransformRequired slims.
var requiredKinds = profiles.RequiredObjectKinds()

// TransformRequired is a cache transform for the objects the profiled
// kinds' implementations need on the cluster (profiles.RequiredObjectKinds:
// Kuadrant's Kuadrant objects, at any version), watched for whether one
// exists: the engine reads nothing else of them, so it keeps apiVersion,
// kind and engine.RequiredObjectMetadata. Other
// objects, and objects that are not unstructured, are left alone.
func TransformRequired(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || !slices.Contains(requiredKinds, topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}) {
		return in, nil
	}
	md, _ := u.Object["metadata"].(map[string]any)
	slim := map[string]any{}
	for _, k := range engine.RequiredObjectMetadata {
		if v, ok := md[k]; ok {
			slim[k] = v
		}
	}
	u.Object = map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": slim}
	return u, nil
}

// serviceEntryMetadata are the metadata fields of a ServiceEntry the
// cache keeps (TransformServiceEntry).
var serviceEntryMetadata = []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels", "deletionTimestamp"}

// TransformServiceEntry is a cache transform for Istio's ServiceEntries
// (networking.istio.io, at any version), watched for their labels, which
// bind them to ambient waypoints: the engine reads nothing else of them, so
// it keeps apiVersion, kind and the identifying metadata with the labels
// (and, of the annotations, a canary waypoint's weight).
// Its spec (hosts, endpoints, often thousands in a mesh) is dropped, and
// its generation with it, so that a change of endpoints is not a change
// the engine recomputes for. Other objects, and objects that are not
// unstructured, are left alone.
func TransformServiceEntry(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || (topology.GroupKind{Group: u.GroupVersionKind().Group, Kind: u.GetKind()}) != topology.KindServiceEntry {
		return in, nil
	}
	md, _ := u.Object["metadata"].(map[string]any)
	slim := map[string]any{}
	for _, k := range serviceEntryMetadata {
		if v, ok := md[k]; ok {
			slim[k] = v
		}
	}
	if a, _ := md["annotations"].(map[string]any); a != nil {
		// Of the annotations, the weight of a canary waypoint.
		if v, ok := a[engine.CanaryWeightAnnotation]; ok {
			slim["annotations"] = map[string]any{engine.CanaryWeightAnnotation: v}
		}
	}
	u.Object = map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"], "metadata": slim}
	return u, nil
}

// lastApplied is the annotation kubectl apply keeps its last input in.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TransformStrip is a cache transform that drops what the controller never
// reads from an object: its managedFields and the
// kubectl.kubernetes.io/last-applied-configuration annotation.
func TransformStrip(in any) (any, error) {
	m, ok := in.(interface {
		SetManagedFields([]metav1.ManagedFieldsEntry)
		GetAnnotations() map[string]string
		SetAnnotations(map[string]string)
	})
	if !ok {
		return in, nil
	}
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); a[lastApplied] != "" {
		delete(a, lastApplied)
		m.SetAnnotations(a)
	}
	return in, nil
}

// TransformCRD is a cache transform that keeps of a CustomResourceDefinition
// only what the controller reads: metadata (without managedFields), group,
// names, scope, the versions' names, served, storage and subresources, the
// skeleton of their schemas that says whether status.conditions is kept and
// status.ancestors required (statusSchemaSkeleton), and the status
// conditions.
func TransformCRD(in any) (any, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return in, nil
	}
	if _, err := TransformStrip(u); err != nil {
		return nil, err
	}
	spec, _ := u.Object["spec"].(map[string]any)
	if spec == nil {
		return u, nil
	}
	slim := map[string]any{}
	for _, k := range []string{"group", "names", "scope"} {
		if v, ok := spec[k]; ok {
			slim[k] = v
		}
	}
	if vs, ok := spec["versions"].([]any); ok {
		out := make([]any, 0, len(vs))
		for _, v := range vs {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			sv := map[string]any{}
			for _, k := range []string{"name", "served", "storage", "subresources"} {
				if x, ok := m[k]; ok {
					sv[k] = x
				}
			}
			if sch, ok := m["schema"].(map[string]any); ok {
				sv["schema"] = statusSchemaSkeleton(sch)
			}
			out = append(out, sv)
		}
		slim["versions"] = out
	}
	u.Object["spec"] = slim
	if st, ok := u.Object["status"].(map[string]any); ok {
		u.Object["status"] = map[string]any{"conditions": st["conditions"]}
	}
	return u, nil
}

// statusSchemaSkeleton keeps of a CRD version's schema what
// keepsStatusConditions and readCRD read: whether the root and status
// preserve unknown fields, whether status has conditions, whose own schema
// is dropped, and whether it requires ancestors. Without it every kind
// would look as if its status kept conditions, and the controller would
// write conditions an Envoy Gateway policy's schema prunes, or a status
// without ancestors that Gateway API's PolicyStatus refuses.
func statusSchemaSkeleton(sch map[string]any) map[string]any {
	out := map[string]any{}
	root, ok := sch["openAPIV3Schema"].(map[string]any)
	if !ok {
		return out
	}
	r := map[string]any{}
	if v, ok := root["x-kubernetes-preserve-unknown-fields"]; ok {
		r["x-kubernetes-preserve-unknown-fields"] = v
	}
	if props, ok := root["properties"].(map[string]any); ok {
		if st, ok := props["status"].(map[string]any); ok {
			s := map[string]any{}
			if v, ok := st["x-kubernetes-preserve-unknown-fields"]; ok {
				s["x-kubernetes-preserve-unknown-fields"] = v
			}
			if sp, ok := st["properties"].(map[string]any); ok {
				if _, ok := sp["conditions"]; ok {
					s["properties"] = map[string]any{"conditions": map[string]any{}}
				}
			}
			if req, ok := st["required"].([]any); ok && slices.Contains(req, any("ancestors")) {
				s["required"] = []any{"ancestors"}
			}
			r["properties"] = map[string]any{"status": s}
		}
	}
	out["openAPIV3Schema"] = r
	return out
}
