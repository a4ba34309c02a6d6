import fc from 'fast-check';
import { CursorCodec, CursorKeyRing, type CursorPosition } from './cursor-codec';
import { buildPage, fetchSize, toPageRequest, type KeysetPageRequest, type PageInfo } from './page';

interface Row {
  createdAt: number;
  id: string;
}

const keyOf = (row: Row): CursorPosition => [row.createdAt, row.id];

/** Tuple comparison with the same semantics as SQL row values: (a1, a2) < (b1, b2). */
function compareKeys(a: CursorPosition, b: CursorPosition): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return a.length - b.length;
}

/**
 * In-memory stand-in for the repository query:
 *   next/first: WHERE key < :after ORDER BY key DESC LIMIT n+1
 *   prev:       WHERE key > :before ORDER BY key ASC LIMIT n+1
 */
function fetchRows(table: readonly Row[], req: KeysetPageRequest): Row[] {
  const asc = [...table].sort((x, y) => compareKeys(keyOf(x), keyOf(y)));
  if (req.before) {
    const before = req.before;
    return asc.filter((r) => compareKeys(keyOf(r), before) > 0).slice(0, fetchSize(req));
  }
  const after = req.after;
  return asc
    .reverse()
    .filter((r) => after === undefined || compareKeys(keyOf(r), after) < 0)
    .slice(0, fetchSize(req));
}

const NOW = new Date('2025-06-01T12:00:00.000Z');
const codec = new CursorCodec(CursorKeyRing.fromSecrets(['k'.repeat(40)]), { ttlSeconds: 86400 });
const EXPECTED = { route: 'GET /v1/webhooks', customerId: 'cus_1', params: {} };

/** One request to a list endpoint, cursor → page, exactly as a controller would do it. */
function listPage(table: readonly Row[], limit: number, cursor: string | null, withPrev: boolean) {
  const decoded = cursor === null ? null : codec.decode(cursor, EXPECTED, NOW);
  const req = toPageRequest(limit, decoded);
  const issue = (position: CursorPosition, direction: 'next' | 'prev') =>
    codec.encode({ ...EXPECTED, position, direction }, NOW);
  return buildPage(fetchRows(table, req), req, keyOf, issue, { withPrev });
}

const row = (createdAt: number, id: string): Row => ({ createdAt, id });
const trace = (position: CursorPosition, direction: string) => `${direction}:${position.join('/')}`;

describe('toPageRequest', () => {
  it('maps no cursor / next / prev to first / after / before', () => {
    expect(toPageRequest(10, null)).toEqual({ limit: 10, direction: 'first' });
    expect(toPageRequest(10)).toEqual({ limit: 10, direction: 'first' });
    expect(toPageRequest(10, { position: [5, 'a'], direction: 'next' })).toEqual({ limit: 10, direction: 'next', after: [5, 'a'] });
    expect(toPageRequest(10, { position: [5, 'a'], direction: 'prev' })).toEqual({ limit: 10, direction: 'prev', before: [5, 'a'] });
  });
});

describe('buildPage', () => {
  const r = [row(9, 'i'), row(8, 'h'), row(7, 'g')];

  it('first page: prev null, next after the last item when the extra row exists', () => {
    expect(buildPage(r, { limit: 2, direction: 'first' }, keyOf, trace, { withPrev: true })).toEqual({
      items: r.slice(0, 2),
      page: { limit: 2, next_cursor: 'next:8/h', prev_cursor: null },
    });
    expect(buildPage(r, { limit: 3, direction: 'first' }, keyOf, trace, { withPrev: true }).page).toEqual({
      limit: 3,
      next_cursor: null,
      prev_cursor: null,
    });
  });

  it('page reached by next: prev before its first item', () => {
    expect(buildPage(r.slice(0, 2), { limit: 2, direction: 'next' }, keyOf, trace, { withPrev: true }).page).toEqual({
      limit: 2,
      next_cursor: null,
      prev_cursor: 'prev:9/i',
    });
  });

  it('page reached by prev: rows come ASC and are reversed; next always set; prev iff more before', () => {
    const asc = [row(7, 'g'), row(8, 'h'), row(9, 'i')];
    expect(buildPage(asc, { limit: 2, direction: 'prev' }, keyOf, trace, { withPrev: true })).toEqual({
      items: [row(8, 'h'), row(7, 'g')],
      page: { limit: 2, next_cursor: 'next:7/g', prev_cursor: 'prev:8/h' },
    });
    expect(buildPage(asc.slice(0, 2), { limit: 2, direction: 'prev' }, keyOf, trace, { withPrev: true })).toEqual({
      items: [row(8, 'h'), row(7, 'g')],
      page: { limit: 2, next_cursor: 'next:7/g', prev_cursor: null },
    });
  });

  it('does not mutate the input rows', () => {
    const asc = [row(7, 'g'), row(8, 'h')];
    buildPage(asc, { limit: 2, direction: 'prev' }, keyOf, trace, { withPrev: true });
    expect(asc).toEqual([row(7, 'g'), row(8, 'h')]);
  });

  it('empty page has no cursors', () => {
    for (const direction of ['first', 'next', 'prev'] as const) {
      expect(buildPage([], { limit: 5, direction }, keyOf, trace, { withPrev: true })).toEqual({
        items: [],
        page: { limit: 5, next_cursor: null, prev_cursor: null },
      });
    }
  });

  it('withPrev false: page has only limit and next_cursor, and never issues prev cursors', () => {
    const issued: string[] = [];
    const issue = (p: CursorPosition, d: string) => {
      issued.push(d);
      return trace(p, d);
    };
    for (const direction of ['first', 'next', 'prev'] as const) {
      const { page } = buildPage(r, { limit: 2, direction }, keyOf, issue, { withPrev: false });
      expect(Object.keys(page)).toEqual(['limit', 'next_cursor']);
    }
    expect(issued.every((d) => d === 'next')).toBe(true);
  });

  it('refuses more than limit + 1 rows and a bad limit', () => {
    expect(() => buildPage(r, { limit: 1, direction: 'first' }, keyOf, trace, { withPrev: true })).toThrow(/limit \+ 1/);
    expect(() => buildPage(r, { limit: 0, direction: 'first' }, keyOf, trace, { withPrev: true })).toThrow(/positive integer/);
  });
});

