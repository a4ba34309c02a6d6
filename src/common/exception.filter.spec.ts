import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BadRequestException, HttpStatus, Logger, ServiceUnavailableException } from '@nestjs/common';
import type { ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import Database from 'better-sqlite3';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { AppError } from './errors';
import { ApiExceptionFilter, isDatabaseUnavailable, toErrorResponse } from './exception.filter';

const errno = (code: string, message = `connect ${code} 127.0.0.1:5432`) => Object.assign(new Error(message), { code, errno: -1, syscall: 'connect' });
const pgError = (code: string, message: string) => Object.assign(new DatabaseError(message, message.length, 'error'), { code, severity: 'FATAL' });
const wrapped = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

/** A real SqliteError: a second connection writing while the first holds an exclusive lock, without a busy timeout. */
function realSqliteBusy(): Error {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-filter-spec-'));
  const file = path.join(dir, 'x.db');
  const holder = new Database(file);
  const writer = new Database(file, { timeout: 0 });
  try {
    holder.pragma('journal_mode = WAL');
    holder.exec('CREATE TABLE t (x INTEGER)');
    holder.exec('BEGIN EXCLUSIVE');
    try {
      writer.exec('INSERT INTO t VALUES (1)');
    } catch (err) {
      return err as Error;
    } finally {
      holder.exec('ROLLBACK');
    }
    throw new Error('the write was not refused');
  } finally {
    writer.close();
    holder.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('isDatabaseUnavailable', () => {
  it.each<[string, unknown]>([
    ['ECONNREFUSED (server down)', errno('ECONNREFUSED')],
    ['ECONNRESET (connection cut)', errno('ECONNRESET', 'read ECONNRESET')],
    ['EPIPE', errno('EPIPE', 'write EPIPE')],
    ['ETIMEDOUT', errno('ETIMEDOUT')],
    ['an AggregateError of refused addresses (::1 and 127.0.0.1)', new AggregateError([errno('ECONNREFUSED'), errno('ECONNREFUSED')], '')],
    ["pg: 'Connection terminated unexpectedly'", new Error('Connection terminated unexpectedly')],
    ["pg: 'Connection terminated due to connection timeout'", new Error('Connection terminated due to connection timeout')],
    ['pg-pool acquire timeout', new Error('timeout exceeded when trying to connect')],
    ['pg: a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['57P01 admin_shutdown (immediate shutdown)', pgError('57P01', 'terminating connection due to immediate shutdown command')],
    ['57P02 crash_shutdown', pgError('57P02', 'terminating connection because of crash of another server process')],
    ['57P03 cannot_connect_now (starting up)', pgError('57P03', 'the database system is starting up')],
    ['08006 connection_failure', pgError('08006', 'connection failure')],
    ['08P01 protocol_violation', pgError('08P01', 'protocol violation')],
    ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already')],
    ['TypeORM QueryFailedError around 57P01', wrapped(pgError('57P01', 'terminating connection due to administrator command'))],
    ["TypeORM QueryFailedError around 'Connection terminated unexpectedly'", wrapped(new Error('Connection terminated unexpectedly'))],
    ['an error caused by ECONNREFUSED', new Error('could not query', { cause: errno('ECONNREFUSED') })],
    ['SQLITE_BUSY', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })],
    ['SQLITE_BUSY_SNAPSHOT', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' })],
    ['SQLITE_LOCKED', Object.assign(new Error('database table is locked'), { code: 'SQLITE_LOCKED' })],
    ['TypeORM QueryFailedError around SQLITE_BUSY', wrapped(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))],
  ])('%s: yes', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it('a real better-sqlite3 SQLITE_BUSY (another connection holds BEGIN EXCLUSIVE): yes', () => {
    const err = realSqliteBusy();
    expect((err as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isDatabaseUnavailable(wrapped(err))).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a plain Error', new Error('boom')],
    ['42P01 undefined_table', pgError('42P01', 'relation "webhooks" does not exist')],
    ['23505 unique_violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['42601 syntax_error', wrapped(pgError('42601', 'syntax error at or near "SELEC"'))],
    ['57014 query_canceled (a statement timeout is not an outage)', pgError('57014', 'canceling statement due to statement timeout')],
    ['SQLITE_ERROR (no such table)', Object.assign(new Error('no such table: webhooks'), { code: 'SQLITE_ERROR' })],
    ['SQLITE_CONSTRAINT_UNIQUE', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
    ["a message that merely mentions 'Connection terminated'", new Error('unexpected: Connection terminated')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    ['undefined', undefined],
    ['a number code', Object.assign(new Error('x'), { code: 8006 })],
  ])('%s: no', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('stops on a cycle of causes', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});

describe('toErrorResponse', () => {
  it('maps a lost database connection to 503 SERVICE_UNAVAILABLE with Retry-After: 1 and no internals', () => {
    const err = toErrorResponse(wrapped(pgError('57P01', 'terminating connection due to immediate shutdown command')), 'GET', '/v1/webhooks');
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('SERVICE_UNAVAILABLE');
    expect(err.status).toBe(503);
    expect(err.headers).toEqual({ 'Retry-After': '1' });
    expect(err.message).not.toMatch(/57P01|terminating|shutdown|SELECT/);
  });

  it('maps a locked SQLite database the same way', () => {
    const err = toErrorResponse(realSqliteBusy());
    expect([err.code, err.status, err.headers['Retry-After']]).toEqual(['SERVICE_UNAVAILABLE', 503, '1']);
    expect(err.message).not.toMatch(/SQLITE|locked/);
  });

  it('still maps other unexpected errors (a broken schema) to 500 INTERNAL_ERROR', () => {
    const err = toErrorResponse(wrapped(pgError('42P01', 'relation "webhooks" does not exist')));
    expect([err.code, err.status, err.message]).toEqual(['INTERNAL_ERROR', 500, 'internal error']);
  });

  it('leaves AppErrors and HTTP exceptions as they were', () => {
    expect(toErrorResponse(new AppError('RATE_LIMITED', 'slow down', { 'Retry-After': '7' })).headers).toEqual({ 'Retry-After': '7' });
    expect(toErrorResponse(new BadRequestException('nope')).code).toBe('BAD_REQUEST');
    const unavailable = toErrorResponse(new ServiceUnavailableException('down'));
    expect([unavailable.code, unavailable.headers]).toEqual(['SERVICE_UNAVAILABLE', {}]);
  });
});

describe('ApiExceptionFilter', () => {
  function run(exception: unknown) {
    const headers: Record<string, string> = {};
    let status = 0;
    let body: any;
    const adapterHost = {
      httpAdapter: {
        setHeader: (_res: unknown, name: string, value: string) => (headers[name] = value),
        reply: (_res: unknown, b: unknown, s: number) => ((body = b), (status = s)),
      },
    } as unknown as HttpAdapterHost;
    const req = { method: 'POST', url: '/v1/webhooks', headers: { 'x-request-id': 'req-1' } };
    const res = { headersSent: false, setHeader: (n: string, v: string) => (headers[n] = v), getHeader: () => undefined };
    const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
    new ApiExceptionFilter(adapterHost).catch(exception, host);
    return { status, headers, body };
  }

  it('answers a database outage with 503, Retry-After: 1 and the error envelope, logged as a warning without the stack', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const out = run(errno('ECONNREFUSED'));
      expect(out.status).toBe(HttpStatus.SERVICE_UNAVAILABLE);
      expect(out.headers['Retry-After']).toBe('1');
      expect(out.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(typeof out.body.error.request_id).toBe('string');
      expect(JSON.stringify(out.body)).not.toContain('ECONNREFUSED');
      expect(warn).toHaveBeenCalledTimes(1);
      expect(JSON.stringify(warn.mock.calls[0])).toContain('ECONNREFUSED');
      expect(JSON.stringify(warn.mock.calls[0])).not.toContain('    at ');
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('still answers 500 and logs an error for anything unexpected', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const out = run(new Error('boom'));
      expect(out.status).toBe(500);
      expect(out.headers['Retry-After']).toBeUndefined();
      expect(error).toHaveBeenCalledTimes(1);
    } finally {
      error.mockRestore();
    }
  });
});
