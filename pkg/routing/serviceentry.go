package routing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/attache-dev/attache/pkg/gatewayapi"
	"github.com/attache-dev/attache/pkg/topology"
)

// autoallocateLabel opts a ServiceEntry out of istiod's address
// allocation when "false" (istio.io/api label
// networking.istio.io/enable-autoallocate-ip).
const autoallocateLabel = "networking.istio.io/enable-autoallocate-ip"

// seFacts are what decide whether ztunnel captures the connections to a
// ServiceEntry's hosts, and whether its waypoint serves them.
type seFacts struct {
	created time.Time
	// addresses: spec.addresses is set (every host has them).
	addresses bool
	// resolution is spec.resolution, upper case; NONE when unset.
	resolution string
	// internal: location MESH_INTERNAL.
	internal bool
	// noAllocate: the ServiceEntry opts out of address allocation.
	noAllocate bool
}

// noAddress says why host h of the ServiceEntry has no address ztunnel
// knows it by, "" when it has one: spec.addresses, else the one istiod's
// address allocator gives it (istio/istio @ 86c9f01f
// pilot/pkg/serviceregistry/ambient/services.go constructServiceEntries,
// pilot/pkg/networking/serviceentry ShouldV2AutoAllocateIP: not with
// resolution NONE, not to a wildcard host unless resolution is
// DYNAMIC_DNS, not when opted out). The allocator is taken as on (its
// default, PILOT_ENABLE_IP_AUTOALLOCATE); status.addresses is not read.
func (f *seFacts) noAddress(h string) string {
	switch {
	case f.addresses:
		return ""
	case f.resolution == "NONE":
		return "resolution NONE and no spec.addresses: istiod allocates no address to its hosts"
	case strings.HasPrefix(h, "*") && f.resolution != "DYNAMIC_DNS":
		return fmt.Sprintf("%s is a wildcard host and resolution is %s: istiod allocates addresses to wildcard hosts only with resolution DYNAMIC_DNS", h, f.resolution)
	case f.noAllocate:
		return fmt.Sprintf("label %s: \"false\" opts it out of address allocation, and it has no spec.addresses", autoallocateLabel)
	}
	return ""
}

// waypointLacks says why one of Istio's waypoints has no filter chain
// for host h of the ServiceEntry on a port of protocol proto, "" when it
// has one (istio/istio @ 86c9f01f pilot/pkg/networking/core waypoint.go
// findWaypointResources: a MESH_INTERNAL ServiceEntry with resolution
// DYNAMIC_DNS is left out; listener_waypoint.go: a wildcard DYNAMIC_DNS
// host's TLS ports get no chain unless
// ENABLE_WILDCARD_HOST_SERVICE_ENTRIES_FOR_TLS, off by default).
func (f *seFacts) waypointLacks(h, proto string) string {
	switch {
	case f.resolution != "DYNAMIC_DNS":
		return ""
	case f.internal:
		return "the waypoint does not serve it: istiod leaves a MESH_INTERNAL ServiceEntry with resolution DYNAMIC_DNS out of its waypoint (DYNAMIC_DNS is for MESH_EXTERNAL ones), so the connection is reset"
	case strings.HasPrefix(h, "*") && (proto == "TLS" || proto == "HTTPS"):
		return fmt.Sprintf("the waypoint has no filter chain for %s port of wildcard host %s with resolution DYNAMIC_DNS (istiod's ENABLE_WILDCARD_HOST_SERVICE_ENTRIES_FOR_TLS, off by default), so the connection is reset", proto, h)
	}
	return ""
}

// istioHostMatches is istio's host.Name Matches: whether hosts a and b,
// either a wildcard ("*.example.com", "*"), overlap.
func istioHostMatches(a, b string) bool {
	aw, bw := strings.HasPrefix(a, "*"), strings.HasPrefix(b, "*")
	switch {
	case aw && bw:
		if len(a) < len(b) {
			return strings.HasSuffix(b[1:], a[1:])
		}
		return strings.HasSuffix(a[1:], b[1:])
	case aw:
		return strings.HasSuffix(b, a[1:])
	case bw:
		return strings.HasSuffix(a, b[1:])
	}
	return a == b
}

// searchNames are the names ztunnel's DNS proxy looks a host up by, in
// order: the host, then wildcards of it of decreasing specificity
// (eu.api.example.com: *.api.example.com, *.example.com, *.com; ztunnel
// src/dns/server.rs get_wildcards).
func searchNames(h string) []string {
	out := []string{h}
	labels := strings.Split(h, ".")
	for i := 1; i < len(labels); i++ {
		out = append(out, "*."+strings.Join(labels[i:], "."))
	}
	return out
}

