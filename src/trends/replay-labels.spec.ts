import { LabelsParseError } from './detectors/backtest';
import { labelWordKeywords, mergeLabels, median, parseReplayLabels, ScorableEvent, scoreReplay } from './replay-labels';

const MIN = 60_000;
const T = Date.parse('2021-01-11T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function surge(timeMs: number, startMs: number, endMs: number): ScorableEvent {
  return { type: 'trends.surge', timeMs, data: { window_start: iso(startMs), window_end: iso(endMs) } };
}
function velocity(timeMs: number, keywords: string[]): ScorableEvent {
  return { type: 'trends.velocity', timeMs, data: { keyword: keywords[0], keywords } };
}

describe('parseReplayLabels', () => {
  it('reads surges and stories, either key alone', () => {
    const both = parseReplayLabels(
      JSON.stringify({ surges: [{ start: '2021-01-11T14:00:00Z', end: '2021-01-11T16:00:00Z', note: 'open' }], stories: [{ first_post_at: '2021-01-11T12:36:56Z', words: ['Cohen'] }] }),
      'l.json',
    );
    expect(both.surges).toEqual([{ startMs: Date.parse('2021-01-11T14:00:00Z'), endMs: Date.parse('2021-01-11T16:00:00Z'), note: 'open', ref: 'l.json surges[0]' }]);
    expect(both.stories![0]).toMatchObject({ firstPostMs: Date.parse('2021-01-11T12:36:56Z'), words: ['Cohen'], ref: 'l.json stories[0]' });
    const only = parseReplayLabels('{"stories": []}', 'x');
    expect(only.surges).toBeUndefined();
    expect(only.stories).toEqual([]);
  });

  it.each([
    ['not json', /^not JSON/],
    ['[]', /expected a JSON object/],
    ['{"windows": []}', /neither a "surges" nor a "stories"/],
    ['{"surges": {}}', /^surges: expected an array/],
    ['{"surges": [3]}', /^surges\[0\]: expected an object/],
    ['{"surges": [{"start": "2021-01-11T14:00:00Z", "end": "soon"}]}', /^surges\[0\]\.end: expected an ISO 8601 time .* got "soon"/],
    ['{"surges": [{"start": "2021-01-11T14:00:00Z"}]}', /^surges\[0\]\.end: expected an ISO 8601 time .* got nothing/],
    ['{"surges": [{"start": "2021-01-11T14:00:00Z", "end": "2021-01-11T13:00:00Z"}]}', /^surges\[0\]\.end: before start/],
    ['{"stories": [{"first_post_at": "2021-01-11T14:00:00Z", "words": []}]}', /^stories\[0\]\.words: expected at least one word/],
    ['{"stories": [{"first_post_at": "2021-01-11T14:00:00Z", "words": ["a", 3]}]}', /^stories\[0\]\.words\[1\]: expected a non-empty string/],
    ['{"stories": [{"first_post_at": "2021-01-11T14:00:00Z", "words": ["a"], "note": 1}]}', /^stories\[0\]\.note: expected a string/],
  ])('names the field of a bad file: %s', (text, msg) => {
    expect(() => parseReplayLabels(text, 'f')).toThrow(LabelsParseError);
    expect(() => parseReplayLabels(text, 'f')).toThrow(msg);
  });

  it('merges files: a kind is scored when any file has its key', () => {
    const a = parseReplayLabels('{"surges": []}', 'a');
    const b = parseReplayLabels('{"stories": [{"first_post_at": "2021-01-11T14:00:00Z", "words": ["x"]}]}', 'b');
    expect(mergeLabels([a, b])).toEqual({ surges: [], stories: b.stories });
    expect(mergeLabels([a]).stories).toBeUndefined();
  });
});

describe('labelWordKeywords', () => {
  it("compares as the detector spells keywords: stems, cashtags, and words the tokenizer drops as written", () => {
    expect(labelWordKeywords('Movies')).toEqual(['movy']);
    expect(labelWordKeywords('$SOS')).toEqual(['sos']);
    expect(labelWordKeywords('Cohen')).toEqual(['cohen']);
    expect(labelWordKeywords('on')).toEqual(['on']);
  });
});

