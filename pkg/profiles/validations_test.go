package profiles

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// egViolations parses spec (YAML) as a policy of Envoy Gateway's kind and
// returns the fields of the rules that do not hold for it: those judged at
// every target, then those judged at listeners only, after "|".
func egViolations(t *testing.T, kind, spec string) string {
	t.Helper()
	return violationsOf(t, topology.GroupKind{Group: "gateway.envoyproxy.io", Kind: kind}, spec)
}

// violationsOf is egViolations for the profile of any kind gk.
func violationsOf(t *testing.T, gk topology.GroupKind, spec string) string {
	t.Helper()
	prof, ok := Lookup(gk)
	if !ok {
		t.Fatalf("no profile for %s", gk)
	}
	k, prob := policy.KindFromCRDWithProfile(crdOf(gk, ""), nil, prof)
	if prob != nil {
		t.Fatal(prob)
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte(spec), &m); err != nil {
		t.Fatal(err)
	}
	m["targetRefs"] = []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "g"}}
	p := policy.Parse(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gk.Group + "/v1alpha1", "kind": gk.Kind,
		"metadata": map[string]any{"name": "p", "namespace": "ns"}, "spec": m,
	}}, k)
	var fields []string
	for _, v := range p.Violations() {
		if strings.Contains(v.Message, "could not be evaluated") {
			t.Errorf("%s: %s", spec, v.Message)
		}
		fields = append(fields, v.Field)
	}
	out := strings.Join(fields, " ")
	fields = nil
	for _, v := range p.ViolationsWhere(func(v policy.Validation) bool { return len(v.On) > 0 }) {
		fields = append(fields, v.Field)
	}
	if len(fields) > 0 {
		out += "|" + strings.Join(fields, " ")
	}
	return out
}

