import { AppError } from '../common/errors';

export const DEFAULT_PAGE_LIMIT = 25;
/** Hard cap of every list endpoint, whatever the plan allows. */
export const ENDPOINT_MAX_PAGE_SIZE = 100;

const DIGITS_RE = /^[0-9]+$/;

/** The largest `limit` a request may ask for: the lower of the endpoint cap and the plan's max_page_size. */
export function effectiveMaxPageSize(endpointCap: number, planMax: number): number {
  assertPositiveInteger(endpointCap, 'endpointCap');
  assertPositiveInteger(planMax, 'planMax');
  return Math.min(endpointCap, planMax);
}

/**
 * Parses the `limit` query value (string | string[] | undefined as Express gives it).
 * Only plain decimal digits are accepted, so '1.5', '1e2', ' 5', '+5', '0x10', '' and repeated
 * params are refused rather than coerced. Above `max` is an error, never silently truncated.
 * When `limit` is absent the default applies, lowered to `max` for plans whose max_page_size is
 * below it (the client asked for nothing, so there is nothing to truncate).
 */
export function parseLimit(raw: unknown, max: number, defaultLimit: number = DEFAULT_PAGE_LIMIT): number {
  assertPositiveInteger(max, 'max');
  assertPositiveInteger(defaultLimit, 'defaultLimit');
  if (raw === undefined) return Math.min(defaultLimit, max);

  // Built only when thrown: an error's stack trace is costly on every list request.
  const error = () => new AppError('BAD_REQUEST', `limit must be an integer between 1 and ${max}`);
  if (typeof raw !== 'string' || !DIGITS_RE.test(raw)) throw error();
  const n = Number(raw);
  if (n < 1 || n > max) throw error();
  return n;
}

function assertPositiveInteger(value: number, name: string): void {
  // A bad value here is configuration or code, not the client: plain Error → 500.
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
}
