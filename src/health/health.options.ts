export const HEALTH_OPTIONS = Symbol('trendhooks:health-options');

export interface HealthModuleOptions {
  /** Extra readiness checks by name (e.g. `redis`), each rejecting when its dependency is down. The database is always checked. */
  pings?: Record<string, () => Promise<unknown>>;
  /** How long one check may take before it counts as down. Default 2000 ms. */
  timeoutMs?: number;
}
