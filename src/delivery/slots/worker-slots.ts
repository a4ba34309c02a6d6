import type { Clock } from '../../common/clock';

/**
 * How long deliveries to a slow destination already at its share of the slots are put off (see
 * `WorkerSlots.admit`).
 */
export const DESTINATION_BUSY_DEFER_MS = 1000;
/** An attempt that ends within this long after its start is fast; one still in flight after it is stuck. */
export const FAST_ATTEMPT_MS = 1000;
/**
 * A customer or destination is moving when one of its attempts ended fast within this long (and,
 * for a customer, none of its attempts is stuck): its slots free within milliseconds, so it is not
 * held to the shrinking share, nor a destination to its cap.
 */
export const MOVING_MS = 250;

/**
 * What `admit` decided for a claimed delivery: `held` (it starts, its slot counted against its
 * customer's and destination's share), or why it goes back unstarted: its customer is at its
 * share (`customer_at_share`), or its destination is (slow), `destination_busy` (put off
 * DESTINATION_BUSY_DEFER_MS).
 */
export type Admission = 'held' | 'customer_at_share' | 'destination_busy';

/**
 * What the worker last read of the whole queue (`DeliveryQueue.activity`, every few hundred ms):
 * the customers with due deliveries or attempts in flight on any worker, what the OTHER live
 * workers hold per customer, and how many workers hold anything (this one included).
 */
export interface QueueActivity {
  customers: ReadonlySet<string>;
  elsewhere: ReadonlyMap<string, number>;
  workers: number;
}

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
 * - Hard cap: no customer and no slow destination (host and port) holds more than `shareCap`
 *   (`concurrency - fairReserve`) of the slots.
 * - Shrinking share: a customer that is not moving holds at most `share()` =
 *   max(1, floor(shareCap / active customers)) here, and at most `workers × share()` on all workers
 *   together (what the others hold comes from `QueueActivity`, read every few hundred ms). Active:
 *   customers with due deliveries or attempts in flight on any worker, and those holding slots here.
 * - Reserve: an attempt that would leave fewer than `fairReserve` slots free starts only for a
 *   customer holding fewer than `reserveSlice()` (max(1, floor(fairReserve / active))) slots, or
 *   a moving one: a customer that arrives while others hold every slot outside the reserve
 *   (hanging attempts, 10 s each) still starts at once.
 * - Moving: an attempt of it ended fast (within FAST_ATTEMPT_MS of its start) in the last
 *   MOVING_MS, and, for a customer, each of its attempts here is neither stuck (in flight past
 *   FAST_ATTEMPT_MS) nor at a destination that is not moving. A healthy customer or destination
 *   frees its slots within milliseconds: it may go past the share (up to the hard cap) and into
 *   the reserve, so a healthy fan-out keeps every slot busy. A customer with an attempt at a
 *   destination not seen answering fast (a new or hanging one) is not moving, so one mixing fast
 *   endpoints with hanging ones on other hosts goes past its share by one attempt at most.
 * - Borrowed: an attempt started past its customer's share or slice only because the customer
 *   was moving. Hanging and fast paths on ONE host and port look alike until the hanging ones are
 *   stuck; a borrowed attempt that is stuck gives its slot back (`overflow`) and goes on outside
 *   `concurrency`, so what a customer borrowed keeps no slot from others past a second.
 * An attempt's share is held from `admit` to `release` (its outcome committed). With no reserve
 * (`fairReserve` 0) there is no share: fair scheduling is off.
 */
export class WorkerSlots {
  readonly concurrency: number;
  readonly shareCap: number;
  readonly fairReserve: number;
  /** Slots promised to claims in flight (the drain's, an outcome batch's, an emit's lease). */
  private reservedSlots = 0;
  /** The part of `reserved` promised to emits' leases (leaseForEmit): claims must leave it free. */
  private emitReservedSlots = 0;
  private readonly byCustomer = new Map<string, number>();
  private readonly byDestination = new Map<string, number>();
  private readonly heldBy = new Map<string, { customer: string; destination: string; since: number; borrowed: boolean }>();
  /** When an attempt of each customer and to each destination last ended fast (clock ms). */
  private readonly customerFastAt = new Map<string, number>();
  private readonly destinationFastAt = new Map<string, number>();
  /** How many of `heldBy` are borrowed (see `overflow`). */
  private borrowedHeld = 0;
  private activity: QueueActivity = { customers: new Set(), elsewhere: new Map(), workers: 1 };

  constructor(
    options: WorkerSlotsOptions,
    private readonly clock: Clock,
  ) {
    this.concurrency = options.concurrency;
    this.fairReserve = options.fairReserve;
    this.shareCap = options.concurrency - options.fairReserve;
  }

