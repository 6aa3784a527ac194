package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/attache-dev/attache/pkg/topology"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// APIKind is a kind at a version, as the API server serves it.
type APIKind struct {
	topology.GroupKind
	// Version is the version it must be served at; "" for any.
	Version string
}

// String renders k as Kind.group/version (Kind.group for any version).
func (k APIKind) String() string {
	if k.Version == "" {
		return k.GroupKind.String()
	}
	return k.GroupKind.String() + "/" + k.Version
}

// Dependency is something a kind's implementation needs installed on the
// cluster before it accepts any policy of the kind (Kuadrant's "Limitador
// Operator"), told by the API kinds the cluster then serves: installed
// when every kind of one of its alternatives is served.
type Dependency struct {
	// Name is how the implementation names it.
	Name string
	// Alternatives are the ways it can be installed, each a list of kinds
	// that must all be served (Kuadrant's "Gateway API provider": Istio's
	// kinds, or Envoy Gateway's).
	Alternatives [][]APIKind
}

// String renders one dependency in its annotation form:
// "Name=Kind.group/version,Kind.group/version|Kind.group/version".
func (d Dependency) String() string {
	alts := make([]string, len(d.Alternatives))
	for i, alt := range d.Alternatives {
		kinds := make([]string, len(alt))
		for j, k := range alt {
			kinds[j] = k.String()
		}
		alts[i] = strings.Join(kinds, ",")
	}
	return d.Name + "=" + strings.Join(alts, "|")
}

// DependenciesString renders a kind's dependencies as the annotation
// value, "none" for none.
func DependenciesString(ds []Dependency) string {
	if len(ds) == 0 {
		return "none"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}

// ParseDependencies reads the annotation attache.dev/dependencies:
// entries separated by ";", each "<name>=<kinds>|<kinds>..." where kinds
// are Kind.group/version entries separated by "," (the version may be left
// out: any version; a bare Kind is of the core group), or "none" (nil).
func ParseDependencies(v string) ([]Dependency, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "none" {
		return nil, nil
	}
	var out []Dependency
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, kinds, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("dependency %q: want <name>=<Kind.group/version>,...", entry)
		}
		d := Dependency{Name: name}
		for _, alt := range strings.Split(kinds, "|") {
			var ks []APIKind
			for _, s := range strings.Split(alt, ",") {
				k, err := parseAPIKind(s)
				if err != nil {
					return nil, fmt.Errorf("dependency %q: %v", name, err)
				}
				ks = append(ks, k)
			}
			d.Alternatives = append(d.Alternatives, ks)
		}
		if err := d.validate(); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Dependency) bool { return o.Name == d.Name }) {
			return nil, fmt.Errorf("dependency %q is given twice", d.Name)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseAPIKind reads "Kind.group/version" or "Kind.group" (a kind
// without a group is refused: see validate).
func parseAPIKind(s string) (APIKind, error) {
	s = strings.TrimSpace(s)
	var k APIKind
	gk := s
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		gk, k.Version = s[:i], s[i+1:]
		if k.Version == "" {
			return APIKind{}, fmt.Errorf("%q: the version after / is empty", s)
		}
	}
	if strings.HasSuffix(gk, ".") {
		return APIKind{}, fmt.Errorf("%q: the group after . is empty (Kind.group/version)", s)
	}
	k.GroupKind = topology.ParseGroupKind(gk)
	return k, k.validate(s)
}

// validate checks one kind as written (s, for the message).
func (k APIKind) validate(s string) error {
	if k.Kind == "" {
		return fmt.Errorf("%q: a kind is needed (Kind.group/version)", s)
	}
	for _, part := range []string{k.Kind, k.Group, k.Version} {
		if strings.ContainsFunc(part, func(r rune) bool {
			return unicode.IsSpace(r) || r == '/' || r == '=' || r == '|' || r == ';' || r == ','
		}) {
			return fmt.Errorf("%q: a kind, group or version holds no spaces or separators", s)
		}
	}
	if !unicode.IsUpper([]rune(k.Kind)[0]) {
		return fmt.Errorf("%q: a kind starts with an upper-case letter (Kind.group/version)", s)
	}
	if k.Group == "" {
		// Served kinds are read from CRDs, which never serve the core
		// group: such a dependency could never be met.
		return fmt.Errorf("%q: a dependency is a kind a CustomResourceDefinition serves, so it names its group (Kind.group/version)", s)
	}
	return nil
}

// validate checks a dependency given from Go, a profile or an annotation.
func (d Dependency) validate() error {
	if d.Name == "" {
		return fmt.Errorf("a dependency needs a name (<name>=<Kind.group/version>,...)")
	}
	if strings.ContainsAny(d.Name, "=;") {
		return fmt.Errorf("dependency %q: a name holds no = or ;", d.Name)
	}
	if len(d.Alternatives) == 0 {
		return fmt.Errorf("dependency %q names no kind", d.Name)
	}
	for _, alt := range d.Alternatives {
		if len(alt) == 0 {
			return fmt.Errorf("dependency %q has an empty alternative", d.Name)
		}
		for _, k := range alt {
			if err := k.validate(k.String()); err != nil {
				return fmt.Errorf("dependency %q: %v", d.Name, err)
			}
		}
	}
	return nil
}

// ServedAPIs are the kinds a cluster serves, at their versions. A nil
// ServedAPIs is not known (manifests): nothing is judged by it.
type ServedAPIs map[APIKind]bool

// Serves reports whether k is served: at its version, or at any when it
// names none.
func (s ServedAPIs) Serves(k APIKind) bool {
	if k.Version != "" {
		return s[k]
	}
	return s[APIKind{GroupKind: k.GroupKind}]
}

// ServedByCRDs are the kinds the CustomResourceDefinitions among objs
// serve: each version marked served, of a CRD that is not known to be
// unestablished (its Established condition False), and each such kind at
// any version. Built-in kinds are not among them: dependencies name
// custom resources.
func ServedByCRDs(objs []*unstructured.Unstructured) ServedAPIs {
	out := ServedAPIs{}
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			out.AddCRD(u)
		}
	}
	return out
}

