import { detectFormat, parseJsonDocument, parseNdjsonLine, parsePost, parseRedditText, RedditPost } from './reddit-parse';

const CREATED = 1_700_000_000;

function post(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'abc123',
    name: 't3_abc123',
    subreddit: 'TypeScript',
    author: 'Some_User',
    title: 'Hello',
    selftext: 'body',
    url: 'https://example.com/a',
    permalink: '/r/TypeScript/comments/abc123/hello/',
    score: 42,
    num_comments: 7,
    created_utc: CREATED,
    ...over,
  };
}

const thing = (data: Record<string, unknown>) => ({ kind: 't3', data });
const listing = (children: unknown[]) => ({ kind: 'Listing', data: { after: null, children } });

function ok(value: unknown): RedditPost {
  const r = parsePost(value);
  if (!r.ok) throw new Error(`expected a post, got: ${r.reason}`);
  return r.value;
}

function reason(value: unknown): string {
  const r = parsePost(value);
  if (r.ok) throw new Error('expected a rejection');
  return r.reason;
}

describe('parsePost', () => {
  it('maps Reddit field names to a post, lower-casing the subreddit and converting created_utc to ms', () => {
    expect(ok(post())).toEqual({
      id: 'abc123',
      subreddit: 'typescript',
      author: 'Some_User',
      title: 'Hello',
      selftext: 'body',
      url: 'https://example.com/a',
      permalink: '/r/TypeScript/comments/abc123/hello/',
      score: 42,
      numComments: 7,
      createdAtMs: CREATED * 1000,
    });
  });

  it('accepts a t3 thing as well as a bare post object', () => {
    expect(ok(thing(post()))).toEqual(ok(post()));
  });

  it('refuses things that are not posts', () => {
    expect(reason({ kind: 't1', data: post() })).toContain('not a post');
    expect(reason({ kind: 't3', data: 'x' })).toContain('data');
  });

  it('strips the t3_ prefix: the id may come from name alone, or carry the prefix itself', () => {
    expect(ok(post({ id: undefined, name: 't3_zz9' })).id).toBe('zz9');
    expect(ok(post({ id: 't3_abc123' })).id).toBe('abc123');
    expect(ok(post({ name: undefined })).id).toBe('abc123');
  });

  it('refuses a name that is not a post fullname or disagrees with the id', () => {
    expect(reason(post({ name: 't1_abc123' }))).toContain('name');
    expect(reason(post({ name: 't3_other' }))).toContain('does not match');
  });

  it.each([
    [{ id: undefined, name: undefined }, 'id is missing'],
    [{ id: 'ABC' }, 'base-36'],
    [{ id: 'a'.repeat(14) }, 'base-36'],
    [{ id: 'a-b' }, 'base-36'],
    [{ id: 12345 }, 'id must be a string'],
    [{ subreddit: undefined }, 'subreddit is missing'],
    [{ subreddit: 'ab' }, 'subreddit'],
    [{ subreddit: '_private' }, 'subreddit'],
    [{ subreddit: 'a'.repeat(22) }, 'subreddit'],
    [{ created_utc: undefined }, 'created_utc'],
    [{ created_utc: 'yesterday' }, 'created_utc'],
    [{ created_utc: Number.NaN }, 'created_utc'],
    [{ created_utc: Number.POSITIVE_INFINITY }, 'created_utc'],
    [{ created_utc: 1e300 }, 'created_utc'],
    [{ created_utc: -5 }, 'created_utc'],
    [{ created_utc: 1_700_000_000_000 }, 'created_utc'], // milliseconds passed as seconds
    [{ title: undefined }, 'title is missing'],
    [{ title: 5 }, 'title is missing'],
    [{ title: 'x'.repeat(1001) }, 'title'],
    [{ selftext: 'x'.repeat(100_001) }, 'selftext'],
    [{ selftext: { md: 'x' } }, 'selftext must be a string'],
    [{ author: 'x'.repeat(41) }, 'author'],
    [{ author: '' }, 'author'],
    [{ author: 'a\nb' }, 'author'],
    [{ author: 7 }, 'author'],
    [{ url: 'x'.repeat(8193) }, 'url'],
    [{ permalink: 'comments/abc' }, 'permalink'],
    [{ permalink: '//evil.example/x' }, 'permalink'],
    [{ permalink: 'https://evil.example/r/x' }, 'permalink'],
    [{ score: 1.5 }, 'score must be an integer'],
    [{ score: '42' }, 'score must be an integer'],
    [{ score: 1e20 }, 'score is out of range'],
    [{ score: -(2 ** 31) - 1 }, 'score is out of range'],
    [{ num_comments: -1 }, 'num_comments is out of range'],
    [{ num_comments: 2 ** 31 }, 'num_comments is out of range'],
  ])('refuses %j (%s)', (over, expected) => {
    expect(reason(post(over))).toContain(expected);
  });

  it.each([null, 42, 'post', [post()], true])('refuses a non-object record %j', (value) => {
    expect(reason(value)).toMatch(/expected a post object/);
  });

  it("marks what Reddit's record says is gone: removed or deleted posts, deleted authors; an absent author is not a deleted one", () => {
    const base = { id: 'g1', subreddit: 'x_sub', title: 'T', created_utc: CREATED, author: 'someone', selftext: 'text' };
    expect(ok(base).gone).toBeUndefined();
    expect(ok({ ...base, removed_by_category: 'moderator' }).gone).toBe('removed');
    expect(ok({ ...base, removed_by_category: null }).gone).toBeUndefined();
    expect(ok({ ...base, selftext: '[removed]' }).gone).toBe('removed');
    expect(ok({ ...base, author: '[deleted]', selftext: '[deleted]' }).gone).toBe('removed');
    expect(ok({ ...base, author: '[deleted]' }).gone).toBe('author_deleted');
    expect(ok({ id: 'g2', subreddit: 'x_sub', title: 'T', created_utc: CREATED }).gone).toBeUndefined();
  });

  it('fills absent optional fields with what Reddit means by them', () => {
    const p = ok({ id: 'q1', subreddit: 'r/AskReddit', title: 'T', created_utc: CREATED });
    expect(p).toEqual({
      id: 'q1',
      subreddit: 'askreddit',
      author: '[deleted]',
      title: 'T',
      selftext: '',
      url: 'https://www.reddit.com/r/askreddit/comments/q1/',
      permalink: '/r/askreddit/comments/q1/',
      score: 0,
      numComments: 0,
      createdAtMs: CREATED * 1000,
    });
    expect(ok(post({ author: null, selftext: null })).author).toBe('[deleted]');
  });

  it('keeps the extremes of the valid ranges', () => {
    const p = ok(post({ score: 2 ** 31 - 1, num_comments: 0, created_utc: 4_102_444_800, title: 'x'.repeat(1000) }));
    expect(p.score).toBe(2 ** 31 - 1);
    expect(p.createdAtMs).toBe(4_102_444_800_000);
    expect(ok(post({ score: -(2 ** 31) })).score).toBe(-(2 ** 31));
  });

  it('accepts fractional and numeric-string created_utc (as some dumps have it), rounded to the ms', () => {
    expect(ok(post({ created_utc: 1_700_000_000.1234 })).createdAtMs).toBe(1_700_000_000_123);
    expect(ok(post({ created_utc: '1700000000' })).createdAtMs).toBe(1_700_000_000_000);
  });

  it('reduces an absolute reddit.com permalink to its path', () => {
    expect(ok(post({ permalink: 'https://www.reddit.com/r/x_y/comments/abc123/t/' })).permalink).toBe('/r/x_y/comments/abc123/t/');
    expect(ok(post({ permalink: 'https://old.reddit.com/r/x_y/comments/abc123/t/' })).permalink).toBe('/r/x_y/comments/abc123/t/');
  });

  it('drops NUL characters from free text (PostgreSQL text cannot hold them) and keeps other Unicode', () => {
    const p = ok(post({ title: 'a\u0000b 🎉', selftext: '\u0000x', url: 'https://e.x/\u0000' }));
    expect(p).toMatchObject({ title: 'ab 🎉', selftext: 'x', url: 'https://e.x/' });
  });
});

