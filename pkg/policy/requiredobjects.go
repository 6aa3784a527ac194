package policy

import (
	"fmt"
	"strings"

	"github.com/attache-dev/attache/pkg/topology"
)

// RequiredObject is an object the kind's implementation needs on the
// cluster before it enforces any policy of the kind: one of Kind, anywhere
// (Kuadrant's Kuadrant object, from which its operator deploys the data
// plane's components).
type RequiredObject struct {
	// Name is how the implementation names it ("kuadrant").
	Name string
	// Kind is its kind; it has a group (a custom resource).
	Kind topology.GroupKind
}

// String renders r in its annotation form, "<name>=<Kind.group>".
func (r RequiredObject) String() string { return r.Name + "=" + r.Kind.String() }

// validate checks an entry given from Go or a profile.
func (r RequiredObject) validate() error {
	if r.Name == "" || strings.ContainsAny(r.Name, "=;,|") || strings.TrimSpace(r.Name) != r.Name {
		return fmt.Errorf("required object %q: want a name (no '=', ';', ',', '|', no surrounding spaces)", r.Name)
	}
	if r.Kind.Kind == "" || r.Kind.Group == "" || strings.ContainsAny(r.Kind.Kind+r.Kind.Group, " =;,|/") {
		return fmt.Errorf("required object %s: want Kind.group (a custom resource's kind and group)", r.Name)
	}
	return nil
}

// RequiredObjectsString renders a kind's required objects as the
// annotation value, "none" for none.
func RequiredObjectsString(rs []RequiredObject) string {
	if len(rs) == 0 {
		return "none"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// ParseRequiredObjects reads the annotation attache.dev/required-objects:
// entries separated by ";", each "<name>=<Kind.group>", or "none" (nil).
func ParseRequiredObjects(v string) ([]RequiredObject, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "none" {
		return nil, nil
	}
	var out []RequiredObject
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, kind, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("entry %q: want <name>=<Kind.group> (e.g. kuadrant=Kuadrant.kuadrant.io)", entry)
		}
		k, group, _ := strings.Cut(strings.TrimSpace(kind), ".")
		r := RequiredObject{Name: strings.TrimSpace(name), Kind: topology.GroupKind{Group: group, Kind: k}}
		if err := r.validate(); err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.Name == r.Name {
				return nil, fmt.Errorf("required object %q is given twice", r.Name)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// MissingRequiredObjects says which of the kind's required objects are
// missing, in the implementation's words ("kuadrant is not installed,
// please create resource", Kuadrant's ErrSystemResource), given whether
// an object of a kind exists (present) and whether that kind could be
// read (unread: not judged); "" when none is missing or none can be
// judged.
func (k *Kind) MissingRequiredObjects(present, unread func(topology.GroupKind) bool) string {
	var missing []string
	for _, r := range k.RequiredObjects {
		if unread != nil && unread(r.Kind) {
			continue
		}
		if !present(r.Kind) {
			missing = append(missing, fmt.Sprintf("%s is not installed, please create resource (no %s object on the cluster)", r.Name, r.Kind))
		}
	}
	return strings.Join(missing, "; ")
}
