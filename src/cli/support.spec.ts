import { QueryFailedError } from 'typeorm';
import { AppError } from '../common/errors';
import { ConfigError } from '../config/config';
import { CliError, describeFailure, UsageError } from './support';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('describeFailure (the one error line of every command)', () => {
  it('says a configuration error is one', () => {
    expect(describeFailure(new ConfigError('DATABASE_URL: unsupported scheme "mysql:"'))).toBe('bad configuration: DATABASE_URL: unsupported scheme "mysql:"');
  });

  it("prints the operator's own errors as they are", () => {
    expect(describeFailure(new CliError('no active key matches th_live_x'))).toBe('no active key matches th_live_x');
    expect(describeFailure(new UsageError('--port must be from 1 to 65535, got "0"'))).toBe('--port must be from 1 to 65535, got "0"');
    expect(describeFailure(new AppError('VALIDATION_ERROR', '--data must be a JSON object'))).toBe('--data must be a JSON object');
  });

  it('names a database that went away while the command ran, by the same classifier as the HTTP 503', () => {
    expect(describeFailure(errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe('cannot reach the database: connect ECONNREFUSED 127.0.0.1:5432');
    const lost = new QueryFailedError('SELECT 1', [], new Error('Connection terminated unexpectedly'));
    expect(describeFailure(lost)).toBe('cannot reach the database: Connection terminated unexpectedly');
    const locked = new QueryFailedError('INSERT …', [], errno('SQLITE_BUSY', 'database is locked'));
    expect(describeFailure(new Error('could not store the posts', { cause: locked }))).toBe('cannot reach the database: could not store the posts');
  });

  it('keeps any other failure to its first line, without the stack', () => {
    expect(describeFailure(new QueryFailedError('SELECT', [], errno('42P01', 'relation "x" does not exist\nLINE 1')))).toBe('relation "x" does not exist');
    expect(describeFailure('plain')).toBe('plain');
  });
});