// Envoy Gateway's rules on a BackendTrafficPolicy's bandwidth limits
// (buildBandwidthLimit: a whole number of bytes, at least 1 KiB per
// second of the unit) and rate limits (buildLocalRateLimit: one default
// rule, units multiple of its unit; buildRateLimitRule: no inverted
// Distinct match, local rules unless the type says Global, global ones
// unless it says Local) and retry back-off intervals (buildRetry), and
// on a ClientTrafficPolicy's cipher suites (judged at TLS listeners).
func TestEnvoyGatewayValidations(t *testing.T) {
	const bw, local, global = "spec.bandwidthLimit.request.limit.value", "spec.rateLimit.local.rules", "spec.rateLimit.global.rules"
	const boBase, boMax = "spec.retry.perRetry.backOff.baseInterval", "spec.retry.perRetry.backOff.maxInterval"
	limit := func(dir, value, unit string) string {
		s := "bandwidthLimit: {" + dir + ": {limit: {value: " + value
		if unit != "" {
			s += ", unit: " + unit
		}
		return s + "}}}"
	}
	rules := func(scope, typ string, rs ...string) string {
		s := "rateLimit: {"
		if typ != "" {
			s += "type: " + typ + ", "
		}
		return s + scope + ": {rules: [" + strings.Join(rs, ", ") + "]}}"
	}
	dflt := func(unit string) string { return "{limit: {requests: 10, unit: " + unit + "}}" }
	sel := func(unit, match string) string {
		return "{clientSelectors: [" + match + "], limit: {requests: 10, unit: " + unit + "}}"
	}
	header := "{headers: [{name: x, value: a}]}"
	for _, c := range []struct{ kind, spec, want string }{
		// Bandwidth.
		{"BackendTrafficPolicy", limit("request", "1023", "Second"), bw},
		{"BackendTrafficPolicy", limit("request", "1024", "Second"), ""},
		{"BackendTrafficPolicy", limit("request", "1Ki", ""), ""},
		{"BackendTrafficPolicy", limit("request", "1023", ""), bw},
		{"BackendTrafficPolicy", limit("request", "61439", "Minute"), bw},
		{"BackendTrafficPolicy", limit("request", "60Ki", "Minute"), ""},
		{"BackendTrafficPolicy", limit("request", "3686399", "Hour"), bw},
		{"BackendTrafficPolicy", limit("request", "3600Ki", "Hour"), ""},
		{"BackendTrafficPolicy", limit("request", "1.5Ki", "Second"), bw}, // Quantity.AsInt64 refuses it
		{"BackendTrafficPolicy", limit("request", "9E", "Second"), ""},
		{"BackendTrafficPolicy", limit("request", "1500500m", "Second"), bw},
		{"BackendTrafficPolicy", limit("request", "10E", "Second"), bw},
		{"BackendTrafficPolicy", limit("response", "100", "Second"), "spec.bandwidthLimit.response.limit.value"},
		// One local rule without clientSelectors (the default).
		{"BackendTrafficPolicy", rules("local", "", dflt("Minute"), dflt("Minute")), local},
		{"BackendTrafficPolicy", rules("local", "Local", dflt("Minute"), "{clientSelectors: [], limit: {requests: 1, unit: Minute}}"), local},
		{"BackendTrafficPolicy", rules("local", "", dflt("Minute"), sel("Minute", header)), ""},
		{"BackendTrafficPolicy", rules("local", "Global", dflt("Minute"), dflt("Minute")), ""},
		// Units: multiples of the default's (Second without one).
		{"BackendTrafficPolicy", rules("local", "", dflt("Hour"), sel("Minute", header)), local},
		{"BackendTrafficPolicy", rules("local", "", dflt("Minute"), sel("Hour", header), sel("Day", header)), ""},
		{"BackendTrafficPolicy", rules("local", "", sel("Minute", header), sel("Year", header)), ""},
		{"BackendTrafficPolicy", rules("local", "", dflt("Week"), sel("Month", header)), local},
		{"BackendTrafficPolicy", rules("local", "", sel("Month", header), dflt("Day")), ""},
		{"BackendTrafficPolicy", rules("local", "", dflt("Day"), sel("Year", header)), ""},
		{"BackendTrafficPolicy", rules("local", "", dflt("Month"), sel("Year", header)), local},
		// Distinct matches not inverted.
		{"BackendTrafficPolicy", rules("global", "Global", sel("Hour", "{headers: [{name: x, type: Distinct, invert: true}]}")), global},
		{"BackendTrafficPolicy", rules("global", "", sel("Hour", "{headers: [{name: x, type: Distinct, invert: false}]}")), ""},
		{"BackendTrafficPolicy", rules("global", "", sel("Hour", "{headers: [{name: x, value: a, invert: true}]}")), ""},
		{"BackendTrafficPolicy", rules("global", "Local", sel("Hour", "{headers: [{name: x, type: Distinct, invert: true}]}")), ""},
		{"BackendTrafficPolicy", rules("local", "", sel("Second", header+", {queryParams: [{name: q, type: Distinct, invert: true}]}")), local},
		// Retry back-off intervals (buildRetry): not zero, maxInterval
		// no less than baseInterval; an interval outside the schema's
		// form is not judged (Envoy Gateway skips what it cannot parse).
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 0s, maxInterval: 1s}}}", boBase},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 0h0m0s}}}", boBase},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {maxInterval: 0ms}}}", boMax},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 2s, maxInterval: 1s}}}", boMax},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 1m, maxInterval: 59s}}}", boMax},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 1s, maxInterval: 1s}}}", ""},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 100ms, maxInterval: 1h}}}", ""},
		{"BackendTrafficPolicy", "retry: {perRetry: {backOff: {baseInterval: 10sec, maxInterval: 1s}}}", ""},
		{"BackendTrafficPolicy", "retry: {numRetries: 3}", ""},
		// Cipher suites, at TLS listeners.
		{"ClientTrafficPolicy", "tls: {ciphers: [INVALID-CIPHER]}", "|spec.tls.ciphers"},
		{"ClientTrafficPolicy", "tls: {ciphers: [ECDHE-RSA-AES128-GCM-SHA256, TLS_RSA_WITH_AES_256_CBC_SHA]}", ""},
		{"ClientTrafficPolicy", "tls: {minVersion: '1.3'}", ""},
	} {
		if got := egViolations(t, c.kind, c.spec); got != c.want {
			t.Errorf("%s %s: rules not holding at %q, want %q", c.kind, c.spec, got, c.want)
		}
	}
}

