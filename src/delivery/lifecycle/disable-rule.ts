import type { DisabledReason } from '../endpoint.entity';

/** Default WEBHOOK_DISABLE_AFTER: five days of nothing but failures. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000;

/** The failure window is cut into this many periods (a day each by default)… */
export const DISABLE_PERIODS = 5;
/** …and failures must fall in at least this many distinct ones. */
export const MIN_FAILING_PERIODS = 3;

/**
 * Error classes that say nothing about the receiver, so they neither start nor advance the failure
 * clock (nor reset it): the worker died during the attempt (`worker_lost`), or the webhook's stored
 * secret could not be read and nothing was sent (`secret_unreadable`).
 */
export const UNCOUNTED_ERROR_CLASSES: readonly string[] = ['worker_lost', 'secret_unreadable'];

/** Whether a failed attempt of this class counts against its receiver. */
export function countsAsFailure(errorClass: string | null): boolean {
  return errorClass === null || !UNCOUNTED_ERROR_CLASSES.includes(errorClass);
}

/** The failure clock of one webhook, as stored (failing_since, failure_periods, last_failure_period). */
export interface FailureClock {
  failingSince: number | null;
  failurePeriods: number;
  lastFailurePeriod: number | null;
}

/** A counted failed attempt of one webhook: when it started, and whether the receiver answered 410 Gone. */
export interface FailedAttempt {
  at: number;
  gone: boolean;
}

/**
 * The auto-disable rule (Svix's, made explicit). A webhook's failure clock starts at the first
 * counted failed attempt after its last delivered one (or after it was resumed); any delivered
 * attempt stops it. The clock's window, `afterMs` (WEBHOOK_DISABLE_AFTER, 5 days by default), is
 * cut into DISABLE_PERIODS periods counted from that start (a day each by default). The webhook is
 * disabled (`failing`) by a failed attempt that starts at least `afterMs` after the clock started,
 * once failed attempts have fallen in at least MIN_FAILING_PERIODS distinct periods: failures
 * spread over time, so a burst — even one long after an old, isolated failure — never trips it,
 * while a receiver that is down for the whole window does (a retried delivery alone fails over
 * more than a day). A `410 Gone` answer disables it at once (`gone`). `afterMs` null: only 410
 * disables. The clock itself (start, stop) is kept by the status write of every outcome
 * (WebhookDeliveryStatus); this counts the periods of a failure and decides.
 *
 * Attempts the destination's circuit breaker puts off are no attempts: they neither fail nor
 * succeed here, so an outage the breaker shortens counts by the attempts actually made, and the
 * time span, not their number, decides.
 */
export function afterFailure(clock: FailureClock, failure: FailedAttempt, afterMs: number | null): FailureClock & { disable: DisabledReason | null } {
  if (failure.gone) return { ...clock, disable: 'gone' };
  // No clock running (a newer attempt was delivered since), or an attempt older than its start: nothing to count.
  const since = clock.failingSince;
  if (since === null || afterMs === null || failure.at < since) return { ...clock, disable: null };
  const period = Math.floor((failure.at - since) / (afterMs / DISABLE_PERIODS));
  const isNew = clock.lastFailurePeriod === null || period > clock.lastFailurePeriod;
  const next = {
    failingSince: since,
    failurePeriods: clock.failurePeriods + (isNew ? 1 : 0),
    lastFailurePeriod: isNew ? period : clock.lastFailurePeriod,
  };
  const failing = failure.at - since >= afterMs && next.failurePeriods >= MIN_FAILING_PERIODS;
  return { ...next, disable: failing ? 'failing' : null };
}

/**
 * afterFailure over a batch: each webhook's failures in time order, from its stored clock. Answers
 * the webhooks whose clock changed or that are to be disabled (at the first failure that trips it).
 */
export function applyFailures<R extends FailureClock & { id: string }>(
  rows: readonly R[],
  failures: readonly ({ webhookId: string } & FailedAttempt)[],
  afterMs: number | null,
): { row: R; clock: FailureClock; disable: DisabledReason | null }[] {
  const out: { row: R; clock: FailureClock; disable: DisabledReason | null }[] = [];
  for (const row of rows) {
    let clock: FailureClock = { failingSince: row.failingSince, failurePeriods: row.failurePeriods, lastFailurePeriod: row.lastFailurePeriod };
    let disable: DisabledReason | null = null;
    const mine = failures.filter((f) => f.webhookId === row.id).sort((a, b) => a.at - b.at);
    for (const f of mine) {
      const next = afterFailure(clock, f, afterMs);
      clock = { failingSince: next.failingSince, failurePeriods: next.failurePeriods, lastFailurePeriod: next.lastFailurePeriod };
      if (next.disable) {
        disable = next.disable;
        break;
      }
    }
    const changed = clock.failurePeriods !== row.failurePeriods || clock.lastFailurePeriod !== row.lastFailurePeriod;
    if (changed || disable) out.push({ row, clock, disable });
  }
  return out;
}
