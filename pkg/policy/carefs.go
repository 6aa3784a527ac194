package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/topology"
)

// CA certificate holders attache can resolve: core ConfigMaps and Secrets,
// whose data keys it reads, and ClusterTrustBundles (cluster-scoped),
// whether their trust bundle is set; never the values, so that a reader
// may strip them.
var (
	KindConfigMap          = topology.GroupKind{Kind: "ConfigMap"}
	KindSecret             = topology.GroupKind{Kind: "Secret"}
	KindClusterTrustBundle = topology.GroupKind{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}
)

// TrustBundleKey is the key under which a ClusterTrustBundle is said to
// hold its certificates: the holder keys of one whose spec.trustBundle is
// set are [TrustBundleKey], of one whose is empty none.
const TrustBundleKey = "spec.trustBundle"

// CAHolderKinds are the kinds CARefs.Kinds may name.
var CAHolderKinds = []topology.GroupKind{KindConfigMap, KindSecret, KindClusterTrustBundle}

// cert-manager's issuers, which policies name for the certificates they
// have issued (Kuadrant's TLSPolicy): attache reads whether one exists and
// the conditions its status holds, never its spec.
var (
	KindIssuer        = topology.GroupKind{Group: "cert-manager.io", Kind: "Issuer"}
	KindClusterIssuer = topology.GroupKind{Group: "cert-manager.io", Kind: "ClusterIssuer"}
)

// ObjectHolderKinds are the kinds ObjectRefPath.Kinds may name.
var ObjectHolderKinds = []topology.GroupKind{KindConfigMap, KindSecret, KindIssuer, KindClusterIssuer}

// objectHolderKindsText names ObjectHolderKinds for messages.
const objectHolderKindsText = "ConfigMap, Secret, Issuer.cert-manager.io, ClusterIssuer.cert-manager.io"

// ClusterScopedHolder reports whether holders of kind gk have no namespace.
func ClusterScopedHolder(gk topology.GroupKind) bool {
	return gk == KindClusterTrustBundle || gk == KindClusterIssuer
}

// StatusHolder reports whether holders of kind gk are read for the
// conditions of their status, not for data (cert-manager's issuers).
func StatusHolder(gk topology.GroupKind) bool { return gk == KindIssuer || gk == KindClusterIssuer }

// DiscoveredHolder reports whether the kind of holder gk is not always
// served (ClusterTrustBundle, behind a feature gate in older releases;
// cert-manager's kinds, with cert-manager): readers find its version, and
// whether it is served at all, by discovery.
func DiscoveredHolder(gk topology.GroupKind) bool {
	return gk == KindClusterTrustBundle || StatusHolder(gk)
}

// objectHolderKind resolves a kind written in attache.dev/object-refs: a
// bare name names the one kind of ObjectHolderKinds of that name.
func objectHolderKind(s string) (topology.GroupKind, bool) { return holderKindIn(s, ObjectHolderKinds) }

// CARefs says where a kind's policies name the objects holding the CA
// certificates they trust, as BackendTLSPolicy's
// spec.validation.caCertificateRefs does. A policy's references are then
// resolved against the holders in its namespace, and its status carries
// Gateway API's ResolvedRefs condition; when none resolves, it is
// Accepted=False with reason NoValidCACertificate (it still governs its
// targets: connections through it fail). The zero value: no such field.
type CARefs struct {
	// Field is the dotted path, below spec, of the list of references;
	// each entry has group, kind and name (and may have namespace).
	Field string
	// CAReading is how references are judged by default.
	CAReading
	// ByController are the readings of implementations that differ from
	// the default, by the controllerName of a GatewayClass: at a target
	// whose Gateways are of such classes, the references are judged as
	// that implementation judges them. Field is the same for all.
	ByController []ControllerCARefs
}

