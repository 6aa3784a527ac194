// Package istiotelemetry computes what Istio's Telemetry policies configure
// on a Gateway's proxy, as istiod merges them (istio/istio
// pilot/pkg/model/telemetry.go: applicableTelemetries, mergeMetrics,
// mergeLogs, Tracing), with the Telemetry that set each value and the
// values that others replaced.
//
// The Telemetries come in istiod's order (the root namespace's, the
// namespace's, then those selecting the workload); later ones override
// earlier ones, section by section and provider by provider, by rules
// that are not RFC 7386: a Telemetry naming providers narrows the
// providers of everything above it to its own; an entry naming none
// applies to the providers of the entry before it; tracing fields and
// custom tags replace whole. A Gateway is a client-side workload: only
// entries matching mode CLIENT (or both modes) count. A waypoint is a
// server-side one (istiod builds its listeners as a sidecar's inbound):
// ResolveFor with Server reads the entries matching mode SERVER instead.
//
// The result is in a resolved shape, not the Telemetry's own:
//
//	accessLogging:
//	  <provider>: {} | {disabled: true} | {filter: {expression: ...}}
//	metrics:
//	  <provider>:
//	    reportingInterval: <duration>
//	    disabled: true          # every metric off for the side resolved
//	    overrides:
//	      <METRIC>: {disabled: <bool>, tagOverrides: {<tag>: {operation, value}}}
//	tracing:
//	  provider: <name>          # the first provider of the last entry naming any;
//	                            # none: istiod turns tracing off
//	  randomSamplingPercentage, disableSpanReporting, customTags,
//	  useRequestIdForTraceSampling, enableIstioTags, disableContextPropagation
//
// Malformed entries and values of the wrong type are skipped: the
// Telemetry's schema is the API server's to enforce, and a resolution
// never fails.
package istiotelemetry

import (
	"slices"
	"sort"
	"strings"

	"github.com/attache-dev/attache/pkg/merge"
)

// Layer is one Telemetry that applies to the workload: its spec proper and
// the source its values are credited to.
type Layer struct {
	Spec map[string]any
	Src  merge.Src
}

// Mesh is what the merges read of the mesh config: its default providers
// (meshConfig.defaultProviders), which apply where no Telemetry names one.
type Mesh struct {
	Metrics, Tracing, AccessLogging []string
}

// DefaultMesh is the mesh config of Istio's default installation (the
// istiod chart): metrics by prometheus, no default tracing or access
// logging provider.
var DefaultMesh = Mesh{Metrics: []string{"prometheus"}}

// AllMetrics are Istio's standard metrics, which ALL_METRICS (or an
// override without a metric) stands for, sorted (istio.io/api
// telemetry/v1alpha1 MetricSelector.IstioMetric).
var AllMetrics = []string{
	"GRPC_REQUEST_MESSAGES", "GRPC_RESPONSE_MESSAGES", "REQUEST_COUNT", "REQUEST_DURATION", "REQUEST_SIZE",
	"RESPONSE_SIZE", "TCP_CLOSED_CONNECTIONS", "TCP_OPENED_CONNECTIONS", "TCP_RECEIVED_BYTES", "TCP_SENT_BYTES",
}

// The tracing fields an entry may set; each replaces the value before it
// whole (custom tags too: istiod's tracing merge is shallow).
var tracingFields = []string{
	"randomSamplingPercentage", "disableSpanReporting", "customTags",
	"useRequestIdForTraceSampling", "enableIstioTags", "disableContextPropagation",
}

// Side is the side of a workload's traffic whose Telemetry entries count
// (their match.mode): istiod reads the client side for a Gateway's
// listeners (ListenerClassGateway) and the server side for a waypoint's
// (ListenerClassSidecarInbound).
type Side int

// Sides.
const (
	// Client: entries of mode CLIENT or CLIENT_AND_SERVER (or none).
	Client Side = iota
	// Server: entries of mode SERVER or CLIENT_AND_SERVER (or none).
	Server
)

// Resolve merges the layers (in istiod's order) for a Gateway's proxy:
// ResolveFor on the client side.
func Resolve(layers []Layer, mesh Mesh) merge.Result {
	return ResolveFor(layers, mesh, Client)
}

