import { AppError } from '../common/errors';
import { DELIVERY_STATES } from '../delivery/delivery.resource';
import type { DeliveryFilter } from '../delivery/queue/types';

/** The delivery log's filter query parameters, as they arrive. */
export interface DeliveryFilterQuery {
  state?: unknown;
  since?: unknown;
  until?: unknown;
}

// An instant: a date, a time and a zone (Z or ±hh:mm); seconds and fractions optional.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** An ISO 8601 instant with its zone, or null: no date-only forms, no local times, no 30 February. */
export function parseInstant(text: string): Date | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return null;
  const t = Date.parse(text.toUpperCase());
  return Number.isFinite(t) ? new Date(t) : null;
}

function single(name: string, v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError('VALIDATION_ERROR', `${name} must be given once`);
  return v;
}

function instant(name: string, v: unknown): Date | undefined {
  const text = single(name, v);
  if (text === undefined) return undefined;
  const at = parseInstant(text);
  if (!at) throw new AppError('VALIDATION_ERROR', `${name} must be an ISO 8601 date and time with a zone, e.g. 2026-11-28T07:00:00Z`);
  return at;
}

/**
 * `state`, `since` and `until` of `GET /v1/webhooks/{id}/deliveries`: one of the delivery states,
 * and a half-open range [since, until) of creation times. Anything else is VALIDATION_ERROR
 * naming the parameter.
 */
export function parseDeliveryFilter(query: DeliveryFilterQuery): DeliveryFilter {
  const out: DeliveryFilter = {};
  const state = single('state', query.state);
  if (state !== undefined) {
    if (!(DELIVERY_STATES as readonly string[]).includes(state)) throw new AppError('VALIDATION_ERROR', `state must be one of ${DELIVERY_STATES.join(', ')}`);
    out.state = state as DeliveryFilter['state'];
  }
  out.since = instant('since', query.since);
  out.until = instant('until', query.until);
  if (out.since && out.until && out.since >= out.until) throw new AppError('VALIDATION_ERROR', 'since must be before until');
  if (!out.since) delete out.since;
  if (!out.until) delete out.until;
  return out;
}

/** The filter as cursor parameters: a cursor is bound to the filters it was issued with. */
export function filterParams(filter: DeliveryFilter): Record<string, string> {
  const p: Record<string, string> = {};
  if (filter.state !== undefined) p.state = filter.state;
  if (filter.since) p.since = filter.since.toISOString();
  if (filter.until) p.until = filter.until.toISOString();
  return p;
}
