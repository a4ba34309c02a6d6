import { Injectable, MiddlewareConsumer, Module, NestMiddleware, NestModule } from '@nestjs/common';
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

/**
 * Mounts RequestIdMiddleware on every route: for the standalone app without its JSON logs (the
 * access-log middleware gives the ids otherwise, one middleware fewer per request).
 */
@Module({})
export class RequestIdModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(RequestIdMiddleware).forRoutes('*path');
  }
}
