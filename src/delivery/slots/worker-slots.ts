import type { Clock } from '../../common/clock';

/**
 * How long deliveries to a destination already at its share of the slots are put off (see
 * `WorkerSlots.admit`), unless one of its attempts ended within DESTINATION_MOVING_MS: then it is
 * moving, a slot there frees within milliseconds, and they go back due at once.
 */
export const DESTINATION_BUSY_DEFER_MS = 1000;
export const DESTINATION_MOVING_MS = 100;

/**
 * What `admit` decided for a claimed delivery: `held` (it starts, its slot counted against its
 * customer's and destination's share), or why it goes back unstarted: its customer is at its
 * share (`customer_at_share`), or its destination is, and is `destination_moving` (due again at
 * once) or `destination_busy` (put off DESTINATION_BUSY_DEFER_MS).
 */
export type Admission = 'held' | 'customer_at_share' | 'destination_moving' | 'destination_busy';

export interface WorkerSlotsOptions {
  /** Parallel sends of the worker. */
  concurrency: number;
  /** Slots that no single customer and no single destination may take (below `concurrency`). */
  fairReserve: number;
}

/**
 * The slot accounting of one delivery worker (DeliveryWorker keeps the attempts themselves).
 *
 * - Slots: `concurrency` per worker, taken by attempts in flight (the worker's count, passed in as
 *   `busy`) and by reservations of claims in flight (`reserve`/`unreserve`), part of them promised
 *   to emits' leases, which claims and starts must leave free.
 * - Fairness: no customer and no destination (host and port) holds more than `shareCap`
 *   (`concurrency - fairReserve`) of the slots, so the reserve always stays for the others,
 *   whatever one customer's endpoints do (hang for the whole attempt timeout, or wait on DNS).
 *   Counted per worker process: every worker keeps its own reserve, so the bound holds with any
 *   number of them. An attempt's share is held from `admit` to `release` (its outcome committed).
 * - A destination at its share is `moving` when one of its attempts ended within
 *   DESTINATION_MOVING_MS (healthy, at its share because it is the only one), slow otherwise.
 */
export class WorkerSlots {
  readonly concurrency: number;
  readonly shareCap: number;
  /** Slots promised to claims in flight (the drain's, an outcome batch's, an emit's lease). */
  private reservedSlots = 0;
  /** The part of `reserved` promised to emits' leases (leaseForEmit): claims must leave it free. */
  private emitReservedSlots = 0;
  private readonly byCustomer = new Map<string, number>();
  private readonly byDestination = new Map<string, number>();
  private readonly heldBy = new Map<string, { customer: string; destination: string }>();
  /** When an attempt to each destination with held slots last ended (clock ms). */
  private readonly destinationEndedAt = new Map<string, number>();

  constructor(
    options: WorkerSlotsOptions,
    private readonly clock: Clock,
  ) {
    this.concurrency = options.concurrency;
    this.shareCap = options.concurrency - options.fairReserve;
  }

  get reserved(): number {
    return this.reservedSlots;
  }

  get emitReserved(): number {
    return this.emitReservedSlots;
  }

  /** Slots neither taken by the `busy` attempts (sending or recording) nor promised to a claim in flight. */
  free(busy: number): number {
    return this.concurrency - busy - this.reservedSlots;
  }

  /** Promises `n` slots to a claim in flight (`forEmit`: an emit's lease) until `unreserve`. */
  reserve(n: number, forEmit = false): void {
    this.reservedSlots += n;
    if (forEmit) this.emitReservedSlots += n;
  }

  unreserve(n: number, forEmit = false): void {
    this.reservedSlots -= n;
    if (forEmit) this.emitReservedSlots -= n;
  }

  /**
   * Slots an emit may lease with `busy` attempts in flight: not `free`, since a claim in flight
   * reserves every free slot and, at light load, answers nothing (an emit does not wait for it);
   * what a claim answers beyond the slots left is given back (see `roomToStart`). No more than a
   * batch, nor than `headroom`.
   */
  emitLimit(busy: number, batchSize: number): number {
    return Math.min(batchSize, this.concurrency - busy - this.emitReservedSlots, this.headroom);
  }

