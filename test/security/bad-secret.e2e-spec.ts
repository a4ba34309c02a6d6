import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { EventsService } from '../../src/delivery/events.service';
import { generateEncryptionKey } from '../../src/crypto/key-ring';
import type { DatabaseConfig } from '../../src/database/dialect';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases, TestDatabase } from '../support/databases';
import { CLI, databaseUrl, pollUntil } from '../support/processes';
import { makeCert, Receiver, Received, TestCert } from '../support/receiver';

/**
 * Issue #25 item 4 and its LOWs: one stored secret that does not decrypt is one bad webhook, not a
 * process (or a CLI) that cannot start. Its deliveries fail as `secret_unreadable` with nothing
 * internal shown to the customer, `encryption reencrypt` skips and lists it, and each value is
 * bound to its column as well as its row.
 */

/** One database for several app starts; dropped once at the end. */
function persistent(make: () => TestDatabase): TestDatabase & { config?: DatabaseConfig; dropForGood(): Promise<void> } {
  const inner = make();
  const db = {
    name: inner.name,
    config: undefined as DatabaseConfig | undefined,
    async create() {
      db.config ??= await inner.create();
      return db.config;
    },
    drop: async () => undefined,
    dropForGood: () => inner.drop(),
  };
  return db;
}

const DELIVERY_ENV = (cert: TestCert) => ({
  DELIVERY_CA_FILE: cert.caFile,
  DELIVERY_RETRY_SCHEDULE: '0.2,0.4,0.8',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_LEASE_MS: '7000',
});

/** Runs dist/cli.js; resolves with the exit code and output (killed after 30 s: a process that should have refused to start). */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function verify(secret: string, r: Received): unknown {
  return new StandardWebhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}

/** One character of the ciphertext changed (the GCM tag no longer matches); the prefix and key id kept. */
function tamper(stored: string): string {
  const i = stored.length - 10;
  return stored.slice(0, i) + (stored[i] === 'A' ? 'B' : 'A') + stored.slice(i + 1);
}

