// Package profiles holds attache's built-in kind profiles: for the policy
// kinds that Gateway API implementations ship (Gateway API itself, Envoy
// Gateway, Istio, NGINX Gateway Fabric, Kuadrant, Gloo Gateway, kgateway),
// the semantics each implementation gives them, so that attache understands
// a cluster's policies without annotations. docs/profiles.md says, per kind,
// where each setting comes from and what attache cannot model yet.
//
// A profile applies when its kind's CRD is present; the CRD's label and
// attache.dev/* annotations replace its settings one by one
// (policy.KindFromCRDWithProfile).
package profiles

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/holderdata"
	"github.com/attache-dev/attache/pkg/merge"
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// Implementation names, the origins shown for the settings they give.
const (
	GatewayAPI   = "Gateway API"
	EnvoyGateway = "Envoy Gateway"
	Istio        = "Istio"
	NGF          = "NGINX Gateway Fabric"
	Kuadrant     = "Kuadrant"
	Gloo         = "Gloo Gateway"
	KGateway     = "kgateway"
)

// GatewayClass controllerNames of the implementations, as they ship them
// (each can be configured otherwise; a class with another name gets the
// kinds' default readings).
const (
	// EnvoyGatewayController is Envoy Gateway's (api/v1alpha1
	// GatewayControllerName).
	EnvoyGatewayController = "gateway.envoyproxy.io/gatewayclass-controller"
	// NGFController is NGINX Gateway Fabric's (its Helm chart's
	// nginxGateway.gatewayControllerName).
	NGFController = "gateway.nginx.org/nginx-gateway-controller"
	// EGSDSSecretType is the type of Envoy Gateway's SDS reference
	// Secrets (api/v1alpha1 SDSSecretType): they name a secret an SDS
	// server serves, by its secretName and url keys (holderdata reads the
	// url of these only).
	EGSDSSecretType = holderdata.SDSSecretType
	// IstioController is Istio's gateway controller (istiod's
	// PILOT_GATEWAY_API_CONTROLLER_NAME default, features.
	// ManagedGatewayController), the default Kuadrant reads.
	IstioController = "istio.io/gateway-controller"
)

var (
	gk           = func(group, kind string) topology.GroupKind { return topology.GroupKind{Group: group, Kind: kind} }
	gatewayClass = topology.KindGatewayClass
	gateway      = topology.KindGateway
	listenerSet  = gk(topology.GatewayGroup, "ListenerSet")
	xListenerSet = gk("gateway.networking.x-k8s.io", "XListenerSet")
	httpRoute    = topology.KindHTTPRoute
	grpcRoute    = topology.KindGRPCRoute
	tlsRoute     = topology.KindTLSRoute
	tcpRoute     = topology.KindTCPRoute
	udpRoute     = topology.KindUDPRoute
	service      = topology.KindService
	serviceEntry = topology.KindServiceEntry
	// Backends other than Services that BackendTLSPolicy may target
	// ("Implementation-specific for any other resource"): Envoy
	// Gateway's Backend and the Multi-Cluster Services ServiceImport,
	// both of which Envoy Gateway resolves.
	egBackend     = topology.KindEnvoyGatewayBackend
	serviceImport = gk("multicluster.x-k8s.io", "ServiceImport")
)

func kinds(gks ...topology.GroupKind) []topology.GroupKind { return gks }

// noStanzas marks a profile's kind as having no GEP-713 stanzas.
func noStanzas(p policy.Profile) policy.Profile {
	p.Spec.NoStanzas = true
	return p
}

func entry(impl, group, kind, shipped string, s policy.Spec) policy.Profile {
	s.GroupKind = gk(group, kind)
	if s.Controllers == nil {
		s.Controllers = implControllers[impl]
	}
	return policy.Profile{Implementation: impl, Spec: s, ShippedLabel: shipped}
}

// implControllers are, per implementation, the GatewayClass controllerName
// values whose Gateways it serves, where it serves no others: Envoy
// Gateway and NGINX Gateway Fabric build only the Gateways of their own
// classes (EG: its translator's GatewayClass filter; NGF:
// graph/gateway.go processGateways), so their policies never reach
// another implementation's Gateway; Gloo Gateway builds a proxy only for
// the Gateways of its classes (solo-io/gloo projects/gateway2/proxy_syncer
// proxy_syncer.go: allowedGatewayClasses, "gloo-gateway" and the extra
// classes its settings name, whose controller is its own). The names are
// their defaults (each can be configured otherwise: an
// attache.dev/controllers annotation on the CRD says so). Istio's kinds
// name theirs in their profiles (IstioControllers; AuthorizationPolicy
// also kgateway's, whose waypoints read it); Kuadrant's RateLimitPolicy,
// AuthPolicy and TokenRateLimitPolicy name theirs in their profiles (its
// DNSPolicy and TLSPolicy act on any Gateway), and so do kgateway's kinds
// but BackendConfigPolicy, which kgateway attaches to its backends
// whatever Gateway uses them.
var implControllers = map[string][]string{
	EnvoyGateway: {EnvoyGatewayController},
	NGF:          {NGFController},
	Gloo:         {GlooController},
}

// kgatewayServed marks a kgateway kind's profile as serving kgateway's
// Gateways only: kgateway translates the Gateways of its own class
// (pkg/krtcollections/policy.go GatewaysForEnvoyTransformationFunc:
// EnvoyControllerName) and writes a policy's status.ancestors only for
// what that translation finds (pkg/kgateway/proxy_syncer/
// policy_target_status.go: "Policy status is otherwise produced by
// reverse lookup"), so a target that is another implementation's, or that
// takes effect only through such Gateways, is listed nowhere.
func kgatewayServed(p policy.Profile) policy.Profile {
	p.Spec.Controllers = []string{KGatewayController}
	p.Spec.OtherControllersUnlisted = true
	return p
}

// IstioControllers are the GatewayClass controllerNames of the Gateways
// whose Envoy proxies istiod configures with its policy kinds (istio/istio
// @ 86c9f01f pkg/config/constants: its gateway, unmanaged (istio-remote),
// mesh (waypoint) and east-west controllers). Its agentgateway
// controllers are left out: istiod serves agentgateway proxies from
// collections that read none of these kinds (pilot/pkg/config/kube/
// agentgateway; "Authz/Authn are not use for agentgateway").
var IstioControllers = []string{IstioController, "istio.io/unmanaged-gateway", IstioMeshController, "istio.io/eastwest-controller"}

// Default GatewayClass controllerNames of kgateway, Gloo Gateway and
// Istio's ambient waypoints (Istio's Gateways: IstioController).
const (
	KGatewayController  = "kgateway.dev/kgateway"
	GlooController      = "solo.io/gloo-gateway"
	IstioMeshController = "istio.io/mesh-controller"
)

// DelegationKinds is gatewayapi.Options.DelegationKinds for the
// implementations of the profiles: kgateway follows a route's backendRef
// to HTTPRoutes by name and by its label kind, Gloo Gateway by name and
// by its own label kind (kgateway pkg/kgateway/translator/backendref
// IsDelegatedHTTPRoute; solo-io/gloo projects/gateway2/translator/
// backendref/types.go RefIsDelegatedHTTPRoute); Envoy Gateway, NGINX
// Gateway Fabric and Istio follow none (an HTTPRoute is no backend kind of
// theirs). Other controllers are unknown.
func DelegationKinds(controller string) ([]topology.GroupKind, bool) {
	switch controller {
	case KGatewayController:
		return []topology.GroupKind{httpRoute, gatewayapi.KindDelegationLabel}, true
	case GlooController:
		return []topology.GroupKind{httpRoute, gatewayapi.KindGlooDelegationLabel}, true
	case EnvoyGatewayController, NGFController, IstioController, IstioMeshController:
		return nil, true
	}
	return nil, false
}

// GatewayRouteListenerSets is gatewayapi.Options.GatewayRouteListenerSets
// for the implementations of the profiles: Gloo Gateway attaches a route
// whose parentRef names a Gateway without sectionName to the listeners of
// that Gateway's XListenerSets as well (solo-io/gloo projects/gateway2/
// query/query.go isParentRefForResource: "If it is attached to the gateway
// but has no section name, it applies to the listener set also";
// httproute.go getRoutesForResource lists a listener set's routes with
// its parent Gateway's). kgateway follows Gateway API's rule (newest
// pkg/kgateway/query/query.go isParentRefForResource: the parentRef's
// group, kind, namespace and name are the ListenerSet's), as do the
// others and unknown controllers.
func GatewayRouteListenerSets(controller string) []topology.GroupKind {
	if controller == GlooController {
		return []topology.GroupKind{xListenerSet}
	}
	return nil
}

// glooRouteOptionOneofs are the oneofs of Gloo Gateway's RouteOptions
// (projects/gloo/api/v1/route_options.proto): the Go field, by whose name
// the enable-policy-overrides annotation names them, of their options
// (the members' JSON names).
var glooRouteOptionOneofs = []policy.FieldGroup{
	{Name: "hostRewriteType", Keys: []string{"hostRewrite", "autoHostRewrite", "hostRewritePathRegex", "hostRewriteHeader"}},
	{Name: "rateLimitEarlyConfigType", Keys: []string{"ratelimitEarly", "rateLimitEarlyConfigs"}},
	{Name: "rateLimitConfigType", Keys: []string{"ratelimit", "rateLimitConfigs"}},
	{Name: "rateLimitRegularConfigType", Keys: []string{"ratelimitRegular", "rateLimitRegularConfigs"}},
	{Name: "jwtConfig", Keys: []string{"jwt", "jwtStaged", "jwtProvidersStaged"}},
}

// glooVirtualHostOptionOneofs are the oneofs of Gloo Gateway's
// VirtualHostOptions (projects/gloo/api/v1/virtual_host_options.proto),
// as glooRouteOptionOneofs.
var glooVirtualHostOptionOneofs = []policy.FieldGroup{
	{Name: "rateLimitEarlyConfigType", Keys: []string{"ratelimitEarly", "rateLimitEarlyConfigs"}},
	{Name: "rateLimitConfigType", Keys: []string{"ratelimit", "rateLimitConfigs"}},
	{Name: "rateLimitRegularConfigType", Keys: []string{"ratelimitRegular", "rateLimitRegularConfigs"}},
	{Name: "jwtConfig", Keys: []string{"jwt", "jwtStaged"}},
}

// oneofsAt returns groups as oneofs of the object at path, their keys the
// members.
func oneofsAt(path string, groups []policy.FieldGroup) []policy.Oneof {
	out := make([]policy.Oneof, len(groups))
	for i, g := range groups {
		out[i] = policy.Oneof{Path: path, Members: slices.Clone(g.Keys)}
	}
	return out
}

