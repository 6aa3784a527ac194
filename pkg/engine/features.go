package engine

import (
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/profiles"
	"github.com/attache-dev/attache/pkg/topology"
)

// FeaturesRead are the names of the implementation features
// (Options.Features, --feature) that computing with the policy kinds
// kinds reads, so that a name outside it changes nothing:
//   - each kind's feature gates, the features its validation rules
//     are judged unless (NGINX Gateway Fabric's NGF.nginx.plus), and
//     those its CA readings take SDS reference Secrets with (Envoy
//     Gateway's extensionApis.enableSDSSecretRef);
//   - for a kind serving Envoy Gateway's Gateways (its controllers name
//     Envoy Gateway's, or any controller), Envoy Gateway's default for
//     merging a GatewayClass's Gateways (profiles.EGMergeGateways), and
//     for each path of Envoy Gateway's default EnvoyProxy spec its
//     data-plane allowlists, requirements on the parameters, regular
//     expressions judged unless a parameter, and cluster-IP routing
//     condition read, the feature saying that spec sets it
//     (profiles.DefaultSpecFeature: EnvoyGateway.envoyProxy.geoIP, ...),
//     as a Gateway running with that spec is judged by them.
func FeaturesRead(kinds []*policy.Kind) map[string]bool {
	out := map[string]bool{}
	for _, k := range kinds {
		for _, g := range k.FeatureGates {
			out[g.Feature] = true
		}
		for _, v := range k.Validations {
			if v.UnlessFeature != "" {
				out[v.UnlessFeature] = true
			}
		}
		for _, f := range k.CARefs.SDSFeatures() {
			out[f] = true
		}
		if len(k.Controllers) > 0 && !slices.Contains(k.Controllers, profiles.EnvoyGatewayController) {
			continue
		}
		out[profiles.EGMergeGateways] = true
		var paths []policy.BackendRefPath
		for _, a := range k.Allowlists {
			paths = append(paths, a.In)
		}
		for _, r := range k.RequirementsOf(topology.GroupKind{}) {
			paths = append(paths, r.Any...)
		}
		for _, r := range k.RegexFields {
			if path, _, _ := strings.Cut(r.Unless, "="); path != "" {
				paths = append(paths, policy.BackendRefPath(path))
			}
		}
		if k.ClusterIPRouting != "" {
			paths = append(paths, k.ClusterIPRouting.Path())
		}
		for _, p := range paths {
			out[profiles.DefaultSpecFeature(string(p))] = true
		}
	}
	return out
}
