#!/usr/bin/env bash
# tools-browser.sh installs the browser the console's tests drive (shared/dev/devstack/console_test.go):
# Debian's chromium package, headless-capable. It is a system package, not a cached build: a
# machine that already has chromium (on PATH, or at /usr/bin/chromium) is left as it is. Without
# root or apt-get it says so and leaves the browser tests to skip, since nothing else needs it.
set -euo pipefail

say() { printf 'tools-browser: %s\n' "$*" >&2; }

if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || [[ -x /usr/bin/chromium ]]; then
	exit 0
fi
if [[ $EUID -ne 0 ]]; then
	say "chromium is missing and installing it needs root: run 'sudo apt-get install -y chromium' for the console's browser tests (they skip without it)"
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	say "chromium is missing and apt-get is not available; install chromium by hand for the console's browser tests (they skip without it)"
	exit 0
fi
say "apt-get update"
DEBIAN_FRONTEND=noninteractive apt-get update -qq || { say "apt-get update failed"; exit 1; }
say "apt-get install chromium"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
	{ say "apt-get install chromium failed"; exit 1; }
say "chromium $(chromium --version 2>/dev/null || echo '(version unknown)') installed"
