package policy

import (
	"fmt"
	"strings"
)

// BackendRefRules are how a kind's implementation judges the backendRefs
// its policies name (Kind.InvalidOnUnresolvedBackendRefs) where
// implementations differ. Every reading refuses a Service that is not
// among the objects, no port or a port the Service lacks, and another
// namespace that no ReferenceGrant opens. The zero value is Envoy
// Gateway's (validateExtServiceBackendReference,
// processExtServiceDestination, getBackendTLSPolicy).
type BackendRefRules struct {
	// ExternalNameAllowed: a Service of type ExternalName may be used
	// (NGINX Gateway Fabric proxies to its name); by default it breaks the
	// reference (Envoy Gateway finds no endpoints to send to).
	ExternalNameAllowed bool
	// AnyProtocol: a port counts whatever its protocol; by default a port
	// for UDP or SCTP only does not (the external services speak HTTP or
	// gRPC, Envoy Gateway checks).
	AnyProtocol bool
	// TLSOldest: a backend's BackendTLSPolicy is the oldest of those in
	// its namespace on the port named or on the whole Service, valid or
	// not, and one that is not valid breaks the reference (NGINX Gateway
	// Fabric's selectBackendTLSPolicyForService); by default it is the
	// oldest valid one on the port, else on the whole Service, and breaks
	// the reference when it has no valid CA certificate (Envoy Gateway).
	TLSOldest bool
	// GrantReason, when set, is the Accepted=False reason of a policy one
	// of whose backendRefs lies in another namespace that no
	// ReferenceGrant opens (NGINX Gateway Fabric: RefNotPermitted, judged
	// before the others); by default Invalid, as for every reference that
	// does not resolve.
	GrantReason string
}

// Words of BackendRefRules in AnnotationUnresolvedBackendRefs.
const (
	backendRuleExternalName = "external-name=allowed"
	backendRuleAnyProtocol  = "protocols=any"
	backendRuleTLSOldest    = "backend-tls=oldest"
	backendRuleGrantReason  = "grant-reason="
)

// String renders the rules as the words following "invalid" in
// AnnotationUnresolvedBackendRefs ("" for the zero value).
func (r BackendRefRules) String() string {
	var words []string
	if r.ExternalNameAllowed {
		words = append(words, backendRuleExternalName)
	}
	if r.AnyProtocol {
		words = append(words, backendRuleAnyProtocol)
	}
	if r.TLSOldest {
		words = append(words, backendRuleTLSOldest)
	}
	if r.GrantReason != "" {
		words = append(words, backendRuleGrantReason+r.GrantReason)
	}
	return strings.Join(words, " ")
}

// ParseUnresolvedBackendRefs reads AnnotationUnresolvedBackendRefs:
// "ignore", or "invalid" optionally followed by the words of
// BackendRefRules ("invalid external-name=allowed protocols=any
// backend-tls=oldest grant-reason=RefNotPermitted").
func ParseUnresolvedBackendRefs(v string) (invalid bool, rules BackendRefRules, err error) {
	words := strings.Fields(v)
	if len(words) == 0 || (words[0] != "invalid" && words[0] != "ignore") {
		return false, rules, fmt.Errorf("unknown unresolved backendRefs rule %q (known: ignore, invalid, optionally followed by %s, %s, %s, %s<Reason>)",
			v, backendRuleExternalName, backendRuleAnyProtocol, backendRuleTLSOldest, backendRuleGrantReason)
	}
	if words[0] == "ignore" {
		if len(words) > 1 {
			return false, rules, fmt.Errorf("ignore takes no words (%q): they tell how invalid judges backendRefs", strings.Join(words[1:], " "))
		}
		return false, rules, nil
	}
	for _, w := range words[1:] {
		if reason, ok := strings.CutPrefix(w, backendRuleGrantReason); ok {
			if rules.GrantReason != "" {
				return false, BackendRefRules{}, fmt.Errorf("word %q given twice", backendRuleGrantReason)
			}
			if !conditionReason.MatchString(reason) || len(reason) > 1024 {
				return false, BackendRefRules{}, fmt.Errorf("%s%s: not a condition reason (CamelCase: a letter, then letters, digits, '_', ',' or ':')", backendRuleGrantReason, reason)
			}
			rules.GrantReason = reason
			continue
		}
		var set *bool
		switch w {
		case backendRuleExternalName:
			set = &rules.ExternalNameAllowed
		case backendRuleAnyProtocol:
			set = &rules.AnyProtocol
		case backendRuleTLSOldest:
			set = &rules.TLSOldest
		default:
			return false, BackendRefRules{}, fmt.Errorf("unknown word %q after invalid (known: %s, %s, %s, %s<Reason>)", w, backendRuleExternalName, backendRuleAnyProtocol, backendRuleTLSOldest, backendRuleGrantReason)
		}
		if *set {
			return false, BackendRefRules{}, fmt.Errorf("word %q given twice", w)
		}
		*set = true
	}
	return true, rules, nil
}

// Words of the other readings a kind's backendRefs and invalid policies
// take.
const (
	// backendRefAncestorsGateways ends AnnotationBackendRefs after a ";":
	// see Kind.BackendRefAncestorGateways.
	backendRefAncestorsGateways = "ancestors=gateways"
	// refsAfterConflicts follows "not-applied" in
	// AnnotationInvalidPolicies: see Kind.RefsAfterConflicts.
	refsAfterConflicts = "references=after-conflicts"
)

// ParseBackendRefSetting reads AnnotationBackendRefs: the paths
// (ParseBackendRefPaths), optionally followed by "; ancestors=gateways"
// (Kind.BackendRefAncestorGateways).
func ParseBackendRefSetting(v string) (paths []BackendRefPath, ancestorGateways bool, err error) {
	if head, tail, ok := strings.Cut(v, ";"); ok {
		if w := strings.TrimSpace(tail); w != backendRefAncestorsGateways {
			return nil, false, fmt.Errorf("unknown word %q after the paths (known: %s)", w, backendRefAncestorsGateways)
		}
		v, ancestorGateways = head, true
		if strings.TrimSpace(v) == "none" {
			return nil, false, fmt.Errorf("%s needs paths", backendRefAncestorsGateways)
		}
	}
	paths, err = ParseBackendRefPaths(v)
	return paths, ancestorGateways, err
}

// ParseInvalidPolicies reads AnnotationInvalidPolicies: "in-place", or
// "not-applied" optionally followed by "references=after-conflicts"
// (Kind.RefsAfterConflicts).
func ParseInvalidPolicies(v string) (notApplied, afterConflicts bool, err error) {
	words := strings.Fields(v)
	switch {
	case len(words) == 1 && words[0] == "in-place":
		return false, false, nil
	case len(words) == 1 && words[0] == "not-applied":
		return true, false, nil
	case len(words) == 2 && words[0] == "not-applied" && words[1] == refsAfterConflicts:
		return true, true, nil
	}
	return false, false, fmt.Errorf("unknown invalid-policies rule %q (known: in-place, not-applied, not-applied %s)", v, refsAfterConflicts)
}
