import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../common/clock';
import { AppError } from '../common/errors';
import { CursorCodec, CursorKeyRing, CursorPosition, DEFAULT_CURSOR_TTL_SECONDS } from './cursor-codec';
import { CursorKeys } from './cursor-keys';
import { effectiveMaxPageSize, ENDPOINT_MAX_PAGE_SIZE, parseLimit } from './limit';
import { buildPage, KeysetPageRequest, Page, PageInfoNextOnly, PageInfoWithPrev, toPageRequest } from './page';
import { PAGINATION_OPTIONS, PaginationModuleOptions } from './pagination.options';

export interface ListQuery {
  limit?: unknown;
  cursor?: unknown;
}

export interface PageScope {
  /** Route id the cursor is bound to, e.g. `webhooks.list`. */
  route: string;
  customerId: string;
  /** Route parameters the cursor is bound to (normalised: e.g. a lower-cased subreddit). */
  params: Record<string, string>;
  /** The plan's max_page_size. */
  planMaxPageSize: number;
  endpointCap?: number;
}

/** One list request: what to fetch, and how to turn the fetched rows into a page. */
export class PageContext {
  constructor(
    readonly request: KeysetPageRequest,
    private readonly scope: PageScope,
    private readonly codec: CursorCodec,
    private readonly now: Date,
  ) {}

  private issue = (position: CursorPosition, direction: 'next' | 'prev') =>
    this.codec.encode({ route: this.scope.route, customerId: this.scope.customerId, params: this.scope.params, position, direction }, this.now);

  withPrev<T>(rows: T[], keyOf: (row: T) => CursorPosition): Page<T, PageInfoWithPrev> {
    return buildPage(rows, this.request, keyOf, this.issue, { withPrev: true });
  }

  nextOnly<T>(rows: T[], keyOf: (row: T) => CursorPosition): Page<T, PageInfoNextOnly> {
    return buildPage(rows, this.request, keyOf, this.issue, { withPrev: false });
  }
}

/** `limit` + `cursor` for any list route (spec 8.1): strict limit, signed route-bound cursors, keyset only. */
@Injectable()
export class PaginationService {
  private readonly ttlSeconds: number;

  constructor(
    private readonly keys: CursorKeys,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(PAGINATION_OPTIONS) options: PaginationModuleOptions,
  ) {
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_CURSOR_TTL_SECONDS;
  }

  private codec?: { ring: CursorKeyRing; codec: CursorCodec };

  /** One codec per key ring (the ring is loaded once), not one per request. */
  private codecFor(ring: CursorKeyRing): CursorCodec {
    if (this.codec?.ring !== ring) this.codec = { ring, codec: new CursorCodec(ring, { ttlSeconds: this.ttlSeconds }) };
    return this.codec.codec;
  }

  async begin(query: ListQuery, scope: PageScope): Promise<PageContext> {
    const limit = parseLimit(query.limit, effectiveMaxPageSize(scope.endpointCap ?? ENDPOINT_MAX_PAGE_SIZE, scope.planMaxPageSize));
    const codec = this.codecFor(await this.keys.get());
    const now = this.clock.now();
    let decoded = null;
    if (query.cursor !== undefined) {
      if (typeof query.cursor !== 'string') throw new AppError('INVALID_CURSOR', 'cursor must be given once');
      decoded = codec.decode(query.cursor, { route: scope.route, customerId: scope.customerId, params: scope.params }, now);
    }
    return new PageContext(toPageRequest(limit, decoded), scope, codec, now);
  }
}
