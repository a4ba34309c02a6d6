import { FAST_ATTEMPT_MS, MOVING_MS, WorkerSlots } from './worker-slots';

describe('WorkerSlots', () => {
  let nowMs: number;
  const clock = { now: () => new Date(nowMs) };
  beforeEach(() => (nowMs = Date.parse('2026-01-01T00:00:00Z')));
  /** 8 slots, 2 of them the reserve: a share is 6. */
  const slots = () => new WorkerSlots({ concurrency: 8, fairReserve: 2 }, clock);
  const holdMany = (s: WorkerSlots, n: number, customer: string, destination: (i: number) => string, prefix = customer) => {
    for (let i = 0; i < n; i++) expect(s.admit(`${prefix}_${i}`, customer, destination(i))).toBe('held');
  };

  it('leaves the reserve to others: a customer at its share is refused, another customer is not', () => {
    const s = slots();
    expect(s.shareCap).toBe(6);
    holdMany(s, 6, 'cus_a', (i) => `a${i}.test:443`);
    expect(s.admit('a_7', 'cus_a', 'a7.test:443')).toBe('customer_at_share');
    expect(s.heldByCustomer('cus_a')).toBe(6);
    expect(s.customersAtShare()).toEqual(['cus_a']);
    // B may take its slice of the reserve (2 slots / 2 customers): one, the other stays for whoever comes next.
    expect(s.admit('b_1', 'cus_b', 'b.test:443')).toBe('held');
    expect(s.admit('b_2', 'cus_b', 'b.test:443')).toBe('customer_at_share');
    expect(s.admit('c_1', 'cus_c', 'c.test:443')).toBe('held');
  });

  it('caps one destination at the share, whoever its customers', () => {
    const s = slots();
    holdMany(s, 3, 'cus_a', () => 'shared.test:443');
    holdMany(s, 3, 'cus_c', () => 'shared.test:443');
    expect(s.heldAtDestination('shared.test:443')).toBe(6);
    // Two customers: a share of 3 each.
    expect(s.customersAtShare()).toEqual(['cus_a', 'cus_c']);
    nowMs += 1;
    expect(s.admit('d_1', 'cus_d', 'shared.test:443')).toBe('destination_busy');
    expect(s.admit('d_2', 'cus_d', 'other.test:443')).toBe('held');
  });

  it('does not cap a moving destination (an attempt there ended fast within MOVING_MS): a healthy single-destination fan-out keeps every slot', () => {
    const s = slots();
    holdMany(s, 6, 'cus_a', () => 'shared.test:443');
    // One ends fast and another takes its slot: the destination is at its share but moving.
    s.release('cus_a_0');
    expect(s.admit('cus_a_6', 'cus_a', 'shared.test:443')).toBe('held');
    expect(s.admit('c_1', 'cus_c', 'shared.test:443')).toBe('held');
    expect(s.headroom).toBe(0); // cus_a holds 6, the hard cap; the destination does not count
    nowMs += MOVING_MS + 1;
    expect(s.admit('d_1', 'cus_d', 'shared.test:443')).toBe('destination_busy');
  });

  it('does not count an attempt that ended after FAST_ATTEMPT_MS (a timeout) as moving', () => {
    const s = slots();
    holdMany(s, 6, 'cus_a', () => 'shared.test:443');
    nowMs += FAST_ATTEMPT_MS + 1;
    s.release('cus_a_0');
    expect(s.admit('cus_a_6', 'cus_a', 'shared.test:443')).toBe('held');
    expect(s.admit('c_1', 'cus_c', 'shared.test:443')).toBe('destination_busy');
  });

  it('always holds a takeover, past any share', () => {
    const s = slots();
    holdMany(s, 6, 'cus_a', () => 'shared.test:443');
    expect(s.admit('lost_1', 'cus_a', 'shared.test:443', true)).toBe('held');
    expect(s.heldByCustomer('cus_a')).toBe(7);
    expect(s.headroom).toBe(-1);
  });

  it('gives the share back on release, once, and ignores what it never held', () => {
    const s = slots();
    holdMany(s, 6, 'cus_a', () => 'shared.test:443');
    expect(s.admit('x', 'cus_a', 'shared.test:443')).toBe('customer_at_share');
    s.release('x'); // refused: holds nothing
    expect(s.heldByCustomer('cus_a')).toBe(6);
    s.release('cus_a_0');
    s.release('cus_a_0');
    expect(s.heldByCustomer('cus_a')).toBe(5);
    expect(s.heldAtDestination('shared.test:443')).toBe(5);
    expect(s.admit('cus_a_9', 'cus_a', 'shared.test:443')).toBe('held');
    for (let i = 1; i < 6; i++) s.release(`cus_a_${i}`);
    s.release('cus_a_9');
    expect(s.heldByCustomer('cus_a')).toBe(0);
    expect(s.heldAtDestination('shared.test:443')).toBe(0);
    expect(s.headroom).toBe(6);
  });

  it('claims no more than the busiest customer or destination may still take (headroom)', () => {
    const s = slots();
    expect(s.headroom).toBe(6);
    for (let i = 0; i < 2; i++) s.hold(`cus_a_${i}`, 'cus_a', 'a.test:443');
    for (let i = 0; i < 4; i++) s.hold(`cus_b_${i}`, 'cus_b', `b${i}.test:443`);
    expect(s.headroom).toBe(2);
    // Once these attempts' outcomes are written, their shares are back.
    expect(s.headroomAfter(['cus_b_0', 'cus_b_1'])).toBe(4);
    expect(s.headroomAfter(['cus_b_0', 'unknown'])).toBe(3);
    expect(s.headroomAfter([])).toBe(2);
    expect(s.headroom).toBe(2); // headroomAfter changes nothing
  });

  it('counts free slots from the attempts in flight and the reservations of claims in flight', () => {
    const s = slots();
    expect(s.free(0)).toBe(8);
    s.reserve(3);
    expect(s.free(2)).toBe(3);
    s.unreserve(3);
    expect(s.free(2)).toBe(6);
    expect(s.reserved).toBe(0);
  });

  it('keeps what emits leased free of claims, and bounds their leases by the batch and the headroom', () => {
    const s = slots();
    expect(s.emitLimit(0, 64)).toBe(6); // the headroom of an idle worker
    expect(s.emitLimit(0, 4)).toBe(4);
    s.reserve(4, true);
    expect(s.reserved).toBe(4);
    expect(s.emitReserved).toBe(4);
    expect(s.emitLimit(2, 64)).toBe(2);
    // A claim's answer starts within the slots not in flight and not leased to emits.
    expect(s.roomToStart(2)).toBe(2);
    expect(s.roomToStart(6)).toBe(0);
    s.unreserve(4, true);
    expect(s.emitReserved).toBe(0);
    expect(s.roomToStart(6)).toBe(2);
    holdMany(s, 6, 'cus_a', () => 'a.test:443');
    expect(s.emitLimit(6, 64)).toBe(0);
  });

  describe('the shrinking share (64 slots, a reserve of 8: shareCap 56)', () => {
    const big = () => new WorkerSlots({ concurrency: 64, fairReserve: 8 }, clock);
    const hang = (s: WorkerSlots, customer: string, max: number) => {
      let n = 0;
      while (n < max && s.admit(`${customer}_${n}`, customer, `${customer}_${n}.test:443`) === 'held') n++;
      return n;
    };

    it('leaves slots for a third customer when two customers\' attempts hang: neither takes what the other leaves', () => {
      const s = big();
      // A arrives alone: its share is the hard cap.
      expect(hang(s, 'cus_a', 100)).toBe(56);
      // B arrives: two customers, a share of 28, but A's 56 leave only the reserve, of which B
      // takes its slice (8 / 2 customers).
      expect(hang(s, 'cus_b', 100)).toBe(4);
      expect(s.customersAtShare().sort()).toEqual(['cus_a', 'cus_b']);
      // The third customer still starts at once.
      expect(s.admit('v_0', 'cus_v', 'v.test:443')).toBe('held');
      expect(s.admit('v_1', 'cus_v', 'v.test:443')).toBe('held');
    });

    it('shrinks the share with the customers active in the whole queue, and counts what other workers hold', () => {
      const s = big();
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_c', 'cus_d']), elsewhere: new Map([['cus_b', 10]]), workers: 2 });
      expect(s.share()).toBe(14);
      expect(hang(s, 'cus_a', 100)).toBe(14);
      // B already holds 10 on the other worker: 2 × 14 in all, so 18 here... but at most 14 here.
      expect(hang(s, 'cus_b', 100)).toBe(14);
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_c', 'cus_d']), elsewhere: new Map([['cus_c', 20]]), workers: 2 });
      expect(hang(s, 'cus_c', 100)).toBe(8); // 28 in all, 20 of them elsewhere
      // Customers seen only here count too: E makes five.
      expect(s.admit('e_0', 'cus_e', 'e.test:443')).toBe('held');
      expect(s.share()).toBe(11);
    });

    /** Admits `customer`'s attempts to `destination` until one is refused; how many were held. */
    const send = (s: WorkerSlots, customer: string, destination: string, max: number, prefix = customer) => {
      let n = 0;
      while (n < max && s.admit(`${prefix}_${n}`, customer, destination) === 'held') n++;
      return n;
    };

    it('lets a moving customer (fast ends, every attempt at a destination answering fast) past its share and into the reserve, up to the hard cap', () => {
      const s = big();
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_c', 'cus_d']), elsewhere: new Map(), workers: 1 });
      expect(send(s, 'cus_b', 'b.test:443', 6)).toBe(6);
      expect(send(s, 'cus_a', 'a.test:443', 100)).toBe(14);
      s.release('cus_a_0'); // ended fast
      expect(send(s, 'cus_a', 'a.test:443', 100, 'more')).toBe(56 - 13);
      expect(s.heldByCustomer('cus_a')).toBe(56);
      // Once one of its attempts is stuck past FAST_ATTEMPT_MS it is held to its share again.
      s.release('more_0');
      nowMs += FAST_ATTEMPT_MS + 1;
      s.release('cus_a_1');
      expect(s.admit('again', 'cus_a', 'a.test:443')).toBe('customer_at_share');
    });

    it('holds a customer mixing fast endpoints with hanging ones to its share: an attempt at a destination not seen answering fast is not counted on', () => {
      const s = big();
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_c', 'cus_d']), elsewhere: new Map(), workers: 1 });
      expect(send(s, 'cus_a', 'fast.test:443', 10)).toBe(10);
      s.release('cus_a_0'); // the fast endpoint answers
      s.release('cus_a_1');
      // Moving, but its attempts at new destinations (which hang) are held to its share of 14.
      expect(hang(s, 'cus_a', 100)).toBe(6);
      expect(s.heldByCustomer('cus_a')).toBe(14);
      nowMs += 1;
      s.release('cus_a_2');
      expect(s.admit('fast_again', 'cus_a', 'fast.test:443')).toBe('held');
      expect(s.admit('fast_more', 'cus_a', 'fast.test:443')).toBe('customer_at_share');
    });

    it('gives back the slots of borrowed attempts that get stuck: two customers mixing fast and hanging paths on one host keep no slot from a third past a second', () => {
      const s = big();
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_v']), elsewhere: new Map(), workers: 1 });
      expect(send(s, 'cus_a', 'a.test:443', 1)).toBe(1);
      expect(send(s, 'cus_b', 'b.test:443', 1)).toBe(1);
      s.release('cus_a_0');
      s.release('cus_b_0');
      // Hanging paths on a host that answered fast look alike until they are stuck: A takes its
      // share (56 / 3 customers) and borrows up to the hard cap, B the reserve (the 8 slots the
      // worker has left free).
      expect(send(s, 'cus_a', 'a.test:443', 100, 'a')).toBe(56);
      expect(send(s, 'cus_b', 'b.test:443', 8, 'b')).toBe(8);
      expect(s.free(64)).toBe(0);
      expect(s.overflow()).toBe(0);
      nowMs += FAST_ATTEMPT_MS + 1;
      // Stuck: what each borrowed past its share (A 56 - 18, B 8 - 2, its slice of the reserve
      // counting as its own) is given back; both are held to their shares, and V starts.
      expect(s.overflow()).toBe(38 + 6);
      expect(s.free(64)).toBe(38 + 6);
      expect(s.admit('a_more', 'cus_a', 'a.test:443')).toBe('customer_at_share');
      expect(send(s, 'cus_b', 'b.test:443', 100, 'b_more')).toBe(18 - 8);
      expect(send(s, 'cus_v', 'v.test:443', 100)).toBe(18);
      expect(s.heldByCustomer('cus_a')).toBe(56);
    });

    it('gives back no more than `concurrency` slots of stuck borrowed attempts', () => {
      const s = new WorkerSlots({ concurrency: 4, fairReserve: 1 }, clock);
      s.setActivity({ customers: new Set(['cus_a', 'cus_b', 'cus_c', 'cus_d']), elsewhere: new Map(), workers: 1 });
      for (const c of ['cus_a', 'cus_b', 'cus_c']) {
        expect(send(s, c, `${c}.test:443`, 1, `${c}_first`)).toBe(1);
        s.release(`${c}_first_0`);
        expect(send(s, c, `${c}.test:443`, 3)).toBe(3); // the hard cap: 4 - 1
      }
      nowMs += FAST_ATTEMPT_MS + 1;
      expect(s.overflow()).toBe(4);
    });
  });

  it('with no reserve, one customer may take every slot', () => {
    const s = new WorkerSlots({ concurrency: 1, fairReserve: 0 }, clock);
    expect(s.admit('a', 'cus_a', 'a.test:443')).toBe('held');
    expect(s.admit('b', 'cus_a', 'b.test:443')).toBe('customer_at_share');
  });
});
