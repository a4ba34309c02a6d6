import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { PlanService } from '../auth/plan.service';
import { PrivateDestinationsService } from '../auth/private-destinations.service';
import { CLOCK, Clock } from '../common/clock';
import { SecretDecryptionError } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { Paged } from '../common/envelope';
import { DestinationCircuitStore } from '../delivery/circuit/destination-circuit.store';
import { destinationOf } from '../delivery/destination';
import { DeliveryQueue } from '../delivery/queue/delivery-queue';
import type { WebhookHealthCounts } from '../delivery/queue/types';
import { AppError } from '../common/errors';
import { newUlid } from '../common/ids';
import { parseWebhookId } from './webhook-id';
import { normaliseSubreddit } from '../common/reddit-names';
import { generateWebhookSecret } from '../delivery/secret';
import { ListQuery, PaginationService } from '../pagination/pagination.service';
import { SsrfPolicy } from '../ssrf/ssrf-policy';
import { CreateWebhookInput } from './dto/create-webhook.dto';
import { UPDATE_WEBHOOK_FIELDS, UpdateWebhookInput } from './dto/update-webhook.dto';
import type { CircuitRow } from '../delivery/circuit/circuit-policy';
import { toWebhookResource, WebhookResource } from './dto/webhook.resource';
import { newEndpointRow, WebhookSecretColumn, webhookSecretPlace } from '../delivery/endpoint.entity';
import { EndpointStore } from '../delivery/endpoint.store';
import { Webhook, WebhookStore } from './webhook.store';
import { SourceStatus, SourceStatusReader } from './source-status';
import { WebhookPause } from './webhook-pause';

export const WEBHOOKS_LIST_ROUTE = 'webhooks.list';
/** `last_error` of the deliveries still pending or held when their webhook was deleted. */
export const WEBHOOK_DELETED = 'webhook_deleted';
const SECRET_OVERLAP_MS = 24 * 3600 * 1000;
/** The window of success_rate_24h and consecutive_failures: deliveries created in the last 24 h. */
export const HEALTH_WINDOW_MS = 24 * 3600 * 1000;