// builtin lists every profile; docs/profiles.md documents each.
var builtin = func() []policy.Profile {
	egRoutes := kinds(httpRoute, grpcRoute, tcpRoute, udpRoute, tlsRoute)
	egInherited := func(kind string, routes []topology.GroupKind) policy.Profile {
		h := append(kinds(gateway, listenerSet), routes...)
		return entry(EnvoyGateway, "gateway.envoyproxy.io", kind, "", policy.Spec{
			Class: policy.Inherited, Hierarchy: h, TargetKinds: h, EffectiveSectionKinds: routes,
			// A route whose policy fails translation gets a 500 direct
			// response (fails closed).
			FailureStatus: 500,
			Strategies:    []merge.Strategy{merge.AtomicDefaults}, SameLevel: policy.SameLevelOldestWins,
			MergeTypeField: "mergeType", Ancestor: policy.AncestorGateway,
			MaxTargetRefs: policy.NoTargetRefLimit, // EG's CRDs set no maxItems
			// EG marks a policy Overridden for the routes and listeners
			// that have a policy of their own, whatever it sets.
			OverriddenByPresence: true,
		})
	}
	istioTargets := kinds(gateway, gatewayClass, service, serviceEntry)
	istio := func(group, kind string, comp policy.Composition, selector string) policy.Profile {
		return entry(Istio, group, kind, "", policy.Spec{
			Class: policy.Direct, TargetKinds: istioTargets, Composition: comp,
			TargetingFields: []string{selector},
			// Istio's targetRefs (PolicyTargetReference) have no
			// sectionName: the API server prunes one, and istiod
			// matches by group, kind and name (ShouldAttachPolicy).
			NoSectionNames: true,
			// A targetRef without group names the core group
			// (PolicyTargetReference: "empty string for core"); istiod's
			// webhook refuses {kind: Gateway} so written.
			EmptyTargetGroupCore: true,
			// Without targetRefs: the Istio Gateways of the namespace (all
			// namespaces from istio-system), narrowed by the selector.
			Untargeted: policy.UntargetedScope{Mode: policy.UntargetedIstio, RootNamespace: policy.DefaultIstioRootNamespace},
			// istiod configures the proxies of its own Gateways only:
			// a policy on another implementation's Gateway (or on a
			// Service bound to such a waypoint) matches no proxy it
			// serves (ShouldAttachPolicy matches a proxy's Gateway name
			// label), so it applies nowhere.
			Controllers: IstioControllers,
		})
	}
	ngfRoutes := kinds(httpRoute, grpcRoute)
	ngfInherited := func(kind string) policy.Profile {
		h := append(kinds(gateway), ngfRoutes...)
		return ngfStatus(entry(NGF, "gateway.nginx.org", kind, "inherited", policy.Spec{
			Class: policy.Inherited, Hierarchy: h, TargetKinds: h, EffectiveTargetKinds: ngfRoutes,
			Strategies: []merge.Strategy{merge.PatchDefaults}, SameLevel: policy.SameLevelMergeDisjoint,
			// A policy Conflicted at one target applies at none.
			ConflictScopePolicy: true,
			// Nor can it take a route sharing a location with another.
			RejectRouteOverlap: true,
			AncestorLimit:      policy.AncestorLimitSkip,
			// A policy its validator finds a problem with is left out.
			InvalidNotApplied: true,
		}))
	}
	kuadrant := func(kind string, routes []topology.GroupKind, named []string, backend policy.Dependency) policy.Profile {
		return entry(Kuadrant, "kuadrant.io", kind, "inherited", policy.Spec{
			Class: policy.Inherited, Hierarchy: append(kinds(gatewayClass, gateway), routes...),
			TargetKinds: append(kinds(gateway), routes...), EffectiveSectionKinds: routes,
			NamedRules: named,
			// Effective policies per GatewayClass-to-rule path only; a
			// policy on none is Enforced=False, "not in the path to any
			// existing routes" (effective_*_reconciler.go,
			// *_status_updater.go: kuadrant.NewErrNoRoutes).
			ReachThroughGateway: true,
			// Paths through every listener a route's parentRefs name,
			// admitted or not (PM gateway_api_topology.go
			// findListenerFromParentRefFunc).
			RouteParentRefs: true,
			// Paths through a listener or route that is not ready yet are
			// skipped (*_status_updater.go: IsListenerReady,
			// IsHTTPRouteReady, IsGRPCRouteReady).
			ReadyPathsOnly: true,
			// Only Istio's and Envoy Gateway's Gateways get a data plane
			// configuration (their default controller names; Kuadrant
			// reads more from ISTIO_GATEWAY_CONTROLLER_NAMES and
			// ENVOY_GATEWAY_GATEWAY_CONTROLLER_NAMES); a policy on a path
			// through another's Gateway is accepted and Enforced=False,
			// "waiting for the following components to sync: Gateway
			// (ns/name)" (data_plane_policies_workflow.go
			// getGatewayControllerNames; *_status_updater.go
			// enforcedCondition, default branch).
			Controllers:                   []string{IstioController, EnvoyGatewayController},
			OtherControllersNotProgrammed: true,
			// Accepted=False, MissingDependency, unless Gateway API, a
			// Gateway API provider and the kind's backend operator are
			// installed (*_policies_validator.go isMissingDependency).
			Dependencies: []policy.Dependency{kuadrantGatewayAPI, kuadrantProvider, backend},
			// Enforced=False, MissingResource, while no Kuadrant object
			// exists (enforcedCondition: GetKuadrantFromTopology, the
			// oldest one not being deleted, first of all).
			RequiredObjects: []policy.RequiredObject{kuadrantObject},
		})
	}
	glooListener := func(kind string) policy.Profile {
		return entry(Gloo, "gateway.solo.io", kind, "", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, xListenerSet),
			TargetKinds: kinds(gateway, xListenerSet), EffectiveSectionKinds: kinds(gateway, xListenerSet),
			Strategies: []merge.Strategy{merge.AtomicDefaults}, SameLevel: policy.SameLevelOldestWins,
			GatewaySectionsByName: true,
		})
	}
	listenerDirect := func(impl, group, kind, shipped string, same policy.SameLevel, targets ...topology.GroupKind) policy.Profile {
		return entry(impl, group, kind, shipped, policy.Spec{
			Class: policy.Direct, TargetKinds: targets, EffectiveSectionKinds: kinds(targets[0]),
			DirectSections: true, SameLevel: same,
		})
	}
	return []policy.Profile{
		// Gateway API.
		entry(GatewayAPI, topology.GatewayGroup, "BackendTLSPolicy", "Direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(service, egBackend, serviceImport),
			EffectiveSectionKinds: kinds(service, egBackend, serviceImport),
			DirectSections:        true, SameLevel: policy.SameLevelOldestWins, Ancestor: policy.AncestorGateway,
			// NGINX Gateway Fabric selects the oldest of the policies on
			// the Service and on the port (selectBackendTLSPolicyForService):
			// the port's does not beat the Service's there.
			SectionsUnrankedBy: []string{NGFController},
			// NGINX Gateway Fabric names as ancestors each of its Gateways
			// whose routes use the Service, any port, as an object
			// (addGatewaysForBackendTLSPolicies, collectOrderedGateways,
			// PrepareBackendTLSPolicyRequests).
			AncestorServiceGatewaysBy: []string{NGFController},
			// Core support: one ConfigMap with the certificate under ca.crt;
			// at the Gateways of an implementation that reads more, as it
			// reads them.
			CARefs: policy.CARefs{Field: "validation.caCertificateRefs", ByController: []policy.ControllerCARefs{
				// Envoy Gateway (getCaCertsFromCARefs): by kind alone,
				// ConfigMaps and Secrets (ca.crt, else tls.crt, else their
				// only key) and ClusterTrustBundles; other kinds skipped;
				// the first reference that does not resolve fails the
				// policy, an empty bundle adds nothing; one SDS reference
				// Secret instead of certificates, with
				// extensionApis.enableSDSSecretRef (v1.9.1).
				{Controller: EnvoyGatewayController, CAReading: policy.CAReading{
					Kinds: []topology.GroupKind{policy.KindConfigMap, policy.KindSecret, policy.KindClusterTrustBundle},
					Keys:  []string{"ca.crt", "tls.crt", "*"}, AnyGroup: true, Strict: true, SkipUnknown: true,
					SDSType: EGSDSSecretType, SDSFeature: EGEnableSDSSecretRef}},
				// NGINX Gateway Fabric (validateBackendTLSCACertRef,
				// resolver/configmaps.go and secrets.go): one reference
				// (more: Invalid), of group "" or core, to a ConfigMap
				// with ca.crt or a kubernetes.io/tls Secret (tls.crt and
				// tls.key; its ca.crt is optional).
				{Controller: NGFController, CAReading: policy.CAReading{
					Kinds: []topology.GroupKind{policy.KindConfigMap, policy.KindSecret}, Keys: []string{"ca.crt"}, Max: 1,
					SecretType: "kubernetes.io/tls", SecretKeys: []string{"tls.crt", "tls.key"}}},
			}},
		}),
		entry(GatewayAPI, "gateway.networking.x-k8s.io", "XBackendTrafficPolicy", "Direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(service), SameLevel: policy.SameLevelOldestWins,
		}),
		// Envoy Gateway.
		// ClientTrafficPolicy: a Gateway-wide policy covers the listeners of
		// the Gateway's ListenerSets too; a ListenerSet or listener policy
		// replaces it whole there.
		// Buffer limits and HTTP/2 windows are bounded by the translator
		// (buildConnection, buildIRHTTP2Settings), not the CRD's schema.
		// Its TLS cipher suites are checked against the ones Envoy
		// accepts, for the listeners that terminate TLS only
		// (buildListenerTLSParameters: validateCipherSuites).
		withValidations(withValueRanges(withObjectRefs(entry(EnvoyGateway, "gateway.envoyproxy.io", "ClientTrafficPolicy", "", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, listenerSet),
			TargetKinds: kinds(gateway, listenerSet), EffectiveSectionKinds: kinds(gateway, listenerSet),
			Strategies: []merge.Strategy{merge.AtomicDefaults}, SameLevel: policy.SameLevelOldestWins,
			MaxTargetRefs: policy.NoTargetRefLimit,
			// A policy on a plain-HTTP listener sharing its port with
			// listeners it does not target is rejected there.
			RejectSharedPort:     true,
			OverriddenByPresence: true,
		}),
			// Client CA certificates and CRLs: read for the listeners that
			// terminate TLS only (buildListenerTLSParameters).
			"tls.clientValidation.caCertificateRefs[] kinds=Secret,ConfigMap keys=ca.crt,* on=HTTPS,TLS",
			"tls.clientValidation.crl.refs[] kinds=Secret,ConfigMap keys=ca.crl,* on=HTTPS,TLS content=crl"),
			egListenerBufferAndWindows), append(egCipherSuiteValidations, egHTTP10DefaultHost...)),
		// The ConfigMaps and Secrets whose data Envoy Gateway's translator
		// reads (object refs): one it cannot find, or without the key it
		// reads, makes the policy Invalid.
		// Bounded by the translator too: buildBackendConnection,
		// buildRequestBuffer, buildIRHTTP2Settings.
		// Its rate-limit matches by regular expression are compiled
		// (buildRateLimitRule: regex.Validate, Go's regexp).
		// Bandwidth limits and local rate limits are checked in code too
		// (buildBandwidthLimit, buildLocalRateLimit, buildRateLimitRule).
		withValidations(withRegexFields(withValueRanges(withObjectRefs(egInherited("BackendTrafficPolicy", egRoutes),
			"responseOverride[].response.body.valueRef kinds=ConfigMap keys=response.body,+ when=type=ValueRef"),
			egBufferAndWindows+"; requestBuffer.limit=0..4294967295"), egRateLimitRegexes), egBackendTrafficValidations),
		// The backends of their external services (extAuth, JWKS, OIDC
		// provider, extProc): Envoy Gateway makes the policy their
		// BackendTLSPolicy's ancestor (processExtServiceDestination).
		// On a TCPRoute, only authorization by client CIDRs
		// (validateSecurityPolicyForTCP); on TCP listeners the rest is
		// left out without a word.
		// A reference to a Backend needs extensionApis.enableBackend
		// (processExtServiceDestination), off by default.
		// Its authorization paths by regular expression are compiled
		// (validateAuthorizationOperation); GeoIP authorization needs the
		// listener's client IP detection and the EnvoyProxy's GeoIP
		// databases (validateAuthorizationGeoIP).
		// The retry back-off, buffer limit and HTTP/2 windows of its
		// external services are checked as a BackendTrafficPolicy's
		// (translateTrafficFeatures: buildRetry, buildBackendConnection,
		// buildIRHTTP2Settings).
		withValueRanges(withValidations(withRequirements(withRegexFields(withFeatureGates(withFailOpen(withUnsupportedFields(withObjectRefs(withBackendRefs(egInherited("SecurityPolicy", kinds(httpRoute, grpcRoute, tcpRoute)),
			"extAuth.grpc.backendRef", "extAuth.grpc.backendRefs[]", "extAuth.http.backendRef", "extAuth.http.backendRefs[]",
			"jwt.providers[].remoteJWKS.backendRefs[]", "oidc.provider.backendRefs[]"),
			"apiKeyAuth.credentialRefs[] kinds=Secret content=distinct",
			"basicAuth.users kinds=Secret keys=.htpasswd",
			"oidc.clientIDRef kinds=Secret keys=client-id",
			"oidc.clientSecret kinds=Secret keys=client-secret",
			"jwt.providers[].localJWKS.valueRef kinds=ConfigMap keys=jwks,+ when=type=ValueRef",
			"extAuth.contextExtensions[].valueRef kinds=ConfigMap,Secret"),
			"TCPRoute=cors,csrf,jwt,oidc,apiKeyAuth,basicAuth,extAuth,authorization.rules[].cel,authorization.rules[].principal.jwt,"+
				"authorization.rules[].principal.headers,authorization.rules[].principal.clientIPGeoLocations"),
			// An external authorizer failing open is skipped, not a 500.
			"extAuth=failOpen"), egBackendGate),
			"authorization.rules[].operation.path.value when=type=RegularExpression"), egGeoIPRequirements), egSecurityValidations), egExternalServiceRanges("extAuth.http.backendSettings", "extAuth.grpc.backendSettings", "oidc.provider.backendSettings", "jwt.providers[].remoteJWKS.backendSettings")),
		// Lua is off unless Envoy Gateway's configuration enables it
		// (ExtensionAPISettings.LuaDisabled; the translator refuses the
		// policy: "Skipping Lua EnvoyExtensionPolicy as feature is
		// disabled"). A script, inline or from a ConfigMap, must define
		// envoy_on_request or envoy_on_response (luavalidator, whatever
		// the EnvoyProxy's luaValidation), parse as Lua unless the
		// EnvoyProxy the Gateway runs with says luaValidation: Disabled,
		// and run against Envoy's Lua API without error unless it says
		// Disabled or InsecureSyntax (Strict, the default; package
		// envoylua is attache's model of that API).
		withValueRanges(withValidations(withRegexFields(withAllowlists(withFeatureGates(withFailOpen(withObjectRefs(withBackendRefs(egInherited("EnvoyExtensionPolicy", egRoutes), "extProc[].backendRef", "extProc[].backendRefs[]"),
			"lua[].valueRef kinds=ConfigMap keys=lua,+ when=type=ValueRef content=lua",
			"wasm[].code.image.pullSecretRef kinds=Secret keys=.dockerconfigjson",
			"wasm[].code.image.tls.caCertificateRef kinds=Secret,ConfigMap keys=ca.crt,*",
			"wasm[].code.http.tls.caCertificateRef kinds=Secret,ConfigMap keys=ca.crt,*"),
			// Extension processors and Wasm modules failing open are
			// skipped (Lua has no such flag).
			"extProc[]=failOpen; wasm[]=failOpen"), egEnableLua+"=lua; "+egBackendGate),
			// A dynamic module must be registered in the EnvoyProxy the
			// Gateway runs with (buildDynamicModules: "is not registered
			// in the EnvoyProxy dynamicModules allowlist").
			"dynamicModule[].name=dynamicModules[].name"),
			"lua[].inline syntax=lua when=type=Inline unless=luaValidation=Disabled; "+
				"lua[].inline syntax=envoy-lua when=type=Inline unless=luaValidation=Disabled|InsecureSyntax; "+
				"lua[].valueRef syntax=lua when=type=ValueRef unless=luaValidation=Disabled; "+
				"lua[].valueRef syntax=envoy-lua when=type=ValueRef unless=luaValidation=Disabled|InsecureSyntax"), slices.Concat(egLuaValidations, egExtensionRetryValidations)), egExternalServiceRanges("extProc[].backendSettings")),
		// EnvoyPatchPolicy is off unless the configuration enables it:
		// Envoy Gateway does not even watch it then, and its translator
		// says Disabled. It patches one data plane: a Gateway, or the
		// GatewayClass whose EnvoyProxy merges its Gateways, found by
		// the targetRef's name (ProcessEnvoyPatchPolicies).
		withFeatureGates(entry(EnvoyGateway, "gateway.envoyproxy.io", "EnvoyPatchPolicy", "", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(gatewayClass, gateway), Composition: policy.CompositionAdditive,
			DataPlaneTarget: true,
		}), egEnableEnvoyPatchPolicy+"=*"),
		// Istio.
		// istiod writes its WaypointAccepted condition of an
		// AuthorizationPolicy with targetRefs flattened over them
		// (WaypointPolicyStatusCollection, flattenConditions); of the
		// other kinds it writes none.
		// kgateway's waypoints (class kgateway-waypoint) read Istio's
		// AuthorizationPolicies too (kgateway's waypoint translator,
		// buildServiceChains): its controller is served as well, for
		// all of its Gateways (attache tells controllers apart, not
		// classes).
		withControllers(withIstioWaypointSummary(withWaypointTargets(istio("security.istio.io", "AuthorizationPolicy", policy.CompositionAdditive, "selector"))),
			append(slices.Clone(IstioControllers), KGatewayController)...),
		withWaypointTargets(istio("security.istio.io", "RequestAuthentication", policy.CompositionAdditive, "selector")),
		// Telemetry: istiod's layering (root namespace, namespace,
		// workload) and its per-provider merges.
		withWaypointTargets(istio("telemetry.istio.io", "Telemetry", policy.CompositionIstioTelemetry, "selector")),
		withWaypointTargets(istio("extensions.istio.io", "WasmPlugin", policy.CompositionAdditive, "selector")),
		// TrafficExtension (istio.io/api v1.31, extended channel):
		// WasmPlugin's successor, a Wasm or a Lua filter, targeted as
		// WasmPlugin is; istiod translates WasmPlugins into
		// TrafficExtensions and applies both alike.
		withWaypointTargets(istio("extensions.istio.io", "TrafficExtension", policy.CompositionAdditive, "selector")),
		// EnvoyFilter: its proto lists Service and ServiceEntry targets,
		// but istiod matches EnvoyFilters with the proxy's policy matcher,
		// never with a Service (getMatchedEnvoyFilters), so such a target
		// never applies. That matcher takes the waypoint class from the
		// root namespace at every waypoint (ShouldAttachPolicy), and a
		// waypoint's filters act on its Services' traffic.
		withWaypointTargets(withTargetKinds(istio("networking.istio.io", "EnvoyFilter", policy.CompositionAdditive, "workloadSelector"), gateway, gatewayClass)),
		// NGINX Gateway Fabric.
		// Its policy kinds but ExternalLoadBalancer apply only at the
		// ancestors their status can list (graph/policies.go attachPolicyToGateway,
		// attachPolicyToRoute, attachPolicyToService: AncestorLimitSkip).
		// Two policies at one target conflict only on the fields NGF's
		// validators compare (Conflicts in policies/<kind>/validator.go).
		// Each validator also checks in code the NGINX sizes and
		// durations (and, per kind, other strings) it writes into the
		// configuration (ngfClientSettingsFormats and the others).
		withValidations(withConflictFields(ngfInherited("ClientSettingsPolicy"), "body.timeout", "body.maxSize", "body.bufferSize",
			"keepAlive.requests", "keepAlive.time", "keepAlive.timeout", "keepAlive.minTimeout"), ngfClientSettingsFormats),
		withValidations(withConflictFields(ngfInherited("ProxySettingsPolicy"), "buffering.disable", "buffering.bufferSize", "buffering.buffers",
			"buffering.busyBuffersSize", "timeout.connect", "timeout.read", "timeout.send"), append(ngfProxySettingsFormats, ngfProxyBufferValidations...)),
		// RateLimitPolicy: several policies on one target all add their
		// rules, but for two that both set dryRun, logLevel or
		// rejectCode: the newer is Conflicted, everywhere (ratelimit/
		// validator.go). NGF writes the Gateway's policies at its server
		// and a route's at its location (ratelimit/generator.go,
		// tmplServer, tmplLocation), and NGINX lets a location inherit
		// each directive from the server only when it writes none of its
		// own: dryRun, logLevel and rejectCode one by one (limit_req_
		// dry_run, _log_level, limit_req_status; NGF writes none for
		// false or zero), and the rules as a group (limit_req: a route
		// with rules of its own does not get the Gateway's, whatever
		// NGF's docs say; hack/nginx-limit-req-inheritance.sh shows it).
		func() policy.Profile {
			p := withConflictFields(ngfInherited("RateLimitPolicy"), "rateLimit.dryRun", "rateLimit.logLevel", "rateLimit.rejectCode")
			p.Spec.Composition = policy.CompositionAdditive
			p.Spec.InheritedFields = []string{"rateLimit.dryRun", "rateLimit.logLevel", "rateLimit.rejectCode"}
			p.Spec.LevelInheritedFields = []string{"rateLimit.local.rules"}
			p.Spec.Validations = ngfRateLimitFormats
			return p
		}(),
		withValidations(ngfStatus(entry(NGF, "gateway.nginx.org", "ObservabilityPolicy", "direct", policy.Spec{
			Class: policy.Direct, TargetKinds: ngfRoutes, SameLevel: policy.SameLevelMergeDisjoint, ConflictScopePolicy: true,
			RejectRouteOverlap: true, ConflictFields: []string{"tracing"}, AncestorLimit: policy.AncestorLimitSkip,
			InvalidNotApplied: true, Requirements: ngfTelemetryRequirements,
		})), ngfObservabilityFormats),
		withValidations(ngfStatus(entry(NGF, "gateway.nginx.org", "UpstreamSettingsPolicy", "direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(service), SameLevel: policy.SameLevelMergeDisjoint, ConflictScopePolicy: true,
			ConflictFields: []string{"zoneSize", "keepAlive.connections", "keepAlive.requests", "keepAlive.time", "keepAlive.timeout",
				"loadBalancingMethod", "hashMethodKey", "useClusterIP"},
			// NGF names the Gateway without the route's sectionName.
			Ancestor: policy.AncestorGatewayObject, AncestorLimit: policy.AncestorLimitSkip, InvalidNotApplied: true,
		})), append(ngfUpstreamSettingsFormats, ngfOSSLoadBalancing...)),
		// SnippetsPolicy, PayloadProcessor and ExternalLoadBalancer are
		// processed only when a flag of NGF's controller turns them on
		// (off in its Helm chart): NGF then neither watches nor validates
		// them (manager.go featureFlagControllerCfgs, createPolicyManager).
		withFeatureGates(ngfStatus(entry(NGF, "gateway.nginx.org", "SnippetsPolicy", "direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(gateway), Composition: policy.CompositionAdditive,
			AncestorLimit: policy.AncestorLimitSkip, InvalidNotApplied: true,
		})), NGFSnippets+"=*"),
		// PayloadProcessor: a route's own processor, else its Gateway's,
		// whole (resolveEffectivePayloadProcessors); any two on one target
		// conflict (its Conflicts is always true), the newer everywhere.
		// Its ExtProcess backend (a Service, granted when in another
		// namespace, with the port named; an ExternalName one allowed;
		// the oldest BackendTLSPolicy on it valid) and its auth token
		// Secret (in its namespace, key token) must resolve, else NGF
		// marks it invalid (validatePayloadProcessorRefs,
		// resolvePayloadProcessor), after it has marked conflicts
		// (processPolicies): such a policy still rejects a newer one.
		// A BackendTLSPolicy on the backend takes the Gateways the
		// processor applies through as ancestors
		// (addPayloadProcessorBackendServicesToReferencedServices).
		withValidations(withFeatureGates(withObjectRefs(ngfStatus(entry(NGF, "gateway.nginx.org", "PayloadProcessor", "inherited", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, httpRoute), TargetKinds: kinds(gateway, httpRoute),
			EffectiveTargetKinds: kinds(httpRoute), Strategies: []merge.Strategy{merge.AtomicDefaults},
			SameLevel: policy.SameLevelMergeDisjoint, ConflictScopePolicy: true, RejectRouteOverlap: true,
			AncestorLimit: policy.AncestorLimitSkip, InvalidNotApplied: true, RefsAfterConflicts: true,
			Requirements: ngfPayloadProcessorRequirements,
			BackendRefs:  []policy.BackendRefPath{"processors[].extProcess.backendRef"}, BackendRefAncestorGateways: true,
			InvalidOnUnresolvedBackendRefs: true,
			BackendRefRules:                policy.BackendRefRules{ExternalNameAllowed: true, AnyProtocol: true, TLSOldest: true, GrantReason: "RefNotPermitted"},
		})), "processors[].extProcess.authTokenRef kinds=Secret keys=token content=nonblank"), NGFPayloadProcessor+"=*"), ngfPayloadProcessorBackendRef),
		// WAFPolicy: NGF writes the F5 WAF directives of every valid
		// WAFPolicy reaching a route, the Gateway's at its server, the
		// route's at its location, several on one target side by side
		// (waf/validator.go Conflicts is always false; waf/generator.go
		// one file per policy): additive, what NGF configures. Which of
		// them F5 WAF for NGINX enforces where they meet is its own
		// (closed) module's doing, not established.
		// The Secrets it names for fetching bundles (processWAFPolicies:
		// resolveBundleAuth, a token or a username; resolveTLSCA, ca.crt)
		// must resolve, else NGF marks it invalid (ResolvedRefs=False
		// InvalidRef, Accepted left True) and does not apply it.
		func() policy.Profile {
			h := append(kinds(gateway), ngfRoutes...)
			return withObjectRefs(entry(NGF, "gateway.nginx.org", "WAFPolicy", "inherited", policy.Spec{
				Class: policy.Inherited, Hierarchy: h, TargetKinds: h, EffectiveTargetKinds: ngfRoutes,
				Strategies: []merge.Strategy{merge.PatchDefaults}, Composition: policy.CompositionAdditive,
				RejectRouteOverlap: true, AncestorLimit: policy.AncestorLimitSkip, InvalidNotApplied: true,
				MissingTargetsUnlisted: true, Requirements: ngfWAFRequirements,
			}), "policySource.auth.secretRef kinds=Secret keys=token,username", "policySource.tlsSecret kinds=Secret keys=ca.crt",
				"securityLogs[].logSource.auth.secretRef kinds=Secret keys=token,username", "securityLogs[].logSource.tlsSecret kinds=Secret keys=ca.crt")
		}(),
		// ExternalLoadBalancer: one per Gateway, the oldest (then by
		// namespace/name); the others Conflicted (processExternalLoadBalancers).
		withFeatureGates(entry(NGF, "gateway.nginx.org", "ExternalLoadBalancer", "direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(gateway), SameLevel: policy.SameLevelOldestWins, MaxTargetRefs: 1,
		}), NGFExternalLoadBalancer+"=*"),
		// Kuadrant.
		kuadrant("RateLimitPolicy", kinds(httpRoute, grpcRoute), []string{"limits"}, kuadrantLimitador),
		// AuthPolicy.Rules(): response.unauthenticated and
		// response.unauthorized are one rule each, so rules.response is a
		// map of named rules whose success entry holds two more.
		kuadrant("AuthPolicy", kinds(httpRoute, grpcRoute), []string{"patterns", "rules.authentication", "rules.metadata",
			"rules.authorization", "rules.callbacks", "rules.response", "rules.response.success",
			"rules.response.success.headers", "rules.response.success.filters"}, kuadrantAuthorino),
		// Any rule overridden makes a TokenRateLimitPolicy Enforced=False,
		// reason Unknown ("policy rule(s) overridden: ..."), where the
		// other two stay Enforced, "partially enforced"
		// (tokenratelimitpolicy_status_updater.go enforcedCondition).
		withPartlyOverriddenNotProgrammed(kuadrant("TokenRateLimitPolicy", kinds(httpRoute), []string{"limits"}, kuadrantLimitador)),
		// Kuadrant rejects a policy only when another with the same
		// targetRefs is strictly older (dnspolicies_validator.go,
		// tlspolicies_validator.go isConflict: CreationTimestamp.Before):
		// policies created in the same second both stand.
		// DNSPolicy makes records for the listeners with a hostname and
		// attached routes only, of Gateways with addresses
		// (effective_dnspolicies_reconciler.go: "listener has no hostname
		// assigned, skipping", "listener has no attached routes, skipping
		// record create", read from the Gateway's status.listeners; "record
		// for listener has no addresses, skipping record create", its
		// endpoints built from status.addresses); TLSPolicy (which does not read
		// attached routes) certificates for those that
		// terminate TLS with Secrets of their own namespace
		// (effective_tls_policies_reconciler.go,
		// validateGatewayListenerBlock).
		// Its provider Secret (providerRefs, in its own namespace) is read
		// by the DNS operator for each DNSRecord, which stays not Ready
		// without it: the policy is then not enforced where it made
		// records (dns-operator internal/provider/factory.go ProviderFor;
		// KO dnspolicy_status_updater.go enforcedCondition).
		// An entry of excludeAddresses holding a '/' must be a CIDR, else
		// the policy is not accepted (dnspolicy_types.go
		// ExcludeAddresses.Validate, run by dnspolicies_validator.go
		// after the conflicts); it keeps the listeners it targets from
		// the Gateway's policy all the same (listenersForPolicy counts
		// every DNSPolicy on a listener).
		withValidations(withDNSProviderSecret(withDependencies(withEffectiveListeners(withTiesNotRejected(listenerDirect(Kuadrant, "kuadrant.io", "DNSPolicy", "direct", policy.SameLevelOldestWins, gateway)), policy.ListenerHostname, policy.ListenerAttachedRoutes, policy.ListenerAddresses),
			kuadrantGatewayAPI, kuadrantDNSOperator)), kuadrantExcludeAddresses),
		// A TLSPolicy's issuerRef names a cert-manager Issuer of its own
		// namespace (kind Issuer) or a ClusterIssuer: one not found, or
		// an issuerRef naming no kind (the topology links a policy to an
		// Issuer only when its kind says Issuer), makes it Invalid
		// ("unable to find issuer": tlspolicies_validator.go
		// isIssuerFound; tls_workflow.go LinkTLSPolicyToIssuerFunc); one
		// not Ready keeps it from being enforced
		// (tlspolicy_status_updater.go isIssuerReady).
		withDependencies(withTLSIssuer(withEffectiveListeners(withTiesNotRejected(listenerDirect(Kuadrant, "kuadrant.io", "TLSPolicy", "direct", policy.SameLevelOldestWins, gateway)), policy.ListenerHostname, policy.ListenerTLSTerminate)),
			kuadrantGatewayAPI, kuadrantCertManager),
		// Kuadrant's extension kinds that feed its data plane directly
		// (the translated PlanPolicy and OIDCPolicy are not policy kinds
		// here). TelemetryPolicy: each adds its metric labels to its
		// Gateway's configuration; a label two set is taken from either
		// (a map walk). ThreatPolicy: each adds its threat check to the
		// routes of its Gateway or to its route, all of them kept. Both
		// key what they register by the target's kind, namespace and name,
		// never its sectionName (internal/extension/manager.go
		// createLocatorFromProtobuf, PipelineCommit's TargetRef).
		entry(Kuadrant, "extensions.kuadrant.io", "TelemetryPolicy", "", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(gateway), Composition: policy.CompositionAdditive, MaxTargetRefs: 1,
			SectionNamesIgnored: true,
		}),
		entry(Kuadrant, "extensions.kuadrant.io", "ThreatPolicy", "", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, httpRoute), TargetKinds: kinds(gateway, httpRoute),
			EffectiveTargetKinds: kinds(httpRoute), Composition: policy.CompositionAdditive, MaxTargetRefs: 1,
			SectionNamesIgnored: true,
		}),
		// Gloo Gateway.
		// RouteOption: per route rule, the RouteOptions its ExtensionRef
		// filters name come first (in filter order), then every RouteOption
		// targeting the route, oldest first; each top-level option (an
		// entry of `options`) is taken whole from the first that sets it.
		entry(Gloo, "gateway.solo.io", "RouteOption", "", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(httpRoute), TargetKinds: kinds(httpRoute),
			EffectiveSectionKinds: kinds(httpRoute), Strategies: []merge.Strategy{merge.PatchDefaults},
			SameLevel: policy.SameLevelOldestFirst, NamedRules: []string{"options"}, FilterAttachment: true,
			// Across route delegation the delegating route's options win,
			// but in the options its annotation names ("*": all), by the
			// names of RouteOptions' Go fields, in any case: an option of
			// a oneof by the oneof's name.
			DelegationPriority: policy.DelegationPriority{Annotation: "delegation.gateway.solo.io/enable-policy-overrides",
				ChildFields: "options", Groups: glooRouteOptionOneofs},
			// A oneof is one Go field of RouteOptions, which those merges
			// take whole: the winning policy's member, never two.
			Oneofs: oneofsAt("options", glooRouteOptionOneofs),
		}),
		// VirtualHostOption: the options of every VirtualHostOption reaching a
		// listener are shallow-merged, the listener's (more specific) first,
		// then the ListenerSet's, then the Gateway listener's of that name,
		// then the Gateway's, older first at each:
		// each top-level option is taken whole from the first that sets it.
		entry(Gloo, "gateway.solo.io", "VirtualHostOption", "", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, xListenerSet),
			TargetKinds: kinds(gateway, xListenerSet), EffectiveSectionKinds: kinds(gateway, xListenerSet),
			Strategies: []merge.Strategy{merge.PatchDefaults}, SameLevel: policy.SameLevelOldestFirst,
			NamedRules: []string{"options"},
			// A oneof is one Go field (ShallowMergeVirtualHostOptions).
			Oneofs: oneofsAt("options", glooVirtualHostOptionOneofs),
			// A Gateway listener's options reach the XListenerSet
			// listeners of its name, after the XListenerSet's own.
			GatewaySectionsByName: true,
		}),
		// ListenerOption, HttpListenerOption: at a listener, the first
		// option in the order of VirtualHostOptions (the XListenerSet's
		// listener, the XListenerSet, the Gateway's listener of that
		// name, the Gateway; older first at each) is used whole, the
		// others ignored.
		glooListener("ListenerOption"),
		glooListener("HttpListenerOption"),
		// kgateway.
		// A policy naming a Secret that does not resolve (missing, or in
		// another namespace without a ReferenceGrant) has errors.
		kgatewayServed(withObjectRefs(entry(KGateway, "gateway.kgateway.dev", "TrafficPolicy", "Direct", policy.Spec{
			Class: policy.Inherited, Hierarchy: kinds(gateway, listenerSet, xListenerSet, httpRoute),
			TargetKinds: kinds(gateway, listenerSet, xListenerSet, httpRoute), EffectiveSectionKinds: kinds(httpRoute),
			Strategies: []merge.Strategy{merge.PatchDefaults},
			// At one target, policies are ordered by weight (higher
			// first), then age; the first to set a top-level field keeps
			// it, the others fill only fields it leaves unset.
			SameLevel: policy.SameLevelOldestFirst, WeightAnnotation: "kgateway.dev/policy-weight",
			// A rule's ExtensionRef filter naming a TrafficPolicy attaches
			// it there, ahead of the policies targeting the rule; one
			// naming a TrafficPolicy that does not exist has the rule
			// replaced by a 500 direct response (route replacement:
			// "invalid route configuration detected and replaced with a
			// direct response").
			FilterAttachment: true, MissingFilterStatus: 500,
			// Route replacement: what a policy with errors reaches is
			// answered with a 500 direct response, whether or not the
			// policy wins a field there (kgateway merges every attached
			// policy and keeps the errors of each): the rules below a
			// route or rule, every request of a Gateway's HTTP(S)
			// listeners, a listener's (on HTTP, its hosts').
			RouteReplacement: 500,
			// A shallow merge: each top-level field is taken whole from
			// the most specific policy that sets it.
			NamedRules: []string{"."},
			// Across route delegation the child route's policies win,
			// unless the delegating route says ShallowMergePreferParent
			// (the Deep values prefer the child for all but a few fields).
			DelegationPriority: policy.DelegationPriority{Annotation: "kgateway.dev/inherited-policy-priority",
				Parent: []string{"ShallowMergePreferParent"},
				Child:  []string{"ShallowMergePreferChild", "DeepMergePreferChild", "DeepMergePreferParent"}},
			// Its status names the Gateways (a route's parentRefs as
			// written; a delegated child's, its parents'), never a route;
			// a listener target's Gateway without the listener.
			Ancestor: policy.AncestorGatewayParentRefs,
		}), "basicAuth.secretRef kinds=Secret", "apiKeyAuth.secretRef kinds=Secret keys=+")),
		// The policies on a Gateway and on its listeners merge as
		// TrafficPolicies do (weight, then age; the more specific level
		// first), field by field inside `default` and each `perPort`
		// entry's `listener` (their `httpSettings` one level deeper),
		// entries of `perPort` by port. At a listener, the merged entry
		// for its port replaces `default` whole. Its configuration is a
		// field named `default`: no GEP-713 stanzas. Its status names the
		// Gateway, without a listener, and its ListenerSets.
		kgatewayServed(entry(KGateway, "gateway.kgateway.dev", "ListenerPolicy", "Direct", policy.Spec{
			// A Gateway's policies reach the listeners of the
			// ListenerSets (and XListenerSets) it admits too, after those
			// of the listener itself (it can target Gateways only).
			Class: policy.Inherited, Hierarchy: kinds(gateway, listenerSet, xListenerSet), TargetKinds: kinds(gateway),
			EffectiveSectionKinds: kinds(gateway, listenerSet, xListenerSet),
			Strategies:            []merge.Strategy{merge.PatchDefaults}, NoStanzas: true,
			SameLevel: policy.SameLevelOldestFirst, WeightAnnotation: "kgateway.dev/policy-weight",
			SchemaMerge:   true,
			NamedRules:    []string{"default", "default.httpSettings", "perPort[].listener", "perPort[].listener.httpSettings"},
			PortSelection: policy.PortSelection{List: "perPort", Key: "port", Value: "listener", Default: "default"},
			// Each listener it reaches names its parent object: the
			// Gateway, and each ListenerSet whose listeners it reaches.
			Ancestor: policy.AncestorListenerParents,
			// A Gateway-wide policy's client certificate validation is
			// for the Gateway's own listeners (kgateway resolves its CA
			// references in the Gateway's namespace).
			NotInListenerSets: []string{"default.clientCertificateValidation"},
		})),
		// kgateway reads each HTTPListenerPolicy as a ListenerPolicy whose
		// default.httpSettings is its spec, and merges those as
		// ListenerPolicies: each field from the first policy setting it
		// (weight, then age), none rejected. It targets whole Gateways.
		kgatewayServed(entry(KGateway, "gateway.kgateway.dev", "HTTPListenerPolicy", "Direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(gateway), Ancestor: policy.AncestorGatewayObject,
			SameLevel: policy.SameLevelOldestFirst, WeightAnnotation: "kgateway.dev/policy-weight",
			NamedRules: []string{"."},
		})),
		// The policies on one backend merge as TrafficPolicies do at one
		// target (weight, then age): each top-level field whole from the
		// first that sets it, `dns` one level deeper; none is rejected.
		entry(KGateway, "gateway.kgateway.dev", "BackendConfigPolicy", "Direct", policy.Spec{
			Class: policy.Direct, TargetKinds: kinds(service, gk("gateway.kgateway.dev", "Backend")),
			SameLevel: policy.SameLevelOldestFirst, WeightAnnotation: "kgateway.dev/policy-weight",
			NamedRules: []string{".", "dns"},
		}),
	}
}()

