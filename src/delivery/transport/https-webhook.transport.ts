import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { PrivateDestinationsService } from '../../auth/private-destinations.service';
import { SsrfPolicy } from '../../ssrf/ssrf-policy';
import { AttemptOutcome, classifyError, classifyResponse, describeError, retryAfterApplies } from '../classify';
import { DELIVERY_OPTIONS, DeliveryModuleOptions, receiverCaOf, resolveDeliveryOptions } from '../delivery.options';
import { parseRetryAfter } from '../../common/retry-after';
import { DeliveryStage, DeliveryTransport, SendOutcome, signDelivery, TransportRequest } from './delivery-transport';
import { DnsShare } from './dns-share';
import { HttpsSender, RESPONSE_EXCERPT_BYTES, truncateUtf8 } from './https-sender';

/**
 * The default transport: an HTTPS POST signed per Standard Webhooks, to the addresses the SSRF
 * policy checked in this same attempt (re-resolved every time, so a DNS change to a private
 * address is caught). Each customer's attempts waiting on the nameservers are bounded by its
 * share (`DnsShare`): past it an attempt fails at once as a retried `dns_failure`, so names that
 * stop resolving hold few of the worker's slots for the DNS timeout.
 */
@Injectable()
export class HttpsWebhookTransport extends DeliveryTransport implements OnApplicationShutdown {
  private readonly sender: HttpsSender;
  private readonly dnsShare: DnsShare;

  constructor(
    private readonly ssrf: SsrfPolicy,
    private readonly privateDestinations: PrivateDestinationsService,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) options: DeliveryModuleOptions,
  ) {
    super();
    const opts = resolveDeliveryOptions(options);
    this.dnsShare = new DnsShare(opts.dnsLookupsPerCustomer);
    const { ca, file } = receiverCaOf(options);
    // An extra trust anchor for every receiver: visible in the boot log, as SsrfModule's allowances are.
    if (file !== null) new Logger('DeliveryModule').log(`receivers' certificates may also chain to the CA in DELIVERY_CA_FILE (${file})`);
    this.sender = new HttpsSender({ ca, connectTimeoutMs: opts.timeoutMs, connections: opts.concurrency });
  }

  async send(req: TransportRequest): Promise<SendOutcome> {
    const { destination: to } = req;
    const t0 = performance.now();
    let stage: DeliveryStage = 'before_connect';
    let outcome: AttemptOutcome;
    let statusCode: number | null = null;
    let excerpt: string | null;
    let retryAfterMs: number | null = null;
    let privateGrant = false;
    let sendStart: number | undefined;
    try {
      const dest = await this.ssrf.checkDestination(to.url, {
        allowNonstandardPort: to.allowNonstandardPort,
        customerId: to.customerId,
        dnsGate: this.dnsShare.gateFor(to.customerId),
        privateGrants: () => this.privateDestinations.forCustomer(to.customerId),
      });
      privateGrant = dest.privateGrant === true;
      if (!(await req.confirm())) return { kind: 'cancelled' };
      const { body, headers } = signDelivery(req, this.clock.now());
      stage = 'during';
      sendStart = performance.now();
      const res = await this.sender.post(dest, headers, body, req.timeoutMs);
      stage = 'after_response';
      statusCode = res.statusCode;
      excerpt = res.excerpt;
      outcome = classifyResponse(res.statusCode);
      if (retryAfterApplies(outcome)) retryAfterMs = parseRetryAfter(res.retryAfter, this.clock.now());
    } catch (err) {
      outcome = classifyError(err);
      excerpt = truncateUtf8(Buffer.from(describeError(err)), RESPONSE_EXCERPT_BYTES);
    }
    let durationMs: number | undefined;
    if (privateGrant) {
      // A customer's own private network: what answers there, and how a connection fails, is not
      // theirs to read through us (no excerpt; every failure before a response is one class).
      excerpt = null;
      if (outcome.kind !== 'delivered' && statusCode === null) {
        outcome = { kind: outcome.kind, errorClass: 'private_destination_error' };
        // Nor is the time it took: a closed port fails at once, a filtered one at the time limit.
        // Every such failure ends at the limit and reports it, so its duration_ms, when it is
        // recorded and its next_attempt_at are those of a timeout, whatever happened.
        const left = (sendStart ?? t0) + req.timeoutMs - performance.now();
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
        durationMs = req.timeoutMs;
      }
    }
    durationMs ??= performance.now() - t0;
    if (outcome.kind === 'delivered') return { kind: 'delivered', statusCode: statusCode!, excerpt, durationMs };
    return { kind: outcome.kind, stage, errorClass: outcome.errorClass, statusCode, excerpt, retryAfterMs, durationMs };
  }

  /** After the worker's onModuleDestroy has let the attempts in flight finish. */
  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }
}
