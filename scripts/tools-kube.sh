#!/usr/bin/env bash
# tools-kube.sh installs the Kubernetes sandbox's binaries — etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl and kwok — into the Tidegate cache, outside the
# clone, so every clone and CI run on a machine builds them once.
#
# Idempotent: each tool has a stamp file holding the version it was built at; a tool whose binary
# and stamp match is skipped, so a warm run takes seconds. Versions are pinned here and in the
# tools modules under scripts/tools/ (go.mod and go.sum), so builds are reproducible.
set -euo pipefail

readonly KUBE_VERSION=v1.37.2 # k8s.io/kubernetes, pinned in scripts/tools/kube/go.mod
readonly ETCD_VERSION=v3.7.3  # go.etcd.io/etcd/server/v3, pinned in scripts/tools/etcd/go.mod
readonly KWOK_VERSION=v0.8.0  # sigs.k8s.io/kwok; shared/dev/sandbox/stages follow its own stages

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"
bin="$cache/bin"
stamps="$cache/stamps"

say() { printf 'tidegate tools: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 ||
	die "go is not on PATH; install Go 1.26 or newer, then run this again"
goversion="$(go env GOVERSION)"
[[ "$goversion" =~ ^go1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= 26)) ||
	die "found $goversion; the Kubernetes $KUBE_VERSION sources need Go 1.26 or newer"

mkdir -p "$bin" "$stamps" || die "cannot create $bin; set TIDEGATE_CACHE to a writable folder"

# Two runs at once (two terminals, parallel CI steps) would build the same binaries twice and race
# on the renames; the second waits for the first and then finds everything fresh.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$cache/.tools-kube.lock"
	flock 9
fi

# The tools modules are their own modules: a go.work or -mod flag of the caller must not leak in,
# and VCS stamping would need git for a build that does not care which commit it came from.
export GOWORK=off GOFLAGS=-buildvcs=false
# Static binaries, as Kubernetes' own release builds are; no C toolchain is needed.
export CGO_ENABLED=0

fresh() { # fresh NAME VERSION: the binary exists and was built at VERSION.
	[[ -e "$bin/$1" && "$(cat "$stamps/$1" 2>/dev/null)" == "$2" ]]
}
stamp() { printf '%s\n' "$2" >"$stamps/$1"; }

# build NAME VERSION MODULE_DIR PACKAGE ESTIMATE LDFLAGS: go build into a temporary file renamed
# into place, so an interrupted build never leaves a half-written binary that looks installed.
build() {
	local name=$1 version=$2 dir=$3 pkg=$4 estimate=$5 ldflags=$6
	if fresh "$name" "$version"; then
		return
	fi
	say "building $name $version ($estimate, once)…"
	local start=$SECONDS tmp="$bin/.$name.tmp"
	# -p 2: the apiserver's link step alone peaks near 2.8 GB, and one package graph at a time on
	# a 2-core machine is as fast as more and does not run out of memory.
	(cd "$dir" && go build -p 2 -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg") ||
		die "building $name failed (see the go output above)"
	mv -f "$tmp" "$bin/$name"
	stamp "$name" "$version"
	say "built $name in $((SECONDS - start))s"
}

started=$SECONDS

build etcd "$ETCD_VERSION" "$here/tools/etcd" go.etcd.io/etcd/server/v3 "about a minute" "-s -w"

# Without the version stamped in, kubectl and client-go report v0.0.0 and `kubectl version` fails
# its skew check.
[[ "$KUBE_VERSION" =~ ^v([0-9]+)\.([0-9]+)\. ]] || die "KUBE_VERSION $KUBE_VERSION is not vMAJOR.MINOR.PATCH"
kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=${BASH_REMATCH[1]} -X $p.gitMinor=${BASH_REMATCH[2]}"
	kube_ldflags+=" -X $p.gitTreeState=clean"
done
# Estimates are cold builds measured on a 2-core machine; later binaries reuse the build cache.
build kube-apiserver "$KUBE_VERSION" "$here/tools/kube" k8s.io/kubernetes/cmd/kube-apiserver "about 4 minutes" "$kube_ldflags"
build kube-controller-manager "$KUBE_VERSION" "$here/tools/kube" k8s.io/kubernetes/cmd/kube-controller-manager "about 2.5 minutes" "$kube_ldflags"
build kube-scheduler "$KUBE_VERSION" "$here/tools/kube" k8s.io/kubernetes/cmd/kube-scheduler "under a minute" "$kube_ldflags"
build kubectl "$KUBE_VERSION" "$here/tools/kube" k8s.io/kubernetes/cmd/kubectl "under a minute" "$kube_ldflags"

if ! fresh kwok "$KWOK_VERSION"; then
	say "building kwok $KWOK_VERSION (about a minute, once)…"
	start=$SECONDS
	gobin="$bin/.kwok.tmp.d"
	rm -rf "$gobin"
	# kwok's own release build stamps its version the same way (hack/releases.sh).
	GOBIN="$gobin" go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
		"sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" || die "installing kwok failed (see the go output above)"
	mv -f "$gobin/kwok" "$bin/kwok"
	rm -rf "$gobin"
	stamp kwok "$KWOK_VERSION"
	say "built kwok in $((SECONDS - start))s"
fi

# kwok's stages are not installed here: they live in the repository (shared/dev/sandbox/stages),
# built into Tidegate and written into each sandbox's folder, so a change to them needs no cache
# refresh. The kwok/stages.yaml earlier versions of this script wrote into the cache is left for
# older checkouts that share it; nothing here reads it.

say "Kubernetes sandbox tools ready in $bin ($((SECONDS - started))s)"
