import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { EventsService } from '../../src/delivery/events.service';
import { generateEncryptionKey } from '../../src/crypto/key-ring';
import type { DatabaseConfig } from '../../src/database/dialect';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases, TestDatabase } from '../support/databases';
import { databaseUrl, pollUntil, runCli } from '../support/processes';
import { makeCert, Receiver, Received, TestCert } from '../support/receiver';

/**
 * Issue #12 items 5, 6 and 8 (part): signing secrets encrypted at rest under a key ring that can
 * be rotated while the service runs, 0600 files, private destinations per customer, and no secret
 * or key in any later response, log line, metrics scrape or error message.
 */

/** One database for several app starts (a restart with another key ring); dropped once at the end. */
function persistent(make: () => TestDatabase): TestDatabase & { config?: DatabaseConfig } {
  const inner = make();
  const db: TestDatabase & { config?: DatabaseConfig } = {
    name: inner.name,
    async create() {
      db.config ??= await inner.create();
      return db.config;
    },
    drop: async () => undefined,
  };
  return Object.assign(db, { dropForGood: () => inner.drop() });
}

const key = () => generateEncryptionKey();
const DELIVERY_ENV = (cert: TestCert) => ({
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.2,0.4,0.8',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_LEASE_MS: '7000',
});


function verify(secret: string, r: Received): unknown {
  return new StandardWebhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

/** Every way a value could show up: as it is, its base64 body, and a long slice of it. */
function needles(values: string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    out.add(v);
    const body = v.replace(/^(whsec_|th_live_)/, '').replace(/^k[0-9a-f]{8}:/, '');
    out.add(body);
    if (body.length >= 24) out.add(body.slice(4, 24));
  }
  return [...out];
}

