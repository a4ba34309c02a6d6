import { applyDecorators, SetMetadata, Type } from '@nestjs/common';
import { ApiBearerAuth, ApiParam, ApiQuery, ApiResponse, lazyDecorator } from './swagger';
import { EnvelopeKind, envelopeOf, ErrorEnvelopeSchema } from './schemas';

/** Names of the reusable response headers (components.headers, see document.ts). */
export const HEADER = {
  requestId: 'X-Request-Id',
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  rateLimit: 'RateLimit',
  rateLimitPolicy: 'RateLimit-Policy',
  retryAfter: 'Retry-After',
  wwwAuthenticate: 'WWW-Authenticate',
} as const;

export const BEARER = 'bearer';

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Headers on every answer of an operation: the request id, and the rate-limit fields on `/v1`. */
function headersFor(status: number, v1: boolean): Record<string, { $ref: string }> {
  const h: Record<string, { $ref: string }> = { [HEADER.requestId]: ref(HEADER.requestId) };
  if (v1) for (const n of [HEADER.limit, HEADER.remaining, HEADER.reset, HEADER.rateLimit, HEADER.rateLimitPolicy]) h[n] = ref(n);
  if (status === 401) h[HEADER.wwwAuthenticate] = ref(HEADER.wwwAuthenticate);
  if (status === 429 || status === 503) h[HEADER.retryAfter] = ref(HEADER.retryAfter);
  return h;
}

export interface ResponseDoc {
  v1?: boolean;
}

/** A success answer in the `{data, meta}` envelope around `model` (or a list of it). */
export function ApiEnvelopeResponse(status: number, model: Type<unknown>, name: string, description: string, kind: EnvelopeKind = 'one', opts: ResponseDoc = {}) {
  return ApiResponse({ status, description, type: envelopeOf(model, kind, name), headers: headersFor(status, opts.v1 ?? true) });
}

/** A success answer without a body (204). */
export function ApiEmptyResponse(status: number, description: string, opts: ResponseDoc = {}) {
  return ApiResponse({ status, description, headers: headersFor(status, opts.v1 ?? true) });
}

/** A success answer outside the envelope (health checks), described by a raw schema. */
export function ApiPlainResponse(status: number, description: string, schema: Record<string, unknown>, opts: ResponseDoc = {}) {
  return ApiResponse({ status, description, schema, headers: headersFor(status, opts.v1 ?? true) });
}

/** Error answers in the `{error}` envelope: `{400: 'VALIDATION_ERROR: …'}`. */
export function ApiErrorResponses(errors: Record<number, string>, opts: ResponseDoc = {}) {
  return applyDecorators(
    ...Object.entries(errors).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, type: ErrorEnvelopeSchema, headers: headersFor(Number(status), opts.v1 ?? true) }),
    ),
  );
}

/**
 * Class-level documentation of a `/v1` controller: the bearer API key and the errors every `/v1`
 * route can answer (authentication, rate limit, the database unavailable, the unexpected), plus 403 on Business+ routes.
 */
export function ApiV1Controller(opts: { businessPlus: boolean }) {
  const errors: Record<number, string> = {
    401: '`UNAUTHORIZED`: the API key is missing, malformed, unknown or revoked.',
    429: '`RATE_LIMITED`: over the plan\'s requests per minute; retry after `Retry-After` seconds.',
    500: '`INTERNAL_ERROR`: something unexpected; logged under the request id, no internals in the body.',
    503: '`SERVICE_UNAVAILABLE`: the database is unreachable or locked for now (a restart, a failover); retry after `Retry-After` seconds (a write whose connection was lost at its commit may still have been applied: list before re-creating).',
  };
  if (opts.businessPlus) errors[403] = '`PLAN_REQUIRED`: the route needs the Business plan or above.';
  return applyDecorators(ApiBearerAuth(BEARER), ApiErrorResponses(errors));
}

/** An operation without authentication (health checks). */
export function ApiNoAuth(): MethodDecorator & ClassDecorator {
  // `security: []` says "none" explicitly (ApiSecurity cannot express an empty list).
  return lazyDecorator((s) => SetMetadata(s.DECORATORS.API_SECURITY, []));
}

/** `?limit&cursor` of every list route. */
export function ApiListQuery(opts: { prev: boolean }) {
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      description: 'Page size, a plain positive integer up to min(100, the plan\'s max page size: free 25, pro 50, business/enterprise 100). Anything else is `400 BAD_REQUEST`.',
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: `\`meta.page.next_cursor\`${opts.prev ? ' or `meta.page.prev_cursor`' : ''} of an earlier page, as given. Bound to this route, its parameters and the caller; expires after 24 h (\`400 INVALID_CURSOR\`).`,
      schema: { type: 'string', minLength: 1 },
    }),
  );
}

/** `{webhook_id}`: a ULID (Crockford base32, any case); anything else is `400 VALIDATION_ERROR`. */
export function ApiWebhookIdParam() {
  return ApiParam({ name: 'webhook_id', description: 'The webhook id, a ULID (case-insensitive).', schema: { type: 'string', example: '01J9Z6K3W4Q8X2V7N5M1B0C9D8' } });
}
