import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { DELIVERY_OPTIONS, DeliveryModuleOptions, resolveDeliveryOptions } from '../delivery.options';
import { destinationOf } from '../destination';
import type { SendOutcome } from '../transport/delivery-transport';
import { admission, CircuitOptions, CircuitRow, circuitSignal, halfOpen, onFailure, onSuccess } from './circuit-policy';
import { DestinationCircuitStore } from './destination-circuit.store';

/** How often a worker reloads every circuit (other workers' transitions reach it within this). */
export const CIRCUIT_REFRESH_MS = 1000;

/** An attempt allowed to start: give it back to `settle` with its outcome. */
export interface CircuitTicket {
  readonly key: string;
  readonly customerId: string;
  readonly destination: string;
  readonly webhookId: string;
  /** The half-open circuit's one probe: its outcome closes or reopens it. */
  readonly probe: boolean;
}

/** An attempt that must not start now: its delivery is put off until `until`, uncharged. */
export interface CircuitDeferral {
  readonly until: Date;
  /**
   * Set (the circuit's key) when it waits for a half-open circuit's probe (`until` is the probe's
   * deadline): once the delivery is given back, `park` it, and it is handed to the
   * `onProbeAnswered` listener as soon as this worker sees the circuit close, to be made due at once.
   */
  readonly behindProbe?: string;
}

/** Deliveries that were put off behind a probe that has since answered: due again now. */
export interface ParkedDelivery {
  readonly id: string;
  /** When it was put off until (the probe's deadline). */
  readonly until: Date;
}

interface Signal {
  kind: 'failure' | 'success';
  probe: boolean;
  webhookId: string;
}

const keyOf = (customerId: string, destination: string) => `${customerId}\n${destination}`;

/**
 * The worker's side of the circuit breaker per (customer, destination): keyed by customer too, so
 * one customer's failing endpoints never slow or pause another customer's webhooks at the same
 * host and port. The state lives in `destination_circuits` (DestinationCircuitStore), so every
 * worker process and the API see it; each worker keeps a copy reloaded every CIRCUIT_REFRESH_MS and
 * updated by its own writes, so deciding whether an attempt may start is a map lookup. Writes
 * happen on failures that count and on the first answer after them, never on the successes of a
 * healthy destination; a worker's signals for one circuit are written one batch at a time.
 */