/** A value as the first envelope version wrote it: bound to its row alone. */
function v1(k: { id: string; key: Buffer }, plain: string, row: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k.key, iv);
  cipher.setAAD(Buffer.from(`trendhooks:v1:${k.id}:${row}`));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `enc:v1:${k.id}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
}

interface Attempt {
  outcome: string;
  error_class: string | null;
  status_code: number | null;
  response_excerpt: string | null;
}

describe.each(testDatabases())('one bad secret is one bad webhook on %s', (dbName, makeDb) => {
  let cert: TestCert;
  let rx: Receiver;

  beforeAll(async () => {
    cert = makeCert();
    rx = await Receiver.start(cert);
  });
  afterAll(async () => {
    await rx.close();
  });

  it('starts beside damaged rows, fails only their webhooks as secret_unreadable, and reencrypt skips and lists them', async () => {
    const db = persistent(makeDb);
    const k1 = generateEncryptionKey();
    const env = { ENCRYPTION_KEYS: k1.entry, SSRF_ALLOW_CIDRS: '127.0.0.1/32', ...DELIVERY_ENV(cert) };
    let t: TestApp | undefined;
    try {
      t = await startTestApp(db, { env });
      const c = await t.customer();
      const subreddit = `bad${Math.random().toString(36).slice(2, 10)}`;
      const create = async (p: string) => {
        const res = await t!.http().post('/v1/webhooks').set(c.auth).send({ url: rx.namedUrl(p), event: 'trends.surge', subreddit, allow_nonstandard_port: true });
        expect(res.status).toBe(201);
        return res.body.data as { id: string; secret: string };
      };
      const good = await create('/good');
      const bad = await create('/bad');
      const listed = await create('/listed');
      const swapped = await create('/swapped');
      const legacy = await create('/legacy');
      expect((await t.http().post(`/v1/webhooks/${swapped.id}/rotate-secret`).set(c.auth)).status).toBe(200);
      const p = (i: number) => (dbName === 'postgres' ? `$${i}` : '?');
      const ds = t.app.get(DataSource);
      const row = async (id: string) => (await ds.query(`SELECT secret, previous_secret FROM webhooks WHERE id = ${p(1)}`, [id]))[0] as { secret: string; previous_secret: string | null };
      const setSecrets = (id: string, secret: string, previous: string | null) => ds.query(`UPDATE webhooks SET secret = ${p(1)}, previous_secret = ${p(2)} WHERE id = ${p(3)}`, [secret, previous, id]);
      // Altered rows: two ciphertexts changed, and one row's current and previous secrets swapped.
      await setSecrets(bad.id, tamper((await row(bad.id)).secret), null);
      await setSecrets(listed.id, tamper((await row(listed.id)).secret), null);
      const s = await row(swapped.id);
      await setSecrets(swapped.id, s.previous_secret!, s.secret);
      // A row as the first envelope version wrote it (bound to its row only) keeps working.
      await setSecrets(legacy.id, v1(k1, legacy.secret, `webhook:${legacy.id}`), null);
      await t.app.close();
      t = undefined;

      // The ring fits the database (every other value decrypts): the process starts.
      t = await startTestApp(db, { env });
      await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 1 } });
      await rx.waitUntil((r) => r.some((x) => x.path === '/good') && r.some((x) => x.path === '/legacy'));
      expect(verify(good.secret, rx.received.find((x) => x.path === '/good')!)).toBeTruthy();
      expect(verify(legacy.secret, rx.received.find((x) => x.path === '/legacy')!)).toBeTruthy();
      const deliveriesOf = async (id: string) => (await t!.http().get(`/v1/webhooks/${id}/deliveries`).set(c.auth)).body.data as { id: string; state: string; attempts: Attempt[] }[];
      for (const w of [bad, listed, swapped]) {
        const [d] = await pollUntil(() => deliveriesOf(w.id), (ds) => ds[0]?.state === 'failed' && ds[0].attempts.length === 1, 10_000);
        // Permanent at once: one attempt, not a retried network_error.
        expect(d.attempts).toEqual([expect.objectContaining({ outcome: 'permanent', error_class: 'secret_unreadable', status_code: null })]);
        const excerpt = d.attempts[0].response_excerpt ?? '';
        expect(excerpt).toContain(`/v1/webhooks/${w.id}/rotate-secret`);
        expect(excerpt).not.toMatch(/key id|decrypt|altered|enc:|SecretDecryptionError|k[0-9a-f]{8}/);
        const hook = (await t.http().get(`/v1/webhooks/${w.id}`).set(c.auth)).body.data;
        expect(hook.last_status).toBe('failed');
      }
      expect(rx.received.filter((x) => ['/bad', '/listed', '/swapped'].includes(x.path))).toEqual([]);
      // The operator's log names the webhook and the reason.
      const logged = t.logs.lines.filter((l) => l.includes('stored signing secret does not decrypt'));
      for (const w of [bad, listed, swapped]) expect(logged.some((l) => l.includes(w.id))).toBe(true);

      // The customer's way out: rotate, then retry the failed delivery.
      const rotated = await t.http().post(`/v1/webhooks/${bad.id}/rotate-secret`).set(c.auth);
      expect(rotated.status).toBe(200);
      const [failed] = await deliveriesOf(bad.id);
      expect((await t.http().post(`/v1/webhooks/${bad.id}/deliveries/${failed.id}/retry`).set(c.auth)).status).toBe(202);
      await rx.waitUntil((r) => r.some((x) => x.path === '/bad'));
      expect(verify(rotated.body.data.secret, rx.received.find((x) => x.path === '/bad')!)).toBeTruthy();
      await t.app.close();
      t = undefined;

      // reencrypt under a new key: rewrites every readable row (the v1 one included), leaves and lists the others, exits 1.
      const k2 = generateEncryptionKey();
      const cliEnv = { DATABASE_URL: databaseUrl(db.config!), ENCRYPTION_KEYS: `${k2.entry},${k1.entry}` };
      const run = await cli(['encryption', 'reencrypt', '--json'], cliEnv);
      expect(run.code).toBe(1);
      const out = JSON.parse(run.stdout);
      expect(out).toMatchObject({ key_id: k2.id, webhooks_scanned: 5, webhooks_reencrypted: 3, webhooks_changed_meanwhile: 0 });
      expect(out.unreadable).toEqual(expect.arrayContaining([{ webhook_id: listed.id, column: 'secret' }, { webhook_id: swapped.id, column: 'secret' }]));
      expect(out.unreadable).toHaveLength(2);
      expect(run.stderr).toContain(`webhook ${listed.id} secret`);
      expect(run.stderr).toContain(`webhook ${swapped.id} secret`);
      const check = await startTestApp(db, { env: { ...env, ENCRYPTION_KEYS: `${k2.entry},${k1.entry}` } });
      try {
        const after = await check.app.get(DataSource).query(`SELECT id, secret FROM webhooks WHERE id IN (${p(1)}, ${p(2)})`, [good.id, legacy.id]);
        for (const r of after) expect(r.secret).toMatch(new RegExp(`^enc:v2:${k2.id}:`));
      } finally {
        await check.app.close();
      }

      // A ring that is wrong (another key under the id in use) still refuses, naming the encryption problem, not HOST/PORT.
      const impostor = `${k2.id}:${Buffer.alloc(32, 1).toString('base64')}`;
      const refused = await cli(['serve'], { DATABASE_URL: databaseUrl(db.config!), ENCRYPTION_KEYS: `${impostor},${k1.entry}`, PORT: '0' });
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^error: cannot start: the database holds secrets this process cannot decrypt: no stored secret under key id "${k2.id}" decrypts`))]);
      expect(refused.stderr).not.toMatch(/HOST\/PORT|cannot listen/);
    } finally {
      await t?.app.close();
      await db.dropForGood();
    }
    // Three app starts and three CLI processes.
  }, 150_000);
});
