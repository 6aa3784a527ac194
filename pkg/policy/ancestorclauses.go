package policy

import (
	"fmt"
	"slices"
	"strings"
)

// ParseAncestor reads attache.dev/ancestor: an ancestor mode
// (ParseAncestorMode), then, separated by ";", a clause per
// implementation whose Gateways name the ancestors of a policy on a
// backend in their own way: "controller=<GatewayClass controllerName>
// service-gateways" (NGINX Gateway Fabric's BackendTLSPolicy: each of its
// Gateways whose routes use the target's object, as an object). It
// returns the mode and those controllers, in the order written.
func ParseAncestor(v string) (mode AncestorMode, serviceGatewaysBy []string, err error) {
	clauses := strings.Split(v, ";")
	if mode, err = ParseAncestorMode(clauses[0]); err != nil {
		return "", nil, err
	}
	if serviceGatewaysBy, err = parseControllerClauses(clauses[1:], "service-gateways"); err != nil {
		return "", nil, err
	}
	if len(serviceGatewaysBy) > 0 && mode != AncestorGateway {
		return "", nil, fmt.Errorf("%q: a controller=... service-gateways clause needs the mode gateway", v)
	}
	return mode, serviceGatewaysBy, nil
}

// FormatAncestor writes the setting as ParseAncestor reads it.
func FormatAncestor(mode AncestorMode, serviceGatewaysBy []string) string {
	s := string(mode)
	for _, ctl := range serviceGatewaysBy {
		s += "; controller=" + ctl + " service-gateways"
	}
	return s
}

// ServiceGatewaysAt reports whether the Gateways of implementation
// controller name the ancestors of the kind's policies on a backend as
// Kind.AncestorServiceGatewaysBy says.
func (k *Kind) ServiceGatewaysAt(controller string) bool {
	return k.Ancestor == AncestorGateway && slices.Contains(k.AncestorServiceGatewaysBy, controller)
}
