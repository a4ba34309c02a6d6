import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { createApp } from '../app';
import { EVENT_KINDS, EventKind } from '../events/catalogue';
import type { DataSource } from 'typeorm';
import { ApiKeyService, IssuedKey } from '../auth/api-key.service';
import type { ApiKeyStore } from '../auth/api-key.store';
import { PostgresApiKeyStore } from '../auth/api-key.store.postgres';
import { SqliteApiKeyStore } from '../auth/api-key.store.sqlite';
import { PostgresWebhookStore } from '../webhooks/webhook.store.postgres';
import { SqliteWebhookStore } from '../webhooks/webhook.store.sqlite';
import type { WebhookStore } from '../webhooks/webhook.store';
import { EndpointStore } from '../delivery/endpoint.store';
import { dialectOf, type Dialect } from '../database/dialect';
import { AppConfig, describeDatabase, loadConfig } from '../config/config';
import { withDataSource } from '../cli/support';
import { plural } from '../common/plural';
import { toPostEntity } from '../posts/ingest.service';
import { PostStore } from '../posts/post.store';
import { TrendsPipeline } from '../trends/trends.pipeline';
import { generateDemoDataset } from './dataset';
import { deliveryLine, describeFigures, eventTime } from './format';
import { DemoReceiver, makeSelfSignedCert, ReceivedRequest } from './receiver';
import { verifyWebhookSignature } from './verify';

export const DEFAULT_DEMO_TIMEOUT_MS = 60_000;
/** Retries within the run instead of the production minutes and hours. */
const DEMO_RETRY_SCHEDULE = [0.5, 1, 2, 4];

export interface DemoOptions {
  /** One JSON object per delivery on stdout, nothing else there. */
  json?: boolean;
  /** Instead of a temporary SQLite file; one holding other customers is refused (DATABASE_URL in `env` is not used). */
  databaseUrl?: string;
  timeoutMs?: number;
  /** Where stdout lines go (tests capture them). */
  print?: (line: string) => void;
}

/** The demo ran but did not see every event kind delivered and verified. */
export class DemoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DemoError';
  }
}

interface DemoHook {
  kind: EventKind;
  path: string;
  id: string;
  secret: string;
}

/**
 * Nest's messages would mix into stdout (and break --json), and the warnings are about settings the
 * demo chose itself (e.g. the loopback SSRF allowance): only errors are shown, on stderr.
 */
class StderrLogger implements LoggerService {
  log(): void {}
  debug(): void {}
  verbose(): void {}
  warn(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    process.stderr.write(`[trendhooks] error: ${String(message)}${context(rest)}\n`);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.error(message, ...rest);
  }
}

function context(rest: unknown[]): string {
  const last = rest[rest.length - 1];
  return typeof last === 'string' && !last.includes('\n') ? ` (${last})` : '';
}


