import type { PageRequest } from '../../pagination/page';
import type { AttemptEntity } from '../attempt.entity';
import type { DeliveryEntity } from '../delivery.entity';
import { DeliveryQueue } from './delivery-queue';
import { InProcessWaker } from './in-process.waker';
import { deliveryId } from '../delivery-id';
import { isTestEventId } from '../../events/catalogue';
import { eventsKeyset, lowerBound, mergeEventRows } from './events-keyset';
import type { ClaimedWork, DeliveryFilter, EventRow, EventSubscription, NewEvent, QueueActivityRows, QueueStats, RecordResult, RecoverOptions, RecoverResult, RecoverScope, Subscriber, WebhookHealthCounts } from './types';

/**
 * DeliveryQueue in memory, for the unit specs of the services above it: the outbox and the
 * delivery log's reads behave like the real queues. The worker's hot path (claims, outcomes) is
 * not faked: the conformance suite runs it on both real databases.
 */
export class InMemoryDeliveryQueue extends DeliveryQueue {
  readonly events = new Map<string, NewEvent>();
  readonly deliveries: DeliveryEntity[] = [];
  readonly attempts: AttemptEntity[] = [];
  async replayIsComplete(eventId: string): Promise<boolean> {
    return this.events.has(eventId);
  }

  async insertEventWithDeliveries(event: NewEvent, targeted: readonly Subscriber[], idFor: (webhookId: string) => string, now: Date) {
    if (this.events.has(event.id)) return { created: false, deliveries: 0 };
    this.events.set(event.id, event);
    let n = 0;
    for (const w of targeted) {
      const id = idFor(w.id);
      if (this.deliveries.some((d) => d.id === id)) continue;
      this.deliveries.push({
        id,
        eventId: event.id,
        webhookId: w.id,
        customerId: w.customerId,
        state: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        leaseOwner: null,
        lastError: null,
        lastResponseCode: null,
        createdAt: now,
        updatedAt: now,
        deliveredAt: null,
      });
      n++;
    }
    return { created: true, deliveries: n };
  }

  async pageForWebhook(webhookId: string, req: PageRequest, filter: DeliveryFilter = {}): Promise<DeliveryEntity[]> {
    const key = (d: DeliveryEntity): [number, string] => [d.createdAt.getTime(), d.id];
    const cmp = (a: [number, string], b: [number, string]) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    const pos = req.before ?? req.after;
    const rows = this.deliveries
      .filter((d) => d.webhookId === webhookId)
      .filter((d) => (filter.state === undefined || d.state === filter.state) && (!filter.since || d.createdAt >= filter.since) && (!filter.until || d.createdAt < filter.until))
      .filter((d) => !pos || (req.before ? cmp(key(d), [Number(pos[0]), String(pos[1])]) > 0 : cmp(key(d), [Number(pos[0]), String(pos[1])]) < 0))
      .sort((a, b) => (req.before ? cmp(key(a), key(b)) : cmp(key(b), key(a))));
    return rows.slice(0, req.limit + 1);
  }

  async healthOf(webhookIds: readonly string[], since: Date): Promise<Map<string, WebhookHealthCounts>> {
    const out = new Map<string, WebhookHealthCounts>();
    for (const w of webhookIds) {
      const ids = new Set(this.deliveries.filter((d) => d.webhookId === w && d.createdAt >= since).map((d) => d.id));
      const tries = this.attempts.filter((a) => ids.has(a.deliveryId));
      if (tries.length === 0) continue;
      const lastOk = Math.max(-1, ...tries.filter((a) => a.outcome === 'delivered').map((a) => a.startedAt.getTime()));
      out.set(w, {
        attempts: tries.length,
        delivered: tries.filter((a) => a.outcome === 'delivered').length,
        failingSinceDelivered: tries.filter((a) => a.outcome !== 'delivered' && a.startedAt.getTime() > lastOk).length,
      });
    }
    return out;
  }

  async findForWebhook(webhookId: string, id: string): Promise<DeliveryEntity | null> {
    return this.deliveries.find((d) => d.webhookId === webhookId && d.id === id) ?? null;
  }

  async attemptsFor(deliveryIds: string[]): Promise<AttemptEntity[]> {
    return this.attempts.filter((a) => deliveryIds.includes(a.deliveryId)).sort((a, b) => (a.deliveryId < b.deliveryId ? -1 : a.deliveryId > b.deliveryId ? 1 : a.startedAt.getTime() - b.startedAt.getTime() || a.attemptNo - b.attemptNo));
  }

  async requeue(id: string, now: Date): Promise<boolean> {
    const d = this.deliveries.find((x) => x.id === id && x.state !== 'delivering');
    if (!d) return false;
    Object.assign(d, { state: 'pending', nextAttemptAt: now, leaseOwner: null, updatedAt: now });
    return true;
  }

  async bringForward(ids: readonly string[], putOffUntil: Date, now: Date): Promise<number> {
    const moving = this.deliveries.filter((d) => ids.includes(d.id) && d.state === 'pending' && d.nextAttemptAt && d.nextAttemptAt > now && d.nextAttemptAt <= putOffUntil);
    for (const d of moving) Object.assign(d, { nextAttemptAt: now, updatedAt: now });
    return moving.length;
  }

  async cancelPendingForWebhook(webhookId: string, now: Date, lastError: string): Promise<number> {
    const pending = this.deliveries.filter((d) => d.webhookId === webhookId && (d.state === 'pending' || d.state === 'held'));
    for (const d of pending) Object.assign(d, { state: 'cancelled', nextAttemptAt: null, leaseOwner: null, lastError, updatedAt: now });
    return pending.length;
  }

