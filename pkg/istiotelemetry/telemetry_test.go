package istiotelemetry

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/merge"
)

// layers builds layers from YAML specs; layer i has source i.
func layers(t testing.TB, specs ...string) []Layer {
	t.Helper()
	out := make([]Layer, len(specs))
	for i, s := range specs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		out[i] = Layer{Spec: m, Src: merge.Src(i)}
	}
	return out
}

// leaves renders a result's leaves as path=value@src, sorted.
func leaves(r merge.Result) []string {
	var out []string
	if r.Tree == nil {
		return out
	}
	for _, l := range r.Tree.Leaves() {
		v, _ := json.Marshal(l.Value)
		out = append(out, fmt.Sprintf("%s=%s@%d", l.Path, v, l.Src))
	}
	return out
}

// losses renders a result's losses as loser:path>winner.
func losses(r merge.Result) []string {
	var out []string
	for _, l := range r.Losses {
		out = append(out, fmt.Sprintf("%d:%s>%d", l.Loser, l.Path, l.Winners[0]))
	}
	return out
}

// TestResolve follows istiod's merges (pilot/pkg/model/telemetry.go) for a
// Gateway's proxy (client side), layer 0 the root namespace's Telemetry,
// then the namespace's, then those selecting the workload.
func TestResolve(t *testing.T) {
	for _, c := range []struct {
		name   string
		specs  []string
		leaves []string
		losses []string
	}{
		{
			name:   "a workload Telemetry turns off the mesh's access log",
			specs:  []string{"{accessLogging: [{providers: [{name: envoy}]}]}", "{}", "{accessLogging: [{providers: [{name: envoy}], disabled: true}]}"},
			leaves: []string{"accessLogging.envoy.disabled=true@2"},
			losses: []string{"0:accessLogging.envoy>2"},
		},
		{
			name: "naming providers narrows those above to them",
			specs: []string{
				"{accessLogging: [{providers: [{name: envoy}, {name: otel}]}]}",
				`{accessLogging: [{providers: [{name: otel}], filter: {expression: "response.code >= 400"}}]}`,
			},
			leaves: []string{`accessLogging.otel.filter.expression="response.code \u003e= 400"@1`},
			losses: []string{"0:accessLogging.envoy>1", "0:accessLogging.otel>1"},
		},
		{
			name:   "an entry naming no provider takes the previous entry's",
			specs:  []string{"{accessLogging: [{providers: [{name: envoy}]}]}", "{accessLogging: [{disabled: true}]}"},
			leaves: []string{"accessLogging.envoy.disabled=true@1"},
			losses: []string{"0:accessLogging.envoy>1"},
		},
		{
			name: "the filter is the last naming entry's, kept on by an inheriting one",
			specs: []string{
				`{accessLogging: [{providers: [{name: envoy}], filter: {expression: "a"}}]}`,
				`{accessLogging: [{filter: {expression: "ignored: names no provider"}}]}`,
			},
			leaves: []string{`accessLogging.envoy.filter.expression="a"@0`},
		},
		{
			name:   "server-side entries do not reach a Gateway",
			specs:  []string{"{accessLogging: [{providers: [{name: envoy}]}]}", "{accessLogging: [{match: {mode: SERVER}, providers: [{name: envoy}], disabled: true}]}"},
			leaves: []string{"accessLogging.envoy={}@0"},
		},
		{
			// No client entry names a provider: none is in scope (the
			// mesh has no default), and the server entry loses nothing.
			name:  "a server entry naming a provider no client entry names",
			specs: []string{"{accessLogging: [{match: {mode: SERVER}, providers: [{name: envoy}]}, {disabled: true}]}"},
		},
		{
			// otel reaches the second Telemetry's disabling entry from its
			// own server-side entry: in effect nowhere, and not beaten by
			// the first Telemetry.
			name:   "a provider inherited from a server-side entry",
			specs:  []string{"{accessLogging: [{providers: [{name: envoy}]}]}", "{accessLogging: [{match: {mode: SERVER}, providers: [{name: otel}]}, {disabled: true}]}"},
			leaves: []string{"accessLogging.envoy={}@0"},
		},
		{
			name:   "numeric modes: 2 is SERVER",
			specs:  []string{"{tracing: [{providers: [{name: zipkin}]}, {match: {mode: 2}, randomSamplingPercentage: 5}]}"},
			leaves: []string{`tracing.provider="zipkin"@0`},
		},
		{
			name: "tracing fields replace one by one, custom tags whole",
			specs: []string{
				"{tracing: [{providers: [{name: zipkin}, {name: otel}], randomSamplingPercentage: 1}]}",
				"{tracing: [{randomSamplingPercentage: 50, customTags: {team: {literal: {value: a}}, env: {literal: {value: b}}}}]}",
				"{tracing: [{customTags: {team: {literal: {value: c}}}}]}",
			},
			leaves: []string{
				`tracing.customTags.team.literal.value="c"@2`, `tracing.provider="zipkin"@0`, "tracing.randomSamplingPercentage=50@1",
			},
			losses: []string{"0:tracing.randomSamplingPercentage>1", "1:tracing.customTags>2"},
		},
		{
			name:   "metrics: the mesh's default provider (prometheus) when none is named",
			specs:  []string{"{metrics: [{overrides: [{match: {metric: REQUEST_COUNT}, tagOverrides: {request_host: {operation: REMOVE}}}]}]}"},
			leaves: []string{`metrics.prometheus.overrides.REQUEST_COUNT.tagOverrides.request_host.operation="REMOVE"@0`},
		},
		{
			name: "metrics: turned off in the root namespace, on again below",
			specs: []string{
				"{metrics: [{providers: [{name: prometheus}], overrides: [{disabled: true}]}]}",
				"{metrics: [{overrides: [{match: {metric: REQUEST_COUNT, mode: CLIENT}, disabled: false}]}]}",
			},
			leaves: []string{"metrics.prometheus.overrides.REQUEST_COUNT.disabled=false@1"},
			losses: []string{"0:metrics.prometheus.disabled>1"},
		},
		{
			name: "metrics: turned off below, the overrides above go",
			specs: []string{
				"{metrics: [{reportingInterval: 30s, overrides: [{match: {customMetric: my_metric}, tagOverrides: {a: {value: x}}}]}]}",
				"{metrics: [{overrides: [{match: {metric: ALL_METRICS, mode: CLIENT_AND_SERVER}, disabled: true}]}]}",
			},
			leaves: []string{"metrics.prometheus.disabled=true@1"},
			losses: []string{"0:metrics.prometheus.overrides.my_metric.tagOverrides.a>1", "0:metrics.prometheus.reportingInterval>1"},
		},
		{
			name: "metrics: tags merge tag by tag, over every metric without a match",
			specs: []string{
				"{metrics: [{overrides: [{tagOverrides: {a: {value: x}, b: {value: w}}}]}]}",
				"{metrics: [{overrides: [{match: {metric: 2}, tagOverrides: {a: {value: z}}}]}]}",
			},
			losses: []string{"0:metrics.prometheus.overrides.REQUEST_DURATION.tagOverrides.a>1"},
		},
		{
			name: "metrics: a provider named below replaces the default",
			specs: []string{
				"{metrics: [{overrides: [{match: {metric: REQUEST_COUNT}, disabled: true}]}]}",
				"{metrics: [{providers: [{name: stackdriver}]}]}",
			},
			leaves: []string{"metrics.stackdriver={}@1"},
			losses: []string{"0:metrics.prometheus>1"},
		},
		{
			name:  "malformed entries are skipped",
			specs: []string{`{accessLogging: "x", tracing: [1, {providers: "bad", customTags: null}], metrics: [{overrides: [null, {match: 3}]}]}`},
			// The metrics entry still sets up the default provider; the
			// override matching every metric sets nothing.
			leaves: []string{"metrics.prometheus={}@0"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Resolve(layers(t, c.specs...), DefaultMesh)
			got := leaves(r)
			if c.name == "metrics: tags merge tag by tag, over every metric without a match" {
				// Ten metrics × two tags: check the one that changed hands
				// and the count.
				want := []string{
					`metrics.prometheus.overrides.REQUEST_DURATION.tagOverrides.a.value="z"@1`,
					`metrics.prometheus.overrides.REQUEST_DURATION.tagOverrides.b.value="w"@0`,
					`metrics.prometheus.overrides.REQUEST_COUNT.tagOverrides.a.value="x"@0`,
				}
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("leaves lack %s: %q", w, got)
					}
				}
				if len(got) != 2*len(AllMetrics) {
					t.Errorf("%d leaves, want %d", len(got), 2*len(AllMetrics))
				}
			} else if !reflect.DeepEqual(got, c.leaves) && (len(got) > 0 || len(c.leaves) > 0) {
				t.Errorf("leaves:\n got %q\nwant %q", got, c.leaves)
			}
			if gl := losses(r); !reflect.DeepEqual(gl, c.losses) && (len(gl) > 0 || len(c.losses) > 0) {
				t.Errorf("losses:\n got %q\nwant %q", gl, c.losses)
			}
		})
	}
}

