/**
 * `trendhooks backtest --posts FILE [--labels FILE]… [--json] [--plot out.svg]`: Reddit posts
 * replayed through the trend pipeline (replay.ts); each event printed with its delay after its onset
 * (replay-report.ts), optionally scored against the lab's labels (replay-labels.ts), then a one-line
 * summary. The file I/O and the wording live here; what is computed is in those pure modules.
 *
 * Output (stdout), in both modes: the events in emission order, then with --labels one line per
 * label, then one summary line. In --json mode only event lines have a top-level `type`: a reader
 * that counts "JSON lines with `type`" as events counts exactly the events.
 */
import * as path from 'node:path';
import { AppError } from '../common/errors';
import { plural } from '../common/plural';
import { LabelsParseError } from './detectors/backtest';
import type { BacktestPoint } from './detectors/backtest';
import { backtestSvg } from './detectors/plot';
import { EVENT_CATALOGUE, EventKind, ReceivedData } from '../events/catalogue';
import { parseRedditText, RedditPost } from '../posts/reddit-parse';
import { describeMs, readText, writePlot } from './command-files';
import { replayPosts } from './replay';
import { LabelScore, mergeLabels, parseReplayLabels, ReplayLabels, scoreReplay } from './replay-labels';
import { dataSpan, delayMinutes, eventOnset, formatDelay, Onset, ONSET_WORDS, StoryOnsets, summarize } from './replay-report';
import type { DataSpan, ReplaySummary } from './replay-report';

export interface PostsReplayOptions {
  json?: boolean;
  /** Label files in the lab's format (`{"surges": […], "stories": […]}`), merged. */
  labels?: readonly string[];
  plot?: string;
}

interface ShownEvent {
  type: EventKind;
  subreddit: string;
  timeMs: number;
  data: Record<string, unknown>;
  onset: Onset | null;
  delayMs: number | null;
}

const POSTS_PLOT_BUCKET_MS = 30 * 60_000;

export function runPostsReplay(file: string, opts: PostsReplayOptions, out: (line: string) => void, err: (line: string) => void): void {
  const parsed = parseRedditText(readText(file, 'posts'));
  if (parsed.records.length === 0) {
    const why = parsed.issues[0] ? `${parsed.issues[0].at}: ${parsed.issues[0].reason}` : 'the file is empty';
    throw new AppError('VALIDATION_ERROR', `${file}: no Reddit post could be read (${why})`);
  }
  // Labels are read before the replay runs: a bad file is one error line, and nothing is printed.
  const labels = opts.labels && opts.labels.length > 0 ? mergeLabels(opts.labels.map(readLabels)) : undefined;
  const posts = parsed.records.map((r) => r.post);
  const run = replayPosts(posts);
  let stories: StoryOnsets | undefined;
  const events: ShownEvent[] = run.events.map((e) => {
    const data: Record<string, unknown> = { event_id: e.event.id, subreddit: e.subreddit, ...(e.event.data as unknown as Record<string, unknown>) };
    // The fallback index is built only when a velocity event does not carry first_post_at.
    const needsStories = e.type === 'trends.velocity' && typeof data.first_post_at !== 'string';
    if (needsStories && stories === undefined) stories = new StoryOnsets(posts);
    const onset = eventOnset({ type: e.type, subreddit: e.subreddit, timeMs: e.timeMs, data }, stories);
    return { type: e.type, subreddit: e.subreddit, timeMs: e.timeMs, data, onset, delayMs: onset === null ? null : e.timeMs - onset.onsetMs };
  });
  const span = dataSpan(posts.map((p) => p.createdAtMs));
  const days = span?.days ?? 0;
  const score = labels ? scoreReplay(events, labels, days) : undefined;
  const summary = summarize(events, days);

  if (opts.plot !== undefined) writePlot(opts.plot, replaySvg(file, posts, run.posts, events, labels));
  if (!opts.json) {
    const subs = Object.entries(run.posts)
      .map(([s, n]) => `r/${s} ${n}`)
      .join(', ');
    err(`replayed ${parsed.records.length} posts (${subs}), ${parsed.issues.length} skipped; ${run.events.length} events`);
    if (opts.plot !== undefined) err(`plot written to ${opts.plot}`);
  }
  const alarms = new Set(score?.falseAlarms ?? []);
  const scored = (type: string) => (type === 'trends.surge' && score?.surge) || (type === 'trends.velocity' && score?.story);
  events.forEach((e, i) => out(opts.json ? eventJson(e, scored(e.type) ? alarms.has(i) : undefined) : eventText(e, scored(e.type) ? alarms.has(i) : undefined)));
  if (score) for (const line of labelLines(score, events, opts.json === true)) out(line);
  out(opts.json ? JSON.stringify({ summary: summaryJson(summary, span, score) }) : summaryText(summary, score));
}

