import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { readPendingBody, takeBodyError } from './json-body.middleware';
import { ensureRequestId } from './request-id';

/** A list result: the envelope puts `page` into `meta.page`. */
export class Paged<T> {
  constructor(
    readonly items: T[],
    readonly page: { limit: number; next_cursor: string | null; prev_cursor?: string | null },
  ) {}
}

export interface Envelope<T> {
  data: T;
  meta: { request_id: string; page: Paged<unknown>['page'] | null };
}

/**
 * A handler's return value in `{data, meta: {request_id, page}}` (spec 2.2); `undefined` (a 204)
 * stays as it is. Our controllers call it themselves instead of going through an interceptor: any
 * interceptor sends every request through Nest's RxJS pipeline (an AsyncResource, a deferred
 * Observable, mergeMap and lastValueFrom per request), a fair share of a list request's CPU time.
 */
export function envelope<T>(requestId: string, value: Paged<T>): Envelope<T[]>;
export function envelope<T>(requestId: string, value: T): Envelope<T>;
export function envelope(requestId: string, value: unknown): Envelope<unknown> | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Paged) return { data: value.items, meta: { request_id: requestId, page: value.page } };
  return { data: value, meta: { request_id: requestId, page: null } };
}

/**
 * The request's id for the envelope, echoed in `X-Request-Id`: the one the standalone app's
 * middleware gave it, or a new one inside a host app that has no such middleware.
 */
export const RequestId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const http = ctx.switchToHttp();
  return ensureRequestId(http.getRequest(), http.getResponse());
});

/**
 * Reads the body JsonBodyMiddleware left unread, then raises its error (`INVALID_JSON`,
 * `UNSUPPORTED_MEDIA_TYPE`, `PAYLOAD_TOO_LARGE`, …) in the envelope, after authentication: list
 * it after the principal guard, on the controllers whose routes read bodies. A request refused
 * by that guard never has its body read.
 */
@Injectable()
export class BodyErrorGuard implements CanActivate {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<unknown>();
    await readPendingBody(req);
    const bodyError = takeBodyError(req);
    if (bodyError) throw bodyError;
    return true;
  }
}
