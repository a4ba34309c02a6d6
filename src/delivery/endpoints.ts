import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { newUlid } from '../common/ids';
import { SecretBox } from '../crypto/secret-box';
import { SsrfPolicy } from '../ssrf/ssrf-policy';
import { WEBHOOK_DISABLED } from './lifecycle/webhook-lifecycle';
import { DeliveryQueue } from './queue/delivery-queue';
import { generateWebhookSecret } from './secret';
import { DisabledReason, newEndpointRow, webhookSecretPlace } from './endpoint.entity';
import { EndpointStore } from './endpoint.store';

export interface NewEndpoint {
  /** The owner (at most 40 characters): its DNS lookups are bounded per customer, as for webhooks. */
  customerId: string;
  /** `https://…`, checked against the SSRF policy now and again at every attempt. */
  url: string;
  /** Ports other than 443 need this, as for webhooks. Default false. */
  allowNonstandardPort?: boolean;
}

/** Whether an endpoint takes deliveries: `reason` `gone` (its receiver answered 410) or `failing` (auto-disabled), or `manual` (disable()). */
export interface EndpointState {
  disabled: boolean;
  reason: DisabledReason | null;
  disabledAt: Date | null;
}

/**
 * Destinations for a host's own SubscriptionSource. The delivery core sends to endpoints it
 * stores itself (URL, encrypted signing secrets, `last_*` status: rows of the `webhooks` table,
 * read in the claim statement); a host that keeps its subscriptions elsewhere registers each
 * destination here once, keeps the returned id beside its own subscription, and answers that id
 * from `SubscriptionSource.subscribers`. An endpoint subscribes to nothing by itself: the webhook
 * API's subscriptions are its own table, so the built-in source never matches a host's endpoint.
 */
@Injectable()
export class DeliveryEndpoints {
  constructor(
    private readonly endpoints: EndpointStore,
    private readonly ssrf: SsrfPolicy,
    private readonly secrets: SecretBox,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly queue: DeliveryQueue,
  ) {}

  /** Stores a destination. Answers its id and its `whsec_…` signing secret (shown this once: give it to the receiver). */
  async register(input: NewEndpoint): Promise<{ id: string; secret: string }> {
    if (typeof input.customerId !== 'string' || input.customerId.length === 0 || input.customerId.length > 40) {
      throw new AppError('VALIDATION_ERROR', 'customerId must be 1 to 40 characters');
    }
    const allowNonstandardPort = input.allowNonstandardPort ?? false;
    const dest = await this.ssrf.checkUrl(input.url, { allowNonstandardPort, customerId: input.customerId });
    const id = newUlid();
    const secret = generateWebhookSecret();
    const row = newEndpointRow({
      id,
      customerId: input.customerId,
      url: dest.url.href,
      allowNonstandardPort,
      secret: this.secrets.encrypt(secret, webhookSecretPlace(id, 'secret')),
      createdAt: this.clock.now(),
    });
    await this.endpoints.insert(row);
    return { id, secret };
  }

  /** Deletes a destination; its pending deliveries are cancelled when claimed, and no attempt starts after this returns. */
  async remove(id: string): Promise<boolean> {
    return this.endpoints.remove(id);
  }

  /** Whether the endpoint takes deliveries; null when there is no such endpoint. Trendhooks disables one on its own (410, or failing for WEBHOOK_DISABLE_AFTER): see onWebhookDisabled. */
  async state(id: string): Promise<EndpointState | null> {
    const row = await this.endpoints.find(id);
    return row ? { disabled: row.disabledAt !== null, reason: row.disabledReason, disabledAt: row.disabledAt } : null;
  }

  /** Pauses an endpoint (`manual`): no new deliveries, its pending ones cancelled (`webhook_disabled`). False when absent or already disabled. */
  async disable(id: string): Promise<boolean> {
    const now = this.clock.now();
    if (!(await this.endpoints.disable(id, now, 'manual'))) return false;
    await this.queue.cancelPendingForWebhook(id, now, WEBHOOK_DISABLED);
    return true;
  }

  /** Resumes a disabled endpoint, whoever disabled it: deliveries flow again and its failure clock restarts. False when absent or not disabled. */
  async resume(id: string): Promise<boolean> {
    return this.endpoints.resume(id);
  }
}
