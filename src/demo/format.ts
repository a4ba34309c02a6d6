/** One readable line per delivered trend event (the figures of src/trends/trends.pipeline.ts toTrendEvent). */

type Data = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

function fixed(v: unknown, digits = 1): string {
  const n = num(v);
  return Number.isNaN(n) ? '?' : n.toFixed(digits);
}

function percent(v: unknown): string {
  const n = num(v) * 100;
  if (Number.isNaN(n)) return '?';
  return n >= 10 ? `${Math.round(n)}%` : `${n.toFixed(1)}%`;
}

function minutes(startIso: unknown, endIso: unknown): string {
  const ms = Date.parse(String(endIso)) - Date.parse(String(startIso));
  return Number.isFinite(ms) ? `${Math.round(ms / 60_000)} min` : '? min';
}

function ellipsis(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** `2026-03-03 13:05Z`: the simulated time the trend became visible. */
export function shortTime(iso: unknown): string {
  const ms = Date.parse(String(iso));
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + 'Z' : '????-??-?? ??:??Z';
}

/** When the event's trend was visible (simulated time), for the line's timestamp. */
export function eventTime(type: string, data: Data): unknown {
  return type === 'trends.rising' ? data.observed_at : data.window_end;
}

/** The key figures of one event, e.g. `27 posts in 5 min vs 5.0 expected (z=9.6)`. */
export function describeFigures(type: string, data: Data): string {
  switch (type) {
    case 'trends.surge':
      return `${data.count} posts in ${minutes(data.window_start, data.window_end)} vs ${fixed(data.baseline)} expected (z=${fixed(data.score)})`;
    case 'trends.velocity':
      return `"${data.keyword}" in ${data.count} of ${data.posts} posts in ${minutes(data.window_start, data.window_end)} (${percent(data.share)} vs ${percent(data.baseline_share)} usual, score ${fixed(data.score)})`;
    case 'trends.rising':
      return `"${ellipsis(String(data.title), 48)}" +${Math.round(num(data.growth_per_hour))}/h at ${data.age_minutes} min old (usual ${fixed(data.baseline_per_hour)}/h, z=${fixed(data.z_score)})`;
    default:
      return JSON.stringify(data);
  }
}

export function deliveryLine(d: { type: string; subreddit: string; data: Data; msgId: string; verified: boolean; reason?: string }): string {
  const mark = d.verified ? '✔' : '✘';
  const check = d.verified ? 'signature verified' : `signature NOT verified (${d.reason ?? 'unknown'})`;
  return `${mark} ${shortTime(eventTime(d.type, d.data))} ${d.type.padEnd(15)} r/${d.subreddit} ${describeFigures(d.type, d.data)} — webhook-id ${d.msgId}, ${check}`;
}
