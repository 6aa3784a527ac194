package gatewayapi

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestHostnameIntersects(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"foo.example.com", "foo.example.com", true},
		{"foo.example.com", "bar.example.com", false},
		{"*.example.com", "foo.example.com", true},
		{"*.example.com", "a.b.example.com", true},  // one label or more
		{"*.example.com", "example.com", false},     // but not none
		{"*.example.com", "fooexample.com", false},  // on a label boundary
		{"*.example.com", "foo.example.org", false}, // same length, other suffix
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.foo.example.com", true},
		{"*.foo.example.com", "*.bar.example.com", false},
		{"*.com", "*.example.org", false},
		{"*", "foo", false}, // not a wildcard: "*." is
	}
	for _, tc := range cases {
		if got := HostnameIntersects(tc.a, tc.b); got != tc.want {
			t.Errorf("HostnameIntersects(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.want)
		}
		if got := HostnameIntersects(tc.b, tc.a); got != tc.want {
			t.Errorf("HostnameIntersects(%q, %q) = %t, want %t (symmetry)", tc.b, tc.a, got, tc.want)
		}
	}
	if !hostnamesIntersect("", []gwv1.Hostname{"x"}) || !hostnamesIntersect("x", nil) || !hostnamesIntersect("", nil) {
		t.Error("a side without hostnames intersects everything")
	}
	if hostnamesIntersect("a.example.com", []gwv1.Hostname{"b.example.com", "*.example.org"}) {
		t.Error("no pair intersects")
	}
	if !hostnamesIntersect("a.example.com", []gwv1.Hostname{"b.example.com", "*.example.com"}) {
		t.Error("one pair intersects")
	}
}

// NarrowHostname: the more specific of two intersecting hostnames, the
// route's when the listener has none.
func TestNarrowHostname(t *testing.T) {
	for _, tc := range []struct {
		listener, route, want string
		ok                    bool
	}{
		{"", "*.example.com", "*.example.com", true},
		{"a.example.com", "a.example.com", "a.example.com", true},
		{"*.example.com", "a.example.com", "a.example.com", true},
		{"a.example.com", "*.example.com", "a.example.com", true},
		{"*.example.com", "*.a.example.com", "*.a.example.com", true},
		{"*.a.example.com", "*.example.com", "*.a.example.com", true},
		{"a.example.com", "b.example.com", "", false},
		{"*.example.org", "*.example.com", "", false},
	} {
		got, ok := NarrowHostname(tc.listener, tc.route)
		if got != tc.want || ok != tc.ok {
			t.Errorf("NarrowHostname(%q, %q) = %q, %t, want %q, %t", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}
