import * as net from 'node:net';
import { PrivateDestinationsService } from '../../src/auth/private-destinations.service';
import { EventsService } from '../../src/delivery/events.service';
import { startTestApp, TestApp } from '../support/app';
import { testDatabases } from '../support/databases';
import { pollUntil } from '../support/processes';

/**
 * Issue #25 item 7: behind a private grant, a failure before any response tells the customer
 * nothing about the customer's private network, its timing included. A closed port (refused at
 * once) and a port that never answers (a filtered one, or a listener that stalls the handshake)
 * show the same `duration_ms`, are recorded as late, and are due again at the same offset.
 */
const TIMEOUT_MS = 1500;

interface Attempt {
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error_class: string | null;
  response_excerpt: string | null;
}

describe.each(testDatabases())('private destination failures on %s', (_name, makeDb) => {
  let t: TestApp;
  let stall: net.Server;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    // Accepts and never says a word: the TLS handshake waits until the attempt's time limit.
    stall = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
    t = await startTestApp(makeDb(), {
      env: { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_RETRY_SCHEDULE: '30', DELIVERY_POLL_INTERVAL_MS: '50' },
      // No jitter: next_attempt_at is the attempt's end + 30 s exactly.
      random: () => 0.5,
    });
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => stall.close(() => resolve()));
    await t?.close();
  });

  it('reports a closed port and a stalled one alike: same duration_ms, same next attempt offset, no excerpt', async () => {
    const c = await t.customer();
    // A port that was just free: nothing listens there.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const stallPort = (stall.address() as net.AddressInfo).port;
    await t.app.get(PrivateDestinationsService).allow(c.customerId, `127.0.0.1/32:${closedPort},${stallPort}`);

    const subreddit = `pt${Math.random().toString(36).slice(2, 10)}`;
    const create = async (port: number) => {
      const res = await t.http().post('/v1/webhooks').set(c.auth).send({ url: `https://receiver.test:${port}/hook`, event: 'trends.surge', subreddit, allow_nonstandard_port: true });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const closed = await create(closedPort);
    const stalled = await create(stallPort);
    await t.app.get(EventsService).emit({ type: 'trends.surge', subreddit, data: { n: 1 } });

    const firstOf = async (id: string) => {
      const ds = await pollUntil(
        async () => (await t.http().get(`/v1/webhooks/${id}/deliveries`).set(c.auth)).body.data as { next_attempt_at: string | null; attempts: Attempt[] }[],
        (d) => d.length > 0 && d[0].attempts.length > 0 && d[0].next_attempt_at !== null,
        20_000,
      );
      return { attempt: ds[0].attempts[0], next: Date.parse(ds[0].next_attempt_at!) };
    };
    const [a, b] = await Promise.all([firstOf(closed), firstOf(stalled)]);
    for (const x of [a, b]) {
      expect(x.attempt).toMatchObject({ status_code: null, error_class: 'private_destination_error', response_excerpt: null, duration_ms: TIMEOUT_MS });
    }
    // When each was due again, counted from its start: the attempt's whole time limit, then the 30 s of the schedule.
    const offset = (x: { attempt: Attempt; next: number }) => x.next - Date.parse(x.attempt.started_at);
    expect(Math.abs(offset(a) - offset(b))).toBeLessThan(300);
    expect(offset(a)).toBeGreaterThanOrEqual(30_000 + TIMEOUT_MS - 50);
  });
});
