import { unauthorized } from './api-key.service';
import { PrincipalGuard } from './principal.guard';

/** The guard of every `/v1` route, under its former name (it authenticates through the configured PrincipalResolver). */
export const ApiKeyGuard = PrincipalGuard;
export type ApiKeyGuard = PrincipalGuard;

type RawRequest = { rawHeaders?: string[]; headers?: Record<string, unknown>; raw?: RawRequest };

/**
 * The request's one Authorization header. Node keeps the first of several Authorization headers
 * and drops the rest, while a proxy in front may act on the last: a request carrying more than one
 * is refused, never read as one of them. The raw headers are counted (express hands over the Node
 * request, fastify wraps it in `raw`).
 */
export function authorizationHeader(req: RawRequest): string | undefined {
  const raw = req.rawHeaders ?? req.raw?.rawHeaders ?? [];
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') count++;
  if (count > 1) throw unauthorized(`send exactly one Authorization header; this request has ${count}`);
  const value = req.headers?.authorization;
  return typeof value === 'string' ? value : undefined;
}
