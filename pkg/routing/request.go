package routing

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Request is a request as a client sends it to a Gateway: the URL's parts,
// the method and the headers. It is the "request" of a RequestTrace.
type Request struct {
	// Scheme is http, https, grpc or grpcs; tcp or udp for a connection
	// (IsL4), which has no method, path, query or headers.
	Scheme string `json:"scheme"`
	// Host is the host the request is routed by: the URL's host, or the
	// Host header's when one is given, lower case and without a port (a
	// port in the Host header is not considered, as the HTTPRoute API
	// says).
	Host string `json:"host"`
	// Port is the URL's port, or the scheme's default (80, 443): the port
	// of the Gateway's listener the request is sent to.
	Port int32 `json:"port"`
	// Method is the HTTP method (GET by default, POST for gRPC).
	Method string `json:"method"`
	// Path is the path as sent (percent-encoding kept); for gRPC,
	// /package.Service/Method.
	Path string `json:"path"`
	// Query is the raw query string, without "?".
	Query string `json:"query"`
	// Headers are the request's headers by lower-case name; repeated
	// headers are joined with ",".
	Headers map[string]string `json:"headers"`
	// SNI is the URL's host: the TLS server name of https and grpcs
	// requests (not in the document: it is the URL's host).
	SNI string `json:"-"`
	// HostHeader is the Host header as sent (with its port, if any): the
	// one given with -H, or the URL's host with its port when it is not
	// the scheme's default (what clients send). Istio's authorization
	// matches it (not in the document).
	HostHeader string `json:"-"`
}

// Header is one request header as given on the command line.
type Header struct {
	Name, Value string
}

// defaultPorts are the ports of URLs that name none.
var defaultPorts = map[string]int32{"http": 80, "https": 443, "grpc": 80, "grpcs": 443}

// l4Schemes are the schemes of connections, routed by port alone
// (TCPRoute, UDPRoute): their URLs must name the port.
var l4Schemes = map[string]bool{"tcp": true, "udp": true}

// IsGRPC reports whether the request is a gRPC call.
func (r *Request) IsGRPC() bool { return r.Scheme == "grpc" || r.Scheme == "grpcs" }

// IsL4 reports whether the request is a TCP connection or UDP datagrams
// (tcp://, udp://), which listeners route by port alone.
func (r *Request) IsL4() bool { return l4Schemes[r.Scheme] }

// IsTLS reports whether the request is sent over TLS (https, grpcs).
func (r *Request) IsTLS() bool { return r.Scheme == "https" || r.Scheme == "grpcs" }

// ParseHeader reads "Name: value" (curl's -H form). The name must be an
// HTTP token; the value is trimmed of surrounding spaces.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return Header{}, fmt.Errorf("header %q has no colon: write it as 'Name: value'", s)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return Header{}, fmt.Errorf("header %q has no name: write it as 'Name: value'", s)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }); i >= 0 {
		return Header{}, fmt.Errorf("header name %q has the character %q, which header names cannot hold", name, name[i])
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n\x00") {
		return Header{}, fmt.Errorf("header %q: a value cannot hold a line break or NUL", name)
	}
	return Header{Name: name, Value: value}, nil
}