// serviceEntryFor is what a mesh request to host from a pod of
// namespace ns reaches when a ServiceEntry takes part, as istiod and
// ztunnel's DNS proxy decide it. For the host, then each wildcard of it
// (searchNames), istiod keeps one of each namespace among the
// ServiceEntries listing that name and the Service of that cluster name
// (the Service, else the oldest ServiceEntry: selectWorkloadServices) and
// marks one canonical (the Service, else the oldest of them); ztunnel
// then drops those without an address (seFacts.noAddress; find_server)
// and takes the client's namespace's, else the canonical one, else (not
// determined by ztunnel) the oldest left (find_best_match). The returned
// service is a copy whose hosts start with the name it matched, the name
// istiod's VirtualServices for it bear; it is a Kubernetes Service only
// when a ServiceEntry lists the same name. note names the others. When
// a name has ServiceEntries but none with an address is left, and no
// later name resolves, the first such name's pick is returned with
// uncaptured saying why ztunnel does not capture the connection. nil when
// no ServiceEntry lists the host.
func (ix *Index) serviceEntryFor(host, ns string) (svc *service, note, uncaptured string) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	aliases := []string{host}
	if name, namespace, err := meshHost(host, ns); err == nil {
		if fqdn := name + "." + namespace + ".svc." + clusterDomain; fqdn != host {
			aliases = append(aliases, fqdn)
		}
	}
	var miss *service
	missName := ""
	for _, alias := range aliases {
		for _, name := range searchNames(alias) {
			var listing []*service
			for _, se := range ix.entries {
				if slices.Contains(se.hosts, name) {
					listing = append(listing, se)
				}
			}
			var kube *service
			if n, namespace, err := meshHost(name, ns); err == nil && !strings.HasPrefix(name, "*") && strings.HasSuffix(name, ".svc."+clusterDomain) {
				kube = ix.services[topology.Ref{Kind: topology.KindService.Kind, Namespace: namespace, Name: n}]
			}
			if len(listing) == 0 {
				if kube != nil {
					return nil, "", "" // the Service, as any
				}
				continue
			}
			winners, canonical := namespaceWinners(listing, kube)
			var left []*service
			for _, w := range winners {
				if w == kube || w.se.noAddress(name) == "" {
					left = append(left, w)
				}
			}
			if len(left) == 0 {
				if miss == nil {
					miss, missName = pickService(winners, canonical, ns), name
				}
				continue
			}
			pick := pickService(left, canonical, ns)
			if pick == kube {
				return kube, fmt.Sprintf("host %s is also a host of ServiceEntry %s; ztunnel takes Service %s/%s (a Service wins over the ServiceEntries of its namespace, and is the one other namespaces reach)", name, refList(listing), kube.ref.Namespace, kube.ref.Name), ""
			}
			return matchedCopy(pick, name), othersNote(name, pick, listing, kube), ""
		}
	}
	if miss == nil {
		return nil, "", ""
	}
	return matchedCopy(miss, missName), "", fmt.Sprintf("ztunnel does not capture the connection: host %s of ServiceEntry %s/%s has no address (%s), so ztunnel's DNS proxy does not answer for it, the client connects to the address its own DNS gives, and ztunnel passes the connection on through no waypoint", missName, miss.ref.Namespace, miss.ref.Name, miss.se.noAddress(missName))
}

// olderEntry orders ServiceEntries by creation, then by ref.
func olderEntry(a, b *service) int {
	if c := a.se.created.Compare(b.se.created); c != 0 {
		return c
	}
	return a.ref.Compare(b.ref)
}

// namespaceWinners are, of the ServiceEntries ses listing one name and
// the Service kube of that name (nil when none), the one istiod keeps per
// namespace (the Service, else the oldest ServiceEntry), and the
// canonical one (the Service, else the oldest kept; istiod
// selectWorkloadServices).
func namespaceWinners(ses []*service, kube *service) (winners []*service, canonical *service) {
	best := map[string]*service{}
	if kube != nil {
		best[kube.ref.Namespace] = kube
	}
	for _, s := range ses {
		if b, ok := best[s.ref.Namespace]; !ok || (b != kube && olderEntry(s, b) < 0) {
			best[s.ref.Namespace] = s
		}
	}
	for _, w := range best {
		winners = append(winners, w)
	}
	slices.SortFunc(winners, func(a, b *service) int { return a.ref.Compare(b.ref) })
	canonical = kube
	for _, w := range winners {
		if canonical == nil || (canonical != kube && olderEntry(w, canonical) < 0) {
			canonical = w
		}
	}
	return winners, canonical
}

