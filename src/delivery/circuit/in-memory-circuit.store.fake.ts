import type { CircuitRow } from './circuit-policy';
import type { KeyedCircuit } from './destination-circuit.store';

/** DestinationCircuitStore's contract in memory (unit specs): the same compare-and-set. */
export class InMemoryCircuitStore {
  readonly rows = new Map<string, KeyedCircuit>();
  writes = 0;

  private static key(customerId: string, destination: string): string {
    return `${customerId}\n${destination}`;
  }

  async all(): Promise<KeyedCircuit[]> {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  async find(customerId: string, destination: string): Promise<KeyedCircuit | null> {
    const r = this.rows.get(InMemoryCircuitStore.key(customerId, destination));
    return r ? { ...r } : null;
  }

  async forCustomer(customerId: string, destinations: string[]): Promise<Map<string, CircuitRow>> {
    const out = new Map<string, CircuitRow>();
    for (const d of destinations) {
      const r = this.rows.get(InMemoryCircuitStore.key(customerId, d));
      if (r) out.set(d, { ...r });
    }
    return out;
  }

  async replace(customerId: string, destination: string, before: CircuitRow | null, after: CircuitRow | null): Promise<boolean> {
    const key = InMemoryCircuitStore.key(customerId, destination);
    const cur = this.rows.get(key) ?? null;
    const same =
      cur === null || before === null
        ? cur === before
        : cur.state === before.state && cur.consecutiveFailures === before.consecutiveFailures && cur.openCount === before.openCount && cur.updatedAt.getTime() === before.updatedAt.getTime();
    if (!same) return false;
    this.writes++;
    if (after === null) this.rows.delete(key);
    else this.rows.set(key, { ...after, customerId, destination });
    return true;
  }
}
