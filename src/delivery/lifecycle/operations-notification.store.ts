import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { InjectTrendhooksDataSource } from '../../database/data-source.token';
import type { WebhookDisabledEvent } from '../../events/webhook-disabled';
import { deliveryId } from '../delivery-id';
import { OperationsNotificationEntity } from './operations-notification.entity';
import { notificationSlot } from './operations-fold';

/** What `raise` did with a disable: a notification of its own, or folded into the webhook's next one. */
export type RaiseOutcome = 'queued' | 'folded';

/**
 * The one owner of `operations_notifications`: the operators' `webhook.disabled` notifications,
 * stored before they are sent, claimed under a lease and retried like deliveries. Plain
 * statements both databases run the same way (through TypeORM's query builder).
 */
@Injectable()
export class OperationsNotificationStore {
  constructor(@InjectTrendhooksDataSource() private readonly ds: DataSource) {}

  private get repo() {
    return this.ds.getRepository(OperationsNotificationEntity);
  }

  /**
   * A webhook was disabled: folded into its notification not yet tried, if there is one;
   * otherwise a new one, due at once or, when the webhook had one less than `intervalMs` ago, an
   * `intervalMs` after that one's hour. The partial unique index keeps one open notification per
   * webhook when two processes raise at once: the loser folds into the winner's.
   */
  async raise(event: WebhookDisabledEvent, now: Date, intervalMs: number): Promise<RaiseOutcome> {
    for (let tries = 0; ; tries++) {
      if (await this.fold(event, now)) return 'folded';
      const latest = await this.repo.findOne({ where: { webhookId: event.id }, order: { slotAt: 'DESC' }, select: { slotAt: true } });
      const slot = notificationSlot(latest?.slotAt ?? null, now, intervalMs);
      try {
        await this.repo.insert({
          id: deliveryId(`webhook.disabled:${slot.toISOString()}`, event.id),
          webhookId: event.id,
          customerId: event.customer_id,
          state: 'pending',
          slotAt: slot,
          nextAttemptAt: slot,
          attempts: 0,
          event: JSON.stringify(event),
          disables: 1,
          goneCount: event.reason === 'gone' ? 1 : 0,
          failingCount: event.reason === 'failing' ? 1 : 0,
          firstDisabledAt: new Date(event.disabled_at),
          createdAt: now,
          updatedAt: now,
        });
        return 'queued';
      } catch (err) {
        // Another process opened this webhook's notification first (the unique index): fold into it.
        if (tries >= 2) throw err;
      }
    }
  }

  private async fold(event: WebhookDisabledEvent, now: Date): Promise<boolean> {
    const res = await this.ds
      .createQueryBuilder()
      .update(OperationsNotificationEntity)
      .set({
        event: JSON.stringify(event),
        disables: () => 'disables + 1',
        goneCount: () => `gone_count + ${event.reason === 'gone' ? 1 : 0}`,
        failingCount: () => `failing_count + ${event.reason === 'failing' ? 1 : 0}`,
        updatedAt: now,
      })
      .where("webhook_id = :id AND state = 'pending' AND attempts = 0", { id: event.id })
      .execute();
    return (res.affected ?? 0) > 0;
  }

  /**
   * Leases up to `limit` due notifications (pending, or sending with an expired lease: their
   * process died) to `owner` until `leaseUntil`, charging each an attempt; answers them as leased.
   * The update is fenced on the due time it read, so two processes never take the same row.
   */
  async claimDue(owner: string, now: Date, leaseUntil: Date, limit: number): Promise<OperationsNotificationEntity[]> {
    const due = await this.repo
      .createQueryBuilder('n')
      .select('n.id', 'id')
      .where("n.state IN ('pending', 'sending') AND n.next_attempt_at <= :now", { now: now.getTime() })
      .orderBy('n.next_attempt_at', 'ASC')
      .limit(limit)
      .getRawMany<{ id: string }>();
    if (due.length === 0) return [];
    const ids = due.map((r) => r.id);
    await this.ds
      .createQueryBuilder()
      .update(OperationsNotificationEntity)
      .set({ state: 'sending', leaseOwner: owner, attempts: () => 'attempts + 1', nextAttemptAt: leaseUntil, updatedAt: now })
      .where("id IN (:...ids) AND state IN ('pending', 'sending') AND next_attempt_at <= :now", { ids, now: now.getTime() })
      .execute();
    return this.repo.findBy({ id: In(ids), state: 'sending', leaseOwner: owner });
  }

  /** Acknowledged by the operators' receiver (fenced on the lease). */
  async markSent(id: string, owner: string, now: Date): Promise<void> {
    await this.ds
      .createQueryBuilder()
      .update(OperationsNotificationEntity)
      .set({ state: 'sent', leaseOwner: null, nextAttemptAt: null, lastError: null, sentAt: now, updatedAt: now })
      .where("id = :id AND lease_owner = :owner AND state = 'sending'", { id, owner })
      .execute();
  }

  /** An attempt failed: due again at `retryAt`, or `failed` for good when null (fenced on the lease). */
  async markFailed(id: string, owner: string, now: Date, error: string, retryAt: Date | null): Promise<void> {
    await this.ds
      .createQueryBuilder()
      .update(OperationsNotificationEntity)
      .set({ state: retryAt ? 'pending' : 'failed', leaseOwner: null, nextAttemptAt: retryAt, lastError: error.slice(0, 300), updatedAt: now })
      .where("id = :id AND lease_owner = :owner AND state = 'sending'", { id, owner })
      .execute();
  }

  /** Deletes sent notifications older than `before`; answers how many. */
  async pruneSent(before: Date): Promise<number> {
    const res = await this.ds
      .createQueryBuilder()
      .delete()
      .from(OperationsNotificationEntity)
      .where("state = 'sent' AND sent_at < :before", { before: before.getTime() })
      .execute();
    return res.affected ?? 0;
  }

  /** A webhook's notifications, oldest first (tests and the operators' investigations). */
  forWebhook(webhookId: string): Promise<OperationsNotificationEntity[]> {
    return this.repo.find({ where: { webhookId }, order: { slotAt: 'ASC' } });
  }
}
