#!/usr/bin/env bash
# Runs the scale harness of issue 9 (internal/scale, build tag "scale"):
# the real kube-apiserver and etcd, a generated topology of the named size,
# the real attache-controller binary as its own process (built from this
# tree unless BINARY is set), then prints a Markdown table row and JSON:
# time to ready and to convergence, peak RSS, write requests against the
# floor, EffectivePolicy sizes, and two policy edits.
#
# Usage:
#   hack/scale.sh [small|first|second|large] [more go test -args flags]
# Environment:
#   BINARY=path       run this attache-controller instead of building one
#   OUT=dir           also write scale-<case>.json and scale-<case>.md there
#   CONTROLLER_ARGS   more flags for the controller ("--write-qps=50")
#   CONTROLLER_ENV    more environment for the controller alone
#                     ("GODEBUG=gctrace=1": each collection's heap, in its log)
#   GOMEMLIMIT        given to the controller alone, not to the API server
#                     and etcd (the shipped Deployment's binary sets 0.9 of
#                     its memory limit: 921MiB for 1Gi)
# More flags: -assert (CI's checks), -webhook=false (no admission webhook;
# it is served by default, as in the shipped Deployment).
#   TIMEOUT           go test timeout (default 40m)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case_name=${1:-small}
shift || true
KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"
export KUBEBUILDER_ASSETS
args=(-case="$case_name")
[[ -n "${BINARY:-}" ]] && args+=(-binary="$(cd "$(dirname "$BINARY")" && pwd)/$(basename "$BINARY")")
[[ -n "${OUT:-}" ]] && args+=(-out="$(mkdir -p "$OUT" && cd "$OUT" && pwd)")
if [[ -n "${GOMEMLIMIT:-}" ]]; then
	args+=(-gomemlimit="$GOMEMLIMIT")
	unset GOMEMLIMIT
fi
[[ -n "${CONTROLLER_ARGS:-}" ]] && args+=(-controller-args="$CONTROLLER_ARGS")
[[ -n "${CONTROLLER_ENV:-}" ]] && args+=(-controller-env="$CONTROLLER_ENV")
exec go test -tags scale -count=1 -timeout "${TIMEOUT:-40m}" -run '^TestScale$' -v ./internal/scale -args "${args[@]}" "$@"