@Injectable()
export class DestinationCircuitBreaker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DestinationCircuitBreaker');
  /** Null when switched off (`circuit.failures` 0). */
  private readonly opts: CircuitOptions | null;
  private readonly worker: boolean;
  private readonly timeoutMs: number;
  /** How long a probe may take before another worker may send one: the attempt, and a lease to record it. */
  private readonly probeMs: number;
  private readonly known = new Map<string, CircuitRow>();
  /** This worker's attempts in flight per circuit (the throttle). */
  private readonly inFlight = new Map<string, number>();
  /** Signals not yet written, per circuit, and the circuits being written. */
  private readonly pending = new Map<string, { customerId: string; destination: string; signals: Signal[] }>();
  private readonly writing = new Set<string>();
  /** The half-open transition in flight per circuit: the other attempts wait for it, then are put off. */
  private readonly probing = new Map<string, Promise<unknown>>();
  /**
   * Per half-open circuit, this worker's deliveries put off behind its probe (id → the deadline
   * they were put off until). Only while a circuit is half-open: a healthy one has no entry.
   */
  private readonly parked = new Map<string, Map<string, number>>();
  private probeAnswered?: (deliveries: ParkedDelivery[]) => void;
  private refreshTimer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private refreshFailing = false;

  constructor(
    private readonly store: DestinationCircuitStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(DELIVERY_OPTIONS) options: DeliveryModuleOptions,
  ) {
    const r = resolveDeliveryOptions(options);
    this.opts = r.circuit.failures > 0 ? r.circuit : null;
    this.worker = r.worker;
    this.timeoutMs = r.timeoutMs;
    this.probeMs = r.timeoutMs + r.leaseMs;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.worker || !this.opts) return;
    await this.refresh();
    this.refreshTimer = setInterval(() => void this.refresh(), CIRCUIT_REFRESH_MS);
    this.refreshTimer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.refreshTimer);
  }

  /** Reloads every circuit; a copy this worker changed since the read started is kept. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const started = this.clock.now();
      try {
        const rows = await this.store.all();
        const seen = new Set<string>();
        for (const r of rows) {
          const key = keyOf(r.customerId, r.destination);
          seen.add(key);
          const mine = this.known.get(key);
          if (!mine || r.updatedAt >= mine.updatedAt) this.remember(key, r);
        }
        for (const [key, mine] of this.known) if (!seen.has(key) && mine.updatedAt <= started) this.remember(key, null);
        if (this.refreshFailing) this.logger.log('reading destination circuits works again');
        this.refreshFailing = false;
      } catch (err) {
        if (!this.refreshFailing) this.logger.warn(`reading destination circuits failed: ${(err as Error).message}`);
        this.refreshFailing = true;
      } finally {
        this.pruneParked(started);
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * Before an attempt: a ticket (settle it with the outcome), or when its delivery is due again.
   * Synchronous but for a half-open circuit, where the first attempt races other workers for the probe.
   */
  admit(webhook: { id: string; customerId: string; url: string }): CircuitTicket | CircuitDeferral | Promise<CircuitTicket | CircuitDeferral> {
    const destination = destinationOf(webhook.url);
    const key = keyOf(webhook.customerId, destination);
    if (!this.opts) return this.ticket(key, webhook, destination, false);
    const now = this.clock.now();
    const a = admission(this.known.get(key) ?? null, now, this.inFlight.get(key) ?? 0, this.opts, this.timeoutMs);
    if (a.kind === 'send') return this.ticket(key, webhook, destination, false);
    if (a.kind === 'defer') return this.deferral(key, a.until);
    return this.takeProbe(key, webhook, destination, 0);
  }

  /**
   * `cb` gets this worker's deliveries put off behind a probe (see `park`) as soon as the worker
   * sees that probe's circuit close (its own write, or the reload that finds the row gone): they
   * are to be made due at once rather than at the probe's deadline. One listener (the worker).
   */
  onProbeAnswered(cb: (deliveries: ParkedDelivery[]) => void): void {
    this.probeAnswered = cb;
  }

  /**
   * A delivery put off behind a probe (`deferral.behindProbe` set) was given back: remember it until the
   * probe's outcome. When the circuit closed meanwhile it goes to the listener at once; when the
   * probe failed (open again) it waits for its deadline, as it would have anyway.
   */
  park(deferral: CircuitDeferral, deliveryId: string): void {
    const key = deferral.behindProbe;
    if (key === undefined || !this.opts) return;
    let ids = this.parked.get(key);
    if (!ids) this.parked.set(key, (ids = new Map()));
    ids.set(deliveryId, deferral.until.getTime());
    this.releaseParked(key);
  }

  /** How many of this worker's deliveries wait for a probe (tests, metrics). */
  get parkedCount(): number {
    let n = 0;
    for (const ids of this.parked.values()) n += ids.size;
    return n;
  }

  /** After the attempt (also when it threw or was cancelled: `outcome` undefined or `cancelled`). */
  settle(t: CircuitTicket, outcome: SendOutcome | undefined): void {
    const n = (this.inFlight.get(t.key) ?? 1) - 1;
    if (n > 0) this.inFlight.set(t.key, n);
    else this.inFlight.delete(t.key);
    if (!this.opts) return;
    const kind = circuitSignal(outcome);
    // The hot path: an answer from a destination with nothing to forget writes nothing.
    if (kind === null || (kind === 'success' && !this.known.has(t.key) && !this.pending.has(t.key))) return;
    let p = this.pending.get(t.key);
    if (!p) this.pending.set(t.key, (p = { customerId: t.customerId, destination: t.destination, signals: [] }));
    p.signals.push({ kind, probe: t.probe, webhookId: t.webhookId });
    void this.write(t.key);
  }

  /** This worker's copy of a circuit (tests, metrics). */
  cached(customerId: string, destination: string): CircuitRow | null {
    return this.known.get(keyOf(customerId, destination)) ?? null;
  }

  /** Put off until `until`; behind the probe when the circuit is half-open (see `park`). */
  private deferral(key: string, until: Date): CircuitDeferral {
    return this.known.get(key)?.state === 'half_open' ? { until, behindProbe: key } : { until };
  }

  private ticket(key: string, webhook: { id: string; customerId: string }, destination: string, probe: boolean): CircuitTicket {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    return { key, customerId: webhook.customerId, destination, webhookId: webhook.id, probe };
  }

  /** Half-open: the attempt that moves the stored row to half_open is the probe; the others are put off. */
  private async takeProbe(key: string, webhook: { id: string; customerId: string; url: string }, destination: string, tries: number): Promise<CircuitTicket | CircuitDeferral> {
    const busy = this.probing.get(key);
    if (busy) {
      await busy;
      return this.decideAgain(key, webhook, destination, tries);
    }
    const now = this.clock.now();
    const before = this.known.get(key) ?? null;
    const run = (async () => {
      if (before === null) return false;
      const next = halfOpen(before, now, new Date(now.getTime() + this.probeMs));
      if (await this.store.replace(webhook.customerId, destination, before, next)) {
        this.remember(key, next);
        return true;
      }
      this.remember(key, await this.store.find(webhook.customerId, destination));
      return false;
    })();
    this.probing.set(key, run.catch(() => undefined));
    try {
      if (await run) {
        this.logger.log({ msg: 'destination circuit half-open: sending one probe', customer_id: webhook.customerId, webhook_id: webhook.id });
        return this.ticket(key, webhook, destination, true);
      }
    } catch (err) {
      this.logger.warn(`destination circuit: taking the probe failed: ${(err as Error).message}`);
      return { until: new Date(now.getTime() + CIRCUIT_REFRESH_MS) };
    } finally {
      this.probing.delete(key);
    }
    return this.decideAgain(key, webhook, destination, tries);
  }

  private decideAgain(key: string, webhook: { id: string; customerId: string; url: string }, destination: string, tries: number): CircuitTicket | CircuitDeferral | Promise<CircuitTicket | CircuitDeferral> {
    const now = this.clock.now();
    const a = admission(this.known.get(key) ?? null, now, this.inFlight.get(key) ?? 0, this.opts!, this.timeoutMs);
    if (a.kind === 'send') return this.ticket(key, webhook, destination, false);
    if (a.kind === 'defer') return this.deferral(key, a.until);
    // Lost the race more than twice (the row keeps changing under us): try again a little later.
    if (tries >= 2) return { until: new Date(now.getTime() + CIRCUIT_REFRESH_MS) };
    return this.takeProbe(key, webhook, destination, tries + 1);
  }

  /** Every change of this worker's copy goes through here, so a probe's outcome releases what waited for it. */
  private remember(key: string, row: CircuitRow | null): void {
    if (row === null) this.known.delete(key);
    else this.known.set(key, row);
    this.releaseParked(key);
  }

  /**
   * The deliveries parked behind the circuit's probe, once it has an outcome: closed (no row, or
   * counting failures again after an answer) hands them to the listener; open again (the probe
   * failed) forgets them, their deadline stands. Still half-open: they keep waiting.
   */
  private releaseParked(key: string): void {
    const ids = this.parked.get(key);
    if (!ids) return;
    const state = this.known.get(key)?.state ?? 'closed';
    if (state === 'half_open') return;
    this.parked.delete(key);
    if (state === 'open' || !this.probeAnswered) return;
    this.probeAnswered([...ids].map(([id, until]) => ({ id, until: new Date(until) })));
  }

  /** Parked deliveries whose deadline has passed are due anyway (a probe that never reported). */
  private pruneParked(now: Date): void {
    for (const [key, ids] of this.parked) {
      for (const [id, until] of ids) if (until <= now.getTime()) ids.delete(id);
      if (ids.size === 0) this.parked.delete(key);
    }
  }

  /** Writes a circuit's pending signals as one compare-and-set, one batch at a time per circuit. */
  private async write(key: string): Promise<void> {
    if (this.writing.has(key)) return;
    this.writing.add(key);
    try {
      for (let p = this.pending.get(key); p; p = this.pending.get(key)) {
        this.pending.delete(key);
        await this.apply(key, p.customerId, p.destination, p.signals).catch((err) =>
          this.logger.warn(`destination circuit of customer ${p!.customerId}: recording ${p!.signals.length} outcomes failed: ${(err as Error).message}`),
        );
      }
    } finally {
      this.writing.delete(key);
    }
  }

  private async apply(key: string, customerId: string, destination: string, signals: Signal[]): Promise<void> {
    const o = this.opts!;
    let before = this.known.get(key) ?? null;
    for (let tries = 0; tries < 5; tries++) {
      const now = this.clock.now();
      let after = before;
      for (const s of signals) after = s.kind === 'success' ? onSuccess() : onFailure(after, now, o, s.probe);
      if (after === before) return;
      if (await this.store.replace(customerId, destination, before, after)) {
        this.remember(key, after);
        if ((after?.state ?? 'closed') !== (before?.state ?? 'closed')) this.logTransition(customerId, signals[signals.length - 1].webhookId, before, after);
        return;
      }
      before = await this.store.find(customerId, destination);
      this.remember(key, before);
    }
    this.logger.warn(`destination circuit of customer ${customerId}: gave up recording ${signals.length} outcomes after 5 conflicting writes`);
  }

  private logTransition(customerId: string, webhookId: string, before: CircuitRow | null, after: CircuitRow | null): void {
    // Ids and states only: never the URL.
    this.logger.warn({
      msg: 'destination circuit changed',
      customer_id: customerId,
      webhook_id: webhookId,
      from: before?.state ?? 'closed',
      to: after?.state ?? 'closed',
      consecutive_failures: after?.consecutiveFailures ?? 0,
      until: after?.state === 'open' ? after.openedUntil?.toISOString() : null,
    });
  }
}
