/** One readable line per delivered trend event; each kind's figures are its `describe` in the event catalogue. */
import { EVENT_CATALOGUE, isEventKind } from '../events/catalogue';

type Data = Record<string, unknown>;

/** `2026-03-03 13:05Z`: the simulated time the trend became visible. */
export function shortTime(iso: unknown): string {
  const ms = Date.parse(String(iso));
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + 'Z' : '????-??-?? ??:??Z';
}

/** When the event's trend was visible (simulated time), for the line's timestamp. */
export function eventTime(type: string, data: Data): unknown {
  return data[isEventKind(type) ? EVENT_CATALOGUE[type].visibleAt : 'window_end'];
}

/** The key figures of one event, e.g. `27 posts in 5 min vs 5.0 expected (z=9.6)`; an unknown kind prints its data. */
export function describeFigures(type: string, data: Data): string {
  return isEventKind(type) ? EVENT_CATALOGUE[type].describe(data) : JSON.stringify(data);
}

/** The body's `type`, with ` (test)` after it on a test event (`data.test: true`): its figures are an example, not a trend. */
export function typeLabel(type: string, data: Data): string {
  return data.test === true ? `${type} (test)` : type;
}

export function deliveryLine(d: { type: string; subreddit: string; data: Data; msgId: string; verified: boolean; reason?: string }): string {
  const mark = d.verified ? '✔' : '✘';
  const check = d.verified ? 'signature verified' : `signature NOT verified (${d.reason ?? 'unknown'})`;
  return `${mark} ${shortTime(eventTime(d.type, d.data))} ${typeLabel(d.type, d.data).padEnd(15)} r/${d.subreddit} ${describeFigures(d.type, d.data)} — webhook-id ${d.msgId}, ${check}`;
}
