import { DESTINATION_MOVING_MS, WorkerSlots } from './worker-slots';

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
    expect(s.admit('b_1', 'cus_b', 'b.test:443')).toBe('held');
    expect(s.admit('b_2', 'cus_b', 'b.test:443')).toBe('held');
  });

  it('caps one destination at the share, whoever its customers', () => {
    const s = slots();
    holdMany(s, 3, 'cus_a', () => 'shared.test:443');
    holdMany(s, 3, 'cus_c', () => 'shared.test:443');
    expect(s.heldAtDestination('shared.test:443')).toBe(6);
    expect(s.customersAtShare()).toEqual([]);
    nowMs += 1;
    expect(s.admit('d_1', 'cus_d', 'shared.test:443')).toBe('destination_busy');
    expect(s.admit('d_2', 'cus_d', 'other.test:443')).toBe('held');
  });

  it('tells a moving destination (an attempt there ended within DESTINATION_MOVING_MS) from a slow one', () => {
    const s = slots();
    holdMany(s, 6, 'cus_a', () => 'shared.test:443');
    // One ends and another takes its slot: the destination is at its share but moving.
    s.release('cus_a_0');
    expect(s.admit('cus_a_6', 'cus_a', 'shared.test:443')).toBe('held');
    expect(s.admit('c_1', 'cus_c', 'shared.test:443')).toBe('destination_moving');
    nowMs += DESTINATION_MOVING_MS;
    expect(s.admit('c_1', 'cus_c', 'shared.test:443')).toBe('destination_moving');
    nowMs += 1;
    expect(s.admit('c_1', 'cus_c', 'shared.test:443')).toBe('destination_busy');
  });

  it('forgets when a destination last ended once it holds no slot', () => {
    const s = slots();
    holdMany(s, 1, 'cus_a', () => 'shared.test:443');
    s.release('cus_a_0');
    holdMany(s, 6, 'cus_b', () => 'shared.test:443');
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
    holdMany(s, 2, 'cus_a', () => 'a.test:443');
    holdMany(s, 4, 'cus_b', (i) => `b${i}.test:443`);
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

  it('with no reserve, one customer may take every slot', () => {
    const s = new WorkerSlots({ concurrency: 1, fairReserve: 0 }, clock);
    expect(s.admit('a', 'cus_a', 'a.test:443')).toBe('held');
    expect(s.admit('b', 'cus_a', 'b.test:443')).toBe('customer_at_share');
  });
});