// withEffectiveListeners declares the conditions a listener must meet
// to be an effective target of a profile's kind.
func withEffectiveListeners(p policy.Profile, conds ...string) policy.Profile {
	p.Spec.EffectiveListeners = conds
	return p
}

// withDNSProviderSecret makes a profile's kind (Kuadrant's DNSPolicy) name
// the Secrets of its DNS provider at spec.providerRefs, whose absence
// leaves it not programmed; one naming none takes its namespace's one
// Secret labelled kuadrant.io/default-provider=true, unless it delegates
// (dns-operator internal/controller/dnsrecord_controller.go: the default
// provider Secret looked for in the DNSRecord's namespace, the policy's;
// none or several leave the record not Ready; a delegating record reads
// no provider, and the CRD refuses providerRefs with delegate: true).
func withDNSProviderSecret(p policy.Profile) policy.Profile {
	p.Spec.ObjectRefs = []policy.ObjectRefPath{{Path: "providerRefs[]", Kinds: []topology.GroupKind{policy.KindSecret}, MissingNotProgrammed: true,
		DefaultLabel: "kuadrant.io/default-provider=true", Unless: "delegate=true"}}
	return p
}

// withControllers sets the controllers a profile's kind's implementation
// serves.
func withControllers(p policy.Profile, cs ...string) policy.Profile {
	p.Spec.Controllers = cs
	return p
}

