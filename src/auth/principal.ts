import { ExecutionContext, Inject } from '@nestjs/common';
import { PLANS, Plan } from './plans';

/**
 * Who calls a trendhooks route, as trendhooks needs to know it: the tenant that owns webhooks,
 * deliveries and pagination cursors, and the plan that sets its limits. A host app maps its own
 * users, tenants and plans to this through a PrincipalResolver; the standalone service maps an
 * API key (ApiKeysModule).
 */
export interface TrendhooksPrincipal {
  /**
   * The owner of the caller's rows (the `customer_id` columns; 1 to 40 characters). Every query of
   * webhooks, deliveries and cursors is bound to it, so two tenants never see each other's data.
   */
  tenantId: string;
  /** The plan whose figures apply (AuthModule's `plans` table): Business+ routes, quotas, rate limit, page sizes. */
  plan: Plan;
  /**
   * The counter the per-minute rate limit is charged to; default `tenant:<tenantId>` (one budget per
   * tenant). Give e.g. `user:<id>` for a budget per user. API keys use `key:<keyId>`.
   */
  rateLimitKey?: string;
  /**
   * Set: the caller reaches this one webhook only (a portal link scoped to it). PrincipalGuard
   * answers 404 for any other `webhook_id` and 403 FORBIDDEN on routes that name no webhook.
   */
  webhookId?: string;
  /** Set when the caller is a portal session (its row id); such a caller cannot mint portal links. */
  portalSessionId?: string;
}

/**
 * Maps a request to its principal. `null`/`undefined`: not authenticated (401 UNAUTHORIZED in
 * trendhooks' envelope, charged to the client address's limit). A thrown AppError is answered as
 * is (and charged the same way); any other error is answered 500 (or 503 for a database outage).
 */
export interface PrincipalResolver {
  resolve(request: any, context: ExecutionContext): Promise<TrendhooksPrincipal | null | undefined>;
}

/** The PrincipalResolver in force (AuthModule's `principalResolver`, else ApiKeysModule's). */
export const PRINCIPAL_RESOLVER = Symbol('trendhooks:principal-resolver');

export const InjectPrincipalResolver = (): ParameterDecorator & PropertyDecorator => Inject(PRINCIPAL_RESOLVER);

/** The boot-time answer when trendhooks' routes are served and nothing says who calls. */
export const NO_PRINCIPAL_RESOLVER =
  'trendhooks AuthModule has no way to identify callers: give AuthModule.forRoot({ principalResolver }) ' +
  '(or forRootAsync) your own PrincipalResolver, or import ApiKeysModule for trendhooks API keys';

/**
 * PRINCIPAL_RESOLVER when neither a `principalResolver` nor ApiKeysModule is given. A host that
 * serves none of trendhooks' routes (delivery from its own subscriptions) needs no identity; the
 * modules with routes (WebhooksModule, PostsModule) refuse to boot on it (requirePrincipalResolver).
 */
export const NO_RESOLVER: PrincipalResolver = {
  resolve: async () => {
    throw new Error(NO_PRINCIPAL_RESOLVER);
  },
};

/** Called by every module with routes while it is built: no routes without a way to identify callers. */
export function requirePrincipalResolver(resolver: PrincipalResolver): void {
  if (resolver === NO_RESOLVER) throw new Error(NO_PRINCIPAL_RESOLVER);
}

const MAX_TENANT_ID = 40;

/**
 * A resolver's answer, checked before anything is stored under it: a bad one is the resolver's bug,
 * answered 500 with the reason in the log, never written to a `customer_id` column.
 */
export function checkPrincipal(p: TrendhooksPrincipal, plans: readonly string[] = PLANS): TrendhooksPrincipal {
  if (typeof p !== 'object' || p === null) throw new Error(`principal resolver returned ${typeof p}, not a principal object`);
  if (typeof p.tenantId !== 'string' || p.tenantId.length === 0 || p.tenantId.length > MAX_TENANT_ID) {
    throw new Error(`principal resolver returned a tenantId that is not a string of 1 to ${MAX_TENANT_ID} characters`);
  }
  if (typeof p.plan !== 'string' || !plans.includes(p.plan)) {
    throw new Error(`principal resolver returned plan ${JSON.stringify(p.plan)}; expected one of ${plans.join(', ')}`);
  }
  if (p.rateLimitKey !== undefined && (typeof p.rateLimitKey !== 'string' || p.rateLimitKey.length === 0 || p.rateLimitKey.startsWith('ip:'))) {
    throw new Error('principal resolver returned a rateLimitKey that is empty, not a string or starts with "ip:" (the unauthenticated counters)');
  }
  if (p.webhookId !== undefined && (typeof p.webhookId !== 'string' || p.webhookId.length === 0 || p.webhookId.length > MAX_TENANT_ID)) {
    throw new Error('principal resolver returned a webhookId that is not a non-empty string');
  }
  return p;
}