@Injectable()
export class WebhooksService {
  private readonly logger = new Logger('WebhooksService');

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly endpoints: EndpointStore,
    private readonly plans: PlanService,
    private readonly ssrf: SsrfPolicy,
    private readonly pagination: PaginationService,
    private readonly secrets: SecretBox,
    private readonly privateDestinations: PrivateDestinationsService,
    private readonly circuits: DestinationCircuitStore,
    private readonly deliveries: DeliveryQueue,
    private readonly pause: WebhookPause,
    @Inject(CLOCK) private readonly clock: Clock,
    // From TrendsModule where it runs; absent (a host without the posts feature): source_status is null.
    @Optional() private readonly sources?: SourceStatusReader,
  ) {}

  private async sourceStatuses(subreddits: readonly string[]): Promise<Map<string, SourceStatus>> {
    return this.sources && subreddits.length > 0 ? this.sources.sourceStatuses(subreddits) : new Map();
  }

  private async sourceStatus(subreddit: string): Promise<SourceStatus | null> {
    return (await this.sourceStatuses([subreddit])).get(subreddit) ?? null;
  }

  /** The customer's circuit for each webhook's destination (one query; none: closed). */
  private async circuitsOf(customerId: string, urls: string[]): Promise<(url: string) => CircuitRow | null> {
    const byDestination = await this.circuits.forCustomer(customerId, urls.map(destinationOf));
    return (url) => byDestination.get(destinationOf(url)) ?? null;
  }

  /** success_rate_24h and consecutive_failures of each webhook, from the queue that owns the attempts (one query per page). */
  private async healthOf(ids: string[]): Promise<(id: string) => WebhookHealthCounts | null> {
    const counts = await this.deliveries.healthOf(ids, new Date(this.clock.now().getTime() - HEALTH_WINDOW_MS));
    return (id) => counts.get(id) ?? null;
  }

  async create(caller: TrendhooksPrincipal, dto: CreateWebhookInput): Promise<WebhookResource> {
    const max = this.plans.limits(caller.plan).maxWebhooks;
    // Cheap early answer before the DNS work; the insert re-checks atomically.
    if ((await this.webhooks.countForCustomer(caller.tenantId)) >= max) throw quotaExceeded(max);
    const allowNonstandardPort = dto.allow_nonstandard_port ?? false;
    const dest = await this.ssrf.checkUrl(dto.url, {
      allowNonstandardPort,
      customerId: caller.tenantId,
      privateGrants: () => this.privateDestinations.forCustomer(caller.tenantId),
    });
    const id = newUlid();
    const secret = generateWebhookSecret();
    const endpoint = newEndpointRow({
      id,
      customerId: caller.tenantId,
      url: dest.url.href,
      allowNonstandardPort,
      secret: this.secrets.encrypt(secret, webhookSecretPlace(id, 'secret')),
      createdAt: this.clock.now(),
    });
    const subscription = { event: dto.event, subreddit: normaliseSubreddit(dto.subreddit) };
    if (!(await this.webhooks.insertWithinQuota(endpoint, subscription, max))) throw quotaExceeded(max);
    const row: Webhook = { ...endpoint, ...subscription };
    // The customer's other webhooks at this host and port may have opened its circuit already.
    const circuit = await this.circuitsOf(caller.tenantId, [row.url]);
    return toWebhookResource(row, { secret, circuit: circuit(row.url), sourceStatus: await this.sourceStatus(row.subreddit) });
  }

  async list(caller: TrendhooksPrincipal, query: ListQuery): Promise<Paged<WebhookResource>> {
    const ctx = await this.pagination.begin(query, {
      route: WEBHOOKS_LIST_ROUTE,
      customerId: caller.tenantId,
      params: {},
      planMaxPageSize: this.plans.limits(caller.plan).maxPageSize,
    });
    const rows = await this.webhooks.page(caller.tenantId, ctx.request);
    const page = ctx.withPrev(rows, (w) => [w.id]);
    const statuses = await this.sourceStatuses(page.items.map((w) => w.subreddit));
    const circuit = await this.circuitsOf(caller.tenantId, page.items.map((w) => w.url));
    const health = await this.healthOf(page.items.map((w) => w.id));
    return new Paged(page.items.map((w) => toWebhookResource(w, { health: health(w.id), circuit: circuit(w.url), sourceStatus: statuses.get(w.subreddit) ?? null })), page.page);
  }

  async get(caller: TrendhooksPrincipal, rawId: string): Promise<WebhookResource> {
    const row = await this.webhooks.findForCustomer(caller.tenantId, parseWebhookId(rawId));
    if (!row) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    const circuit = await this.circuitsOf(caller.tenantId, [row.url]);
    const health = await this.healthOf([row.id]);
    return toWebhookResource(row, { health: health(row.id), circuit: circuit(row.url), sourceStatus: await this.sourceStatus(row.subreddit) });
  }

  /**
   * Changes the destination, the port flag, or pauses/resumes the webhook. A new URL (or a changed
   * port flag) passes the SSRF policy as at create. Pausing holds the pending deliveries (the
   * events stay recorded, for recovery); resuming releases them, clears the reason, restarts the
   * failure clock and offers a recover of what the webhook missed (WebhookPause).
   */
  async update(caller: TrendhooksPrincipal, rawId: string, dto: UpdateWebhookInput): Promise<WebhookResource> {
    const id = parseWebhookId(rawId);
    if (!UPDATE_WEBHOOK_FIELDS.some((f) => dto[f] !== undefined)) {
      throw new AppError('VALIDATION_ERROR', `the body must set at least one of ${UPDATE_WEBHOOK_FIELDS.join(', ')}`);
    }
    const row = await this.webhooks.findForCustomer(caller.tenantId, id);
    if (!row) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    let url: string | undefined;
    const allowNonstandardPort = dto.allow_nonstandard_port ?? row.allowNonstandardPort;
    if (dto.url !== undefined || allowNonstandardPort !== row.allowNonstandardPort) {
      const dest = await this.ssrf.checkUrl(dto.url ?? row.url, {
        allowNonstandardPort,
        customerId: caller.tenantId,
        privateGrants: () => this.privateDestinations.forCustomer(caller.tenantId),
      });
      url = dest.url.href;
    }
    const now = this.clock.now();
    const updated = await this.webhooks.updateForCustomer(caller.tenantId, id, {
      url,
      allowNonstandardPort: dto.allow_nonstandard_port,
      disabled: dto.disabled === undefined ? undefined : dto.disabled ? { at: now, reason: 'manual' } : null,
    });
    // Deleted meanwhile.
    if (!updated) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    if (dto.disabled === true) await this.pause.paused(updated);
    const resumed = dto.disabled === false && row.disabledAt ? await this.pause.resumed(caller, row) : undefined;
    const circuit = await this.circuitsOf(caller.tenantId, [updated.url]);
    const health = await this.healthOf([updated.id]);
    return toWebhookResource(updated, { health: health(updated.id), circuit: circuit(updated.url), sourceStatus: await this.sourceStatus(updated.subreddit), resumed });
  }

  /**
   * A new signing secret, shown once. The old one keeps signing beside it for 24 h, so receivers
   * can switch without dropping a delivery.
   */
  async rotateSecret(caller: TrendhooksPrincipal, rawId: string): Promise<WebhookResource> {
    const id = parseWebhookId(rawId);
    const row = await this.webhooks.findForCustomer(caller.tenantId, id);
    if (!row) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    const now = this.clock.now();
    const secret = generateWebhookSecret();
    // The old secret is encrypted again for its new column: each value is bound to its column.
    // One that no longer decrypts cannot sign anyway: it is dropped, and the rotation is how the
    // customer gets the webhook delivering again.
    let previous: string | null = null;
    try {
      previous = this.secrets.encrypt(this.secrets.decrypt(row.secret, webhookSecretPlace(id, 'secret')), webhookSecretPlace(id, 'previous_secret'));
    } catch (err) {
      if (!(err instanceof SecretDecryptionError)) throw err;
      this.logger.warn(`webhook ${id}: its stored secret did not decrypt; rotated without a previous secret`);
    }
    const rotated: Webhook = {
      ...row,
      secret: this.secrets.encrypt(secret, webhookSecretPlace(id, 'secret')),
      previousSecret: previous,
      previousSecretExpiresAt: previous === null ? null : new Date(now.getTime() + SECRET_OVERLAP_MS),
    };
    await this.endpoints.updateSecrets(caller.tenantId, rotated);
    const circuit = await this.circuitsOf(caller.tenantId, [rotated.url]);
    const health = await this.healthOf([rotated.id]);
    return toWebhookResource(rotated, { secret, health: health(rotated.id), circuit: circuit(rotated.url), sourceStatus: await this.sourceStatus(row.subreddit) });
  }

  /**
   * Re-encrypts every stored signing secret that is not under the newest key in the current
   * version (or still in clear), row by row with compare-and-set: safe while the service runs,
   * safe to interrupt and run again. A row with a value that does not decrypt is left as it is
   * and listed in `unreadable` (webhook id and column); the others are rewritten.
   */
  async reencryptSecrets(opts: { batchSize?: number } = {}): Promise<{ scanned: number; reencrypted: number; skipped: number; unreadable: UnreadableSecret[] }> {
    const total = { scanned: 0, reencrypted: 0, skipped: 0, unreadable: [] as UnreadableSecret[] };
    // A row rotated meanwhile keeps its old secret as previous_secret, perhaps under an old key: passes repeat until one loses no race.
    for (let pass = 0; pass < 5; pass++) {
      const r = await this.reencryptPass(opts.batchSize ?? 500);
      total.scanned += r.scanned;
      total.reencrypted += r.reencrypted;
      total.skipped = r.lost;
      // Each pass walks every row: the last one's list is the current one.
      total.unreadable = r.unreadable;
      if (r.lost === 0) break;
    }
    return total;
  }

  private async reencryptPass(batch: number): Promise<{ scanned: number; reencrypted: number; lost: number; unreadable: UnreadableSecret[] }> {
    const ring = this.secrets.ring;
    const out = { scanned: 0, reencrypted: 0, lost: 0, unreadable: [] as UnreadableSecret[] };
    for (let after = ''; ; ) {
      const rows = await this.endpoints.secretsPage(after, batch);
      for (const row of rows) {
        out.scanned++;
        // Every value is opened, current ones too: the command is how an operator finds every damaged row.
        let column: WebhookSecretColumn = 'secret';
        const recrypt = (v: string, col: WebhookSecretColumn) => {
          column = col;
          const place = webhookSecretPlace(row.id, col);
          const plain = ring.decrypt(v, place);
          return ring.isCurrent(v) ? v : ring.encrypt(plain, place);
        };
        let next: { secret: string; previousSecret: string | null };
        try {
          next = { secret: recrypt(row.secret, 'secret'), previousSecret: row.previousSecret === null ? null : recrypt(row.previousSecret, 'previous_secret') };
        } catch (err) {
          if (!(err instanceof SecretDecryptionError)) throw err;
          out.unreadable.push({ webhook_id: row.id, column });
          continue;
        }
        if (next.secret === row.secret && next.previousSecret === row.previousSecret) continue;
        if (await this.endpoints.replaceSecrets(row.id, row, next)) out.reencrypted++;
        else out.lost++; // rotated or deleted meanwhile: the next pass looks at it again
      }
      if (rows.length < batch) return out;
      after = rows[rows.length - 1].id;
    }
  }

  /** Idempotent: absent or another customer's webhook is a no-op (DECISIONS). */
  async remove(caller: TrendhooksPrincipal, rawId: string): Promise<void> {
    const id = parseWebhookId(rawId);
    // Its pending and held deliveries end now: a held one is never claimed, so no worker would see the webhook gone.
    if (await this.webhooks.deleteForCustomer(caller.tenantId, id)) await this.deliveries.cancelPendingForWebhook(id, this.clock.now(), WEBHOOK_DELETED);
  }
}

/** A stored secret the re-encrypt command could not open: left as it is, listed for the operator. */
export interface UnreadableSecret {
  webhook_id: string;
  column: WebhookSecretColumn;
}

function quotaExceeded(max: number): AppError {
  return new AppError('WEBHOOK_QUOTA_EXCEEDED', `webhook quota of ${max} per customer reached; delete one or upgrade the plan`);
}
