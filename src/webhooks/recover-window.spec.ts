import { AppError } from '../common/errors';
import { parseRecoverWindow, RECOVER_MAX_WINDOW_MS } from './recover-window';

const NOW = new Date('2026-11-28T10:00:00.000Z');

function refused(input: Parameters<typeof parseRecoverWindow>[0]): string {
  try {
    parseRecoverWindow(input, NOW);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('VALIDATION_ERROR');
    return (err as AppError).message;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('parseRecoverWindow', () => {
  it('reads since and until as instants with a zone; until is now when absent or null; dry_run false unless true', () => {
    expect(parseRecoverWindow({ since: '2026-11-27T10:00:00Z' }, NOW)).toEqual({ since: new Date('2026-11-27T10:00:00Z'), until: NOW, dryRun: false });
    expect(parseRecoverWindow({ since: '2026-11-27T12:00:00+02:00', until: null, dry_run: null }, NOW)).toEqual({ since: new Date('2026-11-27T10:00:00Z'), until: NOW, dryRun: false });
    expect(parseRecoverWindow({ since: '2026-11-20T00:00:00.5Z', until: '2026-11-21T00:00:00Z', dry_run: true }, NOW)).toEqual({
      since: new Date('2026-11-20T00:00:00.500Z'),
      until: new Date('2026-11-21T00:00:00Z'),
      dryRun: true,
    });
  });

  it('takes a window of exactly 14 days and refuses one a millisecond longer', () => {
    const since = new Date(NOW.getTime() - RECOVER_MAX_WINDOW_MS);
    expect(parseRecoverWindow({ since: since.toISOString() }, NOW).since).toEqual(since);
    expect(refused({ since: new Date(since.getTime() - 1).toISOString() })).toBe('until must be at most 14 days after since');
    expect(refused({ since: '2026-10-01T00:00:00Z', until: '2026-10-15T00:00:00.001Z' })).toBe('until must be at most 14 days after since');
  });

  it.each([
    [{ since: 'yesterday' }, 'since must be an ISO 8601'],
    [{ since: '2026-11-27' }, 'since must be an ISO 8601'],
    [{ since: '2026-11-27T10:00:00' }, 'since must be an ISO 8601'],
    [{ since: '2026-02-30T10:00:00Z' }, 'since must be an ISO 8601'],
    [{ since: '2026-11-27T10:00:00Z', until: '1764313200000' }, 'until must be an ISO 8601'],
    [{ since: '2026-11-28T10:00:00.001Z' }, 'since must not be in the future'],
    [{ since: '2026-11-27T10:00:00Z', until: '2026-11-27T10:00:00Z' }, 'since must be before until'],
    [{ since: '2026-11-27T10:00:00Z', until: '2026-11-26T10:00:00Z' }, 'since must be before until'],
  ])('refuses %j', (input, message) => {
    expect(refused(input)).toContain(message);
  });
});
