import { FanOutPace } from './sqlite-delivery-queue';

describe('FanOutPace', () => {
  it('sizes the next slice so that its whole transaction, COMMIT included, fits 8 ms', () => {
    const pace = new FanOutPace();
    expect(pace.rows).toBe(512);
    // 512 rows took 16 ms whole (the statements alone had stopped under 8 ms: the COMMIT is the rest).
    pace.took(512, 16);
    expect(pace.rows).toBe(384); // halfway to the 256 that fit
    for (let i = 0; i < 20; i++) pace.took(pace.rows, (pace.rows * 16) / 512);
    expect(pace.rows).toBeGreaterThanOrEqual(256);
    expect(pace.rows).toBeLessThanOrEqual(260);
  });

  it('grows on a fast machine and stays within its bounds', () => {
    const pace = new FanOutPace();
    for (let i = 0; i < 40; i++) pace.took(pace.rows, 0.01);
    expect(pace.rows).toBe(8192);
    for (let i = 0; i < 40; i++) pace.took(pace.rows, 1000);
    expect(pace.rows).toBe(64);
    pace.took(0, 5); // an empty last slice tells nothing
    expect(pace.rows).toBe(64);
  });
});
