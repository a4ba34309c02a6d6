import { PlanService } from '../auth/plan.service';
import { PrivateDestinationsService } from '../auth/private-destinations.service';
import type { TrendhooksPrincipal } from '../auth/principal';
import { AppError } from '../common/errors';
import { newUlid } from '../common/ids';
import { generateEncryptionKey } from '../crypto/key-ring';
import { SecretBox } from '../crypto/secret-box';
import { CursorKeyRing } from '../pagination/cursor-codec';
import type { CursorKeys } from '../pagination/cursor-keys';
import type { PageRequest } from '../pagination/page';
import { PaginationService } from '../pagination/pagination.service';
import type { CheckedDestination, SsrfPolicy } from '../ssrf/ssrf-policy';
import type { DestinationCircuitStore } from '../delivery/circuit/destination-circuit.store';
import { InMemoryCircuitStore } from '../delivery/circuit/in-memory-circuit.store.fake';
import type { DeliveryEntity } from '../delivery/delivery.entity';
import { InMemoryDeliveryQueue } from '../delivery/queue/in-memory-delivery-queue.fake';
import { EndpointEntity, webhookSecretPlace } from '../delivery/endpoint.entity';
import type { EndpointSecretValues, EndpointStore } from '../delivery/endpoint.store';
import { Webhook, WebhookPatch, WebhookStore, WebhookSubscription } from './webhook.store';
import { WebhooksService } from './webhooks.service';
import { WebhookPause } from './webhook-pause';
import type { RecoverService } from './recover.service';

const NOW = new Date(Date.UTC(2025, 0, 1));
const NODE: WebhookSubscription = { event: 'trends.rising', subreddit: 'node' };

/**
 * In-memory WebhookStore, and the EndpointStore calls the service makes for secrets (the endpoint
 * half of the same rows): the contract the conformance suites check on the real databases.
 */
class FakeWebhookStore extends WebhookStore {
  rows = new Map<string, Webhook>();
  /** When set, the next insertWithinQuota loses the race (another create took the last slot). */
  loseNextInsert = false;
  /** When set, replaceSecrets answers false for these ids (rotated meanwhile). */
  losingReplaces = new Set<string>();

  async countForCustomer(customerId: string) {
    return [...this.rows.values()].filter((w) => w.customerId === customerId).length;
  }
  async countAll() {
    return this.rows.size;
  }
  async subscriptionsOf(customerId: string) {
    const out = new Map<string, { event: string; subreddit: string; since: Date }>();
    for (const w of this.rows.values()) {
      if (w.customerId !== customerId) continue;
      const key = `${w.event}/${w.subreddit}`;
      const seen = out.get(key);
      if (!seen || w.createdAt < seen.since) out.set(key, { event: w.event, subreddit: w.subreddit, since: w.createdAt });
    }
    return [...out.values()];
  }
  async findForCustomer(customerId: string, id: string) {
    const w = this.rows.get(id);
    return w && w.customerId === customerId ? { ...w } : null;
  }
  async updateSecrets(customerId: string, w: Pick<EndpointEntity, 'id' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>) {
    const row = this.rows.get(w.id);
    if (row && row.customerId === customerId) Object.assign(row, w);
  }
  async secretsPage(afterId: string, limit: number) {
    return [...this.rows.values()]
      .filter((w) => w.id > afterId)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(({ id, secret, previousSecret }) => ({ id, secret, previousSecret }));
  }
  async replaceSecrets(id: string, before: EndpointSecretValues, after: EndpointSecretValues) {
    const row = this.rows.get(id);
    if (!row || this.losingReplaces.has(id) || row.secret !== before.secret || row.previousSecret !== before.previousSecret) return false;
    Object.assign(row, after);
    return true;
  }
  async deleteForCustomer(customerId: string, id: string) {
    return (await this.findForCustomer(customerId, id)) !== null && this.rows.delete(id);
  }
  async updateForCustomer(customerId: string, id: string, patch: WebhookPatch) {
    const row = this.rows.get(id);
    if (!row || row.customerId !== customerId) return null;
    if (patch.url !== undefined) row.url = patch.url;
    if (patch.allowNonstandardPort !== undefined) row.allowNonstandardPort = patch.allowNonstandardPort;
    if (patch.disabled === null && row.disabledAt !== null) Object.assign(row, { disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null });
    else if (patch.disabled && row.disabledAt === null) Object.assign(row, { disabledAt: patch.disabled.at, disabledReason: patch.disabled.reason });
    return { ...row };
  }
  async insertWithinQuota(endpoint: EndpointEntity, subscription: WebhookSubscription, max: number) {
    if (this.loseNextInsert || (await this.countForCustomer(endpoint.customerId)) >= max) return (this.loseNextInsert = false);
    this.rows.set(endpoint.id, { ...endpoint, ...subscription });
    return true;
  }
  async subscribers() {
    return [];
  }
  async subredditsWithWebhooks() {
    return [];
  }
  async hasWebhook() {
    return false;
  }
  async page(customerId: string, req: PageRequest) {
    const mine = [...this.rows.values()].filter((w) => w.customerId === customerId);
    if (req.before) {
      const b = String(req.before[0]);
      return mine.filter((w) => w.id > b).sort((x, y) => (x.id < y.id ? -1 : 1)).slice(0, req.limit + 1);
    }
    const a = req.after ? String(req.after[0]) : undefined;
    return mine.filter((w) => a === undefined || w.id < a).sort((x, y) => (x.id < y.id ? 1 : -1)).slice(0, req.limit + 1);
  }
}

