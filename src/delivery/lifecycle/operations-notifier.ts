import { Agent, request } from 'undici';
import { Clock, SystemClock } from '../../common/clock';
import { buildDeliveryHeaders } from '../signer';

export interface OperationsNotifierOptions {
  /** OPERATIONS_WEBHOOK_URL: set by the operator, so not held to the customers' SSRF policy. */
  url: string;
  /** OPERATIONS_WEBHOOK_SECRET (`whsec_…`): the Standard Webhooks signing secret. */
  secret: string;
  /** Extra trusted CA (DELIVERY_CA_FILE), for a receiver with a private certificate. */
  ca?: string | Buffer;
  timeoutMs?: number;
  /** The clock each attempt's `webhook-timestamp` is read from: the app's CLOCK (the system clock by default). */
  clock?: Clock;
}

/**
 * One attempt of an operations notification: a signed Standard Webhooks POST to the operators.
 * What is sent, when and how often is OperationsNotifications' (stored, retried, folded).
 */
export class OperationsNotifier {
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly opts: OperationsNotifierOptions) {
    this.agent = new Agent({ connect: opts.ca ? { ca: opts.ca } : {} });
    this.clock = opts.clock ?? new SystemClock();
  }

  /** Posts `body` under `msgId`, signed at this moment; answers null on a 2xx, else why not (never rejects). */
  async send(msgId: string, body: string): Promise<string | null> {
    try {
      const headers = buildDeliveryHeaders(msgId, Math.floor(this.clock.now().getTime() / 1000), body, [this.opts.secret]);
      const timeout = this.opts.timeoutMs ?? 10_000;
      const res = await request(this.opts.url, { method: 'POST', headers, body, dispatcher: this.agent, headersTimeout: timeout, bodyTimeout: timeout });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (err) {
      return (err as Error).message;
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
