import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations, schemaDrift, sqliteHandle } from '../../src/database/data-source';
import { trendhooksMigrations } from '../../src/database/features';
import { CLAIM, CLAIM_PENDING } from '../../src/delivery/queue/sqlite/sql/claim';
import { FAN_OUT_AT } from '../../src/delivery/queue/sqlite/sql/fan-out-state';
import { eventsPageSql } from '../../src/delivery/queue/postgres/sql/events-page';
import { eventsOfSubscriptionSql } from '../../src/delivery/queue/sqlite/sql/recover';
import { deliveryPageQuery, HEALTH_SQL, subscriptionEventsQuery } from '../../src/delivery/queue/typeorm-delivery-queue';
import { TRENDHOOKS_ENTITIES, trendhooksEntities } from '../../src/entities';
import { testDatabases, type TestDatabase } from '../support/databases';

/**
 * The indexes on `deliveries` each database gets from either series of migrations. Every index is
 * written on each insert and (on PostgreSQL, where claim and outcome updates are never HOT) on each
 * update, so each must earn its place: the primary key (which alone keeps an event from reaching a
 * webhook twice, its id being derived from the two), claims by due time, a webhook's delivery log;
 * on SQLite also a replay's lookup by event (FAN_OUT_AT). The entity declares that last one
 * `synchronize: false`, so the drift check cannot see it: this suite does.
 */
const EXPECTED = {
  postgres: ['idx_deliveries_due (state, next_attempt_at)', 'idx_deliveries_webhook_created (webhook_id, created_at, id)', 'primary key (id)'],
  sqlite: ['idx_deliveries_due (state, next_attempt_at)', 'idx_deliveries_event (event_id)', 'idx_deliveries_webhook_created (webhook_id, created_at, id)', 'primary key (id)'],
};

async function deliveryIndexes(ds: DataSource): Promise<string[]> {
  if (ds.options.type === 'postgres') {
    const rows: { name: string; pk: boolean; cols: string }[] = await ds.query(
      `SELECT c.relname AS name, i.indisprimary AS pk, string_agg(a.attname, ', ' ORDER BY k.n) AS cols
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = 'deliveries'::regclass GROUP BY c.relname, i.indisprimary`,
    );
    return rows.map((r) => `${r.pk ? 'primary key' : r.name} (${r.cols})`).sort();
  }
  const list: { name: string; origin: string }[] = await ds.query(`PRAGMA index_list("deliveries")`);
  const out: string[] = [];
  for (const ix of list) {
    const cols = (await ds.query(`PRAGMA index_info("${ix.name}")`)).map((c: { name: string }) => c.name).join(', ');
    out.push(`${ix.origin === 'pk' ? 'primary key' : ix.name} (${cols})`);
  }
  return out.sort();
}