// CAReading is how an implementation judges CA certificate references.
type CAReading struct {
	// Kinds are the kinds a reference may name, among CAHolderKinds
	// (default ConfigMap, Gateway API's Core support); a reference to any
	// other kind is invalid (InvalidKind).
	Kinds []topology.GroupKind
	// Keys are the data keys holding the certificate, tried in order
	// (default ca.crt); a last "*" stands for the holder's only key when it
	// has exactly one (Envoy Gateway's fallback). A ClusterTrustBundle
	// holds one when its trust bundle is set, whatever the keys.
	Keys []string
	// AnyGroup: a reference's group is not read, its kind alone names the
	// holder (Envoy Gateway switches on the kind: its own fixtures name a
	// ClusterTrustBundle with group "").
	AnyGroup bool
	// Max, when not 0, is the most references a policy may name; with
	// more it is Invalid (NGINX Gateway Fabric reads exactly one).
	Max int
	// Strict: one reference that does not resolve makes the policy
	// NoValidCACertificate, not only all of them (Envoy Gateway stops at
	// the first); a ClusterTrustBundle with an empty bundle then adds
	// nothing rather than failing, the policy failing only when no
	// reference gives a certificate.
	Strict bool
	// SkipUnknown: a reference to a kind not among Kinds is ignored, and
	// InvalidKind only when no reference is of one of Kinds (Envoy
	// Gateway).
	SkipUnknown bool
	// SecretType, when set, is the type a Secret must have; SecretKeys,
	// when set, are the data keys a Secret must all have, instead of one
	// of Keys (NGINX Gateway Fabric takes a kubernetes.io/tls Secret,
	// with tls.crt and tls.key; ca.crt is optional there).
	SecretType string
	SecretKeys []string
	// SDSType, when set, is the type of a Secret that references a
	// secret an SDS server serves instead of holding a certificate
	// (Envoy Gateway's gateway.envoyproxy.io/sds): such a Secret is read
	// for its keys SDSSecretNameKey and holderdata.URLKey, which must be
	// set, the URL one the implementation takes (unix sockets only); a
	// policy may name one, and then no certificate beside it. SDSFeature,
	// when set, is the implementation feature (Features) without which
	// such a Secret is refused (Envoy Gateway:
	// EnvoyGateway.extensionApis.enableSDSSecretRef, off by default).
	SDSType    string
	SDSFeature string
}

// SDSSecretNameKey is the key of an SDS reference Secret naming the
// secret its SDS server serves (Envoy Gateway's ir.NewSDSConfig).
const SDSSecretNameKey = "secretName"

// clone copies the lists.
func (r CAReading) clone() CAReading {
	r.Kinds, r.Keys, r.SecretKeys = slices.Clone(r.Kinds), slices.Clone(r.Keys), slices.Clone(r.SecretKeys)
	return r
}

// ControllerCARefs is how one implementation reads a kind's CA
// certificate references.
type ControllerCARefs struct {
	// Controller is a GatewayClass's spec.controllerName.
	Controller string
	CAReading
}

// For returns the reading of the implementation named controller: its
// ByController entry, else the default; in both, ByController is empty.
func (r CARefs) For(controller string) CARefs {
	out := CARefs{Field: r.Field, CAReading: r.CAReading}
	for _, c := range r.ByController {
		if c.Controller == controller && controller != "" {
			out.CAReading = c.CAReading
		}
	}
	return out
}