// pickService is, of the namespaces' winners (namespaceWinners) that are
// left, the one ztunnel resolves the name to for a client of namespace
// ns: that namespace's, else the canonical one when left, else the
// oldest ServiceEntry (ztunnel takes the first it holds: not
// determined).
func pickService(left []*service, canonical *service, ns string) *service {
	var oldest *service
	for _, s := range left {
		if s.ref.Namespace == ns {
			return s
		}
	}
	for _, s := range left {
		if s == canonical {
			return s
		}
		if oldest == nil || (s.se != nil && oldest.se != nil && olderEntry(s, oldest) < 0) {
			oldest = s
		}
	}
	return oldest
}

// matchedCopy is a copy of ServiceEntry se whose hosts start with h.
func matchedCopy(se *service, h string) *service {
	c := *se
	c.hosts = append([]string{h}, slices.DeleteFunc(slices.Clone(se.hosts), func(x string) bool { return x == h })...)
	return &c
}

// refList names services as namespace/name, comma separated.
func refList(ss []*service) string {
	names := make([]string, 0, len(ss))
	for _, s := range ss {
		names = append(names, s.ref.Namespace+"/"+s.ref.Name)
	}
	return strings.Join(names, ", ")
}

// othersNote names the other ServiceEntries (and the Service) listing
// host h when pick was taken, "" when there are none.
func othersNote(h string, pick *service, all []*service, kube *service) string {
	var others []*service
	for _, s := range all {
		if s.ref != pick.ref {
			others = append(others, s)
		}
	}
	if len(others) == 0 && kube == nil {
		return ""
	}
	what := ""
	if len(others) > 0 {
		what = "ServiceEntry " + refList(others)
	}
	if kube != nil {
		if what != "" {
			what += " and "
		}
		what += "Service " + kube.ref.Namespace + "/" + kube.ref.Name
	}
	return fmt.Sprintf("host %s is also a host of %s; ztunnel takes %s/%s (the client's namespace's, else the oldest: istiod's canonical one)", h, what, pick.ref.Namespace, pick.ref.Name)
}

