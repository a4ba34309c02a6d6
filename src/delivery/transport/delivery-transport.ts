import { buildDeliveryHeaders } from '../signer';

/**
 * Where an attempt failed. Receivers and operators read it as: `before_connect` — nothing left
 * this process (the destination refused by the SSRF policy or unresolvable, a private destination
 * not granted…); `during` — the exchange broke (connect, TLS, reset, timeout); `after_response` —
 * the receiver answered, with a status that is not a success.
 */
export type DeliveryStage = 'before_connect' | 'during' | 'after_response';

/** The destination of an attempt, as read with its claim. */
export interface TransportDestination {
  webhookId: string;
  /** The owner: bounds the customer's share of the destination checks (DNS). */
  customerId: string;
  /**
   * As stored with the webhook (checked against the SSRF policy when it was created or changed):
   * a transport that connects to it checks it again first, as HttpsWebhookTransport does.
   */
  url: string;
  allowNonstandardPort: boolean;
}

/** One attempt of one delivery, as the worker hands it over. */
export interface TransportRequest {
  /** The delivery id: the same on every attempt, so receivers can deduplicate on it. */
  deliveryId: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  destination: TransportDestination;
  /** The attempt must settle within this (the worker's shutdown waits no longer for it). */
  timeoutMs: number;
  /**
   * Asked once the destination is checked, just before connecting: false when the webhook was
   * deleted meanwhile (a lookup may take seconds), and the send then ends `cancelled` with
   * nothing sent, so no attempt starts after the webhook's deletion was answered.
   */
  confirm(): Promise<boolean>;
  /**
   * The exact request body. A call rather than a value, like `secrets`: an attempt refused before
   * connecting builds and decrypts nothing, and a fanned-out event is serialised once per claim.
   */
  body(): string;
  /** The signing secrets in clear at `at`: the current one, and the previous one while a rotation's overlap lasts. */
  secrets(at: Date): string[];
}

export interface Delivered {
  kind: 'delivered';
  statusCode: number;
  /** The start of the response body, or null where it must not be kept. */
  excerpt: string | null;
  /** From the start of the send to its outcome, fractional ms. */
  durationMs: number;
}

export interface SendFailure {
  /** Whether the retry schedule may try again (`transient`) or the delivery fails now (`permanent`). */
  kind: 'transient' | 'permanent';
  stage: DeliveryStage;
  /** Stored as the attempt's `error_class` and the delivery's `last_error` (`http_503`, `timeout`, `destination_blocked`…). */
  errorClass: string;
  /** The receiver's status (`after_response` only). */
  statusCode: number | null;
  /** The response body's start after a response, a description of the error before one; null where it must not be kept. */
  excerpt: string | null;
  /** The receiver's requested wait before the next attempt (a 429's or 503's Retry-After), or null. */
  retryAfterMs: number | null;
  durationMs: number;
}

/** The webhook was deleted before anything was sent: the worker cancels the delivery and logs no attempt. */
export interface Cancelled {
  kind: 'cancelled';
}

export type SendOutcome = Delivered | SendFailure | Cancelled;

/**
 * How a claimed delivery reaches its receiver. The worker leases, re-checks and records; the
 * transport sends one attempt and says how it ended, never throwing: whatever goes wrong is a
 * `SendFailure` with its stage and class. The retry policy decides the next attempt from it.
 * The default is `HttpsWebhookTransport`; a host gives its own with `DeliveryModule.forRoot({
 * transport })` (see DeliveryModuleOptions.transport for what it owns and what trendhooks keeps).
 */
export abstract class DeliveryTransport {
  abstract send(req: TransportRequest): Promise<SendOutcome>;
}

/** What a delivery attempt sends: the exact body and its headers, signed per Standard Webhooks. */
export interface SignedDelivery {
  body: string;
  /** `content-type`, `user-agent`, `webhook-id`, `webhook-timestamp`, `webhook-signature` (names lower-case). */
  headers: Record<string, string>;
}

/**
 * The request's body and its Standard Webhooks headers at `at` (the `webhook-timestamp`), signed
 * with every secret valid then: what `HttpsWebhookTransport` POSTs, for a transport of the host's
 * own to carry. Call it after `confirm()`; it throws on a secret that is not a `whsec_` secret.
 */
export function signDelivery(req: Pick<TransportRequest, 'deliveryId' | 'body' | 'secrets'>, at: Date): SignedDelivery {
  const body = req.body();
  return { body, headers: buildDeliveryHeaders(req.deliveryId, Math.floor(at.getTime() / 1000), body, req.secrets(at)) };
}
