import { Injectable, NestMiddleware } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { AppError } from './errors';

export const MAX_BODY_BYTES = 64 * 1024;
/** Where a body error waits until the controller's interceptor can raise it inside our envelope. */
export const BODY_ERROR = Symbol('trendhooks:body-error');

type Req = IncomingMessage & { body?: unknown; _body?: boolean; [BODY_ERROR]?: AppError };

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

/**
 * Reads a JSON body of at most 64 KiB for the routes of the module that applies it. It never
 * throws: middleware errors bypass controller-scoped filters in a host app, so the error is parked
 * on the request and raised by the EnvelopeInterceptor after authentication.
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  use(req: Req, _res: unknown, next: (err?: unknown) => void): void {
    if (req._body || req.body !== undefined || !hasBody(req)) return next();
    const type = req.headers['content-type'];
    if (typeof type !== 'string' || !JSON_TYPE.test(type.trim())) {
      req[BODY_ERROR] = new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
      req.resume();
      return next();
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      req[BODY_ERROR] = new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB');
      req.resume();
      return next();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: AppError) => {
      if (done) return;
      done = true;
      if (err) {
        req[BODY_ERROR] = err;
        req.resume();
      }
      next();
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return finish(new AppError('PAYLOAD_TOO_LARGE', 'request body is larger than 64 KiB'));
      chunks.push(chunk);
    });
    req.on('error', () => finish(new AppError('BAD_REQUEST', 'request body could not be read')));
    req.on('end', () => {
      if (done) return;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return finish(new AppError('INVALID_JSON', 'request body is empty; expected a JSON object'));
      try {
        req.body = JSON.parse(text);
        req._body = true;
        finish();
      } catch {
        finish(new AppError('INVALID_JSON', 'request body is not valid JSON'));
      }
    });
  }
}

export function takeBodyError(req: unknown): AppError | undefined {
  return (req as Req)[BODY_ERROR];
}
