import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, runCli, stopProcess } from './support/processes';
import { freePort } from './support/ports';

/**
 * What an express + SQLite host does not use, it need not install: pg (PostgreSQL), ioredis
 * (REDIS_URL), @nestjs/platform-fastify and fastify (HTTP_ADAPTER=fastify), @nestjs/swagger and
 * swagger-ui-dist (the OpenAPI document, /docs). test/support/without-packages.js hides them from a
 * process as if they were not installed (and records every require of one); each is loaded only
 * where it is used, and a set-up that asks for a missing one fails with one line naming it.
 * Runs dist/ (built by global-setup), as a host gets the package. No database server is involved.
 */
const ROOT = path.resolve(__dirname, '..');
const HIDE = `--require ${path.join(__dirname, 'support/without-packages.js')}`;
const OPTIONAL = ['pg', 'pg-pool', 'ioredis', '@nestjs/platform-fastify', 'fastify', '@nestjs/swagger', 'swagger-ui-dist'];

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-optional-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a host on SQLite and express', () => {
  it('loads the root entry, builds every module that needs none of them, serves and closes, with none of them installed', async () => {
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(__dirname, 'support/light-host.js'), path.join(dir, 'light-host.db')], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, NODE_OPTIONS: HIDE, WITHOUT_PACKAGES: OPTIONAL.join(',') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += String(d)));
      child.stderr.on('data', (d) => (stderr += String(d)));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      statuses: { createWebhook: 201, listWebhooks: 200, listPosts: 200 },
      components: ['securitySchemes', 'headers'],
      // Nothing even tried to require them (an error caught and ignored would still show here)…
      required: [],
      // …and no file of theirs is in the process.
      loaded: [],
    });
  }, 60_000);
});

describe('a set-up that asks for one that is missing', () => {
  const cases: [string, string[], string[], Record<string, string>, string][] = [
    ['REDIS_URL', ['ioredis'], ['serve', '--role', 'api'], { REDIS_URL: 'redis://127.0.0.1:6379' }, 'REDIS_URL is set but the "ioredis" package is not installed: npm install ioredis'],
    [
      'a PostgreSQL DATABASE_URL (serve)',
      ['pg', 'pg-pool'],
      ['serve', '--role', 'api'],
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none' },
      'DATABASE_URL names a PostgreSQL database but the "pg" package is not installed: npm install pg',
    ],
    [
      'a PostgreSQL DATABASE_URL (migrate)',
      ['pg', 'pg-pool'],
      ['migrate'],
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/none' },
      'DATABASE_URL names a PostgreSQL database but the "pg" package is not installed: npm install pg',
    ],
    [
      'HTTP_ADAPTER=fastify',
      ['@nestjs/platform-fastify', 'fastify'],
      ['serve', '--role', 'api'],
      { HTTP_ADAPTER: 'fastify' },
      'HTTP_ADAPTER is fastify but the "@nestjs/platform-fastify" package is not installed: npm install @nestjs/platform-fastify',
    ],
    [
      'the OpenAPI document',
      ['@nestjs/swagger', 'swagger-ui-dist'],
      ['openapi'],
      {},
      'the OpenAPI document (GET /openapi.json, GET /docs, trendhooks openapi) was asked for but the "@nestjs/swagger" package is not installed: npm install @nestjs/swagger',
    ],
  ];

  it.each(cases)('%s: exit 1 with one line naming the package to install', async (_name, hidden, args, env, line) => {
    const port = await freePort();
    const res = await runCli(args, {
      NODE_OPTIONS: HIDE,
      WITHOUT_PACKAGES: hidden.join(','),
      DATABASE_URL: `sqlite:${path.join(dir, `${port}.db`)}`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    });
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 1, stderr: `error: ${line}\n` });
  }, 30_000);

  it('the standalone service without @nestjs/swagger: serves its API, warns once, and answers /openapi.json and /docs 404 with that line', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI, 'serve', '--role', 'api'], {
      env: {
        PATH: process.env.PATH,
        NODE_OPTIONS: HIDE,
        WITHOUT_PACKAGES: '@nestjs/swagger,swagger-ui-dist',
        DATABASE_URL: `sqlite:${path.join(dir, 'no-swagger.db')}`,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    try {
      for (let i = 0; i < 300 && !output.includes('listening on') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
      expect(output).toContain(`listening on http://127.0.0.1:${port}`);
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const missing = 'the OpenAPI document (GET /openapi.json, GET /docs, trendhooks openapi) was asked for but the "@nestjs/swagger" package is not installed: npm install @nestjs/swagger';
      for (const route of ['/openapi.json', '/docs', '/docs/swagger-ui.css']) {
        const res = await fetch(base + route);
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect({ route, status: res.status, type: res.headers.get('content-type'), code: body.error.code, message: body.error.message }).toEqual({
          route,
          status: 404,
          type: 'application/json; charset=utf-8',
          code: 'NOT_FOUND',
          message: missing,
        });
      }
      const warnings = output.split('\n').filter((l) => l.includes('"level":"warn"'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0])).toMatchObject({ msg: missing });
    } finally {
      await stopProcess(child);
    }
  }, 60_000);
});
