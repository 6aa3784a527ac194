package gatewayapi

import (
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// hostnamesIntersect reports whether a listener's hostname ("" for none)
// admits a route with these hostnames: when either side has none, or when
// some route hostname intersects the listener's.
func hostnamesIntersect(listener string, route []gwv1.Hostname) bool {
	if listener == "" || len(route) == 0 {
		return true
	}
	for _, h := range route {
		if HostnameIntersects(listener, string(h)) {
			return true
		}
	}
	return false
}

// HostnameIntersects applies the Gateway API matching rules to two
// hostnames, each exact or a "*." wildcard. Validation keeps hostnames
// lower case, so comparisons are exact.
func HostnameIntersects(a, b string) bool {
	aw, bw := isWildcard(a), isWildcard(b)
	switch {
	case !aw && !bw:
		return a == b
	case aw && bw:
		// *.example.com and *.foo.example.com both match a.foo.example.com.
		sa, sb := a[1:], b[1:]
		return strings.HasSuffix(sa, sb) || strings.HasSuffix(sb, sa)
	case aw:
		return wildcardMatches(a[1:], b)
	default:
		return wildcardMatches(b[1:], a)
	}
}

func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// wildcardMatches reports whether host matches the wildcard whose suffix
// (".example.com" for "*.example.com") is given: the wildcard stands for
// one label or more, so host must be longer than the suffix.
func wildcardMatches(suffix, host string) bool {
	return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
}

// NarrowHostname is the hostname a route's hostname h serves on a
// listener with hostname listener ("" for none): the more specific of the
// two when they intersect (Gateway API: a route's wildcard narrowed to
// the listener's exact hostname, and so on); ok is false when they do not
// intersect.
func NarrowHostname(listener, h string) (string, bool) {
	switch {
	case listener == "":
		return h, true
	case !HostnameIntersects(listener, h):
		return "", false
	case !isWildcard(h):
		return h, true
	case !isWildcard(listener) || len(listener) > len(h):
		return listener, true
	}
	return h, true
}
