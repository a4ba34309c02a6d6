import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';

/**
 * What `npm pack` puts in the tarball, and what its types need: the fast half of the packaging
 * checks (`npm run test:packed` installs the tarball in a host app and compiles and runs it). Reads
 * the checkout's dist/, so it runs after `npm run build` like the CLI suites.
 */
const ROOT = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

interface Packed {
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

let packed: Packed;
let files: string[];

beforeAll(() => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  packed = (JSON.parse(out) as Packed[])[0];
  files = packed.files.map((f) => f.path);
}, 60_000);

describe('the packed tarball', () => {
  it('holds what a user runs, and nothing of the sources, tests, benchmarks or CI', () => {
    const unwanted = files.filter((f) => /^(src|test|bench|scripts|\.ci|node_modules|data)\//.test(f) || /\.(spec|e2e-spec|rel-spec|fake)\.|\.map$|\.tsbuildinfo$/.test(f));
    expect(unwanted).toEqual([]);
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['README.md', 'bin/trendhooks.js', 'package.json']);
    // The portal page's stylesheet is the one shipped file that is neither code nor types.
    expect(files.filter((f) => !(f === 'README.md' || f === 'package.json' || f.startsWith('bin/') || /^dist\/.+\.(js|d\.ts)$/.test(f)))).toEqual(['dist/portal/page/portal.css']);
    // Small: about 0.35 MB packed, 1.2 MB unpacked today; the bounds catch a folder slipping in.
    expect(packed.size).toBeLessThan(1_000_000);
    expect(packed.unpackedSize).toBeLessThan(3_000_000);
  });

  it('has every file main, types, bin, exports and typesVersions name', () => {
    const named = [pkg.main, pkg.types, ...Object.values(pkg.bin)];
    for (const target of Object.values(pkg.exports)) named.push(...(typeof target === 'string' ? [target] : [target.types, target.default]));
    for (const map of Object.values(pkg.typesVersions)) for (const targets of Object.values(map)) named.push(...targets);
    const missing = named.map((f) => f.replace(/^\.\//, '')).filter((f) => !files.includes(f));
    expect(missing).toEqual([]);
    // The standalone service is its own entry: importing the modules does not load it.
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './cli', './package.json', './standalone']);
    const root = fs.readFileSync(path.join(ROOT, 'dist/index.js'), 'utf8');
    expect(root).not.toMatch(/require\("\.\/(app|app\.module|cli|main)"\)/);
  });

  it('loads none of the standalone service, the CLI, terminus, the HTTP adapters or @nestjs/swagger when a host imports the root entry', () => {
    const script = `require('reflect-metadata'); require('./dist/index.js');
      process.stdout.write(JSON.stringify(Object.keys(require.cache).map((f) => require('node:path').relative(process.cwd(), f))));`;
    const loaded = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
    const standalone = loaded.filter((f) => /^dist\/(app|app\.module|cli|main|standalone)\.js$|^dist\/cli\/|node_modules\/(@nestjs\/(terminus|platform-express|platform-fastify|swagger)|commander|cli-progress|swagger-ui-dist)\//.test(f));
    expect(standalone).toEqual([]);
    expect(loaded).toContain('dist/webhooks/webhooks.module.js');
  });

  it('loads no PostgreSQL driver, Redis client, terminus or @nestjs/swagger with the standalone app until the configuration asks for them', () => {
    // Each costs the process megabytes of resident memory: pg is required by the PostgreSQL queue when it
    // opens its pool (TypeORM's driver has loaded it by then), ioredis by the rate-limit store given REDIS_URL,
    // @nestjs/swagger when the OpenAPI document is first asked for (test/optional-packages.e2e-spec.ts).
    const script = `require('reflect-metadata'); require('./dist/standalone.js');
      process.stdout.write(JSON.stringify(Object.keys(require.cache).map((f) => require('node:path').relative(process.cwd(), f))));`;
    const loaded = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as string[];
    expect(loaded).toContain('dist/app.module.js');
    expect(loaded.filter((f) => /node_modules\/(pg|pg-pool|ioredis|@nestjs\/terminus|@nestjs\/swagger|swagger-ui-dist)\//.test(f))).toEqual([]);
  });

  it('imports in its .d.ts files only packages it depends on that ship their own types, and no driver types', () => {
    const deps = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    const builtins = new Set(builtinModules);
    const problems: string[] = [];
    for (const f of files.filter((x) => x.endsWith('.d.ts'))) {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\(\s*|require\(\s*)['"]([^'".][^'"]*)['"]/g)) {
        const spec = m[1];
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (name === 'pg' || name === 'better-sqlite3') problems.push(`${f}: driver types (${spec}) need @types/* a host may not have`);
        else if (!deps.has(name)) problems.push(`${f}: ${spec} is not a dependency or peer dependency`);
        else {
          const dir = path.join(ROOT, 'node_modules', name);
          const depPkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { types?: string; typings?: string; exports?: unknown };
          if (!depPkg.types && !depPkg.typings && !fs.existsSync(path.join(dir, 'index.d.ts')) && !JSON.stringify(depPkg.exports ?? {}).includes('"types"')) {
            problems.push(`${f}: ${name} ships no types of its own`);
          }
        }
      }
    }
    expect([...new Set(problems)]).toEqual([]);
  });
});

describe('README "Using the modules in your own Nest app"', () => {
  it("shows the packed-host app's module and bootstrap verbatim, so the example compiles and runs as pasted", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## Using the modules in your own Nest app');
    expect(start).toBeGreaterThan(0);
    // The example itself, before the subsections (whose sketches are not files of the fixture).
    const section = readme.slice(start, readme.indexOf('\n### ', start + 4));
    expect(section.slice(1)).not.toContain('\n## ');
    const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    const fixture = (f: string) => fs.readFileSync(path.join(ROOT, 'test/packed-host/src', f), 'utf8');
    expect(blocks).toEqual([fixture('host.module.ts'), fixture('main.ts')]);
  });
});

describe('package.json', () => {
  const PEERS = ['@nestjs/common', '@nestjs/core', '@nestjs/typeorm', '@nestjs/schedule', 'typeorm', 'reflect-metadata', 'rxjs', 'class-validator', 'class-transformer'];

  it('has the packages a host must share as peers, installed here at a version the peer range allows', () => {
    for (const name of PEERS) {
      expect({ name, peer: typeof pkg.peerDependencies[name], dependency: pkg.dependencies[name] }).toEqual({ name, peer: 'string', dependency: undefined });
      const installed = (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
      expect({ name, installed, allowed: satisfies(installed, pkg.peerDependencies[name]) }).toEqual({ name, installed, allowed: true });
    }
  });

  it("states every peer range in the README's table", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('| package | version |'), readme.indexOf("Nest 12's packages are ES modules only"));
    for (const [name, range] of Object.entries(pkg.peerDependencies as Record<string, string>)) {
      const row = table.split('\n').find((line) => line.includes(`\`${name}\``)) ?? '';
      expect({ name, range, stated: row.replace(/\\\|/g, '|').includes(`\`${range}\``) }).toEqual({ name, range, stated: true });
    }
  });

  it('keeps the peers in a production install of this repository (the Dockerfile prunes with --omit=dev)', () => {
    // A peer listed in devDependencies too is locked as dev-only, and `npm prune --omit=dev` removes it.
    const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
    for (const name of PEERS) {
      expect({ name, devDependency: pkg.devDependencies[name] }).toEqual({ name, devDependency: undefined });
      const locked = lock.packages[`node_modules/${name}`];
      expect({ name, dev: locked?.dev ?? false, devOptional: locked?.devOptional ?? false }).toEqual({ name, dev: false, devOptional: false });
    }
  });
});

/** `^x.y.z` ranges joined by `||`: all this file's peer ranges use. */
function satisfies(version: string, range: string): boolean {
  const v = version.split('.').map(Number);
  return range.split('||').some((part) => {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!m) throw new Error(`range "${part}" is not ^x.y.z`);
    const r = [Number(m[1]), Number(m[2]), Number(m[3])];
    const fixed = r[0] > 0 ? 1 : r[1] > 0 ? 2 : 3; // ^0.3.20 keeps 0.3; ^11.0.0 keeps 11
    for (let i = 0; i < fixed; i++) if (v[i] !== r[i]) return false;
    for (let i = 0; i < 3; i++) if (v[i] !== r[i]) return v[i] > r[i];
    return true;
  });
}
