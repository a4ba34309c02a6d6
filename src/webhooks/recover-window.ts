import { AppError } from '../common/errors';
import { parseInstant } from './delivery-filters';

/** The widest range one recover may cover. */
export const RECOVER_MAX_WINDOW_MS = 14 * 86_400_000;
/**
 * Events one recover call looks at, at most (oldest first): a busy subscription's two weeks may
 * be more, and the answer's `next_since` says where the next call goes on.
 */
export const RECOVER_MAX_EVENTS = 10_000;

/** A recover body, validated for shape (RecoverDto). */
export interface RecoverInput {
  since: string;
  until?: string | null;
  dry_run?: boolean | null;
}

export interface RecoverWindow {
  since: Date;
  until: Date;
  dryRun: boolean;
}

function instant(name: string, text: string): Date {
  const at = parseInstant(text);
  if (!at) throw new AppError('VALIDATION_ERROR', `${name} must be an ISO 8601 date and time with a zone, e.g. 2026-11-28T07:00:00Z`);
  return at;
}

/**
 * [since, until) of a recover: ISO 8601 instants with a zone (as the delivery log's filters),
 * `until` now when absent, since not in the future and before until, at most 14 days apart.
 * Anything else is VALIDATION_ERROR naming what is wrong.
 */
export function parseRecoverWindow(input: RecoverInput, now: Date): RecoverWindow {
  const since = instant('since', input.since);
  const until = input.until == null ? now : instant('until', input.until);
  if (since > now) throw new AppError('VALIDATION_ERROR', 'since must not be in the future');
  if (since >= until) throw new AppError('VALIDATION_ERROR', 'since must be before until');
  if (until.getTime() - since.getTime() > RECOVER_MAX_WINDOW_MS) throw new AppError('VALIDATION_ERROR', 'until must be at most 14 days after since');
  return { since, until, dryRun: input.dry_run === true };
}