describe('keyset walk over an in-memory table (property)', () => {
  // Few distinct timestamps so ties are common and the id tie-breaker is exercised.
  const tableArb = fc.uniqueArray(
    fc.record({
      createdAt: fc.integer({ min: 0, max: 30 }),
      id: fc.integer({ min: 0, max: 5000 }).map((n) => `wh_${n.toString(36)}`),
    }),
    { minLength: 0, maxLength: 200, selector: (x) => `${x.createdAt}|${x.id}` },
  );
  const limitArb = fc.integer({ min: 1, max: 30 });

  function walkForward(table: Row[], limit: number, withPrev: boolean) {
    const pages: Array<{ items: Row[]; page: PageInfo }> = [];
    let cursor: string | null = null;
    do {
      const page = listPage(table, limit, cursor, withPrev);
      pages.push(page);
      cursor = page.page.next_cursor;
      // A loop that never ends would be a bug; there cannot be more pages than rows + 1.
      if (pages.length > table.length + 1) throw new Error('forward walk does not terminate');
    } while (cursor !== null);
    return pages;
  }

  it('next cursors visit every row exactly once in order; prev cursors from the last page give back the earlier pages', () => {
    fc.assert(
      fc.property(tableArb, limitArb, (table, limit) => {
        const desc = [...table].sort((x, y) => compareKeys(keyOf(y), keyOf(x)));
        const pages = walkForward(table, limit, true);

        expect(pages.flatMap((p) => p.items)).toEqual(desc);
        pages.forEach((p, i) => {
          expect(p.page.limit).toBe(limit);
          if (i < pages.length - 1) expect(p.items).toHaveLength(limit);
          else expect(p.items.length).toBeLessThanOrEqual(limit);
          if (i === 0) expect(p.page.prev_cursor).toBeNull();
          else expect(p.page.prev_cursor).toEqual(expect.any(String));
        });
        // No trailing empty page unless the table itself is empty.
        if (table.length > 0) expect(pages[pages.length - 1].items.length).toBeGreaterThan(0);

        let cursor = pages[pages.length - 1].page.prev_cursor ?? null;
        let i = pages.length - 2;
        while (cursor !== null) {
          const back = listPage(table, limit, cursor, true);
          expect(i).toBeGreaterThanOrEqual(0);
          expect(back.items).toEqual(pages[i].items);
          expect(back.page.next_cursor).toEqual(expect.any(String));
          // Going next again from a page reached by prev lands on the page we came from.
          expect(listPage(table, limit, back.page.next_cursor, true).items).toEqual(pages[i + 1].items);
          cursor = back.page.prev_cursor ?? null;
          i--;
        }
        expect(i).toBe(-1);
      }),
      { numRuns: 150 },
    );
  });

  it('without prev (posts routes) the forward walk is the same and pages carry only limit and next_cursor', () => {
    fc.assert(
      fc.property(tableArb, limitArb, (table, limit) => {
        const desc = [...table].sort((x, y) => compareKeys(keyOf(y), keyOf(x)));
        const pages = walkForward(table, limit, false);
        expect(pages.flatMap((p) => p.items)).toEqual(desc);
        for (const p of pages) expect(Object.keys(p.page)).toEqual(['limit', 'next_cursor']);
      }),
      { numRuns: 100 },
    );
  });
});