  async holdPendingForWebhook(webhookId: string, now: Date): Promise<number> {
    const pending = this.deliveries.filter((d) => d.webhookId === webhookId && d.state === 'pending');
    for (const d of pending) Object.assign(d, { state: 'held', nextAttemptAt: null, leaseOwner: null, updatedAt: now });
    return pending.length;
  }

  async releaseHeldForWebhook(webhookId: string, now: Date, keepSince: Date, expiredError: string): Promise<{ released: number; expired: number }> {
    const held = this.deliveries
      .filter((d) => d.webhookId === webhookId && d.state === 'held')
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    const old = held.filter((d) => d.createdAt < keepSince);
    for (const d of old) Object.assign(d, { state: 'cancelled', lastError: expiredError, updatedAt: now });
    const kept = held.filter((d) => d.createdAt >= keepSince);
    for (const [i, d] of kept.entries()) Object.assign(d, { state: 'pending', nextAttemptAt: new Date(now.getTime() - kept.length + i), updatedAt: now });
    return { released: kept.length, expired: old.length };
  }

  async queueStats(now: Date): Promise<QueueStats> {
    const due = this.deliveries.filter((d) => (d.state === 'pending' || d.state === 'delivering') && d.nextAttemptAt && d.nextAttemptAt <= now);
    const oldest = Math.min(...due.map((d) => d.nextAttemptAt!.getTime()));
    return { due: due.length, oldestDueMs: due.length === 0 ? null : now.getTime() - oldest };
  }

  async recover(scope: RecoverScope, now: Date, opts: RecoverOptions): Promise<RecoverResult> {
    const from = Math.max(scope.since.getTime(), scope.subscribedAt.getTime());
    const rows = [...this.events.values()]
      .filter((e) => e.type === scope.type && e.subreddit === scope.subreddit && e.createdAt.getTime() >= from && e.createdAt < scope.until)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    const read = rows.slice(0, opts.maxEvents);
    let queued = 0;
    for (const [i, e] of read.entries()) {
      if (isTestEventId(e.id)) continue;
      const id = deliveryId(e.id, scope.webhookId);
      const dueAt = new Date(now.getTime() - opts.maxEvents + i);
      const d = this.deliveries.find((x) => x.id === id);
      if (d && (d.state === 'failed' || d.state === 'cancelled')) {
        if (!opts.dryRun) Object.assign(d, { state: 'pending', attempts: 0, nextAttemptAt: dueAt, leaseOwner: null, updatedAt: now });
        queued++;
      } else if (!d) {
        if (!opts.dryRun) {
          this.deliveries.push({ id, eventId: e.id, webhookId: scope.webhookId, customerId: scope.customerId, state: 'pending', attempts: 0, nextAttemptAt: dueAt, leaseOwner: null, lastError: null, lastResponseCode: null, createdAt: now, updatedAt: now, deliveredAt: null });
        }
        queued++;
      }
    }
    return { queued, nextSince: rows.length > opts.maxEvents ? rows[opts.maxEvents].createdAt : null, read: read.length };
  }

  async eventsPage(subscriptions: readonly EventSubscription[], req: PageRequest, since?: Date): Promise<EventRow[]> {
    const { op, dir, pos } = eventsKeyset(req);
    const beyond = (e: NewEvent) => {
      if (!pos) return true;
      const c = e.createdAt.getTime() - pos[0] || (e.id < pos[1] ? -1 : e.id > pos[1] ? 1 : 0);
      return op === '<' ? c < 0 : c > 0;
    };
    const rows = [...this.events.values()].filter(
      (e) => subscriptions.some((s) => s.type === e.type && s.subreddit === e.subreddit && e.createdAt.getTime() >= lowerBound(s.from, since)) && beyond(e) && !isTestEventId(e.id),
    );
    return mergeEventRows(rows.map((e) => ({ id: e.id, type: e.type, subreddit: e.subreddit, payload: e.payload, createdAt: e.createdAt })), dir, req.limit);
  }

  activity(): Promise<QueueActivityRows> {
    return notFaked('activity');
  }

  claimDue(): Promise<ClaimedWork[]> {
    return notFaked('claimDue');
  }

  recordAttempts(): Promise<RecordResult> {
    return notFaked('recordAttempts');
  }

  renewLeases(): Promise<string[]> {
    return notFaked('renewLeases');
  }

  logAttempt(): Promise<void> {
    return notFaked('logAttempt');
  }

  cancelClaimed(): Promise<void> {
    return notFaked('cancelClaimed');
  }

  holdClaimed(): Promise<boolean> {
    return notFaked('holdClaimed');
  }

  releaseLeases(): Promise<void> {
    return notFaked('releaseLeases');
  }

  webhookExists(): Promise<boolean> {
    return notFaked('webhookExists');
  }
}

function notFaked(method: string): Promise<never> {
  return Promise.reject(new Error(`InMemoryDeliveryQueue.${method}: the worker's hot path is tested on real databases (delivery-queue conformance)`));
}

/** A fresh in-memory queue, an in-process waker, and how often it was woken. */
export function fakeQueueAndWaker(): { queue: InMemoryDeliveryQueue; waker: InProcessWaker; wakes: () => number } {
  const queue = new InMemoryDeliveryQueue();
  const waker = new InProcessWaker();
  let wakes = 0;
  waker.onWake(() => wakes++);
  return { queue, waker, wakes: () => wakes };
}
