import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { DataSource, In } from 'typeorm';
import { CLOCK, Clock } from '../common/clock';
import { dialectOf } from '../database/data-source';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { AttemptOutcome, classifyError, classifyResponse, decideNext, retryAfterApplies } from './classify';
import { DeliveryRepository, ClaimedDelivery, DELIVERY_NOTIFY_CHANNEL, AttemptRecord } from './delivery.repository';
import { DeliverySender, truncateUtf8, RESPONSE_EXCERPT_BYTES } from './delivery.sender';
import { DELIVERY_OPTIONS, DeliveryModuleOptions, resolveDeliveryOptions, ResolvedDeliveryOptions } from './delivery.options';
import { EventEntity } from './event.entity';
import { buildDeliveryBody } from './payload';
import { DEFAULT_RETRY_SCHEDULE_S, parseRetryAfter, RetryPolicy } from './retry-policy';
import { buildDeliveryHeaders } from './signer';

const POLL_INTERVAL_NAME = 'trendhooks-delivery-poll';

/**
 * Sends due deliveries. Woken at once when an event is fanned out in this process (or, on
 * PostgreSQL, NOTIFY from any process), and by a @nestjs/schedule interval as the fallback that
 * also picks up retries coming due and leases of workers that died.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DeliveryWorker');
  /** Lease owner: unique per process start, so a restarted worker never mistakes old leases for its own. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly opts: ResolvedDeliveryOptions;
  private readonly policy: RetryPolicy;
  private readonly inflight = new Map<string, Promise<void>>();
  private running = false;
  private draining = false;
  private again = false;
  private listener?: PoolClient;

  constructor(
    private readonly repo: DeliveryRepository,
    private readonly sender: DeliverySender,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) options: DeliveryModuleOptions,
    @Optional() private readonly scheduler?: SchedulerRegistry,
  ) {
    this.opts = resolveDeliveryOptions(options);
    this.policy = new RetryPolicy({ scheduleSeconds: options.retryScheduleSeconds ?? DEFAULT_RETRY_SCHEDULE_S, random: options.random });
  }

  get enabled(): boolean {
    return this.opts.worker;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.opts.worker) return;
    this.running = true;
    // Not unref'd: in a worker-only process on SQLite this timer is what keeps the process alive.
    const timer = setInterval(() => this.wake(), this.opts.pollIntervalMs);
    if (this.scheduler) this.scheduler.addInterval(POLL_INTERVAL_NAME, timer);
    else this.pollTimer = timer;
    if (dialectOf(this.ds) === 'postgres') await this.listen();
    this.wake();
  }

  private pollTimer?: NodeJS.Timeout;

  /** LISTEN on a dedicated pooled connection; polling covers the gaps if it drops. */
  private async listen(): Promise<void> {
    try {
      const pool = (this.ds.driver as unknown as { master: { connect(): Promise<PoolClient> } }).master;
      const client = await pool.connect();
      client.on('notification', () => this.wake());
      client.on('error', (err) => {
        this.logger.warn(`LISTEN connection lost (${err.message}); polling until it is back`);
        this.listener = undefined;
        client.release(true);
        if (this.running) setTimeout(() => void this.listen(), this.opts.pollIntervalMs).unref();
      });
      await client.query(`LISTEN ${DELIVERY_NOTIFY_CHANNEL}`);
      this.listener = client;
    } catch (err) {
      this.logger.warn(`LISTEN failed (${(err as Error).message}); polling only`);
    }
  }

  /** Start claiming now (cheap when already running: the current drain loops once more). */
  wake(): void {
    if (!this.running) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      do {
        this.again = false;
        while (this.running && this.inflight.size < this.opts.concurrency) {
          const room = Math.min(this.opts.batchSize, this.opts.concurrency - this.inflight.size);
          const now = this.clock.now();
          const claimed = await this.repo.claimDue(this.owner, now, new Date(now.getTime() + this.opts.leaseMs), room);
          if (claimed.length === 0) break;
          await this.start(claimed);
          if (claimed.length < room) break;
        }
      } while (this.again && this.running);
    } catch (err) {
      // Database down or similar: the next wake-up or poll tries again.
      this.logger.error(`claiming deliveries failed: ${(err as Error).message}`);
    } finally {
      this.draining = false;
    }
  }

  private async start(claimed: ClaimedDelivery[]): Promise<void> {
    const [events, webhooks] = await Promise.all([
      this.repo.findEvents([...new Set(claimed.map((d) => d.eventId))]),
      this.ds.getRepository(WebhookEntity).findBy({ id: In([...new Set(claimed.map((d) => d.webhookId))]) }),
    ]);
    const eventById = new Map(events.map((e) => [e.id, e]));
    const webhookById = new Map(webhooks.map((w) => [w.id, w]));
    for (const d of claimed) {
      const p = this.attempt(d, eventById.get(d.eventId), webhookById.get(d.webhookId))
        .catch((err) => this.logger.error(`delivery ${d.id} attempt could not be recorded: ${(err as Error).message}`))
        .finally(() => {
          this.inflight.delete(d.id);
          this.wake();
        });
      this.inflight.set(d.id, p);
    }
  }

  /** One attempt of one delivery, start to recorded outcome. */
  private async attempt(d: ClaimedDelivery, event: EventEntity | undefined, webhook: WebhookEntity | undefined): Promise<void> {
    if (!webhook || !event) return this.repo.cancelClaimed(d, this.owner, this.clock.now());
    const startedAt = this.clock.now();
    const t0 = performance.now();
    let outcome: AttemptOutcome;
    let statusCode: number | null = null;
    let excerpt: string | null = null;
    let retryAfterMs: number | null = null;
    try {
      const dest = await this.sender.check(webhook.url, webhook.allowNonstandardPort);
      // The webhook may have been deleted while DNS was resolving: no attempt starts after its 204.
      if (!(await this.repo.webhookExists(webhook.id))) return this.repo.cancelClaimed(d, this.owner, this.clock.now());
      const body = buildDeliveryBody(
        { id: event.id, type: event.type, subreddit: event.subreddit, createdAt: event.createdAt, data: JSON.parse(event.payload) },
        webhook.id,
      );
      const now = this.clock.now();
      const headers = buildDeliveryHeaders(d.id, Math.floor(now.getTime() / 1000), body, signingSecrets(webhook, now));
      const res = await this.sender.post(dest, headers, body);
      statusCode = res.statusCode;
      excerpt = res.excerpt;
      outcome = classifyResponse(res.statusCode);
      if (retryAfterApplies(outcome)) retryAfterMs = parseRetryAfter(res.retryAfter, this.clock.now());
    } catch (err) {
      outcome = classifyError(err);
      excerpt = truncateUtf8(Buffer.from(describeError(err)), RESPONSE_EXCERPT_BYTES);
    }
    const durationMs = Math.round(performance.now() - t0);
    const attemptNo = d.attempts + 1;
    const next = decideNext(outcome, attemptNo, this.policy, retryAfterMs);
    const now = this.clock.now();
    const rec: AttemptRecord = {
      attempt: {
        attemptNo,
        startedAt,
        durationMs,
        statusCode,
        outcome: outcome.kind,
        errorClass: outcome.kind === 'delivered' ? null : outcome.errorClass,
        responseExcerpt: excerpt,
      },
      state: next.state === 'retrying' ? 'pending' : next.state,
      nextAttemptAt: next.state === 'retrying' ? new Date(now.getTime() + next.delayMs) : null,
      lastError: outcome.kind === 'delivered' ? null : outcome.errorClass,
      webhookStatus: next.state,
    };
    const held = await this.repo.recordAttempt(d, this.owner, rec, now);
    if (!held) this.logger.warn(`delivery ${d.id}: lease lost during the attempt; the new owner decides its state`);
  }

  /** Stops claiming, lets attempts in flight finish within the attempt timeout, then gives back what is left. */
  async onApplicationShutdown(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.scheduler?.doesExist('interval', POLL_INTERVAL_NAME)) this.scheduler.deleteInterval(POLL_INTERVAL_NAME);
    if (this.pollTimer) clearInterval(this.pollTimer);
    const pending = [...this.inflight.values()];
    const bound = new Promise((r) => setTimeout(r, this.opts.timeoutMs + 1000).unref());
    await Promise.race([Promise.allSettled(pending), bound]);
    const left = [...this.inflight.keys()];
    if (left.length > 0) await this.repo.releaseLeases(this.owner, left, this.clock.now()).catch(() => undefined);
    if (this.listener) {
      this.listener.removeAllListeners('notification');
      await this.listener.query(`UNLISTEN ${DELIVERY_NOTIFY_CHANNEL}`).catch(() => undefined);
      this.listener.release();
      this.listener = undefined;
    }
  }

  /** Attempts currently in flight (for graceful-shutdown tests and metrics). */
  get inFlight(): number {
    return this.inflight.size;
  }
}

/** During a rotation both secrets sign, so receivers can switch at their own pace (24 h). */
export function signingSecrets(w: Pick<WebhookEntity, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, now: Date): string[] {
  return w.previousSecret && w.previousSecretExpiresAt && w.previousSecretExpiresAt > now ? [w.secret, w.previousSecret] : [w.secret];
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code ?? (err.cause as { code?: unknown } | undefined)?.code;
    return `${err.name}${code ? ` ${String(code)}` : ''}: ${err.message}`;
  }
  return String(err);
}