describe.each(testDatabases())('secrets at rest and in transit on %s', (dbName, makeDb) => {
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    await rx.close();
  });

  it('stores no signing secret in clear, rotates the encryption key while serving, and deliveries verify before and after', async () => {
    const db = persistent(makeDb);
    const k1 = key();
    const k2 = key();
    let t: TestApp | undefined;
    try {
      t = await startTestApp(db, { env: { ENCRYPTION_KEYS: k1.entry, SSRF_ALLOW_CIDRS: '127.0.0.1/32', ...DELIVERY_ENV(cert) } });
      const c = await t.customer();
      const subreddit = `enc${Math.random().toString(36).slice(2, 10)}`;
      const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/enc'), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      expect(created.status).toBe(201);
      const w = created.body.data as { id: string; secret: string };
      const rotated = await t.http().post(`/v1/webhooks/${w.id}/rotate-secret`).set(c.auth);
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.data.secret as string;
      // A pre-encryption row (plaintext, as an old version wrote it) keeps working.
      const legacy = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/legacy'), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      const legacySecret = 'whsec_' + Buffer.alloc(32, 0x5a).toString('base64');
      await t.app.get(DataSource).query(dbName === 'postgres' ? 'UPDATE webhooks SET secret = $1 WHERE id = $2' : 'UPDATE webhooks SET secret = ? WHERE id = ?', [legacySecret, legacy.body.data.id]);

      const rows = await t.app.get(DataSource).query('SELECT id, secret, previous_secret FROM webhooks WHERE id = ' + (dbName === 'postgres' ? '$1' : '?'), [w.id]);
      expect(rows[0].secret).toMatch(new RegExp(`^enc:v2:${k1.id}:`));
      expect(rows[0].previous_secret).toMatch(new RegExp(`^enc:v2:${k1.id}:`));
      const dump = JSON.stringify(await t.app.get(DataSource).query('SELECT * FROM webhooks')) + JSON.stringify(await t.app.get(DataSource).query('SELECT * FROM settings'));
      for (const n of needles([w.secret, newSecret])) expect(dump).not.toContain(n);

      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 1 } });
      await rx.waitUntil((r) => r.some((x) => x.path === '/enc') && r.some((x) => x.path === '/legacy'));
      const first = rx.received.find((x) => x.path === '/enc')!;
      expect(verify(newSecret, first)).toBeTruthy();
      expect(verify(w.secret, first)).toBeTruthy(); // the 24 h overlap: the old secret signs too
      expect(verify(legacySecret, rx.received.find((x) => x.path === '/legacy')!)).toBeTruthy();
      await t.app.close();
      t = undefined;

      // Step 1 of a rotation: every process gets the ring k2,k1 (k2 encrypts, both decrypt).
      t = await startTestApp(db, { env: { ENCRYPTION_KEYS: `${k2.entry},${k1.entry}`, SSRF_ALLOW_CIDRS: '127.0.0.1/32', ...DELIVERY_ENV(cert) } });
      // Step 2, while it serves: re-encrypt everything under k2.
      const env = { DATABASE_URL: databaseUrl(db.config!), ENCRYPTION_KEYS: `${k2.entry},${k1.entry}` };
      const run = await runCli(['encryption', 'reencrypt', '--json'], env);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ key_id: k2.id, webhooks_reencrypted: 2, webhooks_changed_meanwhile: 0 });
      for (const n of needles([k1.entry, k2.entry])) expect(run.stdout + run.stderr).not.toContain(n);
      // Idempotent: a second run finds nothing to do.
      expect(JSON.parse((await runCli(['encryption', 'reencrypt', '--json'], env)).stdout)).toMatchObject({ webhooks_reencrypted: 0 });
      const after: { secret: string; previous_secret: string | null }[] = await t.app.get(DataSource).query('SELECT secret, previous_secret FROM webhooks');
      for (const r of after) {
        expect(r.secret).toMatch(new RegExp(`^enc:v2:${k2.id}:`));
        if (r.previous_secret !== null) expect(r.previous_secret).toMatch(new RegExp(`^enc:v2:${k2.id}:`));
      }
      const before = rx.received.length;
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 2 } });
      await rx.waitForCount(before + 2);
      const second = rx.received.slice(before);
      expect(verify(newSecret, second.find((x) => x.path === '/enc')!)).toBeTruthy();
      expect(verify(legacySecret, second.find((x) => x.path === '/legacy')!)).toBeTruthy();
      await t.app.close();
      t = undefined;

      // Step 3: k1 can go. A process with only the old key, or a wrong key under the new id, refuses to start.
      await expect(startTestApp(db, { env: { ENCRYPTION_KEYS: k1.entry } })).rejects.toThrow(new RegExp(`cannot start: .*key id "${k2.id}", which is not in the key ring`));
      const impostor = `${k2.id}:${Buffer.alloc(32, 1).toString('base64')}`;
      await expect(startTestApp(db, { env: { ENCRYPTION_KEYS: impostor } })).rejects.toThrow(new RegExp(`no stored secret under key id "${k2.id}" decrypts`));
      const refused = await runCli(['serve', '--role', 'worker'], { DATABASE_URL: databaseUrl(db.config!), ENCRYPTION_KEYS: k1.entry });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: cannot start: the database holds secrets this process cannot decrypt/)]);
    } finally {
      await t?.app.close();
      await (db as unknown as { dropForGood(): Promise<void> }).dropForGood();
    }
  });

  it('creates the database file and the generated key file 0600, the key file apart from the database', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-modes-'));
    const keyFile = path.join(dir, 'keys', 'trendhooks.key');
    const oldUmask = process.umask(0o022);
    let t: TestApp | undefined;
    try {
      // SQLite: the default key file sits beside the database; PostgreSQL: a configured file.
      t = await startTestApp(makeDb(), { env: dbName === 'postgres' ? { ENCRYPTION_KEY_FILE: keyFile } : {} });
      const file = dbName === 'postgres' ? keyFile : path.join(path.dirname((t.config.database as { path: string }).path), 'trendhooks.key');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file, 'utf8')).toMatch(/^# trendhooks encryption keys.*\nk[0-9a-f]{8}:[A-Za-z0-9+/]{43}=\n$/s);
      if (t.config.database.type === 'sqlite') {
        const dbFile = t.config.database.path;
        expect(path.dirname(file)).toBe(path.dirname(dbFile));
        expect(file).not.toBe(dbFile);
        for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`].filter((f) => fs.existsSync(f))) expect([f, fs.statSync(f).mode & 0o777]).toEqual([f, 0o600]);
      }
      // The key file's key encrypts what is stored.
      const c = await t.customer();
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: 'https://hooks.example.com/x', event: 'trends.surge', subreddit: 'node' });
      const stored = await t.app.get(DataSource).query('SELECT secret FROM webhooks');
      expect(stored[0].secret).toMatch(new RegExp(`^enc:v2:${fs.readFileSync(file, 'utf8').split('\n')[1].split(':')[0]}:`));
      expect(JSON.stringify(stored)).not.toContain(res.body.data.secret);
    } finally {
      process.umask(oldUmask);
      await t?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows a secret only in the create and rotate answers: never in later responses, errors, logs or metrics', async () => {
    const enc = key();
    const logLines: string[] = [];
    const t = await startTestApp(makeDb(), {
      // No CURSOR_SECRET: the generated one is stored, encrypted, in the settings table.
      env: { CURSOR_SECRET: '', ENCRYPTION_KEYS: enc.entry, SSRF_ALLOW_CIDRS: '127.0.0.1/32', LOG_LEVEL: 'trace', ...DELIVERY_ENV(cert) },
      jsonLogs: { write: (line: string) => void logLines.push(line) },
    });
    const seen: string[] = [];
    const record = (res: { status: number; headers: Record<string, unknown>; text: string }) => {
      seen.push(`${res.status} ${JSON.stringify(res.headers)} ${res.text}`);
      return res;
    };
    try {
      const c = await t.customer();
      const other = await t.customer();
      const subreddit = `leak${Math.random().toString(36).slice(2, 10)}`;
      const created = await t.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/leak'), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      const id = created.body.data.id as string;
      const rotated = await t.http().post(`/v1/webhooks/${id}/rotate-secret`).set(c.auth);
      const secrets = [created.body.data.secret as string, rotated.body.data.secret as string];
      expect(secrets.every((s) => /^whsec_/.test(s))).toBe(true);

      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 1 } });
      rx.behaviour = (r) => (r.path === '/leak-fail' ? { status: 500, body: 'nope' } : { status: 200 });
      await rx.waitUntil((r) => r.some((x) => x.path === '/leak'));
      await pollUntil(() => t.http().get(`/v1/webhooks/${id}/deliveries`).set(c.auth), (r) => r.body.data?.[0]?.state === 'delivered', 10_000);

      const h = () => t.http();
      const bad = 'Bearer th_live_' + 'x'.repeat(32);
      const calls = [
        h().get(`/v1/webhooks/${id}`).set(c.auth),
        h().get('/v1/webhooks?limit=1').set(c.auth),
        h().get(`/v1/webhooks/${id}/deliveries`).set(c.auth),
        h().get(`/v1/webhooks/${id}`).set(other.auth),
        h().post(`/v1/webhooks/${id}/rotate-secret`).set(other.auth),
        h().get('/v1/webhooks?cursor=tampered').set(c.auth),
        h().get(`/v1/webhooks/${id}`).set({ Authorization: bad }),
        h().post('/v1/webhooks').set(c.auth).set('content-type', 'application/json').send('{"url":'),
        h().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl('/x'), event: 'trends.surge', subreddit, secret: secrets[1] }),
        h().post('/v1/webhooks').set(c.auth).send({ url: 'https://10.0.0.5/', event: 'trends.surge', subreddit }),
        h().get('/v1/nope').set(c.auth),
        h().get('/metrics'),
        h().get('/healthz'),
        h().get('/readyz'),
      ];
      for (const call of calls) record(await call);
      // The list's next page, through its cursor.
      const listed = record(await h().get('/v1/webhooks?limit=1').set(c.auth));
      expect(JSON.parse(listed.text).data[0]).not.toHaveProperty('secret');

      const stored: { secret: string; previous_secret: string }[] = await t.app.get(DataSource).query('SELECT secret, previous_secret FROM webhooks');
      const cursorStored: { value: string }[] = await t.app.get(DataSource).query("SELECT value FROM settings WHERE key = 'cursor_secret'");
      expect(cursorStored[0].value).toMatch(new RegExp(`^enc:v2:${enc.id}:`));
      const secretNeedles = needles([...secrets, ...stored.flatMap((r) => [r.secret, r.previous_secret]), cursorStored[0]?.value ?? '', c.key, other.key, enc.entry].filter(Boolean));
      // The rejected body above echoes nothing of what it was sent either.
      const haystacks = { responses: seen.join('\n'), logs: logLines.join(''), nestLogs: t.logs.lines.join('\n') };
      expect(haystacks.logs.length).toBeGreaterThan(0);
      for (const [where, text] of Object.entries(haystacks)) {
        for (const n of secretNeedles) {
          if (text.includes(n)) throw new Error(`${where} contain a secret or key (${n.slice(0, 6)}…)`);
        }
      }
    } finally {
      await t.close();
    }
  });

  it('opens a private destination to the one customer the operator allow-listed, keeps no excerpt and hides how connections fail', async () => {
    const db = persistent(makeDb);
    let t: TestApp | undefined;
    const local = await Receiver.start(cert);
    try {
      // No global SSRF_ALLOW_CIDRS: 127.0.0.1 is private to everyone but the customer granted it.
      // The circuit breaker off: both hooks share one destination, whose 500 and refusals would open
      // it (depending on which attempt lands first) and hold the revoked attempt past the wait below.
      t = await startTestApp(db, { env: { ...DELIVERY_ENV(cert), DELIVERY_CIRCUIT_FAILURES: '0' } });
      const granted = await t.customer();
      const other = await t.customer();
      const names = await t.app.get(DataSource).query(`SELECT id, name FROM customers WHERE id IN (${dbName === 'postgres' ? '$1, $2' : '?, ?'})`, [granted.customerId, other.customerId]);
      const grantedName = names.find((r: { id: string }) => r.id === granted.customerId).name as string;
      const env = { DATABASE_URL: databaseUrl(db.config!) };
      const grant = await runCli(['customers', 'allow-private', grantedName, `127.0.0.1/32:${local.port}`, '--json'], env);
      expect(grant.code).toBe(0);
      expect(JSON.parse(grant.stdout)).toEqual({ customer: grantedName, customer_id: granted.customerId, grants: [`127.0.0.1/32:${local.port}`] });
      expect((await runCli(['customers', 'allow-private', grantedName, '127.0.0.1:80'], env)).code).toBe(2);

      const subreddit = `priv${Math.random().toString(36).slice(2, 10)}`;
      const body = (p: string) => ({ url: local.namedUrl(p), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      const denied = await t.http().post('/v1/webhooks').set(other.auth).send(body('/other'));
      expect(denied.status).toBe(422);
      expect(denied.body.error.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
      // Another port of the granted address is not granted (no scanning of the host's other services).
      const wrongPort = await t.http().post('/v1/webhooks').set(granted.auth).send({ ...body('/p'), url: `https://receiver.test:${local.port === 65535 ? 1 : local.port + 1}/p` });
      expect(wrongPort.status).toBe(422);
      const ok = await t.http().post('/v1/webhooks').set(granted.auth).send(body('/granted'));
      expect(ok.status).toBe(201);
      const failing = await t.http().post('/v1/webhooks').set(granted.auth).send(body('/granted-fail'));
      expect(failing.status).toBe(201);

      local.behaviour = (r) => (r.path === '/granted-fail' ? { status: 500, body: 'internal admin page: db password hunter2' } : { status: 200, body: 'intranet says hello' });
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 1 } });
      await local.waitUntil((r) => r.some((x) => x.path === '/granted') && r.some((x) => x.path === '/granted-fail'));
      expect(verify(ok.body.data.secret, local.received.find((x) => x.path === '/granted')!)).toBeTruthy();
      const attemptsOf = async (id: string) => (await t!.http().get(`/v1/webhooks/${id}/deliveries`).set(granted.auth)).body.data[0]?.attempts ?? [];
      const delivered = await pollUntil(() => attemptsOf(ok.body.data.id), (a) => a.length >= 1, 10_000);
      expect(delivered[0]).toMatchObject({ outcome: 'delivered', status_code: 200, response_excerpt: null });
      const failed = await pollUntil(() => attemptsOf(failing.body.data.id), (a) => a.length >= 1, 10_000);
      expect(failed[0]).toMatchObject({ status_code: 500, error_class: 'http_500', response_excerpt: null });

      // Nothing listening any more: the failure is one class, with no excerpt naming the refusal.
      const port = local.port;
      await local.close();
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 2 } });
      const refused = await pollUntil(() => attemptsOf(ok.body.data.id), (a) => a.length >= 2, 10_000);
      expect(refused.find((a: { status_code: number | null }) => a.status_code === null)).toMatchObject({ error_class: 'private_destination_error', response_excerpt: null });
      expect(JSON.stringify(refused)).not.toMatch(/ECONNREFUSED|hunter2|intranet/);

      // Revoked: the next attempt is blocked as for everyone else.
      const revoke = await runCli(['customers', 'revoke-private', grantedName, 'all'], env);
      expect(revoke.code).toBe(0);
      const third = await t.http().post('/v1/webhooks').set(granted.auth).send({ url: `https://receiver.test:${port}/again`, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      expect(third.status).toBe(422);
      // …and at delivery: the granted webhook's next attempt is refused before any connection.
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 3 } });
      const blocked = await pollUntil(
        async () => (await t!.http().get(`/v1/webhooks/${ok.body.data.id}/deliveries`).set(granted.auth)).body.data,
        // The list reads a delivery and its attempts in two statements, so an attempt can show before its final state.
        (ds: { state: string; attempts: { error_class: string | null }[] }[]) => ds.some((d) => d.state === 'failed' && d.attempts.some((a) => a.error_class === 'destination_blocked')),
        10_000,
      );
      expect(blocked.some((d: { state: string; attempts: { error_class: string | null }[] }) => d.state === 'failed' && d.attempts.some((a) => a.error_class === 'destination_blocked'))).toBe(true);
    } finally {
      await local.close().catch(() => undefined);
      await t?.app.close();
      await (db as unknown as { dropForGood(): Promise<void> }).dropForGood();
    }
  });
});

// A file mode exists only for SQLite.
describe('the SQLite file', () => {
  it('tightens an existing world-readable SQLite file to 0600', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-modes-'));
    try {
      const file = path.join(dir, 'old.db');
      fs.writeFileSync(file, '');
      fs.chmodSync(file, 0o644);
      const r = await runCli(['migrate'], { DATABASE_URL: `sqlite:${file}` });
      expect(r.code).toBe(0);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