// TestResolveEmpty: no section set, no value and no loss; a mesh with
// default access logging providers applies them to entries naming none.
func TestResolveEmpty(t *testing.T) {
	if r := Resolve(layers(t, "{}", "{selector: {matchLabels: {app: x}}}"), DefaultMesh); r.Tree != nil || len(r.Losses) > 0 {
		t.Fatalf("got %v %v", leaves(r), losses(r))
	}
	r := Resolve(layers(t, `{accessLogging: [{filter: {expression: "x"}}]}`), Mesh{AccessLogging: []string{"envoy"}})
	if got, want := leaves(r), []string{"accessLogging.envoy={}@0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("leaves = %q, want %q", got, want)
	}
}

// FuzzResolve: any JSON specs resolve without panicking, and every value
// is credited to one of the layers.
func FuzzResolve(f *testing.F) {
	f.Add(`{"accessLogging":[{"providers":[{"name":"envoy"}],"disabled":true}]}`, `{"metrics":[{"overrides":[{"match":{"metric":"ALL_METRICS"},"disabled":true}]}]}`)
	f.Add(`{"tracing":[{"match":{"mode":1},"customTags":{}}]}`, `{"metrics":[{"providers":[{"name":"a"}],"overrides":[{"match":{"metric":7.5}}]}]}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var ls []Layer
		for i, s := range []string{a, b} {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) != nil {
				return
			}
			ls = append(ls, Layer{Spec: m, Src: merge.Src(i)})
		}
		r := Resolve(ls, DefaultMesh)
		if r.Tree != nil {
			for _, l := range r.Tree.Leaves() {
				if l.Src != 0 && l.Src != 1 {
					t.Fatalf("leaf %s credited to %d", l.Path, l.Src)
				}
			}
		}
		for _, l := range r.Losses {
			if l.Loser == l.Winners[0] || l.Winners[0] < 0 || l.Winners[0] > 1 {
				t.Fatalf("%d loses %s to %d", l.Loser, l.Path, l.Winners[0])
			}
		}
	})
}

// TestResolveIntegerEnum: a metric enum by number, as decoded from YAML
// (int64), names that metric, not every one.
func TestResolveIntegerEnum(t *testing.T) {
	l := Layer{Spec: map[string]any{"metrics": []any{map[string]any{"overrides": []any{
		map[string]any{"match": map[string]any{"metric": int64(1)}, "disabled": true},
	}}}}}
	got := leaves(Resolve([]Layer{l}, DefaultMesh))
	if want := []string{"metrics.prometheus.overrides.REQUEST_COUNT.disabled=true@0"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("leaves = %q, want %q", got, want)
	}
}

// TestResolveServer: at a waypoint istiod builds the listeners as a
// sidecar's inbound (ListenerClassSidecarInbound in
// pilot/pkg/networking/core/listener_waypoint.go), so the server-side
// entries count and the client-side ones do not: access logging
// (mergeLogs with mode SERVER), tracing (the ServerSpec) and metrics (the
// server metrics of mergeMetrics).
func TestResolveServer(t *testing.T) {
	for _, c := range []struct {
		name   string
		specs  []string
		leaves []string
		losses []string
	}{
		{
			name:   "a server-side entry turns off the access log, a client-side one does not",
			specs:  []string{"{accessLogging: [{providers: [{name: envoy}]}]}", "{accessLogging: [{match: {mode: CLIENT}, disabled: true}, {match: {mode: SERVER}, providers: [{name: envoy}], disabled: true}]}"},
			leaves: []string{"accessLogging.envoy.disabled=true@1"},
			losses: []string{"0:accessLogging.envoy>1"},
		},
		{
			name:   "a client-side entry naming a provider puts none in scope",
			specs:  []string{"{accessLogging: [{match: {mode: CLIENT}, providers: [{name: envoy}]}]}"},
			leaves: nil,
		},
		{
			name:   "tracing: client entries are skipped",
			specs:  []string{"{tracing: [{providers: [{name: zipkin}], randomSamplingPercentage: 1}, {match: {mode: CLIENT}, randomSamplingPercentage: 9}, {match: {mode: 2}, disableSpanReporting: true}]}"},
			leaves: []string{`tracing.disableSpanReporting=true@0`, `tracing.provider="zipkin"@0`, "tracing.randomSamplingPercentage=1@0"},
		},
		{
			name: "metrics: every client metric off leaves the server's on",
			specs: []string{
				"{metrics: [{overrides: [{match: {mode: CLIENT}, disabled: true}, {match: {metric: REQUEST_COUNT, mode: SERVER}, tagOverrides: {a: {value: x}}}]}]}",
			},
			leaves: []string{`metrics.prometheus.overrides.REQUEST_COUNT.tagOverrides.a.value="x"@0`},
		},
		{
			name: "metrics: every server metric off",
			specs: []string{
				"{metrics: [{overrides: [{match: {metric: REQUEST_COUNT}, tagOverrides: {a: {value: x}}}]}]}",
				"{metrics: [{overrides: [{match: {mode: SERVER}, disabled: true}]}]}",
			},
			leaves: []string{"metrics.prometheus.disabled=true@1"},
			losses: []string{"0:metrics.prometheus.overrides.REQUEST_COUNT.tagOverrides.a>1"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ResolveFor(layers(t, c.specs...), DefaultMesh, Server)
			if got := leaves(r); !reflect.DeepEqual(got, c.leaves) && (len(got) > 0 || len(c.leaves) > 0) {
				t.Errorf("leaves:\n got %q\nwant %q", got, c.leaves)
			}
			if gl := losses(r); !reflect.DeepEqual(gl, c.losses) && (len(gl) > 0 || len(c.losses) > 0) {
				t.Errorf("losses:\n got %q\nwant %q", gl, c.losses)
			}
		})
	}
	// The same layers on the client side: what the Gateway would get.
	r := Resolve(layers(t, "{accessLogging: [{match: {mode: CLIENT}, providers: [{name: envoy}]}]}"), DefaultMesh)
	if got, want := leaves(r), []string{"accessLogging.envoy={}@0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("client side: leaves = %q, want %q", got, want)
	}
}