function readLabels(file: string): ReplayLabels {
  try {
    return parseReplayLabels(readText(file, 'labels'), path.basename(file));
  } catch (e) {
    if (e instanceof LabelsParseError) throw new AppError('VALIDATION_ERROR', `labels ${file}: ${e.message}`);
    throw e;
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

function eventJson(e: ShownEvent, falseAlarm: boolean | undefined): string {
  return JSON.stringify({
    type: e.type,
    subreddit: e.subreddit,
    time: iso(e.timeMs),
    onset: e.onset === null ? null : iso(e.onset.onsetMs),
    onset_from: e.onset?.from ?? null,
    delay_min: delayMinutes(e.delayMs),
    ...(falseAlarm !== undefined ? { false_alarm: falseAlarm } : {}),
    data: e.data,
  });
}

function eventText(e: ShownEvent, falseAlarm: boolean | undefined): string {
  const what = EVENT_CATALOGUE[e.type].describe(e.data as ReceivedData);
  const delay = e.onset === null ? 'delay unknown' : `${formatDelay(e.delayMs)} ${ONSET_WORDS[e.onset.from]} (${iso(e.onset.onsetMs)})`;
  return `${iso(e.timeMs)}  ${e.type}  r/${e.subreddit}  ${what}; ${delay}${falseAlarm ? '  [false alarm: matches no label]' : ''}`;
}

function labelLines(score: LabelScore, events: readonly ShownEvent[], json: boolean): string[] {
  return score.labels.map((l) => {
    const by = l.caughtBy === null ? null : events[l.caughtBy];
    if (json) {
      return JSON.stringify({
        label: {
          ref: l.ref,
          kind: l.kind,
          ...(l.note !== undefined ? { note: l.note } : {}),
          onset: iso(l.onsetMs),
          caught: by !== null,
          event_id: by?.data.event_id ?? null,
          event_time: by === null ? null : iso(by.timeMs),
          delay_min: delayMinutes(l.delayMs),
        },
      });
    }
    const name = `label ${l.ref}${l.note !== undefined ? ` "${l.note}"` : ''} (${l.kind === 'surge' ? 'surge from' : 'story, first post'} ${iso(l.onsetMs)})`;
    if (by === null) return `${name}: missed`;
    return `${name}: caught by the ${by.type} event at ${iso(by.timeMs)}, ${formatDelay(l.delayMs)} after its ${l.kind === 'surge' ? 'start' : 'first post'}`;
  });
}

const perDay = (x: number | null) => (x === null ? 'n/a' : x.toFixed(2));
const round3 = (x: number | null) => (x === null ? null : Math.round(x * 1000) / 1000);

function summaryText(s: ReplaySummary, score: LabelScore | undefined): string {
  const kinds = Object.entries(s.byKind).map(
    ([type, k]) => `${type.replace(/^trends\./, '')} ${k.events} (${perDay(k.perDay)} a day, median delay ${formatDelay(k.medianDelayMs)})`,
  );
  let line = `summary: ${plural(s.events, 'event')} in ${s.days.toFixed(1)} days with posts (${perDay(s.perDay)} a day)${kinds.length > 0 ? `: ${kinds.join(', ')}` : ''}`;
  if (score) {
    const parts = (['surge', 'story'] as const).flatMap((k) => {
      const ks = score[k];
      if (!ks) return [];
      return [
        `${k === 'surge' ? 'surges' : 'stories'} caught ${ks.caught} of ${ks.labels}, missed ${ks.missed}` +
          `${ks.caught > 0 ? ` (median delay ${formatDelay(ks.medianDelayMs)})` : ''}, false alarms ${ks.falseAlarms} (${perDay(ks.falseAlarmsPerDay)} a day)`,
      ];
    });
    line += `; labels: ${parts.join('; ')}`;
  }
  return line;
}

function summaryJson(s: ReplaySummary, span: DataSpan | null, score: LabelScore | undefined): Record<string, unknown> {
  const byKind = Object.fromEntries(
    Object.entries(s.byKind).map(([type, k]) => [type, { events: k.events, per_day: round3(k.perDay), median_delay_min: delayMinutes(k.medianDelayMs) }]),
  );
  const labels = score
    ? Object.fromEntries(
        (['surge', 'story'] as const).flatMap((k) => {
          const ks = score[k];
          if (!ks) return [];
          return [
            [
              k === 'surge' ? 'surges' : 'stories',
              {
                labels: ks.labels,
                caught: ks.caught,
                missed: ks.missed,
                median_delay_min: delayMinutes(ks.medianDelayMs),
                false_alarms: ks.falseAlarms,
                false_alarms_per_day: round3(ks.falseAlarmsPerDay),
              },
            ],
          ];
        }),
      )
    : undefined;
  return {
    events: s.events,
    days: round3(s.days),
    events_per_day: round3(s.perDay),
    first_post: span === null ? null : iso(span.firstMs),
    last_post: span === null ? null : iso(span.lastMs),
    data_gaps: (span?.gaps ?? []).map((g) => ({ from: iso(g.startMs), to: iso(g.endMs) })),
    by_kind: byKind,
    ...(labels ? { labels } : {}),
  };
}

/** The busiest subreddit's posts per 30 min (stretches with no data left out), its events and the labels. */
function replaySvg(file: string, posts: readonly RedditPost[], counts: Record<string, number>, events: readonly ShownEvent[], labels: ReplayLabels | undefined): string {
  const subreddit = Object.entries(counts).sort((a, b) => b[1] - a[1])[0][0];
  const own = posts.filter((p) => p.subreddit === subreddit);
  const gaps = dataSpan(own.map((p) => p.createdAtMs))?.gaps ?? [];
  return backtestSvg(postsPerBucket(own, POSTS_PLOT_BUCKET_MS, gaps), {
    title: `r/${subreddit} — ${path.basename(file)} replayed through the trend pipeline`,
    yLabel: `posts per ${describeMs(POSTS_PLOT_BUCKET_MS)}`,
    events: events.filter((e) => e.subreddit === subreddit).map((e) => ({ timeMs: e.timeMs, kind: e.type, label: eventLabel(e) })),
    gaps,
    windows: labels?.surges?.map((l) => ({ startMs: l.startMs, endMs: l.endMs })),
    windowsName: 'labelled surges',
    marks: labels?.stories?.map((l) => ({ timeMs: l.firstPostMs, label: `${l.words.join(' ')}${l.note ? ` (${l.note})` : ''}` })),
  });
}

/**
 * Posts per bucket from the first post to the last; a bucket with no post is a zero, unless it lies
 * in a stretch with no data (`gaps`), where it is left out so the plot breaks there.
 */
export function postsPerBucket(posts: readonly RedditPost[], bucketMs: number, gaps: readonly { startMs: number; endMs: number }[]): BacktestPoint[] {
  const counts = new Map<number, number>();
  for (const p of posts) {
    const b = Math.floor(p.createdAtMs / bucketMs) * bucketMs;
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  if (counts.size === 0) return [];
  const starts = [...counts.keys()];
  const first = Math.min(...starts);
  const last = Math.max(...starts);
  const inGap = (b: number) => gaps.some((g) => b >= g.startMs && b + bucketMs <= g.endMs);
  const points: BacktestPoint[] = [];
  for (let b = first; b <= last; b += bucketMs) {
    const value = counts.get(b) ?? 0;
    if (value === 0 && inGap(b)) continue;
    points.push({ timestamp: b, rowTimestamp: b, rows: 1, value, score: 0, expected: NaN, upper: NaN, detected: false });
  }
  return points;
}

function eventLabel(e: ShownEvent): string {
  const what = Array.isArray(e.data.keywords) ? `${e.type}: ${(e.data.keywords as string[]).join(' + ')}` : e.type;
  return e.delayMs === null ? what : `${what} (+${formatDelay(e.delayMs)})`;
}
