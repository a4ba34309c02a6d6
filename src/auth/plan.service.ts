import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_PLAN_LIMITS, Plan, PlanLimits } from './plans';
import { AUTH_OPTIONS, AuthModuleOptions } from './auth.options';

/** Per-plan figures (rate limits, page sizes, quotas), from the one configured table; the only place the default table is applied. */
@Injectable()
export class PlanService {
  private readonly plans: Record<Plan, PlanLimits>;

  constructor(@Inject(AUTH_OPTIONS) options: AuthModuleOptions) {
    this.plans = options.plans ?? DEFAULT_PLAN_LIMITS;
  }

  limits(plan: Plan): PlanLimits {
    return this.plans[plan];
  }

  /** The plans of the table, the only ones a principal can be on. */
  names(): string[] {
    return Object.keys(this.plans);
  }
}
