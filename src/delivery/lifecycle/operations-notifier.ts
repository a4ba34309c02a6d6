import { Logger } from '@nestjs/common';
import { Agent, request } from 'undici';
import { Clock, SystemClock } from '../../common/clock';
import { deliveryId } from '../delivery-id';
import { buildDeliveryHeaders } from '../signer';
import { WEBHOOK_DISABLED_TYPE, webhookDisabledBody, WebhookDisabledEvent } from '../../events/webhook-disabled';

export interface OperationsNotifierOptions {
  /** OPERATIONS_WEBHOOK_URL: set by the operator, so not held to the customers' SSRF policy. */
  url: string;
  /** OPERATIONS_WEBHOOK_SECRET (`whsec_…`): the Standard Webhooks signing secret. */
  secret: string;
  /** Extra trusted CA (DELIVERY_CA_FILE), for a receiver with a private certificate. */
  ca?: string | Buffer;
  timeoutMs?: number;
  /** Waits before the 2nd, 3rd … attempt. Default 1 s, 10 s, 60 s. */
  retryDelaysMs?: readonly number[];
  /** The clock each attempt's `webhook-timestamp` is read from: the app's CLOCK (the system clock by default). */
  clock?: Clock;
}

/**
 * The standalone's `onWebhookDisabled`: a signed Standard Webhooks POST of `webhook.disabled` to
 * the operators. Best effort: a few attempts in this process (a 2xx ends them), nothing stored, so
 * a restart forgets a notification still being retried (the `warn` log line stays).
 */
export class OperationsNotifier {
  private readonly logger = new Logger('OperationsNotifier');
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly opts: OperationsNotifierOptions) {
    this.agent = new Agent({ connect: opts.ca ? { ca: opts.ca } : {} });
    this.clock = opts.clock ?? new SystemClock();
  }

  /** Sends `event`; resolves once it was acknowledged or the attempts ran out (never rejects). */
  readonly notify = async (event: WebhookDisabledEvent): Promise<void> => {
    const body = webhookDisabledBody(event);
    // The same id on every attempt, so the receiver can deduplicate.
    const msgId = deliveryId(`${WEBHOOK_DISABLED_TYPE}:${event.disabled_at}`, event.id);
    const delays = [0, ...(this.opts.retryDelaysMs ?? [1000, 10_000, 60_000])];
    let last: string;
    for (const [i, delay] of delays.entries()) {
      if (delay > 0) await new Promise((r) => setTimeout(r, delay).unref());
      try {
        const headers = buildDeliveryHeaders(msgId, Math.floor(this.clock.now().getTime() / 1000), body, [this.opts.secret]);
        const timeout = this.opts.timeoutMs ?? 10_000;
        const res = await request(this.opts.url, { method: 'POST', headers, body, dispatcher: this.agent, headersTimeout: timeout, bodyTimeout: timeout });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) return;
        last = `HTTP ${res.statusCode}`;
      } catch (err) {
        last = (err as Error).message;
      }
      this.logger.warn({ msg: 'operations notification failed', webhook_id: event.id, attempt: i + 1, error: last });
    }
  };

  close(): Promise<void> {
    return this.agent.close();
  }
}
