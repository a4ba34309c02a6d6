/**
 * Pure parsing of Reddit post data as it arrives from the API or from dumps: a Listing
 * (`{"kind":"Listing","data":{"children":[{"kind":"t3","data":{…}}]}}`), a JSON array of listings,
 * or NDJSON whose lines are post objects, `t3` things or whole listings. Every record is validated
 * so that a store of the result cannot fail on it; a bad record is reported (where + why) and
 * skipped, never fatal. No I/O here: the ingest service streams files into these functions.
 */
import { normaliseSubreddit, SUBREDDIT_INPUT } from '../common/reddit-names';

/** One validated post, in Reddit's terms (the entity mapping adds first_seen_at / updated_at). */
export interface RedditPost {
  /** Base-36 id without the `t3_` prefix. */
  id: string;
  /** Lower-cased subreddit name. */
  subreddit: string;
  /** As Reddit spells it; `[deleted]` when absent. */
  author: string;
  title: string;
  selftext: string;
  url: string;
  /** Reddit's relative form, `/r/…/comments/…/`. */
  permalink: string;
  score: number;
  numComments: number;
  /** created_utc in epoch milliseconds. */
  createdAtMs: number;
  /**
   * What Reddit's own record says is gone: `removed` (removed_by_category set, or the text replaced
   * by `[removed]` / `[deleted]`), `author_deleted` (the author is `[deleted]`, the post still up).
   * Absent when neither. The poller acts on it (Reddit's rule: deleted content must go).
   */
  gone?: 'removed' | 'author_deleted';
}

export interface ParseIssue {
  /** Where: `line 12`, `line 3 data.children[4]`, `[1].data.children[0]`, `document`. */
  at: string;
  reason: string;
}

export interface ParsedRecord {
  at: string;
  post: RedditPost;
}

export interface ParseOutput {
  records: ParsedRecord[];
  issues: ParseIssue[];
}

/** `listing`: one JSON document (a Listing, or one post); `listing-array`: a JSON array of them. */
export type RedditFormat = 'ndjson' | 'listing' | 'listing-array';

export const DELETED_AUTHOR = '[deleted]';
const ID_RE = /^[a-z0-9]{1,13}$/;
const T3_PREFIX = 't3_';
// created_utc bounds (seconds): Reddit launched in June 2005; anything past 2100 is corrupt data.
const MIN_CREATED_UTC = Date.UTC(2005, 0, 1) / 1000;
const MAX_CREATED_UTC = Date.UTC(2100, 0, 1) / 1000;
const NUMERIC_STRING_RE = /^[0-9]+(?:\.[0-9]+)?$/;
// Columns are PostgreSQL `integer`; a value outside int32 would fail the whole insert batch.
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
// Far above Reddit's own limits (title 300, selftext 40,000), low enough to refuse garbage.
const MAX_TITLE = 1_000;
const MAX_SELFTEXT = 100_000;
const MAX_URL = 8_192;
const MAX_PERMALINK = 2_048;
const MAX_AUTHOR = 40; // posts.author is varchar(40)
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
// PostgreSQL text cannot hold NUL; it would fail the batch, so it is dropped from free text.
// eslint-disable-next-line no-control-regex
const NUL_RE = /\u0000/g;
const REDDIT_ORIGIN_RE = /^https?:\/\/(?:www\.|old\.|new\.|np\.)?reddit\.com(?=\/)/i;

type Json = Record<string, unknown>;
type Result<T> = { ok: true; value: T } | { ok: false; reason: string };

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isListing(v: unknown): v is Json {
  return isObject(v) && v.kind === 'Listing';
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return `a ${typeof v}`;
}

function optionalText(data: Json, field: string, max: number, fallback: string): Result<string> {
  const v = data[field];
  if (v === undefined || v === null) return { ok: true, value: fallback };
  if (typeof v !== 'string') return fail(`${field} must be a string`);
  if (v.length > max) return fail(`${field} is longer than ${max} characters`);
  return { ok: true, value: v.replace(NUL_RE, '') };
}

function optionalInt(data: Json, field: string, min: number): Result<number> {
  const v = data[field];
  if (v === undefined || v === null) return { ok: true, value: 0 };
  if (typeof v !== 'number' || !Number.isInteger(v)) return fail(`${field} must be an integer`);
  if (v < min || v > INT32_MAX) return fail(`${field} is out of range (${min} to ${INT32_MAX})`);
  return { ok: true, value: v };
}

