import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
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
import request from 'supertest';
import { ApiKeyService } from 'trendhooks';
import { DataSource } from 'typeorm';
import { HostModule } from '../src/host.module';

/**
 * The packed tarball inside a host app (scripts/packed-host-test.sh installs it): webhook CRUD with
 * pagination, a signed delivery to a real HTTPS receiver on 127.0.0.1, bad input in trendhooks'
 * error envelope, the host's migrations table. SQLite always; PostgreSQL when PACKED_HOST_PG_URL
 * names a scratch database.
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
function assertError(res: request.Response, status: number, code: string) {
  assert.deepEqual({ status: res.status, code: res.body?.error?.code }, { status, code }, res.text);
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.error.request_id, res.headers['x-request-id']);
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
    let auth: { Authorization: string };
    const http = () => request(app.getHttpServer());
    const hook = (over: Record<string, unknown> = {}) => ({
      url: `https://127.0.0.1:${receiver.port}/hook`, allow_nonstandard_port: true, event: 'trends.surge', subreddit: 'typescript', ...over,
    });

    before(async () => {
      receiver = await startReceiver(dir);
      app = await NestFactory.create(
        HostModule.forRoot({
          database,
          encryptionKeys: `k1:${randomBytes(32).toString('base64')}`,
          cursorSecret: randomBytes(24).toString('base64'),
          allowDestinations: `127.0.0.1:${receiver.port}`,
          receiverCa: receiver.ca,
        }),
        { bodyParser: false, logger: false },
      );
      await app.init();
      // Today's API keys; the host's own principal replaces them once trendhooks takes one.
      const issued = await app.get(ApiKeyService).issue(`packed-host-${name}`, 'business');
      auth = { Authorization: `Bearer ${issued.key}` };
    });
    after(async () => {
      await app?.close();
      receiver?.server.close();
    });

    it("ran trendhooks' migrations and the host's in the host's migrations table", async () => {
      const ds = app.get(DataSource);
      const ran: { name: string }[] = await ds.query('SELECT name FROM host_migrations ORDER BY id');
      assert.ok(ran.length >= 2, JSON.stringify(ran));
      assert.ok(ran.some((m) => m.name === 'CreateHostNote1700000000000'));
      assert.ok(ran.some((m) => /^Initial\d+$/.test(m.name)), JSON.stringify(ran));
      assert.deepEqual(await ds.query('SELECT count(*) AS n FROM host_note'), [{ n: ds.options.type === 'postgres' ? '0' : 0 }]);
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
        const page: request.Response = await http().get('/v1/webhooks').query(cursor ? { limit: 2, cursor } : { limit: 2 }).set(auth);
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

    it("answers bad input in trendhooks' error envelope, never a 500", async () => {
      assertError(await http().post('/v1/webhooks').set(auth).set('Content-Type', 'application/json').send('{"url":'), 400, 'INVALID_JSON');
      assertError(await http().post('/v1/webhooks').set(auth).send(hook({ extra: 1 })), 400, 'VALIDATION_ERROR');
      assertError(await http().post('/v1/webhooks').set(auth).send(hook({ url: 'https://10.0.0.1/' })), 422, 'WEBHOOK_DESTINATION_BLOCKED');
      assertError(await http().get('/v1/webhooks?limit=0').set(auth), 400, 'BAD_REQUEST');
      assertError(await http().get('/v1/webhooks'), 401, 'UNAUTHORIZED');
    });
  });
}
