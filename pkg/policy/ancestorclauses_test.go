package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestParseAncestor(t *testing.T) {
	ngf := "gateway.nginx.org/nginx-gateway-controller"
	for _, tc := range []struct {
		in      string
		mode    AncestorMode
		by      []string
		wantErr string
	}{
		{in: "gateway", mode: AncestorGateway},
		{in: " gateway-object ", mode: AncestorGatewayObject},
		{in: "gateway; controller=" + ngf + " service-gateways", mode: AncestorGateway, by: []string{ngf}},
		{in: "gateway; controller=a service-gateways; ; controller=b service-gateways", mode: AncestorGateway, by: []string{"a", "b"}},
		{in: "gateways", wantErr: "unknown ancestor mode"},
		{in: "target; controller=a service-gateways", wantErr: "needs the mode gateway"},
		{in: "gateway-object; controller=a service-gateways", wantErr: "needs the mode gateway"},
		{in: "gateway; a service-gateways", wantErr: "want controller=<GatewayClass controllerName> service-gateways"},
		{in: "gateway; controller= service-gateways", wantErr: "want controller="},
		{in: "gateway; controller=a", wantErr: "want the one word service-gateways"},
		{in: "gateway; controller=a unranked", wantErr: "want the one word service-gateways"},
		{in: "gateway; controller=a service-gateways; controller=a service-gateways", wantErr: "named twice"},
	} {
		mode, by, err := ParseAncestor(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || mode != tc.mode || !slices.Equal(by, tc.by) {
			t.Errorf("%q = %v, %v, %v; want %v, %v", tc.in, mode, by, err, tc.mode, tc.by)
		}
	}
}

// The clauses come from the CRD's annotation and replace the profile's
// setting whole.
func TestAncestorServiceGatewaysFromCRD(t *testing.T) {
	k, p := KindFromCRD(newCRD(map[string]string{LabelPolicy: "Direct"}, map[string]string{AnnotationAncestor: "gateway; controller=x.example/c service-gateways"}), nil)
	if p != nil {
		t.Fatal(p)
	}
	if !k.ServiceGatewaysAt("x.example/c") || k.ServiceGatewaysAt("y.example/c") {
		t.Errorf("service-gateways at %v, want x.example/c only", k.AncestorServiceGatewaysBy)
	}
	if got := FormatAncestor(k.Ancestor, k.AncestorServiceGatewaysBy); got != "gateway; controller=x.example/c service-gateways" {
		t.Errorf("written back as %q", got)
	}
	_, p = KindFromCRD(newCRD(map[string]string{LabelPolicy: "Direct"}, map[string]string{AnnotationAncestor: "target; controller=x.example/c service-gateways"}), nil)
	if p == nil || p.Field != "metadata.annotations["+AnnotationAncestor+"]" || !strings.Contains(p.Message, "needs the mode gateway") {
		t.Errorf("target mode with clauses: problem %+v", p)
	}
}

// FuzzParseAncestor: no panic, and what is accepted is written back
// (FormatAncestor) to a value read again the same.
func FuzzParseAncestor(f *testing.F) {
	for _, s := range []string{"gateway", "target", "gateway; controller=a service-gateways", "gateway; controller=a service-gateways; controller=b service-gateways",
		"target; controller=a service-gateways", "gateway;", "gateway; controller=a", "gateway; controller==b service-gateways", ";;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		mode, by, err := ParseAncestor(v)
		if err != nil {
			return
		}
		mode2, by2, err := ParseAncestor(FormatAncestor(mode, by))
		if err != nil || mode2 != mode || !slices.Equal(by, by2) {
			t.Fatalf("%q read as %v %v, written %q, read again %v %v (%v)", v, mode, by, FormatAncestor(mode, by), mode2, by2, err)
		}
	})
}
