import { DataSource } from 'typeorm';
import { AppError } from '../common/errors';
import { HealthController } from './health.controller';
import { HealthModuleOptions } from './health.options';

const dataSource = (query: () => Promise<unknown>) => ({ query }) as unknown as DataSource;
const never = () => new Promise(() => undefined);

async function notReady(controller: HealthController): Promise<AppError> {
  const err = await controller.readyz().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('HealthController', () => {
  const make = (options: HealthModuleOptions, query: () => Promise<unknown> = async () => [{ 1: 1 }]) => new HealthController(options, dataSource(query));

  it('is live without asking anything outside the process', () => {
    const query = jest.fn(never);
    expect(make({}, query).healthz()).toEqual({ status: 'ok' });
    expect(query).not.toHaveBeenCalled();
  });

  it('is ready with every check up, naming each', async () => {
    await expect(make({ pings: { redis: async () => 'PONG' } }).readyz()).resolves.toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
  });

  it('counts a check that does not answer within the timeout as down, and runs the checks together', async () => {
    const redis = jest.fn(never);
    const started = Date.now();
    const err = await notReady(make({ timeoutMs: 50, pings: { redis } }, never));
    // Both timed out at once, not one after the other.
    expect(Date.now() - started).toBeLessThan(1000);
    expect(redis).toHaveBeenCalledTimes(1);
    expect(err.message).toBe('not ready: database, redis unreachable');
  });

  it('names the failed check only, never its error', async () => {
    const err = await notReady(make({ pings: { redis: async () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:6379')) } }));
    expect(err.message).toBe('not ready: redis unreachable');
    expect(JSON.stringify(err)).not.toContain('ECONNREFUSED');
  });
});