// isTokenChar reports whether r may appear in an HTTP token (RFC 9110).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return r < 0x80 && strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// ParseRequest reads a request: rawURL (http, https, grpc or grpcs; tcp or
// udp with a port and nothing after it), the method ("" for the default)
// and headers in "Name: value" form. Errors say what is wrong and how to
// write it.
func ParseRequest(rawURL, method string, headers []string) (*Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("malformed URL %q: %v", rawURL, unwrapURLError(err))
	}
	scheme := strings.ToLower(u.Scheme)
	if _, ok := defaultPorts[scheme]; !ok && !l4Schemes[scheme] {
		if u.Scheme == "" {
			return nil, fmt.Errorf("URL %q has no scheme: write http://HOST/PATH, https://..., grpc://HOST/package.Service/Method, grpcs://..., tcp://HOST:PORT or udp://HOST:PORT", rawURL)
		}
		return nil, fmt.Errorf("URL %q: unsupported scheme %q (use http, https, grpc, grpcs, tcp or udp)", rawURL, u.Scheme)
	}
	if l4Schemes[scheme] {
		return parseConnection(rawURL, u, scheme, method, headers)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host: write %s://HOST[:PORT]/PATH", rawURL, scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("URL %q carries user information, which a Gateway does not route by; leave it out", rawURL)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return nil, fmt.Errorf("URL %q has no host: write %s://HOST[:PORT]/PATH", rawURL, scheme)
	}
	// What a client sends: the URL's host and port as written; a default
	// port is left out below.
	r := &Request{Scheme: scheme, Host: host, SNI: host, Port: defaultPorts[scheme], Query: u.RawQuery, Headers: map[string]string{}, HostHeader: u.Host}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("URL %q: port %q is not a number from 1 to 65535", rawURL, p)
		}
		r.Port = int32(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Errorf("URL %q: empty port after the colon", rawURL)
	}
	if r.Port == defaultPorts[scheme] {
		r.HostHeader = u.Hostname() // clients leave a default port out
		if strings.Contains(r.HostHeader, ":") {
			r.HostHeader = "[" + r.HostHeader + "]" // an IPv6 address
		}
	}
	r.Path = u.EscapedPath()
	if r.Path == "" {
		r.Path = "/"
	}
	if r.IsGRPC() {
		if _, _, ok := grpcServiceMethod(r.Path); !ok {
			return nil, fmt.Errorf("URL %q: a gRPC URL's path is /package.Service/Method, not %q", rawURL, r.Path)
		}
		if r.Query != "" {
			return nil, fmt.Errorf("URL %q: a gRPC call has no query string", rawURL)
		}
	}
	switch {
	case method != "":
		if i := strings.IndexFunc(method, func(c rune) bool { return !isTokenChar(c) }); i >= 0 {
			return nil, fmt.Errorf("method %q is not an HTTP method (it has the character %q)", method, method[i])
		}
		r.Method = method
	case r.IsGRPC():
		r.Method = "POST"
	default:
		r.Method = "GET"
	}
	for _, s := range headers {
		h, err := ParseHeader(s)
		if err != nil {
			return nil, err
		}
		name := strings.ToLower(h.Name)
		if name == "host" || name == ":authority" {
			hh := h.Value
			if hp, _, err := net.SplitHostPort(hh); err == nil {
				hh = hp
			}
			if hh == "" {
				return nil, fmt.Errorf("header %q: empty host", h.Name)
			}
			r.Host = strings.ToLower(hh)
			r.HostHeader = h.Value
			continue
		}
		if old, ok := r.Headers[name]; ok {
			r.Headers[name] = old + "," + h.Value
		} else {
			r.Headers[name] = h.Value
		}
	}
	return r, nil
}

// parseConnection reads a tcp:// or udp:// URL (u, parsed from rawURL):
// a host and a port, nothing else; a connection has no method or headers.
func parseConnection(rawURL string, u *url.URL, scheme, method string, headers []string) (*Request, error) {
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host: write %s://HOST:PORT", rawURL, scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("URL %q carries user information, which a Gateway does not route by; leave it out", rawURL)
	}
	p := u.Port()
	if p == "" {
		return nil, fmt.Errorf("URL %q names no port: a %s connection is routed by the listener's port, write %s://HOST:PORT", rawURL, strings.ToUpper(scheme), scheme)
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return nil, fmt.Errorf("URL %q: port %q is not a number from 1 to 65535", rawURL, p)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("URL %q: a %s connection has no path, query or fragment; write %s://HOST:PORT", rawURL, strings.ToUpper(scheme), scheme)
	}
	if method != "" {
		return nil, fmt.Errorf("a %s connection has no method: leave -X %s out", strings.ToUpper(scheme), method)
	}
	if len(headers) > 0 {
		return nil, fmt.Errorf("a %s connection has no headers: leave -H %q out", strings.ToUpper(scheme), headers[0])
	}
	host := strings.ToLower(u.Hostname())
	return &Request{Scheme: scheme, Host: host, SNI: host, Port: int32(n), Headers: map[string]string{}}, nil
}

// unwrapURLError drops url.Error's repetition of the URL.
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// grpcServiceMethod splits a gRPC path /service/method.
func grpcServiceMethod(path string) (service, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/")
	if !found {
		return "", "", false
	}
	service, method, ok = strings.Cut(rest, "/")
	if !ok || service == "" || method == "" || strings.Contains(method, "/") {
		return "", "", false
	}
	return service, method, true
}

// URL renders the request as a URL (with the routed host).
func (r *Request) URL() string {
	var b strings.Builder
	b.WriteString(r.Scheme + "://" + hostPort(r.Scheme, r.Host, r.Port) + r.Path)
	if r.Query != "" {
		b.WriteString("?" + r.Query)
	}
	return b.String()
}

// hostPort writes host with the port, unless the port is the scheme's
// default.
func hostPort(scheme, host string, port int32) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 0 || defaultPorts[scheme] == port {
		return host
	}
	return host + ":" + strconv.Itoa(int(port))
}