describe('WebhooksService', () => {
  const alice: TrendhooksPrincipal = { tenantId: 'cus_alice', plan: 'business' };
  const bob: TrendhooksPrincipal = { tenantId: 'cus_bob', plan: 'business' };
  const input = { url: 'https://hooks.example.com/in', event: 'trends.rising' as const, subreddit: 'r/TypeScript' };
  let store: FakeWebhookStore;
  let checked: string[];
  let secrets: SecretBox;
  let service: WebhooksService;
  let circuits: InMemoryCircuitStore;
  let queue: InMemoryDeliveryQueue;

  function build(plans = new PlanService({})) {
    const ssrf = {
      checkUrl: async (url: string) => {
        checked.push(url);
        if (url.includes('internal')) throw new AppError('WEBHOOK_DESTINATION_BLOCKED', 'destination is not public');
        return { url: new URL(url) } as CheckedDestination;
      },
    } as unknown as SsrfPolicy;
    const keys = { get: async () => CursorKeyRing.fromSecrets(['unit-test-cursor-secret-unit-test']) } as unknown as CursorKeys;
    const pagination = new PaginationService(keys, { now: () => NOW }, {});
    const privateDestinations = { forCustomer: async () => [] } as unknown as PrivateDestinationsService;
    const recovery = { recover: async () => ({ queued: 0, next_since: null }) };
    service = new WebhooksService(store, store as unknown as EndpointStore, plans, ssrf, pagination, secrets, privateDestinations, circuits as unknown as DestinationCircuitStore, queue, new WebhookPause(queue, recovery as unknown as RecoverService, { now: () => NOW }), { now: () => NOW });
  }

  beforeEach(() => {
    store = new FakeWebhookStore();
    circuits = new InMemoryCircuitStore();
    queue = new InMemoryDeliveryQueue();
    checked = [];
    secrets = new SecretBox({ keys: [generateEncryptionKey()] }, undefined as never);
    build();
  });

  describe('create', () => {
    it('stores the checked URL, the normalised subreddit and the secret encrypted, and shows the secret once', async () => {
      const created = await service.create(alice, input);
      expect(created).toMatchObject({ url: 'https://hooks.example.com/in', subreddit: 'typescript', event: 'trends.rising', allow_nonstandard_port: false, created_at: NOW.toISOString() });
      expect(created.secret).toEqual(expect.any(String));
      const row = store.rows.get(created.id)!;
      expect(row.customerId).toBe('cus_alice');
      expect(row.secret).not.toContain(created.secret!);
      expect(secrets.decrypt(row.secret, webhookSecretPlace(created.id, 'secret'))).toBe(created.secret);
      expect((await service.get(alice, created.id)).secret).toBeUndefined();
    });

    it('answers WEBHOOK_QUOTA_EXCEEDED before any DNS work when the plan has no room', async () => {
      await expect(service.create({ ...alice, plan: 'pro' }, input)).rejects.toMatchObject({ code: 'WEBHOOK_QUOTA_EXCEEDED' });
      expect(checked).toEqual([]);
      build(new PlanService({ plans: { free: { maxPageSize: 25, requestsPerMinute: 60, maxWebhooks: 1, businessPlus: false } } as never }));
      await service.create({ ...alice, plan: 'free' }, input);
      await expect(service.create({ ...alice, plan: 'free' }, input)).rejects.toMatchObject({ code: 'WEBHOOK_QUOTA_EXCEEDED', message: expect.stringContaining('quota of 1') });
      expect(checked).toHaveLength(1);
    });

    it('answers WEBHOOK_QUOTA_EXCEEDED when a concurrent create took the last slot between check and insert', async () => {
      store.loseNextInsert = true;
      await expect(service.create(alice, input)).rejects.toMatchObject({ code: 'WEBHOOK_QUOTA_EXCEEDED' });
      expect(store.rows.size).toBe(0);
    });

    it('stores nothing when the destination is refused', async () => {
      await expect(service.create(alice, { ...input, url: 'https://internal.example/' })).rejects.toMatchObject({ code: 'WEBHOOK_DESTINATION_BLOCKED' });
      expect(store.rows.size).toBe(0);
    });
  });

  describe('get, rotate and remove', () => {
    it('refuses a malformed id with VALIDATION_ERROR and answers NOT_FOUND for an unknown or foreign one', async () => {
      const { id } = await service.create(alice, input);
      await expect(service.get(alice, 'not-a-ulid')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
      await expect(service.get(alice, newUlid())).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(service.get(bob, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(service.rotateSecret(bob, id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await service.get(alice, id.toLowerCase())).id).toBe(id);
    });

    it('rotates: a new secret shown once, the old one kept as previous for 24 hours', async () => {
      const { id, secret: first } = await service.create(alice, input);
      const rotated = await service.rotateSecret(alice, id);
      expect(rotated.secret).not.toBe(first);
      const row = store.rows.get(id)!;
      // Encrypted again for its new column: the old ciphertext would not decrypt there.
      expect(secrets.decrypt(row.previousSecret!, webhookSecretPlace(id, 'previous_secret'))).toBe(first);
      expect(() => secrets.decrypt(row.previousSecret!, webhookSecretPlace(id, 'secret'))).toThrow(/does not decrypt/);
      expect(row.previousSecretExpiresAt).toEqual(new Date(NOW.getTime() + 24 * 3600 * 1000));
      expect(secrets.decrypt(row.secret, webhookSecretPlace(id, 'secret'))).toBe(rotated.secret);
    });

    it('rotates a webhook whose stored secret no longer decrypts: a new secret, no previous one', async () => {
      const { id } = await service.create(alice, input);
      const row = store.rows.get(id)!;
      row.secret = row.secret.slice(0, -4) + (row.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const rotated = await service.rotateSecret(alice, id);
      const after = store.rows.get(id)!;
      expect(secrets.decrypt(after.secret, webhookSecretPlace(id, 'secret'))).toBe(rotated.secret);
      expect(after.previousSecret).toBeNull();
      expect(after.previousSecretExpiresAt).toBeNull();
    });

    it("removes idempotently and never another customer's webhook", async () => {
      const { id } = await service.create(alice, input);
      await service.remove(bob, id);
      expect(store.rows.has(id)).toBe(true);
      await service.remove(alice, id);
      await service.remove(alice, id);
      expect(store.rows.has(id)).toBe(false);
      await expect(service.remove(alice, 'nope')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    });
  });

  describe('list', () => {
    it("pages the caller's webhooks newest first with next and prev cursors", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await service.create(alice, input)).id);
      await service.create(bob, input);
      const first = await service.list(alice, { limit: '2' });
      expect(first.items.map((w) => w.id)).toEqual([ids[4], ids[3]]);
      const second = await service.list(alice, { limit: '2', cursor: first.page.next_cursor! });
      expect(second.items.map((w) => w.id)).toEqual([ids[2], ids[1]]);
      const back = await service.list(alice, { limit: '2', cursor: second.page.prev_cursor! });
      expect(back.items.map((w) => w.id)).toEqual([ids[4], ids[3]]);
      await expect(service.list(bob, { cursor: first.page.next_cursor! })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
      await expect(service.list(alice, { limit: '1000' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    });
  });

  describe('circuit', () => {
    it("shows the caller's own circuit for the webhook's host and port, never another customer's at the same destination", async () => {
      const other = { ...input, url: 'https://other.example.com/in' };
      const a = await service.create(alice, input);
      const a2 = await service.create(alice, other);
      const b = await service.create(bob, input);
      const until = new Date(NOW.getTime() + 30_000);
      await circuits.replace('cus_alice', 'hooks.example.com', null, { state: 'open', consecutiveFailures: 10, openedUntil: until, openCount: 1, updatedAt: NOW });
      const open = { state: 'open', until: until.toISOString(), consecutive_failures: 10 };
      const closed = { state: 'closed', until: null, consecutive_failures: 0 };
      expect((await service.get(alice, a.id)).circuit).toEqual(open);
      expect((await service.get(alice, a2.id)).circuit).toEqual(closed);
      expect((await service.get(bob, b.id)).circuit).toEqual(closed);
      const listed = await service.list(alice, {});
      expect(Object.fromEntries(listed.items.map((w) => [w.id, w.circuit]))).toEqual({ [a.id]: open, [a2.id]: closed });
      // A new webhook of hers at the same destination shares the circuit.
      expect((await service.create(alice, input)).circuit).toEqual(open);
    });
  });

  describe('health', () => {
    const HOUR = 3600_000;
    /** A delivery of `webhookId` created `ageH` hours before NOW, with attempts started at these hours (ago) and outcomes. */
    function delivery(webhookId: string, ageH: number, attempts: [number, string][]) {
      const id = `msg_${queue.deliveries.length}`;
      queue.deliveries.push({ id, webhookId, createdAt: new Date(NOW.getTime() - ageH * HOUR) } as DeliveryEntity);
      attempts.forEach(([agoH, outcome], i) =>
        queue.attempts.push({ id: `${id}_${i}`, deliveryId: id, attemptNo: i + 1, startedAt: new Date(NOW.getTime() - agoH * HOUR), durationMs: 1, statusCode: null, outcome, errorClass: null, responseExcerpt: null }),
      );
    }

    it('counts the attempts of deliveries created in the last 24 h: the delivered share, and the failures since the newest delivered one', async () => {
      const a = await service.create(alice, input);
      const quiet = await service.create(alice, { ...input, url: 'https://other.example.com/in' });
      expect(a).toMatchObject({ success_rate_24h: null, consecutive_failures: 0 });
      delivery(a.id, 30, [[29, 'delivered']]); // created before the window: not counted
      delivery(a.id, 10, [[10, 'transient'], [9, 'delivered']]);
      delivery(a.id, 5, [[5, 'transient'], [4, 'transient'], [3, 'permanent']]);
      delivery(a.id, 2, [[2, 'delivered'], [1, 'transient']]);
      // 2 delivered of 7; after the newest delivered (2 h ago): the attempt 1 h ago.
      expect(await service.get(alice, a.id)).toMatchObject({ success_rate_24h: 0.2857, consecutive_failures: 1 });
      const listed = await service.list(alice, {});
      expect(Object.fromEntries(listed.items.map((w) => [w.id, [w.success_rate_24h, w.consecutive_failures]]))).toEqual({ [a.id]: [0.2857, 1], [quiet.id]: [null, 0] });
    });

    it('counts every failure when nothing in the window was delivered', async () => {
      const a = await service.create(alice, input);
      delivery(a.id, 3, [[3, 'transient'], [2, 'permanent']]);
      expect(await service.get(alice, a.id)).toMatchObject({ success_rate_24h: 0, consecutive_failures: 2 });
    });
  });

  describe('reencryptSecrets', () => {
    it('re-encrypts rows under an older key, leaves current ones, and counts a row rotated meanwhile as skipped', async () => {
      const oldKey = generateEncryptionKey();
      const oldBox = new SecretBox({ keys: [oldKey] }, undefined as never);
      const newKey = generateEncryptionKey();
      secrets = new SecretBox({ keys: [newKey, oldKey] }, undefined as never);
      build();
      const stale = [newUlid(), newUlid(), newUlid()].sort();
      for (const id of stale) {
        const enc = oldBox.encrypt(`whsec_${id}`, webhookSecretPlace(id, 'secret'));
        await store.insertWithinQuota({ id, customerId: 'cus_alice', url: 'https://x.example/', allowNonstandardPort: false, secret: enc, previousSecret: null, previousSecretExpiresAt: null, createdAt: NOW, lastDeliveryAt: null, lastStatus: null, lastResponseCode: null, disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null }, NODE, 100);
      }
      const current = await service.create(alice, input);
      store.losingReplaces.add(stale[1]);
      const res = await service.reencryptSecrets({ batchSize: 2 });
      expect(res).toEqual({ scanned: 5 * 4, reencrypted: 2, skipped: 1, unreadable: [] });
      for (const id of [stale[0], stale[2]]) {
        const row = store.rows.get(id)!;
        expect(secrets.ring.isCurrent(row.secret)).toBe(true);
        expect(secrets.decrypt(row.secret, webhookSecretPlace(id, 'secret'))).toBe(`whsec_${id}`);
      }
      expect(secrets.ring.isCurrent(store.rows.get(stale[1])!.secret)).toBe(false);
      expect(secrets.ring.isCurrent(store.rows.get(current.id)!.secret)).toBe(true);
    });

    it('skips rows whose secrets do not decrypt, lists them by id and column, and rewrites the rest', async () => {
      const oldKey = generateEncryptionKey();
      const oldBox = new SecretBox({ keys: [oldKey] }, undefined as never);
      secrets = new SecretBox({ keys: [generateEncryptionKey(), oldKey] }, undefined as never);
      build();
      const [good, badSecret, badPrevious] = [newUlid(), newUlid(), newUlid()].sort();
      const row = (id: string, secret: string, previousSecret: string | null): EndpointEntity => ({ id, customerId: 'cus_alice', url: 'https://x.example/', allowNonstandardPort: false, secret, previousSecret, previousSecretExpiresAt: previousSecret ? NOW : null, createdAt: NOW, lastDeliveryAt: null, lastStatus: null, lastResponseCode: null, disabledAt: null, disabledReason: null, failingSince: null, failurePeriods: 0, lastFailurePeriod: null });
      const enc = (id: string, column: 'secret' | 'previous_secret') => oldBox.encrypt(`whsec_${id}_${column}`, webhookSecretPlace(id, column));
      await store.insertWithinQuota(row(good, enc(good, 'secret'), enc(good, 'previous_secret')), NODE, 100);
      // Another row's value, and a value moved from one column to the other.
      await store.insertWithinQuota(row(badSecret, enc(good, 'secret'), null), NODE, 100);
      await store.insertWithinQuota(row(badPrevious, enc(badPrevious, 'secret'), enc(badPrevious, 'secret')), NODE, 100);
      // Damaged under the newest key: nothing to re-encrypt, but listed all the same.
      const current = await service.create(alice, input);
      const damaged = store.rows.get(current.id)!;
      damaged.secret = damaged.secret.slice(0, -4) + (damaged.secret.endsWith('AAAA') ? 'BBBB' : 'AAAA');
      const res = await service.reencryptSecrets();
      expect(res).toEqual({ scanned: 4, reencrypted: 1, skipped: 0, unreadable: [{ webhook_id: badSecret, column: 'secret' }, { webhook_id: badPrevious, column: 'previous_secret' }, { webhook_id: current.id, column: 'secret' }] });
      expect(secrets.decrypt(store.rows.get(good)!.previousSecret!, webhookSecretPlace(good, 'previous_secret'))).toBe(`whsec_${good}_previous_secret`);
      expect(secrets.ring.isCurrent(store.rows.get(badPrevious)!.secret)).toBe(false);
    });
  });
});
