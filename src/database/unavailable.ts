import { Module } from '@nestjs/common';
import { errorChain } from '../common/error-chain';
import { DATABASE_UNAVAILABLE } from '../common/exception.filter';
import type { Dialect } from './dialect';

/** One error of a chain (the error, its `cause`, TypeORM's `driverError`, …), read field by field. */
type ErrorLink = Record<string, unknown>;

// Socket-level failures of a PostgreSQL connection (refused while the server is down, cut by a crash).
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown,
// 57P03 cannot_connect_now (starting up, in recovery, shutting down), 53300 too_many_connections.
const PG_UNAVAILABLE_STATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
// node-postgres reports a lost or never-made connection by message only (no code).
const PG_CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * Per dialect, whether one error of a chain says the database is unreachable or momentarily unable
 * to take the statement, rather than that the statement was wrong. Keyed by Dialect, so a new
 * dialect does not compile until it says what its outages look like.
 */
export const UNAVAILABLE_BY_DIALECT: Record<Dialect, (link: ErrorLink) => boolean> = {
  // A lost or refused connection, a server shutting down, restarting or in recovery, a pool that
  // could not hand out a connection in time.
  postgres: ({ code, message }) =>
    (typeof code === 'string' && (CONNECTION_ERRNOS.has(code) || PG_UNAVAILABLE_STATE.test(code))) ||
    (typeof message === 'string' && PG_CONNECTION_MESSAGE.test(message)),
  // The file locked by another writer past the busy timeout (SQLITE_BUSY_SNAPSHOT etc. included).
  sqlite: ({ code }) => typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')),
};

const CLASSIFIERS = Object.values(UNAVAILABLE_BY_DIALECT);

/**
 * Whether `err` (or what it wraps: `cause`, AggregateError `errors`, TypeORM's `driverError`) means
 * the database is unavailable for now, so the request or command may simply be retried. Every
 * dialect's classifier is asked: their codes and messages do not overlap, and the CLI must classify
 * a failure that happened before it knew which database it had.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const link of errorChain(err)) if (CLASSIFIERS.some((classify) => classify(link))) return true;
  return false;
}

/**
 * Gives ApiExceptionFilter this classifier, so a database outage is answered 503 with Retry-After.
 * Not global: each module whose controllers query the database imports it (Nest builds the filter
 * of `@UseFilters` in the controller's own module), so a host app gets the same answers without
 * wiring anything; AppModule imports it for its app-wide filter.
 */
@Module({ providers: [{ provide: DATABASE_UNAVAILABLE, useValue: isDatabaseUnavailable }], exports: [DATABASE_UNAVAILABLE] })
export class DatabaseUnavailableModule {}
