import { createServer, type Server, type Socket } from 'node:net';
import { DestinationBlockedError } from '../ssrf/ssrf-policy';
import type { AddressInfo } from 'node:net';
import { Agent, errors as undiciErrors, fetch, request } from 'undici';
import { AppError } from '../common/errors';
import { type AttemptOutcome, classifyError, classifyResponse, decideNext, describeError, retryAfterApplies } from './classify';
import { DEFAULT_RETRY_SCHEDULE_S, RetryPolicy } from './retry-policy';

const delivered: AttemptOutcome = { kind: 'delivered' };
const transient = (errorClass: string): AttemptOutcome => ({ kind: 'transient', errorClass });
const permanent = (errorClass: string): AttemptOutcome => ({ kind: 'permanent', errorClass });

function expectedForStatus(status: number): AttemptOutcome {
  if (status >= 200 && status <= 299) return delivered;
  if (status >= 300 && status <= 399) return permanent(`redirect_${status}`);
  if (status >= 500 || status === 408 || status === 425 || status === 429) return transient(`http_${status}`);
  if (status >= 400) return permanent(`http_${status}`);
  return transient(`http_${status}`); // 1xx is never a final answer
}

describe('classifyResponse', () => {
  const all = Array.from({ length: 500 }, (_, i) => 100 + i);

  it.each(all.map((s) => [s, expectedForStatus(s)] as const))('%i → %j', (status, expected) => {
    expect(classifyResponse(status)).toEqual(expected);
  });

  it.each([
    [200, delivered],
    [204, delivered],
    [299, delivered],
    [301, permanent('redirect_301')],
    [302, permanent('redirect_302')],
    [307, permanent('redirect_307')],
    [308, permanent('redirect_308')],
    [400, permanent('http_400')],
    [401, permanent('http_401')],
    [404, permanent('http_404')],
    [410, permanent('http_410')],
    [413, permanent('http_413')],
    [408, transient('http_408')],
    [425, transient('http_425')],
    [429, transient('http_429')],
    [500, transient('http_500')],
    [502, transient('http_502')],
    [503, transient('http_503')],
    [504, transient('http_504')],
    [599, transient('http_599')],
  ])('spot check %i', (status, expected) => {
    expect(classifyResponse(status)).toEqual(expected);
  });

  it.each([[0], [99], [600], [999], [-1], [200.5], [Number.NaN]])('treats invalid status %p as transient', (s) => {
    expect(classifyResponse(s)).toEqual(transient('invalid_status'));
  });
});

const withCode = (code: string, message = code): Error => Object.assign(new Error(message), { code });
const named = (name: string): Error => Object.assign(new Error(name), { name });
const wrapped = (inner: unknown): Error => new TypeError('fetch failed', { cause: inner });