// ResolveFor merges the layers (in istiod's order) for the given side of
// a workload's traffic: Client for a Gateway, Server for a waypoint.
func ResolveFor(layers []Layer, mesh Mesh, side Side) merge.Result {
	r := &resolver{cells: map[string]*cell{}, side: side}
	r.tracing(layers)
	r.accessLogging(layers, mesh)
	r.metrics(layers, mesh)
	return r.result()
}

// cell is one resolved value and who set it.
type cell struct {
	keys []string
	v    any
	src  merge.Src
	// presence marks a provider set up without any value of its own: it
	// gives way silently to values under it. before are the sources of
	// the presences it replaced: they lose it if it stays.
	presence bool
	before   []merge.Src
}

type resolver struct {
	cells  map[string]*cell
	losses []merge.Loss
	side   Side
}

func pathOf(keys []string) string {
	p := ""
	for _, k := range keys {
		p = merge.JoinPath(p, k)
	}
	return p
}

func (r *resolver) lose(loser merge.Src, path string, winner merge.Src) {
	// A negative winner is the mesh config, no layer: nothing to credit.
	if loser != winner && winner >= 0 {
		r.losses = append(r.losses, merge.Loss{Loser: loser, Path: path, Winners: []merge.Src{winner}})
	}
}

// set puts v at keys for src; what was there, at keys or below, is lost
// to src.
func (r *resolver) set(keys []string, v any, src merge.Src) {
	r.replace(keys, []*cell{{keys: keys, v: v, src: src}}, src)
}

// replace makes cs the cells at prefix and below it. The cells there
// before are lost to winner, or to the new cell at their path; a cell cs
// holds as it was (same path, same source) is not lost.
func (r *resolver) replace(prefix []string, cs []*cell, winner merge.Src) {
	by := map[string]merge.Src{}
	for _, c := range cs {
		by[pathOf(c.keys)] = c.src
	}
	pp := pathOf(prefix)
	for p, c := range r.cells {
		if !within(p, pp) {
			continue
		}
		w, ok := by[p]
		if !ok {
			w = winner
		}
		r.lose(c.src, p, w)
		delete(r.cells, p)
	}
	for _, c := range cs {
		r.cells[pathOf(c.keys)] = c
	}
}

// clear removes the cells at path or below it, as lost to winner.
func (r *resolver) clear(path []string, winner merge.Src) { r.replace(path, nil, winner) }

// within reports whether path p is path or below it.
func within(p, path string) bool {
	return p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[")
}

// under reports whether some cell other than a presence lies below path.
func (r *resolver) under(path string) bool {
	for p, c := range r.cells {
		if !c.presence && p != path && within(p, path) {
			return true
		}
	}
	return false
}

func (r *resolver) result() merge.Result {
	// A provider's presence gives way to its values.
	for p, c := range r.cells {
		switch {
		case c.presence && r.under(p):
			delete(r.cells, p)
		case c.presence:
			for _, s := range c.before {
				r.lose(s, p, c.src)
			}
		}
	}
	if len(r.cells) == 0 {
		return merge.Result{Losses: sortLosses(r.losses)}
	}
	paths := make([]string, 0, len(r.cells))
	for p := range r.cells {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fields := make([]merge.Field, len(paths))
	for i, p := range paths {
		c := r.cells[p]
		fields[i] = merge.Field{Keys: c.keys, Value: c.v, Src: c.src}
	}
	return merge.Result{Tree: merge.Assemble(fields), Losses: sortLosses(r.losses)}
}

func sortLosses(ls []merge.Loss) []merge.Loss {
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].Loser != ls[j].Loser {
			return ls[i].Loser < ls[j].Loser
		}
		return ls[i].Path < ls[j].Path
	})
	return ls
}

// entry is one item of a Telemetry's list section, with its Telemetry.
type entry struct {
	m   map[string]any
	src merge.Src
}

// entries returns the map items of section in a layer; others are skipped.
func entries(l Layer, section string) []entry {
	list, _ := l.Spec[section].([]any)
	var out []entry
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			out = append(out, entry{m, l.Src})
		}
	}
	return out
}

// providerNames are the names an entry's providers list, in order.
func providerNames(m map[string]any) []string {
	list, _ := m["providers"].([]any)
	var out []string
	for _, it := range list {
		if p, ok := it.(map[string]any); ok {
			if n, ok := p["name"].(string); ok {
				out = append(out, n)
			}
		}
	}
	return out
}

// covered returns the providers an entry applies to: those it names, or
// else those of the entry before it, which parent holds and is updated.
func covered(m map[string]any, parent *[]string) []string {
	if names := providerNames(m); len(names) > 0 {
		*parent = names
	}
	return *parent
}

