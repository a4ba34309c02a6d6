#!/usr/bin/env bash
# npm run test:packed — the package as a host team gets it: `npm pack` (the prepare script builds
# dist/ first, unless it is up to date), the tarball installed into a fresh copy of test/packed-host/ (a Nest app of its own,
# with its own dependencies from the npm registry), type-checked with strict and skipLibCheck false
# under node16 and node10 module resolution, then its e2e run on SQLite and on a scratch PostgreSQL
# database (PACKED_HOST_PG, default postgres://postgres@127.0.0.1:5432, trust auth).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pg="${PACKED_HOST_PG:-postgres://postgres@127.0.0.1:5432}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/th-packed-XXXXXX")"
db="th_packed_host_$$"
cleanup() {
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
t0=$SECONDS

echo "--- [$((SECONDS - t0)) s] npm pack"
# npm pack runs the prepare script (a full build) unless dist/ is newer than every source file,
# as right after `npm ci` in .ci/run.
skip=()
if [ -f "$root/dist/index.js" ] && [ -z "$(find "$root/src" "$root/package.json" "$root/tsconfig.json" "$root/tsconfig.build.json" -newer "$root/dist/index.js" -print -quit)" ]; then
  skip=(--ignore-scripts)
  echo "dist/ is up to date: packed without rebuilding"
fi
(cd "$root" && npm pack --silent "${skip[@]}" --pack-destination "$tmp" --json) > "$tmp/pack.json"
tarball="$tmp/$(node -e 'const [p]=require(process.argv[1]); console.log(p.filename)' "$tmp/pack.json")"
node -e 'const [p]=require(process.argv[1]); console.log(`${p.filename}: ${p.entryCount} files, ${(p.size/1024).toFixed(0)} kB packed, ${(p.unpackedSize/1024).toFixed(0)} kB unpacked`)' "$tmp/pack.json"

echo "--- [$((SECONDS - t0)) s] a fresh host app: test/packed-host/ + the tarball + its own dependencies"
mkdir "$tmp/host"
cp -R "$root/test/packed-host/." "$tmp/host/"
cd "$tmp/host"
rm -rf node_modules out
# No install scripts: the host tree has two, @scarf/scarf (telemetry, off) and better-sqlite3's
# native build, minutes of C++ on a busy machine. Its binary is the checkout's when the versions
# match (same machine, same Node), else it is built here; the e2e loads it either way.
npm install --no-audit --no-fund --prefer-offline --loglevel=error --ignore-scripts "$tarball"
version() { node -p 'require(require("node:path").resolve(process.argv[1])).version' "$1/package.json"; }
native=build/Release/better_sqlite3.node
if [ -f "$root/node_modules/better-sqlite3/$native" ] && [ "$(version "$root/node_modules/better-sqlite3")" = "$(version node_modules/better-sqlite3)" ]; then
  mkdir -p "node_modules/better-sqlite3/$(dirname "$native")"
  cp "$root/node_modules/better-sqlite3/$native" "node_modules/better-sqlite3/$native"
else
  npm rebuild better-sqlite3 --loglevel=error
fi
# One instance of each peer dependency, the host's: a second copy under trendhooks would be a second DI token.
dupes="$(cd node_modules/trendhooks && ls -d node_modules/@nestjs/common node_modules/@nestjs/core node_modules/@nestjs/typeorm node_modules/@nestjs/schedule \
  node_modules/typeorm node_modules/class-validator node_modules/class-transformer node_modules/reflect-metadata node_modules/rxjs 2>/dev/null || true)"
if [ -n "$dupes" ]; then echo "peer dependencies installed twice:"; echo "$dupes"; exit 1; fi

echo "--- [$((SECONDS - t0)) s] tsc (strict, skipLibCheck false; node16, then node10 module resolution)"
npx --no-install tsc -p tsconfig.json
npx --no-install tsc -p tsconfig.node10.json --noEmit

echo "--- [$((SECONDS - t0)) s] e2e on SQLite and PostgreSQL"
psql "$pg/postgres" -qc "CREATE DATABASE $db"
PACKED_HOST_PG_URL="$pg/$db" node --test --test-concurrency=1 out/test/
echo "packed-host test passed in $((SECONDS - t0)) s"
