#!/usr/bin/env bash
# tools-redocly.sh installs the OpenAPI linter scripts/test.sh runs on the served contract
# (shared/httpapi/openapi.json, with shared/httpapi/redocly.yaml): Redocly's CLI, pinned with its
# integrity hash in scripts/tools/redocly/package-lock.json and installed with `npm ci` into the
# cache folder outside the clone, as redocly/node_modules. It runs on the Node 22 tools-aws.sh
# installs (bin/node22). A stamp holds the lock file's hash, so a second run only checks it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"
pins="$here/tools/redocly"
dest="$CACHE/redocly"
cli="$dest/node_modules/@redocly/cli/bin/cli.js"

say() { printf 'tools-redocly: %s\n' "$*" >&2; }
die() {
	printf 'tools-redocly: error: %s\n' "$*" >&2
	exit 1
}

mkdir -p "$CACHE/stamps" || die "cannot create $CACHE; set TIDEGATE_CACHE to a writable folder"
# One install at a time per cache: two clones running this at once would share redocly/.
if command -v flock >/dev/null; then
	exec 9>"$CACHE/.tools-redocly.lock"
	flock 9
fi

want="$(sha256sum "$pins/package-lock.json" | cut -d' ' -f1)"
if [[ -f "$cli" && "$(cat "$CACHE/stamps/redocly" 2>/dev/null)" == "$want" ]]; then
	say "redocly ($(sed -n 's/.*"@redocly\/cli": "\(.*\)".*/\1/p' "$pins/package.json")): ok"
	exit 0
fi
command -v npm >/dev/null || die "npm is not on PATH; scripts/tools-aws.sh installs it (run scripts/tools.sh)"
say "npm ci $pins into $dest"
rm -rf "$dest"
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error >&2 ||
	die "npm ci of $pins/package-lock.json failed (see the npm output above)"
[[ -f "$cli" ]] || die "the install did not provide $cli"
printf '%s\n' "$want" >"$CACHE/stamps/redocly"