// Workload modes, by their names and their numbers (protojson takes both).
const (
	modeBoth   = "CLIENT_AND_SERVER"
	modeClient = "CLIENT"
	modeServer = "SERVER"
)

func modeOf(sel any) string {
	m, _ := sel.(map[string]any)
	switch v := m["mode"].(type) {
	case string:
		return v
	case float64:
		return [...]string{modeBoth, modeClient, modeServer, ""}[min(max(int(v), 0), 3)]
	case int64:
		return [...]string{modeBoth, modeClient, modeServer, ""}[min(max(int(v), 0), 3)]
	}
	return modeBoth
}

// covers reports whether a selector's mode covers the side resolved.
func (r *resolver) covers(sel any) bool {
	mode := modeOf(sel)
	if r.side == Server {
		return mode == modeBoth || mode == modeServer
	}
	return mode == modeBoth || mode == modeClient
}

func isTrue(v any) bool { b, _ := v.(bool); return b }

// tracing: each entry of the side, in order, sets the fields it has; the
// provider is the first one of the last entry naming any (istiod supports
// one per mode).
func (r *resolver) tracing(layers []Layer) {
	for _, l := range layers {
		for _, e := range entries(l, "tracing") {
			if !r.covers(e.m["match"]) {
				continue
			}
			if names := providerNames(e.m); len(names) > 0 {
				r.set([]string{"tracing", "provider"}, names[0], e.src)
			}
			for _, f := range tracingFields {
				if v, ok := e.m[f]; ok && v != nil {
					r.set([]string{"tracing", f}, v, e.src)
				}
			}
		}
	}
}

// accessLogging is mergeLogs for the side resolved. The providers in scope
// are those the last Telemetry naming any names (else the mesh's
// defaults); an entry naming none applies to the providers of the entry
// before it. Per provider, the last entry covering it decides: disabled,
// or enabled with the filter of the last entry naming it.
func (r *resolver) accessLogging(layers []Layer, mesh Mesh) {
	type group struct {
		src     merge.Src
		entries []entry
	}
	var groups []group
	for _, l := range layers {
		if es := entries(l, "accessLogging"); len(es) > 0 {
			groups = append(groups, group{l.Src, es})
		}
	}
	if len(groups) == 0 {
		return
	}
	type filter struct {
		v   any
		src merge.Src
	}
	inScope, scopeSrc, scopeAt := mesh.AccessLogging, merge.Src(-1), -1
	filters := map[string]filter{}
	for gi, g := range groups {
		var names []string
		for _, e := range g.entries {
			if !r.covers(e.m["match"]) {
				continue
			}
			for _, p := range providerNames(e.m) {
				if !slices.Contains(names, p) {
					names = append(names, p)
				}
				filters[p] = filter{e.m["filter"], e.src}
			}
		}
		if len(names) > 0 {
			inScope, scopeSrc, scopeAt = names, g.src, gi
		}
	}
	parent := mesh.AccessLogging
	for gi, g := range groups {
		for _, e := range g.entries {
			for _, p := range covered(e.m, &parent) {
				keys := []string{"accessLogging", p}
				switch {
				case !r.covers(e.m["match"]):
					// No effect on this side.
				case !slices.Contains(inScope, p):
					if scopeAt > gi {
						// A Telemetry below named other providers. (One
						// above did not: the provider came from an entry
						// of the other side, and is in effect nowhere.)
						r.lose(e.src, pathOf(keys), scopeSrc)
					}
				case isTrue(e.m["disabled"]):
					r.replace(keys, []*cell{{keys: append(slices.Clip(keys), "disabled"), v: true, src: e.src}}, e.src)
				default:
					// Enabled, with the filter of the last entry naming
					// the provider (kept on by this one).
					c := &cell{keys: keys, v: map[string]any{}, src: e.src}
					if f, ok := filters[p].v.(map[string]any); ok && len(f) > 0 {
						c = &cell{keys: append(slices.Clip(keys), "filter"), v: f, src: filters[p].src}
					}
					if c.src != e.src && slices.Contains(providerNames(e.m), p) {
						// It named the provider, with its own filter or
						// none; a later entry's filter applies.
						r.lose(e.src, pathOf(keys), c.src)
					}
					r.replace(keys, []*cell{c}, e.src)
				}
			}
		}
	}
}