describe('classifyError', () => {
  it.each<[string, unknown, AttemptOutcome]>([
    ['ECONNREFUSED', withCode('ECONNREFUSED'), transient('connection_refused')],
    ['ECONNRESET', withCode('ECONNRESET'), transient('connection_reset')],
    ['EPIPE', withCode('EPIPE'), transient('connection_reset')],
    ['UND_ERR_SOCKET', withCode('UND_ERR_SOCKET'), transient('connection_reset')],
    ['undici SocketError', new undiciErrors.SocketError('other side closed'), transient('connection_reset')],
    ['ENOTFOUND', withCode('ENOTFOUND'), transient('dns_failure')],
    ['EAI_AGAIN', withCode('EAI_AGAIN'), transient('dns_failure')],
    ['ERR_TLS_CERT_ALTNAME_INVALID', withCode('ERR_TLS_CERT_ALTNAME_INVALID'), transient('tls_failure')],
    ['ERR_TLS_HANDSHAKE_TIMEOUT', withCode('ERR_TLS_HANDSHAKE_TIMEOUT'), transient('tls_failure')],
    ['CERT_HAS_EXPIRED', withCode('CERT_HAS_EXPIRED'), transient('tls_failure')],
    ['CERT_NOT_YET_VALID', withCode('CERT_NOT_YET_VALID'), transient('tls_failure')],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', withCode('DEPTH_ZERO_SELF_SIGNED_CERT'), transient('tls_failure')],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', withCode('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), transient('tls_failure')],
    ['SELF_SIGNED_CERT_IN_CHAIN', withCode('SELF_SIGNED_CERT_IN_CHAIN'), transient('tls_failure')],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', withCode('UNABLE_TO_GET_ISSUER_CERT_LOCALLY'), transient('tls_failure')],
    ['ERROR_IN_CERT_NOT_AFTER_FIELD', withCode('ERROR_IN_CERT_NOT_AFTER_FIELD'), transient('tls_failure')],
    ['ERR_SSL_WRONG_VERSION_NUMBER', withCode('ERR_SSL_WRONG_VERSION_NUMBER'), transient('tls_failure')],
    ['EPROTO', withCode('EPROTO'), transient('tls_failure')],
    ['UND_ERR_CONNECT_TIMEOUT', new undiciErrors.ConnectTimeoutError(), transient('timeout')],
    ['UND_ERR_HEADERS_TIMEOUT', new undiciErrors.HeadersTimeoutError(), transient('timeout')],
    ['UND_ERR_BODY_TIMEOUT', new undiciErrors.BodyTimeoutError(), transient('timeout')],
    ['undici RequestAbortedError', new undiciErrors.RequestAbortedError(), transient('timeout')],
    ['ETIMEDOUT', withCode('ETIMEDOUT'), transient('timeout')],
    ['AbortError by name', named('AbortError'), transient('timeout')],
    ['TimeoutError by name', named('TimeoutError'), transient('timeout')],
    ['DOMException TimeoutError', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), transient('timeout')],
    ['DOMException AbortError', new DOMException('This operation was aborted', 'AbortError'), transient('timeout')],
    ['fetch-wrapped ECONNREFUSED', wrapped(withCode('ECONNREFUSED')), transient('connection_refused')],
    ['fetch-wrapped ENOTFOUND', wrapped(withCode('ENOTFOUND')), transient('dns_failure')],
    ['fetch-wrapped ConnectTimeoutError', wrapped(new undiciErrors.ConnectTimeoutError()), transient('timeout')],
    ['doubly wrapped', wrapped(new Error('x', { cause: withCode('ECONNRESET') })), transient('connection_reset')],
    [
      'AggregateError of refusals (happy eyeballs)',
      wrapped(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed')),
      transient('connection_refused'),
    ],
    ['socket error caused by a TLS failure', Object.assign(withCode('UND_ERR_SOCKET'), { cause: withCode('EPROTO') }), transient('tls_failure')],
    ['TLS failure wrapping a reset', Object.assign(withCode('ECONNRESET'), { cause: withCode('CERT_HAS_EXPIRED') }), transient('tls_failure')],
    ['AppError WEBHOOK_DESTINATION_BLOCKED', new AppError('WEBHOOK_DESTINATION_BLOCKED', 'private address'), permanent('destination_blocked')],
    ['wrapped destination block', wrapped(new AppError('WEBHOOK_DESTINATION_BLOCKED', 'private address')), permanent('destination_blocked')],
    ['destination block beats a timeout', Object.assign(named('AbortError'), { cause: withCode('WEBHOOK_DESTINATION_BLOCKED') }), permanent('destination_blocked')],
    ['host that no longer resolves (SSRF check, unresolved)', new DestinationBlockedError('does not resolve', true), transient('dns_failure')],
    ['host resolving to a blocked address (SSRF check)', new DestinationBlockedError('10.0.0.5 is private'), permanent('destination_blocked')],
    ['other AppError', new AppError('INTERNAL_ERROR', 'boom'), transient('network_error')],
    ['unknown code', withCode('EWHATEVER'), transient('network_error')],
    ['numeric code', Object.assign(new Error('x'), { code: 111 }), transient('network_error')],
    ['bare fetch failed', new TypeError('fetch failed'), transient('network_error')],
    ['HTTPParserError', new undiciErrors.HTTPParserError('bad'), transient('network_error')],
    ['plain Error', new Error('boom'), transient('network_error')],
    ['string', 'ECONNREFUSED', transient('network_error')],
    ['null', null, transient('network_error')],
    ['undefined', undefined, transient('network_error')],
    ['plain object with code', { code: 'ENOTFOUND' }, transient('dns_failure')],
  ])('%s', (_label, err, expected) => {
    expect(classifyError(err)).toEqual(expected);
  });

  it('survives a cause cycle', () => {
    const a = withCode('EWHATEVER') as Error & { cause?: unknown };
    a.cause = wrapped(a);
    expect(classifyError(a)).toEqual(transient('network_error'));
  });

  describe('real undici error shapes (loopback only)', () => {
    let server: Server;
    let port: number;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      // Accepts connections and never answers: provokes timeouts.
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    async function closedPort(): Promise<number> {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const free = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      return free;
    }

    async function failure(p: Promise<unknown>): Promise<unknown> {
      try {
        await p;
      } catch (err) {
        return err;
      }
      throw new Error('expected a failure');
    }

    it('connection refused via request() and fetch()', async () => {
      const free = await closedPort();
      expect(classifyError(await failure(request(`http://127.0.0.1:${free}/`)))).toEqual(transient('connection_refused'));
      expect(classifyError(await failure(fetch(`http://127.0.0.1:${free}/`)))).toEqual(transient('connection_refused'));
    });

    it('headers timeout', async () => {
      const agent = new Agent({ headersTimeout: 50 });
      try {
        const err = await failure(request(`http://127.0.0.1:${port}/`, { dispatcher: agent }));
        expect(classifyError(err)).toEqual(transient('timeout'));
      } finally {
        await agent.destroy();
      }
    });

    it('AbortSignal.timeout via fetch()', async () => {
      const err = await failure(fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(50) }));
      expect(classifyError(err)).toEqual(transient('timeout'));
    });

    it('connection reset by the peer', async () => {
      const resetter = createServer((socket) => socket.resetAndDestroy());
      await new Promise<void>((resolve) => resetter.listen(0, '127.0.0.1', resolve));
      try {
        const p = (resetter.address() as AddressInfo).port;
        expect(classifyError(await failure(request(`http://127.0.0.1:${p}/`)))).toEqual(transient('connection_reset'));
      } finally {
        await new Promise<void>((resolve) => resetter.close(() => resolve()));
      }
    });
  });
});

