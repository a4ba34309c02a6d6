import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { PostEntity } from './post.entity';
import { PostStore } from './post.store';
import { detectFormat, ParseIssue, ParseOutput, parseJsonDocument, parseNdjsonLine, RedditFormat, RedditPost, stripBom } from './reddit-parse';

/** Told about every batch of posts just stored (the trends pipeline hooks in here). */
export interface IngestListener {
  onPostsUpserted(posts: readonly PostEntity[], info: IngestedInfo): void | Promise<void>;
  /** Posts just deleted because Reddit removed them (as they were stored): they stop counting. */
  onPostsRemoved?(posts: readonly PostEntity[]): void | Promise<void>;
}

export interface IngestedInfo {
  insertedIds: ReadonlySet<string>;
  /**
   * Set when the posts are a subreddit's backfilled history (its first read): the listener learns
   * from them but announces nothing about buckets that ended by this time.
   */
  backfillUntil?: Date;
}

/**
 * Optional provider of an IngestListener. PostsModule cannot see its importer's providers, so a
 * listener is provided from a global module (or a module PostsModule is given).
 */
export const INGEST_LISTENER = Symbol('trendhooks:ingest-listener');
export const InjectIngestListener = () => Inject(INGEST_LISTENER);

export interface IngestSummary {
  file: string;
  format: RedditFormat | 'empty';
  /** Records seen: read = inserted + updated + skipped. */
  read: number;
  inserted: number;
  updated: number;
  skipped: number;
  /** The first MAX_REPORTED_ERRORS skipped records, in file order. */
  errors: ParseIssue[];
  /** Stored records per (lower-cased) subreddit. */
  subreddits: Record<string, number>;
  duration_ms: number;
}

/** How far an ingest run is: bytes of the file read, and records seen so far. */
export interface IngestProgress {
  bytesRead: number;
  totalBytes: number;
  records: number;
}

export interface IngestFileOptions {
  maxDocumentBytes?: number;
  /** Called every PROGRESS_EVERY records and once at the end (the CLI's progress bar). */
  onProgress?: (progress: IngestProgress) => void;
}

export const PROGRESS_EVERY = 250;

/** The file cannot be ingested at all (missing, unreadable, too large as one document). */
export class IngestFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IngestFileError';
  }
}

export const INGEST_BATCH = 500;
export const MAX_REPORTED_ERRORS = 20;
/** A single JSON document is parsed in memory; NDJSON has no size limit (it streams). */
export const MAX_DOCUMENT_BYTES = 256 * 1024 * 1024;

/** A parsed post as stored: first seen and observed `now` unless a replay says when it was first seen. */
export function toPostEntity(p: RedditPost, now: Date, firstSeenAt: Date = now): PostEntity {
  return {
    id: p.id,
    subreddit: p.subreddit,
    author: p.author,
    authorKey: p.author.toLowerCase(),
    title: p.title,
    selftext: p.selftext,
    url: p.url,
    permalink: p.permalink,
    score: p.score,
    numComments: p.numComments,
    createdAt: new Date(p.createdAtMs),
    firstSeenAt,
    updatedAt: now,
  };
}

/** Counts, the error sample and the pending batch of one ingest run. */
class Run {
  readonly summary: IngestSummary;
  private pending: RedditPost[] = [];

  constructor(
    file: string,
    private readonly flushBatch: (posts: RedditPost[]) => Promise<{ inserted: number; updated: number }>,
  ) {
    this.summary = { file, format: 'empty', read: 0, inserted: 0, updated: 0, skipped: 0, errors: [], subreddits: {}, duration_ms: 0 };
  }

  async add(out: ParseOutput): Promise<void> {
    const s = this.summary;
    s.read += out.records.length + out.issues.length;
    s.skipped += out.issues.length;
    for (const issue of out.issues) if (s.errors.length < MAX_REPORTED_ERRORS) s.errors.push(issue);
    for (const { post } of out.records) {
      // hasOwn: a subreddit may be called r/constructor.
      s.subreddits[post.subreddit] = (Object.hasOwn(s.subreddits, post.subreddit) ? s.subreddits[post.subreddit] : 0) + 1;
      this.pending.push(post);
      if (this.pending.length >= INGEST_BATCH) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const r = await this.flushBatch(batch);
    this.summary.inserted += r.inserted;
    this.summary.updated += r.updated;
  }
}

@Injectable()
export class IngestService {
  constructor(
    private readonly posts: PostStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() @InjectIngestListener() private readonly listener?: IngestListener,
  ) {}

