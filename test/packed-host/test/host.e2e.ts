import 'reflect-metadata';
import { execFile, execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as assert from 'node:assert/strict';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { getDataSourceToken } from '@nestjs/typeorm';
import { agent } from 'supertest';
import { DataSource } from 'typeorm';
import { HOST_CONNECTION, HostModule, HostSettings } from '../src/host.module.js';
import { PortalHostModule } from '../src/portal-host.module.js';

// supertest is CommonJS: without esModuleInterop its default export is not one import in both the
// CommonJS and the ES module build, its named `agent` is. A fresh agent per call, as `request(server)`.
const request = (server: Parameters<typeof agent>[0]) => agent(server);
type Response = Awaited<ReturnType<ReturnType<typeof agent>['get']>>;

/**
 * The packed tarball inside a host app (scripts/packed-host-test.sh installs it), on the host's
 * named connection, its own users as the identity (no API keys) and Nest's body parser on: webhook
 * CRUD with pagination under the host's principal, tenant isolation, plan gating, a signed delivery
 * to a real HTTPS receiver on 127.0.0.1, bad input in trendhooks' error envelope, the migrations in
 * the host's table only, and the CLI on that database. SQLite always; PostgreSQL when
 * PACKED_HOST_PG_URL names a scratch database.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTPS receiver with a self-signed certificate for 127.0.0.1. */
async function startReceiver(dir: string) {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const received: Received[] = [];
  const server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, server, port: (server.address() as AddressInfo).port, ca: fs.readFileSync(certFile, 'utf8') };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** trendhooks' error envelope: `{ error: { code, message, request_id } }`, the id echoed in X-Request-Id. */
function assertError(res: Response, status: number, code: string) {
  assert.deepEqual({ status: res.status, code: res.body?.error?.code }, { status, code }, res.text);
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.error.request_id, res.headers['x-request-id']);
}

