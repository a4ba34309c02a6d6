import { Injectable } from '@nestjs/common';
import { TrendhooksPrincipal } from '../auth/principal';
import { RateLimitService } from '../auth/rate-limit.service';
import { AppError } from '../common/errors';

/**
 * Recovers and dry runs a customer may start per minute, whatever its plan. With at most
 * RECOVER_MAX_EVENTS (10,000) rows read per call, a customer's recover work is at most 300,000
 * rows a minute: the plan's request limit alone let one customer keep the database busy for everyone.
 */
export const RECOVER_CALLS_PER_MINUTE = 30;

/**
 * The per-customer budget of recover work, dry runs included: one walk at a time per customer
 * in this process (a second is refused at once rather than queued, so waiting holds no
 * connection), and RECOVER_CALLS_PER_MINUTE calls per minute, counted in the rate-limit store
 * (Redis when configured, so every process shares it). Refusals are 429 RATE_LIMITED with
 * Retry-After.
 */
@Injectable()
export class RecoverBudget {
  private readonly running = new Set<string>();

  constructor(private readonly limits: RateLimitService) {}

  /** Runs `walk` within the caller's budget, or throws RATE_LIMITED. */
  async run<T>(caller: TrendhooksPrincipal, walk: () => Promise<T>): Promise<T> {
    const customer = caller.tenantId;
    if (this.running.has(customer)) {
      throw new AppError('RATE_LIMITED', 'one recover at a time per customer (dry runs included); retry when the last one has answered', { 'Retry-After': '1' });
    }
    this.running.add(customer);
    try {
      const state = await this.limits.consume(`recover:tenant:${customer}`, RECOVER_CALLS_PER_MINUTE);
      if (!state.allowed) {
        throw new AppError('RATE_LIMITED', `at most ${state.limit} recovers per minute (dry runs included); retry in ${state.resetSeconds} s`, { 'Retry-After': String(state.resetSeconds) });
      }
      return await walk();
    } finally {
      this.running.delete(customer);
    }
  }
}
