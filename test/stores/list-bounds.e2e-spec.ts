import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations, sqliteHandle } from '../../src/database/data-source';
import { eventsPageSql } from '../../src/delivery/queue/postgres/sql/events-page';
import { PG_HEALTH_SQL } from '../../src/delivery/queue/postgres/sql/health';
import { eventsOfSubscriptionSql } from '../../src/delivery/queue/sqlite/sql/recover';
import { sqliteDeliveryPageQuery } from '../../src/delivery/queue/sqlite/delivery-page';
import { HEALTH_RECENT_DELIVERIES, healthParams, healthSql } from '../../src/delivery/queue/health-sql';
import { deliveryPageQuery } from '../../src/delivery/queue/typeorm-delivery-queue';
import { TRENDHOOKS_ENTITIES } from '../../src/entities';
import { testDatabases, type TestDatabase } from '../support/databases';

/**
 * The list routes whose data a customer makes (docs/security.md, "Cheap calls stay cheap"): on a
 * database holding one customer's ROWS deliveries of one webhook (1 in 100 failed, the oldest) and
 * ROWS test events newer than its trend events, each route's statement reads a bounded range:
 * the plan names the index, and on PostgreSQL (statistics from ANALYZE, as autovacuum keeps them;
 * no planner switch turned off) EXPLAIN ANALYZE counts the rows actually read. SQLite is planned
 * as the app runs it, without ANALYZE.
 */
const ROWS = 6_000;
const W = '01JLISTBOUNDS0000000000000';
const OTHER = '01JLISTBOUNDS0000000000001';
const T0 = 1_800_000_000_000;

async function seed(ds: DataSource): Promise<void> {
  const rows = Array.from({ length: ROWS }, (_, i) => ({ id: `msg_l${String(i).padStart(6, '0')}`, created: T0 + i * 1000, state: i < ROWS / 100 ? 'failed' : 'delivered' }));
  if (ds.options.type === 'postgres') {
    await ds.query(
      `INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at)
       SELECT r.id, 'evt_' || r.id, $1, 'cus_l', r.state, 1, r.created, r.created FROM unnest($2::varchar[], $3::varchar[], $4::bigint[]) AS r(id, state, created)`,
      [W, rows.map((r) => r.id), rows.map((r) => r.state), rows.map((r) => r.created)],
    );
    await ds.query(`INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, outcome) SELECT 'att_' || id, id, 1, created_at + 5, 20, state FROM deliveries`);
    // Another customer's failed deliveries: a state filter must not read them either.
    await ds.query(`INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at) SELECT 'msg_o' || i, 'evt_o' || i, $1, 'cus_o', 'failed', 1, $2::bigint + i, $2::bigint FROM generate_series(1, $3::int) i`, [OTHER, T0, ROWS]);
    await ds.query(`INSERT INTO events (id, type, subreddit, payload, created_at) SELECT 'evt_trend' || i, 'trends.surge', 'listbounds', '{}', $1::bigint - i FROM generate_series(1, 30) i`, [T0]);
    await ds.query(`INSERT INTO events (id, type, subreddit, payload, created_at) SELECT 'evt_test_' || lpad(i::text, 17, '0'), 'trends.surge', 'listbounds', '{}', $1::bigint + i FROM generate_series(1, $2::int) i`, [T0, ROWS]);
    await ds.query('ANALYZE');
    return;
  }
  const db = sqliteHandle(ds);
  const del = db.prepare('INSERT INTO deliveries (id, event_id, webhook_id, customer_id, state, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)');
  const att = db.prepare('INSERT INTO delivery_attempts (id, delivery_id, attempt_no, started_at, duration_ms, outcome) VALUES (?, ?, 1, ?, 20, ?)');
  const ev = db.prepare(`INSERT INTO events (id, type, subreddit, payload, created_at) VALUES (?, 'trends.surge', 'listbounds', '{}', ?)`);
  db.transaction(() => {
    for (const r of rows) {
      del.run(r.id, `evt_${r.id}`, W, 'cus_l', r.state, r.created, r.created);
      att.run(`att_${r.id}`, r.id, r.created + 5, r.state);
    }
    for (let i = 1; i <= ROWS; i++) del.run(`msg_o${i}`, `evt_o${i}`, OTHER, 'cus_o', 'failed', T0 + i, T0);
    for (let i = 1; i <= 30; i++) ev.run(`evt_trend${i}`, T0 - i);
    for (let i = 1; i <= ROWS; i++) ev.run(`evt_test_${String(i).padStart(17, '0')}`, T0 + i);
  })();
}

/** PostgreSQL's EXPLAIN (ANALYZE, FORMAT JSON): each plan node with the rows it returned and those its filter removed. */
interface PgNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PgNode[];
}
function nodes(n: PgNode): PgNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

