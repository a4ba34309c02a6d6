import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { ApiKeyService } from '../src/index';
import { testDatabases, TestDatabase } from './support/databases';
import { TEST_DNS } from './support/app';
import { CLI, stopProcess } from './support/processes';
import { HostAppModule, HostClock } from './host-app/host.module';
import { freePort } from './support/ports';

/**
 * A host app delivering to `trendhooks listen` (a self-signed certificate) with nothing but the
 * environment `trendhooks listen --print-env` prints: SSRF_ALLOW_DESTINATIONS, which the host hands
 * to SsrfModule as the README's host does, and DELIVERY_CA_FILE, which DeliveryModule reads itself
 * when the host gives it no `ca`, as the standalone service does.
 */
/** `export NAME=value` lines (a value quoted '…' when it needs it) as an object. */
function parseExports(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n').filter(Boolean)) {
    const m = /^export (\w+)=(.*)$/.exec(line);
    if (!m) throw new Error(`not an export line: ${line}`);
    out[m[1]] = m[2].startsWith("'") ? m[2].slice(1, -1).replace(/'\\''/g, "'") : m[2];
  }
  return out;
}

describe.each(testDatabases())('a host app delivering to trendhooks listen on %s', (_name, makeDb) => {
  let db: TestDatabase;
  let dir: string;
  let app: INestApplication;
  let listen: ChildProcess | undefined;
  let port: number;
  let printed: Record<string, string>;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-host-listen-'));
    port = await freePort();
    printed = parseExports(execFileSync(process.execPath, [CLI, 'listen', '--port', String(port), '--dir', dir, '--print-env'], { encoding: 'utf8', env: { PATH: process.env.PATH } }));
    expect(Object.keys(printed).sort()).toEqual(['DELIVERY_CA_FILE', 'SSRF_ALLOW_DESTINATIONS']);
    // The host's process environment: what --print-env printed, nothing else of trendhooks'.
    for (const [name, value] of Object.entries(printed)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    db = makeDb();
    const database = await db.create();
    const settings = {
      cursorSecret: 'host-listen-cursor-secret-0123456789abcdefghij',
      businessRequestsPerMinute: 1000,
      dns: TEST_DNS,
      denyCidrs: '',
      clock: new HostClock(),
      allowDestinations: process.env.SSRF_ALLOW_DESTINATIONS,
      deliveryWorker: true,
    };
    app = await NestFactory.create(HostAppModule.forRoot(database, settings), { bodyParser: false, logger: false, abortOnError: false });
    await app.init();
  });
  afterAll(async () => {
    if (listen) await stopProcess(listen);
    await app?.close();
    await db?.drop();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('delivers a test event that listen verifies, trusting the receiver through DELIVERY_CA_FILE', async () => {
    const auth = { Authorization: `Bearer ${(await app.get(ApiKeyService).issue(`host-listen-${process.pid}`, 'business')).key}` };
    const http = () => request(app.getHttpServer());
    const created = await http()
      .post('/v1/webhooks')
      .set(auth)
      .send({ url: `https://127.0.0.1:${port}/hooks`, event: 'trends.surge', subreddit: 'typescript', allow_nonstandard_port: true });
    expect(created.status).toBe(201);
    const { id, secret } = created.body.data as { id: string; secret: string };

    // The receiver, as a developer runs it: the webhook's secret in its environment, one delivery, then exit.
    const rx = spawn(process.execPath, [CLI, 'listen', '--port', String(port), '--dir', dir, '--count', '1', '--json'], {
      env: { PATH: process.env.PATH, TRENDHOOKS_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    listen = rx;
    let out = '';
    let err = '';
    rx.stdout!.on('data', (d) => (out += String(d)));
    rx.stderr!.on('data', (d) => (err += String(d)));
    const exited = new Promise<number | null>((resolve) => rx.once('exit', (code) => resolve(code)));
    for (let i = 0; i < 200 && !err.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(err).toContain(`listening on https://127.0.0.1:${port}/`);

    const sent = await http().post(`/v1/webhooks/${id}/test`).set(auth);
    expect(sent.status).toBe(202);
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running after 15 s'), 15_000))]);

    // What the host's delivery log says (on failure: tls_failure, DEPTH_ZERO_SELF_SIGNED_CERT).
    const deliveries = (await http().get(`/v1/webhooks/${id}/deliveries`).set(auth)).body.data as { state: string; last_error: string | null; attempts: { outcome: string; error_class: string | null }[] }[];
    expect(deliveries.map((d) => ({ state: d.state, last_error: d.last_error, attempts: d.attempts.map((a) => [a.outcome, a.error_class]) }))).toEqual([
      { state: 'delivered', last_error: null, attempts: [['delivered', null]] },
    ]);
    expect(code).toBe(0);
    const line = JSON.parse(out.trim().split('\n')[0]) as { verified: boolean; body: { type: string } };
    expect(line).toMatchObject({ verified: true, body: { type: 'trends.surge', data: { webhook_id: id, test: true } } });
  }, 40_000);
});
