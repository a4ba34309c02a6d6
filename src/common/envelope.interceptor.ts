import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Observable, map } from 'rxjs';
import { envelope } from './envelope';
import { takeBodyError } from './json-body.middleware';
import { ensureRequestId } from './request-id';

/**
 * Wraps a handler's return value in `{data, meta: {request_id, page}}` (spec 2.2), for a host's
 * own controllers. trendhooks' controllers call `envelope()` themselves (with `@RequestId()` and
 * BodyErrorGuard), which spares their requests Nest's interceptor pipeline.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest();
    const requestId = ensureRequestId(req, http.getResponse());
    const bodyError = takeBodyError(req);
    if (bodyError) throw bodyError;
    return next.handle().pipe(map((value) => envelope(requestId, value)));
  }
}
