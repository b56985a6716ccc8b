#!/usr/bin/env bash
# tools-axe.sh installs the accessibility checker the console's browser test
# (shared/dev/devstack/console_test.go) runs on every page: axe-core, pinned with its integrity
# hash in scripts/tools/axe/package-lock.json and installed with `npm ci` into the cache folder
# outside the clone, as axe/node_modules. The test injects its axe.min.js into each page; nothing
# of it runs under Node. A stamp holds the lock file's hash, so a second run only checks it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"
pins="$here/tools/axe"
dest="$CACHE/axe"
script="$dest/node_modules/axe-core/axe.min.js"

say() { printf 'tools-axe: %s\n' "$*" >&2; }
die() {
	printf 'tools-axe: error: %s\n' "$*" >&2
	exit 1
}

mkdir -p "$CACHE/stamps" || die "cannot create $CACHE; set TIDEGATE_CACHE to a writable folder"
# One install at a time per cache: two clones running this at once would share axe/.
if command -v flock >/dev/null; then
	exec 9>"$CACHE/.tools-axe.lock"
	flock 9
fi

want="$(sha256sum "$pins/package-lock.json" | cut -d' ' -f1)"
if [[ -f "$script" && "$(cat "$CACHE/stamps/axe" 2>/dev/null)" == "$want" ]]; then
	say "axe-core ($(sed -n 's/.*"axe-core": "\(.*\)".*/\1/p' "$pins/package.json")): ok"
	exit 0
fi
command -v npm >/dev/null || die "npm is not on PATH; scripts/tools-aws.sh installs it (run scripts/tools.sh)"
say "npm ci $pins into $dest"
rm -rf "$dest"
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error >&2 ||
	die "npm ci of $pins/package-lock.json failed (see the npm output above)"
[[ -f "$script" ]] || die "the install did not provide $script"
printf '%s\n' "$want" >"$CACHE/stamps/axe"