// AddCRD adds the kinds CustomResourceDefinition crd serves
// (ServedByCRDs).
func (s ServedAPIs) AddCRD(crd *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	if slices.ContainsFunc(conds, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["type"] == "Established" && m["status"] == "False"
	}) {
		return
	}
	var gk topology.GroupKind
	gk.Group, _, _ = unstructured.NestedString(crd.Object, "spec", "group")
	gk.Kind, _, _ = unstructured.NestedString(crd.Object, "spec", "names", "kind")
	if gk.Kind == "" {
		return
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); served && name != "" {
			s[APIKind{GroupKind: gk, Version: name}] = true
			s[APIKind{GroupKind: gk}] = true
		}
	}
}

// DependencyKinds are the kinds the dependencies of kinds name, each once.
func DependencyKinds(kinds []*Kind) []APIKind {
	var out []APIKind
	for _, k := range kinds {
		for _, d := range k.Dependencies {
			for _, alt := range d.Alternatives {
				for _, ak := range alt {
					if !slices.Contains(out, ak) {
						out = append(out, ak)
					}
				}
			}
		}
	}
	return out
}

// MissingDependencies says which of the kind's dependencies served does
// not serve, and what each lacks: "Limitador Operator (the cluster serves
// no Limitador.limitador.kuadrant.io/v1alpha1)", "" when none is missing
// or served is nil (not known).
func (k *Kind) MissingDependencies(served ServedAPIs) string {
	if served == nil {
		return ""
	}
	var missing []string
	for _, d := range k.Dependencies {
		var lacks []string
		installed := false
		for _, alt := range d.Alternatives {
			var no []string
			for _, ak := range alt {
				if !served.Serves(ak) {
					no = append(no, ak.String())
				}
			}
			if len(no) == 0 {
				installed = true
				break
			}
			lacks = append(lacks, strings.Join(no, ", "))
		}
		if !installed {
			missing = append(missing, fmt.Sprintf("%s (the cluster serves no %s)", d.Name, strings.Join(lacks, "; nor ")))
		}
	}
	return strings.Join(missing, "; ")
}