describe.each(testDatabases())('list routes read a bounded range on %s', (name, makeDb) => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = makeDb();
    const config = await db.create();
    ds = new DataSource(dataSourceOptions(config, TRENDHOOKS_ENTITIES));
    await ds.initialize();
    await runMigrations(ds);
    await seed(ds);
  }, 60_000);
  afterAll(async () => {
    if (ds?.isInitialized) await ds.destroy();
    await db?.drop();
  });

  async function pgAnalyze(sql: string, params: unknown[]): Promise<PgNode[]> {
    const rows: { 'QUERY PLAN': { Plan: PgNode }[] }[] = await ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
    return nodes(rows[0]['QUERY PLAN'][0].Plan);
  }
  function sqlitePlan(sql: string, params: unknown[]): string {
    return (sqliteHandle(ds).prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
  }

  it('GET …/deliveries?state=failed reads one page of the webhook’s failed rows, not its other rows nor other customers’', async () => {
    const [sql, params] = name === 'postgres' ? deliveryPageQuery(ds, W, { limit: 25 }, { state: 'failed' }).getQueryAndParameters() : sqliteDeliveryPageQuery(ds, W, { limit: 25 }, { state: 'failed' });
    const rows: { d_id: string; d_state: string }[] = await ds.query(sql, params);
    expect(rows).toHaveLength(26);
    expect(rows.every((r) => r.d_state === 'failed')).toBe(true);
    if (name === 'postgres') {
      const plan = await pgAnalyze(sql, params);
      const scans = plan.filter((n) => n['Relation Name'] === 'deliveries');
      expect(scans.map((n) => n['Index Name'])).toEqual(['idx_deliveries_webhook_state_created']);
      expect(scans[0]['Actual Rows']).toBe(26);
      expect(scans[0]['Rows Removed by Filter'] ?? 0).toBe(0);
      expect(plan.some((n) => n['Node Type'] === 'Sort')).toBe(false);
    } else {
      expect(sqlitePlan(sql, params)).toMatch(/^SEARCH d USING INDEX idx_deliveries_webhook_state_created \(webhook_id=\? AND state=\?\)$/);
    }
  });

  it('GET /v1/events reads one page of trend events, however many test events share the range', async () => {
    if (name === 'postgres') {
      const sql = eventsPageSql('', 'DESC', '$4::int');
      const params = [['trends.surge'], ['listbounds'], [0], 26];
      const rows: { id: string }[] = await ds.query(sql, params);
      expect(rows).toHaveLength(26);
      expect(rows.every((r) => r.id.startsWith('evt_trend'))).toBe(true);
      const scans = (await pgAnalyze(sql, params)).filter((n) => n['Relation Name'] === 'events');
      expect(scans.map((n) => n['Index Name'])).toEqual(['idx_events_trend_type_subreddit_created']);
      expect(scans[0]['Actual Rows']).toBe(26);
      expect(scans[0]['Rows Removed by Filter'] ?? 0).toBe(0);
    } else {
      const sql = eventsOfSubscriptionSql(null, 'DESC');
      const params = ['trends.surge', 'listbounds', 0, 26];
      const rows = sqliteHandle(ds).prepare(sql).all(...params) as { id: string }[];
      expect(rows).toHaveLength(26);
      expect(rows.every((r) => r.id.startsWith('evt_trend'))).toBe(true);
      expect(sqlitePlan(sql, params)).toMatch(/^SEARCH events USING INDEX idx_events_trend_type_subreddit_created \(type=\? AND subreddit=\? AND created_at>\?\)$/);
    }
  });

  it(`a webhook's health reads its newest ${HEALTH_RECENT_DELIVERIES} deliveries of the window, in one statement for a page`, async () => {
    const ids = [W, OTHER, '01JLISTBOUNDS0000000000002'];
    const [sql, params] = name === 'postgres' ? [PG_HEALTH_SQL, [ids, T0]] : ds.driver.escapeQueryWithParameters(healthSql(ids.length), healthParams(ids, new Date(T0)));
    const rows: { webhook_id: string; attempts: string | number; delivered: string | number }[] = await ds.query(sql, params);
    // The newest 500 of W's deliveries were all delivered (its failed ones are its oldest); OTHER's have no attempts.
    expect(rows.map((r) => [r.webhook_id, Number(r.attempts), Number(r.delivered)])).toEqual([[W, HEALTH_RECENT_DELIVERIES, HEALTH_RECENT_DELIVERIES]]);
    if (name === 'postgres') {
      const plan = await pgAnalyze(sql, params);
      // One LATERAL range per webhook: the node runs once per id, at most 500 rows each time.
      const scans = plan.filter((n) => n['Relation Name'] === 'deliveries');
      expect(scans.map((n) => `${n['Node Type']} ${n['Index Name']} ×${n['Actual Loops']}`)).toEqual([expect.stringMatching(new RegExp(`^Index (Only )?Scan idx_deliveries_webhook_created ×${ids.length}$`))]);
      expect(scans[0]['Actual Rows']).toBeLessThanOrEqual(HEALTH_RECENT_DELIVERIES);
      // The attempts: one lookup per picked delivery, never a pass over every customer's attempts.
      expect(plan.filter((n) => n['Relation Name'] === 'delivery_attempts').map((n) => `${n['Node Type']} ${n['Index Name']}`)).toEqual(['Index Scan idx_attempts_delivery']);
    } else {
      const plan = sqlitePlan(sql, params).split('\n');
      expect(plan.filter((l) => /^SEARCH d USING (COVERING )?INDEX idx_deliveries_webhook_created \(webhook_id=\? AND created_at>\?\)$/.test(l))).toHaveLength(ids.length);
      expect(plan.filter((l) => /^SEARCH a USING INDEX idx_attempts_delivery \(delivery_id=\?\)$/.test(l))).toHaveLength(1);
      expect(plan.join('\n')).not.toMatch(/SCAN d\b|SCAN a\b/);
    }
  });
});