describe.each(testDatabases())('indexes on deliveries on %s', (name, makeDb) => {
  const made: TestDatabase[] = [];
  const open: DataSource[] = [];
  afterAll(async () => {
    for (const ds of open) if (ds.isInitialized) await ds.destroy();
    for (const db of made) await db.drop();
  });

  async function migrated(series: 'standalone' | 'host'): Promise<DataSource> {
    const db = makeDb();
    made.push(db);
    const config = await db.create();
    const base = dataSourceOptions(config, series === 'standalone' ? TRENDHOOKS_ENTITIES : trendhooksEntities({}));
    const ds = new DataSource(series === 'standalone' ? base : ({ ...base, migrations: trendhooksMigrations(config.type, {}), migrationsTableName: 'host_migrations' } as typeof base));
    open.push(ds);
    await ds.initialize();
    await runMigrations(ds);
    return ds;
  }

  it.each(['standalone', 'host'] as const)('the %s series builds only the indexes its queries read, no unique index on (event_id, webhook_id)', async (series) => {
    const ds = await migrated(series);
    expect(await deliveryIndexes(ds)).toEqual(EXPECTED[name as keyof typeof EXPECTED]);
    expect(await schemaDrift(ds)).toEqual({ up: [], down: [] });
  });

  /** The plan of `sql`, one line per step; PostgreSQL is told to avoid sequential scans, which it rightly prefers on empty tables. */
  async function planOf(ds: DataSource, sql: string, params: unknown[]): Promise<string> {
    if (ds.options.type === 'postgres') {
      return ds.transaction(async (m) => {
        await m.query('SET LOCAL enable_seqscan = off');
        const rows: { 'QUERY PLAN': string }[] = await m.query(`EXPLAIN ${sql}`, params);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    }
    const rows: { detail: string }[] = await ds.query(`EXPLAIN QUERY PLAN ${sql}`, params);
    return rows.map((r) => r.detail).join('\n');
  }

  it("the delivery log filtered by state and time, past a cursor, is one range scan of idx_deliveries_webhook_created", async () => {
    const ds = await migrated('standalone');
    const filter = { state: 'failed' as const, since: new Date(1_000), until: new Date(9_000) };
    const [sql, params] = deliveryPageQuery(ds, '01J9Z6K3W4Q8X2V7N5M1B0C9D8', { limit: 25, after: [5_000, 'msg_x'] }, filter).getQueryAndParameters();
    const plan = await planOf(ds, sql, params);
    if (name === 'postgres') {
      expect(plan).toMatch(/Index Scan( Backward)? using idx_deliveries_webhook_created on deliveries/);
      expect(plan).toMatch(/Index Cond: \(\(\(webhook_id\)::text = .*created_at >= .*created_at < .*created_at <= /s);
      expect(plan).not.toMatch(/Sort/);
    } else {
      expect(plan).toMatch(/SEARCH d USING INDEX idx_deliveries_webhook_created \(webhook_id=\? AND created_at>\? AND created_at<\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("a page's health figures read the deliveries through idx_deliveries_webhook_created and their attempts through idx_attempts_delivery", async () => {
    const ds = await migrated('standalone');
    const [sql, params] = ds.driver.escapeQueryWithParameters(HEALTH_SQL, { ids: ['01J9Z6K3W4Q8X2V7N5M1B0C9D8', '01J9Z6K3W4Q8X2V7N5M1B0C9D9'], since: 1_000 });
    const plan = await planOf(ds, sql, params);
    if (name === 'postgres') {
      expect(plan).toMatch(/idx_deliveries_webhook_created/);
      expect(plan).toMatch(/Index Cond: \(\(webhook_id = ANY .*created_at >= /s);
      expect(plan).toMatch(/idx_attempts_delivery/);
    } else {
      const steps = plan.split('\n');
      // Once: the CTE is materialized, not inlined into both of its readers.
      expect(steps.filter((l) => /^SEARCH d USING (COVERING )?INDEX idx_deliveries_webhook_created \(webhook_id=\? AND created_at>\?\)$/.test(l))).toHaveLength(1);
      expect(steps.filter((l) => /^SEARCH a USING INDEX idx_attempts_delivery \(delivery_id=\?\)$/.test(l))).toHaveLength(1);
    }
    expect(plan).not.toMatch(/SCAN d\b|SCAN a\b|Seq Scan/);
  });

  it("recover's walk of a subscription's events, past a position, is one range scan of idx_events_type_subreddit_created", async () => {
    const ds = await migrated('standalone');
    const scope = { webhookId: '01J9Z6K3W4Q8X2V7N5M1B0C9D8', customerId: 'cus_x', type: 'trends.surge', subreddit: 'rust', subscribedAt: new Date(0), since: new Date(1_000), until: new Date(9_000) };
    const [sql, params] = subscriptionEventsQuery(ds, scope, [5_000, 'evt_x'], 501).getQueryAndParameters();
    const plan = await planOf(ds, sql, params);
    if (name === 'postgres') {
      expect(plan).toMatch(/Index (Only )?Scan using idx_events_type_subreddit_created on events/);
      expect(plan).toMatch(/Index Cond: .*created_at >= .*created_at < .*created_at >= /s);
      expect(plan).not.toMatch(/Sort/);
    } else {
      expect(plan).toMatch(/SEARCH e USING COVERING INDEX idx_events_type_subreddit_created \(type=\? AND subreddit=\? AND created_at>\? AND created_at<\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  it.each([
    ['first', null],
    ['after', '<'],
    ['before', '>'],
  ] as const)("an events history page (%s) reads each subscription as one range of idx_events_type_subreddit_created, at most a page deep", async (_n, op) => {
    const ds = await migrated('standalone');
    const dir = op === '>' ? 'ASC' : 'DESC';
    if (name === 'postgres') {
      const bound = op ? `e.created_at ${op}= $4::bigint AND (e.created_at ${op} $4::bigint OR (e.created_at = $4::bigint AND e.id ${op} $5::varchar))` : '';
      const params: unknown[] = [['trends.surge', 'trends.rising'], ['rust', 'go'], [0, 0], ...(op ? [5_000, 'evt_x'] : [])];
      params.push(26);
      const plan = await planOf(ds, eventsPageSql(bound, dir, `$${params.length}::int`), params);
      expect(plan).toMatch(/Index Scan( Backward)? using idx_events_type_subreddit_created on events e/);
      // Only the merge of the subscriptions' rows (a page each) is sorted, above the per-subscription Limit.
      expect(plan.split('\n').filter((l) => /Sort Key/.test(l))).toHaveLength(1);
      expect(plan).toMatch(/^Limit[\s\S]*Sort[\s\S]*Nested Loop[\s\S]*Function Scan on (unnest )?s\b[\s\S]*Limit[\s\S]*Index Scan( Backward)? using idx_events_type_subreddit_created/);
    } else {
      const params: unknown[] = ['trends.surge', 'rust', 0, ...(op ? [5_000, 5_000, 5_000, 'evt_x'] : []), 26];
      const plan = await planOf(ds, eventsOfSubscriptionSql(op, dir), params);
      expect(plan).toMatch(/SEARCH events USING INDEX idx_events_type_subreddit_created \(type=\? AND subreddit=\? AND created_at>\?( AND created_at<\?)?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  if (name === 'sqlite') {
    it('a replay finds when its event’s fan-out started through idx_deliveries_event, not a scan', async () => {
      const ds = await migrated('standalone');
      const plan: { detail: string }[] = await ds.query(`EXPLAIN QUERY PLAN ${FAN_OUT_AT}`, ['evt_x']);
      expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING INDEX idx_deliveries_event \(event_id=\?\)/);
    });

    it.each([
      ['CLAIM_PENDING', CLAIM_PENDING],
      ['CLAIM', CLAIM],
    ])('%s picks due rows from idx_deliveries_due alone and updates them by rowid, not through the id index', async (_n, sql) => {
      const ds = await migrated('standalone');
      const plan = sqliteHandle(ds).prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ owner: 'w', leaseUntil: 2, now: 1, limit: 10 }) as { detail: string }[];
      const detail = plan.map((p) => p.detail).join('\n');
      expect(detail).toMatch(/SEARCH deliveries USING COVERING INDEX idx_deliveries_due \(state=\? AND next_attempt_at<\?\)/);
      expect(detail).not.toMatch(/USING INDEX idx_deliveries_due/);
      expect(detail).toMatch(/SEARCH deliveries USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(detail).not.toMatch(/sqlite_autoindex_deliveries/);
    });
  }
});