function parseId(data: Json): Result<string> {
  const rawId = data.id;
  const rawName = data.name;
  if (rawName !== undefined && rawName !== null && typeof rawName !== 'string') return fail('name must be a string');
  if (typeof rawName === 'string' && !rawName.startsWith(T3_PREFIX)) return fail(`name ${clip(rawName)} is not a post fullname (t3_…)`);
  const fromName = typeof rawName === 'string' ? rawName.slice(T3_PREFIX.length) : undefined;
  let id: string;
  if (rawId === undefined || rawId === null) {
    if (fromName === undefined) return fail('id is missing');
    id = fromName;
  } else {
    if (typeof rawId !== 'string') return fail('id must be a string');
    id = rawId.startsWith(T3_PREFIX) ? rawId.slice(T3_PREFIX.length) : rawId;
  }
  if (!ID_RE.test(id)) return fail(`id ${clip(id)} is not 1 to 13 lower-case base-36 characters`);
  if (fromName !== undefined && fromName !== id) return fail(`name ${clip(String(rawName))} does not match id ${id}`);
  return { ok: true, value: id };
}

function parseCreated(data: Json): Result<number> {
  let v = data.created_utc;
  // Some dumps carry created_utc as a numeric string.
  if (typeof v === 'string' && NUMERIC_STRING_RE.test(v)) v = Number(v);
  if (typeof v !== 'number' || !Number.isFinite(v)) return fail('created_utc must be a number (seconds since the epoch)');
  if (v < MIN_CREATED_UTC || v > MAX_CREATED_UTC) return fail(`created_utc ${v} is outside 2005–2100`);
  return { ok: true, value: Math.round(v * 1000) };
}

function parsePermalink(data: Json, subreddit: string, id: string): Result<string> {
  const v = data.permalink;
  if (v === undefined || v === null) return { ok: true, value: `/r/${subreddit}/comments/${id}/` };
  if (typeof v !== 'string') return fail('permalink must be a string');
  const path = v.replace(REDDIT_ORIGIN_RE, '');
  if (!path.startsWith('/') || path.startsWith('//')) return fail('permalink must be a path on reddit.com');
  if (path.length > MAX_PERMALINK || CONTROL_RE.test(path)) return fail('permalink is too long or has control characters');
  return { ok: true, value: path };
}

