/**
 * Labels for `backtest --posts --labels FILE`, in the Reddit lab's format, and the scoring of a
 * replay against them. Pure: the command reads the files and prints; this parses text and compares
 * events with labels.
 *
 * A labels file is one JSON object with a `surges` array of `{"start", "end", "note"?}` and/or a
 * `stories` array of `{"first_post_at", "words": [...], "note"?}`. A kind whose key is absent from
 * every file is not scored (its events are neither caught nor false alarms); an empty array scores
 * it with no labels, so every event of that kind is a false alarm.
 */
import { LabelsParseError, parseTimestamp } from './detectors/backtest';
import { tokenize } from './detectors/tokenizer';

export interface SurgeLabel {
  readonly startMs: number;
  readonly endMs: number;
  readonly note?: string;
  /** Where it came from, for the report: `labels.json surges[2]`. */
  readonly ref: string;
}

export interface StoryLabel {
  readonly firstPostMs: number;
  readonly words: readonly string[];
  readonly note?: string;
  readonly ref: string;
}

export interface ReplayLabels {
  /** Undefined: no file had a `surges` key, so surge events are not scored. */
  readonly surges?: readonly SurgeLabel[];
  readonly stories?: readonly StoryLabel[];
}

/** What scoring needs of a replayed event: its kind, when it was emitted, and its data as delivered. */
export interface ScorableEvent {
  readonly type: string;
  readonly timeMs: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A story is caught by a velocity event from 10 minutes before its first post… */
export const STORY_EARLY_MS = 10 * 60_000;
/** …to 24 hours after it. */
export const STORY_LATE_MS = 24 * 3_600_000;

/** Parses one labels file. `name` prefixes nothing; errors name the field (`stories[3].words[0]`). */
export function parseReplayLabels(text: string, name: string): ReplayLabels {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new LabelsParseError(`not JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new LabelsParseError('expected a JSON object with a "surges" and/or a "stories" array');
  }
  const o = doc as Record<string, unknown>;
  if (!Object.hasOwn(o, 'surges') && !Object.hasOwn(o, 'stories')) {
    throw new LabelsParseError('has neither a "surges" nor a "stories" array (the lab\'s label format; NAB windows go with --series)');
  }
  return {
    ...(Object.hasOwn(o, 'surges') ? { surges: list(o.surges, 'surges').map((v, i) => surgeLabel(v, `surges[${i}]`, name)) } : {}),
    ...(Object.hasOwn(o, 'stories') ? { stories: list(o.stories, 'stories').map((v, i) => storyLabel(v, `stories[${i}]`, name)) } : {}),
  };
}

/** Several files as one: a kind is scored when any file has its key. */
export function mergeLabels(files: readonly ReplayLabels[]): ReplayLabels {
  const surges = files.some((f) => f.surges !== undefined) ? files.flatMap((f) => f.surges ?? []) : undefined;
  const stories = files.some((f) => f.stories !== undefined) ? files.flatMap((f) => f.stories ?? []) : undefined;
  return { ...(surges ? { surges } : {}), ...(stories ? { stories } : {}) };
}

function list(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw new LabelsParseError(`${where}: expected an array`);
  return v;
}

function object(v: unknown, where: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new LabelsParseError(`${where}: expected an object`);
  return v as Record<string, unknown>;
}

function time(o: Record<string, unknown>, key: string, where: string): number {
  const v = o[key];
  const t = typeof v === 'string' ? parseTimestamp(v.trim()) : null;
  if (t === null) throw new LabelsParseError(`${where}.${key}: expected an ISO 8601 time such as "2021-01-11T12:36:56Z", got ${JSON.stringify(v) ?? 'nothing'}`);
  return t;
}

function note(o: Record<string, unknown>, where: string): { note?: string } {
  if (o.note === undefined) return {};
  if (typeof o.note !== 'string') throw new LabelsParseError(`${where}.note: expected a string`);
  return { note: o.note };
}

function surgeLabel(v: unknown, where: string, name: string): SurgeLabel {
  const o = object(v, where);
  const startMs = time(o, 'start', where);
  const endMs = time(o, 'end', where);
  if (endMs < startMs) throw new LabelsParseError(`${where}.end: before start`);
  return { startMs, endMs, ...note(o, where), ref: `${name} ${where}` };
}

function storyLabel(v: unknown, where: string, name: string): StoryLabel {
  const o = object(v, where);
  const firstPostMs = time(o, 'first_post_at', where);
  const words = list(o.words, `${where}.words`);
  if (words.length === 0) throw new LabelsParseError(`${where}.words: expected at least one word`);
  words.forEach((w, i) => {
    if (typeof w !== 'string' || w.trim() === '') throw new LabelsParseError(`${where}.words[${i}]: expected a non-empty string`);
  });
  return { firstPostMs, words: words as string[], ...note(o, where), ref: `${name} ${where}` };
}

/**
 * The keywords a label word stands for, as the detector spells them: through the project's
 * tokenizer (`Movies` → `movy`, `$SOS` → `sos`); a word the tokenizer drops (a stopword, two
 * letters) is compared as written, lower-cased and without `$`.
 */
export function labelWordKeywords(word: string): string[] {
  const t = tokenize(word);
  return t.length > 0 ? t : [word.trim().toLowerCase().replace(/^\$/, '')];
}

/** The event's keywords: `keywords`, else `keyword`; anything else read defensively as none. */
function eventKeywords(data: Readonly<Record<string, unknown>>): string[] {
  const ks = Array.isArray(data.keywords) ? data.keywords.filter((k): k is string => typeof k === 'string') : [];
  if (typeof data.keyword === 'string') ks.push(data.keyword);
  return ks.map((k) => k.toLowerCase());
}

function isoMs(v: unknown): number | null {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : null;
}

/** A surge event's window; an event without one counts as the instant it was emitted. */
function surgeWindow(e: ScorableEvent): [number, number] {
  return [isoMs(e.data.window_start) ?? e.timeMs, isoMs(e.data.window_end) ?? e.timeMs];
}

export function surgeCatches(label: SurgeLabel, e: ScorableEvent): boolean {
  if (e.type !== 'trends.surge') return false;
  const [a, b] = surgeWindow(e);
  return a <= label.endMs && b >= label.startMs;
}

export function storyCatches(label: StoryLabel, e: ScorableEvent): boolean {
  if (e.type !== 'trends.velocity') return false;
  if (e.timeMs < label.firstPostMs - STORY_EARLY_MS || e.timeMs > label.firstPostMs + STORY_LATE_MS) return false;
  const keywords = new Set(eventKeywords(e.data));
  return label.words.some((w) => labelWordKeywords(w).some((k) => keywords.has(k)));
}

export interface LabelResult {
  readonly kind: 'surge' | 'story';
  readonly ref: string;
  readonly note?: string;
  /** The surge's start or the story's first post. */
  readonly onsetMs: number;
  /** The earliest event that caught it (index into the scored events), or null: missed. */
  readonly caughtBy: number | null;
  /** Event time − onset (ms); null when missed. */
  readonly delayMs: number | null;
}

export interface KindScore {
  readonly labels: number;
  readonly caught: number;
  readonly missed: number;
  /** Median delay of the caught labels (ms); null when none was caught. */
  readonly medianDelayMs: number | null;
  /** Events of the kind matching no label. */
  readonly falseAlarms: number;
  /** falseAlarms per day of posts (null without a span). */
  readonly falseAlarmsPerDay: number | null;
}

export interface LabelScore {
  readonly labels: readonly LabelResult[];
  /** Per labelled kind only: `surge` scores trends.surge, `story` trends.velocity. */
  readonly surge?: KindScore;
  readonly story?: KindScore;
  /** Indexes of the events that match no label of their (scored) kind. */
  readonly falseAlarms: readonly number[];
}

/**
 * Scores events against labels. `days` is the span of posts the replay saw (false alarms per day);
 * each label is caught by its earliest matching event, and an event matching any label is no false
 * alarm (a surge episode's later, grown event included).
 */
export function scoreReplay(events: readonly ScorableEvent[], labels: ReplayLabels, days: number): LabelScore {
  const results: LabelResult[] = [];
  const matched = new Set<number>();
  const kinds: { kind: 'surge' | 'story'; type: string; labels: readonly (SurgeLabel | StoryLabel)[] | undefined }[] = [
    { kind: 'surge', type: 'trends.surge', labels: labels.surges },
    { kind: 'story', type: 'trends.velocity', labels: labels.stories },
  ];
  const scores: Partial<Record<'surge' | 'story', KindScore>> = {};
  const falseAlarms: number[] = [];
  for (const k of kinds) {
    if (k.labels === undefined) continue;
    const delays: number[] = [];
    for (const label of k.labels) {
      const onsetMs = 'startMs' in label ? label.startMs : label.firstPostMs;
      const catches = (e: ScorableEvent) => ('startMs' in label ? surgeCatches(label, e) : storyCatches(label, e));
      let caughtBy: number | null = null;
      events.forEach((e, i) => {
        if (!catches(e)) return;
        matched.add(i);
        if (caughtBy === null || e.timeMs < events[caughtBy].timeMs) caughtBy = i;
      });
      const delayMs = caughtBy === null ? null : events[caughtBy].timeMs - onsetMs;
      if (delayMs !== null) delays.push(delayMs);
      results.push({ kind: k.kind, ref: label.ref, ...(label.note !== undefined ? { note: label.note } : {}), onsetMs, caughtBy, delayMs });
    }
    const alarms = events.flatMap((e, i) => (e.type === k.type && !matched.has(i) ? [i] : []));
    falseAlarms.push(...alarms);
    scores[k.kind] = {
      labels: k.labels.length,
      caught: delays.length,
      missed: k.labels.length - delays.length,
      medianDelayMs: median(delays),
      falseAlarms: alarms.length,
      falseAlarmsPerDay: days > 0 ? alarms.length / days : null,
    };
  }
  return { labels: results, ...scores, falseAlarms: falseAlarms.sort((a, b) => a - b) };
}

export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}