// withDependencies declares what a profile's kind's implementation needs
// installed before it accepts a policy.
func withDependencies(p policy.Profile, ds ...policy.Dependency) policy.Profile {
	p.Spec.Dependencies = ds
	return p
}

// Kuadrant's dependencies, as its validators name them and as it finds
// them installed when its operator starts: the kinds served at the
// versions it asks the API server's REST mapping for (KO
// internal/controller/state_of_the_world.go, utils.IsCRDInstalled).
var (
	// kuadrantGatewayAPI: gatewayapi.IsGatewayAPIInstalled.
	kuadrantGatewayAPI = policy.Dependency{Name: "Gateway API", Alternatives: [][]policy.APIKind{{apiKind(httpRoute, "v1")}}}
	// kuadrantProvider: istio.IsIstioInstalled or
	// envoygateway.IsEnvoyGatewayInstalled.
	kuadrantProvider = policy.Dependency{Name: "Gateway API provider (istio / envoy gateway)", Alternatives: [][]policy.APIKind{
		{apiKind(gk("extensions.istio.io", "WasmPlugin"), "v1alpha1"), apiKind(gk("networking.istio.io", "EnvoyFilter"), "v1alpha3"),
			apiKind(gk("security.istio.io", "PeerAuthentication"), "v1")},
		{apiKind(gk("gateway.envoyproxy.io", "EnvoyExtensionPolicy"), "v1alpha1"), apiKind(gk("gateway.envoyproxy.io", "EnvoyPatchPolicy"), "v1alpha1")},
	}}
	// kuadrantObject: the Kuadrant object its operator deploys the data
	// plane's components from (internal/controller/state_of_the_world.go
	// GetKuadrantFromTopology; "kuadrant is not installed, please create
	// resource", kuadrant.NewErrSystemResource).
	kuadrantObject = policy.RequiredObject{Name: "kuadrant", Kind: gk("kuadrant.io", "Kuadrant")}
	// kuadrantLimitador: the Limitador CRD of limitador-operator.
	kuadrantLimitador = policy.Dependency{Name: "Limitador Operator", Alternatives: [][]policy.APIKind{{apiKind(gk("limitador.kuadrant.io", "Limitador"), "v1alpha1")}}}
	// kuadrantAuthorino: authorino.IsAuthorinoOperatorInstalled.
	kuadrantAuthorino = policy.Dependency{Name: "Authorino Operator", Alternatives: [][]policy.APIKind{
		{apiKind(gk("operator.authorino.kuadrant.io", "Authorino"), "v1beta1"), apiKind(gk("authorino.kuadrant.io", "AuthConfig"), "v1beta3")}}}
	// kuadrantDNSOperator: the DNSRecord CRD of dns-operator.
	kuadrantDNSOperator = policy.Dependency{Name: "DNS Operator", Alternatives: [][]policy.APIKind{{apiKind(gk("kuadrant.io", "DNSRecord"), "v1alpha1")}}}
	// kuadrantCertManager: gatewayapi.IsCertManagerInstalled.
	kuadrantCertManager = policy.Dependency{Name: "Cert Manager", Alternatives: [][]policy.APIKind{{
		apiKind(gk("cert-manager.io", "Certificate"), "v1"), apiKind(policy.KindIssuer, "v1"), apiKind(policy.KindClusterIssuer, "v1")}}}
)

