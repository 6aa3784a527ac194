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
go test -count=1 ./... "$@"
