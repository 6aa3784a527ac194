package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/attache-dev/attache/pkg/topology"
)

// typedColorPolicy is a policy kind as a Go type.
type typedColorPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              typedColorSpec `json:"spec"`
}

type typedColorSpec struct {
	Colors map[string]string `json:"colors,omitempty"`
	Retry  *struct {
		Attempts int64 `json:"attempts"`
	} `json:"retry,omitempty"`
}

func (p *typedColorPolicy) DeepCopyObject() runtime.Object {
	out := *p
	return &out
}

func TestKindOf(t *testing.T) {
	s := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "policies.example.com", Version: "v1"}
	s.AddKnownTypeWithName(gv.WithKind("ColorPolicy"), &typedColorPolicy{})
	gk, err := KindOf(&typedColorPolicy{}, s)
	if err != nil || gk != (topology.GroupKind{Group: "policies.example.com", Kind: "ColorPolicy"}) {
		t.Errorf("KindOf = %v, %v", gk, err)
	}
	if _, err := KindOf(&metav1.Status{}, s); err == nil || !strings.Contains(err.Error(), "Status") {
		t.Errorf("an unregistered type: %v", err)
	}
}

func TestDecodeSpec(t *testing.T) {
	var spec typedColorSpec
	err := DecodeSpec(map[string]any{"colors": map[string]any{"light": "yellow"}, "retry": map[string]any{"attempts": int64(3)}}, &spec)
	if err != nil || spec.Colors["light"] != "yellow" || spec.Retry == nil || spec.Retry.Attempts != 3 {
		t.Errorf("DecodeSpec = %+v, %v", spec, err)
	}
	if err := DecodeSpec(map[string]any{"colours": "typo"}, &spec); err == nil {
		t.Error("a field the type does not have decodes without error")
	}
}
