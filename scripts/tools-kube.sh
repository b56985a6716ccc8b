#!/usr/bin/env bash
# tools-kube.sh installs the binaries the Kubernetes sandbox starts — etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok — into the Tidegate cache, outside the clone, so
# every clone and CI run on a machine builds them once. `tools-kube.sh kubectl` also builds kubectl
# v1.37.2, which the sandbox does not start (any recent kubectl on PATH talks to it).
#
# Idempotent: each tool has a stamp file holding the version it was built at; a tool whose binary
# and stamp match is skipped, so a warm run takes seconds. Versions are pinned here and in the
# tools modules under scripts/tools/ (go.mod and go.sum), so builds are reproducible.
#
# Time: the Kubernetes binaries and kwok are one `go build` of one module, so the packages they
# share (client-go, the API types, apiserver) compile once, and their links overlap; no DWARF is
# generated or linked. The modules download while etcd builds. BENCHMARKS.md has the figures.
set -euo pipefail

readonly KUBE_VERSION=v1.37.2 # k8s.io/kubernetes, pinned in scripts/tools/kube/go.mod
readonly ETCD_VERSION=v3.7.3  # go.etcd.io/etcd/server/v3, pinned in scripts/tools/etcd/go.mod
readonly KWOK_VERSION=v0.8.0  # sigs.k8s.io/kwok, pinned in scripts/tools/kube/go.mod beside Kubernetes;
# shared/dev/sandbox/stages follow its own stages

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
# No debug information: -ldflags -s -w leaves it out of the binaries, and -dwarf=false keeps the
# compiler from generating it in the first place. tools-aws.sh builds with the same flags.
readonly gcflags=all=-dwarf=false
# The Kubernetes binaries and kwok are also built without inlining (-l), which takes a sixth of
# the compiler's work out of the longest step of a newcomer's first run, except in the packages
# every request runs through: the standard library (so it also compiles once for every tool),
# and the apiserver's serving, encoding and storage-client paths. BENCHMARKS.md ("`make tools` on
# a fresh cache") has the build times and the LIST times both ways. Each -gcflags pattern is a
# `;`-separated item; for a package, the last pattern that matches it wins.
kube_gcflags="$gcflags -l"
for p in std k8s.io/apimachinery/... k8s.io/apiserver/... k8s.io/api/... k8s.io/kubernetes/pkg/apis/... \
	k8s.io/kubernetes/pkg/registry/... sigs.k8s.io/structured-merge-diff/... sigs.k8s.io/json/... \
	google.golang.org/protobuf/... github.com/gogo/protobuf/... google.golang.org/grpc/... \
	go.etcd.io/etcd/client/...; do
	kube_gcflags+=";$p=-dwarf=false"
done
readonly kube_gcflags

want_kubectl=false
case "${1:-}" in
"") ;;
kubectl) want_kubectl=true ;;
*) die "usage: tools-kube.sh [kubectl]" ;;
esac

fresh() { # fresh NAME STAMP: the binary exists and was built as STAMP says (version, compiler flags).
	[[ -e "$bin/$1" && "$(cat "$stamps/$1" 2>/dev/null)" == "$2" ]]
}
stamp() { printf '%s\n' "$2" >"$stamps/$1"; }

