import { Injectable } from '@nestjs/common';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { StatementsPerHandle } from '../../database/data-source';
import { applyFailures } from '../lifecycle/disable-rule';
import { clockOf, ClockRow, failedAttempt } from './clock-row';
import { clockOfSql, DisabledWebhook, failureClockSets, WebhookDeliveryStatus, WebhookFailure, WebhookOutcome } from './webhook-delivery-status';

const CLOCK = clockOfSql('@status', '@errorClass');
const TOUCH = `UPDATE webhooks AS w SET last_delivery_at = @at, last_status = @status, last_response_code = @code,
        ${failureClockSets(CLOCK, '@at')}
      WHERE id = @id AND (last_delivery_at IS NULL OR last_delivery_at <= @at)`;

const CLOCKS = `SELECT id, customer_id, url, failing_since, failure_periods, last_failure_period FROM webhooks
      WHERE id IN (SELECT value FROM json_each(?)) AND disabled_at IS NULL`;
const COUNT = 'UPDATE webhooks SET failure_periods = ?, last_failure_period = ?, disabled_at = ?, disabled_reason = ? WHERE id = ?';

function prepare(db: Database) {
  return { db, touch: db.prepare(TOUCH), clocks: db.prepare(CLOCKS), count: db.prepare(COUNT) };
}

/** SQLite: one guarded UPDATE per outcome, oldest first, synchronously (see recordLatest). */
@Injectable()
export class SqliteWebhookDeliveryStatus extends WebhookDeliveryStatus {
  /** Prepared once per connection, like the queue's (see StatementsPerHandle). */
  private readonly statements: StatementsPerHandle<ReturnType<typeof prepare>>;

  constructor(@InjectTrendhooksDataSource() ds: DataSource) {
    super();
    this.statements = new StatementsPerHandle(ds, prepare);
  }

  private get sq(): ReturnType<typeof prepare> {
    return this.statements.get();
  }

  recordLatest(outcomes: WebhookOutcome[]): Promise<void> {
    const { touch } = this.sq;
    // Oldest first (stable), as if written one by one: with equal start times the later outcome wins.
    const order = [...outcomes].sort((a, b) => a.at.getTime() - b.at.getTime());
    for (const o of order) touch.run({ at: o.at.getTime(), status: o.status, code: o.responseCode, errorClass: o.errorClass ?? null, id: o.webhookId });
    return Promise.resolve();
  }

  /**
   * One synchronous transaction: read, decide, write. IMMEDIATE, as every SQLite write transaction
   * here: begun DEFERRED, its read would fail the write at once whenever another process (the API)
   * wrote in between (SQLITE_BUSY_SNAPSHOT), and the failure would go uncounted.
   */
  recordFailures(failures: WebhookFailure[], afterMs: number | null, now: Date): Promise<DisabledWebhook[]> {
    if (failures.length === 0) return Promise.resolve([]);
    const { db, clocks, count } = this.sq;
    const ids = [...new Set(failures.map((f) => f.webhookId))];
    return Promise.resolve(
      db.transaction(() => {
        const rows = clocks.all(JSON.stringify(ids)) as ClockRow[];
        const out: DisabledWebhook[] = [];
        for (const d of applyFailures(rows.map(clockOf), failures.map(failedAttempt), afterMs)) {
          count.run(d.clock.failurePeriods, d.clock.lastFailurePeriod, d.disable ? now.getTime() : null, d.disable, d.row.id);
          if (d.disable) out.push({ id: d.row.id, customerId: d.row.customerId, url: d.row.url, reason: d.disable as DisabledWebhook['reason'], disabledAt: now });
        }
        return out;
      }).immediate(),
    );
  }
}
