import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Controller, Get, Module, UseFilters } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Database from 'better-sqlite3';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import request from 'supertest';
import { ApiExceptionFilter } from '../common/exception.filter';
import { DeliveryModule } from '../delivery/delivery.module';
import { PostsModule } from '../posts/posts.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DatabaseUnavailableModule, isDatabaseUnavailable, UNAVAILABLE_BY_DIALECT } from './unavailable';

const errno = (code: string, message = `connect ${code} 127.0.0.1:5432`) => Object.assign(new Error(message), { code, errno: -1, syscall: 'connect' });
const pgError = (code: string, message: string) => Object.assign(new DatabaseError(message, message.length, 'error'), { code, severity: 'FATAL' });
const sqliteError = (code: string, message = 'database is locked') => Object.assign(new Error(message), { code });
const wrapped = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

/** A real SqliteError: a second connection writing while the first holds an exclusive lock, without a busy timeout. */
function realSqliteBusy(): Error {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'th-unavailable-spec-'));
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

const POSTGRES_OUTAGES: [string, Error][] = [
  ['ECONNREFUSED (server down)', errno('ECONNREFUSED')],
  ['ECONNRESET (connection cut)', errno('ECONNRESET', 'read ECONNRESET')],
  ['EPIPE', errno('EPIPE', 'write EPIPE')],
  ['ETIMEDOUT', errno('ETIMEDOUT')],
  ['EHOSTUNREACH', errno('EHOSTUNREACH')],
  ['ENETUNREACH', errno('ENETUNREACH')],
  ['EAI_AGAIN (name lookup failed for now)', errno('EAI_AGAIN', 'getaddrinfo EAI_AGAIN db')],
  ["'Connection terminated unexpectedly'", new Error('Connection terminated unexpectedly')],
  ["'Connection terminated due to connection timeout'", new Error('Connection terminated due to connection timeout')],
  ['pg-pool acquire timeout', new Error('timeout exceeded when trying to connect')],
  ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
  ['a closed client', new Error('Client was closed and is not queryable')],
  ['57P01 admin_shutdown (immediate shutdown)', pgError('57P01', 'terminating connection due to immediate shutdown command')],
  ['57P02 crash_shutdown', pgError('57P02', 'terminating connection because of crash of another server process')],
  ['57P03 cannot_connect_now (starting up)', pgError('57P03', 'the database system is starting up')],
  ['08006 connection_failure', pgError('08006', 'connection failure')],
  ['08P01 protocol_violation', pgError('08P01', 'protocol violation')],
  ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already')],
];

const SQLITE_OUTAGES: [string, Error][] = [
  ['SQLITE_BUSY', sqliteError('SQLITE_BUSY')],
  ['SQLITE_BUSY_SNAPSHOT', sqliteError('SQLITE_BUSY_SNAPSHOT')],
  ['SQLITE_LOCKED', sqliteError('SQLITE_LOCKED', 'database table is locked')],
  ['SQLITE_LOCKED_SHAREDCACHE', sqliteError('SQLITE_LOCKED_SHAREDCACHE', 'database table is locked')],
];

const STATEMENT_FAILURES: [string, unknown][] = [
  ['a plain Error', new Error('boom')],
  ['42P01 undefined_table', pgError('42P01', 'relation "webhooks" does not exist')],
  ['23505 unique_violation', pgError('23505', 'duplicate key value violates unique constraint')],
  ['42601 syntax_error', wrapped(pgError('42601', 'syntax error at or near "SELEC"'))],
  ['57014 query_canceled (a statement timeout is not an outage)', pgError('57014', 'canceling statement due to statement timeout')],
  ['SQLITE_ERROR (no such table)', sqliteError('SQLITE_ERROR', 'no such table: webhooks')],
  ['SQLITE_CONSTRAINT_UNIQUE', sqliteError('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed')],
  ["a message that merely mentions 'Connection terminated'", new Error('unexpected: Connection terminated')],
  ['a string', 'ECONNREFUSED'],
  ['null', null],
  ['undefined', undefined],
  ['a number code', Object.assign(new Error('x'), { code: 8006 })],
];

describe.each([
  ['postgres', POSTGRES_OUTAGES, SQLITE_OUTAGES],
  ['sqlite', SQLITE_OUTAGES, POSTGRES_OUTAGES],
] as const)('the %s classifier', (dialect, own, others) => {
  const classify = UNAVAILABLE_BY_DIALECT[dialect];

  it.each(own)('%s: yes', (_what, err) => {
    expect(classify(err as unknown as Record<string, unknown>)).toBe(true);
  });

  it.each(others)("the other dialect's %s: no", (_what, err) => {
    expect(classify(err as unknown as Record<string, unknown>)).toBe(false);
  });

  it.each(STATEMENT_FAILURES.filter(([, err]) => err instanceof Error))('%s: no', (_what, err) => {
    expect(classify(err as unknown as Record<string, unknown>)).toBe(false);
  });
});

describe('isDatabaseUnavailable', () => {
  it.each([...POSTGRES_OUTAGES, ...SQLITE_OUTAGES])('%s: yes, bare, in a TypeORM QueryFailedError (driverError) and as a cause', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isDatabaseUnavailable(wrapped(err))).toBe(true);
    expect(isDatabaseUnavailable(new Error('could not query', { cause: err }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('outer', { cause: wrapped(err) }))).toBe(true);
  });

  it('an AggregateError of refused addresses (::1 and 127.0.0.1): yes', () => {
    expect(isDatabaseUnavailable(new AggregateError([errno('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432'), errno('ECONNREFUSED')], ''))).toBe(true);
  });

  it('a real better-sqlite3 SQLITE_BUSY (another connection holds BEGIN EXCLUSIVE): yes', () => {
    const err = realSqliteBusy();
    expect((err as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isDatabaseUnavailable(wrapped(err))).toBe(true);
  });

  it.each(STATEMENT_FAILURES)('%s: no', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('stops on a cycle of causes', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});

describe('DatabaseUnavailableModule', () => {
  /** A feature module's controller carrying its own filter, as trendhooks' controllers do. */
  @Controller('refused')
  @UseFilters(ApiExceptionFilter)
  class RefusedController {
    @Get()
    get() {
      throw wrapped(errno('ECONNREFUSED'));
    }
  }
  @Module({ imports: [DatabaseUnavailableModule], controllers: [RefusedController] })
  class FeatureModule {}
  @Module({ controllers: [RefusedController] })
  class BareFeatureModule {}

  /** The root imports nothing of ours but the feature module, as a host app does. */
  async function statusOf(feature: unknown): Promise<number> {
    const ref = await Test.createTestingModule({ imports: [feature as typeof FeatureModule] }).compile();
    const app = ref.createNestApplication({ logger: false });
    try {
      await app.init();
      return (await request(app.getHttpServer()).get('/refused')).status;
    } finally {
      await app.close();
    }
  }

  it("gives the filter of the importing module's controllers the classifier: a refused connection is 503; without it, 500", async () => {
    expect(await statusOf(FeatureModule)).toBe(503);
    expect(await statusOf(BareFeatureModule)).toBe(500);
  });

  it.each([
    ['WebhooksModule', WebhooksModule],
    ['PostsModule', PostsModule],
    ['DeliveryModule', DeliveryModule],
  ])('%s imports it, so a host app needs no wiring for its 503s', (_name, mod) => {
    expect(Reflect.getMetadata('imports', mod)).toContain(DatabaseUnavailableModule);
  });
});