func apiKind(g topology.GroupKind, version string) policy.APIKind {
	return policy.APIKind{GroupKind: g, Version: version}
}

// withTLSIssuer makes a profile's kind (Kuadrant's TLSPolicy) name the
// cert-manager issuer of its certificates at spec.issuerRef.
func withTLSIssuer(p policy.Profile) policy.Profile {
	p.Spec.ObjectRefs = []policy.ObjectRefPath{{Path: "issuerRef", Kinds: []topology.GroupKind{policy.KindIssuer, policy.KindClusterIssuer},
		Ready: "Ready", KindRequired: true}}
	return p
}

// withBackendRefs declares where a profile's kind names backends it sends
// traffic to itself.
func withBackendRefs(p policy.Profile, paths ...policy.BackendRefPath) policy.Profile {
	p.Spec.BackendRefs = paths
	// Envoy Gateway rejects a policy whose external service's Service is
	// missing, lacks the port, or is not granted (validateBackendRef).
	p.Spec.InvalidOnUnresolvedBackendRefs = true
	// Under an EnvoyProxy's routingType Service it sends them to a
	// Service's cluster IP, which has no endpoint address type
	// (processServiceDestinationSetting, IsServiceRouting).
	p.Spec.ClusterIPRouting = "routingType=Service"
	return p
}

// egBufferAndWindows are Envoy Gateway's bounds on a connection's buffer
// limit (a uint32) and on the HTTP/2 window sizes (Envoy's protocol
// options), checked by its translator.
const egBufferAndWindows = "connection.bufferLimit=0..4294967295; " +
	"http2.initialStreamWindowSize=65535..2147483647; http2.initialConnectionWindowSize=65535..2147483647"

// egExternalServiceRanges are egBufferAndWindows for the ClusterSettings
// of a policy's external services at each of paths (SecurityPolicy's
// extAuth, OIDC provider and remote JWKS; EnvoyExtensionPolicy's
// extProc): Envoy Gateway's translateTrafficFeatures checks them as a
// BackendTrafficPolicy's (buildBackendConnection, buildIRHTTP2Settings),
// the part failing (left out where it fails open).
func egExternalServiceRanges(paths ...string) string {
	var out []string
	for _, p := range paths {
		for _, r := range strings.Split(egBufferAndWindows, "; ") {
			out = append(out, p+"."+r)
		}
	}
	return strings.Join(out, "; ")
}

// egListenerBufferAndWindows are those bounds as a ClientTrafficPolicy
// meets them: the buffer limit at every listener, the HTTP/2 windows at
// its HTTP listeners only (translateClientTrafficPolicyForListener builds
// them for a listener with an HTTP IR: Gateway protocol HTTP or HTTPS).
const egListenerBufferAndWindows = "connection.bufferLimit=0..4294967295; " +
	"http2.initialStreamWindowSize=65535..2147483647 on=HTTP,HTTPS; http2.initialConnectionWindowSize=65535..2147483647 on=HTTP,HTTPS"

// withValueRanges bounds the quantities of a profile's kind's policies
// (the annotation's form).
func withValueRanges(p policy.Profile, v string) policy.Profile {
	p.Spec.ValueRanges = must(policy.ParseValueRanges(v))
	return p
}

// egBackendGate: Envoy Gateway refuses a policy's reference to a Backend
// unless its configuration sets extensionApis.enableBackend.
const egBackendGate = egEnableBackend + "=backendRefs:Backend.gateway.envoyproxy.io"

// withFeatureGates declares the switches of the implementation's
// configuration a profile's kind needs (the annotation's form).
func withFeatureGates(p policy.Profile, v string) policy.Profile {
	p.Spec.FeatureGates = must(policy.ParseFeatureGates(v))
	return p
}

// withAllowlists binds values of a profile's kind's policies to those the
// parameters of the target's data plane hold.
func withAllowlists(p policy.Profile, v string) policy.Profile {
	p.Spec.Allowlists = must(policy.ParseAllowlists(v))
	return p
}

// withWaypointTargets makes a profile's kind's Service targets take
// effect only through the waypoint the Service is bound to (Istio
// ambient; policy.Kind.WaypointTargets).
func withWaypointTargets(p policy.Profile) policy.Profile {
	p.Spec.WaypointTargets = true
	return p
}

// withIstioWaypointSummary makes a profile's kind's summary Accepted
// condition say what istiod's flattened WaypointAccepted says
// (policy.Kind.SummaryIstioWaypoint).
func withIstioWaypointSummary(p policy.Profile) policy.Profile {
	p.Spec.SummaryIstioWaypoint = true
	return p
}

// withAncestor sets what a profile's kind names as its policies'
// ancestors (policy.Kind.Ancestor).
func withAncestor(p policy.Profile, a policy.AncestorMode) policy.Profile {
	p.Spec.Ancestor = a
	return p
}

// withPartlyOverriddenNotProgrammed makes the profile's kind report a
// policy that loses some of what it sets as not programmed.
func withPartlyOverriddenNotProgrammed(p policy.Profile) policy.Profile {
	p.Spec.PartlyOverriddenNotProgrammed = true
	return p
}

// withTiesNotRejected keeps policies created in the same second as the
// oldest at a target (policy.Kind.TiesNotRejected).
func withTiesNotRejected(p policy.Profile) policy.Profile {
	p.Spec.TiesNotRejected = true
	return p
}

// withRegexFields declares the fields of a profile's kind's policies that
// hold regular expressions its implementation compiles (the annotation's
// form).
func withRegexFields(p policy.Profile, v string) policy.Profile {
	p.Spec.RegexFields = must(policy.ParseRegexFields(v))
	return p
}

// egRateLimitRegexes are the matches of a BackendTrafficPolicy's local and
// global rate-limit rules that Envoy Gateway compiles as regular
// expressions (buildRateLimitRule).
const egRateLimitRegexes = "rateLimit.local.rules[].clientSelectors[].headers[].value when=type=RegularExpression; " +
	"rateLimit.local.rules[].clientSelectors[].path.value when=type=RegularExpression; " +
	"rateLimit.local.rules[].clientSelectors[].queryParams[].value when=type=RegularExpression; " +
	"rateLimit.global.rules[].clientSelectors[].headers[].value when=type=RegularExpression; " +
	"rateLimit.global.rules[].clientSelectors[].path.value when=type=RegularExpression; " +
	"rateLimit.global.rules[].clientSelectors[].queryParams[].value when=type=RegularExpression"

