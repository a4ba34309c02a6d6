#!/usr/bin/env bash
# npm run test:packed [-- current|oldest] — the package as a host team gets it: `npm pack` (the
# prepare script builds dist/ first), then a fresh copy of test/packed-host/ (a Nest app of its own)
# installs its stack from the npm registry and the tarball, is type-checked with strict and
# skipLibCheck false, and runs its e2e on SQLite and on a scratch PostgreSQL database
# (PACKED_HOST_PG, default postgres://postgres@127.0.0.1:5432, trust auth). Two stacks:
#   current  today's releases, installed without versions as a new team would, in an ES module
#            host ("type": "module", module nodenext), compiled with today's TypeScript;
#   oldest   the oldest version each of trendhooks' peer ranges allows (read from package.json),
#            in a CommonJS host, type-checked under node16 and node10 module resolution.
# Either way: no peer warning from npm, a clean `npm ls`, and what the tarball adds to the host's
# node_modules, printed and held to PACKED_HOST_MAX_MB (default 40).
set -euo pipefail
stack="${1:-current}"
case "$stack" in current|oldest) ;; *) echo "usage: packed-host-test.sh [current|oldest]" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
pg="${PACKED_HOST_PG:-postgres://postgres@127.0.0.1:5432}"
max_mb="${PACKED_HOST_MAX_MB:-40}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/th-packed-XXXXXX")"
db="th_packed_host_$$"
cleanup() {
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
t0=$SECONDS
version() { node -p 'require(require("node:path").resolve(process.argv[1])).version' "$1/package.json"; }

echo "--- [$((SECONDS - t0)) s] npm pack"
(cd "$root" && npm pack --silent --pack-destination "$tmp" --json) > "$tmp/pack.json"
tarball="$tmp/$(node -e 'const [p]=require(process.argv[1]); console.log(p.filename)' "$tmp/pack.json")"
node -e 'const [p]=require(process.argv[1]); console.log(`${p.filename}: ${p.entryCount} files, ${(p.size/1024).toFixed(0)} kB packed, ${(p.unpackedSize/1024).toFixed(0)} kB unpacked`)' "$tmp/pack.json"

# The host's stack. better-sqlite3 is the checkout's version on both: 13, today's, needs Node 22
# (on Node 20 it crashes) and TypeORM 1.1 peers ^12; the checkout's native build is reused.
sqlite="better-sqlite3@$(version "$root/node_modules/better-sqlite3")"
if [ "$stack" = current ]; then
  deps=(@nestjs/common @nestjs/core @nestjs/platform-express @nestjs/typeorm @nestjs/schedule typeorm class-validator class-transformer reflect-metadata rxjs express pg "$sqlite")
  devs=(typescript @types/node supertest @types/supertest)
else
  # Each peer's lowest allowed version (pg: an optional peer the e2e uses).
  mapfile -t deps < <(node -e '
    const semver = require(require.resolve("semver", { paths: [process.argv[1]] }));
    const { peerDependencies: peers, peerDependenciesMeta: meta = {} } = require(process.argv[1] + "/package.json");
    for (const [name, range] of Object.entries(peers)) if (!meta[name]?.optional || name === "pg") console.log(`${name}@${semver.minVersion(range)}`);
  ' "$root")
  deps+=("$sqlite")
  devs=(typescript@5.9 @types/node@22 supertest @types/supertest)
fi

echo "--- [$((SECONDS - t0)) s] a fresh $stack host app: test/packed-host/ + ${deps[*]}"
mkdir "$tmp/host"
cp -R "$root/test/packed-host/." "$tmp/host/"
cd "$tmp/host"
rm -rf node_modules out
[ "$stack" = current ] && npm pkg set type=module
# No install scripts: better-sqlite3's native build is minutes of C++; its binary is the checkout's
# (same machine, same Node, same version). @scarf/scarf (telemetry) stays off.
host_install() {
  npm install --no-audit --no-fund --prefer-offline --ignore-scripts "$@" 2>&1 | tee -a "$tmp/npm.log"
}
host_install "${deps[@]}"
host_install -D "${devs[@]}"
native=build/Release/better_sqlite3.node
mkdir -p "node_modules/better-sqlite3/$(dirname "$native")"
cp "$root/node_modules/better-sqlite3/$native" "node_modules/better-sqlite3/$native"
before_kb="$(du -sk node_modules | cut -f1)"

echo "--- [$((SECONDS - t0)) s] npm install the tarball (its scripts allowed: npm's install-scripts notice must not name trendhooks)"
# The host's package.json allows no install script (allowScripts: better-sqlite3's binary is copied
# above); trendhooks itself has none to run, so npm has nothing to note.
npm install --no-audit --no-fund --prefer-offline "$tarball" 2>&1 | tee "$tmp/npm-tarball.log" | tee -a "$tmp/npm.log"
if grep -q 'install-scripts' "$tmp/npm-tarball.log"; then echo "npm noted install scripts when the host installed trendhooks (above)"; exit 1; fi
if grep -q 'EBADENGINE' "$tmp/npm.log"; then echo "npm warned about an engine (above)"; exit 1; fi
after_kb="$(du -sk node_modules | cut -f1)"
added_mb="$(node -p "((${after_kb} - ${before_kb}) / 1024).toFixed(1)")"
echo "trendhooks adds ${added_mb} MB to the host's node_modules (${before_kb} kB before, ${after_kb} kB after; at most ${max_mb} MB)"
if grep -qiE 'ERESOLVE|peer dep|conflicting peer|invalid:' "$tmp/npm.log"; then echo "npm warned about peer dependencies (above)"; exit 1; fi
npm ls --all >/dev/null || { npm ls --all 2>&1 | grep -iE 'invalid|missing|ERR' | head -20; echo "npm ls is not clean"; exit 1; }
node -e 'process.exit(Number(process.argv[1]) <= Number(process.argv[2]) ? 0 : 1)' "$added_mb" "$max_mb" || { echo "trendhooks adds more than ${max_mb} MB"; exit 1; }
# One instance of each peer dependency, the host's: a second copy under trendhooks would be a second DI token.
dupes="$(cd node_modules/trendhooks && ls -d node_modules/@nestjs/common node_modules/@nestjs/core node_modules/@nestjs/typeorm node_modules/@nestjs/schedule \
  node_modules/typeorm node_modules/class-validator node_modules/class-transformer node_modules/reflect-metadata node_modules/rxjs node_modules/better-sqlite3 2>/dev/null || true)"
if [ -n "$dupes" ]; then echo "installed twice:"; echo "$dupes"; exit 1; fi
# What an express + SQLite host does not use is not installed for it.
for unused in @nestjs/platform-fastify fastify @nestjs/swagger swagger-ui-dist ioredis; do
  if [ -e "node_modules/$unused" ]; then echo "$unused was installed for an express + SQLite host"; exit 1; fi
done
echo "versions: $(node -p 'const v = (n) => require(require("node:path").resolve("node_modules", n, "package.json")).version; ["@nestjs/core", "@nestjs/typeorm", "@nestjs/schedule", "typeorm", "typescript"].map((n) => n + " " + v(n)).join(", ")')"

# The published types name no type of a package the host did not choose: not pino (its types need
# esModuleInterop), not an optional peer. Only the shared peers, Node's and trendhooks' own.
imports="$(find node_modules/trendhooks/dist -name '*.d.ts' -exec grep -hoE "(from '|import\(\")[^.'\"][^'\"]*" {} + | sed -E "s/^(from '|import\(\")//" | sort -u)"
echo "the published .d.ts import: $(echo $imports)"
foreign="$(echo "$imports" | grep -vE '^(node:.*|@nestjs/(common|core|schedule)|typeorm|rxjs|commander|ulid|undici|prom-client|ipaddr\.js)$' || true)"
if [ -n "$foreign" ]; then echo "published .d.ts import packages a host does not choose:"; echo "$foreign"; exit 1; fi

echo "--- [$((SECONDS - t0)) s] tsc (strict, skipLibCheck false, no esModuleInterop)"
npx --no-install tsc -p tsconfig.json
if [ "$stack" = oldest ]; then npx --no-install tsc -p tsconfig.node10.json --noEmit; fi

echo "--- [$((SECONDS - t0)) s] e2e on SQLite and PostgreSQL"
psql "$pg/postgres" -qc "CREATE DATABASE $db"
PACKED_HOST_PG_URL="$pg/$db" node --test --test-concurrency=1 'out/test/*.js'
echo "packed-host test ($stack) passed in $((SECONDS - t0)) s"
