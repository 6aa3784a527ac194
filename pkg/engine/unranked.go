package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/attache-dev/attache/pkg/policy"
	"github.com/attache-dev/attache/pkg/topology"
)

// A Direct kind whose implementation does not rank a policy on a section
// above one on the section's object (policy.Kind.SectionsUnrankedBy: NGINX
// Gateway Fabric's BackendTLSPolicy) meets them at the section as one
// level (joinLevel), where its same-level rule decides. A policy on the
// whole object may then lose at some of its sections and win at others;
// it is Conflicted where it loses at every section used through a
// Gateway (unrankedConflicts).

// unrankedAt reports whether the kind's policies on section sec's object
// and on sec meet there as one level: the Gateways sec takes effect
// through (controllersAt) are all of one implementation that does not
// rank them.
func (d *kindDP) unrankedAt(sec topology.Ref) bool {
	if len(d.kind.SectionsUnrankedBy) == 0 {
		return false
	}
	ctls := d.c.controllersAt(sec)
	if len(ctls) != 1 {
		return false
	}
	for ctl := range ctls {
		return d.kind.SectionsUnrankedAt(ctl)
	}
	return false
}

// sectionUse is one context of an attachment on a whole object, at one of
// the object's sections: the Gateways the section is used through, and
// whether the attachment lost there (with the attachment it lost to).
type sectionUse struct {
	section topology.Ref
	gws     []topology.Ref
	lostTo  *Attachment
}

// unrankedConflicts is, for attachment a of a kind with unranked sections
// made on a whole object and rejected at some of its sections only, the
// verdict on it: whole, when it is rejected at every section used through
// a Gateway (the reason and message of an ancestor entry, with perGW
// nil); else, with reason "", per Gateway (perGW: Conflicted through a
// Gateway at whose every section it is rejected, nil for the others). All
// zero when none of this applies.
func (c *computation) unrankedConflicts(a *attachment) (reason, msg string, perGW func(topology.Ref) []Condition) {
	k := a.pol.p.Kind
	if len(k.SectionsUnrankedBy) == 0 || a.conflicted == 0 || a.conflicted >= a.reach.Contexts || c.graph.Node(a.node).Ref.IsSection() {
		return "", "", nil
	}
	d := c.dps[k]
	if d == nil {
		return "", "", nil
	}
	var uses []sectionUse
	for _, s := range c.graph.Sections(a.node) {
		ts := d.targets[s]
		if ts == nil {
			continue
		}
		ref := c.graph.Node(s).Ref
		gws := c.servedGatewaysAbove(k, ref)
		if users := c.policiesUsing(ref); len(users) > 0 {
			// The ancestors that the policies sending traffic there
			// give it (an NGINX Gateway Fabric PayloadProcessor's
			// Gateways), as gatewayAncestors names them.
			gws = append(slices.Clip(gws), c.userAncestors(users)...)
		}
		if len(gws) == 0 {
			continue // used through no Gateway: no ancestor says it
		}
		for _, sr := range ts.stacks {
			for _, e := range sr.entries {
				if e.Attachment != a.ref {
					continue
				}
				u := sectionUse{section: ref, gws: gws}
				if e.Conflicted && len(e.ConflictedBy) > 0 {
					u.lostTo = e.ConflictedBy[0]
				}
				uses = append(uses, u)
			}
		}
	}
	lost := func(us []sectionUse) (*sectionUse, bool) {
		if len(us) == 0 {
			return nil, false
		}
		for i := range us {
			if us[i].lostTo == nil {
				return nil, false
			}
		}
		return &us[0], true
	}
	// message names the policies a lost to at us, each where it did first.
	message := func(us []sectionUse, where string) string {
		var names []string
		for _, u := range us {
			why := "it is older"
			if id, ok := c.attByRef[u.lostTo]; ok {
				why = whyEstablished(c.atts[id], a)
			}
			n := fmt.Sprintf("%s %s on %s (%s)", u.lostTo.Policy.Kind, shortName(u.lostTo.Policy), u.section.Short(), why)
			if !slices.ContainsFunc(names, func(s string) bool {
				return strings.HasPrefix(s, u.lostTo.Policy.Kind+" "+shortName(u.lostTo.Policy)+" ")
			}) {
				names = append(names, n)
			}
		}
		obj := c.graph.Node(a.node).Ref
		noun := policy.SectionNoun(obj.GroupKind())
		return fmt.Sprintf("Conflicts with the established %s, at every one of the %s %s: its Gateways' implementation ranks a policy on one of the %s no higher than one on the whole %s, and the established policy wins",
			strings.Join(names, ", "), noun, where, noun, obj.Kind)
	}
	if _, ok := lost(uses); ok {
		return ReasonConflicted, message(uses, "used through a Gateway"), nil
	}
	return "", "", func(gw topology.Ref) []Condition {
		var through []sectionUse
		for _, u := range uses {
			// gw as a parentRef, or as an object (a Gateway named so:
			// policy.Kind.AncestorServiceGatewaysBy).
			if slices.ContainsFunc(u.gws, func(g topology.Ref) bool {
				return g == gw || (!gw.IsSection() && c.namesAsObject(k, gw) && c.parentGateway(g) == gw)
			}) {
				through = append(through, u)
			}
		}
		if _, ok := lost(through); !ok {
			return nil
		}
		return []Condition{{Type: CondAccepted, Status: "False", Reason: ReasonConflicted, Message: message(through, "used through "+gw.Short())}}
	}
}

// firstConditions is the per-Gateway verdict of the first of fs that
// gives one; nil when every f is nil.
func firstConditions(fs ...func(topology.Ref) []Condition) func(topology.Ref) []Condition {
	fs = slices.DeleteFunc(fs, func(f func(topology.Ref) []Condition) bool { return f == nil })
	switch len(fs) {
	case 0:
		return nil
	case 1:
		return fs[0]
	}
	return func(gw topology.Ref) []Condition {
		for _, f := range fs {
			if conds := f(gw); conds != nil {
				return conds
			}
		}
		return nil
	}
}

// parentGateway is the Gateway a parentRef gw names: its object, a
// ListenerSet's Gateway.
func (c *computation) parentGateway(gw topology.Ref) topology.Ref {
	o := gw.Object()
	if topology.IsListenerSet(o.GroupKind()) {
		return c.listenerSetGateway(o)
	}
	return o
}

// namesAsObject reports whether kind k names Gateway gw, in a backend
// policy's ancestors, as an object (policy.Kind.AncestorServiceGatewaysBy).
func (c *computation) namesAsObject(k *policy.Kind, gw topology.Ref) bool {
	f, ok := c.gateways[gw]
	return ok && f.classKnown && k.ServiceGatewaysAt(f.controller)
}