// withTargetKinds narrows a profile's kind's target kinds.
func withTargetKinds(p policy.Profile, gks ...topology.GroupKind) policy.Profile {
	p.Spec.TargetKinds = gks
	return p
}

// withValidations gives a profile's kind CEL rules on its policies'
// content. They are Go values, not the annotation's form, so that they
// compile when a kind is built from the profile (once per process), not
// when the program starts.
func withValidations(p policy.Profile, vs []policy.Validation) policy.Profile {
	p.Spec.Validations = vs
	return p
}

// Parts of Envoy Gateway's rules on a BackendTrafficPolicy's rate limits.
const (
	// egLocalRateLimit: local rate-limit rules, which Envoy Gateway
	// translates unless the deprecated rateLimit.type says Global
	// (buildRateLimit).
	egLocalRateLimit = "!has(self.rateLimit) || !has(self.rateLimit.local) || !has(self.rateLimit.local.rules) || " +
		"(has(self.rateLimit.type) && self.rateLimit.type != 'Local') || "
	// egGlobalRateLimit: global rules, unless the type says Local.
	egGlobalRateLimit = "!has(self.rateLimit) || !has(self.rateLimit.global) || !has(self.rateLimit.global.rules) || " +
		"(has(self.rateLimit.type) && self.rateLimit.type != 'Global') || "
	// egNoSelectors: a rule r without clientSelectors, which a local rate
	// limit takes as its route-level default.
	egNoSelectors = "(!has(r.clientSelectors) || size(r.clientSelectors) == 0)"
	// egUnitSeconds is the seconds of rule r's unit in map u of them (0
	// for none, as ratelimit.UnitToSeconds).
	egUnitSeconds = "(has(r.limit) && has(r.limit.unit) && r.limit.unit in u ? u[r.limit.unit] : 0)"
	// egNoDistinctInvert: no header or query parameter match of rule r
	// both Distinct and inverted.
	egNoDistinctInvert = "(!has(r.clientSelectors) || r.clientSelectors.all(s, " +
		"(!has(s.headers) || s.headers.all(h, !(has(h.type) && h.type == 'Distinct' && has(h.invert) && h.invert == true))) && " +
		"(!has(s.queryParams) || s.queryParams.all(q, !(has(q.type) && q.type == 'Distinct' && has(q.invert) && q.invert == true)))))"
)

// egBandwidthMinimum: a bandwidth limit of direction dir must be a whole
// number of bytes (a quantity Quantity.AsInt64 reads) of at least 1 KiB
// per second of its unit (buildBandwidthLimit, bandwidthToKibps: Second
// by default).
func egBandwidthMinimum(dir string) policy.Validation {
	return policy.Validation{
		FieldPath: ".bandwidthLimit." + dir + ".limit.value",
		Message:   "must be a whole number of bytes of at least 1 KiB per second (1024 per Second, 61440 per Minute, 3686400 per Hour)",
		Rule: "!has(self.bandwidthLimit) || !has(self.bandwidthLimit." + dir + ") || [self.bandwidthLimit." + dir + ".limit].all(l, " +
			"!has(l.value) || [quantity(string(l.value))].all(q, q.isInteger() && q.asInteger() >= 1024 * " +
			"(has(l.unit) && l.unit == 'Minute' ? 60 : has(l.unit) && l.unit == 'Hour' ? 3600 : 1)))",
	}
}

// egBackOffDuration is the duration form the CRDs' schemas admit for a
// retry back-off interval (which Go's time.ParseDuration, as CEL's
// duration(), always reads).
const egBackOffDuration = "'^([0-9]{1,5}(h|m|s|ms)){1,4}$'"

// egRetryBackOff are the checks buildRetry makes of the retry back-off
// of the ClusterSettings at base, a CEL expression whose presence guard
// (ending in "|| ", or "") makes sure of, named at field: no interval of
// zero, a maxInterval no less than the baseInterval, each judged only in
// the CRD's duration form (buildRetry skips an interval it cannot parse).
// translateTrafficFeatures makes the same checks of an external
// service's backendSettings (a SecurityPolicy's extAuth, remote JWKS and
// OIDC provider, an EnvoyExtensionPolicy's extProc): an error there fails
// that part, as the part's other errors do.
func egRetryBackOff(guard, base, field string) []policy.Validation {
	b := base + ".retry.perRetry.backOff"
	set := func(iv string) string {
		return guard + "!has(" + base + ".retry) || !has(" + base + ".retry.perRetry) || !has(" + b + ") || !has(" + b + "." + iv + ") || !" +
			b + "." + iv + ".matches(" + egBackOffDuration + ") || "
	}
	return []policy.Validation{
		{FieldPath: field + ".retry.perRetry.backOff.baseInterval", Message: "cannot be set to 0s",
			Rule: set("baseInterval") + "duration(" + b + ".baseInterval) != duration('0s')"},
		{FieldPath: field + ".retry.perRetry.backOff.maxInterval", Message: "cannot be set to 0s",
			Rule: set("maxInterval") + "duration(" + b + ".maxInterval) != duration('0s')"},
		{FieldPath: field + ".retry.perRetry.backOff.maxInterval", Message: "cannot be less than baseInterval",
			Rule: set("maxInterval") + "!has(" + b + ".baseInterval) || !" + b + ".baseInterval.matches(" + egBackOffDuration + ") || " +
				"duration(" + b + ".baseInterval) <= duration(" + b + ".maxInterval)"},
	}
}

// egListRetryBackOff is egRetryBackOff for the ClusterSettings at item
// (its presence guarded by itemGuard) of every entry e of the list at
// list (guarded by guard), named at the list's field, the message saying
// which field of an entry: the rules hold for every entry.
func egListRetryBackOff(guard, list, itemGuard, item, field string) []policy.Validation {
	vs := egRetryBackOff(itemGuard, "e."+item, "")
	for i := range vs {
		vs[i].Rule = guard + list + ".all(e, " + vs[i].Rule + ")"
		vs[i].Message = "an entry's " + item + vs[i].FieldPath + " " + vs[i].Message
		vs[i].FieldPath = field
	}
	return vs
}

// egSecurityValidations: the retry back-off of a SecurityPolicy's
// external services (buildExtAuth, buildRemoteJWKS and the OIDC
// provider: translateTrafficFeatures in clustersettings.go).
var egSecurityValidations = slices.Concat(
	egRetryBackOff("!has(self.extAuth) || !has(self.extAuth.http) || !has(self.extAuth.http.backendSettings) || ", "self.extAuth.http.backendSettings", ".extAuth.http.backendSettings"),
	egRetryBackOff("!has(self.extAuth) || !has(self.extAuth.grpc) || !has(self.extAuth.grpc.backendSettings) || ", "self.extAuth.grpc.backendSettings", ".extAuth.grpc.backendSettings"),
	egRetryBackOff("!has(self.oidc) || !has(self.oidc.provider) || !has(self.oidc.provider.backendSettings) || ", "self.oidc.provider.backendSettings", ".oidc.provider.backendSettings"),
	egListRetryBackOff("!has(self.jwt) || !has(self.jwt.providers) || ", "self.jwt.providers",
		"!has(e.remoteJWKS) || !has(e.remoteJWKS.backendSettings) || ", "remoteJWKS.backendSettings", ".jwt.providers"),
)

// egExtensionRetryValidations: the retry back-off of an
// EnvoyExtensionPolicy's external processors (buildExtProc:
// translateTrafficFeatures), one rule per entry (the CRD allows 16), so
// that each names its entry: an entry with failOpen then fails open
// (extProc[]=failOpen), left out and the rest applied, as buildExtProcs
// leaves it out.
var egExtensionRetryValidations = func() []policy.Validation {
	var out []policy.Validation
	for i := range 16 {
		e := fmt.Sprintf("self.extProc[%d]", i)
		out = append(out, egRetryBackOff(fmt.Sprintf("!has(self.extProc) || size(self.extProc) <= %d || !has(%s.backendSettings) || ", i, e),
			e+".backendSettings", fmt.Sprintf(".extProc[%d].backendSettings", i))...)
	}
	return out
}()

// egBackendTrafficValidations are the checks Envoy Gateway's translator
// makes of a BackendTrafficPolicy's content that its CRD's schema does
// not (internal/gatewayapi/backendtrafficpolicy.go): the bandwidth
// minimum, and of a local rate limit, at most one rule without
// clientSelectors, every rule's unit a whole multiple of that rule's
// (Second without one; buildLocalRateLimit), and no Distinct match
// inverted (buildRateLimitRule), global rules too; and of the retry
// back-off, no interval of zero and a maxInterval no less than the
// baseInterval (clustersettings.go buildRetry).
var egBackendTrafficValidations = append([]policy.Validation{
	egBandwidthMinimum("request"),
	egBandwidthMinimum("response"),
	{
		FieldPath: ".rateLimit.local.rules",
		Message:   "at most one rule may leave out clientSelectors (the route-level default limit)",
		Rule:      egLocalRateLimit + "self.rateLimit.local.rules.filter(r, " + egNoSelectors + ").size() <= 1",
	},
	{
		FieldPath: ".rateLimit.local.rules",
		Message:   "each rule's limit unit must be a whole multiple of the unit of the rule without clientSelectors (Second when there is none)",
		Rule: egLocalRateLimit + "[{'Second': 1, 'Minute': 60, 'Hour': 3600, 'Day': 86400, 'Week': 604800, 'Month': 2592000, 'Year': 31536000}].all(u, " +
			"[self.rateLimit.local.rules.filter(r, " + egNoSelectors + ").map(r, " + egUnitSeconds + ")].all(d, " +
			"[size(d) == 0 ? 1 : d[0]].all(dflt, dflt != 0 && self.rateLimit.local.rules.all(r, " + egUnitSeconds + " % dflt == 0))))",
	},
	{
		FieldPath: ".rateLimit.local.rules",
		Message:   "a clientSelectors match of type Distinct cannot be inverted",
		Rule:      egLocalRateLimit + "self.rateLimit.local.rules.all(r, " + egNoDistinctInvert + ")",
	},
	{
		FieldPath: ".rateLimit.global.rules",
		Message:   "a clientSelectors match of type Distinct cannot be inverted",
		Rule:      egGlobalRateLimit + "self.rateLimit.global.rules.all(r, " + egNoDistinctInvert + ")",
	},
}, egRetryBackOff("", "self", "")...)

// ngfBusyBuffers is the part of ngfProxyBufferValidations that holds
// unless the policy sets busyBuffersSize as an NGINX size (NGF skips the
// comparisons for one it cannot read; its size pattern refuses it).
const ngfBusyBuffers = "!has(self.buffering) || !has(self.buffering.busyBuffersSize) || !isNginxSize(self.buffering.busyBuffersSize) || "

// ngfProxyBufferValidations are the relationships NGINX Gateway Fabric
// checks in code between a ProxySettingsPolicy's buffer sizes, each of
// one policy on its own (validateBusyBufferSizeRelationships): with
// bufferSize, busyBuffersSize must be larger; with buffers, less than
// number × size − size (a missing number read as 0, as NGF's zero value).
// Either makes the policy Invalid.
var ngfProxyBufferValidations = []policy.Validation{{
	FieldPath: ".buffering.busyBuffersSize",
	Message:   "must be larger than bufferSize",
	Rule: ngfBusyBuffers + "!has(self.buffering.bufferSize) || !isNginxSize(self.buffering.bufferSize) || " +
		"nginxSize(self.buffering.busyBuffersSize) > nginxSize(self.buffering.bufferSize)",
}, {
	FieldPath: ".buffering.busyBuffersSize",
	Message:   "must be less than the size of all proxy_buffers minus one buffer",
	Rule: ngfBusyBuffers + "!has(self.buffering.buffers) || !has(self.buffering.buffers.size) || !isNginxSize(self.buffering.buffers.size) || " +
		"nginxSize(self.buffering.busyBuffersSize) < nginxSize(self.buffering.buffers.size) * " +
		"((has(self.buffering.buffers.number) ? int(self.buffering.buffers.number) : 0) - 1)",
}}

