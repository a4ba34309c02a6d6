import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, map } from 'rxjs';
import { Paged } from './envelope';
import { takeBodyError } from './json-body.middleware';
import { ensureRequestId } from './request-id';

/** Wraps a handler's return value in `{data, meta: {request_id, page}}` (spec 2.2). */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest();
    const requestId = ensureRequestId(req, http.getResponse());
    const bodyError = takeBodyError(req);
    if (bodyError) throw bodyError;
    return next.handle().pipe(
      map((value) => {
        if (value === undefined) return undefined; // 204
        if (value instanceof Paged) return { data: value.items, meta: { request_id: requestId, page: value.page } };
        return { data: value, meta: { request_id: requestId, page: null } };
      }),
    );
  }
}
