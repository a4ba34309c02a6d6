'use strict';
/**
 * Shared pieces of the benches that run trendhooks itself (api, delivery, pagination): the dist/
 * check, `--name=value` options, medians, a log line with the time, and scratch databases.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { URL } = require('node:url');

const ROOT = path.resolve(__dirname, '..');
// BENCH_DIST: another build to measure (e.g. the code before a change, built into a folder of the repo).
const DIST = process.env.BENCH_DIST ? path.resolve(process.env.BENCH_DIST) : path.join(ROOT, 'dist');
const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Exits with a hint when dist/ lacks `file` (relative to dist/), i.e. it is missing or older than `what`. */
function requireBuild(file, what) {
  if (fs.existsSync(path.join(DIST, file))) return;
  console.error(`dist/ is missing${what ? ` or predates ${what}` : ''}: run \`npm run build\` first`);
  process.exit(1);
}

/** The number given as `--name=value`, or `def`. */
function arg(name, def) {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : def;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One statement on the PostgreSQL server's admin database (rejects when it is unreachable). */
async function pgAdmin(sql) {
  // Required here, not at the top: the delivery bench's app child loads this file, and on SQLite
  // the app itself never loads pg (its peak RSS is measured).
  const { Client } = require('pg');
  const client = new Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

let scratch = 0;
/**
 * A fresh database for one measurement: a SQLite file in a new temporary folder, or a PostgreSQL
 * database `th_bench_<pid>_<n>`. `database` is the app's DatabaseConfig, `url` its DATABASE_URL;
 * `drop()` removes it. Rejects when PostgreSQL is unreachable. With `template` (another scratch
 * database of the dialect, closed), a copy of it.
 */
async function scratchDatabase(dialect, template) {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-bench-'));
    const file = path.join(dir, 'bench.db');
    if (template) for (const ext of ['', '-wal']) if (fs.existsSync(template.database.path + ext)) fs.copyFileSync(template.database.path + ext, file + ext);
    return { database: { type: 'sqlite', path: file }, url: `sqlite:${file}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `th_bench_${process.pid}_${scratch++}`;
  await pgAdmin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template.name}` : ''}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return { name, database: { type: 'postgres', url: url.toString() }, url: url.toString(), drop: () => pgAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Whether the PostgreSQL server answers; when not, says so and the benchmark runs its SQLite half only. */
async function pgUp() {
  try {
    await pgAdmin('SELECT 1');
    return true;
  } catch (err) {
    log(`PostgreSQL at ${PG_ADMIN_URL} unavailable (${err.message}): its half is skipped`);
    return false;
  }
}

/**
 * Writes a benchmark's result JSON into bench/results/ and fails the process when its targets were
 * not met (`out.pass` false), printing `out.missed` (the targets missed, one line each) if given.
 */
function writeResult(name, out) {
  const file = path.join(__dirname, 'results', name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
  if (!out.pass) {
    for (const m of out.missed ?? []) console.log(`target missed: ${m}`);
    process.exitCode = 1;
  }
}

/**
 * CPU time of the PostgreSQL server processes serving database `name` (backends and autovacuum
 * workers: their process titles name the database), from now until `stop()`, in µs; null where
 * /proc cannot show them (another OS, another machine). Sampled every 100 ms, each process from
 * its first sighting (a backend opened meanwhile counts whole): one that exits between samples
 * loses at most its last 100 ms. The server's shared processes (WAL writer, checkpointer) are
 * left out: other databases' work lands there too.
 */
function pgServerCpu(name) {
  const base = new Map(); // pid -> ticks (utime + stime, USER_HZ = 100) at the start; 0 when first seen later
  const last = new Map(); // pid -> ticks at its latest sighting
  const sample = (first) => {
    let pids;
    try {
      pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    } catch {
      return false;
    }
    for (const pid of pids) {
      try {
        const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
        if (!title.startsWith('postgres: ') || !title.includes(` ${name} `)) continue;
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const t = Number(f[11]) + Number(f[12]);
        if (!base.has(pid)) base.set(pid, first ? t : 0);
        last.set(pid, t);
      } catch {
        // exited meanwhile
      }
    }
    return true;
  };
  const ok = sample(true);
  const timer = setInterval(() => sample(false), 100);
  return {
    stop() {
      clearInterval(timer);
      if (!ok) return null;
      sample(false);
      let ticks = 0;
      for (const [pid, t] of last) ticks += t - base.get(pid);
      return ticks * 10_000;
    },
  };
}

module.exports = { ROOT, DIST, PG_ADMIN_URL, requireBuild, arg, median, log, sleep, pgAdmin, pgUp, pgServerCpu, scratchDatabase, writeResult };