// The formats NGINX Gateway Fabric's validators check in code
// (internal/controller/nginx/config/validation/generic.go
// ValidateNginxSize, ValidateNginxDuration, ValidateNginxVariableName;
// common.go validateEscapedStringNoVarExpansion; policies/ratelimit/
// validator.go validateNginxRate, validateLimitReqKey), which make a
// policy Invalid. The sizes, durations, rates, keys and span strings are
// also its CRDs' patterns (apis/v1alpha1/shared_types.go Size, Duration;
// ratelimitpolicy_types.go), so on a cluster the API server refuses such
// values first; the code check holds for policies read from files
// without their CRD and for CRDs of other versions. Two checks are the
// code's own: a hashMethodKey must name an NGINX variable starting with a
// letter (the CRD lets "$_x" through), judged only with a
// loadBalancingMethod (validateLoadBalancingMethod), and a span name or
// attribute may hold no line break.
const (
	ngfSizeFormat      = "'^[0-9]{1,4}[kmg]?$'"
	ngfDurationFormat  = "'^[0-9]{1,4}(ms|s|m|h)?$'"
	ngfSizeMessage     = "must be an NGINX size as NGF writes it: at most four digits, then optionally k, m or g"
	ngfDurationMessage = "must be an NGINX duration as NGF writes it: at most four digits, then optionally ms, s, m or h"
)

// ngfFormat is the rule that the string at dotted path (below spec), when
// set, matches the regular expression format (a CEL string literal).
func ngfFormat(path, format, message string) policy.Validation {
	parts := strings.Split(path, ".")
	var guards []string
	for i := range parts {
		guards = append(guards, "!has(self."+strings.Join(parts[:i+1], ".")+")")
	}
	return policy.Validation{FieldPath: "." + path, Message: message,
		Rule: strings.Join(guards, " || ") + " || self." + path + ".matches(" + format + ")"}
}

// ngfFormats are ngfFormat's rules for sizes and durations at paths.
func ngfFormats(sizes, durations []string) []policy.Validation {
	var out []policy.Validation
	for _, p := range sizes {
		out = append(out, ngfFormat(p, ngfSizeFormat, ngfSizeMessage))
	}
	for _, p := range durations {
		out = append(out, ngfFormat(p, ngfDurationFormat, ngfDurationMessage))
	}
	return out
}

// The formats each NGF validator checks (clientsettings, proxysettings,
// upstreamsettings, ratelimit, observability validator.go).
var (
	ngfClientSettingsFormats = ngfFormats([]string{"body.maxSize", "body.bufferSize"},
		[]string{"body.timeout", "keepAlive.time", "keepAlive.minTimeout", "keepAlive.timeout.server", "keepAlive.timeout.header"})
	ngfProxySettingsFormats = ngfFormats([]string{"buffering.bufferSize", "buffering.buffers.size", "buffering.busyBuffersSize"},
		[]string{"timeout.connect", "timeout.read", "timeout.send"})
	ngfUpstreamSettingsFormats = append(ngfFormats([]string{"zoneSize"}, []string{"keepAlive.time", "keepAlive.timeout"}), policy.Validation{
		FieldPath: ".hashMethodKey",
		Message:   "must be an NGINX variable, $name or ${name}, the name a lowercase letter followed by lowercase letters, digits or underscores",
		Rule:      "!has(self.loadBalancingMethod) || !has(self.hashMethodKey) || self.hashMethodKey.matches('^[$]([{][a-z][a-z0-9_]*[}]|[a-z][a-z0-9_]*)$')",
	})
	ngfRateLimitFormats = []policy.Validation{{
		FieldPath: ".rateLimit.local.rules",
		Message:   "zoneSize " + ngfSizeMessage,
		Rule:      "!has(self.rateLimit) || !has(self.rateLimit.local) || !has(self.rateLimit.local.rules) || self.rateLimit.local.rules.all(r, !has(r.zoneSize) || r.zoneSize.matches(" + ngfSizeFormat + "))",
	}, {
		FieldPath: ".rateLimit.local.rules",
		Message:   "rate must be a number of requests per second or minute as NGINX writes it (10r/s, 500r/m)",
		Rule:      "!has(self.rateLimit) || !has(self.rateLimit.local) || !has(self.rateLimit.local.rules) || self.rateLimit.local.rules.all(r, !has(r.rate) || r.rate == '' || r.rate.matches('^[0-9]+r/[sm]$'))",
	}, {
		FieldPath: ".rateLimit.local.rules",
		Message:   "key must be text without whitespace, ';', '{', '}', '#' or '$', and NGINX variables ($name)",
		Rule: "!has(self.rateLimit) || !has(self.rateLimit.local) || !has(self.rateLimit.local.rules) || self.rateLimit.local.rules.all(r, !has(r.key) || r.key == '' || " +
			`r.key.matches('^(?:[^ \t\r\n;{}#$]+|[$][A-Za-z0-9_]+)+$'))`,
	}}
	ngfObservabilityFormats = []policy.Validation{{
		FieldPath: ".tracing.spanName",
		Message:   ngfSpanMessage,
		Rule:      "!has(self.tracing) || !has(self.tracing.spanName) || " + ngfSpanString("self.tracing.spanName"),
	}, {
		FieldPath: ".tracing.spanAttributes",
		Message:   "keys and values " + ngfSpanMessage,
		Rule:      "!has(self.tracing) || !has(self.tracing.spanAttributes) || self.tracing.spanAttributes.all(a, (!has(a.key) || " + ngfSpanString("a.key") + ") && (!has(a.value) || " + ngfSpanString("a.value") + "))",
	}}
)

// kuadrantExcludeAddresses is Kuadrant's check of a DNSPolicy's
// excludeAddresses: an entry with a '/' must parse as a CIDR (Go's
// net.ParseCIDR there; CEL's isCIDR, net/netip, here: they agree but on
// prefix lengths written with a leading zero, which netip refuses).
var kuadrantExcludeAddresses = []policy.Validation{{
	FieldPath: ".excludeAddresses",
	Message:   "could not parse the CIDR from the excludeAddresses field (an entry with '/' must be a CIDR)",
	Rule:      "!has(self.excludeAddresses) || self.excludeAddresses.all(a, !a.contains('/') || isCIDR(a))",
}}

// ngfSpanMessage says what NGF accepts in a span name or attribute.
const ngfSpanMessage = "must hold no line break, no '$' and no unescaped '\"', and not end with an unescaped backslash"

// ngfSpanString is the CEL test of a span string: no line break, and
// every '"' escaped, no '$', no trailing lone backslash.
func ngfSpanString(v string) string {
	return "(!" + v + `.contains('\n') && !` + v + `.contains('\r') && ` + v + `.matches('^([^"$\\\\]|\\\\[^$])*$'))`
}

// NGFPlus is the feature saying that NGINX Gateway Fabric runs NGINX
// Plus (its Helm value nginx.plus, the controller's --nginx-plus), off
// by default as there: NGINX OSS is assumed unless --feature
// NGF.nginx.plus=true says otherwise (attache reads no configuration of
// NGF's).
const NGFPlus = "NGF.nginx.plus"

// The features of NGINX Gateway Fabric's controller flags that turn policy
// kinds on, named by the Helm values that set them
// (charts/nginx-gateway-fabric templates/deployment.yaml: --snippets,
// --payload-processor, --external-load-balancer), each off by default as
// there. NGF's flags are arguments of its controller's Deployment, which
// attache does not read (it would need to read Deployments, whose specs
// hold far more than flags), so --feature NAME=true says one is on.
const (
	// NGFSnippets turns on SnippetsPolicy (and SnippetsFilter).
	NGFSnippets = "NGF.nginxGateway.snippets.enable"
	// NGFPayloadProcessor turns on PayloadProcessor.
	NGFPayloadProcessor = "NGF.nginxGateway.payloadProcessor.enable"
	// NGFExternalLoadBalancer turns on ExternalLoadBalancer.
	NGFExternalLoadBalancer = "NGF.nginxGateway.externalLoadBalancer.enable"
)

// FlagOnlyFeatures are the features the profiles name that no
// configuration attache reads sets: only --feature turns them on.
var FlagOnlyFeatures = []string{NGFPlus, NGFSnippets, NGFPayloadProcessor, NGFExternalLoadBalancer}

// ngfOSSLoadBalancingMethods are the load-balancing methods NGINX Gateway
// Fabric allows with NGINX OSS (http.OSSAllowedLBMethods), sorted as its
// message lists them; with NGINX Plus it allows every method its CRD's
// enum does.
var ngfOSSLoadBalancingMethods = []string{"hash", "hash consistent", "ip_hash", "least_conn", "least_time header",
	"least_time header inflight", "least_time last_byte", "least_time last_byte inflight", "random", "random two",
	"random two least_conn", "round_robin"}

// ngfOSSLoadBalancing: without NGINX Plus, an UpstreamSettingsPolicy's
// loadBalancingMethod must be one NGINX OSS supports, else NGF's validator
// makes the policy Invalid (validateLoadBalancingMethod).
var ngfOSSLoadBalancing = []policy.Validation{{
	FieldPath:     ".loadBalancingMethod",
	Message:       "NGINX OSS supports the following load balancing methods: " + strings.Join(ngfOSSLoadBalancingMethods, ", "),
	Rule:          "!has(self.loadBalancingMethod) || self.loadBalancingMethod in ['" + strings.Join(ngfOSSLoadBalancingMethods, "', '") + "']",
	UnlessFeature: NGFPlus,
}}

// egCipherSuites are the cipher suites Envoy Gateway accepts, OpenSSL and
// IANA names (internal/gatewayapi/tls.go, validCipherSuites).
var egCipherSuites = []string{
	"ECDHE-ECDSA-AES128-GCM-SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"AES128-GCM-SHA256", "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES128-SHA", "TLS_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"AES256-GCM-SHA384", "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES256-SHA", "TLS_RSA_WITH_AES_256_CBC_SHA",
}

// egCipherSuiteValidations: a ClientTrafficPolicy's cipher suites must be
// among egCipherSuites, checked for the listeners that terminate TLS
// (buildListenerTLSParameters: validateCipherSuites).
// egLuaValidations: an inline Lua script of an EnvoyExtensionPolicy must
// name one of Envoy's entry points (luavalidator.Validate: "expected one
// of envoy_on_request() or envoy_on_response() to be defined", a check of
// the text, before any validation mode).
var egLuaValidations = []policy.Validation{{
	Rule:      "!has(self.lua) || self.lua.all(l, !has(l.inline) || l.inline.contains('envoy_on_request') || l.inline.contains('envoy_on_response'))",
	Message:   "an inline Lua script must define envoy_on_request() or envoy_on_response()",
	FieldPath: ".lua",
}}

var egCipherSuiteValidations = []policy.Validation{{
	FieldPath: ".tls.ciphers",
	Message:   "names a cipher suite Envoy Gateway does not support",
	On:        []string{"HTTPS", "TLS"},
	Rule:      "!has(self.tls) || !has(self.tls.ciphers) || self.tls.ciphers.all(c, c in ['" + strings.Join(egCipherSuites, "', '") + "'])",
}}

// egHTTP10 is the part of egHTTP10DefaultHost that holds unless the
// policy asks for HTTP/1.0's default host on a listener without an exact
// hostname. The routes Envoy Gateway could take it from count one per
// exact hostname a route serves there and match of its rules (its IR
// routes); egHTTP10Offers is a route offering some. The rules are linear
// in the routes (exists, exists_one; no list built).
const (
	egHTTP10 = "!has(self.http1) || !has(self.http1.http10) || !has(self.http1.http10.useDefaultHost) || !self.http1.http10.useDefaultHost || " +
		"(listener.hostname != '' && !listener.hostname.startsWith('*')) || "
	egHTTP10Offers = "(r.matches > 0 && r.hostnames.exists(h, !h.startsWith('*')))"
)

