#!/usr/bin/env bash
# Runs every test of the project from a fresh clone: builds (or reuses) the
# real kube-apiserver and etcd for the integration tests, then vets and tests
# every package. Only Go and the Go module proxy are needed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"
export KUBEBUILDER_ASSETS

unformatted=$(gofmt -l cmd pkg internal conformance)
if [[ -n "$unformatted" ]]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go vet -tags scale ./internal/scale
go test -count=1 ./... "$@"
# Issue 9's scale harness at its small size, with the assertions that do
# not depend on timing: writes equal the floor, every EffectivePolicy
# within its bound, a restart writes nothing (hack/scale.sh runs the
# larger sizes).
go test -tags scale -count=1 -timeout 10m -run '^TestScale$' ./internal/scale -args -case=small -assert