function headerOf(req: ReceivedRequest, name: string): string {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/**
 * `trendhooks demo`: the whole flow in one process — a local HTTPS receiver, a customer, three
 * webhooks created through the real API, a generated dataset replayed through the real trend
 * pipeline, and each delivery verified as a receiver would. Resolves when all three kinds have
 * been delivered and verified; throws DemoError (after cleaning up) when they have not.
 */
export async function runDemo(env: Record<string, string | undefined>, opts: DemoOptions = {}): Promise<void> {
  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? DEFAULT_DEMO_TIMEOUT_MS);
  const print = opts.print ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const say = (line: string) => {
    if (!opts.json) print(line);
  };

  // Only a database named on the command line: an exported DATABASE_URL (the operator's real
  // one, most likely) is never picked up silently.
  const userDb = opts.databaseUrl?.trim() || undefined;
  // The user's settings are validated as for any command; the demo then overrides what it needs
  // in its own config object, never in the environment.
  const config = loadConfig({ ...env, DATABASE_URL: userDb });
  if (userDb) {
    await refuseOtherCustomers(config);
    process.stderr.write(
      `note: the demo uses ${describeDatabase(config)} (--database-url), which holds no other customer; its webhooks and key are deleted and revoked at the end\n`,
    );
  } else if (env.DATABASE_URL?.trim()) {
    process.stderr.write('note: the demo runs on a temporary SQLite file, not on DATABASE_URL (name a database with --database-url to use one)\n');
  }
  // With a database of the user's, a unique subreddit and id prefix keep reruns meaningful (post ids
  // and event ids are deterministic, so the same ones again would be "already seen").
  const suffix = userDb ? randomBytes(3).toString('hex') : '';
  const subreddit = userDb ? `demo_${suffix}` : 'demo';
  const dataset = generateDemoDataset({ subreddit, idPrefix: userDb ? `d${suffix}` : 'dm' });

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'trendhooks-demo-'));
  const removeTmp = () => fs.rmSync(tmp, { recursive: true, force: true });

  let app: INestApplication | undefined;
  let rx: DemoReceiver | undefined;
  // Nest's shutdown hooks close the app and re-raise the signal; temp files must go first.
  const onSignal = (signal: NodeJS.Signals) => {
    removeTmp();
    if (!app) process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A crash (e.g. EPIPE when stdout is piped into `head`) skips the finally below; this does not.
  process.once('exit', removeTmp);

  const hooks = new Map<string, DemoHook>();
  const shown = new Set<string>();
  const verified = new Set<EventKind>();
  let allVerified: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allVerified = resolve));
  let issued: IssuedKey | undefined;
  let api = '';
  const call = async (method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(api + route, {
      method,
      headers: { authorization: `Bearer ${issued?.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  };

  // Cleared at the deadline: what arrives later is not reported as in time.
  let accepting = true;
  const onDelivery = (req: ReceivedRequest): number => {
    if (!accepting) return 503;
    const hook = hooks.get(req.path);
    if (!hook) return 404;
    const check = verifyWebhookSignature(hook.secret, req.headers, req.body);
    const msgId = headerOf(req, 'webhook-id');
    // A retry of a delivery already shown (same webhook-id): acknowledge, do not print it twice.
    if (check.ok && shown.has(msgId)) return 204;
    let payload: { type?: string; timestamp?: string; data?: Record<string, unknown> } = {};
    try {
      payload = JSON.parse(req.body);
    } catch {
      // Not JSON: shown with no figures; whether it is trusted is still the signature's call.
    }
    const data = payload.data ?? {};
    const type = payload.type ?? hook.kind;
    const line = { type, subreddit: String(data.subreddit ?? subreddit), data, msgId, verified: check.ok, reason: check.ok ? undefined : check.reason };
    if (opts.json) {
      print(
        JSON.stringify({
          type,
          subreddit: line.subreddit,
          verified: check.ok,
          ...(check.ok ? {} : { error: check.reason }),
          msg_id: msgId,
          webhook_id: hook.id,
          event_id: data.event_id,
          event_time: eventTime(type, data),
          received_at: new Date(req.receivedAt).toISOString(),
          summary: describeFigures(type, data),
          data,
          raw: {
            headers: { 'webhook-id': msgId, 'webhook-timestamp': headerOf(req, 'webhook-timestamp'), 'webhook-signature': headerOf(req, 'webhook-signature') },
            body: req.body,
          },
          // Throwaway: the demo's webhooks die with its temp database (or are deleted at the end);
          // printed so anyone can re-verify the raw delivery with another library.
          webhook_secret: hook.secret,
        }),
      );
    } else {
      print(deliveryLine(line));
    }
    if (!check.ok) return 401;
    shown.add(msgId);
    if (type === hook.kind) verified.add(hook.kind);
    if (verified.size === EVENT_KINDS.length) allVerified();
    return 204;
  };

  let failure: Error | undefined;
  try {
    const cert = await makeSelfSignedCert(tmp);
    if (!userDb) config.database = { type: 'sqlite', path: path.join(tmp, 'demo.db') };
    config.http = { ...config.http, host: '127.0.0.1', port: 0 };
    // The receiver is on loopback, which the SSRF policy rightly blocks everywhere else.
    config.ssrf = { ...config.ssrf, allowCidrs: '127.0.0.1/32', denyCidrs: '' };
    config.delivery = {
      ...config.delivery,
      caFile: cert.caFile,
      caPem: cert.cert,
      pollIntervalMs: 100,
      // On a database of the user's, the demo's worker may also send that database's due
      // deliveries: they keep their configured schedule.
      retrySchedule: userDb ? config.delivery.retrySchedule : DEMO_RETRY_SCHEDULE,
    };
    config.redisUrl = null;
    config.trends = { ...config.trends, trackedSubreddits: [] };

    rx = await DemoReceiver.start(cert, onDelivery);
    // No Reddit poller: the dataset is the only source, so nothing leaves this machine.
    app = await createApp(config, { role: 'all', poller: false, logger: new StderrLogger() });
    await app.listen(0, '127.0.0.1');
    api = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;

    issued = await app.get(ApiKeyService).issue(userDb ? `trendhooks-demo-${suffix}` : 'trendhooks-demo', 'business');
    for (const kind of EVENT_KINDS) {
      const hookPath = `/hooks/${kind}`;
      const res = await call('POST', '/v1/webhooks', { url: rx.url(hookPath), event: kind, subreddit, allow_nonstandard_port: true });
      if (res.status !== 201) throw new DemoError(`creating the ${kind} webhook failed: HTTP ${res.status} ${JSON.stringify(res.json?.error ?? res.json)}`);
      hooks.set(hookPath, { kind, path: hookPath, id: res.json.data.id, secret: res.json.data.secret });
    }

    const where = `${describeDatabase(config)}${userDb ? '' : ' (temporary)'}`;
    say('trendhooks demo — the whole flow on this machine; nothing is sent anywhere else');
    say(`  database  ${where}`);
    say(`  API       ${api} (customer ${issued.customer}, plan business, key ${issued.prefix}…)`);
    say(`  receiver  ${rx.url('/hooks/…')} (self-signed certificate, trusted by the sender through DELIVERY_CA_FILE)`);
    say(`  webhooks  ${EVENT_KINDS.join(', ')} on r/${subreddit}, created with POST /v1/webhooks`);
    const hours = (dataset.endMs - dataset.startMs) / 3_600_000;
    say(
      `Replaying ${hours} h of r/${subreddit} from ${new Date(dataset.startMs).toISOString().slice(0, 16).replace('T', ' ')}Z: ` +
        `${dataset.postCount.toLocaleString('en-US')} posts, ${dataset.observationCount.toLocaleString('en-US')} observations in ${dataset.rounds.length} polls, through the trend pipeline…`,
    );

    // Replay in event-time order, as the poller would have stored it: each poll is one upsert and
    // one pipeline call, at its simulated time.
    const posts = app.get(PostStore);
    const pipeline = app.get(TrendsPipeline);
    // Builds the subreddit's detector state now, while it has no stored posts: created after the
    // first upsert, it would take those (past-dated) posts for history and count them twice.
    await pipeline.tick(subreddit, new Date(dataset.startMs));
    let replayed = 0;
    for (const round of dataset.rounds) {
      if (Date.now() > deadline) break;
      const entities = round.posts.map((p) => toPostEntity(p, new Date(round.atMs), new Date(p.firstSeenAtMs)));
      const { insertedIds } = await posts.upsertMany(entities);
      await pipeline.onPostsUpserted(entities, { insertedIds });
      replayed++;
    }

    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      done.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);

    if (timedOut) {
      accepting = false;
      const missing = EVENT_KINDS.filter((k) => !verified.has(k));
      const why: string[] = replayed < dataset.rounds.length ? [`only ${replayed} of ${dataset.rounds.length} polls replayed`] : [];
      for (const kind of missing) why.push(`${kind}: ${await diagnose([...hooks.values()].find((h) => h.kind === kind)!, call)}`);
      throw new DemoError(`no verified delivery of ${missing.join(', ')} within ${(deadline - started) / 1000} s (${why.join('; ')})`);
    }

    say(`All ${EVENT_KINDS.length} trend kinds delivered and verified in ${((Date.now() - started) / 1000).toFixed(1)} s. The API's record of them:`);
    if (!opts.json) {
      for (const hook of hooks.values()) {
        const list = await settledDeliveries(hook, call, deadline);
        say(`  GET /v1/webhooks/${hook.id}/deliveries → ${list.map((d) => `${d.id} ${d.state} after ${d.attempt_count} attempt${d.attempt_count === 1 ? '' : 's'}`).join(', ') || 'none'}`);
      }
    }
  } catch (err) {
    failure = err as Error;
  } finally {
    try {
      if (userDb && app) {
        // The temp database takes everything with it; the user's keeps nothing of the demo's access.
        for (const hook of hooks.values()) await call('DELETE', `/v1/webhooks/${hook.id}`).catch(() => undefined);
        if (issued) await app.get(ApiKeyService).revoke(issued.prefix).catch(() => undefined);
      }
      await app?.close();
      await rx?.close();
    } finally {
      removeTmp();
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('exit', removeTmp);
    }
  }
  if (failure) throw failure;
  say(`Stopped the app and the receiver${userDb ? ', deleted the demo webhooks, revoked the demo key' : ''} and removed the temporary files.`);
}

/**
 * The demo's worker runs with a policy no customer's delivery may get (loopback allowed, the
 * operator's deny list cleared, the demo's own CA trusted): on a database that holds other
 * customers it would send their due deliveries that way. A customer counts when it has a webhook
 * or a key still valid; the customers earlier demo runs left behind have neither. Checked once,
 * before the worker starts, by asking the stores that own those tables.
 */
async function refuseOtherCustomers(config: AppConfig): Promise<void> {
  const counts = await withDataSource(config, async (ds) => {
    const dialect = dialectOf(ds);
    const keys = new CUSTOMER_STORES[dialect].keys(ds);
    const webhooks = new CUSTOMER_STORES[dialect].webhooks(ds, new EndpointStore(ds));
    return { keyHolders: await keys.countCustomersWithActiveKeys(), webhooks: await webhooks.countAll() };
  });
  if (counts.keyHolders === 0 && counts.webhooks === 0) return;
  throw new DemoError(
    `refusing to run on ${describeDatabase(config)}: it holds ${plural(counts.keyHolders, 'customer')} with API keys and ${plural(counts.webhooks, 'webhook')}, and the demo's ` +
      "delivery worker (loopback allowed, deny list cleared, the demo's own CA trusted) would send their due deliveries; give --database-url an empty scratch database, or leave it out for a temporary SQLite file",
  );
}

/** The stores refuseOtherCustomers asks, per dialect (the demo counts before any module is built). */
const CUSTOMER_STORES: Record<Dialect, { keys: new (ds: DataSource) => ApiKeyStore; webhooks: new (ds: DataSource, endpoints: EndpointStore) => WebhookStore }> = {
  sqlite: { keys: SqliteApiKeyStore, webhooks: SqliteWebhookStore },
  postgres: { keys: PostgresApiKeyStore, webhooks: PostgresWebhookStore },
};

type Call = (method: string, route: string) => Promise<{ status: number; json: any }>;
interface DeliveryRow {
  id: string;
  state: string;
  attempt_count: number;
  last_error: string | null;
}

/**
 * The webhook's delivery log once no delivery is in flight: the receiver has answered before the
 * worker records the attempt, so the log lags the receiver by a few milliseconds.
 */
async function settledDeliveries(hook: DemoHook, call: Call, deadline: number): Promise<DeliveryRow[]> {
  for (;;) {
    const list = ((await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).json?.data ?? []) as DeliveryRow[];
    if (list.every((d) => d.state !== 'delivering') || Date.now() > deadline) return list;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Why a kind never arrived verified: no event at all, or a delivery stuck or failed (and how). */
async function diagnose(hook: DemoHook, call: Call): Promise<string> {
  try {
    const list = ((await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).json?.data ?? []) as DeliveryRow[];
    if (list.length === 0) return 'no event was detected, so nothing was queued';
    return list.map((d) => `delivery ${d.id} ${d.state} after ${d.attempt_count} attempts${d.last_error ? `, last error ${d.last_error}` : ''}`).join(', ');
  } catch (err) {
    return `delivery log unavailable (${(err as Error).message})`;
  }
}