  get reserved(): number {
    return this.reservedSlots;
  }

  get emitReserved(): number {
    return this.emitReservedSlots;
  }

  /** What the worker last read of the queue as a whole (see QueueActivity). */
  setActivity(activity: QueueActivity): void {
    this.activity = activity;
  }

  /**
   * Slots neither taken by the `busy` attempts (sending or recording) nor promised to a claim in
   * flight. A borrowed attempt that is stuck has given its slot back (see `overflow`).
   */
  free(busy: number): number {
    return this.concurrency - (busy - this.overflow()) - this.reservedSlots;
  }

  /**
   * Borrowed attempts (started past their customer's share on the strength of its fast ends, see
   * Moving) that turned out stuck: in flight past FAST_ATTEMPT_MS. Each has given its slot back
   * and goes on outside `concurrency`, so what a customer only looked healthy enough to borrow
   * never keeps a slot from others past a second. At most `concurrency` of them: a worker holds
   * at most twice its concurrency in attempts. Its customer is not moving while one is stuck,
   * so it borrows no more until they end, and they still count against its share.
   */
  overflow(): number {
    if (this.borrowedHeld === 0) return 0;
    const now = this.clock.now().getTime();
    let n = 0;
    for (const h of this.heldBy.values()) if (h.borrowed && now - h.since > FAST_ATTEMPT_MS) n++;
    return Math.min(n, this.concurrency);
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
    return Math.min(batchSize, this.concurrency - (busy - this.overflow()) - this.emitReservedSlots, this.headroom);
  }

  /** How many of what a claim answered may start with `busy` attempts in flight: the rest goes back unstarted. */
  roomToStart(busy: number): number {
    return Math.max(0, this.concurrency - (busy - this.overflow()) - this.emitReservedSlots);
  }

  /** Customers active in the whole queue, as far as this worker knows (at least 1). */
  activeCustomers(): number {
    let n = this.activity.customers.size;
    for (const c of this.byCustomer.keys()) if (!this.activity.customers.has(c)) n++;
    return Math.max(1, n);
  }

  /** The shrinking share of a customer that is not moving: max(1, floor(shareCap / active customers)). */
  share(): number {
    return Math.max(1, Math.floor(this.shareCap / this.activeCustomers()));
  }

  /** Reserve slots one customer that is not moving may take: max(1, floor(fairReserve / active customers)). */
  reserveSlice(): number {
    return Math.max(1, Math.floor(this.fairReserve / this.activeCustomers()));
  }

  /**
   * How many more slots the busiest customer or slow destination may take under the hard cap: a
   * claim for no more than this never takes anyone past `shareCap`, without knowing whose rows it
   * will find (the shrinking share and the reserve are kept by `admit`, rows past them go back).
   */
  get headroom(): number {
    return this.shareCap - this.busiest(this.byCustomer, this.byDestination);
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
    return this.shareCap - this.busiest(customers, destinations);
  }

  private busiest(customers: ReadonlyMap<string, number>, destinations: ReadonlyMap<string, number>): number {
    let most = 0;
    for (const n of customers.values()) if (n > most) most = n;
    const now = this.clock.now().getTime();
    for (const [d, n] of destinations) if (n > most && !this.destinationMoving(d, now)) most = n;
    return most;
  }

  /** Customers a claim passes over: those `admit` would send back now (at their share, or at their slice of the reserve). */
  customersAtShare(): string[] {
    const at: string[] = [];
    const now = this.clock.now().getTime();
    const inUse = this.inUse();
    for (const customer of this.byCustomer.keys()) if (this.customerMayTake(customer, now, inUse) === undefined) at.push(customer);
    return at;
  }

  /** `customersAtShare` once the attempts `ids` (whose outcomes are being written) have given their shares back. */
  customersAtShareAfter(ids: readonly string[]): string[] {
    const less = new Map<string, number>();
    let total = 0;
    for (const id of ids) {
      const held = this.heldBy.get(id);
      if (!held) continue;
      less.set(held.customer, (less.get(held.customer) ?? 0) + 1);
      total++;
    }
    const at: string[] = [];
    const now = this.clock.now().getTime();
    const inUse = this.inUse() - total;
    for (const customer of this.byCustomer.keys()) if (this.customerMayTake(customer, now, inUse, less.get(customer) ?? 0) === undefined) at.push(customer);
    return at;
  }