// AllKinds are the holder kinds of every reading, each once.
func (r CARefs) AllKinds() []topology.GroupKind {
	out := slices.Clone(r.Kinds)
	for _, c := range r.ByController {
		for _, k := range c.Kinds {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// holderKind is the holder kind a reference names under this reading
// (by kind alone when AnyGroup), and whether it is one of Kinds.
func (r CARefs) holderKind(ref CARef) (topology.GroupKind, bool) {
	gk := topology.GroupKind{Group: ref.Group, Kind: ref.Kind}
	if r.AnyGroup {
		for _, k := range r.Kinds {
			if k.Kind == ref.Kind {
				return k, true
			}
		}
	}
	return gk, slices.Contains(r.Kinds, gk)
}

// clone copies the lists.
func (r CARefs) clone() CARefs {
	out := CARefs{Field: r.Field, CAReading: r.CAReading.clone()}
	for _, c := range r.ByController {
		out.ByController = append(out.ByController, ControllerCARefs{Controller: c.Controller, CAReading: c.CAReading.clone()})
	}
	return out
}

// SDSFeatures are the SDSFeature of the readings that have one.
func (r CARefs) SDSFeatures() []string {
	var out []string
	for _, rd := range append([]CAReading{r.CAReading}, r.readings()...) {
		if rd.SDSFeature != "" && !slices.Contains(out, rd.SDSFeature) {
			out = append(out, rd.SDSFeature)
		}
	}
	return out
}

// SDSTypes are the SDSType of the readings that have one: the Secrets of
// those types are read for their values (package holderdata).
func (r CARefs) SDSTypes() []string {
	var out []string
	for _, rd := range append([]CAReading{r.CAReading}, r.readings()...) {
		if rd.SDSType != "" && !slices.Contains(out, rd.SDSType) {
			out = append(out, rd.SDSType)
		}
	}
	return out
}

// readings are the ByController readings.
func (r CARefs) readings() []CAReading {
	out := make([]CAReading, len(r.ByController))
	for i, c := range r.ByController {
		out[i] = c.CAReading
	}
	return out
}

// Enabled reports whether the kind has CA certificate references.
func (r CARefs) Enabled() bool { return r.Field != "" }

// String renders the setting as its annotation value:
// "validation.caCertificateRefs kinds=ConfigMap keys=ca.crt", then a
// clause per controller ("; controller=<name> kinds=... keys=...
// groups=any"); "" when off.
func (r CARefs) String() string {
	if !r.Enabled() {
		return ""
	}
	s := r.Field + " " + r.CAReading.String()
	for _, c := range r.ByController {
		s += "; controller=" + c.Controller + " " + c.CAReading.String()
	}
	return s
}

// String renders a reading as the annotation's words:
// "kinds=ConfigMap keys=ca.crt", then " groups=any", " max=<n>",
// " strict", " skip-unknown", " secret-type=<type>",
// " secret-keys=<key>,...", " sds-type=<type>" and
// " sds-feature=<feature>" when set.
func (r CAReading) String() string {
	names := make([]string, len(r.Kinds))
	for i, k := range r.Kinds {
		names[i] = k.Kind
	}
	s := fmt.Sprintf("kinds=%s keys=%s", strings.Join(names, ","), strings.Join(r.Keys, ","))
	if r.AnyGroup {
		s += " groups=any"
	}
	if r.Max > 0 {
		s += fmt.Sprintf(" max=%d", r.Max)
	}
	if r.Strict {
		s += " strict"
	}
	if r.SkipUnknown {
		s += " skip-unknown"
	}
	if r.SecretType != "" {
		s += " secret-type=" + r.SecretType
	}
	if len(r.SecretKeys) > 0 {
		s += " secret-keys=" + strings.Join(r.SecretKeys, ",")
	}
	if r.SDSType != "" {
		s += " sds-type=" + r.SDSType
	}
	if r.SDSFeature != "" {
		s += " sds-feature=" + r.SDSFeature
	}
	return s
}

// withDefaults fills Kinds and Keys when empty, of every reading.
func (r CARefs) withDefaults() CARefs {
	if !r.Enabled() {
		return r
	}
	if len(r.Kinds) == 0 {
		r.Kinds = []topology.GroupKind{KindConfigMap}
	}
	if len(r.Keys) == 0 {
		r.Keys = []string{"ca.crt"}
	}
	r.ByController = slices.Clone(r.ByController)
	for i := range r.ByController {
		if len(r.ByController[i].Kinds) == 0 {
			r.ByController[i].Kinds = []topology.GroupKind{KindConfigMap}
		}
		if len(r.ByController[i].Keys) == 0 {
			r.ByController[i].Keys = []string{"ca.crt"}
		}
	}
	return r
}

// validate checks a setting given from Go or a profile.
func (r CARefs) validate() error {
	if !r.Enabled() {
		return nil
	}
	if strings.Trim(r.Field, ".") != r.Field || strings.Contains(r.Field, "..") || strings.ContainsAny(r.Field, " ,=;") || r.Field == "none" {
		return fmt.Errorf("field %q is not a dotted path below spec", r.Field)
	}
	check := func(rd CAReading) error {
		kinds, keys := rd.Kinds, rd.Keys
		if rd.Max < 0 {
			return fmt.Errorf("max=%d: want a positive number of references", rd.Max)
		}
		for _, k := range kinds {
			if !slices.Contains(CAHolderKinds, k) {
				return fmt.Errorf("kind %s cannot hold CA certificates attache reads (known: ConfigMap, Secret, ClusterTrustBundle)", k)
			}
		}
		for i, key := range keys {
			if key == "" || (key == "*" && i != len(keys)-1) || strings.ContainsAny(key, " ,=;") {
				return fmt.Errorf("key %q: keys are data keys, with \"*\" (the only key) last", key)
			}
		}
		for _, key := range rd.SecretKeys {
			if key == "" || strings.ContainsAny(key, " ,=;*") {
				return fmt.Errorf("secret key %q: secret keys are data keys", key)
			}
		}
		if strings.ContainsAny(rd.SecretType, " ,=;") {
			return fmt.Errorf("secret type %q: want a Secret type (kubernetes.io/tls)", rd.SecretType)
		}
		if strings.ContainsAny(rd.SDSType, " ,=;") {
			return fmt.Errorf("sds type %q: want a Secret type (gateway.envoyproxy.io/sds)", rd.SDSType)
		}
		if rd.SDSType != "" && rd.SDSType == rd.SecretType {
			return fmt.Errorf("sds type %s is also the secret type certificates are read from", rd.SDSType)
		}
		if rd.SDSFeature != "" && (rd.SDSType == "" || strings.ContainsAny(rd.SDSFeature, " ,=;")) {
			return fmt.Errorf("sds feature %q: want a feature name, with sds-type", rd.SDSFeature)
		}
		if rd.SDSType != "" && !slices.Contains(rd.Kinds, KindSecret) {
			return fmt.Errorf("sds type %s: Secret is not among the kinds", rd.SDSType)
		}
		return nil
	}
	if err := check(r.CAReading); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, c := range r.ByController {
		if c.Controller == "" || strings.ContainsAny(c.Controller, " ,=;") {
			return fmt.Errorf("controller %q: want a GatewayClass controllerName", c.Controller)
		}
		if seen[c.Controller] {
			return fmt.Errorf("controller %s is given twice", c.Controller)
		}
		seen[c.Controller] = true
		if err := check(c.CAReading); err != nil {
			return fmt.Errorf("controller %s: %w", c.Controller, err)
		}
	}
	return nil
}

// ParseCARefs reads the annotation form: the field, then optionally
// kinds=<Kind,...>, keys=<key,...> and groups=any, separated by spaces;
// then, separated by ";", a clause per implementation reading otherwise:
// controller=<controllerName> with its own kinds=, keys= and groups=any.
// "none" turns the setting off.
func ParseCARefs(v string) (CARefs, error) {
	clauses := strings.Split(v, ";")
	words := strings.Fields(clauses[0])
	if len(words) == 0 {
		return CARefs{}, fmt.Errorf("names no field (e.g. %q), or \"none\"", "validation.caCertificateRefs")
	}
	if len(words) == 1 && words[0] == "none" && len(clauses) == 1 {
		return CARefs{}, nil
	}
	r := CARefs{Field: strings.TrimPrefix(words[0], "spec.")}
	if err := parseCAReading(words[1:], &r.CAReading, "after the field"); err != nil {
		return CARefs{}, err
	}
	for _, cl := range clauses[1:] {
		words := strings.Fields(cl)
		if len(words) == 0 {
			continue
		}
		name, ctl, ok := strings.Cut(words[0], "=")
		if !ok || name != "controller" || ctl == "" {
			return CARefs{}, fmt.Errorf("clause %q: want controller=<GatewayClass controllerName> first", strings.TrimSpace(cl))
		}
		c := ControllerCARefs{Controller: ctl}
		if err := parseCAReading(words[1:], &c.CAReading, "after controller="+ctl); err != nil {
			return CARefs{}, err
		}
		r.ByController = append(r.ByController, c)
	}
	r = r.withDefaults()
	return r, r.validate()
}

// parseCAReading reads the words of a reading (CAReading.String).
func parseCAReading(words []string, rd *CAReading, where string) error {
	for _, w := range words {
		name, val, ok := strings.Cut(w, "=")
		switch {
		case ok && name == "kinds" && len(rd.Kinds) == 0:
			for _, k := range splitList(val) {
				gk, found := caHolderKind(k)
				if !found {
					return fmt.Errorf("kind %q cannot hold CA certificates attache reads (known: ConfigMap, Secret, ClusterTrustBundle)", k)
				}
				rd.Kinds = append(rd.Kinds, gk)
			}
		case ok && name == "keys" && len(rd.Keys) == 0:
			rd.Keys = splitList(val)
		case ok && name == "groups" && val == "any" && !rd.AnyGroup:
			rd.AnyGroup = true
		case ok && name == "max" && rd.Max == 0:
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return fmt.Errorf("max=%s %s: want a positive number of references", val, where)
			}
			rd.Max = n
		case !ok && w == "strict" && !rd.Strict:
			rd.Strict = true
		case !ok && w == "skip-unknown" && !rd.SkipUnknown:
			rd.SkipUnknown = true
		case ok && name == "secret-type" && val != "" && rd.SecretType == "":
			rd.SecretType = val
		case ok && name == "secret-keys" && len(rd.SecretKeys) == 0:
			if rd.SecretKeys = splitList(val); len(rd.SecretKeys) == 0 {
				return fmt.Errorf("secret-keys= %s: want data keys", where)
			}
		case ok && name == "sds-type" && val != "" && rd.SDSType == "":
			rd.SDSType = val
		case ok && name == "sds-feature" && val != "" && rd.SDSFeature == "":
			rd.SDSFeature = val
		default:
			return fmt.Errorf("unexpected %q %s (known: kinds=ConfigMap,Secret,ClusterTrustBundle keys=ca.crt,* groups=any max=<n> strict skip-unknown secret-type=<type> secret-keys=<key>,... sds-type=<type> sds-feature=<feature>)", w, where)
		}
	}
	return nil
}

// caHolderKind resolves a kind name as written ("ConfigMap", "ConfigMap.",
// "Secret.core", "ClusterTrustBundle", a bare name being the one holder
// kind of that name) to one of CAHolderKinds.
func caHolderKind(s string) (topology.GroupKind, bool) { return holderKindIn(s, CAHolderKinds) }

// holderKindIn resolves kind s ("Kind" or "Kind.group", group "core" for
// the core group) among kinds: a bare name names the one of that name.
func holderKindIn(s string, kinds []topology.GroupKind) (topology.GroupKind, bool) {
	name, group, dotted := strings.Cut(s, ".")
	if group == "core" {
		group = ""
	}
	if !dotted {
		for _, k := range kinds {
			if k.Kind == name {
				return k, true
			}
		}
	}
	gk := topology.GroupKind{Group: group, Kind: name}
	return gk, slices.Contains(kinds, gk)
}

// CARef is one CA certificate reference of a policy, as written.
type CARef struct {
	// Group (core: "") and Kind as written; Kind is never empty.
	Group, Kind string
	// Name of the holder, and its Namespace: the policy's when the entry
	// names none.
	Name, Namespace string
	// Field is the entry's path, for messages.
	Field string
}

// Ref is the holder the reference names, as written (a
// ClusterTrustBundle without namespace).
func (r CARef) Ref() topology.Ref {
	ref := topology.Ref{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
	if ClusterScopedHolder(ref.GroupKind()) {
		ref.Namespace = ""
	}
	return ref
}

// holderRef is the holder the reference names under reading r (its kind
// resolved by name alone when r.AnyGroup), and whether r reads its kind.
func (r CARefs) holderRef(ref CARef) (topology.Ref, bool) {
	gk, ok := r.holderKind(ref)
	out := topology.Ref{Group: gk.Group, Kind: gk.Kind, Namespace: ref.Namespace, Name: ref.Name}
	if ClusterScopedHolder(gk) {
		out.Namespace = ""
	}
	return out, ok
}

// readCARefs reads the kind's CA certificate references from spec (the
// object's spec, before stanzas are taken apart: the field is the kind's
// own). Malformed entries are problems of the policy.
func (p *Policy) readCARefs(spec map[string]any, bad func(string, string, ...any)) {
	r := p.Kind.CARefs
	if !r.Enabled() {
		return
	}
	var cur any = spec
	path := strings.Split(r.Field, ".")
	for _, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return
		}
		if cur, ok = m[seg]; !ok {
			return
		}
	}
	field := "spec." + r.Field
	list, ok := cur.([]any)
	if !ok {
		if cur != nil {
			bad(field, "must be a list of references, not %s", typeName(cur))
		}
		return
	}
	for i, e := range list {
		ef := fmt.Sprintf("%s[%d]", field, i)
		m, ok := e.(map[string]any)
		if !ok {
			bad(ef, "must be an object with kind and name, not %s", typeName(e))
			continue
		}
		ref := CARef{Namespace: p.Ref.Namespace, Field: ef}
		for _, f := range []struct {
			key string
			dst *string
		}{{"group", &ref.Group}, {"kind", &ref.Kind}, {"name", &ref.Name}, {"namespace", &ref.Namespace}} {
			v, has := m[f.key]
			if !has || v == nil {
				continue
			}
			s, isStr := v.(string)
			if !isStr {
				bad(ef+"."+f.key, "must be a string, not %s", typeName(v))
				continue
			}
			if s != "" || f.key != "namespace" {
				*f.dst = s
			}
		}
		if ref.Group == "core" {
			ref.Group = ""
		}
		if ref.Kind == "" || ref.Name == "" {
			bad(ef, "names no kind or no name")
			continue
		}
		p.CARefs = append(p.CARefs, ref)
	}
}

// CA reference reasons (Gateway API, BackendTLSPolicy).
const (
	ReasonInvalidKind             = "InvalidKind"
	ReasonInvalidCACertificateRef = "InvalidCACertificateRef"
)

// CARefProblem says why a reference does not resolve, with the reason of
// the ResolvedRefs condition: ReasonInvalidKind or
// ReasonInvalidCACertificateRef.
type CARefProblem struct {
	Ref     CARef
	Reason  string
	Message string
}

// Holder is what attache reads of an object holding CA certificates: its
// data keys (a ClusterTrustBundle's: TrustBundleKey when its bundle is
// set), of a Secret, its type, and what is read of its values, by key
// (nil when not read: the values are then not judged).
type Holder struct {
	Keys  []string
	Type  string
	Facts map[string]holderdata.Fact
}

// CAHolders is what CheckCARefsWith reads beside the policy.
type CAHolders struct {
	// Holder gives what is read of a holder (ok false when it does not
	// exist).
	Holder func(topology.Ref) (Holder, bool)
	// Unread, when not nil, says which holders could not be read at all.
	Unread func(topology.Ref) bool
	// Features are the implementation's switches (a reading's
	// SDSFeature).
	Features Features
}

// CheckCARefs resolves the policy's CA certificate references as its
// kind's default reading does (CheckCARefsAs).
func (p *Policy) CheckCARefs(holder func(topology.Ref) (Holder, bool), unread func(topology.Ref) bool) (probs []CARefProblem, valid int, unknown bool) {
	return p.CheckCARefsAs(p.Kind.CARefs.For(""), holder, unread)
}

// CheckCARefsAs resolves the policy's CA certificate references under
// reading r (one of its kind's, CARefs.For). holder gives what is read of
// a holder (ok false when it does not exist); unread, when not nil, says
// which holders could not be read at all. It returns the problems of the
// references that do not resolve, how many resolve, and whether some
// could not be judged (unread).
func (p *Policy) CheckCARefsAs(r CARefs, holder func(topology.Ref) (Holder, bool), unread func(topology.Ref) bool) (probs []CARefProblem, valid int, unknown bool) {
	return p.CheckCARefsWith(r, CAHolders{Holder: holder, Unread: unread})
}

// CheckCARefsWith is CheckCARefsAs with the implementation's features,
// which a reading with SDSFeature reads (none: the feature is off).
func (p *Policy) CheckCARefsWith(r CARefs, in CAHolders) (probs []CARefProblem, valid int, unknown bool) {
	holder, unread := in.Holder, in.Unread
	knownKinds := 0
	for _, ref := range p.CARefs {
		if _, ok := r.holderKind(ref); ok {
			knownKinds++
		}
	}
	var empty []CARef // ClusterTrustBundles without a bundle, under Strict
	var sds *CARef    // the SDS reference Secret that resolved
	certs := 0        // the references giving certificates
	for _, ref := range p.CARefs {
		hr, known := r.holderRef(ref)
		gk := topology.GroupKind{Group: ref.Group, Kind: ref.Kind}
		clusterScoped := ClusterScopedHolder(hr.GroupKind())
		what := ref.Kind + " " + ref.Namespace + "/" + ref.Name
		if clusterScoped {
			what = ref.Kind + " " + ref.Name
		}
		bad := func(reason, format string, args ...any) {
			probs = append(probs, CARefProblem{ref, reason, ref.Field + ": " + fmt.Sprintf(format, args...)})
		}
		switch {
		case !known && r.SkipUnknown && knownKinds > 0:
			// Another kind beside known ones: not read.
		case !known:
			bad(ReasonInvalidKind, "kind %s is not supported (supported: %s)", gk, kindsString(r.Kinds))
		case !clusterScoped && ref.Namespace != p.Ref.Namespace:
			bad(ReasonInvalidCACertificateRef, "%s is in another namespace than the policy", what)
		case unread != nil && unread(hr):
			unknown = true
		default:
			h, found := holder(hr)
			secret := hr.GroupKind() == KindSecret
			switch {
			case !found:
				bad(ReasonInvalidCACertificateRef, "%s not found", what)
			case secret && r.SDSType != "" && h.Type == r.SDSType:
				if msg := r.sdsProblem(h, in.Features, sds != nil); msg != "" {
					bad(ReasonInvalidCACertificateRef, "%s %s", what, msg)
					continue
				}
				sds = &ref
				valid++
			case clusterScoped && !slices.Contains(h.Keys, TrustBundleKey):
				if r.Strict {
					empty = append(empty, ref) // adds nothing
					continue
				}
				bad(ReasonInvalidCACertificateRef, "%s has an empty trust bundle", what)
			case secret && r.SecretType != "" && h.Type != r.SecretType:
				bad(ReasonInvalidCACertificateRef, "%s is of type %q, not %s", what, h.Type, r.SecretType)
			case secret && len(r.SecretKeys) > 0:
				var missing []string
				for _, k := range r.SecretKeys {
					if !slices.Contains(h.Keys, k) {
						missing = append(missing, k)
					}
				}
				if len(missing) > 0 {
					bad(ReasonInvalidCACertificateRef, "%s has no key %s", what, strings.Join(missing, " nor "))
				} else {
					valid++
					certs++
				}
			case !clusterScoped && !holdsCert(h.Keys, r.Keys):
				bad(ReasonInvalidCACertificateRef, "%s has no key %s", what, keysText(r.Keys))
			default:
				valid++
				certs++
			}
		}
	}
	if sds != nil && certs > 0 {
		// Envoy Gateway takes the SDS server's secret or certificates,
		// never both (getCaCertsFromCARefs).
		probs = append(probs, CARefProblem{*sds, ReasonInvalidCACertificateRef, fmt.Sprintf("%s: Secret %s/%s is an SDS reference Secret, which cannot be mixed with other CA certificate references", sds.Field, sds.Namespace, sds.Name)})
		valid = 0
	}
	if r.Strict && valid == 0 && len(probs) == 0 && !unknown && len(empty) > 0 {
		// Nothing gave a certificate.
		ref := empty[0]
		probs = append(probs, CARefProblem{ref, ReasonInvalidCACertificateRef, fmt.Sprintf("%s: %s %s has an empty trust bundle, and no other reference gives a certificate", ref.Field, ref.Kind, ref.Name)})
	}
	return probs, valid, unknown
}

// sdsProblem is why SDS reference Secret h is refused under reading r
// with features ("" when taken); another says one was taken before it.
// The checks and their order are Envoy Gateway's (getCaCertsFromCARefs,
// ir.NewSDSConfig, v1.9.1).
func (r CAReading) sdsProblem(h Holder, features Features, another bool) string {
	switch {
	case r.SDSFeature != "" && !features.On(r.SDSFeature):
		return fmt.Sprintf("is an SDS reference Secret (type %s), and SDS Secret references are off: %s is not set", r.SDSType, r.SDSFeature)
	case another:
		return "is a second SDS reference Secret: one policy may name one"
	}
	for _, key := range []string{SDSSecretNameKey, holderdata.URLKey} {
		f, read := h.Facts[key]
		if !slices.Contains(h.Keys, key) || (read && f.Empty) {
			return fmt.Sprintf("is an invalid SDS reference Secret: no %s found", key)
		}
	}
	if f := h.Facts[holderdata.URLKey]; f.URL.Problem != "" {
		return "is an invalid SDS reference Secret: invalid URL in it: " + f.URL.Problem
	}
	return ""
}

// holdsCert reports whether a holder with data keys have holds a
// certificate under one of keys ("*": its only key).
func holdsCert(have, keys []string) bool {
	for _, k := range keys {
		if k == "*" && len(have) == 1 || slices.Contains(have, k) {
			return true
		}
	}
	return false
}

func keysText(keys []string) string {
	var named []string
	only := false
	for _, k := range keys {
		if k == "*" {
			only = true
		} else {
			named = append(named, k)
		}
	}
	s := strings.Join(named, " or ")
	if only {
		s += " (nor a single key)"
	}
	return s
}
