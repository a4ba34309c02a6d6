import type { PollerTuning } from '../trends.options';

/**
 * The poller's time constants for a simulation where a minute passes in 60/`scale` real seconds
 * (the ingest bench and the ingest-outage suite): every wait is divided by `scale`, and Reddit's
 * quota of `quotaPerMinute` a simulated minute becomes that many per real minute times `scale`.
 */
export function scaledPollerTuning(scale: number, quotaPerMinute: number): Partial<PollerTuning> {
  const s = (ms: number) => Math.max(1, Math.round(ms / scale));
  return {
    backoffBaseMs: s(1000),
    backoffMaxMs: s(60_000),
    maxRetryAfterMs: s(10 * 60_000),
    failureBackoffMaxMs: s(30 * 60_000),
    unavailableBackoffMs: s(30 * 60_000),
    rereadMaxAgeMs: s(12 * 3600_000),
    rereadMinGapMs: s(10 * 60_000),
    rateWindowMs: s(24 * 3600_000),
    rateRefreshMs: s(5 * 60_000),
    pageOverlapMs: s(60_000),
    soloCheckMaxMs: s(24 * 3600_000),
    quotaPerMinute: quotaPerMinute * scale,
    tickMs: s(1000),
  };
}
