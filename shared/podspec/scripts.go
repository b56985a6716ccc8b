package podspec

// The containers' shell scripts are fixed text. Whatever varies (the sources' URL and digest,
// the directories, the start command) reaches them as environment variables or arguments, so
// no app name, URL or command can become shell syntax.

// timedInstall runs installScript ($2) under a limit of $1 seconds, then 10 more before a
// KILL, and says so in the log the beat reports when the limit is what ended it.
const timedInstall = `timeout -k 10 "$1" sh -c "$2" tidegate-install && exit 0
status=$?
if [ "$status" -eq 124 ]; then
  echo "tidegate install: not done within $1 seconds" >&2
fi
exit "$status"
`

// installScript fetches the release's sources, checks their digest before unpacking them into
// $TIDEGATE_APP_DIR, then installs their dependencies the way their lockfile says: JavaScript
// and Python each by the first of their files found, npm resolving package.json when there is
// no lockfile. Development dependencies are left out where the tool can. The archive is kept in
// $HOME, which only this container mounts.
const installScript = `set -eu
fail() { echo "tidegate install: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || fail "the release has $2, but the image has no $1"; }
# pnpm and yarn come from corepack when the image has it, so package.json's packageManager holds.
managed() {
  tool=$1 lock=$2
  shift 2
  if command -v corepack >/dev/null 2>&1; then
    corepack "$tool" "$@"
  else
    need "$tool" "$lock"
    "$tool" "$@"
  fi
}
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0 NPM_CONFIG_UPDATE_NOTIFIER=false \
  PIP_DISABLE_PIP_VERSION_CHECK=1 POETRY_VIRTUALENVS_IN_PROJECT=true

archive="$HOME/sources.tar.gz"
echo "tidegate install: fetching the sources"
if command -v node >/dev/null 2>&1; then
  node -e '
const { createWriteStream } = require("fs");
const { Readable } = require("stream");
const { pipeline } = require("stream/promises");
const [url, out] = process.argv.slice(1);
fetch(url)
  .then((r) => {
    if (!r.ok) throw new Error("the sources answered HTTP " + r.status);
    return pipeline(Readable.fromWeb(r.body), createWriteStream(out));
  })
  .catch((e) => {
    const cause = e.cause ? ": " + e.cause.message : "";
    console.error("tidegate install: fetching the sources: " + e.message + cause);
    process.exit(1);
  });
' "$TIDEGATE_SOURCES_URL" "$archive"
elif command -v python3 >/dev/null 2>&1; then
  python3 -c '
import shutil, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r, open(sys.argv[2], "wb") as f:
        shutil.copyfileobj(r, f)
except Exception as e:
    sys.exit("tidegate install: fetching the sources: %s" % e)
' "$TIDEGATE_SOURCES_URL" "$archive"
else
  fail "the image has neither node nor python3 to fetch the sources with"
fi
got=$(sha256sum "$archive" | cut -d " " -f 1)
if [ "$got" != "$TIDEGATE_SOURCES_SHA256" ]; then
  fail "the sources fetched have sha256 $got, not the release's $TIDEGATE_SOURCES_SHA256"
fi
tar -xzf "$archive" -C "$TIDEGATE_APP_DIR"
rm -f "$archive"
cd "$TIDEGATE_APP_DIR"

js=found py=found
if [ -f bun.lock ] || [ -f bun.lockb ]; then
  need bun "a bun lockfile"
  bun install --frozen-lockfile --production
elif [ -f pnpm-lock.yaml ]; then
  managed pnpm pnpm-lock.yaml install --frozen-lockfile --prod
elif [ -f yarn.lock ]; then
  managed yarn yarn.lock install --frozen-lockfile
elif [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then
  need npm package-lock.json
  npm ci --omit=dev --no-audit --no-fund
elif [ -f package.json ]; then
  need npm package.json
  npm install --omit=dev --no-audit --no-fund
else
  js=none
fi
if [ -f uv.lock ]; then
  need uv uv.lock
  uv sync --frozen --no-dev
elif [ -f poetry.lock ]; then
  need poetry poetry.lock
  poetry install --only main --no-root --no-interaction
elif [ -f requirements.txt ]; then
  need python3 requirements.txt
  python3 -m venv .venv
  .venv/bin/pip install --no-cache-dir -r requirements.txt
else
  py=none
fi
if [ "$js$py" = nonenone ]; then
  echo "tidegate install: no lockfile, package.json or requirements.txt: nothing to install"
fi
echo "tidegate install: done"
`

// startScript runs in the app's directory: a Python release's .venv first on PATH, then the
// command given as arguments, or by default npm start for a package.json, else main.py.
const startScript = `if [ -d .venv ]; then
  VIRTUAL_ENV="$PWD/.venv"
  PATH="$VIRTUAL_ENV/bin:$PATH"
  export VIRTUAL_ENV PATH
fi
if [ "$#" -gt 0 ]; then
  exec "$@"
fi
if [ -f package.json ]; then
  exec npm start
fi
if [ -f main.py ]; then
  exec python3 main.py
fi
echo "tidegate start: no command was given, and there is no package.json or main.py to start" >&2
exit 1
`