// egHTTP10DefaultHost: a ClientTrafficPolicy asking for HTTP/1.0's
// default host needs one at each HTTP listener it lands on: the
// listener's exact hostname, else the one exact hostname among the routes
// attached there (translateListenerHTTP1Settings: "cannot set http10
// default host on listener with only wildcard hostnames").
var egHTTP10DefaultHost = []policy.Validation{{
	FieldPath: ".http1.http10.useDefaultHost",
	Message:   "the listener has no exact hostname, nor does any route attached to it, so there is no default host to take",
	On:        []string{"HTTP", "HTTPS"},
	Rule:      egHTTP10 + "listener.routes.exists(r, " + egHTTP10Offers + ")",
}, {
	FieldPath: ".http1.http10.useDefaultHost",
	Message:   "the listener has no exact hostname and its routes offer more than one (one per exact hostname and rule match), so there is no one default host to take",
	On:        []string{"HTTP", "HTTPS"},
	Rule: egHTTP10 + "!listener.routes.exists(r, r.hostnames.filter(h, !h.startsWith('*')).size() * r.matches > 1) && " +
		"(!listener.routes.exists(r, " + egHTTP10Offers + ") || listener.routes.exists_one(r, " + egHTTP10Offers + "))",
}}

// withRequirements declares what a profile's kind's policies need of the
// data plane's parameters or of other kinds' policies at the listeners
// (the annotation's form).
func withRequirements(p policy.Profile, v string) policy.Profile {
	p.Spec.Requirements = must(policy.ParseRequirements(v))
	return p
}

// ngfTelemetryRequirements: NGF accepts an ObservabilityPolicy through a
// Gateway only if the
// NginxProxy the Gateway runs with enables telemetry, an exporter
// endpoint set and tracing not disabled (disabledFeatures' one value is
// DisableTracing), else the route's ancestor is Accepted=False
// NginxProxyConfigNotSet "Telemetry is not enabled in the NginxProxy
// resource" (attache gives the reason, with its own message) and the
// policy is not applied through that Gateway. A
// Gateway running with no NginxProxy is not checked. NGF checks a policy
// setting nothing too; tracing is its only field, so that one, which
// does nothing anyway, is not judged here.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (attachPolicyToRoute: ValidateGlobalSettings when EffectiveNginxProxy
// is set, InvalidForGateways), nginxproxy.go
// (telemetryEnabledForNginxProxy), nginx/config/policies/observability/
// validator.go (ValidateGlobalSettings), apis/v1alpha2/nginxproxy_types.go
// (DisableTelemetryFeature enum).
var ngfTelemetryRequirements = []policy.Requirement{
	{Path: "tracing", Any: []policy.BackendRefPath{"telemetry.exporter.endpoint"}, Reason: ngfNginxProxyConfigNotSet},
	{Path: "tracing", Excludes: true, Any: []policy.BackendRefPath{"telemetry.disabledFeatures[]"}, Reason: ngfNginxProxyConfigNotSet},
}

// ngfWAFRequirements: NGF accepts a WAFPolicy through a Gateway only if
// the NginxProxy the Gateway runs with says waf.enable: true (merged
// field by field, the Gateway's over its class's), else the ancestor is
// Accepted=False NginxProxyConfigNotSet "WAF is not enabled in
// NginxProxy" and the policy is not applied there. type is required, so
// every WAFPolicy holds it. A Gateway target is judged even when its
// Gateway runs with no NginxProxy (not met); a route target only against
// one, as for every kind.
// Source: NGF e55bfe339 internal/controller/nginx/config/policies/waf/
// validator.go (ValidateGlobalSettings), internal/controller/state/graph/
// policies.go (attachPolicyToGateway: global settings built whatever the
// Gateway runs with; attachPolicyToRoute: only when EffectiveNginxProxy
// is set), nginxproxy.go (WAFEnabledForNginxProxy, buildEffectiveNginxProxy,
// cleanupWAF).
var ngfWAFRequirements = []policy.Requirement{{Path: "type", Any: []policy.BackendRefPath{"waf.enable"}, Values: []string{"true"},
	Reason: ngfNginxProxyConfigNotSet, WithoutParameters: policy.WithoutParametersUnmetAtGateways}}

// ngfPayloadProcessorBackendRef is what NGF's validator asks of a
// PayloadProcessor's ExtProcess backendRef (the CRD's rules say the same):
// a Service of the core group, with a TCP port; judged before conflicts,
// unlike the references themselves (payloadprocessor/validator.go
// validateExtProcessBackendRef).
var ngfPayloadProcessorBackendRef = []policy.Validation{{
	FieldPath: ".processors",
	Message:   "an extProcess backendRef must be a Service of the core group with a port from 1 to 65535",
	Rule: "!has(self.processors) || self.processors.all(p, !has(p.extProcess) || !has(p.extProcess.backendRef) || " +
		"((!has(p.extProcess.backendRef.group) || p.extProcess.backendRef.group in ['', 'core']) && " +
		"(!has(p.extProcess.backendRef.kind) || p.extProcess.backendRef.kind == 'Service') && " +
		"has(p.extProcess.backendRef.port) && p.extProcess.backendRef.port >= 1 && p.extProcess.backendRef.port <= 65535))",
}}

// ngfPayloadProcessorRequirements: a PayloadProcessor whose ExtProcess
// backend is an ExternalName Service needs a DNS resolver in the
// NginxProxy each Gateway runs with (NGINX resolves the name per
// request); without one, or without an NginxProxy, NGF marks it invalid
// for that Gateway (Accepted=False Invalid "PayloadProcessor ExternalName
// backend requires ...") and does not apply it there. NGF reads the first
// ExtProcess entry, which its API makes the only one.
// Source: NGF e55bfe339 internal/controller/state/graph/policies.go
// (payloadProcessorResolverMissing, called in attachPolicyToGateway and
// attachPolicyToRoute), payloadprocessor.go (resolvePayloadProcessor,
// BackendIsExternalName), conditions.go
// (PolicyMessagePayloadProcessorResolverMissing).
var ngfPayloadProcessorRequirements = []policy.Requirement{{Path: "processors[].extProcess.backendRef", Any: []policy.BackendRefPath{"dnsResolver"},
	WithoutParameters: policy.WithoutParametersUnmet, ServiceType: policy.ServiceTypeExternalName}}

// ngfNginxProxyConfigNotSet is NGF's reason for a policy the NginxProxy a
// Gateway runs with does not allow (conditions.go
// PolicyReasonNginxProxyConfigNotSet).
const ngfNginxProxyConfigNotSet = "NginxProxyConfigNotSet"

// egGeoIPRequirements: a SecurityPolicy authorizing by client IP
// location needs, at each HTTP listener (Envoy Gateway checks its HTTP
// listeners only), a ClientTrafficPolicy detecting the
// client IP (from a header, without trusted CIDRs, or the peer), and, in the EnvoyProxy
// the Gateway runs with, a MaxMind GeoIP provider with the databases the
// locations it names read (validateAuthorizationGeoIP).
const egGeoIPRequirements = "authorization.rules[].principal.clientIPGeoLocations[] requires ClientTrafficPolicy.gateway.envoyproxy.io:clientIPDetection.xForwardedFor|clientIPDetection.customHeader|clientIPDetection.directSourceIP on=HTTP,HTTPS; " +
	"authorization.rules[].principal.clientIPGeoLocations[] excludes ClientTrafficPolicy.gateway.envoyproxy.io:clientIPDetection.xForwardedFor.trustedCIDRs on=HTTP,HTTPS; " +
	"authorization.rules[].principal.clientIPGeoLocations[] requires parameters:geoIP.provider.maxMind; " +
	"authorization.rules[].principal.clientIPGeoLocations[].country requires parameters:geoIP.provider.maxMind.countryDbSource|geoIP.provider.maxMind.cityDbSource; " +
	"authorization.rules[].principal.clientIPGeoLocations[].region requires parameters:geoIP.provider.maxMind.cityDbSource; " +
	"authorization.rules[].principal.clientIPGeoLocations[].city requires parameters:geoIP.provider.maxMind.cityDbSource; " +
	"authorization.rules[].principal.clientIPGeoLocations[].asn requires parameters:geoIP.provider.maxMind.asnDbSource; " +
	"authorization.rules[].principal.clientIPGeoLocations[].isp requires parameters:geoIP.provider.maxMind.ispDbSource; " +
	"authorization.rules[].principal.clientIPGeoLocations[].anonymous requires parameters:geoIP.provider.maxMind.anonymousIpDbSource"

// withFailOpen declares the parts of a profile's kind's policies left out
// rather than failing the route (the annotation's form).
func withFailOpen(p policy.Profile, v string) policy.Profile {
	p.Spec.FailOpen = must(policy.ParseFailOpen(v))
	return p
}

// withUnsupportedFields declares the fields a profile's kind's policies
// may not set at targets of some kinds (the annotation's form).
func withUnsupportedFields(p policy.Profile, v string) policy.Profile {
	p.Spec.UnsupportedFields = must(policy.ParseUnsupportedFields(v))
	return p
}

// must returns v; the profiles are fixed, so a syntax error in one is a
// programming error.
func must[T any](v T, err error) T {
	if err != nil {
		panic("profiles: " + err.Error())
	}
	return v
}

// withObjectRefs declares where a profile's kind names ConfigMaps and
// Secrets it reads, in the annotation's form.
func withObjectRefs(p policy.Profile, entries ...string) policy.Profile {
	p.Spec.ObjectRefs = objectRefs(entries...)
	return p
}

// objectRefs parses object reference paths written in the annotation's
// form; the profiles are fixed, so a syntax error is a programming error.
func objectRefs(entries ...string) []policy.ObjectRefPath {
	out, err := policy.ParseObjectRefs(strings.Join(entries, "; "))
	if err != nil {
		panic("profiles: " + err.Error())
	}
	return out
}

// ngfStatus gives a profile's NGF kind NGF's status: no entry for a
// target NGF does not build (processPolicies drops it before attaching),
// and Programmed as NGF's settings policies report it: True wherever the
// policy is accepted, False/Overridden where it is Conflicted, else
// False/Reconciling (status/prepare_requests.go
// settingsPolicyProgrammedCondition, settingsPolicyKinds: every NGF policy
// kind but WAFPolicy and ExternalLoadBalancer, which writes no ancestors).
func ngfStatus(p policy.Profile) policy.Profile {
	p.Spec.MissingTargetsUnlisted = true
	p.Spec.ProgrammedWhenAccepted = true
	return p
}

// withConflictFields narrows a profile's merge-disjoint rule to fields.
func withConflictFields(p policy.Profile, fields ...string) policy.Profile {
	p.Spec.ConflictFields = fields
	return p
}

var index = func() map[topology.GroupKind]*policy.Profile {
	m := make(map[topology.GroupKind]*policy.Profile, len(builtin))
	for i := range builtin {
		m[builtin[i].Spec.GroupKind] = &builtin[i]
	}
	return m
}()

// All returns every built-in profile, grouped by implementation.
func All() []policy.Profile { return slices.Clone(builtin) }

// RequiredObjectKinds are the kinds of the objects the profiles' kinds'
// implementations need on the cluster (policy.Spec.RequiredObjects).
func RequiredObjectKinds() []topology.GroupKind {
	var out []topology.GroupKind
	for _, p := range builtin {
		for _, r := range p.Spec.RequiredObjects {
			if !slices.Contains(out, r.Kind) {
				out = append(out, r.Kind)
			}
		}
	}
	return out
}

// Lookup returns the profile of a policy kind, if attache has one.
func Lookup(gk topology.GroupKind) (*policy.Profile, bool) {
	e, ok := index[gk]
	if !ok {
		return nil, false
	}
	p := *e
	return &p, true
}

// Translation is a kind whose controller turns each object into policies
// of other kinds, which attache reads instead: the kind is no policy kind
// for attache, and declaring it one would count its effect twice.
type Translation struct {
	// Implementation names the project.
	Implementation string
	// Into are the policy kinds it is translated into.
	Into []topology.GroupKind
}

// translated are the known Translations: Kuadrant's extensions PlanPolicy
// (a RateLimitPolicy per PlanPolicy, planpolicy_reconciler.go) and
// OIDCPolicy (an AuthPolicy, oidcpolicy_reconciler.go), KO ae698811
// cmd/extensions.
var translated = map[topology.GroupKind]Translation{
	{Group: "extensions.kuadrant.io", Kind: "PlanPolicy"}: {Implementation: Kuadrant, Into: []topology.GroupKind{{Group: "kuadrant.io", Kind: "RateLimitPolicy"}}},
	{Group: "extensions.kuadrant.io", Kind: "OIDCPolicy"}: {Implementation: Kuadrant, Into: []topology.GroupKind{{Group: "kuadrant.io", Kind: "AuthPolicy"}}},
}

// TranslatedInto reports whether kind gk is translated into policies of
// other kinds (Translation), and into which.
func TranslatedInto(gk topology.GroupKind) (Translation, bool) {
	t, ok := translated[gk]
	return t, ok
}
