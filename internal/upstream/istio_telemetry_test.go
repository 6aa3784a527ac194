package upstream

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/attache-dev/attache/internal/modfixtures"
	"github.com/attache-dev/attache/pkg/engine"
	"github.com/attache-dev/attache/pkg/istiotelemetry"
	"github.com/attache-dev/attache/pkg/manifest"
	"github.com/attache-dev/attache/pkg/topology"
)

// telemetryExamples reads the Telemetry examples of istio.io/api's
// telemetry.proto documentation: each ```yaml block of its comments, by
// the paragraph before it.
func telemetryExamples(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(modfixtures.Dir(t, modfixtures.IstioAPI), "telemetry/v1alpha1/telemetry.proto"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var sentence string
	var block, para []string // the yaml block; the paragraph before it
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		text, ok := strings.CutPrefix(line, "//")
		if !ok {
			in, para = false, nil
			continue
		}
		text = strings.TrimPrefix(text, " ")
		switch {
		case strings.HasPrefix(text, "```yaml"):
			in, block = true, nil
		case in && strings.HasPrefix(text, "```"):
			in = false
			out[sentence] = strings.Join(block, "\n")
		case in:
			block = append(block, text)
		case strings.TrimSpace(text) == "":
			para = nil
		default:
			para = append(para, strings.TrimSpace(text))
			sentence = strings.Join(para, " ")
		}
	}
	return out
}

// TestIstioTelemetryDocExamples runs the examples of Istio's Telemetry
// documentation at Istio Gateways in namespace foo and in namespace other,
// and checks what the documentation and istiod say they do for a Gateway
// (a client-side workload): the mesh-wide access log is on, and off in
// foo; of two Telemetries without selector in foo istiod takes the older,
// so foo's metric dimensions apply only without the access log one, and
// then to every metric of foo's Gateway only; server-side metrics off
// leave a Gateway's on; a selector on labels attache does not see on
// Gateways is not Invalid.
func TestIstioTelemetryDocExamples(t *testing.T) {
	ex := telemetryExamples(t)
	pick := func(sentence string, minute int) string {
		t.Helper()
		for s, y := range ex {
			if strings.HasPrefix(s, sentence) {
				return strings.Replace(y, "metadata:\n", fmt.Sprintf("metadata:\n  creationTimestamp: \"2026-01-01T00:%02d:00Z\"\n", minute), 1)
			}
		}
		t.Fatalf("no example after %q in telemetry.proto (found: %q)", sentence, slices.Sorted(maps.Keys(ex)))
		return ""
	}
	crds := modfixtures.CRDs(t, modfixtures.Dir(t, modfixtures.IstioAPI), istioCRDs)
	compute := func(telemetries ...string) *engine.Result {
		t.Helper()
		docs := append([]string{
			`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}`,
			`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: foo}
spec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}]}`,
			`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: other}
spec: {gatewayClassName: istio, listeners: [{name: http, protocol: HTTP, port: 80}]}`,
		}, telemetries...)
		objs, probs := manifest.Decode(strings.NewReader(strings.Join(docs, "\n---\n")), t.Name())
		if len(probs) > 0 {
			t.Fatal(probs)
		}
		res := engine.Compute(append(slices.Clip(crds), objs...), engine.Options{})
		for _, p := range res.Problems {
			t.Errorf("engine: %s", p.Error())
		}
		return res
	}
	at := func(res *engine.Result, ns string) map[string]string {
		out := map[string]string{}
		for _, e := range res.Effective {
			if e.Kind.GroupKind.Kind != "Telemetry" || e.Target != (topology.Ref{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: ns, Name: "gw"}) {
				continue
			}
			for _, f := range e.Contexts[0].Fields {
				v, _ := json.Marshal(f.Value)
				out[f.Path] = string(v) + "@" + f.Attachment.Policy.Name
			}
		}
		return out
	}
	accepted := func(res *engine.Result, name string) string {
		for _, ps := range res.Policies {
			if ps.Policy.Ref.Name == name {
				for _, c := range ps.Conditions {
					if c.Type == engine.CondAccepted {
						return c.Status + "/" + c.Reason
					}
				}
			}
		}
		return "(none)"
	}
	meshLog := pick("Enable access logging for the entire mesh", 0)
	fooMetrics := pick("Add dimensions to all Prometheus metrics for the `foo` namespace", 2)

	res := compute(meshLog, pick("Disable access logging for the `foo` namespace", 1), fooMetrics,
		pick("Remove the `response_code` dimension on some Prometheus metrics", 3))
	if got := at(res, "other"); !reflect.DeepEqual(got, map[string]string{"accessLogging.envoy": "{}@mesh-default"}) {
		t.Errorf("other: %v, want the access log on by mesh-default", got)
	}
	if got := at(res, "foo"); !reflect.DeepEqual(got, map[string]string{"accessLogging.envoy.disabled": "true@namespace-no-log"}) {
		t.Errorf("foo: %v, want the access log off by namespace-no-log", got)
	}
	if got := accepted(res, "namespace-metrics"); got != "False/Conflicted" {
		t.Errorf("namespace-metrics beside the older namespace-no-log: Accepted=%s, want False/Conflicted", got)
	}
	if got := accepted(res, "remove-response-code"); got != "False/TargetNotFound" {
		t.Errorf("remove-response-code: Accepted=%s, want False/TargetNotFound", got)
	}

	res = compute(meshLog, fooMetrics)
	foo := at(res, "foo")
	for _, m := range istiotelemetry.AllMetrics {
		for _, tag := range []string{"request_method", "request_host"} {
			p := "metrics.prometheus.overrides." + m + ".tagOverrides." + tag + ".value"
			if got := foo[p]; !strings.HasSuffix(got, "@namespace-metrics") {
				t.Errorf("foo: %s = %q, want namespace-metrics's", p, got)
			}
		}
	}
	if foo["accessLogging.envoy"] != "{}@mesh-default" || len(foo) != 1+2*len(istiotelemetry.AllMetrics) {
		t.Errorf("foo: %v, want the access log and two tags of every metric", foo)
	}
	if got := at(res, "other"); len(got) != 1 {
		t.Errorf("other: %v, want the access log only", got)
	}

	res = compute(pick("Disable server-side metrics for Prometheus for an entire mesh", 0))
	for _, ns := range []string{"foo", "other"} {
		if got := at(res, ns); !reflect.DeepEqual(got, map[string]string{"metrics.prometheus": "{}@mesh-default"}) {
			t.Errorf("server-side metrics off, %s: %v, want prometheus on", ns, got)
		}
	}
}
