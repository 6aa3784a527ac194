// Package routing answers GEP-713's question "what happens when request X
// comes in?": it routes a request (URL, method, headers) through the
// Gateways of a topology as the Gateway API specifies it, and finds the
// effective policies on the context the request takes.
//
// Build indexes the listeners of every Gateway (and of the ListenerSets it
// admits) and the routes the engine's topology attached to each, by
// hostname and path, so that Trace looks a request's candidates up rather
// than scanning every route. Of an HTTPRoute and a GRPCRoute with
// intersecting hostnames on one listener, only the older is indexed there,
// as the GRPCRoute API requires. Trace selects the listener (port, protocol,
// most specific hostname, SNI for HTTPS and TLS), matches HTTPRoute,
// GRPCRoute and TLSRoute rules with the API's precedence rules across every
// route of the listener, applies the filters (header modifiers, redirect,
// URL rewrite, mirrors, per-backend filters) and resolves the backends
// (invalid ones answer 500, no match 404). AddPolicies then adds, from an
// engine result, the effective policy of every kind on exactly that
// context, with provenance.
//
// The package is pure: no I/O, no clients. Its choices where the API
// leaves room are in docs/semantics.md ("Request tracing").
package routing
