package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/attache-dev/attache/pkg/topology"
)

// KindOf returns the group and kind of a typed policy object (a Go struct
// registered in scheme, as controller-gen makes them), for policy.Spec's
// GroupKind and Options.OwnedKinds: an implementer registers a kind from
// its Go type. The controller reads instances as unstructured objects
// either way; DecodeSpec turns effective specs back into Go values.
func KindOf(obj runtime.Object, scheme *runtime.Scheme) (topology.GroupKind, error) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return topology.GroupKind{}, fmt.Errorf("policy type %T: %w", obj, err)
	}
	gk := gvks[0].GroupKind()
	for _, g := range gvks[1:] {
		if g.GroupKind() != gk {
			return topology.GroupKind{}, fmt.Errorf("policy type %T is registered as %s and %s: name one", obj, gk, g.GroupKind())
		}
	}
	return topology.GroupKind{Group: gk.Group, Kind: gk.Kind}, nil
}

// DecodeSpec decodes an effective spec (engine.Context.Spec, the spec
// proper) into a Go value, such as the typed spec of a policy kind, with
// the JSON field names of its struct tags. Fields the type does not have
// are an error, so that a Program hook notices a spec it does not
// understand.
func DecodeSpec(spec map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(spec, into, true)
}
