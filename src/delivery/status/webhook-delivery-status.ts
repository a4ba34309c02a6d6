/** A delivery attempt's outcome as its webhook shows it (`last_*`). */
export interface WebhookOutcome {
  webhookId: string;
  /** When the attempt started (`last_delivery_at`). */
  at: Date;
  status: 'delivered' | 'retrying' | 'failed';
  responseCode: number | null;
}

/**
 * The one writer of a webhook's last_delivery_at, last_status and last_response_code: delivery
 * reports outcomes here instead of writing the webhooks table. Latest wins: an attempt that
 * started earlier but finished later (a hang) never hides a newer one.
 */
export abstract class WebhookDeliveryStatus {
  /**
   * Records a batch of outcomes (any order, several per webhook allowed) as one write. On SQLite
   * it has run when it returns (its statements are synchronous), so a caller may call it inside
   * its own synchronous transaction; the promise then carries nothing.
   */
  abstract recordLatest(outcomes: WebhookOutcome[]): Promise<void>;
}
