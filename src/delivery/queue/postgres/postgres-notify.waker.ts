import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../../database/data-source.token';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { pgPool } from '../../../database/data-source';
import { DELIVERY_OPTIONS, DeliveryModuleOptions, resolveDeliveryOptions } from '../../delivery.options';
import { InProcessWaker } from '../in-process.waker';

export const DELIVERY_NOTIFY_CHANNEL = 'trendhooks_deliveries';

/**
 * The NOTIFY that wakes every LISTENing worker, as an SQL expression: the outbox statement
 * carries it, so it costs no round trip and is heard only once the deliveries commit.
 */
export function notifyWorkersSql(): string {
  return `pg_notify('${DELIVERY_NOTIFY_CHANNEL}', '')`;
}

/**
 * PostgreSQL: LISTEN on a dedicated pooled connection, so a worker hears the fan-outs of every
 * process (see notifyWorkersSql); wake() still wakes this process's own listeners at once. A lost
 * connection is re-established after a poll interval; polling covers the gap.
 */
@Injectable()
export class PostgresNotifyWaker extends InProcessWaker {
  private readonly logger = new Logger('DeliveryWorker');
  private readonly retryMs: number;
  private running = false;
  private listener?: PoolClient;
  private relistenTimer?: NodeJS.Timeout;

  constructor(
    @InjectTrendhooksDataSource() private readonly ds: DataSource,
    @Inject(DELIVERY_OPTIONS) options: DeliveryModuleOptions,
  ) {
    super();
    this.retryMs = resolveDeliveryOptions(options).pollIntervalMs;
  }

  override async start(): Promise<void> {
    this.running = true;
    await this.listen();
  }

  private async listen(): Promise<void> {
    let client: PoolClient | undefined;
    try {
      client = await pgPool(this.ds).connect();
      const c = client;
      c.on('notification', () => this.wake());
      c.on('error', (err) => {
        if (this.listener !== c) return; // already handed back (shutdown or a failed LISTEN)
        this.logger.warn(`LISTEN connection lost (${err.message}); polling until it is back`);
        this.listener = undefined;
        c.release(true);
        this.relisten();
      });
      this.listener = c;
      await c.query(`LISTEN ${DELIVERY_NOTIFY_CHANNEL}`);
    } catch (err) {
      if (client && this.listener === client) {
        this.listener = undefined;
        client.release(true);
      }
      this.logger.warn(`LISTEN failed (${(err as Error).message}); polling until it is back`);
      // The database may still be down (a restart): try again, or the worker would poll for good.
      this.relisten();
    }
  }

  /** One LISTEN retry after a poll interval (the lost connection's 'error' and the failed LISTEN both ask for it). */
  private relisten(): void {
    if (!this.running || this.relistenTimer) return;
    this.relistenTimer = setTimeout(() => {
      this.relistenTimer = undefined;
      if (this.running) void this.listen();
    }, this.retryMs).unref();
  }

  /**
   * pg's pool.end() waits for the LISTEN client this releases: a worker calls it before TypeORM
   * closes its pool (a SIGTERMed worker hung there otherwise).
   */
  override async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.relistenTimer);
    const listener = this.listener;
    if (!listener) return;
    // Taken first, so the 'error' handler (which releases a lost connection) cannot release it too.
    this.listener = undefined;
    listener.removeAllListeners('notification');
    listener.removeAllListeners('error');
    listener.on('error', () => undefined); // the pool may still kill it; nothing to do then
    await listener.query(`UNLISTEN ${DELIVERY_NOTIFY_CHANNEL}`).catch(() => undefined);
    listener.release();
  }
}
