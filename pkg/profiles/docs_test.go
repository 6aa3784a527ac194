package profiles

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// summaryEntries reads the YAML block of docs/profiles.md's "Machine-readable
// summary".
func summaryEntries(t *testing.T) []map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../docs/profiles.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Machine-readable summary\n")
	if !ok {
		t.Fatal(`docs/profiles.md has no "## Machine-readable summary" section`)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "\n```")
	if !ok || !ok2 {
		t.Fatal("the Machine-readable summary has no ```yaml block")
	}
	var doc struct {
		Profiles []map[string]any `json:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatalf("the Machine-readable summary does not parse: %v", err)
	}
	return doc.Profiles
}

// implementationSlugs are the YAML's names of the implementations.
var implementationSlugs = map[string]string{
	GatewayAPI: "gateway-api", EnvoyGateway: "envoy-gateway", Istio: "istio", NGF: "nginx-gateway-fabric",
	Kuadrant: "kuadrant", Gloo: "gloo-gateway", KGateway: "kgateway",
}

// choice renders a two-valued setting as its annotation word.
func choice(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

func stringers[T fmt.Stringer](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

// yamlSettings are, per key of the summary's entries that states a setting,
// the setting's value in the kind the profile makes, as the YAML writes it
// (a string, a bool, an int or a list of strings). A key of the YAML absent
// here is prose (crd, versions, scope, order, notes, approx,
// notEstablished, crossNamespaceTargets, ruleNaming) or a fact of the CRD's
// schema rather than of the kind (targetSelectors); targetKinds,
// effectiveTargetKinds and hierarchy are compared by sectionsMatch.
var yamlSettings = map[string]func(p *policy.Profile, k *policy.Kind) any{
	"implementation": func(p *policy.Profile, _ *policy.Kind) any { return implementationSlugs[p.Implementation] },
	"crdPolicyLabel": func(p *policy.Profile, _ *policy.Kind) any { return p.ShippedLabel },
	"class":          func(_ *policy.Profile, k *policy.Kind) any { return string(k.Class) },
	"strategies": func(_ *policy.Profile, k *policy.Kind) any {
		out := make([]string, len(k.Strategies))
		for i, s := range k.Strategies {
			out[i] = string(s)
		}
		return out
	},
	"sameLevel":   func(_ *policy.Profile, k *policy.Kind) any { return string(k.SameLevel) },
	"composition": func(_ *policy.Profile, k *policy.Kind) any { return string(k.Composition) },
	// "none" says the implementation writes no status.ancestors, which no
	// setting holds: attache's own status then names the targets (the
	// default).
	"ancestor": func(_ *policy.Profile, k *policy.Kind) any {
		if k.Ancestor == policy.AncestorTarget {
			return oneOf{"target", "none"}
		}
		return string(k.Ancestor)
	},
	"namedRules": func(_ *policy.Profile, k *policy.Kind) any { return k.NamedRules },
	"oneofs":     func(_ *policy.Profile, k *policy.Kind) any { return stringers(k.Oneofs) },
	// The setting is a Direct kind's; of an Inherited kind the YAML says
	// how its sections rank, which its hierarchy (effective sections
	// below their objects) makes so: not compared.
	"directSections": func(_ *policy.Profile, k *policy.Kind) any {
		if k.Class != policy.Direct {
			return nil
		}
		return k.DirectSections
	},
	"directSectionsUnrankedBy": func(_ *policy.Profile, k *policy.Kind) any { return k.SectionsUnrankedBy },
	"mergeTypeField":           func(_ *policy.Profile, k *policy.Kind) any { return k.MergeTypeField },
	"controllers":              func(_ *policy.Profile, k *policy.Kind) any { return k.Controllers },
	"missingTargets": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.MissingTargetsUnlisted, "problem", "entry")
	},
	"invalidPolicies": func(_ *policy.Profile, k *policy.Kind) any {
		if k.RefsAfterConflicts {
			return "not-applied references=after-conflicts"
		}
		return choice(k.InvalidNotApplied, "not-applied", "in-place")
	},
	"backendRefs": func(_ *policy.Profile, k *policy.Kind) any {
		out := make([]string, len(k.BackendRefs))
		for i, p := range k.BackendRefs {
			out[i] = string(p)
		}
		return out
	},
	"backendRefAncestors": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.BackendRefAncestorGateways, "gateways", "policy")
	},
	"unresolvedBackendRefs": func(_ *policy.Profile, k *policy.Kind) any {
		if !k.InvalidOnUnresolvedBackendRefs {
			return "ignore"
		}
		return strings.TrimSpace("invalid " + k.BackendRefRules.String())
	},
	"programmed": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.ProgrammedWhenAccepted, "when-accepted", "gep")
	},
	"routeParents": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.RouteParentRefs, "parent-refs", "admitted")
	},
	"reach": func(_ *policy.Profile, k *policy.Kind) any { return choice(k.ReachThroughGateway, "gateway", "any") },
	"pathReadiness": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.ReadyPathsOnly, "status", "ignored")
	},
	"otherControllers": func(_ *policy.Profile, k *policy.Kind) any {
		if k.OtherControllersUnlisted {
			return "unlisted"
		}
		return choice(k.OtherControllersNotProgrammed, "not-programmed", "target-not-found")
	},
	"gatewaySections": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.GatewaySectionsByName, "by-name", "own")
	},
	"notInListenerSets": func(_ *policy.Profile, k *policy.Kind) any { return k.NotInListenerSets },
	"waypointTargets":   func(_ *policy.Profile, k *policy.Kind) any { return choice(k.WaypointTargets, "istio", "none") },
	"summary": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.SummaryIstioWaypoint, "istio-waypoint", "attache")
	},
	"partlyOverridden": func(_ *policy.Profile, k *policy.Kind) any {
		return choice(k.PartlyOverriddenNotProgrammed, "not-programmed", "programmed")
	},
	"weightAnnotation":   func(_ *policy.Profile, k *policy.Kind) any { return k.WeightAnnotation },
	"delegationPriority": func(_ *policy.Profile, k *policy.Kind) any { return k.DelegationPriority.String() },
	"filterAttachment": func(_ *policy.Profile, k *policy.Kind) any {
		switch {
		case !k.FilterAttachment:
			return "none"
		case k.MissingFilterStatus != 0:
			return fmt.Sprintf("extension-ref missing=%d", k.MissingFilterStatus)
		}
		return "extension-ref"
	},
	"effectiveListeners": func(_ *policy.Profile, k *policy.Kind) any { return k.EffectiveListeners },
	"clusterIPRouting":   func(_ *policy.Profile, k *policy.Kind) any { return k.ClusterIPRouting.String() },
	"routeReplacement":   func(_ *policy.Profile, k *policy.Kind) any { return k.RouteReplacement },
	"requires":           func(_ *policy.Profile, k *policy.Kind) any { return stringers(k.Requirements) },
	"regexFields":        func(_ *policy.Profile, k *policy.Kind) any { return stringers(k.RegexFields) },
	"objectRefs":         func(_ *policy.Profile, k *policy.Kind) any { return stringers(k.ObjectRefs) },
	"featureGates":       func(_ *policy.Profile, k *policy.Kind) any { return stringers(k.FeatureGates) },
	"portSelection":      func(_ *policy.Profile, k *policy.Kind) any { return k.PortSelection.String() },
	// The YAML describes the rules in words: that the kind has some.
	"validations": func(_ *policy.Profile, k *policy.Kind) any { return len(k.Validations) > 0 },
	"sectionNames": func(_ *policy.Profile, k *policy.Kind) any {
		if k.SectionNamesIgnored {
			return "ignored"
		}
		return !k.NoSectionNames
	},
	// The YAML names the dependencies; their kinds are in the profile.
	"dependencies": func(_ *policy.Profile, k *policy.Kind) any {
		names := make([]string, len(k.Dependencies))
		for i, d := range k.Dependencies {
			names[i] = d.Name
		}
		return names
	},
	// The YAML gives each required object as "<name>=<Kind.group>".
	"requiredObjects": func(_ *policy.Profile, k *policy.Kind) any {
		out := make([]string, len(k.RequiredObjects))
		for i, r := range k.RequiredObjects {
			out[i] = r.String()
		}
		return out
	},
	"emptyTargetGroup": func(_ *policy.Profile, k *policy.Kind) any { return choice(k.EmptyTargetGroupCore, "core", "resolve") },
	"stanzas":          func(_ *policy.Profile, k *policy.Kind) any { return !k.NoStanzas },
	"schemaMerge":      func(_ *policy.Profile, k *policy.Kind) any { return k.SchemaMerge },
	"dataPlaneTarget":  func(_ *policy.Profile, k *policy.Kind) any { return k.DataPlaneTarget },
}

// yamlProse are the keys of the summary's entries that state no setting.
var yamlProse = []string{"group", "kind", "crd", "versions", "scope", "order", "notes", "approx", "notEstablished",
	"crossNamespaceTargets", "ruleNaming", "targetSelectors", "targetKinds", "effectiveTargetKinds", "hierarchy"}

// yamlValue reads a YAML value as the settings render: null as absent
// (not established), numbers as ints, lists as string lists, a
// mergeTypeField object by its name, validations (descriptions) as
// whether there are any.
func yamlValue(key string, v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		if key == "mergeTypeField" || key == "crdPolicyLabel" {
			return "", true
		}
		return nil, false
	case float64:
		return int(v), true
	case []any:
		if key == "validations" {
			return len(v) > 0, true
		}
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = fmt.Sprint(e)
		}
		return out, true
	case map[string]any:
		if key == "mergeTypeField" {
			return fmt.Sprint(v["name"]), true
		}
	}
	return v, true
}

// oneOf is a setting's value that the YAML may write in either of
// several words.
type oneOf []string

func (o oneOf) String() string { return strings.Join(o, " or ") }

func equalValues(a, b any) bool {
	if alt, ok := a.(oneOf); ok {
		w, ok := b.(string)
		return ok && slices.Contains(alt, w)
	}
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok || bok {
		return slices.Equal(as, bs)
	}
	return a == b
}

// kindsOf reads a YAML kind list: objects as Kind or Kind.group, sections as
// "<Kind or Kind.group> listener|rule|port" (by the kind's name only).
func kindsOf(v any) (objects []string, sections []string) {
	list, _ := v.([]any)
	for _, e := range list {
		s := fmt.Sprint(e)
		if kind, _, ok := strings.Cut(s, " "); ok {
			sections = append(sections, topology.ParseGroupKind(kind).Kind)
		} else {
			objects = append(objects, topology.ParseGroupKind(s).String())
		}
	}
	return objects, sections
}

func names(gks []topology.GroupKind) []string {
	out := make([]string, len(gks))
	for i, gk := range gks {
		out[i] = gk.String()
	}
	return out
}

func kindNames(gks []topology.GroupKind) []string {
	out := make([]string, len(gks))
	for i, gk := range gks {
		out[i] = gk.Kind
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// The "Machine-readable summary" of docs/profiles.md says of every kind
// what its profile makes of it: the same kinds, and for each the targets,
// hierarchy and every setting the YAML states equal to those of the kind
// built from the profile (an unlabelled CRD).
func TestMachineReadableSummaryMatchesProfiles(t *testing.T) {
	for _, d := range summaryDisagreements(summaryEntries(t)) {
		t.Error(d)
	}
}

// The comparison tells a changed entry apart: the errors the summary had
// before session 30's fixes.
func TestMachineReadableSummaryDisagreements(t *testing.T) {
	for what, c := range map[string]struct {
		kind, key string
		value     any
		want      string
	}{
		"ancestor":      {"TrafficPolicy", "ancestor", "gateway", "ancestor is gateway in the YAML, gateway-parentrefs in the profile"},
		"target kinds":  {"EnvoyFilter", "targetKinds", []any{"Gateway.gateway.networking.k8s.io", "GatewayClass.gateway.networking.k8s.io", "Service", "ServiceEntry.networking.istio.io"}, "targetKinds are"},
		"strategies":    {"RateLimitPolicy", "strategies", []any{}, "strategies is [] in the YAML, [patch-defaults] in the profile"},
		"a setting":     {"TrafficPolicy", "routeReplacement", float64(503), "routeReplacement is 503 in the YAML, 500 in the profile"},
		"unknown key":   {"TrafficPolicy", "routeReplacment", float64(500), `key "routeReplacment" is neither`},
		"hierarchy":     {"TrafficPolicy", "hierarchy", []any{"Gateway.gateway.networking.k8s.io", "HTTPRoute.gateway.networking.k8s.io"}, "hierarchy is"},
		"effective":     {"BackendTLSPolicy", "effectiveTargetKinds", []any{"Service", "Service port"}, "effectiveTargetKinds are [Service]"},
		"section kinds": {"AuthorizationPolicy", "targetKinds", []any{"Gateway.gateway.networking.k8s.io", "GatewayClass.gateway.networking.k8s.io", "Service", "Service port", "ServiceEntry.networking.istio.io"}, "the YAML lists sections of Service"},
	} {
		entries := summaryEntries(t)
		changed := false
		for _, e := range entries {
			if e["kind"] == c.kind && (c.kind != "RateLimitPolicy" || e["group"] == "gateway.nginx.org") {
				e[c.key], changed = c.value, true
			}
		}
		if !changed {
			t.Fatalf("%s: no entry of %s", what, c.kind)
		}
		ds := summaryDisagreements(entries)
		if len(ds) != 1 || !strings.Contains(ds[0], c.want) {
			t.Errorf("%s: disagreements %q, want one saying %q", what, ds, c.want)
		}
	}
}

// summaryDisagreements compares the summary's entries with the profiles.
func summaryDisagreements(entries []map[string]any) []string {
	var out []string
	errorf := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	seen := map[topology.GroupKind]bool{}
	for _, e := range entries {
		gk := topology.GroupKind{Group: fmt.Sprint(e["group"]), Kind: fmt.Sprint(e["kind"])}
		if seen[gk] {
			errorf("%s: two entries", gk)
		}
		seen[gk] = true
		p, ok := Lookup(gk)
		if !ok {
			errorf("%s: an entry but no profile", gk)
			continue
		}
		k, prob := policy.KindFromCRDWithProfile(crdOf(gk, ""), nil, p)
		if prob != nil {
			errorf("%s: %v", gk, prob)
			continue
		}
		for key, raw := range e {
			if slices.Contains(yamlProse, key) {
				continue
			}
			get, ok := yamlSettings[key]
			if !ok {
				errorf("%s: key %q is neither a setting the test compares nor prose (add it to yamlSettings or yamlProse)", gk, key)
				continue
			}
			want, stated := yamlValue(key, raw)
			if !stated {
				continue
			}
			if got := get(p, k); got != nil && !equalValues(got, want) {
				errorf("%s: %s is %v in the YAML, %v in the profile", gk, key, want, got)
			}
		}
		// Targets: the objects, and sections of kinds among them; the
		// kind's targetRefs must take section names when some are listed.
		objs, secs := kindsOf(e["targetKinds"])
		if !sameSet(objs, names(k.TargetKinds)) {
			errorf("%s: targetKinds are %v in the YAML, %v in the profile", gk, objs, names(k.TargetKinds))
		}
		for _, s := range secs {
			if !slices.Contains(kindNames(k.TargetKinds), s) || k.NoSectionNames {
				errorf("%s: the YAML lists sections of %s as targets; the profile's targets are %v (section names %v)", gk, s, names(k.TargetKinds), !k.NoSectionNames)
			}
		}
		// Effective targets: objects, or the sections of kinds that are
		// effective section kinds.
		objs, secs = kindsOf(e["effectiveTargetKinds"])
		var gotObjs []string
		for _, gk := range k.EffectiveTargetKinds {
			if !slices.Contains(k.EffectiveSectionKinds, gk) {
				gotObjs = append(gotObjs, gk.String())
			}
		}
		if !sameSet(objs, gotObjs) || !sameSet(secs, kindNames(k.EffectiveSectionKinds)) {
			errorf("%s: effectiveTargetKinds are %v and sections of %v in the YAML; %v and sections of %v in the profile", gk, objs, secs, gotObjs, kindNames(k.EffectiveSectionKinds))
		}
		// Hierarchy: [] where the profile gives none (a Direct kind's
		// default is never used), else the kind's, in order.
		h, _ := kindsOf(e["hierarchy"])
		if got := names(k.Hierarchy); len(p.Spec.Hierarchy) == 0 && len(h) > 0 || len(p.Spec.Hierarchy) > 0 && !slices.Equal(h, got) {
			errorf("%s: hierarchy is %v in the YAML, %v in the profile", gk, h, names(p.Spec.Hierarchy))
		}
	}
	for _, p := range All() {
		if !seen[p.Spec.GroupKind] {
			errorf("%s: a profile but no entry in the Machine-readable summary", p.Spec.GroupKind)
		}
	}
	return out
}

// The settings vocabulary of docs/profiles.md has one row per setting, and
// its cells escape the | they hold: a row written twice (merges of
// branches each adding to it) would say half of the facts in each, and an
// unescaped | splits a row into more cells than the table has.
func TestSettingsVocabularyRows(t *testing.T) {
	b, err := os.ReadFile("../../docs/profiles.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Settings vocabulary\n")
	if !ok {
		t.Fatal(`docs/profiles.md has no "## Settings vocabulary" section`)
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	seen := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		cells := strings.Split(strings.ReplaceAll(line, `\|`, ""), "|")
		if len(cells) != 4 { // "", setting, meaning, ""
			t.Errorf("row %.60q...: %d cells, want 2 (an unescaped |?)", line, len(cells)-2)
		}
		name := strings.TrimSpace(cells[1])
		if seen[name] {
			t.Errorf("setting %s has two rows", name)
		}
		seen[name] = true
	}
	if rows < 40 {
		t.Errorf("%d rows read in the settings vocabulary, want the whole table", rows)
	}
}
