package engine

import (
	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// ReasonMissingResource says that the implementation enforces no policy of
// the kind while an object it needs is missing (policy.Kind.RequiredObjects;
// Kuadrant's reason).
const ReasonMissingResource = "MissingResource"

// RequiredObjectMetadata are the metadata fields the engine reads of a
// required object (policy.Kind.RequiredObjects): whether it exists and is
// not being deleted. Readers and caches keep these only.
var RequiredObjectMetadata = []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp"}

// collectRequiredKinds starts the counts of the kinds some policy kind
// requires an object of.
func (c *computation) collectRequiredKinds() {
	c.requiredKinds = nil
	for _, k := range c.kinds {
		for _, r := range k.RequiredObjects {
			if c.requiredKinds == nil {
				c.requiredKinds = map[topology.GroupKind]int{}
			}
			c.requiredKinds[r.Kind] = 0
		}
	}
}

// withRequiredObjects makes cond, a Programmed condition of a policy of a
// kind with required objects, False with reason MissingResource when one
// is missing: judged only where the cluster was read (Options.ServedAPIs
// known; with files every object counts as there, as objects without
// status count as ready) and the kind could be listed (Options.Unread
// says of a kind whose objects were not all read that absence says
// nothing). Its implementation says so before anything else about the
// policy's paths (Kuadrant's enforcedCondition), so it replaces cond.
func (c *computation) withRequiredObjects(k *policy.Kind, cond Condition) Condition {
	if len(k.RequiredObjects) == 0 || c.opts.ServedAPIs == nil || cond.Type != CondProgrammed {
		return cond
	}
	var unread func(topology.GroupKind) bool
	if c.opts.Unread != nil {
		unread = func(gk topology.GroupKind) bool { return c.opts.Unread(topology.Ref{Group: gk.Group, Kind: gk.Kind}) }
	}
	msg := k.MissingRequiredObjects(func(gk topology.GroupKind) bool { return c.requiredKinds[gk] > 0 }, unread)
	if msg == "" {
		return cond
	}
	return Condition{Type: CondProgrammed, Status: "False", Reason: ReasonMissingResource, Message: "Policy is not programmed: " + msg}
}
