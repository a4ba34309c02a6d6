import { AsyncLocalStorage } from 'node:async_hooks';
import { LoggerService } from '@nestjs/common';
import type { JsonLineLogger as Logger, LogLineLevel as Level } from './log-types';

/** The logger of the request being served (its `req.log`, which carries its request_id). */
const requestLogger = new AsyncLocalStorage<Logger>();

/** Runs the rest of a request with `logger` as the logger every log written while serving it goes to. */
export function runWithRequestLogger(logger: Logger, next: () => void): void {
  requestLogger.run(logger, next);
}

/** A stack trace as Nest's exception handlers pass it: `error(message, stack, context)`. */
const looksLikeStack = (s: unknown): s is string => typeof s === 'string' && /\n\s+at /.test(s);

/**
 * Nest's LoggerService as JSON lines through pino: inside a request the request's logger (so the
 * line carries its request_id), else `root`. Nest passes the context (the class name) last; it
 * becomes the `context` field, an Error or an object becomes fields of the line, and Nest's
 * `error(message, stack, context)` becomes an `err` with that stack.
 */
export class JsonLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const logger = requestLogger.getStore() ?? this.root;
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = params.slice(0, -1);
    if (params.length > 0) fields.context = params[params.length - 1];
    if (message instanceof Error) {
      fields.err = message;
      logger[level](fields, ...(rest as []));
    } else if (typeof message === 'object' && message !== null) {
      logger[level](Object.assign(fields, message), ...(rest as []));
    } else if (level === 'error' && rest.length === 1 && looksLikeStack(rest[0])) {
      const err = new Error(String(message));
      err.stack = rest[0];
      fields.err = err;
      logger[level](fields);
    } else {
      logger[level](fields, String(message), ...(rest as []));
    }
  }
}
