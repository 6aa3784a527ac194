package gatewayapi

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"
	gwv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// TestProjections checks that every projection Add decodes into reads
// fields that exist, with the same JSON shape, in the typed objects of
// every version of the kinds it stands for, so that decoding an object
// into its projection reads what decoding it into its type would.
func TestProjections(t *testing.T) {
	cases := []struct {
		proj  any
		types []any
	}{
		{metaObject{}, []any{gwv1.GatewayClass{}, gwv1beta1.GatewayClass{}, corev1.Namespace{}}},
		{gatewayObject{}, []any{gwv1.Gateway{}, gwv1beta1.Gateway{}}},
		{listenerSetObject{}, []any{gwv1.ListenerSet{}}},
		{serviceObject{}, []any{corev1.Service{}}},
		{referenceGrantObject{}, []any{gwv1.ReferenceGrant{}, gwv1beta1.ReferenceGrant{}, gwv1alpha2.ReferenceGrant{}}},
		{routeObject{}, []any{
			gwv1.HTTPRoute{}, gwv1beta1.HTTPRoute{},
			gwv1.GRPCRoute{}, gwv1alpha2.GRPCRoute{},
			gwv1.TLSRoute{}, gwv1alpha2.TLSRoute{}, gwv1alpha3.TLSRoute{},
		}},
		{httpRouteRulesObject{}, []any{gwv1.HTTPRoute{}, gwv1beta1.HTTPRoute{}}},
		{plainRouteObject{}, []any{gwv1.TCPRoute{}, gwv1alpha2.TCPRoute{}, gwv1.UDPRoute{}, gwv1alpha2.UDPRoute{}}},
	}
	for _, tc := range cases {
		for _, typ := range tc.types {
			p, r := reflect.TypeOf(tc.proj), reflect.TypeOf(typ)
			if err := compatible(p, r, ""); err != nil {
				t.Errorf("%s does not project %s: %v", p.Name(), r, err)
			}
		}
	}
}

// compatible reports why projection type p does not read values of type r
// the same way, or nil: every field of a projected struct must be a field
// of r's struct with the same JSON name (through inlined structs) and a
// compatible type; other types must have the same kind.
func compatible(p, r reflect.Type, path string) error {
	if p == r {
		return nil
	}
	if p.Kind() != r.Kind() {
		return fmt.Errorf("%s: %s in the projection, %s in the API", path, p, r)
	}
	switch p.Kind() {
	case reflect.Pointer, reflect.Slice:
		return compatible(p.Elem(), r.Elem(), path+"[]")
	case reflect.Map:
		if err := compatible(p.Key(), r.Key(), path+"{key}"); err != nil {
			return err
		}
		return compatible(p.Elem(), r.Elem(), path+"{}")
	case reflect.Struct:
		for i := range p.NumField() {
			f := p.Field(i)
			name := jsonName(f)
			rf, ok := fieldByJSON(r, name)
			if !ok {
				return fmt.Errorf("%s.%s: no such field in %s", path, name, r)
			}
			if err := compatible(f.Type, rf.Type, path+"."+name); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// fieldByJSON finds the field of struct type t named name in JSON,
// looking into inlined embedded structs.
func fieldByJSON(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		n := jsonName(f)
		if f.Anonymous && n == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if rf, ok := fieldByJSON(ft, name); ok {
					return rf, true
				}
			}
			continue
		}
		if n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// TestProjectionsCatchDrift makes sure the check above can fail.
func TestProjectionsCatchDrift(t *testing.T) {
	type badRule struct {
		Name *string `json:"title"`
	}
	type badSpec struct {
		Rules []badRule `json:"rules"`
	}
	type bad struct {
		Spec badSpec `json:"spec"`
	}
	if compatible(reflect.TypeOf(bad{}), reflect.TypeOf(gwv1.HTTPRoute{}), "") == nil {
		t.Error("a field the API lacks must not be compatible")
	}
	type badPort struct {
		Spec struct {
			Ports []struct {
				Port string `json:"port"`
			} `json:"ports"`
		} `json:"spec"`
	}
	if compatible(reflect.TypeOf(badPort{}), reflect.TypeOf(corev1.Service{}), "") == nil {
		t.Error("a field of another kind must not be compatible")
	}
}