function clip(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/**
 * One post: Reddit's post object (the `data` of a t3 thing) or a whole `{"kind":"t3","data":{…}}`.
 * Absent optional fields get Reddit's meaning: author `[deleted]`, selftext '', score and
 * num_comments 0, url the permalink.
 */
export function parsePost(value: unknown): Result<RedditPost> {
  if (!isObject(value)) return fail(`expected a post object, got ${describe(value)}`);
  let data: Json = value;
  if ('kind' in value) {
    if (value.kind !== 't3') return fail(`not a post (kind ${clip(String(value.kind))})`);
    if (!isObject(value.data)) return fail('t3 thing has no data object');
    data = value.data;
  }

  const id = parseId(data);
  if (!id.ok) return id;

  const rawSub = data.subreddit;
  if (typeof rawSub !== 'string') return fail('subreddit is missing');
  if (!SUBREDDIT_INPUT.test(rawSub)) return fail(`subreddit ${clip(rawSub)} is not a valid subreddit name`);
  const subreddit = normaliseSubreddit(rawSub);

  const created = parseCreated(data);
  if (!created.ok) return created;

  if (typeof data.title !== 'string') return fail('title is missing');
  if (data.title.length > MAX_TITLE) return fail(`title is longer than ${MAX_TITLE} characters`);
  const title = data.title.replace(NUL_RE, '');

  const author = optionalText(data, 'author', MAX_AUTHOR, DELETED_AUTHOR);
  if (!author.ok) return author;
  if (author.value === '' || CONTROL_RE.test(author.value)) return fail('author is empty or has control characters');

  const selftext = optionalText(data, 'selftext', MAX_SELFTEXT, '');
  if (!selftext.ok) return selftext;

  const permalink = parsePermalink(data, subreddit, id.value);
  if (!permalink.ok) return permalink;

  const url = optionalText(data, 'url', MAX_URL, `https://www.reddit.com${permalink.value}`);
  if (!url.ok) return url;

  const score = optionalInt(data, 'score', INT32_MIN);
  if (!score.ok) return score;
  const numComments = optionalInt(data, 'num_comments', 0);
  if (!numComments.ok) return numComments;

  const removedBy = data.removed_by_category;
  const gone =
    (typeof removedBy === 'string' && removedBy !== '') || selftext.value === '[removed]' || selftext.value === '[deleted]'
      ? 'removed'
      : data.author === DELETED_AUTHOR
        ? 'author_deleted'
        : undefined;
  return {
    ok: true,
    value: {
      id: id.value,
      subreddit,
      author: author.value,
      title,
      selftext: selftext.value,
      url: url.value,
      permalink: permalink.value,
      score: score.value,
      numComments: numComments.value,
      createdAtMs: created.value,
      ...(gone ? { gone } : {}),
    },
  };
}

function collectRecord(value: unknown, at: string, out: ParseOutput): void {
  const r = parsePost(value);
  if (r.ok) out.records.push({ at, post: r.value });
  else out.issues.push({ at, reason: r.reason });
}

/** `at` names the listing (for its own error); children are reported as `${childPrefix}data.children[i]`. */
function collectListing(listing: Json, at: string, childPrefix: string, out: ParseOutput): void {
  const children = isObject(listing.data) ? listing.data.children : undefined;
  if (!Array.isArray(children)) {
    out.issues.push({ at, reason: 'listing has no data.children array' });
    return;
  }
  children.forEach((child, i) => collectRecord(child, `${childPrefix}data.children[${i}]`, out));
}

/** A parsed JSON document: a Listing, an array of listings (or of posts), or a single post. */
export function parseJsonDocument(value: unknown): ParseOutput & { format: Exclude<RedditFormat, 'ndjson'> } {
  const out: ParseOutput = { records: [], issues: [] };
  // Document paths read like JSON paths: `data.children[3]`, `[1].data.children[0]`.
  if (Array.isArray(value)) {
    value.forEach((el, i) => {
      if (isListing(el)) collectListing(el, `[${i}]`, `[${i}].`, out);
      else collectRecord(el, `[${i}]`, out);
    });
    return { format: 'listing-array', ...out };
  }
  if (isListing(value)) collectListing(value, 'document', '', out);
  else collectRecord(value, 'document', out);
  return { format: 'listing', ...out };
}

/** One NDJSON line (already known not to be blank): a post, a t3 thing, or a whole listing. */
export function parseNdjsonLine(line: string, lineNo: number): ParseOutput & { listing: boolean } {
  const out: ParseOutput = { records: [], issues: [] };
  const at = `line ${lineNo}`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    out.issues.push({ at, reason: `not valid JSON (${((err as Error).message ?? '').slice(0, 80)})` });
    return { ...out, listing: false };
  }
  if (!isObject(value)) {
    out.issues.push({ at, reason: `line is not a JSON object but ${describe(value)}` });
    return { ...out, listing: false };
  }
  if (isListing(value)) {
    collectListing(value, at, `${at} `, out);
    return { ...out, listing: true };
  }
  collectRecord(value, at, out);
  return { ...out, listing: false };
}

function parsesAsObject(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    return isObject(JSON.parse(line));
  } catch {
    return false;
  }
}

/**
 * NDJSON or one JSON document, from the first two non-blank lines (trimmed, BOM removed): NDJSON
 * when the first line is a complete JSON object on its own, or — so one corrupt first record does
 * not turn a dump into a "document" — when the second is. A pretty-printed document fails both.
 */
export function detectFormat(firstLine: string, secondLine?: string): 'ndjson' | 'document' {
  if (firstLine.startsWith('[')) return 'document';
  if (parsesAsObject(firstLine)) return 'ndjson';
  if (secondLine !== undefined && parsesAsObject(secondLine)) return 'ndjson';
  return 'document';
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Whole-text convenience (small inputs, tests); files go through IngestService, which streams. */
export function parseRedditText(text: string): ParseOutput & { format: RedditFormat | 'empty' } {
  const body = stripBom(text);
  const lines = body.split(/\r?\n/);
  const nonBlank = lines.map((l, i) => ({ text: l.trim(), no: i + 1 })).filter((l) => l.text !== '');
  if (nonBlank.length === 0) return { format: 'empty', records: [], issues: [] };
  if (detectFormat(nonBlank[0].text, nonBlank[1]?.text) === 'document') {
    try {
      return parseJsonDocument(JSON.parse(body));
    } catch (err) {
      return { format: 'listing', records: [], issues: [{ at: 'document', reason: `not valid JSON (${(err as Error).message.slice(0, 80)})` }] };
    }
  }
  const out: ParseOutput = { records: [], issues: [] };
  let onlyListing = nonBlank.length === 1;
  for (const l of nonBlank) {
    const r = parseNdjsonLine(l.text, l.no);
    onlyListing &&= r.listing;
    out.records.push(...r.records);
    out.issues.push(...r.issues);
  }
  // A minified listing saved from the API is one line: report it as what it is.
  return { format: onlyListing ? 'listing' : 'ndjson', ...out };
}