  /** How many of what a claim answered may start with `busy` attempts in flight: the rest goes back unstarted. */
  roomToStart(busy: number): number {
    return Math.max(0, this.concurrency - busy - this.emitReservedSlots);
  }

  /**
   * How many more slots the busiest customer or destination may take: a claim for no more than
   * this never takes anyone past `shareCap`, without knowing whose rows it will find.
   */
  get headroom(): number {
    let most = 0;
    for (const n of this.byCustomer.values()) if (n > most) most = n;
    for (const n of this.byDestination.values()) if (n > most) most = n;
    return this.shareCap - most;
  }

  /** `headroom` once the attempts `ids` (whose outcomes are being written) have given their shares back. */
  headroomAfter(ids: readonly string[]): number {
    if (ids.length === 0) return this.headroom;
    const customers = new Map(this.byCustomer);
    const destinations = new Map(this.byDestination);
    for (const id of ids) {
      const held = this.heldBy.get(id);
      if (!held) continue;
      customers.set(held.customer, (customers.get(held.customer) ?? 1) - 1);
      destinations.set(held.destination, (destinations.get(held.destination) ?? 1) - 1);
    }
    let most = 0;
    for (const n of customers.values()) if (n > most) most = n;
    for (const n of destinations.values()) if (n > most) most = n;
    return this.shareCap - most;
  }

  /** Customers holding their whole share: a claim for the reserve passes over their rows. */
  customersAtShare(): string[] {
    const at: string[] = [];
    for (const [customer, n] of this.byCustomer) if (n >= this.shareCap) at.push(customer);
    return at;
  }

  /**
   * Whether the claimed delivery `id` of `customer` to `destination` starts (then its share is
   * held until `release`) or goes back, and how (see Admission). A `takeover` (a delivery taken
   * over from a worker that died) is always held: its lost attempt is logged first.
   */
  admit(id: string, customer: string, destination: string, takeover = false): Admission {
    if (!takeover && (this.byCustomer.get(customer) ?? 0) >= this.shareCap) return 'customer_at_share';
    if (!takeover && (this.byDestination.get(destination) ?? 0) >= this.shareCap) {
      const endedAt = this.destinationEndedAt.get(destination) ?? -Infinity;
      return this.clock.now().getTime() - endedAt <= DESTINATION_MOVING_MS ? 'destination_moving' : 'destination_busy';
    }
    this.hold(id, customer, destination);
    return 'held';
  }

  /** Counts the slot of an attempt that starts against its customer's and destination's share. */
  hold(id: string, customer: string, destination: string): void {
    this.heldBy.set(id, { customer, destination });
    this.byCustomer.set(customer, (this.byCustomer.get(customer) ?? 0) + 1);
    this.byDestination.set(destination, (this.byDestination.get(destination) ?? 0) + 1);
  }

  /** Gives the share of attempt `id` back (its outcome committed, or it ended otherwise); nothing when it holds none. */
  release(id: string): void {
    const held = this.heldBy.get(id);
    if (!held) return;
    this.heldBy.delete(id);
    const c = (this.byCustomer.get(held.customer) ?? 1) - 1;
    if (c > 0) this.byCustomer.set(held.customer, c);
    else this.byCustomer.delete(held.customer);
    const d = (this.byDestination.get(held.destination) ?? 1) - 1;
    if (d > 0) {
      this.byDestination.set(held.destination, d);
      this.destinationEndedAt.set(held.destination, this.clock.now().getTime());
    } else {
      this.byDestination.delete(held.destination);
      this.destinationEndedAt.delete(held.destination);
    }
  }

  /** Slots held by `customer` (for tests and metrics). */
  heldByCustomer(customer: string): number {
    return this.byCustomer.get(customer) ?? 0;
  }

  /** Slots held at `destination` (for tests and metrics). */
  heldAtDestination(destination: string): number {
    return this.byDestination.get(destination) ?? 0;
  }
}
