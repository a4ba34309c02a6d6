import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const SRC = resolve(__dirname, '..');

/**
 * Each table's owner: the folder (under src/) of the store that reads and writes it. Other modules
 * ask that store through its interface and never name the table in SQL, nor reach its entity
 * through TypeORM (getRepository, Repository<…>, a query builder's from/into/update).
 */
const OWNERS: Readonly<Record<string, string>> = {
  customers: 'auth',
  api_keys: 'auth',
  settings: 'settings',
  posts: 'posts',
  trend_sources: 'trends',
  // The delivery engine's endpoints (URL, secrets, state, last_*): EndpointStore, the claim, the
  // status writer, the lifecycle's failure count.
  webhooks: 'delivery',
  // What each webhook of the API subscribes to (event kind, subreddit): the webhook API's store,
  // which the fan-out asks as its built-in SubscriptionSource.
  webhook_subscriptions: 'webhooks',
  events: 'delivery',
  deliveries: 'delivery',
  delivery_attempts: 'delivery',
  destination_circuits: 'delivery',
  // The operators' webhook.disabled notifications: OperationsNotificationStore.
  operations_notifications: 'delivery',
  // Portal links and the browser sessions they were exchanged for.
  portal_sessions: 'portal',
};

/** The one place code outside an owner may name its table, and why. */
interface Exception {
  table: string;
  files: RegExp;
  why: string;
}

/** None today; an entry names a table, the files outside its owner that may use it, and why. */
const EXCEPTIONS: readonly Exception[] = [];