// metrics is mergeMetrics for the side resolved: providers in scope as
// for access logging; per provider, each override updates the metrics it
// matches (its disabled flag, its tags one by one), and one disabling
// every metric turns the provider's metrics of the side off until a later
// override of that side turns them on again.
func (r *resolver) metrics(layers []Layer, mesh Mesh) {
	var all []entry
	for _, l := range layers {
		all = append(all, entries(l, "metrics")...)
	}
	if len(all) == 0 {
		return
	}
	inScope, scopeSrc := mesh.Metrics, merge.Src(-1)
	for _, e := range all {
		if names := providerNames(e.m); len(names) > 0 {
			inScope, scopeSrc = names, e.src
		}
	}
	parent := mesh.Metrics
	for _, e := range all {
		for _, p := range covered(e.m, &parent) {
			base := []string{"metrics", p}
			if !slices.Contains(inScope, p) {
				r.lose(e.src, pathOf(base), scopeSrc)
				continue
			}
			if c, ok := r.cells[pathOf(base)]; !ok || c.presence {
				nc := &cell{keys: base, v: map[string]any{}, src: e.src, presence: true}
				if ok {
					nc.before = append(c.before, c.src)
				}
				r.cells[pathOf(base)] = nc
			}
			if v, ok := e.m["reportingInterval"]; ok && v != nil {
				r.set(append(slices.Clip(base), "reportingInterval"), v, e.src)
			}
			overrides, _ := e.m["overrides"].([]any)
			for _, it := range overrides {
				o, ok := it.(map[string]any)
				if !ok || !r.covers(o["match"]) {
					continue
				}
				metricNames, all := matches(o["match"])
				disabled, hasDisabled := o["disabled"].(bool)
				if all && disabled {
					r.set(append(slices.Clip(base), "disabled"), true, e.src)
					continue
				}
				r.clear(append(slices.Clip(base), "disabled"), e.src)
				tags, _ := o["tagOverrides"].(map[string]any)
				for _, m := range metricNames {
					mk := append(slices.Clip(base), "overrides", m)
					if hasDisabled {
						r.set(append(slices.Clip(mk), "disabled"), disabled, e.src)
					}
					for k, v := range tags {
						r.set(append(slices.Clip(mk), "tagOverrides", k), v, e.src)
					}
				}
			}
		}
	}
	// The side's metrics turned off: istiod builds no stats filter for
	// the provider, so neither its overrides nor its interval apply.
	for _, c := range r.cellsUnder("metrics") {
		if len(c.keys) == 3 && c.keys[2] == "disabled" {
			r.clear([]string{"metrics", c.keys[1], "overrides"}, c.src)
			r.clear([]string{"metrics", c.keys[1], "reportingInterval"}, c.src)
		}
	}
}

// cellsUnder returns the cells whose first key is top.
func (r *resolver) cellsUnder(top string) []*cell {
	var out []*cell
	for _, c := range r.cells {
		if len(c.keys) > 0 && c.keys[0] == top {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return pathOf(out[i].keys) < pathOf(out[j].keys) })
	return out
}

// matches returns the metrics a selector matches and whether it is every
// one of them (no metric named, or ALL_METRICS).
func matches(sel any) ([]string, bool) {
	m, _ := sel.(map[string]any)
	if c, ok := m["customMetric"].(string); ok {
		return []string{c}, false
	}
	switch v := m["metric"].(type) {
	case string:
		if v != "ALL_METRICS" {
			return []string{v}, false
		}
	case float64:
		if i := int(v); i >= 1 && i <= len(istioMetricByNumber) && float64(i) == v {
			return []string{istioMetricByNumber[i-1]}, false
		}
	case int64:
		if v >= 1 && v <= int64(len(istioMetricByNumber)) {
			return []string{istioMetricByNumber[v-1]}, false
		}
	}
	return AllMetrics, true
}

// istioMetricByNumber are the IstioMetric enum names from 1.
var istioMetricByNumber = []string{
	"REQUEST_COUNT", "REQUEST_DURATION", "REQUEST_SIZE", "RESPONSE_SIZE", "TCP_OPENED_CONNECTIONS",
	"TCP_CLOSED_CONNECTIONS", "TCP_SENT_BYTES", "TCP_RECEIVED_BYTES", "GRPC_REQUEST_MESSAGES", "GRPC_RESPONSE_MESSAGES",
}
