// Package upstream holds tests that run attache on other projects' own test
// inputs, read from their Go modules at test time (internal/modfixtures):
// Gateway API's conformance manifests for BackendTLSPolicy, the conformance
// suite's routing cases (request and expected response, read from the
// tests' Go sources with go/ast) run through request tracing, and Istio's
// CRDs. It has no code of its own.
package upstream