describe('scoreReplay', () => {
  const labels = parseReplayLabels(
    JSON.stringify({
      surges: [
        { start: iso(T + 120 * MIN), end: iso(T + 240 * MIN) },
        { start: iso(T + 2000 * MIN), end: iso(T + 2060 * MIN) },
      ],
      stories: [
        { first_post_at: iso(T), words: ['Ryan', 'Cohen'] },
        { first_post_at: iso(T + 600 * MIN), words: ['movies'] },
        { first_post_at: iso(T + 900 * MIN), words: ['sos'] },
      ],
    }),
    'l.json',
  );

  it('catches surges by window overlap and stories by words within [first post − 10 min, + 24 h], with delays and false alarms', () => {
    const events = [
      velocity(T - 5 * MIN, ['cohen']), // 0: 5 min before the first post: still the story's
      surge(T + 150 * MIN, T + 130 * MIN, T + 145 * MIN), // 1: inside the first surge
      surge(T + 300 * MIN, T + 100 * MIN, T + 300 * MIN), // 2: overlaps it too, later: no false alarm
      velocity(T + 640 * MIN, ['movy', 'trailer']), // 3: "movies" stems to movy
      velocity(T + 900 * MIN - 11 * MIN, ['sos']), // 4: 11 min early: not the story's
      velocity(T + 900 * MIN + 25 * 60 * MIN, ['sos']), // 5: 25 h late
      surge(T + 3000 * MIN, T + 2990 * MIN, T + 3000 * MIN), // 6: no label
      { type: 'trends.rising', timeMs: T, data: {} }, // 7: rising is not scored
    ];
    const s = scoreReplay(events, labels, 2);
    expect(s.labels.map((l) => [l.ref, l.caughtBy, l.delayMs])).toEqual([
      ['l.json surges[0]', 1, 30 * MIN],
      ['l.json surges[1]', null, null],
      ['l.json stories[0]', 0, -5 * MIN],
      ['l.json stories[1]', 3, 40 * MIN],
      ['l.json stories[2]', null, null],
    ]);
    expect(s.falseAlarms).toEqual([4, 5, 6]);
    expect(s.surge).toEqual({ labels: 2, caught: 1, missed: 1, medianDelayMs: 30 * MIN, falseAlarms: 1, falseAlarmsPerDay: 0.5 });
    expect(s.story).toEqual({ labels: 3, caught: 2, missed: 1, medianDelayMs: 17.5 * MIN, falseAlarms: 2, falseAlarmsPerDay: 1 });
  });

  it('a kind without labels is not scored; an empty list makes every event of the kind a false alarm', () => {
    const events = [surge(T, T - 10 * MIN, T), velocity(T, ['x'])];
    const s = scoreReplay(events, { surges: [] }, 0);
    expect(s.story).toBeUndefined();
    expect(s.surge).toMatchObject({ labels: 0, caught: 0, falseAlarms: 1, falseAlarmsPerDay: null, medianDelayMs: null });
    expect(s.falseAlarms).toEqual([0]);
  });

  it('reads event data defensively: no keywords, no window', () => {
    const s = scoreReplay([{ type: 'trends.velocity', timeMs: T, data: { keywords: 'cohen' } }, { type: 'trends.surge', timeMs: T + 150 * MIN, data: {} }], labels, 1);
    expect(s.story!.caught).toBe(0);
    expect(s.surge!.caught).toBe(1); // the instant it was emitted lies in the label
  });

  it('takes the earliest catching event for the delay', () => {
    const s = scoreReplay([velocity(T + 50 * MIN, ['ryan']), velocity(T + 20 * MIN, ['cohen'])], { stories: labels.stories }, 1);
    expect(s.labels[0]).toMatchObject({ caughtBy: 1, delayMs: 20 * MIN });
  });

  it('median', () => {
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
