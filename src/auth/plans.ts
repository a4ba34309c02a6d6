/** The plans a customer can be on, and what each allows (DECISIONS "Plans, keys, quotas, rate limits"). */
export type Plan = 'free' | 'pro' | 'business' | 'enterprise';
export const PLANS: readonly Plan[] = ['free', 'pro', 'business', 'enterprise'];

export interface PlanLimits {
  maxPageSize: number;
  requestsPerMinute: number;
  maxWebhooks: number;
  /** Business+ (spec 5.2): allowed on webhook routes. */
  businessPlus: boolean;
}

/** DECISIONS "Plans, keys, quotas, rate limits". */
export const DEFAULT_PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { maxPageSize: 25, requestsPerMinute: 60, maxWebhooks: 0, businessPlus: false },
  pro: { maxPageSize: 50, requestsPerMinute: 300, maxWebhooks: 0, businessPlus: false },
  business: { maxPageSize: 100, requestsPerMinute: 1200, maxWebhooks: 100, businessPlus: true },
  enterprise: { maxPageSize: 100, requestsPerMinute: 6000, maxWebhooks: 1000, businessPlus: true },
};
