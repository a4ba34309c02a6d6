import { Injectable, NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ensureRequestId, WithRequestId } from './request-id';

/** Gives every request of the standalone app an id, echoed in `X-Request-Id` (404s included). */
@Injectable()
export class RequestIdMiddleware implements NestMiddleware {
  use(req: IncomingMessage & WithRequestId, res: ServerResponse, next: () => void): void {
    ensureRequestId(req, res);
    next();
  }
}
