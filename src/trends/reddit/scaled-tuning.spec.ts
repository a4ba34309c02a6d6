import { scaledPollerTuning } from './scaled-tuning';

describe('scaledPollerTuning', () => {
  it('divides every wait by the scale and multiplies the quota by it', () => {
    const t = scaledPollerTuning(30, 20);
    expect(t.backoffMaxMs).toBe(2000);
    expect(t.pageOverlapMs).toBe(2000);
    expect(t.rateWindowMs).toBe(2_880_000);
    expect(t.quotaPerMinute).toBe(600);
    expect(t.tickMs).toBe(33);
  });

  it('keeps every wait at least 1 ms at any scale', () => {
    const t = scaledPollerTuning(1e9, 100);
    for (const [name, v] of Object.entries(t)) if (name !== 'quotaPerMinute') expect(v).toBe(1);
  });

  it('is the identity at scale 1', () => {
    expect(scaledPollerTuning(1, 100)).toMatchObject({ backoffBaseMs: 1000, soloCheckMaxMs: 24 * 3600_000, quotaPerMinute: 100, tickMs: 1000 });
  });
});
