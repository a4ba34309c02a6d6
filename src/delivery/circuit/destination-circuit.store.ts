import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import type { CircuitRow } from './circuit-policy';
import { DestinationCircuitEntity } from './destination-circuit.entity';

/** A circuit row with its key. */
export interface KeyedCircuit extends CircuitRow {
  customerId: string;
  destination: string;
}

/**
 * The one owner of `destination_circuits`. Every change is a compare-and-set against the row as
 * the writer last saw it, so workers in several processes never overwrite each other's
 * transitions: a writer that loses reads the row again and decides again. The statements are
 * plain SQL both databases run the same way (through TypeORM's query builder).
 */
@Injectable()
export class DestinationCircuitStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  private get repo() {
    return this.ds.getRepository(DestinationCircuitEntity);
  }

  /** Every row (a worker's cache): only destinations that failed since they last answered have one. */
  async all(): Promise<KeyedCircuit[]> {
    return (await this.repo.find()).map(keyed);
  }

  async find(customerId: string, destination: string): Promise<KeyedCircuit | null> {
    const row = await this.repo.findOneBy({ customerId, destination });
    return row && keyed(row);
  }

  /** The customer's circuits for these destinations (the webhook resource); absent ones are closed. */
  async forCustomer(customerId: string, destinations: string[]): Promise<Map<string, CircuitRow>> {
    const unique = [...new Set(destinations)];
    const out = new Map<string, CircuitRow>();
    if (unique.length === 0) return out;
    for (const row of await this.repo.findBy({ customerId, destination: In(unique) })) out.set(row.destination, keyed(row));
    return out;
  }

  /**
   * Moves the circuit from `before` (null: no row) to `after` (null: closed, no row), only if the
   * stored row is still `before`. False when another writer got there first.
   */
  async replace(customerId: string, destination: string, before: CircuitRow | null, after: CircuitRow | null): Promise<boolean> {
    if (before === null) {
      if (after === null) return true;
      try {
        await this.repo.insert({ customerId, destination, ...after });
        return true;
      } catch (err) {
        // Another writer inserted it first (primary key): that one wins; anything else is an error.
        if (await this.repo.existsBy({ customerId, destination })) return false;
        throw err;
      }
    }
    const where =
      'customer_id = :customerId AND destination = :destination AND state = :state AND consecutive_failures = :failures AND open_count = :openCount AND updated_at = :updatedAt';
    const params = { customerId, destination, state: before.state, failures: before.consecutiveFailures, openCount: before.openCount, updatedAt: before.updatedAt.getTime() };
    const qb = this.ds.createQueryBuilder();
    const res =
      after === null
        ? await qb.delete().from(DestinationCircuitEntity).where(where, params).execute()
        : await qb.update(DestinationCircuitEntity).set(after).where(where, params).execute();
    return (res.affected ?? 0) > 0;
  }
}

function keyed(r: DestinationCircuitEntity): KeyedCircuit {
  return {
    customerId: r.customerId,
    destination: r.destination,
    state: r.state,
    consecutiveFailures: Number(r.consecutiveFailures),
    openedUntil: r.openedUntil,
    openCount: Number(r.openCount),
    updatedAt: r.updatedAt,
  };
}