  /**
   * Whether the claimed delivery `id` of `customer` to `destination` starts (then its share is
   * held until `release`) or goes back, and how (see Admission). A `takeover` (a delivery taken
   * over from a worker that died) is always held: its lost attempt is logged first.
   */
  admit(id: string, customer: string, destination: string, takeover = false): Admission {
    let borrowed = false;
    if (!takeover) {
      const now = this.clock.now().getTime();
      const may = this.customerMayTake(customer, now, this.inUse());
      if (may === undefined) return 'customer_at_share';
      if ((this.byDestination.get(destination) ?? 0) >= this.shareCap && !this.destinationMoving(destination, now)) return 'destination_busy';
      borrowed = may === 'borrowed';
    }
    this.hold(id, customer, destination, borrowed);
    return 'held';
  }

  /** Slots the held attempts take: all but the stuck borrowed ones (see `overflow`). */
  private inUse(): number {
    return this.heldBy.size - this.overflow();
  }

  /**
   * The rules of the class comment, for one more slot of `customer` with `inUse` slots taken
   * (`ending` of them its own, about to be given back): `own` within its share (and its slice of
   * the reserve), `borrowed` past them as a moving customer, undefined when it may not.
   */
  private customerMayTake(customer: string, now: number, inUse: number, ending = 0): 'own' | 'borrowed' | undefined {
    const held = (this.byCustomer.get(customer) ?? 0) - ending;
    if (held >= this.shareCap) return undefined;
    // No reserve: fair scheduling is off (one customer may take every slot).
    if (this.fairReserve === 0) return 'own';
    if (this.withinShare(customer, held, inUse)) return 'own';
    return this.customerMoving(customer, now) ? 'borrowed' : undefined;
  }

  private withinShare(customer: string, held: number, inUse: number): boolean {
    const share = this.share();
    if (held >= share) return false;
    const everywhere = Math.max(1, this.activity.workers) * share;
    if (held + (this.activity.elsewhere.get(customer) ?? 0) >= everywhere) return false;
    // The reserve: what would be left free after this one.
    return this.concurrency - inUse - 1 >= this.fairReserve || held < this.reserveSlice();
  }

  /**
   * Moving: an attempt of the customer ended fast within MOVING_MS, and each of its attempts in
   * flight is young (not stuck) and goes to a destination where an attempt ended fast within
   * MOVING_MS. An attempt to a destination not seen answering fast is not counted on: a customer
   * mixing fast endpoints with hanging ones is held to its share from its first hanging attempt.
   */
  private customerMoving(customer: string, now: number): boolean {
    const fastAt = this.customerFastAt.get(customer);
    if (fastAt === undefined || now - fastAt > MOVING_MS) return false;
    for (const h of this.heldBy.values()) {
      if (h.customer !== customer) continue;
      if (now - h.since > FAST_ATTEMPT_MS || !this.destinationMoving(h.destination, now)) return false;
    }
    return true;
  }

  private destinationMoving(destination: string, now: number): boolean {
    const fastAt = this.destinationFastAt.get(destination);
    return fastAt !== undefined && now - fastAt <= MOVING_MS;
  }

  /** Counts the slot of an attempt that starts against its customer's and destination's share. */
  hold(id: string, customer: string, destination: string, borrowed = false): void {
    this.heldBy.set(id, { customer, destination, since: this.clock.now().getTime(), borrowed });
    if (borrowed) this.borrowedHeld++;
    this.byCustomer.set(customer, (this.byCustomer.get(customer) ?? 0) + 1);
    this.byDestination.set(destination, (this.byDestination.get(destination) ?? 0) + 1);
  }

  /** Gives the share of attempt `id` back (its outcome committed, or it ended otherwise); nothing when it holds none. */
  release(id: string): void {
    const held = this.heldBy.get(id);
    if (!held) return;
    this.heldBy.delete(id);
    if (held.borrowed) this.borrowedHeld--;
    const now = this.clock.now().getTime();
    if (now - held.since <= FAST_ATTEMPT_MS) {
      this.customerFastAt.set(held.customer, now);
      this.destinationFastAt.set(held.destination, now);
    }
    const c = (this.byCustomer.get(held.customer) ?? 1) - 1;
    if (c > 0) this.byCustomer.set(held.customer, c);
    else this.byCustomer.delete(held.customer);
    const d = (this.byDestination.get(held.destination) ?? 1) - 1;
    if (d > 0) this.byDestination.set(held.destination, d);
    else this.byDestination.delete(held.destination);
    // Forgotten once stale, so the maps stay as small as what is in flight.
    for (const [k, at] of this.customerFastAt) if (now - at > MOVING_MS && !this.byCustomer.has(k)) this.customerFastAt.delete(k);
    for (const [k, at] of this.destinationFastAt) if (now - at > MOVING_MS && !this.byDestination.has(k)) this.destinationFastAt.delete(k);
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