describe('parseJsonDocument', () => {
  it('reads a listing, reporting bad children by path without losing the good ones', () => {
    const out = parseJsonDocument(listing([thing(post()), { kind: 't1', data: {} }, thing(post({ id: 'def', name: undefined, score: 'x' })), thing(post({ id: 'ghi', name: undefined }))]));
    expect(out.format).toBe('listing');
    expect(out.records.map((r) => [r.at, r.post.id])).toEqual([
      ['data.children[0]', 'abc123'],
      ['data.children[3]', 'ghi'],
    ]);
    expect(out.issues).toEqual([
      { at: 'data.children[1]', reason: expect.stringContaining('not a post') },
      { at: 'data.children[2]', reason: expect.stringContaining('score') },
    ]);
  });

  it('reads an array of listings (and of bare posts)', () => {
    const out = parseJsonDocument([listing([thing(post())]), listing([thing(post({ id: 'b2', name: undefined }))]), post({ id: 'c3', name: undefined }), 'junk']);
    expect(out.format).toBe('listing-array');
    expect(out.records.map((r) => [r.at, r.post.id])).toEqual([
      ['[0].data.children[0]', 'abc123'],
      ['[1].data.children[0]', 'b2'],
      ['[2]', 'c3'],
    ]);
    expect(out.issues).toEqual([{ at: '[3]', reason: expect.stringContaining('expected a post object') }]);
  });

  it('reports a listing without children', () => {
    expect(parseJsonDocument({ kind: 'Listing', data: {} }).issues).toEqual([{ at: 'document', reason: 'listing has no data.children array' }]);
    expect(parseJsonDocument([{ kind: 'Listing' }]).issues).toEqual([{ at: '[0]', reason: 'listing has no data.children array' }]);
  });

  it('takes a single post object as a one-record document', () => {
    expect(parseJsonDocument(post()).records).toHaveLength(1);
    expect(parseJsonDocument(42).issues).toEqual([{ at: 'document', reason: expect.stringContaining('expected a post object') }]);
  });
});