describe('retryAfterApplies', () => {
  it.each<[AttemptOutcome, boolean]>([
    [transient('http_429'), true],
    [transient('http_503'), true],
    [transient('http_500'), false],
    [transient('http_502'), false],
    [transient('timeout'), false],
    [permanent('http_400'), false],
    [delivered, false],
  ])('%j → %p', (outcome, applies) => {
    expect(retryAfterApplies(outcome)).toBe(applies);
  });
});

describe('decideNext', () => {
  const policy = new RetryPolicy({ scheduleSeconds: DEFAULT_RETRY_SCHEDULE_S, random: () => 0.5 });

  it('delivered stays delivered whatever the count', () => {
    expect(decideNext(delivered, 1, policy, null)).toEqual({ state: 'delivered' });
    expect(decideNext(delivered, 8, policy, null)).toEqual({ state: 'delivered' });
  });

  it('permanent fails at once', () => {
    expect(decideNext(permanent('http_400'), 1, policy, 60_000)).toEqual({ state: 'failed' });
    expect(decideNext(permanent('redirect_302'), 1, policy, null)).toEqual({ state: 'failed' });
    expect(decideNext(permanent('destination_blocked'), 3, policy, null)).toEqual({ state: 'failed' });
  });

  it('transient retries on the schedule until attempts run out', () => {
    const steps = [1, 2, 3, 4, 5, 6, 7, 8].map((made) => decideNext(transient('http_500'), made, policy, null));
    expect(steps).toEqual([
      ...DEFAULT_RETRY_SCHEDULE_S.map((s) => ({ state: 'retrying', delayMs: s * 1000 })),
      { state: 'failed' },
    ]);
  });

  it('uses Retry-After for 429 and 503 only', () => {
    expect(decideNext(transient('http_429'), 1, policy, 120_000)).toEqual({ state: 'retrying', delayMs: 120_000 });
    expect(decideNext(transient('http_503'), 1, policy, 120_000)).toEqual({ state: 'retrying', delayMs: 120_000 });
    expect(decideNext(transient('http_503'), 1, policy, 10 * 3_600_000)).toEqual({ state: 'retrying', delayMs: 3_600_000 });
    expect(decideNext(transient('http_500'), 1, policy, 120_000)).toEqual({ state: 'retrying', delayMs: 5_000 });
    expect(decideNext(transient('timeout'), 1, policy, 120_000)).toEqual({ state: 'retrying', delayMs: 5_000 });
  });

  it('a Retry-After does not grant an extra attempt', () => {
    expect(decideNext(transient('http_429'), 8, policy, 1_000)).toEqual({ state: 'failed' });
  });
});

describe('describeError', () => {
  const coded = (message: string, code: string, cause?: unknown) => Object.assign(new Error(message, { cause }), { code });

  it('names the error, its code and its message', () => {
    expect(describeError(coded('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED'))).toBe('Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9');
  });

  it('takes the code from beneath a wrapper, the nearest one first', () => {
    const wrapped = new TypeError('fetch failed', { cause: coded('other side closed', 'UND_ERR_SOCKET', coded('reset', 'ECONNRESET')) });
    expect(describeError(wrapped)).toBe('TypeError UND_ERR_SOCKET: fetch failed');
    expect(describeError(new AggregateError([coded('connect ENETUNREACH ::1', 'ENETUNREACH')], 'all failed'))).toBe('AggregateError ENETUNREACH: all failed');
  });

  it('leaves the code out when there is none, and stringifies what is not an Error', () => {
    expect(describeError(new Error('boom'))).toBe('Error: boom');
    expect(describeError('plain')).toBe('plain');
  });
});
