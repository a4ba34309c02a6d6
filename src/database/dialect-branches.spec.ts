import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const SRC = resolve(__dirname, '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Where the dialect may be named: the dialect choice itself, and the per-dialect store files (`x.postgres.ts`, `postgres/…`). */
function mayBranch(file: string): boolean {
  const rel = relative(SRC, file).split(sep).join('/');
  if (rel === 'database/dialect.ts') return true;
  if (/\.(postgres|sqlite)\.ts$/.test(rel)) return true;
  return rel.split('/').slice(0, -1).some((dir) => dir === 'postgres' || dir === 'sqlite');
}

const NAME = String.raw`(['"\x60])(?:postgres|sqlite|better-sqlite3)\1`;
const BRANCHES: readonly RegExp[] = [
  // x === 'postgres', 'sqlite' != y, …
  new RegExp(String.raw`[!=]==?\s*${NAME}`),
  new RegExp(String.raw`${NAME}\s*[!=]==?`),
  // case 'postgres':
  new RegExp(String.raw`\bcase\s+${NAME}\s*:`),
  // a data source's driver name: ds.options.type
  /\boptions\??\.type\b/,
];

/** Each line of `source` that branches on a dialect or driver name, as `line: text`. */
function dialectBranches(source: string): string[] {
  return source
    .split('\n')
    .map((text, i) => ({ text, line: i + 1 }))
    .filter(({ text }) => !/^\s*(\/\/|\*|\/\*)/.test(text))
    .filter(({ text }) => BRANCHES.some((re) => re.test(text)))
    .map(({ text, line }) => `${line}: ${text.trim()}`);
}

// A new dialect is added in DIALECTS and the compiler points at every Record<Dialect, …>: a
// "PostgreSQL, else SQLite" branch elsewhere would run it silently as SQLite.
describe('no file under src/ branches on the dialect outside database/dialect.ts and the per-dialect store files', () => {
  it('finds the branches it checks (the scan itself works)', () => {
    const sample = [
      "const sets = dialect === 'postgres' ? A : B;",
      'if (db.type !== "sqlite") return;',
      "if ('better-sqlite3' == driver) x();",
      "  case 'postgres':",
      'const p = this.ds.options.type;',
      "// a comment naming dialect === 'postgres' is no branch",
      "const options = { type: 'better-sqlite3' };",
      "trendhooksMigrations('postgres', {});",
      'const ok = o.type === `sqlite`;',
    ].join('\n');
    expect(dialectBranches(sample)).toEqual([
      "1: const sets = dialect === 'postgres' ? A : B;",
      '2: if (db.type !== "sqlite") return;',
      "3: if ('better-sqlite3' == driver) x();",
      "4: case 'postgres':",
      '5: const p = this.ds.options.type;',
      '9: const ok = o.type === `sqlite`;',
    ]);
  });

  it('knows which files may name the dialect', () => {
    expect(mayBranch(join(SRC, 'database/dialect.ts'))).toBe(true);
    expect(mayBranch(join(SRC, 'posts/post.store.postgres.ts'))).toBe(true);
    expect(mayBranch(join(SRC, 'delivery/queue/sqlite/sqlite-delivery-queue.ts'))).toBe(true);
    expect(mayBranch(join(SRC, 'database/features.ts'))).toBe(false);
    expect(mayBranch(join(SRC, 'database/sqlite-checkpointer.ts'))).toBe(false);
  });

  const checked = tsFiles(SRC).filter((f) => !f.endsWith('.spec.ts') && !mayBranch(f));
  it.each(checked.map((f) => [relative(SRC, f), f]))('%s', (_name, file) => {
    expect(dialectBranches(readFileSync(file, 'utf8'))).toEqual([]);
  });
});
