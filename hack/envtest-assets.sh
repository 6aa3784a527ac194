#!/usr/bin/env bash
# Builds the real kube-apiserver and etcd binaries that the integration tests
# (internal/testenv, controller-runtime's envtest) run against.
#
# No prebuilt binary can be downloaded, so both are compiled from the sources
# pinned in hack/tools/envtest/go.mod (k8s.io/kubernetes and
# go.etcd.io/etcd/server/v3, fetched through the Go module proxy). Only Go is
# needed. A cold build takes several minutes on 2 cores; a second run that
# finds both binaries in the cache returns at once.
#
# Usage:
#   export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"
#
# The directory holding the binaries is printed on the last line of stdout;
# build chatter goes to stderr. The cache root is
#   ${ATTACHE_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attache/envtest}
# and the binaries land in <root>/k8s-<k8s version>-etcd-<etcd version>/.
# Set ATTACHE_ENVTEST_REBUILD=1 to rebuild even when the binaries are there.
set -euo pipefail

log() { printf 'envtest-assets: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tools_dir="$script_dir/tools/envtest"
[[ -f "$tools_dir/go.mod" ]] || die "missing $tools_dir/go.mod"
command -v go >/dev/null 2>&1 || die "go is not on PATH"

# modver MODULE prints the version that hack/tools/envtest/go.mod requires.
modver() {
	awk -v m="$1" '$1 == m && $2 ~ /^v[0-9]/ && $0 !~ /=>/ { print $2; exit }' "$tools_dir/go.mod"
}

k8s_version=$(modver k8s.io/kubernetes)
etcd_version=$(modver go.etcd.io/etcd/server/v3)
[[ -n "$k8s_version" ]] || die "k8s.io/kubernetes is not required in $tools_dir/go.mod"
[[ -n "$etcd_version" ]] || die "go.etcd.io/etcd/server/v3 is not required in $tools_dir/go.mod"

k8s_major=${k8s_version#v}
k8s_major=${k8s_major%%.*}
k8s_minor=${k8s_version#v*.}
k8s_minor=${k8s_minor%%.*}

cache_root=${ATTACHE_ENVTEST_CACHE:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/attache/envtest}
dest="$cache_root/k8s-$k8s_version-etcd-$etcd_version"

# check_bins DIR succeeds when DIR holds both binaries and they report the
# expected versions.
check_bins() {
	local dir=$1 out
	[[ -x "$dir/kube-apiserver" && -x "$dir/etcd" ]] || return 1
	out=$("$dir/kube-apiserver" --version 2>&1) || return 1
	[[ "$out" == "Kubernetes $k8s_version" ]] || { log "$dir/kube-apiserver --version: $out"; return 1; }
	out=$("$dir/etcd" --version 2>&1) || return 1
	[[ "$out" == *"etcd Version: ${etcd_version#v}"* ]] || { log "$dir/etcd --version: $out"; return 1; }
	return 0
}

if [[ "${ATTACHE_ENVTEST_REBUILD:-}" != "1" ]] && check_bins "$dest"; then
	log "kube-apiserver $k8s_version and etcd $etcd_version already in $dest"
	printf '%s\n' "$dest"
	exit 0
fi

mkdir -p "$cache_root"
tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$k8s_major -X $pkg.gitMinor=$k8s_minor"
done
ldflags+=" -X go.etcd.io/etcd/api/v3/version.GitSHA=go.etcd.io/etcd/server/v3@$etcd_version"

log "building kube-apiserver $k8s_version and etcd $etcd_version with $(go env GOVERSION) (a cold build takes minutes)"
start=$(date +%s)
# One go build for both main packages so that they share the compile graph.
# -mod=readonly: the versions come from the committed go.mod and go.sum only.
(
	cd "$tools_dir"
	export CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"
	go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		go.etcd.io/etcd/server/v3
) >&2
# The etcd main package is the root of go.etcd.io/etcd/server/v3, so go build
# names its binary "server".
mv "$tmp/server" "$tmp/etcd"
log "built in $(( $(date +%s) - start ))s"

check_bins "$tmp" || die "the freshly built binaries do not report $k8s_version / $etcd_version"

mkdir -p "$dest"
# Renames within one file system are atomic, so a concurrent reader sees
# either the old binary or the new one.
mv -f "$tmp/kube-apiserver" "$dest/kube-apiserver"
mv -f "$tmp/etcd" "$dest/etcd"
check_bins "$dest" || die "binaries in $dest do not work"
log "kube-apiserver and etcd are in $dest"
printf '%s\n' "$dest"