  /**
   * Stores parsed posts (insert, or refresh score, comments, title, text) and tells the listener;
   * `backfill`: they are history read on a subreddit's first poll (IngestedInfo.backfillUntil).
   */
  async upsertPosts(posts: readonly RedditPost[], opts: { backfill?: boolean } = {}): Promise<{ inserted: number; updated: number }> {
    const now = this.clock.now();
    const entities = posts.map((p) => toPostEntity(p, now));
    const { insertedIds } = await this.posts.upsertMany(entities);
    if (this.listener && entities.length > 0) await this.listener.onPostsUpserted(entities, opts.backfill ? { insertedIds, backfillUntil: now } : { insertedIds });
    return { inserted: insertedIds.size, updated: entities.length - insertedIds.size };
  }

  /**
   * Deletes posts removed or deleted on Reddit (Reddit's rule: no deleted content is kept) and
   * tells the listener which, as they were stored, so they stop counting as evidence. Returns how
   * many were stored.
   */
  async removePosts(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const stored = this.listener?.onPostsRemoved ? await this.posts.findByIds(ids) : [];
    const n = await this.posts.purge(ids);
    if (stored.length > 0) await this.listener!.onPostsRemoved!(stored);
    return n;
  }

  /**
   * Ingests a Reddit listing, a JSON array of listings, or NDJSON (streamed line by line, so any
   * size). Bad records are skipped and reported; only an unusable file throws IngestFileError.
   */
  async ingestFile(file: string, opts: IngestFileOptions = {}): Promise<IngestSummary> {
    const started = Date.now();
    const size = await fileSize(file);
    const run = new Run(file, (batch) => this.upsertPosts(batch));

    const stream = fs.createReadStream(file, { encoding: 'utf8' });
    let reported = 0;
    const progress = (bytesRead: number, final = false) => {
      if (!opts.onProgress) return;
      if (!final && run.summary.read - reported < PROGRESS_EVERY) return;
      reported = run.summary.read;
      opts.onProgress({ bytesRead: Math.min(bytesRead, size), totalBytes: size, records: run.summary.read });
    };
    const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
    // The first two non-blank lines decide the format; until then they wait here.
    const head: { text: string; no: number }[] = [];
    let format: 'ndjson' | 'document' | undefined;
    let nonBlank = 0;
    let onlyListing = true;
    const ndjsonLine = async (text: string, no: number) => {
      const r = parseNdjsonLine(text, no);
      onlyListing &&= r.listing;
      await run.add(r);
      progress(stream.bytesRead);
    };
    // Set while the loop body runs, so a database error there is not mistaken for a read error.
    let inBody = false;
    try {
      let no = 0;
      for await (const raw of lines) {
        no++;
        const text = (no === 1 ? stripBom(raw) : raw).trim();
        if (text === '') continue;
        inBody = true;
        nonBlank++;
        if (format === 'ndjson') {
          await ndjsonLine(text, no);
        } else {
          head.push({ text, no });
          if (head.length === 1 && detectFormat(text) === 'ndjson') format = 'ndjson';
          else if (head.length === 2) format = detectFormat(head[0].text, head[1].text);
          if (format === 'document') break;
          if (format === 'ndjson') for (const h of head.splice(0)) await ndjsonLine(h.text, h.no);
        }
        inBody = false;
      }
    } catch (err) {
      if (inBody) throw err;
      throw new IngestFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    } finally {
      lines.close();
      stream.destroy();
    }

    // One non-blank line that is not a JSON object on its own is still a (broken) document.
    if (format === undefined && head.length > 0) format = 'document';
    if (format === 'document') {
      run.summary.format = await this.ingestDocument(file, size, opts.maxDocumentBytes ?? MAX_DOCUMENT_BYTES, run);
    } else if (format === 'ndjson') {
      // A minified listing saved from the API is one line: report it as what it is.
      run.summary.format = nonBlank === 1 && onlyListing ? 'listing' : 'ndjson';
    }
    await run.flush();
    progress(size, true);
    run.summary.duration_ms = Date.now() - started;
    return run.summary;
  }

  private async ingestDocument(file: string, size: number, max: number, run: Run): Promise<RedditFormat> {
    if (size > max) {
      throw new IngestFileError(`${file} is one JSON document of ${size} bytes, over the ${max}-byte limit; convert it to NDJSON (one post per line), which streams`);
    }
    let text: string;
    try {
      text = stripBom(await fs.promises.readFile(file, 'utf8'));
    } catch (err) {
      throw new IngestFileError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      await run.add({ records: [], issues: [{ at: 'document', reason: `not valid JSON (${(err as Error).message.slice(0, 80)})` }] });
      return 'listing';
    }
    const parsed = parseJsonDocument(value);
    await run.add(parsed);
    return parsed.format;
  }
}

async function fileSize(file: string): Promise<number> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new IngestFileError(code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${code ?? (err as Error).message}`);
  }
  if (!stat.isFile()) throw new IngestFileError(`${file} is not a regular file`);
  return stat.size;
}
