package routing

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/delegation"
)

// candidate is an entry found for a request, with the route hostname it
// was found under (for precedence).
type candidate struct {
	e *entry
	// exactHost is the length of the exact route hostname matched (0 for
	// a wildcard or none); hostLen that of the hostname matched, wildcard
	// included.
	exactHost, hostLen int
}

// groupsFor yields each group of t answering host, most specific first,
// with its precedence: the exact hostname, the wildcards from the longest
// suffix, then the routes without hostnames.
func (t *table) groupsFor(host string, yield func(g *hostGroup, exactHost, hostLen int)) {
	if t == nil {
		return
	}
	if g := t.exact[host]; g != nil {
		yield(g, len(host), len(host))
	}
	// A wildcard stands for one label or more: every suffix starting at a
	// dot, with at least one label before it.
	for i := strings.IndexByte(host, '.'); i > 0 && i < len(host)-1; {
		suffix := host[i:]
		if g := t.wildcard[suffix]; g != nil {
			yield(g, 0, len(suffix)+1)
		}
		j := strings.IndexByte(host[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if t.any != nil {
		yield(t.any, 0, 0)
	}
}

// pathOnly returns the request path without its query.
func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// httpCandidates yields the entries of g whose path type and value can
// match path: the Exact entries for path, the PathPrefix entries of every
// prefix of path on a segment boundary, and every regular expression.
func (g *hostGroup) httpCandidates(path string, yield func(*entry)) {
	for _, e := range g.exactPath[path] {
		yield(e)
	}
	if g.prefixPath != nil {
		for _, e := range g.prefixPath[""] {
			yield(e)
		}
		for i := 1; i < len(path); i++ {
			if path[i] == '/' {
				for _, e := range g.prefixPath[path[:i]] {
					yield(e)
				}
			}
		}
		if k := strings.TrimRight(path, "/"); k != "" {
			for _, e := range g.prefixPath[k] {
				yield(e)
			}
		}
	}
	for _, e := range g.regexPath {
		yield(e)
	}
}

// grpcCandidates yields the entries of g that may match service.
func (g *hostGroup) grpcCandidates(service string, yield func(*entry)) {
	for _, e := range g.service[service] {
		yield(e)
	}
	for _, e := range g.otherGRPC {
		yield(e)
	}
}

// Stages of a match, in the order they are checked: how far a match that
// fails got tells which rule of a route came closest to the request.
const (
	stagePath    = iota // HTTP path, gRPC service (and an invalid match)
	stageMethod         // HTTP method, gRPC method
	stageHeaders        // header matches
	stageQuery          // query parameter matches
)

// mismatch says why entry e does not match req ("" when it matches), and
// the stage at which it failed. It checks everything but the hostname.
func (e *entry) mismatch(req *Request, query url.Values) (string, int) {
	if e.err != "" {
		return e.err, stagePath
	}
	ru := e.rule
	switch {
	case ru.tls != nil:
		return "", 0
	case ru.grpc != nil:
		svc, method, _ := grpcServiceMethod(req.Path)
		if e.grpcRe[0] != nil && !e.grpcRe[0].MatchString(svc) || e.grpcRe[0] == nil && e.service != "" && e.service != svc {
			return fmt.Sprintf("service %q does not match %q", svc, e.service), stagePath
		}
		if e.grpcRe[1] != nil && !e.grpcRe[1].MatchString(method) || e.grpcRe[1] == nil && e.methodName != "" && e.methodName != method {
			return fmt.Sprintf("method %q does not match %q", method, e.methodName), stageMethod
		}
		return e.headerMismatch(req), stageHeaders
	}
	path := pathOnly(req.Path)
	switch e.m.PathType {
	case gwv1.PathMatchExact:
		if path != e.m.Path {
			return fmt.Sprintf("path %s is not exactly %s", path, e.m.Path), stagePath
		}
	case gwv1.PathMatchPathPrefix:
		k := prefixKey(e.m.Path)
		if k != "" && path != k && !strings.HasPrefix(path, k+"/") {
			return fmt.Sprintf("path %s does not start with %s", path, e.m.Path), stagePath
		}
	default:
		if !e.pathRe.MatchString(path) {
			return fmt.Sprintf("path %s does not match the regular expression %s", path, e.m.Path), stagePath
		}
	}
	if e.m.Method != "" && e.m.Method != req.Method {
		return fmt.Sprintf("method %s is not %s", req.Method, e.m.Method), stageMethod
	}
	if m := e.headerMismatch(req); m != "" {
		return m, stageHeaders
	}
	for i, q := range e.m.Query {
		vs, ok := query[q.Name]
		if !ok {
			return fmt.Sprintf("query parameter %s is absent", q.Name), stageQuery
		}
		// Only the first value of a repeated parameter is matched: the API
		// lets implementations choose, and that is what most do.
		if !valueMatches(q, e.valueRe.at(false, i), vs[0]) {
			return fmt.Sprintf("query parameter %s=%s does not match %s", q.Name, vs[0], describeValue(q)), stageQuery
		}
	}
	return "", 0
}

func (e *entry) headerMismatch(req *Request) string {
	for i, h := range e.m.Headers {
		v, ok := req.Headers[h.Name]
		if !ok {
			return fmt.Sprintf("header %s is absent", h.Name)
		}
		if !valueMatches(h, e.valueRe.at(true, i), v) {
			return fmt.Sprintf("header %s: %s does not match %s", h.Name, v, describeValue(h))
		}
	}
	return ""
}

// at is the compiled regular expression of header (or query parameter)
// match i, if any.
func (v *valueRes) at(header bool, i int) *regexp.Regexp {
	if v == nil {
		return nil
	}
	res := v.query
	if header {
		res = v.headers
	}
	if i < len(res) {
		return res[i]
	}
	return nil
}

// valueMatches reports whether s matches value match v, re being v
// compiled when it is a regular expression (nil when it does not
// compile: the entry's err then says so, and it matches nothing).
func valueMatches(v delegation.Value, re *regexp.Regexp, s string) bool {
	if re != nil {
		return re.MatchString(s)
	}
	return s == v.Value
}

func describeValue(v delegation.Value) string {
	if v.Regex {
		return "the regular expression " + v.Value
	}
	return v.Value
}

// better reports whether candidate a takes precedence over b: the
// HTTPRoute and GRPCRoute API's order (hostname, then the match's
// specificity), then the oldest route, then {namespace}/{name}, then rule
// and match order.
func better(a, b candidate) bool {
	if a.exactHost != b.exactHost {
		return a.exactHost > b.exactHost
	}
	if a.hostLen != b.hostLen {
		return a.hostLen > b.hostLen
	}
	ka, kb := a.e.specificity(), b.e.specificity()
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] > kb[i]
		}
	}
	ra, rb := a.e.rule.route, b.e.rule.route
	if ra != rb {
		if !ra.created.Equal(rb.created) {
			return ra.created.Before(rb.created)
		}
		if na, nb := ra.ref.Namespace+"/"+ra.ref.Name, rb.ref.Namespace+"/"+rb.ref.Name; na != nb {
			return na < nb
		}
		return ra.ref.Kind < rb.ref.Kind
	}
	if a.e.rule.index != b.e.rule.index {
		return a.e.rule.index < b.e.rule.index
	}
	return a.e.match < b.e.match
}

// pathRank orders path match types: Exact, then RegularExpression
// (implementation-specific: the API leaves its place open; this is Envoy
// Gateway's), then PathPrefix.
var pathRank = map[gwv1.PathMatchType]int{gwv1.PathMatchExact: 3, gwv1.PathMatchRegularExpression: 2, gwv1.PathMatchPathPrefix: 1}

// specificity is the match's precedence after the hostname, highest
// first. HTTP: path type, path length, method, header and query matches.
// gRPC: service and method characters, header matches.
func (e *entry) specificity() [5]int {
	ru := e.rule
	switch {
	case ru.tls != nil:
		return [5]int{}
	case ru.grpc != nil:
		return [5]int{len(e.service), len(e.methodName), len(e.m.Headers)}
	}
	method := 0
	if e.m.Method != "" {
		method = 1
	}
	n := len(e.m.Path)
	if e.m.PathType == gwv1.PathMatchPathPrefix {
		n = len(prefixKey(e.m.Path))
	}
	return [5]int{pathRank[e.m.PathType], n, method, len(e.m.Headers), len(e.m.Query)}
}