// NGINX Gateway Fabric's relationships between a ProxySettingsPolicy's
// buffer sizes (validateBusyBufferSizeRelationships): busyBuffersSize
// larger than bufferSize, and less than buffers.number × buffers.size −
// buffers.size, sizes compared across units; each checked only when both
// sides are set and read as sizes.
func TestNGFProxyBufferValidations(t *testing.T) {
	const busy = "spec.buffering.busyBuffersSize"
	gk := topology.GroupKind{Group: "gateway.nginx.org", Kind: "ProxySettingsPolicy"}
	for _, c := range []struct{ spec, want string }{
		{"buffering: {bufferSize: 8k, busyBuffersSize: 16k}", ""},
		{"buffering: {bufferSize: 8k, busyBuffersSize: 8k}", busy},
		{"buffering: {bufferSize: 1m, busyBuffersSize: 1000k}", busy},
		{"buffering: {bufferSize: 1023k, busyBuffersSize: 1m}", ""},
		{"buffering: {bufferSize: 16k}", ""},
		{"buffering: {busyBuffersSize: 4k}", ""},
		// NGF skips the comparisons for what it cannot read; its size
		// format refuses it.
		{"buffering: {bufferSize: 8k, busyBuffersSize: 8x}", busy},
		{"buffering: {bufferSize: 8x, busyBuffersSize: 4k}", "spec.buffering.bufferSize"},
		// 8 × 4k − 4k = 28k.
		{"buffering: {buffers: {number: 8, size: 4k}, busyBuffersSize: 27k}", ""},
		{"buffering: {buffers: {number: 8, size: 4k}, busyBuffersSize: 28k}", busy},
		{"buffering: {buffers: {number: 2, size: 1m}, busyBuffersSize: 1023k}", ""},
		{"buffering: {buffers: {number: 2, size: 1m}, busyBuffersSize: 1024k}", busy},
		{"buffering: {buffers: {number: 8, size: 4k}}", ""},
		{"buffering: {buffers: {size: 4k}, busyBuffersSize: '1'}", busy}, // number 0: nothing is less
		// Both broken: two problems, at the same field.
		{"buffering: {bufferSize: 64k, buffers: {number: 4, size: 8k}, busyBuffersSize: 32k}", busy + " " + busy},
		{"buffering: {bufferSize: 16k, buffers: {number: 4, size: 8k}, busyBuffersSize: 20k}", ""},
		{"timeout: {read: 10s}", ""},
	} {
		if got := violationsOf(t, gk, c.spec); got != c.want {
			t.Errorf("%s: %q, want %q", c.spec, got, c.want)
		}
	}
}

