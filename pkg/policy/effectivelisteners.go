package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Listener conditions a kind may ask of the listeners it takes effect on
// (Kind.EffectiveListeners).
const (
	// ListenerHostname: the listener has a hostname.
	ListenerHostname = "hostname"
	// ListenerTLSTerminate: the listener terminates TLS with certificates
	// of its own namespace: a tls block whose mode is Terminate (the API
	// server's default), with certificateRefs, each a core Secret in the
	// listener's namespace.
	ListenerTLSTerminate = "tls-terminate"
	// ListenerAttachedRoutes: routes are attached to the listener, as its
	// Gateway's status says (status.listeners[].attachedRoutes above 0);
	// a Gateway whose status says nothing yet (a manifest) has the routes
	// attache attaches there.
	ListenerAttachedRoutes = "attached-routes"
	// ListenerAddresses: the listener's Gateway has addresses, as its
	// status says (status.addresses not empty); a Gateway whose status
	// says nothing yet (a manifest) counts as having them.
	ListenerAddresses = "addresses"
)

// listenerConditions are the conditions known, in the order shown.
var listenerConditions = []string{ListenerHostname, ListenerTLSTerminate, ListenerAttachedRoutes, ListenerAddresses}

// ParseEffectiveListeners reads the annotation
// attache.dev/effective-listeners: conditions separated by commas
// (hostname, tls-terminate, attached-routes, addresses), or "any" (nil).
func ParseEffectiveListeners(v string) ([]string, error) {
	return parseAnyList(v, func(c string) error {
		if !slices.Contains(listenerConditions, c) {
			return fmt.Errorf("listener condition %q is not one of %s", c, strings.Join(listenerConditions, ", "))
		}
		return nil
	})
}

// EffectiveListenersString renders a kind's listener conditions as the
// annotation value ("any" for none).
func EffectiveListenersString(cs []string) string { return anyListString(cs) }
