import type { TrendhooksPrincipal } from '../auth/principal';
import { AppError } from '../common/errors';
import { newEndpointRow } from '../delivery/endpoint.entity';
import { InMemoryDeliveryQueue } from '../delivery/queue/in-memory-delivery-queue.fake';
import type { RecoverInput } from './recover-window';
import type { RecoverService } from './recover.service';
import { WebhookPause } from './webhook-pause';
import type { Webhook } from './webhook.store';

const NOW = new Date('2026-11-28T10:00:00.000Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('WebhookPause', () => {
  const alice: TrendhooksPrincipal = { tenantId: 'cus_alice', plan: 'business' };

  function setup(opts: { createdAgoMs?: number; refuse?: boolean } = {}) {
    const queue = new InMemoryDeliveryQueue();
    const asked: RecoverInput[] = [];
    const recovery = {
      recover: async (_caller: TrendhooksPrincipal, _id: string, input: RecoverInput) => {
        asked.push(input);
        if (opts.refuse) throw new AppError('RATE_LIMITED', 'one recover at a time per customer');
        return { queued: 3, next_since: null };
      },
    } as unknown as RecoverService;
    const pause = new WebhookPause(queue, recovery, { now: () => NOW });
    const w = (reason: 'manual' | 'gone' | 'failing', disabledAgoMs: number): Webhook => ({
      ...newEndpointRow({ id: '01JAAAAAAAAAAAAAAAAAAAAAAA', customerId: alice.tenantId, url: 'https://hooks.example.com/in', allowNonstandardPort: false, secret: 'enc:x', createdAt: new Date(NOW.getTime() - (opts.createdAgoMs ?? 30 * DAY)) }),
      disabledAt: new Date(NOW.getTime() - disabledAgoMs),
      disabledReason: reason,
      event: 'trends.surge',
      subreddit: 'rust',
    });
    return { queue, pause, w, asked };
  }

  it('offers, after a pause by hand, the recover of the pause itself, counted by a dry run', async () => {
    const { pause, w, asked } = setup();
    const r = await pause.resumed(alice, w('manual', 3 * HOUR));
    expect(r).toEqual({ released: 0, expired: 0, recover: { since: new Date(NOW.getTime() - 3 * HOUR).toISOString(), until: NOW.toISOString(), queued: 3, next_since: null } });
    expect(asked).toEqual([{ since: r.recover!.since, until: NOW.toISOString(), dry_run: true }]);
  });

  it('offers, after an automatic disable, the two days before it too: what it cancelled was created then', async () => {
    const { pause, w } = setup();
    expect((await pause.resumed(alice, w('gone', 3 * HOUR))).recover?.since).toBe(new Date(NOW.getTime() - 3 * HOUR - 2 * DAY).toISOString());
  });

  it('never offers a range before the webhook, nor one wider than a recover takes', async () => {
    const young = setup({ createdAgoMs: 5 * HOUR });
    expect((await young.pause.resumed(alice, young.w('failing', HOUR))).recover?.since).toBe(new Date(NOW.getTime() - 5 * HOUR).toISOString());
    const old = setup();
    expect((await old.pause.resumed(alice, old.w('manual', 20 * DAY))).recover?.since).toBe(new Date(NOW.getTime() - 14 * DAY).toISOString());
    // Paused and resumed within the same millisecond: nothing to offer.
    const instant = setup();
    expect((await instant.pause.resumed(alice, instant.w('manual', 0))).recover).toBeNull();
    expect(instant.asked).toEqual([]);
  });

  it('still offers the range when the recover budget refuses the dry run, without a count', async () => {
    const { pause, w } = setup({ refuse: true });
    expect((await pause.resumed(alice, w('manual', HOUR))).recover).toEqual({ since: new Date(NOW.getTime() - HOUR).toISOString(), until: NOW.toISOString(), queued: null, next_since: null });
  });

  it('holds the pending deliveries on a pause by hand only, and releases them on resume, cancelling those held past 14 days', async () => {
    const { queue, pause, w } = setup();
    const row = (id: string, createdAgoMs: number) => ({
      id, eventId: `evt_${id}`, webhookId: w('manual', 0).id, customerId: alice.tenantId, state: 'pending' as const, attempts: 1,
      nextAttemptAt: NOW, leaseOwner: null, lastError: 'http_503', lastResponseCode: 503, createdAt: new Date(NOW.getTime() - createdAgoMs), updatedAt: NOW, deliveredAt: null,
    });
    queue.deliveries.push(row('msg_new', HOUR), row('msg_old', 15 * DAY));
    await pause.paused(w('gone', 0));
    expect(queue.deliveries.map((d) => d.state)).toEqual(['pending', 'pending']);
    await pause.paused(w('manual', 0));
    expect(queue.deliveries.map((d) => d.state)).toEqual(['held', 'held']);
    expect(await pause.resumed(alice, w('manual', HOUR))).toMatchObject({ released: 1, expired: 1 });
    expect(queue.deliveries.map((d) => [d.id, d.state, d.lastError])).toEqual([['msg_new', 'pending', 'http_503'], ['msg_old', 'cancelled', 'hold_expired']]);
  });
});