// parentHosts are, for parentRef p of route r at one of Istio's
// waypoints serving svc, the hosts of the VirtualServices istiod makes
// of it that overlap svc's name (getVirtualServiceForWaypoint compares
// the hosts: a ServiceEntry parent gives one per host of it, a Service
// its cluster name); at another implementation's waypoint, or for the
// unbound, the parentRef must name svc itself (its name then). None when
// p does not reach svc.
func (ix *Index) parentHosts(r *route, p gwv1.ParentReference, svc *service, istio bool) []string {
	ref := gatewayapi.ParentOf(r.ref.Namespace, p)
	if !istio {
		if ref == svc.ref {
			return []string{svc.meshName()}
		}
		return nil
	}
	var hosts []string
	switch ref.GroupKind() {
	case topology.KindServiceEntry:
		if se := ix.entryOf[ref]; se != nil {
			hosts = se.hosts
		}
	case topology.KindService:
		hosts = []string{ref.Name + "." + ref.Namespace + ".svc." + clusterDomain}
	}
	name := svc.meshName()
	var out []string
	for _, h := range hosts {
		if istioHostMatches(h, name) && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// parentNoun names what parentRef p of route r names, for messages:
// "the Service" (ServiceEntry) when it is svc itself.
func parentNoun(r *route, p gwv1.ParentReference, svc *service) string {
	ref := gatewayapi.ParentOf(r.ref.Namespace, p)
	if ref == svc.ref {
		return svc.words("the Service")
	}
	return ref.Kind + " " + ref.Namespace + "/" + ref.Name
}

// meshRoutesAt are the routes that may take a mesh request to svc, by
// ref: those with a parentRef naming it, and, at one of Istio's
// waypoints (istio) wp, those of svc's namespace or wp's whose parentRef
// reaches it by host (parentHosts).
func (ix *Index) meshRoutesAt(svc *service, wp topology.Ref, istio bool) []*route {
	var out []*route
	for _, r := range ix.routes {
		for _, p := range r.parents {
			if gatewayapi.ParentOf(r.ref.Namespace, p) == svc.ref {
				out = append(out, r)
				break
			}
			if istio && (r.ref.Namespace == svc.ref.Namespace || r.ref.Namespace == wp.Namespace) {
				if len(ix.parentHosts(r, p, svc, true)) > 0 {
					out = append(out, r)
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *route) int { return a.ref.Compare(b.ref) })
	return out
}

// istioHostname is the backendRef kind istiod reads as a host name
// (group networking.istio.io, kind Hostname): a ServiceEntry's host or a
// Service's cluster name.
var istioHostname = topology.GroupKind{Group: "networking.istio.io", Kind: "Hostname"}

// istioOutcome reports whether istiod programs outcome o's proxy: one of
// its Gateways, or one of its waypoints.
func (ix *Index) istioOutcome(o *Outcome) bool {
	if o.mesh != nil {
		return o.mesh.istio
	}
	g := ix.gateways[o.Gateway]
	return g != nil && g.istio
}

// resolveHostname checks a Hostname backendRef at one of istiod's
// proxies (istio/istio @ 86c9f01f pilot/pkg/config/kube/gateway
// conversion.go buildDestination): no namespace, a port, and a host that
// is a ServiceEntry's (as written, a wildcard one too) or a Service's
// cluster name among the objects. The ref names the host, without
// namespace. ServiceEntries' exportTo is not read.
func (ix *Index) resolveHostname(ref topology.Ref, br gwv1.BackendObjectReference) (topology.Ref, int32, string) {
	host := ref.Name
	ref.Namespace = ""
	var port int32
	if br.Port != nil {
		port = int32(*br.Port)
	}
	switch {
	case br.Namespace != nil:
		return ref, port, "namespace may not be set with Hostname type (istiod)"
	case br.Port == nil:
		return ref, port, "the backendRef names no port, which istiod requires (\"port is required in backendRef\")"
	}
	for _, se := range ix.entries {
		if slices.Contains(se.hosts, strings.ToLower(host)) {
			return ref, port, ""
		}
	}
	if name, ns, err := meshHost(host, ""); err == nil && strings.HasSuffix(host, ".svc."+clusterDomain) {
		if ix.services[topology.Ref{Kind: topology.KindService.Kind, Namespace: ns, Name: name}] != nil {
			return ref, port, ""
		}
	}
	return ref, port, fmt.Sprintf("no ServiceEntry among the objects lists host %s, nor is it a Service's cluster name (istiod: backend(%s) not found, BackendNotFound)", host, host)
}

// istioUnconverted says why istiod converts route r into no
// VirtualService at all, "" when it converts it: a filter it does not
// support (unconvertedFilter), or a backendRef its conversion refuses
// outright rather than as an invalid backend (istio/istio @ 86c9f01f
// pilot/pkg/config/kube/gateway conversion.go buildDestination: a
// Service named by a host name, a Hostname with a namespace, a Service,
// ServiceImport or Hostname without port; computeRoute drops every rule
// of the route on such a hard error). A backendRef crossing namespaces
// without a ReferenceGrant is an invalid backend first, at a Gateway
// (mesh: istiod does not ask for grants at waypoints).
func (ix *Index) istioUnconverted(r *route, mesh bool) string {
	if f := unconvertedFilter(r); f != "" {
		return fmt.Sprintf("istiod does not convert it: its filter %s is none of those it supports, so it drops the whole route", f)
	}
	for _, ru := range r.rules {
		var refs []gwv1.BackendObjectReference
		switch {
		case ru.http != nil:
			for _, b := range ru.http.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
		case ru.grpc != nil:
			for _, b := range ru.grpc.BackendRefs {
				refs = append(refs, b.BackendObjectReference)
			}
		}
		for _, br := range refs {
			ref := gatewayapi.BackendOf(r.ref.Namespace, br)
			if !mesh && ref.Namespace != r.ref.Namespace && !ix.grants.Allows(r.ref.GroupKind(), r.ref.Namespace, ref) {
				continue
			}
			why := ""
			switch gk := ref.GroupKind(); {
			case gk == topology.KindService && strings.Contains(ref.Name, "."):
				why = "service name invalid; the name of the Service must be used, not the hostname"
			case gk == istioHostname && br.Namespace != nil:
				why = "namespace may not be set with Hostname type"
			case (gk == topology.KindService || gk == istioHostname || gk == serviceImport) && br.Port == nil:
				why = "port is required in backendRef"
			}
			if why != "" {
				return fmt.Sprintf("istiod does not convert it: backendRef %s of rule %s: %s, so it drops the whole route", ref.Name, ru.name, why)
			}
		}
	}
	return ""
}

// serviceImport is the GroupKind of the Multi-Cluster Services API's
// ServiceImport, which istiod reads as a Service of the clusterset.
var serviceImport = topology.GroupKind{Group: "multicluster.x-k8s.io", Kind: "ServiceImport"}