// The formats NGINX Gateway Fabric's validators check in code: sizes (at
// most four digits, then k, m or g), durations (at most four digits, then
// ms, s, m or h), rate-limit rates and keys, span names and attributes
// (no line break, no '$', '"' escaped), and a hashMethodKey naming an
// NGINX variable that starts with a letter, judged only with a
// loadBalancingMethod. The CRDs' patterns refuse most of these too;
// "$_x" and line breaks only the code does.
func TestNGFFormatValidations(t *testing.T) {
	ngf := func(kind string) topology.GroupKind {
		return topology.GroupKind{Group: "gateway.nginx.org", Kind: kind}
	}
	for _, c := range []struct {
		kind, spec, want string
	}{
		{"ClientSettingsPolicy", "body: {maxSize: 10m, bufferSize: '8192', timeout: 30s}", ""},
		{"ClientSettingsPolicy", "body: {maxSize: 10M}", "spec.body.maxSize"},        // upper case
		{"ClientSettingsPolicy", "body: {maxSize: '10000'}", "spec.body.maxSize"},    // five digits
		{"ClientSettingsPolicy", "body: {bufferSize: 1.5k}", "spec.body.bufferSize"}, // a fraction
		{"ClientSettingsPolicy", "body: {timeout: 1d}", "spec.body.timeout"},
		{"ClientSettingsPolicy", "keepAlive: {time: 1h, minTimeout: 500ms, timeout: {server: 10s, header: 5s}}", ""},
		{"ClientSettingsPolicy", "keepAlive: {timeout: {server: 10s, header: 5 s}}", "spec.keepAlive.timeout.header"},
		{"ProxySettingsPolicy", "timeout: {connect: 10s, read: 1m, send: 2h}", ""},
		{"ProxySettingsPolicy", "timeout: {connect: 10sec}", "spec.timeout.connect"},
		{"ProxySettingsPolicy", "buffering: {buffers: {number: 8, size: 4kb}}", "spec.buffering.buffers.size"},
		{"UpstreamSettingsPolicy", "zoneSize: 512k\nkeepAlive: {connections: 16, time: 1h, timeout: 60s}", ""},
		{"UpstreamSettingsPolicy", "zoneSize: 1g0", "spec.zoneSize"},
		{"UpstreamSettingsPolicy", "keepAlive: {timeout: '-1'}", "spec.keepAlive.timeout"},
		{"UpstreamSettingsPolicy", "loadBalancingMethod: hash\nhashMethodKey: $remote_addr", ""},
		{"UpstreamSettingsPolicy", "loadBalancingMethod: hash consistent\nhashMethodKey: ${request_uri}", ""},
		{"UpstreamSettingsPolicy", "loadBalancingMethod: hash\nhashMethodKey: $_x", "spec.hashMethodKey"},
		{"UpstreamSettingsPolicy", "loadBalancingMethod: hash\nhashMethodKey: $Remote", "spec.hashMethodKey"},
		// Without a method NGF does not look at the key.
		{"UpstreamSettingsPolicy", "hashMethodKey: $_x", ""},
		{"RateLimitPolicy", "rateLimit: {local: {rules: [{rate: 10r/s, key: $binary_remote_addr, zoneSize: 10m}, {rate: 500r/m, key: 'fixed:$request_uri'}]}}", ""},
		{"RateLimitPolicy", "rateLimit: {local: {rules: [{rate: 10r/s, key: a}, {rate: 10r/h, key: a}]}}", "spec.rateLimit.local.rules"},
		{"RateLimitPolicy", "rateLimit: {local: {rules: [{rate: 10r/s, key: 'a b'}]}}", "spec.rateLimit.local.rules"},
		{"RateLimitPolicy", "rateLimit: {local: {rules: [{rate: 10r/s, key: a, zoneSize: 10mb}]}}", "spec.rateLimit.local.rules"},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanName: 'my \"span\"', spanAttributes: [{key: k, value: v}]}`, ""},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanName: "a\nb"}`, "spec.tracing.spanName"},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanName: 'cost $5'}`, "spec.tracing.spanName"},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanName: 'say "hi"'}`, "spec.tracing.spanName"},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanAttributes: [{key: k, value: "v\r"}]}`, "spec.tracing.spanAttributes"},
		{"ObservabilityPolicy", `tracing: {strategy: ratio, spanAttributes: [{key: 'k\', value: v}]}`, "spec.tracing.spanAttributes"},
	} {
		if got := violationsOf(t, ngf(c.kind), c.spec); got != c.want {
			t.Errorf("%s %s: rules not holding at %q, want %q", c.kind, c.spec, got, c.want)
		}
	}
}
