package gatewayapi

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Objects are decoded into projections: structs holding only the fields
// Add reads, each of the Gateway API or core type of that field. The
// unstructured converter does reflective work for every Go field of every
// struct it fills, present or not, so decoding whole objects (ObjectMeta,
// ServiceSpec, route matches and filters) would cost more than the rest of
// Add. Projections also keep a malformed field that does not shape the
// hierarchy (status, an annotation, a match, a targetPort) from discarding
// an object. TestProjections checks every projection against the typed
// objects of every served version.

// objectMeta is the part of metav1.ObjectMeta that Add reads besides the
// name and namespace, which come from the unstructured accessors.
type objectMeta struct {
	Labels     map[string]string `json:"labels,omitempty"`
	Generation int64             `json:"generation,omitempty"`
}

// metaObject projects GatewayClass and Namespace: their specs shape nothing.
type metaObject struct {
	Metadata objectMeta `json:"metadata"`
}

// gatewayObject projects gwv1.Gateway.
type gatewayObject struct {
	Metadata objectMeta  `json:"metadata"`
	Spec     gatewaySpec `json:"spec"`
}

type gatewaySpec struct {
	GatewayClassName gwv1.ObjectName        `json:"gatewayClassName"`
	Listeners        []listenerSpec         `json:"listeners"`
	AllowedListeners *gwv1.AllowedListeners `json:"allowedListeners,omitempty"`
}

// listenerSetObject projects gwv1.ListenerSet.
type listenerSetObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ParentRef gwv1.ParentGatewayReference `json:"parentRef"`
		Listeners []listenerSpec              `json:"listeners,omitempty"`
	} `json:"spec"`
}

// listenerSpec projects gwv1.Listener and gwv1.ListenerEntry, the
// listeners of Gateways and ListenerSets (without their TLS settings).
type listenerSpec struct {
	Name          gwv1.SectionName    `json:"name"`
	Hostname      *gwv1.Hostname      `json:"hostname,omitempty"`
	Port          gwv1.PortNumber     `json:"port"`
	Protocol      gwv1.ProtocolType   `json:"protocol"`
	AllowedRoutes *gwv1.AllowedRoutes `json:"allowedRoutes,omitempty"`
}

// serviceObject projects corev1.Service.
type serviceObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Ports []servicePort `json:"ports,omitempty"`
	} `json:"spec"`
}

// egBackendObject projects Envoy Gateway's Backend: the ports of its
// endpoints (a Unix socket has none).
type egBackendObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Endpoints []struct {
			IP *struct {
				Port int32 `json:"port"`
			} `json:"ip,omitempty"`
			FQDN *struct {
				Port int32 `json:"port"`
			} `json:"fqdn,omitempty"`
		} `json:"endpoints,omitempty"`
	} `json:"spec"`
}

// servicePort projects corev1.ServicePort.
type servicePort struct {
	Name string `json:"name,omitempty"`
	Port int32  `json:"port"`
}

// referenceGrantObject projects gwv1.ReferenceGrant (its whole spec).
type referenceGrantObject struct {
	Metadata objectMeta              `json:"metadata"`
	Spec     gwv1.ReferenceGrantSpec `json:"spec"`
}

// routeObject projects HTTPRoute, GRPCRoute and TLSRoute, and, without
// hostnames, TCPRoute and UDPRoute (see plainRouteObject). The route kinds
// share these fields' names and types. A backendRefs entry (BackendRef,
// HTTPBackendRef, GRPCBackendRef) inlines a BackendObjectReference; its
// weight and filters are not read.
type routeObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ParentRefs []gwv1.ParentReference `json:"parentRefs,omitempty"`
		Hostnames  []gwv1.Hostname        `json:"hostnames,omitempty"`
		Rules      []routeRule            `json:"rules,omitempty"`
	} `json:"spec"`
}

// plainRouteObject projects TCPRoute and UDPRoute, which have no hostnames.
type plainRouteObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ParentRefs []gwv1.ParentReference `json:"parentRefs,omitempty"`
		Rules      []routeRule            `json:"rules,omitempty"`
	} `json:"spec"`
}

type routeRule struct {
	Name        *gwv1.SectionName             `json:"name,omitempty"`
	BackendRefs []gwv1.BackendObjectReference `json:"backendRefs,omitempty"`
}

// httpRouteRulesObject projects gwv1.HTTPRoute for route delegation's
// admission (DecodeHTTPRouteRules): its rules' names and matches.
type httpRouteRulesObject struct {
	Spec struct {
		Rules []HTTPRouteRule `json:"rules,omitempty"`
	} `json:"spec"`
}

// HTTPRouteRule is an HTTPRoute rule as route delegation reads it: its
// name and its matches.
type HTTPRouteRule struct {
	Name    *gwv1.SectionName     `json:"name,omitempty"`
	Matches []gwv1.HTTPRouteMatch `json:"matches,omitempty"`
}