describe('parseNdjsonLine', () => {
  it('reads post objects, t3 things and whole listings', () => {
    expect(parseNdjsonLine(JSON.stringify(post()), 3).records).toEqual([{ at: 'line 3', post: ok(post()) }]);
    expect(parseNdjsonLine(JSON.stringify(thing(post())), 4).records).toHaveLength(1);
    const l = parseNdjsonLine(JSON.stringify(listing([thing(post()), { kind: 'more' }])), 5);
    expect(l.listing).toBe(true);
    expect(l.records.map((r) => r.at)).toEqual(['line 5 data.children[0]']);
    expect(l.issues).toEqual([{ at: 'line 5 data.children[1]', reason: expect.stringContaining('not a post') }]);
  });

  it.each([
    ['{"id": ', 'not valid JSON'],
    ['[1,2]', 'not a JSON object but an array'],
    ['42', 'not a JSON object but a number'],
    ['"text"', 'not a JSON object but a string'],
    ['null', 'not a JSON object but null'],
  ])('reports the line %j', (line, expected) => {
    const out = parseNdjsonLine(line, 9);
    expect(out.records).toEqual([]);
    expect(out.issues).toEqual([{ at: 'line 9', reason: expect.stringContaining(expected) }]);
  });
});

describe('detectFormat', () => {
  it('calls a first line that is a JSON object on its own NDJSON', () => {
    expect(detectFormat('{"id":"a"}')).toBe('ndjson');
    expect(detectFormat(JSON.stringify(listing([])))).toBe('ndjson');
  });

  it('calls pretty-printed JSON and arrays documents', () => {
    expect(detectFormat('{', '"kind": "Listing",')).toBe('document');
    expect(detectFormat('[', '{')).toBe('document');
    expect(detectFormat('[{"kind":"Listing"}]')).toBe('document');
  });

  it('still recognises NDJSON whose first line is corrupt', () => {
    expect(detectFormat('{"id": broken', '{"id":"b"}')).toBe('ndjson');
  });
});

describe('parseRedditText', () => {
  const lines = [JSON.stringify(post()), '', '  ', 'not json', JSON.stringify(thing(post({ id: 'b2', name: undefined }))), '[]', JSON.stringify(post({ id: 'c3', name: undefined, created_utc: 'soon' }))];

  it('reads NDJSON, skipping blank lines and reporting bad ones by line number', () => {
    const out = parseRedditText(lines.join('\n'));
    expect(out.format).toBe('ndjson');
    expect(out.records.map((r) => [r.at, r.post.id])).toEqual([
      ['line 1', 'abc123'],
      ['line 5', 'b2'],
    ]);
    expect(out.issues.map((i) => i.at)).toEqual(['line 4', 'line 6', 'line 7']);
    expect(out.issues[2].reason).toContain('created_utc');
  });

  it('handles a BOM and CRLF line ends', () => {
    const out = parseRedditText('\uFEFF' + lines.join('\r\n') + '\r\n');
    expect(out.format).toBe('ndjson');
    expect(out.records.map((r) => r.post.id)).toEqual(['abc123', 'b2']);
    expect(out.issues.map((i) => i.at)).toEqual(['line 4', 'line 6', 'line 7']);
  });

  it('reads a pretty-printed listing, with a BOM and CRLF', () => {
    const text = '\uFEFF' + JSON.stringify(listing([thing(post()), thing(post({ id: 'b2', name: undefined }))]), null, 2).replace(/\n/g, '\r\n');
    const out = parseRedditText(text);
    expect(out.format).toBe('listing');
    expect(out.records.map((r) => r.post.id)).toEqual(['abc123', 'b2']);
  });

  it('calls a minified one-line listing a listing', () => {
    const out = parseRedditText(JSON.stringify(listing([thing(post())])) + '\n');
    expect(out.format).toBe('listing');
    expect(out.records).toHaveLength(1);
  });

  it('reads a pretty-printed array of listings', () => {
    const out = parseRedditText(JSON.stringify([listing([thing(post())]), listing([thing(post({ id: 'b2', name: undefined }))])], null, 2));
    expect(out.format).toBe('listing-array');
    expect(out.records.map((r) => r.at)).toEqual(['[0].data.children[0]', '[1].data.children[0]']);
  });

  it('reports a document that is not JSON, and an empty text', () => {
    expect(parseRedditText('{\n  "kind": "Listing",\n').issues).toEqual([{ at: 'document', reason: expect.stringContaining('not valid JSON') }]);
    expect(parseRedditText('hello world').issues).toEqual([{ at: 'document', reason: expect.stringContaining('not valid JSON') }]);
    expect(parseRedditText(' \n\r\n')).toEqual({ format: 'empty', records: [], issues: [] });
  });

  it('reads NDJSON whose first line is corrupt', () => {
    const out = parseRedditText(['{"id": oops', JSON.stringify(post())].join('\n'));
    expect(out.format).toBe('ndjson');
    expect(out.records).toHaveLength(1);
    expect(out.issues).toEqual([{ at: 'line 1', reason: expect.stringContaining('not valid JSON') }]);
  });
});
