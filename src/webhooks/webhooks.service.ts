import { Inject, Injectable } from '@nestjs/common';
import { Principal } from '../auth/api-key.service';
import { PlanService } from '../auth/plan.service';
import { CLOCK, Clock } from '../common/clock';
import { Paged } from '../common/envelope';
import { AppError } from '../common/errors';
import { newUlid, normaliseUlid } from '../common/ids';
import { normaliseSubreddit } from '../common/reddit-names';
import { generateWebhookSecret } from '../delivery/secret';
import { ListQuery, PaginationService } from '../pagination/pagination.service';
import { SsrfPolicy } from '../ssrf/ssrf-policy';
import { CreateWebhookInput } from './dto/create-webhook.dto';
import { toWebhookResource, WebhookResource } from './dto/webhook.resource';
import { WebhookEntity } from './webhook.entity';
import { WebhookRepository } from './webhook.repository';

export const WEBHOOKS_LIST_ROUTE = 'webhooks.list';
const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly plans: PlanService,
    private readonly ssrf: SsrfPolicy,
    private readonly pagination: PaginationService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(caller: Principal, dto: CreateWebhookInput): Promise<WebhookResource> {
    const max = this.plans.limits(caller.plan).maxWebhooks;
    // Cheap early answer before the DNS work; the insert re-checks atomically.
    if ((await this.webhooks.countForCustomer(caller.customerId)) >= max) throw quotaExceeded(max);
    const allowNonstandardPort = dto.allow_nonstandard_port ?? false;
    const dest = await this.ssrf.checkUrl(dto.url, { allowNonstandardPort, customerId: caller.customerId });
    const row: WebhookEntity = {
      id: newUlid(),
      customerId: caller.customerId,
      url: dest.url.href,
      event: dto.event,
      subreddit: normaliseSubreddit(dto.subreddit),
      allowNonstandardPort,
      secret: generateWebhookSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: this.clock.now(),
      lastDeliveryAt: null,
      lastStatus: null,
      lastResponseCode: null,
    };
    if (!(await this.webhooks.insertWithinQuota(row, max))) throw quotaExceeded(max);
    return toWebhookResource(row, { withSecret: true });
  }

  async list(caller: Principal, query: ListQuery): Promise<Paged<WebhookResource>> {
    const ctx = await this.pagination.begin(query, {
      route: WEBHOOKS_LIST_ROUTE,
      customerId: caller.customerId,
      params: {},
      planMaxPageSize: this.plans.limits(caller.plan).maxPageSize,
    });
    const rows = await this.webhooks.page(caller.customerId, ctx.request);
    const page = ctx.withPrev(rows, (w) => [w.id]);
    return new Paged(page.items.map((w) => toWebhookResource(w)), page.page);
  }

  async get(caller: Principal, rawId: string): Promise<WebhookResource> {
    const row = await this.webhooks.findForCustomer(caller.customerId, parseWebhookId(rawId));
    if (!row) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    return toWebhookResource(row);
  }

  /**
   * A new signing secret, shown once. The old one keeps signing beside it for 24 h, so receivers
   * can switch without dropping a delivery.
   */
  async rotateSecret(caller: Principal, rawId: string): Promise<WebhookResource> {
    const id = parseWebhookId(rawId);
    const row = await this.webhooks.findForCustomer(caller.customerId, id);
    if (!row) throw new AppError('NOT_FOUND', `webhook ${rawId} not found`);
    const now = this.clock.now();
    const rotated: WebhookEntity = {
      ...row,
      secret: generateWebhookSecret(),
      previousSecret: row.secret,
      previousSecretExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
    };
    await this.webhooks.updateSecrets(caller.customerId, rotated);
    return toWebhookResource(rotated, { withSecret: true });
  }

  /** Idempotent: absent or another customer's webhook is a no-op (DECISIONS). */
  async remove(caller: Principal, rawId: string): Promise<void> {
    await this.webhooks.deleteForCustomer(caller.customerId, parseWebhookId(rawId));
  }
}

export function parseWebhookId(raw: string): string {
  const id = normaliseUlid(raw);
  if (!id) throw new AppError('VALIDATION_ERROR', 'webhook_id must be a 26-character ULID');
  return id;
}

function quotaExceeded(max: number): AppError {
  return new AppError('WEBHOOK_QUOTA_EXCEEDED', `webhook quota of ${max} per customer reached; delete one or upgrade the plan`);
}