/** A path under src/, with forward slashes. */
const rel = (file: string) => relative(SRC, file).split(sep).join('/');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Production code: not specs, not migrations (their SQL is the schema's history, one per dialect and series). */
function scanned(file: string): boolean {
  const r = rel(file);
  return !r.endsWith('.spec.ts') && !r.startsWith('database/migrations/');
}

/** Table name per entity class, read from the `@Entity('name')` decorators under src/. */
function entityTables(files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(/@Entity\(\s*['"`](\w+)['"`][^)]*\)[\s\S]*?\bclass\s+(\w+)/g)) out.set(m[2], m[1]);
  }
  return out;
}

/** The source with its comments blanked (same length, same lines): prose about a table is no SQL. */
function withoutComments(source: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  // Strings first, so a `//` or `/*` inside one (a URL) is left alone; comments are blanked.
  // A quote string ends at its line; only a template literal spans lines.
  return source.replace(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\[\s\S]|[^`\\])*`|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m) => (m.startsWith('/') ? blank(m) : m));
}

const SQL_KEYWORDS = String.raw`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE)`;
/** The table after a keyword: bare, quoted ("x", `x`, [x]) or schema-qualified (public.x). */
const sqlName = (table: string) => new RegExp(String.raw`${SQL_KEYWORDS}\s+(?:(?:["\x60\[]?\w+["\x60\]]?)\.)?["\x60\[]?${table}["\x60\]]?(?![\w.])`, 'gi');
const TYPEORM_CALLS = String.raw`(?:getRepository|InjectRepository|withRepository|from|into|update|insert|delete|softDelete|restore|find\w*|count\w*|exists\w*|save|remove|upsert|increment|decrement|sum|average|minimum|maximum|createQueryBuilder)`;
const entityUse = (entity: string) => new RegExp(String.raw`(?:\b${TYPEORM_CALLS}\s*\(\s*|\bRepository\s*<\s*)${entity}\b`, 'g');
/** TypeORM given the table by name: getRepository('posts'), qb.from('webhooks', 'w'). */
const tableByName = (table: string) => new RegExp(String.raw`\b${TYPEORM_CALLS}\s*\(\s*(['"\x60])${table}\1`, 'g');

interface TableUse {
  table: string;
  line: number;
  text: string;
}

/** Every place `source` names one of `tables` in SQL or reaches its entity through TypeORM. */
function tableUses(source: string, tables: readonly string[], entities: ReadonlyMap<string, string>): TableUse[] {
  const code = withoutComments(source);
  const lines = source.split('\n');
  const lineOf = (index: number) => code.slice(0, index).split('\n').length;
  const out: TableUse[] = [];
  const add = (table: string, index: number) => {
    const line = lineOf(index);
    if (!out.some((u) => u.table === table && u.line === line)) out.push({ table, line, text: lines[line - 1].trim() });
  };
  for (const table of tables) for (const re of [sqlName(table), tableByName(table)]) for (const m of code.matchAll(re)) add(table, m.index);
  for (const [entity, table] of entities) for (const m of code.matchAll(entityUse(entity))) add(table, m.index);
  return out.sort((a, b) => a.line - b.line || a.table.localeCompare(b.table));
}

function owns(table: string, file: string): boolean {
  const r = rel(file);
  const owner = OWNERS[table];
  return r === owner || r.startsWith(`${owner}/`);
}

function excepted(table: string, file: string): boolean {
  return EXCEPTIONS.some((e) => e.table === table && e.files.test(rel(file)));
}

const ALL = tsFiles(SRC).filter(scanned);
const ENTITIES = entityTables(ALL);

// Every table has one owning store; a leak shows as `file:line: text` in the failure.
describe('every table is read and written only by its owner (table-ownership)', () => {
  it('finds the uses it checks (the scan itself works)', () => {
    const sample = [
      "const a = await ds.query('SELECT id FROM webhooks WHERE x = 1');",
      'const b = `INSERT INTO "posts" (id) VALUES ($1)`;',
      "db.prepare('UPDATE public.settings SET v = ?');",
      '// a comment that reads from webhooks is no SQL',
      "const c = 'SELECT 1 FROM webhooks_archive'; // another table",
      "const d = 'DELETE FROM [api_keys]';",
      'const e = `SELECT w.id',
      '  FROM',
      '    webhooks w JOIN deliveries d ON d.webhook_id = w.id`;',
      'const f = this.ds.getRepository(EndpointEntity);',
      'private readonly repo: Repository<PostEntity>;',
      'await qb.delete().from(DestinationCircuitEntity).execute();',
      "const g = 'https://example.com/from webhooks'; const h = 'select * from events';",
      'const i: EndpointEntity = row; // a type, not a use',
      "/* UPDATE webhooks SET x = 1 */ const j = 'TRUNCATE customers';",
      "const k = await ds.createQueryBuilder().select('t.key').from('settings', 't').getMany();",
    ].join('\n');
    const entities = new Map([
      ['EndpointEntity', 'webhooks'],
      ['PostEntity', 'posts'],
      ['DestinationCircuitEntity', 'destination_circuits'],
    ]);
    expect(tableUses(sample, Object.keys(OWNERS), entities).map((u) => `${u.line} ${u.table}`)).toEqual([
      '1 webhooks',
      '2 posts',
      '3 settings',
      '6 api_keys',
      '8 webhooks',
      '9 deliveries',
      '10 webhooks',
      '11 posts',
      '12 destination_circuits',
      '13 events',
      '13 webhooks',
      '15 customers',
      '16 settings',
    ]);
  });

  it('knows the owner of every table an entity declares, and each owner folder exists', () => {
    expect([...new Set(ENTITIES.values())].filter((t) => !(t in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((t) => ![...ENTITIES.values()].includes(t))).toEqual([]);
    for (const owner of new Set(Object.values(OWNERS))) expect(ALL.some((f) => rel(f).startsWith(`${owner}/`))).toBe(true);
  });

  it('has exceptions only for tables it maps, each matching files outside the owner that still use the table', () => {
    for (const e of EXCEPTIONS) {
      expect(OWNERS[e.table]).toBeDefined();
      const using = ALL.filter((f) => e.files.test(rel(f)));
      expect(using.length).toBeGreaterThan(0);
      expect(using.filter((f) => owns(e.table, f))).toEqual([]);
      // An exception nothing needs any more is deleted, not kept.
      expect(using.some((f) => tableUses(readFileSync(f, 'utf8'), [e.table], ENTITIES).some((u) => u.table === e.table))).toBe(true);
    }
  });

  it.each(ALL.map((f) => [rel(f), f]))('%s', (name, file) => {
    const leaks = tableUses(readFileSync(file, 'utf8'), Object.keys(OWNERS), ENTITIES)
      .filter((u) => !owns(u.table, file) && !excepted(u.table, file))
      .map((u) => `${name}:${u.line}: ${u.table} (owner ${OWNERS[u.table]}/): ${u.text}`);
    expect(leaks).toEqual([]);
  });
});
