import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Plan } from './plans';
import type { Principal } from './api-key.service';

export const PLAN_TIER_KEY = 'trendhooks:plan-tier';
/** The only tier a route can require; a route without the mark is open to every plan. */
export type PlanTier = 'business_plus';

/** Marks a route (or controller) as `Business+` (spec 5.2). */
export const BusinessPlus = () => SetMetadata(PLAN_TIER_KEY, 'business_plus' as PlanTier);

export const PRINCIPAL = Symbol('trendhooks:principal');

/** The authenticated caller, set by ApiKeyGuard. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest()[PRINCIPAL];
});

export type { Plan };
