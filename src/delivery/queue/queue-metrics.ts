import { Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { Metrics } from '../../metrics/metrics.service';
import { DeliveryQueue } from './delivery-queue';
import type { QueueStats } from './types';

/** A scrape reads both queue gauges; one query serves both. */
const QUEUE_STATS_MAX_AGE_MS = 1000;

/** The delivery queue's gauges, registered where the queue exists (not in a host app without DeliveryModule). */
@Injectable()
export class DeliveryQueueMetrics implements OnModuleInit {
  private readonly logger = new Logger('Metrics');
  private last?: { at: number; stats: Promise<QueueStats | null> };

  constructor(
    private readonly queue: DeliveryQueue,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  onModuleInit(): void {
    if (!this.metrics) return;
    this.metrics.registerGauge({
      name: 'trendhooks_delivery_queue_depth',
      help: 'Deliveries due now and not being sent (pending, or leased by a worker that stopped)',
      collect: async () => (await this.stats())?.due ?? null,
    });
    this.metrics.registerGauge({
      name: 'trendhooks_delivery_oldest_due_age_seconds',
      help: 'How long the oldest due delivery has been waiting (0 when none is due)',
      collect: async () => {
        const s = await this.stats();
        return s ? (s.oldestDueMs === null ? 0 : s.oldestDueMs / 1000) : null;
      },
    });
  }

  // A database outage must not fail the whole scrape: the gauges keep their last values (null → not set).
  private stats(): Promise<QueueStats | null> {
    const now = Date.now();
    if (!this.last || now - this.last.at > QUEUE_STATS_MAX_AGE_MS) {
      const stats = this.queue.queueStats(new Date(now)).catch((err: Error) => {
        this.logger.warn(`queue metrics unavailable: ${err.message}`);
        return null;
      });
      this.last = { at: now, stats };
    }
    return this.last.stats;
  }
}