# built_name PACKAGE: the file go build -o DIR/ writes PACKAGE's binary to: its last path element,
# or the one before it when that is a major version (go.etcd.io/etcd/server/v3 builds "server").
built_name() {
	local pkg=$1 last=${1##*/}
	if [[ "$last" =~ ^v[0-9]+$ ]]; then
		pkg=${pkg%/*}
		last=${pkg##*/}
	fi
	printf '%s\n' "$last"
}

# build DIR GCFLAGS LDFLAGS NAME=VERSION=PACKAGE...: one go build, in the module at DIR, of every
# package whose binary is not fresh, into a temporary folder whose binaries are then renamed into
# place, so an interrupted build never leaves a half-written binary that looks installed. A binary
# is fresh when it was built at VERSION with GCFLAGS (`;`-separated -gcflags arguments).
build() {
	local dir=$1 compile=$2 ldflags=$3 spec name version pkg f flags
	shift 3
	local gcargs=()
	IFS=";" read -ra flags <<<"$compile"
	for f in "${flags[@]}"; do gcargs+=(-gcflags "$f"); done
	local names=() versions=() pkgs=()
	for spec in "$@"; do
		IFS== read -r name version pkg <<<"$spec"
		version+=" $compile"
		fresh "$name" "$version" && continue
		names+=("$name")
		versions+=("$version")
		pkgs+=("$pkg")
	done
	((${#names[@]})) || return 0
	say "building ${names[*]} (once)…"
	local start=$SECONDS tmp="$bin/.build.tmp.d"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# -p 2: the apiserver's link step alone peaks near 2.8 GB; two actions at a time keep a 2-core
	# machine busy without running out of memory.
	(cd "$dir" && go build -p 2 -trimpath "${gcargs[@]}" -ldflags "$ldflags" -o "$tmp/" "${pkgs[@]}") ||
		die "building ${names[*]} failed (see the go output above)"
	local i out
	for i in "${!names[@]}"; do
		out=$(built_name "${pkgs[i]}")
		[[ -e "$tmp/$out" ]] || die "go build made no $out for ${pkgs[i]} (wanted as ${names[i]})"
		mv -f "$tmp/$out" "$bin/${names[i]}"
		stamp "${names[i]}" "${versions[i]}"
	done
	rm -rf "$tmp"
	say "built ${names[*]} in $((SECONDS - start))s"
}

started=$SECONDS

kube=(
	"kube-apiserver=$KUBE_VERSION=k8s.io/kubernetes/cmd/kube-apiserver"
	"kube-controller-manager=$KUBE_VERSION=k8s.io/kubernetes/cmd/kube-controller-manager"
	"kube-scheduler=$KUBE_VERSION=k8s.io/kubernetes/cmd/kube-scheduler"
	"kwok=$KWOK_VERSION=sigs.k8s.io/kwok/cmd/kwok"
)
if $want_kubectl; then
	kube+=("kubectl=$KUBE_VERSION=k8s.io/kubernetes/cmd/kubectl")
fi

# The Kubernetes module's downloads (hundreds of MB on a fresh machine) go on while etcd compiles:
# listing the packages' dependencies fetches the modules they come from, and only those.
downloads=""
for spec in "${kube[@]}"; do
	IFS== read -r name version _ <<<"$spec"
	if ! fresh "$name" "$version $kube_gcflags"; then
		pkgs=()
		for s in "${kube[@]}"; do pkgs+=("${s##*=}"); done
		(cd "$here/tools/kube" && exec go list -e -deps -f '' "${pkgs[@]}" >/dev/null 2>&1) &
		downloads=$!
		trap '[[ -z "$downloads" ]] || kill "$downloads" 2>/dev/null || true' EXIT
		break
	fi
done

build "$here/tools/etcd" "$gcflags" "-s -w" "etcd=$ETCD_VERSION=go.etcd.io/etcd/server/v3"

# Without the version stamped in, kubectl and client-go report v0.0.0 and `kubectl version` fails
# its skew check. kwok's own release build stamps its version the same way (hack/releases.sh).
[[ "$KUBE_VERSION" =~ ^v([0-9]+)\.([0-9]+)\. ]] || die "KUBE_VERSION $KUBE_VERSION is not vMAJOR.MINOR.PATCH"
kube_ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=${BASH_REMATCH[1]} -X $p.gitMinor=${BASH_REMATCH[2]}"
	kube_ldflags+=" -X $p.gitTreeState=clean"
done
if [[ -n "$downloads" ]]; then
	wait "$downloads" || true # a failed download shows again, with its cause, in go build's output
	downloads=""
fi
build "$here/tools/kube" "$kube_gcflags" "$kube_ldflags" "${kube[@]}"

# kwok's stages are not installed here: they live in the repository (shared/dev/sandbox/stages),
# built into Tidegate and written into each sandbox's folder, so a change to them needs no cache
# refresh. The kwok/stages.yaml earlier versions of this script wrote into the cache is left for
# older checkouts that share it; nothing here reads it.

say "Kubernetes sandbox tools ready in $bin ($((SECONDS - started))s)"