/** The installed `trendhooks` bin, as an operator runs it on the host's database. */
function cli(args: string[], databaseUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = path.resolve('node_modules/.bin/trendhooks');
  return new Promise((resolve) => {
    execFile(bin, args, { env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}` } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function tables(ds: DataSource): Promise<string[]> {
  const rows: { name: string }[] = ds.options.type === 'postgres'
    ? await ds.query("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")
    : await ds.query("SELECT name FROM sqlite_master WHERE type = 'table'");
  return rows.map((r) => r.name).sort();
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-packed-host-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const databases: [string, string][] = [['SQLite', path.join(dir, 'host.db')]];
if (process.env.PACKED_HOST_PG_URL) databases.push(['PostgreSQL', process.env.PACKED_HOST_PG_URL]);
else if (process.env.CI === 'true') throw new Error('CI=true: PACKED_HOST_PG_URL must name a scratch PostgreSQL database');

for (const [name, database] of databases) {
  describe(`trendhooks from the packed tarball in a host app, on ${name}`, () => {
    let app: INestApplication;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let settings: HostSettings;
    const auth = { Authorization: `Bearer alice-${name}` }; // business tenant acme
    const other = { Authorization: `Bearer bob-${name}` }; // business tenant globex
    const pro = { Authorization: `Bearer carol-${name}` }; // pro tenant initech
    const http = () => request(app.getHttpServer());
    const hook = (over: Record<string, unknown> = {}) => ({
      url: `https://127.0.0.1:${receiver.port}/hook`, allow_nonstandard_port: true, event: 'trends.surge', subreddit: 'typescript', ...over,
    });

    before(async () => {
      receiver = await startReceiver(dir);
      settings = {
        database,
        encryptionKeys: `k1:${randomBytes(32).toString('base64')}`,
        cursorSecret: randomBytes(24).toString('base64'),
        allowDestinations: `127.0.0.1:${receiver.port}`,
        receiverCa: receiver.ca,
      };
      app = await NestFactory.create(HostModule.forRoot(settings), { logger: false }); // Nest's body parser on, as by default
      await app.init();
      // Users sign up through the host's own route (a JSON body, parsed by Nest's body parser).
      for (const [token, tenantId, plan] of [[`alice-${name}`, 'acme', 'business'], [`bob-${name}`, 'globex', 'business'], [`carol-${name}`, 'initech', 'pro']]) {
        const res = await http().post('/host/signup').send({ token, tenantId, plan });
        assert.deepEqual({ status: res.status, body: res.body }, { status: 201, body: { token } });
      }
    });
    after(async () => {
      await app?.close();
      receiver?.server.close();
    });

    it("ran trendhooks' migrations (core only: no api-keys, settings or posts) and the host's in the host's table, and no other", async () => {
      const ds = app.get<DataSource>(getDataSourceToken(HOST_CONNECTION));
      const ran: { name: string }[] = await ds.query('SELECT name FROM host_migrations ORDER BY id');
      assert.equal(ran[0]?.name, 'CreateHostUsers1700000000000', JSON.stringify(ran));
      assert.ok(ran.length >= 2, JSON.stringify(ran));
      const all = await tables(ds);
      for (const t of ['host_migrations', 'host_user', 'host_tenant', 'webhooks', 'events', 'deliveries', 'delivery_attempts']) assert.ok(all.includes(t), `${t} in ${all}`);
      for (const t of ['trendhooks_migrations', 'migrations', 'customers', 'api_keys', 'settings', 'posts', 'trend_sources']) assert.ok(!all.includes(t), `${t} in ${all}`);
    });

    it("serves the customer portal (PortalHostModule): a link minted for the host's principal, its page and assets from the tarball", async () => {
      const portalApp = await NestFactory.create(PortalHostModule.forRoot(settings), { logger: false });
      await portalApp.init();
      try {
        const ph = () => request(portalApp.getHttpServer());
        const mine = await ph().post('/v1/webhooks').set(auth).send(hook({ subreddit: 'portal' }));
        assert.equal(mine.status, 201, mine.text);
        const link = await ph().post('/v1/portal/sessions').set(auth).send({});
        assert.equal(link.status, 201, link.text);
        const token = new URL(link.body.data.url).hash.replace(/^#token=/, '');
        const portal = { 'X-Trendhooks-Portal': '1' };
        const ex = await ph().post('/portal/session').set(portal).send({ token });
        assert.equal(ex.status, 200, ex.text);
        const session = { ...portal, Cookie: String(ex.headers['set-cookie']).split(';')[0] };
        const list = await ph().get('/v1/webhooks').query({ limit: 100 }).set(session);
        assert.equal(list.status, 200, list.text);
        assert.ok(list.body.data.some((w: { id: string }) => w.id === mine.body.data.id));
        assert.equal((await ph().get(`/v1/webhooks/${mine.body.data.id}`).set(session)).status, 200);
        assertError(await ph().post('/portal/session').set(portal).send({ token }), 401, 'UNAUTHORIZED');
        const page = await ph().get('/portal');
        assert.equal(page.status, 200);
        assert.match(String(page.headers['content-security-policy']), /^default-src 'none'; script-src 'self'/);
        for (const asset of ['portal.js', 'portal.css']) assert.equal((await ph().get(`/portal/assets/${asset}`)).status, 200, asset);
        await ph().delete(`/v1/webhooks/${mine.body.data.id}`).set(auth);
      } finally {
        await portalApp.close();
      }
    });

    it("keeps the host's routes on Nest's body parser and its own answers", async () => {
      const res = await http().post('/host/signup').set('Content-Type', 'application/json').send('{"token":');
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'Bad Request'); // Nest's own error format, not trendhooks' envelope
    });

    it('creates, pages through (limit + next_cursor), gets and deletes webhooks', async () => {
      const ids: string[] = [];
      for (const subreddit of ['typescript', 'node', 'rust']) {
        const created = await http().post('/v1/webhooks').set(auth).send(hook({ subreddit }));
        assert.equal(created.status, 201, created.text);
        assert.match(created.body.data.secret, /^whsec_/);
        assert.equal(created.body.meta.request_id, created.headers['x-request-id']);
        ids.push(created.body.data.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Response = await http().get('/v1/webhooks').query(cursor ? { limit: 2, cursor } : { limit: 2 }).set(auth);
        assert.equal(page.status, 200, page.text);
        assert.ok(page.body.data.length <= 2);
        assert.ok(!page.text.includes('whsec_'), 'a list never shows secrets');
        seen.push(...page.body.data.map((w: { id: string }) => w.id));
        cursor = page.body.meta.page.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      assert.equal(pages, 2);
      assert.deepEqual([...seen].sort(), [...ids].sort());

      const got = await http().get(`/v1/webhooks/${ids[1]}`).set(auth);
      assert.equal(got.status, 200);
      assert.equal(got.body.data.subreddit, 'node');
      assert.equal(got.body.data.secret, undefined);
      for (const id of ids) assert.equal((await http().delete(`/v1/webhooks/${id}`).set(auth)).status, 204);
      assertError(await http().get(`/v1/webhooks/${ids[0]}`).set(auth), 404, 'NOT_FOUND');
    });

    it('delivers a signed test event to the HTTPS receiver, and shows it delivered', async () => {
      const created = await http().post('/v1/webhooks').set(auth).send(hook());
      assert.equal(created.status, 201, created.text);
      const w = created.body.data;
      const sent = await http().post(`/v1/webhooks/${w.id}/test`).set(auth);
      assert.equal(sent.status, 202, sent.text);
      const got = await until('the delivery at the receiver', () => receiver.received.find((r) => r.body.includes(w.id)));
      // Standard Webhooks: v1,base64(HMAC-SHA256(secret, "id.timestamp.body")).
      const key = Buffer.from(String(w.secret).slice('whsec_'.length), 'base64');
      const signed = `${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`;
      const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
      assert.ok(String(got.headers['webhook-signature']).split(' ').includes(expected), String(got.headers['webhook-signature']));
      const delivered = await until('the delivery marked delivered', async () => {
        const list = await http().get(`/v1/webhooks/${w.id}/deliveries`).set(auth);
        const d = list.body.data?.find((x: { id: string }) => x.id === sent.body.data.delivery_id);
        return d?.state === 'delivered' ? d : undefined;
      });
      assert.equal(delivered.attempt_count, 1);
      // The worker's poll is in the host's SchedulerRegistry: one @nestjs/schedule, the host's (a peer dependency).
      assert.ok(app.get(SchedulerRegistry).getIntervals().includes('trendhooks-delivery-poll'));
    });

    it("keeps tenants apart and gates the webhook routes on the host tenant's plan", async () => {
      const created = await http().post('/v1/webhooks').set(auth).send(hook());
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id;
      assertError(await http().get(`/v1/webhooks/${id}`).set(other), 404, 'NOT_FOUND');
      // Delete is idempotent (204 when absent or another tenant's): it changes nothing here.
      assert.equal((await http().delete(`/v1/webhooks/${id}`).set(other)).status, 204);
      assert.equal((await http().get(`/v1/webhooks/${id}`).set(auth)).status, 200);
      const list = await http().get('/v1/webhooks').set(other);
      assert.equal(list.status, 200, list.text);
      assert.ok(!list.body.data.some((w: { id: string }) => w.id === id));
      assertError(await http().get('/v1/webhooks').set(pro), 403, 'PLAN_REQUIRED');
      assertError(await http().post('/v1/webhooks').set(pro).send(hook()), 403, 'PLAN_REQUIRED');
      assertError(await http().get('/v1/webhooks').set({ Authorization: 'Bearer nobody' }), 401, 'UNAUTHORIZED');
      assert.equal((await http().delete(`/v1/webhooks/${id}`).set(auth)).status, 204);
    });

    it("answers bad input in trendhooks' error envelope, never a 500", async () => {
      assertError(await http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send('{"url":'), 400, 'INVALID_JSON');
      assertError(await http().post('/v1/webhooks').set(auth).send(hook({ extra: 1 })), 400, 'VALIDATION_ERROR');
      assertError(await http().post('/v1/webhooks').set(auth).send(hook({ url: 'https://10.0.0.1/' })), 422, 'WEBHOOK_DESTINATION_BLOCKED');
      assertError(await http().get('/v1/webhooks?limit=0').set(auth), 400, 'BAD_REQUEST');
      assertError(await http().get('/v1/webhooks'), 401, 'UNAUTHORIZED');
    });

    it("lets the CLI work on the host's database with the host's table: nothing left to apply", async () => {
      const url = database.startsWith('postgres') ? database : `sqlite:${database}`;
      const run = await cli(['migrate', '--migrations-table', 'host_migrations', '--features', 'core'], url);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /database is up to date .*no migration applied/);
      const ds = app.get<DataSource>(getDataSourceToken(HOST_CONNECTION));
      assert.ok(!(await tables(ds)).includes('trendhooks_migrations'));
    });
  });
}
